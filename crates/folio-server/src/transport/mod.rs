//! How clients reach the toolsets: the MCP handler (`mcp`) and the
//! authorisation of every MCP method (`access`), stdio line screening (`screen`), the owner of a data directory and its attach
//! protocol (`owner`), streamable HTTP with its guard (`http`), OAuth
//! access tokens (`oauth`) and the web app's sign-in through them
//! (`signin`), the older SSE transport (`sse`) and the mcpvectordb
//! contract's `/upload`.

mod access;
mod app;
mod apps;
mod callers;
pub mod http;
pub mod mcp;
pub mod oauth;
pub mod owner;
mod screen;
mod session;
pub mod signin;
mod sse;
mod upload;

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Compares without leaking the position of the first difference.
pub(crate) fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An HTTP refusal, `{"error": {"code": <status>, "message"}}`; a 401
/// names the bearer scheme. A refusal is answered before the request's
/// body is read, and a connection whose body was left unread is closed
/// after the answer: `Connection: close` says so, or a client (an MCP SDK
/// answering the 401 with a token) sends its next request on the kept
/// connection as it closes and gets no answer at all.
fn refuse(status: StatusCode, message: &str) -> Response {
    let mut response = (
        status,
        [(header::CONNECTION, "close")],
        Json(json!({"error": {"code": status.as_u16(), "message": message}})),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}
