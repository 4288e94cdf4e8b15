//! The native `search` tool: parameters, hits with their citations, the
//! response budget (whole hits while they fit, a cursor for the rest) and
//! cursors bound to their search.

use folio_core::Filter;
use folio_engine::{Mode, ResponseMode, SearchHit, SearchRequest};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{error, invalid};
use crate::ops::{self, Call, Shared, library};
use crate::tool::{bounded as check, linking, success};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchParams {
    /// What to look for: a question or keywords (1 to 4,000 characters).
    #[schemars(length(min = 1, max = 4000))]
    query: String,
    /// The library to search.
    library: String,
    /// hybrid (BM25 + dense, the default), lexical (BM25) or dense.
    #[serde(default)]
    mode: SearchMode,
    /// Results per page (1 to 100), one per document unless group_by_document is false.
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 100))]
    top_k: usize,
    /// Filters, all of which must hold: {"field": value} for equality, {"field": [a, b]}
    /// for any-of, {"field": {"gte": 2019, "lt": 2024}} for ranges on numbers and ISO
    /// dates, plus "path_prefix" and "section_prefix". Fields are document fields
    /// (format, source, title, source_kind) or document metadata keys.
    #[serde(default)]
    filter: Option<Value>,
    /// How much of each hit to return: ids_only, metadata, preview (the default) or full.
    #[serde(default = "preview_mode")]
    response_mode: String,
    /// Cap on each chunk text in full mode, in characters (100 to 20,000).
    #[serde(default = "max_chars_per_chunk")]
    #[schemars(range(min = 100, max = 20000))]
    max_chars_per_chunk: usize,
    /// Budget for the whole response, in characters (2,000 to 200,000; default 40,000,
    /// about 10k tokens). Hits that do not fit are left for the next page.
    #[serde(default = "max_output_chars")]
    #[schemars(range(min = 2000, max = 200000))]
    max_output_chars: usize,
    /// Merge chunks of one document into one hit (default true).
    #[serde(default = "yes")]
    group_by_document: bool,
    /// Rerank the best candidates with the server's cross-encoder (true) or not
    /// (false); absent follows the server's configuration. An error when the server
    /// has no reranker.
    #[serde(default)]
    rerank: Option<bool>,
    /// Rank chunks that mention an entity the query names (a declared name or alias,
    /// or a name the library's entity graph knows) this fraction higher (0 to 1;
    /// default 0, off). The filter {"entity": name} keeps only such chunks instead.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    entity_boost: Option<f32>,
    /// The next_cursor of a previous response, to fetch the next page.
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SearchMode {
    #[default]
    Hybrid,
    Lexical,
    Dense,
}

fn ten() -> usize {
    10
}
fn yes() -> bool {
    true
}
fn preview_mode() -> String {
    "preview".into()
}
fn max_chars_per_chunk() -> usize {
    1_800
}
fn max_output_chars() -> usize {
    40_000
}

/// Another matching chunk of the same document.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct OtherChunk {
    chunk_id: String,
    chunk_index: u32,
    score: f32,
    page_start: Option<u32>,
    page_end: Option<u32>,
    section_path: Vec<String>,
}

/// Citation fields of a hit's document (from Zotero, a reference list or
/// the document itself).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
struct CitationFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    citekey: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    doi: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    authors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    year: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    /// The document's language (ISO 639-1 when folio knows it): the one
    /// its source names, else the one its text is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    language: Option<String>,
}

/// One search hit with its citation. Fields beyond ids and scores appear
/// from response_mode metadata on; preview adds `preview`, full adds `text`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Hit {
    rank: u32,
    /// In [0, 1]; higher is better.
    score: f32,
    document_id: String,
    chunk_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    section_path: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    page_start: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    page_end: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chunk_index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chunk_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    char_start: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    char_end: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lexical_score: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dense_score: Option<f32>,
    /// The cross-encoder's score, when the reranker read this chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rerank_score: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    citation: Option<CitationFields>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    preview: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// True when `text` was cut (per-chunk cap or response budget).
    #[serde(default)]
    truncated: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    other_chunks: Vec<OtherChunk>,
}

