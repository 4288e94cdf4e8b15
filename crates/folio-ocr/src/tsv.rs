//! Tesseract's TSV output to paragraphs. Each row is one element of the page
//! layout: `level page_num block_num par_num line_num word_num left top width
//! height conf text`; level 5 rows are words, with a confidence in 0–100.

/// The page's paragraphs (by block and paragraph number, in output order,
/// which is tesseract's reading order) and the mean word confidence.
pub(crate) fn paragraphs(tsv: &str) -> (Vec<String>, Option<f32>) {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current: Option<(u32, u32)> = None;
    let mut line: Option<u32> = None;
    let mut text = String::new();
    let (mut confidence_sum, mut words) = (0.0f64, 0u32);
    for row in tsv.lines().skip(1) {
        let columns: Vec<&str> = row.split('\t').collect();
        let [
            level,
            _,
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
        let word = word.trim();
        let (Ok(5), Ok(block), Ok(paragraph), Ok(line_number), Ok(conf)) = (
            level.parse::<u32>(),
            block.parse::<u32>(),
            paragraph.parse::<u32>(),
            line_number.parse::<u32>(),
            conf.parse::<f32>(),
        ) else {
            continue;
        };
        if word.is_empty() || conf < 0.0 {
            continue;
        }
        confidence_sum += f64::from(conf);
        words += 1;
        if current != Some((block, paragraph)) {
            push(&mut paragraphs, &mut text);
            current = Some((block, paragraph));
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
    push(&mut paragraphs, &mut text);
    let confidence = (words > 0).then(|| (confidence_sum / f64::from(words)) as f32);
    (paragraphs, confidence)
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
        format!("{level}\t1\t{block}\t{par}\t{line}\t1\t0\t0\t10\t10\t{conf}\t{text}")
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
        let (paragraphs, confidence) = paragraphs(&rows.join("\n"));
        assert_eq!(
            paragraphs,
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
    fn an_empty_page_has_no_paragraphs() {
        let (paragraphs, confidence) =
            paragraphs(&format!("{HEADER}\n{}", row(1, 0, 0, 0, -1.0, "")));
        assert!(paragraphs.is_empty());
        assert_eq!(confidence, None);
    }
}
