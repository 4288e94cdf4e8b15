//! How clients reach the toolsets: the MCP handler (`mcp`), stdio line
//! screening (`screen`), the owner of a data directory and its attach
//! protocol (`owner`), streamable HTTP with its guard (`http`), the older
//! SSE transport (`sse`) and the mcpvectordb contract's `/upload`.

pub mod http;
pub mod mcp;
pub mod owner;
mod screen;
mod sse;
mod upload;
