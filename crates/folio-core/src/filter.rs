//! Metadata filters: conditions on document fields and chunk structure, all of
//! which must hold. Filters are applied before ranking by every retriever.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One condition. Field names address document fields (`format`,
/// `source_kind`, `title`, `document_id`) or keys of the document metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// The field equals the value; for a list field, the list contains it.
    Equals { field: String, value: Value },
    /// The field equals the string ignoring case (for a list field, one of
    /// its items does).
    EqualsFold { field: String, value: String },
    /// The field equals one of the values (or a list field contains one).
    AnyOf { field: String, values: Vec<Value> },
    /// A range on a number or on an ISO-8601 date string; bounds are optional.
    Range {
        field: String,
        gte: Option<Value>,
        gt: Option<Value>,
        lte: Option<Value>,
        lt: Option<Value>,
    },
    /// The source locator (path or URL) starts with the prefix.
    PathPrefix(String),
    /// The chunk's section path, joined with " > ", starts with the prefix's
    /// components, each heading matched from its start to a word boundary
    /// (case-insensitive): "Part I" matches "Part I", "Part I: Foundations"
    /// and "Part I > Chapter 3", never "Part II" (`section_under`).
    SectionPrefix(String),
    /// The chunk mentions the entity with this key (a folded name, as the
    /// entity graph keys it). The filter syntax takes a name or alias,
    /// which the engine resolves to its key before the store sees it.
    Entity(String),
}

impl Condition {
    /// Whether the condition is on chunks (not only on their documents).
    pub fn on_chunks(&self) -> bool {
        matches!(self, Condition::SectionPrefix(_) | Condition::Entity(_))
    }
}

/// A conjunction of conditions. The empty filter matches everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Filter {
    pub conditions: Vec<Condition>,
}

/// Why a filter was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid filter: {0}")]
pub struct FilterError(pub String);

/// Joins a section path the way `SectionPrefix` matches it.
pub fn join_section_path(path: &[String]) -> String {
    path.join(" > ")
}

