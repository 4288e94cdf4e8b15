//! The web app: a page, a script and a style sheet embedded in the binary
//! and served at `/` and `/app/…` under a strict Content-Security-Policy
//! (nothing but this server's own scripts, styles and `/mcp`). The page is
//! an MCP client of `/mcp`: it sees what the caller's credential allows,
//! through the same checks as any client.
//!
//! On a server that asks for access keys, `POST /app/session` takes a key
//! once, checks it, and keeps it in an HttpOnly, SameSite=Strict cookie
//! (Secure off loopback); the guard takes that cookie as the key only on
//! requests that carry `X-Folio-App` — a header a cross-site form cannot
//! send and a cross-site script is refused by CORS — so a forged request
//! from another site carries no credential. `DELETE /app/session` signs out.
//! An admin of every library lists, creates and revokes keys at
//! `/app/keys` (the same header required).
//!
//! On a server that takes an identity provider's tokens, `/app/signin`
//! and `/app/callback` sign a person in at the provider (`signin`); the
//! cookie then holds a session id, under the same rule as a key.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::json;

use folio_core::ErrorCode;
use folio_engine::keys::{Principal, Scope};

use super::refuse;
use super::signin::{CALLBACK_PATH, Failure, SESSION_COOKIE, SIGN_IN_TIME, STATE_COOKIE, SignIn};
use crate::ops::Shared;

/// The cookie that keeps a signed-in key.
pub(crate) const COOKIE: &str = "folio_key";
/// The header the app's own requests carry.
pub(crate) const APP_HEADER: &str = "x-folio-app";

const PAGE: &str = include_str!("../../app/index.html");
const SCRIPT: &str = include_str!("../../app/app.js");
const STYLE: &str = include_str!("../../app/app.css");

const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; \
    frame-ancestors 'none'";

/// Whether `path` is one of the app's own files: served to anyone who
/// passes the Host and Origin checks, as they hold no data.
pub(crate) fn is_asset(path: &str) -> bool {
    matches!(path, "/" | "/app/app.js" | "/app/app.css")
}

/// How the server knows its callers, as the page needs to: "none",
/// "token", "keys" or "oauth".
pub(crate) type Auth = &'static str;

/// The routes of the web app.
pub(crate) fn routes(auth: Auth, signin: Option<Arc<SignIn>>) -> Router<Arc<Shared>> {
    let router = Router::new()
        .route("/", get(|| asset(PAGE, "text/html; charset=utf-8")))
        .route(
            "/app/app.js",
            get(|| asset(SCRIPT, "text/javascript; charset=utf-8")),
        )
        .route(
            "/app/app.css",
            get(|| asset(STYLE, "text/css; charset=utf-8")),
        );
    match auth {
        "keys" => router
            .route(
                "/app/session",
                get(signed_in).post(sign_in).delete(sign_out),
            )
            .route("/app/keys", get(list_keys).post(create_key))
            .route("/app/keys/{name}", axum::routing::delete(revoke_key))
            .route("/app/audit", for_admins(true, audit))
            .route("/app/history", for_admins(true, history)),
        "oauth" => {
            let (asked, leaving) = (signin.clone(), signin.clone());
            let router = router
                .route(
                    "/app/session",
                    get(move |State(shared): State<Arc<Shared>>, request: Request| {
                        oauth_session(shared, asked.clone(), request)
                    })
                    .delete(move |headers: HeaderMap| {
                        std::future::ready(oauth_sign_out(leaving.clone(), &headers))
                    }),
                )
                .route("/app/audit", for_admins(true, audit))
                .route("/app/history", for_admins(true, history));
            let Some(signin) = signin else {
                return router;
            };
            let back = signin.clone();
            router
                .route(
                    "/app/signin",
                    get(move |headers: HeaderMap| {
                        std::future::ready(begin_sign_in(&signin, &headers))
                    }),
                )
                .route(
                    CALLBACK_PATH,
                    get(
                        move |State(shared): State<Arc<Shared>>,
                              headers: HeaderMap,
                              Query(answer): Query<Callback>| {
                            let back = back.clone();
                            async move { callback(&shared, &back, &headers, answer).await }
                        },
                    ),
                )
        }
        _ => {
            // Without keys the page's caller is the server's own user (on
            // loopback) or is not signed in at all (a shared token): the
            // audit log is the local user's, and only theirs.
            let router = if auth == "none" {
                router
                    .route("/app/audit", for_admins(false, audit))
                    .route("/app/history", for_admins(false, history))
            } else {
                router
            };
            router.route(
                "/app/session",
                get(move |State(shared): State<Arc<Shared>>| {
                    // Without keys every caller may do what the server does.
                    std::future::ready(Json(json!({
                        "auth": auth,
                        "signed_in": auth == "none",
                        "scopes": usable(&shared, Scope::ALL.iter()),
                    })))
                }),
            )
        }
    }
}

