//! The schema, created and upgraded by folio itself: versioned in
//! `folio_meta`, applied in one transaction under an advisory lock, so two
//! processes starting at once do it once and a database of a newer version
//! is refused before anything is touched.

use std::collections::BTreeSet;

use folio_lexical as analysis;
use folio_store::{Result, StoreError};
use tokio_postgres::{Client, GenericClient, Transaction};

use crate::blocks::{self, Pending};
use crate::lexical::Unit;
use crate::pool::{describe, pg_err, wait};

/// Bump when the schema changes; `migrate` refuses newer databases.
pub const SCHEMA_VERSION: i64 = 14;

/// The last version whose upgrade analyses every text anew: a database
/// below it is re-analysed (recorded one below it until that is done).
/// Version 12 packs postings in blocks, made from the stored text; 13
/// adds the parts of German compounds as terms; 14 analyses a chunk whose
/// text does not tell its language in its document's.
const REANALYSED_AT: i64 = 14;

/// The advisory lock key of migrations ("folio" in ASCII).
const MIGRATION_LOCK: i64 = 0x666f_6c69_6f00;

/// Version 2: the postings' primary key carries tf and norm, so BM25 reads
/// a term's postings from the index alone (an index-only scan, ~30× fewer
/// page reads than visiting the table); the chunks' (document, index) key
/// carries the chunk key, so a filter's documents give their chunks from
/// the index alone.
const SCHEMA_V2: &str = r#"
ALTER TABLE folio_postings DROP CONSTRAINT IF EXISTS folio_postings_pkey;
ALTER TABLE folio_postings ADD CONSTRAINT folio_postings_pkey
    PRIMARY KEY (library_id, term, chunk_key) INCLUDE (tf, norm);
ALTER TABLE folio_chunks DROP CONSTRAINT IF EXISTS folio_chunks_document_id_idx_key;
ALTER TABLE folio_chunks ADD CONSTRAINT folio_chunks_document_id_idx_key
    UNIQUE (document_id, idx) INCLUDE (key);
"#;

/// Versions 8, 9, 12, 13 and 14: postings made by an earlier analyser
/// (version 3's tokens of two or more word characters and Lucene's stop
/// words; version 8 analyses each text in its language and marks its
/// chunks' languages; version 9 adds identifiers as terms of their own;
/// version 13 the parts of German compounds; version 14 reads a chunk
/// that does not tell its language in its document's), or kept a row per posting (before
/// version 12), are made again from stored text, nothing
/// embedded again. The work is resumable:
/// it commits a batch at a time, each batch with its place in
/// `folio_meta.reanalysis` (`chunks:<last key>`, then `documents:<last
/// id>`), and the schema version is recorded only when the last batch is
/// done; a process that dies part way leaves the place, and the next one
/// to open the database goes on from there.
const REANALYSIS: &str = "reanalysis";

/// Where a re-analysis stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// Chunks after this key are still to do.
    Chunks(i64),
    /// Chunks are done; documents after this (block, id) are still to
    /// do, taken in block order so each block is written once.
    Documents(i64, String),
}

impl Place {
    fn parse(text: &str) -> Option<Place> {
        match text.split_once(':')? {
            ("chunks", key) => key.parse().ok().map(Place::Chunks),
            ("documents", place) => {
                let (block, id) = place.split_once(':')?;
                Some(Place::Documents(block.parse().ok()?, id.to_string()))
            }
            _ => None,
        }
    }

    fn record(&self) -> String {
        match self {
            Place::Chunks(key) => format!("chunks:{key}"),
            Place::Documents(block, id) => format!("documents:{block}:{id}"),
        }
    }
}

fn reanalysis_place(client: &impl GenericClient) -> Result<Option<Place>> {
    let context = "reading the re-analysis place";
    let row = wait(client.query_opt(
        "SELECT value FROM folio_meta WHERE key = $1",
        &[&REANALYSIS],
    ))
    .map_err(pg_err(context))?;
    match row {
        None => Ok(None),
        Some(row) => {
            let text: String = row.get(0);
            Place::parse(&text).map(Some).ok_or_else(|| {
                StoreError::io(context, format!("unreadable re-analysis place {text:?}"))
            })
        }
    }
}

fn record_place(tx: &Transaction<'_>, place: &Place) -> Result<()> {
    wait(tx.execute(
        "INSERT INTO folio_meta (key, value) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&REANALYSIS, &place.record()],
    ))
    .map_err(pg_err("recording the re-analysis place"))?;
    Ok(())
}

