//! `folio serve`: the MCP server over stdio (default) or streamable HTTP.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use folio_engine::{EmbedderConfig, Engine};
use folio_server::http::HttpOptions;
use folio_server::{ServeOptions, Shared, Toolset};

use crate::common::{Global, Outcome, usage};
use crate::config::{self, Overrides};

#[derive(Args)]
pub struct ServeArgs {
    /// Serve MCP over stdin/stdout (the default).
    #[arg(long, conflicts_with = "http")]
    pub stdio: bool,
    /// Serve MCP over streamable HTTP at ADDR (e.g. 127.0.0.1:7070), at /mcp.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Toolsets to expose, comma-separated: native, citeloom, bmcis, mcpvectordb, hansard.
    #[arg(long, value_delimiter = ',')]
    pub toolsets: Vec<String>,
    /// Expose only tools that do not write.
    #[arg(long)]
    pub read_only: bool,
    /// Bearer token HTTP clients must send.
    #[arg(long, env = "FOLIO_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// How HTTP callers prove who they are: none, token (the one shared
    /// --token), keys (a key each, from `folio keys create`) or oauth (an
    /// access token of the team's identity provider, --issuer); scopes and
    /// libraries apply to keys and oauth. Default: token when one is
    /// given, else none.
    #[arg(long, value_parser = ["none", "token", "keys", "oauth"])]
    pub auth: Option<String>,
    /// The identity provider whose access tokens --auth oauth accepts
    /// (its issuer identifier, e.g. https://idp.example.org/realms/team).
    #[arg(long, value_name = "URL")]
    pub issuer: Option<String>,
    /// This server's resource identifier, which tokens must name as their
    /// audience (e.g. https://folio.example.org/mcp).
    #[arg(long, value_name = "URL")]
    pub resource: Option<String>,
    /// The client id the web app signs people in with at the --issuer
    /// (authorization code flow with PKCE), registered there with the
    /// redirect URI <origin of --resource>/app/callback. Without it the
    /// web app of an --auth oauth server cannot sign anyone in.
    #[arg(long, value_name = "ID")]
    pub app_client_id: Option<String>,
    /// That client's secret, for a confidential client (best given in the
    /// environment, where `ps` does not show it).
    #[arg(
        long,
        value_name = "SECRET",
        env = "FOLIO_APP_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub app_client_secret: Option<String>,
    /// Append one JSON line per call to this file (`-`: stderr): time,
    /// key name, transport, tool or route, library, outcome, duration,
    /// correlation id; never queries or document text.
    #[arg(long, value_name = "PATH")]
    pub audit_log: Option<std::path::PathBuf>,
    /// Calls a key may make when it names no rate of its own: 600/min,
    /// 10/s (default: unlimited).
    #[arg(long)]
    pub rate: Option<String>,
    /// Bytes of sources each key or identity may ingest: 500MB/h, 2GiB/day
    /// (default: unlimited). Over it, ingest tools answer RATE_LIMITED with
    /// the wait.
    #[arg(long, value_name = "RATE")]
    pub ingest_rate: Option<String>,
    /// Also serve /metrics, without credentials, on this address (e.g.
    /// 127.0.0.1:9100, for a Prometheus scraper on a private interface);
    /// /metrics on the main address stays behind --auth.
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<SocketAddr>,
    /// Another Host name the HTTP server answers to (repeatable).
    #[arg(long = "allowed-host")]
    pub allowed_hosts: Vec<String>,
    /// Another browser Origin the HTTP server accepts (repeatable).
    #[arg(long = "allowed-origin")]
    pub allowed_origins: Vec<String>,
    /// Tools per tools/list page.
    #[arg(long, env = "FOLIO_TOOLS_PAGE_SIZE", default_value_t = 100)]
    pub tools_page_size: usize,
    /// Allow ingesting URLs on private networks.
    #[arg(long)]
    pub allow_private_urls: bool,
    /// The server name given to clients at initialisation (default: the
    /// seed's name when one compatibility toolset is served, else folio).
    #[arg(long)]
    pub server_name: Option<String>,
    /// The server version given to clients at initialisation.
    #[arg(long)]
    pub server_version: Option<String>,
    /// Keep a folder in sync with a library while serving: FOLDER=LIBRARY
    /// (repeatable; `[[watch]]` in the configuration adds more).
    #[arg(long = "watch", value_name = "FOLDER=LIBRARY")]
    pub watch: Vec<String>,
}

