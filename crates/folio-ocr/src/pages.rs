//! A PDF page as an image, with a passage marked on it: Poppler's
//! `pdftotext -bbox` gives the page's words with their boxes, `pdftoppm`
//! renders the page, and the words of the passage are painted over as a
//! highlighter would before the image is encoded as PNG. Both programs run
//! bounded in time and output, on a copy of the PDF in a scratch folder.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{OcrError, find, run, scratch_copy};

/// The longest side of a rendered page, in pixels.
pub const MAX_PAGE_SIDE: u32 = 1600;
/// The resolution a page is rendered at when it fits `MAX_PAGE_SIDE`.
const PAGE_DPI: f32 = 150.0;
/// Output of `pdftotext` kept for one page.
const MAX_WORDS_OUTPUT: u64 = 16 << 20;
/// Characters a run of the passage must share with the page to count.
const SHINGLE: usize = 12;
/// Unmatched words a marked run may bridge (a figure label, a hyphenated
/// word, a footnote mark).
const MAX_GAP: usize = 8;
/// Letters a right-to-left word needs to be matched on its own (shorter
/// ones are everywhere; inside a passage they are bridged).
const MIN_WORD: usize = 3;

/// Poppler's programs that render pages and place their words.
#[derive(Debug, Clone)]
pub struct Poppler {
    pdftoppm: PathBuf,
    pdftotext: PathBuf,
}

/// A word on a page and its box, in points from the top left.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    pub text: String,
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

/// A rendered page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageImage {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// The marked boxes, in pixels of the image: `[x0, y0, x1, y1]`.
    pub marks: Vec<[u32; 4]>,
}

impl Poppler {
    /// Finds `pdftoppm` and `pdftotext` on `PATH`.
    pub fn find() -> Result<Self, OcrError> {
        match (find("pdftoppm"), find("pdftotext")) {
            (Some(pdftoppm), Some(pdftotext)) => Ok(Poppler {
                pdftoppm,
                pdftotext,
            }),
            _ => Err(OcrError::Unavailable(
                "page images need Poppler's pdftoppm and pdftotext (Debian package \
                 poppler-utils) on PATH"
                    .into(),
            )),
        }
    }

    /// Page `page` (1-based) of `pdf` as a PNG at most `MAX_PAGE_SIDE`
    /// pixels on a side, with the words of `passage` (when given) marked.
    /// Each program gets `timeout`; the work happens in a fresh folder under
    /// `scratch`.
    pub fn page_image(
        &self,
        pdf: &[u8],
        page: u32,
        passage: Option<&str>,
        scratch: &Path,
        timeout: Duration,
    ) -> Result<PageImage, String> {
        let (dir, input) = scratch_copy(scratch, "input.pdf", pdf).map_err(|e| e.to_string())?;
        let number = page.to_string();
        let layout = run(
            Command::new(&self.pdftotext)
                .args(["-f", &number, "-l", &number, "-bbox", "-q"])
                .arg(&input)
                .arg("-"),
            timeout,
            MAX_WORDS_OUTPUT,
        )
        .map_err(|e| format!("pdftotext: {e}"))?;
        let (size, words) = page_words(&String::from_utf8_lossy(&layout))
            .ok_or_else(|| format!("the PDF has no page {page}"))?;
        let longest = size.0.max(size.1).max(1.0);
        let dpi = PAGE_DPI
            .min(MAX_PAGE_SIDE as f32 * 72.0 / longest)
            .max(10.0);
        let stem = dir.path().join("page");
        let side = MAX_PAGE_SIDE.to_string();
        run(
            Command::new(&self.pdftoppm)
                .args(["-f", &number, "-l", &number])
                .args(["-r", &format!("{dpi:.3}")])
                .args(["-x", "0", "-y", "0", "-W", &side, "-H", &side])
                .args(["-singlefile", "-q"])
                .arg(&input)
                .arg(&stem),
            timeout,
            crate::MAX_OUTPUT,
        )
        .map_err(|e| format!("pdftoppm: {e}"))?;
        let ppm =
            std::fs::read(stem.with_extension("ppm")).map_err(|e| format!("pdftoppm: {e}"))?;
        let mut image = Rgb::from_ppm(&ppm).ok_or("pdftoppm: an unreadable image")?;
        let scale = dpi / 72.0;
        let marks: Vec<[u32; 4]> = passage
            .map(|passage| marked(&words, passage))
            .unwrap_or_default()
            .into_iter()
            .map(|i| {
                let w = &words[i];
                let px = |v: f32, limit: u32| ((v * scale).round().max(0.0) as u32).min(limit);
                [
                    px(w.x0, image.width),
                    px(w.y0, image.height),
                    px(w.x1, image.width),
                    px(w.y1, image.height),
                ]
            })
            .collect();
        for mark in &marks {
            image.highlight(*mark);
        }
        // The space between two marked words of one line is marked too,
        // as one stroke of a highlighter would.
        for pair in marks.windows(2) {
            let ([_, y0, x1, y1], [next_x0, next_y0, _, next_y1]) = (pair[0], pair[1]);
            let same_line =
                y0.abs_diff(next_y0) <= (y1 - y0) / 3 && y1.abs_diff(next_y1) <= (y1 - y0) / 3;
            if same_line && next_x0 > x1 && next_x0 - x1 <= (y1 - y0) {
                image.highlight([x1, y0.min(next_y0), next_x0, y1.max(next_y1)]);
            }
        }
        Ok(PageImage {
            png: image.png()?,
            width: image.width,
            height: image.height,
            marks,
        })
    }
}

