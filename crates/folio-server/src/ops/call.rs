//! One tool call: its name, its cancellation, and its progress and
//! messages to the client.

use std::sync::atomic::{AtomicU64, Ordering};

use folio_core::LibraryName;
use folio_engine::keys::Principal;
use folio_engine::{EngineError, Progress};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One tool call: cancelled when the client cancels it, the session ends or
/// its time limit passes; progress goes to the client when it asked for it.
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
    progress: Option<mpsc::UnboundedSender<Forward>>,
    peer: Option<(Peer<RoleServer>, Option<ProgressToken>)>,
}

/// What the progress forwarder of a call handles, in order.
enum Forward {
    Progress(u64, Option<u64>, String),
    /// Answered once every earlier notification is handed to the client.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

impl Call {
    /// A call without a client behind it (HTTP upload), named `tool`.
    pub fn detached(tool: impl Into<String>) -> Self {
        Call {
            tool: tool.into(),
            principal: None,
            cancel: CancellationToken::new(),
            correlation_id: uuid::Uuid::new_v4().to_string(),
            progress: None,
            peer: None,
        }
    }

    /// A call that forwards progress (when the client gave a token) and
    /// informational messages as MCP notifications to `peer`.
    pub fn new(
        tool: impl Into<String>,
        cancel: CancellationToken,
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
    ) -> Self {
        let progress = token.clone().map(|token| {
            let peer = peer.clone();
            let (sender, mut receiver) = mpsc::unbounded_channel::<Forward>();
            tokio::spawn(async move {
                while let Some(forward) = receiver.recv().await {
                    let (done, total, message) = match forward {
                        Forward::Progress(done, total, message) => (done, total, message),
                        Forward::Barrier(ack) => {
                            let _ = ack.send(());
                            continue;
                        }
                    };
                    let mut param = ProgressNotificationParam::new(token.clone(), done as f64);
                    param.total = total.map(|t| t as f64);
                    param.message = (!message.is_empty()).then_some(message);
                    if peer.notify_progress(param).await.is_err() {
                        break;
                    }
                }
            });
            sender
        });
        Call {
            tool: tool.into(),
            principal: None,
            cancel,
            correlation_id: uuid::Uuid::new_v4().to_string(),
            progress,
            peer: Some((peer, token)),
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

    /// Sends an informational message to the client. Logging is deprecated
    /// by the 2026 protocol revision (SEP-2577), but the hansard contract
    /// sends info messages and clients of the 2025 revision show them.
    #[allow(deprecated)]
    pub async fn info(&self, message: impl Into<String>) {
        if let Some((peer, _)) = &self.peer {
            let param =
                LoggingMessageNotificationParam::new(LoggingLevel::Info, message.into().into())
                    .with_logger("folio");
            let _ = peer.notify_logging_message(param).await;
        }
    }

    /// Reports step `done` of `total`, when the client asked for progress;
    /// delivered before the call's result.
    pub async fn step(&self, done: u64, total: u64, message: &str) {
        if let Some((peer, Some(token))) = &self.peer {
            let mut param = ProgressNotificationParam::new(token.clone(), done as f64);
            param.total = Some(total as f64);
            param.message = Some(message.to_string());
            let _ = peer.notify_progress(param).await;
        }
    }

    /// Waits until every progress notification sent so far has been handed
    /// to the client, so none arrives after the call's result (clients drop
    /// progress for a finished request). Bounded: a stuck client costs at
    /// most a second.
    pub async fn flush(&self) {
        if let Some(sender) = &self.progress {
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
            sender: self.progress.clone(),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
            budget: None,
        }
    }
}

pub struct CallProgress {
    cancel: CancellationToken,
    sender: Option<mpsc::UnboundedSender<Forward>>,
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
        self.send("started");
    }

    fn advance(&self, done: u64, message: &str) {
        self.done.fetch_add(done, Ordering::Relaxed);
        self.send(message);
    }

    fn finish(&self) {
        self.send("finished");
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
