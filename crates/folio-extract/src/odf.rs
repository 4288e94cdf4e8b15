//! OpenDocument text and presentations (ODT, ODP): headings from outline
//! levels and paragraph styles, list items, tables with their captions, one
//! page per slide, the document's `meta.xml`. Spreadsheets (ODS) go through
//! [`crate::tabular`].

use std::collections::HashMap;

use folio_core::{Block, BlockKind, Limits, StructuredText, is_table_caption};

use crate::container::Container;
use crate::xml::{Node, attr, walk};
use crate::{ExtractError, Format};

/// What a paragraph style means for structure.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Role {
    Title,
    Heading(u8),
    /// A caption style: LibreOffice's "Table" and "Caption".
    TableCaption,
    /// "Figure", "Illustration", "Drawing": kept as paragraphs.
    FigureCaption,
}

/// The role a style has by its own name and outline level.
fn own_role(name: &str, outline: Option<u8>) -> Option<Role> {
    let name = name.replace("_20_", " ").to_ascii_lowercase();
    match name.as_str() {
        "title" => return Some(Role::Title),
        "table" | "caption" => return Some(Role::TableCaption),
        "figure" | "illustration" | "drawing" => return Some(Role::FigureCaption),
        _ => {}
    }
    if let Some(level) = name
        .strip_prefix("heading ")
        .and_then(|n| n.trim().parse::<u8>().ok())
    {
        return Some(Role::Heading(level.clamp(1, 6)));
    }
    outline
        .filter(|l| *l > 0)
        .map(|l| Role::Heading(l.clamp(1, 6)))
}

/// Paragraph styles of `styles.xml` and `content.xml`'s automatic styles:
/// each name with its parent and outline level, resolved through the
/// parents (an automatic style "P3" over "Heading_20_2" is a heading).
#[derive(Default)]
struct Styles {
    parents: HashMap<String, String>,
    roles: HashMap<String, Role>,
}

impl Styles {
    fn read(&mut self, xml: &[u8], format: Format) -> Result<(), ExtractError> {
        walk(xml, format, |node| {
            if let Node::Open {
                name: "style",
                attrs,
            } = node
                && let Some(name) = attr(attrs, "style:name")
            {
                let outline = attr(attrs, "default-outline-level").and_then(|l| l.parse().ok());
                if let Some(role) = own_role(name, outline) {
                    self.roles.insert(name.to_string(), role);
                }
                if let Some(parent) = attr(attrs, "parent-style-name") {
                    self.parents.insert(name.to_string(), parent.to_string());
                }
            }
        })
    }

    fn role<'a>(&'a self, mut name: &'a str) -> Option<Role> {
        // Parent chains are short; the bound guards a cycle.
        for _ in 0..16 {
            // A built-in parent need not be declared.
            if let Some(role) = self
                .roles
                .get(name)
                .copied()
                .or_else(|| own_role(name, None))
            {
                return Some(role);
            }
            name = self.parents.get(name)?;
        }
        None
    }
}

/// One open paragraph or heading: frames and notes nest paragraphs inside
/// paragraphs.
#[derive(Default)]
struct Paragraph {
    text: String,
    role: Option<Role>,
    heading: Option<u8>,
    list: bool,
    /// A caption numbered by a sequence field ("Table 2"): `Some(true)`
    /// for a table's, `Some(false)` for a figure's.
    sequence: Option<bool>,
}

impl Paragraph {
    fn captions_table(&self) -> bool {
        match self.sequence {
            Some(table) => table,
            None => {
                self.role == Some(Role::TableCaption)
                    || (self.role != Some(Role::FigureCaption) && is_table_caption(&self.text))
            }
        }
    }
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    row_repeat: u32,
    cell: Vec<String>,
    cell_repeat: u32,
}

