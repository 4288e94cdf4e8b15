//! Extraction out of process. The parsers folio uses for PDF, HTML and the
//! zip-based formats are third-party code run on untrusted bytes: a deeply
//! nested input can overflow their stack (which no Rust code can catch: the
//! process aborts), and a compressed stream can make them run for minutes at
//! gigabytes. So every document is extracted in a child process — the
//! `folio` binary itself, as `folio __extract-worker` — with an address-space
//! cap and a wall-clock limit; the parent kills it on overrun or
//! cancellation, and a child that dies is one refused document, never a dead
//! server holding the write lock.
//!
//! The protocol: the parent writes one JSON header line (`WorkerRequest`)
//! and then the document's bytes to the child's stdin; the child answers one
//! JSON line (`WorkerAnswer`) on stdout, and waits for the next request. A
//! worker is kept for up to `WORKER_DOCUMENTS` documents (starting one costs
//! more CPU than parsing a short PDF); one that overruns, is cancelled or
//! dies is killed and never reused. Its stderr is kept (bounded) to tell a
//! stack overflow from an allocation failure.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use folio_core::{ErrorCode, Limits, StructuredText};
use folio_extract::{Format, Input};
use serde::{Deserialize, Serialize};

use crate::EngineError;

/// The argument that makes the `folio` binary run as an extraction worker.
pub const WORKER_ARG: &str = "__extract-worker";

/// Stack of the thread that runs the parsers (inside the worker, or in
/// process): deep enough for any document a person writes, while a hostile
/// one still hits the depth checks or the guard page.
const PARSER_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Where documents are extracted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extraction {
    /// In this process, on a thread with a large stack, with a panic caught:
    /// for library users and unit tests. A parser that overflows even that
    /// stack still aborts the process, and a runaway parser is abandoned
    /// (its thread runs on) rather than stopped.
    InProcess,
    /// In child processes running `program` with `WORKER_ARG`, which must
    /// call `worker_main` (the `folio` binary does).
    Worker(Workers),
}

impl Extraction {
    /// Child processes of `program`, kept between documents.
    pub fn worker(program: PathBuf) -> Self {
        Extraction::Worker(Workers {
            program,
            idle: Arc::default(),
            started: Arc::default(),
        })
    }

    /// The running executable as the worker: what the `folio` binary uses.
    /// When the executable cannot be found (a deleted binary, a
    /// restricted /proc), extraction falls back to this process, without
    /// the sandbox, and says so; `[limits] require_sandbox` makes that an
    /// error when the engine opens.
    pub fn current_exe() -> Self {
        match std::env::current_exe() {
            Ok(program) => Extraction::worker(program),
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    "folio cannot find its own executable to run the extraction sandbox: \
                     documents are parsed in this process, without the sandbox's memory and \
                     time limits (set [limits] require_sandbox = true to refuse this)"
                );
                Extraction::InProcess
            }
        }
    }
}

/// The extraction workers of one program: the idle ones wait here, each
/// for the limits it was started with (its memory cap and stream bound
/// are set once, at start). Clones share them.
#[derive(Clone)]
pub struct Workers {
    program: PathBuf,
    idle: Arc<Mutex<Vec<Worker>>>,
    started: Arc<AtomicUsize>,
}

/// The program alone: an engine's configuration is compared by its Debug
/// text (a client attaching to an owner), so nothing that changes as
/// workers come and go belongs here.
impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("program", &self.program)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Workers {
    fn eq(&self, other: &Self) -> bool {
        self.program == other.program
    }
}

impl Eq for Workers {}

/// Documents one worker extracts before it is replaced, so whatever a
/// parser leaves behind (fragmented memory, caches) does not build up.
const WORKER_DOCUMENTS: usize = 100;
/// Idle workers kept: one per concurrent ingest is enough.
const IDLE_WORKERS: usize = 4;

impl Workers {
    /// Worker processes started so far.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::Relaxed)
    }

    fn take(&self, limits: &Limits) -> Result<Worker, EngineError> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        // One that exited while idle (killed from outside) is dropped.
        idle.retain_mut(|w| matches!(w.child.try_wait(), Ok(None)));
        match idle.iter().position(|w| &w.limits == limits) {
            Some(i) => Ok(idle.swap_remove(i)),
            None => {
                drop(idle);
                self.started.fetch_add(1, Ordering::Relaxed);
                Worker::start(&self.program, limits)
            }
        }
    }

    fn put_back(&self, worker: Worker) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if worker.documents < WORKER_DOCUMENTS && idle.len() < IDLE_WORKERS {
            idle.push(worker);
        }
    }
}

