//! The models folio knows by name: the seeds' embedding models and a small
//! cross-encoder, each pinned to a hub commit, with the files it needs and
//! what its embedding space is (dimension, pooling, prefixes). A library's
//! space records the repository id, so it names exactly what built it.
//! Models outside the catalogue still work from a folder or a hub id.

use folio_core::Pooling;

use crate::ModelConfig;
use crate::hub::HubFile;

/// What a model does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Embedding,
    /// A cross-encoder for the rerank stage (ONNX Runtime only).
    Reranker,
}

/// One catalogued model.
#[derive(Debug)]
pub struct CatalogEntry {
    /// The short name (`folio models pull NAME`, `[model] name`).
    pub name: &'static str,
    /// The hub repository, also the model id of the embedding space.
    pub repo: &'static str,
    /// The pinned commit.
    pub revision: &'static str,
    pub role: Role,
    pub dim: u32,
    pub pooling: Pooling,
    /// The encoder window in tokens.
    pub window: usize,
    pub query_prefix: &'static str,
    pub passage_prefix: &'static str,
    /// Whether it was trained on many languages. A model of English only
    /// has nothing to say about a query in another script: hybrid search
    /// then ranks by BM25 alone.
    pub multilingual: bool,
    /// Configuration and tokenizer files, needed on every path.
    pub common: &'static [HubFile],
    /// The ONNX graph (the fast path), if the repository has one.
    pub onnx: Option<(HubFile, u64)>,
    /// The safetensors weights for the candle path, if candle can run the
    /// architecture (BERT); with the size in bytes.
    pub safetensors: Option<(HubFile, u64)>,
    /// Which seed contract uses it.
    pub note: &'static str,
}

/// The default embedding model.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// The configuration and tokenizer of a model whose hashes the catalogue
/// does not pin: checked against the hub's content addresses.
const CHECKED_BY_HUB: [HubFile; 5] = [
    HubFile::checked_by_hub("config.json"),
    HubFile::checked_by_hub("tokenizer.json"),
    HubFile::optional("modules.json"),
    HubFile::optional("sentence_bert_config.json"),
    HubFile::optional("1_Pooling/config.json"),
];

/// Every catalogued model.
pub const CATALOG: &[CatalogEntry] = &[
    CatalogEntry {
        name: "all-MiniLM-L6-v2",
        repo: "sentence-transformers/all-MiniLM-L6-v2",
        revision: "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
        role: Role::Embedding,
        dim: 384,
        pooling: Pooling::Mean,
        window: 256,
        query_prefix: "",
        passage_prefix: "",
        multilingual: false,
        common: &[
            HubFile::pinned(
                "config.json",
                "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            ),
            HubFile::pinned(
                "tokenizer.json",
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            ),
            HubFile::pinned(
                "modules.json",
                "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
            ),
            HubFile::pinned(
                "sentence_bert_config.json",
                "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
            ),
            HubFile::pinned(
                "1_Pooling/config.json",
                "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
            ),
        ],
        onnx: Some((HubFile::checked_by_hub("onnx/model.onnx"), 90_405_214)),
        safetensors: Some((
            HubFile::pinned(
                "model.safetensors",
                "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            ),
            90_868_376,
        )),
        note: "default; seed 001",
    },
    CatalogEntry {
        name: "bge-small-en-v1.5",
        repo: "BAAI/bge-small-en-v1.5",
        revision: "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a",
        role: Role::Embedding,
        dim: 384,
        pooling: Pooling::Cls,
        window: 512,
        query_prefix: "Represent this sentence for searching relevant passages: ",
        passage_prefix: "",
        multilingual: false,
        common: &CHECKED_BY_HUB,
        onnx: Some((HubFile::optional("onnx/model.onnx"), 133_093_490)),
        safetensors: Some((HubFile::checked_by_hub("model.safetensors"), 133_466_304)),
        note: "seed 000; CLS pooling, query instruction",
    },
    CatalogEntry {
        name: "nomic-embed-text-v1.5",
        repo: "nomic-ai/nomic-embed-text-v1.5",
        revision: "e5cf08aadaa33385f5990def41f7a23405aec398",
        role: Role::Embedding,
        dim: 768,
        pooling: Pooling::Mean,
        window: 8192,
        query_prefix: "search_query: ",
        passage_prefix: "search_document: ",
        multilingual: false,
        common: &CHECKED_BY_HUB,
        onnx: Some((HubFile::checked_by_hub("onnx/model.onnx"), 547_239_997)),
        // NomicBert (rotary positions, SwiGLU): not the candle BERT path.
        safetensors: None,
        note: "seed 004; needs ONNX Runtime; search_query:/search_document: prefixes",
    },
    CatalogEntry {
        name: "multilingual-e5-small",
        repo: "intfloat/multilingual-e5-small",
        revision: "614241f622f53c4eeff9890bdc4f31cfecc418b3",
        role: Role::Embedding,
        dim: 384,
        pooling: Pooling::Mean,
        window: 512,
        query_prefix: "query: ",
        passage_prefix: "passage: ",
        multilingual: true,
        common: &CHECKED_BY_HUB,
        // Sizes of the fp32 graph and weights as `scripts/export_onnx.py`
        // and `scripts/multilingual_model.py` write them here (the same
        // tensors; the hub's files may differ by their headers).
        onnx: Some((HubFile::checked_by_hub("onnx/model.onnx"), 470_062_452)),
        safetensors: Some((HubFile::checked_by_hub("model.safetensors"), 470_045_848)),
        note: "about 100 languages; query:/passage: prefixes; the model folio suggests for text not in English",
    },
    CatalogEntry {
        name: "paraphrase-multilingual-MiniLM-L12-v2",
        repo: "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        revision: "16e5344fbfc7dfbbbe0019d30cec21e2940cb4e1",
        role: Role::Embedding,
        dim: 384,
        pooling: Pooling::Mean,
        // Trained on 128 word pieces (its `sentence_bert_config.json`).
        window: 128,
        query_prefix: "",
        passage_prefix: "",
        multilingual: true,
        common: &CHECKED_BY_HUB,
        // Sizes as the hub lists them (471 MB each); the files are checked
        // against the hub's content addresses.
        onnx: Some((HubFile::optional("onnx/model.onnx"), 471_000_000)),
        safetensors: Some((HubFile::checked_by_hub("model.safetensors"), 471_000_000)),
        note: "50 languages, short texts (128 tokens); not measured here (the hub cannot be reached from folio's test machines)",
    },
    CatalogEntry {
        name: "ms-marco-MiniLM-L-6-v2",
        repo: "cross-encoder/ms-marco-MiniLM-L-6-v2",
        revision: "c5ee24cb16019beea0893ab7796b1df96625c6b8",
        role: Role::Reranker,
        dim: 1,
        pooling: Pooling::Cls,
        window: 512,
        query_prefix: "",
        passage_prefix: "",
        multilingual: false,
        common: CHECKED_BY_HUB.split_at(2).0,
        onnx: Some((HubFile::checked_by_hub("onnx/model.onnx"), 91_011_230)),
        safetensors: None,
        note: "cross-encoder for [rerank]; needs ONNX Runtime",
    },
];

/// Whether the model of a space (its repository id) was trained on English
/// only: a catalogued model that says so. A model outside the catalogue
/// is not presumed to be.
pub fn english_only(model: &str) -> bool {
    find(model).is_some_and(|e| e.role == Role::Embedding && !e.multilingual)
}

/// A catalogued model by short name or repository id (case-insensitive).
pub fn find(name: &str) -> Option<&'static CatalogEntry> {
    CATALOG
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(name) || e.repo.eq_ignore_ascii_case(name))
}

