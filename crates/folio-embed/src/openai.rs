//! An embedder that calls an OpenAI-compatible `/v1/embeddings` endpoint
//! (Ollama, vLLM, TEI, hosted APIs). Vectors are L2-normalised here, so the
//! space behaves like the local one.

use std::time::Duration;

use folio_core::{EmbeddingSpace, Pooling};
use serde::Deserialize;

use crate::{EmbedError, Embedder, pool};

/// Where and what to call.
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// Base URL up to and including `/v1`, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The model's input window in tokens (the server does not say).
    pub window: usize,
    pub timeout: Duration,
    pub query_prefix: String,
    pub passage_prefix: String,
}

pub struct OpenAiEmbedder {
    options: OpenAiOptions,
    client: reqwest::blocking::Client,
    space: EmbeddingSpace,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

/// Texts per request: servers cap batch sizes, 64 is accepted widely.
const REQUEST_BATCH: usize = 64;

impl OpenAiEmbedder {
    /// Connects and learns the dimension with one probe request.
    pub fn connect(options: OpenAiOptions) -> Result<Self, EmbedError> {
        let client = reqwest::blocking::Client::builder()
            .timeout(options.timeout)
            .build()
            .map_err(|e| EmbedError::Remote {
                url: options.base_url.clone(),
                reason: e.to_string(),
            })?;
        let mut embedder = OpenAiEmbedder {
            space: EmbeddingSpace {
                model: format!("openai:{}", options.model),
                dim: 0,
                pooling: Pooling::Mean,
                normalized: true,
                query_prefix: options.query_prefix.clone(),
                passage_prefix: options.passage_prefix.clone(),
            },
            options,
            client,
        };
        let probe = embedder.request(&["dimension probe".to_string()])?;
        embedder.space.dim = probe.first().map_or(0, |v| v.len() as u32);
        if embedder.space.dim == 0 {
            return Err(embedder.remote_error("the server returned an empty vector"));
        }
        Ok(embedder)
    }

    fn remote_error(&self, reason: impl Into<String>) -> EmbedError {
        EmbedError::Remote {
            url: self.options.base_url.clone(),
            reason: reason.into(),
        }
    }

    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/embeddings", self.options.base_url.trim_end_matches('/'));
        let body = serde_json::json!({ "model": self.options.model, "input": texts });
        let mut request = self
            .client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(key) = &self.options.api_key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .map_err(|e| self.remote_error(e.to_string()))?;
        let status = response.status();
        let text = response
            .text()
            .map_err(|e| self.remote_error(e.to_string()))?;
        if !status.is_success() {
            let excerpt: String = text.chars().take(300).collect();
            return Err(self.remote_error(format!("HTTP {status}: {excerpt}")));
        }
        let mut parsed: Response = serde_json::from_str(&text)
            .map_err(|e| self.remote_error(format!("unexpected response: {e}")))?;
        if parsed.data.len() != texts.len() {
            return Err(self.remote_error(format!(
                "asked for {} vectors, got {}",
                texts.len(),
                parsed.data.len()
            )));
        }
        parsed.data.sort_by_key(|item| item.index);
        Ok(parsed
            .data
            .into_iter()
            .map(|item| {
                let mut v = item.embedding;
                pool::l2_normalize(&mut v);
                v
            })
            .collect())
    }

    fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for part in texts.chunks(REQUEST_BATCH) {
            let vectors = self.request(part)?;
            if let Some(v) = vectors.iter().find(|v| v.len() != self.space.dim as usize) {
                return Err(self.remote_error(format!(
                    "dimension changed from {} to {}",
                    self.space.dim,
                    v.len()
                )));
            }
            out.extend(vectors);
        }
        Ok(out)
    }
}

impl Embedder for OpenAiEmbedder {
    fn space(&self) -> &EmbeddingSpace {
        &self.space
    }

    fn window(&self) -> usize {
        self.options.window
    }

    /// Without the server's tokenizer this is an estimate that errs high:
    /// about one token per four characters or per 0.75 words, whichever is more.
    fn count_tokens(&self, text: &str) -> usize {
        let chars = text.chars().count().div_ceil(4);
        let words = (text.split_whitespace().count() * 4).div_ceil(3);
        chars.max(words)
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = &self.space.passage_prefix;
        self.embed(texts.iter().map(|t| format!("{prefix}{t}")).collect())
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let prefix = &self.space.query_prefix;
        self.embed(vec![format!("{prefix}{text}")])?
            .pop()
            .ok_or_else(|| self.remote_error("no vector returned"))
    }

    fn backend(&self) -> &'static str {
        "openai"
    }
}
