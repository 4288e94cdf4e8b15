//! Native tools over records and citations: `facets` (grouped counts and
//! statistics) and `find_quote` (where a passage occurs, for verifying a
//! citation).

use folio_core::{Filter, LibraryName};
use folio_engine::FacetRequest;
use folio_engine::cite::QuoteRequest;
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{error, invalid};
use crate::ops::{self, Call, Shared, Touches};
use crate::tool::{Effect, define, success};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopValuesParams {
    /// A tags (list) field.
    field: String,
    /// How many values per group (1 to 50, default 5).
    #[serde(default = "five")]
    #[schemars(range(min = 1, max = 50))]
    limit: usize,
}

fn five() -> usize {
    5
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FacetsParams {
    library: String,
    /// Fields whose values form the groups (0 to 4); a tags field gives one
    /// group per tag. None: one group for the whole library.
    #[serde(default)]
    #[schemars(length(max = 4))]
    group_by: Vec<String>,
    /// Fields summarised per group: min, max, and sum of numbers.
    #[serde(default)]
    #[schemars(length(max = 16))]
    stats: Vec<String>,
    /// The most frequent values of a tags field in each group.
    #[serde(default)]
    top_values: Option<TopValuesParams>,
    /// Which documents count, in the search filter syntax.
    #[serde(default)]
    filter: Option<Value>,
    /// Leave out groups with fewer documents (default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    min_count: u64,
    /// Most groups returned, largest first (1 to 500, default 50).
    #[serde(default = "fifty")]
    #[schemars(range(min = 1, max = 500))]
    limit: usize,
}

fn one() -> u64 {
    1
}

fn fifty() -> usize {
    50
}

#[derive(Debug, Serialize, JsonSchema)]
struct StatsOutput {
    field: String,
    min: Value,
    max: Value,
    /// Sum of the numeric values (null for text and dates).
    sum: Option<f64>,
    /// Documents with a value.
    count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct TopValue {
    value: String,
    count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct GroupOutput {
    /// One value per group_by field.
    key: Vec<Value>,
    count: u64,
    stats: Vec<StatsOutput>,
    top_values: Vec<TopValue>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct FacetsOutput {
    library: String,
    /// Documents that passed the filter.
    documents: u64,
    /// Groups with at least min_count documents, before the limit.
    total_groups: u64,
    groups: Vec<GroupOutput>,
}

pub async fn facets(shared: &Shared, p: FacetsParams, call: &Call) -> CallToolResult {
    let name = match LibraryName::new(&p.library) {
        Ok(n) => n,
        Err(e) => return invalid(e.to_string()),
    };
    let filter = match p.filter.as_ref().map(Filter::from_json).transpose() {
        Ok(f) => f.unwrap_or_default(),
        Err(e) => return invalid(e.to_string()),
    };
    if p.limit == 0 || p.limit > 500 || p.min_count == 0 {
        return invalid("limit must be 1 to 500 and min_count at least 1".into());
    }
    let request = FacetRequest {
        group_by: p.group_by,
        stats: p.stats,
        top_values: p.top_values.map(|t| (t.field, t.limit.clamp(1, 50))),
        filter,
        min_count: p.min_count,
        limit: p.limit,
    };
    let library = name.to_string();
    let touched = name.clone();
    match ops::run(shared, call, Touches::Library(&touched), move |engine| {
        engine.facets(&name, &request)
    })
    .await
    {
        Ok(facets) => success(&FacetsOutput {
            library,
            documents: facets.documents,
            total_groups: facets.total_groups,
            groups: facets
                .groups
                .into_iter()
                .map(|g| GroupOutput {
                    key: g.key,
                    count: g.count,
                    stats: g
                        .stats
                        .into_iter()
                        .map(|(field, s)| StatsOutput {
                            field,
                            min: s.min,
                            max: s.max,
                            sum: s.sum,
                            count: s.count,
                        })
                        .collect(),
                    top_values: g
                        .top_values
                        .into_iter()
                        .map(|(value, count)| TopValue { value, count })
                        .collect(),
                })
                .collect(),
        }),
        Err(e) => error(&e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteParams {
    /// The passage to locate (3 to 5000 characters).
    #[schemars(length(min = 3, max = 5000))]
    passage: String,
    /// Libraries to look in (default: all).
    #[serde(default)]
    libraries: Vec<String>,
    /// Look only in this document.
    #[serde(default)]
    document_id: Option<String>,
    /// Least similarity for an approximate match, in [0, 1] (default 0.8).
    #[serde(default = "min_score")]
    #[schemars(range(min = 0.0, max = 1.0))]
    min_score: f64,
    /// Most matches returned (1 to 20, default 5).
    #[serde(default = "five")]
    #[schemars(range(min = 1, max = 20))]
    limit: usize,
}

fn min_score() -> f64 {
    0.8
}

#[derive(Debug, Serialize, JsonSchema)]
struct CitationOutput {
    citekey: Option<String>,
    doi: Option<String>,
    title: Option<String>,
    authors: Vec<String>,
    year: Option<i64>,
    url: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct QuoteOutput {
    document_id: String,
    library: String,
    source: String,
    title: Option<String>,
    citation: CitationOutput,
    /// Char offsets of the occurrence in the document text (get_document).
    char_start: u64,
    char_end: u64,
    page_start: Option<u32>,
    page_end: Option<u32>,
    section_path: Vec<String>,
    /// Verbatim (ignoring case, whitespace, quotes, dashes, ligatures).
    exact: bool,
    /// Similarity in [0, 1]; 1 when exact.
    score: f64,
    /// The document's text at those offsets.
    text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct QuotesOutput {
    /// Best first; empty when the passage was not found.
    matches: Vec<QuoteOutput>,
    found: bool,
}

pub async fn find_quote(shared: &Shared, p: QuoteParams, call: &Call) -> CallToolResult {
    let libraries = match p
        .libraries
        .iter()
        .map(LibraryName::new)
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(l) => l,
        Err(e) => return invalid(e.to_string()),
    };
    if !(1..=20).contains(&p.limit) {
        return invalid(format!("limit must be 1 to 20 (got {})", p.limit));
    }
    let request = QuoteRequest {
        passage: p.passage,
        libraries,
        document_id: p.document_id,
        min_score: p.min_score,
        limit: p.limit,
    };
    let cancel = call.cancel.clone();
    let caller = call.clone();
    let (named, document) = (request.libraries.clone(), request.document_id.clone());
    let touches = match (&document, named.is_empty()) {
        (Some(id), _) => Touches::Document(id),
        (None, false) => Touches::Libraries(&named),
        (None, true) => Touches::Visible,
    };
    let mut request = request;
    match ops::run(shared, call, touches, move |engine| {
        // "All libraries" means all the caller may see.
        if request.libraries.is_empty() && caller.principal.is_some() {
            request.libraries = ops::visible(engine, &caller)?
                .into_iter()
                .map(|l| l.name)
                .collect();
            if request.libraries.is_empty() {
                return Ok(Vec::new());
            }
        }
        engine.find_quote(&request, &|| cancel.is_cancelled())
    })
    .await
    {
        Ok(found) => success(&QuotesOutput {
            found: !found.is_empty(),
            matches: found
                .into_iter()
                .map(|m| QuoteOutput {
                    document_id: m.document_id,
                    library: m.library,
                    source: m.source,
                    title: m.title,
                    citation: CitationOutput {
                        citekey: m.citation.citekey,
                        doi: m.citation.doi,
                        title: m.citation.title,
                        authors: m.citation.authors,
                        year: m.citation.year,
                        url: m.citation.url,
                    },
                    char_start: m.char_start,
                    char_end: m.char_end,
                    page_start: m.page_start,
                    page_end: m.page_end,
                    section_path: m.section_path,
                    exact: m.exact,
                    score: m.score,
                    text: m.text,
                })
                .collect(),
        }),
        Err(e) => error(&e),
    }
}

pub fn tools() -> Vec<Tool> {
    vec![
        define::<FacetsParams, FacetsOutput>(
            "facets",
            "Facets of a library",
            "Counts and statistics of a library's documents grouped by fields (for records: \
             speeches per speaker, words per party, date range per chamber). Groups by up to 4 \
             fields (a tags field gives one group per tag), summarises fields per group (min, max, \
             sum) and lists each group's most frequent tags. Filters use the search syntax.",
            Effect::Read,
            false,
        ),
        define::<QuoteParams, QuotesOutput>(
            "find_quote",
            "Find a quote",
            "Verify a citation: locate a passage in the indexed documents and return the document, \
             its citation (citekey, DOI, authors, year), the page span and the char offsets where \
             it occurs. Exact matches (ignoring case, whitespace, quotes, dashes, ligatures) come \
             first, then approximate ones with a similarity of at least min_score.",
            Effect::Read,
            false,
        ),
    ]
}
