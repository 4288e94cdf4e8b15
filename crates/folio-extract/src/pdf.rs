//! PDF: text per page through pdf_oxide's Markdown conversion (headings from
//! font analysis where the layout allows), so every block knows its page.
//! Pages that look scanned — no text layer, or a thin one (a watermark, a
//! running head) over a page image, or unreadable — are listed in
//! `textless_pages` for the caller to OCR.

use folio_core::{Block, BlockKind, Limits, StructuredText, alphanumerics};
use pdf_oxide::PdfDocument;
use pdf_oxide::converters::ConversionOptions;
use pdf_oxide::object::Object;

use crate::{ExtractError, Format, markdown, text};

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<StructuredText, ExtractError> {
    let document = PdfDocument::from_bytes(bytes.to_vec())
        .map_err(|e| ExtractError::malformed(Format::Pdf, e))?;
    if document.is_encrypted() && !document.is_authenticated() {
        return Err(ExtractError::malformed(
            Format::Pdf,
            "the PDF is encrypted with a password",
        ));
    }
    let pages = document
        .page_count()
        .map_err(|e| ExtractError::malformed(Format::Pdf, e))?;
    if pages == 0 {
        return Err(ExtractError::malformed(Format::Pdf, "the PDF has no pages"));
    }
    if pages as u64 > u64::from(limits.max_pages) {
        return Err(ExtractError::TooMany {
            what: "pages",
            limit: limits.max_pages.into(),
            actual: pages as u64,
        });
    }
    let options = ConversionOptions {
        detect_headings: true,
        include_images: false,
        ..Default::default()
    };
    let mut blocks = Vec::new();
    let mut failures = 0;
    let mut textless_pages = Vec::new();
    for index in 0..pages {
        let page = Some(index as u32 + 1);
        let read = match document.to_markdown(index, &options) {
            Ok(md) => markdown::blocks(&md, page),
            Err(first) => match document.extract_text(index) {
                Ok(plain) => text::paragraphs(&plain, page),
                Err(second) => {
                    // A stream that inflates past the bound (pdf_oxide reads
                    // it from PDF_OXIDE_MAX_DECOMPRESS_MB, which the caller
                    // sets from max_decompressed_bytes) is a bomb, not a
                    // scan: the document is refused, not sent to OCR.
                    if [first.to_string(), second.to_string()]
                        .iter()
                        .any(|e| e.contains("safety limit"))
                    {
                        return Err(ExtractError::Bomb {
                            what: format!("a content stream of page {}", index + 1),
                            limit: limits.max_decompressed_bytes,
                        });
                    }
                    failures += 1;
                    textless_pages.extend(page);
                    continue;
                }
            },
        };
        let letters = alphanumerics(&read);
        if letters < NO_TEXT {
            // No text may also mean a content stream the decoder gave up on
            // at the decompression bound: a bomb is refused, not rendered
            // for OCR (rendering it runs as long as inflating it would).
            if let Err(e) = document.get_page_content_data(index)
                && e.to_string().contains("safety limit")
            {
                return Err(ExtractError::Bomb {
                    what: format!("a content stream of page {}", index + 1),
                    limit: limits.max_decompressed_bytes,
                });
            }
        }
        if letters < NO_TEXT || (letters < THIN_TEXT && has_image(&document, index)) {
            textless_pages.extend(page);
        }
        blocks.extend(read);
    }
    join_continued_tables(&mut blocks);
    if failures == pages {
        return Err(ExtractError::malformed(
            Format::Pdf,
            "no page could be read",
        ));
    }
    let title = blocks
        .iter()
        .take_while(|b| b.page == Some(1))
        .find(|b| matches!(b.kind, folio_core::BlockKind::Heading(_)))
        .map(|b| b.text.clone());
    let mut metadata = serde_json::Map::new();
    if failures > 0 {
        metadata.insert("unreadable_pages".into(), failures.into());
    }
    Ok(StructuredText {
        title,
        blocks,
        metadata,
        page_count: Some(pages as u32),
        textless_pages,
        ..Default::default()
    })
}

