//! A small event walker over quick-xml for the Office and EPUB formats: local
//! element names, unescaped attributes and text, entity references resolved.

use quick_xml::Reader;
use quick_xml::XmlVersion;
use quick_xml::events::Event;

use crate::{ExtractError, Format};

/// One XML event, with namespace prefixes stripped from names.
pub(crate) enum Node<'a> {
    Open {
        name: &'a str,
        attrs: &'a [(String, String)],
    },
    Close {
        name: &'a str,
    },
    Text(&'a str),
}

/// The value of the attribute named `key`: the qualified name (`r:id`) when
/// it matches exactly, else the first attribute with that local name.
pub(crate) fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    let exact = attrs.iter().find(|(k, _)| k == key);
    let local = || {
        attrs
            .iter()
            .find(|(k, _)| k.rsplit(':').next() == Some(key))
    };
    exact.or_else(local).map(|(_, v)| v.as_str())
}

fn local(name: &str) -> String {
    name.rsplit(':').next().unwrap_or(name).to_string()
}

fn entity(name: &str) -> Option<char> {
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        _ => return None,
    })
}

/// Element nesting deeper than this is refused: no office or e-book file
/// nests anywhere near it, and the walkers' callers keep per-level state.
pub const MAX_DEPTH: usize = 1_000;

/// Calls `visit` for every element and text node of `xml`. Malformed XML is
/// an error of `format`; an empty element is reported as an open and a close.
pub(crate) fn walk(
    xml: &[u8],
    format: Format,
    mut visit: impl FnMut(Node<'_>),
) -> Result<(), ExtractError> {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    let mut attrs = Vec::new();
    let mut depth = 0usize;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            ExtractError::malformed(
                format,
                format!("XML error at byte {}: {e}", reader.buffer_position()),
            )
        })?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(ExtractError::malformed(
                            format,
                            format!("XML elements nested over {MAX_DEPTH} deep"),
                        ));
                    }
                }
                attrs.clear();
                for a in e.attributes().flatten() {
                    let value = a
                        .normalized_value(XmlVersion::Implicit1_0)
                        .map(|v| v.into_owned())
                        .unwrap_or_default();
                    attrs.push((a.key.as_ref().to_string(), value));
                }
                let name = local(e.name().as_ref());
                visit(Node::Open {
                    name: &name,
                    attrs: &attrs,
                });
                if matches!(event, Event::Empty(_)) {
                    visit(Node::Close { name: &name });
                }
            }
            Event::End(ref e) => {
                depth = depth.saturating_sub(1);
                visit(Node::Close {
                    name: &local(e.name().as_ref()),
                })
            }
            Event::Text(ref t) => visit(Node::Text(&t.xml10_content())),
            Event::CData(ref t) => visit(Node::Text(t)),
            Event::GeneralRef(ref r) => {
                let c = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c),
                    _ => entity(r),
                };
                if let Some(c) = c {
                    visit(Node::Text(c.encode_utf8(&mut [0; 4])));
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
        buf.clear();
    }
}
