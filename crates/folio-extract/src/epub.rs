//! EPUB: the package's spine in reading order, each XHTML part converted like
//! HTML; Dublin Core title and creators become metadata.

use std::collections::HashMap;

use folio_core::{Limits, StructuredText};

use crate::container::Container;
use crate::xml::{Node, attr, walk};
use crate::{ExtractError, Format, html, markdown};

/// `href` (its fragment left out) read from the file `base`.
fn resolve(base: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or(href);
    let folder = base.rsplit_once('/').map_or("", |(folder, _)| folder);
    crate::container::resolve(folder, href)
}

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<StructuredText, ExtractError> {
    let mut container = Container::open(bytes, Format::Epub, limits)?;
    let manifest_xml = container.require("META-INF/container.xml")?;
    let mut package_path = None;
    walk(&manifest_xml, Format::Epub, |node| {
        if let Node::Open {
            name: "rootfile",
            attrs,
        } = node
        {
            package_path = package_path
                .take()
                .or_else(|| attr(attrs, "full-path").map(str::to_string));
        }
    })?;
    let package_path = package_path
        .ok_or_else(|| ExtractError::malformed(Format::Epub, "no rootfile in container.xml"))?;
    let package = container.require(&package_path)?;

    let mut items = HashMap::new();
    let mut spine = Vec::new();
    let mut metadata = serde_json::Map::new();
    let mut authors = Vec::new();
    let mut field: Option<String> = None;
    let mut text = String::new();
    walk(&package, Format::Epub, |node| match node {
        Node::Open {
            name: "item",
            attrs,
        } => {
            if let (Some(id), Some(href)) = (attr(attrs, "id"), attr(attrs, "href")) {
                items.insert(id.to_string(), resolve(&package_path, href));
            }
        }
        Node::Open {
            name: "itemref",
            attrs,
        } => spine.extend(attr(attrs, "idref").map(str::to_string)),
        Node::Open {
            name: name @ ("title" | "creator" | "language" | "date" | "identifier"),
            ..
        } => {
            field = Some(name.to_string());
            text.clear();
        }
        Node::Text(t) if field.is_some() => text.push_str(t),
        Node::Close { name } if field.as_deref() == Some(name) => {
            let value = text.trim().to_string();
            if !value.is_empty() {
                if name == "creator" {
                    authors.push(value);
                } else {
                    metadata.entry(name.to_string()).or_insert(value.into());
                }
            }
            field = None;
        }
        _ => {}
    })?;
    if !authors.is_empty() {
        metadata.insert("authors".into(), authors.into());
    }
    let mut blocks = Vec::new();
    let mut refs = Vec::new();
    for id in &spine {
        let Some(path) = items.get(id) else { continue };
        let Some(part) = container.read(path)? else {
            continue;
        };
        let part = String::from_utf8_lossy(&part);
        html::check_depth(&part, Format::Epub)?;
        let (chapter, images) = markdown::blocks_and_images(&html::to_markdown(&part), None);
        refs.extend(
            images
                .into_iter()
                .filter(|(src, _)| !src.contains("://") && !src.starts_with("data:"))
                .map(|(src, at)| (resolve(path, &src), blocks.len() + at, None)),
        );
        blocks.extend(chapter);
    }
    let figures = container.figures(refs, limits)?;
    let title = metadata
        .remove("title")
        .and_then(|v| v.as_str().map(str::to_string));
    Ok(StructuredText {
        title,
        blocks,
        metadata,
        page_count: None,
        figures,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn resolves_relative_hrefs() {
        assert_eq!(
            super::resolve("OEBPS/content.opf", "text/ch1.xhtml"),
            "OEBPS/text/ch1.xhtml"
        );
        assert_eq!(
            super::resolve("OEBPS/content.opf", "../x.xhtml#a"),
            "x.xhtml"
        );
        assert_eq!(super::resolve("content.opf", "ch1.xhtml"), "ch1.xhtml");
    }
}
