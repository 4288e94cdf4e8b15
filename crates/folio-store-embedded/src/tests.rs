//! The conformance suite, plus what only the embedded backend promises:
//! persistence across reopen, rebuild of lost derived indexes, replay after a
//! crash, the write lock, and readers in other processes.

use std::time::Duration;

use folio_core::{DocumentId, Filter, LibraryName};
use folio_store::conformance::{self, axis, document, space};
use folio_store::{Bm25, Store, StoreError};
use serde_json::json;

use super::*;

fn open_writer(dir: &Path, lock_wait: Duration) -> Result<EmbeddedStore> {
    EmbeddedStore::open(dir, Access::ReadWrite { lock_wait })
}

fn writable(dir: &Path) -> EmbeddedStore {
    open_writer(dir, Duration::from_millis(200)).unwrap()
}

fn lib() -> LibraryName {
    LibraryName::new("lib").unwrap()
}

#[test]
fn conformance_suite() {
    let dirs = std::sync::Mutex::new(Vec::new());
    conformance::run(&|| {
        let dir = tempfile::tempdir().unwrap();
        let store = writable(dir.path());
        dirs.lock().unwrap().push(dir);
        Box::new(store)
    });
}

fn seed(store: &EmbeddedStore) {
    store.create_library(&lib(), &space()).unwrap();
    store
        .put_documents(
            vec![
                document(&lib(), "a.txt", &["apples and pears"], &[0], json!({})),
                document(&lib(), "b.txt", &["bananas"], &[1], json!({})),
            ],
            false,
        )
        .unwrap();
}

fn search_both(store: &EmbeddedStore) -> (usize, usize) {
    let lexical = store
        .lexical(
            &lib(),
            "apples bananas",
            &Filter::default(),
            10,
            Bm25::default(),
        )
        .unwrap();
    let dense = store
        .dense(&lib(), &axis(0, 0.0), &Filter::default(), 10)
        .unwrap();
    (lexical.len(), dense.len())
}

#[test]
fn data_survives_reopen_and_lost_indexes_are_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    assert_eq!(search_both(&writable(dir.path())), (2, 2));
    // Derived indexes are disposable: delete them and they come back.
    std::fs::remove_dir_all(dir.path().join("indexes")).unwrap();
    assert_eq!(search_both(&writable(dir.path())), (2, 2));
    // A corrupt vector file is detected and rebuilt too.
    let store = writable(dir.path());
    search_both(&store);
    drop(store);
    let vectors = dir.path().join("indexes/1/vectors.usearch");
    std::fs::write(&vectors, b"garbage").unwrap();
    assert_eq!(search_both(&writable(dir.path())), (2, 2));
}

/// A lexical index rebuilt from the database reads each document's
/// language from its stored metadata, as the index written with the
/// document did.
#[test]
fn a_rebuilt_lexical_index_reads_undecided_chunks_in_their_documents_language() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    store.create_library(&lib(), &space()).unwrap();
    store
        .put_documents(conformance::short_notes(&lib()), false)
        .unwrap();
    conformance::short_notes_are_read_in_their_documents_language(&store, &lib());
    drop(store);
    std::fs::remove_dir_all(dir.path().join("indexes")).unwrap();
    let store = writable(dir.path());
    conformance::short_notes_are_read_in_their_documents_language(&store, &lib());
}

#[test]
fn unsaved_vectors_are_replayed_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    seed(&store);
    store.flush().unwrap();
    store
        .put_documents(
            vec![document(&lib(), "c.txt", &["cherries"], &[2], json!({}))],
            false,
        )
        .unwrap();
    // Simulate a crash: skip the save that Drop would do. (The forgotten
    // store keeps the write lock, so the reader below replays in memory.)
    std::mem::forget(store);
    let reopened = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    let dense = reopened
        .dense(&lib(), &axis(2, 0.0), &Filter::default(), 1)
        .unwrap();
    assert_eq!(dense.len(), 1);
    assert!(
        dense[0]
            .chunk
            .as_str()
            .starts_with(DocumentId::derive(&lib(), "c.txt").as_str())
    );
}

#[test]
fn a_second_writer_gets_a_clear_busy_error_and_readers_see_commits() {
    let dir = tempfile::tempdir().unwrap();
    let writer = writable(dir.path());
    seed(&writer);
    match open_writer(dir.path(), Duration::from_millis(100)) {
        Err(StoreError::Busy { pid, .. }) => assert_eq!(pid, std::process::id().to_string()),
        other => panic!("expected Busy, got {:?}", other.map(|_| ())),
    }
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert_eq!(search_both(&reader), (2, 2));
    assert!(
        reader
            .put_documents(
                vec![document(&lib(), "x.txt", &["x"], &[0], json!({}))],
                false
            )
            .is_err()
    );
    // A later commit by the writer becomes visible to the open reader.
    writer
        .put_documents(
            vec![document(
                &lib(),
                "c.txt",
                &["apples again"],
                &[0],
                json!({}),
            )],
            false,
        )
        .unwrap();
    assert_eq!(search_both(&reader), (3, 3));
    drop(writer);
    assert!(open_writer(dir.path(), Duration::ZERO).is_ok());
}

#[test]
fn rebuild_repins_the_space_and_swaps_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    seed(&store);
    let texts = store.chunk_texts(&lib()).unwrap();
    let mut new_space = space();
    new_space.model = "test/other".into();
    new_space.dim = 2;
    let vectors = texts
        .iter()
        .enumerate()
        .map(|(i, (id, _))| {
            (
                id.clone(),
                if i == 0 {
                    vec![0.0, 1.0]
                } else {
                    vec![1.0, 0.0]
                },
            )
        })
        .collect();
    store.replace_vectors(&lib(), &new_space, vectors).unwrap();
    assert_eq!(store.library(&lib()).unwrap().space, new_space);
    let hits = store
        .dense(&lib(), &[0.0, 1.0], &Filter::default(), 1)
        .unwrap();
    assert_eq!(hits[0].chunk, texts[0].0);
    assert!(matches!(
        store.dense(&lib(), &axis(0, 0.0), &Filter::default(), 1),
        Err(StoreError::EmbeddingMismatch { .. })
    ));
}

/// A store with an empty library of `dim`-dimensional vectors, and a
/// deterministic generator (xorshift from `seed`) of components in [-1, 1).
fn vector_library(
    dir: &Path,
    dim: u32,
    seed: u64,
) -> (
    EmbeddedStore,
    folio_core::EmbeddingSpace,
    impl FnMut() -> f32,
) {
    let store = writable(dir);
    let mut space = space();
    space.dim = dim;
    store.create_library(&lib(), &space).unwrap();
    let mut state = seed;
    let next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 2000) as f32 / 1000.0 - 1.0
    };
    (store, space, next)
}

/// A unit vector of `n` components drawn from `next`.
fn unit_vector(next: &mut impl FnMut() -> f32, n: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..n).map(|_| next()).collect();
    let length = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / length).collect()
}

/// What the library's vector index holds for each vector (`folio inspect`).
fn vector_codes(store: &EmbeddedStore) -> serde_json::Value {
    store.stats(&lib()).unwrap().index["vector_codes"].clone()
}

