//! What every command shares: the global options, how a command ends,
//! usage errors, and opening the engine.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use folio_core::LibraryName;
use folio_engine::Engine;

use crate::config::{self, Overrides};

/// How a command ended.
pub enum Outcome {
    Success,
    /// Some inputs failed; the rest succeeded.
    PartialFailure,
}

/// A command-line mistake that clap cannot see (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// The options every command takes.
#[derive(Args)]
pub struct Global {
    /// Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL server to use instead of the data directory
    /// (default $FOLIO_STORE_URL, else [store] url).
    #[arg(long, global = true)]
    pub store_url: Option<String>,
    /// Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Print results as JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Embedding backend: onnx, candle or openai.
    #[arg(long, global = true)]
    pub backend: Option<String>,
    /// Model folder in Hugging Face layout.
    #[arg(long, global = true)]
    pub model_dir: Option<PathBuf>,
    /// Model by catalogue name (`folio models ls`) or hub id
    /// ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL,
    /// else [model] name, else all-MiniLM-L6-v2).
    #[arg(long, global = true)]
    pub model: Option<String>,
    /// Encoder threads.
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    /// Log progress details to stderr.
    #[arg(long, short, global = true)]
    pub verbose: bool,
}

/// How long a writing command waits for another writer to finish.
const LOCK_WAIT: Duration = Duration::from_secs(30);

pub fn library(name: &str) -> Result<LibraryName> {
    LibraryName::new(name).map_err(|e| usage(e.to_string()))
}

pub fn open(cli: &Global, overrides: &Overrides, writable: bool) -> Result<Engine> {
    let file = config::load_file(cli.config.as_deref())?;
    let wait = std::env::var("FOLIO_LOCK_WAIT_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(LOCK_WAIT, Duration::from_millis);
    let config = config::engine_config(file, overrides, writable.then_some(wait))?;
    Ok(Engine::open(config)?)
}

/// A write that ends with the process (`ingest`, a one-shot `sync`): the
/// store's heavy index upkeep waits for `settle_bulk_write`.
pub fn open_for_bulk_write(cli: &Global, overrides: &Overrides) -> Result<Engine> {
    let engine = open(cli, overrides, true)?;
    engine.start_bulk_write()?;
    Ok(engine)
}

/// Chunks written above which `settle_bulk_write` says what it is doing:
/// indexing them (vectors and words) takes about half a second per
/// thousand.
const SAY_SETTLING_ABOVE: u64 = 20_000;

/// Ends a bulk write: frees the encoder, then builds the index entries the
/// writes deferred (lexical and vector). A failure here loses nothing (every
/// chunk and vector is committed; the next process to open the library
/// replays them), so it is a warning, not the command's failure.
pub fn settle_bulk_write(engine: &Engine, chunks: u64, json: bool) {
    if !json && chunks > SAY_SETTLING_ABOVE {
        eprintln!("folio: indexing {chunks} chunks for search");
    }
    if let Err(e) = engine.settle() {
        eprintln!(
            "folio: warning: the search indexes were not brought up to date ({e}); \
             the next search does it"
        );
    }
}