/// One running worker: its stdin, the answers its stdout reader thread
/// hands over, and the start of what it wrote to stderr.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<Line>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    limits: Limits,
    documents: usize,
}

/// What the stdout reader thread saw.
enum Line {
    Answer(Vec<u8>),
    /// A line longer than the answer cap: the worker is stopped.
    Overflow,
    /// The worker closed stdout (it died, or could not read the request).
    Closed,
}

impl Worker {
    fn start(program: &Path, limits: &Limits) -> Result<Self, EngineError> {
        let internal = |what: &str, e: std::io::Error| {
            EngineError::new(
                ErrorCode::Internal,
                format!("extraction worker {}: {what}: {e}", program.display()),
            )
        };
        // pdf_oxide bounds each decompressed stream by this variable (in MiB).
        let stream_mib = (limits.max_decompressed_bytes / (1024 * 1024)).max(1);
        let mut child = Command::new(program)
            .arg(WORKER_ARG)
            .env("PDF_OXIDE_MAX_DECOMPRESS_MB", stream_mib.to_string())
            .env_remove("FOLIO_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| internal("cannot start", e))?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(EngineError::new(
                ErrorCode::Internal,
                "extraction worker has no pipes",
            ));
        };
        // An answer holds the extracted text: bounded like it, plus the JSON
        // and a container's PDFs, kept as base64 (their bytes are within
        // the decompression budget too).
        let answer_cap = limits
            .max_decompressed_bytes
            .saturating_mul(3)
            .saturating_add(1 << 20);
        let (send, answers) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("folio-extract-answers".into())
            .spawn(move || {
                let mut stdout = BufReader::new(stdout);
                loop {
                    let mut line = Vec::new();
                    let line = match (&mut stdout).take(answer_cap).read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => Line::Closed,
                        Ok(_) if line.ends_with(b"\n") => Line::Answer(line),
                        Ok(n) if n as u64 >= answer_cap => Line::Overflow,
                        Ok(_) => Line::Closed,
                    };
                    let last = !matches!(line, Line::Answer(_));
                    if send.send(line).is_err() || last {
                        return;
                    }
                }
            });
        let kept = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&kept);
        let stderr_reader = spawned.and_then(|_| {
            std::thread::Builder::new()
                .name("folio-extract-stderr".into())
                .spawn(move || {
                    let mut buffer = [0u8; 4096];
                    // Read until the worker exits, so it never blocks on a
                    // full pipe; keep the start of each document's part.
                    while let Ok(n) = stderr.read(&mut buffer) {
                        if n == 0 {
                            return;
                        }
                        let mut kept = sink.lock().unwrap_or_else(|p| p.into_inner());
                        let room = STDERR_KEPT.saturating_sub(kept.len()).min(n);
                        kept.extend_from_slice(&buffer[..room]);
                    }
                })
        });
        let stderr_reader = match stderr_reader {
            Ok(handle) => handle,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(internal("cannot start its reader threads", e));
            }
        };
        Ok(Worker {
            child,
            stdin: Some(stdin),
            answers,
            stderr: kept,
            stderr_reader: Some(stderr_reader),
            limits: limits.clone(),
            documents: 0,
        })
    }

    /// Closes its stdin, kills and reaps it. A worker whose stdout closed
    /// has exited: killing it then leaves its exit status as it was, and a
    /// second call returns the status the first reaped.
    fn end(&mut self) -> std::io::Result<ExitStatus> {
        drop(self.stdin.take());
        let _ = self.child.kill();
        self.child.wait()
    }

    /// Stops the worker and returns how it ended, once its stderr is read
    /// to the end.
    fn stop(mut self) -> (std::io::Result<ExitStatus>, String) {
        let status = self.end();
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        let kept = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        (status, String::from_utf8_lossy(&kept).into_owned())
    }
}

impl Drop for Worker {
    /// An idle worker when the engine goes, or one the pool does not keep.
    fn drop(&mut self) {
        let _ = self.end();
    }
}

