//! Candidate proper names, found by their shape: runs of capitalised words
//! (with `of`, `&`, `de`, `van`, `von`, `der`, `la`, `du` allowed between
//! two of them), acronyms, and names ending in a company form (Inc., Ltd,
//! GmbH, LLC, ...). A function word or a month opening a run is left out;
//! Markdown heading lines are skipped. A candidate is only a candidate:
//! `recurring` keeps those a document names more than once, at least once
//! away from the start of a sentence (where every word is capitalised).

use std::collections::{HashMap, HashSet};

use crate::fold::fold_name;

/// What a candidate looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Capitalised words.
    Name,
    /// One word of capitals (NASA, IBM), at most eight characters.
    Acronym,
    /// A name ending in a company form: an organization.
    Company,
}

/// A candidate proper name in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Byte offsets into the text.
    pub start: usize,
    pub end: usize,
    /// The folded surface: candidates with the same key are one name.
    pub key: String,
    pub shape: Shape,
    /// Whether it opens a sentence (or a line).
    pub sentence_initial: bool,
}

/// Company forms that end an organization's name.
const COMPANY_FORMS: [&str; 19] = [
    "inc",
    "incorporated",
    "ltd",
    "limited",
    "llc",
    "llp",
    "gmbh",
    "ag",
    "sa",
    "sas",
    "plc",
    "corp",
    "corporation",
    "co",
    "company",
    "nv",
    "bv",
    "kg",
    "pty",
];

/// Words allowed between two capitalised words of one name. Not "and":
/// "Acme and Globex" names two.
const CONNECTORS: [&str; 8] = ["of", "&", "de", "van", "von", "der", "la", "du"];

/// Capitalised words that do not start a name: function words, and the
/// months and days a date capitalises.
const NOT_NAMES: [&str; 60] = [
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "in",
    "on",
    "at",
    "for",
    "and",
    "but",
    "or",
    "if",
    "when",
    "while",
    "after",
    "before",
    "as",
    "by",
    "with",
    "from",
    "to",
    "of",
    "it",
    "its",
    "we",
    "our",
    "they",
    "their",
    "he",
    "she",
    "his",
    "her",
    "i",
    "you",
    "your",
    "there",
    "here",
    "all",
    "some",
    "no",
    "not",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "friday",
    "sunday",
    "saturday",
];

struct Word<'a> {
    start: usize,
    end: usize,
    text: &'a str,
    /// Only spaces (or tabs) between the previous word and this one.
    joined: bool,
    /// First word of a sentence or a line.
    initial: bool,
}

/// The words of `line` (letters, digits, and `.`, `'` or `&` inside or
/// after one), with offsets shifted by `base`.
fn words(line: &str, base: usize) -> Vec<Word<'_>> {
    let mut out: Vec<Word<'_>> = Vec::new();
    let mut start: Option<usize> = None;
    let mut gap_plain = true;
    let mut sentence_end = true;
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        let inner = matches!(c, '.' | '\'' | '\u{2019}' | '&')
            && start.is_some()
            && chars.get(i + 1).is_some_and(|&(_, n)| n.is_alphanumeric());
        if c.is_alphanumeric() || inner || (c == '&' && start.is_none()) {
            if start.is_none() {
                start = Some(at);
            }
            continue;
        }
        if let Some(s) = start.take() {
            // A trailing period belongs to an abbreviation's word ("Inc.")
            // but also ends a sentence; both are recorded.
            let text = &line[s..at];
            out.push(Word {
                start: base + s,
                end: base + at,
                text,
                joined: gap_plain && !out.is_empty(),
                initial: sentence_end,
            });
            sentence_end = false;
            gap_plain = true;
        }
        if matches!(c, '.' | '!' | '?' | ':' | ';') {
            sentence_end = sentence_end || matches!(c, '.' | '!' | '?');
            if c != '.' {
                gap_plain = false;
            } else {
                // "Acme Inc. signed": the period after a company form does
                // not end the name's sentence for the next word's sake.
                let last = out.last().map(|w| w.text.to_lowercase());
                if last.is_some_and(|w| COMPANY_FORMS.contains(&w.as_str())) {
                    sentence_end = false;
                }
                gap_plain = false;
            }
        } else if c != ' ' && c != '\t' {
            gap_plain = false;
        }
    }
    if let Some(s) = start {
        out.push(Word {
            start: base + s,
            end: base + line.len(),
            text: &line[s..],
            joined: gap_plain && !out.is_empty(),
            initial: sentence_end,
        });
    }
    out
}

fn capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

fn acronym(word: &str) -> bool {
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    (2..=8).contains(&word.chars().count())
        && letters >= 2
        && word
            .chars()
            .all(|c| c.is_uppercase() || c.is_ascii_digit() || c == '&')
}

