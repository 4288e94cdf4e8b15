//! `folio models`: the catalogue, what the hub cache holds, fetching.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use folio_embed::catalog::{self, CATALOG, Role};
use folio_embed::hub::Hub;
use serde_json::json;

use crate::common::Outcome;
use crate::config;
use crate::fetch::{Wanted, has_graph, materialise, megabytes};

#[derive(Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub command: ModelsCommand,
}

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// The catalogue: which models are installed, download sizes,
    /// dimensions, pooling and prefixes.
    Ls,
    /// Fetch a model into the hub cache: a catalogue name, or a hub id
    /// ORG/NAME[@REVISION] (the ONNX graph when ONNX Runtime is there, else
    /// the safetensors for the candle path).
    Pull {
        model: String,
        /// Fetch the safetensors for the candle path even with ONNX Runtime.
        #[arg(long)]
        candle: bool,
    },
    /// Print the folder of an installed model (nothing is fetched).
    Path { model: String },
}

/// Runs `folio models`.
pub fn run(args: &ModelsArgs, config: Option<&Path>, json: bool) -> Result<Outcome> {
    match &args.command {
        ModelsCommand::Ls => list(config, json),
        ModelsCommand::Pull { model, candle } => {
            let wanted = Wanted::parse(model)?;
            if let Wanted::Folder(dir) = &wanted {
                bail!("{} is a folder already: nothing to fetch", dir.display());
            }
            let onnx = !candle && config::runtime_available(config)?;
            let dir = materialise(&wanted, onnx)?;
            if json {
                println!("{}", json!({"model": model, "path": dir}));
            } else {
                println!("{}", dir.display());
            }
            Ok(Outcome::Success)
        }
        ModelsCommand::Path { model } => {
            let wanted = Wanted::parse(model)?;
            let dir = match &wanted {
                Wanted::Folder(dir) => dir.clone(),
                _ => installed(&Hub::from_env(), &wanted).with_context(|| {
                    format!("{model} is not installed: `folio models pull {model}` fetches it")
                })?,
            };
            println!("{}", dir.display());
            Ok(Outcome::Success)
        }
    }
}

/// The snapshot folder of a model whole in the hub cache, for either path.
fn installed(hub: &Hub, wanted: &Wanted) -> Option<PathBuf> {
    let (repo, revision) = wanted.repo_revision()?;
    [true, false]
        .into_iter()
        .find_map(|onnx| hub.cached(repo, revision, &wanted.files(onnx)))
}

fn list(config: Option<&Path>, json: bool) -> Result<Outcome> {
    let hub = Hub::from_env();
    let runtime = config::runtime_available(config)?;
    // Each entry once: what it is, and where (whether) it is installed.
    let rows: Vec<_> = CATALOG
        .iter()
        .map(|entry| {
            let path = installed(&hub, &Wanted::Catalogued(entry));
            let graph = path.as_deref().is_some_and(has_graph);
            let embedding = entry.role == Role::Embedding;
            let pooling = embedding.then(|| format!("{:?}", entry.pooling).to_lowercase());
            (entry, path, graph, embedding, pooling)
        })
        .collect();
    if json {
        let models: Vec<_> = rows
            .iter()
            .map(|(entry, path, graph, embedding, pooling)| {
                json!({
                    "name": entry.name,
                    "repo": entry.repo,
                    "revision": entry.revision,
                    "role": if *embedding { "embedding" } else { "reranker" },
                    "dimension": embedding.then_some(entry.dim),
                    "pooling": pooling,
                    "window": entry.window,
                    "query_prefix": entry.query_prefix,
                    "passage_prefix": entry.passage_prefix,
                    "download_bytes": entry.download_bytes(runtime),
                    "onnx": entry.onnx.is_some(),
                    "candle": entry.runs_on_candle(),
                    "installed": path.is_some(),
                    "installed_graph": graph,
                    "path": path,
                    "default": entry.name == catalog::DEFAULT_MODEL,
                    "note": entry.note,
                })
            })
            .collect();
        println!(
            "{}",
            json!({"cache": hub.cache, "endpoint": hub.endpoint, "onnx_runtime": runtime, "models": models})
        );
        return Ok(Outcome::Success);
    }
    println!(
        "{:<24} {:<9} {:>5} {:>7} {:>9}  {:<10} note",
        "name", "role", "dim", "pooling", "download", "installed"
    );
    for (entry, path, graph, embedding, pooling) in &rows {
        let installed = match (path, graph) {
            (Some(_), true) => "yes (onnx)",
            (Some(_), false) => "yes",
            (None, _) => "no",
        };
        println!(
            "{:<24} {:<9} {:>5} {:>7} {:>9}  {:<10} {}",
            entry.name,
            if *embedding { "embedding" } else { "reranker" },
            if *embedding {
                entry.dim.to_string()
            } else {
                "-".into()
            },
            pooling.as_deref().unwrap_or("-"),
            megabytes(entry.download_bytes(runtime)),
            installed,
            entry.note,
        );
    }
    eprintln!(
        "hub cache {} (HF_HOME / HF_HUB_CACHE), endpoint {}; ONNX Runtime {}",
        hub.cache.display(),
        hub.endpoint,
        if runtime {
            "found"
        } else {
            "not found: the candle path runs"
        }
    );
    Ok(Outcome::Success)
}
