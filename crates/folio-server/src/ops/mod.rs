//! The operations every toolset is built on, each done one way: run engine
//! work for a call (on the blocking pool, under the tool's time limit, with
//! cancellation), resolve a library, confine a path, ingest, search,
//! delete. Plain Rust in, `Result<_, EngineError>` out: no MCP types and no
//! dialect. A toolset converts its arguments into these calls and their
//! results into its own shapes and error envelope.
//!
//! Every tool call passes through `run` or `write` with its `Call`, which
//! names the tool: this is where authorisation (who may call which tool on
//! which library) hooks in.

mod call;
pub mod events;
pub mod jobs;
pub mod telemetry;
pub mod watch;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use folio_core::{DocumentSummary, ErrorCode, LibraryName};
use folio_engine::LibraryInfo;
use folio_engine::zotero::ZoteroRequest;
use folio_engine::{
    Engine, EngineError, IngestItem, IngestReport, IngestRequest, IngestStatus, IngestTarget,
    SearchHit, SearchRequest, SearchResponse,
};
use schemars::JsonSchema;
use serde::Serialize;

pub use self::call::{Call, DEFAULT_LEVEL, hears, log_message, severity};
use crate::options::ServeOptions;
use crate::tool::registry::Registry;

/// State shared by every session of one server process.
pub struct Shared {
    pub engine: Arc<Engine>,
    pub options: ServeOptions,
    /// The tools this server exposes.
    pub registry: Registry,
    /// Rate limits, the audit log and the counters of `/metrics`.
    pub telemetry: Arc<telemetry::Telemetry>,
}

impl Shared {
    pub fn timeout(&self, tool: &str) -> Option<Duration> {
        self.options.timeouts.get(tool).copied()
    }
}

