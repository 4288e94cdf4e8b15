//! One data directory, many stdio clients.
//!
//! Each agent client spawns its own `folio serve --stdio`. The first process
//! to take the data directory's write lock becomes its **owner**: it serves
//! MCP sessions in-process, for its own client and for the others over a
//! Unix socket beside the data. Later processes **attach**: they pump their
//! client's lines to the owner's socket and back, so every client reads and
//! writes through the one process that owns the index — no lock errors.
//!
//! The owner keeps running while attached sessions remain after its own
//! client leaves. If an owner dies anyway, attached processes re-elect: one
//! takes the lock and becomes owner, the others attach to it, and each
//! replays its client's `initialize` so the session carries on.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use folio_engine::{Engine, EngineConfig};
use folio_store_embedded::WriteLock;
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Notify;

use super::mcp::FolioServer;
use super::screen::{LineReader, Screened, screen};
use crate::ops::Shared;
use crate::options::ServeOptions;
use crate::tool::registry::Registry;

/// Where the owner of `data_dir` listens. Socket paths are short on Linux
/// (108 bytes); long data directories use a folder of the user's own in the
/// runtime directory (or the temporary one): created 0700 and checked to
/// be the user's and closed to others, so another local user can neither
/// take the name first nor answer in the owner's place.
pub fn socket_path(data_dir: &Path) -> Result<PathBuf> {
    let beside = data_dir.join("folio.sock");
    if beside.as_os_str().len() < 100 {
        return Ok(beside);
    }
    let digest = {
        use sha2::{Digest, Sha256};
        hex::encode(&Sha256::digest(data_dir.as_os_str().as_encoded_bytes())[..8])
    };
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(std::env::temp_dir);
    Ok(private_dir(&base)?.join(format!("{digest}.sock")))
}

