//! Configuration: defaults, then the TOML file, then environment variables,
//! then command-line flags — each later source overriding the earlier.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use folio_core::{Limits, Precision};
use folio_embed::catalog;
use folio_embed::{ModelConfig, OpenAiOptions};
use folio_engine::{ChunkingConfig, EmbedderConfig, EngineConfig, Fusion, OcrConfig};
use folio_store::Bm25;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::fetch::{Wanted, materialise};

/// The TOML file's shape. Every field is optional; a key folio does not
/// know is refused. `folio __reference` writes docs/reference/config.md from
/// these doc comments: say each key's meaning, and its default as
/// "(default …)".
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    /// The embedded store's data directory; FOLIO_DATA_DIR and --data-dir
    /// override it (default ~/.local/share/folio/data).
    pub data_dir: Option<PathBuf>,
    /// Where libraries live: the embedded store, or a PostgreSQL server.
    pub store: StoreSection,
    /// The embedding model.
    pub model: ModelSection,
    /// An embedding server speaking the OpenAI API (`backend = "openai"`:
    /// Ollama, vLLM, TEI, hosted).
    pub openai: OpenAiSection,
    /// Every bound folio enforces on input and output.
    pub limits: Limits,
    /// How documents are cut into chunks.
    pub chunking: ChunkingSection,
    /// How searches rank, unless a search says otherwise.
    pub search: SearchSection,
    /// Where documents may come from.
    pub ingest: IngestSection,
    /// OCR of scanned pages and figure images through Tesseract.
    pub ocr: OcrSection,
    /// `folio serve` settings; its flags override them.
    pub serve: ServeSection,
    /// The cross-encoder reranking stage (off unless a model is given and
    /// enabled, or a search asks for it).
    pub rerank: RerankSection,
    /// What audit lines hold beyond the defaults.
    pub audit: AuditSection,
    /// Folders every `folio serve` keeps in sync (`[[watch]]`).
    pub watch: Vec<WatchSection>,
}

/// A folder kept in sync with a library by `folio serve` (`[[watch]]`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchSection {
    /// The folder (`~` is the home folder).
    pub folder: PathBuf,
    /// The library whose documents are the folder's files.
    pub library: String,
    /// Globs left out (gitignore syntax, relative to the folder), beyond
    /// the ignore files.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// A full pass at least this often, in seconds (default 300).
    pub rescan_secs: Option<u64>,
    /// Read ZIP and TAR archives, each member a document (default false).
    #[serde(default)]
    pub archives: bool,
}

/// `~/x` as the home folder's `x`.
pub fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

/// What audit lines hold beyond the defaults.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AuditSection {
    /// Write each call's query (or text) into its audit line; queries can
    /// be confidential (default false).
    pub include_queries: bool,
}

/// The cross-encoder reranking stage (off unless a model is given and
/// enabled, or a search asks for it).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RerankSection {
    /// A cross-encoder folder in Hugging Face layout with model.onnx, or a
    /// catalogue name (`ms-marco-MiniLM-L-6-v2`) fetched from the hub on
    /// first use; FOLIO_RERANK_MODEL overrides it (default none: no
    /// reranking).
    pub model: Option<PathBuf>,
    /// Rerank every search that does not say otherwise (default false).
    pub enabled: Option<bool>,
    /// Fused candidates the cross-encoder reads, best first (default 20).
    pub candidates: Option<usize>,
    /// Time the stage may take per search, in milliseconds; candidates not
    /// reached count as read last (default 1500).
    pub budget_ms: Option<u64>,
    /// The cross-encoder's share of the blended score (default 0.5).
    pub weight: Option<f32>,
}

/// Where libraries live: the embedded store in the data directory, or a
/// PostgreSQL server shared by a team.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSection {
    /// `postgres://user:password@host:port/database`; FOLIO_STORE_URL and
    /// --store-url override it (default none: the embedded store).
    pub url: Option<String>,
}

/// OCR of scanned pages and figure images through Tesseract.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OcrSection {
    /// Read scanned pages and figures when Tesseract is installed;
    /// FOLIO_OCR=off turns it off (default true).
    pub enabled: Option<bool>,
    /// Languages when neither the item nor the request names any (default
    /// ["en", "de"]).
    pub languages: Option<Vec<String>>,
    /// Rasterisation resolution in dots per inch, 72 to 1200 (default 300).
    pub dpi: Option<u32>,
}

