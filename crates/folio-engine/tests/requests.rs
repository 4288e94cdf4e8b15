//! The engine's request types against their promises (issue 26): any
//! request within the configured limits is answered or refused with a
//! structured error, never a panic; a read-only engine refuses every write
//! before any work, on both backends. Embeddings come from a deterministic
//! hashing embedder: nothing here is about embedding quality.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use folio_core::{Condition, EmbeddingSpace, ErrorCode, Filter, LibraryName, Limits, Pooling};
use folio_embed::{EmbedError, Embedder};
use folio_engine::cite::QuoteRequest;
use folio_engine::{
    ChunkingConfig, EmbedderConfig, Engine, EngineConfig, EngineError, FacetRequest, Fusion,
    IngestRequest, IngestTarget, Mode, OcrConfig, ResponseMode, SearchRequest, SilentProgress,
    StoreChunksRequest, StoredChunk,
};
use folio_store::Bm25;
use folio_testkit::postgres::TestDatabase;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Words hashed into 64 dimensions, L2-normalised: deterministic, fast,
/// and close for texts that share words.
struct HashEmbedder {
    space: EmbeddingSpace,
}

impl HashEmbedder {
    fn new() -> Self {
        HashEmbedder {
            space: EmbeddingSpace {
                model: "test/hash-64".into(),
                dim: 64,
                pooling: Pooling::Mean,
                normalized: true,
                query_prefix: String::new(),
                passage_prefix: String::new(),
                precision: Default::default(),
            },
        }
    }

    fn vector(text: &str) -> Vec<f32> {
        let mut v = vec![0f32; 64];
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            let h = word
                .to_lowercase()
                .bytes()
                .fold(1469598103934665603u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(1099511628211)
                });
            v[(h % 64) as usize] += 1.0;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 {
            v[0] = 1.0;
        } else {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

impl Embedder for HashEmbedder {
    fn space(&self) -> &EmbeddingSpace {
        &self.space
    }
    fn window(&self) -> usize {
        256
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count() + text.chars().filter(|c| c.is_ascii_punctuation()).count()
    }
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(Self::vector(text))
    }
    fn backend(&self) -> &'static str {
        "test-hash"
    }
}

fn config(dir: &Path, store_url: Option<&str>, writable: bool, limits: Limits) -> EngineConfig {
    EngineConfig {
        data_dir: dir.to_path_buf(),
        store_url: store_url.map(str::to_string),
        // Never loaded: the hashing embedder is handed over instead.
        embedder: EmbedderConfig::Candle {
            model_dir: dir.join("no-model"),
            model: Default::default(),
        },
        limits,
        chunking: ChunkingConfig::default(),
        roots: Vec::new(),
        guard_paths: false,
        allow_private_urls: false,
        fusion: Fusion::default(),
        bm25: Bm25::default(),
        writable: writable.then_some(Duration::from_secs(30)),
        ocr: OcrConfig {
            enabled: false,
            ..OcrConfig::default()
        },
        extraction: folio_engine::sandbox::Extraction::InProcess,
        rerank: None,
        entities: true,
        model_fetch: None,
    }
}

fn open(dir: &Path, store_url: Option<&str>, writable: bool, limits: Limits) -> Engine {
    Engine::open(config(dir, store_url, writable, limits))
        .unwrap()
        .with_embedder(Arc::new(HashEmbedder::new()))
}

fn library() -> LibraryName {
    LibraryName::new("papers").unwrap()
}

const TEXTS: [&str; 6] = [
    "# Rivers\n\nRivers carry sediment to their deltas, where it settles in fans.",
    "# Glaciers\n\nGlaciers grind the rock beneath them and leave moraines behind.",
    "# Deltas\n\nA delta grows where a river meets the sea and slows down.\n\n## Fans\n\nAlluvial fans form at the foot of mountains.",
    "# Dropout\n\nDropout regularises neural networks by zeroing units at random.",
    "# Attention\n\nSelf-attention relates every position of a sequence to every other.",
    "# Tides\n\nThe moon raises tides; spring tides follow full and new moons.",
];

/// TEXTS as content targets, `doc0.md` to `doc5.md`.
fn contents() -> Vec<IngestTarget> {
    TEXTS
        .iter()
        .enumerate()
        .map(|(i, text)| IngestTarget::Content {
            name: format!("doc{i}.md"),
            text: text.to_string(),
            format: None,
            title: None,
        })
        .collect()
}

/// A small library: documents with metadata to filter and facet on.
fn fill(engine: &Engine) {
    let mut request = IngestRequest::new(library(), contents());
    request.metadata = serde_json::from_value(json!({"year": 2020, "tags": ["earth", "water"]}))
        .expect("an object");
    let report = engine.ingest(&request, &SilentProgress).unwrap();
    assert_eq!(report.indexed, TEXTS.len(), "{report:?}");
}

/// Asserts a result is an answer or a structured refusal, never a bug.
fn structured<T>(what: &str, result: Result<T, EngineError>) {
    if let Err(e) = result {
        assert_ne!(e.code, ErrorCode::Internal, "{what}: {e}");
    }
}

#[test]
fn a_limit_beyond_what_search_serves_is_refused_and_deep_pages_do_not_panic() {
    // Issue 26 §2: with max_top_k 5000 a search of top_k 1500 panicked in
    // the candidate depth's clamp.
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_top_k: 5_000,
        ..Limits::default()
    };
    let refused = Engine::open(config(dir.path(), None, true, limits)).err();
    let refused = refused.expect("a limit above the ceiling is refused");
    assert_eq!(refused.code, ErrorCode::InvalidArgument);
    assert!(refused.to_string().contains("max_top_k"), "{refused}");

    let limits = Limits {
        max_top_k: Limits::TOP_K_CEILING,
        ..Limits::default()
    };
    let engine = open(dir.path(), None, true, limits);
    fill(&engine);
    for (top_k, candidates) in [
        (1_000, None),
        (1_000, Some(5)),
        (700, Some(5_000)),
        (1, Some(0)),
    ] {
        let mut request = SearchRequest::new(library(), "river delta");
        request.top_k = top_k;
        request.candidates = candidates;
        let response = engine.search(&request).unwrap();
        assert_eq!(response.hits.len(), TEXTS.len().min(top_k));
    }
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,40}",
        ".{0,80}",
        Just("river delta".to_string()),
        Just(" ".repeat(3)),
        "[\\PC]{4000,4100}",
    ]
}

