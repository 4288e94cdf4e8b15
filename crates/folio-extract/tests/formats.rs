//! Extraction of each format from fixtures generated here: PDF page spans,
//! DOCX headings and tables, PPTX slides, EPUB spine order, and refusal of
//! malformed, oversized and bomb-like input.

use folio_core::{BlockKind, Limits};
use folio_extract::{ExtractError, Format, Input, extract};
use folio_testkit::{Gray, docx, docx_paragraph as para, pdf, scanned_pdf, tiff, zip};

type Extracted = Result<(Format, folio_core::StructuredText), ExtractError>;

fn run(bytes: &[u8], name: &str) -> Extracted {
    run_with(bytes, name, &Limits::default())
}

fn run_with(bytes: &[u8], name: &str, limits: &Limits) -> Extracted {
    extract(
        Input {
            bytes,
            name: Some(name),
            mime: None,
        },
        limits,
    )
}

#[test]
fn pdf_text_carries_page_numbers() {
    let bytes = pdf(&[
        "Alpha page one text",
        "Beta page two text",
        "Gamma page three text",
    ]);
    let (format, text) = run(&bytes, "paper.pdf").unwrap();
    assert_eq!(format, Format::Pdf);
    assert_eq!(text.page_count, Some(3));
    for (page, word) in [(1, "Alpha"), (2, "Beta"), (3, "Gamma")] {
        let block = text
            .blocks
            .iter()
            .find(|b| b.text.contains(word))
            .unwrap_or_else(|| panic!("{word} missing: {:?}", text.blocks));
        assert_eq!(block.page, Some(page), "{word}");
    }
}

#[test]
fn scanned_pages_are_listed_for_ocr() {
    let page = Gray::blank(425, 550);
    let stamp = "Downloaded from the archive on 2026-01-01";
    let layer = "Searchable scans carry their own text layer over the image. ".repeat(5);
    let bytes = scanned_pdf(&[(&page, None), (&page, Some(stamp)), (&page, Some(&layer))]);
    let (_, text) = run(&bytes, "scan.pdf").expect("a scan is handed over for OCR");
    assert_eq!(text.page_count, Some(3));
    // No text, a stamp over an image: scans. A full text layer: not.
    assert_eq!(text.textless_pages, [1, 2]);
    assert!(
        text.blocks
            .iter()
            .any(|b| b.page == Some(2) && b.text.contains("Downloaded"))
    );

    let (_, text) = run(&scanned_pdf(&[(&page, None)]), "blank.pdf").unwrap();
    assert!(text.is_empty() && text.textless_pages == [1]);
    let (_, text) = run(&pdf(&["A text page of a born-digital paper."]), "a.pdf").unwrap();
    assert!(text.textless_pages.is_empty());
}

#[test]
fn images_are_handed_over_for_ocr_after_a_size_check() {
    let page = Gray::blank(300, 200);
    let (format, text) = run(&page.to_png(), "scan.png").unwrap();
    assert_eq!(format, Format::Image);
    assert!(text.blocks.is_empty());
    assert_eq!(
        (text.page_count, text.textless_pages.clone()),
        (Some(1), vec![1])
    );
    let (format, text) = run(&tiff(&[&page, &page, &page]), "fax.tif").unwrap();
    assert_eq!(format, Format::Image);
    assert_eq!(
        (text.page_count, text.textless_pages.clone()),
        (Some(3), vec![1, 2, 3])
    );
    // A baseline JPEG: SOI, APP0, then SOF0 with height 480 and width 640.
    let mut jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00".to_vec();
    jpeg.extend_from_slice(
        b"\xff\xc0\x00\x11\x08\x01\xe0\x02\x80\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01",
    );
    let (_, text) = run(&jpeg, "photo.jpg").unwrap();
    assert_eq!(text.textless_pages, [1]);

    // A header that promises 50,000 × 50,000 pixels is refused undecoded.
    let mut bomb = page.to_png();
    bomb[16..20].copy_from_slice(&50_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&50_000u32.to_be_bytes());
    match run(&bomb, "bomb.png") {
        Err(ExtractError::TooLarge { actual, .. }) => assert_eq!(actual, 2_500_000_000),
        other => panic!("{other:?}"),
    }
    let limits = Limits {
        max_pages: 2,
        ..Limits::default()
    };
    assert!(matches!(
        run_with(&tiff(&[&page, &page, &page]), "fax.tif", &limits),
        Err(ExtractError::TooMany { what: "pages", .. })
    ));
    for broken in [
        &page.to_png()[..20],
        &b"\xff\xd8\xff\xd9"[..],
        &b"II*\x00\x08\x00\x00\x00"[..],
    ] {
        assert!(
            matches!(
                run(broken, "broken.png"),
                Err(ExtractError::Malformed { .. })
            ),
            "{:?}",
            run(broken, "broken.png")
        );
    }
}

