//! The storage boundary: the `Store` trait every backend implements (the
//! embedded default, PostgreSQL), the types it speaks, and — behind the
//! `conformance` feature — the one test suite every backend must pass.
//!
//! Guarantees a backend gives:
//! - a write returns only once it is durable (it would survive kill -9);
//! - a document is atomic: its chunks, postings and vectors appear together
//!   or not at all, and a replacement swaps old for new in one step;
//! - a library is pinned to one embedding space; writes in another space are
//!   refused with `EmbeddingMismatch`;
//! - filters restrict the candidate set before ranking.

#[cfg(feature = "conformance")]
pub mod conformance;
mod error;
pub mod facets;

use std::ops::Range;

pub use error::StoreError;
use folio_core::{
    Chunk, ChunkId, Document, DocumentId, DocumentSummary, EmbeddingSpace, Filter, LibraryName,
    NeighbourOrder, RecordSchema,
};
pub use folio_entities::Declared;
use serde::{Deserialize, Serialize};

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The document field a filter field names, as a column of the documents
/// table (aliased `d`) every SQL backend keeps; None for metadata keys.
pub fn document_column(field: &str) -> Option<&'static str> {
    Some(match field {
        "format" => "d.format",
        "source_kind" => "d.source_kind",
        "source" => "d.source",
        "title" => "d.title",
        "document_id" => "d.id",
        "content_hash" => "d.content_hash",
        "ingested_at" => "d.ingested_at",
        "page_count" => "d.page_count",
        "chunk_count" => "d.chunk_count",
        _ => return None,
    })
}

/// The metadata key a filter field names: `metadata.KEY` names the key KEY
/// even where a document field has that name (a record's own
/// `content_hash`).
pub fn metadata_key(field: &str) -> &str {
    field.strip_prefix("metadata.").unwrap_or(field)
}

/// Checks mentions against the byte lengths of their document's chunks:
/// each within its chunk, with an entity key and a type.
pub fn validate_mentions(
    id: &DocumentId,
    mentions: &[EntityMention],
    chunk_lengths: &[usize],
) -> Result<()> {
    for m in mentions {
        let fits = chunk_lengths
            .get(m.chunk as usize)
            .is_some_and(|&len| m.start <= m.end && (m.end as usize) <= len);
        if !fits || m.entity.is_empty() || m.kind.is_empty() {
            return Err(StoreError::InvalidArgument(format!(
                "document {id}: a mention of {:?} lies outside its chunk {}",
                m.entity, m.chunk
            )));
        }
    }
    Ok(())
}

/// The least string greater than every string starting with `prefix`
/// (None when there is none: every key from `prefix` on qualifies).
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// Work one process holds among all (see `Store::claim`).
pub trait Claim: Send + Sync {
    /// Whether it still holds (a database session can end under it).
    fn held(&self) -> bool;
}

/// A claim nobody else can contend for.
pub struct Granted;

impl Claim for Granted {
    fn held(&self) -> bool {
        true
    }
}

/// Why a filter with conditions on chunks is refused where documents are
/// selected.
pub const CHUNK_CONDITIONS: &str =
    "section_prefix and entity filter chunks; they do not apply to documents";

/// Escapes `%`, `_` and `\\` for a LIKE pattern with `ESCAPE '\\'`.
pub fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Checks a document before a backend writes it: one vector per chunk, of
/// the library's dimension and finite, chunks numbered in order.
pub fn validate(new: &NewDocument, space: &EmbeddingSpace) -> Result<()> {
    let invalid = |m: String| {
        Err(StoreError::InvalidArgument(format!(
            "document {}: {m}",
            new.document.id
        )))
    };
    if new.chunks.len() != new.vectors.len() {
        return invalid(format!(
            "{} chunks but {} vectors",
            new.chunks.len(),
            new.vectors.len()
        ));
    }
    if new.chunks.is_empty() {
        return invalid("no chunks".into());
    }
    if let Some(v) = new.vectors.iter().find(|v| v.len() != space.dim as usize) {
        return invalid(format!(
            "a vector of dimension {} in a {}-d library",
            v.len(),
            space.dim
        ));
    }
    if new.vectors.iter().flatten().any(|x| !x.is_finite()) {
        return invalid("a vector holds NaN or infinity".into());
    }
    let count = new.chunks.len() as u32;
    let lengths: Vec<usize> = new.chunks.iter().map(|c| c.text.len()).collect();
    validate_mentions(&new.document.id, &new.mentions, &lengths)?;
    for (i, chunk) in new.chunks.iter().enumerate() {
        if chunk.document_id != new.document.id || chunk.index != i as u32 || chunk.count != count {
            return invalid(format!(
                "chunk {} is out of place (index {}, count {})",
                chunk.id, chunk.index, chunk.count
            ));
        }
    }
    Ok(())
}

