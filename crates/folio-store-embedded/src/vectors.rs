//! The vector index of one library: usearch HNSW over cosine, keyed by chunk
//! key, holding vectors quantised to i8 (a quarter of f32's memory: a
//! million 384-d chunks in about 0.4 GB). The graph's i8-to-i8 distances
//! pick candidates; each is rescored in memory as the cosine of the f32
//! query and its codes (scaled per vector: within about 10⁻³ of the f32
//! cosine), so the f32 vectors the database keeps are read only to rebuild
//! the index. Small libraries and small filtered sets are searched
//! exhaustively; large ones through the graph.
//!
//! From `PACKED_MIN` vectors on, the index holds 4-bit codes instead, two
//! to a byte (a million 384-d chunks in 0.2 GB of codes instead of 0.4), and
//! walks the graph by their cosine (a metric of folio's, `packed_metric`).
//! Four bits keep the neighbours apart as eight do: among a scan's first 40
//! by 4-bit codes were 0.999 of the exact top 10 of 200,000 clustered 384-d
//! vectors, 1.00 by i8 codes (`docs/benchmarks-history.md`). A candidate's
//! score is its codes' cosine with the f32 query (within about 6·10⁻³), and
//! the store rescores the first 60 (`EXACT_RESCORED_PACKED`) from the f32
//! vectors.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, RwLock};

use folio_store::StoreError;
use serde::{Deserialize, Serialize};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// Up to this many vectors, an unfiltered search is exact (brute force).
pub const EXACT_MAX: usize = 20_000;
/// Up to this many allowed chunks, a filtered search is exact over them.
pub const EXACT_FILTERED_MAX: usize = 20_000;

/// The HNSW search beam (at least the result count). At a million
/// clustered 384-d vectors a beam of 128 found 0.85 of the exact top 10
/// (`folio bench search --chunks 1000000`); the graph's walk is a small part
/// of a search (under 2 ms at 128), so the beam is wide.
const EXPANSION_SEARCH: usize = 512;

/// A quantised index returns this many more candidates than asked, to
/// rescore from their codes. Three times as many candidates (the graph's
/// beam widened to match) cost a third of a dense search at 100,000 chunks
/// and found the same top 300 once rescoring read the f32 query against
/// the codes instead of usearch's i8 query.
const RESCORE_EXTRA: usize = 30;

/// From this many vectors on, an index holds 4-bit codes (see the module's
/// note): the store rebuilds an index of 8-bit codes that grows past it.
/// Below it, an index is small enough to keep the finer codes, which search
/// a little faster (native distances) and score within 10⁻³.
#[cfg(not(test))]
pub const PACKED_MIN: usize = 250_000;
/// Small enough for the store's tests to cross.
#[cfg(test)]
pub const PACKED_MIN: usize = 4_000;

/// Written beside the index file: which change-log entries the file covers.
#[derive(Debug, Serialize, Deserialize)]
struct VectorMeta {
    watermark: i64,
    dim: usize,
    count: usize,
    /// The index holds 4-bit codes, two to a stored byte.
    #[serde(default)]
    packed: bool,
}

/// Searches of one index at once. usearch answers each search from a
/// thread context reserved ahead and fails a search that finds none free
/// ("Reserve capacity ahead of searches!"), and searches come from the
/// blocking pool's many threads: the index keeps this many contexts, and
/// a search beyond them waits for one (`Slots`).
const SEARCH_CONTEXTS: usize = 16;

pub struct Vectors {
    index: RwLock<Graph>,
    dim: usize,
    slots: Slots,
}

/// usearch's index and the form of the codes it holds.
struct Graph {
    index: Index,
    /// 4-bit codes, two to a byte: the index's dimensions are half the
    /// vectors', and its metric is `packed_metric`.
    packed: bool,
}

impl std::ops::Deref for Graph {
    type Target = Index;

    fn deref(&self) -> &Index {
        &self.index
    }
}

impl Graph {
    /// A new empty index of `dim`-dimensional vectors, packed or not.
    fn new(dim: usize, packed: bool) -> Result<Self, StoreError> {
        let mut graph = Graph::without_metric(dim, packed)?;
        graph.set_metric();
        Ok(graph)
    }

    /// `new` but for the metric, which a file loaded into it replaces.
    fn without_metric(dim: usize, packed: bool) -> Result<Self, StoreError> {
        let packed = packed && dim.is_multiple_of(2);
        let stored = if packed { dim / 2 } else { dim };
        let index = Index::new(&options(stored)).map_err(err("creating the vector index"))?;
        Ok(Graph { index, packed })
    }

    /// Gives a packed index its metric: once made, and again once loaded
    /// (a loaded file brings usearch's own metric for its dimensions and
    /// scalar kind).
    fn set_metric(&mut self) {
        if self.packed {
            let bytes = self.index.dimensions();
            self.index.change_metric::<i8>(packed_metric(bytes));
        }
    }

    /// What the index holds for each vector.
    fn codes(&self) -> Codes {
        match (self.index.scalar_kind(), self.packed) {
            (ScalarKind::I8, true) => Codes::Packed,
            (ScalarKind::I8, false) => Codes::Bytes,
            _ => Codes::Floats,
        }
    }

