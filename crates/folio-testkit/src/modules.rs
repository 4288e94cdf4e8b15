//! A crate's module graph, read from its sources: which module names which
//! (`crate::a::b`, `super::x`, `self::y`, grouped `use crate::{...}`), for
//! tests that hold a crate's layering (no cycles, no forbidden imports).
//!
//! A module is named by its path from the crate root (`toolsets::native`);
//! the root itself is `crate`. A path resolves to the longest known module
//! it starts with, so `crate::ops::Call` is a use of `ops`. Comments are
//! skipped; `#[cfg(test)]` code counts like any other, except `use super::*`,
//! read as an inline test module's import of its own file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each module of the crate under `src`, with the modules it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module graph of the crate whose sources are in `src` (its `lib.rs`
/// or `main.rs` is the root).
pub fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    collect(src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files
        .into_iter()
        .map(|file| (module_name(src, &file), file))
        .collect();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(name, file)| {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let uses = paths(&without_comments(&text))
                .into_iter()
                // `use super::*` is an inline test module's import of the
                // file it sits in, not of the file's parent.
                .filter(|path| path.len() > 1 || path[0] != "super")
                .filter_map(|path| resolve(name, &path, &known))
                .filter(|used| used != name && !is_descendant(used, name))
                .collect();
            (name.clone(), uses)
        })
        .collect()
}

/// A cycle of the graph, as the modules on it in order, if there is one.
pub fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let at = stack.iter().position(|m| m == next).unwrap_or(0);
                    let mut found = stack[at..].to_vec();
                    found.push(next.clone());
                    return Some(found);
                }
                Some(_) => {}
                None => {
                    if let Some(found) = visit(next, graph, state, stack) {
                        return Some(found);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node.as_str())
            && let Some(found) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return Some(found);
        }
    }
    None
}

/// Whether `module` is `ancestor` or lies inside it.
pub fn within(module: &str, ancestor: &str) -> bool {
    module == ancestor || is_descendant(module, ancestor)
}

fn is_descendant(module: &str, ancestor: &str) -> bool {
    ancestor == "crate" && module != "crate"
        || module
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with("::"))
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

fn module_name(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod")) {
        parts.pop();
    }
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main") {
        parts.clear();
    }
    if parts.is_empty() {
        "crate".into()
    } else {
        parts.join("::")
    }
}

/// `text` with line and block comments blanked (string literals are kept;
/// a `//` inside one cuts the rest of its line, which only loses paths).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |at| &after[at..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |at| &after[at + 2..]);
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every path that starts with `crate`, `super` or `self`, as segments,
/// with grouped imports expanded.
fn paths(text: &str) -> Vec<Vec<String>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| bytes[i..].starts_with(h.as_bytes()));
        match head {
            Some(head) if starts_word => {
                let (mut expanded, end) = expand(text, i + head.len());
                for path in &mut expanded {
                    path.insert(0, head.trim_end_matches(':').to_string());
                }
                found.extend(expanded);
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    found
}

/// The paths a use tree at `at` spells (`a::b`, `{a, b::{c}}`), and where
/// it ends.
fn expand(text: &str, mut at: usize) -> (Vec<Vec<String>>, usize) {
    let bytes = text.as_bytes();
    let mut segments = Vec::new();
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < bytes.len() && bytes[at] == b'{' {
            let mut all = Vec::new();
            at += 1;
            loop {
                let (inner, end) = expand(text, at);
                all.extend(inner.into_iter().map(|tail| {
                    let mut path = segments.clone();
                    path.extend(tail);
                    path
                }));
                at = end;
                while at < bytes.len() && bytes[at].is_ascii_whitespace() {
                    at += 1;
                }
                match bytes.get(at) {
                    Some(b',') => at += 1,
                    Some(b'}') => return (all, at + 1),
                    _ => return (all, at),
                }
                while at < bytes.len() && bytes[at].is_ascii_whitespace() {
                    at += 1;
                }
                if bytes.get(at) == Some(&b'}') {
                    return (all, at + 1);
                }
            }
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at == start {
            return (vec![segments], at);
        }
        segments.push(text[start..at].to_string());
        if bytes[at..].starts_with(b"::") {
            at += 2;
        } else {
            return (vec![segments], at);
        }
    }
}

/// The module a path in `from` names: the longest known module it starts
/// with.
fn resolve(from: &str, path: &[String], known: &BTreeSet<String>) -> Option<String> {
    let mut base: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => module_parts(from),
        Some("super") => {
            let mut parts = module_parts(from);
            parts.pop();
            parts
        }
        _ => return None,
    };
    let mut best = if base.is_empty() {
        "crate".to_string()
    } else {
        base.join("::")
    };
    for segment in &path[1..] {
        if segment == "super" {
            base.pop();
            continue;
        }
        base.push(segment.clone());
        let name = base.join("::");
        if known.contains(&name) {
            best = name;
        } else {
            break;
        }
    }
    Some(best)
}

fn module_parts(module: &str) -> Vec<String> {
    if module == "crate" {
        Vec::new()
    } else {
        module.split("::").map(str::to_string).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_and_relative_paths_resolve_to_modules() {
        let text = "use crate::{a::{self, B}, c::d::E};\nuse super::f; // crate::g\nfn x() { crate::h::i(); }";
        let got: Vec<String> = paths(&without_comments(text))
            .into_iter()
            .map(|p| p.join("::"))
            .collect();
        assert_eq!(
            got,
            [
                "crate::a::self",
                "crate::a::B",
                "crate::c::d::E",
                "super::f",
                "crate::h::i"
            ]
        );
        let known: BTreeSet<String> = ["crate", "a", "c", "c::d", "m", "m::n", "m::f"]
            .map(String::from)
            .into();
        let resolve = |from: &str, p: &str| {
            let path: Vec<String> = p.split("::").map(str::to_string).collect();
            resolve(from, &path, &known).unwrap()
        };
        assert_eq!(resolve("x", "crate::c::d::E"), "c::d");
        assert_eq!(resolve("x", "crate::a::B"), "a");
        assert_eq!(resolve("m::n", "super::f"), "m::f");
        assert_eq!(resolve("m::n", "super::g"), "m");
        assert_eq!(resolve("x", "crate::Thing"), "crate");
    }

    #[test]
    fn cycles_are_found_and_named() {
        let mut graph = Graph::new();
        graph.insert("a".into(), ["b".to_string()].into());
        graph.insert("b".into(), ["c".to_string()].into());
        graph.insert("c".into(), BTreeSet::new());
        assert_eq!(cycle(&graph), None);
        graph.insert("c".into(), ["a".to_string()].into());
        assert_eq!(cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    }
}
