//! BM25 over the postings blocks (`blocks`), equal to the embedded
//! store's scores.
//!
//! The server sends each query term's blocks, in one statement per unit;
//! folio decodes and scores them here, as the embedded store does. Costs
//! avoided on a large library:
//!
//! - **Statistics** (chunk count, total length as the scorer reads
//!   lengths) are counted once per write generation and kept in memory; a
//!   term's document frequency is the length of its postings.
//! - **Common terms** are kept in memory until the next write, and scored
//!   only where they can matter (MaxScore): the rarest terms (up to
//!   [`ESSENTIAL_POSTINGS`] postings) are scored in full; a common term
//!   adds at most `weight × (k1 + 1)`, so it is scored only for keys whose
//!   partial score plus that bound can reach the k-th partial score. The
//!   answer is exact when the k-th final score exceeds what the common
//!   terms alone could give a key without any rare term; otherwise the
//!   common terms are scored in full as well.
//! - **Chunk lists** of a grouped search's ranked documents are kept in
//!   memory until the next write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use folio_core::{ChunkId, DocumentId, Filter};
use folio_lexical as analysis;
use folio_store::{Bm25, Hit, Result};
use tokio_postgres::Transaction;

use crate::filter::Query;
use crate::pool::{Statements, pg_err, wait};
use crate::row_err;

/// Postings scored in full before the remaining (common) terms are only
/// scored for candidates (small in tests, so their corpora take both
/// paths).
const ESSENTIAL_POSTINGS: i64 = if cfg!(test) { 40 } else { 30_000 };

/// Candidate look-ups (candidates × common terms) beyond which scoring the
/// common terms' postings in full is cheaper.
const MAX_LOOKUPS: usize = if cfg!(test) { 1_000_000 } else { 20_000 };

/// Answers the candidate path gave exactly, and term postings served from
/// the in-memory cache: how tests see which path a search took.
pub static CANDIDATE_ANSWERS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
pub static CACHED_POSTINGS_READ: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Cached document frequencies beyond this many are dropped.
const MAX_CACHED_TERMS: usize = 200_000;

/// Postings of terms at least this common are kept in memory (between
/// writes): reading them is most of an unfiltered search's cost, and
/// queries repeat common words (fewer in tests, so they take this path).
const CACHED_POSTINGS_MIN: usize = if cfg!(test) { 10 } else { 5_000 };

/// The memory the kept postings may take (16 bytes a posting).
const CACHED_POSTINGS_BYTES: usize = 64 << 20;

/// Chunks whose documents' chunk lists may be kept in memory (12 bytes
/// each).
const CACHED_CHUNKS: usize = 2_000_000;

/// Common terms whose postings a warm-up reads in one statement.
const WARM_BATCH: usize = 32;

/// What is ranked: chunks (keyed by chunk key) or whole documents (keyed
/// by document key), each with postings blocks of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    Chunk,
    Document,
}

impl Unit {
    /// The unit's code in `folio_term_blocks`.
    pub(crate) fn code(self) -> i16 {
        match self {
            Unit::Chunk => 0,
            Unit::Document => 1,
        }
    }

    fn rows(self) -> &'static str {
        match self {
            Unit::Chunk => "folio_chunks",
            Unit::Document => "folio_documents",
        }
    }
}

/// Per-library BM25 statistics of one write generation.
#[derive(Default)]
pub struct Statistics {
    generation: i64,
    /// (library, unit) → (entries, total length in terms)
    libraries: HashMap<(i64, Unit), (i64, i64)>,
    /// (library, unit, term) → entries containing the term
    frequencies: HashMap<(i64, Unit, String), i64>,
    /// (library, unit, term) → the term's postings, for common terms
    postings: HashMap<(i64, Unit, String), Arc<Postings>>,
    postings_bytes: usize,
    /// (library, document key) → its chunks' (key, index), in key order
    chunk_lists: HashMap<(i64, u64), ChunkList>,
    chunk_list_entries: usize,
}

