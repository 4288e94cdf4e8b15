//! Where folio keeps what it installs and makes for itself (models, the
//! ONNX Runtime, mapped graphs, data by default).

use std::path::PathBuf;

fn env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `$FOLIO_HOME`, else `$XDG_DATA_HOME/folio`, else
/// `$HOME/.local/share/folio`; `None` when none of the three is set.
pub fn folio_home() -> Option<PathBuf> {
    env("FOLIO_HOME")
        .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("folio")))
        .or_else(|| env("HOME").map(|h| h.join(".local/share/folio")))
}
