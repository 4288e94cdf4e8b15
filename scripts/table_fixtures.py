#!/usr/bin/env python3
"""Writes the office fixtures of folio-extract's tests with the usual
Python writers (openpyxl, odfpy, python-docx, python-pptx with Pillow, and
pandoc through pypandoc_binary for RTF, EPUB, LaTeX, reStructuredText, Org
and AsciiDoc):
python3 scripts/table_fixtures.py DIR"""
import datetime
import sys
from pathlib import Path

import openpyxl
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import Table, TableCell, TableRow
from odf.text import P


def xlsx(path):
    book = openpyxl.Workbook()
    prices = book.active
    prices.title = "Prices"
    prices.append(["Vendor", "Item", "Price (EUR)", "Delivered"])
    prices.append(["Acme GmbH", "Bolt M8", 0.12, datetime.date(2026, 3, 14)])
    prices.append(["Globex Ltd", "Nut M8", 0.07, datetime.date(2026, 4, 1)])
    secret = book.create_sheet("Margins")
    secret.sheet_state = "hidden"
    secret.append(["Vendor", "Margin"])
    secret.append(["Acme GmbH", 3])
    book.save(path)


def ods(path):
    doc = OpenDocumentSpreadsheet()
    sheet = Table(name="Stock")
    for row in [["Part", "Count"], ["Flange K9", "12"], ["Gasket", "7"]]:
        tr = TableRow()
        for value in row:
            cell = TableCell(valuetype="string") if not value.isdigit() else TableCell(valuetype="float", value=value)
            cell.addElement(P(text=value))
            tr.addElement(cell)
        sheet.addElement(tr)
    doc.spreadsheet.addElement(sheet)
    doc.save(str(path))


def odt(path):
    from odf.opendocument import OpenDocumentText
    from odf.style import Style
    from odf.table import TableColumn, TableHeaderRows
    from odf.text import H, List, ListItem, Sequence, SequenceDecl, SequenceDecls

    doc = OpenDocumentText()
    doc.meta.addElement(__import__("odf.dc", fromlist=["Title"]).Title(text="Fastener audit"))
    doc.meta.addElement(__import__("odf.dc", fromlist=["Creator"]).Creator(text="Ana Ruiz"))
    for name in ["Table", "Illustration"]:
        doc.styles.addElement(Style(name=name, family="paragraph"))
    heading = Style(name="Heading_20_1", displayname="Heading 1", family="paragraph", defaultoutlinelevel="1")
    doc.styles.addElement(heading)
    decls = SequenceDecls()
    decls.addElement(SequenceDecl(name="Table", displayoutlinelevel="0"))
    doc.text.addElement(decls)
    doc.text.addElement(H(outlinelevel=1, stylename=heading, text="Audit of fasteners"))
    doc.text.addElement(P(text="The audit compared two vendors over one quarter."))
    items = List()
    for text in ["Bolts were weighed.", "Nuts were counted."]:
        item = ListItem()
        item.addElement(P(text=text))
        items.addElement(item)
    doc.text.addElement(items)
    caption = P(stylename="Table")
    caption.addText("Table ")
    caption.addElement(Sequence(name="Table", formula="ooow:Table+1", numformat="1", text="1"))
    caption.addText(": Torque by vendor")
    doc.text.addElement(caption)
    table = Table(name="Table1")
    table.addElement(TableColumn(numbercolumnsrepeated=3))
    header = TableHeaderRows()
    rows = [["Vendor", "Part", "Torque (Nm)"], ["Acme GmbH", "Bolt M8", "24"], ["Globex Ltd", "Bolt M10", "47"]]
    for index, row in enumerate(rows):
        tr = TableRow()
        for value in row:
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            tr.addElement(cell)
        if index == 0:
            header.addElement(tr)
            table.addElement(header)
        else:
            table.addElement(tr)
    doc.text.addElement(table)
    doc.text.addElement(P(stylename="Illustration", text="Figure 1: The torque bench"))
    doc.save(str(path))


def odp(path):
    from odf.draw import Frame, Page, TextBox
    from odf.namespaces import PRESENTATIONNS
    from odf.opendocument import OpenDocumentPresentation
    from odf.style import MasterPage, PageLayout, PageLayoutProperties

    doc = OpenDocumentPresentation()
    layout = PageLayout(name="PM1")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Default", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    slides = [("Quarterly review", ["Deliveries rose by a tenth."]), ("Next steps", ["Audit the flange supplier."])]
    for title, lines in slides:
        page = Page(masterpagename=master)
        frame = Frame(width="20cm", height="3cm", x="2cm", y="1cm")
        frame.setAttrNS(PRESENTATIONNS, "class", "title")
        box = TextBox()
        box.addElement(P(text=title))
        frame.addElement(box)
        page.addElement(frame)
        frame = Frame(width="20cm", height="12cm", x="2cm", y="5cm")
        frame.setAttrNS(PRESENTATIONNS, "class", "outline")
        box = TextBox()
        for line in lines:
            box.addElement(P(text=line))
        frame.addElement(box)
        page.addElement(frame)
        doc.presentation.addElement(page)
    doc.save(str(path))


