//! Citations: reference lists attached to a library's documents (matched by
//! DOI, file name or title), the citation every hit carries, and quote
//! verification — where a passage occurs (document, page, char offsets),
//! exactly or approximately.

use folio_core::citation::normalise_doi;
use folio_core::{DocumentSummary, LibraryName};
use folio_extract::references::Reference;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Engine, EngineError, Result};

/// What attaching a reference list did.
#[derive(Debug, Clone, Serialize)]
pub struct AttachReport {
    pub library: String,
    pub references: usize,
    pub documents: usize,
    /// Documents that received citation metadata.
    pub matched: usize,
    /// Sources of the documents no reference matched.
    pub unmatched: Vec<String>,
}

/// The citation of a hit, from its document's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Citation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citekey: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authors: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The document's language (`language` of its metadata, which ingest
    /// fills from the source or the text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl Citation {
    pub fn from_metadata(metadata: &Map<String, Value>, title: Option<&str>) -> Self {
        let text = |key: &str| {
            metadata
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let authors = match metadata.get("authors").or_else(|| metadata.get("author")) {
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(names)) => names
                .split(" and ")
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect(),
            _ => Vec::new(),
        };
        Citation {
            citekey: text("citekey"),
            doi: text("doi"),
            title: text("title").or_else(|| title.map(str::to_string)),
            authors,
            year: metadata.get("year").and_then(|y| {
                y.as_i64()
                    .or_else(|| y.as_str().and_then(|s| s.get(..4)?.parse().ok()))
            }),
            url: text("url"),
            language: text("language"),
        }
    }
}

/// Lowercase letters and digits only: titles compare by this.
fn title_key(title: &str) -> String {
    title
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn file_name(source: &str) -> &str {
    source.rsplit(['/', '\\']).next().unwrap_or(source)
}

/// The reference that describes `document`: same DOI, else a file name the
/// reference lists (or its citekey as the file stem), else the same title.
pub fn match_reference<'r>(
    document: &DocumentSummary,
    references: &'r [Reference],
) -> Option<&'r Reference> {
    let doi = document
        .metadata
        .get("doi")
        .and_then(Value::as_str)
        .and_then(normalise_doi);
    if let Some(doi) = &doi
        && let Some(r) = references.iter().find(|r| r.doi.as_ref() == Some(doi))
    {
        return Some(r);
    }
    let name = file_name(&document.source);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    if let Some(r) = references
        .iter()
        .find(|r| r.files.iter().any(|f| f == name) || r.citekey.as_deref() == Some(stem))
    {
        return Some(r);
    }
    let titles = [
        document.metadata.get("title").and_then(Value::as_str),
        document.title.as_deref(),
    ];
    titles
        .into_iter()
        .flatten()
        .map(title_key)
        .filter(|k| k.len() >= 8)
        .find_map(|key| {
            references
                .iter()
                .find(|r| r.title.as_deref().map(title_key).as_deref() == Some(key.as_str()))
        })
}

impl Engine {
    /// Matches every document of the library against `references` and
    /// merges the matching reference's citation fields into its metadata.
    pub fn attach_references(
        &self,
        library: &LibraryName,
        references: &[Reference],
    ) -> Result<AttachReport> {
        self.writable("attaching references")?;
        let mut report = AttachReport {
            library: library.to_string(),
            references: references.len(),
            documents: 0,
            matched: 0,
            unmatched: Vec::new(),
        };
        let page = 500;
        let mut offset = 0;
        loop {
            let (documents, total) = self.store.documents(library, offset, page)?;
            report.documents = total as usize;
            for document in &documents {
                match match_reference(document, references) {
                    Some(reference) => {
                        let mut metadata = document.metadata.clone();
                        let fields = reference.metadata();
                        if fields.iter().any(|(k, v)| metadata.get(k) != Some(v)) {
                            metadata.extend(fields);
                            self.store.update_metadata(&document.id, metadata)?;
                        }
                        report.matched += 1;
                    }
                    None => report.unmatched.push(document.source.clone()),
                }
            }
            offset += documents.len() as u64;
            if documents.is_empty() || offset >= total {
                break;
            }
        }
        Ok(report)
    }
}