/// The page size (points) and words of `pdftotext -bbox` output for one
/// page; None when it holds no page.
pub fn page_words(xhtml: &str) -> Option<((f32, f32), Vec<Word>)> {
    let page = xhtml.find("<page ")?;
    let head_end = page + xhtml[page..].find('>')?;
    let head = &xhtml[page..head_end];
    let size = (attribute(head, "width")?, attribute(head, "height")?);
    let mut words = Vec::new();
    let mut rest = &xhtml[head_end..];
    while let Some(start) = rest.find("<word ") {
        rest = &rest[start..];
        let Some(open_end) = rest.find('>') else {
            break;
        };
        let Some(close) = rest.find("</word>") else {
            break;
        };
        let tag = &rest[..open_end];
        if let (Some(x0), Some(y0), Some(x1), Some(y1)) = (
            attribute(tag, "xMin"),
            attribute(tag, "yMin"),
            attribute(tag, "xMax"),
            attribute(tag, "yMax"),
        ) && open_end < close
        {
            words.push(Word {
                text: unescape(&rest[open_end + 1..close]),
                x0,
                y0,
                x1,
                y1,
            });
        }
        rest = &rest[close + "</word>".len()..];
    }
    Some((size, words))
}

fn attribute(tag: &str, name: &str) -> Option<f32> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = start + tag[start..].find('"')?;
    tag[start..end].parse().ok()
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The indexes of the page's words that belong to `passage`: compared as
/// letters and digits only, lower-cased (so Markdown marks, hyphenation
/// and spacing do not matter, in every script), every run of `SHINGLE`
/// characters the two share marks the words it covers; the longest stretch
/// of marked words (gaps of up to `MAX_GAP` words bridged) is the passage.
pub fn marked(words: &[Word], passage: &str) -> Vec<usize> {
    let mut page = Vec::new();
    let mut owner = Vec::new();
    for (i, word) in words.iter().enumerate() {
        for c in folded(&word.text) {
            page.push(c);
            owner.push(i);
        }
    }
    let wanted: Vec<char> = folded(passage).collect();
    let n = SHINGLE.min(wanted.len());
    if n == 0 || page.len() < n {
        return Vec::new();
    }
    let shingles: std::collections::HashSet<&[char]> = wanted.windows(n).collect();
    let mut hit = vec![false; words.len()];
    for (start, window) in page.windows(n).enumerate() {
        if shingles.contains(window) {
            for &w in &owner[start..start + n] {
                hit[w] = true;
            }
        }
    }
    // A PDF may store right-to-left text (Arabic, Hebrew) in visual order:
    // pdftotext then gives each such word reversed and a line's words from
    // left to right, so no run of characters spans two words as the
    // passage has them. Such a word counts when it is one of the passage's
    // words, read either way.
    let passage_words: std::collections::HashSet<String> = passage
        .split_whitespace()
        .map(|w| folded(w).collect::<String>())
        .filter(|w| w.chars().count() >= MIN_WORD)
        .collect();
    for (i, word) in words.iter().enumerate() {
        if hit[i] || !right_to_left(&word.text) {
            continue;
        }
        let forward: String = folded(&word.text).collect();
        if forward.chars().count() < MIN_WORD {
            continue;
        }
        let backward: String = forward.chars().rev().collect();
        hit[i] = passage_words.contains(&forward) || passage_words.contains(&backward);
    }
    // The longest stretch of hits, bridging short gaps.
    let (mut best, mut best_hits) = (None, 0);
    let mut current: Option<(usize, usize, usize)> = None; // first, last, hits
    for (i, &is_hit) in hit.iter().enumerate() {
        if !is_hit {
            continue;
        }
        current = match current {
            Some((first, last, hits)) if i - last <= MAX_GAP + 1 => Some((first, i, hits + 1)),
            _ => Some((i, i, 1)),
        };
        if let Some((first, last, hits)) = current
            && hits > best_hits
        {
            best = Some((first, last));
            best_hits = hits;
        }
    }
    best.map(|(first, last)| (first..=last).collect())
        .unwrap_or_default()
}

