//! folio's embedded store: SQLite (WAL, full fsync) is the single source of
//! truth for libraries, documents, chunks and vectors; per library, a tantivy
//! index (BM25 postings) and a usearch index (HNSW) are derived from it.
//!
//! Every write appends to a change log in the same SQLite transaction as the
//! data, and each derived index records the log position it covers (tantivy:
//! the commit payload; usearch: a metadata file written after the index). On
//! open, and before each search, anything newer is replayed from SQLite —
//! vectors come from SQLite, nothing is re-embedded — so a crash costs
//! replay, never data, and a document is visible in full or not at all.
//!
//! One process owns writes (`write.lock`, an OS file lock released even on
//! kill -9). Read-only processes read SQLite, reload tantivy commits and
//! replay the vector log tail in memory.

mod directory;
mod filter_sql;
mod lexical;
mod lock;
mod postings_files;
mod records;
mod rows;
mod schema;
mod vectors;

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use folio_core::{
    Chunk, ChunkId, Document, DocumentId, DocumentSummary, EmbeddingSpace, Filter, LibraryName,
    NeighbourOrder, RecordSchema,
};
use folio_store::{
    Bm25, ChunkWithDocument, Declared, EntityCount, EntityMention, EntityQuery, FacetRequest,
    Facets, Hit, Integrity, KeyRecord, LibraryInfo, LibraryStats, MentionHit, NewDocument,
    PutOutcome, QueryLanguage, Related, Result, Store, StoreError,
};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params, params_from_iter};

use crate::directory::Directory;
use crate::lexical::{Lexical, LexicalBatch, LexicalDocument, Unit};
use crate::lock::BulkMark;
pub use crate::lock::WriteLock;

/// An access key from its stored record and last use.
fn key_record(record: &str, last_used_at: Option<String>) -> Result<KeyRecord> {
    let key: KeyRecord =
        serde_json::from_str(record).map_err(|e| StoreError::io("reading an access key", e))?;
    Ok(KeyRecord {
        last_used_at,
        ..key
    })
}
use crate::rows::{
    CHUNK_COLUMNS, DOCUMENT_COLUMNS, chunk_from_row, document_from_row, summary_from_row,
    vector_bytes,
};
use crate::vectors::Vectors;

/// How a process opens a data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Owns writes for its whole life: waits up to `lock_wait` for the
    /// write lock, then fails with `StoreBusy`.
    ReadWrite { lock_wait: Duration },
    /// Writes, taking the write lock for each write (waiting up to
    /// `lock_wait`) and releasing it after: several processes — a server
    /// with its agents, a CLI ingest beside it — write in turn, and between
    /// writes each reads like a read-only process.
    Shared { lock_wait: Duration },
    /// Reads only; never takes the lock.
    ReadOnly,
}

/// Chunks replayed into the vector index since its last save before it is
/// saved again, bounding the replay a restart or a reader must do.
const SAVE_EVERY_CHUNKS: u64 = 20_000;

/// A flush saves a vector index only when at least this many chunks changed
/// (or 5 % of the index); shorter tails are replayed from SQLite on open.
const FLUSH_MIN_CHUNKS: u64 = 1_000;

struct LibraryIndex {
    id: i64,
    dim: usize,
    dir: PathBuf,
    /// Set once the library has a lexical index to read: a search that
    /// opens a new library while another thread or process writes its
    /// first document finds none yet, and a later catch-up attaches it.
    lexical: std::sync::OnceLock<Lexical>,
    vectors: Vectors,
    /// The chunks the vector index's keys name (see `directory`).
    directory: RwLock<Directory>,
    marks: Mutex<Marks>,
}

impl LibraryIndex {
    fn directory(&self) -> std::sync::RwLockWriteGuard<'_, Directory> {
        self.directory.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Default)]
struct Marks {
    lexical: i64,
    vectors: i64,
    saved: i64,
    unsaved_chunks: u64,
    /// The vector index is not in memory: a bulk write
    /// (`EmbeddedStore::start_bulk`) opened the library to write, and
    /// nothing has searched its vectors since. `vectors` and
    /// `saved` mean nothing until it is loaded.
    deferred: bool,
    /// A copy of the vector index with 4-bit codes is being built
    /// (`EmbeddedStore::pack_vectors`).
    packing: bool,
}

/// What a caller of `EmbeddedStore::index` needs current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Both indexes (dense search, statistics, verification).
    All,
    /// The lexical index; the vector index too unless it is deferred
    /// (lexical search).
    Lexical,
    /// The catch-up after a write: both indexes, but during a bulk write
    /// neither the lexical index (left to `settle`) nor a deferred vector
    /// index.
    Write,
}

/// A library's row: what searches and writes need, without the counts.
struct LibraryRow {
    id: i64,
    name: LibraryName,
    space: EmbeddingSpace,
    created_at: String,
}

pub struct EmbeddedStore {
    dir: PathBuf,
    conn: Mutex<Connection>,
    access: Access,
    /// The write lock while this process holds it.
    lock: Mutex<Option<WriteLock>>,
    /// One write session at a time in this process (shared access).
    write_gate: Mutex<()>,
    indexes: RwLock<HashMap<i64, Arc<LibraryIndex>>>,
    /// Moves when a write of this process starts and when it ends (SQLite's
    /// data_version tells of other processes' writes).
    writes: std::sync::atomic::AtomicU64,
    /// Filters' allowed chunk keys, valid for one generation.
    filters: Mutex<FilterCache>,
    /// Libraries' (generation, documents, chunks) as last counted.
    counts: Mutex<HashMap<i64, (u64, u64, u64)>>,
    /// Held from `start_bulk` to the start of `settle`'s work (released at
    /// its end): a bulk write is under way while it is here.
    bulk_mark: Mutex<Option<BulkMark>>,
}

/// The chunk keys recent filters allow, each valid for the generation it
/// was evaluated in: a hybrid search's two retrievers evaluate their filter
/// once, and a client scoped to one collection, repeating its filter query
/// after query, pays for it once per write (Lucene keeps its query cache
/// for the same reason). Bounded by the keys held, not the entries.
#[derive(Default)]
struct FilterCache {
    entries: std::collections::VecDeque<CachedFilter>,
    keys: usize,
}

struct CachedFilter {
    library_id: i64,
    generation: u64,
    filter: Filter,
    /// Chunk keys, or document keys.
    unit: Unit,
    allowed: Arc<HashSet<u64>>,
}

impl FilterCache {
    /// At most this many keys over all entries (about 20 MiB: ten filters
    /// that each allow a tenth of a million chunks, a hundred at 100,000;
    /// twice as many held 5 % of a million-chunk server's memory).
    const MAX_KEYS: usize = 1_000_000;

    fn get(
        &mut self,
        library_id: i64,
        generation: u64,
        filter: &Filter,
        unit: Unit,
    ) -> Option<Arc<HashSet<u64>>> {
        // Entries of an older generation can never be used again.
        self.entries.retain(|e| e.generation == generation);
        self.keys = self.entries.iter().map(|e| e.allowed.len()).sum();
        let at = self
            .entries
            .iter()
            .position(|e| e.library_id == library_id && e.unit == unit && e.filter == *filter)?;
        let entry = self.entries.remove(at)?;
        let allowed = entry.allowed.clone();
        self.entries.push_back(entry);
        Some(allowed)
    }

    fn put(
        &mut self,
        library_id: i64,
        generation: u64,
        filter: &Filter,
        unit: Unit,
        allowed: Arc<HashSet<u64>>,
    ) {
        if allowed.len() > Self::MAX_KEYS / 2 {
            return;
        }
        self.keys += allowed.len();
        self.entries.push_back(CachedFilter {
            library_id,
            generation,
            filter: filter.clone(),
            unit,
            allowed,
        });
        while self.keys > Self::MAX_KEYS
            && let Some(oldest) = self.entries.pop_front()
        {
            self.keys -= oldest.allowed.len();
        }
    }
}

/// Held for the length of one write: under shared access it holds the write
/// lock, and on drop closes the lexical writers, saves vector indexes worth
/// saving and releases the lock. Declare it before the connection guard so
/// it outlives it.
struct WriteSession<'a> {
    store: &'a EmbeddedStore,
    _gate: Option<MutexGuard<'a, ()>>,
    /// The write session this thread held before this one (restored on
    /// drop).
    outer: usize,
    /// Leaves the documents' generation alone (access keys).
    quiet: bool,
}

