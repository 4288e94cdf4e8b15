//! The stable catalogue of error codes. Each crate has its own typed error enum;
//! every one of them maps to exactly one `ErrorCode`, and each transport maps
//! `ErrorCode` to its protocol (exit code, MCP result, HTTP status) in one
//! exhaustive match.

use serde::{Deserialize, Serialize};

/// Declares the codes once: each variant with its wire name and its
/// meaning (the doc comment, also what `meaning` returns and the generated
/// reference prints).
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])+ $variant:ident => $name:literal, )+) => {
        /// A stable, machine-readable error code. The snake-case string form is
        /// part of folio's public contract: never rename a variant's string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl ErrorCode {
            /// Every code, in the order of the catalogue.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The stable string form, as it appears in JSON output.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)+
                }
            }

            /// What the code means, in a sentence.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => concat!($($doc),+).trim_start(),)+
                }
            }
        }
    };
}

error_codes! {
    /// A request argument is missing, malformed or out of bounds.
    InvalidArgument => "invalid_argument",
    /// The named library does not exist.
    LibraryNotFound => "library_not_found",
    /// The named document or chunk does not exist.
    NotFound => "not_found",
    /// A write or query uses another embedding space than the library is pinned to.
    EmbeddingMismatch => "embedding_mismatch",
    /// The input's format is not one folio can extract.
    UnsupportedFormat => "unsupported_format",
    /// The input claims a supported format but cannot be parsed.
    MalformedInput => "malformed_input",
    /// The input exceeds a configured limit (size, pages, chunks, decompression).
    TooLarge => "too_large",
    /// The input yields no text to index.
    EmptyContent => "empty_content",
    /// A path lies outside the allowed roots, is no regular file or
    /// folder, or the system does not let folio read it.
    PathNotAllowed => "path_not_allowed",
    /// A URL is refused (scheme, private address) or could not be fetched.
    UrlNotAllowed => "url_not_allowed",
    /// A remote fetch failed (network, HTTP status).
    FetchFailed => "fetch_failed",
    /// The operation exceeded its time limit.
    Timeout => "timeout",
    /// Another process holds the data directory's write lock.
    StoreBusy => "store_busy",
    /// A write was asked of a server or store opened read-only; nothing
    /// was done.
    ReadOnly => "read_only",
    /// The caller did not prove who it is (no key, an unknown, revoked or
    /// expired key, an invalid token).
    Unauthorized => "unauthorized",
    /// The caller is known but may not do this (a scope it lacks, a
    /// library outside its own).
    Forbidden => "forbidden",
    /// The caller is over its rate (calls, or ingested bytes, in a window);
    /// the error's details say when to try again.
    RateLimited => "rate_limited",
    /// The store failed (I/O, corruption, database error).
    Storage => "storage",
    /// The embedding model could not be loaded or failed to run.
    Model => "model",
    /// A bug: an invariant did not hold.
    Internal => "internal",
}

impl ErrorCode {
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

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn each_code_is_written_as_its_wire_name_and_means_one_sentence() {
        assert_eq!(ErrorCode::ALL.len(), 20);
        for &code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str(), "{code:?}");
            assert_eq!(serde_json::from_value::<ErrorCode>(json).unwrap(), code);
            let meaning = code.meaning();
            assert!(
                meaning.starts_with(char::is_uppercase) && meaning.ends_with('.'),
                "{meaning}"
            );
            assert!(!meaning.contains("  "), "{meaning}");
        }
        assert_eq!(
            ErrorCode::ReadOnly.meaning(),
            "A write was asked of a server or store opened read-only; nothing was done."
        );
    }
}
