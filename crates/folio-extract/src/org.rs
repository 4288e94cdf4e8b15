//! Org documents (Emacs Org mode): headlines become headings (without
//! their TODO keyword, priority and tags), plain lists list items, tables
//! tables (a `#+CAPTION:` their caption), source and example blocks code;
//! property drawers, planning lines, comments and `COMMENT` subtrees add
//! nothing. `#+TITLE:`, `#+AUTHOR:`, `#+DATE:`, `#+LANGUAGE:` and
//! `#+KEYWORDS:` are metadata.

use crate::markup::{MAX_DEPTH, REACH};
use folio_core::{Block, BlockKind, StructuredText};
use serde_json::Map;

/// Extracts an Org document. Never fails.
pub fn extract(text: &str) -> StructuredText {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut reader = Reader::default();
    reader.read(&lines);
    let title = reader
        .metadata
        .get("title")
        .and_then(|t| t.as_str())
        .map(str::to_string);
    let mut blocks = reader.blocks;
    if let Some(title) = &title {
        // The title heads the document, its headlines under it.
        for block in &mut blocks {
            if let BlockKind::Heading(level) = block.kind {
                block.kind = BlockKind::Heading((level + 1).min(6));
            }
        }
        blocks.insert(0, Block::new(BlockKind::Heading(1), title.as_str(), None));
    }
    StructuredText {
        title,
        blocks,
        metadata: reader.metadata,
        ..Default::default()
    }
}

/// TODO keywords a headline may start with.
const KEYWORDS: &[&str] = &[
    "TODO",
    "DONE",
    "NEXT",
    "WAITING",
    "HOLD",
    "CANCELLED",
    "CANCELED",
    "STARTED",
    "SOMEDAY",
];

#[derive(Default)]
struct Reader {
    /// How deep the block being read is nested.
    depth: usize,
    blocks: Vec<Block>,
    metadata: Map<String, serde_json::Value>,
    /// A `#+CAPTION:` waiting for the table (or figure) it precedes.
    caption: Option<String>,
    /// Custom TODO keywords (`#+TODO: TODO FEEDBACK | DONE`).
    keywords: Vec<String>,
}

