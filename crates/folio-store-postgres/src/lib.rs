//! folio's PostgreSQL backend: one database shared by every folio process
//! of a team, on one machine or many. PostgreSQL is the single source of
//! truth and every index is maintained in the document's own transaction:
//!
//! - documents and chunks in tables, metadata as `jsonb` with a GIN index;
//! - vectors in pgvector columns, one partial HNSW index per library (its
//!   dimension fixed by the library's embedding space), exact search for
//!   small libraries and small filtered sets;
//! - BM25 postings (term, chunk, frequency, length) in a table, written
//!   with the chunk and scored in SQL with the embedded store's analyser and
//!   formula, so the scores agree.
//!
//! A write is one transaction: a document's rows, vectors and postings land
//! together or not at all. Writers of the same document serialise on an
//! advisory lock keyed by its id, so dedup is race-free across processes.
//! No owner process, no lock file: PostgreSQL's MVCC does the rest.

mod blocks;
mod filter;
mod lexical;
mod pool;
mod schema;
mod vector;

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::Ordering;

use folio_core::filter::join_section_path;
use folio_core::{
    Chunk, ChunkId, Document, DocumentId, DocumentSummary, EmbeddingSpace, Filter, LibraryName,
    NeighbourOrder, RecordSchema, SourceKind,
};
use folio_lexical as analysis;
use folio_store::facets::Aggregator;
use folio_store::{
    Bm25, ChunkWithDocument, Declared, EntityCount, EntityMention, EntityQuery, FacetRequest,
    Facets, Hit, Integrity, KeyRecord, LibraryInfo, LibraryStats, MentionHit, NewDocument,
    PutOutcome, QueryLanguage, Related, Result, Store, StoreError, document_column, metadata_key,
};
use serde_json::{Map, Value};
use tokio_postgres::{GenericClient, Row};

use crate::filter::{Query, has_chunk_conditions, where_clause};
use crate::lexical::Unit;
pub use crate::pool::redact;
use crate::pool::{Pool, Statements, pg_err, wait};
pub use crate::schema::SCHEMA_VERSION;
use crate::vector::Vector;

/// How many lexical searches of this process the candidate path answered,
/// and how many term postings came from the in-memory cache: which paths
/// ran, for tests at the production thresholds.
#[doc(hidden)]
pub fn lexical_paths() -> (usize, usize) {
    (
        lexical::CANDIDATE_ANSWERS.load(Ordering::Relaxed),
        lexical::CACHED_POSTINGS_READ.load(Ordering::Relaxed),
    )
}

/// Libraries (or filtered sets) up to this many chunks are searched exactly.
pub const EXACT_MAX: i64 = 20_000;

/// pgvector's HNSW indexes `vector` columns of up to 2,000 dimensions;
/// larger spaces are searched exactly.
const HNSW_MAX_DIM: u32 = 2_000;

const DOCUMENT_COLUMNS: &str = "d.id, l.name, d.source, d.source_kind, d.format, d.title, d.content_hash, \
     d.metadata, d.page_count, d.chunk_count, d.char_count, d.ingested_at";
const DOCUMENT_COLUMN_COUNT: usize = 12;
const CHUNK_COLUMNS: &str = "c.document_id, c.idx, c.count, c.text, c.context, c.char_start, c.char_end, \
     c.page_start, c.page_end, c.section_path, c.token_count";
const CHUNK_COLUMN_COUNT: usize = 11;

pub struct PostgresStore {
    pool: Pool,
    statistics: std::sync::Mutex<lexical::Statistics>,
    /// Library rows of one write generation: a search asks for its
    /// library's id, space and counts several times, and counting a
    /// library's documents is itself a scan.
    libraries: std::sync::Mutex<(i64, HashMap<LibraryName, LibraryRow>)>,
}

#[derive(Clone)]
struct LibraryRow {
    id: i64,
    info: LibraryInfo,
}

fn corrupt(what: &str) -> StoreError {
    StoreError::io("reading PostgreSQL rows", format!("invalid {what}"))
}

fn row_err(e: tokio_postgres::Error) -> StoreError {
    StoreError::io("reading PostgreSQL rows", pool::describe(&e))
}

/// PostgreSQL text holds no NUL characters; extracted text sometimes does.
fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        text.replace('\0', "\u{FFFD}").into()
    } else {
        text.into()
    }
}