#[test]
fn malformed_pdfs_are_refused() {
    let full = pdf(&["Some text"]);
    for broken in [&b"%PDF-1.7\n1 0 obj <<"[..], &full[..40]] {
        match run(broken, "broken.pdf") {
            Err(e) => assert_eq!(e.code(), folio_core::ErrorCode::MalformedInput, "{e}"),
            Ok((_, t)) => panic!("a truncated PDF must not extract: {t:?}"),
        }
    }
}

#[test]
fn docx_headings_lists_tables_and_properties() {
    let body = [
        para(Some("berschrift1"), "Introduction"),
        para(None, "First paragraph."),
        para(Some("Heading2"), "Details"),
        r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/></w:numPr></w:pPr><w:r><w:t>A list item</w:t></w:r></w:p>"#.to_string(),
        para(Some("Caption"), "Letters by row"),
        r#"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>h1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>h2</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>b &lt; c</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#.to_string(),
    ]
    .concat();
    let (format, text) = run(&docx(&body), "report.docx").unwrap();
    assert_eq!(format, Format::Docx);
    let kinds: Vec<(BlockKind, &str)> = text
        .blocks
        .iter()
        .map(|b| (b.kind, b.text.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (BlockKind::Heading(1), "Introduction"),
            (BlockKind::Paragraph, "First paragraph."),
            (BlockKind::Heading(2), "Details"),
            (BlockKind::ListItem, "A list item"),
            (
                BlockKind::Table,
                "| h1 | h2 |\n| --- | --- |\n| a | b < c |"
            ),
        ]
    );
    // Issue 50: the caption paragraph above the table is its caption.
    assert_eq!(text.blocks[4].caption.as_deref(), Some("Letters by row"));
    assert_eq!(text.title.as_deref(), Some("Quarterly & Annual"));
    assert_eq!(
        text.metadata["authors"],
        serde_json::json!(["Ada Lovelace"])
    );
}

#[test]
fn pptx_slides_are_pages_in_presentation_order() {
    let slide = |title: &str, body: &str| {
        format!(
            r#"<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>{title}</a:t></a:r></a:p></p:txBody></p:sp><p:sp><p:txBody><a:p><a:r><a:t>{body}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"#
        )
    };
    let presentation = r#"<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId id="256" r:id="rId3"/><p:sldId id="257" r:id="rId2"/></p:sldIdLst></p:presentation>"#;
    let rels = r#"<Relationships><Relationship Id="rId2" Target="slides/slide1.xml"/><Relationship Id="rId3" Target="slides/slide2.xml"/></Relationships>"#;
    let (s1, s2) = (
        slide("Second", "shown second"),
        slide("First", "shown first"),
    );
    let bytes = zip(&[
        ("ppt/presentation.xml", presentation.as_bytes()),
        ("ppt/_rels/presentation.xml.rels", rels.as_bytes()),
        ("ppt/slides/slide1.xml", s1.as_bytes()),
        ("ppt/slides/slide2.xml", s2.as_bytes()),
    ]);
    let (format, text) = run(&bytes, "deck.pptx").unwrap();
    assert_eq!(format, Format::Pptx);
    let got: Vec<(BlockKind, &str, Option<u32>)> = text
        .blocks
        .iter()
        .map(|b| (b.kind, b.text.as_str(), b.page))
        .collect();
    assert_eq!(
        got,
        vec![
            (BlockKind::Heading(1), "First", Some(1)),
            (BlockKind::Paragraph, "shown first", Some(1)),
            (BlockKind::Heading(1), "Second", Some(2)),
            (BlockKind::Paragraph, "shown second", Some(2)),
        ]
    );
}

