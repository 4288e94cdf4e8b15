//! Extraction errors: each names the reason, and maps to one error code.

use folio_core::ErrorCode;

use crate::Format;

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("the input is empty (zero bytes)")]
    Empty,
    #[error("{what} is {actual} bytes, over the limit of {limit}")]
    TooLarge {
        what: &'static str,
        limit: u64,
        actual: u64,
    },
    #[error("the {what} has {actual} cells, over the limit of {limit}")]
    TooManyCells {
        what: &'static str,
        limit: u64,
        actual: u64,
    },
    #[error("{actual} {what}, over the limit of {limit}")]
    TooMany {
        /// What is counted, in the plural ("slides", "messages").
        what: &'static str,
        limit: u64,
        actual: u64,
    },
    #[error("the data looks binary, not text")]
    Binary,
    #[error("unsupported format{}", .hint.as_deref().map(|h| format!(": {h}")).unwrap_or_default())]
    Unsupported { hint: Option<String> },
    #[error("malformed {format}: {reason}")]
    Malformed { format: Format, reason: String },
    #[error(
        "{what} exceeds the decompression limit ({limit} bytes or ratio): refused as a possible decompression bomb"
    )]
    Bomb { what: String, limit: u64 },
    #[error("malformed reference list: {0}")]
    References(String),
    #[error("the {format} document contains no extractable text")]
    NoText { format: Format },
}

impl ExtractError {
    pub(crate) fn malformed(format: Format, reason: impl std::fmt::Display) -> Self {
        ExtractError::Malformed {
            format,
            reason: reason.to_string(),
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            ExtractError::Empty | ExtractError::NoText { .. } => ErrorCode::EmptyContent,
            ExtractError::TooLarge { .. }
            | ExtractError::TooManyCells { .. }
            | ExtractError::TooMany { .. }
            | ExtractError::Bomb { .. } => ErrorCode::TooLarge,
            ExtractError::Binary | ExtractError::Malformed { .. } | ExtractError::References(_) => {
                ErrorCode::MalformedInput
            }
            ExtractError::Unsupported { .. } => ErrorCode::UnsupportedFormat,
        }
    }
}
