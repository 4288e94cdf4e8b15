//! Record schemas: a library may declare typed fields (keyword, text,
//! integer, float, date, tags) with validation rules. Records that pass are
//! stored as documents whose metadata holds the normalised fields; those
//! fields are then filterable and facetable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The type of a record field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// A short string compared exactly (names, codes, categories).
    Keyword,
    /// Free text.
    Text,
    Integer,
    Float,
    /// A calendar date, stored as `YYYY-MM-DD`.
    Date,
    /// A list of short strings; filters match any of them.
    Tags,
}

impl FieldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Keyword => "keyword",
            FieldKind::Text => "text",
            FieldKind::Integer => "integer",
            FieldKind::Float => "float",
            FieldKind::Date => "date",
            FieldKind::Tags => "tags",
        }
    }

    pub fn is_numeric(self) -> bool {
        matches!(self, FieldKind::Integer | FieldKind::Float)
    }
}

/// One declared field and its rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(rename = "type")]
    pub kind: FieldKind,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Characters (strings) or characters per tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<usize>,
    /// A regular expression the whole value (each tag) must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The allowed values (each tag's allowed values).
    #[serde(
        default,
        rename = "enum",
        alias = "values",
        skip_serializing_if = "Option::is_none"
    )]
    pub allowed: Option<Vec<String>>,
    /// Bounds of a number, or of a date (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Value>,
    /// Most tags in a tags field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<usize>,
    /// The separator of tags given as one string (CSV cells); default `;`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The field's values name entities of this type (a speaker is a
    /// person, a party an organization): each record mentions them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
}

/// A relation between the entities two fields of a record name: the
/// speaker is a "member of" the party.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRelation {
    pub from: String,
    #[serde(rename = "type")]
    pub relation: String,
    pub to: String,
}

/// What happens to a record's fields that the schema does not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownFields {
    /// The record is rejected, naming the field (catches typos).
    #[default]
    Reject,
    /// Kept as untyped metadata.
    Keep,
    /// Dropped silently (spreadsheet exports with extra columns).
    Ignore,
}

/// How records are ordered for "the record before and after this one".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeighbourOrder {
    /// The field records are ordered by (e.g. `date`).
    pub order_by: String,
    /// Fields whose values must match (e.g. `["chamber"]`).
    #[serde(default)]
    pub group_by: Vec<String>,
    /// Neighbours have a strictly smaller or greater value: records of the
    /// same value are not each other's neighbours (otherwise they are,
    /// in document id order, so a walk visits every record).
    #[serde(default)]
    pub strict: bool,
}

/// A library's record schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSchema {
    /// The text field that is chunked, embedded and searched.
    pub text: String,
    /// The field used as the document title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A field whose value identifies a record, so loading it again updates
    /// it; without one, records are identified by their text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default)]
    pub unknown_fields: UnknownFields,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<NeighbourOrder>,
    pub fields: BTreeMap<String, FieldSpec>,
    /// Relations between the entities of two entity fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<FieldRelation>,
}

/// A record that broke a rule: the field, the rule and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("field {field:?} breaks rule {rule}: {message}")]
pub struct RecordError {
    pub field: String,
    pub rule: String,
    pub message: String,
}

fn rule(field: &str, rule: &str, message: impl Into<String>) -> RecordError {
    RecordError {
        field: field.to_string(),
        rule: rule.to_string(),
        message: message.into(),
    }
}

/// A record that passed validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidRecord {
    /// The record's identity: the key field's value, or None (use the text).
    pub key: Option<String>,
    pub title: Option<String>,
    pub text: String,
    /// Every other field, normalised (dates `YYYY-MM-DD`, numbers typed,
    /// tags as lists).
    pub fields: Map<String, Value>,
}

/// Checks `YYYY-MM-DD` (also accepting a time part, which is dropped) and
/// returns the date.
pub fn parse_date(text: &str) -> Option<String> {
    let date = text.trim().get(..10)?;
    let rest = &text.trim()[10..];
    if !(rest.is_empty() || rest.starts_with('T') || rest.starts_with(' ')) {
        return None;
    }
    let bytes = date.as_bytes();
    if bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse::<u32>().ok())?
    };
    let (year, month, day) = (
        number(&date[..4])?,
        number(&date[5..7])?,
        number(&date[8..])?,
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&day).then(|| date.to_string())
}