/// Whether a word is written right to left: it holds a Hebrew, Arabic,
/// Syriac, Thaana or N'Ko letter (or an Arabic or Hebrew presentation form).
fn right_to_left(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF))
}

fn folded(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
}

/// An 8-bit RGB image.
struct Rgb {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Rgb {
    /// Reads a binary PPM (`P6`, 8-bit), as `pdftoppm` writes it (eight
    /// times faster than its PNG, which it compresses hard).
    fn from_ppm(bytes: &[u8]) -> Option<Self> {
        let mut fields = Vec::with_capacity(4);
        let mut at = 0;
        while fields.len() < 4 {
            while bytes.get(at)?.is_ascii_whitespace() {
                at += 1;
            }
            if bytes[at] == b'#' {
                while *bytes.get(at)? != b'\n' {
                    at += 1;
                }
                continue;
            }
            let start = at;
            while !bytes.get(at)?.is_ascii_whitespace() {
                at += 1;
            }
            fields.push(std::str::from_utf8(&bytes[start..at]).ok()?);
        }
        let [magic, width, height, max] = fields[..] else {
            return None;
        };
        let (width, height): (u32, u32) = (width.parse().ok()?, height.parse().ok()?);
        if magic != "P6" || max != "255" {
            return None;
        }
        let size = width as usize * height as usize * 3;
        let pixels = bytes.get(at + 1..at + 1 + size)?.to_vec();
        Some(Rgb {
            width,
            height,
            pixels,
        })
    }

    /// Paints `[x0, y0, x1, y1]` as a yellow highlighter does: the page
    /// shows through (its blue is taken down, dark text stays dark).
    fn highlight(&mut self, [x0, y0, x1, y1]: [u32; 4]) {
        // The box, a little taller than the glyphs.
        let y0 = y0.saturating_sub(1);
        let y1 = (y1 + 1).min(self.height);
        for y in y0..y1 {
            for x in x0..x1.min(self.width) {
                let at = (y as usize * self.width as usize + x as usize) * 3;
                self.pixels[at + 1] = ((self.pixels[at + 1] as u16 * 226) / 255) as u8;
                self.pixels[at + 2] = ((self.pixels[at + 2] as u16 * 60) / 255) as u8;
            }
        }
    }

    fn png(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer
            .write_image_data(&self.pixels)
            .map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split_whitespace()
            .enumerate()
            .map(|(i, w)| Word {
                text: w.into(),
                x0: i as f32 * 10.0,
                y0: 0.0,
                x1: i as f32 * 10.0 + 8.0,
                y1: 10.0,
            })
            .collect()
    }

