//! The transaction log (redo + binlog in one): concurrent reservation, parallel
//! copy, writer, flusher, per-committer wake-ups, recovery reader.
//!
//! Shape (book 7.1.1, MySQL 8.0 WL#10310; 8.1.2):
//! * `reserve` is one `fetch_add` on the LSN: committers never serialize on a
//!   log mutex.
//! * `Reservation::write` copies into a ring buffer in parallel with other
//!   committers, then marks its range in the recent_written link buffer.
//! * A writer thread follows the links to the contiguous written-up-to LSN and
//!   `pwrite`s that range into segment files; a flusher thread `fdatasync`s and
//!   advances the durable LSN. Every commit that arrives during one fsync rides
//!   the next one: group commit falls out, with no leader/follower protocol.
//! * Each waiting committer is woken alone once its LSN is acknowledged (no
//!   `notify_all`, 8.1.2). With an fsync per commit the flusher wakes the
//!   group itself right after its fsync: 7.1.1 item 7 gives this to a
//!   separate notifier so the flusher goes straight back to the next fsync,
//!   but on two cores the hand-off to one more thread cost more than the
//!   few wake-ups it saved the flusher (write_only, 16 threads: server CPU
//!   per transaction -9%, throughput +2.5%; 256 threads: +9.6%). The
//!   notifier thread acknowledges in the modes without fsync per commit,
//!   and wakes everyone when the log fails.
//!
//! Committers only wait; they never write or fsync the file themselves.
//!
//! Every file operation goes through a `Storage` (storage.rs): `OsStorage`
//! is the real directory, `MemStorage` (mem.rs) keeps the files in memory
//! and can simulate a power loss (`crash`), so tests and a deterministic
//! simulation run the same log. Faults (a failed fsync, a torn write, a
//! full disk) are switches on the storage (`Faults`), not hooks in the log.

mod buffer;
mod format;
mod mem;
mod recovery;
mod storage;
mod tail;
mod threads;
mod waiters;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

use buffer::{Links, Ring, LINK_SHIFT};
use format::{record_crc, PAD_FLAG, REC_HEADER};
pub use format::{SegmentReader, MAX_PAYLOAD};

/// Where a record of `payload_len` bytes written at `start` ends: the
/// position `reserve`'s write returns for it (a replica acknowledges a
/// record by this position).
pub fn record_end(start: Lsn, payload_len: usize) -> Lsn {
    format::Probe::next(start, &[]) + payload_len as u64
}
pub use mem::{MemStorage, Unsynced};
pub use storage::{DirLock, Faults, LogFile, OpenMode, OsStorage, Storage};
pub use tail::Batch;
use waiters::{Entry, Waiters};

/// Byte offset in the logical log stream; monotonic forever, never reset.
pub type Lsn = u64;

/// When a commit is acknowledged (`innodb_flush_log_at_trx_commit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlushMode {
    /// =1: acknowledged once fsynced (default).
    #[default]
    EveryCommit,
    /// =2: acknowledged once written to the OS; fsync once a second.
    WriteOnly,
    /// =0: acknowledged once copied into the log buffer; the background
    /// threads still write continuously, fsync once a second.
    PerSecond,
}

#[derive(Debug, Clone)]
pub struct LogConfig {
    pub dir: PathBuf,
    /// Ring buffer bytes; a power of two, at least 4 KiB.
    pub buffer_size: usize,
    /// Stream bytes per segment file (new segments; existing ones keep theirs).
    pub segment_size: u64,
    pub flush_mode: FlushMode,
}

