//! Plain text: encoding detection, refusal of binary data, paragraphs.

use folio_core::{Block, BlockKind, StructuredText};

use crate::ExtractError;

/// Decodes text: a byte-order mark wins, then strict UTF-8, then the encoding
/// chardetng guesses (legacy Windows/ISO code pages, Shift-JIS, ...). Data with
/// NUL bytes or many control characters is refused as binary.
pub fn decode(bytes: &[u8]) -> Result<String, ExtractError> {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        return check_textual(text.into_owned());
    }
    if bytes.contains(&0) {
        return Err(ExtractError::Binary);
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => {
            let mut detector = chardetng::EncodingDetector::new();
            detector.feed(bytes, true);
            let encoding = detector.guess(None, true);
            encoding.decode_without_bom_handling(bytes).0.into_owned()
        }
    };
    check_textual(text)
}

fn check_textual(text: String) -> Result<String, ExtractError> {
    let total = text.chars().count().max(1);
    let control = text
        .chars()
        .filter(|c| {
            (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}')) || *c == '\u{fffd}'
        })
        .count();
    if control * 20 > total {
        return Err(ExtractError::Binary);
    }
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// Splits text into paragraphs at blank lines.
pub fn extract_plain(text: &str) -> StructuredText {
    StructuredText {
        blocks: paragraphs(text, None),
        ..Default::default()
    }
}

/// Paragraph blocks of `text` (split at blank lines), all on `page`.
pub(crate) fn paragraphs(text: &str, page: Option<u32>) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                blocks.push(Block::new(
                    BlockKind::Paragraph,
                    std::mem::take(&mut current),
                    page,
                ));
            }
        } else {
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(line.trim_end());
        }
    }
    if !current.is_empty() {
        blocks.push(Block::new(BlockKind::Paragraph, current, page));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_utf8_bom_utf16_and_legacy() {
        assert_eq!(decode("héllo".as_bytes()).unwrap(), "héllo");
        assert_eq!(decode(b"\xef\xbb\xbfhi").unwrap(), "hi");
        assert_eq!(decode(b"\xff\xfeh\0i\0").unwrap(), "hi");
        // "café au lait" in windows-1252
        assert_eq!(
            decode(b"caf\xe9 au lait, d\xe9j\xe0 vu").unwrap(),
            "café au lait, déjà vu"
        );
    }

    #[test]
    fn refuses_binary() {
        assert!(matches!(decode(b"ab\0cd"), Err(ExtractError::Binary)));
        let noise: Vec<u8> = (0..2000u32)
            .map(|i| (i * 7 % 32) as u8)
            .filter(|b| *b != 0)
            .collect();
        assert!(matches!(decode(&noise), Err(ExtractError::Binary)));
    }

    #[test]
    fn paragraphs_split_at_blank_lines() {
        let t = extract_plain("one\ntwo\n\n\nthree\r\n");
        let texts: Vec<_> = t.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["one\ntwo", "three"]);
    }
}
