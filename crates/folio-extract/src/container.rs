//! Zip containers (DOCX, PPTX, EPUB, ODT, ODP, and the declared sizes of
//! the zip spreadsheets) read under a decompression budget, so a zip bomb
//! is refused instead of filling memory.

use std::io::{Cursor, Read};

use std::collections::HashMap;

use folio_core::{Figure, Limits};
use zip::ZipArchive;

use crate::{ExtractError, Format};

/// A zip archive whose members are read against a shared byte budget and a
/// per-member compression-ratio cap.
pub(crate) struct Container<'a> {
    archive: ZipArchive<Cursor<&'a [u8]>>,
    format: Format,
    budget: u64,
    limit: u64,
    max_ratio: u64,
}

/// `target` read from `folder`: "../media/a.png" from "ppt/slides" is
/// "ppt/media/a.png"; "/word/media/a.png" is from the archive's root.
pub(crate) fn resolve(folder: &str, target: &str) -> String {
    let mut path: Vec<&str> = match target.strip_prefix('/') {
        Some(_) => Vec::new(),
        None => folder.split('/').filter(|s| !s.is_empty()).collect(),
    };
    for segment in target.trim_start_matches('/').split('/') {
        match segment {
            "" | "." => {}
            ".." => drop(path.pop()),
            s => path.push(s),
        }
    }
    path.join("/")
}

/// Members smaller than this are never ratio-checked: tiny XML compresses well.
const RATIO_FLOOR: u64 = 1 << 20;