#[test]
fn epub_follows_the_spine() {
    let container = r#"<container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>"#;
    let opf = r#"<package><metadata><dc:title xmlns:dc="d">A Book</dc:title><dc:creator xmlns:dc="d">Jane Doe</dc:creator></metadata><manifest><item id="c1" href="text/one.xhtml"/><item id="c2" href="text/two.xhtml"/></manifest><spine><itemref idref="c2"/><itemref idref="c1"/></spine></package>"#;
    let one = "<html><body><h1>Chapter One</h1><p>Later in the spine.</p></body></html>";
    let two = "<html><body><h1>Chapter Two</h1><p>First in the spine.</p></body></html>";
    let bytes = zip(&[
        ("mimetype", b"application/epub+zip"),
        ("META-INF/container.xml", container.as_bytes()),
        ("OEBPS/content.opf", opf.as_bytes()),
        ("OEBPS/text/one.xhtml", one.as_bytes()),
        ("OEBPS/text/two.xhtml", two.as_bytes()),
    ]);
    let (format, text) = run(&bytes, "book.epub").unwrap();
    assert_eq!(format, Format::Epub);
    assert_eq!(text.title.as_deref(), Some("A Book"));
    let headings: Vec<&str> = text
        .blocks
        .iter()
        .filter(|b| matches!(b.kind, BlockKind::Heading(_)))
        .map(|b| b.text.as_str())
        .collect();
    assert_eq!(headings, ["Chapter Two", "Chapter One"]);
}

#[test]
fn zip_bombs_and_oversized_input_are_refused() {
    let zeros = vec![b'0'; 4 << 20];
    let bomb = docx(&format!(
        "<w:p><w:r><w:t>{}</w:t></w:r></w:p>",
        String::from_utf8_lossy(&zeros)
    ));
    let limits = Limits {
        max_decompressed_bytes: 1 << 20,
        ..Limits::default()
    };
    let result = run_with(&bomb, "bomb.docx", &limits);
    assert!(
        matches!(result, Err(ExtractError::Bomb { .. })),
        "{result:?}"
    );
    // The ratio guard alone catches it too, under the default budget.
    let ratio = Limits {
        max_compression_ratio: 50,
        ..Limits::default()
    };
    let result = run_with(&bomb, "bomb.docx", &ratio);
    assert!(
        matches!(result, Err(ExtractError::Bomb { .. })),
        "{result:?}"
    );
    let small = Limits {
        max_file_bytes: 10,
        ..Limits::default()
    };
    let result = run_with(b"more than ten bytes", "a.txt", &small);
    assert!(
        matches!(result, Err(ExtractError::TooLarge { .. })),
        "{result:?}"
    );
}

#[test]
fn garbage_empty_and_unknown_input_get_clear_errors() {
    assert!(matches!(run(b"", "a.txt"), Err(ExtractError::Empty)));
    assert!(matches!(
        run(&[0u8, 159, 146, 150, 0, 1, 2, 3], "a.txt"),
        Err(ExtractError::Binary)
    ));
    assert!(matches!(
        run(b"PK\x03\x04garbage", "a.docx"),
        Err(ExtractError::Malformed { .. })
    ));
    assert!(matches!(
        run(b"\n\n  \n", "a.md"),
        Err(ExtractError::NoText { .. })
    ));
    assert!(matches!(
        run(b"\x7fELF\x02\x01", "tool.bin"),
        Err(ExtractError::Unsupported { .. })
    ));
}

