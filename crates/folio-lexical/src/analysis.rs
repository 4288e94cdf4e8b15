//! Analysis in a text's language. A text is read as runs of word
//! characters (`\w+`), each split where its script changes; every run is
//! analysed by its script:
//!
//! - Latin: in the text's language (English when the text is in another
//!   script): lower case, that language's stop words, its Snowball stemmer,
//!   then ASCII folding (English folds before it stems, as folio always
//!   has);
//! - Cyrillic: lower case, "ё" read as "е", Russian stop words and stemmer;
//! - Greek: lower case, the Greek stemmer;
//! - Arabic: diacritics and tatweel removed, the Arabic stemmer, then the
//!   letters with variant forms written one way (alef, yeh, teh marbuta);
//! - Han: words of jieba's dictionary (Chinese); Han in Japanese or Korean
//!   text, kana and Hangul, and the unspaced scripts of South-East Asia
//!   (Thai, Lao, Khmer, Myanmar): overlapping pairs of characters;
//! - others: lower case.
//!
//! Runs of one character are not terms, except in the scripts written
//! without spaces; runs of 40 characters or more are not terms either.
//!
//! An identifier — runs of word characters joined by hyphens, dots or
//! slashes, with letters and digits among them ("XA-4645", "IL-6",
//! "COVID-19", "10.1038/nature12373", "v2.1"; not "25.19" or "2009-2014",
//! numbers whose parts are terms already) — is a term of its own besides
//! its runs, in lower case with every dash written "-": a question naming a
//! part number finds the row holding it, not every row holding its letters
//! or its number. No word term holds those signs, so the two never meet.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use folio_core::script::is_arabic_mark;
use regex::Regex;
use tantivy::tokenizer::{
    AsciiFoldingFilter, BoxTokenStream, LowerCaser, RawTokenizer, Stemmer, StopWordFilter,
    TextAnalyzer, Token, TokenStream, Tokenizer,
};

use crate::compounds;
use crate::language::{Language, Script, is_kana_or_hangul, script_of};

/// Words of Chinese text too common to tell passages apart: particles,
/// pronouns, conjunctions and prepositions.
const CHINESE_STOP_WORDS: [&str; 40] = [
    "的", "了", "和", "是", "在", "与", "及", "或", "等", "也", "就", "都", "而", "被", "把", "之",
    "其", "于", "以", "为", "这", "那", "个", "着", "吗", "呢", "吧", "啊", "将", "并", "但", "从",
    "对", "由", "所", "因", "则", "该", "又", "即",
];

/// German words whose compound parts are known, per thread (German text
/// repeats its words), by the word as written.
const REMEMBERED_WORDS: usize = 1 << 16;

/// The terms of a compound's parts (none for a word that is no compound).
type Parts = Arc<[Box<str>]>;

thread_local! {
    static PARTS: RefCell<HashMap<Box<str>, Parts>> = RefCell::new(HashMap::new());
}

/// Runs of word characters.
fn words() -> &'static Regex {
    static WORDS: OnceLock<Regex> = OnceLock::new();
    // The pattern is a constant that compiles; a failure is a bug.
    WORDS.get_or_init(|| Regex::new(r"\w+").expect("the word pattern compiles"))
}

/// Runs of word characters joined by hyphens, dots or slashes.
fn joined() -> &'static Regex {
    static JOINED: OnceLock<Regex> = OnceLock::new();
    // The pattern is a constant that compiles; a failure is a bug.
    JOINED.get_or_init(|| {
        Regex::new(r"\w+(?:[-\u{2010}\u{2011}./]\w+)+").expect("the identifier pattern compiles")
    })
}

/// Calls `each` with the term of every identifier of `text` (see the
/// module's documentation) and its byte offsets: in lower case, dashes
/// written "-", shorter than 40 characters, holding a letter and a digit.
pub(crate) fn identifiers(text: &str, mut each: impl FnMut(&str, usize, usize)) {
    let mut term = String::new();
    for found in joined().find_iter(text) {
        let identifier = found.as_str();
        if !identifier.chars().any(char::is_numeric)
            || !identifier.chars().any(char::is_alphabetic)
            || identifier.chars().nth(39).is_some()
        {
            continue;
        }
        term.clear();
        for c in identifier.chars() {
            match c {
                '\u{2010}' | '\u{2011}' => term.push('-'),
                c => term.extend(c.to_lowercase()),
            }
        }
        each(&term, found.start(), found.end());
    }
}