/// Elements whose text is not the document's: generated indexes (they
/// repeat the headings), annotations, tracked deletions, speaker notes,
/// field declarations.
const SKIPPED: [&str; 13] = [
    "table-of-content",
    "illustration-index",
    "table-index",
    "alphabetical-index",
    "object-index",
    "user-index",
    "bibliography",
    "annotation",
    "tracked-changes",
    "notes",
    "note-citation",
    "sequence-decls",
    "variable-decls",
];

/// Cells a table may hold, counting repeated cells: like a spreadsheet's.
const MAX_CELLS: u64 = crate::tabular::MAX_CELLS;
/// A repeated empty cell stands for at most this many columns (LibreOffice
/// pads rows to the sheet's width with one repeated empty cell).
const MAX_REPEATED_COLUMNS: u32 = 1_024;

pub fn extract(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
) -> Result<StructuredText, ExtractError> {
    let mut container = Container::open(bytes, format, limits)?;
    let content = container.require("content.xml")?;
    let mut styles = Styles::default();
    if let Some(xml) = container.read("styles.xml")? {
        styles.read(&xml, format)?;
    }
    styles.read(&content, format)?;
    let mut metadata = match container.read("meta.xml")? {
        Some(xml) => meta(&xml, format)?,
        None => serde_json::Map::new(),
    };

    let presentation = format == Format::Odp;
    let mut blocks: Vec<Block> = Vec::new();
    let mut title: Option<String> = None;
    let mut paragraphs: Vec<Paragraph> = Vec::new();
    let mut tables: Vec<Table> = Vec::new();
    let mut cells = 0u64;
    let mut too_many = false;
    // Whether the last block is a paragraph that reads as a table's caption.
    let mut caption_last = false;
    let mut lists = 0usize;
    let mut skipping = 0usize;
    let mut in_body = false;
    let mut page: Option<u32> = None;
    let mut pages = 0u32;
    // Presentation classes of the open frames ("title", "outline", …).
    let mut frames: Vec<Option<String>> = Vec::new();
    // Images in the flow: member, blocks before it, page.
    let mut images: Vec<(String, usize, Option<u32>)> = Vec::new();
    walk(&content, format, |node| {
        if too_many {
            return;
        }
        match node {
            Node::Open { name, .. } if skipping > 0 || SKIPPED.contains(&name) => skipping += 1,
            Node::Close { .. } if skipping > 0 => skipping -= 1,
            _ if skipping > 0 => {}
            Node::Open { name: "body", .. } => in_body = true,
            Node::Close { name: "body" } => in_body = false,
            _ if !in_body => {}
            Node::Open { name: "page", .. } if presentation => {
                pages += 1;
                page = Some(pages);
            }
            Node::Open {
                name: "frame",
                attrs,
            } => frames.push(attr(attrs, "presentation:class").map(str::to_string)),
            Node::Close { name: "frame" } => drop(frames.pop()),
            Node::Open {
                name: "image",
                attrs,
            } => {
                if let Some(href) = attr(attrs, "xlink:href").filter(|h| !h.contains("://")) {
                    images.push((crate::container::resolve("", href), blocks.len(), page));
                }
            }
            Node::Open { name: "list", .. } => lists += 1,
            Node::Close { name: "list" } => lists = lists.saturating_sub(1),
            Node::Open {
                name: name @ ("p" | "h"),
                attrs,
            } => {
                let role = attr(attrs, "style-name").and_then(|s| styles.role(s));
                let heading = (name == "h").then(|| {
                    attr(attrs, "outline-level")
                        .and_then(|l| l.parse::<u8>().ok())
                        .unwrap_or(1)
                        .clamp(1, 6)
                });
                paragraphs.push(Paragraph {
                    role,
                    heading,
                    list: lists > 0,
                    ..Default::default()
                });
            }
            Node::Open {
                name: "sequence",
                attrs,
            } => {
                if let Some(p) = paragraphs.last_mut() {
                    let name = attr(attrs, "name").unwrap_or_default();
                    p.sequence = Some(!is_figure_sequence(name));
                }
            }
            Node::Text(t) => {
                if let Some(p) = paragraphs.last_mut() {
                    p.text.push_str(t);
                }
            }
            Node::Open { name: "s", attrs } => {
                if let Some(p) = paragraphs.last_mut() {
                    let count = attr(attrs, "c").and_then(|c| c.parse::<usize>().ok());
                    p.text
                        .push_str(&" ".repeat(count.unwrap_or(1).clamp(1, 64)));
                }
            }
            Node::Open { name: "tab", .. } => {
                if let Some(p) = paragraphs.last_mut() {
                    p.text.push('\t');
                }
            }
            Node::Open {
                name: "line-break", ..
            } => {
                if let Some(p) = paragraphs.last_mut() {
                    p.text.push('\n');
                }
            }
            Node::Close { name: "p" | "h" } => {
                let Some(p) = paragraphs.pop() else { return };
                let text = p.text.trim().to_string();
                if text.is_empty() {
                    return;
                }
                if let Some(table) = tables.last_mut() {
                    table.cell.push(text);
                    return;
                }
                let p = Paragraph { text, ..p };
                let captions_table = p.captions_table();
                // A caption right under a table that has none is its caption.
                if let Some(table) = blocks.last_mut()
                    && captions_table
                    && table.kind == BlockKind::Table
                    && table.caption.is_none()
                {
                    table.set_caption(&p.text);
                    caption_last = false;
                    return;
                }
                caption_last = captions_table;
                let in_title_frame = frames
                    .last()
                    .is_some_and(|c| matches!(c.as_deref(), Some("title")));
                let kind = if in_title_frame {
                    BlockKind::Heading(1)
                } else if let Some(level) = p.heading {
                    BlockKind::Heading(level)
                } else {
                    match p.role {
                        Some(Role::Title) => {
                            title.get_or_insert_with(|| p.text.clone());
                            BlockKind::Heading(1)
                        }
                        Some(Role::Heading(level)) => BlockKind::Heading(level),
                        _ if p.list => BlockKind::ListItem,
                        _ => BlockKind::Paragraph,
                    }
                };
                blocks.push(Block::new(kind, p.text, page));
            }
            Node::Open { name: "table", .. } => tables.push(Table::default()),
            Node::Open {
                name: "table-row",
                attrs,
            } => {
                if let Some(table) = tables.last_mut() {
                    table.row_repeat = repeat(attrs, "number-rows-repeated");
                }
            }
            Node::Open {
                name: "table-cell" | "covered-table-cell",
                attrs,
            } => {
                if let Some(table) = tables.last_mut() {
                    table.cell_repeat = repeat(attrs, "number-columns-repeated");
                }
            }
            Node::Close {
                name: "table-cell" | "covered-table-cell",
            } => {
                if let Some(table) = tables.last_mut() {
                    let cell = std::mem::take(&mut table.cell).join(" ");
                    let times = if cell.is_empty() {
                        table.cell_repeat.min(MAX_REPEATED_COLUMNS)
                    } else {
                        table.cell_repeat
                    };
                    cells += u64::from(times);
                    if cells > MAX_CELLS {
                        too_many = true;
                        return;
                    }
                    for _ in 0..times {
                        table.row.push(cell.clone());
                    }
                }
            }
            Node::Close { name: "table-row" } => {
                if let Some(table) = tables.last_mut() {
                    let mut row = std::mem::take(&mut table.row);
                    while row.last().is_some_and(String::is_empty) {
                        row.pop();
                    }
                    if row.is_empty() {
                        return;
                    }
                    let times = u64::from(table.row_repeat);
                    cells += (times - 1) * row.len() as u64;
                    if cells > MAX_CELLS {
                        too_many = true;
                        return;
                    }
                    for _ in 1..times {
                        table.rows.push(row.clone());
                    }
                    table.rows.push(row);
                }
            }
            Node::Close { name: "table" } => {
                let Some(table) = tables.pop() else { return };
                match tables.last_mut() {
                    // A nested table becomes text in its parent's cell.
                    Some(parent) => parent.cell.push(crate::nested_table_text(&table.rows)),
                    None => crate::push_table(
                        &mut blocks,
                        table.rows,
                        std::mem::take(&mut caption_last),
                        page,
                    ),
                }
            }
            _ => {}
        }
    })?;
    if too_many {
        return Err(ExtractError::TooMany {
            what: "table cells",
            limit: MAX_CELLS,
            actual: cells,
        });
    }
    if presentation && u64::from(pages) > u64::from(limits.max_pages) {
        return Err(ExtractError::TooMany {
            what: "slides",
            limit: limits.max_pages.into(),
            actual: pages.into(),
        });
    }
    let title = metadata
        .remove("title")
        .and_then(|v| v.as_str().map(str::to_string))
        .or(title)
        .or_else(|| {
            presentation
                .then(|| {
                    blocks
                        .iter()
                        .find(|b| matches!(b.kind, BlockKind::Heading(_)))
                        .map(|b| b.text.clone())
                })
                .flatten()
        });
    let figures = container.figures(images, limits)?;
    Ok(StructuredText {
        title,
        blocks,
        metadata,
        page_count: presentation.then_some(pages),
        figures,
        ..Default::default()
    })
}

