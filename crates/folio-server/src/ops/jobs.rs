//! Background jobs: a tool call that goes on after its answer. A host gives
//! a tool call 60 to 120 seconds; an agent asking for a large folder gets a
//! job id at once (`ingest` with `background`), and the work runs to its end
//! whether or not the client stays. Every session of the server sees the
//! jobs on the libraries its caller may read (`jobs`, `server_info`), with
//! progress, counts and errors, and may cancel them (`cancel_job`).
//!
//! A job is a call with no client behind it: its own cancellation, the
//! caller's rights, the tool's time limit lifted (the job is the long
//! work), its progress kept here instead of sent.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use folio_engine::keys::{Principal, Scope};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Finished jobs kept for `jobs` to report (the oldest go first).
const KEEP_FINISHED: usize = 100;
/// Errors a job keeps (the first ones; the count says how many there were).
const KEEP_ERRORS: usize = 20;

/// The jobs of a server process.
#[derive(Default)]
pub struct Jobs {
    list: Mutex<VecDeque<Arc<Job>>>,
}

static JOBS: std::sync::OnceLock<Jobs> = std::sync::OnceLock::new();

/// The jobs of this process: one list for every session and every client
/// the process serves (an owner's attached clients each have their own
/// options, not their own jobs).
pub fn registry() -> &'static Jobs {
    JOBS.get_or_init(Jobs::default)
}

/// One job.
pub struct Job {
    pub id: String,
    pub tool: String,
    /// The library it writes (what decides who sees it).
    pub library: String,
    /// The caller who started it (None: the local user or an open server).
    pub owner: Option<Principal>,
    pub created_at: String,
    pub cancel: CancellationToken,
    pub progress: Arc<JobProgress>,
    state: Mutex<Finish>,
}

/// What a running job has done so far, updated by its work.
#[derive(Default)]
pub struct JobProgress {
    pub done: AtomicU64,
    pub total: AtomicU64,
    /// Documents settled (written, skipped or failed).
    pub settled: AtomicU64,
    pub failed: AtomicU64,
    errors: Mutex<Vec<String>>,
}

impl JobProgress {
    /// Records one source's failure (the first `KEEP_ERRORS` are kept).
    pub fn failure(&self, source: &str, message: &str) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        if errors.len() < KEEP_ERRORS {
            errors.push(format!("{source}: {message}"));
        }
    }
}

#[derive(Default)]
struct Finish {
    /// None while running.
    status: Option<&'static str>,
    finished_at: Option<String>,
    /// The tool's structured result (or its error envelope).
    result: Option<Value>,
    /// The whole tool result, as a task's result carries it.
    answer: Option<Value>,
}

/// A job as `jobs`, `cancel_job` and `server_info` report it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct JobOutput {
    pub job_id: String,
    pub tool: String,
    pub library: String,
    /// running, cancelling, completed (the tool answered; its result says
    /// how each source went), failed (it answered an error) or cancelled.
    pub status: String,
    /// Who started it (a key's name; absent for the local user).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Steps done of the total (for an ingest: sources read, chunks embedded).
    pub progress: JobCounts,
    /// The first errors (source: message).
    pub errors: Vec<String>,
    /// The tool's result, once finished (the answer the call would have given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct JobCounts {
    pub done: u64,
    pub total: u64,
    /// Documents settled so far, and how many of them failed.
    pub documents: u64,
    pub failed: u64,
}

impl Job {
    /// Whether `caller` may see this job (and cancel it, with the scope):
    /// the local user, or a caller who may touch its library and read it
    /// (the search scope) or who started the job (an ingest-only key
    /// follows its own jobs, not another's results).
    pub fn visible_to(&self, caller: Option<&Principal>) -> bool {
        caller.is_none_or(|p| {
            folio_core::LibraryName::new(&self.library).is_ok_and(|library| p.may_touch(&library))
                && (p.may(Scope::Search)
                    || self
                        .owner
                        .as_ref()
                        .is_some_and(|o| o.credential == p.credential))
        })
    }

    pub fn running(&self) -> bool {
        self.finish().status.is_none()
    }

