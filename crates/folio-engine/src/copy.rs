//! Copying a library between stores (embedded ⇄ PostgreSQL) with its
//! vectors: nothing is re-embedded, so a copy takes the time of reading and
//! writing, and the copy searches exactly as the original.

use std::path::PathBuf;

use folio_core::LibraryName;
use folio_store::{NewDocument, PutOutcome, Store, StoreError};
use folio_store_embedded::{Access, EmbeddedStore};
use serde::Serialize;

use crate::{Engine, Progress, Result};

/// Where a copy reads from.
#[derive(Debug, Clone)]
pub enum StoreLocation {
    /// An embedded store's data directory (opened read-only).
    Directory(PathBuf),
    /// A PostgreSQL server.
    Url(String),
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CopyReport {
    pub library: String,
    pub documents: u64,
    pub copied: u64,
    /// Already in the destination with the same content (a resumed copy).
    pub unchanged: u64,
    pub chunks: u64,
}

/// Documents read and written per transaction.
const BATCH: u64 = 32;

impl Engine {
    /// Copies `library` from `from` into this engine's store. Documents
    /// already there with the same content are left alone, so an
    /// interrupted copy resumes where it stopped; each batch commits whole.
    pub fn copy_library(
        &self,
        from: &StoreLocation,
        library: &LibraryName,
        progress: &dyn Progress,
    ) -> Result<CopyReport> {
        self.writable("copying a library")?;
        let source: Box<dyn Store> = match from {
            StoreLocation::Directory(dir) => {
                // Opening creates a store where there is none: refuse first.
                if !dir.join("folio.sqlite").is_file() {
                    return Err(StoreError::InvalidArgument(format!(
                        "{} is not a folio data directory (it has no folio.sqlite)",
                        dir.display()
                    ))
                    .into());
                }
                Box::new(EmbeddedStore::open(dir, Access::ReadOnly)?)
            }
            StoreLocation::Url(url) => Box::new(folio_store_postgres::PostgresStore::connect(url)?),
        };
        let info = source.library(library)?;
        let target = self.store();
        target.create_library(library, &info.space)?;
        if let Some(schema) = source.record_schema(library)? {
            target.set_record_schema(library, Some(&schema))?;
        }
        let declared = source.declared_entities(library)?;
        if !declared.is_empty() {
            target.set_declared_entities(library, &declared)?;
        }
        let mut report = CopyReport {
            library: library.to_string(),
            documents: info.document_count,
            ..Default::default()
        };
        progress.start(info.document_count);
        let mut offset = 0;
        loop {
            if progress.cancelled() {
                break;
            }
            let (page, _) = source.documents(library, offset, BATCH)?;
            if page.is_empty() {
                break;
            }
            offset += page.len() as u64;
            let mut batch = Vec::with_capacity(page.len());
            for summary in &page {
                if target.content_hash(&summary.id)?.as_deref() == Some(&summary.content_hash) {
                    report.unchanged += 1;
                    continue;
                }
                let document = source.document(&summary.id)?;
                let chunks = source.chunks(&summary.id, 0..document.chunk_count)?;
                let vectors = source.vectors(&summary.id)?;
                let mentions = source.document_mentions(&summary.id)?;
                batch.push(NewDocument {
                    document,
                    chunks,
                    vectors,
                    space: info.space.clone(),
                    mentions,
                    original: source.original(&summary.id)?,
                });
            }
            let chunks: u64 = batch.iter().map(|d| d.chunks.len() as u64).sum();
            if !batch.is_empty() {
                let outcomes = target.put_documents(batch, false)?;
                report.copied += outcomes
                    .iter()
                    .filter(|o| **o != PutOutcome::Skipped)
                    .count() as u64;
                report.unchanged += outcomes
                    .iter()
                    .filter(|o| **o == PutOutcome::Skipped)
                    .count() as u64;
                report.chunks += chunks;
            }
            let last = page.last().map_or("", |d| d.source.as_str());
            progress.advance(page.len() as u64, last);
        }
        target.flush()?;
        progress.finish();
        Ok(report)
    }
}