fn jieba() -> &'static jieba_rs::Jieba {
    static JIEBA: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    JIEBA.get_or_init(jieba_rs::Jieba::new)
}

/// How a run of one script is analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// A word of a spaced script, analysed in a language.
    Word(Language),
    /// Han words, segmented with jieba's dictionary.
    Segmented,
    /// Overlapping pairs of characters.
    Bigrams,
}

/// The analyser of one word in `language` (a `RawTokenizer`: the word is
/// one token).
fn word_analyzer(language: Language) -> TextAnalyzer {
    let raw = TextAnalyzer::builder(RawTokenizer::default()).filter(LowerCaser);
    match (language, language.snowball()) {
        (Language::English, Some(snowball)) => raw
            .filter(AsciiFoldingFilter)
            .filter(StopWordFilter::remove(
                crate::STOP_WORDS.iter().map(|w| w.to_string()),
            ))
            .filter(Stemmer::new(snowball))
            .build(),
        (Language::Russian | Language::Greek | Language::Arabic, Some(snowball)) => {
            let raw = raw.dynamic();
            match StopWordFilter::new(snowball) {
                Some(stop) => raw.filter_dynamic(stop),
                None => raw,
            }
            .filter_dynamic(Stemmer::new(snowball))
            .build()
        }
        (_, Some(snowball)) => {
            let raw = raw.dynamic();
            match StopWordFilter::new(snowball) {
                Some(stop) => raw.filter_dynamic(stop),
                None => raw,
            }
            .filter_dynamic(Stemmer::new(snowball))
            .filter_dynamic(AsciiFoldingFilter)
            .build()
        }
        (Language::Other, None) => raw.filter(AsciiFoldingFilter).build(),
        (_, None) => raw.build(),
    }
}

/// Every language's word analyser, built once (stop-word sets included);
/// each `Words` clones the ones it uses.
fn word_analyzers() -> &'static [TextAnalyzer] {
    static ANALYZERS: OnceLock<Vec<TextAnalyzer>> = OnceLock::new();
    ANALYZERS.get_or_init(|| Language::ALL.into_iter().map(word_analyzer).collect())
}

/// The analyser of texts in any language: folio's tokenizer, for tantivy
/// and for the PostgreSQL backend's postings alike. A text is analysed in
/// its detected language unless one is given.
#[derive(Clone)]
pub(crate) struct Words {
    english: TextAnalyzer,
    given: Option<Language>,
    analyzers: Vec<Option<TextAnalyzer>>,
    tokens: Vec<Token>,
    term: String,
}

pub(crate) enum WordsStream<'a> {
    /// The one-pass English analyser's tokens, then the identifiers'.
    English {
        stream: BoxTokenStream<'a>,
        identifiers: &'a mut [Token],
        /// Identifiers given so far (0 while the stream runs).
        next: usize,
        done: bool,
    },
    Listed {
        tokens: &'a mut [Token],
        next: usize,
    },
}

impl Words {
    pub(crate) fn new(given: Option<Language>) -> Self {
        Words {
            english: crate::english_analyzer(),
            given,
            analyzers: vec![None; Language::ALL.len()],
            tokens: Vec::new(),
            term: String::new(),
        }
    }

