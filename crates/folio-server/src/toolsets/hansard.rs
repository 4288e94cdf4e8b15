//! The hansard toolset (seed 002): parliamentary speeches as typed records
//! in one library (server option `hansard_library`) with the record schema
//! `examples/hansard-schema.toml`, declared on first ingest.
//!
//! A speech's id is a UUID derived from the SHA-256 of its text, so the same
//! speech always gets the same id and duplicates are found by id. Errors are
//! FastMCP tool errors: `isError` with the message as text.

use std::time::Instant;

use folio_core::{Condition, DocumentId, Filter, LibraryName, NeighbourOrder, RecordSchema};
use folio_engine::{
    EngineError, FacetRequest, IngestRequest, IngestStatus, IngestTarget, Mode, ResponseMode,
    SearchRequest,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::ops::{self, Call, Shared, Touches};
use crate::tool::{Effect, cited, define, linking, success, with_args};

/// The record schema of the speeches library.
pub const SCHEMA_TOML: &str = include_str!("../../../../examples/hansard-schema.toml");

/// The parsed schema, parsed once.
fn schema() -> &'static RecordSchema {
    static SCHEMA: std::sync::OnceLock<RecordSchema> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        // The file is part of the build and checked by a test.
        let value: Value = toml::from_str(SCHEMA_TOML).unwrap_or_default();
        RecordSchema::from_value(value).unwrap_or_else(|e| panic!("hansard schema: {e}"))
    })
}

/// The chamber filter, or the error for a chamber the contract does not know.
fn chamber_condition(chamber: &str) -> Result<Condition, CallToolResult> {
    if !matches!(chamber, "House of Representatives" | "Senate") {
        return Err(tool_error(format!(
            "Invalid input: chamber must be 'House of Representatives' or 'Senate' (got {chamber:?})"
        )));
    }
    Ok(Condition::Equals {
        field: "chamber".into(),
        value: json!(chamber),
    })
}

const CHAMBER: &str = "^(House of Representatives|Senate)$";
const UUID: &str = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/// The UUID of a speech: SHA-256 of its text, as a version-8 UUID.
pub fn speech_uuid(content_hash: &str) -> String {
    let mut bytes = [0u8; 16];
    hex::decode_to_slice(&content_hash[..32], &mut bytes).unwrap_or_default();
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// The UUID of a chunk, derived from folio's chunk id.
fn chunk_uuid(chunk_id: &str) -> String {
    let digest = Sha256::digest(chunk_id.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .to_string()
}

fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

pub fn engine_error(e: &EngineError) -> CallToolResult {
    use folio_core::ErrorCode as C;
    tool_error(match e.code {
        C::InvalidArgument => format!("Invalid input: {}", e.message),
        C::LibraryNotFound
        | C::NotFound
        | C::EmbeddingMismatch
        | C::UnsupportedFormat
        | C::MalformedInput
        | C::TooLarge
        | C::EmptyContent
        | C::PathNotAllowed
        | C::UrlNotAllowed
        | C::FetchFailed
        | C::Timeout
        | C::StoreBusy
        | C::ReadOnly
        | C::Unauthorized
        | C::Forbidden
        | C::RateLimited
        | C::Storage
        | C::Model
        | C::Internal => format!("{}: {}", e.code.as_str(), e),
    })
}

fn library(shared: &Shared) -> Result<LibraryName, CallToolResult> {
    LibraryName::new(&shared.options.hansard_library)
        .map_err(|e| tool_error(format!("Invalid input: hansard library: {e}")))
}

fn text_field(metadata: &Map<String, Value>, key: &str) -> String {
    metadata
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn tags(metadata: &Map<String, Value>) -> Vec<String> {
    metadata
        .get("topic_tags")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

// ---- search_speeches -------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchParams {
    /// Search query (natural language question or keywords).
    #[schemars(length(min = 1, max = 1000))]
    query: String,
    /// Filter by speaker name (exact match, case-insensitive).
    #[schemars(length(max = 200))]
    speaker: Option<String>,
    /// Filter by political party (exact match, case-insensitive).
    #[schemars(length(max = 100))]
    party: Option<String>,
    /// Filter by chamber: House of Representatives or Senate.
    #[schemars(regex(pattern = CHAMBER))]
    chamber: Option<String>,
    /// Filter speeches from this date onwards (ISO 8601, YYYY-MM-DD).
    #[serde(default)]
    #[schemars(schema_with = "date_schema")]
    date_from: Option<String>,
    /// Filter speeches up to this date (ISO 8601, YYYY-MM-DD).
    #[serde(default)]
    #[schemars(schema_with = "date_schema")]
    date_to: Option<String>,
    /// Filter by topic tags (ANY match), at most 10.
    #[schemars(length(max = 10))]
    topic_tags: Option<Vec<String>>,
    /// Maximum number of results to return (1 to 50).
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    limit: i64,
    /// Include complete speech text in results (default: excerpt only).
    #[serde(default)]
    include_full_text: bool,
}

fn ten() -> i64 {
    10
}

fn date_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"], "format": "date"})
}

#[derive(Debug, Serialize, JsonSchema)]
struct SearchResult {
    /// UUID of the speech.
    speech_id: String,
    /// UUID of the matching chunk.
    chunk_id: String,
    /// The matching text (up to 800 characters).
    excerpt: String,
    /// The complete speech, when include_full_text.
    full_text: Option<String>,
    speaker: String,
    party: String,
    chamber: String,
    #[schemars(schema_with = "required_date")]
    date: String,
    title: String,
    hansard_reference: String,
    topic_tags: Vec<String>,
    /// Relevance in [0, 1] (BM25 and cosine similarity, fused).
    #[schemars(range(min = 0.0, max = 1.0))]
    relevance_score: f64,
    /// Position of the chunk in the speech.
    #[schemars(range(min = 0))]
    chunk_index: u32,
}

fn required_date(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "format": "date"})
}

