//! Chunking that follows structure: a document is cut at headings first, then
//! between blocks (paragraphs, list items, tables), then between sentences,
//! then between words, so that every chunk's embedded text — a short context
//! header (title and section path) plus the chunk — fits the encoder's window
//! measured in model tokens. Nothing is truncated silently.
//!
//! A table is a section of its own, named by its caption (or "Table N"): it
//! is cut between rows, never inside one, each chunk of it is cited with
//! its row range, and every chunk after the first repeats the header row in
//! its context header.
//!
//! Pure: token counting comes in through the `TokenCounter` trait.

use folio_core::structured::{RenderedText, TABLE_CAPTION_SEPARATOR};
use folio_core::{Block, BlockKind, StructuredText};
use unicode_segmentation::UnicodeSegmentation;

/// Counts model tokens in a text, without special tokens.
pub trait TokenCounter {
    fn count(&self, text: &str) -> usize;

    /// Tokens of `text` (as `count`) and the token ids the encoder will run
    /// for it, when the counter can give them: the chunker keeps them with
    /// the chunk, so its text is not tokenised again to be embedded.
    fn encode(&self, text: &str) -> Option<(usize, Vec<u32>)> {
        let _ = text;
        None
    }
}

/// How big chunks are, in model tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Aim for chunks of about this many tokens (header included).
    pub target_tokens: usize,
    /// Never exceed this many tokens (header included): the encoder's window
    /// less its special tokens.
    pub max_tokens: usize,
    /// When a section is cut into several chunks, repeat about this many
    /// tokens of the previous chunk's tail at the start of the next.
    pub overlap_tokens: usize,
}

impl ChunkConfig {
    /// A configuration for an encoder window of `window` tokens (special
    /// tokens included): chunks fill the window, and overlap an eighth of it.
    /// Filling the window measured best on the SciFact training split for
    /// lexical, dense and hybrid alike (docs/benchmarks-history.md): fewer cuts keep
    /// a passage's evidence together.
    pub fn for_window(window: usize) -> Self {
        let max_tokens = window.saturating_sub(2).max(16);
        // A long-context encoder (nomic-embed-text: 8,192 tokens) would
        // otherwise make chunks of whole chapters, too coarse to cite.
        let target_tokens = max_tokens.min(Self::DEFAULT_TARGET_CAP);
        ChunkConfig {
            target_tokens,
            max_tokens,
            overlap_tokens: target_tokens / 8,
        }
    }

    /// The largest default chunk: a BERT-size window (512 tokens with the
    /// special ones); `[chunking] target_tokens` may ask for more.
    pub const DEFAULT_TARGET_CAP: usize = 510;

    pub fn validate(&self) -> Result<(), String> {
        if self.max_tokens < 16 {
            return Err("max_tokens must be at least 16".into());
        }
        if self.target_tokens == 0 || self.target_tokens > self.max_tokens {
            return Err(format!(
                "target_tokens must be between 1 and max_tokens ({})",
                self.max_tokens
            ));
        }
        if self.overlap_tokens >= self.target_tokens {
            return Err("overlap_tokens must be smaller than target_tokens".into());
        }
        Ok(())
    }
}

/// A chunk before it has an id: its text is a slice of the rendered document
/// text (`char_start..char_end`), and `embed_text` is what gets embedded and
/// indexed: the context header followed by the text.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkDraft {
    pub text: String,
    pub embed_text: String,
    pub char_start: u64,
    pub char_end: u64,
    pub page_start: Option<u32>,
    pub page_end: Option<u32>,
    pub section_path: Vec<String>,
    /// Tokens of `embed_text`, counted exactly.
    pub token_count: u32,
    /// The encoder's token ids for `embed_text`, when the counter gave them.
    pub ids: Option<Vec<u32>>,
}

/// A piece of text that is never cut further: a block, a sentence, a run of
/// words or, for pathological input, a run of characters. `start..end` is a
/// byte range of the rendered text.
#[derive(Debug, Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
    tokens: usize,
    page: Option<u32>,
    /// The table row the unit holds (or is a piece of), as cited.
    row: Option<u32>,
}

/// A heading-delimited run of units sharing one section path, or one table.
struct Section {
    path: Vec<String>,
    units: Vec<Unit>,
    table: Option<TableContext>,
}

