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

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::json;

use super::refuse;
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
pub(crate) fn routes(auth: Auth) -> Router<Arc<Shared>> {
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
    if auth == "keys" {
        router.route(
            "/app/session",
            get(signed_in).post(sign_in).delete(sign_out),
        )
    } else {
        router.route(
            "/app/session",
            get(move |State(shared): State<Arc<Shared>>| {
                // Without keys every caller may do what the server does.
                let scopes: &[&str] = if shared.options.read_only {
                    &["search"]
                } else {
                    &["search", "ingest", "admin"]
                };
                std::future::ready(Json(json!({
                    "auth": auth,
                    "signed_in": auth == "none",
                    "scopes": scopes,
                })))
            }),
        )
    }
}

/// The scopes a key's holder may use on this server (a read-only server
/// writes for no one).
fn scopes(shared: &Shared, principal: &folio_engine::keys::Principal) -> Vec<&'static str> {
    principal
        .scopes
        .iter()
        .filter(|s| !shared.options.read_only || **s == folio_engine::keys::Scope::Search)
        .map(|s| s.as_str())
        .collect()
}

/// `GET /app/session`: whether the page's cookie holds a key that is
/// still good, and whose.
async fn signed_in(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let Some(key) = cookie_key(&request) else {
        return Json(json!({"auth": "keys", "signed_in": false})).into_response();
    };
    match super::callers::by_key(&shared, Some(key)).await {
        Ok(principal) => Json(json!({
            "auth": "keys",
            "signed_in": true,
            "name": principal.name,
            "scopes": scopes(&shared, &principal),
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

/// The key a request of the app carries in its cookie: only beside the
/// app's header (see the module's comment).
pub(crate) fn cookie_key(request: &Request) -> Option<String> {
    let headers = request.headers();
    headers.get(APP_HEADER)?;
    cookie(headers, COOKIE)
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
struct SignIn {
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
    let Ok(SignIn { key }) = serde_json::from_slice::<SignIn>(&body) else {
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
    let secure = if loopback(&headers) { "" } else { "; Secure" };
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
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&format!(
            "{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        ))
        .expect("a fixed cookie"),
    );
    response
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
        assert_eq!(cookie_key(&request(true)).as_deref(), Some("folio_abc"));
        assert_eq!(cookie_key(&request(false)), None);
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