impl LogConfig {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        LogConfig {
            dir: dir.into(),
            buffer_size: 16 << 20,
            segment_size: 64 << 20,
            flush_mode: FlushMode::EveryCommit,
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum LogError {
    #[error("log I/O error: {op} {path}: {msg}")]
    Io {
        op: &'static str,
        path: PathBuf,
        kind: std::io::ErrorKind,
        /// The OS error number, 0 if there was none.
        errno: i32,
        msg: String,
    },
    #[error("corrupt log record at LSN {lsn} ({where_}, {reason}) followed by intact records at LSN {next_good}: damage in the middle of the log; refusing to start rather than drop the committed transactions after it (restore the file, or move the damaged segment and everything after it away to accept the loss)")]
    CorruptMiddle {
        lsn: Lsn,
        /// "segment <file> offset <n>".
        where_: String,
        next_good: Lsn,
        reason: String,
    },
    #[error("the log needed from LSN {from} starts at LSN {first}: the records in between are missing (deleted after a checkpoint that is now unreadable?); refusing to start without them")]
    Missing { from: Lsn, first: Lsn },
    /// No preallocated segment is ready for the log to grow into (the disk
    /// is full): new writes are refused, nothing is half-written, and they
    /// are accepted again once the next segment could be prepared.
    #[error("cannot prepare the next log segment in {dir}: {msg}")]
    NoSpace {
        dir: PathBuf,
        errno: i32,
        msg: String,
    },
    #[error("bad log segment {path}: {reason}")]
    BadSegment { path: PathBuf, reason: String },
    #[error(
        "log segments are not contiguous: expected a segment at LSN {expected}, found {found}"
    )]
    Gap { expected: Lsn, found: Lsn },
    #[error("recovery asked to start at LSN {from} but the log ends at LSN {end}")]
    FromBeyondEnd { from: Lsn, end: Lsn },
    #[error("log directory {0} is in use by another process")]
    Locked(PathBuf),
    #[error("invalid log config: {0}")]
    Config(String),
    #[error("record payload of {0} bytes is empty or too large")]
    BadLength(usize),
    #[error("log has failed earlier and accepts no more writes: {0}")]
    Failed(Box<LogError>),
    #[error("log is shut down")]
    Shutdown,
}

impl LogError {
    /// The refusal `reserve` returns while segment preparation fails with `e`.
    pub(crate) fn no_space(dir: &std::path::Path, e: LogError) -> LogError {
        match e {
            LogError::Io { errno, msg, .. } => LogError::NoSpace {
                dir: dir.to_path_buf(),
                errno,
                msg,
            },
            other => LogError::NoSpace {
                dir: dir.to_path_buf(),
                errno: 0,
                msg: other.to_string(),
            },
        }
    }

    /// The OS error number behind this error, if there is one (28 = ENOSPC).
    pub fn errno(&self) -> Option<i32> {
        match self {
            LogError::Io { errno, .. } | LogError::NoSpace { errno, .. } if *errno != 0 => {
                Some(*errno)
            }
            LogError::Failed(inner) => inner.errno(),
            _ => None,
        }
    }
}

/// What `open` found on disk.
#[derive(Debug, Clone, Default)]
pub struct Recovered {
    /// Every intact record with start LSN >= `from`, in LSN order.
    pub records: Vec<(Lsn, Vec<u8>)>,
    /// Where new appends start (end of the last intact record).
    pub end_lsn: Lsn,
    /// Bytes of torn/corrupt tail that were truncated away.
    pub dropped_tail_bytes: u64,
    pub notes: Vec<String>,
}

/// Counters, for benchmarks and `SHOW STATUS`-like reporting.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogStats {
    pub fsyncs: u64,
    pub writes: u64,
    pub bytes_written: u64,
    /// Waiters woken by the notifier (each exactly once).
    pub wakeups: u64,
}

pub(crate) struct Shared {
    pub cfg: LogConfig,
    pub ring: Ring,
    pub links: Links,
    /// Largest piece of a record copied/marked at once: records bigger than
    /// this (even bigger than the whole buffer) go in pieces so the writer can
    /// drain the ring while the copy proceeds.
    pub piece_max: u64,

    pub reserved: CachePadded<AtomicU64>,
    pub written: CachePadded<AtomicU64>,
    pub durable: CachePadded<AtomicU64>,
    /// LSN up to which waiters are released (= durable for EveryCommit,
    /// = written for WriteOnly).
    pub ack: CachePadded<AtomicU64>,

    pub failed: AtomicBool,
    pub error: Mutex<Option<LogError>>,
    /// Set while no next segment is prepared because preparing one failed
    /// (disk full): `reserve` refuses with `NoSpace`. Cleared by the
    /// preparer once it succeeds again.
    pub no_space: AtomicBool,
    pub no_space_error: Mutex<Option<LogError>>,
    pub stopping: AtomicBool,
    pub writer_done: AtomicBool,
    pub flusher_done: AtomicBool,
    pub stopped: AtomicBool,