// Issue 49: an index that grows to `PACKED_MIN` vectors is rebuilt from
// the database with 4-bit codes, saved so, and loaded so again (no second
// rebuild); searched exhaustively and through the graph it still answers
// the exact top 10 with their exact similarities, before and after reopening.
#[test]
fn a_library_grown_large_holds_4_bit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, space, mut next) = vector_library(dir.path(), 64, 0x9E37_79B9_7F4A_7C15);
    let mut unit = |n: usize| unit_vector(&mut next, n);
    let mut all: Vec<(ChunkId, Vec<f32>)> = Vec::new();
    let mut put = |from: usize, to: usize, all: &mut Vec<(ChunkId, Vec<f32>)>| {
        let docs: Vec<_> = (from..to)
            .map(|i| {
                let mut d = document(&lib(), &format!("{i}.txt"), &["x"], &[0], json!({}));
                let v = unit(64);
                all.push((ChunkId::new(&d.document.id, 0), v.clone()));
                d.vectors = vec![v];
                d.space = space.clone();
                d
            })
            .collect();
        store.put_documents(docs, false).unwrap();
    };
    put(0, vectors::PACKED_MIN - 10, &mut all);
    assert_eq!(vector_codes(&store), "i8");
    put(vectors::PACKED_MIN - 10, vectors::PACKED_MIN + 10, &mut all);
    assert_eq!(vector_codes(&store), "4-bit");
    let saved = std::fs::read_to_string(store.index_dir(1).join("vectors.json")).unwrap();
    assert!(saved.contains("\"packed\":true"), "{saved}");
    let queries: Vec<Vec<f32>> = (0..20).map(|_| unit(64)).collect();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let answers = |store: &EmbeddedStore| -> Vec<(Vec<Hit>, Vec<Hit>)> {
        queries
            .iter()
            .map(|q| {
                (
                    store.dense(&lib(), q, &Filter::default(), 10).unwrap(),
                    store.dense_graph(&lib(), q, 10).unwrap(),
                )
            })
            .collect()
    };
    let before = answers(&store);
    let mut found = 0;
    for (q, (exhaustive, graph)) in queries.iter().zip(&before) {
        let mut truth: Vec<(f32, &ChunkId)> = all.iter().map(|(c, v)| (dot(q, v), c)).collect();
        truth.sort_by(|a, b| b.0.total_cmp(&a.0));
        for hits in [exhaustive, graph] {
            found += hits
                .iter()
                .filter(|h| truth[..10].iter().any(|t| *t.1 == h.chunk))
                .count();
            for hit in hits {
                let v = &all.iter().find(|(c, _)| *c == hit.chunk).unwrap().1;
                assert!((hit.score - dot(q, v)).abs() < 1e-5);
            }
        }
    }
    let recall = found as f64 / (queries.len() * 20) as f64;
    assert!(recall >= 0.99, "recall@10 {recall}");
    let file = store.index_dir(1).join("vectors.usearch");
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    drop(store);
    let store = writable(dir.path());
    assert_eq!(vector_codes(&store), "4-bit");
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        written
    );
    let after = answers(&store);
    for ((a, b), (c, d)) in before.iter().zip(&after) {
        let keys = |hits: &[Hit]| hits.iter().map(|h| h.chunk.clone()).collect::<Vec<_>>();
        assert_eq!((keys(a), keys(b)), (keys(c), keys(d)));
    }
}

// Packing builds its copy of a large index while searches and writes go
// on over the 8-bit one (it takes no lock a search takes): what the log
// gains between the copy's snapshot and its swap (a document deleted, one
// replaced, one added) is in the packed index and its chunk directory when
// it takes the index's place, and nothing the database no longer holds is.
#[test]
fn an_index_packed_while_its_library_changes_holds_what_the_database_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (store, space, mut next) = vector_library(dir.path(), 64, 0x5851_F42D_4C95_7F2D);
    let mut unit = move || unit_vector(&mut next, 64);
    let make = |name: &str, text: &str, vector: Vec<f32>| {
        let mut d = document(&lib(), name, &[text], &[0], json!({}));
        d.vectors = vec![vector];
        d.space = space.clone();
        d
    };
    let mut vectors: Vec<Vec<f32>> = Vec::new();
    let mut put_range = |from: usize, to: usize, vectors: &mut Vec<Vec<f32>>| {
        let docs: Vec<_> = (from..to)
            .map(|i| {
                vectors.push(unit());
                make(&format!("{i}.txt"), "x", vectors[i].clone())
            })
            .collect();
        store.put_documents(docs, false).unwrap();
    };
    put_range(0, vectors::PACKED_MIN - 10, &mut vectors);
    let index = store.indexes.read().unwrap().get(&1).cloned().unwrap();
    // As `pack_vectors` marks it: later writes leave the packing to it.
    index.marks.lock().unwrap().packing = true;
    put_range(
        vectors::PACKED_MIN - 10,
        vectors::PACKED_MIN + 10,
        &mut vectors,
    );
    assert_eq!(vector_codes(&store), "i8");

    // The copy is built with neither the store's connection nor the
    // index's marks, which every search takes.
    let (built, from) = {
        let _connection = store.conn();
        let _marks = index.marks.lock().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| sender.send(store.build_packed(&index)).unwrap());
            receiver
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| {
                    eprintln!("building the packed copy waited for a lock searches hold");
                    std::process::abort()
                })
                .unwrap()
        })
    };
    let id = |name: &str| DocumentId::derive(&lib(), name);
    store.delete_document(&id("0.txt")).unwrap();
    let replaced = unit();
    let added = unit();
    store
        .put_documents(
            vec![
                make("1.txt", "y", replaced.clone()),
                make("new.txt", "z", added.clone()),
            ],
            false,
        )
        .unwrap();
    // Searches meanwhile read the 8-bit index, changes and all.
    let first = |store: &EmbeddedStore, v: &[f32]| {
        store.dense(&lib(), v, &Filter::default(), 1).unwrap()[0].clone()
    };
    assert_eq!(first(&store, &added).chunk, ChunkId::new(&id("new.txt"), 0));
    assert_eq!(vector_codes(&store), "i8");

    store.swap_packed(&index, built, from).unwrap();
    index.marks.lock().unwrap().packing = false;
    assert_eq!(vector_codes(&store), "4-bit");
    let expected = vectors::PACKED_MIN + 10;
    let check = |store: &EmbeddedStore| {
        assert_eq!(store.indexes.read().unwrap()[&1].vectors.len(), expected);
        for (name, vector) in [
            ("new.txt", &added),
            ("1.txt", &replaced),
            ("7.txt", &vectors[7]),
        ] {
            let hit = first(store, vector);
            assert_eq!(hit.chunk, ChunkId::new(&id(name), 0), "{name}");
            assert!(hit.score > 0.999, "{name}: {}", hit.score);
        }
        let deleted = ChunkId::new(&id("0.txt"), 0);
        let near = store.dense_graph(&lib(), &vectors[0], 10).unwrap();
        assert!(near.iter().all(|h| h.chunk != deleted));
        let old = first(store, &vectors[1]);
        assert!(
            old.score < 0.999,
            "the replaced vector is gone: {}",
            old.score
        );
    };
    check(&store);
    drop(index);
    drop(store);
    let store = writable(dir.path());
    assert_eq!(vector_codes(&store), "4-bit");
    check(&store);
}

