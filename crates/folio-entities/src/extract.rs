//! One document's entities: the declared ones its chunks mention, the
//! candidate names it repeats, and the co-mentions between them, each edge
//! with the chunks that are its evidence. Caps per chunk and per document
//! bound what a hostile document (a million capitalised words) can add;
//! what a cap leaves out is said in a warning.

use std::collections::{BTreeMap, BTreeSet};

use crate::candidates::{Shape, document_candidates, recurring_keys};
use crate::gazetteer::Gazetteer;

/// How much one document may add to the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtractLimits {
    /// Mentions kept per chunk (declared and found each).
    pub per_chunk: usize,
    /// Mentions kept per document.
    pub per_document: usize,
    /// Times a candidate name must appear in the document to be kept.
    pub min_recurrence: usize,
    /// Distinct entities of a chunk that take part in co-mention edges.
    pub edge_entities_per_chunk: usize,
    /// Evidence chunks kept per edge.
    pub evidence_per_edge: usize,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        ExtractLimits {
            per_chunk: 200,
            per_document: 5_000,
            min_recurrence: 2,
            edge_entities_per_chunk: 32,
            evidence_per_edge: 5,
        }
    }
}

/// An entity as the graph knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EntityKey {
    /// A declared entity, by its index in the declared list.
    Declared(usize),
    /// A candidate name, by its folded key.
    Found(String),
}

/// A mention of an entity in a chunk of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The chunk's index in the document.
    pub chunk: usize,
    pub entity: EntityKey,
    /// Byte offsets into the chunk's text.
    pub start: usize,
    pub end: usize,
    /// A candidate's shape (None for a declared entity).
    pub shape: Option<Shape>,
}

/// Two entities mentioned in the same chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub a: EntityKey,
    pub b: EntityKey,
    /// Chunks that mention both.
    pub chunks: u32,
    /// The first of those chunks (at most `evidence_per_edge`).
    pub evidence: Vec<usize>,
}

/// What `extract` found in a document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentEntities {
    pub mentions: Vec<Found>,
    /// Each pair once, `a < b`, in order.
    pub edges: Vec<Edge>,
    /// What the caps left out.
    pub warnings: Vec<String>,
}

/// The entities of a document whose chunks' texts are `chunks`.
pub fn extract(gazetteer: &Gazetteer, chunks: &[&str], limits: &ExtractLimits) -> DocumentEntities {
    let mut result = DocumentEntities::default();
    let mut capped_chunks = 0;
    let mut declared = Vec::new();
    let mut found_names = Vec::new();
    let named = document_candidates(chunks, limits.per_chunk);
    for ((chunk, text), (names, more_names)) in chunks.iter().enumerate().zip(named) {
        let (mentions, more_declared) = gazetteer.find(text, limits.per_chunk);
        if more_declared || more_names {
            capped_chunks += 1;
        }
        // A declared mention wins over a candidate on the same words.
        let covered =
            |start: usize, end: usize| mentions.iter().any(|m| start < m.end && m.start < end);
        for name in names.into_iter().filter(|n| !covered(n.start, n.end)) {
            found_names.push((chunk, name));
        }
        declared.extend(mentions.into_iter().map(|m| Found {
            chunk,
            entity: EntityKey::Declared(m.entity),
            start: m.start,
            end: m.end,
            shape: None,
        }));
    }
    // Recurrence is decided per name across the document's chunks (offsets
    // are per chunk, so they cannot say which candidates those are).
    let kept: BTreeSet<String> =
        recurring_keys(found_names.iter().map(|(_, n)| n), limits.min_recurrence)
            .into_iter()
            .map(str::to_string)
            .collect();
    let mut mentions: Vec<Found> = declared;
    mentions.extend(
        found_names
            .into_iter()
            .filter(|(_, n)| kept.contains(&n.key))
            .map(|(chunk, n)| Found {
                chunk,
                entity: EntityKey::Found(n.key),
                start: n.start,
                end: n.end,
                shape: Some(n.shape),
            }),
    );
    mentions.sort_by_key(|m| (m.chunk, m.start));
    if capped_chunks > 0 {
        result.warnings.push(format!(
            "{capped_chunks} chunks name more than {} entities (limit entities_per_chunk); the rest are not in the graph",
            limits.per_chunk
        ));
    }
    if mentions.len() > limits.per_document {
        result.warnings.push(format!(
            "the document names entities {} times, over the limit of {} (entities_per_document); the rest are not in the graph",
            mentions.len(),
            limits.per_document
        ));
        mentions.truncate(limits.per_document);
    }
    result.edges = edges(&mentions, limits);
    result.mentions = mentions;
    result
}

