//! `folio sync FOLDER --library L`: one pass that makes the library's
//! documents from the folder exactly its files (added, replaced, moved
//! without re-embedding, removed), or with `--watch` passes whenever the
//! folder changes, until interrupted.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use folio_engine::Engine;
use folio_engine::sync::{SyncReport, SyncRequest, WatchOptions};

use crate::common::{Outcome, library};
use crate::output::print_json;
use crate::progress::Bar;

#[derive(Args)]
pub struct SyncArgs {
    /// The folder.
    pub folder: PathBuf,
    #[arg(long, short, default_value = "default")]
    pub library: String,
    /// Say what a pass would change; change nothing.
    #[arg(long, conflicts_with = "watch")]
    pub dry_run: bool,
    /// After the pass, follow the folder's changes until interrupted.
    #[arg(long)]
    pub watch: bool,
    /// Leave out files matching this glob (gitignore syntax, relative to
    /// the folder; repeatable), beyond .gitignore, .ignore, .folioignore
    /// and hidden files.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Read ZIP and TAR archives, each member a document under the
    /// archive's path (left out by default, as images are).
    #[arg(long)]
    pub archives: bool,
    /// With --watch: a full pass at least this often, in seconds (for
    /// network mounts that report no changes).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub rescan_secs: u64,
}

/// The request a folder binding makes.
pub fn request(
    library_name: &str,
    folder: PathBuf,
    exclude: Vec<String>,
    settle: Duration,
    archives: bool,
) -> Result<SyncRequest> {
    let mut request = SyncRequest::new(library(library_name)?, folder);
    request.exclude = exclude;
    request.settle = settle;
    request.archives = archives;
    Ok(request)
}

/// `folio sync`.
pub fn run(engine: &Engine, args: &SyncArgs, json: bool) -> Result<Outcome> {
    let mut request = request(
        &args.library,
        args.folder.clone(),
        args.exclude.clone(),
        Duration::ZERO,
        args.archives,
    )?;
    request.dry_run = args.dry_run;
    let report = engine.sync(&request, &Bar::new("sync", !json))?;
    if !args.dry_run {
        crate::common::settle_bulk_write(engine, report.embedded_chunks, json);
    }
    print(&report, json)?;
    if !args.watch {
        return Ok(if report.failed.is_empty() {
            Outcome::Success
        } else {
            Outcome::PartialFailure
        });
    }
    watch(engine, request, args.rescan_secs, json)
}

/// Follows `request.folder` until the process is interrupted, printing each
/// pass that changed something (JSON: one report per line).
pub fn watch(
    engine: &Engine,
    mut request: SyncRequest,
    rescan_secs: u64,
    json: bool,
) -> Result<Outcome> {
    request.settle = Duration::from_millis(500);
    let options = WatchOptions {
        rescan: Duration::from_secs(rescan_secs),
        ..WatchOptions::default()
    };
    if !json {
        eprintln!(
            "folio: watching {} for library {} (Ctrl-C stops)",
            request.folder.display(),
            request.library
        );
    }
    let stop = AtomicBool::new(false);
    engine.watch(&request, &options, &stop, &mut |pass| match pass {
        Ok(report) if report.changed() || !report.failed.is_empty() => {
            let _ = print(&report, json);
        }
        Ok(_) => {}
        Err(e) => eprintln!("folio: {} (the watch goes on)", e.message),
    })?;
    Ok(Outcome::Success)
}

fn print(report: &SyncReport, json: bool) -> Result<()> {
    if json {
        return print_json(report);
    }
    let verb = if report.dry_run { "would " } else { "" };
    for path in &report.added {
        println!("{verb}add      {path}");
    }
    for path in &report.replaced {
        println!("{verb}replace  {path}");
    }
    for m in &report.moved {
        println!("{verb}move     {} -> {}", m.from, m.to);
    }
    for path in &report.removed {
        println!("{verb}remove   {path}");
    }
    for f in &report.failed {
        println!("failed   {}: {}", f.source, f.message);
    }
    println!(
        "{}: {} added, {} replaced, {} moved, {} removed, {} unchanged, {} failed ({} ms)",
        report.folder,
        report.added.len(),
        report.replaced.len(),
        report.moved.len(),
        report.removed.len(),
        report.unchanged + report.touched,
        report.failed.len(),
        report.elapsed_ms
    );
    Ok(())
}