/// "a string", "a list", ...: a JSON value's kind, for messages.
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl RecordSchema {
    /// Parses a schema from JSON or TOML text (TOML parsing is the caller's:
    /// pass the parsed value) and checks it.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let schema: RecordSchema = serde_json::from_value(value).map_err(|e| e.to_string())?;
        schema.check()?;
        Ok(schema)
    }

    /// Checks the schema itself: the text field exists and is text, the
    /// key/title fields exist, patterns compile, bounds make sense.
    pub fn check(&self) -> Result<(), String> {
        if self.fields.is_empty() {
            return Err("a record schema needs at least one field".into());
        }
        for (name, spec) in &self.fields {
            if !crate::filter::valid_field(name) {
                return Err(format!(
                    "field name {name:?} must be 1-64 letters, digits, '_', '-' or '.'"
                ));
            }
            if let Some(pattern) = &spec.pattern {
                regex::Regex::new(pattern)
                    .map_err(|e| format!("field {name:?}: bad pattern: {e}"))?;
            }
            for bound in [&spec.min, &spec.max].into_iter().flatten() {
                let fine = match spec.kind {
                    FieldKind::Integer | FieldKind::Float => bound.is_number(),
                    FieldKind::Date => bound.as_str().and_then(parse_date).is_some(),
                    _ => false,
                };
                if !fine {
                    return Err(format!(
                        "field {name:?}: min/max need a number (integer, float) or a date (date)"
                    ));
                }
            }
            if spec.max_items.is_some() && spec.kind != FieldKind::Tags {
                return Err(format!("field {name:?}: max_items applies to tags only"));
            }
            if let Some(entity) = &spec.entity {
                if entity.trim().is_empty() {
                    return Err(format!("field {name:?}: entity needs a type"));
                }
                if !matches!(
                    spec.kind,
                    FieldKind::Keyword | FieldKind::Text | FieldKind::Tags
                ) {
                    return Err(format!(
                        "field {name:?}: entity applies to keyword, text and tags fields"
                    ));
                }
            }
        }
        for relation in &self.relations {
            for field in [&relation.from, &relation.to] {
                match self.fields.get(field) {
                    Some(spec) if spec.entity.is_some() => {}
                    _ => {
                        return Err(format!(
                            "relation {:?}: field {field:?} is not an entity field",
                            relation.relation
                        ));
                    }
                }
            }
            if relation.relation.trim().is_empty() {
                return Err("a relation needs a type".into());
            }
        }
        let text = self
            .fields
            .get(&self.text)
            .ok_or_else(|| format!("the text field {:?} is not declared", self.text))?;
        if text.kind != FieldKind::Text {
            return Err(format!(
                "the text field {:?} must have type text",
                self.text
            ));
        }
        for (role, field) in [("title", &self.title), ("key", &self.key)] {
            if let Some(field) = field {
                match self.fields.get(field) {
                    Some(spec) if matches!(spec.kind, FieldKind::Keyword | FieldKind::Text) => {}
                    Some(_) => {
                        return Err(format!(
                            "the {role} field {field:?} must be keyword or text"
                        ));
                    }
                    None => return Err(format!("the {role} field {field:?} is not declared")),
                }
            }
        }
        if let Some(order) = &self.neighbours {
            for field in std::iter::once(&order.order_by).chain(&order.group_by) {
                if !self.fields.contains_key(field) {
                    return Err(format!("the neighbours field {field:?} is not declared"));
                }
            }
        }
        Ok(())
    }

    /// The entity fields: name and entity type.
    pub fn entity_fields(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fields
            .iter()
            .filter_map(|(name, spec)| Some((name.as_str(), spec.entity.as_deref()?)))
    }

    /// Validates and normalises a record. Strings are accepted for numbers,
    /// dates and tags (CSV cells); empty strings count as absent.
    pub fn validate(&self, record: &Map<String, Value>) -> Result<ValidRecord, RecordError> {
        let mut fields = Map::new();
        for (name, value) in record {
            if self.fields.contains_key(name) {
                continue;
            }
            match self.unknown_fields {
                UnknownFields::Reject => {
                    return Err(rule(
                        name,
                        "unknown_field",
                        "the schema does not declare this field",
                    ));
                }
                UnknownFields::Keep if !value.is_null() => {
                    fields.insert(name.clone(), value.clone());
                }
                _ => {}
            }
        }
        for (name, spec) in &self.fields {
            let value = match record.get(name) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.trim().is_empty() && spec.kind != FieldKind::Text => {
                    None
                }
                Some(v) => Some(v),
            };
            let Some(value) = value else {
                if spec.required || *name == self.text {
                    return Err(rule(name, "required", "a value is required"));
                }
                continue;
            };
            fields.insert(name.clone(), normalise(name, spec, value)?);
        }
        let Some(Value::String(text)) = fields.remove(&self.text) else {
            return Err(rule(&self.text, "required", "a value is required"));
        };
        let string = |field: &Option<String>| {
            field
                .as_ref()
                .and_then(|f| fields.get(f))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Ok(ValidRecord {
            key: string(&self.key),
            title: string(&self.title),
            text,
            fields,
        })
    }
}