/// The refusal of an admin's route (keys, the audit log, the history) to
/// a caller who is not an admin of every library, or who asks from
/// elsewhere than the page; None for an admin.
fn not_admin(
    headers: &HeaderMap,
    principal: Option<axum::Extension<Principal>>,
) -> Option<Response> {
    if headers.get(APP_HEADER).is_none() {
        return Some(refuse(StatusCode::FORBIDDEN, "ask from folio's page"));
    }
    match principal {
        Some(axum::Extension(p)) if p.may(Scope::Admin) && p.libraries.is_none() => None,
        _ => Some(refuse(
            StatusCode::FORBIDDEN,
            "this needs the admin scope on every library",
        )),
    }
}

/// A `GET` route of the page for an admin of every library on a server
/// that asks for keys (`keys`), or for the local user of one that asks for
/// nothing; either way only from the page (its header).
fn for_admins<F, Fut>(keys: bool, answer: F) -> axum::routing::MethodRouter<Arc<Shared>>
where
    F: Fn(Arc<Shared>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send,
{
    get(
        move |State(shared): State<Arc<Shared>>,
              headers: HeaderMap,
              principal: Option<axum::Extension<Principal>>| {
            let answer = answer.clone();
            async move {
                let refusal = if keys {
                    not_admin(&headers, principal)
                } else {
                    headers
                        .get(APP_HEADER)
                        .is_none()
                        .then(|| refuse(StatusCode::FORBIDDEN, "ask from folio's page"))
                };
                match refusal {
                    Some(refusal) => refusal,
                    None => answer(shared).await,
                }
            }
        },
    )
}

/// `GET /app/history`: the calls of each minute of the last day that had
/// any (every call the audit log would record), oldest first.
async fn history(shared: Arc<Shared>) -> Response {
    Json(json!({"minutes": shared.telemetry.history()})).into_response()
}

/// Audit lines the page shows at most, newest first.
const AUDIT_LINES: usize = 200;
/// Bytes read from the end of the audit log for them: the log only grows
/// (logrotate empties it), so the page never reads all of it.
const AUDIT_TAIL_BYTES: u64 = 512 * 1024;

/// `GET /app/audit`: the newest lines of the server's audit log (each a
/// JSON object as written: time, caller, transport, tool, library,
/// outcome, duration; never a key or document text), or `enabled: false`
/// when the server keeps none in a file.
async fn audit(shared: Arc<Shared>) -> Response {
    let Some(path) = shared
        .options
        .audit_log
        .clone()
        .filter(|p| p.as_os_str() != "-")
    else {
        return Json(json!({"enabled": false})).into_response();
    };
    match tokio::task::spawn_blocking(move || audit_tail(&path)).await {
        Ok(Ok(lines)) => Json(json!({"enabled": true, "lines": lines})).into_response(),
        Ok(Err(e)) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the audit log cannot be read: {e}"),
        ),
        Err(_) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "reading the audit log failed",
        ),
    }
}

