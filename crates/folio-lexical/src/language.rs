//! The languages folio analyses text in, and how a text's language is
//! found: named by the caller where the source says so, else detected
//! (whatlang, trigram models of 69 languages, on the text's first
//! `SAMPLE` bytes).

use tantivy::tokenizer::Language as Snowball;

/// A language with an analysis of its own. Languages folio detects but has
/// no stemmer for are `Other`: their words are lower-cased and folded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    English,
    German,
    French,
    Spanish,
    Italian,
    Portuguese,
    Dutch,
    Swedish,
    Danish,
    Norwegian,
    Finnish,
    Hungarian,
    Romanian,
    Turkish,
    Russian,
    Greek,
    Arabic,
    Chinese,
    Japanese,
    Korean,
    Other,
}

/// The writing systems the analyser tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script {
    Latin,
    Cyrillic,
    Greek,
    Arabic,
    /// Han, kana and Hangul: written without spaces between words.
    Cjk,
    /// Thai, Lao, Khmer and Myanmar: also written without spaces.
    Unspaced,
    Other,
}

impl Language {
    /// Every language, in declaration order (`language as usize` is its
    /// index here; a test holds them to it).
    pub const ALL: [Language; 21] = [
        Language::English,
        Language::German,
        Language::French,
        Language::Spanish,
        Language::Italian,
        Language::Portuguese,
        Language::Dutch,
        Language::Swedish,
        Language::Danish,
        Language::Norwegian,
        Language::Finnish,
        Language::Hungarian,
        Language::Romanian,
        Language::Turkish,
        Language::Russian,
        Language::Greek,
        Language::Arabic,
        Language::Chinese,
        Language::Japanese,
        Language::Korean,
        Language::Other,
    ];