fn any_float() -> impl Strategy<Value = f32> {
    prop_oneof![
        -2.0f32..3.0,
        Just(f32::NAN),
        Just(f32::INFINITY),
        Just(f32::NEG_INFINITY),
        Just(0.0),
    ]
}

fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::from),
        Just(json!(["earth"])),
        Just(json!({"nested": 1})),
    ]
}

fn any_field() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("year".to_string()),
        Just("tags".to_string()),
        Just("title".to_string()),
        ".{0,70}",
    ]
}

fn any_condition() -> impl Strategy<Value = Condition> {
    prop_oneof![
        (any_field(), any_value()).prop_map(|(field, value)| Condition::Equals { field, value }),
        (any_field(), ".{0,10}").prop_map(|(field, value)| Condition::EqualsFold { field, value }),
        (any_field(), prop::collection::vec(any_value(), 0..4))
            .prop_map(|(field, values)| Condition::AnyOf { field, values }),
        (
            any_field(),
            prop::option::of(any_value()),
            prop::option::of(any_value()),
            prop::option::of(any_value()),
            prop::option::of(any_value())
        )
            .prop_map(|(field, gte, gt, lte, lt)| Condition::Range {
                field,
                gte,
                gt,
                lte,
                lt
            }),
        ".{0,20}".prop_map(Condition::PathPrefix),
        prop_oneof![Just("Deltas > Fans".to_string()), ".{0,20}"]
            .prop_map(Condition::SectionPrefix),
    ]
}

fn any_mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::Hybrid), Just(Mode::Lexical), Just(Mode::Dense)]
}

fn any_response_mode() -> impl Strategy<Value = ResponseMode> {
    prop_oneof![
        Just(ResponseMode::IdsOnly),
        Just(ResponseMode::Metadata),
        Just(ResponseMode::Preview),
        Just(ResponseMode::Full),
    ]
}

fn any_fusion() -> impl Strategy<Value = Option<Fusion>> {
    prop::option::of(prop_oneof![
        (any_float(), any_float(), any_float()).prop_map(|(k, lexical_weight, dense_weight)| {
            Fusion::Rrf {
                k,
                lexical_weight,
                dense_weight,
            }
        }),
        any_float().prop_map(|lexical_weight| Fusion::Weighted { lexical_weight }),
    ])
}

/// The engine every property case uses: limits at the ceiling (the most a
/// configuration may allow), a small filled library.
fn shared_engine() -> &'static (tempfile::TempDir, Engine) {
    static ENGINE: std::sync::OnceLock<(tempfile::TempDir, Engine)> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_top_k: Limits::TOP_K_CEILING,
            ..Limits::default()
        };
        let engine = open(dir.path(), None, true, limits);
        fill(&engine);
        (dir, engine)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_search_is_answered_or_refused(
        query in any_text(),
        mode in any_mode(),
        top_k in 0usize..1_200,
        candidates in prop::option::of(0usize..5_000),
        response_mode in any_response_mode(),
        max_chars_per_chunk in 0usize..5_000,
        group_by_document in any::<bool>(),
        conditions in prop::collection::vec(any_condition(), 0..3),
        fusion in any_fusion(),
        bm25 in prop::option::of((any_float(), any_float())),
    ) {
        let (_, engine) = shared_engine();
        let mut request = SearchRequest::new(library(), query);
        request.mode = mode;
        request.top_k = top_k;
        request.candidates = candidates;
        request.response_mode = response_mode;
        request.max_chars_per_chunk = max_chars_per_chunk;
        request.group_by_document = group_by_document;
        request.filter = Filter { conditions };
        request.fusion = fusion;
        request.bm25 = bm25.map(|(k1, b)| Bm25 { k1, b });
        let result = engine.search(&request);
        if let Ok(response) = &result {
            prop_assert!(response.hits.len() <= top_k);
        }
        structured("search", result);
    }

    #[test]
    fn any_facet_request_is_answered_or_refused(
        group_by in prop::collection::vec(any_field(), 0..3),
        stats in prop::collection::vec(any_field(), 0..3),
        top_values in prop::option::of((any_field(), any::<usize>())),
        conditions in prop::collection::vec(any_condition(), 0..2),
        min_count in any::<u64>(),
        limit in any::<usize>(),
    ) {
        let (_, engine) = shared_engine();
        let request = FacetRequest {
            group_by,
            stats,
            top_values,
            filter: Filter { conditions },
            min_count,
            limit,
        };
        structured("facets", engine.facets(&library(), &request));
    }

    #[test]
    fn any_quote_request_is_answered_or_refused(
        passage in any_text(),
        document_id in prop::option::of(prop_oneof![".{0,20}", "[0-9a-f]{16}"]),
        min_score in prop_oneof![any::<f64>(), 0.0f64..1.0],
        limit in any::<usize>(),
        everywhere in any::<bool>(),
    ) {
        let (_, engine) = shared_engine();
        let request = QuoteRequest {
            passage,
            libraries: if everywhere { Vec::new() } else { vec![library()] },
            document_id,
            min_score,
            limit,
        };
        structured("find_quote", engine.find_quote(&request, &|| false));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_ingest_is_answered_or_refused(
        name in prop_oneof![".{0,30}", "[a-z]{1,8}\\.(md|txt|html|pdf|csv|jsonl)"],
        text in prop_oneof![".{0,400}", "(# [a-z]{1,10}\n\n[a-z ]{0,200}\n\n){0,5}"],
        format in prop::option::of(prop_oneof![Just("text".to_string()), Just("markdown".to_string()), Just("html".to_string()), ".{0,8}"]),
        title in prop::option::of(".{0,40}"),
        metadata in prop::collection::btree_map("[a-z]{1,6}", any_value(), 0..4),
        record in any::<bool>(),
    ) {
        let (_, engine) = shared_engine();
        let target = if record {
            IngestTarget::Record(metadata.clone().into_iter().collect::<Map<_, _>>())
        } else {
            IngestTarget::Content { name, text, format, title }
        };
        let mut request = IngestRequest::new(LibraryName::new("scratch").unwrap(), vec![target]);
        request.metadata = metadata.into_iter().collect();
        structured("ingest", engine.ingest(&request, &SilentProgress));
    }
}

