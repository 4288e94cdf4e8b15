//! MCP Apps (the `io.modelcontextprotocol/ui` extension): for a client
//! that declares it, `search` and `get_document` name a view,
//! `ui://folio/viewer.html` (`app/viewer.html`), that its host shows beside
//! the chat: the hits with their citations, a passage opened in context
//! (the view calls `get_chunks` through the host), a document's text. A
//! client that does not declare the extension sees the tools and resources
//! as before.

use rmcp::model::{ClientCapabilities, JsonObject, Tool};
use serde_json::{Value, json};

/// The extension's identifier, in client and server capabilities.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML.
pub(crate) const MIME: &str = "text/html;profile=mcp-app";
/// folio's view.
pub(crate) const VIEWER: &str = "ui://folio/viewer.html";
/// The tools whose results the view shows.
const SHOWN: [&str; 2] = ["search", "get_document"];

const VIEWER_HTML: &str = include_str!("../../app/viewer.html");

/// Whether the client declared the extension, with folio's MIME type
/// among those it shows (a declaration without a list takes HTML).
pub(crate) fn supported(capabilities: Option<&ClientCapabilities>) -> bool {
    let Some(declared) = capabilities
        .and_then(|c| c.extensions.as_ref())
        .and_then(|e| e.get(EXTENSION))
    else {
        return false;
    };
    match declared.get("mimeTypes") {
        None => true,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(MIME)),
        Some(_) => false,
    }
}

/// The server's side of the negotiation: the extension, declared.
pub(crate) fn server_extension() -> (String, JsonObject) {
    (EXTENSION.to_string(), JsonObject::new())
}

/// `tool` as such a client lists it: a native tool the view shows names
/// the view in `_meta.ui`.
pub(crate) fn with_view(mut tool: Tool, native: bool) -> Tool {
    if native && SHOWN.contains(&tool.name.as_ref()) {
        let meta = tool.meta.get_or_insert_with(Default::default);
        meta.insert("ui".into(), json!({"resourceUri": VIEWER}));
    }
    tool
}

/// The view, as `resources/list` lists it.
pub(crate) fn listed() -> Value {
    json!({
        "uri": VIEWER,
        "name": "folio-viewer",
        "title": "folio results",
        "description": "Search hits with their citations, a passage in its context, a document's text",
        "mimeType": MIME,
    })
}

/// The view's contents, as `resources/read` answers them: self-contained
/// HTML reaching no other origin (so its CSP lists none).
pub(crate) fn contents() -> Value {
    json!({
        "contents": [{
            "uri": VIEWER,
            "mimeType": MIME,
            "text": VIEWER_HTML,
            "_meta": {"ui": {"csp": {}, "prefersBorder": true}},
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declaring(extension: Value) -> ClientCapabilities {
        serde_json::from_value(json!({"extensions": {EXTENSION: extension}})).unwrap()
    }

    #[test]
    fn the_extension_is_supported_only_when_declared_with_html() {
        assert!(!supported(None));
        assert!(!supported(Some(&ClientCapabilities::default())));
        assert!(supported(Some(&declaring(json!({"mimeTypes": [MIME]})))));
        assert!(supported(Some(&declaring(json!({})))));
        assert!(!supported(Some(&declaring(
            json!({"mimeTypes": ["text/plain"]})
        ))));
    }

    #[test]
    fn only_the_shown_native_tools_name_the_view() {
        let tool =
            |name: &'static str| Tool::new(name, "a tool", std::sync::Arc::new(JsonObject::new()));
        let search = with_view(tool("search"), true);
        assert_eq!(
            search.meta.unwrap().get("ui").unwrap()["resourceUri"],
            VIEWER
        );
        assert!(with_view(tool("ingest"), true).meta.is_none());
        assert!(with_view(tool("search"), false).meta.is_none());
    }
}
