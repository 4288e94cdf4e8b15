//! How a server is configured: its toolsets and the options every
//! transport shares.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// A named group of tools with one contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Toolset {
    /// folio's own tools.
    Native,
    /// The citeloom contract (seeds 000 and 001).
    Citeloom,
    /// The bmcis contract (seed 003).
    Bmcis,
    /// The mcpvectordb contract (seed 004).
    Mcpvectordb,
    /// The hansard contract (seed 002): parliamentary speeches as records.
    Hansard,
}

impl Toolset {
    pub const ALL: [Toolset; 5] = [
        Toolset::Native,
        Toolset::Citeloom,
        Toolset::Bmcis,
        Toolset::Mcpvectordb,
        Toolset::Hansard,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Toolset::Native => "native",
            Toolset::Citeloom => "citeloom",
            Toolset::Bmcis => "bmcis",
            Toolset::Mcpvectordb => "mcpvectordb",
            Toolset::Hansard => "hansard",
        }
    }
}

impl fmt::Display for Toolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Toolset {
    type Err = RegistryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Toolset::ALL
            .into_iter()
            .find(|t| t.as_str() == s.trim())
            .ok_or_else(|| RegistryError::UnknownToolset(s.trim().to_string()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("unknown toolset {0:?} (known: native, citeloom, bmcis, mcpvectordb, hansard)")]
    UnknownToolset(String),
    #[error(
        "toolsets {first} and {second} both define a tool named {tool:?} with different contracts; enable one of them"
    )]
    Conflict {
        tool: String,
        first: Toolset,
        second: Toolset,
    },
    #[error("no toolset enabled")]
    Empty,
    #[error("cannot open the audit log {path}: {reason}")]
    AuditLog { path: String, reason: String },
}

/// A folder the server keeps in sync with a library.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WatchSpec {
    pub folder: std::path::PathBuf,
    pub library: String,
    /// Globs left out (gitignore syntax), beyond the ignore files.
    pub exclude: Vec<String>,
    /// A full pass at least this often.
    pub rescan: Duration,
    /// Whether ZIP and TAR archives are read.
    #[serde(default)]
    pub archives: bool,
}

/// How a server behaves, whatever its transport. Each client of a shared
/// data directory brings its own (see `owner`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ServeOptions {
    /// Toolsets exposed, in this order.
    pub toolsets: Vec<Toolset>,
    /// Remove every tool that writes.
    pub read_only: bool,
    /// Tools per `tools/list` page.
    pub tools_page_size: usize,
    /// Per-tool time limits, by tool name; tools not named have none.
    pub timeouts: BTreeMap<String, Duration>,
    /// Folders kept in sync with libraries by the process that holds the
    /// engine.
    #[serde(default)]
    pub watches: Vec<WatchSpec>,
    /// The library the bmcis toolset searches.
    pub bmcis_library: String,
    /// The entity type `find_vendor_info` calls vendors.
    pub bmcis_vendor_type: String,
    /// The library of parliamentary speeches the hansard toolset serves.
    pub hansard_library: String,
    /// The transport, as server_info reports it: "stdio" or "http".
    pub transport: String,
    /// Where the model lives, for server_info.
    pub model_dir: Option<PathBuf>,
    /// Whether URL ingestion may reach private and loopback addresses.
    pub allow_private_urls: bool,
    /// The name and version the server gives in `initialize` (None: the
    /// seed's own when one compatibility toolset is served alone, else
    /// folio's).
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// Whether HTTP callers are identified, by an access key (`--auth
    /// keys`) or an OAuth access token (`--auth oauth`): then nothing
    /// names libraries before the caller is known.
    #[serde(default)]
    pub keys_required: bool,
    /// Where each call's audit line is appended (`-`: stderr); None: no
    /// audit log.
    #[serde(default)]
    pub audit_log: Option<PathBuf>,
    /// Calls a minute a key may make when it names no rate of its own;
    /// None: unlimited.
    #[serde(default)]
    pub default_rate_per_minute: Option<u32>,
    /// Bytes of sources each identified caller may ingest an hour; None:
    /// unlimited.
    #[serde(default)]
    pub ingest_bytes_per_hour: Option<u64>,
    /// Whether audit lines carry the query of a call that has one
    /// (`[audit] include_queries`); off by default.
    #[serde(default)]
    pub audit_queries: bool,
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
            // Seed 000 gives list_projects none ("fast enumeration").
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
            watches: Vec::new(),
            bmcis_library: "default".into(),
            bmcis_vendor_type: "organization".into(),
            hansard_library: "hansard".into(),
            transport: "stdio".into(),
            model_dir: None,
            allow_private_urls: false,
            server_name: None,
            server_version: None,
            keys_required: false,
            audit_log: None,
            default_rate_per_minute: None,
            ingest_bytes_per_hour: None,
            audit_queries: false,
        }
    }
}

impl ServeOptions {
    /// The name and version `initialize` reports: the configured ones, else
    /// the seed's when one compatibility toolset is served alone (its
    /// clients may key on them), else folio's.
    pub fn identity(&self) -> (String, String) {
        let folio = env!("CARGO_PKG_VERSION");
        let (name, version) = match self.toolsets.as_slice() {
            [Toolset::Mcpvectordb] => ("mcpvectordb", "0.3.0"),
            [Toolset::Hansard] => ("australian-hansard-rag", folio),
            [Toolset::Bmcis] => ("bmcis-knowledge-mcp", folio),
            [Toolset::Citeloom] => ("citeloom", folio),
            _ => ("folio", folio),
        };
        (
            self.server_name.clone().unwrap_or_else(|| name.into()),
            self.server_version
                .clone()
                .unwrap_or_else(|| version.into()),
        )
    }
}
