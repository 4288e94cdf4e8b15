//! Approximate substring search: where in a text a passage occurs with the
//! fewest edits (insertions, deletions, substitutions), by Myers' bit-vector
//! algorithm in Hyyrö's blocked form. Linear in the text — O(n · ⌈m/64⌉)
//! word operations for a passage of m chars over a text of n — where an edit
//! distance per candidate window would be quadratic in both.
//!
//! `locate` runs it twice: forwards with a free start (semi-global: the
//! alignment may begin anywhere) to find where the best match ends, then
//! backwards from that end, anchored there, to find where it starts.

use std::collections::HashMap;

/// A located match: `text[start..end]` is `distance` edits from the passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    pub start: usize,
    pub end: usize,
    pub distance: usize,
}

/// The passage's bit masks: for each char, the rows (passage positions) that
/// hold it, 64 rows per block.
struct Pattern {
    masks: HashMap<char, Vec<u64>>,
    blocks: usize,
    /// The bit of the last row within the last block.
    last_bit: u64,
    len: usize,
}

impl Pattern {
    fn new(pattern: &[char]) -> Self {
        let blocks = pattern.len().div_ceil(64).max(1);
        let mut masks: HashMap<char, Vec<u64>> = HashMap::new();
        for (i, &c) in pattern.iter().enumerate() {
            masks.entry(c).or_insert_with(|| vec![0; blocks])[i / 64] |= 1 << (i % 64);
        }
        Pattern {
            masks,
            blocks,
            last_bit: 1 << ((pattern.len().max(1) - 1) % 64),
            len: pattern.len(),
        }
    }

    /// Runs the columns of `text`; `top` is the horizontal delta of the
    /// alignment's top row per column (0: a match may start anywhere; 1:
    /// anchored at the text's start). Calls `column(j, score)` with the
    /// edit distance of the whole passage ending at `text[j]`. Stops early
    /// (returning false) when `stop` says so, checked every 4096 columns.
    fn scan(
        &self,
        text: impl Iterator<Item = char>,
        top: i32,
        stop: &dyn Fn() -> bool,
        mut column: impl FnMut(usize, usize),
    ) -> bool {
        let zeros = vec![0u64; self.blocks];
        let mut pv = vec![u64::MAX; self.blocks];
        let mut mv = vec![0u64; self.blocks];
        let mut score = self.len as i64;
        for (j, c) in text.enumerate() {
            if j % 4096 == 4095 && stop() {
                return false;
            }
            let eqs = self.masks.get(&c).unwrap_or(&zeros);
            let mut carry = top;
            for b in 0..self.blocks {
                let high = if b + 1 == self.blocks {
                    self.last_bit
                } else {
                    1 << 63
                };
                carry = advance(&mut pv[b], &mut mv[b], eqs[b], carry, high);
            }
            score += i64::from(carry);
            column(j, score.max(0) as usize);
        }
        true
    }
}

/// One 64-row block of one column (Hyyrö 2003): updates the block's
/// vertical deltas from the char's match mask and the horizontal delta
/// entering at its top; returns the horizontal delta leaving at row `high`.
fn advance(pv: &mut u64, mv: &mut u64, eq: u64, hin: i32, high: u64) -> i32 {
    let mut eq = eq;
    let xv = eq | *mv;
    if hin < 0 {
        eq |= 1;
    }
    let xh = (((eq & *pv).wrapping_add(*pv)) ^ *pv) | eq;
    let mut ph = *mv | !(xh | *pv);
    let mut mh = *pv & xh;
    let hout = if ph & high != 0 {
        1
    } else if mh & high != 0 {
        -1
    } else {
        0
    };
    ph <<= 1;
    mh <<= 1;
    if hin < 0 {
        mh |= 1;
    } else if hin > 0 {
        ph |= 1;
    }
    *pv = mh | !(xv | ph);
    *mv = ph & xv;
    hout
}