/// `base/folio-<uid>`, made 0700 if missing; refused unless it is a real
/// folder (not a link) of this user's that no one else may enter.
fn private_dir(base: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = nix::unistd::geteuid().as_raw();
    let dir = base.join(format!("folio-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(&dir)
        .with_context(|| format!("cannot inspect {}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        bail!(
            "{} is not a private folder of this user (owner uid {}, mode {:o}): refusing to \
             put folio's socket there; remove it or set XDG_RUNTIME_DIR",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        );
    }
    Ok(dir)
}

/// Whether the process at the other end of `stream` runs as this user.
fn same_user(stream: &UnixStream) -> Result<()> {
    let uid = nix::unistd::geteuid().as_raw();
    let peer = stream
        .peer_cred()
        .context("cannot read the peer's credentials")?
        .uid();
    if peer != uid {
        bail!("the process at the other end runs as uid {peer}, not as this user ({uid})");
    }
    Ok(())
}

/// Counts live sessions; the owner exits only when none remain.
#[derive(Default)]
pub struct Sessions {
    live: AtomicUsize,
    changed: Notify,
}

impl Sessions {
    fn enter(self: &Arc<Self>) -> SessionGuard {
        self.live.fetch_add(1, Ordering::SeqCst);
        SessionGuard(self.clone())
    }

    async fn drained(&self) {
        loop {
            let notified = self.changed.notified();
            if self.live.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

struct SessionGuard(Arc<Sessions>);

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }
}

/// Serves one MCP session over any byte stream.
async fn session<S>(shared: Arc<Shared>, stream: S, sessions: Arc<Sessions>)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let _guard = sessions.enter();
    match FolioServer::new(shared)
        .serve(super::screen::screened(stream))
        .await
    {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::debug!("a session ended before initialisation: {e}"),
    }
}

/// What an attaching process sends first: its client's options, and its
/// engine configuration's fingerprint (one data directory is served with
/// one configuration; options differ per client).
#[derive(serde::Serialize, serde::Deserialize)]
struct Attach {
    folio_attach: ServeOptions,
    config: String,
}

/// The owner's answer to an `Attach`.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Welcome {
    FolioAttached(bool),
    FolioRefused(String),
}

/// The engine settings a client must share with the owner to be served by
/// it; the lock wait is the client's own business.
pub fn fingerprint(config: &EngineConfig) -> String {
    let mut config = config.clone();
    config.writable = None;
    config.allow_private_urls = false;
    format!("{config:?}")
}

const MAX_ATTACH_LINE: u64 = 1 << 20;

/// Serves one attached client: reads its options, answers whether it is
/// served, then serves its MCP session with those options.
async fn attached_session(owner: Arc<Shared>, stream: UnixStream, sessions: Arc<Sessions>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut line = String::new();
    let read = (&mut reader)
        .take(MAX_ATTACH_LINE)
        .read_line(&mut line)
        .await;
    let welcome = match read
        .ok()
        .and_then(|_| serde_json::from_str::<Attach>(&line).ok())
    {
        None => Err("an attaching process sent no options".to_string()),
        Some(attach) if attach.config != fingerprint(owner.engine.config()) => Err(format!(
            "{} is served by another folio process with a different configuration \
             (model, limits, roots or chunking); use the same configuration, or another \
             data directory (FOLIO_DATA_DIR)",
            owner.engine.config().data_dir.display()
        )),
        Some(attach) => {
            Shared::new(owner.engine.clone(), attach.folio_attach).map_err(|e| e.to_string())
        }
    };
    let answer = match &welcome {
        Ok(_) => Welcome::FolioAttached(true),
        Err(message) => Welcome::FolioRefused(message.clone()),
    };
    let mut answer = serde_json::to_string(&answer).unwrap_or_default();
    answer.push('\n');
    if write.write_all(answer.as_bytes()).await.is_err() {
        return;
    }
    if let Ok(shared) = welcome {
        session(shared, tokio::io::join(reader, write), sessions).await;
    }
}

/// The owner's side: accepts attached clients until told to stop.
pub struct Owner {
    pub shared: Arc<Shared>,
    pub sessions: Arc<Sessions>,
    path: PathBuf,
    stop: tokio_util::sync::CancellationToken,
}

impl Owner {
    /// Binds the socket and starts accepting. Call while holding the write
    /// lock: a socket file left by a dead owner is replaced.
    pub fn start(shared: Arc<Shared>) -> Result<Self> {
        let path = socket_path(&shared.engine.config().data_dir)?;
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot replace the old socket {}", path.display()));
            }
        }
        let listener = UnixListener::bind(&path)
            .with_context(|| format!("cannot listen on {}", path.display()))?;
        restrict(&path)?;
        let sessions = Arc::new(Sessions::default());
        let stop = tokio_util::sync::CancellationToken::new();
        let owner = Owner {
            shared: shared.clone(),
            sessions: sessions.clone(),
            path,
            stop: stop.clone(),
        };
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => match same_user(&stream) {
                            Ok(()) => {
                                tokio::spawn(attached_session(shared.clone(), stream, sessions.clone()));
                            }
                            Err(e) => tracing::warn!("refused a connection to the owner's socket: {e:#}"),
                        },
                        Err(e) => tracing::warn!("accept failed: {e}"),
                    },
                    _ = stop.cancelled() => break,
                }
            }
            // Serve whoever connected before the socket file went away.
            while let Ok(Ok((stream, _))) =
                tokio::time::timeout(Duration::from_millis(50), listener.accept()).await
            {
                if same_user(&stream).is_ok() {
                    tokio::spawn(attached_session(shared.clone(), stream, sessions.clone()));
                }
            }
        });
        Ok(owner)
    }

    /// Waits for the background jobs to end (still accepting: a client may
    /// attach meanwhile), stops accepting, then waits for every attached
    /// session to end.
    pub async fn finish(self) {
        crate::ops::jobs::registry().settled().await;
        let _ = std::fs::remove_file(&self.path);
        self.stop.cancel();
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.sessions.drained().await;
    }
}

fn restrict(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {} to this user", path.display()))
}

/// The role a process takes for a data directory.
pub enum Role {
    /// This process serves the data directory; the lock says so to others
    /// and must be held as long as it serves.
    Owner(Box<Engine>, WriteLock),
    Attached(UnixStream),
}

/// The lock file the serving owner of a data directory holds. It is not the
/// write lock: the owner takes that per write, like any other process, so
/// the CLI can write beside a connected agent.
const OWNER_LOCK: &str = "owner.lock";

