//! RTF: paragraphs, headings from outline levels and heading styles, list
//! items, tables (rows of `\cell`s) with their captions, the `\info` group
//! as metadata. Text in 8-bit code pages (the document's `\ansicpg`, a
//! font's `\fcharset`) and `\u` escapes is decoded; pictures, objects,
//! field instructions, headers and footers are skipped.

use std::collections::HashMap;

use encoding_rs::Encoding;
use folio_core::{Block, BlockKind, StructuredText, is_table_caption};

use crate::{ExtractError, Format};

/// Groups nested deeper than this are refused (real documents stay under
/// a few dozen).
const MAX_DEPTH: usize = 1_000;

/// Where a group's text goes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Sink {
    Body,
    Skip,
    /// A field of the `\info` group.
    Info(&'static str),
    /// A style's name in the stylesheet.
    Style,
    /// A font's name in the font table (read for its charset only).
    Font,
}

#[derive(Clone, Copy)]
struct Group {
    sink: Sink,
    /// Characters to skip after a `\u` escape.
    uc: u32,
    font: Option<i32>,
    /// A `\*` destination: unknown control words skip the group.
    ignorable: bool,
}

/// The paragraph properties `\pard` resets.
#[derive(Default, Clone, Copy)]
struct Properties {
    style: i32,
    outline: Option<u8>,
    in_table: bool,
    list: bool,
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    groups: Vec<Group>,
    /// 8-bit text not yet decoded, and the encoding it is in.
    pending: Vec<u8>,
    codepage: &'static Encoding,
    fonts: HashMap<i32, &'static Encoding>,
    /// The font of text outside any `\f` (`\deff`).
    default_font: Option<i32>,
    /// The font and style being defined in the font table or stylesheet.
    defining: i32,
    style_names: HashMap<i32, String>,
    style_outlines: HashMap<i32, u8>,
    /// Characters still to skip after a `\u` escape.
    skip_chars: u32,
    properties: Properties,
    paragraph: String,
    cell: Vec<String>,
    row: Vec<String>,
    table: Vec<Vec<String>>,
    blocks: Vec<Block>,
    /// Whether the last block reads as a table's caption.
    caption_last: bool,
    info: serde_json::Map<String, serde_json::Value>,
    info_text: String,
}

/// Destinations whose text is not the document's body.
const SKIPPED: &[&str] = &[
    "colortbl",
    "pict",
    "object",
    "header",
    "headerl",
    "headerr",
    "headerf",
    "footer",
    "footerl",
    "footerr",
    "footerf",
    "fldinst",
    "themedata",
    "colorschememapping",
    "datastore",
    "latentstyles",
    "listtable",
    "listoverridetable",
    "rsidtbl",
    "generator",
    "xmlnstbl",
    "mmathPr",
    "pgdsctbl",
    "filetbl",
    "revtbl",
    "userprops",
    "bkmkstart",
    "bkmkend",
    "fldtype",
    "nonshppict",
    "shppict",
    "sp",
    "xe",
    "tc",
    "template",
    "listtext",
    "pntext",
    "pntxta",
    "pntxtb",
    "wgrffmtfilter",
];

/// The encoding of a Windows code page, Windows-1252 when folio knows no
/// better.
fn codepage(number: i32) -> &'static Encoding {
    let label = match number {
        874 => "windows-874",
        932 => "shift_jis",
        936 => "gbk",
        949 => "euc-kr",
        950 => "big5",
        1250..=1258 => {
            return Encoding::for_label(format!("windows-{number}").as_bytes())
                .unwrap_or(encoding_rs::WINDOWS_1252);
        }
        10000 => "macintosh",
        20866 => "koi8-r",
        65001 => "utf-8",
        _ => "windows-1252",
    };
    Encoding::for_label(label.as_bytes()).unwrap_or(encoding_rs::WINDOWS_1252)
}

/// The code page of a font's `\fcharset`.
fn charset(number: i32) -> Option<&'static Encoding> {
    let page = match number {
        0 => 1252,
        77 => 10000,
        128 => 932,
        129 => 949,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        _ => return None,
    };
    Some(codepage(page))
}

pub fn extract(bytes: &[u8]) -> Result<StructuredText, ExtractError> {
    if !bytes.starts_with(b"{\\rtf") {
        return Err(ExtractError::malformed(Format::Rtf, "no {\\rtf header"));
    }
    let mut parser = Parser {
        bytes,
        at: 0,
        groups: Vec::new(),
        pending: Vec::new(),
        codepage: encoding_rs::WINDOWS_1252,
        fonts: HashMap::new(),
        default_font: None,
        defining: 0,
        style_names: HashMap::new(),
        style_outlines: HashMap::new(),
        skip_chars: 0,
        properties: Properties::default(),
        paragraph: String::new(),
        cell: Vec::new(),
        row: Vec::new(),
        table: Vec::new(),
        blocks: Vec::new(),
        caption_last: false,
        info: serde_json::Map::new(),
        info_text: String::new(),
    };
    parser.run()?;
    parser.end_paragraph();
    parser.end_table();
    let title = parser
        .info
        .remove("title")
        .and_then(|v| v.as_str().map(str::to_string));
    Ok(StructuredText {
        title,
        blocks: parser.blocks,
        metadata: parser.info,
        ..Default::default()
    })
}