    #[test]
    fn the_passage_is_the_longest_stretch_it_shares_with_the_page() {
        let page = words(
            "Methods We measured the yield of the crop in every field. Results The \
             yield rose by a third where the soil was drained, and fell where it was not. \
             Discussion the yield of the crop matters.",
        );
        // Markdown marks, a hyphenated break and a different case.
        let passage = "**The yield rose** by a third where the soil was drai-\nned, and fell \
                       where it was not.";
        let got = marked(&page, passage);
        let text: Vec<&str> = got.iter().map(|&i| page[i].text.as_str()).collect();
        assert_eq!(
            text.join(" "),
            "The yield rose by a third where the soil was drained, and fell where it was not."
        );
        // A passage the page does not hold marks nothing.
        assert!(marked(&page, "Nothing of this sentence is on that page at all").is_empty());
        assert!(marked(&page, "").is_empty());
    }

    #[test]
    fn words_without_spaces_between_them_are_marked_too() {
        // Chinese: pdftotext's words are whole phrases.
        let page =
            words("研究方法 我们测量了每块田地的作物产量 结果显示排水后产量提高了三分之一 讨论");
        let got = marked(&page, "结果显示排水后产量提高了三分之一");
        assert_eq!(got, vec![2]);
    }

    #[test]
    fn right_to_left_words_in_visual_order_are_marked() {
        // pdftotext's words of a page Chromium printed in Arabic: a heading,
        // then two paragraphs, each word reversed and each line's words
        // from left to right.
        let page = words(
            "ليصاحملاو يرلا اهيف ءاملا يقب يتلا ةرواجملا لوقحلا نم رثكأ بوبح ثلث ةفرصملا \
             لوقحلا تطعأ ةثلاثلا مساوملا يف .عيبرلا رخاوأ ىتح .ءاوس دح ىلع ةبطرلاو ةفاجلا \
             تاونسلا يف ةييمطلاو ةينيطلا ةبرتلا يف قرفلا رهظ دقو",
        );
        // The two paragraphs as folio extracted them, in reading order.
        let passage = "في المواسم الثلاثة أعطت الحقول المصرفة ثلث حبوب أكثر من الحقول المجاورة \
                       التي بقي الماء فيها حتى أواخر الربيع. وقد ظهر الفرق في التربة الطينية \
                       والطميية في السنوات الجافة والرطبة على حد سواء.";
        assert_eq!(marked(&page, passage), (2..page.len()).collect::<Vec<_>>());
        // Only the heading: its two words.
        assert_eq!(marked(&page, "الري والمحاصيل"), vec![0, 1]);
        // Left-to-right words are never read backwards.
        let latin = words("olleh world");
        assert!(marked(&latin, "hello there").is_empty());
    }

    #[test]
    fn pdftotext_layout_is_read_with_its_entities() {
        let xhtml = r#"<doc>
  <page width="595.280000" height="841.890000">
    <word xMin="31.18" yMin="37.8" xMax="96.1" yMax="54.4">R&amp;D</word>
    <word xMin="100" yMin="37.8" xMax="120" yMax="54.4">&lt;b&gt;</word>
  </page>
</doc>"#;
        let (size, words) = page_words(xhtml).unwrap();
        assert_eq!(size, (595.28, 841.89));
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["R&D", "<b>"]);
        assert_eq!(words[0].x0, 31.18);
        assert!(page_words("<doc></doc>").is_none());
    }

    #[test]
    fn ppm_is_read_and_refused_when_short() {
        let mut ppm = b"P6\n# made by hand\n2 1\n255\n".to_vec();
        ppm.extend([10, 20, 30, 200, 210, 220]);
        let image = Rgb::from_ppm(&ppm).unwrap();
        assert_eq!((image.width, image.height), (2, 1));
        assert_eq!(image.pixels, [10, 20, 30, 200, 210, 220]);
        assert!(Rgb::from_ppm(&ppm[..ppm.len() - 1]).is_none());
        assert!(Rgb::from_ppm(b"P5\n2 1\n255\n\0\0").is_none());
    }
}
