//! A database of its own on the test PostgreSQL server, made and dropped by
//! scripts/postgres.sh (which `scripts/test.sh` starts, exporting
//! `FOLIO_TEST_STORE_URL`). A missing server fails the test, never skips it.

use std::path::PathBuf;
use std::process::Command;

pub struct TestDatabase {
    pub url: String,
    name: String,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh")
}

impl TestDatabase {
    /// A fresh database named after `tag` and this process.
    pub fn new(tag: &str) -> Self {
        assert!(
            std::env::var_os("FOLIO_TEST_STORE_URL").is_some(),
            "FOLIO_TEST_STORE_URL is not set: start the test server with `scripts/postgres.sh start` \
             (scripts/test.sh does)"
        );
        let name = format!("folio_{tag}_{}", std::process::id());
        let out = Command::new(script())
            .args(["createdb", &name])
            .output()
            .expect("scripts/postgres.sh runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        TestDatabase {
            url: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            name,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let _ = Command::new(script()).args(["dropdb", &self.name]).output();
    }
}