#[test]
fn many_vectors_use_the_graph_with_high_recall() {
    let dir = tempfile::tempdir().unwrap();
    // Deterministic pseudo-random unit vectors.
    let (store, space, mut next) = vector_library(dir.path(), 16, 0x2545F4914F6CDD1D);
    let mut docs = Vec::new();
    let mut all: Vec<(ChunkId, Vec<f32>)> = Vec::new();
    for i in 0..3000 {
        let mut d = document(&lib(), &format!("{i}.txt"), &["x"], &[0], json!({}));
        let v = unit_vector(&mut next, 16);
        all.push((ChunkId::new(&d.document.id, 0), v.clone()));
        d.vectors = vec![v];
        d.space = space.clone();
        docs.push(d);
    }
    store.put_documents(docs, false).unwrap();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let (mut found, mut found_exhaustive) = (0, 0);
    let queries = 50;
    for _ in 0..queries {
        let q: Vec<f32> = (0..16).map(|_| next()).collect();
        // The truth, by brute force over the f32 vectors.
        let mut truth: Vec<(f32, &ChunkId)> = all.iter().map(|(c, v)| (dot(&q, v), c)).collect();
        truth.sort_by(|a, b| b.0.total_cmp(&a.0));
        let truth: Vec<&ChunkId> = truth[..10].iter().map(|t| t.1).collect();
        // Quantised vectors searched exhaustively (a small library), then
        // through the graph; both rescored from the f32 vectors.
        let exhaustive = store.dense(&lib(), &q, &Filter::default(), 10).unwrap();
        let graph = store.dense_graph(&lib(), &q, 10).unwrap();
        for (hits, count) in [(&exhaustive, &mut found_exhaustive), (&graph, &mut found)] {
            *count += hits.iter().filter(|h| truth.contains(&&h.chunk)).count();
            // Reported similarities are the exact f32 ones.
            for hit in hits.iter() {
                let v = &all.iter().find(|(c, _)| *c == hit.chunk).unwrap().1;
                assert!(
                    (hit.score - dot(&q, v)).abs() < 1e-5,
                    "{} vs {}",
                    hit.score,
                    dot(&q, v)
                );
            }
        }
    }
    let recall = found as f64 / (queries * 10) as f64;
    let recall_exhaustive = found_exhaustive as f64 / (queries * 10) as f64;
    assert!(recall >= 0.95, "HNSW recall@10 {recall}");
    assert!(
        recall_exhaustive >= 0.99,
        "exhaustive recall@10 {recall_exhaustive}"
    );
}

// Issue 13: an index made by an earlier analyser (kept in `lexical`) is
// not searched: the current analyser's index is built beside it from
// SQLite, by a writer or by a reader that can take the lock, and the old
// folder is removed. Version 1 dropped "about" as a stop word.
#[test]
fn an_earlier_analysers_lexical_index_is_rebuilt_and_removed() {
    let lock_wait = Duration::from_millis(200);
    for access in [
        Access::ReadOnly,
        Access::Shared { lock_wait },
        Access::ReadWrite { lock_wait },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = writable(dir.path());
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
        let index_dir = dir.path().join("indexes/1");
        let old = index_dir.join("lexical");
        std::fs::rename(crate::lexical::lexical_dir(&index_dir), &old).unwrap();
        let store = EmbeddedStore::open(dir.path(), access).unwrap();
        let hits = store
            .lexical(&lib(), "about", &Filter::default(), 10, Bm25::default())
            .unwrap();
        assert_eq!(hits.len(), 1, "{access:?}");
        assert!(
            crate::lexical::lexical_dir(&index_dir)
                .join("meta.json")
                .exists()
        );
        assert!(!old.exists(), "{access:?}: the old index is removed");
    }
}

#[test]
fn a_reader_repairs_a_lexical_index_that_an_interrupted_writer_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    // As if the writer died after its SQLite commit, before the tantivy one.
    std::fs::remove_dir_all(crate::lexical::lexical_dir(&dir.path().join("indexes/1"))).unwrap();
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert_eq!(search_both(&reader), (2, 2));
    assert!(
        !reader.is_writable(),
        "the repair takes the lock only for its duration"
    );
    assert!(open_writer(dir.path(), Duration::ZERO).is_ok());
}

/// The lexical hits of "apples bananas cherries", as document sources'
/// ids, through a store opened `writable` or read-only.
fn lexical_documents(store: &EmbeddedStore) -> Vec<String> {
    let mut found: Vec<String> = store
        .lexical(
            &lib(),
            "apples bananas cherries",
            &Filter::default(),
            10,
            Bm25::default(),
        )
        .unwrap()
        .into_iter()
        .map(|h| h.chunk.as_str().split(':').next().unwrap().to_string())
        .collect();
    found.sort();
    found
}

fn ids(sources: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = sources
        .iter()
        .map(|s| DocumentId::derive(&lib(), s).to_string())
        .collect();
    ids.sort();
    ids
}

// Issue 14: a writer killed after tantivy wrote a segment's delete file and
// before it committed `meta.json` left a file under the name the replaying
// writer's commit wants (opstamps restart from the last commit): every
// later open failed with "FileAlreadyExists(<segment>.<opstamp>.del)".
#[test]
fn a_dead_writers_delete_file_does_not_break_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    let meta = crate::lexical::lexical_dir(&dir.path().join("indexes/1")).join("meta.json");
    let before = std::fs::read(&meta).unwrap();
    writable(dir.path())
        .delete_document(&DocumentId::derive(&lib(), "a.txt"))
        .unwrap();
    let orphans = std::fs::read_dir(meta.parent().unwrap())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("del".as_ref()))
        .count();
    assert_eq!(orphans, 1, "the delete wrote one delete file");
    // The kill: SQLite committed the delete, tantivy's meta.json did not.
    std::fs::write(&meta, before).unwrap();
    for access in [
        Access::ReadOnly,
        Access::ReadWrite {
            lock_wait: Duration::ZERO,
        },
    ] {
        let store = EmbeddedStore::open(dir.path(), access).unwrap();
        assert_eq!(lexical_documents(&store), ids(&["b.txt"]), "{access:?}");
        assert_eq!(store.stats(&lib()).unwrap().index["lexical_chunks"], 1);
    }
}

// Issue 14: whatever left the lexical index without a document the
// database holds (here: its postings deleted behind the store's back), the
// first open of the library sees the count differ and rebuilds it, for a
// writer and for a reader alike.
#[test]
fn a_lexical_index_missing_documents_is_rebuilt_on_open() {
    for access in [
        Access::ReadOnly,
        Access::ReadWrite {
            lock_wait: Duration::ZERO,
        },
    ] {
        let dir = tempfile::tempdir().unwrap();
        seed(&writable(dir.path()));
        {
            let index = tantivy::Index::open_in_dir(crate::lexical::lexical_dir(
                &dir.path().join("indexes/1"),
            ))
            .unwrap();
            let document = index.schema().get_field("document").unwrap();
            let mut writer: tantivy::IndexWriter =
                index.writer_with_num_threads(1, 15_000_000).unwrap();
            let a = DocumentId::derive(&lib(), "a.txt");
            writer.delete_term(tantivy::Term::from_field_text(document, a.as_str()));
            let mut commit = writer.prepare_commit().unwrap();
            // The watermark stays where it was: only the postings are lost.
            let watermark = index.load_metas().unwrap().payload.unwrap();
            commit.set_payload(&watermark);
            commit.commit().unwrap();
        }
        let store = EmbeddedStore::open(dir.path(), access).unwrap();
        assert_eq!(
            lexical_documents(&store),
            ids(&["a.txt", "b.txt"]),
            "{access:?}"
        );
    }
}

