//! reStructuredText (Sphinx and docutils documents): section titles (over-
//! and underlined, levels in the order their styles first appear) become
//! headings, bullet, enumerated and definition lists list items, grid and
//! simple tables, `csv-table` and `list-table` tables (a `table` directive's
//! title their caption), literal blocks and `code-block` code, a figure's
//! caption a paragraph. Admonitions and other directives are read for their
//! content; comments, targets, `toctree` and `include` add nothing. The
//! bibliographic fields at the top (`:Author:`, `:Date:`) are metadata.

use std::collections::HashMap;

use crate::markup::{MAX_DEPTH, REACH};
use folio_core::{Block, BlockKind, StructuredText};
use serde_json::Map;

/// Extracts a reStructuredText document. Never fails: what it does not
/// recognise is read as paragraphs.
pub fn extract(text: &str) -> StructuredText {
    let owned: Vec<String> = text.lines().map(|l| expand_tabs(l.trim_end())).collect();
    let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut reader = Reader {
        substitutions: substitutions(&lines),
        ..Default::default()
    };
    let body = reader.fields(&lines);
    reader.read(&body, true);
    let title = reader
        .metadata
        .get("title")
        .and_then(|t| t.as_str())
        .map(str::to_string)
        .or_else(|| {
            reader
                .blocks
                .iter()
                .find(|b| b.kind == BlockKind::Heading(1))
                .map(|b| b.text.clone())
        });
    StructuredText {
        title,
        blocks: reader.blocks,
        metadata: reader.metadata,
        ..Default::default()
    }
}

/// A line with its tabs as spaces to the next multiple of 8, as docutils
/// reads them.
fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if c == '\t' {
            let pad = 8 - out.chars().count() % 8;
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.push(c);
        }
    }
    out
}

/// Substitution definitions: `.. |name| replace:: text` by their text, any
/// other (`.. |badge| image:: …`) by nothing.
fn substitutions(lines: &[&str]) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix(".. |")
            && let Some((name, rest)) = rest.split_once('|')
        {
            let text = rest.trim_start().strip_prefix("replace::").unwrap_or("");
            map.insert(name.to_string(), text.trim().to_string());
        }
    }
    map
}

#[derive(Default)]
struct Reader {
    /// How deep the block being read is nested.
    depth: usize,
    blocks: Vec<Block>,
    metadata: Map<String, serde_json::Value>,
    /// Section title styles (adornment character, overlined) in the order
    /// they first appear: a style's place is its level.
    styles: Vec<(char, bool)>,
    substitutions: HashMap<String, String>,
    /// The caption a `table` directive gives the table it holds.
    caption: Option<String>,
}

/// Characters that may adorn a section title.
fn is_adornment(line: &str) -> Option<char> {
    let first = line.chars().next()?;
    (line.len() >= 2
        && first.is_ascii_punctuation()
        && line.chars().all(|c| c == first)
        && !matches!(first, '.' | ',' | ';' | ')' | '(' | '[' | ']' | '{' | '}'))
    .then_some(first)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The marker of a bullet or enumerated list item and the width it takes.
fn list_marker(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    let lead = line.len() - trimmed.len();
    let mut chars = trimmed.chars();
    let first = chars.next()?;
    if matches!(first, '*' | '-' | '+' | '•' | '‣' | '⁃') {
        let rest = &trimmed[first.len_utf8()..];
        if rest.starts_with(' ') || rest.is_empty() {
            let width = first.len_utf8() + rest.len() - rest.trim_start().len();
            return Some(lead + width.max(first.len_utf8() + 1));
        }
        return None;
    }
    // `1.`, `#.`, `a)`, `(iv)`.
    let open = trimmed.starts_with('(');
    let body = if open { &trimmed[1..] } else { trimmed };
    let label_len = body
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '#')
        .unwrap_or(body.len());
    if label_len == 0 || label_len > 4 {
        return None;
    }
    let label = &body[..label_len];
    let numeric = label.chars().all(|c| c.is_ascii_digit()) || label == "#";
    let letter = label.len() == 1 && label.chars().all(|c| c.is_ascii_alphabetic());
    let roman = label.chars().all(|c| "ivxlcdmIVXLCDM".contains(c));
    if !(numeric || letter || roman) {
        return None;
    }
    let close = body[label_len..].chars().next()?;
    let ok = if open {
        close == ')'
    } else {
        close == '.' || close == ')'
    };
    if !ok {
        return None;
    }
    let after = &body[label_len + 1..];
    if !(after.starts_with(' ') || after.is_empty()) {
        return None;
    }
    let width = usize::from(open) + label_len + 1 + (after.len() - after.trim_start().len());
    Some(lead + width.max(usize::from(open) + label_len + 2))
}

