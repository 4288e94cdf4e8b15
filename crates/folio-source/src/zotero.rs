//! A local Zotero data directory, read-only: `zotero.sqlite` is copied
//! first (Zotero holds an exclusive lock while it runs, and folio must never
//! write to it), then its items, creators, tags, collections and attachments
//! are read. Better BibTeX citekeys come from the native `citationKey` field
//! (Zotero 7), from `better-bibtex.sqlite`, or from a `Citation Key:` line in
//! Extra.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use folio_core::citation::{first_year, normalise_doi};
use rusqlite::{Connection, OpenFlags, params};
use serde_json::{Map, Value};

use crate::SourceError;

/// A file attached to an item.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    pub key: String,
    pub path: PathBuf,
    pub content_type: Option<String>,
}

/// A regular (non-attachment, non-note) Zotero item.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoteroItem {
    pub key: String,
    pub library_id: i64,
    pub item_type: String,
    pub title: Option<String>,
    pub date_modified: String,
    /// Citation and descriptive fields as document metadata: citekey, doi,
    /// title, authors, year, url, container_title, abstract, language,
    /// tags, collections, zotero_key, item_type.
    pub metadata: Map<String, Value>,
    pub abstract_note: Option<String>,
    pub language: Option<String>,
    pub attachments: Vec<Attachment>,
}

/// Which items to read.
#[derive(Debug, Clone, Default)]
pub struct ZoteroFilter {
    /// Only items in the collection with this name (or one of its
    /// subcollections).
    pub collection: Option<String>,
    /// Only items with this tag.
    pub tag: Option<String>,
}