/// A document's chunks as (key, index), in key order.
type ChunkList = Arc<[(i64, i32)]>;

/// One term's postings: chunk keys with term frequency and coded length.
#[derive(Default)]
struct Postings {
    keys: Vec<i64>,
    tfs: Vec<i32>,
    norms: Vec<i32>,
}

/// A query term with its BM25 weight (idf × count in the query) and its
/// postings.
struct Weighted {
    term: String,
    weight: f64,
    postings: Arc<Postings>,
}

impl Weighted {
    /// The term's document frequency: its postings.
    fn frequency(&self) -> i64 {
        self.postings.keys.len() as i64
    }
}

/// Hashes a key with one multiplication (Fibonacci hashing): scores are
/// kept per chunk or document key, thousands a search, where the default
/// hasher's rounds showed in profiles.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Scores by key.
type Scores = HashMap<i64, f64, std::hash::BuildHasherDefault<KeyHasher>>;

/// BM25 of one term occurrence, as the embedded store computes it.
struct Scorer {
    k1: f64,
    b: f64,
    avgdl: f64,
}

impl Scorer {
    fn score(&self, weight: f64, tf: i32, norm: i32) -> f64 {
        let tf = f64::from(tf);
        weight * tf * (self.k1 + 1.0)
            / (tf + self.k1 * (1.0 - self.b + self.b * f64::from(norm) / self.avgdl))
    }
}

/// One lexical search's request.
pub struct Search<'a> {
    pub cache: &'a Mutex<Statistics>,
    /// The statements prepared on the search's connection.
    pub statements: std::cell::RefCell<&'a mut Statements>,
    /// The write generation, read before the transaction took its snapshot
    /// (`generation_before`).
    pub generation: i64,
    pub library_id: i64,
    pub query: &'a str,
    pub filter: &'a Filter,
    pub k: usize,
    pub bm25: Bm25,
}

/// BM25 over the library's chunks that pass the filter, best first.
pub fn search(tx: &Transaction<'_>, s: &Search<'_>) -> Result<Vec<Hit>> {
    let ranked = rank(tx, s, Unit::Chunk)?;
    hits(tx, ranked)
}

/// BM25 over whole documents (see `Store::lexical_documents`): the `k`
/// best documents with a chunk that passes the filter, each as its best
/// such chunk by chunk BM25, carrying the document's score.
pub fn search_documents(tx: &Transaction<'_>, s: &Search<'_>) -> Result<Vec<Hit>> {
    let ranked = rank(tx, s, Unit::Document)?;
    if ranked.is_empty() {
        return Ok(Vec::new());
    }
    let mut best = best_chunks(tx, s, &ranked)?;
    Ok(ranked
        .into_iter()
        .filter_map(|(document, score)| best.remove(&document).map(|chunk| Hit { chunk, score }))
        .collect())
}

/// Each ranked document's best chunk among those `filter` allows: chunk
/// BM25 with the library's chunk statistics; ties and documents whose
/// chunks match no term go to the lowest chunk key (the first chunk).
fn best_chunks(
    tx: &Transaction<'_>,
    s: &Search<'_>,
    ranked: &[(u64, f32)],
) -> Result<HashMap<u64, ChunkId>> {
    let (cache, library_id, query, bm25) = (s.cache, s.library_id, s.query, s.bm25);
    let generation = s.generation;
    let lists = chunk_lists(tx, s, ranked)?;
    let mut scores = Scores::default();
    let counted =
        analysis::query_readings(query, &languages(tx, cache, generation, library_id, query)?);
    let (n, total, _) = statistics(tx, cache, generation, Unit::Chunk, library_id, &[])?;
    if n > 0 && !lists.is_empty() {
        let n = n as f64;
        let scorer = Scorer {
            k1: f64::from(bm25.k1),
            b: f64::from(bm25.b),
            avgdl: (total as f64 / n).max(1.0),
        };
        let read = postings(tx, s, Unit::Chunk, &counted)?;
        let mut keys: Vec<i64> = lists
            .values()
            .flat_map(|list| list.iter().map(|(key, _)| *key))
            .collect();
        keys.sort_unstable();
        for term in weigh(counted, read, n) {
            add(&term, Some(&keys), &scorer, &mut scores);
        }
    }
    let mut best = HashMap::with_capacity(lists.len());
    for (document, list) in lists {
        // In key order: a later chunk wins only with a higher score
        // (ranked in f32, as the embedded store ranks).
        let score = |key: i64| f64::from(scores.get(&key).copied().unwrap_or(0.0) as f32);
        let Some(&(mut choice)) = list.first() else {
            continue;
        };
        let mut top = score(choice.0);
        for &(key, index) in &list[1..] {
            let value = score(key);
            if value > top {
                (choice, top) = ((key, index), value);
            }
        }
        if let Some(id) = DocumentId::parse(&format!("{document:016x}")) {
            best.insert(document, ChunkId::new(&id, choice.1 as u32));
        }
    }
    Ok(best)
}

