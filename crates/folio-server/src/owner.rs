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

use crate::ServeOptions;
use crate::context::Shared;
use crate::handler::FolioServer;
use crate::screen::{LineReader, Screened, screen};

/// Where the owner of `data_dir` listens. Socket paths are short on Linux
/// (108 bytes); long data directories use the runtime directory instead.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    let beside = data_dir.join("folio.sock");
    if beside.as_os_str().len() < 100 {
        return beside;
    }
    let digest = {
        use sha2::{Digest, Sha256};
        hex::encode(&Sha256::digest(data_dir.as_os_str().as_encoded_bytes())[..8])
    };
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    base.join(format!("folio-{digest}.sock"))
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
        .serve(crate::screen::screened(stream))
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
        let path = socket_path(&shared.engine.config().data_dir);
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)
            .with_context(|| format!("cannot listen on {}", path.display()))?;
        restrict(&path);
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
                        Ok((stream, _)) => {
                            tokio::spawn(attached_session(shared.clone(), stream, sessions.clone()));
                        }
                        Err(e) => tracing::warn!("accept failed: {e}"),
                    },
                    _ = stop.cancelled() => break,
                }
            }
            // Serve whoever connected before the socket file went away.
            while let Ok(Ok((stream, _))) =
                tokio::time::timeout(Duration::from_millis(50), listener.accept()).await
            {
                tokio::spawn(attached_session(shared.clone(), stream, sessions.clone()));
            }
        });
        Ok(owner)
    }

    /// Stops accepting, then waits for every attached session to end.
    pub async fn finish(self) {
        let _ = std::fs::remove_file(&self.path);
        self.stop.cancel();
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.sessions.drained().await;
    }
}

#[cfg(unix)]
fn restrict(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
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
    let path = socket_path(&config.data_dir);
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

    fn is_replay_answer(line: &str) -> bool {
        line.contains(REPLAY_ID)
            && serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v.get("id").cloned())
                == Some(Value::String(REPLAY_ID.into()))
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
    'backends: loop {
        let (mut from_backend, mut to_backend): Backend = match claim(&config, wait).await? {
            Role::Owner(engine, lock) => {
                owner_lock = Some(lock);
                let shared = Shared::new(Arc::from(engine), options.clone())?;
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
        for line in [&handshake.initialize, &handshake.initialized]
            .into_iter()
            .flatten()
            .chain(pending.as_ref())
        {
            if write_line(&mut to_backend, line).await.is_err() {
                continue 'backends;
            }
        }
        pending = None;
        let mut answer = String::new();
        loop {
            answer.clear();
            tokio::select! {
                line = client.next() => match line? {
                    Some(line) => match screen(line) {
                        Some(Screened::Forward(line)) => {
                            handshake.observe(&line);
                            if write_line(&mut to_backend, &line).await.is_err() {
                                pending = Some(line);
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
    let sessions = Arc::new(Sessions::default());
    session(
        shared,
        tokio::io::join(tokio::io::stdin(), tokio::io::stdout()),
        sessions,
    )
    .await;
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
    fn long_data_directories_get_short_socket_paths() {
        let long = PathBuf::from(format!("/tmp/{}", "d".repeat(150)));
        assert!(socket_path(&long).as_os_str().len() < 108);
        assert_eq!(
            socket_path(Path::new("/data")),
            PathBuf::from("/data/folio.sock")
        );
    }
}