/// Every write the engine offers, on a read-only engine: each is refused
/// with `read_only`, and the store does not move.
fn read_only_refuses_every_write(dir: &Path, store_url: Option<&str>) {
    let writer = open(dir, store_url, true, Limits::default());
    fill(&writer);
    let document = writer.documents(&library(), 0, 1).unwrap().0[0]
        .id
        .to_string();
    let count = writer.inspect(&library()).unwrap();
    drop(writer);

    let reader = open(dir, store_url, false, Limits::default());
    // A generation is the reader's own view (the embedded store's counts
    // this process's write sessions): read before and after the attempts.
    let generation = reader.store().generation().unwrap();
    let other = LibraryName::new("other").unwrap();
    let content = IngestTarget::Content {
        name: "new.md".into(),
        text: "# New\n\nA new text about estuaries.".into(),
        format: None,
        title: None,
    };
    let schema = folio_core::RecordSchema::from_value(json!({
        "key": "id",
        "text": "body",
        "fields": {"id": {"type": "keyword"}, "body": {"type": "text"}}
    }))
    .unwrap();
    let chunk = StoredChunk {
        id: "c1".into(),
        text: "a stored chunk".into(),
        vector: HashEmbedder::vector("a stored chunk"),
        title: None,
        source: None,
        page_start: None,
        page_end: None,
        section_path: Vec::new(),
        metadata: Map::new(),
    };
    let attempts: Vec<(&str, Result<(), EngineError>)> = vec![
        (
            "ingest",
            reader
                .ingest(
                    &IngestRequest::new(library(), vec![content.clone()]),
                    &SilentProgress,
                )
                .map(drop),
        ),
        (
            "ingest into a new library",
            reader
                .ingest(
                    &IngestRequest::new(other.clone(), vec![content]),
                    &SilentProgress,
                )
                .map(drop),
        ),
        (
            "store_chunks",
            reader
                .store_chunks(
                    &StoreChunksRequest {
                        library: library(),
                        chunks: vec![chunk],
                        model: None,
                        create_library: true,
                    },
                    &SilentProgress,
                )
                .map(drop),
        ),
        ("create_library", reader.create_library(&other).map(drop)),
        ("delete_library", reader.delete_library(&library())),
        ("delete_document", reader.delete_document(&document)),
        (
            "rebuild",
            reader.rebuild(&library(), &SilentProgress).map(drop),
        ),
        (
            "set_record_schema",
            reader.set_record_schema(&other, &schema),
        ),
        (
            "attach_references",
            reader.attach_references(&library(), &[]).map(drop),
        ),
        (
            "ingest_zotero",
            reader
                .ingest_zotero(
                    &folio_engine::zotero::ZoteroRequest {
                        library: library(),
                        dir: dir.to_path_buf(),
                        collection: None,
                        tag: None,
                        force: false,
                        ocr_languages: Vec::new(),
                    },
                    &SilentProgress,
                )
                .map(drop),
        ),
        (
            "copy_library",
            reader
                .copy_library(
                    &folio_engine::StoreLocation::Directory(dir.to_path_buf()),
                    &library(),
                    &SilentProgress,
                )
                .map(drop),
        ),
    ];
    for (what, result) in attempts {
        let error = result.expect_err(what);
        assert_eq!(error.code, ErrorCode::ReadOnly, "{what}: {error}");
    }
    // Reads still work, and nothing moved.
    assert_eq!(reader.store().generation().unwrap(), generation);
    assert_eq!(reader.inspect(&library()).unwrap().info, count.info);
    assert!(reader.library(&other).is_err());
    let hits = reader
        .search(&SearchRequest::new(library(), "river delta"))
        .unwrap();
    assert!(!hits.hits.is_empty());
}

#[test]
fn a_read_only_engine_refuses_every_write_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    read_only_refuses_every_write(dir.path(), None);
}

#[test]
fn a_read_only_engine_refuses_every_write_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("read_only");
    read_only_refuses_every_write(dir.path(), Some(&database.url));
}

#[test]
fn a_required_sandbox_is_never_skipped() {
    // Issue 26 §6: without its own executable folio parsed in process,
    // silently; `[limits] require_sandbox` refuses that.
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        require_sandbox: true,
        ..Limits::default()
    };
    let error = Engine::open(config(dir.path(), None, true, limits))
        .err()
        .expect("an in-process extraction is refused when the sandbox is required");
    assert_eq!(error.code, ErrorCode::InvalidArgument);
    assert!(error.to_string().contains("require_sandbox"), "{error}");
}

// Issue 27 §1: the depth fused grew with the page (5 × top_k, at least 50)
// and min-max normalisation moved with it, so a page of 10 was not the top
// of a page of 100, and `folio eval` (a page of 100) measured a ranking no
// agent got. Now the ranking does not depend on the page size.
#[test]
fn a_page_of_ten_is_the_top_of_a_page_of_a_hundred() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), None, true, Limits::default());
    let words = [
        "river", "delta", "sediment", "glacier", "moraine", "basalt", "aquifer", "monsoon",
        "estuary", "lagoon", "tundra", "plateau", "canyon", "fjord", "dune", "meander",
    ];
    let targets = (0..240)
        .map(|i| {
            let text: Vec<&str> = (0..12 + i % 9)
                .map(|w| words[(i * 7 + w * w * 3 + w) % words.len()])
                .collect();
            IngestTarget::Content {
                name: format!("note{i}.md"),
                text: format!("# Note {i}\n\n{}.", text.join(" ")),
                format: None,
                title: None,
            }
        })
        .collect();
    let report = engine
        .ingest(&IngestRequest::new(library(), targets), &SilentProgress)
        .unwrap();
    assert_eq!(report.indexed, 240, "{report:?}");
    for query in [
        "river delta sediment",
        "glacier moraine",
        "monsoon estuary lagoon dune",
    ] {
        let page = |top_k: usize| {
            let mut request = SearchRequest::new(library(), query);
            request.top_k = top_k;
            engine
                .search(&request)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| (h.document_id, h.score))
                .collect::<Vec<_>>()
        };
        let (ten, hundred) = (page(10), page(100));
        assert_eq!(ten.len(), 10);
        assert_eq!(ten[..], hundred[..10], "{query}");
    }
}