    /// The analysed term of one word of `script` in `language` (the
    /// language of Latin words), into `self.term`; `false` when the word
    /// is a stop word or analyses to nothing.
    fn word(&mut self, word: &str, script: Script, language: Language) -> bool {
        let language = match script {
            Script::Latin => language,
            Script::Cyrillic => Language::Russian,
            Script::Greek => Language::Greek,
            Script::Arabic => Language::Arabic,
            _ => Language::Other,
        };
        let limit_ok = match language {
            // English keeps the byte limit of its one-pass analyser.
            Language::English => word.len() < 40,
            _ => word.chars().count() < 40,
        };
        if !limit_ok {
            return false;
        }
        // `Language::ALL` lists the languages in declaration order.
        let index = language as usize;
        let analyzer = self.analyzers[index].get_or_insert_with(|| word_analyzers()[index].clone());
        let prepared: std::borrow::Cow<'_, str> = match script {
            Script::Cyrillic if word.contains(['ё', 'Ё']) || word.chars().any(is_mark) => word
                .chars()
                .filter(|c| !is_mark(*c))
                .map(|c| if matches!(c, 'ё' | 'Ё') { 'е' } else { c })
                .collect::<String>()
                .into(),
            Script::Arabic => word
                .chars()
                .filter(|c| !is_arabic_mark(*c) && !is_mark(*c))
                .collect::<String>()
                .into(),
            // English keeps its one-pass analysis, marks included.
            _ if language == Language::English || !word.chars().any(is_mark) => word.into(),
            _ => word
                .chars()
                .filter(|c| !is_mark(*c))
                .collect::<String>()
                .into(),
        };
        self.term.clear();
        let mut stream = analyzer.token_stream(&prepared);
        if !stream.advance() {
            return false;
        }
        let term = &stream.token().text;
        if script == Script::Arabic {
            self.term.extend(term.chars().map(normalise_arabic_letter));
        } else {
            self.term.push_str(term);
        }
        !self.term.is_empty()
    }

    /// The terms of the two parts of a German compound (`word` as it is
    /// written), those that are not the whole word's term (`self.term`,
    /// kept) nor stop words: "Dateisystem" is "dateisystem", and "datei"
    /// and "system" besides, so either word finds the other's compounds.
    fn compound_parts(&mut self, word: &str, mut each: impl FnMut(&str)) {
        if word.chars().nth(5).is_none() {
            return;
        }
        let parts = PARTS.with_borrow_mut(|known| {
            if let Some(parts) = known.get(word) {
                return parts.clone();
            }
            let parts = self.parts_of(word);
            if known.len() >= REMEMBERED_WORDS {
                known.clear();
            }
            known.insert(word.into(), parts.clone());
            parts
        });
        for part in parts.iter() {
            each(part);
        }
    }

    /// `compound_parts`, found anew.
    fn parts_of(&mut self, word: &str) -> Parts {
        let lower = word.to_lowercase();
        let Some((first, second)) = compounds::split(&lower) else {
            return Arc::new([]);
        };
        let whole = std::mem::take(&mut self.term);
        let mut parts: Vec<Box<str>> = Vec::with_capacity(2);
        for part in [first, second] {
            if self.word(part, Script::Latin, Language::German)
                && self.term != whole
                && parts.iter().all(|p| **p != *self.term)
            {
                parts.push(self.term.as_str().into());
            }
        }
        self.term = whole;
        parts.into()
    }

    /// Analyses `text` in `language`, calling `each` with every term and
    /// its byte offsets.
    fn analyse(
        &mut self,
        text: &str,
        language: Language,
        mut each: impl FnMut(&str, usize, usize),
    ) {
        let latin = match language.script() {
            Script::Latin => language,
            _ if language == Language::Other => Language::Other,
            _ => Language::English,
        };
        for found in words().find_iter(text) {
            for (start, end, script) in runs(found.as_str()) {
                let (start, end) = (found.start() + start, found.start() + end);
                let run = &text[start..end];
                match run_kind(run, script, language, latin) {
                    Run::Word(language) => {
                        if run.chars().nth(1).is_some() && self.word(run, script, language) {
                            each(&self.term, start, end);
                            if script == Script::Latin && language == Language::German {
                                self.compound_parts(run, |part| each(part, start, end));
                            }
                        }
                    }
                    Run::Segmented => segment(run, false, |word, from, to| {
                        each(word, start + from, start + to)
                    }),
                    Run::Bigrams => {
                        bigrams(run, |pair, from, to| each(pair, start + from, start + to))
                    }
                }
            }
        }
    }

    /// The query's terms, each with how often the query has it, analysed
    /// for every language of `languages` (a library's, the query's own
    /// first): a word that analyses differently in two of them yields both
    /// terms, once each; a stop word of the query's own language is
    /// dropped in all of them.
    pub(crate) fn query(&mut self, query: &str, languages: &[Language]) -> QueryTerms {
        let languages: Vec<Language> = if languages.is_empty() {
            vec![crate::detect(query)]
        } else {
            languages.to_vec()
        };
        let own = Some(languages[0]).filter(|l| l.script() == Script::Latin && languages.len() > 1);
        let mut latin: Vec<Language> = languages
            .iter()
            .copied()
            .filter(|l| l.script() == Script::Latin || *l == Language::Other)
            .collect();
        if latin.is_empty() || languages.iter().any(|l| l.script() != Script::Latin) {
            latin.push(Language::English);
        }
        latin.sort();
        latin.dedup();
        let chinese = languages.contains(&Language::Chinese)
            || !languages
                .iter()
                .any(|l| matches!(l, Language::Japanese | Language::Korean));
        let pairs = languages
            .iter()
            .any(|l| matches!(l, Language::Japanese | Language::Korean));
        let mut counted: Vec<(String, f32)> = Vec::new();
        // Terms that are readings of one word in different languages, as
        // links to a representative (`usize::MAX`: a term of its own).
        let mut groups: Vec<usize> = Vec::new();
        let add = |counted: &mut Vec<(String, f32)>, terms: Vec<(String, f32)>| {
            for (term, n) in terms {
                match counted.iter_mut().find(|(t, _)| *t == term) {
                    Some(found) => found.1 += n,
                    None => counted.push((term, n)),
                }
            }
        };
        for found in words().find_iter(query) {
            for (start, end, script) in runs(found.as_str()) {
                let run = &found.as_str()[start..end];
                let mut alternatives: Vec<Vec<String>> = Vec::new();
                match script {
                    Script::Cjk | Script::Unspaced => {
                        let kana = run.chars().any(is_kana_or_hangul);
                        if script == Script::Cjk && chinese && !kana {
                            let mut words = Vec::new();
                            segment(run, true, |w, _, _| words.push(w.to_string()));
                            alternatives.push(words);
                        }
                        if script == Script::Unspaced || pairs || kana || !chinese {
                            let mut words = Vec::new();
                            bigrams(run, |w, _, _| words.push(w.to_string()));
                            alternatives.push(words);
                        }
                    }
                    _ if run.chars().nth(1).is_none() => {}
                    // A stop word of the query's own language is no
                    // word of the query in any other ("au" in a French
                    // question is not the rare English term "au").
                    Script::Latin => {
                        let own_reading = match own {
                            Some(own) if !self.word(run, script, own) => continue,
                            Some(_) => Some(self.term.clone()),
                            None => None,
                        };
                        for language in &latin {
                            if Some(*language) == own {
                                alternatives.extend(own_reading.clone().map(|t| vec![t]));
                            } else if self.word(run, script, *language) {
                                alternatives.push(vec![self.term.clone()]);
                            }
                        }
                        // A German compound's parts are words of the
                        // query besides it, as they are of the texts.
                        if latin.contains(&Language::German)
                            && self.word(run, script, Language::German)
                        {
                            let mut parts = Vec::new();
                            self.compound_parts(run, |part| parts.push((part.to_string(), 1.0)));
                            add(&mut counted, parts);
                        }
                    }
                    _ => {
                        if self.word(run, script, Language::Other) {
                            alternatives.push(vec![self.term.clone()]);
                        }
                    }
                }
                // A term counts as often as the alternative that has it
                // most: a word is one occurrence whichever way it is read.
                let word = alternatives.len() > 1 && alternatives.iter().all(|a| a.len() == 1);
                let mut merged: Vec<(String, f32)> = Vec::new();
                for alternative in alternatives {
                    let mut counts: Vec<(String, f32)> = Vec::new();
                    add(
                        &mut counts,
                        alternative.into_iter().map(|t| (t, 1.0)).collect(),
                    );
                    for (term, n) in counts {
                        match merged.iter_mut().find(|(t, _)| *t == term) {
                            Some(found) => found.1 = found.1.max(n),
                            None => merged.push((term, n)),
                        }
                    }
                }
                let readings: Vec<String> = merged.iter().map(|(t, _)| t.clone()).collect();
                add(&mut counted, merged);
                if word && readings.len() > 1 {
                    let at = |term: &String| counted.iter().position(|(t, _)| t == term);
                    let members: Vec<usize> = readings.iter().filter_map(at).collect();
                    groups.resize(counted.len(), usize::MAX);
                    join(&mut groups, &members);
                }
            }
        }
        let mut named: Vec<(String, f32)> = Vec::new();
        identifiers(query, |term, _, _| named.push((term.to_string(), 1.0)));
        add(&mut counted, named);
        groups.resize(counted.len(), usize::MAX);
        let groups = (0..counted.len()).map(|i| root(&groups, i)).collect();
        QueryTerms {
            terms: counted,
            groups,
        }
    }
}