/// The lines of `lines` from `start` that belong to an indented block
/// deeper than `base`: up to the first non-blank line at `base` or less.
fn indented_block(lines: &[&str], start: usize, base: usize) -> usize {
    let mut end = start;
    let mut last = start;
    while end < lines.len() {
        let line = lines[end];
        if !line.trim().is_empty() {
            if indent(line) <= base {
                break;
            }
            last = end + 1;
        }
        end += 1;
    }
    last
}

use crate::markup::dedent;

impl Reader {
    /// Reads the bibliographic fields a document opens with (after its
    /// title) into metadata; returns the lines without them.
    fn fields<'a>(&mut self, lines: &[&'a str]) -> Vec<&'a str> {
        // A title and subtitle may come first: fields follow them.
        let mut i = 0;
        let skip_blank = |i: &mut usize| {
            while *i < lines.len() && lines[*i].trim().is_empty() {
                *i += 1;
            }
        };
        skip_blank(&mut i);
        let mut start = i;
        for _ in 0..2 {
            let j = match title_at(lines, start) {
                Some((_, _, next)) => next,
                None => break,
            };
            let mut j = j;
            skip_blank(&mut j);
            start = j;
        }
        let mut j = start;
        let mut found = false;
        while j < lines.len() {
            let line = lines[j];
            let Some(rest) = line.strip_prefix(':') else {
                break;
            };
            let Some((name, value)) = rest
                .split_once(": ")
                .or_else(|| rest.strip_suffix(':').map(|n| (n, "")))
            else {
                break;
            };
            let mut value = value.trim().to_string();
            j += 1;
            while j < lines.len() && indent(lines[j]) > 0 && !lines[j].trim().is_empty() {
                value.push(' ');
                value.push_str(lines[j].trim());
                j += 1;
            }
            let value = self.inline(&value);
            let key = name.trim().to_lowercase();
            match key.as_str() {
                "author" | "authors" => {
                    let names: Vec<String> = value
                        .split([';', ','])
                        .map(|n| n.trim().to_string())
                        .filter(|n| !n.is_empty())
                        .collect();
                    let mut all: Vec<serde_json::Value> = self
                        .metadata
                        .get("authors")
                        .and_then(|a| a.as_array().cloned())
                        .unwrap_or_default();
                    all.extend(names.into_iter().map(Into::into));
                    self.metadata.insert("authors".into(), all.into());
                }
                "date" => crate::markup::set_date(&mut self.metadata, &value),
                "language" | "lang" | "keywords" | "version" | "organization" | "status"
                | "copyright" | "contact" | "address" | "revision" | "abstract" | "dedication"
                | "description" => {
                    self.metadata.insert(key, value.into());
                }
                _ => {}
            }
            found = true;
        }
        // The body keeps the title before the fields.
        let mut kept: Vec<&str> = lines[..start].to_vec();
        kept.extend_from_slice(&lines[if found { j } else { start }..]);
        kept
    }

    fn push(&mut self, kind: BlockKind, text: String) {
        let text = text.trim().to_string();
        if !text.is_empty() {
            self.blocks.push(Block::new(kind, text, None));
        }
    }

    fn push_table(&mut self, rows: Vec<Vec<String>>) {
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|r| r.iter().map(|c| self.inline(c)).collect::<Vec<String>>())
            .filter(|r| r.iter().any(|c| !c.is_empty()))
            .collect();
        crate::markup::push_table(&mut self.blocks, rows, self.caption.take());
    }

    /// Reads `lines`; section titles count only where `sections` (a
    /// directive's content holds none).
    fn read(&mut self, lines: &[&str], sections: bool) {
        if self.depth >= MAX_DEPTH {
            let text: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
            self.push(BlockKind::Paragraph, text.join("\n"));
            return;
        }
        self.depth += 1;
        self.read_lines(lines, sections);
        self.depth -= 1;
    }

    fn read_lines(&mut self, lines: &[&str], sections: bool) {
        let mut i = 0;
        let mut paragraph: Vec<&str> = Vec::new();
        while i < lines.len() {
            let line = lines[i];
            if line.trim().is_empty() {
                i += 1;
                if let Some(next) = self.end_paragraph(&mut paragraph, lines, i) {
                    i = next;
                }
                continue;
            }
            if paragraph.is_empty() {
                if sections && let Some((text, style, next)) = title_at(lines, i) {
                    let level = match self.styles.iter().position(|s| *s == style) {
                        Some(p) => p + 1,
                        None => {
                            self.styles.push(style);
                            self.styles.len()
                        }
                    };
                    let text = self.inline(text);
                    self.push(BlockKind::Heading(level.min(6) as u8), text);
                    i = next;
                    continue;
                }
                if let Some(next) = self.block_at(lines, i) {
                    i = next;
                    continue;
                }
            }
            paragraph.push(line.trim());
            i += 1;
            // A paragraph's text is at one indentation: an indented line
            // right after a first line makes a definition list item.
            if paragraph.len() == 1
                && i < lines.len()
                && !lines[i].trim().is_empty()
                && indent(lines[i]) > indent(line)
                && !line.trim_end().ends_with("::")
            {
                let end = indented_block(lines, i, indent(line));
                let body = dedent(&lines[i..end]);
                let term = self.inline(paragraph[0]);
                paragraph.clear();
                let before = self.blocks.len();
                self.read(&body, false);
                self.as_item(before, Some(&term));
                i = end;
            }
        }
        self.end_paragraph(&mut paragraph, lines, lines.len());
    }

    /// Ends a paragraph; a paragraph ending in `::` introduces the literal
    /// block at `next`, whose end is returned.
    fn end_paragraph(
        &mut self,
        paragraph: &mut Vec<&str>,
        lines: &[&str],
        next: usize,
    ) -> Option<usize> {
        if paragraph.is_empty() {
            return None;
        }
        let mut text = paragraph.join("\n");
        paragraph.clear();
        let literal = text.ends_with("::");
        if literal {
            text.truncate(text.len() - 2);
            if !text.ends_with([' ', '\n']) && !text.is_empty() {
                text.push(':');
            }
        }
        let text = self.inline(&text);
        self.push(BlockKind::Paragraph, text);
        if !literal {
            return None;
        }
        let mut start = next;
        while start < lines.len() && lines[start].trim().is_empty() {
            start += 1;
        }
        let base = lines
            .get(start)
            .map_or(0, |l| indent(l))
            .min(indent(lines.get(next.saturating_sub(2)).copied().unwrap_or("")) + 1);
        if start >= lines.len() || indent(lines[start]) == 0 {
            return None;
        }
        let end = indented_block(lines, start, base.saturating_sub(1));
        let code = dedent(&lines[start..end]).join("\n");
        self.push(BlockKind::Code, code);
        Some(end)
    }

    /// A block starting at line `i` that is no paragraph: its end.
    fn block_at(&mut self, lines: &[&str], i: usize) -> Option<usize> {
        let line = lines[i];
        let trimmed = line.trim_start();
        let base = indent(line);
        if base > 0 {
            // A block quote: its content, read as paragraphs.
            let end = indented_block(lines, i, base - 1);
            let body = dedent(&lines[i..end]);
            self.read(&body, false);
            return Some(end);
        }
        if let Some(rest) = trimmed.strip_prefix("..")
            && (rest.is_empty() || rest.starts_with(' '))
        {
            return Some(self.explicit(lines, i, rest.trim()));
        }
        if trimmed.starts_with("__ ") {
            // An anonymous target.
            return Some(indented_block(lines, i + 1, 0).max(i + 1));
        }
        if trimmed.starts_with("+-") || trimmed.starts_with("+=") {
            return Some(self.grid_table(lines, i));
        }
        if is_simple_table_border(trimmed) {
            return Some(self.simple_table(lines, i));
        }
        if is_adornment(trimmed).is_some()
            && trimmed.len() >= 4
            && lines.get(i + 1).is_none_or(|l| l.trim().is_empty())
        {
            // A transition.
            return Some(i + 1);
        }
        if trimmed.starts_with(">>> ") {
            let mut end = i;
            while end < lines.len() && !lines[end].trim().is_empty() {
                end += 1;
            }
            self.push(BlockKind::Code, lines[i..end].join("\n"));
            return Some(end);
        }
        if let Some(rest) = trimmed
            .strip_prefix("| ")
            .or(trimmed.strip_prefix('|').filter(|r| r.is_empty()))
        {
            // A line block: each line as written.
            let mut text = vec![rest];
            let mut end = i + 1;
            while end < lines.len() {
                match lines[end].trim_start().strip_prefix("| ") {
                    Some(rest) => text.push(rest),
                    None if lines[end].starts_with("  ") && !lines[end].trim().is_empty() => {
                        text.push(lines[end].trim())
                    }
                    None => break,
                }
                end += 1;
            }
            let text = self.inline(&text.join("\n"));
            self.push(BlockKind::Paragraph, text);
            return Some(end);
        }
        if let Some(width) = list_marker(line) {
            return Some(self.list_item(lines, i, width));
        }
        None
    }

    /// A list item whose marker takes `width` columns: its first paragraph
    /// a list item, nested lists their own.
    fn list_item(&mut self, lines: &[&str], i: usize, width: usize) -> usize {
        let first = lines[i].get(width..).unwrap_or("").trim_start();
        let end = indented_block(lines, i + 1, width.saturating_sub(1));
        // Lines continuing the item at less than its width still belong.
        let mut body = vec![first];
        for line in &lines[i + 1..end] {
            body.push(line.get(width..).unwrap_or_else(|| line.trim_start()));
        }
        let before = self.blocks.len();
        self.read(&body, false);
        self.as_item(before, None);
        end
    }

    /// The first paragraph read since `before` becomes a list item
    /// (headed by `term`, a definition list's).
    fn as_item(&mut self, before: usize, term: Option<&str>) {
        match self.blocks.get_mut(before) {
            Some(block) if block.kind == BlockKind::Paragraph => {
                block.kind = BlockKind::ListItem;
                if let Some(term) = term {
                    block.text = format!("{term}: {}", block.text);
                }
            }
            _ => {
                if let Some(term) = term {
                    self.blocks
                        .insert(before, Block::new(BlockKind::ListItem, term, None));
                }
            }
        }
    }

    /// An explicit markup block (`.. `): a directive, footnote, target,
    /// substitution or comment. Returns its end.
    fn explicit(&mut self, lines: &[&str], i: usize, rest: &str) -> usize {
        let end = indented_block(lines, i + 1, 0);
        let body = dedent(&lines[i + 1..end]);
        if let Some(label_end) = rest.strip_prefix('[').and_then(|r| r.find(']'))
            && !rest.is_empty()
        {
            // A footnote or citation: its text.
            let label = &rest[1..1 + label_end];
            let text = rest[label_end + 2..].trim();
            let mut all = vec![text];
            all.extend(body.iter().copied());
            let text = self.inline(&all.join("\n"));
            let text = if label
                .chars()
                .all(|c| c.is_ascii_digit() || c == '#' || c == '*')
            {
                text
            } else {
                format!("[{label}] {text}")
            };
            self.push(BlockKind::Paragraph, text);
            return end;
        }
        if rest.starts_with('_') || rest.starts_with('|') {
            return end;
        }
        let Some((name, argument)) = rest.split_once("::") else {
            return end; // A comment.
        };
        let name = name.trim();
        if name.is_empty() || name.contains(' ') {
            return end;
        }
        let argument = argument.trim();
        // Options (`:name: value`) lead the content.
        let mut options: Vec<(&str, &str)> = Vec::new();
        let mut content_start = 0;
        let mut argument_lines = vec![argument];
        for line in &body {
            if line.trim().is_empty() {
                break;
            }
            if let Some(option) = line.strip_prefix(':')
                && let Some((key, value)) = option.split_once(':')
            {
                options.push((key, value.trim()));
            } else if options.is_empty() {
                argument_lines.push(line.trim());
            } else {
                break;
            }
            content_start += 1;
        }
        let argument = argument_lines.join(" ");
        let content: Vec<&str> = body[content_start..].to_vec();
        let content = dedent(&content);
        let local = name.rsplit(':').next().unwrap_or(name);
        match local {
            "code" | "code-block" | "sourcecode" | "parsed-literal" | "literal" | "doctest"
            | "testcode" | "testoutput" | "ipython" | "jupyter-execute" => {
                let code = content.join("\n");
                self.push(BlockKind::Code, code.trim_matches('\n').to_string());
            }
            "math" => {
                let mut text = vec![argument.as_str()];
                text.extend(content.iter().copied());
                self.push(BlockKind::Paragraph, text.join("\n"));
            }
            "table" => {
                self.caption = (!argument.is_empty()).then(|| self.inline(&argument));
                self.read(&content, false);
                self.caption = None;
            }
            "csv-table" => {
                self.caption = (!argument.is_empty()).then(|| self.inline(&argument));
                let mut rows = Vec::new();
                let delimiter =
                    options
                        .iter()
                        .find(|(k, _)| *k == "delim")
                        .map_or(b',', |(_, v)| match *v {
                            "tab" => b'\t',
                            "space" => b' ',
                            v => v.bytes().next().unwrap_or(b','),
                        });
                if let Some((_, header)) = options.iter().find(|(k, _)| *k == "header") {
                    rows.extend(csv_rows(header, b','));
                }
                rows.extend(csv_rows(&content.join("\n"), delimiter));
                self.push_table(rows);
            }
            "list-table" => {
                self.caption = (!argument.is_empty()).then(|| self.inline(&argument));
                let rows = list_table_rows(&content);
                self.push_table(rows);
            }
            "figure" => {
                // The caption is the content's first paragraph; the legend
                // follows.
                let before = self.blocks.len();
                self.read(&content, false);
                if let Some(caption) = self.blocks.get_mut(before)
                    && caption.kind == BlockKind::Paragraph
                {
                    caption.text = crate::markup::figure_caption(&caption.text);
                }
            }
            "image" | "toctree" | "contents" | "sectnum" | "index" | "include"
            | "literalinclude" | "raw" | "meta" | "highlight" | "default-role" | "role"
            | "tabularcolumns" | "autosummary" | "currentmodule" | "module" | "automodule"
            | "autoclass" | "autofunction" | "automethod" | "autoattribute" | "autodata"
            | "autoexception" | "target-notes" | "footer" | "header" | "class" => {}
            "title" => {
                let title = self.inline(&argument);
                self.metadata.insert("title".into(), title.into());
            }
            _ => {
                // Admonitions, topics, Sphinx object descriptions and the
                // rest: the argument (a title, a signature), then content.
                if !argument.is_empty()
                    && !matches!(
                        local,
                        "versionadded" | "versionchanged" | "deprecated" | "only" | "container"
                    )
                {
                    let argument = self.inline(&argument);
                    self.push(BlockKind::Paragraph, argument);
                }
                self.read(&content, false);
            }
        }
        end
    }

    /// A grid table at line `i`: its end.
    fn grid_table(&mut self, lines: &[&str], i: usize) -> usize {
        let mut end = i;
        while end < lines.len() {
            let t = lines[end].trim();
            if !(t.starts_with('+') || t.starts_with('|')) {
                break;
            }
            end += 1;
        }
        let lead = indent(lines[i]);
        let border = &lines[i][lead..];
        let columns: Vec<usize> = border
            .char_indices()
            .filter(|(_, c)| *c == '+')
            .map(|(p, _)| p)
            .collect();
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut cells: Vec<String> = vec![String::new(); columns.len().saturating_sub(1)];
        let mut any = false;
        for line in &lines[i + 1..end] {
            let line = line.get(lead..).unwrap_or("");
            if line.starts_with('+') {
                if any {
                    rows.push(std::mem::take(&mut cells));
                    cells = vec![String::new(); columns.len().saturating_sub(1)];
                }
                any = false;
                continue;
            }
            let chars: Vec<char> = line.chars().collect();
            for (c, window) in columns.windows(2).enumerate() {
                let text = char_slice(&chars, window[0] + 1, window[1]);
                let text = text.trim_end_matches('|').trim();
                if !text.is_empty() {
                    if !cells[c].is_empty() {
                        cells[c].push(' ');
                    }
                    cells[c].push_str(text);
                    any = true;
                }
            }
        }
        if any {
            rows.push(cells);
        }
        self.push_table(rows);
        end
    }

    /// A simple table (`=====  =====` borders) at line `i`: its end.
    fn simple_table(&mut self, lines: &[&str], i: usize) -> usize {
        let border = lines[i].trim_end();
        let mut columns: Vec<(usize, usize)> = Vec::new();
        let mut start = None;
        for (p, c) in border.char_indices() {
            match (c, start) {
                ('=', None) => start = Some(p),
                (' ', Some(s)) => {
                    columns.push((s, p));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            columns.push((s, usize::MAX));
        }
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut borders = 1;
        let mut end = i + 1;
        while end < lines.len() {
            let line = lines[end];
            let trimmed = line.trim();
            if is_simple_table_border(trimmed) {
                borders += 1;
                end += 1;
                // The closing border: a blank line or the text's end after.
                if lines.get(end).is_none_or(|l| l.trim().is_empty()) && borders >= 2 {
                    break;
                }
                continue;
            }
            if trimmed.is_empty() {
                end += 1;
                continue;
            }
            if trimmed.chars().all(|c| c == '-' || c == ' ') {
                end += 1;
                continue;
            }
            let chars: Vec<char> = line.chars().collect();
            let cells: Vec<String> = columns
                .iter()
                .enumerate()
                .map(|(c, (s, e))| {
                    let e = if c + 1 == columns.len() {
                        usize::MAX
                    } else {
                        *e
                    };
                    char_slice(&chars, *s, e).trim().to_string()
                })
                .collect();
            // A line whose first column is blank continues the row above.
            match rows.last_mut() {
                Some(last) if cells.first().is_some_and(String::is_empty) => {
                    for (cell, more) in last.iter_mut().zip(cells) {
                        if !more.is_empty() {
                            cell.push(' ');
                            cell.push_str(&more);
                        }
                    }
                }
                _ => rows.push(cells),
            }
            end += 1;
        }
        self.push_table(rows);
        end
    }

    /// The text of inline markup: roles, references, literals, emphasis,
    /// substitutions and escapes.
    fn inline(&self, text: &str) -> String {
        inline(text, &self.substitutions)
    }
}

/// A section title at line `i`: its text, style and the line after it.
fn title_at<'a>(lines: &[&'a str], i: usize) -> Option<(&'a str, (char, bool), usize)> {
    let line = lines.get(i)?;
    if let Some(over) = is_adornment(line) {
        // Overline, title, underline.
        let text = lines.get(i + 1)?;
        let under = lines.get(i + 2)?;
        if !text.trim().is_empty()
            && is_adornment(under) == Some(over)
            && under.len() >= text.trim().chars().count().min(line.len())
        {
            return Some((text.trim(), (over, true), i + 3));
        }
        return None;
    }
    if indent(line) > 0 || line.trim().is_empty() {
        return None;
    }
    let under = lines.get(i + 1)?;
    let mark = is_adornment(under)?;
    let width = line.chars().count();
    let after_blank = i == 0 || lines[i - 1].trim().is_empty();
    (after_blank && (under.len() >= width || under.len() >= 4) && list_marker(line).is_none())
        .then_some((line.trim(), (mark, false), i + 2))
}