/// Issue 29: a key is shown once, stored as its hash, accepted only whole
/// and unexpired, and refused on every engine of the store within
/// `RECHECK` of its revocation.
fn keys_live_and_die(dir: &Path, store_url: Option<&str>) {
    use folio_engine::keys::{NewKey, RECHECK, Scope, key_hash};
    let writer = open(dir, store_url, true, Limits::default());
    let reader = open(dir, store_url, false, Limits::default());
    let new = NewKey {
        name: "alice".into(),
        scopes: [Scope::Search, Scope::Ingest].into(),
        libraries: Some([library()].into()),
        expires_in: Some(Duration::from_secs(3_600)),
        rate_per_minute: Some(60),
    };
    let (token, record) = writer.create_key(&new).unwrap();
    assert!(token.starts_with("folio_") && token.len() == 70, "{token}");
    assert_eq!(record.hash, key_hash(&token));
    let stored = serde_json::to_string(&writer.keys().unwrap()).unwrap();
    assert!(
        !stored.contains(&token[6..]),
        "the key itself is never stored"
    );
    assert_eq!(
        writer.create_key(&new).unwrap_err().code,
        ErrorCode::InvalidArgument,
        "names are unique"
    );
    assert_eq!(
        reader.create_key(&new).unwrap_err().code,
        ErrorCode::ReadOnly
    );

    assert!(
        reader.authenticate_cached(&token).is_none(),
        "a key not yet looked up needs the store"
    );
    let alice = reader.authenticate(&token).unwrap();
    assert_eq!(reader.authenticate_cached(&token).unwrap().unwrap(), alice);
    assert_eq!(
        reader
            .authenticate_cached("folio_xyz")
            .unwrap()
            .unwrap_err()
            .code,
        ErrorCode::Unauthorized
    );
    assert_eq!(alice.name, "alice");
    assert_eq!(alice.scopes, [Scope::Search, Scope::Ingest].into());
    assert_eq!(alice.libraries, Some([library()].into()));
    writer.authenticate(&token).unwrap();
    // Recorded off the request, a moment later.
    wait_until("the key's use is recorded", Duration::from_secs(20), || {
        writer.keys().unwrap()[0].last_used_at.is_some()
    });

    // Issue 46 §11: a lifetime past what the clock holds is refused, not a
    // panic; one of a hundred years and less is taken.
    for (days, taken) in [
        (36_525u64, true),
        (3_000_000, false),
        (u64::MAX / 86_400, false),
    ] {
        let created = writer.create_key(&NewKey {
            name: format!("lifetime-{days}"),
            expires_in: Some(Duration::from_secs(days * 86_400)),
            ..new.clone()
        });
        match created {
            Ok((key, _)) => {
                assert!(taken, "{days} days");
                assert!(writer.authenticate(&key).is_ok(), "{days} days: valid now");
                writer.revoke_key(&format!("lifetime-{days}")).unwrap();
            }
            Err(e) => {
                assert!(!taken, "{days} days: {e}");
                assert_eq!(e.code, ErrorCode::InvalidArgument);
            }
        }
    }

    let last = token.chars().last().unwrap();
    let flipped = format!("{}{}", &token[..69], if last == '0' { '1' } else { '0' });
    for forged in [
        flipped.as_str(),
        "folio_xyz",
        "",
        &token[..69],
        &token.to_uppercase(),
    ] {
        let refused = reader.authenticate(forged).unwrap_err();
        assert_eq!(refused.code, ErrorCode::Unauthorized, "{forged}");
        assert!(!refused.message.contains(&token[6..]));
    }

    let (expired, _) = writer
        .create_key(&NewKey {
            name: "old".into(),
            expires_in: Some(Duration::ZERO),
            ..new.clone()
        })
        .unwrap();
    assert!(
        reader
            .authenticate(&expired)
            .unwrap_err()
            .message
            .contains("expired")
    );

    writer.revoke_key("alice").unwrap();
    assert_eq!(
        writer.authenticate(&token).unwrap_err().code,
        ErrorCode::Unauthorized
    );
    std::thread::sleep(RECHECK + Duration::from_millis(200));
    assert!(
        reader.authenticate_cached(&token).is_none(),
        "past RECHECK the store is asked again"
    );
    assert_eq!(
        reader.authenticate(&token).unwrap_err().code,
        ErrorCode::Unauthorized,
        "revoked on every engine within RECHECK"
    );
    assert_eq!(
        writer.revoke_key("alice").unwrap_err().code,
        ErrorCode::NotFound
    );
}

#[test]
fn keys_live_and_die_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    keys_live_and_die(dir.path(), None);
}

// Issue 46 §7: a key's first request recorded its use under the data
// directory's write lock, so with another process writing it waited for
// the lock (8 s to 30 s). It answers now while the lock is held, and the
// use is recorded once the lock is free.
#[test]
fn a_key_is_accepted_while_another_process_holds_the_write_lock() {
    use folio_engine::keys::{NewKey, Scope};
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(open(dir.path(), None, true, Limits::default()));
    let (token, _) = engine
        .create_key(&NewKey {
            name: "bot".into(),
            scopes: [Scope::Search].into(),
            libraries: None,
            expires_in: None,
            rate_per_minute: None,
        })
        .unwrap();
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.path().join("write.lock"))
        .unwrap();
    held.lock().unwrap();
    let (answered, answer) = std::sync::mpsc::channel();
    let presenting = engine.clone();
    let key = token.clone();
    std::thread::spawn(move || {
        let _ = answered.send(presenting.authenticate(&key).map(|p| p.name));
    });
    let principal = answer
        .recv_timeout(Duration::from_secs(10))
        .expect("the key is answered while the write lock is held");
    assert_eq!(principal.unwrap(), "bot");
    assert!(engine.keys().unwrap()[0].last_used_at.is_none());
    held.unlock().unwrap();
    drop(held);
    wait_until(
        "the use is recorded once the lock is free",
        Duration::from_secs(60),
        || engine.keys().unwrap()[0].last_used_at.is_some(),
    );
}

/// Waits for `done`, failing with `what` past `limit`.
fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn keys_live_and_die_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("keys");
    keys_live_and_die(dir.path(), Some(&database.url));
}

