//! Embedding errors.

use folio_core::ErrorCode;

#[derive(Debug, Clone, thiserror::Error)]
pub enum EmbedError {
    #[error("model at {path}: {reason}")]
    Load { path: String, reason: String },
    #[error("the ONNX Runtime library could not be loaded ({path}): {reason}")]
    Runtime { path: String, reason: String },
    #[error("text of {tokens} tokens exceeds the encoder window of {window}")]
    TooLong { tokens: usize, window: usize },
    #[error("inference failed: {0}")]
    Inference(String),
    #[error("embedding server {url}: {reason}")]
    Remote { url: String, reason: String },
}

impl EmbedError {
    pub fn code(&self) -> ErrorCode {
        match self {
            EmbedError::TooLong { .. } => ErrorCode::InvalidArgument,
            EmbedError::Remote { .. } => ErrorCode::FetchFailed,
            EmbedError::Load { .. } | EmbedError::Runtime { .. } | EmbedError::Inference(_) => {
                ErrorCode::Model
            }
        }
    }
}
