//! `Log::open`: scan the segments, stop cleanly at a torn tail, refuse damage
//! in the middle, then start the threads at the end of the last good record.
//!
//! Rules:
//! * The scan starts at the newest segment whose header says a record starts
//!   at or before `from` (older segments are not read at all).
//! * A record that is short, zeroed, has a bad length or a bad checksum is
//!   "bad". If an intact record (itself followed by an intact record or the
//!   exact end of the data) exists anywhere after it, that is damage in the
//!   middle → `LogError::CorruptMiddle`. Otherwise it is a torn tail: the file
//!   is truncated there, later segment files are deleted, and the dropped
//!   bytes are reported.
//! * Limitation: after a power loss the OS may persist a later page of the
//!   unsynced last batch but not an earlier one; that looks like damage in the
//!   middle and is reported as such (an operator decides), never silently
//!   dropped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, OnceLock};

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

use crate::buffer::{Links, Ring};
use crate::format::{self, io_err, probe, resync, Probe, SegFile, Stream, NO_RECORD, SEG_HEADER};
use crate::storage::{DirLock, OpenMode, Storage};
use crate::threads::{CurSeg, Writer};
use crate::waiters::Waiters;
use crate::{link_slots, Log, LogConfig, LogError, Lsn, Recovered, Shared};

pub(crate) fn open(
    cfg: LogConfig,
    storage: Arc<dyn Storage>,
    from: Lsn,
) -> Result<(Log, Recovered), LogError> {
    check_config(&cfg)?;
    let lock = lock_dir(&*storage, &cfg)?;
    let mut rec = Recovered::default();
    let st = &*storage;
    let _ = st.remove(&cfg.dir.join(format::PREP_NAME));
    let segs = load_chain(st, &cfg, &mut rec)?;
    let mut stream = Stream::new(storage.clone(), segs);
    let end = if stream.segs().is_empty() {
        rec.end_lsn = from;
        from
    } else {
        scan(&mut stream, from, &mut rec)?
    };
    if !stream.segs().is_empty() && from > end {
        return Err(LogError::FromBeyondEnd { from, end });
    }
    rec.end_lsn = end;
    let segs = truncate_tail(st, &cfg, stream.segs(), end, &mut rec)?;
    drop(stream);
    let shared = build_shared(cfg, storage, &segs, end)?;
    start(shared, &segs, end, lock, rec)
}

fn check_config(cfg: &LogConfig) -> Result<(), LogError> {
    if !cfg.buffer_size.is_power_of_two() || cfg.buffer_size < 4096 || cfg.buffer_size > 1 << 30 {
        return Err(LogError::Config(format!(
            "buffer_size {} must be a power of two in [4 KiB, 1 GiB]",
            cfg.buffer_size
        )));
    }
    if cfg.segment_size < 4096 {
        return Err(LogError::Config(
            "segment_size must be at least 4 KiB".into(),
        ));
    }
    Ok(())
}

/// Creates the directory and takes its lock (one log per directory).
fn lock_dir(st: &dyn Storage, cfg: &LogConfig) -> Result<DirLock, LogError> {
    st.create_dir_all(&cfg.dir)
        .map_err(|e| io_err("create_dir", &cfg.dir, e))?;
    st.lock(&cfg.dir)
        .map_err(|e| io_err("open", &cfg.dir.join("LOCK"), e))?
        .ok_or_else(|| LogError::Locked(cfg.dir.clone()))
}

