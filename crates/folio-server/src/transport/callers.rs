//! Who a caller is, for the HTTP routes that check it themselves (the
//! guard, and the web app's sign-in): an access key checked against the
//! store, and the 401s that say why not.

use std::sync::Arc;

use axum::http::{StatusCode, header};
use axum::response::Response;

use super::refuse;
use crate::ops::Shared;
use folio_engine::keys::Principal;

/// The 401 of a missing or refused key: the bearer scheme, and for a
/// refused key why (RFC 6750: no error code when none was sent).
fn unauthorized(reason: &str, presented: bool) -> Response {
    let challenge = if presented {
        format!("Bearer error=\"invalid_token\", error_description=\"{reason}\"")
    } else {
        "Bearer".to_string()
    };
    challenged(StatusCode::UNAUTHORIZED, reason, &challenge)
}

/// The caller of a server that asks for access keys, given the bearer
/// token its request sends.
pub(super) async fn by_key(
    shared: &Arc<Shared>,
    given: Option<String>,
) -> Result<Principal, Response> {
    let Some(given) = given else {
        shared.telemetry.auth_failed("no key");
        return Err(unauthorized(
            "an access key is required (Authorization: Bearer folio_...)",
            false,
        ));
    };
    // A key seen within the last seconds is answered from memory; the
    // store is asked on the blocking pool.
    let checked = match shared.engine.authenticate_cached(&given) {
        Some(answer) => Ok(answer),
        None => {
            let engine = shared.engine.clone();
            tokio::task::spawn_blocking(move || engine.authenticate(&given)).await
        }
    };
    match checked {
        Ok(Ok(principal)) => Ok(principal),
        Ok(Err(e)) if e.code == folio_core::ErrorCode::Unauthorized => {
            shared.telemetry.auth_failed(&e.message);
            Err(unauthorized(&e.message, true))
        }
        Ok(Err(e)) => {
            tracing::error!("checking an access key failed: {e}");
            Err(refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "the key could not be checked",
            ))
        }
        Err(_) => Err(refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the key could not be checked",
        )),
    }
}

/// A refusal with its `WWW-Authenticate` challenge.
pub(super) fn challenged(status: StatusCode, message: &str, challenge: &str) -> Response {
    let mut response = refuse(status, message);
    if let Ok(value) = header::HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
