//! Authorisation of MCP methods: one mapping from every method the server
//! answers (for `tools/call`, from the tool) to what its caller needs, used
//! by the MCP handler on every transport and by the HTTP guard (which in
//! OAuth mode answers a missing scope with a step-up challenge before the
//! message reaches MCP). The libraries a call may touch are checked where
//! its work names them (`ops::Touches`); this decides the scope.

use folio_engine::keys::{Principal, Scope};

use crate::tool::registry::Registry;
use crate::tool::scope;

/// What a method asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Only to be let in by the transport: the handshake, ping, the
    /// logging level of the session, and the tool listing (which shows a
    /// caller only the tools its scopes allow).
    Admitted,
    /// This scope.
    Scope(Scope),
    /// Nothing folio serves: refused whoever asks.
    Unserved,
}

/// What `method` needs; `tool` is the tool a `tools/call` names. A tool
/// the server does not expose needs nothing here: the handler answers it
/// as unknown.
pub fn need(method: &str, tool: Option<&str>, registry: &Registry) -> Need {
    match method {
        "initialize" | "ping" | "server/discover" | "logging/setLevel" | "tools/list" => {
            Need::Admitted
        }
        // A task is a background job: seen by a caller who may read its
        // library (checked with the job), stopped with the ingest scope.
        "tasks/get" => Need::Admitted,
        "tasks/cancel" => Need::Scope(Scope::Ingest),
        "tools/call" => match tool.and_then(|name| registry.find(name)) {
            Some((_, tool)) => Need::Scope(scope(tool)),
            None => Need::Admitted,
        },
        // Resources are documents and libraries: reading them is searching.
        "resources/list"
        | "resources/templates/list"
        | "resources/read"
        | "resources/subscribe"
        | "resources/unsubscribe"
        | "subscriptions/listen"
        | "prompts/list"
        | "prompts/get"
        | "completion/complete" => Need::Scope(Scope::Search),
        // Tasks, skills, resource directories and custom methods.
        _ => Need::Unserved,
    }
}

/// Why a caller may not do what it asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// It lacks this scope.
    Scope(Scope),
    /// folio does not serve the method.
    Unserved,
}

/// Whether `principal` (None: the local user or an open server) may make
/// a request that needs `need`.
pub fn permit(principal: Option<&Principal>, need: Need) -> Result<(), Denied> {
    match (need, principal) {
        (Need::Unserved, _) => Err(Denied::Unserved),
        (Need::Admitted, _) | (Need::Scope(_), None) => Ok(()),
        (Need::Scope(scope), Some(p)) if p.may(scope) => Ok(()),
        (Need::Scope(scope), Some(_)) => Err(Denied::Scope(scope)),
    }
}

/// The scopes the messages of one JSON-RPC body need (a batch needs each
/// of its messages'). Responses and notifications need nothing; a method
/// folio does not serve needs nothing here either, since the handler
/// refuses it whoever asks (and the batch's other messages still count).
pub fn body_needs(body: &serde_json::Value, registry: &Registry) -> Vec<Scope> {
    let messages = match body {
        serde_json::Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let mut scopes = Vec::new();
    for message in messages {
        // Only requests carry an id and a method; a notification has no id.
        let Some(method) = message.get("method").and_then(serde_json::Value::as_str) else {
            continue;
        };
        if message.get("id").is_none() {
            continue;
        }
        let tool = message
            .pointer("/params/name")
            .and_then(serde_json::Value::as_str);
        if let Need::Scope(scope) = need(method, tool, registry) {
            scopes.push(scope);
        }
    }
    scopes.sort();
    scopes.dedup();
    scopes
}
