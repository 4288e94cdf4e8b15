//! A cross-encoder: a BERT-family sequence classifier in Hugging Face layout
//! that reads a query and a passage together and scores their relevance.
//! It runs on the same ONNX Runtime path as the encoder (`model.onnx` with
//! inputs input_ids, attention_mask, token_type_ids and output logits, as
//! scripts/export_onnx.py writes it for such a model).

use std::path::Path;
use std::sync::Mutex;

use ndarray::Array2;
use ort::session::Session;
use serde::Deserialize;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::EmbedError;
use crate::batch;
use crate::onnx_encoder::{run_bert, session};

/// A query and a passage as the cross-encoder reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairTokens {
    pub ids: Vec<u32>,
    /// 0 for the query's segment, 1 for the passage's.
    pub type_ids: Vec<u32>,
}

/// A cross-encoder on ONNX Runtime.
pub struct CrossEncoder {
    tokenizer: Tokenizer,
    window: usize,
    session: Mutex<Session>,
    /// The position of the `logits` output.
    logits: usize,
}

#[derive(Deserialize)]
struct ClassifierConfig {
    max_position_embeddings: Option<usize>,
    #[serde(default)]
    architectures: Vec<String>,
}

impl CrossEncoder {
    /// Loads the folder's configuration, tokenizer and `model.onnx` (or
    /// `onnx/model.onnx`) with `threads` intra-op threads.
    pub fn load(dir: &Path, runtime: &Path, threads: usize) -> Result<Self, EmbedError> {
        let fail = |reason: String| EmbedError::Load {
            path: dir.display().to_string(),
            reason,
        };
        let config: ClassifierConfig = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| fail(format!("config.json: {e}")))
            .and_then(|text| {
                serde_json::from_str(&text).map_err(|e| fail(format!("config.json: {e}")))
            })?;
        if !config
            .architectures
            .iter()
            .any(|a| a.ends_with("ForSequenceClassification"))
        {
            return Err(fail(
                "not a cross-encoder: config.json names no …ForSequenceClassification \
                 architecture"
                    .into(),
            ));
        }
        let window = config.max_position_embeddings.unwrap_or(512).min(512);
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| fail(format!("tokenizer.json: {e}")))?;
        // A pair longer than the window loses tokens from its longer side
        // (the passage, as a rule), as sentence-transformers cuts pairs.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: window,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| fail(e.to_string()))?;
        let session = session(
            dir,
            crate::onnx_encoder::FP32_GRAPHS,
            runtime,
            threads,
            &[],
            "export it with scripts/export_onnx.py",
        )?;
        let Some(logits) = session.outputs().iter().position(|o| o.name() == "logits") else {
            return Err(fail("model.onnx has no logits output".into()));
        };
        Ok(CrossEncoder {
            tokenizer,
            window,
            session: Mutex::new(session),
            logits,
        })
    }

    /// Tokens in a pair, special tokens included.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The pair `query` + `passage` as the model reads it: `[CLS] query
    /// [SEP] passage [SEP]`, cut to the window.
    pub fn tokenize(&self, query: &str, passage: &str) -> Result<PairTokens, EmbedError> {
        let encoding = self
            .tokenizer
            .encode_fast((query, passage), true)
            .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))?;
        Ok(PairTokens {
            ids: encoding.get_ids().to_vec(),
            type_ids: encoding.get_type_ids().to_vec(),
        })
    }

    /// Relevance of each passage to `query`, in order: a single-label
    /// model's logit, or a two-label model's relevant-minus-irrelevant
    /// logit. Higher is more relevant; the scale is the model's own.
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, EmbedError> {
        let pairs = passages
            .iter()
            .map(|p| self.tokenize(query, p))
            .collect::<Result<Vec<_>, _>>()?;
        // Batched by length under the encoder's token budget, so a run's
        // memory stays bounded for long passages too.
        batch::run_batches(&pairs, |p| p.ids.len(), |b| self.run(b))
    }

    fn run(&self, batch: &[&PairTokens]) -> Result<Vec<f32>, EmbedError> {
        let inference = |e: String| EmbedError::Inference(e);
        let seq = batch.iter().map(|p| p.ids.len()).max().unwrap_or(0);
        let shape = (batch.len(), seq);
        let mut ids = Array2::<i64>::zeros(shape);
        let mut mask = Array2::<i64>::zeros(shape);
        let mut types = Array2::<i64>::zeros(shape);
        for (row, pair) in batch.iter().enumerate() {
            for (col, (&id, &kind)) in pair.ids.iter().zip(&pair.type_ids).enumerate() {
                ids[(row, col)] = i64::from(id);
                mask[(row, col)] = 1;
                types[(row, col)] = i64::from(kind);
            }
        }
        run_bert(
            &self.session,
            [&ids, &mask, &types],
            self.logits,
            |shape, logits| {
                let labels = match shape.len() {
                    2 => shape[1] as usize,
                    _ => return Err(inference(format!("logits of shape {shape:?}"))),
                };
                match labels {
                    1 => Ok(logits.to_vec()),
                    2 => Ok(logits.chunks(2).map(|l| l[1] - l[0]).collect()),
                    n => Err(inference(format!(
                        "a reranker needs one or two labels, the model has {n}"
                    ))),
                }
            },
        )
    }
}
