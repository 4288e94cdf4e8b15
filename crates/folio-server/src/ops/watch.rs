//! The server's folder watches (`folio serve --watch FOLDER=LIBRARY`,
//! `[[watch]]` in the configuration): the process that holds the engine (the
//! owner of an embedded data directory, or any process on PostgreSQL) runs
//! one thread per folder, each a `folio_engine::Engine::watch` loop, while
//! agents search; `server_info` reports each watch's state.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use folio_engine::Engine;
use folio_engine::sync::{SyncRequest, WatchOptions};
use schemars::JsonSchema;
use serde::Serialize;

use serde_json::json;

use super::events::{self, Severity};
use crate::options::WatchSpec;

// A watch as server_info reports it (no doc comment: it would enter the
// tools' output schemas).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WatchState {
    pub folder: String,
    pub library: String,
    /// starting, watching, polling (the folder cannot be watched for
    /// events, last_error says why: it is rescanned on a schedule),
    /// standby (another process on the same database applies this
    /// folder's changes; this one takes over if it stops), or suspended
    /// (the folder is missing: nothing is removed until it is back).
    pub state: String,
    pub passes: u64,
    /// Documents added, replaced, moved or removed so far.
    pub changes: u64,
    /// When the last pass that changed something ended (RFC 3339).
    pub last_change_at: Option<String>,
    /// Files that cannot be indexed, with why: the last pass's failures,
    /// and earlier ones not read again since (they have not changed).
    pub failing: Vec<String>,
    pub last_error: Option<String>,
}

/// The watches of this process.
static WATCHES: OnceLock<Vec<Arc<Mutex<WatchState>>>> = OnceLock::new();

/// Told the library of each pass that changed one (for
/// `notifications/resources/list_changed`).
static CHANGES: OnceLock<tokio::sync::broadcast::Sender<String>> = OnceLock::new();

fn changes_sender() -> &'static tokio::sync::broadcast::Sender<String> {
    CHANGES.get_or_init(|| tokio::sync::broadcast::channel(16).0)
}

/// Whether this process watches folders.
pub fn active() -> bool {
    WATCHES.get().is_some_and(|w| !w.is_empty())
}

/// Hears the library of each pass that changed one.
pub fn changes() -> tokio::sync::broadcast::Receiver<String> {
    changes_sender().subscribe()
}

