//! The MCP end-to-end suite (tests/mcp): the official Python MCP SDK drives
//! this build's `folio serve` over stdio and HTTP with the real model, once
//! on the embedded store and once on the PostgreSQL test server.
//! scripts/setup.sh installs the SDK and pytest into folio's set-up
//! virtualenv; scripts/postgres.sh runs the server.

/// The two runs go side by side: each keeps about one of two cores busy
/// (its tests wait on servers, browsers and clients as much as they
/// compute), so together they take little more than the longer one.
fn pytest(backend: &str) {
    folio_testkit::pytest(
        "tests/mcp",
        &[
            ("FOLIO_BIN", env!("CARGO_BIN_EXE_folio")),
            ("FOLIO_MCP_BACKEND", backend),
        ],
        &format!("the MCP suite on the {backend} backend"),
    );
}

#[test]
fn mcp_clients_end_to_end() {
    pytest("embedded");
}

/// Every toolset against PostgreSQL; a missing server fails, never skips.
#[test]
fn mcp_clients_end_to_end_on_postgres() {
    assert!(
        std::env::var_os("FOLIO_TEST_STORE_URL").is_some(),
        "FOLIO_TEST_STORE_URL is not set: start the test server with `scripts/postgres.sh start` \
         (scripts/test.sh does)"
    );
    pytest("postgres");
}
