"""folio's distribution manifests: the MCP Bundle manifest validated by the
bundle tool itself (@anthropic-ai/mcpb), the bundle packed with the wheel's
binary, the MCP Registry server.json checked against the constraints of its
published schema (2025-09-29), and one version number everywhere.
"""

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import BIN, ROOT

MCPB = os.environ.get("MCPB", "").split()
WHEEL = os.environ.get("FOLIO_WHEEL")
PACKAGE = ROOT / "scripts/package.py"


def mcpb(*args):
    assert MCPB, "MCPB names no bundle tool: run scripts/wheel.sh test"
    return subprocess.run([*MCPB, *args], capture_output=True, text=True, timeout=300)


def manifests(tmp_path):
    subprocess.run([sys.executable, str(PACKAGE), "manifests", str(tmp_path)], check=True, capture_output=True)
    return (json.loads((tmp_path / "manifest.json").read_text()),
            json.loads((tmp_path / "server.json").read_text()))


def wheel_version():
    with zipfile.ZipFile(WHEEL) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = z.read(name).decode()
    return re.search(r"^Version: (.+)$", metadata, re.M).group(1).strip()


def test_one_version_everywhere(tmp_path):
    manifest, server = manifests(tmp_path)
    folio = subprocess.run([BIN, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
    assert manifest["version"] == server["version"] == server["packages"][0]["version"] == folio
    assert wheel_version() == folio


def test_the_bundle_tool_accepts_the_manifest_and_refuses_a_broken_one(tmp_path):
    manifests(tmp_path)
    done = mcpb("validate", str(tmp_path / "manifest.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    broken = json.loads((tmp_path / "manifest.json").read_text())
    del broken["server"]["entry_point"]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    assert mcpb("validate", str(tmp_path / "broken.json")).returncode != 0


def test_the_bundle_packs_the_wheels_binary(tmp_path):
    with zipfile.ZipFile(WHEEL) as z:
        member = next(n for n in z.namelist() if n.endswith(".data/scripts/folio"))
        binary = tmp_path / "folio"
        binary.write_bytes(z.read(member))
    subprocess.run([sys.executable, str(PACKAGE), "bundle", str(tmp_path), str(binary)], check=True)
    packed = tmp_path / "folio.mcpb"
    done = mcpb("pack", str(tmp_path / "bundle"), str(packed))
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(packed) as z:
        names = set(z.namelist())
        assert {"manifest.json", "server/folio"} <= names, names
        assert json.loads(z.read("manifest.json"))["server"]["entry_point"] == "server/folio"
    info = mcpb("info", str(packed))
    assert info.returncode == 0 and "folio" in info.stdout, info.stdout + info.stderr


def test_the_registry_entry_keeps_the_published_schemas_rules(tmp_path):
    _, server = manifests(tmp_path)
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    # ServerDetail: name, description and version required.
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", server["name"]) and 3 <= len(server["name"]) <= 200
    assert 1 <= len(server["description"]) <= 100
    assert len(server["version"]) <= 255 and not re.search(r"[\^~><=*x]", server["version"].replace(".", ""))
    for package in server["packages"]:
        # RegistryPackage: registryType, identifier, transport; a specific version.
        assert package["registryType"] in {"npm", "pypi", "nuget", "oci", "mcpb"}
        assert package["identifier"] and package["version"] != "latest"
        assert package["transport"] == {"type": "stdio"}
        for argument in package.get("packageArguments", []):
            assert argument["type"] in {"positional", "named"}
            assert argument["type"] == "named" and argument["name"] or "value" in argument or "valueHint" in argument
        for variable in package.get("environmentVariables", []):
            assert variable["name"] and variable.get("format", "string") in {"string", "number", "boolean", "filepath"}
    # The PyPI package must name the registry entry for the registry to accept it.
    readme = (ROOT / "packaging/pypi/README.md").read_text()
    assert f"mcp-name: {server['name']}" in readme
