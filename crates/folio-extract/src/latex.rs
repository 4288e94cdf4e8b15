//! LaTeX sources: the document's text as a reader sees it, without its
//! markup. Sectioning commands become headings, `itemize`/`enumerate`/
//! `description` items list items, `tabular` (and `tabularx`, `longtable`,
//! `tabu`, `array` outside mathematics) tables, a float's `\caption` the
//! caption of its table ("Table N: …") or a paragraph of its own ("Figure
//! N: …"), `verbatim`/`lstlisting`/`minted` code, `thebibliography` a
//! "References" section. Citations keep their keys (`\cite{knuth84}` reads
//! "[knuth84]"), mathematics its source, accents their letters, the
//! document's own macros their definitions. `\title`, `\author`, `\date`
//! and the language `babel` or `polyglossia` sets are metadata. Files a
//! document `\input`s are documents of their own.

use std::cell::Cell;
use std::collections::HashMap;

use crate::markup::MAX_DEPTH;
use folio_core::{Block, BlockKind, StructuredText, Table, is_table_caption};
use serde_json::Map;

/// Extracts a LaTeX source. Never fails: markup it does not know is read
/// for the text of its arguments, unbalanced braces end at the file's end.
pub fn extract(source: &str) -> StructuredText {
    let source = strip_comments(source);
    let (preamble, body) = match find_env(&source, "document") {
        Some((start, inner, _)) => (&source[..start], inner),
        None => ("", source.as_str()),
    };
    let mut metadata = Map::new();
    let macros = Macros::defined_in(&source);
    let title = command_argument(&source, "title").map(|t| inline(t, &macros));
    let title = title.filter(|t| !t.is_empty());
    if let Some(title) = &title {
        metadata.insert("title".into(), title.clone().into());
    }
    if let Some(authors) = command_argument(&source, "author").map(|a| authors(a, &macros))
        && !authors.is_empty()
    {
        metadata.insert("authors".into(), authors.into());
    }
    if let Some(date) = command_argument(&source, "date").map(|d| inline(d, &macros))
        && !date.is_empty()
    {
        crate::markup::set_date(&mut metadata, &date);
    }
    if let Some(keywords) = command_argument(&source, "keywords").map(|k| inline(k, &macros))
        && !keywords.is_empty()
    {
        metadata.insert("keywords".into(), keywords.into());
    }
    if let Some(language) = language(preamble) {
        metadata.insert("language".into(), language.into());
    }
    let mut reader = Reader {
        macros,
        ..Default::default()
    };
    reader.scan(body, Context::Body);
    reader.flush();
    let blocks = reader.finish(title.as_deref());
    StructuredText {
        title,
        blocks,
        metadata,
        ..Default::default()
    }
}

/// Environments whose text is no markup.
const VERBATIM: &[&str] = &[
    "verbatim",
    "Verbatim",
    "BVerbatim",
    "LVerbatim",
    "spverbatim",
    "lstlisting",
    "minted",
    "alltt",
    "comment",
];

/// Removes `%` comments (an escaped `\%` stays) outside verbatim
/// environments; a line a comment took whole goes, so that it does not
/// break a paragraph in two, and a comment at a line's end takes the line
/// break with it, as TeX reads it.
fn strip_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut verbatim: Option<String> = None;
    for line in source.lines() {
        if let Some(end) = &verbatim {
            if line.contains(end.as_str()) {
                verbatim = None;
            }
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // Only a line that begins an environment is looked at further.
        let verbatim_begins = line.match_indices("\\begin{").find_map(|(at, begin)| {
            let rest = &line[at + begin.len()..];
            VERBATIM.iter().find(|name| {
                rest.strip_prefix(**name)
                    .is_some_and(|r| r.starts_with('}'))
            })
        });
        if let Some(name) = verbatim_begins {
            let end = format!("\\end{{{name}}}");
            if !line.contains(&end) {
                verbatim = Some(end);
            }
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut cut = line.len();
        let mut escaped = false;
        for (i, c) in line.char_indices() {
            match c {
                '\\' => escaped = !escaped,
                '%' if !escaped => {
                    cut = i;
                    break;
                }
                _ => escaped = false,
            }
        }
        if cut < line.len() && line[..cut].trim().is_empty() {
            continue;
        }
        out.push_str(&line[..cut]);
        if cut == line.len() {
            out.push('\n');
        }
    }
    out
}

/// The first `\begin{name}` of `source`: where it starts, its content and
/// where its `\end{name}` ends (same-named environments nest).
fn find_env<'a>(source: &'a str, name: &str) -> Option<(usize, &'a str, usize)> {
    let begin = format!("\\begin{{{name}}}");
    let start = source.find(&begin)?;
    let inner_start = start + begin.len();
    let (inner_end, end) = env_end(source, inner_start, name);
    Some((start, &source[inner_start..inner_end], end))
}

/// Where the environment `name` whose content starts at `from` ends: the
/// start and the end of its `\end{name}` (the text's end when missing).
fn env_end(source: &str, from: usize, name: &str) -> (usize, usize) {
    let begin = format!("\\begin{{{name}}}");
    let end = format!("\\end{{{name}}}");
    let mut depth = 1usize;
    // One pass over the backslashes: nested environments cost no rescans.
    for (at, _) in source[from..].match_indices('\\') {
        let at = from + at;
        let rest = &source[at..];
        if rest.starts_with(&begin) {
            depth += 1;
        } else if rest.starts_with(&end) {
            depth -= 1;
            if depth == 0 {
                return (at, at + end.len());
            }
        }
    }
    (source.len(), source.len())
}

/// The argument of the first `\name{…}` (after any `[…]`), raw.
fn command_argument<'a>(source: &'a str, name: &str) -> Option<&'a str> {
    let needle = format!("\\{name}");
    let mut from = 0;
    while let Some(i) = source[from..].find(&needle) {
        let at = from + i + needle.len();
        from = at;
        if source[at..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let at = skip_optionals(source, skip_space(source, at));
        if let Some((inner, _)) = group(source, at) {
            return Some(inner);
        }
    }
    None
}

