//! Tool definitions are a contract with agents: names, order, descriptions,
//! schemas and annotations are pinned here. After an intended change, run
//! with FOLIO_UPDATE_SNAPSHOTS=1 and review the diff.

use std::path::PathBuf;

use folio_server::{Registry, Toolset};

#[test]
fn tool_definitions_match_their_snapshots() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var_os("FOLIO_UPDATE_SNAPSHOTS").is_some();
    for toolset in Toolset::ALL {
        let registry = Registry::build(&[toolset], false).expect("a toolset alone never conflicts");
        let tools: Vec<_> = registry.tools().collect();
        let actual = serde_json::to_string_pretty(&tools).unwrap() + "\n";
        let path = dir.join(format!("{toolset}.json"));
        if update {
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!(
                "{} is missing: run with FOLIO_UPDATE_SNAPSHOTS=1",
                path.display()
            )
        });
        assert_eq!(
            actual, expected,
            "the {toolset} tool definitions changed; if intended, regenerate with FOLIO_UPDATE_SNAPSHOTS=1"
        );
    }
}

#[test]
fn every_tool_declares_its_effects_and_output() {
    for toolset in Toolset::ALL {
        for tool in Registry::build(&[toolset], false).unwrap().tools() {
            let a = tool.annotations.as_ref().expect("annotations");
            assert!(a.read_only_hint.is_some() && a.destructive_hint.is_some());
            assert!(a.idempotent_hint.is_some() && a.open_world_hint.is_some());
            let output = tool.output_schema.as_ref().expect("an output schema");
            assert_eq!(
                output.get("type").and_then(|t| t.as_str()),
                Some("object"),
                "{}",
                tool.name
            );
            assert!(
                tool.description.as_ref().is_some_and(|d| d.len() > 40),
                "{}",
                tool.name
            );
        }
    }
}