impl Reader {
    fn push(&mut self, kind: BlockKind, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            self.blocks.push(Block::new(kind, text, None));
        }
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
        let mut paragraph: Vec<String> = Vec::new();
        // Whether `paragraph` is a list item's text.
        let mut item = false;
        // A `COMMENT` subtree is skipped down to a headline this deep.
        let mut skipping: Option<usize> = None;
        while i < lines.len() {
            let line = lines[i];
            let trimmed = line.trim_start();
            if let Some(level) = headline_level(line) {
                if skipping.is_some_and(|depth| level > depth) {
                    i += 1;
                    continue;
                }
                skipping = None;
                self.end(&mut paragraph, &mut item);
                let text = self.headline(&line[level..]);
                if text.starts_with("COMMENT") && (text.len() == 7 || text[7..].starts_with(' ')) {
                    skipping = Some(level);
                } else {
                    let text = inline(&text);
                    self.push(BlockKind::Heading(level.min(6) as u8), &text);
                }
                i += 1;
                continue;
            }
            if skipping.is_some() {
                i += 1;
                continue;
            }
            if trimmed.is_empty() {
                self.end(&mut paragraph, &mut item);
                i += 1;
                continue;
            }
            if let Some(rest) = keyword_line(trimmed) {
                self.end(&mut paragraph, &mut item);
                i = self.keyword(lines, i, rest);
                continue;
            }
            if trimmed == "#" || trimmed.starts_with("# ") {
                i += 1;
                continue;
            }
            if is_drawer_start(trimmed) {
                self.end(&mut paragraph, &mut item);
                let end = lines[i + 1..]
                    .iter()
                    .position(|l| l.trim().eq_ignore_ascii_case(":END:"))
                    .map_or(i + 1, |p| i + 1 + p + 1);
                i = end;
                continue;
            }
            if ["SCHEDULED:", "DEADLINE:", "CLOSED:"]
                .iter()
                .any(|p| trimmed.starts_with(p))
            {
                i += 1;
                continue;
            }
            if trimmed.starts_with('|') {
                self.end(&mut paragraph, &mut item);
                let end = lines[i..]
                    .iter()
                    .position(|l| !l.trim_start().starts_with('|'))
                    .map_or(lines.len(), |p| i + p);
                self.table(&lines[i..end]);
                i = end;
                continue;
            }
            if trimmed.starts_with("+-") && trimmed.ends_with('+') {
                // A table.el table: its cells, as a table.
                self.end(&mut paragraph, &mut item);
                let end = lines[i..]
                    .iter()
                    .position(|l| {
                        let t = l.trim_start();
                        !(t.starts_with('|') || t.starts_with('+'))
                    })
                    .map_or(lines.len(), |p| i + p);
                let rows: Vec<&str> = lines[i..end]
                    .iter()
                    .copied()
                    .filter(|l| l.trim_start().starts_with('|'))
                    .collect();
                self.table(&rows);
                i = end;
                continue;
            }
            if trimmed == ":" || trimmed.starts_with(": ") {
                // Fixed-width lines.
                self.end(&mut paragraph, &mut item);
                let end = lines[i..]
                    .iter()
                    .position(|l| {
                        let t = l.trim_start();
                        !(t == ":" || t.starts_with(": "))
                    })
                    .map_or(lines.len(), |p| i + p);
                let code: Vec<&str> = lines[i..end]
                    .iter()
                    .map(|l| {
                        let t = l.trim_start();
                        t.strip_prefix(": ").unwrap_or("")
                    })
                    .collect();
                self.push(BlockKind::Code, &code.join("\n"));
                i = end;
                continue;
            }
            if let Some(rest) = list_item(line) {
                self.end(&mut paragraph, &mut item);
                item = true;
                paragraph.push(rest.to_string());
                i += 1;
                continue;
            }
            if self.caption.is_some() && trimmed.starts_with("[[") {
                // A captioned link alone on its line: a figure.
                let caption =
                    crate::markup::figure_caption(&self.caption.take().unwrap_or_default());
                self.push(BlockKind::Paragraph, &caption);
                i += 1;
                continue;
            }
            paragraph.push(trimmed.to_string());
            i += 1;
        }
        self.end(&mut paragraph, &mut item);
    }

    fn end(&mut self, paragraph: &mut Vec<String>, item: &mut bool) {
        if !paragraph.is_empty() {
            let text = inline(&paragraph.join("\n"));
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

    /// A headline's text without its keyword, priority and tags.
    fn headline(&self, rest: &str) -> String {
        let mut text = rest.trim();
        if let Some((first, after)) = text.split_once(' ').or(Some((text, "")))
            && (KEYWORDS.contains(&first) || self.keywords.iter().any(|k| k == first))
        {
            text = after.trim_start();
        }
        if text.starts_with("[#") && text.get(3..4) == Some("]") {
            text = text[4..].trim_start();
        }
        // Tags: `:work:urgent:` at the end.
        if let Some(space) = text.rfind([' ', '\t']) {
            let tail = &text[space + 1..];
            if tail.len() > 2
                && tail.starts_with(':')
                && tail.ends_with(':')
                && tail[1..tail.len() - 1].split(':').all(|t| {
                    !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || "_@#%".contains(c))
                })
            {
                text = text[..space].trim_end();
            }
        }
        text.to_string()
    }

    /// A `#+KEY:` line or a `#+BEGIN_…` block at line `i`: its end.
    fn keyword(&mut self, lines: &[&str], i: usize, rest: &str) -> usize {
        let (key, value) = rest.split_once(':').unwrap_or((rest, ""));
        let (key, value) = (key.to_ascii_lowercase(), value.trim());
        if let Some(kind) = key.strip_prefix("begin_") {
            let kind = kind.split_whitespace().next().unwrap_or("").to_string();
            let end_marker = format!("#+end_{kind}");
            let end = lines[i + 1..]
                .iter()
                .position(|l| l.trim().to_ascii_lowercase().starts_with(&end_marker))
                .map_or(lines.len(), |p| i + 1 + p);
            let inner = &lines[(i + 1).min(end)..end];
            match kind.as_str() {
                "src" | "example" => {
                    let code = crate::markup::dedent(inner);
                    // `,*` and `,#+` escape lines inside a block.
                    let code: Vec<String> = code
                        .iter()
                        .map(|l| match l.strip_prefix(',') {
                            Some(rest) if rest.starts_with('*') || rest.starts_with("#+") => {
                                rest.to_string()
                            }
                            _ => l.to_string(),
                        })
                        .collect();
                    self.push(BlockKind::Code, code.join("\n").trim_matches('\n'));
                }
                "comment" | "export" => {}
                "verse" => {
                    let text = inline(&crate::markup::dedent(inner).join("\n"));
                    self.push(BlockKind::Paragraph, &text);
                }
                _ => {
                    // Quote, center and special blocks: their content.
                    self.read(inner);
                }
            }
            return end + 1;
        }
        let value = inline(value);
        match key.as_str() {
            "title" => {
                let title = match self.metadata.get("title").and_then(|t| t.as_str()) {
                    Some(before) => format!("{before} {value}"),
                    None => value,
                };
                self.metadata.insert("title".into(), title.into());
            }
            "author" => {
                let names: Vec<serde_json::Value> = value
                    .split([',', ';'])
                    .flat_map(|n| n.split(" and "))
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(|n| n.to_string().into())
                    .collect();
                if !names.is_empty() {
                    self.metadata.insert("authors".into(), names.into());
                }
            }
            "date" => crate::markup::set_date(&mut self.metadata, &value),
            "language" | "keywords" | "subtitle" | "description" | "email" if !value.is_empty() => {
                self.metadata.insert(key, value.into());
            }
            "caption" => {
                // Affiliated to what follows; right under a table that has
                // none (as pandoc writes it), the table's.
                let under_table = i > 0 && lines[i - 1].trim_start().starts_with('|');
                match self.blocks.last_mut() {
                    Some(table)
                        if under_table
                            && table.kind == BlockKind::Table
                            && table.caption.is_none() =>
                    {
                        table.set_caption(&value)
                    }
                    _ => self.caption = Some(value),
                }
            }
            "todo" | "seq_todo" | "typ_todo" => {
                self.keywords.extend(
                    value
                        .split_whitespace()
                        .filter(|k| *k != "|")
                        .map(|k| k.split('(').next().unwrap_or(k).to_string()),
                );
            }
            _ => {}
        }
        i + 1
    }

    /// A table's lines (each starting with `|`): rule lines go, a table
    /// formula line (`#+TBLFM:`) is not among them.
    fn table(&mut self, lines: &[&str]) {
        let rows: Vec<Vec<String>> = lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.starts_with("|-") && !l.starts_with("|="))
            .map(|l| {
                let inner = l.strip_prefix('|').unwrap_or(l);
                let inner = inner.strip_suffix('|').unwrap_or(inner);
                inner.split('|').map(|c| inline(c.trim())).collect()
            })
            .filter(|r: &Vec<String>| r.iter().any(|c| !c.is_empty()))
            .collect();
        crate::markup::push_table(&mut self.blocks, rows, self.caption.take());
    }
}

