//! Access keys: who may call a shared server, with which scopes, on which
//! libraries, how often. A key is `folio_` followed by 64 hex digits (256
//! random bits); the store keeps its SHA-256 only, so every server of one
//! store shares the keys and a copied database reveals none. A key is
//! found by its hash (an index lookup: the time taken depends on the hash,
//! never on how much of a guess matched) and the hash is compared again in
//! constant time. Lookups are cached for `RECHECK`, so a revocation holds
//! on every server within that time. A key's last use is recorded off the
//! request, so presenting a key never waits for the write lock.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use folio_core::{ErrorCode, LibraryName};
use folio_store::KeyRecord;
use sha2::{Digest, Sha256};

use crate::timestamp::{parse_rfc3339, rfc3339};
use crate::{Engine, EngineError, Result};

/// What a key starts with.
pub const KEY_PREFIX: &str = "folio_";

/// How long a key lookup is trusted before the store is asked again: the
/// longest a revoked key keeps working on a server that just used it.
pub const RECHECK: Duration = Duration::from_secs(2);

/// The longest lifetime a key may be given (a hundred years): longer is
/// refused rather than overflowing the clock.
pub const MAX_LIFETIME: Duration = Duration::from_secs(36_525 * 86_400);

/// How often a key's last use is written back (a key used all day is one
/// write a minute, not one per call).
const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// Lookups remembered at most; beyond this the cache starts afresh (a flood
/// of made-up keys cannot grow it without bound).
const CACHE_LIMIT: usize = 10_000;

/// What a key lets its holder do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Every tool and route that only reads.
    Search,
    /// Writes within the key's libraries: ingesting, storing chunks,
    /// deleting documents.
    Ingest,
    /// Deleting libraries, declaring schemas, managing keys.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Search, Scope::Ingest, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Search => "search",
            Scope::Ingest => "ingest",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Result<Scope> {
        Scope::ALL
            .into_iter()
            .find(|s| s.as_str() == text.trim())
            .ok_or_else(|| {
                EngineError::invalid(format!(
                    "unknown scope {:?} (search, ingest or admin)",
                    text.trim()
                ))
            })
    }
}

/// The credential a principal presented, as far as a server may keep it:
/// what a session is bound to, never a name (a revoked key's name can be
/// given to a new key with other rights).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Credential {
    /// An access key, by its SHA-256.
    Key { hash: String },
    /// An identity provider's access token, by its issuer and subject.
    Token { issuer: String, subject: String },
}

/// Who is calling, once their key is accepted: what audit lines and
/// refusals name, and what they may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The key's name (never the key).
    pub name: String,
    /// What was presented: the identity a session is bound to.
    pub credential: Credential,
    pub scopes: BTreeSet<Scope>,
    /// None: every library.
    pub libraries: Option<BTreeSet<LibraryName>>,
    /// Calls per minute; None: the server's default.
    pub rate_per_minute: Option<u32>,
}

impl Principal {
    /// Whether the principal holds `scope`.
    pub fn may(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }

    /// Whether the principal may touch `library`.
    pub fn may_touch(&self, library: &LibraryName) -> bool {
        self.libraries
            .as_ref()
            .is_none_or(|allowed| allowed.contains(library))
    }

    /// `Forbidden` unless the principal holds `scope`.
    pub fn require(&self, scope: Scope, what: &str) -> Result<()> {
        if self.may(scope) {
            return Ok(());
        }
        Err(EngineError::new(
            ErrorCode::Forbidden,
            format!(
                "the caller {:?} lacks the {} scope that {what} needs",
                self.name,
                scope.as_str()
            ),
        )
        .with_details(serde_json::json!({"required_scope": scope.as_str()})))
    }

    /// `Forbidden` unless the principal may touch `library`. The refusal
    /// reads the same whether the library exists or not.
    pub fn require_library(&self, library: &LibraryName) -> Result<()> {
        if self.may_touch(library) {
            return Ok(());
        }
        Err(EngineError::new(
            ErrorCode::Forbidden,
            format!("the caller {:?} may not use library {library}", self.name),
        ))
    }
}

/// A key to create.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub name: String,
    pub scopes: BTreeSet<Scope>,
    /// None: every library.
    pub libraries: Option<BTreeSet<LibraryName>>,
    /// None: never expires.
    pub expires_in: Option<Duration>,
    pub rate_per_minute: Option<u32>,
}

/// The SHA-256 of a key, as the store keeps it.
pub fn key_hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Compares without leaking the position of the first difference.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