/// Each ranked document's chunks that `filter` allows, as (key, index) in
/// key order. Unfiltered lists are kept in memory until the next write (a
/// document's chunks change only when it is written again).
fn chunk_lists(
    tx: &Transaction<'_>,
    s: &Search<'_>,
    ranked: &[(u64, f32)],
) -> Result<HashMap<u64, ChunkList>> {
    let (library_id, filter) = (s.library_id, s.filter);
    // The ranked documents passed a filter on documents alone already.
    let kept = !crate::filter::has_chunk_conditions(filter);
    let mut lists = HashMap::with_capacity(ranked.len());
    let mut missing = Vec::new();
    {
        let cache = s.cache.lock().unwrap_or_else(|p| p.into_inner());
        let current = kept && cache.generation == s.generation;
        for (document, _) in ranked {
            match current
                .then(|| cache.chunk_lists.get(&(library_id, *document)))
                .flatten()
            {
                Some(list) => {
                    lists.insert(*document, list.clone());
                }
                None => missing.push(format!("{document:016x}")),
            }
        }
    }
    if missing.is_empty() {
        return Ok(lists);
    }
    // Document ids name their library: unfiltered, the chunks come from
    // the (document_id, idx) index alone, which carries their keys.
    let rows = if kept {
        let statement = s.statements.borrow_mut().prepared(
            tx,
            "SELECT c.key, c.document_id, c.idx FROM folio_chunks c WHERE c.document_id = ANY($1::text[])",
            "lexical search",
        )?;
        wait(tx.query(&statement, &[&missing]))
    } else {
        let mut q = Query::default();
        let documents = q.bind(missing);
        let clause = crate::filter::where_clause(filter, &mut q);
        let sql = format!(
            "SELECT c.key, c.document_id, c.idx FROM folio_chunks c JOIN folio_documents d ON d.id = c.document_id
             WHERE c.library_id = {library_id} AND c.document_id = ANY({documents}::text[]){clause}"
        );
        wait(tx.query(&sql, &q.refs()))
    }
    .map_err(pg_err("lexical search"))?;
    let read = chunk_lists_of(&rows)?;
    lists.extend(keep_chunk_lists(
        s.cache,
        kept.then_some(s.generation),
        library_id,
        read,
    ));
    Ok(lists)
}

/// Rows of (key, document id, index) as each document's chunk list.
fn chunk_lists_of(rows: &[tokio_postgres::Row]) -> Result<HashMap<u64, Vec<(i64, i32)>>> {
    let mut read: HashMap<u64, Vec<(i64, i32)>> = HashMap::new();
    for row in rows {
        let document: &str = row.try_get(1).map_err(row_err)?;
        if let Some(key) = analysis::document_key(document) {
            read.entry(key).or_default().push((
                row.try_get(0).map_err(row_err)?,
                row.try_get(2).map_err(row_err)?,
            ));
        }
    }
    Ok(read)
}

