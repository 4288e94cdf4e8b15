//! What every tool call can reach: the engine, the server options, and the
//! call's own cancellation and progress channel.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use folio_core::ErrorCode;
use folio_engine::{Engine, EngineError, Progress};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ServeOptions;
use crate::registry::Registry;

/// State shared by every session of one server process.
pub struct Shared {
    pub engine: Arc<Engine>,
    pub options: ServeOptions,
    pub registry: Registry,
}

impl Shared {
    pub fn new(
        engine: Arc<Engine>,
        options: ServeOptions,
    ) -> Result<Arc<Self>, crate::RegistryError> {
        let registry = Registry::for_options(&options)?;
        Ok(Arc::new(Shared {
            engine,
            options,
            registry,
        }))
    }

    pub fn timeout(&self, tool: &str) -> Option<Duration> {
        self.options.timeouts.get(tool).copied()
    }
}

/// One tool call: cancelled when the client cancels it, the session ends or
/// its time limit passes; progress goes to the client when it asked for it.
#[derive(Clone)]
pub struct Call {
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
    /// A call without a client behind it (HTTP upload).
    pub fn detached() -> Self {
        Call {
            cancel: CancellationToken::new(),
            correlation_id: uuid::Uuid::new_v4().to_string(),
            progress: None,
            peer: None,
        }
    }

    /// A call that forwards progress (when the client gave a token) and
    /// informational messages as MCP notifications to `peer`.
    pub fn new(
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
            cancel,
            correlation_id: uuid::Uuid::new_v4().to_string(),
            progress,
            peer: Some((peer, token)),
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
        }
    }
}

pub struct CallProgress {
    cancel: CancellationToken,
    sender: Option<mpsc::UnboundedSender<Forward>>,
    done: AtomicU64,
    total: AtomicU64,
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
}

/// Runs engine work on the blocking pool. A panic becomes an internal
/// error; the server carries on.
pub async fn blocking<T, F>(work: F) -> Result<T, EngineError>
where
    F: FnOnce() -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => {
            tracing::error!("a tool panicked: {e}");
            Err(EngineError::new(
                ErrorCode::Internal,
                "the operation failed unexpectedly (a bug); the server is still running",
            ))
        }
        Err(_) => Err(EngineError::new(
            ErrorCode::Internal,
            "the operation was aborted",
        )),
    }
}

/// Runs engine work under the tool's time limit. On timeout the call is
/// cancelled (work that polls cancellation stops; finished documents stay)
/// and a `Timeout` error returns.
pub async fn bounded<T, F>(
    shared: &Shared,
    tool: &str,
    call: &Call,
    work: F,
) -> Result<T, EngineError>
where
    F: FnOnce() -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    within(shared.timeout(tool), tool, call, work).await
}

/// `bounded` with the limit given.
async fn within<T, F>(
    limit: Option<Duration>,
    tool: &str,
    call: &Call,
    work: F,
) -> Result<T, EngineError>
where
    F: FnOnce() -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    let task = blocking(work);
    match limit {
        None => task.await,
        Some(limit) => match tokio::time::timeout(limit, task).await {
            Ok(result) => result,
            Err(_) => {
                call.cancel.cancel();
                Err(EngineError::new(
                    ErrorCode::Timeout,
                    format!(
                        "{tool} exceeded its time limit of {} s",
                        limit.as_secs_f64()
                    ),
                ))
            }
        },
    }
}

/// How a write under a time limit ended.
pub enum Written<T> {
    /// Finished within the limit, or failed.
    Done(Result<T, EngineError>),
    /// The limit passed: the work was cancelled and waited for. `stopped` is
    /// what it returned once stopped (what it finished stays written), or
    /// None when it was still stopping after a grace period.
    TimedOut {
        error: EngineError,
        stopped: Option<Result<T, EngineError>>,
    },
}

/// How long cancelled work gets to stop and say what it finished.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// Runs a write under the tool's time limit. On timeout the call is
/// cancelled (the work stops between documents, embedding batches and
/// before each commit) and then awaited, so the caller can say exactly what
/// was written before the limit.
pub async fn bounded_write<T, F>(shared: &Shared, tool: &str, call: &Call, work: F) -> Written<T>
where
    F: FnOnce() -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    let mut task = Box::pin(blocking(work));
    let Some(limit) = shared.timeout(tool) else {
        return Written::Done(task.await);
    };
    match tokio::time::timeout(limit, &mut task).await {
        Ok(result) => Written::Done(result),
        Err(_) => {
            call.cancel.cancel();
            let error = EngineError::new(
                ErrorCode::Timeout,
                format!(
                    "{tool} exceeded its time limit of {} s",
                    limit.as_secs_f64()
                ),
            );
            let stopped = tokio::time::timeout(STOP_GRACE, task).await.ok();
            Written::TimedOut { error, stopped }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 26: the end-to-end timeout test accepted a success or a
    // TIMEOUT. Here work that outlasts its limit always ends in TIMEOUT
    // with the call cancelled, and work within it always answers.
    #[tokio::test]
    async fn work_past_its_limit_is_a_timeout_and_cancelled() {
        let call = Call::detached();
        let token = call.cancel.clone();
        let slow = within(Some(Duration::from_millis(50)), "query", &call, move || {
            // Until the limit cancels the call, as engine work polls it.
            while !token.is_cancelled() {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(1)
        });
        let error = slow.await.expect_err("past the limit");
        assert_eq!(error.code, ErrorCode::Timeout);
        assert!(
            error
                .message
                .contains("query exceeded its time limit of 0.05 s")
        );
        assert!(call.cancel.is_cancelled());

        let call = Call::detached();
        let quick = within(Some(Duration::from_secs(30)), "query", &call, || Ok(2));
        assert_eq!(quick.await.unwrap(), 2);
        assert!(!call.cancel.is_cancelled());
        let unlimited = within(None, "query", &call, || Ok(3));
        assert_eq!(unlimited.await.unwrap(), 3);
    }
}