thread_local! {
    /// The store (by address) whose write session this thread holds, 0 for
    /// none. Under shared access the write lock belongs to the process, but
    /// only the thread running the write may use it: a search on another
    /// thread meanwhile reads like a read-only process and never opens a
    /// writer (issue 26: searches failed with the writer's lock busy).
    static WRITING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Drop for WriteSession<'_> {
    fn drop(&mut self) {
        if !self.quiet {
            self.store
                .writes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        if self._gate.is_none() {
            WRITING.with(|w| w.set(self.outer));
            return;
        }
        let store = self.store;
        // Every catch-up runs under the connection: holding it, no thread is
        // between deciding it may write and writing, so the writers closed
        // here stay closed once the lock is released.
        let _conn = store.conn();
        for index in &store.open_indexes() {
            if let Some(lexical) = index.lexical.get() {
                lexical.close_writer();
            }
        }
        if let Err(e) = store.save_vectors(false) {
            tracing::warn!(error = %e, "saving vector indexes failed; they will be replayed");
        }
        *store.lock.lock().unwrap_or_else(|p| p.into_inner()) = None;
        WRITING.with(|w| w.set(self.outer));
    }
}

fn sql_err(context: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |e| StoreError::io(context, e)
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(dir: &Path, access: Access) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir.display().to_string(), e))?;
        let lock = match access {
            Access::ReadWrite { lock_wait } => Some(WriteLock::acquire(dir, lock_wait)?),
            Access::Shared { .. } | Access::ReadOnly => None,
        };
        let conn =
            Connection::open(dir.join("folio.sqlite")).map_err(sql_err("opening the database"))?;
        filter_sql::register_functions(&conn).map_err(sql_err("opening the database"))?;
        schema::prepare(&conn)
            .map_err(sql_err("preparing the database"))?
            .map_err(|reason| StoreError::io("database schema", reason))?;
        Ok(EmbeddedStore {
            dir: dir.to_path_buf(),
            conn: Mutex::new(conn),
            access,
            lock: Mutex::new(lock),
            write_gate: Mutex::new(()),
            indexes: RwLock::new(HashMap::new()),
            writes: std::sync::atomic::AtomicU64::new(0),
            filters: Mutex::new(FilterCache::default()),
            counts: Mutex::new(HashMap::new()),
            bulk_mark: Mutex::new(None),
        })
    }

    /// For a process that writes and then exits (the CLI's `ingest`): until
    /// `settle`, the derived indexes wait. Writes commit documents, chunks
    /// and vectors to SQLite (the change log holds every change) and touch
    /// neither index: they do not load a library's vector index nor replay
    /// into it, and they do not start a lexical writer. An ingest of
    /// 100,000 files then never holds the HNSW graph (about 0.6 KB a
    /// chunk), and its peak memory does not grow with the files: a lexical
    /// writer started beside the encoder (about once a second) raised the
    /// peak by some 20 MB.
    ///
    /// A search in this process meanwhile brings both indexes current for
    /// itself (the lexical index through `repair_lexical`), and writes keep
    /// the vector index current after it. A reader in another process
    /// replays the vectors into its own memory and serves the lexical index
    /// as last committed: the bulk mark tells it that this process will
    /// bring it up to date, so it does not do that work on a search's time.
    pub fn start_bulk(&self) -> Result<()> {
        if self.access == Access::ReadOnly {
            return Ok(());
        }
        let mut mark = self.bulk_mark.lock().unwrap_or_else(|p| p.into_inner());
        if mark.is_none() {
            *mark = Some(BulkMark::hold(&self.dir)?);
        }
        Ok(())
    }

    fn is_bulk(&self) -> bool {
        self.bulk_mark
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Ends a bulk write (see `start_bulk`): each lexical index it left
    /// behind is brought up to the change log's head in one commit, then
    /// each vector index is, and saved. Returns how many chunks the vector
    /// indexes gained or lost. Later writes keep the indexes current again.
    /// Nothing to do for a process that never started one. The bulk mark is
    /// released even when this fails: readers then repair what is left.
    pub fn settle(&self) -> Result<u64> {
        let Some(_mark) = self
            .bulk_mark
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        else {
            return Ok(0);
        };
        let indexes = self.open_indexes();
        if indexes.is_empty() {
            return Ok(0);
        }
        // Under the write lock, as every write of derived indexes.
        let _write = self.begin_quiet_write()?;
        let conn = self.conn();
        for index in &indexes {
            if let Some(lexical) = index.lexical.get() {
                let head = log_head(&conn, index.id)?;
                lexical.ensure_writer()?;
                let mut marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
                marks.lexical = bring_lexical_up_to(&conn, index.id, lexical, head)?;
                drop(marks);
                // Closing waits for the merges the commit started, so the
                // vector index below is not built beside a merge.
                lexical.close_writer();
            }
        }
        let mut changed = 0;
        for index in &indexes {
            let mut marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
            changed += self.load_vectors(&conn, index, &mut marks)?;
        }
        drop(conn);
        for index in &indexes {
            self.pack_vectors(index);
        }
        self.save_vectors(true)?;
        Ok(changed)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether this process holds the write lock right now.
    pub fn is_writable(&self) -> bool {
        self.lock
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// This store's identity for `WRITING`.
    fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Whether the calling thread may write the derived indexes: it runs
    /// this store's write session (or the process owns the lock for its
    /// lifetime). Other threads read what is committed, even while this
    /// process holds the lock for a write on another thread.
    fn may_write(&self) -> bool {
        match self.access {
            Access::ReadWrite { .. } => true,
            Access::ReadOnly => false,
            Access::Shared { .. } => {
                self.is_writable() && WRITING.with(|w| w.get()) == self.address()
            }
        }
    }

    /// `repair_lexical` on behalf of a read: a repair that cannot run (the
    /// lock busy, the writer's lock held by another process, a failure) is
    /// left to the writer, and the read serves what is committed.
    fn try_repair_lexical(
        &self,
        conn: &Connection,
        library_id: i64,
        dir: &Path,
        verify: bool,
    ) -> bool {
        match self.repair_lexical(conn, library_id, dir, verify) {
            Ok(repaired) => repaired,
            Err(e) => {
                tracing::warn!(library_id, error = %e, "the lexical index could not be repaired now; serving what is committed");
                false
            }
        }
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A poisoned lock means a panic while holding the connection; SQLite
        // rolls back any open transaction, so the connection is still sound.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a write: under shared access, waits for the write lock.
    fn begin_write(&self) -> Result<WriteSession<'_>> {
        let mut session = self.begin_quiet_write()?;
        session.quiet = false;
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(session)
    }

    /// `begin_write` for a write that leaves the documents' generation
    /// alone (access keys): read caches stay valid across it.
    fn begin_quiet_write(&self) -> Result<WriteSession<'_>> {
        let lock_wait = match self.access {
            Access::ReadOnly => return Err(StoreError::ReadOnly("a write")),
            Access::ReadWrite { .. } => None,
            Access::Shared { lock_wait } => Some(lock_wait),
        };
        let gate = match lock_wait {
            None => None,
            Some(lock_wait) => {
                let gate = self.write_gate.lock().unwrap_or_else(|p| p.into_inner());
                let lock = WriteLock::acquire(&self.dir, lock_wait)?;
                *self.lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(lock);
                Some(gate)
            }
        };
        Ok(WriteSession {
            store: self,
            _gate: gate,
            outer: WRITING.with(|w| w.replace(self.address())),
            quiet: true,
        })
    }

    fn library_row(conn: &Connection, name: &LibraryName) -> Result<LibraryRow> {
        let row = conn
            .prepare_cached("SELECT id, space, created_at FROM libraries WHERE name = ?")
            .and_then(|mut s| {
                s.query_row([name.as_str()], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })
            })
            .optional()
            .map_err(sql_err("reading a library"))?
            .ok_or_else(|| StoreError::LibraryNotFound(name.to_string()))?;
        let space: EmbeddingSpace = serde_json::from_str(&row.1)
            .map_err(|e| StoreError::io("library embedding space", e))?;
        Ok(LibraryRow {
            id: row.0,
            name: name.clone(),
            space,
            created_at: row.2,
        })
    }

    /// The library with its document and chunk counts: counted from an
    /// index once per generation, since every search asks for them.
    fn library_info(&self, conn: &Connection, row: LibraryRow) -> Result<LibraryInfo> {
        let generation = self.generation_on(conn)?;
        let cached = self
            .counts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&row.id)
            .copied();
        let (documents, chunks) = match cached {
            Some((g, documents, chunks)) if g == generation => (documents, chunks),
            _ => {
                let (documents, chunks) = conn
                    .prepare_cached(
                        "SELECT COUNT(*), COALESCE(SUM(chunk_count), 0) FROM documents WHERE library_id = ?",
                    )
                    .and_then(|mut s| {
                        s.query_row([row.id], |r| {
                            Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64))
                        })
                    })
                    .map_err(sql_err("counting a library's documents"))?;
                self.counts
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(row.id, (generation, documents, chunks));
                (documents, chunks)
            }
        };
        Ok(LibraryInfo {
            name: row.name,
            space: row.space,
            created_at: row.created_at,
            document_count: documents,
            chunk_count: chunks,
        })
    }

    /// The library's row id, without the counts `library_row` computes.
    fn library_id(conn: &Connection, name: &LibraryName) -> Result<i64> {
        conn.query_row(
            "SELECT id FROM libraries WHERE name = ?",
            [name.as_str()],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql_err("reading a library"))?
        .ok_or_else(|| StoreError::LibraryNotFound(name.to_string()))
    }

    fn index_dir(&self, id: i64) -> PathBuf {
        self.dir.join("indexes").join(id.to_string())
    }

    /// The library's derived indexes, opened on first use and brought up to
    /// the change log's head.
    fn index(&self, conn: &Connection, library: &LibraryRow) -> Result<Arc<LibraryIndex>> {
        self.index_for(conn, library, Need::All)
    }

    /// `index`, for a caller that needs only what `need` says current.
    fn index_for(
        &self,
        conn: &Connection,
        library: &LibraryRow,
        need: Need,
    ) -> Result<Arc<LibraryIndex>> {
        let existing = self
            .indexes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&library.id)
            .cloned();
        let mut opened = false;
        let index = match existing {
            Some(index) => index,
            None => {
                opened = true;
                let dir = self.index_dir(library.id);
                std::fs::create_dir_all(&dir)
                    .map_err(|e| StoreError::io(dir.display().to_string(), e))?;
                let dim = library.space.dim as usize;
                let deferred = need != Need::All && self.is_bulk();
                let (vectors, mark) = match deferred {
                    true => (Vectors::new(dim)?, 0),
                    false => Vectors::load_or_new(&dir, dim)?,
                };
                let mut directory = Directory::default();
                if !deferred {
                    fill_directory(conn, library.id, &mut directory)?;
                }
                let marks = Marks {
                    lexical: 0,
                    vectors: mark,
                    saved: mark,
                    unsaved_chunks: 0,
                    deferred,
                    packing: false,
                };
                let index = Arc::new(LibraryIndex {
                    id: library.id,
                    dim,
                    dir,
                    // Opened by the catch-up below (`open_lexical`).
                    lexical: std::sync::OnceLock::new(),
                    vectors,
                    directory: RwLock::new(directory),
                    marks: Mutex::new(marks),
                });
                self.indexes
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(library.id)
                    .or_insert(index)
                    .clone()
            }
        };
        self.catch_up(conn, &index, need)?;
        if opened {
            self.check_counts(conn, &index)?;
            if self.may_write() {
                remove_stale_lexical(&index.dir);
            }
        }
        Ok(index)
    }

    /// Checks a freshly opened library's derived indexes against the source
    /// of truth once they have caught up: each must hold exactly the
    /// library's chunks (and the lexical index one whole-text entry per
    /// document). One that does not (a crash the replay could not
    /// mend, a file damaged on disk) is rebuilt from SQLite, so no document
    /// is ever missing from one retriever and present in the other. Costs a
    /// count per index on first use of a library in a process.
    fn check_counts(&self, conn: &Connection, index: &LibraryIndex) -> Result<()> {
        let head = log_head(conn, index.id)?;
        let mut marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lexical) = index.lexical.get()
            && marks.lexical == head
            && !lexical_matches(conn, index.id, lexical)?
        {
            if self.may_write() {
                lexical.rebuild(
                    &mut |add| for_each_document_batch(conn, index.id, None, add),
                    head,
                )?;
            } else if self.try_repair_lexical(conn, index.id, &index.dir, true) {
                lexical.reload()?;
                marks.lexical = lexical.watermark()?;
            }
        }
        self.check_vectors(conn, index, &mut marks, head)
    }

    /// The vector half of `check_counts` (nothing while the index is
    /// deferred: it is checked when loaded).
    fn check_vectors(
        &self,
        conn: &Connection,
        index: &LibraryIndex,
        marks: &mut Marks,
        head: i64,
    ) -> Result<()> {
        if marks.deferred || marks.vectors != head {
            return Ok(());
        }
        let expected = chunk_count(conn, index.id)?;
        if index.vectors.len() as u64 == expected {
            return Ok(());
        }
        tracing::warn!(
            library_id = index.id,
            indexed = index.vectors.len(),
            expected,
            "the vector index does not match the database; rebuilding it"
        );
        self.rebuild_vectors(conn, index, marks, head, expected)
    }

    /// Rebuilds a library's vector index from SQLite (`expected` chunks),
    /// with 4-bit codes when they are at least `vectors::PACKED_MIN`, and
    /// saves it when this process may write.
    fn rebuild_vectors(
        &self,
        conn: &Connection,
        index: &LibraryIndex,
        marks: &mut Marks,
        head: i64,
        expected: u64,
    ) -> Result<()> {
        index
            .vectors
            .clear(expected >= vectors::PACKED_MIN as u64)?;
        fill_directory(conn, index.id, &mut index.directory())?;
        fill_vectors(conn, index.id, &index.vectors)?;
        marks.saved = 0;
        marks.unsaved_chunks = expected.max(1);
        if self.may_write() {
            index.vectors.save(&index.dir, head)?;
            marks.saved = head;
            marks.unsaved_chunks = 0;
        }
        Ok(())
    }

    /// The library's lexical index: opened to write when this thread may
    /// write, else as committed (repaired first when there is none and the
    /// write lock is free); None when there is none yet.
    fn open_lexical(
        &self,
        conn: &Connection,
        library_id: i64,
        dir: &Path,
    ) -> Result<Option<Lexical>> {
        let lexical_dir = lexical::lexical_dir(dir);
        let lexical = Lexical::open(&lexical_dir, self.may_write())?;
        if lexical.is_none() && self.try_repair_lexical(conn, library_id, dir, false) {
            return Lexical::open(&lexical_dir, false);
        }
        Ok(lexical)
    }

    /// Replays change-log entries newer than what each derived index
    /// covers; a deferred vector index is loaded first when `need` is all.
    fn catch_up(&self, conn: &Connection, index: &LibraryIndex, need: Need) -> Result<()> {
        let head = log_head(conn, index.id)?;
        let mut marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
        if index.lexical.get().is_none()
            && let Some(opened) = self.open_lexical(conn, index.id, &index.dir)?
        {
            // Under the marks' lock: no other catch-up attaches one meanwhile.
            let _ = index.lexical.set(opened);
        }
        if let Some(lexical) = index.lexical.get() {
            if self.may_write() {
                if !(need == Need::Write && self.is_bulk()) {
                    lexical.ensure_writer()?;
                    marks.lexical = bring_lexical_up_to(conn, index.id, lexical, head)?;
                }
            } else if marks.lexical < head {
                lexical.reload()?;
                marks.lexical = lexical.watermark()?;
                // Still behind: a writer died before its lexical commit, or
                // a bulk write left it to its `settle`. Repair it if we can
                // (`repair_lexical` leaves a live bulk writer's lag alone).
                if marks.lexical < head
                    && self.try_repair_lexical(conn, index.id, &index.dir, false)
                {
                    lexical.reload()?;
                    marks.lexical = lexical.watermark()?;
                }
            }
        }
        match (marks.deferred, need) {
            (true, Need::Lexical | Need::Write) => {}
            (true, Need::All) => {
                self.load_vectors(conn, index, &mut marks)?;
            }
            (false, _) => {
                self.catch_up_vectors(conn, index, &mut marks, head)?;
            }
        }
        Ok(())
    }

    /// Loads a deferred vector index from its file (empty when there is
    /// none), replays the log onto it and checks it as a freshly opened
    /// index is checked. Returns the chunks replayed.
    fn load_vectors(
        &self,
        conn: &Connection,
        index: &LibraryIndex,
        marks: &mut Marks,
    ) -> Result<u64> {
        if !marks.deferred {
            return Ok(0);
        }
        let (loaded, mark) = Vectors::load_or_new(&index.dir, index.dim)?;
        index.vectors.replace(loaded);
        fill_directory(conn, index.id, &mut index.directory())?;
        *marks = Marks {
            lexical: marks.lexical,
            vectors: mark,
            saved: mark,
            unsaved_chunks: 0,
            deferred: false,
            packing: marks.packing,
        };
        let head = log_head(conn, index.id)?;
        let replayed = self.catch_up_vectors(conn, index, marks, head)?;
        self.check_vectors(conn, index, marks, head)?;
        Ok(replayed)
    }

    /// Replays the change log from the vector index's mark to `head`.
    /// Returns the chunks added or removed.
    fn catch_up_vectors(
        &self,
        conn: &Connection,
        index: &LibraryIndex,
        marks: &mut Marks,
        head: i64,
    ) -> Result<u64> {
        if marks.vectors >= head {
            return Ok(0);
        }
        let changed = replay_vectors(conn, index, &index.vectors, marks.vectors, head)?;
        marks.vectors = head;
        marks.unsaved_chunks += changed;
        if self.may_write() && marks.unsaved_chunks >= SAVE_EVERY_CHUNKS {
            index.vectors.save(&index.dir, head)?;
            marks.saved = head;
            marks.unsaved_chunks = 0;
        }
        Ok(changed)
    }

    /// Rebuilds a vector index that has grown to `vectors::PACKED_MIN`
    /// vectors with 4-bit codes (issue 49), once, by the writer, without
    /// stopping searches: a copy is built from a snapshot of the database on
    /// a connection of its own while searches go on over the 8-bit index;
    /// then, under the store's connection and the marks, what the log holds
    /// since the snapshot is replayed onto the copy, which takes the index's
    /// place and is saved. A reader, or a library merely opened, keeps what
    /// its file holds. Nothing when another thread is already packing it.
    /// A failure is logged and leaves the 8-bit index serving (the next
    /// write tries again): the write that called it has committed.
    fn pack_vectors(&self, index: &LibraryIndex) {
        if !self.may_write() || !index.vectors.wants_packing() {
            return;
        }
        {
            let mut marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
            if marks.deferred || marks.packing {
                return;
            }
            marks.packing = true;
        }
        tracing::info!(
            library_id = index.id,
            chunks = index.vectors.len(),
            "the vector index has grown large; rebuilding it with 4-bit codes"
        );
        let packed = self
            .build_packed(index)
            .and_then(|(built, from)| self.swap_packed(index, built, from));
        index
            .marks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .packing = false;
        if let Err(e) = packed {
            tracing::warn!(library_id = index.id, error = %e, "the vector index could not be rebuilt with 4-bit codes; it keeps its 8-bit codes for now");
        }
    }

    /// The copy `pack_vectors` builds: every vector of the library as one
    /// read transaction sees them, and the log's head it saw.
    fn build_packed(&self, index: &LibraryIndex) -> Result<(Vectors, i64)> {
        let mut conn = Connection::open(self.dir.join("folio.sqlite"))
            .map_err(sql_err("opening the database"))?;
        let snapshot = conn
            .transaction()
            .map_err(sql_err("rebuilding the vector index"))?;
        let from = log_head(&snapshot, index.id)?;
        let built = Vectors::with_codes(index.dim, true)?;
        fill_vectors(&snapshot, index.id, &built)?;
        Ok((built, from))
    }

    /// Brings `built` (as of log entry `from`) up to the log's head and puts
    /// it in the index's place, saved.
    fn swap_packed(&self, index: &LibraryIndex, built: Vectors, from: i64) -> Result<()> {
        let conn = self.conn();
        let mut marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
        let head = log_head(&conn, index.id)?;
        replay_vectors(&conn, index, &built, from, head)?;
        index.vectors.replace(built);
        marks.vectors = head;
        // Until it is saved, the file holds the 8-bit index of an earlier
        // mark, which a reopening replays as any other.
        marks.unsaved_chunks = (index.vectors.len() as u64).max(1);
        index.vectors.save(&index.dir, head)?;
        marks.saved = head;
        marks.unsaved_chunks = 0;
        Ok(())
    }

    /// Brings a library's lexical index up to the log's head on behalf of a
    /// read-only process, when no writer holds the lock (so none is about to
    /// do it); with `verify`, or when the caught-up index does not hold
    /// exactly the library's chunks, rebuilds it from SQLite. Returns
    /// whether the repair ran.
    fn repair_lexical(
        &self,
        conn: &Connection,
        library_id: i64,
        dir: &Path,
        verify: bool,
    ) -> Result<bool> {
        // Another process's bulk write will bring the index up to date when
        // it settles (a search in the bulk process itself does it now).
        if !self.is_bulk() && BulkMark::held(&self.dir) {
            return Ok(false);
        }
        let Some(_lock) = WriteLock::try_acquire(&self.dir)? else {
            return Ok(false);
        };
        let Some(writer) = Lexical::open(&lexical::lexical_dir(dir), true)? else {
            return Ok(false);
        };
        // Under the lock nothing else writes: the head and the counts read
        // now are the state to repair to.
        let head = log_head(conn, library_id)?;
        let from = writer.watermark()?;
        if from < head {
            tracing::info!(
                library_id,
                from,
                head,
                "bringing the lexical index up to date for a reader"
            );
            bring_lexical_up_to(conn, library_id, &writer, head)?;
        }
        if (verify || from < head) && !lexical_matches(conn, library_id, &writer)? {
            writer.rebuild(
                &mut |add| for_each_document_batch(conn, library_id, None, add),
                head,
            )?;
        }
        remove_stale_lexical(dir);
        Ok(true)
    }

    /// The chunk keys of `library_id` that `filter` allows (`None`: no
    /// filter), from the cache when this generation evaluated it already.
    fn allowed_keys(
        &self,
        conn: &Connection,
        index: &LibraryIndex,
        filter: &Filter,
    ) -> Result<Option<Arc<HashSet<u64>>>> {
        self.allowed(conn, index, filter, Unit::Chunk)
    }

    /// The keys of `unit`s of `library_id` that `filter` allows: chunk keys,
    /// or the document keys (`lexical::document_key`) of documents with an
    /// allowed chunk.
    fn allowed(
        &self,
        conn: &Connection,
        index: &LibraryIndex,
        filter: &Filter,
        unit: Unit,
    ) -> Result<Option<Arc<HashSet<u64>>>> {
        if filter.is_empty() {
            return Ok(None);
        }
        let library_id = index.id;
        let generation = self.generation_on(conn)?;
        let cache = || self.filters.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(allowed) = cache().get(library_id, generation, filter, unit) {
            return Ok(Some(allowed));
        }
        // One pass gives both sets (a hybrid search over documents wants
        // both), each cached.
        let (chunks, documents) = match Self::allowed_from_directory(conn, index, filter)? {
            Some(sets) => sets,
            None => Self::allowed_from_chunks(conn, library_id, filter)?,
        };
        let (chunks, documents) = (Arc::new(chunks), Arc::new(documents));
        let mut cached = cache();
        cached.put(library_id, generation, filter, Unit::Chunk, chunks.clone());
        cached.put(
            library_id,
            generation,
            filter,
            Unit::Document,
            documents.clone(),
        );
        Ok(Some(match unit {
            Unit::Chunk => chunks,
            Unit::Document => documents,
        }))
    }

    /// A filter on documents' metadata alone, answered by the metadata
    /// index (the documents) and the chunk directory (their chunks' keys):
    /// the chunk rows are never read, a third of a new filter's cost at
    /// 100,000 chunks. `None` when the directory may not match the
    /// database (the vector index behind the change log or not loaded, a
    /// document id folio did not make) or the filter has other conditions.
    #[allow(clippy::type_complexity)]
    fn allowed_from_directory(
        conn: &Connection,
        index: &LibraryIndex,
        filter: &Filter,
    ) -> Result<Option<(HashSet<u64>, HashSet<u64>)>> {
        let Some((sql, params)) = filter_sql::documents_by_metadata(filter, index.id) else {
            return Ok(None);
        };
        // The log's head and the documents read in one snapshot, the
        // directory held still meanwhile (a replay takes the marks first).
        let snapshot = conn
            .unchecked_transaction()
            .map_err(sql_err("evaluating a filter"))?;
        let marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
        if marks.deferred || marks.vectors != log_head(&snapshot, index.id)? {
            return Ok(None);
        }
        let directory = index.directory.read().unwrap_or_else(|p| p.into_inner());
        let (mut chunks, mut documents) = (HashSet::new(), HashSet::new());
        let whole = each_filter_row(&snapshot, &sql, params, |row| {
            let Some((number, keys)) = directory.listed(filter_text(row, 0)?) else {
                return Ok(false);
            };
            if !keys.is_empty() {
                chunks.extend(keys.iter().copied());
                documents.insert(number);
            }
            Ok(true)
        })?;
        Ok(whole.then_some((chunks, documents)))
    }

    /// A filter's chunk keys and document keys, from the chunk rows.
    fn allowed_from_chunks(
        conn: &Connection,
        library_id: i64,
        filter: &Filter,
    ) -> Result<(HashSet<u64>, HashSet<u64>)> {
        let (sql, params) = filter_sql::chunks_and_documents(filter, library_id);
        let (mut chunks, mut documents) = (HashSet::new(), HashSet::new());
        let mut last = String::new();
        each_filter_row(conn, &sql, params, |row| {
            chunks.insert(
                row.get::<_, i64>(0)
                    .map_err(sql_err("evaluating a filter"))? as u64,
            );
            let document = filter_text(row, 1)?;
            if document != last {
                documents.extend(lexical::document_key(document));
                last = document.to_string();
            }
            Ok(true)
        })?;
        Ok((chunks, documents))
    }

    /// The store's generation read on a connection already held.
    fn generation_on(&self, conn: &Connection) -> Result<u64> {
        let others: i64 = conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
            .map_err(sql_err("reading the data version"))?;
        let ours = self.writes.load(std::sync::atomic::Ordering::SeqCst);
        Ok(((others as u64) << 32) ^ ours)
    }

    /// Turns (key, score) pairs into hits with chunk ids: from the
    /// library's directory, and from the database for keys it lacks (a key
    /// the database lacks too was deleted after the index was read, and
    /// drops out).
    fn hits(&self, index: &LibraryIndex, scored: Vec<(u64, f32)>) -> Result<Vec<Hit>> {
        let mut ids = HashMap::with_capacity(scored.len());
        let mut missing = Vec::new();
        {
            let directory = index.directory.read().unwrap_or_else(|p| p.into_inner());
            for (key, _) in &scored {
                match directory.chunk(*key) {
                    Some(chunk) => {
                        ids.insert(*key, Some(chunk));
                    }
                    None => missing.push(*key),
                }
            }
        }
        if !missing.is_empty() {
            for_chunk_keys(
                &self.conn(),
                "SELECT key, document_id, idx FROM chunks WHERE key IN (SELECT value FROM json_each(?1))",
                missing.into_iter(),
                |row| {
                    ids.insert(row.get::<_, i64>(0)? as u64, chunk_id(row)?);
                    Ok(())
                },
            )
            .map_err(sql_err("resolving hits"))?;
        }
        Ok(keyed_hits(scored, ids))
    }

    /// The best `k` of the vector index's answer (best first, scored from
    /// its codes) as hits: the first `Vectors::exact_rescored` rescored by their
    /// exact cosine similarity from the f32 vectors the database keeps, the
    /// rest as the codes scored them (within about 10⁻³ for i8 codes, 6·10⁻³
    /// for 4-bit ones), all re-sorted.
    /// Reading a stored vector costs a row read; the first places are where
    /// order decides what a page shows.
    fn rescored_hits(
        &self,
        index: &LibraryIndex,
        query: &[f32],
        mut answer: Vec<(u64, f32)>,
        k: usize,
    ) -> Result<Vec<Hit>> {
        let rest = answer.split_off(answer.len().min(index.vectors.exact_rescored()));
        let mut hits = exact_hits(&self.conn(), query, answer)?;
        hits.extend(self.hits(index, rest)?);
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(k);
        Ok(hits)
    }

    /// The libraries' derived indexes this process has open.
    fn open_indexes(&self) -> Vec<Arc<LibraryIndex>> {
        self.indexes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Saves vector indexes with unsaved changes. Unless `all`, an index is
    /// saved only when its unsaved tail is worth it — at least
    /// `FLUSH_MIN_CHUNKS` changed chunks or 5 % of the index — because saving
    /// rewrites the whole file, while replaying a short tail from SQLite on
    /// the next open costs milliseconds.
    fn save_vectors(&self, all: bool) -> Result<()> {
        if !self.may_write() {
            return Ok(());
        }
        for index in self.open_indexes() {
            let mut marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
            let worth_it = marks.unsaved_chunks >= FLUSH_MIN_CHUNKS
                || marks.unsaved_chunks * 20 >= index.vectors.len() as u64;
            if marks.saved < marks.vectors && (all || worth_it) {
                index.vectors.save(&index.dir, marks.vectors)?;
                marks.saved = marks.vectors;
                marks.unsaved_chunks = 0;
            }
        }
        Ok(())
    }
}

impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        if let Err(e) = self.save_vectors(false) {
            tracing::warn!(error = %e, "saving vector indexes on close failed; they will be replayed on next open");
        }
        // The derived indexes (and the lexical writers' merges) go before
        // the write lock does, so the next owner never meets a writer of
        // ours still at work.
        self.indexes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// Removes a library's lexical indexes made by earlier analysers once the
/// current one exists (they are derived data; a failure only costs disk).
fn remove_stale_lexical(index_dir: &Path) {
    for stale in lexical::stale_lexical_dirs(index_dir) {
        tracing::info!(path = %stale.display(), "removing a lexical index of an earlier analyser");
        if let Err(e) = std::fs::remove_dir_all(&stale) {
            tracing::warn!(path = %stale.display(), error = %e, "could not remove an old lexical index");
        }
    }
}

/// A document's title and text, and its language tag when its metadata
/// has one (a string): what the lexical index reads of it
/// (`text_and_language`).
const DOCUMENT_TEXT_AND_LANGUAGE: &str = "SELECT title, text,
    CASE json_type(metadata, '$.language') WHEN 'text' THEN json_extract(metadata, '$.language') END
    FROM documents WHERE id = ?";

/// A row of `DOCUMENT_TEXT_AND_LANGUAGE`: the document's whole text as
/// the lexical index scores it (`document_text`), and its language tag.
fn text_and_language(row: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Option<String>)> {
    Ok((
        lexical::document_text(
            row.get::<_, Option<String>>(0)?.as_deref(),
            &row.get::<_, String>(1)?,
        ),
        row.get(2)?,
    ))
}