def rtf(path):
    import pypandoc

    markdown = """---
title: Shipping memo
author: Lea Brandt
---

# Shipments

Two crates left the warehouse on Monday; the caf\u00e9 order waits.

| Crate | Weight (kg) |
|-------|-------------|
| K-17  | 212         |
| K-18  | 198         |

: Table 3: Crates shipped

Привет from the Kyiv office.
"""
    pypandoc.convert_text(markdown, "rtf", format="markdown", outputfile=str(path), extra_args=["--standalone"])


MARKUP = """---
title: Shipping memo
author:
- Lea Brandt
- Jonas Weber
date: 2026-03-02
lang: de
---

# Shipments

Two crates left the *warehouse* on Monday; the caf\u00e9 order waits for
[the carrier](https://example.org/carrier) and `K-19`.

- Crate K-17 was weighed twice.
- Crate K-18 went by rail.

## Weights

| Crate | Weight (kg) |
|-------|-------------|
| K-17  | 212         |
| K-18  | 198         |

: Crates shipped

```python
print(weight("K-17"))
```

Привет from the Kyiv office.
"""


def markup(out):
    """The same memo as pandoc writes it in LaTeX, reStructuredText, Org and
    AsciiDoc."""
    import pypandoc

    for writer, name in [("latex", "memo.tex"), ("rst", "memo.rst"), ("org", "memo.org"),
                         ("asciidoc", "memo.adoc")]:
        pypandoc.convert_text(MARKUP, writer, format="markdown", outputfile=str(out / name),
                              extra_args=["--standalone"])


def pptx(path):
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Table 4: Spare parts on hand"
    grid = slide.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate([["Part", "On hand"], ["Gear pump", "3"], ["Drive belt", "11"]]):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    slide.shapes.add_textbox(Inches(1), Inches(5), Inches(6), Inches(1)).text_frame.text = "Counted on Friday."
    deck.save(str(path))


FIGURE_TEXT = "Quarterly output rose to 4812 units"


def chart(path):
    """An image with words in it, as a chart's label or a screenshot has."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1100, 160), 255)
    ImageDraw.Draw(image).text((30, 45), FIGURE_TEXT, fill=0, font=ImageFont.load_default(size=56))
    image.save(path)


def pdf(path, png, caption):
    """The figure on a PDF page with a text layer, beside an icon too small
    to read; and a second page whose image covers it, under its own text
    (a searchable scan's page image, not a figure)."""
    from fpdf import FPDF
    from PIL import Image

    icon = path.with_name("icon.png")
    Image.new("L", (16, 16), 0).save(icon)
    document = FPDF(format="A4")
    document.set_font("helvetica", size=12)
    document.add_page()
    document.set_font("helvetica", "B", 18)
    document.cell(0, 12, "Results", new_x="LMARGIN", new_y="NEXT")
    document.set_font("helvetica", size=12)
    document.multi_cell(0, 8, "The plant ran three shifts through the year, and its staff logged each "
                        "batch, each stop and each repair in the daily book, which the quarterly "
                        "review then summed. Two of the four lines were rebuilt in the spring, and the "
                        "new kilns came on in the summer. The plant reports its output below.",
                        new_x="LMARGIN", new_y="NEXT")
    document.image(str(icon), x=180, y=12, w=6)
    document.image(str(png), x=15, w=170)
    document.multi_cell(0, 8, caption, new_x="LMARGIN", new_y="NEXT")
    document.add_page()
    document.image(str(png), x=0, y=0, w=210, h=297)
    document.multi_cell(0, 8, "The archive keeps every report since the plant opened. " * 6)
    document.output(str(path))
    icon.unlink()


def figures(out):
    """The same figure, between a paragraph and its caption, in DOCX, ODT,
    PPTX and EPUB."""
    import docx
    import pypandoc
    from docx.shared import Inches
    from odf.draw import Frame, Image as OdfImage
    from odf.opendocument import OpenDocumentText
    from odf.text import P as OdfP
    from pptx import Presentation
    from pptx.util import Inches as PptInches

    png = out / "chart.png"
    chart(png)
    caption = "Figure 1: Output by quarter"

    document = docx.Document()
    document.add_heading("Results", level=1)
    document.add_paragraph("The plant reports its output below.")
    document.add_picture(str(png), width=Inches(5))
    document.add_paragraph(caption, style="Caption")
    document.save(str(out / "figures.docx"))

    text = OpenDocumentText()
    text.text.addElement(OdfP(text="The plant reports its output below."))
    href = text.addPicture(str(png))
    frame = Frame(width="15cm", height="2.2cm", anchortype="paragraph")
    frame.addElement(OdfImage(href=href))
    holder = OdfP()
    holder.addElement(frame)
    text.text.addElement(holder)
    text.text.addElement(OdfP(text=caption))
    text.save(str(out / "figures.odt"))

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Results"
    slide.shapes.add_picture(str(png), PptInches(1), PptInches(2), width=PptInches(8))
    deck.save(str(out / "figures.pptx"))

    pdf(out / "figures.pdf", png, caption)

    markdown = f"# Results\n\nThe plant reports its output below.\n\n![{caption}](chart.png)\n"
    pypandoc.convert_text(markdown, "epub", format="markdown", outputfile=str(out / "figures.epub"),
                          extra_args=[f"--resource-path={out}", "--metadata=title:Results"])


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    xlsx(out / "prices.xlsx")
    ods(out / "stock.ods")
    odt(out / "report.odt")
    odp(out / "slides.odp")
    rtf(out / "memo.rtf")
    markup(out)
    pptx(out / "parts.pptx")
    figures(out)