#[derive(Serialize, Deserialize)]
struct WorkerRequest {
    name: Option<String>,
    mime: Option<String>,
    limits: Limits,
    len: u64,
}

#[derive(Serialize, Deserialize)]
enum WorkerAnswer {
    Ok {
        format: Format,
        text: StructuredText,
    },
    Err {
        code: ErrorCode,
        message: String,
    },
}

/// Extracts `input` as configured by `extraction`, within `limits`
/// (`extract_timeout_secs`, `max_extract_memory_bytes`, the decompression
/// and text bounds). `cancelled` is polled while the worker runs.
pub fn extract(
    extraction: &Extraction,
    input: Input<'_>,
    limits: &Limits,
    cancelled: &dyn Fn() -> bool,
) -> Result<(Format, StructuredText), EngineError> {
    match extraction {
        Extraction::InProcess => in_process(input, limits, small_text(input)),
        Extraction::Worker(_) if !limits.require_sandbox && small_text(input) => {
            in_process(input, limits, true)
        }
        Extraction::Worker(workers) => in_worker(workers, input, limits, cancelled),
    }
}

/// Plain text, Markdown and the other markup of notes (LaTeX,
/// reStructuredText, Org, AsciiDoc) up to this size are parsed in this
/// process, on the parser thread: starting a worker (about 6 ms of CPU)
/// costs more than parsing them, and a folder of notes is thousands of such
/// files. Their parsers are folio's own readers, pulldown-cmark and, for
/// front matter, yaml-rust2: linear in their input (folio's markup readers
/// read at most 64 levels of nesting apart), so 64 KiB bounds their memory
/// and time, and no nesting 64 KiB can spell exhausts the parser thread's
/// 256 MiB stack. `[limits] require_sandbox` sends them to workers too.
const SMALL_TEXT_BYTES: usize = 64 * 1024;

fn small_text(input: Input<'_>) -> bool {
    input.bytes.len() <= SMALL_TEXT_BYTES
        && matches!(
            folio_extract::detect(input),
            Ok(Format::Text
                | Format::Markdown
                | Format::Latex
                | Format::Rst
                | Format::Org
                | Format::Asciidoc)
        )
}

/// The checks around the parsers that do not depend on where they run.
fn extract_bounded(
    input: Input<'_>,
    limits: &Limits,
) -> Result<(Format, StructuredText), EngineError> {
    let (format, text) = folio_extract::extract(input, limits)?;
    let chars: usize = text.blocks.iter().map(|b| b.text.len()).sum();
    if chars as u64 > limits.max_decompressed_bytes {
        return Err(EngineError::new(
            ErrorCode::TooLarge,
            format!(
                "the extracted text is {chars} bytes, over the limit of {} (max_decompressed_bytes)",
                limits.max_decompressed_bytes
            ),
        ));
    }
    Ok((format, text))
}

/// A parse handed to a parser thread.
type ParseJob = Box<dyn FnOnce() + Send>;

/// Parser threads waiting for the next small text (see `SMALL_TEXT_BYTES`),
/// by the sender of their job queue. A thread per document cost a folder of
/// 100,000 notes 100,000 thread starts, each a stack mapping and an
/// allocator heap abandoned on exit. Only small texts reuse a thread: their
/// parsers cannot grow its stack, which a kept thread would hold.
static IDLE_PARSERS: Mutex<Vec<std::sync::mpsc::Sender<ParseJob>>> = Mutex::new(Vec::new());

/// Most parser threads kept idle (one per concurrent ingest is enough).
const IDLE_PARSERS_MAX: usize = 4;

/// A parser thread's job queue: an idle one's when `reuse` and there is
/// one, else a new thread's. The thread ends when its queue's sender is
/// dropped (after the job it runs, for one abandoned on a timeout) or when
/// a parser panics.
fn parser_thread(reuse: bool) -> std::io::Result<std::sync::mpsc::Sender<ParseJob>> {
    if reuse && let Some(jobs) = IDLE_PARSERS.lock().unwrap_or_else(|p| p.into_inner()).pop() {
        return Ok(jobs);
    }
    let (jobs, queue) = std::sync::mpsc::channel::<ParseJob>();
    std::thread::Builder::new()
        .name("folio-extract".into())
        .stack_size(PARSER_STACK_BYTES)
        .spawn(move || {
            for job in queue {
                job();
            }
        })?;
    Ok(jobs)
}

