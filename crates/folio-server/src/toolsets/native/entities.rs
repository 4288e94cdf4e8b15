//! Native tools over the entity graph: `entities` (a library's entities,
//! most mentioned first, or those a name may mean), `entity` (one entity's
//! card) and `declare_entities` (the user's own list: names, types,
//! aliases, attributes, relations).

use std::collections::BTreeMap;

use folio_engine::{EntityCard, EntityMatch};
use folio_entities::{Declared, Relation};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{error, invalid};
use crate::ops::{self, Call, Shared, Touches, library};
use crate::tool::{Effect, define, success};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntitiesParams {
    library: String,
    /// Only entities of this type (organization, person, product, place,
    /// other, a declared type, or `name` for names found by their shape).
    #[serde(default, rename = "type")]
    kind: Option<String>,
    /// Entities a name may mean: by name, declared alias, prefix, then
    /// within a few typos, best first. Without it, the most mentioned.
    #[serde(default)]
    query: Option<String>,
    /// Most entities returned (1 to 200, default 20).
    #[serde(default = "twenty")]
    #[schemars(range(min = 1, max = 200))]
    limit: usize,
}

fn twenty() -> usize {
    20
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EntityRow {
    /// The entity's key: its name folded (case, punctuation, spacing).
    entity: String,
    /// The declared name, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    mentions: u64,
    documents: u64,
    /// With a query: name, alias, prefix or fuzzy.
    #[serde(skip_serializing_if = "Option::is_none")]
    matched_by: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EntitiesOutput {
    library: String,
    entities: Vec<EntityRow>,
}

fn matched(m: EntityMatch) -> EntityRow {
    EntityRow {
        entity: m.entity,
        name: m.name,
        kind: m.kind,
        mentions: m.mentions,
        documents: m.documents,
        matched_by: Some(m.matched_by.as_str().into()),
    }
}

pub async fn entities(shared: &Shared, p: EntitiesParams, call: &Call) -> CallToolResult {
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(&e),
    };
    if !(1..=200).contains(&p.limit) {
        return invalid(format!("limit must be 1 to 200 (got {})", p.limit));
    }
    let touched = name.clone();
    let found = ops::run(shared, call, Touches::Library(&touched), move |engine| {
        Ok(match &p.query {
            Some(query) => engine
                .lookup(&name, query, p.kind.as_deref(), p.limit)?
                .into_iter()
                .map(matched)
                .collect(),
            None => engine
                .entities(&name, p.kind.as_deref(), None, p.limit)?
                .into_iter()
                .map(|e| EntityRow {
                    entity: e.entity,
                    name: None,
                    kind: e.kind,
                    mentions: e.mentions,
                    documents: e.documents,
                    matched_by: None,
                })
                .collect(),
        })
    })
    .await;
    match found {
        Ok(entities) => success(&EntitiesOutput {
            library: p.library,
            entities,
        }),
        Err(e) => error(&e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityParams {
    library: String,
    /// The entity's name or a declared alias (case and punctuation aside);
    /// a prefix or a typo finds the closest entity.
    #[schemars(length(min = 1, max = 500))]
    name: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RelationOutput {
    #[serde(rename = "type")]
    relation: String,
    /// outgoing (this entity declares it) or incoming.
    direction: String,
    entity: String,
    /// Records whose fields state it (0: the declared entities state it).
    records: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DocumentRow {
    document_id: String,
    title: Option<String>,
    source: String,
    mentions: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EvidenceOutput {
    chunk_id: String,
    document_id: String,
    source: String,
    page: Option<u32>,
    /// The mention as written.
    surface: String,
    snippet: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RelatedOutput {
    entity: String,
    #[serde(rename = "type")]
    kind: String,
    /// Chunks that mention both.
    shared_chunks: u64,
    /// Normalised pointwise mutual information over the library's chunks
    /// (1: always together; 0: independent).
    npmi: f64,
    /// Chunk ids that mention both (the first few).
    evidence: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TwoHopOutput {
    entity: String,
    #[serde(rename = "type")]
    kind: String,
    via: String,
    shared_chunks: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CardOutput {
    library: String,
    entity: String,
    name: String,
    #[serde(rename = "type")]
    kind: String,
    /// How the name asked for matched: name, alias, prefix or fuzzy.
    matched_by: String,
    declared: bool,
    aliases: Vec<String>,
    attributes: BTreeMap<String, Value>,
    relations: Vec<RelationOutput>,
    mentions: u64,
    documents: u64,
    top_documents: Vec<DocumentRow>,
    evidence: Vec<EvidenceOutput>,
    related: Vec<RelatedOutput>,
    related_two_hops: Vec<TwoHopOutput>,
}

pub fn card_output(library: String, card: EntityCard) -> CardOutput {
    CardOutput {
        library,
        entity: card.entity,
        name: card.name,
        kind: card.kind,
        matched_by: card.matched_by.as_str().into(),
        declared: card.declared,
        aliases: card.aliases,
        attributes: card.attributes,
        relations: card
            .relations
            .into_iter()
            .map(|r| RelationOutput {
                relation: r.relation,
                direction: r.direction.into(),
                entity: r.entity,
                records: r.records,
            })
            .collect(),
        mentions: card.mentions,
        documents: card.documents,
        top_documents: card
            .top_documents
            .into_iter()
            .map(|d| DocumentRow {
                document_id: d.document_id,
                title: d.title,
                source: d.source,
                mentions: d.mentions,
            })
            .collect(),
        evidence: card
            .evidence
            .into_iter()
            .map(|e| EvidenceOutput {
                chunk_id: e.chunk_id,
                document_id: e.document_id,
                source: e.source,
                page: e.page,
                surface: e.surface,
                snippet: e.snippet,
            })
            .collect(),
        related: card
            .related
            .into_iter()
            .map(|r| RelatedOutput {
                entity: r.entity,
                kind: r.kind,
                shared_chunks: r.shared_chunks,
                npmi: r.npmi,
                evidence: r.evidence,
            })
            .collect(),
        related_two_hops: card
            .related_two_hops
            .into_iter()
            .map(|t| TwoHopOutput {
                entity: t.entity,
                kind: t.kind,
                via: t.via,
                shared_chunks: t.shared_chunks,
            })
            .collect(),
    }
}

pub async fn entity(shared: &Shared, p: EntityParams, call: &Call) -> CallToolResult {
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(&e),
    };
    let touched = name.clone();
    let wanted = p.name.clone();
    match ops::run(shared, call, Touches::Library(&touched), move |engine| {
        engine.entity(&name, &wanted)
    })
    .await
    {
        Ok(card) => success(&card_output(p.library, card)),
        Err(e) => error(&e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationParams {
    /// The relation ("member of", "supplier of").
    #[serde(rename = "type")]
    relation: String,
    /// The other entity's name.
    target: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeclaredParams {
    name: String,
    /// person, organization, product, place, other, or a type of yours.
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    attributes: BTreeMap<String, Value>,
    #[serde(default)]
    relations: Vec<RelationParams>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeclareParams {
    library: String,
    /// The entities (1 to 100,000).
    #[schemars(length(min = 1, max = 100000))]
    entities: Vec<DeclaredParams>,
    /// Keep the entities declared before (one of the same name is
    /// replaced); by default these replace them.
    #[serde(default)]
    merge: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DeclareOutput {
    library: String,
    /// Declared entities the library has now.
    declared: usize,
    /// Documents read again for them.
    relinked_documents: u64,
    /// Mentions those documents make now.
    mentions: u64,
}

pub async fn declare_entities(shared: &Shared, p: DeclareParams, call: &Call) -> CallToolResult {
    let name = match library(&p.library) {
        Ok(n) => n,
        Err(e) => return error(&e),
    };
    if p.entities.is_empty() || p.entities.len() > 100_000 {
        return invalid("entities must hold 1 to 100,000 entities".into());
    }
    let list: Vec<Declared> = p
        .entities
        .into_iter()
        .map(|d| Declared {
            name: d.name.trim().to_string(),
            kind: d.kind.trim().to_lowercase(),
            aliases: d.aliases,
            attributes: d.attributes,
            relations: d
                .relations
                .into_iter()
                .map(|r| Relation {
                    relation: r.relation.trim().to_lowercase(),
                    target: r.target.trim().to_string(),
                })
                .collect(),
        })
        .collect();
    if let Some(r) = list
        .iter()
        .flat_map(|d| &d.relations)
        .find(|r| r.relation.is_empty() || r.target.is_empty())
    {
        return invalid(format!("a relation needs a type and a target: {r:?}"));
    }
    let touched = name.clone();
    let merge = p.merge;
    match ops::run(shared, call, Touches::Library(&touched), move |engine| {
        engine.import_entities(&name, list, merge)
    })
    .await
    {
        Ok(report) => success(&DeclareOutput {
            library: p.library,
            declared: report.declared,
            relinked_documents: report.relinked.documents,
            mentions: report.relinked.mentions,
        }),
        Err(e) => error(&e),
    }
}

pub fn tools() -> Vec<Tool> {
    vec![
        define::<EntitiesParams, EntitiesOutput>(
            "entities",
            "Entities of a library",
            "Who and what a library's documents talk about: entities (declared ones, and names \
             found repeated in the text) with their type and how many mentions and documents. \
             With query, the entities a name may mean (by name, declared alias, prefix, then \
             within a few typos), best first; without, the most mentioned.",
            Effect::Read,
            false,
        ),
        define::<EntityParams, CardOutput>(
            "entity",
            "An entity's card",
            "Everything known of one entity: its declared aliases, attributes and relations, how \
             often and where it is mentioned (top documents, evidence chunks with citations), and \
             the entities mentioned with it (shared chunks, NPMI weight, evidence chunk ids; one \
             and two hops). Use the entity filter of search ({\"entity\": name}) for the passages.",
            Effect::Read,
            false,
        ),
        define::<DeclareParams, DeclareOutput>(
            "declare_entities",
            "Declare entities",
            "Declare a library's entities (name, type, aliases, attributes, relations to other \
             entities): their names and aliases are then found exactly in every document, and the \
             library's documents are read again for them (nothing is re-embedded). A list in which \
             two entities share a name or alias is refused whole.",
            Effect::Write,
            false,
        ),
    ]
}