/// Authors of an `\author{…}`: split at `\and`, each its first line
/// (affiliations follow a `\\`), without `\thanks`, footnotes or marks.
fn authors(raw: &str, macros: &Macros) -> Vec<String> {
    split_command(raw, "and")
        .into_iter()
        .flat_map(|part| split_command(part, "AND"))
        .filter_map(|part| {
            let first = part.split("\\\\").next().unwrap_or(part);
            let name = drop_commands(first, &["thanks", "footnote", "inst", "textsuperscript"]);
            let name = inline(&name, macros);
            let name = name
                .trim_matches(|c: char| c.is_whitespace() || c == ',' || c.is_ascii_digit())
                .to_string();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// `raw` split at each `\name` that is a whole command.
fn split_command<'a>(raw: &'a str, name: &str) -> Vec<&'a str> {
    let needle = format!("\\{name}");
    let mut parts = Vec::new();
    let (mut start, mut from) = (0, 0);
    while let Some(i) = raw[from..].find(&needle) {
        let at = from + i;
        let after = at + needle.len();
        if raw[after..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            from = after;
            continue;
        }
        parts.push(&raw[start..at]);
        start = after;
        from = after;
    }
    parts.push(&raw[start..]);
    parts
}

/// `raw` without the commands named (and their arguments), and without
/// superscripts in mathematics (`$^1$`).
fn drop_commands(raw: &str, names: &[&str]) -> String {
    let mut out = String::new();
    let mut at = 0;
    while at < raw.len() {
        let rest = &raw[at..];
        if let Some(name) = rest.strip_prefix('\\').map(command_name)
            && names.contains(&name)
        {
            let next = skip_optionals(raw, at + 1 + name.len());
            at = group(raw, next).map_or(next, |(_, end)| end);
            continue;
        }
        if rest.starts_with("$^") {
            at = rest[1..].find('$').map_or(raw.len(), |i| at + 1 + i + 1);
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        at += c.len_utf8();
    }
    out
}

/// The document's main language as `polyglossia` (`\setdefaultlanguage`,
/// `\setmainlanguage`) or `babel` (`main=`, `\babelprovide[main]`, else its
/// last language option, else the class's) names it, else as `hyperref`'s
/// `pdflang`: an ISO 639-1 code where folio knows the name.
fn language(preamble: &str) -> Option<String> {
    for name in ["setdefaultlanguage", "setmainlanguage"] {
        if let Some(language) = command_argument(preamble, name) {
            return Some(babel_code(language.trim()));
        }
    }
    let last_language = |options: &str| {
        options
            .split(',')
            .map(str::trim)
            .rfind(|o| known_language(o).is_some())
            .map(babel_code)
    };
    let (mut babel, mut class) = (None, None);
    for (name, options, argument) in commands_with_options(preamble) {
        match name {
            "usepackage" if argument.split(',').any(|p| p.trim() == "babel") => {
                if let Some(main) = options
                    .split(',')
                    .find_map(|o| o.trim().strip_prefix("main="))
                {
                    return Some(babel_code(main.trim()));
                }
                babel = babel.or(last_language(options));
            }
            "babelprovide" if options.split(',').any(|o| o.trim() == "main") => {
                return Some(babel_code(argument.trim()));
            }
            "documentclass" => class = last_language(options),
            _ => {}
        }
    }
    babel.or(class).or_else(|| {
        let at = preamble.find("pdflang")?;
        let value = preamble[at + "pdflang".len()..]
            .trim_start()
            .strip_prefix('=')?;
        let value = value.trim_start();
        let value = group(value, 0).map_or_else(
            || value.split([',', '}', '\n']).next().unwrap_or(""),
            |(inner, _)| inner,
        );
        let value = value.trim();
        (!value.is_empty()).then(|| babel_code(value))
    })
}

/// Each `\usepackage`, `\documentclass` and `\babelprovide` with its
/// options and argument, in order.
fn commands_with_options(source: &str) -> Vec<(&str, &str, &str)> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices('\\') {
        let name = command_name(&source[at + 1..]);
        if !matches!(name, "usepackage" | "documentclass" | "babelprovide") {
            continue;
        }
        let next = skip_space(source, at + 1 + name.len());
        let (options, next) = match bracket(source, next) {
            Some((options, end)) => (options, skip_space(source, end)),
            None => ("", next),
        };
        if let Some((argument, _)) = group(source, next) {
            found.push((name, options, argument));
        }
    }
    found
}

/// A `babel` or `polyglossia` language name as an ISO 639-1 code, where it
/// is one of the common ones; else the name as given.
fn babel_code(name: &str) -> String {
    known_language(name).map_or_else(|| name.to_string(), str::to_string)
}

/// The ISO 639-1 code of a common `babel` or `polyglossia` language name.
fn known_language(name: &str) -> Option<&'static str> {
    let code = match name.to_ascii_lowercase().as_str() {
        "english" | "american" | "british" | "usenglish" | "ukenglish" | "canadian"
        | "australian" | "newzealand" => "en",
        "german" | "ngerman" | "austrian" | "naustrian" | "swissgerman" | "nswissgerman" => "de",
        "french" | "francais" | "acadian" | "canadien" => "fr",
        "spanish" | "spanishmx" => "es",
        "italian" => "it",
        "portuguese" | "portuges" | "brazil" | "brazilian" => "pt",
        "dutch" => "nl",
        "russian" => "ru",
        "ukrainian" => "uk",
        "polish" => "pl",
        "czech" => "cs",
        "swedish" => "sv",
        "danish" => "da",
        "norwegian" | "norsk" | "nynorsk" => "no",
        "finnish" => "fi",
        "greek" => "el",
        "turkish" => "tr",
        "hungarian" | "magyar" => "hu",
        "romanian" => "ro",
        "arabic" => "ar",
        "hebrew" => "he",
        "chinese" => "zh",
        "japanese" => "ja",
        "korean" => "ko",
        _ => return None,
    };
    Some(code)
}

/// Where a block-level scan is: the body, or a list (whose `\item`s start
/// list items).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Body,
    List,
}

/// What a float holds and says of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Float {
    Table,
    Figure,
}

/// The depth of a heading LaTeX sets above the text at the top sectioning
/// level (the abstract, the references).
const TOP: usize = usize::MAX;

/// A Beamer frame's title: under a presentation's sections.
const FRAME: usize = 4;

/// Sectioning commands by depth.
const SECTIONS: [&str; 7] = [
    "part",
    "chapter",
    "section",
    "subsection",
    "subsubsection",
    "paragraph",
    "subparagraph",
];

#[derive(Default)]
struct Reader {
    /// The macros the document defines.
    macros: Macros,
    /// Blocks, headings at their sectioning depth (levels come at the end).
    blocks: Vec<(Block, Option<usize>)>,
    /// The raw LaTeX of the paragraph or list item being read.
    current: String,
    /// Whether `current` is a list item's.
    item: bool,
    /// An `\item[label]`'s label.
    label: Option<String>,
    /// Floats' captions, numbered as LaTeX numbers them.
    tables: usize,
    figures: usize,
    /// Captions met in the float being read.
    captions: Vec<String>,
    /// How many environments the scan is inside.
    depth: usize,
}

impl Reader {
    fn flush(&mut self) {
        let raw = std::mem::take(&mut self.current);
        let mut text = inline(&raw, &self.macros);
        if let Some(label) = self.label.take()
            && !label.is_empty()
        {
            text = format!("{label}: {text}").trim().to_string();
        }
        if !text.is_empty() {
            let kind = if self.item {
                BlockKind::ListItem
            } else {
                BlockKind::Paragraph
            };
            self.blocks.push((Block::new(kind, text, None), None));
        }
        self.item = false;
    }

    fn heading(&mut self, raw: &str, depth: usize) {
        self.flush();
        let text = inline(raw, &self.macros);
        if !text.is_empty() {
            let heading = Block::new(BlockKind::Heading(1), text, None);
            self.blocks.push((heading, Some(depth)));
        }
    }

    fn push_block(&mut self, block: Block) {
        self.flush();
        self.blocks.push((block, None));
    }

