//! Facts about writing systems that more than one reader of text needs.

/// Arabic diacritics (tashkeel), Quranic annotation marks, the superscript
/// alef and the tatweel: marks people seldom type, which the lexical
/// analysis and the encoders both read text without.
pub fn is_arabic_mark(c: char) -> bool {
    matches!(c as u32, 0x0610..=0x061A | 0x064B..=0x065F | 0x0670 | 0x06D6..=0x06ED | 0x0640)
}
