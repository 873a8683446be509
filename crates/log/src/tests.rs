use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use super::*;

pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    pub(super) fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "lockstep-log-test-{}-{}-{}",
            std::process::id(),
            tag,
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&p);
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub(super) fn cfg(dir: &Path, buffer: usize, seg: u64) -> LogConfig {
    LogConfig {
        dir: dir.to_path_buf(),
        buffer_size: buffer,
        segment_size: seg,
        flush_mode: FlushMode::EveryCommit,
    }
}

/// A log directory in a `MemStorage`.
pub(super) fn mem_cfg(buffer: usize, seg: u64) -> LogConfig {
    cfg(Path::new("/mem/log"), buffer, seg)
}

/// Deterministic payload of `len` bytes tagged by (a, b).
pub(super) fn payload(a: usize, b: usize, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    let mut x = (a as u64 * 1_000_003 + b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x as u8);
    }
    v
}

pub(super) fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    v.sort();
    v
}

/// File and offset holding stream byte `lsn`.
pub(super) fn locate(dir: &Path, lsn: Lsn) -> (PathBuf, u64) {
    let segs = segment_files(dir);
    let mut best = None;
    for p in segs {
        let start = format::parse_seg_name(p.file_name().unwrap().to_str().unwrap()).unwrap();
        if start <= lsn {
            best = Some((p, format::SEG_HEADER + lsn - start));
        }
    }
    best.unwrap()
}

pub(super) fn flip(dir: &Path, lsn: Lsn) {
    let (p, off) = locate(dir, lsn);
    let f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(p)
        .unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, off).unwrap();
    b[0] ^= 0x40;
    f.write_all_at(&b, off).unwrap();
}

