//! The conformance suite and PostgreSQL-specific behaviour, against a real
//! server: `FOLIO_TEST_STORE_URL` (scripts/postgres.sh start prints one).
//! Each store gets a database of its own, dropped afterwards.

use std::sync::atomic::{AtomicUsize, Ordering};

use folio_store::conformance::{self, axis, document, space};
use serde_json::json;

use super::*;

/// The test server's URL; a missing server fails the test, never skips it.
fn server_url() -> String {
    std::env::var("FOLIO_TEST_STORE_URL").unwrap_or_else(|_| {
        panic!(
            "FOLIO_TEST_STORE_URL is not set: start a test server with `scripts/postgres.sh start` \
             and export the URL it prints (scripts/test.sh does both)"
        )
    })
}

/// A fresh, empty database on the test server, dropped with the guard.
pub struct TestDatabase {
    pub url: String,
    name: String,
}

impl TestDatabase {
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "folio_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let admin = Pool::new(&server_url()).unwrap();
        let mut conn = admin.get().unwrap();
        for sql in [
            format!("DROP DATABASE IF EXISTS {name}"),
            format!("CREATE DATABASE {name}"),
        ] {
            wait(conn.client().batch_execute(&sql)).unwrap();
        }
        let mut url = url::Url::parse(&server_url()).unwrap();
        url.set_path(&name);
        TestDatabase {
            url: url.to_string(),
            name,
        }
    }

    pub fn store(&self) -> PostgresStore {
        PostgresStore::connect(&self.url).unwrap()
    }

    /// Runs SQL on the database directly (to rewind it to an older schema).
    pub fn run(&self, sql: &str) {
        let pool = Pool::new(&self.url).unwrap();
        let mut conn = pool.get().unwrap();
        wait(conn.client().batch_execute(sql)).unwrap();
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Ok(admin) = Pool::new(&server_url())
            && let Ok(mut conn) = admin.get()
        {
            let _ = wait(conn.client().batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            )));
        }
    }
}

/// A store that drops its database when dropped.
struct Scoped {
    store: PostgresStore,
    _database: TestDatabase,
}

#[test]
fn conformance_suite() {
    conformance::run(&|| {
        let database = TestDatabase::new();
        let store = database.store();
        Box::new(ScopedStore(Scoped {
            store,
            _database: database,
        }))
    });
}

/// The suite wants a `Box<dyn Store>`; this one drops its database after.
struct ScopedStore(Scoped);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $ty),*) -> $ret { self.0.store.$name($($arg),*) })*
    };
}

impl Store for ScopedStore {
    delegate! {
        create_library(name: &LibraryName, space: &EmbeddingSpace) -> Result<LibraryInfo>;
        library(name: &LibraryName) -> Result<LibraryInfo>;
        libraries() -> Result<Vec<LibraryInfo>>;
        delete_library(name: &LibraryName) -> Result<()>;
        content_hash(id: &DocumentId) -> Result<Option<String>>;
        put_documents(documents: Vec<NewDocument>, force: bool) -> Result<Vec<PutOutcome>>;
        document(id: &DocumentId) -> Result<Document>;
        original(id: &DocumentId) -> Result<Option<Vec<u8>>>;
        documents(library: &LibraryName, offset: u64, limit: u64) -> Result<(Vec<DocumentSummary>, u64)>;
        delete_document(id: &DocumentId) -> Result<()>;
        chunks(id: &DocumentId, range: Range<u32>) -> Result<Vec<Chunk>>;
        chunks_with_documents(ids: &[ChunkId]) -> Result<Vec<ChunkWithDocument>>;
        vectors(id: &DocumentId) -> Result<Vec<Vec<f32>>>;
        query_language(library: &LibraryName, query: &str) -> Result<QueryLanguage>;
        lexical(library: &LibraryName, query: &str, filter: &Filter, k: usize, bm25: Bm25) -> Result<Vec<Hit>>;
        lexical_documents(library: &LibraryName, query: &str, filter: &Filter, k: usize, bm25: Bm25) -> Result<Vec<Hit>>;
        dense(library: &LibraryName, vector: &[f32], filter: &Filter, k: usize) -> Result<Vec<Hit>>;
        chunk_texts(library: &LibraryName) -> Result<Vec<(ChunkId, String)>>;
        replace_vectors(library: &LibraryName, space: &EmbeddingSpace, vectors: Vec<(ChunkId, Vec<f32>)>) -> Result<()>;
        stats(library: &LibraryName) -> Result<LibraryStats>;
        record_schema(library: &LibraryName) -> Result<Option<RecordSchema>>;
        set_record_schema(library: &LibraryName, schema: Option<&RecordSchema>) -> Result<()>;
        facets(library: &LibraryName, request: &FacetRequest) -> Result<Facets>;
        neighbours(id: &DocumentId, order: &NeighbourOrder) -> Result<(Option<DocumentSummary>, Option<DocumentSummary>)>;
        find_documents(library: &LibraryName, filter: &Filter, limit: usize) -> Result<Vec<DocumentSummary>>;
        update_metadata(id: &DocumentId, metadata: Map<String, Value>) -> Result<()>;
        flush() -> Result<()>;
        verify(library: &LibraryName) -> Result<Integrity>;
        generation() -> Result<Option<u64>>;
        dense_graph(library: &LibraryName, vector: &[f32], k: usize) -> Result<Vec<Hit>>;
        size_bytes() -> Result<u64>;
        put_key(key: &KeyRecord) -> Result<()>;
        keys() -> Result<Vec<KeyRecord>>;
        key_by_hash(hash: &str) -> Result<Option<KeyRecord>>;
        delete_key(name: &str) -> Result<bool>;
        touch_key(hash: &str, at: &str) -> Result<()>;
        entities(library: &LibraryName, query: &folio_store::EntityQuery<'_>, limit: usize) -> Result<Vec<folio_store::EntityCount>>;
        declared_entities(library: &LibraryName) -> Result<Vec<folio_store::Declared>>;
        set_declared_entities(library: &LibraryName, entities: &[folio_store::Declared]) -> Result<()>;
        replace_mentions(id: &DocumentId, mentions: &[folio_store::EntityMention]) -> Result<()>;
        claim(name: &str) -> Result<Option<Box<dyn folio_store::Claim>>>;
        mentions_of(library: &LibraryName, entity: &str, limit: usize) -> Result<Vec<folio_store::MentionHit>>;
        related(library: &LibraryName, entity: &str, limit: usize) -> Result<Vec<folio_store::Related>>;
        document_mentions(id: &DocumentId) -> Result<Vec<folio_store::EntityMention>>;
    }
}

fn lib() -> LibraryName {
    LibraryName::new("lib").unwrap()
}

/// An embedded store in a fresh temporary directory, to compare with.
fn embedded_store(name: &str) -> (std::path::PathBuf, folio_store_embedded::EmbeddedStore) {
    let dir = std::env::temp_dir().join(format!("folio-pg-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = folio_store_embedded::EmbeddedStore::open(
        &dir,
        folio_store_embedded::Access::ReadWrite {
            lock_wait: std::time::Duration::from_secs(1),
        },
    )
    .unwrap();
    (dir, store)
}

#[test]
fn bm25_scores_equal_the_embedded_store() {
    let database = TestDatabase::new();
    let postgres = database.store();
    let (dir, embedded) = embedded_store("bm25");
    let texts = [
        "Retrieval of scientific claims with neural rankers and BM25 baselines",
        "The runner was running fast and runs daily along the river",
        "Claims about vaccines are checked against the scientific literature, claim by claim",
        "Cooking rice: rinse, boil, and rest the rice before serving",
        "A very long chunk that repeats words words words words words words words words \
         words words words words words words words words words words words words words words \
         words words words words words words words words words words words words words words \
         words words words words about retrieval",
    ];
    for store in [&postgres as &dyn Store, &embedded] {
        store.create_library(&lib(), &space()).unwrap();
        let docs = texts
            .iter()
            .enumerate()
            .map(|(i, t)| document(&lib(), &format!("d{i}.txt"), &[t], &[i % 3], json!({})))
            .collect();
        store.put_documents(docs, false).unwrap();
    }
    for query in [
        "scientific claims",
        "retrieval words",
        "running rice",
        "claim",
    ] {
        for bm25 in [Bm25::default(), Bm25 { k1: 0.9, b: 0.4 }] {
            let a = postgres
                .lexical(&lib(), query, &Filter::default(), 10, bm25)
                .unwrap();
            let b = embedded
                .lexical(&lib(), query, &Filter::default(), 10, bm25)
                .unwrap();
            assert_eq!(a.len(), b.len(), "{query}: {a:?} vs {b:?}");
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.chunk, y.chunk, "{query}: {a:?} vs {b:?}");
                assert!((x.score - y.score).abs() < 1e-4, "{query}: {a:?} vs {b:?}");
            }
        }
    }
    drop(embedded);
    let _ = std::fs::remove_dir_all(&dir);
}

