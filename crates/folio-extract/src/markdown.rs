//! Markdown: YAML front matter becomes metadata; headings, paragraphs, list
//! items, tables and code become blocks.

use folio_core::{Block, BlockKind, StructuredText, is_table_caption};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value};

/// Extracts a Markdown document. The title is the front matter's `title`, else
/// the first level-1 heading.
pub fn extract(text: &str) -> StructuredText {
    let (metadata, body) = split_front_matter(text);
    let blocks = blocks(body, None);
    let title = metadata
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            blocks
                .iter()
                .find(|b| b.kind == BlockKind::Heading(1))
                .map(|b| b.text.clone())
        });
    StructuredText {
        title,
        blocks,
        metadata,
        page_count: None,
        ..Default::default()
    }
}

/// Separates a leading `---` YAML block from the body. Front matter that does
/// not parse is left in the body as text rather than lost.
fn split_front_matter(text: &str) -> (Map<String, Value>, &str) {
    let text = text.trim_start_matches('\u{feff}');
    let Some(rest) = text.strip_prefix("---\n") else {
        return (Map::new(), text);
    };
    let Some(end) = rest.find("\n---").filter(|&i| {
        let after = &rest[i + 4..];
        after.is_empty() || after.starts_with('\n')
    }) else {
        return (Map::new(), text);
    };
    let yaml = &rest[..end];
    let body = rest[end + 4..].trim_start_matches('\n');
    match yaml_rust2::YamlLoader::load_from_str(yaml) {
        Ok(docs) => match docs.into_iter().next().map(yaml_to_json) {
            Some(Value::Object(map)) => (map, body),
            _ => (Map::new(), text),
        },
        Err(_) => (Map::new(), text),
    }
}

fn yaml_to_json(yaml: yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match yaml {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(s), Value::Number),
        Yaml::Integer(i) => Value::from(i),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Yaml::Hash(hash) => Value::Object(
            hash.into_iter()
                .filter_map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s,
                        Yaml::Integer(i) => i.to_string(),
                        _ => return None,
                    };
                    Some((key, yaml_to_json(v)))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

/// Walks Markdown into blocks, all on `page`. Used for Markdown files and for
/// the Markdown that HTML and PDF pages are converted to.
pub(crate) fn blocks(markdown: &str, page: Option<u32>) -> Vec<Block> {
    blocks_and_images(markdown, page).0
}

/// `blocks`, and the images the text shows: each image's address with the
/// number of blocks before it.
pub(crate) fn blocks_and_images(
    markdown: &str,
    page: Option<u32>,
) -> (Vec<Block>, Vec<(String, usize)>) {
    let mut out = Vec::new();
    let mut images = Vec::new();
    let mut builder = BlockBuilder {
        page,
        out: &mut out,
        current: None,
        item_depth: 0,
        table: None,
        images: &mut images,
    };
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_FOOTNOTES;
    for event in Parser::new_ext(markdown, options) {
        builder.event(event);
    }
    builder.flush();
    // A caption mark no table followed is dropped.
    for block in &mut out {
        if block.text.starts_with(CAPTION_MARK) {
            block.text = block
                .text
                .trim_start_matches(CAPTION_MARK)
                .trim()
                .to_string();
        }
    }
    // Blocks before each image, once the empty ones are gone.
    let mut kept = Vec::with_capacity(out.len() + 1);
    kept.push(0);
    for block in &out {
        kept.push(kept.last().copied().unwrap_or(0) + usize::from(!block.text.is_empty()));
    }
    for (_, at) in &mut images {
        *at = kept[(*at).min(out.len())];
    }
    out.retain(|b| !b.text.is_empty());
    (out, images)
}

struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: String,
}

/// Marks a paragraph that an HTML `<caption>` (or a `<figcaption>` of a
/// figure holding a table) became: it captions the table that follows,
/// whatever its words.
pub(crate) const CAPTION_MARK: char = '\u{2063}';

struct BlockBuilder<'a> {
    page: Option<u32>,
    out: &'a mut Vec<Block>,
    current: Option<(BlockKind, String)>,
    images: &'a mut Vec<(String, usize)>,
    item_depth: usize,
    table: Option<Table>,
}