/// Issue 30: ingesting finds the names a document repeats and writes their
/// mentions with it, on both backends; a replaced document's mentions are
/// its new text's; `[ingest] entities = false` finds none.
fn ingest_writes_entity_mentions(dir: &Path, store_url: Option<&str>) {
    let engine = open(dir, store_url, true, Limits::default());
    let text = "# Deals\n\nAcme Corp. signed with Globex Inc. on Monday. Later Globex Inc. paid \
                Acme Corp. twice, and Jane Roe approved. The board thanked Jane Roe.";
    let content = |text: &str| IngestTarget::Content {
        name: "deals.md".into(),
        text: text.into(),
        format: None,
        title: None,
    };
    let report = engine
        .ingest(
            &IngestRequest::new(library(), vec![content(text)]),
            &SilentProgress,
        )
        .unwrap();
    assert_eq!(report.indexed, 1, "{report:?}");
    let found: Vec<(String, String, u64)> = engine
        .entities(&library(), None, None, 10)
        .unwrap()
        .into_iter()
        .map(|e| (e.entity, e.kind, e.mentions))
        .collect();
    assert_eq!(
        found,
        vec![
            ("acme corp".into(), "organization".into(), 2),
            ("globex inc".into(), "organization".into(), 2),
            ("jane roe".into(), "name".into(), 2),
        ]
    );
    // Each mention points at its words in its chunk.
    let id = report.items[0].document_id.clone().unwrap();
    let id = folio_core::DocumentId::parse(&id).unwrap();
    let chunks = engine.store().chunks(&id, 0..100).unwrap();
    for m in engine.store().document_mentions(&id).unwrap() {
        let text = &chunks[m.chunk as usize].text[m.start as usize..m.end as usize];
        assert_eq!(folio_entities::fold_name(text), m.entity);
    }
    let related = engine.store().related(&library(), "acme corp", 10).unwrap();
    assert!(
        related.iter().any(|r| r.entity == "globex inc"),
        "{related:?}"
    );

    let report = engine
        .ingest(
            &IngestRequest::new(
                library(),
                vec![content("Initech Ltd and Initech Ltd again.")],
            ),
            &SilentProgress,
        )
        .unwrap();
    assert_eq!(report.replaced, 1);
    let found: Vec<String> = engine
        .entities(&library(), None, None, 10)
        .unwrap()
        .into_iter()
        .map(|e| e.entity)
        .collect();
    assert_eq!(found, vec!["initech ltd"]);

    drop(engine);
    let mut quiet = config(dir, store_url, true, Limits::default());
    quiet.entities = false;
    let quiet = Engine::open(quiet)
        .unwrap()
        .with_embedder(Arc::new(HashEmbedder::new()));
    let other = LibraryName::new("quiet").unwrap();
    quiet
        .ingest(
            &IngestRequest::new(other.clone(), vec![content(text)]),
            &SilentProgress,
        )
        .unwrap();
    assert!(quiet.entities(&other, None, None, 10).unwrap().is_empty());
}

/// Issue 30: declared entities (imported after the documents) are linked
/// by name and alias once the library is relinked, without embedding;
/// cards show aliases, attributes, declared relations both ways and
/// weighted co-mentions; lookups go by alias, prefix and typo; the entity
/// filter keeps the chunks that mention the entity; a list two entities
/// share a name in is refused with nothing changed; a read-only engine
/// imports nothing.
fn declared_entities_link_relink_and_filter(dir: &Path, store_url: Option<&str>) {
    let engine = open(dir, store_url, true, Limits::default());
    let docs = [
        (
            "a.md",
            "ACME Corp. ships the turbines. Globex audits the turbines.",
        ),
        (
            "b.md",
            "The Acme Holdings board met. Acme Holdings and Globex agreed.",
        ),
        (
            "c.md",
            "Staplers come from Initech. We buy turbines from Initech too.",
        ),
    ];
    let targets = docs
        .iter()
        .map(|(name, text)| IngestTarget::Content {
            name: (*name).into(),
            text: (*text).into(),
            format: None,
            title: None,
        })
        .collect();
    let report = engine
        .ingest(&IngestRequest::new(library(), targets), &SilentProgress)
        .unwrap();
    assert_eq!(report.indexed, 3, "{report:?}");
    // Nothing declared yet: "Acme" appears in no kept name of a.md.
    assert!(engine.entity(&library(), "Acme Holdings").is_ok());
    let list: Vec<folio_store::Declared> = serde_json::from_value(serde_json::json!([
        {"name": "Acme Holdings", "kind": "organization", "aliases": ["ACME Corp", "Acme"],
         "attributes": {"country": "US"}},
        {"name": "Globex", "kind": "organization"},
        {"name": "Jane Roe", "kind": "person",
         "relations": [{"type": "member of", "target": "Acme"}]}
    ]))
    .unwrap();
    let imported = engine
        .import_entities(&library(), list.clone(), false)
        .unwrap();
    assert_eq!((imported.declared, imported.relinked.documents), (3, 3));

    let card = engine.entity(&library(), "acme corp.").unwrap();
    assert_eq!(card.entity, "acme holdings");
    assert_eq!(card.name, "Acme Holdings");
    assert_eq!(card.matched_by, folio_engine::MatchedBy::Alias);
    assert_eq!(card.documents, 2);
    assert_eq!(card.mentions, 3, "{card:?}");
    assert_eq!(card.attributes["country"], "US");
    assert_eq!(card.relations.len(), 1);
    assert_eq!(
        (
            card.relations[0].direction,
            card.relations[0].entity.as_str()
        ),
        ("incoming", "Jane Roe")
    );
    let globex = card
        .related
        .iter()
        .find(|r| r.entity == "globex")
        .expect("globex shares chunks with acme");
    assert_eq!(globex.shared_chunks, 2);
    assert!(
        globex.npmi > 0.0 && globex.evidence.len() == 2,
        "{globex:?}"
    );
    for e in &card.evidence {
        assert!(
            ["ACME Corp", "Acme Holdings"].contains(&e.surface.as_str()),
            "{e:?}"
        );
    }

    // Lookups: prefix, then typo.
    let by_prefix = engine.lookup(&library(), "glob", None, 5).unwrap();
    assert_eq!(by_prefix[0].entity, "globex");
    assert_eq!(by_prefix[0].matched_by, folio_engine::MatchedBy::Prefix);
    let typo = engine.entity(&library(), "Globx").unwrap();
    assert_eq!(
        (typo.entity.as_str(), typo.matched_by),
        ("globex", folio_engine::MatchedBy::Fuzzy)
    );
    assert_eq!(
        engine.entity(&library(), "Umbrella").unwrap_err().code,
        ErrorCode::NotFound
    );

    // The filter: "turbines" is in a.md twice and c.md once; only a.md's
    // chunk mentions Acme.
    let mut request = SearchRequest::new(library(), "turbines");
    request.filter = Filter::from_json(&serde_json::json!({"entity": "Acme"})).unwrap();
    let hits = engine.search(&request).unwrap().hits;
    assert!(!hits.is_empty());
    for hit in &hits {
        assert!(
            hit.source
                .as_deref()
                .is_some_and(|s| s.ends_with("a.md") || s.ends_with("b.md")),
            "{hit:?}"
        );
    }
    request.filter = Filter::from_json(&serde_json::json!({"entity": "Initech"})).unwrap();
    let hits = engine.search(&request).unwrap().hits;
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| h.source.as_deref().is_some_and(|s| s.ends_with("c.md")))
    );

    // The boost: chunks that mention an entity the query names (Globex is
    // in a.md and b.md) score twice their fused score; the others keep it.
    let mut plain = SearchRequest::new(library(), "turbines at Globex");
    plain.mode = Mode::Lexical;
    plain.group_by_document = false;
    let mut boosted = plain.clone();
    boosted.entity_boost = Some(1.0);
    let before = engine.search(&plain).unwrap().hits;
    let after = engine.search(&boosted).unwrap().hits;
    assert_eq!(before.len(), after.len());
    let mut seen_boost = false;
    for hit in &after {
        let was = before
            .iter()
            .find(|h| h.chunk_id == hit.chunk_id)
            .expect("the same candidates");
        let mentions = hit.source.as_deref().is_some_and(|s| !s.ends_with("c.md"));
        let factor = if mentions { 2.0 } else { 1.0 };
        seen_boost |= mentions;
        assert!(
            (hit.score - was.score * factor).abs() < 1e-5,
            "{hit:?} {was:?}"
        );
    }
    assert!(seen_boost);
    let scores: Vec<f32> = after.iter().map(|h| h.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    boosted.entity_boost = Some(1.5);
    assert_eq!(
        engine.search(&boosted).unwrap_err().code,
        ErrorCode::InvalidArgument
    );

    // A list with a shared name changes nothing.
    let mut bad = list.clone();
    bad[1].aliases.push("acme".into());
    assert_eq!(
        engine
            .import_entities(&library(), bad, true)
            .unwrap_err()
            .code,
        ErrorCode::InvalidArgument
    );
    assert_eq!(engine.declared_entities(&library()).unwrap(), list);
    drop(engine);

    let reader = open(dir, store_url, false, Limits::default());
    assert!(reader.import_entities(&library(), list, false).is_err());
    assert!(reader.relink(&library(), &SilentProgress).is_err());
}

