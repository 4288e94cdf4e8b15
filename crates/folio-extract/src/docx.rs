//! DOCX (Office Open XML word processing): headings from paragraph styles and
//! outline levels, list items, tables with their captions, text boxes, core
//! properties.

use std::collections::HashMap;

use folio_core::{Block, BlockKind, Limits, StructuredText, is_table_caption};

use crate::container::{Container, core_properties};
use crate::xml::{Node, attr, walk};
use crate::{ExtractError, Format};

/// What a paragraph style means for structure.
#[derive(Clone, Copy, PartialEq)]
enum StyleRole {
    Title,
    Heading(u8),
    /// Word's "caption" style (Insert Caption), for tables and figures.
    Caption,
}

/// Reads `word/styles.xml`: style id → role, from the style's name
/// ("heading 2", "Title") or its outline level. Localised style ids
/// ("berschrift1") resolve through their English built-in names.
fn style_roles(xml: &[u8]) -> Result<HashMap<String, StyleRole>, ExtractError> {
    let mut roles = HashMap::new();
    let mut current: Option<String> = None;
    walk(xml, Format::Docx, |node| match node {
        Node::Open {
            name: "style",
            attrs,
        } => current = attr(attrs, "styleId").map(str::to_string),
        Node::Open {
            name: "name",
            attrs,
        } => {
            if let (Some(id), Some(name)) = (&current, attr(attrs, "val")) {
                let lower = name.to_ascii_lowercase();
                if lower == "title" {
                    roles.insert(id.clone(), StyleRole::Title);
                } else if lower == "caption" {
                    roles.insert(id.clone(), StyleRole::Caption);
                } else if let Some(level) = lower
                    .strip_prefix("heading ")
                    .and_then(|n| n.trim().parse::<u8>().ok())
                {
                    roles.insert(id.clone(), StyleRole::Heading(level.clamp(1, 6)));
                }
            }
        }
        Node::Open {
            name: "outlineLvl",
            attrs,
        } => {
            if let (Some(id), Some(level)) = (
                &current,
                attr(attrs, "val").and_then(|v| v.parse::<u8>().ok()),
            ) && level < 9
            {
                roles
                    .entry(id.clone())
                    .or_insert(StyleRole::Heading((level + 1).min(6)));
            }
        }
        Node::Close { name: "style" } => current = None,
        _ => {}
    })?;
    Ok(roles)
}

/// One open paragraph: text boxes nest paragraphs inside paragraphs.
#[derive(Default)]
struct Paragraph {
    text: String,
    role: Option<StyleRole>,
    list: bool,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: Vec<String>,
}

