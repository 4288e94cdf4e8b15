//! A PDF document's page as an image, with a cited chunk marked on it. The
//! page is rendered from the bytes the document was indexed from: kept
//! with it (an upload, an archive's member, a message's attachment), or its
//! file when that still holds them (the content hash decides). Renders are one at a time, bounded in time and size, and
//! the last ones are kept in memory.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use folio_core::{ErrorCode, SourceKind};
use folio_ocr::{PageImage, Poppler};

use crate::{Engine, EngineError, Result, parse_document_id};

/// Time each Poppler program has for one page.
const RENDER_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of rendered pages kept in memory.
const CACHE_BYTES: usize = 32 << 20;

/// Rendered pages by (content hash, page, marked chunk), newest last.
#[derive(Default)]
pub(crate) struct PageCache {
    pages: Mutex<VecDeque<(PageKey, Arc<PageImage>)>>,
    /// One render at a time: each is two processes on a whole page.
    rendering: Mutex<()>,
    poppler: std::sync::OnceLock<std::result::Result<Poppler, String>>,
}

type PageKey = (String, u32, Option<u32>);

impl PageCache {
    fn get(&self, key: &PageKey) -> Option<Arc<PageImage>> {
        let pages = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        pages.iter().find(|(k, _)| k == key).map(|(_, p)| p.clone())
    }

    fn put(&self, key: PageKey, page: Arc<PageImage>) {
        let mut pages = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        pages.retain(|(k, _)| *k != key);
        pages.push_back((key, page));
        let mut total: usize = pages.iter().map(|(_, p)| p.png.len()).sum();
        while total > CACHE_BYTES && pages.len() > 1 {
            if let Some((_, old)) = pages.pop_front() {
                total -= old.png.len();
            }
        }
    }
}

impl Engine {
    /// Page `page` (1-based) of the PDF document `id` as a PNG, with the
    /// text of its chunk `chunk` (when given, and on that page) marked.
    pub fn page_image(&self, id: &str, page: u32, chunk: Option<u32>) -> Result<Arc<PageImage>> {
        let id = parse_document_id(id)?;
        let document = self.store.document(&id)?;
        if document.format != "pdf" {
            return Err(EngineError::invalid(format!(
                "page images are made of PDF documents; this one is {}",
                document.format
            )));
        }
        let pages = document.page_count.unwrap_or(0);
        if page == 0 || page > pages {
            return Err(EngineError::invalid(format!(
                "no page {page}: the document has {pages} page(s)"
            )));
        }
        let passage = match chunk {
            Some(index) => {
                let found = self.store.chunks(&id, index..index.saturating_add(1))?;
                let chunk = found.into_iter().next().ok_or_else(|| {
                    EngineError::new(
                        ErrorCode::NotFound,
                        format!("no chunk {index} in document {id}"),
                    )
                })?;
                let on_page = chunk.page_start.unwrap_or(0) <= page
                    && page <= chunk.page_end.or(chunk.page_start).unwrap_or(0);
                on_page.then_some(chunk.text)
            }
            None => None,
        };
        let key = (
            document.content_hash.clone(),
            page,
            chunk.filter(|_| passage.is_some()),
        );
        if let Some(cached) = self.pages.get(&key) {
            return Ok(cached);
        }
        let bytes = self.indexed_bytes(&document)?;
        let poppler = self
            .pages
            .poppler
            .get_or_init(|| Poppler::find().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| EngineError::new(ErrorCode::UnsupportedFormat, e.clone()))?;
        let _turn = self
            .pages
            .rendering
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // A folder of its own in the system's temporary folder: a read-only
        // server writes nothing under its data directory.
        let image = poppler
            .page_image(
                &bytes,
                page,
                passage.as_deref(),
                &std::env::temp_dir(),
                RENDER_TIMEOUT,
            )
            .map_err(|e| EngineError::new(ErrorCode::MalformedInput, e))?;
        let image = Arc::new(image);
        self.pages.put(key, image.clone());
        Ok(image)
    }

    /// The bytes `document` was indexed from: kept with it, or read again
    /// from its file when the file still holds them.
    fn indexed_bytes(&self, document: &folio_core::Document) -> Result<Vec<u8>> {
        if let Some(bytes) = self.store.original(&document.id)? {
            return Ok(bytes);
        }
        let unavailable = |why: &str| {
            EngineError::new(
                ErrorCode::NotFound,
                format!("the PDF's pages cannot be shown: {why}"),
            )
        };
        if document.metadata.contains_key("container") {
            return Err(unavailable(
                "its bytes were not kept (it was ingested before folio kept a container's \
                 PDFs): ingest its container again, with force",
            ));
        }
        if document.source_kind != SourceKind::File {
            return Err(unavailable(
                "its bytes were not kept (it was ingested before folio kept them): ingest it \
                 again",
            ));
        }
        let path = self
            .roots
            .confine(std::path::Path::new(&document.source))
            .map_err(|e| unavailable(&e.to_string()))?;
        let size = std::fs::metadata(path.as_path())
            .map_err(|e| unavailable(&format!("{}: {e}", document.source)))?
            .len();
        if size > self.config.limits.max_file_bytes {
            return Err(unavailable("its file has grown over the size limit"));
        }
        let bytes = std::fs::read(path.as_path())
            .map_err(|e| unavailable(&format!("{}: {e}", document.source)))?;
        if folio_core::content_hash(&bytes) != document.content_hash {
            return Err(unavailable(
                "its file has changed since it was indexed: ingest it again",
            ));
        }
        Ok(bytes)
    }
}
