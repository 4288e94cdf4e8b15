//! The lexical index's folder with its large postings files read, not
//! mapped: tantivy maps every file of a segment, and a mapped page a search
//! has read stays in the process's resident memory while the mapping lives.
//! Over a few hundred searches of a million-chunk library the postings of
//! common terms filled 190 MB of it (six 36 MB files, 30 MB of each
//! resident). Here a postings file (`.idx`) over `READ_FROM` bytes is read
//! with `pread` for each term a search opens, into a buffer dropped with
//! the search: the bytes come from the kernel's page cache as they did, and
//! what stays resident is only what a search is using. A smaller postings
//! file stays mapped, as does every other file (term dictionaries, norms,
//! key columns: small, or read a value at a time): copying a term's whole
//! postings cost lexical search at 100,000 chunks (five 5 MB files) 9 % at
//! the median, where mapping them costs at most their size.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::HasLen;
use tantivy::directory::error::{
    DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError,
};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, OwnedBytes, WatchCallback,
    WatchHandle, WritePtr,
};

/// Postings files larger than this are read rather than mapped.
const READ_FROM: u64 = 16 << 20;

/// `MmapDirectory` but for large postings files, which are read.
#[derive(Clone, Debug)]
pub struct PostingsFiles {
    mapped: MmapDirectory,
    root: PathBuf,
    read_from: u64,
}

impl PostingsFiles {
    pub fn open(root: &Path) -> Result<Self, OpenDirectoryError> {
        Ok(PostingsFiles {
            mapped: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
            read_from: READ_FROM,
        })
    }
}

/// Whether tantivy keeps postings in the file at `path`.
fn is_postings(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "idx")
}

/// A file read at an offset for each slice asked of it.
#[derive(Debug)]
struct ReadFile {
    file: File,
    len: usize,
}

impl HasLen for ReadFile {
    fn len(&self) -> usize {
        self.len
    }
}

impl FileHandle for ReadFile {
    fn read_bytes(&self, range: Range<usize>) -> io::Result<OwnedBytes> {
        if range.end > self.len || range.start > range.end {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bytes {range:?} of a file of {}", self.len),
            ));
        }
        let mut buffer = vec![0; range.len()];
        self.file.read_exact_at(&mut buffer, range.start as u64)?;
        Ok(OwnedBytes::new(buffer))
    }
}

impl Directory for PostingsFiles {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        if !is_postings(path) {
            return self.mapped.get_file_handle(path);
        }
        let full = self.root.join(path);
        let io_error = |e: io::Error| match e.kind() {
            io::ErrorKind::NotFound => OpenReadError::FileDoesNotExist(full.clone()),
            _ => OpenReadError::wrap_io_error(e, full.clone()),
        };
        let len = std::fs::metadata(&full).map_err(io_error)?.len();
        if len <= self.read_from {
            return self.mapped.get_file_handle(path);
        }
        let file = File::open(&full).map_err(io_error)?;
        Ok(Arc::new(ReadFile {
            file,
            len: len as usize,
        }))
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.mapped.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.mapped.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.mapped.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.mapped.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.mapped.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.mapped.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.mapped.acquire_lock(lock)
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.mapped.watch(callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the process maps a file named `name` (its mappings listed
    /// in /proc/self/maps).
    fn mapped(name: &str) -> bool {
        std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .any(|line| line.ends_with(name))
    }

    // A slice of a large postings file reads the file's bytes at its
    // offset, with the file never mapped; a slice past the end is an
    // error, not a panic; a small postings file and other files are
    // mapped.
    #[test]
    fn large_postings_are_read_at_their_offset() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(dir.path().join("large.idx"), &bytes).unwrap();
        std::fs::write(dir.path().join("small.idx"), &bytes[..4_000]).unwrap();
        std::fs::write(dir.path().join("s.term"), b"dictionary").unwrap();
        let mut files = PostingsFiles::open(dir.path()).unwrap();
        files.read_from = 5_000;
        let handle = files.get_file_handle(Path::new("large.idx")).unwrap();
        assert!(!mapped("/large.idx"));
        assert_eq!(handle.len(), bytes.len());
        assert_eq!(
            handle.read_bytes(4_000..4_100).unwrap().as_slice(),
            &bytes[4_000..4_100]
        );
        assert!(handle.read_bytes(20..20).unwrap().is_empty());
        assert!(handle.read_bytes(9_990..10_001).is_err());
        let term = files.get_file_handle(Path::new("s.term")).unwrap();
        assert_eq!(term.read_bytes(0..4).unwrap().as_slice(), b"dict");
        let small = files.get_file_handle(Path::new("small.idx")).unwrap();
        assert_eq!(
            small.read_bytes(100..200).unwrap().as_slice(),
            &bytes[100..200]
        );
        assert!(mapped("/small.idx") && mapped("/s.term") && !mapped("/large.idx"));
        assert!(matches!(
            files.get_file_handle(Path::new("gone.idx")),
            Err(OpenReadError::FileDoesNotExist(_))
        ));
    }
}
