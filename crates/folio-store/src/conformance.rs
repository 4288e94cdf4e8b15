//! The conformance suite every `Store` backend passes. A backend's tests call
//! `run` with a factory that returns a fresh, empty, writable store.
//!
//! Vectors here are hand-made unit vectors, not embeddings: the suite checks
//! storage semantics (atomicity, dedup, filters, ranking plumbing), not models.

use folio_core::{
    Chunk, ChunkId, Condition, Document, DocumentId, EmbeddingSpace, Filter, LibraryName, Pooling,
    SourceKind,
};
use serde_json::{Map, json};

use crate::{
    Bm25, Declared, EntityMention, EntityQuery, NewDocument, PutOutcome, Store, StoreError,
};

/// A 4-d test space.
pub fn space() -> EmbeddingSpace {
    EmbeddingSpace {
        model: "test/axis-4".into(),
        dim: 4,
        pooling: Pooling::Mean,
        normalized: true,
        query_prefix: String::new(),
        passage_prefix: String::new(),
        precision: Default::default(),
    }
}

/// The unit vector along `axis`, slightly tilted by `tilt` towards axis 3.
pub fn axis(axis: usize, tilt: f32) -> Vec<f32> {
    let mut v = [0.0; 4];
    v[axis] = 1.0;
    v[3] += tilt;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// A document of `texts.len()` chunks with vectors along `axes`.
pub fn document(
    library: &LibraryName,
    source: &str,
    texts: &[&str],
    axes: &[usize],
    metadata: serde_json::Value,
) -> NewDocument {
    let id = DocumentId::derive(library, source);
    let text = texts.join("\n\n");
    let count = texts.len() as u32;
    let mut offset = 0u64;
    let chunks = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let start = offset;
            offset += t.chars().count() as u64 + 2;
            Chunk {
                id: ChunkId::new(&id, i as u32),
                document_id: id.clone(),
                index: i as u32,
                count,
                text: t.to_string(),
                char_start: start,
                char_end: start + t.chars().count() as u64,
                page_start: Some(i as u32 + 1),
                page_end: Some(i as u32 + 1),
                section_path: vec!["Part I".into(), format!("Chapter {}", i + 1)],
                context: format!("{source}\n"),
                token_count: t.split_whitespace().count() as u32,
            }
        })
        .collect();
    NewDocument {
        document: Document {
            id,
            library: library.clone(),
            source: source.to_string(),
            source_kind: SourceKind::File,
            format: "text".into(),
            title: Some(source.to_string()),
            content_hash: folio_core::content_hash(text.as_bytes()),
            metadata: metadata.as_object().cloned().unwrap_or_default(),
            page_count: Some(count),
            chunk_count: count,
            text,
            ingested_at: "2026-01-01T00:00:00Z".into(),
        },
        chunks,
        vectors: axes.iter().map(|&a| axis(a, 0.1)).collect(),
        space: space(),
        mentions: Vec::new(),
        original: None,
    }
}

/// A mention of `entity` (a `kind`) at `word` of chunk `chunk`'s text.
fn mention(new: &NewDocument, chunk: u32, word: &str, entity: &str, kind: &str) -> EntityMention {
    let text = &new.chunks[chunk as usize].text;
    let start = text.find(word).expect("the word is in the chunk") as u32;
    EntityMention {
        entity: entity.into(),
        kind: kind.into(),
        chunk,
        start,
        end: start + word.len() as u32,
    }
}

fn lib(name: &str) -> LibraryName {
    LibraryName::new(name).expect("valid test library name")
}

fn filter(value: serde_json::Value) -> Filter {
    Filter::from_json(&value).expect("valid test filter")
}

/// The sources of the `k` best chunks for `query` (lexical) and for the
/// first axis (dense) under `f`, each list sorted.
fn sorted_sources(
    store: &dyn Store,
    name: &LibraryName,
    query: &str,
    f: &Filter,
    k: usize,
) -> (Vec<String>, Vec<String>) {
    let lexical = store.lexical(name, query, f, k, Bm25::default()).unwrap();
    let dense = store.dense(name, &axis(0, 0.0), f, k).unwrap();
    let (mut lexical, mut dense) = (sources(store, &lexical), sources(store, &dense));
    lexical.sort();
    dense.sort();
    (lexical, dense)
}

fn sources(store: &dyn Store, hits: &[crate::Hit]) -> Vec<String> {
    let ids: Vec<ChunkId> = hits.iter().map(|h| h.chunk.clone()).collect();
    store
        .chunks_with_documents(&ids)
        .unwrap()
        .into_iter()
        .map(|c| c.document.source)
        .collect()
}

/// Runs every check against fresh stores from `make`.
pub fn run(make: &dyn Fn() -> Box<dyn Store>) {
    libraries_are_pinned_to_their_space(&*make());
    writes_dedup_and_replace(&*make());
    invalid_writes_change_nothing(&*make());
    lexical_search_stems_and_ranks(&*make());
    a_word_weighs_the_same_in_every_language(&*make());
    a_german_compound_and_its_parts_find_each_other(&*make());
    a_chunk_that_does_not_tell_its_language_is_read_in_its_documents(&*make());
    documents_rank_by_their_whole_text(&*make());
    dense_search_ranks_by_cosine(&*make());
    filters_apply_before_ranking(&*make());
    deletes_remove_from_every_index(&*make());
    statistics_count_live_entries_only(&*make());
    section_prefixes_match_headings_at_word_boundaries(&*make());
    chunks_read_back_in_order(&*make());
    records_group_order_and_update(&*make());
    generation_moves_with_every_write(&*make());
    keys_are_kept_by_hash_and_unique(&*make());
    entity_mentions_live_and_die_with_their_documents(&*make());
    entities_are_declared_relinked_and_filtered(&*make());
    originals_live_and_die_with_their_documents(&*make());
}

/// A document's kept source bytes are written with it, replaced or dropped
/// when it is replaced, kept when an unchanged copy is skipped, and removed
/// with the document and with its library.
pub fn originals_live_and_die_with_their_documents(store: &dyn Store) {
    let name = lib("originals");
    store.create_library(&name, &space()).unwrap();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let mut kept = document(&name, "upload.pdf", &["alpha"], &[0], json!({}));
    kept.original = Some(bytes.clone());
    let plain = document(&name, "plain.txt", &["beta"], &[1], json!({}));
    let (id, plain_id) = (kept.document.id.clone(), plain.document.id.clone());
    store
        .put_documents(vec![kept.clone(), plain], false)
        .unwrap();
    assert_eq!(store.original(&id).unwrap(), Some(bytes.clone()));
    assert_eq!(store.original(&plain_id).unwrap(), None);
    let unknown = DocumentId::derive(&name, "nowhere");
    assert_eq!(store.original(&unknown).unwrap(), None);

    // Skipped (same content): the bytes stay. Replaced with new bytes: the
    // new ones. Replaced without any: none.
    let mut same = kept.clone();
    same.original = None;
    assert_eq!(
        store.put_documents(vec![same], false).unwrap(),
        vec![PutOutcome::Skipped]
    );
    assert_eq!(store.original(&id).unwrap(), Some(bytes));
    let mut changed = document(&name, "upload.pdf", &["gamma"], &[2], json!({}));
    changed.original = Some(b"%PDF-1.7 second".to_vec());
    store.put_documents(vec![changed.clone()], false).unwrap();
    assert_eq!(
        store.original(&id).unwrap(),
        Some(b"%PDF-1.7 second".to_vec())
    );
    changed.original = None;
    store.put_documents(vec![changed.clone()], true).unwrap();
    assert_eq!(store.original(&id).unwrap(), None);

    changed.original = Some(b"%PDF third".to_vec());
    store.put_documents(vec![changed], true).unwrap();
    store.delete_document(&id).unwrap();
    assert_eq!(store.original(&id).unwrap(), None);

    let mut again = document(&name, "again.pdf", &["delta"], &[3], json!({}));
    again.original = Some(b"%PDF fourth".to_vec());
    let again_id = again.document.id.clone();
    store.put_documents(vec![again.clone()], false).unwrap();
    store.delete_library(&name).unwrap();
    store.create_library(&name, &space()).unwrap();
    assert_eq!(store.original(&again_id).unwrap(), None);
    // A document of the same id written again without bytes has none.
    again.original = None;
    store.put_documents(vec![again], false).unwrap();
    assert_eq!(store.original(&again_id).unwrap(), None);
}