/// Starts a re-analysis inside the migration's transaction: the old
/// postings go and the place is set to the first chunk.
fn start_reanalysis(tx: &Transaction<'_>) -> Result<()> {
    wait(tx.batch_execute(
        "TRUNCATE folio_term_blocks; UPDATE folio_documents SET lexicon = '{}' WHERE lexicon <> '{}';",
    ))
    .map_err(pg_err("re-analysing postings"))?;
    record_place(tx, &Place::Chunks(i64::MIN))
}

/// Adds terms to the documents' lexicons (`(id, term)` pairs), and sets
/// their term counts where given.
fn extend_lexicons(
    tx: &Transaction<'_>,
    pairs: &BTreeSet<(String, String)>,
    counts: Option<(&[String], &[i32])>,
) -> Result<()> {
    let context = "re-analysing postings";
    let (ids, terms): (Vec<&str>, Vec<&str>) = pairs
        .iter()
        .map(|(id, term)| (id.as_str(), term.as_str()))
        .unzip();
    wait(tx.execute(
        "UPDATE folio_documents d
         SET lexicon = ARRAY(SELECT DISTINCT t FROM unnest(d.lexicon || u.terms) AS t ORDER BY t)
         FROM (SELECT id, array_agg(term) AS terms FROM unnest($1::text[], $2::text[]) AS x(id, term)
               GROUP BY id) u
         WHERE d.id = u.id",
        &[&ids, &terms],
    ))
    .map_err(pg_err(context))?;
    if let Some((ids, counts)) = counts {
        wait(tx.execute(
            "UPDATE folio_documents d SET terms = u.terms
             FROM unnest($1::text[], $2::int4[]) AS u(id, terms) WHERE d.id = u.id",
            &[&ids, &counts],
        ))
        .map_err(pg_err(context))?;
    }
    Ok(())
}

/// Runs the re-analysis from its recorded place to the end, one committed
/// transaction per batch under the migration lock (two processes opening
/// the database at once share the batches), then records the schema
/// version. `batch` is the number of chunks per transaction (documents: a
/// quarter of it). Returns the chunks and documents analysed.
fn run_reanalysis(client: &mut Client, batch: i64) -> Result<(usize, usize)> {
    let (mut chunks, mut documents) = (0usize, 0usize);
    loop {
        let tx = wait(client.transaction()).map_err(pg_err("re-analysing postings"))?;
        wait(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))
            .map_err(pg_err("re-analysing postings"))?;
        match reanalysis_place(&tx)? {
            None => return Ok((chunks, documents)),
            Some(Place::Chunks(after)) => {
                let (done, last) = reanalyse_chunks(&tx, after, batch)?;
                chunks += done;
                let next = match last {
                    Some(key) => Place::Chunks(key),
                    None => Place::Documents(i64::MIN, String::new()),
                };
                record_place(&tx, &next)?;
            }
            Some(Place::Documents(block, id)) => {
                let (done, last) = analyse_documents(&tx, (block, &id), (batch / 4).max(1))?;
                documents += done;
                match last {
                    Some((block, id)) => record_place(&tx, &Place::Documents(block, id))?,
                    None => {
                        wait(tx.execute("DELETE FROM folio_meta WHERE key = $1", &[&REANALYSIS]))
                            .map_err(pg_err("re-analysing postings"))?;
                        record_version(&tx)?;
                    }
                }
            }
        }
        wait(tx.commit()).map_err(pg_err("re-analysing postings"))?;
    }
}

/// A document's language tag (`d.metadata`'s `language`, when a string):
/// the language its texts that do not tell their own are read in.
const LANGUAGE_TAG: &str =
    "CASE jsonb_typeof(d.metadata -> 'language') WHEN 'string' THEN d.metadata ->> 'language' END";