    /// Reads `source` at block level: paragraphs, headings, environments.
    fn scan(&mut self, source: &str, context: Context) {
        let mut at = 0;
        while at < source.len() {
            let rest = &source[at..];
            if let Some(after) = rest.strip_prefix('\n') {
                let blank = after
                    .find('\n')
                    .is_some_and(|i| after[..i].trim().is_empty());
                if blank && !self.item {
                    self.flush();
                } else {
                    self.current.push('\n');
                }
                at += 1;
                continue;
            }
            if !rest.starts_with('\\') {
                let c = rest.chars().next().unwrap_or(' ');
                self.current.push(c);
                at += c.len_utf8();
                continue;
            }
            let name = command_name(&rest[1..]);
            let after = at + 1 + name.len();
            let bare = name.trim_end_matches('*');
            let depth = match bare {
                "frametitle" => Some(FRAME),
                _ => SECTIONS.iter().position(|s| *s == bare),
            };
            if let Some(depth) = depth {
                let next = skip_optionals(source, skip_space(source, after));
                if let Some((title, end)) = group(source, next) {
                    self.heading(title, depth);
                    at = end;
                    continue;
                }
            }
            match bare {
                "begin" => {
                    if let Some((env, end)) = group(source, skip_space(source, after)) {
                        at = self.environment(source, env.trim(), end);
                        continue;
                    }
                }
                "item" if context == Context::List => {
                    self.flush();
                    self.item = true;
                    let next = skip_space(source, after);
                    at = match bracket(source, next) {
                        Some((label, end)) => {
                            self.label = Some(inline(label, &self.macros));
                            end
                        }
                        None => after,
                    };
                    continue;
                }
                "bibitem" => {
                    self.flush();
                    self.item = true;
                    let next = skip_optionals(source, skip_space(source, after));
                    at = match group(source, next) {
                        Some((key, end)) => {
                            self.label = Some(format!("[{}]", key.trim()));
                            end
                        }
                        None => after,
                    };
                    continue;
                }
                "caption" => {
                    let next = skip_optionals(source, skip_space(source, after));
                    if let Some((caption, end)) = group(source, next) {
                        self.captions.push(inline(caption, &self.macros));
                        at = end;
                        continue;
                    }
                }
                "par" | "maketitle" => {
                    self.flush();
                    at = after;
                    continue;
                }
                "verb" => {
                    // `\verb|…|` is read whole: its text is no markup.
                    let Some(delimiter) = source[after..].chars().next() else {
                        at = after;
                        continue;
                    };
                    let start = after + delimiter.len_utf8();
                    let end = source[start..]
                        .find(delimiter)
                        .map_or(source.len(), |i| start + i + delimiter.len_utf8());
                    self.current.push_str(&source[at..end]);
                    at = end;
                    continue;
                }
                _ => {}
            }
            // Any other command stays in the paragraph, read by `inline`.
            self.current.push('\\');
            self.current.push_str(name);
            at = after;
        }
    }

    /// Reads the environment `name` whose `\begin{name}` ends at `from`;
    /// returns where its `\end{name}` ends.
    fn environment(&mut self, source: &str, name: &str, from: usize) -> usize {
        let (inner_end, end) = env_end(source, from, name);
        let inner = &source[from..inner_end];
        if self.depth >= MAX_DEPTH {
            self.current.push_str(inner);
            return end;
        }
        self.depth += 1;
        self.read_environment(name, inner);
        self.depth -= 1;
        end
    }

    fn read_environment(&mut self, name: &str, inner: &str) {
        let bare = name.trim_end_matches('*');
        match bare {
            "itemize" | "enumerate" | "description" | "list" | "compactitem" | "compactenum"
            | "inparaenum" | "asparaenum" => {
                // A list inside an item: the item's text so far is an item,
                // and so is what follows the inner list.
                let item = self.item;
                self.flush();
                let skip = if bare == "list" { 2 } else { 0 };
                self.scan(skip_arguments(inner, skip), Context::List);
                self.flush();
                self.item = item;
            }
            "tabular" | "tabularx" | "tabulary" | "longtable" | "tabu" | "array"
            | "supertabular" | "xtabular" | "tblr" | "longtblr" => {
                let skip = if matches!(bare, "tabularx" | "tabulary") {
                    2
                } else {
                    1
                };
                let rows = table_rows(
                    skip_arguments(inner, skip),
                    &mut self.captions,
                    &self.macros,
                );
                self.flush();
                let at = self.blocks.len();
                if let Some(block) = Table::from_rows(rows).into_block(None) {
                    self.blocks.push((block, None));
                }
                if bare == "longtable" {
                    // A longtable is its own float: its captions are its.
                    self.end_float(Float::Table, at);
                }
            }
            "table" | "figure" | "wrapfigure" | "wraptable" | "SCfigure" | "SCtable"
            | "sidewaystable" | "sidewaysfigure" | "subfigure" | "subtable" | "algorithm" => {
                let float = if bare.contains("table") {
                    Float::Table
                } else {
                    Float::Figure
                };
                let skip = match bare {
                    "wrapfigure" | "wraptable" => 2,
                    "subfigure" | "subtable" => 1,
                    _ => 0,
                };
                self.flush();
                let before = self.blocks.len();
                let outer = std::mem::take(&mut self.captions);
                self.scan(skip_arguments(inner, skip), Context::Body);
                self.flush();
                self.end_float(float, before);
                self.captions = outer;
            }
            "Highlighting" => {
                // Code pandoc highlighted: token commands around its text,
                // one line a line.
                let lines: Vec<String> = skip_arguments(inner, 0)
                    .trim_matches('\n')
                    .lines()
                    .map(|line| {
                        let mut out = String::new();
                        write_inline(line, &mut out, 1, &self.macros);
                        out.trim_end().to_string()
                    })
                    .collect();
                let code = lines.join("\n");
                if !code.trim().is_empty() {
                    self.push_block(Block::new(BlockKind::Code, code, None));
                }
            }
            "comment" | "tikzpicture" | "pgfpicture" | "picture" | "filecontents" => {
                self.flush();
            }
            _ if VERBATIM.contains(&bare) => {
                // `lstlisting` and `Verbatim` take options; `minted` a
                // language too.
                let code = match bare {
                    "lstlisting" | "Verbatim" | "BVerbatim" | "LVerbatim" => {
                        skip_arguments(inner, 0)
                    }
                    "minted" => skip_arguments(inner, 1),
                    _ => inner,
                };
                let code = code.strip_prefix('\n').unwrap_or(code).trim_end();
                if !code.trim().is_empty() {
                    self.push_block(Block::new(BlockKind::Code, code, None));
                }
            }
            "equation" | "align" | "gather" | "multline" | "flalign" | "alignat" | "eqnarray"
            | "displaymath" | "math" | "split" | "dmath" => {
                self.current.push_str(" \\[");
                self.current.push_str(inner);
                self.current.push_str("\\] ");
            }
            "abstract" => {
                self.flush();
                let heading = Block::new(BlockKind::Heading(1), "Abstract", None);
                self.blocks.push((heading, Some(TOP)));
                self.scan(inner, Context::Body);
                self.flush();
            }
            "thebibliography" => {
                self.flush();
                let heading = Block::new(BlockKind::Heading(1), "References", None);
                self.blocks.push((heading, Some(TOP)));
                self.scan(skip_arguments(inner, 1), Context::List);
                self.flush();
            }
            "minipage" | "multicols" | "adjustbox" => {
                self.scan(skip_arguments(inner, 1), Context::Body);
            }
            "frame" => {
                // A Beamer frame: its title (`\begin{frame}{Title}`) heads it.
                self.flush();
                let mut start = skip_space(inner, 0);
                if inner[start..].starts_with('<') {
                    start = inner[start..].find('>').map_or(start, |i| start + i + 1);
                }
                let start = skip_optionals(inner, start);
                let inner = match group(inner, skip_space(inner, start)) {
                    Some((title, end)) => {
                        self.heading(title, FRAME);
                        &inner[end..]
                    }
                    None => &inner[start..],
                };
                self.scan(inner, Context::Body);
                self.flush();
            }
            _ => {
                let paragraph = matches!(
                    bare,
                    "quote" | "quotation" | "center" | "flushleft" | "flushright" | "verse"
                );
                if paragraph {
                    self.flush();
                }
                self.scan(inner, Context::Body);
                if paragraph {
                    self.flush();
                }
            }
        }
    }

    /// Gives a float's captions their place: the first table among the
    /// blocks from `from` on takes the caption as "Table N: …"; a figure's,
    /// or a table float's without a table, is a paragraph.
    fn end_float(&mut self, float: Float, from: usize) {
        for caption in std::mem::take(&mut self.captions) {
            let caption = match float {
                Float::Table => {
                    self.tables += 1;
                    numbered(caption, "Table", self.tables, is_table_caption)
                }
                Float::Figure => {
                    self.figures += 1;
                    numbered(
                        caption,
                        "Figure",
                        self.figures,
                        crate::docx::is_figure_caption,
                    )
                }
            };
            let from = from.min(self.blocks.len());
            let table = self.blocks[from..]
                .iter_mut()
                .find(|(b, _)| b.kind == BlockKind::Table && b.caption.is_none());
            match (float, table) {
                (Float::Table, Some((table, _))) => table.set_caption(&caption),
                _ => self
                    .blocks
                    .push((Block::new(BlockKind::Paragraph, caption, None), None)),
            }
        }
    }