    /// A query or a vector as this index stores it.
    fn encode<'a>(&self, vector: &'a [f32]) -> Encoded<'a> {
        match self.codes() {
            Codes::Packed => Encoded::Codes(packed_codes(vector)),
            Codes::Bytes => Encoded::Codes(codes(vector)),
            Codes::Floats => Encoded::Floats(vector),
        }
    }
}

/// The form of the codes an index holds: f32 (indexes saved before
/// quantisation load as they were saved), one i8 a component, or two 4-bit
/// components a byte.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Codes {
    Floats,
    Bytes,
    Packed,
}

/// A vector as an index stores it (an f32 index's as it is).
enum Encoded<'a> {
    Floats(&'a [f32]),
    Codes(Vec<i8>),
}

/// The search contexts of an index not in use (a counting semaphore).
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A search context held until dropped.
struct Slot<'a>(&'a Slots);

impl Slots {
    fn new() -> Self {
        Slots {
            free: Mutex::new(SEARCH_CONTEXTS),
            freed: Condvar::new(),
        }
    }

    /// Waits for a free context.
    fn take(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.freed.notify_one();
    }
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
    /// A new empty index of 8-bit codes.
    pub fn new(dim: usize) -> Result<Self, StoreError> {
        Vectors::with_codes(dim, false)
    }

    /// A new empty index, of 4-bit codes when `packed` and `dim` is even.
    pub fn with_codes(dim: usize, packed: bool) -> Result<Self, StoreError> {
        let graph = Graph::new(dim, packed)?;
        graph
            .reserve_capacity_and_threads(1024, SEARCH_CONTEXTS)
            .map_err(err("reserving the vector index"))?;
        Ok(Vectors {
            index: RwLock::new(graph),
            dim,
            slots: Slots::new(),
        })
    }

    /// Loads the saved index and the watermark it covers; `None` when there
    /// is none, or it is unreadable or of another dimension (then the caller
    /// rebuilds it from the source of truth).
    pub fn load(dir: &Path, dim: usize) -> Option<(Self, i64)> {
        let (path, meta_path) = files(dir);
        let meta: VectorMeta = serde_json::from_slice(&std::fs::read(&meta_path).ok()?).ok()?;
        if meta.dim != dim || (meta.packed && !dim.is_multiple_of(2)) {
            return None;
        }
        let mut graph = Graph::without_metric(dim, meta.packed).ok()?;
        graph.load(path.to_str()?).ok()?;
        // A saved file carries the settings it was saved with.
        graph.change_expansion_search(EXPANSION_SEARCH);
        let stored = if meta.packed { dim / 2 } else { dim };
        if graph.dimensions() != stored || graph.size() != meta.count {
            tracing::warn!(path = %path.display(), "vector index does not match its metadata; rebuilding");
            return None;
        }
        if meta.packed && graph.scalar_kind() != ScalarKind::I8 {
            return None;
        }
        graph.set_metric();
        graph
            .reserve_capacity_and_threads(graph.capacity().max(graph.size()), SEARCH_CONTEXTS)
            .ok()?;
        Some((
            Vectors {
                index: RwLock::new(graph),
                dim,
                slots: Slots::new(),
            },
            meta.watermark,
        ))
    }

