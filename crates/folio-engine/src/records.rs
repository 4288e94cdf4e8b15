//! Structured records: a library's record schema, record files (JSON Lines,
//! a JSON array, CSV), and the record queries — facets and neighbours.

use std::path::Path;

use folio_core::record::describe;
use folio_core::{
    DocumentId, DocumentSummary, ErrorCode, LibraryName, NeighbourOrder, RecordSchema, ValidRecord,
};
use folio_store::{FacetRequest, Facets, StoreError};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::{Engine, EngineError, Result};

/// The layouts a records file may have, chosen by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordsFormat {
    /// One JSON object per line (`.jsonl`, `.ndjson`).
    JsonLines,
    /// One JSON array of objects (`.json`).
    JsonArray,
    /// A header row, then one record per row (`.csv`, `.tsv`), in a library
    /// that declares a record schema; elsewhere such a file is a table.
    Csv { delimiter: u8 },
}

impl RecordsFormat {
    pub fn from_path(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match extension.as_str() {
            "jsonl" | "ndjson" => RecordsFormat::JsonLines,
            "json" => RecordsFormat::JsonArray,
            "csv" => RecordsFormat::Csv { delimiter: b',' },
            "tsv" => RecordsFormat::Csv { delimiter: b'\t' },
            _ => return None,
        })
    }
}

/// One record read from a file, or why its line/row could not be read; the
/// string names the place ("line 3", "row 7", "item 2").
pub type ReadRecord = (String, std::result::Result<Map<String, Value>, EngineError>);

fn not_an_object(value: &Value) -> EngineError {
    EngineError::new(
        ErrorCode::MalformedInput,
        format!("a record must be a JSON object, not {}", describe(value)),
    )
}

/// Splits a records file into records. A bad line is reported on its own;
/// the others are still read.
pub fn read_records(bytes: &[u8], format: RecordsFormat) -> Result<Vec<ReadRecord>> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        EngineError::new(
            ErrorCode::MalformedInput,
            format!("a records file must be UTF-8: {e}"),
        )
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(match format {
        RecordsFormat::JsonLines => text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| {
                let place = format!("line {}", i + 1);
                let record = match serde_json::from_str::<Value>(line) {
                    Ok(Value::Object(map)) => Ok(map),
                    Ok(other) => Err(not_an_object(&other)),
                    Err(e) => Err(EngineError::new(
                        ErrorCode::MalformedInput,
                        format!("invalid JSON: {e}"),
                    )),
                };
                (place, record)
            })
            .collect(),
        RecordsFormat::JsonArray => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    let place = format!("item {}", i + 1);
                    match item {
                        Value::Object(map) => (place, Ok(map)),
                        other => (place, Err(not_an_object(&other))),
                    }
                })
                .collect(),
            Ok(Value::Object(map)) => vec![("item 1".into(), Ok(map))],
            Ok(other) => {
                return Err(EngineError::new(
                    ErrorCode::MalformedInput,
                    format!(
                        "a JSON records file holds an array of objects, not {}",
                        describe(&other)
                    ),
                ));
            }
            Err(e) => {
                return Err(EngineError::new(
                    ErrorCode::MalformedInput,
                    format!("invalid JSON: {e}"),
                ));
            }
        },
        RecordsFormat::Csv { delimiter } => {
            let mut reader = csv::ReaderBuilder::new()
                .delimiter(delimiter)
                .flexible(false)
                .from_reader(text.as_bytes());
            let headers: Vec<String> = reader
                .headers()
                .map_err(|e| {
                    EngineError::new(ErrorCode::MalformedInput, format!("CSV header: {e}"))
                })?
                .iter()
                .map(|h| h.trim().to_string())
                .collect();
            if headers.iter().any(String::is_empty) {
                return Err(EngineError::new(
                    ErrorCode::MalformedInput,
                    "every CSV column needs a name in the header row",
                ));
            }
            reader
                .records()
                .enumerate()
                .map(|(i, row)| {
                    // Row 1 is the header.
                    let place = format!("row {}", i + 2);
                    let record = row
                        .map_err(|e| {
                            EngineError::new(ErrorCode::MalformedInput, format!("CSV: {e}"))
                        })
                        .map(|row| {
                            headers
                                .iter()
                                .zip(row.iter())
                                .filter(|(_, cell)| !cell.is_empty())
                                .map(|(h, cell)| (h.clone(), Value::String(cell.to_string())))
                                .collect()
                        });
                    (place, record)
                })
                .collect()
        }
    })
}

/// The source locator of a valid record: its key, or a digest of its text.
pub fn record_locator(record: &ValidRecord) -> String {
    match &record.key {
        Some(key) => format!("record:{key}"),
        None => format!(
            "record:{}",
            &hex::encode(Sha256::digest(record.text.as_bytes()))[..32]
        ),
    }
}