    pub writer_sleeping: CachePadded<AtomicBool>,
    pub flusher_sleeping: CachePadded<AtomicBool>,
    pub notifier_sleeping: CachePadded<AtomicBool>,
    pub writer_thread: OnceLock<Thread>,
    pub flusher_thread: OnceLock<Thread>,
    pub notifier_thread: OnceLock<Thread>,
    /// Kernel thread ids of the writer, flusher and notifier, for
    /// `Log::set_urgent`.
    pub commit_tids: OnceLock<Vec<i32>>,

    /// Committers waiting for ring space (rare: only when the writer is behind).
    pub space_waiters: AtomicUsize,
    pub space_lock: Mutex<()>,
    pub space_cv: Condvar,

    pub waiters: Waiters,
    pub next_token: AtomicU64,

    /// Where the segment files are.
    pub storage: Arc<dyn Storage>,
    /// A zero-filled segment file ready to be installed by the writer.
    pub prepared: Mutex<Option<Arc<dyn LogFile>>>,
    pub preparer_thread: OnceLock<Thread>,
    /// The segment the writer appends to, for the flusher's fsync.
    pub cur_file: Mutex<Option<Arc<dyn LogFile>>>,
    /// Segments on disk (start, cap, path), oldest first; the last is current.
    pub segments: Mutex<Vec<(Lsn, u64, PathBuf)>>,

    pub fsyncs: AtomicU64,
    pub writes: AtomicU64,
    pub bytes_written: AtomicU64,
    pub wakeups: AtomicU64,
}

/// Wakes a background thread if it announced it is about to park. Pairs with
/// `threads::idle`: each side stores, then a SeqCst fence, then loads the
/// other's variable, so either the sleeper sees the new work or we see it
/// sleeping (no lost wake-up) — and a busy thread costs no syscall.
#[inline]
pub(crate) fn kick(flag: &AtomicBool, t: &OnceLock<Thread>) {
    fence(Ordering::SeqCst);
    if flag.load(Ordering::Relaxed) {
        if let Some(t) = t.get() {
            t.unpark();
        }
    }
}

impl Shared {
    pub fn fail(&self, e: LogError) {
        {
            let mut g = self.error.lock();
            if g.is_none() {
                // Once: the operator must know writes stopped and why.
                eprintln!(
                    "lockstep: log: {e}; the log accepts no more writes, the node is read-only until it is restarted"
                );
                *g = Some(e);
            }
        }
        self.failed.store(true, Ordering::SeqCst);
        {
            let _g = self.space_lock.lock();
            self.space_cv.notify_all();
        }
        for t in [
            &self.writer_thread,
            &self.flusher_thread,
            &self.notifier_thread,
        ] {
            if let Some(t) = t.get() {
                t.unpark();
            }
        }
    }

    pub fn failure(&self) -> LogError {
        match &*self.error.lock() {
            Some(e) => LogError::Failed(Box::new(e.clone())),
            None => LogError::Shutdown,
        }
    }

    /// Why new writes are refused right now (cold path of `check_alive`).
    #[cold]
    fn no_space_now(&self) -> LogError {
        self.no_space_error
            .lock()
            .clone()
            .unwrap_or_else(|| LogError::NoSpace {
                dir: self.cfg.dir.clone(),
                errno: 0,
                msg: "no segment prepared".into(),
            })
    }

    /// Records whether the next segment could be prepared; prints the
    /// transitions so the server log shows when writes stop and resume.
    pub fn set_no_space(&self, err: Option<LogError>) {
        match err {
            Some(e) => {
                // The error is stored before the flag is raised: a writer
                // that sees the flag must find the cause (ENOSPC) to report,
                // not the placeholder of `no_space_now`.
                let msg = e.to_string();
                *self.no_space_error.lock() = Some(e);
                if !self.no_space.swap(true, Ordering::SeqCst) {
                    eprintln!("lockstep: log: {msg}; refusing writes until space is available");
                }
            }
            None => {
                if self.no_space.swap(false, Ordering::SeqCst) {
                    eprintln!(
                        "lockstep: log: next segment prepared in {}; accepting writes again",
                        self.cfg.dir.display()
                    );
                }
            }
        }
    }

    /// `Err` if the log can no longer accept or finish work, or refuses new
    /// writes for lack of space.
    #[inline]
    fn check_alive(&self) -> Result<(), LogError> {
        if self.failed.load(Ordering::Acquire) {
            return Err(self.failure());
        }
        if self.no_space.load(Ordering::Acquire) {
            return Err(self.no_space_now());
        }
        if self.stopping.load(Ordering::Acquire) {
            return Err(LogError::Shutdown);
        }
        Ok(())
    }