    /// `load`, or a new empty index covering nothing (watermark 0).
    pub fn load_or_new(dir: &Path, dim: usize) -> Result<(Self, i64), StoreError> {
        match Vectors::load(dir, dim) {
            Some(loaded) => Ok(loaded),
            None => Ok((Vectors::new(dim)?, 0)),
        }
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
            packed: index.packed,
        };
        drop(index);
        sync_and_rename(&tmp, &path)?;
        let tmp_meta = meta_path.with_extension("json.part");
        std::fs::write(&tmp_meta, serde_json::to_vec(&meta).unwrap_or_default())
            .map_err(|e| StoreError::io(tmp_meta.display().to_string(), e))?;
        sync_and_rename(&tmp_meta, &meta_path)
    }

    /// Empties the index (before a rebuild from the source of truth), to
    /// hold 4-bit codes from now on when `packed`.
    pub fn clear(&self, packed: bool) -> Result<(), StoreError> {
        self.replace(Vectors::with_codes(self.dim, packed)?);
        Ok(())
    }

    /// Takes `other`'s contents in place of this index's (loading an index
    /// that was deferred).
    pub fn replace(&self, other: Vectors) {
        let fresh = other.index.into_inner().unwrap_or_else(|p| p.into_inner());
        *self.index.write().unwrap_or_else(|p| p.into_inner()) = fresh;
    }

    /// Whether the index holds 8-bit codes and has grown to `PACKED_MIN`
    /// vectors: the store then rebuilds it to hold 4-bit ones.
    pub fn wants_packing(&self) -> bool {
        let index = self.index.read().unwrap_or_else(|p| p.into_inner());
        index.codes() == Codes::Bytes && index.size() >= PACKED_MIN && self.dim.is_multiple_of(2)
    }

    /// How many of a search's best the store rescores from the f32 vectors
    /// (`crate::EXACT_RESCORED`).
    pub fn exact_rescored(&self) -> usize {
        match self.index.read().unwrap_or_else(|p| p.into_inner()).codes() {
            Codes::Packed => crate::EXACT_RESCORED_PACKED,
            Codes::Bytes | Codes::Floats => crate::EXACT_RESCORED,
        }
    }

    /// What the index holds for each vector: "f32", "i8" or "4-bit".
    pub fn codes_name(&self) -> &'static str {
        match self.index.read().unwrap_or_else(|p| p.into_inner()).codes() {
            Codes::Floats => "f32",
            Codes::Bytes => "i8",
            Codes::Packed => "4-bit",
        }
    }

    pub fn remove_files(dir: &Path) {
        let (path, meta_path) = files(dir);
        let _ = std::fs::remove_file(meta_path);
        let _ = std::fs::remove_file(path);
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

    /// Adds vectors whose keys are not present yet, on every core: graph
    /// insertion dominates building a large library, and usearch inserts
    /// concurrently.
    pub fn add(&self, items: &[(u64, Vec<f32>)]) -> Result<(), StoreError> {
        if let Some((_, vector)) = items.iter().find(|(_, v)| v.len() != self.dim) {
            return Err(StoreError::io(
                "vector index",
                format!(
                    "vector of dimension {} in a {}-d index",
                    vector.len(),
                    self.dim
                ),
            ));
        }
        let index = self.index.write().unwrap_or_else(|p| p.into_inner());
        let threads = if items.len() >= 256 {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
        } else {
            1
        };
        let needed = index.size() + items.len();
        // Never fewer contexts than searches may use (see SEARCH_CONTEXTS).
        if needed > index.capacity() || threads > 1 {
            index
                .reserve_capacity_and_threads(
                    needed.next_power_of_two().max(index.capacity()),
                    threads.max(SEARCH_CONTEXTS),
                )
                .map_err(err("growing the vector index"))?;
        }
        let add = |part: &[(u64, Vec<f32>)]| -> Result<(), StoreError> {
            for (key, vector) in part {
                if !index.contains(*key) {
                    match index.encode(vector) {
                        Encoded::Codes(codes) => index.add(*key, &codes),
                        Encoded::Floats(vector) => index.add(*key, vector),
                    }
                    .map_err(err("adding to the vector index"))?;
                }
            }
            Ok(())
        };
        if threads == 1 {
            return add(items);
        }
        std::thread::scope(|scope| {
            let parts: Vec<_> = items
                .chunks(items.len().div_ceil(threads))
                .map(|part| scope.spawn(move || add(part)))
                .collect();
            parts.into_iter().try_for_each(|part| {
                part.join().unwrap_or_else(|_| {
                    Err(StoreError::io("vector index", "a vector insert panicked"))
                })
            })
        })
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

    /// The `k` most similar keys with their cosine similarity, best first:
    /// against the f32 query, of the vectors as the index holds them (for a
    /// quantised index, their codes; see the module's note).
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
        let _slot = self.slots.take();
        let wanted = candidates(&index, k);
        let (codes, encoded) = (index.codes(), index.encode(query));
        let matches = match (allowed, codes, &encoded) {
            // The codes as the index holds them (usearch's own cast to f32
            // cost more than the products), against the query's own codes
            // in integers (a third faster than against the f32 query; the
            // caller rescores the best from the f32 vectors), in key
            // order: a document's chunks were added together, so their
            // vectors lie side by side in the index's memory.
            (Some(allowed), Codes::Bytes, Encoded::Codes(query))
                if allowed.len() <= EXACT_FILTERED_MAX =>
            {
                let query_norm = (products(query, query).0 as f32).sqrt();
                let mut keys: Vec<u64> = allowed.iter().copied().collect();
                keys.sort_unstable();
                let scored = scan::<i8>(&index, keys, |codes| {
                    let (product, norm) = products(query, codes);
                    product as f32 / (query_norm * (norm as f32).sqrt()).max(f32::MIN_POSITIVE)
                })?;
                return Ok(crate::lexical::top_k(scored, k));
            }
            // 4-bit codes against the f32 query, as they are rescored.
            (Some(allowed), Codes::Packed, _) if allowed.len() <= EXACT_FILTERED_MAX => {
                let mut keys: Vec<u64> = allowed.iter().copied().collect();
                keys.sort_unstable();
                let scored = scan::<i8>(&index, keys, packed_scorer(query))?;
                return Ok(crate::lexical::top_k(scored, k));
            }
            (Some(allowed), Codes::Floats, _) if allowed.len() <= EXACT_FILTERED_MAX => {
                let scored = scan::<f32>(&index, allowed.iter().copied(), |vector| {
                    dot(query, vector) / dot(vector, vector).sqrt().max(f32::MIN_POSITIVE)
                })?;
                return Ok(crate::lexical::top_k(scored, k));
            }
            (Some(allowed), _, Encoded::Codes(codes)) => {
                index.filtered_search(codes, wanted, |key| allowed.contains(&key))
            }
            (Some(allowed), _, Encoded::Floats(query)) => {
                index.filtered_search(query, wanted, |key| allowed.contains(&key))
            }
            (None, _, _) if index.size() > EXACT_MAX => {
                return graph_search(&index, query, k);
            }
            (None, _, Encoded::Codes(codes)) => index.exact_search(codes, wanted),
            (None, _, Encoded::Floats(query)) => index.exact_search(query, wanted),
        }
        .map_err(err("vector search"))?;
        rescored(&index, query, matches, k)
    }

    /// Search through the graph regardless of size, rescored as `search`
    /// rescores: for measuring the graph's recall against an exact answer.
    pub fn search_graph(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
        let index = self.index.read().unwrap_or_else(|p| p.into_inner());
        let _slot = self.slots.take();
        graph_search(&index, query, k)
    }
}

