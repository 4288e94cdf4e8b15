//! Tables that are whole files: CSV and TSV (without a record schema), and
//! spreadsheets (XLSX, XLSM, XLSB, XLS, ODS) through calamine. Each sheet is
//! a table captioned by its name, rows cited by the numbers the file shows
//! them under (a spreadsheet's row numbers, a CSV file's records from 2, its
//! header being 1). Formulas count by their stored results.

use std::io::Cursor;

use calamine::{Data, Ods, Reader, SheetVisible, Sheets, Xls, Xlsb, Xlsx, open_workbook_from_rs};
use folio_core::{Block, BlockKind, Limits, StructuredText, Table};

use crate::container::Container;
use crate::{ExtractError, Format};

/// Cells read from one file: past this, the file is refused as too large
/// (a sheet of a million rows of five columns is within it).
pub const MAX_CELLS: u64 = 10_000_000;

/// Opens a workbook as the format detected, so that its own error is the
/// one reported (binary `.xlsb` files share the `.xlsx` format).
fn open(bytes: &[u8], format: Format) -> Result<Sheets<Cursor<&[u8]>>, ExtractError> {
    let cursor = Cursor::new(bytes);
    let malformed = |e: &dyn std::fmt::Display| ExtractError::malformed(format, e);
    match format {
        Format::Xls => open_workbook_from_rs::<Xls<_>, _>(cursor)
            .map(Sheets::Xls)
            .map_err(|e| malformed(&e)),
        Format::Ods => open_workbook_from_rs::<Ods<_>, _>(cursor)
            .map(Sheets::Ods)
            .map_err(|e| malformed(&e)),
        _ => match open_workbook_from_rs::<Xlsx<_>, _>(cursor.clone()) {
            Ok(book) => Ok(Sheets::Xlsx(book)),
            Err(xlsx) => open_workbook_from_rs::<Xlsb<_>, _>(cursor)
                .map(Sheets::Xlsb)
                .map_err(|_| malformed(&xlsx)),
        },
    }
}

/// A CSV (`delimiter` `,`) or TSV (`\t`) file as one table, its first
/// record the header. Ragged records are padded; a record that does not
/// parse (an unclosed quote at the end) ends the table with what came
/// before it.
pub fn extract_delimited(
    text: &str,
    format: Format,
    delimiter: u8,
) -> Result<StructuredText, ExtractError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut cells = 0u64;
    for record in reader.records() {
        let record = record.map_err(|e| ExtractError::malformed(format, e))?;
        cells += record.len() as u64;
        if cells > MAX_CELLS {
            return Err(too_many_cells(format, cells));
        }
        rows.push(record.iter().map(str::to_string).collect());
    }
    let mut table = Table::from_rows(rows);
    table.first_row = Some(2);
    Ok(StructuredText {
        blocks: table.into_block(None).into_iter().collect(),
        ..Default::default()
    })
}

fn too_many_cells(format: Format, cells: u64) -> ExtractError {
    ExtractError::TooManyCells {
        what: match format {
            Format::Csv | Format::Tsv => "table",
            _ => "spreadsheet",
        },
        limit: MAX_CELLS,
        actual: cells,
    }
}

