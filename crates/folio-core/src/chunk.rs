//! Chunks: spans of a document with their position and structure.

use serde::{Deserialize, Serialize};

use crate::document::DocumentId;

/// A chunk id: `<document id>:<index>`. Deterministic, so writing the same
/// document twice writes the same chunks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChunkId(String);

impl ChunkId {
    pub fn new(document: &DocumentId, index: u32) -> Self {
        ChunkId(format!("{document}:{index}"))
    }

    /// Chunk `index` of the document whose id spells `document` in hex:
    /// one allocation, where a search names hundreds of candidates.
    pub fn of_number(document: u64, index: u32) -> Self {
        ChunkId(format!("{document:016x}:{index}"))
    }

    /// Splits a user-given id into document id and index.
    pub fn parse(text: &str) -> Option<(DocumentId, u32)> {
        let (doc, index) = text.split_once(':')?;
        Some((DocumentId::parse(doc)?, index.parse().ok()?))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ChunkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A span of a document's text, as indexed. What is embedded and indexed is
/// `context` followed by `text`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub id: ChunkId,
    pub document_id: DocumentId,
    /// Position in the document, from 0.
    pub index: u32,
    /// How many chunks the document has.
    pub count: u32,
    pub text: String,
    /// Char offsets into the document text, end exclusive.
    pub char_start: u64,
    pub char_end: u64,
    /// First and last page the chunk touches (1-based), for paged formats.
    pub page_start: Option<u32>,
    pub page_end: Option<u32>,
    /// The heading chain the chunk sits under, outermost first.
    pub section_path: Vec<String>,
    /// The context header embedded and indexed with the text: document title
    /// and section path, one per line.
    pub context: String,
    /// Model tokens in the embedded text (header included).
    pub token_count: u32,
}
