//! The configured model resolved to a folder: a folder as given, or a
//! catalogued model or hub id from the hub cache, fetched on first use with
//! progress on stderr.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use folio_embed::ModelConfig;
use folio_embed::catalog::{self, CatalogEntry};
use folio_embed::hub::{FetchEvent, Hub, HubError, HubFile};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A model named in configuration or on the command line.
pub enum Wanted {
    Catalogued(&'static CatalogEntry),
    /// A hub repository outside the catalogue, at a revision.
    HubId {
        repo: String,
        revision: String,
    },
    Folder(PathBuf),
}

impl Wanted {
    pub fn parse(name: &str) -> Result<Wanted> {
        if let Some(entry) = catalog::find(name) {
            return Ok(Wanted::Catalogued(entry));
        }
        let path = Path::new(name);
        if path.is_dir() {
            return Ok(Wanted::Folder(path.to_path_buf()));
        }
        let (repo, revision) = name.split_once('@').unwrap_or((name, "main"));
        let valid = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        match repo.split_once('/') {
            Some((org, model)) if valid(org) && valid(model) && valid(revision) => {
                Ok(Wanted::HubId {
                    repo: repo.into(),
                    revision: revision.into(),
                })
            }
            _ => bail!(
                "unknown model {name:?}: use a name from `folio models ls`, a hub id ORG/NAME[@REVISION], \
                 or a model folder"
            ),
        }
    }

    pub fn repo_revision(&self) -> Option<(&str, &str)> {
        match self {
            Wanted::Catalogued(e) => Some((e.repo, e.revision)),
            Wanted::HubId { repo, revision } => Some((repo, revision)),
            Wanted::Folder(_) => None,
        }
    }

    pub fn files(&self, onnx: bool) -> Vec<HubFile> {
        match self {
            Wanted::Catalogued(e) => e.files(onnx),
            _ => catalog::files_for_hub_id(onnx),
        }
    }

    /// The embedding-space options it implies (the repository id, prefixes).
    pub fn defaults(&self) -> ModelConfig {
        match self {
            Wanted::Catalogued(e) => e.model_config(),
            Wanted::HubId { repo, .. } => ModelConfig {
                id: Some(repo.clone()),
                ..ModelConfig::default()
            },
            Wanted::Folder(_) => ModelConfig::default(),
        }
    }

    pub fn needs_onnx(&self) -> bool {
        matches!(self, Wanted::Catalogued(e) if !e.runs_on_candle())
    }
}

pub fn has_graph(dir: &Path) -> bool {
    dir.join("model.onnx").is_file() || dir.join("onnx/model.onnx").is_file()
}

/// The folder of a wanted model, fetched now if the hub cache lacks it:
/// the ONNX graph when `onnx` (falling back to the safetensors where the
/// repository has no graph), else the safetensors.
pub fn materialise(wanted: &Wanted, onnx: bool) -> Result<PathBuf> {
    let Some((repo, revision)) = wanted.repo_revision() else {
        let Wanted::Folder(dir) = wanted else {
            unreachable!("only folders have no repository")
        };
        return Ok(dir.clone());
    };
    if wanted.needs_onnx() && !onnx {
        bail!(
            "{repo} runs on ONNX Runtime only: install it (pip install onnxruntime, or the folio-mcp \
             package) or set ORT_DYLIB_PATH"
        );
    }
    let hub = Hub::from_env();
    let fetch = |onnx: bool| -> Result<PathBuf> {
        let files = wanted.files(onnx);
        let mut bar = FetchBar::new(repo, &hub.endpoint);
        hub.snapshot(repo, revision, &files, &mut |event| bar.on(event))
            .map_err(anyhow::Error::from)
    };
    let graph_wanted = onnx || wanted.needs_onnx();
    match fetch(graph_wanted) {
        Ok(dir) if !graph_wanted || has_graph(&dir) => Ok(dir),
        // The repository has no ONNX graph: run its safetensors on candle.
        Ok(_) => fetch(false),
        Err(e) if graph_wanted && !wanted.needs_onnx() && is_missing_graph(&e) => fetch(false),
        Err(e) => Err(e),
    }
}

fn is_missing_graph(error: &anyhow::Error) -> bool {
    matches!(
        error.downcast_ref::<HubError>(),
        Some(HubError::NotFound { path, .. }) if path.ends_with(".onnx")
    )
}

/// Progress of a fetch on stderr: a bar on a terminal, else a line a file.
struct FetchBar {
    repo: String,
    endpoint: String,
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl FetchBar {
    fn new(repo: &str, endpoint: &str) -> Self {
        FetchBar {
            repo: repo.into(),
            endpoint: endpoint.into(),
            bar: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn on(&mut self, event: FetchEvent) {
        match event {
            FetchEvent::Start {
                path,
                size,
                resumed,
            } => {
                let resumed_note = if resumed > 0 {
                    format!(", resuming at {}", megabytes(resumed))
                } else {
                    String::new()
                };
                if self.terminal {
                    let bar = ProgressBar::with_draw_target(size, ProgressDrawTarget::stderr());
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                    );
                    bar.set_prefix(format!("{} {path}", self.repo));
                    bar.set_position(resumed);
                    self.bar = Some(bar);
                } else if size.is_none_or(|s| s >= 1_000_000) {
                    // Without a terminal, a line for each weights file.
                    eprintln!(
                        "folio: fetching {} {path} ({}) from {}{resumed_note}",
                        self.repo,
                        size.map_or_else(|| "size unknown".into(), megabytes),
                        self.endpoint
                    );
                }
            }
            FetchEvent::Bytes(n) => {
                if let Some(bar) = &self.bar {
                    bar.inc(n);
                }
            }
            FetchEvent::Done { .. } => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
            }
        }
    }
}

pub fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