/// Each document's chunk list in key order, kept in memory (within its
/// bound) when read unfiltered in snapshot `generation` and the cache is
/// of that generation.
fn keep_chunk_lists(
    cache: &Mutex<Statistics>,
    generation: Option<i64>,
    library_id: i64,
    read: HashMap<u64, Vec<(i64, i32)>>,
) -> HashMap<u64, ChunkList> {
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    let keep = generation.is_some_and(|g| cache.generation == g);
    read.into_iter()
        .map(|(document, mut list)| {
            list.sort_unstable();
            let list: ChunkList = list.into();
            if keep && cache.chunk_list_entries + list.len() <= CACHED_CHUNKS {
                cache.chunk_list_entries += list.len();
                cache
                    .chunk_lists
                    .insert((library_id, document), list.clone());
            }
            (document, list)
        })
        .collect()
}

/// Reads ahead, in snapshot `generation`, what a library's first searches
/// would read and keeps it as they would: its statistics and languages,
/// its most common terms' postings (documents' first, most common first,
/// as many as the cache's bound takes) and its documents' chunk lists
/// (when they all fit). Searches then answer from memory from the first.
pub fn warm(
    tx: &Transaction<'_>,
    cache: &Mutex<Statistics>,
    statements: &mut Statements,
    generation: i64,
    library_id: i64,
) -> Result<()> {
    chunk_languages(tx, cache, generation, library_id)?;
    let mut chunks = 0;
    for unit in [Unit::Document, Unit::Chunk] {
        let (entries, _, _) = statistics(tx, cache, generation, unit, library_id, &[])?;
        if unit == Unit::Chunk {
            chunks = entries;
        }
        let common = wait(tx.query(
            "SELECT term, sum(entries)::bigint FROM folio_term_blocks
             WHERE library_id = $1 AND unit = $2 GROUP BY term HAVING sum(entries) >= $3
             ORDER BY 2 DESC, 1",
            &[&library_id, &unit.code(), &(CACHED_POSTINGS_MIN as i64)],
        ))
        .map_err(pg_err("warming the lexical index"))?;
        // Those that fit in what the bound leaves, a statement per batch.
        let mut room = {
            let cache = cache.lock().unwrap_or_else(|p| p.into_inner());
            CACHED_POSTINGS_BYTES.saturating_sub(cache.postings_bytes)
        };
        let mut fitting = Vec::new();
        for row in &common {
            let bytes = row.try_get::<_, i64>(1).map_err(row_err)? as usize * 16;
            if bytes <= room {
                room -= bytes;
                fitting.push(row.try_get::<_, &str>(0).map_err(row_err)?);
            }
        }
        for batch in fitting.chunks(WARM_BATCH) {
            let read = read_postings(tx, statements, library_id, unit, batch)?;
            keep_postings(cache, generation, library_id, unit, read);
        }
    }
    let room = {
        let cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        CACHED_CHUNKS.saturating_sub(cache.chunk_list_entries)
    };
    if chunks as usize <= room {
        let rows = wait(tx.query(
            "SELECT c.key, c.document_id, c.idx FROM folio_chunks c WHERE c.library_id = $1",
            &[&library_id],
        ))
        .map_err(pg_err("warming the lexical index"))?;
        keep_chunk_lists(cache, Some(generation), library_id, chunk_lists_of(&rows)?);
    }
    Ok(())
}

/// The languages a query is analysed in (`analysis::query_languages`),
/// from the chunks of each language (`chunk_languages`).
pub fn languages(
    tx: &Transaction<'_>,
    cache: &Mutex<Statistics>,
    generation: i64,
    library_id: i64,
    query: &str,
) -> Result<Vec<analysis::Language>> {
    let chunks = chunk_languages(tx, cache, generation, library_id)?;
    Ok(analysis::query_languages(query, &chunks))
}

