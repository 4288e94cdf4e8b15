//! The web app's sign-in on a server that takes OAuth access tokens
//! (`--auth oauth --app-client-id …`): folio signs a person in at the
//! identity provider as the page's OAuth client, a backend for the page
//! as the OAuth 2.0 for Browser-Based Applications BCP advises, so no token
//! ever reaches the browser.
//!
//! `GET /app/signin` sends the browser to the provider's authorization
//! endpoint: the authorization code flow with PKCE (S256), a random `state`
//! also kept in a short-lived cookie (a callback another site starts finds
//! no match, so no one can sign a browser in as themselves), and this
//! server as the `resource` (RFC 8707). `GET /app/callback` checks the
//! state against the cookie, exchanges the code at the token endpoint (with
//! the client's secret when it has one), verifies the access token as any
//! bearer token is verified, and keeps the tokens in the server's memory
//! under a random session id. The page's cookie holds only that id
//! (HttpOnly, SameSite=Strict, Secure off loopback) and counts only beside
//! the app's header, as a key's cookie does. Each request verifies the
//! session's token again: one about to expire is renewed with the refresh
//! token when the provider gave one, else the session ends with it and the
//! page asks to sign in again. Signing out forgets the session and revokes
//! its refresh token at the provider when the provider names a revocation
//! endpoint. Sessions do not outlive the process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use folio_engine::keys::{Principal, Scope};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::oauth::{Refusal, Verifier, check_url, json_body};
use super::same_secret;

/// The cookie holding a signed-in browser's session id.
pub(crate) const SESSION_COOKIE: &str = "folio_session";
/// The cookie binding a sign-in under way to the browser that began it.
pub(crate) const STATE_COOKIE: &str = "folio_signin";
/// Where the provider sends the browser back.
pub(crate) const CALLBACK_PATH: &str = "/app/callback";
/// How long a person may take at the provider to sign in.
pub(crate) const SIGN_IN_TIME: Duration = Duration::from_secs(600);

/// Sign-ins under way held at most (the oldest is dropped past it).
const PENDING_LIMIT: usize = 1_000;
/// Signed-in browsers held at most (the oldest is signed out past it).
const SESSIONS_LIMIT: usize = 10_000;
/// A token this close to its expiry is renewed before it is used.
const RENEW_BEFORE: Duration = Duration::from_secs(30);

/// The web app as an OAuth client registered at the provider, with
/// `<origin of --resource>/app/callback` as its redirect URI.
#[derive(Debug, Clone)]
pub struct AppClient {
    pub client_id: String,
    /// A confidential client's secret (`client_secret_basic`); None: a
    /// public client, PKCE alone.
    pub client_secret: Option<String>,
    /// The scopes asked for, space-separated; None: `openid` and folio's
    /// three scopes as tokens spell them.
    pub scopes: Option<String>,
}

/// Why a sign-in did not end signed in: `code` is what the page is told
/// (`refused`, `expired` or `failed`), `detail` goes to the server's log.
#[derive(Debug)]
pub(crate) struct Failure {
    pub code: &'static str,
    pub detail: String,
}

impl Failure {
    pub(crate) fn new(code: &'static str, detail: impl Into<String>) -> Self {
        Failure {
            code,
            detail: detail.into(),
        }
    }
}

struct Pending {
    code_verifier: String,
    started: Instant,
}

#[derive(Clone)]
struct Tokens {
    access: String,
    refresh: Option<String>,
    /// When the access token expires, as the token endpoint said.
    expires: Option<Instant>,
    signed_in: Instant,
}

/// Browser sign-in through the identity provider, and the sessions it made.
pub struct SignIn {
    verifier: Arc<Verifier>,
    client: AppClient,
    scopes: String,
    authorization_endpoint: String,
    token_endpoint: String,
    revocation_endpoint: Option<String>,
    redirect_uri: String,
    http: reqwest::Client,
    pending: Mutex<HashMap<String, Pending>>,
    sessions: Mutex<HashMap<String, Tokens>>,
    /// One renewal at a time: a provider that rotates refresh tokens
    /// accepts each one once.
    renewing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("client_id", &self.client.client_id)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Inserts into a map of at most `limit` entries, the oldest (by `age`)
/// dropped to make room.
fn insert_bounded<V>(
    map: &mut HashMap<String, V>,
    limit: usize,
    key: String,
    value: V,
    age: impl Fn(&V) -> Instant,
) {
    if map.len() >= limit
        && let Some(oldest) = map
            .iter()
            .min_by_key(|(_, v)| age(v))
            .map(|(k, _)| k.clone())
    {
        map.remove(&oldest);
    }
    map.insert(key, value);
}

/// 32 random bytes, URL-safe: a state, a PKCE verifier or a session id.
fn random_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness from the system: {e}"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The PKCE S256 challenge of a verifier (RFC 7636).
fn challenge_of(code_verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(code_verifier.as_bytes()))
}

/// A form value of `application/x-www-form-urlencoded` (RFC 6749 §2.3.1
/// encodes the client's id and secret so before Basic authentication).
fn form_encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