#[derive(Debug, Serialize, JsonSchema)]
struct SearchOutput {
    /// Ordered by relevance, best first.
    results: Vec<SearchResult>,
    /// Candidate chunks found before the limit was applied.
    total_found: usize,
    query_embedding_time_ms: f64,
    search_time_ms: f64,
}

fn check_date(name: &str, value: &Option<String>) -> Result<Option<String>, CallToolResult> {
    value
        .as_deref()
        .map(|v| {
            folio_core::record::parse_date(v)
                .filter(|d| d.len() == v.trim().len())
                .ok_or_else(|| {
                    tool_error(format!(
                        "Invalid input: {name} must be a date YYYY-MM-DD (got {v:?})"
                    ))
                })
        })
        .transpose()
}

fn search_filter(p: &SearchParams) -> Result<Filter, CallToolResult> {
    let chars = p.query.chars().count();
    if chars == 0 || chars > 1000 {
        return Err(tool_error(format!(
            "Invalid input: query must be 1 to 1000 characters (got {chars})"
        )));
    }
    if !(1..=50).contains(&p.limit) {
        return Err(tool_error(format!(
            "Invalid input: limit must be between 1 and 50 (got {})",
            p.limit
        )));
    }
    let mut conditions = Vec::new();
    for (name, value, max) in [("speaker", &p.speaker, 200), ("party", &p.party, 100)] {
        if let Some(value) = value {
            if value.chars().count() > max {
                return Err(tool_error(format!(
                    "Invalid input: {name} must be at most {max} characters"
                )));
            }
            conditions.push(Condition::EqualsFold {
                field: name.into(),
                value: value.trim().to_string(),
            });
        }
    }
    if let Some(chamber) = &p.chamber {
        conditions.push(chamber_condition(chamber)?);
    }
    let from = check_date("date_from", &p.date_from)?;
    let to = check_date("date_to", &p.date_to)?;
    if let (Some(from), Some(to)) = (&from, &to)
        && from > to
    {
        return Err(tool_error(format!(
            "Invalid input: date_from {from} is after date_to {to}"
        )));
    }
    if from.is_some() || to.is_some() {
        conditions.push(Condition::Range {
            field: "date".into(),
            gte: from.map(Value::String),
            gt: None,
            lte: to.map(Value::String),
            lt: None,
        });
    }
    if let Some(topics) = &p.topic_tags {
        if topics.len() > 10 {
            return Err(tool_error(format!(
                "Invalid input: at most 10 topic_tags (got {})",
                topics.len()
            )));
        }
        if !topics.is_empty() {
            conditions.push(Condition::AnyOf {
                field: "topic_tags".into(),
                values: topics.iter().map(|t| json!(t)).collect(),
            });
        }
    }
    Ok(Filter { conditions })
}