    /// The ISO 639-1 code ("und", undetermined, for `Other`).
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::German => "de",
            Language::French => "fr",
            Language::Spanish => "es",
            Language::Italian => "it",
            Language::Portuguese => "pt",
            Language::Dutch => "nl",
            Language::Swedish => "sv",
            Language::Danish => "da",
            Language::Norwegian => "no",
            Language::Finnish => "fi",
            Language::Hungarian => "hu",
            Language::Romanian => "ro",
            Language::Turkish => "tr",
            Language::Russian => "ru",
            Language::Greek => "el",
            Language::Arabic => "ar",
            Language::Chinese => "zh",
            Language::Japanese => "ja",
            Language::Korean => "ko",
            Language::Other => "und",
        }
    }

    /// The language a tag names: an ISO 639-1 or 639-2 code, a BCP 47 tag
    /// ("de-DE", "zh-Hans", "pt_BR") or an English name ("German"), in any
    /// case. `None` for a tag that names no language folio analyses.
    pub fn from_tag(tag: &str) -> Option<Language> {
        let tag = tag.trim().to_ascii_lowercase();
        let primary = tag.split(['-', '_']).next().unwrap_or("");
        Language::ALL.into_iter().find(|language| {
            *language != Language::Other
                && (language.code() == primary
                    || language.names().contains(&primary)
                    || language.names().contains(&tag.as_str()))
        })
    }

    /// ISO 639-2 codes and English names, lower case.
    fn names(self) -> &'static [&'static str] {
        match self {
            Language::English => &["eng", "english"],
            Language::German => &["deu", "ger", "german", "deutsch"],
            Language::French => &["fra", "fre", "french", "français"],
            Language::Spanish => &["spa", "spanish", "español"],
            Language::Italian => &["ita", "italian", "italiano"],
            Language::Portuguese => &["por", "portuguese", "português"],
            Language::Dutch => &["nld", "dut", "dutch", "nederlands"],
            Language::Swedish => &["swe", "swedish", "svenska"],
            Language::Danish => &["dan", "danish", "dansk"],
            Language::Norwegian => &["nor", "nob", "nno", "nb", "nn", "norwegian", "norsk"],
            Language::Finnish => &["fin", "finnish", "suomi"],
            Language::Hungarian => &["hun", "hungarian", "magyar"],
            Language::Romanian => &["ron", "rum", "romanian", "română"],
            Language::Turkish => &["tur", "turkish", "türkçe"],
            Language::Russian => &["rus", "russian", "русский"],
            Language::Greek => &["ell", "gre", "greek", "ελληνικά"],
            Language::Arabic => &["ara", "arabic", "العربية"],
            Language::Chinese => &["zho", "chi", "cmn", "chinese", "中文"],
            Language::Japanese => &["jpn", "japanese", "日本語"],
            Language::Korean => &["kor", "korean", "한국어"],
            Language::Other => &[],
        }
    }

    /// Whether the language is written in the Latin script.
    pub fn in_latin_script(self) -> bool {
        self.script() == Script::Latin
    }

    /// The script the language's words are written in.
    pub(crate) fn script(self) -> Script {
        match self {
            Language::Russian => Script::Cyrillic,
            Language::Greek => Script::Greek,
            Language::Arabic => Script::Arabic,
            Language::Chinese | Language::Japanese | Language::Korean => Script::Cjk,
            Language::Other => Script::Other,
            _ => Script::Latin,
        }
    }

    /// The Snowball stemmer (and, where tantivy has one, stop-word list)
    /// of the language.
    pub(crate) fn snowball(self) -> Option<Snowball> {
        Some(match self {
            Language::English => Snowball::English,
            Language::German => Snowball::German,
            Language::French => Snowball::French,
            Language::Spanish => Snowball::Spanish,
            Language::Italian => Snowball::Italian,
            Language::Portuguese => Snowball::Portuguese,
            Language::Dutch => Snowball::Dutch,
            Language::Swedish => Snowball::Swedish,
            Language::Danish => Snowball::Danish,
            Language::Norwegian => Snowball::Norwegian,
            Language::Finnish => Snowball::Finnish,
            Language::Hungarian => Snowball::Hungarian,
            Language::Romanian => Snowball::Romanian,
            Language::Turkish => Snowball::Turkish,
            Language::Russian => Snowball::Russian,
            Language::Greek => Snowball::Greek,
            Language::Arabic => Snowball::Arabic,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// How much of a text detection reads: the language of a chunk or a
/// document is the language of its opening.
const SAMPLE: usize = 1_024;

/// How much of a Latin text whatlang reads (its trigram scoring costs
/// about 0.2 ms a kilobyte).
const LATIN_SAMPLE: usize = 400;

/// The lowest confidence at which a detected language other than English
/// is taken for a text in the Latin script. Below it the text is
/// analysed as English, folio's analysis before languages were told apart.
const LATIN_CONFIDENCE: f64 = 0.5;

/// The languages whatlang chooses among for Latin text: those folio
/// stems, and the Latin-script languages most often mistaken for them
/// (which are then analysed without a stemmer).
const LATIN_CANDIDATES: [whatlang::Lang; 22] = {
    use whatlang::Lang::*;
    [
        Eng, Deu, Fra, Spa, Ita, Por, Nld, Swe, Dan, Nob, Fin, Hun, Ron, Tur, Pol, Ces, Slk, Hrv,
        Cat, Ind, Vie, Lat,
    ]
};

/// What marks a text with the language it is to be read in: the mark,
/// the language's code, the mark again, then the text (`in_language`).
const MARK: char = '\u{1}';

/// `text` marked with the language the analyser is to read it in, for an
/// index whose analyser receives the text alone (tantivy's).
pub fn in_language(text: &str, language: Language) -> String {
    format!("{MARK}{}{MARK}{text}", language.code())
}

/// The language a marked text (`in_language`) is to be read in, and the
/// text after the mark.
pub(crate) fn marked(text: &str) -> Option<(Language, &str)> {
    let rest = text.strip_prefix(MARK)?;
    let (code, text) = rest.split_once(MARK)?;
    let language = Language::ALL.into_iter().find(|l| l.code() == code)?;
    Some((language, text))
}

/// The language of `text`, detected from its opening (`SAMPLE` bytes);
/// English when its opening does not tell (`detected`).
pub fn detect(text: &str) -> Language {
    detected(text).unwrap_or(Language::English)
}

/// The language of `text`, detected from its opening (`SAMPLE` bytes).
/// Writing systems decide first: any kana makes a text Japanese, Hangul
/// Korean, Han (a tenth of its letters or more) Chinese, even among Latin
/// words (manuals keep commands and options in English); otherwise the
/// script most of its letters are in: Cyrillic is read as Russian, Greek
/// as Greek, Arabic as Arabic. Latin text is told apart by counts of
/// function words, then whatlang's trigram models. `None` when the text
/// has no letters, or is in the Latin script and neither decides with
/// confidence (a heading, a short note, a row of a table, code).
/// Detections are remembered by the sample's hash, as a text is analysed
/// more than once (counted, indexed, marked).
pub fn detected(text: &str) -> Option<Language> {
    let mut end = text.len().min(SAMPLE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let sample = &text[..end];
    let key = {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        sample.hash(&mut hasher);
        hasher.finish()
    };
    const SLOTS: usize = 4_096;
    static CACHE: std::sync::Mutex<Vec<(u64, Option<Language>)>> =
        std::sync::Mutex::new(Vec::new());
    let slot = (key % SLOTS as u64) as usize;
    {
        let cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(k, language)) = cache.get(slot)
            && k == key
        {
            return language;
        }
    }
    let language = detect_sample(sample);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if cache.is_empty() {
        cache.resize(SLOTS, (0, None));
    }
    cache[slot] = (key, language);
    language
}

fn detect_sample(sample: &str) -> Option<Language> {
    let (mut latin, mut cyrillic, mut greek, mut arabic, mut han, mut kana, mut hangul, mut other) = (
        0usize, 0usize, 0usize, 0usize, 0usize, 0usize, 0usize, 0usize,
    );
    for c in sample.chars().filter(|c| c.is_alphabetic()) {
        match script_of(c) {
            Script::Latin => latin += 1,
            Script::Cyrillic => cyrillic += 1,
            Script::Greek => greek += 1,
            Script::Arabic => arabic += 1,
            Script::Cjk if is_kana(c) => kana += 1,
            Script::Cjk if is_kana_or_hangul(c) => hangul += 1,
            Script::Cjk => han += 1,
            Script::Unspaced | Script::Other => other += 1,
        }
    }
    let letters = latin + cyrillic + greek + arabic + han + kana + hangul + other;
    if letters == 0 {
        return None;
    }
    if kana > 0 && kana * 50 >= letters.max(50) {
        return Some(Language::Japanese);
    }
    if hangul * 10 >= letters {
        return Some(Language::Korean);
    }
    if han * 10 >= letters {
        return Some(Language::Chinese);
    }
    let most = [latin, cyrillic, greek, arabic, other]
        .into_iter()
        .max()
        .unwrap_or(0);
    if most != latin {
        return Some(if most == cyrillic {
            Language::Russian
        } else if most == greek {
            Language::Greek
        } else if most == arabic {
            Language::Arabic
        } else {
            Language::Other
        });
    }
    if let Some(language) = by_function_words(sample) {
        return Some(language);
    }
    let mut end = sample.len().min(LATIN_SAMPLE);
    while !sample.is_char_boundary(end) {
        end -= 1;
    }
    let detector = whatlang::Detector::with_allowlist(LATIN_CANDIDATES.to_vec());
    let info = detector.detect(&sample[..end])?;
    (info.confidence() >= LATIN_CONFIDENCE).then(|| from_whatlang(info.lang()))
}

/// The commonest function words of each Latin-script language folio
/// stems: articles, conjunctions, prepositions, auxiliaries. Every
/// language's text is full of them, and few are shared.
const FUNCTION_WORDS: [(Language, &[&str]); 14] = [
    (
        Language::English,
        &[
            "the", "and", "of", "to", "is", "that", "it", "for", "with", "are", "this", "be", "by",
            "not", "from", "which", "have", "was", "were", "an", "or", "can", "will", "if", "when",
        ],
    ),
    (
        Language::German,
        &[
            "der", "die", "das", "und", "ist", "nicht", "mit", "den", "von", "zu", "ein", "eine",
            "für", "auf", "dem", "des", "sich", "im", "werden", "wird", "oder", "auch", "bei",
            "nach", "wenn", "einer", "wie", "kann",
        ],
    ),
    (
        Language::French,
        &[
            "le", "la", "les", "de", "des", "et", "est", "une", "un", "du", "que", "qui", "dans",
            "pour", "pas", "sur", "par", "avec", "ce", "au", "ne", "sont", "ou", "aux", "cette",
            "être", "peut",
        ],
    ),
    (
        Language::Spanish,
        &[
            "el", "la", "los", "las", "de", "del", "que", "y", "en", "un", "una", "es", "por",
            "con", "para", "no", "se", "su", "al", "lo", "como", "más", "pero", "está", "puede",
            "sus",
        ],
    ),
    (
        Language::Italian,
        &[
            "il", "di", "che", "e", "la", "le", "un", "una", "per", "non", "con", "del", "della",
            "sono", "è", "gli", "da", "si", "nel", "alla", "dei", "questo", "può", "delle",
        ],
    ),
    (
        Language::Portuguese,
        &[
            "o", "a", "os", "as", "de", "do", "da", "dos", "das", "que", "e", "em", "um", "uma",
            "para", "com", "não", "por", "é", "se", "no", "na", "mais", "ao", "pode", "são",
        ],
    ),
    (
        Language::Dutch,
        &[
            "de", "het", "een", "en", "van", "is", "dat", "op", "te", "in", "niet", "met", "voor",
            "zijn", "die", "er", "aan", "wordt", "ook", "als", "bij", "of", "kan", "naar",
        ],
    ),
    (
        Language::Swedish,
        &[
            "och", "att", "det", "som", "en", "är", "av", "för", "med", "till", "den", "har",
            "inte", "på", "om", "ett", "de", "kan", "var", "eller", "vid", "från",
        ],
    ),
    (
        Language::Danish,
        &[
            "og", "at", "det", "er", "en", "til", "af", "den", "som", "med", "for", "ikke", "på",
            "har", "de", "et", "kan", "der", "om", "fra", "eller", "bliver",
        ],
    ),
    (
        Language::Norwegian,
        &[
            "og", "det", "er", "en", "til", "av", "som", "på", "med", "for", "ikke", "har", "de",
            "et", "kan", "den", "om", "fra", "seg", "eller", "blir", "ved",
        ],
    ),
    (
        Language::Finnish,
        &[
            "ja", "on", "ei", "että", "se", "joka", "tai", "kun", "mutta", "myös", "ovat", "oli",
            "sen", "ole", "jos", "niin", "voi", "kuin", "tämä", "joten",
        ],
    ),
    (
        Language::Hungarian,
        &[
            "a", "az", "és", "hogy", "nem", "egy", "is", "van", "meg", "ez", "csak", "mint", "már",
            "volt", "vagy", "kell", "lesz", "ha", "azt", "ami",
        ],
    ),
    (
        Language::Romanian,
        &[
            "și", "de", "la", "în", "cu", "pe", "un", "o", "nu", "care", "este", "din", "pentru",
            "sau", "mai", "sunt", "se", "ca", "al", "ale", "fi", "această",
        ],
    ),
    (
        Language::Turkish,
        &[
            "ve", "bir", "bu", "için", "ile", "da", "de", "ne", "çok", "daha", "olan", "gibi",
            "ama", "veya", "değil", "olarak", "ya", "kadar", "her", "ise",
        ],
    ),
];

/// A Latin language of whatlang's as folio's (`Other` for languages
/// folio does not analyse).
fn from_whatlang(lang: whatlang::Lang) -> Language {
    use whatlang::Lang;
    match lang {
        Lang::Eng => Language::English,
        Lang::Deu => Language::German,
        Lang::Fra => Language::French,
        Lang::Spa => Language::Spanish,
        Lang::Ita => Language::Italian,
        Lang::Por => Language::Portuguese,
        Lang::Nld => Language::Dutch,
        Lang::Swe => Language::Swedish,
        Lang::Dan => Language::Danish,
        Lang::Nob => Language::Norwegian,
        Lang::Fin => Language::Finnish,
        Lang::Hun => Language::Hungarian,
        Lang::Ron => Language::Romanian,
        Lang::Tur => Language::Turkish,
        _ => Language::Other,
    }
}

/// The language of a query, among `candidates` (the languages of a
/// library, most chunks first). A query is short: a text's detector,
/// which wants six function words before it decides, would call most
/// queries English. Queries not mostly in the Latin script are told by
/// their script (`detect`). A Latin query is in the candidate whose
/// function words it holds more of than any other's ("Mettre fin au
/// processus" holds French "au"), else in the candidate whatlang,
/// choosing among the candidates only, is confident of, else in the
/// library's main Latin language (English when it has none).
pub fn query_language(query: &str, candidates: &[Language]) -> Language {
    if !crate::in_latin_script(query) {
        return detect(query);
    }
    let latin: Vec<Language> = candidates
        .iter()
        .copied()
        .filter(|l| l.script() == Script::Latin && *l != Language::Other)
        .collect();
    match latin.as_slice() {
        [] => return Language::English,
        [only] => return *only,
        _ => {}
    }
    let (all, _) = function_word_counts(query);
    let counts: Vec<usize> = latin
        .iter()
        .map(|language| {
            FUNCTION_WORDS
                .iter()
                .position(|(l, _)| l == language)
                .map_or(0, |i| all[i])
        })
        .collect();
    let best = counts.iter().copied().max().unwrap_or(0);
    if best > 0 && counts.iter().filter(|&&c| c == best).count() == 1 {
        return latin[counts.iter().position(|&c| c == best).unwrap_or(0)];
    }
    let allowed: Vec<whatlang::Lang> = LATIN_CANDIDATES
        .iter()
        .copied()
        .filter(|lang| latin.contains(&from_whatlang(*lang)))
        .collect();
    if allowed.len() > 1
        && let Some(info) = whatlang::Detector::with_allowlist(allowed).detect(query)
        && info.confidence() >= LATIN_CONFIDENCE
    {
        return from_whatlang(info.lang());
    }
    latin[0]
}

/// Each function word with the languages (bits, in `FUNCTION_WORDS`
/// order) it belongs to.
fn function_words() -> &'static std::collections::HashMap<&'static str, u16> {
    static WORDS: std::sync::OnceLock<std::collections::HashMap<&'static str, u16>> =
        std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        let mut words = std::collections::HashMap::new();
        for (i, (_, list)) in FUNCTION_WORDS.iter().enumerate() {
            for word in *list {
                *words.entry(*word).or_insert(0u16) |= 1 << i;
            }
        }
        words
    })
}

/// The language whose function words a Latin text holds most, when it
/// holds clearly more of one language's than of any other's (at least
/// six, and half again as many as the runner-up); else `None`, for
/// whatlang to decide.
pub(crate) fn by_function_words(sample: &str) -> Option<Language> {
    let (counts, words) = function_word_counts(sample);
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by(|a, b| counts[*b].cmp(&counts[*a]));
    let (best, second) = (counts[order[0]], counts[order[1]]);
    (words > 0 && best >= 6 && best * 2 >= second * 3).then(|| FUNCTION_WORDS[order[0]].0)
}

/// How many of each language's function words `sample` holds (in
/// `FUNCTION_WORDS` order), and how many words it has.
fn function_word_counts(sample: &str) -> ([usize; FUNCTION_WORDS.len()], usize) {
    let mut counts = [0usize; FUNCTION_WORDS.len()];
    let mut words = 0;
    for word in sample
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
    {
        words += 1;
        let lower;
        let word = if word.chars().any(char::is_uppercase) {
            lower = word.to_lowercase();
            lower.as_str()
        } else {
            word
        };
        if let Some(&languages) = function_words().get(word) {
            for (i, count) in counts.iter_mut().enumerate() {
                *count += usize::from(languages & (1 << i) != 0);
            }
        }
    }
    (counts, words)
}

/// Hiragana and katakana.
fn is_kana(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F)
}