/// BM25 as Lucene and bm25s define it, computed here from the analysed
/// text alone: idf ln(1 + (N - df + 0.5) / (df + 0.5)), a repeated query
/// term counted as often as the query has it, the stored (quantised)
/// chunk length against the average of the stored lengths.
fn reference_bm25(chunks: &[(String, String)], query: &str, bm25: Bm25) -> Vec<(String, f32)> {
    use folio_lexical::{analyze, scored_length};
    let analysed: Vec<Vec<String>> = chunks.iter().map(|(_, text)| analyze(text)).collect();
    let n = analysed.len() as f64;
    let avgdl = analysed
        .iter()
        .map(|terms| f64::from(scored_length(terms.len())))
        .sum::<f64>()
        / n;
    let mut scores = Vec::new();
    for ((key, _), terms) in chunks.iter().zip(&analysed) {
        let dl = f64::from(scored_length(terms.len()));
        let mut score = 0.0;
        for q in analyze(query) {
            let df = analysed.iter().filter(|t| t.contains(&q)).count() as f64;
            let tf = terms.iter().filter(|t| **t == q).count() as f64;
            if tf > 0.0 {
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                let (k1, b) = (f64::from(bm25.k1), f64::from(bm25.b));
                score += idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avgdl));
            }
        }
        if score > 0.0 {
            scores.push((key.clone(), score as f32));
        }
    }
    scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scores
}