    /// Waits until `[a, b)` may be copied into the ring and marked: the writer
    /// has written out the bytes it overwrites, and its link slot is free.
    fn wait_space(&self, a: Lsn, b: Lsn) -> Result<(), LogError> {
        let cap = self.ring.cap() as u64;
        let fits = |w: Lsn| b - w <= cap && self.links.may_mark(a, w);
        if fits(self.written.load(Ordering::Acquire)) {
            return Ok(());
        }
        for _ in 0..64 {
            std::hint::spin_loop();
            if fits(self.written.load(Ordering::Acquire)) {
                return Ok(());
            }
        }
        loop {
            if self.failed.load(Ordering::Acquire) {
                return Err(self.failure());
            }
            if self.writer_done.load(Ordering::Acquire) {
                return Err(LogError::Shutdown);
            }
            let mut g = self.space_lock.lock();
            self.space_waiters.fetch_add(1, Ordering::SeqCst);
            if fits(self.written.load(Ordering::SeqCst)) {
                self.space_waiters.fetch_sub(1, Ordering::SeqCst);
                return Ok(());
            }
            self.space_cv.wait_for(&mut g, Duration::from_millis(20));
            self.space_waiters.fetch_sub(1, Ordering::SeqCst);
            drop(g);
            if fits(self.written.load(Ordering::Acquire)) {
                return Ok(());
            }
        }
    }

    /// Copies a whole record (header + payload, or zero padding) and marks it,
    /// in pieces of at most `piece_max` bytes.
    fn fill(&self, start: Lsn, hdr: [u8; REC_HEADER], body: Body<'_>) -> Result<(), LogError> {
        let total = REC_HEADER as u64 + body.len() as u64;
        let pieces = total.div_ceil(self.piece_max);
        // Equal-sized pieces, so each is >= piece_max/2 >= 9 bytes (link invariant).
        let step = total.div_ceil(pieces);
        let mut o1 = 0u64;
        while o1 < total {
            let o2 = (o1 + step).min(total);
            let (a, b) = (start + o1, start + o2);
            self.wait_space(a, b)?;
            if o1 < REC_HEADER as u64 {
                let h = &hdr[o1 as usize..o2.min(REC_HEADER as u64) as usize];
                // SAFETY: [a, b) is inside our reservation and wait_space saw
                // `written` (Acquire) far enough that the ring bytes and the link
                // slot are free; see Ring::copy_in.
                unsafe { self.ring.copy_in(a, h) };
            }
            if o2 > REC_HEADER as u64 {
                let p1 = o1.max(REC_HEADER as u64);
                let (s, e) = (
                    (p1 - REC_HEADER as u64) as usize,
                    (o2 - REC_HEADER as u64) as usize,
                );
                // SAFETY: as above.
                unsafe {
                    match body {
                        Body::Bytes(p) => self.ring.copy_in(start + p1, &p[s..e]),
                        Body::Zeros(_) => self.ring.zero(start + p1, e - s),
                    }
                }
            }
            self.links.mark(a, b - a);
            kick(&self.writer_sleeping, &self.writer_thread);
            o1 = o2;
        }
        Ok(())
    }

    pub fn stats(&self) -> LogStats {
        LogStats {
            fsyncs: self.fsyncs.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            wakeups: self.wakeups.load(Ordering::Relaxed),
        }
    }
}

#[derive(Clone, Copy)]
enum Body<'p> {
    Bytes(&'p [u8]),
    Zeros(usize),
}

impl Body<'_> {
    fn len(&self) -> usize {
        match self {
            Body::Bytes(p) => p.len(),
            Body::Zeros(n) => *n,
        }
    }
}

/// The node's transaction log. `Send + Sync`; share it by reference or `Arc`.
pub struct Log {
    shared: Arc<Shared>,
    joins: Mutex<Vec<JoinHandle<()>>>,
    _lock: DirLock,
}

impl Log {
    /// Opens (creating the directory) and recovers, on the real file system.
    /// See `recovery` for the torn-tail / corrupt-middle rules.
    pub fn open(config: LogConfig, from: Lsn) -> Result<(Log, Recovered), LogError> {
        recovery::open(config, Arc::new(OsStorage::new()), from)
    }

