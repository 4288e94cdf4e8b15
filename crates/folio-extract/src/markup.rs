//! What the readers of markup people write (LaTeX, reStructuredText, Org,
//! AsciiDoc) share.

use serde_json::{Map, Value};

/// Blocks nested deeper than this (environments in environments, quotes in
/// quotes, lists in lists) are read as text, not taken apart further: a
/// hostile file cannot run the stack out, and reads in time linear in its
/// size.
pub(crate) const MAX_DEPTH: usize = 64;

/// How far an inline mark (emphasis, a literal, a role, a reference) looks
/// for its closing mark: a phrase, not a page. No further, so that a long
/// text full of unclosed marks reads in linear time.
pub(crate) const REACH: usize = 300;

/// Records a document's date as written, and its year when the date holds
/// a four-digit one ("2024-03-01", "March 2021", "<2024-03-01 Fri>").
pub(crate) fn set_date(metadata: &mut Map<String, Value>, date: &str) {
    let date = date.trim();
    if date.is_empty() {
        return;
    }
    if let Some(year) = date
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| w.len() == 4)
        .and_then(|w| w.parse::<i64>().ok())
        .filter(|y| (1000..3000).contains(y))
    {
        metadata.insert("year".into(), year.into());
    }
    metadata.insert("date".into(), date.into());
}

/// `lines` without the indentation they all share (blank lines aside); a
/// line indented by other white space than the others keeps its own.
pub(crate) fn dedent<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(common..).unwrap_or_else(|| l.trim_start()))
        .collect()
}

/// A figure's caption as the paragraph that stands for the figure:
/// "Figure: …", unless it names itself ("Figure 3: …", "Abb. 2").
pub(crate) fn figure_caption(caption: &str) -> String {
    if crate::docx::is_figure_caption(caption) {
        caption.to_string()
    } else {
        format!("Figure: {caption}")
    }
}

/// Ends a table: its rows (the first its header) as a table block under
/// its caption; a table without text adds nothing.
pub(crate) fn push_table(
    blocks: &mut Vec<folio_core::Block>,
    rows: Vec<Vec<String>>,
    caption: Option<String>,
) {
    let mut table = folio_core::Table::from_rows(rows);
    table.caption = caption;
    blocks.extend(table.into_block(None));
}

/// Each block's kind and text, for tests.
#[cfg(test)]
pub(crate) fn texts(text: &folio_core::StructuredText) -> Vec<(folio_core::BlockKind, &str)> {
    text.blocks
        .iter()
        .map(|b| (b.kind, b.text.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_dedenting_and_figure_captions() {
        let mut metadata = Map::new();
        set_date(&mut metadata, " <2024-03-01 Fri> ");
        assert_eq!(metadata["year"], 2024);
        assert_eq!(metadata["date"], "<2024-03-01 Fri>");
        set_date(&mut metadata, "version 12345");
        assert_eq!(
            metadata["year"], 2024,
            "no four-digit year: the last one stays"
        );
        assert_eq!(
            dedent(&["  a", "", "    b", "\u{a0}c"]),
            ["a", "", "  b", "c"],
            "a no-break space is no cut in a character"
        );
        assert_eq!(figure_caption("Plan"), "Figure: Plan");
        assert_eq!(figure_caption("Figure 2: Plan"), "Figure 2: Plan");
    }
}
