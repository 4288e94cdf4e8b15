//! Precision, recall and F1 of the names folio finds in text, against a
//! bracket-annotated corpus (CoNLL-2003 converted: one sentence per line,
//! tokens separated by spaces, each gold name written `[TYPE words]` with
//! TYPE one of PER, ORG, LOC, MISC, documents separated by `-DOCSTART-`).
//!
//!     cargo run --release -p folio-entities --example span_eval -- FILE
//!
//! Reported for untyped name spans (exact start and end), for the candidate
//! names (`candidates`: every span of a name's shape) and for the mentions
//! ingestion keeps (`extract`: names a document repeats, no declared list),
//! and for organization typing (spans typed organization, a company form,
//! against gold ORG spans).

use std::collections::BTreeSet;

use folio_entities::{EntityKey, ExtractLimits, Gazetteer, Shape, candidates, extract};

type Span = (usize, usize);

/// A document's text and its gold spans by type.
struct Document {
    text: String,
    gold: Vec<(Span, String)>,
}

fn parse(corpus: &str) -> Vec<Document> {
    let mut documents = Vec::new();
    for block in corpus.split("-DOCSTART-") {
        let mut text = String::new();
        let mut gold = Vec::new();
        for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if !text.is_empty() {
                text.push('\n');
            }
            let mut rest = line;
            while let Some(open) = rest.find('[') {
                text.push_str(&rest[..open]);
                let Some(close) = rest[open..].find(']') else {
                    break;
                };
                let inner = &rest[open + 1..open + close];
                let (kind, words) = inner.split_once(' ').unwrap_or(("MISC", inner));
                let start = text.len();
                text.push_str(words);
                gold.push(((start, text.len()), kind.to_string()));
                rest = &rest[open + close + 1..];
            }
            text.push_str(rest);
        }
        if !text.is_empty() {
            documents.push(Document { text, gold });
        }
    }
    documents
}

struct Score {
    found: usize,
    gold: usize,
    right: usize,
}

impl Score {
    fn line(&self, what: &str) {
        let p = self.right as f64 / self.found.max(1) as f64;
        let r = self.right as f64 / self.gold.max(1) as f64;
        let f = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        println!(
            "{what}: precision {p:.3}, recall {r:.3}, F1 {f:.3} ({} found, {} gold, {} right)",
            self.found, self.gold, self.right
        );
    }
}

fn score(found: &BTreeSet<Span>, gold: &BTreeSet<Span>) -> Score {
    Score {
        found: found.len(),
        gold: gold.len(),
        right: found.intersection(gold).count(),
    }
}

fn add(total: &mut Score, one: Score) {
    total.found += one.found;
    total.gold += one.gold;
    total.right += one.right;
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: span_eval FILE (bracket-annotated sentences)");
    let corpus = std::fs::read_to_string(&path).expect("readable corpus");
    let documents = parse(&corpus);
    let empty = Gazetteer::new(&[]).expect("an empty list is a gazetteer");
    let zero = || Score {
        found: 0,
        gold: 0,
        right: 0,
    };
    let (mut shapes, mut kept, mut organizations) = (zero(), zero(), zero());
    let mut gold_spans = 0;
    for d in &documents {
        gold_spans += d.gold.len();
        let gold: BTreeSet<Span> = d.gold.iter().map(|(s, _)| *s).collect();
        let gold_org: BTreeSet<Span> = d
            .gold
            .iter()
            .filter(|(_, k)| k == "ORG")
            .map(|(s, _)| *s)
            .collect();
        let (found, _) = candidates(&d.text, usize::MAX);
        let found_spans: BTreeSet<Span> = found.iter().map(|c| (c.start, c.end)).collect();
        add(&mut shapes, score(&found_spans, &gold));
        let extracted = extract(&empty, &[d.text.as_str()], &ExtractLimits::default());
        let kept_spans: BTreeSet<Span> = extracted
            .mentions
            .iter()
            .filter(|m| matches!(m.entity, EntityKey::Found(_)))
            .map(|m| (m.start, m.end))
            .collect();
        add(&mut kept, score(&kept_spans, &gold));
        let typed: BTreeSet<Span> = found
            .iter()
            .filter(|c| c.shape == Shape::Company)
            .map(|c| (c.start, c.end))
            .collect();
        add(&mut organizations, score(&typed, &gold_org));
    }
    println!(
        "{} documents, {} gold name spans, from {path}",
        documents.len(),
        gold_spans
    );
    shapes.line("candidate names (every name-shaped span)");
    kept.line("kept mentions (names a document repeats)");
    organizations.line("organization typing (company forms against gold ORG)");
}
