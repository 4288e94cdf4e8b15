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

/// The numeric precision of an encoder's matrix multiplications. An int8
/// encoder's vectors lie close to its fp32 twin's but are not the same, so
/// precision is part of the embedding space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    #[default]
    Fp32,
    /// Weights quantised to 8 bits, activations quantised per batch
    /// (dynamic quantisation).
    Int8,
}

impl Precision {
    pub fn is_fp32(&self) -> bool {
        *self == Precision::Fp32
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fp32" => Ok(Precision::Fp32),
            "int8" => Ok(Precision::Int8),
            other => Err(format!("unknown precision {other:?} (use fp32 or int8)")),
        }
    }
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
    /// Absent (fp32) in spaces recorded before precision was, so those
    /// libraries read and compare as they always did.
    #[serde(default, skip_serializing_if = "Precision::is_fp32")]
    pub precision: Precision,
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
        if self.precision != other.precision {
            parts.push(format!(
                "precision {} vs {}",
                self.precision.as_str(),
                other.precision.as_str()
            ));
        }
        Some(parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_is_part_of_the_space_and_absent_when_fp32() {
        let fp32 = EmbeddingSpace {
            model: "m".into(),
            dim: 4,
            pooling: Pooling::Mean,
            normalized: true,
            query_prefix: String::new(),
            passage_prefix: String::new(),
            precision: Precision::Fp32,
        };
        // A space recorded before precision existed reads as fp32.
        let recorded = r#"{"model":"m","dim":4,"pooling":"mean","normalized":true,"query_prefix":"","passage_prefix":""}"#;
        let old: EmbeddingSpace = serde_json::from_str(recorded).unwrap();
        assert_eq!(old, fp32);
        assert_eq!(serde_json::to_string(&fp32).unwrap(), recorded);
        let int8 = EmbeddingSpace {
            precision: Precision::Int8,
            ..fp32.clone()
        };
        assert!(
            serde_json::to_string(&int8)
                .unwrap()
                .contains(r#""precision":"int8""#)
        );
        assert_eq!(
            fp32.difference(&int8).as_deref(),
            Some("precision fp32 vs int8")
        );
    }

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
