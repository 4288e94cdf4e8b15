//! `folio schema` and `folio facets`: record schemas and grouped statistics.

use std::path::Path;

use anyhow::{Context, Result};
use clap::Args;
use folio_core::{Filter, RecordSchema};
use folio_engine::{Engine, FacetRequest, Facets};
use serde_json::Value;

use crate::common::{library, usage};
use crate::output::print_json;
use folio_core::LibraryName;
use folio_engine::cite::{QuoteRequest, read_references};

#[derive(Args)]
pub struct SchemaArgs {
    pub library: String,
    /// Declare this schema (TOML, or JSON by extension); without it, show
    /// the library's schema.
    pub file: Option<std::path::PathBuf>,
}

#[derive(Args)]
pub struct FacetsArgs {
    #[arg(long, short)]
    pub library: String,
    /// Group by this field (repeatable; a tags field gives a group per tag).
    #[arg(long = "by", value_name = "FIELD")]
    pub group_by: Vec<String>,
    /// Summarise this field per group: min, max, sum (repeatable).
    #[arg(long = "stats", value_name = "FIELD")]
    pub stats: Vec<String>,
    /// The most frequent values of a tags field per group: FIELD or FIELD:N.
    #[arg(long, value_name = "FIELD[:N]")]
    pub top: Option<String>,
    /// Filter as JSON, e.g. '{"chamber": "Senate", "date": {"gte": "2024-01-01"}}'.
    #[arg(long)]
    pub filter: Option<String>,
    #[arg(long, default_value_t = 1)]
    pub min_count: u64,
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
}

/// Reads a schema file: JSON when it ends in `.json`, TOML otherwise.
pub fn read_schema(path: &Path) -> Result<RecordSchema> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read schema {}", path.display()))?;
    let value: Value = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?
    } else {
        toml::from_str(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?
    };
    RecordSchema::from_value(value).map_err(|e| usage(format!("{}: {e}", path.display())))
}

pub fn parse_filter(text: Option<&str>) -> Result<Filter> {
    match text {
        Some(text) => {
            let value: Value = serde_json::from_str(text)
                .map_err(|e| usage(format!("--filter is not JSON: {e}")))?;
            Filter::from_json(&value).map_err(|e| usage(e.to_string()))
        }
        None => Ok(Filter::default()),
    }
}

pub fn schema(engine: &Engine, args: &SchemaArgs, json: bool) -> Result<()> {
    let name = library(&args.library)?;
    let schema = match &args.file {
        Some(path) => {
            let schema = read_schema(path)?;
            engine.set_record_schema(&name, &schema)?;
            Some(schema)
        }
        None => engine.record_schema(&name)?,
    };
    match (&schema, json) {
        (_, true) => print_json(&serde_json::json!({"library": args.library, "schema": schema})),
        (None, false) => {
            println!("{}: no record schema", args.library);
            Ok(())
        }
        (Some(schema), false) => {
            println!(
                "{}: records with text field {:?}",
                args.library, schema.text
            );
            for (name, spec) in &schema.fields {
                let mut rules = Vec::new();
                if spec.required {
                    rules.push("required".to_string());
                }
                if let Some(allowed) = &spec.allowed {
                    rules.push(format!("one of {allowed:?}"));
                }
                if let Some(pattern) = &spec.pattern {
                    rules.push(format!("matches {pattern:?}"));
                }
                if let Some(max) = spec.max_length {
                    rules.push(format!("at most {max} chars"));
                }
                println!(
                    "  {name:<20} {:<8} {}",
                    spec.kind.as_str(),
                    rules.join(", ")
                );
            }
            Ok(())
        }
    }
}

pub fn facets(engine: &Engine, args: &FacetsArgs, json: bool) -> Result<()> {
    let top_values = args
        .top
        .as_deref()
        .map(|spec| match spec.split_once(':') {
            Some((field, n)) => n
                .parse::<usize>()
                .map(|n| (field.to_string(), n))
                .map_err(|_| usage(format!("--top {spec:?}: N must be a number"))),
            None => Ok((spec.to_string(), 5)),
        })
        .transpose()?;
    let request = FacetRequest {
        group_by: args.group_by.clone(),
        stats: args.stats.clone(),
        top_values,
        filter: parse_filter(args.filter.as_deref())?,
        min_count: args.min_count,
        limit: args.limit,
    };
    let facets = engine.facets(&library(&args.library)?, &request)?;
    if json {
        return print_json(&facets);
    }
    print_facets(&facets, &request);
    Ok(())
}

