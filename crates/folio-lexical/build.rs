//! Bundles the map German compounds are split by (`src/compounds.rs`):
//! made outside the repository by `scripts/german_compounds.sh`, which
//! `scripts/setup.sh` runs, into `$FOLIO_HOME/analysis` (or the file
//! `FOLIO_COMPOUNDS_DATA` names). Nothing is fetched here.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=FOLIO_COMPOUNDS_DATA");
    println!("cargo:rerun-if-env-changed=FOLIO_HOME");
    println!("cargo:rerun-if-env-changed=XDG_DATA_HOME");
    let source = std::env::var_os("FOLIO_COMPOUNDS_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("FOLIO_HOME")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("folio"))
                })
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/folio"))
                })
                .unwrap_or_default();
            home.join("analysis/german-compounds.fst")
        });
    println!("cargo:rerun-if-changed={}", source.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("german-compounds.fst");
    if let Err(e) = std::fs::copy(&source, &out) {
        panic!(
            "the German compound map {} is missing ({e}): run scripts/setup.sh, or \
             scripts/german_compounds.sh, before building folio (or name the file in \
             FOLIO_COMPOUNDS_DATA)",
            source.display()
        );
    }
}
