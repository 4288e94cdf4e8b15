//! The real programs on real rasters: a text PDF is rendered to a grey-scale
//! scan by pdftoppm, wrapped into an image-only PDF, and read back.

use folio_ocr::{OcrOptions, Tesseract};
use folio_testkit::{render, scanned_pdf, tiff};

const PAGE_ONE: &str =
    "Scanned pages carry no text layer at all\nso folio reads them with Tesseract";
const PAGE_TWO: &str =
    "The quick brown fox jumps over the lazy dog\nwhile the archive keeps every page";

fn tesseract() -> Tesseract {
    Tesseract::detect().unwrap_or_else(|e| {
        panic!(
            "{e}: OCR tests need tesseract-ocr and poppler-utils (scripts/setup.sh installs them)"
        )
    })
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The share of `expected`'s words that `read` has.
fn recall(expected: &str, read: &str) -> f64 {
    let read = words(read);
    let expected = words(expected);
    expected.iter().filter(|w| read.contains(w)).count() as f64 / expected.len() as f64
}

#[test]
fn a_scan_is_found_and_read_page_by_page() {
    let ocr = tesseract();
    assert!(ocr.version().starts_with("tesseract"), "{}", ocr.version());
    let (one, two) = (render(PAGE_ONE, 200), render(PAGE_TWO, 200));
    assert_eq!((one.width, one.height), (1700, 2200));
    let scan = scanned_pdf(&[
        (&one, None),
        (&two, Some("Downloaded from the archive on 2026-01-01")),
    ]);

    let limits = folio_core::Limits::default();
    let input = folio_extract::Input {
        bytes: &scan,
        name: Some("scan.pdf"),
        mime: None,
    };
    let (_, text) = folio_extract::extract(input, &limits).expect("a scan is not an error");
    assert_eq!(text.textless_pages, [1, 2]);
    assert_eq!(text.page_count, Some(2));

    let scratch = tempfile::tempdir().unwrap();
    let languages = ocr.choose(&[&["en".to_string()]]).codes;
    assert_eq!(languages, ["eng"]);
    let pages = ocr
        .read_pdf(
            &scan,
            &[1, 2],
            &languages,
            scratch.path(),
            &OcrOptions::default(),
            &|| false,
        )
        .unwrap();
    assert_eq!(pages.len(), 2);
    for ((page, read), expected) in pages.into_iter().zip([PAGE_ONE, PAGE_TWO]) {
        let read = read.unwrap_or_else(|e| panic!("page {page}: {e}"));
        assert_eq!(read.page, page);
        let joined = read.paragraphs.join("\n");
        assert!(
            recall(expected, &joined) >= 0.9,
            "page {page} read as {joined:?}"
        );
        assert!(
            read.confidence.is_some_and(|c| c > 60.0),
            "{:?}",
            read.confidence
        );
    }
    let stopped = ocr
        .read_pdf(
            &scan,
            &[1, 2],
            &languages,
            scratch.path(),
            &OcrOptions::default(),
            &|| true,
        )
        .unwrap();
    assert!(stopped.is_empty(), "a stopped run starts no page");
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "scratch files left behind: {left:?}");
}

#[test]
fn a_page_that_cannot_be_read_fails_alone() {
    let ocr = tesseract();
    let scan = scanned_pdf(&[(&render(PAGE_TWO, 150), None)]);
    let scratch = tempfile::tempdir().unwrap();
    let pages = ocr
        .read_pdf(
            &scan,
            &[1, 7],
            &["eng".to_string()],
            scratch.path(),
            &OcrOptions::default(),
            &|| false,
        )
        .unwrap();
    assert!(pages[0].1.is_ok());
    let (page, error) = &pages[1];
    assert_eq!(*page, 7);
    let error = error.as_ref().unwrap_err();
    assert!(error.starts_with("pdftoppm"), "{error}");

    let broken = ocr
        .read_pdf(
            b"%PDF-1.4 not really",
            &[1],
            &["eng".to_string()],
            scratch.path(),
            &OcrOptions::default(),
            &|| false,
        )
        .unwrap();
    assert!(broken[0].1.is_err());
}

#[test]
fn languages_follow_preferences_and_what_is_installed() {
    let ocr = tesseract();
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // An item's language wins over the configured list.
    let choice = ocr.choose(&[&strings(&["German"]), &strings(&["en", "de"])]);
    assert_eq!(choice.codes, ["deu"]);
    assert!(choice.warnings.is_empty());
    // An unknown or uninstalled wish falls through to the next list, explained.
    let choice = ocr.choose(&[&strings(&["Klingon", "yo"]), &strings(&["en; de"])]);
    assert_eq!(choice.codes, ["eng", "deu"]);
    assert_eq!(choice.warnings.len(), 2, "{:?}", choice.warnings);
    assert!(choice.warnings[0].contains("Klingon"));
    // Nothing usable anywhere: English.
    let choice = ocr.choose(&[&strings(&["xx"])]);
    assert_eq!(choice.codes, ["eng"]);
}

#[test]
fn images_are_read_page_by_page() {
    let ocr = tesseract();
    let (one, two) = (render(PAGE_ONE, 200), render(PAGE_TWO, 200));
    let scratch = tempfile::tempdir().unwrap();
    let english = ["eng".to_string()];
    let options = OcrOptions::default();
    let png = ocr
        .read_image(&one.to_png(), 1, &english, scratch.path(), &options)
        .unwrap()
        .into_iter()
        .map(|(_, page)| page.unwrap())
        .collect::<Vec<_>>();
    assert_eq!(png.len(), 1);
    assert!(
        recall(PAGE_ONE, &png[0].paragraphs.join(" ")) >= 0.9,
        "{png:?}"
    );
    let pages = ocr
        .read_image(&tiff(&[&one, &two]), 2, &english, scratch.path(), &options)
        .unwrap()
        .into_iter()
        .map(|(_, page)| page.unwrap())
        .collect::<Vec<_>>();
    let numbers: Vec<u32> = pages.iter().map(|p| p.page).collect();
    assert_eq!(numbers, [1, 2]);
    assert!(
        recall(PAGE_TWO, &pages[1].paragraphs.join(" ")) >= 0.9,
        "{pages:?}"
    );
    let broken = ocr
        .read_image(
            b"\x89PNG\r\n\x1a\nnot really",
            1,
            &english,
            scratch.path(),
            &options,
        )
        .unwrap();
    assert!(broken.len() == 1 && broken[0].1.is_err(), "{broken:?}");
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
}
