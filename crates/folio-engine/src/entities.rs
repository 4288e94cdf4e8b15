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

/// An entity's card: how much it is mentioned, where, and with whom.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EntityCard {
    pub entity: String,
    pub kind: String,
    pub mentions: u64,
    pub documents: u64,
    /// The documents that mention it most, with how often.
    pub top_documents: Vec<DocumentMentions>,
    /// Chunks that mention it (the first few), with the words.
    pub evidence: Vec<Evidence>,
    /// Entities mentioned in the same chunks, most shared first.
    pub related: Vec<folio_store::Related>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DocumentMentions {
    pub document_id: String,
    pub title: Option<String>,
    pub source: String,
    pub mentions: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Evidence {
    pub chunk_id: String,
    /// The mention as written.
    pub surface: String,
    /// The chunk's text around it.
    pub snippet: String,
}

/// Mentions read for a card at most.
const CARD_MENTIONS: usize = 10_000;

impl crate::Engine {
    /// The entities of `library` (of `kind`), most mentioned first.
    pub fn entities(
        &self,
        library: &folio_core::LibraryName,
        kind: Option<&str>,
        top: usize,
    ) -> crate::Result<Vec<folio_store::EntityCount>> {
        Ok(self.store.entities(library, kind, top)?)
    }

    /// The card of the entity `name` names (folded as names are), or
    /// `NotFound`.
    pub fn entity(
        &self,
        library: &folio_core::LibraryName,
        name: &str,
    ) -> crate::Result<EntityCard> {
        let key = fold_name(name);
        let hits = self.store.mentions_of(library, &key, CARD_MENTIONS)?;
        if hits.is_empty() {
            return Err(crate::EngineError::new(
                folio_core::ErrorCode::NotFound,
                format!("no entity {name:?} in library {library}"),
            ));
        }
        let mut per_document: std::collections::BTreeMap<&folio_core::DocumentId, u64> =
            Default::default();
        for hit in &hits {
            *per_document.entry(&hit.document_id).or_default() += 1;
        }
        let mut ranked: Vec<(&folio_core::DocumentId, u64)> = per_document.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let top_documents = ranked
            .iter()
            .take(10)
            .filter_map(|(id, n)| {
                let d = self.store.document(id).ok()?;
                Some(DocumentMentions {
                    document_id: id.to_string(),
                    title: d.title,
                    source: d.source,
                    mentions: *n,
                })
            })
            .collect();
        let mut evidence = Vec::new();
        for hit in hits.iter().take(5) {
            let Ok(chunks) = self
                .store
                .chunks(&hit.document_id, hit.chunk..hit.chunk + 1)
            else {
                continue;
            };
            let Some(chunk) = chunks.first() else {
                continue;
            };
            let (start, end) = (hit.start as usize, hit.end as usize);
            let Some(surface) = chunk.text.get(start..end) else {
                continue;
            };
            evidence.push(Evidence {
                chunk_id: chunk.id.to_string(),
                surface: surface.to_string(),
                snippet: around(&chunk.text, start, end, 120),
            });
        }
        let kind = self
            .store
            .document_mentions(&hits[0].document_id)?
            .into_iter()
            .find(|m| m.entity == key)
            .map(|m| m.kind)
            .unwrap_or_default();
        Ok(EntityCard {
            mentions: hits.len() as u64,
            documents: ranked.len() as u64,
            related: self.store.related(library, &key, 10)?,
            entity: key,
            kind,
            top_documents,
            evidence,
        })
    }
}

/// Up to `width` bytes of `text` on each side of `start..end`, cut at char
/// boundaries.
fn around(text: &str, start: usize, end: usize, width: usize) -> String {
    let mut from = start.saturating_sub(width);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (end + width).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    text[from..to].trim().to_string()
}
