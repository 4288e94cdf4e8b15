//! Structured text: what extraction produces and chunking consumes. A document
//! is a sequence of blocks (headings, paragraphs, list items, tables, code),
//! each with the page it sits on when the format has pages.

use serde::{Deserialize, Serialize};

/// The kind of a block of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "level")]
pub enum BlockKind {
    /// A heading of level 1 (outermost) to 6.
    Heading(u8),
    Paragraph,
    ListItem,
    /// A table as a Markdown table: a header row, the separator row, then
    /// one line per row (see [`Table`]).
    Table,
    Code,
}

/// One block of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    pub kind: BlockKind,
    pub text: String,
    /// 1-based page number, for paged formats.
    pub page: Option<u32>,
    /// A table's caption ("Table 2: Unit prices by vendor"), on one line:
    /// rendered above the table and cited with every chunk of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// The number a table's first row is cited by (a spreadsheet's row
    /// number, a CSV file's line); rows count from 1 when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_row: Option<u32>,
}

impl Block {
    pub fn new(kind: BlockKind, text: impl Into<String>, page: Option<u32>) -> Self {
        Block {
            kind,
            text: text.into(),
            page,
            caption: None,
            first_row: None,
        }
    }

    /// Sets a table's caption, on one line (the chunker finds the table's
    /// header right after it); a blank caption is none.
    pub fn set_caption(&mut self, caption: &str) {
        let caption = caption.split_whitespace().collect::<Vec<_>>().join(" ");
        self.caption = (!caption.is_empty()).then_some(caption);
    }

    /// The block as it appears in the document's Markdown text.
    pub fn render(&self) -> String {
        match self.kind {
            BlockKind::Heading(level) => {
                format!("{} {}", "#".repeat(level.clamp(1, 6) as usize), self.text)
            }
            BlockKind::ListItem => format!("- {}", self.text),
            BlockKind::Code => format!("```\n{}\n```", self.text),
            BlockKind::Table => match &self.caption {
                Some(caption) => format!("{caption}{TABLE_CAPTION_SEPARATOR}{}", self.text),
                None => self.text.clone(),
            },
            BlockKind::Paragraph => self.text.clone(),
        }
    }
}

/// Between a table's caption and its header row in the rendered text.
pub const TABLE_CAPTION_SEPARATOR: &str = "\n\n";

/// A table as extractors find it: a caption, a header row and the rows
/// below it. [`Table::into_block`] renders it as a Markdown table whose
/// every row is one line, which is what lets the chunker cut a table
/// between rows and repeat its header in every chunk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// See [`Block::first_row`].
    pub first_row: Option<u32>,
}

impl Table {
    /// A table whose first row is its header (tables that mark none: DOCX,
    /// ODF, CSV).
    pub fn from_rows(mut rows: Vec<Vec<String>>) -> Self {
        let header = if rows.is_empty() {
            Vec::new()
        } else {
            rows.remove(0)
        };
        Table {
            header,
            rows,
            ..Default::default()
        }
    }

    /// The table as a block, or `None` when no cell holds text. Rows are
    /// padded to the widest; a cell's line breaks become spaces and its
    /// pipes are escaped, so that a row stays one line.
    pub fn into_block(self, page: Option<u32>) -> Option<Block> {
        let Table {
            caption,
            header,
            rows,
            first_row,
        } = self;
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .filter(|row| row.iter().any(|c| !c.trim().is_empty()))
            .collect();
        if header.iter().all(|c| c.trim().is_empty()) && rows.is_empty() {
            return None;
        }
        let width = rows
            .iter()
            .map(Vec::len)
            .chain([header.len()])
            .max()
            .unwrap_or(0)
            .max(1);
        let mut text = String::new();
        let line = |cells: &[String], text: &mut String| {
            text.push('|');
            for i in 0..width {
                let cell = cells.get(i).map_or("", |c| c.as_str());
                text.push(' ');
                push_cell(text, cell);
                text.push_str(" |");
            }
        };
        line(&header, &mut text);
        text.push('\n');
        text.push('|');
        text.push_str(&" --- |".repeat(width));
        for row in &rows {
            text.push('\n');
            line(row, &mut text);
        }
        let mut block = Block::new(BlockKind::Table, text, page);
        block.first_row = first_row;
        if let Some(caption) = caption {
            block.set_caption(&caption);
        }
        Some(block)
    }
}

/// A cell's text on one line, pipes escaped.
fn push_cell(out: &mut String, cell: &str) {
    let mut words = cell.split_whitespace().peekable();
    while let Some(word) = words.next() {
        for c in word.chars() {
            if c == '|' {
                out.push('\\');
            }
            out.push(c);
        }
        if words.peek().is_some() {
            out.push(' ');
        }
    }
}

/// Whether a line of text reads as a table's caption: "Table 2: …",
/// "Tab. 3 …", "Tabelle 1 …", "Tableau IV …", in the languages folio
/// analyses.
pub fn is_table_caption(text: &str) -> bool {
    let text = text.trim_start();
    let Some((word, rest)) = text.split_once(|c: char| c.is_whitespace() || c == '.') else {
        return false;
    };
    const WORDS: [&str; 8] = [
        "table", "tab", "tabelle", "tableau", "tabla", "tabella", "tabel", "tabela",
    ];
    if !WORDS.contains(&word.to_lowercase().as_str()) {
        return false;
    }
    let number: String = rest
        .trim_start_matches(['.', ' '])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect();
    let number = number.trim_end_matches(['.', '-']);
    !number.is_empty()
        && (number.chars().next().is_some_and(|c| c.is_ascii_digit())
            || number.chars().all(|c| "IVXLivxl".contains(c)))
        && text.chars().count() <= 400
}

