//! Fixture builders for tests: small, valid PDF (text or scanned), PNG,
//! TIFF, DOCX and zip files made in code, so no binary fixtures are checked in and each test shows exactly
//! what its input contains.

use std::io::Write;

pub mod modules;
pub mod postgres;

/// Where `scripts/setup.sh` installs the default embedding model
/// (`$FOLIO_HOME`, else `~/.local/share/folio`), for tests that run it.
pub fn model_dir() -> std::path::PathBuf {
    let home = std::env::var("FOLIO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            std::path::PathBuf::from(std::env::var("HOME").expect("HOME"))
                .join(".local/share/folio")
        });
    home.join("models/all-MiniLM-L6-v2")
}

/// A PDF of Helvetica text, one string per page (`\n` starts a new line),
/// with a correct xref table.
pub fn pdf(pages: &[&str]) -> Vec<u8> {
    let n = pages.len();
    let mut objects: Vec<String> = Vec::new();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".into());
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {n} >>",
        kids.join(" ")
    ));
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into());
    for (i, text) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        let lines: Vec<String> = text.lines().map(|l| format!("({l}) Tj")).collect();
        let stream = format!("BT /F1 12 Tf 16 TL 72 720 Td {} ET", lines.join(" T* "));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    assemble(objects.into_iter().map(String::into_bytes).collect())
}

/// A PDF file of the given objects (numbered from 1; object 1 is the
/// catalogue), with a correct xref table.
fn assemble(objects: Vec<Vec<u8>>) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A grey-scale raster: one byte per pixel, row by row, 0 black.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gray {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Gray {
    /// A white raster.
    pub fn blank(width: u32, height: u32) -> Gray {
        Gray {
            width,
            height,
            pixels: vec![255; width as usize * height as usize],
        }
    }
}

impl Gray {
    /// The raster as an 8-bit grey-scale PNG.
    pub fn to_png(&self) -> Vec<u8> {
        let mut raw = Vec::with_capacity(self.pixels.len() + self.height as usize);
        for row in self.pixels.chunks(self.width as usize) {
            raw.push(0); // filter: none
            raw.extend_from_slice(row);
        }
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&raw).expect("in-memory deflate");
        let mut header = Vec::new();
        header.extend_from_slice(&self.width.to_be_bytes());
        header.extend_from_slice(&self.height.to_be_bytes());
        header.extend_from_slice(&[8, 0, 0, 0, 0]);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        png_chunk(&mut out, b"IHDR", &header);
        png_chunk(
            &mut out,
            b"IDAT",
            &encoder.finish().expect("in-memory deflate"),
        );
        png_chunk(&mut out, b"IEND", &[]);
        out
    }
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// An uncompressed little-endian grey-scale TIFF with one page per raster.
pub fn tiff(pages: &[&Gray]) -> Vec<u8> {
    let mut out = b"II*\x00\x00\x00\x00\x00".to_vec();
    let mut link = 4; // where the offset of the next page goes
    for page in pages {
        let strip = out.len() as u32;
        out.extend_from_slice(&page.pixels);
        if out.len() % 2 == 1 {
            out.push(0);
        }
        let ifd = out.len() as u32;
        out[link..link + 4].copy_from_slice(&ifd.to_le_bytes());
        // (tag, type: 3 SHORT / 4 LONG, value)
        let entries: [(u16, u16, u32); 9] = [
            (256, 4, page.width),
            (257, 4, page.height),
            (258, 3, 8),
            (259, 3, 1),
            (262, 3, 1),
            (273, 4, strip),
            (277, 3, 1),
            (278, 4, page.height),
            (279, 4, page.pixels.len() as u32),
        ];
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        for (tag, kind, value) in entries {
            out.extend_from_slice(&tag.to_le_bytes());
            out.extend_from_slice(&kind.to_le_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
            out.extend_from_slice(&value.to_le_bytes());
        }
        link = out.len();
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    out
}

/// An 8-bit PNG's width, height, colour type and pixels.
pub fn png_pixels(bytes: &[u8]) -> (u32, u32, png::ColorType, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a sized PNG")];
    let frame = reader.next_frame(&mut pixels).expect("a PNG frame");
    assert_eq!(frame.bit_depth, png::BitDepth::Eight, "an 8-bit PNG");
    pixels.truncate(frame.buffer_size());
    (frame.width, frame.height, frame.color_type, pixels)
}

/// `text` typeset by [`pdf`] and rendered at `dpi` by Poppler's `pdftoppm`
/// (which must be installed): the pixels of a page as a scanner sees them.
pub fn render(text: &str, dpi: u32) -> Gray {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let source = dir.path().join("page.pdf");
    std::fs::write(&source, pdf(&[text])).expect("a temporary file");
    let stem = dir.path().join("page");
    let status = std::process::Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray", "-png", "-singlefile"])
        .arg(&source)
        .arg(&stem)
        .status()
        .expect("pdftoppm (Debian package poppler-utils; scripts/setup.sh installs it)");
    assert!(status.success(), "pdftoppm failed");
    let png = std::fs::read(stem.with_extension("png")).expect("pdftoppm's output");
    let (width, height, color, mut pixels) = png_pixels(&png);
    // `-gray` renders grey, which Poppler's PNG may still store as RGB.
    if color == png::ColorType::Rgb {
        pixels = pixels.chunks(3).map(|rgb| rgb[0]).collect();
    } else {
        assert_eq!(color, png::ColorType::Grayscale, "a grey or RGB PNG");
    }
    Gray {
        width,
        height,
        pixels,
    }
}

/// A scan: a US Letter page per raster, the image drawn over the whole page
/// (DeviceGray, Flate-compressed) and no text layer — except an optional
/// line of real Helvetica text at the foot of the page, as a stamp or
/// watermark on a scanned page has.
pub fn scanned_pdf(pages: &[(&Gray, Option<&str>)]) -> Vec<u8> {
    let n = pages.len();
    let mut objects: Vec<Vec<u8>> = Vec::new();
    objects.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 3 * i)).collect();
    objects.push(format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes());
    objects.push(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec());
    for (i, (image, stamp)) in pages.iter().enumerate() {
        let (content, picture) = (5 + 3 * i, 6 + 3 * i);
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 {picture} 0 R >> >> /Contents {content} 0 R >>"
            )
            .into_bytes(),
        );
        let mut drawing = "q 612 0 0 792 0 0 cm /Im1 Do Q".to_string();
        if let Some(stamp) = stamp {
            drawing.push_str(&format!(" BT /F1 8 Tf 72 24 Td ({stamp}) Tj ET"));
        }
        objects.push(
            format!(
                "<< /Length {} >>\nstream\n{drawing}\nendstream",
                drawing.len()
            )
            .into_bytes(),
        );
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&image.pixels).expect("in-memory deflate");
        let data = encoder.finish().expect("in-memory deflate");
        let mut object = format!(
            "<< /Type /XObject /Subtype /Image /Width {} /Height {} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length {} >>\nstream\n",
            image.width,
            image.height,
            data.len()
        )
        .into_bytes();
        object.extend_from_slice(&data);
        object.extend_from_slice(b"\nendstream");
        objects.push(object);
    }
    assemble(objects)
}