/// How many candidates to ask the index for, to rescore down to `k`: more
/// than `k` for a quantised index (indexes saved before quantisation hold
/// f32 and load as they were saved).
fn candidates(index: &Graph, k: usize) -> usize {
    match index.codes() {
        Codes::Floats => k,
        Codes::Bytes | Codes::Packed => k + RESCORE_EXTRA,
    }
}

/// The best `k` of an index's matches, best first: a quantised index's
/// rescored from their codes against the f32 query (`cosine_with_codes`,
/// `packed_scorer`), an f32 index's as it scored them.
fn rescored(
    index: &Graph,
    query: &[f32],
    matches: usearch::ffi::Matches,
    k: usize,
) -> Result<Vec<(u64, f32)>, StoreError> {
    let scored = match index.codes() {
        Codes::Floats => {
            let mut scored = similarities(matches);
            scored.truncate(k);
            return Ok(scored);
        }
        Codes::Bytes => scan::<i8>(index, matches.keys, |codes| cosine_with_codes(query, codes))?,
        Codes::Packed => scan::<i8>(index, matches.keys, packed_scorer(query))?,
    };
    Ok(crate::lexical::top_k(scored, k))
}

/// Each key's score by `score` over its vector as the index holds it (read
/// as `T`); keys the index lacks are left out.
fn scan<T: usearch::VectorType + Default + Clone>(
    index: &Index,
    keys: impl IntoIterator<Item = u64>,
    mut score: impl FnMut(&[T]) -> f32,
) -> Result<Vec<(u64, f32)>, StoreError> {
    let keys = keys.into_iter();
    let mut buffer = vec![T::default(); index.dimensions()];
    let mut scored = Vec::with_capacity(keys.size_hint().0);
    for key in keys {
        if index
            .get(key, &mut buffer)
            .map_err(err("reading the vector index"))?
            > 0
        {
            scored.push((key, score(&buffer)));
        }
    }
    Ok(scored)
}

/// HNSW search with a beam of `EXPANSION_SEARCH` (or the candidate count),
/// rescored down to `k`.
fn graph_search(index: &Graph, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
    let wanted = candidates(index, k);
    let matches = match index.encode(query) {
        Encoded::Codes(codes) => index.search(&codes, wanted),
        Encoded::Floats(query) => index.search(query, wanted),
    };
    rescored(index, query, matches.map_err(err("vector search"))?, k)
}

/// A vector's i8 codes for the quantised index. usearch's own cast from
/// f32 divides by the vector's length and truncates, so a unit 384-d
/// vector's components (|x| ≈ 0.05) would use a handful of levels: at a
/// million clustered vectors, recall@10 after rescoring fell to 0.80.
/// Cosine ignores length, so each vector's largest component becomes ±127
/// and the rest are rounded on that scale.
fn codes(vector: &[f32]) -> Vec<i8> {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest <= 0.0 || !largest.is_finite() {
        return vec![0; vector.len()];
    }
    let scale = 127.0 / largest;
    vector
        .iter()
        .map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8)
        .collect()
}

/// A vector's 4-bit codes, two to a byte (component `2i` in the low half of
/// byte `i`, `2i + 1` in the high half), each in -7..=7 on the scale of the
/// vector's largest component (as `codes`, on seven levels a side).
fn packed_codes(vector: &[f32]) -> Vec<i8> {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if largest > 0.0 && largest.is_finite() {
        7.0 / largest
    } else {
        0.0
    };
    let level = |x: f32| (x * scale).round().clamp(-7.0, 7.0) as i8;
    vector
        .chunks(2)
        .map(|pair| {
            let low = level(pair[0]);
            let high = pair.get(1).map_or(0, |&x| level(x));
            (low & 0x0F) | (high << 4)
        })
        .collect()
}

/// A packed byte's two components, low half first (sign-extended).
fn unpacked(byte: i8) -> (i8, i8) {
    ((byte << 4) >> 4, byte >> 4)
}

