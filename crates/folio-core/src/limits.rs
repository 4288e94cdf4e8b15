//! Limits are data: one validated structure holds every bound folio enforces,
//! so the CLI, the servers and the tests read and override them in one place.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Every limit folio enforces on input and output. Build with `Limits::default()`
/// and override fields from configuration; call `validate` after overriding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Limits {
    /// Largest file accepted for ingestion, in bytes.
    pub max_file_bytes: u64,
    /// Largest total decompressed size of a container format (DOCX, EPUB, ...).
    pub max_decompressed_bytes: u64,
    /// Largest decompressed/compressed ratio of one zip member: a bomb guard.
    pub max_compression_ratio: u64,
    /// Pages read from one paged document.
    pub max_pages: u32,
    /// Chunks produced from one document.
    pub max_chunks_per_document: u32,
    /// Characters in a query.
    pub max_query_chars: usize,
    /// Results per search request.
    pub max_top_k: usize,
    /// Bytes fetched from one URL.
    pub max_url_bytes: u64,
    /// Time allowed for one URL fetch, in seconds.
    pub url_timeout_secs: u64,
    /// Redirects followed for one URL.
    pub max_redirects: u32,
    /// Pixels of one image page (width × height), checked from its header
    /// before anything decodes it.
    pub max_image_pixels: u64,
    /// Scanned pages OCR'd in one document, and figure images (later ones
    /// are left unread, with a warning). Extraction reads no figure image
    /// when it is 0: the engine asks so when OCR is off.
    pub max_ocr_pages: u32,
    /// Time allowed to rasterise, or to read, one scanned page, in seconds.
    pub ocr_page_timeout_secs: u64,
    /// Time allowed to extract one document's text, in seconds: a parser
    /// still running then is stopped and the document fails with `timeout`.
    pub extract_timeout_secs: u64,
    /// Address space of the process that extracts one document, in bytes: a
    /// parser that needs more fails the document with `too_large`.
    pub max_extract_memory_bytes: u64,
    /// Time allowed to look one quote up, in seconds.
    pub quote_timeout_secs: u64,
    /// Refuse to start when documents cannot be parsed in the sandboxed
    /// worker process (folio cannot re-execute itself), rather than parse
    /// them in process with a warning.
    pub require_sandbox: bool,
    /// Entity mentions kept per chunk (declared and found names each);
    /// more are left out with a warning.
    pub max_entity_mentions_per_chunk: usize,
    /// Entity mentions kept per document.
    pub max_entity_mentions_per_document: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 200 * 1024 * 1024,
            max_decompressed_bytes: 500 * 1024 * 1024,
            max_compression_ratio: 200,
            max_pages: 5_000,
            max_chunks_per_document: 20_000,
            max_query_chars: 4_000,
            max_top_k: 100,
            max_url_bytes: 50 * 1024 * 1024,
            url_timeout_secs: 30,
            max_redirects: 5,
            max_image_pixels: 150_000_000,
            max_ocr_pages: 2_000,
            ocr_page_timeout_secs: 120,
            extract_timeout_secs: 120,
            max_extract_memory_bytes: 4 * 1024 * 1024 * 1024,
            quote_timeout_secs: 30,
            require_sandbox: false,
            max_entity_mentions_per_chunk: 200,
            max_entity_mentions_per_document: 5_000,
        }
    }
}

impl Limits {
    /// The most results one search can serve: each retriever is asked for
    /// at most this many candidates, and a page never holds more.
    pub const TOP_K_CEILING: usize = 1_000;

    /// Checks that every limit is positive and within what folio can serve.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_top_k > Self::TOP_K_CEILING {
            return Err(format!(
                "limit max_top_k is {}; a search serves at most {} results",
                self.max_top_k,
                Self::TOP_K_CEILING
            ));
        }
        let zero = [
            ("max_file_bytes", self.max_file_bytes == 0),
            ("max_decompressed_bytes", self.max_decompressed_bytes == 0),
            ("max_compression_ratio", self.max_compression_ratio == 0),
            ("max_pages", self.max_pages == 0),
            ("max_chunks_per_document", self.max_chunks_per_document == 0),
            ("max_query_chars", self.max_query_chars == 0),
            ("max_top_k", self.max_top_k == 0),
            ("max_url_bytes", self.max_url_bytes == 0),
            ("url_timeout_secs", self.url_timeout_secs == 0),
            ("max_image_pixels", self.max_image_pixels == 0),
            ("ocr_page_timeout_secs", self.ocr_page_timeout_secs == 0),
            ("extract_timeout_secs", self.extract_timeout_secs == 0),
            (
                "max_extract_memory_bytes",
                self.max_extract_memory_bytes == 0,
            ),
            ("quote_timeout_secs", self.quote_timeout_secs == 0),
            (
                "max_entity_mentions_per_chunk",
                self.max_entity_mentions_per_chunk == 0,
            ),
            (
                "max_entity_mentions_per_document",
                self.max_entity_mentions_per_document == 0,
            ),
        ];
        match zero.iter().find(|(_, is_zero)| *is_zero) {
            Some((name, _)) => Err(format!("limit {name} must be positive")),
            None => Ok(()),
        }
    }

    pub fn url_timeout(&self) -> Duration {
        Duration::from_secs(self.url_timeout_secs)
    }
}
