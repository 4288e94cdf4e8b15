//! Format detection from magic bytes, MIME type and file extension.

use serde::{Deserialize, Serialize};

use crate::{ExtractError, Input};

/// A format folio extracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Text,
    Markdown,
    Html,
    Pdf,
    Docx,
    Pptx,
    Epub,
    /// A scanned page or photo (PNG, JPEG, TIFF — a TIFF may hold several
    /// pages): no text of its own, read by OCR.
    Image,
    /// Comma-separated values: one table (records when the library
    /// declares a record schema and the file is named).
    Csv,
    /// Tab-separated values.
    Tsv,
    /// Office Open XML spreadsheets (`.xlsx`, `.xlsm`, `.xlsb`).
    Xlsx,
    /// Excel 97–2003 workbooks.
    Xls,
    /// OpenDocument spreadsheets.
    Ods,
    /// Jupyter notebooks.
    Ipynb,
    /// OpenDocument text (`.odt`).
    Odt,
    /// OpenDocument presentations (`.odp`).
    Odp,
    /// Rich Text Format.
    Rtf,
    /// One mail message (RFC 5322, `.eml`).
    Eml,
    /// A mailbox of messages (`.mbox`).
    Mbox,
    /// A ZIP archive that is no office document: its members are read as
    /// documents of their own.
    Zip,
    /// A TAR archive (`.tar`, `.tar.gz`, `.tgz`): its members likewise.
    Tar,
    /// A LaTeX source (`.tex`, `.ltx`).
    Latex,
    /// reStructuredText (`.rst`, `.rest`).
    Rst,
    /// An Org document (`.org`).
    Org,
    /// AsciiDoc (`.adoc`, `.asciidoc`).
    Asciidoc,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Pdf => "pdf",
            Format::Docx => "docx",
            Format::Pptx => "pptx",
            Format::Epub => "epub",
            Format::Image => "image",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Xlsx => "xlsx",
            Format::Xls => "xls",
            Format::Ods => "ods",
            Format::Ipynb => "ipynb",
            Format::Odt => "odt",
            Format::Odp => "odp",
            Format::Rtf => "rtf",
            Format::Eml => "eml",
            Format::Mbox => "mbox",
            Format::Zip => "zip",
            Format::Tar => "tar",
            Format::Latex => "latex",
            Format::Rst => "rst",
            Format::Org => "org",
            Format::Asciidoc => "asciidoc",
        }
    }

    /// Formats whose text is organised in pages.
    pub fn is_paged(self) -> bool {
        matches!(
            self,
            Format::Pdf | Format::Pptx | Format::Odp | Format::Image
        )
    }

    /// Whether a folder walk picks files of this format up. Images are read
    /// when named (a file, an upload, a URL), not found in folders, where
    /// they are mostly figures and photos; archives are read when named, or
    /// in a walk that asks for them (`archives`).
    pub fn walked(self, archives: bool) -> bool {
        match self {
            Format::Image => false,
            Format::Zip | Format::Tar => archives,
            _ => true,
        }
    }

    /// The format a file's name names by its extension (`.tar.gz` too).
    pub fn from_file_name(name: &str) -> Option<Format> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".tar.gz") {
            return Some(Format::Tar);
        }
        extension(name).and_then(Format::from_extension)
    }

    /// The format a file extension names, if folio reads it.
    pub fn from_extension(ext: &str) -> Option<Format> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "txt" | "text" | "log" | "json" | "yaml" | "yml" | "toml" => Format::Text,
            "tex" | "ltx" | "latex" => Format::Latex,
            "rst" | "rest" => Format::Rst,
            "org" => Format::Org,
            "adoc" | "asciidoc" => Format::Asciidoc,
            "csv" => Format::Csv,
            "tsv" | "tab" => Format::Tsv,
            "xlsx" | "xlsm" | "xlsb" => Format::Xlsx,
            "xls" => Format::Xls,
            "ods" => Format::Ods,
            "odt" => Format::Odt,
            "odp" => Format::Odp,
            "rtf" => Format::Rtf,
            "eml" => Format::Eml,
            "mbox" | "mbx" => Format::Mbox,
            "ipynb" => Format::Ipynb,
            "zip" => Format::Zip,
            "tar" | "tgz" => Format::Tar,
            "md" | "markdown" | "mdx" => Format::Markdown,
            "html" | "htm" | "xhtml" => Format::Html,
            "pdf" => Format::Pdf,
            "docx" => Format::Docx,
            "pptx" => Format::Pptx,
            "epub" => Format::Epub,
            "png" | "jpg" | "jpeg" | "tif" | "tiff" => Format::Image,
            _ => return None,
        })
    }

    fn from_mime(mime: &str) -> Option<Format> {
        let essence = mime.split(';').next()?.trim().to_ascii_lowercase();
        Some(match essence.as_str() {
            "text/html" | "application/xhtml+xml" => Format::Html,
            "text/markdown" | "text/x-markdown" => Format::Markdown,
            "text/x-tex" | "application/x-tex" | "application/x-latex" | "text/x-latex" => {
                Format::Latex
            }
            "text/x-rst" | "text/prs.fallenstein.rst" => Format::Rst,
            "text/x-org" | "text/org" => Format::Org,
            "text/asciidoc" | "text/x-asciidoc" => Format::Asciidoc,
            "application/pdf" => Format::Pdf,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => {
                Format::Docx
            }
            "application/vnd.openxmlformats-officedocument.presentationml.presentation" => {
                Format::Pptx
            }
            "application/epub+zip" => Format::Epub,
            "image/png" | "image/jpeg" | "image/tiff" => Format::Image,
            "text/csv" => Format::Csv,
            "text/tab-separated-values" => Format::Tsv,
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            | "application/vnd.ms-excel.sheet.macroenabled.12"
            | "application/vnd.ms-excel.sheet.binary.macroenabled.12" => Format::Xlsx,
            "application/vnd.ms-excel" => Format::Xls,
            "application/vnd.oasis.opendocument.spreadsheet" => Format::Ods,
            "application/vnd.oasis.opendocument.text" => Format::Odt,
            "application/vnd.oasis.opendocument.presentation" => Format::Odp,
            "application/rtf" | "text/rtf" => Format::Rtf,
            "message/rfc822" => Format::Eml,
            "application/mbox" => Format::Mbox,
            "application/x-ipynb+json" => Format::Ipynb,
            "application/zip" | "application/x-zip-compressed" => Format::Zip,
            "application/x-tar" | "application/x-gtar" => Format::Tar,
            m if m.starts_with("text/") => Format::Text,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn extension(name: &str) -> Option<&str> {
    let file = name.rsplit(['/', '\\']).next()?;
    let file = file.split(['?', '#']).next()?;
    file.rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|e| !e.is_empty())
}

/// Picks the format: magic bytes win for PDF and zip containers (a `.txt`
/// that is really a PDF is read as a PDF), then the MIME type, then the
/// extension, then a sniff of the content for HTML and plain text.
pub fn detect(input: Input<'_>) -> Result<Format, ExtractError> {
    let bytes = input.bytes;
    let by_ext = input.name.and_then(Format::from_file_name);
    if bytes.starts_with(b"%PDF-")
        || bytes
            .get(..1024)
            .is_some_and(|head| find(head, b"%PDF-").is_some())
    {
        return Ok(Format::Pdf);
    }
    if is_image(bytes) {
        return Ok(Format::Image);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return match by_ext {
            Some(
                f @ (Format::Docx
                | Format::Pptx
                | Format::Epub
                | Format::Xlsx
                | Format::Ods
                | Format::Odt
                | Format::Odp),
            ) => Ok(f),
            _ if find(bytes, b"word/document.xml").is_some() => Ok(Format::Docx),
            _ if find(bytes, b"ppt/presentation.xml").is_some() => Ok(Format::Pptx),
            _ if find(bytes, b"xl/workbook.").is_some() => Ok(Format::Xlsx),
            _ if find(bytes, b"application/epub+zip").is_some() => Ok(Format::Epub),
            // An OpenDocument file starts with its stored `mimetype` member;
            // any other zip is an archive of files.
            _ => Ok(odf_mimetype(bytes).unwrap_or(Format::Zip)),
        };
    }
    // A POSIX or GNU TAR ("ustar" at 257), or a gzip stream named as one.
    if bytes.get(257..262) == Some(b"ustar")
        || (bytes.starts_with(&[0x1f, 0x8b]) && by_ext == Some(Format::Tar))
    {
        return Ok(Format::Tar);
    }
    if bytes.starts_with(CFB_SIGNATURE) {
        // An OLE compound file: Excel 97–2003 is read; Word 97 and Outlook
        // messages are not.
        return match by_ext {
            Some(Format::Xls) => Ok(Format::Xls),
            _ if find(bytes, &utf16(b"Workbook")).is_some()
                || find(bytes, &utf16(b"Book")).is_some() =>
            {
                Ok(Format::Xls)
            }
            _ => Err(ExtractError::Unsupported {
                hint: Some("an OLE compound file that is not an Excel workbook".into()),
            }),
        };
    }
    if bytes.starts_with(b"{\\rtf") {
        return Ok(Format::Rtf);
    }
    if let Some(format) = input.mime.and_then(Format::from_mime)
        && (format != Format::Text || by_ext.is_none())
    {
        return Ok(format);
    }
    if let Some(format) = by_ext {
        if matches!(
            format,
            Format::Pdf
                | Format::Docx
                | Format::Pptx
                | Format::Epub
                | Format::Image
                | Format::Xlsx
                | Format::Xls
                | Format::Ods
                | Format::Odt
                | Format::Odp
                | Format::Rtf
                | Format::Zip
        ) {
            return Err(ExtractError::malformed(
                format,
                "the file does not start with the format's signature",
            ));
        }
        return Ok(format);
    }
    // Mail without a name: a mailbox's "From " line, a message's headers.
    let start = &bytes[..bytes.len().min(4096)];
    if let Some(rest) = start.strip_prefix(b"From ")
        && let Some(line_end) = rest.iter().position(|&b| b == b'\n')
        && crate::mail::looks_like_message(&rest[line_end + 1..])
    {
        return Ok(Format::Mbox);
    }
    if crate::mail::looks_like_message(start) {
        return Ok(Format::Eml);
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let head = head.trim_start_matches('\u{feff}').trim_start();
    if head.starts_with("<!doctype html") || head.starts_with("<html") {
        return Ok(Format::Html);
    }
    match input.name.and_then(extension) {
        Some(ext) => Err(ExtractError::Unsupported {
            hint: Some(format!("files ending in .{ext}")),
        }),
        None => Ok(Format::Text),
    }
}

/// The OpenDocument format a zip's `mimetype` member names: the first
/// member, stored uncompressed, so its value sits near the start.
fn odf_mimetype(bytes: &[u8]) -> Option<Format> {
    const ODF: &[u8] = b"application/vnd.oasis.opendocument.";
    let head = &bytes[..bytes.len().min(256)];
    let at = find(head, ODF)? + ODF.len();
    let rest = &head[at..];
    if rest.starts_with(b"spreadsheet") {
        Some(Format::Ods)
    } else if rest.starts_with(b"text") && !rest.starts_with(b"text-") {
        Some(Format::Odt)
    } else if rest.starts_with(b"presentation") && !rest.starts_with(b"presentation-") {
        Some(Format::Odp)
    } else {
        None
    }
}

/// OLE compound files (Excel 97–2003, Word 97, Outlook messages).
const CFB_SIGNATURE: &[u8] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1";

/// `name` as UTF-16LE, as compound files name their streams.
fn utf16(name: &[u8]) -> Vec<u8> {
    name.iter().flat_map(|&b| [b, 0]).collect()
}

/// PNG, JPEG, little- and big-endian TIFF.
/// Whether `bytes` start like a PNG, JPEG or TIFF image.
pub(crate) fn is_image(bytes: &[u8]) -> bool {
    IMAGE_SIGNATURES
        .iter()
        .any(|magic| bytes.starts_with(magic))
}

const IMAGE_SIGNATURES: [&[u8]; 4] = [
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"II*\x00",
    b"MM\x00*",
];

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_of(
        bytes: &[u8],
        name: Option<&str>,
        mime: Option<&str>,
    ) -> Result<Format, ExtractError> {
        detect(Input { bytes, name, mime })
    }

    #[test]
    fn magic_extension_mime_and_sniffing() {
        assert_eq!(
            detect_of(b"%PDF-1.7 ...", Some("a.txt"), None).unwrap(),
            Format::Pdf
        );
        assert_eq!(
            detect_of(b"# hi", Some("notes.md"), None).unwrap(),
            Format::Markdown
        );
        assert_eq!(
            detect_of(
                b"<p>x</p>",
                Some("https://e.org/page?x=1"),
                Some("text/html; charset=utf-8")
            )
            .unwrap(),
            Format::Html
        );
        assert_eq!(
            detect_of(b"<!DOCTYPE html><html>", None, None).unwrap(),
            Format::Html
        );
        assert_eq!(detect_of(b"plain", None, None).unwrap(), Format::Text);
        assert!(matches!(
            detect_of(b"\x7fELF", Some("a.exe"), None),
            Err(ExtractError::Unsupported { .. })
        ));
        assert!(matches!(
            detect_of(b"not a pdf", Some("a.pdf"), None),
            Err(ExtractError::Malformed { .. })
        ));
        for magic in IMAGE_SIGNATURES {
            assert_eq!(
                detect_of(magic, Some("scan.txt"), None).unwrap(),
                Format::Image
            );
        }
        assert!(matches!(
            detect_of(b"GIF89a", Some("scan.png"), None),
            Err(ExtractError::Malformed { .. })
        ));
        assert!(!Format::Image.walked(true) && Format::Pdf.walked(false));
        assert!(!Format::Zip.walked(false) && Format::Tar.walked(true));
        assert_eq!(Format::from_file_name("a/B.TAR.GZ"), Some(Format::Tar));
    }
}
