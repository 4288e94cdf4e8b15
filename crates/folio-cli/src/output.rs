//! Printing results: readable text by default, JSON with `--json`.

use std::io::Write;

use anyhow::Result;
use folio_core::{Chunk, Document, DocumentSummary};
use folio_engine::eval::EvalReport;
use folio_engine::{IngestItem, IngestReport, IngestStatus, SearchResponse};
use folio_store::{LibraryInfo, LibraryStats};
use serde::Serialize;

pub fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn pages(start: Option<u32>, end: Option<u32>) -> Option<String> {
    match (start, end) {
        (Some(s), Some(e)) if s == e => Some(format!("p. {s}")),
        (Some(s), Some(e)) => Some(format!("pp. {s}–{e}")),
        _ => None,
    }
}

/// Summary on stdout; one line per failed input on stderr (the bulk
/// ingestion contract). The text summary's line per document was printed
/// as each settled ([`ingest_item`]).
pub fn ingest(report: &IngestReport, json: bool) -> Result<()> {
    ingest_failures(report);
    if json {
        return print_json(report);
    }
    ingest_summary(report)
}

/// One line per failed input, and per warning, on stderr.
pub fn ingest_failures(report: &IngestReport) {
    for item in &report.items {
        if let Some(error) = &item.error {
            eprintln!(
                "failed: {}: [{}] {}",
                item.source, error.code, error.message
            );
        }
        for warning in &item.warnings {
            eprintln!("warning: {}: {warning}", item.source);
        }
    }
    if let Some(advice) = &report.advice {
        eprintln!("note: {advice}");
    }
}

/// A settled document's line on stdout (failures go to stderr with the
/// summary).
pub fn ingest_item(item: &IngestItem) -> Result<()> {
    if item.status == IngestStatus::Failed {
        return Ok(());
    }
    let status = serde_json::to_value(item.status)?;
    writeln!(
        std::io::stdout().lock(),
        "{:<8} {}  {} chunks  {}",
        status.as_str().unwrap_or_default(),
        item.document_id.as_deref().unwrap_or("-"),
        item.chunks,
        item.source
    )?;
    Ok(())
}

fn ingest_summary(report: &IngestReport) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "library {}: {} indexed, {} replaced, {} skipped, {} failed; {} chunks in {:.1} s{}",
        report.library,
        report.indexed,
        report.replaced,
        report.skipped,
        report.failed,
        report.chunks,
        report.elapsed_ms as f64 / 1000.0,
        if report.cancelled { " (cancelled)" } else { "" }
    )?;
    Ok(())
}

pub fn search(response: &SearchResponse, json: bool) -> Result<()> {
    if json {
        return print_json(response);
    }
    let mut out = std::io::stdout().lock();
    if response.hits.is_empty() {
        writeln!(
            out,
            "no results for {:?} in {}",
            response.query, response.library
        )?;
    }
    for hit in &response.hits {
        let title = hit.title.as_deref().unwrap_or("(untitled)");
        writeln!(out, "{}. [{:.3}] {}", hit.rank, hit.score, title)?;
        let mut cite = Vec::new();
        if let Some(source) = &hit.source {
            cite.push(source.clone());
        }
        if let Some(path) = hit.section_path.as_ref().filter(|p| !p.is_empty()) {
            cite.push(format!("§ {}", path.join(" > ")));
        }
        cite.extend(pages(hit.page_start, hit.page_end));
        if let (Some(i), Some(n)) = (hit.chunk_index, hit.chunk_count) {
            cite.push(format!("chunk {} of {}", i + 1, n));
        }
        cite.push(hit.chunk_id.clone());
        writeln!(out, "   {}", cite.join(" · "))?;
        if let Some(preview) = &hit.preview {
            writeln!(out, "   {preview}")?;
        }
        if let Some(text) = &hit.text {
            for line in text.lines() {
                writeln!(out, "   | {line}")?;
            }
            if hit.truncated {
                writeln!(out, "   | …")?;
            }
        }
        if !hit.other_chunks.is_empty() {
            let others: Vec<String> = hit
                .other_chunks
                .iter()
                .map(|o| {
                    format!(
                        "{}{}",
                        o.chunk_index + 1,
                        pages(o.page_start, o.page_end)
                            .map(|p| format!(" ({p})"))
                            .unwrap_or_default()
                    )
                })
                .collect();
            writeln!(out, "   also matching chunks {}", others.join(", "))?;
        }
    }
    Ok(())
}

