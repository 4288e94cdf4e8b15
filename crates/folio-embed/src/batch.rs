//! Length-sorted batching: texts of similar length share a batch, so padding
//! costs little; results come back in the caller's order.

use crate::EmbedError;

/// Most sequences in one batch. On two cores, 8–16 beats larger batches:
/// padding costs more than batching saves.
pub const MAX_BATCH: usize = 16;
/// Most padded tokens (batch × longest) in one batch: 16 of 64 tokens, 4 of
/// 256, 2 of 512. What a run allocates grows with batch × longest² (the
/// attention scores), and ONNX Runtime's arena keeps the largest run's
/// memory for the process: with 16 × 256 (4,096 tokens) one run of long
/// chunks took 186 MB more than one of short ones (int8; 110 MB fp32), so an
/// ingest's peak rose with the longest chunks a folder happened to hold.
/// At 1,024 a run takes at most about 25 MB, at the same tokens/s.
pub const MAX_BATCH_TOKENS: usize = 1024;

/// Groups indices of `lengths` into batches, shortest first.
pub fn batches(lengths: &[usize]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut out = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        let longest = lengths[i].max(1);
        if !current.is_empty()
            && (current.len() >= MAX_BATCH || (current.len() + 1) * longest > MAX_BATCH_TOKENS)
        {
            out.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Runs `run` on each length-sorted batch of `items` (`len` gives an item's
/// tokens; the runner pads) and scatters the results back to input order.
/// A batch answered with another number of results is an error.
pub fn run_batches<T, R: Default + Clone>(
    items: &[T],
    len: impl Fn(&T) -> usize,
    mut run: impl FnMut(&[&T]) -> Result<Vec<R>, EmbedError>,
) -> Result<Vec<R>, EmbedError> {
    let lengths: Vec<usize> = items.iter().map(len).collect();
    let mut out = vec![R::default(); items.len()];
    for batch in batches(&lengths) {
        let inputs: Vec<&T> = batch.iter().map(|&i| &items[i]).collect();
        let results = run(&inputs)?;
        if results.len() != batch.len() {
            return Err(EmbedError::Inference(format!(
                "{} results for a batch of {}",
                results.len(),
                batch.len()
            )));
        }
        for (i, result) in batch.into_iter().zip(results) {
            out[i] = result;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_sort_by_length_and_restore_order() {
        let lengths = vec![5, 1, 300, 2, 4];
        let b = batches(&lengths);
        assert_eq!(b.concat().len(), 5);
        assert_eq!(b[0][0], 1);
        let ids: Vec<Vec<u32>> = lengths.iter().map(|&n| vec![7; n]).collect();
        let out = run_batches(&ids, Vec::len, |batch| {
            Ok(batch.iter().map(|s| vec![s.len() as f32]).collect())
        })
        .unwrap();
        assert_eq!(
            out,
            vec![vec![5.0], vec![1.0], vec![300.0], vec![2.0], vec![4.0]]
        );
    }

    #[test]
    fn many_long_texts_split_by_token_budget() {
        for n in [64, 100, 256, 512] {
            let lengths = vec![n; 40];
            let b = batches(&lengths);
            assert_eq!(b.concat().len(), 40);
            for batch in &b {
                assert!(
                    batch.len() * n <= MAX_BATCH_TOKENS,
                    "{} of {n}",
                    batch.len()
                );
            }
            assert_eq!(b[0].len(), (MAX_BATCH_TOKENS / n).clamp(1, MAX_BATCH));
        }
        // A text longer than the budget still gets a batch of its own.
        assert_eq!(batches(&[MAX_BATCH_TOKENS + 1, 3]), vec![vec![1], vec![0]]);
    }
}
