//! OCR during ingestion: the pages extraction found without a usable text
//! layer (scans), and images, are read by Tesseract, and their text takes the place of
//! whatever thin text they had. Languages: the item's own language (a Zotero
//! item's language field, or `language` metadata) → the request's explicit
//! list → the configured default (`en`, `de`). When Tesseract is missing,
//! or OCR is off, the document says so in a warning — and a document that is
//! nothing but scans fails with that reason instead of becoming an empty
//! document.

use folio_core::{Block, BlockKind, ErrorCode, StructuredText, alphanumerics};
use folio_extract::Format;
use folio_ocr::{OcrError, OcrOptions, Tesseract};
use serde_json::{Value, json};

use crate::{Engine, EngineError};

/// OCR settings.
#[derive(Debug, Clone)]
pub struct OcrConfig {
    /// Read scanned pages (when Tesseract is installed).
    pub enabled: bool,
    /// Languages when neither the item nor the request names any.
    pub languages: Vec<String>,
    /// Rasterisation resolution, dots per inch.
    pub dpi: u32,
}

impl Default for OcrConfig {
    fn default() -> Self {
        OcrConfig {
            enabled: true,
            languages: vec!["en".into(), "de".into()],
            dpi: 300,
        }
    }
}

/// What a document's OCR reads in: the item's own language, the
/// request's list, and whether the work is cancelled.
pub(crate) struct Reading<'a> {
    pub item_language: Option<&'a str>,
    pub requested: &'a [String],
    pub stop: &'a (dyn Fn() -> bool + Sync),
}

/// The languages OCR reads a document in, and how.
struct Setup {
    choice: folio_ocr::LanguageChoice,
    options: OcrOptions,
    scratch: std::path::PathBuf,
}

impl Engine {
    /// The languages (the item's, else the request's, else the
    /// configured), the resolution and time limit, and the scratch folder
    /// of one document's OCR.
    fn ocr_setup(&self, tesseract: &Tesseract, reading: &Reading<'_>) -> Setup {
        let item: Vec<String> = reading
            .item_language
            .map(str::to_string)
            .into_iter()
            .collect();
        Setup {
            choice: tesseract.choose(&[&item, reading.requested, &self.config.ocr.languages]),
            options: OcrOptions {
                dpi: self.config.ocr.dpi,
                page_timeout: std::time::Duration::from_secs(
                    self.config.limits.ocr_page_timeout_secs,
                ),
                ..OcrOptions::default()
            },
            scratch: self.config.data_dir.join("tmp"),
        }
    }

    /// Whether figures' images are worth handing over: OCR is on, and
    /// Tesseract is there or not looked for yet (looking costs two
    /// processes, which a document without figures need not pay; the first
    /// document with figures looks).
    pub(crate) fn reads_figures(&self) -> bool {
        self.config.ocr.enabled && self.tesseract.get().is_none_or(|found| found.is_ok())
    }

    fn tesseract(&self) -> Result<&Tesseract, &OcrError> {
        self.tesseract
            .get_or_init(|| {
                let found = Tesseract::detect();
                match &found {
                    Ok(t) => tracing::info!(version = t.version(), languages = ?t.languages(), "OCR available"),
                    Err(e) => tracing::info!("{e}"),
                }
                found
            })
            .as_ref()
    }