fn in_process(
    input: Input<'_>,
    limits: &Limits,
    reuse: bool,
) -> Result<(Format, StructuredText), EngineError> {
    let deadline = Duration::from_secs(limits.extract_timeout_secs);
    let (send, receive) = std::sync::mpsc::channel();
    let bytes = input.bytes.to_vec();
    let name = input.name.map(str::to_string);
    let mime = input.mime.map(str::to_string);
    let owned_limits = limits.clone();
    let job: ParseJob = Box::new(move || {
        let input = Input {
            bytes: &bytes,
            name: name.as_deref(),
            mime: mime.as_deref(),
        };
        let _ = send.send(extract_bounded(input, &owned_limits));
    });
    let cannot_start = |e: &dyn std::fmt::Display| {
        EngineError::new(
            ErrorCode::Internal,
            format!("cannot start a parser thread: {e}"),
        )
    };
    // An idle thread waits on its queue (one whose parser panicked or
    // overran is never put back), so the send reaches a live thread.
    let jobs = parser_thread(reuse).map_err(|e| cannot_start(&e))?;
    jobs.send(job)
        .map_err(|_| cannot_start(&"the parser thread ended"))?;
    let result = match receive.recv_timeout(deadline) {
        Ok(result) => result,
        // The thread runs on with its job; its queue is dropped here, so it
        // ends when the job does.
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Err(timeout(limits)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            return Err(EngineError::new(
                ErrorCode::MalformedInput,
                "the parser failed on this input",
            ));
        }
    };
    if reuse {
        let mut idle = IDLE_PARSERS.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < IDLE_PARSERS_MAX {
            idle.push(jobs);
        }
    }
    result
}

fn timeout(limits: &Limits) -> EngineError {
    EngineError::new(
        ErrorCode::Timeout,
        format!(
            "extraction took longer than {} s (extract_timeout_secs)",
            limits.extract_timeout_secs
        ),
    )
}

/// Why the parent stopped a worker.
enum Stop {
    Timeout,
    Cancelled,
}

/// Bytes of the worker's stderr kept to classify how it died.
const STDERR_KEPT: usize = 16 * 1024;

fn in_worker(
    workers: &Workers,
    input: Input<'_>,
    limits: &Limits,
    cancelled: &dyn Fn() -> bool,
) -> Result<(Format, StructuredText), EngineError> {
    let header = serde_json::to_vec(&WorkerRequest {
        name: input.name.map(str::to_string),
        mime: input.mime.map(str::to_string),
        limits: limits.clone(),
        len: input.bytes.len() as u64,
    })
    .map_err(|e| EngineError::new(ErrorCode::Internal, e.to_string()))?;
    let mut worker = workers.take(limits)?;
    worker
        .stderr
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clear();
    worker.documents += 1;
    let started = Instant::now();
    let deadline = Duration::from_secs(limits.extract_timeout_secs);
    let stdin = worker.stdin.as_mut();
    let answers = &worker.answers;
    let (line, stopped) = std::thread::scope(|scope| {
        scope.spawn(move || {
            // A worker that dies early closes the pipe: its exit says why.
            if let Some(stdin) = stdin {
                let _ = stdin
                    .write_all(&header)
                    .and_then(|()| stdin.write_all(b"\n"))
                    .and_then(|()| stdin.write_all(input.bytes))
                    .and_then(|()| stdin.flush());
            }
        });
        loop {
            let reason = if started.elapsed() >= deadline {
                Stop::Timeout
            } else if cancelled() {
                Stop::Cancelled
            } else {
                match answers.recv_timeout(Duration::from_millis(20)) {
                    Ok(line) => break (line, None),
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break (Line::Closed, None),
                }
            };
            // Killing the worker also ends a write still in progress.
            let _ = worker.child.kill();
            break (Line::Closed, Some(reason));
        }
    });
    let answer = match (line, stopped) {
        (_, Some(Stop::Timeout)) => Err(timeout(limits)),
        (_, Some(Stop::Cancelled)) => Err(EngineError::new(
            ErrorCode::Timeout,
            "cancelled while extracting",
        )),
        (Line::Overflow, _) => Err(EngineError::new(
            ErrorCode::TooLarge,
            format!(
                "the extracted text is over the limit of {} bytes (max_decompressed_bytes)",
                limits.max_decompressed_bytes
            ),
        )),
        (Line::Answer(line), None) => match serde_json::from_slice::<WorkerAnswer>(&line) {
            Ok(WorkerAnswer::Ok { format, text }) => {
                workers.put_back(worker);
                return Ok((format, text));
            }
            // A worker that could not read the request has lost its place
            // in the stream: it exits, and is not put back.
            Ok(WorkerAnswer::Err { code, message }) if code != ErrorCode::Internal => {
                workers.put_back(worker);
                return Err(EngineError::new(code, message));
            }
            Ok(WorkerAnswer::Err { code, message }) => Err(EngineError::new(code, message)),
            Err(e) => Err(EngineError::new(
                ErrorCode::Internal,
                format!("the extraction worker answered nonsense: {e}"),
            )),
        },
        (Line::Closed, None) => {
            let (status, stderr) = worker.stop();
            let status = status.map_err(|e| {
                EngineError::new(
                    ErrorCode::Internal,
                    format!(
                        "extraction worker {}: waiting: {e}",
                        workers.program.display()
                    ),
                )
            })?;
            return Err(died(&stderr, limits, status));
        }
    };
    let _ = worker.stop();
    answer
}

