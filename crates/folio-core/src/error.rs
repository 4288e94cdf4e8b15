//! The stable catalogue of error codes. Each crate has its own typed error enum;
//! every one of them maps to exactly one `ErrorCode`, and each transport maps
//! `ErrorCode` to its protocol (exit code, MCP result, HTTP status) in one
//! exhaustive match.

use serde::{Deserialize, Serialize};

/// A stable, machine-readable error code. The snake-case string form is part of
/// folio's public contract: never rename a variant's string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A request argument is missing, malformed or out of bounds.
    InvalidArgument,
    /// The named library does not exist.
    LibraryNotFound,
    /// The named document or chunk does not exist.
    NotFound,
    /// A write or query uses another embedding space than the library is pinned to.
    EmbeddingMismatch,
    /// The input's format is not one folio can extract.
    UnsupportedFormat,
    /// The input claims a supported format but cannot be parsed.
    MalformedInput,
    /// The input exceeds a configured limit (size, pages, chunks, decompression).
    TooLarge,
    /// The input yields no text to index.
    EmptyContent,
    /// A path lies outside the allowed roots or does not exist.
    PathNotAllowed,
    /// A URL is refused (scheme, private address) or could not be fetched.
    UrlNotAllowed,
    /// A remote fetch failed (network, HTTP status).
    FetchFailed,
    /// The operation exceeded its time limit.
    Timeout,
    /// Another process holds the data directory's write lock.
    StoreBusy,
    /// A write was asked of a server or store opened read-only; nothing
    /// was done.
    ReadOnly,
    /// The caller did not prove who it is (no key, an unknown, revoked or
    /// expired key, an invalid token).
    Unauthorized,
    /// The caller is known but may not do this (a scope it lacks, a
    /// library outside its own).
    Forbidden,
    /// The caller is over its rate (calls, or ingested bytes, in a window);
    /// the error's details say when to try again.
    RateLimited,
    /// The store failed (I/O, corruption, database error).
    Storage,
    /// The embedding model could not be loaded or failed to run.
    Model,
    /// A bug: an invariant did not hold.
    Internal,
}

impl ErrorCode {
    /// The stable string form, as it appears in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::LibraryNotFound => "library_not_found",
            ErrorCode::NotFound => "not_found",
            ErrorCode::EmbeddingMismatch => "embedding_mismatch",
            ErrorCode::UnsupportedFormat => "unsupported_format",
            ErrorCode::MalformedInput => "malformed_input",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::EmptyContent => "empty_content",
            ErrorCode::PathNotAllowed => "path_not_allowed",
            ErrorCode::UrlNotAllowed => "url_not_allowed",
            ErrorCode::FetchFailed => "fetch_failed",
            ErrorCode::Timeout => "timeout",
            ErrorCode::StoreBusy => "store_busy",
            ErrorCode::ReadOnly => "read_only",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Storage => "storage",
            ErrorCode::Model => "model",
            ErrorCode::Internal => "internal",
        }
    }

    /// The HTTP status that carries this error over plain HTTP.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidArgument => 400,
            ErrorCode::LibraryNotFound | ErrorCode::NotFound => 404,
            ErrorCode::EmbeddingMismatch => 409,
            ErrorCode::TooLarge => 413,
            ErrorCode::UnsupportedFormat | ErrorCode::MalformedInput | ErrorCode::EmptyContent => {
                422
            }
            ErrorCode::Unauthorized => 401,
            ErrorCode::PathNotAllowed
            | ErrorCode::UrlNotAllowed
            | ErrorCode::ReadOnly
            | ErrorCode::Forbidden => 403,
            ErrorCode::RateLimited => 429,
            ErrorCode::FetchFailed => 502,
            ErrorCode::StoreBusy => 503,
            ErrorCode::Timeout => 504,
            ErrorCode::Storage | ErrorCode::Model | ErrorCode::Internal => 500,
        }
    }

    /// True when the error is the caller's input, not a failure of folio.
    pub fn is_client_error(self) -> bool {
        match self {
            ErrorCode::InvalidArgument
            | ErrorCode::LibraryNotFound
            | ErrorCode::NotFound
            | ErrorCode::EmbeddingMismatch
            | ErrorCode::UnsupportedFormat
            | ErrorCode::MalformedInput
            | ErrorCode::TooLarge
            | ErrorCode::EmptyContent
            | ErrorCode::PathNotAllowed
            | ErrorCode::UrlNotAllowed
            | ErrorCode::ReadOnly
            | ErrorCode::Unauthorized
            | ErrorCode::Forbidden
            | ErrorCode::RateLimited => true,
            ErrorCode::FetchFailed
            | ErrorCode::Timeout
            | ErrorCode::StoreBusy
            | ErrorCode::Storage
            | ErrorCode::Model
            | ErrorCode::Internal => false,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