/// The script of a character, as far as analysis cares.
pub(crate) fn script_of(c: char) -> Script {
    match c as u32 {
        0x0370..=0x03FF | 0x1F00..=0x1FFF => Script::Greek,
        0x0400..=0x052F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
        0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => {
            Script::Arabic
        }
        0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x19E0..=0x19FF => Script::Unspaced,
        _ if is_cjk(c) => Script::Cjk,
        0x0590..=0x05FF
        | 0x0700..=0x074F
        | 0x0780..=0x07BF
        | 0x0900..=0x0DFF
        | 0x0F00..=0x0FFF
        | 0x10A0..=0x10FF
        | 0x1200..=0x139F
        | 0x0530..=0x058F => Script::Other,
        _ => Script::Latin,
    }
}

/// Han (with its extensions and compatibility forms), kana and Hangul.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF       // Hangul Jamo
        | 0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3130..=0x318F     // Hangul compatibility Jamo
        | 0x31F0..=0x31FF     // Katakana phonetic extensions
        | 0x3400..=0x4DBF     // Han extension A
        | 0x4E00..=0x9FFF     // Han
        | 0xA960..=0xA97F     // Hangul Jamo extended A
        | 0xAC00..=0xD7FF     // Hangul syllables, Jamo extended B
        | 0xF900..=0xFAFF     // Han compatibility
        | 0xFF66..=0xFF9F     // half-width Katakana
        | 0x20000..=0x3134F   // Han extensions B to G
    )
}