/// Words that open sentences far more often than names: a run that opens
/// a sentence with one of them starts at its next word.
const OPENERS: [&str; 40] = [
    "yesterday",
    "today",
    "tomorrow",
    "later",
    "meanwhile",
    "however",
    "then",
    "also",
    "last",
    "next",
    "since",
    "although",
    "because",
    "during",
    "despite",
    "under",
    "over",
    "once",
    "now",
    "instead",
    "still",
    "yet",
    "thus",
    "hence",
    "finally",
    "first",
    "earlier",
    "recently",
    "previously",
    "currently",
    "initially",
    "additionally",
    "furthermore",
    "moreover",
    "therefore",
    "overall",
    "unlike",
    "following",
    "including",
    "according",
];

/// The candidate proper names of `text`, in order, at most `cap` (the
/// second value says whether more were left out).
pub fn candidates(text: &str, cap: usize) -> (Vec<Candidate>, bool) {
    document_candidates(&[text], cap).pop().unwrap_or_default()
}

/// The candidate names of each text of one document (its chunks), at most
/// `cap` per text. The document is read as a whole to tell a name that
/// opens a sentence from a capitalised ordinary word: such a run loses its
/// first word when that word is a common opener, is written in lower case
/// elsewhere, or when the rest of the run is a run of its own elsewhere ("Later Acme
/// sold" gives "Acme"), unless the document capitalises the word away from
/// sentence starts too ("New York" stays whole where it also says "in New
/// York").
pub fn document_candidates(texts: &[&str], cap: usize) -> Vec<(Vec<Candidate>, bool)> {
    let lines: Vec<Vec<Vec<Word<'_>>>> = texts
        .iter()
        .map(|text| {
            let mut offset = 0;
            let mut lines = Vec::new();
            for line in text.split_inclusive('\n') {
                let base = offset;
                offset += line.len();
                if !line.trim_start().starts_with('#') {
                    lines.push(words(line, base));
                }
            }
            lines
        })
        .collect();
    let every = || lines.iter().flatten().flatten();
    let placed: HashSet<String> = every()
        .filter(|w| !w.initial && capitalised(w.text))
        .map(|w| w.text.to_lowercase())
        .collect();
    let lower: HashSet<String> = every()
        .filter(|w| w.text.chars().next().is_some_and(char::is_lowercase))
        .map(|w| w.text.to_string())
        .collect();
    let named: HashSet<String> = texts
        .iter()
        .zip(&lines)
        .flat_map(|(text, lines)| {
            lines.iter().flat_map(move |words| {
                runs(words)
                    .into_iter()
                    .map(move |(first, last)| fold_name(&text[words[first].start..words[last].end]))
            })
        })
        .collect();
    texts
        .iter()
        .zip(&lines)
        .map(|(text, lines)| {
            let mut found = Vec::new();
            for words in lines {
                for (run_start, last) in runs(words) {
                    let first_word = words[run_start].text.to_lowercase();
                    let rest = (run_start + 1..=last).find(|&k| {
                        let lower = words[k].text.to_lowercase();
                        capitalised(words[k].text) && !CONNECTORS.contains(&lower.as_str())
                    });
                    let first = match rest {
                        Some(rest)
                            if words[run_start].initial
                                && !placed.contains(&first_word)
                                && !acronym(words[run_start].text)
                                && (OPENERS.contains(&first_word.as_str())
                                    || lower.contains(&first_word)
                                    || named.contains(&fold_name(
                                        &text[words[rest].start..words[last].end],
                                    ))) =>
                        {
                            rest
                        }
                        _ => run_start,
                    };
                    let (start, end) = (&words[first], &words[last]);
                    let single = first == last;
                    let last_lower = end.text.to_lowercase();
                    let shape = if !single && COMPANY_FORMS.contains(&last_lower.as_str()) {
                        Shape::Company
                    } else if single && acronym(start.text) {
                        Shape::Acronym
                    } else {
                        Shape::Name
                    };
                    let key = fold_name(&text[start.start..end.end]);
                    // One letter ("T cells", "P < 0.05") names nothing.
                    if key.chars().count() < 2 {
                        continue;
                    }
                    if found.len() == cap {
                        return (found, true);
                    }
                    found.push(Candidate {
                        start: start.start,
                        end: end.end,
                        key,
                        shape,
                        sentence_initial: start.initial,
                    });
                }
            }
            (found, false)
        })
        .collect()
}

/// The runs of a line's words that may be names, as (first, last) word
/// indices: a capitalised word that is not a function word, extended over
/// joined capitalised words and connectors between two of them.
fn runs(words: &[Word<'_>]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if !capitalised(words[i].text) || NOT_NAMES.contains(&words[i].text.to_lowercase().as_str())
        {
            i += 1;
            continue;
        }
        let mut last = i;
        let mut j = i + 1;
        while j < words.len() && words[j].joined && !words[j].initial {
            let lower = words[j].text.to_lowercase();
            if capitalised(words[j].text) && !NOT_NAMES.contains(&lower.as_str()) {
                last = j;
                j += 1;
            } else if CONNECTORS.contains(&lower.as_str())
                && j + 1 < words.len()
                && words[j + 1].joined
                && capitalised(words[j + 1].text)
            {
                j += 1;
            } else {
                break;
            }
        }
        out.push((i, last));
        i = last + 1;
    }
    out
}