/// The folders to watch: `--watch` flags, then `[[watch]]` sections.
fn watches(
    flags: &[String],
    sections: Vec<config::WatchSection>,
) -> Result<Vec<folio_server::WatchSpec>> {
    let mut specs = Vec::new();
    for flag in flags {
        let Some((folder, library)) = flag.rsplit_once('=') else {
            return Err(usage(format!("--watch {flag:?}: expected FOLDER=LIBRARY")));
        };
        specs.push(folio_server::WatchSpec {
            folder: config::expand_home(std::path::Path::new(folder)),
            library: library.to_string(),
            exclude: Vec::new(),
            rescan: Duration::from_secs(300),
            archives: false,
        });
    }
    for section in sections {
        specs.push(folio_server::WatchSpec {
            folder: config::expand_home(&section.folder),
            library: section.library,
            exclude: section.exclude,
            rescan: Duration::from_secs(section.rescan_secs.unwrap_or(300).max(1)),
            archives: section.archives,
        });
    }
    for spec in &specs {
        folio_core::LibraryName::new(&spec.library)
            .map_err(|e| usage(format!("watch {}: {e}", spec.folder.display())))?;
    }
    Ok(specs)
}

fn model_dir(config: &folio_engine::EngineConfig) -> Option<std::path::PathBuf> {
    match &config.embedder {
        EmbedderConfig::Onnx { model_dir, .. } | EmbedderConfig::Candle { model_dir, .. } => {
            Some(model_dir.clone())
        }
        EmbedderConfig::OpenAi(_) => None,
    }
}

