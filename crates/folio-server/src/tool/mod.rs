//! The tool machinery every toolset uses: tool definitions from Rust types
//! (strict, self-contained schemas), argument coercion and parsing, bounds,
//! results, and the registry of the tools a server exposes.

pub mod registry;

use std::sync::Arc;

use folio_engine::keys::Scope;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a tool does to the world, as MCP annotations say it.
#[derive(Debug, Clone, Copy)]
pub enum Effect {
    /// Reads the index only.
    Read,
    /// Adds or replaces data; repeating the call changes nothing more.
    Write,
    /// Removes data.
    Delete,
}

/// A tool definition: input and output schemas come from the Rust types, so
/// the schema and the parser cannot drift apart.
pub fn define<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: impl Into<std::borrow::Cow<'static, str>>,
    effect: Effect,
    open_world: bool,
) -> Tool {
    let annotations = ToolAnnotations::with_title(title)
        .read_only(matches!(effect, Effect::Read))
        .destructive(matches!(effect, Effect::Delete))
        .idempotent(true)
        .open_world(open_world);
    let mut tool = Tool::new(name, description, Arc::new(JsonObject::new()))
        .with_input_schema::<I>()
        .with_output_schema::<O>()
        .with_title(title)
        .with_annotations(annotations);
    tool.input_schema = Arc::new(strict_schema(&tool.input_schema));
    tool.output_schema = tool
        .output_schema
        .as_ref()
        .map(|schema| Arc::new(strict_schema(schema)));
    tool
}

/// The `format` values JSON Schema (2020-12) defines; strict clients refuse
/// others (schemars emits `uint`, `int64`, `double`, ...).
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// A schema strict clients accept: self-contained (every `$ref` replaced by
/// its definition, no `$defs`) and with standard formats only.
pub fn strict_schema(schema: &JsonObject) -> JsonObject {
    let mut schema = schema.clone();
    let mut definitions = JsonObject::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = schema.remove(key) {
            definitions.extend(defs);
        }
    }
    let mut value = Value::Object(schema);
    inline(&mut value, &definitions, 0);
    match value {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    }
}

/// Replaces references by their definitions, drops non-standard formats
/// and writes boolean subschemas as objects, throughout the schema `value`.
/// Only schema positions are walked: property names, enum values, defaults
/// and examples are data. Definitions nest at most 32 deep (the tools'
/// types are not recursive).
fn inline(value: &mut Value, definitions: &JsonObject, depth: usize) {
    let Value::Object(map) = value else {
        return;
    };
    if let Some(Value::String(reference)) = map.get("$ref").cloned() {
        let name = reference.rsplit('/').next().unwrap_or_default();
        if let Some(Value::Object(definition)) = definitions.get(name)
            && depth < 32
        {
            map.remove("$ref");
            for (key, v) in definition {
                map.entry(key.clone()).or_insert_with(|| v.clone());
            }
            return inline(value, definitions, depth + 1);
        }
    }
    if let Some(Value::String(format)) = map.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        map.remove("format");
    }
    for (key, child) in map.iter_mut() {
        let subschemas: Vec<&mut Value> = match (key.as_str(), child) {
            (k, Value::Object(named)) if NAMED_SCHEMAS.contains(&k) => named.values_mut().collect(),
            (k, Value::Array(listed)) if LISTED_SCHEMAS.contains(&k) => listed.iter_mut().collect(),
            (k, one) if ONE_SCHEMA.contains(&k) => vec![one],
            _ => Vec::new(),
        };
        for subschema in subschemas {
            as_object(key, subschema);
            inline(subschema, definitions, depth);
        }
    }
}

/// Keywords whose value is one schema, keywords that map names to schemas,
/// and keywords that list schemas.
const ONE_SCHEMA: [&str; 10] = [
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
];
const NAMED_SCHEMAS: [&str; 4] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
];
const LISTED_SCHEMAS: [&str; 5] = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Writes a boolean subschema (under keyword `key`) as an object: `true` as
/// `{}` (anything) and `false` as `{"not": {}}` (nothing). JSON Schema
/// allows both forms, but clients that check a tool's schemas with a
/// stricter model (the TypeScript SDK wants each property an object) refuse
/// the boolean one. `additionalProperties: false` stays: every client reads
/// it.
fn as_object(key: &str, schema: &mut Value) {
    match schema {
        Value::Bool(true) => *schema = Value::Object(JsonObject::new()),
        Value::Bool(false) if key != "additionalProperties" && key != "unevaluatedProperties" => {
            *schema = serde_json::json!({"not": {}})
        }
        _ => {}
    }
}

