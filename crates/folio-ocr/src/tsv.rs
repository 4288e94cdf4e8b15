//! Tesseract's TSV output to paragraphs. Each row is one element of the page
//! layout: `level page_num block_num par_num line_num word_num left top width
//! height conf text`; level 5 rows are words, with a confidence in 0–100.

/// Each page's paragraphs (by block and paragraph number, in output order,
/// which is tesseract's reading order) and mean word confidence, by the
/// TSV's page numbers (1 for a single image; a multi-page TIFF counts up).
pub(crate) fn pages(tsv: &str) -> Vec<crate::PageText> {
    let mut pages: Vec<crate::PageText> = Vec::new();
    let mut sums: Vec<(f64, u32)> = Vec::new();
    let mut current: Option<(u32, u32, u32)> = None;
    let mut line: Option<u32> = None;
    let mut text = String::new();
    for row in tsv.lines().skip(1) {
        let columns: Vec<&str> = row.split('\t').collect();
        let [
            level,
            page,
            block,
            paragraph,
            line_number,
            _,
            _,
            _,
            _,
            _,
            conf,
            word,
        ] = columns[..]
        else {
            continue;
        };
        let (Ok(level), Ok(page), Ok(block), Ok(paragraph), Ok(line_number), Ok(conf)) = (
            level.parse::<u32>(),
            page.parse::<u32>(),
            block.parse::<u32>(),
            paragraph.parse::<u32>(),
            line_number.parse::<u32>(),
            conf.parse::<f32>(),
        ) else {
            continue;
        };
        if pages.last().is_none_or(|p| p.page != page) {
            if let Some(last) = pages.last_mut() {
                push(&mut last.paragraphs, &mut text);
            }
            pages.push(crate::PageText {
                page,
                paragraphs: Vec::new(),
                confidence: None,
            });
            sums.push((0.0, 0));
            current = None;
        }
        let word = word.trim();
        if level != 5 || word.is_empty() || conf < 0.0 {
            continue;
        }
        let (Some(this), Some(sum)) = (pages.last_mut(), sums.last_mut()) else {
            continue;
        };
        sum.0 += f64::from(conf);
        sum.1 += 1;
        if current != Some((page, block, paragraph)) {
            push(&mut this.paragraphs, &mut text);
            current = Some((page, block, paragraph));
            line = Some(line_number);
            text.push_str(word);
            continue;
        }
        if line != Some(line_number) {
            line = Some(line_number);
            if joins_hyphenated(&text, word) {
                text.pop();
                text.push_str(word);
                continue;
            }
        }
        text.push(' ');
        text.push_str(word);
    }
    if let Some(last) = pages.last_mut() {
        push(&mut last.paragraphs, &mut text);
    }
    for (page, (sum, words)) in pages.iter_mut().zip(sums) {
        page.confidence = (words > 0).then(|| (sum / f64::from(words)) as f32);
    }
    pages
}

fn push(paragraphs: &mut Vec<String>, text: &mut String) {
    if !text.is_empty() {
        paragraphs.push(std::mem::take(text));
    }
}

/// A line ending in `letter-` followed by a line starting in lower case is
/// one word broken across the lines.
fn joins_hyphenated(text: &str, next: &str) -> bool {
    let mut tail = text.chars().rev();
    tail.next() == Some('-')
        && tail.next().is_some_and(char::is_alphabetic)
        && next.chars().next().is_some_and(char::is_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext";

    fn row(level: u32, block: u32, par: u32, line: u32, conf: f32, text: &str) -> String {
        on_page(1, level, block, par, line, conf, text)
    }

    fn on_page(
        page: u32,
        level: u32,
        block: u32,
        par: u32,
        line: u32,
        conf: f32,
        text: &str,
    ) -> String {
        format!("{level}\t{page}\t{block}\t{par}\t{line}\t1\t0\t0\t10\t10\t{conf}\t{text}")
    }

    #[test]
    fn words_become_paragraphs_with_lines_joined() {
        let rows = [
            HEADER.to_string(),
            row(1, 0, 0, 0, -1.0, ""),
            row(2, 1, 0, 0, -1.0, ""),
            row(5, 1, 1, 1, 96.0, "Scanned"),
            row(5, 1, 1, 1, 90.0, "pages"),
            row(5, 1, 1, 2, 92.0, "need"),
            row(5, 1, 1, 2, 88.0, "recog-"),
            row(5, 1, 1, 3, 94.0, "nition."),
            row(5, 1, 2, 1, 80.0, "Well-"),
            row(5, 1, 2, 2, 80.0, "Known"),
            row(5, 2, 1, 1, 60.0, "  "),
            row(5, 2, 1, 1, 70.0, "Second"),
            row(5, 2, 1, 1, 70.0, "block"),
            "5\t1\tbroken".to_string(),
        ];
        let read = pages(&rows.join("\n"));
        assert_eq!(read.len(), 1);
        let (paragraphs, confidence) = (&read[0].paragraphs, read[0].confidence);
        assert_eq!(
            *paragraphs,
            [
                "Scanned pages need recognition.",
                "Well- Known",
                "Second block"
            ]
        );
        let mean = (96.0 + 90.0 + 92.0 + 88.0 + 94.0 + 80.0 + 80.0 + 70.0 + 70.0) / 9.0;
        assert!((confidence.unwrap() - mean).abs() < 1e-3);
    }

    #[test]
    fn pages_are_kept_apart_and_an_empty_page_has_no_paragraphs() {
        let rows = [
            HEADER.to_string(),
            on_page(1, 1, 0, 0, 0, -1.0, ""),
            on_page(1, 5, 1, 1, 1, 90.0, "first"),
            on_page(2, 1, 0, 0, 0, -1.0, ""),
            on_page(3, 1, 0, 0, 0, -1.0, ""),
            on_page(3, 5, 1, 1, 1, 80.0, "third"),
        ];
        let read = pages(&rows.join("\n"));
        let numbers: Vec<u32> = read.iter().map(|p| p.page).collect();
        assert_eq!(numbers, [1, 2, 3]);
        assert_eq!(read[0].paragraphs, ["first"]);
        assert!(read[1].paragraphs.is_empty() && read[1].confidence.is_none());
        assert_eq!(read[2].paragraphs, ["third"]);
        assert_eq!(read[2].confidence, Some(80.0));
    }
}