/// Becomes the owner, or attaches to the one there is; waits up to `wait`
/// for either (an owner that is still starting up).
pub async fn claim(config: &EngineConfig, wait: Duration) -> Result<Role> {
    let deadline = Instant::now() + wait;
    let path = socket_path(&config.data_dir)?;
    loop {
        let dir = config.data_dir.clone();
        let owner =
            tokio::task::spawn_blocking(move || WriteLock::try_acquire_file(&dir, OWNER_LOCK))
                .await??;
        if let Some(lock) = owner {
            let attempt = config.clone();
            let engine = tokio::task::spawn_blocking(move || Engine::open(attempt)).await??;
            return Ok(Role::Owner(Box::new(engine), lock));
        }
        if let Ok(stream) = UnixStream::connect(&path).await {
            // Attach only to an owner of this user's: another user's process
            // at the socket's name must not answer in the owner's place.
            same_user(&stream)
                .with_context(|| format!("refusing to attach to the socket {}", path.display()))?;
            return Ok(Role::Attached(stream));
        }
        if Instant::now() >= deadline {
            bail!(
                "another folio server owns {} and serves no socket; retry when it has started",
                config.data_dir.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const REPLAY_ID: &str = "folio-reattach";

/// The client's handshake, replayed when the backend changes.
#[derive(Default)]
struct Handshake {
    initialize: Option<String>,
    initialized: Option<String>,
}

impl Handshake {
    fn observe(&mut self, line: &str) {
        if self.initialize.is_some() && self.initialized.is_some() {
            return;
        }
        let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match message.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                message.insert("id".into(), Value::String(REPLAY_ID.into()));
                self.initialize = Some(Value::Object(message).to_string());
            }
            Some("notifications/initialized") => self.initialized = Some(line.to_string()),
            _ => {}
        }
    }

    fn is_initialize(line: &str) -> bool {
        serde_json::from_str::<Envelope>(line)
            .is_ok_and(|e| e.method.as_deref() == Some("initialize"))
    }

    fn is_replay_answer(line: &str) -> bool {
        line.contains(REPLAY_ID)
            && serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v.get("id").cloned())
                == Some(Value::String(REPLAY_ID.into()))
    }
}

/// The client's requests that the serving process has not answered yet,
/// in the order sent. When that process goes away they are not lost: a
/// request that is safe to repeat (anything but a tool that deletes: reads,
/// and writes idempotent by content hash or deterministic ids) is sent
/// again to the next owner; the others are answered with an error saying
/// the call may or may not have been applied.
struct InFlight {
    registry: Option<Registry>,
    requests: Vec<(Value, String, bool)>,
}

/// The parts of a JSON-RPC message the hand-over needs; the rest of a
/// (possibly large) answer is skipped, not built.
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(serde::Deserialize)]
struct Params {
    #[serde(default)]
    name: Option<String>,
    #[serde(default, rename = "requestId")]
    request_id: Option<Value>,
}

impl InFlight {
    fn new(options: &ServeOptions) -> Self {
        InFlight {
            registry: Registry::for_options(options).ok(),
            requests: Vec::new(),
        }
    }

    /// Notes a line sent by the client; returns whether it was a request.
    fn sent(&mut self, line: &str) -> bool {
        let Ok(envelope) = serde_json::from_str::<Envelope>(line) else {
            return false;
        };
        match (envelope.id, envelope.method.as_deref()) {
            (Some(id), Some(method)) => {
                let safe = method != "tools/call"
                    || envelope
                        .params
                        .and_then(|p| p.name)
                        .and_then(|name| {
                            self.registry.as_ref()?.find(&name).map(|(_, t)| t.clone())
                        })
                        .is_none_or(|tool| {
                            tool.annotations.as_ref().and_then(|a| a.destructive_hint) != Some(true)
                        });
                self.requests.push((id, line.to_string(), safe));
                true
            }
            // A cancelled request gets no answer: stop waiting for one.
            (None, Some("notifications/cancelled")) => {
                if let Some(id) = envelope.params.and_then(|p| p.request_id) {
                    self.requests.retain(|(pending, _, _)| *pending != id);
                }
                false
            }
            _ => false,
        }
    }

    /// Notes a line from the serving process: an answer ends its request.
    fn answered(&mut self, line: &str) {
        if let Ok(Envelope {
            id: Some(id),
            method: None,
            ..
        }) = serde_json::from_str::<Envelope>(line)
        {
            self.requests.retain(|(pending, _, _)| *pending != id);
        }
    }

    /// At a hand-over: the requests to send again, in order, and the
    /// answers to give the client for the rest. Nothing stays pending.
    fn hand_over(&mut self) -> (Vec<String>, Vec<String>) {
        let mut again = Vec::new();
        let mut refused = Vec::new();
        for (id, line, safe) in self.requests.drain(..) {
            if safe {
                again.push(line);
            } else {
                refused.push(
                    serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {
                            "code": -32603,
                            "message": "the folio process serving this call stopped before it \
                                        answered: the call may or may not have been applied; \
                                        check before repeating it",
                            "data": {"reason": "owner_lost", "applied": "unknown"},
                        },
                    })
                    .to_string(),
                );
            }
        }
        (again, refused)
    }

    /// Whether the client's `initialize` itself is unanswered (it is then
    /// sent again as it was, not replayed under the replay id).
    fn initializing(&self) -> bool {
        self.requests
            .iter()
            .any(|(_, line, _)| Handshake::is_initialize(line))
    }
}

type Backend = (
    Box<dyn tokio::io::AsyncBufRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
);

