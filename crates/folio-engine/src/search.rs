//! Search: validate, retrieve (lexical, dense or both, filtered before
//! ranking), fuse, group chunks by document, and shape the hits to the
//! requested response mode and size caps. Every hit carries its citation.

use std::time::Instant;

use folio_core::{ErrorCode, Filter, LibraryName, Limits};
use folio_search::{Fused, Fusion, Mode, Scored};
use folio_store::{Bm25, ChunkWithDocument, Hit};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Engine, EngineError, Result, bm25_or};

/// How much of each hit to return: progressive disclosure for agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ResponseMode {
    /// Ids, rank and score only.
    IdsOnly,
    /// Citation fields, no text.
    Metadata,
    /// Citation fields and the first ~200 characters.
    #[default]
    Preview,
    /// Citation fields and the chunk text (capped per chunk).
    Full,
}

impl ResponseMode {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "ids_only" | "ids" => ResponseMode::IdsOnly,
            "metadata" => ResponseMode::Metadata,
            "preview" => ResponseMode::Preview,
            "full" => ResponseMode::Full,
            _ => return None,
        })
    }
}

/// Characters in a preview.
pub const PREVIEW_CHARS: usize = 200;

#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub library: LibraryName,
    pub query: String,
    pub mode: Mode,
    /// Documents (or chunks, without grouping) to return.
    pub top_k: usize,
    pub filter: Filter,
    pub fusion: Option<Fusion>,
    pub bm25: Option<Bm25>,
    pub response_mode: ResponseMode,
    /// Cap on each returned chunk text, in characters (full mode).
    pub max_chars_per_chunk: usize,
    /// Merge chunks of one document into one hit (the default).
    pub group_by_document: bool,
    /// Candidates each retriever contributes to fusion; default
    /// `FUSION_DEPTH` (at least `top_k`).
    pub candidates: Option<usize>,
    /// Rerank the best fused candidates with the configured cross-encoder;
    /// `None` follows the configuration.
    pub rerank: Option<bool>,
    /// Raise the score of chunks that mention an entity the query names
    /// (a declared name or alias, or a name the graph knows) by this
    /// fraction (0 to 1); `None` or 0 leaves the ranking as fused.
    pub entity_boost: Option<f32>,
}

impl SearchRequest {
    pub fn new(library: LibraryName, query: impl Into<String>) -> Self {
        SearchRequest {
            library,
            query: query.into(),
            mode: Mode::Hybrid,
            top_k: 10,
            filter: Filter::default(),
            fusion: None,
            bm25: None,
            response_mode: ResponseMode::Preview,
            max_chars_per_chunk: 1_800,
            group_by_document: true,
            candidates: None,
            rerank: None,
            entity_boost: None,
        }
    }
}

/// Another matching chunk of the same document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OtherChunk {
    pub chunk_id: String,
    pub chunk_index: u32,
    pub score: f32,
    pub page_start: Option<u32>,
    pub page_end: Option<u32>,
    pub section_path: Vec<String>,
}

/// One result. Optional fields are absent in leaner response modes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub rank: u32,
    /// In [0, 1]; higher is better.
    pub score: f32,
    pub document_id: String,
    pub chunk_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// When the document was ingested (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingested_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_path: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_start: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_end: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub char_start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub char_end: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_score: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_score: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_rank: Option<u32>,
    /// The cross-encoder's raw score, when the reranker read this chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_score: Option<f32>,
    /// Citation fields (citekey, DOI, title, authors, year, URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation: Option<crate::cite::Citation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// True when `text` was cut at `max_chars_per_chunk`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_chunks: Vec<OtherChunk>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    pub library: String,
    pub query: String,
    pub mode: Mode,
    pub hits: Vec<SearchHit>,
    /// Distinct chunks the retrievers returned before grouping and cutting.
    pub candidates: usize,
    /// Candidates the cross-encoder read (0 without reranking).
    #[serde(skip_serializing_if = "is_zero")]
    pub reranked: usize,
    pub embed_ms: f64,
    pub search_ms: f64,
    /// Time the reranking stage took (part of `search_ms`).
    #[serde(skip_serializing_if = "is_zero_ms")]
    pub rerank_ms: f64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_zero_ms(ms: &f64) -> bool {
    *ms == 0.0
}

/// Chunks of one document shown under its best chunk.
const OTHER_CHUNKS_PER_DOCUMENT: usize = 3;