/// Deletes document `source`'s whole-text entry from the lexical index,
/// keeping its chunk entries and the watermark: as if a crash fell between
/// the two.
fn lose_document_entry(dir: &Path, source: &str) {
    let index =
        tantivy::Index::open_in_dir(crate::lexical::lexical_dir(&dir.join("indexes/1"))).unwrap();
    let kind = index.schema().get_field("kind").unwrap();
    let doc_key = index.schema().get_field("doc_key").unwrap();
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
    let id = DocumentId::derive(&lib(), source);
    let key = crate::lexical::document_key(id.as_str()).unwrap();
    writer
        .delete_query(Box::new(tantivy::query::BooleanQuery::intersection(vec![
            Box::new(tantivy::query::TermQuery::new(
                tantivy::Term::from_field_text(kind, "document"),
                tantivy::schema::IndexRecordOption::Basic,
            )),
            Box::new(tantivy::query::TermQuery::new(
                tantivy::Term::from_field_u64(doc_key, key),
                tantivy::schema::IndexRecordOption::Basic,
            )),
        ])))
        .unwrap();
    let mut commit = writer.prepare_commit().unwrap();
    let watermark = index.load_metas().unwrap().payload.unwrap();
    commit.set_payload(&watermark);
    commit.commit().unwrap();
}

// Issue 26 §3: `folio check` and the first-use count check compared chunk
// keys only, so a document's lost whole-text entry (which grouped searches
// rank by) went unnoticed.
#[test]
fn a_lost_document_entry_is_reported_and_rebuilt_on_open() {
    for access in [
        Access::ReadOnly,
        Access::ReadWrite {
            lock_wait: Duration::from_millis(200),
        },
    ] {
        let dir = tempfile::tempdir().unwrap();
        seed(&writable(dir.path()));
        lose_document_entry(dir.path(), "a.txt");
        // The index as it is, before any repair: verify names the document.
        let lexical = crate::lexical::Lexical::open(
            &crate::lexical::lexical_dir(&dir.path().join("indexes/1")),
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(lexical.len().unwrap(), 2, "the chunk entries stay");
        assert_eq!(lexical.document_count().unwrap(), 1);
        drop(lexical);

        let store = EmbeddedStore::open(dir.path(), access).unwrap();
        let integrity = store.verify(&lib()).unwrap();
        assert!(integrity.problems.is_empty(), "{access:?}: {integrity:?}");
        let found = store
            .lexical_documents(&lib(), "apples", &Filter::default(), 10, Bm25::default())
            .unwrap();
        assert_eq!(found.len(), 1, "{access:?}: the document ranks again");
    }
}

#[test]
fn verify_names_a_document_whose_whole_text_entry_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    let store = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert!(store.verify(&lib()).unwrap().problems.is_empty());
    // Lost while this store has the library open: no reopen repairs it.
    lose_document_entry(dir.path(), "a.txt");
    let a = DocumentId::derive(&lib(), "a.txt");
    let integrity = store.verify(&lib()).unwrap();
    assert_eq!(
        integrity.problems,
        vec![format!(
            "document {a}: its whole-text entry is missing from the lexical index"
        )]
    );
}

// Issue 26: "whole or absent" was read from the stored chunk_count; verify
// now counts the chunk rows, so a document missing chunks that its row
// records is named even when every index agrees with the rows.
#[test]
fn verify_names_a_document_with_fewer_chunk_rows_than_it_records() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    let store = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert!(store.verify(&lib()).unwrap().problems.is_empty());
    let a = DocumentId::derive(&lib(), "a.txt");
    let conn = rusqlite::Connection::open(dir.path().join("folio.sqlite")).unwrap();
    conn.execute(
        "UPDATE documents SET chunk_count = chunk_count + 2 WHERE id = ?",
        [a.as_str()],
    )
    .unwrap();
    let integrity = store.verify(&lib()).unwrap();
    assert_eq!(
        integrity.problems,
        vec![format!("document {a}: 1 chunks stored of 3")]
    );
}

// A vector index missing a chunk the database holds is rebuilt on open too.
#[test]
fn a_vector_index_missing_chunks_is_rebuilt_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    seed(&store);
    store.flush().unwrap();
    let row = {
        let conn = store.conn();
        EmbeddedStore::library_row(&conn, &lib()).unwrap()
    };
    let index = store.indexes.read().unwrap()[&row.id].clone();
    index.vectors.remove(&[1]).unwrap();
    index
        .vectors
        .save(&index.dir, log_head(&store.conn(), row.id).unwrap())
        .unwrap();
    drop(index);
    std::mem::forget(store);
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert_eq!(search_both(&reader), (2, 2));
}

// Issue 16: a server held the write lock for its whole life, so the CLI
// could not write beside a connected agent. Under shared access each write
// takes the lock for its own length: two stores (as two processes) write
// in turn, each sees the other's documents, and no lock is left held.
#[test]
fn shared_writers_take_turns_and_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let shared = || {
        EmbeddedStore::open(
            dir.path(),
            Access::Shared {
                lock_wait: Duration::from_secs(5),
            },
        )
        .unwrap()
    };
    let (a, b) = (shared(), shared());
    a.create_library(&lib(), &space()).unwrap();
    a.put_documents(
        vec![document(
            &lib(),
            "a.txt",
            &["apples and pears"],
            &[0],
            json!({}),
        )],
        false,
    )
    .unwrap();
    assert!(!a.is_writable(), "the lock is released after the write");
    b.put_documents(
        vec![document(&lib(), "b.txt", &["bananas"], &[1], json!({}))],
        false,
    )
    .unwrap();
    a.put_documents(
        vec![document(&lib(), "c.txt", &["cherries"], &[2], json!({}))],
        false,
    )
    .unwrap();
    for store in [&a, &b] {
        assert_eq!(lexical_documents(store), ids(&["a.txt", "b.txt", "c.txt"]));
        assert!(store.verify(&lib()).unwrap().problems.is_empty());
    }
    b.delete_document(&DocumentId::derive(&lib(), "a.txt"))
        .unwrap();
    assert_eq!(lexical_documents(&a), ids(&["b.txt", "c.txt"]));
    // Nobody holds the write lock between writes: an owning writer can open.
    drop(open_writer(dir.path(), Duration::ZERO).unwrap());
}

// Filters' allowed keys are cached for one generation: a metadata update in
// this process, or a write by another process, changes what the same
// filter allows on the next search.
#[test]
fn a_cached_filter_follows_writes_here_and_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let shared = || {
        EmbeddedStore::open(
            dir.path(),
            Access::Shared {
                lock_wait: Duration::from_secs(5),
            },
        )
        .unwrap()
    };
    let (a, b) = (shared(), shared());
    a.create_library(&lib(), &space()).unwrap();
    let put = |store: &EmbeddedStore, source: &str, colour: &str| {
        store
            .put_documents(
                vec![document(
                    &lib(),
                    source,
                    &["plums"],
                    &[0],
                    json!({"colour": colour}),
                )],
                false,
            )
            .unwrap();
    };
    put(&a, "1.txt", "red");
    put(&a, "2.txt", "blue");
    let red = Filter::from_json(&json!({"colour": "red"})).unwrap();
    let found = |store: &EmbeddedStore| {
        let lexical = store
            .lexical(&lib(), "plums", &red, 10, Bm25::default())
            .unwrap();
        let dense = store.dense(&lib(), &axis(0, 0.0), &red, 10).unwrap();
        assert_eq!(lexical.len(), dense.len());
        lexical.len()
    };
    assert_eq!((found(&a), found(&b)), (1, 1));
    assert_eq!((found(&a), found(&b)), (1, 1));
    // Here: the blue document turns red.
    let blue = DocumentId::derive(&lib(), "2.txt");
    let mut metadata = serde_json::Map::new();
    metadata.insert("colour".into(), json!("red"));
    a.update_metadata(&blue, metadata).unwrap();
    assert_eq!((found(&a), found(&b)), (2, 2));
    // Elsewhere: another process adds a red one.
    put(&b, "3.txt", "red");
    assert_eq!((found(&a), found(&b)), (3, 3));
    // Library counts are cached per generation too, and follow the same.
    let counts = |store: &EmbeddedStore| {
        let info = store.library(&lib()).unwrap();
        (info.document_count, info.chunk_count)
    };
    assert_eq!((counts(&a), counts(&b)), ((3, 3), (3, 3)));
    b.delete_document(&blue).unwrap();
    assert_eq!((counts(&a), counts(&b)), ((2, 2), (2, 2)));
    put(&a, "4.txt", "green");
    assert_eq!((counts(&a), counts(&b)), ((3, 3), (3, 3)));
}