/// Appends from `threads` threads, each waiting for durability; returns all
/// (lsn, payload) sorted by LSN.
fn concurrent_fill(
    log: &Log,
    threads: usize,
    per: usize,
    size: impl Fn(usize, usize) -> usize + Sync,
) -> Vec<(Lsn, Vec<u8>)> {
    let mut all: Vec<(Lsn, Vec<u8>)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let size = &size;
                sc.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..per {
                        let p = payload(t, i, size(t, i));
                        let r = log.reserve(p.len()).unwrap();
                        let start = r.start;
                        let end = r.write(&p).unwrap();
                        if i % 7 == 0 {
                            log.wait_durable_blocking(end).unwrap();
                            assert!(log.durable_lsn() >= end);
                        }
                        mine.push((start, p));
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    all.sort_by_key(|r| r.0);
    all
}

#[test]
fn concurrent_appends_recover_in_lsn_order() {
    let d = TempDir::new("conc");
    let (log, rec) = Log::open(cfg(&d.0, 64 << 10, 256 << 10), 0).unwrap();
    assert!(rec.records.is_empty());
    let all = concurrent_fill(&log, 8, 400, |t, i| 1 + (t * 37 + i * 91) % 700);
    log.shutdown();
    assert_eq!(log.durable_lsn(), log.current_lsn());
    let end = log.current_lsn();
    drop(log);
    let (log, rec) = Log::open(cfg(&d.0, 64 << 10, 256 << 10), 0).unwrap();
    assert_eq!(rec.end_lsn, end);
    assert_eq!(rec.dropped_tail_bytes, 0, "{:?}", rec.notes);
    assert_eq!(rec.records.len(), all.len());
    assert!(
        rec.records == all,
        "recovered records differ from appended ones"
    );
    // Appends continue after the recovered end.
    let e = log.append(b"after").unwrap();
    assert_eq!(e, end + 8 + 5);
}

#[test]
fn wrap_around_with_records_larger_than_half_the_buffer() {
    let d = TempDir::new("wrap");
    let buf = 4096;
    let (log, _) = Log::open(cfg(&d.0, buf, 1 << 20), 0).unwrap();
    // > buf/2, and some larger than the whole ring (copied in pieces).
    let all = concurrent_fill(&log, 4, 60, |t, i| match (t + i) % 5 {
        0 => 2100,
        1 => 3000,
        2 => 4000,
        3 => 11_000,
        _ => 17,
    });
    drop(log);
    let (_log, rec) = Log::open(cfg(&d.0, buf, 1 << 20), 0).unwrap();
    assert!(rec.records == all);
}

#[test]
fn records_across_segment_boundaries_and_segment_reader() {
    let d = TempDir::new("segs");
    let (log, _) = Log::open(cfg(&d.0, 16 << 10, 4096), 0).unwrap();
    let all = concurrent_fill(&log, 3, 40, |t, i| 500 + (t * 131 + i * 577) % 3000);
    // One record spanning several whole segments.
    let big = payload(99, 0, 20_000);
    let big_start = log.current_lsn();
    log.append(&big).unwrap();
    drop(log);
    let segs = segment_files(&d.0);
    assert!(segs.len() > 10, "{} segments", segs.len());
    let (_log, rec) = Log::open(cfg(&d.0, 16 << 10, 4096), 0).unwrap();
    let mut expect = all.clone();
    expect.push((big_start, big.clone()));
    assert!(rec.records == expect);
    // Reading each segment file on its own yields the records starting in it.
    let mut via_reader = Vec::new();
    for p in &segs {
        for r in SegmentReader::open(p).unwrap() {
            via_reader.push(r.unwrap());
        }
    }
    assert!(via_reader == expect);
}

#[test]
fn crash_reopen_keeps_everything_durable() {
    let how = [
        Unsynced::LoseAll,
        Unsynced::KeepAll,
        Unsynced::Seeded(1),
        Unsynced::Seeded(2),
        Unsynced::Seeded(3),
    ];
    for how in how {
        let mem = MemStorage::new();
        let c = mem_cfg(64 << 10, 64 << 10);
        let (log, _) = Log::open_with(c.clone(), Arc::new(mem.clone()), 0).unwrap();
        let mut durable = Vec::new();
        for i in 0..200 {
            let p = payload(1, i, 100 + i);
            let start = log.current_lsn();
            let end = log.append(&p).unwrap();
            log.wait_durable_blocking(end).unwrap();
            durable.push((start, p));
        }
        // Not waited for: may or may not survive.
        let mut all = durable.clone();
        for i in 0..50 {
            let p = payload(2, i, 300);
            all.push((log.current_lsn(), p.clone()));
            log.append(&p).unwrap();
        }
        let after = mem.crash(how);
        drop(log);
        let (_log, rec) = Log::open_with(c, Arc::new(after), 0).unwrap();
        assert!(rec.records.len() >= durable.len(), "{how:?}");
        assert!(rec.records[..] == all[..rec.records.len()], "{how:?}");
    }
}

pub(super) fn fill_simple(d: &Path, n: usize, seg: u64) -> Vec<(Lsn, Vec<u8>)> {
    fill_in(Arc::new(OsStorage::new()), cfg(d, 64 << 10, seg), n)
}

/// Appends `n` records without waiting, then shuts the log down.
pub(super) fn fill_in(st: Arc<dyn Storage>, c: LogConfig, n: usize) -> Vec<(Lsn, Vec<u8>)> {
    let (log, _) = Log::open_with(c, st, 0).unwrap();
    let mut v = Vec::new();
    for i in 0..n {
        let p = payload(3, i, 50 + (i * 13) % 200);
        let start = log.current_lsn();
        log.append(&p).unwrap();
        v.push((start, p));
    }
    log.shutdown();
    v
}

#[test]
fn torn_tail_is_truncated() {
    let d = TempDir::new("torn");
    let all = fill_simple(&d.0, 50, 1 << 20);
    let (last_lsn, last) = all.last().unwrap().clone();
    let (path, off) = locate(&d.0, last_lsn);
    // Cut the last record in the middle of its payload.
    let cut = off + 8 + last.len() as u64 / 2;
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(cut)
        .unwrap();
    let (log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    assert!(rec.records[..] == all[..all.len() - 1]);
    assert_eq!(rec.end_lsn, last_lsn);
    assert_eq!(rec.dropped_tail_bytes, 8 + last.len() as u64 / 2);
    assert!(!rec.notes.is_empty());
    // The dropped tail is zeroed (the segment stays preallocated).
    let mut rest = vec![1u8; 8 + last.len()];
    fs::File::open(&path)
        .unwrap()
        .read_exact_at(&mut rest, off)
        .unwrap();
    assert!(
        rest.iter().all(|&b| b == 0),
        "tail zeroed after the last good record"
    );
    // New appends follow the last good record and survive a reopen.
    let p = payload(4, 0, 77);
    log.append(&p).unwrap();
    drop(log);
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    assert_eq!(rec.records.len(), all.len());
    assert_eq!(rec.records.last().unwrap(), &(last_lsn, p));
    assert_eq!(rec.dropped_tail_bytes, 0);
}

#[test]
fn zeroed_tail_is_a_clean_end() {
    let d = TempDir::new("zeros");
    let all = fill_simple(&d.0, 20, 1 << 20);
    // Segments are preallocated with zeros; also try a short file whose tail
    // is 5000 zero bytes.
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    assert!(rec.records == all);
    assert_eq!(rec.dropped_tail_bytes, 0, "zeros are a clean end, not data");
    drop(_log);
    let (last_lsn, last) = all.last().unwrap().clone();
    let (path, off) = locate(&d.0, last_lsn);
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(off + 8 + last.len() as u64 + 5000)
        .unwrap();
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    assert!(rec.records == all);
    assert_eq!(rec.dropped_tail_bytes, 0);
    assert!(rec.notes.is_empty(), "{:?}", rec.notes);
}

#[test]
fn flipped_byte_in_last_record_is_dropped_with_a_note() {
    let d = TempDir::new("fliplast");
    let all = fill_simple(&d.0, 30, 1 << 20);
    let (last_lsn, last) = all.last().unwrap().clone();
    flip(&d.0, last_lsn + 8 + 10);
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    assert!(rec.records[..] == all[..all.len() - 1]);
    assert_eq!(rec.dropped_tail_bytes, 8 + last.len() as u64);
    assert!(
        rec.notes.iter().any(|n| n.contains("checksum")),
        "{:?}",
        rec.notes
    );
}

#[test]
fn flipped_byte_in_the_middle_is_an_error() {
    for (tag, delta) in [("payload", 8 + 3), ("len", 1), ("crc", 5)] {
        let d = TempDir::new(&format!("flipmid-{tag}"));
        let all = fill_simple(&d.0, 30, 1 << 20);
        let bad = all[12].0;
        flip(&d.0, bad + delta);
        match Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0) {
            Err(LogError::CorruptMiddle { lsn, next_good, .. }) => {
                assert_eq!(lsn, bad, "{tag}");
                assert_eq!(next_good, all[13].0, "{tag}");
            }
            Err(e) => panic!("{tag}: unexpected error {e}"),
            Ok(_) => panic!("{tag}: corrupt middle record was accepted"),
        }
        // Nothing was truncated: the file still holds every record.
        let (p, _) = locate(&d.0, all.last().unwrap().0);
        let mut it = SegmentReader::open(&p).unwrap();
        assert!(it.any(|r| r.is_err()), "{tag}: reader reports the damage");
    }
}

#[test]
fn truncate_before_and_reopen_from_later_lsn() {
    let d = TempDir::new("trunc");
    let seg = 4096;
    let all = fill_simple(&d.0, 300, seg);
    let before = segment_files(&d.0).len();
    let (log, rec) = Log::open(cfg(&d.0, 64 << 10, seg), 0).unwrap();
    assert!(rec.records == all);
    let k = 200;
    let ck = all[k].0;
    log.truncate_before(ck).unwrap();
    let after = segment_files(&d.0).len();
    assert!(after < before, "{after} < {before}");
    // Every remaining segment ends after the checkpoint.
    for p in segment_files(&d.0) {
        let start = format::parse_seg_name(p.file_name().unwrap().to_str().unwrap()).unwrap();
        assert!(start + seg > ck);
    }
    let extra = payload(5, 0, 123);
    let extra_lsn = log.current_lsn();
    log.append(&extra).unwrap();
    drop(log);
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, seg), ck).unwrap();
    let mut expect = all[k..].to_vec();
    expect.push((extra_lsn, extra));
    assert!(rec.records == expect);
}