impl SignIn {
    /// The sign-in of `client` at the provider `verifier` trusts: its
    /// discovery document must name an authorization and a token endpoint.
    pub fn new(verifier: Arc<Verifier>, client: AppClient) -> Result<Self, String> {
        let endpoints = verifier.endpoints.clone();
        let authorization_endpoint = endpoints
            .authorization
            .ok_or("the provider's discovery document names no authorization_endpoint")?;
        let token_endpoint = endpoints
            .token
            .ok_or("the provider's discovery document names no token_endpoint")?;
        if client.client_id.trim().is_empty() {
            return Err("the app's client id is empty".into());
        }
        let resource = check_url("the resource", verifier.resource())?;
        let redirect_uri = format!("{}{CALLBACK_PATH}", resource.origin().ascii_serialization());
        let scopes = client.scopes.clone().unwrap_or_else(|| {
            std::iter::once("openid".to_string())
                .chain(Scope::ALL.iter().map(|s| verifier.scope_name(*s)))
                .collect::<Vec<_>>()
                .join(" ")
        });
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(SignIn {
            verifier,
            client,
            scopes,
            authorization_endpoint,
            token_endpoint,
            revocation_endpoint: endpoints.revocation,
            redirect_uri,
            http,
            pending: Mutex::default(),
            sessions: Mutex::default(),
            renewing: tokio::sync::Mutex::new(()),
        })
    }

    /// The redirect URI to register at the provider.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// A new sign-in: its state (for the browser's cookie) and the
    /// provider's URL to send the browser to.
    pub(crate) fn begin(&self) -> Result<(String, String), String> {
        let state = random_token()?;
        let code_verifier = random_token()?;
        let mut url = url::Url::parse(&self.authorization_endpoint)
            .map_err(|e| format!("the authorization endpoint: {e}"))?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client.client_id)
            .append_pair("redirect_uri", &self.redirect_uri)
            .append_pair("scope", &self.scopes)
            .append_pair("state", &state)
            .append_pair("code_challenge", &challenge_of(&code_verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", self.verifier.resource());
        let mut pending = lock(&self.pending);
        pending.retain(|_, p| p.started.elapsed() < SIGN_IN_TIME);
        insert_bounded(
            &mut pending,
            PENDING_LIMIT,
            state.clone(),
            Pending {
                code_verifier,
                started: Instant::now(),
            },
            |p| p.started,
        );
        Ok((state, url.into()))
    }

    /// Ends a sign-in the provider sent back with `code` for `state`, which
    /// the browser's own cookie (`kept`) must name, and, when the provider
    /// says who it is (`iss`, RFC 9207), from this server's provider: a new
    /// session's id and who signed in.
    pub(crate) async fn finish(
        &self,
        state: &str,
        code: &str,
        iss: Option<&str>,
        kept: Option<&str>,
    ) -> Result<(String, Principal), Failure> {
        if !kept.is_some_and(|kept| same_secret(kept.as_bytes(), state.as_bytes())) {
            return Err(Failure::new(
                "refused",
                "the callback's state is not the one this browser began",
            ));
        }
        if let Some(iss) = iss
            && iss != self.verifier.issuer()
        {
            return Err(Failure::new(
                "refused",
                format!("the callback names the issuer {iss:?}, not this server's provider"),
            ));
        }
        let pending = lock(&self.pending)
            .remove(state)
            .filter(|p| p.started.elapsed() < SIGN_IN_TIME)
            .ok_or_else(|| Failure::new("expired", "no sign-in under way has this state"))?;
        let tokens = self
            .token_request(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", &self.redirect_uri),
                ("code_verifier", &pending.code_verifier),
                ("resource", self.verifier.resource()),
            ])
            .await
            .map_err(|e| Failure::new("failed", e))?;
        let principal = self.verifier.verify(&tokens.access).await.map_err(|r| {
            Failure::new(
                if r.unavailable { "failed" } else { "refused" },
                format!("the provider's access token: {}", r.message),
            )
        })?;
        let id = random_token().map_err(|e| Failure::new("failed", e))?;
        let mut sessions = lock(&self.sessions);
        let now = Instant::now();
        sessions.retain(|_, t| t.refresh.is_some() || t.expires.is_none_or(|e| e > now));
        insert_bounded(&mut sessions, SESSIONS_LIMIT, id.clone(), tokens, |t| {
            t.signed_in
        });
        Ok((id, principal))
    }

    /// Who the session `id` is signed in as: None when there is no such
    /// session, else its access token verified (renewed first when it is
    /// about to expire). A session whose token no longer holds ends.
    pub(crate) async fn principal(&self, id: &str) -> Option<Result<Principal, Refusal>> {
        let mut tokens = lock(&self.sessions).get(id).cloned()?;
        if tokens
            .expires
            .is_some_and(|e| e.saturating_duration_since(Instant::now()) < RENEW_BEFORE)
            && tokens.refresh.is_some()
        {
            tokens = self.renew(id).await?;
        }
        let verified = self.verifier.verify(&tokens.access).await;
        if matches!(&verified, Err(refusal) if !refusal.unavailable) {
            lock(&self.sessions).remove(id);
        }
        Some(verified)
    }

