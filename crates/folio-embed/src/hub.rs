//! Models from the Hugging Face hub, fetched on first use: the hub's download
//! protocol (`{endpoint}/{repo}/resolve/{revision}/{path}`, content addresses
//! in `ETag` / `X-Linked-Etag`, large files redirected to a CDN) and its cache
//! layout (`models--org--name/blobs/<etag>`, `snapshots/<commit>/<path>` as
//! relative links to the blobs, `refs/<branch>`), so a model the Python
//! `huggingface_hub` already fetched is reused and one folio fetched is
//! theirs too.
//!
//! Every file is checked before it is used: against the SHA-256 the catalogue
//! pins where it pins one, else against the content address the hub states
//! for the pinned revision (the SHA-256 of a large file, the git blob SHA-1 of
//! a small one). A pinned file's blob is named by its pin, whatever the
//! server states, and a blob already cached is hashed again before it is
//! linked. Downloads resume (`Range`) from `blobs/<name>.incomplete`, stop
//! at the size the hub states, and are hashed from disk, streamed; a blob
//! appears only whole and checked (written, synced, renamed), and a
//! snapshot links only to whole blobs, so a killed fetch leaves no half
//! model. `HF_ENDPOINT`, `HF_HOME`, `HF_HUB_CACHE`, `HF_HUB_OFFLINE` and
//! `HF_TOKEN` are honoured as the Python client honours them.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha1::Sha1;
use sha2::{Digest, Sha256};

/// One file of a model repository, with the SHA-256 the catalogue pins for
/// it when it pins one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubFile {
    pub path: &'static str,
    pub sha256: Option<&'static str>,
    /// A file the model can do without (a missing one is skipped).
    pub optional: bool,
}

impl HubFile {
    pub const fn pinned(path: &'static str, sha256: &'static str) -> Self {
        HubFile {
            path,
            sha256: Some(sha256),
            optional: false,
        }
    }

    pub const fn checked_by_hub(path: &'static str) -> Self {
        HubFile {
            path,
            sha256: None,
            optional: false,
        }
    }

    pub const fn optional(path: &'static str) -> Self {
        HubFile {
            path,
            sha256: None,
            optional: true,
        }
    }
}

/// Why a model could not be fetched; each says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error(
        "{repo}@{revision} is not in the hub cache ({cache}) and HF_HUB_OFFLINE is set: fetch it once online \
         (`folio models pull`), or give a model folder with --model-dir, FOLIO_MODEL_DIR or [model] dir \
         (scripts/setup.sh installs the default model)"
    )]
    Offline {
        repo: String,
        revision: String,
        cache: String,
    },
    #[error(
        "cannot reach the model hub at {endpoint} for {repo} ({reason}): check the network or HF_ENDPOINT, \
         or give a model folder with --model-dir, FOLIO_MODEL_DIR or [model] dir \
         (scripts/setup.sh installs the default model)"
    )]
    Unreachable {
        endpoint: String,
        repo: String,
        reason: String,
    },
    #[error("{repo}@{revision} has no file {path} on {endpoint}")]
    NotFound {
        endpoint: String,
        repo: String,
        revision: String,
        path: String,
    },
    #[error("{repo} refused access ({status}): a gated or private model needs a token in HF_TOKEN")]
    Unauthorized { repo: String, status: u16 },
    #[error("{repo}: {path}: {reason}")]
    Protocol {
        repo: String,
        path: String,
        reason: String,
    },
    #[error(
        "{repo}: {path} does not match its pinned hash (expected {expected}, got {actual}); \
         nothing was kept"
    )]
    HashMismatch {
        repo: String,
        path: String,
        expected: String,
        actual: String,
    },
    #[error("hub cache {path}: {reason}")]
    Io { path: String, reason: String },
}

/// Progress of a fetch, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum FetchEvent<'a> {
    /// A file starts: its size when the hub says it, and the bytes an earlier
    /// interrupted fetch already has.
    Start {
        path: &'a str,
        size: Option<u64>,
        resumed: u64,
    },
    /// Bytes received since the last event.
    Bytes(u64),
    /// The file is whole and checked.
    Done { path: &'a str },
}