/// The lexical weight of a hybrid search whose model knows English only,
/// for a query in another language of the Latin script: measured on
/// known-item sets in German, French and Spanish (docs/benchmarks-history.md,
/// "Every language"), BM25 alone or at 0.5 both rank below this.
const FOREIGN_LATIN_LEXICAL_WEIGHT: f32 = 0.8;

/// The lexical weight of a hybrid search whose model reads many languages,
/// for a query in another script than most of its library (a Chinese
/// question over English text, an English one over Chinese text): BM25
/// matches only the few words the two share, the model's ranking carries
/// the question. Measured on the package descriptions and manual pages,
/// Chinese over English and English over Chinese (docs/benchmarks.md,
/// "Languages"); a German question over English text shares more words
/// and keeps the even fusion.
const ACROSS_SCRIPTS_LEXICAL_WEIGHT: f32 = 0.3;

/// Whether the language of an ISO 639-1 code is written in a script other
/// than the Latin (not so for a language folio does not tell).
fn in_another_script(code: &str) -> bool {
    folio_lexical::Language::from_tag(code).is_some_and(|l| !l.in_latin_script())
}

/// Candidates each retriever contributes to a search (documents for BM25
/// over whole documents, chunks otherwise), whatever the page size: a page
/// of 10 is the first 10 of a page of 100, and `folio eval` measures that
/// ranking. Fusing 300 per retriever measured at or above the plain fusion
/// of the two document runs (top 100 each) on every collection tried,
/// where 50 (a page of 10 before) fell below it (docs/benchmarks-history.md).
pub const FUSION_DEPTH: usize = 300;

/// Candidates the cross-encoder reads between two looks at the time budget.
const RERANK_SLICE: usize = 4;

fn scored(hits: Vec<Hit>) -> Vec<Scored> {
    hits.into_iter()
        .map(|h| Scored {
            chunk: h.chunk,
            score: h.score,
        })
        .collect()
}

