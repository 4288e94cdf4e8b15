//! Jupyter notebooks (nbformat 4): Markdown cells as Markdown, code cells as
//! code, their text outputs as code and their HTML outputs (a data frame's
//! table) as Markdown; images and widgets are left out.

use folio_core::{Block, BlockKind, StructuredText};
use serde_json::Value;

use crate::{ExtractError, Format, html, markdown};

pub fn extract(text: &str) -> Result<StructuredText, ExtractError> {
    let notebook: Value =
        serde_json::from_str(text).map_err(|e| ExtractError::malformed(Format::Ipynb, e))?;
    let cells = notebook
        .get("cells")
        .and_then(Value::as_array)
        .ok_or_else(|| ExtractError::malformed(Format::Ipynb, "no list of cells"))?;
    let mut blocks = Vec::new();
    for cell in cells {
        let source = joined(cell.get("source"));
        match cell.get("cell_type").and_then(Value::as_str) {
            Some("markdown") => blocks.extend(markdown::blocks(&source, None)),
            Some("code") => {
                if !source.trim().is_empty() {
                    blocks.push(Block::new(BlockKind::Code, source.trim_end(), None));
                }
                for output in cell
                    .get("outputs")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    blocks.extend(output_blocks(output));
                }
            }
            Some("raw") if !source.trim().is_empty() => {
                blocks.push(Block::new(BlockKind::Paragraph, source.trim(), None));
            }
            _ => {}
        }
    }
    let metadata_of = |path: &[&str]| {
        path.iter()
            .try_fold(&notebook, |v, key| v.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut metadata = serde_json::Map::new();
    if let Some(language) = metadata_of(&["metadata", "language_info", "name"])
        .or_else(|| metadata_of(&["metadata", "kernelspec", "language"]))
    {
        metadata.insert("programming_language".into(), language.into());
    }
    let title = metadata_of(&["metadata", "title"]).or_else(|| {
        blocks
            .iter()
            .find(|b| b.kind == BlockKind::Heading(1))
            .map(|b| b.text.clone())
    });
    Ok(StructuredText {
        title,
        blocks,
        metadata,
        ..Default::default()
    })
}

/// A cell's source or an output's text: a string, or a list of lines.
fn joined(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn output_blocks(output: &Value) -> Vec<Block> {
    let code = |text: String| {
        let text = text.trim_end().to_string();
        (!text.trim().is_empty())
            .then(|| Block::new(BlockKind::Code, text, None))
            .into_iter()
            .collect()
    };
    match output.get("output_type").and_then(Value::as_str) {
        Some("stream") => code(joined(output.get("text"))),
        Some("execute_result" | "display_data") => {
            let data = output.get("data");
            let html = joined(data.and_then(|d| d.get("text/html")));
            if html.contains("<table") {
                return markdown::blocks(&html::to_markdown(&html), None);
            }
            code(joined(data.and_then(|d| d.get("text/plain"))))
        }
        Some("error") => {
            let name = output.get("ename").and_then(Value::as_str).unwrap_or("");
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or("");
            code(format!("{name}: {value}"))
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_outputs_and_tables() {
        let notebook = serde_json::json!({
            "nbformat": 4,
            "metadata": {"language_info": {"name": "python"}},
            "cells": [
                {"cell_type": "markdown", "source": ["# Prices\n", "\n", "Unit prices by vendor."]},
                {"cell_type": "code", "source": "df = load()\ndf", "outputs": [
                    {"output_type": "execute_result", "data": {
                        "text/plain": "   vendor  price",
                        "text/html": "<table><thead><tr><th>vendor</th><th>price</th></tr></thead><tbody><tr><td>Acme</td><td>0.12</td></tr></tbody></table>"
                    }},
                    {"output_type": "stream", "name": "stdout", "text": ["done\n"]},
                    {"output_type": "display_data", "data": {"image/png": "iVBOR"}}
                ]}
            ]
        });
        let t = extract(&notebook.to_string()).unwrap();
        assert_eq!(t.title.as_deref(), Some("Prices"));
        assert_eq!(t.metadata["programming_language"], "python");
        let kinds: Vec<(BlockKind, &str)> =
            t.blocks.iter().map(|b| (b.kind, b.text.as_str())).collect();
        assert_eq!(
            kinds,
            vec![
                (BlockKind::Heading(1), "Prices"),
                (BlockKind::Paragraph, "Unit prices by vendor."),
                (BlockKind::Code, "df = load()\ndf"),
                (
                    BlockKind::Table,
                    "| vendor | price |\n| --- | --- |\n| Acme | 0.12 |"
                ),
                (BlockKind::Code, "done"),
            ]
        );
        assert!(extract("{\"cells\": 3}").is_err());
        assert!(extract("[").is_err());
    }
}
