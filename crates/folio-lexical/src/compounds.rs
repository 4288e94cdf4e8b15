//! German compounds split in two, by CharSplit's method (Tuggener, 2016):
//! a word is cut where the first part ends as German words often end, the
//! second begins as words often begin, and the letters across the cut
//! seldom stand inside a word. The probabilities are CharSplit's, learnt
//! from German text, as charsplit-fst 0.1.4 ships them (MIT OR
//! Apache-2.0), in hundredths, in one map bundled with the analyser
//! (`german-compounds.fst`, made outside the repository by
//! `scripts/german_compounds.sh`, which `scripts/setup.sh` runs; `build.rs`).
//!
//! "dateisystem" is "datei" and "system"; "entwicklungsdateien" is
//! "entwicklungs" and "dateien" (the joining "s" is the stemmer's to
//! remove); "bibliothek" and "verzeichnis" stay whole.

use std::sync::OnceLock;

use tantivy_fst::raw::{Fst, Output};

static DATA: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/german-compounds.fst"));

/// The least score of a cut: at 0.8, three German sets (manual pages,
/// package descriptions, the paired pages) ranked better than at 0.0 or
/// 0.5 on two of three (docs/benchmarks-history.md).
const THRESHOLD: f64 = 0.8;

/// Words shorter than this are never cut (each part has three letters at
/// least).
const SHORTEST: usize = 6;

fn fst() -> &'static Fst<&'static [u8]> {
    static FST: OnceLock<Fst<&'static [u8]>> = OnceLock::new();
    // The map is bundled and read by the same crate that wrote it; a
    // failure is a bug.
    FST.get_or_init(|| Fst::new(DATA).expect("the bundled compound map reads"))
}

/// Walks the map along `tag` then `text`, calling `each` with the number
/// of bytes of `text` read and the probability wherever a key ends: every
/// n-gram of the table that `text` begins with, in one walk.
fn walk(tag: u8, text: &str, mut each: impl FnMut(usize, f64)) {
    let fst = fst();
    let mut node = fst.root();
    let mut output = Output::zero();
    for (read, byte) in std::iter::once(tag).chain(text.bytes()).enumerate() {
        let Some(i) = node.find_input(byte) else {
            return;
        };
        let transition = node.transition(i);
        output = output.cat(transition.out);
        node = fst.node(transition.addr);
        if node.is_final() {
            let hundredths = output.cat(node.final_output()).value();
            each(read, hundredths as f64 / 100.0);
        }
    }
}

/// The probability of exactly `ngram` in the table `tag` (`p` or `s`).
fn probability(tag: u8, ngram: &str) -> Option<f64> {
    let mut found = None;
    walk(tag, ngram, |read, p| {
        if read == ngram.len() {
            found = Some(p);
        }
    });
    found
}

/// A joining "s" CharSplit leaves out before it looks a part up.
fn without_joining_s(part: &str) -> &str {
    let joined = ["ts", "gs", "ks", "hls", "ns"]
        .iter()
        .any(|end| part.ends_with(end));
    if joined && part.chars().nth(3).is_some() {
        &part[..part.len() - 1]
    } else {
        part
    }
}

/// The two parts of `word` (in lower case) where it is a compound, else
/// `None`.
pub(crate) fn split(word: &str) -> Option<(&str, &str)> {
    if word.chars().nth(SHORTEST - 1).is_none() || word.contains(|c: char| !c.is_alphabetic()) {
        return None;
    }
    cut(word).map(|at| word.split_at(at))
}

/// Where `word` is best cut, if its best cut scores above the threshold.
fn cut(word: &str) -> Option<usize> {
    let starts: Vec<usize> = word.char_indices().map(|(i, _)| i).collect();
    let mut best: Option<(f64, usize)> = None;
    for cut in 3..starts.len() - 2 {
        let at = starts[cut];
        let (first, second) = word.split_at(at);
        let ends = probability(b's', without_joining_s(first)).unwrap_or(-1.0);
        let begins = probability(b'p', without_joining_s(second)).unwrap_or(-1.0);
        // The rarest n-gram of three letters or more from the cut on.
        let three = starts.get(cut + 3).map_or(second.len(), |end| end - at);
        let mut inside: Option<f64> = None;
        walk(b'i', second, |read, p| {
            if read >= three && second.is_char_boundary(read) {
                inside = Some(inside.map_or(p, |least| least.min(p)));
            }
        });
        let score = begins - inside.unwrap_or(1.0) + ends;
        if best.is_none_or(|(top, _)| score > top) {
            best = Some((score, at));
        }
    }
    best.filter(|(score, _)| *score > THRESHOLD)
        .map(|(_, at)| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compounds_are_cut_where_their_words_meet() {
        assert_eq!(split("dateisystem"), Some(("datei", "system")));
        assert_eq!(
            split("entwicklungsdateien"),
            Some(("entwicklungs", "dateien"))
        );
        assert_eq!(split("zugriffsrechte"), Some(("zugriffs", "rechte")));
        assert_eq!(split("kriegsführung"), Some(("kriegs", "führung")));
        // A last part of three letters: its one n-gram ends the word.
        assert_eq!(split("aktionstyp"), Some(("aktions", "typ")));
    }

    #[test]
    fn words_that_are_no_compounds_stay_whole() {
        for word in ["bibliothek", "verzeichnis", "benutzer", "datei", "haus", ""] {
            assert_eq!(split(word), None, "{word}");
        }
        // Digits and other signs are no German word.
        assert_eq!(split("dateisystem2"), None);
    }
}