// Issue 50: an HTML table keeps its caption and its rows, one per line.
#[test]
fn an_html_table_keeps_its_caption_and_rows() {
    let html = "<html><head><title>Prices</title></head><body><p>Intro.</p>\
        <table><caption>Table 2: Unit prices by vendor</caption>\
        <tr><th>Vendor</th><th>Item</th><th>Price (EUR)</th></tr>\
        <tr><td>Acme GmbH</td><td>Bolt M8</td><td>0.12</td></tr>\
        <tr><td>Globex Ltd</td><td>Nut M8</td><td>0.07</td></tr></table></body></html>";
    let (format, text) = run(html.as_bytes(), "prices.html").unwrap();
    assert_eq!(format, Format::Html);
    let table = text
        .blocks
        .iter()
        .find(|b| b.kind == BlockKind::Table)
        .expect("a table block");
    assert_eq!(
        table.caption.as_deref(),
        Some("Table 2: Unit prices by vendor")
    );
    let lines: Vec<&str> = table.text.lines().collect();
    assert_eq!(lines.len(), 4, "{}", table.text);
    assert!(lines[0].contains("Vendor") && lines[0].contains("Price (EUR)"));
    assert!(lines[2].contains("Acme GmbH") && lines[2].contains("0.12"));
    assert!(lines[3].contains("Globex Ltd") && lines[3].contains("0.07"));
    assert!(
        !text
            .blocks
            .iter()
            .any(|b| b.kind == BlockKind::Paragraph && b.text.contains("Unit prices")),
        "{:?}",
        text.blocks
    );
}

// Issue 50: spreadsheets written by openpyxl and odfpy
/// A file of `tests/fixtures`, written by scripts/table_fixtures.py.
fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

// (scripts/table_fixtures.py): a table per sheet, captioned by its name,
// rows cited by their sheet numbers, dates as ISO 8601, hidden sheets marked.
#[test]
fn spreadsheets_are_a_table_per_sheet() {
    let (format, text) = run(&fixture("prices.xlsx"), "prices.xlsx").unwrap();
    assert_eq!(format, Format::Xlsx);
    let tables: Vec<&folio_core::Block> = text
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Table)
        .collect();
    assert_eq!(tables.len(), 2, "{:?}", text.blocks);
    assert_eq!(tables[0].caption.as_deref(), Some("Prices"));
    assert_eq!(tables[0].first_row, Some(2));
    assert_eq!(
        tables[0].text,
        "| Vendor | Item | Price (EUR) | Delivered |\n| --- | --- | --- | --- |\n\
         | Acme GmbH | Bolt M8 | 0.12 | 2026-03-14 |\n| Globex Ltd | Nut M8 | 0.07 | 2026-04-01 |"
    );
    assert_eq!(tables[1].caption.as_deref(), Some("Margins (hidden)"));
    assert!(
        tables[1].text.contains("| Acme GmbH | 3 |"),
        "{}",
        tables[1].text
    );
    assert!(
        text.blocks
            .iter()
            .any(|b| b.kind == BlockKind::Heading(2) && b.text == "Margins")
    );

    // Without a name, the zip is sniffed as a workbook.
    let (format, _) = run(&fixture("prices.xlsx"), "download").unwrap();
    assert_eq!(format, Format::Xlsx);

    let (format, text) = run(&fixture("stock.ods"), "stock.ods").unwrap();
    assert_eq!(format, Format::Ods);
    assert_eq!(text.blocks.len(), 1, "{:?}", text.blocks);
    assert_eq!(text.blocks[0].caption.as_deref(), Some("Stock"));
    assert_eq!(
        text.blocks[0].text,
        "| Part | Count |\n| --- | --- |\n| Flange K9 | 12 |\n| Gasket | 7 |"
    );

    // Cut short, it is malformed, not a panic.
    let bytes = fixture("prices.xlsx");
    assert!(run(&bytes[..bytes.len() / 2], "prices.xlsx").is_err());
}

fn rendered(text: &folio_core::StructuredText) -> Vec<(BlockKind, String, Option<u32>)> {
    text.blocks
        .iter()
        .map(|b| (b.kind, b.render(), b.page))
        .collect()
}