/// A document's text with its structure and the metadata its format carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StructuredText {
    pub title: Option<String>,
    pub blocks: Vec<Block>,
    /// Format metadata: front matter, PDF info, Office core properties.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Number of pages, for paged formats.
    pub page_count: Option<u32>,
    /// Pages (1-based) that carry no usable text layer — scans — for OCR.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub textless_pages: Vec<u32>,
    /// Documents held inside this one, each to be a document of its own:
    /// a mailbox's messages, a message's attachments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// Images in the document's flow (charts, screenshots, scanned
    /// figures), for OCR: read when OCR is on, their text goes in where
    /// each image stands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
}

/// An image in a document's flow (see [`StructuredText::figures`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The image file (PNG, JPEG or TIFF).
    pub image: Vec<u8>,
    /// The number of blocks before the image: where its text goes in.
    pub at: usize,
    pub page: Option<u32>,
}

/// A document inside another (see [`StructuredText::parts`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// Names the part within its container, uniquely and stably across
    /// versions of the container (a message's Message-ID, an attachment's
    /// file name): the part's source is the container's, `#`, this key.
    pub key: String,
    /// The part's own format ("eml", "pdf", …).
    pub format: String,
    pub text: StructuredText,
    /// The part's own bytes, when its document keeps them: a PDF (an
    /// archive's member, a message's attachment), whose pages can then be
    /// shown as images. Outside what the part's hash covers.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "base64_bytes"
    )]
    pub original: Option<Vec<u8>>,
}

/// Bytes as a base64 string, in the extraction worker's JSON answer.
mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, to: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(bytes) => to.serialize_some(&STANDARD.encode(bytes)),
            None => to.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<Option<Vec<u8>>, D::Error> {
        Option::<String>::deserialize(from)?
            .map(|text| STANDARD.decode(text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// Between a container's source and a part's key in the part's source.
pub const PART_SEPARATOR: char = '#';

/// Letters and digits in `blocks`: how much text a page really has.
pub fn alphanumerics<'a>(blocks: impl IntoIterator<Item = &'a Block>) -> usize {
    blocks
        .into_iter()
        .map(|b| b.text.chars().filter(|c| c.is_alphanumeric()).count())
        .sum()
}

/// The document text with each block's char span in it.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedText {
    pub text: String,
    /// `(char_start, char_end)` of each block's rendering, in block order.
    pub spans: Vec<(u64, u64)>,
}

/// Blocks are separated by a blank line in the document text.
pub const BLOCK_SEPARATOR: &str = "\n\n";

impl StructuredText {
    /// True when no block carries any non-whitespace text.
    pub fn is_empty(&self) -> bool {
        self.blocks.iter().all(|b| b.text.trim().is_empty())
    }

    /// Puts `blocks` in place of what `page` held, keeping the pages in
    /// order (a page's OCR text over its thin or missing text layer).
    pub fn replace_page(&mut self, page: u32, blocks: Vec<Block>) {
        self.blocks.retain(|b| b.page != Some(page));
        let at = self
            .blocks
            .partition_point(|b| b.page.is_some_and(|p| p < page));
        self.blocks.splice(at..at, blocks);
    }

    /// Renders the blocks to Markdown, recording each block's char span.
    pub fn render(&self) -> RenderedText {
        let mut text = String::new();
        let mut spans = Vec::with_capacity(self.blocks.len());
        let mut chars = 0u64;
        for (i, block) in self.blocks.iter().enumerate() {
            if i > 0 {
                text.push_str(BLOCK_SEPARATOR);
                chars += BLOCK_SEPARATOR.len() as u64;
            }
            let rendered = block.render();
            let len = rendered.chars().count() as u64;
            spans.push((chars, chars + len));
            text.push_str(&rendered);
            chars += len;
        }
        RenderedText { text, spans }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parts_kept_bytes_cross_json_as_base64() {
        let part = Part {
            key: "a.pdf".into(),
            format: "pdf".into(),
            text: StructuredText::default(),
            original: Some(vec![0, 255, b'%', b'P']),
        };
        let json = serde_json::to_value(&part).unwrap();
        assert_eq!(json["original"], "AP8lUA==");
        assert_eq!(serde_json::from_value::<Part>(json).unwrap(), part);
        let without = Part {
            original: None,
            ..part
        };
        let json = serde_json::to_value(&without).unwrap();
        assert!(json.get("original").is_none());
        assert_eq!(serde_json::from_value::<Part>(json).unwrap(), without);
    }

    #[test]
    fn render_records_char_spans() {
        let text = StructuredText {
            blocks: vec![
                Block::new(BlockKind::Heading(2), "Über", None),
                Block::new(BlockKind::Paragraph, "body", None),
            ],
            ..Default::default()
        };
        let r = text.render();
        assert_eq!(r.text, "## Über\n\nbody");
        let chars: Vec<char> = r.text.chars().collect();
        let (s, e) = r.spans[1];
        assert_eq!(
            chars[s as usize..e as usize].iter().collect::<String>(),
            "body"
        );
        assert_eq!(r.spans[0], (0, 7));
    }

    #[test]
    fn a_page_replaced_keeps_its_place() {
        let block = |text: &str, page| Block::new(BlockKind::Paragraph, text, Some(page));
        let mut text = StructuredText {
            blocks: vec![block("one", 1), block("stamp", 2), block("three", 3)],
            ..Default::default()
        };
        text.replace_page(2, vec![block("two a", 2), block("two b", 2)]);
        text.replace_page(4, vec![block("four", 4)]);
        let texts: Vec<&str> = text.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["one", "two a", "two b", "three", "four"]);
    }
}
