//! One tool call: its name, its cancellation, and its progress and
//! messages to the client.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use folio_core::LibraryName;
use folio_engine::keys::Principal;
use folio_engine::{EngineError, IngestItem, Progress};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::Severity;
use super::jobs::{Job, JobProgress};

/// Whether a session at `level` hears a message of `severity`.
pub fn hears(level: &AtomicU8, severity: Severity) -> bool {
    severity as u8 >= level.load(Ordering::Relaxed)
}

/// The MCP form of a log message. Logging is deprecated by the 2026
/// revision (SEP-2577), but the 2025 revisions define it, their clients
/// set levels and show messages, and folio declares the capability.
#[allow(deprecated)]
pub fn log_message(severity: Severity, data: Value) -> LoggingMessageNotificationParam {
    let level = match severity {
        Severity::Debug => LoggingLevel::Debug,
        Severity::Info => LoggingLevel::Info,
        Severity::Notice => LoggingLevel::Notice,
        Severity::Warning => LoggingLevel::Warning,
        Severity::Error => LoggingLevel::Error,
        Severity::Critical => LoggingLevel::Critical,
        Severity::Alert => LoggingLevel::Alert,
        Severity::Emergency => LoggingLevel::Emergency,
    };
    LoggingMessageNotificationParam::new(level, data).with_logger("folio")
}

/// The severity of an MCP logging level.
#[allow(deprecated)]
pub fn severity(level: LoggingLevel) -> Severity {
    match level {
        LoggingLevel::Debug => Severity::Debug,
        LoggingLevel::Info => Severity::Info,
        LoggingLevel::Notice => Severity::Notice,
        LoggingLevel::Warning => Severity::Warning,
        LoggingLevel::Error => Severity::Error,
        LoggingLevel::Critical => Severity::Critical,
        LoggingLevel::Alert => Severity::Alert,
        LoggingLevel::Emergency => Severity::Emergency,
    }
}

/// One tool call: cancelled when the client cancels it, the session ends or
/// its time limit passes; progress goes to the client when it asked for it,
/// log messages when they reach its session's logging level.
#[derive(Clone)]
pub struct Call {
    /// The tool called (its time limit is configured by this name).
    pub tool: String,
    /// Who calls, on a server that asks (`--auth keys`); None: the local
    /// user or an open server, who may do anything the server allows.
    pub principal: Option<Principal>,
    pub cancel: CancellationToken,
    /// Names this call in responses that carry one and in the call log.
    pub correlation_id: String,
    /// What goes to the client, in order (None: no client behind the call).
    forward: Option<mpsc::UnboundedSender<Forward>>,
    /// Whether the client asked for progress (gave a token).
    wants_progress: bool,
    /// The least severity its session hears (shared with the session, so a
    /// `logging/setLevel` during a long call applies at once).
    level: Arc<AtomicU8>,
    /// The job this call is, whose progress it keeps.
    job: Option<Arc<JobProgress>>,
}

/// What the forwarder of a call hands to the client, in order.
enum Forward {
    Progress(u64, Option<u64>, String),
    Log(Severity, Value),
    /// Answered once every earlier notification is handed to the client.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

/// The logging level of a session that has not set one.
pub const DEFAULT_LEVEL: Severity = Severity::Info;

impl Call {
    /// A call without a client behind it (HTTP upload), named `tool`.
    pub fn detached(tool: impl Into<String>) -> Self {
        Call {
            tool: tool.into(),
            principal: None,
            cancel: CancellationToken::new(),
            correlation_id: uuid::Uuid::new_v4().to_string(),
            forward: None,
            wants_progress: false,
            level: Arc::new(AtomicU8::new(DEFAULT_LEVEL as u8)),
            job: None,
        }
    }

    /// The call a background job makes of `tool` for `principal`: no client
    /// behind it, cancelled through the job, its progress kept in the job.
    pub fn for_job(tool: &str, job: &Job) -> Self {
        let mut call = Call::detached(tool).by(job.owner.clone());
        call.cancel = job.cancel.clone();
        call.correlation_id = job.id.clone();
        call.job = Some(job.progress.clone());
        call
    }

    /// A call that forwards progress (when the client gave a token) and
    /// log messages at or above `level` as MCP notifications to `peer`.
    #[allow(deprecated)]
    pub fn new(
        tool: impl Into<String>,
        cancel: CancellationToken,
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
        level: Arc<AtomicU8>,
    ) -> Self {
        let wants_progress = token.is_some();
        let (sender, mut receiver) = mpsc::unbounded_channel::<Forward>();
        tokio::spawn(async move {
            while let Some(forward) = receiver.recv().await {
                let sent = match forward {
                    Forward::Progress(done, total, message) => {
                        let Some(token) = token.clone() else { continue };
                        let mut param = ProgressNotificationParam::new(token, done as f64);
                        param.total = total.map(|t| t as f64);
                        param.message = (!message.is_empty()).then_some(message);
                        peer.notify_progress(param).await
                    }
                    Forward::Log(severity, data) => {
                        peer.notify_logging_message(log_message(severity, data))
                            .await
                    }
                    Forward::Barrier(ack) => {
                        let _ = ack.send(());
                        continue;
                    }
                };
                if sent.is_err() {
                    break;
                }
            }
        });
        Call {
            tool: tool.into(),
            principal: None,
            cancel,
            correlation_id: uuid::Uuid::new_v4().to_string(),
            forward: Some(sender),
            wants_progress,
            level,
            job: None,
        }
    }

