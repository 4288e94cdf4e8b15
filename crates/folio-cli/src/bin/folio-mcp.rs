//! `folio-mcp`: the command the Python package installs under its own name
//! (`uvx folio-mcp`, `pipx run folio-mcp`). It runs the `folio` binary
//! installed beside it with the same arguments; with none, it serves MCP
//! over stdio, which is what an MCP client's configuration starts.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let folio = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("folio")))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("folio"));
    let mut args: Vec<_> = std::env::args_os().skip(1).collect();
    if args.is_empty() {
        args = vec!["serve".into(), "--stdio".into()];
    }
    // Replaces this process: stdio, signals and the exit status are folio's.
    let error = Command::new(&folio).args(args).exec();
    eprintln!("folio-mcp: cannot run {}: {error}", folio.display());
    ExitCode::from(127)
}
