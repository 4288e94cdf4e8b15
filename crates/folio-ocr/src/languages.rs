//! Language names as people and catalogues write them, to Tesseract's codes.

/// (Tesseract code, ISO 639-1, ISO 639-2/B where it differs, English name,
/// native name).
const LANGUAGES: &[(&str, &str, &str, &str, &str)] = &[
    ("eng", "en", "", "english", "english"),
    ("deu", "de", "ger", "german", "deutsch"),
    ("fra", "fr", "fre", "french", "français"),
    ("spa", "es", "", "spanish", "español"),
    ("ita", "it", "", "italian", "italiano"),
    ("por", "pt", "", "portuguese", "português"),
    ("nld", "nl", "dut", "dutch", "nederlands"),
    ("swe", "sv", "", "swedish", "svenska"),
    ("dan", "da", "", "danish", "dansk"),
    ("nor", "no", "", "norwegian", "norsk"),
    ("fin", "fi", "", "finnish", "suomi"),
    ("isl", "is", "ice", "icelandic", "íslenska"),
    ("pol", "pl", "", "polish", "polski"),
    ("ces", "cs", "cze", "czech", "čeština"),
    ("slk", "sk", "slo", "slovak", "slovenčina"),
    ("slv", "sl", "", "slovenian", "slovenščina"),
    ("hun", "hu", "", "hungarian", "magyar"),
    ("ron", "ro", "rum", "romanian", "română"),
    ("hrv", "hr", "", "croatian", "hrvatski"),
    ("srp", "sr", "", "serbian", "српски"),
    ("bul", "bg", "", "bulgarian", "български"),
    ("rus", "ru", "", "russian", "русский"),
    ("ukr", "uk", "", "ukrainian", "українська"),
    ("ell", "el", "gre", "greek", "ελληνικά"),
    ("tur", "tr", "", "turkish", "türkçe"),
    ("ara", "ar", "", "arabic", "العربية"),
    ("heb", "he", "", "hebrew", "עברית"),
    ("fas", "fa", "per", "persian", "فارسی"),
    ("hin", "hi", "", "hindi", "हिन्दी"),
    ("jpn", "ja", "", "japanese", "日本語"),
    ("kor", "ko", "", "korean", "한국어"),
    ("chi_sim", "zh", "chi", "chinese", "中文"),
    ("lat", "la", "", "latin", "latina"),
    ("cat", "ca", "", "catalan", "català"),
    ("est", "et", "", "estonian", "eesti"),
    ("lav", "lv", "", "latvian", "latviešu"),
    ("lit", "lt", "", "lithuanian", "lietuvių"),
    ("ind", "id", "", "indonesian", "bahasa indonesia"),
    ("vie", "vi", "", "vietnamese", "tiếng việt"),
    ("tha", "th", "", "thai", "ไทย"),
    ("gle", "ga", "", "irish", "gaeilge"),
    ("cym", "cy", "wel", "welsh", "cymraeg"),
    ("eus", "eu", "baq", "basque", "euskara"),
    ("glg", "gl", "", "galician", "galego"),
];

/// Tesseract's code for a language written as an ISO 639-1 or 639-2 code, a
/// BCP 47 tag (`en-US`, `zh-Hant`) or an English or native name; `None` for
/// anything else.
pub fn tesseract_code(language: &str) -> Option<&'static str> {
    let lower = language.trim().to_lowercase();
    if lower.is_empty() {
        return None;
    }
    if let Some(code) = named(&lower) {
        return Some(code);
    }
    let mut subtags = lower.split(['-', '_']);
    let primary = subtags.next()?;
    if primary == "zh" || primary == "chi" || primary == "zho" {
        let traditional = subtags.any(|s| matches!(s, "hant" | "tw" | "hk" | "mo"));
        return Some(if traditional { "chi_tra" } else { "chi_sim" });
    }
    named(primary)
}

fn named(lower: &str) -> Option<&'static str> {
    if lower == "nb" || lower == "nn" {
        return Some("nor");
    }
    LANGUAGES
        .iter()
        .find(|(code, iso1, iso2b, english, native)| {
            [*code, *iso1, *english, *native].contains(&lower)
                || (!iso2b.is_empty() && *iso2b == lower)
        })
        .map(|(code, ..)| *code)
}

/// The separate languages of a field like `"en; de"` or `"English/German"`.
pub(crate) fn split(field: &str) -> impl Iterator<Item = &str> {
    field
        .split([';', ',', '/', '+'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_tags_and_names() {
        for (written, code) in [
            ("en", "eng"),
            ("EN-us", "eng"),
            ("English", "eng"),
            ("eng", "eng"),
            ("de", "deu"),
            ("de-DE", "deu"),
            ("ger", "deu"),
            ("Deutsch", "deu"),
            ("Français", "fra"),
            ("zh-Hant", "chi_tra"),
            ("zh-CN", "chi_sim"),
            ("chi_sim", "chi_sim"),
            ("nb-NO", "nor"),
            (" Spanish ", "spa"),
        ] {
            assert_eq!(tesseract_code(written), Some(code), "{written}");
        }
        for unknown in ["", "xx", "Klingon", "e"] {
            assert_eq!(tesseract_code(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn several_languages_in_one_field() {
        assert_eq!(
            split("en; de , fr/it+la").collect::<Vec<_>>(),
            ["en", "de", "fr", "it", "la"]
        );
        assert_eq!(split(" ; ").count(), 0);
    }
}