impl Section {
    fn new(path: Vec<String>) -> Self {
        Section {
            path,
            units: Vec::new(),
            table: None,
        }
    }
}

/// What a table's chunks share.
struct TableContext {
    /// The header row and the separator row, each ending in a newline.
    columns: String,
    /// Where the table's first unit (its caption, header and first row)
    /// starts: a chunk starting there shows the header in its own text.
    start: usize,
}

/// The context header embedded and indexed with every chunk of a section:
/// the document title and the heading chain.
pub fn context_header(title: Option<&str>, section_path: &[String]) -> String {
    let mut header = String::new();
    if let Some(title) = title.map(str::trim).filter(|t| !t.is_empty()) {
        header.push_str(title);
        header.push('\n');
    }
    let path: Vec<&str> = section_path
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if !path.is_empty() && (path.len() > 1 || Some(path[0]) != title.map(str::trim)) {
        header.push_str(&path.join(" > "));
        header.push('\n');
    }
    header
}

/// A text longer than this many bytes per token of the limit it is checked
/// against is over that limit without being counted. Real text runs at
/// about four bytes per model token; a WordPiece token covers at most one
/// word of a hundred chars. So only a unit that must be cut anyway is left
/// uncounted, and no text of unbounded length ever reaches the tokenizer,
/// whose working memory is a hundred bytes or more per token of its input.
pub const MAX_BYTES_PER_TOKEN: usize = 32;

/// Tokens of `text` when it may be within `limit`; `limit + 1` when it is
/// too long to be.
fn count_within(counter: &dyn TokenCounter, text: &str, limit: usize) -> usize {
    if text.len() > limit.saturating_mul(MAX_BYTES_PER_TOKEN) {
        limit.saturating_add(1)
    } else {
        counter.count(text)
    }
}

/// Cuts `text` (whose rendering is `rendered`) into chunks, stopping once
/// there are more than `max_chunks`: a caller that refuses such a document
/// learns so without holding all of its chunks.
///
/// Memory is a small multiple of the text: units are byte ranges, the
/// char offsets come from a sparse table, and no text longer than
/// `MAX_BYTES_PER_TOKEN` bytes per token of the window is tokenised.
pub fn chunk(
    text: &StructuredText,
    rendered: &RenderedText,
    config: &ChunkConfig,
    counter: &dyn TokenCounter,
    max_chunks: usize,
) -> Vec<ChunkDraft> {
    let doc = Doc::new(&rendered.text);
    let mut drafts = Vec::new();
    for section in sections(text, rendered, &doc, config.max_tokens, counter) {
        let mut header = context_header(text.title.as_deref(), &section.path);
        // A header may take at most a third of the window; beyond that it is
        // context, not content, and is shortened.
        let header_max = config.max_tokens / 3;
        while count_within(counter, &header, header_max) > header_max && header.chars().count() > 8
        {
            let keep = header.chars().count() * 2 / 3;
            header = header.chars().take(keep).collect::<String>() + "\n";
        }
        let header_tokens = if header.is_empty() {
            0
        } else {
            counter.count(&header)
        };
        // A table's header row is repeated when it takes at most a third of
        // what the context header leaves; a wider one is not repeated.
        let columns = section.table.as_ref().and_then(|table| {
            let room = config.max_tokens.saturating_sub(header_tokens) / 3;
            let tokens = count_within(counter, &table.columns, room);
            (tokens <= room).then_some((table, tokens))
        });
        let columns_tokens = columns.map_or(0, |(_, tokens)| tokens);
        let budget = Budget {
            target: config
                .target_tokens
                .saturating_sub(header_tokens + columns_tokens)
                .max(8),
            max: config
                .max_tokens
                .saturating_sub(header_tokens + columns_tokens)
                .max(8),
            // A table's chunks repeat its header, not each other's rows.
            overlap: if section.table.is_some() {
                0
            } else {
                config.overlap_tokens
            },
        };
        let context = Context {
            header: &header,
            path: &section.path,
            columns: columns.map(|(table, _)| (table.columns.as_str(), table.start)),
            table: section.table.is_some(),
        };
        let units = refine(&section.units, &doc, budget.max, counter);
        for group in pack(&units, &budget) {
            emit(
                &group,
                &doc,
                &context,
                config.max_tokens,
                counter,
                &mut drafts,
            );
            if drafts.len() > max_chunks {
                return drafts;
            }
        }
    }
    drafts
}

