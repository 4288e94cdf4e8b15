//! Helpers shared by the toolsets: tool definitions from Rust types,
//! argument parsing, bounds, and results.

use std::sync::Arc;

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
    description: &'static str,
    effect: Effect,
    open_world: bool,
) -> Tool {
    let annotations = ToolAnnotations::with_title(title)
        .read_only(matches!(effect, Effect::Read))
        .destructive(matches!(effect, Effect::Delete))
        .idempotent(true)
        .open_world(open_world);
    Tool::new(name, description, Arc::new(JsonObject::new()))
        .with_input_schema::<I>()
        .with_output_schema::<O>()
        .with_title(title)
        .with_annotations(annotations)
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
fn parse<T: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<T, String> {
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
        Err(e) => CallToolResult::structured_error(serde_json::json!({
            "error": {"code": "INTERNAL", "message": e.to_string(), "details": {}}
        })),
    }
}

/// A failed result in the toolset's own envelope.
pub fn failure(envelope: Value) -> CallToolResult {
    CallToolResult::structured_error(envelope)
}

/// A fresh correlation id for a response.
pub fn correlation_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