/// Two vectors' 4-bit codes `a` and `b`: their product and squared lengths,
/// exact. Summed in 64 lanes of 16-bit integers, which the compiler turns
/// into vector instructions on any x86-64 (2.5 times as fast as 32-bit
/// lanes: the graph's walk and its build run this for every distance). A
/// byte adds at most 98 to a lane, so each block of 128 bytes a lane is
/// moved into 32-bit totals before it could overflow.
fn packed_products(a: &[i8], b: &[i8]) -> (i32, i32, i32) {
    const LANES: usize = 64;
    const BLOCK: usize = LANES * 128;
    let (mut product, mut a_norm, mut b_norm) = (0i32, 0i32, 0i32);
    let length = a.len().min(b.len());
    let head = length / LANES * LANES;
    for (x, y) in a[..head].chunks(BLOCK).zip(b[..head].chunks(BLOCK)) {
        let mut lanes = [[0i16; LANES]; 3];
        for (x, y) in x.chunks_exact(LANES).zip(y.chunks_exact(LANES)) {
            for lane in 0..LANES {
                let ((x0, x1), (y0, y1)) = (unpacked(x[lane]), unpacked(y[lane]));
                let (x0, x1, y0, y1) = (i16::from(x0), i16::from(x1), i16::from(y0), i16::from(y1));
                lanes[0][lane] += x0 * y0 + x1 * y1;
                lanes[1][lane] += x0 * x0 + x1 * x1;
                lanes[2][lane] += y0 * y0 + y1 * y1;
            }
        }
        let total = |lanes: &[i16; LANES]| lanes.iter().map(|&v| i32::from(v)).sum::<i32>();
        product += total(&lanes[0]);
        a_norm += total(&lanes[1]);
        b_norm += total(&lanes[2]);
    }
    for (&x, &y) in a[head..length].iter().zip(&b[head..length]) {
        let ((x0, x1), (y0, y1)) = (unpacked(x), unpacked(y));
        let (x0, x1, y0, y1) = (i32::from(x0), i32::from(x1), i32::from(y0), i32::from(y1));
        product += x0 * y0 + x1 * y1;
        a_norm += x0 * x0 + x1 * x1;
        b_norm += y0 * y0 + y1 * y1;
    }
    (product, a_norm, b_norm)
}

/// The distance usearch walks a packed index by: one minus the cosine of
/// two vectors' 4-bit codes, each `bytes` long.
fn packed_metric(bytes: usize) -> Box<dyn Fn(*const i8, *const i8) -> f32 + Send + Sync> {
    Box::new(move |a, b| {
        let (a, b) = (stored_codes(a, bytes), stored_codes(b, bytes));
        let (product, a_norm, b_norm) = packed_products(a, b);
        let lengths = (a_norm as f32 * b_norm as f32).sqrt();
        1.0 - product as f32 / lengths.max(f32::MIN_POSITIVE)
    })
}

/// The `bytes` codes usearch hands a metric: a stored vector's or the
/// query's, as long as the index's dimensions.
#[allow(unsafe_code)]
fn stored_codes<'a>(codes: *const i8, bytes: usize) -> &'a [i8] {
    // SAFETY: usearch calls an index's metric only with pointers to two of
    // its vectors (stored, or the query being searched or added), each of
    // `dimensions()` i8 values, alive for the call: it refuses a query or a
    // vector of another length before computing any distance. `bytes` is
    // the index's dimensions (`Graph::set_metric`), and the slice does not
    // outlive the call.
    unsafe { std::slice::from_raw_parts(codes, bytes) }
}

/// Scores 4-bit codes as `cosine_with_codes` scores i8 ones, against the
/// f32 query: each vector's codes unpacked into one buffer kept between
/// calls (the scan's candidates allocate nothing).
fn packed_scorer(query: &[f32]) -> impl FnMut(&[i8]) -> f32 + '_ {
    let mut levels = Vec::with_capacity(query.len() + 1);
    move |codes| {
        levels.clear();
        levels.extend(codes.iter().flat_map(|&byte| {
            let (low, high) = unpacked(byte);
            [low, high]
        }));
        cosine_with_codes(query, &levels)
    }
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

/// The cosine of an f32 query of unit length and a vector's i8 codes
/// (scaled per vector, so only their direction counts). Sums in 16 lanes,
/// so the loop compiles to vector instructions.
fn cosine_with_codes(query: &[f32], codes: &[i8]) -> f32 {
    const LANES: usize = 16;
    let (mut product, mut norm) = ([0f32; LANES], [0f32; LANES]);
    let (query_head, query_tail) = query.split_at(query.len() / LANES * LANES);
    let (codes_head, codes_tail) = codes.split_at(query_head.len().min(codes.len()));
    for (q, c) in query_head
        .chunks_exact(LANES)
        .zip(codes_head.chunks_exact(LANES))
    {
        for lane in 0..LANES {
            let c = f32::from(c[lane]);
            product[lane] += q[lane] * c;
            norm[lane] += c * c;
        }
    }
    let (mut product, mut norm) = (product.iter().sum::<f32>(), norm.iter().sum::<f32>());
    for (q, &c) in query_tail.iter().zip(codes_tail) {
        let c = f32::from(c);
        product += q * c;
        norm += c * c;
    }
    product / norm.sqrt().max(f32::MIN_POSITIVE)
}

