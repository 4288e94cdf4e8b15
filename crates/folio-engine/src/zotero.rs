//! Zotero libraries: items of a local Zotero data directory become
//! documents — each PDF/HTML/EPUB/image attachment one document carrying its
//! item's citation metadata (citekey, DOI, authors, year, tags,
//! collections), an item without a usable file one document of its title and
//! abstract. Re-running is incremental: unchanged attachments are skipped
//! (edited metadata is refreshed without re-embedding).

use std::path::PathBuf;

use folio_core::LibraryName;
use folio_extract::Format;
use folio_source::zotero::{ZoteroFilter, read_library};
use serde_json::{Map, Value};

use crate::{Engine, EngineError, IngestReport, IngestRequest, IngestTarget, Progress, Result};

#[derive(Debug, Clone)]
pub struct ZoteroRequest {
    /// The Zotero data directory (holding zotero.sqlite and storage/).
    pub dir: PathBuf,
    pub library: LibraryName,
    pub collection: Option<String>,
    pub tag: Option<String>,
    pub force: bool,
    /// OCR languages for items that name none.
    pub ocr_languages: Vec<String>,
}

/// The ingestion targets for a Zotero library's items.
pub fn zotero_targets(items: Vec<folio_source::zotero::ZoteroItem>) -> Vec<IngestTarget> {
    let mut targets = Vec::new();
    for item in items {
        let files: Vec<_> = item
            .attachments
            .iter()
            .filter(|a| {
                a.path
                    .extension()
                    .and_then(|e| e.to_str())
                    .and_then(Format::from_extension)
                    .is_some_and(|f| {
                        matches!(f, Format::Pdf | Format::Html | Format::Epub | Format::Image)
                    })
            })
            .collect();
        for attachment in &files {
            targets.push(IngestTarget::Item {
                locator: format!("zotero:{}/{}", item.key, attachment.key),
                path: Some(attachment.path.clone()),
                text: None,
                title: item.title.clone(),
                metadata: item.metadata.clone(),
            });
        }
        if files.is_empty()
            && let Some(abstract_note) = &item.abstract_note
        {
            let title = item.title.clone().unwrap_or_else(|| item.key.clone());
            let mut metadata: Map<String, Value> = item.metadata.clone();
            metadata.insert("abstract_only".into(), Value::Bool(true));
            targets.push(IngestTarget::Item {
                locator: format!("zotero:{}", item.key),
                path: None,
                text: Some(format!("# {title}\n\n{abstract_note}\n")),
                title: Some(title),
                metadata,
            });
        }
    }
    targets
}

impl Engine {
    /// Ingests the items of a Zotero data directory (read-only: the
    /// database is copied before it is read).
    pub fn ingest_zotero(
        &self,
        request: &ZoteroRequest,
        progress: &dyn Progress,
    ) -> Result<IngestReport> {
        self.writable("ingesting")?;
        let dir = self.roots.confine(&request.dir)?;
        let scratch = self.config.data_dir.join("tmp").join(format!(
            "zotero-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| EngineError::new(folio_core::ErrorCode::Storage, e.to_string()))?;
        let filter = ZoteroFilter {
            collection: request.collection.clone(),
            tag: request.tag.clone(),
        };
        let items = read_library(dir.as_path(), &filter, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        let targets = zotero_targets(items?);
        self.ingest(
            &IngestRequest {
                library: request.library.clone(),
                targets,
                metadata: Map::new(),
                title: None,
                force: request.force,
                archives: false,
                ocr_languages: request.ocr_languages.clone(),
                dedup: crate::ingest::Dedup::Content,
                allow_private_urls: None,
                keep_items: true,
            },
            progress,
        )
    }
}