// A filter on metadata alone takes its chunks' keys from the chunk
// directory, not the chunk rows: both give the same keys and documents
// while documents gain and lose chunks, here and in another process, and
// a reader whose vector index is behind the log reads the rows.
#[test]
fn a_metadata_filter_from_the_directory_matches_the_chunk_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (shared(dir.path()), shared(dir.path()));
    a.create_library(&lib(), &space()).unwrap();
    let put = |store: &EmbeddedStore, source: &str, chunks: usize, colour: &str| {
        let texts = ["plums", "pears", "figs", "dates"];
        let axes = [0, 1, 2, 3];
        store
            .put_documents(
                vec![document(
                    &lib(),
                    source,
                    &texts[..chunks],
                    &axes[..chunks],
                    json!({"colour": colour}),
                )],
                false,
            )
            .unwrap();
    };
    let red = Filter::from_json(&json!({"colour": "red"})).unwrap();
    let allowed = |store: &EmbeddedStore| {
        let conn = store.conn();
        let row = EmbeddedStore::library_row(&conn, &lib()).unwrap();
        let index = store.index(&conn, &row).unwrap();
        let from_directory = EmbeddedStore::allowed_from_directory(&conn, &index, &red)
            .unwrap()
            .expect("a current directory answers a metadata filter");
        let from_rows = EmbeddedStore::allowed_from_chunks(&conn, index.id, &red).unwrap();
        assert_eq!(from_directory, from_rows);
        (from_directory.0.len(), from_directory.1.len())
    };
    put(&a, "1.txt", 3, "red");
    put(&a, "2.txt", 2, "blue");
    put(&a, "3.txt", 1, "red");
    assert_eq!((allowed(&a), allowed(&b)), ((4, 2), (4, 2)));
    // Fewer chunks, then more, in place.
    put(&a, "1.txt", 1, "red");
    assert_eq!((allowed(&a), allowed(&b)), ((2, 2), (2, 2)));
    put(&b, "1.txt", 4, "red");
    assert_eq!((allowed(&a), allowed(&b)), ((5, 2), (5, 2)));
    b.delete_document(&DocumentId::derive(&lib(), "3.txt"))
        .unwrap();
    let blue = DocumentId::derive(&lib(), "2.txt");
    let mut metadata = serde_json::Map::new();
    metadata.insert("colour".into(), json!("red"));
    a.update_metadata(&blue, metadata).unwrap();
    assert_eq!((allowed(&a), allowed(&b)), ((6, 2), (6, 2)));
    // A write elsewhere that the reader's directory has not replayed yet:
    // the directory does not answer, and the search, which replays it
    // first, finds every chunk.
    let before = {
        let conn = a.conn();
        let row = EmbeddedStore::library_row(&conn, &lib()).unwrap();
        a.index(&conn, &row).unwrap()
    };
    put(&b, "4.txt", 2, "red");
    assert!(
        EmbeddedStore::allowed_from_directory(&a.conn(), &before, &red)
            .unwrap()
            .is_none()
    );
    let dense = a.dense(&lib(), &axis(0, 0.0), &red, 20).unwrap();
    assert_eq!(dense.len(), 8);
    assert_eq!(allowed(&a), (8, 3));
}

// Metadata filters read the metadata index; a database from before it
// (schema 2) gets it filled on open, and answers as before.
#[test]
fn a_schema_2_database_gets_its_metadata_index_on_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = writable(dir.path());
        store.create_library(&lib(), &space()).unwrap();
        store
            .put_documents(
                vec![
                    document(
                        &lib(),
                        "a.txt",
                        &["figs"],
                        &[0],
                        json!({"tags": ["x", "y"], "year": 2019}),
                    ),
                    document(
                        &lib(),
                        "b.txt",
                        &["figs"],
                        &[1],
                        json!({"tags": "y", "year": "2021-03-01"}),
                    ),
                    document(
                        &lib(),
                        "c.txt",
                        &["figs"],
                        &[2],
                        json!({"tags": ["z"], "year": [2019]}),
                    ),
                ],
                false,
            )
            .unwrap();
    }
    let conn = rusqlite::Connection::open(dir.path().join("folio.sqlite")).unwrap();
    conn.execute_batch("DROP TABLE metadata_values; PRAGMA user_version = 2;")
        .unwrap();
    drop(conn);
    let store = writable(dir.path());
    let count = |filter: serde_json::Value| {
        store
            .lexical(
                &lib(),
                "figs",
                &Filter::from_json(&filter).unwrap(),
                10,
                Bm25::default(),
            )
            .unwrap()
            .len()
    };
    assert_eq!(count(json!({"tags": "y"})), 2);
    assert_eq!(count(json!({"tags": ["x", "z"]})), 2);
    // A range compares whole values: "2021-03-01" as 2021, a list never.
    assert_eq!(count(json!({"year": {"gte": 2019}})), 2);
    assert_eq!(count(json!({"year": {"gt": 2020}})), 1);
    assert_eq!(count(json!({"tags": {"ieq": "Z"}})), 1);
}

// Version 4 adds only the index that counts a library's documents: a
// version 3 database gets it on open, keeps its metadata index as it was
// (not filled twice), and counts as before.
#[test]
fn a_schema_3_database_gets_its_count_index_on_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = writable(dir.path());
        store.create_library(&lib(), &space()).unwrap();
        store
            .put_documents(
                vec![
                    document(
                        &lib(),
                        "a.txt",
                        &["apples"],
                        &[0],
                        json!({"tags": ["x", "y"]}),
                    ),
                    document(&lib(), "b.txt", &["bananas"], &[1], json!({"year": 2020})),
                ],
                false,
            )
            .unwrap();
    }
    let path = dir.path().join("folio.sqlite");
    let metadata_rows = || {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let rows: i64 = conn
            .query_row("SELECT COUNT(*) FROM metadata_values", [], |r| r.get(0))
            .unwrap();
        let indexed: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'documents_chunk_counts'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (rows, indexed)
    };
    let before = metadata_rows().0;
    assert_eq!(before, 3);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP INDEX documents_chunk_counts; PRAGMA user_version = 3;")
        .unwrap();
    drop(conn);
    assert_eq!(metadata_rows(), (before, 0));
    let store = writable(dir.path());
    assert_eq!(metadata_rows(), (before, 1));
    let info = store.library(&lib()).unwrap();
    assert_eq!((info.document_count, info.chunk_count), (2, 2));
    let tagged = Filter::from_json(&json!({"tags": "y"})).unwrap();
    let found = store
        .lexical(&lib(), "apples bananas", &tagged, 10, Bm25::default())
        .unwrap();
    assert_eq!(found.len(), 1);
}

// A shared writer whose search rebuilt a lost vector index saves it on
// flush, under the write lock, so the next process loads it instead of
// rebuilding it again.
#[test]
fn a_shared_writer_saves_an_index_its_search_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    let vectors = dir.path().join("indexes/1/vectors.usearch");
    assert!(vectors.exists());
    std::fs::remove_file(&vectors).unwrap();
    let shared = EmbeddedStore::open(
        dir.path(),
        Access::Shared {
            lock_wait: Duration::from_secs(5),
        },
    )
    .unwrap();
    assert_eq!(search_both(&shared), (2, 2));
    assert!(!vectors.exists());
    shared.flush().unwrap();
    assert!(vectors.exists());
    assert!(!shared.is_writable());
    drop(shared);
    let (loaded, watermark) = Vectors::load(&dir.path().join("indexes/1"), 4).unwrap();
    assert_eq!(loaded.len(), 2);
    assert_eq!(
        watermark,
        log_head(&writable(dir.path()).conn(), 1).unwrap()
    );
}