async fn search_speeches(shared: &Shared, p: SearchParams, call: &Call) -> CallToolResult {
    let filter = match search_filter(&p) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let library = match library(shared) {
        Ok(l) => l,
        Err(e) => return e,
    };
    call.info(format!("Searching for: {}", p.query)).await;
    call.step(0, 3, "embedding the query").await;
    // The seed's search is a vector similarity search with metadata
    // filters; its relevance_score is the cosine similarity.
    let mut request = SearchRequest::new(library, p.query.clone());
    request.mode = Mode::Dense;
    request.top_k = p.limit as usize;
    request.filter = filter;
    request.group_by_document = false;
    request.response_mode = ResponseMode::Full;
    request.max_chars_per_chunk = 800;
    let include_full_text = p.include_full_text;
    let touched = request.library.clone();
    let result = ops::run(shared, call, Touches::Library(&touched), move |engine| {
        // The seed's model takes any string of 1 to 1,000 characters; one
        // with nothing to search for finds nothing.
        if request.query.trim().is_empty() {
            return Ok(None);
        }
        let response = match engine.search(&request) {
            Err(e) if e.code == folio_core::ErrorCode::LibraryNotFound => return Ok(None),
            other => other?,
        };
        let mut texts = std::collections::HashMap::new();
        if include_full_text {
            for hit in &response.hits {
                if !texts.contains_key(&hit.document_id) {
                    let text = engine.document(&hit.document_id)?.text;
                    texts.insert(hit.document_id.clone(), text);
                }
            }
        }
        Ok(Some((response, texts)))
    })
    .await;
    let (response, texts) = match result {
        Ok(Some(found)) => found,
        Ok(None) => {
            call.step(3, 3, "nothing to find").await;
            call.info("Found 0 results").await;
            return success(&SearchOutput {
                results: Vec::new(),
                total_found: 0,
                query_embedding_time_ms: 0.0,
                search_time_ms: 0.0,
            });
        }
        Err(e) => return engine_error(&e),
    };
    call.step(1, 3, "query embedded").await;
    call.step(2, 3, "searched").await;
    let cited = cited(&response.hits);
    let results: Vec<SearchResult> = response
        .hits
        .into_iter()
        .map(|hit| {
            let metadata = hit.metadata.clone().unwrap_or_default();
            SearchResult {
                speech_id: text_field(&metadata, "speech_id"),
                chunk_id: chunk_uuid(&hit.chunk_id),
                excerpt: hit.text.clone().unwrap_or_default(),
                full_text: texts.get(&hit.document_id).cloned(),
                speaker: text_field(&metadata, "speaker"),
                party: text_field(&metadata, "party"),
                chamber: text_field(&metadata, "chamber"),
                date: text_field(&metadata, "date"),
                title: hit.title.clone().unwrap_or_default(),
                hansard_reference: text_field(&metadata, "hansard_reference"),
                topic_tags: tags(&metadata),
                relevance_score: f64::from(hit.dense_score.unwrap_or(hit.score)).clamp(0.0, 1.0),
                chunk_index: hit.chunk_index.unwrap_or(0),
            }
        })
        .collect();
    call.step(3, 3, "done").await;
    call.info(format!("Found {} results", results.len())).await;
    let output = success(&SearchOutput {
        total_found: response.candidates.max(results.len()),
        results,
        query_embedding_time_ms: response.embed_ms,
        search_time_ms: response.search_ms,
    });
    linking(output, cited)
}

