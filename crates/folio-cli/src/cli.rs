//! Command-line arguments and dispatch to the engine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use folio_engine::eval::EvalRequest;
use folio_engine::{Fusion, IngestRequest, IngestTarget, Mode, ResponseMode, SearchRequest};
use folio_store::Bm25;
use serde_json::{Map, Value};

use crate::common::{
    Global, Outcome, library, open, open_for_bulk_write, settle_bulk_write, usage,
};
use crate::config::Overrides;
use crate::progress::Bar;
use crate::{bench, entities, keys, models, output, records, reference, serve, sync};

#[derive(Parser)]
#[command(
    name = "folio",
    version,
    about = "Local-first document knowledge server for AI agents"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Ingest files, folders (recursively) and URLs into a library.
    Ingest(IngestArgs),
    /// Search a library.
    Search(SearchArgs),
    /// Show a document (metadata, and text or chunks on request).
    Get(GetArgs),
    /// List libraries, or the documents of one library.
    Ls(LsArgs),
    /// Delete a document, or with --library a whole library.
    Rm(RmArgs),
    /// Create an empty library (a citeloom project), pinned to the current
    /// model; ingesting creates libraries too.
    Create { library: String },
    /// Statistics of a library.
    Inspect { library: String },
    /// Check that every document of a library is whole in every index
    /// (exit 1 when not).
    Check { library: String },
    /// Re-embed a library with the current model (after a model change).
    Rebuild { library: String },
    /// Copy a library, vectors included, from another store into this one
    /// (an embedded data directory into PostgreSQL, or back). Resumable:
    /// documents already copied are left alone.
    Copy(CopyArgs),
    /// Evaluate retrieval on a BEIR directory (nDCG@10, Recall@100, MRR@10).
    Eval(EvalArgs),
    /// Benchmark search on a synthetic library, or the encoder on a corpus.
    Bench(bench::BenchArgs),
    /// Serve MCP over stdio (for Claude Desktop, Cursor, Claude Code) or HTTP.
    Serve(serve::ServeArgs),
    /// Declare or show a library's record schema (typed fields and rules).
    Schema(records::SchemaArgs),
    /// Counts and statistics of a library's records, grouped by fields.
    Facets(records::FacetsArgs),
    /// Attach a reference list (CSL-JSON or BibTeX) to a library's documents.
    References(records::ReferencesArgs),
    /// Find where a passage occurs: document, page and char offsets.
    Quote(records::QuoteArgs),
    /// Access keys of a shared server (`folio serve --http --auth keys`).
    Keys(keys::KeysArgs),
    /// The entities a library's documents mention most (names found while
    /// ingesting); `import` declares entities, `relink` reads the stored
    /// documents again for them.
    Entities(entities::EntitiesArgs),
    /// One entity's card: declared aliases, attributes and relations,
    /// mentions, documents, related entities with evidence.
    Entity(entities::EntityArgs),
    /// Make a library's documents from a folder exactly the folder's files:
    /// add, replace, move (nothing re-embedded) and remove, in one pass or,
    /// with --watch, whenever the folder changes.
    Sync(sync::SyncArgs),
    /// The model catalogue (`ls`), fetching from the Hugging Face hub
    /// (`pull`), and where an installed model is (`path`).
    Models(models::ModelsArgs),
    /// Print a shell completion script: `folio completions bash >
    /// ~/.local/share/bash-completion/completions/folio`.
    Completions(reference::CompletionsArgs),
    /// Print the man page, folio(1), in roff: `folio man | man -l -`.
    Man,
}

#[derive(Args)]
pub struct CopyArgs {
    /// The embedded store's data directory to copy from.
    #[arg(
        long,
        conflicts_with = "from_url",
        required_unless_present = "from_url"
    )]
    pub from: Option<PathBuf>,
    /// The PostgreSQL server to copy from.
    #[arg(long)]
    pub from_url: Option<String>,
    /// The library to copy.
    #[arg(long, short)]
    pub library: String,
}