fn check_string(name: &str, spec: &FieldSpec, text: &str) -> Result<(), RecordError> {
    let chars = text.chars().count();
    if let Some(min) = spec.min_length.filter(|&m| chars < m) {
        return Err(rule(
            name,
            "min_length",
            format!("{chars} characters, fewer than {min}"),
        ));
    }
    if let Some(max) = spec.max_length.filter(|&m| chars > m) {
        return Err(rule(
            name,
            "max_length",
            format!("{chars} characters, more than {max}"),
        ));
    }
    if let Some(pattern) = &spec.pattern {
        // Checked when the schema was accepted; anchored to the whole value.
        let anchored = format!("^(?:{pattern})$");
        if regex::Regex::new(&anchored).is_ok_and(|re| !re.is_match(text)) {
            return Err(rule(
                name,
                "pattern",
                format!("{text:?} does not match {pattern:?}"),
            ));
        }
    }
    if let Some(allowed) = &spec.allowed
        && !allowed.iter().any(|a| a == text)
    {
        return Err(rule(
            name,
            "enum",
            format!("{text:?} is not one of {allowed:?}"),
        ));
    }
    Ok(())
}

fn number_of(name: &str, spec: &FieldSpec, value: &Value) -> Result<Value, RecordError> {
    let parsed: Option<Value> = match (spec.kind, value) {
        (FieldKind::Integer, Value::Number(n)) => n.as_i64().map(Value::from).or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| Value::from(f as i64))
        }),
        (FieldKind::Integer, Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
        (FieldKind::Float, Value::Number(n)) => n.as_f64().map(Value::from),
        (FieldKind::Float, Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Value::from),
        _ => None,
    };
    let Some(parsed) = parsed else {
        return Err(rule(
            name,
            "type",
            format!("expected {}, got {}", spec.kind.as_str(), describe(value)),
        ));
    };
    let number = parsed.as_f64().unwrap_or(f64::NAN);
    if let Some(min) = spec
        .min
        .as_ref()
        .and_then(Value::as_f64)
        .filter(|&m| number < m)
    {
        return Err(rule(name, "min", format!("{number} is below {min}")));
    }
    if let Some(max) = spec
        .max
        .as_ref()
        .and_then(Value::as_f64)
        .filter(|&m| number > m)
    {
        return Err(rule(name, "max", format!("{number} is above {max}")));
    }
    Ok(parsed)
}

