//! The HTTP server: MCP over streamable HTTP at `/mcp`, over the older
//! HTTP+SSE transport at `/sse` (events) and `/messages` (client messages)
//! for clients configured with `sse`, file uploads at `POST /upload`, and
//! `/health`, and the web app at `/` (`app.rs`). Every route sits behind
//! the same guard:
//! Host and Origin validation (DNS-rebinding defence, 403), who the caller
//! is (a shared bearer token, an access key, or an OAuth access token: 401),
//! and body limits (413). In OAuth mode the Protected Resource Metadata is
//! served at `/.well-known/oauth-protected-resource`, and a call outside
//! the token's scopes is refused 403 `insufficient_scope` before it reaches
//! MCP. A panicking handler becomes a 500; the server keeps serving.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower_http::catch_panic::CatchPanicLayer;

use folio_engine::keys::{Credential, Principal, Scope};

use super::access;
use super::app;
use super::callers::{by_key, challenged};
use super::mcp::FolioServer;
use super::oauth::{Refusal, Verifier};
use super::refuse;
use super::signin::{CALLBACK_PATH, SESSION_COOKIE, SignIn};
use super::sse;
use super::upload::upload;
use crate::ops::Shared;
use crate::options::Toolset;

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
    /// Require an access key (`folio keys`) as the bearer token, and hold
    /// each request to the key's scopes and libraries.
    pub keys: bool,
    /// Require an access token of this identity provider (`--auth oauth`),
    /// and hold each request to its scopes and libraries.
    pub oauth: Option<Arc<Verifier>>,
    /// The web app's sign-in at that provider (`--app-client-id`).
    pub signin: Option<Arc<SignIn>>,
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
            keys: false,
            oauth: None,
            signin: None,
            max_body_bytes: 16 * 1024 * 1024,
            max_upload_bytes: 200 * 1024 * 1024,
        }
    }
}

struct Guard {
    hosts: Vec<String>,
    /// Whether a Host that is an IP address passes too (the metrics
    /// listener, which a scraper reaches by address; a rebinding page can
    /// only send a name it controls).
    ip_hosts: bool,
    origins: Vec<String>,
    token: Option<String>,
    callers: Callers,
    max_body_bytes: usize,
    /// The credential each streamable HTTP session was opened with: a
    /// session answers requests of that credential only.
    sessions: std::sync::Mutex<std::collections::HashMap<String, Credential>>,
}

/// The header that names a streamable HTTP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Session bindings kept at most.
const SESSIONS_LIMIT: usize = 100_000;

