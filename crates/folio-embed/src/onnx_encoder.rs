//! The fast path: ONNX Runtime through `ort`, with the runtime library loaded
//! at run time (`load-dynamic`), so nothing is downloaded at build time.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ndarray::{Array1, Array2};
use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;

use folio_core::Precision;

use crate::encoder::{Encoder, Forward, pad, pool_batch};
use crate::model::Inputs;
use crate::pool::l2_normalize;
use crate::{EmbedError, LocalModel, ModelConfig};

/// ONNX Runtime forward pass over `model.onnx`: a BERT-family graph
/// (inputs input_ids, attention_mask, token_type_ids; output
/// last_hidden_state), or a ragged one ([`Inputs::Ragged`]).
pub struct OnnxForward {
    session: Mutex<Session>,
    /// An int8 graph, or one shipped quantised: its activations are
    /// quantised per batch.
    quantised: bool,
}

/// The local encoder on ONNX Runtime.
pub type OnnxEncoder = Encoder<OnnxForward>;

/// The newest `libonnxruntime.so*` in `dir` (where scripts/setup.sh puts it).
pub fn find_runtime_library(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so"))
        })
        .collect();
    found.sort();
    found.pop()
}

static RUNTIME: OnceLock<Result<Environment, String>> = OnceLock::new();

/// Loads the ONNX Runtime library once per process (the first path wins).
pub(crate) fn load_runtime(library: &Path) -> Result<&'static Environment, EmbedError> {
    let result = RUNTIME.get_or_init(|| {
        let builder = ort::init_from(library).map_err(|e| e.to_string())?;
        builder
            .with_name("folio")
            .build()
            .map_err(|e| e.to_string())
    });
    result.as_ref().map_err(|reason| EmbedError::Runtime {
        path: library.display().to_string(),
        reason: reason.clone(),
    })
}

/// Whether the library loads as this build's ONNX Runtime (API 24, 1.24 or
/// later); the first library loaded stays loaded for the process.
pub fn check_runtime(library: &Path) -> Result<(), EmbedError> {
    load_runtime(library).map(|_| ())
}

/// The fp32 graph: `model.onnx`, or `onnx/model.onnx` in the hub's layout.
pub(crate) const FP32_GRAPHS: &[&str] = &["model.onnx", "onnx/model.onnx"];
/// The int8 graph `scripts/export_onnx.py --int8` writes. Only this one:
/// another quantiser's graph gives other vectors, so it is another space.
pub const INT8_GRAPH: &str = "model_int8.onnx";