#[derive(Args)]
pub struct IngestArgs {
    /// Files, folders or http(s) URLs.
    #[arg(required_unless_present = "zotero")]
    pub inputs: Vec<String>,
    #[arg(long, short, default_value = "default")]
    pub library: String,
    /// Do not descend into subfolders of the folders given.
    #[arg(long)]
    pub no_recursive: bool,
    /// Accepted for compatibility with bulk-ingest scripts (at least 1):
    /// folio reads files in turn and embeds them in batches on every core,
    /// whatever the value.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrency: u32,
    /// Title for the document (with a single input).
    #[arg(long)]
    pub title: Option<String>,
    /// Metadata as KEY=VALUE (repeatable); numbers and true/false are typed.
    #[arg(long = "meta", value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// Re-index even when unchanged.
    #[arg(long)]
    pub force: bool,
    /// Read the ZIP and TAR archives found in folders (each member a
    /// document under the archive's path); an archive named as an input is
    /// read either way.
    #[arg(long)]
    pub archives: bool,
    /// Allow URLs that resolve to private, loopback or link-local addresses.
    #[arg(long)]
    pub allow_private_urls: bool,
    /// Declare the library's record schema (TOML or JSON) before loading
    /// records (.jsonl, .json, .csv, .tsv inputs are records files).
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// A reference list (CSL-JSON or Better BibTeX .bib) whose entries are
    /// matched to the library's documents by DOI, file name or title.
    #[arg(long, value_name = "FILE")]
    pub references: Option<PathBuf>,
    /// A Zotero data directory (e.g. ~/Zotero): its items' PDF/HTML/EPUB/image
    /// attachments become documents with the items' citation metadata.
    #[arg(long, value_name = "DIR")]
    pub zotero: Option<PathBuf>,
    /// With --zotero: only items in this collection (or its subcollections).
    #[arg(long, requires = "zotero")]
    pub collection: Option<String>,
    /// With --zotero: only items with this tag.
    #[arg(long, requires = "zotero")]
    pub tag: Option<String>,
    /// OCR languages for scanned PDF pages, comma-separated (en,de or
    /// eng,deu); a Zotero item's own language comes first, [ocr] languages
    /// after.
    #[arg(long, value_delimiter = ',', value_name = "LANGS")]
    pub ocr_languages: Vec<String>,
    /// After ingesting one folder, keep following its changes (`folio sync
    /// --watch`) until interrupted.
    #[arg(long, conflicts_with_all = ["zotero", "no_recursive"])]
    pub watch: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FusionArg {
    Weighted,
    Rrf,
}

/// The search modes, with the other names the engine takes for them.
fn modes() -> PossibleValuesParser {
    PossibleValuesParser::new([
        PossibleValue::new("hybrid"),
        PossibleValue::new("lexical").aliases(["bm25", "keyword"]),
        PossibleValue::new("dense").aliases(["semantic", "vector"]),
    ])
}

fn response_modes() -> PossibleValuesParser {
    PossibleValuesParser::new([
        PossibleValue::new("ids_only").alias("ids"),
        PossibleValue::new("metadata"),
        PossibleValue::new("preview"),
        PossibleValue::new("full"),
    ])
}

/// Fusion and BM25 parameters shared by search and eval.
#[derive(Args, Clone)]
pub struct RankingArgs {
    /// hybrid (BM25 and vectors fused), lexical (BM25) or dense (vectors).
    #[arg(long, default_value = "hybrid", value_parser = modes())]
    pub mode: String,
    /// Hybrid fusion: weighted (default) or rrf.
    #[arg(long, value_enum)]
    pub fusion: Option<FusionArg>,
    /// RRF k.
    #[arg(long)]
    pub rrf_k: Option<f32>,
    /// Weight of the lexical ranking (weighted: in [0, 1]; rrf: any >= 0).
    #[arg(long)]
    pub lexical_weight: Option<f32>,
    /// Weight of the dense ranking (rrf).
    #[arg(long)]
    pub dense_weight: Option<f32>,
    #[arg(long)]
    pub k1: Option<f32>,
    #[arg(long)]
    pub b: Option<f32>,
    /// Rerank the best candidates with the configured cross-encoder.
    #[arg(long, conflicts_with = "no_rerank")]
    pub rerank: bool,
    /// Do not rerank, even where the configuration enables it.
    #[arg(long)]
    pub no_rerank: bool,
}

impl RankingArgs {
    fn rerank(&self) -> Option<bool> {
        match (self.rerank, self.no_rerank) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }

