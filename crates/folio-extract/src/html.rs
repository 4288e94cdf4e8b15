//! HTML: the main content (readability), converted to Markdown and walked into
//! blocks; scripts, styles, navigation, headers and footers are dropped.

use folio_core::StructuredText;

use crate::markdown;

/// Elements that never carry document content.
const SKIPPED: [&str; 13] = [
    "head", "script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe",
    "svg", "template", "button",
];

/// Readability's content must have at least this many characters to be trusted
/// over the whole page.
const MIN_ARTICLE_CHARS: usize = 250;

pub fn extract(html: &str) -> StructuredText {
    let article = dom_smoothie::Readability::new(html, None, None)
        .ok()
        .and_then(|mut r| r.parse().ok());
    let (title, content) = match article {
        Some(a) if a.text_content.trim().chars().count() >= MIN_ARTICLE_CHARS => (
            Some(a.title).filter(|t| !t.trim().is_empty()),
            a.content.to_string(),
        ),
        _ => (document_title(html), html.to_string()),
    };
    let blocks = markdown::blocks(&to_markdown(&content), None);
    let title = title.or_else(|| document_title(html)).or_else(|| {
        blocks
            .iter()
            .find(|b| matches!(b.kind, folio_core::BlockKind::Heading(1)))
            .map(|b| b.text.clone())
    });
    StructuredText {
        title: title.map(|t| t.trim().to_string()),
        blocks,
        metadata: Default::default(),
        page_count: None,
        ..Default::default()
    }
}

/// Converts an HTML fragment to Markdown, dropping non-content elements.
pub(crate) fn to_markdown(html: &str) -> String {
    htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .build()
        .convert(html)
        .unwrap_or_default()
}

/// The text of the first `<title>` element.
fn document_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let title = html.get(open_end..close)?.trim();
    (!title.is_empty()).then(|| {
        title
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use folio_core::BlockKind;

    #[test]
    fn keeps_content_and_headings_drops_chrome() {
        let body = "Regularisation reduces overfitting in deep networks. ".repeat(8);
        let html = format!(
            "<html><head><title>Dropout &amp; friends</title><style>p{{color:red}}</style><script>var x=1;</script></head>\
             <body><nav><a href='/'>Home</a> <a href='/about'>About</a></nav>\
             <article><h1>Dropout</h1><p>{body}</p><h2>Method</h2><p>Units are dropped at random during training.</p></article>\
             <footer>Copyright footer text</footer></body></html>"
        );
        let t = extract(&html);
        let text: String = t
            .blocks
            .iter()
            .map(|b| b.text.clone())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(text.contains("Units are dropped"), "{text}");
        assert!(!text.contains("var x"), "{text}");
        assert!(!text.contains("color:red"), "{text}");
        assert!(!text.contains("Copyright footer"), "{text}");
        assert!(!text.contains("About"), "{text}");
        assert!(
            t.blocks
                .iter()
                .any(|b| b.kind == BlockKind::Heading(2) && b.text == "Method"),
            "{:?}",
            t.blocks
        );
        assert_eq!(t.title.as_deref(), Some("Dropout & friends"));
    }

    #[test]
    fn short_pages_fall_back_to_the_whole_body() {
        let t =
            extract("<html><head><title>T</title></head><body><p>Just one line.</p></body></html>");
        assert_eq!(t.blocks.len(), 1);
        assert_eq!(t.blocks[0].text, "Just one line.");
    }
}
