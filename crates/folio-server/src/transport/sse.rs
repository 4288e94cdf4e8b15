//! The older HTTP+SSE transport, for clients configured with `sse`:
//! `GET /sse` opens a session (its events carry the server's messages),
//! `POST /messages?session_id=...` takes the client's.

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use folio_engine::keys::Principal;

use super::mcp::FolioServer;
use super::refuse;
use crate::ops::Shared;

/// The open sessions of the HTTP+SSE transport: where each one's client
/// messages go.
#[derive(Clone, Default)]
struct SseSessions {
    /// Each session's key (by name, when keys are asked) and its input.
    inputs: Arc<std::sync::Mutex<std::collections::HashMap<String, Session>>>,
}

/// The key that opened a session (None when no key is asked), and where
/// its client messages go.
type Session = (Option<String>, tokio::sync::mpsc::Sender<String>);

/// Removes a session when its event stream ends (the client went away).
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
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    let id = uuid::Uuid::new_v4().simple().to_string();
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let shared = state.shared.clone();
    let principal = principal.map(|axum::Extension(p)| p);
    let owner = principal.as_ref().map(|p| p.name.clone());
    tokio::spawn(async move {
        use rmcp::ServiceExt;
        if let Ok(running) = FolioServer::for_principal(shared, principal)
            .serve(super::screen::screened(theirs))
            .await
        {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(ours);
    let (input, mut messages) = tokio::sync::mpsc::channel::<String>(64);
    tokio::spawn(async move {
        while let Some(line) = messages.recv().await {
            if write.write_all(line.as_bytes()).await.is_err()
                || write.write_all(b"\n").await.is_err()
                || write.flush().await.is_err()
            {
                break;
            }
        }
    });
    if let Ok(mut inputs) = state.sessions.inputs.lock() {
        inputs.insert(id.clone(), (owner, input));
    }
    let endpoint = Event::default()
        .event("endpoint")
        .data(format!("/messages?session_id={id}"));
    let guard = SseSession {
        id,
        sessions: state.sessions.clone(),
    };
    let lines = tokio::io::BufReader::new(read).lines();
    let events = futures_util::stream::unfold((lines, guard), |(mut lines, guard)| async move {
        match lines.next_line().await {
            Ok(Some(line)) => Some((
                Ok(Event::default().event("message").data(line)),
                (lines, guard),
            )),
            _ => None,
        }
    });
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
    let input = state
        .sessions
        .inputs
        .lock()
        .ok()
        .and_then(|inputs| inputs.get(&query.session_id).cloned());
    // A session takes messages from the key that opened it only.
    let caller = principal.map(|axum::Extension(p)| p.name);
    let input = match input {
        Some((owner, input)) if owner == caller => input,
        _ => return refuse(StatusCode::NOT_FOUND, "no such session"),
    };
    // One message per line on the session's stream: re-serialised compact.
    let line = match serde_json::from_slice::<Value>(&body) {
        Ok(message) => message.to_string(),
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("invalid JSON: {e}")),
    };
    match input.send(line).await {
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