/// The hash of a presented key that has a key's form; `Unauthorized`
/// otherwise.
fn well_formed(presented: &str) -> Result<String> {
    let presented = presented.trim();
    let well_formed = presented
        .strip_prefix(KEY_PREFIX)
        .is_some_and(|rest| rest.len() == 64 && rest.bytes().all(|b| b.is_ascii_hexdigit()));
    if !well_formed {
        return Err(unauthorized("not a folio key"));
    }
    Ok(key_hash(presented))
}

fn unauthorized(message: &str) -> EngineError {
    EngineError::new(ErrorCode::Unauthorized, message)
}

/// Key lookups of one engine: by hash, when looked up, and when last
/// written back as used.
#[derive(Default)]
pub(crate) struct KeyCache {
    entries: Mutex<HashMap<String, (Instant, Option<KeyRecord>)>>,
    touched: Mutex<HashMap<String, Instant>>,
}

impl Engine {
    /// Creates a key: the key itself, shown once and kept nowhere, and its
    /// record.
    pub fn create_key(&self, key: &NewKey) -> Result<(String, KeyRecord)> {
        self.writable("creating a key")?;
        if !valid_name(&key.name) {
            return Err(EngineError::invalid(format!(
                "a key name is 1 to 64 letters, digits, '.', '_', '-' or '@' (got {:?})",
                key.name
            )));
        }
        if key.scopes.is_empty() {
            return Err(EngineError::invalid(
                "a key needs at least one scope (search, ingest, admin)",
            ));
        }
        if key.expires_in.is_some_and(|d| d > MAX_LIFETIME) {
            return Err(EngineError::invalid(format!(
                "a key lives at most {} days",
                MAX_LIFETIME.as_secs() / 86_400
            )));
        }
        if key.rate_per_minute == Some(0) {
            return Err(EngineError::invalid("a rate is at least 1 call a minute"));
        }
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| {
            EngineError::new(ErrorCode::Internal, format!("no randomness for a key: {e}"))
        })?;
        let token = format!("{KEY_PREFIX}{}", hex::encode(secret));
        let now = self.clock.now();
        let record = KeyRecord {
            name: key.name.clone(),
            hash: key_hash(&token),
            scopes: key.scopes.iter().map(|s| s.as_str().to_string()).collect(),
            libraries: key
                .libraries
                .as_ref()
                .map(|l| l.iter().map(|l| l.to_string()).collect()),
            expires_at: key.expires_in.map(|d| rfc3339(now + d)),
            rate_per_minute: key.rate_per_minute,
            created_at: rfc3339(now),
            last_used_at: None,
        };
        self.store.put_key(&record)?;
        Ok((token, record))
    }

    /// Every key, by name.
    pub fn keys(&self) -> Result<Vec<KeyRecord>> {
        Ok(self.store.keys()?)
    }

    /// Revokes the key named `name`: every server refuses it within
    /// `RECHECK`.
    pub fn revoke_key(&self, name: &str) -> Result<()> {
        self.writable("revoking a key")?;
        if !self.store.delete_key(name)? {
            return Err(EngineError::new(
                ErrorCode::NotFound,
                format!("no key named {name:?}"),
            ));
        }
        self.keys
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        Ok(())
    }

    /// The principal a presented key stands for; `Unauthorized` for a
    /// malformed, unknown, revoked or expired key (the message never
    /// repeats the key). May read the store: call it off the async threads.
    pub fn authenticate(&self, presented: &str) -> Result<Principal> {
        let hash = well_formed(presented)?;
        let record = self.key_record(&hash)?;
        let now = self.clock.now();
        let principal = self.accept(record, &hash, now)?;
        self.touch(&hash, now);
        Ok(principal)
    }

    /// The principal of the key whose hash is `hash`, checked again (a
    /// session's credential, while the session lasts): `Unauthorized` once
    /// the key is revoked or expired. Answered from the lookup cache while
    /// fresh, so a revocation ends a session within `RECHECK`.
    pub fn recheck_key(&self, hash: &str) -> Result<Principal> {
        let record = self.key_record(hash)?;
        self.accept(record, hash, self.clock.now())
    }

    /// `authenticate` answered from memory alone: for a key looked up
    /// within `RECHECK` whose last use needs no writing back. None when the
    /// store must be asked (then call `authenticate`).
    pub fn authenticate_cached(&self, presented: &str) -> Option<Result<Principal>> {
        let hash = match well_formed(presented) {
            Ok(hash) => hash,
            Err(e) => return Some(Err(e)),
        };
        let record = self.cached_record(&hash)?;
        if !self.read_only()
            && self
                .keys
                .touched
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&hash)
                .is_none_or(|at| at.elapsed() >= TOUCH_EVERY)
        {
            return None;
        }
        Some(self.accept(record, &hash, self.clock.now()))
    }

    /// The principal of `record`, the stored key whose hash is `hash`, if
    /// it is there and unexpired at `now`.
    fn accept(&self, record: Option<KeyRecord>, hash: &str, now: SystemTime) -> Result<Principal> {
        let Some(record) = record.filter(|r| same_secret(r.hash.as_bytes(), hash.as_bytes()))
        else {
            return Err(unauthorized("unknown or revoked key"));
        };
        // Compared as times (a year past 9999 sorts before today as text);
        // an expiry that does not read as a time has passed.
        if record
            .expires_at
            .as_deref()
            .is_some_and(|expiry| parse_rfc3339(expiry).is_none_or(|at| at <= now))
        {
            return Err(unauthorized("the key has expired"));
        }
        principal(&record)
    }

    /// The cached lookup of `hash`, while fresh.
    fn cached_record(&self, hash: &str) -> Option<Option<KeyRecord>> {
        self.keys
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(hash)
            .filter(|(at, _)| at.elapsed() < RECHECK)
            .map(|(_, record)| record.clone())
    }

    /// The record with `hash`, from the cache while fresh.
    fn key_record(&self, hash: &str) -> Result<Option<KeyRecord>> {
        if let Some(record) = self.cached_record(hash) {
            return Ok(record);
        }
        let record = self.store.key_by_hash(hash)?;
        let mut entries = self.keys.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= CACHE_LIMIT {
            entries.clear();
        }
        entries.insert(hash.to_string(), (Instant::now(), record.clone()));
        Ok(record)
    }

    /// Writes the key's last use back, at most once per `TOUCH_EVERY`, on a
    /// writable engine, on a thread of its own: the request that presented
    /// the key never waits for the write lock (another process may hold it
    /// for a long write). Best effort: a failure is logged, never the
    /// caller's, and the next use a minute later writes again.
    fn touch(&self, hash: &str, now: SystemTime) {
        if self.read_only() {
            return;
        }
        {
            let mut touched = self.keys.touched.lock().unwrap_or_else(|p| p.into_inner());
            if touched
                .get(hash)
                .is_some_and(|at| at.elapsed() < TOUCH_EVERY)
            {
                return;
            }
            if touched.len() >= CACHE_LIMIT {
                touched.clear();
            }
            touched.insert(hash.to_string(), Instant::now());
        }
        let store = self.store.clone();
        let (hash, at) = (hash.to_string(), rfc3339(now));
        let spawned = std::thread::Builder::new()
            .name("key use".into())
            .spawn(move || {
                if let Err(e) = store.touch_key(&hash, &at) {
                    tracing::warn!("recording a key's use failed: {e}");
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("recording a key's use failed: {e}");
        }
    }
}

/// The principal of a stored key.
fn principal(record: &KeyRecord) -> Result<Principal> {
    let scopes = record
        .scopes
        .iter()
        .map(|s| Scope::parse(s))
        .collect::<Result<BTreeSet<_>>>()?;
    let libraries = record
        .libraries
        .as_ref()
        .map(|names| {
            names
                .iter()
                .map(|n| LibraryName::new(n).map_err(EngineError::from))
                .collect::<Result<BTreeSet<_>>>()
        })
        .transpose()?;
    Ok(Principal {
        name: record.name.clone(),
        credential: Credential::Key {
            hash: record.hash.clone(),
        },
        scopes,
        libraries,
        rate_per_minute: record.rate_per_minute,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }

    #[test]
    fn principals_are_held_to_their_scopes_and_libraries() {
        let wiki = LibraryName::new("wiki").unwrap();
        let other = LibraryName::new("hr").unwrap();
        let intern = Principal {
            name: "intern".into(),
            credential: Credential::Key {
                hash: key_hash("intern"),
            },
            scopes: [Scope::Search].into(),
            libraries: Some([wiki.clone()].into()),
            rate_per_minute: None,
        };
        assert!(intern.require(Scope::Search, "search").is_ok());
        let refused = intern.require(Scope::Ingest, "ingest").unwrap_err();
        assert_eq!(refused.code, ErrorCode::Forbidden);
        assert!(refused.message.contains("ingest scope"));
        assert!(intern.require_library(&wiki).is_ok());
        assert_eq!(
            intern.require_library(&other).unwrap_err().code,
            ErrorCode::Forbidden
        );
        let lead = Principal {
            libraries: None,
            ..intern
        };
        assert!(lead.require_library(&other).is_ok());
        assert!(Scope::parse("admin").is_ok() && Scope::parse("root").is_err());
    }
}
