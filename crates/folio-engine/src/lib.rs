//! The engine: folio's API boundary. Plain request and response structs in,
//! plain structs out; the CLI and the servers are thin layers over it, and
//! only they know about terminals, JSON-RPC, MCP or HTTP.
//!
//! The engine wires the pipeline — source → extract → chunk → embed → store
//! → search — and owns the policies around it: limits, root confinement,
//! URL safety, dedup, and lazy loading of the embedding model (so servers
//! answer their first requests before the model is loaded).

mod approximate;
mod byo;
pub mod cache;
pub mod cite;
mod copy;
mod entities;
mod error;
pub mod eval;
mod ingest;
pub mod keys;
mod ocr;
mod pages;
pub mod records;
pub mod sandbox;
mod search;
pub mod sync;
mod timestamp;
pub mod zotero;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use byo::{StoreChunksReport, StoreChunksRequest, StoredChunk};
pub use copy::{CopyReport, StoreLocation};
pub use entities::{
    DeclaredRelation, DocumentMentions, EntityCard, EntityMatch, Evidence, ImportReport, MatchedBy,
    RelatedEntity, RelinkReport, TwoHops,
};
pub use error::EngineError;
use folio_chunk::ChunkConfig;
use folio_core::{
    Chunk, ChunkId, Document, DocumentId, DocumentSummary, ErrorCode, LibraryName, Limits,
};
use folio_embed::{Embedder, ModelConfig};
pub use folio_search::{Fusion, Mode};
use folio_source::Roots;
use folio_store::{Bm25, LibraryStats, Store};
pub use folio_store::{
    EntityCount, FacetGroup, FacetRequest, Facets, FieldStats, KeyRecord, LibraryInfo, Related,
};
use folio_store_embedded::{Access, EmbeddedStore};
pub use ingest::{
    Dedup, IngestItem, IngestReport, IngestRequest, IngestStatus, IngestTarget, Progress,
    SilentProgress, files_in,
};
pub use ocr::OcrConfig;
pub use search::{
    FUSION_DEPTH, ResponseMode, SearchHit, SearchRequest, SearchResponse, cut_chars, preview,
};
pub use timestamp::{Clock, SystemClock, rfc3339};

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// Which encoder computes dense vectors.
#[derive(Debug, Clone)]
pub enum EmbedderConfig {
    /// ONNX Runtime, the fast path: the model folder (with model.onnx) and
    /// the runtime library (libonnxruntime.so).
    Onnx {
        model_dir: PathBuf,
        runtime: PathBuf,
        threads: usize,
        model: ModelConfig,
    },
    /// candle, pure Rust: the model folder (model.safetensors).
    Candle {
        model_dir: PathBuf,
        model: ModelConfig,
    },
    /// An OpenAI-compatible server.
    OpenAi(folio_embed::OpenAiOptions),
}

impl EmbedderConfig {
    /// This configuration with its model in `dir` (fetched after start):
    /// ONNX Runtime when `dir` holds a graph (or int8 asks for one), else
    /// candle on its safetensors.
    fn in_folder(&self, dir: PathBuf) -> EmbedderConfig {
        match self.clone() {
            EmbedderConfig::Onnx {
                runtime,
                threads,
                model,
                ..
            } if model.precision == folio_core::Precision::Int8
                || dir.join("model.onnx").exists()
                || dir.join("onnx/model.onnx").exists() =>
            {
                EmbedderConfig::Onnx {
                    model_dir: dir,
                    runtime,
                    threads,
                    model,
                }
            }
            EmbedderConfig::Onnx { model, .. } | EmbedderConfig::Candle { model, .. } => {
                EmbedderConfig::Candle {
                    model_dir: dir,
                    model,
                }
            }
            other => other,
        }
    }
}

/// Fetches the model on first use, for a server that started without it
/// (no cached model, no network): it answers at once, and the first call
/// that needs the model fetches it, or fails with the fetch's message. The
/// function gives the model's folder.
#[derive(Clone)]
pub struct ModelFetch(pub Arc<dyn Fn() -> std::result::Result<PathBuf, String> + Send + Sync>);

