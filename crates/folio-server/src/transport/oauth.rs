//! OAuth 2.1 resource-server mode (`--auth oauth`): folio accepts access
//! tokens its team's identity provider issues, and is not itself an
//! authorization server.
//!
//! A token is a JWT signed with one of the provider's keys, fetched from the
//! `jwks_uri` its discovery document names and cached. Every token is held
//! to: an allow-listed asymmetric algorithm that matches the key's family
//! (never `none`, never an HMAC secret, so a public key can never be used
//! as one), a key named by `kid` in the provider's current set (an unknown
//! `kid` fetches the set again, at most once per `REFETCH_AFTER`, which is
//! how a key rotation is followed), `iss` equal to the configured issuer,
//! `aud` holding the configured resource (RFC 8707), and `exp`/`nbf` within
//! a small leeway. Keys a token carries itself (`jwk`, `jku`, `x5u`, `x5c`)
//! are never used. Its scopes come from a configurable claim, its libraries
//! from another (when configured), its name (for audit lines and rates) from
//! a third.
//!
//! The server publishes its Protected Resource Metadata (RFC 9728) so MCP
//! clients discover the provider from a 401's `resource_metadata`.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use folio_core::LibraryName;
use folio_engine::keys::{Credential, Principal, Scope};
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde_json::{Map, Value, json};

/// Algorithms a token may be signed with: asymmetric ones only.
const ALLOWED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// A token with a `kid` the cached set lacks fetches the set again only if
/// the last fetch is at least this old (a flood of made-up `kid`s costs the
/// provider one request per interval).
pub const REFETCH_AFTER: Duration = Duration::from_secs(2);

/// The key set is fetched again when it is this old, whatever the tokens.
const MAX_AGE: Duration = Duration::from_secs(600);

/// Largest token read; larger ones are refused unparsed.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Largest discovery document or key set read from the provider.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// How a server validates access tokens.
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    /// The provider's issuer identifier, exactly as tokens carry it in `iss`.
    pub issuer: String,
    /// This server's resource identifier (e.g. `https://folio.example.org/mcp`):
    /// tokens must name it in `aud`.
    pub resource: String,
    /// The claim holding the token's scopes: a space-separated string
    /// (`scope`, RFC 9068) or an array (`scp`).
    pub scope_claim: String,
    /// What each of folio's scopes is called in that claim after this
    /// prefix (`folio:` maps `folio:search` to search); empty by default.
    pub scope_prefix: String,
    /// The claim listing the libraries a token may use (`*`: every one);
    /// None: every library. When configured, a token without it may use
    /// none.
    pub libraries_claim: Option<String>,
    /// The claim naming the caller in audit lines and rates (`sub`).
    pub name_claim: String,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
}

impl OAuthOptions {
    pub fn new(issuer: String, resource: String) -> Self {
        OAuthOptions {
            issuer,
            resource,
            scope_claim: "scope".into(),
            scope_prefix: String::new(),
            libraries_claim: None,
            name_claim: "sub".into(),
            leeway: Duration::from_secs(30),
        }
    }
}

/// Why a token was refused: `reason` is one of a few fixed words (a metric
/// label), `message` says it to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: &'static str,
    pub message: String,
    /// The provider's keys could not be fetched: not the caller's fault.
    pub unavailable: bool,
}

impl Refusal {
    fn invalid(reason: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            reason,
            message: message.into(),
            unavailable: false,
        }
    }
}

/// One verification key of the provider.
struct Key {
    decoding: DecodingKey,
    /// The algorithm the key is pinned to (its `alg`), if it names one.
    algorithm: Option<KeyAlgorithm>,
    curve: Option<EllipticCurve>,
    family: jsonwebtoken::AlgorithmFamily,
}

#[derive(Default)]
struct KeySet {
    by_kid: HashMap<String, Key>,
    /// Keys without a `kid`: tried for tokens that name none.
    unnamed: Vec<Key>,
}