#[test]
fn dropped_segments_are_reused_and_their_old_bytes_never_read() {
    let mem = MemStorage::new();
    let seg = 4096;
    let c = mem_cfg(64 << 10, seg);
    let all = fill_in(Arc::new(mem.clone()), c.clone(), 300);
    let (log, _) = Log::open_with(c.clone(), Arc::new(mem.clone()), 0).unwrap();
    let ck = all[250].0;
    log.truncate_before(ck).unwrap();
    let spares = format::spares(&mem, &c.dir).len();
    assert!(spares > 2, "dropped segments kept as spares: {spares}");
    assert!(spares <= format::MAX_SPARES);
    // The spares hold old records, which must not reappear in their new place.
    // The log's preparer may take a spare between the listing and the read.
    let listed = format::spares(&mem, &c.dir);
    let spare = listed
        .iter()
        .find_map(|p| mem.contents(p))
        .expect("a spare left");
    assert!(spare[format::SEG_HEADER as usize..].iter().any(|&b| b != 0));
    let mut expect = all[250..].to_vec();
    let mut end = 0;
    for i in 0..200 {
        let p = payload(9, i, 30 + (i * 17) % 150);
        let start = log.current_lsn();
        end = log.append(&p).unwrap();
        expect.push((start, p));
    }
    log.wait_durable_blocking(end).unwrap();
    let left = format::spares(&mem, &c.dir).len();
    assert!(
        left < spares,
        "new segments came from spares: {left} of {spares} left"
    );
    // A crash and a clean stop both recover exactly the records, with no
    // torn tail: recycled segments are zeroed before use.
    let after = mem.crash(Unsynced::KeepAll);
    drop(log);
    for _ in 0..2 {
        let (log, rec) = Log::open_with(c.clone(), Arc::new(after.clone()), ck).unwrap();
        assert!(rec.records == expect);
        assert_eq!(rec.dropped_tail_bytes, 0, "{:?}", rec.notes);
        log.shutdown();
    }
}

