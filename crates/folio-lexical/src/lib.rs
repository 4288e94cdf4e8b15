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
    AsciiFoldingFilter, Language as TantivyLanguage, LowerCaser, RemoveLongFilter, Stemmer,
    StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};

mod analysis;
mod compounds;
mod language;

pub use analysis::QueryTerms;
pub use language::{Language, detect, detected, in_language};

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

/// The English analyser: tokens of two or more word characters, at most
/// 40 bytes, lower case, ASCII folding, Lucene's stop words, Snowball's
/// English stemmer. Built once per process (the pattern is compiled
/// once); each caller gets a cheap clone. A text in English and the Latin
/// script only is analysed by it in one pass (see `Words`); it is also the
/// whole analysis of index version 4, before languages were told apart.
pub fn english_analyzer() -> TextAnalyzer {
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
                .filter(Stemmer::new(TantivyLanguage::English))
                .build()
        })
        .clone()
}

/// The analyser used for documents and queries alike, on every backend:
/// each text is analysed in its language (`analysis::Words`).
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::from(analysis::Words::new(None))
}

/// The analyser of texts in `language`, whatever they look like (a
/// language the source names).
pub fn analyzer_in(language: Language) -> TextAnalyzer {
    TextAnalyzer::from(analysis::Words::new(Some(language)))
}

/// The version of the lexical index: of `analyzer` and of the entries.
/// An index of another version is rebuilt from the source of truth before
/// it is searched (the embedded store keeps each version's index in a
/// folder of its own; the PostgreSQL backend re-analyses in
/// a migration). 8 analyses a chunk or a whole text that does not tell
/// its language in its document's (`text_language`). 7 adds the two parts of a German compound as terms
/// beside it ("Dateisystem": "dateisystem", "datei", "system"). 6 adds identifiers ("XA-4645", "IL-6", "10.1038/x1")
/// as terms of their own beside their runs. 5 analyses each text in its language (stemmers and stop
/// words of 17 languages, Chinese words, pairs of Japanese and Korean
/// characters) and records each chunk's language. 4 records each entry's length in terms, so collection
/// statistics count live entries only, after deletes too. 3 added an entry
/// per document (its whole text) beside the chunks'. 2 changed the analyser: version 1 split on every
/// non-alphanumeric character, kept one-character tokens and removed
/// Snowball's 174 English stop words.
pub const INDEX_VERSION: u32 = 8;

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

/// The analysed terms of `text` read as `language`.
pub fn analyze_in(text: &str, language: Language) -> Vec<String> {
    let mut terms = Vec::new();
    walk(analyzer_in(language), text, |token| {
        terms.push(token.text.clone())
    });
    terms
}

/// Calls `each` with every token `analyzer` makes of `text`, in order.
fn walk(mut analyzer: TextAnalyzer, text: &str, mut each: impl FnMut(&Token)) {
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        each(stream.token());
    }
}

