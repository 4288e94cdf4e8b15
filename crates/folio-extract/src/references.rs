//! Reference lists: CSL-JSON (Zotero, Better BibTeX, Pandoc) and BibTeX /
//! BibLaTeX (Better BibTeX exports). Both become `Reference`s with the
//! fields folio cites: citekey, DOI, title, authors, year, URL, file names.

use folio_core::citation::first_year;
pub use folio_core::citation::normalise_doi;
use serde_json::{Map, Value};

use crate::ExtractError;

/// One bibliographic entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reference {
    pub citekey: Option<String>,
    pub doi: Option<String>,
    pub title: Option<String>,
    /// "Family, Given" or a literal name, in order.
    pub authors: Vec<String>,
    pub year: Option<i64>,
    pub url: Option<String>,
    pub container: Option<String>,
    /// Attachment file names (BibTeX `file` field), without folders.
    pub files: Vec<String>,
}

impl Reference {
    /// The citation fields as document metadata.
    pub fn metadata(&self) -> Map<String, Value> {
        let mut out = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                out.insert(key.to_string(), value);
            }
        };
        put("citekey", self.citekey.clone().map(Value::String));
        put("doi", self.doi.clone().map(Value::String));
        put("title", self.title.clone().map(Value::String));
        put(
            "authors",
            (!self.authors.is_empty()).then(|| Value::from(self.authors.clone())),
        );
        put("year", self.year.map(Value::from));
        put("url", self.url.clone().map(Value::String));
        put("container_title", self.container.clone().map(Value::String));
        out
    }
}

/// Parses a reference file: JSON (CSL) when it starts with `[` or `{`,
/// BibTeX otherwise.
pub fn parse_references(bytes: &[u8]) -> Result<Vec<Reference>, ExtractError> {
    let text = crate::text::decode(bytes)?;
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('[') || trimmed.starts_with('{') {
        parse_csl(trimmed)
    } else {
        parse_bibtex(trimmed)
    }
}

fn malformed(message: impl Into<String>) -> ExtractError {
    ExtractError::References(message.into())
}

fn csl_name(name: &Value) -> Option<String> {
    if let Some(literal) = name.get("literal").and_then(Value::as_str) {
        return Some(literal.to_string());
    }
    let family = name.get("family").and_then(Value::as_str)?;
    Some(match name.get("given").and_then(Value::as_str) {
        Some(given) => format!("{family}, {given}"),
        None => family.to_string(),
    })
}

fn parse_csl(text: &str) -> Result<Vec<Reference>, ExtractError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| malformed(format!("CSL-JSON: {e}")))?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(_) => vec![value],
        _ => return Err(malformed("CSL-JSON must be an array of items")),
    };
    Ok(items
        .iter()
        .filter(|item| item.is_object())
        .map(|item| {
            let text = |key: &str| {
                item.get(key)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            };
            let year = item
                .get("issued")
                .and_then(|i| i.get("date-parts"))
                .and_then(|p| p.get(0))
                .and_then(|p| p.get(0))
                .and_then(|y| y.as_i64().or_else(|| y.as_str()?.parse().ok()))
                .or_else(|| {
                    item.get("issued")
                        .and_then(|i| i.get("raw").or_else(|| i.get("literal")))
                        .and_then(Value::as_str)
                        .and_then(first_year)
                });
            Reference {
                citekey: text("citation-key").or_else(|| text("id")),
                doi: text("DOI").and_then(|d| normalise_doi(&d)),
                title: text("title"),
                authors: item
                    .get("author")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(csl_name).collect())
                    .unwrap_or_default(),
                year,
                url: text("URL"),
                container: text("container-title"),
                files: Vec::new(),
            }
        })
        .collect())
}

/// An entry: its type, its key and its fields (name, raw value).
type Entry = (String, String, Vec<(String, String)>);

/// A small BibTeX reader: entries, `@string` macros, `#` concatenation,
/// braced and quoted values, common LaTeX accents. `@comment` and
/// `@preamble` are skipped; a broken entry ends the file with an error.
struct Bib<'a> {
    text: &'a [u8],
    at: usize,
    strings: std::collections::HashMap<String, String>,
}