// OpenDocument text written by odfpy: the outline heading, list items, the
// table with its header row and its captioning sequence field, a figure's
// caption kept as a paragraph, the title and author from meta.xml.
#[test]
fn odt_headings_lists_and_captioned_tables() {
    let (format, text) = run(&fixture("report.odt"), "report.odt").unwrap();
    assert_eq!(format, Format::Odt);
    assert_eq!(text.title.as_deref(), Some("Fastener audit"));
    assert_eq!(text.metadata["authors"], serde_json::json!(["Ana Ruiz"]));
    let table = "Table 1: Torque by vendor\n\n| Vendor | Part | Torque (Nm) |\n| --- | --- | --- |\n\
                 | Acme GmbH | Bolt M8 | 24 |\n| Globex Ltd | Bolt M10 | 47 |";
    assert_eq!(
        rendered(&text),
        [
            (BlockKind::Heading(1), "# Audit of fasteners".into(), None),
            (
                BlockKind::Paragraph,
                "The audit compared two vendors over one quarter.".into(),
                None
            ),
            (BlockKind::ListItem, "- Bolts were weighed.".into(), None),
            (BlockKind::ListItem, "- Nuts were counted.".into(), None),
            (BlockKind::Table, table.into(), None),
            (
                BlockKind::Paragraph,
                "Figure 1: The torque bench".into(),
                None
            ),
        ]
    );
    // Sniffed from its mimetype member without a name; cut short, refused.
    assert_eq!(
        run(&fixture("report.odt"), "upload").unwrap().0,
        Format::Odt
    );
    let bytes = fixture("report.odt");
    assert!(run(&bytes[..bytes.len() / 2], "report.odt").is_err());
}

// OpenDocument slides written by odfpy: one page per slide, the title
// frame's text a heading.
#[test]
fn odp_slides_are_pages_with_their_titles() {
    let (format, text) = run(&fixture("slides.odp"), "slides.odp").unwrap();
    assert_eq!(format, Format::Odp);
    assert_eq!(text.page_count, Some(2));
    assert_eq!(text.title.as_deref(), Some("Quarterly review"));
    assert_eq!(
        rendered(&text),
        [
            (BlockKind::Heading(1), "# Quarterly review".into(), Some(1)),
            (
                BlockKind::Paragraph,
                "Deliveries rose by a tenth.".into(),
                Some(1)
            ),
            (BlockKind::Heading(1), "# Next steps".into(), Some(2)),
            (
                BlockKind::Paragraph,
                "Audit the flange supplier.".into(),
                Some(2)
            ),
        ]
    );
}

// RTF written by pandoc: the outline-level heading, Unicode escapes, a
// table of \cell rows with the caption below it.
#[test]
fn rtf_paragraphs_headings_and_tables() {
    let (format, text) = run(&fixture("memo.rtf"), "memo.rtf").unwrap();
    assert_eq!(format, Format::Rtf);
    let blocks = rendered(&text);
    assert!(blocks.contains(&(BlockKind::Heading(1), "# Shipments".into(), None)));
    assert!(blocks.contains(&(
        BlockKind::Paragraph,
        "Two crates left the warehouse on Monday; the café order waits.".into(),
        None
    )));
    assert!(blocks.contains(&(
        BlockKind::Table,
        "Table 3: Crates shipped\n\n| Crate | Weight (kg) |\n| --- | --- |\n| K-17 | 212 |\n| K-18 | 198 |"
            .into(),
        None
    )));
    assert!(blocks.contains(&(
        BlockKind::Paragraph,
        "Привет from the Kyiv office.".into(),
        None
    )));
    // Detected by its signature whatever the name; a non-RTF .rtf is refused.
    assert_eq!(
        run(&fixture("memo.rtf"), "memo.txt").unwrap().0,
        Format::Rtf
    );
    assert!(matches!(
        run(b"plain words", "memo.rtf"),
        Err(ExtractError::Malformed { .. })
    ));
}

// A python-pptx slide: the title a heading, the table a Markdown table on
// the slide's page, the text box after it a paragraph (not a heading).
#[test]
fn pptx_tables_are_tables_on_their_slide() {
    let (format, text) = run(&fixture("parts.pptx"), "parts.pptx").unwrap();
    assert_eq!(format, Format::Pptx);
    assert_eq!(
        rendered(&text),
        [
            (
                BlockKind::Heading(1),
                "# Table 4: Spare parts on hand".into(),
                Some(1)
            ),
            (
                BlockKind::Table,
                "| Part | On hand |\n| --- | --- |\n| Gear pump | 3 |\n| Drive belt | 11 |".into(),
                Some(1)
            ),
            (BlockKind::Paragraph, "Counted on Friday.".into(), Some(1)),
        ]
    );
}