fn io(path: &Path, reason: impl std::fmt::Display) -> SourceError {
    SourceError::Io {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// Copies a SQLite database (and its WAL, if any) into `into` and opens the
/// copy read-only.
fn open_copy(database: &Path, into: &Path) -> Result<Connection, SourceError> {
    let name = database
        .file_name()
        .ok_or_else(|| io(database, "not a file"))?;
    let copy = into.join(name);
    std::fs::copy(database, &copy).map_err(|e| io(database, e))?;
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", database.display()));
        if side.exists() {
            let target = PathBuf::from(format!("{}{suffix}", copy.display()));
            std::fs::copy(&side, target).map_err(|e| io(&side, e))?;
        }
    }
    // Read-write on the copy so SQLite can fold a copied WAL in; the
    // original is never opened.
    Connection::open_with_flags(&copy, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(|e| io(database, e))
}

fn citekey_in_extra(extra: &str) -> Option<String> {
    extra.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        let name = name.trim().to_ascii_lowercase();
        (name == "citation key" || name == "citationkey")
            .then(|| value.trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

/// Reads the items of the Zotero data directory `dir`. `scratch` receives
/// the database copies (a temporary directory the caller removes).
pub fn read_library(
    dir: &Path,
    filter: &ZoteroFilter,
    scratch: &Path,
) -> Result<Vec<ZoteroItem>, SourceError> {
    let database = dir.join("zotero.sqlite");
    if !database.is_file() {
        return Err(SourceError::NotFound {
            path: database.display().to_string(),
        });
    }
    let conn = open_copy(&database, scratch)?;
    let sql = |e: rusqlite::Error| io(&database, e);
    let citekeys = better_bibtex_keys(dir, scratch);

    let mut where_clause = String::from(
        "it.typeName NOT IN ('attachment', 'note', 'annotation')
         AND i.itemID NOT IN (SELECT itemID FROM deletedItems)",
    );
    let mut args: Vec<String> = Vec::new();
    if let Some(collection) = &filter.collection {
        where_clause.push_str(
            " AND i.itemID IN (
                WITH RECURSIVE wanted(id) AS (
                    SELECT collectionID FROM collections WHERE collectionName = ?
                    UNION SELECT c.collectionID FROM collections c JOIN wanted w ON c.parentCollectionID = w.id)
                SELECT itemID FROM collectionItems WHERE collectionID IN (SELECT id FROM wanted))",
        );
        args.push(collection.clone());
    }
    if let Some(tag) = &filter.tag {
        where_clause.push_str(
            " AND i.itemID IN (SELECT itemID FROM itemTags JOIN tags USING (tagID) WHERE tags.name = ?)",
        );
        args.push(tag.clone());
    }
    let mut stmt = conn
        .prepare(&format!(
            "SELECT i.itemID, i.key, i.libraryID, it.typeName, i.dateModified
             FROM items i JOIN itemTypes it ON it.itemTypeID = i.itemTypeID
             WHERE {where_clause} ORDER BY i.itemID"
        ))
        .map_err(sql)?;
    let rows: Vec<(i64, String, i64, String, String)> = stmt
        .query_map(rusqlite::params_from_iter(&args), |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(sql)?;

    let mut fields_stmt = conn
        .prepare(
            "SELECT f.fieldName, v.value FROM itemData d
             JOIN fields f ON f.fieldID = d.fieldID
             JOIN itemDataValues v ON v.valueID = d.valueID WHERE d.itemID = ?",
        )
        .map_err(sql)?;
    let mut creators_stmt = conn
        .prepare(
            "SELECT c.firstName, c.lastName, c.fieldMode FROM itemCreators ic
             JOIN creators c ON c.creatorID = ic.creatorID WHERE ic.itemID = ? ORDER BY ic.orderIndex",
        )
        .map_err(sql)?;
    let mut tags_stmt = conn
        .prepare("SELECT t.name FROM itemTags it JOIN tags t ON t.tagID = it.tagID WHERE it.itemID = ? ORDER BY t.name")
        .map_err(sql)?;
    let mut collections_stmt = conn
        .prepare(
            "SELECT c.collectionName FROM collectionItems ci JOIN collections c ON c.collectionID = ci.collectionID
             WHERE ci.itemID = ? ORDER BY c.collectionName",
        )
        .map_err(sql)?;
    let mut attachments_stmt = conn
        .prepare(
            "SELECT i.key, a.path, a.contentType, a.linkMode FROM itemAttachments a
             JOIN items i ON i.itemID = a.itemID
             WHERE a.parentItemID = ? AND a.itemID NOT IN (SELECT itemID FROM deletedItems)
             ORDER BY i.itemID",
        )
        .map_err(sql)?;

    let mut items = Vec::with_capacity(rows.len());
    for (id, key, library_id, item_type, date_modified) in rows {
        let fields: HashMap<String, String> = fields_stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(sql)?;
        let authors: Vec<String> = creators_stmt
            .query_map([id], |r| {
                let first: Option<String> = r.get(0)?;
                let last: Option<String> = r.get(1)?;
                let single: Option<i64> = r.get(2)?;
                Ok(match (first.filter(|f| !f.is_empty()), last, single) {
                    (_, Some(last), Some(1)) => last,
                    (Some(first), Some(last), _) => format!("{last}, {first}"),
                    (None, Some(last), _) => last,
                    (Some(first), None, _) => first,
                    (None, None, _) => String::new(),
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(sql)?;
        let tags: Vec<String> = tags_stmt
            .query_map([id], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(sql)?;
        let collections: Vec<String> = collections_stmt
            .query_map([id], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(sql)?;
        let attachments: Vec<Attachment> = attachments_stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql)?
            .into_iter()
            .filter_map(|(attachment_key, path, content_type, _mode)| {
                let path = path?;
                // Imported files: "storage:name.pdf" under storage/KEY/;
                // linked files: an absolute path.
                let resolved = match path.strip_prefix("storage:") {
                    Some(name) => dir.join("storage").join(&attachment_key).join(name),
                    None => PathBuf::from(path),
                };
                Some(Attachment {
                    key: attachment_key,
                    path: resolved,
                    content_type,
                })
            })
            .collect();

        let field = |name: &str| {
            fields
                .get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let citekey = field("citationKey")
            .or_else(|| citekeys.get(&(library_id, key.clone())).cloned())
            .or_else(|| field("extra").as_deref().and_then(citekey_in_extra));
        let mut metadata = Map::new();
        let mut put = |name: &str, value: Option<Value>| {
            if let Some(value) = value {
                metadata.insert(name.to_string(), value);
            }
        };
        put("citekey", citekey.map(Value::String));
        put(
            "doi",
            field("DOI")
                .as_deref()
                .and_then(normalise_doi)
                .map(Value::String),
        );
        put("title", field("title").map(Value::String));
        put(
            "authors",
            (!authors.is_empty()).then(|| Value::from(authors.clone())),
        );
        put(
            "year",
            field("date")
                .as_deref()
                .and_then(first_year)
                .map(Value::from),
        );
        put("url", field("url").map(Value::String));
        put(
            "container_title",
            field("publicationTitle")
                .or_else(|| field("bookTitle"))
                .or_else(|| field("proceedingsTitle"))
                .map(Value::String),
        );
        put("language", field("language").map(Value::String));
        put("tags", (!tags.is_empty()).then(|| Value::from(tags)));
        put(
            "collections",
            (!collections.is_empty()).then(|| Value::from(collections)),
        );
        put("zotero_key", Some(Value::String(key.clone())));
        put("item_type", Some(Value::String(item_type.clone())));
        items.push(ZoteroItem {
            title: field("title"),
            abstract_note: field("abstractNote"),
            language: field("language"),
            key,
            library_id,
            item_type,
            date_modified,
            metadata,
            attachments,
        });
    }
    Ok(items)
}

/// Citekeys from Better BibTeX's own database, by (library, item key).
/// Missing or unreadable: none (the other sources still apply).
fn better_bibtex_keys(dir: &Path, scratch: &Path) -> HashMap<(i64, String), String> {
    let database = dir.join("better-bibtex.sqlite");
    if !database.is_file() {
        return HashMap::new();
    }
    let Ok(conn) = open_copy(&database, scratch) else {
        return HashMap::new();
    };
    let read = || -> rusqlite::Result<HashMap<(i64, String), String>> {
        let mut stmt = conn.prepare("SELECT libraryID, itemKey, citationKey FROM citationkey")?;
        let rows = stmt.query_map(params![], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
        rows.collect()
    };
    read().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citekeys_in_extra() {
        assert_eq!(
            citekey_in_extra("tex.foo: x\nCitation Key: smith2020graphs").as_deref(),
            Some("smith2020graphs")
        );
        assert_eq!(citekey_in_extra("nothing"), None);
    }
}