    /// Reads the textless pages of the PDF or image `bytes` (extracted as
    /// `text`) and
    /// puts what was read in their place where OCR found more text than the
    /// page had; when any page was read, records `ocr` metadata (engine,
    /// languages, pages read, mean confidence). Returns the warnings: what
    /// was left unread and why.
    pub(crate) fn read_scanned_pages(
        &self,
        bytes: &[u8],
        format: Format,
        text: &mut StructuredText,
        reading: &Reading<'_>,
    ) -> crate::Result<Vec<String>> {
        let mut warnings = Vec::new();
        let mut pages = std::mem::take(&mut text.textless_pages);
        if pages.is_empty() {
            return Ok(warnings);
        }
        let unread = |pages: &[u32], why: &str| {
            format!(
                "{} without a text layer not read: {why}",
                describe_pages(pages)
            )
        };
        if !self.config.ocr.enabled {
            warnings.push(unread(
                &pages,
                "OCR is off ([ocr] enabled = false, or FOLIO_OCR=off)",
            ));
            return Ok(warnings);
        }
        let tesseract = match self.tesseract() {
            Ok(tesseract) => tesseract,
            Err(e) => {
                warnings.push(unread(&pages, &e.to_string()));
                return Ok(warnings);
            }
        };
        let limits = &self.config.limits;
        if pages.len() > limits.max_ocr_pages as usize {
            let rest = pages.split_off(limits.max_ocr_pages as usize);
            warnings.push(unread(
                &rest,
                &format!("over the limit of {} OCR pages", limits.max_ocr_pages),
            ));
        }
        let Setup {
            choice,
            options,
            scratch,
        } = self.ocr_setup(tesseract, reading);
        warnings.extend(choice.warnings);
        let stop = reading.stop;
        let results = if format == Format::Image {
            let count = text.page_count.unwrap_or(1);
            tesseract.read_image(bytes, count, &choice.codes, &scratch, &options)
        } else {
            tesseract.read_pdf(bytes, &pages, &choice.codes, &scratch, &options, stop)
        };
        let results = match results {
            Ok(results) => results,
            Err(e) => {
                warnings.push(unread(&pages, &e.to_string()));
                return Ok(warnings);
            }
        };
        if stop() {
            return Err(EngineError::new(
                ErrorCode::Timeout,
                "cancelled while reading scanned pages",
            ));
        }
        let mut read = Vec::new();
        let mut confidences = Vec::new();
        let mut failed = Vec::new();
        for (page, result) in results {
            match result {
                Ok(page_text) => {
                    let blocks: Vec<Block> = page_text
                        .paragraphs
                        .into_iter()
                        .map(|p| Block::new(BlockKind::Paragraph, p, Some(page)))
                        .collect();
                    let before = text.blocks.iter().filter(|b| b.page == Some(page));
                    if alphanumerics(&blocks) > alphanumerics(before) {
                        text.replace_page(page, blocks);
                        read.push(page);
                        confidences.extend(page_text.confidence);
                    }
                }
                Err(e) => failed.push(format!("page {page}: {e}")),
            }
        }
        if !failed.is_empty() {
            warnings.push(format!(
                "OCR failed on {} page(s): {}",
                failed.len(),
                failed.join("; ")
            ));
        }
        if read.is_empty() {
            return Ok(warnings);
        }
        let mut ocr = serde_json::Map::new();
        ocr.insert("engine".into(), Value::String(tesseract.version().into()));
        ocr.insert("languages".into(), json!(choice.codes));
        ocr.insert("pages".into(), Value::String(describe_ranges(&read)));
        if !confidences.is_empty() {
            let mean =
                confidences.iter().map(|&c| f64::from(c)).sum::<f64>() / confidences.len() as f64;
            ocr.insert("confidence".into(), json!((mean * 10.0).round() / 10.0));
        }
        text.metadata.insert("ocr".into(), Value::Object(ocr));
        Ok(warnings)
    }
}

/// Words a figure's OCR text needs to be kept: a photo or a logo reads as
/// a few stray letters.
const FIGURE_MIN_ALPHANUMERICS: usize = 8;

/// The mean word confidence (0–100) a figure's OCR text needs to be kept.
const FIGURE_MIN_CONFIDENCE: f32 = 50.0;