/// `folio serve` settings; its flags override them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ServeSection {
    /// Toolsets exposed: native, citeloom, bmcis, mcpvectordb, hansard
    /// (default ["native"]).
    pub toolsets: Option<Vec<String>>,
    /// Serve no tool that writes and refuse every write (default false).
    pub read_only: bool,
    /// Bearer token the HTTP server requires; prefer FOLIO_TOKEN (default
    /// none).
    pub token: Option<String>,
    /// How HTTP callers authenticate: none, token, keys or oauth (default
    /// none, or token when a token is set).
    pub auth: Option<String>,
    /// Where audit lines are appended, `-` for stderr (default none).
    pub audit_log: Option<std::path::PathBuf>,
    /// The rate of a key without its own, as calls per minute (`600/min`)
    /// (default none: unlimited).
    pub rate: Option<String>,
    /// Source bytes each key or identity may ingest per window (`500MB/h`)
    /// (default none: unlimited).
    pub ingest_rate: Option<String>,
    /// A second address serving /metrics without credentials, such as
    /// `127.0.0.1:9100` (default none).
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Host names the HTTP server accepts beyond loopback (default []).
    pub allowed_hosts: Vec<String>,
    /// Browser origins the HTTP server accepts beyond loopback (default []).
    pub allowed_origins: Vec<String>,
    /// Per-tool time limits in seconds, by tool name; 0 removes a limit
    /// (default: citeloom's ingest_from_source 15, store_chunks 15, query 8,
    /// find_chunks 8, query_hybrid 15, inspect_collection 5).
    pub timeouts: std::collections::BTreeMap<String, f64>,
    /// The library the bmcis toolset searches (default "default").
    pub bmcis_library: Option<String>,
    /// The entity type bmcis `find_vendor_info` calls vendors (default
    /// "organization").
    pub bmcis_vendor_type: Option<String>,
    /// The speeches library the hansard toolset serves (default "hansard").
    pub hansard_library: Option<String>,
    /// Largest MCP request body over HTTP, in bytes (default 16777216).
    pub max_body_bytes: Option<usize>,
    /// The server name given to clients at initialisation (default "folio",
    /// or the seed's name when one compatibility toolset is served alone).
    pub server_name: Option<String>,
    /// The server version given to clients at initialisation (default
    /// folio's version, or the seed's).
    pub server_version: Option<String>,
    /// How access tokens are validated in OAuth mode (`auth = "oauth"`).
    pub oauth: OAuthSection,
}

/// How access tokens are validated in OAuth mode.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OAuthSection {
    /// The identity provider's issuer identifier, as --issuer (default
    /// none; required in OAuth mode).
    pub issuer: Option<String>,
    /// This server's resource identifier, the tokens' audience, as
    /// --resource (default none; required in OAuth mode).
    pub resource: Option<String>,
    /// The claim holding the scopes, `scp` for an array (default "scope").
    pub scope_claim: Option<String>,
    /// Prefix of folio's scope names in that claim, `folio:` for
    /// `folio:search` (default none).
    pub scope_prefix: Option<String>,
    /// The claim listing the libraries a token may use, `*` for every one;
    /// when set, a token without it may use none (default none: every
    /// library).
    pub libraries_claim: Option<String>,
    /// The claim naming the caller in audit lines and rates (default "sub").
    pub name_claim: Option<String>,
    /// Clock skew allowed on exp and nbf, in seconds (default 30).
    pub leeway_secs: Option<u64>,
    /// The client id the web app signs people in with at the provider, as
    /// --app-client-id (default none: the web app cannot sign in).
    pub app_client_id: Option<String>,
    /// That client's secret, as FOLIO_APP_CLIENT_SECRET, which wins
    /// (default none: a public client, PKCE alone).
    pub app_client_secret: Option<String>,
    /// The scopes the web app asks for, space-separated (default "openid"
    /// and folio's three scopes as tokens spell them, with scope_prefix).
    pub app_scopes: Option<String>,
}

