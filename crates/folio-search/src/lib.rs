//! Search arithmetic, as pure functions: fusing lexical and dense rankings
//! (reciprocal rank fusion or a normalised weighted score combination),
//! scaling scores into [0, 1], and grouping chunk hits by document.

pub mod metrics;

use std::collections::HashMap;

use folio_core::{ChunkId, DocumentId};
use serde::{Deserialize, Serialize};

/// Which retrievers a search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Hybrid,
    Lexical,
    Dense,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Mode> {
        Some(match text {
            "hybrid" => Mode::Hybrid,
            "lexical" | "bm25" | "keyword" => Mode::Lexical,
            "dense" | "semantic" | "vector" => Mode::Dense,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Lexical => "lexical",
            Mode::Dense => "dense",
        }
    }
}

/// How hybrid search combines its two rankings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ wᵢ / (k + rankᵢ).
    Rrf {
        k: f32,
        lexical_weight: f32,
        dense_weight: f32,
    },
    /// Each list's scores min-max normalised to [0, 1], then a weighted sum.
    Weighted { lexical_weight: f32 },
}

impl Default for Fusion {
    /// The weighted combination at 0.5: on the SciFact training queries it
    /// beat RRF (k = 60) and both single retrievers (docs/benchmarks-history.md).
    fn default() -> Self {
        Fusion::Weighted {
            lexical_weight: 0.5,
        }
    }
}

impl Fusion {
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Fusion::Rrf {
                k,
                lexical_weight,
                dense_weight,
            } => {
                if !(k >= 0.0 && k.is_finite()) {
                    return Err("RRF k must be a non-negative number".into());
                }
                if !(lexical_weight >= 0.0
                    && dense_weight >= 0.0
                    && lexical_weight + dense_weight > 0.0)
                {
                    return Err("RRF weights must be non-negative and not both zero".into());
                }
            }
            Fusion::Weighted { lexical_weight } => {
                if !(0.0..=1.0).contains(&lexical_weight) {
                    return Err("the lexical weight must lie in [0, 1]".into());
                }
            }
        }
        Ok(())
    }
}

/// A retriever's hit: chunk and raw score (BM25 or cosine).
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub chunk: ChunkId,
    pub score: f32,
}

/// Where a fused hit stood in each retriever's list (1-based rank, raw score).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub rank: u32,
    pub score: f32,
}

/// A hit after fusion, with a score in [0, 1].
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub chunk: ChunkId,
    pub score: f32,
    pub lexical: Option<Provenance>,
    pub dense: Option<Provenance>,
    /// The reranker's raw score, when it read this candidate.
    pub rerank: Option<f32>,
}

fn provenance(list: &[Scored]) -> HashMap<&ChunkId, Provenance> {
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            (
                &s.chunk,
                Provenance {
                    rank: i as u32 + 1,
                    score: s.score,
                },
            )
        })
        .collect()
}

/// Min-max normalisation of a list's scores; a list of equal scores maps to 1.
fn normalise(list: &[Scored]) -> HashMap<&ChunkId, f32> {
    let max = list
        .iter()
        .map(|s| s.score)
        .fold(f32::NEG_INFINITY, f32::max);
    let min = list.iter().map(|s| s.score).fold(f32::INFINITY, f32::min);
    let range = max - min;
    list.iter()
        .map(|s| {
            (
                &s.chunk,
                if range > f32::EPSILON {
                    (s.score - min) / range
                } else {
                    1.0
                },
            )
        })
        .collect()
}

