//! folio's own toolset: few tools, each doing one job completely. Errors use
//! `{"error": {"code", "message", "details"}}` with folio's error codes in
//! upper case.

mod entities;
mod records;
mod search;

use std::collections::BTreeMap;
use std::path::PathBuf;

use folio_core::ErrorCode;
use folio_engine::{EngineError, IngestRequest, IngestTarget};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::ops::{self, CacheInfo, Call, PathCheck, Shared, Touches, check_path, library};
use crate::tool::{
    Effect, admitting_errors, bounded as check, define, failure, parse, success, with_args,
};
use crate::toolsets::common;

/// The native error envelope.
pub fn error(e: &EngineError) -> CallToolResult {
    let mut details = Map::new();
    if let Some(input) = &e.input {
        details.insert("input".into(), Value::String(input.clone()));
    }
    if let Some(Value::Object(more)) = &e.details {
        details.extend(more.clone());
    }
    failure(json!({"error": {
        "code": common::folio_code(e.code),
        "message": e.message,
        "details": details,
    }}))
}

pub fn invalid(message: String) -> CallToolResult {
    error(&EngineError::invalid(message))
}

// ---------------------------------------------------------------- reading

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetDocumentParams {
    /// The document id (16 hex digits) from a search hit or list_documents.
    document_id: String,
    /// Return the text from this character on (for paging through long documents).
    #[serde(default)]
    offset_chars: u64,
    /// Characters of text to return (0 to 200,000; default 20,000). 0 returns metadata only.
    #[serde(default = "twenty_thousand")]
    #[schemars(range(min = 0, max = 200000))]
    max_chars: usize,
}

fn twenty_thousand() -> usize {
    20_000
}

