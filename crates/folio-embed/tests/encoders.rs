//! The real model through both local backends: the vectors agree, are
//! normalised, rank by meaning, and passages over the window are refused.
//! Needs the model and runtime that scripts/setup.sh installs.

use std::path::PathBuf;

use folio_embed::{CandleEncoder, EmbedError, Embedder, ModelConfig, OnnxEncoder};

fn home() -> PathBuf {
    std::env::var("FOLIO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").expect("HOME")).join(".local/share/folio")
        })
}

fn model_dir() -> PathBuf {
    let dir = home().join("models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").exists(),
        "the model is not installed: run scripts/setup.sh"
    );
    dir
}

fn runtime() -> PathBuf {
    folio_embed::find_runtime_library(&home().join("runtime"))
        .expect("the ONNX Runtime is not installed: run scripts/setup.sh")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

const TEXTS: [&str; 4] = [
    "Dropout prevents overfitting by randomly removing units during training.",
    "Randomly dropping neurons while training regularises a neural network.",
    "The stock market fell sharply after the announcement.",
    "a",
];

#[test]
fn onnx_and_candle_agree_and_rank_by_meaning() {
    let options = ModelConfig::default();
    let onnx = OnnxEncoder::load(&model_dir(), &options, &runtime(), 2).unwrap();
    let candle = CandleEncoder::load(&model_dir(), &options).unwrap();
    assert_eq!(onnx.space(), candle.space());
    assert_eq!(onnx.space().model, "sentence-transformers/all-MiniLM-L6-v2");
    assert_eq!((onnx.space().dim, onnx.window()), (384, 256));
    let a = onnx.embed_passages(&TEXTS).unwrap();
    let b = candle.embed_passages(&TEXTS).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!((cosine(x, x) - 1.0).abs() < 1e-5, "normalised");
        assert!(
            cosine(x, y) >= 0.99999,
            "backends disagree: {}",
            cosine(x, y)
        );
    }
    assert!(
        cosine(&a[0], &a[1]) > cosine(&a[0], &a[2]) + 0.3,
        "paraphrases are closer than unrelated text"
    );
    // A query is the same text embedded the same way (no prefixes configured).
    let q = onnx.embed_query(TEXTS[0]).unwrap();
    assert!(cosine(&q, &a[0]) > 0.9999);
}