/// The chunks of each language a library holds: the document frequencies
/// of the language markers, cached per generation as other terms' are.
pub fn chunk_languages(
    tx: &Transaction<'_>,
    cache: &Mutex<Statistics>,
    generation: i64,
    library_id: i64,
) -> Result<Vec<(analysis::Language, u64)>> {
    let markers: Vec<String> = analysis::Language::ALL
        .into_iter()
        .map(analysis::language_marker)
        .collect();
    let (_, _, frequencies) = statistics(tx, cache, generation, Unit::Chunk, library_id, &markers)?;
    Ok(analysis::Language::ALL
        .into_iter()
        .zip(frequencies)
        .map(|(language, n)| (language, n.max(0) as u64))
        .collect())
}

/// Query terms with their BM25 weights (idf × count) and postings, those
/// the library holds; a word's readings in several languages are weighed
/// by the sum of their document frequencies
/// (`QueryTerms::shared_frequencies`).
fn weigh(readings: analysis::QueryTerms, postings: Vec<Arc<Postings>>, n: f64) -> Vec<Weighted> {
    let own: Vec<u64> = postings.iter().map(|p| p.keys.len() as u64).collect();
    let shared = readings.shared_frequencies(&own);
    readings
        .terms
        .into_iter()
        .zip(postings)
        .zip(shared)
        .filter(|((_, postings), _)| !postings.keys.is_empty())
        .map(|(((term, count), postings), shared)| {
            let shared = (shared as f64).min(n);
            Weighted {
                weight: f64::from(count) * (1.0 + (n - shared + 0.5) / (shared + 0.5)).ln(),
                term,
                postings,
            }
        })
        .collect()
}

/// The `k` best (key, score) of `unit`s that pass the filter, best first.
fn rank(tx: &Transaction<'_>, s: &Search<'_>, unit: Unit) -> Result<Vec<(u64, f32)>> {
    let (cache, library_id, query, filter, k, bm25) =
        (s.cache, s.library_id, s.query, s.filter, s.k, s.bm25);
    if k == 0 {
        return Ok(Vec::new());
    }
    let counted = analysis::query_readings(
        query,
        &languages(tx, cache, s.generation, library_id, query)?,
    );
    if counted.terms.is_empty() {
        return Ok(Vec::new());
    }
    let (n, total, _) = statistics(tx, cache, s.generation, unit, library_id, &[])?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let n = n as f64;
    let scorer = Scorer {
        k1: f64::from(bm25.k1),
        b: f64::from(bm25.b),
        avgdl: (total as f64 / n).max(1.0),
    };
    // A filter is its keys, read once: postings are then read (or found
    // in memory) as without a filter and kept to them.
    let allowed = allowed_keys(tx, unit, library_id, filter)?;
    if allowed.as_ref().is_some_and(|keys| keys.is_empty()) {
        return Ok(Vec::new());
    }
    let within = allowed.as_deref();
    let read = postings(tx, s, unit, &counted)?;
    let mut weighted = weigh(counted, read, n);
    if weighted.is_empty() {
        return Ok(Vec::new());
    }
    weighted.sort_by(|a, b| a.frequency().cmp(&b.frequency()).then(a.term.cmp(&b.term)));
    let mut essential = 0;
    let mut postings = 0;
    for term in &weighted {
        if essential > 0 && postings + term.frequency() > ESSENTIAL_POSTINGS {
            break;
        }
        postings += term.frequency();
        essential += 1;
    }
    let (rare, common) = weighted.split_at(essential);
    let mut scores = Scores::default();
    for term in rare {
        add(term, within, &scorer, &mut scores);
    }
    if !common.is_empty() {
        let bound: f64 = common.iter().map(|t| t.weight * (scorer.k1 + 1.0)).sum();
        let floor = kth(&scores, k).unwrap_or(0.0);
        let mut candidates: Vec<i64> = scores
            .iter()
            .filter(|(_, s)| **s + bound >= floor)
            .map(|(key, _)| *key)
            .collect();
        if candidates.len() * common.len() <= MAX_LOOKUPS {
            candidates.sort_unstable();
            let mut full: Scores = candidates.iter().map(|key| (*key, scores[key])).collect();
            for term in common {
                add(term, Some(&candidates), &scorer, &mut full);
            }
            if full.len() >= k && kth(&full, k).is_some_and(|kth| kth > bound) {
                CANDIDATE_ANSWERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Ok(top(full, k));
            }
        }
        for term in common {
            add(term, within, &scorer, &mut scores);
        }
    }
    Ok(top(scores, k))
}