fn clean_json(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(clean(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(clean_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (clean(k).into_owned(), clean_json(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn summary_at(r: &Row, at: usize) -> Result<DocumentSummary> {
    let get_text = |i: usize| r.try_get::<_, String>(at + i).map_err(row_err);
    let metadata: Value = r.try_get(at + 7).map_err(row_err)?;
    Ok(DocumentSummary {
        id: DocumentId::parse(&get_text(0)?).ok_or_else(|| corrupt("document id"))?,
        library: LibraryName::new(get_text(1)?).map_err(|_| corrupt("library name"))?,
        source: get_text(2)?,
        source_kind: SourceKind::parse(&get_text(3)?).ok_or_else(|| corrupt("source kind"))?,
        format: get_text(4)?,
        title: r.try_get(at + 5).map_err(row_err)?,
        content_hash: get_text(6)?,
        metadata: match metadata {
            Value::Object(map) => map,
            _ => return Err(corrupt("metadata")),
        },
        page_count: r
            .try_get::<_, Option<i32>>(at + 8)
            .map_err(row_err)?
            .map(|n| n as u32),
        chunk_count: r.try_get::<_, i32>(at + 9).map_err(row_err)? as u32,
        char_count: r.try_get::<_, i64>(at + 10).map_err(row_err)? as u64,
        ingested_at: get_text(11)?,
    })
}

fn chunk_at(r: &Row, at: usize) -> Result<Chunk> {
    let document: String = r.try_get(at).map_err(row_err)?;
    let document = DocumentId::parse(&document).ok_or_else(|| corrupt("document id"))?;
    let index = r.try_get::<_, i32>(at + 1).map_err(row_err)? as u32;
    let path: Value = r.try_get(at + 9).map_err(row_err)?;
    let optional = |i: usize| -> Result<Option<u32>> {
        Ok(r.try_get::<_, Option<i32>>(at + i)
            .map_err(row_err)?
            .map(|n| n as u32))
    };
    Ok(Chunk {
        id: ChunkId::new(&document, index),
        document_id: document,
        index,
        count: r.try_get::<_, i32>(at + 2).map_err(row_err)? as u32,
        text: r.try_get(at + 3).map_err(row_err)?,
        context: r.try_get(at + 4).map_err(row_err)?,
        char_start: r.try_get::<_, i64>(at + 5).map_err(row_err)? as u64,
        char_end: r.try_get::<_, i64>(at + 6).map_err(row_err)? as u64,
        page_start: optional(7)?,
        page_end: optional(8)?,
        section_path: serde_json::from_value(path).map_err(|_| corrupt("section path"))?,
        token_count: r.try_get::<_, i32>(at + 10).map_err(row_err)? as u32,
    })
}

/// The advisory-lock key of a document id (the first 8 bytes of its hash).
fn lock_key(id: &DocumentId) -> i64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(id.as_str().as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

fn hnsw_index(library_id: i64) -> String {
    format!("folio_hnsw_{library_id}")
}

/// Creates the library's HNSW index over vectors of `dim` dimensions.
fn create_hnsw(client: &impl GenericClient, library_id: i64, dim: u32) -> Result<()> {
    if dim == 0 || dim > HNSW_MAX_DIM {
        return Ok(());
    }
    let sql = format!(
        "CREATE INDEX IF NOT EXISTS {} ON folio_chunks USING hnsw ((embedding::vector({dim})) vector_cosine_ops) \
         WHERE library_id = {library_id}",
        hnsw_index(library_id)
    );
    wait(client.batch_execute(&sql)).map_err(pg_err("creating a vector index"))
}

/// Reads the write generation.
const GENERATION: &str = "SELECT last_value FROM folio_generation";

/// Moves the write generation (read by caches in every process).
fn bump_generation(client: &impl GenericClient) -> Result<()> {
    wait(client.execute("SELECT nextval('folio_generation')", &[]))
        .map_err(pg_err("moving the write generation"))?;
    Ok(())
}

/// The write generation now. A write moves it before and again after its
/// commit, so a value cached under one generation is never served after a
/// commit that could change it.
pub(crate) fn generation(client: &impl GenericClient) -> Result<i64> {
    Ok(wait(client.query_one(GENERATION, &[]))
        .map_err(pg_err("reading the write generation"))?
        .get(0))
}

fn library_row(client: &impl GenericClient, name: &LibraryName) -> Result<LibraryRow> {
    let row = wait(client.query_opt(
        "SELECT l.id, l.space, l.created_at,
                (SELECT count(*) FROM folio_documents d WHERE d.library_id = l.id),
                (SELECT COALESCE(sum(chunk_count), 0)::bigint FROM folio_documents d WHERE d.library_id = l.id)
         FROM folio_libraries l WHERE l.name = $1",
        &[&name.as_str()],
    ))
    .map_err(pg_err("reading a library"))?
    .ok_or_else(|| StoreError::LibraryNotFound(name.to_string()))?;
    let space: Value = row.try_get(1).map_err(row_err)?;
    let space: EmbeddingSpace =
        serde_json::from_value(space).map_err(|e| StoreError::io("library embedding space", e))?;
    Ok(LibraryRow {
        id: row.try_get(0).map_err(row_err)?,
        info: LibraryInfo {
            name: name.clone(),
            space,
            created_at: row.try_get(2).map_err(row_err)?,
            document_count: row.try_get::<_, i64>(3).map_err(row_err)? as u64,
            chunk_count: row.try_get::<_, i64>(4).map_err(row_err)? as u64,
        },
    })
}

fn library_id(client: &impl GenericClient, name: &LibraryName) -> Result<i64> {
    wait(client.query_opt(
        "SELECT id FROM folio_libraries WHERE name = $1",
        &[&name.as_str()],
    ))
    .map_err(pg_err("reading a library"))?
    .map(|r| r.get(0))
    .ok_or_else(|| StoreError::LibraryNotFound(name.to_string()))
}

/// Deletes a document's chunks and row, and gathers the removal of its
/// postings (from its blocks, by the terms it keeps) into `pending`.
fn remove_document_rows(
    client: &impl GenericClient,
    id: &str,
    pending: &mut blocks::Pending,
) -> Result<()> {
    let context = "deleting a document";
    if let Some(row) = wait(client.query_opt(
        "SELECT library_id, block, lexicon FROM folio_documents WHERE id = $1",
        &[&id],
    ))
    .map_err(pg_err(context))?
    {
        let (library_id, block, lexicon): (i64, i64, Vec<String>) =
            (row.get(0), row.get(1), row.get(2));
        if let Some(key) = analysis::document_key(id) {
            let keys = std::collections::BTreeSet::from([key as i64]);
            pending.remove((library_id, Unit::Document, block), &keys, &lexicon);
        }
        // A document's chunks share one block or a few.
        let mut chunks: std::collections::BTreeMap<i64, std::collections::BTreeSet<i64>> =
            Default::default();
        for row in wait(client.query(
            "SELECT key FROM folio_chunks WHERE document_id = $1",
            &[&id],
        ))
        .map_err(pg_err(context))?
        {
            let key: i64 = row.get(0);
            chunks
                .entry(blocks::chunk_block(key))
                .or_default()
                .insert(key);
        }
        for (block, keys) in chunks {
            pending.remove((library_id, Unit::Chunk, block), &keys, &lexicon);
        }
    }
    for sql in [
        "DELETE FROM folio_chunks WHERE document_id = $1",
        "DELETE FROM folio_entity_mentions WHERE document_id = $1",
        "DELETE FROM folio_originals WHERE document_id = $1",
        "DELETE FROM folio_documents WHERE id = $1",
    ] {
        wait(client.execute(sql, &[&id])).map_err(pg_err(context))?;
    }
    Ok(())
}

/// Writes one document's row and chunks (with vectors), and adds its
/// postings to those its batch writes at its end (`pending`).
fn insert_document(
    client: &impl GenericClient,
    library_id: i64,
    new: &NewDocument,
    pending: &mut blocks::Pending,
) -> Result<()> {
    let d = &new.document;
    let metadata = clean_json(&Value::Object(d.metadata.clone()));
    let title = d.title.as_deref().map(clean);
    let text = clean(&d.text);
    let language = d.metadata.get("language").and_then(Value::as_str);
    let whole =
        analysis::document_term_counts(&analysis::document_text(title.as_deref(), &text), language);
    let chunks = &new.chunks;
    let analysed: Vec<(Vec<(String, u32)>, usize)> = chunks
        .iter()
        .map(|c| analysis::chunk_term_counts(&format!("{}{}", c.context, c.text), language))
        .collect();
    let lexicon: Vec<&str> = whole
        .0
        .iter()
        .chain(analysed.iter().flat_map(|(terms, _)| terms))
        .map(|(term, _)| term.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let block: i64 = wait(client.query_one(
        &format!(
            "INSERT INTO folio_documents (id, library_id, source, source_kind, format, title, content_hash,
                                          metadata, page_count, chunk_count, char_count, text, ingested_at,
                                          terms, lexicon, block)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, {})
             RETURNING block",
            blocks::new_document_block()
        ),
        &[
            &d.id.as_str(),
            &library_id,
            &clean(&d.source).as_ref(),
            &d.source_kind.as_str(),
            &d.format,
            &title.as_deref(),
            &d.content_hash,
            &metadata,
            &d.page_count.map(|n| n as i32),
            &(d.chunk_count as i32),
            &(d.text.chars().count() as i64),
            &text.as_ref(),
            &d.ingested_at,
            &(whole.1 as i32),
            &lexicon,
        ],
    ))
    .map_err(pg_err("writing a document"))?
    .get(0);

    let texts: Vec<String> = chunks.iter().map(|c| clean(&c.text).into_owned()).collect();
    let contexts: Vec<String> = chunks
        .iter()
        .map(|c| clean(&c.context).into_owned())
        .collect();
    let idx: Vec<i32> = chunks.iter().map(|c| c.index as i32).collect();
    let count: Vec<i32> = chunks.iter().map(|c| c.count as i32).collect();
    let char_start: Vec<i64> = chunks.iter().map(|c| c.char_start as i64).collect();
    let char_end: Vec<i64> = chunks.iter().map(|c| c.char_end as i64).collect();
    let page_start: Vec<Option<i32>> = chunks
        .iter()
        .map(|c| c.page_start.map(|n| n as i32))
        .collect();
    let page_end: Vec<Option<i32>> = chunks
        .iter()
        .map(|c| c.page_end.map(|n| n as i32))
        .collect();
    let paths: Vec<Value> = chunks
        .iter()
        .map(|c| clean_json(&Value::from(c.section_path.clone())))
        .collect();
    let sections: Vec<String> = chunks
        .iter()
        .map(|c| clean(&join_section_path(&c.section_path)).into_owned())
        .collect();
    let tokens: Vec<i32> = chunks.iter().map(|c| c.token_count as i32).collect();
    let terms: Vec<i32> = analysed.iter().map(|(_, length)| *length as i32).collect();
    let vectors: Vec<Vector> = new.vectors.iter().map(|v| Vector(v.clone())).collect();
    let keys = wait(client.query(
        "INSERT INTO folio_chunks (library_id, document_id, idx, count, text, context, char_start, char_end,
                                   page_start, page_end, section_path, section, token_count, terms, embedding)
         SELECT $1::bigint, $2::text, u.* FROM unnest($3::int4[], $4::int4[], $5::text[], $6::text[],
                $7::int8[], $8::int8[], $9::int4[], $10::int4[], $11::jsonb[], $12::text[], $13::int4[],
                $14::int4[], $15::vector[]) AS u
         RETURNING key, idx",
        &[
            &library_id,
            &d.id.as_str(),
            &idx,
            &count,
            &texts,
            &contexts,
            &char_start,
            &char_end,
            &page_start,
            &page_end,
            &paths,
            &sections,
            &tokens,
            &terms,
            &vectors,
        ],
    ))
    .map_err(pg_err("writing chunks"))?;

    let mut key_of = vec![0i64; chunks.len()];
    for row in keys {
        let index = row.get::<_, i32>(1) as usize;
        if let Some(slot) = key_of.get_mut(index) {
            *slot = row.get(0);
        }
    }
    for (chunk_terms, key) in analysed.iter().zip(&key_of) {
        pending.add(
            (library_id, Unit::Chunk, blocks::chunk_block(*key)),
            *key,
            chunk_terms,
        );
    }
    if let Some(key) = analysis::document_key(d.id.as_str()) {
        pending.add((library_id, Unit::Document, block), key as i64, &whole);
    }
    insert_mentions(client, library_id, d.id.as_str(), &new.mentions)
}

/// Writes a document's entity mentions, in one statement.
fn insert_mentions(
    client: &impl GenericClient,
    library_id: i64,
    document: &str,
    mentions: &[EntityMention],
) -> Result<()> {
    if mentions.is_empty() {
        return Ok(());
    }
    let entities: Vec<&str> = mentions.iter().map(|m| m.entity.as_str()).collect();
    let kinds: Vec<&str> = mentions.iter().map(|m| m.kind.as_str()).collect();
    let chunks: Vec<i32> = mentions.iter().map(|m| m.chunk as i32).collect();
    let starts: Vec<i32> = mentions.iter().map(|m| m.start as i32).collect();
    let stops: Vec<i32> = mentions.iter().map(|m| m.end as i32).collect();
    wait(client.execute(
        "INSERT INTO folio_entity_mentions (library_id, document_id, entity, kind, chunk, start, stop)
         SELECT $1::bigint, $2::text, u.* FROM unnest($3::text[], $4::text[], $5::int4[], $6::int4[],
                $7::int4[]) AS u",
        &[
            &library_id,
            &document,
            &entities,
            &kinds,
            &chunks,
            &starts,
            &stops,
        ],
    ))
    .map_err(pg_err("writing entity mentions"))?;
    Ok(())
}

/// One dense search of a library: its query vector, filter and depth.
#[derive(Clone, Copy)]
struct DenseSearch<'a> {
    row: &'a LibraryRow,
    vector: &'a [f32],
    filter: &'a Filter,
    k: usize,
}

/// A lateral join from the documents `d` to their chunks' keys and
/// `distance` to the query: the filter's documents first, then each one's
/// chunks through the (document, index) key, where their rows lie together
/// (a join read every chunk of the library: a 10 % filter of 100,000
/// chunks, 14–27 → 9 ms), with only the columns the search returns.
fn chunks_of_documents(distance: &str, library_id: i64) -> String {
    format!(
        "CROSS JOIN LATERAL (SELECT c.document_id, c.idx, c.key, {distance} AS distance
                            FROM folio_chunks c
                            WHERE c.document_id = d.id AND c.library_id = {library_id} OFFSET 0) c"
    )
}

/// Resolves (key, score) rows of a search to hits, best first.
fn hits_from(rows: Vec<Row>) -> Result<Vec<Hit>> {
    let mut hits = Vec::with_capacity(rows.len());
    for row in rows {
        let document: String = row.try_get(0).map_err(row_err)?;
        let index: i32 = row.try_get(1).map_err(row_err)?;
        let score: f64 = row.try_get(2).map_err(row_err)?;
        if let Some(document) = DocumentId::parse(&document) {
            hits.push(Hit {
                chunk: ChunkId::new(&document, index as u32),
                score: score as f32,
            });
        }
    }
    Ok(hits)
}

/// A field as an SQL expression over `d` (jsonb for metadata keys).
fn field_expr(q: &mut Query, field: &str) -> String {
    match document_column(field) {
        Some(col) => col.to_string(),
        None => format!(
            "NULLIF(d.metadata -> {}::text, 'null'::jsonb)",
            q.bind(metadata_key(field).to_string())
        ),
    }
}

impl PostgresStore {
    /// Connects to the server at `url` (`postgres://user:password@host/db`),
    /// creating or upgrading folio's schema. Errors name the server without
    /// its password.
    pub fn connect(url: &str) -> Result<Self> {
        let pool = Pool::new(url)?;
        {
            let mut conn = pool.get()?;
            schema::migrate(conn.client(), &pool.display)?;
        }
        pool.clear_idle();
        Ok(PostgresStore {
            pool,
            statistics: Default::default(),
            libraries: Default::default(),
        })
    }

    /// Connects to the server at `url` for reading only: nothing is created
    /// or migrated, and every session runs with
    /// `default_transaction_read_only`, so the server itself refuses any
    /// write. The database must already hold this folio's schema version
    /// (a writable folio creates or upgrades it).
    pub fn connect_read_only(url: &str) -> Result<Self> {
        let pool = Pool::read_only(url)?;
        {
            let mut conn = pool.get()?;
            schema::check(conn.client(), &pool.display)?;
        }
        Ok(PostgresStore {
            pool,
            statistics: Default::default(),
            libraries: Default::default(),
        })
    }

    /// The server as messages may name it (no password).
    pub fn display(&self) -> &str {
        &self.pool.display
    }

    /// The write generation, read before a search's snapshot (see
    /// `lexical::statistics`), and the library's id.
    fn generation_and_library(
        &self,
        client: &impl GenericClient,
        statements: &mut Statements,
        library: &LibraryName,
    ) -> Result<(i64, i64)> {
        let context = "reading the write generation";
        let generation: i64 =
            wait(client.query_one(&statements.prepared(client, GENERATION, context)?, &[]))
                .map_err(pg_err(context))?
                .get(0);
        Ok((
            generation,
            self.library_row_at(client, library, generation)?.id,
        ))
    }

    /// The library's row (as `library_row`), from the cache when nothing
    /// was written since it was read.
    fn library_row(&self, client: &impl GenericClient, name: &LibraryName) -> Result<LibraryRow> {
        self.library_row_at(client, name, generation(client)?)
    }

    /// `library_row` with the generation already read.
    fn library_row_at(
        &self,
        client: &impl GenericClient,
        name: &LibraryName,
        now: i64,
    ) -> Result<LibraryRow> {
        {
            let cache = self.libraries.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(row) = cache.1.get(name).filter(|_| cache.0 == now) {
                return Ok(row.clone());
            }
        }
        let row = library_row(client, name)?;
        let mut cache = self.libraries.lock().unwrap_or_else(|p| p.into_inner());
        if cache.0 != now {
            *cache = (now, HashMap::new());
        }
        cache.1.insert(name.clone(), row.clone());
        Ok(row)
    }

    /// BM25 over chunks or whole documents, statistics and postings read
    /// from one snapshot.
    fn lexical_search(
        &self,
        unit: lexical::Unit,
        library: &LibraryName,
        query: &str,
        filter: &Filter,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<Hit>> {
        self.in_snapshot(
            library,
            "lexical search",
            |tx, statements, generation, library_id| {
                let search = lexical::Search {
                    cache: &self.statistics,
                    statements: std::cell::RefCell::new(statements),
                    generation,
                    library_id,
                    query,
                    filter,
                    k,
                    bm25,
                };
                match unit {
                    lexical::Unit::Chunk => lexical::search(tx, &search),
                    lexical::Unit::Document => lexical::search_documents(tx, &search),
                }
            },
        )
    }

    /// Runs `work` in one read-only snapshot (repeatable read) with the
    /// connection's prepared statements, the write generation read just
    /// before the snapshot was taken, and the library's id.
    fn in_snapshot<T>(
        &self,
        library: &LibraryName,
        context: &'static str,
        work: impl FnOnce(&tokio_postgres::Transaction<'_>, &mut Statements, i64, i64) -> Result<T>,
    ) -> Result<T> {
        let mut conn = self.pool.get()?;
        let (client, statements) = conn.split();
        let (generation, library_id) =
            self.generation_and_library(&*client, statements, library)?;
        let tx = wait(
            client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start(),
        )
        .map_err(pg_err(context))?;
        let value = work(&tx, statements, generation, library_id)?;
        wait(tx.commit()).map_err(pg_err(context))?;
        Ok(value)
    }

    fn dense_scan(
        &self,
        client: &mut tokio_postgres::Client,
        search: &DenseSearch<'_>,
        exact: bool,
    ) -> Result<Vec<Hit>> {
        let DenseSearch {
            row,
            vector,
            filter,
            k,
        } = *search;
        let dim = row.info.space.dim;
        let mut q = Query::default();
        let v = q.bind(Vector(vector.to_vec()));
        let limit = q.bind(k as i64);
        let distance = if exact || dim > HNSW_MAX_DIM {
            format!("(c.embedding <=> {v})")
        } else {
            format!("(c.embedding::vector({dim}) <=> {v}::vector({dim}))")
        };
        let id = row.id;
        let sql = if filter.is_empty() {
            format!(
                "SELECT c.document_id, c.idx, (1 - {distance})::float8 AS score FROM folio_chunks c
                 WHERE c.library_id = {id} ORDER BY {distance}, c.key LIMIT {limit}"
            )
        } else if exact && !has_chunk_conditions(filter) {
            let clause = where_clause(filter, &mut q);
            format!(
                "SELECT c.document_id, c.idx, (1 - c.distance)::float8 AS score FROM folio_documents d
                 {} WHERE d.library_id = {id}{clause} ORDER BY c.distance, c.key LIMIT {limit}",
                chunks_of_documents(&distance, id)
            )
        } else if exact {
            // As `chunks_of_documents`, with every column of the chunk for
            // the filter's conditions on chunks.
            let clause = where_clause(filter, &mut q);
            format!(
                "SELECT c.document_id, c.idx, (1 - {distance})::float8 AS score FROM folio_documents d
                 CROSS JOIN LATERAL (SELECT * FROM folio_chunks c WHERE c.document_id = d.id OFFSET 0) c
                 WHERE d.library_id = {id} AND c.library_id = {id}{clause}
                 ORDER BY {distance}, c.key LIMIT {limit}"
            )
        } else {
            let clause = where_clause(filter, &mut q);
            format!(
                "SELECT c.document_id, c.idx, (1 - {distance})::float8 AS score FROM folio_chunks c
                 JOIN folio_documents d ON d.id = c.document_id
                 WHERE c.library_id = {id}{clause} ORDER BY {distance}, c.key LIMIT {limit}"
            )
        };
        let rows = wait(client.query(&sql, &q.refs())).map_err(pg_err("dense search"))?;
        let mut hits = hits_from(rows)?;
        // An iterative index scan returns nearly, not strictly, in order.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }

    /// The exact scan of a filter on documents alone, in one statement with
    /// the count that decides it: None when the filter's documents hold
    /// more than `EXACT_MAX` chunks (the index is walked instead).
    fn dense_exact_within(
        &self,
        client: &mut tokio_postgres::Client,
        search: &DenseSearch<'_>,
    ) -> Result<Option<Vec<Hit>>> {
        let DenseSearch {
            row,
            vector,
            filter,
            k,
        } = *search;
        let mut q = Query::default();
        let v = q.bind(Vector(vector.to_vec()));
        let limit = q.bind(k as i64);
        let id = row.id;
        let clause = where_clause(filter, &mut q);
        let sql = format!(
            "WITH d AS MATERIALIZED (SELECT d.id, d.chunk_count FROM folio_documents d
                                     WHERE d.library_id = {id}{clause}),
                  total AS (SELECT COALESCE(sum(chunk_count), 0) AS n FROM d)
             SELECT NULL::text, NULL::integer, NULL::float8 FROM total WHERE n > {EXACT_MAX}
             UNION ALL
             (SELECT c.document_id, c.idx, (1 - c.distance)::float8 FROM d {}
              WHERE (SELECT n FROM total) <= {EXACT_MAX} ORDER BY c.distance, c.key LIMIT {limit})",
            chunks_of_documents(&format!("(c.embedding <=> {v})"), id)
        );
        let rows = wait(client.query(&sql, &q.refs())).map_err(pg_err("dense search"))?;
        if rows
            .first()
            .is_some_and(|first| first.get::<_, Option<&str>>(0).is_none())
        {
            return Ok(None);
        }
        hits_from(rows).map(Some)
    }

    fn document_filter(library_id: i64, filter: &Filter, q: &mut Query) -> Result<String> {
        if has_chunk_conditions(filter) {
            return Err(StoreError::InvalidArgument(
                folio_store::CHUNK_CONDITIONS.into(),
            ));
        }
        Ok(format!(
            "d.library_id = {library_id}{}",
            where_clause(filter, q)
        ))
    }

    fn write<T>(
        &self,
        context: &'static str,
        work: impl FnOnce(&tokio_postgres::Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let tx = wait(client.transaction()).map_err(pg_err(context))?;
        // The generation moves before the write and again after its commit:
        // a result cached while the write was in flight carries the first
        // value and is never served after the commit.
        bump_generation(&tx)?;
        let value = work(&tx)?;
        wait(tx.commit()).map_err(pg_err(context))?;
        bump_generation(client)?;
        Ok(value)
    }
}

/// A claim held by a database session of its own.
struct SessionClaim {
    client: tokio_postgres::Client,
    runtime: tokio::runtime::Handle,
}

/// How long the probe of a claim may take before the claim counts as lost.
const CLAIM_PROBE: std::time::Duration = std::time::Duration::from_secs(10);

impl folio_store::Claim for SessionClaim {
    /// Asks the server whether this session still holds an advisory lock:
    /// a connection that was dropped silently (no FIN ever arrived) does
    /// not answer within `CLAIM_PROBE`, and a session the server ended
    /// holds nothing, so two processes never both think they hold it.
    fn held(&self) -> bool {
        if self.client.is_closed() {
            return false;
        }
        let _runtime = self.runtime.enter();
        let probe = tokio::time::timeout(
            CLAIM_PROBE,
            self.client.query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' \
                 AND pid = pg_backend_pid() AND granted",
                &[],
            ),
        );
        matches!(wait(probe), Ok(Ok(row)) if row.get::<_, i64>(0) > 0)
    }
}

/// An access key from its stored record and last use.
fn key_record(record: Value, last_used_at: Option<String>) -> Result<KeyRecord> {
    let key: KeyRecord =
        serde_json::from_value(record).map_err(|e| StoreError::io("reading an access key", e))?;
    Ok(KeyRecord {
        last_used_at,
        ..key
    })
}

impl Store for PostgresStore {
    fn create_library(&self, name: &LibraryName, space: &EmbeddingSpace) -> Result<LibraryInfo> {
        let space_json = serde_json::to_value(space).map_err(|e| StoreError::io("library", e))?;
        self.write("creating a library", |tx| {
            let created = wait(tx.query_opt(
                "INSERT INTO folio_libraries (name, space, created_at)
                 VALUES ($1, $2, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))
                 ON CONFLICT (name) DO NOTHING RETURNING id",
                &[&name.as_str(), &space_json],
            ))
            .map_err(pg_err("creating a library"))?;
            if let Some(created) = created {
                create_hnsw(tx, created.get(0), space.dim)?;
            }
            let row = library_row(tx, name)?;
            match row.info.space.difference(space) {
                None => Ok(row.info),
                Some(difference) => Err(StoreError::EmbeddingMismatch {
                    library: name.to_string(),
                    difference,
                }),
            }
        })
    }

    fn library(&self, name: &LibraryName) -> Result<LibraryInfo> {
        let mut conn = self.pool.get()?;
        Ok(self.library_row(conn.client(), name)?.info)
    }

    fn libraries(&self) -> Result<Vec<LibraryInfo>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let names = wait(client.query("SELECT name FROM folio_libraries ORDER BY name", &[]))
            .map_err(pg_err("listing libraries"))?;
        names
            .iter()
            .filter_map(|r| LibraryName::new(r.get::<_, String>(0)).ok())
            .map(|n| library_row(client, &n).map(|r| r.info))
            .collect()
    }

    fn delete_library(&self, name: &LibraryName) -> Result<()> {
        self.write("deleting a library", |tx| {
            let id = library_id(tx, name)?;
            wait(tx.execute(
                "SELECT id FROM folio_libraries WHERE id = $1 FOR UPDATE",
                &[&id],
            ))
            .map_err(pg_err("deleting a library"))?;
            for sql in [
                "DELETE FROM folio_term_blocks WHERE library_id = $1",
                "DELETE FROM folio_chunks WHERE library_id = $1",
                "DELETE FROM folio_entity_mentions WHERE library_id = $1",
                "DELETE FROM folio_originals WHERE library_id = $1",
                "DELETE FROM folio_documents WHERE library_id = $1",
                "DELETE FROM folio_libraries WHERE id = $1",
            ] {
                wait(tx.execute(sql, &[&id])).map_err(pg_err("deleting a library"))?;
            }
            wait(tx.batch_execute(&format!("DROP INDEX IF EXISTS {}", hnsw_index(id))))
                .map_err(pg_err("deleting a library"))?;
            Ok(())
        })
    }

    fn content_hash(&self, id: &DocumentId) -> Result<Option<String>> {
        let mut conn = self.pool.get()?;
        Ok(wait(conn.client().query_opt(
            "SELECT content_hash FROM folio_documents WHERE id = $1",
            &[&id.as_str()],
        ))
        .map_err(pg_err("reading a document"))?
        .map(|r| r.get(0)))
    }

    fn put_documents(&self, documents: Vec<NewDocument>, force: bool) -> Result<Vec<PutOutcome>> {
        let mut libraries: HashMap<LibraryName, LibraryRow> = HashMap::new();
        {
            let mut conn = self.pool.get()?;
            let client = conn.client();
            for new in &documents {
                if !libraries.contains_key(&new.document.library) {
                    let row = library_row(client, &new.document.library)?;
                    libraries.insert(new.document.library.clone(), row);
                }
                let row = &libraries[&new.document.library];
                if let Some(difference) = row.info.space.difference(&new.space) {
                    return Err(StoreError::EmbeddingMismatch {
                        library: row.info.name.to_string(),
                        difference,
                    });
                }
                folio_store::validate(new, &row.info.space)?;
            }
        }
        self.write("writing documents", |tx| {
            // The libraries stay (a concurrent delete waits), and each
            // document is written by one process at a time: locks taken in
            // one order, so two batches never deadlock.
            let ids: Vec<i64> = libraries.values().map(|r| r.id).collect();
            wait(tx.execute(
                "SELECT id FROM folio_libraries WHERE id = ANY($1) FOR KEY SHARE",
                &[&ids],
            ))
            .map_err(pg_err("writing documents"))?;
            let mut keys: Vec<i64> = documents.iter().map(|n| lock_key(&n.document.id)).collect();
            keys.sort_unstable();
            keys.dedup();
            wait(tx.execute(
                "SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k",
                &[&keys],
            ))
            .map_err(pg_err("writing documents"))?;
            let mut outcomes = Vec::with_capacity(documents.len());
            let mut pending = blocks::Pending::default();
            for new in &documents {
                let doc = &new.document;
                let library_id = libraries[&doc.library].id;
                let existing = wait(tx.query_opt(
                    "SELECT content_hash FROM folio_documents WHERE id = $1",
                    &[&doc.id.as_str()],
                ))
                .map_err(pg_err("writing documents"))?;
                let outcome = match existing.map(|r| r.get::<_, String>(0)) {
                    Some(hash) if hash == doc.content_hash && !force => {
                        // An unchanged copy keeps its bytes; one ingested
                        // before bytes were kept gains them.
                        if let Some(bytes) = &new.original {
                            wait(tx.execute(
                                "INSERT INTO folio_originals (document_id, library_id, bytes)
                                 VALUES ($1, $2, $3) ON CONFLICT (document_id) DO NOTHING",
                                &[&doc.id.as_str(), &library_id, bytes],
                            ))
                            .map_err(pg_err("writing documents"))?;
                        }
                        outcomes.push(PutOutcome::Skipped);
                        continue;
                    }
                    Some(_) => {
                        // Its postings go with it, those written before and
                        // those added earlier in this batch.
                        remove_document_rows(tx, doc.id.as_str(), &mut pending)?;
                        PutOutcome::Replaced
                    }
                    None => PutOutcome::Indexed,
                };
                insert_document(tx, library_id, new, &mut pending)?;
                if let Some(bytes) = &new.original {
                    wait(tx.execute(
                        "INSERT INTO folio_originals (document_id, library_id, bytes)
                         VALUES ($1, $2, $3)",
                        &[&doc.id.as_str(), &library_id, bytes],
                    ))
                    .map_err(pg_err("writing documents"))?;
                }
                outcomes.push(outcome);
            }
            pending.flush(tx)?;
            Ok(outcomes)
        })
    }

    fn document(&self, id: &DocumentId) -> Result<Document> {
        let mut conn = self.pool.get()?;
        let row = wait(conn.client().query_opt(
            &format!(
                "SELECT {DOCUMENT_COLUMNS}, d.text FROM folio_documents d
                 JOIN folio_libraries l ON l.id = d.library_id WHERE d.id = $1"
            ),
            &[&id.as_str()],
        ))
        .map_err(pg_err("reading a document"))?
        .ok_or_else(|| StoreError::NotFound {
            what: "document",
            id: id.to_string(),
        })?;
        Ok(summary_at(&row, 0)?.with_text(row.try_get(DOCUMENT_COLUMN_COUNT).map_err(row_err)?))
    }

    fn original(&self, id: &DocumentId) -> Result<Option<Vec<u8>>> {
        let mut conn = self.pool.get()?;
        Ok(wait(conn.client().query_opt(
            "SELECT bytes FROM folio_originals WHERE document_id = $1",
            &[&id.as_str()],
        ))
        .map_err(pg_err("reading a document"))?
        .map(|r| r.get(0)))
    }

    fn documents(
        &self,
        library: &LibraryName,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<DocumentSummary>, u64)> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let row = library_row(client, library)?;
        let rows = wait(client.query(
            &format!(
                "SELECT {DOCUMENT_COLUMNS} FROM folio_documents d JOIN folio_libraries l ON l.id = d.library_id
                 WHERE d.library_id = $1 ORDER BY d.source, d.id LIMIT $2 OFFSET $3"
            ),
            &[
                &row.id,
                &(limit.min(i64::MAX as u64) as i64),
                &(offset.min(i64::MAX as u64) as i64),
            ],
        ))
        .map_err(pg_err("listing documents"))?;
        let documents = rows
            .iter()
            .map(|r| summary_at(r, 0))
            .collect::<Result<_>>()?;
        Ok((documents, row.info.document_count))
    }

    fn delete_document(&self, id: &DocumentId) -> Result<()> {
        self.write("deleting a document", |tx| {
            wait(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_key(id)]))
                .map_err(pg_err("deleting a document"))?;
            let found = wait(tx.query_opt(
                "SELECT 1 FROM folio_documents WHERE id = $1",
                &[&id.as_str()],
            ))
            .map_err(pg_err("deleting a document"))?;
            if found.is_none() {
                return Err(StoreError::NotFound {
                    what: "document",
                    id: id.to_string(),
                });
            }
            let mut pending = blocks::Pending::default();
            remove_document_rows(tx, id.as_str(), &mut pending)?;
            pending.flush(tx)
        })
    }

    fn chunks(&self, id: &DocumentId, range: Range<u32>) -> Result<Vec<Chunk>> {
        let mut conn = self.pool.get()?;
        let start = range.start.min(i32::MAX as u32) as i32;
        let end = range.end.min(i32::MAX as u32) as i32;
        let rows = wait(conn.client().query(
            &format!(
                "SELECT {CHUNK_COLUMNS} FROM folio_chunks c
                 WHERE c.document_id = $1 AND c.idx >= $2 AND c.idx < $3 ORDER BY c.idx"
            ),
            &[&id.as_str(), &start, &end],
        ))
        .map_err(pg_err("reading chunks"))?;
        rows.iter().map(|r| chunk_at(r, 0)).collect()
    }

    fn vectors(&self, id: &DocumentId) -> Result<Vec<Vec<f32>>> {
        let mut conn = self.pool.get()?;
        let rows = wait(conn.client().query(
            "SELECT embedding FROM folio_chunks WHERE document_id = $1 ORDER BY idx",
            &[&id.as_str()],
        ))
        .map_err(pg_err("reading vectors"))?;
        if rows.is_empty() {
            return Err(StoreError::NotFound {
                what: "document",
                id: id.to_string(),
            });
        }
        rows.iter()
            .map(|r| Ok(r.try_get::<_, Vector>(0).map_err(row_err)?.0))
            .collect()
    }

    fn chunks_with_documents(&self, ids: &[ChunkId]) -> Result<Vec<ChunkWithDocument>> {
        let mut documents = Vec::with_capacity(ids.len());
        let mut indexes = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some((document, index)) = ChunkId::parse(id.as_str()) {
                documents.push(document.as_str().to_string());
                indexes.push(index.min(i32::MAX as u32) as i32);
            }
        }
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.pool.get()?;
        let rows = wait(conn.client().query(
            &format!(
                "SELECT {CHUNK_COLUMNS}, {DOCUMENT_COLUMNS}
                 FROM unnest($1::text[], $2::int4[]) WITH ORDINALITY AS w(document_id, idx, n)
                 JOIN folio_chunks c ON c.document_id = w.document_id AND c.idx = w.idx
                 JOIN folio_documents d ON d.id = c.document_id
                 JOIN folio_libraries l ON l.id = d.library_id
                 ORDER BY w.n"
            ),
            &[&documents, &indexes],
        ))
        .map_err(pg_err("reading chunks"))?;
        rows.iter()
            .map(|r| {
                Ok(ChunkWithDocument {
                    chunk: chunk_at(r, 0)?,
                    document: summary_at(r, CHUNK_COLUMN_COUNT)?,
                })
            })
            .collect()
    }

    fn query_language(&self, library: &LibraryName, query: &str) -> Result<QueryLanguage> {
        let chunks = self.in_snapshot(
            library,
            "reading the query's language",
            |tx, _, generation, library_id| {
                lexical::chunk_languages(tx, &self.statistics, generation, library_id)
            },
        )?;
        let own = folio_lexical::query_languages(query, &chunks)
            .first()
            .copied()
            .unwrap_or(folio_lexical::Language::English);
        Ok(QueryLanguage {
            query: own.code().to_string(),
            library: folio_lexical::main_language(&chunks).code().to_string(),
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
        self.lexical_search(lexical::Unit::Chunk, library, query, filter, k, bm25)
    }

    fn lexical_documents(
        &self,
        library: &LibraryName,
        query: &str,
        filter: &Filter,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<Hit>> {
        self.lexical_search(lexical::Unit::Document, library, query, filter, k, bm25)
    }

    fn warm(&self, library: &LibraryName) -> Result<()> {
        self.in_snapshot(
            library,
            "warming the lexical index",
            |tx, statements, generation, library_id| {
                lexical::warm(tx, &self.statistics, statements, generation, library_id)
            },
        )
    }

    fn dense(
        &self,
        library: &LibraryName,
        vector: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<Hit>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let row = self.library_row(client, library)?;
        if vector.len() != row.info.space.dim as usize {
            return Err(StoreError::EmbeddingMismatch {
                library: library.to_string(),
                difference: format!("query dimension {} vs {}", vector.len(), row.info.space.dim),
            });
        }
        if k == 0 {
            return Ok(Vec::new());
        }
        let search = DenseSearch {
            row: &row,
            vector,
            filter,
            k,
        };
        let exact = row.info.chunk_count as i64 <= EXACT_MAX
            || !filter.is_empty() && !self.pool.iterative_scans();
        if exact || filter.is_empty() {
            return self.dense_scan(client, &search, exact);
        }
        // A selective filter leaves few candidates: they are scanned exactly.
        // On documents alone, their chunk counts say so in the scan's own
        // statement.
        if !has_chunk_conditions(filter) {
            return match self.dense_exact_within(client, &search)? {
                Some(hits) => Ok(hits),
                None => self.dense_scan(client, &search, false),
            };
        }
        let mut q = Query::default();
        let clause = where_clause(filter, &mut q);
        let sql = format!(
            "SELECT count(*) FROM (SELECT 1 FROM folio_chunks c JOIN folio_documents d ON d.id = c.document_id
             WHERE c.library_id = {}{clause} LIMIT {}) s",
            row.id,
            EXACT_MAX + 1
        );
        let candidates: i64 = wait(client.query_one(&sql, &q.refs()))
            .map_err(pg_err("dense search"))?
            .get(0);
        self.dense_scan(client, &search, candidates <= EXACT_MAX)
    }

    fn chunk_texts(&self, library: &LibraryName) -> Result<Vec<(ChunkId, String)>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let id = library_id(client, library)?;
        let rows = wait(client.query(
            "SELECT document_id, idx, context || text FROM folio_chunks WHERE library_id = $1 ORDER BY key",
            &[&id],
        ))
        .map_err(pg_err("reading chunks"))?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let document = DocumentId::parse(&r.get::<_, String>(0))?;
                Some((ChunkId::new(&document, r.get::<_, i32>(1) as u32), r.get(2)))
            })
            .collect())
    }

    fn replace_vectors(
        &self,
        library: &LibraryName,
        space: &EmbeddingSpace,
        vectors: Vec<(ChunkId, Vec<f32>)>,
    ) -> Result<()> {
        let space_json = serde_json::to_value(space).map_err(|e| StoreError::io("library", e))?;
        self.write("rebuilding", |tx| {
            let row = library_row(tx, library)?;
            if vectors.len() as u64 != row.info.chunk_count {
                return Err(StoreError::InvalidArgument(format!(
                    "{} vectors for a library of {} chunks",
                    vectors.len(),
                    row.info.chunk_count
                )));
            }
            let mut documents = Vec::with_capacity(vectors.len());
            let mut indexes = Vec::with_capacity(vectors.len());
            let mut values = Vec::with_capacity(vectors.len());
            for (id, vector) in &vectors {
                if vector.len() != space.dim as usize {
                    return Err(StoreError::InvalidArgument(format!(
                        "vector for {id} has dimension {}, not {}",
                        vector.len(),
                        space.dim
                    )));
                }
                let Some((document, index)) = ChunkId::parse(id.as_str()) else {
                    return Err(StoreError::InvalidArgument(format!("bad chunk id {id}")));
                };
                documents.push(document.as_str().to_string());
                indexes.push(index as i32);
                values.push(Vector(vector.clone()));
            }
            wait(tx.batch_execute(&format!("DROP INDEX IF EXISTS {}", hnsw_index(row.id))))
                .map_err(pg_err("rebuilding"))?;
            let updated = wait(tx.execute(
                "UPDATE folio_chunks c SET embedding = u.e
                 FROM unnest($1::text[], $2::int4[], $3::vector[]) AS u(d, i, e)
                 WHERE c.document_id = u.d AND c.idx = u.i AND c.library_id = $4",
                &[&documents, &indexes, &values, &row.id],
            ))
            .map_err(pg_err("rebuilding"))?;
            if updated != vectors.len() as u64 {
                return Err(StoreError::InvalidArgument(format!(
                    "{} of {} vectors name chunks of the library",
                    updated,
                    vectors.len()
                )));
            }
            wait(tx.execute(
                "UPDATE folio_libraries SET space = $1 WHERE id = $2",
                &[&space_json, &row.id],
            ))
            .map_err(pg_err("rebuilding"))?;
            create_hnsw(tx, row.id, space.dim)
        })
    }

    fn stats(&self, library: &LibraryName) -> Result<LibraryStats> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let row = library_row(client, library)?;
        let formats = wait(client.query(
            "SELECT format, count(*) FROM folio_documents WHERE library_id = $1 GROUP BY format ORDER BY 2 DESC, 1",
            &[&row.id],
        ))
        .map_err(pg_err("library statistics"))?
        .iter()
        .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
        .collect();
        let totals = wait(client.query_one(
            "SELECT COALESCE(sum(char_count), 0)::bigint, max(ingested_at) FROM folio_documents WHERE library_id = $1",
            &[&row.id],
        ))
        .map_err(pg_err("library statistics"))?;
        let chunks = wait(client.query_one(
            "SELECT COALESCE(sum(token_count), 0)::bigint, count(*) FROM folio_chunks WHERE library_id = $1",
            &[&row.id],
        ))
        .map_err(pg_err("library statistics"))?;
        let postings: i64 = wait(client.query_one(
            "SELECT COALESCE(sum(entries), 0)::bigint FROM folio_term_blocks
             WHERE library_id = $1 AND unit = 0",
            &[&row.id],
        ))
        .map_err(pg_err("library statistics"))?
        .get(0);
        let vectors: i64 = chunks.get(1);
        let hnsw = row.info.space.dim <= HNSW_MAX_DIM;
        let details = serde_json::json!({
            "backend": "postgres",
            "server": self.pool.display,
            "dense_search": if vectors <= EXACT_MAX || !hnsw { "exact" } else { "hnsw" },
            "vectors": vectors,
            "vector_dim": row.info.space.dim,
            "hnsw_index": if hnsw { Value::from(hnsw_index(row.id)) } else { Value::Null },
            "lexical_postings": postings,
        });
        Ok(LibraryStats {
            info: row.info,
            formats,
            total_chars: totals.get::<_, i64>(0) as u64,
            total_tokens: chunks.get::<_, i64>(0) as u64,
            last_ingested_at: totals.get(1),
            index: details,
        })
    }

    fn record_schema(&self, library: &LibraryName) -> Result<Option<RecordSchema>> {
        let mut conn = self.pool.get()?;
        let value: Option<Value> = wait(conn.client().query_opt(
            "SELECT record_schema FROM folio_libraries WHERE name = $1",
            &[&library.as_str()],
        ))
        .map_err(pg_err("reading a record schema"))?
        .ok_or_else(|| StoreError::LibraryNotFound(library.to_string()))?
        .get(0);
        value
            .map(|v| serde_json::from_value(v).map_err(|e| StoreError::io("record schema", e)))
            .transpose()
    }

    fn set_record_schema(
        &self,
        library: &LibraryName,
        schema: Option<&RecordSchema>,
    ) -> Result<()> {
        let value = schema
            .map(serde_json::to_value)
            .transpose()
            .map_err(|e| StoreError::io("record schema", e))?;
        self.write("writing a record schema", |tx| {
            let changed = wait(tx.execute(
                "UPDATE folio_libraries SET record_schema = $1 WHERE name = $2",
                &[&value, &library.as_str()],
            ))
            .map_err(pg_err("writing a record schema"))?;
            if changed == 0 {
                return Err(StoreError::LibraryNotFound(library.to_string()));
            }
            Ok(())
        })
    }

    fn facets(&self, library: &LibraryName, request: &FacetRequest) -> Result<Facets> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let id = library_id(client, library)?;
        let mut q = Query::default();
        let clause = Self::document_filter(id, &request.filter, &mut q)?;
        let mut aggregator = Aggregator::new(request);
        let columns: Vec<(&String, &str)> = aggregator
            .fields()
            .into_iter()
            .filter_map(|field| document_column(field).map(|col| (field, col)))
            .collect();
        let select: Vec<String> = std::iter::once("d.metadata".to_string())
            .chain(columns.iter().map(|(_, col)| format!("to_jsonb({col})")))
            .collect();
        let sql = format!(
            "SELECT {} FROM folio_documents d WHERE {clause}",
            select.join(", ")
        );
        let rows = wait(client.query(&sql, &q.refs())).map_err(pg_err("computing facets"))?;
        for row in rows {
            let mut fields = match row.try_get::<_, Value>(0).map_err(row_err)? {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            for (i, (field, _)) in columns.iter().enumerate() {
                let value: Option<Value> = row.try_get(i + 1).map_err(row_err)?;
                fields.insert((*field).clone(), value.unwrap_or(Value::Null));
            }
            aggregator.add(&fields);
        }
        Ok(aggregator.finish())
    }

    fn neighbours(
        &self,
        id: &DocumentId,
        order: &NeighbourOrder,
    ) -> Result<(Option<DocumentSummary>, Option<DocumentSummary>)> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let mut q = Query::default();
        let this = q.bind(id.as_str().to_string());
        let expr = field_expr(&mut q, &order.order_by);
        let value = |e: &str| -> String {
            format!(
                "(SELECT {} FROM folio_documents d2 WHERE d2.id = {this}::text)",
                e.replace("d.", "d2.")
            )
        };
        let exists = wait(client.query_opt(
            &format!(
                "SELECT d.library_id, {expr} IS NULL FROM folio_documents d WHERE d.id = {this}::text"
            ),
            &q.refs(),
        ))
        .map_err(pg_err("reading a document"))?
        .ok_or_else(|| StoreError::NotFound {
            what: "document",
            id: id.to_string(),
        })?;
        let library_id: i64 = exists.get(0);
        if exists.get::<_, bool>(1) {
            return Ok((None, None));
        }
        let mut same = String::new();
        for field in &order.group_by {
            let e = field_expr(&mut q, field);
            same.push_str(&format!(" AND {e} IS NOT DISTINCT FROM {}", value(&e)));
        }
        let this_value = value(&expr);
        let find = |before: bool| -> Result<Option<DocumentSummary>> {
            let (cmp, dir) = if before { ("<", "DESC") } else { (">", "ASC") };
            let ties = if order.strict {
                String::new()
            } else {
                format!(" OR ({expr} = {this_value} AND d.id {cmp} {this}::text)")
            };
            let sql = format!(
                "SELECT {DOCUMENT_COLUMNS} FROM folio_documents d JOIN folio_libraries l ON l.id = d.library_id
                 WHERE d.library_id = {library_id} AND d.id <> {this}::text{same}
                   AND ({expr} {cmp} {this_value}{ties})
                 ORDER BY {expr} {dir}, d.id {dir} LIMIT 1"
            );
            let row =
                wait(client.query_opt(&sql, &q.refs())).map_err(pg_err("finding neighbours"))?;
            row.map(|r| summary_at(&r, 0)).transpose()
        };
        let before = find(true)?;
        let after = find(false)?;
        Ok((before, after))
    }

    fn find_documents(
        &self,
        library: &LibraryName,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<DocumentSummary>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let id = library_id(client, library)?;
        let mut q = Query::default();
        let clause = Self::document_filter(id, filter, &mut q)?;
        let limit = q.bind(limit.min(i64::MAX as usize) as i64);
        let rows = wait(client.query(
            &format!(
                "SELECT {DOCUMENT_COLUMNS} FROM folio_documents d JOIN folio_libraries l ON l.id = d.library_id
                 WHERE {clause} ORDER BY d.source, d.id LIMIT {limit}"
            ),
            &q.refs(),
        ))
        .map_err(pg_err("finding documents"))?;
        rows.iter().map(|r| summary_at(r, 0)).collect()
    }

    fn update_metadata(&self, id: &DocumentId, metadata: Map<String, Value>) -> Result<()> {
        let value = clean_json(&Value::Object(metadata));
        self.write("updating metadata", |tx| {
            let changed = wait(tx.execute(
                "UPDATE folio_documents SET metadata = $1 WHERE id = $2",
                &[&value, &id.as_str()],
            ))
            .map_err(pg_err("updating metadata"))?;
            if changed == 0 {
                return Err(StoreError::NotFound {
                    what: "document",
                    id: id.to_string(),
                });
            }
            Ok(())
        })
    }

    fn flush(&self) -> Result<()> {
        // Every write is durable at commit; nothing is derived outside it.
        Ok(())
    }

    fn dense_graph(&self, library: &LibraryName, vector: &[f32], k: usize) -> Result<Vec<Hit>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let row = self.library_row(client, library)?;
        let everything = Filter::default();
        let search = DenseSearch {
            row: &row,
            vector,
            filter: &everything,
            k,
        };
        self.dense_scan(client, &search, false)
    }

    fn size_bytes(&self) -> Result<u64> {
        let mut conn = self.pool.get()?;
        let size: i64 = wait(
            conn.client()
                .query_one("SELECT pg_database_size(current_database())", &[]),
        )
        .map_err(pg_err("measuring the database"))?
        .get(0);
        Ok(size.max(0) as u64)
    }

    fn verify(&self, library: &LibraryName) -> Result<Integrity> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let row = library_row(client, library)?;
        let query = |sql: &str| -> Result<Vec<Row>> {
            wait(client.query(sql, &[&row.id])).map_err(pg_err("verifying"))
        };
        let mut problems = Vec::new();
        for r in query(
            "SELECT d.id, d.chunk_count, count(c.key) FROM folio_documents d
             LEFT JOIN folio_chunks c ON c.document_id = d.id
             WHERE d.library_id = $1 GROUP BY d.id, d.chunk_count
             HAVING count(c.key) <> d.chunk_count OR min(c.idx) <> 0 OR max(c.idx) <> d.chunk_count - 1
             ORDER BY d.id",
        )? {
            problems.push(format!(
                "document {}: {} chunks stored of {}",
                r.get::<_, String>(0),
                r.get::<_, i64>(2),
                r.get::<_, i32>(1)
            ));
        }
        problems.extend(blocks::verify(client, row.id)?);
        // Entity mentions: each of a document of the library, within its
        // chunk's text.
        let stray: i64 = query(
            "SELECT count(*) FROM folio_entity_mentions m WHERE m.library_id = $1
               AND NOT EXISTS (SELECT 1 FROM folio_chunks c JOIN folio_documents d
                                 ON d.id = c.document_id AND d.library_id = m.library_id
                                WHERE c.document_id = m.document_id AND c.idx = m.chunk
                                  AND m.start <= m.stop AND m.stop <= octet_length(c.text))",
        )?[0]
            .get(0);
        if stray > 0 {
            problems.push(format!(
                "{stray} entity mentions point outside the library's chunks"
            ));
        }
        let dim = row.info.space.dim as i32;
        let wrong: i64 = wait(client.query_one(
            "SELECT count(*) FROM folio_chunks WHERE library_id = $1 AND vector_dims(embedding) <> $2",
            &[&row.id, &dim],
        ))
        .map_err(pg_err("verifying"))?
        .get(0);
        if wrong > 0 {
            problems.push(format!(
                "{wrong} vectors are not of the library's dimension {dim}"
            ));
        }
        Ok(Integrity {
            library: library.to_string(),
            documents: row.info.document_count,
            chunks: row.info.chunk_count,
            problems,
        })
    }

    fn put_key(&self, key: &KeyRecord) -> Result<()> {
        let record = serde_json::to_value(KeyRecord {
            last_used_at: None,
            ..key.clone()
        })
        .map_err(|e| StoreError::io("an access key", e))?;
        let mut conn = self.pool.get()?;
        // No generation bump: keys are not documents, read caches stay.
        let inserted = wait(conn.client().execute(
            "INSERT INTO folio_access_keys (name, hash, record) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[&key.name, &key.hash, &record],
        ))
        .map_err(pg_err("writing an access key"))?;
        if inserted == 0 {
            return Err(StoreError::InvalidArgument(format!(
                "a key named {:?} (or with the same hash) exists",
                key.name
            )));
        }
        Ok(())
    }

    fn keys(&self) -> Result<Vec<KeyRecord>> {
        let mut conn = self.pool.get()?;
        let rows = wait(conn.client().query(
            "SELECT record, last_used_at FROM folio_access_keys ORDER BY name COLLATE \"C\"",
            &[],
        ))
        .map_err(pg_err("reading access keys"))?;
        rows.iter()
            .map(|r| key_record(r.get(0), r.get(1)))
            .collect()
    }

    fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>> {
        let mut conn = self.pool.get()?;
        let row = wait(conn.client().query_opt(
            "SELECT record, last_used_at FROM folio_access_keys WHERE hash = $1",
            &[&hash],
        ))
        .map_err(pg_err("reading an access key"))?;
        row.map(|r| key_record(r.get(0), r.get(1))).transpose()
    }

    fn delete_key(&self, name: &str) -> Result<bool> {
        let mut conn = self.pool.get()?;
        let deleted = wait(
            conn.client()
                .execute("DELETE FROM folio_access_keys WHERE name = $1", &[&name]),
        )
        .map_err(pg_err("deleting an access key"))?;
        Ok(deleted > 0)
    }

    fn touch_key(&self, hash: &str, at: &str) -> Result<()> {
        let mut conn = self.pool.get()?;
        wait(conn.client().execute(
            "UPDATE folio_access_keys SET last_used_at = $1 WHERE hash = $2",
            &[&at, &hash],
        ))
        .map_err(pg_err("recording a key's use"))?;
        Ok(())
    }

    fn entities(
        &self,
        library: &LibraryName,
        query: &EntityQuery<'_>,
        limit: usize,
    ) -> Result<Vec<EntityCount>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let id = library_id(client, library)?;
        // A prefix is a range of the "C"-collated keys: the index serves it.
        let from = query.prefix;
        let to = query.prefix.and_then(folio_store::prefix_end);
        let rows = wait(client.query(
            "SELECT entity, min(kind), count(*), count(DISTINCT document_id)
               FROM folio_entity_mentions
              WHERE library_id = $1 AND ($2::text IS NULL OR kind = $2)
                AND ($3::text IS NULL OR entity >= $3) AND ($4::text IS NULL OR entity < $4)
              GROUP BY entity ORDER BY count(*) DESC, entity LIMIT $5",
            &[&id, &query.kind, &from, &to, &(limit as i64)],
        ))
        .map_err(pg_err("reading entities"))?;
        Ok(rows
            .iter()
            .map(|r| EntityCount {
                entity: r.get(0),
                kind: r.get(1),
                mentions: r.get::<_, i64>(2) as u64,
                documents: r.get::<_, i64>(3) as u64,
            })
            .collect())
    }

    fn claim(&self, name: &str) -> Result<Option<Box<dyn folio_store::Claim>>> {
        // A session-level advisory lock on its own connection: released
        // when the claim is dropped or the process (or its session) dies.
        let mut conn = self.pool.get()?;
        let granted: bool = wait(conn.client().query_one(
            "SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
            &[&format!("folio claim {name}")],
        ))
        .map_err(pg_err("claiming work"))?
        .get(0);
        if !granted {
            return Ok(None);
        }
        Ok(Some(Box::new(SessionClaim {
            client: conn.detach(),
            runtime: self.pool.handle(),
        })))
    }

    fn declared_entities(&self, library: &LibraryName) -> Result<Vec<Declared>> {
        let mut conn = self.pool.get()?;
        let value: Option<Value> = wait(conn.client().query_opt(
            "SELECT declared_entities FROM folio_libraries WHERE name = $1",
            &[&library.as_str()],
        ))
        .map_err(pg_err("reading declared entities"))?
        .ok_or_else(|| StoreError::LibraryNotFound(library.to_string()))?
        .get(0);
        match value {
            None => Ok(Vec::new()),
            Some(v) => {
                serde_json::from_value(v).map_err(|e| StoreError::io("declared entities", e))
            }
        }
    }

    fn set_declared_entities(&self, library: &LibraryName, entities: &[Declared]) -> Result<()> {
        let value = (!entities.is_empty())
            .then(|| serde_json::to_value(entities))
            .transpose()
            .map_err(|e| StoreError::io("declared entities", e))?;
        self.write("writing declared entities", |tx| {
            let changed = wait(tx.execute(
                "UPDATE folio_libraries SET declared_entities = $1 WHERE name = $2",
                &[&value, &library.as_str()],
            ))
            .map_err(pg_err("writing declared entities"))?;
            if changed == 0 {
                return Err(StoreError::LibraryNotFound(library.to_string()));
            }
            Ok(())
        })
    }

    fn replace_mentions(&self, id: &DocumentId, mentions: &[EntityMention]) -> Result<()> {
        self.write("relinking a document", |tx| {
            let library_id: i64 = wait(tx.query_opt(
                "SELECT library_id FROM folio_documents WHERE id = $1 FOR UPDATE",
                &[&id.as_str()],
            ))
            .map_err(pg_err("relinking a document"))?
            .ok_or_else(|| StoreError::NotFound {
                what: "document",
                id: id.to_string(),
            })?
            .get(0);
            let lengths: Vec<usize> = wait(tx.query(
                "SELECT octet_length(text) FROM folio_chunks WHERE document_id = $1 ORDER BY idx",
                &[&id.as_str()],
            ))
            .map_err(pg_err("relinking a document"))?
            .iter()
            .map(|r| r.get::<_, i32>(0) as usize)
            .collect();
            folio_store::validate_mentions(id, mentions, &lengths)?;
            wait(tx.execute(
                "DELETE FROM folio_entity_mentions WHERE document_id = $1",
                &[&id.as_str()],
            ))
            .map_err(pg_err("relinking a document"))?;
            insert_mentions(tx, library_id, id.as_str(), mentions)
        })
    }

    fn mentions_of(
        &self,
        library: &LibraryName,
        entity: &str,
        limit: usize,
    ) -> Result<Vec<MentionHit>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let id = library_id(client, library)?;
        let rows = wait(client.query(
            "SELECT document_id, chunk, start, stop FROM folio_entity_mentions
              WHERE library_id = $1 AND entity = $2
              ORDER BY document_id, chunk, start LIMIT $3",
            &[&id, &entity, &(limit as i64)],
        ))
        .map_err(pg_err("reading entities"))?;
        rows.iter()
            .map(|r| {
                Ok(MentionHit {
                    document_id: DocumentId::parse(r.get::<_, &str>(0))
                        .ok_or_else(|| corrupt("document id"))?,
                    chunk: r.get::<_, i32>(1) as u32,
                    start: r.get::<_, i32>(2) as u32,
                    end: r.get::<_, i32>(3) as u32,
                })
            })
            .collect()
    }

    fn related(&self, library: &LibraryName, entity: &str, limit: usize) -> Result<Vec<Related>> {
        let mut conn = self.pool.get()?;
        let client = conn.client();
        let id = library_id(client, library)?;
        let rows = wait(client.query(
            "SELECT r.entity, r.kind, r.shared,
                    (SELECT count(DISTINCT (x.document_id, x.chunk)) FROM folio_entity_mentions x
                      WHERE x.library_id = $1 AND x.entity = r.entity)
               FROM (SELECT o.entity, min(o.kind) AS kind,
                            count(DISTINCT (o.document_id, o.chunk)) AS shared
                       FROM folio_entity_mentions m
                       JOIN folio_entity_mentions o
                         ON o.document_id = m.document_id AND o.chunk = m.chunk
                      WHERE m.library_id = $1 AND m.entity = $2 AND o.entity <> $2
                      GROUP BY o.entity ORDER BY shared DESC, o.entity LIMIT $3) r
              ORDER BY r.shared DESC, r.entity",
            &[&id, &entity, &(limit as i64)],
        ))
        .map_err(pg_err("reading entities"))?;
        Ok(rows
            .iter()
            .map(|r| Related {
                entity: r.get(0),
                kind: r.get(1),
                chunks: r.get::<_, i64>(2) as u64,
                entity_chunks: r.get::<_, i64>(3) as u64,
            })
            .collect())
    }

    fn document_mentions(&self, id: &DocumentId) -> Result<Vec<EntityMention>> {
        let mut conn = self.pool.get()?;
        let rows = wait(conn.client().query(
            "SELECT entity, kind, chunk, start, stop FROM folio_entity_mentions
              WHERE document_id = $1 ORDER BY chunk, start, entity",
            &[&id.as_str()],
        ))
        .map_err(pg_err("reading entities"))?;
        Ok(rows
            .iter()
            .map(|r| EntityMention {
                entity: r.get(0),
                kind: r.get(1),
                chunk: r.get::<_, i32>(2) as u32,
                start: r.get::<_, i32>(3) as u32,
                end: r.get::<_, i32>(4) as u32,
            })
            .collect())
    }

    fn generation(&self) -> Result<Option<u64>> {
        let mut conn = self.pool.get()?;
        let row = wait(
            conn.client()
                .query_one("SELECT last_value, is_called FROM folio_generation", &[]),
        )
        .map_err(pg_err("reading the write generation"))?;
        let value: i64 = row.get(0);
        let called: bool = row.get(1);
        Ok(Some(if called { value as u64 } else { 0 }))
    }
}

#[cfg(test)]
mod tests;