    /// `open` on another storage (`MemStorage` in tests and simulations).
    pub fn open_with(
        config: LogConfig,
        storage: Arc<dyn Storage>,
        from: Lsn,
    ) -> Result<(Log, Recovered), LogError> {
        recovery::open(config, storage, from)
    }

    pub(crate) fn from_parts(
        shared: Arc<Shared>,
        joins: Vec<JoinHandle<()>>,
        lock: DirLock,
    ) -> Log {
        Log {
            shared,
            joins: Mutex::new(joins),
            _lock: lock,
        }
    }

    /// Runs the writer, flusher and notifier ahead of other threads (a
    /// raised priority, `threads::URGENT_NICE`) or like them. Every group
    /// commit waits for all three; the server raises them while each
    /// connection has a thread of its own (see crates/server). Raising
    /// needs CAP_SYS_NICE or RLIMIT_NICE: without it the error says so
    /// and the threads keep their priority.
    pub fn set_urgent(&self, on: bool) -> std::io::Result<()> {
        let nice = if on { threads::URGENT_NICE } else { 0 };
        for &tid in self.shared.commit_tids.get().into_iter().flatten() {
            threads::set_nice(tid, nice)?;
        }
        Ok(())
    }

    /// Reserves `8 + len` bytes of the stream: a single `fetch_add` (7.1.1).
    /// Never blocks; waiting for ring space happens in `Reservation::write`.
    #[inline]
    pub fn reserve(&self, len: usize) -> Result<Reservation<'_>, LogError> {
        if len == 0 || len > MAX_PAYLOAD {
            return Err(LogError::BadLength(len));
        }
        let s = &*self.shared;
        s.check_alive()?;
        let size = (REC_HEADER + len) as u64;
        let start = s.reserved.fetch_add(size, Ordering::SeqCst);
        let r = Reservation {
            log: self,
            start,
            end: start + size,
            done: false,
        };
        // Shutdown raced with us: the writer may already have stopped looking;
        // dropping `r` pads the range in case it has not.
        if s.stopping.load(Ordering::SeqCst) {
            drop(r);
            return Err(LogError::Shutdown);
        }
        Ok(r)
    }

    /// `reserve` + `write`; returns the end LSN to wait for.
    pub fn append(&self, payload: &[u8]) -> Result<Lsn, LogError> {
        self.reserve(payload.len())?.write(payload)
    }

    /// Resolves once everything below `lsn` is acknowledged per the flush mode.
    pub fn wait_durable(&self, lsn: Lsn) -> DurableFuture<'_> {
        DurableFuture {
            log: self,
            lsn,
            token: 0,
        }
    }

    /// Blocking form: spins very briefly, then parks until its own wake-up.
    pub fn wait_durable_blocking(&self, lsn: Lsn) -> Result<(), LogError> {
        let mut fut = self.wait_durable(lsn);
        for _ in 0..32 {
            if let Some(r) = fut.ready() {
                return r;
            }
            std::hint::spin_loop();
        }
        let waker = THREAD_WAKER.with(|w| Waker::from(w.clone()));
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(r) = Pin::new(&mut fut).poll(&mut cx) {
                return r;
            }
            // Spurious unparks just re-poll; the entry is not duplicated.
            std::thread::park_timeout(Duration::from_millis(100));
        }
    }

    /// Reserved (handed-out) LSN.
    pub fn current_lsn(&self) -> Lsn {
        self.shared.reserved.load(Ordering::Acquire)
    }
    /// Contiguously written to the OS.
    pub fn written_lsn(&self) -> Lsn {
        self.shared.written.load(Ordering::Acquire)
    }
    /// Fsynced (on disk, in every flush mode).
    pub fn durable_lsn(&self) -> Lsn {
        self.shared.durable.load(Ordering::Acquire)
    }

    pub fn stats(&self) -> LogStats {
        self.shared.stats()
    }

    pub fn config(&self) -> &LogConfig {
        &self.shared.cfg
    }

    /// Drops whole segments that end at or before `lsn` (checkpoint done):
    /// up to `format::MAX_SPARES` wait as spares to be reused, the rest are
    /// deleted. The current segment is never dropped; older ones are already
    /// fsynced (the writer syncs a segment before moving to the next).
    pub fn truncate_before(&self, lsn: Lsn) -> Result<(), LogError> {
        let s = &*self.shared;
        let mut segs = s.segments.lock();
        let keep_from = segs
            .iter()
            .take(segs.len().saturating_sub(1))
            .take_while(|(start, cap, _)| start + cap <= lsn)
            .count();
        if keep_from == 0 {
            return Ok(());
        }
        let st = &*s.storage;
        let mut room = format::MAX_SPARES.saturating_sub(format::spares(st, &s.cfg.dir).len());
        for (start, _, path) in segs.drain(..keep_from) {
            // Kept for reuse as a later segment (see `format::spare_name`).
            let spare = s.cfg.dir.join(format::spare_name(start));
            if room > 0 && st.rename(&path, &spare).is_ok() {
                room -= 1;
                continue;
            }
            st.remove(&path)
                .map_err(|e| format::io_err("remove", &path, e))?;
        }
        drop(segs);
        format::sync_dir(st, &s.cfg.dir)
    }

    /// Writes and fsyncs everything reserved so far and stops the threads.
    /// Idempotent; also run on drop. Later reserves fail with `Shutdown`.
    pub fn shutdown(&self) {
        self.stop();
    }

    /// The storage the log's files are in.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.shared.storage
    }

    /// The fault switches of the log's storage (tests).
    pub fn faults(&self) -> &Faults {
        self.shared.storage.faults()
    }

    /// `faults().fail_io(1)` once the preparer is idle, so the failure hits
    /// the next commit's write or fsync rather than a segment being zeroed.
    /// Kept for crates/engine/tests/failures.rs until it uses `faults`.
    #[doc(hidden)]
    pub fn inject_io_failure(&self) {
        let s = &*self.shared;
        let t = std::time::Instant::now();
        while s.prepared.lock().is_none()
            && !s.no_space.load(Ordering::Acquire)
            && !s.failed.load(Ordering::Acquire)
            && t.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.faults().fail_io(1);
    }

    /// `faults().set_full(on)`: preparing a new segment fails with ENOSPC
    /// while `on`. Kept for crates/engine/tests/failures.rs until it uses
    /// `faults`.
    #[doc(hidden)]
    pub fn inject_prepare_failure(&self, on: bool) {
        self.faults().set_full(on);
        if let Some(t) = self.shared.preparer_thread.get() {
            t.unpark();
        }
    }

    /// Whether new writes are refused for lack of space right now.
    pub fn out_of_space(&self) -> bool {
        self.shared.no_space.load(Ordering::Acquire)
    }

    fn stop(&self) {
        let s = &*self.shared;
        s.stopping.store(true, Ordering::SeqCst);
        let joins: Vec<_> = self.joins.lock().drain(..).collect();
        // Writer first (drains the ring), then flusher (final fsync), then notifier.
        for (i, j) in joins.into_iter().enumerate() {
            for t in [
                &s.writer_thread,
                &s.flusher_thread,
                &s.notifier_thread,
                &s.preparer_thread,
            ] {
                if let Some(t) = t.get() {
                    t.unpark();
                }
            }
            let _ = j.join();
            match i {
                0 => s.writer_done.store(true, Ordering::SeqCst),
                1 => s.flusher_done.store(true, Ordering::SeqCst),
                _ => {}
            }
        }
        s.writer_done.store(true, Ordering::SeqCst);
        s.flusher_done.store(true, Ordering::SeqCst);
        s.stopped.store(true, Ordering::SeqCst);
        {
            let _g = s.space_lock.lock();
            s.space_cv.notify_all();
        }
        let mut wakers = Vec::new();
        s.waiters.collect_all(&mut wakers);
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A reserved, not yet written range `[start, end)` of the stream.
/// Dropping it unwritten fills the range with a padding record (skipped by
/// recovery) so the writer is not stuck behind a hole.
pub struct Reservation<'a> {
    log: &'a Log,
    pub start: Lsn,
    pub end: Lsn,
    done: bool,
}

