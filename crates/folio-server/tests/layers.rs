//! The server's layering, read from its sources (ARCHITECTURE.md, "The
//! server's layers"): options, tool, ops, toolsets, transport, reference, each
//! importing only the layers before it; no toolset imports another (a tool
//! two dialects share lives in `toolsets::common`); no module cycles; and
//! no module reaches another through the crate root's re-exports.

use std::path::PathBuf;

use folio_testkit::modules::{Graph, cycle, graph, within};

const LAYERS: [&str; 6] = [
    "options",
    "tool",
    "ops",
    "toolsets",
    "transport",
    "reference",
];

fn server() -> Graph {
    let mut graph = graph(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"));
    // The root only declares the layers and wires them together.
    graph.remove("crate");
    graph
}

fn layer(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| within(module, l))
        .unwrap_or_else(|| panic!("module {module} belongs to no layer: add it to one"))
}

#[test]
fn every_layer_imports_only_the_layers_before_it() {
    let graph = server();
    assert!(graph.len() > 15, "the sources were not read: {graph:?}");
    for (module, uses) in &graph {
        for used in uses {
            assert_ne!(used, "crate", "{module} imports through the crate root");
            assert!(
                layer(used) <= layer(module),
                "{module} ({}) imports {used} ({})",
                LAYERS[layer(module)],
                LAYERS[layer(used)]
            );
        }
    }
}

#[test]
fn no_toolset_imports_another() {
    let graph = server();
    let toolsets: Vec<&String> = graph
        .keys()
        .filter(|m| m.starts_with("toolsets::") && m.matches("::").count() == 1)
        .collect();
    assert!(toolsets.len() >= 6, "{toolsets:?}");
    for (module, uses) in &graph {
        let Some(own) = toolsets.iter().find(|t| within(module, t)) else {
            continue;
        };
        for used in uses.iter().filter(|u| within(u, "toolsets")) {
            let shared = within(used, "toolsets::common") && !within(module, "toolsets::common");
            assert!(
                within(used, own) || shared,
                "{module} imports {used}: a toolset may import ops, tool and toolsets::common only"
            );
        }
    }
}

#[test]
fn the_modules_form_no_cycle() {
    assert_eq!(cycle(&server()), None);
}