impl BlockBuilder<'_> {
    fn begin(&mut self, kind: BlockKind) {
        self.flush();
        self.current = Some((kind, String::new()));
    }

    fn flush(&mut self) {
        if let Some((kind, text)) = self.current.take() {
            let text = text.trim();
            if text.is_empty() {
                return;
            }
            // A caption right under a table that has none is its caption.
            if let Some(table) = self.out.last_mut()
                && kind == BlockKind::Paragraph
                && table.kind == BlockKind::Table
                && table.caption.is_none()
                && is_table_caption(text)
            {
                table.set_caption(text);
                return;
            }
            self.out.push(Block::new(kind, text, self.page));
        }
    }

    fn push_text(&mut self, text: &str) {
        if let Some(table) = &mut self.table {
            table.cell.push_str(text);
        } else if let Some((_, buffer)) = &mut self.current {
            buffer.push_str(text);
        } else {
            // Loose text outside any block (e.g. after HTML) starts a paragraph.
            self.current = Some((BlockKind::Paragraph, text.to_string()));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                self.begin(BlockKind::Heading(heading_level(level)))
            }
            Event::Start(Tag::Paragraph) => {
                if self.item_depth > 0
                    && self
                        .current
                        .as_ref()
                        .is_some_and(|(k, _)| *k == BlockKind::ListItem)
                {
                    self.push_text(" ");
                } else if self.table.is_none() {
                    self.begin(BlockKind::Paragraph);
                }
            }
            Event::Start(Tag::Item) => {
                self.item_depth += 1;
                self.begin(BlockKind::ListItem);
            }
            Event::End(TagEnd::Item) => {
                self.item_depth = self.item_depth.saturating_sub(1);
                self.flush();
            }
            Event::Start(Tag::CodeBlock(_)) => self.begin(BlockKind::Code),
            Event::Start(Tag::Table(_)) => {
                self.flush();
                self.table = Some(Table {
                    header: Vec::new(),
                    rows: Vec::new(),
                    row: Vec::new(),
                    cell: String::new(),
                });
            }
            Event::End(TagEnd::TableCell) => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    table.row.push(cell.trim().to_string());
                }
            }
            Event::End(TagEnd::TableHead) => {
                if let Some(table) = &mut self.table {
                    table.header = std::mem::take(&mut table.row);
                }
            }
            Event::End(TagEnd::TableRow) => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            Event::End(TagEnd::Table) => {
                if let Some(table) = self.table.take() {
                    self.push_table(table);
                }
            }
            Event::End(TagEnd::Heading(_) | TagEnd::CodeBlock) => self.flush(),
            Event::End(TagEnd::Paragraph) if self.item_depth == 0 => {
                self.flush();
            }
            Event::Text(text) | Event::Code(text) => self.push_text(&text),
            Event::SoftBreak => self.push_text(" "),
            Event::HardBreak => self.push_text("\n"),
            Event::Start(Tag::Image { dest_url, .. }) => {
                self.images.push((dest_url.to_string(), self.out.len()));
                self.push_text(" ");
            }
            _ => {}
        }
    }
}

impl BlockBuilder<'_> {
    /// Ends a table: the paragraph right before it is its caption when it
    /// reads as one ("Table 2: …") or came from a `<caption>`.
    fn push_table(&mut self, table: Table) {
        let caption = match self.out.last() {
            Some(b)
                if b.kind == BlockKind::Paragraph
                    && (b.text.starts_with(CAPTION_MARK) || is_table_caption(&b.text)) =>
            {
                self.out.pop().map(|b| b.text)
            }
            _ => None,
        };
        let caption = caption.map(|c| c.trim_start_matches(CAPTION_MARK).trim().to_string());
        let table = folio_core::Table {
            caption: caption.clone(),
            header: table.header,
            rows: table.rows,
            first_row: None,
        };
        match table.into_block(self.page) {
            Some(block) => self.out.push(block),
            // An empty table leaves its caption as the paragraph it was.
            None => {
                if let Some(caption) = caption.filter(|c| !c.is_empty()) {
                    self.out
                        .push(Block::new(BlockKind::Paragraph, caption, self.page));
                }
            }
        }
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(t: &StructuredText) -> Vec<(BlockKind, &str)> {
        t.blocks.iter().map(|b| (b.kind, b.text.as_str())).collect()
    }

    #[test]
    fn front_matter_headings_lists_tables() {
        let md = "---\ntitle: Notes\ntags: [a, b]\nyear: 2021\n---\n# Intro\n\nSome *text*\nwrapped.\n\n- one\n- two\n  - nested\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n";
        let t = extract(md);
        assert_eq!(t.title.as_deref(), Some("Notes"));
        assert_eq!(t.metadata["tags"], serde_json::json!(["a", "b"]));
        assert_eq!(t.metadata["year"], serde_json::json!(2021));
        assert_eq!(
            kinds(&t),
            vec![
                (BlockKind::Heading(1), "Intro"),
                (BlockKind::Paragraph, "Some text wrapped."),
                (BlockKind::ListItem, "one"),
                (BlockKind::ListItem, "two"),
                (BlockKind::ListItem, "nested"),
                (BlockKind::Table, "| a | b |\n| --- | --- |\n| 1 | 2 |"),
                (BlockKind::Code, "code"),
            ]
        );
    }

    #[test]
    fn title_falls_back_to_first_h1_and_bad_front_matter_stays_text() {
        let t = extract("## Sub\n\n# Main\n");
        assert_eq!(t.title.as_deref(), Some("Main"));
        let t = extract("---\n: : [\n---\nbody");
        assert!(t.metadata.is_empty());
        assert!(t.blocks.iter().any(|b| b.text.contains("body")));
    }
}