/// Hands `add` the whole text and current chunks (key, embedded text) of
/// every document touched by log entries in (from, to], a few hundred
/// documents at a time; a deleted document comes with neither.
fn for_each_changed_batch(
    conn: &Connection,
    library_id: i64,
    from: i64,
    to: i64,
    add: &mut dyn FnMut(LexicalBatch) -> Result<()>,
) -> Result<()> {
    let documents = changed_since(conn, library_id, from, to)?;
    let mut chunks_of = conn
        .prepare_cached(
            "SELECT key, context || text FROM chunks WHERE document_id = ? ORDER BY idx",
        )
        .map_err(sql_err("replaying the change log"))?;
    let mut text_of = conn
        .prepare_cached(DOCUMENT_TEXT_AND_LANGUAGE)
        .map_err(sql_err("replaying the change log"))?;
    for slice in documents.chunks(LEXICAL_BATCH_DOCUMENTS) {
        let mut batch = Vec::with_capacity(slice.len());
        for (document, existed) in slice {
            let chunks = chunks_of
                .query_map([document], |r| {
                    Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?))
                })
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(sql_err("replaying the change log"))?;
            let (text, language) = text_of
                .query_row([document], text_and_language)
                .optional()
                .map_err(sql_err("replaying the change log"))?
                .unzip();
            batch.push(LexicalDocument {
                id: document.clone(),
                text: text.filter(|_| !chunks.is_empty()),
                chunks,
                replaces: *existed,
                language: language.flatten(),
            });
        }
        add(batch)?;
    }
    Ok(())
}

/// Brings `lexical` (whose writer is open) from its watermark up to `head`
/// in one commit, a batch of documents at a time; an index that covers
/// nothing yet is built from the documents rather than from the whole
/// log. Returns the new watermark.
fn bring_lexical_up_to(
    conn: &Connection,
    library_id: i64,
    lexical: &Lexical,
    head: i64,
) -> Result<i64> {
    let from = lexical.watermark()?;
    if from == 0 && head > 0 {
        // A build cut short goes on after the last document it committed,
        // then catches up with what changed since it started.
        let place = lexical
            .build_place()?
            .filter(|(started, _)| *started <= head);
        let started = place.as_ref().map_or(head, |(started, _)| *started);
        let after = place.as_ref().map(|(_, after)| after.as_str());
        lexical.build(
            &mut |add| for_each_document_batch(conn, library_id, after, add),
            started,
            after.is_some(),
            BUILD_COMMIT_CHUNKS,
        )?;
        if started < head {
            // The index may hold any of these documents, read before or
            // after they changed: each replaces what it has.
            lexical.update(
                &mut |add| {
                    for_each_changed_batch(conn, library_id, started, head, &mut |mut batch| {
                        batch.iter_mut().for_each(|d| d.replaces = true);
                        add(batch)
                    })
                },
                head,
            )?;
        }
    } else if from < head {
        lexical.update(
            &mut |add| for_each_changed_batch(conn, library_id, from, head, add),
            head,
        )?;
    } else {
        return Ok(from);
    }
    Ok(head)
}

