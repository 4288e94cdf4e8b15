//! Acquiring input: files confined to allowed roots, folders walked
//! recursively, and URLs fetched with size and time caps and refusal of
//! private, loopback and link-local addresses (checked after DNS resolution
//! and on every redirect). This is the only crate that touches the file
//! system or the network on behalf of ingestion.

mod error;
mod fetch;
mod path;
pub mod zotero;

pub use error::SourceError;
pub use fetch::{FetchPolicy, Fetched, fetch, is_public};
pub use path::{CanonicalPath, Roots, count_walked, read_file, walk_lazily};