fn is_simple_table_border(line: &str) -> bool {
    line.starts_with("==") && line.contains(' ') && line.chars().all(|c| c == '=' || c == ' ')
}

/// The characters of `line` from column `start` to `end`.
fn char_slice(line: &[char], start: usize, end: usize) -> String {
    let end = end.min(line.len());
    line.get(start.min(end)..end)
        .unwrap_or(&[])
        .iter()
        .collect()
}

fn csv_rows(text: &str, delimiter: u8) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes())
        .records()
        .filter_map(Result::ok)
        .map(|r| r.iter().map(unquote).collect())
        .collect()
}

/// A cell quoted after a space (`a, "b, c"`), which the CSV reader reads
/// as written, without its quotes.
fn unquote(cell: &str) -> String {
    match cell.strip_prefix('"').and_then(|c| c.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => cell.to_string(),
    }
}

/// A `list-table`'s rows: each top-level item a row, its sub-items cells.
fn list_table_rows(content: &[&str]) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for line in content {
        let trimmed = line.trim_start();
        let depth = indent(line);
        if let Some(rest) = trimmed.strip_prefix("* ").or(trimmed.strip_prefix("- "))
            && depth == 0
        {
            rows.push(Vec::new());
            let rest = rest.trim_start();
            if let Some(cell) = rest.strip_prefix("- ").or(rest.strip_prefix("* ")) {
                rows.last_mut()
                    .unwrap_or(&mut Vec::new())
                    .push(cell.trim().to_string());
            }
        } else if let Some(cell) = trimmed.strip_prefix("- ").or(trimmed.strip_prefix("* ")) {
            if let Some(row) = rows.last_mut() {
                row.push(cell.trim().to_string());
            }
        } else if !trimmed.is_empty()
            && let Some(cell) = rows.last_mut().and_then(|r| r.last_mut())
        {
            cell.push(' ');
            cell.push_str(trimmed);
        }
    }
    rows
}