impl Bib<'_> {
    fn skip_space(&mut self) {
        while self.at < self.text.len() && (self.text[self.at] as char).is_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn word(&mut self) -> String {
        let start = self.at;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || b"_-:.+/'!?*&$<>|@".contains(&b) {
                self.at += 1;
            } else {
                break;
            }
        }
        String::from_utf8_lossy(&self.text[start..self.at]).into_owned()
    }

    fn expect(&mut self, byte: u8) -> Result<(), ExtractError> {
        self.skip_space();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(malformed(format!(
                "BibTeX: expected '{}' at byte {}",
                byte as char, self.at
            )))
        }
    }

    /// A `{...}` group with nested braces, returned without the outer pair.
    fn braced(&mut self) -> Result<String, ExtractError> {
        self.expect(b'{')?;
        let start = self.at;
        let mut depth = 1;
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(
                            String::from_utf8_lossy(&self.text[start..self.at - 1]).into_owned()
                        );
                    }
                }
                b'\\' => self.at += 1,
                _ => {}
            }
        }
        Err(malformed("BibTeX: unbalanced braces"))
    }

    fn quoted(&mut self) -> Result<String, ExtractError> {
        self.expect(b'"')?;
        let start = self.at;
        let mut depth = 0;
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                b'\\' => self.at += 1,
                b'"' if depth == 0 => {
                    return Ok(String::from_utf8_lossy(&self.text[start..self.at - 1]).into_owned());
                }
                _ => {}
            }
        }
        Err(malformed("BibTeX: unterminated quoted value"))
    }

    /// A field value: pieces joined by `#`.
    fn value(&mut self) -> Result<String, ExtractError> {
        let mut out = String::new();
        loop {
            self.skip_space();
            match self.peek() {
                Some(b'{') => out.push_str(&self.braced()?),
                Some(b'"') => out.push_str(&self.quoted()?),
                Some(_) => {
                    let word = self.word();
                    if word.is_empty() {
                        return Err(malformed(format!("BibTeX: no value at byte {}", self.at)));
                    }
                    let known = self.strings.get(&word.to_ascii_lowercase()).cloned();
                    out.push_str(&known.unwrap_or(word));
                }
                None => return Err(malformed("BibTeX: the file ends inside a value")),
            }
            self.skip_space();
            if self.peek() == Some(b'#') {
                self.at += 1;
            } else {
                return Ok(out);
            }
        }
    }

    fn entries(&mut self) -> Result<Vec<Entry>, ExtractError> {
        let mut out = Vec::new();
        loop {
            // Anything outside an entry is a comment.
            while self.peek().is_some_and(|b| b != b'@') {
                self.at += 1;
            }
            if self.peek().is_none() {
                return Ok(out);
            }
            self.at += 1;
            let kind = self.word().to_ascii_lowercase();
            self.skip_space();
            match kind.as_str() {
                "comment" => continue,
                "preamble" => {
                    if self.peek() == Some(b'{') {
                        self.braced()?;
                    }
                    continue;
                }
                _ => {}
            }
            let close = match self.peek() {
                Some(b'{') => b'}',
                Some(b'(') => b')',
                _ => continue,
            };
            self.at += 1;
            if kind == "string" {
                self.skip_space();
                let name = self.word().to_ascii_lowercase();
                self.expect(b'=')?;
                let value = self.value()?;
                self.strings.insert(name, value);
                self.expect(close)?;
                continue;
            }
            self.skip_space();
            let key = self.word();
            let mut fields = Vec::new();
            loop {
                self.skip_space();
                match self.peek() {
                    Some(b',') => {
                        self.at += 1;
                        continue;
                    }
                    Some(b) if b == close => {
                        self.at += 1;
                        break;
                    }
                    None => return Err(malformed(format!("BibTeX: entry {key} is not closed"))),
                    _ => {}
                }
                let name = self.word().to_ascii_lowercase();
                if name.is_empty() {
                    return Err(malformed(format!(
                        "BibTeX: entry {key}: expected a field name at byte {}",
                        self.at
                    )));
                }
                self.expect(b'=')?;
                fields.push((name, self.value()?));
            }
            out.push((kind, key, fields));
        }
    }
}

