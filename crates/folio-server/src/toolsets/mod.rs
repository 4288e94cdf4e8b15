//! The toolsets: one module per contract. Each is an adapter between its
//! dialect (tool schemas, argument spelling, result shapes, error envelope)
//! and the operations of `ops`. A toolset module never imports another;
//! a tool two dialects share lives in `common`.
//!
//! A new tool: its operation in `ops` (when it does something no operation
//! does yet), then one entry in each toolset that exposes it (definition in
//! `tools`, arm in `call`). Scopes and authorisation will hook into
//! `ops::run`, which every tool call passes through.

mod bmcis;
mod citeloom;
mod common;
mod hansard;
mod mcpvectordb;
mod native;

use std::sync::Arc;

use folio_engine::EngineError;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};

pub use self::common::{folio_code, seed_code as citeloom_code};
pub use self::mcpvectordb::{ingest_upload, upload_status};
use crate::ops::{Call, Shared};
use crate::options::{RegistryError, ServeOptions, Toolset};
use crate::tool::admitting_errors;
use crate::tool::registry::Registry;

/// The tools of `toolset`, in the order its contract lists them, each
/// output schema admitting the toolset's error envelope.
fn tools(toolset: Toolset, options: &ServeOptions) -> Vec<Tool> {
    let mut tools = match toolset {
        Toolset::Native => native::tools(),
        Toolset::Citeloom => citeloom::tools(),
        Toolset::Bmcis => bmcis::tools(&options.bmcis_library, &options.bmcis_vendor_type),
        Toolset::Mcpvectordb => mcpvectordb::tools(),
        Toolset::Hansard => hansard::tools(),
    };
    if let Some(envelope) = error_envelope(toolset) {
        for tool in &mut tools {
            if let Some(output) = &tool.output_schema {
                tool.output_schema = Some(Arc::new(admitting_errors(output, &envelope)));
            }
        }
    }
    tools
}

/// The schema of the structured content of `toolset`'s error results; None
/// for a toolset whose errors are text only (hansard's, as FastMCP's
/// `ToolError` answers).
fn error_envelope(toolset: Toolset) -> Option<Value> {
    match toolset {
        // {"error": {code, message, details}}; citeloom adds correlation_id.
        Toolset::Native | Toolset::Citeloom | Toolset::Bmcis => Some(json!({
            "type": "object",
            "properties": {
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "message": {"type": "string"},
                        "details": {"type": "object"}
                    },
                    "required": ["code", "message"]
                },
                "correlation_id": {"type": "string"}
            },
            "required": ["error"]
        })),
        // {"status": "error", "error": "<message>"} (seed 004).
        Toolset::Mcpvectordb => Some(json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "const": "error"},
                "error": {"type": "string"}
            },
            "required": ["status", "error"]
        })),
        Toolset::Hansard => None,
    }
}

/// A refusal of a call before its tool runs (a scope the caller lacks), in
/// `toolset`'s error envelope.
pub fn refusal(toolset: Toolset, shared: &Shared, call: &Call, e: &EngineError) -> CallToolResult {
    match toolset {
        Toolset::Native => native::error(e),
        Toolset::Citeloom => common::error(shared, call, e, None),
        Toolset::Bmcis => bmcis::engine_error(e),
        Toolset::Mcpvectordb => mcpvectordb::error(e),
        Toolset::Hansard => hansard::engine_error(e),
    }
}

/// The library a call that is to run as a background job writes, once its
/// arguments check out; else the refusal in `toolset`'s dialect. Only the
/// native `ingest` runs in the background.
pub fn background_library(
    toolset: Toolset,
    name: &str,
    arguments: Option<JsonObject>,
) -> Result<String, CallToolResult> {
    match (toolset, name) {
        (Toolset::Native, "ingest") => native::background_library(arguments),
        _ => Err(native::invalid(format!(
            "{name} does not run in the background"
        ))),
    }
}

/// Answers a call of tool `name` in `toolset`'s dialect.
pub async fn call(
    toolset: Toolset,
    shared: &Shared,
    name: &str,
    arguments: Option<JsonObject>,
    call: &Call,
) -> CallToolResult {
    match toolset {
        Toolset::Native => native::call(shared, name, arguments, call).await,
        Toolset::Citeloom => citeloom::call(shared, name, arguments, call).await,
        Toolset::Bmcis => bmcis::call(shared, name, arguments, call).await,
        Toolset::Mcpvectordb => mcpvectordb::call(shared, name, arguments, call).await,
        Toolset::Hansard => hansard::call(shared, name, arguments, call).await,
    }
}

impl Registry {
    /// The registry of `toolsets` with default options otherwise.
    pub fn build(toolsets: &[Toolset], read_only: bool) -> Result<Self, RegistryError> {
        Self::for_options(&ServeOptions {
            toolsets: toolsets.to_vec(),
            read_only,
            ..ServeOptions::default()
        })
    }

    /// The registry a server with `options` exposes.
    pub fn for_options(options: &ServeOptions) -> Result<Self, RegistryError> {
        Registry::assemble(options, tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::writes;

    #[test]
    fn colliding_toolsets_are_refused_with_the_tool_named() {
        let error = Registry::build(&[Toolset::Native, Toolset::Mcpvectordb], false).unwrap_err();
        assert_eq!(
            error,
            RegistryError::Conflict {
                tool: "search".into(),
                first: Toolset::Native,
                second: Toolset::Mcpvectordb
            }
        );
        assert!(error.to_string().contains("\"search\""));
    }

    #[test]
    fn shared_definitions_do_not_collide() {
        let registry =
            Registry::build(&[Toolset::Native, Toolset::Citeloom, Toolset::Bmcis], false).unwrap();
        let names: Vec<_> = registry.tools().map(|t| t.name.to_string()).collect();
        assert_eq!(names.iter().filter(|n| *n == "store_chunks").count(), 1);
        assert!(names.contains(&"semantic_search".to_string()));
        assert!(names.contains(&"query_hybrid".to_string()));
    }

    #[test]
    fn read_only_removes_every_writer() {
        for toolset in Toolset::ALL {
            let all = Registry::build(&[toolset], false).unwrap();
            let read = Registry::build(&[toolset], true).unwrap();
            assert!(read.tools().all(|t| !writes(t)));
            assert!(read.tools().count() <= all.tools().count());
        }
        let read = Registry::build(&[Toolset::Native], true).unwrap();
        let names: Vec<_> = read.tools().map(|t| t.name.to_string()).collect();
        for gone in ["ingest", "store_chunks", "delete_document"] {
            assert!(!names.contains(&gone.to_string()), "{gone} survived");
        }
        assert!(names.contains(&"search".to_string()));
    }

    #[test]
    fn unknown_toolsets_are_named() {
        assert_eq!(
            "hansardx".parse::<Toolset>().unwrap_err(),
            RegistryError::UnknownToolset("hansardx".into())
        );
    }
}
