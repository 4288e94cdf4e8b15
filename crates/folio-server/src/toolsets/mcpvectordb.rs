//! The mcpvectordb toolset (seed 004): file, content, URL and folder
//! ingestion with indexed / replaced / skipped dedup, hybrid search over one
//! or all libraries with equality filters, and document management. Every
//! failure is `{"status": "error", "error": "..."}`; nothing escapes as a
//! protocol error.

use std::path::PathBuf;

use folio_core::{ErrorCode, Filter, LibraryName};
use folio_engine::{
    EngineError, IngestItem, IngestRequest, IngestStatus, IngestTarget, Mode, ResponseMode,
    SearchHit, SearchRequest,
};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::ops::{self, CacheInfo, Call, PathCheck, Shared, Touches, check_path};
use crate::tool::{Effect, define, failure, linking, success, with_args};

fn default_library() -> String {
    "default".into()
}

/// The mcpvectordb error envelope.
pub fn error(message: impl std::fmt::Display) -> CallToolResult {
    failure(json!({"status": "error", "error": message.to_string()}))
}

/// What starts the folio name of an mcpvectordb library whose own name
/// folio's rules do not take.
const ENCODED: &str = "mcpvectordb.";

/// An mcpvectordb library name (any string, seed 004) as a folio library
/// name (letters, digits and `. _ - /`), losslessly: a name folio takes as
/// it is stays itself; any other, and one that starts with `ENCODED`, is
/// `ENCODED` followed by its UTF-8 bytes, each byte outside `A-Z a-z 0-9 -`
/// written `_HH`. Distinct names stay distinct; `seed_name` reads them back.
fn library(name: &str) -> Result<LibraryName, EngineError> {
    if !name.starts_with(ENCODED)
        && let Ok(plain) = LibraryName::new(name)
    {
        return Ok(plain);
    }
    if name.is_empty() {
        return Err(EngineError::invalid("the library name is empty"));
    }
    let mut encoded = String::from(ENCODED);
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("_{b:02X}"));
        }
    }
    LibraryName::new(encoded).map_err(|_| {
        EngineError::invalid(format!(
            "the library name {name:?} is too long (at most 128 letters, digits, '.', '_', '-' \
             or '/', fewer for other characters)"
        ))
    })
}

/// The mcpvectordb name of a folio library (`library` undone).
fn seed_name(name: &LibraryName) -> String {
    let Some(rest) = name.as_str().strip_prefix(ENCODED) else {
        return name.to_string();
    };
    let mut bytes = Vec::with_capacity(rest.len());
    let mut input = rest.bytes();
    while let Some(b) = input.next() {
        if b != b'_' {
            bytes.push(b);
            continue;
        }
        let hex: Vec<u8> = input.by_ref().take(2).collect();
        match std::str::from_utf8(&hex)
            .ok()
            .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            Some(byte) => bytes.push(byte),
            None => return name.to_string(),
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|_| name.to_string())
}

/// The check digits of a document's UUID.
fn uuid_check(id: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(format!("folio-document-uuid\0{id}").as_bytes())[..7])
}