// Issue 50: an image in a document's flow is handed over for OCR with
// where it stands (after the paragraph before it, before its caption) and
// its page; the caption stays a paragraph of its own. Fixtures from
// python-docx, odfpy, python-pptx and pandoc (scripts/table_fixtures.py).
#[test]
fn figures_are_handed_over_for_ocr_where_they_stand() {
    let chart = fixture("chart.png");
    for (name, page) in [
        ("figures.docx", None),
        ("figures.odt", None),
        ("figures.pptx", Some(1)),
        ("figures.epub", None),
    ] {
        let (_, text) = run(&fixture(name), name).unwrap();
        assert_eq!(text.figures.len(), 1, "{name}: {:?}", text.blocks);
        let figure = &text.figures[0];
        assert!(figure.image == chart, "{name}: not the chart's bytes");
        assert_eq!(figure.page, page, "{name}");
        let before: Vec<&str> = text.blocks[..figure.at]
            .iter()
            .map(|b| b.text.as_str())
            .collect();
        let wanted = if name.ends_with("pptx") {
            "Results"
        } else {
            "The plant reports its output below."
        };
        assert_eq!(before.last(), Some(&wanted), "{name}: {:?}", text.blocks);
        if !name.ends_with("pptx") {
            assert!(
                text.blocks[figure.at]
                    .text
                    .contains("Figure 1: Output by quarter"),
                "{name}: {:?}",
                text.blocks
            );
        }
    }
    // Past the OCR cap (none, when the caller does not read figures) a
    // figure is counted without its image.
    let none = Limits {
        max_ocr_pages: 0,
        ..Limits::default()
    };
    for name in [
        "figures.docx",
        "figures.odt",
        "figures.pptx",
        "figures.epub",
    ] {
        let (_, text) = run_with(&fixture(name), name, &none).unwrap();
        assert_eq!(text.figures.len(), 1, "{name}");
        assert!(text.figures[0].image.is_empty(), "{name}");
    }
}

// A PDF page with a text layer hands over its chart, after the page's text;
// an icon too small to hold words, and a page image under a page's text (a
// searchable scan), are not figures (scripts/table_fixtures.py, fpdf2).
#[test]
fn a_pdf_s_figures_are_the_images_on_its_text_pages() {
    let (_, text) = run(&fixture("figures.pdf"), "figures.pdf").unwrap();
    assert!(text.textless_pages.is_empty(), "{:?}", text.textless_pages);
    assert_eq!(text.figures.len(), 1, "{:?}", text.figures);
    let figure = &text.figures[0];
    assert_eq!(figure.page, Some(1));
    assert!(figure.image.starts_with(b"\x89PNG"));
    let page_one = text.blocks.iter().filter(|b| b.page == Some(1)).count();
    assert_eq!(figure.at, page_one, "{:?}", text.blocks);
    // The same pixels' size as the chart the PDF was given (PNG's IHDR).
    let size = |png: &[u8]| png[16..24].to_vec();
    assert_eq!(size(&figure.image), size(&fixture("chart.png")));

    let none = Limits {
        max_ocr_pages: 0,
        ..Limits::default()
    };
    let (_, text) = run_with(&fixture("figures.pdf"), "figures.pdf", &none).unwrap();
    assert!(text.figures.is_empty());
}

