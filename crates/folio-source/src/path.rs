//! Root confinement: a `CanonicalPath` can only be made by `Roots::confine`,
//! which resolves symlinks and compares by path component.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::SourceError;

/// A path that exists, has symlinks resolved, and lies inside an allowed root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalPath(PathBuf);

impl CanonicalPath {
    pub fn as_path(&self) -> &Path {
        &self.0
    }

    /// The path as a string: the document's source locator.
    pub fn locator(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

/// The folders file ingestion may read from. With roots configured, only
/// inside them. Without, either anywhere (the CLI acting on its own user's
/// behalf) or, for servers whose clients are agents, anywhere but the
/// places that hold a user's secrets and the system's (`guarded`).
#[derive(Debug, Clone, Default)]
pub struct Roots {
    roots: Vec<PathBuf>,
    /// Refused without roots: `DENIED_SYSTEM` and the home's dot-folders.
    guard: Option<Guard>,
}

#[derive(Debug, Clone)]
struct Guard {
    home: Option<PathBuf>,
}

/// System trees no agent needs to read documents from: kernel and process
/// state, devices, system configuration, runtime sockets, boot files.
const DENIED_SYSTEM: [&str; 6] = ["/proc", "/sys", "/dev", "/etc", "/run", "/boot"];

impl Roots {
    /// Canonicalises each root; a root that does not exist is an error.
    pub fn new(roots: &[PathBuf]) -> Result<Self, SourceError> {
        let roots = roots
            .iter()
            .map(|r| {
                std::fs::canonicalize(r).map_err(|_| SourceError::NotFound {
                    path: r.display().to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Roots { roots, guard: None })
    }

    /// `roots` when there are any; otherwise everything except the
    /// system trees (`/proc`, `/sys`, `/dev`, `/etc`, `/run`, `/boot`) and
    /// the dot-folders and dot-files of `home` (`~/.ssh`, `~/.aws`, …).
    pub fn guarded(roots: &[PathBuf], home: Option<PathBuf>) -> Result<Self, SourceError> {
        let mut confined = Self::new(roots)?;
        if confined.roots.is_empty() {
            let home = home.map(|h| std::fs::canonicalize(&h).unwrap_or(h));
            confined.guard = Some(Guard { home });
        }
        Ok(confined)
    }

    pub fn unrestricted() -> Self {
        Roots::default()
    }

    pub fn is_unrestricted(&self) -> bool {
        self.roots.is_empty() && self.guard.is_none()
    }

    /// Whether `path` (absolute) lies where ingestion may read.
    fn allows(&self, path: &Path) -> bool {
        // Path::starts_with compares whole components: /data2 is not in /data.
        if !self.roots.is_empty() {
            return self.roots.iter().any(|root| path.starts_with(root));
        }
        let Some(guard) = &self.guard else {
            return true;
        };
        if DENIED_SYSTEM.iter().any(|denied| path.starts_with(denied)) {
            return false;
        }
        match guard
            .home
            .as_deref()
            .and_then(|home| path.strip_prefix(home).ok())
        {
            Some(inside) => !inside
                .components()
                .next()
                .is_some_and(|first| hidden(first.as_os_str())),
            None => true,
        }
    }

    fn outside(&self, shown: String) -> SourceError {
        let roots = if self.roots.is_empty() {
            "anywhere but /proc, /sys, /dev, /etc, /run, /boot and the home folder's dot-files \
             (configure [ingest] roots to choose)"
                .to_string()
        } else {
            self.roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        SourceError::OutsideRoots { path: shown, roots }
    }

    /// Resolves `path` (symlinks included) and checks it lies inside a root
    /// and is a regular file or a folder (devices, FIFOs and sockets are
    /// refused: reading them blocks or never ends). The path as written is
    /// checked before the file system is asked anything, so a path outside
    /// the roots is refused alike whether or not it exists.
    pub fn confine(&self, path: &Path) -> Result<CanonicalPath, SourceError> {
        let shown = path.display().to_string();
        if let Ok(written) = std::path::absolute(path)
            && !self.allows(&lexical(&written))
        {
            return Err(self.outside(shown));
        }
        let canonical = std::fs::canonicalize(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SourceError::NotFound {
                path: shown.clone(),
            },
            _ => SourceError::io(shown.clone(), &e),
        })?;
        if !self.allows(&canonical) {
            return Err(self.outside(shown));
        }
        let kind = std::fs::metadata(&canonical).map_err(|e| SourceError::io(shown.clone(), &e))?;
        if !kind.is_file() && !kind.is_dir() {
            return Err(SourceError::NotAFile { path: shown });
        }
        Ok(CanonicalPath(canonical))
    }
}

/// `path` with `.` and `..` resolved by name alone (no symlinks followed).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn hidden(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with('.')
}

/// The files under a folder, recursively, in sorted order, that `wanted`
/// accepts (by path), as the folder is read: only one folder's entries (to
/// sort them) are held at a time, so a folder of any size is walked in flat
/// memory. Hidden files and folders are skipped; symlinks are followed only
/// when they resolve inside the roots. Unreadable entries are yielded as
/// errors so the caller can report them and carry on.
pub fn walk_lazily<'a>(
    dir: &CanonicalPath,
    roots: &'a Roots,
    wanted: &'a (dyn Fn(&Path) -> bool + Sync),
) -> impl Iterator<Item = Result<CanonicalPath, SourceError>> + Send + use<'a> {
    let top = dir.locator();
    walker(dir).filter_map(move |entry| match entry {
        Ok(entry) if entry.file_type().is_file() && wanted(entry.path()) => {
            Some(roots.confine(entry.path()))
        }
        Ok(_) => None,
        Err(e) => {
            let path = e
                .path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| top.clone());
            Some(Err(match e.io_error() {
                Some(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
                    SourceError::Unreadable { path }
                }
                _ => SourceError::Io {
                    path,
                    reason: e.to_string(),
                },
            }))
        }
    })
}

/// How many items [`walk_lazily`] yields, without resolving each path.
pub fn count_walked(dir: &CanonicalPath, wanted: &dyn Fn(&Path) -> bool) -> usize {
    walker(dir)
        .filter(|entry| match entry {
            Ok(entry) => entry.file_type().is_file() && wanted(entry.path()),
            Err(_) => true,
        })
        .count()
}

fn walker(
    dir: &CanonicalPath,
) -> walkdir::FilterEntry<walkdir::IntoIter, impl FnMut(&walkdir::DirEntry) -> bool + use<>> {
    walkdir::WalkDir::new(dir.as_path())
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !hidden(e.file_name()))
}