/// The headings of a section prefix: its " > "-separated components,
/// trimmed, empty ones left out.
pub fn section_prefix_components(prefix: &str) -> Vec<&str> {
    prefix
        .split('>')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// A letter, a digit or an underscore: what a word boundary separates from
/// anything else.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `heading` starts with `wanted` at a word boundary,
/// case-insensitively: "Part I: Foundations" starts with "Part I", "Part II"
/// does not.
fn heading_starts_with(heading: &str, wanted: &str) -> bool {
    let mut have = heading.trim().chars().flat_map(char::to_lowercase);
    let mut last = None;
    for w in wanted.chars().flat_map(char::to_lowercase) {
        if have.next() != Some(w) {
            return false;
        }
        last = Some(w);
    }
    match (last, have.next()) {
        (_, None) => true,
        (Some(last), Some(next)) => !(is_word_char(last) && is_word_char(next)),
        (None, Some(_)) => true,
    }
}

/// Whether a chunk's section path (joined with " > ") lies under `prefix`:
/// each of the prefix's headings starts the path's heading at the same
/// depth, at a word boundary. The rule of `Condition::SectionPrefix`, which
/// both stores apply in SQL.
pub fn section_under(section: &str, prefix: &str) -> bool {
    let wanted = section_prefix_components(prefix);
    let have: Vec<&str> = section.split(" > ").collect();
    have.len() >= wanted.len()
        && wanted
            .iter()
            .zip(&have)
            .all(|(w, h)| heading_starts_with(h, w))
}

pub(crate) fn valid_field(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn scalar(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

fn bound(value: &Value, field: &str) -> Result<(), FilterError> {
    match value {
        Value::Number(_) | Value::String(_) => Ok(()),
        _ => Err(FilterError(format!(
            "range bound on {field:?} must be a number or a date string"
        ))),
    }
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Parses the JSON filter syntax used by the CLI and the transports:
    ///
    /// ```json
    /// {"year": {"gte": 2019, "lt": 2024}, "tags": ["ml", "nlp"], "author": "Smith",
    ///  "path_prefix": "/papers/", "section_prefix": "Methods", "entity": "Acme"}
    /// ```
    ///
    /// `entity` keeps chunks that mention the entity a name or alias names;
    /// `metadata.entity` is a metadata field of that name.
    ///
    /// A scalar means equality, an array means any-of, an object holds
    /// operators (`eq`, `ieq` (case-insensitive), `any`, `gte`, `gt`, `lte`, `lt`).
    /// `metadata.KEY` names the metadata key KEY even where a document field
    /// has that name.
    pub fn from_json(value: &Value) -> Result<Filter, FilterError> {
        let object = match value {
            Value::Null => return Ok(Filter::default()),
            Value::Object(object) => object,
            _ => return Err(FilterError("a filter must be a JSON object".into())),
        };
        let mut conditions = Vec::new();
        for (key, value) in object {
            match key.as_str() {
                "entity" => {
                    let Value::String(name) = value else {
                        return Err(FilterError(
                            "entity must be a string (an entity's name or alias)".into(),
                        ));
                    };
                    if name.trim().is_empty() {
                        return Err(FilterError("entity must not be empty".into()));
                    }
                    conditions.push(Condition::Entity(name.clone()));
                    continue;
                }
                "path_prefix" | "section_prefix" => {
                    let Value::String(prefix) = value else {
                        return Err(FilterError(format!("{key} must be a string")));
                    };
                    conditions.push(if key == "path_prefix" {
                        Condition::PathPrefix(prefix.clone())
                    } else {
                        Condition::SectionPrefix(prefix.clone())
                    });
                    continue;
                }
                _ if !valid_field(key) => {
                    return Err(FilterError(format!(
                        "field name {key:?} must be 1-64 letters, digits, '_', '-' or '.'"
                    )));
                }
                _ => {}
            }
            let field = key.clone();
            match value {
                v if scalar(v) => conditions.push(Condition::Equals {
                    field,
                    value: v.clone(),
                }),
                Value::Array(values) => {
                    if values.is_empty() || !values.iter().all(scalar) {
                        return Err(FilterError(format!(
                            "{key}: any-of needs a non-empty list of scalars"
                        )));
                    }
                    conditions.push(Condition::AnyOf {
                        field,
                        values: values.clone(),
                    });
                }
                Value::Object(ops) => {
                    let (mut gte, mut gt, mut lte, mut lt) = (None, None, None, None);
                    for (op, operand) in ops {
                        match op.as_str() {
                            "eq" if scalar(operand) => conditions.push(Condition::Equals {
                                field: field.clone(),
                                value: operand.clone(),
                            }),
                            "ieq" => match operand {
                                Value::String(text) => conditions.push(Condition::EqualsFold {
                                    field: field.clone(),
                                    value: text.clone(),
                                }),
                                _ => {
                                    return Err(FilterError(format!("{key}.ieq needs a string")));
                                }
                            },
                            "any" | "in" => match operand {
                                Value::Array(values)
                                    if !values.is_empty() && values.iter().all(scalar) =>
                                {
                                    conditions.push(Condition::AnyOf {
                                        field: field.clone(),
                                        values: values.clone(),
                                    })
                                }
                                _ => {
                                    return Err(FilterError(format!(
                                        "{key}.{op} needs a non-empty list of scalars"
                                    )));
                                }
                            },
                            "gte" => (bound(operand, key)?, gte = Some(operand.clone())).1,
                            "gt" => (bound(operand, key)?, gt = Some(operand.clone())).1,
                            "lte" => (bound(operand, key)?, lte = Some(operand.clone())).1,
                            "lt" => (bound(operand, key)?, lt = Some(operand.clone())).1,
                            _ => {
                                return Err(FilterError(format!(
                                    "{key}: unknown operator {op:?} (use eq, ieq, any, gte, gt, lte, lt)"
                                )));
                            }
                        }
                    }
                    if gte.is_some() || gt.is_some() || lte.is_some() || lt.is_some() {
                        conditions.push(Condition::Range {
                            field,
                            gte,
                            gt,
                            lte,
                            lt,
                        });
                    }
                }
                _ => return Err(FilterError(format!("{key}: null is not a filter value"))),
            }
        }
        Ok(Filter { conditions })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_form() {
        let f = Filter::from_json(&json!({
            "author": "Smith", "tags": ["a", "b"], "year": {"gte": 2019, "lt": 2024},
            "path_prefix": "/p", "section_prefix": "Methods", "speaker": {"ieq": "ANNE"},
            "entity": "Acme Corp."
        }))
        .unwrap();
        assert_eq!(f.conditions.len(), 7);
        assert!(
            f.conditions
                .contains(&Condition::Entity("Acme Corp.".into()))
        );
        assert!(f.conditions.contains(&Condition::EqualsFold {
            field: "speaker".into(),
            value: "ANNE".into()
        }));
        assert!(f.conditions.contains(&Condition::Equals {
            field: "author".into(),
            value: json!("Smith")
        }));
        assert!(f.conditions.contains(&Condition::AnyOf {
            field: "tags".into(),
            values: vec![json!("a"), json!("b")]
        }));
        assert!(f.conditions.contains(&Condition::Range {
            field: "year".into(),
            gte: Some(json!(2019)),
            gt: None,
            lte: None,
            lt: Some(json!(2024))
        }));
    }

    #[test]
    fn refuses_bad_filters() {
        for bad in [
            json!([1]),
            json!({"a b": 1}),
            json!({"x": []}),
            json!({"x": {"near": 1}}),
            json!({"x": null}),
            json!({"x": {"gte": [1]}}),
            json!({"path_prefix": 3}),
            json!({"x": {"ieq": 3}}),
            json!({"entity": 3}),
            json!({"entity": " "}),
        ] {
            assert!(Filter::from_json(&bad).is_err(), "{bad}");
        }
    }
}