/// The occurrence of `pattern` in `text` with the fewest edits (the
/// leftmost among equals), or `None` for an empty pattern or text, or when
/// `stop` interrupts the search.
pub fn locate(text: &[char], pattern: &[char], stop: &dyn Fn() -> bool) -> Option<Located> {
    if pattern.is_empty() || text.is_empty() {
        return None;
    }
    let forward = Pattern::new(pattern);
    let mut best: Option<(usize, usize)> = None;
    let finished = forward.scan(text.iter().copied(), 0, stop, |j, score| {
        if best.is_none_or(|(_, s)| score < s) {
            best = Some((j, score));
        }
    });
    let (last, distance) = best.filter(|_| finished)?;
    // Backwards from the end, anchored there: the best start is the one
    // whose alignment costs exactly the distance found, the longest such
    // span when several do (the match keeps its edges).
    let reversed: Vec<char> = pattern.iter().rev().copied().collect();
    let backward = Pattern::new(&reversed);
    let reach = (pattern.len() + distance).min(last + 1);
    let mut start = last;
    let mut best_back = usize::MAX;
    let finished = backward.scan(
        text[last + 1 - reach..=last].iter().rev().copied(),
        1,
        stop,
        |j, score| {
            if score <= best_back {
                best_back = score;
                start = last - j;
            }
        },
    );
    finished.then_some(Located {
        start,
        end: last + 1,
        distance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook dynamic programme: least edits of `pattern` against
    /// any substring of `text`.
    fn naive(text: &[char], pattern: &[char]) -> usize {
        let mut previous: Vec<usize> = (0..=pattern.len()).collect();
        let mut best = previous[pattern.len()];
        for &t in text {
            let mut current = vec![0; pattern.len() + 1];
            for (i, &p) in pattern.iter().enumerate() {
                current[i + 1] = (previous[i] + usize::from(p != t))
                    .min(previous[i + 1] + 1)
                    .min(current[i] + 1);
            }
            best = best.min(current[pattern.len()]);
            previous = current;
        }
        best
    }

    fn edit_distance(a: &[char], b: &[char]) -> usize {
        let mut previous: Vec<usize> = (0..=b.len()).collect();
        for (i, &x) in a.iter().enumerate() {
            let mut current = vec![i + 1; b.len() + 1];
            for (j, &y) in b.iter().enumerate() {
                current[j + 1] = (previous[j] + usize::from(x != y))
                    .min(previous[j + 1] + 1)
                    .min(current[j] + 1);
            }
            previous = current;
        }
        previous[b.len()]
    }

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn finds_exact_and_edited_occurrences() {
        let text = chars("the quick brown fox jumps over the lazy dog");
        let never = || false;
        let found = locate(&text, &chars("brown fox"), &never).unwrap();
        assert_eq!((found.start, found.end, found.distance), (10, 19, 0));
        let found = locate(&text, &chars("brwn foxx"), &never).unwrap();
        let span: String = text[found.start..found.end].iter().collect();
        assert_eq!(found.distance, 2, "{span}");
        assert!(span.starts_with("br") && span.ends_with("fox"), "{span}");
    }

    #[test]
    fn agrees_with_the_dynamic_programme_across_block_sizes() {
        // Deterministic pseudo-random texts over a small alphabet, with
        // patterns of 1 to 200 chars (several 64-row blocks).
        let mut state = 0x9E3779B97F4A7C15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n) as usize
        };
        let alphabet = chars("abcd ");
        for round in 0..120 {
            let text: Vec<char> = (0..300).map(|_| alphabet[next(5)]).collect();
            let len = 1 + round * 5 % 200;
            let from = next(100);
            let mut pattern: Vec<char> = text[from..(from + len).min(text.len())].to_vec();
            for _ in 0..next(6) {
                let at = next(pattern.len() as u64);
                pattern[at] = alphabet[next(5)];
            }
            let found = locate(&text, &pattern, &|| false).unwrap();
            assert_eq!(found.distance, naive(&text, &pattern), "round {round}");
            assert_eq!(
                edit_distance(&text[found.start..found.end], &pattern),
                found.distance,
                "round {round}: the span found costs what was reported"
            );
        }
    }

    #[test]
    fn a_stop_interrupts_the_search() {
        let text: Vec<char> = "abc ".repeat(10_000).chars().collect();
        assert_eq!(locate(&text, &chars("abc"), &|| true), None);
    }
}
