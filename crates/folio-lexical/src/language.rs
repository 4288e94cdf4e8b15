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
    /// Every language, in a stable order.
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
const SAMPLE: usize = 2_048;

/// The lowest confidence at which a detected language other than English
/// is taken for a text in the Latin script. Below it the text is
/// analysed as English, folio's analysis before languages were told apart.
const LATIN_CONFIDENCE: f64 = 0.5;

/// The language of `text`, detected from its opening. A text in the Latin
/// script whose language is not found with confidence is English; a text
/// in Han characters only is Chinese, with kana Japanese, with Hangul
/// Korean; Cyrillic that whatlang cannot place is Russian.
pub fn detect(text: &str) -> Language {
    let mut end = text.len().min(SAMPLE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let Some(info) = whatlang::detect(&text[..end]) else {
        return Language::English;
    };
    use whatlang::{Lang, Script as W};
    let language = match info.lang() {
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
        Lang::Rus => Language::Russian,
        Lang::Ell => Language::Greek,
        Lang::Ara => Language::Arabic,
        Lang::Cmn => Language::Chinese,
        Lang::Jpn => Language::Japanese,
        Lang::Kor => Language::Korean,
        _ => Language::Other,
    };
    match info.script() {
        W::Latin if language == Language::English => Language::English,
        W::Latin if info.confidence() >= LATIN_CONFIDENCE => language,
        W::Latin => Language::English,
        W::Cyrillic if info.confidence() < LATIN_CONFIDENCE => Language::Russian,
        // whatlang counts Han, hiragana and katakana apart; any kana
        // makes a text Japanese.
        W::Mandarin | W::Hiragana | W::Katakana
            if text[..end]
                .chars()
                .any(|c| matches!(c as u32, 0x3040..=0x30FF | 0xFF66..=0xFF9F)) =>
        {
            Language::Japanese
        }
        W::Mandarin => Language::Chinese,
        W::Hiragana | W::Katakana => Language::Japanese,
        W::Hangul => Language::Korean,
        W::Greek => Language::Greek,
        _ => language,
    }
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
