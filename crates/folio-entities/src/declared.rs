//! Declared entity lists (`folio entities import`): CSV with a header
//! (`name`, `type`, `aliases` separated by `|`, every other column an
//! attribute) or JSON Lines (`{"name", "type", "aliases": [...],
//! "attributes": {...}}`). A list is taken whole or not at all: every bad
//! line is reported with its field and reason.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::gazetteer::{Declared, Gazetteer, Relation};

/// Why a line of a declared list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {field}: {reason}")]
pub struct LineError {
    /// 1-based, counting the header of a CSV file.
    pub line: usize,
    pub field: String,
    pub reason: String,
}

/// The layouts a declared list may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    Csv,
    JsonLines,
}

/// Reads a declared list, checks it as a gazetteer would (names that fold
/// to nothing, a name two entities share), and returns it whole, or every
/// line's error.
pub fn read_declared(bytes: &[u8], format: ListFormat) -> Result<Vec<Declared>, Vec<LineError>> {
    let (entities, lines, mut errors) = match format {
        ListFormat::Csv => read_csv(bytes),
        ListFormat::JsonLines => read_json_lines(bytes),
    };
    if let Err(refused) = Gazetteer::new(&entities) {
        errors.extend(refused.into_iter().map(|e| LineError {
            line: lines.get(e.index).copied().unwrap_or(1),
            field: e.field.to_string(),
            reason: match e.other {
                Some(other) => format!(
                    "a name of line {} ({:?}) too",
                    lines[other], entities[other].name
                ),
                None => e.reason,
            },
        }));
    }
    if errors.is_empty() {
        Ok(entities)
    } else {
        errors.sort_by_key(|e| e.line);
        Err(errors)
    }
}

type Read = (Vec<Declared>, Vec<usize>, Vec<LineError>);

fn error(line: usize, field: &str, reason: impl Into<String>) -> LineError {
    LineError {
        line,
        field: field.to_string(),
        reason: reason.into(),
    }
}

fn read_csv(bytes: &[u8]) -> Read {
    let (mut entities, mut lines, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(bytes);
    let header: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(|f| f.trim().to_ascii_lowercase()).collect(),
        Err(e) => {
            errors.push(error(1, "header", e.to_string()));
            return (entities, lines, errors);
        }
    };
    let column = |name: &str| header.iter().position(|h| h == name);
    let (Some(name_at), Some(type_at)) = (column("name"), column("type")) else {
        errors.push(error(1, "header", "needs the columns name and type"));
        return (entities, lines, errors);
    };
    let aliases_at = column("aliases");
    let relations_at = column("relations");
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                errors.push(error(line, "row", e.to_string()));
                continue;
            }
        };
        let field = |at: usize| record.get(at).unwrap_or("").trim().to_string();
        let aliases = aliases_at
            .map(|at| {
                field(at)
                    .split('|')
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        // "member of: Party A|supplier of: Globex"
        let mut relations = Vec::new();
        let mut bad_relation = None;
        for item in relations_at.map(field).unwrap_or_default().split('|') {
            if item.trim().is_empty() {
                continue;
            }
            match relation(item.split_once(':').unwrap_or((item, ""))) {
                Some(r) => relations.push(r),
                None => bad_relation = Some(item.trim().to_string()),
            }
        }
        if let Some(item) = bad_relation {
            errors.push(error(
                line,
                "relations",
                format!("{item:?} is not \"relation: target\""),
            ));
            continue;
        }
        let attributes = header
            .iter()
            .enumerate()
            .filter(|(at, _)| {
                ![Some(name_at), Some(type_at), aliases_at, relations_at].contains(&Some(*at))
            })
            .filter(|(at, _)| !field(*at).is_empty())
            .map(|(at, h)| (h.clone(), Value::String(field(at))))
            .collect();
        entities.push(Declared {
            name: field(name_at),
            kind: field(type_at).to_lowercase(),
            aliases,
            attributes,
            relations,
        });
        lines.push(line);
    }
    (entities, lines, errors)
}

/// A relation from its two parts, both non-empty once trimmed.
fn relation((relation, target): (&str, &str)) -> Option<Relation> {
    let (relation, target) = (relation.trim(), target.trim());
    (!relation.is_empty() && !target.is_empty()).then(|| Relation {
        relation: relation.to_lowercase(),
        target: target.to_string(),
    })
}

