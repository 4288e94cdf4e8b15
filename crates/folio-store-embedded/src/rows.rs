//! Mapping between SQLite rows and domain types.

use folio_core::filter::join_section_path;
use folio_core::{Chunk, ChunkId, Document, DocumentId, DocumentSummary, LibraryName, SourceKind};
use folio_store::{
    EntityCount, EntityMention, EntityQuery, MentionHit, Related, Result, StoreError,
};
use rusqlite::{Connection, Row, params};

/// Document columns, in the order the row mappers read them.
pub const DOCUMENT_COLUMNS: &str = "d.id, l.name, d.source, d.source_kind, d.format, d.title, d.content_hash, \
     d.metadata, d.page_count, d.chunk_count, d.char_count, d.ingested_at";
const DOCUMENT_COLUMN_COUNT: usize = 12;

/// Chunk columns, in the order `chunk_from_row` reads them.
pub const CHUNK_COLUMNS: &str = "c.document_id, c.idx, c.count, c.text, c.context, c.char_start, c.char_end, \
     c.page_start, c.page_end, c.section_path, c.token_count";

fn conversion(index: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Text,
        format!("invalid {what}").into(),
    )
}

fn json_map(
    text: &str,
    index: usize,
) -> rusqlite::Result<serde_json::Map<String, serde_json::Value>> {
    serde_json::from_str(text).map_err(|_| conversion(index, "metadata"))
}

/// A document summary from `DOCUMENT_COLUMNS` starting at column `at`.
pub fn summary_from_row_at(r: &Row<'_>, at: usize) -> rusqlite::Result<DocumentSummary> {
    let id: String = r.get(at)?;
    let library: String = r.get(at + 1)?;
    let kind: String = r.get(at + 3)?;
    Ok(DocumentSummary {
        id: DocumentId::parse(&id).ok_or_else(|| conversion(at, "document id"))?,
        library: LibraryName::new(library).map_err(|_| conversion(at + 1, "library name"))?,
        source: r.get(at + 2)?,
        source_kind: SourceKind::parse(&kind).ok_or_else(|| conversion(at + 3, "source kind"))?,
        format: r.get(at + 4)?,
        title: r.get(at + 5)?,
        content_hash: r.get(at + 6)?,
        metadata: json_map(&r.get::<_, String>(at + 7)?, at + 7)?,
        page_count: r.get(at + 8)?,
        chunk_count: r.get(at + 9)?,
        char_count: r.get::<_, i64>(at + 10)? as u64,
        ingested_at: r.get(at + 11)?,
    })
}

pub fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<DocumentSummary> {
    summary_from_row_at(r, 0)
}

/// A full document from `DOCUMENT_COLUMNS` followed by `d.text`.
pub fn document_from_row(r: &Row<'_>) -> rusqlite::Result<Document> {
    Ok(summary_from_row(r)?.with_text(r.get(DOCUMENT_COLUMN_COUNT)?))
}

pub fn chunk_from_row(r: &Row<'_>) -> rusqlite::Result<Chunk> {
    let document: String = r.get(0)?;
    let document = DocumentId::parse(&document).ok_or_else(|| conversion(0, "document id"))?;
    let index: u32 = r.get(1)?;
    let path: String = r.get(9)?;
    Ok(Chunk {
        id: ChunkId::new(&document, index),
        document_id: document,
        index,
        count: r.get(2)?,
        text: r.get(3)?,
        context: r.get(4)?,
        char_start: r.get::<_, i64>(5)? as u64,
        char_end: r.get::<_, i64>(6)? as u64,
        page_start: r.get(7)?,
        page_end: r.get(8)?,
        section_path: serde_json::from_str(&path).map_err(|_| conversion(9, "section path"))?,
        token_count: r.get(10)?,
    })
}

pub fn insert_document(tx: &Connection, library_id: i64, d: &Document) -> Result<()> {
    let metadata =
        serde_json::to_string(&d.metadata).map_err(|e| StoreError::io("document metadata", e))?;
    tx.prepare_cached(
        "INSERT INTO documents (id, library_id, source, source_kind, format, title, content_hash, metadata,
                                page_count, chunk_count, char_count, text, ingested_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .and_then(|mut s| {
        s.execute(params![
            d.id.as_str(),
            library_id,
            d.source,
            d.source_kind.as_str(),
            d.format,
            d.title,
            d.content_hash,
            metadata,
            d.page_count,
            d.chunk_count,
            d.text.chars().count() as i64,
            d.text,
            d.ingested_at
        ])
    })
    .map_err(|e| StoreError::io("writing a document", e))?;
    index_metadata(tx, d.id.as_str())
}

/// (Re)writes a document's rows in the metadata index.
pub fn index_metadata(tx: &Connection, id: &str) -> Result<()> {
    tx.prepare_cached("DELETE FROM metadata_values WHERE document_id = ?1")
        .and_then(|mut s| s.execute([id]))
        .and_then(|_| tx.prepare_cached(&crate::schema::index_metadata_sql("d.id = ?1")))
        .and_then(|mut s| s.execute([id]))
        .map_err(|e| StoreError::io("indexing a document's metadata", e))?;
    Ok(())
}

pub fn insert_chunk(tx: &Connection, c: &Chunk, vector: &[u8]) -> Result<()> {
    let path =
        serde_json::to_string(&c.section_path).map_err(|e| StoreError::io("section path", e))?;
    tx.prepare_cached(
        "INSERT INTO chunks (document_id, idx, count, text, context, char_start, char_end, page_start, page_end,
                             section_path, section, token_count, vector)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .and_then(|mut s| {
        s.execute(params![
            c.document_id.as_str(),
            c.index,
            c.count,
            c.text,
            c.context,
            c.char_start as i64,
            c.char_end as i64,
            c.page_start,
            c.page_end,
            path,
            join_section_path(&c.section_path),
            c.token_count,
            vector
        ])
    })
    .map_err(|e| StoreError::io("writing a chunk", e))?;
    Ok(())
}

/// Vectors are stored as little-endian f32 bytes.
pub fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The dot product of `query` with a stored vector, read in place.
pub fn dot_with_bytes(query: &[f32], bytes: &[u8]) -> f32 {
    query
        .iter()
        .zip(bytes.chunks_exact(4))
        .map(|(q, b)| q * f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .sum()
}

pub fn vector_from_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Writes a document's entity mentions (in its write's transaction).
pub fn insert_mentions(
    tx: &Connection,
    library_id: i64,
    document: &str,
    mentions: &[EntityMention],
) -> Result<()> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO entity_mentions (library_id, document_id, entity, kind, chunk, start, stop)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .map_err(|e| StoreError::io("writing entity mentions", e))?;
    for m in mentions {
        insert
            .execute(params![
                library_id, document, m.entity, m.kind, m.chunk, m.start, m.end
            ])
            .map_err(|e| StoreError::io("writing entity mentions", e))?;
    }
    Ok(())
}