/// Who may call, beyond the Host, Origin and shared-token checks.
enum Callers {
    /// Anyone who passes those.
    Anyone,
    /// Holders of an access key: the server that checks them and counts
    /// their calls.
    Keys(Arc<Shared>),
    /// Holders of an access token of the identity provider, and browsers
    /// the web app signed in there.
    OAuth(Arc<Shared>, Arc<Verifier>, Option<Arc<SignIn>>),
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

/// Whether a Host header names an IP address (with or without a port).
fn is_ip_host(host: &str) -> bool {
    let host = host.trim();
    host.parse::<std::net::SocketAddr>().is_ok()
        || host.parse::<std::net::IpAddr>().is_ok()
        || host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .is_some_and(|h| h.parse::<std::net::Ipv6Addr>().is_ok())
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

async fn guard(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    match host {
        Some(host) if host_allowed(host, &guard.hosts) => {}
        Some(host) if guard.ip_hosts && is_ip_host(host) => {}
        _ => return refuse(StatusCode::FORBIDDEN, "Host not allowed"),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        // The server's own pages (the web app) come from the Host the
        // check above allowed.
        let same = |o: &str| {
            host.is_some_and(|h| {
                o.strip_prefix("https://")
                    .or_else(|| o.strip_prefix("http://"))
                    .is_some_and(|rest| rest.eq_ignore_ascii_case(h))
            })
        };
        let ok = origin
            .to_str()
            .is_ok_and(|o| same(o) || origin_allowed(o, &guard.origins));
        if !ok {
            return refuse(StatusCode::FORBIDDEN, "Origin not allowed");
        }
    }
    // /health says nothing private and stays open to probes (whatever the
    // auth mode); the resource metadata is how a client learns where to
    // get a token.
    let path = request.uri().path();
    let page = request.method() == axum::http::Method::GET && app::is_asset(path);
    // The sign-in checks the key it is given itself, and the provider's
    // sign-in its state and code.
    let signing_in =
        matches!(path, "/app/session" | "/app/signin" | CALLBACK_PATH) && guard.token.is_none();
    if path == "/health" || path.starts_with(METADATA_PATH) || page || signing_in {
        return next.run(request).await;
    }
    if let Some(token) = &guard.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .unwrap_or("");
        if !super::same_secret(given.trim().as_bytes(), token.as_bytes()) {
            return refuse(StatusCode::UNAUTHORIZED, "a valid bearer token is required");
        }
    }
    let (shared, principal) = match &guard.callers {
        Callers::Anyone => return next.run(request).await,
        Callers::Keys(shared) => match by_key(
            shared,
            bearer(&request).or_else(|| app::app_cookie(&request, app::COOKIE)),
        )
        .await
        {
            Ok(principal) => (shared, principal),
            Err(refusal) => return refusal,
        },
        Callers::OAuth(shared, verifier, signin) => {
            match by_token(
                shared,
                verifier,
                signin.as_deref(),
                request,
                guard.max_body_bytes,
            )
            .await
            {
                Ok((principal, checked)) => {
                    request = checked;
                    (shared, principal)
                }
                Err(refusal) => return refusal,
            }
        }
    };
    let rate = principal
        .rate_per_minute
        .or(shared.options.default_rate_per_minute);
    if let Some(rate) = rate
        && let Err(wait) = shared.telemetry.admit(&principal.name, rate)
    {
        return rate_limited(wait);
    }
    // A session is bound to the credential that opened it: another
    // credential (another key, even one given a revoked key's name) finds
    // no such session.
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let credential = principal.credential.clone();
    if let Some(id) = &session {
        let bound = guard
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned();
        if bound.as_ref() != Some(&credential) {
            return refuse(StatusCode::NOT_FOUND, "no such session");
        }
    }
    let closing = request.method() == axum::http::Method::DELETE;
    request.extensions_mut().insert(principal);
    let response = next.run(request).await;
    let mut sessions = guard.sessions.lock().unwrap_or_else(|p| p.into_inner());
    match (&session, response.headers().get(SESSION_HEADER)) {
        (Some(id), _) if closing => {
            sessions.remove(id);
        }
        (None, Some(opened)) => {
            // Sessions a client leaves without DELETE stay bound; past the
            // limit the bindings start afresh (their clients get 404 and
            // open a new session, as the protocol has them do).
            if sessions.len() >= SESSIONS_LIMIT {
                sessions.clear();
            }
            if let Ok(id) = opened.to_str() {
                sessions.insert(id.to_string(), credential);
            }
        }
        _ => {}
    }
    drop(sessions);
    response
}

/// Where the Protected Resource Metadata lives (RFC 9728), with the
/// resource's path after it.
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The bearer token of a request, if it sends one.
fn bearer(request: &Request) -> Option<String> {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(|k| k.trim().to_string())
}

/// The caller of a server that asks for OAuth access tokens (a bearer
/// token, or the web app's signed-in session), and the request to pass on
/// (its body read, when it is an MCP message, to find the scope its tool
/// needs).
async fn by_token(
    shared: &Arc<Shared>,
    verifier: &Verifier,
    signin: Option<&SignIn>,
    request: Request,
    max_body_bytes: usize,
) -> Result<(Principal, Request), Response> {
    let verified = match bearer(&request) {
        Some(token) => Some(verifier.verify(&token).await),
        None => match (signin, app::app_cookie(&request, SESSION_COOKIE)) {
            (Some(signin), Some(id)) => signin.principal(&id).await,
            _ => None,
        },
    };
    let Some(verified) = verified else {
        shared.telemetry.auth_failed("no token");
        return Err(challenged(
            StatusCode::UNAUTHORIZED,
            "an access token is required (Authorization: Bearer ...)",
            &verifier.challenge(None, &[Scope::Search]),
        ));
    };
    let principal = match verified {
        Ok(principal) => principal,
        Err(Refusal {
            unavailable: true,
            message,
            ..
        }) => return Err(refuse(StatusCode::SERVICE_UNAVAILABLE, &message)),
        Err(refusal) => {
            shared.telemetry.auth_failed(refusal.reason);
            return Err(challenged(
                StatusCode::UNAUTHORIZED,
                &refusal.message,
                &verifier.challenge(Some(("invalid_token", &refusal.message)), &[]),
            ));
        }
    };
    let (request, needed) = needed_scope(shared, request, max_body_bytes).await?;
    if let Some(&lacking) = needed.iter().find(|scope| !principal.may(**scope)) {
        shared.telemetry.auth_failed("insufficient scope");
        let mut scopes: Vec<Scope> = principal.scopes.iter().copied().collect();
        scopes.extend(needed.iter().copied());
        scopes.sort();
        scopes.dedup();
        let message = format!(
            "this needs the {} scope, which the access token lacks",
            verifier.scope_name(lacking)
        );
        return Err(challenged(
            StatusCode::FORBIDDEN,
            &message,
            &verifier.challenge(Some(("insufficient_scope", &message)), &scopes),
        ));
    }
    Ok((principal, request))
}

/// The scopes a request needs beyond being known: a route's own, or for
/// an MCP message, every scope its methods need (`access`: one mapping for
/// every transport). The body of a POST to `/mcp` or `/messages` is
/// read for it and handed on unchanged; a method folio does not serve is
/// left for the MCP handler to refuse.
async fn needed_scope(
    shared: &Shared,
    request: Request,
    max_body_bytes: usize,
) -> Result<(Request, Vec<Scope>), Response> {
    let path = request.uri().path();
    let route = match path {
        "/metrics" => vec![Scope::Admin],
        "/upload" => vec![Scope::Ingest],
        _ => Vec::new(),
    };
    let is_message =
        request.method() == axum::http::Method::POST && (path == "/mcp" || path == "/messages");
    if !is_message {
        return Ok((request, route));
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, max_body_bytes).await else {
        return Err(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is too large",
        ));
    };
    let needed = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .map(|message| access::body_needs(&message, &shared.registry))
        .unwrap_or_default();
    Ok((Request::from_parts(parts, Body::from(bytes)), needed))
}