struct CountWaker(AtomicUsize);
impl Wake for CountWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub(super) fn wait_until(mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn wait_durable_wakes_each_waiter_once_after_durable() {
    let d = TempDir::new("wake");
    let (log, _) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    log.append(b"first").unwrap();
    // A hole at the head holds back everything after it.
    let hole = log.reserve(100).unwrap();
    let ends: Vec<Lsn> = (0..5)
        .map(|i| log.append(&payload(6, i, 40)).unwrap())
        .collect();
    let counters: Vec<Arc<CountWaker>> = (0..5)
        .map(|_| Arc::new(CountWaker(AtomicUsize::new(0))))
        .collect();
    let mut futs: Vec<_> = ends
        .iter()
        .map(|&e| Box::pin(log.wait_durable(e)))
        .collect();
    for (f, c) in futs.iter_mut().zip(&counters) {
        let w = Waker::from(c.clone());
        assert!(f.as_mut().poll(&mut Context::from_waker(&w)).is_pending());
        // Re-polling with the same waker must not register a second entry.
        assert!(f.as_mut().poll(&mut Context::from_waker(&w)).is_pending());
    }
    std::thread::sleep(Duration::from_millis(50));
    assert!(log.durable_lsn() < ends[0]);
    assert!(counters.iter().all(|c| c.0.load(Ordering::SeqCst) == 0));
    hole.write(&payload(6, 99, 100)).unwrap();
    wait_until(|| counters.iter().all(|c| c.0.load(Ordering::SeqCst) >= 1));
    assert!(log.durable_lsn() >= *ends.last().unwrap());
    std::thread::sleep(Duration::from_millis(50));
    // Later commits and fsyncs do not wake them again.
    for i in 0..20 {
        let e = log.append(&payload(7, i, 40)).unwrap();
        log.wait_durable_blocking(e).unwrap();
    }
    for (f, c) in futs.iter_mut().zip(&counters) {
        assert_eq!(c.0.load(Ordering::SeqCst), 1, "woken exactly once");
        let w = Waker::from(c.clone());
        assert!(matches!(
            f.as_mut().poll(&mut Context::from_waker(&w)),
            Poll::Ready(Ok(()))
        ));
    }
}

#[test]
fn async_wait_from_a_minimal_executor() {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let w = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&w);
        let mut f = std::pin::pin!(f);
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
            std::thread::park();
        }
    }
    let d = TempDir::new("async");
    let (log, _) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    for i in 0..100 {
        let e = log.append(&payload(8, i, 200)).unwrap();
        block_on(log.wait_durable(e)).unwrap();
        assert!(log.durable_lsn() >= e);
    }
}

