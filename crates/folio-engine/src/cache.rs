//! Caches for repeated searches: query vectors (per model and query text)
//! and whole responses (per request). A response is reused only while the
//! store's generation is unchanged, and any write, by this process or
//! another, moves the generation: a cached answer is never stale.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::search::SearchResponse;

/// A least-recently-used map of bounded size.
struct Lru<K, V> {
    entries: HashMap<K, (V, u64)>,
    tick: u64,
    capacity: usize,
}

impl<K: Eq + Hash + Clone, V: Clone> Lru<K, V> {
    fn new(capacity: usize) -> Self {
        Lru {
            entries: HashMap::new(),
            tick: 0,
            capacity,
        }
    }

    fn get(&mut self, key: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|(value, used)| {
            *used = tick;
            value.clone()
        })
    }

    fn insert(&mut self, key: K, value: V) {
        self.tick += 1;
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, (value, self.tick));
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Hits and misses since the process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CacheStats {
    pub result_hits: u64,
    pub result_misses: u64,
    pub result_entries: usize,
    pub vector_hits: u64,
    pub vector_misses: u64,
    pub vector_entries: usize,
}

impl CacheStats {
    /// The share of searches answered from the cache, in [0, 1].
    pub fn hit_rate(&self) -> f64 {
        let total = self.result_hits + self.result_misses;
        if total == 0 {
            0.0
        } else {
            self.result_hits as f64 / total as f64
        }
    }
}

/// Query vectors by (model, query text).
type Vectors = Lru<(String, String), Arc<Vec<f32>>>;
/// Responses by request, each with the generation it was computed at.
type Responses = Lru<String, (u64, Arc<SearchResponse>)>;

/// Query vectors by (model, query), responses by (request, generation).
pub struct SearchCache {
    vectors: Mutex<Vectors>,
    results: Mutex<Responses>,
    result_hits: AtomicU64,
    result_misses: AtomicU64,
    vector_hits: AtomicU64,
    vector_misses: AtomicU64,
}

/// Distinct queries whose vectors are kept (384 floats each: 1.5 MiB).
const VECTORS: usize = 1_024;
/// Distinct requests whose responses are kept.
const RESULTS: usize = 256;

impl Default for SearchCache {
    fn default() -> Self {
        SearchCache {
            vectors: Mutex::new(Lru::new(VECTORS)),
            results: Mutex::new(Lru::new(RESULTS)),
            result_hits: AtomicU64::new(0),
            result_misses: AtomicU64::new(0),
            vector_hits: AtomicU64::new(0),
            vector_misses: AtomicU64::new(0),
        }
    }
}

impl SearchCache {
    /// The response cached for `key` at `generation`.
    pub fn response(&self, key: &str, generation: u64) -> Option<Arc<SearchResponse>> {
        let found = self
            .results
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key.to_string())
            .filter(|(at, _)| *at == generation)
            .map(|(_, response)| response);
        let counter = if found.is_some() {
            &self.result_hits
        } else {
            &self.result_misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    pub fn keep_response(&self, key: String, generation: u64, response: Arc<SearchResponse>) {
        self.results
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, (generation, response));
    }

    /// The vector of `query` under `model`, computing it on a miss.
    pub fn vector<E>(
        &self,
        model: &str,
        query: &str,
        compute: impl FnOnce() -> Result<Vec<f32>, E>,
    ) -> Result<Arc<Vec<f32>>, E> {
        let key = (model.to_string(), query.to_string());
        let found = self
            .vectors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key);
        if let Some(vector) = found {
            self.vector_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(vector);
        }
        self.vector_misses.fetch_add(1, Ordering::Relaxed);
        let vector = Arc::new(compute()?);
        self.vectors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, vector.clone());
        Ok(vector)
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            result_hits: self.result_hits.load(Ordering::Relaxed),
            result_misses: self.result_misses.load(Ordering::Relaxed),
            result_entries: self.results.lock().unwrap_or_else(|p| p.into_inner()).len(),
            vector_hits: self.vector_hits.load(Ordering::Relaxed),
            vector_misses: self.vector_misses.load(Ordering::Relaxed),
            vector_entries: self.vectors.lock().unwrap_or_else(|p| p.into_inner()).len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let mut lru = Lru::new(2);
        lru.insert("a", 1);
        lru.insert("b", 2);
        assert_eq!(lru.get(&"a"), Some(1));
        lru.insert("c", 3);
        assert_eq!(lru.get(&"b"), None);
        assert_eq!(lru.get(&"a"), Some(1));
        assert_eq!(lru.get(&"c"), Some(3));
        assert_eq!(lru.len(), 2);
    }

    #[test]
    fn responses_of_another_generation_are_misses() {
        let cache = SearchCache::default();
        let response = Arc::new(SearchResponse {
            library: "l".into(),
            query: "q".into(),
            mode: folio_search::Mode::Hybrid,
            hits: Vec::new(),
            candidates: 0,
            reranked: 0,
            embed_ms: 0.0,
            search_ms: 0.0,
            rerank_ms: 0.0,
        });
        cache.keep_response("k".into(), 7, response);
        assert!(cache.response("k", 8).is_none());
        assert!(cache.response("k", 7).is_some());
        let stats = cache.stats();
        assert_eq!((stats.result_hits, stats.result_misses), (1, 1));
        assert_eq!(stats.hit_rate(), 0.5);
        let computed = cache.vector("m", "q", || Ok::<_, ()>(vec![1.0])).unwrap();
        let again = cache.vector("m", "q", || Err(())).unwrap();
        assert_eq!(computed, again);
        assert_eq!(cache.stats().vector_hits, 1);
    }
}