/// Declared entities are kept per library; a document's mentions can be
/// replaced on their own (checked against its chunks, all or nothing);
/// entities are listed by key prefix; the entity filter keeps the chunks
/// that mention the entity, for both retrievers, and is refused where
/// documents are selected.
pub fn entities_are_declared_relinked_and_filtered(store: &dyn Store) {
    let name = lib("declared");
    store.create_library(&name, &space()).unwrap();
    assert!(store.declared_entities(&name).unwrap().is_empty());
    let list: Vec<Declared> = serde_json::from_value(json!([
        {"name": "Acme Holdings", "kind": "organization", "aliases": ["Acme"],
         "attributes": {"tier": 1}},
        {"name": "Jane Roe", "kind": "person",
         "relations": [{"type": "member of", "target": "Acme Holdings"}]}
    ]))
    .unwrap();
    store.set_declared_entities(&name, &list).unwrap();
    assert_eq!(store.declared_entities(&name).unwrap(), list);
    assert!(matches!(
        store.set_declared_entities(&lib("declared-nope"), &list),
        Err(StoreError::LibraryNotFound(_))
    ));
    assert!(matches!(
        store.declared_entities(&lib("declared-nope")),
        Err(StoreError::LibraryNotFound(_))
    ));

    let a = document(
        &name,
        "a.txt",
        &["acme pays the invoice", "the invoice is late"],
        &[0, 0],
        json!({}),
    );
    let b = document(&name, "b.txt", &["acorn invoice"], &[0], json!({}));
    store
        .put_documents(vec![a.clone(), b.clone()], false)
        .unwrap();
    assert!(store.document_mentions(&a.document.id).unwrap().is_empty());
    let relinked = vec![
        mention(&a, 1, "invoice", "acme holdings", "organization"),
        mention(&a, 0, "acme", "acme holdings", "organization"),
    ];
    store.replace_mentions(&a.document.id, &relinked).unwrap();
    store
        .replace_mentions(&b.document.id, &[mention(&b, 0, "acorn", "acorn", "name")])
        .unwrap();
    let mut expected = relinked.clone();
    expected.sort_by_key(|m| (m.chunk, m.start));
    assert_eq!(store.document_mentions(&a.document.id).unwrap(), expected);

    // A mention outside its document's chunks changes nothing.
    let outside = EntityMention {
        chunk: 2,
        ..relinked[0].clone()
    };
    assert!(matches!(
        store.replace_mentions(&a.document.id, &[outside]),
        Err(StoreError::InvalidArgument(_))
    ));
    assert_eq!(store.document_mentions(&a.document.id).unwrap(), expected);
    let missing = DocumentId::derive(&name, "missing.txt");
    assert!(matches!(
        store.replace_mentions(&missing, &[]),
        Err(StoreError::NotFound { .. })
    ));

    let keys = |prefix: &str| -> Vec<String> {
        store
            .entities(
                &name,
                &EntityQuery {
                    kind: None,
                    prefix: Some(prefix),
                },
                10,
            )
            .unwrap()
            .into_iter()
            .map(|e| e.entity)
            .collect()
    };
    assert_eq!(keys("ac"), vec!["acme holdings", "acorn"]);
    assert_eq!(keys("acm"), vec!["acme holdings"]);
    assert!(keys("b").is_empty());

    // The filter keeps the chunks that mention the entity: of the three
    // chunks with "invoice", the two of a.txt.
    let f = Filter {
        conditions: vec![Condition::Entity("acme holdings".into())],
    };
    let lexical = store
        .lexical(&name, "invoice", &f, 10, Bm25::default())
        .unwrap();
    let dense = store.dense(&name, &axis(0, 0.0), &f, 10).unwrap();
    for hits in [&lexical, &dense] {
        let mut chunks: Vec<String> = hits.iter().map(|h| h.chunk.to_string()).collect();
        chunks.sort();
        let mut wanted: Vec<String> = a.chunks.iter().map(|c| c.id.to_string()).collect();
        wanted.sort();
        assert_eq!(chunks, wanted);
    }
    let acorn = Filter {
        conditions: vec![Condition::Entity("acorn".into())],
    };
    let hits = store
        .lexical(&name, "invoice", &acorn, 10, Bm25::default())
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].chunk, b.chunks[0].id);
    assert!(matches!(
        store.find_documents(&name, &f, 10),
        Err(StoreError::InvalidArgument(_))
    ));

    // Replacing the document drops the relinked mentions with it.
    let a2 = document(&name, "a.txt", &["acme again"], &[0], json!({}));
    store.put_documents(vec![a2], false).unwrap();
    assert_eq!(keys("ac"), vec!["acorn"]);
    // Declared entities go with their library.
    store.delete_library(&name).unwrap();
    store.create_library(&name, &space()).unwrap();
    assert!(store.declared_entities(&name).unwrap().is_empty());
}