/// What a call's engine work touches, declared to `run` and `write` so the
/// caller's libraries are checked before any work: the one place a key
/// restricted to some libraries is held to them.
#[derive(Debug, Clone, Copy)]
pub enum Touches<'a> {
    /// One library.
    Library(&'a LibraryName),
    /// Each of these libraries.
    Libraries(&'a [LibraryName]),
    /// The library of a document, by id.
    Document(&'a str),
    /// The library of a chunk, by id (`<document id>:<index>`).
    Chunk(&'a str),
    /// Only what the caller may see: the work lists libraries through
    /// `libraries`, or filters with `Call::may_touch`.
    Visible,
}

/// Refuses `call` (`Forbidden`) when what it touches lies outside its
/// libraries. Free for a caller without a principal (no key asked).
async fn authorise(shared: &Shared, call: &Call, touches: Touches<'_>) -> Result<(), EngineError> {
    let Some(principal) = &call.principal else {
        return Ok(());
    };
    if principal.libraries.is_none() {
        return Ok(());
    }
    let document = match touches {
        Touches::Library(name) => return call.require_library(name),
        Touches::Libraries(names) => {
            return names.iter().try_for_each(|n| call.require_library(n));
        }
        Touches::Visible => return Ok(()),
        Touches::Document(id) => id,
        Touches::Chunk(id) => id.split_once(':').map_or(id, |(document, _)| document),
    };
    let engine = shared.engine.clone();
    let id = document.to_string();
    // A document that does not exist is left for the work to report.
    match blocking(move || engine.document(&id)).await {
        Ok(found) => call.require_library(&found.library),
        Err(e) if e.code == ErrorCode::NotFound || e.code == ErrorCode::InvalidArgument => Ok(()),
        Err(e) => Err(e),
    }
}

/// Refuses (`PathNotAllowed`) a credentialed caller's reading of the
/// server's own files (paths, folders, a Zotero library, a reference list)
/// when no `[ingest] roots` say which folders it may read: without roots a
/// key could ingest the server's configuration and read it back. The local
/// user and an open server keep the guarded default; content, URLs and
/// uploads are not files of the server.
pub fn server_files(shared: &Shared, call: &Call) -> Result<(), EngineError> {
    if call.principal.is_none() || shared.engine.has_roots() {
        return Ok(());
    }
    Err(EngineError::new(
        ErrorCode::PathNotAllowed,
        "this server reads no files of its own for a caller with a key or token: \
         it has no [ingest] roots (send content, a URL or an upload instead)",
    ))
}

/// Whether a request reads files of the server.
fn reads_server_files(request: &IngestRequest) -> bool {
    request.targets.iter().any(|t| match t {
        IngestTarget::Path(_) | IngestTarget::File(_) => true,
        IngestTarget::Item { path, .. } => path.is_some(),
        IngestTarget::Url(_)
        | IngestTarget::Content { .. }
        | IngestTarget::Bytes { .. }
        | IngestTarget::Record(_) => false,
    })
}

/// The budget of ingested bytes an hour that holds `call`'s caller, when
/// one does (an identified caller on a server with an ingest rate).
fn ingest_budget(shared: &Shared, call: &Call) -> Option<IngestBudget> {
    let principal = call.principal.as_ref()?;
    Some(IngestBudget {
        telemetry: shared.telemetry.clone(),
        caller: principal.name.clone(),
        per_hour: shared.options.ingest_bytes_per_hour?,
    })
}

/// One caller's budget of ingested bytes an hour: every writer charges it
/// through `Progress::admit`, per document as the document is admitted.
#[derive(Clone)]
pub struct IngestBudget {
    telemetry: Arc<telemetry::Telemetry>,
    caller: String,
    per_hour: u64,
}

impl IngestBudget {
    /// Admits a document of `bytes` while the budget is not spent (it may
    /// overdraw it: the caller then waits for the overdraft to refill), or
    /// refuses it (`RateLimited`, with the wait in its details).
    pub fn spend(&self, bytes: u64) -> Result<(), EngineError> {
        let (caller, per_hour) = (&self.caller, self.per_hour);
        self.telemetry
            .spend_ingest(caller, per_hour, bytes)
            .map_err(|wait| {
                let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
                EngineError::new(
                    ErrorCode::RateLimited,
                    format!(
                        "{caller:?} has ingested its {per_hour} bytes for this hour: retry in {seconds} s"
                    ),
                )
                .with_details(serde_json::json!({"retry_after_seconds": seconds}))
            })
    }
}

/// Refuses an ingest before any work (`RateLimited`) when the caller has
/// already spent its budget; each document is still admitted on its own.
fn admit_ingest(shared: &Shared, call: &Call) -> Result<(), EngineError> {
    match ingest_budget(shared, call) {
        Some(budget) => budget.spend(0),
        None => Ok(()),
    }
}

/// The progress of `call`'s write, charging its caller's ingest budget.
pub fn write_progress(shared: &Shared, call: &Call) -> call::CallProgress {
    call.progress().within(ingest_budget(shared, call))
}

/// The libraries `call` may see.
pub fn visible(engine: &Engine, call: &Call) -> Result<Vec<LibraryInfo>, EngineError> {
    let mut libraries = engine.libraries()?;
    libraries.retain(|l| call.may_touch(&l.name));
    Ok(libraries)
}

/// A library named by a caller, checked against folio's naming rules.
pub fn library(name: &str) -> Result<LibraryName, EngineError> {
    Ok(LibraryName::new(name)?)
}

/// Searches for `call`.
pub async fn search(
    shared: &Shared,
    call: &Call,
    request: SearchRequest,
) -> Result<SearchResponse, EngineError> {
    let library = request.library.clone();
    run(shared, call, Touches::Library(&library), move |engine| {
        engine.search(&request)
    })
    .await
}

/// Searches one library, or every library when `library` is None, with
/// the request `request` makes for each, keeps the hits `keep` accepts,
/// and merges them best first by score: at most `top_k`, each with its
/// library.
pub async fn search_across(
    shared: &Shared,
    call: &Call,
    library: Option<LibraryName>,
    request: impl Fn(LibraryName) -> SearchRequest + Send + 'static,
    keep: impl Fn(&SearchHit) -> bool + Send + 'static,
    top_k: usize,
) -> Result<Vec<(LibraryName, SearchHit)>, EngineError> {
    let touched = library.clone();
    let touches = match &touched {
        Some(name) => Touches::Library(name),
        None => Touches::Visible,
    };
    let caller = call.clone();
    run(shared, call, touches, move |engine| {
        let libraries = match library {
            Some(name) => vec![name],
            None => visible(engine, &caller)?
                .into_iter()
                .map(|l| l.name)
                .collect(),
        };
        let mut hits = Vec::new();
        for name in libraries {
            let response = engine.search(&request(name.clone()))?;
            hits.extend(
                response
                    .hits
                    .into_iter()
                    .filter(|h| keep(h))
                    .map(|h| (name.clone(), h)),
            );
        }
        hits.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
        hits.truncate(top_k);
        Ok(hits)
    })
    .await
}

/// A page of the documents of one library, or of every library in turn
/// when `library` is None: `offset` and `limit` count across libraries.
pub async fn documents_across(
    shared: &Shared,
    call: &Call,
    library: Option<LibraryName>,
    offset: u64,
    limit: u64,
) -> Result<Vec<DocumentSummary>, EngineError> {
    let touched = library.clone();
    let touches = match &touched {
        Some(name) => Touches::Library(name),
        None => Touches::Visible,
    };
    let caller = call.clone();
    run(shared, call, touches, move |engine| {
        let libraries = match library {
            Some(name) => vec![engine.library(&name)?],
            None => visible(engine, &caller)?,
        };
        let (mut skip, mut left) = (offset, limit);
        let mut documents = Vec::new();
        for info in libraries {
            if left == 0 {
                break;
            }
            if skip >= info.document_count {
                skip -= info.document_count;
                continue;
            }
            let (page, _) = engine.documents(&info.name, skip, left)?;
            skip = 0;
            left -= page.len() as u64;
            documents.extend(page);
        }
        Ok(documents)
    })
    .await
}

/// Ingests for `call`, reporting progress to its client and stopping
/// between documents when it is cancelled.
pub async fn ingest(
    shared: &Shared,
    call: &Call,
    request: IngestRequest,
) -> Result<IngestReport, EngineError> {
    ingest_then(shared, call, request, |_, report| Ok(report)).await
}

/// Ingests for `call` as `ingest` does, then runs `then` on the report with
/// the engine (on the blocking pool, within the same time limit). The
/// caller's ingest budget admits each document as it is read.
pub async fn ingest_then<T, F>(
    shared: &Shared,
    call: &Call,
    request: IngestRequest,
    then: F,
) -> Result<T, EngineError>
where
    F: FnOnce(&Engine, IngestReport) -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    if reads_server_files(&request) {
        server_files(shared, call)?;
    }
    admit_ingest(shared, call)?;
    let progress = write_progress(shared, call);
    let library = request.library.clone();
    run(shared, call, Touches::Library(&library), move |engine| {
        let report = engine.ingest(&request, &progress)?;
        then(engine, report)
    })
    .await
}

/// Where `ingest_source` reads documents from.
pub enum Source {
    /// A file or a folder (recursively) on the server.
    Path(PathBuf),
    /// The items of a Zotero library, with their citation fields.
    Zotero(ZoteroRequest),
}

/// An ingest of one source into an existing library (`LibraryNotFound`
/// otherwise), with what may come with it.
pub struct SourceIngest {
    pub library: LibraryName,
    pub source: Source,
    /// OCR languages for scanned pages (a Zotero item's own come first).
    pub ocr_languages: Vec<String>,
    /// A reference list (CSL-JSON or BibTeX) to match to the library's
    /// documents afterwards.
    pub references: Option<PathBuf>,
    /// Re-embed the library first when its model is not the server's.
    pub rebuild_on_model_change: bool,
}

/// What `ingest_source` did.
pub struct Ingested {
    pub report: IngestReport,
    /// The library's embedding model afterwards.
    pub model: String,
    /// Documents the reference list had no entry for.
    pub unmatched: Vec<String>,
}

/// The Zotero data directory: the one given, else the server's
/// `FOLIO_ZOTERO_DIR`, else `~/Zotero`.
pub fn zotero_dir(given: Option<PathBuf>) -> PathBuf {
    given
        .or_else(|| std::env::var_os("FOLIO_ZOTERO_DIR").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join("Zotero")))
        .unwrap_or_default()
}

/// Ingests a source for `call` as a write (see `write`): rebuilds the
/// library first when asked and its model changed, ingests the path or the
/// Zotero items, then attaches the reference list unless cancelled.
pub async fn ingest_source(
    shared: &Shared,
    call: &Call,
    ingest: SourceIngest,
) -> Written<Ingested> {
    if let Err(refused) = server_files(shared, call).and_then(|()| admit_ingest(shared, call)) {
        return Written::Done(Err(refused));
    }
    let progress = write_progress(shared, call);
    let allow_private_urls = shared.options.allow_private_urls;
    let mut touched = vec![ingest.library.clone()];
    if let Source::Zotero(request) = &ingest.source {
        touched.push(request.library.clone());
    }
    write(shared, call, Touches::Libraries(&touched), move |engine| {
        let SourceIngest {
            library,
            source,
            ocr_languages,
            references,
            rebuild_on_model_change,
        } = ingest;
        let info = engine.library(&library)?;
        if rebuild_on_model_change {
            let space = engine.embedder()?.space().clone();
            if info.space.difference(&space).is_some() {
                engine.rebuild(&library, &folio_engine::SilentProgress)?;
            }
        }
        let report = match source {
            Source::Zotero(request) => engine.ingest_zotero(&request, &progress)?,
            Source::Path(path) => {
                let mut request =
                    IngestRequest::new(library.clone(), vec![IngestTarget::Path(path)]);
                request.ocr_languages = ocr_languages;
                request.allow_private_urls = Some(allow_private_urls);
                engine.ingest(&request, &progress)?
            }
        };
        let mut unmatched = Vec::new();
        if let Some(path) = references.as_ref().filter(|_| !report.cancelled) {
            let path = engine.confine(path)?;
            let bytes = std::fs::read(&path).map_err(|e| {
                EngineError::new(ErrorCode::NotFound, format!("{}: {e}", path.display()))
            })?;
            let list = folio_engine::cite::read_references(&bytes)?;
            unmatched = engine.attach_references(&library, &list)?.unmatched;
        }
        let model = engine
            .library(&library)
            .map(|l| l.space.model)
            .unwrap_or_default();
        Ok(Ingested {
            report,
            model,
            unmatched,
        })
    })
    .await
}

/// Ingests one source for `call`: the item, and the chunks its document
/// holds (a skipped document keeps the ones it has), or the item's error.
pub async fn ingest_one(
    shared: &Shared,
    call: &Call,
    request: IngestRequest,
) -> Result<(IngestItem, u32), EngineError> {
    ingest_then(shared, call, request, |engine, report| {
        let item = report
            .items
            .into_iter()
            .next()
            .ok_or_else(|| EngineError::invalid("nothing to ingest"))?;
        if let Some(e) = item.error.clone() {
            return Err(e);
        }
        let chunks = stored_chunks(engine, &item);
        Ok((item, chunks))
    })
    .await
}

/// The chunks an ingested item's document holds: a skipped document keeps
/// the chunks it has.
pub fn stored_chunks(engine: &Engine, item: &IngestItem) -> u32 {
    match (&item.document_id, item.status) {
        (Some(id), IngestStatus::Skipped) => engine.document(id).map_or(0, |d| d.chunk_count),
        _ => item.chunks,
    }
}

/// Deletes a document for `call`, returning how many chunks it had.
pub async fn delete_document(shared: &Shared, call: &Call, id: String) -> Result<u32, EngineError> {
    let touched = id.clone();
    run(shared, call, Touches::Document(&touched), move |engine| {
        let document = engine.document(&id)?;
        engine.delete_document(&id)?;
        Ok(document.chunk_count)
    })
    .await
}

/// Deletes a library with all its documents for `call`: how many
/// documents and chunks it held.
pub async fn delete_library(
    shared: &Shared,
    call: &Call,
    name: LibraryName,
) -> Result<(u64, u64), EngineError> {
    let touched = name.clone();
    run(shared, call, Touches::Library(&touched), move |engine| {
        let info = engine.library(&name)?;
        engine.delete_library(&name)?;
        Ok((info.document_count, info.chunk_count))
    })
    .await
}

// Whether the server can read a file, as diagnostics report it (no doc
// comment: it would enter the tools' output schemas).
#[derive(Debug, Serialize, JsonSchema)]
pub struct PathCheck {
    pub path: String,
    pub readable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Whether the server can read `path` (and ingestion may: roots apply).
/// Only a caller who may ingest server files learns anything: another
/// caller is told it may not ask, without a word about the file.
pub fn check_path(shared: &Shared, call: &Call, path: &str) -> PathCheck {
    let refused = |message: String| PathCheck {
        path: path.to_string(),
        readable: false,
        size_bytes: None,
        error: Some(message),
    };
    if let Some(principal) = &call.principal
        && !principal.may(folio_engine::keys::Scope::Ingest)
    {
        return refused("check_path needs the ingest scope".into());
    }
    if let Err(e) = server_files(shared, call) {
        return refused(e.message);
    }
    let result = shared
        .engine
        .confine(std::path::Path::new(path))
        .map_err(|e| e.message)
        .and_then(|p| {
            std::fs::File::open(&p)
                .and_then(|_| std::fs::metadata(&p))
                .map_err(|e| e.to_string())
        });
    match result {
        Ok(meta) => PathCheck {
            path: path.to_string(),
            readable: true,
            size_bytes: Some(meta.len()),
            error: None,
        },
        Err(e) => refused(e),
    }
}

/// Whether `call`'s caller may see where the server keeps things (its
/// data directory, model folder, working directory): the local user, an
/// open server's caller, or an admin.
pub fn sees_server(call: &Call) -> bool {
    call.principal
        .as_ref()
        .is_none_or(|p| p.may(folio_engine::keys::Scope::Admin))
}

/// The folder watches `call`'s caller may see: those of its libraries,
/// with the folder named only to a caller who may ingest.
pub fn visible_watches(call: &Call) -> Vec<watch::WatchState> {
    let ingests = call
        .principal
        .as_ref()
        .is_none_or(|p| p.may(folio_engine::keys::Scope::Ingest));
    watch::states()
        .into_iter()
        .filter(|w| LibraryName::new(&w.library).is_ok_and(|l| call.may_touch(&l)))
        .map(|mut w| {
            if !ingests {
                w.folder = String::new();
            }
            w
        })
        .collect()
}

/// The search caches' counters, as server diagnostics report them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CacheInfo {
    /// Searches answered from the result cache.
    pub result_hits: u64,
    pub result_misses: u64,
    /// result_hits over all searches since the server started, in [0, 1].
    pub hit_rate: f64,
    pub result_entries: usize,
    /// Query embeddings reused.
    pub vector_hits: u64,
    pub vector_misses: u64,
    pub vector_entries: usize,
}

impl CacheInfo {
    pub fn of(shared: &Shared) -> Self {
        let s = shared.engine.cache_stats();
        CacheInfo {
            result_hits: s.result_hits,
            result_misses: s.result_misses,
            hit_rate: s.hit_rate(),
            result_entries: s.result_entries,
            vector_hits: s.vector_hits,
            vector_misses: s.vector_misses,
            vector_entries: s.vector_entries,
        }
    }
}

/// Runs engine work on the blocking pool. A panic becomes an internal
/// error; the server carries on.
async fn blocking<T, F>(work: F) -> Result<T, EngineError>
where
    F: FnOnce() -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => {
            tracing::error!("a tool panicked: {e}");
            Err(EngineError::new(
                ErrorCode::Internal,
                "the operation failed unexpectedly (a bug); the server is still running",
            ))
        }
        Err(_) => Err(EngineError::new(
            ErrorCode::Internal,
            "the operation was aborted",
        )),
    }
}

