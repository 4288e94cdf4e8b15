//! The lexical index: tantivy holds the postings (English analyser: lower
//! case, ASCII folding, stop words, Snowball stemming); folio scores them with
//! its own BM25 so k1 and b are parameters and the filter's allowed set is
//! honoured while scoring, not after.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashSet};
use std::path::Path;
use std::sync::Mutex;

use folio_store::{Bm25, StoreError};
use tantivy::postings::Postings;
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, BoostQuery, EnableScoring, Occur, Query, TermQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RegexTokenizer, RemoveLongFilter, Stemmer,
    StopWordFilter, TextAnalyzer,
};
use tantivy::{
    DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TERMINATED, TantivyDocument,
    Term,
};

const ANALYZER: &str = "folio_en";

/// The version of `analyzer`. Postings made by another version are
/// rebuilt from the source of truth before they are searched: the embedded
/// store keeps each version's index in a folder of its own
/// (`lexical_dir`), the PostgreSQL backend re-analyses in a migration.
/// Version 1 split on every non-alphanumeric character, kept one-character
/// tokens and removed Snowball's 174 English stop words.
pub const ANALYZER_VERSION: u32 = 2;

/// Lucene's English stop words (also Elasticsearch's and bm25s's default).
/// Snowball's longer list removed words long natural-language requests
/// carry meaning in ("about", "between", "against", "during", "most"),
/// and no reference BM25 scores with it.
pub const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// A token is a run of two or more word characters (Unicode letters,
/// digits, underscore), as in Lucene-style reference implementations
/// (bm25s, scikit-learn): one-character runs ("s" of "it's", "e.g.",
/// list markers) carry no meaning on their own.
const TOKEN: &str = r"\w\w+";

/// The English analyser used for documents and queries alike: tokens of
/// two or more word characters, at most 40 bytes, lower case, ASCII
/// folding, Lucene's stop words, Snowball's English stemmer.
/// Built once per process (the pattern is compiled once); each caller gets
/// a cheap clone.
pub fn analyzer() -> TextAnalyzer {
    static ANALYZER: std::sync::OnceLock<TextAnalyzer> = std::sync::OnceLock::new();
    ANALYZER
        .get_or_init(|| {
            // The pattern is a constant that compiles; a failure is a bug.
            let tokenizer = RegexTokenizer::new(TOKEN).expect("the token pattern compiles");
            TextAnalyzer::builder(tokenizer)
                .filter(RemoveLongFilter::limit(40))
                .filter(LowerCaser)
                .filter(AsciiFoldingFilter)
                .filter(StopWordFilter::remove(
                    STOP_WORDS.iter().map(|w| w.to_string()),
                ))
                .filter(Stemmer::new(Language::English))
                .build()
        })
        .clone()
}

/// Where a library's lexical index of the current analyser lives inside
/// its index folder.
pub fn lexical_dir(index_dir: &Path) -> std::path::PathBuf {
    index_dir.join(format!("lexical-v{ANALYZER_VERSION}"))
}

/// Folders of earlier analysers' indexes, to remove once the current one
/// is built.
pub fn stale_lexical_dirs(index_dir: &Path) -> Vec<std::path::PathBuf> {
    let mut stale = vec![index_dir.join("lexical")];
    stale.extend((2..ANALYZER_VERSION).map(|v| index_dir.join(format!("lexical-v{v}"))));
    stale.retain(|d| d.exists());
    stale
}

/// The analysed terms of `text`, in order, repeats included: what the
/// lexical index holds for a chunk (another backend's BM25 postings).
pub fn analyze(text: &str) -> Vec<String> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut terms = Vec::new();
    while stream.advance() {
        terms.push(stream.token().text.clone());
    }
    terms
}

/// The analysed terms of a query, each once in order of first appearance,
/// with how often the query has it: BM25 counts a repeated query term as
/// often as it occurs (as Lucene and bm25s do), which long, natural-language
/// queries depend on.
pub fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut terms: Vec<(String, f32)> = Vec::new();
    let mut position: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for term in analyze(query) {
        match position.get(&term) {
            Some(&i) => terms[i].1 += 1.0,
            None => {
                position.insert(term.clone(), terms.len());
                terms.push((term, 1.0));
            }
        }
    }
    terms
}

