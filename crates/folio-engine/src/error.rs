//! The engine's error: a stable code, a message, and the input it concerns.

use folio_core::ErrorCode;
use serde::Serialize;

/// An engine failure. `input` names the file, URL, library or id involved,
/// so transports can report it as data.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{}{message}", .input.as_deref().map(|i| format!("{i}: ")).unwrap_or_default())]
pub struct EngineError {
    pub code: ErrorCode,
    pub message: String,
    pub input: Option<String>,
}

impl EngineError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        EngineError {
            code,
            message: message.into(),
            input: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }

    /// Attaches the input this error concerns, unless one is set already.
    pub fn about(mut self, input: impl Into<String>) -> Self {
        self.input.get_or_insert_with(|| input.into());
        self
    }
}

macro_rules! from_coded {
    ($($t:ty),*) => {$(
        impl From<$t> for EngineError {
            fn from(e: $t) -> Self {
                EngineError::new(e.code(), e.to_string())
            }
        }
    )*};
}

from_coded!(
    folio_extract::ExtractError,
    folio_embed::EmbedError,
    folio_store::StoreError,
    folio_source::SourceError
);

impl From<folio_core::FilterError> for EngineError {
    fn from(e: folio_core::FilterError) -> Self {
        EngineError::invalid(e.to_string())
    }
}

impl From<folio_core::LibraryNameError> for EngineError {
    fn from(e: folio_core::LibraryNameError) -> Self {
        EngineError::invalid(e.to_string())
    }
}