/// Validates access tokens against one identity provider.
pub struct Verifier {
    options: OAuthOptions,
    jwks_uri: String,
    /// Where the provider signs people in and issues tokens, as its
    /// discovery document names them (the web app's sign-in uses them).
    pub(crate) endpoints: Endpoints,
    client: reqwest::Client,
    /// The keys held, swapped whole on each fetch (a verification holds
    /// its own reference, never the lock).
    keys: Mutex<Arc<KeySet>>,
    /// When the keys were last fetched (or a fetch last failed).
    fetched: Mutex<Instant>,
    /// One fetch of the key set at a time.
    fetching: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("issuer", &self.options.issuer)
            .field("resource", &self.options.resource)
            .finish_non_exhaustive()
    }
}

/// The provider's endpoints of the authorization code flow, from its
/// discovery document (each checked as the issuer is); None where the
/// document names none.
#[derive(Debug, Clone, Default)]
pub(crate) struct Endpoints {
    pub authorization: Option<String>,
    pub token: Option<String>,
    pub revocation: Option<String>,
}

/// The provider must be reached over HTTPS, except on this machine.
pub(crate) fn check_url(what: &str, text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| format!("{what} {text:?} is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(format!(
            "{what} {text:?} must use https (http only on this machine)"
        )),
    }
}

async fn fetch_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    json_body(url, response).await
}

/// The JSON body of a response of the provider, read up to
/// `MAX_DOCUMENT_BYTES`.
pub(crate) async fn json_body(url: &str, mut response: reqwest::Response) -> Result<Value, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading {url}: {e}"))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url} sent more than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} did not send JSON: {e}"))
}

/// The provider's signing keys, from a JWK set. Encryption keys, symmetric
/// keys and keys of kinds folio does not verify are left out.
fn keys_of(set: &Value) -> KeySet {
    let mut keys = KeySet::default();
    let listed = set.get("keys").and_then(Value::as_array);
    for entry in listed.into_iter().flatten() {
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
            continue;
        };
        if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
            continue;
        }
        let curve = match &jwk.algorithm {
            AlgorithmParameters::OctetKey(_) | AlgorithmParameters::Other(_) => continue,
            AlgorithmParameters::EllipticCurve(ec) => Some(ec.curve.clone()),
            AlgorithmParameters::OctetKeyPair(okp) => Some(okp.curve.clone()),
            AlgorithmParameters::RSA(_) => None,
            // Kinds a later jsonwebtoken may add: not verified until known.
            _ => continue,
        };
        let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let key = Key {
            family: decoding.family(),
            decoding,
            algorithm: jwk.common.key_algorithm,
            curve,
        };
        match jwk.common.key_id {
            Some(kid) => {
                keys.by_kid.insert(kid, key);
            }
            None => keys.unnamed.push(key),
        }
    }
    keys
}

/// Whether `key` may verify a token signed with `alg`.
fn key_fits(key: &Key, alg: Algorithm) -> bool {
    if key.family != alg.family() {
        return false;
    }
    if let Some(pinned) = key.algorithm
        && pinned != KeyAlgorithm::from(alg)
    {
        return false;
    }
    match (alg, &key.curve) {
        (Algorithm::ES256, Some(c)) => *c == EllipticCurve::P256,
        (Algorithm::ES384, Some(c)) => *c == EllipticCurve::P384,
        (Algorithm::EdDSA, Some(c)) => *c == EllipticCurve::Ed25519,
        _ => true,
    }
}

