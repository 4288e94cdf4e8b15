//! The vector index of one library: usearch HNSW over cosine, keyed by chunk
//! key, holding vectors quantised to i8 (a quarter of f32's memory: a
//! million 384-d chunks in about 0.4 GB). Its answers are candidates: the
//! store rescores them from the f32 vectors on disk, so reported
//! similarities are exact and quantisation only decides which candidates
//! are looked at. Small libraries and small filtered sets are searched
//! exhaustively; large ones through the graph.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use folio_store::StoreError;
use serde::{Deserialize, Serialize};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// Up to this many vectors, an unfiltered search is exact (brute force).
pub const EXACT_MAX: usize = 20_000;
/// Up to this many allowed chunks, a filtered search is exact over them.
pub const EXACT_FILTERED_MAX: usize = 20_000;

/// The HNSW search beam (at least the result count).
const EXPANSION_SEARCH: usize = 128;

/// A quantised index returns this many times the requested results (and
/// at least `RESCORE_EXTRA` more) for exact rescoring.
const RESCORE_FACTOR: usize = 3;
const RESCORE_EXTRA: usize = 30;

/// Written beside the index file: which change-log entries the file covers.
#[derive(Debug, Serialize, Deserialize)]
struct VectorMeta {
    watermark: i64,
    dim: usize,
    count: usize,
}

pub struct Vectors {
    index: RwLock<Index>,
    dim: usize,
}

fn err(context: &str) -> impl Fn(cxx::Exception) -> StoreError + '_ {
    move |e| StoreError::io(context, e.what())
}

fn options(dim: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dim,
        // Cosine, not inner product: usearch's i8 inner product sums the raw
        // codes, its cosine normalises them. The vectors are unit length,
        // so the order is the same.
        metric: MetricKind::Cos,
        quantization: ScalarKind::I8,
        connectivity: 16,
        expansion_add: 128,
        // Fixed for the index's life: usearch widens the beam to the result
        // count when that is larger, and changing the setting per search
        // would race between concurrent searches sharing the index.
        expansion_search: EXPANSION_SEARCH,
        multi: false,
    }
}

fn files(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("vectors.usearch"), dir.join("vectors.json"))
}

impl Vectors {
    pub fn new(dim: usize) -> Result<Self, StoreError> {
        let index = Index::new(&options(dim)).map_err(err("creating the vector index"))?;
        index
            .reserve(1024)
            .map_err(err("reserving the vector index"))?;
        Ok(Vectors {
            index: RwLock::new(index),
            dim,
        })
    }

    /// Loads the saved index and the watermark it covers; `None` when there
    /// is none, or it is unreadable or of another dimension (then the caller
    /// rebuilds it from the source of truth).
    pub fn load(dir: &Path, dim: usize) -> Option<(Self, i64)> {
        let (path, meta_path) = files(dir);
        let meta: VectorMeta = serde_json::from_slice(&std::fs::read(&meta_path).ok()?).ok()?;
        if meta.dim != dim {
            return None;
        }
        let index = Index::new(&options(dim)).ok()?;
        index.load(path.to_str()?).ok()?;
        // A saved file carries the settings it was saved with.
        index.change_expansion_search(EXPANSION_SEARCH);
        if index.dimensions() != dim || index.size() != meta.count {
            tracing::warn!(path = %path.display(), "vector index does not match its metadata; rebuilding");
            return None;
        }
        Some((
            Vectors {
                index: RwLock::new(index),
                dim,
            },
            meta.watermark,
        ))
    }

    /// Saves the index and then its metadata, each by write-and-rename, so a
    /// crash leaves either the old pair or a newer index with older metadata
    /// (replaying the log onto it is idempotent) — never the reverse.
    pub fn save(&self, dir: &Path, watermark: i64) -> Result<(), StoreError> {
        let (path, meta_path) = files(dir);
        let index = self.index.read().unwrap_or_else(|p| p.into_inner());
        let tmp = path.with_extension("usearch.part");
        let tmp_str = tmp
            .to_str()
            .ok_or_else(|| StoreError::io("vector index", "non-UTF-8 path"))?;
        index
            .save(tmp_str)
            .map_err(err("saving the vector index"))?;
        let meta = VectorMeta {
            watermark,
            dim: self.dim,
            count: index.size(),
        };
        drop(index);
        sync_and_rename(&tmp, &path)?;
        let tmp_meta = meta_path.with_extension("json.part");
        std::fs::write(&tmp_meta, serde_json::to_vec(&meta).unwrap_or_default())
            .map_err(|e| StoreError::io(tmp_meta.display().to_string(), e))?;
        sync_and_rename(&tmp_meta, &meta_path)
    }

