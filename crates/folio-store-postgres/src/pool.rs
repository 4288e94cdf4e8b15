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

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use folio_store::{Result, StoreError};
use tokio_postgres::{Client, Config, GenericClient, NoTls, Statement};

/// Idle connections kept for reuse.
const IDLE_MAX: usize = 16;

pub struct Pool {
    config: Config,
    /// The server as logs and errors may name it: no password.
    pub display: String,
    runtime: Option<tokio::runtime::Runtime>,
    idle: Mutex<Vec<(Client, Statements)>>,
    /// Whether pgvector has iterative index scans (0.8 and newer): one of
    /// the `SCANS_*` values, known once a connection saw the extension.
    iterative: AtomicU8,
}

const SCANS_UNKNOWN: u8 = 0;
const SCANS_ITERATIVE: u8 = 1;
const SCANS_PLAIN: u8 = 2;

/// Statements prepared on one connection, by their text: a statement run
/// again costs one round trip where an unprepared one costs two (parse
/// and describe, then bind and execute). Only fixed texts (no values
/// written into them) are kept, so their number is bounded.
#[derive(Default)]
pub struct Statements(HashMap<&'static str, Statement>);

impl Statements {
    /// The statement of `sql`, prepared on this connection the first time.
    pub fn prepared(
        &mut self,
        client: &impl GenericClient,
        sql: &'static str,
        context: &'static str,
    ) -> Result<Statement> {
        if let Some(statement) = self.0.get(sql) {
            return Ok(statement.clone());
        }
        let statement = wait(client.prepare(sql)).map_err(pg_err(context))?;
        self.0.insert(sql, statement.clone());
        Ok(statement)
    }
}

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

/// The connection string without its password, for messages and logs: a
/// URL's password in its user info or as a `password` query parameter (a
/// form libpq and tokio-postgres accept), or a key/value string's
/// `password=` value.
pub fn redact(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return redact_key_values(url);
    };
    if parsed.cannot_be_a_base() {
        return "the configured PostgreSQL URL".into();
    }
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    if parsed
        .query_pairs()
        .any(|(key, _)| key.eq_ignore_ascii_case("password"))
    {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(key, value)| {
                let value = if key.eq_ignore_ascii_case("password") {
                    "***".to_string()
                } else {
                    value.into_owned()
                };
                (key.into_owned(), value)
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.to_string()
}

/// A key/value connection string (`host=… password=…`) with the password's
/// value masked; anything that does not parse as one is not shown at all.
fn redact_key_values(text: &str) -> String {
    if !text.contains('=') {
        return "the configured PostgreSQL URL".into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.to_ascii_lowercase().find("password") {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let after_key = &from["password".len()..];
        let trimmed = after_key.trim_start();
        // Only a key (at the start or after whitespace) followed by `=`.
        let is_key = (before.is_empty() || before.ends_with(char::is_whitespace))
            && trimmed.starts_with('=');
        if !is_key {
            out.push_str("password");
            rest = after_key;
            continue;
        }
        let value = trimmed[1..].trim_start();
        // The value: a quoted string (backslash escapes) or up to whitespace.
        let end = if let Some(quoted) = value.strip_prefix('\'') {
            let mut escaped = false;
            quoted
                .char_indices()
                .find(|&(_, c)| {
                    let close = c == '\'' && !escaped;
                    escaped = c == '\\' && !escaped;
                    close
                })
                .map_or(value.len(), |(i, _)| i + 2)
        } else {
            value.find(char::is_whitespace).unwrap_or(value.len())
        };
        out.push_str("password=***");
        rest = &value[end..];
    }
    out.push_str(rest);
    out
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
        // A connection dropped silently (a NAT or firewall forgetting it)
        // is found within a minute, not the system's two hours: a watch's
        // claim lives on its connection's session.
        if config.get_keepalives_idle() >= Duration::from_secs(2 * 60 * 60) {
            config.keepalives_idle(Duration::from_secs(30));
            config.keepalives_interval(Duration::from_secs(10));
            config.keepalives_retries(3);
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

    /// As `new`, with every session read-only: the server refuses writes.
    pub fn read_only(url: &str) -> Result<Self> {
        let mut pool = Self::new(url)?;
        let options = match pool.config.get_options() {
            Some(given) => format!("{given} -c default_transaction_read_only=on"),
            None => "-c default_transaction_read_only=on".to_string(),
        };
        pool.config.options(options);
        Ok(pool)
    }

    /// The runtime the connections' tasks run on (for timers of callers
    /// outside it).
    pub fn handle(&self) -> tokio::runtime::Handle {
        self.runtime().handle().clone()
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
            while let Some((client, statements)) = idle.pop() {
                if !client.is_closed() {
                    found = Some((client, statements));
                    break;
                }
            }
            found
        };
        let (client, statements) = match reused {
            Some(reused) => reused,
            None => (self.connect()?, Statements::default()),
        };
        Ok(Pooled {
            pool: self,
            client: Some(client),
            statements,
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
    statements: Statements,
}

impl Pooled<'_> {
    pub fn client(&mut self) -> &mut Client {
        self.client.as_mut().expect("present until drop")
    }

    /// The connection with the statements prepared on it.
    pub fn split(&mut self) -> (&mut Client, &mut Statements) {
        (
            self.client.as_mut().expect("present until drop"),
            &mut self.statements,
        )
    }

    /// The connection, never to return to the pool: its session (and what
    /// the session holds, such as advisory locks) ends when it is dropped.
    pub fn detach(mut self) -> Client {
        self.client.take().expect("present until drop")
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
            idle.push((client, std::mem::take(&mut self.statements)));
        }
    }
}

#[cfg(test)]
mod redaction {
    use super::redact;

    #[test]
    fn passwords_are_masked_in_every_form_a_connection_string_takes() {
        for (given, shown) in [
            (
                "postgres://folio:s3cret@db:5432/folio",
                "postgres://folio:***@db:5432/folio",
            ),
            (
                "postgres://folio@db/folio?password=s3cret&sslmode=disable",
                "postgres://folio@db/folio?password=***&sslmode=disable",
            ),
            (
                "postgresql://db/folio?user=folio&PASSWORD=s3cret",
                "postgresql://db/folio?user=folio&PASSWORD=***",
            ),
            (
                "host=db user=folio password=s3cret dbname=folio",
                "host=db user=folio password=*** dbname=folio",
            ),
            (
                "host=db password = 's3 cr\\'et' dbname=folio",
                "host=db password=*** dbname=folio",
            ),
        ] {
            let redacted = redact(given);
            assert_eq!(redacted, shown);
            assert!(!redacted.contains("s3"), "{redacted}");
        }
        assert_eq!(redact("not a url"), "the configured PostgreSQL URL");
    }
}