/// Kana or Hangul: a run holding one is Japanese or Korean, never Chinese.
pub(crate) fn is_kana_or_hangul(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x3040..=0x30FF | 0x3130..=0x318F | 0x31F0..=0x31FF
        | 0xA960..=0xA97F | 0xAC00..=0xD7FF | 0xFF66..=0xFF9F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_is_listed_at_its_index() {
        for (i, language) in Language::ALL.into_iter().enumerate() {
            assert_eq!(language as usize, i);
        }
    }

    #[test]
    fn tags_name_languages() {
        for (tag, language) in [
            ("de", Language::German),
            ("de-DE", Language::German),
            ("DEU", Language::German),
            ("German", Language::German),
            ("zh_CN", Language::Chinese),
            ("zh-Hans", Language::Chinese),
            ("pt-BR", Language::Portuguese),
            ("ja", Language::Japanese),
            (" en ", Language::English),
        ] {
            assert_eq!(Language::from_tag(tag), Some(language), "{tag}");
        }
        for tag in ["", "und", "xx", "klingon", "pl"] {
            assert_eq!(Language::from_tag(tag), None, "{tag}");
        }
        for language in Language::ALL {
            if language != Language::Other {
                assert_eq!(Language::from_tag(language.code()), Some(language));
            }
        }
    }

    #[test]
    fn languages_are_detected() {
        for (text, language) in [
            (
                "The patients were given vitamin D for twelve weeks before the trial ended, and their bone density was measured at the start and at the end of the study.",
                Language::English,
            ),
            (
                "Die Patienten erhielten zwölf Wochen lang Vitamin D, bevor die Studie endete. Ihre Knochendichte wurde zu Beginn und am Ende der Studie gemessen, und die Ergebnisse wurden verglichen.",
                Language::German,
            ),
            (
                "Les patients ont reçu de la vitamine D pendant douze semaines avant la fin de l'essai. Leur densité osseuse a été mesurée au début et à la fin de l'étude.",
                Language::French,
            ),
            (
                "Los pacientes recibieron vitamina D durante doce semanas antes de que terminara el ensayo. Su densidad ósea se midió al principio y al final del estudio.",
                Language::Spanish,
            ),
            (
                "Пациенты получали витамин D в течение двенадцати недель до окончания исследования.",
                Language::Russian,
            ),
            (
                "تلقى المرضى فيتامين د لمدة اثني عشر أسبوعا قبل انتهاء التجربة.",
                Language::Arabic,
            ),
            ("患者在试验结束前服用了十二周的维生素D。", Language::Chinese),
            (
                "患者は試験終了前に12週間ビタミンDを投与された。",
                Language::Japanese,
            ),
            (
                "환자들은 시험이 끝나기 전 12주 동안 비타민 D를 투여받았다.",
                Language::Korean,
            ),
            (
                "Οι ασθενείς έλαβαν βιταμίνη D για δώδεκα εβδομάδες.",
                Language::Greek,
            ),
            ("", Language::English),
            ("12345 67.8", Language::English),
        ] {
            assert_eq!(detect(text), language, "{text}");
        }
    }
}