/// Entity mentions are written with their document, counted, found and
/// related through shared chunks, replaced with it, and removed with it or
/// its library; a mention outside its chunk refuses the whole write.
pub fn entity_mentions_live_and_die_with_their_documents(store: &dyn Store) {
    let name = lib("graph");
    store.create_library(&name, &space()).unwrap();
    let mut a = document(
        &name,
        "a.txt",
        &["Acme signed with Globex", "Acme paid Jane Roe"],
        &[0, 1],
        json!({}),
    );
    a.mentions = vec![
        mention(&a, 0, "Acme", "acme", "organization"),
        mention(&a, 0, "Globex", "globex", "organization"),
        mention(&a, 1, "Acme", "acme", "organization"),
        mention(&a, 1, "Jane Roe", "jane roe", "person"),
    ];
    let mut b = document(&name, "b.txt", &["Globex met Acme"], &[2], json!({}));
    b.mentions = vec![
        mention(&b, 0, "Globex", "globex", "organization"),
        mention(&b, 0, "Acme", "acme", "organization"),
    ];
    let other = lib("graph-other");
    store.create_library(&other, &space()).unwrap();
    let mut c = document(&other, "c.txt", &["Acme elsewhere"], &[0], json!({}));
    c.mentions = vec![mention(&c, 0, "Acme", "acme", "organization")];
    store
        .put_documents(vec![a.clone(), b.clone(), c], false)
        .unwrap();

    let counts = store.entities(&name, &EntityQuery::default(), 10).unwrap();
    let said: Vec<(&str, u64, u64)> = counts
        .iter()
        .map(|e| (e.entity.as_str(), e.mentions, e.documents))
        .collect();
    assert_eq!(
        said,
        vec![("acme", 3, 2), ("globex", 2, 2), ("jane roe", 1, 1)]
    );
    let people = store
        .entities(
            &name,
            &EntityQuery {
                kind: Some("person"),
                prefix: None,
            },
            10,
        )
        .unwrap();
    assert_eq!(people.len(), 1);
    assert_eq!(
        store
            .entities(&name, &EntityQuery::default(), 1)
            .unwrap()
            .len(),
        1
    );

    let mut hits = store.mentions_of(&name, "acme", 10).unwrap();
    hits.sort_by(|x, y| (&x.document_id, x.chunk).cmp(&(&y.document_id, y.chunk)));
    let mut expected = vec![
        (a.document.id.clone(), 0, 0, 4),
        (a.document.id.clone(), 1, 0, 4),
        (b.document.id.clone(), 0, 11, 15),
    ];
    expected.sort();
    let got: Vec<(DocumentId, u32, u32, u32)> = hits
        .iter()
        .map(|h| (h.document_id.clone(), h.chunk, h.start, h.end))
        .collect();
    assert_eq!(got, expected, "only this library's mentions");

    let related = store.related(&name, "acme", 10).unwrap();
    let said: Vec<(&str, u64, u64)> = related
        .iter()
        .map(|r| (r.entity.as_str(), r.chunks, r.entity_chunks))
        .collect();
    assert_eq!(said, vec![("globex", 2, 2), ("jane roe", 1, 1)]);
    assert_eq!(store.document_mentions(&a.document.id).unwrap(), a.mentions);

    // Replaced: the new version's mentions only.
    let mut a2 = document(&name, "a.txt", &["Globex alone"], &[0], json!({}));
    a2.mentions = vec![mention(&a2, 0, "Globex", "globex", "organization")];
    assert_eq!(
        store.put_documents(vec![a2], false).unwrap(),
        vec![PutOutcome::Replaced]
    );
    let said: Vec<(String, u64)> = store
        .entities(&name, &EntityQuery::default(), 10)
        .unwrap()
        .into_iter()
        .map(|e| (e.entity, e.mentions))
        .collect();
    assert_eq!(said, vec![("globex".into(), 2), ("acme".into(), 1)]);

    // A mention outside its chunk refuses the write; nothing changes.
    let mut bad = document(&name, "bad.txt", &["short"], &[0], json!({}));
    bad.mentions = vec![EntityMention {
        entity: "x".into(),
        kind: "other".into(),
        chunk: 0,
        start: 2,
        end: 99,
    }];
    assert!(store.put_documents(vec![bad], false).is_err());
    assert_eq!(store.library(&name).unwrap().document_count, 2);

    // Deleted with the document, then with the library.
    store.delete_document(&b.document.id).unwrap();
    assert!(store.mentions_of(&name, "acme", 10).unwrap().is_empty());
    assert!(store.document_mentions(&b.document.id).unwrap().is_empty());
    store.delete_library(&name).unwrap();
    store.create_library(&name, &space()).unwrap();
    assert!(
        store
            .entities(&name, &EntityQuery::default(), 10)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .entities(&other, &EntityQuery::default(), 10)
            .unwrap()
            .len(),
        1
    );
}

/// Access keys: kept by name and hash, unique in both, found by hash only,
/// touched and deleted by name; their writes leave the documents' read
/// caches valid.
pub fn keys_are_kept_by_hash_and_unique(store: &dyn Store) {
    use crate::KeyRecord;
    let key = |name: &str, hash: char| KeyRecord {
        name: name.into(),
        hash: hash.to_string().repeat(64),
        scopes: vec!["search".into(), "ingest".into()],
        libraries: Some(vec!["wiki".into()]),
        expires_at: Some("2031-01-01T00:00:00Z".into()),
        rate_per_minute: Some(60),
        created_at: "2026-11-25T10:00:00Z".into(),
        last_used_at: None,
    };
    assert_eq!(store.keys().unwrap(), vec![]);
    let generation = store.generation().unwrap();
    store.put_key(&key("alice", 'a')).unwrap();
    store
        .put_key(&KeyRecord {
            libraries: None,
            expires_at: None,
            rate_per_minute: None,
            ..key("bot", 'b')
        })
        .unwrap();
    assert_eq!(
        store.generation().unwrap(),
        generation,
        "keys are not documents"
    );
    for duplicate in [key("alice", 'c'), key("carol", 'a')] {
        let error = store.put_key(&duplicate).unwrap_err();
        assert_eq!(
            error.code(),
            folio_core::ErrorCode::InvalidArgument,
            "{duplicate:?}"
        );
    }
    let names: Vec<String> = store.keys().unwrap().into_iter().map(|k| k.name).collect();
    assert_eq!(names, ["alice", "bot"]);
    assert_eq!(
        store.key_by_hash(&"a".repeat(64)).unwrap(),
        Some(key("alice", 'a'))
    );
    assert_eq!(store.key_by_hash(&"c".repeat(64)).unwrap(), None);
    assert_eq!(
        store.key_by_hash("alice").unwrap(),
        None,
        "never found by name"
    );
    store
        .touch_key(&"a".repeat(64), "2026-11-25T11:00:00Z")
        .unwrap();
    assert_eq!(
        store
            .key_by_hash(&"a".repeat(64))
            .unwrap()
            .unwrap()
            .last_used_at
            .as_deref(),
        Some("2026-11-25T11:00:00Z")
    );
    assert!(store.delete_key("alice").unwrap());
    assert!(!store.delete_key("alice").unwrap());
    assert_eq!(store.key_by_hash(&"a".repeat(64)).unwrap(), None);
    let bot = store.key_by_hash(&"b".repeat(64)).unwrap().unwrap();
    assert_eq!(
        (bot.libraries, bot.expires_at, bot.rate_per_minute),
        (None, None, None)
    );
}

/// A backend that reports a generation moves it with every write (so a
/// cached read is never served after one) and keeps it while only reading.
pub fn generation_moves_with_every_write(store: &dyn Store) {
    // Both backends keep a generation (response caches rely on it); a
    // backend answering None would pass nothing below.
    let start = store
        .generation()
        .unwrap()
        .expect("the backend reports a write generation");
    let name = lib("generation");
    let mut seen = vec![start];
    let mut moved = |store: &dyn Store, what: &str| {
        let now = store.generation().unwrap().unwrap();
        assert!(!seen.contains(&now), "{what} left the generation at {now}");
        seen.push(now);
    };
    store.create_library(&name, &space()).unwrap();
    moved(store, "creating a library");
    let doc = document(&name, "g.txt", &["alpha"], &[0], json!({}));
    let id = doc.document.id.clone();
    store.put_documents(vec![doc], false).unwrap();
    moved(store, "a put");
    let before = store.generation().unwrap();
    store
        .lexical(&name, "alpha", &Filter::default(), 10, Bm25::default())
        .unwrap();
    store.document(&id).unwrap();
    assert_eq!(
        store.generation().unwrap(),
        before,
        "reads moved the generation"
    );
    let mut metadata = Map::new();
    metadata.insert("k".into(), json!("v"));
    store.update_metadata(&id, metadata).unwrap();
    moved(store, "a metadata update");
    store.delete_document(&id).unwrap();
    moved(store, "a delete");
}

