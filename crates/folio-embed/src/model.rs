//! A local model folder in Hugging Face layout: its configuration, tokenizer
//! and the embedding space it defines.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use folio_core::script::is_arabic_mark;
use folio_core::{EmbeddingSpace, Pooling, Precision};
use serde::Deserialize;
use tokenizers::{PostProcessor, Tokenizer};

use crate::EmbedError;

/// Per-model options that the folder cannot tell: the id recorded in the
/// library's embedding space and the e5/bge-style prefixes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelConfig {
    /// The model id; defaults to `folio.json`'s `id` in the folder, else the
    /// folder name.
    pub id: Option<String>,
    pub query_prefix: String,
    pub passage_prefix: String,
    /// fp32, or int8 on ONNX Runtime over the folder's `model_int8.onnx`.
    pub precision: Precision,
}

/// How a model's graph takes a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inputs {
    /// A BERT-family network: padded rows of ids with an attention mask;
    /// its hidden states are pooled here.
    #[default]
    Padded,
    /// A graph over the batch's ids end to end (`token_ids`, int32) and
    /// where each text's ids begin (`row_splits`, int64, one more than the
    /// texts), returning one vector per text (`outputs`): the multilingual
    /// Universal Sentence Encoder (`scripts/multilingual_use.py`). ONNX
    /// Runtime only.
    Ragged,
}

/// A loaded model folder: tokenizer (padding and truncation off), the
/// embedding space and the encoder window.
pub struct LocalModel {
    pub dir: PathBuf,
    pub tokenizer: Tokenizer,
    pub space: EmbeddingSpace,
    pub window: usize,
    pub hidden_size: usize,
    /// How the graph takes a batch (`folio.json`'s `inputs`).
    pub inputs: Inputs,
    /// Special tokens the tokenizer adds to one sequence ([CLS], [SEP]).
    added_tokens: usize,
}

#[derive(Deserialize)]
struct BertConfig {
    // NomicBert names them as GPT-2 does.
    #[serde(alias = "n_embd")]
    hidden_size: usize,
    #[serde(alias = "n_positions")]
    max_position_embeddings: Option<usize>,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
}

#[derive(Deserialize)]
struct Module {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct FolioModelFile {
    id: String,
    /// The model's own prefixes (e5's `query: ` and `passage: `), used
    /// when the configuration names none.
    #[serde(default)]
    query_prefix: String,
    #[serde(default)]
    passage_prefix: String,
    #[serde(default)]
    inputs: Inputs,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, EmbedError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(EmbedError::Load {
                path: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| EmbedError::Load {
            path: path.display().to_string(),
            reason: e.to_string(),
        })
}

/// Why a folder without `config.json` is no model, and what to do.
const NO_MODEL: &str = "config.json is missing: no model is installed in this folder. Install \
     the default model with scripts/setup.sh, or point [model] dir (FOLIO_MODEL_DIR, \
     --model-dir) at a sentence-transformers model folder in the Hugging Face layout";

impl LocalModel {
    /// Loads the folder's configuration and tokenizer (not the weights).
    pub fn open(dir: &Path, options: &ModelConfig) -> Result<Self, EmbedError> {
        let load_err = |reason: String| EmbedError::Load {
            path: dir.display().to_string(),
            reason,
        };
        let config: BertConfig =
            read_json(&dir.join("config.json"))?.ok_or_else(|| load_err(NO_MODEL.into()))?;
        let sbert: Option<SentenceBertConfig> = read_json(&dir.join("sentence_bert_config.json"))?;
        let pooling: Option<PoolingConfig> = read_json(&dir.join("1_Pooling/config.json"))?;
        let modules: Option<Vec<Module>> = read_json(&dir.join("modules.json"))?;
        let normalized = modules
            .as_ref()
            .is_none_or(|m| m.iter().any(|m| m.kind.ends_with("Normalize")));
        let window = sbert
            .and_then(|s| s.max_seq_length)
            .or(config.max_position_embeddings)
            .unwrap_or(512)
            .min(config.max_position_embeddings.unwrap_or(512));

        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| load_err(format!("tokenizer.json: {e}")))?;
        // The shipped tokenizer.json of many sentence-transformers models pads
        // every input to a fixed length and truncates: both would corrupt
        // token counts and pooling, so they are switched off.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| load_err(e.to_string()))?;