impl Parser<'_> {
    fn group(&self) -> Group {
        self.groups.last().copied().unwrap_or(Group {
            sink: Sink::Body,
            uc: 1,
            font: None,
            ignorable: false,
        })
    }

    fn group_mut(&mut self) -> Option<&mut Group> {
        self.groups.last_mut()
    }

    fn run(&mut self) -> Result<(), ExtractError> {
        while self.at < self.bytes.len() {
            let byte = self.bytes[self.at];
            self.at += 1;
            match byte {
                b'{' => {
                    self.flush();
                    if self.groups.len() >= MAX_DEPTH {
                        return Err(ExtractError::malformed(
                            Format::Rtf,
                            format!("groups nested over {MAX_DEPTH} deep"),
                        ));
                    }
                    let mut group = self.group();
                    group.ignorable = false;
                    self.groups.push(group);
                }
                b'}' => {
                    self.flush();
                    let closed = self.groups.pop();
                    if let Some(closed) = closed {
                        self.close(closed.sink);
                    }
                    if self.groups.is_empty() {
                        return Ok(());
                    }
                }
                b'\\' => self.control()?,
                b'\r' | b'\n' => {}
                _ => self.byte(byte),
            }
        }
        Ok(())
    }

    /// A group closed: a style's or an info field's text is complete.
    fn close(&mut self, sink: Sink) {
        let parent = self.group().sink;
        match sink {
            Sink::Info(field) if parent != Sink::Info(field) => {
                let value = std::mem::take(&mut self.info_text).trim().to_string();
                if !value.is_empty() {
                    let value = if field == "authors" {
                        serde_json::json!([value])
                    } else {
                        value.into()
                    };
                    self.info.insert(field.into(), value);
                }
            }
            // A style's entry in the stylesheet.
            Sink::Style if parent == Sink::Style => {
                let name = std::mem::take(&mut self.info_text);
                let name = name.trim().trim_end_matches(';').trim().to_lowercase();
                self.style_names.insert(self.defining, name);
                self.defining = 0;
            }
            _ => {}
        }
    }

    /// A raw byte of text (in the current code page).
    fn byte(&mut self, byte: u8) {
        if self.skip_chars > 0 {
            self.skip_chars -= 1;
            return;
        }
        if self.group().sink != Sink::Skip {
            self.pending.push(byte);
        }
    }

    /// Decodes the pending 8-bit text into its sink.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let encoding = self
            .group()
            .font
            .or(self.default_font)
            .and_then(|f| self.fonts.get(&f).copied())
            .unwrap_or(self.codepage);
        let (text, _, _) = encoding.decode(&self.pending);
        let text = text.into_owned();
        self.pending.clear();
        self.push(&text);
    }

    fn push(&mut self, text: &str) {
        match self.group().sink {
            Sink::Body => self.paragraph.push_str(text),
            Sink::Info(_) | Sink::Style => self.info_text.push_str(text),
            Sink::Skip | Sink::Font => {}
        }
    }

    fn control(&mut self) -> Result<(), ExtractError> {
        let Some(&next) = self.bytes.get(self.at) else {
            return Ok(());
        };
        if !next.is_ascii_alphabetic() {
            self.at += 1;
            return self.symbol(next);
        }
        let start = self.at;
        while self.at < self.bytes.len()
            && self.bytes[self.at].is_ascii_alphabetic()
            && self.at - start < 32
        {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
        let number_start = self.at;
        if self.bytes.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        while self.at < self.bytes.len()
            && self.bytes[self.at].is_ascii_digit()
            && self.at - number_start < 10
        {
            self.at += 1;
        }
        let parameter = std::str::from_utf8(&self.bytes[number_start..self.at])
            .ok()
            .and_then(|n| n.parse::<i64>().ok())
            .map(|n| n.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32);
        if self.bytes.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
        self.word(word, parameter);
        Ok(())
    }

    fn symbol(&mut self, symbol: u8) -> Result<(), ExtractError> {
        match symbol {
            b'\'' => {
                let hex = self.bytes.get(self.at..self.at + 2).unwrap_or_default();
                self.at = (self.at + 2).min(self.bytes.len());
                if let Some(byte) = std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    self.byte(byte);
                }
            }
            b'\\' | b'{' | b'}' => self.byte(symbol),
            b'*' => {
                if let Some(group) = self.group_mut() {
                    group.ignorable = true;
                }
            }
            b'~' => self.text("\u{a0}"),
            b'_' => self.text("-"),
            b'\r' | b'\n' => self.word("par", None),
            _ => {}
        }
        Ok(())
    }

    /// Text a control word stands for.
    fn text(&mut self, text: &str) {
        self.flush();
        if self.skip_chars > 0 {
            self.skip_chars -= 1;
            return;
        }
        self.push(text);
    }

    fn set_sink(&mut self, sink: Sink) {
        if let Some(group) = self.group_mut() {
            group.sink = sink;
        }
    }

    fn word(&mut self, word: &str, parameter: Option<i32>) {
        self.flush();
        let sink = self.group().sink;
        match word {
            "ansicpg" => self.codepage = codepage(parameter.unwrap_or(1252)),
            "mac" => self.codepage = codepage(10000),
            "deff" => self.default_font = parameter,
            "fonttbl" => self.set_sink(Sink::Font),
            "stylesheet" => self.set_sink(Sink::Style),
            "info" => self.set_sink(Sink::Skip),
            "title" | "subject" | "author" | "keywords" | "doccomm"
                if self.groups.len() >= 2
                    && self.groups[self.groups.len() - 2].sink == Sink::Skip =>
            {
                let field = match word {
                    "title" => "title",
                    "subject" => "subject",
                    "author" => "authors",
                    "keywords" => "keywords",
                    _ => "description",
                };
                self.info_text.clear();
                self.set_sink(Sink::Info(field));
            }
            "f" => {
                if sink == Sink::Font {
                    self.defining = parameter.unwrap_or(0);
                } else if let Some(group) = self.group_mut() {
                    group.font = parameter;
                }
            }
            "fcharset" if sink == Sink::Font => {
                if let Some(encoding) = parameter.and_then(charset) {
                    self.fonts.insert(self.defining, encoding);
                }
            }
            "s" if sink == Sink::Style => {
                self.defining = parameter.unwrap_or(0);
                self.info_text.clear();
            }
            "s" => self.properties.style = parameter.unwrap_or(0),
            "outlinelevel" => {
                let level = parameter
                    .filter(|l| (0..9).contains(l))
                    .map(|l| l as u8 + 1);
                if sink == Sink::Style {
                    if let Some(level) = level {
                        self.style_outlines.insert(self.defining, level);
                    }
                } else {
                    self.properties.outline = level;
                }
            }
            "uc" => {
                if let Some(group) = self.group_mut() {
                    group.uc = parameter.unwrap_or(1).clamp(0, 8) as u32;
                }
            }
            "u" => {
                if let Some(n) = parameter {
                    let code = if n < 0 { n + 65_536 } else { n } as u32;
                    let c = char::from_u32(code).unwrap_or('\u{fffd}');
                    self.push(c.encode_utf8(&mut [0; 4]));
                    self.skip_chars = self.group().uc;
                }
            }
            "bin" => {
                // Binary data: skipped, whatever destination holds it.
                let length = parameter.unwrap_or(0).max(0) as usize;
                self.at = self.at.saturating_add(length).min(self.bytes.len());
            }
            "pard" => self.properties = Properties::default(),
            "intbl" => self.properties.in_table = true,
            "ls" | "ilvl" | "pnlvlblt" | "pnlvlbody" => self.properties.list = true,
            "par" | "sect" | "page" if sink == Sink::Body => self.end_paragraph(),
            "cell" if sink == Sink::Body => {
                self.end_paragraph_in_cell();
                let cell = std::mem::take(&mut self.cell).join(" ");
                self.row.push(cell);
            }
            "row" if sink == Sink::Body => {
                let row = std::mem::take(&mut self.row);
                if row.iter().any(|c| !c.is_empty()) {
                    self.table.push(row);
                }
            }
            "nestcell" | "nestrow" => self.text(" "),
            "line" => self.text("\n"),
            "tab" => self.text("\t"),
            "emdash" => self.text("\u{2014}"),
            "endash" => self.text("\u{2013}"),
            "bullet" => self.text("\u{2022}"),
            "lquote" => self.text("\u{2018}"),
            "rquote" => self.text("\u{2019}"),
            "ldblquote" => self.text("\u{201c}"),
            "rdblquote" => self.text("\u{201d}"),
            // Known non-text destinations, and any `\*` destination folio
            // does not read (a field's result is read).
            word if (SKIPPED.contains(&word) || self.group().ignorable) && word != "fldrslt" => {
                self.set_sink(Sink::Skip);
            }
            _ => {}
        }
    }

    fn end_paragraph_in_cell(&mut self) {
        let text = std::mem::take(&mut self.paragraph).trim().to_string();
        if !text.is_empty() {
            self.cell.push(text);
        }
    }

    fn end_paragraph(&mut self) {
        if self.properties.in_table {
            self.end_paragraph_in_cell();
            return;
        }
        self.end_table();
        let text = std::mem::take(&mut self.paragraph).trim().to_string();
        if text.is_empty() {
            return;
        }
        let style = self.properties.style;
        let level = self.properties.outline.or_else(|| {
            self.style_outlines.get(&style).copied().or_else(|| {
                let name = self.style_names.get(&style)?;
                let level = name.strip_prefix("heading ")?.trim().parse::<u8>().ok()?;
                Some(level.clamp(1, 6))
            })
        });
        let is_title = self.style_names.get(&style).is_some_and(|n| n == "title");
        let captions_table = is_table_caption(&text)
            || self.style_names.get(&style).is_some_and(|n| n == "caption")
                && !crate::docx::is_figure_caption(&text);
        if captions_table
            && let Some(table) = self.blocks.last_mut()
            && table.kind == BlockKind::Table
            && table.caption.is_none()
        {
            table.set_caption(&text);
            self.caption_last = false;
            return;
        }
        self.caption_last = captions_table;
        let kind = match level {
            Some(level) => BlockKind::Heading(level.clamp(1, 6)),
            None if is_title => BlockKind::Heading(1),
            None if self.properties.list => BlockKind::ListItem,
            None => BlockKind::Paragraph,
        };
        if is_title && !self.info.contains_key("title") {
            self.info.insert("title".into(), text.clone().into());
        }
        self.blocks.push(Block::new(kind, text, None));
    }

    fn end_table(&mut self) {
        if !self.row.is_empty() {
            let row = std::mem::take(&mut self.row);
            if row.iter().any(|c| !c.is_empty()) {
                self.table.push(row);
            }
        }
        if self.table.is_empty() {
            return;
        }
        crate::push_table(
            &mut self.blocks,
            std::mem::take(&mut self.table),
            std::mem::take(&mut self.caption_last),
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rtf: &str) -> Vec<(BlockKind, String)> {
        extract(rtf.as_bytes())
            .unwrap()
            .blocks
            .into_iter()
            .map(|b| (b.kind, b.render()))
            .collect()
    }

    #[test]
    fn code_pages_unicode_escapes_and_skipped_destinations() {
        let rtf = r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fnil Arial;}{\f1\fcharset204 Times;}}
{\colortbl;\red0\green0\blue0;}{\*\generator Word;}{\info{\title R\'e9sum\'e9}{\author Ana}}
\pard Caf\'e9 na\u239?ve {\f1 \'cf\'f0\'e8\'e2\'e5\'f2}\par
{\pict\pngblip 89504e47}{\field{\*\fldinst HYPERLINK x}{\fldrslt shown}}\par
{\*\unknowndest hidden}\u26085?\u26412?\par}";
        let doc = extract(rtf.as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Résumé"));
        assert_eq!(doc.metadata["authors"], serde_json::json!(["Ana"]));
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Café naïve Привет", "shown", "日本"]);
    }

    #[test]
    fn headings_lists_and_a_captioned_table() {
        let rtf = r"{\rtf1\ansi{\stylesheet{\s0 Normal;}{\s1\outlinelevel0 heading 1;}{\s2 heading 2;}}
\pard\s1 Methods\par
\pard\s2 Samples\par
\pard\ls1\ilvl0 first item\par
\pard Table 1: Unit prices\par
\trowd\cellx1000\cellx2000\pard\intbl Item\cell Price\cell\row
\trowd\cellx1000\cellx2000\pard\intbl Bolt\par M8\cell 0.12\cell\row
\pard After.\par}";
        assert_eq!(
            texts(rtf),
            [
                (BlockKind::Heading(1), "# Methods".to_string()),
                (BlockKind::Heading(2), "## Samples".to_string()),
                (BlockKind::ListItem, "- first item".to_string()),
                (
                    BlockKind::Table,
                    "Table 1: Unit prices\n\n| Item | Price |\n| --- | --- |\n| Bolt M8 | 0.12 |"
                        .to_string()
                ),
                (BlockKind::Paragraph, "After.".to_string()),
            ]
        );
    }

    #[test]
    fn hostile_input_is_refused_or_bounded() {
        let deep = format!("{{\\rtf1 {}x{}}}", "{".repeat(5_000), "}".repeat(5_000));
        assert!(matches!(
            extract(deep.as_bytes()),
            Err(ExtractError::Malformed { .. })
        ));
        assert!(extract(b"not rtf").is_err());
        // Truncated input, a huge \bin and escapes cut short end cleanly.
        for bytes in [
            &b"{\\rtf1 text \\'e"[..],
            b"{\\rtf1 \\bin99999999999 abc",
            b"{\\rtf1 \\u-99999999999999? x}",
            b"{\\rtf1 \\",
        ] {
            let _ = extract(bytes).unwrap();
        }
    }
}