    fn finish(&self) -> std::sync::MutexGuard<'_, Finish> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the job with the tool's result.
    pub fn finished(&self, result: &rmcp::model::CallToolResult) {
        let mut finish = self.finish();
        // Cancelled when the work says it stopped early (an ingest's
        // `cancelled`); a cancel that came after the last document changes
        // nothing of a finished job.
        let stopped = result
            .structured_content
            .as_ref()
            .and_then(|r| r.get("cancelled"))
            .and_then(Value::as_bool)
            .unwrap_or_else(|| self.cancel.is_cancelled());
        finish.status = Some(if stopped {
            "cancelled"
        } else if result.is_error == Some(true) {
            "failed"
        } else {
            "completed"
        });
        finish.finished_at = Some(folio_engine::rfc3339(std::time::SystemTime::now()));
        finish.result = result.structured_content.clone();
        finish.answer = serde_json::to_value(result).ok();
    }

    /// The whole tool result, once finished.
    pub fn answer(&self) -> Option<Value> {
        self.finish().answer.clone()
    }

    /// The job as `caller` sees it: who started it only to its starter, an
    /// admin or the local user.
    pub fn output_for(&self, caller: Option<&Principal>) -> JobOutput {
        let mut output = self.output();
        let shown = caller.is_none_or(|p| {
            p.may(Scope::Admin)
                || self
                    .owner
                    .as_ref()
                    .is_some_and(|o| o.credential == p.credential)
        });
        if !shown {
            output.started_by = None;
        }
        output
    }

    fn output(&self) -> JobOutput {
        let finish = self.finish();
        let progress = &self.progress;
        JobOutput {
            job_id: self.id.clone(),
            tool: self.tool.clone(),
            library: self.library.clone(),
            status: match finish.status {
                Some(status) => status,
                None if self.cancel.is_cancelled() => "cancelling",
                None => "running",
            }
            .to_string(),
            started_by: self.owner.as_ref().map(|p| p.name.clone()),
            created_at: self.created_at.clone(),
            finished_at: finish.finished_at.clone(),
            progress: JobCounts {
                done: progress.done.load(Ordering::Relaxed),
                total: progress.total.load(Ordering::Relaxed),
                documents: progress.settled.load(Ordering::Relaxed),
                failed: progress.failed.load(Ordering::Relaxed),
            },
            errors: progress
                .errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            result: finish.result.clone(),
        }
    }
}

impl Jobs {
    /// Registers a new running job of `tool` on `library` for `owner`.
    pub fn start(&self, tool: &str, library: &str, owner: Option<Principal>) -> Arc<Job> {
        let job = Arc::new(Job {
            id: uuid::Uuid::new_v4().to_string(),
            tool: tool.to_string(),
            library: library.to_string(),
            owner,
            created_at: folio_engine::rfc3339(std::time::SystemTime::now()),
            cancel: CancellationToken::new(),
            progress: Arc::new(JobProgress::default()),
            state: Mutex::new(Finish::default()),
        });
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        list.push_back(job.clone());
        // Finished jobs beyond the kept number go, oldest first.
        while list.iter().filter(|j| !j.running()).count() > KEEP_FINISHED {
            if let Some(oldest) = list.iter().position(|j| !j.running()) {
                list.remove(oldest);
            }
        }
        job
    }

    /// The job `id`, when `caller` may see it.
    pub fn find(&self, id: &str, caller: Option<&Principal>) -> Option<Arc<Job>> {
        let list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        list.iter()
            .find(|j| j.id == id && j.visible_to(caller))
            .cloned()
    }