/// Two vectors' codes `a` and `b`: their product and `b`'s squared
/// length, summed in 32 lanes of integers so the loop compiles to vector
/// instructions (exact: a 1,024-d product of ±127 codes is 16.5 million).
fn products(a: &[i8], b: &[i8]) -> (i32, i32) {
    const LANES: usize = 32;
    let (mut product, mut norm) = ([0i32; LANES], [0i32; LANES]);
    let head = a.len().min(b.len()) / LANES * LANES;
    for (a, b) in a[..head]
        .chunks_exact(LANES)
        .zip(b[..head].chunks_exact(LANES))
    {
        for lane in 0..LANES {
            let (a, b) = (i32::from(a[lane]), i32::from(b[lane]));
            product[lane] += a * b;
            norm[lane] += b * b;
        }
    }
    let (mut product, mut norm) = (product.iter().sum::<i32>(), norm.iter().sum::<i32>());
    for (&a, &b) in a[head..].iter().zip(&b[head..]) {
        let (a, b) = (i32::from(a), i32::from(b));
        product += a * b;
        norm += b * b;
    }
    (product, norm)
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

    #[test]
    fn codes_score_as_their_vector_does() {
        for dim in [384usize, 385, 7] {
            let query: Vec<f32> = (0..dim)
                .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
                .collect();
            let length = dot(&query, &query).sqrt();
            let query: Vec<f32> = query.iter().map(|x| x / length).collect();
            let codes: Vec<i8> = (0..dim)
                .map(|i| ((i * 31 % 255) as i32 - 127) as i8)
                .collect();
            let vector: Vec<f32> = codes.iter().map(|&c| f32::from(c)).collect();
            let expected = dot(&query, &vector) / dot(&vector, &vector).sqrt();
            let got = cosine_with_codes(&query, &codes);
            assert!((got - expected).abs() < 1e-5, "{dim}: {got} vs {expected}");
        }
    }

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

    // Issue 46 §10: an index grown by small adds reserved one thread
    // context, and concurrent searches from the blocking pool failed with
    // "Reserve capacity ahead of searches!". Far more threads than
    // contexts search at once, exactly, through the graph and filtered,
    // after adds of one item at a time: every search answers.
    #[test]
    fn concurrent_searches_never_run_out_of_contexts() {
        let vectors = Vectors::new(4).unwrap();
        for k in 0..1_500u64 {
            vectors.add(&[(k, unit(k))]).unwrap();
        }
        let allowed: HashSet<u64> = (0..1_500).step_by(3).collect();
        std::thread::scope(|scope| {
            for t in 0..48u64 {
                let (vectors, allowed) = (&vectors, &allowed);
                scope.spawn(move || {
                    for i in 0..60u64 {
                        let query = unit(t * 61 + i);
                        let found = match i % 3 {
                            0 => vectors.search(&query, None, 10),
                            1 => vectors.search_graph(&query, 10),
                            _ => vectors.search(&query, Some(allowed), 10),
                        };
                        assert_eq!(
                            found.expect("a search never fails for concurrency").len(),
                            10
                        );
                    }
                });
            }
        });
    }

    fn unit(k: u64) -> Vec<f32> {
        let x = k as f32;
        let v = [x.sin(), x.cos(), (x * 0.5).sin(), 1.0];
        let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter().map(|a| a / n).collect()
    }

    /// Unit vectors scattered around one centre, as embeddings of one
    /// topic are: components near ±0.05, similarities close together.
    fn cluster(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed | 1;
        let mut normal = move || {
            let mut uniform = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
            };
            let (a, b) = (uniform(), uniform());
            ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()) as f32
        };
        let centre: Vec<f32> = (0..dim).map(|_| normal()).collect();
        let norm = dot(&centre, &centre).sqrt();
        (0..n)
            .map(|_| {
                let v: Vec<f32> = centre.iter().map(|c| c / norm + 0.08 * normal()).collect();
                let n = dot(&v, &v).sqrt();
                v.into_iter().map(|x| x / n).collect()
            })
            .collect()
    }

    // The i8 codes must keep close neighbours apart: the exact top 10 of a
    // tight cluster is among the first `EXACT_RESCORED` the quantised index
    // answers after rescoring from the codes (the store rescores those from
    // f32; with usearch's own cast from f32, recall among 100 was 0.63), each similarity
    // within 2·10⁻³ of the f32 one. The same holds of a filtered search's
    // exact scan, which scores the query's codes too (within 5·10⁻³).
    #[test]
    fn quantised_candidates_hold_the_exact_neighbours() {
        let dim = 384;
        let mut points = cluster(5_030, dim, 42);
        let queries = points.split_off(5_000);
        let vectors = Vectors::new(dim).unwrap();
        let items: Vec<(u64, Vec<f32>)> = (0u64..).zip(points).collect();
        vectors.add(&items).unwrap();
        let odd: HashSet<u64> = (0..5_000).filter(|k| k % 2 == 1).collect();
        for (allowed, tolerance) in [(None, 2e-3), (Some(&odd), 5e-3)] {
            let mut found = 0;
            for query in &queries {
                let mut exact: Vec<(u64, f32)> = items
                    .iter()
                    .filter(|(k, _)| allowed.is_none_or(|a| a.contains(k)))
                    .map(|(k, v)| (*k, dot(query, v)))
                    .collect();
                exact.sort_by(|a, b| b.1.total_cmp(&a.1));
                let answer = vectors.search(query, allowed, 100).unwrap();
                assert_eq!(answer.len(), 100);
                // The store rescores only the codes' first few exactly.
                let rescored = &answer[..crate::EXACT_RESCORED];
                found += exact[..10]
                    .iter()
                    .filter(|(k, _)| rescored.iter().any(|(c, _)| c == k))
                    .count();
                for (key, similarity) in answer {
                    assert!(allowed.is_none_or(|a| a.contains(&key)));
                    let truth = dot(query, &items[key as usize].1);
                    assert!(
                        (similarity - truth).abs() < tolerance,
                        "similarity {similarity} for {truth}"
                    );
                }
            }
            let recall = found as f64 / (queries.len() * 10) as f64;
            assert!(recall >= 0.99, "recall@10 {recall}");
        }
    }

    // The 4-bit codes: the integer products are exact, and the cosine of an
    // f32 query with packed codes is the cosine with the levels they hold.
    #[test]
    fn packed_codes_score_as_their_levels_do() {
        for dim in [384usize, 386, 64, 6, 7] {
            let vector: Vec<f32> = (0..dim)
                .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
                .collect();
            let other: Vec<f32> = (0..dim).map(|i| (i * 5 % 11) as f32 - 4.5).collect();
            let largest = |v: &[f32]| v.iter().fold(0f32, |m, x| m.max(x.abs()));
            let levels = |v: &[f32]| -> Vec<i32> {
                let scale = 7.0 / largest(v);
                v.iter().map(|x| (x * scale).round() as i32).collect()
            };
            let (a, b) = (levels(&vector), levels(&other));
            assert!(a.iter().all(|l| l.abs() <= 7) && a.iter().any(|l| l.abs() == 7));
            let naive = |x: &[i32], y: &[i32]| -> i32 { x.iter().zip(y).map(|(x, y)| x * y).sum() };
            let (packed_a, packed_b) = (packed_codes(&vector), packed_codes(&other));
            assert_eq!(packed_a.len(), dim.div_ceil(2));
            assert_eq!(
                packed_products(&packed_a, &packed_b),
                (naive(&a, &b), naive(&a, &a), naive(&b, &b)),
                "{dim}"
            );
            let length = dot(&vector, &vector).sqrt();
            let query: Vec<f32> = vector.iter().map(|x| x / length).collect();
            let b_float: Vec<f32> = b.iter().map(|&l| l as f32).collect();
            let expected = dot(&query, &b_float) / dot(&b_float, &b_float).sqrt();
            let got = packed_scorer(&query)(&packed_b);
            assert!((got - expected).abs() < 1e-5, "{dim}: {got} vs {expected}");
        }
        // Every component at ±7 over 24,000 bytes: past a 16-bit lane's range
        // (98 a byte, 375 bytes a lane), still exact.
        let extreme = vec![0x77u8 as i8; 24_000];
        let negative = vec![0x99u8 as i8; 24_000];
        assert_eq!(
            packed_products(&extreme, &negative),
            (-49 * 48_000, 49 * 48_000, 49 * 48_000)
        );
        assert_eq!(packed_codes(&[0.0, 0.0, 0.0]), vec![0, 0]);
        assert_eq!(unpacked(packed_codes(&[-1.0, 0.5])[0]), (-7, 4));
    }

    // An index past `PACKED_MIN` holds 4-bit codes: its graph, walked by
    // their cosine, still finds the exact top 10 of a tight cluster among
    // the first `exact_rescored()` after rescoring (the store rescores those
    // from f32), each scored within 3·10⁻² of its f32 similarity (6·10⁻³ on
    // average); exact and
    // filtered searches hold them too; saved and loaded, it answers the same.
    // The graph is built by several threads, so it differs run to run: recall
    // is measured over 100 queries (0.995 to 0.998 over a dozen builds; 20
    // queries swung to 0.98 on one miss-prone build).
    #[test]
    fn packed_codes_hold_the_exact_neighbours() {
        let dim = 384;
        let mut points = cluster(3_100, dim, 7);
        let queries = points.split_off(3_000);
        let vectors = Vectors::with_codes(dim, true).unwrap();
        let items: Vec<(u64, Vec<f32>)> = (0u64..).zip(points).collect();
        vectors.add(&items).unwrap();
        assert_eq!(vectors.codes_name(), "4-bit");
        assert_eq!(vectors.index.read().unwrap().dimensions(), dim / 2);
        let even: HashSet<u64> = (0..3_000).filter(|k| k % 2 == 0).collect();
        let dir = tempfile::tempdir().unwrap();
        vectors.save(dir.path(), 5).unwrap();
        let (loaded, watermark) = Vectors::load(dir.path(), dim).unwrap();
        assert_eq!((watermark, loaded.codes_name()), (5, "4-bit"));
        let (mut found, mut errors) = ([0usize; 3], Vec::new());
        for query in &queries {
            let mut exact: Vec<(u64, f32)> =
                items.iter().map(|(k, v)| (*k, dot(query, v))).collect();
            exact.sort_by(|a, b| b.1.total_cmp(&a.1));
            let exact_even: Vec<u64> = exact
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| k % 2 == 0)
                .take(10)
                .collect();
            let answers = [
                vectors.search_graph(query, 100).unwrap(),
                vectors.search(query, None, 100).unwrap(),
                vectors.search(query, Some(&even), 100).unwrap(),
            ];
            assert_eq!(loaded.search_graph(query, 100).unwrap(), answers[0]);
            for (i, answer) in answers.iter().enumerate() {
                assert_eq!(answer.len(), 100);
                let first = &answer[..vectors.exact_rescored()];
                let truth: Vec<u64> = match i {
                    2 => exact_even.clone(),
                    _ => exact[..10].iter().map(|(k, _)| *k).collect(),
                };
                found[i] += truth
                    .iter()
                    .filter(|k| first.iter().any(|(c, _)| c == *k))
                    .count();
                for (key, similarity) in answer {
                    assert!(i != 2 || key % 2 == 0);
                    let truth = dot(query, &items[*key as usize].1);
                    assert!(
                        (similarity - truth).abs() < 3e-2,
                        "{similarity} for {truth}"
                    );
                    errors.push((similarity - truth).abs());
                }
            }
        }
        let recalls = found.map(|found| found as f64 / (queries.len() * 10) as f64);
        for recall in recalls {
            assert!(recall >= 0.99, "recall@10 {recall}");
        }
        let mean = errors.iter().sum::<f32>() / errors.len() as f32;
        assert!(mean < 6e-3, "mean error {mean}");
    }

    #[test]
    fn products_of_codes_are_exact() {
        for dim in [384usize, 1024, 33, 5] {
            let a: Vec<i8> = (0..dim)
                .map(|i| ((i * 37 % 255) as i32 - 127) as i8)
                .collect();
            let b: Vec<i8> = (0..dim)
                .map(|i| ((i * 91 % 255) as i32 - 127) as i8)
                .collect();
            let naive = |x: &[i8], y: &[i8]| -> i64 {
                x.iter()
                    .zip(y)
                    .map(|(&x, &y)| i64::from(x) * i64::from(y))
                    .sum()
            };
            let (product, norm) = products(&a, &b);
            assert_eq!(i64::from(product), naive(&a, &b), "{dim}");
            assert_eq!(i64::from(norm), naive(&b, &b), "{dim}");
        }
        let extreme = vec![127i8; 1024];
        assert_eq!(products(&extreme, &extreme), (16_516_096, 16_516_096));
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
        assert_eq!(candidates(&loaded.index.read().unwrap(), 10), 40);
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
        assert_eq!(candidates(&loaded.index.read().unwrap(), 10), 10);
        let found = loaded.search(&items[9].1, None, 2).unwrap();
        assert_eq!(found[0].0, 9);
        assert!((found[0].1 - 1.0).abs() < 1e-5);
    }

    /// Recall@10 of graph searches after rescoring (what the store does),
    /// against the exact top 10 by f32 similarity.
    fn graph_recall(vectors: &Vectors, queries: &[(Vec<f32>, Vec<u64>)]) -> f64 {
        let mut found = 0;
        for (query, truth) in queries {
            found += vectors
                .search_graph(query, 10)
                .unwrap()
                .iter()
                .filter(|(k, _)| truth.contains(k))
                .count();
        }
        found as f64 / (queries.len() * 10) as f64
    }

    // Issue 26: the recall test searched 3,000 vectors, which any beam
    // finds, so a beam cut back to 128 (recall 0.85 at a million vectors)
    // passed it. Here the graph holds 20,000 384-d vectors in four tight
    // topics, as large as an exhaustively searched library gets, and
    // the same index is asked with a beam of 128 to show that the floor
    // tells the two apart (measured: 1.0 at the production beam, 0.78 at
    // 128).
    #[test]
    fn the_graph_finds_the_exact_neighbours_of_a_large_library() {
        let (dim, topics, per_topic, queries_per_topic) = (384, 4, 5_000, 25);
        let mut items: Vec<(u64, Vec<f32>)> = Vec::new();
        let mut queries: Vec<Vec<f32>> = Vec::new();
        for topic in 0..topics {
            let mut points = cluster(per_topic + queries_per_topic, dim, 42 + topic);
            queries.extend(points.split_off(per_topic));
            let first = items.len() as u64;
            items.extend((first..).zip(points));
        }
        let vectors = Vectors::new(dim).unwrap();
        vectors.add(&items).unwrap();
        let queries: Vec<(Vec<f32>, Vec<u64>)> = queries
            .into_iter()
            .map(|query| {
                let mut exact: Vec<(u64, f32)> =
                    items.iter().map(|(k, v)| (*k, dot(&query, v))).collect();
                exact.select_nth_unstable_by(10, |a, b| b.1.total_cmp(&a.1));
                let truth = exact[..10].iter().map(|(k, _)| *k).collect();
                (query, truth)
            })
            .collect();
        let floor = 0.97;
        let recall = graph_recall(&vectors, &queries);
        assert!(recall >= floor, "graph recall@10 {recall} < {floor}");
        vectors.index.read().unwrap().change_expansion_search(128);
        let narrow = graph_recall(&vectors, &queries);
        assert!(
            narrow < floor,
            "a beam of 128 reaches {narrow}: the data no longer tells beams apart"
        );
    }
}
