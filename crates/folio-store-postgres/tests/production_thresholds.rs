//! PostgreSQL's lexical search at its production thresholds. The unit
//! tests shrink them (`cfg!(test)`) so that small corpora take every path;
//! this test, built without `cfg(test)`, gives a library big enough for the
//! thresholds as they ship: a term in more chunks than are scored in full
//! (30,000), so the common term is looked up for candidates only, and
//! postings common enough to be kept in memory (5,000). The embedded
//! store, whose BM25 equals a reference formula, ranks the same library
//! as the oracle.
//!
//! Needs the test server (`FOLIO_TEST_STORE_URL`; scripts/test.sh starts it).

use folio_core::{Filter, LibraryName};
use folio_store::conformance::{document, space};
use folio_store::{Bm25, Hit, Store};
use folio_store_embedded::{Access, EmbeddedStore};
use folio_store_postgres::PostgresStore;
use folio_testkit::postgres::TestDatabase;

fn same_ranking(query: &str, got: &[Hit], expected: &[Hit]) {
    assert_eq!(
        got.len(),
        expected.len(),
        "{query}: {got:?} vs {expected:?}"
    );
    for (a, b) in got.iter().zip(expected) {
        assert!(
            (a.score - b.score).abs() < 1e-4 * b.score.max(1.0),
            "{query}: {got:?} vs {expected:?}"
        );
    }
    // Chunks of equal score may come in another order; each returned chunk
    // has the oracle's score for it.
    for hit in got {
        if let Some(twin) = expected.iter().find(|e| e.chunk == hit.chunk) {
            assert!((twin.score - hit.score).abs() < 1e-4 * twin.score.max(1.0));
        }
    }
}

#[test]
fn lexical_search_at_production_thresholds_ranks_as_the_embedded_store() {
    const DOCUMENTS: usize = 320;
    const CHUNKS: usize = 100; // 32,000 chunks: "river" is in every one.
    let library = LibraryName::new("big").unwrap();
    let database = TestDatabase::new("thresholds");
    let postgres = PostgresStore::connect(&database.url).unwrap();
    let dir = std::env::temp_dir().join(format!("folio-thresholds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let embedded = EmbeddedStore::open(
        &dir,
        Access::ReadWrite {
            lock_wait: std::time::Duration::from_secs(30),
        },
    )
    .unwrap();
    let stores: [&dyn Store; 2] = [&postgres, &embedded];
    for store in stores {
        store.create_library(&library, &space()).unwrap();
    }
    let mut seed = 11u64;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    let topics = [
        "delta", "glacier", "basalt", "aquifer", "monsoon", "estuary",
    ];
    for d in 0..DOCUMENTS {
        let texts: Vec<String> = (0..CHUNKS)
            .map(|c| {
                let mut words = vec!["river".to_string(); 1 + next(3)];
                // "sediment" in a fifth of the chunks and a topic word in a
                // sixth (each over the 5,000 postings kept in memory),
                // "tributary" in one chunk of four hundred.
                if next(5) == 0 {
                    words.push("sediment".into());
                }
                words.push(topics[next(topics.len())].into());
                if next(400) == 0 {
                    words.push("tributary".into());
                }
                words.push(format!("note{d}x{c}"));
                words.join(" ")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let axes: Vec<usize> = (0..CHUNKS).map(|c| c % 3).collect();
        let doc = document(
            &library,
            &format!("doc{d}.txt"),
            &refs,
            &axes,
            serde_json::json!({"part": d % 4}),
        );
        for store in stores {
            store.put_documents(vec![doc.clone()], false).unwrap();
        }
    }
    let bm25 = Bm25::default();
    let search = |store: &dyn Store, query: &str| {
        store
            .lexical(&library, query, &Filter::default(), 10, bm25)
            .unwrap()
    };
    // A rare term with the common one: the common term's 32,000 postings
    // are looked up for the rare term's candidates only.
    let (candidate_before, _) = folio_store_postgres::lexical_paths();
    for query in ["tributary river", "river tributary delta"] {
        same_ranking(query, &search(&postgres, query), &search(&embedded, query));
    }
    let (candidate_after, _) = folio_store_postgres::lexical_paths();
    assert!(
        candidate_after > candidate_before,
        "no search took the candidate path at the production thresholds"
    );
    // Terms of 5,000 postings or more read in full are kept in memory: the
    // second search of the same words reads them from there, and answers
    // the same.
    let query = "sediment delta";
    let first = search(&postgres, query);
    let (_, cached_before) = folio_store_postgres::lexical_paths();
    let second = search(&postgres, query);
    let (_, cached_after) = folio_store_postgres::lexical_paths();
    assert!(
        cached_after > cached_before,
        "no postings came from the cache"
    );
    assert_eq!(first, second);
    same_ranking(query, &second, &search(&embedded, query));
    // A filter on documents alone: its keys are read once and the terms'
    // postings (from memory or read whole) kept to them, ranking as the
    // embedded store does, chunks and whole documents.
    let quarter = Filter {
        conditions: vec![folio_core::Condition::Equals {
            field: "part".into(),
            value: serde_json::json!(1),
        }],
    };
    for query in ["sediment delta", "tributary river", "river basalt"] {
        let chunks =
            |store: &dyn Store| store.lexical(&library, query, &quarter, 10, bm25).unwrap();
        let documents = |store: &dyn Store| {
            store
                .lexical_documents(&library, query, &quarter, 10, bm25)
                .unwrap()
        };
        let (got, expected) = (chunks(&postgres), chunks(&embedded));
        assert!(!got.is_empty(), "{query}");
        same_ranking(query, &got, &expected);
        let (got, expected) = (documents(&postgres), documents(&embedded));
        same_ranking(query, &got, &expected);
        for hit in &got {
            let (id, _) = folio_core::ChunkId::parse(hit.chunk.as_str()).unwrap();
            let document = postgres.document(&id).unwrap();
            assert_eq!(document.metadata["part"], serde_json::json!(1), "{query}");
        }
    }
    // A server reads ahead as it starts (`Store::warm`): a second store on
    // the same database, warmed, answers its first search of common terms
    // from memory, as the embedded store ranks.
    let warmed = PostgresStore::connect(&database.url).unwrap();
    warmed.warm(&library).unwrap();
    let query = "glacier monsoon sediment";
    let (_, cached_before) = folio_store_postgres::lexical_paths();
    let first = search(&warmed, query);
    let (_, cached_after) = folio_store_postgres::lexical_paths();
    assert_eq!(
        cached_after - cached_before,
        3,
        "the warmed store read its common terms again"
    );
    same_ranking(query, &first, &search(&embedded, query));
    drop(embedded);
    let _ = std::fs::remove_dir_all(&dir);
}
