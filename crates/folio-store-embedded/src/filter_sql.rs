//! Filters as SQL over the documents (`d`) and chunks (`c`) tables. Field
//! names are validated by `Filter::from_json` and still bound as parameters
//! (JSON paths), never spliced into the SQL text.

use folio_core::{Condition, Filter};
use rusqlite::types::Value as Sql;
use serde_json::Value;

/// Document columns a filter can address directly.
pub(crate) fn column(field: &str) -> Option<&'static str> {
    folio_store::document_column(field)
}

fn sql_value(value: &Value) -> Sql {
    match value {
        Value::String(s) => Sql::Text(s.clone()),
        Value::Bool(b) => Sql::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Sql::Integer(i),
            None => Sql::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        other => Sql::Text(other.to_string()),
    }
}

/// The JSON path of a metadata key. `metadata.KEY` names the key KEY even
/// where a document field has that name (a record's own `content_hash`).
pub(crate) fn json_path(field: &str) -> String {
    let key = folio_store::metadata_key(field);
    format!("$.\"{}\"", key.replace('"', ""))
}

/// A filter as SQL: conditions on metadata as selects of document ids
/// (index ranges of `metadata_values`, never each document's JSON), the
/// rest as conditions on `d` and `c`.
#[derive(Default)]
struct Parts {
    /// `SELECT document_id FROM metadata_values ...` with its parameters.
    metadata: Vec<(String, Vec<Sql>)>,
    /// Conditions joined with AND, each starting with " AND ".
    plain: String,
    plain_params: Vec<Sql>,
}

impl Parts {
    /// Documents of `library_id` with a value of `field` where `predicate`
    /// holds; `values` are the predicate's parameters.
    fn metadata(&mut self, library_id: i64, field: &str, predicate: &str, values: Vec<Sql>) {
        let key = folio_store::metadata_key(field).replace('"', "");
        let mut params = vec![Sql::Integer(library_id), Sql::Text(key)];
        params.extend(values);
        self.metadata.push((
            format!(
                "SELECT document_id FROM metadata_values WHERE library_id = ? AND field = ? AND {predicate}"
            ),
            params,
        ));
    }

    fn plain(&mut self, sql: &str, values: impl IntoIterator<Item = Sql>) {
        self.plain.push_str(sql);
        self.plain_params.extend(values);
    }
}

fn parts(filter: &Filter, library_id: i64) -> Parts {
    let mut parts = Parts::default();
    for condition in &filter.conditions {
        match condition {
            Condition::Equals { field, value } => match column(field) {
                Some(col) => parts.plain(&format!(" AND {col} = ?"), [sql_value(value)]),
                // A list field's items are rows of their own, so one lookup
                // covers both scalar and list fields.
                None => parts.metadata(library_id, field, "value = ?", vec![sql_value(value)]),
            },
            Condition::EqualsFold { field, value } => {
                // SQLite's lower() folds ASCII only; non-ASCII letters must
                // match exactly.
                let value = Sql::Text(value.clone());
                match column(field) {
                    Some(col) => parts.plain(&format!(" AND lower({col}) = lower(?)"), [value]),
                    None => parts.metadata(
                        library_id,
                        field,
                        "type = 'text' AND lower(value) = lower(?)",
                        vec![value],
                    ),
                }
            }
            Condition::AnyOf { field, values } => {
                let marks = vec!["?"; values.len()].join(", ");
                let values = values.iter().map(sql_value);
                match column(field) {
                    Some(col) => parts.plain(&format!(" AND {col} IN ({marks})"), values),
                    None => parts.metadata(
                        library_id,
                        field,
                        &format!("value IN ({marks})"),
                        values.collect(),
                    ),
                }
            }
            Condition::Range {
                field,
                gte,
                gt,
                lte,
                lt,
            } => {
                let bounds = [(gte, ">="), (gt, ">"), (lte, "<="), (lt, "<")];
                for (bound, op) in bounds {
                    let Some(bound) = bound else { continue };
                    let value = sql_value(bound);
                    match column(field) {
                        Some(col) => parts.plain(&format!(" AND {col} {op} ?"), [value]),
                        // Numbers, and strings that start with a digit
                        // ("2019", "2019-05-01" compares as 2019); a list
                        // is neither.
                        None if bound.is_number() => parts.metadata(
                            library_id,
                            field,
                            &format!(
                                "whole = 1 AND (type IN ('integer', 'real') OR value GLOB '[0-9]*') \
                                 AND CAST(value AS REAL) {op} ?"
                            ),
                            vec![value],
                        ),
                        None => parts.metadata(
                            library_id,
                            field,
                            &format!("whole = 1 AND type = 'text' AND value {op} ?"),
                            vec![value],
                        ),
                    }
                }
            }
            Condition::PathPrefix(prefix) => parts.plain(
                " AND substr(d.source, 1, ?) = ?",
                [
                    Sql::Integer(prefix.chars().count() as i64),
                    Sql::Text(prefix.clone()),
                ],
            ),
            Condition::SectionPrefix(prefix) => {
                // Each heading from its start to a word boundary: "Part I"
                // is "Part I", "Part I: Foundations" or "Part I > ...",
                // never "Part II" (`folio_core::filter::section_under`).
                parts.plain(
                    " AND folio_section_under(c.section, ?)",
                    [Sql::Text(prefix.clone())],
                );
            }
            Condition::Entity(key) => parts.plain(
                " AND EXISTS (SELECT 1 FROM entity_mentions m WHERE m.library_id = ? \
                 AND m.entity = ? AND m.document_id = c.document_id AND m.chunk = c.idx)",
                [Sql::Integer(library_id), Sql::Text(key.clone())],
            ),
        }
    }
    parts
}

