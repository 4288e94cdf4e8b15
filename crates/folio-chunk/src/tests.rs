//! Chunk boundaries, token limits, section paths, pages and offsets, with a
//! word-counting tokenizer so expectations are easy to compute by hand.

use folio_core::{Block, BlockKind, StructuredText};

use super::*;

/// One token per whitespace-separated word.
struct Words;

impl TokenCounter for Words {
    fn count(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

fn words(n: usize, tag: &str) -> String {
    (0..n)
        .map(|i| format!("{tag}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(blocks: Vec<Block>, config: ChunkConfig) -> (StructuredText, Vec<ChunkDraft>) {
    let text = StructuredText {
        title: Some("Doc".into()),
        blocks,
        ..Default::default()
    };
    let rendered = text.render();
    let drafts = chunk(&text, &rendered, &config, &Words, usize::MAX);
    for d in &drafts {
        let slice: String = rendered
            .text
            .chars()
            .skip(d.char_start as usize)
            .take((d.char_end - d.char_start) as usize)
            .collect();
        assert_eq!(slice, d.text, "offsets must address the chunk text");
        assert!(
            d.token_count as usize <= config.max_tokens,
            "{} > {}",
            d.token_count,
            config.max_tokens
        );
        assert_eq!(d.token_count as usize, Words.count(&d.embed_text));
    }
    (text, drafts)
}

const CFG: ChunkConfig = ChunkConfig {
    target_tokens: 40,
    max_tokens: 50,
    overlap_tokens: 8,
};

#[test]
fn headings_start_new_chunks_and_form_section_paths() {
    let (_, drafts) = run(
        vec![
            Block::new(BlockKind::Heading(1), "Intro", None),
            Block::new(BlockKind::Paragraph, words(5, "a"), None),
            Block::new(BlockKind::Heading(2), "Background", None),
            Block::new(BlockKind::Paragraph, words(5, "b"), None),
            Block::new(BlockKind::Heading(1), "Methods", None),
            Block::new(BlockKind::Paragraph, words(5, "c"), None),
        ],
        CFG,
    );
    let paths: Vec<Vec<String>> = drafts.iter().map(|d| d.section_path.clone()).collect();
    assert_eq!(
        paths,
        vec![
            vec!["Intro".to_string()],
            vec!["Intro".into(), "Background".into()],
            vec!["Methods".into()]
        ]
    );
    assert_eq!(
        drafts[1].embed_text,
        format!("Doc\nIntro > Background\n{}", words(5, "b"))
    );
}

#[test]
fn a_document_of_headings_alone_is_its_headings() {
    let (_, drafts) = run(
        vec![
            Block::new(BlockKind::Heading(1), "Meeting notes", None),
            Block::new(BlockKind::Heading(2), "Agenda", None),
            Block::new(BlockKind::Paragraph, "  ", None),
        ],
        CFG,
    );
    assert_eq!(drafts.len(), 1, "{drafts:?}");
    assert!(drafts[0].text.contains("Meeting notes"), "{drafts:?}");
    assert!(drafts[0].text.contains("Agenda"), "{drafts:?}");
    // With a paragraph anywhere, headings stay the sections' paths only.
    let (_, drafts) = run(
        vec![
            Block::new(BlockKind::Heading(1), "Meeting notes", None),
            Block::new(BlockKind::Paragraph, words(5, "a"), None),
        ],
        CFG,
    );
    assert_eq!(drafts.len(), 1);
    assert!(!drafts[0].text.contains("Meeting notes"), "{drafts:?}");
}

#[test]
fn small_blocks_pack_together_up_to_the_target() {
    let blocks = (0..10)
        .map(|i| Block::new(BlockKind::Paragraph, words(9, &format!("p{i}w")), None))
        .collect();
    let (_, drafts) = run(blocks, CFG);
    // header "Doc" is 1 token: 39 tokens of budget, 4 paragraphs of 9 per chunk.
    let counts: Vec<usize> = drafts
        .iter()
        .map(|d| d.text.split("\n\n").count())
        .collect();
    assert_eq!(counts, vec![4, 4, 2], "{drafts:#?}");
    // The overlap repeats the previous chunk's last paragraph (9 tokens > 8: none).
    assert!(drafts[1].text.starts_with("p4w0"));
}

#[test]
fn long_paragraphs_split_at_sentences_with_overlap() {
    // Sentences start with a capital letter, as UAX #29 expects.
    let sentences: Vec<String> = (0..12)
        .map(|i| format!("{}.", words(6, &format!("S{i}w"))))
        .collect();
    let (_, drafts) = run(
        vec![Block::new(BlockKind::Paragraph, sentences.join(" "), None)],
        CFG,
    );
    assert!(drafts.len() >= 2);
    for d in &drafts {
        assert!(d.text.ends_with('.'), "cut inside a sentence: {:?}", d.text);
    }
    // Each later chunk starts with the previous chunk's last sentence (6 tokens ≤ 8).
    for pair in drafts.windows(2) {
        let last_sentence = pair[0].text.rsplit(". ").next().unwrap();
        assert!(
            pair[1]
                .text
                .starts_with(last_sentence.trim_end_matches('.')),
            "{pair:#?}"
        );
    }
}

#[test]
fn a_sentence_over_the_window_splits_at_words_and_a_giant_word_by_chars() {
    let (_, drafts) = run(
        vec![Block::new(BlockKind::Paragraph, words(130, "w"), None)],
        CFG,
    );
    assert_eq!(
        drafts
            .iter()
            .map(|d| d.text.split_whitespace().count())
            .sum::<usize>(),
        130
    );
    let giant = "x".repeat(500);
    let (_, drafts) = run(
        vec![Block::new(BlockKind::Paragraph, giant.clone(), None)],
        CFG,
    );
    assert_eq!(
        drafts.iter().map(|d| d.text.clone()).collect::<String>(),
        giant
    );
}

#[test]
fn page_spans_follow_blocks() {
    let (_, drafts) = run(
        vec![
            Block::new(BlockKind::Paragraph, words(10, "a"), Some(1)),
            Block::new(BlockKind::Paragraph, words(10, "b"), Some(2)),
            Block::new(BlockKind::Paragraph, words(30, "c"), Some(3)),
        ],
        CFG,
    );
    assert_eq!(
        (drafts[0].page_start, drafts[0].page_end),
        (Some(1), Some(2))
    );
    assert_eq!(
        (
            drafts.last().unwrap().page_start,
            drafts.last().unwrap().page_end
        ),
        (Some(3), Some(3))
    );
}

#[test]
fn multibyte_text_keeps_char_offsets() {
    let (_, drafts) = run(
        vec![Block::new(
            BlockKind::Paragraph,
            "Über die Straße — naïve café. ".repeat(20),
            None,
        )],
        CFG,
    );
    assert!(drafts.len() > 1);
}

#[test]
fn config_validation() {
    assert!(ChunkConfig::for_window(256).validate().is_ok());
    // A long-context window keeps its maximum but chunks at a citable size.
    let long = ChunkConfig::for_window(8192);
    assert_eq!((long.target_tokens, long.max_tokens), (510, 8190));
    assert!(long.validate().is_ok());
    assert_eq!(ChunkConfig::for_window(512).target_tokens, 510);
    assert!(
        ChunkConfig {
            target_tokens: 60,
            max_tokens: 50,
            overlap_tokens: 1
        }
        .validate()
        .is_err()
    );
    assert!(
        ChunkConfig {
            target_tokens: 40,
            max_tokens: 50,
            overlap_tokens: 40
        }
        .validate()
        .is_err()
    );
}

/// Words, remembering the longest text it was asked to count.
#[derive(Default)]
struct Longest(std::cell::Cell<usize>);

impl TokenCounter for Longest {
    fn count(&self, text: &str) -> usize {
        self.0.set(self.0.get().max(text.len()));
        Words.count(text)
    }
}

#[test]
fn a_document_of_one_long_line_is_never_tokenised_whole() {
    // Four megabytes in one block, sentences and all: what an HTML page
    // holding one long line becomes. The tokenizer's working memory is a
    // hundred bytes or more per token of its input, so counting the block
    // whole took gigabytes.
    let line = format!("{}. ", words(12, "Word")).repeat(4 * 1024 * 1024 / 80);
    let no_sentences = words(200_000, "w");
    for text in [line, no_sentences] {
        let structured = StructuredText {
            title: Some("Doc".into()),
            blocks: vec![Block::new(BlockKind::Paragraph, text.clone(), None)],
            ..Default::default()
        };
        let rendered = structured.render();
        let counter = Longest::default();
        let drafts = chunk(&structured, &rendered, &CFG, &counter, usize::MAX);
        let bound = CFG.max_tokens * MAX_BYTES_PER_TOKEN;
        assert!(
            counter.0.get() <= bound,
            "counted {} bytes at once, over {bound}",
            counter.0.get()
        );
        // Nothing lost: between the chunks (ASCII: char offsets are
        // bytes) there is only whitespace.
        let mut covered = 0;
        for d in &drafts {
            let gap = text.get(covered..d.char_start as usize).unwrap_or("");
            assert!(gap.trim().is_empty(), "lost {gap:?}");
            covered = covered.max(d.char_end as usize);
        }
        assert!(text[covered..].trim().is_empty());
    }
}

#[test]
fn chunking_stops_past_the_chunk_limit() {
    let blocks = (0..100)
        .map(|i| Block::new(BlockKind::Paragraph, words(30, &format!("p{i}w")), None))
        .collect::<Vec<_>>();
    let structured = StructuredText {
        blocks,
        ..Default::default()
    };
    let rendered = structured.render();
    let all = chunk(&structured, &rendered, &CFG, &Words, usize::MAX);
    assert!(all.len() > 10);
    let capped = chunk(&structured, &rendered, &CFG, &Words, 10);
    assert_eq!(capped.len(), 11, "one past the limit tells the caller");
    assert_eq!(capped[..], all[..11]);
}

// Issue 50: a long table is cut between rows; every chunk names the table
// and its rows, and the chunks after the first repeat the header row.
#[test]
fn a_long_table_is_cut_between_rows_with_its_header_repeated() {
    let rows: Vec<Vec<String>> = (1..=40)
        .map(|i| vec![format!("vendor{i}"), words(6, &format!("r{i}w"))])
        .collect();
    let table = folio_core::Table {
        caption: Some("Table 2: Unit prices".into()),
        header: vec!["Vendor".into(), "Notes".into()],
        rows,
        first_row: Some(2),
    }
    .into_block(None)
    .unwrap();
    let blocks = vec![
        Block::new(BlockKind::Heading(1), "Prices", None),
        Block::new(BlockKind::Paragraph, words(5, "intro"), None),
        table,
        Block::new(BlockKind::Paragraph, words(5, "after"), None),
    ];
    let config = ChunkConfig {
        target_tokens: 60,
        max_tokens: 80,
        overlap_tokens: 10,
    };
    let (_, drafts) = run(blocks, config);
    let table_chunks: Vec<&ChunkDraft> = drafts
        .iter()
        .filter(|d| d.section_path.get(1).map(String::as_str) == Some("Table 2: Unit prices"))
        .collect();
    assert!(table_chunks.len() >= 3, "{drafts:#?}");
    let mut next_row = 2;
    for (i, d) in table_chunks.iter().enumerate() {
        // Whole rows only, in order, none twice.
        for line in d.text.lines().filter(|l| l.contains("vendor")) {
            assert!(
                line.starts_with("| vendor") && line.ends_with(" |"),
                "{line}"
            );
            assert!(
                line.contains(&format!("| vendor{} |", next_row - 1)),
                "{line}"
            );
            next_row += 1;
        }
        let last = next_row - 1;
        let first = d.text.lines().find(|l| l.contains("vendor")).map(|l| {
            l.trim_start_matches("| vendor")
                .split(' ')
                .next()
                .unwrap()
                .parse::<u32>()
                .unwrap()
                + 1
        });
        assert_eq!(
            d.section_path.last().unwrap(),
            &format!("rows {}–{last}", first.unwrap()),
            "{d:#?}"
        );
        assert!(d.embed_text.contains("| Vendor | Notes |"), "{d:#?}");
        if i == 0 {
            assert!(d.text.starts_with("Table 2: Unit prices\n\n| Vendor"));
        } else {
            assert!(!d.text.contains("Vendor"));
        }
    }
    assert_eq!(next_row, 42, "every row once");
    // Text before and after the table stays in the heading's section.
    assert!(
        drafts
            .iter()
            .any(|d| d.text.contains("intro0") && d.section_path == ["Prices"])
    );
    assert!(
        drafts
            .iter()
            .any(|d| d.text.contains("after0") && d.section_path == ["Prices"])
    );
}

// A sheet's table captioned by the sheet's name, under a heading of the
// same name (a workbook of several sheets), is named once in its path.
#[test]
fn a_sheet_under_its_own_heading_is_named_once() {
    let table = folio_core::Table {
        caption: Some("Prices".into()),
        header: vec!["Vendor".into(), "Price".into()],
        rows: vec![vec!["Acme".into(), "0.12".into()]],
        first_row: Some(2),
    }
    .into_block(None)
    .unwrap();
    let blocks = vec![Block::new(BlockKind::Heading(2), "Prices", None), table];
    let (_, drafts) = run(blocks, CFG);
    assert_eq!(drafts.len(), 1, "{drafts:#?}");
    assert_eq!(drafts[0].section_path, ["Prices", "row 2"]);
}