/// Whether this CPU's int8 kernels can saturate: x86 without VNNI, where
/// ONNX Runtime's u8 × s8 kernel sums pairs of products in 16 bits. Under
/// emulation of such a CPU, the int8 graph's dense nDCG@10 on a SciFact cut
/// fell 0.011 below fp32, against +0.0003 with VNNI (docs/benchmarks-history.md).
/// There the int8 session runs with [`EXACT_INT8`].
pub fn int8_kernels_saturate() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !(std::arch::is_x86_feature_detected!("avx512vnni")
            || std::arch::is_x86_feature_detected!("avxvnni"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// ONNX Runtime's session entry that rewrites each int8 weight matrix as
/// uint8 (w + 128, its zero point moved with it: the same products) where
/// its u8 × s8 kernels can saturate, so its u8 × u8 kernels run, which sum
/// without a 16-bit clamp. The integers are then exact, as with VNNI, and
/// the vectors those of a VNNI CPU; the kernels are slower than u8 × s8.
/// Weights cut to 7 bits instead would keep the faster kernel but lost
/// 0.007 dense nDCG@10 on SciFact train (docs/benchmarks-history.md).
pub const EXACT_INT8: (&str, &str) = ("session.x64quantprecision", "1");

/// An ONNX Runtime session over the first of the folder's `graphs` that
/// exists, with `threads` intra-op threads and the session `entries`;
/// `hint` says how to get a missing graph.
pub(crate) fn session(
    dir: &Path,
    graphs: &[&str],
    runtime: &Path,
    threads: usize,
    entries: &[(&str, &str)],
    hint: &str,
) -> Result<Session, EmbedError> {
    let environment = load_runtime(runtime)?;
    let onnx = graphs
        .iter()
        .map(|g| dir.join(g))
        .find(|p| p.exists())
        .ok_or_else(|| EmbedError::Load {
            path: dir.display().to_string(),
            reason: format!("no {} ({hint})", graphs[0]),
        })?;
    let fail = |e: String| EmbedError::Load {
        path: onnx.display().to_string(),
        reason: e,
    };
    let build = |graph: &Path| -> Result<Session, EmbedError> {
        let mut builder = Session::builder(environment).map_err(|e| fail(e.to_string()))?;
        for (key, value) in entries {
            builder = builder
                .with_config_entry(key, value)
                .map_err(|e| fail(e.to_string()))?;
        }
        builder
            .with_optimization_level(GraphOptimizationLevel::All)
            .map_err(|e| fail(e.to_string()))?
            .with_intra_threads(threads.max(1))
            .map_err(|e| fail(e.to_string()))?
            // No memory pattern: it plans one block per input shape, and
            // batch shapes vary with every batch, so the CPU arena kept
            // growing with blocks it could not reuse (a 30,000-note ingest
            // peaked at 695 MB with it and 437 MB without; encoder speed
            // the same, benchmarks.md).
            .with_memory_pattern(false)
            .map_err(|e| fail(e.to_string()))?
            .commit_from_file(graph)
            .map_err(|e| fail(e.to_string()))
    };
    // The weights mapped, not copied into the process (`mapped_graph`);
    // a copy that does not load leaves the graph loaded as it is.
    let mapped = crate::mapped_graph::mapped(&onnx);
    if mapped != onnx {
        match build(&mapped) {
            Ok(session) => return Ok(session),
            Err(e) => tracing::info!(graph = %mapped.display(), "loading the graph as it is: {e}"),
        }
    }
    build(&onnx)
}

/// Runs a BERT-family graph on one padded batch (input ids, attention
/// mask, token type ids) and hands `read` the shape and values of its
/// output at position `output`.
pub(crate) fn run_bert<T>(
    session: &Mutex<Session>,
    [ids, mask, types]: [&Array2<i64>; 3],
    output: usize,
    read: impl FnOnce(&[i64], &[f32]) -> Result<T, EmbedError>,
) -> Result<T, EmbedError> {
    let err = |e: ort::Error| EmbedError::Inference(e.to_string());
    // A poisoned lock only means another thread panicked mid-run; the
    // session itself holds no state between runs.
    let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
    let outputs = session
        .run(ort::inputs![
            "input_ids" => TensorRef::from_array_view(ids).map_err(err)?,
            "attention_mask" => TensorRef::from_array_view(mask).map_err(err)?,
            "token_type_ids" => TensorRef::from_array_view(types).map_err(err)?,
        ])
        .map_err(err)?;
    let (shape, values) = outputs[output].try_extract_tensor::<f32>().map_err(err)?;
    read(shape, values)
}

impl OnnxEncoder {
    /// Loads the runtime library, the model folder and its graph for the
    /// precision (`model.onnx` or the hub's `onnx/model.onnx` for fp32,
    /// `model_int8.onnx` for int8), with `threads` intra-op threads.
    pub fn load(
        dir: &Path,
        options: &ModelConfig,
        runtime: &Path,
        threads: usize,
    ) -> Result<Self, EmbedError> {
        let model = LocalModel::open(dir, options)?;
        if model.inputs == Inputs::Ragged && options.precision == Precision::Int8 {
            return Err(EmbedError::Load {
                path: dir.display().to_string(),
                reason: "this model has one graph, model.onnx, quantised as it ships: leave \
                         [model] precision at fp32"
                    .into(),
            });
        }
        let (graphs, hint) = match options.precision {
            Precision::Fp32 => (
                FP32_GRAPHS,
                "run scripts/setup.sh, or use the candle backend".to_string(),
            ),
            Precision::Int8 => (
                &[INT8_GRAPH][..],
                format!(
                    "make it with `python scripts/export_onnx.py --int8 {dir} {dir}/{INT8_GRAPH}`; \
                     scripts/setup.sh does for the default model",
                    dir = dir.display()
                ),
            ),
        };
        // A ragged graph (the multilingual USE) ships quantised.
        let quantised = options.precision == Precision::Int8 || model.inputs == Inputs::Ragged;
        let exact = quantised && int8_kernels_saturate();
        let entries: &[(&str, &str)] = if exact { &[EXACT_INT8] } else { &[] };
        let session = session(dir, graphs, runtime, threads, entries, &hint)?;
        Ok(Encoder {
            model,
            forward: OnnxForward {
                session: Mutex::new(session),
                quantised,
            },
            queries: Default::default(),
        })
    }
}

impl OnnxForward {
    /// A ragged graph's batch: the ids end to end and where each text's
    /// begin; one vector per text back.
    fn forward_ragged(
        &self,
        model: &LocalModel,
        batch: &[&[u32]],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let err = |e: ort::Error| EmbedError::Inference(e.to_string());
        let ids = batch
            .iter()
            .flat_map(|s| s.iter())
            .map(|&id| {
                i32::try_from(id).map_err(|_| EmbedError::Inference(format!("token id {id}")))
            })
            .collect::<Result<Vec<i32>, _>>()?;
        let splits: Vec<i64> = std::iter::once(0)
            .chain(batch.iter().scan(0i64, |end, s| {
                *end += s.len() as i64;
                Some(*end)
            }))
            .collect();
        let (ids, splits) = (Array1::from(ids), Array1::from(splits));
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let outputs = session
            .run(ort::inputs![
                "token_ids" => TensorRef::from_array_view(&ids).map_err(err)?,
                "row_splits" => TensorRef::from_array_view(&splits).map_err(err)?,
            ])
            .map_err(err)?;
        let (shape, values) = outputs[0].try_extract_tensor::<f32>().map_err(err)?;
        let dim = model.hidden_size;
        if shape[..] != [batch.len() as i64, dim as i64] {
            return Err(EmbedError::Inference(format!(
                "the graph returned shape {shape:?} for {} texts of {dim} dimensions",
                batch.len()
            )));
        }
        Ok(values
            .chunks_exact(dim)
            .map(|v| {
                let mut v = v.to_vec();
                if model.space.normalized {
                    l2_normalize(&mut v);
                }
                v
            })
            .collect())
    }
}

impl Forward for OnnxForward {
    fn forward(&self, model: &LocalModel, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if model.inputs == Inputs::Ragged {
            return self.forward_ragged(model, batch);
        }
        let (seq, ids, mask, lengths) = pad(batch);
        let shape = (batch.len(), seq);
        let ids =
            Array2::from_shape_vec(shape, ids).map_err(|e| EmbedError::Inference(e.to_string()))?;
        let mask = Array2::from_shape_vec(shape, mask)
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        let types = Array2::<i64>::zeros(shape);
        run_bert(&self.session, [&ids, &mask, &types], 0, |_, hidden| {
            Ok(pool_batch(model, hidden, seq, &lengths))
        })
    }

    fn name(&self) -> &'static str {
        "onnxruntime"
    }

    fn batch_invariant(&self, model: &LocalModel) -> bool {
        !self.quantised && model.inputs != Inputs::Ragged
    }
}
