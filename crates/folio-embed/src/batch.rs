//! Length-sorted batching: texts of similar length share a batch, so padding
//! costs little; results come back in the caller's order.

use crate::EmbedError;

/// Most sequences in one batch. On two cores, 8–16 beats larger batches:
/// padding costs more than batching saves.
pub const MAX_BATCH: usize = 16;
/// Most attention scores (batch × longest², per head) in one batch: 16
/// sequences of 64 tokens, 4 of 128, one of 256 or longer. A run's memory
/// grows with the attention scores, and ONNX Runtime's arena keeps the
/// largest run's memory for the process, so a cap on padded tokens alone
/// (1,024: 4 of 256) still let the longest chunks a folder happened to
/// hold raise an ingest's peak (the 1,000-note folder with its 10 longest
/// notes swapped for longer ones: +12 MB). Bounded by the scores, every
/// batch shape costs what 16 × 64 costs, and ONNX Runtime's tokens/s
/// measured the same for 1, 2 and 4 sequences of 256 tokens.
pub const MAX_BATCH_ATTENTION: usize = 64 * 64 * MAX_BATCH;

/// Groups indices of `lengths` into batches, shortest first.
pub fn batches(lengths: &[usize]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut out = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        let longest = lengths[i].max(1);
        if !current.is_empty()
            && (current.len() >= MAX_BATCH
                || (current.len() + 1) * longest * longest > MAX_BATCH_ATTENTION)
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
    fn long_texts_split_by_attention_budget() {
        for (n, size) in [
            (20, 16),
            (64, 16),
            (65, 15),
            (100, 6),
            (128, 4),
            (256, 1),
            (512, 1),
        ] {
            let lengths = vec![n; 40];
            let b = batches(&lengths);
            assert_eq!(b.concat().len(), 40);
            for batch in &b {
                assert!(batch.len() == 1 || batch.len() * n * n <= MAX_BATCH_ATTENTION);
            }
            assert_eq!(b[0].len(), size, "batches of {n}-token texts");
        }
        // Mixed lengths: a batch is bounded by its longest text.
        let b = batches(&[30, 30, 30, 30, 200, 30]);
        assert_eq!(b, vec![vec![0, 1, 2, 3, 5], vec![4]]);
    }
}