/// A chunk's length as the lexical index scores it: tantivy stores field
/// lengths in one byte, exact up to 40 and coarser above.
pub fn scored_length(terms: usize) -> u32 {
    tantivy::fieldnorm::FieldNormReader::constant(1, terms.min(u32::MAX as usize) as u32)
        .fieldnorm(0)
}

#[derive(Clone, Copy)]
struct Fields {
    key: Field,
    document: Field,
    text: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let key = builder.add_u64_field("key", INDEXED | FAST);
    let document = builder.add_text_field("document", STRING);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(ANALYZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    let text = builder.add_text_field(
        "text",
        TextOptions::default().set_indexing_options(indexing),
    );
    (
        builder.build(),
        Fields {
            key,
            document,
            text,
        },
    )
}

fn err(context: &str) -> impl Fn(tantivy::TantivyError) -> StoreError + '_ {
    move |e| StoreError::io(context, e)
}

type WriterGuard<'a> = std::sync::MutexGuard<'a, Option<IndexWriter>>;

/// Documents to re-index: each document id with its current chunks (key,
/// embedded text); a deleted document comes with none.
pub type LexicalBatch = Vec<(String, Vec<(u64, String)>)>;

/// One library's lexical index.
pub struct Lexical {
    index: Index,
    reader: IndexReader,
    /// Present while this process holds the data directory's write lock.
    writer: Mutex<Option<IndexWriter>>,
    fields: Fields,
}

impl Lexical {
    /// Opens (or, with `writable`, creates) the index in `dir`. A writable
    /// index holds tantivy's writer; a read-only one only reads commits.
    pub fn open(dir: &Path, writable: bool) -> Result<Option<Self>, StoreError> {
        let (schema, fields) = schema();
        let exists = dir.join("meta.json").exists();
        if !exists && !writable {
            return Ok(None);
        }
        let index = if exists {
            Index::open_in_dir(dir).map_err(err("opening the lexical index"))?
        } else {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::io(dir.display().to_string(), e))?;
            Index::create_in_dir(dir, schema).map_err(err("creating the lexical index"))?
        };
        index.tokenizers().register(ANALYZER, analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(err("opening the lexical reader"))?;
        let lexical = Lexical {
            index,
            reader,
            writer: Mutex::new(None),
            fields,
        };
        if writable {
            lexical.ensure_writer()?;
        }
        Ok(Some(lexical))
    }

