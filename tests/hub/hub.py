"""A model hub on 127.0.0.1 speaking the Hugging Face hub's HTTP layout, for
folio's model-fetch tests (the real hub cannot be reached from CI).

    python3 hub.py ROOT [--port N] [--lfs-threshold BYTES] [--throttle BYTES_PER_SEC]
                   [--log FILE] [--lie PATH] [--substitute PATH]
                   [--disguise PATH] [--understate PATH]

ROOT holds ORG/NAME/COMMIT/<files> (symlinks are followed); the branch
`main` names the one commit of a repository. Served like the hub:

- HEAD|GET /ORG/NAME/resolve/REV/PATH: a small file answers 200 with its
  git blob SHA-1 as ETag; a file of at least --lfs-threshold bytes (an LFS
  file) answers 302 to /cdn/... with X-Linked-Etag (its SHA-256) and
  X-Linked-Size. Both carry X-Repo-Commit. Unknown paths answer 404 with
  X-Error-Code: EntryNotFound.
- GET /cdn/ORG/NAME/COMMIT/PATH on a second port (another origin, as the
  hub's CDN is): the bytes, with Range (206).
- GET /api/models/ORG/NAME/revision/REV: {"id", "sha", "siblings"}, and
  GET /api/models/ORG/NAME/tree/REV: the files with their sizes and LFS
  hashes, as the hub's API lists a repository (what huggingface_hub's
  snapshot_download reads).

Faults for tests: --lie PATH serves other bytes for PATH while stating the
true hash (a corrupted mirror); --substitute PATH serves other bytes and
states their hash (a repository changed under a pinned hash); --throttle
slows bodies so a test can kill a client mid-download; --disguise PATH
serves other bytes directly (no CDN) under their git blob SHA-1 as ETag,
whatever their size (a hostile endpoint naming a git address for a file
whose SHA-256 is pinned); --understate PATH states half the size of an LFS
file (a body longer than stated). Each request is
logged to --log as a JSON line (method, path, port, range, authorization). Prints "listening
PORT" when ready.
"""
import argparse
import hashlib
import http.server
import json
import os
import socketserver
import sys
import threading
import time
import urllib.parse