/// A query's analysed terms, each once with how often the query has it,
/// and which of them read one word in different languages (a French
/// "fichiers" is "fichi" to French and "fichier" to English analysis).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerms {
    pub terms: Vec<(String, f32)>,
    /// Each term's group: the index of the first term reading the same
    /// word (its own index when it reads no other's).
    groups: Vec<usize>,
}

impl QueryTerms {
    /// The document frequencies BM25 weighs each term by, from each
    /// term's own (`own`, in the order of `terms`): a word's readings
    /// share the sum of theirs. A word is as common as all its readings
    /// together: its reading in a language of few chunks is no rare and
    /// heavy term, and texts in either language score it alike.
    pub fn shared_frequencies(&self, own: &[u64]) -> Vec<u64> {
        let mut sums = vec![0u64; self.terms.len()];
        for (group, df) in self.groups.iter().zip(own) {
            sums[*group] += df;
        }
        self.groups.iter().map(|group| sums[*group]).collect()
    }
}

/// Links the terms at `members` into one group (union by the lowest
/// index).
fn join(groups: &mut [usize], members: &[usize]) {
    let Some(root_of_all) = members.iter().map(|m| root(groups, *m)).min() else {
        return;
    };
    for member in members {
        let r = root(groups, *member);
        if r != root_of_all {
            groups[r] = root_of_all;
        }
    }
}