    /// Renews the session's tokens with its refresh token; a session the
    /// provider no longer renews ends.
    async fn renew(&self, id: &str) -> Option<Tokens> {
        let _one = self.renewing.lock().await;
        let held = lock(&self.sessions).get(id).cloned()?;
        // Another request may have renewed it while this one waited.
        if held
            .expires
            .is_none_or(|e| e.saturating_duration_since(Instant::now()) >= RENEW_BEFORE)
        {
            return Some(held);
        }
        let refresh = held.refresh.clone()?;
        match self
            .token_request(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("resource", self.verifier.resource()),
            ])
            .await
        {
            Ok(mut renewed) => {
                // A provider that does not rotate its refresh tokens keeps
                // the one it gave.
                renewed.refresh = renewed.refresh.or(Some(refresh));
                renewed.signed_in = held.signed_in;
                let mut sessions = lock(&self.sessions);
                // Signed out meanwhile: stays signed out.
                let slot = sessions.get_mut(id)?;
                *slot = renewed.clone();
                Some(renewed)
            }
            Err(e) => {
                tracing::info!("a web app session ends: renewing its token failed: {e}");
                lock(&self.sessions).remove(id);
                None
            }
        }
    }

    /// Signs the session out: forgotten here, its refresh token revoked at
    /// the provider (best effort, after the answer).
    pub(crate) fn end(self: &Arc<Self>, id: &str) {
        let Some(tokens) = lock(&self.sessions).remove(id) else {
            return;
        };
        let (Some(refresh), Some(_)) = (tokens.refresh, &self.revocation_endpoint) else {
            return;
        };
        let this = self.clone();
        tokio::spawn(async move {
            if let Err(e) = this.revoke(&refresh).await {
                tracing::info!("revoking a signed-out session's refresh token failed: {e}");
            }
        });
    }

    async fn revoke(&self, refresh: &str) -> Result<(), String> {
        let Some(endpoint) = &self.revocation_endpoint else {
            return Ok(());
        };
        let response = self
            .client_request(
                endpoint,
                &[("token", refresh), ("token_type_hint", "refresh_token")],
            )
            .send()
            .await
            .map_err(|e| format!("cannot reach {endpoint}: {e}"))?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(format!("{endpoint} answered {}", response.status()))
        }
    }

    /// A form POST to one of the provider's endpoints, authenticated as the
    /// app's client.
    fn client_request(&self, endpoint: &str, fields: &[(&str, &str)]) -> reqwest::RequestBuilder {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.extend_pairs(fields);
        let mut request = self.http.post(endpoint);
        match &self.client.client_secret {
            Some(secret) => {
                request = request.basic_auth(
                    form_encoded(&self.client.client_id),
                    Some(form_encoded(secret)),
                );
            }
            None => {
                form.append_pair("client_id", &self.client.client_id);
            }
        }
        request
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json")
            .body(form.finish())
    }

    /// A token endpoint request, and the tokens it answers.
    async fn token_request(&self, fields: &[(&str, &str)]) -> Result<Tokens, String> {
        let endpoint = &self.token_endpoint;
        let response = self
            .client_request(endpoint, fields)
            .send()
            .await
            .map_err(|e| format!("cannot reach {endpoint}: {e}"))?;
        let status = response.status();
        let body = json_body(endpoint, response).await?;
        if !status.is_success() {
            let said = |field: &str| body.get(field).and_then(Value::as_str).unwrap_or("");
            return Err(format!(
                "{endpoint} answered {status}: {} {}",
                said("error"),
                said("error_description")
            ));
        }
        let access = body
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| format!("{endpoint} answered no access_token"))?;
        if let Some(kind) = body.get("token_type").and_then(Value::as_str)
            && !kind.eq_ignore_ascii_case("bearer")
        {
            return Err(format!(
                "{endpoint} answered a {kind} token, not a bearer token"
            ));
        }
        let now = Instant::now();
        Ok(Tokens {
            access: access.to_string(),
            refresh: body
                .get("refresh_token")
                .and_then(Value::as_str)
                .map(str::to_string),
            expires: body
                .get("expires_in")
                .and_then(Value::as_u64)
                .map(|secs| now + Duration::from_secs(secs)),
            signed_in: now,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pkce_challenge_is_rfc_7636s() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn random_tokens_are_long_and_distinct() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
    }

    #[test]
    fn a_full_map_drops_its_oldest_entry() {
        let start = Instant::now();
        let mut map = HashMap::new();
        for (i, key) in ["a", "b", "c"].into_iter().enumerate() {
            insert_bounded(
                &mut map,
                2,
                key.into(),
                start + Duration::from_secs(i as u64),
                |t| *t,
            );
        }
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort();
        assert_eq!(keys, ["b", "c"]);
    }

    #[test]
    fn client_credentials_are_form_encoded_before_basic() {
        assert_eq!(form_encoded("a b:c/é"), "a+b%3Ac%2F%C3%A9");
    }
}
