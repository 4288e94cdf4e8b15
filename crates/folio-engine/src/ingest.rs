//! Ingestion: targets (paths, folders, URLs, raw content) become sources,
//! sources become documents (read, dedup check, extract, chunk), documents
//! are embedded in length-sorted groups and written — each atomically, each
//! reported. A failing source is reported and the rest carry on.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use folio_chunk::{ChunkDraft, TokenCounter};
use folio_core::{
    Chunk, ChunkId, Condition, Document, DocumentId, EmbeddingSpace, ErrorCode, Filter,
    LibraryName, PART_SEPARATOR, RecordSchema, SourceKind, StructuredText, ValidRecord,
    content_hash,
};
use folio_embed::Embedder;
use folio_extract::{Format, Input};
use folio_source::{CanonicalPath, FetchPolicy};
use folio_store::{NewDocument, PutOutcome, StoreError};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::records::{RecordsFormat, read_records, record_hash, record_locator};
use crate::{Engine, EngineError, Result};

/// What to ingest.
#[derive(Debug, Clone)]
pub enum IngestTarget {
    /// A file or a folder (recursively).
    Path(PathBuf),
    /// A file: a folder is refused (tools that ingest one file each).
    File(PathBuf),
    /// An http(s) URL.
    Url(String),
    /// Raw content under a caller-chosen name (the source locator);
    /// `format` is `text`, `markdown` or `html` (default: from the name).
    Content {
        name: String,
        text: String,
        format: Option<String>,
        title: Option<String>,
    },
    /// A file's bytes received over the network (an upload) under its file
    /// name, which is the source locator and decides the format.
    Bytes { name: String, bytes: Vec<u8> },
    /// One structured record, validated against the library's record schema.
    /// (A `Path` to a `.jsonl`, `.json`, `.csv` or `.tsv` file is a file of
    /// records.)
    Record(Map<String, Value>),
    /// A catalogued item (a Zotero attachment, or an item's abstract when it
    /// has no file) under its own locator, with the item's metadata.
    Item {
        locator: String,
        path: Option<PathBuf>,
        text: Option<String>,
        title: Option<String>,
        metadata: Map<String, Value>,
    },
}

#[derive(Debug, Clone)]
pub struct IngestRequest {
    pub library: LibraryName,
    pub targets: Vec<IngestTarget>,
    /// Metadata merged over what extraction finds (front matter, PDF info).
    pub metadata: Map<String, Value>,
    /// A title for the document (meaningful with a single target).
    pub title: Option<String>,
    /// Re-index even when the content hash is unchanged.
    pub force: bool,
    /// Whether a folder walk reads the ZIP and TAR archives it finds (each
    /// member a document under the archive's path); an archive named as a
    /// file is read either way.
    pub archives: bool,
    /// OCR languages for scanned pages, unless an item names its own
    /// (empty: the configured default).
    pub ocr_languages: Vec<String>,
    /// How an already-indexed source is recognised.
    pub dedup: Dedup,
    /// Whether URLs may resolve to private addresses (None: the engine's
    /// configuration decides).
    pub allow_private_urls: Option<bool>,
    /// Whether the report lists every source's item, or only the failed
    /// ones and those with warnings (its counts stay whole). Every item is
    /// also handed to [`Progress::item`] as it settles, so a caller that
    /// prints items as they come need not hold 100,000 of them.
    pub keep_items: bool,
}

impl IngestRequest {
    /// A request with the defaults: no extra metadata or title, content
    /// dedup, the configured OCR languages and URL policy.
    pub fn new(library: LibraryName, targets: Vec<IngestTarget>) -> Self {
        IngestRequest {
            library,
            targets,
            metadata: Map::new(),
            title: None,
            force: false,
            archives: false,
            ocr_languages: Vec::new(),
            dedup: Dedup::Content,
            allow_private_urls: None,
            keep_items: true,
        }
    }
}

/// Which earlier ingest makes a source "already indexed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dedup {
    /// The same source with the same content, or any document of the
    /// library with the same content or DOI (the source becomes one more
    /// locator of it); a skipped document takes the metadata sent again.
    #[default]
    Content,
    /// Only the same source (path, label or URL) in the library: the same
    /// bytes elsewhere are a document of their own, and a skipped document
    /// is left exactly as it is.
    Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IngestStatus {
    Indexed,
    Replaced,
    Skipped,
    Failed,
}

impl From<PutOutcome> for IngestStatus {
    fn from(outcome: PutOutcome) -> Self {
        match outcome {
            PutOutcome::Indexed => IngestStatus::Indexed,
            PutOutcome::Replaced => IngestStatus::Replaced,
            PutOutcome::Skipped => IngestStatus::Skipped,
        }
    }
}

/// The outcome for one source.
#[derive(Debug, Clone, Serialize)]
pub struct IngestItem {
    pub source: String,
    pub status: IngestStatus,
    pub document_id: Option<String>,
    pub title: Option<String>,
    pub format: Option<String>,
    pub chunks: u32,
    pub pages: Option<u32>,
    pub error: Option<EngineError>,
    /// What the document lacks though it was indexed (scanned pages left
    /// unread, an OCR language not installed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The document's language (ISO 639-1), when folio could tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    pub library: String,
    pub items: Vec<IngestItem>,
    pub indexed: usize,
    pub replaced: usize,
    pub skipped: usize,
    pub failed: usize,
    pub chunks: u64,
    pub cancelled: bool,
    /// Sources not reached (or whose group was not written) when the work
    /// was cancelled.
    pub pending: usize,
    pub elapsed_ms: u64,
    /// Time spent computing embeddings, in milliseconds.
    pub embed_ms: f64,
    /// Bytes of the sources read (files, pages fetched, content, records),
    /// whether they were then indexed, skipped or refused.
    pub bytes: u64,
    /// Chunks written by this ingest, by their document's language (ISO
    /// 639-1; "und" when folio could not tell).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub languages: BTreeMap<String, u64>,
    /// What the user may want to do about the library: a model of English
    /// only given text mostly in other languages (`language_advice` of
    /// `model` and `languages`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
    /// The library's model (its space's id), which the advice is about.
    #[serde(skip)]
    pub model: String,
}

impl IngestReport {
    /// Adds another report's items and counts to this one (same library).
    pub fn absorb(&mut self, other: IngestReport) {
        self.indexed += other.indexed;
        self.replaced += other.replaced;
        self.skipped += other.skipped;
        self.failed += other.failed;
        self.chunks += other.chunks;
        self.cancelled |= other.cancelled;
        self.pending += other.pending;
        self.elapsed_ms += other.elapsed_ms;
        self.embed_ms += other.embed_ms;
        self.bytes += other.bytes;
        self.items.extend(other.items);
        for (language, chunks) in other.languages {
            *self.languages.entry(language).or_default() += chunks;
        }
        self.advice = language_advice(&self.model, &self.library, &self.languages);
    }
}

/// The share of a library's new text, in chunks, at or above which a model
/// of English only is worth replacing: most of it is in other languages.
const FOREIGN_SHARE: f64 = 0.5;

/// Advice for an ingest whose text is mostly not English while the
/// library's model reads English only (`model`: the space's model id):
/// which languages, and how to move the library to a multilingual model
/// (re-embedding; its text and lexical index stay).
pub fn language_advice(
    model: &str,
    library: &str,
    languages: &BTreeMap<String, u64>,
) -> Option<String> {
    if !folio_embed::catalog::english_only(model) {
        return None;
    }
    let total: u64 = languages.values().sum();
    let foreign: Vec<(&String, &u64)> = {
        let mut v: Vec<_> = languages
            .iter()
            .filter(|(language, _)| !matches!(language.as_str(), "en" | "und"))
            .collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v
    };
    let share = foreign.iter().map(|(_, n)| **n).sum::<u64>() as f64 / total.max(1) as f64;
    if share < FOREIGN_SHARE {
        return None;
    }
    let named: Vec<String> = foreign
        .iter()
        .take(3)
        .map(|(language, n)| format!("{language} {:.0} %", **n as f64 * 100.0 / total as f64))
        .collect();
    Some(format!(
        "{:.0} % of this text is not English ({}), and the library's model {model} reads \
         English only: its search ranks such text by its words alone. A multilingual model \
         ranks it by meaning too, and finds passages asked about in another language: \
         `folio --model {MULTILINGUAL_MODEL} rebuild {library}` re-embeds the library with it \
         (its text is kept).",
        share * 100.0,
        named.join(", "),
    ))
}

/// The multilingual model folio suggests.
pub const MULTILINGUAL_MODEL: &str = "multilingual-e5-small";