/// The error for a worker that died instead of answering, from what it
/// said on the way out.
fn died(stderr: &str, limits: &Limits, status: ExitStatus) -> EngineError {
    if stderr.contains("overflowed its stack") {
        EngineError::new(
            ErrorCode::MalformedInput,
            "the document is nested too deeply to parse (the parser ran out of stack)",
        )
    } else if stderr.contains("memory allocation") || stderr.contains("capacity overflow") {
        EngineError::new(
            ErrorCode::TooLarge,
            format!(
                "extraction needed more than {} bytes of memory (max_extract_memory_bytes)",
                limits.max_extract_memory_bytes
            ),
        )
    } else {
        tracing::warn!(%status, "an extraction worker died");
        EngineError::new(
            ErrorCode::MalformedInput,
            format!("the parser failed on this input ({status})"),
        )
    }
}

/// The worker's side: reads requests from stdin until it closes, extracts
/// each under the memory cap (set with the first), answers each with one
/// line on stdout. Returns the process exit code. Called by the `folio`
/// binary when its first argument is `WORKER_ARG`.
pub fn worker_main() -> i32 {
    let mut capped = false;
    loop {
        let (answer, more) = match read_request() {
            Ok(None) => return 0,
            Ok(Some((request, bytes))) => {
                if !capped {
                    cap_memory(request.limits.max_extract_memory_bytes);
                    capped = true;
                }
                (extract_request(request, bytes), true)
            }
            // The stream is out of step: answer, and stop.
            Err(message) => (
                WorkerAnswer::Err {
                    code: ErrorCode::Internal,
                    message,
                },
                false,
            ),
        };
        let mut out = std::io::stdout().lock();
        let written = serde_json::to_writer(&mut out, &answer).is_ok()
            && out.write_all(b"\n").is_ok()
            && out.flush().is_ok();
        if !written {
            return 3;
        }
        if !more {
            return 0;
        }
    }
}

fn extract_request(request: WorkerRequest, bytes: Vec<u8>) -> WorkerAnswer {
    let limits = request.limits;
    let run = move || {
        let input = Input {
            bytes: &bytes,
            name: request.name.as_deref(),
            mime: request.mime.as_deref(),
        };
        extract_bounded(input, &limits)
    };
    // The main thread's stack is fixed by the system: parse on one sized
    // for deep (legitimate) documents.
    let result = std::thread::Builder::new()
        .stack_size(PARSER_STACK_BYTES)
        .spawn(run)
        .map_err(|e| EngineError::new(ErrorCode::Internal, e.to_string()))
        .and_then(|handle| {
            handle.join().unwrap_or_else(|_| {
                Err(EngineError::new(
                    ErrorCode::MalformedInput,
                    "the parser failed on this input",
                ))
            })
        });
    match result {
        Ok((format, text)) => WorkerAnswer::Ok { format, text },
        Err(e) => WorkerAnswer::Err {
            code: e.code,
            message: e.message,
        },
    }
}