/// The last `AUDIT_LINES` whole lines of the log that parse as JSON,
/// newest first.
fn audit_tail(path: &std::path::Path) -> std::io::Result<Vec<serde_json::Value>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let length = file.metadata()?.len();
    let start = length.saturating_sub(AUDIT_TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(AUDIT_TAIL_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A read from inside the file starts within a line: not a whole one.
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    Ok(lines
        .iter()
        .rev()
        .filter_map(|line| serde_json::from_str(line).ok())
        .take(AUDIT_LINES)
        .collect())
}

/// A key as the page lists it: never its hash.
fn listed_key(record: &folio_engine::KeyRecord) -> serde_json::Value {
    json!({
        "name": record.name,
        "scopes": record.scopes,
        "libraries": record.libraries,
        "expires_at": record.expires_at,
        "rate_per_minute": record.rate_per_minute,
        "created_at": record.created_at,
        "last_used_at": record.last_used_at,
    })
}

fn engine_refusal(e: &folio_engine::EngineError) -> Response {
    let status = match e.code {
        ErrorCode::InvalidArgument => StatusCode::BAD_REQUEST,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::ReadOnly | ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    refuse(status, &e.message)
}

/// `GET /app/keys`: every key, for an admin of every library.
async fn list_keys(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    principal: Option<axum::Extension<Principal>>,
) -> Response {
    if let Some(refusal) = not_admin(&headers, principal) {
        return refusal;
    }
    let engine = shared.engine.clone();
    match tokio::task::spawn_blocking(move || engine.keys()).await {
        Ok(Ok(keys)) => {
            Json(json!({"keys": keys.iter().map(listed_key).collect::<Vec<_>>()})).into_response()
        }
        Ok(Err(e)) => engine_refusal(&e),
        Err(_) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "listing keys failed"),
    }
}

#[derive(Deserialize)]
struct NewKeyForm {
    name: String,
    scopes: Vec<String>,
    /// None or empty: every library.
    #[serde(default)]
    libraries: Option<Vec<String>>,
    #[serde(default)]
    expires_days: Option<u64>,
}

/// `POST /app/keys {"name", "scopes", "libraries", "expires_days"}`: a new
/// key, shown once in the answer.
async fn create_key(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    principal: Option<axum::Extension<Principal>>,
    body: axum::body::Bytes,
) -> Response {
    if let Some(refusal) = not_admin(&headers, principal) {
        return refusal;
    }
    if shared.options.read_only {
        return refuse(StatusCode::FORBIDDEN, "this server is read-only");
    }
    let form: NewKeyForm = match serde_json::from_slice(&body) {
        Ok(form) => form,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("a new key: {e}")),
    };
    let scopes = match form
        .scopes
        .iter()
        .map(|s| Scope::parse(s))
        .collect::<Result<std::collections::BTreeSet<_>, _>>()
    {
        Ok(scopes) => scopes,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &e.message),
    };
    let libraries = match form.libraries.filter(|l| !l.is_empty()) {
        None => None,
        Some(names) => match names
            .iter()
            .map(|n| folio_core::LibraryName::new(n.trim()))
            .collect::<Result<std::collections::BTreeSet<_>, _>>()
        {
            Ok(names) => Some(names),
            Err(e) => return refuse(StatusCode::BAD_REQUEST, &e.to_string()),
        },
    };
    let new = folio_engine::keys::NewKey {
        name: form.name.trim().to_string(),
        scopes,
        libraries,
        expires_in: form
            .expires_days
            .map(|days| std::time::Duration::from_secs(days.saturating_mul(86_400))),
        rate_per_minute: None,
    };
    let engine = shared.engine.clone();
    match tokio::task::spawn_blocking(move || engine.create_key(&new)).await {
        Ok(Ok((key, record))) => {
            let mut listed = listed_key(&record);
            listed["key"] = json!(key);
            Json(listed).into_response()
        }
        Ok(Err(e)) => engine_refusal(&e),
        Err(_) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "creating the key failed"),
    }
}

/// `DELETE /app/keys/{name}`: revokes a key.
async fn revoke_key(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    principal: Option<axum::Extension<Principal>>,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> Response {
    if let Some(refusal) = not_admin(&headers, principal) {
        return refusal;
    }
    if shared.options.read_only {
        return refuse(StatusCode::FORBIDDEN, "this server is read-only");
    }
    let engine = shared.engine.clone();
    match tokio::task::spawn_blocking(move || engine.revoke_key(&name)).await {
        Ok(Ok(())) => StatusCode::NO_CONTENT.into_response(),
        Ok(Err(e)) => engine_refusal(&e),
        Err(_) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "revoking the key failed"),
    }
}