/// The 429 of a key over its rate, with when to try again.
fn rate_limited(wait: std::time::Duration) -> Response {
    let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
    let mut response = refuse(
        StatusCode::TOO_MANY_REQUESTS,
        &format!("over this key's rate: retry in {seconds} s"),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
    response
}

/// `GET /metrics`: the Prometheus text exposition. Behind the guard like
/// every route but `/health`; on a server that asks for keys, an admin's of
/// every library (it names libraries).
async fn metrics(
    State(shared): State<Arc<Shared>>,
    principal: Option<axum::Extension<Principal>>,
) -> Response {
    // The gauges name every library: an admin of some libraries only may
    // not read them.
    if shared.options.keys_required
        && !principal.is_some_and(|axum::Extension(p)| p.may(Scope::Admin) && p.libraries.is_none())
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "metrics need the admin scope on every library",
        );
    }
    exposition(shared).await
}

/// The metrics listener (`--metrics-addr`): `/metrics` alone, without
/// credentials, for a scraper on a private interface; behind the same Host
/// and Origin checks as every other route (`allowed_hosts`, with loopback
/// names, and `allowed_origins`).
pub fn metrics_router(
    shared: Arc<Shared>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
) -> Router {
    let guard_state = Arc::new(Guard {
        hosts: allowed_hosts,
        ip_hosts: true,
        origins: allowed_origins,
        token: None,
        callers: Callers::Anyone,
        max_body_bytes: 0,
        sessions: Default::default(),
    });
    Router::new()
        .route(
            "/metrics",
            get(|State(shared): State<Arc<Shared>>| exposition(shared)),
        )
        .with_state(shared)
        .layer(middleware::from_fn_with_state(guard_state, guard))
        .layer(CatchPanicLayer::new())
}

