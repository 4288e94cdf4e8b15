//! Models fetched on first use (tests/install): this build's `folio` against
//! a model hub on 127.0.0.1 speaking the Hugging Face hub's layout
//! (tests/hub/hub.py), with the hub's own Python client (`huggingface_hub`)
//! as the oracle of the cache layout. scripts/setup.sh installs the model the
//! hub serves and the client, in folio's set-up virtualenv.

#[test]
fn models_are_fetched_on_first_use() {
    folio_testkit::pytest(
        "tests/install/test_models.py",
        &[("FOLIO_BIN", env!("CARGO_BIN_EXE_folio"))],
        "the model-fetch suite",
    );
}
