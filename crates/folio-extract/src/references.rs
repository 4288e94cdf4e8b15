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

/// "Family, Given" (particles such as "van" kept with the family name, a
/// suffix after it), or the family name alone.
fn person_name(person: &biblatex::Person) -> String {
    let family = [person.prefix.trim(), person.name.trim()]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut name = family;
    for part in [person.suffix.trim(), person.given_name.trim()] {
        if !part.is_empty() {
            name = if name.is_empty() {
                part.to_string()
            } else {
                format!("{name}, {part}")
            };
        }
    }
    name
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

/// The text with entries written `@type(...)` rewritten as `@type{...}`:
/// BibTeX allows both delimiters, the parser only braces.
fn braced_entries(text: &str) -> String {
    let mut out: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < out.len() {
        if out[i] != '@' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < out.len() && out[j].is_ascii_alphabetic() {
            j += 1;
        }
        while j < out.len() && out[j].is_whitespace() {
            j += 1;
        }
        if j >= out.len() || out[j] != '(' {
            i = j.max(i + 1);
            continue;
        }
        out[j] = '{';
        // The matching parenthesis, outside braces and quotes.
        let (mut parens, mut braces, mut quoted) = (1usize, 0usize, false);
        let mut k = j + 1;
        while k < out.len() {
            match out[k] {
                '{' => braces += 1,
                '}' => braces = braces.saturating_sub(1),
                '"' if braces == 0 => quoted = !quoted,
                '(' if braces == 0 && !quoted => parens += 1,
                ')' if braces == 0 && !quoted => {
                    parens -= 1;
                    if parens == 0 {
                        out[k] = '}';
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        i = k;
    }
    out.into_iter().collect()
}

/// Deeper brace nesting than any bibliography needs.
const MAX_BRACE_DEPTH: usize = 256;

/// BibTeX and BibLaTeX through the `biblatex` crate: `@string` macros, `#`
/// concatenation, crossrefs, TeX accents and commands, braced names kept
/// whole, name particles.
fn parse_bibtex(text: &str) -> Result<Vec<Reference>, ExtractError> {
    use biblatex::ChunksExt;
    // The parser recurses into braces: bound their nesting first, so a
    // hostile file is refused instead of overflowing the stack.
    let mut depth = 0usize;
    for byte in text.bytes() {
        match byte {
            b'{' | b'(' => {
                depth += 1;
                if depth > MAX_BRACE_DEPTH {
                    return Err(malformed(format!(
                        "BibTeX: braces nested over {MAX_BRACE_DEPTH} deep"
                    )));
                }
            }
            b'}' | b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let text = braced_entries(text);
    let bibliography =
        biblatex::Bibliography::parse(&text).map_err(|e| malformed(format!("BibTeX: {e}")))?;
    Ok(bibliography
        .iter()
        .map(|entry| {
            let field = |name: &str| {
                entry
                    .get(name)
                    .map(|chunks| chunks.format_verbatim())
                    .map(|value| value.split_whitespace().collect::<Vec<_>>().join(" "))
                    .filter(|value| !value.is_empty())
            };
            let authors = entry
                .author()
                .unwrap_or_default()
                .iter()
                .filter(|p| !(p.name == "others" && p.given_name.is_empty()))
                .map(person_name)
                .filter(|n| !n.is_empty())
                .collect();
            Reference {
                citekey: (!entry.key.is_empty()).then(|| entry.key.clone()),
                doi: field("doi").as_deref().and_then(normalise_doi),
                title: field("title"),
                authors,
                year: field("year")
                    .as_deref()
                    .and_then(first_year)
                    .or_else(|| field("date").as_deref().and_then(first_year)),
                url: field("url"),
                container: field("journal")
                    .or_else(|| field("journaltitle"))
                    .or_else(|| field("booktitle")),
                files: field("file").as_deref().map(file_names).unwrap_or_default(),
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
        // Issue 16: the hand-written reader made this "The book".
        assert_eq!(refs[1].title.as_deref(), Some("The TeXbook"));
        assert_eq!(refs[1].year, Some(1984));
    }

    // Issue 16: `M\"{u}ller` kept its backslash-quote, "van" was taken for a
    // given name, and a braced corporate author was split at "and".
    #[test]
    fn bibtex_names_accents_particles_and_corporate_authors() {
        let refs = parse_references(
            br#"@book{b1,
  author = {M\"{u}ller, Hans and Ludwig van Beethoven and {Barnes and Noble} and de la Fontaine, Jean and Smith, Jr., John},
  title = {{\"U}ber die {\'E}cole},
  year = {2001}
}"#,
        )
        .unwrap();
        assert_eq!(
            refs[0].authors,
            vec![
                "Müller, Hans",
                "van Beethoven, Ludwig",
                "Barnes and Noble",
                "de la Fontaine, Jean",
                "Smith, Jr., John"
            ]
        );
        assert_eq!(refs[0].title.as_deref(), Some("Über die École"));
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
        let deep = format!(
            "@article{{x, title = {}{}}}",
            "{".repeat(100_000),
            "}".repeat(100_000)
        );
        assert!(parse_references(deep.as_bytes()).is_err());
        assert!(parse_references(b"[1, 2").is_err());
    }
}
