//! The older HTTP+SSE transport, for clients configured with `sse`:
//! `GET /sse` opens a session (its events carry the server's messages),
//! `POST /messages?session_id=...` takes the client's.
//!
//! A session is bound to the credential that opened it (an access key by
//! its hash, an access token by its issuer and subject; never a name): a
//! message from any other credential finds no session. Each message is
//! authorised with the principal of its own request, so a session has
//! exactly the rights its credential has now; a session whose key is
//! revoked or expires ends within `folio_engine::keys::RECHECK` and the
//! check interval.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use folio_engine::keys::{Credential, Principal};

use super::mcp::FolioServer;
use super::refuse;
use crate::ops::Shared;

/// How often an open session's key is checked again.
const RECHECK_EVERY: Duration = Duration::from_secs(5);

/// The open sessions of the HTTP+SSE transport: where each one's client
/// messages go.
#[derive(Clone, Default)]
struct SseSessions {
    inputs: Arc<std::sync::Mutex<std::collections::HashMap<String, Session>>>,
}

/// One open session: the credential that opened it (None when no
/// credential is asked), where its client messages go, and where answers
/// the transport makes itself (to malformed messages) go.
#[derive(Clone)]
struct Session {
    credential: Option<Credential>,
    input: mpsc::Sender<ClientJsonRpcMessage>,
    output: mpsc::Sender<String>,
}

/// Removes a session when its event stream ends (the client went away, or
/// its key was revoked).
struct SseSession {
    id: String,
    sessions: SseSessions,
}

impl Drop for SseSession {
    fn drop(&mut self) {
        if let Ok(mut inputs) = self.sessions.inputs.lock() {
            inputs.remove(&self.id);
        }
    }
}

#[derive(Clone)]
struct SseState {
    shared: Arc<Shared>,
    sessions: SseSessions,
}

/// Whether the credential of a session may still be used: an access key
/// is looked up again (revoked or expired: no); any other credential is
/// checked on each request by the guard.
async fn still_valid(shared: &Arc<Shared>, credential: &Option<Credential>) -> bool {
    let Some(Credential::Key { hash }) = credential else {
        return true;
    };
    let engine = shared.engine.clone();
    let hash = hash.clone();
    match tokio::task::spawn_blocking(move || engine.recheck_key(&hash)).await {
        Ok(Ok(_)) => true,
        Ok(Err(e)) => e.code != folio_core::ErrorCode::Unauthorized,
        Err(_) => true,
    }
}

/// `GET /sse`: opens a session. The first event names the endpoint for the
/// client's messages; every server message follows as a `message` event.
async fn sse_connect(
    State(state): State<SseState>,
    principal: Option<axum::Extension<Principal>>,
) -> axum::response::Sse<
    impl futures_util::Stream<Item = Result<axum::response::sse::Event, std::convert::Infallible>>,