    /// The blocks with heading levels: the shallowest sectioning command
    /// used is level 1, or level 2 under a title, which leads as level 1.
    fn finish(self, title: Option<&str>) -> Vec<Block> {
        let top = self
            .blocks
            .iter()
            .filter_map(|(_, d)| *d)
            .filter(|d| *d != TOP)
            .min()
            .unwrap_or(SECTIONS.len() - 1);
        let shift = usize::from(title.is_some());
        let mut blocks = Vec::with_capacity(self.blocks.len() + 1);
        if let Some(title) = title {
            blocks.push(Block::new(BlockKind::Heading(1), title, None));
        }
        for (mut block, depth) in self.blocks {
            if let Some(depth) = depth {
                let depth = if depth == TOP { top } else { depth.max(top) };
                block.kind = BlockKind::Heading((depth - top + 1 + shift).min(6) as u8);
            }
            blocks.push(block);
        }
        blocks
    }
}

/// A caption as LaTeX sets it ("Table 2: …"), unless its text numbers
/// itself already.
fn numbered(caption: String, word: &str, number: usize, names: fn(&str) -> bool) -> String {
    if names(&caption) {
        caption
    } else {
        format!("{word} {number}: {caption}")
    }
}

/// The rows of a tabular's content: rows end at `\\` (or
/// `\tabularnewline`), cells at `&`; rules (`\hline`, booktabs') go; a
/// `\multicolumn`'s text fills its first cell and leaves the others empty.
/// A `\caption` inside (a longtable's) is kept in `captions`.
fn table_rows(inner: &str, captions: &mut Vec<String>, macros: &Macros) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut cell = String::new();
    let mut at = 0;
    // Where the rows since a longtable's last `\endfirsthead`, `\endhead`
    // or `\endfoot` start, and whether it had a first head.
    let (mut section_start, mut first_head) = (0, false);
    let end_cell = |cell: &mut String, row: &mut Vec<String>| {
        row.push(inline(cell, macros));
        cell.clear();
    };
    while at < inner.len() {
        let rest = &inner[at..];
        if rest.starts_with('{') {
            let (_, end) = group(inner, at).unwrap_or(("", inner.len()));
            cell.push_str(&inner[at..end]);
            at = end;
            continue;
        }
        if rest.starts_with('&') {
            end_cell(&mut cell, &mut row);
            at += 1;
            continue;
        }
        if let Some(command) = rest.strip_prefix('\\') {
            let name = command_name(command);
            let after = at + 1 + name.len();
            match name {
                "\\" | "tabularnewline" | "cr" => {
                    end_cell(&mut cell, &mut row);
                    if row.iter().any(|c| !c.is_empty()) {
                        rows.push(std::mem::take(&mut row));
                    }
                    row.clear();
                    at = skip_optionals(inner, after);
                    continue;
                }
                "endfirsthead" | "endhead" | "endfoot" | "endlastfoot" => {
                    // A longtable's first head stays; the head repeated on
                    // later pages and the feet go.
                    if name.contains("foot") || (name == "endhead" && first_head) {
                        rows.truncate(section_start);
                    }
                    first_head |= name == "endfirsthead";
                    section_start = rows.len();
                    at = after;
                    continue;
                }
                "hline" | "toprule" | "midrule" | "bottomrule" | "hdashline" | "noalign"
                | "rowcolor" | "hlineB" => {
                    at = after;
                    if name == "noalign" || name == "rowcolor" {
                        at = skip_optionals(inner, skip_space(inner, at));
                        at = group(inner, skip_space(inner, at)).map_or(at, |(_, e)| e);
                    }
                    continue;
                }
                "cline" | "cmidrule" | "cdashline" => {
                    let mut next = skip_space(inner, after);
                    if inner[next..].starts_with('(') {
                        next = inner[next..].find(')').map_or(next, |i| next + i + 1);
                    }
                    at = group(inner, skip_space(inner, next)).map_or(next, |(_, e)| e);
                    continue;
                }
                "multicolumn" => {
                    let mut next = skip_space(inner, after);
                    let span = group(inner, next).map(|(n, e)| {
                        next = skip_space(inner, e);
                        n.trim().parse::<usize>().unwrap_or(1)
                    });
                    if let Some((_, e)) = group(inner, next) {
                        next = skip_space(inner, e);
                    }
                    if let Some((text, e)) = group(inner, next) {
                        cell.push_str(text);
                        for _ in 1..span.unwrap_or(1).min(64) {
                            end_cell(&mut cell, &mut row);
                        }
                        at = e;
                        continue;
                    }
                    at = next;
                    continue;
                }
                "multirow" => {
                    let mut next = skip_optionals(inner, skip_space(inner, after));
                    for _ in 0..2 {
                        if let Some((_, e)) = group(inner, next) {
                            next = skip_optionals(inner, skip_space(inner, e));
                        }
                    }
                    if let Some((text, e)) = group(inner, next) {
                        cell.push_str(text);
                        at = e;
                        continue;
                    }
                    at = next;
                    continue;
                }
                "caption" => {
                    let next = skip_optionals(inner, skip_space(inner, after));
                    if let Some((caption, e)) = group(inner, next) {
                        captions.push(inline(caption, macros));
                        // A longtable's caption ends its row (`\\`,
                        // `\tabularnewline`).
                        let e = skip_space(inner, e);
                        at = ["\\\\", "\\tabularnewline"]
                            .iter()
                            .find(|end| inner[e..].starts_with(**end))
                            .map_or(e, |end| e + end.len());
                        continue;
                    }
                }
                _ => {}
            }
            cell.push('\\');
            cell.push_str(name);
            at = after;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        cell.push(c);
        at += c.len_utf8();
    }
    end_cell(&mut cell, &mut row);
    if row.iter().any(|c| !c.is_empty()) {
        rows.push(row);
    }
    rows
}

/// The name of the command whose backslash precedes `rest`: its letters
/// (with a trailing `*`), else its one character.
fn command_name(rest: &str) -> &str {
    let letters = rest
        .find(|c: char| !c.is_ascii_alphabetic() && c != '@')
        .unwrap_or(rest.len());
    if letters > 0 {
        let star = usize::from(rest[letters..].starts_with('*'));
        &rest[..letters + star]
    } else {
        rest.chars().next().map_or("", |c| &rest[..c.len_utf8()])
    }
}

fn skip_space(source: &str, at: usize) -> usize {
    let at = at.min(source.len());
    source[at..]
        .find(|c: char| !c.is_whitespace())
        .map_or(source.len(), |i| at + i)
}

/// The content of the `{…}` at `at` and where it ends; braces nest and
/// `\{`, `\}` are no braces. An unclosed group runs to the end.
fn group(source: &str, at: usize) -> Option<(&str, usize)> {
    delimited(source, at, '{', '}')
}

/// The content of the `[…]` at `at` and where it ends.
fn bracket(source: &str, at: usize) -> Option<(&str, usize)> {
    delimited(source, at, '[', ']')
}

fn delimited(source: &str, at: usize, open: char, close: char) -> Option<(&str, usize)> {
    if !source.get(at..)?.starts_with(open) {
        return None;
    }
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, c) in source[at..].char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            c if c == open || (open == '[' && c == '{') => depth += 1,
            c if c == close || (open == '[' && c == '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 && c == close {
                    return Some((&source[at + 1..at + i], at + i + 1));
                }
            }
            _ => {}
        }
    }
    Some((&source[at + 1..], source.len()))
}

