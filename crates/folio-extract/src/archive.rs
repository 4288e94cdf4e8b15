//! ZIP and TAR archives (a gzip-compressed TAR too): each member folio
//! reads becomes a part, a document of its own under the archive's path
//! (`notes.zip#2024/minutes.pdf`); the archive itself has no text.
//!
//! Bounded as every container is: the members' bytes together stay within
//! the decompression budget, and a container inside (an archive, a DOCX) is
//! read within what is left of it when its turn comes; a member compressed
//! over the ratio cap is a bomb,
//! an archive lists at most `max_pages` members, and archives nest at most
//! `MAX_NESTED` deep (a ZIP holding itself stops there). Hidden members,
//! macOS resource forks, links and images (read when named, as in a folder
//! walk) are left out; what each member became is listed in the
//! archive's metadata (`members`).

use std::cell::Cell;
use std::collections::HashSet;
use std::io::Read;

use folio_core::{Limits, Part, StructuredText};
use serde_json::{Value, json};

use crate::container::Container;
use crate::{ExtractError, Format, Input};

/// How deep archives nest: an archive in an archive is read, one more level
/// is listed as skipped.
const MAX_NESTED: usize = 2;

/// Members under this size are never ratio-checked (a gzip header alone
/// compresses nothing).
const RATIO_FLOOR: u64 = 1 << 20;

thread_local! {
    /// Archives being read on this thread, outermost first.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// One level of archive nesting, left when dropped (on an error or a
/// caught panic too).
struct Level;

impl Level {
    fn enter() -> Option<Level> {
        DEPTH.with(|depth| {
            (depth.get() < MAX_NESTED).then(|| {
                depth.set(depth.get() + 1);
                Level
            })
        })
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        DEPTH.with(|depth| depth.set(depth.get().saturating_sub(1)));
    }
}

/// The members of a ZIP or TAR archive as parts.
pub(crate) fn extract(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
) -> Result<StructuredText, ExtractError> {
    let Some(_level) = Level::enter() else {
        return Err(ExtractError::malformed(
            format,
            format!("archives nested more than {MAX_NESTED} deep"),
        ));
    };
    let mut reader = Members::new(format, limits);
    match format {
        Format::Zip => {
            let mut container = Container::open(bytes, format, limits)?;
            let names = container.names();
            for name in names {
                if name.ends_with('/') || !reader.wanted(&name)? {
                    continue;
                }
                let mut inner = limits.clone();
                inner.max_decompressed_bytes = container.budget();
                match container.read(&name)? {
                    Some(member) => reader.read(&name, &member, &inner),
                    None => continue,
                }
            }
        }
        _ => {
            let tar = ungzip(bytes, limits)?;
            let mut archive = tar::Archive::new(&tar[..]);
            let entries = archive
                .entries()
                .map_err(|e| ExtractError::malformed(format, e))?;
            let mut budget = limits.max_decompressed_bytes;
            for entry in entries {
                let mut entry = entry.map_err(|e| ExtractError::malformed(format, e))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let name = entry
                    .path()
                    .map_err(|e| ExtractError::malformed(format, e))?
                    .to_string_lossy()
                    .into_owned();
                if !reader.wanted(&name)? {
                    continue;
                }
                let size = entry.size();
                if size > budget {
                    return Err(ExtractError::Bomb {
                        what: format!("{format} member {name}"),
                        limit: limits.max_decompressed_bytes,
                    });
                }
                // The header's size may lie: the archive's bytes bound it.
                let mut member = Vec::with_capacity((size as usize).min(tar.len()));
                (&mut entry)
                    .take(size)
                    .read_to_end(&mut member)
                    .map_err(|e| ExtractError::malformed(format, format!("{name}: {e}")))?;
                budget -= member.len() as u64;
                let mut inner = limits.clone();
                inner.max_decompressed_bytes = budget;
                reader.read(&name, &member, &inner);
            }
        }
    }
    Ok(reader.finish())
}

/// A TAR's bytes: a gzip-compressed one inflated within the decompression
/// budget and ratio cap.
fn ungzip<'a>(
    bytes: &'a [u8],
    limits: &Limits,
) -> Result<std::borrow::Cow<'a, [u8]>, ExtractError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes.into());
    }
    let limit = limits.max_decompressed_bytes;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| ExtractError::malformed(Format::Tar, e))?;
    let actual = out.len() as u64;
    let ratio = actual / (bytes.len() as u64).max(1);
    if actual > limit || (actual > RATIO_FLOOR && ratio > limits.max_compression_ratio) {
        return Err(ExtractError::Bomb {
            what: "tar.gz".into(),
            limit,
        });
    }
    Ok(out.into())
}