/// What every chunk of a section is embedded and cited with.
struct Context<'a> {
    header: &'a str,
    path: &'a [String],
    /// A table's header and separator rows, and where its first unit
    /// starts, when its header is repeated.
    columns: Option<(&'a str, usize)>,
    table: bool,
}

#[derive(Clone, Copy)]
struct Budget {
    target: usize,
    max: usize,
    overlap: usize,
}

/// Chars between two entries of `Doc::marks`.
const MARK_STRIDE: usize = 64;

/// The rendered text with a sparse char-index ↔ byte-offset table: the
/// byte offset of every `MARK_STRIDE`-th char (an eighth of a byte per char
/// of ASCII, where a full table took sixteen).
struct Doc<'a> {
    text: &'a str,
    marks: Vec<usize>,
}

impl<'a> Doc<'a> {
    fn new(text: &'a str) -> Self {
        let marks = text
            .char_indices()
            .step_by(MARK_STRIDE)
            .map(|(b, _)| b)
            .collect();
        Doc { text, marks }
    }

    /// The byte offset of char `char_index` (the text's length past its end).
    fn byte(&self, char_index: usize) -> usize {
        let Some(&from) = self.marks.get(char_index / MARK_STRIDE) else {
            return self.text.len();
        };
        self.text[from..]
            .char_indices()
            .nth(char_index % MARK_STRIDE)
            .map_or(self.text.len(), |(b, _)| from + b)
    }

    /// The char index of the char boundary at `byte`.
    fn char_index(&self, byte: usize) -> usize {
        let mark = self.marks.partition_point(|&b| b <= byte).saturating_sub(1);
        let from = self.marks.get(mark).copied().unwrap_or(0);
        mark * MARK_STRIDE + self.text[from..byte].chars().count()
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        &self.text[start..end]
    }
}

/// Groups blocks into sections at headings; every non-heading block becomes
/// one unit carrying its page.
fn sections(
    text: &StructuredText,
    rendered: &RenderedText,
    doc: &Doc<'_>,
    max_tokens: usize,
    counter: &dyn TokenCounter,
) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut path: Vec<(u8, String)> = Vec::new();
    let mut current = Section::new(Vec::new());
    let mut tables = 0u32;
    for (block, &(start, end)) in text.blocks.iter().zip(&rendered.spans) {
        if let BlockKind::Heading(level) = block.kind {
            if !current.units.is_empty() {
                out.push(std::mem::replace(&mut current, Section::new(Vec::new())));
            }
            path.retain(|(l, _)| *l < level);
            path.push((level, block.text.trim().to_string()));
            current.path = path.iter().map(|(_, t)| t.clone()).collect();
            continue;
        }
        if block.text.trim().is_empty() {
            continue;
        }
        let (start, end) = (doc.byte(start as usize), doc.byte(end as usize));
        if block.kind == BlockKind::Table {
            tables += 1;
            let label = block
                .caption
                .clone()
                .unwrap_or_else(|| format!("Table {tables}"));
            let mut table_path = current.path.clone();
            // A sheet's table under the sheet's heading is named once.
            if table_path.last() != Some(&label) {
                table_path.push(label);
            }
            if let Some(table) =
                table_section(block, table_path, start, end, doc, max_tokens, counter)
            {
                if !current.units.is_empty() {
                    let path = current.path.clone();
                    out.push(std::mem::replace(&mut current, Section::new(path)));
                }
                out.push(table);
                continue;
            }
        }
        let tokens = count_within(counter, doc.slice(start, end), max_tokens);
        current.units.push(Unit {
            start,
            end,
            tokens,
            page: block.page,
            row: None,
        });
    }
    if !current.units.is_empty() {
        out.push(current);
    }
    // A document of headings alone (a note's title, an outline not yet
    // written) is its headings: found by them, not refused as empty.
    if out.is_empty() {
        let mut outline = Section::new(Vec::new());
        for (block, &(start, end)) in text.blocks.iter().zip(&rendered.spans) {
            if matches!(block.kind, BlockKind::Heading(_)) && !block.text.trim().is_empty() {
                let (start, end) = (doc.byte(start as usize), doc.byte(end as usize));
                outline.units.push(Unit {
                    start,
                    end,
                    tokens: count_within(counter, doc.slice(start, end), max_tokens),
                    page: block.page,
                    row: None,
                });
            }
        }
        if !outline.units.is_empty() {
            out.push(outline);
        }
    }
    out
}

