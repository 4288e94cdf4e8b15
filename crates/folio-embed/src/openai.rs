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
                precision: Default::default(),
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

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A loopback server speaking the embeddings API: each input's vector is
    /// [len, 1, 0] (unnormalised), returned in reverse order with indices.
    /// Answers `requests` requests; `fail_at` answers HTTP 500 instead.
    fn server(
        requests: usize,
        fail_at: Option<usize>,
    ) -> (String, std::thread::JoinHandle<Vec<serde_json::Value>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for (i, stream) in listener.incoming().take(requests).enumerate() {
                let mut stream = stream.unwrap();
                let mut data = Vec::new();
                let mut buf = [0u8; 65536];
                let body = loop {
                    let n = stream.read(&mut buf).unwrap();
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length: usize = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        if body.len() >= length {
                            break body.to_string();
                        }
                    }
                };
                let request: serde_json::Value = serde_json::from_str(&body).unwrap();
                let reply = if Some(i) == fail_at {
                    "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops".to_string()
                } else {
                    let inputs = request["input"].as_array().unwrap();
                    let data: Vec<serde_json::Value> = inputs
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, t)| serde_json::json!({"index": i, "embedding": [t.as_str().unwrap().len() as f32, 1.0, 0.0]}))
                        .collect();
                    let body = serde_json::json!({"data": data}).to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                stream.write_all(reply.as_bytes()).unwrap();
                seen.push(request);
            }
            seen
        });
        (url, handle)
    }

    fn options(url: String) -> OpenAiOptions {
        OpenAiOptions {
            base_url: url,
            model: "test-model".into(),
            api_key: Some("secret".into()),
            window: 512,
            timeout: Duration::from_secs(5),
            query_prefix: "query: ".into(),
            passage_prefix: "passage: ".into(),
        }
    }

    #[test]
    fn embeds_in_input_order_normalised_with_prefixes() {
        let (url, server) = server(3, None);
        let embedder = OpenAiEmbedder::connect(options(url)).unwrap();
        assert_eq!(embedder.space().dim, 3);
        assert_eq!(embedder.space().model, "openai:test-model");
        let vectors = embedder.embed_passages(&["a", "abcd"]).unwrap();
        let expected = |len: f32| {
            let n = (len * len + 1.0).sqrt();
            vec![len / n, 1.0 / n, 0.0]
        };
        assert_eq!(vectors, vec![expected(10.0), expected(13.0)]); // "passage: " is 9 chars
        assert_eq!(embedder.embed_query("hi").unwrap(), expected(9.0));
        let requests = server.join().unwrap();
        assert_eq!(requests[1]["model"], "test-model");
        assert_eq!(
            requests[1]["input"],
            serde_json::json!(["passage: a", "passage: abcd"])
        );
        assert_eq!(requests[2]["input"], serde_json::json!(["query: hi"]));
    }

    #[test]
    fn server_errors_are_reported_with_status() {
        let (url, server) = server(2, Some(1));
        let embedder = OpenAiEmbedder::connect(options(url)).unwrap();
        match embedder.embed_passages(&["x"]) {
            Err(EmbedError::Remote { reason, .. }) => assert!(reason.contains("500"), "{reason}"),
            other => panic!("expected a remote error, got {other:?}"),
        }
        server.join().unwrap();
        let refused = OpenAiEmbedder::connect(options("http://127.0.0.1:9/v1".into()));
        assert!(matches!(refused, Err(EmbedError::Remote { .. })));
    }
}