/// Whether a folder walk takes this file: its extension names a format
/// folio reads, and one that walks pick up (not images; archives when
/// `archives`).
pub(crate) fn walked(path: &Path, archives: bool) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .and_then(Format::from_file_name)
        .is_some_and(|format| format.walked(archives))
}

/// The files directly inside `folder` (not its subfolders) that folio can
/// extract, sorted: the targets of a non-recursive folder ingest. Images are
/// left out, as in every folder walk (they are read when named), and
/// archives unless `archives`.
pub fn files_in(folder: &Path, archives: bool) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && walked(p, archives))
        .collect();
    files.sort();
    Ok(files)
}

/// Progress of long work, for progress bars and MCP progress notifications.
pub trait Progress: Send + Sync {
    fn start(&self, total: u64);
    fn advance(&self, done: u64, message: &str);
    fn finish(&self);
    /// Polled between sources: true stops the work after the current group.
    fn cancelled(&self) -> bool {
        false
    }
    /// One source's outcome, once settled (a document's after its
    /// transaction committed), in the order they settle.
    fn item(&self, _item: &IngestItem) {}
    /// Asked before each document is written, with the bytes read for it
    /// (a source, a record, a batch of chunks): an error refuses that
    /// document and nothing of it is written. The hook of an ingest budget
    /// charges here, per document as it is admitted, so concurrent calls
    /// or one call of many sources cannot pass it.
    fn admit(&self, _bytes: u64) -> Result<()> {
        Ok(())
    }
}

/// Reports nothing.
pub struct SilentProgress;

impl Progress for SilentProgress {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn finish(&self) {}
}

/// Chunks embedded together: enough to batch well, small enough that
/// progress moves and memory stays flat.
const GROUP_CHUNKS: usize = 256;
/// Documents prepared (read, extracted, chunked) ahead of the embedding.
const PREPARED_AHEAD: usize = 8;
/// The longest a prepared document waits for its group to fill.
const GROUP_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

enum Source {
    File(CanonicalPath),
    Url(String),
    Content {
        name: String,
        text: String,
        format: Option<String>,
        title: Option<String>,
    },
    Bytes {
        name: String,
        bytes: Vec<u8>,
    },
    Record {
        locator: String,
        record: ValidRecord,
    },
    Item {
        locator: String,
        path: Option<CanonicalPath>,
        text: Option<String>,
        title: Option<String>,
        metadata: Map<String, Value>,
    },
}

impl Source {
    fn locator(&self) -> String {
        match self {
            Source::File(path) => path.locator(),
            Source::Url(url) => url.clone(),
            Source::Content { name, .. } | Source::Bytes { name, .. } => name.clone(),
            Source::Record { locator, .. } | Source::Item { locator, .. } => locator.clone(),
        }
    }
}

/// Sources expanded from one target, each ready or failed with its place.
type Expanded = Vec<std::result::Result<Source, (String, EngineError)>>;

/// The sources of one target, `count` of them, made as they are taken: a
/// folder is walked while its files are prepared, so no list of its files
/// (one that grew with the folder) is held.
struct Sources<'a> {
    count: usize,
    items: Box<dyn Iterator<Item = std::result::Result<Source, (String, EngineError)>> + Send + 'a>,
}

impl From<Expanded> for Sources<'_> {
    fn from(list: Expanded) -> Self {
        Sources {
            count: list.len(),
            items: Box::new(list.into_iter()),
        }
    }
}

/// What preparing a source came to.
enum Step {
    Ready(Box<Prepared>),
    /// Nothing to write: the document (this one, or its twin) is current.
    Skipped(DocumentId),
    /// A container's documents (a message and its attachments, a
    /// mailbox's messages), each with its source: never empty.
    Many(Vec<(String, Result<Step>)>),
}

/// Whether two documents are the same work: the same content, or the same
/// DOI (as `Engine::twin` finds them).
fn same_work(a: &Document, b: &Document) -> bool {
    let doi = |d: &Document| {
        d.metadata
            .get("doi")
            .and_then(Value::as_str)
            .and_then(folio_core::citation::normalise_doi)
    };
    a.content_hash == b.content_hash || doi(a).is_some_and(|x| doi(b).is_some_and(|y| x == y))
}

/// Metadata keys a source's metadata may add to a twin without replacing
/// what the twin has.
fn merge_missing(into: &mut Map<String, Value>, from: &Map<String, Value>) -> bool {
    let mut changed = false;
    for (key, value) in from {
        if !into.contains_key(key) {
            into.insert(key.clone(), value.clone());
            changed = true;
        }
    }
    changed
}

/// A document ready to embed.
struct Prepared {
    document: Document,
    drafts: Vec<ChunkDraft>,
    warnings: Vec<String>,
    /// New to the library under `Dedup::Content`, with no twin stored when
    /// it was read: a twin of this same ingest may have committed since.
    may_have_twin: bool,
    /// The source's bytes, kept with the document (`NewDocument::original`).
    original: Option<Vec<u8>>,
}

/// Whether a document keeps its source's bytes: a PDF folio cannot read
/// again (uploaded, given inline or fetched), so its pages can be shown as
/// images. A file's pages are read from the file itself; a PDF inside a
/// container (an archive, a message) keeps its bytes as a part
/// (`Part::original`).
fn keeps_original(kind: SourceKind, format: folio_extract::Format) -> bool {
    kind != SourceKind::File && format == folio_extract::Format::Pdf
}

/// What extraction made of a source, before chunking.
struct Extracted {
    format: String,
    structured: StructuredText,
    /// The title the request or the source gives (over the format's).
    source_title: Option<String>,
    warnings: Vec<String>,
    /// The source's bytes, when they are kept with the document.
    original: Option<Vec<u8>>,
}

/// A container's source, as read.
struct Container {
    locator: String,
    kind: SourceKind,
    metadata: Map<String, Value>,
    hash: String,
    may_have_twin: bool,
}

/// The sources of a container's parts, for its `parts` metadata.
fn part_sources(container: &str, parts: &[folio_core::Part]) -> Value {
    parts
        .iter()
        .map(|p| Value::String(format!("{container}{PART_SEPARATOR}{}", p.key)))
        .collect()
}

/// Parts of parts are read this deep (a mailbox's message's attachment).
const MAX_PART_DEPTH: usize = 3;

struct Counter<'a>(&'a dyn Embedder);

impl TokenCounter for Counter<'_> {
    fn count(&self, text: &str) -> usize {
        self.0.count_tokens(text)
    }

    fn encode(&self, text: &str) -> Option<(usize, Vec<u32>)> {
        self.0.encode_passage(text)
    }
}

/// A chunk's text to embed, with the token ids the chunker kept for it.
#[derive(Clone, Copy)]
struct Passage<'a> {
    text: &'a str,
    ids: Option<&'a [u32]>,
}

impl Passage<'_> {
    /// What a slice's padding is measured in: tokens when known.
    fn length(&self) -> usize {
        self.ids.map_or(self.text.len(), <[u32]>::len)
    }
}

/// Documents whose every chunk has its vector, ready to write.
type Embedded = Vec<(Prepared, Vec<Vec<f32>>)>;

/// What the embedding stage hands the writer, in source order.
enum Settled {
    /// A source that needs no write (skipped, or failed before embedding).
    Item(IngestItem),
    /// Embedded documents, written in one transaction.
    Embedded(Embedded),
    /// Sources whose group failed to embed.
    Failed(Vec<String>, EngineError),
}

/// Every source of a group that failed as one, each with the error.
fn all_failed(sources: Vec<String>, error: &EngineError) -> impl Iterator<Item = IngestItem> {
    sources
        .into_iter()
        .map(move |s| failed(s.clone(), error.clone().about(s)))
}

/// The outcomes of an ingest as they settle: counts of every item, and the
/// items the request keeps.
#[derive(Default)]
struct Tally {
    items: Vec<IngestItem>,
    indexed: usize,
    replaced: usize,
    skipped: usize,
    failed: usize,
    chunks: u64,
    /// Chunks written, by document language.
    languages: BTreeMap<String, u64>,
}

impl Tally {
    /// Counts an item and hands it to `progress`; keeps it when `keep_all`,
    /// or when it failed or carries warnings.
    fn add(&mut self, item: IngestItem, keep_all: bool, progress: &dyn Progress) {
        progress.item(&item);
        self.chunks += u64::from(item.chunks);
        if matches!(item.status, IngestStatus::Indexed | IngestStatus::Replaced) {
            let language = item.language.as_deref().unwrap_or("und");
            *self.languages.entry(language.to_string()).or_default() += u64::from(item.chunks);
        }
        match item.status {
            IngestStatus::Indexed => self.indexed += 1,
            IngestStatus::Replaced => self.replaced += 1,
            IngestStatus::Skipped => self.skipped += 1,
            IngestStatus::Failed => self.failed += 1,
        }
        if keep_all || item.status == IngestStatus::Failed || !item.warnings.is_empty() {
            self.items.push(item);
        }
    }

