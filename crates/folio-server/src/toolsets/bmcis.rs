//! The bmcis toolset (seed 003): a hybrid `semantic_search` tool with four
//! progressively larger result shapes, and `find_vendor_info` (the seed's
//! next step): entity-centric search over the vendors (entities of the type
//! `bmcis_vendor_type`) of the library named by `bmcis_library`.

use std::time::Instant;

use folio_core::{Condition, Filter, LibraryName};
use folio_engine::{EngineError, Fusion, Mode, ResponseMode, SearchHit, SearchRequest};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::ops::{self, Call, Shared};
use crate::tool::{Effect, cited, define, failure, linking, success, with_args};
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

/// The hybrid search seed 003 describes, for `top_k` results shaped as
/// `mode` asks.
fn seed_request(library: LibraryName, query: String, top_k: i64, mode: Shape) -> SearchRequest {
    let mut request = SearchRequest::new(library, query);
    request.mode = Mode::Hybrid;
    // Seed 003's HybridSearch merges its vector and BM25 rankings by
    // reciprocal rank fusion (k 60, equal weights), not by scores.
    request.fusion = Some(Fusion::Rrf {
        k: 60.0,
        lexical_weight: 1.0,
        dense_weight: 1.0,
    });
    request.top_k = top_k as usize;
    request.group_by_document = false;
    // Scores and chunk fields come with every mode but ids_only; text only
    // where the shape shows it.
    request.response_mode = match mode {
        Shape::IdsOnly => ResponseMode::IdsOnly,
        Shape::Metadata => ResponseMode::Metadata,
        Shape::Preview | Shape::Full => ResponseMode::Full,
    };
    request.max_chars_per_chunk = usize::MAX / 2;
    request
}

/// The hits of `request`, each in the shape `mode` asks for.
async fn shaped(
    shared: &Shared,
    call: &Call,
    request: SearchRequest,
    mode: Shape,
) -> Result<(Vec<SearchResult>, Vec<(String, Option<String>)>), CallToolResult> {
    let response = ops::search(shared, call, request)
        .await
        .map_err(|e| engine_error(&e))?;
    // The documents cited, for their links (seed 003's results name chunks
    // by number only).
    let cited = cited(&response.hits);
    let results = response.hits.into_iter().map(|h| shape(h, mode)).collect();
    Ok((results, cited))
}

/// Checks a text argument of 1 to `most` characters.
fn text_argument(name: &str, text: &str, most: usize) -> Result<(), CallToolResult> {
    let chars = text.chars().count();
    if text.trim().is_empty() || chars > most {
        return Err(error(
            format!("{name} must be 1 to {most} characters (got {chars})"),
            "INVALID_ARGUMENT",
        ));
    }
    Ok(())
}

fn top_k_argument(top_k: i64) -> Result<(), CallToolResult> {
    if !(1..=50).contains(&top_k) {
        return Err(error(
            format!("top_k must be between 1 and 50 (got {top_k})"),
            "INVALID_ARGUMENT",
        ));
    }
    Ok(())
}

fn bmcis_library(shared: &Shared) -> Result<LibraryName, CallToolResult> {
    LibraryName::new(&shared.options.bmcis_library)
        .map_err(|e| error(e.to_string(), "INVALID_ARGUMENT"))
}

async fn semantic_search(shared: &Shared, p: Params, call: &Call) -> CallToolResult {
    let started = Instant::now();
    let checked = text_argument("query", &p.query, 500)
        .and_then(|()| top_k_argument(p.top_k))
        .and_then(|()| bmcis_library(shared));
    let library = match checked {
        Ok(l) => l,
        Err(refused) => return refused,
    };
    let request = seed_request(library, p.query.clone(), p.top_k, p.response_mode);
    let (results, cited) = match shaped(shared, call, request, p.response_mode).await {
        Ok(r) => r,
        Err(refused) => return refused,
    };
    let output = success(&Output {
        total_found: results.len(),
        results,
        strategy_used: "hybrid".into(),
        execution_time_ms: started.elapsed().as_secs_f64() * 1e3,
    });
    linking(output, cited)
}

#[derive(Debug, Deserialize, JsonSchema)]
struct VendorParams {
    /// The vendor's name or an alias (case and punctuation aside; a prefix or a
    /// typo finds the closest vendor), 1 to 200 characters.
    #[schemars(length(min = 1, max = 200))]
    vendor_name: String,
    /// Passages about the vendor to return (1 to 50, default 10).
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    top_k: i64,
    /// Response detail level: ids_only (the vendor and chunk ids, ~100 tokens), metadata
    /// (the default: plus aliases, attributes, documents and related entities, ~2-4K tokens),
    /// preview (plus 200-character snippets), full (plus chunk text).
    #[serde(default)]
    response_mode: Shape,
}