/// The shared state of a log whose recovered data ends at `end`.
fn build_shared(
    cfg: LogConfig,
    storage: Arc<dyn Storage>,
    segs: &[SegFile],
    end: Lsn,
) -> Result<Arc<Shared>, LogError> {
    // The current segment is the one covering `end`; if `end` sits exactly on
    // the boundary after the last segment, the writer creates the next one.
    let cur = match segs.last() {
        Some(l) if end < l.end_cap() => Some(
            storage
                .open(&l.path, OpenMode::Write)
                .map_err(|e| io_err("open", &l.path, e))?,
        ),
        _ => None,
    };
    // The first append needs a new segment: have it preallocated already.
    // Failing that (disk full) the node still opens, for reads; writes are
    // refused until the preparer thread succeeds.
    let mut no_space = None;
    let prepared = match &cur {
        None => format::prepare_segment(&*storage, &cfg.dir, cfg.segment_size, || false)
            .unwrap_or_else(|e| {
                no_space = Some(LogError::no_space(&cfg.dir, e));
                None
            }),
        Some(_) => None,
    };
    let shared = Arc::new(Shared {
        ring: Ring::new(cfg.buffer_size),
        links: Links::new(link_slots(cfg.buffer_size)),
        piece_max: (cfg.buffer_size / 4) as u64,
        reserved: CachePadded::new(AtomicU64::new(end)),
        written: CachePadded::new(AtomicU64::new(end)),
        durable: CachePadded::new(AtomicU64::new(end)),
        ack: CachePadded::new(AtomicU64::new(end)),
        failed: AtomicBool::new(false),
        error: Mutex::new(None),
        no_space: AtomicBool::new(false),
        no_space_error: Mutex::new(None),
        stopping: AtomicBool::new(false),
        writer_done: AtomicBool::new(false),
        flusher_done: AtomicBool::new(false),
        stopped: AtomicBool::new(false),
        writer_sleeping: CachePadded::new(AtomicBool::new(false)),
        flusher_sleeping: CachePadded::new(AtomicBool::new(false)),
        notifier_sleeping: CachePadded::new(AtomicBool::new(false)),
        writer_thread: OnceLock::new(),
        flusher_thread: OnceLock::new(),
        notifier_thread: OnceLock::new(),
        commit_tids: OnceLock::new(),
        space_waiters: AtomicUsize::new(0),
        space_lock: Mutex::new(()),
        space_cv: Condvar::new(),
        waiters: Waiters::new(),
        next_token: AtomicU64::new(0),
        prepared: Mutex::new(prepared),
        preparer_thread: OnceLock::new(),
        cur_file: Mutex::new(cur),
        segments: Mutex::new(
            segs.iter()
                .map(|s| (s.start(), s.hdr.cap, s.path.clone()))
                .collect(),
        ),
        fsyncs: AtomicU64::new(0),
        writes: AtomicU64::new(0),
        bytes_written: AtomicU64::new(0),
        wakeups: AtomicU64::new(0),
        storage,
        cfg,
    });
    if no_space.is_some() {
        shared.set_no_space(no_space);
    }
    Ok(shared)
}

/// Starts the writer, flusher, notifier and preparer threads.
fn start(
    shared: Arc<Shared>,
    segs: &[SegFile],
    end: Lsn,
    lock: DirLock,
    rec: Recovered,
) -> Result<(Log, Recovered), LogError> {
    let cur = shared.cur_file.lock().clone().map(|file| {
        let l = segs
            .last()
            .expect("a current file belongs to the last segment");
        CurSeg {
            file,
            start: l.start(),
            cap: l.hdr.cap,
        }
    });
    let next_seg = segs.last().map(|l| l.end_cap()).unwrap_or(end);
    let writer = Writer {
        s: shared.clone(),
        w: end,
        next_rec: end,
        bound: cur.as_ref().map(|c| c.start + c.cap).unwrap_or(next_seg),
        pending: VecDeque::with_capacity(8),
        cur,
        next_seg,
    };
    let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(f)
            .map_err(|e| io_err("spawn", &shared.cfg.dir, e))
    };
    // The three a commit waits on say who they are (`Log::set_urgent`)
    // before they start: the ids are known once `open` returns.
    let (said, heard) = std::sync::mpsc::channel();
    let commit_path = |f: Box<dyn FnOnce() + Send>| -> Box<dyn FnOnce() + Send> {
        let said = said.clone();
        Box::new(move || {
            let _ = said.send(crate::threads::current_tid());
            drop(said);
            f()
        })
    };
    let jw = spawn("log-writer", commit_path(Box::new(move || writer.run())))?;
    let s2 = shared.clone();
    let jf = spawn(
        "log-flusher",
        commit_path(Box::new(move || crate::threads::flusher(s2))),
    )?;
    let s3 = shared.clone();
    let jn = spawn(
        "log-notifier",
        commit_path(Box::new(move || crate::threads::notifier(s3, end))),
    )?;
    drop(said);
    let _ = shared.commit_tids.set(heard.iter().collect());
    let s4 = shared.clone();
    let jp = spawn(
        "log-preparer",
        Box::new(move || crate::threads::preparer(s4)),
    )?;
    let _ = shared.preparer_thread.set(jp.thread().clone());
    let _ = shared.writer_thread.set(jw.thread().clone());
    let _ = shared.flusher_thread.set(jf.thread().clone());
    let _ = shared.notifier_thread.set(jn.thread().clone());
    Ok((Log::from_parts(shared, vec![jw, jf, jn, jp], lock), rec))
}