/// Past any `[…]` arguments at `at` (and the space between them).
fn skip_optionals(source: &str, mut at: usize) -> usize {
    loop {
        let next = skip_space(source, at);
        match bracket(source, next) {
            Some((_, end)) => at = end,
            None => return at,
        }
    }
}

/// `inner` past an environment's first `count` arguments (`{…}` or
/// `[…]`, as `\begin{tabularx}{\linewidth}{lX}` has two).
fn skip_arguments(inner: &str, count: usize) -> &str {
    let mut at = 0;
    let mut left = count;
    loop {
        let next = skip_space(inner, at);
        if let Some((_, end)) = bracket(inner, next) {
            at = end;
            continue;
        }
        if left == 0 {
            break;
        }
        match group(inner, next) {
            Some((_, end)) => {
                at = end;
                left -= 1;
            }
            None => break,
        }
    }
    &inner[at..]
}

/// Commands whose arguments are no text: dropped with them.
const DROPPED: &[&str] = &[
    "label",
    "ref",
    "eqref",
    "pageref",
    "autoref",
    "cref",
    "Cref",
    "vref",
    "nameref",
    "index",
    "glossary",
    "vspace",
    "hspace",
    "vskip",
    "hskip",
    "includegraphics",
    "usepackage",
    "documentclass",
    "newcommand",
    "renewcommand",
    "providecommand",
    "newenvironment",
    "renewenvironment",
    "setlength",
    "addtolength",
    "setcounter",
    "addtocounter",
    "pagestyle",
    "thispagestyle",
    "bibliographystyle",
    "bibliography",
    "addbibresource",
    "input",
    "include",
    "includeonly",
    "graphicspath",
    "hypersetup",
    "definecolor",
    "color",
    "pagenumbering",
    "geometry",
    "newtheorem",
    "title",
    "author",
    "date",
    "thanks",
    "DeclareMathOperator",
    "let",
    "def",
    "phantom",
    "vphantom",
    "hphantom",
    "rule",
    "linespread",
    "fontsize",
    "selectfont",
    "setdefaultlanguage",
    "setmainlanguage",
    "setotherlanguage",
    "selectlanguage",
    "lstset",
    "captionsetup",
    "setuptabularx",
    "renewcaptionname",
    "newacronym",
    "keywords",
];

/// Citation commands: their keys are kept, as `[key1, key2]`.
fn is_citation(name: &str) -> bool {
    matches!(
        name.trim_end_matches('*'),
        "cite"
            | "citep"
            | "citet"
            | "citealp"
            | "citealt"
            | "citeauthor"
            | "citeyear"
            | "parencite"
            | "textcite"
            | "autocite"
            | "footcite"
            | "smartcite"
            | "supercite"
            | "Cite"
            | "Parencite"
            | "Textcite"
            | "Autocite"
            | "nocite"
            | "fullcite"
    )
}

/// The text of a run of LaTeX: commands read for their text, accents
/// composed, mathematics kept as its source, white space collapsed.
fn inline(raw: &str, macros: &Macros) -> String {
    let mut out = String::with_capacity(raw.len());
    write_inline(raw, &mut out, 0, macros);
    let mut text = String::with_capacity(out.len());
    for word in out.split_whitespace() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
    text.replace(" ,", ",")
        .replace(" .", ".")
        .replace("( ", "(")
}

fn write_inline(raw: &str, out: &mut String, depth: usize, macros: &Macros) {
    if depth >= MAX_DEPTH {
        out.push_str(raw);
        return;
    }
    let mut at = 0;
    while at < raw.len() {
        let rest = &raw[at..];
        let c = rest.chars().next().unwrap_or(' ');
        match c {
            '\\' => at = command(raw, at, out, depth, macros),
            '{' | '}' => at += 1,
            '$' => {
                let display = rest.starts_with("$$");
                let open = if display { 2 } else { 1 };
                let close = if display { "$$" } else { "$" };
                let end = rest[open..]
                    .find(close)
                    .map_or(raw.len(), |i| at + open + i);
                push_math(&raw[at + open..end], out, depth, macros);
                at = (end + close.len()).min(raw.len());
            }
            '~' => {
                out.push(' ');
                at += 1;
            }
            '-' if rest.starts_with("---") => {
                out.push('—');
                at += 3;
            }
            '-' if rest.starts_with("--") => {
                out.push('–');
                at += 2;
            }
            '`' if rest.starts_with("``") => {
                out.push('“');
                at += 2;
            }
            '\'' if rest.starts_with("''") => {
                out.push('”');
                at += 2;
            }
            '`' => {
                out.push('‘');
                at += 1;
            }
            _ => {
                out.push(c);
                at += c.len_utf8();
            }
        }
    }
}