/// The first `max` characters of `text` and whether anything was cut.
pub fn cut_chars(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((byte, _)) => (text[..byte].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// A preview: about `PREVIEW_CHARS` characters, ending at a word boundary.
pub fn preview(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let (cut, truncated) = cut_chars(&flat, PREVIEW_CHARS);
    if !truncated {
        return cut;
    }
    let end = cut
        .rfind(' ')
        .filter(|&i| i > PREVIEW_CHARS / 2)
        .unwrap_or(cut.len());
    format!("{}…", &cut[..end])
}

impl Engine {
    /// Embeds a query into the query-vector cache (a hit costs nothing),
    /// as a search of it would: what a repeated question costs is then the
    /// index's own work (`folio bench search` times both).
    pub fn cache_query_vector(&self, query: &str) -> Result<()> {
        self.query_vector(&*self.embedder()?, query.trim())?;
        Ok(())
    }

    /// The query's vector, from the cache or embedded into it.
    fn query_vector(
        &self,
        embedder: &dyn folio_embed::Embedder,
        query: &str,
    ) -> Result<std::sync::Arc<Vec<f32>>> {
        Ok(self.cache.vector(&embedder.space().model, query, || {
            embedder.embed_query(query)
        })?)
    }

    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let limits = &self.config.limits;
        let query = request.query.trim();
        if query.is_empty() {
            return Err(EngineError::invalid("the query is empty"));
        }
        if query.chars().count() > limits.max_query_chars {
            return Err(EngineError::invalid(format!(
                "the query is longer than {} characters",
                limits.max_query_chars
            )));
        }
        if request.top_k == 0 || request.top_k > limits.max_top_k {
            return Err(EngineError::invalid(format!(
                "top_k must be between 1 and {}",
                limits.max_top_k
            )));
        }
        if request.max_chars_per_chunk == 0 {
            return Err(EngineError::invalid("max_chars_per_chunk must be positive"));
        }
        if request
            .entity_boost
            .is_some_and(|b| !(0.0..=1.0).contains(&b))
        {
            return Err(EngineError::invalid("entity_boost must be between 0 and 1"));
        }
        // A repeated request is answered from the cache while nothing was
        // written since (the generation moves with every write).
        let generation = self.store.generation()?;
        let key = format!("{request:?}");
        if let Some(generation) = generation
            && let Some(cached) = self.cache.response(&key, generation)
        {
            let mut response = (*cached).clone();
            response.embed_ms = 0.0;
            response.search_ms = 0.0;
            response.rerank_ms = 0.0;
            return Ok(response);
        }
        let response = self.search_uncached(request, query)?;
        if let Some(generation) = generation {
            self.cache
                .keep_response(key, generation, std::sync::Arc::new(response.clone()));
        }
        Ok(response)
    }

    fn search_uncached(&self, request: &SearchRequest, query: &str) -> Result<SearchResponse> {
        // Entity filters name entities; the store knows their keys.
        let resolved;
        let request = if request
            .filter
            .conditions
            .iter()
            .any(|c| matches!(c, folio_core::Condition::Entity(_)))
        {
            let mut r = request.clone();
            self.resolve_entity_filter(&r.library, &mut r.filter)?;
            resolved = r;
            &resolved
        } else {
            request
        };
        let bm25 = bm25_or(&self.config, request.bm25)?;
        let library = self.store.library(&request.library)?;
        // A model of English only has nothing to say about a query in
        // another script (Han, Cyrillic, Arabic, …), nor about a library
        // written mostly in one, whatever the query: its ranking is noise
        // there, and the hybrid ranks by BM25 alone unless the request
        // chose a fusion. In another language of the Latin script it reads
        // the names and technical words the languages share, and little
        // else: BM25 leads (issue 48).
        let english_only = request.fusion.is_none()
            && request.mode == Mode::Hybrid
            && folio_embed::catalog::english_only(&library.space.model);
        let fusion = match request.fusion {
            Some(fusion) => fusion,
            None if english_only => {
                // The query's language, where the model may read query and
                // library at all.
                let readable = folio_lexical::in_latin_script(query)
                    .then(|| self.store.query_language(&request.library, query))
                    .transpose()?
                    .filter(|language| !in_another_script(&language.library));
                let lexical_weight = match readable {
                    Some(language) if language.query == "en" => None,
                    Some(_) => Some(FOREIGN_LATIN_LEXICAL_WEIGHT),
                    None => Some(1.0),
                };
                lexical_weight.map_or(self.config.fusion, |lexical_weight| Fusion::Weighted {
                    lexical_weight,
                })
            }
            // A model of many languages over a library in another script
            // than the query's: the model leads.
            None if request.mode == Mode::Hybrid => {
                let language = self.store.query_language(&request.library, query)?;
                if folio_lexical::in_script_of(query, &language.library) {
                    self.config.fusion
                } else {
                    Fusion::Weighted {
                        lexical_weight: ACROSS_SCRIPTS_LEXICAL_WEIGHT,
                    }
                }
            }
            None => self.config.fusion,
        };
        fusion.validate().map_err(EngineError::invalid)?;
        // Each retriever contributes the same depth whatever the page size,
        // so a page of 10 is the first 10 of a page of 100. Never fewer
        // candidates than results, never more than a retriever serves (a
        // limit above the ceiling is refused when limits load).
        let depth = request
            .candidates
            .unwrap_or(FUSION_DEPTH)
            .max(request.top_k)
            .min(Limits::TOP_K_CEILING);

        let started = Instant::now();
        let dense_of = || -> Result<(Vec<_>, f64)> {
            if request.mode == Mode::Lexical {
                return Ok((Vec::new(), 0.0));
            }
            let embedder = self.embedder()?;
            if let Some(difference) = library.space.difference(embedder.space()) {
                return Err(EngineError::new(
                    ErrorCode::EmbeddingMismatch,
                    format!(
                        "library {} is pinned to another embedding space ({difference}): \
                         it must be rebuilt with the current model before it can be searched",
                        request.library
                    ),
                ));
            }
            let vector = self.query_vector(&*embedder, query)?;
            let embed_ms = started.elapsed().as_secs_f64() * 1e3;
            let hits = self
                .store
                .dense(&request.library, &vector, &request.filter, depth)?;
            Ok((scored(hits), embed_ms))
        };
        // Hits grouped by document rank documents: BM25 over each whole
        // document, as a reference BM25 ranks a collection (chunk-level
        // scores lose when a query's terms fall in different chunks of one
        // document), each entering fusion as its best chunk. Chunks are
        // ranked by their own text when they are the answer: ungrouped
        // hits, or a filter on sections.
        let by_document = request.group_by_document
            && !request
                .filter
                .conditions
                .iter()
                .any(folio_core::Condition::on_chunks);
        let lexical_of = || -> Result<Vec<_>> {
            if request.mode == Mode::Dense {
                return Ok(Vec::new());
            }
            let hits = if by_document {
                self.store.lexical_documents(
                    &request.library,
                    query,
                    &request.filter,
                    depth,
                    bm25,
                )?
            } else {
                self.store
                    .lexical(&request.library, query, &request.filter, depth, bm25)?
            };
            Ok(scored(hits))
        };
        let (dense, lexical) = if request.mode == Mode::Hybrid {
            // BM25 needs no query vector: it runs while the query is
            // embedded and the vectors searched.
            std::thread::scope(|scope| {
                let lexical = scope.spawn(lexical_of);
                let dense = dense_of();
                let lexical = lexical.join().unwrap_or_else(|_| {
                    Err(EngineError::new(
                        ErrorCode::Internal,
                        "the lexical search failed unexpectedly",
                    ))
                });
                (dense, lexical)
            })
        } else {
            (dense_of(), lexical_of())
        };
        let (dense, embed_ms) = dense?;
        let lexical = lexical?;
        let fused: Vec<Fused> = match request.mode {
            Mode::Hybrid => folio_search::fuse(&lexical, &dense, fusion),
            Mode::Lexical => folio_search::single(&lexical, Mode::Lexical),
            Mode::Dense => folio_search::single(&dense, Mode::Dense),
        };
        let candidates = fused.len();
        let rerank_started = Instant::now();
        let (fused, reranked) = self.rerank(request, query, fused)?;
        let fused = match request.entity_boost.filter(|b| *b > 0.0) {
            Some(boost) => self.boost_entities(&request.library, query, fused, boost)?,
            None => fused,
        };
        let rerank_ms = if reranked > 0 {
            rerank_started.elapsed().as_secs_f64() * 1e3
        } else {
            0.0
        };
        let groups: Vec<Vec<Fused>> = if request.group_by_document {
            folio_search::group_by_document(&fused, request.top_k, 1 + OTHER_CHUNKS_PER_DOCUMENT)
                .into_iter()
                .map(|g| g.hits)
                .collect()
        } else {
            fused
                .into_iter()
                .take(request.top_k)
                .map(|f| vec![f])
                .collect()
        };
        let hits = self.shape(groups, request)?;
        Ok(SearchResponse {
            library: request.library.to_string(),
            query: query.to_string(),
            mode: request.mode,
            hits,
            candidates,
            reranked,
            embed_ms,
            search_ms: started.elapsed().as_secs_f64() * 1e3 - embed_ms,
            rerank_ms,
        })
    }

    /// The reranking stage, when the request or the configuration asks for
    /// it: the cross-encoder reads the query with each of the best fused
    /// candidates (context header and text, as embedded), in rank order and
    /// in slices, until the candidates or the time budget run out (a slice
    /// is not started when the previous one says it would overrun); its
    /// scores are blended into the fused ones (`folio_search::blend_rerank`).
    /// Returns the re-sorted candidates and how many it read.
    fn rerank(
        &self,
        request: &SearchRequest,
        query: &str,
        fused: Vec<Fused>,
    ) -> Result<(Vec<Fused>, usize)> {
        let wanted = request
            .rerank
            .unwrap_or_else(|| self.config.rerank.as_ref().is_some_and(|c| c.enabled));
        if !wanted || fused.is_empty() {
            return Ok((fused, 0));
        }
        let (reranker, config) = self.reranker()?;
        let started = Instant::now();
        let ids: Vec<_> = fused
            .iter()
            .take(config.candidates)
            .map(|f| f.chunk.clone())
            .collect();
        let loaded = self.store.chunks_with_documents(&ids)?;
        // A chunk deleted since the retrievers read it has no text: it is
        // scored as unread.
        let texts: Vec<Option<String>> = ids
            .iter()
            .map(|id| {
                loaded
                    .iter()
                    .find(|c| &c.chunk.id == id)
                    .map(|c| format!("{}{}", c.chunk.context, c.chunk.text))
            })
            .collect();
        let mut scores: Vec<f32> = Vec::with_capacity(texts.len());
        let mut slowest = std::time::Duration::ZERO;
        for slice in texts.chunks(RERANK_SLICE) {
            if started.elapsed() + slowest > config.budget {
                break;
            }
            let t = Instant::now();
            let passages: Vec<&str> = slice.iter().map(|t| t.as_deref().unwrap_or("")).collect();
            let read = reranker.score(query, &passages)?;
            scores.extend(
                read.into_iter()
                    .zip(slice)
                    .map(|(score, text)| if text.is_some() { score } else { f32::NAN }),
            );
            slowest = slowest.max(t.elapsed());
        }
        let read = scores.iter().filter(|s| s.is_finite()).count();
        if read == 0 {
            return Ok((fused, 0));
        }
        Ok((
            folio_search::blend_rerank(fused, &scores, config.weight),
            read,
        ))
    }

    /// Loads the chunks behind the hits and shapes them per response mode.
    fn shape(&self, groups: Vec<Vec<Fused>>, request: &SearchRequest) -> Result<Vec<SearchHit>> {
        let ids: Vec<_> = groups
            .iter()
            .flat_map(|g| g.iter().map(|f| f.chunk.clone()))
            .collect();
        let loaded: Vec<ChunkWithDocument> = if request.response_mode == ResponseMode::IdsOnly {
            Vec::new()
        } else {
            self.store.chunks_with_documents(&ids)?
        };
        let find = |id: &folio_core::ChunkId| loaded.iter().find(|c| &c.chunk.id == id);
        let mut hits = Vec::with_capacity(groups.len());
        for (rank, group) in groups.into_iter().enumerate() {
            let best = &group[0];
            let Some((document_id, _)) = folio_core::ChunkId::parse(best.chunk.as_str()) else {
                continue;
            };
            let mut hit = SearchHit {
                rank: rank as u32 + 1,
                score: best.score,
                document_id: document_id.to_string(),
                chunk_id: best.chunk.to_string(),
                title: None,
                source: None,
                source_kind: None,
                format: None,
                ingested_at: None,
                section_path: None,
                page_start: None,
                page_end: None,
                chunk_index: None,
                chunk_count: None,
                char_start: None,
                char_end: None,
                token_count: None,
                lexical_score: best.lexical.map(|p| p.score),
                lexical_rank: best.lexical.map(|p| p.rank),
                dense_score: best.dense.map(|p| p.score),
                dense_rank: best.dense.map(|p| p.rank),
                rerank_score: best.rerank,
                citation: None,
                metadata: None,
                context: None,
                preview: None,
                text: None,
                truncated: false,
                other_chunks: Vec::new(),
            };
            if request.response_mode != ResponseMode::IdsOnly {
                let Some(found) = find(&best.chunk) else {
                    continue;
                };
                let (c, d) = (&found.chunk, &found.document);
                hit.title = d.title.clone();
                hit.source = Some(d.source.clone());
                hit.source_kind = Some(d.source_kind.as_str().to_string());
                hit.format = Some(d.format.clone());
                hit.ingested_at = Some(d.ingested_at.clone());
                hit.section_path = Some(c.section_path.clone());
                hit.page_start = c.page_start;
                hit.page_end = c.page_end;
                hit.chunk_index = Some(c.index);
                hit.chunk_count = Some(c.count);
                hit.char_start = Some(c.char_start);
                hit.char_end = Some(c.char_end);
                hit.token_count = Some(c.token_count);
                hit.citation = Some(crate::cite::Citation::from_metadata(
                    &d.metadata,
                    d.title.as_deref(),
                ));
                hit.metadata = Some(d.metadata.clone());
                match request.response_mode {
                    ResponseMode::Preview => hit.preview = Some(preview(&c.text)),
                    ResponseMode::Full => {
                        let (text, truncated) = cut_chars(&c.text, request.max_chars_per_chunk);
                        hit.text = Some(text);
                        hit.truncated = truncated;
                        hit.context = Some(c.context.trim_end().to_string());
                    }
                    ResponseMode::IdsOnly | ResponseMode::Metadata => {}
                }
                hit.other_chunks = group[1..]
                    .iter()
                    .filter_map(|f| find(&f.chunk).map(|o| (f, o)))
                    .map(|(f, o)| OtherChunk {
                        chunk_id: f.chunk.to_string(),
                        chunk_index: o.chunk.index,
                        score: f.score,
                        page_start: o.chunk.page_start,
                        page_end: o.chunk.page_end,
                        section_path: o.chunk.section_path.clone(),
                    })
                    .collect();
            }
            hits.push(hit);
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_and_caps() {
        assert_eq!(cut_chars("héllo", 2), ("hé".to_string(), true));
        assert_eq!(cut_chars("hé", 5), ("hé".to_string(), false));
        let long = "word ".repeat(100);
        let p = preview(&long);
        assert!(p.ends_with('…') && p.chars().count() <= PREVIEW_CHARS + 1);
        assert_eq!(preview("a\n\nb"), "a b");
    }
}