/// The hub's endpoint and the local cache.
#[derive(Debug, Clone)]
pub struct Hub {
    pub endpoint: String,
    pub cache: PathBuf,
    pub offline: bool,
    token: Option<String>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn truthy(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "1" | "on" | "yes" | "true"
    )
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A commit id rather than a branch or tag.
pub fn is_commit(revision: &str) -> bool {
    is_hex(revision, 40)
}

impl Hub {
    /// The hub as the environment configures it, like `huggingface_hub`.
    pub fn from_env() -> Hub {
        let home_dir = env("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
        let hf_home = env("HF_HOME").map(PathBuf::from).unwrap_or_else(|| {
            env("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home_dir.join(".cache"))
                .join("huggingface")
        });
        let cache = env("HF_HUB_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| hf_home.join("hub"));
        let token = env("HF_TOKEN").or_else(|| {
            let path = env("HF_TOKEN_PATH")
                .map(PathBuf::from)
                .unwrap_or_else(|| hf_home.join("token"));
            fs::read_to_string(path)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        });
        Hub {
            endpoint: env("HF_ENDPOINT")
                .unwrap_or_else(|| "https://huggingface.co".into())
                .trim_end_matches('/')
                .to_string(),
            cache,
            offline: env("HF_HUB_OFFLINE").is_some_and(|v| truthy(&v)),
            token,
        }
    }

    /// `models--org--name` in the cache.
    pub fn repo_dir(&self, repo: &str) -> PathBuf {
        self.cache
            .join(format!("models--{}", repo.replace('/', "--")))
    }

    fn io(&self, path: &Path, e: impl std::fmt::Display) -> HubError {
        HubError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        }
    }

    /// The commit a revision names locally: itself, or what `refs/` says.
    fn local_commit(&self, repo: &str, revision: &str) -> Option<String> {
        if is_commit(revision) {
            return Some(revision.to_string());
        }
        fs::read_to_string(self.repo_dir(repo).join("refs").join(revision))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| is_commit(s))
    }

    /// The snapshot folder holding every required file, if the cache has
    /// them all already (no network). Files with a pinned hash are checked.
    pub fn cached(&self, repo: &str, revision: &str, files: &[HubFile]) -> Option<PathBuf> {
        let commit = self.local_commit(repo, revision)?;
        let snapshot = self.repo_dir(repo).join("snapshots").join(&commit);
        files
            .iter()
            .filter(|f| !f.optional)
            .all(|f| present(&snapshot, f))
            .then_some(snapshot)
    }

    /// The snapshot folder of `repo` at `revision` with every file, fetching
    /// what the cache lacks.
    pub fn snapshot(
        &self,
        repo: &str,
        revision: &str,
        files: &[HubFile],
        on: &mut dyn FnMut(FetchEvent),
    ) -> Result<PathBuf, HubError> {
        // A pinned commit already whole in the cache needs no network;
        // offline, the cache is all there is (a branch as `refs/` names it).
        if is_commit(revision) || self.offline {
            if let Some(snapshot) = self.cached(repo, revision, files) {
                return Ok(snapshot);
            }
            if self.offline {
                return Err(HubError::Offline {
                    repo: repo.into(),
                    revision: revision.into(),
                    cache: self.cache.display().to_string(),
                });
            }
        }
        let client = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            // Per read of the body, not the whole download.
            .timeout(Duration::from_secs(120))
            .user_agent(concat!("folio/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| self.unreachable(repo, e))?;
        let repo_dir = self.repo_dir(repo);
        let mut commit: Option<String> = is_commit(revision).then(|| revision.to_string());
        for file in files {
            match self.fetch(&client, &repo_dir, repo, revision, &mut commit, file, on) {
                Err(HubError::NotFound { .. }) if file.optional => continue,
                other => other?,
            }
        }
        let commit = commit.ok_or_else(|| HubError::Protocol {
            repo: repo.into(),
            path: String::new(),
            reason: "the hub named no commit (X-Repo-Commit)".into(),
        })?;
        if !is_commit(revision) {
            let refs = repo_dir.join("refs");
            write_atomic(&refs.join(revision), commit.as_bytes()).map_err(|e| self.io(&refs, e))?;
        }
        Ok(repo_dir.join("snapshots").join(commit))
    }

    fn unreachable(&self, repo: &str, e: impl std::fmt::Display) -> HubError {
        HubError::Unreachable {
            endpoint: self.endpoint.clone(),
            repo: repo.into(),
            reason: e.to_string(),
        }
    }

    fn authorised(
        &self,
        request: reqwest::blocking::RequestBuilder,
        url: &str,
    ) -> reqwest::blocking::RequestBuilder {
        // The token goes to the hub only, never to the CDN it redirects to.
        match &self.token {
            Some(token) if url.starts_with(&format!("{}/", self.endpoint)) => {
                request.bearer_auth(token)
            }
            _ => request,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fetch(
        &self,
        client: &reqwest::blocking::Client,
        repo_dir: &Path,
        repo: &str,
        revision: &str,
        commit: &mut Option<String>,
        file: &HubFile,
        on: &mut dyn FnMut(FetchEvent),
    ) -> Result<(), HubError> {
        let protocol = |reason: String| HubError::Protocol {
            repo: repo.into(),
            path: file.path.into(),
            reason,
        };
        let url = format!("{}/{repo}/resolve/{revision}/{}", self.endpoint, file.path);
        let head = self
            .authorised(client.head(&url), &url)
            .send()
            .map_err(|e| self.unreachable(repo, e))?;
        let status = head.status();
        match status.as_u16() {
            401 | 403 => {
                return Err(HubError::Unauthorized {
                    repo: repo.into(),
                    status: status.as_u16(),
                });
            }
            404 => {
                return Err(HubError::NotFound {
                    endpoint: self.endpoint.clone(),
                    repo: repo.into(),
                    revision: revision.into(),
                    path: file.path.into(),
                });
            }
            _ if status.is_success() || status.is_redirection() => {}
            other => return Err(protocol(format!("HEAD {url} answered {other}"))),
        }
        let header = |name: &str| {
            head.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|v| {
                    v.trim()
                        .trim_start_matches("W/")
                        .trim_matches('"')
                        .to_string()
                })
        };
        let served_commit = header("x-repo-commit")
            .filter(|c| is_commit(c))
            .ok_or_else(|| protocol("the hub named no commit (X-Repo-Commit)".into()))?;
        match commit {
            Some(c) if *c != served_commit => {
                return Err(protocol(format!(
                    "the hub served commit {served_commit} for a fetch of {c}"
                )));
            }
            Some(_) => {}
            None => *commit = Some(served_commit.clone()),
        }
        let etag = header("x-linked-etag")
            .or_else(|| header("etag"))
            .ok_or_else(|| protocol("the hub gave no content address (ETag)".into()))?;
        let size = header("x-linked-size")
            .or_else(|| header("content-length"))
            .and_then(|s| s.parse::<u64>().ok());
        let expected = match (file.sha256, etag.as_str()) {
            (Some(pinned), stated)
                if is_hex(stated, 64) && !stated.eq_ignore_ascii_case(pinned) =>
            {
                return Err(HubError::HashMismatch {
                    repo: repo.into(),
                    path: file.path.into(),
                    expected: pinned.into(),
                    actual: format!("{stated} (the hub's content address)"),
                });
            }
            (Some(pinned), _) => Expected::Sha256(pinned.to_ascii_lowercase()),
            (None, stated) if is_hex(stated, 64) => Expected::Sha256(stated.to_ascii_lowercase()),
            (None, stated) if is_hex(stated, 40) => Expected::GitSha1(stated.to_ascii_lowercase()),
            (None, stated) => {
                return Err(protocol(format!(
                    "the hub's ETag {stated:?} is no content address, and no hash is pinned"
                )));
            }
        };
        if etag.contains(['/', '\\']) || etag.starts_with('.') {
            return Err(protocol(format!("unsafe ETag {etag:?}")));
        }
        let download = match head.headers().get("location").and_then(|v| v.to_str().ok()) {
            Some(location) if status.is_redirection() => reqwest::Url::parse(&url)
                .and_then(|base| base.join(location))
                .map_err(|e| protocol(format!("bad redirect {location:?}: {e}")))?
                .to_string(),
            _ => url.clone(),
        };
        // A pinned file's blob is named by its pin, never by what the
        // server states: a hostile endpoint cannot point a pinned file at a
        // blob it planted under another address.
        let name = match file.sha256 {
            Some(pinned) => pinned.to_ascii_lowercase(),
            None => etag.clone(),
        };
        let blobs = repo_dir.join("blobs");
        fs::create_dir_all(&blobs).map_err(|e| self.io(&blobs, e))?;
        let blob = blobs.join(&name);
        // One fetch of a blob at a time across processes.
        let lock_path = blobs.join(format!("{name}.lock"));
        let lock = File::create(&lock_path).map_err(|e| self.io(&lock_path, e))?;
        lock.lock().map_err(|e| self.io(&lock_path, e))?;
        // A blob already there is linked only if it hashes to what is
        // expected (another tool, or an older folio, may have put it there).
        if blob.exists() && !hash_file(&blob, &expected).is_ok_and(|h| h == expected.hex()) {
            fs::remove_file(&blob).map_err(|e| self.io(&blob, e))?;
        }
        if !blob.exists() {
            self.download(
                client, repo, file.path, &download, &blob, size, &expected, on,
            )?;
        }
        drop(lock);
        let _ = fs::remove_file(&lock_path);
        let snapshot = repo_dir
            .join("snapshots")
            .join(commit.as_deref().unwrap_or(&served_commit));
        link(&snapshot, file.path, &name).map_err(|e| self.io(&snapshot, e))?;
        on(FetchEvent::Done { path: file.path });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn download(
        &self,
        client: &reqwest::blocking::Client,
        repo: &str,
        path: &str,
        url: &str,
        blob: &Path,
        size: Option<u64>,
        expected: &Expected,
        on: &mut dyn FnMut(FetchEvent),
    ) -> Result<(), HubError> {
        let partial = blob.with_extension("incomplete");
        let mut have = fs::metadata(&partial).map_or(0, |m| m.len());
        if size.is_some_and(|s| have > s) {
            have = 0;
            let _ = fs::remove_file(&partial);
        }
        // Never more than the stated size (or, unstated, `MAX_BLOB_BYTES`).
        let cap = size.unwrap_or(MAX_BLOB_BYTES);
        let mut out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&partial)
            .map_err(|e| self.io(&partial, e))?;
        on(FetchEvent::Start {
            path,
            size,
            resumed: have,
        });
        if size != Some(have) {
            let mut request = self.authorised(client.get(url), url);
            if have > 0 {
                request = request.header("Range", format!("bytes={have}-"));
            }
            let mut response = request.send().map_err(|e| self.unreachable(repo, e))?;
            let status = response.status().as_u16();
            match status {
                206 if have > 0 => {}
                200 => {
                    if have > 0 {
                        // The server ignored the range: start over.
                        out.set_len(0).map_err(|e| self.io(&partial, e))?;
                        have = 0;
                    }
                }
                other => {
                    return Err(HubError::Protocol {
                        repo: repo.into(),
                        path: path.into(),
                        reason: format!("GET {url} answered {other}"),
                    });
                }
            }
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = response
                    .read(&mut buf)
                    .map_err(|e| self.unreachable(repo, e))?;
                if n == 0 {
                    break;
                }
                if have + n as u64 > cap {
                    drop(out);
                    let _ = fs::remove_file(&partial);
                    return Err(HubError::Protocol {
                        repo: repo.into(),
                        path: path.into(),
                        reason: format!("GET {url} sent more than the {cap} bytes stated"),
                    });
                }
                out.write_all(&buf[..n]).map_err(|e| self.io(&partial, e))?;
                have += n as u64;
                on(FetchEvent::Bytes(n as u64));
            }
        }
        out.sync_all().map_err(|e| self.io(&partial, e))?;
        drop(out);
        // Hashed from the file, streamed: a resumed download's earlier
        // bytes included, and no body held in memory.
        let actual = hash_file(&partial, expected).map_err(|e| self.io(&partial, e))?;
        if actual != expected.hex() {
            let _ = fs::remove_file(&partial);
            return Err(HubError::HashMismatch {
                repo: repo.into(),
                path: path.into(),
                expected: expected.hex().into(),
                actual,
            });
        }
        fs::rename(&partial, blob).map_err(|e| self.io(blob, e))?;
        if let Some(dir) = blob.parent() {
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    }
}

/// The largest download whose size the hub does not state.
const MAX_BLOB_BYTES: u64 = 64 << 30;

/// What a file's bytes must hash to.
enum Expected {
    Sha256(String),
    /// Git's blob id: SHA-1 of `blob <len>\0` and the bytes.
    GitSha1(String),
}

impl Expected {
    fn hex(&self) -> &str {
        match self {
            Expected::Sha256(h) | Expected::GitSha1(h) => h,
        }
    }
}

/// The hash `expected` is of, of the file at `path`, streamed.
fn hash_file(path: &Path, expected: &Expected) -> std::io::Result<String> {
    match expected {
        Expected::Sha256(_) => sha256_file(path),
        Expected::GitSha1(_) => git_blob_sha1_file(path),
    }
}

/// Git's id of the blob a file holds, streamed (the header's length is
/// the file's).
fn git_blob_sha1_file(path: &Path) -> std::io::Result<String> {
    let length = fs::metadata(path)?.len();
    let mut h = Sha1::new();
    h.update(format!("blob {length}\0").as_bytes());
    stream(path, |bytes| h.update(bytes))?;
    Ok(hex::encode(h.finalize()))
}

/// SHA-256 of a file, streamed.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut h = Sha256::new();
    stream(path, |bytes| h.update(bytes))?;
    Ok(hex::encode(h.finalize()))
}

/// Hands a file's bytes to `take`, a megabyte at a time.
fn stream(path: &Path, mut take: impl FnMut(&[u8])) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        take(&buf[..n]);
    }
}

/// Whether a snapshot has the file whole: a link to a blob named by the
/// pinned hash, or bytes that hash to it.
fn present(snapshot: &Path, file: &HubFile) -> bool {
    let path = snapshot.join(file.path);
    if !path.is_file() {
        return false;
    }
    let Some(pinned) = file.sha256 else {
        return true;
    };
    let linked = fs::read_link(&path).ok().and_then(|target| {
        target
            .file_name()
            .map(|n| n.to_string_lossy().eq_ignore_ascii_case(pinned))
    });
    linked == Some(true) || sha256_file(&path).is_ok_and(|h| h.eq_ignore_ascii_case(pinned))
}

/// Links `snapshot/path` to `blobs/<etag>` with a relative link, as the
/// Python client does, replacing any earlier link atomically.
fn link(snapshot: &Path, path: &str, etag: &str) -> std::io::Result<()> {
    let dest = snapshot.join(path);
    let parent = dest.parent().unwrap_or(snapshot);
    fs::create_dir_all(parent)?;
    let depth = 2 + path.matches('/').count();
    let target = format!("{}blobs/{etag}", "../".repeat(depth));
    let temp = parent.join(format!(".{}.link-{}", etag, std::process::id()));
    let _ = fs::remove_file(&temp);
    std::os::unix::fs::symlink(&target, &temp)?;
    fs::rename(&temp, &dest)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&temp, bytes)?;
    fs::rename(&temp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_blob_ids_match_git() {
        let dir = tempfile::tempdir().unwrap();
        let id = |bytes: &[u8]| {
            let path = dir.path().join("blob");
            fs::write(&path, bytes).unwrap();
            git_blob_sha1_file(&path).unwrap()
        };
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(id(b"hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
        // The empty blob.
        assert_eq!(id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    }

    #[test]
    fn links_are_relative_to_the_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("models--a--b");
        fs::create_dir_all(repo.join("blobs")).unwrap();
        fs::write(repo.join("blobs/abc"), b"x").unwrap();
        let snapshot = repo.join("snapshots/0123");
        link(&snapshot, "onnx/model.onnx", "abc").unwrap();
        assert_eq!(
            fs::read_link(snapshot.join("onnx/model.onnx")).unwrap(),
            PathBuf::from("../../../blobs/abc")
        );
        assert_eq!(fs::read(snapshot.join("onnx/model.onnx")).unwrap(), b"x");
    }
}
