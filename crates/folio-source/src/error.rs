//! Source errors: each names the input and the reason.

use folio_core::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: no such file or directory")]
    NotFound { path: String },
    #[error("{path}: outside the allowed roots ({roots})")]
    OutsideRoots { path: String, roots: String },
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{path}: not a regular file or directory")]
    NotAFile { path: String },
    #[error("{input}: {what} is {actual} bytes, over the limit of {limit}")]
    TooLarge {
        input: String,
        what: &'static str,
        limit: u64,
        actual: u64,
    },
    #[error("{url}: refused: {reason}")]
    UrlRefused { url: String, reason: String },
    #[error("{url}: fetch failed: {reason}")]
    Fetch { url: String, reason: String },
}

impl SourceError {
    pub fn code(&self) -> ErrorCode {
        match self {
            // Roots are checked on the path as written first, so "not
            // found" never tells what exists outside them.
            SourceError::NotFound { .. } => ErrorCode::NotFound,
            SourceError::OutsideRoots { .. } | SourceError::NotAFile { .. } => {
                ErrorCode::PathNotAllowed
            }
            SourceError::Io { .. } => ErrorCode::MalformedInput,
            SourceError::TooLarge { .. } => ErrorCode::TooLarge,
            SourceError::UrlRefused { .. } => ErrorCode::UrlNotAllowed,
            SourceError::Fetch { .. } => ErrorCode::FetchFailed,
        }
    }
}