/// Questions asked from many threads at once share forward passes, and
/// each gets the vector it gets alone; a graph that quantises per batch
/// (int8) runs each question alone.
#[test]
fn questions_asked_at_once_share_passes_and_embed_as_alone() {
    let onnx = OnnxEncoder::load(&model_dir(), &ModelConfig::default(), &runtime(), 2).unwrap();
    let questions: Vec<String> = (0..24)
        .map(|i| format!("{} ({i})", TEXTS[i % TEXTS.len()]))
        .collect();
    let alone: Vec<Vec<f32>> = questions
        .iter()
        .map(|q| onnx.embed_query(q).unwrap())
        .collect();
    assert_eq!(
        onnx.query_passes(),
        24,
        "one pass each, asked one at a time"
    );
    let start = std::sync::Barrier::new(8);
    let together: Vec<Vec<f32>> = std::thread::scope(|scope| {
        let asked: Vec<_> = questions
            .chunks(3)
            .map(|mine| {
                let (onnx, start) = (&onnx, &start);
                scope.spawn(move || {
                    start.wait();
                    mine.iter()
                        .map(|q| onnx.embed_query(q).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        asked.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let shared = onnx.query_passes() - 24;
    assert!(
        shared < 24,
        "24 questions from 8 threads took {shared} passes"
    );
    for (a, b) in alone.iter().zip(&together) {
        let most = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        assert!(
            most < 1e-5,
            "a question's vector moved by {most} in a batch"
        );
    }
    let int8 = int8_encoder();
    int8.embed_query(TEXTS[0]).unwrap();
    assert_eq!(int8.query_passes(), 0, "int8 questions are not batched");
}

#[test]
fn passages_over_the_window_are_refused_and_queries_cut() {
    let candle = CandleEncoder::load(&model_dir(), &ModelConfig::default()).unwrap();
    let long = "word ".repeat(400);
    assert_eq!(candle.count_tokens(&long), 400);
    match candle.embed_passages(&[&long]) {
        Err(EmbedError::TooLong {
            tokens: 402,
            window: 256,
        }) => {}
        other => panic!("expected TooLong, got {other:?}"),
    }
    assert_eq!(candle.embed_query(&long).unwrap().len(), 384);
}

// Issue 48: fully voweled Arabic (a hadith, a verse) and the same words
// typed without their marks are one text to the encoder, as they are one
// set of terms to the lexical analysis: a question typed bare meets its
// voweled passage. The marks are diacritics, the superscript alef and the
// tatweel; other text passes unchanged. multilingual-e5-small's tokenizer
// (XLM-R's, NFKC) keeps marks and accents, so it tells them apart.
#[test]
fn arabic_marks_are_not_read_by_the_encoder() {
    let dir = home().join("models/multilingual-e5-small");
    assert!(
        dir.join("model.onnx").exists(),
        "multilingual-e5-small is not installed: run scripts/setup.sh"
    );
    let e5 = OnnxEncoder::load(&dir, &ModelConfig::default(), &runtime(), 2).unwrap();
    let voweled = "إِنَّمَا الأَعْمَالُ بِالنِّيَّاتِ، وَإِنَّمَا لِكُلِّ امْرِئٍ مَا نَوَى";
    let bare = "إنما الأعمال بالنيات، وإنما لكل امرئ ما نوى";
    assert_eq!(e5.count_tokens(voweled), e5.count_tokens(bare));
    let passages = e5
        .embed_passages(&[voweled, bare, "الـكـتـاب", "الكتاب"])
        .unwrap();
    assert_eq!(passages[0], passages[1]);
    assert_eq!(passages[2], passages[3], "the tatweel");
    assert_eq!(
        e5.embed_query(voweled).unwrap(),
        e5.embed_query(bare).unwrap()
    );
    let accented = e5.embed_passages(&["café crème", "cafe creme"]).unwrap();
    assert_ne!(accented[0], accented[1], "only Arabic marks are dropped");
}

/// The set-up virtualenv's Python (numpy, safetensors, onnx).
fn python() -> PathBuf {
    home().join("setup-venv/bin/python")
}

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}

/// A small cross-encoder with random weights (2 layers, 32 wide, the
/// installed model's tokenizer), made by scripts/cross_encoder.py.
fn tiny_cross_encoder(dir: &std::path::Path) {
    let status = std::process::Command::new(python())
        .arg(script("cross_encoder.py"))
        .args(["make", dir.to_str().unwrap(), "--tokenizer"])
        .arg(model_dir())
        .status()
        .expect("python runs (scripts/setup.sh makes its virtualenv)");
    assert!(status.success(), "making the test cross-encoder failed");
}

#[test]
fn a_cross_encoder_scores_pairs_as_an_independent_forward_pass_does() {
    let dir = tempfile::tempdir().unwrap();
    tiny_cross_encoder(dir.path());
    let reranker = folio_embed::CrossEncoder::load(dir.path(), &runtime(), 1).unwrap();
    assert_eq!(reranker.window(), 512);

    let query = "how does dropout prevent overfitting";
    let long = "Dropout removes units at random while a network trains. ".repeat(80);
    let passages = [TEXTS[0], TEXTS[1], TEXTS[2], long.as_str()];
    // [CLS] query [SEP] passage [SEP], the passage's segment typed 1; a pair
    // over the window loses tokens from its longer side.
    let pairs: Vec<_> = passages
        .iter()
        .map(|p| reranker.tokenize(query, p).unwrap())
        .collect();
    let first = &pairs[0];
    assert_eq!((first.ids[0], *first.ids.last().unwrap()), (101, 102));
    let boundary = first.type_ids.iter().position(|&t| t == 1).unwrap();
    assert_eq!(first.ids[boundary - 1], 102, "the query ends with [SEP]");
    assert!(boundary > 6, "the query's tokens come first");
    assert!(first.type_ids[boundary..].iter().all(|&t| t == 1));
    assert_eq!(pairs[3].ids.len(), 512, "cut to the window");
    assert_eq!(*pairs[3].ids.last().unwrap(), 102);
    assert_eq!(
        pairs[3].type_ids.iter().filter(|&&t| t == 0).count(),
        boundary,
        "the query is kept whole"
    );

    let scores = reranker.score(query, &passages).unwrap();
    let input = serde_json::to_string(
        &pairs
            .iter()
            .map(|p| serde_json::json!({"ids": p.ids, "types": p.type_ids}))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut child = std::process::Command::new(python())
        .arg(script("cross_encoder.py"))
        .arg("score")
        .arg(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let reference: Vec<Vec<f64>> = serde_json::from_slice(&output.stdout).unwrap();
    for (got, want) in scores.iter().zip(&reference) {
        assert!(
            (f64::from(*got) - want[0]).abs() < 1e-3 * want[0].abs().max(1.0),
            "ONNX Runtime {scores:?} against numpy {reference:?}"
        );
    }
    let spread = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max)
        - scores.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(spread > 1e-3, "the pairs score differently: {scores:?}");
    // Scoring in one call or one by one gives the same scores.
    let alone = reranker.score(query, &passages[2..3]).unwrap();
    assert!((alone[0] - scores[2]).abs() < 1e-4);
}

#[test]
fn an_embedding_model_is_not_taken_for_a_cross_encoder() {
    match folio_embed::CrossEncoder::load(&model_dir(), &runtime(), 1) {
        Err(EmbedError::Load { reason, .. }) => {
            assert!(reason.contains("not a cross-encoder"), "{reason}")
        }
        Err(other) => panic!("expected a load error, got {other}"),
        Ok(_) => panic!("an embedding model loaded as a cross-encoder"),
    }
}

#[test]
fn passages_tokenised_once_embed_as_their_text_does() {
    let onnx = OnnxEncoder::load(&model_dir(), &ModelConfig::default(), &runtime(), 2).unwrap();
    let encoded: Vec<(usize, Vec<u32>)> = TEXTS
        .iter()
        .map(|t| {
            onnx.encode_passage(t)
                .expect("no passage prefix: ids are shared")
        })
        .collect();
    for ((count, ids), text) in encoded.iter().zip(TEXTS) {
        assert_eq!(*count, onnx.count_tokens(text), "{text}");
        assert_eq!(ids.len(), count + 2, "[CLS] and [SEP] around {text}");
    }
    let ids: Vec<&[u32]> = encoded.iter().map(|(_, ids)| ids.as_slice()).collect();
    let from_ids = onnx.embed_passage_ids(&ids).unwrap();
    let from_text = onnx.embed_passages(&TEXTS).unwrap();
    for (a, b) in from_ids.iter().zip(&from_text) {
        assert!(cosine(a, b) > 0.99999, "{}", cosine(a, b));
    }
    let (_, long) = onnx.encode_passage(&"word ".repeat(400)).unwrap();
    assert!(matches!(
        onnx.embed_passage_ids(&[&long]),
        Err(EmbedError::TooLong {
            tokens: 402,
            window: 256
        })
    ));
    // A passage prefix is tokenised with the text: nothing is shared then.
    let prefixed = ModelConfig {
        passage_prefix: "passage: ".into(),
        ..ModelConfig::default()
    };
    let onnx = OnnxEncoder::load(&model_dir(), &prefixed, &runtime(), 2).unwrap();
    assert!(onnx.encode_passage(TEXTS[0]).is_none());
}

#[test]
fn the_int8_encoder_is_its_own_space_close_to_fp32() {
    let int8 = ModelConfig {
        precision: folio_core::Precision::Int8,
        ..ModelConfig::default()
    };
    let quantised = OnnxEncoder::load(&model_dir(), &int8, &runtime(), 2)
        .expect("scripts/setup.sh makes model_int8.onnx");
    let fp32 = OnnxEncoder::load(&model_dir(), &ModelConfig::default(), &runtime(), 2).unwrap();
    assert_eq!(
        quantised.space().difference(fp32.space()).as_deref(),
        Some("precision int8 vs fp32")
    );
    let a = quantised.embed_passages(&TEXTS).unwrap();
    let b = fp32.embed_passages(&TEXTS).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!((cosine(x, x) - 1.0).abs() < 1e-5, "normalised");
        // Close to fp32, not equal: quantisation moves every vector a little.
        let c = cosine(x, y);
        assert!((0.97..0.99999).contains(&c), "int8 vs fp32 cosine {c}");
    }
    assert!(cosine(&a[0], &a[1]) > cosine(&a[0], &a[2]) + 0.3);
    // candle has no int8 path, and says so.
    let refused = CandleEncoder::load(&model_dir(), &int8).err().unwrap();
    assert!(refused.to_string().contains("ONNX Runtime"), "{refused}");
}

/// int8 vectors of eight SciFact abstracts from a CPU whose int8 kernels
/// sum exactly (VNNI), written by `write_the_exact_int8_fixture`.
const INT8_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/int8_exact.json"
);

#[derive(serde::Serialize, serde::Deserialize)]
struct Int8Fixture {
    made_on: String,
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn int8_encoder() -> OnnxEncoder {
    let int8 = ModelConfig {
        precision: folio_core::Precision::Int8,
        ..ModelConfig::default()
    };
    OnnxEncoder::load(&model_dir(), &int8, &runtime(), 2)
        .expect("scripts/setup.sh makes model_int8.onnx")
}

/// Writes the fixture from this CPU, when its int8 kernels are exact
/// (`cargo test -p folio-embed --test encoders -- --ignored write_the_exact`).
#[test]
#[ignore]
fn write_the_exact_int8_fixture() {
    assert!(
        !folio_embed::int8_kernels_saturate(),
        "write it on a CPU with VNNI (or ARM): its int8 sums are exact"
    );
    let corpus = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/datasets/scifact-train/corpus.jsonl"),
    )
    .unwrap();
    let texts: Vec<String> = corpus
        .lines()
        .take(8)
        .map(|l| {
            let doc: serde_json::Value = serde_json::from_str(l).unwrap();
            let text = format!(
                "{}. {}",
                doc["title"].as_str().unwrap(),
                doc["text"].as_str().unwrap()
            );
            // Within the 256-token window.
            text.split_whitespace()
                .take(100)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = int8_encoder().embed_passages(&refs).unwrap();
    let fixture = Int8Fixture {
        made_on: "x86-64 with AVX-512 VNNI, ONNX Runtime 1.24.4 (scripts/setup.sh)".into(),
        texts,
        vectors,
    };
    std::fs::write(
        INT8_FIXTURE,
        serde_json::to_string_pretty(&fixture).unwrap(),
    )
    .unwrap();
}

/// Where ONNX Runtime's u8 × s8 kernels can saturate (x86 without VNNI),
/// folio asks for its exact u8 × u8 ones: the int8 vectors are then those
/// of a CPU whose sums are exact, not the saturated ones. Under emulation
/// of such a CPU (`qemu-x86_64 -cpu Haswell` on this test's binary), the
/// mean cosine to the fixture was 0.9997 with the exact kernels and 0.9945
/// with the saturating ones; natively on VNNI, 1.0000.
#[test]
fn int8_vectors_are_those_of_exact_integer_sums_on_every_cpu() {
    let fixture: Int8Fixture =
        serde_json::from_str(&std::fs::read_to_string(INT8_FIXTURE).unwrap()).unwrap();
    let refs: Vec<&str> = fixture.texts.iter().map(String::as_str).collect();
    let vectors = int8_encoder().embed_passages(&refs).unwrap();
    let cosines: Vec<f32> = vectors
        .iter()
        .zip(&fixture.vectors)
        .map(|(a, b)| cosine(a, b))
        .collect();
    let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
    eprintln!("int8 vectors against the exact fixture: {cosines:?}, mean {mean}");
    assert!(mean >= 0.998, "{cosines:?}");
}

fn use_dir() -> PathBuf {
    let dir = home().join("models/multilingual-use");
    assert!(
        dir.join("model.onnx").exists(),
        "the multilingual Universal Sentence Encoder is not installed: run scripts/setup.sh"
    );
    dir
}

#[derive(serde::Deserialize)]
struct UseFixture {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

/// The multilingual Universal Sentence Encoder as folio runs it (its
/// SentencePiece model turned into a `tokenizer.json`, the graph cut to
/// take token ids) gives the vectors of the graph as it ships, whose own
/// SentencePiece operator tokenises (scripts/multilingual_use.py
/// --fixture): texts in six languages, runs of spaces, one letter and a
/// long sentence, in one batch of mixed lengths (as the fixture was made:
/// the same vectors) and one at a time. The graph quantises its
/// activations per batch, so a text alone moves a little (cosine 0.9988
/// at worst here).
#[test]
fn the_multilingual_use_gives_the_vectors_of_its_shipped_graph() {
    let fixture: UseFixture = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/use_vectors.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let encoder = OnnxEncoder::load(&use_dir(), &ModelConfig::default(), &runtime(), 2).unwrap();
    assert_eq!(encoder.space().dim, 512);
    assert_eq!(
        encoder.space().model,
        "google/universal-sentence-encoder-multilingual/3"
    );
    let refs: Vec<&str> = fixture.texts.iter().map(String::as_str).collect();
    let batched = encoder.embed_passages(&refs).unwrap();
    for (i, (text, expected)) in fixture.texts.iter().zip(&fixture.vectors).enumerate() {
        let alone = encoder.embed_query(text).unwrap();
        for (how, got, bar) in [
            ("in a batch", &batched[i], 0.9999),
            ("alone", &alone, 0.998),
        ] {
            let norm = cosine(got, got).sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "{text:?} {how}: norm {norm}");
            let similarity = cosine(got, expected);
            eprintln!("{text:?} {how}: {similarity}");
            assert!(
                similarity >= bar,
                "{text:?} {how}: cosine {similarity} to the shipped graph's vector"
            );
        }
    }
}

/// One space for every language: a German question is nearer its English
/// translation than an unrelated English sentence, and so are the Chinese,
/// Russian, Arabic and Japanese ones.
#[test]
fn the_multilingual_use_puts_a_question_near_its_translation() {
    let encoder = OnnxEncoder::load(&use_dir(), &ModelConfig::default(), &runtime(), 2).unwrap();
    let english = encoder
        .embed_passages(&[
            "How do I find out which files a process has open?",
            "The stock market fell sharply after the announcement.",
        ])
        .unwrap();
    for question in [
        "Wie finde ich heraus, welche Dateien ein Prozess geöffnet hat?",
        "如何查看一个进程打开了哪些文件？",
        "Как узнать, какие файлы открыл процесс?",
        "كيف أعرف الملفات التي فتحتها عملية ما؟",
        "プロセスが開いているファイルを調べるには？",
    ] {
        let q = encoder.embed_query(question).unwrap();
        let (near, far) = (cosine(&q, &english[0]), cosine(&q, &english[1]));
        assert!(near > far + 0.2, "{question}: {near} vs {far}");
    }
}

/// The candle backend cannot run a ragged graph and says so; int8 is
/// refused for a graph that ships quantised.
#[test]
fn the_multilingual_use_runs_on_onnx_runtime_only() {
    let refused = CandleEncoder::load(&use_dir(), &ModelConfig::default())
        .err()
        .expect("candle has no ragged graph");
    assert!(
        refused.to_string().contains("ONNX Runtime only"),
        "{refused}"
    );
    let int8 = ModelConfig {
        precision: folio_core::Precision::Int8,
        ..ModelConfig::default()
    };
    let refused = OnnxEncoder::load(&use_dir(), &int8, &runtime(), 2)
        .err()
        .expect("one graph, quantised as it ships");
    assert!(
        refused.to_string().contains("precision at fp32"),
        "{refused}"
    );
}

/// The encoder's weights are mapped from folio's graph cache, not copied
/// into the process: the default graph holds them inside it, so the
/// session loads a copy whose weights lie in `graph.onnx.data`, and the
/// vectors are those of candle's independent forward pass over the
/// safetensors, as ever (`onnx_and_candle_agree_and_rank_by_meaning`; the
/// int8 graph's, exactly those of its fixture).
#[test]
fn the_encoder_maps_its_weights_instead_of_copying_them() {
    let onnx = OnnxEncoder::load(&model_dir(), &ModelConfig::default(), &runtime(), 2).unwrap();
    let candle = CandleEncoder::load(&model_dir(), &ModelConfig::default()).unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mapped: Vec<&str> = maps
        .lines()
        .filter(|l| l.ends_with("/graph.onnx.data"))
        .collect();
    assert!(!mapped.is_empty(), "no mapped weights:\n{maps}");
    // In folio's home (`FOLIO_HOME`, else the XDG data folder), never
    // beside the model.
    assert!(mapped.iter().all(|l| l.contains("/graphs/")), "{mapped:?}");
    let a = onnx.embed_passages(&TEXTS).unwrap();
    let b = candle.embed_passages(&TEXTS).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!(cosine(x, y) > 0.9999, "{}", cosine(x, y));
    }
}