/// Reads and parses a reference file (CSL-JSON or BibTeX).
pub fn read_references(bytes: &[u8]) -> Result<Vec<Reference>> {
    folio_extract::references::parse_references(bytes).map_err(EngineError::from)
}

/// Where a passage occurs.
#[derive(Debug, Clone, Serialize)]
pub struct QuoteMatch {
    pub document_id: String,
    pub library: String,
    pub source: String,
    pub title: Option<String>,
    pub citation: Citation,
    /// Char offsets into the document text.
    pub char_start: u64,
    pub char_end: u64,
    pub page_start: Option<u32>,
    pub page_end: Option<u32>,
    pub section_path: Vec<String>,
    /// True when the passage occurs verbatim (ignoring case, whitespace,
    /// quotes, dashes and ligatures).
    pub exact: bool,
    /// Similarity in [0, 1]; 1 for an exact match.
    pub score: f64,
    /// The text found at those offsets.
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct QuoteRequest {
    pub passage: String,
    /// Libraries searched (all when empty).
    pub libraries: Vec<LibraryName>,
    /// Look only in this document.
    pub document_id: Option<String>,
    /// Least similarity for an approximate match.
    pub min_score: f64,
    /// Most matches returned.
    pub limit: usize,
}

/// Folds a char for matching: lowercase, typographic quotes and dashes to
/// ASCII, ligatures expanded. Whitespace folds to one space elsewhere.
fn fold(c: char, out: &mut String) {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{2032}' | '`' => out.push('\''),
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{2033}' => out.push('"'),
        '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
        '\u{fb00}' => out.push_str("ff"),
        '\u{fb01}' => out.push_str("fi"),
        '\u{fb02}' => out.push_str("fl"),
        '\u{fb03}' => out.push_str("ffi"),
        '\u{fb04}' => out.push_str("ffl"),
        '\u{00ad}' => {}
        c => out.extend(c.to_lowercase()),
    }
}

/// The folded text and, for each folded char, the original char index.
fn normalise(text: &str) -> (Vec<char>, Vec<usize>) {
    let mut chars = Vec::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    let mut space = false;
    let mut buffer = String::new();
    for (i, c) in text.chars().enumerate() {
        // Markdown emphasis and heading marks are not part of the words.
        if c.is_whitespace() || matches!(c, '*' | '#' | '_') {
            space = !chars.is_empty();
            continue;
        }
        if space {
            chars.push(' ');
            origin.push(i);
            space = false;
        }
        buffer.clear();
        fold(c, &mut buffer);
        for f in buffer.chars() {
            chars.push(f);
            origin.push(i);
        }
    }
    (chars, origin)
}

fn find_exact(haystack: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The best approximate occurrence of `needle` in `haystack`, widened to
/// whole words: (start, end, similarity), the similarity being 1 − edits /
/// the longer of passage and span. Linear in the haystack (see
/// `approximate`); `None` when nothing is found or `stop` interrupts.
fn find_fuzzy(
    haystack: &[char],
    needle: &[char],
    stop: &dyn Fn() -> bool,
) -> Option<(usize, usize, f64)> {
    let found = crate::approximate::locate(haystack, needle, stop)?;
    let mut start = found.start;
    while start > 0 && haystack[start - 1].is_alphanumeric() && haystack[start].is_alphanumeric() {
        start -= 1;
    }
    let mut end = found.end;
    while end < haystack.len()
        && haystack[end].is_alphanumeric()
        && haystack[end - 1].is_alphanumeric()
    {
        end += 1;
    }
    // Edits the widening added are counted against the match.
    let widened = (found.start - start) + (end - found.end);
    let edits = found.distance + widened;
    let longer = needle.len().max(end - start);
    let score = 1.0 - (edits.min(longer)) as f64 / longer as f64;
    Some((start, end, score))
}

impl Engine {
    /// Finds where `passage` occurs: exact matches first, then approximate
    /// ones at or above `min_score`, best first.
    ///
    /// Bounded by `Limits::quote_timeout_secs` (then `timeout`) and by
    /// `cancelled`, polled while scanning.
    pub fn find_quote(
        &self,
        request: &QuoteRequest,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Vec<QuoteMatch>> {
        let deadline = std::time::Instant::now()
            + std::time::Duration::from_secs(self.config.limits.quote_timeout_secs);
        let stop = || cancelled() || std::time::Instant::now() >= deadline;
        let passage = request.passage.trim();
        let length = passage.chars().count();
        if !(3..=5_000).contains(&length) {
            return Err(EngineError::invalid(format!(
                "a passage must be 3 to 5000 characters (got {length})"
            )));
        }
        if !(0.0..=1.0).contains(&request.min_score) {
            return Err(EngineError::invalid("min_score must lie in [0, 1]"));
        }
        let (needle, _) = normalise(passage);
        let candidates = self.quote_candidates(request, passage)?;
        let mut found = Vec::new();
        for id in candidates {
            if stop() {
                return Err(quote_stopped(&self.config.limits, cancelled()));
            }
            let document = self.document(&id)?;
            let (folded, origin) = normalise(&document.text);
            let (start, end, score, exact) = match find_exact(&folded, &needle) {
                Some(at) => (at, at + needle.len(), 1.0, true),
                None => match find_fuzzy(&folded, &needle, &stop) {
                    Some((s, e, score)) if score >= request.min_score => (s, e, score, false),
                    _ if stop() => return Err(quote_stopped(&self.config.limits, cancelled())),
                    _ => continue,
                },
            };
            let char_start = origin[start] as u64;
            let char_end = origin[end - 1] as u64 + 1;
            let chunks = self.chunks(&id, 0..u32::MAX)?;
            let at = |offset: u64| {
                chunks
                    .iter()
                    .find(|c| c.char_start <= offset && offset < c.char_end.max(c.char_start + 1))
            };
            let first = at(char_start);
            let last = at(char_end.saturating_sub(1)).or(first);
            let text: String = document
                .text
                .chars()
                .skip(char_start as usize)
                .take((char_end - char_start) as usize)
                .collect();
            found.push(QuoteMatch {
                document_id: document.id.to_string(),
                library: document.library.to_string(),
                citation: Citation::from_metadata(&document.metadata, document.title.as_deref()),
                source: document.source,
                title: document.title,
                char_start,
                char_end,
                page_start: first.and_then(|c| c.page_start),
                page_end: last.and_then(|c| c.page_end),
                section_path: first.map(|c| c.section_path.clone()).unwrap_or_default(),
                exact,
                score,
                text,
            });
        }
        found.sort_by(|a, b| b.score.total_cmp(&a.score));
        found.truncate(request.limit.max(1));
        Ok(found)
    }
}

/// The error of a quote lookup stopped by its time limit or a cancellation.
fn quote_stopped(limits: &folio_core::Limits, cancelled: bool) -> EngineError {
    EngineError::new(
        folio_core::ErrorCode::Timeout,
        if cancelled {
            "the quote lookup was cancelled".to_string()
        } else {
            format!(
                "the quote lookup took longer than {} s (quote_timeout_secs)",
                limits.quote_timeout_secs
            )
        },
    )
}

impl Engine {
    /// Documents worth scanning: the one asked for, or those whose chunks
    /// match the passage lexically (BM25) in the libraries asked for.
    fn quote_candidates(&self, request: &QuoteRequest, passage: &str) -> Result<Vec<String>> {
        if let Some(id) = &request.document_id {
            return Ok(vec![id.clone()]);
        }
        let libraries = if request.libraries.is_empty() {
            self.libraries()?.into_iter().map(|l| l.name).collect()
        } else {
            request.libraries.clone()
        };
        let query: String = passage.chars().take(1_000).collect();
        let mut ids: Vec<String> = Vec::new();
        for library in libraries {
            let hits = self.store.lexical(
                &library,
                &query,
                &folio_core::Filter::default(),
                20,
                self.config.bm25,
            )?;
            for hit in hits {
                let id = hit
                    .chunk
                    .as_str()
                    .split(':')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        ids.truncate(10);
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        normalise(s).0
    }

    #[test]
    fn normalising_folds_case_space_quotes_and_ligatures() {
        let (folded, origin) = normalise("The  \u{201c}eﬃcient\u{201d}\n**model**");
        assert_eq!(folded.iter().collect::<String>(), "the \"efficient\" model");
        assert_eq!(origin[0], 0);
        assert_eq!(*origin.last().unwrap(), 21);
    }

    #[test]
    fn exact_then_fuzzy() {
        let text = chars(
            "Dropout randomly removes units during training, which prevents co-adaptation of features.",
        );
        assert_eq!(find_exact(&text, &chars("REMOVES units")), Some(17));
        assert_eq!(find_exact(&text, &chars("removes neurons")), None);
        let (s, e, score) = find_fuzzy(
            &text,
            &chars("dropout randomly drops units during training"),
            &|| false,
        )
        .unwrap();
        let found: String = text[s..e].iter().collect();
        assert!(
            found.starts_with("dropout randomly") && found.ends_with("training"),
            "{found}"
        );
        assert!(score > 0.8 && score < 1.0, "{score}");
        let (_, _, poor) =
            find_fuzzy(&text, &chars("completely unrelated words here"), &|| false).unwrap();
        assert!(poor < 0.5);
    }

    #[test]
    fn references_match_by_doi_file_and_title() {
        let reference = |key: &str, doi: Option<&str>, title: &str, file: Option<&str>| Reference {
            citekey: Some(key.into()),
            doi: doi.map(str::to_string),
            title: Some(title.into()),
            files: file.map(|f| vec![f.to_string()]).unwrap_or_default(),
            ..Default::default()
        };
        let refs = vec![
            reference("a", Some("10.1/a"), "Alpha Paper Title", None),
            reference("b", None, "Beta", Some("beta-final.pdf")),
            reference("c", None, "Gamma: A Study of Things", None),
        ];
        let doc = |source: &str, title: &str, doi: Option<&str>| DocumentSummary {
            id: folio_core::DocumentId::parse("0123456789abcdef").unwrap(),
            library: LibraryName::new("l").unwrap(),
            source: source.into(),
            source_kind: folio_core::SourceKind::File,
            format: "pdf".into(),
            title: Some(title.into()),
            content_hash: String::new(),
            page_count: None,
            chunk_count: 1,
            char_count: 1,
            ingested_at: String::new(),
            metadata: doi
                .map(|d| [("doi".to_string(), Value::from(d))].into_iter().collect())
                .unwrap_or_default(),
        };
        let key = |d: &DocumentSummary| match_reference(d, &refs).and_then(|r| r.citekey.clone());
        assert_eq!(
            key(&doc("/x/1.pdf", "x", Some("https://doi.org/10.1/A"))).as_deref(),
            Some("a")
        );
        assert_eq!(
            key(&doc("/x/beta-final.pdf", "x", None)).as_deref(),
            Some("b")
        );
        assert_eq!(
            key(&doc("/x/c.pdf", "gamma - a study of things", None)).as_deref(),
            Some("c")
        );
        assert_eq!(
            key(&doc("/x/a.pdf", "Unrelated", None)).as_deref(),
            Some("a"),
            "citekey as stem"
        );
        assert_eq!(key(&doc("/x/z.pdf", "Unrelated", None)), None);
    }
}