/// Runs engine work for `call` on the blocking pool, under the time limit
/// configured for its tool, once what it touches is authorised. On timeout
/// the call is cancelled (work that polls cancellation stops; finished
/// documents stay) and a `Timeout` error returns.
pub async fn run<T, F>(
    shared: &Shared,
    call: &Call,
    touches: Touches<'_>,
    work: F,
) -> Result<T, EngineError>
where
    F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    run_within(shared, call, touches, shared.timeout(&call.tool), work).await
}

/// `run` without a time limit, for a contract that promises one never
/// applies (seed 000's listing) and for reads outside a tool call.
pub async fn unbounded<T, F>(
    shared: &Shared,
    call: &Call,
    touches: Touches<'_>,
    work: F,
) -> Result<T, EngineError>
where
    F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    run_within(shared, call, touches, None, work).await
}

async fn run_within<T, F>(
    shared: &Shared,
    call: &Call,
    touches: Touches<'_>,
    limit: Option<Duration>,
    work: F,
) -> Result<T, EngineError>
where
    F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    authorise(shared, call, touches).await?;
    let engine = shared.engine.clone();
    within(limit, &call.tool, call, move || work(&engine)).await
}

/// Engine work under `limit`, cancelling `call` when it passes.
async fn within<T, F>(
    limit: Option<Duration>,
    tool: &str,
    call: &Call,
    work: F,
) -> Result<T, EngineError>
where
    F: FnOnce() -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    let task = blocking(work);
    match limit {
        None => task.await,
        Some(limit) => match tokio::time::timeout(limit, task).await {
            Ok(result) => result,
            Err(_) => {
                call.cancel.cancel();
                Err(EngineError::new(
                    ErrorCode::Timeout,
                    format!(
                        "{tool} exceeded its time limit of {} s",
                        limit.as_secs_f64()
                    ),
                ))
            }
        },
    }
}