/// A library and its counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryInfo {
    pub name: LibraryName,
    pub space: EmbeddingSpace,
    pub created_at: String,
    pub document_count: u64,
    pub chunk_count: u64,
}

/// A document with everything needed to index it. `vectors[i]` belongs to
/// `chunks[i]` and lives in `space`.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub document: Document,
    pub chunks: Vec<Chunk>,
    pub vectors: Vec<Vec<f32>>,
    pub space: EmbeddingSpace,
    /// The entities its chunks mention: written in the document's
    /// transaction and removed with it.
    pub mentions: Vec<EntityMention>,
    /// The source's bytes, kept with the document when folio could not read
    /// them again (an uploaded PDF, whose pages are shown as images);
    /// written, replaced and removed with it.
    pub original: Option<Vec<u8>>,
}

/// A mention of an entity in one of a document's chunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityMention {
    /// The entity's key in its library: a declared entity's folded name, or
    /// a name found in text, folded.
    pub entity: String,
    /// Its type (organization, person, product, place, other, a declared
    /// type of the user's, or `name` for a name found by its shape).
    pub kind: String,
    /// The chunk's index in the document.
    pub chunk: u32,
    /// Byte offsets into the chunk's text.
    pub start: u32,
    pub end: u32,
}

/// An entity of a library and how often it is mentioned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityCount {
    pub entity: String,
    pub kind: String,
    pub mentions: u64,
    pub documents: u64,
}

/// Which entities `Store::entities` lists: of a type, whose key starts
/// with a (folded) prefix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntityQuery<'a> {
    pub kind: Option<&'a str>,
    pub prefix: Option<&'a str>,
}

/// Where an entity is mentioned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MentionHit {
    pub document_id: DocumentId,
    pub chunk: u32,
    pub start: u32,
    pub end: u32,
}

/// An entity mentioned in the same chunks as another, and in how many.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Related {
    pub entity: String,
    pub kind: String,
    /// Chunks that mention both.
    pub chunks: u64,
    /// Chunks that mention this one (with or without the other).
    pub entity_chunks: u64,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PutOutcome {
    /// A new document.
    Indexed,
    /// The source was known with other content; the old version is gone.
    Replaced,
    /// The source was known with the same content hash; nothing changed.
    Skipped,
}

impl PutOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            PutOutcome::Indexed => "indexed",
            PutOutcome::Replaced => "replaced",
            PutOutcome::Skipped => "skipped",
        }
    }
}

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25 {
    pub k1: f32,
    pub b: f32,
}

impl Default for Bm25 {
    fn default() -> Self {
        Bm25 { k1: 1.2, b: 0.75 }
    }
}

/// The language a library reads a query in, and the language most of its
/// chunks are in: ISO 639-1 codes ("en" for an empty library and an
/// English-looking query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryLanguage {
    pub query: String,
    pub library: String,
}

/// One retrieved chunk and its retriever score (BM25, or cosine similarity).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub chunk: ChunkId,
    pub score: f32,
}

/// A chunk with the summary of its document, for building results.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkWithDocument {
    pub chunk: Chunk,
    pub document: DocumentSummary,
}

/// Aggregate statistics of one library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryStats {
    pub info: LibraryInfo,
    /// Documents per extraction format.
    pub formats: Vec<(String, u64)>,
    pub total_chars: u64,
    pub total_tokens: u64,
    /// The most recent ingestion time.
    pub last_ingested_at: Option<String>,
    /// Backend-specific index details (sizes, ANN or exact, watermarks).
    pub index: serde_json::Value,
}