/// The strings of a claim: a space-separated string or an array of strings.
fn strings(claim: Option<&Value>) -> Vec<String> {
    match claim {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

impl Verifier {
    /// Reads the provider's discovery document (OpenID Connect's, else RFC
    /// 8414's), checks that it names the configured issuer, and fetches its
    /// key set: a misconfigured issuer fails here, at start-up.
    pub async fn discover(options: OAuthOptions) -> Result<Self, String> {
        let issuer = check_url("the issuer", &options.issuer)?;
        check_url("the resource", &options.resource)?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        let base = options.issuer.trim_end_matches('/');
        // RFC 8414 inserts the well-known segment before the issuer's path.
        let path = issuer.path().trim_end_matches('/');
        let origin = issuer.origin().ascii_serialization();
        let candidates = [
            format!("{base}/.well-known/openid-configuration"),
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
        ];
        let mut failures = Vec::new();
        let mut document = None;
        for url in &candidates {
            match fetch_json(&client, url).await {
                Ok(d) => {
                    document = Some(d);
                    break;
                }
                Err(e) => failures.push(e),
            }
        }
        let document = document.ok_or_else(|| {
            format!(
                "no discovery document for the issuer {}: {}",
                options.issuer,
                failures.join("; ")
            )
        })?;
        let named = document.get("issuer").and_then(Value::as_str);
        if named != Some(options.issuer.as_str()) {
            return Err(format!(
                "the discovery document names the issuer {named:?}, not {:?}",
                options.issuer
            ));
        }
        let jwks_uri = document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or("the discovery document names no jwks_uri")?
            .to_string();
        check_url("the jwks_uri", &jwks_uri)?;
        let endpoint = |name: &str| -> Result<Option<String>, String> {
            match document.get(name).and_then(Value::as_str) {
                None => Ok(None),
                Some(url) => check_url(&format!("the {name}"), url).map(|_| Some(url.to_string())),
            }
        };
        let endpoints = Endpoints {
            authorization: endpoint("authorization_endpoint")?,
            token: endpoint("token_endpoint")?,
            revocation: endpoint("revocation_endpoint")?,
        };
        let set = fetch_json(&client, &jwks_uri).await?;
        let keys = keys_of(&set);
        if keys.by_kid.is_empty() && keys.unnamed.is_empty() {
            return Err(format!("{jwks_uri} lists no signing key folio can verify"));
        }
        Ok(Verifier {
            options,
            jwks_uri,
            endpoints,
            client,
            keys: Mutex::new(Arc::new(keys)),
            fetched: Mutex::new(Instant::now()),
            fetching: tokio::sync::Mutex::new(()),
        })
    }

    /// Fetches the key set again unless it was fetched within `fresh` (or
    /// another request is fetching it: then waits for that one). A failed
    /// fetch keeps the keys held.
    async fn refresh(&self, fresh: Duration) -> Result<(), Refusal> {
        let _one = self.fetching.lock().await;
        if self.age() < fresh {
            return Ok(());
        }
        match fetch_json(&self.client, &self.jwks_uri).await {
            Ok(set) => {
                let keys = Arc::new(keys_of(&set));
                *self.keys.lock().unwrap_or_else(|p| p.into_inner()) = keys;
                *self.fetched.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                Ok(())
            }
            Err(e) => {
                tracing::warn!("fetching the identity provider's keys failed: {e}");
                // Try again no sooner than a refetch would.
                *self.fetched.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                Err(Refusal {
                    reason: "provider unreachable",
                    message: "the identity provider's keys could not be fetched".into(),
                    unavailable: true,
                })
            }
        }
    }

    fn age(&self) -> Duration {
        self.fetched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }

    /// Checks the signature and claims of `token` with the held keys; None
    /// when no held key is named by it (`kid`) and fits its algorithm.
    fn check(
        &self,
        token: &str,
        header: &jsonwebtoken::Header,
    ) -> Option<Result<Map<String, Value>, ErrorKind>> {
        let keys = self.keys.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let candidates: Vec<&Key> = match &header.kid {
            Some(kid) => keys.by_kid.get(kid).into_iter().collect(),
            None => keys.unnamed.iter().collect(),
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.options.issuer]);
        validation.set_audience(&[&self.options.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.options.leeway.as_secs();
        // Several keys without a kid may fit: the token is the one whose
        // signature verifies.
        let mut answer = None;
        for key in candidates.into_iter().filter(|k| key_fits(k, header.alg)) {
            let checked =
                jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation)
                    .map(|data| data.claims)
                    .map_err(|e| e.into_kind());
            let bad_signature = matches!(checked, Err(ErrorKind::InvalidSignature));
            answer = Some(checked);
            if !bad_signature {
                break;
            }
        }
        answer
    }

    /// The caller a token stands for, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Refusal::invalid(
                "malformed",
                "the access token is too large",
            ));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
            ErrorKind::Json(_) => Refusal::invalid(
                "algorithm",
                "the access token's header is not a JWS header with an allowed algorithm",
            ),
            _ => Refusal::invalid("malformed", "the access token is not a JWT"),
        })?;
        if !ALLOWED.contains(&header.alg) {
            return Err(Refusal::invalid(
                "algorithm",
                format!(
                    "the access token is signed with {:?}, which folio does not accept",
                    header.alg
                ),
            ));
        }
        if self.age() >= MAX_AGE {
            // Keys held stay in use when the provider cannot be reached.
            let _ = self.refresh(MAX_AGE).await;
        }
        let checked = match self.check(token, &header) {
            Some(checked) => checked,
            None => {
                self.refresh(REFETCH_AFTER).await?;
                self.check(token, &header).ok_or_else(|| {
                    Refusal::invalid(
                        "unknown key",
                        "the access token is signed with a key the identity provider does not list",
                    )
                })?
            }
        };
        let claims = checked.map_err(|kind| match kind {
            ErrorKind::ExpiredSignature => {
                Refusal::invalid("expired", "the access token has expired")
            }
            ErrorKind::ImmatureSignature => {
                Refusal::invalid("not yet valid", "the access token is not valid yet")
            }
            ErrorKind::InvalidAudience => Refusal::invalid(
                "audience",
                "the access token was issued for another resource",
            ),
            ErrorKind::InvalidIssuer => Refusal::invalid(
                "issuer",
                "the access token was issued by another identity provider",
            ),
            ErrorKind::MissingRequiredClaim(claim) => {
                Refusal::invalid("claims", format!("the access token has no {claim} claim"))
            }
            ErrorKind::InvalidSignature => {
                Refusal::invalid("signature", "the access token's signature does not verify")
            }
            _ => Refusal::invalid("malformed", "the access token is not valid"),
        })?;
        self.principal(&claims)
    }

    fn principal(&self, claims: &Map<String, Value>) -> Result<Principal, Refusal> {
        let options = &self.options;
        let name = claims
            .get(&options.name_claim)
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| {
                Refusal::invalid(
                    "claims",
                    format!("the access token has no {} claim", options.name_claim),
                )
            })?;
        let scopes: BTreeSet<Scope> = strings(claims.get(&options.scope_claim))
            .iter()
            .filter_map(|s| s.strip_prefix(options.scope_prefix.as_str()))
            .filter_map(|s| Scope::ALL.into_iter().find(|scope| scope.as_str() == s))
            .collect();
        let libraries = match &options.libraries_claim {
            None => None,
            Some(claim) => {
                let listed = strings(claims.get(claim));
                if listed.iter().any(|l| l == "*") {
                    None
                } else {
                    Some(
                        listed
                            .iter()
                            .filter_map(|l| LibraryName::new(l).ok())
                            .collect(),
                    )
                }
            }
        };
        // A session is bound to the token's issuer and subject (the name
        // claim when a provider sends no subject).
        let subject = claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_string();
        Ok(Principal {
            name: name.to_string(),
            credential: Credential::Token {
                issuer: options.issuer.clone(),
                subject,
            },
            scopes,
            libraries,
            rate_per_minute: None,
        })
    }

    /// The provider's issuer identifier (`--issuer`).
    pub(crate) fn issuer(&self) -> &str {
        &self.options.issuer
    }

    /// The resource identifier tokens must name (`--resource`).
    pub(crate) fn resource(&self) -> &str {
        &self.options.resource
    }

    /// How a scope is spelled in tokens and challenges.
    pub fn scope_name(&self, scope: Scope) -> String {
        format!("{}{}", self.options.scope_prefix, scope.as_str())
    }

    /// Where the Protected Resource Metadata is served: RFC 9728 inserts
    /// the well-known segment between the resource's host and its path.
    pub fn metadata_url(&self) -> String {
        match url::Url::parse(&self.options.resource) {
            Ok(url) => {
                let path = url.path().trim_end_matches('/');
                format!(
                    "{}/.well-known/oauth-protected-resource{path}",
                    url.origin().ascii_serialization()
                )
            }
            Err(_) => String::new(),
        }
    }

    /// The Protected Resource Metadata document (RFC 9728).
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.options.resource,
            "authorization_servers": [self.options.issuer],
            "scopes_supported": Scope::ALL.map(|s| self.scope_name(s)),
            "bearer_methods_supported": ["header"],
            "resource_name": "folio",
        })
    }

    /// The `WWW-Authenticate` value of a refusal: 401 without a token
    /// (the scope to ask for), 401 `invalid_token`, or 403
    /// `insufficient_scope` with every scope the request needs.
    pub fn challenge(&self, error: Option<(&str, &str)>, scopes: &[Scope]) -> String {
        let mut parts = Vec::new();
        if let Some((code, description)) = error {
            parts.push(format!("error=\"{code}\""));
            parts.push(format!(
                "error_description=\"{}\"",
                description.replace(['"', '\\'], "'")
            ));
        }
        if !scopes.is_empty() {
            let names: Vec<String> = scopes.iter().map(|s| self.scope_name(*s)).collect();
            parts.push(format!("scope=\"{}\"", names.join(" ")));
        }
        parts.push(format!("resource_metadata=\"{}\"", self.metadata_url()));
        format!("Bearer {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_read_as_strings_or_arrays() {
        assert_eq!(
            strings(Some(&json!("search  ingest"))),
            vec!["search", "ingest"]
        );
        assert_eq!(
            strings(Some(&json!(["search", 3, "admin"]))),
            vec!["search", "admin"]
        );
        assert!(strings(Some(&json!(7))).is_empty());
        assert!(strings(None).is_empty());
    }

    #[test]
    fn only_https_reaches_the_provider_except_on_this_machine() {
        assert!(check_url("the issuer", "https://idp.example.org").is_ok());
        assert!(check_url("the issuer", "http://127.0.0.1:9000").is_ok());
        assert!(check_url("the issuer", "http://localhost:9000/realm").is_ok());
        assert!(check_url("the issuer", "http://idp.example.org").is_err());
        assert!(check_url("the issuer", "ftp://127.0.0.1").is_err());
        assert!(check_url("the issuer", "not a url").is_err());
    }

    fn rsa_key(algorithm: Option<KeyAlgorithm>) -> Key {
        Key {
            decoding: DecodingKey::from_rsa_raw_components(&[1, 2, 3], &[1, 0, 1]),
            algorithm,
            curve: None,
            family: jsonwebtoken::AlgorithmFamily::Rsa,
        }
    }

    #[test]
    fn a_key_verifies_only_its_own_family_and_pinned_algorithm() {
        let any_rsa = rsa_key(None);
        assert!(key_fits(&any_rsa, Algorithm::RS256));
        assert!(key_fits(&any_rsa, Algorithm::PS512));
        assert!(!key_fits(&any_rsa, Algorithm::HS256));
        assert!(!key_fits(&any_rsa, Algorithm::ES256));
        let pinned = rsa_key(Some(KeyAlgorithm::RS256));
        assert!(key_fits(&pinned, Algorithm::RS256));
        assert!(!key_fits(&pinned, Algorithm::RS512));
        assert!(
            !ALLOWED
                .iter()
                .any(|a| a.family() == jsonwebtoken::AlgorithmFamily::Hmac)
        );
    }

    #[test]
    fn symmetric_and_encryption_keys_are_never_held() {
        let set = json!({"keys": [
            {"kty": "oct", "kid": "s", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"},
            {"kty": "RSA", "kid": "sig", "use": "sig", "alg": "RS256", "n": "AQAB", "e": "AQAB"},
            {"kty": "weird", "kid": "w"},
        ]});
        let keys = keys_of(&set);
        assert_eq!(keys.by_kid.keys().collect::<Vec<_>>(), vec!["sig"]);
        assert!(keys.unnamed.is_empty());
    }
}
