//! The SQLite schema: the single source of truth. Derived indexes (tantivy,
//! usearch) are rebuilt from it; `changes` is the log they replay.

use rusqlite::Connection;

/// Bump when the schema changes; `migrate` refuses newer databases.
pub const SCHEMA_VERSION: i64 = 8;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS libraries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    space TEXT NOT NULL,
    created_at TEXT NOT NULL,
    record_schema TEXT,
    -- Declared entities (version 7): a JSON list.
    declared_entities TEXT
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
-- Covers a library's document and chunk counts (version 4).
CREATE INDEX IF NOT EXISTS documents_chunk_counts ON documents(library_id, chunk_count);
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
-- Access keys (version 5): the key's SHA-256, never the key.
CREATE TABLE IF NOT EXISTS access_keys (
    name TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL,
    last_used_at TEXT
);
-- Each document's metadata values as json_each gives them (a list field's
-- items one by one; `whole` when the row is the field's entire value), so
-- a filter on metadata is an index lookup, not JSON parsed per document.
CREATE TABLE IF NOT EXISTS metadata_values (
    document_id TEXT NOT NULL,
    library_id INTEGER NOT NULL,
    field TEXT NOT NULL,
    value,
    type TEXT NOT NULL,
    whole INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS metadata_values_by_value
    ON metadata_values(library_id, field, value, type, whole, document_id);
CREATE INDEX IF NOT EXISTS metadata_values_by_document ON metadata_values(document_id);
-- Entity mentions (version 6): written and removed with their document.
CREATE TABLE IF NOT EXISTS entity_mentions (
    library_id INTEGER NOT NULL,
    document_id TEXT NOT NULL,
    entity TEXT NOT NULL,
    kind TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    start INTEGER NOT NULL,
    stop INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entity_mentions_by_entity
    ON entity_mentions(library_id, entity, document_id, chunk);
CREATE INDEX IF NOT EXISTS entity_mentions_by_document ON entity_mentions(document_id, chunk);
-- Source bytes kept with a document (version 8): an uploaded PDF's, whose
-- pages are shown as images. Written and removed with the document.
CREATE TABLE IF NOT EXISTS originals (
    document_id TEXT PRIMARY KEY,
    bytes BLOB NOT NULL
);
";

/// Fills `metadata_values` for the documents `selection` (a condition on
/// `d`, parameters numbered from 1) picks. Field names lose double quotes,
/// as filters' JSON paths do.
pub fn index_metadata_sql(selection: &str) -> String {
    format!(
        "INSERT INTO metadata_values (document_id, library_id, field, value, type, whole)
         SELECT d.id, d.library_id, replace(f.key, '\"', ''), f.value, f.type, 1
           FROM documents d, json_each(d.metadata) f
          WHERE {selection} AND f.type NOT IN ('array', 'object')
         UNION ALL
         SELECT d.id, d.library_id, replace(f.key, '\"', ''), e.value, e.type, 0
           FROM documents d, json_each(d.metadata) f, json_each(f.value) e
          WHERE {selection} AND f.type IN ('array', 'object')"
    )
}

/// The page cache of a connection, in KiB (see `prepare`).
const PAGE_CACHE_KIB: i64 = 32 * 1024;

const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Puts the database in WAL mode. On a new database that is a write, and
/// when two connections race for it SQLite answers one "busy" at once
/// rather than wait (each would wait on the other): that one retries, for
/// as long as the busy timeout.
fn wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            done => return done,
        }
    }
}

/// Opens the connection in WAL mode with full fsync on commit, and creates
/// or checks the schema.
pub fn prepare(conn: &Connection) -> rusqlite::Result<Result<(), String>> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    wal(conn)?;
    // FULL: a commit is on disk before it is acknowledged, in WAL mode too.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // A page cache of PAGE_CACHE_KIB instead of SQLite's 2 MB: a new
    // filter walks the metadata and chunk indexes of the documents it
    // selects, and with the default cache each of those pages came back
    // through a `pread` and a copy (a fifth of a filtered search at
    // 100,000 chunks). Pages are taken as read, so a small library's cache
    // stays small.
    conn.pragma_update(None, "cache_size", -PAGE_CACHE_KIB)?;
    // Room for every statement folio caches (about 30): rusqlite keeps 16,
    // and beyond that a search's statements pushed each other out and were
    // parsed again.
    conn.set_prepared_statement_cache_capacity(64);
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Ok(Err(format!(
            "the database has schema version {version}; this folio knows up to {SCHEMA_VERSION}"
        )));
    }
    if version < SCHEMA_VERSION {
        // Version 1 lacked the record schema column and the hash index;
        // versions before 7 the declared entities.
        let mut upgrade = String::new();
        if version == 1 {
            upgrade.push_str("ALTER TABLE libraries ADD COLUMN record_schema TEXT;");
        }
        let has_declared: bool = conn.query_row(
            "SELECT count(*) > 0 FROM pragma_table_info('libraries') WHERE name = 'declared_entities'",
            [],
            |r| r.get(0),
        )?;
        if version >= 1 && !has_declared {
            upgrade.push_str("ALTER TABLE libraries ADD COLUMN declared_entities TEXT;");
        }
        // Versions 1 and 2 lacked the metadata index: fill it from every
        // document. (Version 3 lacked only the counts' index.)
        let fill = if (1..3).contains(&version) {
            format!("{};", index_metadata_sql("1"))
        } else {
            String::new()
        };
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {upgrade} {SCHEMA} {fill} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))?;
    }
    Ok(Ok(()))
}
