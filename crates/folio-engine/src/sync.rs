//! Folders that stay indexed: one sync model for `folio sync`, `--watch`
//! and the server's watches. A folder is bound to a library; after a pass
//! the library's documents from that folder are exactly the folder's
//! supported files, after ignore rules:
//!
//! - a file whose size and modification time match what was recorded is
//!   unchanged, and its bytes are not read;
//! - a changed file is re-ingested (replaced atomically; the same bytes
//!   only refresh the recorded size and time);
//! - a file whose document is gone from its old path with the same content
//!   (a rename or a move, a folder renamed) keeps its chunks, vectors and
//!   entity mentions under its new path: nothing is embedded again;
//! - a deleted file's document is removed;
//! - a file still being written (modified within the settle time, or an
//!   editor's temporary or lock file) waits for a later pass;
//! - a folder that is missing (an unmounted disk) is an error: nothing is
//!   removed.
//!
//! `watch` runs passes when the operating system reports a change (notify:
//! inotify, FSEvents, ReadDirectoryChangesW), when a queue overflow asks
//! for a rescan, and every `rescan` interval (for mounts that report
//! nothing).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use folio_core::{
    Chunk, ChunkId, Condition, Document, DocumentId, DocumentSummary, ErrorCode, Filter,
    LibraryName,
};
use folio_store::{NewDocument, StoreError};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Engine, EngineError, IngestRequest, IngestStatus, IngestTarget, Progress, Result};

/// Metadata keys a file's document records for the next pass.
pub const FILE_SIZE: &str = "file_size";
pub const FILE_MTIME_NS: &str = "file_mtime_ns";

/// One folder bound to one library.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    pub library: LibraryName,
    pub folder: PathBuf,
    /// Say what a pass would do, change nothing.
    pub dry_run: bool,
    /// Globs (gitignore syntax, relative to the folder) left out, beyond
    /// `.gitignore`, `.ignore`, `.folioignore` and hidden files.
    pub exclude: Vec<String>,
    /// A file modified more recently than this is left for a later pass.
    pub settle: Duration,
    /// Whether ZIP and TAR archives are read (each member a document under
    /// the archive's path) or left out, as images are.
    pub archives: bool,
    /// Files that failed before, with their stat then: left alone (and
    /// reported as still failing) until they change.
    pub failed_before: HashMap<String, Stat>,
}

impl SyncRequest {
    pub fn new(library: LibraryName, folder: impl Into<PathBuf>) -> Self {
        SyncRequest {
            library,
            folder: folder.into(),
            dry_run: false,
            exclude: Vec::new(),
            settle: Duration::ZERO,
            archives: false,
            failed_before: HashMap::new(),
        }
    }
}

/// A document that followed its file to another path.
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    pub from: String,
    pub to: String,
    pub document_id: String,
}

/// A file a pass could not index (retried when it changes).
#[derive(Debug, Clone, Serialize)]
pub struct SyncFailure {
    pub source: String,
    pub code: ErrorCode,
    pub message: String,
}

/// What a pass did (or, dry, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    pub library: String,
    pub folder: String,
    pub dry_run: bool,
    pub added: Vec<String>,
    pub replaced: Vec<String>,
    pub moved: Vec<Moved>,
    pub removed: Vec<String>,
    /// Files whose recorded size and time matched (not read).
    pub unchanged: u64,
    /// Files touched but with the same bytes (their record refreshed).
    pub touched: u64,
    /// Files still being written, left for a later pass.
    pub unsettled: Vec<String>,
    pub failed: Vec<SyncFailure>,
    /// Folders and files the walk could not read (permissions, a vanished
    /// entry): documents at or under them were kept, not removed.
    pub unreadable: Vec<SyncFailure>,
    /// For a pass of a watch: why the folder is not watched for events
    /// (passes then run on a schedule). None when events arrive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unwatched: Option<String>,
    /// Files that failed in an earlier pass and have not changed since:
    /// not read again.
    pub still_failing: Vec<String>,
    /// Bytes of files read to hash or ingest them.
    pub read_bytes: u64,
    /// Chunks embedded (moves embed none).
    pub embedded_chunks: u64,
    pub elapsed_ms: u64,
}