    /// Empties the index (before a rebuild from the source of truth).
    pub fn clear(&self) -> Result<(), StoreError> {
        let fresh = Vectors::new(self.dim)?;
        let fresh = fresh.index.into_inner().unwrap_or_else(|p| p.into_inner());
        *self.index.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(())
    }

    pub fn remove_files(dir: &Path) {
        let (path, meta_path) = files(dir);
        let _ = std::fs::remove_file(meta_path);
        let _ = std::fs::remove_file(path);
    }

    /// How many candidates to ask `search` for, to rescore down to `k`:
    /// more than `k` for a quantised index (indexes saved before
    /// quantisation hold f32 and load as they were saved).
    pub fn candidates(&self, k: usize) -> usize {
        let index = self.index.read().unwrap_or_else(|p| p.into_inner());
        if index.scalar_kind() == ScalarKind::F32 {
            k
        } else {
            (k * RESCORE_FACTOR).max(k + RESCORE_EXTRA)
        }
    }

    pub fn contains(&self, key: u64) -> bool {
        self.index
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(key)
    }

    pub fn len(&self) -> usize {
        self.index.read().unwrap_or_else(|p| p.into_inner()).size()
    }

    pub fn memory_bytes(&self) -> usize {
        self.index
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .memory_usage()
    }

    /// Adds vectors whose keys are not present yet.
    pub fn add(&self, items: &[(u64, Vec<f32>)]) -> Result<(), StoreError> {
        let index = self.index.write().unwrap_or_else(|p| p.into_inner());
        let needed = index.size() + items.len();
        if needed > index.capacity() {
            index
                .reserve(needed.next_power_of_two())
                .map_err(err("growing the vector index"))?;
        }
        for (key, vector) in items {
            if vector.len() != self.dim {
                return Err(StoreError::io(
                    "vector index",
                    format!(
                        "vector of dimension {} in a {}-d index",
                        vector.len(),
                        self.dim
                    ),
                ));
            }
            if !index.contains(*key) {
                index
                    .add(*key, vector)
                    .map_err(err("adding to the vector index"))?;
            }
        }
        Ok(())
    }

    pub fn remove(&self, keys: &[u64]) -> Result<(), StoreError> {
        let index = self.index.write().unwrap_or_else(|p| p.into_inner());
        for key in keys {
            if index.contains(*key) {
                index
                    .remove(*key)
                    .map_err(err("removing from the vector index"))?;
            }
        }
        Ok(())
    }

    /// The `k` most similar keys with their cosine similarity, best first,
    /// as the index holds the vectors (approximate when quantised).
    pub fn search(
        &self,
        query: &[f32],
        allowed: Option<&HashSet<u64>>,
        k: usize,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        if query.len() != self.dim {
            return Err(StoreError::InvalidArgument(format!(
                "query vector has dimension {}, the library {}",
                query.len(),
                self.dim
            )));
        }
        let index = self.index.read().unwrap_or_else(|p| p.into_inner());
        if k == 0 || index.size() == 0 {
            return Ok(Vec::new());
        }
        let matches = match allowed {
            Some(allowed) if allowed.len() <= EXACT_FILTERED_MAX => {
                let mut buffer = vec![0f32; self.dim];
                let mut scored = Vec::with_capacity(allowed.len());
                for &key in allowed {
                    if index
                        .get(key, &mut buffer)
                        .map_err(err("reading the vector index"))?
                        > 0
                    {
                        scored.push((key, dot(query, &buffer)));
                    }
                }
                return Ok(crate::lexical::top_k(scored, k));
            }
            Some(allowed) => index
                .filtered_search(query, k, |key| allowed.contains(&key))
                .map_err(err("filtered vector search"))?,
            None if index.size() <= EXACT_MAX => index
                .exact_search(query, k)
                .map_err(err("exact vector search"))?,
            None => return graph_search(&index, query, k),
        };
        Ok(similarities(matches))
    }