        let file = read_json::<FolioModelFile>(&dir.join("folio.json"))?;
        let id = match (&options.id, &file) {
            (Some(id), _) => id.clone(),
            (None, Some(file)) => file.id.clone(),
            (None, None) => dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "local".into()),
        };
        let prefixed = !options.query_prefix.is_empty() || !options.passage_prefix.is_empty();
        let (query_prefix, passage_prefix) = match &file {
            Some(file) if !prefixed => (file.query_prefix.clone(), file.passage_prefix.clone()),
            _ => (options.query_prefix.clone(), options.passage_prefix.clone()),
        };
        let space = EmbeddingSpace {
            model: id,
            dim: config.hidden_size as u32,
            pooling: if pooling.is_some_and(|p| p.pooling_mode_cls_token) {
                Pooling::Cls
            } else {
                Pooling::Mean
            },
            normalized,
            query_prefix,
            passage_prefix,
            precision: options.precision,
        };
        let added_tokens = tokenizer
            .get_post_processor()
            .map_or(0, |p| p.added_tokens(false));
        Ok(LocalModel {
            dir: dir.to_path_buf(),
            tokenizer,
            space,
            window,
            hidden_size: config.hidden_size,
            inputs: file.as_ref().map(|f| f.inputs).unwrap_or_default(),
            added_tokens,
        })
    }

    /// Tokens of `text`, special tokens excluded.
    pub fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer
            .encode_fast(readable(text).as_ref(), false)
            .map(|e| e.len())
            .unwrap_or(text.len() / 3 + 1)
    }

    /// A passage's token count (special tokens excluded, as `count_tokens`)
    /// and its ids as the encoder runs them. `None` when the model has a
    /// passage prefix: the prefix is tokenised with the text, which the
    /// count of the text alone does not describe.
    pub fn encode_passage(&self, text: &str) -> Option<(usize, Vec<u32>)> {
        if !self.space.passage_prefix.is_empty() {
            return None;
        }
        let ids = self
            .tokenizer
            .encode_fast(readable(text).as_ref(), true)
            .ok()?
            .get_ids()
            .to_vec();
        Some((ids.len().saturating_sub(self.added_tokens), ids))
    }

    /// Token ids (with special tokens) of each text. Passages longer than the
    /// window are refused; queries are cut to it.
    pub fn encode(&self, texts: &[String], cut: bool) -> Result<Vec<Vec<u32>>, EmbedError> {
        let texts: Vec<String> = texts.iter().map(|t| readable(t).into_owned()).collect();
        let encodings = self
            .tokenizer
            .encode_batch_fast(texts, true)
            .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))?;
        encodings
            .into_iter()
            .map(|e| {
                let mut ids = e.get_ids().to_vec();
                if ids.len() > self.window {
                    if !cut {
                        return Err(EmbedError::TooLong {
                            tokens: ids.len(),
                            window: self.window,
                        });
                    }
                    let last = *ids.last().expect("non-empty: longer than the window");
                    ids.truncate(self.window - 1);
                    ids.push(last);
                }
                Ok(ids)
            })
            .collect()
    }
}

/// Text as an encoder reads it: without Arabic marks (`is_arabic_mark`).
/// A fully voweled text (scripture, teaching material) breaks into word
/// pieces a model rarely saw: without them a question typed bare and its
/// passage meet, as they do in the lexical analysis.
fn readable(text: &str) -> Cow<'_, str> {
    match text.contains(is_arabic_mark) {
        true => Cow::Owned(text.chars().filter(|c| !is_arabic_mark(*c)).collect()),
        false => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_a_model_says_how_to_get_one() {
        let dir = std::env::temp_dir().join(format!("folio-no-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let error = LocalModel::open(&dir, &ModelConfig::default())
            .err()
            .expect("no model in an empty folder");
        let said = error.to_string();
        assert!(said.contains("config.json is missing"), "{said}");
        assert!(
            said.contains("scripts/setup.sh") && said.contains("FOLIO_MODEL_DIR"),
            "{said}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