    /// Opens tantivy's writer unless it is open: call only while holding the
    /// data directory's write lock.
    pub fn ensure_writer(&self) -> Result<(), StoreError> {
        let mut slot = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let writer: IndexWriter = self
                .index
                .writer_with_num_threads(1, 50_000_000)
                .map_err(err("opening the lexical writer"))?;
            // A writer killed between writing a segment's delete file and
            // committing `meta.json` leaves that file behind under the name
            // the next commit with the same opstamp will want (opstamps
            // restart from the last commit), and that commit then fails with
            // "file already exists". Collect everything the committed
            // metadata does not reference before the first operation.
            writer
                .garbage_collect_files()
                .wait()
                .map_err(err("collecting a dead writer's lexical files"))?;
            *slot = Some(writer);
        }
        Ok(())
    }

    /// Closes the writer, letting its background merges finish first: a
    /// merge that outlived the writer (and the write lock) would
    /// garbage-collect files by a view of the index that the next writer
    /// has already changed. Call before releasing the write lock.
    pub fn close_writer(&self) {
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(writer) = writer
            && let Err(e) = writer.wait_merging_threads()
        {
            tracing::warn!(error = %e, "a lexical merge failed on close; the next writer collects its files");
        }
    }
    /// The change-log sequence number the last commit covers.
    pub fn watermark(&self) -> Result<i64, StoreError> {
        let metas = self
            .index
            .load_metas()
            .map_err(err("reading lexical metadata"))?;
        Ok(metas
            .payload
            .as_deref()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0))
    }

    /// Sees the latest commit (another process's, in read-only mode).
    pub fn reload(&self) -> Result<(), StoreError> {
        self.reader
            .reload()
            .map_err(err("reloading the lexical index"))
    }

    fn writer(&self) -> Result<WriterGuard<'_>, StoreError> {
        // A poisoned lock means a panic mid-update; tantivy discards
        // uncommitted work on rollback, so continuing is safe.
        let guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            return Err(StoreError::io(
                "lexical index",
                "not writable in this process",
            ));
        }
        Ok(guard)
    }

    /// Stages the replacement of `documents`' postings: each document's old
    /// chunks are deleted and its current `chunks` (key, text) added.
    fn stage(
        writer: &IndexWriter,
        fields: Fields,
        documents: &[(String, Vec<(u64, String)>)],
    ) -> Result<(), StoreError> {
        for (document, chunks) in documents {
            writer.delete_term(Term::from_field_text(fields.document, document));
            for (key, text) in chunks {
                let mut doc = TantivyDocument::default();
                doc.add_u64(fields.key, *key);
                doc.add_text(fields.document, document);
                doc.add_text(fields.text, text);
                writer
                    .add_document(doc)
                    .map_err(err("adding to the lexical index"))?;
            }
        }
        Ok(())
    }

    /// Commits what is staged with the watermark, so a restart knows what
    /// is covered, and reloads the reader.
    fn commit(&self, mut guard: WriterGuard<'_>, watermark: i64) -> Result<(), StoreError> {
        let Some(writer) = guard.as_mut() else {
            return Err(StoreError::io(
                "lexical index",
                "not writable in this process",
            ));
        };
        let mut commit = writer
            .prepare_commit()
            .map_err(err("preparing the lexical commit"))?;
        commit.set_payload(&watermark.to_string());
        commit
            .commit()
            .map_err(err("committing the lexical index"))?;
        drop(guard);
        self.reload()
    }

    /// Replaces the postings of `documents` (see `stage`) and commits with
    /// the watermark.
    pub fn apply(
        &self,
        documents: &[(String, Vec<(u64, String)>)],
        watermark: i64,
    ) -> Result<(), StoreError> {
        let guard = self.writer()?;
        if let Some(writer) = guard.as_ref() {
            Self::stage(writer, self.fields, documents)?;
        }
        self.commit(guard, watermark)
    }

    /// Empties the index and adds every document `fill` hands over (it
    /// calls back with batches of (document, chunks)), in one commit
    /// covering `watermark`: the repair for an index that no longer matches
    /// the source of truth. Until the commit, readers see the old index.
    pub fn rebuild(
        &self,
        fill: impl FnOnce(
            &mut dyn FnMut(LexicalBatch) -> Result<(), StoreError>,
        ) -> Result<(), StoreError>,
        watermark: i64,
    ) -> Result<(), StoreError> {
        let guard = self.writer()?;
        if let Some(writer) = guard.as_ref() {
            writer
                .delete_all_documents()
                .map_err(err("clearing the lexical index"))?;
            fill(&mut |batch| Self::stage(writer, self.fields, &batch))?;
        }
        self.commit(guard, watermark)
    }

    /// The chunk keys of the live documents in the last loaded commit.
    pub fn keys(&self) -> Result<HashSet<u64>, StoreError> {
        let searcher = self.reader.searcher();
        let mut keys = HashSet::new();
        for segment in searcher.segment_readers() {
            let column = segment
                .fast_fields()
                .u64("key")
                .map_err(err("reading lexical keys"))?;
            for doc in segment.doc_ids_alive() {
                keys.extend(column.first(doc));
            }
        }
        Ok(keys)
    }

    /// Analysed query terms in order of first appearance, each with how
    /// often the query has it.
    fn terms(&self, query: &str) -> Vec<(Term, f32)> {
        query_terms(query)
            .into_iter()
            .map(|(text, count)| (Term::from_field_text(self.fields.text, &text), count))
            .collect()
    }

    /// BM25 top `k` among chunks whose key is in `allowed` (all when `None`).
    /// With the standard parameters (k1 1.2, b 0.75, tantivy's own) the
    /// union of the query's terms is walked with block-max WAND: postings
    /// blocks that cannot lift a chunk into the top `k` are skipped, so the
    /// cost follows the answer, not the common terms' posting lengths.
    /// Other parameters score term-at-a-time over every posting. Both give
    /// the same scores (tested).
    pub fn search(
        &self,
        query: &str,
        allowed: Option<&HashSet<u64>>,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let searcher = self.reader.searcher();
        let terms = self.terms(query);
        let stats = Statistics::of(&searcher, self.fields.text)?;
        if terms.is_empty() || stats.n == 0 || k == 0 {
            return Ok(Vec::new());
        }
        if bm25 == Bm25::default() {
            self.search_pruned(&searcher, &stats, &terms, allowed, k)
        } else {
            self.search_exhaustive(&searcher, &stats, &terms, allowed, k, bm25)
        }
    }

    /// Block-max WAND through tantivy's scorers, with folio's statistics
    /// (live chunks) and its filter applied as chunks are offered.
    fn search_pruned(
        &self,
        searcher: &Searcher,
        stats: &Statistics,
        terms: &[(Term, f32)],
        allowed: Option<&HashSet<u64>>,
        k: usize,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|(term, count)| {
                let query: Box<dyn Query> =
                    Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs));
                // A boost keeps the clause a term scorer, which block-max
                // WAND needs; it multiplies the term's weight by its count.
                let query = if *count == 1.0 {
                    query
                } else {
                    Box::new(BoostQuery::new(query, *count))
                };
                (Occur::Should, query)
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let provider = StatisticsProvider { searcher, stats };
        let weight = query
            .weight(EnableScoring::enabled_from_statistics_provider(
                &provider, searcher,
            ))
            .map_err(err("lexical search"))?;
        let mut best = Best::new(k);
        for segment in searcher.segment_readers() {
            let keys = segment
                .fast_fields()
                .u64("key")
                .map_err(err("lexical search"))?;
            let alive = segment.alive_bitset();
            weight
                .for_each_pruning(best.threshold(), segment, &mut |doc, score| {
                    if alive.is_none_or(|a| a.is_alive(doc))
                        && let Some(key) = keys.first(doc)
                        && allowed.is_none_or(|a| a.contains(&key))
                    {
                        best.offer(key, score);
                    }
                    best.threshold()
                })
                .map_err(err("lexical search"))?;
        }
        Ok(best.into_sorted())
    }

    /// Term-at-a-time over every posting, for any k1 and b.
    fn search_exhaustive(
        &self,
        searcher: &Searcher,
        stats: &Statistics,
        terms: &[(Term, f32)],
        allowed: Option<&HashSet<u64>>,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let avgdl = stats.avgdl();
        // Each term's weight: idf times its count in the query.
        let mut idfs = Vec::with_capacity(terms.len());
        for (term, count) in terms {
            idfs.push(count * stats.idf(searcher.doc_freq(term).map_err(err("lexical search"))?));
        }
        let mut scored: Vec<(u64, f32)> = Vec::new();
        for segment in searcher.segment_readers() {
            let inverted = segment
                .inverted_index(self.fields.text)
                .map_err(err("lexical search"))?;
            let norms = segment
                .get_fieldnorms_reader(self.fields.text)
                .map_err(err("lexical search"))?;
            let keys = segment
                .fast_fields()
                .u64("key")
                .map_err(err("lexical search"))?;
            let alive = segment.alive_bitset();
            let mut acc = vec![0f32; segment.max_doc() as usize];
            let mut touched = Vec::new();
            for ((term, _), idf) in terms.iter().zip(&idfs) {
                let Some(mut postings) = inverted
                    .read_postings(term, IndexRecordOption::WithFreqs)
                    .map_err(|e| StoreError::io("lexical search", e))?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        let tf = postings.term_freq() as f32;
                        let dl = norms.fieldnorm(doc) as f32;
                        let score = idf * tf * (bm25.k1 + 1.0)
                            / (tf + bm25.k1 * (1.0 - bm25.b + bm25.b * dl / avgdl));
                        let slot = &mut acc[doc as usize];
                        if *slot == 0.0 {
                            touched.push(doc);
                        }
                        *slot += score;
                    }
                    doc = postings.advance();
                }
            }
            for doc in touched {
                let Some(key) = keys.first(doc) else { continue };
                if allowed.is_none_or(|a| a.contains(&key)) {
                    scored.push((key, acc[doc as usize]));
                }
            }
        }
        Ok(top_k(scored, k))
    }

    /// Chunks in the index (live documents).
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }
}