#[test]
fn bm25_equals_the_reference_formula_on_both_backends() {
    // A generated corpus with a skewed vocabulary: common words in most
    // chunks (the looked-up-for-candidates path), rare ones in a few.
    let words: Vec<String> = (0..60)
        .map(|i| format!("w{}x", (b'a' + (i % 26) as u8) as char).repeat(1 + i / 26))
        .collect();
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let database = TestDatabase::new();
    let postgres = database.store();
    let (dir, embedded) = embedded_store("bm25-reference");
    let mut docs = Vec::new();
    let mut chunks = Vec::new();
    for d in 0..60 {
        let texts: Vec<String> = (0..3)
            .map(|_| {
                let len = 5 + next() % 70;
                (0..len)
                    .map(|_| {
                        // Zipf-like: the square of a uniform index favours the first words.
                        let u = next() % 1000;
                        words[(u * u * words.len()) / 1_000_000].as_str()
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let source = format!("d{d}.txt");
        let doc = document(&lib(), &source, &refs, &[0, 1, 2], json!({"half": d % 2}));
        for chunk in &doc.chunks {
            chunks.push((
                chunk.id.to_string(),
                format!("{}{}", chunk.context, chunk.text),
            ));
        }
        docs.push(doc);
    }
    for store in [&postgres as &dyn Store, &embedded] {
        store.create_library(&lib(), &space()).unwrap();
        store.put_documents(docs.clone(), false).unwrap();
    }
    let long = format!(
        "{0} {1} {0} {2} {0} {1} {3} {4}",
        words[0], words[1], words[40], words[55], words[2]
    );
    let queries = [
        long.as_str(),
        "wax wax wax wbx",
        "wcx wdx wex wfx wgx whx wix wjx",
        "wqxwqx wax",
        "wzxwzx",
    ];
    let compare = |chunks: &[(String, String)]| {
        for query in queries {
            for bm25 in [Bm25::default(), Bm25 { k1: 0.9, b: 0.4 }] {
                let expected = reference_bm25(chunks, query, bm25);
                for k in [1, 5, 40] {
                    for store in [&postgres as &dyn Store, &embedded] {
                        let got = store
                            .lexical(&lib(), query, &Filter::default(), k, bm25)
                            .unwrap();
                        assert_eq!(got.len(), expected.len().min(k), "{query} k={k}");
                        for (hit, (key, score)) in got.iter().zip(&expected) {
                            assert!(
                                (hit.score - score).abs() < 1e-4 * score.max(1.0),
                                "{query} k={k}: {} {} vs reference {key} {score}",
                                hit.chunk,
                                hit.score
                            );
                        }
                        // Each chunk returned has the reference's score for it
                        // (chunks of equal score may come in another order).
                        for hit in &got {
                            let reference = expected
                                .iter()
                                .find(|(key, _)| *key == hit.chunk.to_string());
                            assert!(
                                reference
                                    .is_some_and(|(_, score)| (hit.score - score).abs()
                                        < 1e-4 * score.max(1.0)),
                                "{query} k={k}: {} {} vs reference {reference:?}",
                                hit.chunk,
                                hit.score
                            );
                        }
                    }
                }
            }
        }
    };
    compare(&chunks);
    assert!(
        crate::lexical::CANDIDATE_ANSWERS.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "no query took the candidate path"
    );
    // Issue 26 §4: after deletes and replacements both backends still score
    // as the reference does over the live chunks alone (the embedded store
    // counted deleted entries in df and total length until a merge).
    let mut live = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        if d % 3 == 0 {
            for store in [&postgres as &dyn Store, &embedded] {
                store.delete_document(&doc.document.id).unwrap();
            }
        } else if d % 5 == 1 {
            let texts = [
                format!("{} {} replaced", words[d % 7], words[0]),
                format!("{} {}", words[1], words[50]),
            ];
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let replacement = document(
                &lib(),
                &format!("d{d}.txt"),
                &refs,
                &[0, 1],
                json!({"half": d % 2}),
            );
            for store in [&postgres as &dyn Store, &embedded] {
                let outcome = store
                    .put_documents(vec![replacement.clone()], false)
                    .unwrap();
                assert_eq!(outcome, vec![folio_store::PutOutcome::Replaced]);
            }
            live.push(replacement);
        } else {
            live.push(doc.clone());
        }
    }
    let chunks: Vec<(String, String)> = live
        .iter()
        .flat_map(|doc| &doc.chunks)
        .map(|chunk| {
            (
                chunk.id.to_string(),
                format!("{}{}", chunk.context, chunk.text),
            )
        })
        .collect();
    compare(&chunks);
    // A filter keeps the same scores for the chunks it lets through.
    let filter = Filter::from_json(&json!({"half": 1})).unwrap();
    let a = postgres
        .lexical(&lib(), &long, &filter, 10, Bm25::default())
        .unwrap();
    let b = embedded
        .lexical(&lib(), &long, &filter, 10, Bm25::default())
        .unwrap();
    assert_eq!(a.len(), 10);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.chunk, y.chunk);
        assert!((x.score - y.score).abs() < 1e-4);
    }
    drop(embedded);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn large_libraries_use_the_hnsw_index_and_keep_filtered_recall() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    // Enough chunks for the index path; 2 % of them tagged "rare". The
    // vectors lie on a circle, each at its own angle (golden-ratio steps),
    // so each has its own similarity to the query and the graph is one
    // connected ring. Clusters along orthogonal axes were flaky: a walk
    // entering one whose every point is orthogonal to the query finds no
    // way out (all at one distance) and returns it.
    let total = (EXACT_MAX as usize) + 500;
    let angle_of = |i: usize| std::f32::consts::TAU * (i as f32 * 0.618_034).fract();
    let on_circle = |i: usize| {
        let angle = angle_of(i);
        vec![angle.cos(), angle.sin(), 0.0, 0.0]
    };
    let mut batch = Vec::new();
    for i in 0..total {
        let tag = if i % 50 == 0 { "rare" } else { "common" };
        let mut doc = document(
            &lib(),
            &format!("n{i}"),
            &["text"],
            &[i % 3],
            json!({"tag": tag}),
        );
        doc.vectors[0] = on_circle(i);
        batch.push(doc);
        if batch.len() == 2_000 {
            store
                .put_documents(std::mem::take(&mut batch), false)
                .unwrap();
        }
    }
    store.put_documents(batch, false).unwrap();
    assert_eq!(store.stats(&lib()).unwrap().index["dense_search"], "hnsw");
    assert!(
        store.pool.iterative_scans(),
        "pgvector 0.8 scans iteratively under a filter"
    );
    // A 2 % filter: its documents hold fewer than EXACT_MAX chunks, so one
    // statement counts and scans them exactly. The oracle: cosine over the
    // vectors the documents were given, the filter's best 10.
    let query = axis(0, 0.0);
    let cosine = |i: usize| -> f32 { on_circle(i).iter().zip(&query).map(|(a, b)| a * b).sum() };
    let tag_of = |hit: &Hit| {
        let (id, _) = ChunkId::parse(hit.chunk.as_str()).unwrap();
        store.document(&id).unwrap().metadata["tag"].clone()
    };
    let best = |tagged: &dyn Fn(usize) -> bool| {
        let mut scores: Vec<f32> = (0..total).filter(|i| tagged(*i)).map(cosine).collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        scores.truncate(10);
        scores
    };
    let rare = Filter::from_json(&json!({"tag": "rare"})).unwrap();
    let hits = store.dense(&lib(), &query, &rare, 10).unwrap();
    assert_eq!(hits.len(), 10, "a 2 % filter still fills k");
    for (hit, want) in hits.iter().zip(best(&|i| i % 50 == 0)) {
        assert!((hit.score - want).abs() < 1e-5, "{hits:?}");
        assert_eq!(tag_of(hit), json!("rare"));
    }
    // A 98 % filter holds more than EXACT_MAX chunks: the index is walked
    // under it.
    let common = Filter::from_json(&json!({"tag": "common"})).unwrap();
    let hits = store.dense(&lib(), &query, &common, 10).unwrap();
    assert_eq!(hits.len(), 10);
    for (hit, want) in hits.iter().zip(best(&|i| i % 50 != 0)) {
        assert!((hit.score - want).abs() < 1e-3, "{hits:?}");
        assert_eq!(tag_of(hit), json!("common"));
    }
    let graph = store.dense_graph(&lib(), &axis(1, 0.0), 10).unwrap();
    assert_eq!(graph.len(), 10);
    assert!(graph.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn a_version_1_database_is_upgraded_in_place() {
    let database = TestDatabase::new();
    {
        let pool = Pool::new(&database.url).unwrap();
        let mut conn = pool.get().unwrap();
        let client = conn.client();
        wait(client.batch_execute("CREATE EXTENSION IF NOT EXISTS vector")).unwrap();
        wait(client.batch_execute(crate::schema::SCHEMA_V1)).unwrap();
        wait(client.batch_execute("INSERT INTO folio_meta VALUES ('schema_version', '1')"))
            .unwrap();
    }
    // Written at version 1 (postings keyed without tf and norm)...
    {
        let pool = Pool::new(&database.url).unwrap();
        let mut conn = pool.get().unwrap();
        wait(conn.client().batch_execute(
            "ALTER TABLE folio_postings DROP CONSTRAINT folio_postings_pkey;
             ALTER TABLE folio_postings ADD PRIMARY KEY (library_id, term, chunk_key);",
        ))
        .unwrap();
    }
    // ... then opened by this folio: upgraded in place.
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    store
        .put_documents(
            vec![document(
                &lib(),
                "a.txt",
                &["upgraded postings"],
                &[0],
                json!({}),
            )],
            false,
        )
        .unwrap();
    drop(store);
    let store = database.store();
    let hits = store
        .lexical(&lib(), "postings", &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(hits.len(), 1);
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let row = wait(conn.client().query_one(
        "SELECT value, to_regclass('folio_postings') IS NULL FROM folio_meta WHERE key = 'schema_version'",
        &[],
    ))
    .unwrap();
    assert_eq!(row.get::<_, String>(0), SCHEMA_VERSION.to_string());
    assert!(row.get::<_, bool>(1), "a row per posting is gone");
    assert_eq!(
        blocks_against_text(&database, library_key(&database, &lib())),
        Vec::<String>::new()
    );
}

// Issue 13: postings made by analyser version 1 ("about" a stop word) are
// rewritten by the schema 3 migration: terms and term counts as the
// current analyser makes them.
#[test]
fn a_version_2_database_is_re_analysed_and_its_documents_indexed_whole() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    store
        .put_documents(
            vec![document(
                &lib(),
                "a.txt",
                &["all about apples"],
                &[0],
                json!({}),
            )],
            false,
        )
        .unwrap();
    drop(store);
    downgrade(
        &database,
        2,
        "UPDATE folio_chunks SET terms = terms - 1;
         DROP TABLE folio_document_postings;
         ALTER TABLE folio_documents DROP COLUMN terms;",
    );
    let store = database.store();
    let hits = store
        .lexical(&lib(), "about", &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(hits.len(), 1);
    // Version 4: the whole document is analysed too.
    let documents = store
        .lexical_documents(&lib(), "apples", &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(documents.len(), 1);
    assert_eq!(documents[0].chunk, hits[0].chunk);
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let row = wait(conn.client().query_one(
        "SELECT c.context || c.text, c.terms, m.value FROM folio_chunks c, folio_meta m
         WHERE m.key = 'schema_version'",
        &[],
    ))
    .unwrap();
    let analysed = folio_lexical::analyze(row.get(0));
    assert!(analysed.contains(&"about".to_string()));
    assert_eq!(row.get::<_, i32>(1), analysed.len() as i32);
    assert_eq!(row.get::<_, String>(2), SCHEMA_VERSION.to_string());
}

// Issue 48: a version 7 database (English analysis, no language markers)
// is analysed again in each text's language: a Chinese word finds the
// Chinese document, and the library's languages are known.
/// `query` finds one chunk, of the document at `source`, and one whole
/// document.
fn found_alone(store: &PostgresStore, query: &str, source: &str) {
    let hits = store
        .lexical(&lib(), query, &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(hits.len(), 1, "{query}");
    let found = store
        .chunks_with_documents(&[hits[0].chunk.clone()])
        .unwrap();
    assert_eq!(found[0].document.source, source, "{query}");
    let whole = store
        .lexical_documents(&lib(), query, &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(whole.len(), 1, "{query}");
}

#[test]
fn a_version_7_database_is_analysed_again_in_each_language() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    let chinese = "全文检索系统为每个文档建立倒排索引，用户输入关键词后，系统返回最相关的段落。";
    let german = "Die Bibliothek bewahrt alte Handschriften in klimatisierten Räumen auf, \
                  damit die Handschriften noch lange erhalten bleiben.";
    store
        .put_documents(
            vec![
                document(&lib(), "zh.txt", &[chinese], &[0], json!({})),
                document(&lib(), "de.txt", &[german], &[0], json!({})),
            ],
            false,
        )
        .unwrap();
    drop(store);
    // A version 7 database, its postings gone, part way through a
    // re-analysis an earlier folio left (into the tables version 12
    // drops): whatever is found comes from the migration's analysis, made
    // again from the start.
    downgrade(
        &database,
        7,
        "INSERT INTO folio_meta (key, value)
             SELECT 'reanalysis', 'chunks:' || max(key) FROM folio_chunks;",
    );
    let store = database.store();
    for (query, source) in [("检索", "zh.txt"), ("Handschrift", "de.txt")] {
        found_alone(&store, query, source);
    }
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let markers: Vec<String> = wait(conn.client().query(
        "SELECT DISTINCT term FROM folio_term_blocks WHERE term LIKE E'\\x01%' ORDER BY term",
        &[],
    ))
    .unwrap()
    .iter()
    .map(|row| row.get(0))
    .collect();
    assert_eq!(
        markers,
        [
            folio_lexical::language_marker(folio_lexical::Language::German),
            folio_lexical::language_marker(folio_lexical::Language::Chinese)
        ]
    );
    let library = library_key(&database, &lib());
    assert_eq!(
        blocks_against_text(&database, library),
        Vec::<String>::new()
    );
}

/// A version 13 database read a chunk that does not tell its language as
/// English: it is analysed again, each such chunk in its document's
/// language (read from the stored metadata). Its postings are emptied
/// first, so whatever is found comes from the migration's analysis.
#[test]
fn a_version_13_database_reads_undecided_chunks_in_their_documents_language() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    store
        .put_documents(conformance::short_notes(&lib()), false)
        .unwrap();
    drop(store);
    database.run(
        "TRUNCATE folio_term_blocks;
         UPDATE folio_documents SET lexicon = '{}';
         UPDATE folio_meta SET value = '13' WHERE key = 'schema_version';",
    );
    let store = database.store();
    conformance::short_notes_are_read_in_their_documents_language(&store, &lib());
    let library = library_key(&database, &lib());
    assert_eq!(
        blocks_against_text(&database, library),
        Vec::<String>::new()
    );
}

#[test]
fn an_interrupted_reanalysis_goes_on_from_its_place() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    let texts = [
        (
            "a.txt",
            "Die Handschriften liegen in klimatisierten Räumen der Bibliothek.",
        ),
        (
            "b.txt",
            "全文检索系统为每个文档建立倒排索引，用户输入关键词后返回段落。",
        ),
        (
            "c.txt",
            "Los manuscritos antiguos se conservan en salas climatizadas.",
        ),
    ];
    let documents = texts
        .iter()
        .map(|(source, text)| document(&lib(), source, &[text], &[0], json!({})))
        .collect();
    store.put_documents(documents, false).unwrap();
    drop(store);
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let keys: Vec<i64> = wait(
        conn.client()
            .query("SELECT key FROM folio_chunks ORDER BY key", &[]),
    )
    .unwrap()
    .iter()
    .map(|row| row.get(0))
    .collect();
    assert_eq!(keys.len(), 3);
    // A process upgrading a database of the version before died after its
    // first batch: the first chunk's postings are made (with a posting a
    // restart would lose), the rest are not, and its place is recorded.
    database.run(&format!(
        "TRUNCATE folio_term_blocks;
         UPDATE folio_documents SET lexicon = '{{}}';
         UPDATE folio_meta SET value = '{before}' WHERE key = 'schema_version';
         INSERT INTO folio_meta (key, value) VALUES ('reanalysis', 'chunks:{first}');",
        before = SCHEMA_VERSION - 1,
        first = keys[0]
    ));
    {
        let text: String = wait(conn.client().query_one(
            "SELECT context || text FROM folio_chunks WHERE key = $1",
            &[&keys[0]],
        ))
        .unwrap()
        .get(0);
        let (mut terms, length) = folio_lexical::chunk_term_counts(&text, None);
        terms.push(("kept".to_string(), 1));
        let mut pending = crate::blocks::Pending::default();
        let library = library_key(&database, &lib());
        pending.add(
            (
                library,
                crate::lexical::Unit::Chunk,
                crate::blocks::chunk_block(keys[0]),
            ),
            keys[0],
            &(terms, length),
        );
        pending.flush(conn.client()).unwrap();
    }
    // A read-only folio will not open it until the work is done.
    assert!(PostgresStore::connect_read_only(&database.url).is_err());
    crate::schema::migrate_in_batches(conn.client(), "test", 1).unwrap();
    let state: Vec<(String, String)> = wait(conn.client().query(
        "SELECT key, value FROM folio_meta WHERE key IN ('schema_version', 'reanalysis')",
        &[],
    ))
    .unwrap()
    .iter()
    .map(|row| (row.get(0), row.get(1)))
    .collect();
    assert_eq!(
        state,
        [("schema_version".to_string(), SCHEMA_VERSION.to_string())]
    );
    let kept: i64 = wait(conn.client().query_one(
        "SELECT count(*) FROM folio_term_blocks WHERE term = 'kept'",
        &[],
    ))
    .unwrap()
    .get(0);
    assert_eq!(kept, 1, "the finished batch was not done again");
    let store = PostgresStore::connect_read_only(&database.url).unwrap();
    for (query, source) in [
        ("Handschrift", "a.txt"),
        ("检索", "b.txt"),
        ("manuscrito", "c.txt"),
    ] {
        found_alone(&store, query, source);
    }
}

#[test]
fn a_newer_schema_is_refused_and_bad_urls_are_explained() {
    let database = TestDatabase::new();
    drop(database.store());
    {
        let pool = Pool::new(&database.url).unwrap();
        let mut conn = pool.get().unwrap();
        wait(
            conn.client()
                .batch_execute("UPDATE folio_meta SET value = '99' WHERE key = 'schema_version'"),
        )
        .unwrap();
    }
    let Err(e) = PostgresStore::connect(&database.url) else {
        panic!("a newer schema must be refused");
    };
    assert!(e.to_string().contains("schema version 99"), "{e}");

    let Err(e) = PostgresStore::connect("postgres://folio:s3cret@127.0.0.1:1/folio") else {
        panic!("nothing listens on port 1");
    };
    let text = e.to_string();
    assert!(text.contains("connecting to PostgreSQL"), "{text}");
    assert!(!text.contains("s3cret"), "the password leaked: {text}");
    assert!(matches!(
        PostgresStore::connect("postgres://[broken"),
        Err(StoreError::InvalidArgument(_))
    ));
}

#[test]
fn two_stores_writing_the_same_documents_at_once_write_each_once() {
    let database = TestDatabase::new();
    let first = database.store();
    first.create_library(&lib(), &space()).unwrap();
    let docs: Vec<NewDocument> = (0..40)
        .map(|i| {
            document(
                &lib(),
                &format!("same{i}.txt"),
                &["shared words"],
                &[0],
                json!({}),
            )
        })
        .collect();
    let outcomes: Vec<Vec<PutOutcome>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let docs = docs.clone();
                let url = database.url.clone();
                scope.spawn(move || {
                    let store = PostgresStore::connect(&url).unwrap();
                    docs.into_iter()
                        .map(|d| store.put_documents(vec![d], false).unwrap()[0])
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let indexed = outcomes
        .iter()
        .flatten()
        .filter(|o| **o == PutOutcome::Indexed)
        .count();
    assert_eq!(indexed, 40, "each document indexed by exactly one writer");
    let info = first.library(&lib()).unwrap();
    assert_eq!((info.document_count, info.chunk_count), (40, 40));
    assert!(first.verify(&lib()).unwrap().problems.is_empty());
}

// Issue 30: `folio check` covers the entity graph: a mention of a chunk
// that does not exist, or beyond its chunk's text, is named.
#[test]
fn verify_names_entity_mentions_outside_their_chunks() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    let a = document(&lib(), "a.txt", &["apples and pears"], &[0], json!({}));
    store.put_documents(vec![a.clone()], false).unwrap();
    assert!(store.verify(&lib()).unwrap().problems.is_empty());
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let insert = |chunk: i32, stop: i32| {
        format!(
            "INSERT INTO folio_entity_mentions (library_id, document_id, entity, kind, chunk, start, stop)
             SELECT library_id, id, 'acme', 'organization', {chunk}, 0, {stop}
               FROM folio_documents WHERE id = '{}'",
            a.document.id
        )
    };
    wait(conn.client().batch_execute(&insert(0, 6))).unwrap();
    assert!(store.verify(&lib()).unwrap().problems.is_empty());
    wait(conn.client().batch_execute(&insert(7, 4))).unwrap();
    wait(conn.client().batch_execute(&insert(0, 100_000))).unwrap();
    assert_eq!(
        store.verify(&lib()).unwrap().problems,
        vec!["2 entity mentions point outside the library's chunks".to_string()]
    );
}

/// A TCP proxy to the test server that can go silent: after `mute`, it
/// forwards nothing more in either direction and closes nothing, as a NAT
/// or firewall that forgot the connection does.
struct SilentProxy {
    addr: std::net::SocketAddr,
    muted: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl SilentProxy {
    fn to(server: &str) -> Self {
        use std::io::{Read, Write};
        let target = server.to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let muted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = muted.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(upstream) = std::net::TcpStream::connect(&target) else {
                    continue;
                };
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), upstream.try_clone().unwrap()),
                    (upstream, client),
                ] {
                    let muted = flag.clone();
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 {
                                break;
                            }
                            if muted.load(Ordering::SeqCst) {
                                // Swallowed; the socket stays open.
                                continue;
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        // Once muted, never close: the peer hears nothing.
                        while muted.load(Ordering::SeqCst) {
                            std::thread::sleep(std::time::Duration::from_secs(1));
                        }
                    });
                }
            }
        });
        SilentProxy { addr, muted }
    }

    fn mute(&self) {
        self.muted.store(true, Ordering::SeqCst);
    }
}

