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

/// A LIKE pattern (with `ESCAPE '\'`) matching text that starts with `prefix`.
fn like_prefix(prefix: &str) -> String {
    format!("{}%", folio_store::like_escape(prefix))
}

/// The WHERE fragment (joined with AND, starting with " AND ") and its
/// parameters.
pub fn where_clause(filter: &Filter) -> (String, Vec<Sql>) {
    let mut sql = String::new();
    let mut params = Vec::new();
    for condition in &filter.conditions {
        match condition {
            Condition::Equals { field, value } => match column(field) {
                Some(col) => {
                    sql.push_str(&format!(" AND {col} = ?"));
                    params.push(sql_value(value));
                }
                None => {
                    // json_each over a scalar yields the scalar itself, so one
                    // expression covers both scalar and list fields.
                    sql.push_str(
                        " AND EXISTS (SELECT 1 FROM json_each(d.metadata, ?) WHERE value = ?)",
                    );
                    params.push(Sql::Text(json_path(field)));
                    params.push(sql_value(value));
                }
            },
            Condition::EqualsFold { field, value } => {
                // SQLite's lower() folds ASCII only; non-ASCII letters must
                // match exactly.
                match column(field) {
                    Some(col) => sql.push_str(&format!(" AND lower({col}) = lower(?)")),
                    None => {
                        sql.push_str(
                            " AND EXISTS (SELECT 1 FROM json_each(d.metadata, ?) WHERE type = 'text' AND lower(value) = lower(?))",
                        );
                        params.push(Sql::Text(json_path(field)));
                    }
                }
                params.push(Sql::Text(value.clone()));
            }
            Condition::AnyOf { field, values } => {
                let marks = vec!["?"; values.len()].join(", ");
                match column(field) {
                    Some(col) => sql.push_str(&format!(" AND {col} IN ({marks})")),
                    None => {
                        sql.push_str(&format!(
                            " AND EXISTS (SELECT 1 FROM json_each(d.metadata, ?) WHERE value IN ({marks}))"
                        ));
                        params.push(Sql::Text(json_path(field)));
                    }
                }
                params.extend(values.iter().map(sql_value));
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
                    let numeric = bound.is_number();
                    match column(field) {
                        Some(col) => sql.push_str(&format!(" AND {col} {op} ?")),
                        None if numeric => {
                            // Numbers, and strings that start with a digit
                            // ("2019", "2019-05-01" compares as 2019).
                            sql.push_str(&format!(
                                " AND (json_type(d.metadata, ?1x) IN ('integer', 'real') OR json_extract(d.metadata, ?1x) GLOB '[0-9]*') \
                                 AND CAST(json_extract(d.metadata, ?1x) AS REAL) {op} ?"
                            ));
                        }
                        None => sql.push_str(&format!(
                            " AND json_type(d.metadata, ?1x) = 'text' AND json_extract(d.metadata, ?1x) {op} ?"
                        )),
                    }
                    if column(field).is_none() {
                        // Each ?1x above is one occurrence of the path.
                        let occurrences = if numeric { 3 } else { 2 };
                        for _ in 0..occurrences {
                            params.push(Sql::Text(json_path(field)));
                        }
                    }
                    params.push(sql_value(bound));
                }
            }
            Condition::PathPrefix(prefix) => {
                sql.push_str(" AND substr(d.source, 1, ?) = ?");
                params.push(Sql::Integer(prefix.chars().count() as i64));
                params.push(Sql::Text(prefix.clone()));
            }
            Condition::SectionPrefix(prefix) => {
                // Whole components: "Part I" is "Part I" or "Part I > ...",
                // never "Part II".
                let prefix = prefix.trim().trim_end_matches('>').trim_end();
                sql.push_str(" AND (c.section LIKE ? ESCAPE '\\' OR c.section LIKE ? ESCAPE '\\')");
                let exact = like_prefix(prefix);
                params.push(Sql::Text(exact[..exact.len() - 1].to_string()));
                params.push(Sql::Text(like_prefix(&format!("{prefix} > "))));
            }
        }
    }
    (sql.replace("?1x", "?"), params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_prefix_escapes_wildcards() {
        assert_eq!(like_prefix("50%_a\\"), "50\\%\\_a\\\\%");
    }

    #[test]
    fn parameters_match_placeholders() {
        let filter = Filter::from_json(&serde_json::json!({
            "year": {"gte": 2019, "lt": "2024"}, "tags": ["a", "b"], "author": "x", "format": "pdf",
            "speaker": {"ieq": "X"}, "title": {"ieq": "T"},
            "path_prefix": "/p", "section_prefix": "M"
        }))
        .unwrap();
        let (sql, params) = where_clause(&filter);
        assert_eq!(sql.matches('?').count(), params.len(), "{sql}");
    }
}
