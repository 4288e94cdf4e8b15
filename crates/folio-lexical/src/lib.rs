//! folio's lexical analyser: what a term is, for every store backend. The
//! embedded store indexes with it (tantivy postings), the PostgreSQL store
//! keeps postings of its own from it; both score BM25 over the same terms
//! and the same quantised lengths, so a library ranks alike on either.
//!
//! The analyser's version (`INDEX_VERSION`) names the terms an index holds:
//! a backend rebuilds an index of another version before searching it.

use std::sync::Arc;

use regex::Regex;
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter,
    TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Lucene's English stop words (also Elasticsearch's and bm25s's default).
/// Snowball's longer list removed words long natural-language requests
/// carry meaning in ("about", "between", "against", "during", "most"),
/// and no reference BM25 scores with it.
pub const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// A token is a run of two or more word characters (Unicode letters,
/// digits, underscore), as in Lucene-style reference implementations
/// (bm25s, scikit-learn): one-character runs ("s" of "it's", "e.g.",
/// list markers) carry no meaning on their own.
const TOKEN: &str = r"\w\w+";

/// The tokens of `TOKEN`, found as tantivy's `RegexTokenizer` finds them
/// (each match in the rest of the text), with one compiled pattern shared
/// by every copy of the analyser. `RegexTokenizer` clones its pattern for
/// each text, and a clone starts with an empty cache of the lazy DFA, which
/// then builds its states again for every chunk: that took most of the
/// time of indexing 20,000 small notes.
#[derive(Clone)]
struct WordTokenizer {
    pattern: Arc<Regex>,
    token: Token,
}

struct WordStream<'a> {
    pattern: &'a Regex,
    rest: &'a str,
    cursor: usize,
    token: &'a mut Token,
}

impl WordTokenizer {
    fn new() -> Self {
        WordTokenizer {
            // The pattern is a constant that compiles; a failure is a bug.
            pattern: Arc::new(Regex::new(TOKEN).expect("the token pattern compiles")),
            token: Token::default(),
        }
    }
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.token.reset();
        WordStream {
            pattern: &self.pattern,
            rest: text,
            cursor: 0,
            token: &mut self.token,
        }
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        let Some(found) = self.pattern.find(self.rest).filter(|m| !m.is_empty()) else {
            return false;
        };
        self.token.text.clear();
        self.token.text.push_str(found.as_str());
        self.token.offset_from = self.cursor + found.start();
        self.cursor += found.end();
        self.token.offset_to = self.cursor;
        self.token.position = self.token.position.wrapping_add(1);
        self.rest = &self.rest[found.end()..];
        true
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// The English analyser used for documents and queries alike: tokens of
/// two or more word characters, at most 40 bytes, lower case, ASCII
/// folding, Lucene's stop words, Snowball's English stemmer.
/// Built once per process (the pattern is compiled once); each caller gets
/// a cheap clone.
pub fn analyzer() -> TextAnalyzer {
    static ANALYZER: std::sync::OnceLock<TextAnalyzer> = std::sync::OnceLock::new();
    ANALYZER
        .get_or_init(|| {
            TextAnalyzer::builder(WordTokenizer::new())
                .filter(RemoveLongFilter::limit(40))
                .filter(LowerCaser)
                .filter(AsciiFoldingFilter)
                .filter(StopWordFilter::remove(
                    STOP_WORDS.iter().map(|w| w.to_string()),
                ))
                .filter(Stemmer::new(Language::English))
                .build()
        })
        .clone()
}

/// The version of the lexical index: of `analyzer` and of the entries.
/// An index of another version is rebuilt from the source of truth before
/// it is searched (the embedded store keeps each version's index in a
/// folder of its own; the PostgreSQL backend re-analyses in
/// a migration). 4 records each entry's length in terms, so collection
/// statistics count live entries only, after deletes too. 3 added an entry
/// per document (its whole text) beside the chunks'. 2 changed the analyser: version 1 split on every
/// non-alphanumeric character, kept one-character tokens and removed
/// Snowball's 174 English stop words.
pub const INDEX_VERSION: u32 = 4;

/// A document's whole text as the lexical index scores it: its title, then
/// its text (the title once, when the text already opens with it), as a
/// reference BM25 indexes a BEIR document's title and text.
pub fn document_text(title: Option<&str>, text: &str) -> String {
    let title = title.map(str::trim).filter(|t| !t.is_empty());
    match title {
        Some(title)
            if text
                .trim_start()
                .lines()
                .next()
                .is_some_and(|first| first.trim_start_matches('#').trim() == title) =>
        {
            text.to_string()
        }
        Some(title) => format!("{title}\n{text}"),
        None => text.to_string(),
    }
}

/// The key of a document's entry: its id's 16 hex digits as a number.
pub fn document_key(id: &str) -> Option<u64> {
    (id.len() == 16)
        .then(|| u64::from_str_radix(id, 16).ok())
        .flatten()
}

/// The analysed terms of `text`, in order, repeats included: what the
/// lexical index holds for a chunk (another backend's BM25 postings).
pub fn analyze(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    for_each_token(text, |token| terms.push(token.text.clone()));
    terms
}

/// Calls `each` with every analysed token of `text`, in order: the one
/// walk of the analyser that indexing, counting and postings share.
pub fn for_each_token(text: &str, mut each: impl FnMut(&Token)) {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        each(stream.token());
    }
}