/// Whether a caption names a figure ("Figure 3: …", "Fig. 2", "Abbildung 1").
pub(crate) fn is_figure_caption(text: &str) -> bool {
    let word: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect::<String>()
        .to_lowercase();
    matches!(
        word.as_str(),
        "figure" | "fig" | "abbildung" | "abb" | "figura" | "chart" | "image" | "photo"
    )
}

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<StructuredText, ExtractError> {
    let mut container = Container::open(bytes, Format::Docx, limits)?;
    let document = container.require("word/document.xml")?;
    let roles = match container.read("word/styles.xml")? {
        Some(xml) => style_roles(&xml)?,
        None => HashMap::new(),
    };
    let mut metadata = core_properties(&mut container)?;

    let mut blocks: Vec<Block> = Vec::new();
    let mut title: Option<String> = None;
    let mut paragraphs: Vec<Paragraph> = Vec::new();
    let mut tables: Vec<Table> = Vec::new();
    // Whether the last block is a paragraph that reads as a table's caption.
    let mut caption_last = false;
    let mut in_text = false;
    // Images in the flow: relationship id, blocks before it.
    let mut images: Vec<(String, usize)> = Vec::new();
    walk(&document, Format::Docx, |node| match node {
        Node::Open {
            name: "blip" | "imagedata",
            attrs,
        } => {
            if let Some(id) = attr(attrs, "r:embed").or_else(|| attr(attrs, "r:id")) {
                images.push((id.to_string(), blocks.len()));
            }
        }
        Node::Open { name: "p", .. } => paragraphs.push(Paragraph::default()),
        Node::Open {
            name: "pStyle",
            attrs,
        } => {
            if let (Some(p), Some(id)) = (paragraphs.last_mut(), attr(attrs, "val")) {
                p.role = roles.get(id).copied().or_else(|| {
                    // Documents without styles.xml still use the built-in ids.
                    let lower = id.to_ascii_lowercase();
                    if lower == "title" {
                        Some(StyleRole::Title)
                    } else if lower == "caption" {
                        Some(StyleRole::Caption)
                    } else {
                        lower
                            .strip_prefix("heading")
                            .and_then(|n| n.parse::<u8>().ok())
                            .map(|l| StyleRole::Heading(l.clamp(1, 6)))
                    }
                });
            }
        }
        Node::Open {
            name: "outlineLvl",
            attrs,
        } => {
            if let (Some(p), Some(level)) = (
                paragraphs.last_mut(),
                attr(attrs, "val").and_then(|v| v.parse::<u8>().ok()),
            ) && level < 9
                && p.role.is_none()
            {
                p.role = Some(StyleRole::Heading((level + 1).min(6)));
            }
        }
        Node::Open { name: "numPr", .. } => {
            if let Some(p) = paragraphs.last_mut() {
                p.list = true;
            }
        }
        Node::Open { name: "t", .. } => in_text = true,
        Node::Close { name: "t" } => in_text = false,
        Node::Text(t) if in_text => {
            if let Some(p) = paragraphs.last_mut() {
                p.text.push_str(t);
            }
        }
        Node::Open { name: "tab", .. } => {
            if let Some(p) = paragraphs.last_mut() {
                p.text.push('\t');
            }
        }
        Node::Open {
            name: "br" | "cr", ..
        } => {
            if let Some(p) = paragraphs.last_mut() {
                p.text.push('\n');
            }
        }
        Node::Close { name: "p" } => {
            let Some(p) = paragraphs.pop() else { return };
            let text = p.text.trim().to_string();
            if text.is_empty() {
                return;
            }
            if let Some(table) = tables.last_mut() {
                table.cell.push(text);
                return;
            }
            let captions_table = is_table_caption(&text)
                || (p.role == Some(StyleRole::Caption) && !is_figure_caption(&text));
            // A caption right under a table that has none is its caption.
            if let Some(table) = blocks.last_mut()
                && captions_table
                && table.kind == BlockKind::Table
                && table.caption.is_none()
            {
                table.set_caption(&text);
                return;
            }
            caption_last = captions_table;
            let kind = match p.role {
                Some(StyleRole::Title) => {
                    title.get_or_insert_with(|| text.clone());
                    BlockKind::Heading(1)
                }
                Some(StyleRole::Heading(level)) => BlockKind::Heading(level),
                None if p.list => BlockKind::ListItem,
                None | Some(StyleRole::Caption) => BlockKind::Paragraph,
            };
            blocks.push(Block::new(kind, text, None));
        }
        Node::Open { name: "tbl", .. } => tables.push(Table::default()),
        Node::Close { name: "tc" } => {
            if let Some(table) = tables.last_mut() {
                let cell = std::mem::take(&mut table.cell).join(" ");
                table.row.push(cell);
            }
        }
        Node::Close { name: "tr" } => {
            if let Some(table) = tables.last_mut() {
                let row = std::mem::take(&mut table.row);
                if row.iter().any(|c| !c.is_empty()) {
                    table.rows.push(row);
                }
            }
        }
        Node::Close { name: "tbl" } => {
            let Some(table) = tables.pop() else { return };
            match tables.last_mut() {
                // A nested table becomes text in its parent's cell.
                Some(parent) => parent.cell.push(crate::nested_table_text(&table.rows)),
                None => crate::push_table(
                    &mut blocks,
                    table.rows,
                    std::mem::take(&mut caption_last),
                    None,
                ),
            }
        }
        _ => {}
    })?;
    let title = metadata
        .remove("title")
        .and_then(|v| v.as_str().map(str::to_string))
        .or(title);
    let targets = container.relationships("word/document.xml")?;
    let refs = images
        .into_iter()
        .filter_map(|(id, at)| Some((targets.get(&id)?.clone(), at, None)))
        .collect();
    let figures = container.figures(refs, limits)?;
    Ok(StructuredText {
        title,
        blocks,
        metadata,
        page_count: None,
        figures,
        ..Default::default()
    })
}