    /// Returns once no job runs: a stdio server whose client has gone
    /// serves on (other clients may attach) until its jobs end.
    pub async fn settled(&self) {
        let mut told = false;
        loop {
            let running = {
                let list = self.list.lock().unwrap_or_else(|p| p.into_inner());
                list.iter().filter(|j| j.running()).count()
            };
            if running == 0 {
                return;
            }
            if !told {
                tracing::info!(
                    running,
                    "background jobs still running: serving until they end"
                );
                told = true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// The jobs `caller` may see, newest first.
    pub fn visible(&self, caller: Option<&Principal>) -> Vec<Arc<Job>> {
        let list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        list.iter()
            .rev()
            .filter(|j| j.visible_to(caller))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use folio_engine::keys::Credential;
    use rmcp::model::CallToolResult;
    use serde_json::json;

    fn key(name: &str, scopes: &[Scope], libraries: Option<&[&str]>) -> Principal {
        Principal {
            name: name.into(),
            credential: Credential::Key {
                hash: format!("hash-of-{name}"),
            },
            scopes: scopes.iter().copied().collect(),
            libraries: libraries.map(|l| {
                l.iter()
                    .map(|n| folio_core::LibraryName::new(*n).unwrap())
                    .collect()
            }),
            rate_per_minute: None,
        }
    }

    #[test]
    fn a_job_shows_to_readers_of_its_library_and_to_its_starter() {
        let jobs = Jobs::default();
        let bot = key("bot", &[Scope::Ingest], Some(&["wiki"]));
        let job = jobs.start("ingest", "wiki", Some(bot.clone()));
        let reader = key("reader", &[Scope::Search], Some(&["wiki"]));
        let elsewhere = key("hr", &[Scope::Search], Some(&["hr"]));
        let other_bot = key("other-bot", &[Scope::Ingest], Some(&["wiki"]));
        let admin = key("admin", &[Scope::Search, Scope::Admin], None);
        assert!(jobs.find(&job.id, None).is_some());
        assert!(jobs.find(&job.id, Some(&bot)).is_some());
        assert!(jobs.find(&job.id, Some(&reader)).is_some());
        assert!(jobs.find(&job.id, Some(&elsewhere)).is_none());
        assert!(jobs.find(&job.id, Some(&other_bot)).is_none());
        assert!(jobs.visible(Some(&elsewhere)).is_empty());
        // Who started it: to the starter, an admin and the local user only.
        assert_eq!(job.output_for(Some(&reader)).started_by, None);
        for caller in [Some(&bot), Some(&admin), None] {
            assert_eq!(job.output_for(caller).started_by.as_deref(), Some("bot"));
        }
    }

    #[test]
    fn a_job_is_cancelled_only_when_its_work_stopped_early() {
        let jobs = Jobs::default();
        let report = |cancelled: bool| CallToolResult::structured(json!({"cancelled": cancelled}));
        let late = jobs.start("ingest", "wiki", None);
        late.cancel.cancel();
        assert_eq!(late.output_for(None).status, "cancelling");
        late.finished(&report(false));
        assert_eq!(late.output_for(None).status, "completed");
        let stopped = jobs.start("ingest", "wiki", None);
        stopped.cancel.cancel();
        stopped.finished(&report(true));
        assert_eq!(stopped.output_for(None).status, "cancelled");
        let failed = jobs.start("ingest", "wiki", None);
        failed.finished(&CallToolResult::structured_error(json!({"error": {}})));
        let output = failed.output_for(None);
        assert_eq!(
            (output.status.as_str(), output.result),
            ("failed", Some(json!({"error": {}})))
        );
        assert!(failed.answer().is_some_and(|a| a["isError"] == json!(true)));
    }

    #[test]
    fn finished_jobs_beyond_the_kept_number_go_oldest_first() {
        let jobs = Jobs::default();
        let running = jobs.start("ingest", "wiki", None);
        let first = jobs.start("ingest", "wiki", None);
        first.finished(&CallToolResult::structured(json!({})));
        for _ in 0..KEEP_FINISHED {
            jobs.start("ingest", "wiki", None)
                .finished(&CallToolResult::structured(json!({})));
        }
        // Pruned as the next job starts: the oldest finished goes, the
        // running one stays.
        let next = jobs.start("ingest", "wiki", None);
        assert!(jobs.find(&first.id, None).is_none());
        assert!(jobs.find(&running.id, None).is_some() && jobs.find(&next.id, None).is_some());
        assert_eq!(jobs.visible(None).len(), KEEP_FINISHED + 2);
    }
}
