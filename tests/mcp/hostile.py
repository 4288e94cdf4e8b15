"""Generators of hostile documents: deep nesting in every format folio
parses, decompression bombs, and their neighbours. Used by the hostile-input
tests (tests/mcp/test_hostile.py) and the hostile-corpus benchmark
(scripts/bench_hostile.py). Each generator returns the file's bytes."""

import io
import json
import zipfile
import zlib


def pdf(objects, extra_trailer=""):
    """A PDF with a correct xref table from object bodies (1-based ids)."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode())
        out.write(body if isinstance(body, bytes) else body.encode())
        out.write(b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R {extra_trailer}>>\n"
        f"startxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def stream(data, compress=False):
    if compress:
        data = zlib.compress(data, 9)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def simple_pdf(page_extra="", content=b"BT /F1 12 Tf 72 712 Td (Hello hostile world) Tj ET", compress=False):
    return pdf([
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        " /Resources << /Font << /F1 5 0 R >> >> " + page_extra + ">>",
        stream(content, compress),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


def pdf_nested_array(depth=1_000_000):
    return simple_pdf("/Annots " + "[" * depth + "]" * depth + " ")


def pdf_nested_dict(depth=300_000):
    return simple_pdf("/Foo " + "<< /A " * depth + ">> " * depth)


def pdf_text_bomb(megabytes=300):
    """A small file whose one content stream inflates to `megabytes` of
    text-showing operators."""
    line = b"BT /F1 12 Tf 72 712 Td (" + b"All work and no play " * 8 + b") Tj ET\n"
    block = line * (1024 * 1024 // len(line) + 1)
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(block) for _ in range(megabytes)]
    parts.append(compressor.flush())
    data = b"".join(parts)
    content = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return pdf([
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        " /Resources << /Font << /F1 5 0 R >> >> >>",
        content,
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


def _text_page_with_image(image, draws):
    """A page with a text layer (so it is no scan) that draws the image
    XObject `image` at `draws` places: figures for OCR."""
    words = b"Every line of this page is text, so the page is read as text. " * 6
    text = b"BT /F1 10 Tf 40 760 Td (" + words + b") Tj ET\n"
    draw = b"".join(b"q 120 0 0 40 %d %d cm /Im1 Do Q\n" % (40 + i % 4 * 130, 60 + i // 4 % 16 * 42)
                    for i in range(draws))
    return pdf([
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        " /Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> >> >>",
        stream(text + draw, compress=True),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        image,
    ])


def pdf_image_bomb(side=60_000):
    """A figure on a text page declared `side` pixels square (3.6 GB of
    grey), its stream a few megabytes of zeros that inflate without end."""
    compressor = zlib.compressobj(9)
    zeros = b"\0" * (1024 * 1024)
    data = b"".join(compressor.compress(zeros) for _ in range(400)) + compressor.flush()
    image = (b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray"
             b" /BitsPerComponent 8 /Length %d /Filter /FlateDecode >>\nstream\n" % (side, side, len(data))
             + data + b"\nendstream")
    return _text_page_with_image(image, 1)


def pdf_many_images(draws=20_000):
    """One 1000×1000 image drawn `draws` times on a text page."""
    data = zlib.compress(bytes(range(250)) * 4000, 9)
    image = (b"<< /Type /XObject /Subtype /Image /Width 1000 /Height 1000 /ColorSpace /DeviceGray"
             b" /BitsPerComponent 8 /Length %d /Filter /FlateDecode >>\nstream\n" % len(data)
             + data + b"\nendstream")
    return _text_page_with_image(image, draws)


def html_nested(tag="div", depth=10_000, closed=True):
    body = f"<{tag}>" * depth + "deep text" + (f"</{tag}>" * depth if closed else "")
    return f"<!doctype html><html><head><title>deep</title></head><body>{body}</body></html>".encode()


def html_nested_tables(depth=5_000):
    body = "<table><tr><td>" * depth + "cell" + "</td></tr></table>" * depth
    return f"<html><body>{body}</body></html>".encode()


def markdown_nested_quotes(depth=100_000):
    return (">" * depth + " quoted\n").encode()


def markdown_nested_lists(depth=2_000):
    return "".join("  " * i + "- item\n" for i in range(depth)).encode()


def markdown_brackets(depth=20_000):
    return ("[" * depth + "x" + "](" * depth + "\n").encode()


def json_records_deep(depth=100_000):
    return ('[{"text": "a record", "nested": ' + "[" * depth + "]" * depth + "}]").encode()


def jsonl_records_deep(depth=100_000):
    return ('{"text": "a record", "nested": ' + "{\"a\":" * depth + "1" + "}" * depth + "}\n").encode()


def csv_records_wide(columns=100_000):
    header = ",".join(f"c{i}" for i in range(columns))
    return (f"text,{header}\nhello,{','.join('x' for _ in range(columns))}\n").encode()


def _zip(members):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


CONTENT_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)


def docx(document_xml):
    return _zip({
        "[Content_Types].xml": CONTENT_TYPES,
        "_rels/.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
        "word/document.xml": document_xml,
    })


def docx_deep(depth=100_000):
    xml = ('<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
           + "<w:p>" * depth + "<w:r><w:t>deep</w:t></w:r>" + "</w:p>" * depth + "</w:body></w:document>")
    return docx(xml)


def docx_bomb(megabytes=600):
    text = "<w:p><w:r><w:t>" + "bomb " * 200 + "</w:t></w:r></w:p>"
    xml = ('<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
           + text * (megabytes * 1024 * 1024 // len(text)) + "</w:body></w:document>")
    return docx(xml)


def docx_nested_zip(levels=20):
    inner = docx_deep(10)
    for _ in range(levels):
        inner = _zip({"word/document.xml": inner})
    return docx(inner)


def epub(chapter):
    return _zip({
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
        "OEBPS/content.opf": '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Deep</dc:title></metadata>'
        '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/></spine></package>',
        "OEBPS/c1.xhtml": chapter,
    })


def epub_deep(depth=100_000):
    return epub("<html><body>" + "<div>" * depth + "deep" + "</div>" * depth + "</body></html>")


def epub_deep_xml(depth=100_000):
    """The package document itself nested deep."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", "<container>" + "<x>" * depth + "</x>" * depth + "</container>")
    return out.getvalue()


ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"')


