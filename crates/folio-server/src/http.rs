//! The HTTP server: MCP over streamable HTTP at `/mcp`, over the older
//! HTTP+SSE transport at `/sse` (events) and `/messages` (client messages)
//! for clients configured with `sse`, file uploads at `POST /upload`, and
//! `/health`. Every route sits behind the same guard:
//! Host and Origin validation (DNS-rebinding defence, 403), an optional
//! bearer token (401), and body limits (413). A panicking handler becomes a
//! 500; the server keeps serving.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use folio_core::ErrorCode;
use folio_engine::IngestTarget;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tower_http::catch_panic::CatchPanicLayer;

use crate::context::{Call, Shared};
use crate::handler::FolioServer;
use crate::mcpvectordb;

/// How the HTTP server guards itself.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Host header values accepted, with or without a port. Loopback names
    /// by default; add the public name when binding elsewhere.
    pub allowed_hosts: Vec<String>,
    /// Origin header values accepted (scheme://host[:port]); requests
    /// without an Origin header (non-browser clients) pass.
    pub allowed_origins: Vec<String>,
    /// Require `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Largest MCP request body.
    pub max_body_bytes: usize,
    /// Largest upload (the multipart body).
    pub max_upload_bytes: usize,
}

impl HttpOptions {
    pub fn loopback(addr: SocketAddr) -> Self {
        HttpOptions {
            addr,
            allowed_hosts: vec![
                "localhost".into(),
                "127.0.0.1".into(),
                "[::1]".into(),
                "::1".into(),
            ],
            allowed_origins: Vec::new(),
            token: None,
            max_body_bytes: 16 * 1024 * 1024,
            max_upload_bytes: 200 * 1024 * 1024,
        }
    }
}

struct Guard {
    hosts: Vec<String>,
    origins: Vec<String>,
    token: Option<String>,
}

fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let bare = match host.rsplit_once(':') {
        // "[::1]:7070" or "name:7070"; an IPv6 literal without brackets has many colons.
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) && !name.ends_with(':') => {
            name.to_string()
        }
        _ => host.clone(),
    };
    allowed.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        a == host || a == bare
    })
}

/// Browser origins on loopback are allowed by default; others must be listed.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    if allowed.iter().any(|a| a.to_ascii_lowercase() == origin) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => rest,
    };
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// Compares without leaking the position of the first difference.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let mut response = (
        status,
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

async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    match host {
        Some(host) if host_allowed(host, &guard.hosts) => {}
        _ => return refuse(StatusCode::FORBIDDEN, "Host not allowed"),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .is_ok_and(|o| origin_allowed(o, &guard.origins));
        if !ok {
            return refuse(StatusCode::FORBIDDEN, "Origin not allowed");
        }
    }
    if let Some(token) = &guard.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .unwrap_or("");
        if !same_secret(given.trim().as_bytes(), token.as_bytes()) {
            return refuse(StatusCode::UNAUTHORIZED, "a valid bearer token is required");
        }
    }
    next.run(request).await
}

async fn health(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "model_loaded": shared.engine.embedder_loaded(),
    }))
}

fn upload_error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (
        status,
        Json(json!({"status": "error", "error": message.to_string()})),
    )
        .into_response()
}

/// `POST /upload` (the mcpvectordb contract, mounted with that toolset):
/// multipart `file`, optional `library` and `metadata` (a JSON object
/// string). 400 for a malformed request, 422 for an unsupported file
/// extension, 500 when ingestion fails (a corrupt or empty file among
/// them), 413 over the size limit; 403 on a read-only server, before the
/// body is read.
async fn upload(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    if shared.options.read_only || shared.engine.read_only() {
        return (
            StatusCode::FORBIDDEN,
            Json(json!({
                "status": "error",
                "code": ErrorCode::ReadOnly.as_str(),
                "error": "this server is read-only: uploads are refused",
            })),
        )
            .into_response();
    }
    let mut form = match Multipart::from_request(request, &()).await {
        Ok(form) => form,
        Err(e) => return upload_error(e.status(), e.body_text()),
    };
    let mut file: Option<(String, Vec<u8>)> = None;
    let mut library = "default".to_string();
    let mut metadata: Option<Map<String, Value>> = None;
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => {
                return upload_error(e.status(), format!("form parse error: {}", e.body_text()));
            }
        };
        match field.name().unwrap_or("") {
            "file" => {
                let name = field.file_name().unwrap_or("").to_string();
                match field.bytes().await {
                    Ok(bytes) => file = Some((name, bytes.to_vec())),
                    Err(e) => {
                        return upload_error(
                            e.status(),
                            format!("form parse error: {}", e.body_text()),
                        );
                    }
                }
            }
            "library" => match field.text().await {
                Ok(text) if !text.trim().is_empty() => library = text.trim().to_string(),
                Ok(_) => {}
                Err(e) => {
                    return upload_error(
                        StatusCode::BAD_REQUEST,
                        format!("form parse error: {}", e.body_text()),
                    );
                }
            },
            "metadata" => match field.text().await {
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(object)) => metadata = Some(object),
                    Ok(_) => {
                        return upload_error(
                            StatusCode::BAD_REQUEST,
                            "metadata must be a JSON object",
                        );
                    }
                    Err(e) => {
                        return upload_error(
                            StatusCode::BAD_REQUEST,
                            format!("invalid metadata JSON: {e}"),
                        );
                    }
                },
                Err(e) => {
                    return upload_error(
                        StatusCode::BAD_REQUEST,
                        format!("form parse error: {}", e.body_text()),
                    );
                }
            },
            _ => {}
        }
    }
    let Some((name, bytes)) = file else {
        return upload_error(StatusCode::BAD_REQUEST, "missing `file` field");
    };
    let base = name.rsplit(['/', '\\']).next().unwrap_or("").to_string();
    if base.is_empty() {
        return upload_error(
            StatusCode::BAD_REQUEST,
            "the `file` field needs a file name",
        );
    }
    let supported = base
        .rsplit_once('.')
        .and_then(|(_, ext)| folio_extract::Format::from_extension(&ext.to_ascii_lowercase()))
        .is_some();
    if !supported {
        return upload_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "unsupported file type: {base} (PDF, DOCX, PPTX, EPUB, HTML, Markdown, text and PNG/JPEG/TIFF images are supported)"
            ),
        );
    }
    let target = IngestTarget::Bytes { name: base, bytes };
    match mcpvectordb::ingest_one(
        &shared,
        "upload",
        &library,
        target,
        metadata,
        &Call::detached(),
    )
    .await
    {
        Ok(output) => (
            StatusCode::OK,
            Json(serde_json::to_value(output).unwrap_or_default()),
        )
            .into_response(),
        // Seed 004's table: 422 is an unsupported extension only (above);
        // a file the pipeline cannot read (corrupt, empty) is a pipeline
        // error, 500. A body over the size limit stays 413, a read-only
        // server 403.
        Err(e) => upload_error(
            match e.code {
                ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::ReadOnly => StatusCode::FORBIDDEN,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            },
            e,
        ),
    }
}

