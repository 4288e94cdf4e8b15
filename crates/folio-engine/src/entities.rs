//! Entities (folio-entities) in the engine: each document's chunks are read
//! for the names they mention while it is ingested, and the mentions are
//! written with it. A library's declared entities (names, aliases, types,
//! attributes, relations; `import_entities`) are matched exactly; other
//! names are kept when the document repeats them. `relink` reads a
//! library's stored chunks again (after an import, or for a library
//! ingested before entities existed) without embedding anything.
//!
//! Names are looked up as the graph keys them (folded): exactly, by a
//! declared alias, by prefix, then by edit distance for typos.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use folio_core::{
    Chunk, Condition, DocumentId, DocumentSummary, ErrorCode, LibraryName, Limits, RecordSchema,
};
use folio_entities::{
    Declared, EntityKey, ExtractLimits, Gazetteer, Relation, Shape, extract, fold_name, npmi,
};
use folio_store::{EntityCount, EntityMention, EntityQuery, StoreError};
use serde::Serialize;
use serde_json::Value;

use crate::{Engine, EngineError, Result};

/// What a library's documents are read for.
pub(crate) struct Finder {
    declared: Vec<Declared>,
    gazetteer: Gazetteer,
    limits: ExtractLimits,
    /// Record fields whose values are entities, with their type.
    fields: Vec<(String, String)>,
}

impl Finder {
    /// A finder of `declared` entities and of names by their shape.
    pub(crate) fn new(declared: Vec<Declared>, limits: &Limits) -> Result<Self> {
        let gazetteer = Gazetteer::new(&declared).map_err(|errors| {
            let reasons: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            EngineError::invalid(format!(
                "the declared entities cannot be used: {}",
                reasons.join("; ")
            ))
        })?;
        Ok(Finder {
            declared,
            gazetteer,
            limits: ExtractLimits {
                per_chunk: limits.max_entity_mentions_per_chunk,
                per_document: limits.max_entity_mentions_per_document,
                ..ExtractLimits::default()
            },
            fields: Vec::new(),
        })
    }