pub fn run(cli: &Global, args: &ServeArgs, mut overrides: Overrides) -> Result<Outcome> {
    overrides.allow_private_urls = args.allow_private_urls;
    overrides.defer_model_fetch = true;
    let mut file = config::load_file(cli.config.as_deref())?;
    let mut section = std::mem::take(&mut file.serve);
    let audit_queries = file.audit.include_queries;
    let wait = std::env::var("FOLIO_LOCK_WAIT_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_millis);
    let read_only = args.read_only || section.read_only;
    let watch_specs = watches(&args.watch, std::mem::take(&mut file.watch))?;
    if read_only && !watch_specs.is_empty() {
        return Err(usage(
            "a read-only server writes nothing: it cannot keep a folder in sync (drop --watch or --read-only)",
        ));
    }
    let mut config = config::engine_config(file, &overrides, (!read_only).then_some(wait))?;
    // Agents, not the user, name the files a server reads.
    config.guard_paths = true;

    let names = if !args.toolsets.is_empty() {
        args.toolsets.clone()
    } else {
        section.toolsets.unwrap_or_else(|| vec!["native".into()])
    };
    let toolsets = names
        .iter()
        .map(|n| n.parse::<Toolset>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| usage(e.to_string()))?;
    let mut timeouts = ServeOptions::seed_timeouts();
    for (tool, secs) in section.timeouts {
        if !(secs.is_finite() && secs >= 0.0) {
            bail!("timeout for {tool} must be a non-negative number of seconds");
        }
        if secs == 0.0 {
            timeouts.remove(&tool);
        } else {
            timeouts.insert(tool, Duration::from_secs_f64(secs));
        }
    }
    let token = args
        .token
        .clone()
        .or(section.token)
        .filter(|t| !t.is_empty());
    let auth = args
        .auth
        .clone()
        .or(section.auth)
        .unwrap_or_else(|| if token.is_some() { "token" } else { "none" }.into());
    let keys_required = match (auth.as_str(), &token) {
        ("keys" | "oauth", None) => true,
        ("keys" | "oauth", Some(_)) => {
            return Err(usage(format!(
                "--auth {auth} replaces the shared token: drop --token (and FOLIO_TOKEN)"
            )));
        }
        ("token", None) => return Err(usage("--auth token needs --token (or FOLIO_TOKEN)")),
        ("none", Some(_)) => {
            return Err(usage(
                "--auth none with a token: choose --auth token, or drop the token",
            ));
        }
        ("token" | "none", _) => false,
        (other, _) => {
            return Err(usage(format!(
                "unknown --auth {other:?} (none, token, keys or oauth)"
            )));
        }
    };
    if keys_required && args.http.is_none() {
        return Err(usage(format!(
            "--auth {auth} applies to --http: a stdio server is the local user's own process"
        )));
    }
    let oauth = oauth_options(args, std::mem::take(&mut section.oauth), &auth)?;
    let options = ServeOptions {
        toolsets,
        read_only,
        tools_page_size: args.tools_page_size.max(1),
        timeouts,
        watches: watch_specs,
        bmcis_library: section.bmcis_library.unwrap_or_else(|| "default".into()),
        bmcis_vendor_type: section
            .bmcis_vendor_type
            .unwrap_or_else(|| "organization".into()),
        hansard_library: section.hansard_library.unwrap_or_else(|| "hansard".into()),
        transport: if args.http.is_some() { "http" } else { "stdio" }.into(),
        model_dir: model_dir(&config),
        allow_private_urls: config.allow_private_urls,
        server_name: args.server_name.clone().or(section.server_name),
        server_version: args.server_version.clone().or(section.server_version),
        keys_required,
        audit_log: args.audit_log.clone().or(section.audit_log),
        default_rate_per_minute: match args.rate.clone().or(section.rate) {
            // A rate is per key: without keys there is no caller to hold to it.
            Some(_) if !keys_required => {
                return Err(usage(format!(
                    "--rate limits each key's calls: it needs --auth keys or oauth \
                     (this server uses --auth {auth})"
                )));
            }
            rate => rate.as_deref().map(crate::keys::per_minute).transpose()?,
        },
        ingest_bytes_per_hour: args
            .ingest_rate
            .clone()
            .or(section.ingest_rate)
            .as_deref()
            .map(crate::keys::bytes_per_hour)
            .transpose()?,
        audit_queries,
    };
    // The URL policy travels with each client's options, not the engine:
    // clients of one data directory may differ in it.
    config.allow_private_urls = false;
    // Refuse a conflicting toolset choice before touching the data.
    folio_server::Registry::for_options(&options).map_err(|e| usage(e.to_string()))?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        match args.http {
            // Read-only, or on a database server that every process
            // writes directly: no owner to elect.
            None if read_only || config.store_url.is_some() => {
                let engine = Engine::open(config)?;
                folio_server::owner::run_stdio_direct(engine, options).await
            }
            None => folio_server::owner::run_stdio(config, options, wait).await,
            Some(addr) => {
                let mut http = HttpOptions::loopback(addr);
                http.allowed_hosts
                    .extend(args.allowed_hosts.iter().cloned());
                http.allowed_hosts.extend(section.allowed_hosts);
                http.allowed_origins
                    .extend(args.allowed_origins.iter().cloned());
                http.allowed_origins.extend(section.allowed_origins);
                http.token = token;
                http.keys = keys_required;
                if let Some((oauth, app)) = oauth {
                    let verifier = folio_server::oauth::Verifier::discover(oauth)
                        .await
                        .map_err(|e| usage(format!("--auth oauth: {e}")))?;
                    let verifier = std::sync::Arc::new(verifier);
                    if let Some(app) = app {
                        let signin = folio_server::signin::SignIn::new(verifier.clone(), app)
                            .map_err(|e| usage(format!("--app-client-id: {e}")))?;
                        tracing::info!(
                            "the web app signs people in at the provider, back at {}",
                            signin.redirect_uri()
                        );
                        http.signin = Some(std::sync::Arc::new(signin));
                    }
                    http.oauth = Some(verifier);
                }
                if let Some(bytes) = section.max_body_bytes {
                    http.max_body_bytes = bytes;
                }
                http.max_upload_bytes = usize::try_from(config.limits.max_file_bytes)
                    .unwrap_or(usize::MAX)
                    .saturating_add(1 << 20);
                let metrics = args.metrics_addr.or(section.metrics_addr);
                serve_http(config, options, http, metrics, read_only, wait).await
            }
        }
    })?;
    Ok(Outcome::Success)
}

/// The OAuth options of `--auth oauth` (flags over `[serve.oauth]`), and
/// the web app's client there when one is named; None in other modes,
/// where naming an issuer is a mistake.
fn oauth_options(
    args: &ServeArgs,
    section: config::OAuthSection,
    auth: &str,
) -> Result<
    Option<(
        folio_server::oauth::OAuthOptions,
        Option<folio_server::signin::AppClient>,
    )>,