fn print_facets(facets: &Facets, request: &FacetRequest) {
    println!(
        "{} documents, {} groups",
        facets.documents, facets.total_groups
    );
    for group in &facets.groups {
        let key: Vec<String> = group
            .key
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        let mut line = format!("{:>6}  {}", group.count, key.join(" | "));
        for field in &request.stats {
            if let Some(stats) = group.stats.get(field) {
                line.push_str(&format!("  {field}: {} – {}", stats.min, stats.max));
                if let Some(sum) = stats.sum {
                    line.push_str(&format!(" (sum {sum})"));
                }
            }
        }
        if !group.top_values.is_empty() {
            let top: Vec<String> = group
                .top_values
                .iter()
                .map(|(v, n)| format!("{v} ({n})"))
                .collect();
            line.push_str(&format!("  top: {}", top.join(", ")));
        }
        println!("{line}");
    }
}

#[derive(Args)]
pub struct ReferencesArgs {
    /// CSL-JSON (.json) or BibTeX (.bib) file.
    pub file: std::path::PathBuf,
    #[arg(long, short)]
    pub library: String,
}

#[derive(Args)]
pub struct QuoteArgs {
    /// The passage to find.
    pub passage: String,
    /// Libraries to look in (repeatable; default all).
    #[arg(long, short)]
    pub library: Vec<String>,
    /// Look only in this document.
    #[arg(long)]
    pub document: Option<String>,
    /// Least similarity for an approximate match.
    #[arg(long, default_value_t = 0.8)]
    pub min_score: f64,
    #[arg(long, default_value_t = 5)]
    pub limit: usize,
}

/// Attaches a reference file to a library.
pub fn attach_quietly(
    engine: &Engine,
    library: &LibraryName,
    path: &Path,
) -> Result<folio_engine::cite::AttachReport> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let references = read_references(&bytes)?;
    Ok(engine.attach_references(library, &references)?)
}

/// Attaches a reference file to a library and reports what matched.
pub fn attach(engine: &Engine, library: &LibraryName, path: &Path, json: bool) -> Result<()> {
    let report = attach_quietly(engine, library, path)?;
    if json {
        return print_json(&report);
    }
    println!(
        "references: {} entries; {} of {} documents in {} matched",
        report.references, report.matched, report.documents, report.library
    );
    for source in &report.unmatched {
        println!("  unmatched: {source}");
    }
    Ok(())
}

/// Prints where a passage occurs; false when it was not found.
pub fn quote(engine: &Engine, args: &QuoteArgs, json: bool) -> Result<bool> {
    let request = QuoteRequest {
        passage: args.passage.clone(),
        libraries: args
            .library
            .iter()
            .map(|l| library(l))
            .collect::<Result<_>>()?,
        document_id: args.document.clone(),
        min_score: args.min_score,
        limit: args.limit,
    };
    let found = engine.find_quote(&request, &|| false)?;
    if json {
        print_json(&serde_json::json!({"found": !found.is_empty(), "matches": found}))?;
        return Ok(!found.is_empty());
    }
    if found.is_empty() {
        println!("not found");
    }
    for m in &found {
        let pages = match (m.page_start, m.page_end) {
            (Some(a), Some(b)) if a == b => format!(", p. {a}"),
            (Some(a), Some(b)) => format!(", pp. {a}–{b}"),
            _ => String::new(),
        };
        let who = m
            .citation
            .citekey
            .as_deref()
            .or(m.title.as_deref())
            .unwrap_or(&m.source);
        println!(
            "{} [{:.2}] {who}{pages}, chars {}–{}  ({})",
            if m.exact { "exact" } else { "fuzzy" },
            m.score,
            m.char_start,
            m.char_end,
            m.document_id
        );
        println!(
            "  {}",
            m.text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    Ok(!found.is_empty())
}