    /// Also the entities `schema`'s entity fields name.
    pub(crate) fn with_fields(mut self, schema: Option<&RecordSchema>) -> Self {
        self.fields = schema
            .map(|s| {
                s.entity_fields()
                    .map(|(f, k)| (f.to_string(), k.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        self
    }

    /// The mentions of a document: in its chunks' text, and (empty spans
    /// at its first chunk) in its record's entity fields.
    pub(crate) fn document_mentions(
        &self,
        metadata: &serde_json::Map<String, Value>,
        chunks: &[Chunk],
    ) -> (Vec<EntityMention>, Vec<String>) {
        let (mut mentions, warnings) = self.mentions(chunks);
        if chunks.is_empty() {
            return (mentions, warnings);
        }
        for (field, kind) in &self.fields {
            let values: Vec<&str> = match metadata.get(field) {
                Some(Value::String(s)) => vec![s.as_str()],
                Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for value in values {
                let entity = fold_name(value);
                if entity.is_empty() || mentions.iter().any(|m| m.entity == entity && m.end == 0) {
                    continue;
                }
                mentions.push(EntityMention {
                    entity,
                    kind: kind.clone(),
                    chunk: 0,
                    start: 0,
                    end: 0,
                });
            }
        }
        (mentions, warnings)
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

/// How a name was matched to an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// The entity's own name (folded).
    Name,
    /// One of its declared aliases.
    Alias,
    /// The start of its name.
    Prefix,
    /// A name a few edits away (a typo).
    Fuzzy,
}

impl MatchedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedBy::Name => "name",
            MatchedBy::Alias => "alias",
            MatchedBy::Prefix => "prefix",
            MatchedBy::Fuzzy => "fuzzy",
        }
    }
}

/// An entity a lookup found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityMatch {
    /// Its key (the folded name).
    pub entity: String,
    /// Its declared name, when declared.
    pub name: Option<String>,
    pub kind: String,
    pub mentions: u64,
    pub documents: u64,
    pub matched_by: MatchedBy,
    /// Edits between the name looked up and the one matched (fuzzy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<usize>,
}

/// An entity's card: what the user declared of it, how much it is
/// mentioned, where, and with whom.
#[derive(Debug, Clone, Serialize)]
pub struct EntityCard {
    pub entity: String,
    /// The declared name, or the words of its first mention.
    pub name: String,
    pub kind: String,
    pub matched_by: MatchedBy,
    pub declared: bool,
    pub aliases: Vec<String>,
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// Declared relations, its own and those others declare to it.
    pub relations: Vec<DeclaredRelation>,
    pub mentions: u64,
    pub documents: u64,
    /// The documents that mention it most, with how often.
    pub top_documents: Vec<DocumentMentions>,
    /// Chunks that mention it (the first few), with the words.
    pub evidence: Vec<Evidence>,
    /// Entities mentioned in the same chunks, most shared first, weighted.
    pub related: Vec<RelatedEntity>,
    /// Entities related to those (two hops), not to it directly.
    pub related_two_hops: Vec<TwoHops>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeclaredRelation {
    #[serde(rename = "type")]
    pub relation: String,
    /// "outgoing" (it declares the relation) or "incoming".
    pub direction: &'static str,
    /// The other entity, as declared.
    pub entity: String,
    /// Records whose fields state it (0: a declared list states it).
    pub records: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DocumentMentions {
    pub document_id: String,
    pub title: Option<String>,
    pub source: String,
    pub mentions: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub chunk_id: String,
    pub document_id: String,
    pub source: String,
    pub page: Option<u32>,
    /// The mention as written.
    pub surface: String,
    /// The chunk's text around it.
    pub snippet: String,
}

/// A co-mentioned entity and the weight of the edge.
#[derive(Debug, Clone, Serialize)]
pub struct RelatedEntity {
    pub entity: String,
    pub kind: String,
    /// Chunks that mention both.
    pub shared_chunks: u64,
    /// Normalised pointwise mutual information over the library's chunks:
    /// 1 always together, 0 independent.
    pub npmi: f64,
    /// Chunks that mention both (the first few).
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TwoHops {
    pub entity: String,
    pub kind: String,
    /// The directly related entity it is reached through.
    pub via: String,
    pub shared_chunks: u64,
}

/// What an import did.
#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    /// Declared entities the library has now.
    pub declared: usize,
    /// Of those, read from the file.
    pub imported: usize,
    pub relinked: RelinkReport,
}

/// What a relink did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RelinkReport {
    pub documents: u64,
    pub mentions: u64,
    /// Documents whose mentions the caps cut.
    pub capped: u64,
}

/// Mentions read for a card at most.
const CARD_MENTIONS: usize = 10_000;
/// Mentions of a related entity read for an edge's evidence at most.
const EDGE_MENTIONS: usize = 5_000;
/// Keys read as fuzzy candidates at most.
const FUZZY_CANDIDATES: usize = 5_000;
/// Documents relinked per page.
const RELINK_PAGE: u64 = 200;

/// How much a card shows.
#[derive(Debug, Clone, Copy)]
enum Detail {
    Full,
    Brief { documents: usize },
}

/// The entity a name resolves to exactly (by name or declared alias).
struct Resolved {
    key: String,
    declared: Option<Declared>,
    matched_by: MatchedBy,
}

/// A library's declared entities with every name and alias folded once,
/// sorted: an exact name, an alias or a prefix is a binary search, and a
/// fuzzy match reads only the names that share the first letter. Built on
/// the first lookup after a write (`Engine::declared_index`), so a lookup
/// costs the same whether 20 or 100,000 entities are declared.
pub(crate) struct DeclaredIndex {
    declared: Vec<Declared>,
    /// Each entity's key (its folded name), by position.
    keys: Vec<String>,
    /// (folded name or alias, entity position, whether it is the name).
    names: Vec<(String, usize, bool)>,
    /// Entity position by key.
    by_key: HashMap<String, usize>,
    /// The relations other entities declare to each key (the entity
    /// declaring it, the relation's position in its list).
    incoming: HashMap<String, Vec<(usize, usize)>>,
}

impl DeclaredIndex {
    fn new(declared: Vec<Declared>) -> Self {
        let keys: Vec<String> = declared.iter().map(|d| fold_name(&d.name)).collect();
        let mut names = Vec::new();
        for (at, d) in declared.iter().enumerate() {
            names.push((keys[at].clone(), at, true));
            for alias in &d.aliases {
                names.push((fold_name(alias), at, false));
            }
        }
        names.retain(|(name, _, _)| !name.is_empty());
        names.sort();
        let by_key = keys
            .iter()
            .enumerate()
            .map(|(at, key)| (key.clone(), at))
            .rev()
            .collect();
        let mut index = DeclaredIndex {
            declared,
            keys,
            names,
            by_key,
            incoming: HashMap::new(),
        };
        // A relation's target is an entity's name or alias, else a name of
        // the graph's.
        let mut incoming: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
        for (at, d) in index.declared.iter().enumerate() {
            for (i, relation) in d.relations.iter().enumerate() {
                let target = fold_name(&relation.target);
                let key = match index.exact(&target) {
                    Some((to, _)) => index.keys[to].clone(),
                    None => target,
                };
                incoming.entry(key).or_default().push((at, i));
            }
        }
        index.incoming = incoming;
        index
    }

    /// The declared relations of the entity keyed `key`: those it declares,
    /// and those other entities declare to it (by its name or an alias).
    fn relations(&self, key: &str) -> Vec<DeclaredRelation> {
        let mut relations = Vec::new();
        if let Some(d) = self.by_key(key) {
            for Relation { relation, target } in &d.relations {
                relations.push(DeclaredRelation {
                    relation: relation.clone(),
                    direction: "outgoing",
                    entity: target.clone(),
                    records: 0,
                });
            }
        }
        for &(at, i) in self.incoming.get(key).into_iter().flatten() {
            let d = &self.declared[at];
            if self.keys[at] == key {
                continue;
            }
            relations.push(DeclaredRelation {
                relation: d.relations[i].relation.clone(),
                direction: "incoming",
                entity: d.name.clone(),
                records: 0,
            });
        }
        relations
    }

    /// The names (folded) that start with `prefix`, in order.
    fn starting_with<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = &'a (String, usize, bool)> + 'a {
        let from = self
            .names
            .partition_point(|(name, _, _)| name.as_str() < prefix);
        self.names[from..]
            .iter()
            .take_while(move |(name, _, _)| name.starts_with(prefix))
    }

    /// The entity `folded` names exactly: by its name first, else an alias.
    fn exact(&self, folded: &str) -> Option<(usize, MatchedBy)> {
        let mut best: Option<(usize, MatchedBy)> = None;
        for (name, at, is_name) in self.starting_with(folded) {
            if name != folded {
                break;
            }
            let by = if *is_name {
                MatchedBy::Name
            } else {
                MatchedBy::Alias
            };
            // The list's order decides between equals, as a scan would.
            if best.is_none_or(|(b, bb)| (by, *at) < (bb, b)) {
                best = Some((*at, by));
            }
        }
        best
    }

    fn by_key(&self, key: &str) -> Option<&Declared> {
        self.by_key.get(key).map(|at| &self.declared[*at])
    }
}

impl Engine {
    /// The finder for documents of `library`, or None when entities are
    /// off. A library that does not exist yet has no declared entities.
    pub(crate) fn finder(&self, library: &LibraryName) -> Result<Option<Finder>> {
        if !self.config.entities {
            return Ok(None);
        }
        let (declared, schema) = match self.store.declared_entities(library) {
            Ok(d) => (d, self.store.record_schema(library)?),
            Err(StoreError::LibraryNotFound(_)) => (Vec::new(), None),
            Err(e) => return Err(e.into()),
        };
        Ok(Some(
            Finder::new(declared, &self.config.limits)?.with_fields(schema.as_ref()),
        ))
    }

    /// The declared entities of `library`.
    pub fn declared_entities(&self, library: &LibraryName) -> Result<Vec<Declared>> {
        Ok(self.store.declared_entities(library)?)
    }

    /// Declares `list` for `library` (creating the library when needed):
    /// in place of the declared entities it had, or merged with them (an
    /// entity of the same name replaced). A list that would leave two
    /// entities sharing a name is refused whole. Then every document of the
    /// library is relinked.
    pub fn import_entities(
        &self,
        library: &LibraryName,
        list: Vec<Declared>,
        merge: bool,
    ) -> Result<ImportReport> {
        self.writable("importing entities")?;
        if !self.config.entities {
            return Err(EngineError::invalid(
                "entities are off ([ingest] entities = false)",
            ));
        }
        self.create_library(library)?;
        let imported = list.len();
        let declared = if merge {
            let incoming: HashSet<String> = list.iter().map(|d| fold_name(&d.name)).collect();
            let mut all: Vec<Declared> = self
                .store
                .declared_entities(library)?
                .into_iter()
                .filter(|d| !incoming.contains(&fold_name(&d.name)))
                .collect();
            all.extend(list);
            all
        } else {
            list
        };
        // Checked as the finder will use them before anything is written.
        Finder::new(declared.clone(), &self.config.limits)?;
        self.store.set_declared_entities(library, &declared)?;
        let relinked = self.relink(library, &crate::SilentProgress)?;
        Ok(ImportReport {
            declared: declared.len(),
            imported,
            relinked,
        })
    }

    /// Reads every document of `library` again for the entities it
    /// mentions and replaces its mentions, one document per transaction,
    /// without embedding: run after an import, or to build the graph of a
    /// library ingested before entities existed. Interrupted, it leaves
    /// each document with its old mentions or its new ones, and running it
    /// again finishes the work; cancelled (`progress`), it stops between
    /// documents.
    pub fn relink(
        &self,
        library: &LibraryName,
        progress: &dyn crate::Progress,
    ) -> Result<RelinkReport> {
        self.writable("relinking entities")?;
        let finder = self
            .finder(library)?
            .ok_or_else(|| EngineError::invalid("entities are off ([ingest] entities = false)"))?;
        let mut report = RelinkReport::default();
        let mut offset = 0;
        loop {
            let (page, total) = self.store.documents(library, offset, RELINK_PAGE)?;
            if offset == 0 {
                progress.start(total);
            }
            if page.is_empty() {
                break;
            }
            offset += page.len() as u64;
            for summary in page {
                if progress.cancelled() {
                    progress.finish();
                    return Err(EngineError::new(
                        ErrorCode::Timeout,
                        format!(
                            "cancelled after {} documents; each has its old mentions or its new \
                             ones: relink again to finish",
                            report.documents
                        ),
                    ));
                }
                let chunks = match self.store.chunks(&summary.id, 0..summary.chunk_count) {
                    Ok(c) => c,
                    // Deleted meanwhile.
                    Err(StoreError::NotFound { .. }) => continue,
                    Err(e) => return Err(e.into()),
                };
                let (mentions, capped) = finder.document_mentions(&summary.metadata, &chunks);
                match self.store.replace_mentions(&summary.id, &mentions) {
                    Ok(()) => {}
                    Err(StoreError::NotFound { .. }) => continue,
                    Err(e) => return Err(e.into()),
                }
                report.documents += 1;
                report.mentions += mentions.len() as u64;
                report.capped += u64::from(!capped.is_empty());
                progress.advance(1, &summary.source);
            }
        }
        progress.finish();
        self.store.flush()?;
        Ok(report)
    }

    /// The entities of `library` (of `kind`, keys starting with the folded
    /// `prefix`), most mentioned first.
    pub fn entities(
        &self,
        library: &LibraryName,
        kind: Option<&str>,
        prefix: Option<&str>,
        top: usize,
    ) -> Result<Vec<EntityCount>> {
        let folded = prefix.map(fold_name);
        let query = EntityQuery {
            kind,
            prefix: folded.as_deref().filter(|p| !p.is_empty()),
        };
        Ok(self.store.entities(library, &query, top)?)
    }

    /// The declared entities of `library`, indexed; rebuilt only when the
    /// store has changed since (its generation), or every time on a backend
    /// that cannot say.
    pub(crate) fn declared_index(
        &self,
        library: &LibraryName,
    ) -> Result<std::sync::Arc<DeclaredIndex>> {
        let generation = self.store.generation()?;
        if let Some(generation) = generation {
            let cached = self
                .declared_indexes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(library)
                .filter(|(at, _)| *at == generation)
                .map(|(_, index)| index.clone());
            if let Some(index) = cached {
                return Ok(index);
            }
        }
        let index = std::sync::Arc::new(DeclaredIndex::new(self.store.declared_entities(library)?));
        if let Some(generation) = generation {
            let mut indexes = self
                .declared_indexes
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            // One entry a library; a flood of made-up names cannot grow it.
            if indexes.len() >= 64 {
                indexes.clear();
            }
            indexes.insert(library.clone(), (generation, index.clone()));
        }
        Ok(index)
    }

    /// The entity `name` names exactly: a declared entity by its name or an
    /// alias, or a key of the graph.
    fn resolve(
        &self,
        library: &LibraryName,
        declared: &DeclaredIndex,
        name: &str,
    ) -> Result<Option<Resolved>> {
        let folded = fold_name(name);
        if folded.is_empty() {
            return Ok(None);
        }
        if let Some((at, matched_by)) = declared.exact(&folded) {
            return Ok(Some(Resolved {
                key: declared.keys[at].clone(),
                declared: Some(declared.declared[at].clone()),
                matched_by,
            }));
        }
        let known = !self.store.mentions_of(library, &folded, 1)?.is_empty();
        Ok(known.then_some(Resolved {
            key: folded,
            declared: None,
            matched_by: MatchedBy::Name,
        }))
    }

    /// The key a name resolves to for a filter: the entity it names
    /// exactly, else its folded form (which matches nothing when no entity
    /// has it).
    pub(crate) fn entity_key(&self, library: &LibraryName, name: &str) -> Result<String> {
        let declared = self.declared_index(library)?;
        Ok(match self.resolve(library, &declared, name)? {
            Some(r) => r.key,
            None => fold_name(name),
        })
    }

    /// Rewrites a filter's entity names as the keys they resolve to.
    pub(crate) fn resolve_entity_filter(
        &self,
        library: &LibraryName,
        filter: &mut folio_core::Filter,
    ) -> Result<()> {
        for condition in &mut filter.conditions {
            if let Condition::Entity(name) = condition {
                *name = self.entity_key(library, name)?;
            }
        }
        Ok(())
    }

    /// Entities `text` may name, best first: exactly (name, then alias),
    /// then by prefix, then within a few edits. `kind` keeps one type.
    pub fn lookup(
        &self,
        library: &LibraryName,
        text: &str,
        kind: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EntityMatch>> {
        let folded = fold_name(text);
        if folded.is_empty() {
            return Err(EngineError::invalid(
                "an entity name must have letters or digits",
            ));
        }
        let declared = self.declared_index(library)?;
        let mut found: BTreeMap<String, (MatchedBy, Option<usize>)> = BTreeMap::new();
        // Each key keeps its best match.
        let note = |found: &mut BTreeMap<_, _>, key: String, by: MatchedBy, distance| {
            let entry = found.entry(key).or_insert((by, distance));
            if (by, distance) < *entry {
                *entry = (by, distance);
            }
        };
        if let Some(r) = self.resolve(library, &declared, text)? {
            note(&mut found, r.key, r.matched_by, None);
        }
        // Declared names of a prefix rank among themselves by name (their
        // mentions are read only for the few returned), so more than
        // `limit` of them, with room for some the type filter drops, can
        // never be returned.
        let wanted = limit.max(1) * 4;
        for (_, at, _) in declared
            .starting_with(&folded)
            .filter(|(_, at, _)| kind.is_none_or(|k| declared.declared[*at].kind == k))
            .take(wanted)
        {
            note(
                &mut found,
                declared.keys[*at].clone(),
                MatchedBy::Prefix,
                None,
            );
        }
        let counts = |prefix: &str, limit: usize| {
            self.store.entities(
                library,
                &EntityQuery {
                    kind,
                    prefix: Some(prefix),
                },
                limit,
            )
        };
        // The counts read here serve the matches below too.
        let mut known: HashMap<String, EntityCount> = HashMap::new();
        for e in counts(&folded, limit.max(1) * 4)? {
            note(&mut found, e.entity.clone(), MatchedBy::Prefix, None);
            known.insert(e.entity.clone(), e);
        }
        // Typos: names a few edits away, among declared names and the
        // graph's keys that share the first letter.
        let most = max_edits(&folded);
        let first: String = folded.chars().take(1).collect();
        // A fuzzy match ranks after every exact and prefix one: with
        // `limit` of those, none could be returned.
        if most > 0 && found.len() < limit {
            for (name, at, _) in declared.starting_with(&first) {
                if let Some(d) = edits_within(&folded, name, most) {
                    note(
                        &mut found,
                        declared.keys[*at].clone(),
                        MatchedBy::Fuzzy,
                        Some(d),
                    );
                }
            }
            for e in counts(&first, FUZZY_CANDIDATES)? {
                if let Some(d) = edits_within(&folded, &e.entity, most) {
                    note(&mut found, e.entity.clone(), MatchedBy::Fuzzy, Some(d));
                }
                known.insert(e.entity.clone(), e);
            }
        }
        // Best first by what is known without a query (the count queries
        // return the most mentioned names of a prefix, so a name they left
        // out has fewer mentions than those they gave); only the first
        // `limit` that pass the type filter are read further.
        let mut ranked: Vec<(String, MatchedBy, Option<usize>)> = found
            .into_iter()
            .map(|(key, (by, distance))| (key, by, distance))
            .collect();
        let mentions_known = |key: &str| known.get(key).map_or(0, |c| c.mentions);
        ranked.sort_by(|a, b| {
            (a.1, a.2, std::cmp::Reverse(mentions_known(&a.0)), &a.0).cmp(&(
                b.1,
                b.2,
                std::cmp::Reverse(mentions_known(&b.0)),
                &b.0,
            ))
        });
        let mut matches = Vec::new();
        for (key, matched_by, distance) in ranked {
            if matches.len() >= limit {
                break;
            }
            let (name, entity_kind) = match declared.by_key(&key) {
                Some(d) => (Some(d.name.clone()), d.kind.clone()),
                None => match self.store.mentions_of(library, &key, 1)?.first() {
                    Some(hit) => (None, self.mention_kind(&hit.document_id, &key)?),
                    None => continue,
                },
            };
            if kind.is_some_and(|k| k != entity_kind) {
                continue;
            }
            // Counts the queries above read, else the entity's mentions.
            let (mentions, documents) = match known.remove(&key) {
                Some(count) => (count.mentions, count.documents),
                None => {
                    let hits = self.store.mentions_of(library, &key, CARD_MENTIONS)?;
                    let documents: BTreeSet<&DocumentId> =
                        hits.iter().map(|h| &h.document_id).collect();
                    (hits.len() as u64, documents.len() as u64)
                }
            };
            matches.push(EntityMatch {
                entity: key,
                name,
                kind: entity_kind,
                mentions,
                documents,
                matched_by,
                distance,
            });
        }
        matches.sort_by(|a, b| {
            (
                a.matched_by,
                a.distance,
                std::cmp::Reverse(a.mentions),
                &a.entity,
            )
                .cmp(&(
                    b.matched_by,
                    b.distance,
                    std::cmp::Reverse(b.mentions),
                    &b.entity,
                ))
        });
        Ok(matches)
    }

    /// The summaries (no text) of the documents `ids` of `library`, by id,
    /// in one query.
    fn summaries<'a>(
        &self,
        library: &LibraryName,
        ids: impl IntoIterator<Item = &'a DocumentId>,
    ) -> Result<HashMap<DocumentId, DocumentSummary>> {
        let values: Vec<Value> = ids
            .into_iter()
            .map(|id| Value::String(id.to_string()))
            .collect();
        let count = values.len();
        if count == 0 {
            return Ok(HashMap::new());
        }
        let filter = folio_core::Filter {
            conditions: vec![Condition::AnyOf {
                field: "document_id".into(),
                values,
            }],
        };
        Ok(self
            .store
            .find_documents(library, &filter, count)?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect())
    }

    /// The entities document `id` mentions, most mentioned first (then by
    /// key), each with its type and how many mentions; at most `limit`.
    pub fn document_entities(&self, id: &str, limit: usize) -> Result<Vec<EntityCount>> {
        let id = crate::parse_document_id(id)?;
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        for mention in self.store.document_mentions(&id)? {
            *counts.entry((mention.entity, mention.kind)).or_default() += 1;
        }
        let mut entities: Vec<EntityCount> = counts
            .into_iter()
            .map(|((entity, kind), mentions)| EntityCount {
                entity,
                kind,
                mentions,
                documents: 1,
            })
            .collect();
        entities.sort_by(|a, b| {
            b.mentions
                .cmp(&a.mentions)
                .then_with(|| a.entity.cmp(&b.entity))
        });
        entities.truncate(limit);
        Ok(entities)
    }

    /// The type a document's mention of `key` gives it.
    fn mention_kind(&self, document: &DocumentId, key: &str) -> Result<String> {
        Ok(self
            .store
            .document_mentions(document)?
            .into_iter()
            .find(|m| m.entity == key)
            .map(|m| m.kind)
            .unwrap_or_else(|| "name".into()))
    }

    /// The card of the entity `name` names: exactly, by alias, else the
    /// best prefix or fuzzy match; `NotFound` when nothing matches.
    pub fn entity(&self, library: &LibraryName, name: &str) -> Result<EntityCard> {
        self.entity_of(library, name, None, Detail::Full)
    }

    /// A brief card (no evidence snippets, no second hop; up to
    /// `documents` documents) of the entity of type `kind` that `name`
    /// names, as `entity` finds it: what `find_vendor_info` shows.
    pub fn entity_brief(
        &self,
        library: &LibraryName,
        name: &str,
        kind: &str,
        documents: usize,
    ) -> Result<EntityCard> {
        self.entity_of(library, name, Some(kind), Detail::Brief { documents })
    }

    fn entity_of(
        &self,
        library: &LibraryName,
        name: &str,
        kind: Option<&str>,
        detail: Detail,
    ) -> Result<EntityCard> {
        let declared = self.declared_index(library)?;
        let exact = self
            .resolve(library, &declared, name)?
            .filter(|r| match (kind, &r.declared) {
                (None, _) => true,
                (Some(kind), Some(d)) => d.kind == kind,
                (Some(kind), None) => self
                    .store
                    .mentions_of(library, &r.key, 1)
                    .ok()
                    .and_then(|hits| hits.first().cloned())
                    .and_then(|hit| self.mention_kind(&hit.document_id, &r.key).ok())
                    .is_some_and(|k| k == kind),
            });
        let resolved = match exact {
            Some(r) => r,
            None => {
                let best = self.lookup(library, name, kind, 1)?.into_iter().next();
                let Some(best) = best else {
                    let of_kind = kind.map(|k| format!(" of type {k}")).unwrap_or_default();
                    return Err(EngineError::new(
                        ErrorCode::NotFound,
                        format!("no entity {name:?}{of_kind} in library {library}"),
                    ));
                };
                Resolved {
                    declared: declared.by_key(&best.entity).cloned(),
                    key: best.entity,
                    matched_by: best.matched_by,
                }
            }
        };
        self.card(library, &declared, resolved, detail)
    }

    fn card(
        &self,
        library: &LibraryName,
        declared: &DeclaredIndex,
        resolved: Resolved,
        detail: Detail,
    ) -> Result<EntityCard> {
        let (document_count, full) = match detail {
            Detail::Full => (10, true),
            Detail::Brief { documents } => (documents, false),
        };
        let key = resolved.key;
        let hits = self.store.mentions_of(library, &key, CARD_MENTIONS)?;
        let mut per_document: BTreeMap<&DocumentId, u64> = BTreeMap::new();
        for hit in &hits {
            *per_document.entry(&hit.document_id).or_default() += 1;
        }
        let mut ranked: Vec<(&DocumentId, u64)> = per_document.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        // Evidence from different documents first; record fields' mentions
        // have no words to show.
        let mut seen = HashSet::new();
        let firsts: Vec<&folio_store::MentionHit> = hits
            .iter()
            .filter(|h| h.start < h.end && seen.insert(&h.document_id))
            .take(if full { 5 } else { 1 })
            .collect();
        let top = &ranked[..ranked.len().min(document_count)];
        let summaries = self.summaries(
            library,
            top.iter()
                .map(|(id, _)| *id)
                .chain(firsts.iter().map(|h| &h.document_id)),
        )?;
        let top_documents = top
            .iter()
            .filter_map(|(id, n)| {
                let d = summaries.get(*id)?;
                Some(DocumentMentions {
                    document_id: id.to_string(),
                    title: d.title.clone(),
                    source: d.source.clone(),
                    mentions: *n,
                })
            })
            .collect();
        let mut evidence = Vec::new();
        for hit in firsts {
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
            let source = summaries
                .get(&hit.document_id)
                .map(|d| d.source.clone())
                .unwrap_or_default();
            evidence.push(Evidence {
                chunk_id: chunk.id.to_string(),
                document_id: hit.document_id.to_string(),
                source,
                page: chunk.page_start,
                surface: surface.to_string(),
                snippet: around(&chunk.text, start, end, 120),
            });
        }
        let kind = match (&resolved.declared, hits.first()) {
            (Some(d), _) => d.kind.clone(),
            (None, Some(hit)) => self.mention_kind(&hit.document_id, &key)?,
            (None, None) => "name".into(),
        };
        let schema = self.store.record_schema(library)?;
        let (field_name, field_relations) =
            self.field_facts(library, &key, &hits, schema.as_ref())?;
        let name = match &resolved.declared {
            Some(d) => d.name.clone(),
            None => field_name
                .or_else(|| evidence.first().map(|e| e.surface.clone()))
                .unwrap_or_else(|| key.clone()),
        };
        let chunks_of = |hits: &[folio_store::MentionHit]| -> BTreeSet<(DocumentId, u32)> {
            hits.iter()
                .map(|h| (h.document_id.clone(), h.chunk))
                .collect()
        };
        let own = chunks_of(&hits);
        let total = self.store.library(library)?.chunk_count;
        let mut related = Vec::new();
        for r in self.store.related(library, &key, 10)? {
            let evidence = if full {
                let theirs =
                    chunks_of(&self.store.mentions_of(library, &r.entity, EDGE_MENTIONS)?);
                own.intersection(&theirs)
                    .take(3)
                    .map(|(d, c)| folio_core::ChunkId::new(d, *c).to_string())
                    .collect()
            } else {
                Vec::new()
            };
            related.push(RelatedEntity {
                npmi: npmi(r.chunks, own.len() as u64, r.entity_chunks, total),
                entity: r.entity,
                kind: r.kind,
                shared_chunks: r.chunks,
                evidence,
            });
        }
        let direct: HashSet<&str> = related
            .iter()
            .map(|r| r.entity.as_str())
            .chain([key.as_str()])
            .collect();
        let mut two_hops: Vec<TwoHops> = Vec::new();
        for r in related.iter().take(if full { 5 } else { 0 }) {
            for far in self.store.related(library, &r.entity, 5)? {
                if direct.contains(far.entity.as_str())
                    || two_hops.iter().any(|t| t.entity == far.entity)
                {
                    continue;
                }
                two_hops.push(TwoHops {
                    entity: far.entity,
                    kind: far.kind,
                    via: r.entity.clone(),
                    shared_chunks: far.chunks,
                });
            }
        }
        two_hops.sort_by(|a, b| {
            b.shared_chunks
                .cmp(&a.shared_chunks)
                .then(a.entity.cmp(&b.entity))
        });
        two_hops.truncate(10);
        let mut relations = declared.relations(&key);
        relations.extend(field_relations);
        let is_declared = resolved.declared.is_some();
        let (aliases, attributes) = match resolved.declared {
            Some(d) => (d.aliases, d.attributes),
            None => Default::default(),
        };
        Ok(EntityCard {
            mentions: hits.len() as u64,
            documents: ranked.len() as u64,
            declared: is_declared,
            entity: key,
            name,
            kind,
            matched_by: resolved.matched_by,
            aliases,
            attributes,
            relations,
            top_documents,
            evidence,
            related,
            related_two_hops: two_hops,
        })
    }
}

/// Mentions of one query entity read to boost chunks at most.
const BOOST_MENTIONS: usize = 50_000;

impl Engine {
    /// The entities `query` names: declared names and aliases found in it,
    /// and names by their shape that the graph knows.
    pub(crate) fn query_entities(&self, library: &LibraryName, query: &str) -> Result<Vec<String>> {
        let declared = self.store.declared_entities(library)?;
        let finder = Finder::new(declared, &self.config.limits)?;
        let mut keys: BTreeSet<String> = finder
            .gazetteer
            .find(query, 32)
            .0
            .into_iter()
            .map(|m| fold_name(&finder.declared[m.entity].name))
            .collect();
        for name in folio_entities::candidates(query, 32).0 {
            if !self.store.mentions_of(library, &name.key, 1)?.is_empty() {
                keys.insert(name.key);
            }
        }
        Ok(keys.into_iter().collect())
    }

    /// Fused candidates with the chunks that mention an entity `query`
    /// names scored `boost` higher, re-sorted (ties keep their order).
    pub(crate) fn boost_entities(
        &self,
        library: &LibraryName,
        query: &str,
        mut fused: Vec<folio_search::Fused>,
        boost: f32,
    ) -> Result<Vec<folio_search::Fused>> {
        let keys = self.query_entities(library, query)?;
        if keys.is_empty() {
            return Ok(fused);
        }
        let mut mentioned: HashSet<folio_core::ChunkId> = HashSet::new();
        for key in &keys {
            for hit in self.store.mentions_of(library, key, BOOST_MENTIONS)? {
                mentioned.insert(folio_core::ChunkId::new(&hit.document_id, hit.chunk));
            }
        }
        for f in &mut fused {
            if mentioned.contains(&f.chunk) {
                f.score *= 1.0 + boost;
            }
        }
        fused.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(fused)
    }
}

/// Records read for an entity's field relations at most.
const FIELD_RECORDS: usize = 500;

impl Engine {
    /// What records say of the entity keyed `key` through `schema`'s entity
    /// fields (read from up to `FIELD_RECORDS` of the documents `hits`
    /// name): its name as a field holds it, and the relations between
    /// fields (a speaker "member of" a party), most stated first.
    fn field_facts(
        &self,
        library: &LibraryName,
        key: &str,
        hits: &[folio_store::MentionHit],
        schema: Option<&RecordSchema>,
    ) -> Result<(Option<String>, Vec<DeclaredRelation>)> {
        let Some(schema) = schema.filter(|s| s.entity_fields().next().is_some()) else {
            return Ok((None, Vec::new()));
        };
        let text = |metadata: &serde_json::Map<String, Value>, field: &str| {
            metadata
                .get(field)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let mut name = None;
        let mut stated: BTreeMap<(String, &'static str, String), u64> = BTreeMap::new();
        let mut seen = HashSet::new();
        let records: Vec<&DocumentId> = hits
            .iter()
            .filter(|h| h.end == 0 && seen.insert(&h.document_id))
            .take(FIELD_RECORDS)
            .map(|h| &h.document_id)
            .collect();
        let summaries = self.summaries(library, records.iter().copied())?;
        // In the records' order, so the name a field holds is the first
        // record's.
        for document in records.iter().filter_map(|id| summaries.get(*id)) {
            let metadata = &document.metadata;
            if name.is_none() {
                name = schema
                    .entity_fields()
                    .filter_map(|(field, _)| text(metadata, field))
                    .find(|value| fold_name(value) == key);
            }
            for r in &schema.relations {
                let (Some(from), Some(to)) = (text(metadata, &r.from), text(metadata, &r.to))
                else {
                    continue;
                };
                if fold_name(&from) == key {
                    *stated
                        .entry((r.relation.clone(), "outgoing", to))
                        .or_default() += 1;
                } else if fold_name(&to) == key {
                    *stated
                        .entry((r.relation.clone(), "incoming", from))
                        .or_default() += 1;
                }
            }
        }
        let mut relations: Vec<DeclaredRelation> = stated
            .into_iter()
            .map(
                |((relation, direction, entity), records)| DeclaredRelation {
                    relation,
                    direction,
                    entity,
                    records,
                },
            )
            .collect();
        relations.sort_by(|a, b| b.records.cmp(&a.records).then(a.entity.cmp(&b.entity)));
        relations.truncate(20);
        Ok((name, relations))
    }
}

/// Edits a name of these many characters may be away and still match.
fn max_edits(name: &str) -> usize {
    match name.chars().count() {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// The Levenshtein distance between `a` and `b` when it is at most `most`
/// (and `a` is not `b`'s prefix, which a prefix match covers). Only the
/// band of cells within `most` of the diagonal is filled, on bytes when
/// both are ASCII (names almost always are), without allocating: a lookup
/// compares a name with every declared name sharing its first letter.
fn edits_within(a: &str, b: &str, most: usize) -> Option<usize> {
    if most == 0 || most > 2 {
        return None;
    }
    if a.is_ascii() && b.is_ascii() {
        return banded(a.as_bytes(), b.as_bytes(), most);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    banded(&a, &b, most)
}

/// `edits_within` over two sequences, `most` at most 2.
fn banded<T: PartialEq>(a: &[T], b: &[T], most: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > most {
        return None;
    }
    // Row i holds cells j in i-most ..= i+most, at j - i + most; cells
    // outside the band count as past `most`.
    const WIDTH: usize = 5;
    let past = most + 1;
    let mut previous = [past; WIDTH];
    for (j, cell) in previous.iter_mut().enumerate().skip(most) {
        // Row 0: j edits to make b[..j] from nothing.
        let column = j - most;
        *cell = if column <= b.len() {
            column.min(past)
        } else {
            past
        };
    }
    for i in 1..=a.len() {
        let mut current = [past; WIDTH];
        let mut least = past;
        for k in 0..=2 * most {
            let Some(j) = (i + k).checked_sub(most) else {
                continue;
            };
            if j > b.len() {
                break;
            }
            let value = if j == 0 {
                i.min(past)
            } else {
                let diagonal = previous[k] + usize::from(a[i - 1] != b[j - 1]);
                let up = if k + 1 < WIDTH {
                    previous[k + 1] + 1
                } else {
                    past
                };
                let left = if k > 0 { current[k - 1] + 1 } else { past };
                diagonal.min(up).min(left).min(past)
            };
            current[k] = value;
            least = least.min(value);
        }
        if least > most {
            return None;
        }
        previous = current;
    }
    let d = previous[b.len() + most - a.len()];
    (d <= most && d > 0).then_some(d)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_are_counted_within_a_bound() {
        assert_eq!(edits_within("acme", "acne", 1), Some(1));
        assert_eq!(edits_within("globex", "glboex", 2), Some(2));
        assert_eq!(edits_within("globex", "initech", 2), None);
        assert_eq!(edits_within("acme", "acme", 1), None);
        assert_eq!(max_edits("ibm"), 0);
        assert_eq!(max_edits("initech corporation"), 2);
        assert_eq!(edits_within("müller", "muller", 1), Some(1));
        assert_eq!(
            edits_within("vendor 000004 ltx", "vendor 000004 ltd", 2),
            Some(1)
        );
    }

    /// The whole Levenshtein table, as the banded one must agree with.
    fn levenshtein(a: &[char], b: &[char]) -> usize {
        let mut previous: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.iter().enumerate() {
            let mut current = vec![i + 1; b.len() + 1];
            for (j, cb) in b.iter().enumerate() {
                current[j + 1] = (previous[j] + usize::from(ca != cb))
                    .min(previous[j + 1] + 1)
                    .min(current[j] + 1);
            }
            previous = current;
        }
        previous[b.len()]
    }

    // The band gives the full table's distance whenever it is within the
    // bound, and nothing otherwise: every pair of short strings over a
    // small alphabet (ASCII and not), for bounds 1 and 2.
    #[test]
    fn the_band_agrees_with_the_whole_table() {
        let words: Vec<String> = {
            let letters = ['a', 'b', 'é'];
            let mut all = vec![String::new()];
            for _ in 0..4 {
                let longer: Vec<String> = all
                    .iter()
                    .filter(|w| w.chars().count() < 4)
                    .flat_map(|w| letters.iter().map(move |c| format!("{w}{c}")))
                    .collect();
                all.extend(longer);
                all.sort();
                all.dedup();
            }
            all
        };
        for a in &words {
            for b in &words {
                let d = levenshtein(
                    &a.chars().collect::<Vec<_>>(),
                    &b.chars().collect::<Vec<_>>(),
                );
                for most in [1, 2] {
                    let want = (d <= most && d > 0).then_some(d);
                    assert_eq!(edits_within(a, b, most), want, "{a:?} {b:?} within {most}");
                }
            }
        }
    }

    #[test]
    fn relations_are_read_both_ways_through_aliases() {
        let list: Vec<Declared> = serde_json::from_value(serde_json::json!([
            {"name": "Acme Holdings", "kind": "organization", "aliases": ["Acme"]},
            {"name": "Jane Roe", "kind": "person",
             "relations": [{"type": "member of", "target": "ACME"}]}
        ]))
        .unwrap();
        let index = DeclaredIndex::new(list);
        let acme = index.relations("acme holdings");
        assert_eq!(
            acme,
            vec![DeclaredRelation {
                relation: "member of".into(),
                direction: "incoming",
                entity: "Jane Roe".into(),
                records: 0,
            }]
        );
        assert_eq!(index.relations("jane roe")[0].direction, "outgoing");
    }
}