/// The parts read so far and what became of every member.
struct Members {
    format: Format,
    max: u64,
    count: u64,
    parts: Vec<Part>,
    keys: HashSet<String>,
    listed: Vec<Value>,
}

impl Members {
    fn new(format: Format, limits: &Limits) -> Self {
        Members {
            format,
            max: limits.max_pages.into(),
            count: 0,
            parts: Vec::new(),
            keys: HashSet::new(),
            listed: Vec::new(),
        }
    }

    /// Whether a member is read: not hidden, not a resource fork. Counts it
    /// against the cap.
    fn wanted(&mut self, name: &str) -> Result<bool, ExtractError> {
        let hidden = name
            .split(['/', '\\'])
            .any(|part| part.starts_with('.') || part == "__MACOSX");
        if hidden {
            return Ok(false);
        }
        self.count += 1;
        if self.count > self.max {
            return Err(ExtractError::TooMany {
                what: "archive members",
                limit: self.max,
                actual: self.count,
            });
        }
        Ok(true)
    }

    /// Extracts one member as the file it is; a member folio cannot read
    /// is listed with the reason.
    fn read(&mut self, name: &str, bytes: &[u8], limits: &Limits) {
        let name = name.trim_start_matches("./").trim_start_matches('/');
        let input = Input {
            bytes,
            name: Some(name),
            mime: None,
        };
        let outcome = match crate::extract(input, limits) {
            Ok((Format::Image, _)) => Err("an image (read when named)".to_string()),
            Ok(read) => Ok(read),
            Err(e) => Err(e.to_string()),
        };
        match outcome {
            Ok((format, mut text)) => {
                let key = crate::mail::unique(name.to_string(), &mut self.keys);
                let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
                text.title.get_or_insert_with(|| file.to_string());
                text.metadata
                    .insert("archive_member".into(), Value::String(name.to_string()));
                self.listed
                    .push(json!({"name": name, "format": format.as_str(), "part": key}));
                self.parts.push(Part {
                    key,
                    format: format.as_str().into(),
                    text,
                    original: (format == Format::Pdf).then(|| bytes.to_vec()),
                });
            }
            Err(reason) => self.listed.push(json!({"name": name, "skipped": reason})),
        }
    }