// Issue 30: `folio check` covers the entity graph: a mention of a chunk
// that does not exist, or beyond its chunk's text, is named.
#[test]
fn verify_names_entity_mentions_outside_their_chunks() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    let store = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    let a = DocumentId::derive(&lib(), "a.txt");
    let conn = rusqlite::Connection::open(dir.path().join("folio.sqlite")).unwrap();
    let library: i64 = conn
        .query_row(
            "SELECT library_id FROM documents WHERE id = ?",
            [a.as_str()],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "INSERT INTO entity_mentions (library_id, document_id, entity, kind, chunk, start, stop)
         VALUES (?1, ?2, 'acme', 'organization', 0, 0, 4)",
        rusqlite::params![library, a.as_str()],
    )
    .unwrap();
    assert!(store.verify(&lib()).unwrap().problems.is_empty());
    for (chunk, stop) in [(7, 4), (0, 100_000)] {
        conn.execute(
            "INSERT INTO entity_mentions (library_id, document_id, entity, kind, chunk, start, stop)
             VALUES (?1, ?2, 'acme', 'organization', ?3, 0, ?4)",
            rusqlite::params![library, a.as_str(), chunk, stop],
        )
        .unwrap();
    }
    assert_eq!(
        store.verify(&lib()).unwrap().problems,
        vec!["2 entity mentions point outside the library's chunks".to_string()]
    );
}

/// Processes that open a new data directory at the same moment all get
/// it: switching a fresh database to WAL is a write that SQLite refuses
/// at once (no busy wait) when two connections race for it.
#[test]
fn a_new_data_directory_opened_by_many_at_once() {
    for _ in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let barrier = std::sync::Barrier::new(6);
        std::thread::scope(|scope| {
            let opened: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        EmbeddedStore::open(
                            dir.path(),
                            Access::Shared {
                                lock_wait: Duration::from_secs(30),
                            },
                        )
                        .map(|_| ())
                    })
                })
                .collect();
            for opened in opened {
                opened.join().unwrap().unwrap();
            }
        });
    }
}

/// The library's derived indexes as `store` holds them open.
fn open_index(store: &EmbeddedStore) -> Arc<LibraryIndex> {
    let id = EmbeddedStore::library_id(&store.conn(), &lib()).unwrap();
    store.indexes.read().unwrap()[&id].clone()
}

/// Whether the library's vector index is deferred in `store`, and how many
/// vectors it holds in memory.
fn vector_state(store: &EmbeddedStore) -> (bool, usize) {
    let index = open_index(store);
    let deferred = index.marks.lock().unwrap().deferred;
    (deferred, index.vectors.len())
}

/// What the saved vector index file covers: (watermark, vectors).
fn saved_vectors(dir: &Path) -> (i64, usize) {
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("indexes/1/vectors.json")).unwrap())
            .unwrap();
    (
        meta["watermark"].as_i64().unwrap(),
        meta["count"].as_u64().unwrap() as usize,
    )
}

