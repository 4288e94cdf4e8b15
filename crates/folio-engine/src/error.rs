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
    /// Structured particulars (e.g. the field and rule a record broke).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

impl EngineError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        EngineError {
            code,
            message: message.into(),
            input: None,
            details: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }

    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
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

impl From<folio_core::RecordError> for EngineError {
    fn from(e: folio_core::RecordError) -> Self {
        EngineError::invalid(format!("invalid record: {e}")).with_details(serde_json::json!({
            "field": e.field, "rule": e.rule, "reason": e.message
        }))
    }
}

impl From<folio_core::LibraryNameError> for EngineError {
    fn from(e: folio_core::LibraryNameError) -> Self {
        EngineError::invalid(e.to_string())
    }
}
