//! PDF: text per page through pdf_oxide's Markdown conversion (headings from
//! font analysis where the layout allows), so every block knows its page.

use folio_core::{Limits, StructuredText};
use pdf_oxide::PdfDocument;
use pdf_oxide::converters::ConversionOptions;

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
        return Err(ExtractError::TooLarge {
            what: "page count",
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
    for index in 0..pages {
        let page = Some(index as u32 + 1);
        match document.to_markdown(index, &options) {
            Ok(md) => blocks.extend(markdown::blocks(&md, page)),
            Err(_) => match document.extract_text(index) {
                Ok(plain) => blocks.extend(text::paragraphs(&plain, page)),
                Err(_) => failures += 1,
            },
        }
    }
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
    })
}