/// How many times a repeated row or cell stands (at least once).
fn repeat(attrs: &[(String, String)], key: &str) -> u32 {
    attr(attrs, key)
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1)
}

/// Whether a sequence field numbers figures: LibreOffice's "Illustration",
/// "Figure" and "Drawing" sequences and their usual translations.
fn is_figure_sequence(name: &str) -> bool {
    matches!(
        name.to_lowercase().as_str(),
        "illustration" | "figure" | "drawing" | "abbildung" | "zeichnung" | "figura" | "dessin"
    )
}

/// `meta.xml` as metadata: title, authors, date, subject, description,
/// keywords, language.
fn meta(
    xml: &[u8],
    format: Format,
) -> Result<serde_json::Map<String, serde_json::Value>, ExtractError> {
    let mut metadata = serde_json::Map::new();
    let mut keywords: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    let mut text = String::new();
    walk(xml, format, |node| match node {
        Node::Open { name, .. } => {
            current = Some(name.to_string());
            text.clear();
        }
        Node::Text(t) => text.push_str(t),
        Node::Close { name } => {
            let value = text.trim().to_string();
            if current.as_deref() == Some(name) && !value.is_empty() {
                match name {
                    "title" | "subject" | "description" | "language" => {
                        metadata.insert(name.into(), value.into());
                    }
                    "creator" | "initial-creator" => {
                        metadata
                            .entry("authors")
                            .or_insert_with(|| serde_json::json!([value]));
                    }
                    "creation-date" => {
                        metadata.insert("date".into(), value.into());
                    }
                    "date" => {
                        metadata.entry("date").or_insert(value.into());
                    }
                    "keyword" => keywords.push(value),
                    _ => {}
                }
            }
            current = None;
        }
    })?;
    if !keywords.is_empty() {
        metadata.insert("keywords".into(), keywords.join(", ").into());
    }
    Ok(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_resolve_through_their_parents() {
        let xml = br#"<office:document-styles xmlns:office="o" xmlns:style="s">
            <style:style style:name="Heading_20_2" style:default-outline-level="2"/>
            <style:style style:name="P1" style:parent-style-name="Heading_20_2"/>
            <style:style style:name="P2" style:parent-style-name="Table"/>
            <style:style style:name="loop" style:parent-style-name="loop"/>
        </office:document-styles>"#;
        let mut styles = Styles::default();
        styles.read(xml, Format::Odt).unwrap();
        assert_eq!(styles.role("P1"), Some(Role::Heading(2)));
        assert_eq!(styles.role("P2"), Some(Role::TableCaption));
        assert_eq!(styles.role("loop"), None);
        assert_eq!(styles.role("Standard"), None);
    }
}
