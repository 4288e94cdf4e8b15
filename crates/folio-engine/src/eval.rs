//! `folio eval`: retrieval quality on a BEIR-layout directory (corpus.jsonl,
//! queries.jsonl, qrels/*.tsv). The corpus is ingested into a scratch library
//! (title and text per document; unchanged documents are skipped on re-runs),
//! every judged query is run, and nDCG@10, Recall@100 and MRR@10 are computed
//! with a document scored by its best chunk.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use folio_core::{DocumentId, LibraryName};
use folio_search::metrics::{self, Judgements};
use folio_search::{Fusion, Mode};
use folio_store::Bm25;
use serde::{Deserialize, Serialize};

use crate::{
    Engine, EngineError, IngestRequest, IngestTarget, Progress, ResponseMode, Result, SearchRequest,
};

#[derive(Debug, Clone)]
pub struct EvalRequest {
    pub dir: PathBuf,
    /// The scratch library; default `eval.<directory name>`.
    pub library: Option<LibraryName>,
    pub mode: Mode,
    /// A qrels file; default qrels/test.tsv, dev.tsv or train.tsv, the first found.
    pub qrels: Option<PathBuf>,
    pub fusion: Option<Fusion>,
    pub bm25: Option<Bm25>,
    /// Rerank with the configured cross-encoder (`None`: as configured).
    pub rerank: Option<bool>,
    /// Evaluate only the first N judged queries.
    pub max_queries: Option<usize>,
    /// Candidates each retriever contributes to fusion. `None` ranks
    /// exactly as an agent's search does (`FUSION_DEPTH`).
    pub depth: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub library: String,
    pub mode: Mode,
    pub qrels: String,
    pub documents: usize,
    pub queries: usize,
    pub ndcg_at_10: f64,
    pub recall_at_100: f64,
    pub mrr_at_10: f64,
    pub ingest_indexed: usize,
    pub ingest_skipped: usize,
    pub ingest_failed: usize,
    pub ingest_seconds: f64,
    pub search_seconds: f64,
    /// Time the reranking stage took, within `search_seconds`.
    pub rerank_seconds: f64,
    /// query id → document id → score, the top 100 per query.
    #[serde(skip)]
    pub run: BTreeMap<String, BTreeMap<String, f32>>,
}

#[derive(Deserialize)]
struct CorpusLine {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    title: String,
    text: String,
}

#[derive(Deserialize)]
struct QueryLine {
    #[serde(rename = "_id")]
    id: String,
    text: String,
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        EngineError::invalid(format!("cannot read: {e}")).about(path.display().to_string())
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                EngineError::invalid(format!("line {}: {e}", i + 1))
                    .about(path.display().to_string())
            })
        })
        .collect()
}

/// Reads a qrels TSV (query-id, corpus-id, score; header optional).
pub fn read_qrels(path: &Path) -> Result<HashMap<String, Judgements>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        EngineError::invalid(format!("cannot read: {e}")).about(path.display().to_string())
    })?;
    let mut qrels: HashMap<String, Judgements> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 3 || (i == 0 && fields[2].trim().parse::<i64>().is_err()) {
            continue;
        }
        let grade: i64 = fields[2].trim().parse().map_err(|_| {
            EngineError::invalid(format!(
                "line {}: score {:?} is not an integer",
                i + 1,
                fields[2]
            ))
            .about(path.display().to_string())
        })?;
        qrels
            .entry(fields[0].to_string())
            .or_default()
            .insert(fields[1].to_string(), grade.max(0) as u32);
    }
    Ok(qrels)
}

fn default_qrels(dir: &Path) -> Result<PathBuf> {
    for name in ["test.tsv", "dev.tsv", "train.tsv"] {
        let path = dir.join("qrels").join(name);
        if path.exists() {
            return Ok(path);
        }
    }
    Err(
        EngineError::invalid("no qrels/test.tsv, dev.tsv or train.tsv; pass --qrels")
            .about(dir.display().to_string()),
    )
}

/// The source locator of a corpus document in the scratch library.
fn locator(id: &str) -> String {
    format!("beir:{id}")
}

