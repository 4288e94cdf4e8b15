//! folio's servers: the MCP server (stdio and streamable HTTP, through the
//! official Rust SDK) with its toolsets, the plain HTTP upload endpoint, and
//! the owner/attach arrangement that lets several stdio clients share one
//! data directory.
//!
//! This crate is a transport layer: it turns JSON arguments into engine
//! requests and engine results into each toolset's JSON dialect. All the
//! work happens in `folio-engine`.

mod bmcis;
mod citeloom;
mod context;
mod handler;
mod hansard;
pub mod http;
mod mcpvectordb;
mod native;
mod native_records;
pub mod owner;
mod registry;
mod screen;
mod tool;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use context::Shared;
pub use handler::FolioServer;
pub use registry::{Registry, RegistryError, Toolset};

/// How a server behaves, whatever its transport.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Toolsets exposed, in this order.
    pub toolsets: Vec<Toolset>,
    /// Remove every tool that writes.
    pub read_only: bool,
    /// Tools per `tools/list` page.
    pub tools_page_size: usize,
    /// Per-tool time limits, by tool name; tools not named have none.
    pub timeouts: BTreeMap<String, Duration>,
    /// The library the bmcis toolset searches.
    pub bmcis_library: String,
    /// The library of parliamentary speeches the hansard toolset serves.
    pub hansard_library: String,
    /// The transport, as server_info reports it: "stdio" or "http".
    pub transport: String,
    /// Where the model lives, for server_info.
    pub model_dir: Option<PathBuf>,
}

impl ServeOptions {
    /// The per-tool timeouts the citeloom seed specifies.
    pub fn seed_timeouts() -> BTreeMap<String, Duration> {
        [
            ("ingest_from_source", 15),
            ("store_chunks", 15),
            ("query", 8),
            ("find_chunks", 8),
            ("query_hybrid", 15),
            ("inspect_collection", 5),
            ("list_projects", 2),
        ]
        .into_iter()
        .map(|(name, secs)| (name.to_string(), Duration::from_secs(secs)))
        .collect()
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            toolsets: vec![Toolset::Native],
            read_only: false,
            tools_page_size: 100,
            timeouts: Self::seed_timeouts(),
            bmcis_library: "default".into(),
            hansard_library: "hansard".into(),
            transport: "stdio".into(),
            model_dir: None,
        }
    }
}