/// Lists the segments, checks they form one contiguous chain, and drops a
/// last segment whose header never made it to disk (crash while creating it).
fn load_chain(
    st: &dyn Storage,
    cfg: &LogConfig,
    rec: &mut Recovered,
) -> Result<Vec<SegFile>, LogError> {
    let listed = format::list_segments(st, &cfg.dir)?;
    let n = listed.len();
    let mut segs: Vec<SegFile> = Vec::with_capacity(n);
    for (i, l) in listed.into_iter().enumerate() {
        match l.parsed {
            Ok(sf) => {
                if let Some(prev) = segs.last() {
                    if sf.start() != prev.end_cap() {
                        return Err(LogError::Gap {
                            expected: prev.end_cap(),
                            found: sf.start(),
                        });
                    }
                }
                segs.push(sf);
            }
            Err(reason) if i + 1 == n && l.file_len < SEG_HEADER => {
                rec.notes.push(format!(
                    "removed segment {} with a torn header ({} bytes): {reason}",
                    l.path.display(),
                    l.file_len
                ));
                st.remove(&l.path)
                    .map_err(|e| io_err("remove", &l.path, e))?;
            }
            Err(reason) => {
                return Err(LogError::BadSegment {
                    path: l.path,
                    reason,
                });
            }
        }
    }
    Ok(segs)
}

/// Reads records from the right starting point; returns the end of the last
/// intact record.
fn scan(stream: &mut Stream, from: Lsn, rec: &mut Recovered) -> Result<Lsn, LogError> {
    let segs = stream.segs();
    let start_seg = segs
        .iter()
        .rposition(|s| s.hdr.first_rec != NO_RECORD && s.hdr.first_rec <= from)
        .or_else(|| segs.iter().position(|s| s.hdr.first_rec != NO_RECORD));
    let Some(si) = start_seg else {
        // Only segments inside one huge record with its start deleted: nothing
        // readable. Treat the first segment start as the end.
        rec.notes
            .push("no record start found in any segment".into());
        return Ok(segs[0].start());
    };
    let p0 = segs[si].hdr.first_rec;
    if p0 > from {
        // The segments that held [from, p0) are gone: replaying without
        // them would silently drop committed transactions.
        return Err(LogError::Missing { from, first: p0 });
    }
    let mut p = p0;
    loop {
        match probe(stream, p)? {
            Probe::End => return Ok(p),
            Probe::Good { pad, payload } => {
                let next = Probe::next(p, &payload);
                if !pad && p >= from {
                    rec.records.push((p, payload));
                }
                p = next;
            }
            Probe::Bad(reason) => {
                // Preallocated zeros after the last record: a clean end.
                if format::all_zero(stream, p, stream.end())? {
                    return Ok(p);
                }
                if let Some(next_good) = resync(stream, p)? {
                    return Err(LogError::CorruptMiddle {
                        lsn: p,
                        where_: stream.describe(p),
                        next_good,
                        reason,
                    });
                }
                // Bytes on disk after the last good record; in a segment still
                // preallocated to its full size, up to the last non-zero one.
                let end = stream.end();
                let preallocated = stream.segs().last().is_some_and(|l| end == l.end_cap());
                let data_end = if preallocated {
                    format::nonzero_end(stream, p, end)?
                } else {
                    end
                };
                let dropped = data_end - p;
                rec.dropped_tail_bytes = dropped;
                rec.notes.push(format!(
                    "log: torn tail at {} (LSN {p}, {reason}): skipped {dropped} bytes; recovered up to LSN {p}",
                    stream.describe(p)
                ));
                return Ok(p);
            }
        }
    }
}

/// Cuts the files at `end`: the segment covering `end` is truncated, later
/// ones (holding only the dropped tail) are deleted.
fn truncate_tail(
    st: &dyn Storage,
    cfg: &LogConfig,
    segs: &[SegFile],
    end: Lsn,
    rec: &mut Recovered,
) -> Result<Vec<SegFile>, LogError> {
    let mut kept = Vec::with_capacity(segs.len());
    let mut changed = false;
    for s in segs {
        if s.start() > end {
            st.remove(&s.path)
                .map_err(|e| io_err("remove", &s.path, e))?;
            rec.notes.push(format!(
                "removed segment {} past the end of the log",
                s.path.display()
            ));
            changed = true;
            continue;
        }
        let mut s = s.clone();
        if end < s.end_cap() && (rec.dropped_tail_bytes > 0 || s.data_len < s.hdr.cap) {
            // Zero the dropped tail (so it reads as a clean end from now on) and
            // keep/restore the whole segment preallocated.
            let f = st
                .open(&s.path, OpenMode::Write)
                .map_err(|e| io_err("open", &s.path, e))?;
            let off = SEG_HEADER + (end - s.start());
            format::zero_fill(&*f, off, SEG_HEADER + s.hdr.cap, || false)
                .map_err(|e| io_err("write", &s.path, e))?;
            f.sync_all().map_err(|e| io_err("fsync", &s.path, e))?;
            s.data_len = s.hdr.cap;
            changed = true;
        }
        kept.push(s);
    }
    if changed {
        format::sync_dir(st, &cfg.dir)?;
    }
    Ok(kept)
}
