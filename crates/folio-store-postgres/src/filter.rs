//! Filters as SQL over the documents (`d`) and chunks (`c`) tables, each
//! condition in a form an index serves: metadata equality as JSON
//! containment (the GIN index), document columns through btrees, prefixes as
//! LIKE on "C"-collated text. Values and keys are bound parameters, never
//! spliced into the SQL text.

use folio_core::{Condition, Filter};
use folio_store::{document_column, like_escape, metadata_key};
use serde_json::{Value, json};
use tokio_postgres::types::ToSql;

pub type Param = Box<dyn ToSql + Sync + Send>;

/// SQL text under construction and its parameters.
#[derive(Default)]
pub struct Query {
    pub params: Vec<Param>,
}

impl Query {
    /// Binds a value; returns its placeholder.
    pub fn bind<T: ToSql + Sync + Send + 'static>(&mut self, value: T) -> String {
        self.params.push(Box::new(value));
        format!("${}", self.params.len())
    }

    pub fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }
}

/// Integer columns; the others are text.
fn numeric_column(column: &str) -> bool {
    matches!(column, "d.page_count" | "d.chunk_count")
}

/// A JSON value as text the way SQL compares it with a text column.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => i64::from(*b).to_string(),
        other => other.to_string(),
    }
}

fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// Metadata equality: the key holds the value, or a list holding it.
fn contains(q: &mut Query, key: &str, value: &Value) -> String {
    let scalar = q.bind(json!({ key: value }));
    let listed = q.bind(json!({ key: [value] }));
    format!("(d.metadata @> {scalar}::jsonb OR d.metadata @> {listed}::jsonb)")
}

/// The WHERE fragment (conditions joined with AND, starting with " AND ").
pub fn where_clause(filter: &Filter, q: &mut Query) -> String {
    let mut sql = String::new();
    for condition in &filter.conditions {
        let clause = match condition {
            Condition::Equals { field, value } => match document_column(field) {
                Some(col) if numeric_column(col) => match as_number(value) {
                    Some(n) => format!("{col} = {}::float8", q.bind(n)),
                    None => "FALSE".into(),
                },
                Some(col) => format!("{col} = {}::text", q.bind(as_text(value))),
                None => contains(q, metadata_key(field), value),
            },
            Condition::EqualsFold { field, value } => match document_column(field) {
                Some(col) => format!(
                    "lower({col}::text) = lower({}::text)",
                    q.bind(value.clone())
                ),
                None => {
                    let key = q.bind(metadata_key(field).to_string());
                    let value = q.bind(value.clone());
                    format!(
                        "EXISTS (SELECT 1 FROM folio_items(d.metadata -> {key}::text) i \
                         WHERE jsonb_typeof(i) = 'string' AND lower(i #>> '{{}}') = lower({value}::text))"
                    )
                }
            },
            Condition::AnyOf { field, values } => match document_column(field) {
                Some(col) if numeric_column(col) => {
                    let numbers: Vec<f64> = values.iter().filter_map(as_number).collect();
                    format!("{col} = ANY({}::float8[])", q.bind(numbers))
                }
                Some(col) => {
                    let texts: Vec<String> = values.iter().map(as_text).collect();
                    format!("{col} = ANY({}::text[])", q.bind(texts))
                }
                None if values.is_empty() => "FALSE".into(),
                None => {
                    let key = metadata_key(field);
                    let each: Vec<String> = values.iter().map(|v| contains(q, key, v)).collect();
                    format!("({})", each.join(" OR "))
                }
            },
            Condition::Range {
                field,
                gte,
                gt,
                lte,
                lt,
            } => {
                let mut parts = Vec::new();
                for (bound, op) in [(gte, ">="), (gt, ">"), (lte, "<="), (lt, "<")] {
                    let Some(bound) = bound else { continue };
                    parts.push(range(q, field, bound, op));
                }
                if parts.is_empty() {
                    continue;
                }
                parts.join(" AND ")
            }
            Condition::PathPrefix(prefix) => {
                format!(
                    "d.source LIKE {} ESCAPE '\\'",
                    q.bind(format!("{}%", like_escape(prefix)))
                )
            }
            Condition::SectionPrefix(prefix) => {
                // Each heading from its start to a word boundary,
                // case-insensitive (`folio_core::filter::section_under`).
                format!("c.section ~* {}", q.bind(section_pattern(prefix)))
            }
            Condition::Entity(key) => format!(
                "EXISTS (SELECT 1 FROM folio_entity_mentions m \
                 WHERE m.library_id = d.library_id AND m.entity = {}::text \
                 AND m.document_id = c.document_id AND m.chunk = c.idx)",
                q.bind(key.clone())
            ),
        };
        sql.push_str(" AND ");
        sql.push_str(&clause);
    }
    sql
}

