//! The examples of the README and the guide (tests/docs): every block of
//! shell, JSON or TOML runs as written against this build, so a renamed
//! flag or key breaks the build rather than the reader.

#[test]
fn the_documentation_examples_run_as_written() {
    folio_testkit::pytest(
        "tests/docs",
        &[("FOLIO_BIN", env!("CARGO_BIN_EXE_folio"))],
        "the documentation's examples",
    );
}