/// The keys of the `unit`s a filter allows, sorted (None without a
/// filter): chunks that pass it, or documents with a chunk that does (all
/// of a filter on documents alone).
fn allowed_keys(
    tx: &Transaction<'_>,
    unit: Unit,
    library_id: i64,
    filter: &Filter,
) -> Result<Option<Vec<i64>>> {
    if filter.is_empty() {
        return Ok(None);
    }
    let mut q = Query::default();
    let clause = crate::filter::where_clause(filter, &mut q);
    let sql = match (unit, crate::filter::has_chunk_conditions(filter)) {
        (Unit::Document, false) => format!(
            "SELECT ('x' || d.id)::bit(64)::bigint FROM folio_documents d
             WHERE d.library_id = {library_id}{clause}"
        ),
        (Unit::Document, true) => format!(
            "SELECT DISTINCT ('x' || c.document_id)::bit(64)::bigint
             FROM folio_chunks c JOIN folio_documents d ON d.id = c.document_id
             WHERE c.library_id = {library_id}{clause}"
        ),
        (Unit::Chunk, _) => format!(
            "SELECT c.key FROM folio_chunks c JOIN folio_documents d ON d.id = c.document_id
             WHERE c.library_id = {library_id}{clause}"
        ),
    };
    let mut keys = wait(tx.query(&sql, &q.refs()))
        .map_err(pg_err("lexical search"))?
        .iter()
        .map(|row| row.try_get::<_, i64>(0).map_err(row_err))
        .collect::<Result<Vec<_>>>()?;
    keys.sort_unstable();
    Ok(Some(keys))
}

/// Adds a term's BM25 contributions to `scores`: over all its postings,
/// or only those of the `only` keys (sorted).
fn add(term: &Weighted, only: Option<&[i64]>, scorer: &Scorer, scores: &mut Scores) {
    let postings = &term.postings;
    let mut score = |i: usize| {
        *scores.entry(postings.keys[i]).or_insert(0.0) +=
            scorer.score(term.weight, postings.tfs[i], postings.norms[i]);
    };
    match only {
        None => (0..postings.keys.len()).for_each(&mut score),
        // Both sorted: each key is looked for after the last one found.
        Some(keys) => {
            let mut from = 0;
            for key in keys {
                from += postings.keys[from..].partition_point(|k| k < key);
                if postings.keys.get(from) == Some(key) {
                    score(from);
                }
            }
        }
    }
}

/// Each query term's postings (whole, in key order), in the order of
/// `readings`: from memory, or the blocks of those not there read in one
/// statement. Their counts are the terms' document frequencies, kept with
/// the statistics; a common term's postings are kept in memory until the
/// next write.
fn postings(
    tx: &Transaction<'_>,
    s: &Search<'_>,
    unit: Unit,
    readings: &analysis::QueryTerms,
) -> Result<Vec<Arc<Postings>>> {
    let (cache, generation, library_id) = (s.cache, s.generation, s.library_id);
    let terms: Vec<&str> = readings
        .terms
        .iter()
        .map(|(term, _)| term.as_str())
        .collect();
    let mut found: HashMap<String, Arc<Postings>> = HashMap::new();
    let mut missing = Vec::new();
    {
        let cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        let current = cache.generation == generation;
        for term in &terms {
            let kept = current
                .then(|| cache.postings.get(&(library_id, unit, term.to_string())))
                .flatten();
            match kept {
                Some(postings) => {
                    CACHED_POSTINGS_READ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    found.insert(term.to_string(), postings.clone());
                }
                None => missing.push(*term),
            }
        }
    }
    if !missing.is_empty() {
        let read = read_postings(
            tx,
            &mut s.statements.borrow_mut(),
            library_id,
            unit,
            &missing,
        )?;
        found.extend(keep_postings(cache, generation, library_id, unit, read));
    }
    Ok(terms.iter().map(|term| found[*term].clone()).collect())
}

