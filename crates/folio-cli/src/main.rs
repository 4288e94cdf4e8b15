//! The `folio` command: ingest, search, read and manage libraries, evaluate
//! retrieval on BEIR data and benchmark — a thin layer over the engine.
//!
//! Exit codes: 0 success; 1 when any input failed or a fatal error occurred;
//! 2 for invalid arguments. Results go to stdout (human text, or JSON with
//! `--json`); errors, logs and progress go to stderr.

mod bench;
mod cli;
mod common;
mod config;
mod entities;
mod fetch;
mod keys;
mod models;
mod output;
mod progress;
mod records;
mod reference;
mod serve;
mod sync;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use folio_core::ErrorCode;
use folio_engine::EngineError;

// candle spends a large share of its time in allocation with the system
// allocator; mimalloc halves that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Whether logs are coloured: only on a terminal (MCP clients save stderr to
/// log files, where escape codes are noise), and never under NO_COLOR.
fn log_colours() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The nice value of bulk writes unless FOLIO_INGEST_NICE says otherwise.
const INGEST_NICE: i32 = 10;

/// Bulk writes (ingest, sync, rebuild, copy) run at a lower CPU priority:
/// alone on a machine they still get every core, but a server answering
/// agents on the same machine has its searches served first. Set before any
/// thread starts, so the encoder's threads and the extraction workers
/// inherit it; FOLIO_INGEST_NICE=0 keeps full priority.
fn lower_priority_of_bulk_writes(command: &cli::Command) {
    use cli::Command;
    if !matches!(
        command,
        Command::Ingest(_) | Command::Sync(_) | Command::Rebuild { .. } | Command::Copy(_)
    ) {
        return;
    }
    let nice = std::env::var("FOLIO_INGEST_NICE")
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .unwrap_or(INGEST_NICE)
        .clamp(0, 19);
    // A failure leaves the priority as it was: the work is the same.
    if nice > 0 && rustix::process::nice(nice).is_err() {
        tracing::debug!("could not lower the priority of this bulk write");
    }
}

/// Whether `error` is stdout's reader having gone (`folio ls | head`).
fn broken_pipe(error: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(BrokenPipe))
    })
}

/// A reader that stops reading (`folio ls | head -3`) ends the command as
/// it ends `ls` or ripgrep: quietly and successfully, not with a panic
/// from `println!` (Rust ignores SIGPIPE, so the write fails instead).
/// SIGPIPE itself stays ignored: a parser worker or a client that goes
/// away must be an error on its pipe, never the end of this process.
fn end_quietly_when_the_reader_leaves() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    // Documents are parsed in a child process of this binary (see
    // folio_engine::sandbox): it speaks a pipe protocol, not the CLI.
    if std::env::args_os().nth(1).as_deref() == Some(folio_engine::sandbox::WORKER_ARG.as_ref()) {
        return ExitCode::from(folio_engine::sandbox::worker_main() as u8);
    }
    // The generated reference of folio's source tree (docs/reference, the
    // man page, completions): a command for developers, not in the help.
    if std::env::args_os().nth(1).as_deref() == Some(reference::REFERENCE_ARG.as_ref()) {
        return reference::main(cli::Cli::command(), std::env::args().skip(2));
    }
    end_quietly_when_the_reader_leaves();
    let args = cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("FOLIO_LOG")
        .unwrap_or_else(|_| // Parsers log their recoveries from malformed input; folio reports
        // the outcome itself, so their chatter is off unless asked for.
        tracing_subscriber::EnvFilter::new(if args.global.verbose { "info,pdf_oxide=warn" } else { "warn,pdf_oxide=off,tantivy=error" }));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(log_colours())
        .init();
    lower_priority_of_bulk_writes(&args.command);
    let json = args.global.json;
    match cli::run(args) {
        Ok(common::Outcome::Success) => ExitCode::SUCCESS,
        Ok(common::Outcome::PartialFailure) => ExitCode::from(1),
        Err(error) if broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let (code, status) = match error.downcast_ref::<EngineError>() {
                Some(e) => (Some(e.code), reference::exit_status(e.code)),
                None => match error.downcast_ref::<common::UsageError>() {
                    Some(_) => (Some(ErrorCode::InvalidArgument), 2),
                    None => (None, 1),
                },
            };
            // The engine's messages are for every transport; the CLI's own
            // remedies are said here.
            let hint = match code {
                Some(ErrorCode::EmbeddingMismatch) => {
                    " (`folio rebuild LIBRARY` re-embeds a library with the current model)"
                }
                _ => "",
            };
            if json {
                let body = serde_json::json!({
                    "error": {"code": code.map_or("internal", ErrorCode::as_str), "message": format!("{error:#}{hint}")}
                });
                eprintln!("{body}");
            } else {
                eprintln!("error: {error:#}{hint}");
            }
            ExitCode::from(status)
        }
    }
}
