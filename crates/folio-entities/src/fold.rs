//! Folding for name matching: lower case, the punctuation inside names
//! dropped (`.`, apostrophes, `&`: "Acme Corp." is "acme corp", "AT&T" is
//! "att"), every other non-alphanumeric character a separator, separators
//! collapsed to one space. Each folded byte remembers the source character
//! it came from, so matches map back to the original text.

/// Text folded for matching, with the way back to its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    pub text: String,
    /// For each byte of `text`: the start of the source character it came
    /// from (a collapsed separator: the first one's).
    starts: Vec<usize>,
    /// For each byte of `text`: the end of that source character.
    ends: Vec<usize>,
}

impl Folded {
    /// The source byte range of the folded range `start..end` (non-empty,
    /// within the folded text).
    pub fn source(&self, start: usize, end: usize) -> (usize, usize) {
        (self.starts[start], self.ends[end - 1])
    }
}

/// Characters dropped inside a name rather than read as a separator.
fn dropped(c: char) -> bool {
    matches!(c, '.' | '\'' | '\u{2019}' | '&')
}

/// Folds `text` (see the module's rules).
pub fn fold(text: &str) -> Folded {
    let mut folded = Folded {
        text: String::with_capacity(text.len()),
        starts: Vec::with_capacity(text.len()),
        ends: Vec::with_capacity(text.len()),
    };
    // A separator is written only before the next kept character, so the
    // folded text neither starts nor ends with one.
    let mut pending: Option<(usize, usize)> = None;
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        if c.is_alphanumeric() {
            if let Some((s, e)) = pending.take()
                && !folded.text.is_empty()
            {
                folded.text.push(' ');
                folded.starts.push(s);
                folded.ends.push(e);
            }
            for lower in c.to_lowercase() {
                let before = folded.text.len();
                folded.text.push(lower);
                for _ in before..folded.text.len() {
                    folded.starts.push(at);
                    folded.ends.push(end);
                }
            }
        } else if !dropped(c) && pending.is_none() {
            pending = Some((at, end));
        }
    }
    folded
}

/// A name or alias as the gazetteer matches it.
pub fn fold_name(name: &str) -> String {
    fold(name).text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_over_case_punctuation_and_spacing() {
        assert_eq!(fold_name("Acme Corp."), "acme corp");
        assert_eq!(fold_name("  ACME   corp "), "acme corp");
        assert_eq!(fold_name("AT&T"), "att");
        assert_eq!(fold_name("Coca-Cola"), "coca cola");
        assert_eq!(fold_name("McDonald's"), "mcdonalds");
        assert_eq!(fold_name("Müller GmbH"), "müller gmbh");
        assert_eq!(fold_name("..."), "");
    }

    #[test]
    fn folded_ranges_map_back_to_the_source() {
        let text = "Sold by Müller-Lüdenscheid, Inc. today";
        let folded = fold(text);
        let at = folded.text.find("müller lüdenscheid inc").unwrap();
        let (s, e) = folded.source(at, at + "müller lüdenscheid inc".len());
        assert_eq!(&text[s..e], "Müller-Lüdenscheid, Inc");
        // A character whose lower case is longer maps each byte back to it.
        let text = "İstanbul";
        let folded = fold(text);
        let (s, e) = folded.source(0, folded.text.len());
        assert_eq!(&text[s..e], "İstanbul");
    }
}
