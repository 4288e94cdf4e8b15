//! Mail: a message (EML) or a mailbox (MBOX) through `mail-parser`. A
//! message's headers become metadata (from, to, cc, date, subject) and a
//! header paragraph that citations and questions can reach; its body
//! follows (the HTML alternative where there is one, with its tables). Each
//! attachment folio reads is a part of the message (a document of its own,
//! linked to the message); a mailbox is its messages, each a part.

use std::collections::HashSet;

use folio_core::{Block, BlockKind, Limits, Part, StructuredText};
use mail_parser::{Address, Message, MessageParser, MimeHeaders, PartType};
use serde_json::{Map, Value, json};

use crate::{ExtractError, Format, Input};

/// Messages nested as attachments are read this deep; deeper ones are
/// listed, not read.
const MAX_NESTED: usize = 3;

pub fn extract_message(bytes: &[u8], limits: &Limits) -> Result<StructuredText, ExtractError> {
    let message = MessageParser::default()
        .parse(bytes)
        .filter(|m| !m.headers().is_empty())
        .ok_or_else(|| ExtractError::malformed(Format::Eml, "no message headers"))?;
    message_text(&message, limits, 0)
}

pub fn extract_mailbox(bytes: &[u8], limits: &Limits) -> Result<StructuredText, ExtractError> {
    let parser = MessageParser::default();
    let mut parts = Vec::new();
    let mut keys = HashSet::new();
    let mut unread = Vec::new();
    let mut count = 0u64;
    for entry in mail_parser::mailbox::mbox::MessageIterator::new(bytes) {
        let entry = entry.map_err(|e| ExtractError::malformed(Format::Mbox, e))?;
        count += 1;
        if count > u64::from(limits.max_pages) {
            return Err(ExtractError::TooMany {
                what: "messages",
                limit: limits.max_pages.into(),
                actual: count,
            });
        }
        let Some(message) = parser.parse(entry.contents()) else {
            unread.push(json!({"message": count, "skipped": "no message headers"}));
            continue;
        };
        // A message is keyed by its Message-ID, which stays when messages
        // before it are deleted; else by its place in the mailbox.
        let key = message
            .message_id()
            .map(|id| format!("<{id}>"))
            .unwrap_or_else(|| format!("message {count}"));
        let key = unique(key, &mut keys);
        match message_text(&message, limits, 0) {
            Ok(mut text) => {
                text.title.get_or_insert_with(|| "(no subject)".into());
                parts.push(Part {
                    key,
                    format: Format::Eml.as_str().into(),
                    text,
                    original: None,
                });
            }
            Err(e) => unread.push(json!({"message": count, "skipped": e.to_string()})),
        }
    }
    if count == 0 {
        return Err(ExtractError::malformed(
            Format::Mbox,
            "no message (a mailbox starts with a \"From \" line)",
        ));
    }
    let mut metadata = Map::new();
    metadata.insert("messages".into(), count.into());
    if !unread.is_empty() {
        metadata.insert("unread_messages".into(), Value::Array(unread));
    }
    Ok(StructuredText {
        metadata,
        parts,
        ..Default::default()
    })
}

/// `key`, or `key (2)`, `key (3)`… when a part of the container has it.
pub(crate) fn unique(key: String, keys: &mut HashSet<String>) -> String {
    let mut candidate = key.clone();
    let mut n = 1;
    while !keys.insert(candidate.clone()) {
        n += 1;
        candidate = format!("{key} ({n})");
    }
    candidate
}