/// What the response budget cut.
#[derive(Debug, Serialize, JsonSchema)]
struct Budget {
    max_output_chars: usize,
    used_chars: usize,
    /// Hits found on this page but left out to stay within the budget.
    omitted_hits: usize,
    /// Characters of text cut from hits to fit.
    truncated_chars: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct SearchOutput {
    library: String,
    query: String,
    mode: SearchMode,
    response_mode: String,
    hits: Vec<Hit>,
    /// Rank of the first hit of this page minus one.
    offset: usize,
    /// Pass as `cursor` to get the next page; absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    budget: Budget,
    embed_ms: f64,
    search_ms: f64,
}

fn fingerprint(p: &SearchParams) -> String {
    let mut hasher = Sha256::new();
    for part in [
        p.library.as_str(),
        p.query.trim(),
        &format!("{:?}", p.mode),
        &p.filter.as_ref().map(|f| f.to_string()).unwrap_or_default(),
        &p.group_by_document.to_string(),
        &format!("{:?}", p.rerank),
        &format!("{:?}", p.entity_boost),
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hex::encode(&hasher.finalize()[..6])
}

fn parse_cursor(cursor: &str, expected: &str) -> Result<usize, String> {
    let (offset, print) = cursor
        .split_once('.')
        .ok_or_else(|| "invalid cursor".to_string())?;
    if print != expected {
        return Err(
            "the cursor belongs to another search (query, library, mode or filter changed)".into(),
        );
    }
    offset.parse().map_err(|_| "invalid cursor".into())
}

/// Characters of `value` as the response carries it: through a JSON value,
/// as `success` sends it (where an f32 prints with f64's digits).
fn json_len<T: Serialize>(value: &T) -> usize {
    serde_json::to_value(value).map_or(0, |v| v.to_string().len())
}

/// The query as the response echoes it: whole, unless its JSON would take
/// over a quarter of the budget (a long query under a small budget), then
/// cut.
fn echoed(query: String, budget: usize) -> String {
    let mut echo = query;
    while json_len(&echo) > budget / 4 {
        let keep = echo.chars().count() / 2;
        echo = folio_engine::cut_chars(&echo, keep).0;
    }
    echo
}

/// Fits hits into `budget` characters of JSON: whole hits while they fit;
/// a first hit that alone is too large has its text cut. `envelope` is
/// what the response holds besides its hits (the echoed query and library
/// among them).
fn fit(hits: Vec<Hit>, budget: usize, envelope: usize) -> (Vec<Hit>, Budget) {
    let mut used = envelope;
    let mut kept = Vec::new();
    let mut truncated_chars = 0;
    let total = hits.len();
    for mut hit in hits {
        let mut size = json_len(&hit) + 1;
        if used + size > budget && kept.is_empty() {
            for which in 0..3 {
                let over = (used + size).saturating_sub(budget);
                let field = match which {
                    0 => &mut hit.text,
                    1 => &mut hit.preview,
                    _ => &mut hit.context,
                };
                if let Some(text) = field.as_mut() {
                    let chars = text.chars().count();
                    let keep = chars.saturating_sub(over + 16);
                    let (cut, was_cut) = folio_engine::cut_chars(text, keep);
                    if was_cut {
                        truncated_chars += chars - cut.chars().count();
                        *text = cut;
                        hit.truncated = true;
                    }
                }
                size = json_len(&hit) + 1;
            }
            if used + size > budget {
                hit.metadata = None;
                hit.other_chunks.clear();
                size = json_len(&hit) + 1;
            }
        }
        if used + size > budget {
            break;
        }
        used += size;
        kept.push(hit);
    }
    let omitted = total - kept.len();
    (
        kept,
        Budget {
            max_output_chars: budget,
            used_chars: used,
            omitted_hits: omitted,
            truncated_chars,
        },
    )
}

pub(super) async fn search(shared: &Shared, p: SearchParams, call: &Call) -> CallToolResult {
    if let Err(m) = check("top_k", p.top_k, 1, shared.engine.config().limits.max_top_k)
        .and(check(
            "max_chars_per_chunk",
            p.max_chars_per_chunk,
            100,
            20_000,
        ))
        .and(check(
            "max_output_chars",
            p.max_output_chars,
            2_000,
            200_000,
        ))
    {
        return invalid(m);
    }
    let Some(response_mode) = ResponseMode::parse(&p.response_mode) else {
        return invalid(format!(
            "unknown response_mode {:?} (ids_only, metadata, preview or full)",
            p.response_mode
        ));
    };
    let print = fingerprint(&p);
    let offset = match p.cursor.as_deref().map(|c| parse_cursor(c, &print)) {
        None => 0,
        Some(Ok(offset)) => offset,
        Some(Err(m)) => return invalid(m),
    };
    let max_top_k = shared.engine.config().limits.max_top_k;
    if offset >= max_top_k {
        return invalid(format!(
            "results end at rank {max_top_k}; there is no further page"
        ));
    }
    let name = match library(&p.library) {
        Ok(name) => name,
        Err(e) => return error(&e),
    };
    let filter = match Filter::from_json(p.filter.as_ref().unwrap_or(&Value::Null)) {
        Ok(f) => f,
        Err(e) => return invalid(e.to_string()),
    };
    let mut request = SearchRequest::new(name, p.query.clone());
    request.mode = match p.mode {
        SearchMode::Hybrid => Mode::Hybrid,
        SearchMode::Lexical => Mode::Lexical,
        SearchMode::Dense => Mode::Dense,
    };
    request.top_k = (offset + p.top_k).min(max_top_k);
    request.filter = filter;
    request.response_mode = response_mode;
    request.max_chars_per_chunk = p.max_chars_per_chunk;
    request.group_by_document = p.group_by_document;
    request.rerank = p.rerank;
    request.entity_boost = p.entity_boost;
    let response = match ops::search(shared, call, request).await {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let more_may_exist = response.hits.len() >= offset + p.top_k && offset + p.top_k < max_top_k;
    let hits: Vec<Hit> = response
        .hits
        .into_iter()
        .skip(offset)
        .filter_map(|h: SearchHit| serde_json::to_value(h).ok())
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    // The fixed fields (names, mode, offsets, cursor, budget, timings) take
    // under 600 characters; the echoed query and library are measured.
    let query = echoed(response.query, p.max_output_chars);
    let envelope = 600 + json_len(&query) + json_len(&response.library);
    let (hits, budget) = fit(hits, p.max_output_chars, envelope);
    let next = offset + hits.len();
    let next_cursor =
        (budget.omitted_hits > 0 || more_may_exist).then(|| format!("{next}.{print}"));
    let output = SearchOutput {
        library: response.library,
        query,
        mode: p.mode,
        response_mode: p.response_mode,
        hits,
        offset,
        next_cursor,
        budget,
        embed_ms: response.embed_ms,
        search_ms: response.search_ms,
    };
    let links: Vec<_> = output
        .hits
        .iter()
        .map(|h| (h.document_id.clone(), h.title.clone()))
        .collect();
    linking(success(&output), links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(rank: u32, text_chars: usize) -> Hit {
        serde_json::from_value(json!({
            "rank": rank, "score": 0.5, "document_id": "d", "chunk_id": "d:0",
            "text": "x".repeat(text_chars)
        }))
        .unwrap()
    }

    #[test]
    fn the_budget_keeps_whole_hits_and_counts_the_rest() {
        let hits = (1..=10).map(|r| hit(r, 1_000)).collect();
        let (kept, budget) = fit(hits, 5_000, 600);
        assert_eq!(kept.len(), 4);
        assert_eq!(budget.omitted_hits, 6);
        assert!(budget.used_chars <= 5_000);
        assert_eq!(budget.truncated_chars, 0);
    }

    #[test]
    fn a_first_hit_larger_than_the_budget_is_cut_to_fit() {
        let (kept, budget) = fit(vec![hit(1, 50_000), hit(2, 10)], 4_000, 600);
        assert_eq!(kept.len(), 1);
        assert!(kept[0].truncated);
        assert!(json_len(&kept[0]) + 600 <= 4_000);
        assert!(budget.truncated_chars > 45_000);
        assert_eq!(budget.omitted_hits, 1);
    }

    #[test]
    fn cursors_are_bound_to_their_search() {
        assert_eq!(parse_cursor("10.abc", "abc"), Ok(10));
        assert!(parse_cursor("10.abc", "abd").is_err());
        assert!(parse_cursor("ten.abc", "abc").is_err());
        assert!(parse_cursor("nonsense", "abc").is_err());
    }
}
