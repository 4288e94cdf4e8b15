//! The lexical index: tantivy holds the postings (folio's analyser: each
//! text in its language, `folio_lexical`); folio scores them with
//! its own BM25 so k1 and b are parameters and the filter's allowed set is
//! honoured while scoring, not after.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashSet};
use std::path::Path;
use std::sync::Mutex;

pub use folio_lexical::{INDEX_VERSION, document_key, document_text, top_k};
use folio_lexical::{Language, analyzer, query_readings};
use folio_store::{Bm25, StoreError};

use crate::postings_files::PostingsFiles;
use tantivy::postings::Postings;
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, BoostQuery, EnableScoring, Occur, Query, TermQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{
    DocSet, Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, Searcher, TERMINATED,
    TantivyDocument, Term,
};

const ANALYZER: &str = "folio";

/// Where a library's lexical index of the current layout lives inside its
/// index folder.
pub fn lexical_dir(index_dir: &Path) -> std::path::PathBuf {
    index_dir.join(format!("lexical-v{INDEX_VERSION}"))
}

/// Folders of earlier layouts' indexes, to remove once the current one is
/// built.
pub fn stale_lexical_dirs(index_dir: &Path) -> Vec<std::path::PathBuf> {
    let mut stale = vec![index_dir.join("lexical")];
    stale.extend((2..INDEX_VERSION).map(|v| index_dir.join(format!("lexical-v{v}"))));
    stale.retain(|d| d.exists());
    stale
}

/// What a lexical search ranks: chunks by their own text (context header
/// and chunk), or whole documents by theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Chunk,
    Document,
}

/// A chunk's entry holds `key` (the chunk key), `doc_key`, `document` and
/// `text` and the `language` its text was analysed in (a query is analysed
/// in every language the library holds); a document's entry holds
/// `doc_key`, `document`, `whole` and the `kind` marker (how live
/// documents are counted). Each has its `length` in analysed terms.
#[derive(Clone, Copy)]
struct Fields {
    key: Field,
    doc_key: Field,
    document: Field,
    text: Field,
    whole: Field,
    kind: Field,
    language: Field,
}

/// The `kind` of a document's entry.
const DOCUMENT_KIND: &str = "document";

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let key = builder.add_u64_field("key", INDEXED | FAST);
    let doc_key = builder.add_u64_field("doc_key", INDEXED | FAST);
    let document = builder.add_text_field("document", STRING);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(ANALYZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    let text = builder.add_text_field(
        "text",
        TextOptions::default().set_indexing_options(indexing.clone()),
    );
    let whole = builder.add_text_field(
        "whole",
        TextOptions::default().set_indexing_options(indexing),
    );
    let kind = builder.add_text_field("kind", STRING);
    // Each entry's length in terms, once written for BM25's statistics,
    // which now come from the lengths the scorer reads (`Lexical::counts`).
    // Kept in the schema every index holds: a field is known by its place.
    builder.add_u64_field("length", FAST);
    let language = builder.add_text_field("language", STRING);
    (
        builder.build(),
        Fields {
            key,
            doc_key,
            document,
            text,
            whole,
            kind,
            language,
        },
    )
}

impl Fields {
    /// The text field and the key column of a unit's entries.
    fn of(&self, unit: Unit) -> (Field, &'static str) {
        match unit {
            Unit::Chunk => (self.text, "key"),
            Unit::Document => (self.whole, "doc_key"),
        }
    }
}

fn err(context: &str) -> impl Fn(tantivy::TantivyError) -> StoreError + '_ {
    move |e| StoreError::io(context, e)
}

type WriterGuard<'a> = std::sync::MutexGuard<'a, Option<IndexWriter>>;

/// The writer a guard holds.
fn writable<'a>(guard: &'a mut WriterGuard<'_>) -> Result<&'a mut IndexWriter, StoreError> {
    guard
        .as_mut()
        .ok_or_else(|| StoreError::io("lexical index", "not writable in this process"))
}

/// Commits what `writer` has staged with `payload` (a watermark, or a
/// build's place).
fn commit_with(writer: &mut IndexWriter, payload: &str) -> Result<(), StoreError> {
    let mut commit = writer
        .prepare_commit()
        .map_err(err("preparing the lexical commit"))?;
    commit.set_payload(payload);
    commit
        .commit()
        .map_err(err("committing the lexical index"))?;
    Ok(())
}

/// `filled`, having rolled `writer` back to its last commit if it failed:
/// what was staged since must not ride on the next commit (a build goes on
/// from its place; an update is retried whole).
fn or_roll_back(
    writer: &mut IndexWriter,
    filled: Result<(), StoreError>,
) -> Result<(), StoreError> {
    if filled.is_err() {
        writer
            .rollback()
            .map_err(err("rolling back the lexical index"))?;
    }
    filled
}

/// The payload of a build's intermediate commit: `building STARTED LAST_ID`.
const BUILDING: &str = "building ";

/// A document to re-index: its id, its whole text (`document_text`) and
/// its current chunks (key, embedded text); a deleted document comes with
/// no text and no chunks.
#[derive(Debug, Clone)]
pub struct LexicalDocument {
    pub id: String,
    pub text: Option<String>,
    pub chunks: Vec<(u64, String)>,
    /// The document's language tag (its metadata's `language`), in which a
    /// chunk, or the whole text, that does not tell its own is analysed
    /// (`folio_lexical::text_language`).
    pub language: Option<String>,
    /// The index may hold earlier entries of the document, deleted before
    /// the new ones are added. `false` spares the deletion: to look one up,
    /// a commit opens every segment, and late in a 100,000-file ingest
    /// that kept about 6 MB of the segments' files resident.
    pub replaces: bool,
}