/// A library's derived indexes checked against its source of truth: every
/// chunk of every document must be in each retriever, and nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Integrity {
    pub library: String,
    pub documents: u64,
    pub chunks: u64,
    /// One line per defect (a document with chunks missing from an index,
    /// chunks an index holds that no document has); empty when whole.
    pub problems: Vec<String>,
}

/// Documents grouped by the values of some fields, with statistics per
/// group. A list (tags) field used for grouping puts a document in one group
/// per tag.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FacetRequest {
    /// Fields whose value combinations form the groups; none = one group.
    pub group_by: Vec<String>,
    /// Fields to summarise per group: min and max (numbers, dates, strings),
    /// and the sum of numeric values.
    pub stats: Vec<String>,
    /// A list (tags) field whose most frequent values each group reports,
    /// and how many of them.
    pub top_values: Option<(String, usize)>,
    /// Which documents count. Chunk conditions (section prefix) do not apply.
    pub filter: Filter,
    /// Groups with fewer documents are left out.
    pub min_count: u64,
    /// Most groups returned (largest first).
    pub limit: usize,
}

/// Summary of one field within a group. `sum` is over numeric values only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldStats {
    pub min: serde_json::Value,
    pub max: serde_json::Value,
    pub sum: Option<f64>,
    /// Documents with a value for the field.
    pub count: u64,
}

/// One group: its key (one value per `group_by` field), its document count,
/// statistics and top values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FacetGroup {
    pub key: Vec<serde_json::Value>,
    pub count: u64,
    pub stats: std::collections::BTreeMap<String, FieldStats>,
    pub top_values: Vec<(String, u64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Facets {
    /// Largest first, ties by key.
    pub groups: Vec<FacetGroup>,
    /// Groups with at least `min_count` documents, before `limit`.
    pub total_groups: u64,
    /// Documents that passed the filter.
    pub documents: u64,
}

/// An access key as the store keeps it: its name and what it may do, and
/// the SHA-256 of the key (hex), never the key itself. Every server on one
/// store shares them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Unique among a store's keys; what logs and audit lines name.
    pub name: String,
    /// SHA-256 of the key, 64 hex digits.
    pub hash: String,
    /// The scopes granted (`search`, `ingest`, `admin`).
    pub scopes: Vec<String>,
    /// The libraries it may touch; None: every library.
    pub libraries: Option<Vec<String>>,
    /// RFC 3339; None: never.
    pub expires_at: Option<String>,
    /// Calls per minute it may make; None: the server's default.
    pub rate_per_minute: Option<u32>,
    pub created_at: String,
    /// When it was last accepted (RFC 3339), as far as the store has been
    /// told (see `touch_key`).
    pub last_used_at: Option<String>,
}

/// A storage backend. All methods are synchronous and may block on I/O;
/// async callers run them on a blocking pool.
pub trait Store: Send + Sync {
    /// Creates the library pinned to `space`, or returns it when it exists in
    /// the same space. `EmbeddingMismatch` when it exists in another space.
    fn create_library(&self, name: &LibraryName, space: &EmbeddingSpace) -> Result<LibraryInfo>;

    /// `LibraryNotFound` when there is no such library.
    fn library(&self, name: &LibraryName) -> Result<LibraryInfo>;

    /// All libraries, by name.
    fn libraries(&self) -> Result<Vec<LibraryInfo>>;

    /// Deletes a library with all its documents.
    fn delete_library(&self, name: &LibraryName) -> Result<()>;

    /// The content hash stored for a document, if it exists: lets a caller
    /// skip extraction and embedding of unchanged sources.
    fn content_hash(&self, id: &DocumentId) -> Result<Option<String>>;

    /// Writes documents, each atomically; all of them in one durable commit.
    /// A document whose id exists with the same content hash is skipped
    /// unless `force`; with another hash it is replaced. The library must
    /// exist and be pinned to each document's space.
    fn put_documents(&self, documents: Vec<NewDocument>, force: bool) -> Result<Vec<PutOutcome>>;

    /// `NotFound` when there is no such document.
    fn document(&self, id: &DocumentId) -> Result<Document>;

    /// The source bytes kept with a document (`NewDocument::original`);
    /// None when none were kept or there is no such document.
    fn original(&self, id: &DocumentId) -> Result<Option<Vec<u8>>>;

