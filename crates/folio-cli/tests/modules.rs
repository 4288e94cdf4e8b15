//! The CLI's modules form no cycle: the commands (bench, records, serve)
//! share what they need through `common`, never through `cli`, which
//! dispatches to them.

use std::path::PathBuf;

use folio_testkit::modules::{cycle, graph};

#[test]
fn the_modules_form_no_cycle() {
    let mut graph = graph(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"));
    graph.remove("crate");
    assert!(graph.len() >= 8, "the sources were not read: {graph:?}");
    for (module, uses) in &graph {
        assert!(
            !uses.contains("crate"),
            "{module} imports through the crate root"
        );
    }
    assert_eq!(cycle(&graph), None);
}