/// The representative of term `i`'s group.
fn root(groups: &[usize], mut i: usize) -> usize {
    while let Some(&next) = groups.get(i)
        && next != usize::MAX
    {
        i = next;
    }
    i
}

/// How a run is analysed in a text of `language` (`latin`: the language of
/// its Latin words).
fn run_kind(run: &str, script: Script, language: Language, latin: Language) -> Run {
    match script {
        Script::Cjk
            if !matches!(language, Language::Japanese | Language::Korean)
                && !run.chars().any(is_kana_or_hangul) =>
        {
            Run::Segmented
        }
        Script::Cjk | Script::Unspaced => Run::Bigrams,
        Script::Latin => Run::Word(latin),
        _ => Run::Word(language),
    }
}

/// The runs of one script in a run of word characters, with their byte
/// offsets. Digits, underscores and combining marks belong to the run
/// they are in.
fn runs(word: &str) -> impl Iterator<Item = (usize, usize, Script)> + '_ {
    let mut chars = word.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = chars.next()?;
        let mut script = (!is_neutral(first)).then(|| script_of(first));
        let mut end = start + first.len_utf8();
        while let Some(&(at, c)) = chars.peek() {
            if !is_neutral(c) {
                let s = script_of(c);
                match script {
                    None => script = Some(s),
                    Some(current) if current != s => break,
                    Some(_) => {}
                }
            }
            end = at + c.len_utf8();
            chars.next();
        }
        Some((start, end, script.unwrap_or(Script::Latin)))
    })
}

/// Characters of no script of their own.
fn is_neutral(c: char) -> bool {
    c.is_numeric() || c == '_' || is_mark(c) || matches!(c, '\u{200c}' | '\u{200d}')
}

/// Combining marks shared by scripts (accents written apart, stress marks).
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Arabic letters written several ways, written one way: alef with hamza
/// or madda as alef, alef maksura as yeh, teh marbuta as heh.
fn normalise_arabic_letter(c: char) -> char {
    match c {
        'أ' | 'إ' | 'آ' | 'ٱ' => 'ا',
        'ى' => 'ي',
        'ة' => 'ه',
        c => c,
    }
}