/// Documents to re-index.
pub type LexicalBatch = Vec<LexicalDocument>;

/// Hands the documents to index to the callback it is given, a batch at a
/// time.
pub type Fill<'a> = &'a mut dyn FnMut(
    &mut dyn FnMut(LexicalBatch) -> Result<(), StoreError>,
) -> Result<(), StoreError>;

/// The chunks of each language.
type LanguageCounts = Vec<(Language, u64)>;

/// One library's lexical index.
pub struct Lexical {
    index: Index,
    reader: IndexReader,
    /// Present while this process holds the data directory's write lock.
    writer: Mutex<Option<IndexWriter>>,
    fields: Fields,
    /// Live (chunk, document) entries of the searcher generation counted
    /// last.
    counts: Mutex<Option<(u64, Counts)>>,
    /// The chunks of each language of the searcher generation read last.
    languages: Mutex<Option<(u64, LanguageCounts)>>,
}

/// The memory tantivy's writer indexes in before it writes a segment out:
/// its smallest. Most commits hold a few documents; a settling bulk write
/// or a rebuild writes a segment per 15 MB rather than holding more beside
/// the rest of the process.
const WRITER_MEMORY: usize = 15_000_000;

/// Live entries of each kind in one searcher generation, and their total
/// length in analysed terms.
#[derive(Debug, Clone, Copy)]
struct Counts {
    chunks: u64,
    documents: u64,
    chunk_terms: u64,
    document_terms: u64,
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
        if !exists {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::io(dir.display().to_string(), e))?;
        }
        let files =
            PostingsFiles::open(dir).map_err(|e| StoreError::io("opening the lexical index", e))?;
        let index = if exists {
            Index::open(files).map_err(err("opening the lexical index"))?
        } else {
            Index::create(files, schema, IndexSettings::default())
                .map_err(err("creating the lexical index"))?
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
            counts: Mutex::new(None),
            languages: Mutex::new(None),
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
                .writer_with_num_threads(1, WRITER_MEMORY)
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
    /// The change-log sequence number the last commit covers (0 while a
    /// build is under way: `build_place`).
    pub fn watermark(&self) -> Result<i64, StoreError> {
        Ok(self.payload()?.and_then(|p| p.parse().ok()).unwrap_or(0))
    }

    /// Where a build cut short stopped: the watermark it started from and
    /// the last document it committed (`build`).
    pub fn build_place(&self) -> Result<Option<(i64, String)>, StoreError> {
        Ok(self.payload()?.and_then(|p| {
            let (started, after) = p.strip_prefix(BUILDING)?.split_once(' ')?;
            Some((started.parse().ok()?, after.to_owned()))
        }))
    }

    /// The last commit's payload.
    fn payload(&self) -> Result<Option<String>, StoreError> {
        let metas = self
            .index
            .load_metas()
            .map_err(err("reading lexical metadata"))?;
        Ok(metas.payload)
    }

    /// Sees the latest commit (another process's, in read-only mode).
    pub fn reload(&self) -> Result<(), StoreError> {
        self.reader
            .reload()
            .map_err(err("reloading the lexical index"))
    }

    /// The searcher of the commit loaded last.
    fn searcher(&self) -> Result<Searcher, StoreError> {
        Ok(self.reader.searcher())
    }

    /// The writer's slot (`writable` takes the writer out of it).
    fn writer(&self) -> WriterGuard<'_> {
        // A poisoned lock means a panic mid-update; tantivy discards
        // uncommitted work on rollback, so continuing is safe.
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stages the replacement of `documents`' postings: each document's old
    /// chunks are deleted (when it `replaces` any) and its current `chunks`
    /// (key, text) added.
    fn stage(
        writer: &IndexWriter,
        fields: Fields,
        documents: &[LexicalDocument],
    ) -> Result<(), StoreError> {
        for document in documents {
            if document.replaces {
                writer.delete_term(Term::from_field_text(fields.document, &document.id));
            }
            let doc_key = document_key(&document.id);
            let entry = || {
                let mut doc = TantivyDocument::default();
                if let Some(doc_key) = doc_key {
                    doc.add_u64(fields.doc_key, doc_key);
                }
                doc.add_text(fields.document, &document.id);
                doc
            };
            for (key, text) in &document.chunks {
                // Analysed as tantivy indexes it: the text waits in
                // tantivy's queue of up to 10,000 entries, where tokens (an
                // allocation each) would take several times its size.
                let mut doc = entry();
                let language = Self::add_in_language(&mut doc, fields.text, text, document);
                doc.add_text(fields.language, language.code());
                doc.add_u64(fields.key, *key);
                writer
                    .add_document(doc)
                    .map_err(err("adding to the lexical index"))?;
            }
            if let (Some(text), Some(_)) = (&document.text, doc_key) {
                // Analysed as tantivy indexes it: a document's tokens are
                // never held all at once.
                let mut doc = entry();
                Self::add_in_language(&mut doc, fields.whole, text, document);
                doc.add_text(fields.kind, DOCUMENT_KIND);
                writer
                    .add_document(doc)
                    .map_err(err("adding to the lexical index"))?;
            }
        }
        Ok(())
    }

    /// Adds `text` to `field` to be analysed in its language
    /// (`folio_lexical::text_language`, of the text and its document's
    /// tag): marked with it when the analyser would detect another.
    /// Returns the language.
    fn add_in_language(
        doc: &mut TantivyDocument,
        field: Field,
        text: &str,
        document: &LexicalDocument,
    ) -> folio_lexical::Language {
        let language = folio_lexical::text_language(text, document.language.as_deref());
        if language == folio_lexical::detect(text) {
            doc.add_text(field, text);
        } else {
            doc.add_text(field, folio_lexical::in_language(text, language));
        }
        language
    }

    /// Commits what is staged with the watermark, so a restart knows what
    /// is covered, and reloads the reader.
    fn commit(&self, mut guard: WriterGuard<'_>, watermark: i64) -> Result<(), StoreError> {
        commit_with(writable(&mut guard)?, &watermark.to_string())?;
        drop(guard);
        self.reload()
    }

    /// Replaces the postings of `documents` (see `stage`) and commits with
    /// the watermark.
    #[cfg(test)]
    pub fn apply(&self, documents: &[LexicalDocument], watermark: i64) -> Result<(), StoreError> {
        self.update(&mut |add| add(documents.to_vec()), watermark)
    }

    /// Replaces the postings of every document `fill` hands over (it calls
    /// back with batches, so a long change log is never held at once), in
    /// one commit covering `watermark`.
    pub fn update(&self, fill: Fill<'_>, watermark: i64) -> Result<(), StoreError> {
        self.write(false, fill, watermark)
    }

    /// Empties the index and adds every document `fill` hands over, in one
    /// commit covering `watermark`: the repair for an index that no longer
    /// matches the source of truth. Until the commit, readers see the old
    /// index.
    pub fn rebuild(&self, fill: Fill<'_>, watermark: i64) -> Result<(), StoreError> {
        self.write(true, fill, watermark)
    }

    /// Builds an index that covers nothing yet from every document `fill`
    /// hands over, in the order of their ids, and commits it as covering
    /// `started`. Every `commit_every` chunks it commits what it has with
    /// its place (`started` and the last document's id), so a build cut
    /// short (a killed process, a failed read) goes on from there: with
    /// `resumes`, `fill` hands over the documents after that place and the
    /// index keeps what it holds; without, the index is emptied first.
    /// Readers see each commit; this is for an index that had nothing to
    /// show (a new analyser's), not the repair of a live one (`rebuild`).
    pub fn build(
        &self,
        fill: Fill<'_>,
        started: i64,
        resumes: bool,
        commit_every: usize,
    ) -> Result<(), StoreError> {
        let mut guard = self.writer();
        let writer = writable(&mut guard)?;
        if !resumes {
            writer
                .delete_all_documents()
                .map_err(err("clearing the lexical index"))?;
        }
        let mut staged = 0;
        let filled = fill(&mut |batch| {
            Self::stage(writer, self.fields, &batch)?;
            staged += batch.iter().map(|d| d.chunks.len()).sum::<usize>();
            if staged >= commit_every
                && let Some(last) = batch.last()
            {
                commit_with(writer, &format!("{BUILDING}{started} {}", last.id))?;
                staged = 0;
            }
            Ok(())
        });
        or_roll_back(writer, filled)?;
        self.commit(guard, started)
    }

    fn write(&self, clear: bool, fill: Fill<'_>, watermark: i64) -> Result<(), StoreError> {
        let mut guard = self.writer();
        let writer = writable(&mut guard)?;
        if clear {
            writer
                .delete_all_documents()
                .map_err(err("clearing the lexical index"))?;
        }
        let filled = fill(&mut |batch| Self::stage(writer, self.fields, &batch));
        or_roll_back(writer, filled)?;
        self.commit(guard, watermark)
    }

    /// The chunk keys of the live documents in the last loaded commit.
    pub fn keys(&self) -> Result<HashSet<u64>, StoreError> {
        let searcher = self.searcher()?;
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

    /// The keys of the documents whose whole-text entry is live in the last
    /// loaded commit (`document_key` of their ids).
    pub fn document_keys(&self) -> Result<HashSet<u64>, StoreError> {
        let searcher = self.searcher()?;
        let marker = Term::from_field_text(self.fields.kind, DOCUMENT_KIND);
        let mut keys = HashSet::new();
        for segment in searcher.segment_readers() {
            let column = segment
                .fast_fields()
                .u64("doc_key")
                .map_err(err("reading lexical document keys"))?;
            live_postings(segment, &marker, |doc| keys.extend(column.first(doc)))
                .map_err(err("reading lexical document keys"))?;
        }
        Ok(keys)
    }

    /// Whole-document entries in the index (live documents).
    pub fn document_count(&self) -> Result<u64, StoreError> {
        Ok(self.counts(&self.searcher()?)?.documents)
    }

    /// Analysed query terms in order of first appearance, as terms of
    /// `field`, for a library of `languages`: each with how often the
    /// query has it and the live document frequency BM25 weighs it by
    /// (a word's readings in several languages share theirs:
    /// `QueryTerms::shared_frequencies`).
    fn terms(
        searcher: &Searcher,
        query: &str,
        languages: &[Language],
        field: Field,
    ) -> Result<Vec<QueryTerm>, StoreError> {
        let readings = query_readings(query, languages);
        let terms: Vec<Term> = readings
            .terms
            .iter()
            .map(|(text, _)| Term::from_field_text(field, text))
            .collect();
        let own = terms
            .iter()
            .map(|term| live_doc_freq(searcher, term))
            .collect::<tantivy::Result<Vec<u64>>>()
            .map_err(err("lexical search"))?;
        let shared = readings.shared_frequencies(&own);
        Ok(terms
            .into_iter()
            .zip(&readings.terms)
            .zip(shared)
            .map(|((term, (_, count)), df)| QueryTerm {
                term,
                count: *count,
                df,
            })
            .collect())
    }

    /// The chunks of each language the searcher's generation holds (read
    /// once per generation; deleted chunks count until their segment is
    /// merged, which may cost a query a few terms that score nothing).
    fn language_counts(&self, searcher: &Searcher) -> Result<LanguageCounts, StoreError> {
        let generation = searcher.generation().generation_id();
        let mut slot = self.languages.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((read, counts)) = &*slot
            && *read == generation
        {
            return Ok(counts.clone());
        }
        let reading = err("reading the lexical index's languages");
        let mut counts = Vec::new();
        for language in Language::ALL {
            let term = Term::from_field_text(self.fields.language, language.code());
            let mut n = 0u64;
            for segment in searcher.segment_readers() {
                n += u64::from(
                    segment
                        .inverted_index(self.fields.language)
                        .map_err(&reading)?
                        .doc_freq(&term)
                        .map_err(|e| StoreError::io("reading the lexical index's languages", e))?,
                );
            }
            counts.push((language, n));
        }
        *slot = Some((generation, counts.clone()));
        Ok(counts)
    }

    /// The languages `query` is analysed in (`folio_lexical::query_languages`).
    fn languages(&self, searcher: &Searcher, query: &str) -> Result<Vec<Language>, StoreError> {
        Ok(folio_lexical::query_languages(
            query,
            &self.language_counts(searcher)?,
        ))
    }

    /// The language the library reads `query` in (the first of
    /// `query_languages`) and the language most of its chunks are in.
    pub fn query_language(&self, query: &str) -> Result<(Language, Language), StoreError> {
        let chunks = self.language_counts(&self.searcher()?)?;
        let languages = folio_lexical::query_languages(query, &chunks);
        Ok((
            languages.first().copied().unwrap_or(Language::English),
            folio_lexical::main_language(&chunks),
        ))
    }

    /// Live chunk and document entries of the searcher's generation
    /// (counted once per generation: document entries carry the `kind`
    /// marker; a segment with deletions is walked for its live ones).
    fn counts(&self, searcher: &Searcher) -> Result<Counts, StoreError> {
        let generation = searcher.generation().generation_id();
        let mut slot = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((counted, counts)) = *slot
            && counted == generation
        {
            return Ok(counts);
        }
        let marker = Term::from_field_text(self.fields.kind, DOCUMENT_KIND);
        let counting = err("counting lexical entries");
        let (mut documents, mut chunk_terms, mut document_terms) = (0u64, 0u64, 0u64);
        for segment in searcher.segment_readers() {
            // Lengths as the scorer reads them: tantivy keeps each entry's
            // length in one byte, rounded down (up to 11 % short), so the
            // average they are divided by is taken over the same rounded
            // lengths (a chunk entry has no whole text, a document entry no
            // chunk text: each field's lengths are its own entries').
            let texts = segment
                .get_fieldnorms_reader(self.fields.text)
                .map_err(&counting)?;
            let wholes = segment
                .get_fieldnorms_reader(self.fields.whole)
                .map_err(&counting)?;
            let mut count = |doc: u32| {
                chunk_terms += u64::from(texts.fieldnorm(doc));
                document_terms += u64::from(wholes.fieldnorm(doc));
            };
            match segment.alive_bitset() {
                None => {
                    documents += segment
                        .inverted_index(self.fields.kind)
                        .map_err(&counting)?
                        .doc_freq(&marker)
                        .map_err(|e| StoreError::io("counting lexical entries", e))?
                        as u64;
                    (0..segment.max_doc()).for_each(&mut count);
                }
                // With deletes, only live entries count (a document entry
                // has no chunk key).
                Some(_) => {
                    let keys = segment.fast_fields().u64("key").map_err(&counting)?;
                    for doc in segment.doc_ids_alive() {
                        count(doc);
                        if keys.first(doc).is_none() {
                            documents += 1;
                        }
                    }
                }
            }
        }
        let counts = Counts {
            chunks: searcher.num_docs().saturating_sub(documents),
            documents,
            chunk_terms,
            document_terms,
        };
        *slot = Some((generation, counts));
        Ok(counts)
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
        self.rank(&self.searcher()?, Unit::Chunk, query, allowed, k, bm25)
    }

    /// BM25 top `k` among whole documents (their `document_text`, with
    /// document statistics: live documents, their average length, the
    /// documents holding a term; scored as `search` scores chunks) among
    /// the `documents` allowed, each as (its best chunk among the `chunks`
    /// allowed, the document's score): see `best_chunks`. One snapshot
    /// serves both steps.
    pub fn search_documents(
        &self,
        query: &str,
        documents: Option<&HashSet<u64>>,
        chunks: Option<&HashSet<u64>>,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let searcher = self.searcher()?;
        let ranked = self.rank(&searcher, Unit::Document, query, documents, k, bm25)?;
        let keys: Vec<u64> = ranked.iter().map(|(key, _)| *key).collect();
        let best = self.best_chunks(&searcher, query, &keys, chunks, bm25)?;
        Ok(ranked
            .into_iter()
            .filter_map(|(document, score)| best.get(&document).map(|(chunk, _)| (*chunk, score)))
            .collect())
    }

    /// BM25 top `k` (key, score) among `unit`s whose key is in `allowed`.
    fn rank(
        &self,
        searcher: &Searcher,
        unit: Unit,
        query: &str,
        allowed: Option<&HashSet<u64>>,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let (field, column) = self.fields.of(unit);
        let terms = Self::terms(searcher, query, &self.languages(searcher, query)?, field)?;
        let stats = self.statistics(searcher, unit)?;
        if terms.is_empty() || stats.n == 0 || k == 0 {
            return Ok(Vec::new());
        }
        let scope = Scope {
            searcher,
            stats: &stats,
            field,
            column,
            allowed,
        };
        if bm25 == Bm25::default() {
            Self::search_pruned(&scope, &terms, k)
        } else {
            Self::search_exhaustive(&scope, &terms, k, bm25)
        }
    }

    fn statistics(&self, searcher: &Searcher, unit: Unit) -> Result<Statistics, StoreError> {
        let counts = self.counts(searcher)?;
        let (n, total_tokens) = match unit {
            Unit::Chunk => (counts.chunks, counts.chunk_terms),
            Unit::Document => (counts.documents, counts.document_terms),
        };
        Ok(Statistics { n, total_tokens })
    }

    /// Block-max WAND through tantivy's scorers, with folio's statistics
    /// (live entries) and its filter applied as entries are offered.
    fn search_pruned(
        scope: &Scope<'_>,
        terms: &[QueryTerm],
        k: usize,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|QueryTerm { term, count, .. }| {
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
        let searcher = scope.searcher;
        let provider = StatisticsProvider {
            searcher,
            stats: scope.stats,
            terms,
        };
        let weight = query
            .weight(EnableScoring::enabled_from_statistics_provider(
                &provider, searcher,
            ))
            .map_err(err("lexical search"))?;
        let mut best = Best::new(k);
        for segment in searcher.segment_readers() {
            let keys = segment
                .fast_fields()
                .u64(scope.column)
                .map_err(err("lexical search"))?;
            let alive = segment.alive_bitset();
            weight
                .for_each_pruning(best.threshold(), segment, &mut |doc, score| {
                    if alive.is_none_or(|a| a.is_alive(doc))
                        && let Some(key) = keys.first(doc)
                        && scope.allowed.is_none_or(|a| a.contains(&key))
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
        scope: &Scope<'_>,
        terms: &[QueryTerm],
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let (searcher, stats) = (scope.searcher, scope.stats);
        let avgdl = stats.avgdl();
        let idfs = stats.weights(terms);
        let mut scored: Vec<(u64, f32)> = Vec::new();
        for segment in searcher.segment_readers() {
            let inverted = segment
                .inverted_index(scope.field)
                .map_err(err("lexical search"))?;
            let norms = segment
                .get_fieldnorms_reader(scope.field)
                .map_err(err("lexical search"))?;
            let keys = segment
                .fast_fields()
                .u64(scope.column)
                .map_err(err("lexical search"))?;
            let alive = segment.alive_bitset();
            let mut acc = vec![0f32; segment.max_doc() as usize];
            let mut touched = Vec::new();
            for (QueryTerm { term, .. }, idf) in terms.iter().zip(&idfs) {
                let Some(mut postings) = inverted
                    .read_postings(term, IndexRecordOption::WithFreqs)
                    .map_err(|e| StoreError::io("lexical search", e))?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        let score = bm25_score(
                            bm25,
                            *idf,
                            postings.term_freq() as f32,
                            norms.fieldnorm(doc) as f32,
                            avgdl,
                        );
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
                if scope.allowed.is_none_or(|a| a.contains(&key)) {
                    scored.push((key, acc[doc as usize]));
                }
            }
        }
        Ok(top_k(scored, k))
    }

    /// Each of `documents`' best chunk by chunk BM25 among the chunks
    /// `allowed` lets through (all when `None`), as document key → (chunk
    /// key, score). A document whose chunks match no query term gets its
    /// first allowed chunk, scored 0; one with no allowed chunk is left out.
    fn best_chunks(
        &self,
        searcher: &Searcher,
        query: &str,
        documents: &[u64],
        allowed: Option<&HashSet<u64>>,
        bm25: Bm25,
    ) -> Result<std::collections::HashMap<u64, (u64, f32)>, StoreError> {
        let stats = self.statistics(searcher, Unit::Chunk)?;
        let terms = Self::terms(
            searcher,
            query,
            &self.languages(searcher, query)?,
            self.fields.text,
        )?;
        let avgdl = stats.avgdl();
        let idfs = stats.weights(&terms);
        let mut best: std::collections::HashMap<u64, (u64, f32)> = std::collections::HashMap::new();
        let better =
            |new: (u64, f32), old: (u64, f32)| new.1 > old.1 || (new.1 == old.1 && new.0 < old.0);
        for segment in searcher.segment_readers() {
            let fast = segment.fast_fields();
            let keys = fast.u64("key").map_err(err("lexical search"))?;
            let owners = fast.u64("doc_key").map_err(err("lexical search"))?;
            let alive = segment.alive_bitset();
            // The segment's live, allowed chunks of the documents, in
            // ascending order for the postings walks below.
            let by_document = segment
                .inverted_index(self.fields.doc_key)
                .map_err(err("lexical search"))?;
            let mut chunks: Vec<(u32, u64, u64)> = Vec::new();
            for &document in documents {
                let term = Term::from_field_u64(self.fields.doc_key, document);
                let Some(mut postings) = by_document
                    .read_postings(&term, IndexRecordOption::Basic)
                    .map_err(|e| StoreError::io("lexical search", e))?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc))
                        && let Some(key) = keys.first(doc)
                        && allowed.is_none_or(|a| a.contains(&key))
                        && let Some(owner) = owners.first(doc)
                    {
                        chunks.push((doc, key, owner));
                    }
                    doc = postings.advance();
                }
            }
            if chunks.is_empty() {
                continue;
            }
            chunks.sort_unstable();
            let mut scores = vec![0f32; chunks.len()];
            let inverted = segment
                .inverted_index(self.fields.text)
                .map_err(err("lexical search"))?;
            let norms = segment
                .get_fieldnorms_reader(self.fields.text)
                .map_err(err("lexical search"))?;
            for (QueryTerm { term, .. }, idf) in terms.iter().zip(&idfs) {
                let Some(mut postings) = inverted
                    .read_postings(term, IndexRecordOption::WithFreqs)
                    .map_err(|e| StoreError::io("lexical search", e))?
                else {
                    continue;
                };
                for (slot, (doc, _, _)) in scores.iter_mut().zip(&chunks) {
                    if postings.doc() > *doc {
                        continue;
                    }
                    if postings.seek(*doc) == *doc {
                        *slot += bm25_score(
                            bm25,
                            *idf,
                            postings.term_freq() as f32,
                            norms.fieldnorm(*doc) as f32,
                            avgdl,
                        );
                    }
                }
            }
            for ((_, key, owner), score) in chunks.into_iter().zip(scores) {
                match best.get(&owner) {
                    Some(&old) if !better((key, score), old) => {}
                    _ => {
                        best.insert(owner, (key, score));
                    }
                }
            }
        }
        Ok(best)
    }

    /// Chunks in the index (live documents).
    pub fn len(&self) -> Result<u64, StoreError> {
        Ok(self.counts(&self.searcher()?)?.chunks)
    }
}

/// One occurrence's BM25: the term's weight (idf times its count in the
/// query) saturated by its frequency, normalised by the length.
fn bm25_score(bm25: Bm25, weight: f32, tf: f32, length: f32, avgdl: f32) -> f32 {
    weight * tf * (bm25.k1 + 1.0) / (tf + bm25.k1 * (1.0 - bm25.b + bm25.b * length / avgdl))
}

/// What one search walks: a unit's text field and key column, its
/// statistics, and the keys its filter allows.
struct Scope<'a> {
    searcher: &'a Searcher,
    stats: &'a Statistics,
    field: Field,
    column: &'static str,
    allowed: Option<&'a HashSet<u64>>,
}

impl Drop for Lexical {
    fn drop(&mut self) {
        self.close_writer();
    }
}

/// The collection statistics folio's BM25 uses, over live entries only (a
/// deleted entry stays in its segment until a merge, but counts nowhere):
/// entries of the unit, their total length, and each term's document
/// frequency (`live_doc_freq`). PostgreSQL counts the same.
struct Statistics {
    n: u64,
    total_tokens: u64,
}

/// Live entries holding `term`: tantivy's count where a segment has no
/// deletes, else its postings walked past the deleted ones.
fn live_doc_freq(searcher: &Searcher, term: &Term) -> tantivy::Result<u64> {
    let mut df = 0u64;
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(term.field())?;
        match segment.alive_bitset() {
            None => df += u64::from(inverted.doc_freq(term)?),
            Some(_) => live_postings(segment, term, |_| df += 1)?,
        }
    }
    Ok(df)
}

