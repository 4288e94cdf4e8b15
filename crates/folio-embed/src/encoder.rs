//! The shared shape of a local encoder: prefix, tokenize, batch by length,
//! run the network, pool, normalise. Backends supply only the forward pass.

use folio_core::EmbeddingSpace;

use crate::queries::Queries;
use crate::{EmbedError, Embedder, LocalModel, batch, pool};

/// A network that maps a batch of token-id sequences to pooled vectors.
pub trait Forward: Send + Sync {
    /// Runs one batch (sequences of different lengths; the backend pads) and
    /// returns one pooled vector per sequence, in order.
    fn forward(&self, model: &LocalModel, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError>;

    fn name(&self) -> &'static str;

    /// Whether a text's vector is the same whatever batch it runs in (an
    /// fp32 network with an attention mask; not one that quantises its
    /// activations per batch). Only then do concurrent questions share a
    /// pass.
    fn batch_invariant(&self, model: &LocalModel) -> bool;
}

/// A local encoder: a model folder plus a forward pass.
pub struct Encoder<F> {
    pub(crate) model: LocalModel,
    pub(crate) forward: F,
    pub(crate) queries: Queries,
}

impl<F: Forward> Encoder<F> {
    /// Embeds whole documents cut to the window, as a benchmark would feed
    /// any encoder; returns the vectors and the number of tokens encoded.
    pub fn embed_cut_to_window(
        &self,
        texts: &[String],
    ) -> Result<(Vec<Vec<f32>>, usize), EmbedError> {
        let ids = self.model.encode(texts, true)?;
        let tokens = ids.iter().map(Vec::len).sum();
        Ok((self.run_ids(&ids)?, tokens))
    }

    /// Forward passes run for questions (several questions asked at once
    /// share one).
    pub fn query_passes(&self) -> u64 {
        self.queries.passes()
    }

    /// Runs token-id sequences through the network in length-sorted batches.
    fn run_ids<S: AsRef<[u32]>>(&self, ids: &[S]) -> Result<Vec<Vec<f32>>, EmbedError> {
        batch::run_batches(
            ids,
            |s| s.as_ref().len(),
            |b| {
                let b: Vec<&[u32]> = b.iter().map(|s| s.as_ref()).collect();
                self.forward.forward(&self.model, &b)
            },
        )
    }

    fn embed(&self, texts: Vec<String>, cut: bool) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.run_ids(&self.model.encode(&texts, cut)?)
    }
}

impl<F: Forward> Embedder for Encoder<F> {
    fn space(&self) -> &EmbeddingSpace {
        &self.model.space
    }

    /// The tokens a passage may have: the model's window less its passage
    /// prefix ("passage: " is embedded before every chunk of e5), and one
    /// token more, as the prefix and the text may tokenise differently
    /// where they meet.
    fn window(&self) -> usize {
        match self.model.space.passage_prefix.as_str() {
            "" => self.model.window,
            prefix => self
                .model
                .window
                .saturating_sub(self.model.count_tokens(prefix) + 1),
        }
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.model.count_tokens(text)
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = &self.model.space.passage_prefix;
        self.embed(
            texts.iter().map(|t| format!("{prefix}{t}")).collect(),
            false,
        )
    }

    fn encode_passage(&self, text: &str) -> Option<(usize, Vec<u32>)> {
        self.model.encode_passage(text)
    }

    fn embed_passage_ids(&self, ids: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some(long) = ids.iter().find(|s| s.len() > self.model.window) {
            return Err(EmbedError::TooLong {
                tokens: long.len(),
                window: self.model.window,
            });
        }
        self.run_ids(ids)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let text = format!("{}{text}", self.model.space.query_prefix);
        if self.forward.batch_invariant(&self.model) {
            return self.queries.embed(text, |texts| self.embed(texts, true));
        }
        let mut out = self.embed(vec![text], true)?;
        out.pop()
            .ok_or_else(|| EmbedError::Inference("no vector returned".into()))
    }

    fn backend(&self) -> &'static str {
        self.forward.name()
    }
}

/// Pads a batch to its longest sequence: ids, attention mask, and lengths.
pub(crate) fn pad(batch: &[&[u32]]) -> (usize, Vec<i64>, Vec<i64>, Vec<usize>) {
    let seq = batch.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut ids = vec![0i64; batch.len() * seq];
    let mut mask = vec![0i64; batch.len() * seq];
    for (row, sequence) in batch.iter().enumerate() {
        for (col, &id) in sequence.iter().enumerate() {
            ids[row * seq + col] = i64::from(id);
            mask[row * seq + col] = 1;
        }
    }
    (seq, ids, mask, batch.iter().map(|s| s.len()).collect())
}

/// Pools each padded sequence of a batch's hidden states (`batch × seq × dim`)
/// over its real length.
pub(crate) fn pool_batch(
    model: &LocalModel,
    hidden: &[f32],
    seq: usize,
    lengths: &[usize],
) -> Vec<Vec<f32>> {
    let dim = model.hidden_size;
    lengths
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let rows = &hidden[i * seq * dim..(i + 1) * seq * dim];
            pool::pool(rows, len, dim, model.space.pooling, model.space.normalized)
        })
        .collect()
}
