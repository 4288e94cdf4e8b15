//! folio's servers: the MCP server (stdio and streamable HTTP, through the
//! official Rust SDK) with its toolsets, the plain HTTP upload endpoint, and
//! the owner/attach arrangement that lets several stdio clients share one
//! data directory.
//!
//! The crate is layered; each layer imports only those below it:
//!
//! - `options`: what a server is configured with (toolsets, limits).
//! - `ops`: the operations every tool is built on, done one way (run engine
//!   work for a call under its time limit, resolve a library, confine a
//!   path, ingest, search, delete). Plain Rust; no MCP and no dialect.
//! - `tool`: the tool machinery (definitions and strict schemas from Rust
//!   types, argument coercion and parsing, results, the registry).
//! - `toolsets`: one module per contract, each an adapter between its
//!   dialect (schemas, argument spelling, result shapes, error envelope)
//!   and `ops`. A toolset never imports another; a tool two dialects share
//!   lives in `toolsets::common`.
//! - `transport`: the MCP handler, stdio line screening, the owner and its
//!   attach protocol, streamable HTTP, the SSE transport and `/upload`.
//!
//! - `reference`: the tools and error codes as Markdown, for the
//!   generated reference.
//!
//! All the work happens in `folio-engine`.

mod ops;
mod options;
pub mod reference;
mod tool;
mod toolsets;
mod transport;

use std::sync::Arc;

use folio_engine::Engine;

pub use ops::Shared;
pub use options::{RegistryError, ServeOptions, Toolset, WatchSpec};
pub use tool::registry::Registry;
pub use transport::mcp::FolioServer;
pub use transport::{http, oauth, owner, signin};

impl Shared {
    /// The state of a server process with `options`; refused when its
    /// toolsets cannot be served together.
    pub fn new(engine: Arc<Engine>, options: ServeOptions) -> Result<Arc<Self>, RegistryError> {
        let registry = Registry::for_options(&options)?;
        let telemetry =
            ops::telemetry::Telemetry::new(options.audit_log.as_deref()).map_err(|e| {
                RegistryError::AuditLog {
                    path: options
                        .audit_log
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    reason: e.to_string(),
                }
            })?;
        Ok(Arc::new(Shared {
            engine,
            options,
            registry,
            telemetry: Arc::new(telemetry),
        }))
    }

    /// Starts the background work of the process that holds the engine:
    /// its folder watches (a read-only server watches nothing), and a
    /// read-ahead of what the libraries' first searches would read
    /// (`Engine::warm`), so that they answer as later ones do.
    pub fn start_background(&self) {
        if !self.options.read_only {
            ops::watch::start(self.engine.clone(), &self.options.watches);
        }
        let engine = self.engine.clone();
        let warming = std::thread::Builder::new()
            .name("folio-warm".into())
            .spawn(move || {
                if let Err(e) = engine.warm() {
                    tracing::warn!("warming the libraries' caches failed: {e}");
                }
            });
        if let Err(e) = warming {
            tracing::warn!("could not start warming the libraries' caches: {e}");
        }
    }
}