/// Runs a filter's query, handing each row to `each` until it answers
/// false; whether every row was handed.
fn each_filter_row(
    conn: &Connection,
    sql: &str,
    params: Vec<rusqlite::types::Value>,
    mut each: impl FnMut(&rusqlite::Row<'_>) -> Result<bool>,
) -> Result<bool> {
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(sql_err("evaluating a filter"))?;
    let mut rows = stmt
        .query(params_from_iter(params))
        .map_err(sql_err("evaluating a filter"))?;
    while let Some(row) = rows.next().map_err(sql_err("evaluating a filter"))? {
        if !each(row)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Column `index` of a filter's row, as text borrowed from the row.
fn filter_text<'r>(row: &'r rusqlite::Row<'_>, index: usize) -> Result<&'r str> {
    row.get_ref(index)
        .and_then(|v| v.as_str().map_err(Into::into))
        .map_err(sql_err("evaluating a filter"))
}

/// The last change-log position of a library (0 when it has none).
fn log_head(conn: &Connection, library_id: i64) -> Result<i64> {
    conn.prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM changes WHERE library_id = ?")
        .and_then(|mut stmt| stmt.query_row([library_id], |r| r.get(0)))
        .map_err(sql_err("reading the change log"))
}

/// Whether a lexical index holds as many live chunk entries and whole-
/// document entries as the library has chunks and documents; logs what
/// differs when it does not.
fn lexical_matches(conn: &Connection, library_id: i64, lexical: &Lexical) -> Result<bool> {
    let (chunks, documents) = (lexical.len()?, lexical.document_count()?);
    let expected = source_counts(conn, library_id)?;
    if (chunks, documents) == expected {
        return Ok(true);
    }
    tracing::warn!(
        library_id,
        chunks,
        documents,
        expected_chunks = expected.0,
        expected_documents = expected.1,
        "the lexical index does not match the database; rebuilding it"
    );
    Ok(false)
}

/// The number of chunks a library holds in the source of truth.
fn chunk_count(conn: &Connection, library_id: i64) -> Result<u64> {
    Ok(source_counts(conn, library_id)?.0)
}

/// A library's chunks and documents in the source of truth.
fn source_counts(conn: &Connection, library_id: i64) -> Result<(u64, u64)> {
    conn.query_row(
        "SELECT COALESCE(SUM(chunk_count), 0), COUNT(*) FROM documents WHERE library_id = ?",
        [library_id],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
    )
    .map_err(sql_err("counting chunks"))
}

/// Documents handed to a lexical index at a time: the text of a few
/// hundred, never a large library's or a long change log's.
const LEXICAL_BATCH_DOCUMENTS: usize = 256;

/// How many chunks a lexical build indexes between the commits that let it
/// go on from its place when cut short.
const BUILD_COMMIT_CHUNKS: usize = 50_000;

/// Hands every document of a library (or every one whose id sorts after
/// `after`) with its chunks (key, embedded text) to `add`, in the order of
/// their ids, a few hundred documents at a time, so a rebuild never holds a
/// large library's text in memory at once.
fn for_each_document_batch(
    conn: &Connection,
    library_id: i64,
    after: Option<&str>,
    add: &mut dyn FnMut(LexicalBatch) -> Result<()>,
) -> Result<()> {
    let mut stmt = conn
        .prepare(
            "SELECT c.document_id, c.key, c.context || c.text FROM chunks c
             JOIN documents d ON d.id = c.document_id
             WHERE d.library_id = ? AND c.document_id > ? ORDER BY c.document_id, c.idx",
        )
        .map_err(sql_err("reading chunks"))?;
    let mut text_of = conn
        .prepare_cached(DOCUMENT_TEXT_AND_LANGUAGE)
        .map_err(sql_err("reading documents"))?;
    let mut rows = stmt
        .query(params![library_id, after.unwrap_or_default()])
        .map_err(sql_err("reading chunks"))?;
    let mut batch: LexicalBatch = Vec::new();
    while let Some(row) = rows.next().map_err(sql_err("reading chunks"))? {
        let document: String = row.get(0).map_err(sql_err("reading chunks"))?;
        let key = row.get::<_, i64>(1).map_err(sql_err("reading chunks"))? as u64;
        let text: String = row.get(2).map_err(sql_err("reading chunks"))?;
        match batch.last_mut() {
            Some(last) if last.id == document => last.chunks.push((key, text)),
            _ => {
                if batch.len() == LEXICAL_BATCH_DOCUMENTS {
                    add(std::mem::take(&mut batch))?;
                }
                let (whole, language) = text_of
                    .query_row([&document], text_and_language)
                    .map_err(sql_err("reading documents"))?;
                batch.push(LexicalDocument {
                    id: document,
                    text: Some(whole),
                    chunks: vec![(key, text)],
                    // The rebuild has emptied the index.
                    replaces: false,
                    language,
                });
            }
        }
    }
    if !batch.is_empty() {
        add(batch)?;
    }
    Ok(())
}

/// Distinct documents touched by log entries in (from, to], in log order,
/// each with whether it existed at `from`: its first
/// entry in the range removed chunks. Both writes that log a change (a put
/// and a delete) log the keys the document held, and a document has at
/// least one chunk, so a document whose first entry removed none did not
/// exist then, and an index that reflects the log up to `from` holds none
/// of its entries.
fn changed_since(
    conn: &Connection,
    library_id: i64,
    from: i64,
    to: i64,
) -> Result<Vec<(String, bool)>> {
    let mut stmt = conn
        .prepare_cached("SELECT document_id, removed_keys != '[]' FROM changes WHERE library_id = ? AND seq > ? AND seq <= ? ORDER BY seq")
        .map_err(sql_err("reading the change log"))?;
    let all = stmt
        .query_map(params![library_id, from, to], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(sql_err("reading the change log"))?;
    let mut seen = HashSet::new();
    Ok(all
        .into_iter()
        .filter(|(d, _)| seen.insert(d.clone()))
        .collect())
}

/// Chunk keys removed by log entries in (from, to].
fn removed_keys(conn: &Connection, library_id: i64, from: i64, to: i64) -> Result<Vec<u64>> {
    let mut stmt = conn
        .prepare_cached("SELECT removed_keys FROM changes WHERE library_id = ? AND seq > ? AND seq <= ? AND removed_keys != '[]'")
        .map_err(sql_err("reading the change log"))?;
    let lists = stmt
        .query_map(params![library_id, from, to], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(sql_err("reading the change log"))?;
    let mut keys = BTreeSet::new();
    for list in lists {
        let parsed: Vec<u64> =
            serde_json::from_str(&list).map_err(|e| StoreError::io("change log", e))?;
        keys.extend(parsed);
    }
    Ok(keys.into_iter().collect())
}

/// Adds every vector of the library to `target`, in batches.
fn fill_vectors(conn: &Connection, library_id: i64, target: &Vectors) -> Result<()> {
    let mut stmt = conn
        .prepare(
            "SELECT c.key, c.vector FROM chunks c JOIN documents d ON d.id = c.document_id
             WHERE d.library_id = ?",
        )
        .map_err(sql_err("rebuilding the vector index"))?;
    let mut rows = stmt
        .query([library_id])
        .map_err(sql_err("rebuilding the vector index"))?;
    let mut items = Vec::with_capacity(1024);
    while let Some(row) = rows
        .next()
        .map_err(sql_err("rebuilding the vector index"))?
    {
        items.push((
            row.get::<_, i64>(0)
                .map_err(sql_err("rebuilding the vector index"))? as u64,
            rows::vector_from_bytes(
                &row.get::<_, Vec<u8>>(1)
                    .map_err(sql_err("rebuilding the vector index"))?,
            ),
        ));
        if items.len() == 1024 {
            target.add(&items)?;
            items.clear();
        }
    }
    target.add(&items)
}

/// Applies the change log's entries in (from, to] to `target` (the
/// library's vector index, or a copy being built to replace it) and to the
/// library's chunk directory: removed keys leave, each changed document's
/// chunks are (re)added. Idempotent: keys already present are kept, keys
/// absent are not removed. Returns the chunks added or removed.
fn replay_vectors(
    conn: &Connection,
    index: &LibraryIndex,
    target: &Vectors,
    from: i64,
    to: i64,
) -> Result<u64> {
    let removed = removed_keys(conn, index.id, from, to)?;
    target.remove(&removed)?;
    index.directory().remove(&removed);
    let mut added = 0u64;
    // Batched across documents, so large replays insert in parallel.
    let mut pending = Vec::new();
    for (document, _) in changed_since(conn, index.id, from, to)? {
        let mut stmt = conn
            .prepare_cached("SELECT key, idx, vector FROM chunks WHERE document_id = ?")
            .map_err(sql_err("replaying the change log"))?;
        let mut directory = index.directory();
        let items = stmt
            .query_map([&document], |r| {
                let key = r.get::<_, i64>(0)? as u64;
                directory.insert(key, &document, r.get(1)?);
                Ok((key, rows::vector_from_bytes(&r.get::<_, Vec<u8>>(2)?)))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql_err("replaying the change log"))?;
        drop(directory);
        added += items.len() as u64;
        pending.extend(items);
        if pending.len() >= 4096 {
            target.add(&pending)?;
            pending.clear();
        }
    }
    target.add(&pending)?;
    Ok(added + removed.len() as u64)
}

/// Deletes a document's chunks and row inside `tx`; returns the removed keys.
fn remove_document_rows(tx: &Connection, id: &str) -> Result<Vec<u64>> {
    let mut stmt = tx
        .prepare_cached("SELECT key FROM chunks WHERE document_id = ?")
        .map_err(sql_err("deleting"))?;
    let keys = stmt
        .query_map([id], |r| r.get::<_, i64>(0).map(|k| k as u64))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(sql_err("deleting"))?;
    tx.execute("DELETE FROM chunks WHERE document_id = ?", [id])
        .map_err(sql_err("deleting"))?;
    tx.execute("DELETE FROM metadata_values WHERE document_id = ?", [id])
        .map_err(sql_err("deleting"))?;
    tx.execute("DELETE FROM entity_mentions WHERE document_id = ?", [id])
        .map_err(sql_err("deleting"))?;
    tx.execute("DELETE FROM originals WHERE document_id = ?", [id])
        .map_err(sql_err("deleting"))?;
    tx.execute("DELETE FROM documents WHERE id = ?", [id])
        .map_err(sql_err("deleting"))?;
    Ok(keys)
}

/// The library of a document, or `NotFound`.
fn document_library(tx: &Connection, id: &DocumentId, context: &'static str) -> Result<i64> {
    tx.query_row(
        "SELECT library_id FROM documents WHERE id = ?",
        [id.as_str()],
        |r| r.get(0),
    )
    .optional()
    .map_err(sql_err(context))?
    .ok_or_else(|| StoreError::NotFound {
        what: "document",
        id: id.to_string(),
    })
}

fn log_change(tx: &Connection, library_id: i64, document: &str, removed: &[u64]) -> Result<()> {
    let removed = serde_json::to_string(removed).map_err(|e| StoreError::io("change log", e))?;
    tx.execute(
        "INSERT INTO changes (library_id, document_id, removed_keys) VALUES (?, ?, ?)",
        params![library_id, document, removed],
    )
    .map_err(sql_err("writing the change log"))?;
    Ok(())
}

impl Store for EmbeddedStore {
    fn create_library(&self, name: &LibraryName, space: &EmbeddingSpace) -> Result<LibraryInfo> {
        let _write = self.begin_write()?;
        let conn = self.conn();
        match Self::library_row(&conn, name) {
            Ok(row) => match row.space.difference(space) {
                None => self.library_info(&conn, row),
                Some(difference) => Err(StoreError::EmbeddingMismatch {
                    library: name.to_string(),
                    difference,
                }),
            },
            Err(StoreError::LibraryNotFound(_)) => {
                let space_json =
                    serde_json::to_string(space).map_err(|e| StoreError::io("library", e))?;
                conn.execute(
                    "INSERT INTO libraries (name, space, created_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    params![name.as_str(), space_json],
                )
                .map_err(sql_err("creating a library"))?;
                let row = Self::library_row(&conn, name)?;
                self.library_info(&conn, row)
            }
            Err(e) => Err(e),
        }
    }

    fn library(&self, name: &LibraryName) -> Result<LibraryInfo> {
        let conn = self.conn();
        let row = Self::library_row(&conn, name)?;
        self.library_info(&conn, row)
    }

    fn libraries(&self) -> Result<Vec<LibraryInfo>> {
        let conn = self.conn();
        let names: Vec<String> = conn
            .prepare("SELECT name FROM libraries ORDER BY name")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .map_err(sql_err("listing libraries"))?;
        names
            .into_iter()
            .filter_map(|n| LibraryName::new(n).ok())
            .map(|n| self.library_info(&conn, Self::library_row(&conn, &n)?))
            .collect()
    }

    fn delete_library(&self, name: &LibraryName) -> Result<()> {
        let _write = self.begin_write()?;
        let mut conn = self.conn();
        let row = Self::library_row(&conn, name)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("deleting a library"))?;
        for sql in [
            "DELETE FROM chunks WHERE document_id IN (SELECT id FROM documents WHERE library_id = ?1)",
            "DELETE FROM metadata_values WHERE library_id = ?1",
            "DELETE FROM entity_mentions WHERE library_id = ?1",
            "DELETE FROM originals WHERE document_id IN (SELECT id FROM documents WHERE library_id = ?1)",
            "DELETE FROM documents WHERE library_id = ?1",
            "DELETE FROM changes WHERE library_id = ?1",
            "DELETE FROM libraries WHERE id = ?1",
        ] {
            tx.execute(sql, [row.id])
                .map_err(sql_err("deleting a library"))?;
        }
        tx.commit().map_err(sql_err("deleting a library"))?;
        self.indexes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&row.id);
        // Library ids are never reused, so a leftover folder is harmless.
        let _ = std::fs::remove_dir_all(self.index_dir(row.id));
        Ok(())
    }

    fn content_hash(&self, id: &DocumentId) -> Result<Option<String>> {
        self.conn()
            .query_row(
                "SELECT content_hash FROM documents WHERE id = ?",
                [id.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err("reading a document"))
    }

    fn put_documents(&self, documents: Vec<NewDocument>, force: bool) -> Result<Vec<PutOutcome>> {
        let _write = self.begin_write()?;
        let mut conn = self.conn();
        let mut libraries: HashMap<LibraryName, LibraryRow> = HashMap::new();
        for new in &documents {
            if !libraries.contains_key(&new.document.library) {
                let row = Self::library_row(&conn, &new.document.library)?;
                libraries.insert(new.document.library.clone(), row);
            }
            let row = &libraries[&new.document.library];
            if let Some(difference) = row.space.difference(&new.space) {
                return Err(StoreError::EmbeddingMismatch {
                    library: row.name.to_string(),
                    difference,
                });
            }
            folio_store::validate(new, &row.space)?;
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("writing documents"))?;
        let mut outcomes = Vec::with_capacity(documents.len());
        let mut touched = HashSet::new();
        for new in &documents {
            let doc = &new.document;
            let library_id = libraries[&doc.library].id;
            let existing: Option<(String, i64)> = tx
                .query_row(
                    "SELECT content_hash, library_id FROM documents WHERE id = ?",
                    [doc.id.as_str()],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(sql_err("writing documents"))?;
            let (outcome, removed) = match existing {
                Some((hash, _)) if hash == doc.content_hash && !force => {
                    // An unchanged copy keeps its bytes; one ingested before
                    // bytes were kept gains them.
                    if let Some(bytes) = &new.original {
                        tx.execute(
                            "INSERT OR IGNORE INTO originals (document_id, bytes) VALUES (?, ?)",
                            params![doc.id.as_str(), bytes],
                        )
                        .map_err(sql_err("writing documents"))?;
                    }
                    outcomes.push(PutOutcome::Skipped);
                    continue;
                }
                Some(_) => (
                    PutOutcome::Replaced,
                    remove_document_rows(&tx, doc.id.as_str())?,
                ),
                None => (PutOutcome::Indexed, Vec::new()),
            };
            rows::insert_document(&tx, library_id, doc)?;
            for (chunk, vector) in new.chunks.iter().zip(&new.vectors) {
                rows::insert_chunk(&tx, chunk, &vector_bytes(vector))?;
            }
            rows::insert_mentions(&tx, library_id, doc.id.as_str(), &new.mentions)?;
            if let Some(bytes) = &new.original {
                tx.execute(
                    "INSERT INTO originals (document_id, bytes) VALUES (?, ?)",
                    params![doc.id.as_str(), bytes],
                )
                .map_err(sql_err("writing documents"))?;
            }
            log_change(&tx, library_id, doc.id.as_str(), &removed)?;
            touched.insert(library_id);
            outcomes.push(outcome);
        }
        tx.commit().map_err(sql_err("committing documents"))?;
        let mut indexes = Vec::new();
        for row in libraries.values().filter(|r| touched.contains(&r.id)) {
            indexes.push(self.index_for(&conn, row, Need::Write)?);
        }
        // Searches use the connection: it is free while an index grown
        // large is packed.
        drop(conn);
        for index in indexes {
            self.pack_vectors(&index);
        }
        Ok(outcomes)
    }

    fn document(&self, id: &DocumentId) -> Result<Document> {
        let conn = self.conn();
        conn.query_row(&format!("SELECT {DOCUMENT_COLUMNS}, d.text FROM documents d JOIN libraries l ON l.id = d.library_id WHERE d.id = ?"), [id.as_str()], document_from_row)
            .optional()
            .map_err(sql_err("reading a document"))?
            .ok_or_else(|| StoreError::NotFound { what: "document", id: id.to_string() })
    }

    fn original(&self, id: &DocumentId) -> Result<Option<Vec<u8>>> {
        self.conn()
            .query_row(
                "SELECT bytes FROM originals WHERE document_id = ?",
                [id.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err("reading a document"))
    }

    fn documents(
        &self,
        library: &LibraryName,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<DocumentSummary>, u64)> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN libraries l ON l.id = d.library_id
                 WHERE d.library_id = ? ORDER BY d.source, d.id LIMIT ? OFFSET ?"
            ))
            .map_err(sql_err("listing documents"))?;
        let documents = stmt
            .query_map(
                params![row.id, limit as i64, offset as i64],
                summary_from_row,
            )
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql_err("listing documents"))?;
        let total = self.library_info(&conn, row)?.document_count;
        Ok((documents, total))
    }

    fn delete_document(&self, id: &DocumentId) -> Result<()> {
        let _write = self.begin_write()?;
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("deleting"))?;
        let library_id = document_library(&tx, id, "deleting")?;
        let removed = remove_document_rows(&tx, id.as_str())?;
        log_change(&tx, library_id, id.as_str(), &removed)?;
        tx.commit().map_err(sql_err("deleting"))?;
        let name: String = conn
            .query_row(
                "SELECT name FROM libraries WHERE id = ?",
                [library_id],
                |r| r.get(0),
            )
            .map_err(sql_err("deleting"))?;
        let name = LibraryName::new(name).map_err(|e| StoreError::io("library name", e))?;
        let row = Self::library_row(&conn, &name)?;
        self.index_for(&conn, &row, Need::Write)?;
        Ok(())
    }

    fn chunks(&self, id: &DocumentId, range: Range<u32>) -> Result<Vec<Chunk>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? AND c.idx >= ? AND c.idx < ? ORDER BY c.idx"
            ))
            .map_err(sql_err("reading chunks"))?;
        stmt.query_map(params![id.as_str(), range.start, range.end], chunk_from_row)
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql_err("reading chunks"))
    }

    fn vectors(&self, id: &DocumentId) -> Result<Vec<Vec<f32>>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached("SELECT vector FROM chunks WHERE document_id = ? ORDER BY idx")
            .map_err(sql_err("reading vectors"))?;
        let vectors = stmt
            .query_map([id.as_str()], |r| {
                Ok(rows::vector_from_bytes(&r.get::<_, Vec<u8>>(0)?))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql_err("reading vectors"))?;
        if vectors.is_empty() {
            return Err(StoreError::NotFound {
                what: "document",
                id: id.to_string(),
            });
        }
        Ok(vectors)
    }

    fn chunks_with_documents(&self, ids: &[ChunkId]) -> Result<Vec<ChunkWithDocument>> {
        let conn = self.conn();
        // One snapshot for both reads. Two single-table statements, not one
        // join: SQLite re-prepared the join for many a bound document id
        // (a third of the calls at 100,000 chunks), and a page's chunks
        // often share a document, read once.
        let snapshot = conn
            .unchecked_transaction()
            .map_err(sql_err("reading chunks"))?;
        let mut chunks = snapshot
            .prepare_cached(&format!(
                "SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? AND c.idx = ?"
            ))
            .map_err(sql_err("reading chunks"))?;
        let mut documents = snapshot
            .prepare_cached(&format!(
                "SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN libraries l ON l.id = d.library_id
                 WHERE d.id = ?"
            ))
            .map_err(sql_err("reading chunks"))?;
        let mut summaries: HashMap<String, Option<DocumentSummary>> = HashMap::new();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let Some((document, index)) = ChunkId::parse(id.as_str()) else {
                continue;
            };
            let Some(chunk) = chunks
                .query_row(params![document.as_str(), index], chunk_from_row)
                .optional()
                .map_err(sql_err("reading chunks"))?
            else {
                continue;
            };
            let summary = match summaries.entry(document.as_str().to_string()) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(new) => new.insert(
                    documents
                        .query_row([document.as_str()], |r| rows::summary_from_row_at(r, 0))
                        .optional()
                        .map_err(sql_err("reading chunks"))?,
                ),
            };
            if let Some(document) = summary {
                out.push(ChunkWithDocument {
                    chunk,
                    document: document.clone(),
                });
            }
        }
        Ok(out)
    }

    fn query_language(&self, library: &LibraryName, query: &str) -> Result<QueryLanguage> {
        let index = {
            let conn = self.conn();
            let row = Self::library_row(&conn, library)?;
            self.index_for(&conn, &row, Need::Lexical)?
        };
        let (query, library) = match index.lexical.get() {
            Some(lexical) => lexical.query_language(query)?,
            None => (
                folio_lexical::query_languages(query, &[])[0],
                folio_lexical::main_language(&[]),
            ),
        };
        Ok(QueryLanguage {
            query: query.code().to_string(),
            library: library.code().to_string(),
        })
    }

    fn lexical(
        &self,
        library: &LibraryName,
        query: &str,
        filter: &Filter,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<Hit>> {
        let (index, allowed) = {
            let conn = self.conn();
            let row = Self::library_row(&conn, library)?;
            let index = self.index_for(&conn, &row, Need::Lexical)?;
            let allowed = self.allowed_keys(&conn, &index, filter)?;
            (index, allowed)
        };
        let Some(lexical) = index.lexical.get() else {
            return Ok(Vec::new());
        };
        // Scored without holding the database connection, so concurrent
        // searches score side by side; a chunk deleted meanwhile drops out
        // when hits are resolved.
        let scored = lexical.search(query, allowed.as_deref(), k, bm25)?;
        self.hits(&index, scored)
    }

    fn lexical_documents(
        &self,
        library: &LibraryName,
        query: &str,
        filter: &Filter,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<Hit>> {
        let (index, documents, chunks) = {
            let conn = self.conn();
            let row = Self::library_row(&conn, library)?;
            let index = self.index_for(&conn, &row, Need::Lexical)?;
            let documents = self.allowed(&conn, &index, filter, Unit::Document)?;
            let chunks = self.allowed_keys(&conn, &index, filter)?;
            (index, documents, chunks)
        };
        let Some(lexical) = index.lexical.get() else {
            return Ok(Vec::new());
        };
        // Scored without the database connection (as above).
        let scored =
            lexical.search_documents(query, documents.as_deref(), chunks.as_deref(), k, bm25)?;
        self.hits(&index, scored)
    }

    fn dense(
        &self,
        library: &LibraryName,
        vector: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<Hit>> {
        let (index, allowed) = {
            let conn = self.conn();
            let row = Self::library_row(&conn, library)?;
            if vector.len() != row.space.dim as usize {
                return Err(StoreError::EmbeddingMismatch {
                    library: library.to_string(),
                    difference: format!("query dimension {} vs {}", vector.len(), row.space.dim),
                });
            }
            let index = self.index(&conn, &row)?;
            let allowed = self.allowed_keys(&conn, &index, filter)?;
            (index, allowed)
        };
        // Searched without holding the database connection (as above).
        let scored = index.vectors.search(
            vector,
            allowed.as_deref(),
            k.max(index.vectors.exact_rescored()),
        )?;
        self.rescored_hits(&index, vector, scored, k)
    }

    fn chunk_texts(&self, library: &LibraryName) -> Result<Vec<(ChunkId, String)>> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        let mut stmt = conn
            .prepare(
                "SELECT c.document_id, c.idx, c.context || c.text FROM chunks c JOIN documents d ON d.id = c.document_id
                 WHERE d.library_id = ? ORDER BY c.key",
            )
            .map_err(sql_err("reading chunks"))?;
        let rows = stmt
            .query_map([row.id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql_err("reading chunks"))?;
        Ok(rows
            .into_iter()
            .filter_map(|(d, i, t)| Some((ChunkId::new(&DocumentId::parse(&d)?, i as u32), t)))
            .collect())
    }

    fn replace_vectors(
        &self,
        library: &LibraryName,
        space: &EmbeddingSpace,
        vectors: Vec<(ChunkId, Vec<f32>)>,
    ) -> Result<()> {
        let _write = self.begin_write()?;
        let mut conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        let chunks = chunk_count(&conn, row.id)?;
        if vectors.len() as u64 != chunks {
            return Err(StoreError::InvalidArgument(format!(
                "{} vectors for a library of {} chunks",
                vectors.len(),
                chunks
            )));
        }
        if let Some((id, v)) = vectors.iter().find(|(_, v)| v.len() != space.dim as usize) {
            return Err(StoreError::InvalidArgument(format!(
                "vector for {id} has dimension {}, not {}",
                v.len(),
                space.dim
            )));
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("rebuilding"))?;
        {
            let mut stmt = tx
                .prepare("UPDATE chunks SET vector = ? WHERE document_id = ? AND idx = ?")
                .map_err(sql_err("rebuilding"))?;
            for (id, vector) in &vectors {
                let Some((document, index)) = ChunkId::parse(id.as_str()) else {
                    return Err(StoreError::InvalidArgument(format!("bad chunk id {id}")));
                };
                if stmt
                    .execute(params![vector_bytes(vector), document.as_str(), index])
                    .map_err(sql_err("rebuilding"))?
                    != 1
                {
                    return Err(StoreError::NotFound {
                        what: "chunk",
                        id: id.to_string(),
                    });
                }
            }
        }
        let space_json = serde_json::to_string(space).map_err(|e| StoreError::io("library", e))?;
        tx.execute(
            "UPDATE libraries SET space = ? WHERE id = ?",
            params![space_json, row.id],
        )
        .map_err(sql_err("rebuilding"))?;
        tx.commit().map_err(sql_err("rebuilding"))?;
        // The vector index is derived: drop it and replay the whole log.
        self.indexes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&row.id);
        Vectors::remove_files(&self.index_dir(row.id));
        let row = Self::library_row(&conn, library)?;
        self.index(&conn, &row)?;
        drop(conn);
        self.save_vectors(true)
    }

    fn stats(&self, library: &LibraryName) -> Result<LibraryStats> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        let formats: Vec<(String, u64)> = conn
            .prepare("SELECT format, COUNT(*) FROM documents WHERE library_id = ? GROUP BY format ORDER BY 2 DESC, 1")
            .and_then(|mut s| s.query_map([row.id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?.collect())
            .map_err(sql_err("library statistics"))?;
        let (chars, last): (i64, Option<String>) = conn
            .query_row(
                "SELECT COALESCE(SUM(char_count), 0), MAX(ingested_at) FROM documents WHERE library_id = ?",
                [row.id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql_err("library statistics"))?;
        let tokens: i64 = conn
            .query_row(
                "SELECT COALESCE(SUM(c.token_count), 0) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.library_id = ?",
                [row.id],
                |r| r.get(0),
            )
            .map_err(sql_err("library statistics"))?;
        let index = self.index(&conn, &row)?;
        let marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
        let vectors = index.vectors.len();
        let details = serde_json::json!({
            "backend": "embedded",
            "dense_search": if vectors <= vectors::EXACT_MAX { "exact" } else { "hnsw" },
            "vectors": vectors,
            "vector_dim": index.dim,
            "vector_codes": index.vectors.codes_name(),
            "vector_memory_bytes": index.vectors.memory_bytes(),
            "lexical_chunks": index.lexical.get().map(|l| l.len()).transpose()?.unwrap_or(0),
            "lexical_watermark": marks.lexical,
            "vector_watermark": marks.vectors,
            "disk_bytes": dir_size(&index.dir),
        });
        drop(marks);
        Ok(LibraryStats {
            info: self.library_info(&conn, row)?,
            formats,
            total_chars: chars as u64,
            total_tokens: tokens as u64,
            last_ingested_at: last,
            index: details,
        })
    }

    fn record_schema(&self, library: &LibraryName) -> Result<Option<RecordSchema>> {
        let conn = self.conn();
        let text: Option<String> = conn
            .query_row(
                "SELECT record_schema FROM libraries WHERE name = ?",
                [library.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err("reading a record schema"))?
            .ok_or_else(|| StoreError::LibraryNotFound(library.to_string()))?;
        text.map(|t| serde_json::from_str(&t).map_err(|e| StoreError::io("record schema", e)))
            .transpose()
    }

    fn set_record_schema(
        &self,
        library: &LibraryName,
        schema: Option<&RecordSchema>,
    ) -> Result<()> {
        let _write = self.begin_write()?;
        let text = schema
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::io("record schema", e))?;
        let changed = self
            .conn()
            .execute(
                "UPDATE libraries SET record_schema = ? WHERE name = ?",
                params![text, library.as_str()],
            )
            .map_err(sql_err("writing a record schema"))?;
        if changed == 0 {
            return Err(StoreError::LibraryNotFound(library.to_string()));
        }
        Ok(())
    }

    fn facets(&self, library: &LibraryName, request: &FacetRequest) -> Result<Facets> {
        let conn = self.conn();
        let id = Self::library_id(&conn, library)?;
        records::facets(&conn, id, request)
    }

    fn neighbours(
        &self,
        id: &DocumentId,
        order: &NeighbourOrder,
    ) -> Result<(Option<DocumentSummary>, Option<DocumentSummary>)> {
        records::neighbours(&self.conn(), id, order)
    }

    fn find_documents(
        &self,
        library: &LibraryName,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<DocumentSummary>> {
        let conn = self.conn();
        let id = Self::library_id(&conn, library)?;
        records::find_documents(&conn, id, filter, limit)
    }

    fn update_metadata(
        &self,
        id: &DocumentId,
        metadata: serde_json::Map<String, serde_json::Value>,
    ) -> Result<()> {
        let _write = self.begin_write()?;
        let text = serde_json::Value::Object(metadata).to_string();
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("updating metadata"))?;
        let changed = tx
            .execute(
                "UPDATE documents SET metadata = ? WHERE id = ?",
                params![text, id.as_str()],
            )
            .map_err(sql_err("updating metadata"))?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "document",
                id: id.to_string(),
            });
        }
        rows::index_metadata(&tx, id.as_str())?;
        tx.commit().map_err(sql_err("updating metadata"))
    }

    fn flush(&self) -> Result<()> {
        // A shared writer between writes holds no lock, yet a search may
        // have replayed or rebuilt an index: it saves under the lock, as
        // any write does.
        if matches!(self.access, Access::Shared { .. })
            && !self.may_write()
            && self.open_indexes().iter().any(|index| {
                let marks = index.marks.lock().unwrap_or_else(|p| p.into_inner());
                marks.saved < marks.vectors
            })
        {
            let _write = self.begin_write()?;
            return self.save_vectors(false);
        }
        self.save_vectors(false)
    }

    fn put_key(&self, key: &KeyRecord) -> Result<()> {
        let _write = self.begin_quiet_write()?;
        let record = serde_json::to_string(&KeyRecord {
            last_used_at: None,
            ..key.clone()
        })
        .map_err(|e| StoreError::io("an access key", e))?;
        match self.conn().execute(
            "INSERT INTO access_keys (name, hash, record) VALUES (?, ?, ?)",
            params![key.name, key.hash, record],
        ) {
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                Err(StoreError::InvalidArgument(format!(
                    "a key named {:?} (or with the same hash) exists",
                    key.name
                )))
            }
            Err(e) => Err(StoreError::io("writing an access key", e)),
        }
    }

    fn keys(&self) -> Result<Vec<KeyRecord>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT record, last_used_at FROM access_keys ORDER BY name")
            .map_err(sql_err("reading access keys"))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))
            .map_err(sql_err("reading access keys"))?;
        rows.map(|row| {
            let (record, used) = row.map_err(sql_err("reading access keys"))?;
            key_record(&record, used)
        })
        .collect()
    }

    fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>> {
        let found: Option<(String, Option<String>)> = self
            .conn()
            .query_row(
                "SELECT record, last_used_at FROM access_keys WHERE hash = ?",
                [hash],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sql_err("reading an access key"))?;
        found
            .map(|(record, used)| key_record(&record, used))
            .transpose()
    }

    fn delete_key(&self, name: &str) -> Result<bool> {
        let _write = self.begin_quiet_write()?;
        let deleted = self
            .conn()
            .execute("DELETE FROM access_keys WHERE name = ?", [name])
            .map_err(sql_err("deleting an access key"))?;
        Ok(deleted > 0)
    }

    fn touch_key(&self, hash: &str, at: &str) -> Result<()> {
        let _write = self.begin_quiet_write()?;
        self.conn()
            .execute(
                "UPDATE access_keys SET last_used_at = ? WHERE hash = ?",
                [at, hash],
            )
            .map_err(sql_err("recording a key's use"))?;
        Ok(())
    }

    fn generation(&self) -> Result<Option<u64>> {
        self.generation_on(&self.conn()).map(Some)
    }

    fn entities(
        &self,
        library: &LibraryName,
        query: &EntityQuery<'_>,
        limit: usize,
    ) -> Result<Vec<EntityCount>> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        rows::entities(&conn, row.id, query, limit)
    }

    fn declared_entities(&self, library: &LibraryName) -> Result<Vec<Declared>> {
        let conn = self.conn();
        let text: Option<String> = conn
            .query_row(
                "SELECT declared_entities FROM libraries WHERE name = ?",
                [library.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err("reading declared entities"))?
            .ok_or_else(|| StoreError::LibraryNotFound(library.to_string()))?;
        match text {
            None => Ok(Vec::new()),
            Some(t) => serde_json::from_str(&t).map_err(|e| StoreError::io("declared entities", e)),
        }
    }

    fn set_declared_entities(&self, library: &LibraryName, entities: &[Declared]) -> Result<()> {
        let _write = self.begin_write()?;
        let text = (!entities.is_empty())
            .then(|| serde_json::to_string(entities))
            .transpose()
            .map_err(|e| StoreError::io("declared entities", e))?;
        let changed = self
            .conn()
            .execute(
                "UPDATE libraries SET declared_entities = ? WHERE name = ?",
                params![text, library.as_str()],
            )
            .map_err(sql_err("writing declared entities"))?;
        if changed == 0 {
            return Err(StoreError::LibraryNotFound(library.to_string()));
        }
        Ok(())
    }

    fn replace_mentions(&self, id: &DocumentId, mentions: &[EntityMention]) -> Result<()> {
        let _write = self.begin_write()?;
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("relinking a document"))?;
        let library_id = document_library(&tx, id, "relinking a document")?;
        let lengths: Vec<usize> = tx
            .prepare_cached(
                "SELECT length(CAST(text AS BLOB)) FROM chunks WHERE document_id = ? ORDER BY idx",
            )
            .and_then(|mut s| {
                s.query_map([id.as_str()], |r| r.get::<_, i64>(0).map(|n| n as usize))?
                    .collect()
            })
            .map_err(sql_err("relinking a document"))?;
        folio_store::validate_mentions(id, mentions, &lengths)?;
        tx.execute(
            "DELETE FROM entity_mentions WHERE document_id = ?",
            [id.as_str()],
        )
        .map_err(sql_err("relinking a document"))?;
        rows::insert_mentions(&tx, library_id, id.as_str(), mentions)?;
        tx.commit().map_err(sql_err("relinking a document"))
    }

    fn mentions_of(
        &self,
        library: &LibraryName,
        entity: &str,
        limit: usize,
    ) -> Result<Vec<MentionHit>> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        rows::mentions_of(&conn, row.id, entity, limit)
    }

    fn related(&self, library: &LibraryName, entity: &str, limit: usize) -> Result<Vec<Related>> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        rows::related(&conn, row.id, entity, limit)
    }

    fn document_mentions(&self, id: &DocumentId) -> Result<Vec<EntityMention>> {
        rows::document_mentions(&self.conn(), id.as_str())
    }

    fn dense_graph(&self, library: &LibraryName, vector: &[f32], k: usize) -> Result<Vec<Hit>> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        let index = self.index(&conn, &row)?;
        drop(conn);
        let scored = index
            .vectors
            .search_graph(vector, k.max(index.vectors.exact_rescored()))?;
        self.rescored_hits(&index, vector, scored, k)
    }

    fn size_bytes(&self) -> Result<u64> {
        Ok(dir_size(&self.dir))
    }

    fn verify(&self, library: &LibraryName) -> Result<Integrity> {
        let conn = self.conn();
        let row = Self::library_row(&conn, library)?;
        let index = self.index(&conn, &row)?;
        let mut owners: HashMap<u64, String> = HashMap::new();
        let mut chunks_of: HashMap<String, u64> = HashMap::new();
        {
            let mut stmt = conn
                .prepare(
                    "SELECT c.key, c.document_id FROM chunks c JOIN documents d ON d.id = c.document_id
                     WHERE d.library_id = ?",
                )
                .map_err(sql_err("verifying"))?;
            let mut rows = stmt.query([row.id]).map_err(sql_err("verifying"))?;
            while let Some(r) = rows.next().map_err(sql_err("verifying"))? {
                let key = r.get::<_, i64>(0).map_err(sql_err("verifying"))? as u64;
                let document: String = r.get(1).map_err(sql_err("verifying"))?;
                *chunks_of.entry(document.clone()).or_default() += 1;
                owners.insert(key, document);
            }
        }
        let mut problems = Vec::new();
        // Whole or absent, read from the chunk rows: each document holds
        // exactly the chunks 0..chunk_count its row records.
        {
            let mut stmt = conn
                .prepare(
                    "SELECT d.id, d.chunk_count, COUNT(c.key), MIN(c.idx), MAX(c.idx)
                     FROM documents d LEFT JOIN chunks c ON c.document_id = d.id
                     WHERE d.library_id = ? GROUP BY d.id
                     HAVING COUNT(c.key) <> d.chunk_count OR MIN(c.idx) <> 0
                         OR MAX(c.idx) <> d.chunk_count - 1
                     ORDER BY d.id",
                )
                .map_err(sql_err("verifying"))?;
            let mut rows = stmt.query([row.id]).map_err(sql_err("verifying"))?;
            while let Some(r) = rows.next().map_err(sql_err("verifying"))? {
                let document: String = r.get(0).map_err(sql_err("verifying"))?;
                let expected: i64 = r.get(1).map_err(sql_err("verifying"))?;
                let stored: i64 = r.get(2).map_err(sql_err("verifying"))?;
                problems.push(format!(
                    "document {document}: {stored} chunks stored of {expected}"
                ));
            }
        }
        // Entity mentions: each of a document of the library, within its
        // chunk's text.
        let stray: i64 = conn
            .query_row(
                "SELECT count(*) FROM entity_mentions m WHERE m.library_id = ?1
                   AND NOT EXISTS (SELECT 1 FROM chunks c JOIN documents d
                                     ON d.id = c.document_id AND d.library_id = m.library_id
                                    WHERE c.document_id = m.document_id AND c.idx = m.chunk
                                      AND m.start <= m.stop
                                      AND m.stop <= length(CAST(c.text AS BLOB)))",
                [row.id],
                |r| r.get(0),
            )
            .map_err(sql_err("verifying"))?;
        if stray > 0 {
            problems.push(format!(
                "{stray} entity mentions point outside the library's chunks"
            ));
        }
        let report = |problems: &mut Vec<String>,
                      what: &str,
                      missing: HashMap<&String, u64>,
                      extra: usize| {
            let mut missing: Vec<_> = missing.into_iter().collect();
            missing.sort();
            for (document, count) in missing {
                problems.push(format!(
                    "document {document}: {count} of {} chunks missing from the {what} index",
                    chunks_of[document]
                ));
            }
            if extra > 0 {
                problems.push(format!(
                    "the {what} index holds {extra} chunks no document has"
                ));
            }
        };
        match index.lexical.get() {
            Some(lexical) => {
                // What is committed now, not the snapshot last searched.
                lexical.reload()?;
                let keys = lexical.keys()?;
                let mut missing: HashMap<&String, u64> = HashMap::new();
                for (key, document) in &owners {
                    if !keys.contains(key) {
                        *missing.entry(document).or_default() += 1;
                    }
                }
                let extra = keys.iter().filter(|k| !owners.contains_key(k)).count();
                report(&mut problems, "lexical", missing, extra);
                // Whole-document entries, which grouped searches rank by.
                let entries = lexical.document_keys()?;
                let mut documents: Vec<&String> = chunks_of.keys().collect();
                documents.sort();
                let mut expected = HashSet::new();
                for document in documents {
                    let key = lexical::document_key(document);
                    expected.extend(key);
                    if key.is_none_or(|key| !entries.contains(&key)) {
                        problems.push(format!(
                            "document {document}: its whole-text entry is missing from the lexical index"
                        ));
                    }
                }
                let extra = entries.difference(&expected).count();
                if extra > 0 {
                    problems.push(format!(
                        "the lexical index holds {extra} document entries no document has"
                    ));
                }
            }
            None if owners.is_empty() => {}
            None => problems.push("the lexical index is missing".into()),
        }
        let mut missing: HashMap<&String, u64> = HashMap::new();
        let mut present = 0usize;
        for (key, document) in &owners {
            if index.vectors.contains(*key) {
                present += 1;
            } else {
                *missing.entry(document).or_default() += 1;
            }
        }
        report(
            &mut problems,
            "vector",
            missing,
            index.vectors.len().saturating_sub(present),
        );
        Ok(Integrity {
            library: library.to_string(),
            documents: chunks_of.len() as u64,
            chunks: owners.len() as u64,
            problems,
        })
    }
}