// The same memo as pandoc writes it in LaTeX, reStructuredText, Org and
// AsciiDoc (scripts/table_fixtures.py): each reads as the Markdown pandoc
// wrote it from — its title over its two sections, the paragraph without
// markup, the list, the captioned table, the code, the Cyrillic line — with
// its authors, date and language.
#[test]
fn markup_sources_read_as_the_document_they_were_written_from() {
    let rows = "| Crate | Weight (kg) |\n| --- | --- |\n| K-17 | 212 |\n| K-18 | 198 |";
    let mut expected = vec![
        (BlockKind::Heading(1), "# Shipping memo".to_string()),
        (BlockKind::Heading(2), "## Shipments".into()),
        (
            BlockKind::Paragraph,
            "Two crates left the warehouse on Monday; the café order waits for the carrier and K-19."
                .into(),
        ),
        (BlockKind::ListItem, "- Crate K-17 was weighed twice.".into()),
        (BlockKind::ListItem, "- Crate K-18 went by rail.".into()),
        (BlockKind::Heading(3), "### Weights".into()),
        (BlockKind::Table, format!("Crates shipped\n\n{rows}")),
        (BlockKind::Code, "```\nprint(weight(\"K-17\"))\n```".into()),
        (BlockKind::Paragraph, "Привет from the Kyiv office.".into()),
    ];
    for (name, format) in [
        ("memo.tex", Format::Latex),
        ("memo.rst", Format::Rst),
        ("memo.org", Format::Org),
        ("memo.adoc", Format::Asciidoc),
    ] {
        let (found, text) = run(&fixture(name), name).unwrap();
        assert_eq!(found, format, "{name}");
        assert_eq!(text.title.as_deref(), Some("Shipping memo"), "{name}");
        assert_eq!(
            text.metadata["authors"],
            serde_json::json!(["Lea Brandt", "Jonas Weber"]),
            "{name}"
        );
        assert_eq!(text.metadata["year"], 2026, "{name}");
        let blocks: Vec<(BlockKind, String)> = text
            .blocks
            .iter()
            .map(|b| {
                // Lines of a paragraph join as its words do.
                let rendered = b.render();
                let rendered = match b.kind {
                    BlockKind::Paragraph | BlockKind::ListItem => rendered.replace('\n', " "),
                    _ => rendered,
                };
                (b.kind, rendered)
            })
            .collect();
        // LaTeX numbers its table as it sets it.
        expected[6].1 = match format {
            Format::Latex => format!("Table 1: Crates shipped\n\n{rows}"),
            _ => format!("Crates shipped\n\n{rows}"),
        };
        assert_eq!(blocks, expected, "{name}");
        // Only the formats that can say so name the language.
        if matches!(format, Format::Latex | Format::Asciidoc) {
            assert_eq!(text.metadata["language"], "de", "{name}");
        }
    }
}

// Hostile markup: environments, quotes, lists and blocks nested thousands
// deep, macros that call themselves, and a megabyte of marks that never
// close, read in seconds in a
// debug build (linear time, no stack run out), keeping their words.
#[test]
fn hostile_markup_reads_in_linear_time_without_running_the_stack_out() {
    let deep = 20_000;
    let cases: Vec<(&str, String)> = vec![
        (
            "deep.tex",
            format!(
                "{}deep words{}",
                "\\begin{quote}".repeat(deep),
                "\\end{quote}".repeat(deep)
            ),
        ),
        (
            "footnotes.tex",
            format!("{}deep words", "\\footnote{".repeat(deep)),
        ),
        (
            // Macros that call themselves and each other, 20,000 of each.
            "macros.tex",
            format!(
                "{}\\def\\x{{\\y\\y}}\\def\\y{{\\x\\x}}{}deep words",
                "\\newcommand{\\m}{\\m\\m}".repeat(deep),
                "\\m\\x ".repeat(deep)
            ),
        ),
        (
            "envs.tex",
            format!("{}deep words", "\\begin{a}".repeat(deep * 5)),
        ),
        (
            "quotes.rst",
            (0..500)
                .map(|i| format!("{}deep words\n\n", " ".repeat(i)))
                .collect(),
        ),
        ("lists.rst", format!("{}deep words", "* ".repeat(deep))),
        ("marks.rst", "*a ``b `c :d: |e [f ".repeat(50_000)),
        (
            "table.rst",
            format!("{}\n{}\n", "= ".repeat(deep * 5), "x ".repeat(deep * 5)),
        ),
        (
            "blocks.org",
            format!("{}deep words", "#+begin_quote\n".repeat(deep)),
        ),
        ("marks.org", "*a /b =c ~d [[e [fn: ".repeat(50_000)),
        (
            "blocks.adoc",
            (4..deep / 4)
                .map(|n| format!("{}\n", "=".repeat(n)))
                .collect::<String>()
                + "deep words",
        ),
        ("marks.adoc", "*a _b `c #d link:e[ <<f ".repeat(50_000)),
    ];
    for (name, source) in cases {
        let started = std::time::Instant::now();
        let result = run(source.as_bytes(), name);
        let elapsed = started.elapsed();
        assert!(elapsed.as_secs_f64() < 10.0, "{name}: {elapsed:?}");
        let (_, text) = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        if source.contains("deep words") {
            assert!(
                text.blocks.iter().any(|b| b.text.contains("deep words")),
                "{name}"
            );
        }
    }
}
