//! What one MCP session asks of the server beyond single requests: the log
//! messages it hears (`logging/setLevel`) and the resources it follows
//! (`resources/subscribe` of the 2025 revisions, `subscriptions/listen` of
//! the 2026 one).
//!
//! A followed resource is checked whenever the store's write generation
//! moves (any write, by any process on the same data), at most once a
//! second: its fingerprint is taken as its subscriber may read it, and a
//! change is told as `notifications/resources/updated`. A resource its
//! subscriber may not read, or that does not exist, has no fingerprint: the
//! subscription answers the same either way (no probe of what exists), and
//! is told when the resource appears. A subscriber whose key is revoked
//! loses its subscriptions.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use folio_core::LibraryName;
use folio_engine::Engine;
use folio_engine::keys::{Credential, Principal, Scope};
use rmcp::RoleServer;
use rmcp::service::Peer;
use tokio::sync::broadcast::error::RecvError;

use crate::ops::events::{self, LogEvent};
use crate::ops::{self, DEFAULT_LEVEL, Shared, hears, log_message};

/// How often followed resources are checked (when the store was written).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// One session's standing requests.
pub struct Session {
    /// The least severity the session hears, shared with its calls.
    pub level: Arc<AtomicU8>,
    /// Who the session's standing notifications are for (the caller of its
    /// latest `initialized`, `logging/setLevel` or subscription): news of a
    /// library goes only to a caller who may read it. None inside: the local
    /// user or an open server.
    principal: Mutex<Option<Principal>>,
    /// Whether the session asked for the server's log messages (set a
    /// level); before, only its own calls' messages reach it.
    logging: AtomicBool,
    /// The resources followed through `resources/subscribe`.
    pub followed: Followed,
    /// Whether the session's follower task runs.
    following: AtomicBool,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            level: Arc::new(AtomicU8::new(DEFAULT_LEVEL as u8)),
            principal: Mutex::new(None),
            logging: AtomicBool::new(false),
            followed: Followed::default(),
            following: AtomicBool::new(false),
        }
    }
}

impl Session {
    /// Records who the session's standing notifications are for.
    pub fn heard_by(&self, principal: Option<Principal>) {
        *self.principal.lock().unwrap_or_else(|p| p.into_inner()) = principal;
    }

    /// Records the level `principal` set.
    pub fn set_level(&self, level: events::Severity, principal: Option<Principal>) {
        self.level.store(level as u8, Ordering::Relaxed);
        self.logging.store(true, Ordering::Relaxed);
        self.heard_by(principal);
    }

    /// Whether the session's caller may hear news of `library`.
    fn may_hear_of(&self, library: &str) -> bool {
        let principal = self.principal.lock().unwrap_or_else(|p| p.into_inner());
        may_hear_of(principal.as_ref(), library)
    }

    /// Whether the session hears `event`: it asked for the server's log, at
    /// a level `event` reaches, and may read the library it is about.
    fn hears(&self, event: &LogEvent) -> bool {
        self.logging.load(Ordering::Relaxed)
            && hears(&self.level, event.severity)
            && self.may_hear_of(&event.library)
    }