def odf(body, mimetype="application/vnd.oasis.opendocument.text"):
    """An OpenDocument package: the stored mimetype first, then content.xml."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), mimetype, compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/manifest.xml", '<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                   f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mimetype}"/>'
                   '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>')
        z.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ODF_NS}><office:body>{body}</office:body></office:document-content>')
    return out.getvalue()


def odt_deep(depth=30_000):
    return odf("<office:text>" + "<text:section>" * depth + "<text:p>deep</text:p>" + "</text:section>" * depth + "</office:text>")


def odt_bomb(megabytes=600):
    paragraph = "<text:p>" + "bomb " * 200 + "</text:p>"
    return odf("<office:text>" + paragraph * (megabytes * 1024 * 1024 // len(paragraph)) + "</office:text>")


def odf_repeated_cells(mimetype="application/vnd.oasis.opendocument.text", body="text"):
    """One written cell repeated over every column of a million rows."""
    row = ('<table:table-row table:number-rows-repeated="1048576"><table:table-cell office:value-type="string" table:number-columns-repeated="16384">'
           "<text:p>x</text:p></table:table-cell></table:table-row>")
    return odf(f"<office:{body}><table:table table:name='Sheet1'>{row}</table:table></office:{body}>", mimetype)


def rtf_deep(depth=1_000_000):
    return b"{\\rtf1 " + b"{" * depth + b"deep" + b"}" * depth + b"}"


def rtf_bin():
    """A binary run that claims more bytes than the file has."""
    return b"{\\rtf1 text \\bin999999999 " + b"\x00" * 1000 + b"}"


def eml_nested(depth=50_000):
    """Multiparts nested in multiparts, with no text anywhere."""
    parts = []
    for level in range(depth):
        parts.append(f"--b{level}\r\nContent-Type: multipart/mixed; boundary=\"b{level + 1}\"\r\n\r\n")
    closing = "".join(f"--b{level}--\r\n" for level in reversed(range(depth)))
    return (f'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b0"\r\n\r\n' + "".join(parts) + closing).encode()


def mbox_many(messages=10_000):
    """More messages than a document may have pages."""
    return b"From a@b Thu Jan  1 00:00:00 2026\nFrom: a@b\n\nx\n" * messages


def zip_nested(levels=20):
    """Archives in archives, a note at the bottom: read two deep, no more."""
    inner = _zip({"note.md": "# Deep\n\nThe bottom of the archives."})
    for level in range(levels):
        inner = _zip({f"level{level}.zip": inner})
    return inner


def zip_bomb(megabytes=200):
    return _zip({"bomb.txt": "bomb " * (megabytes * 1024 * 1024 // 5)})


def zip_many(members=10_000):
    """More members than a document may have pages."""
    return _zip({f"note{i}.md": f"note {i}" for i in range(members)})


def _tar(members):
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def tar_gz_bomb(megabytes=200):
    import gzip

    return gzip.compress(_tar({"zeros.txt": b"0" * (megabytes * 1024 * 1024)}), compresslevel=1)


def tar_lying_size():
    """A member whose header declares 10 GB and holds a few bytes."""
    import tarfile

    info = tarfile.TarInfo("huge.txt")
    info.size = 10 * 1024 ** 3
    return info.tobuf(format=tarfile.GNU_FORMAT) + b"tiny" * 100


# name -> (file name, generator). The kinds the tests and the benchmark run.
KINDS = {
    "pdf_nested_array": ("deep-array.pdf", pdf_nested_array),
    "pdf_nested_dict": ("deep-dict.pdf", pdf_nested_dict),
    "pdf_text_bomb": ("text-bomb.pdf", pdf_text_bomb),
    "pdf_image_bomb": ("image-bomb.pdf", pdf_image_bomb),
    "pdf_many_images": ("many-images.pdf", pdf_many_images),
    "html_10k_divs": ("deep-10k.html", lambda: html_nested("div", 10_000)),
    "html_unclosed_b": ("deep-b.html", lambda: html_nested("b", 100_000, closed=False)),
    "html_100k_divs": ("deep-100k.html", lambda: html_nested("div", 100_000)),
    "html_1m_divs": ("deep-1m.html", lambda: html_nested("div", 1_000_000)),
    "html_nested_tables": ("deep-tables.html", html_nested_tables),
    "markdown_quotes": ("deep-quotes.md", markdown_nested_quotes),
    "markdown_lists": ("deep-lists.md", markdown_nested_lists),
    "markdown_brackets": ("deep-brackets.md", markdown_brackets),
    "json_records": ("deep.json", json_records_deep),
    "jsonl_records": ("deep.jsonl", jsonl_records_deep),
    "csv_wide": ("wide.csv", csv_records_wide),
    "docx_deep": ("deep.docx", docx_deep),
    "docx_bomb": ("bomb.docx", docx_bomb),
    "docx_nested_zip": ("nested.docx", docx_nested_zip),
    "epub_deep": ("deep.epub", epub_deep),
    "epub_deep_xml": ("deep-xml.epub", epub_deep_xml),
    "odt_deep": ("deep.odt", odt_deep),
    "odt_bomb": ("bomb.odt", odt_bomb),
    "odt_repeated_cells": ("repeated.odt", odf_repeated_cells),
    "ods_repeated_cells": ("repeated.ods", lambda: odf_repeated_cells("application/vnd.oasis.opendocument.spreadsheet", "spreadsheet")),
    "rtf_deep": ("deep.rtf", rtf_deep),
    "rtf_bin": ("bin.rtf", rtf_bin),
    "eml_nested": ("nested.eml", eml_nested),
    "mbox_many": ("many.mbox", mbox_many),
    "zip_nested": ("nested.zip", zip_nested),
    "zip_bomb": ("bomb.zip", zip_bomb),
    "zip_many": ("many.zip", zip_many),
    "tar_gz_bomb": ("bomb.tar.gz", tar_gz_bomb),
    "tar_lying_size": ("lying.tar", tar_lying_size),
}


def write_all(folder, kinds=None):
    """Writes the fixtures into `folder`; returns {kind: path}."""
    paths = {}
    folder.mkdir(parents=True, exist_ok=True)
    for kind in kinds or KINDS:
        name, make = KINDS[kind]
        path = folder / name
        path.write_bytes(make())
        paths[kind] = path
    return paths


if __name__ == "__main__":
    import sys
    from pathlib import Path

    target = Path(sys.argv[1])
    for kind, path in write_all(target).items():
        print(json.dumps({"kind": kind, "path": str(path), "bytes": path.stat().st_size}))
