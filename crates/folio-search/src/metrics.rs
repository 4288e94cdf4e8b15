//! Retrieval metrics as BEIR computes them: nDCG@k with graded relevance
//! (gain = relevance, log2 discount), Recall@k, and MRR@k.

use std::collections::HashMap;

/// Relevance judgements of one query: document id → grade (> 0 is relevant).
pub type Judgements = HashMap<String, u32>;

/// nDCG@k of `ranking` (document ids, best first).
pub fn ndcg_at(ranking: &[String], judged: &Judgements, k: usize) -> f64 {
    let dcg: f64 = ranking
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, d)| judged.get(d).copied().unwrap_or(0) as f64 / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<u32> = judged.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| g as f64 / ((i + 2) as f64).log2())
        .sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}

/// Fraction of the relevant documents found in the top `k`.
pub fn recall_at(ranking: &[String], judged: &Judgements, k: usize) -> f64 {
    let relevant = judged.values().filter(|&&g| g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranking
        .iter()
        .take(k)
        .filter(|d| judged.get(*d).is_some_and(|&g| g > 0))
        .count();
    found as f64 / relevant as f64
}

/// Reciprocal rank of the first relevant document within the top `k`.
pub fn mrr_at(ranking: &[String], judged: &Judgements, k: usize) -> f64 {
    ranking
        .iter()
        .take(k)
        .position(|d| judged.get(d).is_some_and(|&g| g > 0))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hand_computed_values() {
        let judged: Judgements = [("a".to_string(), 1), ("b".to_string(), 1)].into();
        let ranking = ids(&["x", "a", "y", "b"]);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((ndcg_at(&ranking, &judged, 10) - dcg / idcg).abs() < 1e-12);
        assert_eq!(recall_at(&ranking, &judged, 2), 0.5);
        assert_eq!(recall_at(&ranking, &judged, 100), 1.0);
        assert_eq!(mrr_at(&ranking, &judged, 10), 0.5);
        assert_eq!(mrr_at(&ranking, &judged, 1), 0.0);
        assert_eq!(ndcg_at(&ids(&["a", "b"]), &judged, 10), 1.0);
    }

    #[test]
    fn graded_relevance_and_no_relevant() {
        let judged: Judgements = [("a".to_string(), 2), ("b".to_string(), 1)].into();
        assert!(ndcg_at(&ids(&["b", "a"]), &judged, 10) < 1.0);
        assert_eq!(ndcg_at(&ids(&["a", "b"]), &judged, 10), 1.0);
        assert_eq!(ndcg_at(&ids(&["a"]), &Judgements::new(), 10), 0.0);
    }
}
