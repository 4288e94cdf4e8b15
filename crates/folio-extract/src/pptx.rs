//! PPTX (Office Open XML presentations): one page per slide in presentation
//! order; the slide title becomes a heading, tables Markdown tables (the
//! first row the header), other text paragraphs.

use folio_core::{Block, BlockKind, Limits, StructuredText};

use crate::container::{Container, core_properties};
use crate::xml::{Node, attr, walk};
use crate::{ExtractError, Format};

/// Slide part names in presentation order: `presentation.xml`'s slide id list
/// resolved through its relationships; falls back to numeric file order.
fn slide_order(container: &mut Container<'_>) -> Result<Vec<String>, ExtractError> {
    let mut rel_ids = Vec::new();
    if let Some(xml) = container.read("ppt/presentation.xml")? {
        walk(&xml, Format::Pptx, |node| {
            if let Node::Open {
                name: "sldId",
                attrs,
            } = node
                && let Some(id) = attr(attrs, "r:id")
            {
                rel_ids.push(id.to_string());
            }
        })?;
    }
    let targets = container.relationships("ppt/presentation.xml")?;
    let ordered: Vec<String> = rel_ids
        .iter()
        .filter_map(|id| targets.get(id).cloned())
        .collect();
    if !ordered.is_empty() {
        return Ok(ordered);
    }
    let mut slides: Vec<(u32, String)> = container
        .names()
        .into_iter()
        .filter_map(|n| {
            let number = n
                .strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()?;
            Some((number, n))
        })
        .collect();
    slides.sort();
    Ok(slides.into_iter().map(|(_, n)| n).collect())
}

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<StructuredText, ExtractError> {
    let mut container = Container::open(bytes, Format::Pptx, limits)?;
    let slides = slide_order(&mut container)?;
    if slides.is_empty() {
        return Err(ExtractError::malformed(Format::Pptx, "no slides"));
    }
    if slides.len() as u64 > u64::from(limits.max_pages) {
        return Err(ExtractError::TooMany {
            what: "slides",
            limit: limits.max_pages.into(),
            actual: slides.len() as u64,
        });
    }
    let mut metadata = core_properties(&mut container)?;
    let mut blocks = Vec::new();
    let mut refs = Vec::new();
    for (index, part) in slides.iter().enumerate() {
        let page = Some(index as u32 + 1);
        let Some(xml) = container.read(part)? else {
            continue;
        };
        let mut is_title = false;
        let mut paragraph = String::new();
        let mut in_text = false;
        // The slide's tables: rows of cells, each cell's paragraphs.
        let mut table: Option<Vec<Vec<String>>> = None;
        let mut row: Vec<String> = Vec::new();
        let mut cell: Vec<String> = Vec::new();
        let mut images: Vec<(String, usize)> = Vec::new();
        walk(&xml, Format::Pptx, |node| match node {
            Node::Open {
                name: "blip",
                attrs,
            } => {
                if let Some(id) = attr(attrs, "r:embed") {
                    images.push((id.to_string(), blocks.len()));
                }
            }
            Node::Open {
                name: "sp" | "graphicFrame",
                ..
            }
            | Node::Close { name: "sp" } => is_title = false,
            Node::Open { name: "ph", attrs } => {
                is_title = matches!(attr(attrs, "type"), Some("title" | "ctrTitle"));
            }
            Node::Open { name: "t", .. } => in_text = true,
            Node::Close { name: "t" } => in_text = false,
            Node::Text(t) if in_text => paragraph.push_str(t),
            Node::Open { name: "br", .. } => paragraph.push('\n'),
            Node::Close { name: "p" } => {
                let text = std::mem::take(&mut paragraph).trim().to_string();
                if text.is_empty() {
                } else if table.is_some() {
                    cell.push(text);
                } else {
                    let kind = if is_title {
                        BlockKind::Heading(1)
                    } else {
                        BlockKind::Paragraph
                    };
                    blocks.push(Block::new(kind, text, page));
                }
            }
            Node::Open { name: "tbl", .. } => table = Some(Vec::new()),
            Node::Close { name: "tc" } => row.push(std::mem::take(&mut cell).join(" ")),
            Node::Close { name: "tr" } => {
                if let Some(rows) = table.as_mut() {
                    rows.push(std::mem::take(&mut row));
                }
            }
            Node::Close { name: "tbl" } => {
                if let Some(rows) = table.take() {
                    blocks.extend(folio_core::Table::from_rows(rows).into_block(page));
                }
            }
            _ => {}
        })?;
        if !images.is_empty() {
            let targets = container.relationships(part)?;
            refs.extend(
                images
                    .into_iter()
                    .filter_map(|(id, at)| Some((targets.get(&id)?.clone(), at, page))),
            );
        }
    }
    let figures = container.figures(refs, limits)?;
    let title = metadata
        .remove("title")
        .and_then(|v| v.as_str().map(str::to_string))
        .or_else(|| {
            blocks
                .iter()
                .find(|b| matches!(b.kind, BlockKind::Heading(_)))
                .map(|b| b.text.clone())
        });
    Ok(StructuredText {
        title,
        blocks,
        metadata,
        page_count: Some(slides.len() as u32),
        figures,
        ..Default::default()
    })
}
