//! The dedicated log threads (7.1.1, WL#10310 items 4-7): the writer moves the
//! contiguous prefix of the ring into segment files, the flusher fsyncs and
//! wakes the committers it made durable one by one, the notifier does the
//! waking where no fsync acknowledges (flush modes 0 and 2) and on failure.
//! None of them waits on a committer except for the hole at the head of the
//! ring.

use std::collections::VecDeque;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

use crate::format::{self, io_err, SegHeader, NO_RECORD, PAD_FLAG, REC_HEADER, SEG_HEADER};
use crate::storage::LogFile;
use crate::{kick, FlushMode, LogError, Lsn, Shared};

/// Idle protocol shared by the three threads: spin a little (the next batch
/// usually arrives within microseconds under load), then announce sleep and
/// park; `kick` on the producer side unparks only announced sleepers.
fn idle(flag: &AtomicBool, spins: u32, has_work: impl Fn() -> bool, timeout: Duration) {
    for i in 0..spins {
        if has_work() {
            return;
        }
        if i % 64 == 63 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    flag.store(true, Ordering::Relaxed);
    fence(Ordering::SeqCst);
    if !has_work() {
        std::thread::park_timeout(timeout);
    }
    flag.store(false, Ordering::Relaxed);
}

pub(crate) struct CurSeg {
    pub file: Arc<dyn LogFile>,
    pub start: Lsn,
    pub cap: u64,
}

pub(crate) struct Writer {
    pub s: Arc<Shared>,
    /// Everything below `w` is written to the OS.
    pub w: Lsn,
    /// Start of the next record whose header the writer has not parsed yet.
    pub next_rec: Lsn,
    /// Next segment boundary whose first record start is not yet known.
    pub bound: Lsn,
    /// (segment start, first record start in it) for segments not yet created.
    pub pending: VecDeque<(Lsn, Lsn)>,
    pub cur: Option<CurSeg>,
    /// Start of the next segment to create.
    pub next_seg: Lsn,
}

/// Largest batch handed to one `pwrite` pass, so `written` (and ring space)
/// advances regularly even under a flood of commits.
const MAX_BATCH: u64 = 4 << 20;

impl Writer {
    pub fn run(mut self) {
        let batch = MAX_BATCH.min(self.s.ring.cap() as u64 / 2);
        loop {
            let sh = self.s.clone();
            let s = &*sh;
            if s.failed.load(Ordering::Acquire) {
                return;
            }
            // Follow the link buffer from `w` to the end of the contiguous run.
            let mut e = self.w;
            while e - self.w < batch {
                match s.links.take(e) {
                    Some(len) => e += len,
                    None => break,
                }
            }
            if e == self.w {
                if s.stopping.load(Ordering::SeqCst) && s.reserved.load(Ordering::SeqCst) == self.w
                {
                    return;
                }
                let w = self.w;
                idle(
                    &s.writer_sleeping,
                    256,
                    || s.links.is_set(w) || s.stopping.load(Ordering::Relaxed),
                    Duration::from_millis(50),
                );
                continue;
            }
            if let Err(err) = self.write_out(e) {
                s.fail(err);
                return;
            }
            debug_assert!(
                e <= s.reserved.load(Ordering::Relaxed),
                "written beyond reserved"
            );
            s.written.store(e, Ordering::SeqCst);
            self.w = e;
            match s.cfg.flush_mode {
                FlushMode::EveryCommit => kick(&s.flusher_sleeping, &s.flusher_thread),
                FlushMode::WriteOnly => {
                    s.ack.store(e, Ordering::Release);
                    kick(&s.notifier_sleeping, &s.notifier_thread);
                }
                FlushMode::PerSecond => {}
            }
            if s.space_waiters.load(Ordering::SeqCst) > 0 {
                let _g = s.space_lock.lock();
                s.space_cv.notify_all();
            }
        }
    }

    fn note_start(&mut self, r: Lsn) {
        let cap = self.s.cfg.segment_size;
        while r >= self.bound {
            let first = if r < self.bound + cap { r } else { NO_RECORD };
            self.pending.push_back((self.bound, first));
            self.bound += cap;
        }
    }

    /// Writes the ring bytes `[w, e)` into the segment files.
    fn write_out(&mut self, e: Lsn) -> Result<(), LogError> {
        let s = self.s.clone();
        // Parse record headers in the batch: record boundaries decide each new
        // segment's `first_rec`. Every record's first piece holds its header.
        self.note_start(self.next_rec);
        while self.next_rec < e {
            // SAFETY: [w, e) was published complete and `written` has not moved
            // past it, so committers cannot be writing these bytes.
            let len_field = unsafe { s.ring.read_u32(self.next_rec) };
            let len = (len_field & !PAD_FLAG) as u64;
            debug_assert!(
                len > 0,
                "zero-length record in the ring at {}",
                self.next_rec
            );
            self.next_rec += REC_HEADER as u64 + len;
            self.note_start(self.next_rec);
        }
        let mut x = self.w;
        while x < e {
            let covered = self.cur.as_ref().is_some_and(|c| x < c.start + c.cap);
            if !covered {
                self.switch_segment()?;
            }
            let cur = self.cur.as_ref().expect("switch_segment set it");
            debug_assert!(cur.start <= x);
            let y = e.min(cur.start + cur.cap);
            // SAFETY: see above; the slices stay valid until we publish `written`.
            let (a, b) = unsafe { s.ring.slices(x, y) };
            let off = SEG_HEADER + (x - cur.start);
            let path = || s.cfg.dir.join(format::seg_name(cur.start));
            cur.file
                .write_all_at(a, off)
                .map_err(|e| io_err("write", &path(), e))?;
            if !b.is_empty() {
                cur.file
                    .write_all_at(b, off + a.len() as u64)
                    .map_err(|e| io_err("write", &path(), e))?;
            }
            s.writes.fetch_add(1, Ordering::Relaxed);
            s.bytes_written.fetch_add(y - x, Ordering::Relaxed);
            x = y;
        }
        Ok(())
    }

    /// Closes the current segment (fsynced, so a later segment never holds
    /// durable data while an earlier one does not) and starts the next.
    fn switch_segment(&mut self) -> Result<(), LogError> {
        let s = self.s.clone();
        if let Some(old) = self.cur.take() {
            old.file
                .sync_data()
                .map_err(|e| io_err("fsync", &s.cfg.dir.join(format::seg_name(old.start)), e))?;
            s.fsyncs.fetch_add(1, Ordering::Relaxed);
        }
        let start = self.next_seg;
        while self.pending.front().is_some_and(|&(b, _)| b < start) {
            self.pending.pop_front();
        }
        let first_rec = match self.pending.pop_front() {
            Some((b, f)) if b == start => f,
            other => {
                debug_assert!(
                    false,
                    "no first-record entry for segment {start}: {other:?}"
                );
                NO_RECORD
            }
        };
        let hdr = SegHeader {
            start,
            cap: s.cfg.segment_size,
            first_rec,
        };
        // Only ever grow into a preallocated segment: growing a file could
        // fail for lack of space halfway through a record. Without one (the
        // preparer is behind, or the disk is full and `reserve` already
        // refuses new records), the records reserved before wait here.
        let mut waiting = false;
        let file = loop {
            {
                // Hold the lock across the rename: the preparer reuses the temp name.
                let mut prepared = s.prepared.lock();
                if let Some(f) = prepared.take() {
                    break format::install_prepared(&*s.storage, &s.cfg.dir, f, hdr)?;
                }
            }
            if s.no_space.load(Ordering::Acquire) {
                if s.stopping.load(Ordering::Acquire) {
                    return Err(s.no_space_now());
                }
                if !waiting {
                    eprintln!(
                        "lockstep: log: waiting for space for the segment at LSN {start} (Disk full)"
                    );
                    waiting = true;
                }
            } else if let Some(t) = s.preparer_thread.get() {
                // Hurry it, unless it is backing off after a failure.
                t.unpark();
            }
            std::thread::park_timeout(Duration::from_millis(10));
        };
        s.fsyncs.fetch_add(1, Ordering::Relaxed);
        if let Some(t) = s.preparer_thread.get() {
            t.unpark();
        }
        format::sync_dir(&*s.storage, &s.cfg.dir)?;
        s.segments
            .lock()
            .push((start, hdr.cap, s.cfg.dir.join(format::seg_name(start))));
        *s.cur_file.lock() = Some(file.clone());
        self.next_seg = start + hdr.cap;
        self.cur = Some(CurSeg {
            file,
            start,
            cap: hdr.cap,
        });
        Ok(())
    }
}

pub(crate) fn flusher(s: Arc<Shared>) {
    let mut last_sync = Instant::now();
    let mut wakers: Vec<Waker> = Vec::with_capacity(1024);
    let period = Duration::from_secs(1);
    loop {
        if s.failed.load(Ordering::Acquire) {
            return;
        }
        let w = s.written.load(Ordering::Acquire);
        let d = s.durable.load(Ordering::Relaxed);
        debug_assert!(d <= w, "durable beyond written");
        let writer_done = s.writer_done.load(Ordering::Acquire);
        let due = w > d
            && (s.cfg.flush_mode == FlushMode::EveryCommit
                || writer_done
                || last_sync.elapsed() >= period);
        if due {
            // The file current now holds everything up to `w`, or the writer
            // moved on and fsynced the older segment itself before doing so.
            let file = s.cur_file.lock().clone();
            if let Some(f) = file {
                if let Err(e) = f.sync_data() {
                    // Never retry: after a failed fsync the kernel may have
                    // dropped the dirty pages, so a later "successful" fsync
                    // would ack data that is not on disk.
                    s.fail(io_err("fsync", &s.cfg.dir, e));
                    return;
                }
                s.fsyncs.fetch_add(1, Ordering::Relaxed);
            }
            s.durable.store(w, Ordering::Release);
            if s.cfg.flush_mode == FlushMode::EveryCommit {
                // The flusher is the only thread that advances `ack` in this
                // mode, and it wakes the group's committers itself.
                let prev = s.ack.swap(w, Ordering::SeqCst);
                wake_acknowledged(&s, prev, w, &mut wakers);
            }
            last_sync = Instant::now();
            continue;
        }
        if writer_done && w == d {
            return;
        }
        match s.cfg.flush_mode {
            FlushMode::EveryCommit => idle(
                &s.flusher_sleeping,
                256,
                || {
                    s.written.load(Ordering::Relaxed) > s.durable.load(Ordering::Relaxed)
                        || s.writer_done.load(Ordering::Relaxed)
                },
                Duration::from_millis(50),
            ),
            _ => {
                let left = period.saturating_sub(last_sync.elapsed());
                std::thread::park_timeout(
                    left.min(Duration::from_millis(50))
                        .max(Duration::from_millis(1)),
                );
            }
        }
    }
}

/// Wakes the committers waiting for LSNs in (old, new], each alone and
/// outside the shard locks. `ack` must already be `new`.
fn wake_acknowledged(s: &Shared, old: Lsn, new: Lsn, wakers: &mut Vec<Waker>) {
    s.waiters.collect_range(old, new, wakers);
    s.wakeups.fetch_add(wakers.len() as u64, Ordering::Relaxed);
    wakers.drain(..).for_each(Waker::wake);
}

/// `start` is the acknowledged LSN when the log opened. It must not be read
/// here: the thread may first run after a commit was already acknowledged,
/// and starting from that later value would never wake its waiter.
pub(crate) fn notifier(s: Arc<Shared>, start: Lsn) {
    // With an fsync per commit the flusher wakes committers itself.
    let wakes_acks = s.cfg.flush_mode != FlushMode::EveryCommit;
    let mut last = start;
    let mut wakers: Vec<Waker> = Vec::with_capacity(1024);
    loop {
        let a = s.ack.load(Ordering::SeqCst);
        if wakes_acks && a > last {
            wake_acknowledged(&s, last, a, &mut wakers);
            last = a;
            continue;
        }
        if s.failed.load(Ordering::SeqCst) {
            // Waiters see the error on re-poll; new ones fail fast.
            s.waiters.collect_all(&mut wakers);
            wakers.drain(..).for_each(Waker::wake);
            return;
        }
        if s.flusher_done.load(Ordering::Acquire) {
            return;
        }
        idle(
            &s.notifier_sleeping,
            256,
            || {
                (wakes_acks && s.ack.load(Ordering::Relaxed) > last)
                    || s.failed.load(Ordering::Relaxed)
                    || s.flusher_done.load(Ordering::Relaxed)
            },
            Duration::from_millis(50),
        );
    }
}

/// Keeps one zero-filled segment ready (InnoDB pre-creates its redo files for
/// the same reason): the writer installs it with a rename when it needs the
/// next segment, so appends overwrite preallocated blocks and each fdatasync
/// does not also have to commit a file-size change.
pub(crate) fn preparer(s: Arc<Shared>) {
    // Runs until the writer is done: a clean shutdown may still need a segment.
    let stop = || s.writer_done.load(Ordering::Relaxed) || s.failed.load(Ordering::Relaxed);
    while !stop() {
        if s.prepared.lock().is_none() {
            match format::prepare_segment(&*s.storage, &s.cfg.dir, s.cfg.segment_size, stop) {
                Ok(Some(f)) => {
                    *s.prepared.lock() = Some(f);
                    s.set_no_space(None);
                    if let Some(t) = s.writer_thread.get() {
                        t.unpark();
                    }
                }
                Ok(None) => return,
                // Usually ENOSPC: refuse new writes until a retry succeeds.
                Err(e) => {
                    s.set_no_space(Some(LogError::no_space(&s.cfg.dir, e)));
                    std::thread::park_timeout(PREPARE_RETRY);
                }
            }
            continue;
        }
        std::thread::park_timeout(Duration::from_millis(200));
    }
}

/// How often a failed segment preparation (disk full) is retried.
const PREPARE_RETRY: Duration = Duration::from_millis(300);

/// The nice value of the writer, flusher and notifier while they run ahead
/// (`Log::set_urgent`; 0 is everyone else's). When one of them sits in the
/// run queue behind busy connection threads, every committer of the group
/// sleeps: at oltp_write_only 16 the log-flusher was preempted 4,437
/// times a second and the cores idled 15% with commits queued. Oracle runs
/// its log writer at a raised priority for the same reason.
pub(crate) const URGENT_NICE: i32 = -10;

/// The calling thread's kernel id.
pub(crate) fn current_tid() -> i32 {
    // SAFETY: a system call without arguments.
    unsafe { libc::gettid() }
}

/// Sets one thread's nice value (Linux: per thread, by kernel id).
pub(crate) fn set_nice(tid: i32, nice: i32) -> std::io::Result<()> {
    // SAFETY: a plain system call; a stale id at worst fails with ESRCH.
    match unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}