/// A table block as a section of its own: one unit per row, the first
/// holding the caption and the header too. `None` when the rendered block
/// is not the Markdown table `Table::into_block` makes.
fn table_section(
    block: &Block,
    path: Vec<String>,
    start: usize,
    end: usize,
    doc: &Doc<'_>,
    max_tokens: usize,
    counter: &dyn TokenCounter,
) -> Option<Section> {
    let rendered = doc.slice(start, end);
    let body_at = match &block.caption {
        Some(caption) => {
            let lead = format!("{caption}{TABLE_CAPTION_SEPARATOR}");
            rendered.starts_with(&lead).then_some(start + lead.len())?
        }
        None => start,
    };
    let mut lines = Vec::new();
    let mut at = body_at;
    for line in doc.slice(body_at, end).split('\n') {
        lines.push((at, at + line.len()));
        at += line.len() + 1;
    }
    if lines.len() < 2 || !doc.slice(lines[1].0, lines[1].1).starts_with("| ---") {
        return None;
    }
    let columns = format!("{}\n", doc.slice(lines[0].0, lines[1].1));
    let first_row = block.first_row.unwrap_or(1);
    let mut units = Vec::with_capacity(lines.len() - 1);
    if lines.len() == 2 {
        units.push(Unit {
            start,
            end,
            tokens: count_within(counter, rendered, max_tokens),
            page: block.page,
            row: None,
        });
    }
    for (i, &(line_start, line_end)) in lines[2..].iter().enumerate() {
        let unit_start = if i == 0 { start } else { line_start };
        units.push(Unit {
            start: unit_start,
            end: line_end,
            tokens: count_within(counter, doc.slice(unit_start, line_end), max_tokens),
            page: block.page,
            row: Some(first_row.saturating_add(i as u32)),
        });
    }
    Some(Section {
        path,
        units,
        table: Some(TableContext { columns, start }),
    })
}

/// Splits units over `max` tokens: into sentences, then word runs, then chars.
fn refine(units: &[Unit], doc: &Doc<'_>, max: usize, counter: &dyn TokenCounter) -> Vec<Unit> {
    let mut out = Vec::with_capacity(units.len());
    for unit in units {
        if unit.tokens <= max {
            out.push(*unit);
            continue;
        }
        let text = doc.slice(unit.start, unit.end);
        for (offset, sentence) in text.split_sentence_bound_indices() {
            let sentence = sentence.trim_end();
            if sentence.trim_start().is_empty() {
                continue;
            }
            let start = unit.start + offset;
            let sentence = Unit {
                start,
                end: start + sentence.len(),
                tokens: count_within(counter, sentence, max),
                page: unit.page,
                row: unit.row,
            };
            if sentence.tokens <= max {
                out.push(sentence);
            } else {
                split_words(sentence, doc, max, counter, &mut out);
            }
        }
    }
    out
}

