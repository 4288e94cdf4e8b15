//! Bring-your-own chunks: text and vectors computed elsewhere, validated
//! against the library's embedding space and stored as they are.
//!
//! Each chunk becomes a one-chunk document whose id derives from the caller's
//! chunk id, so writes are idempotent (same id and content: skipped; new
//! content: replaced) and a batch never disturbs chunks stored by another.

use folio_core::{
    Chunk, ChunkId, Document, DocumentId, ErrorCode, LibraryName, SourceKind, content_hash,
};
use folio_store::{NewDocument, PutOutcome, StoreError};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Engine, EngineError, Result};

/// One chunk brought by the caller.
#[derive(Debug, Clone)]
pub struct StoredChunk {
    /// The caller's deterministic chunk id.
    pub id: String,
    pub text: String,
    pub vector: Vec<f32>,
    pub title: Option<String>,
    /// Where the text came from (a path, URL or label); defaults to the id.
    pub source: Option<String>,
    pub page_start: Option<u32>,
    pub page_end: Option<u32>,
    pub section_path: Vec<String>,
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Clone)]
pub struct StoreChunksRequest {
    pub library: LibraryName,
    pub chunks: Vec<StoredChunk>,
    /// The model the caller embedded with; checked against the library's.
    pub model: Option<String>,
    /// Create the library (pinned to the server's model) when it is missing.
    pub create_library: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct StoreChunksReport {
    pub library: String,
    pub model: String,
    /// Chunks written (new or changed).
    pub written: usize,
    /// Chunks already stored with the same content.
    pub unchanged: usize,
}

/// Longest caller chunk id accepted.
const MAX_ID_CHARS: usize = 512;

impl Engine {
    /// Stores the chunks in one commit; a cancelled call (checked just
    /// before it) writes nothing.
    pub fn store_chunks(
        &self,
        request: &StoreChunksRequest,
        progress: &dyn crate::Progress,
    ) -> Result<StoreChunksReport> {
        self.writable("storing chunks")?;
        let info = match self.store.library(&request.library) {
            Ok(info) => info,
            Err(StoreError::LibraryNotFound(_)) if request.create_library => {
                let embedder = self.embedder()?;
                self.store
                    .create_library(&request.library, embedder.space())?
            }
            Err(e) => return Err(e.into()),
        };
        let space = info.space.clone();
        if let Some(model) = &request.model
            && model != &space.model
        {
            return Err(EngineError::new(
                ErrorCode::EmbeddingMismatch,
                format!(
                    "the chunks were embedded with {model:?}; library {} is pinned to {:?}",
                    request.library, space.model
                ),
            ));
        }
        let mut documents = Vec::with_capacity(request.chunks.len());
        let mut seen = std::collections::HashSet::new();
        for chunk in &request.chunks {
            let id = chunk.id.trim();
            if id.is_empty() || id.chars().count() > MAX_ID_CHARS {
                return Err(EngineError::invalid(format!(
                    "a chunk id must be 1 to {MAX_ID_CHARS} characters"
                )));
            }
            if !seen.insert(id) {
                return Err(EngineError::invalid("the same chunk id appears twice").about(id));
            }
            if chunk.text.trim().is_empty() {
                return Err(
                    EngineError::new(ErrorCode::EmptyContent, "the chunk text is empty").about(id),
                );
            }
            if chunk.vector.len() != space.dim as usize {
                return Err(EngineError::new(
                    ErrorCode::EmbeddingMismatch,
                    format!(
                        "the vector has {} dimensions; library {} holds {}-dimensional vectors of {}",
                        chunk.vector.len(),
                        request.library,
                        space.dim,
                        space.model
                    ),
                )
                .about(id));
            }
            if chunk.vector.iter().any(|x| !x.is_finite()) {
                return Err(EngineError::invalid("the vector holds a non-finite number").about(id));
            }
            documents.push(self.chunk_document(&request.library, &space, chunk, id));
        }
        if progress.cancelled() {
            return Err(EngineError::new(
                folio_core::ErrorCode::Timeout,
                "cancelled before the chunks were committed: nothing was written",
            ));
        }
        progress.admit(request.chunks.iter().map(|c| c.text.len() as u64).sum())?;
        // The declared entities each chunk mentions.
        if let Some(finder) = self.finder(&request.library)? {
            for d in &mut documents {
                d.mentions = finder.mentions(&d.chunks).0;
            }
        }
        let outcomes = self.store.put_documents(documents, false)?;
        self.store.flush()?;
        let unchanged = outcomes
            .iter()
            .filter(|o| **o == PutOutcome::Skipped)
            .count();
        Ok(StoreChunksReport {
            library: request.library.to_string(),
            model: space.model.clone(),
            written: outcomes.len() - unchanged,
            unchanged,
        })
    }

    fn chunk_document(
        &self,
        library: &LibraryName,
        space: &folio_core::EmbeddingSpace,
        chunk: &StoredChunk,
        id: &str,
    ) -> NewDocument {
        let document_id = DocumentId::derive(library, &format!("chunk:{id}"));
        let mut vector = chunk.vector.clone();
        if space.normalized {
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                vector.iter_mut().for_each(|x| *x /= norm);
            }
        }
        let mut metadata = chunk.metadata.clone();
        metadata.insert("chunk_ref".into(), Value::String(id.to_string()));
        let mut hashed = chunk.text.clone().into_bytes();
        hashed.extend(vector.iter().flat_map(|x| x.to_le_bytes()));
        hashed.extend(Value::Object(metadata.clone()).to_string().into_bytes());
        hashed.extend(
            format!(
                "{:?}{:?}{:?}",
                chunk.page_start, chunk.page_end, chunk.section_path
            )
            .into_bytes(),
        );
        let title = chunk.title.clone();
        let context = folio_chunk::context_header(title.as_deref(), &chunk.section_path);
        let chars = chunk.text.chars().count() as u64;
        let document = Document {
            id: document_id.clone(),
            library: library.clone(),
            source: chunk.source.clone().unwrap_or_else(|| id.to_string()),
            source_kind: SourceKind::Content,
            format: "chunk".into(),
            title,
            content_hash: content_hash(&hashed),
            metadata,
            page_count: None,
            chunk_count: 1,
            text: chunk.text.clone(),
            ingested_at: self.now(),
        };
        let stored = Chunk {
            id: ChunkId::new(&document_id, 0),
            document_id,
            index: 0,
            count: 1,
            text: chunk.text.clone(),
            char_start: 0,
            char_end: chars,
            page_start: chunk.page_start,
            page_end: chunk.page_end.or(chunk.page_start),
            section_path: chunk.section_path.clone(),
            context,
            token_count: 0,
        };
        NewDocument {
            document,
            chunks: vec![stored],
            vectors: vec![vector],
            space: space.clone(),
            mentions: Vec::new(),
            original: None,
        }
    }
}
