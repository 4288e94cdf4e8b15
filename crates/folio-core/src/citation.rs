//! Normalising citation fields the same way whatever their source (a
//! reference list, Zotero, document metadata).

/// A DOI in canonical form: lowercase, without resolver prefix.
pub fn normalise_doi(doi: &str) -> Option<String> {
    let lower = doi.trim().to_ascii_lowercase();
    let start = lower.find("10.")?;
    let doi = lower[start..].trim_end_matches(['.', ',', ';']).to_string();
    doi.contains('/').then_some(doi)
}

/// The first run of exactly four digits in a free-text date ("2017-06-12",
/// "Spring 1999", "circa 1999").
pub fn first_year(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(3)).find_map(|i| {
        let run = text.get(i..i + 4)?;
        (run.bytes().all(|b| b.is_ascii_digit())
            && (i == 0 || !bytes[i - 1].is_ascii_digit())
            && bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit()))
        .then(|| run.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dois_and_years() {
        assert_eq!(
            normalise_doi("https://doi.org/10.1000/ABC.").as_deref(),
            Some("10.1000/abc")
        );
        assert_eq!(normalise_doi("no doi"), None);
        assert_eq!(first_year("2017-06-12 2017-06-12"), Some(2017));
        assert_eq!(first_year("Spring 1999"), Some(1999));
        assert_eq!(first_year("12345"), None);
        assert_eq!(first_year("n.d."), None);
    }
}