/// A deflate-compressed zip archive of the given members.
pub fn zip(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in members {
        writer.start_file(*name, options).expect("in-memory zip");
        writer.write_all(data).expect("in-memory zip");
    }
    writer.finish().expect("in-memory zip").into_inner()
}

/// A DOCX whose body is `body` (WordprocessingML), with a styles part that
/// maps the localised id `berschrift1` to "heading 1", and core properties
/// (title "Quarterly & Annual", creator "Ada Lovelace").
pub fn docx(body: &str) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
    );
    let styles = r#"<?xml version="1.0"?><w:styles xmlns:w="x"><w:style w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style><w:style w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>"#;
    let core = r#"<?xml version="1.0"?><cp:coreProperties xmlns:cp="a" xmlns:dc="b"><dc:title>Quarterly &amp; Annual</dc:title><dc:creator>Ada Lovelace</dc:creator></cp:coreProperties>"#;
    zip(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", document.as_bytes()),
        ("word/styles.xml", styles.as_bytes()),
        ("docProps/core.xml", core.as_bytes()),
    ])
}

/// A DOCX paragraph, optionally with a paragraph style id.
pub fn docx_paragraph(style: Option<&str>, text: &str) -> String {
    let ppr = style
        .map(|s| format!(r#"<w:pPr><w:pStyle w:val="{s}"/></w:pPr>"#))
        .unwrap_or_default();
    format!("<w:p>{ppr}<w:r><w:t>{text}</w:t></w:r></w:p>")
}

/// The Python of folio's set-up virtualenv (scripts/setup.sh puts the MCP
/// SDK, pytest and the hub client there), under `$FOLIO_HOME`, by default
/// `~/.local/share/folio`.
pub fn setup_python() -> std::path::PathBuf {
    let home = std::env::var_os("FOLIO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
            home.join(".local/share/folio")
        });
    home.join("setup-venv/bin/python")
}

/// Runs pytest on `target` (a path under the repository root) with the
/// set-up virtualenv's Python and `env`, and fails with its output unless
/// every test passed; prints pytest's summary line.
pub fn pytest(target: &str, env: &[(&str, &str)], what: &str) {
    let python = setup_python();
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup.sh",
        python.display()
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = std::process::Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", target])
        .current_dir(root)
        .envs(env.iter().copied())
        .output()
        .expect("pytest runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}\n{stderr}"
    );
    eprintln!("{what}: {}", stdout.lines().last().unwrap_or_default());
}
