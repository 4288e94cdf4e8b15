//! The SQLite schema: the single source of truth. Derived indexes (tantivy,
//! usearch) are rebuilt from it; `changes` is the log they replay.

use rusqlite::Connection;

/// Bump when the schema changes; `migrate` refuses newer databases.
pub const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS libraries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    space TEXT NOT NULL,
    created_at TEXT NOT NULL,
    record_schema TEXT
);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    library_id INTEGER NOT NULL REFERENCES libraries(id),
    source TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    format TEXT NOT NULL,
    title TEXT,
    content_hash TEXT NOT NULL,
    metadata TEXT NOT NULL,
    page_count INTEGER,
    chunk_count INTEGER NOT NULL,
    char_count INTEGER NOT NULL,
    text TEXT NOT NULL,
    ingested_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_by_library ON documents(library_id, source);
CREATE INDEX IF NOT EXISTS documents_by_hash ON documents(library_id, content_hash);
CREATE TABLE IF NOT EXISTS chunks (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id TEXT NOT NULL REFERENCES documents(id),
    idx INTEGER NOT NULL,
    count INTEGER NOT NULL,
    text TEXT NOT NULL,
    context TEXT NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    page_start INTEGER,
    page_end INTEGER,
    section_path TEXT NOT NULL,
    section TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (document_id, idx)
);
CREATE TABLE IF NOT EXISTS changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    library_id INTEGER NOT NULL,
    document_id TEXT NOT NULL,
    removed_keys TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_by_library ON changes(library_id, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// Opens the connection in WAL mode with full fsync on commit, and creates
/// or checks the schema.
pub fn prepare(conn: &Connection) -> rusqlite::Result<Result<(), String>> {
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: a commit is on disk before it is acknowledged, in WAL mode too.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Ok(Err(format!(
            "the database has schema version {version}; this folio knows up to {SCHEMA_VERSION}"
        )));
    }
    if version < SCHEMA_VERSION {
        // Version 1 lacked the record schema column and the hash index.
        let upgrade = if version == 1 {
            "ALTER TABLE libraries ADD COLUMN record_schema TEXT;"
        } else {
            ""
        };
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {upgrade} {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))?;
    }
    Ok(Ok(()))
}
