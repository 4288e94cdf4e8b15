//! Extraction: bytes in, structured text out (blocks with heading levels and
//! page numbers). Pure functions: no file system, network or clock; the caller
//! hands in the bytes, a name to guess the format from, and the limits.

mod archive;
mod asciidoc;
mod container;
mod docx;
mod epub;
mod error;
mod figures;
mod format;
mod html;
mod image;
mod latex;
mod mail;
mod markdown;
mod markup;
mod notebook;
mod odf;
mod org;
mod pdf;
mod pptx;
pub mod references;
mod rst;
mod rtf;
mod tabular;
mod text;
mod xml;

pub use error::ExtractError;
pub use figures::MAX_FIGURE_BYTES;
pub use format::{Format, detect};

use folio_core::{Limits, StructuredText};

/// What to extract: the raw bytes plus the hints that pick a format.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub bytes: &'a [u8],
    /// File name or URL path, for the extension.
    pub name: Option<&'a str>,
    /// MIME type, when the source declares one (HTTP Content-Type).
    pub mime: Option<&'a str>,
}

/// Detects the format of `input` and extracts it. Refuses input over the size
/// limits, binary data, and formats folio cannot read, with an error naming
/// the reason; never panics on malformed input. Text-free input is refused
/// too — except a PDF with pages listed in `textless_pages` (a scan), or an
/// image, which comes back for the caller to OCR, possibly with no blocks.
pub fn extract(
    input: Input<'_>,
    limits: &Limits,
) -> Result<(Format, StructuredText), ExtractError> {
    if input.bytes.is_empty() {
        return Err(ExtractError::Empty);
    }
    if input.bytes.len() as u64 > limits.max_file_bytes {
        return Err(ExtractError::TooLarge {
            what: "file",
            limit: limits.max_file_bytes,
            actual: input.bytes.len() as u64,
        });
    }
    let format = format::detect(input)?;
    let text = extract_as(format, input.bytes, limits)?;
    if text.is_empty()
        && text.textless_pages.is_empty()
        && text.parts.is_empty()
        && text.figures.is_empty()
    {
        return Err(ExtractError::NoText { format });
    }
    Ok((format, text))
}

/// Extracts `bytes` as the given format. A panic inside a third-party parser
/// on hostile input is caught and reported as malformed input.
pub fn extract_as(
    format: Format,
    bytes: &[u8],
    limits: &Limits,
) -> Result<StructuredText, ExtractError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        extract_unguarded(format, bytes, limits)
    }))
    .unwrap_or_else(|_| {
        Err(ExtractError::malformed(
            format,
            "the parser failed on this input",
        ))
    })
}

/// Ends a table of rows (the first its header) found in a flow of blocks:
/// the paragraph right above it becomes its caption when `caption_above`
/// says it reads as one; a table without text leaves its caption as a
/// paragraph.
pub(crate) fn push_table(
    blocks: &mut Vec<folio_core::Block>,
    rows: Vec<Vec<String>>,
    caption_above: bool,
    page: Option<u32>,
) {
    let caption = if caption_above {
        blocks.pop().map(|b| b.text)
    } else {
        None
    };
    let mut table = folio_core::Table::from_rows(rows);
    table.caption = caption.clone();
    match table.into_block(page) {
        Some(block) => blocks.push(block),
        None => blocks.extend(
            caption.map(|c| folio_core::Block::new(folio_core::BlockKind::Paragraph, c, page)),
        ),
    }
}

/// A table nested in another's cell, as that cell's text.
pub(crate) fn nested_table_text(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|r| r.join(" "))
        .collect::<Vec<_>>()
        .join(" ")
}

fn extract_unguarded(
    format: Format,
    bytes: &[u8],
    limits: &Limits,
) -> Result<StructuredText, ExtractError> {
    match format {
        Format::Text => text::decode(bytes).map(|t| text::extract_plain(&t)),
        Format::Markdown => text::decode(bytes).map(|t| markdown::extract(&t)),
        Format::Latex => text::decode(bytes).map(|t| latex::extract(&t)),
        Format::Html => {
            let page = text::decode(bytes)?;
            html::check_depth(&page, Format::Html)?;
            Ok(html::extract(&page))
        }
        Format::Pdf => pdf::extract(bytes, limits),
        Format::Docx => docx::extract(bytes, limits),
        Format::Pptx => pptx::extract(bytes, limits),
        Format::Epub => epub::extract(bytes, limits),
        Format::Image => image::extract(bytes, limits),
        Format::Csv => {
            text::decode(bytes).and_then(|t| tabular::extract_delimited(&t, format, b','))
        }
        Format::Tsv => {
            text::decode(bytes).and_then(|t| tabular::extract_delimited(&t, format, b'\t'))
        }
        Format::Xlsx | Format::Xls | Format::Ods => {
            tabular::extract_spreadsheet(bytes, format, limits)
        }
        Format::Rtf => rtf::extract(bytes),
        Format::Eml => mail::extract_message(bytes, limits),
        Format::Mbox => mail::extract_mailbox(bytes, limits),
        Format::Odt | Format::Odp => odf::extract(bytes, format, limits),
        Format::Ipynb => text::decode(bytes).and_then(|t| notebook::extract(&t)),
        Format::Zip | Format::Tar => archive::extract(bytes, format, limits),
        Format::Rst => text::decode(bytes).map(|t| rst::extract(&t)),
        Format::Org => text::decode(bytes).map(|t| org::extract(&t)),
        Format::Asciidoc => text::decode(bytes).map(|t| asciidoc::extract(&t)),
    }
}