// ---- get_speech ------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetParams {
    /// UUID of the speech to retrieve.
    #[schemars(regex(pattern = UUID))]
    speech_id: String,
    /// Include the individual chunks (default: full text only).
    #[serde(default)]
    include_chunks: bool,
    /// Include the speeches just before and after (by date, same chamber).
    #[serde(default)]
    include_context: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ChunkDetail {
    chunk_id: String,
    chunk_index: u32,
    chunk_text: String,
    /// Characters in the chunk.
    chunk_size: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct SpeechSummary {
    speech_id: String,
    title: String,
    speaker: String,
    #[schemars(schema_with = "required_date")]
    date: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct SpeechContext {
    previous_speech: Option<SpeechSummary>,
    next_speech: Option<SpeechSummary>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct GetOutput {
    speech_id: String,
    title: String,
    full_text: String,
    word_count: i64,
    speaker: String,
    party: String,
    chamber: String,
    electorate: Option<String>,
    state: String,
    #[schemars(schema_with = "required_date")]
    date: String,
    hansard_reference: String,
    topic_tags: Vec<String>,
    source_url: Option<String>,
    /// When the speech was ingested (ISO 8601).
    ingestion_timestamp: String,
    /// The chunks, when include_chunks.
    chunks: Option<Vec<ChunkDetail>>,
    /// The speeches before and after, when include_context.
    context: Option<SpeechContext>,
}

fn summary(document: &folio_core::DocumentSummary) -> SpeechSummary {
    SpeechSummary {
        speech_id: text_field(&document.metadata, "speech_id"),
        title: document.title.clone().unwrap_or_default(),
        speaker: text_field(&document.metadata, "speaker"),
        date: text_field(&document.metadata, "date"),
    }
}

fn speech_document_id(library: &LibraryName, speech_id: &str) -> DocumentId {
    DocumentId::derive(library, &format!("record:{speech_id}"))
}

async fn get_speech(shared: &Shared, p: GetParams, call: &Call) -> CallToolResult {
    let valid = p.speech_id.len() == 36
        && p.speech_id.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_digit() || ('a'..='f').contains(&c),
        });
    if !valid {
        return tool_error(format!(
            "Invalid input: speech_id must be a lowercase UUID (got {:?})",
            p.speech_id
        ));
    }
    let library = match library(shared) {
        Ok(l) => l,
        Err(e) => return e,
    };
    call.info(format!("Retrieving speech: {}", p.speech_id))
        .await;
    let id = speech_document_id(&library, &p.speech_id);
    let (include_chunks, include_context) = (p.include_chunks, p.include_context);
    let result = ops::run(shared, call, Touches::Library(&library), move |engine| {
        let document = engine.document(id.as_str())?;
        let chunks = if include_chunks {
            Some(engine.chunks(id.as_str(), 0..u32::MAX)?)
        } else {
            None
        };
        let context = if include_context {
            // The seed's SQL: the nearest strictly earlier (later) date in
            // the same chamber.
            let order = NeighbourOrder {
                order_by: "date".into(),
                group_by: vec!["chamber".into()],
                strict: true,
            };
            Some(engine.neighbours(id.as_str(), Some(&order))?)
        } else {
            None
        };
        Ok((document, chunks, context))
    })
    .await;
    let (document, chunks, context) = match result {
        Ok(found) => found,
        Err(e) if e.code == folio_core::ErrorCode::NotFound => {
            return tool_error(format!("Speech not found: {}", p.speech_id));
        }
        Err(e) => return engine_error(&e),
    };
    let m = &document.metadata;
    let optional = |key: &str| m.get(key).and_then(Value::as_str).map(str::to_string);
    let output = GetOutput {
        speech_id: p.speech_id.clone(),
        title: document.title.clone().unwrap_or_default(),
        word_count: m
            .get("word_count")
            .and_then(Value::as_i64)
            .unwrap_or_else(|| document.text.split_whitespace().count() as i64),
        full_text: document.text.clone(),
        speaker: text_field(m, "speaker"),
        party: text_field(m, "party"),
        chamber: text_field(m, "chamber"),
        electorate: optional("electorate"),
        state: text_field(m, "state"),
        date: text_field(m, "date"),
        hansard_reference: text_field(m, "hansard_reference"),
        topic_tags: tags(m),
        source_url: optional("source_url"),
        ingestion_timestamp: document.ingested_at.clone(),
        chunks: chunks.map(|chunks| {
            chunks
                .into_iter()
                .map(|c| ChunkDetail {
                    chunk_id: chunk_uuid(c.id.as_str()),
                    chunk_index: c.index,
                    chunk_size: c.text.chars().count(),
                    chunk_text: c.text,
                })
                .collect()
        }),
        context: context.map(|(before, after)| SpeechContext {
            previous_speech: before.as_ref().map(summary),
            next_speech: after.as_ref().map(summary),
        }),
    };
    call.info("Speech retrieved successfully").await;
    success(&output)
}

// ---- ingest_speech ---------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IngestParams {
    #[schemars(length(min = 1, max = 500))]
    title: String,
    /// The speech text (at least 10 characters).
    #[schemars(length(min = 10))]
    full_text: String,
    #[schemars(length(min = 1, max = 200))]
    speaker: String,
    #[schemars(length(min = 1, max = 100))]
    party: String,
    #[schemars(regex(pattern = CHAMBER))]
    chamber: String,
    #[schemars(length(max = 100))]
    electorate: Option<String>,
    #[schemars(regex(pattern = "^(NSW|VIC|QLD|WA|SA|TAS|ACT|NT)$"))]
    state: String,
    /// Date of the speech (ISO 8601, YYYY-MM-DD).
    #[schemars(schema_with = "required_date")]
    date: String,
    #[schemars(length(min = 1, max = 500))]
    hansard_reference: String,
    /// Topic tags, at most 20.
    #[serde(default)]
    #[schemars(length(max = 20))]
    topic_tags: Option<Vec<String>>,
    #[schemars(length(max = 1000))]
    source_url: Option<String>,
    /// Skip ingestion if the speech already exists (same text, SHA-256);
    /// false re-ingests it with the metadata given.
    #[serde(default = "yes")]
    skip_if_duplicate: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Serialize, JsonSchema)]