    /// Items settled so far.
    fn settled(&self) -> usize {
        self.indexed + self.replaced + self.skipped + self.failed
    }
}

fn failed(source: String, error: EngineError) -> IngestItem {
    IngestItem {
        source,
        status: IngestStatus::Failed,
        document_id: None,
        title: None,
        format: None,
        chunks: 0,
        pages: None,
        error: Some(error),
        warnings: Vec::new(),
        language: None,
    }
}

fn skipped(source: String, id: &DocumentId) -> IngestItem {
    IngestItem {
        source,
        status: IngestStatus::Skipped,
        document_id: Some(id.to_string()),
        title: None,
        format: None,
        chunks: 0,
        pages: None,
        error: None,
        warnings: Vec::new(),
        language: None,
    }
}

/// What the writer does with one embedded document of a group.
enum Slot {
    /// Written with the group, reported in its place.
    Written,
    /// Settled before the write (a twin committed since it was read).
    Settled(Box<IngestItem>),
    /// A twin of a document written with the group: one more locator of
    /// it once the group commits.
    Follows(Box<Document>),
}

/// A title from a path or URL: the last segment without its extension.
fn title_from_locator(locator: &str) -> Option<String> {
    let last = locator.trim_end_matches('/').rsplit('/').next()?;
    let last = last.split(['?', '#']).next()?;
    let stem = last.rsplit_once('.').map_or(last, |(stem, _)| stem);
    (!stem.is_empty()).then(|| stem.to_string())
}

fn content_format_name(name: &str, format: Option<&str>) -> Result<String> {
    Ok(match format {
        None => name.to_string(),
        Some("text" | "txt") => "content.txt".into(),
        Some("markdown" | "md") => "content.md".into(),
        Some("html") => "content.html".into(),
        Some(other) => {
            return Err(EngineError::invalid(format!(
                "unknown content format {other:?} (use text, markdown or html)"
            )));
        }
    })
}

