//! Postings packed in blocks (schema version 12): one row per (library,
//! unit, term, block) holding the term's postings of that block as bytes,
//! where a row per posting took 16 million rows and 2.4 GB for 100,000
//! chunks, and a search read a common term's postings a row at a time.
//!
//! - A chunk's block is its key's 1,024-key range (`chunk_block`): keys
//!   come from a sequence, so new chunks fill the newest blocks and a
//!   document's chunks share one or two.
//! - A whole document's block is kept in its row (`folio_documents.block`),
//!   the range of the chunk keys it was written after: its key is a hash of
//!   its id, which says nothing of when it came.
//! - A row's bytes are its postings in key order: each the varint of the
//!   key's distance from the previous one (the first key zigzag-coded), then
//!   the varints of tf and of the coded length. `entries` counts them, so a
//!   term's document frequency is the sum of its rows' entries.
//! - A document keeps the terms it has postings under (`lexicon`, of both
//!   units), so its postings are removed from its blocks without reading
//!   any other row.
//!
//! Writes gather a transaction's postings to add and remove ([`Pending`])
//! and apply them at its end, block by block: each touched row is read,
//! changed and written back, under a lock per library, so two writers of
//! one library apply theirs one after the other (and never deadlock).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use folio_lexical as analysis;
use folio_store::{Result, StoreError};
use tokio_postgres::GenericClient;

use crate::lexical::Unit;
use crate::pool::{pg_err, wait};

/// Chunk keys per chunk block (as a shift; four in unit tests, so their
/// documents span blocks).
pub(crate) const BLOCK_BITS: u32 = if cfg!(test) { 2 } else { 10 };

/// The block of a chunk key.
pub(crate) fn chunk_block(key: i64) -> i64 {
    key >> BLOCK_BITS
}

/// SQL for a new document's block: the range of the newest chunk key.
pub(crate) fn new_document_block() -> String {
    format!("(SELECT last_value FROM folio_chunks_key_seq) >> {BLOCK_BITS}")
}

/// The advisory lock class of writing a library's blocks ("foli"), with
/// the library id as the second key (two-key locks never meet one-key
/// ones).
const BLOCK_LOCK: i32 = 0x666f_6c69;

/// One posting: key, term frequency, coded length.
pub(crate) type Entry = (i64, i32, i32);

/// A block row's key: library, unit, term, block.
type BlockKey = (i64, i16, String, i64);

/// Appends `value` as a LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// A block's bytes from its postings, sorted by key.
pub(crate) fn encode(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 4);
    let mut previous = None;
    for &(key, tf, norm) in entries {
        put_varint(
            &mut out,
            match previous {
                None => ((key << 1) ^ (key >> 63)) as u64,
                Some(previous) => key.wrapping_sub(previous) as u64,
            },
        );
        put_varint(&mut out, tf as u32 as u64);
        put_varint(&mut out, norm as u32 as u64);
        previous = Some(key);
    }
    out
}

/// Calls `each` with a block's postings in key order; an error names a
/// block that does not read back.
pub(crate) fn decode(bytes: &[u8], mut each: impl FnMut(Entry)) -> Result<()> {
    let (mut at, mut previous) = (0, None);
    while at < bytes.len() {
        let entry = (|| {
            let step = varint(bytes, &mut at)?;
            let key = match previous {
                None => ((step >> 1) as i64) ^ -((step & 1) as i64),
                Some(previous) => i64::wrapping_add(previous, step as i64),
            };
            let tf = i32::try_from(varint(bytes, &mut at)?).ok()?;
            let norm = i32::try_from(varint(bytes, &mut at)?).ok()?;
            Some((key, tf, norm))
        })();
        let Some(entry) = entry else {
            return Err(StoreError::io(
                "reading postings",
                "a block of the lexical index does not decode: run `folio check`",
            ));
        };
        previous = Some(entry.0);
        each(entry);
    }
    Ok(())
}

/// A block's postings as a list.
pub(crate) fn entries(bytes: &[u8]) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    decode(bytes, |entry| out.push(entry))?;
    Ok(out)
}

/// Postings a transaction adds and removes, applied at its end.
#[derive(Default)]
pub(crate) struct Pending {
    adds: BTreeMap<BlockKey, Vec<Entry>>,
    removes: BTreeMap<BlockKey, BTreeSet<i64>>,
}

impl Pending {
    /// Adds one entry's postings from its analysed terms
    /// (`analysis::term_counts`): each distinct term with its count, and
    /// the entry's length in terms.
    pub(crate) fn add(
        &mut self,
        (library_id, unit, block): (i64, Unit, i64),
        key: i64,
        (terms, length): &(Vec<(String, u32)>, usize),
    ) {
        let norm = analysis::scored_length(*length) as i32;
        for (term, tf) in terms {
            self.adds
                .entry((library_id, unit.code(), term.clone(), block))
                .or_default()
                .push((key, *tf as i32, norm));
        }
    }