/// Runs `folio serve --stdio`: claims the data directory, pumps the
/// client's lines to whichever process serves them, and re-claims when that
/// process goes away.
pub async fn run_stdio(config: EngineConfig, options: ServeOptions, wait: Duration) -> Result<()> {
    let mut client = LineReader::new(BufReader::new(tokio::io::stdin()));
    let mut stdout = tokio::io::stdout();
    let mut handshake = Handshake::default();
    let mut owner: Option<Owner> = None;
    let mut owner_lock: Option<WriteLock> = None;
    let mut pending: Option<String> = None;
    let mut in_flight = InFlight::new(&options);
    'backends: loop {
        let (mut from_backend, mut to_backend): Backend = match claim(&config, wait).await? {
            Role::Owner(engine, lock) => {
                owner_lock = Some(lock);
                let shared = Shared::new(Arc::from(engine), options.clone())?;
                shared.start_background();
                let started = Owner::start(shared.clone())?;
                let (ours, theirs) = tokio::io::duplex(1 << 20);
                tokio::spawn(session(shared, theirs, started.sessions.clone()));
                owner = Some(started);
                let (read, write) = tokio::io::split(ours);
                tracing::info!("serving {} as its owner", config.data_dir.display());
                (Box::new(BufReader::new(read)), Box::new(write))
            }
            Role::Attached(stream) => {
                let (read, mut write) = stream.into_split();
                let mut read = BufReader::new(read);
                let attach = Attach {
                    folio_attach: options.clone(),
                    config: fingerprint(&config),
                };
                let mut welcome = String::new();
                let sent = write_line(&mut write, &serde_json::to_string(&attach)?).await;
                if sent.is_err()
                    || read.read_line(&mut welcome).await.is_err()
                    || welcome.is_empty()
                {
                    // The owner went away while answering: claim again.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue 'backends;
                }
                match serde_json::from_str::<Welcome>(&welcome) {
                    Ok(Welcome::FolioAttached(_)) => {}
                    Ok(Welcome::FolioRefused(message)) => bail!(message),
                    Err(_) => bail!(
                        "the folio process serving {} answered in a way this one does not \
                         understand (another folio version?): {}",
                        config.data_dir.display(),
                        welcome.trim()
                    ),
                }
                tracing::info!("attached to the owner of {}", config.data_dir.display());
                (Box::new(read), Box::new(write))
            }
        };
        // The handshake again (unless the client's own initialize is still
        // unanswered: it goes again below), then what was in flight.
        let replay = if in_flight.initializing() {
            None
        } else {
            handshake.initialize.clone()
        };
        let (again, refused) = in_flight.hand_over();
        for answer in &refused {
            write_line(&mut stdout, answer).await?;
        }
        let mut resend = Vec::new();
        resend.extend(replay);
        resend.extend(handshake.initialized.clone());
        resend.extend(pending.take());
        for line in again {
            // The client's own initialize first; requests after `initialized`.
            if Handshake::is_initialize(&line) {
                resend.insert(0, line.clone());
            } else {
                resend.push(line.clone());
            }
            in_flight.sent(&line);
        }
        for line in &resend {
            if write_line(&mut to_backend, line).await.is_err() {
                continue 'backends;
            }
        }
        let mut answer = String::new();
        loop {
            answer.clear();
            tokio::select! {
                line = client.next() => match line? {
                    Some(line) => match screen(line) {
                        Some(Screened::Forward(line)) => {
                            handshake.observe(&line);
                            // A request is remembered until answered; a
                            // notification that could not be sent is sent
                            // to the next owner.
                            let request = in_flight.sent(&line);
                            if write_line(&mut to_backend, &line).await.is_err() {
                                if !request {
                                    pending = Some(line);
                                }
                                continue 'backends;
                            }
                        }
                        // A malformed line is answered here and goes no further.
                        Some(Screened::Refuse(answer)) => {
                            stdout.write_all(answer.as_bytes()).await?;
                            stdout.write_all(b"\n").await?;
                            stdout.flush().await?;
                        }
                        None => {}
                    },
                    None => break 'backends,
                },
                read = from_backend.read_line(&mut answer) => match read {
                    Ok(0) | Err(_) => {
                        tracing::warn!("the serving process went away; re-claiming");
                        continue 'backends;
                    }
                    Ok(_) => {
                        if Handshake::is_replay_answer(&answer) {
                            continue;
                        }
                        in_flight.answered(&answer);
                        stdout.write_all(answer.as_bytes()).await?;
                        if !answer.ends_with('\n') {
                            stdout.write_all(b"\n").await?;
                        }
                        stdout.flush().await?;
                    }
                },
            }
        }
    }
    // The client is gone: as owner, stay until attached sessions finish.
    if let Some(owner) = owner {
        owner.finish().await;
    }
    drop(owner_lock);
    Ok(())
}

