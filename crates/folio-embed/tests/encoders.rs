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
        assert!(cosine(x, y) > 0.9999, "backends disagree: {}", cosine(x, y));
    }
    assert!(
        cosine(&a[0], &a[1]) > cosine(&a[0], &a[2]) + 0.3,
        "paraphrases are closer than unrelated text"
    );
    // A query is the same text embedded the same way (no prefixes configured).
    let q = onnx.embed_query(TEXTS[0]).unwrap();
    assert!(cosine(&q, &a[0]) > 0.9999);
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