/// A document id as seed 004 gives it: a UUID (version 8, deterministic)
/// carrying folio's 16-digit id and check digits.
pub fn public_id(id: &str) -> String {
    if id.len() != 16 {
        return id.to_string();
    }
    let hex = format!(
        "{}8{}8{}{}",
        &id[..12],
        &id[12..15],
        &id[15..16],
        uuid_check(id)
    );
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// folio's id for a document UUID from `public_id` (folio's own 16-digit
/// form is accepted too); anything else is returned as given, to be
/// reported not found.
pub fn internal_id(given: &str) -> String {
    let hex: String = given
        .trim()
        .chars()
        .filter(|c| *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    if hex.len() == 32 && hex.is_ascii() && &hex[12..13] == "8" && &hex[16..17] == "8" {
        let id = format!("{}{}{}", &hex[..12], &hex[13..16], &hex[17..18]);
        if uuid_check(&id) == hex[18..] {
            return id;
        }
    }
    given.trim().to_string()
}

/// Seed 004's time format: RFC 3339 with a numeric UTC offset.
fn seed_time(rfc3339: &str) -> String {
    match rfc3339.strip_suffix('Z') {
        Some(time) => format!("{time}+00:00"),
        None => rfc3339.to_string(),
    }
}

/// When the source last changed: the file's modification time, else when it
/// was ingested (content and pages have no file).
fn last_modified(metadata: &Map<String, Value>, ingested_at: &str) -> String {
    seed_time(
        metadata
            .get("file_modified")
            .and_then(Value::as_str)
            .unwrap_or(ingested_at),
    )
}

/// The metadata a client gave, without the fields folio keeps for itself.
fn client_metadata(mut metadata: Map<String, Value>) -> Map<String, Value> {
    for key in [
        "file_modified",
        folio_engine::sync::FILE_SIZE,
        folio_engine::sync::FILE_MTIME_NS,
    ] {
        metadata.remove(key);
    }
    metadata
}

// ---------------------------------------------------------------- ingestion

#[derive(Debug, Deserialize, JsonSchema)]
struct IngestFileParams {
    /// Absolute or relative path to the file.
    path: String,
    /// Library (collection) to index into.
    #[serde(default = "default_library")]
    library: String,
    /// Arbitrary key-value metadata.
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct IngestContentParams {
    /// Full text or Markdown to index.
    content: String,
    /// Label for the origin (filename, URL, etc.), used for dedup and display.
    source: String,
    #[serde(default = "default_library")]
    library: String,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct IngestUrlParams {
    /// HTTP or HTTPS URL to fetch.
    url: String,
    #[serde(default = "default_library")]
    library: String,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

/// The result of ingesting one source.
#[derive(Debug, Serialize, JsonSchema)]
pub struct IngestOutput {
    /// indexed, replaced or skipped.
    pub status: String,
    pub doc_id: String,
    pub source: String,
    pub library: String,
    pub chunk_count: u32,
}

fn status(status: IngestStatus) -> &'static str {
    match status {
        IngestStatus::Indexed => "indexed",
        IngestStatus::Replaced => "replaced",
        IngestStatus::Skipped => "skipped",
        IngestStatus::Failed => "error",
    }
}

fn item_output(library: &str, item: &IngestItem, chunk_count: u32) -> IngestOutput {
    IngestOutput {
        status: status(item.status).into(),
        doc_id: item
            .document_id
            .as_deref()
            .map(public_id)
            .unwrap_or_default(),
        source: item.source.clone(),
        library: library.to_string(),
        chunk_count,
    }
}

/// Ingests one source and answers in the seed's single-document shape.
async fn ingest_one(
    shared: &Shared,
    library_name: &str,
    target: IngestTarget,
    metadata: Option<Map<String, Value>>,
    call: &Call,
) -> Result<IngestOutput, EngineError> {
    let request = IngestRequest {
        library: library(library_name)?,
        targets: vec![target],
        metadata: metadata.unwrap_or_default(),
        title: None,
        force: false,
        archives: false,
        ocr_languages: Vec::new(),
        dedup: folio_engine::Dedup::Source,
        allow_private_urls: Some(shared.options.allow_private_urls),
        keep_items: true,
    };
    let (item, chunks) = ops::ingest_one(shared, call, request).await?;
    Ok(item_output(library_name, &item, chunks))
}

/// `POST /upload`: a file's bytes ingested into a library, with the
/// result in the seed's single-document shape.
pub async fn ingest_upload(
    shared: &Shared,
    principal: Option<folio_engine::keys::Principal>,
    library: &str,
    name: String,
    bytes: Vec<u8>,
    metadata: Option<Map<String, Value>>,
) -> Result<Value, EngineError> {
    let target = IngestTarget::Bytes { name, bytes };
    let call = Call::detached("upload").by(principal);
    let output = ingest_one(shared, library, target, metadata, &call).await?;
    Ok(serde_json::to_value(output).unwrap_or_default())
}

/// The HTTP status of a failed upload (seed 004's table): 422 is an
/// unsupported extension only, checked before ingesting; a file the
/// pipeline cannot read (corrupt, empty) is a pipeline error, 500. A body
/// over the size limit stays 413, a read-only server or a key that may not
/// write there 403.
pub fn upload_status(code: ErrorCode) -> u16 {
    match code {
        ErrorCode::TooLarge => 413,
        ErrorCode::Unauthorized => 401,
        ErrorCode::ReadOnly | ErrorCode::Forbidden => 403,
        ErrorCode::RateLimited => 429,
        ErrorCode::InvalidArgument
        | ErrorCode::LibraryNotFound
        | ErrorCode::NotFound
        | ErrorCode::EmbeddingMismatch
        | ErrorCode::UnsupportedFormat
        | ErrorCode::MalformedInput
        | ErrorCode::EmptyContent
        | ErrorCode::PathNotAllowed
        | ErrorCode::UrlNotAllowed
        | ErrorCode::FetchFailed
        | ErrorCode::Timeout
        | ErrorCode::StoreBusy
        | ErrorCode::Storage
        | ErrorCode::Model
        | ErrorCode::Internal => 500,
    }
}

async fn ingest_single(
    shared: &Shared,
    library: String,
    target: IngestTarget,
    metadata: Option<Map<String, Value>>,
    call: &Call,
) -> CallToolResult {
    match ingest_one(shared, &library, target, metadata, call).await {
        Ok(output) => success(&output),
        Err(e) => error(e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct IngestFolderParams {
    /// Absolute or relative path to the folder to ingest.
    folder: String,
    #[serde(default = "default_library")]
    library: String,
    /// Key-value metadata attached to every document.
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    /// Scan subdirectories recursively (default true).
    #[serde(default = "yes")]
    recursive: bool,
    /// Max files processed simultaneously (at least 1, default 4).
    #[serde(default = "four")]
    #[schemars(range(min = 1))]
    max_concurrency: i64,
}

fn yes() -> bool {
    true
}
fn four() -> i64 {
    4
}

#[derive(Debug, Serialize, JsonSchema)]
struct FolderError {
    file: String,
    error: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct IngestFolderOutput {
    folder: String,
    library: String,
    total_files: usize,
    indexed: usize,
    replaced: usize,
    skipped: usize,
    failed: usize,
    results: Vec<IngestOutput>,
    errors: Vec<FolderError>,
}

async fn ingest_folder(shared: &Shared, p: IngestFolderParams, call: &Call) -> CallToolResult {
    if p.folder.trim().is_empty() {
        return error("folder must not be empty");
    }
    if p.max_concurrency < 1 {
        return error(format!(
            "max_concurrency must be at least 1 (got {})",
            p.max_concurrency
        ));
    }
    // Confined before anything is listed: a folder outside the roots is
    // refused without naming what it holds.
    if let Err(e) = ops::server_files(shared, call) {
        return error(e);
    }
    let folder = PathBuf::from(p.folder.trim());
    let absolute = match shared.engine.confine(&folder) {
        Ok(path) if path.is_dir() => path,
        Ok(path) => return error(format!("{} is a file, not a folder", path.display())),
        Err(e) => return error(e),
    };
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(e),
    };
    let targets = if p.recursive {
        vec![IngestTarget::Path(absolute.clone())]
    } else {
        match folio_engine::files_in(&absolute, false) {
            Ok(files) => files.into_iter().map(IngestTarget::Path).collect(),
            Err(e) => return error(format!("folder {} cannot be read: {e}", absolute.display())),
        }
    };
    let request = IngestRequest {
        library: name,
        targets,
        metadata: p.metadata.unwrap_or_default(),
        title: None,
        force: false,
        archives: false,
        ocr_languages: Vec::new(),
        dedup: folio_engine::Dedup::Source,
        allow_private_urls: Some(shared.options.allow_private_urls),
        keep_items: true,
    };
    let library_name = p.library.clone();
    let outcome = ops::ingest_then(shared, call, request, move |engine, report| {
        let mut results = Vec::new();
        let mut errors = Vec::new();
        for item in &report.items {
            match &item.error {
                Some(e) => errors.push(FolderError {
                    file: item.source.clone(),
                    error: e.message.clone(),
                }),
                None => results.push(item_output(
                    &library_name,
                    item,
                    ops::stored_chunks(engine, item),
                )),
            }
        }
        Ok((results, errors))
    })
    .await;
    let (results, errors) = match outcome {
        Ok(done) => done,
        Err(e) => return error(e),
    };
    let count = |s: &str| results.iter().filter(|r| r.status == s).count();
    success(&IngestFolderOutput {
        folder: absolute.display().to_string(),
        library: p.library,
        total_files: results.len() + errors.len(),
        indexed: count("indexed"),
        replaced: count("replaced"),
        skipped: count("skipped"),
        failed: errors.len(),
        results,
        errors,
    })
}

// ---------------------------------------------------------------- search

#[derive(Debug, Deserialize, JsonSchema)]
struct SearchParams {
    /// Natural language search query.
    query: String,
    /// Max results to return (1 to 100, default 5).
    #[serde(default = "five")]
    #[schemars(range(min = 1, max = 100))]
    top_k: i64,
    /// Restrict to a library; null searches all libraries.
    #[serde(default)]
    library: Option<String>,
    /// Field equality filters, AND-ed: file_type, page, last_modified, source, title,
    /// doc_id, library, chunk_index. Other keys are refused.
    #[serde(default)]
    filter: Option<Map<String, Value>>,
}

fn five() -> i64 {
    5
}

#[derive(Debug, Serialize, JsonSchema)]
struct SearchResult {
    doc_id: String,
    source: String,
    title: String,
    library: String,
    file_type: String,
    last_modified: String,
    /// 0 when the page is unknown or not applicable.
    page: u32,
    content: String,
    chunk_index: u32,
    metadata: Map<String, Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct SearchOutput {
    results: Vec<SearchResult>,
}

const FILTER_FIELDS: [&str; 8] = [
    "file_type",
    "page",
    "last_modified",
    "source",
    "title",
    "doc_id",
    "library",
    "chunk_index",
];

/// The file type mcpvectordb reports: the source's extension, else the format.
fn file_type(source: &str, format: &str) -> String {
    let name = source.rsplit(['/', '\\']).next().unwrap_or(source);
    match name.rsplit_once('.') {
        Some((stem, ext))
            if !stem.is_empty()
                && !ext.is_empty()
                && ext.len() <= 5
                && ext.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            ext.to_ascii_lowercase()
        }
        _ => match format {
            "markdown" => "md".into(),
            "text" => "txt".into(),
            other => other.into(),
        },
    }
}

/// Filters the engine applies before ranking, and those checked on hits.
struct Filters {
    engine: Filter,
    library: Option<String>,
    page: Option<u64>,
    chunk_index: Option<u64>,
    file_type: Option<String>,
    last_modified: Option<String>,
}

fn filters(given: Option<Map<String, Value>>) -> Result<Filters, String> {
    let mut out = Filters {
        engine: Filter::default(),
        library: None,
        page: None,
        chunk_index: None,
        file_type: None,
        last_modified: None,
    };
    for (key, value) in given.unwrap_or_default() {
        if !FILTER_FIELDS.contains(&key.as_str()) {
            return Err(format!(
                "invalid filter key {key:?}; valid keys: {}",
                FILTER_FIELDS.join(", ")
            ));
        }
        let scalar = match &value {
            Value::String(_) | Value::Number(_) => value.clone(),
            _ => return Err(format!("filter {key:?} must be a string or an integer")),
        };
        let field = match key.as_str() {
            "page" | "chunk_index" => {
                let n = scalar
                    .as_u64()
                    .ok_or_else(|| format!("filter {key:?} must be a non-negative integer"))?;
                if key == "page" {
                    out.page = Some(n);
                } else {
                    out.chunk_index = Some(n);
                }
                continue;
            }
            "library" => {
                out.library = Some(
                    scalar
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| scalar.to_string()),
                );
                continue;
            }
            "file_type" => {
                out.file_type = Some(scalar.as_str().unwrap_or_default().to_ascii_lowercase());
                continue;
            }
            "last_modified" => {
                out.last_modified = Some(
                    scalar
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| scalar.to_string()),
                );
                continue;
            }
            "doc_id" => {
                let id = scalar
                    .as_str()
                    .map(internal_id)
                    .unwrap_or_else(|| scalar.to_string());
                out.engine.conditions.push(folio_core::Condition::Equals {
                    field: "document_id".into(),
                    value: Value::String(id),
                });
                continue;
            }
            other => other,
        };
        out.engine.conditions.push(folio_core::Condition::Equals {
            field: field.to_string(),
            value: scalar,
        });
    }
    Ok(out)
}

/// Whether a hit passes the filters checked on hits. Each compares the
/// value the result reports, so a filter and its field always agree.
fn keep(hit: &SearchHit, f: &Filters) -> bool {
    let page_ok = f
        .page
        .is_none_or(|p| u64::from(hit.page_start.unwrap_or(0)) == p);
    let modified_ok = f.last_modified.as_ref().is_none_or(|wanted| {
        let empty = Map::new();
        let metadata = hit.metadata.as_ref().unwrap_or(&empty);
        &last_modified(metadata, hit.ingested_at.as_deref().unwrap_or("")) == wanted
    });
    let index_ok = f
        .chunk_index
        .is_none_or(|i| u64::from(hit.chunk_index.unwrap_or(0)) == i);
    let type_ok = f.file_type.as_ref().is_none_or(|t| {
        &file_type(
            hit.source.as_deref().unwrap_or(""),
            hit.format.as_deref().unwrap_or(""),
        ) == t
    });
    page_ok && modified_ok && index_ok && type_ok
}

async fn search(shared: &Shared, p: SearchParams, call: &Call) -> CallToolResult {
    if p.query.trim().is_empty() {
        return error("query must not be empty");
    }
    if !(1..=100).contains(&p.top_k) {
        return error(format!("top_k must be between 1 and 100 (got {})", p.top_k));
    }
    let f = match filters(p.filter) {
        Ok(f) => f,
        Err(m) => return error(m),
    };
    let wanted = match (&p.library, &f.library) {
        (Some(a), Some(b)) if a != b => return success(&SearchOutput { results: vec![] }),
        (Some(a), _) | (None, Some(a)) => Some(a.clone()),
        (None, None) => None,
    };
    let wanted = match wanted.as_deref().map(library).transpose() {
        Ok(wanted) => wanted,
        Err(e) => return error(e),
    };
    let top_k = p.top_k as usize;
    let post_filtered = f.page.is_some()
        || f.chunk_index.is_some()
        || f.file_type.is_some()
        || f.last_modified.is_some();
    // The request for each library: hybrid, fused by reciprocal rank as the
    // seed's server fuses; deeper when hits are filtered afterwards.
    let depth = if post_filtered {
        shared.engine.config().limits.max_top_k
    } else {
        top_k
    };
    let (query, filter) = (p.query.clone(), f.engine.clone());
    let request = move |name: LibraryName| {
        let mut request = SearchRequest::new(name, query.clone());
        request.mode = Mode::Hybrid;
        request.top_k = depth;
        request.filter = filter.clone();
        request.response_mode = ResponseMode::Full;
        request.group_by_document = false;
        request.max_chars_per_chunk = usize::MAX / 2;
        request.fusion = Some(folio_search::Fusion::Rrf {
            k: 60.0,
            lexical_weight: 1.0,
            dense_weight: 1.0,
        });
        request
    };
    let hits = match ops::search_across(shared, call, wanted, request, move |h| keep(h, &f), top_k)
        .await
    {
        Ok(hits) => hits,
        Err(e) => return error(e),
    };
    // Full mode carries the document fields with each hit: no reads here.
    let results = hits
        .into_iter()
        .map(|(library, hit)| {
            let source = hit.source.unwrap_or_default();
            let metadata = hit.metadata.unwrap_or_default();
            SearchResult {
                file_type: file_type(&source, hit.format.as_deref().unwrap_or("")),
                doc_id: public_id(&hit.document_id),
                source,
                title: hit.title.unwrap_or_default(),
                library: seed_name(&library),
                last_modified: last_modified(
                    &metadata,
                    hit.ingested_at.as_deref().unwrap_or_default(),
                ),
                page: hit.page_start.unwrap_or(0),
                content: hit.text.unwrap_or_default(),
                chunk_index: hit.chunk_index.unwrap_or(0),
                metadata: client_metadata(metadata),
            }
        })
        .collect();
    let output = SearchOutput { results };
    let links: Vec<_> = output
        .results
        .iter()
        .map(|r| (r.doc_id.clone(), Some(r.title.clone())))
        .collect();
    linking(success(&output), links)
}

// ---------------------------------------------------------------- documents

#[derive(Debug, Deserialize, JsonSchema)]
struct ListDocumentsParams {
    /// Filter by library; null lists all.
    #[serde(default)]
    library: Option<String>,
    /// Max documents to return (1 to 1000, default 20).
    #[serde(default = "twenty")]
    #[schemars(range(min = 1, max = 1000))]
    limit: i64,
    /// Pagination offset.
    #[serde(default)]
    #[schemars(range(min = 0))]
    offset: i64,
}

fn twenty() -> i64 {
    20
}

#[derive(Debug, Serialize, JsonSchema)]
struct DocumentEntry {
    doc_id: String,
    source: String,
    title: String,
    library: String,
    content_hash: String,
    created_at: String,
    metadata: Map<String, Value>,
    chunk_count: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ListDocumentsOutput {
    documents: Vec<DocumentEntry>,
    count: usize,
}

async fn list_documents(shared: &Shared, p: ListDocumentsParams, call: &Call) -> CallToolResult {
    if !(1..=1000).contains(&p.limit) {
        return error(format!(
            "limit must be between 1 and 1000 (got {})",
            p.limit
        ));
    }
    if p.offset < 0 {
        return error(format!("offset must not be negative (got {})", p.offset));
    }
    let wanted = match p.library.as_deref().map(library).transpose() {
        Ok(wanted) => wanted,
        Err(e) => return error(e),
    };
    let page = ops::documents_across(shared, call, wanted, p.offset as u64, p.limit as u64).await;
    match page {
        Ok(documents) => success(&ListDocumentsOutput {
            count: documents.len(),
            documents: documents
                .into_iter()
                .map(|d| DocumentEntry {
                    doc_id: public_id(d.id.as_str()),
                    source: d.source,
                    title: d.title.unwrap_or_default(),
                    library: seed_name(&d.library),
                    content_hash: d.content_hash,
                    created_at: seed_time(&d.ingested_at),
                    metadata: client_metadata(d.metadata),
                    chunk_count: d.chunk_count,
                })
                .collect(),
        }),
        Err(e) => error(e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NoParams {}

#[derive(Debug, Serialize, JsonSchema)]
struct LibraryEntry {
    library: String,
    document_count: u64,
    chunk_count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ListLibrariesOutput {
    libraries: Vec<LibraryEntry>,
}

async fn list_libraries(shared: &Shared, call: &Call) -> CallToolResult {
    let caller = call.clone();
    match ops::run(shared, call, Touches::Visible, move |engine| {
        ops::visible(engine, &caller)
    })
    .await
    {
        Ok(libraries) => success(&ListLibrariesOutput {
            libraries: libraries
                .into_iter()
                .map(|l| LibraryEntry {
                    library: seed_name(&l.name),
                    document_count: l.document_count,
                    chunk_count: l.chunk_count,
                })
                .collect(),
        }),
        Err(e) => error(e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct DocIdParams {
    /// The document id.
    doc_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct DeleteOutput {
    status: String,
    doc_id: String,
    deleted_chunks: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct LibraryParams {
    /// The library to delete.
    library: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct DeleteLibraryOutput {
    status: String,
    library: String,
    deleted_documents: u64,
    deleted_chunks: u64,
}

async fn delete_library(shared: &Shared, p: LibraryParams, call: &Call) -> CallToolResult {
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(e),
    };
    match ops::delete_library(shared, call, name).await {
        Ok((documents, chunks)) => success(&DeleteLibraryOutput {
            status: "deleted".into(),
            library: p.library,
            deleted_documents: documents,
            deleted_chunks: chunks,
        }),
        Err(e) => error(e),
    }
}

#[derive(Debug, Serialize, JsonSchema)]
struct GetDocumentOutput {
    doc_id: String,
    source: String,
    title: String,
    library: String,
    /// The full document text as Markdown.
    content: String,
    chunk_count: u32,
    metadata: Map<String, Value>,
}

async fn get_document(shared: &Shared, p: DocIdParams, call: &Call) -> CallToolResult {
    let id = internal_id(&p.doc_id);
    let touched = id.clone();
    match ops::run(shared, call, Touches::Document(&touched), move |engine| {
        engine.document(&id)
    })
    .await
    {
        Ok(d) => success(&GetDocumentOutput {
            doc_id: public_id(d.id.as_str()),
            source: d.source,
            title: d.title.unwrap_or_default(),
            library: seed_name(&d.library),
            content: d.text,
            chunk_count: d.chunk_count,
            metadata: client_metadata(d.metadata),
        }),
        Err(e) => error(e.about(p.doc_id)),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ServerInfoParams {
    /// File path to test for readability.
    #[serde(default)]
    check_path: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ServerInfoOutput {
    platform: String,
    /// folio is not a Python program: always null.
    python_version: Option<String>,
    /// folio's version.
    version: String,
    cwd: String,
    /// Where the index lives (folio's data directory).
    lancedb_uri: String,
    /// Where the embedding model lives.
    fastembed_cache_path: String,
    transport: String,
    note: String,
    /// Search cache counters (repeated queries are answered from it until
    /// the next write).
    cache: CacheInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_check: Option<PathCheck>,
}

fn server_info(shared: &Shared, p: ServerInfoParams, call: &Call) -> CallToolResult {
    // Where things live is for the local user and admins only.
    let sees_server = ops::sees_server(call);
    let shown = |path: String| if sees_server { path } else { String::new() };
    let note = if shared.options.transport == "stdio" {
        "In stdio mode the server runs on the same machine as the client: it reads files from this \
         machine's file system, within the configured roots. Use ingest_content for text the server \
         cannot reach."
    } else {
        "Over HTTP the server reads its own file system, not the client's: upload files with \
         POST /upload or send text with ingest_content."
    };
    success(&ServerInfoOutput {
        platform: std::env::consts::OS.into(),
        python_version: None,
        version: shared.options.identity().1,
        cwd: shown(
            std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        ),
        lancedb_uri: shown(shared.engine.config().data_dir.display().to_string()),
        fastembed_cache_path: shown(
            shared
                .options
                .model_dir
                .as_ref()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        ),
        transport: shared.options.transport.clone(),
        note: note.into(),
        cache: CacheInfo::of(shared),
        path_check: p.check_path.map(|path| check_path(shared, call, &path)),
    })
}

// ---------------------------------------------------------------- registry

pub fn tools() -> Vec<Tool> {
    vec![
        define::<IngestFileParams, IngestOutput>(
            "ingest_file",
            "Ingest a file",
            "Convert a local file (PDF, DOCX, PPTX, EPUB, HTML, Markdown, text) and index it. The same \
             path in the same library is skipped when unchanged and replaced when changed.",
            Effect::Write,
            false,
        ),
        define::<IngestContentParams, IngestOutput>(
            "ingest_content",
            "Ingest text content",
            "Index pre-extracted text or Markdown directly, without reading the server's file system: \
             use it when you have already read a file the server cannot access. Dedup is keyed on \
             (source, library).",
            Effect::Write,
            false,
        ),
        define::<IngestUrlParams, IngestOutput>(
            "ingest_url",
            "Ingest a web page",
            "Fetch an HTTP or HTTPS URL, convert its content and index it. Private and loopback \
             addresses are refused.",
            Effect::Write,
            true,
        ),
        define::<IngestFolderParams, IngestFolderOutput>(
            "ingest_folder",
            "Ingest a folder",
            "Ingest every supported document in a folder (recursively by default). Files that fail are \
             listed in errors without stopping the rest.",
            Effect::Write,
            false,
        ),
        define::<SearchParams, SearchOutput>(
            "search",
            "Search documents",
            "Hybrid (BM25 + vector) search over indexed chunks, in one library or all. filter holds \
             field equality conditions (file_type, page, last_modified, source, title, doc_id, library, \
             chunk_index), AND-ed.",
            Effect::Read,
            false,
        ),
        define::<ListDocumentsParams, ListDocumentsOutput>(
            "list_documents",
            "List documents",
            "List indexed documents with metadata, in one library or all, with limit and offset.",
            Effect::Read,
            false,
        ),
        define::<NoParams, ListLibrariesOutput>(
            "list_libraries",
            "List libraries",
            "List all libraries with document and chunk counts.",
            Effect::Read,
            false,
        ),
        define::<DocIdParams, DeleteOutput>(
            "delete_document",
            "Delete a document",
            "Remove a document and all its chunks from the index.",
            Effect::Delete,
            false,
        ),
        define::<LibraryParams, DeleteLibraryOutput>(
            "delete_library",
            "Delete a library",
            "Remove a library with all its documents and chunks from the index. It cannot be \
             undone.",
            Effect::Delete,
            false,
        ),
        define::<DocIdParams, GetDocumentOutput>(
            "get_document",
            "Get a document",
            "Return the full Markdown text of an indexed document.",
            Effect::Read,
            false,
        ),
        define::<ServerInfoParams, ServerInfoOutput>(
            "server_info",
            "Server diagnostics",
            "Return server diagnostics; with check_path, whether the server can read that file before \
             you try to ingest it.",
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
    match name {
        "ingest_file" => {
            with_args(arguments, error, |p: IngestFileParams| {
                ingest_single(
                    shared,
                    p.library,
                    IngestTarget::File(PathBuf::from(&p.path)),
                    p.metadata,
                    call,
                )
            })
            .await
        }
        "ingest_content" => {
            with_args(arguments, error, |p: IngestContentParams| async move {
                if p.source.trim().is_empty() {
                    return error("source must not be empty");
                }
                let target = IngestTarget::Content {
                    name: p.source,
                    text: p.content,
                    format: Some("markdown".into()),
                    title: None,
                };
                ingest_single(shared, p.library, target, p.metadata, call).await
            })
            .await
        }
        "ingest_url" => {
            with_args(arguments, error, |p: IngestUrlParams| {
                ingest_single(
                    shared,
                    p.library,
                    IngestTarget::Url(p.url),
                    p.metadata,
                    call,
                )
            })
            .await
        }
        "ingest_folder" => {
            with_args(arguments, error, |p: IngestFolderParams| {
                ingest_folder(shared, p, call)
            })
            .await
        }
        "search" => with_args(arguments, error, |p: SearchParams| search(shared, p, call)).await,
        "list_documents" => {
            with_args(arguments, error, |p: ListDocumentsParams| {
                list_documents(shared, p, call)
            })
            .await
        }
        "list_libraries" => {
            with_args(arguments, error, |_: NoParams| list_libraries(shared, call)).await
        }
        "delete_document" => {
            with_args(arguments, error, |p: DocIdParams| async move {
                match ops::delete_document(shared, call, internal_id(&p.doc_id)).await {
                    Ok(chunks) => success(&DeleteOutput {
                        status: "deleted".into(),
                        doc_id: p.doc_id,
                        deleted_chunks: chunks,
                    }),
                    Err(e) => error(e.about(p.doc_id)),
                }
            })
            .await
        }
        "delete_library" => {
            with_args(arguments, error, |p: LibraryParams| {
                delete_library(shared, p, call)
            })
            .await
        }
        "get_document" => {
            with_args(arguments, error, |p: DocIdParams| {
                get_document(shared, p, call)
            })
            .await
        }
        "server_info" => {
            with_args(arguments, error, |p: ServerInfoParams| async move {
                server_info(shared, p, call)
            })
            .await
        }
        _ => error(format!("unknown tool {name}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_library_name_maps_onto_a_folio_name_and_back() {
        let names = [
            "default",
            "My Library",
            "Forschung/Ärzte",
            "a_20b",
            "mcpvectordb.x",
            "mcpvectordb._20",
            "_hidden",
            "../etc",
            "日本",
        ];
        let mut seen = std::collections::HashSet::new();
        for name in names {
            let folio = library(name).unwrap();
            assert!(seen.insert(folio.clone()), "{name} collides");
            assert_eq!(seed_name(&folio), name);
        }
        // Names folio takes keep their folio name.
        assert_eq!(
            library("research.papers-2024").unwrap().as_str(),
            "research.papers-2024"
        );
        assert!(library("").is_err());
        assert!(library(&"é".repeat(40)).is_err(), "too long once encoded");
    }

    #[test]
    fn document_uuids_carry_the_id_and_are_checked() {
        let id = "0123456789abcdef";
        let uuid = public_id(id);
        assert_eq!(uuid::Uuid::parse_str(&uuid).unwrap().get_version_num(), 8);
        assert_eq!(internal_id(&uuid), id);
        assert_eq!(internal_id(&uuid.to_uppercase()), id);
        assert_eq!(internal_id(id), id);
        // One digit changed: not a document's UUID.
        let forged = format!("1{}", &uuid[1..]);
        assert_eq!(internal_id(&forged), forged);
        assert_eq!(
            seed_time("2025-06-01T09:00:00Z"),
            "2025-06-01T09:00:00+00:00"
        );
    }

    #[test]
    fn file_types_come_from_extensions_then_formats() {
        assert_eq!(file_type("/a/b/Report.PDF", "pdf"), "pdf");
        assert_eq!(file_type("notes", "markdown"), "md");
        assert_eq!(file_type("https://example.com/page", "html"), "html");
        assert_eq!(file_type(".hidden", "text"), "txt");
    }

    #[test]
    fn unknown_filter_keys_are_refused_and_known_ones_mapped() {
        let bad: Map<String, Value> = serde_json::from_value(json!({"colour": "red"})).unwrap();
        assert!(filters(Some(bad)).err().unwrap().contains("colour"));
        let good: Map<String, Value> =
            serde_json::from_value(json!({"file_type": "PDF", "page": 3, "doc_id": "x"})).unwrap();
        let f = filters(Some(good)).unwrap();
        assert_eq!(f.file_type.as_deref(), Some("pdf"));
        assert_eq!(f.page, Some(3));
        assert_eq!(f.engine.conditions.len(), 1);
        let nested: Map<String, Value> = serde_json::from_value(json!({"page": [1, 2]})).unwrap();
        assert!(filters(Some(nested)).is_err());
    }
}
