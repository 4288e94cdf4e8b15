//! Which chunk each key of a library names, held in memory beside the
//! vector index: a search's candidates become hits without a database read
//! each (a B-tree descent and a page copy per candidate were a third of a
//! dense search at 100,000 chunks). 16 bytes a chunk: a document id is 16
//! hex digits, kept once a document as the number they spell.
//!
//! It follows the vector index (filled when the index loads, changed by the
//! same log replay), so it may lack keys — a lexical index ahead of it, a
//! vector index a bulk writer has not loaded — and the caller then reads
//! them from the database. It never names a chunk the replay has removed.
//! It also lists each document's keys (8 bytes a chunk more), so a filter
//! on documents' metadata becomes chunk keys without reading the chunks.

use std::collections::{HashMap, HashSet};

use folio_core::ChunkId;

#[derive(Default)]
pub struct Directory {
    /// Key → (its document's slot in `documents`, chunk index): 16 bytes
    /// an entry (a document's number in each cost 24, and 17 MB more at a
    /// million chunks).
    chunks: HashMap<u64, (u32, u32)>,
    /// A document's number → its slot.
    slots: HashMap<u64, u32>,
    /// By slot: a document's number and the keys of its chunks; a slot
    /// whose document has no chunk left is emptied and listed in `free`.
    documents: Vec<(u64, Vec<u64>)>,
    free: Vec<u32>,
}

/// The number a document id folio made spells (16 lower-case hex digits,
/// as `DocumentId::parse` accepts; the lexical index's document key).
fn document_number(document: &str) -> Option<u64> {
    document
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        .then(|| crate::lexical::document_key(document))
        .flatten()
}

impl Directory {
    /// Records that `key` is chunk `index` of `document`; a document id that
    /// folio did not make is left out (the database answers for it).
    pub fn insert(&mut self, key: u64, document: &str, index: u32) {
        let Some(document) = document_number(document) else {
            return;
        };
        let slot = self.slot(document);
        match self.chunks.insert(key, (slot, index)) {
            Some((before, _)) if before == slot => {}
            Some((before, _)) => {
                self.unlist(before, &HashSet::from([key]));
                self.documents[slot as usize].1.push(key);
            }
            None => self.documents[slot as usize].1.push(key),
        }
    }

    /// `document`'s slot, given it if it has none.
    fn slot(&mut self, document: u64) -> u32 {
        if let Some(&slot) = self.slots.get(&document) {
            return slot;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.documents[slot as usize].0 = document;
                slot
            }
            None => {
                self.documents.push((document, Vec::new()));
                (self.documents.len() - 1) as u32
            }
        };
        self.slots.insert(document, slot);
        slot
    }

    pub fn remove(&mut self, keys: &[u64]) {
        let mut owners: HashMap<u32, HashSet<u64>> = HashMap::new();
        for key in keys {
            if let Some((slot, _)) = self.chunks.remove(key) {
                owners.entry(slot).or_default().insert(*key);
            }
        }
        for (slot, keys) in owners {
            self.unlist(slot, &keys);
        }
    }

    /// Takes `keys` off the list of the document in `slot` (one pass,
    /// however many), freeing the slot when none is left.
    fn unlist(&mut self, slot: u32, keys: &HashSet<u64>) {
        let (document, listed) = &mut self.documents[slot as usize];
        listed.retain(|key| !keys.contains(key));
        if listed.is_empty() {
            self.slots.remove(document);
            self.documents[slot as usize] = (0, Vec::new());
            self.free.push(slot);
        }
    }

    pub fn clear(&mut self) {
        *self = Directory::default();
    }

    /// The number `document`'s id spells (its lexical document key) and
    /// the keys of its chunks known here; `None` for an id folio did not
    /// make, and the caller asks the database.
    pub fn listed(&self, document: &str) -> Option<(u64, &[u64])> {
        let number = document_number(document)?;
        let keys = self
            .slots
            .get(&number)
            .map_or(&[][..], |&slot| &self.documents[slot as usize].1);
        Some((number, keys))
    }

    /// `listed`'s keys alone, for the tests.
    #[cfg(test)]
    pub fn keys_of(&self, document: &str) -> Option<&[u64]> {
        self.listed(document).map(|(_, keys)| keys)
    }

    /// The chunk `key` names, if known here.
    pub fn chunk(&self, key: u64) -> Option<ChunkId> {
        let (slot, index) = *self.chunks.get(&key)?;
        Some(ChunkId::of_number(self.documents[slot as usize].0, index))
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
        assert_eq!(directory.keys_of("00a1b2c3d4e5f607"), Some(&[7][..]));
        assert_eq!(directory.keys_of("00A1B2C3D4E5F607"), None);
        directory.remove(&[7]);
        assert!(directory.chunk(7).is_none());
        assert_eq!(directory.keys_of("00a1b2c3d4e5f607"), Some(&[][..]));
        directory.clear();
        assert!(directory.chunk(8).is_none());
        assert_eq!(directory.keys_of("ffffffffffffffff"), Some(&[][..]));
    }

    #[test]
    fn each_document_lists_the_keys_it_holds() {
        let mut directory = Directory::default();
        let (a, b) = ("000000000000000a", "000000000000000b");
        for key in 0..5 {
            directory.insert(key, a, key as u32);
        }
        directory.insert(5, b, 0);
        // A replay inserting a key again lists it once; a key that moves
        // to another document leaves the first one's list.
        directory.insert(2, a, 2);
        directory.insert(4, b, 1);
        directory.remove(&[1, 3, 99]);
        let sorted = |directory: &Directory, document| {
            let mut keys = directory.keys_of(document).unwrap().to_vec();
            keys.sort_unstable();
            keys
        };
        assert_eq!(sorted(&directory, a), vec![0, 2]);
        assert_eq!(sorted(&directory, b), vec![4, 5]);
        assert_eq!(
            directory.chunk(4).map(|c| c.to_string()),
            Some(format!("{b}:1"))
        );
        // A document whose chunks are all gone frees its slot; the next
        // document takes it, and every key still names its own document.
        directory.remove(&[4, 5]);
        assert_eq!(directory.keys_of(b), Some(&[][..]));
        let c = "000000000000000c";
        directory.insert(6, c, 0);
        assert_eq!(directory.documents.len(), 2);
        assert_eq!(
            directory.chunk(6).map(|c| c.to_string()),
            Some(format!("{c}:0"))
        );
        assert_eq!(
            directory.chunk(2).map(|c| c.to_string()),
            Some(format!("{a}:2"))
        );
        assert_eq!(sorted(&directory, a), vec![0, 2]);
    }
}