/// Calls `each` with every live entry of `segment` holding `term`.
fn live_postings(
    segment: &tantivy::SegmentReader,
    term: &Term,
    mut each: impl FnMut(tantivy::DocId),
) -> tantivy::Result<()> {
    let alive = segment.alive_bitset();
    let inverted = segment.inverted_index(term.field())?;
    if let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? {
        let mut doc = postings.doc();
        while doc != TERMINATED {
            if alive.is_none_or(|a| a.is_alive(doc)) {
                each(doc);
            }
            doc = postings.advance();
        }
    }
    Ok(())
}

impl Statistics {
    /// Average chunk length in tokens, at least one.
    fn avgdl(&self) -> f32 {
        (self.total_tokens as f32 / self.n as f32).max(1.0)
    }

    /// A term's live document frequency, capped at the live count so the
    /// idf stays defined whatever a concurrent reload does.
    fn doc_freq(&self, df: u64) -> u64 {
        df.min(self.n)
    }

    fn idf(&self, df: u64) -> f32 {
        let df = self.doc_freq(df) as f32;
        (1.0 + (self.n as f32 - df + 0.5) / (df + 0.5)).ln()
    }

    /// Each query term's weight: its idf times its count in the query.
    fn weights(&self, terms: &[QueryTerm]) -> Vec<f32> {
        terms
            .iter()
            .map(|term| term.count * self.idf(term.df))
            .collect()
    }
}

