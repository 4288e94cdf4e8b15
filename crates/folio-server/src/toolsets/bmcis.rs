//! The bmcis toolset (seed 003): one hybrid `semantic_search` tool with four
//! progressively larger result shapes. It searches the library named by the
//! server option `bmcis_library`.

use std::time::Instant;

use folio_core::LibraryName;
use folio_engine::{EngineError, Fusion, Mode, ResponseMode, SearchHit, SearchRequest};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::ops::{self, Call, Shared};
use crate::tool::{Effect, define, failure, success, with_args};
use crate::toolsets::common::folio_code;

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Shape {
    IdsOnly,
    #[default]
    Metadata,
    Preview,
    Full,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Params {
    /// Search query (natural language or keywords), 1 to 500 characters.
    #[schemars(length(min = 1, max = 500))]
    query: String,
    /// Number of results to return (1 to 50, default 10).
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    top_k: i64,
    /// Response detail level: ids_only (~100 tokens), metadata (~2-4K tokens, the default),
    /// preview (~5-10K tokens), full (~10-50K+ tokens).
    #[serde(default)]
    response_mode: Shape,
}

fn ten() -> i64 {
    10
}

/// Level 0: ids and scores.
#[derive(Debug, Serialize, JsonSchema)]
struct ResultIds {
    chunk_id: i64,
    hybrid_score: f64,
    rank: u32,
}

/// Level 1: metadata, no content.
#[derive(Debug, Serialize, JsonSchema)]
struct ResultMetadata {
    chunk_id: i64,
    source_file: String,
    source_category: Option<String>,
    hybrid_score: f64,
    rank: u32,
    chunk_index: u32,
    total_chunks: u32,
}

/// Level 2: metadata and a 200-character snippet.
#[derive(Debug, Serialize, JsonSchema)]
struct ResultPreview {
    chunk_id: i64,
    source_file: String,
    source_category: Option<String>,
    hybrid_score: f64,
    rank: u32,
    chunk_index: u32,
    total_chunks: u32,
    chunk_snippet: String,
    context_header: String,
}

/// Level 3: everything.
#[derive(Debug, Serialize, JsonSchema)]
struct ResultFull {
    chunk_id: i64,
    chunk_text: String,
    similarity_score: f64,
    bm25_score: f64,
    hybrid_score: f64,
    rank: u32,
    score_type: String,
    source_file: String,
    source_category: Option<String>,
    context_header: String,
    chunk_index: u32,
    total_chunks: u32,
    chunk_token_count: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
enum SearchResult {
    Ids(ResultIds),
    Metadata(ResultMetadata),
    Preview(ResultPreview),
    Full(Box<ResultFull>),
}

#[derive(Debug, Serialize, JsonSchema)]
struct Output {
    results: Vec<SearchResult>,
    total_found: usize,
    strategy_used: String,
    execution_time_ms: f64,
}

/// bmcis chunk ids are integers: a stable 53-bit number derived from
/// folio's chunk id (safe in JSON numbers everywhere).
fn chunk_number(chunk_id: &str) -> i64 {
    let digest = Sha256::digest(chunk_id.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(bytes) >> 11) as i64
}

fn snippet(text: &str) -> String {
    let (cut, truncated) = folio_engine::cut_chars(text, 200);
    if truncated { format!("{cut}...") } else { cut }
}

fn category(hit: &SearchHit) -> Option<String> {
    hit.metadata
        .as_ref()
        .and_then(|m| m.get("category").or_else(|| m.get("source_category")))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn shape(hit: SearchHit, mode: Shape) -> SearchResult {
    let chunk_id = chunk_number(&hit.chunk_id);
    let hybrid_score = f64::from(hit.score);
    let source_file = hit.source.clone().unwrap_or_default();
    let source_category = category(&hit);
    let chunk_index = hit.chunk_index.unwrap_or(0);
    let total_chunks = hit.chunk_count.unwrap_or(0);
    let context_header = hit
        .context
        .clone()
        .filter(|c| !c.is_empty())
        .map(|c| c.replace('\n', " > "))
        .unwrap_or_else(|| {
            let mut parts = vec![hit.title.clone().unwrap_or_else(|| source_file.clone())];
            parts.extend(hit.section_path.clone().unwrap_or_default());
            parts.join(" > ")
        });
    let text = hit.text.clone().unwrap_or_default();
    match mode {
        Shape::IdsOnly => SearchResult::Ids(ResultIds {
            chunk_id,
            hybrid_score,
            rank: hit.rank,
        }),
        Shape::Metadata => SearchResult::Metadata(ResultMetadata {
            chunk_id,
            source_file,
            source_category,
            hybrid_score,
            rank: hit.rank,
            chunk_index,
            total_chunks,
        }),
        Shape::Preview => SearchResult::Preview(ResultPreview {
            chunk_id,
            source_file,
            source_category,
            hybrid_score,
            rank: hit.rank,
            chunk_index,
            total_chunks,
            chunk_snippet: snippet(&text),
            context_header,
        }),
        Shape::Full => SearchResult::Full(Box::new(ResultFull {
            chunk_id,
            chunk_text: text,
            similarity_score: f64::from(hit.dense_score.unwrap_or(0.0)),
            bm25_score: f64::from(hit.lexical_score.unwrap_or(0.0)),
            hybrid_score,
            rank: hit.rank,
            score_type: "hybrid".into(),
            source_file,
            source_category,
            context_header,
            chunk_index,
            total_chunks,
            chunk_token_count: hit.token_count.unwrap_or(0),
        })),
    }
}

fn error(message: String, code: &str) -> CallToolResult {
    failure(json!({"error": {"code": code, "message": message, "details": {}}}))
}

async fn semantic_search(shared: &Shared, p: Params, call: &Call) -> CallToolResult {
    let started = Instant::now();
    let chars = p.query.chars().count();
    if p.query.trim().is_empty() || chars > 500 {
        return error(
            format!("query must be 1 to 500 characters (got {chars})"),
            "INVALID_ARGUMENT",
        );
    }
    if !(1..=50).contains(&p.top_k) {
        return error(
            format!("top_k must be between 1 and 50 (got {})", p.top_k),
            "INVALID_ARGUMENT",
        );
    }
    let library = match LibraryName::new(&shared.options.bmcis_library) {
        Ok(l) => l,
        Err(e) => return error(e.to_string(), "INVALID_ARGUMENT"),
    };
    let mut request = SearchRequest::new(library, p.query.clone());
    request.mode = Mode::Hybrid;
    // Seed 003's HybridSearch merges its vector and BM25 rankings by
    // reciprocal rank fusion (k 60, equal weights), not by scores.
    request.fusion = Some(Fusion::Rrf {
        k: 60.0,
        lexical_weight: 1.0,
        dense_weight: 1.0,
    });
    request.top_k = p.top_k as usize;
    request.group_by_document = false;
    // Scores and chunk fields come with every mode but ids_only; text only
    // where the shape shows it.
    request.response_mode = match p.response_mode {
        Shape::IdsOnly => ResponseMode::IdsOnly,
        Shape::Metadata => ResponseMode::Metadata,
        Shape::Preview | Shape::Full => ResponseMode::Full,
    };
    request.max_chars_per_chunk = usize::MAX / 2;
    let response = match ops::search(shared, call, request).await {
        Ok(r) => r,
        Err(e) => return engine_error(&e),
    };
    let results: Vec<SearchResult> = response
        .hits
        .into_iter()
        .map(|h| shape(h, p.response_mode))
        .collect();
    success(&Output {
        total_found: results.len(),
        results,
        strategy_used: "hybrid".into(),
        execution_time_ms: started.elapsed().as_secs_f64() * 1e3,
    })
}

pub fn engine_error(e: &EngineError) -> CallToolResult {
    error(e.to_string(), folio_code(e.code))
}

/// The tool, its description naming the library it searches.
pub fn tools(library: &str) -> Vec<Tool> {
    vec![define::<Params, Output>(
        "semantic_search",
        "Semantic search",
        format!(
            "Hybrid semantic search over the knowledge base (folio library \"{library}\"), \
             combining vector similarity and BM25 keyword matching. Progressive disclosure through \
             response_mode: ids_only (chunk ids, scores, ranks), metadata (the default: source file, \
             category, chunk position), preview (plus a 200-character snippet and context header) or \
             full (chunk text, similarity, BM25 and hybrid scores, token count). Start with \
             metadata, then ask for full on fewer results."
        ),
        Effect::Read,
        false,
    )]
}

pub async fn call(
    shared: &Shared,
    name: &str,
    arguments: Option<JsonObject>,
    call: &Call,
) -> CallToolResult {
    match name {
        "semantic_search" => {
            with_args(
                arguments,
                |m| error(m, "INVALID_ARGUMENT"),
                |p: Params| semantic_search(shared, p, call),
            )
            .await
        }
        _ => error(format!("unknown tool {name}"), "INVALID_ARGUMENT"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_numbers_are_stable_and_json_safe() {
        let a = chunk_number("0123456789abcdef:3");
        assert_eq!(a, chunk_number("0123456789abcdef:3"));
        assert_ne!(a, chunk_number("0123456789abcdef:4"));
        assert!((0..(1i64 << 53)).contains(&a));
    }

    #[test]
    fn snippets_are_200_characters_and_marked() {
        assert_eq!(snippet("short"), "short");
        let long = "é".repeat(300);
        let s = snippet(&long);
        assert!(s.ends_with("...") && s.chars().count() == 203);
    }
}
