//! BM25 over the postings table, equal to the embedded store's scores.
//!
//! Two costs dominate on a large library, and each has its remedy here:
//!
//! - **Statistics** (chunk count, total length, each term's document
//!   frequency) are counted once per write generation and kept in memory:
//!   a common term's frequency is a count over most of the library.
//! - **Common terms** are scored only where they can matter (MaxScore):
//!   the rarest terms (up to [`ESSENTIAL_POSTINGS`] postings) are
//!   aggregated in full; a common term adds at most `weight × (k1 + 1)`, so
//!   it is looked up only for chunks whose partial score plus that bound
//!   can reach the k-th partial score. The answer is exact when the k-th
//!   final score exceeds what the common terms alone could give a chunk
//!   without any rare term; otherwise every term is aggregated in full.

use std::collections::HashMap;
use std::sync::Mutex;

use folio_core::Filter;
use folio_store::{Bm25, Hit, Result};
use folio_store_embedded::analysis;
use tokio_postgres::Transaction;

use crate::filter::Query;
use crate::pool::{pg_err, wait};
use crate::{PostgresStore, hits_from};

/// Postings aggregated in full before the remaining (common) terms are
/// only looked up for candidates (small in tests, so their corpora take
/// both paths).
const ESSENTIAL_POSTINGS: i64 = if cfg!(test) { 40 } else { 30_000 };

/// Answers the candidate path gave exactly (tests check both paths run).
#[cfg(test)]
pub static CANDIDATE_ANSWERS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Cached document frequencies beyond this many are dropped.
const MAX_CACHED_TERMS: usize = 200_000;

/// Per-library BM25 statistics of one write generation.
#[derive(Default)]
pub struct Statistics {
    generation: i64,
    /// library → (chunks, total length in terms)
    libraries: HashMap<i64, (i64, i64)>,
    /// (library, term) → chunks containing the term
    frequencies: HashMap<(i64, String), i64>,
}

/// A query term with its BM25 weight (idf × count in the query).
struct Weighted {
    term: String,
    weight: f64,
    frequency: i64,
}