/// The WHERE fragment (joined with AND, starting with " AND ") over
/// documents (`d`) of `library_id`, and its parameters.
pub fn where_clause(filter: &Filter, library_id: i64) -> (String, Vec<Sql>) {
    let parts = parts(filter, library_id);
    let mut sql = String::new();
    let mut params = Vec::new();
    for (select, values) in parts.metadata {
        sql.push_str(&format!(" AND d.id IN ({select})"));
        params.extend(values);
    }
    sql.push_str(&parts.plain);
    params.extend(parts.plain_params);
    (sql, params)
}

/// A query of the keys of the chunks of `library_id` that `filter`
/// allows, each with its document's id, and its parameters. With
/// conditions on metadata, the intersection of their (indexed) document
/// sets drives the query, so its cost follows what the filter selects, not
/// the library's size.
pub fn chunks_and_documents(filter: &Filter, library_id: i64) -> (String, Vec<Sql>) {
    select(filter, library_id, "c.key, c.document_id")
}

/// A query of the ids of the documents of `library_id` that `filter`
/// allows, and its parameters, when every condition is on documents'
/// metadata (the metadata index alone answers it); `None` otherwise.
pub fn documents_by_metadata(filter: &Filter, library_id: i64) -> Option<(String, Vec<Sql>)> {
    let parts = parts(filter, library_id);
    if parts.metadata.is_empty() || !parts.plain.is_empty() {
        return None;
    }
    Some(intersection(parts.metadata))
}

/// The documents every metadata condition selects: their selects joined
/// by INTERSECT, and their parameters in order.
fn intersection(metadata: Vec<(String, Vec<Sql>)>) -> (String, Vec<Sql>) {
    let (selects, params): (Vec<String>, Vec<Vec<Sql>>) = metadata.into_iter().unzip();
    (selects.join(" INTERSECT "), params.concat())
}

/// `columns` of the chunks (`c`) of `library_id` that `filter` allows.
fn select(filter: &Filter, library_id: i64, columns: &str) -> (String, Vec<Sql>) {
    let parts = parts(filter, library_id);
    if parts.metadata.is_empty() {
        let mut params = vec![Sql::Integer(library_id)];
        params.extend(parts.plain_params);
        return (
            format!(
                "SELECT {columns} FROM documents d JOIN chunks c ON c.document_id = d.id WHERE d.library_id = ?{}",
                parts.plain
            ),
            params,
        );
    }
    let (selected, mut params) = intersection(parts.metadata);
    // CROSS JOIN keeps SQLite's join order: the selected documents first,
    // then each one's chunks (and its row, only when other conditions
    // need it: the metadata index already holds the library).
    if parts.plain.is_empty() {
        return (
            format!(
                "SELECT {columns} FROM ({selected}) s CROSS JOIN chunks c ON c.document_id = s.document_id"
            ),
            params,
        );
    }
    params.push(Sql::Integer(library_id));
    params.extend(parts.plain_params);
    (
        format!(
            "SELECT {columns} FROM ({selected}) s CROSS JOIN documents d ON d.id = s.document_id \
             CROSS JOIN chunks c ON c.document_id = d.id WHERE d.library_id = ?{}",
            parts.plain
        ),
        params,
    )
}

/// Registers the SQL functions filters use on `conn`:
/// `folio_section_under(section, prefix)`, the rule of a section prefix.
pub fn register_functions(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "folio_section_under",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let section: String = ctx.get(0)?;
            let prefix: String = ctx.get(1)?;
            Ok(folio_core::filter::section_under(&section, &prefix))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_match_placeholders() {
        let filter = Filter::from_json(&serde_json::json!({
            "year": {"gte": 2019, "lt": "2024"}, "tags": ["a", "b"], "author": "x", "format": "pdf",
            "speaker": {"ieq": "X"}, "title": {"ieq": "T"},
            "path_prefix": "/p", "section_prefix": "M"
        }))
        .unwrap();
        let (sql, params) = where_clause(&filter, 1);
        assert_eq!(sql.matches('?').count(), params.len(), "{sql}");
        let (sql, params) = chunks_and_documents(&filter, 1);
        assert_eq!(sql.matches('?').count(), params.len(), "{sql}");
        // Conditions beside metadata (a path, a section) need the chunks.
        assert!(documents_by_metadata(&filter, 1).is_none());
        let metadata = Filter::from_json(&serde_json::json!({
            "year": {"gte": 2019}, "tags": ["a", "b"], "author": "x"
        }))
        .unwrap();
        let (sql, params) = documents_by_metadata(&metadata, 1).unwrap();
        assert_eq!(sql.matches('?').count(), params.len(), "{sql}");
    }
}
