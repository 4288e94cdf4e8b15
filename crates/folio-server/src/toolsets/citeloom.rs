//! The citeloom toolset (seeds 000 and 001): project-scoped, time-bounded,
//! citation-ready retrieval. A project is a folio library. Errors use
//! `{"error": {"code", "message", "details"}}` with the seed's codes; every
//! response carries a correlation id.

use std::path::PathBuf;
use std::time::Instant;

use folio_core::{ErrorCode, Filter, LibraryName};
use folio_engine::{EngineError, Mode, ResponseMode, SearchRequest};
use folio_search::Fusion;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::ops::{self, Call, Shared, Touches, Written};
use crate::tool::{Effect, define, linking, success, with_args};
use crate::toolsets::common::{self, error, error_with, invalid, project, store_chunks_tool};

/// The sparse side of hybrid search, as citeloom names it.
const SPARSE_MODEL: &str = "folio/bm25";
/// Results per query unless asked otherwise, and the most allowed.
const DEFAULT_TOP_K: usize = 6;
const MAX_TOP_K: usize = 20;
const MAX_SAMPLE: usize = 5;
/// The seeds' max_chars_per_chunk policy for render_text.
const MAX_CHARS_PER_CHUNK: usize = 1_800;

// ---------------------------------------------------------------- retrieval

/// The parameters of query, find_chunks and query_hybrid. Seed 000 names
/// the query `text`, seed 001 `query`: either is accepted by every tool,
/// and the schema requires one of them.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [{"required": ["text"]}, {"required": ["query"]}]))]
struct QueryParams {
    /// Project identifier (e.g. citeloom/clean-arch).
    project: String,
    /// Query text. Give this or `query`.
    #[serde(default)]
    text: Option<String>,
    /// Query text (the same as `text`). Give this or `text`.
    #[serde(default)]
    query: Option<String>,
    /// Maximum results (default 6, at most 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    top_k: Option<usize>,
    /// Additional filters, e.g. {"tags": ["architecture"], "section_prefix": "Part I"}:
    /// tags must all match; section_prefix matches each heading of the section path from its start to a word boundary.
    /// A project filter here is ignored: the project parameter always applies.
    #[serde(default)]
    filters: Option<Map<String, Value>>,
    /// Include each chunk's untrimmed text as full_text (default false).
    #[serde(default)]
    include_full_text: bool,
}

impl QueryParams {
    /// The query, from whichever name the caller used.
    fn query_text(&self) -> Result<String, EngineError> {
        match (&self.text, &self.query) {
            (Some(text), Some(query)) if text != query => Err(EngineError::invalid(
                "text and query are two names of one parameter: give one",
            )),
            (Some(text), _) | (None, Some(text)) => Ok(text.clone()),
            (None, None) => Err(EngineError::invalid("missing field `text` (or `query`)")),
        }
    }
}