/// The output schema of a tool whose errors answer `envelope` in their
/// structured content: the success schema or the envelope, so that every
/// result a client validates against the declared schema conforms, error
/// results included (the specification requires structured results to
/// conform; the TypeScript SDK checks error results too).
pub fn admitting_errors(success: &JsonObject, envelope: &Value) -> JsonObject {
    let mut success = success.clone();
    let mut schema = JsonObject::new();
    schema.insert("type".into(), Value::String("object".into()));
    if let Some(title) = success.remove("title") {
        schema.insert("title".into(), title);
    }
    if let Some(description) = success.remove("description") {
        schema.insert("description".into(), description);
    }
    schema.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(success), envelope.clone()]),
    );
    schema
}

/// Coerces a call's arguments against the tool's input schema (see `coerce`).
pub fn coerce_arguments(schema: &JsonObject, arguments: &mut JsonObject) {
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (key, value) in arguments.iter_mut() {
            if let Some(Value::Object(property)) = properties.get(key) {
                coerce(property, value);
            }
        }
    }
}

/// Coerces arguments as the seeds' Pydantic models do in their default (lax)
/// mode, guided by the tool's input schema: a whole float or a numeric
/// string for an integer, a numeric string for a number, "true"/"false" (and
/// 0/1) for a boolean. Anything else is left for the parser to refuse.
fn coerce(schema: &JsonObject, value: &mut Value) {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Array(alternatives)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
        for alternative in alternatives {
            if let Value::Object(alternative) = alternative
                && alternative.get("type").and_then(Value::as_str) != Some("null")
            {
                coerce(alternative, value);
            }
        }
    }
    match value {
        Value::Number(n) if types.contains(&"integer") && !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *value = Value::from(f as i64);
            }
        }
        Value::String(s) if types.contains(&"integer") => {
            if let Ok(n) = s.trim().parse::<i64>() {
                *value = Value::from(n);
            }
        }
        Value::String(s) if types.contains(&"number") => {
            if let Ok(f) = s.trim().parse::<f64>()
                && f.is_finite()
                && let Some(n) = serde_json::Number::from_f64(f)
            {
                *value = Value::Number(n);
            }
        }
        Value::String(s) if types.contains(&"boolean") => {
            match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => *value = Value::Bool(true),
                "false" | "0" | "no" | "off" => *value = Value::Bool(false),
                _ => {}
            }
        }
        Value::Number(n) if types.contains(&"boolean") => match n.as_i64() {
            Some(0) => *value = Value::Bool(false),
            Some(1) => *value = Value::Bool(true),
            _ => {}
        },
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (key, child) in map.iter_mut() {
                    if let Some(Value::Object(property)) = properties.get(key) {
                        coerce(property, child);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(Value::Object(item)) = schema.get("items") {
                for child in items {
                    coerce(item, child);
                }
            }
        }
        _ => {}
    }
}

/// Tools that need the admin scope: deleting whole libraries.
const ADMIN_TOOLS: [&str; 1] = ["delete_library"];

/// The scope a key needs to call `tool`: search for a tool that only reads,
/// admin for the tools of `ADMIN_TOOLS`, ingest for every other writer.
pub fn scope(tool: &Tool) -> Scope {
    if !writes(tool) {
        Scope::Search
    } else if ADMIN_TOOLS.contains(&tool.name.as_ref()) {
        Scope::Admin
    } else {
        Scope::Ingest
    }
}

/// Whether a tool definition changes the index.
pub fn writes(tool: &Tool) -> bool {
    tool.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true)
}

/// Parses the arguments into the tool's parameter type and runs the tool,
/// or answers with the toolset's `refuse` when they do not parse.
pub async fn with_args<T, Fut>(
    arguments: Option<JsonObject>,
    refuse: impl FnOnce(String) -> CallToolResult,
    run: impl FnOnce(T) -> Fut,
) -> CallToolResult
where
    T: DeserializeOwned,
    Fut: std::future::Future<Output = CallToolResult>,
{
    match parse::<T>(arguments) {
        Ok(params) => run(params).await,
        Err(message) => refuse(message),
    }
}

/// Parses tool arguments into `T`; the message names the field at fault.
pub fn parse<T: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<T, String> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            format!("invalid arguments: {inner}")
        } else {
            format!("invalid arguments: {path}: {inner}")
        }
    })
}

/// Checks `value` lies in `min..=max`.
pub fn bounded<T: PartialOrd + std::fmt::Display>(
    name: &str,
    value: T,
    min: T,
    max: T,
) -> Result<T, String> {
    if value < min || value > max {
        return Err(format!(
            "{name} must be between {min} and {max} (got {value})"
        ));
    }
    Ok(value)
}

