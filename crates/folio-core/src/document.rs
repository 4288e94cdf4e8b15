//! Documents: one source each, with a stable id, a content hash and metadata.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::library::LibraryName;

/// A document id: 16 hex characters of SHA-256 over the library and the source
/// locator, so the same source in the same library always gets the same id and
/// re-ingesting it is idempotent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DocumentId(String);

impl DocumentId {
    /// The deterministic id of `source` in `library`.
    pub fn derive(library: &LibraryName, source: &str) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(library.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(source.as_bytes());
        DocumentId(hex::encode(&hasher.finalize()[..8]))
    }

    /// Accepts an id given by a user; it must look like one folio made.
    pub fn parse(text: &str) -> Option<Self> {
        (text.len() == 16
            && text
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
        .then(|| DocumentId(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for DocumentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// SHA-256 of the raw content, hex-encoded: the dedup key for a source.
pub fn content_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Where a document came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    File,
    Url,
    Content,
    Record,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::File => "file",
            SourceKind::Url => "url",
            SourceKind::Content => "content",
            SourceKind::Record => "record",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "file" => SourceKind::File,
            "url" => SourceKind::Url,
            "content" => SourceKind::Content,
            "record" => SourceKind::Record,
            _ => return None,
        })
    }
}

/// A stored document: everything but its chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub id: DocumentId,
    pub library: LibraryName,
    /// Source locator: a canonical path, a URL, or a caller-chosen name.
    pub source: String,
    pub source_kind: SourceKind,
    /// Extraction format, e.g. `pdf`, `markdown`, `html`.
    pub format: String,
    pub title: Option<String>,
    pub content_hash: String,
    /// Free metadata and citation fields (authors, year, doi, citekey, url, ...).
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub page_count: Option<u32>,
    pub chunk_count: u32,
    /// The extracted text as Markdown; chunk offsets index into it (in chars).
    pub text: String,
    /// RFC 3339 time of ingestion.
    pub ingested_at: String,
}

impl Document {
    pub fn summary(&self) -> DocumentSummary {
        DocumentSummary {
            id: self.id.clone(),
            library: self.library.clone(),
            source: self.source.clone(),
            source_kind: self.source_kind,
            format: self.format.clone(),
            title: self.title.clone(),
            content_hash: self.content_hash.clone(),
            page_count: self.page_count,
            chunk_count: self.chunk_count,
            char_count: self.text.chars().count() as u64,
            ingested_at: self.ingested_at.clone(),
            metadata: self.metadata.clone(),
        }
    }
}

/// A document without its text: what listings return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentSummary {
    pub id: DocumentId,
    pub library: LibraryName,
    pub source: String,
    pub source_kind: SourceKind,
    pub format: String,
    pub title: Option<String>,
    pub content_hash: String,
    pub page_count: Option<u32>,
    pub chunk_count: u32,
    pub char_count: u64,
    pub ingested_at: String,
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

impl DocumentSummary {
    /// The full document: this summary with its text.
    pub fn with_text(self, text: String) -> Document {
        Document {
            id: self.id,
            library: self.library,
            source: self.source,
            source_kind: self.source_kind,
            format: self.format,
            title: self.title,
            content_hash: self.content_hash,
            metadata: self.metadata,
            page_count: self.page_count,
            chunk_count: self.chunk_count,
            text,
            ingested_at: self.ingested_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_deterministic_and_scoped_by_library() {
        let a = LibraryName::new("a").unwrap();
        let b = LibraryName::new("b").unwrap();
        assert_eq!(
            DocumentId::derive(&a, "/x.pdf"),
            DocumentId::derive(&a, "/x.pdf")
        );
        assert_ne!(
            DocumentId::derive(&a, "/x.pdf"),
            DocumentId::derive(&b, "/x.pdf")
        );
        let id = DocumentId::derive(&a, "/x.pdf");
        assert_eq!(DocumentId::parse(id.as_str()), Some(id));
        assert_eq!(DocumentId::parse("xyz"), None);
    }
}
