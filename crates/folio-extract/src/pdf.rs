//! PDF: text per page through pdf_oxide's Markdown conversion (headings from
//! font analysis where the layout allows), so every block knows its page.
//! Pages that look scanned — no text layer, or a thin one (a watermark, a
//! running head) over a page image, or unreadable — are listed in
//! `textless_pages` for the caller to OCR.

use folio_core::{Limits, StructuredText, alphanumerics};
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
    })
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