fn normalise(name: &str, spec: &FieldSpec, value: &Value) -> Result<Value, RecordError> {
    match spec.kind {
        FieldKind::Keyword | FieldKind::Text => {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) if spec.kind == FieldKind::Keyword => n.to_string(),
                other => {
                    return Err(rule(
                        name,
                        "type",
                        format!("expected a string, got {}", describe(other)),
                    ));
                }
            };
            let text = if spec.kind == FieldKind::Keyword {
                text.trim().to_string()
            } else {
                text
            };
            check_string(name, spec, &text)?;
            Ok(Value::String(text))
        }
        FieldKind::Integer | FieldKind::Float => number_of(name, spec, value),
        FieldKind::Date => {
            let date = value.as_str().and_then(parse_date).ok_or_else(|| {
                rule(
                    name,
                    "type",
                    format!("expected a date YYYY-MM-DD, got {value}"),
                )
            })?;
            let bound = |b: &Option<Value>| b.as_ref().and_then(Value::as_str).and_then(parse_date);
            if let Some(min) = bound(&spec.min).filter(|m| date < *m) {
                return Err(rule(name, "min", format!("{date} is before {min}")));
            }
            if let Some(max) = bound(&spec.max).filter(|m| date > *m) {
                return Err(rule(name, "max", format!("{date} is after {max}")));
            }
            Ok(Value::String(date))
        }
        FieldKind::Tags => {
            let tags: Vec<String> = match value {
                Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => Ok(s.trim().to_string()),
                        other => Err(rule(
                            name,
                            "type",
                            format!("tags must be strings, got {}", describe(other)),
                        )),
                    })
                    .collect::<Result<_, _>>()?,
                Value::String(s) => s
                    .split(spec.separator.as_deref().unwrap_or(";"))
                    .map(|t| t.trim().to_string())
                    .collect(),
                other => {
                    return Err(rule(
                        name,
                        "type",
                        format!("expected a list of tags, got {}", describe(other)),
                    ));
                }
            };
            let given = tags.iter().filter(|t| !t.is_empty()).count();
            if let Some(max) = spec.max_items.filter(|&m| given > m) {
                return Err(rule(
                    name,
                    "max_items",
                    format!("{given} tags, more than {max}"),
                ));
            }
            let mut unique: Vec<String> = Vec::with_capacity(tags.len());
            for tag in tags.into_iter().filter(|t| !t.is_empty()) {
                check_string(name, spec, &tag)?;
                if !unique.contains(&tag) {
                    unique.push(tag);
                }
            }
            if spec.required && unique.is_empty() {
                return Err(rule(name, "required", "at least one tag is required"));
            }
            Ok(Value::Array(
                unique.into_iter().map(Value::String).collect(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn speeches() -> RecordSchema {
        RecordSchema::from_value(json!({
            "text": "full_text", "title": "title", "key": "ref",
            "neighbours": {"order_by": "date", "group_by": ["chamber"]},
            "fields": {
                "full_text": {"type": "text", "min_length": 10},
                "title": {"type": "text", "max_length": 20},
                "ref": {"type": "keyword", "pattern": "[A-Z]+-[0-9]+"},
                "chamber": {"type": "keyword", "required": true, "enum": ["House", "Senate"]},
                "date": {"type": "date", "required": true, "min": "1901-01-01"},
                "words": {"type": "integer", "min": 0},
                "score": {"type": "float"},
                "tags": {"type": "tags", "max_items": 3, "max_length": 12}
            }
        }))
        .unwrap()
    }

    fn record(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn valid_records_are_normalised() {
        let valid = speeches()
            .validate(&record(json!({
                "full_text": "A speech about water.", "title": "Water", "ref": "HR-12",
                "chamber": "Senate", "date": "2024-02-29T10:00:00", "words": "42",
                "score": 1, "tags": "water; rivers ;water"
            })))
            .unwrap();
        assert_eq!(valid.key.as_deref(), Some("HR-12"));
        assert_eq!(valid.title.as_deref(), Some("Water"));
        assert_eq!(valid.text, "A speech about water.");
        assert_eq!(valid.fields["date"], json!("2024-02-29"));
        assert_eq!(valid.fields["words"], json!(42));
        assert_eq!(valid.fields["score"], json!(1.0));
        assert_eq!(valid.fields["tags"], json!(["water", "rivers"]));
        assert!(!valid.fields.contains_key("full_text"));
    }

    #[test]
    fn each_rule_names_field_and_rule() {
        let schema = speeches();
        let base =
            json!({"full_text": "A speech about water.", "chamber": "House", "date": "2020-01-01"});
        let cases = [
            ("chamber", json!("Lords"), "enum"),
            ("chamber", json!(null), "required"),
            ("date", json!("2023-02-29"), "type"),
            ("date", json!("1800-01-01"), "min"),
            ("words", json!(-1), "min"),
            ("words", json!("many"), "type"),
            ("words", json!(1.5), "type"),
            ("title", json!("x".repeat(21)), "max_length"),
            ("ref", json!("hr-1"), "pattern"),
            ("tags", json!(["a", "b", "c", "d"]), "max_items"),
            ("tags", json!([1]), "type"),
            ("full_text", json!("short"), "min_length"),
            ("speaker", json!("x"), "unknown_field"),
        ];
        for (field, value, expected) in cases {
            let mut r = record(base.clone());
            r.insert(field.into(), value.clone());
            let error = schema.validate(&r).unwrap_err();
            assert_eq!(
                (error.field.as_str(), error.rule.as_str()),
                (field, expected),
                "{field}={value}"
            );
        }
    }

    #[test]
    fn bad_schemas_are_refused() {
        for bad in [
            json!({"text": "body", "fields": {}}),
            json!({"text": "body", "fields": {"body": {"type": "keyword"}}}),
            json!({"text": "body", "fields": {"body": {"type": "text", "pattern": "("}}}),
            json!({"text": "body", "fields": {"body": {"type": "text"}, "n": {"type": "integer", "min": "a"}}}),
            json!({"text": "body", "key": "id", "fields": {"body": {"type": "text"}}}),
            json!({"text": "body", "fields": {"body": {"type": "texty"}}}),
            json!({"text": "body", "fields": {"body": {"type": "text", "bogus": 1}}}),
        ] {
            assert!(RecordSchema::from_value(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("2024-02-29").as_deref(), Some("2024-02-29"));
        assert_eq!(parse_date("1900-02-29"), None);
        assert_eq!(parse_date("2024-13-01"), None);
        assert_eq!(parse_date("2024-1-01"), None);
        assert_eq!(parse_date("2024-01-01x"), None);
        assert_eq!(parse_date("é"), None);
    }
}