/// The text of reStructuredText inline markup.
fn inline(text: &str, substitutions: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let boundary = |i: usize| i == 0 || !chars[i - 1].is_alphanumeric();
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                if let Some(&next) = chars.get(i + 1)
                    && !next.is_whitespace()
                {
                    out.push(next);
                }
                i += 2;
                continue;
            }
            '`' if chars.get(i + 1) == Some(&'`') && boundary(i) => {
                if let Some(end) = find(&chars, i + 2, "``") {
                    out.extend(&chars[i + 2..end]);
                    i = end + 2;
                    continue;
                }
            }
            '`' if boundary(i) => {
                if let Some(end) = find(&chars, i + 1, "`") {
                    let inner: String = chars[i + 1..end].iter().collect();
                    out.push_str(&reference_text(&inner));
                    i = end + 1;
                    while i < chars.len() && chars[i] == '_' {
                        i += 1;
                    }
                    continue;
                }
            }
            ':' if boundary(i) => {
                // `:role:`text``.
                let name_end = (i + 1..chars.len())
                    .find(|&j| {
                        !(chars[j].is_alphanumeric() || matches!(chars[j], '-' | '_' | '.' | ':'))
                    })
                    .unwrap_or(chars.len());
                if name_end > i + 2
                    && chars[name_end - 1] == ':'
                    && chars.get(name_end) == Some(&'`')
                    && let Some(end) = find(&chars, name_end + 1, "`")
                {
                    let inner: String = chars[name_end + 1..end].iter().collect();
                    out.push_str(&reference_text(&inner));
                    i = end + 1;
                    continue;
                }
            }
            '*' if boundary(i) => {
                let strong = chars.get(i + 1) == Some(&'*');
                let (open, close) = if strong { (2, "**") } else { (1, "*") };
                if chars.get(i + open).is_some_and(|c| !c.is_whitespace())
                    && let Some(end) = find(&chars, i + open, close)
                {
                    let inner: String = chars[i + open..end].iter().collect();
                    out.push_str(&inner);
                    i = end + close.len();
                    continue;
                }
            }
            '|' if boundary(i) => {
                if let Some(end) = find(&chars, i + 1, "|") {
                    let name: String = chars[i + 1..end].iter().collect();
                    if !name.is_empty() && !name.starts_with(' ') && !name.ends_with(' ') {
                        out.push_str(substitutions.get(&name).unwrap_or(&name));
                        i = end + 1;
                        while i < chars.len() && chars[i] == '_' {
                            i += 1;
                        }
                        continue;
                    }
                }
            }
            '[' => {
                // `[1]_`, `[#note]_` go; `[CIT2002]_` keeps its label.
                if let Some(end) = find(&chars, i + 1, "]")
                    && chars.get(end + 1) == Some(&'_')
                {
                    let label: String = chars[i + 1..end].iter().collect();
                    let footnote = label.starts_with('#')
                        || label == "*"
                        || label.chars().all(|c| c.is_ascii_digit());
                    if !footnote {
                        out.push('[');
                        out.push_str(&label);
                        out.push(']');
                    }
                    i = end + 2;
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out.split('\n')
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Where `needle` next starts in `chars` from `from`, within `REACH`.
fn find(chars: &[char], from: usize, needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    let last = chars.len().saturating_sub(needle.len() - 1);
    (from..last.min(from + REACH)).find(|&j| chars[j..j + needle.len()] == needle[..])
}

/// The text a reference or role shows: "Title" of "Title <target>", the
/// last name of "~pkg.mod.name", the text of anything else.
fn reference_text(inner: &str) -> String {
    let inner = inner.trim();
    if let Some(open) = inner.rfind('<')
        && inner.ends_with('>')
        && open > 0
    {
        return inner[..open].trim().to_string();
    }
    let inner = inner.trim_start_matches('!');
    match inner.strip_prefix('~') {
        Some(path) => path.rsplit('.').next().unwrap_or(path).to_string(),
        None => inner
            .trim_start_matches(['<'])
            .trim_end_matches('>')
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup::texts;

    #[test]
    fn a_sphinx_page_reads_with_its_sections_lists_and_code() {
        let source = "\
==============
 Heat pumps
==============

:Author: Jane Doe; John Roe
:Date: 2024-03-01

.. |cop| replace:: coefficient of performance

Overview
========

The |cop| of a **heat pump** is *measured* with ``cop()``, see
:func:`~folio.pumps.cop` and `the norm <https://example.org>`_ [1]_ [EN14511]_.

.. note::

   Measure at 7 °C.

* First point
* Second point,
  continued

  - nested

#. numbered

Example::

    print(cop(3.5))

Details
-------

term
   its definition

.. code-block:: python
   :linenos:

   x = 1

.. This is a comment
   that spans lines.

.. [1] The footnote.
";
        let text = extract(source);
        assert_eq!(text.title.as_deref(), Some("Heat pumps"));
        assert_eq!(
            text.metadata["authors"],
            serde_json::json!(["Jane Doe", "John Roe"])
        );
        assert_eq!(text.metadata["year"], 2024);
        assert_eq!(
            texts(&text),
            [
                (BlockKind::Heading(1), "Heat pumps"),
                (BlockKind::Heading(2), "Overview"),
                (
                    BlockKind::Paragraph,
                    "The coefficient of performance of a heat pump is measured with cop(), see\n\
                     cop and the norm [EN14511]."
                ),
                (BlockKind::Paragraph, "Measure at 7 °C."),
                (BlockKind::ListItem, "First point"),
                (BlockKind::ListItem, "Second point,\ncontinued"),
                (BlockKind::ListItem, "nested"),
                (BlockKind::ListItem, "numbered"),
                (BlockKind::Paragraph, "Example:"),
                (BlockKind::Code, "print(cop(3.5))"),
                (BlockKind::Heading(3), "Details"),
                (BlockKind::ListItem, "term: its definition"),
                (BlockKind::Code, "x = 1"),
                (BlockKind::Paragraph, "The footnote."),
            ]
        );
    }

    #[test]
    fn tables_of_every_kind_keep_their_rows_and_captions() {
        let source = "\
.. table:: Table 1: Yield by site

   +--------+------+
   | Site   | 2021 |
   +========+======+
   | Kassel | 3.4  |
   | (est.) |      |
   +--------+------+

=====  =====
Site   2021
=====  =====
Graz   2.9
Porto  3.1
=====  =====

.. csv-table:: Prices
   :header: \"Item\", \"Price\"

   \"bolt, hex\", 0.10

.. list-table:: Staff
   :header-rows: 1

   * - Name
     - Role
   * - Ana
     - Lead
";
        let text = extract(source);
        let tables: Vec<(Option<&str>, &str)> = text
            .blocks
            .iter()
            .map(|b| {
                assert_eq!(b.kind, BlockKind::Table, "{b:?}");
                (b.caption.as_deref(), b.text.as_str())
            })
            .collect();
        assert_eq!(
            tables,
            [
                (
                    Some("Table 1: Yield by site"),
                    "| Site | 2021 |\n| --- | --- |\n| Kassel (est.) | 3.4 |"
                ),
                (
                    None,
                    "| Site | 2021 |\n| --- | --- |\n| Graz | 2.9 |\n| Porto | 3.1 |"
                ),
                (
                    Some("Prices"),
                    "| Item | Price |\n| --- | --- |\n| bolt, hex | 0.10 |"
                ),
                (
                    Some("Staff"),
                    "| Name | Role |\n| --- | --- |\n| Ana | Lead |"
                ),
            ]
        );
    }

    #[test]
    fn odd_input_reads_without_failing() {
        for source in [
            "",
            "::",
            "..",
            ".. ::",
            "+--",
            "====",
            "=====  ====\n",
            "* ",
            "1.",
            "`",
            "``x",
            ":a:`",
            "|x",
            "[1]_",
            "\\",
            "Title\n=====\n\n   indented::\n",
            "1é text",
            "* item\n\u{a0}\u{a0}continued\n",
            "  quote\n\u{3000}wide\n",
            "a\n  b\n    c",
        ] {
            let _ = extract(source);
        }
    }
}