/// A table that ends one page and a table that starts the next with as
/// many columns are one table broken by the page: the second keeps the
/// first's caption and header (a header row repeated on the new page is
/// dropped, a data row that came out as its header is put back among the
/// rows), and its rows are numbered on from the first's.
///
/// The PDF reader puts a page's text before its tables, so a caption
/// printed under the continued table, for a new table that follows on the
/// page or starts the next one, comes out above the continued table: it is
/// moved to that new table.
fn join_continued_tables(blocks: &mut [Block]) {
    // Tables that took a moved caption start anew.
    let mut new_table = vec![false; blocks.len()];
    for i in 1..blocks.len() {
        let (previous, block) = (&blocks[i - 1], &blocks[i]);
        if new_table[i]
            || previous.kind != BlockKind::Table
            || block.kind != BlockKind::Table
            || previous
                .page
                .zip(block.page)
                .is_none_or(|(a, b)| a + 1 != b)
        {
            continue;
        }
        let mut above = previous.text.lines();
        let (Some(header), Some(separator)) = (above.next(), above.next()) else {
            continue;
        };
        let mut lines = block.text.lines();
        let Some(first) = lines.next() else { continue };
        let cells = |line: &str| line.matches(" |").count();
        if cells(first) != cells(header) {
            continue;
        }
        // A caption read above a continued table is the next table's, when
        // that one has none and sits on this page or the next.
        let mut moved_to = None;
        if block.caption.is_some() {
            let next = (i + 1..blocks.len()).find(|&j| blocks[j].kind == BlockKind::Table);
            match next {
                Some(j)
                    if blocks[j].caption.is_none()
                        && blocks[j]
                            .page
                            .zip(block.page)
                            .is_some_and(|(n, b)| n == b || n == b + 1) =>
                {
                    moved_to = Some(j)
                }
                _ => continue,
            }
        }
        let rows_above = above.count() as u32;
        let mut text = format!("{header}\n{separator}");
        if first != header {
            text.push('\n');
            text.push_str(first);
        }
        for line in lines.skip(1) {
            text.push('\n');
            text.push_str(line);
        }
        let caption = previous.caption.clone();
        let first_row = previous.first_row.unwrap_or(1) + rows_above;
        let block = &mut blocks[i];
        block.text = text;
        block.first_row = Some(first_row);
        let moved = std::mem::replace(&mut block.caption, caption);
        if let Some(j) = moved_to {
            blocks[j].caption = moved;
            new_table[j] = true;
        }
    }
}

/// Fewer letters and digits than this: a page without a text layer.
const NO_TEXT: usize = 20;
/// Fewer than this over an image: a scan with a stamped line or two.
const THIN_TEXT: usize = 200;

/// True when the page's own resources hold an image XObject.
fn has_image(document: &PdfDocument, index: usize) -> bool {
    let resolve = |object: &Object| document.resolve_object(object).ok();
    let Ok(page) = document.get_page(index) else {
        return false;
    };
    let Some(resources) = page
        .as_dict()
        .and_then(|d| d.get("Resources"))
        .and_then(resolve)
    else {
        return false;
    };
    let Some(xobjects) = resources
        .as_dict()
        .and_then(|d| d.get("XObject"))
        .and_then(resolve)
    else {
        return false;
    };
    xobjects.as_dict().is_some_and(|entries| {
        entries.values().filter_map(resolve).any(|x| {
            x.as_dict()
                .and_then(|d| d.get("Subtype"))
                .and_then(Object::as_name)
                == Some("Image")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str, page: u32, caption: Option<&str>) -> Block {
        let mut block = Block::new(BlockKind::Table, text, Some(page));
        block.caption = caption.map(str::to_string);
        block
    }

    #[test]
    fn a_table_broken_by_pages_keeps_its_caption_header_and_row_numbers() {
        let mut blocks = vec![
            table(
                "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |",
                1,
                Some("Table 2: x"),
            ),
            // The header repeated on the next page.
            table("| a | b |\n| --- | --- |\n| 5 | 6 |", 2, None),
            // No header repeated: the first row came out as one.
            table("| 7 | 8 |\n| --- | --- |\n| 9 | 10 |", 3, None),
            // Another width, or not right after: other tables.
            table("| c |\n| --- |\n| 1 |", 4, None),
            Block::new(BlockKind::Paragraph, "text", Some(4)),
            table("| c |\n| --- |\n| 2 |", 5, None),
            // The caption of a new table read above the continued one; the
            // new table starts the next page, and goes on over one more.
            table("| c |\n| --- |\n| 3 |", 6, Some("Table 3: y")),
            table("| c |\n| --- |\n| 4 |", 7, None),
            table("| c |\n| --- |\n| 5 |", 8, None),
            // A captioned table at the top of a page with no table after
            // it: a new table.
            table("| c |\n| --- |\n| 6 |", 9, Some("Table 4: z")),
        ];
        join_continued_tables(&mut blocks);
        assert_eq!(blocks[1].text, "| a | b |\n| --- | --- |\n| 5 | 6 |");
        assert_eq!(blocks[1].caption.as_deref(), Some("Table 2: x"));
        assert_eq!(blocks[1].first_row, Some(3));
        assert_eq!(
            blocks[2].text,
            "| a | b |\n| --- | --- |\n| 7 | 8 |\n| 9 | 10 |"
        );
        assert_eq!(blocks[2].first_row, Some(4));
        assert_eq!(blocks[2].caption.as_deref(), Some("Table 2: x"));
        assert_eq!(
            (blocks[3].caption.clone(), blocks[3].first_row),
            (None, None)
        );
        assert_eq!(
            (blocks[5].caption.clone(), blocks[5].first_row),
            (None, None)
        );
        assert_eq!(
            (blocks[6].caption.clone(), blocks[6].first_row),
            (None, Some(2))
        );
        assert_eq!(
            (blocks[7].caption.as_deref(), blocks[7].first_row),
            (Some("Table 3: y"), None)
        );
        assert_eq!(
            (blocks[8].caption.as_deref(), blocks[8].first_row),
            (Some("Table 3: y"), Some(2))
        );
        assert_eq!(
            (blocks[9].caption.as_deref(), blocks[9].first_row),
            (Some("Table 4: z"), None)
        );
    }
}