#[test]
fn declared_entities_link_relink_and_filter_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    declared_entities_link_relink_and_filter(dir.path(), None);
}

#[test]
fn declared_entities_link_relink_and_filter_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("declared");
    declared_entities_link_relink_and_filter(dir.path(), Some(&database.url));
}

#[test]
fn ingest_writes_entity_mentions_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    ingest_writes_entity_mentions(dir.path(), None);
}

#[test]
fn ingest_writes_entity_mentions_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("entities");
    ingest_writes_entity_mentions(dir.path(), Some(&database.url));
}

/// Records every item an ingest hands to its progress.
#[derive(Default)]
struct Items(std::sync::Mutex<Vec<(String, folio_engine::IngestStatus)>>);

impl folio_engine::Progress for Items {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn finish(&self) {}
    fn item(&self, item: &folio_engine::IngestItem) {
        self.0
            .lock()
            .unwrap()
            .push((item.source.clone(), item.status));
    }
}

// Issue 33: `folio ingest` of 100,000 files kept one item per file in its
// report until the end. A request that does not keep items still counts
// every source, keeps the failed ones, and hands each item to its progress
// as it settles: the same items, in the same order, as a report keeping
// them all.
#[test]
fn a_report_without_items_counts_every_source_and_hands_each_to_progress() {
    let targets = || {
        let mut targets = contents();
        targets.insert(
            2,
            IngestTarget::Path("/nonexistent/folio/missing.md".into()),
        );
        targets
    };
    let run = |keep_items: bool| {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path(), None, true, Limits::default());
        let mut request = IngestRequest::new(library(), targets());
        request.keep_items = keep_items;
        let items = Items::default();
        let report = engine.ingest(&request, &items).unwrap();
        (report, items.0.into_inner().unwrap())
    };
    let (whole, seen_whole) = run(true);
    let (lean, seen_lean) = run(false);
    let listed: Vec<_> = whole
        .items
        .iter()
        .map(|i| (i.source.clone(), i.status))
        .collect();
    assert_eq!(listed.len(), TEXTS.len() + 1, "{whole:?}");
    assert_eq!(seen_whole, listed);
    assert_eq!(seen_lean, listed);
    assert_eq!(
        (
            lean.indexed,
            lean.skipped,
            lean.failed,
            lean.chunks,
            lean.pending
        ),
        (
            whole.indexed,
            whole.skipped,
            whole.failed,
            whole.chunks,
            whole.pending
        )
    );
    assert_eq!((lean.indexed, lean.failed), (TEXTS.len(), 1));
    assert_eq!(lean.items.len(), 1);
    assert_eq!(lean.items[0].status, folio_engine::IngestStatus::Failed);
    assert!(lean.items[0].source.ends_with("missing.md"), "{lean:?}");
}

/// What a library holds, by source: each document's id and its locators.
fn holdings(engine: &Engine) -> Vec<(String, String, Value)> {
    let (documents, _) = engine.documents(&library(), 0, 10_000).unwrap();
    let mut held: Vec<_> = documents
        .into_iter()
        .map(|d| {
            let locators = d.metadata.get("locators").cloned().unwrap_or(Value::Null);
            (d.source, d.id.to_string(), locators)
        })
        .collect();
    held.sort_by(|a, b| a.0.cmp(&b.0));
    held
}