    /// Approximate search through the graph regardless of size: for
    /// measuring the graph's recall against `search`'s exact answer.
    pub fn search_graph(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
        graph_search(
            &self.index.read().unwrap_or_else(|p| p.into_inner()),
            query,
            k,
        )
    }
}

/// HNSW search with a beam of `EXPANSION_SEARCH` (or the result count).
fn graph_search(index: &Index, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
    Ok(similarities(
        index.search(query, k).map_err(err("vector search"))?,
    ))
}

/// (key, cosine similarity) pairs from usearch's inner-product distances.
fn similarities(matches: usearch::ffi::Matches) -> Vec<(u64, f32)> {
    matches
        .keys
        .into_iter()
        .zip(matches.distances)
        .map(|(key, distance)| (key, 1.0 - distance))
        .collect()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Flushes `tmp` to disk and renames it over `path`, then syncs the folder.
pub fn sync_and_rename(tmp: &Path, path: &Path) -> Result<(), StoreError> {
    let io = |e: std::io::Error| StoreError::io(path.display().to_string(), e);
    std::fs::File::open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(tmp, path).map_err(io)?;
    if let Some(dir) = path.parent() {
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 16: each graph search set the shared index's beam for its own
    // result count under a read lock, racing with concurrent searches. The
    // beam is fixed for the index's life; no search changes it.
    #[test]
    fn searches_leave_the_shared_beam_alone() {
        let vectors = Vectors::new(4).unwrap();
        let items: Vec<(u64, Vec<f32>)> = (0..300u64)
            .map(|k| {
                let x = k as f32;
                let v = [x.sin(), x.cos(), (x * 0.5).sin(), 1.0];
                let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
                (k, v.iter().map(|a| a / n).collect())
            })
            .collect();
        vectors.add(&items).unwrap();
        let query = &items[7].1;
        for k in [1, 10, 100, 250] {
            let found = vectors.search_graph(query, k).unwrap();
            assert_eq!(found.len(), k);
            assert_eq!(found[0].0, 7);
            let allowed: HashSet<u64> = (0..300).collect();
            vectors.search(query, Some(&allowed), k).unwrap();
            assert_eq!(
                vectors.index.read().unwrap().expansion_search(),
                EXPANSION_SEARCH
            );
        }
    }

    fn unit(k: u64) -> Vec<f32> {
        let x = k as f32;
        let v = [x.sin(), x.cos(), (x * 0.5).sin(), 1.0];
        let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter().map(|a| a / n).collect()
    }

    // New indexes hold i8 and ask for extra candidates to rescore; an index
    // saved in f32 before quantisation loads as it was saved and keeps
    // answering, with no extra candidates.
    #[test]
    fn quantised_and_older_f32_indexes_both_load() {
        let items: Vec<(u64, Vec<f32>)> = (0..50u64).map(|k| (k, unit(k))).collect();
        let dir = tempfile::tempdir().unwrap();
        let vectors = Vectors::new(4).unwrap();
        vectors.add(&items).unwrap();
        vectors.save(dir.path(), 7).unwrap();
        let (loaded, watermark) = Vectors::load(dir.path(), 4).unwrap();
        assert_eq!(watermark, 7);
        assert_eq!(loaded.candidates(10), 40);
        assert_eq!(loaded.search(&items[3].1, None, 1).unwrap()[0].0, 3);

        let old = tempfile::tempdir().unwrap();
        let mut options = options(4);
        options.metric = MetricKind::IP;
        options.quantization = ScalarKind::F32;
        let index = Index::new(&options).unwrap();
        index.reserve(64).unwrap();
        for (key, v) in &items {
            index.add(*key, v).unwrap();
        }
        let (path, meta) = files(old.path());
        index.save(path.to_str().unwrap()).unwrap();
        let json = serde_json::json!({"watermark": 3, "dim": 4, "count": 50});
        std::fs::write(meta, json.to_string()).unwrap();
        let (loaded, _) = Vectors::load(old.path(), 4).unwrap();
        assert_eq!(loaded.candidates(10), 10);
        let found = loaded.search(&items[9].1, None, 2).unwrap();
        assert_eq!(found[0].0, 9);
        assert!((found[0].1 - 1.0).abs() < 1e-5);
    }
}
