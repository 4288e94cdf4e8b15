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
//! JSON value (`WorkerAnswer`) on stdout. Its stderr is kept (bounded) to
//! tell a stack overflow from an allocation failure.

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// In a child process: `program` run with `WORKER_ARG`, which must call
    /// `worker_main` (the `folio` binary does).
    Worker { program: PathBuf },
}

impl Extraction {
    /// The running executable as the worker: what the `folio` binary uses.
    /// When the executable cannot be found (a deleted binary, a
    /// restricted /proc), extraction falls back to this process, without
    /// the sandbox, and says so; `[limits] require_sandbox` makes that an
    /// error when the engine opens.
    pub fn current_exe() -> Self {
        match std::env::current_exe() {
            Ok(program) => Extraction::Worker { program },
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
        Extraction::InProcess => in_process(input, limits),
        Extraction::Worker { .. } if !limits.require_sandbox && small_text(input) => {
            in_process(input, limits)
        }
        Extraction::Worker { program } => in_worker(program, input, limits, cancelled),
    }
}

/// Plain text and Markdown up to this size are parsed in this process,
/// on the parser thread: starting a worker (about 6 ms of CPU) costs more
/// than parsing them, and a folder of notes is thousands of such files.
/// Their parsers are folio's own line reader, pulldown-cmark and, for front
/// matter, yaml-rust2: linear in their input, so 64 KiB bounds their memory
/// and time, and no nesting 64 KiB can spell exhausts the parser thread's
/// 256 MiB stack. `[limits] require_sandbox` sends them to workers too.
const SMALL_TEXT_BYTES: usize = 64 * 1024;

fn small_text(input: Input<'_>) -> bool {
    input.bytes.len() <= SMALL_TEXT_BYTES
        && matches!(
            folio_extract::detect(input),
            Ok(Format::Text | Format::Markdown)
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

fn in_process(input: Input<'_>, limits: &Limits) -> Result<(Format, StructuredText), EngineError> {
    let deadline = Duration::from_secs(limits.extract_timeout_secs);
    let (send, receive) = std::sync::mpsc::channel();
    let bytes = input.bytes.to_vec();
    let name = input.name.map(str::to_string);
    let mime = input.mime.map(str::to_string);
    let owned_limits = limits.clone();
    std::thread::Builder::new()
        .name("folio-extract".into())
        .stack_size(PARSER_STACK_BYTES)
        .spawn(move || {
            let input = Input {
                bytes: &bytes,
                name: name.as_deref(),
                mime: mime.as_deref(),
            };
            let _ = send.send(extract_bounded(input, &owned_limits));
        })
        .map_err(|e| {
            EngineError::new(
                ErrorCode::Internal,
                format!("cannot start a parser thread: {e}"),
            )
        })?;
    match receive.recv_timeout(deadline) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(timeout(limits)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(EngineError::new(
            ErrorCode::MalformedInput,
            "the parser failed on this input",
        )),
    }
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
    Overflow,
    Cancelled,
}

/// Bytes of the worker's stderr kept to classify how it died.
const STDERR_KEPT: usize = 16 * 1024;

fn in_worker(
    program: &std::path::Path,
    input: Input<'_>,
    limits: &Limits,
    cancelled: &dyn Fn() -> bool,
) -> Result<(Format, StructuredText), EngineError> {
    let internal = |what: &str, e: std::io::Error| {
        EngineError::new(
            ErrorCode::Internal,
            format!("extraction worker {}: {what}: {e}", program.display()),
        )
    };
    let header = serde_json::to_vec(&WorkerRequest {
        name: input.name.map(str::to_string),
        mime: input.mime.map(str::to_string),
        limits: limits.clone(),
        len: input.bytes.len() as u64,
    })
    .map_err(|e| EngineError::new(ErrorCode::Internal, e.to_string()))?;
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
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(EngineError::new(
            ErrorCode::Internal,
            "extraction worker has no pipes",
        ));
    };
    // The answer holds the extracted text: bounded like it, plus the JSON.
    let answer_cap = limits
        .max_decompressed_bytes
        .saturating_mul(2)
        .saturating_add(1 << 20);
    let overflow = AtomicBool::new(false);
    let started = Instant::now();
    let deadline = Duration::from_secs(limits.extract_timeout_secs);
    let (status, answer, stderr_text, stopped) = std::thread::scope(|scope| {
        scope.spawn(move || {
            // A worker that dies early closes the pipe: its exit says why.
            let _ = stdin
                .write_all(&header)
                .and_then(|()| stdin.write_all(b"\n"))
                .and_then(|()| stdin.write_all(input.bytes));
        });
        let overflow = &overflow;
        let answer = scope.spawn(move || {
            let mut answer = Vec::new();
            let read = (&mut stdout).take(answer_cap).read_to_end(&mut answer);
            if read.is_ok() && answer.len() as u64 >= answer_cap {
                overflow.store(true, Ordering::Relaxed);
            }
            answer
        });
        let stderr_text = scope.spawn(move || {
            let mut kept = Vec::new();
            let _ = (&mut stderr)
                .take(STDERR_KEPT as u64)
                .read_to_end(&mut kept);
            // Drain the rest so the worker never blocks on a full pipe.
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            String::from_utf8_lossy(&kept).into_owned()
        });
        let mut pause = Duration::from_millis(1);
        let mut stopped = None;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) => {}
                Err(e) => break Err(e),
            }
            let reason = if overflow.load(Ordering::Relaxed) {
                Some(Stop::Overflow)
            } else if started.elapsed() >= deadline {
                Some(Stop::Timeout)
            } else if cancelled() {
                Some(Stop::Cancelled)
            } else {
                None
            };
            if let Some(reason) = reason {
                stopped = Some(reason);
                let _ = child.kill();
                break child.wait();
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        let answer = answer.join().unwrap_or_default();
        let stderr_text = stderr_text.join().unwrap_or_default();
        (status, answer, stderr_text, stopped)
    });
    let status = status.map_err(|e| internal("waiting", e))?;
    match stopped {
        Some(Stop::Timeout) => return Err(timeout(limits)),
        Some(Stop::Overflow) => {
            return Err(EngineError::new(
                ErrorCode::TooLarge,
                format!(
                    "the extracted text is over the limit of {} bytes (max_decompressed_bytes)",
                    limits.max_decompressed_bytes
                ),
            ));
        }
        Some(Stop::Cancelled) => {
            return Err(EngineError::new(
                ErrorCode::Timeout,
                "cancelled while extracting",
            ));
        }
        None => {}
    }
    if status.success()
        && let Ok(answer) = serde_json::from_slice::<WorkerAnswer>(&answer)
    {
        return match answer {
            WorkerAnswer::Ok { format, text } => Ok((format, text)),
            WorkerAnswer::Err { code, message } => Err(EngineError::new(code, message)),
        };
    }
    Err(died(&stderr_text, limits, status))
}

/// The error for a worker that died instead of answering, from what it
/// said on the way out.
fn died(stderr: &str, limits: &Limits, status: std::process::ExitStatus) -> EngineError {
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

/// The worker's side: reads one request from stdin, extracts it under the
/// memory cap, answers on stdout. Returns the process exit code. Called by
/// the `folio` binary when its first argument is `WORKER_ARG`.
pub fn worker_main() -> i32 {
    let answer = match read_request() {
        Ok((request, bytes)) => {
            cap_memory(request.limits.max_extract_memory_bytes);
            let limits = request.limits;
            let run = move || {
                let input = Input {
                    bytes: &bytes,
                    name: request.name.as_deref(),
                    mime: request.mime.as_deref(),
                };
                extract_bounded(input, &limits)
            };
            // The main thread's stack is fixed by the system: parse on one
            // sized for deep (legitimate) documents.
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
        Err(message) => WorkerAnswer::Err {
            code: ErrorCode::Internal,
            message,
        },
    };
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, &answer).is_ok() && out.flush().is_ok();
    if written { 0 } else { 3 }
}

fn read_request() -> Result<(WorkerRequest, Vec<u8>), String> {
    let mut stdin = std::io::stdin().lock();
    let mut header = Vec::new();
    (&mut stdin)
        .take(1 << 20)
        .read_until(b'\n', &mut header)
        .map_err(|e| format!("reading the request: {e}"))?;
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
    Ok((request, bytes))
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
        Extraction::Worker {
            program: PathBuf::from("/nonexistent/folio-worker"),
        }
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
}