/// Two files with the same bytes in one ingest are one document with two
/// locators, as when they come in two ingests (Dedup::Content): the second
/// is skipped as its twin's, whether the first had committed when the
/// second was read (a twin far behind, in a later group) or not (next to
/// it, in the same group).
fn twins_in_one_ingest_are_one_document(dir: &Path, store_url: Option<&str>) {
    let twin = "# Rivers again\n\nThe same note, saved twice in one folder.";
    let filler: Vec<IngestTarget> = (0..300)
        .map(|i| IngestTarget::Content {
            name: format!("filler{i:03}.md"),
            text: format!("# Note {i}\n\nFiller note number {i} about topic {i}."),
            format: None,
            title: None,
        })
        .collect();
    let content = |name: &str| IngestTarget::Content {
        name: name.into(),
        text: twin.into(),
        format: None,
        title: None,
    };
    // The copies' items; the filler's are counted by the report.
    let statuses = |report: &folio_engine::IngestReport| -> Vec<_> {
        report
            .items
            .iter()
            .filter(|i| !i.source.starts_with("filler"))
            .map(|i| (i.source.clone(), i.status, i.document_id.clone()))
            .collect()
    };
    // The oracle: the first copy, then the copies in ingests of their own.
    let separate = dir.join("separate");
    let engine = open(&separate, store_url, true, Limits::default());
    let mut first = vec![content("a.md")];
    first.extend(filler.clone());
    let mut seen = statuses(
        &engine
            .ingest(&IngestRequest::new(library(), first), &SilentProgress)
            .unwrap(),
    );
    for name in ["b.md", "z.md"] {
        let report = engine
            .ingest(
                &IngestRequest::new(library(), vec![content(name)]),
                &SilentProgress,
            )
            .unwrap();
        seen.extend(statuses(&report));
    }
    let expected = holdings(&engine);
    drop(engine);

    // PostgreSQL keeps one database for both runs: the library starts empty.
    let together = dir.join("together");
    let engine = open(&together, store_url, true, Limits::default());
    if store_url.is_some() {
        engine.delete_library(&library()).unwrap();
    }
    let mut targets = vec![content("a.md"), content("b.md")];
    targets.extend(filler);
    targets.push(content("z.md"));
    let report = engine
        .ingest(&IngestRequest::new(library(), targets), &SilentProgress)
        .unwrap();
    let got = statuses(&report);
    assert_eq!(got, seen);
    assert_eq!((report.indexed, report.skipped), (301, 2));
    let (_, a_id, locators) = expected.iter().find(|(s, ..)| s == "a.md").unwrap();
    assert_eq!(locators, &json!(["a.md", "b.md", "z.md"]));
    let skipped = folio_engine::IngestStatus::Skipped;
    assert_eq!(got[1], ("b.md".to_string(), skipped, Some(a_id.clone())));
    assert_eq!(got[2], ("z.md".to_string(), skipped, Some(a_id.clone())));
    let held = holdings(&engine);
    let differ: Vec<_> = held
        .iter()
        .filter(|h| !expected.contains(h))
        .chain(expected.iter().filter(|e| !held.contains(e)))
        .collect();
    assert!(differ.is_empty(), "the libraries differ: {differ:?}");
}

#[test]
fn twins_in_one_ingest_are_one_document_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    twins_in_one_ingest_are_one_document(dir.path(), None);
}

#[test]
fn twins_in_one_ingest_are_one_document_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("twins");
    twins_in_one_ingest_are_one_document(dir.path(), Some(&database.url));
}

/// Cancels once `after` items have settled.
struct CancelAfter {
    after: usize,
    settled: std::sync::atomic::AtomicUsize,
}

impl folio_engine::Progress for CancelAfter {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn finish(&self) {}
    fn item(&self, _: &folio_engine::IngestItem) {
        self.settled
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn cancelled(&self) -> bool {
        self.settled.load(std::sync::atomic::Ordering::SeqCst) >= self.after
    }
}

// Issue 33: a folder is walked while its files are prepared, not listed
// first. A cancelled ingest of a folder still accounts for every file, in
// subfolders too: settled or pending, and the next ingest settles the rest.
// 1,000 one-chunk notes make at least four groups of 256 chunks: the writer
// takes a group only when it has written the one before (the hand-over
// holds one group), so the third group cannot be handed over before the
// first group's items have settled and cancelled the work, however fast
// the files are read.
#[test]
fn a_cancelled_folder_ingest_counts_every_file_settled_or_pending() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("notes");
    for i in 0..1000 {
        let sub = folder.join(format!("part{}", i % 3));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("note{i:04}.md")),
            format!(
                "# Note {i}\n\nA note about subject {i}, filed in part {}.",
                i % 3
            ),
        )
        .unwrap();
    }
    std::fs::write(folder.join("ignored.bin"), b"\x00\x01").unwrap();
    let engine = open(&dir.path().join("data"), None, true, Limits::default());
    let request = IngestRequest::new(library(), vec![IngestTarget::Path(folder.clone())]);
    let cancel = CancelAfter {
        after: 30,
        settled: Default::default(),
    };
    let first = engine.ingest(&request, &cancel).unwrap();
    assert!(first.cancelled, "{first:?}");
    assert!(
        first.indexed >= 30 && first.indexed < 1000,
        "{}",
        first.indexed
    );
    assert_eq!(first.indexed + first.failed + first.pending, 1000);
    let second = engine.ingest(&request, &SilentProgress).unwrap();
    assert!(!second.cancelled);
    assert_eq!(
        (second.indexed, second.skipped, second.pending),
        (1000 - first.indexed, first.indexed, 0)
    );
    assert_eq!(engine.documents(&library(), 0, 1000).unwrap().1, 1000);
}

// Issue 33: a bulk write (`folio ingest`) defers its vector index and
// settles at the end: the encoder it loaded is freed first (so the index is
// never built beside it), the index then holds every chunk written, and
// the next search loads the encoder again. An embedder handed to the
// engine is the caller's: settling keeps it.
#[test]
fn settling_a_bulk_write_frees_the_encoder_then_indexes_every_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), None, true, Limits::default());
    config.embedder = EmbedderConfig::Candle {
        model_dir: folio_testkit::model_dir(),
        model: Default::default(),
    };
    let engine = Engine::open(config).unwrap();
    engine.start_bulk_write().unwrap();
    let report = engine
        .ingest(&IngestRequest::new(library(), contents()), &SilentProgress)
        .unwrap();
    assert_eq!(report.indexed, TEXTS.len(), "{report:?}");
    assert!(engine.embedder_loaded());
    assert_eq!(engine.settle().unwrap(), report.chunks);
    assert!(!engine.embedder_loaded(), "settling kept the encoder");
    let stats = engine.store().stats(&library()).unwrap();
    assert_eq!(stats.index["vectors"], report.chunks);
    let mut request = SearchRequest::new(library(), "what grinds the rock under ice");
    request.mode = Mode::Dense;
    let response = engine.search(&request).unwrap();
    assert!(
        response.hits[0]
            .source
            .as_deref()
            .is_some_and(|s| s.ends_with("doc1.md")),
        "{:?}",
        response.hits[0]
    );
    assert!(engine.embedder_loaded());

    let given = tempfile::tempdir().unwrap();
    let engine = open(given.path(), None, true, Limits::default());
    engine.start_bulk_write().unwrap();
    fill(&engine);
    assert_eq!(engine.settle().unwrap(), report.chunks);
    assert!(
        engine.embedder_loaded(),
        "settling dropped a given embedder"
    );
}