impl std::fmt::Debug for ModelFetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModelFetch")
    }
}

/// The reranking stage: a cross-encoder (Hugging Face layout with a
/// `model.onnx`, run on ONNX Runtime) reads the query with each of the best
/// fused candidates and its score is blended into theirs.
#[derive(Debug, Clone)]
pub struct RerankConfig {
    pub model_dir: PathBuf,
    /// The ONNX Runtime library (libonnxruntime.so).
    pub runtime: PathBuf,
    pub threads: usize,
    /// Rerank every search that does not say otherwise. Off by default: no
    /// cross-encoder has yet measured better than fusion alone here.
    pub enabled: bool,
    /// Fused candidates (chunks, best first) the cross-encoder reads.
    pub candidates: usize,
    /// Time the stage may take in one search: candidates it does not reach
    /// in time count as read last.
    pub budget: Duration,
    /// The cross-encoder's share of the blended score, in [0, 1].
    pub weight: f32,
}

impl RerankConfig {
    pub const DEFAULT_CANDIDATES: usize = 20;
    pub const DEFAULT_BUDGET: Duration = Duration::from_millis(1_500);
    pub const DEFAULT_WEIGHT: f32 = 0.5;

    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.weight) {
            return Err("the rerank weight must lie in [0, 1]".into());
        }
        if self.candidates == 0 || self.candidates > 1_000 {
            return Err("rerank candidates must be between 1 and 1000".into());
        }
        Ok(())
    }
}

/// Chunk sizing overrides; unset fields follow the encoder's window.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChunkingConfig {
    pub target_tokens: Option<usize>,
    pub overlap_tokens: Option<usize>,
}

/// Everything the engine needs to start.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    /// A PostgreSQL server (`postgres://…`) instead of the embedded store
    /// in `data_dir`: one index shared by every folio process of a team.
    pub store_url: Option<String>,
    pub embedder: EmbedderConfig,
    pub limits: Limits,
    pub chunking: ChunkingConfig,
    /// Folders file ingestion may read; empty means unrestricted, or, with
    /// `guard_paths`, everywhere but secrets and system trees.
    pub roots: Vec<PathBuf>,
    /// Confine file ingestion even without roots (servers: their clients
    /// are agents, not the user); see `folio_source::Roots::guarded`.
    pub guard_paths: bool,
    pub allow_private_urls: bool,
    pub fusion: Fusion,
    pub bm25: Bm25,
    /// Open for writing (each write waiting this long for the write lock,
    /// which it holds only while it writes) or read-only.
    pub writable: Option<Duration>,
    /// OCR of scanned PDF pages.
    pub ocr: OcrConfig,
    /// Where documents are parsed: a worker process for untrusted input.
    pub extraction: sandbox::Extraction,
    /// A cross-encoder reranking stage, when one is configured.
    pub rerank: Option<RerankConfig>,
    /// Find the entities documents mention while ingesting them (names,
    /// written with each document; `[ingest] entities`).
    pub entities: bool,
    /// The model is not here yet: fetch it on first use (see `ModelFetch`).
    pub model_fetch: Option<ModelFetch>,
}

/// The engine façade. Cheap to share behind an `Arc`; every method is
/// synchronous (async callers use a blocking pool).
pub struct Engine {
    config: EngineConfig,
    store: Arc<dyn Store>,
    embedded: Option<Arc<EmbeddedStore>>,
    embedder: Mutex<Option<Arc<dyn Embedder>>>,
    /// The embedder was given (`with_embedder`), not loaded: `settle` keeps it.
    embedder_given: bool,
    /// The cross-encoder, loaded on the first reranked search.
    reranker: Mutex<Option<Arc<folio_embed::CrossEncoder>>>,
    roots: Roots,
    clock: Box<dyn Clock>,
    /// Tesseract, looked for on the first scanned page.
    tesseract: std::sync::OnceLock<Result<folio_ocr::Tesseract, folio_ocr::OcrError>>,
    /// Repeated searches: query vectors and responses.
    cache: cache::SearchCache,
    /// Access key lookups (see `keys`).
    keys: keys::KeyCache,
    /// Each library's declared entities, indexed for lookups, with the
    /// store generation they were read at.
    declared_indexes:
        Mutex<std::collections::HashMap<LibraryName, (u64, Arc<entities::DeclaredIndex>)>>,
    /// What this engine has ingested since it opened (for metrics).
    totals: IngestTotals,
    /// PDF pages rendered as images, the last ones kept.
    pages: pages::PageCache,
}