/// The embedding model.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSection {
    /// onnx, candle or openai; FOLIO_BACKEND and --backend override it
    /// (default onnx when ONNX Runtime is found, else candle).
    pub backend: Option<String>,
    /// A catalogue name (`folio models ls`) or a hub id ORG/NAME[@REVISION],
    /// fetched from the hub on first use; FOLIO_MODEL and --model override
    /// it (default all-MiniLM-L6-v2).
    pub name: Option<String>,
    /// A model folder in Hugging Face layout, which wins over `name`;
    /// FOLIO_MODEL_DIR and --model-dir override it (default none).
    pub dir: Option<PathBuf>,
    /// The model id recorded in libraries; FOLIO_MODEL_ID overrides it
    /// (default the hub id, else the folder's folio.json).
    pub id: Option<String>,
    /// Path to libonnxruntime.so; FOLIO_ORT_LIB and ORT_DYLIB_PATH override
    /// it (default found in folio's Python environment, the folio home or
    /// the usual library folders).
    pub runtime: Option<PathBuf>,
    /// Encoder threads; FOLIO_THREADS and --threads override it (default
    /// the number of cores).
    pub threads: Option<usize>,
    /// Text put before each query (default the catalogue's, else none).
    pub query_prefix: Option<String>,
    /// Text put before each passage (default the catalogue's, else none).
    pub passage_prefix: Option<String>,
    /// fp32 or int8: int8 runs ONNX Runtime over the folder's
    /// `model_int8.onnx`, another embedding space than its fp32 twin;
    /// FOLIO_MODEL_PRECISION overrides it (default fp32).
    pub precision: Option<String>,
}

/// An embedding server speaking the OpenAI API (`backend = "openai"`:
/// Ollama, vLLM, TEI, hosted).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OpenAiSection {
    /// The API's base URL; FOLIO_OPENAI_URL overrides it (default none;
    /// required by the openai backend).
    pub url: Option<String>,
    /// The model the server embeds with; FOLIO_OPENAI_MODEL overrides it
    /// (default none; required by the openai backend).
    pub model: Option<String>,
    /// Environment variable holding the API key (default
    /// "OPENAI_API_KEY").
    pub api_key_env: Option<String>,
    /// The model's input window in tokens, which chunks are sized to
    /// (default 512).
    pub window: Option<usize>,
    /// Time allowed for one embedding request, in seconds (default 60).
    pub timeout_secs: Option<u64>,
}

/// How documents are cut into chunks.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkingSection {
    /// Tokens a chunk aims at, at most the model's window (default the
    /// model's window: 254 for all-MiniLM-L6-v2).
    pub target_tokens: Option<usize>,
    /// Tokens a chunk repeats from the one before (default an eighth of
    /// the target).
    pub overlap_tokens: Option<usize>,
}

/// How searches rank, unless a search says otherwise.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SearchSection {
    /// How hybrid search fuses its two rankings: weighted (min-max
    /// normalised) or rrf (default "weighted").
    pub fusion: Option<String>,
    /// The lexical ranking's weight (default 0.5 weighted, 1.0 rrf).
    pub lexical_weight: Option<f32>,
    /// Reciprocal rank fusion's k (default 60).
    pub rrf_k: Option<f32>,
    /// The dense ranking's weight under rrf (default 1.0).
    pub dense_weight: Option<f32>,
    /// BM25's term-frequency saturation (default 1.2).
    pub k1: Option<f32>,
    /// BM25's length normalisation (default 0.75).
    pub b: Option<f32>,
}

