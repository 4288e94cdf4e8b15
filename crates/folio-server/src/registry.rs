//! Which tools a server exposes: the chosen toolsets in order, minus the
//! tools that write when the server is read-only. Two toolsets that define
//! the same tool name differently cannot be enabled together.

use std::fmt;
use std::str::FromStr;

use rmcp::model::Tool;

use crate::ServeOptions;
use crate::tool::writes;
use crate::{bmcis, citeloom, hansard, mcpvectordb, native};

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

    fn tools(self, options: &ServeOptions) -> Vec<Tool> {
        match self {
            Toolset::Native => native::tools(),
            Toolset::Citeloom => citeloom::tools(),
            Toolset::Bmcis => bmcis::tools(&options.bmcis_library),
            Toolset::Mcpvectordb => mcpvectordb::tools(),
            Toolset::Hansard => hansard::tools(),
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
}

/// The tools a server exposes, each with the toolset that answers it.
#[derive(Debug, Clone)]
pub struct Registry {
    entries: Vec<(Toolset, Tool)>,
    toolsets: Vec<Toolset>,
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
        let (toolsets, read_only) = (&options.toolsets, options.read_only);
        if toolsets.is_empty() {
            return Err(RegistryError::Empty);
        }
        let mut entries: Vec<(Toolset, Tool)> = Vec::new();
        let mut enabled = Vec::new();
        for &toolset in toolsets {
            if enabled.contains(&toolset) {
                continue;
            }
            enabled.push(toolset);
            for tool in toolset.tools(options) {
                match entries.iter().find(|(_, t)| t.name == tool.name) {
                    // One shared definition (store_chunks) serves both toolsets.
                    Some((_, existing)) if *existing == tool => {}
                    Some((first, _)) => {
                        return Err(RegistryError::Conflict {
                            tool: tool.name.to_string(),
                            first: *first,
                            second: toolset,
                        });
                    }
                    None => entries.push((toolset, tool)),
                }
            }
        }
        if read_only {
            entries.retain(|(_, tool)| !writes(tool));
        }
        Ok(Registry {
            entries,
            toolsets: enabled,
        })
    }

    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.entries.iter().map(|(_, t)| t)
    }

    pub fn toolsets(&self) -> &[Toolset] {
        &self.toolsets
    }

    pub fn has_toolset(&self, toolset: Toolset) -> bool {
        self.toolsets.contains(&toolset)
    }

    /// The toolset that answers `name`, when the tool is exposed.
    pub fn find(&self, name: &str) -> Option<(Toolset, &Tool)> {
        self.entries
            .iter()
            .find(|(_, t)| t.name == name)
            .map(|(s, t)| (*s, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