/// The stars of a headline (`** Title`), if the line is one.
fn headline_level(line: &str) -> Option<usize> {
    let stars = line.len() - line.trim_start_matches('*').len();
    (stars > 0 && (line.len() == stars || line[stars..].starts_with(' '))).then_some(stars)
}

/// The text after `#+` of a keyword or block line.
fn keyword_line(trimmed: &str) -> Option<&str> {
    let rest = trimmed.strip_prefix("#+")?;
    rest.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        .then_some(rest)
}

fn is_drawer_start(trimmed: &str) -> bool {
    trimmed.len() > 2
        && trimmed.starts_with(':')
        && trimmed.ends_with(':')
        && trimmed[1..trimmed.len() - 1]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !trimmed.eq_ignore_ascii_case(":END:")
}

/// A plain list item's text (after `- `, `+ `, ` * `, `1. `, `1) `, a
/// checkbox; a description item's `term :: text` as `term: text`).
fn list_item(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let indented = trimmed.len() < line.len();
    let rest = if let Some(rest) = trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("+ "))
        .or_else(|| indented.then(|| trimmed.strip_prefix("* ")).flatten())
    {
        rest
    } else {
        let digits = trimmed
            .find(|c: char| !c.is_ascii_alphanumeric())
            .filter(|&n| n > 0 && n <= 3)?;
        let after = &trimmed[digits..];
        let label = &trimmed[..digits];
        if !(label.chars().all(|c| c.is_ascii_digit()) || label.len() == 1) {
            return None;
        }
        after
            .strip_prefix(". ")
            .or_else(|| after.strip_prefix(") "))?
    };
    let rest = rest.trim_start();
    Some(
        ["[ ] ", "[X] ", "[x] ", "[-] "]
            .iter()
            .find_map(|b| rest.strip_prefix(b))
            .unwrap_or(rest),
    )
}

