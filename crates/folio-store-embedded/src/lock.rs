//! The data directory's write lock: one process at a time owns writes. The
//! lock is an OS file lock, so it is released when the owner dies, even by
//! kill -9; the pid written into the file only helps the error message.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use folio_store::StoreError;

/// Held while the process may write. Dropping it releases the lock.
#[derive(Debug)]
pub struct WriteLock {
    file: File,
}

impl WriteLock {
    /// Takes the lock, waiting up to `wait` for another owner to finish.
    pub fn acquire(dir: &Path, wait: Duration) -> Result<Self, StoreError> {
        Self::acquire_file(dir, "write.lock", wait)
    }

    /// Takes the lock file `name` in `dir` (the same mechanism serves other
    /// roles: the serving owner of a data directory holds `owner.lock`).
    pub fn acquire_file(dir: &Path, name: &str, wait: Duration) -> Result<Self, StoreError> {
        let (mut file, path) = open_lock_file(dir, name)?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut pid = String::new();
                    let _ = file.read_to_string(&mut pid);
                    return Err(StoreError::Busy {
                        path: dir.display().to_string(),
                        pid: pid.trim().to_string(),
                        waited_ms: start.elapsed().as_millis() as u64,
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(StoreError::io(path.display().to_string(), e));
                }
            }
        }
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = write!(file, "{}", std::process::id());
        Ok(WriteLock { file })
    }

    /// Takes the lock only if it is free right now.
    pub fn try_acquire(dir: &Path) -> Result<Option<Self>, StoreError> {
        Self::try_acquire_file(dir, "write.lock")
    }

    /// Takes the lock file `name` only if it is free right now.
    pub fn try_acquire_file(dir: &Path, name: &str) -> Result<Option<Self>, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir.display().to_string(), e))?;
        match Self::acquire_file(dir, name, Duration::ZERO) {
            Ok(lock) => Ok(Some(lock)),
            Err(StoreError::Busy { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Opens (creating) the lock file `name` in `dir`, without truncating what
/// another holder wrote into it.
fn open_lock_file(dir: &Path, name: &str) -> Result<(File, std::path::PathBuf), StoreError> {
    let path = dir.join(name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| StoreError::io(path.display().to_string(), e))?;
    Ok((file, path))
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Held (shared: several may) by each process whose bulk write defers the
/// lexical index until it settles (`EmbeddedStore::start_bulk`). Readers
/// leave the lag to it while it lives; like the write lock, the OS
/// releases it when the process dies.
#[derive(Debug)]
pub struct BulkMark {
    file: File,
}

const BULK_MARK: &str = "bulk.lock";

impl BulkMark {
    pub fn hold(dir: &Path) -> Result<Self, StoreError> {
        let (file, path) = open_lock_file(dir, BULK_MARK)?;
        // Waits only while a reader probes (`held`), an instant.
        file.lock_shared()
            .map_err(|e| StoreError::io(path.display().to_string(), e))?;
        Ok(BulkMark { file })
    }

    /// Whether a process holds the mark on `dir`. Opens the file for
    /// reading only (a read-only process creates nothing); a missing file
    /// means no process ever held it.
    pub fn held(dir: &Path) -> bool {
        let Ok(file) = File::open(dir.join(BULK_MARK)) else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::warn!(error = %e, "the bulk-write mark could not be read; taken as free");
                false
            }
        }
    }
}

impl Drop for BulkMark {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}
