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

/// Element nesting deeper than this is refused before any parser sees the
/// page: the HTML tree builder, readability and the Markdown converter all
/// recurse over the tree (10,000 nested `<div>`s overflowed their stack) and
/// slow down with depth, while real pages rarely nest a hundred deep.
pub const MAX_DEPTH: usize = 512;

/// Elements that never hold others (no end tag).
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Elements whose end tag may be left out: the tree builder closes them
/// when a sibling starts, so an unclosed run of them does not nest.
const OPTIONAL_END: [&str; 20] = [
    "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead", "tbody", "tfoot",
    "colgroup", "caption", "rb", "rt", "rp", "rtc", "html", "body",
];

/// Elements whose content is raw text, not markup.
const RAW_TEXT: [&str; 6] = ["script", "style", "textarea", "title", "xmp", "noscript"];

/// The deepest element nesting of `html`, counted by a linear scan of its
/// tags (comments, declarations and raw-text content skipped; void and
/// optional-end elements not counted). An estimate from above of the tree
/// the parser would build, in O(n) time and O(1) memory.
pub fn nesting_depth(html: &str) -> usize {
    let bytes = html.as_bytes();
    let lower_tail = |from: usize, needle: &str| -> Option<usize> {
        let n = needle.as_bytes();
        bytes[from..]
            .windows(n.len())
            .position(|w| w.eq_ignore_ascii_case(n))
            .map(|p| from + p)
    };
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    while let Some(offset) = bytes[i..].iter().position(|&b| b == b'<') {
        i += offset + 1;
        if bytes[i..].starts_with(b"!--") {
            i = lower_tail(i, "-->").map_or(bytes.len(), |e| e + 3);
            continue;
        }
        let closing = bytes.get(i) == Some(&b'/');
        let start = i + usize::from(closing);
        let name_len = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count();
        if name_len == 0 || !bytes[start].is_ascii_alphabetic() {
            // `<!DOCTYPE`, `<?xml`, or a `<` in text.
            continue;
        }
        let name = html[start..start + name_len].to_ascii_lowercase();
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(bytes.len(), |e| start + e);
        let self_closing = end > 0 && bytes.get(end - 1) == Some(&b'/');
        i = (end + 1).min(bytes.len());
        let counted = !VOID.contains(&name.as_str()) && !OPTIONAL_END.contains(&name.as_str());
        if closing {
            if counted {
                depth = depth.saturating_sub(1);
            }
        } else if RAW_TEXT.contains(&name.as_str()) {
            i = lower_tail(i, &format!("</{name}")).unwrap_or(bytes.len());
        } else if counted && !self_closing {
            depth += 1;
            deepest = deepest.max(depth);
        }
    }
    deepest
}

/// Refuses HTML nested deeper than `MAX_DEPTH`.
pub fn check_depth(html: &str, format: crate::Format) -> Result<(), crate::ExtractError> {
    let depth = nesting_depth(html);
    if depth > MAX_DEPTH {
        return Err(crate::ExtractError::malformed(
            format,
            format!("elements nested {depth} deep, over the limit of {MAX_DEPTH}"),
        ));
    }
    Ok(())
}

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
    let mut metadata = serde_json::Map::new();
    if let Some(language) = document_language(html) {
        metadata.insert("language".into(), language.into());
    }
    StructuredText {
        title: title.map(|t| t.trim().to_string()),
        blocks,
        metadata,
        page_count: None,
        ..Default::default()
    }
}