impl SyncReport {
    /// Whether the pass changed (or would change) the library.
    pub fn changed(&self) -> bool {
        !(self.added.is_empty()
            && self.replaced.is_empty()
            && self.moved.is_empty()
            && self.removed.is_empty())
    }
}

/// A file's size and modification time, as a pass compares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
}

impl Stat {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Self {
        let mtime_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        Stat {
            size: metadata.len(),
            mtime_ns,
        }
    }

    /// What a document recorded of its file, when it did.
    fn recorded(metadata: &Map<String, Value>) -> Option<Self> {
        Some(Stat {
            size: metadata.get(FILE_SIZE)?.as_u64()?,
            mtime_ns: metadata.get(FILE_MTIME_NS)?.as_i64()?,
        })
    }

    pub(crate) fn record(self, metadata: &mut Map<String, Value>) {
        metadata.insert(FILE_SIZE.into(), Value::from(self.size));
        metadata.insert(FILE_MTIME_NS.into(), Value::from(self.mtime_ns));
    }

    fn age(self) -> Duration {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        Duration::from_nanos(now.saturating_sub(self.mtime_ns).max(0) as u64)
    }
}

/// Editors' temporary and lock files, and partial downloads: never
/// documents.
pub fn transient(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return true;
    };
    name.starts_with("~$")
        || name.starts_with(".#")
        || name.ends_with('~')
        || [".swp", ".swx", ".part", ".crdownload", ".tmp", ".partial"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// What a walk of a folder found: its supported files with their stats,
/// and the paths it could not read (a folder or a file whose entry or
/// metadata failed), with why.
#[derive(Debug, Default)]
pub struct Scan {
    pub files: BTreeMap<PathBuf, Stat>,
    /// Each with the code a caller is told: what the system does not let
    /// folio read is `path_not_allowed`, what vanished `not_found`.
    pub unreadable: Vec<(PathBuf, ErrorCode, String)>,
}

impl Scan {
    /// Whether `source` lies at or under a path the walk could not read: a
    /// document there may still exist, so it is not gone. A walk error that
    /// names no path (an empty one) covers everything.
    fn covers(&self, source: &str) -> bool {
        let source = Path::new(source);
        self.unreadable
            .iter()
            .any(|(path, _, _)| source.starts_with(path))
    }
}

/// The path a walk error is about, if it names one.
/// The code of an entry the walk could not read, by the system's reason:
/// as `folio_source` tells a file folio may not read when it is named.
fn unreadable_code(kind: Option<std::io::ErrorKind>) -> ErrorCode {
    match kind {
        Some(std::io::ErrorKind::PermissionDenied) => ErrorCode::PathNotAllowed,
        _ => ErrorCode::NotFound,
    }
}

fn error_path(error: &ignore::Error) -> Option<PathBuf> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        ignore::Error::Partial(errors) => errors.iter().find_map(error_path),
        _ => None,
    }
}