    /// Starts the session's follower once: it forwards server-wide log
    /// messages, tells followed resources' changes and, on a server that
    /// watches folders, each pass that changed a library
    /// (`notifications/resources/list_changed`), until the transport closes.
    pub fn follow(self: &Arc<Self>, shared: Arc<Shared>, peer: Peer<RoleServer>) {
        if self.following.swap(true, Ordering::SeqCst) {
            return;
        }
        let session = self.clone();
        tokio::spawn(async move {
            let mut logs = events::listen();
            let watching = ops::watch::active();
            let mut changes = ops::watch::changes();
            let mut check = tokio::time::interval(CHECK_EVERY);
            check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    event = logs.recv() => match event {
                        Ok(event) if session.hears(&event) => {
                            #[allow(deprecated)]
                            let sent = peer
                                .notify_logging_message(log_message(event.severity, event.data))
                                .await;
                            if sent.is_err() {
                                return;
                            }
                        }
                        Ok(_) | Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => return,
                    },
                    change = changes.recv(), if watching => {
                        let tell = match change {
                            Ok(library) => session.may_hear_of(&library),
                            Err(RecvError::Lagged(_)) => true,
                            Err(RecvError::Closed) => return,
                        };
                        if tell && peer.notify_resource_list_changed().await.is_err() {
                            return;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            return;
                        }
                        for uri in session.followed.changed(&shared).await {
                            let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                            #[allow(deprecated)]
                            let sent = peer.notify_resource_updated(param).await;
                            if sent.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
    }
}

/// Whether `caller` (None: the local user or an open server) may hear news
/// of `library`: it may read it (the search scope, and the library among
/// its own).
pub fn may_hear_of(caller: Option<&Principal>, library: &str) -> bool {
    caller.is_none_or(|p| {
        p.may(Scope::Search) && LibraryName::new(library).is_ok_and(|library| p.may_touch(&library))
    })
}

/// Followed resources, each with its subscriber and its fingerprint when
/// last checked.
#[derive(Default)]
pub struct Followed {
    entries: tokio::sync::Mutex<FollowedState>,
}

#[derive(Default)]
struct FollowedState {
    resources: BTreeMap<String, Entry>,
    /// The store's write generation when last checked.
    generation: Option<u64>,
}

struct Entry {
    subscriber: Option<Principal>,
    fingerprint: Option<u64>,
}

impl Followed {
    /// Follows `uri` for `subscriber` (again: the subscriber is replaced).
    pub async fn add(&self, shared: &Shared, uri: String, subscriber: Option<Principal>) {
        let engine = shared.engine.clone();
        let (checked_uri, checked_subscriber) = (uri.clone(), subscriber.clone());
        let fingerprint = tokio::task::spawn_blocking(move || {
            fingerprint(&engine, &checked_uri, checked_subscriber.as_ref())
        })
        .await
        .unwrap_or(None);
        self.entries.lock().await.resources.insert(
            uri,
            Entry {
                subscriber,
                fingerprint,
            },
        );
    }

    /// Stops following `uri`.
    pub async fn remove(&self, uri: &str) {
        self.entries.lock().await.resources.remove(uri);
    }

    /// The followed resources whose fingerprint changed since the last
    /// check (nothing is read while the store's generation stands still).
    /// A subscriber whose key no longer authenticates loses its entries.
    pub async fn changed(&self, shared: &Shared) -> Vec<String> {
        let mut state = self.entries.lock().await;
        if state.resources.is_empty() {
            state.generation = None;
            return Vec::new();
        }
        let engine = shared.engine.clone();
        let watched: Vec<(String, Option<Principal>, Option<u64>)> = state
            .resources
            .iter()
            .map(|(uri, e)| (uri.clone(), e.subscriber.clone(), e.fingerprint))
            .collect();
        let known = state.generation;
        let checked = tokio::task::spawn_blocking(move || {
            let generation = engine.store().generation().ok().flatten();
            if generation.is_some() && generation == known {
                return (generation, Vec::new());
            }
            let fresh = watched
                .into_iter()
                .map(|(uri, subscriber, before)| {
                    let revoked = subscriber.as_ref().is_some_and(|p| match &p.credential {
                        Credential::Key { hash } => engine.recheck_key(hash).is_err(),
                        Credential::Token { .. } => false,
                    });
                    let now = (!revoked)
                        .then(|| fingerprint(&engine, &uri, subscriber.as_ref()))
                        .flatten();
                    (uri, revoked, before, now)
                })
                .collect();
            (generation, fresh)
        })
        .await;
        let Ok((generation, fresh)) = checked else {
            return Vec::new();
        };
        state.generation = generation;
        let mut changed = Vec::new();
        for (uri, revoked, before, now) in fresh {
            if revoked {
                state.resources.remove(&uri);
                continue;
            }
            if before != now {
                if let Some(entry) = state.resources.get_mut(&uri) {
                    entry.fingerprint = now;
                }
                changed.push(uri);
            }
        }
        changed
    }
}

/// A hash of what the resource `uri` holds as `reader` may read it; None
/// when it does not exist or the reader may not read it.
fn fingerprint(engine: &Engine, uri: &str, reader: Option<&Principal>) -> Option<u64> {
    let may_read = |library: &LibraryName| reader.is_none_or(|p| p.may_touch(library));
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    if let Some(rest) = uri.strip_prefix("folio://document/") {
        // A page image changes with its document.
        let id = rest.split('/').next().unwrap_or(rest);
        let document = engine.document(id).ok()?;
        if !may_read(&document.library) {
            return None;
        }
        (
            document.content_hash,
            document.ingested_at,
            document.title,
            document.chunk_count,
        )
            .hash(&mut hasher);
        return Some(hasher.finish());
    }
    let library = uri
        .strip_prefix("folio://library/")
        .or_else(|| uri.strip_prefix("folio://entity/"))
        .map(|rest| rest.split('/').next().unwrap_or(rest))?;
    let library = LibraryName::new(library).ok()?;
    if !may_read(&library) {
        return None;
    }
    let info = engine.library(&library).ok()?;
    (info.document_count, info.chunk_count).hash(&mut hasher);
    // Every document's identity and content, a page at a time: a replaced
    // document changes the library though its counts stay.
    let mut offset = 0;
    loop {
        let (page, _) = engine.documents(&library, offset, 1000).ok()?;
        for d in &page {
            (d.id.to_string(), &d.content_hash, &d.ingested_at, &d.title).hash(&mut hasher);
        }
        if page.len() < 1000 {
            break;
        }
        offset += 1000;
    }
    if uri.starts_with("folio://entity/") {
        engine
            .store()
            .declared_entities(&library)
            .ok()
            .map(|declared| format!("{declared:?}"))
            .hash(&mut hasher);
    }
    Some(hasher.finish())
}