/// The `lang` attribute of the `<html>` element: the language the page
/// says it is in.
fn document_language(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let mut from = 0;
    let tag = loop {
        let at = from + lower[from..].find("<html")?;
        let next = lower.as_bytes().get(at + 5).copied();
        if matches!(next, Some(b' ' | b'\t' | b'\n' | b'\r' | b'>' | b'/')) {
            let end = lower[at..].find('>').map_or(lower.len(), |e| at + e);
            break &html[at + 5..end];
        }
        from = at + 5;
    };
    let lower_tag = tag.to_ascii_lowercase();
    let mut search = 0;
    while let Some(found) = lower_tag[search..].find("lang") {
        let at = search + found;
        search = at + 4;
        // `lang`, not `xml:lang`'s prefix or another attribute's tail.
        let before = lower_tag[..at].chars().next_back();
        if before.is_some_and(|c| !(c.is_whitespace() || c == ':')) {
            continue;
        }
        let rest = tag[at + 4..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
            _ => rest
                .split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .unwrap_or(""),
        };
        let value = value.trim();
        if !value.is_empty() && value.len() <= 35 {
            return Some(value.to_string());
        }
    }
    None
}

/// Converts an HTML fragment to Markdown, dropping non-content elements.
/// A table's `<caption>` (or the `<figcaption>` of a figure holding a
/// table) becomes a marked paragraph before the table, which the Markdown
/// walk makes the table's caption.
pub(crate) fn to_markdown(html: &str) -> String {
    let document = dom_query::Document::from(html);
    for caption in document.select("table > caption").nodes() {
        let text = caption.text();
        let table = caption.parent();
        caption.remove_from_parent();
        if let Some(table) = table {
            mark_caption(&table, &text);
        }
    }
    for caption in document.select("figure > figcaption").nodes() {
        let Some(table) = caption
            .parent()
            .and_then(|figure| figure.find(&["table"]).into_iter().next())
        else {
            continue;
        };
        let text = caption.text();
        caption.remove_from_parent();
        mark_caption(&table, &text);
    }
    document.md(Some(&SKIPPED)).to_string()
}

/// Puts `text` before `table` as a paragraph marked as its caption.
fn mark_caption(table: &dom_query::NodeRef<'_>, text: &str) {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return;
    }
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    table.before_html(format!("<p>{}{escaped}</p>", markdown::CAPTION_MARK));
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

    // Issue 48: a page's own language tag is its document's language.
    #[test]
    fn the_page_language_is_read_from_the_html_element() {
        for (html, language) in [
            (
                r#"<!DOCTYPE html><html lang="de-DE"><body><p>Hallo</p></body></html>"#,
                Some("de-DE"),
            ),
            (
                r#"<HTML xmlns="http://www.w3.org/1999/xhtml" xml:lang='fr' LANG='fr'><p>x</p></HTML>"#,
                Some("fr"),
            ),
            ("<html lang=zh><p>数据</p></html>", Some("zh")),
            ("<html><body lang=\"es\"><p>hola</p></body></html>", None),
            ("<htmlx lang=\"ru\"></htmlx><p>x</p>", None),
            (r#"<html data-slang="en" lang=""><p>x</p></html>"#, None),
        ] {
            assert_eq!(document_language(html).as_deref(), language, "{html}");
        }
        let page = extract(
            r#"<html lang="ja"><head><title>T</title></head><body><p>検索</p></body></html>"#,
        );
        assert_eq!(
            page.metadata.get("language"),
            Some(&serde_json::json!("ja"))
        );
    }
}

#[cfg(test)]
mod depth_tests {
    use super::nesting_depth;

    #[test]
    fn nesting_is_counted_as_the_tree_builder_would_nest() {
        let check =
            |html: &str, expected: usize| assert_eq!(nesting_depth(html), expected, "{html}");
        check("<html><body><div><p>text<p>more</div></body></html>", 1);
        check("<div><div><span>x</span></div></div>", 3);
        check(&"<div>".repeat(600), 600);
        check(&"<b>".repeat(700), 700);
        check(&"<p>".repeat(10_000), 0);
        check(&"<li>".repeat(10_000), 0);
        check("<br><img src=x><hr/><div/>", 0);
        check(
            "<!-- <div><div> --><script>if (a<b) { '<div>' }</script><div>",
            1,
        );
        check(&"<table><tr><td>".repeat(100), 100);
        check("a < b and <3 <!DOCTYPE html>", 0);
    }
}