// Issue 46 §11: a watch's claim counted as held while its idle connection
// was not closed; a connection dropped silently (no FIN, no RST) is never
// closed, so two processes ran passes at once. The claim is probed on the
// server before each pass, and a probe that goes unanswered loses it.
#[test]
fn a_claim_on_a_silently_dropped_connection_is_not_held() {
    let database = TestDatabase::new();
    let server = url::Url::parse(&database.url).unwrap();
    let upstream = format!(
        "{}:{}",
        server.host_str().unwrap(),
        server.port().unwrap_or(5432)
    );
    let proxy = SilentProxy::to(&upstream);
    let mut through = server.clone();
    through.set_host(Some("127.0.0.1")).unwrap();
    through.set_port(Some(proxy.addr.port())).unwrap();
    let store = PostgresStore::connect(through.as_str()).unwrap();
    let claim = store
        .claim("watch lib /folder")
        .unwrap()
        .expect("a free claim");
    assert!(claim.held(), "a live session holds its claim");
    let direct = database.store();
    assert!(
        direct.claim("watch lib /folder").unwrap().is_none(),
        "the claim is exclusive"
    );
    proxy.mute();
    let started = std::time::Instant::now();
    assert!(!claim.held(), "an unanswered probe loses the claim");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// Version 10 adds the table of kept source bytes: a version 9 database
/// gains it (and its postings are packed in blocks, version 12).
#[test]
fn version_9_gains_the_originals_table() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    store
        .put_documents(
            vec![document(&lib(), "a.txt", &["alpha beta"], &[0], json!({}))],
            false,
        )
        .unwrap();
    drop(store);
    // A version 9 database: no originals table; a marker posting that a
    // re-analysis would drop.
    downgrade(&database, 9, "DROP TABLE folio_originals;");
    let store = database.store();
    let mut kept = document(&lib(), "b.pdf", &["gamma"], &[1], json!({}));
    kept.original = Some(b"%PDF-1.7".to_vec());
    store.put_documents(vec![kept.clone()], false).unwrap();
    assert_eq!(
        store.original(&kept.document.id).unwrap(),
        Some(b"%PDF-1.7".to_vec())
    );
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let rows = wait(conn.client().query(
        "SELECT value FROM folio_meta WHERE key = 'schema_version'",
        &[],
    ))
    .unwrap();
    assert_eq!(rows[0].get::<_, String>(0), SCHEMA_VERSION.to_string());
    assert_eq!(
        blocks_against_text(&database, library_key(&database, &lib())),
        Vec::<String>::new()
    );
}

