#!/usr/bin/env python3
"""Writes the spreadsheet fixtures of folio-extract's tests with the usual
Python writers (openpyxl, odfpy): python3 scripts/table_fixtures.py DIR"""
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


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    xlsx(out / "prices.xlsx")
    ods(out / "stock.ods")