    fn mode(&self) -> Result<Mode> {
        Mode::parse(&self.mode).ok_or_else(|| {
            usage(format!(
                "unknown mode {:?} (use hybrid, lexical or dense)",
                self.mode
            ))
        })
    }

    fn fusion(&self) -> Option<Fusion> {
        match self.fusion {
            Some(FusionArg::Rrf) => Some(Fusion::Rrf {
                k: self.rrf_k.unwrap_or(60.0),
                lexical_weight: self.lexical_weight.unwrap_or(1.0),
                dense_weight: self.dense_weight.unwrap_or(1.0),
            }),
            Some(FusionArg::Weighted) => Some(Fusion::Weighted {
                lexical_weight: self.lexical_weight.unwrap_or(0.5),
            }),
            None => self
                .lexical_weight
                .map(|w| Fusion::Weighted { lexical_weight: w }),
        }
    }

    fn bm25(&self) -> Option<Bm25> {
        (self.k1.is_some() || self.b.is_some()).then(|| {
            let d = Bm25::default();
            Bm25 {
                k1: self.k1.unwrap_or(d.k1),
                b: self.b.unwrap_or(d.b),
            }
        })
    }
}

#[derive(Args)]
pub struct SearchArgs {
    pub query: String,
    #[arg(long, short)]
    pub library: String,
    #[command(flatten)]
    pub ranking: RankingArgs,
    #[arg(long, short = 'k', default_value_t = 10)]
    pub top_k: usize,
    /// Filter as JSON, e.g. '{"year": {"gte": 2019}, "tags": ["ml"]}'.
    #[arg(long)]
    pub filter: Option<String>,
    /// How much of each hit: ids_only, metadata, preview (about 200
    /// characters) or full (the chunk's text, up to --max-chars).
    #[arg(long, default_value = "preview", value_parser = response_modes())]
    pub response_mode: String,
    /// Cap on each chunk's text in full mode.
    #[arg(long, default_value_t = 1800)]
    pub max_chars: usize,
    /// One hit per chunk instead of per document.
    #[arg(long)]
    pub no_group: bool,
}

#[derive(Args)]
pub struct GetArgs {
    pub id: String,
    /// Print the document text.
    #[arg(long)]
    pub text: bool,
    /// Print the chunks.
    #[arg(long)]
    pub chunks: bool,
    /// Print the records just before and after this one (in the order its
    /// library's schema declares, or --order-by within --group-by).
    #[arg(long)]
    pub neighbours: bool,
    #[arg(long, requires = "neighbours")]
    pub order_by: Option<String>,
    #[arg(long, requires = "order_by")]
    pub group_by: Vec<String>,
}

#[derive(Args)]
pub struct LsArgs {
    pub library: Option<String>,
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
    #[arg(long, default_value_t = 100)]
    pub limit: u64,
}

#[derive(Args)]
pub struct RmArgs {
    /// Document id.
    pub id: Option<String>,
    /// Delete this whole library instead.
    #[arg(long)]
    pub library: Option<String>,
}

#[derive(Args)]
pub struct EvalArgs {
    pub dir: PathBuf,
    #[command(flatten)]
    pub ranking: RankingArgs,
    #[arg(long)]
    pub qrels: Option<PathBuf>,
    /// Write the ranking as JSON {query_id: {doc_id: score}}.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// Scratch library name (default eval.<dir name>).
    #[arg(long)]
    pub library: Option<String>,
    /// Only the first N judged queries.
    #[arg(long)]
    pub max_queries: Option<usize>,
    /// Candidates each retriever contributes to fusion (default: as an
    /// agent's search, 300).
    #[arg(long)]
    pub depth: Option<usize>,
}

fn parse_meta(pairs: &[String]) -> Result<Map<String, Value>> {
    let mut map = Map::new();
    for pair in pairs {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| usage(format!("--meta {pair:?} is not KEY=VALUE")))?;
        let value = match serde_json::from_str::<Value>(value) {
            Ok(v @ (Value::Number(_) | Value::Bool(_))) => v,
            _ => Value::String(value.to_string()),
        };
        map.insert(key.to_string(), value);
    }
    Ok(map)
}