impl Reservation<'_> {
    pub fn payload_len(&self) -> usize {
        (self.end - self.start) as usize - REC_HEADER
    }

    /// Copies the record into the ring (in parallel with other writers) and
    /// marks it complete. Returns `end`. Blocks only if the ring is full.
    pub fn write(mut self, payload: &[u8]) -> Result<Lsn, LogError> {
        assert_eq!(
            payload.len(),
            self.payload_len(),
            "payload length differs from reservation"
        );
        self.done = true;
        let len_field = payload.len() as u32;
        let crc = record_crc(self.start, len_field, payload);
        let hdr = header(len_field, crc);
        self.log
            .shared
            .fill(self.start, hdr, Body::Bytes(payload))?;
        Ok(self.end)
    }
}

fn header(len_field: u32, crc: u32) -> [u8; REC_HEADER] {
    let mut h = [0u8; REC_HEADER];
    h[0..4].copy_from_slice(&len_field.to_le_bytes());
    h[4..8].copy_from_slice(&crc.to_le_bytes());
    h
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let n = self.payload_len();
        let len_field = n as u32 | PAD_FLAG;
        let mut h = crc32fast::Hasher::new();
        h.update(&self.start.to_le_bytes());
        h.update(&len_field.to_le_bytes());
        let zeros = [0u8; 4096];
        let mut left = n;
        while left > 0 {
            let k = left.min(zeros.len());
            h.update(&zeros[..k]);
            left -= k;
        }
        let hdr = header(len_field, h.finalize());
        // Err means the log failed or stopped; nobody will read the hole then.
        let _ = self.log.shared.fill(self.start, hdr, Body::Zeros(n));
    }
}