/// The text of Org inline markup: links by their description, emphasis
/// markers gone, footnote references gone, `term :: text` as `term: text`.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        out.push_str(&rest[..start]);
        let link = &rest[start + 2..];
        let Some(end) = link.find("]]") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &link[..end];
        let shown = match inner.split_once("][") {
            Some((_, description)) => description,
            None => inner.strip_prefix("file:").unwrap_or(inner),
        };
        out.push_str(shown);
        rest = &link[end + 2..];
    }
    out.push_str(rest);
    let out = strip_footnote_references(&out);
    let out = strip_emphasis(&out);
    out.replacen(" :: ", ": ", 1)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn strip_footnote_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[fn:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 4..];
        match after.find(']') {
            Some(end) => {
                // An inline footnote (`[fn::text]`, `[fn:name:text]`) keeps
                // its text.
                let inner = &after[..end];
                if let Some((_, note)) = inner.split_once(':') {
                    out.push_str(" (");
                    out.push_str(note.trim());
                    out.push(')');
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// `*bold*`, `/italic/`, `_underline_`, `=verbatim=`, `~code~`,
/// `+strike+` without their markers, where Org reads them as markup: the
/// opening marker after a space, a quote or a bracket (or at the start),
/// before a non-space; the closing one after a non-space, before a space
/// or punctuation.
fn strip_emphasis(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let opens = matches!(c, '*' | '/' | '_' | '=' | '~' | '+')
            && (i == 0 || chars[i - 1].is_whitespace() || "({'\"-".contains(chars[i - 1]))
            && chars
                .get(i + 1)
                .is_some_and(|n| !n.is_whitespace() && *n != c);
        if opens
            && let Some(close) = (i + 2..chars.len().min(i + REACH)).find(|&j| {
                chars[j] == c
                    && !chars[j - 1].is_whitespace()
                    && chars
                        .get(j + 1)
                        .is_none_or(|n| n.is_whitespace() || "-.,;:!?')}\"[".contains(*n))
            })
            && !chars[i + 1..close].contains(&'\n')
        {
            out.extend(&chars[i + 1..close]);
            i = close + 1;
            continue;
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
    fn an_org_file_reads_with_its_outline_lists_tables_and_code() {
        let source = "\
#+TITLE: Heat pump notes
#+AUTHOR: Jane Doe, John Roe
#+DATE: <2024-03-01 Fri>
#+LANGUAGE: de
#+TODO: TODO FEEDBACK | DONE

* TODO [#A] Measurements                                          :lab:cop:
  SCHEDULED: <2024-03-04 Mon>
  :PROPERTIES:
  :ID:       1234
  :END:
The *coefficient* of /performance/ is =cop= [[https://example.org][per norm]][fn:1].
# a comment
- [X] first reading
- second :: reading
** FEEDBACK Table
#+CAPTION: Yield by site
| Site   | 2021 |
|--------+------|
| Kassel |  3.4 |
#+TBLFM: $2=$1
#+BEGIN_SRC python
print(cop(3.5))
#+END_SRC
* COMMENT Private
secret words
** Still private
* Done
: fixed width
";
        let text = extract(source);
        assert_eq!(text.title.as_deref(), Some("Heat pump notes"));
        assert_eq!(
            text.metadata["authors"],
            serde_json::json!(["Jane Doe", "John Roe"])
        );
        assert_eq!(text.metadata["language"], "de");
        assert_eq!(text.metadata["year"], 2024);
        assert_eq!(
            texts(&text),
            [
                (BlockKind::Heading(1), "Heat pump notes"),
                (BlockKind::Heading(2), "Measurements"),
                (
                    BlockKind::Paragraph,
                    "The coefficient of performance is cop per norm."
                ),
                (BlockKind::ListItem, "first reading"),
                (BlockKind::ListItem, "second: reading"),
                (BlockKind::Heading(3), "Table"),
                (
                    BlockKind::Table,
                    "| Site | 2021 |\n| --- | --- |\n| Kassel | 3.4 |"
                ),
                (BlockKind::Code, "print(cop(3.5))"),
                (BlockKind::Heading(2), "Done"),
                (BlockKind::Code, "fixed width"),
            ]
        );
        assert_eq!(text.blocks[6].caption.as_deref(), Some("Yield by site"));
        assert!(!text.blocks.iter().any(|b| b.text.contains("secret")));
    }

    #[test]
    fn odd_input_reads_without_failing() {
        for source in [
            "",
            "*",
            "* ",
            "#+",
            "#+BEGIN_SRC",
            "|",
            "|-",
            "[[",
            "[fn:",
            ":A:",
            "- ",
            "1.",
        ] {
            let _ = extract(source);
        }
        assert_eq!(
            strip_emphasis("a*b c* 2/3 and 1/2 /x/"),
            "a*b c* 2/3 and 1/2 x"
        );
    }
}