/// How a write under a time limit ended.
pub enum Written<T> {
    /// Finished within the limit, or failed.
    Done(Result<T, EngineError>),
    /// The limit passed: the work was cancelled and waited for. `stopped` is
    /// what it returned once stopped (what it finished stays written).
    TimedOut {
        error: EngineError,
        stopped: Result<T, EngineError>,
    },
}

/// Runs a write for `call` under its tool's time limit. On timeout the
/// call is cancelled (the work stops between documents, embedding batches
/// and before each commit) and then awaited to its end, however long a
/// commit under way takes (a write lock another process holds), so a
/// `Timeout` always says exactly what was written: never a batch that
/// commits after the answer.
pub async fn write<T, F>(shared: &Shared, call: &Call, touches: Touches<'_>, work: F) -> Written<T>
where
    F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    T: Send + 'static,
{
    if let Err(refused) = authorise(shared, call, touches).await {
        return Written::Done(Err(refused));
    }
    let engine = shared.engine.clone();
    let tool = call.tool.as_str();
    let mut task = Box::pin(blocking(move || work(&engine)));
    let Some(limit) = shared.timeout(tool) else {
        return Written::Done(task.await);
    };
    match tokio::time::timeout(limit, &mut task).await {
        Ok(result) => Written::Done(result),
        Err(_) => {
            call.cancel.cancel();
            let error = EngineError::new(
                ErrorCode::Timeout,
                format!(
                    "{tool} exceeded its time limit of {} s",
                    limit.as_secs_f64()
                ),
            );
            let stopped = task.await;
            Written::TimedOut { error, stopped }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 26: the end-to-end timeout test accepted a success or a
    // TIMEOUT. Here work that outlasts its limit always ends in TIMEOUT
    // with the call cancelled, and work within it always answers.
    #[tokio::test]
    async fn work_past_its_limit_is_a_timeout_and_cancelled() {
        let call = Call::detached("query");
        let token = call.cancel.clone();
        let slow = within(Some(Duration::from_millis(50)), "query", &call, move || {
            // Until the limit cancels the call, as engine work polls it.
            while !token.is_cancelled() {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(1)
        });
        let error = slow.await.expect_err("past the limit");
        assert_eq!(error.code, ErrorCode::Timeout);
        assert!(
            error
                .message
                .contains("query exceeded its time limit of 0.05 s")
        );
        assert!(call.cancel.is_cancelled());

        let call = Call::detached("query");
        let quick = within(Some(Duration::from_secs(30)), "query", &call, || Ok(2));
        assert_eq!(quick.await.unwrap(), 2);
        assert!(!call.cancel.is_cancelled());
        let unlimited = within(None, "query", &call, || Ok(3));
        assert_eq!(unlimited.await.unwrap(), 3);
    }
}