/// How many of the vector index's best answers are rescored from the f32
/// vectors (`EmbeddedStore::rescored_hits`), each a row read. The codes
/// score within about 10⁻³ of the exact cosine, and the exact top 10 lies
/// in their first 30 (test `quantised_candidates_hold_the_exact_neighbours`;
/// `folio bench search` kept the same recall@10 at 100,000 and 1,000,000
/// chunks with 30 as with 100).
///
/// An index of 4-bit codes (`vectors::PACKED_MIN`) has twice as many
/// rescored: the exact top 10 of a tight cluster were 0.98 of its first 30,
/// 0.995 of its first 60 (test `packed_codes_hold_the_exact_neighbours`).
pub(crate) const EXACT_RESCORED: usize = 30;
pub(crate) const EXACT_RESCORED_PACKED: usize = 60;

/// The vector index's answer as hits, each rescored by its exact cosine
/// similarity from the f32 vector the database keeps (the index holds
/// codes), unordered (the caller sorts): one statement
/// reads every vector and chunk id. A key deleted since the index was read
/// drops out.
fn exact_hits(conn: &Connection, query: &[f32], answer: Vec<(u64, f32)>) -> Result<Vec<Hit>> {
    let mut scored = Vec::with_capacity(answer.len());
    let mut ids = HashMap::with_capacity(answer.len());
    for_chunk_keys(
        conn,
        "SELECT key, document_id, idx, vector FROM chunks WHERE key IN (SELECT value FROM json_each(?1))",
        answer.iter().map(|(key, _)| *key),
        |row| {
            let key = row.get::<_, i64>(0)? as u64;
            let similarity = rows::dot_with_bytes(query, row.get_ref(3)?.as_blob()?);
            scored.push((key, similarity));
            ids.insert(key, chunk_id(row)?);
            Ok(())
        },
    )
    .map_err(sql_err("rescoring vector candidates"))?;
    Ok(keyed_hits(scored, ids))
}