/// Makes this folio's database one of an earlier `version` as far as
/// postings go: tables of a row per posting (empty), no blocks, no
/// lexicons; `extra` runs before the version is set.
fn downgrade(database: &TestDatabase, version: i64, extra: &str) {
    database.run(&format!(
        "DROP TABLE folio_term_blocks;
         ALTER TABLE folio_documents DROP COLUMN block, DROP COLUMN lexicon;
         CREATE TABLE folio_postings (library_id bigint NOT NULL, term text COLLATE \"C\" NOT NULL,
             chunk_key bigint NOT NULL, tf integer NOT NULL, norm integer NOT NULL,
             PRIMARY KEY (library_id, term, chunk_key) INCLUDE (tf, norm));
         CREATE INDEX folio_postings_by_chunk ON folio_postings (chunk_key);
         CREATE TABLE folio_document_postings (library_id bigint NOT NULL,
             term text COLLATE \"C\" NOT NULL, document_key bigint NOT NULL, tf integer NOT NULL,
             norm integer NOT NULL, PRIMARY KEY (library_id, term, document_key) INCLUDE (tf, norm));
         {extra}
         UPDATE folio_meta SET value = '{version}' WHERE key = 'schema_version';"
    ));
}

/// Where a library's blocks differ from the postings its stored text
/// gives, the analyser run afresh over each chunk's and each document's
/// text: postings missing, unexpected or other, rows miscounted or in the
/// wrong block (empty when they agree).
fn blocks_against_text(database: &TestDatabase, library: i64) -> Vec<String> {
    use std::collections::BTreeMap;
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let client = conn.client();
    let mut expected: BTreeMap<(i16, String, i64), (i32, i32)> = BTreeMap::new();
    let mut put = |unit: i16, key: i64, (terms, length): (Vec<(String, u32)>, usize)| {
        let norm = folio_lexical::scored_length(length) as i32;
        for (term, tf) in terms {
            expected.insert((unit, term, key), (tf as i32, norm));
        }
    };
    for row in wait(client.query(
        "SELECT c.key, c.context || c.text, d.metadata ->> 'language' FROM folio_chunks c
         JOIN folio_documents d ON d.id = c.document_id WHERE c.library_id = $1",
        &[&library],
    ))
    .unwrap()
    {
        put(
            0,
            row.get(0),
            folio_lexical::chunk_term_counts(row.get(1), row.get(2)),
        );
    }
    let mut document_blocks = HashMap::new();
    for row in wait(client.query(
        "SELECT id, title, text, block, metadata ->> 'language' FROM folio_documents
         WHERE library_id = $1",
        &[&library],
    ))
    .unwrap()
    {
        let key = folio_lexical::document_key(row.get(0)).unwrap() as i64;
        document_blocks.insert(key, row.get::<_, i64>(3));
        let text = folio_lexical::document_text(row.get(1), row.get(2));
        put(
            1,
            key,
            folio_lexical::document_term_counts(&text, row.get(4)),
        );
    }
    let mut problems = Vec::new();
    let mut actual = BTreeMap::new();
    for row in wait(client.query(
        "SELECT unit, term, block, entries, postings FROM folio_term_blocks WHERE library_id = $1",
        &[&library],
    ))
    .unwrap()
    {
        let (unit, term, block): (i16, String, i64) = (row.get(0), row.get(1), row.get(2));
        let entries = crate::blocks::entries(row.get(4)).unwrap();
        if entries.len() != row.get::<_, i32>(3) as usize {
            problems.push(format!("{unit} {term} {block}: miscounted"));
        }
        for (key, tf, norm) in entries {
            let home = match unit {
                0 => crate::blocks::chunk_block(key),
                _ => document_blocks.get(&key).copied().unwrap_or(-1),
            };
            if home != block {
                problems.push(format!("{unit} {term} {key}: in block {block}, not {home}"));
            }
            actual.insert((unit, term.clone(), key), (tf, norm));
        }
    }
    for (posting, value) in &expected {
        match actual.get(posting) {
            None => problems.push(format!("{posting:?}: missing")),
            Some(found) if found != value => {
                problems.push(format!("{posting:?}: {found:?}, not {value:?}"))
            }
            Some(_) => {}
        }
    }
    for posting in actual.keys().filter(|p| !expected.contains_key(*p)) {
        problems.push(format!("{posting:?}: unexpected"));
    }
    problems.truncate(10);
    problems
}