impl Engine {
    /// Ingests every target into the library (created on first write,
    /// pinned to the model's embedding space).
    pub fn ingest(&self, request: &IngestRequest, progress: &dyn Progress) -> Result<IngestReport> {
        self.writable("ingesting")?;
        let started = Instant::now();
        let embedder = self.embedder()?;
        match self.store.library(&request.library) {
            Ok(info) => {
                if let Some(difference) = info.space.difference(embedder.space()) {
                    return Err(EngineError::from(StoreError::EmbeddingMismatch {
                        library: request.library.to_string(),
                        difference,
                    }));
                }
            }
            Err(StoreError::LibraryNotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
        let schema = self.schema_for(request)?;
        let keep = request.keep_items;
        let mut tally = Tally::default();
        let mut sources = Vec::new();
        for target in &request.targets {
            match self.expand(target, &request.library, schema.as_ref(), request.archives) {
                Ok(expanded) => sources.push(expanded),
                Err((locator, error)) => tally.add(failed(locator, error), keep, progress),
            }
        }
        let refused = tally.settled();
        progress.start(sources.iter().map(|s| s.count as u64).sum());
        let chunk_config = self.chunk_config(&*embedder)?;
        let counter = Counter(&*embedder);
        let space = embedder.space().clone();
        let mut group: Vec<Prepared> = Vec::new();
        let mut cancelled = false;
        let mut embed_ms = 0.0;
        let mut group_started = Instant::now();
        // Three stages run at once, so the encoder is never idle: a thread
        // reads, extracts and chunks documents (at most PREPARED_AHEAD
        // ahead), this one embeds them in groups, and a writer commits each
        // embedded group while the next one embeds. Queues are bounded, so
        // memory stays flat on any folder, and the order is kept. A document
        // is reported only once its transaction committed.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (read, total, tally) = std::thread::scope(|scope| {
            let (ready, prepared) = std::sync::mpsc::sync_channel(PREPARED_AHEAD);
            let (stop, chunk_config, counter) = (&stop, &chunk_config, &counter);
            // It counts every source it takes, and those it leaves when
            // stopped: what is not settled then is pending.
            let producer = scope.spawn(move || {
                let mut read = 0u64;
                let mut taken = 0usize;
                let mut sources = sources.into_iter().flat_map(|s| s.items);
                for source in sources.by_ref() {
                    taken += 1;
                    if stop.load(std::sync::atomic::Ordering::Relaxed) || progress.cancelled() {
                        break;
                    }
                    let (locator, step) = match source {
                        Ok(source) => {
                            let locator = source.locator();
                            let step = self.prepare(
                                request,
                                source,
                                chunk_config,
                                counter,
                                progress,
                                &mut read,
                            );
                            // A container's documents are counted each.
                            if let Ok(Step::Many(steps)) = &step {
                                taken += steps.len().saturating_sub(1);
                            }
                            (locator, step)
                        }
                        Err((locator, error)) => (locator, Err(error)),
                    };
                    if ready.send((locator, step)).is_err() {
                        break;
                    }
                }
                (read, taken + sources.count())
            });
            let (settle, settled) = std::sync::mpsc::sync_channel::<Settled>(1);
            let space = &space;
            // The writer settles the items after those the expansion failed.
            let writer = scope.spawn(move || {
                let mut tally = tally;
                for message in settled {
                    match message {
                        Settled::Item(item) => {
                            progress.advance(1, &item.source);
                            tally.add(item, keep, progress);
                        }
                        Settled::Embedded(documents) => {
                            let count = documents.len() as u64;
                            let sources: Vec<String> = documents
                                .iter()
                                .map(|(p, _)| p.document.source.clone())
                                .collect();
                            let done: Vec<IngestItem> =
                                match self.write_embedded(request, space, documents) {
                                    Ok(done) => done,
                                    Err(error) => all_failed(sources, &error).collect(),
                                };
                            for item in done {
                                tally.add(item, keep, progress);
                            }
                            progress.advance(count, "");
                        }
                        Settled::Failed(sources, error) => {
                            progress.advance(sources.len() as u64, "");
                            for item in all_failed(sources, &error) {
                                tally.add(item, keep, progress);
                            }
                        }
                    }
                }
                tally
            });
            // Embeds a group and hands what it made to the writer; false
            // when the work was cancelled (the documents embedded by then
            // are still written) or the writer is gone.
            let embed = |group: Vec<Prepared>, embed_ms: &mut f64| -> bool {
                let (message, complete) = Self::embed_group(&*embedder, group, progress, embed_ms);
                settle.send(message).is_ok() && complete
            };
            // A container's documents are settled one by one.
            let prepared = prepared.into_iter().flat_map(|(locator, step)| match step {
                Ok(Step::Many(steps)) => steps,
                step => vec![(locator, step)],
            });
            for (locator, step) in prepared {
                if progress.cancelled() {
                    cancelled = true;
                    break;
                }
                let settled = match step {
                    Ok(Step::Ready(prepared)) => {
                        if group.is_empty() {
                            group_started = Instant::now();
                        }
                        group.push(*prepared);
                        None
                    }
                    Ok(Step::Skipped(id)) => Some(skipped(locator.clone(), &id)),
                    // Flattened above; a part's parts are flattened by
                    // `prepare_parts`.
                    Ok(Step::Many(_)) => None,
                    Err(error) => Some(failed(locator.clone(), error.about(locator.clone()))),
                };
                if let Some(item) = settled
                    && settle.send(Settled::Item(item)).is_err()
                {
                    break;
                }
                // A group is embedded when big enough to embed well, or
                // when its first document has waited GROUP_WAIT: documents
                // slow to extract still commit often, so work cut short
                // keeps its progress.
                let full = group.iter().map(|p| p.drafts.len()).sum::<usize>() >= GROUP_CHUNKS;
                if (full || (!group.is_empty() && group_started.elapsed() >= GROUP_WAIT))
                    && !embed(std::mem::take(&mut group), &mut embed_ms)
                {
                    cancelled = true;
                    break;
                }
            }
            // The producer stops at its next document; what it prepared
            // beyond a cancellation is dropped, never written.
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            if progress.cancelled() {
                cancelled = true;
            }
            if !cancelled && !group.is_empty() && !embed(std::mem::take(&mut group), &mut embed_ms)
            {
                cancelled = true;
            }
            drop(settle);
            let (read, taken) = producer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let tally = writer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, refused + taken, tally)
        });
        self.store.flush()?;
        progress.finish();
        let report = IngestReport {
            library: request.library.to_string(),
            indexed: tally.indexed,
            replaced: tally.replaced,
            skipped: tally.skipped,
            failed: tally.failed,
            chunks: tally.chunks,
            cancelled,
            pending: total - tally.settled(),
            elapsed_ms: started.elapsed().as_millis() as u64,
            embed_ms,
            bytes: read,
            items: tally.items,
            advice: language_advice(&space.model, request.library.as_str(), &tally.languages),
            languages: tally.languages,
            model: space.model.clone(),
        };
        self.totals.add(&report);
        Ok(report)
    }

    /// The library's record schema when the request carries records; a
    /// request without records needs none.
    fn schema_for(&self, request: &IngestRequest) -> Result<Option<RecordSchema>> {
        let has_records = request.targets.iter().any(|t| match t {
            IngestTarget::Record(_) => true,
            IngestTarget::Path(p) | IngestTarget::File(p) => {
                RecordsFormat::from_path(p).is_some() && !p.is_dir()
            }
            _ => false,
        });
        if !has_records {
            return Ok(None);
        }
        match self.store.record_schema(&request.library) {
            Ok(schema) => Ok(schema),
            Err(StoreError::LibraryNotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Validates one record into a source.
    fn record_source(
        library: &LibraryName,
        schema: Option<&RecordSchema>,
        record: &Map<String, Value>,
    ) -> Result<Source> {
        let Some(schema) = schema else {
            return Err(EngineError::invalid(format!(
                "library {library} declares no record schema: records need one \
                 (typed fields, the text field and the key) declared first"
            )));
        };
        let record = schema.validate(record)?;
        Ok(Source::Record {
            locator: record_locator(&record),
            record,
        })
    }

    /// The records of a records file, each validated.
    fn records_file(
        &self,
        path: &CanonicalPath,
        format: RecordsFormat,
        library: &LibraryName,
        schema: Option<&RecordSchema>,
    ) -> Result<Expanded> {
        let bytes = folio_source::read_file(path, self.config.limits.max_file_bytes)?;
        let shown = path.locator();
        Ok(read_records(&bytes, format)?
            .into_iter()
            .map(|(place, record)| {
                record
                    .and_then(|r| Self::record_source(library, schema, &r))
                    .map_err(|e| {
                        let at = format!("{shown} {place}");
                        (at.clone(), e.about(at))
                    })
            })
            .collect())
    }

    /// Turns a target into sources: a folder into its files (those with an
    /// extension folio reads), a path into a confined canonical path, a
    /// records file into its records.
    fn expand(
        &self,
        target: &IngestTarget,
        library: &LibraryName,
        schema: Option<&RecordSchema>,
        archives: bool,
    ) -> std::result::Result<Sources<'_>, (String, EngineError)> {
        match target {
            IngestTarget::Item {
                locator,
                path,
                text,
                title,
                metadata,
            } => {
                let path = match path {
                    Some(path) => Some(
                        self.roots
                            .confine(path)
                            .map_err(|e| (locator.clone(), EngineError::from(e)))?,
                    ),
                    None => None,
                };
                if path.is_none() && text.is_none() {
                    return Err((
                        locator.clone(),
                        EngineError::invalid("an item needs a file or a text"),
                    ));
                }
                Ok(vec![Ok(Source::Item {
                    locator: locator.clone(),
                    path,
                    text: text.clone(),
                    title: title.clone(),
                    metadata: metadata.clone(),
                })]
                .into())
            }
            IngestTarget::Record(record) => Ok(vec![
                Self::record_source(library, schema, record).map_err(|e| ("record".into(), e)),
            ]
            .into()),
            IngestTarget::Path(path) | IngestTarget::File(path) => {
                let shown = path.display().to_string();
                let canonical = self
                    .roots
                    .confine(path)
                    .map_err(|e| (shown.clone(), EngineError::from(e)))?;
                if matches!(target, IngestTarget::File(_)) && canonical.as_path().is_dir() {
                    return Err((
                        shown,
                        EngineError::invalid("a folder, not a file (ingest folders as folders)"),
                    ));
                }
                // A CSV or TSV file is records where the library declares a
                // record schema, else a document holding one table.
                if let Some(format) = RecordsFormat::from_path(canonical.as_path())
                    .filter(|_| !canonical.as_path().is_dir())
                    .filter(|f| schema.is_some() || !matches!(f, RecordsFormat::Csv { .. }))
                {
                    return self
                        .records_file(&canonical, format, library, schema)
                        .map(Sources::from)
                        .map_err(|e| (shown.clone(), e));
                }
                if canonical.as_path().is_dir() {
                    // Counted first (for progress), then walked again as
                    // the files are prepared.
                    let wanted: &(dyn Fn(&Path) -> bool + Sync) = if archives {
                        &|path| walked(path, true)
                    } else {
                        &|path| walked(path, false)
                    };
                    let count = folio_source::count_walked(&canonical, wanted);
                    let items =
                        folio_source::walk_lazily(&canonical, &self.roots, wanted).map(move |r| {
                            r.map(Source::File).map_err(|e| {
                                let error = EngineError::from(e);
                                (error.input.clone().unwrap_or_else(|| shown.clone()), error)
                            })
                        });
                    Ok(Sources {
                        count,
                        items: Box::new(items),
                    })
                } else {
                    Ok(vec![Ok(Source::File(canonical))].into())
                }
            }
            IngestTarget::Url(url) => {
                let parsed = url::Url::parse(url).map_err(|e| {
                    (
                        url.clone(),
                        EngineError::new(ErrorCode::UrlNotAllowed, format!("not a URL: {e}")),
                    )
                })?;
                Ok(vec![Ok(Source::Url(parsed.to_string()))].into())
            }
            IngestTarget::Content {
                name,
                text,
                format,
                title,
            } => {
                if name.trim().is_empty() {
                    return Err((
                        name.clone(),
                        EngineError::invalid("content needs a non-empty name"),
                    ));
                }
                Ok(vec![Ok(Source::Content {
                    name: name.clone(),
                    text: text.clone(),
                    format: format.clone(),
                    title: title.clone(),
                })]
                .into())
            }
            IngestTarget::Bytes { name, bytes } => {
                if name.trim().is_empty() {
                    return Err((
                        name.clone(),
                        EngineError::invalid("an upload needs a file name"),
                    ));
                }
                Ok(vec![Ok(Source::Bytes {
                    name: name.clone(),
                    bytes: bytes.clone(),
                })]
                .into())
            }
        }
    }

    /// Reads, dedup-checks, extracts and chunks one source. Skipped when the
    /// stored document has the same content hash, or when another document
    /// of the library has the same content or DOI (the source then becomes
    /// one more locator of that document).
    fn prepare(
        &self,
        request: &IngestRequest,
        source: Source,
        config: &folio_chunk::ChunkConfig,
        counter: &Counter<'_>,
        progress: &dyn Progress,
        read: &mut u64,
    ) -> Result<Step> {
        let limits = &self.config.limits;
        let locator = source.locator();
        let id = DocumentId::derive(&request.library, &locator);
        let mut metadata = Map::new();
        let mut source_title = None;
        let mut record_content = None;
        let (bytes, name, mime, kind) = match source {
            Source::Item {
                path,
                text,
                title,
                metadata: fields,
                ..
            } => {
                source_title = title;
                metadata = fields;
                match (path, text) {
                    (Some(path), _) => {
                        let bytes = folio_source::read_file(&path, limits.max_file_bytes)?;
                        (bytes, path.locator(), None, SourceKind::File)
                    }
                    (None, text) => (
                        text.unwrap_or_default().into_bytes(),
                        "item.md".to_string(),
                        None,
                        SourceKind::Content,
                    ),
                }
            }
            Source::Record { record, .. } => {
                record_content = Some(record_hash(&record));
                source_title = record.title;
                metadata = record.fields;
                (
                    record.text.into_bytes(),
                    "record.txt".into(),
                    None,
                    SourceKind::Record,
                )
            }
            Source::File(path) => {
                // The stat before the bytes: a write in between leaves a
                // newer stat than the one recorded, so the next sync pass
                // reads the file again instead of keeping stale text.
                let stat = std::fs::metadata(path.as_path());
                let bytes = folio_source::read_file(&path, limits.max_file_bytes)?;
                if let Ok(stat) = stat {
                    if let Ok(modified) = stat.modified() {
                        metadata.insert(
                            "file_modified".into(),
                            Value::String(crate::rfc3339(modified)),
                        );
                    }
                    // What the next sync pass compares, without reading.
                    crate::sync::Stat::of(&stat).record(&mut metadata);
                }
                (bytes, locator.clone(), None, SourceKind::File)
            }
            Source::Url(url) => {
                let policy = FetchPolicy {
                    allow_private: request
                        .allow_private_urls
                        .unwrap_or(self.config.allow_private_urls),
                    max_bytes: limits.max_url_bytes,
                    timeout: limits.url_timeout(),
                    max_redirects: limits.max_redirects,
                };
                let fetched = folio_source::fetch(&url, &policy)?;
                metadata.insert("url".into(), Value::String(fetched.url.clone()));
                (
                    fetched.bytes,
                    fetched.url,
                    fetched.content_type,
                    SourceKind::Url,
                )
            }
            Source::Content {
                name,
                text,
                format,
                title,
            } => {
                source_title = title;
                let name = content_format_name(&name, format.as_deref())?;
                (text.into_bytes(), name, None, SourceKind::Content)
            }
            Source::Bytes { name, bytes } => {
                if bytes.len() as u64 > limits.max_file_bytes {
                    return Err(EngineError::new(
                        ErrorCode::TooLarge,
                        format!(
                            "{} bytes, over the limit of {}",
                            bytes.len(),
                            limits.max_file_bytes
                        ),
                    ));
                }
                (bytes, name, None, SourceKind::Content)
            }
        };
        *read += bytes.len() as u64;
        progress.admit(bytes.len() as u64)?;
        // A record's hash covers its fields: a match means they are current.
        let fields_hashed = record_content.is_some();
        let hash = record_content.unwrap_or_else(|| content_hash(&bytes));
        let mut may_have_twin = false;
        if !request.force {
            match self.store.content_hash(&id)? {
                Some(stored) if stored == hash && request.dedup == Dedup::Source => {
                    return Ok(Step::Skipped(id));
                }
                Some(stored) if stored == hash => {
                    let empty = Map::new();
                    let source = if fields_hashed { &empty } else { &metadata };
                    self.refresh_metadata(&request.library, &id, source, &request.metadata)?;
                    return Ok(Step::Skipped(id));
                }
                Some(_) => {}
                None if request.dedup == Dedup::Source => {}
                None => {
                    let doi = metadata.get("doi").or_else(|| request.metadata.get("doi"));
                    if let Some(twin) =
                        self.join_twin(&request.library, &hash, doi, &locator, &metadata)?
                    {
                        return Ok(Step::Skipped(twin));
                    }
                    may_have_twin = true;
                }
            }
        }
        // Figure images are only worth decoding and handing over when
        // they will be read.
        let unread_figures;
        let extraction_limits = if self.reads_figures() {
            limits
        } else {
            unread_figures = folio_core::Limits {
                max_ocr_pages: 0,
                ..limits.clone()
            };
            &unread_figures
        };
        let (format, mut structured) = crate::sandbox::extract(
            &self.config.extraction,
            Input {
                bytes: &bytes,
                name: Some(&name),
                mime: mime.as_deref(),
            },
            extraction_limits,
            &|| progress.cancelled(),
        )?;
        let language = metadata
            .get("language")
            .or_else(|| request.metadata.get("language"))
            .and_then(Value::as_str);
        let stop = || progress.cancelled();
        let reading = crate::ocr::Reading {
            item_language: language,
            requested: &request.ocr_languages,
            stop: &stop,
        };
        let mut warnings = self.read_scanned_pages(&bytes, format, &mut structured, &reading)?;
        warnings.extend(self.read_figures(&mut structured, &reading)?);
        let original = keeps_original(kind, format).then_some(bytes);
        // The request's title names what was asked for: the container's
        // own document, never its parts.
        let source_title = request.title.clone().or(source_title);
        let parts = std::mem::take(&mut structured.parts);
        if !parts.is_empty() {
            return self.prepare_container(
                request,
                Container {
                    locator,
                    kind,
                    metadata,
                    hash,
                    may_have_twin,
                },
                Extracted {
                    format: format.as_str().to_string(),
                    structured,
                    source_title,
                    warnings,
                    original: None,
                },
                parts,
                config,
                counter,
            );
        }
        let format_name = match kind {
            SourceKind::Record => "record".to_string(),
            _ => format.as_str().to_string(),
        };
        self.finish(
            request,
            id,
            locator,
            kind,
            hash,
            metadata,
            Extracted {
                format: format_name,
                structured,
                source_title,
                warnings,
                original,
            },
            may_have_twin,
            config,
            counter,
        )
    }

    /// Chunks an extracted document and makes it ready to embed.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        request: &IngestRequest,
        id: DocumentId,
        locator: String,
        kind: SourceKind,
        hash: String,
        metadata: Map<String, Value>,
        extracted: Extracted,
        may_have_twin: bool,
        config: &folio_chunk::ChunkConfig,
        counter: &Counter<'_>,
    ) -> Result<Step> {
        let limits = &self.config.limits;
        let Extracted {
            format,
            structured,
            source_title,
            warnings,
            original,
        } = extracted;
        let empty = || {
            let mut reason = "no text to index".to_string();
            for warning in &warnings {
                reason.push_str("; ");
                reason.push_str(warning);
            }
            EngineError::new(ErrorCode::EmptyContent, reason)
        };
        // A document of headings alone is indexed by them, unless its
        // extraction left something unread (an image without OCR): then it
        // is refused with the reason, so that an ingest once the reason is
        // gone reads it whole rather than skipping it as unchanged.
        let headings_only = structured.blocks.iter().all(|b| {
            matches!(b.kind, folio_core::structured::BlockKind::Heading(_))
                || b.text.trim().is_empty()
        });
        if structured.is_empty() || (headings_only && !warnings.is_empty()) {
            return Err(empty());
        }
        let rendered = structured.render();
        let title = source_title
            .or_else(|| structured.title.clone())
            .or_else(|| title_from_locator(&locator));
        let mut for_chunking = structured;
        for_chunking.title = title.clone();
        let max_chunks = limits.max_chunks_per_document as usize;
        let drafts = folio_chunk::chunk(&for_chunking, &rendered, config, counter, max_chunks);
        if drafts.is_empty() {
            return Err(empty());
        }
        if drafts.len() > max_chunks {
            return Err(EngineError::new(
                ErrorCode::TooLarge,
                format!(
                    "more than {max_chunks} chunks (limit max_chunks_per_document): \
                     split the document, or raise the limit"
                ),
            ));
        }
        let mut merged = for_chunking.metadata;
        merged.extend(metadata);
        merged.extend(request.metadata.clone());
        record_language(&mut merged, Some(&rendered.text));
        let document = Document {
            id,
            library: request.library.clone(),
            source: locator,
            source_kind: kind,
            format,
            title,
            content_hash: hash,
            metadata: merged,
            page_count: for_chunking.page_count,
            chunk_count: drafts.len() as u32,
            text: rendered.text,
            ingested_at: self.now(),
        };
        Ok(Step::Ready(Box::new(Prepared {
            document,
            drafts,
            warnings,
            may_have_twin,
            original,
        })))
    }

    /// A container's documents: its own text (a message's body), when it
    /// has some, under its own source, and each part (an attachment, a
    /// mailbox's message) under `source#key`, linked to the container by
    /// `container` in its metadata; parts of parts in turn. The library's
    /// documents of parts the container no longer holds are deleted.
    #[allow(clippy::too_many_arguments)]
    fn prepare_container(
        &self,
        request: &IngestRequest,
        container: Container,
        own: Extracted,
        parts: Vec<folio_core::Part>,
        config: &folio_chunk::ChunkConfig,
        counter: &Counter<'_>,
    ) -> Result<Step> {
        let Container {
            locator,
            kind,
            metadata,
            hash,
            may_have_twin,
        } = container;
        let mut steps = Vec::new();
        if !own.structured.is_empty() {
            let id = DocumentId::derive(&request.library, &locator);
            let mut own_metadata = metadata.clone();
            own_metadata.insert("parts".into(), part_sources(&locator, &parts));
            let step = self.finish(
                request,
                id,
                locator.clone(),
                kind,
                hash,
                own_metadata,
                own,
                may_have_twin,
                config,
                counter,
            );
            steps.push((locator.clone(), step));
        }
        self.prepare_parts(
            request, &locator, kind, &metadata, parts, config, counter, &mut steps, 0,
        );
        // Every part read is one of the steps; the others are gone.
        let kept: HashSet<&str> = steps.iter().map(|(source, _)| source.as_str()).collect();
        self.delete_stale_parts(&request.library, &locator, &kept)?;
        if steps.is_empty() {
            return Err(EngineError::new(
                ErrorCode::EmptyContent,
                "no text to index",
            ));
        }
        Ok(Step::Many(steps))
    }

    #[allow(clippy::too_many_arguments)]
    fn prepare_parts(
        &self,
        request: &IngestRequest,
        container: &str,
        kind: SourceKind,
        metadata: &Map<String, Value>,
        parts: Vec<folio_core::Part>,
        config: &folio_chunk::ChunkConfig,
        counter: &Counter<'_>,
        steps: &mut Vec<(String, Result<Step>)>,
        depth: usize,
    ) {
        for mut part in parts {
            let locator = format!("{container}{PART_SEPARATOR}{}", part.key);
            let id = DocumentId::derive(&request.library, &locator);
            let inner = std::mem::take(&mut part.text.parts);
            // A part's hash is of what was extracted: the container's
            // bytes changing elsewhere leaves an unchanged part skipped.
            let hash = serde_json::to_vec(&part.text)
                .map(|bytes| content_hash(&bytes))
                .unwrap_or_default();
            let mut own = metadata.clone();
            own.insert("container".into(), Value::String(container.to_string()));
            if !inner.is_empty() {
                own.insert("parts".into(), part_sources(&locator, &inner));
            }
            let step = match self.store.content_hash(&id) {
                Ok(Some(stored)) if stored == hash && !request.force => {
                    // The container changed around it: its recorded file
                    // stat is brought up to date.
                    self.refresh_metadata(&request.library, &id, &own, &request.metadata)
                        .map(|()| Step::Skipped(id))
                }
                Ok(_) => self.finish(
                    request,
                    id,
                    locator.clone(),
                    kind,
                    hash,
                    own,
                    Extracted {
                        format: part.format,
                        structured: part.text,
                        source_title: None,
                        warnings: Vec::new(),
                        original: part.original.take(),
                    },
                    false,
                    config,
                    counter,
                ),
                Err(e) => Err(e.into()),
            };
            steps.push((locator.clone(), step));
            if depth < MAX_PART_DEPTH {
                self.prepare_parts(
                    request,
                    &locator,
                    kind,
                    metadata,
                    inner,
                    config,
                    counter,
                    steps,
                    depth + 1,
                );
            }
        }
    }

    /// Deletes the documents of parts of `container` not in `kept`.
    fn delete_stale_parts(
        &self,
        library: &LibraryName,
        container: &str,
        kept: &HashSet<&str>,
    ) -> Result<()> {
        let filter = Filter {
            conditions: vec![Condition::PathPrefix(format!(
                "{container}{PART_SEPARATOR}"
            ))],
        };
        let stored = match self.store.find_documents(library, &filter, usize::MAX / 2) {
            Ok(found) => found,
            Err(StoreError::LibraryNotFound(_)) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        for document in stored {
            if !kept.contains(document.source.as_str()) {
                match self.store.delete_document(&document.id) {
                    Ok(()) | Err(StoreError::NotFound { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    /// Brings a skipped document's metadata up to date with its source
    /// (a Zotero item edited, its file unchanged).
    fn refresh_metadata(
        &self,
        library: &LibraryName,
        id: &DocumentId,
        source: &Map<String, Value>,
        request: &Map<String, Value>,
    ) -> Result<()> {
        if source.is_empty() && request.is_empty() {
            return Ok(());
        }
        // The summary, not the document: its text is not needed.
        let by_id = folio_core::Filter {
            conditions: vec![folio_core::Condition::Equals {
                field: "document_id".into(),
                value: Value::String(id.to_string()),
            }],
        };
        let Some(document) = self.store.find_documents(library, &by_id, 1)?.pop() else {
            return Ok(());
        };
        let mut metadata = document.metadata.clone();
        metadata.extend(source.clone());
        metadata.extend(request.clone());
        record_language(&mut metadata, None);
        if metadata != document.metadata {
            self.store.update_metadata(id, metadata)?;
        }
        Ok(())
    }

    /// Another document of the library with the same content hash, or the
    /// same DOI.
    fn twin(
        &self,
        library: &LibraryName,
        hash: &str,
        doi: Option<&Value>,
    ) -> Result<Option<folio_core::DocumentSummary>> {
        let mut filters = vec![folio_core::Condition::Equals {
            field: "content_hash".into(),
            value: Value::String(hash.to_string()),
        }];
        if let Some(doi) = doi
            .and_then(Value::as_str)
            .and_then(folio_core::citation::normalise_doi)
        {
            filters.push(folio_core::Condition::EqualsFold {
                field: "doi".into(),
                value: doi,
            });
        }
        for condition in filters {
            let filter = folio_core::Filter {
                conditions: vec![condition],
            };
            match self.store.find_documents(library, &filter, 1) {
                Ok(mut found) if !found.is_empty() => return Ok(Some(found.remove(0))),
                Ok(_) | Err(StoreError::LibraryNotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(None)
    }

    /// Records `locator` as one more source of `twin`, and fills citation
    /// fields the twin lacks from the new source's metadata. The twin's own
    /// source comes first, the others in order, whichever was found first.
    fn add_locator(
        &self,
        twin: &folio_core::DocumentSummary,
        locator: &str,
        metadata: &Map<String, Value>,
    ) -> Result<()> {
        let mut merged = twin.metadata.clone();
        let mut changed = merge_missing(&mut merged, metadata);
        let locators = merged
            .entry("locators")
            .or_insert_with(|| Value::Array(vec![Value::String(twin.source.clone())]));
        if let Value::Array(list) = locators
            && !list.iter().any(|l| l.as_str() == Some(locator))
        {
            list.push(Value::String(locator.to_string()));
            if let Some((_, others)) = list.split_first_mut() {
                others.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            }
            changed = true;
        }
        if changed {
            self.store.update_metadata(&twin.id, merged)?;
        }
        Ok(())
    }

    /// Embeds a group, adding the milliseconds spent to `embed_ms`; when
    /// cancelled part way, keeps the documents whose chunks were all
    /// embedded. Returns what the writer is to do with it and whether the
    /// whole group was embedded.
    fn embed_group(
        embedder: &dyn Embedder,
        group: Vec<Prepared>,
        progress: &dyn Progress,
        embed_ms: &mut f64,
    ) -> (Settled, bool) {
        let passages: Vec<Passage<'_>> = group
            .iter()
            .flat_map(|p| {
                p.drafts.iter().map(|d| Passage {
                    text: &d.embed_text,
                    ids: d.ids.as_deref(),
                })
            })
            .collect();
        let sizes: Vec<usize> = group.iter().map(|p| p.drafts.len()).collect();
        let started = Instant::now();
        let vectors = Self::embed_cancellable(embedder, &passages, &sizes, progress);
        *embed_ms += started.elapsed().as_secs_f64() * 1e3;
        drop(passages);
        let vectors = match vectors {
            Ok(vectors) => vectors,
            Err(error) => {
                let sources = group.into_iter().map(|p| p.document.source).collect();
                return (Settled::Failed(sources, error), true);
            }
        };
        let complete = vectors.iter().all(Option::is_some);
        // A document is written only with every chunk's vector.
        let mut vectors = vectors.into_iter();
        let embedded = group
            .into_iter()
            .filter_map(|p| {
                // Taken whole first: collecting into an Option would stop
                // at the first gap and leave the rest to the next document.
                let mine: Vec<Option<Vec<f32>>> = vectors.by_ref().take(p.drafts.len()).collect();
                let mine: Option<Vec<Vec<f32>>> = mine.into_iter().collect();
                mine.map(|v| (p, v))
            })
            .collect();
        (Settled::Embedded(embedded), complete)
    }

    /// Embeds `passages` (the chunks of documents of `sizes` chunks each,
    /// in order) in slices of similar length, checking for cancellation before
    /// each slice. Slices in document order would pad every batch to its
    /// longest chunk (a document's short last chunk beside full ones), so
    /// texts are sorted by length within runs of whole documents of about
    /// `RUN` chunks: a run is short enough that cancelled work keeps what
    /// the runs before it finished. On SciFact's chunks, batches sorted
    /// within runs of 64 spent 0.894 of their tokens on text (the rest is
    /// padding), runs of 128 0.943, the whole group of 256 0.966. Returns
    /// each text's vector in input order, `None` for the texts not reached
    /// when cancelled.
    fn embed_cancellable(
        embedder: &dyn Embedder,
        passages: &[Passage<'_>],
        sizes: &[usize],
        progress: &dyn Progress,
    ) -> Result<Vec<Option<Vec<f32>>>> {
        const SLICE: usize = 16;
        const RUN: usize = 8 * SLICE;
        let mut vectors = vec![None; passages.len()];
        let mut start = 0;
        let mut sizes = sizes.iter().peekable();
        while sizes.peek().is_some() {
            let mut end = start;
            while let Some(&&size) = sizes.peek()
                && (end == start || end - start + size <= RUN)
            {
                end += size;
                sizes.next();
            }
            let mut order: Vec<usize> = (start..end).collect();
            order.sort_by_key(|&i| passages[i].length());
            for slice in order.chunks(SLICE) {
                if progress.cancelled() {
                    return Ok(vectors);
                }
                // Token ids kept by the chunker are run as they are; a
                // passage without them is tokenised here.
                let ids: Option<Vec<&[u32]>> = slice.iter().map(|&i| passages[i].ids).collect();
                let embedded = match ids {
                    Some(ids) => embedder.embed_passage_ids(&ids)?,
                    None => {
                        let texts: Vec<&str> = slice.iter().map(|&i| passages[i].text).collect();
                        embedder.embed_passages(&texts)?
                    }
                };
                for (&i, vector) in slice.iter().zip(embedded) {
                    vectors[i] = Some(vector);
                }
            }
            start = end;
        }
        Ok(vectors)
    }

    /// Writes embedded documents in one transaction and returns their
    /// items once it committed.
    fn write_embedded(
        &self,
        request: &IngestRequest,
        space: &EmbeddingSpace,
        embedded: Embedded,
    ) -> Result<Vec<IngestItem>> {
        if embedded.is_empty() {
            return Ok(Vec::new());
        }
        // Twins within this ingest: `prepare` looked for one before the
        // first copy committed. A twin stored since, or one written with
        // this group, makes the document one more locator of it, as a later
        // ingest of it would.
        let mut slots = Vec::with_capacity(embedded.len());
        let mut writing: Embedded = Vec::with_capacity(embedded.len());
        for (prepared, vectors) in embedded {
            if prepared.may_have_twin {
                let document = &prepared.document;
                if writing
                    .iter()
                    .any(|(p, _)| same_work(&p.document, document))
                {
                    slots.push(Slot::Follows(Box::new(prepared.document)));
                    continue;
                }
                match self.join_twin_of(&request.library, document) {
                    Ok(None) => {}
                    Ok(Some(twin)) => {
                        slots.push(Slot::Settled(Box::new(skipped(
                            document.source.clone(),
                            &twin,
                        ))));
                        continue;
                    }
                    Err(error) => {
                        let source = document.source.clone();
                        slots.push(Slot::Settled(Box::new(failed(
                            source.clone(),
                            error.about(source),
                        ))));
                        continue;
                    }
                }
            }
            slots.push(Slot::Written);
            writing.push((prepared, vectors));
        }
        let mut written = self.write_group(request, space, writing)?.into_iter();
        Ok(slots
            .into_iter()
            .filter_map(|slot| match slot {
                Slot::Written => written.next(),
                Slot::Settled(item) => Some(*item),
                Slot::Follows(document) => {
                    let source = document.source.clone();
                    Some(match self.join_twin_of(&request.library, &document) {
                        Ok(Some(twin)) => skipped(source, &twin),
                        // Its twin, committed a moment ago, was deleted
                        // by another writer since.
                        Ok(None) => failed(
                            source.clone(),
                            EngineError::new(
                                ErrorCode::Internal,
                                "its twin in this ingest was not written",
                            )
                            .about(source),
                        ),
                        Err(error) => failed(source.clone(), error.about(source)),
                    })
                }
            })
            .collect())
    }

    /// Records `locator` as one more source of a stored twin (the same
    /// content `hash` or `doi`), returning the twin's id; `None` when none
    /// is stored.
    fn join_twin(
        &self,
        library: &LibraryName,
        hash: &str,
        doi: Option<&Value>,
        locator: &str,
        metadata: &Map<String, Value>,
    ) -> Result<Option<DocumentId>> {
        // An ingest's workers join twins at once: each reads the twin and
        // writes it back under this lock, or one's locator overwrote
        // another's.
        static JOINING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _joining = JOINING.lock().unwrap_or_else(|p| p.into_inner());
        let Some(twin) = self.twin(library, hash, doi)? else {
            return Ok(None);
        };
        self.add_locator(&twin, locator, metadata)?;
        Ok(Some(twin.id))
    }

    /// `join_twin` for a prepared document.
    fn join_twin_of(&self, library: &LibraryName, d: &Document) -> Result<Option<DocumentId>> {
        self.join_twin(
            library,
            &d.content_hash,
            d.metadata.get("doi"),
            &d.source,
            &d.metadata,
        )
    }

    /// Writes a group of embedded documents in one transaction.
    fn write_group(
        &self,
        request: &IngestRequest,
        space: &EmbeddingSpace,
        embedded: Embedded,
    ) -> Result<Vec<IngestItem>> {
        if embedded.is_empty() {
            return Ok(Vec::new());
        }
        let (group, vectors): (Vec<Prepared>, Vec<Vec<Vec<f32>>>) = embedded.into_iter().unzip();
        let mut documents = Vec::with_capacity(group.len());
        let mut warnings = Vec::with_capacity(group.len());
        let finder = self.finder(&request.library)?;
        for (mut prepared, vectors) in group.into_iter().zip(vectors) {
            let count = prepared.drafts.len() as u32;
            let id = prepared.document.id.clone();
            let chunks: Vec<Chunk> = prepared
                .drafts
                .into_iter()
                .enumerate()
                .map(|(i, d)| {
                    let context = d.embed_text[..d.embed_text.len() - d.text.len()].to_string();
                    Chunk {
                        id: ChunkId::new(&id, i as u32),
                        document_id: id.clone(),
                        index: i as u32,
                        count,
                        text: d.text,
                        char_start: d.char_start,
                        char_end: d.char_end,
                        page_start: d.page_start,
                        page_end: d.page_end,
                        section_path: d.section_path,
                        context,
                        token_count: d.token_count,
                    }
                })
                .collect();
            let mentions = match &finder {
                Some(finder) => {
                    let (mentions, capped) =
                        finder.document_mentions(&prepared.document.metadata, &chunks);
                    prepared.warnings.extend(capped);
                    mentions
                }
                None => Vec::new(),
            };
            warnings.push(prepared.warnings);
            documents.push(NewDocument {
                document: prepared.document,
                chunks,
                vectors,
                space: space.clone(),
                mentions,
                original: prepared.original,
            });
        }
        self.store.create_library(&request.library, space)?;
        let mut reported: Vec<IngestItem> = documents
            .iter()
            .zip(warnings)
            .map(|(d, warnings)| IngestItem {
                source: d.document.source.clone(),
                status: IngestStatus::Indexed,
                document_id: Some(d.document.id.to_string()),
                title: d.document.title.clone(),
                format: Some(d.document.format.clone()),
                chunks: d.document.chunk_count,
                pages: d.document.page_count,
                error: None,
                warnings,
                language: d
                    .document
                    .metadata
                    .get("language")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
            .collect();
        let outcomes = self.store.put_documents(documents, request.force)?;
        for (item, outcome) in reported.iter_mut().zip(outcomes) {
            item.status = outcome.into();
            if outcome == PutOutcome::Skipped {
                item.chunks = 0;
            }
        }
        Ok(reported)
    }
}

/// The document's language in its metadata (`language`): the one its
/// source, format or request names, written as an ISO 639-1 code when
/// folio knows the language ("de-DE", "German" and "deu" are "de"; a tag
/// it does not know stays as given); else the one its text is in,
/// detected from `text`, and left out when folio cannot tell.
fn record_language(metadata: &mut Map<String, Value>, text: Option<&str>) {
    let named = metadata
        .get("language")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|tag| !tag.is_empty());
    let language = match named {
        Some(tag) => match folio_lexical::Language::from_tag(tag) {
            Some(language) => language,
            None => return,
        },
        None => match text {
            Some(text) => folio_lexical::detect(text),
            None => return,
        },
    };
    if language != folio_lexical::Language::Other {
        metadata.insert("language".into(), Value::String(language.code().into()));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use folio_core::Pooling;

    use super::*;

    /// Embeds a text as [its length, its first byte], recording each call's
    /// texts; cancels once `stop_after` calls were made.
    struct Recording {
        space: EmbeddingSpace,
        calls: Mutex<Vec<Vec<String>>>,
        made: AtomicUsize,
        stop_after: usize,
    }

    impl Recording {
        fn new(stop_after: usize) -> Self {
            Recording {
                space: EmbeddingSpace {
                    model: "recording".into(),
                    dim: 2,
                    pooling: Pooling::Mean,
                    normalized: false,
                    query_prefix: String::new(),
                    passage_prefix: String::new(),
                    precision: Default::default(),
                },
                calls: Mutex::new(Vec::new()),
                made: AtomicUsize::new(0),
                stop_after,
            }
        }
    }

    impl Recording {
        /// Counts the call, records its texts (after `mark`) and embeds each
        /// as [its length, its first byte].
        fn record(&self, texts: &[&str], mark: &str) -> Vec<Vec<f32>> {
            self.made.fetch_add(1, Ordering::SeqCst);
            self.calls
                .lock()
                .unwrap()
                .push(texts.iter().map(|t| format!("{mark}{t}")).collect());
            texts
                .iter()
                .map(|t| vec![t.len() as f32, t.as_bytes()[0] as f32])
                .collect()
        }
    }

    impl Embedder for Recording {
        fn space(&self) -> &EmbeddingSpace {
            &self.space
        }
        fn window(&self) -> usize {
            512
        }
        fn count_tokens(&self, text: &str) -> usize {
            text.len()
        }
        fn embed_passages(
            &self,
            texts: &[&str],
        ) -> std::result::Result<Vec<Vec<f32>>, folio_embed::EmbedError> {
            Ok(self.record(texts, ""))
        }
        /// Token ids here are the text's bytes: a call is recorded as the
        /// texts they spell, prefixed with `ids:`.
        fn embed_passage_ids(
            &self,
            ids: &[&[u32]],
        ) -> std::result::Result<Vec<Vec<f32>>, folio_embed::EmbedError> {
            let texts: Vec<String> = ids
                .iter()
                .map(|s| s.iter().map(|&b| b as u8 as char).collect())
                .collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            Ok(self.record(&texts, "ids:"))
        }
        fn embed_query(
            &self,
            text: &str,
        ) -> std::result::Result<Vec<f32>, folio_embed::EmbedError> {
            Ok(self.embed_passages(&[text])?.remove(0))
        }
        fn backend(&self) -> &'static str {
            "recording"
        }
    }

    impl Progress for Recording {
        fn start(&self, _: u64) {}
        fn advance(&self, _: u64, _: &str) {}
        fn finish(&self) {}
        fn cancelled(&self) -> bool {
            self.made.load(Ordering::SeqCst) >= self.stop_after
        }
    }

    /// Documents of 7 chunks each: six of 20 to 60 characters and a short
    /// last one.
    fn documents(count: usize) -> (Vec<String>, Vec<usize>) {
        let mut texts = Vec::new();
        for d in 0..count {
            for c in 0..7 {
                let letter = (b'a' + (d % 26) as u8) as char;
                let len = if c == 6 {
                    5 + d % 3
                } else {
                    20 + (d * 13 + c * 7) % 41
                };
                texts.push(letter.to_string().repeat(len));
            }
        }
        (texts, vec![7; count])
    }

    fn passages(texts: &[String]) -> Vec<Passage<'_>> {
        texts
            .iter()
            .map(|t| Passage { text: t, ids: None })
            .collect()
    }

    /// Every text got its own vector ([length, first byte]), in input order.
    fn each_text_has_its_vector(texts: &[String], vectors: &[Option<Vec<f32>>]) {
        assert_eq!(texts.len(), vectors.len());
        for (text, vector) in texts.iter().zip(vectors) {
            assert_eq!(
                vector.as_deref(),
                Some(&[text.len() as f32, text.as_bytes()[0] as f32][..])
            );
        }
    }

    #[test]
    fn a_group_is_embedded_in_slices_of_similar_length_in_input_order() {
        let (texts, sizes) = documents(20);
        let refs = passages(&texts);
        let embedder = Recording::new(usize::MAX);
        let vectors = Engine::embed_cancellable(&embedder, &refs, &sizes, &embedder).unwrap();
        each_text_has_its_vector(&texts, &vectors);
        let calls = embedder.calls.lock().unwrap();
        assert!(calls.iter().all(|c| c.len() <= 16));
        for call in calls.iter() {
            assert!(
                call.windows(2).all(|w| w[0].len() <= w[1].len()),
                "{call:?}"
            );
        }
        // Padding: each call costs its size times its longest text. Sorted
        // runs cost less than slices of 16 in document order, where most
        // slices hold a short last chunk beside full ones.
        let padded = |calls: &mut dyn Iterator<Item = Vec<usize>>| -> usize {
            calls.map(|c| c.len() * c.iter().max().unwrap()).sum()
        };
        let sorted = padded(&mut calls.iter().map(|c| c.iter().map(String::len).collect()));
        let in_order = padded(
            &mut texts
                .chunks(16)
                .map(|c| c.iter().map(String::len).collect()),
        );
        let exact: usize = texts.iter().map(String::len).sum();
        assert!(sorted < in_order, "{sorted} vs {in_order}");
        assert!(
            sorted - exact < (in_order - exact) / 2,
            "{sorted} vs {in_order}, exact {exact}"
        );
    }

    #[test]
    fn token_ids_kept_by_the_chunker_are_embedded_without_the_text() {
        let (texts, sizes) = documents(5);
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| t.bytes().map(u32::from).collect())
            .collect();
        let refs: Vec<Passage<'_>> = texts
            .iter()
            .zip(&ids)
            .map(|(text, ids)| Passage {
                text,
                ids: Some(ids),
            })
            .collect();
        let embedder = Recording::new(usize::MAX);
        let vectors = Engine::embed_cancellable(&embedder, &refs, &sizes, &embedder).unwrap();
        each_text_has_its_vector(&texts, &vectors);
        let calls = embedder.calls.lock().unwrap();
        assert!(!calls.is_empty());
        assert!(
            calls.iter().flatten().all(|t| t.starts_with("ids:")),
            "{calls:?}"
        );
    }

    #[test]
    fn cancelled_work_keeps_whole_runs_of_documents() {
        let (texts, sizes) = documents(40);
        let refs = passages(&texts);
        // Cancel after ten calls: the first run (18 documents, 126 chunks,
        // 8 calls) is whole; the second is part way.
        let embedder = Recording::new(10);
        let vectors = Engine::embed_cancellable(&embedder, &refs, &sizes, &embedder).unwrap();
        let whole: Vec<bool> = vectors
            .chunks(7)
            .map(|doc| doc.iter().all(Option::is_some))
            .collect();
        assert!(whole[..18].iter().all(|w| *w), "{whole:?}");
        assert!(whole[18..].iter().all(|w| !*w), "{whole:?}");
        assert_eq!(vectors.iter().filter(|v| v.is_some()).count(), 126 + 32);
    }

    #[test]
    fn titles_from_locators() {
        assert_eq!(
            title_from_locator("/a/b/Paper Title.pdf").as_deref(),
            Some("Paper Title")
        );
        assert_eq!(
            title_from_locator("https://e.org/docs/page.html?x=1").as_deref(),
            Some("page")
        );
        assert_eq!(
            title_from_locator("https://e.org/docs/").as_deref(),
            Some("docs")
        );
    }

    #[test]
    fn text_mostly_not_in_english_is_advised_a_multilingual_model() {
        let counts = |pairs: &[(&str, u64)]| -> BTreeMap<String, u64> {
            pairs.iter().map(|(l, n)| (l.to_string(), *n)).collect()
        };
        let minilm = "sentence-transformers/all-MiniLM-L6-v2";
        let advice = language_advice(minilm, "lib", &counts(&[("de", 6), ("ru", 2), ("en", 2)]))
            .expect("80 % not English");
        assert!(advice.starts_with("80 % of this text is not English (de 60 %, ru 20 %)"));
        assert!(advice.contains("`folio --model multilingual-e5-small rebuild lib`"));
        // Half or more; undetermined text counts as neither.
        assert!(language_advice(minilm, "lib", &counts(&[("fr", 1), ("en", 1)])).is_some());
        assert!(language_advice(minilm, "lib", &counts(&[("fr", 1), ("en", 2)])).is_none());
        assert!(language_advice(minilm, "lib", &counts(&[("und", 5), ("en", 1)])).is_none());
        assert!(language_advice(minilm, "lib", &BTreeMap::new()).is_none());
        // Not for a multilingual model, nor one folio does not know.
        let german = counts(&[("de", 5)]);
        assert!(language_advice("intfloat/multilingual-e5-small", "lib", &german).is_none());
        assert!(language_advice("someone/own-model", "lib", &german).is_none());
        assert!(folio_embed::catalog::find(MULTILINGUAL_MODEL).is_some_and(|e| e.multilingual));
    }
}