/// Of `scopes`, those usable on this server (a read-only server writes for
/// no one).
fn usable<'a>(shared: &Shared, scopes: impl Iterator<Item = &'a Scope>) -> Vec<&'static str> {
    scopes
        .filter(|s| !shared.options.read_only || **s == Scope::Search)
        .map(|s| s.as_str())
        .collect()
}

/// `GET /app/session`: whether the page's cookie holds a key that is
/// still good, and whose.
async fn signed_in(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let Some(key) = app_cookie(&request, COOKIE) else {
        return Json(json!({"auth": "keys", "signed_in": false})).into_response();
    };
    match super::callers::by_key(&shared, Some(key)).await {
        Ok(principal) => Json(json!({
            "auth": "keys",
            "signed_in": true,
            "name": principal.name,
            "scopes": usable(&shared, principal.scopes.iter()),
            "libraries": principal.libraries,
        }))
        .into_response(),
        Err(_) => Json(json!({"auth": "keys", "signed_in": false})).into_response(),
    }
}

async fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The credential a request of the app carries in its cookie `name` (a
/// key, or a signed-in session's id): only beside the app's header (see
/// the module's comment).
pub(crate) fn app_cookie(request: &Request, name: &str) -> Option<String> {
    let headers = request.headers();
    headers.get(APP_HEADER)?;
    cookie(headers, name)
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
}

#[derive(Deserialize)]
struct KeySignIn {
    key: String,
}

/// `POST /app/session {"key": "folio_…"}`: checks the key, and keeps it in
/// the cookie.
async fn sign_in(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if headers.get(APP_HEADER).is_none() {
        return refuse(StatusCode::FORBIDDEN, "sign in from folio's page");
    }
    let Ok(KeySignIn { key }) = serde_json::from_slice::<KeySignIn>(&body) else {
        return refuse(StatusCode::BAD_REQUEST, "send {\"key\": \"folio_…\"}");
    };
    let key = key.trim().to_string();
    // A cookie value holds no separators: a key that does is no key.
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b';' && b != b',')
    {
        return refuse(StatusCode::UNAUTHORIZED, "that is not an access key");
    }
    let principal = match super::callers::by_key(&shared, Some(key.clone())).await {
        Ok(principal) => principal,
        Err(refusal) => return refusal,
    };
    let secure = secure(&headers);
    let mut response = Json(json!({
        "name": principal.name,
        "libraries": principal.libraries,
    }))
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&format!(
        "{COOKIE}={key}; Path=/; HttpOnly; SameSite=Strict{secure}"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `DELETE /app/session`: forgets the cookie.
async fn sign_out(headers: HeaderMap) -> Response {
    if headers.get(APP_HEADER).is_none() {
        return refuse(StatusCode::FORBIDDEN, "sign out from folio's page");
    }
    signed_out(COOKIE)
}

/// No content, and the cookie `name` cleared.
fn signed_out(name: &str) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(&format!(
        "{name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `GET /app/session` on a server that takes the provider's tokens:
/// whether the page's cookie names a session still signed in, and whose;
/// `signin` says whether the page can sign in at all.
async fn oauth_session(
    shared: Arc<Shared>,
    signin: Option<Arc<SignIn>>,
    request: Request,
) -> Response {
    let offered = signin.is_some();
    let signed_in = match (signin, app_cookie(&request, SESSION_COOKIE)) {
        (Some(signin), Some(id)) => signin.principal(&id).await,
        _ => None,
    };
    match signed_in {
        Some(Ok(principal)) => Json(json!({
            "auth": "oauth",
            "signin": true,
            "signed_in": true,
            "name": principal.name,
            "scopes": usable(&shared, principal.scopes.iter()),
            "libraries": principal.libraries,
        })),
        _ => Json(json!({"auth": "oauth", "signin": offered, "signed_in": false})),
    }
    .into_response()
}

/// `DELETE /app/session` on a server that takes the provider's tokens:
/// the session ends here (and its refresh token at the provider).
fn oauth_sign_out(signin: Option<Arc<SignIn>>, headers: &HeaderMap) -> Response {
    if headers.get(APP_HEADER).is_none() {
        return refuse(StatusCode::FORBIDDEN, "sign out from folio's page");
    }
    if let (Some(signin), Some(id)) = (signin, cookie(headers, SESSION_COOKIE)) {
        signin.end(&id);
    }
    signed_out(SESSION_COOKIE)
}

/// A `303 See Other` to `location`.
fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /app/signin`: sends the browser to the provider, its state kept in
/// a cookie only the callback receives (SameSite=Lax: the provider's
/// redirect back is a navigation from another site).
fn begin_sign_in(signin: &SignIn, headers: &HeaderMap) -> Response {
    let (state, location) = match signin.begin() {
        Ok(begun) => begun,
        Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, &e),
    };
    let secure = secure(headers);
    let mut response = see_other(&location);
    if let Ok(value) = HeaderValue::from_str(&format!(
        "{STATE_COOKIE}={state}; Path={CALLBACK_PATH}; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        SIGN_IN_TIME.as_secs()
    )) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// What the provider sends the browser back with.
#[derive(Deserialize)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /app/callback`: ends the sign-in, and sends the browser to the
/// page, signed in (a session cookie) or with `?signin=` and one of a few
/// fixed words the page explains (never the provider's text: a link could
/// make that say anything).
async fn callback(
    shared: &Shared,
    signin: &SignIn,
    headers: &HeaderMap,
    answer: Callback,
) -> Response {
    let kept = cookie(headers, STATE_COOKIE);
    let outcome = match (answer.code, answer.state, answer.error) {
        (_, _, Some(error)) => Err(Failure::new(
            if error == "access_denied" {
                "denied"
            } else {
                "failed"
            },
            format!(
                "the provider answered {error}: {}",
                answer.error_description.unwrap_or_default()
            ),
        )),
        (Some(code), Some(state), None) => {
            signin
                .finish(&state, &code, answer.iss.as_deref(), kept.as_deref())
                .await
        }
        _ => Err(Failure::new(
            "failed",
            "the callback holds no code and state",
        )),
    };
    let secure = secure(headers);
    let mut response = match outcome {
        Ok((id, principal)) => {
            tracing::info!("{} signed in to the web app", principal.name);
            let mut response = see_other("/");
            if let Ok(value) = HeaderValue::from_str(&format!(
                "{SESSION_COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict{secure}"
            )) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            response
        }
        Err(failure) => {
            tracing::warn!("a web app sign-in failed: {}", failure.detail);
            shared.telemetry.auth_failed("web sign-in");
            see_other(&format!("/?signin={}", failure.code))
        }
    };
    if let Ok(value) = HeaderValue::from_str(&format!(
        "{STATE_COOKIE}=; Path={CALLBACK_PATH}; HttpOnly; SameSite=Lax; Max-Age=0{secure}"
    )) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// A cookie's Secure attribute: off on loopback (see `loopback`).
fn secure(headers: &HeaderMap) -> &'static str {
    if loopback(headers) { "" } else { "; Secure" }
}

/// Whether the request names a loopback host (where a browser sends no
/// Secure cookie over plain HTTP to an IP literal).
fn loopback(headers: &HeaderMap) -> bool {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let name = host
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map_or(host, |(name, _)| name);
    matches!(name, "localhost" | "127.0.0.1" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_counts_only_beside_the_app_header() {
        let request = |app: bool| {
            let mut builder = Request::builder()
                .uri("/mcp")
                .header(header::COOKIE, "theme=dark; folio_key=folio_abc; other=1");
            if app {
                builder = builder.header(APP_HEADER, "1");
            }
            builder.body(axum::body::Body::empty()).unwrap()
        };
        assert_eq!(
            app_cookie(&request(true), COOKIE).as_deref(),
            Some("folio_abc")
        );
        assert_eq!(app_cookie(&request(false), COOKIE), None);
        assert_eq!(app_cookie(&request(true), SESSION_COOKIE), None);
    }

    #[test]
    fn loopback_names() {
        let headers = |host: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
            headers
        };
        assert!(loopback(&headers("127.0.0.1:7070")));
        assert!(loopback(&headers("localhost")));
        assert!(loopback(&headers("[::1]:80")));
        assert!(!loopback(&headers("folio.example.com")));
        assert!(!loopback(&headers("localhost.evil.example:80")));
    }
}
