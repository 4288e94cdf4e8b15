//! PDF: text per page through pdf_oxide's Markdown conversion (headings from
//! font analysis where the layout allows), so every block knows its page.
//! Pages that look scanned — no text layer, or a thin one (a watermark, a
//! running head) over a page image, or unreadable — are listed in
//! `textless_pages` for the caller to OCR. The images on pages that do have
//! a text layer (a chart, a screenshot) are handed over as figures, after
//! their page's text, when the caller reads figures.

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
    let mut figures = crate::figures::Figures::new(limits);
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
        let images = if letters < THIN_TEXT || figures.wants_image() {
            page_images(&document, index)
        } else {
            Vec::new()
        };
        let scanned = letters < NO_TEXT || (letters < THIN_TEXT && !images.is_empty());
        if scanned {
            textless_pages.extend(page);
        }
        blocks.extend(read);
        // The page's images are decoded together: one over the pixel
        // bound (as declared) leaves the page's figures unread.
        if !images.is_empty()
            && !scanned
            && figures.wants_image()
            && images
                .iter()
                .all(|pixels| *pixels <= limits.max_image_pixels)
        {
            for image in page_figures(&document, index, limits) {
                figures.push(Some(image), blocks.len(), page);
            }
        }
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
        figures: figures.into_vec(),
        ..Default::default()
    })
}

/// An image covering more of its page than this is the page itself (a
/// searchable scan's page image, a background), not a figure on it.
const MAX_FIGURE_COVER: f32 = 0.5;
/// An image smaller than this, in pixels, holds no words worth reading
/// (an icon, a rule, a logo's mark).
const MIN_FIGURE_SIDE: u32 = 48;

/// A page drawing more XObjects than this is a pattern or a trap (one
/// image drawn thousands of times decodes thousands of times), not a page
/// of figures: its figures are not read.
const MAX_PAGE_DRAWS: usize = 64;

/// The XObjects (images, forms) page `index`'s content draws: its `Do`
/// operators.
fn draws(document: &PdfDocument, index: usize) -> usize {
    let Ok(content) = document.get_page_content_data(index) else {
        return usize::MAX;
    };
    let delimiter =
        |b: Option<&u8>| b.is_none_or(|b| b.is_ascii_whitespace() || b"/[]<>()".contains(b));
    content
        .windows(2)
        .enumerate()
        .filter(|(at, pair)| {
            *pair == b"Do"
                && delimiter(at.checked_sub(1).and_then(|i| content.get(i)))
                && delimiter(content.get(at + 2))
        })
        .count()
}

/// The figure images of page `index` (which has a text layer), as PNG or
/// JPEG files: images too small to hold words, covering most of the page,
/// or over `max_image_pixels` are left out; an image that fails to decode
/// is passed over (the page's text stands without it).
fn page_figures(document: &PdfDocument, index: usize, limits: &Limits) -> Vec<Vec<u8>> {
    use pdf_oxide::extractors::images::ImageData;
    if draws(document, index) > MAX_PAGE_DRAWS {
        return Vec::new();
    }
    let Ok(images) = document.extract_images(index) else {
        return Vec::new();
    };
    let page_area = document
        .get_page_media_box(index)
        .ok()
        .map(|(x0, y0, x1, y1)| ((x1 - x0) * (y1 - y0)).abs())
        .filter(|area| *area > 0.0);
    images
        .into_iter()
        .filter(|image| {
            let (width, height) = (image.width(), image.height());
            let covers_page = match (image.bbox(), page_area) {
                (Some(bbox), Some(area)) => {
                    (bbox.width * bbox.height).abs() / area > MAX_FIGURE_COVER
                }
                _ => false,
            };
            width >= MIN_FIGURE_SIDE
                && height >= MIN_FIGURE_SIDE
                && u64::from(width) * u64::from(height) <= limits.max_image_pixels
                && !covers_page
        })
        .filter_map(|image| match image.data() {
            ImageData::Jpeg(jpeg) => Some(jpeg.clone()),
            ImageData::Raw { .. } => image.to_png_bytes().ok(),
        })
        .collect()
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

/// The pixels (width × height, as declared) of each image XObject in page
/// `index`'s own resources.
fn page_images(document: &PdfDocument, index: usize) -> Vec<u64> {
    let resolve = |object: &Object| document.resolve_object(object).ok();
    let Ok(page) = document.get_page(index) else {
        return Vec::new();
    };
    let Some(resources) = page
        .as_dict()
        .and_then(|d| d.get("Resources"))
        .and_then(resolve)
    else {
        return Vec::new();
    };
    let Some(xobjects) = resources
        .as_dict()
        .and_then(|d| d.get("XObject"))
        .and_then(resolve)
    else {
        return Vec::new();
    };
    let Some(entries) = xobjects.as_dict() else {
        return Vec::new();
    };
    entries
        .values()
        .filter_map(resolve)
        .filter_map(|x| {
            let dict = x.as_dict()?;
            if dict.get("Subtype").and_then(Object::as_name) != Some("Image") {
                return None;
            }
            let side = |key: &str| {
                dict.get(key)
                    .and_then(resolve)
                    .and_then(|o| o.as_integer())
                    .map_or(0, |n| n.max(0) as u64)
            };
            Some(side("Width").saturating_mul(side("Height")))
        })
        .collect()
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
