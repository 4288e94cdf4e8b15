//! Which tools a server exposes: the chosen toolsets in order, minus the
//! tools that write when the server is read-only. Two toolsets that define
//! the same tool name differently cannot be enabled together.

use rmcp::model::Tool;

use crate::options::{RegistryError, ServeOptions, Toolset};
use crate::tool::writes;

/// The tools a server exposes, each with the toolset that answers it.
#[derive(Debug, Clone)]
pub struct Registry {
    entries: Vec<(Toolset, Tool)>,
    toolsets: Vec<Toolset>,
}

impl Registry {
    /// The registry a server with `options` exposes, given each toolset's
    /// tools (`toolsets::tools`).
    pub(crate) fn assemble(
        options: &ServeOptions,
        tools_of: impl Fn(Toolset, &ServeOptions) -> Vec<Tool>,
    ) -> Result<Self, RegistryError> {
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
            for tool in tools_of(toolset, options) {
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
