//! Damaged files and a full disk: what recovery reports and refuses, and how
//! the log stops and resumes taking writes when no segment can be prepared.

use std::fs;
use std::time::{Duration, Instant};

use super::tests::{cfg, fill_simple, flip, locate, mem_cfg, payload, wait_until, TempDir};
use super::*;

#[test]
fn torn_tail_note_names_segment_offset_and_bytes() {
    let d = TempDir::new("tornnote");
    let all = fill_simple(&d.0, 40, 1 << 20);
    let (last_lsn, last) = all.last().expect("records written").clone();
    let (path, off) = locate(&d.0, last_lsn);
    let cut = off + 8 + 5;
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("segment opens")
        .set_len(cut)
        .expect("truncate");
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).expect("torn tail opens");
    assert!(rec.records[..] == all[..all.len() - 1]);
    let name = path.file_name().expect("file name").to_string_lossy();
    let want = format!("log: torn tail at segment {name} offset {off} (LSN {last_lsn}, ");
    let note = rec.notes.iter().find(|n| n.starts_with(&want));
    let note = note.unwrap_or_else(|| panic!("no note starting {want:?} in {:?}", rec.notes));
    assert!(note.contains("skipped 13 bytes"), "{note}");
    assert!(last.len() > 5);
}

#[test]
fn flipped_last_record_note_says_checksum_and_bytes() {
    let d = TempDir::new("flipnote");
    let all = fill_simple(&d.0, 30, 1 << 20);
    let (last_lsn, last) = all.last().expect("records written").clone();
    flip(&d.0, last_lsn + 8 + 1);
    let (_log, rec) = Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0).expect("opens");
    assert!(rec.records[..] == all[..all.len() - 1]);
    let want = format!("checksum mismatch): skipped {} bytes", 8 + last.len());
    assert!(
        rec.notes.iter().any(|n| n.contains(&want)),
        "{:?}",
        rec.notes
    );
}

#[test]
fn corrupt_middle_error_names_the_file_and_nothing_is_truncated() {
    let d = TempDir::new("midname");
    let all = fill_simple(&d.0, 30, 1 << 20);
    let bad = all[10].0;
    flip(&d.0, bad + 8 + 2);
    let (path, off) = locate(&d.0, bad);
    let len_before = fs::metadata(&path).expect("stat").len();
    for _ in 0..2 {
        let err = match Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0) {
            Err(e) => e,
            Ok(_) => panic!("damage in the middle was accepted"),
        };
        let text = err.to_string();
        let name = path.file_name().expect("file name").to_string_lossy();
        assert!(
            text.contains(&format!("segment {name} offset {off}")),
            "{text}"
        );
        assert!(text.contains("damage in the middle"), "{text}");
        // Refusing leaves the files as they were, so a retry refuses again.
        assert_eq!(fs::metadata(&path).expect("stat").len(), len_before);
    }
}

#[test]
fn damage_before_only_the_last_record_is_in_the_middle() {
    // The last record is intact and followed by the preallocated zeros: the
    // damage before it is not a tail, it would drop a committed record.
    let d = TempDir::new("beforelast");
    let all = fill_simple(&d.0, 30, 1 << 20);
    let bad = all[all.len() - 2].0;
    flip(&d.0, bad + 8 + 1);
    match Log::open(cfg(&d.0, 64 << 10, 1 << 20), 0) {
        Err(LogError::CorruptMiddle { lsn, next_good, .. }) => {
            assert_eq!((lsn, next_good), (bad, all[all.len() - 1].0));
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("an intact last record was dropped as a torn tail"),
    }
}

#[test]
fn missing_log_start_is_an_error() {
    let d = TempDir::new("missing");
    let seg = 4096;
    let all = fill_simple(&d.0, 300, seg);
    let (log, _) = Log::open(cfg(&d.0, 64 << 10, seg), 0).expect("opens");
    log.truncate_before(all[200].0).expect("truncate");
    drop(log);
    // Starting from LSN 0 (as when every checkpoint is unreadable) must not
    // silently start from the first segment left.
    match Log::open(cfg(&d.0, 64 << 10, seg), 0) {
        Err(LogError::Missing { from: 0, first }) => assert!(first > 0),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a log with its start deleted was accepted from LSN 0"),
    }
}

/// A log on a `MemStorage` whose disk is full once the segment prepared at
/// open is there: preparing the next one fails with ENOSPC.
fn open_full(seg: u64) -> (MemStorage, LogConfig, Log) {
    let mem = MemStorage::new();
    let c = mem_cfg(64 << 10, seg);
    let (log, _) = Log::open_with(c.clone(), Arc::new(mem.clone()), 0).expect("opens");
    // The preparer sleeps while the segment prepared at open waits unused.
    mem.set_capacity(Some(mem.used()));
    (mem, c, log)
}

#[test]
fn no_prepared_segment_refuses_writes_then_resumes() {
    let seg = 8192;
    let (mem, c, log) = open_full(seg);
    // The first record installs the segment prepared at open; preparing the
    // next one then fails, and from then on new records are refused.
    let mut acked = Vec::new();
    let mut refused = None;
    let t = Instant::now();
    for i in 0.. {
        let p = payload(20, i, 100);
        let start = log.current_lsn();
        match log.append(&p) {
            Ok(end) => {
                log.wait_durable_blocking(end).expect("durable");
                acked.push((start, p));
            }
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
        assert!(t.elapsed() < Duration::from_secs(10), "never refused");
        std::thread::sleep(Duration::from_millis(1));
    }
    let e = refused.expect("refused");
    assert!(matches!(e, LogError::NoSpace { .. }), "{e}");
    assert_eq!(e.errno(), Some(28), "{e}");
    assert!(log.out_of_space());
    // Refused records took no LSN: the next record follows the last acked.
    assert_eq!(
        log.current_lsn(),
        acked.last().map(|(s, p)| s + 8 + p.len() as u64).unwrap()
    );
    // Space is freed: the preparer's next retry succeeds.
    mem.set_capacity(None);
    wait_until(|| !log.out_of_space());
    for i in 0..(2 * seg as usize / 100) {
        let p = payload(21, i, 100);
        let start = log.current_lsn();
        let end = log.append(&p).expect("writes resume");
        log.wait_durable_blocking(end).expect("durable");
        acked.push((start, p));
    }
    let after = mem.crash(Unsynced::LoseAll);
    drop(log);
    let (_log, rec) = Log::open_with(c, Arc::new(after), 0).expect("reopens");
    assert!(rec.records == acked, "exactly the acknowledged records");
}

#[test]
fn clean_shutdown_without_space_keeps_everything_acknowledged() {
    let (mem, c, log) = open_full(8192);
    let p = payload(22, 0, 50);
    let start = log.current_lsn();
    let end = log.append(&p).expect("the first record fits");
    log.wait_durable_blocking(end).expect("durable");
    let acked = vec![(start, p)];
    wait_until(|| log.out_of_space());
    assert!(matches!(log.append(b"x"), Err(LogError::NoSpace { .. })));
    // Shutdown does not hang waiting for space it does not need.
    log.shutdown();
    drop(log);
    mem.set_capacity(None);
    let (_log, rec) = Log::open_with(c, Arc::new(mem), 0).expect("reopens");
    assert!(rec.records == acked);
}
