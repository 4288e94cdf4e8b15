//! Fusion arithmetic checked against hand computations.

use folio_core::{ChunkId, DocumentId, LibraryName};

use super::*;

fn id(doc: &str, i: u32) -> ChunkId {
    ChunkId::new(&DocumentId::derive(&LibraryName::new("l").unwrap(), doc), i)
}

fn list(items: &[(&str, u32, f32)]) -> Vec<Scored> {
    items
        .iter()
        .map(|&(d, i, s)| Scored {
            chunk: id(d, i),
            score: s,
        })
        .collect()
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn rrf_matches_the_formula() {
    let lexical = list(&[("a", 0, 9.0), ("b", 0, 5.0)]);
    let dense = list(&[("b", 0, 0.9), ("c", 0, 0.8)]);
    let fused = fuse(
        &lexical,
        &dense,
        Fusion::Rrf {
            k: 60.0,
            lexical_weight: 1.0,
            dense_weight: 1.0,
        },
    );
    let best = 2.0 / 61.0;
    // b: 1/62 + 1/61; a: 1/61; c: 1/62
    assert_eq!(fused[0].chunk, id("b", 0));
    assert!(close(fused[0].score, (1.0 / 62.0 + 1.0 / 61.0) / best));
    assert_eq!(fused[1].chunk, id("a", 0));
    assert!(close(fused[1].score, (1.0 / 61.0) / best));
    assert!(close(fused[2].score, (1.0 / 62.0) / best));
    assert_eq!(
        fused[0].lexical,
        Some(Provenance {
            rank: 2,
            score: 5.0
        })
    );
    assert_eq!(
        fused[0].dense,
        Some(Provenance {
            rank: 1,
            score: 0.9
        })
    );
    assert_eq!(fused[2].lexical, None);
}

#[test]
fn rrf_weights_tilt_the_order() {
    let lexical = list(&[("a", 0, 9.0)]);
    let dense = list(&[("c", 0, 0.8)]);
    let fused = fuse(
        &lexical,
        &dense,
        Fusion::Rrf {
            k: 60.0,
            lexical_weight: 0.3,
            dense_weight: 0.7,
        },
    );
    assert_eq!(fused[0].chunk, id("c", 0));
    assert!(close(fused[0].score, 0.7));
}

#[test]
fn weighted_combination_normalises_each_list() {
    let lexical = list(&[("a", 0, 10.0), ("b", 0, 6.0), ("c", 0, 2.0)]);
    let dense = list(&[("c", 0, 0.9), ("b", 0, 0.7), ("d", 0, 0.5)]);
    let fused = fuse(
        &lexical,
        &dense,
        Fusion::Weighted {
            lexical_weight: 0.5,
        },
    );
    let score = |d: &str| fused.iter().find(|f| f.chunk == id(d, 0)).unwrap().score;
    assert!(close(score("a"), 0.5));
    assert!(close(score("b"), 0.5 * 0.5 + 0.5 * 0.5));
    assert!(close(score("c"), 0.0 + 0.5));
    assert!(close(score("d"), 0.0));
    assert!(fused.iter().all(|f| (0.0..=1.0).contains(&f.score)));
    // lexical_weight 1.0 reproduces the lexical order
    let lexical_only = fuse(
        &lexical,
        &dense,
        Fusion::Weighted {
            lexical_weight: 1.0,
        },
    );
    assert_eq!(lexical_only[0].chunk, id("a", 0));
}

#[test]
fn single_lists_scale_into_the_unit_interval() {
    let bm25 = single(&list(&[("a", 0, 12.0), ("b", 0, 3.0)]), Mode::Lexical);
    assert!(close(bm25[0].score, 1.0) && close(bm25[1].score, 0.25));
    let cosine = single(&list(&[("a", 0, 0.8), ("b", 0, -0.2)]), Mode::Dense);
    assert!(close(cosine[0].score, 0.8) && close(cosine[1].score, 0.0));
}

#[test]
fn grouping_keeps_best_chunk_order_and_caps() {
    let hits = single(
        &list(&[
            ("a", 2, 0.9),
            ("b", 0, 0.8),
            ("a", 0, 0.7),
            ("a", 5, 0.6),
            ("c", 1, 0.5),
        ]),
        Mode::Dense,
    );
    let groups = group_by_document(&hits, 2, 2);
    assert_eq!(groups.len(), 2);
    assert_eq!(
        groups[0]
            .hits
            .iter()
            .map(|h| h.chunk.clone())
            .collect::<Vec<_>>(),
        vec![id("a", 2), id("a", 0)]
    );
    assert_eq!(groups[1].hits.len(), 1);
}

#[test]
fn fusion_validation() {
    assert!(
        Fusion::Rrf {
            k: -1.0,
            lexical_weight: 1.0,
            dense_weight: 1.0
        }
        .validate()
        .is_err()
    );
    assert!(
        Fusion::Rrf {
            k: 60.0,
            lexical_weight: 0.0,
            dense_weight: 0.0
        }
        .validate()
        .is_err()
    );
    assert!(
        Fusion::Weighted {
            lexical_weight: 1.5
        }
        .validate()
        .is_err()
    );
    assert!(Fusion::default().validate().is_ok());
}

#[test]
fn reranker_scores_blend_into_the_fused_order() {
    // Fused: a 1.0, b 0.8, c 0.6, d 0.4. The reranker read a, b, c only.
    let fused = single(
        &list(&[("a", 0, 10.0), ("b", 0, 8.0), ("c", 0, 6.0), ("d", 0, 4.0)]),
        Mode::Lexical,
    );
    let blended = blend_rerank(fused, &[-2.0, 1.0, 3.0], 0.5);
    let order: Vec<_> = blended.iter().map(|f| f.chunk.clone()).collect();
    // a: .5 + 0; b: .4 + .5 × .6; c: .3 + .5; d: .2 (unread: counted last).
    assert_eq!(order, vec![id("c", 0), id("b", 0), id("a", 0), id("d", 0)]);
    let scores: Vec<f32> = blended.iter().map(|f| f.score).collect();
    for (got, want) in scores.iter().zip([0.8, 0.7, 0.5, 0.2]) {
        assert!(close(*got, want), "{scores:?}");
    }
    assert_eq!(blended[0].rerank, Some(3.0));
    assert_eq!(blended[3].rerank, None);
    assert!(blended[0].lexical.is_some(), "provenance is kept");
}

#[test]
fn a_reranker_at_weight_zero_or_without_scores_keeps_the_fused_order() {
    let fused = single(
        &list(&[("a", 0, 10.0), ("b", 0, 8.0), ("c", 0, 6.0)]),
        Mode::Lexical,
    );
    let kept = blend_rerank(fused.clone(), &[1.0, 5.0, 9.0], 0.0);
    assert_eq!(
        kept.iter().map(|f| &f.chunk).collect::<Vec<_>>(),
        fused.iter().map(|f| &f.chunk).collect::<Vec<_>>()
    );
    let unread = blend_rerank(fused.clone(), &[f32::NAN], 1.0);
    assert!(unread.iter().all(|f| f.score == 0.0 && f.rerank.is_none()));
    assert_eq!(unread[0].chunk, fused[0].chunk, "ties keep the fused order");
}