/// Analyses the chunks after key `after`, at most `batch` of them: their
/// postings and term counts are written. Returns how many, and the last
/// key (None when none were left).
fn reanalyse_chunks(tx: &Transaction<'_>, after: i64, batch: i64) -> Result<(usize, Option<i64>)> {
    let context = "re-analysing postings";
    let rows = wait(tx.query(
        &format!(
            "SELECT c.key, c.library_id, c.document_id, c.context || c.text, {LANGUAGE_TAG}
             FROM folio_chunks c JOIN folio_documents d ON d.id = c.document_id
             WHERE c.key > $1 ORDER BY c.key LIMIT $2"
        ),
        &[&after, &batch],
    ))
    .map_err(pg_err(context))?;
    let Some(last) = rows.last() else {
        return Ok((0, None));
    };
    let last = last.get(0);
    let mut pending = Pending::default();
    let mut lexicons = BTreeSet::new();
    let (mut keys, mut counts) = (
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
    );
    for row in &rows {
        let key: i64 = row.get(0);
        let terms = analysis::chunk_term_counts(row.get::<_, &str>(3), row.get(4));
        pending.add(
            (row.get(1), Unit::Chunk, blocks::chunk_block(key)),
            key,
            &terms,
        );
        let document: &str = row.get(2);
        lexicons.extend(
            terms
                .0
                .iter()
                .map(|(t, _)| (document.to_string(), t.clone())),
        );
        keys.push(key);
        counts.push(terms.1 as i32);
    }
    pending.flush(tx)?;
    extend_lexicons(tx, &lexicons, None)?;
    wait(tx.execute(
        "UPDATE folio_chunks c SET terms = u.terms
         FROM unnest($1::int8[], $2::int4[]) AS u(key, terms) WHERE c.key = u.key",
        &[&keys, &counts],
    ))
    .map_err(pg_err(context))?;
    Ok((rows.len(), Some(last)))
}

/// Version 4: documents are scored as wholes too (`lexical_documents`):
/// each document's whole text (`analysis::document_text`) has postings of
/// its own, keyed by the document's key (its 16 hex digits as a number,
/// `('x' || id)::bit(64)::bigint` in SQL), and its term count.
const SCHEMA_V4: &str = r#"
ALTER TABLE folio_documents ADD COLUMN IF NOT EXISTS terms integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS folio_documents_by_terms ON folio_documents (library_id, terms);
CREATE TABLE IF NOT EXISTS folio_document_postings (
    library_id bigint NOT NULL,
    term text COLLATE "C" NOT NULL,
    document_key bigint NOT NULL,
    tf integer NOT NULL,
    norm integer NOT NULL,
    PRIMARY KEY (library_id, term, document_key) INCLUDE (tf, norm)
);
CREATE INDEX IF NOT EXISTS folio_document_postings_by_document
    ON folio_document_postings (document_key);
"#;

/// Version 6: entity mentions, written and removed with their document.
const SCHEMA_V6: &str = r#"
CREATE TABLE IF NOT EXISTS folio_entity_mentions (
    library_id bigint NOT NULL,
    document_id text COLLATE "C" NOT NULL,
    entity text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    chunk integer NOT NULL,
    start integer NOT NULL,
    stop integer NOT NULL
);
CREATE INDEX IF NOT EXISTS folio_entity_mentions_by_entity
    ON folio_entity_mentions (library_id, entity, document_id, chunk);
CREATE INDEX IF NOT EXISTS folio_entity_mentions_by_document
    ON folio_entity_mentions (document_id, chunk);
"#;

/// Version 7: declared entities, a JSON list per library.
const SCHEMA_V7: &str = r#"
ALTER TABLE folio_libraries ADD COLUMN IF NOT EXISTS declared_entities jsonb;
"#;

/// Version 10: source bytes kept with a document (an uploaded PDF's, whose
/// pages are shown as images), written and removed with it.
const SCHEMA_V10: &str = r#"
CREATE TABLE IF NOT EXISTS folio_originals (
    document_id text COLLATE "C" PRIMARY KEY,
    library_id bigint NOT NULL,
    bytes bytea NOT NULL
);
CREATE INDEX IF NOT EXISTS folio_originals_by_library ON folio_originals (library_id);
"#;

/// Version 11: a chunk's vector is kept inline in its row (storage MAIN,
/// as pgvector advises), where it went to the TOAST table (EXTERNAL, the
/// type's default) and each exact distance or rescoring fetched it from
/// there: a hybrid search under a 10 % filter at 100,000 chunks measured
/// 47 → 31 ms. Rows written before keep their vectors where they are until
/// written again. (Version 11 also kept each term's document frequency by
/// triggers on the postings tables; version 12's blocks count their own.)
const SCHEMA_V11: &str = r#"
ALTER TABLE folio_chunks ALTER COLUMN embedding SET STORAGE MAIN;
"#;

