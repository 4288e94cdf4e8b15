//! Connections to the server. tokio-postgres splits a connection into a
//! `Client` (requests, runtime-agnostic) and a `Connection` (the socket),
//! which runs on a small runtime this pool owns. Callers are synchronous —
//! the `Store` trait is — and wait on a client's futures with a plain
//! executor, so the store works the same from a blocking pool, a CLI thread
//! or inside an async task, and never starts a runtime within a runtime.
//!
//! A connection the server closed (a restart, a network fault) is dropped on
//! return to the pool; the next request opens a new one, so the process
//! recovers by itself when the server comes back.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use folio_store::{Result, StoreError};
use tokio_postgres::{Client, Config, NoTls};

/// Idle connections kept for reuse.
const IDLE_MAX: usize = 16;

pub struct Pool {
    config: Config,
    /// The server as logs and errors may name it: no password.
    pub display: String,
    runtime: Option<tokio::runtime::Runtime>,
    idle: Mutex<Vec<Client>>,
    /// Whether pgvector has iterative index scans (0.8 and newer): one of
    /// the `SCANS_*` values, known once a connection saw the extension.
    iterative: AtomicU8,
}

const SCANS_UNKNOWN: u8 = 0;
const SCANS_ITERATIVE: u8 = 1;
const SCANS_PLAIN: u8 = 2;

/// Runs a future to completion on this thread.
pub fn wait<F: Future>(future: F) -> F::Output {
    futures_executor::block_on(future)
}

/// A tokio-postgres error as a storage error, with the server's own message
/// (and hint) when it sent one.
pub fn pg_err(context: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |e| StoreError::io(context, describe(&e))
}

pub fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut text = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                text.push_str(&format!("; {detail}"));
            }
            if let Some(hint) = db.hint() {
                text.push_str(&format!("; hint: {hint}"));
            }
            text
        }
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                text.push_str(&format!(": {inner}"));
                source = inner.source();
            }
            text
        }
    }
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => "the configured PostgreSQL URL".into(),
    }
}

impl Pool {
    pub fn new(url: &str) -> Result<Self> {
        let display = redact(url);
        let mut config: Config = url.parse().map_err(|e: tokio_postgres::Error| {
            StoreError::InvalidArgument(format!("invalid PostgreSQL URL {display}: {e}"))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("folio");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("folio-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::io("starting the PostgreSQL client runtime", e))?;
        Ok(Pool {
            config,
            display,
            runtime: Some(runtime),
            idle: Mutex::new(Vec::new()),
            iterative: AtomicU8::new(SCANS_UNKNOWN),
        })
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the pool")
    }

    fn connect(&self) -> Result<Client> {
        let config = self.config.clone();
        let task = self.runtime().spawn(async move {
            let (client, connection) = config.connect(NoTls).await?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "a PostgreSQL connection ended");
                }
            });
            Ok::<_, tokio_postgres::Error>(client)
        });
        let client = wait(task)
            .map_err(|e| StoreError::io("connecting to PostgreSQL", e))?
            .map_err(|e| {
                StoreError::io(
                    "connecting to PostgreSQL",
                    format!("{}: {}", self.display, describe(&e)),
                )
            })?;
        // Postings are gathered in memory. folio's reads are index probes
        // into a mostly cached database: with the default random_page_cost
        // (4, for spinning disks) the planner prefers scanning every chunk
        // to probing the few a filter selects.
        wait(client.batch_execute(
            "SET work_mem = '64MB'; SET random_page_cost = 1.1; SET hnsw.ef_search = 100",
        ))
        .map_err(pg_err("configuring a PostgreSQL connection"))?;
        // pgvector's HNSW returns too few rows under a selective filter
        // unless the scan may continue past ef_search candidates (0.8 and
        // newer; with an older pgvector, filtered searches are exact).
        let version: Option<String> = wait(client.query_opt(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
            &[],
        ))
        .map_err(pg_err("configuring a PostgreSQL connection"))?
        .map(|row| row.get(0));
        if let Some(version) = version {
            let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
            let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
            let iterative = (major, minor) >= (0, 8);
            if iterative {
                wait(client.batch_execute(
                    "SET hnsw.iterative_scan = relaxed_order; SET hnsw.max_scan_tuples = 40000",
                ))
                .map_err(pg_err("configuring a PostgreSQL connection"))?;
            }
            let scans = if iterative {
                SCANS_ITERATIVE
            } else {
                SCANS_PLAIN
            };
            if self.iterative.swap(scans, Ordering::Relaxed) != scans && !iterative {
                tracing::warn!(
                    pgvector = %version,
                    "pgvector before 0.8 has no iterative index scans: filtered vector searches \
                     scan their candidates exactly (upgrade pgvector for faster filtered search)"
                );
            }
        }
        Ok(client)
    }

    /// Whether HNSW scans continue under a filter until k rows pass it.
    pub fn iterative_scans(&self) -> bool {
        self.iterative.load(Ordering::Relaxed) == SCANS_ITERATIVE
    }

    /// Closes the idle connections (after the schema was created, so new
    /// ones see the extension).
    pub fn clear_idle(&self) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// A connection for one operation; it goes back to the pool on drop.
    pub fn get(&self) -> Result<Pooled<'_>> {
        let reused = {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            let mut found = None;
            while let Some(client) = idle.pop() {
                if !client.is_closed() {
                    found = Some(client);
                    break;
                }
            }
            found
        };
        let client = match reused {
            Some(client) => client,
            None => self.connect()?,
        };
        Ok(Pooled {
            pool: self,
            client: Some(client),
        })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
        // Never blocks, so dropping the store inside an async task is fine.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

pub struct Pooled<'a> {
    pool: &'a Pool,
    client: Option<Client>,
}

impl Pooled<'_> {
    pub fn client(&mut self) -> &mut Client {
        self.client.as_mut().expect("present until drop")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        if client.is_closed() {
            return;
        }
        let mut idle = self.pool.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < IDLE_MAX {
            idle.push(client);
        }
    }
}