> {
    let issuer = args.issuer.clone().or(section.issuer);
    let resource = args.resource.clone().or(section.resource);
    let app_client_id = args.app_client_id.clone().or(section.app_client_id);
    let app_client_secret = args
        .app_client_secret
        .clone()
        .or(section.app_client_secret)
        .filter(|s| !s.is_empty());
    if auth != "oauth" {
        if issuer.is_some() || resource.is_some() || app_client_id.is_some() {
            return Err(usage(
                "--issuer, --resource and --app-client-id belong to --auth oauth: add it, or drop them",
            ));
        }
        return Ok(None);
    }
    let (Some(issuer), Some(resource)) = (issuer, resource) else {
        return Err(usage(
            "--auth oauth needs --issuer (the identity provider) and --resource (this server's URL, the tokens' audience)",
        ));
    };
    if app_client_id.is_none() && app_client_secret.is_some() {
        return Err(usage(
            "an app client secret (FOLIO_APP_CLIENT_SECRET) needs --app-client-id",
        ));
    }
    let mut options = folio_server::oauth::OAuthOptions::new(issuer, resource);
    if let Some(claim) = section.scope_claim {
        options.scope_claim = claim;
    }
    if let Some(prefix) = section.scope_prefix {
        options.scope_prefix = prefix;
    }
    options.libraries_claim = section.libraries_claim;
    if let Some(claim) = section.name_claim {
        options.name_claim = claim;
    }
    if let Some(secs) = section.leeway_secs {
        options.leeway = Duration::from_secs(secs);
    }
    let app = app_client_id.map(|client_id| folio_server::signin::AppClient {
        client_id,
        client_secret: app_client_secret,
        scopes: section.app_scopes,
    });
    Ok(Some((options, app)))
}

async fn serve_http(
    config: folio_engine::EngineConfig,
    options: ServeOptions,
    http: HttpOptions,
    metrics: Option<SocketAddr>,
    read_only: bool,
    wait: Duration,
) -> Result<()> {
    if !http.addr.ip().is_loopback() && http.token.is_none() && !http.keys && http.oauth.is_none() {
        tracing::warn!(
            "serving on {} without a token: anyone who can reach it can use it",
            http.addr
        );
    }
    // The owner lock lives as long as this server serves.
    let (engine, _owner_lock) = if read_only || config.store_url.is_some() {
        (Engine::open(config)?, None)
    } else {
        match folio_server::owner::claim(&config, wait).await? {
            folio_server::owner::Role::Owner(engine, lock) => (*engine, Some(lock)),
            folio_server::owner::Role::Attached(_) => bail!(
                "another folio server owns {}; stop it or serve read-only",
                config.data_dir.display()
            ),
        }
    };
    let shared = Shared::new(std::sync::Arc::new(engine), options)?;
    shared.start_background();
    // stdio clients on the same data directory attach to this process.
    let owner = if _owner_lock.is_some() {
        Some(folio_server::owner::Owner::start(shared.clone())?)
    } else {
        None
    };
    let listener = tokio::net::TcpListener::bind(http.addr)
        .await
        .with_context(|| format!("cannot listen on {}", http.addr))?;
    let cancel = tokio_util::sync::CancellationToken::new();
    if let Some(addr) = metrics {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr} for metrics"))?;
        eprintln!(
            "folio: serving metrics at http://{}/metrics",
            listener.local_addr()?
        );
        if !addr.ip().is_loopback() {
            eprintln!(
                "folio: warning: metrics at {addr} are served without credentials to anyone who \
                 can reach that address (per-library counts): keep it on a private interface"
            );
        }
        // The same Host and Origin checks as the main address: a page in a
        // browser cannot read the metrics through DNS rebinding.
        let app = folio_server::http::metrics_router(
            shared.clone(),
            http.allowed_hosts.clone(),
            http.allowed_origins.clone(),
        );
        let stop = cancel.clone();
        tokio::spawn(async move {
            if let Err(e) = folio_server::http::serve(listener, app, stop).await {
                tracing::error!("the metrics listener failed: {e}");
            }
        });
    }
    let app = folio_server::http::router(shared, &http, cancel.clone());
    eprintln!(
        "folio: serving MCP at http://{}/mcp",
        listener.local_addr()?
    );
    let stop = cancel.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    #[cfg(unix)]
    {
        let stop = cancel.clone();
        tokio::spawn(async move {
            if let Ok(mut term) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            {
                term.recv().await;
                stop.cancel();
            }
        });
    }
    folio_server::http::serve(listener, app, cancel).await?;
    if let Some(owner) = owner {
        // Attached stdio sessions get a moment to finish; then the lock goes
        // and they re-elect an owner among themselves.
        let _ = tokio::time::timeout(Duration::from_secs(2), owner.finish()).await;
    }
    Ok(())
}