/// Version 12: postings packed in blocks (`blocks`), made again from the
/// stored text (the re-analysis); the tables of a row per posting, and
/// version 11's kept counts with their triggers, go.
fn schema_v12() -> String {
    format!(
        r#"
CREATE TABLE IF NOT EXISTS folio_term_blocks (
    library_id bigint NOT NULL,
    unit smallint NOT NULL,
    term text COLLATE "C" NOT NULL,
    block bigint NOT NULL,
    entries integer NOT NULL,
    postings bytea NOT NULL,
    PRIMARY KEY (library_id, unit, term, block) INCLUDE (entries)
) WITH (toast_tuple_target = 8160);
ALTER TABLE folio_term_blocks ALTER COLUMN postings SET STORAGE EXTERNAL;
ALTER TABLE folio_documents ADD COLUMN IF NOT EXISTS block bigint;
ALTER TABLE folio_documents ADD COLUMN IF NOT EXISTS lexicon text[] NOT NULL DEFAULT '{{}}';
UPDATE folio_documents d
   SET block = COALESCE((SELECT min(c.key) FROM folio_chunks c WHERE c.document_id = d.id), 0)
               >> {BLOCK_BITS}
 WHERE block IS NULL;
ALTER TABLE folio_documents ALTER COLUMN block SET NOT NULL;
DROP TABLE IF EXISTS folio_postings, folio_document_postings, folio_term_counts;
DROP FUNCTION IF EXISTS folio_count_added, folio_count_removed, folio_count_changed, folio_count_emptied;
"#,
        BLOCK_BITS = blocks::BLOCK_BITS
    )
}

/// Version 5: access keys, by name and by the key's SHA-256 (never the
/// key).
const SCHEMA_V5: &str = r#"
CREATE TABLE IF NOT EXISTS folio_access_keys (
    name text PRIMARY KEY,
    hash text NOT NULL UNIQUE,
    record jsonb NOT NULL,
    last_used_at text
);
"#;

/// Fills the whole-document postings (version 4's, made again for
/// versions 8 and 12) of the documents after `after` in (block, id) order,
/// at most `batch` of them. Returns how many, and the last (block, id)
/// (None when none were left).
fn analyse_documents(
    tx: &Transaction<'_>,
    (block, after): (i64, &str),
    batch: i64,
) -> Result<(usize, Option<(i64, String)>)> {
    let context = "analysing whole documents";
    let rows = wait(tx.query(
        &format!(
            "SELECT id, library_id, title, text, block, {LANGUAGE_TAG} FROM folio_documents d
             WHERE (block, id) > ($1, $2) ORDER BY block, id LIMIT $3"
        ),
        &[&block, &after, &batch],
    ))
    .map_err(pg_err(context))?;
    let Some(last) = rows.last() else {
        return Ok((0, None));
    };
    let last = (last.get(4), last.get(0));
    let mut pending = Pending::default();
    let mut lexicons = BTreeSet::new();
    let (mut ids, mut counts) = (
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
    );
    for row in &rows {
        let id: &str = row.get(0);
        let terms = analysis::document_term_counts(
            &analysis::document_text(row.get(2), row.get(3)),
            row.get(5),
        );
        if let Some(key) = analysis::document_key(id) {
            pending.add((row.get(1), Unit::Document, row.get(4)), key as i64, &terms);
        }
        lexicons.extend(terms.0.iter().map(|(t, _)| (id.to_string(), t.clone())));
        ids.push(id.to_string());
        counts.push(terms.1 as i32);
    }
    pending.flush(tx)?;
    extend_lexicons(tx, &lexicons, Some((&ids, &counts)))?;
    Ok((rows.len(), Some(last)))
}

fn record_version(tx: &Transaction<'_>) -> Result<()> {
    record_version_number(tx, SCHEMA_VERSION)
}

fn record_version_number(tx: &Transaction<'_>, version: i64) -> Result<()> {
    wait(tx.execute(
        "INSERT INTO folio_meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&version.to_string()],
    ))
    .map_err(pg_err("recording the schema version"))?;
    Ok(())
}