/// Calls `each` with every analysed token of `text`, in order: the one
/// walk of the analyser that indexing, counting and postings share.
pub fn for_each_token(text: &str, each: impl FnMut(&Token)) {
    walk(analyzer(), text, each);
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

/// `term_counts` of `text` read as `language`.
pub fn term_counts_in(text: &str, language: Language) -> (Vec<(String, u32)>, usize) {
    let mut counts: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut length = 0;
    walk(analyzer_in(language), text, |token| {
        length += 1;
        *counts.entry(token.text.clone()).or_default() += 1;
    });
    (counts.into_iter().collect(), length)
}

/// The language a chunk, or a document's whole text, is analysed in (and
/// a chunk recorded with): the one its text is in (`detected`); else,
/// when the text does not tell (a heading, a short note, a row of a
/// table, a synopsis), its document's language (`document`, a tag: the
/// one its source names or detected from its opening) when that is one of
/// the Latin script, as such a text is; else English. An index whose
/// analyser receives text alone gets it marked (`in_language`) when it is
/// not the one `detect` gives.
pub fn text_language(text: &str, document: Option<&str>) -> Language {
    detected(text)
        .or_else(|| {
            document
                .and_then(Language::from_tag)
                .filter(|language| language.in_latin_script())
        })
        .unwrap_or(Language::English)
}

/// A document's whole text's postings for a backend that keeps its own
/// (`term_counts`), in its language (`text_language`, of the text and the
/// document's language tag).
pub fn document_term_counts(text: &str, document: Option<&str>) -> (Vec<(String, u32)>, usize) {
    term_counts_in(text, text_language(text, document))
}

/// A chunk's postings for a backend that keeps its own: its analysed
/// terms in its language (`text_language`, of its text and its
/// document's language tag), and that language's marker
/// (`language_marker`, counted in no length), so a query knows the
/// languages a library holds.
pub fn chunk_term_counts(text: &str, document: Option<&str>) -> (Vec<(String, u32)>, usize) {
    let language = text_language(text, document);
    let (mut counts, length) = term_counts_in(text, language);
    counts.push((language_marker(language), 1));
    (counts, length)
}

/// The languages a query is analysed in, from the library's chunks per
/// language: the query's own language first when the library holds any
/// (`language::query_language`, chosen among the library's main languages
/// unless its function words leave no doubt),
/// then each other language of at least one chunk in twenty, most chunks
/// first (a few German papers among English ones are found by German
/// questions; a stray chunk detected as Danish does not add Danish stems
/// to every query). The query's language alone for an empty library.
pub fn query_languages(query: &str, chunks: &[(Language, u64)]) -> Vec<Language> {
    let total: u64 = chunks.iter().map(|(_, n)| n).sum();
    let mut present: Vec<(Language, u64)> =
        chunks.iter().copied().filter(|(_, n)| *n > 0).collect();
    if present.is_empty() {
        return vec![detect(query)];
    }
    present.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let candidates: Vec<Language> = present.iter().map(|(l, _)| *l).collect();
    let main: Vec<Language> = present
        .iter()
        .filter(|(_, n)| n * 20 >= total)
        .map(|(l, _)| *l)
        .collect();
    // A language of few chunks is the query's only when a text's detector
    // would say so (a long German question in an English library); a
    // short query is told among the library's main languages.
    let own = match language::by_function_words(query) {
        Some(language) if candidates.contains(&language) => language,
        _ => language::query_language(query, &main),
    };
    let held = candidates.contains(&own);
    let mut languages: Vec<Language> = held.then_some(own).into_iter().collect();
    languages.extend(main.into_iter().filter(|language| *language != own));
    if languages.is_empty() {
        languages.push(candidates[0]);
    }
    languages
}

/// The language most of a library's chunks are in (English for an empty
/// library; ties go to the language listed first in `Language::ALL`).
pub fn main_language(chunks: &[(Language, u64)]) -> Language {
    chunks
        .iter()
        .filter(|(_, n)| *n > 0)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map_or(Language::English, |(language, _)| *language)
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
/// queries depend on. The query is analysed in its detected language.
pub fn query_terms(query: &str) -> Vec<(String, f32)> {
    query_terms_in(query, &[])
}

/// The analysed terms of a query for a library holding texts in
/// `languages` (its detected language when empty): a word analysed
/// differently in two of them gives both terms (a term the library does
/// not hold scores nothing).
pub fn query_terms_in(query: &str, languages: &[Language]) -> Vec<(String, f32)> {
    query_readings(query, languages).terms
}

/// `query_terms_in` with the readings of each word in the library's
/// languages (`QueryTerms::shared_frequencies`): what the backends weigh.
pub fn query_readings(query: &str, languages: &[Language]) -> QueryTerms {
    analysis::Words::new(None).query(query, languages)
}

/// Whether most letters of `text` are Latin (digits, signs and marks not
/// counted; a text without letters is Latin).
pub fn in_latin_script(text: &str) -> bool {
    let (mut latin, mut other) = (0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        match language::script_of(c) {
            language::Script::Latin => latin += 1,
            _ => other += 1,
        }
    }
    latin >= other
}

/// Whether most words of `text` are in the script `language` (an ISO
/// 639-1 code) is written in: a Chinese question over English text is
/// not, a German one is, and so is a Chinese question naming a program or
/// two ("Python 的 XML 解析库": each Han or kana character counts as a
/// word, as each stands for about one). A text without words, or a
/// language folio does not tell, is taken as Latin.
pub fn in_script_of(text: &str, language: &str) -> bool {
    let script = Language::from_tag(language).map_or(language::Script::Latin, |l| l.script());
    let (mut same, mut other) = (0usize, 0usize);
    let mut previous = None;
    for c in text.chars() {
        let current = c.is_alphabetic().then(|| language::script_of(c));
        if let Some(s) = current
            && (previous != current
                || matches!(s, language::Script::Cjk | language::Script::Unspaced))
        {
            if s == script {
                same += 1;
            } else {
                other += 1;
            }
        }
        previous = current;
    }
    same >= other
}

/// The term that marks a chunk of `language` in a backend's postings:
/// no analysed word starts with a control character.
pub fn language_marker(language: Language) -> String {
    format!("\u{1}{}", language.code())
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

    // Issue 48: the language most of a library's chunks are in; English
    // for an empty library, the language listed first on a tie.
    #[test]
    fn a_librarys_main_language_is_that_of_most_chunks() {
        use Language::*;
        assert_eq!(main_language(&[]), English);
        assert_eq!(main_language(&[(English, 0), (Russian, 0)]), English);
        assert_eq!(main_language(&[(English, 40), (Russian, 60)]), Russian);
        assert_eq!(main_language(&[(Russian, 5), (English, 5)]), English);
        assert_eq!(main_language(&[(Chinese, 5), (Japanese, 5)]), Chinese);
    }

    // Issue 13: the analyser tokenises as Lucene-style reference BM25s do
    // (bm25s's `\w\w+`, lower case, Lucene's 33 stop words, Snowball
    // English): one-character runs are not terms, words outside Lucene's
    // list ("about", "what", "between") are kept, accents are folded.
    #[test]
    fn the_analyser_tokenises_as_the_reference_does() {
        assert_eq!(
            analyze("It's e.g. U.S. COVID-19: what about vitamin D between the Cafés?"),
            [
                "covid", "19", "what", "about", "vitamin", "between", "cafe", "covid-19"
            ]
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

    // Issue 48: each text is analysed in its language, the same way on
    // every backend. The expected stems are Snowball's (the reference
    // implementation's output for these words), jieba's dictionary words,
    // and pairs of characters for Japanese and Korean.
    #[test]
    fn texts_are_analysed_in_their_language() {
        let cases: [(&str, &[&str]); 8] = [
            (
                "Die Häuser der Stadt wurden im Krieg zerstört.",
                &["haus", "stadt", "wurd", "krieg", "zerstort"],
            ),
            (
                "Les maisons de la ville ont été détruites pendant la guerre.",
                &["maison", "vill", "ete", "detruit", "pend", "guerr"],
            ),
            (
                "Дома́ города были разрушены во время войны, ёлки росли.",
                &["дом", "город", "разруш", "врем", "войн", "елк", "росл"],
            ),
            ("قَالَ المدرسة مدرسة أحمد", &["قال", "مدرس", "مدرس", "احمد"]),
            (
                "数据库的检索功能在中华人民共和国很重要。",
                &[
                    "数据",
                    "据库",
                    "数据库",
                    "检索",
                    "功能",
                    "中华",
                    "华人",
                    "人民",
                    "共和",
                    "共和国",
                    "中华人民共和国",
                    "很",
                    "重要",
                ],
            ),
            (
                "データベースの検索",
                &[
                    "デー", "ータ", "タベ", "ベー", "ース", "スの", "の検", "検索",
                ],
            ),
            ("검색 기능", &["검색", "기능"]),
            (
                "The rmdir command removes 数据库 directories; ext4 файловая система.",
                &[
                    "rmdir",
                    "command",
                    "remov",
                    "数据",
                    "据库",
                    "数据库",
                    "directori",
                    "ext4",
                    "файлов",
                    "систем",
                ],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(analyze(text), expected, "{text}");
        }
        // The detected language is the one every term of the text is
        // analysed in, as a given language is.
        for (text, _) in cases {
            assert_eq!(analyze(text), analyze_in(text, detect(text)), "{text}");
        }
        // English text in the Latin script takes the one-pass analyser;
        // read word by word it gives the same terms.
        let english = "It's e.g. U.S. COVID-19: what about vitamin D between the Cafés? \
                       Naïve coöperation, Zürich; snake_case x86 running";
        let mut words = analysis::Words::new(None);
        assert_eq!(
            words.query(english, &[Language::English]).terms,
            query_terms_in(english, &[Language::English])
        );
        let mut expected = analyze(english);
        expected.insert(expected.len() - 1, "ab".to_string());
        assert_eq!(
            analyze_in(&format!("{english} ab"), Language::English),
            expected
        );
    }

    // Issue 50: an identifier is a term of its own beside its runs, in any
    // language, in text and query alike; words joined without a digit are
    // not, nor numbers without a letter, nor anything of 40 characters or
    // more.
    #[test]
    fn identifiers_are_terms_of_their_own() {
        let identifiers = |terms: Vec<String>| -> Vec<String> {
            terms
                .into_iter()
                .filter(|t| !t.chars().all(char::is_alphanumeric))
                .collect()
        };
        let text = "Part XA\u{2011}4645 raises IL-6 (doi 10.1038/nature12373, v2.1, p 0.05), \
                    e.g. a state-of-the-art 3.";
        assert_eq!(
            identifiers(analyze(text)),
            ["xa-4645", "il-6", "10.1038/nature12373", "v2.1"]
        );
        assert_eq!(
            identifiers(analyze("Das Teil AB-1234 und die Größe 12.5 mm")),
            ["ab-1234"]
        );
        assert_eq!(
            identifiers(analyze(&format!("x1-{}", "a".repeat(40)))),
            Vec::<String>::new()
        );
        let query = query_terms_in("What is the quantity of XA-4645?", &[Language::English]);
        assert!(query.contains(&("xa-4645".to_string(), 1.0)), "{query:?}");
        assert!(query.contains(&("xa".to_string(), 1.0)), "{query:?}");
        // The terms a backend keeps for a chunk hold the identifier once.
        let (counts, _) = chunk_term_counts("XA-4645 and XA-4645", None);
        assert!(counts.contains(&("xa-4645".to_string(), 2)), "{counts:?}");
    }

    // A query is analysed in every language of the library: a German word
    // finds German stems and English ones, each term once per word.
    #[test]
    fn queries_are_analysed_in_the_library_languages() {
        assert_eq!(
            query_terms_in("Häuser running", &[Language::German, Language::English]),
            [
                ("hauser".to_string(), 1.0),
                ("haus".to_string(), 1.0),
                ("run".to_string(), 1.0),
                ("running".to_string(), 1.0)
            ]
        );
        // The readings of one word share their document frequencies;
        // words do not.
        let readings = query_readings("Häuser running", &[Language::German, Language::English]);
        assert_eq!(
            readings.shared_frequencies(&[10, 2, 5, 7]),
            [12, 12, 12, 12]
        );
        let readings = query_readings("Häuser Garten", &[Language::German, Language::English]);
        let terms: Vec<&str> = readings.terms.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(terms, ["hauser", "haus", "garten", "gart"]);
        assert_eq!(readings.shared_frequencies(&[1, 2, 3, 4]), [3, 3, 7, 7]);
        // English only: exactly the English analysis.
        assert_eq!(
            query_terms_in("effects of the effect: effective", &[Language::English]),
            [("effect".to_string(), 3.0)]
        );
        // Chinese and Japanese in one library: Han words and pairs.
        let mixed = query_terms_in("数据库检索", &[Language::Chinese, Language::Japanese]);
        for term in ["数据库", "检索", "数据", "据库", "库检"] {
            assert!(mixed.iter().any(|(t, _)| t == term), "{term} in {mixed:?}");
        }
        // A Chinese library: words only.
        assert_eq!(
            query_terms_in("数据库检索", &[Language::Chinese]),
            [("数据库".to_string(), 1.0), ("检索".to_string(), 1.0)]
        );
    }

    #[test]
    fn a_query_is_in_the_script_of_a_language_by_its_words() {
        assert!(in_script_of("Wie prüft man ein Dateisystem?", "en"));
        assert!(!in_script_of("文件系统检查工具", "en"));
        assert!(in_script_of("文件系统检查工具", "zh"));
        assert!(in_script_of("ファイルシステムの検査", "ja"));
        // Two program names in a Chinese question: still Chinese.
        assert!(in_script_of("Python 的 XML 解析库", "zh"));
        assert!(!in_script_of("Python 的 XML 解析库", "en"));
        assert!(!in_script_of("проверка файловой системы", "de"));
        // No words, or a language folio does not tell: Latin.
        assert!(in_script_of("2024 — 42", "en"));
        assert!(in_script_of("filesystem check", "xx"));
    }

    #[test]
    fn a_german_compound_is_a_term_and_its_parts_are_terms() {
        assert_eq!(
            analyze_in("Das Dateisystem", Language::German),
            ["dateisystem", "datei", "system"]
        );
        // A part that is a stop word, or the word's own term, is no more.
        assert_eq!(analyze_in("Bibliothek", Language::German), ["bibliothek"]);
        // The query has them too, once each, in a library holding German.
        assert_eq!(
            query_terms_in("Systemdatei", &[Language::German]),
            [
                ("system".to_string(), 1.0),
                ("datei".to_string(), 1.0),
                ("systemdatei".to_string(), 1.0),
            ]
        );
        // Only German words are cut.
        assert_eq!(
            analyze_in("Dateisystem", Language::English),
            ["dateisystem"]
        );
        assert_eq!(
            query_terms_in("Dateisystem", &[Language::English]),
            [("dateisystem".to_string(), 1.0)]
        );
    }

    #[test]
    fn a_chunk_that_does_not_tell_its_language_takes_its_documents() {
        // Too few words to tell: detection alone calls these English.
        let note = "Heizung: Wärmepumpen, Heizkörper";
        let table = "Libteam benötigt den Linux-Kernel 3.3 oder neuer.";
        for text in [note, table, "3.3 4.1 | 12"] {
            assert_eq!(detected(text), None, "{text}");
            assert_eq!(detect(text), Language::English, "{text}");
            assert_eq!(text_language(text, None), Language::English);
            // In a German document (a tag of any form) they are German.
            for tag in ["de", "de-DE", "German", "deu"] {
                assert_eq!(
                    text_language(text, Some(tag)),
                    Language::German,
                    "{text} {tag}"
                );
            }
            assert_eq!(text_language(text, Some("en")), Language::English);
            // A document's language of another script, or one folio does not
            // know, is no language for Latin words.
            assert_eq!(text_language(text, Some("zh")), Language::English);
            assert_eq!(text_language(text, Some("tlh")), Language::English);
        }
        // A text that tells its own keeps it, whatever its document's.
        let english = "The pump moves the heat of the ground into the house, and it is \
                       cheaper to run than a boiler when the winter is mild.";
        assert_eq!(text_language(english, Some("de")), Language::English);
        assert_eq!(
            text_language("大熊猫吃竹子。", Some("de")),
            Language::Chinese
        );
        // Its postings are the German analysis, the German marker: the
        // plural stems as the singular, the compound has its parts.
        let (mut counts, length) = chunk_term_counts(note, Some("de"));
        let mut german: Vec<(String, u32)> = Vec::new();
        for term in analyze_in(note, Language::German) {
            match german.iter_mut().find(|(t, _)| *t == term) {
                Some((_, n)) => *n += 1,
                None => german.push((term, 1)),
            }
        }
        german.push((language_marker(Language::German), 1));
        counts.sort();
        german.sort();
        assert_eq!(counts, german);
        assert_eq!(length, analyze_in(note, Language::German).len());
        assert!(
            analyze_in("Wärmepumpe", Language::German)
                .iter()
                .all(|t| counts.iter().any(|(c, _)| c == t))
        );
        assert!(counts.iter().any(|(t, _)| t == "pump"), "{counts:?}");
        // Read as English, the plural is a word of its own.
        assert!(
            !analyze_in(note, Language::English)
                .contains(&analyze_in("Wärmepumpe", Language::English)[0])
        );
        // Marked for an analyser that receives the text alone, the same
        // terms in the same order, each at its word in the marked text.
        let marked = in_language(note, Language::German);
        let mut tokens = Vec::new();
        for_each_token(&marked, |t| tokens.push(t.clone()));
        assert_eq!(
            tokens.iter().map(|t| t.text.clone()).collect::<Vec<_>>(),
            analyze_in(note, Language::German)
        );
        let words: Vec<&str> = tokens
            .iter()
            .map(|t| &marked[t.offset_from..t.offset_to])
            .collect();
        assert_eq!(words[..2], ["Heizung", "Wärmepumpen"]);
        // Unmarked, the analyser reads it as English; a mark it does not
        // know is text.
        assert_eq!(analyze(note), analyze_in(note, Language::English));
        let unknown = format!("\u{1}xx\u{1}{note}");
        assert_eq!(analyze(&unknown), analyze_in(&unknown, Language::English));
        // A whole document's postings follow the same rule.
        let mut whole = document_term_counts(note, Some("de")).0;
        let mut german = term_counts_in(note, Language::German).0;
        whole.sort();
        german.sort();
        assert_eq!(whole, german);
        assert_ne!(document_term_counts(note, None).0.len(), 0);
        assert!(
            !document_term_counts(note, None)
                .0
                .iter()
                .any(|(t, _)| t == "pump")
        );
    }

    #[test]
    fn chunk_postings_carry_their_language() {
        let text = "Die Häuser der Stadt wurden im Krieg zerstört, und die Bäume im Park \
                    blühen trotzdem jedes Jahr wieder, wenn der Frühling kommt.";
        let (counts, length) = chunk_term_counts(text, None);
        assert_eq!(length, analyze_in(text, Language::German).len());
        assert!(counts.contains(&(language_marker(Language::German), 1)));
        assert_eq!(
            query_languages("Handschrift", &[(Language::German, 1)]),
            [Language::German]
        );
        // A language of few chunks joins only the queries in it.
        let library = [(Language::English, 990), (Language::German, 10)];
        assert_eq!(
            query_languages("vitamin D and bones", &library),
            [Language::English]
        );
        assert_eq!(
            query_languages(
                "Wie hoch ist die Knochendichte der Patienten, die in der Studie \
                 Vitamin D erhielten, und wird sie durch die Dosis beeinflusst?",
                &library
            ),
            [Language::German, Language::English]
        );
        assert_eq!(query_languages("数据库", &[]), [Language::Chinese]);
        // A short question is told among the library's languages by a
        // function word, and its language's stop words are no terms in
        // the others (English "au" would be a rare and heavy term).
        let french = [(Language::English, 100), (Language::French, 900)];
        let question = "Mettre fin au processus appelant";
        let languages = query_languages(question, &french);
        assert_eq!(languages, [Language::French, Language::English]);
        let terms: Vec<String> = query_terms_in(question, &languages)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(terms, ["mettr", "fin", "processus", "appel"]);
        assert_eq!(
            query_languages("end the calling process", &french),
            [Language::English, Language::French]
        );
        // Without a function word, the library's main language.
        assert_eq!(
            query_languages("processus appelant", &french),
            [Language::French, Language::English]
        );
        // No analysed word is a marker, even a marker's own text.
        for language in Language::ALL {
            let marker = language_marker(language);
            assert!(!analyze(&marker).contains(&marker));
        }
    }
}