struct IngestOutput {
    /// UUID of the speech (the existing one when skipped).
    speech_id: String,
    /// "created" or "skipped" (a duplicate).
    status: String,
    chunks_created: u32,
    embeddings_generated: u32,
    total_time_ms: f64,
    embedding_time_ms: f64,
    word_count: usize,
    /// SHA-256 of the speech text, hex.
    content_hash: String,
}

/// Makes sure the speeches library exists with the hansard schema; refuses
/// a library that holds other records.
fn ensure_library(engine: &folio_engine::Engine, library: &LibraryName) -> Result<(), EngineError> {
    match engine.record_schema(library) {
        Ok(Some(existing)) if &existing == schema() => Ok(()),
        Ok(Some(_)) => Err(EngineError::invalid(format!(
            "library {library} has another record schema than the hansard one"
        ))),
        Ok(None)
        | Err(EngineError {
            code: folio_core::ErrorCode::LibraryNotFound,
            ..
        }) => engine.set_record_schema(library, schema()),
        Err(e) => Err(e),
    }
}

/// The record of a speech, validated against the seed's rules and the
/// hansard schema before anything touches the index, so a bad speech
/// changes nothing.
fn speech_record(
    p: IngestParams,
    speech_id: &str,
    content_hash: &str,
    word_count: usize,
) -> Result<Map<String, Value>, CallToolResult> {
    // The seed's patterns are exact: "Senate " is not a chamber.
    if !matches!(p.chamber.as_str(), "House of Representatives" | "Senate") {
        return Err(tool_error(format!(
            "Validation failed: chamber must match {CHAMBER} (got {:?})",
            p.chamber
        )));
    }
    if !matches!(
        p.state.as_str(),
        "NSW" | "VIC" | "QLD" | "WA" | "SA" | "TAS" | "ACT" | "NT"
    ) {
        return Err(tool_error(format!(
            "Validation failed: state must be one of NSW, VIC, QLD, WA, SA, TAS, ACT, NT (got {:?})",
            p.state
        )));
    }
    let mut record = Map::new();
    let mut put = |key: &str, value: Value| {
        record.insert(key.to_string(), value);
    };
    put("speech_id", json!(speech_id));
    put("title", json!(p.title));
    put("full_text", json!(p.full_text));
    put("speaker", json!(p.speaker));
    put("party", json!(p.party));
    put("chamber", json!(p.chamber));
    put("state", json!(p.state));
    put("date", json!(p.date));
    put("hansard_reference", json!(p.hansard_reference));
    put("topic_tags", json!(p.topic_tags.unwrap_or_default()));
    put("word_count", json!(word_count));
    put("content_hash", json!(content_hash));
    if let Some(electorate) = p.electorate {
        put("electorate", json!(electorate));
    }
    if let Some(url) = p.source_url {
        put("source_url", json!(url));
    }
    schema()
        .validate(&record)
        .map_err(|e| tool_error(format!("Validation failed: {e}")))?;
    Ok(record)
}