/// Issue 51: a PDF's page as an image with the cited chunk marked, from
/// the bytes it was indexed from: an upload's, kept with it (and removed
/// with it), or its file's while the file holds them. The oracle is the
/// page's own layout: `folio_testkit::pdf` sets each line 16 points below
/// the last from 72 points under the top of a 612 × 792 point page, so
/// each line's band of pixels is known without asking Poppler.
fn a_pdf_page_shows_its_cited_chunk(dir: &Path, store_url: Option<&str>) {
    const WORDS: [&str; 8] = [
        "river", "stone", "delta", "field", "yield", "marsh", "cloud", "grain",
    ];
    // Every word unique (its number), so a passage matches only itself.
    let line = |l: usize| -> String {
        (0..9)
            .map(|w| format!("{}{}", WORDS[(l + w) % WORDS.len()], l * 9 + w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let first: Vec<String> = (0..40).map(line).collect();
    let second: Vec<String> = (40..44).map(line).collect();
    let pdf = folio_testkit::pdf(&[&first.join("\n"), &second.join("\n")]);
    let engine = open(dir, store_url, true, Limits::default());
    let upload = IngestRequest::new(
        library(),
        vec![IngestTarget::Bytes {
            name: "fields.pdf".into(),
            bytes: pdf.clone(),
        }],
    );
    let report = engine.ingest(&upload, &SilentProgress).unwrap();
    assert_eq!(report.indexed, 1, "{report:?}");
    let id = report.items[0].document_id.clone().unwrap();
    let chunks = engine.chunks(&id, 0..100).unwrap();
    assert!(
        chunks.len() >= 2,
        "page 1 is more than one chunk: {chunks:?}"
    );
    // The oracle's precondition: the first line is chunk 0's, the page's
    // last line is not.
    let folded = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(folded(&chunks[0].text).contains(&first[0]));
    assert!(!folded(&chunks[0].text).contains(&first[39]));
    assert_eq!(chunks[0].page_start, Some(1));

    let marked = engine.page_image(&id, 1, Some(0)).unwrap();
    let (width, height, pixels) = decode_png(&marked.png);
    assert_eq!((width, height), (marked.width, marked.height));
    assert_eq!(
        height,
        folio_ocr::MAX_PAGE_SIDE,
        "the longer side is the limit"
    );
    assert!((width as f32 / height as f32 - 612.0 / 792.0).abs() < 0.01);
    let scale = height as f32 / 792.0;
    // Yellow: red kept, blue taken down (black glyphs stay black).
    let yellow_in_line = |l: usize| -> usize {
        let baseline = (72.0 + 16.0 * l as f32) * scale;
        let (top, bottom) = ((baseline - 8.0 * scale) as u32, baseline as u32);
        (top..bottom)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let at = ((y * width + x) * 3) as usize;
                pixels[at] > 200 && pixels[at + 1] > 170 && pixels[at + 2] < 120
            })
            .count()
    };
    assert!(yellow_in_line(0) > 1000, "{}", yellow_in_line(0));
    assert_eq!(yellow_in_line(39), 0);
    let words = chunks[0].text.split_whitespace().count();
    assert_eq!(
        marked.marks.len(),
        words,
        "every word of chunk 0, one box each"
    );

    // No chunk, or a chunk not on the page: nothing marked.
    let plain = engine.page_image(&id, 1, None).unwrap();
    assert!(plain.marks.is_empty());
    let (_, _, plain_pixels) = decode_png(&plain.png);
    let yellow = plain_pixels
        .chunks(3)
        .filter(|p| p[0] > 200 && p[1] > 170 && p[2] < 120)
        .count();
    assert_eq!(yellow, 0);
    let last = chunks.last().unwrap();
    assert_eq!(last.page_end, Some(2));
    assert!(engine.page_image(&id, 2, Some(0)).unwrap().marks.is_empty());
    let on_two = engine.page_image(&id, 2, Some(last.index)).unwrap();
    assert_eq!(on_two.marks.len(), second.len() * 9, "every word of page 2");

    // Out of the document, or not a PDF: a structured refusal.
    for (page, chunk, code) in [
        (0, None, ErrorCode::InvalidArgument),
        (3, None, ErrorCode::InvalidArgument),
        (1, Some(999), ErrorCode::NotFound),
    ] {
        assert_eq!(engine.page_image(&id, page, chunk).unwrap_err().code, code);
    }
    fill(&engine);
    let markdown = engine
        .search(&SearchRequest::new(library(), "glaciers"))
        .unwrap();
    let text_id = &markdown.hits[0].document_id;
    let refused = engine.page_image(text_id, 1, None).unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidArgument, "{refused}");

    // The upload's bytes go with it.
    engine.delete_document(&id).unwrap();
    assert_eq!(
        engine
            .store()
            .original(&folio_core::DocumentId::parse(&id).unwrap())
            .unwrap(),
        None
    );
    assert_eq!(
        engine.page_image(&id, 1, None).unwrap_err().code,
        ErrorCode::NotFound
    );

    // A file keeps no copy: its pages come from the file while it holds
    // the bytes that were indexed (an engine of its own: no page of these
    // bytes rendered yet).
    drop(engine);
    let engine = open(dir, store_url, true, Limits::default());
    let file = dir.join("fields-on-disk.pdf");
    std::fs::write(&file, &pdf).unwrap();
    let request = IngestRequest::new(library(), vec![IngestTarget::Path(file.clone())]);
    let report = engine.ingest(&request, &SilentProgress).unwrap();
    let file_id = report.items[0].document_id.clone().unwrap();
    let parsed = folio_core::DocumentId::parse(&file_id).unwrap();
    assert_eq!(engine.store().original(&parsed).unwrap(), None);
    let from_file = engine.page_image(&file_id, 1, Some(0)).unwrap();
    let words = engine.chunks(&file_id, 0..1).unwrap()[0]
        .text
        .split_whitespace()
        .count();
    assert_eq!(from_file.marks.len(), words, "every word of its chunk 0");
    std::fs::write(&file, folio_testkit::pdf(&["another text altogether"])).unwrap();
    let changed = engine.page_image(&file_id, 2, None).unwrap_err();
    assert_eq!(changed.code, ErrorCode::NotFound);
    assert!(
        changed.message.contains("changed since it was indexed"),
        "{changed}"
    );
}

fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let (width, height, color, pixels) = folio_testkit::png_pixels(bytes);
    assert_eq!(color, png::ColorType::Rgb);
    (width, height, pixels)
}

#[test]
fn a_pdf_page_shows_its_cited_chunk_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    a_pdf_page_shows_its_cited_chunk(dir.path(), None);
}

#[test]
fn a_pdf_page_shows_its_cited_chunk_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("pages");
    a_pdf_page_shows_its_cited_chunk(dir.path(), Some(&database.url));
}