/// The candidates worth keeping from one document's: each name (by key)
/// named at least `min` times, and at least once away from the start of a
/// sentence, or shaped as an acronym or a company.
pub fn recurring(candidates: &[Candidate], min: usize) -> Vec<&Candidate> {
    let kept = recurring_keys(candidates, min);
    candidates
        .iter()
        .filter(|c| kept.contains(c.key.as_str()))
        .collect()
}

/// The keys `recurring` keeps: keeping is a property of the name, so every
/// candidate with a kept key is kept.
pub fn recurring_keys<'a>(
    candidates: impl IntoIterator<Item = &'a Candidate>,
    min: usize,
) -> HashSet<&'a str> {
    let mut counts: HashMap<&str, (usize, bool)> = HashMap::new();
    for c in candidates {
        let entry = counts.entry(c.key.as_str()).or_default();
        entry.0 += 1;
        entry.1 |= !c.sentence_initial || c.shape != Shape::Name;
    }
    counts
        .into_iter()
        .filter(|&(_, (n, placed))| n >= min && placed)
        .map(|(key, _)| key)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, Shape, bool)> {
        candidates(text, 100)
            .0
            .into_iter()
            .map(|c| {
                (
                    text[c.start..c.end].to_string(),
                    c.shape,
                    c.sentence_initial,
                )
            })
            .collect()
    }

    #[test]
    fn runs_of_capitals_acronyms_and_company_forms_are_candidates() {
        assert_eq!(
            names("Yesterday Acme Corp. signed with Globex Inc. and NASA in New York."),
            vec![
                ("Acme Corp".into(), Shape::Company, false),
                ("Globex Inc".into(), Shape::Company, false),
                ("NASA".into(), Shape::Acronym, false),
                ("New York".into(), Shape::Name, false),
            ]
        );
        assert_eq!(
            names("She joined the Bank of America, then Smith & Wesson."),
            vec![
                ("Bank of America".into(), Shape::Name, false),
                ("Smith & Wesson".into(), Shape::Name, false),
            ]
        );
    }

    #[test]
    fn function_words_months_and_headings_are_not_names() {
        assert_eq!(
            names("# Quarterly Report\n\nThe board met in March. It was cold."),
            Vec::<(String, Shape, bool)>::new()
        );
        // A run does not cross a comma or a sentence.
        assert_eq!(
            names("We met Alice, Bob. Carol came"),
            vec![
                ("Alice".into(), Shape::Name, false),
                ("Bob".into(), Shape::Name, false),
                ("Carol".into(), Shape::Name, true),
            ]
        );
    }

    #[test]
    fn a_sentence_keeps_a_name_it_opens_only_when_the_text_capitalises_it_elsewhere() {
        assert_eq!(
            names("New York is big. I love New York."),
            vec![
                ("New York".into(), Shape::Name, true),
                ("New York".into(), Shape::Name, false),
            ]
        );
        assert_eq!(
            names("Meanwhile Bank of America grew."),
            vec![("Bank of America".into(), Shape::Name, false)]
        );
        // A name nothing marks as ordinary keeps its first word.
        assert_eq!(
            names("Jane Roe led the talks."),
            vec![("Jane Roe".into(), Shape::Name, true)]
        );
        // Across a document's chunks: the rest of the run is named elsewhere.
        let found = document_candidates(&["Acme sold it.", "Lastly Acme paid."], 10);
        assert_eq!(found[1].0[0].key, "acme");
    }

    #[test]
    fn a_single_letter_is_not_a_name() {
        assert_eq!(
            names("We counted T cells (P < 0.05) in the Mayo Clinic."),
            vec![("Mayo Clinic".into(), Shape::Name, false)]
        );
    }

    #[test]
    fn and_separates_two_names() {
        assert_eq!(
            names("Initech Ltd and Initech Ltd again; Alice and Bob."),
            vec![
                ("Initech Ltd".into(), Shape::Company, true),
                ("Initech Ltd".into(), Shape::Company, false),
                ("Alice".into(), Shape::Name, false),
                ("Bob".into(), Shape::Name, false),
            ]
        );
    }

    #[test]
    fn a_cap_bounds_the_candidates_of_a_text() {
        let text = "Alpha Beta, ".repeat(100);
        let (found, more) = candidates(&text, 20);
        assert_eq!((found.len(), more), (20, true));
    }

    #[test]
    fn only_names_that_recur_away_from_sentence_starts_are_kept() {
        let text = "Acme built it. Later Acme sold it. Rivers flow. Rivers rise. \
                    IBM came. Then Initech Ltd paid.";
        let (found, _) = candidates(text, 100);
        let kept: Vec<&str> = recurring(&found, 2)
            .iter()
            .map(|c| &text[c.start..c.end])
            .collect();
        // "Rivers" only ever opens a sentence; IBM and Initech Ltd are named
        // once.
        assert_eq!(kept, vec!["Acme", "Acme"]);
        let kept: Vec<&str> = recurring(&found, 1)
            .iter()
            .map(|c| &text[c.start..c.end])
            .collect();
        assert_eq!(kept, vec!["Acme", "Acme", "IBM", "Initech Ltd"]);
    }
}