    /// Removes the postings of `keys` (all of one block) under `terms`
    /// (those they may have), written before or added to this batch.
    pub(crate) fn remove(
        &mut self,
        (library_id, unit, block): (i64, Unit, i64),
        keys: &BTreeSet<i64>,
        terms: &[String],
    ) {
        for term in terms {
            let row = (library_id, unit.code(), term.clone(), block);
            if let Some(added) = self.adds.get_mut(&row) {
                added.retain(|entry| !keys.contains(&entry.0));
            }
            self.removes.entry(row).or_default().extend(keys);
        }
    }

    /// Applies the gathered postings to their blocks and empties them.
    pub(crate) fn flush(&mut self, client: &impl GenericClient) -> Result<()> {
        let context = "writing postings";
        let (adds, removes) = (
            std::mem::take(&mut self.adds),
            std::mem::take(&mut self.removes),
        );
        let touched: BTreeSet<&BlockKey> = adds.keys().chain(removes.keys()).collect();
        if touched.is_empty() {
            return Ok(());
        }
        let libraries: BTreeSet<i64> = touched.iter().map(|row| row.0).collect();
        let libraries: Vec<i32> = libraries.into_iter().map(|id| id as i32).collect();
        wait(client.execute(
            "SELECT pg_advisory_xact_lock($1, l) FROM unnest($2::int4[]) AS l",
            &[&BLOCK_LOCK, &libraries],
        ))
        .map_err(pg_err(context))?;
        let touched: Vec<&BlockKey> = touched.into_iter().collect();
        let (ids, units, terms, blocks) = columns(&touched);
        let mut held: BTreeMap<BlockKey, Vec<Entry>> = BTreeMap::new();
        for row in wait(client.query(
            "SELECT b.library_id, b.unit, b.term, b.block, b.postings FROM folio_term_blocks b
             JOIN unnest($1::int8[], $2::int2[], $3::text[], $4::int8[]) AS u(library_id, unit, term, block)
               ON b.library_id = u.library_id AND b.unit = u.unit AND b.term = u.term
              AND b.block = u.block",
            &[&ids, &units, &terms, &blocks],
        ))
        .map_err(pg_err(context))?
        {
            held.insert(
                (row.get(0), row.get(1), row.get(2), row.get(3)),
                entries(row.get(4))?,
            );
        }
        let (mut changed, mut counts, mut bytes) = (Vec::new(), Vec::new(), Vec::new());
        let mut emptied = Vec::new();
        for &row in &touched {
            let mut entries = held.remove(row).unwrap_or_default();
            if let Some(gone) = removes.get(row) {
                entries.retain(|entry| !gone.contains(&entry.0));
            }
            if let Some(added) = adds.get(row) {
                let keys: BTreeSet<i64> = added.iter().map(|entry| entry.0).collect();
                entries.retain(|entry| !keys.contains(&entry.0));
                entries.extend_from_slice(added);
                entries.sort_unstable_by_key(|entry| entry.0);
            }
            if entries.is_empty() {
                emptied.push(row);
            } else {
                counts.push(entries.len() as i32);
                bytes.push(encode(&entries));
                changed.push(row);
            }
        }
        if !changed.is_empty() {
            let (ids, units, terms, blocks) = columns(&changed);
            wait(client.execute(
                "INSERT INTO folio_term_blocks (library_id, unit, term, block, entries, postings)
                 SELECT * FROM unnest($1::int8[], $2::int2[], $3::text[], $4::int8[], $5::int4[], $6::bytea[])
                 ON CONFLICT (library_id, unit, term, block)
                 DO UPDATE SET entries = EXCLUDED.entries, postings = EXCLUDED.postings",
                &[&ids, &units, &terms, &blocks, &counts, &bytes],
            ))
            .map_err(pg_err(context))?;
        }
        if !emptied.is_empty() {
            let (ids, units, terms, blocks) = columns(&emptied);
            wait(client.execute(
                "DELETE FROM folio_term_blocks b
                 USING unnest($1::int8[], $2::int2[], $3::text[], $4::int8[]) AS u(library_id, unit, term, block)
                 WHERE b.library_id = u.library_id AND b.unit = u.unit AND b.term = u.term
                   AND b.block = u.block",
                &[&ids, &units, &terms, &blocks],
            ))
            .map_err(pg_err(context))?;
        }
        Ok(())
    }
}

/// Block rows' keys as the columns an `unnest` takes.
fn columns<'a>(rows: &[&'a BlockKey]) -> (Vec<i64>, Vec<i16>, Vec<&'a str>, Vec<i64>) {
    (
        rows.iter().map(|row| row.0).collect(),
        rows.iter().map(|row| row.1).collect(),
        rows.iter().map(|row| row.2.as_str()).collect(),
        rows.iter().map(|row| row.3).collect(),
    )
}