/// Where documents may come from.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct IngestSection {
    /// Folders a server may read files from; a server without roots
    /// refuses paths to keyed callers (default []).
    pub roots: Vec<PathBuf>,
    /// Fetch URLs on private, loopback and link-local addresses (default
    /// false).
    pub allow_private_urls: bool,
    /// Find the entities documents mention while ingesting (default true).
    pub entities: Option<bool>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn home() -> PathBuf {
    env("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// `$FOLIO_HOME`, else `$XDG_DATA_HOME/folio`, by default
/// `~/.local/share/folio` (`folio_core::folio_home`; relative to the
/// working folder when not even `HOME` is set).
pub fn folio_home() -> PathBuf {
    folio_core::folio_home().unwrap_or_else(|| home().join(".local/share/folio"))
}

/// `$XDG_CONFIG_HOME/folio/config.toml`.
pub fn default_config_path() -> PathBuf {
    env("XDG_CONFIG_HOME")
        .map_or_else(|| home().join(".config"), PathBuf::from)
        .join("folio/config.toml")
}

pub fn load_file(path: Option<&Path>) -> Result<FileConfig> {
    let (path, required) = match path {
        Some(p) => (p.to_path_buf(), true),
        None => (
            env("FOLIO_CONFIG").map_or_else(default_config_path, PathBuf::from),
            env("FOLIO_CONFIG").is_some(),
        ),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            Ok(FileConfig::default())
        }
        Err(e) => Err(e).with_context(|| format!("cannot read config file {}", path.display())),
    }
}

/// The ONNX Runtime library, and whether it was set rather than found.
struct Runtime {
    path: PathBuf,
    explicit: bool,
}

/// The runtime library: an explicit setting (`[model] runtime`,
/// `FOLIO_ORT_LIB`, `ORT_DYLIB_PATH`), else one found where packages put it:
/// `scripts/setup.sh`'s folder, the `onnxruntime` Python wheel in folio's
/// own environment (pip, pipx, uv) or the active virtualenv, the usual
/// library folders.
fn find_runtime(configured: Option<PathBuf>) -> Option<Runtime> {
    if let Some(path) = configured
        .or_else(|| env("FOLIO_ORT_LIB").map(PathBuf::from))
        .or_else(|| env("ORT_DYLIB_PATH").map(PathBuf::from))
    {
        return Some(Runtime {
            path,
            explicit: true,
        });
    }
    let mut places = vec![folio_home().join("runtime")];
    let exe_prefix = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()));
    for prefix in exe_prefix
        .into_iter()
        .chain(env("VIRTUAL_ENV").map(PathBuf::from))
    {
        for lib in ["lib", "lib64"] {
            let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else {
                continue;
            };
            let mut pythons: Vec<PathBuf> = entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
                .map(|e| e.path().join("site-packages/onnxruntime/capi"))
                .collect();
            pythons.sort();
            places.extend(pythons.into_iter().rev());
        }
    }
    places.extend(
        env("LD_LIBRARY_PATH")
            .iter()
            .flat_map(|p| p.split(':'))
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
    );
    places.extend(
        [
            "/usr/local/lib",
            "/usr/lib",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib64",
        ]
        .map(PathBuf::from),
    );
    places
        .iter()
        .find_map(|dir| folio_embed::find_runtime_library(dir))
        .map(|path| Runtime {
            path,
            explicit: false,
        })
}

/// A runtime folio can use: an explicit one as it is (a failure to load is
/// reported where it is used), a found one only if it loads; otherwise the
/// candle path runs, and the first time a process falls back it says why.
fn usable_runtime(configured: Option<PathBuf>) -> Option<PathBuf> {
    static SAID: std::sync::Once = std::sync::Once::new();
    let why = match find_runtime(configured) {
        Some(Runtime {
            path,
            explicit: true,
        }) => return Some(path),
        Some(Runtime { path, .. }) => match folio_embed::check_runtime(&path) {
            Ok(()) => return Some(path),
            Err(e) => format!("the ONNX Runtime library found does not load ({e})"),
        },
        None => "no ONNX Runtime library found".to_string(),
    };
    SAID.call_once(|| {
        eprintln!(
            "folio: {why}: encoding on the candle path (pure Rust, about half as fast); \
             `pip install onnxruntime` beside folio or ORT_DYLIB_PATH enables the fast path"
        );
    });
    None
}

/// Whether an ONNX Runtime library is there and loads (for `folio models`),
/// with the configuration file at `config` (the default one when `None`);
/// a configuration file folio cannot read is an error here as everywhere.
pub fn runtime_available(config: Option<&Path>) -> Result<bool> {
    let file = load_file(config)?;
    Ok(usable_runtime(file.model.runtime).is_some())
}

/// Where scripts/setup.sh installs the default model, under the folio home.
const SETUP_MODEL: &str = "models/all-MiniLM-L6-v2";

/// The reranker's folder: a catalogued cross-encoder's, from the hub cache
/// (fetched on first use), else the folder as given. A folder that is not
/// there, or a fetch that fails, fails only the reranked searches, saying
/// why; everything else works.
fn rerank_folder(given: PathBuf) -> PathBuf {
    let name = given.to_string_lossy().into_owned();
    match catalog::find(&name) {
        Some(entry) if entry.role == catalog::Role::Reranker && !given.exists() => {
            let wanted = Wanted::Catalogued(entry);
            materialise(&wanted, true).unwrap_or_else(|e| {
                eprintln!("folio: the reranker {name} is not available: {e:#}");
                given
            })
        }
        _ => given,
    }
}

/// Overrides from the command line.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub data_dir: Option<PathBuf>,
    pub store_url: Option<String>,
    pub backend: Option<String>,
    pub model_dir: Option<PathBuf>,
    /// A catalogue name or hub id (`--model`).
    pub model: Option<String>,
    pub threads: Option<usize>,
    pub allow_private_urls: bool,
    /// A model that cannot be fetched now is fetched on first use (a
    /// server answers at once), not refused at start.
    pub defer_model_fetch: bool,
}