pub fn search(
    tx: &Transaction<'_>,
    cache: &Mutex<Statistics>,
    library_id: i64,
    query: &str,
    filter: &Filter,
    k: usize,
    bm25: Bm25,
) -> Result<Vec<Hit>> {
    let counted = analysis::query_terms(query);
    if counted.is_empty() || k == 0 {
        return Ok(Vec::new());
    }
    let terms: Vec<String> = counted.iter().map(|(term, _)| term.clone()).collect();
    let (n, total, frequencies) = statistics(tx, cache, library_id, &terms)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let n = n as f64;
    let avgdl = (total as f64 / n).max(1.0);
    let mut weighted: Vec<Weighted> = counted
        .into_iter()
        .zip(frequencies)
        .filter(|(_, df)| *df > 0)
        .map(|((term, count), df)| Weighted {
            weight: f64::from(count) * (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln(),
            term,
            frequency: df,
        })
        .collect();
    if weighted.is_empty() {
        return Ok(Vec::new());
    }
    weighted.sort_by(|a, b| a.frequency.cmp(&b.frequency).then(a.term.cmp(&b.term)));
    let mut essential = 0;
    let mut postings = 0;
    for term in &weighted {
        if essential > 0 && postings + term.frequency > ESSENTIAL_POSTINGS {
            break;
        }
        postings += term.frequency;
        essential += 1;
    }
    let k1 = f64::from(bm25.k1);
    if essential < weighted.len() {
        let bound: f64 = weighted[essential..]
            .iter()
            .map(|t| t.weight * (k1 + 1.0))
            .sum();
        let rows = scored(
            tx, library_id, &weighted, essential, bound, filter, k, bm25, avgdl,
        )?;
        let exact = rows.len() == k
            && rows
                .last()
                .and_then(|row| row.try_get::<_, f64>(2).ok())
                .is_some_and(|kth| kth > bound);
        if exact {
            #[cfg(test)]
            CANDIDATE_ANSWERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return hits_from(rows);
        }
    }
    let rows = scored(
        tx,
        library_id,
        &weighted,
        weighted.len(),
        0.0,
        filter,
        k,
        bm25,
        avgdl,
    )?;
    hits_from(rows)
}

/// The top `k` chunks: the first `essential` terms aggregated over all
/// their postings, the others looked up for the chunks within `bound` of
/// the k-th partial score.
#[allow(clippy::too_many_arguments)]
fn scored(
    tx: &Transaction<'_>,
    library_id: i64,
    terms: &[Weighted],
    essential: usize,
    bound: f64,
    filter: &Filter,
    k: usize,
    bm25: Bm25,
    avgdl: f64,
) -> Result<Vec<tokio_postgres::Row>> {
    let mut q = Query::default();
    let t = q.bind(terms.iter().map(|w| w.term.clone()).collect::<Vec<_>>());
    let w = q.bind(terms.iter().map(|w| w.weight).collect::<Vec<_>>());
    let e = q.bind((0..terms.len()).map(|i| i < essential).collect::<Vec<_>>());
    let k1 = format!("{}::float8", q.bind(f64::from(bm25.k1)));
    let b = format!("{}::float8", q.bind(f64::from(bm25.b)));
    let avg = format!("{}::float8", q.bind(avgdl));
    let bound = format!("{}::float8", q.bind(bound));
    let floor = q.bind(k as i64 - 1);
    let limit = q.bind(k as i64);
    let restrict = PostgresStore::filtered_keys(library_id, filter, &mut q, "p.chunk_key");
    let bm25 =
        format!("w.weight * p.tf * ({k1} + 1) / (p.tf + {k1} * (1 - {b} + {b} * p.norm / {avg}))");
    let sql = format!(
        "WITH w AS (SELECT * FROM unnest({t}::text[], {w}::float8[], {e}::bool[]) AS w(term, weight, essential)),
         partial AS (
            SELECT p.chunk_key, sum({bm25}) AS score
            FROM w JOIN folio_postings p ON p.library_id = {library_id} AND p.term = w.term
            WHERE w.essential{restrict}
            GROUP BY p.chunk_key),
         floor AS (SELECT COALESCE((SELECT score FROM partial ORDER BY score DESC OFFSET {floor} LIMIT 1), 0) AS s),
         scored AS (
            SELECT c.chunk_key, c.score + COALESCE((
                SELECT sum({bm25}) FROM w JOIN folio_postings p
                  ON p.library_id = {library_id} AND p.term = w.term AND p.chunk_key = c.chunk_key
                WHERE NOT w.essential), 0) AS score
            FROM partial c, floor WHERE c.score + {bound} >= floor.s)
         SELECT ch.document_id, ch.idx, s.score
         FROM (SELECT chunk_key, score FROM scored ORDER BY score DESC, chunk_key LIMIT {limit}) s
         JOIN folio_chunks ch ON ch.key = s.chunk_key
         ORDER BY s.score DESC, s.chunk_key"
    );
    wait(tx.query(&sql, &q.refs())).map_err(pg_err("lexical search"))
}

/// The library's chunk count, total length and each term's document
/// frequency, from the cache when nothing was written since they were
/// counted. (A write bumps the generation before and after its commit, so
/// a count can lag a commit only until that commit's second bump.)
fn statistics(
    tx: &Transaction<'_>,
    cache: &Mutex<Statistics>,
    library_id: i64,
    terms: &[String],
) -> Result<(i64, i64, Vec<i64>)> {
    let generation: i64 = wait(tx.query_one("SELECT last_value FROM folio_generation", &[]))
        .map_err(pg_err("lexical search"))?
        .get(0);
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
            match cache.frequencies.get(&(library_id, term.clone())) {
                Some(&df) => {
                    known.insert(term.clone(), df);
                }
                None => missing.push(term.clone()),
            }
        }
        (cache.libraries.get(&library_id).copied(), known, missing)
    };
    let library = match library {
        Some(counts) => counts,
        None => {
            let row = wait(tx.query_one(
                "SELECT count(*), COALESCE(sum(terms), 0)::bigint FROM folio_chunks WHERE library_id = $1",
                &[&library_id],
            ))
            .map_err(pg_err("lexical search"))?;
            (row.get(0), row.get(1))
        }
    };
    if !missing.is_empty() {
        for term in &missing {
            known.insert(term.clone(), 0);
        }
        for row in wait(tx.query(
            "SELECT term, count(*) FROM folio_postings WHERE library_id = $1 AND term = ANY($2) GROUP BY term",
            &[&library_id, &missing],
        ))
        .map_err(pg_err("lexical search"))?
        {
            known.insert(row.get(0), row.get(1));
        }
    }
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.generation == generation {
        cache.libraries.insert(library_id, library);
        for term in &missing {
            cache
                .frequencies
                .insert((library_id, term.clone()), known[term]);
        }
    }
    let frequencies = terms.iter().map(|term| known[term]).collect();
    Ok((library.0, library.1, frequencies))
}