/// Block rows `verify` reads at a time (a few in unit tests, so their
/// libraries take several pages).
const VERIFY_PAGE: i64 = if cfg!(test) { 7 } else { 10_000 };

/// What is wrong with a library's blocks: chunks or documents with terms
/// and no postings, postings of keys nothing has, rows whose count is not
/// their postings', chunk postings outside their block, rows that do not
/// decode.
pub(crate) fn verify(client: &impl GenericClient, library_id: i64) -> Result<Vec<String>> {
    let context = "verifying";
    let mut problems = Vec::new();
    let (mut chunk_keys, mut document_keys) = (HashSet::new(), HashSet::new());
    let (mut miscounted, mut misplaced, mut unreadable) = (0usize, 0usize, 0usize);
    // A page at a time, in key order: a large library's blocks need not
    // fit in memory at once.
    let mut after: (i16, String, i64) = (i16::MIN, String::new(), i64::MIN);
    loop {
        let rows = wait(client.query(
            "SELECT unit, term, block, entries, postings FROM folio_term_blocks
             WHERE library_id = $1 AND (unit, term, block) > ($2, $3, $4)
             ORDER BY unit, term, block LIMIT $5",
            &[&library_id, &after.0, &after.1, &after.2, &VERIFY_PAGE],
        ))
        .map_err(pg_err(context))?;
        let Some(last) = rows.last() else {
            break;
        };
        after = (last.get(0), last.get(1), last.get(2));
        for row in &rows {
            let (unit, block, count): (i16, i64, i32) = (row.get(0), row.get(2), row.get(3));
            let Ok(entries) = entries(row.get(4)) else {
                unreadable += 1;
                continue;
            };
            if entries.len() != count as usize {
                miscounted += 1;
            }
            let keys = if unit == Unit::Chunk.code() {
                misplaced += entries
                    .iter()
                    .filter(|entry| chunk_block(entry.0) != block)
                    .count();
                &mut chunk_keys
            } else {
                &mut document_keys
            };
            keys.extend(entries.iter().map(|entry| entry.0));
        }
    }
    for (n, what) in [
        (unreadable, "rows of the lexical index do not decode"),
        (
            miscounted,
            "rows of the lexical index count other than their postings",
        ),
        (misplaced, "chunk postings are outside their block"),
    ] {
        if n > 0 {
            problems.push(format!("{n} {what}"));
        }
    }
    let mut missing: BTreeMap<String, usize> = BTreeMap::new();
    for row in wait(client.query(
        "SELECT key, document_id, terms FROM folio_chunks WHERE library_id = $1",
        &[&library_id],
    ))
    .map_err(pg_err(context))?
    {
        let key: i64 = row.get(0);
        if !chunk_keys.remove(&key) && row.get::<_, i32>(2) > 0 {
            *missing.entry(row.get(1)).or_default() += 1;
        }
    }
    for (document, n) in missing {
        problems.push(format!(
            "document {document}: {n} chunks missing from the lexical index"
        ));
    }
    if !chunk_keys.is_empty() {
        problems.push(format!(
            "the lexical index holds {} chunks no document has",
            chunk_keys.len()
        ));
    }
    // Whole-document entries (grouped searches rank by them): a
    // document's key is its id's 16 hex digits as a number.
    for row in wait(client.query(
        "SELECT id, terms FROM folio_documents WHERE library_id = $1 ORDER BY id",
        &[&library_id],
    ))
    .map_err(pg_err(context))?
    {
        let id: &str = row.get(0);
        let found =
            analysis::document_key(id).is_some_and(|key| document_keys.remove(&(key as i64)));
        if !found && row.get::<_, i32>(1) > 0 {
            problems.push(format!(
                "document {id}: its whole-text entry is missing from the lexical index"
            ));
        }
    }
    if !document_keys.is_empty() {
        problems.push(format!(
            "the lexical index holds {} document entries no document has",
            document_keys.len()
        ));
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_read_back_what_was_written() {
        let entries = vec![
            (i64::MIN, 1, 0),
            (-5, 300, 17),
            (0, 1, 1),
            (1_023, 2, 70_000),
            (i64::MAX, i32::MAX, 255),
        ];
        let bytes = encode(&entries);
        assert_eq!(self::entries(&bytes).unwrap(), entries);
        // Consecutive chunk keys with small counts take three bytes each.
        let dense: Vec<Entry> = (5_000..5_100).map(|key| (key, 2, 40)).collect();
        assert_eq!(encode(&dense).len(), 2 + 2 + 99 * 3);
        assert_eq!(self::entries(&encode(&dense)).unwrap(), dense);
        assert!(self::entries(&[0x80]).is_err());
        assert!(self::entries(&[]).unwrap().is_empty());
    }
}