/// The supported files of `folder` (canonical), with their stats, after
/// ignore rules: `.gitignore`, `.ignore` and `.folioignore` files, hidden
/// files and folders, `exclude` globs, transient files; and what could not
/// be read.
pub fn scan(folder: &Path, exclude: &[String], archives: bool) -> Result<Scan> {
    let mut overrides = ignore::overrides::OverrideBuilder::new(folder);
    for glob in exclude {
        overrides
            .add(&format!("!{glob}"))
            .map_err(|e| EngineError::invalid(format!("exclude glob {glob:?}: {e}")))?;
    }
    let overrides = overrides
        .build()
        .map_err(|e| EngineError::invalid(format!("exclude globs: {e}")))?;
    let walk = ignore::WalkBuilder::new(folder)
        .hidden(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .ignore(true)
        .parents(false)
        .follow_links(false)
        .add_custom_ignore_filename(".folioignore")
        .overrides(overrides)
        .build();
    let mut scan = Scan::default();
    for entry in walk {
        let entry = match entry {
            Ok(e) => e,
            // An unreadable subfolder is not fatal, and not empty either:
            // what it holds is kept, and reported.
            Err(e) => {
                tracing::warn!(error = %e, "an entry could not be read");
                let kind = e.io_error().map(std::io::Error::kind);
                scan.unreadable.push((
                    error_path(&e).unwrap_or_default(),
                    unreadable_code(kind),
                    e.to_string(),
                ));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if !crate::ingest::walked(path, archives) || transient(path) {
            continue;
        }
        match entry.metadata() {
            Ok(metadata) => {
                scan.files.insert(path.to_path_buf(), Stat::of(&metadata));
            }
            Err(e) => {
                let kind = e.io_error().map(std::io::Error::kind);
                scan.unreadable
                    .push((path.to_path_buf(), unreadable_code(kind), e.to_string()));
            }
        }
    }
    Ok(scan)
}

impl Engine {
    /// One pass over a folder: see the module documentation.
    pub fn sync(&self, request: &SyncRequest, progress: &dyn Progress) -> Result<SyncReport> {
        let started = Instant::now();
        if !request.dry_run {
            self.writable("syncing a folder")?;
        }
        let folder = self.roots.confine(&request.folder)?;
        let folder = folder.as_path().to_path_buf();
        if !folder.is_dir() {
            return Err(EngineError::new(
                ErrorCode::NotFound,
                format!(
                    "{} is not a folder (missing or unmounted?): nothing was removed",
                    folder.display()
                ),
            ));
        }
        let mut report = SyncReport {
            library: request.library.to_string(),
            folder: folder.display().to_string(),
            dry_run: request.dry_run,
            ..SyncReport::default()
        };
        let scan = scan(&folder, &request.exclude, request.archives)?;
        report.unreadable = scan
            .unreadable
            .iter()
            .map(|(path, code, why)| SyncFailure {
                source: path.display().to_string(),
                code: *code,
                message: why.clone(),
            })
            .collect();
        let files = &scan.files;
        let stored = self.documents_under(&request.library, &folder)?;
        let by_source: HashMap<&str, &DocumentSummary> =
            stored.iter().map(|d| (d.source.as_str(), d)).collect();
        // A twin's other sources (the same bytes at another path).
        let located: HashSet<String> = stored
            .iter()
            .flat_map(|d| locators(d).into_iter().filter(|l| l != &d.source))
            .collect();
        let present: HashSet<String> = files
            .keys()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        // The documents of each file's parts (a mailbox's messages, a
        // message's attachments): they follow their file.
        let mut parts_of: HashMap<&str, Vec<&DocumentSummary>> = HashMap::new();
        for d in &stored {
            if let Some(file) = file_of_part(d, &present) {
                parts_of.entry(file).or_default().push(d);
            }
        }
        let mut changed = Vec::new();
        let mut new = Vec::new();
        let mut containers = Vec::new();
        for (path, stat) in files {
            let locator = path.to_string_lossy().into_owned();
            if request.settle > Duration::ZERO && stat.age() < request.settle {
                report.unsettled.push(locator);
                continue;
            }
            if request.failed_before.get(&locator) == Some(stat) {
                report.still_failing.push(locator);
                continue;
            }
            match by_source.get(locator.as_str()) {
                Some(d) if Stat::recorded(&d.metadata) == Some(*stat) => report.unchanged += 1,
                Some(d) => changed.push((path.clone(), *stat, (*d).clone())),
                None if located.contains(&locator) => report.unchanged += 1,
                // A container without a document of its own (a mailbox):
                // unchanged while its parts recorded its stat.
                None => match parts_of.get(locator.as_str()) {
                    Some(parts)
                        if parts
                            .iter()
                            .all(|d| Stat::recorded(&d.metadata) == Some(*stat)) =>
                    {
                        report.unchanged += 1
                    }
                    Some(_) => containers.push(path.clone()),
                    None => new.push((path.clone(), *stat)),
                },
            }
        }
        // Documents whose file is gone: moved (the same bytes at a new
        // path, or still at another of their sources) or deleted. A
        // document under a path the walk could not read is not gone.
        let missing: Vec<&DocumentSummary> = stored
            .iter()
            .filter(|d| {
                !present.contains(&d.source)
                    && file_of_part(d, &present).is_none()
                    && !scan.covers(&d.source)
            })
            .collect();
        let mut missing_by_hash: HashMap<&str, Vec<&DocumentSummary>> = HashMap::new();
        for d in &missing {
            missing_by_hash
                .entry(d.content_hash.as_str())
                .or_default()
                .push(d);
        }
        // A new file can be a moved one only when it has the size a missing
        // document recorded (or one recorded none): only those are read to
        // compare hashes; the others go to ingest, which reads them once.
        let missing_sizes: HashSet<Option<u64>> = missing
            .iter()
            .map(|d| Stat::recorded(&d.metadata).map(|s| s.size))
            .collect();
        let mut moves: Vec<(DocumentSummary, PathBuf, Stat)> = Vec::new();
        let mut adds = Vec::new();
        for (path, stat) in new {
            if !missing_sizes.contains(&Some(stat.size)) && !missing_sizes.contains(&None) {
                adds.push(path);
                continue;
            }
            // A file that vanished since the walk is skipped, not fatal.
            let read = self
                .roots
                .confine(&path)
                .and_then(|path| folio_source::read_file(&path, self.config.limits.max_file_bytes));
            let bytes = match read {
                Ok(b) => b,
                Err(e) => {
                    let e = EngineError::from(e);
                    report.failed.push(SyncFailure {
                        source: path.display().to_string(),
                        code: e.code,
                        message: e.message,
                    });
                    continue;
                }
            };
            report.read_bytes += bytes.len() as u64;
            let hash = folio_core::content_hash(&bytes);
            match missing_by_hash.get_mut(hash.as_str()).and_then(Vec::pop) {
                Some(d) => moves.push((d.clone(), path, stat)),
                None => adds.push(path),
            }
        }
        // A missing document still present at another of its sources moves
        // there.
        let moved_ids: HashSet<DocumentId> = moves.iter().map(|(d, _, _)| d.id.clone()).collect();
        let mut removes = Vec::new();
        for d in &missing {
            if moved_ids.contains(&d.id) {
                continue;
            }
            let elsewhere = locators(d)
                .into_iter()
                .find(|l| l != &d.source && present.contains(l));
            match elsewhere {
                Some(l) => {
                    let path = PathBuf::from(&l);
                    let stat = files.get(&path).copied().unwrap_or(Stat {
                        size: 0,
                        mtime_ns: 0,
                    });
                    moves.push(((*d).clone(), path, stat));
                }
                None => removes.push((*d).clone()),
            }
        }
        let total =
            (moves.len() + adds.len() + changed.len() + containers.len() + removes.len()) as u64;
        progress.start(total);
        if request.dry_run {
            report.moved = moves
                .iter()
                .map(|(d, to, _)| Moved {
                    from: d.source.clone(),
                    to: to.display().to_string(),
                    document_id: d.id.to_string(),
                })
                .collect();
            report.added = adds.iter().map(|p| p.display().to_string()).collect();
            report.replaced = changed
                .iter()
                .map(|(p, _, _)| p)
                .chain(&containers)
                .map(|p| p.display().to_string())
                .collect();
            report.removed = removes.iter().map(|d| d.source.clone()).collect();
            progress.finish();
            report.elapsed_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
        for (document, to, stat) in moves {
            match self.relocate(&document, &to, stat) {
                Ok(id) => report.moved.push(Moved {
                    from: document.source.clone(),
                    to: to.display().to_string(),
                    document_id: id.to_string(),
                }),
                Err(e) => report.failed.push(SyncFailure {
                    source: to.display().to_string(),
                    code: e.code,
                    message: e.message,
                }),
            }
            progress.advance(1, &to.display().to_string());
        }
        for d in removes {
            match self.store.delete_document(&d.id) {
                Ok(()) | Err(StoreError::NotFound { .. }) => report.removed.push(d.source.clone()),
                Err(e) => {
                    let e = EngineError::from(e);
                    report.failed.push(SyncFailure {
                        source: d.source.clone(),
                        code: e.code,
                        message: e.message,
                    });
                }
            }
            progress.advance(1, &d.source);
        }
        // New and changed files through the ingest pipeline, in one request,
        // in the folder's order.
        let targets: Vec<IngestTarget> = adds
            .iter()
            .chain(changed.iter().map(|(p, _, _)| p))
            .chain(&containers)
            .cloned()
            .map(IngestTarget::Path)
            .collect();
        let changed_by_path: HashMap<String, (Stat, DocumentSummary)> = changed
            .into_iter()
            .map(|(p, stat, d)| (p.display().to_string(), (stat, d)))
            .collect();
        if !targets.is_empty() {
            let ingest = self.ingest(
                &IngestRequest::new(request.library.clone(), targets),
                progress,
            )?;
            report.read_bytes += ingest.bytes;
            report.embedded_chunks += ingest.chunks;
            for item in ingest.items {
                let was = changed_by_path.get(&item.source);
                match (item.status, was) {
                    (IngestStatus::Failed, _) => {
                        let (code, message) = item
                            .error
                            .map(|e| (e.code, e.message))
                            .unwrap_or((ErrorCode::Internal, "failed".into()));
                        report.failed.push(SyncFailure {
                            source: item.source,
                            code,
                            message,
                        });
                    }
                    (IngestStatus::Skipped, Some((stat, d))) => {
                        // The same bytes: only the recorded stat is stale.
                        let mut metadata = d.metadata.clone();
                        stat.record(&mut metadata);
                        self.store.update_metadata(&d.id, metadata)?;
                        report.touched += 1;
                    }
                    (IngestStatus::Skipped, None) => report.unchanged += 1,
                    (IngestStatus::Indexed, None) => report.added.push(item.source),
                    (IngestStatus::Indexed | IngestStatus::Replaced, _) => {
                        report.replaced.push(item.source)
                    }
                }
            }
            // Parts a re-read file no longer holds were deleted by the
            // ingest: they are reported as removed.
            let reread: Vec<&str> = changed_by_path
                .keys()
                .map(String::as_str)
                .chain(containers.iter().filter_map(|p| p.to_str()))
                .collect();
            let before: Vec<&DocumentSummary> = reread
                .iter()
                .filter_map(|file| parts_of.get(file))
                .flatten()
                .copied()
                .collect();
            if !before.is_empty() {
                let after: HashSet<String> = self
                    .documents_under(&request.library, &folder)?
                    .into_iter()
                    .map(|d| d.source)
                    .collect();
                report.removed.extend(
                    before
                        .into_iter()
                        .filter(|d| !after.contains(&d.source))
                        .map(|d| d.source.clone()),
                );
            }
        }
        self.store.flush()?;
        progress.finish();
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(report)
    }

    /// The library's documents whose source lies in `folder`.
    fn documents_under(
        &self,
        library: &LibraryName,
        folder: &Path,
    ) -> Result<Vec<DocumentSummary>> {
        let mut prefix = folder.to_string_lossy().into_owned();
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        let filter = Filter {
            conditions: vec![Condition::PathPrefix(prefix)],
        };
        match self.store.find_documents(library, &filter, usize::MAX / 2) {
            Ok(found) => Ok(found),
            Err(StoreError::LibraryNotFound(_)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// Moves a document to the file at `to` (the same bytes): its chunks,
    /// vectors and mentions are written under the new path's id and the
    /// old document removed; nothing is embedded. Returns the new id.
    fn relocate(&self, from: &DocumentSummary, to: &Path, stat: Stat) -> Result<DocumentId> {
        let document = self.store.document(&from.id)?;
        let chunks = self.store.chunks(&from.id, 0..document.chunk_count)?;
        let vectors = self.store.vectors(&from.id)?;
        let mentions = self.store.document_mentions(&from.id)?;
        let original = self.store.original(&from.id)?;
        let space = self.store.library(&document.library)?.space;
        let locator = self.roots.confine(to)?.locator();
        let id = DocumentId::derive(&document.library, &locator);
        let mut metadata = document.metadata.clone();
        stat.record(&mut metadata);
        if let Some(Value::Array(list)) = metadata.get_mut("locators") {
            list.retain(|l| l.as_str() != Some(from.source.as_str()));
            if !list.iter().any(|l| l.as_str() == Some(locator.as_str())) {
                list.insert(0, Value::String(locator.clone()));
            }
            if list.len() <= 1 {
                metadata.remove("locators");
            }
        }
        let moved = Document {
            id: id.clone(),
            source: locator,
            metadata,
            ..document
        };
        let chunks: Vec<Chunk> = chunks
            .into_iter()
            .map(|c| Chunk {
                id: ChunkId::new(&id, c.index),
                document_id: id.clone(),
                ..c
            })
            .collect();
        self.store.put_documents(
            vec![NewDocument {
                document: moved,
                chunks,
                vectors,
                space,
                mentions,
                original,
            }],
            true,
        )?;
        if id != from.id {
            self.store.delete_document(&from.id)?;
        }
        Ok(id)
    }

    /// Keeps `request.folder` in sync until `stop` is set: a pass now, then
    /// one after each burst of changes the operating system reports (once
    /// they have been quiet for `debounce`), after a queue overflow, when
    /// a file left unsettled should have settled, and every `rescan`.
    /// `on_pass` hears each pass's report or error (a missing folder
    /// suspends nothing but the passes: the watch resumes when it is back).
    ///
    /// Among processes sharing a store (PostgreSQL), one applies a folder's
    /// changes: each pass needs the store's claim on the folder and library,
    /// and a process without it stands by (`StoreBusy` to `on_pass`) and
    /// asks again every `standby`, taking over when the holder stops or
    /// dies.
    pub fn watch(
        &self,
        request: &SyncRequest,
        options: &WatchOptions,
        stop: &AtomicBool,
        on_pass: &mut dyn FnMut(Result<SyncReport>),
    ) -> Result<()> {
        use notify::Watcher;
        let (sender, events) = std::sync::mpsc::channel();
        // Symbolic links are not followed: a link to / would watch the
        // whole file system (passes never follow them either).
        let mut watcher = notify::RecommendedWatcher::new(
            move |event| {
                let _ = sender.send(event);
            },
            notify::Config::default().with_follow_symlinks(false),
        )
        .map_err(|e| EngineError::new(ErrorCode::Internal, format!("watching: {e}")))?;
        let mut watching = false;
        // Why the folder cannot be watched for events (an unreadable
        // subfolder, too many folders for inotify): passes then run every
        // `POLL_WITHOUT_EVENTS`, and watching is tried again after a
        // back-off that doubles up to `rescan`, since each try walks the
        // whole tree.
        let mut unwatched: Option<String> = None;
        let mut next_try = Instant::now();
        let mut back_off = Duration::from_secs(1);
        let mut due = Some(Instant::now());
        let mut last_pass = Instant::now();
        let folder = self
            .roots
            .confine(&request.folder)
            .map_or_else(|_| request.folder.display().to_string(), |p| p.locator());
        let claim_name = format!("watch {} {folder}", request.library);
        let mut claim: Option<Box<dyn folio_store::Claim>> = None;
        // A file that failed is read again only once it changes.
        let mut request = request.clone();
        while !stop.load(Ordering::Relaxed) {
            if !watching && Instant::now() >= next_try && request.folder.is_dir() {
                match watcher.watch(&request.folder, notify::RecursiveMode::Recursive) {
                    Ok(()) => {
                        watching = true;
                        unwatched = None;
                        back_off = Duration::from_secs(1);
                    }
                    Err(e) => {
                        // Watches added before the failure are dropped.
                        let _ = watcher.unwatch(&request.folder);
                        unwatched = Some(format!(
                            "changes are found by rescans every {} s, not events: {e}",
                            options.rescan.min(POLL_WITHOUT_EVENTS).as_secs()
                        ));
                        next_try = Instant::now() + back_off;
                        back_off = (back_off * 2).min(options.rescan.max(Duration::from_secs(1)));
                    }
                }
            }
            match events.recv_timeout(options.tick) {
                Ok(Ok(event)) => {
                    if !ignorable(&event) {
                        due = Some(Instant::now() + options.debounce);
                    }
                }
                // An overflow or a watch error: rescan, and watch again.
                Ok(Err(_)) => {
                    due = Some(Instant::now());
                    watching = false;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let rescan = if watching {
                options.rescan
            } else {
                options.rescan.min(POLL_WITHOUT_EVENTS)
            };
            if last_pass.elapsed() >= rescan {
                due.get_or_insert_with(Instant::now);
            }
            let Some(at) = due else { continue };
            if Instant::now() < at {
                continue;
            }
            due = None;
            last_pass = Instant::now();
            if claim.as_ref().is_none_or(|c| !c.held()) {
                claim = match self.store.claim(&claim_name) {
                    Ok(c) => c,
                    Err(e) => {
                        on_pass(Err(e.into()));
                        due = Some(Instant::now() + options.standby);
                        continue;
                    }
                };
            }
            if claim.is_none() {
                on_pass(Err(EngineError::new(
                    ErrorCode::StoreBusy,
                    "another folio process keeps this folder in sync: this one stands by",
                )));
                due = Some(Instant::now() + options.standby);
                continue;
            }
            let mut result = self.sync(&request, &crate::SilentProgress);
            if let Ok(report) = &mut result {
                report.unwatched = unwatched.clone();
            }
            if let Ok(report) = &result {
                let still: HashSet<&String> = report.still_failing.iter().collect();
                request.failed_before.retain(|path, _| still.contains(path));
                for failure in &report.failed {
                    if let Ok(metadata) = std::fs::metadata(&failure.source) {
                        request
                            .failed_before
                            .insert(failure.source.clone(), Stat::of(&metadata));
                    }
                }
            }
            match &result {
                Ok(report) if !report.unsettled.is_empty() => {
                    due = Some(Instant::now() + request.settle.max(options.debounce));
                }
                Err(_) => {
                    // The folder vanished (or the store failed): try again
                    // later, never remove anything meanwhile.
                    watching = false;
                    due = Some(Instant::now() + options.rescan.min(Duration::from_secs(5)));
                }
                _ => {}
            }
            on_pass(result);
        }
        drop(watcher);
        Ok(())
    }
}

/// How often a watch whose folder cannot be watched for events rescans it
/// (at most; `WatchOptions::rescan` when that is shorter).
pub const POLL_WITHOUT_EVENTS: Duration = Duration::from_secs(30);

/// How a watch waits.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Quiet time after the last event before a pass.
    pub debounce: Duration,
    /// A full pass at least this often (mounts that report nothing).
    pub rescan: Duration,
    /// How often the stop flag is checked.
    pub tick: Duration,
    /// How often a process standing by asks for the folder's claim.
    pub standby: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: Duration::from_millis(300),
            rescan: Duration::from_secs(300),
            tick: Duration::from_millis(100),
            standby: Duration::from_secs(5),
        }
    }
}

/// Events that cannot change a folder's documents (reads, opens).
fn ignorable(event: &notify::Event) -> bool {
    matches!(
        event.kind,
        notify::EventKind::Access(_) | notify::EventKind::Other
    )
}

/// The file of `present` a part's document (its source `FILE#KEY`, a part
/// of a part `FILE#KEY#KEY`) belongs to; a file's name may hold `#` itself.
fn file_of_part<'a>(d: &DocumentSummary, present: &'a HashSet<String>) -> Option<&'a str> {
    if !d.metadata.contains_key("container") {
        return None;
    }
    let source = d.source.as_str();
    source
        .match_indices(folio_core::PART_SEPARATOR)
        .find_map(|(at, _)| present.get(&source[..at]))
        .map(String::as_str)
}

/// Every source a document was seen at: its source and its `locators`.
fn locators(d: &DocumentSummary) -> Vec<String> {
    let mut all = vec![d.source.clone()];
    if let Some(Value::Array(list)) = d.metadata.get("locators") {
        all.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
    }
    all
}

/// A stop flag shared with a watch's thread.
pub type StopFlag = Arc<AtomicBool>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_folio_may_not_read_is_reported_as_such() {
        use std::io::ErrorKind;
        assert_eq!(
            unreadable_code(Some(ErrorKind::PermissionDenied)),
            ErrorCode::PathNotAllowed
        );
        assert_eq!(
            unreadable_code(Some(ErrorKind::NotFound)),
            ErrorCode::NotFound
        );
        assert_eq!(unreadable_code(None), ErrorCode::NotFound);
    }
}