/// The Prometheus text exposition of the server's counters and the
/// engine's gauges.
async fn exposition(shared: Arc<Shared>) -> Response {
    let engine = shared.engine.clone();
    let gauges = tokio::task::spawn_blocking(move || {
        let mut lines: Vec<(String, Value)> = Vec::new();
        let cache = engine.cache_stats();
        lines.push((
            "# TYPE folio_search_cache_hits_total counter\nfolio_search_cache_hits_total".into(),
            cache.result_hits.into(),
        ));
        lines.push((
            "# TYPE folio_search_cache_misses_total counter\nfolio_search_cache_misses_total"
                .into(),
            cache.result_misses.into(),
        ));
        lines.push((
            "# TYPE folio_store_bytes gauge\nfolio_store_bytes".into(),
            engine.disk_bytes().into(),
        ));
        let ingested = engine.ingest_counts();
        for (name, help, value) in [
            (
                "folio_ingest_documents_total",
                "Documents indexed or replaced.",
                Value::from(ingested.documents),
            ),
            (
                "folio_ingest_chunks_total",
                "Chunks of those documents.",
                ingested.chunks.into(),
            ),
            (
                "folio_ingest_bytes_total",
                "Bytes of sources read for ingestion.",
                ingested.bytes.into(),
            ),
            (
                "folio_embedding_seconds_total",
                "Time spent embedding passages.",
                ingested.embed_seconds.into(),
            ),
        ] {
            lines.push((
                format!("# HELP {name} {help}\n# TYPE {name} counter\n{name}"),
                value,
            ));
        }
        if let Ok(libraries) = engine.libraries() {
            lines.push(("# TYPE folio_library_documents gauge".into(), Value::Null));
            for l in &libraries {
                lines.push((
                    format!("folio_library_documents{{library=\"{}\"}}", l.name),
                    l.document_count.into(),
                ));
            }
            lines.push(("# TYPE folio_library_chunks gauge".into(), Value::Null));
            for l in &libraries {
                lines.push((
                    format!("folio_library_chunks{{library=\"{}\"}}", l.name),
                    l.chunk_count.into(),
                ));
            }
        }
        lines
    })
    .await
    .unwrap_or_default();
    let text = shared.telemetry.exposition(&gauges);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn health(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "model_loaded": shared.engine.embedder_loaded(),
    }))
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
    let callers = match (&options.oauth, options.keys) {
        (Some(verifier), _) => {
            Callers::OAuth(shared.clone(), verifier.clone(), options.signin.clone())
        }
        (None, true) => Callers::Keys(shared.clone()),
        (None, false) => Callers::Anyone,
    };
    let guard_state = Arc::new(Guard {
        hosts: options.allowed_hosts.clone(),
        ip_hosts: false,
        origins: options.allowed_origins.clone(),
        token: options.token.clone(),
        callers,
        max_body_bytes: options.max_body_bytes,
        sessions: Default::default(),
    });
    let mut app = Router::new()
        .route_service("/mcp", mcp)
        .merge(sse::routes(shared.clone(), options.max_body_bytes))
        .merge(app::routes(
            match (&options.oauth, options.keys, &options.token) {
                (Some(_), _, _) => "oauth",
                (None, true, _) => "keys",
                (None, false, Some(_)) => "token",
                (None, false, None) => "none",
            },
            options.signin.clone(),
        ));
    // The metadata is published in OAuth mode only: a client that finds it
    // sets aside the headers it was configured with.
    if let Some(verifier) = &options.oauth {
        let document = Json(verifier.metadata());
        let suffixed = verifier.metadata_url();
        let suffixed = suffixed
            .find(METADATA_PATH)
            .map(|at| suffixed[at..].to_string())
            .filter(|p| p != METADATA_PATH);
        let served = document.clone();
        app = app.route(
            METADATA_PATH,
            get(move || std::future::ready(served.clone())),
        );
        if let Some(path) = suffixed {
            app = app.route(&path, get(move || std::future::ready(document.clone())));
        }
    }
    // The web app's upload, on every server.
    app = app.route(
        "/app/upload",
        post(super::upload::app_upload).layer(DefaultBodyLimit::max(options.max_upload_bytes)),
    );
    // /upload belongs to the mcpvectordb contract: served with it only.
    if shared.registry.has_toolset(Toolset::Mcpvectordb) {
        app = app.route(
            "/upload",
            post(upload).layer(DefaultBodyLimit::max(options.max_upload_bytes)),
        );
    }
    app.route("/health", get(health))
        .route("/metrics", get(metrics))
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
    use axum::serve::ListenerExt;
    // A response leaves at once: without TCP_NODELAY its last small write
    // waits for the client's delayed acknowledgement (40 ms on Linux), so a
    // client keeping its connection got one answer per 44 ms whatever the
    // search cost.
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set on a connection: {e}");
        }
    });
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
        assert!(is_ip_host("10.0.0.5:9100") && is_ip_host("[fd00::1]:9100"));
        assert!(is_ip_host("192.168.1.2") && is_ip_host("[::1]"));
        assert!(!is_ip_host("evil.example:9100") && !is_ip_host("10.0.0.5.evil.example"));
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
        assert!(super::super::same_secret(b"abc", b"abc"));
        assert!(!super::super::same_secret(b"abc", b"abd"));
        assert!(!super::super::same_secret(b"abc", b"abcd"));
        assert!(!super::super::same_secret(b"", b"a"));
    }
}