impl Engine {
    pub fn eval(&self, request: &EvalRequest, progress: &dyn Progress) -> Result<EvalReport> {
        let dir = &request.dir;
        if !dir.join("corpus.jsonl").exists() {
            return Err(
                EngineError::invalid("not a BEIR directory (no corpus.jsonl)")
                    .about(dir.display().to_string()),
            );
        }
        let library = match &request.library {
            Some(library) => library.clone(),
            None => {
                let name = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "beir".into());
                let cleaned: String = name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || "._-".contains(c) {
                            c
                        } else {
                            '-'
                        }
                    })
                    .collect();
                LibraryName::new(format!("eval.{cleaned}"))?
            }
        };
        let qrels_path = match &request.qrels {
            Some(path) => path.clone(),
            None => default_qrels(dir)?,
        };
        let qrels = read_qrels(&qrels_path)?;
        let corpus: Vec<CorpusLine> = read_lines(&dir.join("corpus.jsonl"))?;
        let queries: Vec<QueryLine> = read_lines(&dir.join("queries.jsonl"))?;

        let ingest_started = Instant::now();
        let mut by_document: HashMap<DocumentId, String> = HashMap::with_capacity(corpus.len());
        let targets: Vec<IngestTarget> = corpus
            .into_iter()
            .map(|doc| {
                by_document.insert(
                    DocumentId::derive(&library, &locator(&doc.id)),
                    doc.id.clone(),
                );
                // A document with a title and no text (common in BEIR
                // corpora) is its title, so it can still be found.
                let text = if doc.text.trim().is_empty() {
                    doc.title.clone()
                } else {
                    doc.text
                };
                IngestTarget::Content {
                    name: locator(&doc.id),
                    text,
                    format: Some("text".into()),
                    title: Some(doc.title).filter(|t| !t.trim().is_empty()),
                }
            })
            .collect();
        let documents = targets.len();
        let ingest = self.ingest(
            &IngestRequest {
                library: library.clone(),
                targets,
                metadata: Default::default(),
                title: None,
                force: false,
                archives: false,
                ocr_languages: Vec::new(),
                // Every corpus document is judged on its own: two with the
                // same text must not merge into one.
                dedup: crate::ingest::Dedup::Source,
                allow_private_urls: None,
                keep_items: true,
            },
            progress,
        )?;
        let ingest_seconds = ingest_started.elapsed().as_secs_f64();

        let mut judged: Vec<&QueryLine> = queries
            .iter()
            .filter(|q| qrels.get(&q.id).is_some_and(|j| j.values().any(|&g| g > 0)))
            .collect();
        if let Some(max) = request.max_queries {
            judged.truncate(max);
        }
        let search_started = Instant::now();
        let (mut ndcg, mut recall, mut mrr) = (0.0, 0.0, 0.0);
        let mut rerank_ms = 0.0;
        let mut run = BTreeMap::new();
        for query in &judged {
            let mut search = SearchRequest::new(library.clone(), query.text.clone());
            search.mode = request.mode;
            search.top_k = 100;
            search.fusion = request.fusion;
            search.bm25 = request.bm25;
            search.rerank = request.rerank;
            search.response_mode = ResponseMode::IdsOnly;
            // The served path: a page of 100 is the agent's page of 10
            // continued (the depth does not move with the page size).
            search.candidates = request.depth;
            let response = self.search(&search)?;
            rerank_ms += response.rerank_ms;
            let ranking: Vec<(String, f32)> = response
                .hits
                .iter()
                .filter_map(|h| {
                    let id = DocumentId::parse(&h.document_id)?;
                    Some((by_document.get(&id)?.clone(), h.score))
                })
                .collect();
            let ids: Vec<String> = ranking.iter().map(|(d, _)| d.clone()).collect();
            let judgements = &qrels[&query.id];
            ndcg += metrics::ndcg_at(&ids, judgements, 10);
            recall += metrics::recall_at(&ids, judgements, 100);
            mrr += metrics::mrr_at(&ids, judgements, 10);
            run.insert(query.id.clone(), ranking.into_iter().collect());
        }
        let n = judged.len().max(1) as f64;
        Ok(EvalReport {
            library: library.to_string(),
            mode: request.mode,
            qrels: qrels_path.display().to_string(),
            documents,
            queries: judged.len(),
            ndcg_at_10: ndcg / n,
            recall_at_100: recall / n,
            mrr_at_10: mrr / n,
            ingest_indexed: ingest.indexed + ingest.replaced,
            ingest_skipped: ingest.skipped,
            ingest_failed: ingest.failed,
            ingest_seconds,
            search_seconds: search_started.elapsed().as_secs_f64(),
            rerank_seconds: rerank_ms / 1e3,
            run,
        })
    }
}
