//! Which chunk each key of a library names, held in memory beside the
//! vector index: a search's candidates become hits without a database read
//! each (a B-tree descent and a page copy per candidate were a third of a
//! dense search at 100,000 chunks). 16 bytes a chunk: a document id is 16
//! hex digits, kept as the number they spell.
//!
//! It follows the vector index (filled when the index loads, changed by the
//! same log replay), so it may lack keys — a lexical index ahead of it, a
//! vector index a bulk writer has not loaded — and the caller then reads
//! them from the database. It never names a chunk the replay has removed.

use std::collections::HashMap;

use folio_core::{ChunkId, DocumentId};

#[derive(Default)]
pub struct Directory {
    chunks: HashMap<u64, (u64, u32)>,
}

impl Directory {
    /// Records that `key` is chunk `index` of `document`; a document id that
    /// folio did not make is left out (the database answers for it).
    pub fn insert(&mut self, key: u64, document: &str, index: u32) {
        let parsed = (document.len() == 16)
            .then(|| u64::from_str_radix(document, 16).ok())
            .flatten()
            .filter(|n| format!("{n:016x}") == document);
        if let Some(document) = parsed {
            self.chunks.insert(key, (document, index));
        }
    }

    pub fn remove(&mut self, keys: &[u64]) {
        for key in keys {
            self.chunks.remove(key);
        }
    }

    pub fn clear(&mut self) {
        self.chunks = HashMap::new();
    }

    /// The chunk `key` names, if known here.
    pub fn chunk(&self, key: u64) -> Option<ChunkId> {
        let (document, index) = *self.chunks.get(&key)?;
        let document = DocumentId::parse(&format!("{document:016x}"))?;
        Some(ChunkId::new(&document, index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_give_back_the_chunks_they_were_given() {
        let mut directory = Directory::default();
        directory.insert(7, "00a1b2c3d4e5f607", 3);
        directory.insert(8, "ffffffffffffffff", 0);
        // Not ids folio makes: upper case, too short, not hex.
        directory.insert(9, "00A1B2C3D4E5F607", 1);
        directory.insert(10, "abc", 1);
        directory.insert(11, "zzzzzzzzzzzzzzzz", 1);
        assert_eq!(directory.chunks.len(), 2);
        assert_eq!(
            directory.chunk(7).map(|c| c.to_string()),
            Some("00a1b2c3d4e5f607:3".to_string())
        );
        assert_eq!(
            directory.chunk(8).map(|c| c.to_string()),
            Some("ffffffffffffffff:0".to_string())
        );
        assert!(directory.chunk(9).is_none());
        directory.remove(&[7]);
        assert!(directory.chunk(7).is_none());
        directory.clear();
        assert!(directory.chunk(8).is_none());
    }
}
