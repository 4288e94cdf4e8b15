"""A large folder ingested through an agent's call: `ingest` with
`background: true` on `folio serve --http`, the calling client gone at once,
another session following the job with `jobs` until it ends.

Reports how long the call took to answer, how long the job ran, how many
progress states the follower saw, and the documents indexed.

    python scripts/bench_background_ingest.py --bin target/release/folio --files 20000
"""

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests/mcp"))

from mcp import Client  # noqa: E402


def notes(folder, count):
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"note-{i:05d}.md").write_text(
            f"# Note {i}\n\nObservation {i}: sample {i * 7919 % 10007} held {i % 13} grains of basalt.\n")


async def call(client, name, arguments):
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result
    return result.structured_content


async def main(args):
    work = Path(tempfile.mkdtemp(prefix="folio-bg-"))
    folder = work / "notes"
    notes(folder, args.files)
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"), FOLIO_LOG="warn")
    port = 17000 + os.getpid() % 1000
    server = subprocess.Popen([args.bin, "serve", "--http", f"127.0.0.1:{port}"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/health", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        started = time.perf_counter()
        async with Client(url + "/mcp") as client:
            job = await call(client, "ingest", {"library": "notes", "paths": [str(folder)], "background": True})
            answered = time.perf_counter() - started
        # The client has left; the job goes on.
        states = []
        async with Client(url + "/mcp") as client:
            while True:
                state = (await call(client, "jobs", {"job_id": job["job_id"]}))["jobs"][0]
                states.append(state["progress"]["documents"])
                if state["status"] != "running":
                    break
                await asyncio.sleep(0.5)
        ran = time.perf_counter() - started
        print(json.dumps({
            "files": args.files,
            "answer_ms": round(answered * 1000, 1),
            "job_seconds": round(ran, 1),
            "status": state["status"],
            "indexed": state["result"]["indexed"],
            "failed": state["result"]["failed"],
            "documents_per_second": round(state["result"]["indexed"] / ran, 1),
            "progress_states_seen": len(set(states)),
        }))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/folio")
    parser.add_argument("--files", type=int, default=20000)
    asyncio.run(main(parser.parse_args()))
