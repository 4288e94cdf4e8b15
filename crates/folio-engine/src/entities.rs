//! Entities found while ingesting (folio-entities): each document's chunks
//! are read for the names they mention, and the mentions are written with
//! the document. A library's declared entities (names, aliases, types) are
//! matched exactly; other names are kept when the document repeats them.

use folio_core::Chunk;
use folio_entities::{Declared, EntityKey, ExtractLimits, Gazetteer, Shape, extract, fold_name};
use folio_store::EntityMention;

/// What a library's documents are read for.
pub(crate) struct Finder {
    declared: Vec<Declared>,
    gazetteer: Gazetteer,
    limits: ExtractLimits,
}

impl Finder {
    /// A finder of names by their shape alone (no declared entities).
    pub(crate) fn shapes_only() -> Self {
        Finder {
            declared: Vec::new(),
            // An empty list is always a valid gazetteer.
            gazetteer: Gazetteer::new(&[]).unwrap_or_else(|_| unreachable!()),
            limits: ExtractLimits::default(),
        }
    }

    /// The mentions `chunks` make, as the store keeps them, and warnings
    /// where the caps left some out.
    pub(crate) fn mentions(&self, chunks: &[Chunk]) -> (Vec<EntityMention>, Vec<String>) {
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        let found = extract(&self.gazetteer, &texts, &self.limits);
        let mentions = found
            .mentions
            .into_iter()
            .map(|m| {
                let (entity, kind) = match m.entity {
                    EntityKey::Declared(i) => (
                        fold_name(&self.declared[i].name),
                        self.declared[i].kind.clone(),
                    ),
                    EntityKey::Found(key) => {
                        let kind = match m.shape {
                            Some(Shape::Company) => "organization",
                            _ => "name",
                        };
                        (key, kind.to_string())
                    }
                };
                EntityMention {
                    entity,
                    kind,
                    chunk: m.chunk as u32,
                    start: m.start as u32,
                    end: m.end as u32,
                }
            })
            .collect();
        (mentions, found.warnings)
    }
}