impl Drop for Lexical {
    fn drop(&mut self) {
        self.close_writer();
    }
}

/// The collection statistics folio's BM25 uses: live chunks, and every
/// indexed token (deleted chunks' included until their segment merges).
struct Statistics {
    n: u64,
    total_tokens: u64,
}

impl Statistics {
    fn of(searcher: &Searcher, field: Field) -> Result<Self, StoreError> {
        let mut total_tokens = 0u64;
        for segment in searcher.segment_readers() {
            total_tokens += segment
                .inverted_index(field)
                .map_err(err("lexical search"))?
                .total_num_tokens();
        }
        Ok(Statistics {
            n: searcher.num_docs(),
            total_tokens,
        })
    }

    /// Average chunk length in tokens, at least one.
    fn avgdl(&self) -> f32 {
        (self.total_tokens as f32 / self.n as f32).max(1.0)
    }

    /// A term's document frequency, counted with deleted chunks by tantivy,
    /// capped at the live count so the idf stays defined.
    fn doc_freq(&self, df: u64) -> u64 {
        df.min(self.n)
    }

    fn idf(&self, df: u64) -> f32 {
        let df = self.doc_freq(df) as f32;
        (1.0 + (self.n as f32 - df + 0.5) / (df + 0.5)).ln()
    }
}