/// Starts a thread per folder (once per process; later calls change
/// nothing). Returns at once; the threads live as long as the process.
pub fn start(engine: Arc<Engine>, specs: &[WatchSpec]) {
    if specs.is_empty() {
        return;
    }
    WATCHES.get_or_init(|| {
        specs
            .iter()
            .filter_map(|spec| {
                let library = folio_core::LibraryName::new(&spec.library).ok()?;
                let state = Arc::new(Mutex::new(WatchState {
                    folder: spec.folder.display().to_string(),
                    library: spec.library.clone(),
                    state: "starting".into(),
                    passes: 0,
                    changes: 0,
                    last_change_at: None,
                    failing: Vec::new(),
                    last_error: None,
                }));
                let mut request = SyncRequest::new(library, spec.folder.clone());
                request.exclude = spec.exclude.clone();
                request.archives = spec.archives;
                request.settle = Duration::from_millis(500);
                let options = WatchOptions {
                    rescan: spec.rescan,
                    ..WatchOptions::default()
                };
                let engine = engine.clone();
                let shown = state.clone();
                std::thread::Builder::new()
                    .name(format!("watch {}", spec.library))
                    .spawn(move || {
                        let stop = AtomicBool::new(false);
                        let result = engine.watch(&request, &options, &stop, &mut |pass| {
                            let mut s = shown.lock().unwrap_or_else(|p| p.into_inner());
                            s.passes += 1;
                            match pass {
                                Ok(report) => {
                                    // Without events the folder is rescanned
                                    // on a schedule: "polling", and why.
                                    s.state = match &report.unwatched {
                                        None => "watching".into(),
                                        Some(_) => "polling".into(),
                                    };
                                    s.last_error = report.unwatched.clone();
                                    if report.changed() {
                                        s.changes += (report.added.len()
                                            + report.replaced.len()
                                            + report.moved.len()
                                            + report.removed.len())
                                            as u64;
                                        s.last_change_at = Some(folio_engine::rfc3339(
                                            std::time::SystemTime::now(),
                                        ));
                                        let _ = changes_sender().send(report.library.clone());
                                        events::publish(
                                            Severity::Info,
                                            &report.library,
                                            json!({
                                                "event": "watch_pass",
                                                "library": report.library,
                                                "folder": report.folder,
                                                "added": report.added.len(),
                                                "replaced": report.replaced.len(),
                                                "moved": report.moved.len(),
                                                "removed": report.removed.len(),
                                            }),
                                        );
                                        tracing::info!(
                                            folder = %report.folder,
                                            added = report.added.len(),
                                            replaced = report.replaced.len(),
                                            moved = report.moved.len(),
                                            removed = report.removed.len(),
                                            "watch applied changes"
                                        );
                                    }
                                    let mut failing: Vec<String> = report
                                        .failed
                                        .iter()
                                        .chain(&report.unreadable)
                                        .map(|f| format!("{}: {}", f.source, f.message))
                                        .collect();
                                    // A file that failed before and has not
                                    // changed is not read again: it keeps
                                    // its failure as last told.
                                    failing
                                        .extend(still_failing(&s.failing, &report.still_failing));
                                    // Told once, when the failures change.
                                    if !failing.is_empty() && failing != s.failing {
                                        events::publish(
                                            Severity::Warning,
                                            &report.library,
                                            json!({
                                                "event": "watch_failing",
                                                "library": report.library,
                                                "folder": report.folder,
                                                "failing": failing,
                                            }),
                                        );
                                    }
                                    s.failing = failing;
                                }
                                Err(e) if e.code == folio_core::ErrorCode::StoreBusy => {
                                    s.state = "standby".into();
                                    s.last_error = None;
                                }
                                Err(e) => {
                                    s.state = "suspended".into();
                                    tracing::warn!(error = %e.message, "watch pass failed");
                                    // Told once, when the error changes.
                                    if s.last_error.as_deref() != Some(e.message.as_str()) {
                                        events::publish(
                                            Severity::Error,
                                            &s.library,
                                            json!({
                                                "event": "watch_failed",
                                                "library": s.library,
                                                "folder": s.folder,
                                                "error": e.message,
                                            }),
                                        );
                                    }
                                    s.last_error = Some(e.message);
                                }
                            }
                        });
                        if let Err(e) = result {
                            let mut s = shown.lock().unwrap_or_else(|p| p.into_inner());
                            s.state = "stopped".into();
                            s.last_error = Some(e.message);
                        }
                    })
                    .ok()?;
                Some(state)
            })
            .collect()
    });
}

/// The state of each watch of this process.
pub fn states() -> Vec<WatchState> {
    WATCHES
        .get()
        .map(|all| {
            all.iter()
                .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Of the failures last told (`source: message`), those of files a pass
/// found still failing (not read again, as they have not changed).
fn still_failing(told: &[String], still: &[String]) -> Vec<String> {
    told.iter()
        .filter(|line| {
            still.iter().any(|source| {
                line.strip_prefix(source.as_str())
                    .is_some_and(|rest| rest.starts_with(": "))
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_still_failing_keeps_its_failure() {
        let told = vec![
            "/w/broken.md: no text to index".to_string(),
            "/w/gone.md: malformed".to_string(),
            "/w/broken.md.bak: no text".to_string(),
        ];
        let still = vec!["/w/broken.md".to_string()];
        assert_eq!(
            still_failing(&told, &still),
            ["/w/broken.md: no text to index"]
        );
        assert!(still_failing(&told, &[]).is_empty());
    }
}