> {
    use axum::response::sse::{Event, KeepAlive, Sse};
    use futures_util::StreamExt;

    let id = uuid::Uuid::new_v4().simple().to_string();
    let credential = principal.map(|axum::Extension(p)| p.credential);
    let (input, messages) = mpsc::channel::<ClientJsonRpcMessage>(64);
    let (output, lines) = mpsc::channel::<String>(64);
    // The server's messages become lines of the event stream; the
    // client's arrive typed, each with the principal of its request.
    let sink = Box::pin(futures_util::sink::unfold(
        output.clone(),
        |output, message: ServerJsonRpcMessage| async move {
            let line = serde_json::to_string(&message).map_err(std::io::Error::other)?;
            output
                .send(line)
                .await
                .map_err(|_| std::io::Error::other("the session has ended"))?;
            Ok::<_, std::io::Error>(output)
        },
    ));
    let stream = Box::pin(futures_util::stream::unfold(
        messages,
        |mut messages| async move { messages.recv().await.map(|m| (m, messages)) },
    ));
    let shared = state.shared.clone();
    tokio::spawn(async move {
        use rmcp::ServiceExt;
        if let Ok(running) = FolioServer::new(shared).serve((sink, stream)).await {
            let _ = running.waiting().await;
        }
    });
    if let Ok(mut inputs) = state.sessions.inputs.lock() {
        inputs.insert(
            id.clone(),
            Session {
                credential: credential.clone(),
                input,
                output,
            },
        );
    }
    let endpoint = Event::default()
        .event("endpoint")
        .data(format!("/messages?session_id={id}"));
    let guard = SseSession {
        id,
        sessions: state.sessions.clone(),
    };
    let shared = state.shared.clone();
    let recheck =
        tokio::time::interval_at(tokio::time::Instant::now() + RECHECK_EVERY, RECHECK_EVERY);
    let events = futures_util::stream::unfold(
        (lines, guard, shared, credential, recheck),
        |(mut lines, guard, shared, credential, mut recheck)| async move {
            loop {
                tokio::select! {
                    line = lines.recv() => {
                        return line.map(|line| {
                            (
                                Ok(Event::default().event("message").data(line)),
                                (lines, guard, shared, credential, recheck),
                            )
                        });
                    }
                    _ = recheck.tick() => {
                        if !still_valid(&shared, &credential).await {
                            tracing::info!("an SSE session ended: its key was revoked or expired");
                            return None;
                        }
                    }
                }
            }
        },
    );
    Sse::new(futures_util::stream::once(async move { Ok(endpoint) }).chain(events))
        .keep_alive(KeepAlive::default())
}

#[derive(serde::Deserialize)]
struct SessionQuery {
    session_id: String,
}

/// `POST /messages?session_id=...`: one JSON-RPC message for a session;
/// its answer arrives on the session's event stream.
async fn sse_message(
    State(state): State<SseState>,
    principal: Option<axum::Extension<Principal>>,
    axum::extract::Query(query): axum::extract::Query<SessionQuery>,
    body: axum::body::Bytes,
) -> Response {
    let session = state
        .sessions
        .inputs
        .lock()
        .ok()
        .and_then(|inputs| inputs.get(&query.session_id).cloned());
    let principal = principal.map(|axum::Extension(p)| p);
    // A session takes messages from the credential that opened it only.
    let session = match session {
        Some(session) if session.credential == principal.as_ref().map(|p| p.credential.clone()) => {
            session
        }
        _ => return refuse(StatusCode::NOT_FOUND, "no such session"),
    };
    let value = match serde_json::from_slice::<Value>(&body) {
        Ok(value) => value,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("invalid JSON: {e}")),
    };
    // What is not one JSON-RPC message is answered on the session's
    // stream, as a line transport answers it.
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let mut message = match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(message) => message,
        Err(e) => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32600, "message": format!("Invalid Request: {e}")
            }});
            let _ = session.output.send(answer.to_string()).await;
            return StatusCode::ACCEPTED.into_response();
        }
    };
    // The message carries the rights of this request's credential.
    if let Some(principal) = principal {
        match &mut message {
            ClientJsonRpcMessage::Request(request) => {
                request.request.extensions_mut().insert(principal);
            }
            ClientJsonRpcMessage::Notification(notification) => {
                notification.notification.extensions_mut().insert(principal);
            }
            ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_) => {}
        }
    }
    match session.input.send(message).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(_) => refuse(StatusCode::NOT_FOUND, "the session has ended"),
    }
}

/// The transport's two routes, `/sse` and `/messages` (client messages of
/// at most `max_body_bytes`).
pub(super) fn routes<S>(shared: Arc<Shared>, max_body_bytes: usize) -> Router<S> {
    Router::new()
        .route("/sse", get(sse_connect))
        .route(
            "/messages",
            post(sse_message).layer(DefaultBodyLimit::max(max_body_bytes)),
        )
        .with_state(SseState {
            shared,
            sessions: SseSessions::default(),
        })
}
