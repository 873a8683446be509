//! Where the log's files live: the `Storage` seam. `OsStorage` is the real
//! directory (std::fs, positional reads and writes, fsync); `MemStorage`
//! (mem.rs) keeps the files in memory, tells written from synced bytes and
//! can simulate a crash. Both carry `Faults`, switches that make the next
//! fsync fail, tear a write or fill the disk, so tests reach the log's
//! error paths without hooks in the log itself.
//!
//! The hot path is one `write_at` per batch (writer) and one `sync_data`
//! per group commit (flusher): a virtual call and one relaxed load each.

use std::any::Any;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// How `Storage::open` opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// An existing file, for reading only.
    Read,
    /// An existing file, for reading and writing.
    Write,
    /// Created if missing, kept as it is otherwise.
    CreateKeep,
    /// Created if missing, emptied otherwise.
    CreateTruncate,
}

/// An open log file. Positional I/O only: no cursor, so one handle is shared
/// by the writer (writes) and the flusher (syncs).
pub trait LogFile: Send + Sync {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize>;
    /// Truncates or extends (with zeros) to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    fn size(&self) -> io::Result<u64>;
    /// Makes the file's data durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Makes the file's data and metadata durable (`fsync`).
    fn sync_all(&self) -> io::Result<()>;

    fn read_exact_at(&self, mut buf: &mut [u8], mut off: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, off) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                Ok(n) => {
                    buf = &mut buf[n..];
                    off += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn write_all_at(&self, mut buf: &[u8], mut off: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write_at(buf, off) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => {
                    buf = &buf[n..];
                    off += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Held while a log has its directory open; dropping it releases the lock.
pub type DirLock = Box<dyn Any + Send + Sync>;

/// The file system under a log directory. Paths are the ones the log builds
/// (`dir.join(name)`), so error messages name real files.
pub trait Storage: Send + Sync + fmt::Debug {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// The names of the entries in `dir` (names that are not UTF-8 skipped).
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn LogFile>>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Makes creations, renames and removals in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Takes the directory's exclusive lock; `Ok(None)` if another holder
    /// (process or log) has it.
    fn lock(&self, dir: &Path) -> io::Result<Option<DirLock>>;
    /// The fault switches of this storage.
    fn faults(&self) -> &Faults;
}

fn eio() -> io::Error {
    io::Error::from_raw_os_error(libc::EIO)
}

pub(crate) fn enospc() -> io::Error {
    io::Error::from_raw_os_error(libc::ENOSPC)
}

/// Fault switches, off by default. Errors carry real errno values (EIO,
/// ENOSPC) so they map to `LogError::Io` / `LogError::NoSpace` as real ones.
#[derive(Debug, Default)]
pub struct Faults {
    /// Any switch set: the one load the hot path pays.
    armed: AtomicBool,
    /// The next n file writes or syncs fail with EIO.
    io: AtomicU32,
    /// The next n file syncs fail with EIO.
    syncs: AtomicU32,
    /// The next write keeps only its first `torn - 1` bytes, then fails (0: off).
    torn: AtomicU64,
    /// The disk is full: growing a file fails with ENOSPC.
    full: AtomicBool,
}

impl Faults {
    /// The next `n` file writes or syncs (whichever come first) fail with EIO.
    pub fn fail_io(&self, n: u32) {
        self.io.store(n, Ordering::SeqCst);
        self.rearm();
    }

    /// The next `n` file syncs (`sync_data`/`sync_all`) fail with EIO.
    pub fn fail_syncs(&self, n: u32) {
        self.syncs.store(n, Ordering::SeqCst);
        self.rearm();
    }

    /// The next file write persists only its first `keep` bytes, then fails
    /// with EIO (a write torn by a failing device).
    pub fn tear_next_write(&self, keep: u64) {
        self.torn.store(keep + 1, Ordering::SeqCst);
        self.rearm();
    }

    /// While on, writes and `set_len` that grow a file fail with ENOSPC;
    /// overwriting allocated bytes still works (a full disk).
    pub fn set_full(&self, on: bool) {
        self.full.store(on, Ordering::SeqCst);
        self.rearm();
    }

    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::SeqCst)
    }

    fn any(&self) -> bool {
        self.io.load(Ordering::SeqCst) > 0
            || self.syncs.load(Ordering::SeqCst) > 0
            || self.torn.load(Ordering::SeqCst) > 0
            || self.full.load(Ordering::SeqCst)
    }

    /// Recomputes `armed`. Checking again after a `false` covers a switch
    /// set by another thread between our look and our store.
    fn rearm(&self) {
        loop {
            let any = self.any();
            self.armed.store(any, Ordering::SeqCst);
            if any || !self.any() {
                return;
            }
        }
    }

    #[inline]
    pub(crate) fn armed(&self) -> bool {
        self.armed.load(Ordering::Relaxed)
    }

    /// Takes one from a counter if it is non-zero.
    fn take(&self, c: &AtomicU32) -> bool {
        let hit = c
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if hit {
            self.rearm();
        }
        hit
    }

    /// Before a file sync: the error to return instead, if any.
    pub(crate) fn on_sync(&self) -> io::Result<()> {
        if self.armed() && (self.take(&self.io) || self.take(&self.syncs)) {
            return Err(eio());
        }
        Ok(())
    }

    /// Before a write of `len` bytes that grows the file by `growth`: `Err`
    /// to fail it outright, `Ok(Some(k))` to write only `k` bytes and then
    /// fail (`torn_error`), `Ok(None)` to write it all.
    pub(crate) fn on_write(&self, len: u64, growth: u64) -> io::Result<Option<u64>> {
        if !self.armed() {
            return Ok(None);
        }
        if self.take(&self.io) {
            return Err(eio());
        }
        if growth > 0 && self.is_full() {
            return Err(enospc());
        }
        let torn = self.torn.swap(0, Ordering::SeqCst);
        if torn > 0 {
            self.rearm();
            return Ok(Some((torn - 1).min(len)));
        }
        Ok(None)
    }

    pub(crate) fn torn_error() -> io::Error {
        eio()
    }
}

/// The real file system: what the log did before the seam, exactly.
#[derive(Debug, Default)]
pub struct OsStorage {
    faults: Arc<Faults>,
}

impl OsStorage {
    pub fn new() -> Self {
        OsStorage::default()
    }
}

struct OsFile {
    file: File,
    faults: Arc<Faults>,
}

impl LogFile for OsFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        self.file.read_at(buf, off)
    }