fn library_key(database: &TestDatabase, name: &LibraryName) -> i64 {
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    wait(conn.client().query_one(
        "SELECT id FROM folio_libraries WHERE name = $1",
        &[&name.as_str()],
    ))
    .unwrap()
    .get(0)
}

/// Words of a small vocabulary, so that documents share terms.
fn words(seed: usize, n: usize) -> String {
    const VOCABULARY: [&str; 12] = [
        "river", "stone", "harbour", "lantern", "meadow", "copper", "violin", "glacier", "orchard",
        "compass", "thunder", "saffron",
    ];
    (0..n)
        .map(|i| VOCABULARY[(seed * 7 + i * i * 3 + i) % VOCABULARY.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

// Issue 49: postings are packed in blocks, each row read, changed and
// written back by the transaction that writes or removes a document; the
// blocks must hold exactly the postings the library's text gives after
// every kind of write, from one writer or several at once.
#[test]
fn blocks_follow_every_write() {
    let database = TestDatabase::new();
    let store = database.store();
    let (a, b) = (lib(), LibraryName::new("other").unwrap());
    store.create_library(&a, &space()).unwrap();
    store.create_library(&b, &space()).unwrap();
    let doc = |library: &LibraryName, i: usize, seed: usize| {
        document(
            library,
            &format!("d{i}.txt"),
            &[&words(seed, 9), &words(seed + 1, 5)],
            &[0, 1],
            json!({}),
        )
    };
    store
        .put_documents((0..30).map(|i| doc(&a, i, i)).collect(), false)
        .unwrap();
    store
        .put_documents((0..10).map(|i| doc(&b, i, i + 3)).collect(), false)
        .unwrap();
    let (ka, kb) = (library_key(&database, &a), library_key(&database, &b));
    let none = Vec::<String>::new();
    assert_eq!(
        blocks_against_text(&database, ka),
        none,
        "after a first write"
    );
    // A document removed, one written again with other words.
    store
        .delete_document(&DocumentId::derive(&a, "d3.txt"))
        .unwrap();
    store.put_documents(vec![doc(&a, 4, 100)], false).unwrap();
    assert_eq!(
        blocks_against_text(&database, ka),
        none,
        "after a delete and a change"
    );
    // One batch writing a document twice: its first postings go with it.
    store
        .put_documents(vec![doc(&a, 5, 300), doc(&a, 5, 301)], false)
        .unwrap();
    assert_eq!(
        blocks_against_text(&database, ka),
        none,
        "a document twice in a batch"
    );
    assert!(store.verify(&a).unwrap().problems.is_empty());
    // Four writers at once, their documents sharing every term, writing new
    // documents and changing the same ones.
    std::thread::scope(|scope| {
        for writer in 0..4 {
            let url = database.url.clone();
            let a = a.clone();
            scope.spawn(move || {
                let store = PostgresStore::connect(&url).unwrap();
                for i in 0..6 {
                    let n = 100 + writer * 10 + i;
                    store
                        .put_documents(vec![doc(&a, n, n), doc(&a, i, n)], false)
                        .unwrap();
                }
            });
        }
    });
    assert_eq!(
        blocks_against_text(&database, ka),
        none,
        "after concurrent writers"
    );
    let info = store.library(&a).unwrap();
    assert_eq!(
        info.document_count,
        30 + 24,
        "d3 written again by the writers"
    );
    assert_eq!(
        blocks_against_text(&database, kb),
        none,
        "the other library untouched"
    );
    // A library deleted leaves no blocks.
    store.delete_library(&b).unwrap();
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let left: i64 = wait(conn.client().query_one(
        "SELECT count(*) FROM folio_term_blocks WHERE library_id = $1",
        &[&kb],
    ))
    .unwrap()
    .get(0);
    assert_eq!(left, 0);
    // Lexical scores read the blocks' counts: every document holding a
    // term is found.
    let hits = store
        .lexical_documents(&a, "saffron", &Filter::default(), 100, Bm25::default())
        .unwrap();
    let holding = (0..200)
        .filter_map(|i| {
            store
                .document(&DocumentId::derive(&a, &format!("d{i}.txt")))
                .ok()
        })
        .filter(|d| d.text.contains("saffron"))
        .count();
    assert!(holding > 0);
    assert_eq!(hits.len(), holding);
    assert!(store.verify(&a).unwrap().problems.is_empty());
    // A row whose count is not its postings', and chunks whose postings
    // are gone, are named by `verify`.
    let mut problems = |sql: &str| {
        wait(conn.client().batch_execute(sql)).unwrap();
        store.verify(&a).unwrap().problems
    };
    let miscounted = problems(
        "UPDATE folio_term_blocks SET entries = entries + 1 WHERE ctid =
             (SELECT ctid FROM folio_term_blocks WHERE term = 'saffron' AND unit = 0 LIMIT 1)",
    );
    assert!(
        miscounted
            .iter()
            .any(|p| p.contains("1 rows of the lexical index count other than their postings")),
        "{miscounted:?}"
    );
    let gone = problems("DELETE FROM folio_term_blocks WHERE unit = 0");
    assert!(
        gone.iter()
            .any(|p| p.contains("missing from the lexical index")),
        "{gone:?}"
    );
}

/// A version 11 database (a row per posting, kept counts) has its
/// postings packed in blocks from its stored text; deletes then find them.
#[test]
fn a_version_11_database_packs_its_postings_in_blocks() {
    let database = TestDatabase::new();
    let store = database.store();
    store.create_library(&lib(), &space()).unwrap();
    store
        .put_documents(
            (0..12)
                .map(|i| {
                    document(
                        &lib(),
                        &format!("v{i}.txt"),
                        &[&words(i, 8)],
                        &[0],
                        json!({}),
                    )
                })
                .collect(),
            false,
        )
        .unwrap();
    drop(store);
    downgrade(
        &database,
        11,
        "CREATE TABLE folio_term_counts (library_id bigint NOT NULL, unit smallint NOT NULL,
             term text COLLATE \"C\" NOT NULL, entries bigint NOT NULL,
             settled boolean NOT NULL DEFAULT false);
         INSERT INTO folio_postings (library_id, term, chunk_key, tf, norm)
             SELECT library_id, 'zz-old-marker', key, 1, 1 FROM folio_chunks;",
    );
    let store = database.store();
    let key = library_key(&database, &lib());
    assert_eq!(blocks_against_text(&database, key), Vec::<String>::new());
    let pool = Pool::new(&database.url).unwrap();
    let mut conn = pool.get().unwrap();
    let row = wait(conn.client().query_one(
        "SELECT a.attstorage, to_regclass('folio_postings') IS NULL,
                to_regclass('folio_term_counts') IS NULL
         FROM pg_attribute a WHERE a.attrelid = 'folio_chunks'::regclass AND a.attname = 'embedding'",
        &[],
    ))
    .unwrap();
    assert_eq!(
        row.get::<_, i8>(0) as u8,
        b'm',
        "vectors kept inline in their rows"
    );
    assert!(
        row.get::<_, bool>(1) && row.get::<_, bool>(2),
        "the old tables are gone"
    );
    assert!(store.verify(&lib()).unwrap().problems.is_empty());
    for i in [0, 5, 11] {
        store
            .delete_document(&DocumentId::derive(&lib(), &format!("v{i}.txt")))
            .unwrap();
    }
    assert_eq!(blocks_against_text(&database, key), Vec::<String>::new());
}
