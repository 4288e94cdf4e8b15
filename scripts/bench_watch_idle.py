#!/usr/bin/env python3
"""What a served watch costs while nothing changes (issue 46 §4).

A folder of `--folders` subfolders (a note in each) is watched by
`folio serve --http --watch FOLDER=notes`; once its first pass is done, the
server's CPU ticks (utime + stime of /proc/PID/stat, 100 a second) are read
over `--seconds` of idleness: with every folder readable, then with one
folder `chmod 000` (the server is started without the capabilities that
let root read it anyway), then with a symbolic link to `/` in the folder.
It also prints the watch's state from `server_info`.

Usage: scripts/bench_watch_idle.py [--bin target/release/folio]
       [--folders 2000] [--seconds 10]
"""

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from load_keys import ROOT, free_port, post, result_of, session_when_up


def ticks(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def watch_state(port, headers):
    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "server_info", "arguments": {}}}
    status, _, _, text = post(port, body, headers)
    return result_of(text)["result"]["structuredContent"]["watches"][0]


def measure(binary, folder, seconds, label):
    with tempfile.TemporaryDirectory() as data:
        port = free_port()
        command = [binary, "serve", "--http", f"127.0.0.1:{port}", "--watch", f"{folder}=notes"]
        if os.geteuid() == 0:
            command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
        env = dict(os.environ, FOLIO_DATA_DIR=data, FOLIO_CONFIG="", FOLIO_LOG="error")
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            headers = session_when_up(port)
            deadline = time.time() + 600
            # Idle: the first pass done, and no pass for 5 s (files too new
            # to settle at the first pass are taken by a second).
            passes, quiet_since = 0, time.time()
            while passes < 1 or time.time() - quiet_since < 5:
                assert time.time() < deadline, "the watch never settled"
                now = watch_state(port, headers)["passes"]
                if now != passes:
                    passes, quiet_since = now, time.time()
                time.sleep(0.5)
            before = ticks(server.pid)
            time.sleep(seconds)
            spent = ticks(server.pid) - before
            state = watch_state(port, headers)
            print(json.dumps({"case": label, "idle_seconds": seconds, "cpu_ticks": spent,
                              "state": state["state"], "passes": state["passes"],
                              "last_error": (state["last_error"] or "")[:120]}), flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "folio"))
    parser.add_argument("--folders", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "notes"
        for i in range(args.folders):
            (folder / f"d{i:04}").mkdir(parents=True)
            (folder / f"d{i:04}" / "note.md").write_text(f"# Note {i}\n\nFolder {i}.\n")
        measure(args.bin, folder, args.seconds, "readable")
        locked = folder / "d0007"
        locked.chmod(0)
        try:
            measure(args.bin, folder, args.seconds, "one folder chmod 000")
        finally:
            locked.chmod(0o755)
        (folder / "root").symlink_to("/")
        measure(args.bin, folder, args.seconds, "a symbolic link to /")


if __name__ == "__main__":
    main()
