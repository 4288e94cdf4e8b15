//! Tools and envelopes two toolsets share. `store_chunks` is seed 000's
//! batched upsert of caller-embedded chunks; the native toolset serves the
//! same tool, so its definition, behaviour and error envelope (seed 000's,
//! also the citeloom toolset's) live here, once.

use folio_core::{ErrorCode, LibraryName};
use folio_engine::{EngineError, StoreChunksRequest, StoredChunk};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::ops::{self, Call, Shared, Touches, Written};
use crate::tool::{Effect, define, failure, success, with_args};

const MIN_BATCH: usize = 100;
const MAX_BATCH: usize = 500;

// ---------------------------------------------------------------- folio's codes

/// folio's own error code, as the native and bmcis toolsets report it.
/// Written out, not derived from `ErrorCode::as_str`, so the wire names are
/// pinned here and a new code does not compile until it has one.
pub fn folio_code(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
        ErrorCode::LibraryNotFound => "LIBRARY_NOT_FOUND",
        ErrorCode::NotFound => "NOT_FOUND",
        ErrorCode::EmbeddingMismatch => "EMBEDDING_MISMATCH",
        ErrorCode::UnsupportedFormat => "UNSUPPORTED_FORMAT",
        ErrorCode::MalformedInput => "MALFORMED_INPUT",
        ErrorCode::TooLarge => "TOO_LARGE",
        ErrorCode::EmptyContent => "EMPTY_CONTENT",
        ErrorCode::PathNotAllowed => "PATH_NOT_ALLOWED",
        ErrorCode::UrlNotAllowed => "URL_NOT_ALLOWED",
        ErrorCode::FetchFailed => "FETCH_FAILED",
        ErrorCode::Timeout => "TIMEOUT",
        ErrorCode::StoreBusy => "STORE_BUSY",
        ErrorCode::ReadOnly => "READ_ONLY",
        ErrorCode::Unauthorized => "UNAUTHORIZED",
        ErrorCode::Forbidden => "FORBIDDEN",
        ErrorCode::RateLimited => "RATE_LIMITED",
        ErrorCode::Storage => "STORAGE",
        ErrorCode::Model => "MODEL",
        ErrorCode::Internal => "INTERNAL",
    }
}

// ---------------------------------------------------------------- seed 000's envelope

/// The seed's error code for an engine error. The seeds name five codes;
/// failures they do not foresee get codes of the same style, and
/// `details.reason` carries folio's own code.
pub fn code(e: &EngineError) -> &'static str {
    seed_code(e.code)
}

/// The seed's error code for one of folio's codes (see `code`).
pub fn seed_code(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::LibraryNotFound => "INVALID_PROJECT",
        ErrorCode::EmbeddingMismatch => "EMBEDDING_MISMATCH",
        ErrorCode::Timeout => "TIMEOUT",
        ErrorCode::Storage | ErrorCode::StoreBusy => "INDEX_UNAVAILABLE",
        // The caller's mistakes: what they sent cannot be used as sent.
        ErrorCode::InvalidArgument
        | ErrorCode::UnsupportedFormat
        | ErrorCode::MalformedInput
        | ErrorCode::TooLarge
        | ErrorCode::EmptyContent => "INVALID_ARGUMENT",
        ErrorCode::NotFound => "NOT_FOUND",
        ErrorCode::PathNotAllowed | ErrorCode::UrlNotAllowed => "PATH_NOT_ALLOWED",
        ErrorCode::ReadOnly => "READ_ONLY",
        ErrorCode::Unauthorized => "UNAUTHORIZED",
        ErrorCode::Forbidden => "FORBIDDEN",
        ErrorCode::RateLimited => "RATE_LIMITED",
        ErrorCode::FetchFailed => "SOURCE_UNAVAILABLE",
        ErrorCode::Model | ErrorCode::Internal => "INTERNAL_ERROR",
    }
}

/// The citeloom error envelope.
pub fn error(
    shared: &Shared,
    call: &Call,
    e: &EngineError,
    project: Option<&str>,
) -> CallToolResult {
    error_with(shared, call, e, project, Map::new())
}

