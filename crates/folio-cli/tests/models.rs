//! Models fetched on first use (tests/install): this build's `folio` against
//! a model hub on 127.0.0.1 speaking the Hugging Face hub's layout
//! (tests/hub/hub.py), with the hub's own Python client (`huggingface_hub`)
//! as the oracle of the cache layout. scripts/setup.sh installs the model the
//! hub serves and the client, in folio's set-up virtualenv.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn models_are_fetched_on_first_use() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = folio_testkit::setup_python();
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup.sh",
        python.display()
    );
    let output = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/install/test_models.py",
        ])
        .current_dir(&root)
        .env("FOLIO_BIN", env!("CARGO_BIN_EXE_folio"))
        .output()
        .expect("pytest runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the model-fetch suite failed:\n{stdout}\n{stderr}"
    );
    eprintln!("{}", stdout.lines().last().unwrap_or_default());
}