def git_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Hub:
    def __init__(self, args):
        self.root = args.root
        self.threshold = args.lfs_threshold
        self.throttle = args.throttle
        self.log = args.log
        self.lie = set(args.lie)
        self.substitute = set(args.substitute)
        self.disguise = set(args.disguise)
        self.understate = set(args.understate)
        self.cache = {}

    def commit_dir(self, repo, rev):
        base = os.path.join(self.root, repo)
        if not os.path.isdir(base):
            return None, None
        commits = sorted(os.listdir(base))
        if rev == "main" and len(commits) == 1:
            rev = commits[0]
        path = os.path.join(base, rev)
        return (rev, path) if rev in commits and os.path.isdir(path) else (None, None)

    def content(self, repo, commit, path):
        """(bytes served, the hash the hub states) for a file."""
        key = (repo, commit, path)
        if key not in self.cache:
            full = os.path.join(self.root, repo, commit, path)
            with open(full, "rb") as f:
                data = f.read()
            stated = self.address(data)
            if path in self.lie or path in self.substitute or path in self.disguise:
                altered = bytearray(data)
                altered[len(altered) // 2] ^= 0xFF
                data = bytes(altered)
                if path in self.substitute:
                    stated = self.address(data)
                if path in self.disguise:
                    stated = git_sha1(data)
            self.cache[key] = (data, stated)
        return self.cache[key]

    def address(self, data):
        if len(data) >= self.threshold:
            return hashlib.sha256(data).hexdigest()
        return git_sha1(data)

    def files(self, repo, commit):
        base = os.path.join(self.root, repo, commit)
        out = []
        for dirpath, _, names in os.walk(base, followlinks=True):
            for name in names:
                out.append(os.path.relpath(os.path.join(dirpath, name), base).replace(os.sep, "/"))
        return sorted(out)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub = None

    def log_message(self, *args):
        pass

    def record(self):
        if self.hub.log:
            with open(self.hub.log, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path, "port": self.server.server_address[1],
                                    "range": self.headers.get("Range"),
                                    "authorization": self.headers.get("Authorization")}) + "\n")

    def answer(self, status, headers=(), body=b""):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if not any(k.lower() == "content-length" for k, _ in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.send_body(body)

    def send_body(self, body):
        if not self.hub.throttle:
            self.wfile.write(body)
            return
        step = max(1, self.hub.throttle // 20)
        for i in range(0, len(body), step):
            self.wfile.write(body[i:i + step])
            self.wfile.flush()
            time.sleep(0.05)

    def not_found(self, code="RepoNotFound"):
        self.answer(404, [("X-Error-Code", code), ("Content-Type", "application/json")],
                    json.dumps({"error": code}).encode())

    def do_HEAD(self):
        self.route()

    def do_GET(self):
        self.route()

    def route(self):
        self.record()
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        parts = path.strip("/").split("/")
        try:
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "revision":
                return self.api(parts[2] + "/" + parts[3], "/".join(parts[5:]))
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
                return self.tree(parts[2] + "/" + parts[3], parts[5])
            if parts[0] == "cdn" and len(parts) >= 5:
                return self.cdn(parts[1] + "/" + parts[2], parts[3], "/".join(parts[4:]))
            if len(parts) >= 5 and parts[2] == "resolve":
                return self.resolve(parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:]))
        except BrokenPipeError:
            return
        self.not_found()

    def api(self, repo, rev):
        commit, base = self.hub.commit_dir(repo, rev)
        if commit is None:
            return self.not_found()
        body = json.dumps({"id": repo, "modelId": repo, "sha": commit,
                           "siblings": [{"rfilename": f} for f in self.hub.files(repo, commit)]})
        self.answer(200, [("Content-Type", "application/json")], body.encode())

    def tree(self, repo, rev):
        commit, base = self.hub.commit_dir(repo, rev)
        if commit is None:
            return self.not_found()
        entries, folders = [], set()
        for f in self.hub.files(repo, commit):
            parent = f.rpartition("/")[0]
            while parent and parent not in folders:
                folders.add(parent)
                entries.append({"type": "directory", "path": parent, "oid": "0" * 40, "size": 0})
                parent = parent.rpartition("/")[0]
            data, stated = self.hub.content(repo, commit, f)
            entry = {"type": "file", "path": f, "size": len(data), "oid": git_sha1(data)}
            if len(data) >= self.hub.threshold:
                entry["lfs"] = {"oid": stated, "size": len(data), "pointerSize": 134}
            entries.append(entry)
        self.answer(200, [("Content-Type", "application/json")], json.dumps(entries).encode())

    def resolve(self, repo, rev, file):
        commit, base = self.hub.commit_dir(repo, rev)
        if commit is None:
            return self.not_found("RevisionNotFound")
        if not os.path.isfile(os.path.join(base, file)):
            return self.answer(404, [("X-Error-Code", "EntryNotFound"), ("X-Repo-Commit", commit)])
        data, stated = self.hub.content(repo, commit, file)
        common = [("X-Repo-Commit", commit), ("Accept-Ranges", "bytes")]
        if len(data) >= self.hub.threshold and file not in self.hub.disguise:
            size = len(data) // 2 if file in self.hub.understate else len(data)
            # To another origin, as the hub's CDN links are: clients follow
            # a HEAD's redirects only on the hub itself (renamed repositories).
            location = "http://127.0.0.1:%d/cdn/%s/%s/%s" % (self.hub.cdn_port, repo, commit, urllib.parse.quote(file))
            return self.answer(302, common + [
                ("Location", location), ("X-Linked-Etag", '"%s"' % stated),
                ("X-Linked-Size", str(size)), ("ETag", '"%s"' % stated)])
        self.body(data, common + [("ETag", '"%s"' % stated)])

    def cdn(self, repo, commit, file):
        if not os.path.isfile(os.path.join(self.hub.root, repo, commit, file)):
            return self.not_found("EntryNotFound")
        data, _ = self.hub.content(repo, commit, file)
        self.body(data, [("Accept-Ranges", "bytes")])

    def body(self, data, headers):
        spec = self.headers.get("Range")
        if spec and spec.startswith("bytes="):
            start_s, _, end_s = spec[6:].partition("-")
            start = int(start_s or 0)
            end = int(end_s) if end_s else len(data) - 1
            if start >= len(data):
                return self.answer(416, headers + [("Content-Range", "bytes */%d" % len(data))])
            part = data[start:end + 1]
            return self.answer(206, headers + [
                ("Content-Range", "bytes %d-%d/%d" % (start, start + len(part) - 1, len(data))),
                ("Content-Length", str(len(part)))], part)
        self.answer(200, headers + [("Content-Length", str(len(data)))], data)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--lfs-threshold", type=int, default=1_000_000)
    p.add_argument("--throttle", type=int, default=0)
    p.add_argument("--log")
    p.add_argument("--lie", action="append", default=[])
    p.add_argument("--substitute", action="append", default=[])
    p.add_argument("--disguise", action="append", default=[])
    p.add_argument("--understate", action="append", default=[])
    args = p.parse_args()
    Handler.hub = Hub(args)
    server = Server(("127.0.0.1", args.port), Handler)
    cdn = Server(("127.0.0.1", 0), Handler)
    Handler.hub.cdn_port = cdn.server_address[1]
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    print("listening %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
