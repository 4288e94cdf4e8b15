//! AsciiDoc (Asciidoctor documents): `=` section titles become headings,
//! lists list items, `|===` tables tables (a `.Title` line their caption),
//! listing and literal blocks code, a captioned image a figure caption;
//! comments, attribute entries and `include::` add nothing. The document
//! header's title, author line, revision date and `:lang:` are metadata,
//! and `{name}` references to attributes read as their values.

use std::collections::HashMap;

use crate::markup::{MAX_DEPTH, REACH};
use folio_core::{Block, BlockKind, StructuredText};
use serde_json::Map;

/// Extracts an AsciiDoc document. Never fails.
pub fn extract(text: &str) -> StructuredText {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut reader = Reader::default();
    let start = reader.header(&lines);
    reader.read(&lines[start..]);
    let title = reader
        .metadata
        .get("title")
        .and_then(|t| t.as_str())
        .map(str::to_string);
    let mut blocks = reader.blocks;
    if let Some(title) = &title {
        blocks.insert(0, Block::new(BlockKind::Heading(1), title.as_str(), None));
    }
    StructuredText {
        title,
        blocks,
        metadata: reader.metadata,
        ..Default::default()
    }
}

#[derive(Default)]
struct Reader {
    /// How deep the block being read is nested.
    depth: usize,
    blocks: Vec<Block>,
    metadata: Map<String, serde_json::Value>,
    attributes: HashMap<String, String>,
    /// A `.Title` line waiting for the block it titles.
    title: Option<String>,
    /// The columns a table's `[cols=…]` attribute declares.
    columns: Option<usize>,
}

/// Delimiters of blocks and what their content is.
#[derive(Clone, Copy, PartialEq)]
enum Delimited {
    Code,
    Skip,
    Content,
}

fn delimiter(line: &str) -> Option<Delimited> {
    let first = line.chars().next()?;
    let same = line.chars().all(|c| c == first);
    if line == "--" {
        return Some(Delimited::Content);
    }
    if !same || line.len() < 4 {
        return None;
    }
    Some(match first {
        '-' | '.' => Delimited::Code,
        '/' | '+' => Delimited::Skip,
        '_' | '*' | '=' => Delimited::Content,
        _ => return None,
    })
}

