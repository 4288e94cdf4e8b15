//! Libraries and the embedding space each one is pinned to.

use serde::{Deserialize, Serialize};

/// A validated library name: 1–128 characters of ASCII letters, digits and
/// `. _ - /`, starting with a letter or digit. Slashes are allowed so that
/// names such as `team/handbook` (the seeds' project ids) work unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LibraryName(String);

/// Why a string is not a valid library name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid library name {name:?}: {reason}")]
pub struct LibraryNameError {
    pub name: String,
    pub reason: &'static str,
}

impl LibraryName {
    pub fn new(name: impl Into<String>) -> Result<Self, LibraryNameError> {
        let name = name.into();
        let fail = |reason| {
            Err(LibraryNameError {
                name: name.clone(),
                reason,
            })
        };
        if name.is_empty() {
            return fail("it is empty");
        }
        if name.len() > 128 {
            return fail("it is longer than 128 characters");
        }
        if !name.as_bytes()[0].is_ascii_alphanumeric() {
            return fail("it must start with a letter or digit");
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'))
        {
            return fail("only letters, digits and . _ - / are allowed");
        }
        Ok(LibraryName(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for LibraryName {
    type Error = LibraryNameError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        LibraryName::new(value)
    }
}

impl From<LibraryName> for String {
    fn from(value: LibraryName) -> Self {
        value.0
    }
}

impl std::fmt::Display for LibraryName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// How token vectors are pooled into one text vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// Mean over the tokens the attention mask keeps (sentence-transformers).
    Mean,
    /// The first ([CLS]) token's vector (bge, some e5 variants).
    Cls,
}

/// The embedding space a library is pinned to: vectors from another space are
/// not comparable, so writes and queries in another space are refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingSpace {
    /// Model identifier, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub model: String,
    pub dim: u32,
    pub pooling: Pooling,
    /// Whether vectors are L2-normalised (then dot product = cosine).
    pub normalized: bool,
    /// Prepended to queries before embedding (e5: `query: `).
    pub query_prefix: String,
    /// Prepended to passages before embedding (e5: `passage: `).
    pub passage_prefix: String,
}

impl EmbeddingSpace {
    /// A one-line human description of how `self` differs from `other`, or
    /// `None` when they are the same space.
    pub fn difference(&self, other: &EmbeddingSpace) -> Option<String> {
        if self == other {
            return None;
        }
        let mut parts = Vec::new();
        if self.model != other.model {
            parts.push(format!("model {} vs {}", self.model, other.model));
        }
        if self.dim != other.dim {
            parts.push(format!("dimension {} vs {}", self.dim, other.dim));
        }
        if self.pooling != other.pooling {
            parts.push(format!("pooling {:?} vs {:?}", self.pooling, other.pooling));
        }
        if self.normalized != other.normalized {
            parts.push("normalisation differs".to_string());
        }
        if self.query_prefix != other.query_prefix || self.passage_prefix != other.passage_prefix {
            parts.push("prefixes differ".to_string());
        }
        Some(parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names() {
        for ok in ["research", "team/handbook", "a", "x.y_z-1"] {
            assert!(LibraryName::new(ok).is_ok(), "{ok}");
        }
        for bad in ["", "/abs", "-x", "a b", "ü", &"a".repeat(129)] {
            assert!(LibraryName::new(bad).is_err(), "{bad}");
        }
    }
}