/// A spreadsheet: one table per sheet that holds any value, captioned by
/// the sheet's name ("(hidden)" after a hidden sheet's), under a heading
/// per sheet when there are several. Charts and sheets without cells are
/// left out.
pub fn extract_spreadsheet(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
) -> Result<StructuredText, ExtractError> {
    if bytes.starts_with(b"PK\x03\x04") {
        // The zip formats: refused as a bomb on their declared sizes before
        // calamine inflates anything.
        Container::open(bytes, format, limits)?.check_declared_sizes()?;
    }
    let mut workbook = open(bytes, format)?;
    let sheets: Vec<(String, bool)> = workbook
        .sheets_metadata()
        .iter()
        .filter(|s| s.typ == calamine::SheetType::WorkSheet)
        .map(|s| (s.name.clone(), s.visible != SheetVisible::Visible))
        .collect();
    let mut blocks = Vec::new();
    let mut cells = 0u64;
    for (name, hidden) in &sheets {
        let range = workbook
            .worksheet_range(name)
            .map_err(|e| ExtractError::malformed(format, format!("sheet {name}: {e}")))?;
        let (height, width) = range.get_size();
        cells += (height as u64).saturating_mul(width as u64);
        if cells > MAX_CELLS {
            return Err(too_many_cells(format, cells));
        }
        let Some((top, _)) = range.start() else {
            continue;
        };
        let mut rows: Vec<(u32, Vec<String>)> = range
            .rows()
            .enumerate()
            .map(|(i, row)| (top + i as u32 + 1, row.iter().map(cell_text).collect()))
            .filter(|(_, row): &(u32, Vec<String>)| row.iter().any(|c| !c.is_empty()))
            .collect();
        if rows.is_empty() {
            continue;
        }
        // Columns empty in every row (a range's left margin) are dropped.
        let used: Vec<bool> = (0..width)
            .map(|c| rows.iter().any(|(_, r)| !r[c].is_empty()))
            .collect();
        for (_, row) in &mut rows {
            let mut c = 0;
            row.retain(|_| {
                c += 1;
                used[c - 1]
            });
        }
        let (header_row, header) = rows.remove(0);
        if sheets.len() > 1 {
            blocks.push(Block::new(BlockKind::Heading(2), name.clone(), None));
        }
        // Rows are cited by their sheet numbers: a gap of empty rows keeps
        // the numbering only while rows run on, so each run is a table.
        let mut run: Vec<Vec<String>> = Vec::new();
        let mut run_first = header_row + 1;
        let mut next = header_row + 1;
        let caption = if *hidden {
            format!("{name} (hidden)")
        } else {
            name.clone()
        };
        let flush = |run: Vec<Vec<String>>, first: u32, blocks: &mut Vec<Block>| {
            let table = Table {
                caption: Some(caption.clone()),
                header: header.clone(),
                rows: run,
                first_row: Some(first),
            };
            blocks.extend(table.into_block(None));
        };
        for (number, row) in rows {
            if number != next && !run.is_empty() {
                flush(std::mem::take(&mut run), run_first, &mut blocks);
            }
            if run.is_empty() {
                run_first = number;
            }
            run.push(row);
            next = number + 1;
        }
        if !run.is_empty() || blocks.last().is_none_or(|b| b.kind != BlockKind::Table) {
            flush(run, run_first, &mut blocks);
        }
    }
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "sheets".into(),
        sheets
            .iter()
            .map(|(name, _)| serde_json::Value::from(name.as_str()))
            .collect(),
    );
    Ok(StructuredText {
        blocks,
        metadata,
        ..Default::default()
    })
}

/// A cell as text: numbers as written, dates as ISO 8601, errors as Excel
/// shows them (`#DIV/0!`).
fn cell_text(cell: &Data) -> String {
    match cell {
        Data::DateTime(d) if d.is_datetime() => {
            let (year, month, day, hour, minute, second, _) = d.to_ymd_hms_milli();
            if (hour, minute, second) == (0, 0, 0) {
                format!("{year:04}-{month:02}-{day:02}")
            } else {
                format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}")
            }
        }
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        other => other.to_string().trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_is_one_table_cited_by_its_lines() {
        let t = extract_delimited(
            "Vendor,Item,Price\nAcme GmbH,Bolt M8,0.12\n\"Globex, Ltd\",Nut M8,0.07\n",
            Format::Csv,
            b',',
        )
        .unwrap();
        assert_eq!(t.blocks.len(), 1);
        let table = &t.blocks[0];
        assert_eq!(table.kind, BlockKind::Table);
        assert_eq!(table.first_row, Some(2));
        assert_eq!(
            table.text,
            "| Vendor | Item | Price |\n| --- | --- | --- |\n| Acme GmbH | Bolt M8 | 0.12 |\n| Globex, Ltd | Nut M8 | 0.07 |"
        );
        let tsv = extract_delimited("a\tb\n1\t2|3\n", Format::Tsv, b'\t').unwrap();
        assert_eq!(
            tsv.blocks[0].text,
            "| a | b |\n| --- | --- |\n| 1 | 2\\|3 |"
        );
    }
}