/// Version 1. Text that is sorted or prefix-matched is in the "C"
/// collation: byte order, as the embedded store sorts, and LIKE prefixes use
/// the btree indexes whatever the database's locale.
pub(crate) const SCHEMA_V1: &str = r#"
CREATE TABLE IF NOT EXISTS folio_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE SEQUENCE IF NOT EXISTS folio_generation;
CREATE TABLE IF NOT EXISTS folio_libraries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text COLLATE "C" NOT NULL UNIQUE,
    space jsonb NOT NULL,
    created_at text NOT NULL,
    record_schema jsonb
);
CREATE TABLE IF NOT EXISTS folio_documents (
    id text COLLATE "C" PRIMARY KEY,
    library_id bigint NOT NULL REFERENCES folio_libraries(id),
    source text COLLATE "C" NOT NULL,
    source_kind text NOT NULL,
    format text NOT NULL,
    title text,
    content_hash text NOT NULL,
    metadata jsonb NOT NULL,
    page_count integer,
    chunk_count integer NOT NULL,
    char_count bigint NOT NULL,
    text text NOT NULL,
    ingested_at text COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS folio_documents_by_source ON folio_documents (library_id, source, id);
CREATE INDEX IF NOT EXISTS folio_documents_by_hash ON folio_documents (library_id, content_hash);
CREATE INDEX IF NOT EXISTS folio_documents_by_format ON folio_documents (library_id, format);
CREATE INDEX IF NOT EXISTS folio_documents_metadata ON folio_documents USING gin (metadata jsonb_path_ops);
CREATE TABLE IF NOT EXISTS folio_chunks (
    key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    library_id bigint NOT NULL,
    document_id text COLLATE "C" NOT NULL REFERENCES folio_documents(id),
    idx integer NOT NULL,
    count integer NOT NULL,
    text text NOT NULL,
    context text NOT NULL,
    char_start bigint NOT NULL,
    char_end bigint NOT NULL,
    page_start integer,
    page_end integer,
    section_path jsonb NOT NULL,
    section text COLLATE "C" NOT NULL,
    token_count integer NOT NULL,
    terms integer NOT NULL,
    embedding vector NOT NULL,
    UNIQUE (document_id, idx)
);
CREATE INDEX IF NOT EXISTS folio_chunks_by_library ON folio_chunks (library_id, terms);
CREATE TABLE IF NOT EXISTS folio_postings (
    library_id bigint NOT NULL,
    term text COLLATE "C" NOT NULL,
    chunk_key bigint NOT NULL,
    tf integer NOT NULL,
    norm integer NOT NULL,
    PRIMARY KEY (library_id, term, chunk_key)
);
CREATE INDEX IF NOT EXISTS folio_postings_by_chunk ON folio_postings (chunk_key);
-- A JSON value as a number the way a filter compares numbers: numbers, and
-- strings that start with digits ("2019-05-01" compares as 2019).
CREATE OR REPLACE FUNCTION folio_num(v jsonb) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(v)
    WHEN 'number' THEN (v #>> '{}')::double precision
    WHEN 'string' THEN substring(v #>> '{}' from '^[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')::double precision
  END
$$;
-- A JSON field's items: a list's elements, or a scalar itself.
CREATE OR REPLACE FUNCTION folio_items(v jsonb) RETURNS SETOF jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT e FROM jsonb_array_elements(
    CASE WHEN jsonb_typeof(v) = 'array' THEN v ELSE jsonb_build_array(v) END) e
  WHERE v IS NOT NULL
$$;
"#;

/// The schema version recorded in the database (0 when it has none).
fn recorded_version(client: &impl GenericClient) -> Result<i64> {
    let exists: bool = wait(client.query_one("SELECT to_regclass('folio_meta') IS NOT NULL", &[]))
        .map_err(pg_err("reading the database schema"))?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(wait(client.query_opt(
        "SELECT value FROM folio_meta WHERE key = 'schema_version'",
        &[],
    ))
    .map_err(pg_err("reading the database schema"))?
    .and_then(|row| row.get::<_, String>(0).parse().ok())
    .unwrap_or(0))
}

/// For a read-only connection: checks that the database holds exactly this
/// folio's schema, changing nothing (a read-only folio never migrates).
pub fn check(client: &mut Client, display: &str) -> Result<()> {
    let version = recorded_version(&*client)?;
    match version.cmp(&SCHEMA_VERSION) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Greater => Err(StoreError::io(
            "database schema",
            format!(
                "the database on {display} has folio schema version {version}; this folio knows \
                 up to {SCHEMA_VERSION}: upgrade folio"
            ),
        )),
        std::cmp::Ordering::Less if version == 0 => Err(StoreError::io(
            "database schema",
            format!(
                "the database on {display} holds no folio schema, and a folio that only reads \
                 (a search, a --read-only server) creates nothing: run a command that writes \
                 once (`folio ingest`, or `folio serve` without --read-only)"
            ),
        )),
        std::cmp::Ordering::Less => Err(StoreError::io(
            "database schema",
            format!(
                "the database on {display} has folio schema version {version} and this folio \
                 needs {SCHEMA_VERSION}; a folio that only reads (a search, a --read-only \
                 server) does not migrate: run a command that writes once (`folio ingest`, or \
                 `folio serve` without --read-only) to upgrade it"
            ),
        )),
    }
}

/// Creates or upgrades the schema; refuses a database of a newer version
/// and explains a missing pgvector.
pub fn migrate(client: &mut Client, display: &str) -> Result<()> {
    migrate_in_batches(client, display, REANALYSIS_BATCH)
}

/// `migrate`, re-analysing `batch` chunks per transaction.
pub(crate) fn migrate_in_batches(client: &mut Client, display: &str, batch: i64) -> Result<()> {
    let tx = wait(client.transaction()).map_err(pg_err("preparing the database"))?;
    wait(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))
        .map_err(pg_err("preparing the database"))?;
    if let Err(e) = wait(tx.batch_execute("CREATE EXTENSION IF NOT EXISTS vector")) {
        return Err(StoreError::io(
            "preparing the database",
            format!(
                "the pgvector extension is missing on {display} and could not be created ({}); \
                 install pgvector (0.7 or newer) on the server, or have an administrator run \
                 CREATE EXTENSION vector in this database",
                describe(&e)
            ),
        ));
    }
    let version = recorded_version(&tx)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::io(
            "database schema",
            format!(
                "the database on {display} has folio schema version {version}; this folio knows \
                 up to {SCHEMA_VERSION}: upgrade folio"
            ),
        ));
    }
    if version < SCHEMA_VERSION {
        if version < 1 {
            wait(tx.batch_execute(SCHEMA_V1)).map_err(pg_err("creating the schema"))?;
        }
        if version < 2 {
            wait(tx.batch_execute(SCHEMA_V2))
                .map_err(pg_err("upgrading the schema to version 2"))?;
        }
        if version < 4 {
            wait(tx.batch_execute(SCHEMA_V4))
                .map_err(pg_err("upgrading the schema to version 4"))?;
        }
        if version < 5 {
            wait(tx.batch_execute(SCHEMA_V5))
                .map_err(pg_err("upgrading the schema to version 5"))?;
        }
        if version < 6 {
            wait(tx.batch_execute(SCHEMA_V6))
                .map_err(pg_err("upgrading the schema to version 6"))?;
        }
        if version < 7 {
            wait(tx.batch_execute(SCHEMA_V7))
                .map_err(pg_err("upgrading the schema to version 7"))?;
        }
        if version < 10 {
            wait(tx.batch_execute(SCHEMA_V10))
                .map_err(pg_err("upgrading the schema to version 10"))?;
        }
        if version < 11 {
            wait(tx.batch_execute(SCHEMA_V11))
                .map_err(pg_err("upgrading the schema to version 11"))?;
        }
        if version < 12 {
            wait(tx.batch_execute(&schema_v12()))
                .map_err(pg_err("upgrading the schema to version 12"))?;
        }
        // Versions 8, 9, 12, 13 and 14 analyse text anew (in its language;
        // with identifiers; into blocks; with compounds' parts; an undecided
        // chunk in its document's language): every posting of a database of an
        // earlier version is made again, in batches of their own after
        // this transaction (`run_reanalysis`); until the last one, the
        // recorded version stays one below. A re-analysis an earlier folio
        // left part way wrote the tables version 12 dropped: it starts
        // again.
        if (1..REANALYSED_AT).contains(&version) {
            if version < REANALYSED_AT - 1 || reanalysis_place(&tx)?.is_none() {
                start_reanalysis(&tx)?;
            }
            record_version_number(&tx, REANALYSED_AT - 1)?;
        } else {
            record_version(&tx)?;
        }
    }
    wait(tx.commit()).map_err(pg_err("preparing the database"))?;
    let (chunks, documents) = run_reanalysis(client, batch)?;
    if chunks + documents > 0 {
        tracing::info!(
            chunks,
            documents,
            "postings analysed again in each text's language"
        );
    }
    Ok(())
}

/// Chunks re-analysed per committed transaction.
const REANALYSIS_BATCH: i64 = 2_000;
