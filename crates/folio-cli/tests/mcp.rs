//! The MCP end-to-end suite (tests/mcp): the official Python MCP SDK drives
//! this build's `folio serve` over stdio and HTTP with the real model.
//! scripts/setup.sh installs the SDK and pytest into folio's set-up
//! virtualenv.

use std::path::PathBuf;
use std::process::Command;

fn python() -> PathBuf {
    let home = std::env::var_os("FOLIO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
            home.join(".local/share/folio")
        });
    home.join("setup-venv/bin/python")
}

#[test]
fn mcp_clients_end_to_end() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = python();
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup.sh",
        python.display()
    );
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/mcp"])
        .current_dir(&root)
        .env("FOLIO_BIN", env!("CARGO_BIN_EXE_folio"))
        .output()
        .expect("pytest runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the MCP suite failed:\n{stdout}\n{stderr}"
    );
    eprintln!("{}", stdout.lines().last().unwrap_or_default());
}