fn read_json_lines(bytes: &[u8]) -> Read {
    let (mut entities, mut lines, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    let Ok(text) = std::str::from_utf8(bytes) else {
        errors.push(error(1, "file", "not UTF-8 text"));
        return (entities, lines, errors);
    };
    for (i, row) in text.lines().enumerate() {
        let line = i + 1;
        if row.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(row) {
            Ok(v) => v,
            Err(e) => {
                errors.push(error(line, "line", format!("not JSON: {e}")));
                continue;
            }
        };
        let Value::Object(object) = value else {
            errors.push(error(line, "line", "not a JSON object"));
            continue;
        };
        let text_of = |key: &str| object.get(key).and_then(Value::as_str);
        let Some(name) = text_of("name") else {
            errors.push(error(line, "name", "missing, or not a string"));
            continue;
        };
        let Some(kind) = text_of("type") else {
            errors.push(error(line, "type", "missing, or not a string"));
            continue;
        };
        let aliases = match object.get("aliases") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            Some(_) => {
                errors.push(error(line, "aliases", "not a list of strings"));
                continue;
            }
        };
        let attributes: BTreeMap<String, Value> = match object.get("attributes") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(map)) => map.clone().into_iter().collect(),
            Some(_) => {
                errors.push(error(line, "attributes", "not an object"));
                continue;
            }
        };
        let relations = match object.get("relations") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let read: Option<Vec<Relation>> = items
                    .iter()
                    .map(|item| {
                        let part = |key| item.get(key).and_then(Value::as_str);
                        relation((part("type")?, part("target")?))
                    })
                    .collect();
                match read {
                    Some(r) => r,
                    None => {
                        errors.push(error(
                            line,
                            "relations",
                            "not a list of {\"type\", \"target\"} with both non-empty",
                        ));
                        continue;
                    }
                }
            }
            Some(_) => {
                errors.push(error(line, "relations", "not a list"));
                continue;
            }
        };
        const FIELDS: [&str; 5] = ["name", "type", "aliases", "attributes", "relations"];
        if let Some(unknown) = object.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            errors.push(error(
                line,
                unknown,
                "unknown field (name, type, aliases, attributes, relations)",
            ));
            continue;
        }
        entities.push(Declared {
            name: name.trim().to_string(),
            kind: kind.trim().to_lowercase(),
            aliases,
            attributes,
            relations,
        });
        lines.push(line);
    }
    (entities, lines, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_list_reads_names_types_aliases_and_attributes() {
        let csv = "name,type,aliases,country,tier,relations\n\
                   Acme Holdings,Organization,Acme Corp.|ACME,US,1,\n\
                   Jane Roe,person,,,,Member of: Acme Holdings\n";
        let list = read_declared(csv.as_bytes(), ListFormat::Csv).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].kind, "organization");
        assert_eq!(list[0].aliases, vec!["Acme Corp.", "ACME"]);
        assert_eq!(list[0].attributes["country"], Value::from("US"));
        assert!(list[1].aliases.is_empty() && list[1].attributes.is_empty());
        assert_eq!(
            list[1].relations,
            vec![Relation {
                relation: "member of".into(),
                target: "Acme Holdings".into()
            }]
        );
        let bad = "name,type,relations\nJane Roe,person,member of\n";
        let errors = read_declared(bad.as_bytes(), ListFormat::Csv).unwrap_err();
        assert_eq!((errors[0].line, errors[0].field.as_str()), (2, "relations"));
    }

    #[test]
    fn a_json_lines_list_reads_the_same() {
        let jsonl = "{\"name\": \"Acme Holdings\", \"type\": \"organization\", \"aliases\": [\"Acme\"], \"attributes\": {\"tier\": 1}}\n\n\
                     {\"name\": \"Globex\", \"type\": \"organization\"}\n";
        let list = read_declared(jsonl.as_bytes(), ListFormat::JsonLines).unwrap();
        assert_eq!(list[0].attributes["tier"], Value::from(1));
        assert_eq!(list[1].name, "Globex");
    }

    #[test]
    fn every_bad_line_is_named_and_nothing_is_taken() {
        let jsonl = "{\"name\": \"Acme\", \"type\": \"organization\"}\n\
                     not json\n\
                     {\"type\": \"organization\"}\n\
                     {\"name\": \"X\", \"type\": \"person\", \"aliases\": \"Y\"}\n\
                     {\"name\": \"ACME\", \"type\": \"organization\"}\n\
                     {\"name\": \"Z\", \"type\": \"person\", \"colour\": \"red\"}\n\
                     {\"name\": \"W\", \"type\": \"person\", \"relations\": [{\"type\": \"member of\"}]}\n";
        let errors = read_declared(jsonl.as_bytes(), ListFormat::JsonLines).unwrap_err();
        let said: Vec<(usize, &str)> = errors.iter().map(|e| (e.line, e.field.as_str())).collect();
        assert_eq!(
            said,
            vec![
                (2, "line"),
                (3, "name"),
                (4, "aliases"),
                (5, "name"),
                (6, "colour"),
                (7, "relations")
            ]
        );
        assert!(errors[3].reason.contains("line 1"), "{}", errors[3]);

        let csv = "name,kind\nAcme,organization\n";
        let errors = read_declared(csv.as_bytes(), ListFormat::Csv).unwrap_err();
        assert_eq!((errors[0].line, errors[0].field.as_str()), (1, "header"));
        let csv = "name,type\nAcme,organization\n...,person\nGlobex,,\n";
        let errors = read_declared(csv.as_bytes(), ListFormat::Csv).unwrap_err();
        let said: Vec<(usize, &str)> = errors.iter().map(|e| (e.line, e.field.as_str())).collect();
        assert_eq!(said, vec![(3, "name"), (4, "row")]);
    }
}