/// The postings of `terms` (whole, in key order), read in one statement;
/// a term the library does not hold has none.
fn read_postings(
    tx: &Transaction<'_>,
    statements: &mut Statements,
    library_id: i64,
    unit: Unit,
    terms: &[&str],
) -> Result<HashMap<String, Postings>> {
    let statement = statements.prepared(
        tx,
        "SELECT term, postings FROM folio_term_blocks
         WHERE library_id = $1 AND unit = $2 AND term = ANY($3) ORDER BY term, block",
        "lexical search",
    )?;
    let rows = wait(tx.query(&statement, &[&library_id, &unit.code(), &terms]))
        .map_err(pg_err("lexical search"))?;
    let mut read: HashMap<String, Postings> = terms
        .iter()
        .map(|term| (term.to_string(), Postings::default()))
        .collect();
    let mut rows = rows.iter().peekable();
    while let Some(first) = rows.peek() {
        let term: String = first.try_get(0).map_err(row_err)?;
        let mut postings = Postings::default();
        while let Some(row) = rows.next_if(|row| row.get::<_, &str>(0) == term) {
            crate::blocks::decode(row.try_get(1).map_err(row_err)?, |(key, tf, norm)| {
                postings.keys.push(key);
                postings.tfs.push(tf);
                postings.norms.push(norm);
            })?;
        }
        read.insert(term, sorted(postings));
    }
    Ok(read)
}

/// Records the frequencies of postings read in snapshot `generation`, and
/// keeps a common term's postings in memory (while the cache is of that
/// generation and within its bound).
fn keep_postings(
    cache: &Mutex<Statistics>,
    generation: i64,
    library_id: i64,
    unit: Unit,
    read: HashMap<String, Postings>,
) -> HashMap<String, Arc<Postings>> {
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    let current = cache.generation == generation;
    read.into_iter()
        .map(|(term, postings)| {
            let postings = Arc::new(postings);
            if current {
                let count = postings.keys.len();
                cache
                    .frequencies
                    .insert((library_id, unit, term.clone()), count as i64);
                let bytes = count * 16;
                if count >= CACHED_POSTINGS_MIN
                    && cache.postings_bytes + bytes <= CACHED_POSTINGS_BYTES
                {
                    cache.postings_bytes += bytes;
                    cache
                        .postings
                        .insert((library_id, unit, term.clone()), postings.clone());
                }
            }
            (term, postings)
        })
        .collect()
}

/// Postings in key order (a chunk term's blocks are; a document term's
/// blocks follow when documents came, not their keys).
fn sorted(postings: Postings) -> Postings {
    if postings.keys.is_sorted() {
        return postings;
    }
    let mut order: Vec<usize> = (0..postings.keys.len()).collect();
    order.sort_unstable_by_key(|&i| postings.keys[i]);
    Postings {
        keys: order.iter().map(|&i| postings.keys[i]).collect(),
        tfs: order.iter().map(|&i| postings.tfs[i]).collect(),
        norms: order.iter().map(|&i| postings.norms[i]).collect(),
    }
}

/// The k-th best score, if there are k.
fn kth(scores: &Scores, k: usize) -> Option<f64> {
    if scores.len() < k || k == 0 {
        return None;
    }
    let mut values: Vec<f64> = scores.values().copied().collect();
    let (_, kth, _) = values.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    Some(*kth)
}

/// The `k` best (chunk key, score), best first, ties by key, ranked as the
/// embedded store ranks (in f32).
fn top(scores: Scores, k: usize) -> Vec<(u64, f32)> {
    analysis::top_k(
        scores
            .into_iter()
            .map(|(key, score)| (key as u64, score as f32))
            .collect(),
        k,
    )
}