/// Scored keys as hits, in order, by the chunk ids read for them. A key
/// with none was deleted after the index was read; one whose document id
/// did not parse has `None`: both drop out.
fn keyed_hits(scored: Vec<(u64, f32)>, mut ids: HashMap<u64, Option<ChunkId>>) -> Vec<Hit> {
    scored
        .into_iter()
        .filter_map(|(key, score)| {
            Some(Hit {
                chunk: ids.remove(&key).flatten()?,
                score,
            })
        })
        .collect()
}

/// Runs `sql`, whose one parameter is a JSON array of chunk keys, and hands
/// each row to `row`: one statement for a search's candidates, where one
/// lookup each cost a statement each.
fn for_chunk_keys(
    conn: &Connection,
    sql: &str,
    keys: impl Iterator<Item = u64>,
    mut row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut array = String::from("[");
    for (i, key) in keys.enumerate() {
        if i > 0 {
            array.push(',');
        }
        array.push_str(&key.to_string());
    }
    array.push(']');
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query([array])?;
    while let Some(r) = rows.next()? {
        row(r)?;
    }
    Ok(())
}

/// Fills `directory` with every chunk of `library_id` (read from the chunks'
/// (document, index) index alone).
fn fill_directory(conn: &Connection, library_id: i64, directory: &mut Directory) -> Result<()> {
    directory.clear();
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.key, c.document_id, c.idx FROM documents d
             JOIN chunks c ON c.document_id = d.id WHERE d.library_id = ?",
        )
        .map_err(sql_err("reading the chunk directory"))?;
    let mut rows = stmt
        .query([library_id])
        .map_err(sql_err("reading the chunk directory"))?;
    while let Some(row) = rows
        .next()
        .map_err(sql_err("reading the chunk directory"))?
    {
        let key = row
            .get::<_, i64>(0)
            .map_err(sql_err("reading the chunk directory"))?;
        let document = row
            .get_ref(1)
            .and_then(|v| v.as_str().map_err(Into::into))
            .map_err(sql_err("reading the chunk directory"))?;
        let idx = row
            .get::<_, u32>(2)
            .map_err(sql_err("reading the chunk directory"))?;
        directory.insert(key as u64, document, idx);
    }
    Ok(())
}

/// The chunk id of a row whose columns 1 and 2 are its document id and
/// index; `None` for a document id that does not parse.
fn chunk_id(row: &rusqlite::Row<'_>) -> rusqlite::Result<Option<ChunkId>> {
    let document: String = row.get(1)?;
    let index: i64 = row.get(2)?;
    Ok(DocumentId::parse(&document).map(|d| ChunkId::new(&d, index as u32)))
}

/// Bytes used by the files under `path`.
pub fn dir_size(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

#[cfg(test)]
mod tests;