    fn finish(self) -> StructuredText {
        let mut text = StructuredText {
            parts: self.parts,
            ..Default::default()
        };
        text.metadata
            .insert("archive".into(), Value::String(self.format.as_str().into()));
        if !self.listed.is_empty() {
            text.metadata
                .insert("members".into(), Value::Array(self.listed));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use folio_testkit::zip;

    use super::*;

    fn tar(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, bytes) in members {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, name, *bytes).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn read(bytes: &[u8], name: &str) -> Result<(Format, StructuredText), ExtractError> {
        crate::extract(
            Input {
                bytes,
                name: Some(name),
                mime: None,
            },
            &Limits::default(),
        )
    }

    fn keys(text: &StructuredText) -> Vec<&str> {
        text.parts.iter().map(|p| p.key.as_str()).collect()
    }

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn members() -> Vec<(&'static str, &'static [u8])> {
        vec![
            (
                "notes/minutes.md",
                b"# Minutes\n\nThe board met on Tuesday.",
            ),
            ("notes/.draft.md", b"# Hidden draft"),
            ("__MACOSX/notes/._minutes.md", b"resource fork"),
            ("prices.csv", b"Item,Price\nBolt M8,0.12\n"),
            ("photo.png", PNG),
            ("broken.pdf", b"%PDF-1.7 truncated"),
        ]
    }

    // Issue 50: every member folio reads is a part keyed by its path, with
    // its own format and title; hidden members and resource forks are left
    // out; an image or a member that fails is listed with the reason.
    #[test]
    fn an_archive_is_its_members_as_parts() {
        let tarred = tar(&members());
        for (bytes, name, format) in [
            (zip(&members()), "notes.zip", Format::Zip),
            (tarred.clone(), "notes.tar", Format::Tar),
            (gzip(&tarred), "notes.tar.gz", Format::Tar),
            (gzip(&tarred), "notes.tgz", Format::Tar),
        ] {
            let (found, text) = read(&bytes, name).unwrap();
            assert_eq!(found, format, "{name}");
            assert!(text.blocks.is_empty(), "{name}");
            assert_eq!(keys(&text), ["notes/minutes.md", "prices.csv"], "{name}");
            let minutes = &text.parts[0];
            assert_eq!(minutes.format, "markdown");
            assert_eq!(minutes.text.title.as_deref(), Some("Minutes"));
            assert_eq!(minutes.text.metadata["archive_member"], "notes/minutes.md");
            assert_eq!(text.parts[1].format, "csv");
            assert_eq!(text.parts[1].text.title.as_deref(), Some("prices.csv"));
            let listed = text.metadata["members"].as_array().unwrap();
            let skipped: Vec<&str> = listed
                .iter()
                .filter(|m| m.get("skipped").is_some())
                .map(|m| m["name"].as_str().unwrap())
                .collect();
            assert_eq!(skipped, ["photo.png", "broken.pdf"], "{name}");
        }
        // Without a name: a zip of plain files, a POSIX tar.
        let unnamed = |bytes: &[u8]| {
            crate::detect(Input {
                bytes,
                name: None,
                mime: None,
            })
        };
        assert_eq!(unnamed(&zip(&members())).unwrap(), Format::Zip);
        assert_eq!(unnamed(&tarred).unwrap(), Format::Tar);
        assert!(matches!(
            read(b"not a zip", "notes.zip"),
            Err(ExtractError::Malformed { .. })
        ));
        assert!(matches!(
            read(&tarred[..700], "cut.tar"),
            Err(ExtractError::Malformed { .. }) | Err(ExtractError::NoText { .. })
        ));
    }

    // An archive in an archive is read; one level more is listed as
    // skipped, so an archive holding itself ends there.
    #[test]
    fn archives_nest_two_deep() {
        let inner = zip(&[("deep.md", b"# Deep\n\nThe innermost note.")]);
        let middle = zip(&[("inner.zip", &inner), ("mid.md", b"# Mid\n\nA note.")]);
        let (_, text) = read(&middle, "middle.zip").unwrap();
        assert_eq!(keys(&text), ["inner.zip", "mid.md"]);
        assert_eq!(keys(&text.parts[0].text), ["deep.md"]);
        let outer = zip(&[("middle.zip", &middle)]);
        let (_, text) = read(&outer, "outer.zip").unwrap();
        let middle = &text.parts[0].text;
        assert_eq!(keys(middle), ["mid.md"]);
        let reason = middle.metadata["members"][0]["skipped"].as_str().unwrap();
        assert!(reason.contains("nested more than 2"), "{reason}");
        assert_eq!(DEPTH.with(Cell::get), 0);
    }

    // Bounded like every container: members past the cap refuse the
    // archive; a bomb (over the budget or the ratio) is refused, nested
    // or compressed as a whole.
    #[test]
    fn archives_are_bounded() {
        let limits = Limits {
            max_pages: 2,
            ..Limits::default()
        };
        let three = zip(&[("a.md", b"a a"), ("b.md", b"b b"), ("c.md", b"c c")]);
        let refused = crate::extract_as(Format::Zip, &three, &limits).unwrap_err();
        assert!(
            matches!(refused, ExtractError::TooMany { actual: 3, .. }),
            "{refused}"
        );

        let zeros = vec![b'a'; 8 << 20];
        let bomb = zip(&[("zeros.txt", &zeros)]);
        let refused = crate::extract_as(Format::Zip, &bomb, &Limits::default()).unwrap_err();
        assert!(matches!(refused, ExtractError::Bomb { .. }), "{refused}");
        let small = Limits {
            max_decompressed_bytes: 1 << 20,
            max_compression_ratio: 1_000_000,
            ..Limits::default()
        };
        let nested = zip(&[("inner.zip", &zip(&[("big.txt", &zeros[..2 << 20])]))]);
        let refused = crate::extract_as(Format::Zip, &nested, &small);
        match refused {
            Ok(text) => {
                let reason = text.metadata["members"][0]["skipped"].as_str().unwrap();
                assert!(reason.contains("decompression"), "{reason}");
            }
            Err(e) => panic!("the outer archive is read: {e}"),
        }
        let tarred = gzip(&tar(&[("zeros.txt", &zeros)]));
        let refused = crate::extract_as(Format::Tar, &tarred, &Limits::default()).unwrap_err();
        assert!(matches!(refused, ExtractError::Bomb { .. }), "{refused}");
    }
}