impl CatalogEntry {
    /// The files to fetch: the common ones and the weights of the path that
    /// will run (the ONNX graph when ONNX Runtime is there and the repository
    /// has one, else the safetensors).
    pub fn files(&self, onnx: bool) -> Vec<HubFile> {
        let mut files = self.common.to_vec();
        files.extend(self.weights(onnx).map(|(file, _)| file));
        files
    }

    /// The bytes a fetch for that path downloads (weights only).
    pub fn download_bytes(&self, onnx: bool) -> u64 {
        self.weights(onnx).map_or(0, |(_, bytes)| bytes)
    }

    /// The weights of the path that will run, with their size.
    fn weights(&self, onnx: bool) -> Option<(HubFile, u64)> {
        match (onnx, self.onnx, self.safetensors) {
            (true, Some(graph), _) | (false, Some(graph), None) => Some(graph),
            (_, _, weights) => weights,
        }
    }

    /// Whether candle can run it (no ONNX Runtime needed).
    pub fn runs_on_candle(&self) -> bool {
        cfg!(feature = "candle") && self.safetensors.is_some() && self.role == Role::Embedding
    }

    /// The options that make its embedding space: the repository id and the
    /// model's prefixes.
    pub fn model_config(&self) -> ModelConfig {
        ModelConfig {
            id: Some(self.repo.into()),
            query_prefix: self.query_prefix.into(),
            passage_prefix: self.passage_prefix.into(),
            ..ModelConfig::default()
        }
    }
}

/// The files a model outside the catalogue needs, for a fetch by hub id: the
/// sentence-transformers configuration, the tokenizer, and the weights of
/// the path that will run.
pub fn files_for_hub_id(onnx: bool) -> Vec<HubFile> {
    let mut files = CHECKED_BY_HUB.to_vec();
    files.push(HubFile::checked_by_hub(if onnx {
        "onnx/model.onnx"
    } else {
        "model.safetensors"
    }));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_pinned_and_fetchable() {
        for entry in CATALOG {
            assert!(crate::hub::is_commit(entry.revision), "{}", entry.name);
            assert!(entry.onnx.is_some() || entry.safetensors.is_some());
            for onnx in [true, false] {
                let files = entry.files(onnx);
                assert!(files.iter().any(|f| f.path == "tokenizer.json"));
                assert!(
                    files
                        .iter()
                        .any(|f| f.path.ends_with(".onnx") || f.path.ends_with(".safetensors")),
                    "{} has weights to fetch",
                    entry.name
                );
            }
            for file in entry.common {
                assert!(file.sha256.is_none_or(|h| h.len() == 64));
            }
        }
        assert_eq!(
            find("BAAI/bge-small-en-v1.5").unwrap().name,
            "bge-small-en-v1.5"
        );
        assert_eq!(find(DEFAULT_MODEL).unwrap().role, Role::Embedding);
        // Without the runtime a candle model takes the safetensors; nomic
        // has only its graph.
        assert!(
            find("all-MiniLM-L6-v2")
                .unwrap()
                .files(false)
                .iter()
                .any(|f| f.path == "model.safetensors")
        );
        assert!(!find("nomic-embed-text-v1.5").unwrap().runs_on_candle());
    }
}
