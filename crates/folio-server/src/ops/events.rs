//! What the server tells every session that asked to hear it: log messages
//! about its libraries (a watch pass that changed one, a file a pass could
//! not index, a pass that failed). A session forwards a message at or above
//! its logging level, and only about a library its listener may read
//! (`transport::session`). Messages about one call go to that call's
//! session alone (`Call::log`). No message carries a secret: library names,
//! file names, counts and error messages only.

use std::sync::OnceLock;

use serde_json::Value;
use tokio::sync::broadcast;

/// The severity of a log message, as the MCP logging levels (RFC 5424)
/// rank them: debug lowest, emergency highest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// A log message for the sessions that listen.
#[derive(Debug, Clone)]
pub struct LogEvent {
    pub severity: Severity,
    /// The library it is about: only a listener who may read it hears it.
    pub library: String,
    pub data: Value,
}

static EVENTS: OnceLock<broadcast::Sender<LogEvent>> = OnceLock::new();

fn sender() -> &'static broadcast::Sender<LogEvent> {
    EVENTS.get_or_init(|| broadcast::channel(256).0)
}

/// Tells every listening session (none listening: dropped).
pub fn publish(severity: Severity, library: &str, data: Value) {
    let _ = sender().send(LogEvent {
        severity,
        library: library.to_string(),
        data,
    });
}

/// Hears every message published from now on.
pub fn listen() -> broadcast::Receiver<LogEvent> {
    sender().subscribe()
}