fn is_url(input: &str) -> bool {
    input.starts_with("http://") || input.starts_with("https://")
}

pub fn run(cli: Cli) -> Result<Outcome> {
    let mut overrides = Overrides {
        data_dir: cli.global.data_dir.clone(),
        store_url: cli.global.store_url.clone(),
        backend: cli.global.backend.clone(),
        model_dir: cli.global.model_dir.clone(),
        model: cli.global.model.clone(),
        threads: cli.global.threads,
        allow_private_urls: false,
        defer_model_fetch: false,
    };
    let json = cli.global.json;
    match &cli.command {
        Command::Serve(args) => serve::run(&cli.global, args, overrides),
        Command::Completions(args) => reference::completions(args, Cli::command()),
        Command::Man => reference::man(Cli::command()),
        Command::Ingest(args) => {
            overrides.allow_private_urls = args.allow_private_urls;
            let engine = open_for_bulk_write(&cli.global, &overrides)?;
            if let Some(path) = &args.schema {
                let schema = records::read_schema(path)?;
                engine.set_record_schema(&library(&args.library)?, &schema)?;
            }
            let mut targets = Vec::new();
            for input in &args.inputs {
                let path = PathBuf::from(input);
                if is_url(input) {
                    targets.push(IngestTarget::Url(input.clone()));
                } else if args.no_recursive && path.is_dir() {
                    let files = folio_engine::files_in(&path, args.archives)
                        .with_context(|| format!("cannot read folder {input}"))?;
                    targets.extend(files.into_iter().map(IngestTarget::Path));
                } else {
                    targets.push(IngestTarget::Path(path));
                }
            }
            let request = IngestRequest {
                library: library(&args.library)?,
                targets,
                metadata: parse_meta(&args.meta)?,
                title: args.title.clone(),
                force: args.force,
                archives: args.archives,
                ocr_languages: args.ocr_languages.clone(),
                dedup: folio_engine::Dedup::Content,
                allow_private_urls: None,
                // Text output prints each document as it settles; JSON
                // output is one report of them all.
                keep_items: json,
            };
            let bar = |label| {
                let bar = Bar::new(label, !json);
                if json { bar } else { bar.printing_items() }
            };
            let mut report = engine.ingest(&request, &bar("ingest"))?;
            if let Some(dir) = &args.zotero {
                let zotero = folio_engine::zotero::ZoteroRequest {
                    dir: dir.clone(),
                    library: request.library.clone(),
                    collection: args.collection.clone(),
                    tag: args.tag.clone(),
                    force: args.force,
                    ocr_languages: args.ocr_languages.clone(),
                };
                let more = engine.ingest_zotero(&zotero, &bar("zotero"))?;
                report.absorb(more);
            }
            settle_bulk_write(&engine, report.chunks, json);
            match &args.references {
                Some(path) if json => {
                    // One JSON document: the report with what the references matched.
                    let attached = records::attach_quietly(&engine, &request.library, path)?;
                    let mut value = serde_json::to_value(&report)?;
                    value["references"] = serde_json::to_value(&attached)?;
                    output::ingest_failures(&report);
                    output::print_json(&value)?;
                }
                Some(path) => {
                    output::ingest(&report, json)?;
                    records::attach(&engine, &request.library, path, json)?;
                }
                None => output::ingest(&report, json)?,
            }
            if args.watch {
                let folder = match args.inputs.as_slice() {
                    [one] if Path::new(one).is_dir() => PathBuf::from(one),
                    _ => return Err(usage("--watch follows exactly one folder")),
                };
                let request = crate::sync::request(
                    &args.library,
                    folder,
                    Vec::new(),
                    Duration::ZERO,
                    args.archives,
                )?;
                return crate::sync::watch(&engine, request, 300, json);
            }
            Ok(if report.failed > 0 {
                Outcome::PartialFailure
            } else {
                Outcome::Success
            })
        }
        Command::Search(args) => {
            let engine = open(&cli.global, &overrides, false)?;
            let filter = records::parse_filter(args.filter.as_deref())?;
            let mut request = SearchRequest::new(library(&args.library)?, args.query.clone());
            request.mode = args.ranking.mode()?;
            request.fusion = args.ranking.fusion();
            request.bm25 = args.ranking.bm25();
            request.rerank = args.ranking.rerank();
            request.top_k = args.top_k;
            request.filter = filter;
            request.response_mode = ResponseMode::parse(&args.response_mode)
                .ok_or_else(|| usage(format!("unknown response mode {:?}", args.response_mode)))?;
            request.max_chars_per_chunk = args.max_chars;
            request.group_by_document = !args.no_group;
            let response = engine.search(&request)?;
            output::search(&response, json)?;
            Ok(Outcome::Success)
        }
        Command::Get(args) => {
            let engine = open(&cli.global, &overrides, false)?;
            let document = engine.document(&args.id)?;
            let chunks = if args.chunks {
                engine.chunks(&args.id, 0..u32::MAX)?
            } else {
                Vec::new()
            };
            output::document(&document, &chunks, args.text, json && !args.neighbours)?;
            if args.neighbours {
                let order = args
                    .order_by
                    .as_ref()
                    .map(|field| folio_core::NeighbourOrder {
                        order_by: field.clone(),
                        group_by: args.group_by.clone(),
                        strict: false,
                    });
                let (before, after) = engine.neighbours(&args.id, order.as_ref())?;
                output::neighbours(&document, before.as_ref(), after.as_ref(), json)?;
            }
            Ok(Outcome::Success)
        }
        Command::Ls(args) => {
            let engine = open(&cli.global, &overrides, false)?;
            match &args.library {
                None => output::libraries(&engine.libraries()?, json)?,
                Some(name) => {
                    let (documents, total) =
                        engine.documents(&library(name)?, args.offset, args.limit)?;
                    output::documents(&documents, total, args.offset, json)?;
                }
            }
            Ok(Outcome::Success)
        }
        Command::Rm(args) => {
            let engine = open(&cli.global, &overrides, true)?;
            match (&args.id, &args.library) {
                (Some(id), None) => {
                    engine.delete_document(id)?;
                    output::deleted("document", id, json)?;
                }
                (None, Some(name)) => {
                    engine.delete_library(&library(name)?)?;
                    output::deleted("library", name, json)?;
                }
                _ => return Err(usage("give either a document id or --library NAME")),
            }
            Ok(Outcome::Success)
        }
        Command::Create { library: name } => {
            let engine = open(&cli.global, &overrides, true)?;
            let info = engine.create_library(&library(name)?)?;
            output::libraries(&[info], json)?;
            Ok(Outcome::Success)
        }
        Command::Inspect { library: name } => {
            let engine = open(&cli.global, &overrides, false)?;
            output::stats(&engine.inspect(&library(name)?)?, json)?;
            Ok(Outcome::Success)
        }
        Command::Check { library: name } => {
            let engine = open(&cli.global, &overrides, false)?;
            let integrity = engine.verify(&library(name)?)?;
            output::integrity(&integrity, json)?;
            Ok(if integrity.problems.is_empty() {
                Outcome::Success
            } else {
                Outcome::PartialFailure
            })
        }
        Command::Rebuild { library: name } => {
            let engine = open(&cli.global, &overrides, true)?;
            let count = engine.rebuild(&library(name)?, &Bar::new("rebuild", !json))?;
            output::rebuilt(name, count, json)?;
            Ok(Outcome::Success)
        }
        Command::Copy(args) => {
            let from = match (&args.from, &args.from_url) {
                (Some(dir), _) => folio_engine::StoreLocation::Directory(dir.clone()),
                (None, Some(url)) => folio_engine::StoreLocation::Url(url.clone()),
                (None, None) => return Err(usage("give --from DIR or --from-url URL")),
            };
            let engine = open(&cli.global, &overrides, true)?;
            let report =
                engine.copy_library(&from, &library(&args.library)?, &Bar::new("copy", !json))?;
            output::copied(&report, json)?;
            Ok(Outcome::Success)
        }
        Command::Eval(args) => {
            let engine = open(&cli.global, &overrides, true)?;
            let request = EvalRequest {
                dir: args.dir.clone(),
                library: args.library.as_deref().map(library).transpose()?,
                mode: args.ranking.mode()?,
                qrels: args.qrels.clone(),
                fusion: args.ranking.fusion(),
                bm25: args.ranking.bm25(),
                rerank: args.ranking.rerank(),
                max_queries: args.max_queries,
                depth: args.depth,
            };
            let report = engine.eval(&request, &Bar::new("ingest corpus", !json))?;
            if let Some(path) = &args.run {
                let body = serde_json::to_vec(&report.run)?;
                std::fs::write(path, body)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            output::eval(&report, json)?;
            Ok(Outcome::Success)
        }
        Command::Bench(args) => bench::run(&cli.global, &overrides, args),
        Command::Schema(args) => {
            let engine = open(&cli.global, &overrides, args.file.is_some())?;
            records::schema(&engine, args, json)?;
            Ok(Outcome::Success)
        }
        Command::References(args) => {
            let engine = open(&cli.global, &overrides, true)?;
            records::attach(&engine, &library(&args.library)?, &args.file, json)?;
            Ok(Outcome::Success)
        }
        Command::Keys(args) => {
            let writes = !matches!(args.command, keys::KeysCommand::Ls);
            let engine = open(&cli.global, &overrides, writes)?;
            keys::run(&engine, args, json)?;
            Ok(Outcome::Success)
        }
        Command::Quote(args) => {
            let engine = open(&cli.global, &overrides, false)?;
            let found = records::quote(&engine, args, json)?;
            Ok(if found {
                Outcome::Success
            } else {
                Outcome::PartialFailure
            })
        }
        Command::Facets(args) => {
            let engine = open(&cli.global, &overrides, false)?;
            records::facets(&engine, args, json)?;
            Ok(Outcome::Success)
        }
        Command::Entities(args) => {
            let engine = open(&cli.global, &overrides, entities::writes(args))?;
            entities::entities(&engine, args, json)?;
            Ok(Outcome::Success)
        }
        Command::Models(args) => models::run(args, cli.global.config.as_deref(), json),
        Command::Sync(args) => {
            let engine = match args.dry_run {
                true => open(&cli.global, &overrides, false)?,
                false => open_for_bulk_write(&cli.global, &overrides)?,
            };
            sync::run(&engine, args, json)
        }
        Command::Entity(args) => {
            let engine = open(&cli.global, &overrides, false)?;
            entities::entity(&engine, args, json)?;
            Ok(Outcome::Success)
        }
    }
}