    /// A page of a library's documents ordered by source, and the total count.
    fn documents(
        &self,
        library: &LibraryName,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<DocumentSummary>, u64)>;

    /// Deletes a document; `NotFound` when there is no such document.
    fn delete_document(&self, id: &DocumentId) -> Result<()>;

    /// The document's chunks whose index lies in `range`, in order.
    fn chunks(&self, id: &DocumentId, range: Range<u32>) -> Result<Vec<Chunk>>;

    /// The vectors of a document's chunks, in chunk order: a library copied
    /// to another backend keeps its vectors, nothing is re-embedded.
    /// `NotFound` when there is no such document.
    fn vectors(&self, id: &DocumentId) -> Result<Vec<Vec<f32>>>;

    /// Chunks by id with their documents, in the order asked; unknown ids
    /// are left out.
    fn chunks_with_documents(&self, ids: &[ChunkId]) -> Result<Vec<ChunkWithDocument>>;

    /// The language the library reads `query` in, told among the languages
    /// its chunks are in (`folio_lexical::query_languages`), and the
    /// language most of its chunks are in (`folio_lexical::main_language`).
    fn query_language(&self, library: &LibraryName, query: &str) -> Result<QueryLanguage>;

    /// BM25 over the library's chunks that pass `filter`, best first.
    fn lexical(
        &self,
        library: &LibraryName,
        query: &str,
        filter: &Filter,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<Hit>>;

    /// BM25 over whole documents: a document scores as its title and text
    /// together, with document statistics (the library's documents, their
    /// average length, the documents holding a term), as a reference BM25
    /// ranks a collection. The `k` best documents with a chunk that passes
    /// `filter`, best first, each as its best such chunk by chunk BM25 (a
    /// document none of whose chunks matches: its first), carrying the
    /// document's score.
    fn lexical_documents(
        &self,
        library: &LibraryName,
        query: &str,
        filter: &Filter,
        k: usize,
        bm25: Bm25,
    ) -> Result<Vec<Hit>>;

    /// Reads ahead what the library's first searches would read, into the
    /// store's bounded caches, so that they answer as later ones do: a
    /// server calls it as it starts. Nothing by default (the embedded
    /// store's indexes are memory-mapped or loaded on first use).
    fn warm(&self, library: &LibraryName) -> Result<()> {
        let _ = library;
        Ok(())
    }

    /// Nearest chunks by cosine similarity among those that pass `filter`,
    /// best first. `EmbeddingMismatch` when `vector` has the wrong dimension.
    fn dense(
        &self,
        library: &LibraryName,
        vector: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<Hit>>;

    /// Every chunk of a library with its embedded text (header + text), for
    /// re-embedding during a rebuild.
    fn chunk_texts(&self, library: &LibraryName) -> Result<Vec<(ChunkId, String)>>;

    /// Re-pins a library to `space` and swaps in `vectors` (one per chunk of
    /// the library, as `chunk_texts` listed them) in one commit.
    fn replace_vectors(
        &self,
        library: &LibraryName,
        space: &EmbeddingSpace,
        vectors: Vec<(ChunkId, Vec<f32>)>,
    ) -> Result<()>;

    fn stats(&self, library: &LibraryName) -> Result<LibraryStats>;

    /// The library's record schema, if it declares one.
    fn record_schema(&self, library: &LibraryName) -> Result<Option<RecordSchema>>;

    /// Declares (or with `None` removes) the library's record schema.
    fn set_record_schema(&self, library: &LibraryName, schema: Option<&RecordSchema>)
    -> Result<()>;

    /// Groups and summarises the library's documents (see `FacetRequest`).
    fn facets(&self, library: &LibraryName, request: &FacetRequest) -> Result<Facets>;

    /// The documents just before and just after `id` in the order of
    /// `order.order_by` (ties broken by document id) among the documents
    /// whose `order.group_by` fields equal this one's. Documents without a
    /// value for the order field have no neighbours.
    fn neighbours(
        &self,
        id: &DocumentId,
        order: &NeighbourOrder,
    ) -> Result<(Option<DocumentSummary>, Option<DocumentSummary>)>;

    /// Up to `limit` documents of the library that pass `filter`, ordered by
    /// source. Chunk conditions (section prefix) do not apply.
    fn find_documents(
        &self,
        library: &LibraryName,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<DocumentSummary>>;

    /// Replaces a document's metadata (citation fields, source locators)
    /// without touching its text, chunks or vectors. `NotFound` when there
    /// is no such document.
    fn update_metadata(
        &self,
        id: &DocumentId,
        metadata: serde_json::Map<String, serde_json::Value>,
    ) -> Result<()>;

    /// Persists derived state where that pays off (the embedded backend saves
    /// a vector index whose unsaved tail is large). Committed documents are
    /// durable and visible to other processes without it. Called at the end
    /// of a batch.
    fn flush(&self) -> Result<()>;

    /// Checks that the library's documents are whole in every index the
    /// backend keeps (after bringing derived indexes up to date, as a
    /// search would). Reads every chunk key: an operator's check, not a
    /// per-request one.
    fn verify(&self, library: &LibraryName) -> Result<Integrity>;

    /// The approximate (ANN index) dense search alone, bypassing the exact
    /// path small libraries take: for measuring the index's recall against
    /// exact search.
    fn dense_graph(&self, library: &LibraryName, vector: &[f32], k: usize) -> Result<Vec<Hit>>;

    /// Bytes the store occupies on disk (the data directory, or the
    /// database on a server).
    fn size_bytes(&self) -> Result<u64>;

    /// Adds an access key; `InvalidArgument` when a key of that name or
    /// hash exists.
    fn put_key(&self, key: &KeyRecord) -> Result<()>;

    /// Every access key, by name.
    fn keys(&self) -> Result<Vec<KeyRecord>>;

    /// The key whose hash is `hash`, if any.
    fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>>;

    /// Removes the key named `name`; false when there is none.
    fn delete_key(&self, name: &str) -> Result<bool>;

    /// Records that the key with `hash` was used at `at` (RFC 3339).
    fn touch_key(&self, hash: &str, at: &str) -> Result<()>;

    /// The entities of `library` (of `query.kind`, keys starting with
    /// `query.prefix`, when given), most mentioned first (then by key), at
    /// most `limit`.
    fn entities(
        &self,
        library: &LibraryName,
        query: &EntityQuery<'_>,
        limit: usize,
    ) -> Result<Vec<EntityCount>>;

    /// The entities `library`'s user declared (`folio entities import`),
    /// in the order given.
    fn declared_entities(&self, library: &LibraryName) -> Result<Vec<Declared>>;

    /// Replaces the declared entities of `library` (mentions are left as
    /// they are: `replace_mentions` relinks documents).
    fn set_declared_entities(&self, library: &LibraryName, entities: &[Declared]) -> Result<()>;

    /// Replaces the mentions of a document's chunks, in one transaction
    /// (the chunks and vectors are left as they are).
    fn replace_mentions(&self, id: &DocumentId, mentions: &[EntityMention]) -> Result<()>;

    /// Where `entity` is mentioned in `library`, by document id and chunk
    /// index, at most `limit`.
    fn mentions_of(
        &self,
        library: &LibraryName,
        entity: &str,
        limit: usize,
    ) -> Result<Vec<MentionHit>>;

    /// The entities mentioned in the same chunks as `entity`, most shared
    /// chunks first (then by key), at most `limit`.
    fn related(&self, library: &LibraryName, entity: &str, limit: usize) -> Result<Vec<Related>>;

    /// The mentions a document's chunks make, in chunk and offset order.
    fn document_mentions(&self, id: &DocumentId) -> Result<Vec<EntityMention>>;

    /// Claims `name` for this process among every process on the store,
    /// until the claim is dropped or the process dies: None while another
    /// holds it. The embedded store has one writing process (its data
    /// directory's owner), so it grants every claim.
    fn claim(&self, name: &str) -> Result<Option<Box<dyn Claim>>> {
        let _ = name;
        Ok(Some(Box::new(Granted)))
    }

    /// A number that changes whenever anything is written, by any process,
    /// for caches of read results; None when the backend cannot tell (then
    /// nothing is cached).
    fn generation(&self) -> Result<Option<u64>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn like_escape_escapes_wildcards() {
        assert_eq!(super::like_escape("50%_a\\"), "50\\%\\_a\\\\");
    }
}