/// Hands folio's statistics to tantivy's BM25 weights, so both search
/// paths score alike.
struct StatisticsProvider<'a> {
    searcher: &'a Searcher,
    stats: &'a Statistics,
}

impl Bm25StatisticsProvider for StatisticsProvider<'_> {
    fn total_num_tokens(&self, _field: Field) -> tantivy::Result<u64> {
        // tantivy divides this by the chunk count for the average length;
        // folio's average is at least one token.
        Ok(self.stats.total_tokens.max(self.stats.n))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.stats.n)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        Ok(self.stats.doc_freq(self.searcher.doc_freq(term)?))
    }
}

/// The best `k` chunks offered so far, and the score a chunk must beat to
/// enter (the pruning threshold).
struct Best {
    k: usize,
    heap: BinaryHeap<Reverse<Entry>>,
}

/// A scored chunk ordered by score, then by key (lower keys rank higher on
/// ties, as in `top_k`).
#[derive(PartialEq)]
struct Entry(f32, u64);

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Best {
    fn new(k: usize) -> Self {
        Best {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    fn offer(&mut self, key: u64, score: f32) {
        let entry = Entry(score, key);
        if self.heap.len() < self.k {
            self.heap.push(Reverse(entry));
        } else if self
            .heap
            .peek()
            .is_some_and(|Reverse(worst)| entry > *worst)
        {
            self.heap.pop();
            self.heap.push(Reverse(entry));
        }
    }

    /// Until `k` chunks are in, anything enters.
    fn threshold(&self) -> f32 {
        match self.heap.peek() {
            Some(Reverse(worst)) if self.heap.len() == self.k => worst.0,
            _ => f32::MIN,
        }
    }

    fn into_sorted(self) -> Vec<(u64, f32)> {
        let mut entries: Vec<Entry> = self.heap.into_iter().map(|Reverse(e)| e).collect();
        entries.sort_by(|a, b| b.cmp(a));
        entries
            .into_iter()
            .map(|Entry(score, key)| (key, score))
            .collect()
    }
}

/// The `k` best (key, score) pairs, best first; ties broken by key for
/// stable output.
pub fn top_k(mut scored: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    let order = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scored.len() > k {
        scored.select_nth_unstable_by(k, order);
        scored.truncate(k);
    }
    scored.sort_by(order);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 13: the analyser tokenises as Lucene-style reference BM25s do
    // (bm25s's `\w\w+`, lower case, Lucene's 33 stop words, Snowball
    // English): one-character runs are not terms, words outside Lucene's
    // list ("about", "what", "between") are kept, accents are folded.
    #[test]
    fn the_analyser_tokenises_as_the_reference_does() {
        assert_eq!(
            analyze("It's e.g. U.S. COVID-19: what about vitamin D between the Cafés?"),
            ["covid", "19", "what", "about", "vitamin", "between", "cafe"]
        );
        assert_eq!(
            analyze("snake_case x86 2 running"),
            ["snake_cas", "x86", "run"]
        );
        assert_eq!(analyze("a I is the of"), Vec::<String>::new());
        assert_eq!(
            query_terms("effects of the effect: effective"),
            [("effect".to_string(), 3.0)]
        );
    }

    /// Chunks of a skewed vocabulary (a few words in nearly every chunk,
    /// most rare), of varied lengths, written in several commits (several
    /// segments), with some documents deleted or replaced afterwards.
    fn skewed_index(dir: &Path) -> Lexical {
        let lexical = Lexical::open(dir, true).unwrap().unwrap();
        let words: Vec<String> = (0..400).map(|i| format!("w{i}x")).collect();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut key = 0u64;
        for commit in 0..4 {
            let mut batch: LexicalBatch = Vec::new();
            for d in 0..60 {
                let mut chunks = Vec::new();
                for _ in 0..1 + next() % 4 {
                    let len = 3 + next() % 90;
                    let text: Vec<&str> = (0..len)
                        .map(|_| {
                            // Roughly Zipf: the index of a word is skewed low.
                            let r = (next() % 10_000) as f64 / 10_000.0;
                            words[((r * r * r) * words.len() as f64) as usize].as_str()
                        })
                        .collect();
                    key += 1;
                    chunks.push((key, text.join(" ")));
                }
                batch.push((format!("doc-{commit}-{d}"), chunks));
            }
            lexical.apply(&batch, commit + 1).unwrap();
        }
        // Deletions and a replacement leave deleted chunks in the segments.
        let mut changes: LexicalBatch = (0..20).map(|d| (format!("doc-1-{d}"), vec![])).collect();
        changes.push((
            "doc-2-5".into(),
            vec![(key + 1, "w0x w1x w1x w399x".into())],
        ));
        lexical.apply(&changes, 10).unwrap();
        lexical
    }

    // Block-max WAND must not change an answer: the pruned path returns the
    // exhaustive path's top k, with its scores, filtered or not, with
    // repeated query terms and deleted chunks in the segments.
    #[test]
    fn pruned_search_equals_exhaustive_scoring() {
        let dir = tempfile::tempdir().unwrap();
        let lexical = skewed_index(dir.path());
        let searcher = lexical.reader.searcher();
        assert!(searcher.segment_readers().len() > 1);
        let stats = Statistics::of(&searcher, lexical.fields.text).unwrap();
        let all = lexical.keys().unwrap();
        let some: HashSet<u64> = all.iter().copied().filter(|k| k % 5 == 0).collect();
        let queries = [
            "w0x",
            "w0x w1x w2x",
            "w3x w3x w3x w40x w200x",
            "w1x w7x w7x w13x w100x w250x w399x w0x w0x",
            "w390x w391x",
        ];
        let mut compared = 0;
        for query in queries {
            let terms = lexical.terms(query);
            for allowed in [None, Some(&some)] {
                for k in [1, 10, 50] {
                    let pruned = lexical
                        .search_pruned(&searcher, &stats, &terms, allowed, k)
                        .unwrap();
                    let exhaustive = lexical
                        .search_exhaustive(&searcher, &stats, &terms, allowed, k, Bm25::default())
                        .unwrap();
                    assert_eq!(pruned.len(), exhaustive.len(), "{query} k={k}");
                    let full: std::collections::HashMap<u64, f32> = lexical
                        .search_exhaustive(
                            &searcher,
                            &stats,
                            &terms,
                            allowed,
                            10_000,
                            Bm25::default(),
                        )
                        .unwrap()
                        .into_iter()
                        .collect();
                    for ((pk, ps), (_, es)) in pruned.iter().zip(&exhaustive) {
                        // Same score at each rank; ties may pick either key.
                        assert!(
                            (ps - es).abs() <= 1e-4 * es.abs().max(1.0),
                            "{query}: {ps} vs {es}"
                        );
                        let own = full[pk];
                        assert!(
                            (ps - own).abs() <= 1e-4 * own.abs().max(1.0),
                            "{query}: key {pk}"
                        );
                        assert!(allowed.is_none_or(|a| a.contains(pk)));
                    }
                    compared += pruned.len();
                }
            }
        }
        assert!(compared > 300, "compared {compared}");
        // Through the public entry point too, with other parameters going
        // the exhaustive way.
        let default = lexical
            .search("w3x w3x w40x", None, 5, Bm25::default())
            .unwrap();
        assert_eq!(default.len(), 5);
        let other = lexical
            .search("w3x w3x w40x", None, 5, Bm25 { k1: 0.9, b: 0.4 })
            .unwrap();
        assert_eq!(other.len(), 5);
        assert_ne!(default[0].1, other[0].1);
    }
}