/// The vendor, as the knowledge base knows it.
#[derive(Debug, Serialize, JsonSchema)]
struct Vendor {
    vendor_name: String,
    /// The entity's key (its name folded).
    entity_id: String,
    entity_type: String,
    /// name, alias, prefix or fuzzy: how vendor_name matched.
    matched_by: String,
    mention_count: u64,
    document_count: u64,
    /// metadata, preview and full only.
    #[serde(skip_serializing_if = "Option::is_none")]
    aliases: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attributes: Option<std::collections::BTreeMap<String, Value>>,
}

/// A document that mentions the vendor.
#[derive(Debug, Serialize, JsonSchema)]
struct VendorDocument {
    source_file: String,
    title: Option<String>,
    mentions: u64,
}

/// An entity mentioned in the same chunks as the vendor.
#[derive(Debug, Serialize, JsonSchema)]
struct RelatedEntity {
    name: String,
    entity_type: String,
    shared_chunks: u64,
    /// Normalised pointwise mutual information (1: always together).
    npmi: f64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct VendorOutput {
    vendor: Vendor,
    /// Passages that mention the vendor, ranked by hybrid search for its name.
    results: Vec<SearchResult>,
    /// Documents that mention the vendor, most mentions first (at most 100; none in
    /// ids_only).
    documents: Vec<VendorDocument>,
    total_documents: u64,
    /// At most 10 (none in ids_only).
    related_entities: Vec<RelatedEntity>,
    total_found: usize,
    strategy_used: String,
    execution_time_ms: f64,
}

/// Documents a vendor's answer lists at most.
const VENDOR_DOCUMENTS: usize = 100;

async fn find_vendor_info(shared: &Shared, p: VendorParams, call: &Call) -> CallToolResult {
    let started = Instant::now();
    let checked = text_argument("vendor_name", &p.vendor_name, 200)
        .and_then(|()| top_k_argument(p.top_k))
        .and_then(|()| bmcis_library(shared));
    let library = match checked {
        Ok(l) => l,
        Err(refused) => return refused,
    };
    let kind = shared.options.bmcis_vendor_type.clone();
    let (name, touched) = (p.vendor_name.clone(), library.clone());
    let of = library.clone();
    let card = ops::run(
        shared,
        call,
        ops::Touches::Library(&touched),
        move |engine| engine.entity_brief(&of, &name, &kind, VENDOR_DOCUMENTS),
    )
    .await;
    let card = match card {
        Ok(c) => c,
        Err(e) => return engine_error(&e),
    };
    let mut request = seed_request(library, card.name.clone(), p.top_k, p.response_mode);
    request.filter = Filter {
        conditions: vec![Condition::Entity(card.entity.clone())],
    };
    let (results, cited) = match shaped(shared, call, request, p.response_mode).await {
        Ok(r) => r,
        Err(refused) => return refused,
    };
    let brief = p.response_mode == Shape::IdsOnly;
    let output = success(&VendorOutput {
        vendor: Vendor {
            vendor_name: card.name,
            entity_id: card.entity,
            entity_type: card.kind,
            matched_by: card.matched_by.as_str().into(),
            mention_count: card.mentions,
            document_count: card.documents,
            aliases: (!brief).then_some(card.aliases),
            attributes: (!brief).then_some(card.attributes),
        },
        total_found: results.len(),
        results,
        documents: if brief {
            Vec::new()
        } else {
            card.top_documents
                .into_iter()
                .map(|d| VendorDocument {
                    source_file: d.source,
                    title: d.title,
                    mentions: d.mentions,
                })
                .collect()
        },
        total_documents: card.documents,
        related_entities: if brief {
            Vec::new()
        } else {
            card.related
                .into_iter()
                .map(|r| RelatedEntity {
                    name: r.entity,
                    entity_type: r.kind,
                    shared_chunks: r.shared_chunks,
                    npmi: r.npmi,
                })
                .collect()
        },
        strategy_used: "entity+hybrid".into(),
        execution_time_ms: started.elapsed().as_secs_f64() * 1e3,
    });
    linking(output, cited)
}

pub fn engine_error(e: &EngineError) -> CallToolResult {
    error(e.to_string(), folio_code(e.code))
}

/// The tools, their descriptions naming the library they search.
pub fn tools(library: &str, vendor_type: &str) -> Vec<Tool> {
    vec![
        define::<Params, Output>(
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
        ),
        define::<VendorParams, VendorOutput>(
            "find_vendor_info",
            "Find vendor information",
            format!(
                "Everything the knowledge base (folio library \"{library}\") says about one vendor \
                 (an entity of type {vendor_type}): the vendor as declared (aliases, attributes), \
                 how often and in which documents it is mentioned, the entities mentioned with it, \
                 and the passages that mention it, ranked by hybrid search. vendor_name may be an \
                 alias, a prefix or carry a typo. Progressive disclosure through response_mode: \
                 ids_only, metadata (the default), preview, full."
            ),
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
        "semantic_search" => {
            with_args(
                arguments,
                |m| error(m, "INVALID_ARGUMENT"),
                |p: Params| semantic_search(shared, p, call),
            )
            .await
        }
        "find_vendor_info" => {
            with_args(
                arguments,
                |m| error(m, "INVALID_ARGUMENT"),
                |p: VendorParams| find_vendor_info(shared, p, call),
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