/// Facets, neighbours, lookups and metadata updates over record-like
/// documents; expected values are computed here from the same rows.
pub fn records_group_order_and_update(store: &dyn Store) {
    let name = lib("speeches");
    store.create_library(&name, &space()).unwrap();
    assert_eq!(store.record_schema(&name).unwrap(), None);
    let schema = folio_core::RecordSchema::from_value(json!({
        "text": "body", "fields": {"body": {"type": "text"}, "date": {"type": "date"}}
    }))
    .unwrap();
    store.set_record_schema(&name, Some(&schema)).unwrap();
    assert_eq!(store.record_schema(&name).unwrap(), Some(schema));
    assert!(matches!(
        store.set_record_schema(&lib("missing"), None),
        Err(StoreError::LibraryNotFound(_))
    ));
    let rows = [
        (
            "s1",
            "Ann",
            "Senate",
            "2024-01-03",
            100,
            json!(["tax", "water"]),
        ),
        ("s2", "Ann", "Senate", "2024-01-01", 50, json!(["water"])),
        ("s3", "Bob", "House", "2024-01-02", 70, json!(["tax"])),
        ("s4", "Bob", "Senate", "2024-01-02", 30, json!([])),
        (
            "s5",
            "Cy",
            "Senate",
            "2024-01-02",
            20,
            json!(["water", "health"]),
        ),
    ];
    let docs = rows
        .iter()
        .map(|(source, speaker, chamber, date, words, tags)| {
            document(
                &name,
                source,
                &["a speech"],
                &[0],
                json!({"speaker": speaker, "chamber": chamber, "date": date, "words": words, "tags": tags}),
            )
        })
        .collect();
    store.put_documents(docs, false).unwrap();

    let facets = store
        .facets(
            &name,
            &crate::FacetRequest {
                group_by: vec!["speaker".into()],
                stats: vec!["words".into(), "date".into()],
                top_values: Some(("tags".into(), 1)),
                filter: filter(json!({"chamber": "Senate"})),
                min_count: 1,
                limit: 10,
            },
        )
        .unwrap();
    assert_eq!(facets.documents, 4);
    /// Speaker, count, word sum, first and last date, top tags.
    type Row = (String, u64, f64, String, String, Vec<(String, u64)>);
    let summary: Vec<Row> = facets
        .groups
        .iter()
        .map(|g| {
            let words = &g.stats["words"];
            let date = &g.stats["date"];
            (
                g.key[0].as_str().unwrap().to_string(),
                g.count,
                words.sum.unwrap(),
                date.min.as_str().unwrap().to_string(),
                date.max.as_str().unwrap().to_string(),
                g.top_values.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "Ann".into(),
                2,
                150.0,
                "2024-01-01".into(),
                "2024-01-03".into(),
                vec![("water".into(), 2)]
            ),
            (
                "Bob".into(),
                1,
                30.0,
                "2024-01-02".into(),
                "2024-01-02".into(),
                vec![]
            ),
            (
                "Cy".into(),
                1,
                20.0,
                "2024-01-02".into(),
                "2024-01-02".into(),
                vec![("health".into(), 1)]
            ),
        ]
    );
    // Grouping by a list field: one group per tag.
    let by_tag = store
        .facets(
            &name,
            &crate::FacetRequest {
                group_by: vec!["tags".into()],
                limit: 10,
                min_count: 2,
                ..Default::default()
            },
        )
        .unwrap();
    let tags: Vec<(serde_json::Value, u64)> = by_tag
        .groups
        .iter()
        .map(|g| (g.key[0].clone(), g.count))
        .collect();
    assert_eq!(tags, vec![(json!("water"), 3), (json!("tax"), 2)]);
    assert_eq!(by_tag.total_groups, 2, "health has one document");
    assert!(matches!(
        store.facets(
            &name,
            &crate::FacetRequest {
                filter: filter(json!({"section_prefix": "x"})),
                limit: 1,
                ..Default::default()
            }
        ),
        Err(StoreError::InvalidArgument(_))
    ));

    // Neighbours by date within the chamber; ties broken by document id.
    let id = |s: &str| DocumentId::derive(&name, s);
    let order = folio_core::NeighbourOrder {
        order_by: "date".into(),
        group_by: vec!["chamber".into()],
        strict: false,
    };
    let mut senate: Vec<(&str, DocumentId)> = rows
        .iter()
        .filter(|r| r.2 == "Senate")
        .map(|r| (r.3, id(r.0)))
        .collect();
    senate.sort();
    for (i, (_, this)) in senate.iter().enumerate() {
        let (before, after) = store.neighbours(this, &order).unwrap();
        let expect_before = i.checked_sub(1).map(|j| senate[j].1.clone());
        let expect_after = senate.get(i + 1).map(|n| n.1.clone());
        assert_eq!(before.map(|d| d.id), expect_before, "before {this}");
        assert_eq!(after.map(|d| d.id), expect_after, "after {this}");
    }
    // Strict neighbours: the nearest strictly earlier and later dates (the
    // greatest id among records of that date before, the smallest after).
    let strict = folio_core::NeighbourOrder {
        strict: true,
        ..order.clone()
    };
    for (date, this) in &senate {
        let (before, after) = store.neighbours(this, &strict).unwrap();
        let expect_before = senate
            .iter()
            .rev()
            .find(|(d, _)| d < date)
            .map(|n| n.1.clone());
        let expect_after = senate.iter().find(|(d, _)| d > date).map(|n| n.1.clone());
        assert_eq!(
            before.map(|d| d.id),
            expect_before,
            "strictly before {this}"
        );
        assert_eq!(after.map(|d| d.id), expect_after, "strictly after {this}");
    }
    let (before, after) = store.neighbours(&id("s3"), &order).unwrap();
    assert_eq!((before, after), (None, None), "alone in its chamber");
    assert!(matches!(
        store.neighbours(&id("nope"), &order),
        Err(StoreError::NotFound { .. })
    ));

    let found = store
        .find_documents(&name, &filter(json!({"speaker": {"ieq": "BOB"}})), 10)
        .unwrap();
    let found: Vec<&str> = found.iter().map(|d| d.source.as_str()).collect();
    assert_eq!(found, vec!["s3", "s4"]);

    let mut metadata = store.document(&id("s1")).unwrap().metadata;
    metadata.insert("doi".into(), json!("10.1/x"));
    store.update_metadata(&id("s1"), metadata.clone()).unwrap();
    let after = store.document(&id("s1")).unwrap();
    assert_eq!(after.metadata, metadata);
    assert_eq!(after.chunk_count, 1);
    assert!(matches!(
        store.update_metadata(&id("nope"), metadata),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn libraries_are_pinned_to_their_space(store: &dyn Store) {
    let name = lib("papers");
    assert!(matches!(
        store.library(&name),
        Err(StoreError::LibraryNotFound(_))
    ));
    let info = store.create_library(&name, &space()).unwrap();
    assert_eq!(info.space, space());
    assert_eq!(store.create_library(&name, &space()).unwrap().name, name);
    let mut other = space();
    other.model = "test/other".into();
    assert!(matches!(
        store.create_library(&name, &other),
        Err(StoreError::EmbeddingMismatch { .. })
    ));
    let mut doc = document(&name, "a.txt", &["alpha"], &[0], json!({}));
    doc.space = other;
    assert!(matches!(
        store.put_documents(vec![doc], false),
        Err(StoreError::EmbeddingMismatch { .. })
    ));
    assert_eq!(store.libraries().unwrap().len(), 1);
}

pub fn writes_dedup_and_replace(store: &dyn Store) {
    let name = lib("dedup");
    store.create_library(&name, &space()).unwrap();
    let first = document(
        &name,
        "a.txt",
        &["alpha beta", "gamma delta"],
        &[0, 1],
        json!({}),
    );
    let id = first.document.id.clone();
    assert_eq!(
        store.put_documents(vec![first.clone()], false).unwrap(),
        vec![PutOutcome::Indexed]
    );
    assert_eq!(
        store.put_documents(vec![first.clone()], false).unwrap(),
        vec![PutOutcome::Skipped]
    );
    assert_eq!(
        store.put_documents(vec![first], true).unwrap(),
        vec![PutOutcome::Replaced]
    );
    let second = document(&name, "a.txt", &["epsilon"], &[2], json!({}));
    assert_eq!(
        store.put_documents(vec![second], false).unwrap(),
        vec![PutOutcome::Replaced]
    );
    let info = store.library(&name).unwrap();
    assert_eq!((info.document_count, info.chunk_count), (1, 1));
    assert_eq!(store.chunks(&id, 0..10).unwrap().len(), 1);
    // The old version's words and vectors are gone from both retrievers.
    assert!(
        store
            .lexical(&name, "alpha", &Filter::default(), 10, Bm25::default())
            .unwrap()
            .is_empty()
    );
    let dense = store
        .dense(&name, &axis(0, 0.0), &Filter::default(), 10)
        .unwrap();
    assert_eq!(dense.len(), 1);
    assert_eq!(dense[0].chunk, ChunkId::new(&id, 0));
    assert_eq!(
        store.content_hash(&id).unwrap(),
        Some(folio_core::content_hash(b"epsilon"))
    );
}

pub fn invalid_writes_change_nothing(store: &dyn Store) {
    let name = lib("invalid");
    store.create_library(&name, &space()).unwrap();
    let good = document(&name, "good.txt", &["fine words"], &[0], json!({}));
    let mut bad = document(&name, "bad.txt", &["broken"], &[1], json!({}));
    bad.vectors[0] = vec![1.0, 0.0];
    let result = store.put_documents(vec![good, bad], false);
    assert!(result.is_err(), "a batch with a bad document must fail");
    assert_eq!(
        store.library(&name).unwrap().document_count,
        0,
        "nothing of the batch may land"
    );
    let missing = document(&lib("nowhere"), "x.txt", &["x"], &[0], json!({}));
    assert!(matches!(
        store.put_documents(vec![missing], false),
        Err(StoreError::LibraryNotFound(_))
    ));
}

pub fn lexical_search_stems_and_ranks(store: &dyn Store) {
    let name = lib("lexical");
    store.create_library(&name, &space()).unwrap();
    store
        .put_documents(
            vec![
                document(
                    &name,
                    "run.txt",
                    &["The runner was running fast and runs daily"],
                    &[0],
                    json!({}),
                ),
                document(
                    &name,
                    "walk.txt",
                    &["A walker walks slowly, and the runner watched"],
                    &[1],
                    json!({}),
                ),
                document(
                    &name,
                    "other.txt",
                    &["Completely unrelated text about cooking"],
                    &[2],
                    json!({}),
                ),
            ],
            false,
        )
        .unwrap();
    let hits = store
        .lexical(&name, "runs", &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(
        sources(store, &hits)[0],
        "run.txt",
        "stemming: runs ~ running ~ runner? {hits:?}"
    );
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(!sources(store, &hits).contains(&"other.txt".to_string()));
    assert!(
        store
            .lexical(&name, "the and a", &Filter::default(), 10, Bm25::default())
            .unwrap()
            .is_empty(),
        "stop words only"
    );
    assert!(matches!(
        store.lexical(&lib("nope"), "x", &Filter::default(), 10, Bm25::default()),
        Err(StoreError::LibraryNotFound(_))
    ));
}

/// Writes one document of one chunk per (source, text), each chunk with
/// its own axis vector.
fn put_texts(store: &dyn Store, name: &LibraryName, texts: &[(&str, &str)]) {
    let documents = texts
        .iter()
        .enumerate()
        .map(|(i, (source, text))| document(name, source, &[text], &[i], json!({})))
        .collect();
    store.put_documents(documents, false).unwrap();
}

/// A German compound is its two words as well: "Datei" finds the text of
/// a "Dateisystem", and "Systemdatei" the texts of a "Datei" and of a
/// "System", on every backend alike.
pub fn a_german_compound_and_its_parts_find_each_other(store: &dyn Store) {
    let name = lib("compounds");
    store.create_library(&name, &space()).unwrap();
    let texts = [
        (
            "pruefen.txt",
            "Das Werkzeug prüft und repariert ein beschädigtes Dateisystem auf der \
             Festplatte, bevor es wieder eingehängt wird.",
        ),
        (
            "liste.txt",
            "Die Liste zeigt jede Datei im Verzeichnis mit ihrer Größe und mit dem \
             Datum ihrer letzten Änderung an.",
        ),
        (
            "dienst.txt",
            "Der Dienst startet das Netzwerk beim Hochfahren des Rechners und meldet \
             jeden Fehler an das Protokoll.",
        ),
    ];
    put_texts(store, &name, &texts);
    let found = |query: &str| {
        let hits = store
            .lexical(&name, query, &Filter::default(), 10, Bm25::default())
            .unwrap();
        let mut found = sources(store, &hits);
        found.sort();
        found
    };
    assert_eq!(found("Datei"), ["liste.txt", "pruefen.txt"]);
    assert_eq!(found("Systemdatei"), ["liste.txt", "pruefen.txt"]);
    assert_eq!(found("Netzwerkdienst"), ["dienst.txt"]);
    // The compound itself ranks the text holding it first.
    let hits = store
        .lexical(
            &name,
            "Dateisystem",
            &Filter::default(),
            10,
            Bm25::default(),
        )
        .unwrap();
    assert_eq!(sources(store, &hits)[0], "pruefen.txt", "{hits:?}");
}

/// The texts of `a_chunk_that_does_not_tell_its_language_is_read_in_its_documents`:
/// a German document (its source says so) whose second chunk is a note
/// too bare to tell its language (a row of a list); a German document that
/// is such a note alone, so its whole text does not tell either; and the
/// first note alone, in a document that names no language.
pub fn short_notes(library: &LibraryName) -> Vec<NewDocument> {
    // Each undecided with its context (the source's name) before it, as
    // the index reads it.
    let note = "Heizung: Wärmepumpen, Heizkörper";
    vec![
        document(
            library,
            "haus.md",
            &[
                "Das Haus wurde im Jahr 1910 gebaut und hat dicke Mauern aus Ziegeln, die \
                 im Winter die Wärme lange halten und im Sommer kühl bleiben.",
                note,
            ],
            &[0, 1],
            json!({"language": "de"}),
        ),
        document(
            library,
            "zettel.md",
            &["Keller: Wärmepumpen, Heizkörper"],
            &[1],
            json!({"language": "de"}),
        ),
        document(library, "notiz.md", &[note], &[2], json!({})),
    ]
}

/// What `short_notes` answers: a word of the notes, or a part of their
/// compound, finds each note of a German document (analysed in German:
/// "Wärmepumpe" stems as "Wärmepumpen" does, "Pumpe" is a part of it),
/// among chunks and among whole documents alike, never the note in a
/// document that names no language (analysed in English, the language of
/// a text that tells none).
pub fn short_notes_are_read_in_their_documents_language(store: &dyn Store, library: &LibraryName) {
    let note = ChunkId::new(&DocumentId::derive(library, "haus.md"), 1);
    let note_alone = ChunkId::new(&DocumentId::derive(library, "zettel.md"), 0);
    for query in ["Wärmepumpe", "Pumpe"] {
        let hits = store
            .lexical(library, query, &Filter::default(), 10, Bm25::default())
            .unwrap();
        let mut first: Vec<&ChunkId> = hits.iter().take(2).map(|h| &h.chunk).collect();
        first.sort();
        let mut notes = vec![&note, &note_alone];
        notes.sort();
        assert_eq!(first, notes, "{query}: {hits:?}");
        assert!(
            !sources(store, &hits).contains(&"notiz.md".to_string()),
            "{query}: {hits:?}"
        );
        let documents = store
            .lexical_documents(library, query, &Filter::default(), 10, Bm25::default())
            .unwrap();
        let mut found = sources(store, &documents);
        found.sort();
        assert_eq!(found, ["haus.md", "zettel.md"], "{query}: {documents:?}");
    }
    // Each finds itself as written.
    let hits = store
        .lexical(
            library,
            "Wärmepumpen",
            &Filter::default(),
            10,
            Bm25::default(),
        )
        .unwrap();
    let mut found = sources(store, &hits);
    found.sort();
    found.dedup();
    assert_eq!(found, ["haus.md", "notiz.md", "zettel.md"], "{hits:?}");
}

/// A chunk whose text does not tell its language (a heading, a short
/// note, a row of a list), or a document's whole text that does not, is
/// analysed in its document's language, on every backend alike.
pub fn a_chunk_that_does_not_tell_its_language_is_read_in_its_documents(store: &dyn Store) {
    let name = lib("notes");
    store.create_library(&name, &space()).unwrap();
    store.put_documents(short_notes(&name), false).unwrap();
    short_notes_are_read_in_their_documents_language(store, &name);
}

/// In a library of two languages a query is read in both, but a word
/// weighs as one: a French question's stop word is no term in English
/// text, and "fichier" in a stray English passage is as common as the
/// "fichiers" of the French text, not a rare and heavy term.
pub fn a_word_weighs_the_same_in_every_language(store: &dyn Store) {
    let name = lib("languages");
    store.create_library(&name, &space()).unwrap();
    let texts = [
        (
            "lire.txt",
            "Pour lire les fichiers de la configuration, le programme ouvre chacun des \
             fichiers dans le répertoire courant et il les lit un par un avec soin.",
        ),
        (
            "copier.txt",
            "La commande copie les fichiers vers un autre disque et elle conserve les \
             dates de chacun des fichiers dans la mesure du possible pour les sauvegardes.",
        ),
        (
            "effacer.txt",
            "La commande efface les fichiers temporaires qui sont dans le dossier et elle \
             affiche le nombre des fichiers effacés à la fin de son travail.",
        ),
        (
            "english.txt",
            "The program prints au revoir and writes its fichier log to the disk when it \
             is done with the work, and it is then ready for the next run of the tool.",
        ),
    ];
    put_texts(store, &name, &texts);
    let hits = store
        .lexical(
            &name,
            "Lire le fichier au démarrage",
            &Filter::default(),
            10,
            Bm25::default(),
        )
        .unwrap();
    let found = sources(store, &hits);
    assert_eq!(found[0], "lire.txt", "{hits:?}");
    let english = found.iter().position(|s| s == "english.txt");
    let copier = found.iter().position(|s| s == "copier.txt");
    assert!(
        english.is_some() && copier.is_some(),
        "every reading of fichier finds its text: {found:?}"
    );
    // The English passage holds the word once in fewer terms than the
    // French texts hold it twice: it may rank near them, never far above.
    let score = |source: &str| hits[found.iter().position(|s| s == source).unwrap()].score;
    assert!(
        score("english.txt") < 1.5 * score("copier.txt"),
        "a reading in a language of few texts weighs as much as the word: {hits:?}"
    );
    let stop = store
        .lexical(&name, "au le la", &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert!(stop.is_empty(), "French stop words find nothing: {stop:?}");
}

/// A section prefix matches each heading from its start to a word
/// boundary, case-insensitively: seed 000's own example, "Part I", finds
/// "Part I: Foundations", and "Part I: Foundations > Chapter 3" finds
/// "Chapter 3: Entities and Value Objects" under it; "Part I" never finds
/// "Part II", nor "Chapter 3" "Chapter 30".
pub fn section_prefixes_match_headings_at_word_boundaries(store: &dyn Store) {
    let name = lib("sections");
    store.create_library(&name, &space()).unwrap();
    let paths: [(&str, &[&str]); 5] = [
        (
            "a.md",
            &[
                "Part I: Foundations",
                "Chapter 3: Entities and Value Objects",
            ],
        ),
        ("b.md", &["Part I: Foundations", "Chapter 30"]),
        ("c.md", &["Part II", "Chapter 3"]),
        ("d.md", &["part i", "Intro"]),
        ("e.md", &["Part I_draft"]),
    ];
    let docs = paths
        .iter()
        .enumerate()
        .map(|(i, (source, path))| {
            let mut doc = document(
                &name,
                source,
                &["entities of the domain"],
                &[i % 3],
                json!({}),
            );
            doc.chunks[0].section_path = path.iter().map(|s| s.to_string()).collect();
            doc
        })
        .collect();
    store.put_documents(docs, false).unwrap();
    let found = |prefix: &str| -> Vec<String> {
        let f = filter(json!({"section_prefix": prefix}));
        let (lexical, dense) = sorted_sources(store, &name, "entities", &f, 10);
        assert_eq!(lexical, dense, "{prefix}");
        lexical
    };
    assert_eq!(found("Part I"), ["a.md", "b.md", "d.md"]);
    assert_eq!(found("PART I: foundations"), ["a.md", "b.md"]);
    assert_eq!(found("Part I: Foundations > Chapter 3"), ["a.md"]);
    assert_eq!(found("Part I > Chapter 3: Entities"), ["a.md"]);
    assert_eq!(found("Part II"), ["c.md"]);
    assert_eq!(found("Part"), ["a.md", "b.md", "c.md", "d.md", "e.md"]);
    assert!(found("Part I: Foundations > Chapter 3: Entities and Value Objects > More").is_empty());
    assert!(
        found("Chapter 3").is_empty(),
        "a prefix starts at the top heading"
    );
}

/// After deletes and replacements, BM25 scores as if the library had been
/// written once with what is live: document frequencies, entry counts and
/// lengths count live entries only, for chunks and whole documents alike.
/// The oracle is a second library holding only the live documents.
pub fn statistics_count_live_entries_only(store: &dyn Store) {
    let (edited, fresh) = (lib("edited"), lib("fresh"));
    let text = |i: usize, version: usize| -> Vec<String> {
        let words = ["apple", "cherry", "orchard", "harvest", "bread", "cider"];
        (0..2)
            .map(|c| {
                (0..3 + (i + c + version) % 4)
                    .map(|w| words[(i * 7 + c * 3 + w * (version + 1)) % words.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let doc = |name: &LibraryName, i: usize, version: usize| {
        let texts = text(i, version);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        document(name, &format!("d{i}.txt"), &refs, &[0, 1], json!({}))
    };
    for name in [&edited, &fresh] {
        store.create_library(name, &space()).unwrap();
    }
    store
        .put_documents((0..10).map(|i| doc(&edited, i, 0)).collect(), false)
        .unwrap();
    // Three deleted, three replaced with other words (one at a time, so
    // each write leaves entries behind).
    for i in [1, 4, 7] {
        store
            .delete_document(&DocumentId::derive(&edited, &format!("d{i}.txt")))
            .unwrap();
    }
    for i in [2, 5, 8] {
        store
            .put_documents(vec![doc(&edited, i, 1)], false)
            .unwrap();
    }
    let live: Vec<(usize, usize)> = (0..10)
        .filter(|i| ![1, 4, 7].contains(i))
        .map(|i| (i, usize::from([2, 5, 8].contains(&i))))
        .collect();
    store
        .put_documents(
            live.iter().map(|&(i, v)| doc(&fresh, i, v)).collect(),
            false,
        )
        .unwrap();
    for query in ["apple", "cherry orchard", "cider bread apple"] {
        let ranked = |name: &LibraryName, documents: bool| -> Vec<(String, f32)> {
            let hits = if documents {
                store.lexical_documents(name, query, &Filter::default(), 20, Bm25::default())
            } else {
                store.lexical(name, query, &Filter::default(), 20, Bm25::default())
            }
            .unwrap();
            let mut scored: Vec<(String, f32)> = sources(store, &hits)
                .into_iter()
                .zip(&hits)
                .map(|(source, h)| {
                    let index = h
                        .chunk
                        .to_string()
                        .rsplit(':')
                        .next()
                        .unwrap_or("")
                        .to_string();
                    (format!("{source}#{index}"), h.score)
                })
                .collect();
            scored.sort_by(|a, b| a.0.cmp(&b.0));
            scored
        };
        for documents in [false, true] {
            let (got, want) = (ranked(&edited, documents), ranked(&fresh, documents));
            assert_eq!(got.len(), want.len(), "{query}: {got:?} vs {want:?}");
            for (a, b) in got.iter().zip(&want) {
                assert_eq!(a.0, b.0, "{query}: {got:?} vs {want:?}");
                assert!(
                    (a.1 - b.1).abs() < 1e-5 * b.1.max(1.0),
                    "{query} (documents: {documents}): {got:?} vs {want:?}"
                );
            }
        }
    }
}

/// Document-level BM25 (`lexical_documents`): a document scores as its
/// title and text together, with document statistics, and is shown by its
/// best chunk; filters and deletes apply.
pub fn documents_rank_by_their_whole_text(store: &dyn Store) {
    let name = lib("whole");
    store.create_library(&name, &space()).unwrap();
    let docs = [
        ("one.txt", vec!["apple orchard", "cherry harvest"]),
        ("two.txt", vec!["apple apple pie"]),
        ("three.txt", vec!["cooking bread"]),
    ];
    store
        .put_documents(
            docs.iter()
                .enumerate()
                .map(|(i, (source, texts))| {
                    let axes: Vec<usize> = texts.iter().map(|_| i).collect();
                    document(&name, source, texts, &axes, json!({"n": i}))
                })
                .collect(),
            false,
        )
        .unwrap();
    // BM25 (k1 1.2, b 0.75) over "title\ntext" with document statistics,
    // computed here from the words: the reference formula.
    let words = |d: usize| -> Vec<String> {
        let (source, texts) = &docs[d];
        format!("{} {}", source.replace('.', " "), texts.join(" "))
            .split(' ')
            .map(str::to_string)
            .collect()
    };
    let reference = |d: usize, live: &[usize]| -> f32 {
        let avgdl = live.iter().map(|&e| words(e).len() as f32).sum::<f32>() / live.len() as f32;
        let n = live.len() as f32;
        ["apple", "cherry"]
            .iter()
            .map(|term| {
                let df = live
                    .iter()
                    .filter(|&&e| words(e).iter().any(|w| w == term))
                    .count() as f32;
                let tf = words(d).iter().filter(|w| w == term).count() as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * words(d).len() as f32 / avgdl))
            })
            .sum()
    };
    let search = |filter: &Filter| {
        store
            .lexical_documents(&name, "apple cherry", filter, 10, Bm25::default())
            .unwrap()
    };
    let hits = search(&Filter::default());
    assert_eq!(sources(store, &hits), ["one.txt", "two.txt"], "{hits:?}");
    for (hit, d) in hits.iter().zip([0, 1]) {
        let want = reference(d, &[0, 1, 2]);
        assert!(
            (hit.score - want).abs() < 1e-4,
            "{}: {} vs {want}",
            docs[d].0,
            hit.score
        );
    }
    // Shown by its best chunk: "cherry" is the rarer term.
    let one = DocumentId::derive(&name, "one.txt");
    assert_eq!(hits[0].chunk, ChunkId::new(&one, 1));

    let only_two = search(&filter(json!({"n": 1})));
    assert_eq!(sources(store, &only_two), ["two.txt"]);
    assert!((only_two[0].score - reference(1, &[0, 1, 2])).abs() < 1e-4);

    store.delete_document(&one).unwrap();
    let hits = search(&Filter::default());
    // (Scores after a delete may still count the deleted document's terms
    // in the embedded store until its segment merges.)
    assert_eq!(sources(store, &hits), ["two.txt"]);
}

pub fn dense_search_ranks_by_cosine(store: &dyn Store) {
    let name = lib("dense");
    store.create_library(&name, &space()).unwrap();
    store
        .put_documents(
            vec![
                document(&name, "x.txt", &["x"], &[0], json!({})),
                document(&name, "y.txt", &["y"], &[1], json!({})),
                document(&name, "z.txt", &["z"], &[2], json!({})),
            ],
            false,
        )
        .unwrap();
    let hits = store
        .dense(&name, &axis(1, 0.0), &Filter::default(), 2)
        .unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(sources(store, &hits)[0], "y.txt");
    assert!(
        (hits[0].score - axis(1, 0.1)[1]).abs() < 1e-4,
        "cosine similarity expected, got {}",
        hits[0].score
    );
    assert!(matches!(
        store.dense(&name, &[1.0, 0.0], &Filter::default(), 2),
        Err(StoreError::EmbeddingMismatch { .. })
    ));
    // The ANN index alone finds the same nearest chunk.
    let graph = store.dense_graph(&name, &axis(1, 0.0), 2).unwrap();
    assert_eq!(sources(store, &graph)[0], "y.txt");
    assert!(store.size_bytes().unwrap() > 0);
}

pub fn filters_apply_before_ranking(store: &dyn Store) {
    let name = lib("filters");
    store.create_library(&name, &space()).unwrap();
    let docs = vec![
        document(
            &name,
            "/p/2019.txt",
            &["neural retrieval"],
            &[0],
            json!({"year": 2019, "tags": ["ml", "ir"], "author": "Ada", "date": "2019-03-01"}),
        ),
        document(
            &name,
            "/p/2021.txt",
            &["neural retrieval"],
            &[0],
            json!({"year": 2021, "tags": ["ml"], "author": "Bob", "date": "2021-07-15"}),
        ),
        document(
            &name,
            "/q/2023.txt",
            &["neural retrieval"],
            &[0],
            json!({"year": "2023", "tags": ["nlp"], "author": "Ada", "date": "2023-01-30"}),
        ),
    ];
    store.put_documents(docs, false).unwrap();
    let check = |f: serde_json::Value, expected: &[&str]| {
        let f = filter(f);
        let lexical = sources(
            store,
            &store
                .lexical(&name, "neural", &f, 1, Bm25::default())
                .unwrap(),
        );
        let dense = sources(store, &store.dense(&name, &axis(0, 0.0), &f, 1).unwrap());
        // k = 1: a post-filter of a short list would miss; a pre-filter cannot.
        for (retriever, top) in [("lexical", &lexical), ("dense", &dense)] {
            assert_eq!(top.len(), expected.len().min(1), "{retriever} {f:?}");
            assert!(
                top.iter().all(|s| expected.contains(&s.as_str())),
                "{retriever} {f:?}: {top:?}"
            );
        }
        let (all_lexical, all_dense) = sorted_sources(store, &name, "neural", &f, 10);
        assert_eq!(all_lexical, expected, "lexical {f:?}");
        assert_eq!(all_dense, expected, "dense {f:?}");
    };
    check(json!({"author": "Ada"}), &["/p/2019.txt", "/q/2023.txt"]);
    check(
        json!({"metadata.author": "Ada"}),
        &["/p/2019.txt", "/q/2023.txt"],
    );
    check(json!({"tags": "nlp"}), &["/q/2023.txt"]);
    check(
        json!({"tags": ["ir", "nlp"]}),
        &["/p/2019.txt", "/q/2023.txt"],
    );
    check(
        json!({"year": {"gte": 2020}}),
        &["/p/2021.txt", "/q/2023.txt"],
    );
    check(json!({"year": {"gt": 2019, "lt": 2023}}), &["/p/2021.txt"]);
    check(
        json!({"date": {"gte": "2021-01-01", "lte": "2021-12-31"}}),
        &["/p/2021.txt"],
    );
    check(
        json!({"path_prefix": "/p/"}),
        &["/p/2019.txt", "/p/2021.txt"],
    );
    check(
        json!({"section_prefix": "part i > chapter 1"}),
        &["/p/2019.txt", "/p/2021.txt", "/q/2023.txt"],
    );
    check(json!({"section_prefix": "Part II"}), &[]);
    check(json!({"section_prefix": "Par"}), &[]);
    check(
        json!({"section_prefix": "PART I"}),
        &["/p/2019.txt", "/p/2021.txt", "/q/2023.txt"],
    );
    check(json!({"format": "text", "author": "Bob"}), &["/p/2021.txt"]);
    check(json!({"missing_field": "x"}), &[]);
}

pub fn deletes_remove_from_every_index(store: &dyn Store) {
    let name = lib("deletes");
    store.create_library(&name, &space()).unwrap();
    let doc = document(&name, "gone.txt", &["ephemeral words"], &[0], json!({}));
    let id = doc.document.id.clone();
    store
        .put_documents(
            vec![
                doc,
                document(&name, "kept.txt", &["lasting words"], &[1], json!({})),
            ],
            false,
        )
        .unwrap();
    store.delete_document(&id).unwrap();
    assert!(matches!(
        store.document(&id),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.delete_document(&id),
        Err(StoreError::NotFound { .. })
    ));
    assert!(
        store
            .lexical(&name, "ephemeral", &Filter::default(), 10, Bm25::default())
            .unwrap()
            .is_empty()
    );
    let dense = store
        .dense(&name, &axis(0, 0.0), &Filter::default(), 10)
        .unwrap();
    assert_eq!(sources(store, &dense), vec!["kept.txt".to_string()]);
    let integrity = store.verify(&name).unwrap();
    assert_eq!(
        (
            integrity.documents,
            integrity.chunks,
            integrity.problems.len()
        ),
        (1, 1, 0),
        "{integrity:?}"
    );
    store.delete_library(&name).unwrap();
    assert!(matches!(
        store.verify(&name),
        Err(StoreError::LibraryNotFound(_))
    ));
    assert!(matches!(
        store.library(&name),
        Err(StoreError::LibraryNotFound(_))
    ));
    assert!(store.libraries().unwrap().is_empty());
}

pub fn chunks_read_back_in_order(store: &dyn Store) {
    let name = lib("chunks");
    store.create_library(&name, &space()).unwrap();
    let doc = document(
        &name,
        "long.txt",
        &["one", "two", "three", "four"],
        &[0, 1, 2, 0],
        json!({"k": "v"}),
    );
    let id = doc.document.id.clone();
    store.put_documents(vec![doc.clone()], false).unwrap();
    let stored = store.document(&id).unwrap();
    assert_eq!(stored, doc.document);
    assert_eq!(
        store.vectors(&id).unwrap(),
        doc.vectors,
        "vectors read back exactly"
    );
    assert!(matches!(
        store.vectors(&DocumentId::derive(&name, "nope")),
        Err(StoreError::NotFound { .. })
    ));
    let middle = store.chunks(&id, 1..3).unwrap();
    assert_eq!(middle, doc.chunks[1..3].to_vec());
    let ids = vec![
        ChunkId::new(&id, 3),
        ChunkId::new(&id, 0),
        ChunkId::new(&id, 99),
    ];
    let found = store.chunks_with_documents(&ids).unwrap();
    assert_eq!(
        found.iter().map(|c| c.chunk.index).collect::<Vec<_>>(),
        vec![3, 0]
    );
    assert_eq!(found[0].document.metadata["k"], json!("v"));
    let (page, total) = store.documents(&name, 0, 10).unwrap();
    assert_eq!((page.len(), total), (1, 1));
    let texts = store.chunk_texts(&name).unwrap();
    assert_eq!(texts.len(), 4);
    assert_eq!(texts[0].1, "long.txt\none");
    let stats = store.stats(&name).unwrap();
    assert_eq!(stats.info.chunk_count, 4);
    assert_eq!(stats.formats, vec![("text".to_string(), 1)]);
}