/// A successful result: structured content plus the same JSON as text.
pub fn success<T: Serialize>(output: &T) -> CallToolResult {
    match serde_json::to_value(output) {
        Ok(value) => CallToolResult::structured(value),
        // Text only: it conforms to every toolset's output schema.
        Err(e) => CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
            "INTERNAL: the result could not be written: {e}"
        ))]),
    }
}

/// The documents search hits cite, as `linking` takes them: id and title.
pub fn cited(hits: &[folio_engine::SearchHit]) -> Vec<(String, Option<String>)> {
    hits.iter()
        .map(|h| (h.document_id.clone(), h.title.clone()))
        .collect()
}

/// `result` with a `resource_link` content item for each document its hits
/// cite (in hit order, once each, given as id and title): hosts that render
/// resources can open the cited document (`folio://document/{id}`), which
/// reading checks against the caller's scopes and libraries as any read.
pub fn linking(
    mut result: CallToolResult,
    documents: impl IntoIterator<Item = (String, Option<String>)>,
) -> CallToolResult {
    if result.is_error == Some(true) {
        return result;
    }
    let mut seen = std::collections::HashSet::new();
    for (id, title) in documents {
        if !seen.insert(id.clone()) {
            continue;
        }
        let link = serde_json::json!({
            "type": "resource_link",
            "uri": format!("folio://document/{id}"),
            "name": id,
            "title": title,
            "mimeType": "text/markdown",
        });
        if let Ok(link) = serde_json::from_value::<rmcp::model::ContentBlock>(link) {
            result.content.push(link);
        }
    }
    result
}

/// A failed result in the toolset's own envelope.
pub fn failure(envelope: Value) -> CallToolResult {
    CallToolResult::structured_error(envelope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn references_are_inlined_and_odd_formats_dropped() {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint"},
                "when": {"type": "string", "format": "date"},
                "item": {"$ref": "#/$defs/Item", "description": "the item"}
            },
            "$defs": {"Item": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}}}}
        }));
        let strict = Value::Object(strict_schema(&schema));
        assert_eq!(strict["properties"]["n"], json!({"type": "integer"}));
        assert_eq!(strict["properties"]["when"]["format"], "date");
        assert_eq!(strict["properties"]["item"]["description"], "the item");
        assert_eq!(
            strict["properties"]["item"]["properties"]["x"],
            json!({"type": "number"})
        );
        assert!(!strict.to_string().contains("$ref") && !strict.to_string().contains("$defs"));
    }

    #[test]
    fn boolean_subschemas_become_objects_and_data_stays() {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "limits": true,
                "never": false,
                "items": {"type": "array", "items": true, "uniqueItems": true},
                "anyOf": {"type": "object", "additionalProperties": true, "default": {"x": true}},
                "pick": {"anyOf": [true, {"type": "null"}]}
            },
            "additionalProperties": false
        }));
        let strict = Value::Object(strict_schema(&schema));
        let properties = &strict["properties"];
        assert_eq!(properties["limits"], json!({}));
        assert_eq!(properties["never"], json!({"not": {}}));
        // A property named like a keyword is a property; data is not a schema.
        assert_eq!(
            properties["items"],
            json!({"type": "array", "items": {}, "uniqueItems": true})
        );
        assert_eq!(
            properties["anyOf"],
            json!({"type": "object", "additionalProperties": {}, "default": {"x": true}})
        );
        assert_eq!(properties["pick"]["anyOf"][0], json!({}));
        assert_eq!(strict["additionalProperties"], json!(false));
    }

    #[test]
    fn error_results_conform_to_a_schema_that_admits_the_envelope() {
        let success = object(json!({
            "type": "object", "title": "Out",
            "properties": {"hits": {"type": "array"}}, "required": ["hits"]
        }));
        let envelope = json!({"type": "object", "required": ["error"]});
        let schema = Value::Object(admitting_errors(&success, &envelope));
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["title"], "Out");
        assert_eq!(schema["anyOf"][1], envelope);
        assert_eq!(schema["anyOf"][0]["required"], json!(["hits"]));
    }

    #[test]
    fn arguments_are_read_as_pydantic_reads_them() {
        let schema = object(json!({"type": "object", "properties": {
            "k": {"type": ["integer", "null"]},
            "f": {"type": "number"},
            "b": {"type": "boolean"},
            "list": {"type": "array", "items": {"type": "integer"}},
            "s": {"type": "string"}
        }}));
        let mut arguments = object(json!({
            "k": 5.0, "f": "2.5", "b": "true", "list": ["1", 2.0, 3.5], "s": "7", "other": 1.0
        }));
        coerce_arguments(&schema, &mut arguments);
        assert_eq!(
            Value::Object(arguments),
            json!({"k": 5, "f": 2.5, "b": true, "list": [1, 2, 3.5], "s": "7", "other": 1.0})
        );
    }
}