/// Reads a file, refusing it before reading when it is over `max_bytes`.
pub fn read_file(path: &CanonicalPath, max_bytes: u64) -> Result<Vec<u8>, SourceError> {
    let shown = path.locator();
    let io = |e: std::io::Error| SourceError::io(shown.clone(), &e);
    let file = std::fs::File::open(path.as_path()).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SourceError::NotAFile { path: shown });
    }
    if meta.len() > max_bytes {
        return Err(SourceError::TooLarge {
            input: shown,
            what: "file",
            limit: max_bytes,
            actual: meta.len(),
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow while we read it: cap the read as well.
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(SourceError::TooLarge {
            input: shown,
            what: "file",
            limit: max_bytes,
            actual: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confinement_resolves_symlinks_and_compares_components() {
        let base = tempfile::tempdir().unwrap();
        let data = base.path().join("data");
        let data2 = base.path().join("data2");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&data2).unwrap();
        std::fs::write(data.join("in.txt"), "x").unwrap();
        std::fs::write(data2.join("out.txt"), "x").unwrap();
        std::os::unix::fs::symlink(data2.join("out.txt"), data.join("link.txt")).unwrap();
        let roots = Roots::new(std::slice::from_ref(&data)).unwrap();
        assert!(roots.confine(&data.join("in.txt")).is_ok());
        assert!(matches!(
            roots.confine(&data2.join("out.txt")),
            Err(SourceError::OutsideRoots { .. })
        ));
        assert!(matches!(
            roots.confine(&data.join("link.txt")),
            Err(SourceError::OutsideRoots { .. })
        ));
        assert!(matches!(
            roots.confine(&data.join("../data2/out.txt")),
            Err(SourceError::OutsideRoots { .. })
        ));
        assert!(matches!(
            roots.confine(&data.join("missing.txt")),
            Err(SourceError::NotFound { .. })
        ));
    }

    // Issue 16: with no roots configured, a server's agents could read
    // ~/.ssh, /etc and /proc; and whether a path outside the roots existed
    // showed in the error.
    #[test]
    fn guarded_confinement_refuses_secrets_system_trees_and_devices() {
        let base = tempfile::tempdir().unwrap();
        let home = base.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("papers")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "secret").unwrap();
        std::fs::write(home.join(".bashrc"), "secret").unwrap();
        std::fs::write(home.join("papers/a.md"), "# A").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh/id_ed25519"), home.join("papers/key.md"))
            .unwrap();
        let roots = Roots::guarded(&[], Some(home.clone())).unwrap();
        assert!(roots.confine(&home.join("papers/a.md")).is_ok());
        for refused in [
            home.join(".ssh/id_ed25519"),
            home.join(".bashrc"),
            home.join("papers/key.md"),
            home.join("papers/../.ssh/id_ed25519"),
            home.join(".aws/credentials"),
            PathBuf::from("/etc/passwd"),
            PathBuf::from("/etc/no-such-file"),
            PathBuf::from("/proc/self/environ"),
            PathBuf::from("/sys/kernel/no-such-file"),
        ] {
            assert!(
                matches!(
                    roots.confine(&refused),
                    Err(SourceError::OutsideRoots { .. })
                ),
                "{}: {:?}",
                refused.display(),
                roots.confine(&refused)
            );
        }
        assert!(matches!(
            roots.confine(Path::new("/dev/null")),
            Err(SourceError::OutsideRoots { .. })
        ));
        // Devices and FIFOs are refused wherever they are.
        let fifo = home.join("papers/pipe.md");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert!(matches!(
            Roots::unrestricted().confine(&fifo),
            Err(SourceError::NotAFile { .. })
        ));
        // With roots, a missing path outside them is refused as outside,
        // like an existing one: the answer does not say which.
        let rooted = Roots::new(&[home.join("papers")]).unwrap();
        let missing = rooted.confine(&base.path().join("nothing-here"));
        let existing = rooted.confine(&home.join(".bashrc"));
        assert!(
            matches!(missing, Err(SourceError::OutsideRoots { .. })),
            "{missing:?}"
        );
        assert!(matches!(existing, Err(SourceError::OutsideRoots { .. })));
    }

    #[test]
    fn walk_is_sorted_recursive_and_skips_hidden() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path();
        std::fs::create_dir_all(dir.join("sub/.git")).unwrap();
        for f in [
            "b.md",
            "a.txt",
            "sub/c.txt",
            "sub/.git/x.txt",
            ".hidden.txt",
            "image.png",
        ] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        let roots = Roots::unrestricted();
        let root = roots.confine(dir).unwrap();
        let files: Vec<String> = walk_lazily(&root, &roots, &|p| {
            p.extension().is_some_and(|e| e != "png")
        })
        .map(|r| {
            r.unwrap()
                .as_path()
                .strip_prefix(root.as_path())
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
        assert_eq!(files, ["a.txt", "b.md", "sub/c.txt"]);
        // The count walk agrees without resolving paths.
        assert_eq!(
            count_walked(&root, &|p| p.extension().is_some_and(|e| e != "png")),
            3
        );
    }

    #[test]
    fn oversized_files_are_refused_before_reading() {
        let base = tempfile::tempdir().unwrap();
        let file = base.path().join("big.txt");
        std::fs::write(&file, vec![b'a'; 100]).unwrap();
        let path = Roots::unrestricted().confine(&file).unwrap();
        assert!(matches!(
            read_file(&path, 99),
            Err(SourceError::TooLarge { actual: 100, .. })
        ));
        assert_eq!(read_file(&path, 100).unwrap().len(), 100);
    }
}
