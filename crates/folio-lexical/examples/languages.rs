//! Language detection on chunks, and analysis speed, over BEIR collections
//! named by their language (`scripts/multilingual_collections.py` writes
//! them): each document is cut into chunks of about 1,000 characters, as
//! ingest cuts text, and each chunk's detected language is compared with
//! its collection's.
//!
//!     cargo run --release -p folio-lexical --example languages -- /tmp/folio-languages/{en,de,fr,es,ru,zh,ja,ar}

use std::time::Instant;

use folio_lexical::{Language, analyzer, detect, english_analyzer};

fn chunks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let mut end = rest.len().min(1_000);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end < rest.len()
            && let Some(space) = rest[..end].rfind(char::is_whitespace)
            && space > 200
        {
            end = space;
        }
        out.push(rest[..end].trim());
        rest = rest[end..].trim_start();
    }
    out
}

fn tokens(analyzer: &mut tantivy::tokenizer::TextAnalyzer, texts: &[&str]) -> (usize, f64) {
    let started = Instant::now();
    let mut n = 0;
    for text in texts {
        let mut stream = analyzer.token_stream(text);
        while stream.advance() {
            n += 1;
        }
    }
    (n, started.elapsed().as_secs_f64())
}

fn main() {
    println!(
        "| collection | chunks | detected as its language | detection µs/chunk | analysis MB/s | tokens/s | one-pass English MB/s |"
    );
    println!("|---|---|---|---|---|---|---|");
    for dir in std::env::args().skip(1) {
        let path = std::path::Path::new(&dir);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(expected) = Language::from_tag(&name) else {
            eprintln!("{name}: not a language");
            continue;
        };
        let corpus = std::fs::read_to_string(path.join("corpus.jsonl")).expect("corpus.jsonl");
        let texts: Vec<String> = corpus
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let doc: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
                doc["text"].as_str().unwrap_or("").to_string()
            })
            .collect();
        let pieces: Vec<&str> = texts.iter().flat_map(|t| chunks(t)).collect();
        let started = Instant::now();
        let right = pieces.iter().filter(|c| detect(c) == expected).count();
        let detection = started.elapsed().as_secs_f64();
        let bytes: usize = pieces.iter().map(|c| c.len()).sum();
        // Twice: the first pass loads jieba's dictionary.
        let _ = tokens(&mut analyzer(), &pieces[..pieces.len().min(50)]);
        let (n, seconds) = tokens(&mut analyzer(), &pieces);
        let (_, english) = tokens(&mut english_analyzer(), &pieces);
        println!(
            "| {name} | {} | {:.1} % | {:.1} | {:.1} | {:.0} | {:.1} |",
            pieces.len(),
            100.0 * right as f64 / pieces.len() as f64,
            1e6 * detection / pieces.len() as f64,
            bytes as f64 / 1e6 / seconds,
            n as f64 / seconds,
            bytes as f64 / 1e6 / english,
        );
    }
}