fn dense_sources(store: &dyn Store, vector: &[f32]) -> Vec<String> {
    let hits = store.dense(&lib(), vector, &Filter::default(), 10).unwrap();
    let mut ids: Vec<String> = hits
        .iter()
        .map(|h| h.chunk.as_str().split(':').next().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

// Issue 33: an ingest of 100,000 files held the library's HNSW graph (about
// 60 MB) beside its encoder. A deferring writer's writes neither load the
// vector index nor replay into it; `settle` replays once and saves, and the
// index it leaves is the one a writer that never deferred leaves.
#[test]
fn a_deferring_writer_indexes_vectors_once_when_it_settles() {
    let dir = tempfile::tempdir().unwrap();
    seed(&writable(dir.path()));
    assert_eq!(saved_vectors(dir.path()).1, 2);
    let store = writable(dir.path());
    store.start_bulk().unwrap();
    for (i, source) in ["c.txt", "d.txt"].into_iter().enumerate() {
        store
            .put_documents(
                vec![document(&lib(), source, &["cherries"], &[2 + i], json!({}))],
                false,
            )
            .unwrap();
    }
    assert_eq!(vector_state(&store), (true, 0), "writes loaded the index");
    // A lexical search needs only the lexical index, which writes keep
    // current.
    let lexical = store
        .lexical(&lib(), "cherries", &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(lexical.len(), 2);
    assert_eq!(vector_state(&store), (true, 0));
    // Nothing was saved meanwhile: the file still covers the seed.
    assert_eq!(saved_vectors(dir.path()).1, 2);

    assert_eq!(store.settle().unwrap(), 2);
    assert_eq!(vector_state(&store), (false, 4));
    let head = log_head(&store.conn(), 1).unwrap();
    assert_eq!(saved_vectors(dir.path()), (head, 4));
    // After settling, writes keep the index current again.
    store
        .put_documents(
            vec![document(
                &lib(),
                "e.txt",
                &["elderberries"],
                &[3],
                json!({}),
            )],
            false,
        )
        .unwrap();
    assert_eq!(vector_state(&store), (false, 5));
    assert_eq!(store.settle().unwrap(), 0);
    drop(store);

    // The oracle: the same documents written by a store that never
    // deferred.
    let other = tempfile::tempdir().unwrap();
    let plain = writable(other.path());
    seed(&plain);
    for (source, text, axis_) in [
        ("c.txt", "cherries", 2),
        ("d.txt", "cherries", 3),
        ("e.txt", "elderberries", 3),
    ] {
        plain
            .put_documents(
                vec![document(&lib(), source, &[text], &[axis_], json!({}))],
                false,
            )
            .unwrap();
    }
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    for a in 0..4 {
        assert_eq!(
            dense_sources(&reader, &axis(a, 0.1)),
            dense_sources(&plain, &axis(a, 0.1))
        );
    }
    assert_eq!(vector_state(&reader), (false, 5));
}

// A search in a deferring process loads the index and replays the log onto
// it, and the writes after it keep it current; a deferring writer that dies
// before it settles leaves nothing a reader cannot replay.
#[test]
fn a_deferring_writers_search_loads_the_index_and_its_death_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    store.start_bulk().unwrap();
    seed(&store);
    assert_eq!(vector_state(&store), (true, 0));
    assert_eq!(search_both(&store), (2, 2));
    assert_eq!(vector_state(&store), (false, 2));
    store
        .put_documents(
            vec![document(&lib(), "c.txt", &["cherries"], &[2], json!({}))],
            false,
        )
        .unwrap();
    assert_eq!(vector_state(&store), (false, 3));
    drop(store);

    let store = writable(dir.path());
    store.start_bulk().unwrap();
    store
        .put_documents(
            vec![document(&lib(), "d.txt", &["dates"], &[3], json!({}))],
            false,
        )
        .unwrap();
    store
        .delete_document(&DocumentId::derive(&lib(), "a.txt"))
        .unwrap();
    assert_eq!(vector_state(&store), (true, 0));
    // Dies without settling (the forgotten store keeps its lock, so the
    // reader replays in memory).
    std::mem::forget(store);
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    let found = dense_sources(&reader, &axis(3, 0.0));
    assert_eq!(found, ids(&["b.txt", "c.txt", "d.txt"]));
}

fn shared(dir: &Path) -> EmbeddedStore {
    EmbeddedStore::open(
        dir,
        Access::Shared {
            lock_wait: Duration::from_secs(5),
        },
    )
    .unwrap()
}

/// The change-log position the committed lexical index covers.
fn lexical_watermark(dir: &Path) -> i64 {
    Lexical::open(&lexical::lexical_dir(&dir.join("indexes/1")), false)
        .unwrap()
        .unwrap()
        .watermark()
        .unwrap()
}

fn lexical_sources(store: &EmbeddedStore, query: &str) -> Vec<String> {
    let hits = store
        .lexical(&lib(), query, &Filter::default(), 500, Bm25::default())
        .unwrap();
    let mut ids: Vec<String> = hits
        .iter()
        .map(|h| h.chunk.as_str().split(':').next().unwrap().to_string())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// 300 notes (more than one batch of a lexical catch-up), each with its
/// own word and a shared one.
fn notes() -> Vec<NewDocument> {
    (0..300)
        .map(|i| {
            let text = format!("note{i} cherries");
            document(&lib(), &format!("n{i}.txt"), &[&text], &[2], json!({}))
        })
        .collect()
}

// Issue 33: a lexical writer started beside the encoder at every write of
// an ingest raised its peak memory by some 20 MB, more often the more files
// it held. A bulk write leaves the lexical index to `settle`: a reader in
// another process serves what is committed (the dense side replays the log
// itself) and does not do the bulk writer's indexing on a search's time; a
// search in the bulk process brings the index current for it; settling
// brings it to the head in one commit, and the index it leaves holds what
// SQLite holds.
#[test]
fn a_bulk_write_indexes_lexically_when_it_settles() {
    let dir = tempfile::tempdir().unwrap();
    seed(&shared(dir.path()));
    let seeded = lexical_watermark(dir.path());
    assert!(seeded > 0);

    let bulk = shared(dir.path());
    bulk.start_bulk().unwrap();
    bulk.put_documents(notes(), false).unwrap();
    bulk.delete_document(&DocumentId::derive(&lib(), "a.txt"))
        .unwrap();
    assert_eq!(
        lexical_watermark(dir.path()),
        seeded,
        "a bulk write indexed"
    );

    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert_eq!(lexical_sources(&reader, "cherries"), Vec::<String>::new());
    assert_eq!(lexical_watermark(dir.path()), seeded, "a reader repaired");
    // The dense side replays the change log in the reader's memory.
    assert_eq!(dense_sources(&reader, &axis(2, 0.0)).len(), 10);
    // The deleted document drops out when hits are resolved.
    assert_eq!(lexical_sources(&reader, "apples"), Vec::<String>::new());

    // A search in the bulk process brings the index current.
    let names: Vec<String> = (0..300).map(|i| format!("n{i}.txt")).collect();
    let all = ids(&names.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(lexical_sources(&bulk, "cherries"), all);
    let searched = log_head(&bulk.conn(), 1).unwrap();
    assert_eq!(lexical_watermark(dir.path()), searched);

    bulk.put_documents(
        vec![
            document(&lib(), "n7.txt", &["note7 dates"], &[1], json!({})),
            document(&lib(), "e.txt", &["elderberries"], &[3], json!({})),
        ],
        false,
    )
    .unwrap();
    assert_eq!(
        lexical_sources(&reader, "elderberries"),
        Vec::<String>::new()
    );
    assert_eq!(lexical_watermark(dir.path()), searched);

    bulk.settle().unwrap();
    let head = log_head(&bulk.conn(), 1).unwrap();
    assert_eq!(lexical_watermark(dir.path()), head);
    assert_eq!(lexical_sources(&reader, "elderberries"), ids(&["e.txt"]));
    assert_eq!(lexical_sources(&reader, "note7"), ids(&["n7.txt"]));
    assert_eq!(lexical_sources(&reader, "cherries").len(), 299);
    assert_eq!(lexical_sources(&reader, "bananas"), ids(&["b.txt"]));
    let index = open_index(&reader);
    assert!(lexical_matches(&reader.conn(), 1, index.lexical.get().unwrap()).unwrap());
}

// A bulk writer that dies before it settles releases its mark with its
// locks: the next reader brings the lexical index up to date itself, as
// after any writer's death.
#[test]
fn a_bulk_writers_death_leaves_the_lexical_index_to_readers() {
    let dir = tempfile::tempdir().unwrap();
    seed(&shared(dir.path()));
    let seeded = lexical_watermark(dir.path());
    let bulk = shared(dir.path());
    bulk.start_bulk().unwrap();
    bulk.put_documents(notes(), false).unwrap();
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert_eq!(lexical_sources(&reader, "note299"), Vec::<String>::new());
    assert_eq!(lexical_watermark(dir.path()), seeded);

    drop(bulk);
    assert_eq!(lexical_sources(&reader, "note299"), ids(&["n299.txt"]));
    assert_eq!(lexical_sources(&reader, "cherries").len(), 300);
    assert_eq!(
        lexical_watermark(dir.path()),
        log_head(&reader.conn(), 1).unwrap()
    );
}

// Issue 48: a new analyser's index is built from SQLite the first time a
// library is opened, committing as it goes. A build cut short goes on
// after the last document it committed, keeping what it built, and then
// takes in what changed since it started (here a bulk write before it goes
// on: a deletion and a change among the documents it had built, and a new
// document), leaving the index SQLite's.
#[test]
fn a_lexical_build_cut_short_goes_on_from_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    seed(&store);
    store.put_documents(notes(), false).unwrap();
    let started = log_head(&store.conn(), 1).unwrap();
    drop(store);
    let lexical_dir = lexical::lexical_dir(&dir.path().join("indexes/1"));
    std::fs::remove_dir_all(&lexical_dir).unwrap();

    let store = shared(dir.path());
    let (after, built) = {
        let conn = store.conn();
        let _lock = WriteLock::try_acquire(dir.path()).unwrap().unwrap();
        let lexical = Lexical::open(&lexical_dir, true).unwrap().unwrap();
        let mut batches = 0;
        let cut = lexical.build(
            &mut |add| {
                for_each_document_batch(&conn, 1, None, &mut |batch| {
                    batches += 1;
                    match batches {
                        1 => add(batch),
                        _ => Err(StoreError::io("reading documents", "cut short")),
                    }
                })
            },
            started,
            false,
            1,
        );
        assert!(cut.is_err());
        let (from, after) = lexical.build_place().unwrap().unwrap();
        assert_eq!(from, started);
        assert_eq!(lexical.watermark().unwrap(), 0, "a build covers nothing");
        lexical.reload().unwrap();
        assert_eq!(lexical.keys().unwrap().len(), LEXICAL_BATCH_DOCUMENTS);
        lexical.close_writer();
        drop(lexical);
        let index = tantivy::Index::open_in_dir(&lexical_dir).unwrap();
        (after, index.searchable_segment_ids().unwrap())
    };
    assert!(!built.is_empty());

    let mut notes: Vec<(String, String)> = (0..300)
        .map(|i| {
            let name = format!("n{i}.txt");
            (DocumentId::derive(&lib(), &name).to_string(), name)
        })
        .collect();
    notes.sort();
    let done: Vec<&str> = notes
        .iter()
        .filter(|(id, _)| *id <= after)
        .map(|(_, name)| name.as_str())
        .collect();
    let (gone, changed) = (done[0], done[1]);
    // A new document the resumed build reads as well as the catch-up.
    let new = (0..)
        .map(|i| format!("e{i}.txt"))
        .find(|name| DocumentId::derive(&lib(), name).to_string() > after)
        .unwrap();
    store.start_bulk().unwrap();
    store
        .delete_document(&DocumentId::derive(&lib(), gone))
        .unwrap();
    store
        .put_documents(
            vec![
                document(&lib(), changed, &["dates"], &[1], json!({})),
                document(&lib(), &new, &["elderberries"], &[3], json!({})),
            ],
            false,
        )
        .unwrap();
    store.settle().unwrap();

    let head = log_head(&store.conn(), 1).unwrap();
    assert_eq!(lexical_watermark(dir.path()), head);
    let segments = tantivy::Index::open_in_dir(&lexical_dir)
        .unwrap()
        .searchable_segment_ids()
        .unwrap();
    assert!(
        built.iter().all(|s| segments.contains(s)),
        "the build started again: {built:?} are not among {segments:?}"
    );
    assert_eq!(lexical_sources(&store, "cherries").len(), 298);
    assert_eq!(lexical_sources(&store, "dates"), ids(&[changed]));
    assert_eq!(lexical_sources(&store, "elderberries"), ids(&[&new]));
    assert_eq!(lexical_sources(&store, "apples"), ids(&["a.txt"]));
    let index = open_index(&store);
    assert!(lexical_matches(&store.conn(), 1, index.lexical.get().unwrap()).unwrap());
}

// Issue 33: a write deletes a document's old lexical entries only when the
// change log says it existed, since tantivy opens every segment to look a
// deletion up. Every way a document can change, written live and
// replayed from any point of the log, must still leave no stale entry.
#[test]
fn a_document_deletes_its_lexical_entries_only_when_it_held_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    seed(&store);
    let a = DocumentId::derive(&lib(), "a.txt");
    let put = |texts: &[&str]| {
        let axes: Vec<usize> = (0..texts.len()).collect();
        store
            .put_documents(
                vec![document(&lib(), "a.txt", texts, &axes, json!({}))],
                false,
            )
            .unwrap();
    };
    let chunks_of_a = || -> i64 {
        store
            .conn()
            .query_row(
                "SELECT count(*) FROM chunks WHERE document_id = ?",
                [a.as_str()],
                |r| r.get(0),
            )
            .unwrap()
    };
    // The oracle: a's chunk rows after each log entry, read from SQLite.
    let mut held = vec![chunks_of_a()];
    let steps: [&dyn Fn(); 6] = [
        &|| put(&["cherries", "apples again"]),
        &|| store.delete_document(&a).unwrap(),
        &|| put(&["cherries"]),
        &|| put(&["apples", "cherries"]),
        &|| put(&["apples"]),
        &|| store.delete_document(&a).unwrap(),
    ];
    let first = log_head(&store.conn(), 1).unwrap();
    for step in steps {
        step();
        held.push(chunks_of_a());
        // Live: each write replays its own entry.
        let index = open_index(&store);
        let lexical = index.lexical.get().unwrap();
        let (chunks, documents) = source_counts(&store.conn(), 1).unwrap();
        assert_eq!(
            (lexical.len().unwrap(), lexical.document_count().unwrap()),
            (chunks, documents)
        );
    }
    // Replayed from any point: the flag is whether a held chunks there.
    let head = log_head(&store.conn(), 1).unwrap();
    for from in first..head {
        let mut batch = Vec::new();
        for_each_changed_batch(&store.conn(), 1, from, head, &mut |b| {
            batch.extend(b);
            Ok(())
        })
        .unwrap();
        let entry = batch.iter().find(|d| d.id == a.as_str()).unwrap();
        assert_eq!(
            entry.replaces,
            held[(from - first) as usize] > 0,
            "from {from}"
        );
    }
}

/// Every chunk the database holds in the test library, as chunk ids.
fn live_chunks(store: &EmbeddedStore) -> BTreeSet<String> {
    let conn = store.conn();
    let mut stmt = conn
        .prepare("SELECT document_id || ':' || idx FROM chunks")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// The chunks named by a lexical search for `query` and by a dense search
/// near every axis.
fn named_chunks(store: &EmbeddedStore, query: &str) -> BTreeSet<String> {
    let mut named: BTreeSet<String> = store
        .lexical(&lib(), query, &Filter::default(), 50, Bm25::default())
        .unwrap()
        .into_iter()
        .map(|h| h.chunk.to_string())
        .collect();
    for axis_n in 0..3 {
        named.extend(
            store
                .dense(&lib(), &axis(axis_n, 0.1), &Filter::default(), 50)
                .unwrap()
                .into_iter()
                .map(|h| h.chunk.to_string()),
        );
    }
    named
}

// Issue 49: hits take their chunk ids from the library's in-memory
// directory, no longer from a database read each; it must follow every
// write, in the writer and in a reader that searched before the writes: a
// document replaced by one with fewer chunks, one deleted, one added. Every
// search names exactly the chunks the database holds.
#[test]
fn hits_name_the_live_chunks_after_replacements_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = writable(dir.path());
    seed(&store);
    let words = "cherries apples pears bananas plums";
    let three = document(
        &lib(),
        "c.txt",
        &["cherries one", "cherries two", "cherries three"],
        &[0, 1, 2],
        json!({}),
    );
    store.put_documents(vec![three], false).unwrap();
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    for s in [&store, &reader] {
        assert_eq!(named_chunks(s, words), live_chunks(&store));
        assert_eq!(named_chunks(s, words).len(), 5);
    }

    let one = document(&lib(), "c.txt", &["cherries again"], &[2], json!({}));
    store.put_documents(vec![one], true).unwrap();
    store
        .delete_document(&DocumentId::derive(&lib(), "b.txt"))
        .unwrap();
    let plums = document(
        &lib(),
        "d.txt",
        &["plums", "more plums"],
        &[1, 0],
        json!({}),
    );
    store.put_documents(vec![plums], false).unwrap();
    let live = live_chunks(&store);
    assert_eq!(live.len(), 4, "{live:?}");
    for s in [&store, &reader] {
        assert_eq!(named_chunks(s, words), live);
    }
    // And a reader opened now (its directory read whole from the database).
    let fresh = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    assert_eq!(named_chunks(&fresh, words), live);
}

// A server's search opened a new library's indexes while another thread
// or process held the write lock for the library's first document: with
// no lexical index on disk yet and none to repair, the library was kept
// without one, and its lexical search found nothing for the life of the
// process (a watched folder's first file, searched for as it was indexed).
#[test]
fn a_library_first_searched_before_its_lexical_index_exists_gets_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(
        dir.path(),
        Access::Shared {
            lock_wait: Duration::from_secs(5),
        },
    )
    .unwrap();
    store.create_library(&lib(), &space()).unwrap();
    let search = |query: &str| {
        store
            .lexical(&lib(), query, &Filter::default(), 10, Bm25::default())
            .unwrap()
    };
    {
        // Another writer holds the lock: nothing may be created or repaired.
        let _held = WriteLock::try_acquire(dir.path()).unwrap().unwrap();
        assert!(search("figs").is_empty());
    }
    store
        .put_documents(
            vec![document(
                &lib(),
                "a.md",
                &["figs are sweet"],
                &[0],
                json!({}),
            )],
            false,
        )
        .unwrap();
    assert_eq!(
        search("figs").len(),
        1,
        "the write's lexical index is searched"
    );
    // A reader in another process sees it too.
    let reader = EmbeddedStore::open(dir.path(), Access::ReadOnly).unwrap();
    let hits = reader
        .lexical(&lib(), "sweet", &Filter::default(), 10, Bm25::default())
        .unwrap();
    assert_eq!(hits.len(), 1);
}
