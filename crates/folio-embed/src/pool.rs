//! Pooling token vectors into one text vector, and normalisation.

use folio_core::Pooling;

/// Pools one sequence's hidden states (`len × hidden`, row-major) over its
/// first `len` tokens (the attention mask: padding never contributes).
pub fn pool(hidden: &[f32], len: usize, dim: usize, pooling: Pooling, normalize: bool) -> Vec<f32> {
    let mut out = match pooling {
        Pooling::Cls => hidden[..dim].to_vec(),
        Pooling::Mean => {
            let mut sum = vec![0f32; dim];
            for row in hidden[..len * dim].chunks_exact(dim) {
                for (s, v) in sum.iter_mut().zip(row) {
                    *s += v;
                }
            }
            let n = len.max(1) as f32;
            sum.iter_mut().for_each(|s| *s /= n);
            sum
        }
    };
    if normalize {
        l2_normalize(&mut out);
    }
    out
}

pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_ignores_padding_and_normalises() {
        // two real tokens, one padding token with huge values
        let hidden = [1.0, 0.0, 3.0, 0.0, 100.0, 100.0];
        assert_eq!(pool(&hidden, 2, 2, Pooling::Mean, false), vec![2.0, 0.0]);
        assert_eq!(pool(&hidden, 2, 2, Pooling::Mean, true), vec![1.0, 0.0]);
        assert_eq!(pool(&hidden, 2, 2, Pooling::Cls, false), vec![1.0, 0.0]);
    }
}