#[derive(Debug, Serialize, JsonSchema)]
struct DocumentOutput {
    document_id: String,
    library: String,
    title: Option<String>,
    source: String,
    source_kind: String,
    format: String,
    content_hash: String,
    metadata: Map<String, Value>,
    page_count: Option<u32>,
    chunk_count: u32,
    ingested_at: String,
    /// Total characters of the document text.
    text_chars: u64,
    /// The text (Markdown), from `offset_chars`, at most `max_chars` characters.
    text: String,
    offset_chars: u64,
    /// Where the next slice starts; absent at the end of the text.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset_chars: Option<u64>,
    /// The entities the document mentions (declared ones and names found
    /// in its text), most mentioned first, at most 50; `entity` names each
    /// to the entity tool.
    entities: Vec<DocumentEntity>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct DocumentEntity {
    entity: String,
    #[serde(rename = "type")]
    kind: String,
    mentions: u64,
}

/// Entities a document lists at most.
const DOCUMENT_ENTITIES: usize = 50;

async fn get_document(shared: &Shared, p: GetDocumentParams, call: &Call) -> CallToolResult {
    if let Err(m) = check("max_chars", p.max_chars, 0, 200_000) {
        return invalid(m);
    }
    let id = p.document_id.clone();
    let touched = Touches::Document(&p.document_id);
    let (document, entities) = match ops::run(shared, call, touched, move |engine| {
        Ok((
            engine.document(&id)?,
            engine.document_entities(&id, DOCUMENT_ENTITIES)?,
        ))
    })
    .await
    {
        Ok(found) => found,
        Err(e) => return error(&e.about(p.document_id)),
    };
    let total = document.text.chars().count() as u64;
    let rest: String = document
        .text
        .chars()
        .skip(p.offset_chars as usize)
        .collect();
    let (text, cut) = folio_engine::cut_chars(&rest, p.max_chars);
    let end = p.offset_chars + text.chars().count() as u64;
    success(&DocumentOutput {
        document_id: document.id.to_string(),
        library: document.library.to_string(),
        title: document.title,
        source: document.source,
        source_kind: document.source_kind.as_str().to_string(),
        format: document.format,
        content_hash: document.content_hash,
        metadata: document.metadata,
        page_count: document.page_count,
        chunk_count: document.chunk_count,
        ingested_at: document.ingested_at,
        text_chars: total,
        text,
        offset_chars: p.offset_chars,
        next_offset_chars: cut.then_some(end),
        entities: entities
            .into_iter()
            .map(|e| DocumentEntity {
                entity: e.entity,
                kind: e.kind,
                mentions: e.mentions,
            })
            .collect(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetChunksParams {
    /// A chunk id (<document id>:<index>) from a search hit.
    chunk_id: String,
    /// Neighbouring chunks before it (0 to 20, default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 0, max = 20))]
    before: u32,
    /// Neighbouring chunks after it (0 to 20, default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 0, max = 20))]
    after: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Serialize, JsonSchema)]
struct ChunkOutput {
    chunk_id: String,
    index: u32,
    text: String,
    page_start: Option<u32>,
    page_end: Option<u32>,
    section_path: Vec<String>,
    char_start: u64,
    char_end: u64,
    token_count: u32,
    /// True for the chunk asked for; false for its neighbours.
    requested: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ChunksOutput {
    document_id: String,
    chunk_count: u32,
    chunks: Vec<ChunkOutput>,
}

async fn get_chunks(shared: &Shared, p: GetChunksParams, call: &Call) -> CallToolResult {
    if let Err(m) = check("before", p.before, 0, 20).and(check("after", p.after, 0, 20)) {
        return invalid(m);
    }
    let id = p.chunk_id.clone();
    let (before, after) = (p.before, p.after);
    let chunks = match ops::run(shared, call, Touches::Chunk(&p.chunk_id), move |engine| {
        engine.chunk_with_neighbours(&id, before, after)
    })
    .await
    {
        Ok(c) => c,
        Err(e) => return error(&e.about(p.chunk_id)),
    };
    let document_id = chunks
        .first()
        .map(|c| c.document_id.to_string())
        .unwrap_or_default();
    let chunk_count = chunks.first().map_or(0, |c| c.count);
    success(&ChunksOutput {
        document_id,
        chunk_count,
        chunks: chunks
            .into_iter()
            .map(|c| ChunkOutput {
                requested: c.id.as_str() == p.chunk_id,
                chunk_id: c.id.to_string(),
                index: c.index,
                text: c.text,
                page_start: c.page_start,
                page_end: c.page_end,
                section_path: c.section_path,
                char_start: c.char_start,
                char_end: c.char_end,
                token_count: c.token_count,
            })
            .collect(),
    })
}

// ---------------------------------------------------------------- ingest

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ContentParams {
    /// A name for the content (the source locator: re-ingesting the same name
    /// replaces it, or skips it when unchanged).
    name: String,
    /// The text.
    text: String,
    /// text, markdown or html (default: from the name's extension).
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    title: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IngestParams {
    /// The library to ingest into; created on first use.
    library: String,
    /// Files or folders (folders recursively) on the server's file system,
    /// within the configured roots.
    #[serde(default)]
    paths: Vec<String>,
    /// http(s) URLs to fetch (public addresses only unless configured otherwise).
    #[serde(default)]
    urls: Vec<String>,
    /// Text the agent already has (for example a file the user pasted).
    #[serde(default)]
    content: Option<ContentParams>,
    /// Structured records (JSON objects), validated against the library's
    /// record schema; each invalid record is reported with the field and
    /// rule it breaks, the others are stored.
    #[serde(default)]
    #[schemars(length(max = 10000))]
    records: Vec<Map<String, Value>>,
    /// Metadata attached to every document (filterable in search).
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    /// A title (with a single source).
    #[serde(default)]
    title: Option<String>,
    /// Re-index even when the content is unchanged.
    #[serde(default)]
    force: bool,
    /// Read the ZIP and TAR archives found in folders, each member a
    /// document under the archive's path (an archive named in `paths` is
    /// read either way).
    #[serde(default)]
    archives: bool,
    /// OCR languages for scanned PDF pages (en, de, eng, ...) when the
    /// document names none; default: the server's (en, de).
    #[serde(default)]
    ocr_languages: Vec<String>,
    /// Answer at once with a job id and ingest in the background (for large
    /// folders: hosts give a call one to two minutes). Follow it with
    /// `jobs`, stop it with `cancel_job`; it runs to its end whether or not
    /// this client stays.
    #[serde(default)]
    // The transport reads it (and takes it out) before the call runs.
    #[allow(dead_code)]
    background: bool,
}

/// The library a background ingest writes, once its arguments are checked
/// as the ingest itself would (they parse, name a library and a source):
/// a job starts only for a call that can run.
pub fn background_library(arguments: Option<JsonObject>) -> Result<String, CallToolResult> {
    let p: IngestParams = parse(arguments).map_err(invalid)?;
    Ok(p.checked()?.to_string())
}

impl IngestParams {
    /// The library, once the call names a valid one and a source.
    fn checked(&self) -> Result<folio_core::LibraryName, CallToolResult> {
        let name = library(&self.library).map_err(|e| error(&e))?;
        if self.paths.is_empty()
            && self.urls.is_empty()
            && self.content.is_none()
            && self.records.is_empty()
        {
            return Err(invalid(
                "give at least one of paths, urls, content or records".into(),
            ));
        }
        Ok(name)
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct ItemError {
    code: String,
    message: String,
    /// For an invalid record: the field, the rule and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Value>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct IngestItemOutput {
    source: String,
    /// indexed, replaced, skipped or failed.
    status: String,
    document_id: Option<String>,
    title: Option<String>,
    format: Option<String>,
    chunks: u32,
    pages: Option<u32>,
    error: Option<ItemError>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct IngestOutput {
    library: String,
    indexed: usize,
    replaced: usize,
    skipped: usize,
    failed: usize,
    chunks: u64,
    /// True when the call was cancelled; documents finished before that are kept.
    cancelled: bool,
    elapsed_ms: u64,
    /// One entry per source (failures first when the list is cut).
    items: Vec<IngestItemOutput>,
    /// Entries left out of `items` (more than 200 sources).
    items_omitted: usize,
    /// Chunks written, by their document's language (ISO 639-1; "und"
    /// when folio could not tell).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    languages: BTreeMap<String, u64>,
    /// What to do about the library: set when the text is mostly not
    /// English and the library's model reads English only.
    #[serde(skip_serializing_if = "Option::is_none")]
    advice: Option<String>,
}

const MAX_ITEMS: usize = 200;

fn ingest_output(report: folio_engine::IngestReport) -> IngestOutput {
    let mut items: Vec<IngestItemOutput> = report
        .items
        .into_iter()
        .map(|i| IngestItemOutput {
            source: i.source,
            status: serde_json::to_value(i.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            document_id: i.document_id,
            title: i.title,
            format: i.format,
            chunks: i.chunks,
            pages: i.pages,
            error: i.error.map(|e| ItemError {
                code: common::folio_code(e.code).to_string(),
                message: e.message,
                details: e.details,
            }),
        })
        .collect();
    items.sort_by_key(|i| i.status != "failed");
    let omitted = items.len().saturating_sub(MAX_ITEMS);
    items.truncate(MAX_ITEMS);
    IngestOutput {
        library: report.library,
        indexed: report.indexed,
        replaced: report.replaced,
        skipped: report.skipped,
        failed: report.failed,
        chunks: report.chunks,
        cancelled: report.cancelled,
        elapsed_ms: report.elapsed_ms,
        items,
        items_omitted: omitted,
        languages: report.languages,
        advice: report.advice,
    }
}

async fn ingest(shared: &Shared, p: IngestParams, call: &Call) -> CallToolResult {
    let name = match p.checked() {
        Ok(n) => n,
        Err(refusal) => return refusal,
    };
    let mut targets: Vec<IngestTarget> = p
        .paths
        .iter()
        .map(|path| IngestTarget::Path(PathBuf::from(path)))
        .collect();
    targets.extend(p.urls.iter().cloned().map(IngestTarget::Url));
    if let Some(content) = p.content {
        targets.push(IngestTarget::Content {
            name: content.name,
            text: content.text,
            format: content.format,
            title: content.title,
        });
    }
    targets.extend(p.records.into_iter().map(IngestTarget::Record));
    let request = IngestRequest {
        library: name,
        targets,
        metadata: p.metadata.unwrap_or_default(),
        title: p.title,
        force: p.force,
        archives: p.archives,
        ocr_languages: p.ocr_languages,
        dedup: folio_engine::Dedup::Content,
        allow_private_urls: Some(shared.options.allow_private_urls),
        keep_items: true,
    };
    match ops::ingest(shared, call, request).await {
        Ok(report) => success(&ingest_output(report)),
        Err(e) => error(&e),
    }
}

// ---------------------------------------------------------------- managing

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoParams {}

#[derive(Debug, Serialize, JsonSchema)]
struct LibraryOutput {
    library: String,
    document_count: u64,
    chunk_count: u64,
    model: String,
    dimension: u32,
    created_at: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct LibrariesOutput {
    libraries: Vec<LibraryOutput>,
    count: usize,
}

async fn list_libraries(shared: &Shared, call: &Call) -> CallToolResult {
    let caller = call.clone();
    match ops::run(shared, call, Touches::Visible, move |engine| {
        ops::visible(engine, &caller)
    })
    .await
    {
        Ok(libraries) => success(&LibrariesOutput {
            count: libraries.len(),
            libraries: libraries
                .into_iter()
                .map(|l| LibraryOutput {
                    library: l.name.to_string(),
                    document_count: l.document_count,
                    chunk_count: l.chunk_count,
                    model: l.space.model,
                    dimension: l.space.dim,
                    created_at: l.created_at,
                })
                .collect(),
        }),
        Err(e) => error(&e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDocumentsParams {
    library: String,
    #[serde(default)]
    offset: u64,
    /// Documents per page (1 to 1,000, default 50).
    #[serde(default = "fifty")]
    #[schemars(range(min = 1, max = 1000))]
    limit: u64,
}

fn fifty() -> u64 {
    50
}

#[derive(Debug, Serialize, JsonSchema)]
struct DocumentSummaryOutput {
    document_id: String,
    title: Option<String>,
    source: String,
    source_kind: String,
    format: String,
    content_hash: String,
    page_count: Option<u32>,
    chunk_count: u32,
    char_count: u64,
    ingested_at: String,
    metadata: Map<String, Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct DocumentsOutput {
    library: String,
    documents: Vec<DocumentSummaryOutput>,
    total: u64,
    offset: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
}

async fn list_documents(shared: &Shared, p: ListDocumentsParams, call: &Call) -> CallToolResult {
    if let Err(m) = check("limit", p.limit, 1, 1000) {
        return invalid(m);
    }
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(&e),
    };
    let library_name = name.clone();
    let (offset, limit) = (p.offset, p.limit);
    match ops::run(
        shared,
        call,
        Touches::Library(&library_name),
        move |engine| engine.documents(&name, offset, limit),
    )
    .await
    {
        Ok((documents, total)) => {
            let end = p.offset + documents.len() as u64;
            success(&DocumentsOutput {
                library: library_name.to_string(),
                documents: documents
                    .into_iter()
                    .map(|d| DocumentSummaryOutput {
                        document_id: d.id.to_string(),
                        title: d.title,
                        source: d.source,
                        source_kind: d.source_kind.as_str().to_string(),
                        format: d.format,
                        content_hash: d.content_hash,
                        page_count: d.page_count,
                        chunk_count: d.chunk_count,
                        char_count: d.char_count,
                        ingested_at: d.ingested_at,
                        metadata: d.metadata,
                    })
                    .collect(),
                total,
                offset: p.offset,
                next_offset: (end < total).then_some(end),
            })
        }
        Err(e) => error(&e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LibraryParams {
    library: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct InspectOutput {
    library: String,
    document_count: u64,
    chunk_count: u64,
    model: String,
    dimension: u32,
    pooling: String,
    normalized: bool,
    created_at: String,
    /// Documents per format.
    formats: Map<String, Value>,
    total_chars: u64,
    total_tokens: u64,
    last_ingested_at: Option<String>,
    /// Documents per language (ISO 639-1, as each document records it).
    languages: Map<String, Value>,
    /// The record schema the library declares (its text, title and key
    /// fields, and each field's type and rules); null when it declares
    /// none.
    record_schema: Option<Value>,
    /// Index details: lexical and vector index state.
    index: Value,
}

async fn inspect_library(shared: &Shared, p: LibraryParams, call: &Call) -> CallToolResult {
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(&e),
    };
    let touched = name.clone();
    match ops::run(shared, call, Touches::Library(&touched), move |engine| {
        let stats = engine.inspect(&name)?;
        let languages = engine.facets(
            &name,
            &folio_engine::FacetRequest {
                group_by: vec!["language".into()],
                limit: 200,
                ..Default::default()
            },
        )?;
        let schema = engine.record_schema(&name)?;
        Ok((stats, languages, schema))
    })
    .await
    {
        Ok((stats, languages, schema)) => success(&InspectOutput {
            library: stats.info.name.to_string(),
            document_count: stats.info.document_count,
            chunk_count: stats.info.chunk_count,
            model: stats.info.space.model.clone(),
            dimension: stats.info.space.dim,
            pooling: serde_json::to_value(stats.info.space.pooling)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            normalized: stats.info.space.normalized,
            created_at: stats.info.created_at,
            formats: stats
                .formats
                .into_iter()
                .map(|(f, n)| (f, Value::from(n)))
                .collect(),
            total_chars: stats.total_chars,
            total_tokens: stats.total_tokens,
            last_ingested_at: stats.last_ingested_at,
            languages: languages
                .groups
                .into_iter()
                .filter_map(|g| {
                    let language = g.key.first()?.as_str()?.to_string();
                    Some((language, Value::from(g.count)))
                })
                .collect(),
            record_schema: schema.and_then(|s| serde_json::to_value(s).ok()),
            index: stats.index,
        }),
        Err(e) => error(&e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteParams {
    document_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct DeleteOutput {
    /// Always "deleted".
    status: String,
    document_id: String,
    deleted_chunks: u32,
}

async fn delete_document(shared: &Shared, p: DeleteParams, call: &Call) -> CallToolResult {
    match ops::delete_document(shared, call, p.document_id.clone()).await {
        Ok(chunks) => success(&DeleteOutput {
            status: "deleted".into(),
            document_id: p.document_id,
            deleted_chunks: chunks,
        }),
        Err(e) => error(&e.about(p.document_id)),
    }
}

#[derive(Debug, Serialize, JsonSchema)]
struct DeleteLibraryOutput {
    /// Always "deleted".
    status: String,
    library: String,
    deleted_documents: u64,
    deleted_chunks: u64,
}

async fn delete_library(shared: &Shared, p: LibraryParams, call: &Call) -> CallToolResult {
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(&e),
    };
    match ops::delete_library(shared, call, name).await {
        Ok((documents, chunks)) => success(&DeleteLibraryOutput {
            status: "deleted".into(),
            library: p.library,
            deleted_documents: documents,
            deleted_chunks: chunks,
        }),
        Err(e) => error(&e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ServerInfoParams {
    /// A file path to test for readability by the server.
    #[serde(default)]
    check_path: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ServerInfoOutput {
    name: String,
    version: String,
    data_dir: String,
    transport: String,
    toolsets: Vec<String>,
    read_only: bool,
    model_dir: Option<String>,
    /// Whether the embedding model is loaded (it loads on first use).
    model_loaded: bool,
    libraries: usize,
    disk_bytes: u64,
    limits: Value,
    /// Search cache counters (repeated queries are answered from it until
    /// the next write).
    cache: CacheInfo,
    /// Folders this server keeps in sync (`--watch`, `[[watch]]`).
    watches: Vec<ops::watch::WatchState>,
    /// Background jobs on the libraries you may read, newest first
    /// (results in `jobs`).
    jobs: Vec<ops::jobs::JobOutput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_check: Option<PathCheck>,
}

async fn server_info(shared: &Shared, p: ServerInfoParams, call: &Call) -> CallToolResult {
    let caller = call.clone();
    let (libraries, disk) = match ops::run(shared, call, Touches::Visible, move |engine| {
        Ok((ops::visible(engine, &caller)?.len(), engine.disk_bytes()))
    })
    .await
    {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let config = shared.engine.config();
    let (name, version) = shared.options.identity();
    // Where things live is for the local user and admins only.
    let sees_server = ops::sees_server(call);
    success(&ServerInfoOutput {
        name,
        version,
        data_dir: if sees_server {
            config.data_dir.display().to_string()
        } else {
            String::new()
        },
        transport: shared.options.transport.clone(),
        toolsets: shared
            .registry
            .toolsets()
            .iter()
            .map(|t| t.to_string())
            .collect(),
        read_only: shared.options.read_only,
        model_dir: shared
            .options
            .model_dir
            .as_ref()
            .filter(|_| sees_server)
            .map(|d| d.display().to_string()),
        model_loaded: shared.engine.embedder_loaded(),
        libraries,
        disk_bytes: disk,
        limits: serde_json::to_value(&config.limits).unwrap_or(Value::Null),
        cache: CacheInfo::of(shared),
        watches: ops::visible_watches(call),
        jobs: ops::jobs::registry()
            .visible(call.principal.as_ref())
            .iter()
            .map(|job| ops::jobs::JobOutput {
                result: None,
                ..job.output_for(call.principal.as_ref())
            })
            .collect(),
        path_check: p.check_path.map(|path| check_path(shared, call, &path)),
    })
}

// ---------------------------------------------------------------- jobs

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct JobsParams {
    /// One job, by the id its ingest answered (else every job you may see).
    #[serde(default)]
    job_id: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct JobsOutput {
    jobs: Vec<ops::jobs::JobOutput>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CancelJobParams {
    job_id: String,
}

fn no_job(id: &str) -> CallToolResult {
    error(&EngineError::new(ErrorCode::NotFound, format!("no job {id}")).about(id))
}

async fn jobs(p: JobsParams, call: &Call) -> CallToolResult {
    let caller = call.principal.as_ref();
    let jobs = match &p.job_id {
        Some(id) => match ops::jobs::registry().find(id, caller) {
            Some(job) => vec![job.output_for(caller)],
            None => return no_job(id),
        },
        None => ops::jobs::registry()
            .visible(caller)
            .iter()
            .map(|job| job.output_for(caller))
            .collect(),
    };
    success(&JobsOutput { jobs })
}

async fn cancel_job(p: CancelJobParams, call: &Call) -> CallToolResult {
    match ops::jobs::registry().find(&p.job_id, call.principal.as_ref()) {
        Some(job) => {
            job.cancel.cancel();
            success(&job.output_for(call.principal.as_ref()))
        }
        None => no_job(&p.job_id),
    }
}

// ---------------------------------------------------------------- registry

pub fn tools() -> Vec<Tool> {
    let mut tools = vec![
        define::<search::SearchParams, search::SearchOutput>(
            "search",
            "Search a library",
            "Search one library for passages relevant to a query. Hybrid (BM25 + dense vectors) by \
             default; lexical or dense on request. Every hit carries its citation: document id, title, \
             source, page span and section path. Use response_mode to control size: ids_only, \
             metadata, preview (default, ~200 characters per hit) or full (chunk text, capped by \
             max_chars_per_chunk). The response never exceeds max_output_chars; when hits are left \
             out, budget.omitted_hits says how many and next_cursor fetches the next page. Filters \
             apply before ranking.",
            Effect::Read,
            false,
        ),
        define::<GetDocumentParams, DocumentOutput>(
            "get_document",
            "Read a document",
            "Return a document's metadata and its text as Markdown, in slices of at most max_chars \
             characters; next_offset_chars continues a long document.",
            Effect::Read,
            false,
        ),
        define::<GetChunksParams, ChunksOutput>(
            "get_chunks",
            "Read a chunk with its neighbours",
            "Return a chunk by id with up to `before` preceding and `after` following chunks of the \
             same document, in order: the context around a search hit.",
            Effect::Read,
            false,
        ),
        define::<IngestParams, IngestOutput>(
            "ingest",
            "Ingest documents",
            "Add documents to a library (created on first use): files and folders on the server \
             (PDF, DOCX, PPTX, EPUB, HTML, Markdown, text; scanned PDF pages and PNG/JPEG/TIFF \
             images through OCR), http(s) URLs, or text passed as content. \
             Unchanged sources are skipped, changed ones replaced atomically; one failing source does \
             not stop the rest. Reports progress notifications when the request has a progress token \
             and stops between documents when cancelled.",
            Effect::Write,
            true,
        ),
        common::store_chunks_tool(),
        define::<NoParams, LibrariesOutput>(
            "list_libraries",
            "List libraries",
            "List every library with its document and chunk counts and the embedding model it is \
             pinned to.",
            Effect::Read,
            false,
        ),
        define::<ListDocumentsParams, DocumentsOutput>(
            "list_documents",
            "List documents",
            "List a library's documents, newest first, a page at a time (limit and offset).",
            Effect::Read,
            false,
        ),
        define::<LibraryParams, InspectOutput>(
            "inspect_library",
            "Inspect a library",
            "Statistics of a library: counts, formats, characters and tokens, the embedding space, \
             and the state of its lexical and vector indexes.",
            Effect::Read,
            false,
        ),
        define::<DeleteParams, DeleteOutput>(
            "delete_document",
            "Delete a document",
            "Remove a document and all its chunks from its library.",
            Effect::Delete,
            false,
        ),
        define::<LibraryParams, DeleteLibraryOutput>(
            "delete_library",
            "Delete a library",
            "Remove a library with all its documents, chunks and indexes. It cannot be undone; \
             ingesting into the name again starts an empty library.",
            Effect::Delete,
            false,
        ),
        define::<JobsParams, JobsOutput>(
            "jobs",
            "Background jobs",
            "The background jobs (an ingest with background: true) on the libraries you may read, \
             newest first, or one by job_id: status (running, completed, failed, cancelled), \
             progress, documents done and failed, the first errors, and once finished the result \
             the call would have answered. Jobs run to their end whether or not the client that \
             started them stays.",
            Effect::Read,
            false,
        ),
        define::<CancelJobParams, ops::jobs::JobOutput>(
            "cancel_job",
            "Cancel a background job",
            "Stop a running background job between documents: the documents it finished stay. \
             Answers the job (cancelling until it has stopped).",
            Effect::Write,
            false,
        ),
        define::<ServerInfoParams, ServerInfoOutput>(
            "server_info",
            "Server information",
            "Version, data directory, transport, toolsets, model state, limits; with check_path, \
             whether the server can read that file (ingestion is confined to configured roots).",
            Effect::Read,
            false,
        ),
    ];
    // The record and citation tools sit after inspect_library.
    let at = tools
        .iter()
        .position(|t| t.name == "inspect_library")
        .map_or(tools.len(), |i| i + 1);
    tools.splice(at..at, records::tools());
    // The entity tools sit after find_quote.
    let at = tools
        .iter()
        .position(|t| t.name == "find_quote")
        .map_or(tools.len(), |i| i + 1);
    tools.splice(at..at, entities::tools());
    // A background ingest answers a job, not a report.
    if let Some(ingest) = tools.iter_mut().find(|t| t.name == "ingest")
        && let (Some(report), Some(job)) = (
            ingest.output_schema.clone(),
            define::<JobsParams, ops::jobs::JobOutput>("job", "", "", Effect::Read, false)
                .output_schema,
        )
    {
        ingest.output_schema = Some(std::sync::Arc::new(admitting_errors(
            &report,
            &Value::Object((*job).clone()),
        )));
    }
    tools
}

pub async fn call(
    shared: &Shared,
    name: &str,
    arguments: Option<JsonObject>,
    call: &Call,
) -> CallToolResult {
    match name {
        "search" => {
            with_args(arguments, invalid, |p: search::SearchParams| {
                search::search(shared, p, call)
            })
            .await
        }
        "get_document" => {
            with_args(arguments, invalid, |p: GetDocumentParams| {
                get_document(shared, p, call)
            })
            .await
        }
        "get_chunks" => {
            with_args(arguments, invalid, |p: GetChunksParams| {
                get_chunks(shared, p, call)
            })
            .await
        }
        "ingest" => {
            with_args(arguments, invalid, |p: IngestParams| {
                ingest(shared, p, call)
            })
            .await
        }
        "store_chunks" => common::call_store_chunks(shared, arguments, call).await,
        "list_libraries" => {
            with_args(arguments, invalid, |_: NoParams| {
                list_libraries(shared, call)
            })
            .await
        }
        "list_documents" => {
            with_args(arguments, invalid, |p: ListDocumentsParams| {
                list_documents(shared, p, call)
            })
            .await
        }
        "facets" => with_args(arguments, invalid, |p| records::facets(shared, p, call)).await,
        "find_quote" => {
            with_args(arguments, invalid, |p| records::find_quote(shared, p, call)).await
        }
        "entities" => with_args(arguments, invalid, |p| entities::entities(shared, p, call)).await,
        "entity" => with_args(arguments, invalid, |p| entities::entity(shared, p, call)).await,
        "declare_entities" => {
            with_args(arguments, invalid, |p| {
                entities::declare_entities(shared, p, call)
            })
            .await
        }
        "inspect_library" => {
            with_args(arguments, invalid, |p: LibraryParams| {
                inspect_library(shared, p, call)
            })
            .await
        }
        "delete_document" => {
            with_args(arguments, invalid, |p: DeleteParams| {
                delete_document(shared, p, call)
            })
            .await
        }
        "delete_library" => {
            with_args(arguments, invalid, |p: LibraryParams| {
                delete_library(shared, p, call)
            })
            .await
        }
        "server_info" => {
            with_args(arguments, invalid, |p: ServerInfoParams| {
                server_info(shared, p, call)
            })
            .await
        }
        "jobs" => with_args(arguments, invalid, |p: JobsParams| jobs(p, call)).await,
        "cancel_job" => {
            with_args(arguments, invalid, |p: CancelJobParams| cancel_job(p, call)).await
        }
        _ => error(&EngineError::new(
            ErrorCode::NotFound,
            format!("unknown tool {name}"),
        )),
    }
}