impl Engine {
    /// Reads the figures' images of `text` and of its parts, when OCR is on
    /// and Tesseract is installed: where OCR finds words in an image (a
    /// chart's labels, a screenshot), they go in where the image stands, as
    /// a paragraph on its page, and the document's `ocr` metadata counts
    /// them (`figures`). An image without words, or OCR off, leaves the
    /// document as it is: its text is whole without them. Returns the
    /// warnings (figures OCR failed on).
    pub(crate) fn read_figures(
        &self,
        text: &mut StructuredText,
        reading: &Reading<'_>,
    ) -> crate::Result<Vec<String>> {
        let mut warnings = Vec::new();
        for part in &mut text.parts {
            warnings.extend(self.read_figures(&mut part.text, reading)?);
        }
        let mut figures = std::mem::take(&mut text.figures);
        // Unread figures are worth a word only when they are all there is
        // beside headings.
        let unread = |why: &str| format!("{} figure image(s) not read: {why}", figures.len());
        let bare = text
            .blocks
            .iter()
            .all(|b| matches!(b.kind, BlockKind::Heading(_)) || b.text.trim().is_empty());
        if figures.is_empty() {
            return Ok(warnings);
        }
        if !self.config.ocr.enabled {
            if bare {
                warnings.push(unread(
                    "OCR is off ([ocr] enabled = false, or FOLIO_OCR=off)",
                ));
            }
            return Ok(warnings);
        }
        let tesseract = match self.tesseract() {
            Ok(tesseract) => tesseract,
            Err(e) => {
                if bare {
                    warnings.push(unread(&e.to_string()));
                }
                return Ok(warnings);
            }
        };
        let Setup {
            choice,
            options,
            scratch,
        } = self.ocr_setup(tesseract, reading);
        // Past the caps, extraction counted figures without their images.
        let over = figures.iter().filter(|f| f.image.is_empty()).count();
        if over > 0 {
            warnings.push(format!(
                "{over} figure image(s) not read: over the limit of {} OCR images or {} MiB of them",
                self.config.limits.max_ocr_pages,
                folio_extract::MAX_FIGURE_BYTES >> 20
            ));
            figures.retain(|f| !f.image.is_empty());
        }
        // Last first, so each insertion leaves the places before it.
        figures.sort_by_key(|f| std::cmp::Reverse(f.at));
        let (mut read, mut failed) = (0usize, 0usize);
        for figure in figures {
            if (reading.stop)() {
                return Err(EngineError::new(
                    ErrorCode::Timeout,
                    "cancelled while reading figures",
                ));
            }
            let results =
                match tesseract.read_image(&figure.image, 1, &choice.codes, &scratch, &options) {
                    Ok(results) => results,
                    Err(_) => {
                        failed += 1;
                        continue;
                    }
                };
            let mut paragraphs = Vec::new();
            for (_, result) in results {
                match result {
                    Ok(page) if page.confidence.unwrap_or(0.0) >= FIGURE_MIN_CONFIDENCE => {
                        paragraphs.extend(page.paragraphs)
                    }
                    Ok(_) => {}
                    Err(_) => failed += 1,
                }
            }
            let blocks: Vec<Block> = paragraphs
                .into_iter()
                .map(|p| Block::new(BlockKind::Paragraph, p, figure.page))
                .collect();
            if alphanumerics(&blocks) < FIGURE_MIN_ALPHANUMERICS {
                continue;
            }
            let at = figure.at.min(text.blocks.len());
            text.blocks.splice(at..at, blocks);
            read += 1;
        }
        if failed > 0 {
            warnings.push(format!("OCR failed on {failed} figure image(s)"));
        }
        if read > 0 {
            let ocr = text
                .metadata
                .entry("ocr")
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if let Value::Object(ocr) = ocr {
                ocr.entry("engine")
                    .or_insert_with(|| Value::String(tesseract.version().into()));
                ocr.entry("languages")
                    .or_insert_with(|| json!(choice.codes));
                ocr.insert("figures".into(), json!(read));
            }
        }
        Ok(warnings)
    }
}

/// "page 3" or "3 pages (1-2, 5)".
fn describe_pages(pages: &[u32]) -> String {
    match pages {
        [one] => format!("page {one}"),
        _ => format!("{} pages ({})", pages.len(), describe_ranges(pages)),
    }
}

/// Sorted page numbers as ranges: "1-3, 7".
fn describe_ranges(pages: &[u32]) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &page in pages {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == page => *end = page,
            _ => ranges.push((page, page)),
        }
    }
    ranges
        .iter()
        .map(|&(start, end)| {
            if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_described_as_ranges() {
        assert_eq!(describe_ranges(&[1, 2, 3, 7, 9, 10]), "1-3, 7, 9-10");
        assert_eq!(describe_ranges(&[]), "");
        assert_eq!(describe_pages(&[4]), "page 4");
        assert_eq!(describe_pages(&[4, 5, 8]), "3 pages (4-5, 8)");
    }
}