/// The citeloom error envelope with more particulars in `details`.
pub fn error_with(
    shared: &Shared,
    call: &Call,
    e: &EngineError,
    project: Option<&str>,
    mut details: Map<String, Value>,
) -> CallToolResult {
    if let Some(project) = project {
        details.insert("project_id".into(), Value::String(project.to_string()));
    }
    details.insert("reason".into(), Value::String(e.code.as_str().into()));
    let mut message = e.to_string();
    if e.code == ErrorCode::LibraryNotFound {
        // Only the projects the caller may use: a key's refusal names no
        // other library.
        let available: Vec<String> = shared
            .engine
            .libraries()
            .map(|l| {
                l.into_iter()
                    .filter(|l| call.may_touch(&l.name))
                    .map(|l| l.name.to_string())
                    .collect()
            })
            .unwrap_or_default();
        message = format!(
            "Project '{}' not found. Available projects: {}",
            project.unwrap_or_default(),
            available.join(", ")
        );
        details.insert("available_projects".into(), json!(available));
    }
    if let Some(input) = &e.input {
        details.insert("input".into(), Value::String(input.clone()));
    }
    if let Some(Value::Object(more)) = &e.details {
        for (key, value) in more {
            details.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    failure(json!({
        "error": {"code": code(e), "message": message, "details": details},
        "correlation_id": call.correlation_id,
    }))
}

pub fn invalid(
    shared: &Shared,
    call: &Call,
    message: String,
    project: Option<&str>,
) -> CallToolResult {
    error(shared, call, &EngineError::invalid(message), project)
}

pub fn project(name: &str) -> Result<LibraryName, EngineError> {
    LibraryName::new(name)
        .map_err(|e| EngineError::new(ErrorCode::LibraryNotFound, e.to_string()).about(name))
}

// ---------------------------------------------------------------- store_chunks

/// store_chunks, as both toolsets list it: one definition, so the two can
/// be enabled together.
pub fn store_chunks_tool() -> Tool {
    define::<StoreChunksParams, StoreChunksOutput>(
        "store_chunks",
        "Store chunks with their vectors",
        "Batched upsert of chunks you embedded yourself into an existing project (library): 100 to \
         500 items per call, each with a deterministic id, text, embedding and metadata. Vectors \
         must match the project's embedding model and dimension (EMBEDDING_MISMATCH otherwise). \
         Re-sending the same id replaces that chunk; nothing is duplicated.",
        Effect::Write,
        false,
    )
}

/// Answers a store_chunks call.
pub async fn call_store_chunks(
    shared: &Shared,
    arguments: Option<JsonObject>,
    call: &Call,
) -> CallToolResult {
    let given_project = arguments
        .as_ref()
        .and_then(|a| a.get("project"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let refuse = |m: String| invalid(shared, call, m, given_project.as_deref());
    with_args(arguments, refuse, |p: StoreChunksParams| {
        store_chunks(shared, p, call)
    })
    .await
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ChunkItem {
    /// Deterministic chunk id.
    id: String,
    /// Chunk text.
    text: String,
    /// Embedding vector, in the project's embedding space.
    embedding: Vec<f32>,
    /// Payload: project, source {path, title}, zotero {citekey, tags, doi}, doc {page_span,
    /// section, section_path}, embed_model, version, fulltext.
    #[serde(default)]
    metadata: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct StoreChunksParams {
    /// Project identifier (the library).
    project: String,
    /// 100 to 500 chunks.
    #[schemars(length(min = 100, max = 500))]
    items: Vec<ChunkItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct StoreChunksOutput {
    chunks_written: usize,
    project: String,
    embed_model: String,
    warnings: Vec<String>,
    correlation_id: String,
}

fn object<'a>(metadata: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    metadata.get(key).and_then(Value::as_object)
}

fn stored_chunk(item: ChunkItem) -> StoredChunk {
    let m = &item.metadata;
    let source = object(m, "source");
    let doc = object(m, "doc");
    let zotero = object(m, "zotero");
    let page_span: Vec<u32> = doc
        .and_then(|d| d.get("page_span"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64().map(|n| n as u32))
                .collect()
        })
        .unwrap_or_default();
    let section_path: Vec<String> = doc
        .and_then(|d| d.get("section_path"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut metadata = Map::new();
    // Citation fields flattened so search filters and hits can use them.
    if let Some(z) = zotero {
        for key in ["citekey", "doi", "tags", "year", "authors"] {
            if let Some(v) = z.get(key) {
                metadata.insert(key.into(), v.clone());
            }
        }
    }
    for key in ["citekey", "doi", "tags", "year", "authors", "version"] {
        if let Some(v) = m.get(key) {
            metadata.insert(key.into(), v.clone());
        }
    }
    metadata.insert("payload".into(), Value::Object(item.metadata.clone()));
    StoredChunk {
        id: item.id,
        text: item.text,
        vector: item.embedding,
        title: source
            .and_then(|s| s.get("title"))
            .and_then(Value::as_str)
            .map(str::to_string),
        source: source
            .and_then(|s| s.get("path"))
            .and_then(Value::as_str)
            .map(str::to_string),
        page_start: page_span.first().copied(),
        page_end: page_span.last().copied(),
        section_path,
        metadata,
    }
}

async fn store_chunks(shared: &Shared, p: StoreChunksParams, call: &Call) -> CallToolResult {
    if !(MIN_BATCH..=MAX_BATCH).contains(&p.items.len()) {
        return invalid(
            shared,
            call,
            format!(
                "a batch holds {MIN_BATCH} to {MAX_BATCH} chunks (got {})",
                p.items.len()
            ),
            Some(&p.project),
        );
    }
    let name = match project(&p.project) {
        Ok(n) => n,
        Err(e) => return error(shared, call, &e, Some(&p.project)),
    };
    let mut models: Vec<String> = p
        .items
        .iter()
        .filter_map(|i| i.metadata.get("embed_model").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    models.sort();
    models.dedup();
    if models.len() > 1 {
        return error(
            shared,
            call,
            &EngineError::new(
                ErrorCode::EmbeddingMismatch,
                format!("one batch mixes embedding models: {}", models.join(", ")),
            ),
            Some(&p.project),
        );
    }
    let request = StoreChunksRequest {
        library: name,
        chunks: p.items.into_iter().map(stored_chunk).collect(),
        model: models.pop().map(|m| normalise_model(&m)),
        create_library: false,
    };
    let progress = ops::write_progress(shared, call);
    let touched = request.library.clone();
    let result = match ops::write(shared, call, Touches::Library(&touched), move |engine| {
        engine.store_chunks(&request, &progress)
    })
    .await
    {
        Written::Done(result) => result,
        // Stopped before its commit (nothing written), or committed just
        // as the limit passed: say which.
        Written::TimedOut { error, stopped } => match stopped {
            Ok(report) => {
                let message = format!(
                    "{}: the batch was committed as the limit passed ({} chunks written)",
                    error.message,
                    report.written + report.unchanged
                );
                let mut details = Map::new();
                details.insert(
                    "chunks_written".into(),
                    json!(report.written + report.unchanged),
                );
                let error = EngineError::new(ErrorCode::Timeout, message);
                return error_with(shared, call, &error, Some(&p.project), details);
            }
            // Stopped, or failed, before its commit: nothing was written.
            Err(e) => Err(EngineError::new(
                ErrorCode::Timeout,
                format!(
                    "{}: stopped before its commit; nothing was written{}",
                    error.message,
                    if e.code == ErrorCode::Timeout {
                        String::new()
                    } else {
                        format!(" ({})", e.message)
                    }
                ),
            )
            .with_details(json!({"chunks_written": 0}))),
        },
    };
    match result {
        Ok(report) => {
            let mut warnings = Vec::new();
            if report.unchanged > 0 {
                warnings.push(format!(
                    "{} chunks were already stored unchanged",
                    report.unchanged
                ));
            }
            success(&StoreChunksOutput {
                chunks_written: report.written + report.unchanged,
                project: p.project,
                embed_model: report.model,
                warnings,
                correlation_id: call.correlation_id.clone(),
            })
        }
        Err(e) => error(shared, call, &e, Some(&p.project)),
    }
}

/// citeloom prefixes model names with their provider ("fastembed/…"); folio
/// records the Hugging Face id. Both name the same model.
fn normalise_model(model: &str) -> String {
    model
        .strip_prefix("fastembed/")
        .map(|m| {
            if m.contains('/') {
                m.to_string()
            } else {
                format!("sentence-transformers/{m}")
            }
        })
        .unwrap_or_else(|| model.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folio_codes_are_the_core_codes_in_upper_case() {
        for &code in ErrorCode::ALL {
            assert_eq!(folio_code(code), code.as_str().to_ascii_uppercase());
        }
    }

    #[test]
    fn provider_prefixed_model_names_are_understood() {
        assert_eq!(
            normalise_model("fastembed/all-MiniLM-L6-v2"),
            "sentence-transformers/all-MiniLM-L6-v2"
        );
        assert_eq!(
            normalise_model("fastembed/BAAI/bge-small-en-v1.5"),
            "BAAI/bge-small-en-v1.5"
        );
        assert_eq!(normalise_model("x/y"), "x/y");
    }
}