/// Fuses the two rankings (each best first) into one, best first. Scores lie
/// in [0, 1]: RRF sums are divided by their maximum possible value.
pub fn fuse(lexical: &[Scored], dense: &[Scored], fusion: Fusion) -> Vec<Fused> {
    let lex = provenance(lexical);
    let den = provenance(dense);
    let mut ids: Vec<&ChunkId> = lexical.iter().map(|s| &s.chunk).collect();
    ids.extend(
        dense
            .iter()
            .map(|s| &s.chunk)
            .filter(|id| !lex.contains_key(id)),
    );
    let mut fused: Vec<Fused> = match fusion {
        Fusion::Rrf {
            k,
            lexical_weight,
            dense_weight,
        } => {
            let best = lexical_weight / (k + 1.0) + dense_weight / (k + 1.0);
            ids.iter()
                .map(|id| {
                    let l = lex
                        .get(id)
                        .map_or(0.0, |p| lexical_weight / (k + p.rank as f32));
                    let d = den
                        .get(id)
                        .map_or(0.0, |p| dense_weight / (k + p.rank as f32));
                    ((*id).clone(), (l + d) / best)
                })
                .map(|(chunk, score)| Fused {
                    lexical: lex.get(&chunk).copied(),
                    dense: den.get(&chunk).copied(),
                    chunk,
                    score,
                    rerank: None,
                })
                .collect()
        }
        Fusion::Weighted { lexical_weight } => {
            let ln = normalise(lexical);
            let dn = normalise(dense);
            ids.iter()
                .map(|id| {
                    let score = lexical_weight * ln.get(id).copied().unwrap_or(0.0)
                        + (1.0 - lexical_weight) * dn.get(id).copied().unwrap_or(0.0);
                    Fused {
                        chunk: (*id).clone(),
                        score,
                        lexical: lex.get(id).copied(),
                        dense: den.get(id).copied(),
                        rerank: None,
                    }
                })
                .collect()
        }
    };
    sort(&mut fused);
    fused
}

/// One retriever's list as fused hits, scores scaled into [0, 1]: cosine
/// similarity clamped at 0, BM25 divided by the list's best score.
pub fn single(list: &[Scored], mode: Mode) -> Vec<Fused> {
    let best = list.first().map_or(1.0, |s| s.score).max(f32::EPSILON);
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            let p = Some(Provenance {
                rank: i as u32 + 1,
                score: s.score,
            });
            match mode {
                Mode::Dense => Fused {
                    chunk: s.chunk.clone(),
                    score: s.score.clamp(0.0, 1.0),
                    lexical: None,
                    dense: p,
                    rerank: None,
                },
                _ => Fused {
                    chunk: s.chunk.clone(),
                    score: (s.score / best).clamp(0.0, 1.0),
                    lexical: p,
                    dense: None,
                    rerank: None,
                },
            }
        })
        .collect()
}

/// Blends a reranker's scores of the first `scores.len()` candidates (best
/// first) into their fused scores and re-sorts: a candidate it read scores
/// (1 − weight) × fused + weight × its reranker score min-max scaled over
/// the candidates read (all equal: 1); every other candidate scores
/// (1 − weight) × fused, as if the reranker had put it last. A non-finite
/// reranker score counts as unread. Scores stay in [0, 1].
pub fn blend_rerank(mut fused: Vec<Fused>, scores: &[f32], weight: f32) -> Vec<Fused> {
    let weight = weight.clamp(0.0, 1.0);
    let read = || scores.iter().copied().filter(|s| s.is_finite());
    let max = read().fold(f32::NEG_INFINITY, f32::max);
    let min = read().fold(f32::INFINITY, f32::min);
    let range = max - min;
    for (i, hit) in fused.iter_mut().enumerate() {
        let scaled = match scores.get(i).copied().filter(|s| s.is_finite()) {
            Some(raw) => {
                hit.rerank = Some(raw);
                if range > f32::EPSILON {
                    (raw - min) / range
                } else {
                    1.0
                }
            }
            None => 0.0,
        };
        hit.score = (1.0 - weight) * hit.score + weight * scaled;
    }
    // Stable: candidates of equal blended score keep their fused order.
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    fused
}

fn sort(hits: &mut [Fused]) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.chunk.cmp(&b.chunk))
    });
}

/// A document's hits: the best chunk first, then its other matching chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentHits {
    pub document: DocumentId,
    pub hits: Vec<Fused>,
}

/// Groups fused hits by document, keeping the documents in order of their
/// best chunk and at most `per_document` chunks each; returns the first
/// `limit` documents.
pub fn group_by_document(hits: &[Fused], limit: usize, per_document: usize) -> Vec<DocumentHits> {
    let mut order: Vec<DocumentHits> = Vec::new();
    let mut index: HashMap<DocumentId, usize> = HashMap::new();
    for hit in hits {
        let Some((document, _)) = ChunkId::parse(hit.chunk.as_str()) else {
            continue;
        };
        match index.get(&document) {
            Some(&i) => {
                if order[i].hits.len() < per_document {
                    order[i].hits.push(hit.clone());
                }
            }
            None => {
                if order.len() == limit {
                    continue;
                }
                index.insert(document.clone(), order.len());
                order.push(DocumentHits {
                    document,
                    hits: vec![hit.clone()],
                });
            }
        }
    }
    order
}

#[cfg(test)]
mod tests;