/// Resolves to `Ok(())` once `lsn` is acknowledged, or to the log's error.
/// Works with any executor: it stores the task's `Waker`, which the notifier
/// wakes exactly once.
pub struct DurableFuture<'a> {
    log: &'a Log,
    lsn: Lsn,
    /// Non-zero while an entry is registered in a waiter shard.
    token: u64,
}

impl DurableFuture<'_> {
    /// Outcome if already decided, without registering.
    fn ready(&self) -> Option<Result<(), LogError>> {
        let s = &*self.log.shared;
        if s.cfg.flush_mode == FlushMode::PerSecond || s.ack.load(Ordering::Acquire) >= self.lsn {
            return Some(Ok(()));
        }
        if s.failed.load(Ordering::Acquire) {
            return Some(Err(s.failure()));
        }
        if s.stopped.load(Ordering::Acquire) {
            return Some(Err(LogError::Shutdown));
        }
        None
    }
}

impl Future for DurableFuture<'_> {
    type Output = Result<(), LogError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.token == 0 {
            if let Some(r) = self.ready() {
                return Poll::Ready(r);
            }
        }
        let s = &*self.log.shared;
        let lsn = self.lsn;
        let mut g = s.waiters.shard(lsn).lock();
        // Re-check under the shard lock: the notifier publishes `ack` before it
        // locks a shard, so either we see the new `ack` here or it sees our entry.
        if let Some(r) = self.ready() {
            if self.token != 0 {
                let t = self.token;
                g.retain(|e| e.token != t);
                self.token = 0;
            }
            return Poll::Ready(r);
        }
        if self.token != 0 {
            let t = self.token;
            if let Some(e) = g.iter_mut().find(|e| e.token == t) {
                if !e.waker.will_wake(cx.waker()) {
                    e.waker = cx.waker().clone();
                }
                return Poll::Pending;
            }
        }
        let token = s.next_token.fetch_add(1, Ordering::Relaxed) + 1;
        g.push(Entry {
            lsn,
            token,
            waker: cx.waker().clone(),
        });
        drop(g);
        self.token = token;
        Poll::Pending
    }
}

impl Drop for DurableFuture<'_> {
    fn drop(&mut self) {
        if self.token != 0 {
            let t = self.token;
            self.log
                .shared
                .waiters
                .shard(self.lsn)
                .lock()
                .retain(|e| e.token != t);
        }
    }
}

struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    // One waker per OS thread, reused: no allocation per blocking wait.
    static THREAD_WAKER: Arc<ThreadWaker> = Arc::new(ThreadWaker(std::thread::current()));
}

pub(crate) const fn link_slots(buffer_size: usize) -> usize {
    // One slot per 8 bytes of the ring, at most 2^18 slots (2 MiB of slots,
    // a 2 MiB window of not-yet-written LSN — the role of MySQL's
    // innodb_log_recent_written_size).
    let n = buffer_size >> LINK_SHIFT;
    if n > 1 << 18 {
        1 << 18
    } else {
        n
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_failure;
#[cfg(test)]
mod tests_faults;