fn range(q: &mut Query, field: &str, bound: &Value, op: &str) -> String {
    let numeric = bound.is_number();
    match document_column(field) {
        Some(col) if numeric_column(col) => match as_number(bound) {
            Some(n) => format!("{col} {op} {}::float8", q.bind(n)),
            None => "FALSE".into(),
        },
        Some(col) => format!("{col} {op} {}::text", q.bind(as_text(bound))),
        None if numeric => {
            let key = q.bind(metadata_key(field).to_string());
            let value = q.bind(bound.as_f64().unwrap_or(f64::NAN));
            format!("folio_num(d.metadata -> {key}::text) {op} {value}::float8")
        }
        None => {
            let key = q.bind(metadata_key(field).to_string());
            let value = q.bind(as_text(bound));
            format!(
                "(jsonb_typeof(d.metadata -> {key}::text) = 'string' \
                 AND (d.metadata ->> {key}::text) COLLATE \"C\" {op} {value}::text)"
            )
        }
    }
}

/// Whether the filter has conditions on chunks (not only documents).
pub fn has_chunk_conditions(filter: &Filter) -> bool {
    filter.conditions.iter().any(Condition::on_chunks)
}

/// The regular expression (PostgreSQL's advanced syntax, matched
/// case-insensitively) of `folio_core::filter::section_under`: the path's
/// first headings start with the prefix's, each ending at a word boundary
/// (a heading ending in a word character is followed by the end of the
/// heading or a character that is not one).
pub fn section_pattern(prefix: &str) -> String {
    let components = folio_core::filter::section_prefix_components(prefix);
    if components.is_empty() {
        return String::new();
    }
    let headings: Vec<String> = components
        .iter()
        .map(|c| {
            let escaped: String = c
                .chars()
                .map(|ch| {
                    if ch.is_alphanumeric() {
                        ch.to_string()
                    } else {
                        format!("\\{ch}")
                    }
                })
                .collect();
            let ends_in_word = c
                .chars()
                .last()
                .is_some_and(folio_core::filter::is_word_char);
            let rest = if ends_in_word {
                "([^[:alnum:]_][^>]*)?"
            } else {
                "[^>]*"
            };
            format!("\\s*{escaped}{rest}")
        })
        .collect();
    format!("^{}( > .*)?$", headings.join(" > "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_bound() {
        let filter = Filter::from_json(&json!({
            "year": {"gte": 2019, "lt": "2024"}, "tags": ["a", "b"], "author": "x", "format": "pdf",
            "speaker": {"ieq": "X"}, "title": {"ieq": "T"}, "page_count": {"gte": 2},
            "path_prefix": "/p", "section_prefix": "M"
        }))
        .unwrap();
        let mut q = Query::default();
        let sql = where_clause(&filter, &mut q);
        let highest = (1..=q.params.len())
            .filter(|i| sql.contains(&format!("${i}")))
            .count();
        assert_eq!(highest, q.params.len(), "{sql}");
    }
}