/// Plain text from a BibTeX value: accents resolved, braces and simple
/// commands removed, whitespace collapsed.
fn detex(value: &str) -> String {
    const ACCENTS: &[(&str, &str)] = &[
        ("\\\"a", "ä"),
        ("\\\"o", "ö"),
        ("\\\"u", "ü"),
        ("\\\"A", "Ä"),
        ("\\\"O", "Ö"),
        ("\\\"U", "Ü"),
        ("\\'e", "é"),
        ("\\'a", "á"),
        ("\\'i", "í"),
        ("\\'o", "ó"),
        ("\\'u", "ú"),
        ("\\'E", "É"),
        ("\\`e", "è"),
        ("\\`a", "à"),
        ("\\^e", "ê"),
        ("\\^o", "ô"),
        ("\\~n", "ñ"),
        ("\\c c", "ç"),
        ("\\cc", "ç"),
        ("\\ss", "ß"),
        ("\\o", "ø"),
        ("\\aa", "å"),
        ("\\&", "&"),
        ("\\%", "%"),
        ("\\_", "_"),
        ("--", "–"),
    ];
    let mut text = value.to_string();
    for (tex, plain) in ACCENTS {
        text = text
            .replace(&format!("{{{tex}}}"), plain)
            .replace(tex, plain);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '}' => {}
            '\\' => {
                // Drop a command name such as \textit; keep its argument.
                while chars.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                    chars.next();
                }
            }
            c => out.push(c),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn bib_names(value: &str) -> Vec<String> {
    value
        .split(" and ")
        .map(detex)
        .filter(|n| !n.is_empty() && n != "others")
        .map(|name| {
            if name.contains(',') {
                name
            } else {
                // "Given Family" -> "Family, Given".
                match name.rsplit_once(' ') {
                    Some((given, family)) => format!("{family}, {given}"),
                    None => name,
                }
            }
        })
        .collect()
}

fn file_names(value: &str) -> Vec<String> {
    // Zotero/JabRef: "Description:path/to/file.pdf:application/pdf;..."
    value
        .split(';')
        .filter_map(|part| {
            let path = part.split(':').find(|p| p.contains('.')).unwrap_or(part);
            let name = path.rsplit(['/', '\\']).next()?.trim();
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

fn parse_bibtex(text: &str) -> Result<Vec<Reference>, ExtractError> {
    let mut bib = Bib {
        text: text.as_bytes(),
        at: 0,
        strings: Default::default(),
    };
    Ok(bib
        .entries()?
        .into_iter()
        .map(|(_, key, fields)| {
            let get = |name: &str| {
                fields
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.as_str())
            };
            Reference {
                citekey: (!key.is_empty()).then(|| key.clone()),
                doi: get("doi").and_then(normalise_doi),
                title: get("title").map(detex).filter(|t| !t.is_empty()),
                authors: get("author").map(bib_names).unwrap_or_default(),
                year: get("year")
                    .and_then(first_year)
                    .or_else(|| get("date").and_then(first_year)),
                url: get("url").map(|u| u.trim().to_string()),
                container: get("journal")
                    .or_else(|| get("journaltitle"))
                    .or_else(|| get("booktitle"))
                    .map(detex),
                files: get("file").map(file_names).unwrap_or_default(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bibtex_entries_strings_and_accents() {
        let refs = parse_references(
            br#"% exported by Better BibTeX
@string{jml = "Journal of Machine Learning"}
@comment{ignored}
@article{vaswaniAttentionAllYou2017,
  title = {Attention Is {All} You Need},
  author = {Vaswani, Ashish and Noam Shazeer and M{\"u}ller, J{\"o}rg and others},
  journal = jml # " Research",
  year = 2017,
  doi = {https://doi.org/10.48550/ARXIV.1706.03762},
  file = {Full Text:files/12/Vaswani - 2017.pdf:application/pdf}
}
@book(knuth, title="The {\TeX}book", year="1984")
"#,
        )
        .unwrap();
        assert_eq!(refs.len(), 2);
        let a = &refs[0];
        assert_eq!(a.citekey.as_deref(), Some("vaswaniAttentionAllYou2017"));
        assert_eq!(a.title.as_deref(), Some("Attention Is All You Need"));
        assert_eq!(
            a.authors,
            vec!["Vaswani, Ashish", "Shazeer, Noam", "Müller, Jörg"]
        );
        assert_eq!(
            a.container.as_deref(),
            Some("Journal of Machine Learning Research")
        );
        assert_eq!(a.year, Some(2017));
        assert_eq!(a.doi.as_deref(), Some("10.48550/arxiv.1706.03762"));
        assert_eq!(a.files, vec!["Vaswani - 2017.pdf"]);
        assert_eq!(refs[1].title.as_deref(), Some("The book"));
        assert_eq!(refs[1].year, Some(1984));
    }

    #[test]
    fn csl_json_items() {
        let refs = parse_references(
            br#"[{"id": "k1", "citation-key": "smith2020", "type": "article-journal",
                 "title": "Graphs", "DOI": "10.1000/XYZ", "author": [{"family": "Smith", "given": "Ann"}, {"literal": "WHO"}],
                 "issued": {"date-parts": [["2020", 5]]}, "container-title": "J. Graphs"},
                {"id": "k2", "issued": {"raw": "circa 1999"}}]"#,
        )
        .unwrap();
        assert_eq!(refs[0].citekey.as_deref(), Some("smith2020"));
        assert_eq!(refs[0].authors, vec!["Smith, Ann", "WHO"]);
        assert_eq!(refs[0].year, Some(2020));
        assert_eq!(refs[0].doi.as_deref(), Some("10.1000/xyz"));
        assert_eq!(refs[1].citekey.as_deref(), Some("k2"));
        assert_eq!(refs[1].year, Some(1999));
    }

    #[test]
    fn broken_files_are_errors_not_panics() {
        for bad in [
            &b"@article{x, title = {unclosed"[..],
            b"[1, 2",
            b"@article{x, = 3}",
            b"\"str\"",
        ] {
            let _ = parse_references(bad);
        }
        assert!(parse_references(b"@article{x, title = {unclosed").is_err());
        assert!(parse_references(b"[1, 2").is_err());
    }
}
