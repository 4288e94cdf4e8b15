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
    #[error("{path}: permission denied: folio may not read it")]
    Unreadable { path: String },
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
    /// The error of reading `path`: the system's refusal to let folio read
    /// it is a path folio may not use, not a malformed input.
    pub fn io(path: impl Into<String>, error: &std::io::Error) -> Self {
        let path = path.into();
        match error.kind() {
            std::io::ErrorKind::PermissionDenied => SourceError::Unreadable { path },
            _ => SourceError::Io {
                path,
                reason: error.to_string(),
            },
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            // Roots are checked on the path as written first, so "not
            // found" never tells what exists outside them.
            SourceError::NotFound { .. } => ErrorCode::NotFound,
            SourceError::OutsideRoots { .. }
            | SourceError::NotAFile { .. }
            | SourceError::Unreadable { .. } => ErrorCode::PathNotAllowed,
            SourceError::Io { .. } => ErrorCode::MalformedInput,
            SourceError::TooLarge { .. } => ErrorCode::TooLarge,
            SourceError::UrlRefused { .. } => ErrorCode::UrlNotAllowed,
            SourceError::Fetch { .. } => ErrorCode::FetchFailed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_folio_may_not_read_is_a_path_not_allowed() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let error = SourceError::io("/srv/secret.pdf", &denied);
        assert_eq!(error.code(), ErrorCode::PathNotAllowed);
        assert_eq!(
            error.to_string(),
            "/srv/secret.pdf: permission denied: folio may not read it"
        );
        let broken = std::io::Error::other("input/output error");
        assert_eq!(
            SourceError::io("/srv/a.pdf", &broken).code(),
            ErrorCode::MalformedInput
        );
    }
}