/// Mathematics as its source, without what only lays it out: labels,
/// `\nonumber`, alignment marks and line breaks.
fn push_math(math: &str, out: &mut String, depth: usize, macros: &Macros) {
    out.push(' ');
    let mut at = 0;
    while at < math.len() {
        let rest = &math[at..];
        if let Some(command) = rest.strip_prefix('\\') {
            let name = command_name(command);
            let after = at + 1 + name.len();
            match name {
                "label" | "tag" => {
                    let next = skip_space(math, after);
                    at = group(math, next).map_or(after, |(_, end)| end);
                    continue;
                }
                "nonumber" | "notag" | "\\" => {
                    out.push(' ');
                    at = after;
                    continue;
                }
                _ => {
                    // The document's own macros read as their definitions
                    // (`\R` as `\mathbb{R}`); the others as written.
                    match macros.expand(name, math, after, depth) {
                        Some((text, end)) => {
                            push_math(&text, out, depth + 1, macros);
                            at = end;
                        }
                        None => {
                            out.push_str(&math[at..after]);
                            at = after;
                        }
                    }
                    continue;
                }
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(if c == '&' { ' ' } else { c });
        at += c.len_utf8();
    }
    out.push(' ');
}

/// Reads the command at `at` (its backslash) into `out`; returns where it
/// ends.
fn command(raw: &str, at: usize, out: &mut String, depth: usize, macros: &Macros) -> usize {
    let name = command_name(&raw[at + 1..]);
    let after = at + 1 + name.len();
    if name.is_empty() {
        return after;
    }
    if let Some(accent) = accent(name) {
        // `\'e`, `\'{e}`, `\"{\i}`.
        let next = skip_space(raw, after);
        let (base, end) = match group(raw, next) {
            Some((inner, end)) => (inner.trim(), end),
            None => match raw[next..].chars().next() {
                Some(c) => (&raw[next..next + c.len_utf8()], next + c.len_utf8()),
                None => return next,
            },
        };
        let base = match base {
            "\\i" => "i",
            "\\j" => "j",
            b => b,
        };
        let mut chars = base.chars();
        if let (Some(letter), None) = (chars.next(), chars.next()) {
            out.push_str(&compose(letter, accent));
        } else {
            write_inline(base, out, depth + 1, macros);
        }
        return end;
    }
    let bare = name.trim_end_matches('*');
    match bare {
        "\\" | "newline" | "linebreak" | "par" | "quad" | "qquad" | "," | ";" | ":" | " "
        | "enspace" | "thinspace" => {
            out.push(' ');
            // `\\[2pt]` or `\\*`.
            skip_optionals(raw, after)
        }
        "&" | "%" | "$" | "#" | "_" | "{" | "}" => {
            out.push_str(name);
            after
        }
        "-" | "@" | "/" | "!" | "noindent" | "centering" | "raggedright" | "raggedleft"
        | "maketitle" | "tableofcontents" | "listoffigures" | "listoftables" | "newpage"
        | "clearpage" | "cleardoublepage" | "pagebreak" | "nopagebreak" | "smallskip"
        | "medskip" | "bigskip" | "appendix" | "frontmatter" | "mainmatter" | "backmatter"
        | "today" | "protect" | "relax" | "hfill" | "vfill" | "break" | "indent" | "item"
        | "printbibliography" | "tiny" | "scriptsize" | "footnotesize" | "small" | "normalsize"
        | "large" | "Large" | "LARGE" | "huge" | "Huge" | "bfseries" | "itshape" | "ttfamily"
        | "rmfamily" | "sffamily" | "scshape" | "mdseries" | "upshape" | "em" | "bf" | "it"
        | "tt" | "sc" | "rm" | "sf" | "displaystyle" | "strut" | "xspace" | "leavevmode"
        | "sloppy" | "hline" | "toprule" | "midrule" | "bottomrule" => after,
        "ldots" | "dots" | "textellipsis" | "cdots" => {
            out.push('…');
            after
        }
        "LaTeX" | "TeX" | "LaTeXe" | "BibTeX" => {
            out.push_str(match bare {
                "LaTeXe" => "LaTeX2e",
                other => other,
            });
            // A control word eats the space after it: `\TeX book` reads
            // "TeXbook" (`{}` ends it: `\LaTeX{} is`).
            if raw[after..].starts_with("{}") {
                after + 2
            } else {
                skip_space(raw, after)
            }
        }
        "[" | "(" => {
            // Display or inline mathematics: its source.
            let close = if bare == "[" { "\\]" } else { "\\)" };
            let end = raw[after..].find(close).map_or(raw.len(), |i| after + i);
            push_math(&raw[after..end], out, depth, macros);
            (end + close.len()).min(raw.len())
        }
        "verb" => {
            let Some(delimiter) = raw[after..].chars().next() else {
                return after;
            };
            let start = after + delimiter.len_utf8();
            let end = raw[start..]
                .find(delimiter)
                .map_or(raw.len(), |i| start + i);
            out.push_str(&raw[start..end]);
            (end + delimiter.len_utf8()).min(raw.len())
        }
        "url" | "path" => match group(raw, skip_space(raw, after)) {
            Some((url, end)) => {
                out.push_str(url.trim());
                end
            }
            None => after,
        },
        "href" => {
            let next = skip_space(raw, after);
            match group(raw, next) {
                Some((_, end)) => match group(raw, skip_space(raw, end)) {
                    Some((text, end)) => {
                        write_inline(text, out, depth + 1, macros);
                        end
                    }
                    None => end,
                },
                None => after,
            }
        }
        "footnote" | "footnotetext" | "marginpar" | "sidenote" => {
            let next = skip_optionals(raw, after);
            match group(raw, skip_space(raw, next)) {
                Some((text, end)) => {
                    out.push_str(" (");
                    write_inline(text, out, depth + 1, macros);
                    out.push_str(") ");
                    end
                }
                None => next,
            }
        }
        "textcolor" | "colorbox" | "fcolorbox" | "foreignlanguage" | "texorpdfstring"
        | "resizebox" | "scalebox" | "raisebox" | "makebox" | "parbox" => {
            // The first arguments are a colour, size or language; the text
            // is the last (`\texorpdfstring{TeX}{plain}`: the plain one).
            let skip = match bare {
                "fcolorbox" | "resizebox" => 2,
                "makebox" => 0,
                _ => 1,
            };
            let mut next = skip_optionals(raw, after);
            for _ in 0..skip {
                if let Some((_, end)) = group(raw, skip_space(raw, next)) {
                    next = skip_optionals(raw, end);
                }
            }
            match group(raw, skip_space(raw, next)) {
                Some((text, end)) => {
                    write_inline(text, out, depth + 1, macros);
                    end
                }
                None => next,
            }
        }
        _ if is_citation(name) => {
            let mut next = skip_optionals(raw, after);
            if let Some((keys, end)) = group(raw, skip_space(raw, next)) {
                let keys: Vec<&str> = keys
                    .split(',')
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .collect();
                if bare != "nocite" && !keys.is_empty() {
                    out.push_str(" [");
                    out.push_str(&keys.join(", "));
                    out.push(']');
                }
                next = end;
            }
            next
        }
        _ if DROPPED.contains(&bare) => {
            let mut next = skip_optionals(raw, after);
            // `\newcommand{\x}[1]{…}`: each braced argument goes.
            while let Some((_, end)) = group(raw, skip_space(raw, next)) {
                next = skip_optionals(raw, end);
                if !matches!(
                    bare,
                    "newcommand"
                        | "renewcommand"
                        | "providecommand"
                        | "newenvironment"
                        | "renewenvironment"
                        | "setlength"
                        | "addtolength"
                        | "setcounter"
                        | "addtocounter"
                        | "definecolor"
                        | "newtheorem"
                        | "DeclareMathOperator"
                        | "newacronym"
                ) {
                    break;
                }
            }
            next
        }
        _ => match symbol(bare) {
            Some(symbol) => {
                out.push_str(symbol);
                // A control word eats the space after it (`\TeX book` is
                // "TeXbook"), and `{}` ends it (`\ss{}e`).
                if raw[after..].starts_with("{}") {
                    after + 2
                } else if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    skip_space(raw, after)
                } else {
                    after
                }
            }
            None => match macros.expand(name, raw, after, depth) {
                Some((text, end)) => {
                    write_inline(&text, out, depth + 1, macros);
                    end
                }
                // Any other command: its optional arguments go, its text
                // stays (`\emph{x}`, `\textbf{x}`, `\section*{x}`).
                None => skip_optionals(raw, after),
            },
        },
    }
}

/// How deep macros expand within each other's expansions.
const MACRO_DEPTH: usize = 16;

/// The macros a document defines (`\newcommand{\sys}{\textsc{Folio}}`,
/// `\newcommand{\todo}[1]{TODO: #1}`, `\def\eg{e.g.}`): a command folio does
/// not know reads as its definition, its arguments in place. Expansion
/// draws on a budget of text, so that macros that call each other cannot
/// grow without end.
#[derive(Default)]
struct Macros {
    /// Name → (arguments, the first one's default when it is optional,
    /// body).
    defined: HashMap<String, (usize, Option<String>, String)>,
    /// Bytes of text expansions may still produce.
    budget: Cell<usize>,
}

impl Macros {
    fn defined_in(source: &str) -> Macros {
        let mut defined = HashMap::new();
        for (at, _) in source.match_indices('\\') {
            let name = command_name(&source[at + 1..]);
            if !matches!(
                name.trim_end_matches('*'),
                "newcommand"
                    | "renewcommand"
                    | "providecommand"
                    | "DeclareRobustCommand"
                    | "def"
                    | "gdef"
                    | "edef"
                    | "xdef"
            ) {
                continue;
            }
            let mut next = skip_space(source, at + 1 + name.len());
            // The macro's name: `{\name}` or `\name`.
            let target = match group(source, next) {
                Some((inner, end)) => {
                    next = end;
                    inner.trim()
                }
                None => {
                    let target = source[next..]
                        .strip_prefix('\\')
                        .map_or("", |rest| command_name(rest));
                    next += usize::from(!target.is_empty()) + target.len();
                    target.strip_prefix('\\').unwrap_or(target)
                }
            };
            let target = target.strip_prefix('\\').unwrap_or(target);
            if target.is_empty() || !target.starts_with(|c: char| c.is_ascii_alphabetic()) {
                continue;
            }
            let (count, default) = match name.trim_end_matches('*') {
                "newcommand" | "renewcommand" | "providecommand" | "DeclareRobustCommand" => {
                    let mut count = 0;
                    let mut default = None;
                    if let Some((n, end)) = bracket(source, skip_space(source, next)) {
                        count = n.trim().parse::<usize>().unwrap_or(0).min(9);
                        next = end;
                        if let Some((d, end)) = bracket(source, skip_space(source, next)) {
                            default = Some(d.to_string());
                            next = end;
                        }
                    }
                    (count, default)
                }
                "def" | "gdef" | "edef" | "xdef" => {
                    // `\def\name#1#2{…}`: the parameters before the body.
                    let Some(open) = source[next..].find('{') else {
                        continue;
                    };
                    let parameters = &source[next..next + open];
                    next += open;
                    (parameters.matches('#').count().min(9), None)
                }
                _ => continue,
            };
            if let Some((body, _)) = group(source, skip_space(source, next)) {
                defined
                    .entry(target.to_string())
                    .or_insert((count, default, body.to_string()));
            }
        }
        Macros {
            defined,
            budget: Cell::new(source.len().saturating_mul(4).max(1 << 16)),
        }
    }

    /// The text the macro `name` stands for where its arguments start at
    /// `after`, and where they end; `None` for a name it does not define,
    /// past `MACRO_DEPTH` expansions within expansions (a macro that calls
    /// itself) or when the budget is spent.
    fn expand(&self, name: &str, raw: &str, after: usize, depth: usize) -> Option<(String, usize)> {
        if depth >= MACRO_DEPTH {
            return None;
        }
        let (count, default, body) = self.defined.get(name)?;
        if self.budget.get() < body.len() {
            return None;
        }
        let mut at = after;
        let mut arguments: Vec<&str> = Vec::with_capacity(*count);
        for k in 0..*count {
            let next = skip_space(raw, at);
            if k == 0
                && let Some(default) = default
            {
                match bracket(raw, next) {
                    Some((argument, end)) => {
                        arguments.push(argument);
                        at = end;
                    }
                    None => arguments.push(default),
                }
                continue;
            }
            match group(raw, next) {
                Some((argument, end)) => {
                    arguments.push(argument);
                    at = end;
                }
                None => match raw[next..].chars().next() {
                    Some(c) => {
                        arguments.push(&raw[next..next + c.len_utf8()]);
                        at = next + c.len_utf8();
                    }
                    None => arguments.push(""),
                },
            }
        }
        let mut text = String::with_capacity(body.len());
        let mut chars = body.char_indices().peekable();
        while let Some((_, c)) = chars.next() {
            match (c, chars.peek().and_then(|(_, d)| d.to_digit(10))) {
                ('#', Some(k)) if k >= 1 && (k as usize) <= arguments.len() => {
                    chars.next();
                    text.push_str(arguments[k as usize - 1]);
                }
                _ => text.push(c),
            }
        }
        let left = self.budget.get().checked_sub(text.len())?;
        self.budget.set(left);
        Some((text, at))
    }
}

/// The combining mark an accent command puts on its letter.
fn accent(name: &str) -> Option<char> {
    Some(match name {
        "'" => '\u{301}',
        "`" => '\u{300}',
        "^" => '\u{302}',
        "\"" => '\u{308}',
        "~" => '\u{303}',
        "=" => '\u{304}',
        "." => '\u{307}',
        "u" => '\u{306}',
        "v" => '\u{30c}',
        "H" => '\u{30b}',
        "c" => '\u{327}',
        "k" => '\u{328}',
        "r" => '\u{30a}',
        "d" => '\u{323}',
        "b" => '\u{331}',
        _ => return None,
    })
}

/// `letter` with `mark`, as one character where Unicode has it.
fn compose(letter: char, mark: char) -> String {
    const TABLE: &[(char, char, char)] = &[
        ('a', '\u{301}', 'á'),
        ('e', '\u{301}', 'é'),
        ('i', '\u{301}', 'í'),
        ('o', '\u{301}', 'ó'),
        ('u', '\u{301}', 'ú'),
        ('y', '\u{301}', 'ý'),
        ('c', '\u{301}', 'ć'),
        ('n', '\u{301}', 'ń'),
        ('s', '\u{301}', 'ś'),
        ('z', '\u{301}', 'ź'),
        ('A', '\u{301}', 'Á'),
        ('E', '\u{301}', 'É'),
        ('I', '\u{301}', 'Í'),
        ('O', '\u{301}', 'Ó'),
        ('U', '\u{301}', 'Ú'),
        ('a', '\u{300}', 'à'),
        ('e', '\u{300}', 'è'),
        ('i', '\u{300}', 'ì'),
        ('o', '\u{300}', 'ò'),
        ('u', '\u{300}', 'ù'),
        ('A', '\u{300}', 'À'),
        ('E', '\u{300}', 'È'),
        ('a', '\u{302}', 'â'),
        ('e', '\u{302}', 'ê'),
        ('i', '\u{302}', 'î'),
        ('o', '\u{302}', 'ô'),
        ('u', '\u{302}', 'û'),
        ('a', '\u{308}', 'ä'),
        ('e', '\u{308}', 'ë'),
        ('i', '\u{308}', 'ï'),
        ('o', '\u{308}', 'ö'),
        ('u', '\u{308}', 'ü'),
        ('y', '\u{308}', 'ÿ'),
        ('A', '\u{308}', 'Ä'),
        ('O', '\u{308}', 'Ö'),
        ('U', '\u{308}', 'Ü'),
        ('a', '\u{303}', 'ã'),
        ('o', '\u{303}', 'õ'),
        ('n', '\u{303}', 'ñ'),
        ('N', '\u{303}', 'Ñ'),
        ('c', '\u{327}', 'ç'),
        ('C', '\u{327}', 'Ç'),
        ('s', '\u{327}', 'ş'),
        ('c', '\u{30c}', 'č'),
        ('s', '\u{30c}', 'š'),
        ('z', '\u{30c}', 'ž'),
        ('r', '\u{30c}', 'ř'),
        ('e', '\u{30c}', 'ě'),
        ('C', '\u{30c}', 'Č'),
        ('S', '\u{30c}', 'Š'),
        ('Z', '\u{30c}', 'Ž'),
        ('a', '\u{30a}', 'å'),
        ('A', '\u{30a}', 'Å'),
        ('u', '\u{30a}', 'ů'),
        ('o', '\u{30b}', 'ő'),
        ('u', '\u{30b}', 'ű'),
        ('a', '\u{306}', 'ă'),
        ('g', '\u{306}', 'ğ'),
        ('a', '\u{328}', 'ą'),
        ('e', '\u{328}', 'ę'),
        ('z', '\u{307}', 'ż'),
        ('I', '\u{307}', 'İ'),
        ('a', '\u{304}', 'ā'),
        ('e', '\u{304}', 'ē'),
        ('i', '\u{304}', 'ī'),
        ('o', '\u{304}', 'ō'),
        ('u', '\u{304}', 'ū'),
    ];
    TABLE
        .iter()
        .find(|(l, m, _)| *l == letter && *m == mark)
        .map_or_else(|| format!("{letter}{mark}"), |(_, _, c)| c.to_string())
}

/// The character a symbol command stands for.
fn symbol(name: &str) -> Option<&'static str> {
    Some(match name {
        "ss" => "ß",
        "ae" => "æ",
        "AE" => "Æ",
        "oe" => "œ",
        "OE" => "Œ",
        "aa" => "å",
        "AA" => "Å",
        "o" => "ø",
        "O" => "Ø",
        "l" => "ł",
        "L" => "Ł",
        "i" => "ı",
        "textendash" => "–",
        "textemdash" => "—",
        "S" => "§",
        "P" => "¶",
        "copyright" | "textcopyright" => "©",
        "textregistered" => "®",
        "texttrademark" => "™",
        "euro" | "texteuro" => "€",
        "pounds" | "textsterling" => "£",
        "textdegree" | "degree" => "°",
        "textbackslash" => "\\",
        "textasciitilde" => "~",
        "textasciicircum" => "^",
        "textbar" => "|",
        "textless" => "<",
        "textgreater" => ">",
        "textquotedblleft" => "“",
        "textquotedblright" => "”",
        "textbullet" => "•",
        "dag" | "textdagger" => "†",
        "ddag" | "textdaggerdbl" => "‡",
        "guillemotleft" | "guillemetleft" => "«",
        "guillemotright" | "guillemetright" => "»",
        "checkmark" => "✓",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup::texts;

    #[test]
    fn an_article_reads_as_its_reader_sees_it() {
        let source = r#"\documentclass[11pt]{article}
\usepackage[T1]{fontenc}
\usepackage[english,ngerman]{babel} % German last: the main language
\title{W\"armepumpen im Bestand\thanks{Gef\"ordert von der DFG.}}
\author{Jane M\"uller\\ Universit\"at Kassel \and Jo\~ao Silva$^{2}$}
\date{March 2021}
\begin{document}
\maketitle
\begin{abstract}
Wir messen die Jahresarbeitszahl von 42~Anlagen.
\end{abstract}
\section{Einleitung}\label{sec:intro}
Die Studie~\cite{smith2019,doe20} zeigt --- wie erwartet --- eine
Verbesserung von 10\,\% gegen\"uber \emph{alten} Anlagen.%
\footnote{Siehe \url{https://example.org}.}

% a comment line that joins nothing
Zweiter Absatz mit $E = mc^2$ und \verb|a{b}|.
\subsection*{Messungen}
\begin{itemize}
  \item Erste Messung
  \item[Druck] Zweite \textbf{Messung}
\end{itemize}
\end{document}
"#;
        let text = extract(source);
        assert_eq!(text.title.as_deref(), Some("Wärmepumpen im Bestand"));
        assert_eq!(
            text.metadata["authors"],
            serde_json::json!(["Jane Müller", "João Silva"])
        );
        assert_eq!(text.metadata["language"], "de");
        assert_eq!(text.metadata["year"], 2021);
        assert_eq!(
            texts(&text),
            [
                (BlockKind::Heading(1), "Wärmepumpen im Bestand"),
                (BlockKind::Heading(2), "Abstract"),
                (
                    BlockKind::Paragraph,
                    "Wir messen die Jahresarbeitszahl von 42 Anlagen."
                ),
                (BlockKind::Heading(2), "Einleitung"),
                (
                    BlockKind::Paragraph,
                    "Die Studie [smith2019, doe20] zeigt — wie erwartet — eine Verbesserung \
                     von 10 % gegenüber alten Anlagen. (Siehe https://example.org.)"
                ),
                (
                    BlockKind::Paragraph,
                    "Zweiter Absatz mit E = mc^2 und a{b}."
                ),
                (BlockKind::Heading(3), "Messungen"),
                (BlockKind::ListItem, "Erste Messung"),
                (BlockKind::ListItem, "Druck: Zweite Messung"),
            ]
        );
    }

    #[test]
    fn a_table_float_keeps_its_rows_and_caption() {
        let source = r#"\section{Results}
\begin{table}[ht]
\centering
\caption{Yield by site}\label{tab:yield}
\begin{tabular}{|l|r|r|}
\toprule
Site & 2020 & 2021 \\ \midrule
Kassel & 3.1 & 3.4 \\
\multicolumn{2}{l}{M\"unchen (est.)} & 2.9 \\ \hline
\bottomrule
\end{tabular}
\end{table}
\begin{figure}
\includegraphics[width=\linewidth]{plot.pdf}
\caption[short]{Seasonal \emph{COP} curve}
\end{figure}
\begin{lstlisting}[language=Python]
print(cop{1})
\end{lstlisting}
"#;
        let text = extract(source);
        let table = text
            .blocks
            .iter()
            .find(|b| b.kind == BlockKind::Table)
            .unwrap();
        assert_eq!(table.caption.as_deref(), Some("Table 1: Yield by site"));
        assert_eq!(
            table.text,
            "| Site | 2020 | 2021 |\n| --- | --- | --- |\n| Kassel | 3.1 | 3.4 |\n| München (est.) |  | 2.9 |"
        );
        let rest: Vec<_> = texts(&text)
            .into_iter()
            .filter(|(k, _)| *k != BlockKind::Table)
            .collect();
        assert_eq!(
            rest,
            [
                (BlockKind::Heading(1), "Results"),
                (BlockKind::Paragraph, "Figure 1: Seasonal COP curve"),
                (BlockKind::Code, "print(cop{1})"),
            ]
        );
    }

    #[test]
    fn a_fragment_without_preamble_and_unbalanced_braces_still_reads() {
        let text = extract("\\chapter{Eins}\nText {ohne Ende\n\\section{Zwei\n");
        assert_eq!(text.title, None);
        assert_eq!(text.blocks[0].kind, BlockKind::Heading(1));
        assert_eq!(text.blocks[0].text, "Eins");
        assert!(text.blocks.iter().any(|b| b.text.contains("ohne Ende")));
        for broken in [
            "\\",
            "{",
            "\\begin{",
            "\\begin{tabular}{",
            "\\begin{longtable}{l}\\caption{Only a caption}\\end{longtable}",
            "$",
            "\\verb",
            "\\'",
        ] {
            let _ = extract(broken);
        }
    }

    #[test]
    fn mathematics_keeps_its_source_without_its_layout() {
        let text = extract(
            "The likelihood\n\\begin{align}\n\\label{eq:l} L &= \\prod_i p_i \\nonumber \\\\\n&= e^{x}\n\\end{align}\nwhere \\(\\nu \\& \\kappa\\) are given.",
        );
        assert_eq!(
            texts(&text),
            [(
                BlockKind::Paragraph,
                "The likelihood L = \\prod_i p_i = e^{x} where \\nu \\& \\kappa are given."
            )]
        );
    }

    #[test]
    fn macros_the_document_defines_read_as_their_definitions() {
        let text = extract(
            r"\newcommand{\sys}{\textsc{Folio}\xspace}
\newcommand\eg{e.g.}
\newcommand{\todo}[1]{\textcolor{red}{TODO: #1}}
\newcommand{\opt}[2][low]{#1 and #2}
\def\R{\mathbb{R}}
\def\pair#1#2{(#1, #2)}
\def\x{\y\y}\def\y{\x\x}
\begin{document}
We present \sys{}, a server, \eg{} for papers. \todo{measure} \opt{high} \opt[mid]{high}
over $\R$ and \pair{x}{y}.\x
\end{document}",
        );
        assert_eq!(
            texts(&text)[0],
            (
                BlockKind::Paragraph,
                "We present Folio, a server, e.g. for papers. TODO: measure low and high mid and \
                 high over \\mathbb{R} and (x, y)."
            )
        );
    }

    #[test]
    fn a_bibliography_lists_its_items_by_key() {
        let text = extract(
            "\\begin{thebibliography}{9}\n\\bibitem{knuth84} D. Knuth. \\emph{The \\TeX book}. 1984.\n\\bibitem[Lamport]{lamport94} L. Lamport.\n\\end{thebibliography}",
        );
        assert_eq!(
            texts(&text),
            [
                (BlockKind::Heading(1), "References"),
                (
                    BlockKind::ListItem,
                    "[knuth84]: D. Knuth. The TeXbook. 1984."
                ),
                (BlockKind::ListItem, "[lamport94]: L. Lamport."),
            ]
        );
    }
}
