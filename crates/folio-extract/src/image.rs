//! Images (PNG, JPEG, TIFF): no text of their own. Extraction reads the
//! headers only — the size of every page, so that an image that would
//! decode to more pixels than the limit (a decompression bomb) is refused
//! before any program decodes it — and hands every page over for OCR.

use folio_core::{Limits, StructuredText};

use crate::{ExtractError, Format};

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<StructuredText, ExtractError> {
    let pages = if bytes.starts_with(b"\x89PNG") {
        vec![png_size(bytes)?]
    } else if bytes.starts_with(b"\xff\xd8") {
        vec![jpeg_size(bytes)?]
    } else {
        tiff_sizes(bytes, limits.max_pages)?
    };
    for (width, height) in &pages {
        let pixels = u64::from(*width) * u64::from(*height);
        if pixels > limits.max_image_pixels {
            return Err(ExtractError::TooLarge {
                what: "image (pixels)",
                limit: limits.max_image_pixels,
                actual: pixels,
            });
        }
        if pixels == 0 {
            return Err(ExtractError::malformed(
                Format::Image,
                "an image of zero size",
            ));
        }
    }
    let count = pages.len() as u32;
    Ok(StructuredText {
        page_count: Some(count),
        textless_pages: (1..=count).collect(),
        ..Default::default()
    })
}

fn truncated() -> ExtractError {
    ExtractError::malformed(Format::Image, "the image header is truncated")
}

fn be16(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes(
        bytes.get(at..at + 2)?.try_into().ok()?,
    )))
}

/// The IHDR chunk: width and height, big-endian, at bytes 16 and 20.
fn png_size(bytes: &[u8]) -> Result<(u32, u32), ExtractError> {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if bytes.get(12..16) != Some(b"IHDR") {
        return Err(ExtractError::malformed(Format::Image, "a PNG without IHDR"));
    }
    Ok((
        word(16).ok_or_else(truncated)?,
        word(20).ok_or_else(truncated)?,
    ))
}

/// The first start-of-frame marker (SOF0–SOF15 but DHT, JPG and DAC):
/// height then width, big-endian.
fn jpeg_size(bytes: &[u8]) -> Result<(u32, u32), ExtractError> {
    let mut at = 2;
    loop {
        while bytes.get(at) == Some(&0xff) && bytes.get(at + 1) == Some(&0xff) {
            at += 1;
        }
        if bytes.get(at) != Some(&0xff) {
            return Err(truncated());
        }
        let marker = *bytes.get(at + 1).ok_or_else(truncated)?;
        if matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
            let height = be16(bytes, at + 5).ok_or_else(truncated)?;
            let width = be16(bytes, at + 7).ok_or_else(truncated)?;
            return Ok((width, height));
        }
        if matches!(marker, 0xd8 | 0x01 | 0xd0..=0xd7) {
            at += 2;
            continue;
        }
        if marker == 0xd9 || marker == 0xda {
            return Err(ExtractError::malformed(
                Format::Image,
                "a JPEG without a frame header",
            ));
        }
        at += 2 + be16(bytes, at + 2).ok_or_else(truncated)? as usize;
    }
}

/// Every page (image file directory) of a TIFF: tags 256 (width) and 257
/// (height), SHORT or LONG. At most `max_pages` pages, and no loops.
fn tiff_sizes(bytes: &[u8], max_pages: u32) -> Result<Vec<(u32, u32)>, ExtractError> {
    let little = bytes.starts_with(b"II");
    let u16_at = |at: usize| -> Option<u32> {
        let b: [u8; 2] = bytes.get(at..at + 2)?.try_into().ok()?;
        Some(u32::from(if little {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }))
    };
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    };
    let mut pages = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut offset = u32_at(4).ok_or_else(truncated)? as usize;
    while offset != 0 {
        if !seen.insert(offset) {
            return Err(ExtractError::malformed(
                Format::Image,
                "a TIFF whose pages loop",
            ));
        }
        if pages.len() as u32 >= max_pages {
            return Err(ExtractError::TooMany {
                what: "pages",
                limit: max_pages.into(),
                actual: u64::from(max_pages) + 1,
            });
        }
        let entries = u16_at(offset).ok_or_else(truncated)? as usize;
        let (mut width, mut height) = (None, None);
        for i in 0..entries {
            let entry = offset + 2 + 12 * i;
            let tag = u16_at(entry).ok_or_else(truncated)?;
            let kind = u16_at(entry + 2).ok_or_else(truncated)?;
            let value = match kind {
                3 => u16_at(entry + 8),
                4 => u32_at(entry + 8),
                _ => None,
            };
            match tag {
                256 => width = value,
                257 => height = value,
                _ => {}
            }
        }
        match (width, height) {
            (Some(w), Some(h)) => pages.push((w, h)),
            _ => {
                return Err(ExtractError::malformed(
                    Format::Image,
                    "a TIFF page without width and height",
                ));
            }
        }
        offset = u32_at(offset + 2 + 12 * entries).ok_or_else(truncated)? as usize;
    }
    if pages.is_empty() {
        return Err(ExtractError::malformed(
            Format::Image,
            "a TIFF without pages",
        ));
    }
    Ok(pages)
}