/// Counts of an engine's ingestion since it opened, whatever asked for it.
#[derive(Debug, Default)]
pub struct IngestTotals {
    documents: AtomicU64,
    chunks: AtomicU64,
    bytes: AtomicU64,
    embed_micros: AtomicU64,
}

/// A reading of `IngestTotals`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IngestCounts {
    /// Documents indexed or replaced.
    pub documents: u64,
    /// Their chunks.
    pub chunks: u64,
    /// Bytes of sources read.
    pub bytes: u64,
    /// Time spent computing passage embeddings.
    pub embed_seconds: f64,
}

impl IngestTotals {
    fn add(&self, report: &IngestReport) {
        let written = (report.indexed + report.replaced) as u64;
        self.documents.fetch_add(written, Ordering::Relaxed);
        self.chunks.fetch_add(report.chunks, Ordering::Relaxed);
        self.bytes.fetch_add(report.bytes, Ordering::Relaxed);
        self.embed_micros
            .fetch_add((report.embed_ms * 1e3) as u64, Ordering::Relaxed);
    }

    fn read(&self) -> IngestCounts {
        IngestCounts {
            documents: self.documents.load(Ordering::Relaxed),
            chunks: self.chunks.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            embed_seconds: self.embed_micros.load(Ordering::Relaxed) as f64 / 1e6,
        }
    }
}

/// The store in use, and the embedded backend when that is it.
type OpenedStore = (Arc<dyn Store>, Option<Arc<EmbeddedStore>>);

/// The one place a backend is chosen: PostgreSQL when the configuration
/// names a server, else the embedded store in the data directory.
fn open_store(config: &EngineConfig, access: Access) -> Result<OpenedStore> {
    match &config.store_url {
        // A read-only engine neither creates nor migrates the schema, and
        // its sessions are read-only on the server too.
        Some(url) => {
            let store = match access {
                Access::ReadOnly => folio_store_postgres::PostgresStore::connect_read_only(url)?,
                _ => folio_store_postgres::PostgresStore::connect(url)?,
            };
            Ok((Arc::new(store), None))
        }
        None => {
            let store = Arc::new(EmbeddedStore::open(&config.data_dir, access)?);
            Ok((store.clone(), Some(store)))
        }
    }
}

impl Engine {
    /// Opens the store; the model is loaded on first use.
    pub fn open(config: EngineConfig) -> Result<Self> {
        config.limits.validate().map_err(EngineError::invalid)?;
        if config.limits.require_sandbox && config.extraction == sandbox::Extraction::InProcess {
            return Err(EngineError::invalid(
                "[limits] require_sandbox is set, but documents would be parsed in this process: \
                 folio cannot run its extraction sandbox here (it cannot find its own executable)",
            ));
        }
        config.fusion.validate().map_err(EngineError::invalid)?;
        if let Some(rerank) = &config.rerank {
            rerank.validate().map_err(EngineError::invalid)?;
        }
        let access = match config.writable {
            // The write lock is taken per write, so a server and the CLI
            // (or several servers) write to one data directory in turn.
            Some(lock_wait) => Access::Shared { lock_wait },
            None => Access::ReadOnly,
        };
        let (store, embedded) = open_store(&config, access)?;
        let roots = if config.guard_paths {
            Roots::guarded(&config.roots, std::env::home_dir())?
        } else {
            Roots::new(&config.roots)?
        };
        Ok(Engine {
            store,
            embedded,
            embedder: Mutex::new(None),
            embedder_given: false,
            reranker: Mutex::new(None),
            roots,
            clock: Box::new(SystemClock),
            tesseract: std::sync::OnceLock::new(),
            pages: Default::default(),
            cache: cache::SearchCache::default(),
            keys: keys::KeyCache::default(),
            declared_indexes: Mutex::default(),
            totals: IngestTotals::default(),
            config,
        })
    }

