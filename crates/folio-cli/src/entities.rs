//! `folio entities` and `folio entity`: who and what a library's documents
//! talk about; `folio entities import` declares entities (names, types,
//! aliases, attributes, relations) and `folio entities relink` reads the
//! stored documents again for them.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use folio_engine::Engine;
use folio_entities::{ListFormat, read_declared};

use crate::common::{library, usage};
use crate::output::print_json;
use crate::progress::Bar;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct EntitiesArgs {
    #[command(subcommand)]
    pub action: Option<EntitiesAction>,
    /// The library.
    #[arg(required = true)]
    pub library: Option<String>,
    /// Only entities of this type (organization, person, name, ...).
    #[arg(long = "type", value_name = "TYPE")]
    pub kind: Option<String>,
    /// Only entities whose name starts with this.
    #[arg(long)]
    pub prefix: Option<String>,
    /// How many, most mentioned first.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
}

#[derive(Subcommand)]
pub enum EntitiesAction {
    /// Declare entities from a CSV (name, type, aliases separated by `|`,
    /// relations as `relation: target|...`, other columns attributes) or
    /// JSON Lines file, then relink the library's documents. A file with
    /// a bad line is refused whole, every bad line named.
    Import(ImportArgs),
    /// Read the library's stored documents again for the entities they
    /// mention (no embedding): builds the graph of a library ingested
    /// before entities existed. Safe to interrupt and run again.
    Relink(RelinkArgs),
}

#[derive(Args)]
pub struct ImportArgs {
    /// The file (.csv, or .jsonl / .ndjson).
    pub file: PathBuf,
    #[arg(long)]
    pub library: String,
    /// Keep the entities declared before (one of the same name is
    /// replaced); by default the file replaces them.
    #[arg(long)]
    pub merge: bool,
}

#[derive(Args)]
pub struct RelinkArgs {
    /// The library.
    pub library: String,
}

#[derive(Args)]
pub struct EntityArgs {
    /// The library.
    pub library: String,
    /// The entity's name or alias (case and punctuation aside); a prefix
    /// or a name with a typo finds the closest entity.
    pub name: String,
}

/// Whether the command writes (import and relink do).
pub fn writes(args: &EntitiesArgs) -> bool {
    args.action.is_some()
}

/// `folio entities ...`.
pub fn entities(engine: &Engine, args: &EntitiesArgs, json: bool) -> Result<()> {
    match &args.action {
        Some(EntitiesAction::Import(import)) => return import_file(engine, import, json),
        Some(EntitiesAction::Relink(relink)) => {
            let report = engine.relink(&library(&relink.library)?, &Bar::new("relink", !json))?;
            if json {
                return print_json(&report);
            }
            println!(
                "relinked {} documents: {} mentions ({} capped)",
                report.documents, report.mentions, report.capped
            );
            return Ok(());
        }
        None => {}
    }
    let name = args
        .library
        .as_deref()
        .ok_or_else(|| usage("name the library"))?;
    let found = engine.entities(
        &library(name)?,
        args.kind.as_deref(),
        args.prefix.as_deref(),
        args.top,
    )?;
    if json {
        return print_json(&found);
    }
    for e in &found {
        println!(
            "{:>6} mentions  {:>5} documents  {:<12}  {}",
            e.mentions, e.documents, e.kind, e.entity
        );
    }
    Ok(())
}

fn import_file(engine: &Engine, args: &ImportArgs, json: bool) -> Result<()> {
    let extension = args
        .file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = match extension.as_deref() {
        Some("csv") => ListFormat::Csv,
        Some("jsonl" | "ndjson") => ListFormat::JsonLines,
        _ => {
            return Err(usage(format!(
                "{}: an entity list is a .csv or .jsonl file",
                args.file.display()
            )));
        }
    };
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let list = match read_declared(&bytes, format) {
        Ok(list) => list,
        Err(errors) => {
            let lines: Vec<String> = errors
                .iter()
                .map(|e| format!("  {}:{e}", args.file.display()))
                .collect();
            return Err(usage(format!(
                "nothing imported: {} bad lines\n{}",
                errors.len(),
                lines.join("\n")
            )));
        }
    };
    let report = engine.import_entities(&library(&args.library)?, list, args.merge)?;
    if json {
        return print_json(&report);
    }
    println!(
        "imported {} entities ({} declared in {}); relinked {} documents: {} mentions",
        report.imported,
        report.declared,
        args.library,
        report.relinked.documents,
        report.relinked.mentions
    );
    Ok(())
}

/// `folio entity LIBRARY NAME`: one entity's card.
pub fn entity(engine: &Engine, args: &EntityArgs, json: bool) -> Result<()> {
    let card = engine.entity(&library(&args.library)?, &args.name)?;
    if json {
        return print_json(&card);
    }
    println!(
        "{} ({}): {} mentions in {} documents",
        card.name, card.kind, card.mentions, card.documents
    );
    if !card.aliases.is_empty() {
        println!("aliases: {}", card.aliases.join(", "));
    }
    for (key, value) in &card.attributes {
        println!("{key}: {value}");
    }
    for r in &card.relations {
        let arrow = if r.direction == "outgoing" {
            "->"
        } else {
            "<-"
        };
        println!("{arrow} {} {}", r.relation, r.entity);
    }
    println!("documents:");
    for d in &card.top_documents {
        println!(
            "  {:>4}  {}  {}",
            d.mentions,
            d.document_id,
            d.title.as_deref().unwrap_or(&d.source)
        );
    }
    println!("related:");
    for r in &card.related {
        println!(
            "  {:>4} chunks  npmi {:.2}  {} ({})",
            r.shared_chunks, r.npmi, r.entity, r.kind
        );
    }
    println!("evidence:");
    for e in &card.evidence {
        println!("  {}  …{}…", e.chunk_id, e.snippet.replace('\n', " "));
    }
    Ok(())
}