    #[inline]
    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
        let f = &self.faults;
        if f.armed() {
            let growth = (off + buf.len() as u64).saturating_sub(self.file.metadata()?.len());
            if let Some(k) = f.on_write(buf.len() as u64, growth)? {
                self.file.write_all_at(&buf[..k as usize], off)?;
                return Err(Faults::torn_error());
            }
        }
        self.file.write_at(buf, off)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        if self.faults.is_full() && len > self.file.metadata()?.len() {
            return Err(enospc());
        }
        self.file.set_len(len)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    #[inline]
    fn sync_data(&self) -> io::Result<()> {
        self.faults.on_sync()?;
        self.file.sync_data()
    }

    fn sync_all(&self) -> io::Result<()> {
        self.faults.on_sync()?;
        self.file.sync_all()
    }
}

impl Storage for OsStorage {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for ent in std::fs::read_dir(dir)? {
            if let Ok(name) = ent?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn LogFile>> {
        let mut o = OpenOptions::new();
        match mode {
            OpenMode::Read => o.read(true),
            OpenMode::Write => o.read(true).write(true),
            OpenMode::CreateKeep => o.read(true).write(true).create(true).truncate(false),
            OpenMode::CreateTruncate => o.read(true).write(true).create(true).truncate(true),
        };
        Ok(Arc::new(OsFile {
            file: o.open(path)?,
            faults: self.faults.clone(),
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn lock(&self, dir: &Path) -> io::Result<Option<DirLock>> {
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("LOCK"))?;
        Ok(f.try_lock().is_ok().then(|| Box::new(f) as DirLock))
    }

    fn faults(&self) -> &Faults {
        &self.faults
    }
}
