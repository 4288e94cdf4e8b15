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

/// The folders file ingestion may read from. Empty means unrestricted (the
/// CLI acting on its own user's behalf); servers configure roots.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    roots: Vec<PathBuf>,
}

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
        Ok(Roots { roots })
    }

    pub fn unrestricted() -> Self {
        Roots { roots: Vec::new() }
    }

    pub fn is_unrestricted(&self) -> bool {
        self.roots.is_empty()
    }

    /// Resolves `path` (symlinks included) and checks it lies inside a root.
    pub fn confine(&self, path: &Path) -> Result<CanonicalPath, SourceError> {
        let shown = path.display().to_string();
        let canonical = std::fs::canonicalize(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SourceError::NotFound {
                path: shown.clone(),
            },
            _ => SourceError::Io {
                path: shown.clone(),
                reason: e.to_string(),
            },
        })?;
        // Path::starts_with compares whole components: /data2 is not in /data.
        if self.roots.is_empty() || self.roots.iter().any(|root| canonical.starts_with(root)) {
            Ok(CanonicalPath(canonical))
        } else {
            let roots = self
                .roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            Err(SourceError::OutsideRoots { path: shown, roots })
        }
    }
}

fn hidden(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with('.')
}

/// The files under a folder, recursively, in sorted order, that `wanted`
/// accepts (by path). Hidden files and folders are skipped; symlinks are
/// followed only when they resolve inside the roots. Unreadable entries are
/// returned as errors so the caller can report them and carry on.
pub fn walk(
    dir: &CanonicalPath,
    roots: &Roots,
    wanted: &dyn Fn(&Path) -> bool,
) -> Vec<Result<CanonicalPath, SourceError>> {
    let mut out = Vec::new();
    let walker = walkdir::WalkDir::new(dir.as_path())
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !hidden(e.file_name()));
    for entry in walker {
        match entry {
            Ok(entry) if entry.file_type().is_file() => {
                if wanted(entry.path()) {
                    out.push(roots.confine(entry.path()));
                }
            }
            Ok(_) => {}
            Err(e) => {
                let path = e
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| dir.locator());
                out.push(Err(SourceError::Io {
                    path,
                    reason: e.to_string(),
                }));
            }
        }
    }
    out
}

/// Reads a file, refusing it before reading when it is over `max_bytes`.
pub fn read_file(path: &CanonicalPath, max_bytes: u64) -> Result<Vec<u8>, SourceError> {
    let shown = path.locator();
    let io = |e: std::io::Error| SourceError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    };
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
        let files: Vec<String> = walk(&root, &roots, &|p| {
            p.extension().is_some_and(|e| e != "png")
        })
        .into_iter()
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