    /// The call made by `principal`.
    pub fn by(mut self, principal: Option<Principal>) -> Self {
        self.principal = principal;
        self
    }

    /// Whether the caller may touch `library`.
    pub fn may_touch(&self, library: &LibraryName) -> bool {
        self.principal.as_ref().is_none_or(|p| p.may_touch(library))
    }

    /// `Forbidden` unless the caller may touch `library`.
    pub fn require_library(&self, library: &LibraryName) -> Result<(), EngineError> {
        match &self.principal {
            Some(principal) => principal.require_library(library),
            None => Ok(()),
        }
    }

    /// Sends an informational message to the client (the hansard contract
    /// sends info messages, and clients show them).
    pub async fn info(&self, message: impl Into<String>) {
        self.log(Severity::Info, Value::String(message.into()));
    }

    /// Sends a log message to the client when its session hears `severity`.
    pub fn log(&self, severity: Severity, data: Value) {
        if let Some(forward) = &self.forward
            && hears(&self.level, severity)
        {
            let _ = forward.send(Forward::Log(severity, data));
        }
    }

    /// Reports step `done` of `total`, when the client asked for progress;
    /// delivered before the call's result.
    pub async fn step(&self, done: u64, total: u64, message: &str) {
        if let Some(forward) = self.forward.as_ref().filter(|_| self.wants_progress) {
            let _ = forward.send(Forward::Progress(done, Some(total), message.to_string()));
        }
    }

    /// Waits until every progress notification sent so far has been handed
    /// to the client, so none arrives after the call's result (clients drop
    /// progress for a finished request). Bounded: a stuck client costs at
    /// most a second.
    pub async fn flush(&self) {
        if let Some(sender) = &self.forward {
            let (ack, done) = tokio::sync::oneshot::channel();
            if sender.send(Forward::Barrier(ack)).is_ok() {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(1), done).await;
            }
        }
    }

    /// An engine `Progress` bound to this call.
    pub fn progress(&self) -> CallProgress {
        CallProgress {
            cancel: self.cancel.clone(),
            sender: self.forward.clone().filter(|_| self.wants_progress),
            log: self.forward.clone(),
            level: self.level.clone(),
            job: self.job.clone(),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
            budget: None,
        }
    }
}

pub struct CallProgress {
    cancel: CancellationToken,
    /// Progress notifications (when the client asked for them).
    sender: Option<mpsc::UnboundedSender<Forward>>,
    /// Log messages about each document, at the session's level.
    log: Option<mpsc::UnboundedSender<Forward>>,
    level: Arc<AtomicU8>,
    /// The job's progress, when the call is a job.
    job: Option<Arc<JobProgress>>,
    done: AtomicU64,
    total: AtomicU64,
    /// The ingest budget each document written is admitted by.
    budget: Option<super::IngestBudget>,
}

impl CallProgress {
    /// This progress, admitting each document through `budget`.
    pub fn within(mut self, budget: Option<super::IngestBudget>) -> Self {
        self.budget = budget;
        self
    }

    /// This progress without its notifications to the client (a tool that
    /// reports steps of its own), still cancelled and budgeted.
    pub fn silent(mut self) -> Self {
        self.sender = None;
        self
    }
}

impl CallProgress {
    fn send(&self, message: &str) {
        if let Some(sender) = &self.sender {
            let total = self.total.load(Ordering::Relaxed);
            let _ = sender.send(Forward::Progress(
                self.done.load(Ordering::Relaxed),
                (total > 0).then_some(total),
                message.to_string(),
            ));
        }
    }
}

impl Progress for CallProgress {
    fn start(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        if let Some(job) = &self.job {
            job.total.store(total, Ordering::Relaxed);
        }
        self.send("started");
    }

    fn advance(&self, done: u64, message: &str) {
        self.done.fetch_add(done, Ordering::Relaxed);
        if let Some(job) = &self.job {
            job.done.fetch_add(done, Ordering::Relaxed);
        }
        self.send(message);
    }

    fn finish(&self) {
        self.send("finished");
    }

    /// Each document's outcome as a log message: a failure as a warning,
    /// the rest at debug.
    fn item(&self, item: &IngestItem) {
        if let Some(job) = &self.job {
            job.settled.fetch_add(1, Ordering::Relaxed);
            if let Some(e) = &item.error {
                job.failure(&item.source, &e.message);
            }
        }
        let (severity, data) = match &item.error {
            Some(e) => (
                Severity::Warning,
                json!({
                    "event": "ingest_failed",
                    "source": item.source,
                    "code": e.code.as_str(),
                    "message": e.message,
                }),
            ),
            None if !item.warnings.is_empty() => (
                Severity::Warning,
                json!({
                    "event": "ingested_with_warnings",
                    "source": item.source,
                    "document_id": item.document_id,
                    "warnings": item.warnings,
                }),
            ),
            None => (
                Severity::Debug,
                json!({
                    "event": "ingested",
                    "source": item.source,
                    "status": item.status,
                    "document_id": item.document_id,
                    "chunks": item.chunks,
                }),
            ),
        };
        if let Some(log) = &self.log
            && hears(&self.level, severity)
        {
            let _ = log.send(Forward::Log(severity, data));
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn admit(&self, bytes: u64) -> Result<(), EngineError> {
        match &self.budget {
            Some(budget) => budget.spend(bytes),
            None => Ok(()),
        }
    }
}