/// The chunk ids of the ranked chunk keys.
fn hits(tx: &Transaction<'_>, ranked: Vec<(u64, f32)>) -> Result<Vec<Hit>> {
    if ranked.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<i64> = ranked.iter().map(|(key, _)| *key as i64).collect();
    let rows = wait(tx.query(
        "SELECT key, document_id, idx FROM folio_chunks WHERE key = ANY($1)",
        &[&keys],
    ))
    .map_err(pg_err("lexical search"))?;
    let mut ids = HashMap::with_capacity(rows.len());
    for row in rows {
        let key = row.try_get::<_, i64>(0).map_err(row_err)? as u64;
        let document: String = row.try_get(1).map_err(row_err)?;
        let index: i32 = row.try_get(2).map_err(row_err)?;
        if let Some(document) = DocumentId::parse(&document) {
            ids.insert(key, ChunkId::new(&document, index as u32));
        }
    }
    Ok(ranked
        .into_iter()
        .filter_map(|(key, score)| ids.remove(&key).map(|chunk| Hit { chunk, score }))
        .collect())
}

/// The library's count of `unit`s, their total length and each term's
/// frequency among them, from the cache when nothing was written since
/// they were counted. `generation` must have been read before `tx` took
/// its snapshot: a sequence is read outside every snapshot, so read inside
/// the transaction it can already show a commit's second bump while the
/// snapshot predates that commit, and counts without the commit would be
/// kept under the generation that follows it, stale until the next write.
/// (A write bumps the generation before and after its commit, so a count
/// read before a commit is kept only until that commit's second bump.)
fn statistics(
    tx: &Transaction<'_>,
    cache: &Mutex<Statistics>,
    generation: i64,
    unit: Unit,
    library_id: i64,
    terms: &[String],
) -> Result<(i64, i64, Vec<i64>)> {
    let (library, mut known, missing) = {
        let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.generation != generation || cache.frequencies.len() > MAX_CACHED_TERMS {
            *cache = Statistics {
                generation,
                ..Default::default()
            };
        }
        let mut known = HashMap::new();
        let mut missing = Vec::new();
        for term in terms {
            match cache.frequencies.get(&(library_id, unit, term.clone())) {
                Some(&df) => {
                    known.insert(term.clone(), df);
                }
                None => missing.push(term.clone()),
            }
        }
        (
            cache.libraries.get(&(library_id, unit)).copied(),
            known,
            missing,
        )
    };
    let library = match library {
        Some(counts) => counts,
        None => {
            // Lengths as the scorer reads them (`analysis::scored_length`,
            // tantivy's one byte, rounded down), and their average over
            // the same rounded lengths, as the embedded store counts.
            let rows = wait(tx.query(
                &format!(
                    "SELECT terms, count(*) FROM {} WHERE library_id = $1 GROUP BY terms",
                    unit.rows()
                ),
                &[&library_id],
            ))
            .map_err(pg_err("lexical search"))?;
            rows.iter().fold((0i64, 0i64), |(n, total), row| {
                let (terms, count): (i32, i64) = (row.get(0), row.get(1));
                let length = analysis::scored_length(terms.max(0) as usize);
                (n + count, total + count * i64::from(length))
            })
        }
    };
    if !missing.is_empty() {
        for term in &missing {
            known.insert(term.clone(), 0);
        }
        // Each block counts its postings: a few rows a term.
        for row in wait(tx.query(
            "SELECT term, sum(entries)::bigint FROM folio_term_blocks
             WHERE library_id = $1 AND unit = $2 AND term = ANY($3) GROUP BY term",
            &[&library_id, &unit.code(), &missing],
        ))
        .map_err(pg_err("lexical search"))?
        {
            known.insert(row.get(0), row.get(1));
        }
    }
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.generation == generation {
        cache.libraries.insert((library_id, unit), library);
        for term in &missing {
            cache
                .frequencies
                .insert((library_id, unit, term.clone()), known[term]);
        }
    }
    let frequencies = terms.iter().map(|term| known[term]).collect();
    Ok((library.0, library.1, frequencies))
}