    /// Uses `embedder` instead of loading one from the configuration.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        *self.embedder.lock().unwrap_or_else(|p| p.into_inner()) = Some(embedder);
        self.embedder_given = true;
        self
    }

    pub fn with_clock(mut self, clock: Box<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// The embedded backend, when that is the store in use (benchmarks).
    pub fn embedded_store(&self) -> Option<&EmbeddedStore> {
        self.embedded.as_deref()
    }

    /// The embedder, loading the model on first call.
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>> {
        let mut slot = self.embedder.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(embedder) = &*slot {
            return Ok(embedder.clone());
        }
        let fetched = match &self.config.model_fetch {
            Some(fetch) => Some(self.config.embedder.in_folder(
                (fetch.0)().map_err(|message| EngineError::new(ErrorCode::Model, message))?,
            )),
            None => None,
        };
        let embedder: Arc<dyn Embedder> = match fetched.as_ref().unwrap_or(&self.config.embedder) {
            EmbedderConfig::Onnx {
                model_dir,
                runtime,
                threads,
                model,
            } => {
                if model.precision == folio_core::Precision::Int8
                    && folio_embed::int8_kernels_saturate()
                {
                    tracing::info!(
                        "int8 on a CPU without VNNI: ONNX Runtime's exact u8 x u8 kernels \
                         (the vectors of a VNNI CPU), slower than its u8 x s8 ones; \
                         `folio bench encoder` says what int8 gains over fp32 here"
                    );
                }
                Arc::new(folio_embed::OnnxEncoder::load(
                    model_dir, model, runtime, *threads,
                )?)
            }
            EmbedderConfig::Candle { model_dir, model } => {
                Arc::new(folio_embed::CandleEncoder::load(model_dir, model)?)
            }
            EmbedderConfig::OpenAi(options) => {
                Arc::new(folio_embed::OpenAiEmbedder::connect(options.clone())?)
            }
        };
        *slot = Some(embedder.clone());
        Ok(embedder)
    }

    /// The cross-encoder of the reranking stage (loaded on first call) and
    /// its configuration.
    pub fn reranker(&self) -> Result<(Arc<folio_embed::CrossEncoder>, &RerankConfig)> {
        let Some(config) = &self.config.rerank else {
            return Err(EngineError::invalid(
                "no reranker is configured (set [rerank] model in the configuration)",
            ));
        };
        let mut slot = self.reranker.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reranker) = &*slot {
            return Ok((reranker.clone(), config));
        }
        let reranker = Arc::new(folio_embed::CrossEncoder::load(
            &config.model_dir,
            &config.runtime,
            config.threads,
        )?);
        *slot = Some(reranker.clone());
        Ok((reranker, config))
    }

    /// Whether the model has been loaded yet.
    pub fn embedder_loaded(&self) -> bool {
        self.embedder
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    fn chunk_config(&self, embedder: &dyn Embedder) -> Result<ChunkConfig> {
        let mut config = ChunkConfig::for_window(embedder.window());
        if let Some(target) = self.config.chunking.target_tokens {
            config.target_tokens = target.min(config.max_tokens);
        }
        if let Some(overlap) = self.config.chunking.overlap_tokens {
            config.overlap_tokens = overlap;
        }
        config.validate().map_err(EngineError::invalid)?;
        Ok(config)
    }

    pub fn now(&self) -> String {
        rfc3339(self.clock.now())
    }

    /// Whether this engine may write (opened with `writable`).
    pub fn read_only(&self) -> bool {
        self.config.writable.is_none()
    }

    /// Refuses `what` before any work when the engine is read-only. Every
    /// write method starts here, so a read-only server never writes, on
    /// either backend, whatever its tools or routes ask.
    pub(crate) fn writable(&self, what: &'static str) -> Result<()> {
        if self.read_only() {
            return Err(EngineError::new(
                ErrorCode::ReadOnly,
                format!("this folio is read-only: {what} is refused"),
            ));
        }
        Ok(())
    }

    /// Hits and misses of the search caches since the engine opened.
    pub fn cache_stats(&self) -> cache::CacheStats {
        self.cache.stats()
    }

    pub fn libraries(&self) -> Result<Vec<LibraryInfo>> {
        Ok(self.store.libraries()?)
    }

    pub fn library(&self, name: &LibraryName) -> Result<LibraryInfo> {
        Ok(self.store.library(name)?)
    }

    /// Creates an empty library pinned to the current model's embedding
    /// space (nothing changes when it exists with that space already).
    pub fn create_library(&self, name: &LibraryName) -> Result<LibraryInfo> {
        self.writable("creating a library")?;
        let embedder = self.embedder()?;
        match self.store.library(name) {
            Ok(info) => match info.space.difference(embedder.space()) {
                None => Ok(info),
                Some(difference) => Err(folio_store::StoreError::EmbeddingMismatch {
                    library: name.to_string(),
                    difference,
                }
                .into()),
            },
            Err(folio_store::StoreError::LibraryNotFound(_)) => {
                Ok(self.store.create_library(name, embedder.space())?)
            }
            Err(e) => Err(e.into()),
        }
    }

    pub fn inspect(&self, name: &LibraryName) -> Result<LibraryStats> {
        Ok(self.store.stats(name)?)
    }

    /// Checks that every document of the library is whole in every index.
    pub fn verify(&self, name: &LibraryName) -> Result<folio_store::Integrity> {
        Ok(self.store.verify(name)?)
    }

    pub fn delete_library(&self, name: &LibraryName) -> Result<()> {
        self.writable("deleting a library")?;
        Ok(self.store.delete_library(name)?)
    }

    pub fn documents(
        &self,
        library: &LibraryName,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<DocumentSummary>, u64)> {
        Ok(self.store.documents(library, offset, limit)?)
    }

    pub fn document(&self, id: &str) -> Result<Document> {
        let id = parse_document_id(id)?;
        Ok(self.store.document(&id)?)
    }

    pub fn delete_document(&self, id: &str) -> Result<()> {
        self.writable("deleting a document")?;
        let id = parse_document_id(id)?;
        self.store.delete_document(&id)?;
        self.store.flush()?;
        Ok(())
    }

    /// A document's chunks with indices in `range`.
    pub fn chunks(&self, id: &str, range: std::ops::Range<u32>) -> Result<Vec<Chunk>> {
        let id = parse_document_id(id)?;
        self.store.document(&id)?;
        Ok(self.store.chunks(&id, range)?)
    }

    /// A chunk with up to `before` and `after` neighbours, in order.
    pub fn chunk_with_neighbours(
        &self,
        chunk: &str,
        before: u32,
        after: u32,
    ) -> Result<Vec<Chunk>> {
        let (document, index) = ChunkId::parse(chunk).ok_or_else(|| {
            EngineError::invalid("a chunk id looks like <16 hex digits>:<index>").about(chunk)
        })?;
        let chunks = self.store.chunks(
            &document,
            index.saturating_sub(before)..index.saturating_add(after).saturating_add(1),
        )?;
        if !chunks.iter().any(|c| c.index == index) {
            return Err(EngineError::new(ErrorCode::NotFound, "no such chunk").about(chunk));
        }
        Ok(chunks)
    }

    /// Re-embeds every chunk of a library with the current model and pins
    /// the library to the model's space: the explicit path out of an
    /// embedding mismatch.
    pub fn rebuild(&self, library: &LibraryName, progress: &dyn Progress) -> Result<usize> {
        self.writable("rebuilding a library")?;
        let embedder = self.embedder()?;
        let texts = self.store.chunk_texts(library)?;
        progress.start(texts.len() as u64);
        let mut vectors = Vec::with_capacity(texts.len());
        for part in texts.chunks(256) {
            let refs: Vec<&str> = part.iter().map(|(_, t)| t.as_str()).collect();
            let embedded = embedder.embed_passages(&refs)?;
            vectors.extend(part.iter().map(|(id, _)| id.clone()).zip(embedded));
            progress.advance(part.len() as u64, "");
        }
        let count = vectors.len();
        self.store
            .replace_vectors(library, embedder.space(), vectors)?;
        progress.finish();
        Ok(count)
    }

    /// Whether `[ingest] roots` name the folders file ingestion may read
    /// (without them a server only guards secrets and system trees).
    pub fn has_roots(&self) -> bool {
        !self.config.roots.is_empty()
    }

    /// Resolves `path` the way file ingestion does: symlinks resolved, and
    /// refused outside the configured roots or when it does not exist.
    pub fn confine(&self, path: &std::path::Path) -> Result<PathBuf> {
        Ok(self.roots.confine(path)?.as_path().to_path_buf())
    }

    /// Bytes the data directory takes on disk.
    /// Bytes the store occupies (0 when the server cannot say).
    /// What this engine has ingested since it opened.
    pub fn ingest_counts(&self) -> IngestCounts {
        self.totals.read()
    }

    pub fn disk_bytes(&self) -> u64 {
        self.store.size_bytes().unwrap_or(0)
    }

    pub fn flush(&self) -> Result<()> {
        Ok(self.store.flush()?)
    }

    /// Reads ahead what each library's first searches would read, into the
    /// store's bounded caches (`Store::warm`): a server calls it as it
    /// starts, off its request path.
    pub fn warm(&self) -> Result<()> {
        for library in self.store.libraries()? {
            let started = std::time::Instant::now();
            self.store.warm(&library.name)?;
            tracing::debug!(
                library = %library.name,
                ms = started.elapsed().as_millis() as u64,
                "read the library's caches ahead"
            );
        }
        Ok(())
    }

    /// For a process that writes and then exits (`folio ingest`, `folio
    /// sync`): the embedded store's derived indexes wait for `settle`
    /// (`EmbeddedStore::start_bulk`), so a large ingest never holds its
    /// library's HNSW graph, nor runs a lexical writer, beside the encoder.
    /// A PostgreSQL server keeps its own indexes: nothing changes there.
    pub fn start_bulk_write(&self) -> Result<()> {
        if let Some(store) = &self.embedded {
            store.start_bulk()?;
        }
        Ok(())
    }

    /// Ends a bulk write: frees the models this engine loaded (the next use
    /// loads them again), then lets the store do the upkeep it deferred.
    /// Returns the chunks the vector indexes gained or lost.
    pub fn settle(&self) -> Result<u64> {
        if !self.embedder_given {
            *self.embedder.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
        *self.reranker.lock().unwrap_or_else(|p| p.into_inner()) = None;
        match &self.embedded {
            Some(store) => Ok(store.settle()?),
            None => Ok(0),
        }
    }
}

pub(crate) fn parse_document_id(id: &str) -> Result<DocumentId> {
    DocumentId::parse(id)
        .ok_or_else(|| EngineError::invalid("a document id is 16 lower-case hex digits").about(id))
}

pub(crate) fn bm25_or(config: &EngineConfig, requested: Option<Bm25>) -> Result<Bm25> {
    let bm25 = requested.unwrap_or(config.bm25);
    if !(bm25.k1 >= 0.0 && bm25.k1.is_finite() && (0.0..=1.0).contains(&bm25.b)) {
        return Err(EngineError::invalid("BM25 needs k1 >= 0 and b in [0, 1]"));
    }
    Ok(bm25)
}