impl Reader {
    fn push(&mut self, kind: BlockKind, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            self.blocks.push(Block::new(kind, text, None));
        }
    }

    /// The document header: `= Title`, an author line, a revision line and
    /// attribute entries, up to the first blank line. Returns where the
    /// body starts.
    fn header(&mut self, lines: &[&str]) -> usize {
        let mut i = 0;
        // Comments and attribute entries may come before the title.
        while i < lines.len() && (lines[i].starts_with("//") || lines[i].trim().is_empty()) {
            i += 1;
        }
        while i < lines.len() && self.attribute_entry(lines[i]) {
            i += 1;
        }
        let Some(title) = lines
            .get(i)
            .and_then(|l| l.strip_prefix("= ").or_else(|| l.strip_prefix("# ")))
        else {
            return 0;
        };
        let title = self.inline(title);
        self.metadata.insert("title".into(), title.into());
        i += 1;
        let mut line_number = 0;
        while i < lines.len() && !lines[i].trim().is_empty() {
            let line = lines[i];
            if line.starts_with("//") || self.attribute_entry(line) {
                i += 1;
                continue;
            }
            line_number += 1;
            if line_number == 1 {
                let names: Vec<serde_json::Value> = line
                    .split(';')
                    .map(|a| a.split('<').next().unwrap_or(a).trim())
                    .filter(|a| !a.is_empty())
                    .map(|a| a.to_string().into())
                    .collect();
                if !names.is_empty() {
                    self.metadata.insert("authors".into(), names.into());
                }
            } else if line_number == 2 {
                // `v1.0, 2024-03-01: remark`.
                let date = line
                    .split_once(',')
                    .map_or(line, |(_, d)| d)
                    .split(':')
                    .next()
                    .unwrap_or("")
                    .trim();
                self.date(date);
            }
            i += 1;
        }
        for (attribute, key) in [
            ("lang", "language"),
            ("keywords", "keywords"),
            ("description", "description"),
        ] {
            if let Some(value) = self.attributes.get(attribute) {
                self.metadata.insert(key.into(), value.clone().into());
            }
        }
        if let Some(author) = self.attributes.get("author").cloned()
            && !self.metadata.contains_key("authors")
        {
            self.metadata.insert("authors".into(), vec![author].into());
        }
        if let Some(date) = self.attributes.get("revdate").cloned() {
            self.date(&date);
        }
        i
    }

    fn date(&mut self, date: &str) {
        crate::markup::set_date(&mut self.metadata, date);
    }

    /// `:name: value` (`:name!:` unsets): remembered; whether it was one.
    fn attribute_entry(&mut self, line: &str) -> bool {
        let Some(rest) = line.strip_prefix(':') else {
            return false;
        };
        let Some((name, value)) = rest.split_once(':') else {
            return false;
        };
        if name.is_empty() || name.contains(' ') {
            return false;
        }
        match name.strip_suffix('!') {
            Some(name) => {
                self.attributes.remove(name);
            }
            None => {
                self.attributes
                    .insert(name.to_string(), value.trim().to_string());
            }
        }
        true
    }

    fn read(&mut self, lines: &[&str]) {
        if self.depth >= MAX_DEPTH {
            let text: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
            self.push(BlockKind::Paragraph, &text.join("\n"));
            return;
        }
        self.depth += 1;
        self.read_lines(lines);
        self.depth -= 1;
    }

    fn read_lines(&mut self, lines: &[&str]) {
        let mut i = 0;
        let mut paragraph: Vec<&str> = Vec::new();
        let mut item = false;
        while i < lines.len() {
            let line = lines[i];
            let trimmed = line.trim();
            if trimmed.is_empty() {
                self.end(&mut paragraph, &mut item);
                i += 1;
                continue;
            }
            if trimmed.starts_with("//") && !trimmed.starts_with("////") {
                i += 1;
                continue;
            }
            if paragraph.is_empty() || item {
                if let Some(kind) = delimiter(trimmed) {
                    self.end(&mut paragraph, &mut item);
                    let end = lines[i + 1..]
                        .iter()
                        .position(|l| l.trim() == trimmed)
                        .map_or(lines.len(), |p| i + 1 + p);
                    let inner = &lines[i + 1..end];
                    match kind {
                        Delimited::Code => {
                            self.title = None;
                            self.push(BlockKind::Code, &inner.join("\n"));
                        }
                        Delimited::Skip => {}
                        Delimited::Content => {
                            if let Some(title) = self.title.take() {
                                self.push(BlockKind::Paragraph, &title);
                            }
                            self.read(inner);
                        }
                    }
                    i = end + 1;
                    continue;
                }
                if trimmed.starts_with("|===") || trimmed.starts_with(",===") {
                    self.end(&mut paragraph, &mut item);
                    let end = lines[i + 1..]
                        .iter()
                        .position(|l| l.trim() == trimmed)
                        .map_or(lines.len(), |p| i + 1 + p);
                    let separator = if trimmed.starts_with(',') { ',' } else { '|' };
                    self.table(&lines[i + 1..end], separator);
                    i = end + 1;
                    continue;
                }
            }
            if paragraph.is_empty() {
                if let Some(level) = section_level(trimmed) {
                    self.end(&mut paragraph, &mut item);
                    self.title = None;
                    let text = self.inline(trimmed[level + 1..].trim());
                    self.push(BlockKind::Heading(level.min(6) as u8), &text);
                    i += 1;
                    continue;
                }
                if self.attribute_entry(trimmed) {
                    i += 1;
                    continue;
                }
                if trimmed.starts_with('[') && trimmed.ends_with(']') {
                    // Block attributes, anchors; a table's columns.
                    self.columns = declared_columns(trimmed);
                    i += 1;
                    continue;
                }
                if let Some(title) = trimmed.strip_prefix('.')
                    && title.starts_with(|c: char| !c.is_whitespace() && c != '.')
                {
                    self.title = Some(self.inline(title));
                    i += 1;
                    continue;
                }
                if let Some(rest) = trimmed.strip_prefix("image::") {
                    let alt = rest
                        .split_once('[')
                        .map(|(_, a)| a.trim_end_matches(']').split(',').next().unwrap_or(""))
                        .unwrap_or("");
                    match self.title.take() {
                        Some(caption) => {
                            let caption = crate::markup::figure_caption(&caption);
                            self.push(BlockKind::Paragraph, &caption);
                        }
                        None => {
                            let alt = alt.trim_matches('"').to_string();
                            self.push(BlockKind::Paragraph, &alt);
                        }
                    }
                    i += 1;
                    continue;
                }
                if trimmed.starts_with("include::")
                    || trimmed.starts_with("toc::")
                    || trimmed.starts_with("ifdef::")
                    || trimmed.starts_with("ifndef::")
                    || trimmed.starts_with("endif::")
                    || trimmed.starts_with("ifeval::")
                {
                    i += 1;
                    continue;
                }
            }
            if let Some(text) = list_item(trimmed) {
                self.end(&mut paragraph, &mut item);
                item = true;
                paragraph.push(text);
                i += 1;
                continue;
            }
            if trimmed == "+" && item {
                // A list continuation: the next block joins the item.
                i += 1;
                continue;
            }
            if paragraph.is_empty() && line.starts_with(' ') {
                // A literal paragraph: indented lines as written.
                let end = lines[i..]
                    .iter()
                    .position(|l| l.trim().is_empty())
                    .map_or(lines.len(), |p| i + p);
                let code: Vec<&str> = lines[i..end].iter().map(|l| l.trim()).collect();
                self.push(BlockKind::Code, &code.join("\n"));
                i = end;
                continue;
            }
            paragraph.push(trimmed);
            i += 1;
        }
        self.end(&mut paragraph, &mut item);
    }

    fn end(&mut self, paragraph: &mut Vec<&str>, item: &mut bool) {
        if !paragraph.is_empty() {
            let text = self.inline(&paragraph.join("\n"));
            let kind = if *item {
                BlockKind::ListItem
            } else {
                BlockKind::Paragraph
            };
            self.push(kind, &text);
            paragraph.clear();
        }
        *item = false;
    }

    /// A table's lines: cells start at `|` (after an optional
    /// specifier such as `2+` or `a`); a row is the first line's cell
    /// count, or a line's cells when the first line held all of a row.
    fn table(&mut self, lines: &[&str], separator: char) {
        let mut cells: Vec<String> = Vec::new();
        let mut columns = 0;
        let mut first_line = true;
        for line in lines {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                if first_line && !cells.is_empty() {
                    columns = cells.len();
                }
                first_line = cells.is_empty();
                continue;
            }
            if separator == ',' {
                cells.extend(trimmed.split(',').map(|c| c.trim().to_string()));
                if columns == 0 {
                    columns = cells.len();
                }
                continue;
            }
            let mut parts = trimmed.split('|');
            let lead = parts.next().unwrap_or("");
            if !lead.is_empty() && !is_cell_specifier(lead) {
                // A line continuing the cell above.
                if let Some(last) = cells.last_mut() {
                    last.push(' ');
                    last.push_str(trimmed);
                }
                continue;
            }
            let mut spans = Vec::new();
            let mut cell_texts = Vec::new();
            let mut pending_spec = lead;
            for part in parts {
                // A specifier of the next cell ends this one (`2+|`).
                let (text, spec) = split_trailing_specifier(part);
                spans.push(span_of(pending_spec));
                cell_texts.push(text.trim().to_string());
                pending_spec = spec;
            }
            for (text, span) in cell_texts.into_iter().zip(spans) {
                cells.push(text);
                for _ in 1..span.min(64) {
                    cells.push(String::new());
                }
            }
        }
        if let Some(declared) = self.columns.take() {
            columns = declared;
        }
        if columns == 0 {
            columns = cells.len().max(1);
        }
        let title = self.title.take();
        let rows: Vec<Vec<String>> = cells
            .chunks(columns)
            .map(|row| row.iter().map(|c| self.inline(c)).collect())
            .collect();
        crate::markup::push_table(&mut self.blocks, rows, title);
    }

    /// The text of inline markup, with attribute references replaced.
    fn inline(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            match after.find('}') {
                Some(end)
                    if after[..end]
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
                        && end > 0 =>
                {
                    let name = &after[..end];
                    match self.attributes.get(name) {
                        Some(value) => out.push_str(value),
                        None => out.push_str(&rest[start..start + end + 2]),
                    }
                    rest = &after[end + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        inline(&out)
    }
}

/// The number of columns `cols="1,2,3"` or `cols="3*"` declares.
fn declared_columns(attributes: &str) -> Option<usize> {
    let at = attributes.find("cols=")?;
    let value = attributes[at + 5..].trim_start_matches(['"', '\'']);
    let value = value.split(['"', '\'', ']']).next()?;
    let count: usize = value
        .split([',', ';'])
        .map(|c| {
            c.split_once('*')
                .and_then(|(n, _)| n.trim().parse().ok())
                .unwrap_or(1)
        })
        .sum();
    (1..=64).contains(&count).then_some(count)
}

/// The level of a section title (`== Title` is 1 under the document's
/// title; Markdown-style `##` too).
fn section_level(line: &str) -> Option<usize> {
    let marker = line.chars().next().filter(|c| *c == '=' || *c == '#')?;
    let count = line.chars().take_while(|c| *c == marker).count();
    ((2..=6).contains(&count) && line[count..].starts_with(' ')).then_some(count)
}

fn is_cell_specifier(text: &str) -> bool {
    text.len() <= 8
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || "+.*<>^aehlmsdv".contains(c))
}

/// A cell's text and the specifier of the next cell at its end (`text 2+`).
fn split_trailing_specifier(part: &str) -> (&str, &str) {
    let trimmed = part.trim_end();
    if let Some(space) = trimmed.rfind(' ') {
        let tail = &trimmed[space + 1..];
        if tail.chars().any(|c| c == '+' || c == '*') && is_cell_specifier(tail) {
            return (&trimmed[..space], tail);
        }
    } else if part.trim().chars().any(|c| c == '+' || c == '*') && is_cell_specifier(part.trim()) {
        return ("", part.trim());
    }
    (part, "")
}

/// How many columns a cell specifier spans (`3+`), else 1.
fn span_of(spec: &str) -> usize {
    spec.split_once('+')
        .and_then(|(n, _)| n.split('.').next()?.parse().ok())
        .unwrap_or(1)
}

/// A list item's text: `* `, `- `, `. `, `1. `, `a. `, a checklist's box,
/// a description list's `term:: text` (read as `term: text` by `inline`).
fn list_item(line: &str) -> Option<&str> {
    if let Some(at) = line
        .find(":: ")
        .or_else(|| line.strip_suffix("::").map(|t| t.len()))
        && at > 0
        && !line[..at].contains("://")
    {
        return Some(line);
    }
    let marker_len = line
        .chars()
        .take_while(|c| *c == '*' || *c == '.' || *c == '-')
        .count();
    let rest = if marker_len > 0 && line[marker_len..].starts_with(' ') {
        if line.starts_with('-') && marker_len > 1 {
            return None;
        }
        &line[marker_len + 1..]
    } else {
        let label = line.find(". ")?;
        let label_text = &line[..label];
        if label == 0
            || label > 3
            || !(label_text.chars().all(|c| c.is_ascii_digit())
                || (label == 1 && label_text.chars().all(|c| c.is_ascii_alphabetic())))
        {
            return None;
        }
        &line[label + 2..]
    };
    let rest = rest.trim_start();
    Some(
        ["[ ] ", "[x] ", "[X] ", "[*] "]
            .iter()
            .find_map(|b| rest.strip_prefix(b))
            .unwrap_or(rest),
    )
}

/// The text of AsciiDoc inline markup: links and cross references by their
/// text, footnotes in brackets, emphasis markers gone.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // `<<id,text>>` cross references.
    while let Some((start, end)) = rest
        .find("<<")
        .and_then(|start| Some((start, rest[start..].find(">>")?)))
    {
        out.push_str(&rest[..start]);
        let inner = &rest[start + 2..start + end];
        out.push_str(inner.split_once(',').map_or(inner, |(_, t)| t.trim()));
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    let text = macros(&out);
    let text = emphasis(&text);
    text.replacen(":: ", ": ", 1)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Inline macros whose text is kept: links, cross references, footnotes,
/// keys, images (their alternative text).
const MACROS: &[&str] = &[
    "link",
    "xref",
    "mailto",
    "https",
    "http",
    "ftp",
    "irc",
    "footnote",
    "footnoteref",
    "kbd",
    "btn",
    "menu",
    "image",
    "pass",
    "stem",
    "latexmath",
    "asciimath",
    "indexterm",
    "indexterm2",
];

/// `link:url[text]`, `https://url[text]`, `xref:doc.adoc[text]`,
/// `footnote:[text]`, `kbd:[Ctrl+C]`, `image:file[alt]`: their text.
fn macros(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let before = &rest[..open];
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        // The first macro name whose target runs unbroken to the `[`.
        let found = MACROS
            .iter()
            .filter_map(|name| {
                let at = before.rfind(&format!("{name}:"))?;
                let target = &before[at + name.len() + 1..];
                let bounded = before[..at]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_alphanumeric());
                (bounded && !target.contains(char::is_whitespace)).then_some((at, *name, target))
            })
            .min_by_key(|(at, _, _)| *at);
        match found {
            Some((at, name, target)) => {
                out.push_str(&before[..at]);
                let first = inner.split(',').next().unwrap_or("").trim_matches('"');
                match name {
                    "footnote" | "footnoteref" => {
                        out.push_str(" (");
                        out.push_str(inner.rsplit_once(',').map_or(inner, |(_, t)| t));
                        out.push(')');
                    }
                    "indexterm" | "indexterm2" | "kbd" | "btn" | "menu" | "pass" | "stem"
                    | "latexmath" | "asciimath" => out.push_str(inner),
                    _ if first.trim().is_empty() => match name {
                        "link" | "xref" | "mailto" | "image" => out.push_str(target),
                        _ => {
                            out.push_str(name);
                            out.push(':');
                            out.push_str(target);
                        }
                    },
                    _ => out.push_str(first),
                }
            }
            None => out.push_str(&rest[..open + close + 1]),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// `*strong*`, `_emphasis_`, `` `monospace` ``, `#mark#` and their doubled
/// (unconstrained) forms without their markers.
fn emphasis(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '*' | '_' | '`' | '#') {
            let double = chars.get(i + 1) == Some(&c);
            let width = if double { 2 } else { 1 };
            let boundary = i == 0 || !chars[i - 1].is_alphanumeric();
            if (double || boundary)
                && chars.get(i + width).is_some_and(|n| !n.is_whitespace())
                && let Some(close) =
                    (i + width..chars.len().saturating_sub(width - 1).min(i + REACH)).find(|&j| {
                        chars[j..j + width].iter().all(|x| *x == c)
                            && !chars[j - 1].is_whitespace()
                            && (double || chars.get(j + 1).is_none_or(|n| !n.is_alphanumeric()))
                    })
                && close > i + width
            {
                out.extend(&chars[i + width..close]);
                i = close + width;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup::texts;

    #[test]
    fn an_asciidoc_document_reads_with_its_sections_lists_tables_and_code() {
        let source = "\
= Heat Pump Guide
Jane Doe <jane@example.org>; John Roe
v1.2, 2024-03-01: first release
:lang: de
:product: HeatMaster

// a comment
== Overview

The *{product}* reaches a _high_ `COP`.footnote:[Per EN 14511.]
See link:https://example.org[the norm] and <<sizing,Sizing>>.

[[sizing]]
=== Sizing

* first point
** nested point
. numbered
Term:: its definition

.Yield by site
[cols=\"2,1\",options=\"header\"]
|===
|Site |2021

|Kassel
|3.4

2+|Graz (est.)
|===

[source,python]
----
print(cop(3.5))
----

.Floor plan
image::plan.png[Plan]

////
A comment block.
////
";
        let text = extract(source);
        assert_eq!(text.title.as_deref(), Some("Heat Pump Guide"));
        assert_eq!(
            text.metadata["authors"],
            serde_json::json!(["Jane Doe", "John Roe"])
        );
        assert_eq!(text.metadata["language"], "de");
        assert_eq!(text.metadata["year"], 2024);
        assert_eq!(
            texts(&text),
            [
                (BlockKind::Heading(1), "Heat Pump Guide"),
                (BlockKind::Heading(2), "Overview"),
                (
                    BlockKind::Paragraph,
                    "The HeatMaster reaches a high COP. (Per EN 14511.)\nSee the norm and Sizing."
                ),
                (BlockKind::Heading(3), "Sizing"),
                (BlockKind::ListItem, "first point"),
                (BlockKind::ListItem, "nested point"),
                (BlockKind::ListItem, "numbered"),
                (BlockKind::ListItem, "Term: its definition"),
                (
                    BlockKind::Table,
                    "| Site | 2021 |\n| --- | --- |\n| Kassel | 3.4 |\n| Graz (est.) |  |"
                ),
                (BlockKind::Code, "print(cop(3.5))"),
                (BlockKind::Paragraph, "Figure: Floor plan"),
            ]
        );
        assert_eq!(text.blocks[8].caption.as_deref(), Some("Yield by site"));
    }

    #[test]
    fn odd_input_reads_without_failing() {
        for source in [
            "",
            "=",
            "= ",
            "|===",
            "|===\n|a|b\n",
            "----",
            "[",
            "link:[",
            "<<",
            "{",
            "footnote:[",
            "*a",
            "**",
            ".",
            "2+|",
        ] {
            let _ = extract(source);
        }
    }
}
