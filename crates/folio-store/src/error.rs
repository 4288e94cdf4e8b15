//! Storage errors, each mapped to one error code.

use folio_core::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("library {0:?} does not exist")]
    LibraryNotFound(String),
    #[error("{what} {id:?} does not exist")]
    NotFound { what: &'static str, id: String },
    #[error(
        "library {library:?} is pinned to another embedding space ({difference}); rebuild the library to change it"
    )]
    EmbeddingMismatch { library: String, difference: String },
    #[error("{0}")]
    InvalidArgument(String),
    #[error(
        "the data directory {path} is locked by another folio process (pid {pid}); waited {waited_ms} ms"
    )]
    Busy {
        path: String,
        pid: String,
        waited_ms: u64,
    },
    #[error("storage failure in {context}: {reason}")]
    Io { context: String, reason: String },
    /// A write on a store opened read-only: refused before any work.
    #[error("this store is open read-only: {0} is refused")]
    ReadOnly(&'static str),
}

impl StoreError {
    pub fn io(context: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        StoreError::Io {
            context: context.into(),
            reason: reason.to_string(),
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::LibraryNotFound(_) => ErrorCode::LibraryNotFound,
            StoreError::NotFound { .. } => ErrorCode::NotFound,
            StoreError::EmbeddingMismatch { .. } => ErrorCode::EmbeddingMismatch,
            StoreError::InvalidArgument(_) => ErrorCode::InvalidArgument,
            StoreError::Busy { .. } => ErrorCode::StoreBusy,
            StoreError::Io { .. } => ErrorCode::Storage,
            StoreError::ReadOnly(_) => ErrorCode::ReadOnly,
        }
    }
}