/// A query term as a lexical search weighs it: how often the query has it
/// and the live document frequency its idf comes from.
struct QueryTerm {
    term: Term,
    count: f32,
    df: u64,
}

/// Hands folio's statistics to tantivy's BM25 weights, so both search
/// paths score alike.
struct StatisticsProvider<'a> {
    searcher: &'a Searcher,
    stats: &'a Statistics,
    terms: &'a [QueryTerm],
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
        let df = match self.terms.iter().find(|t| t.term == *term) {
            Some(t) => t.df,
            None => live_doc_freq(self.searcher, term)?,
        };
        Ok(self.stats.doc_freq(df))
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

#[cfg(test)]
mod tests {
    use super::*;

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
                let text = chunks.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>();
                batch.push(LexicalDocument {
                    id: id(commit as u64, d),
                    text: Some(text.join(" ")),
                    chunks,
                    replaces: false,
                    language: None,
                });
            }
            lexical.apply(&batch, commit + 1).unwrap();
        }
        // Deletions and a replacement leave deleted entries in the segments.
        let mut changes: LexicalBatch = (0..20)
            .map(|d| LexicalDocument {
                id: id(1, d),
                text: None,
                chunks: vec![],
                replaces: true,
                language: None,
            })
            .collect();
        changes.push(LexicalDocument {
            id: id(2, 5),
            text: Some("w0x w1x w1x w399x".into()),
            chunks: vec![(key + 1, "w0x w1x w1x w399x".into())],
            replaces: true,
            language: None,
        });
        lexical.apply(&changes, 10).unwrap();
        lexical
    }

    /// A document id (16 hex digits) for commit `c`, document `d`.
    fn id(c: u64, d: u64) -> String {
        format!("{:016x}", 0xd0c0_0000_0000_0000 | c << 16 | d)
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
        let counts = lexical.counts(&searcher).unwrap();
        assert_eq!(counts.documents, 4 * 60 - 20, "live documents");
        assert_eq!(counts.chunks, lexical.keys().unwrap().len() as u64);
        let queries = [
            "w0x",
            "w0x w1x w2x",
            "w3x w3x w3x w40x w200x",
            "w1x w7x w7x w13x w100x w250x w399x w0x w0x",
            "w390x w391x",
        ];
        let mut compared = 0;
        for unit in [Unit::Chunk, Unit::Document] {
            let stats = lexical.statistics(&searcher, unit).unwrap();
            let (field, column) = lexical.fields.of(unit);
            let all: HashSet<u64> = match unit {
                Unit::Chunk => lexical.keys().unwrap(),
                Unit::Document => (0..4)
                    .flat_map(|c| (0..60).map(move |d| document_key(&id(c, d)).unwrap()))
                    .collect(),
            };
            let some: HashSet<u64> = all.iter().copied().filter(|k| k % 5 == 0).collect();
            for query in queries {
                let terms = Lexical::terms(&searcher, query, &[Language::English], field).unwrap();
                for allowed in [None, Some(&some)] {
                    let scope = Scope {
                        searcher: &searcher,
                        stats: &stats,
                        field,
                        column,
                        allowed,
                    };
                    for k in [1, 10, 50] {
                        compared += compare(&scope, &terms, k, query);
                    }
                }
            }
        }
        assert!(compared > 600, "compared {compared}");
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

    /// The pruned path's top `k` against the exhaustive path's: the same
    /// scores rank by rank, each the entry's own exhaustive score, all
    /// allowed. Returns the entries compared.
    fn compare(scope: &Scope<'_>, terms: &[QueryTerm], k: usize, query: &str) -> usize {
        let pruned = Lexical::search_pruned(scope, terms, k).unwrap();
        let exhaustive = Lexical::search_exhaustive(scope, terms, k, Bm25::default()).unwrap();
        assert_eq!(pruned.len(), exhaustive.len(), "{query} k={k}");
        let full: std::collections::HashMap<u64, f32> =
            Lexical::search_exhaustive(scope, terms, 10_000, Bm25::default())
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
            assert!(scope.allowed.is_none_or(|a| a.contains(pk)));
        }
        pruned.len()
    }

    // Issue 48: past 40 terms tantivy keeps a length rounded down (to
    // 8 % short at 100 terms), and the length a score divides by the
    // average is the rounded one; the average is taken over the same
    // rounded lengths, as the formula's ratio compares like with like
    // (with exact averages, long texts ranked above their due: the
    // reference BM25 of Russian manual pages lost 0.006 by it in
    // `scripts/bm25_rounded_lengths.py`). Checked against
    // the formula computed here from the texts, for chunks and for whole
    // documents, before and after a deletion.
    #[test]
    fn lengths_and_their_average_are_the_ones_the_scorer_reads() {
        let dir = tempfile::tempdir().unwrap();
        let lexical = Lexical::open(dir.path(), true).unwrap().unwrap();
        let text = |n: usize, word: &str| -> String {
            let mut words: Vec<String> = (0..n).map(|i| format!("w{i}x")).collect();
            words[n / 2] = word.to_string();
            words.join(" ")
        };
        // 45, 101, 300 and 1,000 terms: each rounded down by another share.
        let sizes = [45usize, 101, 300, 1000];
        let batch: LexicalBatch = sizes
            .iter()
            .enumerate()
            .map(|(d, &n)| {
                let body = text(n, if d == 3 { "pear" } else { "quince" });
                LexicalDocument {
                    id: id(0, d as u64),
                    text: Some(body.clone()),
                    chunks: vec![(d as u64 + 1, body)],
                    replaces: false,
                    language: None,
                }
            })
            .collect();
        lexical.apply(&batch, 1).unwrap();
        let check = |live: &[usize]| {
            let searcher = lexical.reader.searcher();
            let rounded: Vec<f32> = sizes
                .iter()
                .map(|&n| folio_lexical::scored_length(n) as f32)
                .collect();
            assert!(rounded[1] < 101.0 && rounded[3] < 1000.0, "{rounded:?}");
            let average = live.iter().map(|&d| rounded[d]).sum::<f32>() / live.len() as f32;
            let n = live.len() as f32;
            let with_quince = live.iter().filter(|&&d| d != 3).count() as f32;
            let idf = (1.0 + (n - with_quince + 0.5) / (with_quince + 0.5)).ln();
            for unit in [Unit::Chunk, Unit::Document] {
                for bm25 in [Bm25::default(), Bm25 { k1: 0.9, b: 0.4 }] {
                    let ranked = lexical
                        .rank(&searcher, unit, "quince", None, 10, bm25)
                        .unwrap();
                    assert_eq!(ranked.len(), live.iter().filter(|&&d| d != 3).count());
                    for (key, score) in ranked {
                        let d = match unit {
                            Unit::Chunk => key as usize - 1,
                            Unit::Document => (0..4)
                                .find(|&d| document_key(&id(0, d as u64)) == Some(key))
                                .unwrap(),
                        };
                        let expected = idf * (bm25.k1 + 1.0)
                            / (1.0 + bm25.k1 * (1.0 - bm25.b + bm25.b * rounded[d] / average));
                        assert!(
                            (score - expected).abs() < 1e-4,
                            "{unit:?} {d}: {score} vs {expected}"
                        );
                    }
                }
            }
        };
        check(&[0, 1, 2, 3]);
        let deleted = LexicalDocument {
            id: id(0, 1),
            text: None,
            chunks: Vec::new(),
            replaces: true,
            language: None,
        };
        lexical.apply(&[deleted], 2).unwrap();
        check(&[0, 2, 3]);
    }

    // Issue 13: a document's lexical score is BM25 over its whole text with
    // document statistics, computed here independently from the texts (the
    // reference formula, exact lengths below tantivy's 40-token limit of
    // exactness), and each document's best chunk is its best-scoring one.
    #[test]
    fn documents_score_as_the_reference_formula_over_their_whole_text() {
        let dir = tempfile::tempdir().unwrap();
        let lexical = Lexical::open(dir.path(), true).unwrap().unwrap();
        let documents = [
            ("apple banana", vec!["apple", "banana"]),
            ("apple apple cherry", vec!["apple apple", "cherry"]),
            (
                "banana cherry cherry date",
                vec!["banana cherry", "cherry date"],
            ),
            ("elderberry", vec!["elderberry"]),
        ];
        let mut key = 0;
        let batch: LexicalBatch = documents
            .iter()
            .enumerate()
            .map(|(d, (text, chunks))| LexicalDocument {
                id: id(0, d as u64),
                text: Some(text.to_string()),
                chunks: chunks
                    .iter()
                    .map(|c| {
                        key += 1;
                        (key, c.to_string())
                    })
                    .collect(),
                replaces: false,
                language: None,
            })
            .collect();
        lexical.apply(&batch, 1).unwrap();
        assert_eq!(
            lexical.len().unwrap(),
            7,
            "chunks alone are counted as chunks"
        );
        let searcher = lexical.reader.searcher();

        let query = "cherry apple cherry";
        let bm25 = Bm25::default();
        let lengths: Vec<f32> = documents
            .iter()
            .map(|(t, _)| t.split(' ').count() as f32)
            .collect();
        let avgdl = lengths.iter().sum::<f32>() / 4.0;
        let reference = |d: usize, p: Bm25| -> f32 {
            let words: Vec<&str> = documents[d].0.split(' ').collect();
            [("cherry", 2.0), ("apple", 1.0)]
                .iter()
                .map(|(term, count)| {
                    let df = documents
                        .iter()
                        .filter(|(t, _)| t.split(' ').any(|w| w == *term))
                        .count() as f32;
                    let idf = (1.0 + (4.0 - df + 0.5) / (df + 0.5)).ln();
                    let tf = words.iter().filter(|w| *w == term).count() as f32;
                    count * idf * tf * (p.k1 + 1.0)
                        / (tf + p.k1 * (1.0 - p.b + p.b * lengths[d] / avgdl))
                })
                .sum()
        };
        // Both paths: block-max WAND (standard parameters), term at a time.
        for p in [bm25, Bm25 { k1: 0.9, b: 0.4 }] {
            let ranked = lexical
                .rank(&searcher, Unit::Document, query, None, 10, p)
                .unwrap();
            assert_eq!(ranked.len(), 3, "elderberry matches nothing: {ranked:?}");
            let mut want: Vec<(usize, f32)> = (0..3).map(|d| (d, reference(d, p))).collect();
            want.sort_by(|a, b| b.1.total_cmp(&a.1));
            for ((key, score), (d, expected)) in ranked.iter().zip(&want) {
                assert_eq!(*key, document_key(&id(0, *d as u64)).unwrap());
                assert!(
                    (score - expected).abs() < 1e-4,
                    "document {d}: {score} vs {expected}"
                );
            }
        }
        // Document 1 ranks first with both query terms, which none of its
        // chunks holds together.
        let ranked = lexical
            .rank(&searcher, Unit::Document, query, None, 10, bm25)
            .unwrap();
        assert_eq!(ranked[0].0, document_key(&id(0, 1)).unwrap());

        let keys: Vec<u64> = (0..4).map(|d| document_key(&id(0, d)).unwrap()).collect();
        let best = lexical
            .best_chunks(&searcher, query, &keys, None, bm25)
            .unwrap();
        assert_eq!(best[&keys[0]].0, 1, "apple outscores banana");
        assert_eq!(best[&keys[1]].0, 4, "cherry twice in the query");
        assert_eq!(best[&keys[3]], (7, 0.0), "no match: the first chunk");
        let chunk_scores: std::collections::HashMap<u64, f32> = lexical
            .search(query, None, 10, bm25)
            .unwrap()
            .into_iter()
            .collect();
        assert!((best[&keys[1]].1 - chunk_scores[&4]).abs() < 1e-4);
        // A filter on chunks leaves the allowed ones only.
        let allowed: HashSet<u64> = [2, 6].into_iter().collect();
        let best = lexical
            .best_chunks(&searcher, query, &keys, Some(&allowed), bm25)
            .unwrap();
        assert_eq!(best.len(), 2);
        assert_eq!((best[&keys[0]].0, best[&keys[2]].0), (2, 6));
    }
}