/// The content hash of a record: its text and every field, so a changed
/// field replaces the stored record.
pub fn record_hash(record: &ValidRecord) -> String {
    let fields: std::collections::BTreeMap<&String, &Value> = record.fields.iter().collect();
    let mut hasher = Sha256::new();
    hasher.update(record.text.as_bytes());
    hasher.update([0]);
    hasher.update(serde_json::to_vec(&fields).unwrap_or_default());
    hasher.update([0]);
    hasher.update(record.title.as_deref().unwrap_or("").as_bytes());
    hex::encode(hasher.finalize())
}

impl Engine {
    /// The library's record schema; `None` when it declares none.
    pub fn record_schema(&self, library: &LibraryName) -> Result<Option<RecordSchema>> {
        Ok(self.store.record_schema(library)?)
    }

    /// Declares the library's record schema, creating the library (pinned to
    /// the model's space) when it does not exist yet.
    pub fn set_record_schema(&self, library: &LibraryName, schema: &RecordSchema) -> Result<()> {
        self.writable("declaring a record schema")?;
        schema.check().map_err(EngineError::invalid)?;
        match self.store.library(library) {
            Ok(_) => {}
            Err(StoreError::LibraryNotFound(_)) => {
                let embedder = self.embedder()?;
                self.store.create_library(library, embedder.space())?;
            }
            Err(e) => return Err(e.into()),
        }
        Ok(self.store.set_record_schema(library, Some(schema))?)
    }

    /// Groups and summarises a library's documents.
    pub fn facets(&self, library: &LibraryName, request: &FacetRequest) -> Result<Facets> {
        if request.group_by.len() > 4 {
            return Err(EngineError::invalid("group by at most 4 fields"));
        }
        if request.stats.len() > 16 {
            return Err(EngineError::invalid("summarise at most 16 fields"));
        }
        Ok(self.store.facets(library, request)?)
    }

    /// Up to `limit` documents of the library that pass `filter` (document
    /// fields only), ordered by source.
    pub fn find_documents(
        &self,
        library: &LibraryName,
        filter: &folio_core::Filter,
        limit: usize,
    ) -> Result<Vec<DocumentSummary>> {
        Ok(self.store.find_documents(library, filter, limit)?)
    }

    /// The records before and after a document, in `order` or else the
    /// order its library's schema declares.
    pub fn neighbours(
        &self,
        id: &str,
        order: Option<&NeighbourOrder>,
    ) -> Result<(Option<DocumentSummary>, Option<DocumentSummary>)> {
        let id = DocumentId::parse(id)
            .ok_or_else(|| EngineError::new(ErrorCode::NotFound, format!("no document {id:?}")))?;
        let order = match order {
            Some(order) => order.clone(),
            None => {
                let document = self.store.document(&id)?;
                self.store
                    .record_schema(&document.library)?
                    .and_then(|s| s.neighbours)
                    .ok_or_else(|| {
                        EngineError::invalid(format!(
                            "library {} declares no neighbour order; name the order field",
                            document.library
                        ))
                    })?
            }
        };
        Ok(self.store.neighbours(&id, &order)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_report_bad_lines_and_keep_the_rest() {
        let read = read_records(
            b"{\"a\": 1}\n\nnot json\n[1]\n{\"b\": \"x\"}\n",
            RecordsFormat::JsonLines,
        )
        .unwrap();
        let places: Vec<(&str, bool)> = read.iter().map(|(p, r)| (p.as_str(), r.is_ok())).collect();
        assert_eq!(
            places,
            vec![
                ("line 1", true),
                ("line 3", false),
                ("line 4", false),
                ("line 5", true)
            ]
        );
    }

    #[test]
    fn csv_rows_become_string_fields() {
        let read = read_records(
            "\u{feff}name,tags,empty\nAnn,\"a; b\",\nBob,c,x,extra\n".as_bytes(),
            RecordsFormat::Csv { delimiter: b',' },
        )
        .unwrap();
        let first = read[0].1.as_ref().unwrap();
        assert_eq!(first["name"], "Ann");
        assert_eq!(first["tags"], "a; b");
        assert!(!first.contains_key("empty"));
        assert_eq!(read[1].0, "row 3");
        assert!(read[1].1.is_err(), "a row with an extra cell is refused");
    }

    #[test]
    fn json_arrays_and_garbage() {
        let read = read_records(b"[{\"a\": 1}, 2]", RecordsFormat::JsonArray).unwrap();
        assert!(read[0].1.is_ok() && read[1].1.is_err());
        assert!(read_records(b"\"x\"", RecordsFormat::JsonArray).is_err());
        assert!(read_records(&[0xff, 0xfe], RecordsFormat::JsonLines).is_err());
    }
}
