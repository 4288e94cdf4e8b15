//! Who and what a text talks about, without a language model, at ingest
//! speed: declared entities (names and aliases) found exactly with one
//! Aho-Corasick pass over folded text (`Gazetteer`), candidate proper
//! names found by their shape (`candidates`, kept when they recur:
//! `recurring`), and co-mentions weighted by normalised pointwise mutual
//! information (`npmi`).
//!
//! Everything here is pure: text in, spans out. Spans are byte offsets into
//! the text given, so a mention maps to its chunk's characters exactly.
//! Nothing is merged by guess: two surfaces are one entity only when they
//! fold to the same text (case, punctuation, spacing) or are declared
//! aliases of it.

mod candidates;
mod declared;
mod extract;
mod fold;
mod gazetteer;

pub use candidates::{
    Candidate, Shape, candidates, document_candidates, recurring, recurring_keys,
};
pub use declared::{LineError, ListFormat, read_declared};
pub use extract::{DocumentEntities, Edge, EntityKey, ExtractLimits, Found, extract};
pub use fold::{Folded, fold, fold_name};
pub use gazetteer::{Declared, DeclaredError, Gazetteer, Mention, Relation};

/// Normalised pointwise mutual information of two entities mentioned in
/// `both` of `total` chunks, `a` and `b` of them each: 1 when they always
/// appear together, 0 when independent, -1 when never together. Defined
/// as -1 when either count is zero.
pub fn npmi(both: u64, a: u64, b: u64, total: u64) -> f64 {
    if both == 0 || a == 0 || b == 0 || total == 0 {
        return -1.0;
    }
    let total = total as f64;
    let p_ab = both as f64 / total;
    let p_a = a as f64 / total;
    let p_b = b as f64 / total;
    if p_ab >= 1.0 {
        return 1.0;
    }
    ((p_ab / (p_a * p_b)).ln() / -p_ab.ln()).clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npmi_spans_never_independent_and_always() {
        assert_eq!(npmi(0, 5, 5, 100), -1.0);
        // Always together, in 10 of 100 chunks.
        assert!((npmi(10, 10, 10, 100) - 1.0).abs() < 1e-12);
        // Independent: p_ab = p_a * p_b.
        assert!(npmi(1, 10, 10, 100).abs() < 1e-12);
        assert!(npmi(3, 10, 10, 100) > 0.0 && npmi(3, 10, 10, 100) < 1.0);
        assert_eq!(npmi(4, 4, 4, 4), 1.0);
    }
}