fn read<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    conn.prepare_cached(sql)
        .and_then(|mut s| s.query_map(params, row)?.collect())
        .map_err(|e| StoreError::io("reading entities", e))
}

/// A library's entities by mentions (see `Store::entities`).
pub fn entities(
    conn: &Connection,
    library_id: i64,
    query: &EntityQuery<'_>,
    limit: usize,
) -> Result<Vec<EntityCount>> {
    // A prefix is a range of the (binary-collated) keys: the index serves it.
    let (from, to) = match query.prefix {
        Some(p) => (Some(p.to_string()), folio_store::prefix_end(p)),
        None => (None, None),
    };
    read(
        conn,
        "SELECT entity, min(kind), count(*), count(DISTINCT document_id) FROM entity_mentions
          WHERE library_id = ?1 AND (?2 IS NULL OR kind = ?2)
            AND (?3 IS NULL OR entity >= ?3) AND (?4 IS NULL OR entity < ?4)
          GROUP BY entity ORDER BY count(*) DESC, entity LIMIT ?5",
        params![library_id, query.kind, from, to, limit as i64],
        |r| {
            Ok(EntityCount {
                entity: r.get(0)?,
                kind: r.get(1)?,
                mentions: r.get::<_, i64>(2)? as u64,
                documents: r.get::<_, i64>(3)? as u64,
            })
        },
    )
}

/// Where an entity is mentioned (see `Store::mentions_of`).
pub fn mentions_of(
    conn: &Connection,
    library_id: i64,
    entity: &str,
    limit: usize,
) -> Result<Vec<MentionHit>> {
    read(
        conn,
        "SELECT document_id, chunk, start, stop FROM entity_mentions
          WHERE library_id = ?1 AND entity = ?2
          ORDER BY document_id, chunk, start LIMIT ?3",
        params![library_id, entity, limit as i64],
        |r| {
            Ok(MentionHit {
                document_id: DocumentId::parse(&r.get::<_, String>(0)?)
                    .ok_or_else(|| conversion(0, "document id"))?,
                chunk: r.get(1)?,
                start: r.get(2)?,
                end: r.get(3)?,
            })
        },
    )
}

/// Entities sharing chunks with one (see `Store::related`).
pub fn related(
    conn: &Connection,
    library_id: i64,
    entity: &str,
    limit: usize,
) -> Result<Vec<Related>> {
    read(
        conn,
        "SELECT r.entity, r.kind, r.shared,
                (SELECT count(DISTINCT x.document_id || ':' || x.chunk) FROM entity_mentions x
                  WHERE x.library_id = ?1 AND x.entity = r.entity)
           FROM (SELECT o.entity, min(o.kind) AS kind,
                        count(DISTINCT o.document_id || ':' || o.chunk) AS shared
                   FROM entity_mentions m
                   JOIN entity_mentions o ON o.document_id = m.document_id AND o.chunk = m.chunk
                  WHERE m.library_id = ?1 AND m.entity = ?2 AND o.entity <> ?2
                  GROUP BY o.entity ORDER BY shared DESC, o.entity LIMIT ?3) r
          ORDER BY r.shared DESC, r.entity",
        params![library_id, entity, limit as i64],
        |r| {
            Ok(Related {
                entity: r.get(0)?,
                kind: r.get(1)?,
                chunks: r.get::<_, i64>(2)? as u64,
                entity_chunks: r.get::<_, i64>(3)? as u64,
            })
        },
    )
}

/// A document's mentions (see `Store::document_mentions`).
pub fn document_mentions(conn: &Connection, document: &str) -> Result<Vec<EntityMention>> {
    read(
        conn,
        "SELECT entity, kind, chunk, start, stop FROM entity_mentions
          WHERE document_id = ?1 ORDER BY chunk, start, entity",
        [document],
        |r| {
            Ok(EntityMention {
                entity: r.get(0)?,
                kind: r.get(1)?,
                chunk: r.get(2)?,
                start: r.get(3)?,
                end: r.get(4)?,
            })
        },
    )
}