/// Co-mentions within chunks, counted once per chunk.
fn edges(mentions: &[Found], limits: &ExtractLimits) -> Vec<Edge> {
    let mut by_chunk: BTreeMap<usize, BTreeSet<&EntityKey>> = BTreeMap::new();
    for m in mentions {
        let entities = by_chunk.entry(m.chunk).or_default();
        if entities.len() < limits.edge_entities_per_chunk {
            entities.insert(&m.entity);
        }
    }
    let mut pairs: BTreeMap<(&EntityKey, &EntityKey), (u32, Vec<usize>)> = BTreeMap::new();
    for (chunk, entities) in &by_chunk {
        let entities: Vec<&EntityKey> = entities.iter().copied().collect();
        for (i, a) in entities.iter().enumerate() {
            for b in &entities[i + 1..] {
                let (count, evidence) = pairs.entry((a, b)).or_default();
                *count += 1;
                if evidence.len() < limits.evidence_per_edge {
                    evidence.push(*chunk);
                }
            }
        }
    }
    pairs
        .into_iter()
        .map(|((a, b), (chunks, evidence))| Edge {
            a: a.clone(),
            b: b.clone(),
            chunks,
            evidence,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gazetteer::Declared;

    fn gazetteer() -> Gazetteer {
        Gazetteer::new(&[
            Declared {
                name: "Acme Holdings".into(),
                kind: "organization".into(),
                aliases: vec!["Acme".into()],
                attributes: Default::default(),
                relations: Vec::new(),
            },
            Declared {
                name: "Globex".into(),
                kind: "organization".into(),
                aliases: vec![],
                attributes: Default::default(),
                relations: Vec::new(),
            },
        ])
        .unwrap()
    }

    #[test]
    fn a_document_gives_its_mentions_and_co_mentions_with_evidence() {
        let chunks = [
            "Acme signed with Globex. Jane Roe led the talks.",
            "Later Jane Roe met Hooli Inc. in Paris.",
            "Acme paid Globex again.",
            "Nothing here.",
        ];
        let found = extract(&gazetteer(), &chunks, &ExtractLimits::default());
        let said: Vec<(usize, &str)> = found
            .mentions
            .iter()
            .map(|m| (m.chunk, &chunks[m.chunk][m.start..m.end]))
            .collect();
        // Jane Roe recurs; Hooli Inc. and Paris are named once.
        assert_eq!(
            said,
            vec![
                (0, "Acme"),
                (0, "Globex"),
                (0, "Jane Roe"),
                (1, "Jane Roe"),
                (2, "Acme"),
                (2, "Globex")
            ]
        );
        let acme_globex = found
            .edges
            .iter()
            .find(|e| e.a == EntityKey::Declared(0) && e.b == EntityKey::Declared(1))
            .unwrap();
        assert_eq!(
            (acme_globex.chunks, acme_globex.evidence.clone()),
            (2, vec![0, 2])
        );
        let jane = EntityKey::Found("jane roe".into());
        assert!(
            found
                .edges
                .iter()
                .any(|e| e.a == EntityKey::Declared(0) && e.b == jane && e.chunks == 1)
        );
        assert_eq!(found.edges.len(), 3);
        assert!(found.warnings.is_empty());
    }

    #[test]
    fn recurrence_is_counted_per_name_not_per_position() {
        // "Zeta" stands in its chunk at the same offsets as "Acme" in its own,
        // is named once: only Acme recurs.
        let chunks = ["Acme paid.", "Zeta sold.", "Then Acme paid."];
        let found = extract(
            &Gazetteer::new(&[]).unwrap(),
            &chunks,
            &ExtractLimits::default(),
        );
        let names: Vec<&str> = found
            .mentions
            .iter()
            .map(|m| &chunks[m.chunk][m.start..m.end])
            .collect();
        assert_eq!(names, vec!["Acme", "Acme"]);
    }

    #[test]
    fn a_hostile_document_is_capped_with_warnings() {
        let text = (0..2_000)
            .map(|i| format!("Name{i} Person{i}, "))
            .collect::<String>();
        let chunks: Vec<&str> = std::iter::repeat_n(text.as_str(), 40).collect();
        let limits = ExtractLimits::default();
        let found = extract(&gazetteer(), &chunks, &limits);
        assert_eq!(found.mentions.len(), limits.per_document);
        assert_eq!(found.warnings.len(), 2, "{:?}", found.warnings);
        // Each chunk's edges come from at most 32 entities: 496 pairs.
        assert!(found.edges.len() <= 32 * 31 / 2, "{}", found.edges.len());
    }
}