/// The next request, or none when stdin closed between requests.
fn read_request() -> Result<Option<(WorkerRequest, Vec<u8>)>, String> {
    let mut stdin = std::io::stdin().lock();
    let mut header = Vec::new();
    (&mut stdin)
        .take(1 << 20)
        .read_until(b'\n', &mut header)
        .map_err(|e| format!("reading the request: {e}"))?;
    if header.is_empty() {
        return Ok(None);
    }
    let request: WorkerRequest =
        serde_json::from_slice(&header).map_err(|e| format!("bad request header: {e}"))?;
    if request.len > request.limits.max_file_bytes {
        return Err("the document is over max_file_bytes".into());
    }
    let mut bytes = Vec::with_capacity(request.len as usize);
    (&mut stdin)
        .take(request.len)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading the document: {e}"))?;
    if bytes.len() as u64 != request.len {
        return Err("the document was cut short".into());
    }
    Ok(Some((request, bytes)))
}

/// Caps the worker's address space, so a decompression bomb ends in an
/// allocation failure (reported as too large) instead of swapping the
/// machine. Best effort: where the limit cannot be set, the wall-clock limit
/// still applies.
fn cap_memory(bytes: u64) {
    use nix::sys::resource::{Resource, setrlimit};
    if let Err(e) = setrlimit(Resource::RLIMIT_AS, bytes, bytes) {
        tracing::warn!(error = %e, "cannot cap the extraction worker's memory");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker that cannot start: whatever reaches it fails.
    fn no_worker() -> Extraction {
        Extraction::worker(PathBuf::from("/nonexistent/folio-worker"))
    }

    fn input<'a>(bytes: &'a [u8], name: &'a str) -> Input<'a> {
        Input {
            bytes,
            name: Some(name),
            mime: None,
        }
    }

    #[test]
    fn small_text_is_parsed_in_process_and_the_rest_in_a_worker() {
        let limits = Limits::default();
        let never = || false;
        let note = b"# A note\n\nSmall enough to parse here.\n";
        let (format, text) = extract(&no_worker(), input(note, "n.md"), &limits, &never).unwrap();
        assert_eq!(format, Format::Markdown);
        assert_eq!(text.title.as_deref(), Some("A note"));
        let plain = b"plain words";
        assert!(extract(&no_worker(), input(plain, "n.txt"), &limits, &never).is_ok());
        // A larger text file, any PDF, and everything when the sandbox is
        // required, go to the worker (which cannot start here).
        let large = "word ".repeat(SMALL_TEXT_BYTES / 5 + 1);
        let pdf = folio_testkit::pdf(&["a page"]);
        let required = Limits {
            require_sandbox: true,
            ..Limits::default()
        };
        for (bytes, name, limits) in [
            (large.as_bytes(), "big.txt", &limits),
            (&pdf[..], "p.pdf", &limits),
            (&note[..], "n.md", &required),
        ] {
            let error = extract(&no_worker(), input(bytes, name), limits, &never).unwrap_err();
            assert!(
                error.to_string().contains("cannot start"),
                "{name}: {error}"
            );
        }
    }

    /// Live threads of this process named `name`.
    fn threads_named(name: &str) -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim() == name)
            .count()
    }

    // Issue 33: a thread per small text cost a folder of notes a thread
    // start per file. Consecutive small texts now share a kept thread, and
    // each still gets its own answer.
    #[test]
    fn small_texts_share_a_kept_parser_thread() {
        let limits = Limits::default();
        let never = || false;
        for i in 0..40 {
            let note = format!("# Note {i}\n\nSmall enough to parse here.\n");
            let (_, text) = extract(
                &no_worker(),
                input(note.as_bytes(), "n.md"),
                &limits,
                &never,
            )
            .unwrap();
            assert_eq!(text.title, Some(format!("Note {i}")));
        }
        // The last parse's thread waits for the next one rather than ending.
        std::thread::sleep(Duration::from_millis(100));
        assert!(threads_named("folio-extract") >= 1);
        assert!(!IDLE_PARSERS.lock().unwrap().is_empty());
    }
}