/// A citation-ready result.
#[derive(Debug, Serialize, JsonSchema)]
struct Item {
    /// The chunk text trimmed to max_chars_per_chunk (1,800 characters).
    render_text: String,
    /// In [0, 1].
    score: f32,
    citekey: Option<String>,
    /// The innermost heading.
    section: Option<String>,
    /// First and last page, when the source has pages.
    page_span: Option<[u32; 2]>,
    section_path: Vec<String>,
    doi: Option<String>,
    url: Option<String>,
    title: Option<String>,
    source: Option<String>,
    document_id: String,
    chunk_id: String,
    /// The untrimmed chunk text, only when include_full_text is true.
    full_text: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct QueryOutput {
    items: Vec<Item>,
    count: usize,
    model: String,
    correlation_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct FindChunksOutput {
    items: Vec<Item>,
    count: usize,
    correlation_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct HybridOutput {
    items: Vec<Item>,
    count: usize,
    hybrid_enabled: bool,
    dense_model: String,
    sparse_model: String,
    fusion: String,
    correlation_id: String,
}

fn text_field(metadata: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match metadata.get(*k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

/// Filters from citeloom's shape: the project key is dropped (the project
/// parameter is enforced server-side); tags must all match.
fn filters(given: Option<Map<String, Value>>) -> Result<Filter, EngineError> {
    let mut given = given.unwrap_or_default();
    for key in ["project", "project_id"] {
        given.remove(key);
    }
    let tags = given.remove("tags");
    let mut filter = Filter::from_json(&Value::Object(given))?;
    match tags {
        None | Some(Value::Null) => {}
        Some(Value::Array(tags)) => {
            for tag in tags {
                filter.conditions.push(folio_core::Condition::Equals {
                    field: "tags".into(),
                    value: tag,
                });
            }
        }
        Some(tag) => filter.conditions.push(folio_core::Condition::Equals {
            field: "tags".into(),
            value: tag,
        }),
    }
    Ok(filter)
}

/// Runs a retrieval and shapes its items into the tool's output, or the
/// citeloom error envelope.
async fn answer<O: Serialize>(
    shared: &Shared,
    p: QueryParams,
    mode: Mode,
    call: &Call,
    output: impl FnOnce(Vec<Item>, String) -> O,
) -> CallToolResult {
    let project = p.project.clone();
    match retrieve(shared, p, mode, call).await {
        Ok((items, model)) => {
            let cited: Vec<_> = items
                .iter()
                .map(|i| (i.document_id.clone(), i.title.clone()))
                .collect();
            linking(success(&output(items, model)), cited)
        }
        Err(e) => error(shared, call, &e, Some(&project)),
    }
}

async fn retrieve(
    shared: &Shared,
    r: QueryParams,
    mode: Mode,
    call: &Call,
) -> Result<(Vec<Item>, String), EngineError> {
    let query = r.query_text()?;
    let top_k = r.top_k.unwrap_or(DEFAULT_TOP_K);
    if !(1..=MAX_TOP_K).contains(&top_k) {
        return Err(EngineError::invalid(format!(
            "top_k must be between 1 and {MAX_TOP_K} (got {top_k})"
        )));
    }
    let name = project(&r.project)?;
    let filter = filters(r.filters)?;
    let mut request = SearchRequest::new(name.clone(), query);
    request.mode = mode;
    request.top_k = top_k;
    request.filter = filter;
    request.response_mode = ResponseMode::Full;
    request.group_by_document = false;
    request.max_chars_per_chunk = usize::MAX / 2;
    if mode == Mode::Hybrid {
        request.fusion = Some(Fusion::Rrf {
            k: 60.0,
            lexical_weight: 1.0,
            dense_weight: 1.0,
        });
    }
    let touched = name.clone();
    let (response, model) = ops::run(shared, call, Touches::Library(&touched), move |engine| {
        let info = engine.library(&name)?;
        Ok((engine.search(&request)?, info.space.model))
    })
    .await?;
    let items = response
        .hits
        .into_iter()
        .map(|hit| {
            let metadata = hit.metadata.unwrap_or_default();
            let full = hit.text.unwrap_or_default();
            let section_path = hit.section_path.unwrap_or_default();
            // A chunk stored with its own section keeps it.
            let section = metadata
                .get("payload")
                .and_then(|p| p.get("doc"))
                .and_then(|d| d.get("section"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| section_path.last().cloned());
            Item {
                render_text: render_text(&full, MAX_CHARS_PER_CHUNK),
                score: hit.score.clamp(0.0, 1.0),
                citekey: text_field(&metadata, &["citekey", "citation_key"]),
                section,
                page_span: hit
                    .page_start
                    .map(|start| [start, hit.page_end.unwrap_or(start)]),
                section_path,
                doi: text_field(&metadata, &["doi", "DOI"]),
                url: text_field(&metadata, &["url", "URL"]),
                title: hit.title,
                source: hit.source,
                document_id: hit.document_id,
                chunk_id: hit.chunk_id,
                full_text: r.include_full_text.then_some(full),
            }
        })
        .collect();
    Ok((items, model))
}

/// `text` trimmed to at most `max` characters: cut at the last word
/// boundary that leaves room for "...", which marks the cut.
fn render_text(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let room: String = text.chars().take(max.saturating_sub(3)).collect();
    let cut = match room.rfind(char::is_whitespace) {
        Some(at) if at > 0 => room[..at].trim_end(),
        _ => room.as_str(),
    };
    format!("{cut}...")
}

// ---------------------------------------------------------------- writes

#[derive(Debug, Deserialize, JsonSchema)]
struct IngestOptions {
    /// Explicit OCR language codes for scanned PDF pages (en, de, eng, ...);
    /// a Zotero item's own language comes first, the server's default
    /// (en, de) after.
    #[serde(default)]
    ocr_languages: Option<Vec<String>>,
    /// A CSL-JSON (or BibTeX) references file matched to the project's
    /// documents by DOI, file name or title.
    #[serde(default)]
    references_path: Option<String>,
    /// With source "zotero": the Zotero data directory (default: the
    /// server's FOLIO_ZOTERO_DIR, else ~/Zotero).
    #[serde(default)]
    zotero_dir: Option<String>,
    /// With source "zotero": only items in this collection.
    #[serde(default)]
    collection: Option<String>,
    /// With source "zotero": only items with this tag.
    #[serde(default)]
    tag: Option<String>,
    /// Re-embed the project with the current model first when it was built
    /// with another one.
    #[serde(default)]
    force_rebuild: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct IngestFromSourceParams {
    /// Project identifier: an existing project (INVALID_PROJECT otherwise).
    project: String,
    /// A file or folder path on the server, or "zotero" (options.zotero_dir,
    /// options.collection, options.tag select the items).
    source: String,
    #[serde(default)]
    options: Option<IngestOptions>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct IngestFromSourceOutput {
    chunks_written: u64,
    documents_processed: usize,
    project: String,
    dense_model: String,
    sparse_model: String,
    duration_seconds: f64,
    warnings: Vec<String>,
    correlation_id: String,
}

/// A file's name, as the seed's warnings name documents.
fn file_name(source: &str) -> &str {
    source.rsplit(['/', '\\']).next().unwrap_or(source)
}

async fn ingest_from_source(
    shared: &Shared,
    p: IngestFromSourceParams,
    call: &Call,
) -> CallToolResult {
    let started = Instant::now();
    let name = match project(&p.project) {
        Ok(n) => n,
        Err(e) => return error(shared, call, &e, Some(&p.project)),
    };
    let options = p.options.unwrap_or(IngestOptions {
        ocr_languages: None,
        references_path: None,
        zotero_dir: None,
        collection: None,
        tag: None,
        force_rebuild: false,
    });
    let zotero = p.source.trim().eq_ignore_ascii_case("zotero")
        || p.source.trim().starts_with("source=zotero");
    let ocr_languages = options.ocr_languages.unwrap_or_default();
    let source = if zotero {
        ops::Source::Zotero(folio_engine::zotero::ZoteroRequest {
            dir: ops::zotero_dir(options.zotero_dir.map(PathBuf::from)),
            library: name.clone(),
            collection: options.collection,
            tag: options.tag,
            force: false,
            ocr_languages: ocr_languages.clone(),
        })
    } else {
        ops::Source::Path(PathBuf::from(p.source.trim()))
    };
    let ingest = ops::SourceIngest {
        library: name,
        source,
        ocr_languages,
        // Seed 000: projects are made beforehand (`folio create`), never
        // here: the operation refuses a library that does not exist.
        references: options.references_path.map(PathBuf::from),
        rebuild_on_model_change: options.force_rebuild,
    };
    let ops::Ingested {
        report,
        model,
        unmatched,
    } = match ops::ingest_source(shared, call, ingest).await {
        Written::Done(Ok(done)) => done,
        Written::Done(Err(e)) => return error(shared, call, &e, Some(&p.project)),
        Written::TimedOut { error, stopped } => {
            return timed_out(shared, call, error, &p.project, stopped.map(|d| d.report));
        }
    };
    let mut warnings = Vec::new();
    for item in &report.items {
        if let Some(e) = &item.error {
            warnings.push(format!("{}: {}", item.source, e.message));
        }
        for warning in &item.warnings {
            warnings.push(format!("{}: {warning}", item.source));
        }
        if item.error.is_none() && unmatched.contains(&item.source) {
            warnings.push(format!(
                "Metadata not found for document '{}'",
                file_name(&item.source)
            ));
        }
    }
    if report.cancelled {
        warnings.push(format!(
            "cancelled: {} documents were not processed",
            report.pending
        ));
    }
    if report.failed > 0 && report.indexed + report.replaced + report.skipped == 0 {
        let first = report.items.iter().find_map(|i| i.error.clone());
        if let Some(e) = first {
            return error(shared, call, &e, Some(&p.project));
        }
    }
    success(&IngestFromSourceOutput {
        chunks_written: report.chunks,
        documents_processed: report.indexed + report.replaced + report.skipped,
        project: p.project,
        dense_model: model,
        sparse_model: SPARSE_MODEL.into(),
        duration_seconds: started.elapsed().as_secs_f64(),
        warnings,
        correlation_id: call.correlation_id.clone(),
    })
}

/// The TIMEOUT envelope of an ingest, with what it finished before it
/// stopped: those documents stay written, and a retry skips them.
fn timed_out(
    shared: &Shared,
    call: &Call,
    error: EngineError,
    project: &str,
    stopped: Result<folio_engine::IngestReport, EngineError>,
) -> CallToolResult {
    let mut details = Map::new();
    let message = match stopped {
        Ok(report) => {
            let processed = report.indexed + report.replaced + report.skipped;
            details.insert("documents_processed".into(), json!(processed));
            details.insert("chunks_written".into(), json!(report.chunks));
            details.insert("documents_failed".into(), json!(report.failed));
            details.insert("documents_pending".into(), json!(report.pending));
            format!(
                "{}: stopped after {processed} documents ({} chunks written, kept; {} failed); \
                 {} documents were not processed: call again to continue (finished documents \
                 are skipped)",
                error.message, report.chunks, report.failed, report.pending
            )
        }
        Err(e) if e.code != ErrorCode::Timeout => {
            format!("{}: stopped on an error: {e}", error.message)
        }
        Err(_) => format!("{}: stopped; nothing was written", error.message),
    };
    let error = EngineError::new(ErrorCode::Timeout, message);
    error_with(shared, call, &error, Some(project), details)
}

// ---------------------------------------------------------------- inspection

#[derive(Debug, Deserialize, JsonSchema)]
struct InspectParams {
    /// Project identifier.
    project: String,
    /// Sample payloads to return (0 to 5, default 0).
    #[serde(default)]
    #[schemars(range(min = 0, max = 5))]
    sample: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Indexes {
    keyword: Vec<String>,
    fulltext: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Storage {
    on_disk_vectors: bool,
    on_disk_hnsw: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
struct InspectOutput {
    project: String,
    collection: String,
    size: u64,
    dense_model: String,
    sparse_model: String,
    embed_model: String,
    named_vectors: Vec<String>,
    payload_keys: Vec<String>,
    indexes: Indexes,
    storage: Storage,
    sample_payloads: Vec<Value>,
    /// The same payloads under seed 001's name.
    sample: Vec<Value>,
    correlation_id: String,
}

fn collection(project: &str) -> String {
    let slug: String = project
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("proj-{slug}")
}

async fn inspect_collection(shared: &Shared, p: InspectParams, call: &Call) -> CallToolResult {
    if p.sample > MAX_SAMPLE {
        return invalid(
            shared,
            call,
            format!(
                "sample must be between 0 and {MAX_SAMPLE} (got {})",
                p.sample
            ),
            Some(&p.project),
        );
    }
    let name = match project(&p.project) {
        Ok(n) => n,
        Err(e) => return error(shared, call, &e, Some(&p.project)),
    };
    let sample = p.sample;
    let touched = name.clone();
    let result = ops::run(shared, call, Touches::Library(&touched), move |engine| {
        let stats = engine.inspect(&name)?;
        let (documents, _) = engine.documents(&name, 0, sample as u64)?;
        let mut payloads = Vec::new();
        for d in documents {
            let chunks = engine.chunks(&d.id.to_string(), 0..1)?;
            if let Some(c) = chunks.into_iter().next() {
                payloads.push(json!({
                    "id": c.id.to_string(),
                    "project": name.to_string(),
                    "source": {"path": d.source, "title": d.title},
                    "zotero": {
                        "citekey": d.metadata.get("citekey"),
                        "tags": d.metadata.get("tags"),
                    },
                    "doc": {
                        "page_span": c.page_start.map(|s| [s, c.page_end.unwrap_or(s)]),
                        "section": c.section_path.last(),
                        "section_path": c.section_path,
                    },
                    "embed_model": stats.info.space.model,
                }));
            }
        }
        let keys = payload_keys(engine, &name)?;
        Ok((stats, payloads, keys))
    })
    .await;
    match result {
        Ok((stats, payloads, keys)) => success(&InspectOutput {
            collection: collection(&p.project),
            project: p.project,
            size: stats.info.chunk_count,
            dense_model: stats.info.space.model.clone(),
            sparse_model: SPARSE_MODEL.into(),
            embed_model: stats.info.space.model,
            named_vectors: vec!["dense".into(), "sparse".into()],
            payload_keys: keys,
            // What folio's store indexes: documents by project and source
            // and by content hash (SQLite), chunk text in the BM25 index.
            indexes: Indexes {
                keyword: ["project_id", "source_path", "content_hash"]
                    .map(String::from)
                    .to_vec(),
                fulltext: vec!["chunk_text".into()],
            },
            storage: Storage {
                on_disk_vectors: true,
                on_disk_hnsw: true,
            },
            sample_payloads: payloads.clone(),
            sample: payloads,
            correlation_id: call.correlation_id.clone(),
        }),
        Err(e) => error(shared, call, &e, Some(&p.project)),
    }
}

/// The payload keys the project's chunks actually carry: the fields folio
/// stores with every chunk, every metadata key of its documents, and the
/// keys of payloads stored with store_chunks.
fn payload_keys(
    engine: &folio_engine::Engine,
    name: &LibraryName,
) -> Result<Vec<String>, EngineError> {
    let mut keys: std::collections::BTreeSet<String> = [
        "project_id",
        "doc_id",
        "chunk_text",
        "section_path",
        "page_start",
        "page_end",
        "title",
        "source_path",
        "content_hash",
        "embed_model",
    ]
    .map(String::from)
    .into();
    const PAGE: u64 = 500;
    let mut offset = 0;
    loop {
        let (documents, total) = engine.documents(name, offset, PAGE)?;
        for document in &documents {
            for (key, value) in &document.metadata {
                match (key.as_str(), value) {
                    ("payload", Value::Object(payload)) => keys.extend(payload.keys().cloned()),
                    _ => {
                        keys.insert(key.clone());
                    }
                }
            }
        }
        offset += documents.len() as u64;
        if documents.is_empty() || offset >= total {
            break;
        }
    }
    Ok(keys.into_iter().collect())
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NoParams {}

#[derive(Debug, Serialize, JsonSchema)]
struct Project {
    id: String,
    collection: String,
    dense_model: String,
    sparse_model: String,
    embed_model: String,
    hybrid_enabled: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ProjectsOutput {
    projects: Vec<Project>,
    count: usize,
    correlation_id: String,
}

async fn list_projects(shared: &Shared, call: &Call) -> CallToolResult {
    // Seed 000: listing always succeeds, with no time limit (one configured
    // for it is not applied). An unreadable store is an error, never an
    // empty list that hides projects.
    let caller = call.clone();
    let libraries = match ops::unbounded(shared, call, Touches::Visible, move |engine| {
        ops::visible(engine, &caller)
    })
    .await
    {
        Ok(libraries) => libraries,
        Err(e) => return error(shared, call, &e, None),
    };
    let projects: Vec<Project> = libraries
        .into_iter()
        .map(|l| Project {
            collection: collection(l.name.as_str()),
            id: l.name.to_string(),
            dense_model: l.space.model.clone(),
            sparse_model: SPARSE_MODEL.into(),
            embed_model: l.space.model,
            hybrid_enabled: true,
        })
        .collect();
    success(&ProjectsOutput {
        count: projects.len(),
        projects,
        correlation_id: call.correlation_id.clone(),
    })
}

// ---------------------------------------------------------------- registry

pub fn tools() -> Vec<Tool> {
    vec![
        define::<IngestFromSourceParams, IngestFromSourceOutput>(
            "ingest_from_source",
            "Ingest a file or folder into a project",
            "Ingest a document file or a folder of documents into an existing project \
             (INVALID_PROJECT otherwise; projects are created by whoever runs the server). \
             Idempotent: unchanged documents are skipped. Time-bounded (15 s by default): on \
             TIMEOUT the documents finished so far are kept and the error's details say how many; \
             calling again continues where it stopped.",
            Effect::Write,
            false,
        ),
        store_chunks_tool(),
        define::<QueryParams, QueryOutput>(
            "query",
            "Dense search in a project",
            "Dense vector search in one project. Returns citation-ready items (render_text trimmed \
             to 1,800 characters, citekey, section, page_span, section_path, doi); full_text only \
             with include_full_text. top_k defaults to 6, at most 20.",
            Effect::Read,
            false,
        ),
        define::<QueryParams, FindChunksOutput>(
            "find_chunks",
            "Find chunks in a project",
            "Vector search for chunks in one project (same results as query, with the query text \
             in `query`).",
            Effect::Read,
            false,
        ),
        define::<QueryParams, HybridOutput>(
            "query_hybrid",
            "Hybrid search in a project",
            "Hybrid search in one project: BM25 full-text and dense vector results combined by \
             Reciprocal Rank Fusion. Same items as query.",
            Effect::Read,
            false,
        ),
        define::<InspectParams, InspectOutput>(
            "inspect_collection",
            "Inspect a project",
            "A project's size, model bindings, payload keys and indexes, with up to 5 sample \
             payloads.",
            Effect::Read,
            false,
        ),
        define::<NoParams, ProjectsOutput>(
            "list_projects",
            "List projects",
            "List every project with its models and whether hybrid search is enabled.",
            Effect::Read,
            false,
        ),
    ]
}

pub async fn call(
    shared: &Shared,
    name: &str,
    arguments: Option<JsonObject>,
    call: &Call,
) -> CallToolResult {
    let given_project = arguments
        .as_ref()
        .and_then(|a| a.get("project"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let refuse = |m: String| invalid(shared, call, m, given_project.as_deref());
    match name {
        "ingest_from_source" => {
            with_args(arguments, refuse, |p: IngestFromSourceParams| {
                ingest_from_source(shared, p, call)
            })
            .await
        }
        "store_chunks" => common::call_store_chunks(shared, arguments, call).await,
        "query" => {
            with_args(arguments, refuse, |p: QueryParams| {
                answer(shared, p, Mode::Dense, call, |items, model| QueryOutput {
                    count: items.len(),
                    items,
                    model,
                    correlation_id: call.correlation_id.clone(),
                })
            })
            .await
        }
        "find_chunks" => {
            with_args(arguments, refuse, |p: QueryParams| {
                answer(shared, p, Mode::Dense, call, |items, _| FindChunksOutput {
                    count: items.len(),
                    items,
                    correlation_id: call.correlation_id.clone(),
                })
            })
            .await
        }
        "query_hybrid" => {
            with_args(arguments, refuse, |p: QueryParams| {
                answer(shared, p, Mode::Hybrid, call, |items, model| HybridOutput {
                    count: items.len(),
                    items,
                    hybrid_enabled: true,
                    dense_model: model,
                    sparse_model: SPARSE_MODEL.into(),
                    fusion: "RRF".into(),
                    correlation_id: call.correlation_id.clone(),
                })
            })
            .await
        }
        "inspect_collection" => {
            with_args(arguments, refuse, |p: InspectParams| {
                inspect_collection(shared, p, call)
            })
            .await
        }
        "list_projects" => {
            with_args(arguments, refuse, |_: NoParams| list_projects(shared, call)).await
        }
        _ => invalid(shared, call, format!("unknown tool {name}"), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_must_all_match_and_project_filters_are_ignored() {
        let mut given = Map::new();
        given.insert("project".into(), json!("other/project"));
        given.insert("tags".into(), json!(["a", "b"]));
        given.insert("year".into(), json!(2020));
        let filter = filters(Some(given)).unwrap();
        let fields: Vec<String> = filter.conditions.iter().map(|c| format!("{c:?}")).collect();
        assert_eq!(filter.conditions.len(), 3, "{fields:?}");
        assert!(!fields.iter().any(|f| f.contains("project")));
        assert_eq!(fields.iter().filter(|f| f.contains("\"tags\"")).count(), 2);
    }

    #[test]
    fn render_text_is_cut_at_a_word_with_an_ellipsis() {
        assert_eq!(render_text("short text", 1_800), "short text");
        assert_eq!(render_text("alpha beta gamma delta", 15), "alpha beta...");
        let cut = render_text(&"word ".repeat(1_000), 1_800);
        assert!(cut.chars().count() <= 1_800 && cut.ends_with("word..."));
        // One long word: cut inside it rather than return nothing.
        assert_eq!(render_text(&"x".repeat(20), 10), "xxxxxxx...");
    }

    #[test]
    fn collections_are_named_like_the_seed() {
        assert_eq!(
            collection("citeloom/clean-arch"),
            "proj-citeloom-clean-arch"
        );
    }
}
