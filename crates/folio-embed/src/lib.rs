//! Dense embedding behind one `Embedder` trait, with three implementations:
//! ONNX Runtime (the fast in-process path, `ort` with a dynamically loaded
//! runtime), candle (pure Rust, no native library) and any OpenAI-compatible
//! `/v1/embeddings` server (Ollama, vLLM, TEI, hosted APIs). A cross-encoder
//! (`CrossEncoder`) reranks on the same ONNX Runtime path.
//!
//! Local encoders read BERT-family models in Hugging Face layout (config.json,
//! tokenizer.json, model.safetensors, optionally model.onnx), pool over the
//! attention mask and L2-normalise as the model's sentence-transformers
//! configuration says. Inputs are sorted by length and batched so padding
//! wastes little work.

mod batch;
#[cfg(feature = "candle")]
mod candle_bert;
mod candle_encoder;
pub mod catalog;
mod encoder;
mod error;
pub mod hub;
mod mapped_graph;
mod model;
mod onnx_encoder;
mod openai;
mod pool;
mod queries;
mod rerank;

pub use candle_encoder::CandleEncoder;
pub use error::EmbedError;
pub use model::{Inputs, LocalModel, ModelConfig};
pub use onnx_encoder::{
    INT8_GRAPH, OnnxEncoder, check_runtime, find_runtime_library, int8_kernels_saturate,
};
pub use openai::{OpenAiEmbedder, OpenAiOptions};
pub use rerank::{CrossEncoder, PairTokens};

use folio_core::EmbeddingSpace;

/// Turns text into vectors of one embedding space. Implementations are
/// thread-safe; a call may use every core.
pub trait Embedder: Send + Sync {
    /// The space the vectors live in (model, dimension, pooling, prefixes).
    fn space(&self) -> &EmbeddingSpace;

    /// The tokens a passage may have, special tokens included: the
    /// encoder's window, less the passage prefix a model puts before every
    /// passage (e5's "passage: "). Chunks are cut to fit it.
    fn window(&self) -> usize;

    /// Tokens of `text` without special tokens (exact for local models, an
    /// estimate for remote ones).
    fn count_tokens(&self, text: &str) -> usize;

    /// Embeds passages (the passage prefix is added here). Texts longer than
    /// the window are an error, never silently truncated: the chunker sizes
    /// chunks to fit.
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// A passage's token count (as `count_tokens`) and the token ids
    /// `embed_passage_ids` runs for it, when this embedder tokenises
    /// locally and the passage prefix, if any, cannot change the text's
    /// tokens. Ingest tokenises each chunk once, with this.
    fn encode_passage(&self, text: &str) -> Option<(usize, Vec<u32>)> {
        let _ = text;
        None
    }

    /// Embeds passages tokenised by `encode_passage`. A sequence longer than
    /// the window is an error, as in `embed_passages`.
    fn embed_passage_ids(&self, ids: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let _ = ids;
        Err(EmbedError::Inference(format!(
            "the {} backend embeds passages from text only",
            self.backend()
        )))
    }

    /// Embeds a query (the query prefix is added here). A query longer than
    /// the window is cut to the window: only its dense side loses the tail.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;

    /// A short name of the backend, for logs and `server_info`.
    fn backend(&self) -> &'static str;
}