/// Han words of `run`, by jieba's dictionary (and its model of unknown
/// words), stop words left out. Text is cut in jieba's search mode: a long
/// word and the dictionary words within it ("全文检索" gives "全文",
/// "检索" and "全文检索"), so a query's shorter word finds it; a query
/// (`whole`) is cut into its words only, each found as it is.
fn segment(run: &str, whole: bool, mut each: impl FnMut(&str, usize, usize)) {
    if run.chars().nth(1).is_none() {
        each(run, 0, run.len());
        return;
    }
    let tokens = if whole {
        jieba().cut(run, true)
    } else {
        jieba().cut_for_search(run, true)
    };
    for token in tokens {
        if !CHINESE_STOP_WORDS.contains(&token.word) {
            each(token.word, token.byte_start, token.byte_end);
        }
    }
}

/// The overlapping pairs of characters of `run` (its one character, when
/// it has one).
fn bigrams(run: &str, mut each: impl FnMut(&str, usize, usize)) {
    let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).collect();
    if starts.len() == 1 {
        each(run, 0, run.len());
        return;
    }
    for pair in starts.windows(2).enumerate() {
        let (i, window) = pair;
        let end = starts.get(i + 2).copied().unwrap_or(run.len());
        each(&run[window[0]..end], window[0], end);
    }
}

impl Tokenizer for Words {
    type TokenStream<'a> = WordsStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordsStream<'a> {
        // A text marked with its language (`crate::in_language`) is read in
        // it, its offsets counted in the marked text.
        let (language, text, shift) = match crate::language::marked(text) {
            Some((language, rest)) => (language, rest, text.len() - rest.len()),
            None => (self.given.unwrap_or_else(|| crate::detect(text)), text, 0),
        };
        let mut tokens = std::mem::take(&mut self.tokens);
        let mut used = 0;
        let mut push = |term: &str, from: usize, to: usize| {
            if tokens.len() == used {
                tokens.push(Token::default());
            }
            let token = &mut tokens[used];
            token.text.clear();
            token.text.push_str(term);
            token.offset_from = shift + from;
            token.offset_to = shift + to;
            token.position = used;
            token.position_length = 1;
            used += 1;
        };
        // English in the Latin script only: the one-pass analyser gives
        // the same terms, faster.
        if language == Language::English
            && shift == 0
            && (text.is_ascii() || text.chars().all(|c| script_of(c) == Script::Latin))
        {
            identifiers(text, &mut push);
            tokens.truncate(used);
            self.tokens = tokens;
            return WordsStream::English {
                stream: self.english.token_stream(text),
                identifiers: &mut self.tokens,
                next: 0,
                done: false,
            };
        }
        self.analyse(text, language, &mut push);
        identifiers(text, &mut push);
        tokens.truncate(used);
        self.tokens = tokens;
        WordsStream::Listed {
            tokens: &mut self.tokens,
            next: 0,
        }
    }
}

impl TokenStream for WordsStream<'_> {
    fn advance(&mut self) -> bool {
        match self {
            WordsStream::English {
                stream,
                identifiers,
                next,
                done,
            } => {
                if !*done {
                    if stream.advance() {
                        return true;
                    }
                    *done = true;
                }
                if *next < identifiers.len() {
                    // After the stream's last position.
                    let after = stream.token().position.wrapping_add(1);
                    identifiers[*next].position = after.wrapping_add(*next);
                    *next += 1;
                    true
                } else {
                    false
                }
            }
            WordsStream::Listed { tokens, next } => {
                if *next < tokens.len() {
                    *next += 1;
                    true
                } else {
                    false
                }
            }
        }
    }

    fn token(&self) -> &Token {
        match self {
            WordsStream::English {
                stream,
                identifiers,
                next,
                ..
            } => match *next {
                0 => stream.token(),
                n => &identifiers[n - 1],
            },
            WordsStream::Listed { tokens, next } => &tokens[next.saturating_sub(1)],
        }
    }

    fn token_mut(&mut self) -> &mut Token {
        match self {
            WordsStream::English {
                stream,
                identifiers,
                next,
                ..
            } => match *next {
                0 => stream.token_mut(),
                n => &mut identifiers[n - 1],
            },
            WordsStream::Listed { tokens, next } => &mut tokens[next.saturating_sub(1)],
        }
    }
}