#[test]
fn dropped_reservation_is_padding() {
    let d = TempDir::new("pad");
    let (log, _) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    let a = log.current_lsn();
    log.append(b"one").unwrap();
    drop(log.reserve(500).unwrap());
    let b = log.current_lsn();
    let e = log.append(b"two").unwrap();
    log.wait_durable_blocking(e).unwrap();
    drop(log);
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    assert_eq!(
        rec.records,
        vec![(a, b"one".to_vec()), (b, b"two".to_vec())]
    );
}

#[test]
fn io_failure_fails_waiters_and_later_reserves() {
    let d = TempDir::new("fail");
    let (log, _) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    let e = log.append(b"ok").unwrap();
    log.wait_durable_blocking(e).unwrap();
    // On the real file system, through the storage's fault switches, once
    // the preparer is idle (else its zero-fill may take the failure).
    wait_until(|| log.shared.prepared.lock().is_some());
    log.faults().fail_io(1);
    let e2 = log.append(b"doomed").unwrap();
    let r = log.wait_durable_blocking(e2);
    assert!(matches!(r, Err(LogError::Failed(_))), "{r:?}");
    assert!(
        log.durable_lsn() < e2,
        "never ack a record that is not on disk"
    );
    assert!(matches!(log.reserve(10), Err(LogError::Failed(_))));
}

#[test]
fn write_only_and_per_second_modes() {
    for mode in [FlushMode::WriteOnly, FlushMode::PerSecond] {
        let d = TempDir::new("modes");
        let mut c = cfg(&d.0, 64 << 10, 1 << 20);
        c.flush_mode = mode;
        let (log, _) = Log::open(c.clone(), 0).unwrap();
        let mut all = Vec::new();
        for i in 0..50 {
            let p = payload(9, i, 64);
            let s = log.current_lsn();
            let e = log.append(&p).unwrap();
            log.wait_durable_blocking(e).unwrap();
            if mode == FlushMode::WriteOnly {
                assert!(log.written_lsn() >= e);
            }
            all.push((s, p));
        }
        drop(log);
        let (_log, rec) = Log::open(c, 0).unwrap();
        assert!(rec.records == all);
    }
}

#[test]
fn reserve_after_shutdown_fails_and_lock_is_exclusive() {
    let d = TempDir::new("shut");
    let (log, _) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).unwrap();
    assert!(matches!(
        Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0),
        Err(LogError::Locked(_))
    ));
    log.shutdown();
    assert!(matches!(log.reserve(10), Err(LogError::Shutdown)));
}

/// A thread's nice value and name, from /proc.
fn nice_and_name(tid: i32) -> (i32, String) {
    let dir = PathBuf::from(format!("/proc/self/task/{tid}"));
    let name = fs::read_to_string(dir.join("comm")).unwrap();
    let stat = fs::read_to_string(dir.join("stat")).unwrap();
    // Fields after the parenthesised name start at field 3 (state); nice
    // is field 19.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    (
        rest.split(' ').nth(16).unwrap().parse().unwrap(),
        name.trim_end().to_string(),
    )
}

#[test]
fn commit_path_threads_run_ahead_on_request_and_back() {
    let d = TempDir::new("urgent");
    let (log, _) = Log::open(cfg(&d.0, 64 << 10, 64 << 10), 0).unwrap();
    let tids = log.shared.commit_tids.get().expect("set by open").clone();
    let mut names: Vec<String> = tids.iter().map(|&t| nice_and_name(t).1).collect();
    names.sort();
    assert_eq!(names, ["log-flusher", "log-notifier", "log-writer"]);
    assert!(tids.iter().all(|&t| nice_and_name(t).0 == 0));
    match log.set_urgent(true) {
        Ok(()) => assert!(tids
            .iter()
            .all(|&t| nice_and_name(t).0 == threads::URGENT_NICE)),
        // Not permitted here: nothing changed.
        Err(e) => {
            assert_eq!(e.raw_os_error(), Some(libc::EACCES), "{e}");
            assert!(tids.iter().all(|&t| nice_and_name(t).0 == 0));
        }
    }
    log.set_urgent(false).unwrap();
    assert!(tids.iter().all(|&t| nice_and_name(t).0 == 0));
    log.shutdown();
}