/// "Name <address>" of each address of a header.
fn addresses(address: Option<&Address<'_>>) -> Vec<String> {
    address
        .map(|a| {
            a.iter()
                .filter_map(|addr| match (addr.name(), addr.address()) {
                    (Some(name), Some(address)) => Some(format!("{name} <{address}>")),
                    (None, Some(address)) => Some(address.to_string()),
                    (Some(name), None) => Some(name.to_string()),
                    (None, None) => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The message's headers as metadata.
fn headers(message: &Message<'_>) -> Map<String, Value> {
    let mut metadata = Map::new();
    if let Some(subject) = message.subject() {
        metadata.insert("subject".into(), subject.into());
    }
    let from = addresses(message.from());
    if let Some(first) = message.from().and_then(|a| a.first()) {
        let author = first.name().or(first.address()).unwrap_or_default();
        if !author.is_empty() {
            metadata.insert("authors".into(), json!([author]));
        }
    }
    for (key, list) in [
        ("from", from),
        ("to", addresses(message.to())),
        ("cc", addresses(message.cc())),
    ] {
        if !list.is_empty() {
            metadata.insert(key.into(), json!(list));
        }
    }
    if let Some(date) = message.date() {
        metadata.insert("date".into(), date.to_rfc3339().into());
    }
    if let Some(id) = message.message_id() {
        metadata.insert("message_id".into(), id.into());
    }
    metadata
}

/// The header paragraph: who wrote to whom, when, about what.
fn header_block(message: &Message<'_>) -> Option<Block> {
    let mut lines = Vec::new();
    for (label, list) in [
        ("From", addresses(message.from())),
        ("To", addresses(message.to())),
        ("Cc", addresses(message.cc())),
    ] {
        if !list.is_empty() {
            lines.push(format!("{label}: {}", list.join(", ")));
        }
    }
    if let Some(date) = message.date() {
        lines.push(format!("Date: {}", date.to_rfc3339()));
    }
    if let Some(subject) = message.subject() {
        lines.push(format!("Subject: {subject}"));
    }
    (!lines.is_empty()).then(|| Block::new(BlockKind::Paragraph, lines.join("\n"), None))
}

/// One message: its header paragraph and body as blocks, its headers as
/// metadata, each attachment folio reads as a part (what each attachment
/// became is listed in the metadata).
fn message_text(
    message: &Message<'_>,
    limits: &Limits,
    depth: usize,
) -> Result<StructuredText, ExtractError> {
    let mut metadata = headers(message);
    let mut blocks: Vec<Block> = header_block(message).into_iter().collect();
    // The HTML body where there is one (its tables and headings), else the
    // text body: mail-parser lists text parts as the HTML body of a message
    // that has no HTML alternative.
    for part in message.html_bodies() {
        let body = match &part.body {
            PartType::Text(text) => crate::text::extract_plain(text),
            PartType::Html(html) => {
                crate::html::check_depth(html, Format::Eml)?;
                crate::html::extract(html)
            }
            _ => continue,
        };
        blocks.extend(body.blocks.into_iter().map(|mut b| {
            b.page = None;
            b
        }));
    }
    // What an attachment is cited with: the message it came with.
    let mut from_message = Map::new();
    for (key, as_key) in [
        ("subject", "message_subject"),
        ("from", "message_from"),
        ("date", "message_date"),
        ("message_id", "message_id"),
    ] {
        if let Some(value) = metadata.get(key) {
            from_message.insert(as_key.to_string(), value.clone());
        }
    }
    let mut parts = Vec::new();
    let mut keys = HashSet::new();
    let mut listed = Vec::new();
    for (index, part) in message.attachments().enumerate() {
        let name = part
            .attachment_name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("attachment {}", index + 1));
        let outcome: Result<(Format, StructuredText), String> = match &part.body {
            PartType::Message(inner) if depth < MAX_NESTED => {
                message_text(inner, limits, depth + 1)
                    .map(|text| (Format::Eml, text))
                    .map_err(|e| e.to_string())
            }
            PartType::Message(_) => Err("nested too deep".into()),
            PartType::Text(_) | PartType::Html(_) | PartType::Binary(_) => {
                let mime = part.content_type().map(|t| match t.subtype() {
                    Some(sub) => format!("{}/{sub}", t.ctype()),
                    None => t.ctype().to_string(),
                });
                let input = Input {
                    bytes: part.contents(),
                    name: Some(&name),
                    mime: mime.as_deref(),
                };
                match crate::extract(input, limits) {
                    Ok((Format::Image, _)) => Err("an image (not read in mail)".into()),
                    Ok(read) => Ok(read),
                    Err(e) => Err(e.to_string()),
                }
            }
            // Inline images and other inline binaries of the body.
            PartType::InlineBinary(_) | PartType::Multipart(_) => continue,
        };
        match outcome {
            Ok((format, mut text)) => {
                let key = unique(name.clone(), &mut keys);
                listed.push(json!({"name": name, "format": format.as_str(), "part": key}));
                text.title.get_or_insert_with(|| name.clone());
                text.metadata.insert("attachment".into(), name.into());
                for (k, v) in &from_message {
                    text.metadata.entry(k.clone()).or_insert(v.clone());
                }
                parts.push(Part {
                    key,
                    format: format.as_str().into(),
                    text,
                    original: (format == Format::Pdf).then(|| part.contents().to_vec()),
                });
            }
            Err(reason) => listed.push(json!({"name": name, "skipped": reason})),
        }
    }
    if !listed.is_empty() {
        metadata.insert("attachments".into(), Value::Array(listed));
    }
    Ok(StructuredText {
        title: message.subject().map(str::to_string),
        blocks,
        metadata,
        parts,
        ..Default::default()
    })
}

/// Whether text starts like a message: a run of header lines, one of them
/// a mail header.
pub(crate) fn looks_like_message(head: &[u8]) -> bool {
    let head = String::from_utf8_lossy(head);
    let mut mail_header = false;
    for line in head.lines().take(40) {
        if line.is_empty() {
            return mail_header;
        }
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((name, _)) = line.split_once(':') else {
            return false;
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return false;
        }
        mail_header |= matches!(
            name.to_ascii_lowercase().as_str(),
            "received"
                | "message-id"
                | "mime-version"
                | "return-path"
                | "delivered-to"
                | "x-mailer"
                | "in-reply-to"
                | "dkim-signature"
        );
    }
    mail_header
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = "From: Lea Brandt <lea@example.org>\r\n\
To: Team <team@example.org>, ops@example.org\r\n\
Subject: =?UTF-8?Q?Flansch_K9_=E2=80=93_Lieferung?=\r\n\
Date: Tue, 3 Mar 2026 09:15:00 +0100\r\n\
Message-ID: <k9@example.org>\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"b1\"\r\n\
\r\n\
--b1\r\n\
Content-Type: text/plain; charset=iso-8859-1\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\
\r\n\
Die Lieferung der Flansche kommt am Donnerstag; Gr=FC=DFe.\r\n\
--b1\r\n\
Content-Type: text/csv; name=\"counts.csv\"\r\n\
Content-Disposition: attachment; filename=\"counts.csv\"\r\n\
Content-Transfer-Encoding: base64\r\n\
\r\n\
UGFydCxDb3VudApGbGFuZ2UgSzksMTIK\r\n\
--b1\r\n\
Content-Type: application/octet-stream; name=\"blob.bin\"\r\n\
Content-Disposition: attachment; filename=\"blob.bin\"\r\n\
\r\n\
\x01\x02\x03\r\n\
--b1--\r\n";

    #[test]
    fn a_message_has_its_headers_body_and_readable_attachments_as_parts() {
        let text = extract_message(MESSAGE.as_bytes(), &Limits::default()).unwrap();
        assert_eq!(text.title.as_deref(), Some("Flansch K9 – Lieferung"));
        assert_eq!(
            text.metadata["to"],
            json!(["Team <team@example.org>", "ops@example.org"])
        );
        assert_eq!(text.metadata["authors"], json!(["Lea Brandt"]));
        assert_eq!(text.metadata["date"], "2026-03-03T09:15:00+01:00");
        let rendered: Vec<String> = text.blocks.iter().map(Block::render).collect();
        assert_eq!(
            rendered,
            [
                "From: Lea Brandt <lea@example.org>\nTo: Team <team@example.org>, ops@example.org\n\
                 Date: 2026-03-03T09:15:00+01:00\nSubject: Flansch K9 – Lieferung",
                "Die Lieferung der Flansche kommt am Donnerstag; Grüße.",
            ]
        );
        assert_eq!(
            text.metadata["attachments"],
            json!([
                {"name": "counts.csv", "format": "csv", "part": "counts.csv"},
                {"name": "blob.bin", "skipped": "unsupported format: files ending in .bin"},
            ])
        );
        assert_eq!(text.parts.len(), 1);
        let part = &text.parts[0];
        assert_eq!(
            (part.key.as_str(), part.format.as_str()),
            ("counts.csv", "csv")
        );
        assert_eq!(
            part.text.blocks[0].text,
            "| Part | Count |\n| --- | --- |\n| Flange K9 | 12 |"
        );
        // Cited with the message it came with.
        assert_eq!(
            part.text.metadata["message_subject"],
            "Flansch K9 – Lieferung"
        );
        assert_eq!(part.text.metadata["message_id"], "k9@example.org");
        assert_eq!(part.text.title.as_deref(), Some("counts.csv"));
    }

    #[test]
    fn a_mailbox_is_its_messages_keyed_by_message_id() {
        let mbox = format!(
            "From lea@example.org Tue Mar  3 09:15:00 2026\n{}\nFrom ops@example.org Wed Mar  4 10:00:00 2026\n\
             From: ops@example.org\nSubject: Re: Flansch\n\n>From the depot: received.\n\
             From ops@example.org Wed Mar  4 11:00:00 2026\nFrom: ops@example.org\n\nNo subject here.\n",
            MESSAGE.replace("\r\n", "\n")
        );
        let text = extract_mailbox(mbox.as_bytes(), &Limits::default()).unwrap();
        assert_eq!(text.metadata["messages"], 3);
        assert!(text.blocks.is_empty());
        let parts: Vec<(&str, Option<&str>)> = text
            .parts
            .iter()
            .map(|p| (p.key.as_str(), p.text.title.as_deref()))
            .collect();
        assert_eq!(
            parts,
            [
                ("<k9@example.org>", Some("Flansch K9 – Lieferung")),
                ("message 2", Some("Re: Flansch")),
                ("message 3", Some("(no subject)")),
            ]
        );
        // The first message's attachment is a part of that message.
        assert_eq!(text.parts[0].text.parts[0].key, "counts.csv");
        assert_eq!(
            text.parts[1].text.blocks.last().unwrap().text,
            "From the depot: received."
        );
        assert!(extract_mailbox(b"no mailbox here", &Limits::default()).is_err());
    }

    #[test]
    fn the_html_alternative_is_read_with_its_tables() {
        let message = "From: a@example.org\r\nSubject: Stock\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/alternative; boundary=\"b\"\r\n\r\n\
--b\r\nContent-Type: text/plain\r\n\r\nStock: see the table.\r\n\
--b\r\nContent-Type: text/html\r\n\r\n<p>Stock:</p><table><caption>Table 1: Stock</caption>\
<tr><th>Part</th><th>Count</th></tr><tr><td>Gasket</td><td>7</td></tr></table>\r\n--b--\r\n";
        let text = extract_message(message.as_bytes(), &Limits::default()).unwrap();
        let table = text
            .blocks
            .iter()
            .find(|b| b.kind == BlockKind::Table)
            .expect("the HTML body's table");
        assert_eq!(table.caption.as_deref(), Some("Table 1: Stock"));
        assert!(table.text.ends_with("| Gasket | 7 |"), "{}", table.text);
        assert!(!text.blocks.iter().any(|b| b.text.contains("see the table")));
    }

    #[test]
    fn messages_are_sniffed_by_their_headers() {
        assert!(looks_like_message(MESSAGE.as_bytes()));
        assert!(!looks_like_message(b"Subject: notes\n\nplain text"));
        assert!(!looks_like_message(b"Dear team,\nReceived: yes\n"));
    }
}