/// The open sessions of the HTTP+SSE transport: where each one's client
/// messages go.
#[derive(Clone, Default)]
struct SseSessions {
    inputs:
        Arc<std::sync::Mutex<std::collections::HashMap<String, tokio::sync::mpsc::Sender<String>>>>,
}

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
) -> axum::response::Sse<
    impl futures_util::Stream<Item = Result<axum::response::sse::Event, std::convert::Infallible>>,
> {
    use axum::response::sse::{Event, KeepAlive, Sse};
    use futures_util::StreamExt;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    let id = uuid::Uuid::new_v4().simple().to_string();
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let shared = state.shared.clone();
    tokio::spawn(async move {
        use rmcp::ServiceExt;
        if let Ok(running) = FolioServer::new(shared)
            .serve(crate::screen::screened(theirs))
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
        inputs.insert(id.clone(), input);
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
    axum::extract::Query(query): axum::extract::Query<SessionQuery>,
    body: axum::body::Bytes,
) -> Response {
    let input = state
        .sessions
        .inputs
        .lock()
        .ok()
        .and_then(|inputs| inputs.get(&query.session_id).cloned());
    let Some(input) = input else {
        return refuse(StatusCode::NOT_FOUND, "no such session");
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

/// The HTTP application.
pub fn router(shared: Arc<Shared>, options: &HttpOptions, cancel: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(cancel);
    let config = if options.allowed_origins.is_empty() {
        config
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    let for_sessions = shared.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(FolioServer::new(for_sessions.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let guard_state = Arc::new(Guard {
        hosts: options.allowed_hosts.clone(),
        origins: options.allowed_origins.clone(),
        token: options.token.clone(),
    });
    let sse = Router::new()
        .route("/sse", get(sse_connect))
        .route(
            "/messages",
            post(sse_message).layer(DefaultBodyLimit::max(options.max_body_bytes)),
        )
        .with_state(SseState {
            shared: shared.clone(),
            sessions: SseSessions::default(),
        });
    let mut app = Router::new().route_service("/mcp", mcp).merge(sse);
    // /upload belongs to the mcpvectordb contract: served with it only.
    if shared.registry.has_toolset(crate::Toolset::Mcpvectordb) {
        app = app.route(
            "/upload",
            post(upload).layer(DefaultBodyLimit::max(options.max_upload_bytes)),
        );
    }
    app.route("/health", get(health))
        .with_state(shared)
        .layer(middleware::from_fn_with_state(guard_state, guard))
        .layer(CatchPanicLayer::new())
}

/// Serves until `cancel` fires.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    cancel: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { cancel.cancelled().await })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_match_with_or_without_ports() {
        let allowed = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "[::1]".to_string(),
        ];
        assert!(host_allowed("localhost:7070", &allowed));
        assert!(host_allowed("127.0.0.1", &allowed));
        assert!(host_allowed("[::1]:7070", &allowed));
        assert!(!host_allowed("evil.example:7070", &allowed));
        assert!(!host_allowed("localhost.evil.example", &allowed));
    }

    #[test]
    fn only_loopback_or_listed_origins_pass() {
        assert!(origin_allowed("http://localhost:5173", &[]));
        assert!(origin_allowed("http://127.0.0.1", &[]));
        assert!(!origin_allowed("http://evil.example", &[]));
        assert!(!origin_allowed("null", &[]));
        assert!(origin_allowed(
            "https://app.example.com",
            &["https://app.example.com".into()]
        ));
    }

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }
}