/// Cuts an over-long sentence into runs of whole words of at most `max`
/// tokens; a single word longer than that is cut by characters.
fn split_words(
    unit: Unit,
    doc: &Doc<'_>,
    max: usize,
    counter: &dyn TokenCounter,
    out: &mut Vec<Unit>,
) {
    let mut start = unit.start;
    let mut end = unit.start;
    let mut tokens = 0;
    let mut i = unit.start;
    while i < unit.end {
        // One word plus the whitespace before it.
        let rest = doc.slice(i, unit.end);
        let word = rest.trim_start();
        let word_start = i + (rest.len() - word.len());
        let j = word_start + word.find(char::is_whitespace).unwrap_or(word.len());
        let word_tokens = count_within(counter, doc.slice(i, j), max);
        if tokens + word_tokens > max && end > start {
            out.push(Unit {
                start,
                end,
                tokens,
                page: unit.page,
                row: unit.row,
            });
            start = word_start;
            tokens = 0;
        }
        if word_tokens > max {
            // A "word" longer than the window (a hash, base64): cut by chars.
            let step = max.max(1);
            let piece = doc.slice(start, j);
            let mut cuts: Vec<usize> = piece
                .char_indices()
                .step_by(step)
                .map(|(b, _)| start + b)
                .collect();
            cuts.push(j);
            for pair in cuts.windows(2) {
                out.push(Unit {
                    start: pair[0],
                    end: pair[1],
                    tokens: count_within(counter, doc.slice(pair[0], pair[1]), max),
                    page: unit.page,
                    row: unit.row,
                });
            }
            start = j;
            end = j;
            tokens = 0;
        } else {
            tokens += word_tokens;
            end = j;
        }
        i = j;
    }
    if end > start {
        out.push(Unit {
            start,
            end,
            tokens,
            page: unit.page,
            row: unit.row,
        });
    }
}

/// Packs units greedily up to the target; when a section needs several
/// chunks, each new chunk starts with the previous chunk's last units that fit
/// in the overlap.
fn pack(units: &[Unit], budget: &Budget) -> Vec<Vec<Unit>> {
    let mut groups: Vec<Vec<Unit>> = Vec::new();
    let mut group: Vec<Unit> = Vec::new();
    let mut tokens = 0;
    let mut fresh = 0; // units in `group` that are not overlap
    for unit in units {
        if fresh > 0 && tokens + unit.tokens > budget.target {
            let done = std::mem::take(&mut group);
            let mut overlap: Vec<Unit> = Vec::new();
            let mut overlap_tokens = 0;
            for u in done.iter().rev() {
                if overlap_tokens + u.tokens > budget.overlap || overlap.len() + 1 >= done.len() {
                    break;
                }
                overlap_tokens += u.tokens;
                overlap.insert(0, *u);
            }
            groups.push(done);
            if overlap_tokens + unit.tokens > budget.target {
                overlap.clear();
                overlap_tokens = 0;
            }
            group = overlap;
            tokens = overlap_tokens;
            fresh = 0;
        }
        group.push(*unit);
        tokens += unit.tokens;
        fresh += 1;
    }
    if fresh > 0 {
        groups.push(group);
    }
    groups
}

/// Turns a group into a draft, verifying the exact token count of the
/// embedded text; a group over the window is halved until it fits.
fn emit(
    group: &[Unit],
    doc: &Doc<'_>,
    context: &Context<'_>,
    max_tokens: usize,
    counter: &dyn TokenCounter,
    out: &mut Vec<ChunkDraft>,
) {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return;
    };
    let text = doc.slice(first.start, last.end).to_string();
    let embed_text = match context.columns {
        // Within a table, a chunk that does not start with the header row
        // carries it in its context header.
        Some((columns, start)) if first.start != start => {
            format!("{}{columns}{text}", context.header)
        }
        _ => format!("{}{text}", context.header),
    };
    let (token_count, ids) = match counter.encode(&embed_text) {
        Some((count, ids)) => (count, Some(ids)),
        None => (counter.count(&embed_text), None),
    };
    if token_count > max_tokens && group.len() > 1 {
        let (a, b) = group.split_at(group.len() / 2);
        emit(a, doc, context, max_tokens, counter, out);
        emit(b, doc, context, max_tokens, counter, out);
        return;
    }
    let pages = group.iter().filter_map(|u| u.page);
    let mut section_path = context.path.to_vec();
    let rows = group.iter().filter_map(|u| u.row);
    if let (true, Some(from), Some(to)) = (context.table, rows.clone().min(), rows.max()) {
        section_path.push(if from == to {
            format!("row {from}")
        } else {
            format!("rows {from}–{to}")
        });
    }
    out.push(ChunkDraft {
        text,
        embed_text,
        char_start: doc.char_index(first.start) as u64,
        char_end: doc.char_index(last.end) as u64,
        page_start: pages.clone().min(),
        page_end: pages.max(),
        section_path,
        token_count: token_count as u32,
        ids,
    });
}

#[cfg(test)]
mod tests;