async fn write_line<W: AsyncWrite + Unpin + ?Sized>(to: &mut W, line: &str) -> std::io::Result<()> {
    to.write_all(line.as_bytes()).await?;
    to.write_all(b"\n").await?;
    to.flush().await
}

/// Serves stdio directly from an engine that needs no owner (read-only, or
/// on a database server every process writes to): no lock, no socket.
pub async fn run_stdio_direct(engine: Engine, options: ServeOptions) -> Result<()> {
    let shared = Shared::new(Arc::new(engine), options)?;
    shared.start_background();
    let sessions = Arc::new(Sessions::default());
    session(
        shared.clone(),
        tokio::io::join(tokio::io::stdin(), tokio::io::stdout()),
        sessions,
    )
    .await;
    // The client has gone; its background jobs run to their end.
    crate::ops::jobs::registry().settled().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshakes_are_recorded_once_with_a_replay_id() {
        let mut h = Handshake::default();
        h.observe(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        h.observe(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        h.observe(r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"x":1}}"#);
        let init: Value = serde_json::from_str(h.initialize.as_deref().unwrap()).unwrap();
        assert_eq!(init["id"], REPLAY_ID);
        assert!(init["params"].get("x").is_none());
        assert!(h.initialized.is_some());
        assert!(Handshake::is_replay_answer(
            r#"{"jsonrpc":"2.0","id":"folio-reattach","result":{}}"#
        ));
        assert!(!Handshake::is_replay_answer(
            r#"{"jsonrpc":"2.0","id":1,"result":{"text":"folio-reattach"}}"#
        ));
    }

    #[test]
    fn calls_in_flight_at_a_hand_over_are_sent_again_or_answered() {
        // Issue 26 §5: a call in flight when the owner died was never
        // answered.
        let options = ServeOptions::default();
        let mut in_flight = InFlight::new(&options);
        let call = |id: u32, tool: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
            )
        };
        assert!(in_flight.sent(&call(1, "search")));
        assert!(in_flight.sent(&call(2, "delete_document")));
        assert!(in_flight.sent(&call(3, "ingest")));
        assert!(in_flight.sent(&call(4, "get_document")));
        assert!(in_flight.sent(r#"{"jsonrpc":"2.0","id":"t","method":"tools/list"}"#));
        assert!(!in_flight.sent(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#));
        // Answered, or cancelled by the client: no longer in flight.
        in_flight.answered(r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]}}"#);
        assert!(!in_flight.sent(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"t"}}"#
        ));
        // A server notification carries no id; a server request is not an answer.
        in_flight.answered(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#);
        in_flight.answered(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert!(!in_flight.initializing());

        let (again, refused) = in_flight.hand_over();
        assert_eq!(again, vec![call(1, "search"), call(3, "ingest")]);
        assert_eq!(refused.len(), 1);
        let refused: Value = serde_json::from_str(&refused[0]).unwrap();
        assert_eq!(refused["id"], 2);
        assert_eq!(refused["error"]["data"]["applied"], "unknown");
        assert!(in_flight.hand_over().0.is_empty(), "nothing stays pending");

        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
        in_flight.sent(init);
        assert!(in_flight.initializing());
    }

    #[test]
    fn long_data_directories_get_short_socket_paths() {
        let long = PathBuf::from(format!("/tmp/{}", "d".repeat(150)));
        assert!(socket_path(&long).unwrap().as_os_str().len() < 108);
        assert_eq!(
            socket_path(Path::new("/data")).unwrap(),
            PathBuf::from("/data/folio.sock")
        );
    }

    #[test]
    fn the_socket_folder_is_the_users_own_or_refused() {
        // Issue 26 §6: the socket was a predictable name in /tmp, and errors
        // removing or restricting it were ignored.
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let base = tempfile::tempdir().unwrap();
        let dir = private_dir(base.path()).unwrap();
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);
        assert_eq!(meta.uid(), nix::unistd::geteuid().as_raw());
        assert_eq!(private_dir(base.path()).unwrap(), dir, "reused");

        // A folder others may enter (made by someone who got there first).
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = private_dir(base.path()).unwrap_err();
        assert!(
            refused.to_string().contains("not a private folder"),
            "{refused:#}"
        );

        // A link to somewhere else under the expected name.
        std::fs::remove_dir(&dir).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &dir).unwrap();
        assert!(private_dir(base.path()).is_err());
    }
}