pub fn document(document: &Document, chunks: &[Chunk], text: bool, json: bool) -> Result<()> {
    if json {
        let mut value = serde_json::to_value(document)?;
        if !text {
            value.as_object_mut().map(|o| o.remove("text"));
        }
        if !chunks.is_empty() {
            value["chunks"] = serde_json::to_value(chunks)?;
        }
        return print_json(&value);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", document.title.as_deref().unwrap_or("(untitled)"))?;
    writeln!(out, "id       {}", document.id)?;
    writeln!(out, "library  {}", document.library)?;
    writeln!(
        out,
        "source   {} ({})",
        document.source,
        document.source_kind.as_str()
    )?;
    writeln!(out, "format   {}", document.format)?;
    if let Some(pages) = document.page_count {
        writeln!(out, "pages    {pages}")?;
    }
    writeln!(out, "chunks   {}", document.chunk_count)?;
    writeln!(out, "hash     {}", document.content_hash)?;
    writeln!(out, "indexed  {}", document.ingested_at)?;
    for (key, value) in &document.metadata {
        writeln!(out, "meta     {key} = {value}")?;
    }
    for chunk in chunks {
        let mut cite = vec![
            format!("chunk {} of {}", chunk.index + 1, chunk.count),
            format!("{} tokens", chunk.token_count),
        ];
        cite.extend(pages(chunk.page_start, chunk.page_end));
        if !chunk.section_path.is_empty() {
            cite.push(format!("§ {}", chunk.section_path.join(" > ")));
        }
        writeln!(out, "\n--- {} · {}", chunk.id, cite.join(" · "))?;
        writeln!(out, "{}", chunk.text)?;
    }
    if text {
        writeln!(out, "\n{}", document.text)?;
    }
    Ok(())
}

pub fn integrity(integrity: &folio_store::Integrity, json: bool) -> Result<()> {
    if json {
        return print_json(integrity);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: {} documents, {} chunks: {}",
        integrity.library,
        integrity.documents,
        integrity.chunks,
        if integrity.problems.is_empty() {
            "whole in every index"
        } else {
            "DAMAGED"
        }
    )?;
    for problem in &integrity.problems {
        writeln!(out, "  {problem}")?;
    }
    Ok(())
}

pub fn libraries(libraries: &[LibraryInfo], json: bool) -> Result<()> {
    if json {
        return print_json(libraries);
    }
    let mut out = std::io::stdout().lock();
    if libraries.is_empty() {
        writeln!(out, "no libraries yet: folio ingest PATH --library NAME")?;
    }
    for l in libraries {
        writeln!(
            out,
            "{:<24} {:>7} documents {:>8} chunks  {} ({}-d)",
            l.name, l.document_count, l.chunk_count, l.space.model, l.space.dim
        )?;
    }
    Ok(())
}

pub fn documents(documents: &[DocumentSummary], total: u64, offset: u64, json: bool) -> Result<()> {
    if json {
        return print_json(
            &serde_json::json!({"total": total, "offset": offset, "documents": documents}),
        );
    }
    let mut out = std::io::stdout().lock();
    for d in documents {
        writeln!(
            out,
            "{}  {:<8} {:>5} chunks  {}  {}",
            d.id,
            d.format,
            d.chunk_count,
            d.title.as_deref().unwrap_or("-"),
            d.source
        )?;
    }
    writeln!(
        out,
        "{} of {} documents (from {})",
        documents.len(),
        total,
        offset
    )?;
    Ok(())
}

pub fn deleted(what: &str, id: &str, json: bool) -> Result<()> {
    if json {
        return print_json(&serde_json::json!({"deleted": what, "id": id}));
    }
    println!("deleted {what} {id}");
    Ok(())
}

pub fn rebuilt(library: &str, chunks: usize, json: bool) -> Result<()> {
    if json {
        return print_json(&serde_json::json!({"library": library, "chunks": chunks}));
    }
    println!("re-embedded {chunks} chunks of {library}");
    Ok(())
}

pub fn copied(report: &folio_engine::CopyReport, json: bool) -> Result<()> {
    if json {
        return print_json(report);
    }
    println!(
        "copied {} documents ({} chunks) of {}; {} were already there",
        report.copied, report.chunks, report.library, report.unchanged
    );
    Ok(())
}

pub fn stats(stats: &LibraryStats, json: bool) -> Result<()> {
    if json {
        return print_json(stats);
    }
    let mut out = std::io::stdout().lock();
    let i = &stats.info;
    writeln!(out, "library    {}", i.name)?;
    writeln!(out, "documents  {}", i.document_count)?;
    writeln!(out, "chunks     {}", i.chunk_count)?;
    writeln!(out, "tokens     {}", stats.total_tokens)?;
    writeln!(out, "chars      {}", stats.total_chars)?;
    let formats: Vec<String> = stats
        .formats
        .iter()
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    writeln!(out, "formats    {}", formats.join(", "))?;
    writeln!(
        out,
        "model      {} ({}-d, {:?} pooling, normalised: {})",
        i.space.model, i.space.dim, i.space.pooling, i.space.normalized
    )?;
    writeln!(out, "created    {}", i.created_at)?;
    if let Some(last) = &stats.last_ingested_at {
        writeln!(out, "updated    {last}")?;
    }
    writeln!(out, "index      {}", stats.index)?;
    Ok(())
}

pub fn eval(report: &EvalReport, json: bool) -> Result<()> {
    if json {
        return print_json(report);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "library     {} ({} documents; {} indexed, {} skipped, {} failed; {:.1} s)",
        report.library,
        report.documents,
        report.ingest_indexed,
        report.ingest_skipped,
        report.ingest_failed,
        report.ingest_seconds
    )?;
    writeln!(
        out,
        "qrels       {} ({} queries)",
        report.qrels, report.queries
    )?;
    writeln!(out, "mode        {}", report.mode.as_str())?;
    writeln!(out, "nDCG@10     {:.4}", report.ndcg_at_10)?;
    writeln!(out, "Recall@100  {:.4}", report.recall_at_100)?;
    writeln!(out, "MRR@10      {:.4}", report.mrr_at_10)?;
    writeln!(
        out,
        "search      {:.1} s ({:.1} ms/query)",
        report.search_seconds,
        report.search_seconds * 1e3 / report.queries.max(1) as f64
    )?;
    if report.rerank_seconds > 0.0 {
        writeln!(
            out,
            "rerank      {:.1} s ({:.1} ms/query)",
            report.rerank_seconds,
            report.rerank_seconds * 1e3 / report.queries.max(1) as f64
        )?;
    }
    Ok(())
}

/// A record and the records before and after it.
pub fn neighbours(
    document: &Document,
    before: Option<&DocumentSummary>,
    after: Option<&DocumentSummary>,
    json: bool,
) -> Result<()> {
    if json {
        return print_json(&serde_json::json!({
            "document": document.summary(), "previous": before, "next": after
        }));
    }
    for (label, neighbour) in [("previous", before), ("next", after)] {
        match neighbour {
            Some(d) => println!(
                "{label:<9} {}  {}",
                d.id,
                d.title.as_deref().unwrap_or(&d.source)
            ),
            None => println!("{label:<9} none"),
        }
    }
    Ok(())
}