/// Stores a speech's record in the speeches library (made on first use),
/// unless `duplicate_of` (its content hash and UUID) names a speech already
/// there: then `Err` with that speech's UUID.
fn store_speech(
    engine: &folio_engine::Engine,
    library: &LibraryName,
    record: Map<String, Value>,
    duplicate_of: Option<(&String, &String)>,
    progress: &dyn folio_engine::Progress,
) -> Result<Result<folio_engine::IngestReport, String>, EngineError> {
    ensure_library(engine, library)?;
    if let Some((hash, speech)) = duplicate_of {
        // The seed's duplicate check: any speech with this content hash.
        let same = Filter {
            conditions: vec![Condition::Equals {
                // The record's field, not the document's own hash.
                field: "metadata.content_hash".into(),
                value: json!(hash),
            }],
        };
        if let Some(existing) = engine.find_documents(library, &same, 1)?.pop() {
            return Ok(Err(text_field(&existing.metadata, "speech_id")));
        }
        // A speech loaded without its content_hash field: its UUID says.
        match engine.document(speech_document_id(library, speech).as_str()) {
            Ok(_) => return Ok(Err(speech.clone())),
            Err(e) if e.code == folio_core::ErrorCode::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    let request = IngestRequest::new(library.clone(), vec![IngestTarget::Record(record)]);
    engine.ingest(&request, progress).map(Ok)
}

async fn ingest_speech(shared: &Shared, p: IngestParams, call: &Call) -> CallToolResult {
    let started = Instant::now();
    let library = match library(shared) {
        Ok(l) => l,
        Err(e) => return e,
    };
    call.info(format!("Ingesting speech: {}", p.title)).await;
    call.step(0, 5, "validating").await;
    let content_hash = hex::encode(Sha256::digest(p.full_text.as_bytes()));
    // The first speech of a text has the UUID its hash gives; one inserted
    // again on purpose (skip_if_duplicate false) is a new speech, as the
    // seed's INSERT makes it, with a new UUID.
    let skip = p.skip_if_duplicate;
    let speech_id = if skip {
        speech_uuid(&content_hash)
    } else {
        uuid::Uuid::new_v4().to_string()
    };
    let word_count = p.full_text.split_whitespace().count();
    let record = match speech_record(p, &speech_id, &content_hash, word_count) {
        Ok(record) => record,
        Err(refused) => return refused,
    };
    call.step(1, 5, "checking for a duplicate").await;
    let hash = content_hash.clone();
    let speech = speech_id.clone();
    let touched = library.clone();
    // The speech is charged to the caller's ingest budget as it is
    // admitted; its progress is the seed's steps, not the engine's.
    let progress = ops::write_progress(shared, call).silent();
    let outcome = ops::run(shared, call, Touches::Library(&touched), move |engine| {
        store_speech(
            engine,
            &library,
            record,
            skip.then_some((&hash, &speech)),
            &progress,
        )
    })
    .await;
    let base = |id: &str, status: &str, chunks: u32, embedding_time_ms: f64| IngestOutput {
        speech_id: id.to_string(),
        status: status.into(),
        chunks_created: chunks,
        embeddings_generated: chunks,
        total_time_ms: started.elapsed().as_secs_f64() * 1e3,
        embedding_time_ms,
        word_count,
        content_hash: content_hash.clone(),
    };
    match outcome {
        Ok(Err(existing)) => {
            call.info("Speech already exists (duplicate), skipping")
                .await;
            success(&base(&existing, "skipped", 0, 0.0))
        }
        Ok(Ok(report)) => {
            let Some(item) = report.items.first() else {
                return tool_error("ingestion produced no result");
            };
            if let Some(error) = &item.error {
                return engine_error(error);
            }
            // The seed's steps, in its order (folio stores the speech, its
            // chunks and their embeddings in one commit).
            call.step(2, 5, "speech stored").await;
            call.info(format!("Created speech: {speech_id}")).await;
            call.info(format!("Generated {} chunks", item.chunks)).await;
            call.step(3, 5, "chunked").await;
            call.step(4, 5, "embedded").await;
            call.info(format!("Generated {} embeddings", item.chunks))
                .await;
            call.step(5, 5, "done").await;
            let status = match item.status {
                IngestStatus::Skipped => "skipped",
                _ => "created",
            };
            let output = base(&speech_id, status, item.chunks, report.embed_ms);
            call.info(format!(
                "Ingestion complete in {:.0}ms",
                output.total_time_ms
            ))
            .await;
            success(&output)
        }
        Err(e) => engine_error(&e),
    }
}

// ---- list_speakers ---------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SpeakersParams {
    /// Filter by chamber.
    #[schemars(regex(pattern = CHAMBER))]
    chamber: Option<String>,
    /// Filter by party (case-insensitive).
    party: Option<String>,
    /// Minimum number of speeches (default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    min_speeches: i64,
    /// Maximum number of speakers to return (1 to 500).
    #[serde(default = "hundred")]
    #[schemars(range(min = 1, max = 500))]
    limit: i64,
}

fn one() -> i64 {
    1
}

fn hundred() -> i64 {
    100
}

#[derive(Debug, Serialize, JsonSchema)]
struct SpeakerSummary {
    speaker: String,
    party: String,
    chamber: String,
    state: String,
    electorate: Option<String>,
    speech_count: u64,
    #[schemars(schema_with = "required_date")]
    first_speech_date: String,
    #[schemars(schema_with = "required_date")]
    last_speech_date: String,
    total_words: i64,
    /// Most common topic tags, most frequent first (at most 5).
    top_topics: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct SpeakersOutput {
    /// Most speeches first.
    speakers: Vec<SpeakerSummary>,
    /// Speakers matching the filters and min_speeches, before the limit.
    total_speakers: u64,
}

async fn list_speakers(shared: &Shared, p: SpeakersParams, call: &Call) -> CallToolResult {
    if p.min_speeches < 1 {
        return tool_error(format!(
            "Invalid input: min_speeches must be at least 1 (got {})",
            p.min_speeches
        ));
    }
    if !(1..=500).contains(&p.limit) {
        return tool_error(format!(
            "Invalid input: limit must be between 1 and 500 (got {})",
            p.limit
        ));
    }
    let mut conditions = Vec::new();
    if let Some(chamber) = &p.chamber {
        match chamber_condition(chamber) {
            Ok(condition) => conditions.push(condition),
            Err(e) => return e,
        }
    }
    if let Some(party) = &p.party {
        conditions.push(Condition::EqualsFold {
            field: "party".into(),
            value: party.trim().to_string(),
        });
    }
    let library = match library(shared) {
        Ok(l) => l,
        Err(e) => return e,
    };
    call.info("Listing speakers").await;
    let request = FacetRequest {
        group_by: ["speaker", "party", "chamber", "state"]
            .map(String::from)
            .to_vec(),
        stats: ["date", "word_count", "electorate"]
            .map(String::from)
            .to_vec(),
        top_values: Some(("topic_tags".into(), 5)),
        filter: Filter { conditions },
        min_count: p.min_speeches as u64,
        limit: p.limit as usize,
    };
    let touched = library.clone();
    let facets = match ops::run(shared, call, Touches::Library(&touched), move |engine| {
        engine.facets(&library, &request)
    })
    .await
    {
        Ok(f) => f,
        Err(e) if e.code == folio_core::ErrorCode::LibraryNotFound => {
            return success(&SpeakersOutput {
                speakers: Vec::new(),
                total_speakers: 0,
            });
        }
        Err(e) => return engine_error(&e),
    };
    let key = |g: &folio_engine::FacetGroup, i: usize| {
        g.key
            .get(i)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let speakers = facets
        .groups
        .iter()
        .map(|g| {
            let stat = |field: &str| g.stats.get(field);
            let date = stat("date");
            SpeakerSummary {
                speaker: key(g, 0),
                party: key(g, 1),
                chamber: key(g, 2),
                state: key(g, 3),
                electorate: stat("electorate").and_then(|s| s.max.as_str().map(str::to_string)),
                speech_count: g.count,
                first_speech_date: date
                    .and_then(|s| s.min.as_str())
                    .unwrap_or_default()
                    .to_string(),
                last_speech_date: date
                    .and_then(|s| s.max.as_str())
                    .unwrap_or_default()
                    .to_string(),
                total_words: stat("word_count").and_then(|s| s.sum).unwrap_or(0.0) as i64,
                top_topics: g.top_values.iter().map(|(t, _)| t.clone()).collect(),
            }
        })
        .collect();
    success(&SpeakersOutput {
        speakers,
        total_speakers: facets.total_groups,
    })
}

pub fn tools() -> Vec<Tool> {
    vec![
        define::<SearchParams, SearchOutput>(
            "search_speeches",
            "Search speeches",
            "Search Australian Hansard speeches: hybrid semantic + keyword search with metadata \
             filters (speaker and party exact, case-insensitive; chamber; date range; topic tags, any \
             match). Returns matching excerpts (~800 characters) with speaker, party, chamber, date, \
             title, Hansard reference, topic tags and a relevance score in [0, 1]; set \
             include_full_text for whole speeches.",
            Effect::Read,
            false,
        ),
        define::<GetParams, GetOutput>(
            "get_speech",
            "Get speech",
            "Retrieve a complete speech by its UUID with all metadata; optionally its chunks \
             (include_chunks) and the speeches just before and after it in the same chamber \
             (include_context).",
            Effect::Read,
            false,
        ),
        define::<IngestParams, IngestOutput>(
            "ingest_speech",
            "Ingest speech",
            "Ingest one speech: validate its metadata (chamber House of Representatives or Senate, \
             state NSW/VIC/QLD/WA/SA/TAS/ACT/NT, ISO date, lengths), chunk, embed and store it. A \
             speech with the same text (SHA-256) is skipped (status \"skipped\") unless \
             skip_if_duplicate is false.",
            Effect::Write,
            false,
        ),
        define::<SpeakersParams, SpeakersOutput>(
            "list_speakers",
            "List speakers",
            "List speakers with their speech counts, first and last speech dates, total words and \
             most common topics; filter by chamber and party, require a minimum number of \
             speeches. Most speeches first.",
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
    let refuse = |m: String| tool_error(format!("Invalid input: {m}"));
    match name {
        "search_speeches" => {
            with_args(arguments, refuse, |p| search_speeches(shared, p, call)).await
        }
        "get_speech" => with_args(arguments, refuse, |p| get_speech(shared, p, call)).await,
        "ingest_speech" => with_args(arguments, refuse, |p| ingest_speech(shared, p, call)).await,
        "list_speakers" => with_args(arguments, refuse, |p| list_speakers(shared, p, call)).await,
        _ => tool_error(format!("unknown tool {name}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_file_is_valid() {
        let schema = schema();
        assert_eq!(schema.text, "full_text");
        assert_eq!(schema.key.as_deref(), Some("speech_id"));
    }

    #[test]
    fn speech_ids_are_uuids_from_the_text_hash() {
        let hash = hex::encode(Sha256::digest(b"A speech."));
        let id = speech_uuid(&hash);
        assert_eq!(id, speech_uuid(&hash));
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "8", "version 8");
        assert!(uuid::Uuid::parse_str(&id).is_ok());
        assert_ne!(id, speech_uuid(&hex::encode(Sha256::digest(b"Another."))));
    }
}
