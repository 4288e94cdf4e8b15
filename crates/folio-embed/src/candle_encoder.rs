//! The pure-Rust fallback: a BERT forward pass on candle tensors on the CPU
//! (`candle_bert`). No native library; about half the speed of ONNX Runtime
//! on two cores. Built with the `candle` feature (a default); without it,
//! loading says how to get the ONNX Runtime path instead.

use std::path::Path;

#[cfg(feature = "candle")]
use candle_core::{DType, Device, Tensor};
#[cfg(feature = "candle")]
use candle_nn::VarBuilder;

#[cfg(feature = "candle")]
use crate::candle_bert::{Bert, BertConfig};
use crate::encoder::{Encoder, Forward};
#[cfg(feature = "candle")]
use crate::encoder::{pad, pool_batch};
use crate::{EmbedError, LocalModel, ModelConfig};

/// candle forward pass over `model.safetensors`.
#[cfg(feature = "candle")]
pub struct CandleForward {
    bert: Bert,
}

/// No candle in this build: never made.
#[cfg(not(feature = "candle"))]
pub enum CandleForward {}

/// The local encoder on candle.
pub type CandleEncoder = Encoder<CandleForward>;

#[cfg(not(feature = "candle"))]
impl CandleEncoder {
    pub fn load(dir: &Path, _options: &ModelConfig) -> Result<Self, EmbedError> {
        Err(EmbedError::Load {
            path: dir.display().to_string(),
            reason:
                "this folio was built without the candle encoder (no `candle` feature): it needs \
                     ONNX Runtime (`pip install onnxruntime` beside folio, or ORT_DYLIB_PATH)"
                    .into(),
        })
    }
}

#[cfg(not(feature = "candle"))]
impl Forward for CandleForward {
    fn forward(&self, _: &LocalModel, _: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match *self {}
    }

    fn name(&self) -> &'static str {
        "candle"
    }

    fn batch_invariant(&self, _: &LocalModel) -> bool {
        true
    }
}

#[cfg(feature = "candle")]
impl CandleEncoder {
    pub fn load(dir: &Path, options: &ModelConfig) -> Result<Self, EmbedError> {
        let fail = |e: String| EmbedError::Load {
            path: dir.display().to_string(),
            reason: e,
        };
        if options.precision != folio_core::Precision::Fp32 {
            return Err(fail(
                "int8 runs on ONNX Runtime only: set [model] backend = \"onnx\" with the runtime \
                 installed (pip install onnxruntime, or scripts/setup.sh)"
                    .into(),
            ));
        }
        let model = LocalModel::open(dir, options)?;
        if model.inputs != crate::Inputs::Padded {
            return Err(fail(
                "this model's graph runs on ONNX Runtime only: set [model] backend = \"onnx\" \
                 with the runtime installed (pip install onnxruntime, or scripts/setup.sh)"
                    .into(),
            ));
        }
        let config: BertConfig = serde_json::from_str(
            &std::fs::read_to_string(dir.join("config.json")).map_err(|e| fail(e.to_string()))?,
        )
        .map_err(|e| fail(format!("config.json: {e}")))?;
        let weights = std::fs::read(dir.join("model.safetensors"))
            .map_err(|e| fail(format!("model.safetensors: {e}")))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| fail(e.to_string()))?;
        let bert = Bert::load(vb, &config).map_err(|e| fail(e.to_string()))?;
        Ok(Encoder {
            model,
            forward: CandleForward { bert },
            queries: Default::default(),
        })
    }
}

#[cfg(feature = "candle")]
impl Forward for CandleForward {
    fn forward(&self, model: &LocalModel, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let err = |e: candle_core::Error| EmbedError::Inference(e.to_string());
        let (seq, ids, mask, lengths) = pad(batch);
        let shape = (batch.len(), seq);
        let device = self.bert.device();
        let ids: Vec<u32> = ids.into_iter().map(|id| id as u32).collect();
        let ids = Tensor::from_vec(ids, shape, device).map_err(err)?;
        let mask = Tensor::from_vec(mask, shape, device).map_err(err)?;
        let hidden = self.bert.forward(&ids, &mask).map_err(err)?;
        let hidden: Vec<f32> = hidden
            .flatten_all()
            .and_then(|t| t.to_vec1())
            .map_err(err)?;
        Ok(pool_batch(model, &hidden, seq, &lengths))
    }

    fn name(&self) -> &'static str {
        "candle"
    }

    fn batch_invariant(&self, _: &LocalModel) -> bool {
        true
    }
}