impl<'a> Container<'a> {
    pub fn open(bytes: &'a [u8], format: Format, limits: &Limits) -> Result<Self, ExtractError> {
        let archive =
            ZipArchive::new(Cursor::new(bytes)).map_err(|e| ExtractError::malformed(format, e))?;
        Ok(Container {
            archive,
            format,
            budget: limits.max_decompressed_bytes,
            limit: limits.max_decompressed_bytes,
            max_ratio: limits.max_compression_ratio,
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.archive
            .file_names()
            .filter_map(|n| n.ok().map(|n| n.into_owned()))
            .collect()
    }

    /// Whether the archive has a member of this name.
    pub fn has(&self, name: &str) -> bool {
        self.archive.index_for_name(name).is_some()
    }

    /// The bytes members may still inflate to.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Reads a member; `Ok(None)` when the archive has no such member.
    pub fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, ExtractError> {
        let mut file = match self.archive.by_name(name) {
            Ok(file) => file,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(ExtractError::malformed(self.format, format!("{name}: {e}"))),
        };
        let declared = file.size();
        let compressed = file.compressed_size().max(1);
        let bomb = || ExtractError::Bomb {
            what: format!("{} member {name}", self.format),
            limit: self.limit,
        };
        if declared > self.budget
            || (declared > RATIO_FLOOR && declared / compressed > self.max_ratio)
        {
            return Err(bomb());
        }
        let mut out = Vec::with_capacity(declared.min(self.budget) as usize);
        // The declared size can lie: cap the actual read too.
        (&mut file)
            .take(self.budget + 1)
            .read_to_end(&mut out)
            .map_err(|e| ExtractError::malformed(self.format, format!("{name}: {e}")))?;
        let actual = out.len() as u64;
        if actual > self.budget || (actual > RATIO_FLOOR && actual / compressed > self.max_ratio) {
            return Err(bomb());
        }
        self.budget -= actual;
        Ok(Some(out))
    }

    /// Refuses the archive when its members' declared sizes, together or
    /// one by one, are over the budget or the ratio cap: for archives that
    /// another crate inflates (spreadsheets). A member whose header lies
    /// about its size is bounded by the extraction worker's memory cap.
    pub fn check_declared_sizes(&mut self) -> Result<(), ExtractError> {
        let mut total = 0u64;
        for index in 0..self.archive.len() {
            let file = self
                .archive
                .by_index_raw(index)
                .map_err(|e| ExtractError::malformed(self.format, e))?;
            let declared = file.size();
            let compressed = file.compressed_size().max(1);
            total = total.saturating_add(declared);
            if total > self.limit
                || (declared > RATIO_FLOOR && declared / compressed > self.max_ratio)
            {
                return Err(ExtractError::Bomb {
                    what: format!("{} member {}", self.format, file.name().unwrap_or_default()),
                    limit: self.limit,
                });
            }
        }
        Ok(())
    }

    /// The figures of the members `refs` name (member, blocks before it,
    /// page), in order: raster images only (PNG, JPEG, TIFF; a vector
    /// drawing has its text in the XML already), read as far as the
    /// [`Figures`](crate::figures::Figures) caps allow and counted past
    /// them. A member the archive lacks, or that is not a raster image, is
    /// passed over.
    pub fn figures(
        &mut self,
        refs: Vec<(String, usize, Option<u32>)>,
        limits: &Limits,
    ) -> Result<Vec<Figure>, ExtractError> {
        let mut figures = crate::figures::Figures::new(limits);
        for (member, at, page) in refs {
            if !figures.wants_image() {
                if crate::figures::is_raster_name(&member) && self.has(&member) {
                    figures.push(None, at, page);
                }
                continue;
            }
            let Some(image) = self.read(&member)? else {
                continue;
            };
            if crate::format::is_image(&image) {
                figures.push(Some(image), at, page);
            }
        }
        Ok(figures.into_vec())
    }

    /// The relationships of `part` ("word/document.xml"): each id with the
    /// member it targets, resolved against the part's folder; external
    /// targets (links) left out.
    pub fn relationships(&mut self, part: &str) -> Result<HashMap<String, String>, ExtractError> {
        let (folder, file) = part.rsplit_once('/').unwrap_or(("", part));
        let rels = if folder.is_empty() {
            format!("_rels/{file}.rels")
        } else {
            format!("{folder}/_rels/{file}.rels")
        };
        let mut targets = HashMap::new();
        let Some(xml) = self.read(&rels)? else {
            return Ok(targets);
        };
        crate::xml::walk(&xml, self.format, |node| {
            if let crate::xml::Node::Open {
                name: "Relationship",
                attrs,
            } = node
                && let (Some(id), Some(target)) = (
                    crate::xml::attr(attrs, "Id"),
                    crate::xml::attr(attrs, "Target"),
                )
                && crate::xml::attr(attrs, "TargetMode") != Some("External")
            {
                targets.insert(id.to_string(), resolve(folder, target));
            }
        })?;
        Ok(targets)
    }

    /// Reads a member the format requires.
    pub fn require(&mut self, name: &str) -> Result<Vec<u8>, ExtractError> {
        self.read(name)?
            .ok_or_else(|| ExtractError::malformed(self.format, format!("missing {name}")))
    }
}

/// Dublin Core properties (`docProps/core.xml`) as metadata: title, authors,
/// created date, subject, description, keywords, language. Shared by DOCX
/// and PPTX.
pub(crate) fn core_properties(
    container: &mut Container<'_>,
) -> Result<serde_json::Map<String, serde_json::Value>, ExtractError> {
    let mut metadata = serde_json::Map::new();
    let Some(xml) = container.read("docProps/core.xml")? else {
        return Ok(metadata);
    };
    let mut current: Option<String> = None;
    let mut text = String::new();
    crate::xml::walk(&xml, container.format, |node| match node {
        crate::xml::Node::Open { name, .. } => {
            current = Some(name.to_string());
            text.clear();
        }
        crate::xml::Node::Text(t) => text.push_str(t),
        crate::xml::Node::Close { name } => {
            if current.as_deref() == Some(name) && !text.trim().is_empty() {
                let value = text.trim().to_string();
                match name {
                    "title" => drop(metadata.insert("title".into(), value.into())),
                    "creator" => {
                        drop(metadata.insert("authors".into(), serde_json::json!([value])))
                    }
                    "created" => drop(metadata.insert("date".into(), value.into())),
                    "subject" | "description" | "keywords" | "language" => {
                        drop(metadata.insert(name.into(), value.into()))
                    }
                    _ => {}
                }
            }
            current = None;
        }
    })?;
    Ok(metadata)
}