/// Builds the engine configuration. `writable` is the lock wait for
/// commands that write, `None` for read-only commands.
pub fn engine_config(
    file: FileConfig,
    overrides: &Overrides,
    writable: Option<Duration>,
) -> Result<EngineConfig> {
    let data_dir = overrides
        .data_dir
        .clone()
        .or_else(|| env("FOLIO_DATA_DIR").map(PathBuf::from))
        .or(file.data_dir)
        .unwrap_or_else(|| folio_home().join("data"));
    let store_url = overrides
        .store_url
        .clone()
        .or_else(|| env("FOLIO_STORE_URL"))
        .or(file.store.url)
        .filter(|url| !url.is_empty());
    let m = file.model;
    let model_dir = overrides
        .model_dir
        .clone()
        .or_else(|| env("FOLIO_MODEL_DIR").map(PathBuf::from))
        .or(m.dir);
    let model_name = overrides
        .model
        .clone()
        .or_else(|| env("FOLIO_MODEL"))
        .or(m.name);
    let threads = overrides
        .threads
        .or_else(|| env("FOLIO_THREADS").and_then(|t| t.parse().ok()))
        .or(m.threads)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let backend = overrides
        .backend
        .clone()
        .or_else(|| env("FOLIO_BACKEND"))
        .or(m.backend);
    let runtime = match backend.as_deref() {
        Some("openai" | "candle") => find_runtime(m.runtime).map(|r| r.path),
        _ => usable_runtime(m.runtime),
    };
    // The model folder: one given, the folder scripts/setup.sh installs, or
    // the named (default) model from the hub cache, fetched on first use.
    let mut model_fetch = None;
    let (model_dir, defaults) = match (backend.as_deref(), model_dir, model_name) {
        (Some("openai"), ..) => (PathBuf::new(), ModelConfig::default()),
        (_, Some(dir), _) => (dir, ModelConfig::default()),
        (_, None, None) if folio_home().join(SETUP_MODEL).join("config.json").is_file() => {
            (folio_home().join(SETUP_MODEL), ModelConfig::default())
        }
        (backend, None, name) => {
            let wanted = Wanted::parse(name.as_deref().unwrap_or(catalog::DEFAULT_MODEL))?;
            let onnx = runtime.is_some() && backend != Some("candle");
            match materialise(&wanted, onnx) {
                Ok(dir) => (dir, wanted.defaults()),
                // A server answers without its model: the first call that
                // needs it fetches it, or fails saying why (as here).
                Err(e) if overrides.defer_model_fetch => {
                    tracing::warn!(
                        "the model is not available yet ({e:#}); fetching it on first use"
                    );
                    let defaults = wanted.defaults();
                    model_fetch = Some(folio_engine::ModelFetch(std::sync::Arc::new(move || {
                        materialise(&wanted, onnx).map_err(|e| format!("{e:#}"))
                    })));
                    (PathBuf::new(), defaults)
                }
                Err(e) => return Err(e),
            }
        }
    };
    let precision: Precision = match env("FOLIO_MODEL_PRECISION").or(m.precision) {
        Some(p) => p
            .parse()
            .map_err(|e: String| anyhow::anyhow!("[model] precision: {e}"))?,
        None => defaults.precision,
    };
    if precision == Precision::Int8 {
        match backend.as_deref() {
            Some("candle" | "openai") => {
                bail!("[model] precision int8 runs on the onnx backend only")
            }
            _ if runtime.is_none() => bail!(
                "[model] precision int8 runs on ONNX Runtime, which was not found: pip install \
                 onnxruntime beside folio, run scripts/setup.sh or set FOLIO_ORT_LIB"
            ),
            _ => {}
        }
    }
    let model = ModelConfig {
        id: env("FOLIO_MODEL_ID").or(m.id).or(defaults.id),
        query_prefix: m.query_prefix.unwrap_or(defaults.query_prefix),
        passage_prefix: m.passage_prefix.unwrap_or(defaults.passage_prefix),
        precision,
    };
    let rerank = match env("FOLIO_RERANK_MODEL")
        .map(PathBuf::from)
        .or(file.rerank.model)
    {
        None => None,
        Some(model_dir) => Some(folio_engine::RerankConfig {
            model_dir: rerank_folder(model_dir),
            runtime: runtime.clone().context(
                "the reranker needs the ONNX Runtime library: pip install onnxruntime, run scripts/setup.sh \
                 or set ORT_DYLIB_PATH",
            )?,
            threads,
            enabled: file.rerank.enabled.unwrap_or(false),
            candidates: file
                .rerank
                .candidates
                .unwrap_or(folio_engine::RerankConfig::DEFAULT_CANDIDATES),
            budget: file
                .rerank
                .budget_ms
                .map_or(folio_engine::RerankConfig::DEFAULT_BUDGET, Duration::from_millis),
            weight: file
                .rerank
                .weight
                .unwrap_or(folio_engine::RerankConfig::DEFAULT_WEIGHT),
        }),
    };
    let onnx = |model_dir, runtime, model| EmbedderConfig::Onnx {
        model_dir,
        runtime,
        threads,
        model,
    };
    let embedder = match backend.as_deref() {
        None => match runtime {
            // A model fetched on first use: its folder decides then
            // (`EmbedderConfig::in_folder`).
            Some(runtime)
                if precision == Precision::Int8
                    || model_fetch.is_some()
                    || model_dir.join("model.onnx").exists()
                    || model_dir.join("onnx/model.onnx").exists() =>
            {
                onnx(model_dir, runtime, model)
            }
            _ => EmbedderConfig::Candle { model_dir, model },
        },
        Some("onnx") => match runtime {
            Some(runtime) => onnx(model_dir, runtime, model),
            None => bail!(
                "the onnx backend needs the ONNX Runtime library: run scripts/setup.sh or set FOLIO_ORT_LIB"
            ),
        },
        Some("candle") => EmbedderConfig::Candle { model_dir, model },
        Some("openai") => {
            let o = file.openai;
            let url = env("FOLIO_OPENAI_URL")
                .or(o.url)
                .context("the openai backend needs [openai] url or FOLIO_OPENAI_URL")?;
            let model_name = env("FOLIO_OPENAI_MODEL")
                .or(o.model)
                .context("the openai backend needs [openai] model")?;
            EmbedderConfig::OpenAi(OpenAiOptions {
                base_url: url,
                model: model_name,
                api_key: env(o.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY")),
                window: o.window.unwrap_or(512),
                timeout: Duration::from_secs(o.timeout_secs.unwrap_or(60)),
                query_prefix: model.query_prefix,
                passage_prefix: model.passage_prefix,
            })
        }
        Some(other) => bail!("unknown model backend {other:?} (use onnx, candle or openai)"),
    };
    let mut limits = file.limits;
    if let Some(bytes) = env("FOLIO_MAX_FILE_BYTES").and_then(|v| v.parse().ok()) {
        limits.max_file_bytes = bytes;
    }
    let s = file.search;
    let fusion = match s.fusion.as_deref() {
        None | Some("weighted") => Fusion::Weighted {
            lexical_weight: s.lexical_weight.unwrap_or(0.5),
        },
        Some("rrf") => Fusion::Rrf {
            k: s.rrf_k.unwrap_or(60.0),
            lexical_weight: s.lexical_weight.unwrap_or(1.0),
            dense_weight: s.dense_weight.unwrap_or(1.0),
        },
        Some(other) => bail!("unknown fusion {other:?} (use weighted or rrf)"),
    };
    let defaults = Bm25::default();
    let ocr_defaults = OcrConfig::default();
    let ocr = OcrConfig {
        enabled: match env("FOLIO_OCR").as_deref() {
            Some("off" | "0" | "false") => false,
            Some("on" | "1" | "true") => true,
            Some(other) => bail!("FOLIO_OCR={other:?}: use on or off"),
            None => file.ocr.enabled.unwrap_or(ocr_defaults.enabled),
        },
        languages: file.ocr.languages.unwrap_or(ocr_defaults.languages),
        dpi: match file.ocr.dpi {
            Some(dpi @ 72..=1200) => dpi,
            Some(other) => bail!("[ocr] dpi = {other}: use 72 to 1200"),
            None => ocr_defaults.dpi,
        },
    };
    Ok(EngineConfig {
        data_dir,
        store_url,
        embedder,
        limits,
        chunking: ChunkingConfig {
            target_tokens: file.chunking.target_tokens,
            overlap_tokens: file.chunking.overlap_tokens,
        },
        roots: file.ingest.roots,
        guard_paths: false,
        allow_private_urls: overrides.allow_private_urls || file.ingest.allow_private_urls,
        fusion,
        bm25: Bm25 {
            k1: s.k1.unwrap_or(defaults.k1),
            b: s.b.unwrap_or(defaults.b),
        },
        writable,
        ocr,
        extraction: folio_engine::sandbox::Extraction::current_exe(),
        rerank,
        entities: file.ingest.entities.unwrap_or(true),
        model_fetch,
    })
}