/// The distinct analysed terms of `text` with how often each occurs, and
/// the number of terms (repeats included): a document's postings, built
/// without holding its terms one by one (a whole document can run to
/// millions).
pub fn term_counts(text: &str) -> (Vec<(String, u32)>, usize) {
    let mut counts: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut length = 0;
    for_each_token(text, |token| {
        length += 1;
        match counts.get_mut(token.text.as_str()) {
            Some(n) => *n += 1,
            None => {
                counts.insert(token.text.clone(), 1);
            }
        }
    });
    (counts.into_iter().collect(), length)
}

/// The number of analysed terms of `text`, repeats included.
pub fn term_count(text: &str) -> usize {
    let mut length = 0;
    for_each_token(text, |_| length += 1);
    length
}

/// The analysed terms of a query, each once in order of first appearance,
/// with how often the query has it: BM25 counts a repeated query term as
/// often as it occurs (as Lucene and bm25s do), which long, natural-language
/// queries depend on.
pub fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut terms: Vec<(String, f32)> = Vec::new();
    let mut position: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for term in analyze(query) {
        match position.get(&term) {
            Some(&i) => terms[i].1 += 1.0,
            None => {
                position.insert(term.clone(), terms.len());
                terms.push((term, 1.0));
            }
        }
    }
    terms
}

/// A chunk's length as the lexical index scores it: tantivy stores field
/// lengths in one byte, exact up to 40 and coarser above.
pub fn scored_length(terms: usize) -> u32 {
    tantivy::fieldnorm::FieldNormReader::constant(1, terms.min(u32::MAX as usize) as u32)
        .fieldnorm(0)
}

/// The `k` best (key, score) pairs, best first; ties broken by key for
/// stable output.
pub fn top_k(mut scored: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    let order = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scored.len() > k {
        scored.select_nth_unstable_by(k, order);
        scored.truncate(k);
    }
    scored.sort_by(order);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 13: the analyser tokenises as Lucene-style reference BM25s do
    // (bm25s's `\w\w+`, lower case, Lucene's 33 stop words, Snowball
    // English): one-character runs are not terms, words outside Lucene's
    // list ("about", "what", "between") are kept, accents are folded.
    #[test]
    fn the_analyser_tokenises_as_the_reference_does() {
        assert_eq!(
            analyze("It's e.g. U.S. COVID-19: what about vitamin D between the Cafés?"),
            ["covid", "19", "what", "about", "vitamin", "between", "cafe"]
        );
        assert_eq!(
            analyze("snake_case x86 2 running"),
            ["snake_cas", "x86", "run"]
        );
        assert_eq!(analyze("a I is the of"), Vec::<String>::new());
        assert_eq!(
            query_terms("effects of the effect: effective"),
            [("effect".to_string(), 3.0)]
        );
    }

    // Issue 33: the shared-pattern tokenizer finds what tantivy's
    // `RegexTokenizer` with the same pattern finds (the terms an index of
    // this version holds), token for token: text, byte offsets, positions.
    #[test]
    fn words_are_the_tokens_of_the_regex_tokenizer() {
        use tantivy::tokenizer::RegexTokenizer;
        let texts = [
            "It's e.g. U.S. COVID-19: what about vitamin D between the Cafés?",
            "snake_case x86 2 running a b cd",
            "Ångström naïve coöperate Zürich e\u{301}te\u{301} ﬁne",
            "数据库 検索 поиск بحث 🙂🙂 x🙂y ab",
            "",
            "   ",
            "  trailing  spaces  ",
            "ǅemal Ⅻ ² ٣٤ 12,345.67 ‿tie_",
        ];
        fn collect(mut stream: impl TokenStream) -> Vec<Token> {
            let mut tokens = Vec::new();
            while stream.advance() {
                tokens.push(stream.token().clone());
            }
            tokens
        }
        let mut reference = RegexTokenizer::new(TOKEN).unwrap();
        let mut words = WordTokenizer::new();
        for text in texts {
            let expected = collect(reference.token_stream(text));
            let found = collect(words.token_stream(text));
            assert_eq!(found, expected, "{text:?}");
        }
    }

    #[test]
    fn lengths_are_exact_to_40_terms_and_coarser_above() {
        for n in 0..=40 {
            assert_eq!(scored_length(n), n as u32);
        }
        assert!(scored_length(1_000) <= 1_000 && scored_length(1_000) > 800);
    }

    #[test]
    fn counts_agree_with_the_terms() {
        let text = "Running runners run; the runner ran. Running!";
        let terms = analyze(text);
        let (counts, length) = term_counts(text);
        assert_eq!(length, terms.len());
        assert_eq!(term_count(text), terms.len());
        for (term, n) in counts {
            assert_eq!(terms.iter().filter(|t| **t == term).count() as u32, n);
        }
    }
}
