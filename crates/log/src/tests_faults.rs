//! Faults injected through the storage (`MemStorage`): a failed fsync, a
//! torn write, a crash that loses what was not synced. What the committers
//! see, and what recovery finds afterwards.

use std::io;
use std::path::Path;

use super::tests::{mem_cfg, payload, wait_until};
use super::*;

type Records = Vec<(Lsn, Vec<u8>)>;

/// Waits until the preparer's next segment is complete and synced, so a
/// one-shot fault armed afterwards hits the writer or the flusher.
fn wait_prepared(mem: &MemStorage, c: &LogConfig) {
    let p = c.dir.join(format::PREP_NAME);
    let full = format::SEG_HEADER + c.segment_size;
    wait_until(|| {
        mem.contents(&p).is_some_and(|d| d.len() as u64 == full) && mem.unsynced(&p) == Some(0)
    });
}

/// Opens a log on a fresh `MemStorage` and appends `n` records, each
/// waited for; returns them (acknowledged).
fn open_acked(c: &LogConfig, n: usize) -> (MemStorage, Log, Records) {
    let mem = MemStorage::new();
    let (log, _) = Log::open_with(c.clone(), Arc::new(mem.clone()), 0).expect("opens");
    let mut acked = Vec::new();
    for i in 0..n {
        let p = payload(30, i, 40 + i % 90);
        let start = log.current_lsn();
        let end = log.append(&p).expect("append");
        log.wait_durable_blocking(end).expect("durable");
        acked.push((start, p));
    }
    (mem, log, acked)
}

fn reopen(c: &LogConfig, mem: MemStorage) -> (Log, Recovered) {
    Log::open_with(c.clone(), Arc::new(mem), 0).expect("reopens")
}

#[test]
fn failed_fsync_fails_the_waiting_commit_and_refuses_later_writes() {
    let c = mem_cfg(64 << 10, 64 << 10);
    let (mem, log, acked) = open_acked(&c, 20);
    wait_prepared(&mem, &c);
    mem.faults().fail_syncs(1);
    let end = log.append(b"doomed").expect("reserved before the failure");
    let r = log.wait_durable_blocking(end);
    match &r {
        Err(LogError::Failed(inner)) => {
            assert!(
                matches!(**inner, LogError::Io { op: "fsync", .. }),
                "{inner}"
            )
        }
        other => panic!("expected the fsync error, got {other:?}"),
    }
    assert_eq!(r.expect_err("failed").errno(), Some(libc::EIO));
    assert!(log.durable_lsn() < end, "never ack what is not on disk");
    assert!(matches!(log.reserve(10), Err(LogError::Failed(_))));
    // The unsynced record may or may not survive; the acknowledged ones do.
    let (_log, rec) = reopen(&c, mem.crash(Unsynced::LoseAll));
    assert!(rec.records == acked);
}

#[test]
fn torn_write_then_crash_keeps_exactly_the_acknowledged_records() {
    let c = mem_cfg(64 << 10, 64 << 10);
    for how in [Unsynced::KeepAll, Unsynced::LoseAll, Unsynced::Seeded(7)] {
        let (mem, log, acked) = open_acked(&c, 30);
        wait_prepared(&mem, &c);
        // 20 bytes of the 108-byte record reach the file, then EIO.
        mem.faults().tear_next_write(20);
        let end = log.append(&payload(31, 0, 100)).expect("reserved");
        let r = log.wait_durable_blocking(end);
        assert!(matches!(r, Err(LogError::Failed(_))), "{r:?}");
        assert!(matches!(log.reserve(10), Err(LogError::Failed(_))));
        let after = mem.crash(how);
        drop(log);
        let (_log, rec) = reopen(&c, after);
        assert!(rec.records == acked, "{how:?}");
        assert!(rec.dropped_tail_bytes <= 20, "{how:?}: {:?}", rec.notes);
        if how == Unsynced::KeepAll {
            assert!(rec.dropped_tail_bytes > 0, "the torn bytes were there");
        }
    }
}

#[test]
fn crash_without_fsync_in_write_only_mode_keeps_everything_durable() {
    let mut c = mem_cfg(64 << 10, 16 << 10);
    c.flush_mode = FlushMode::WriteOnly;
    let how = [
        Unsynced::LoseAll,
        Unsynced::KeepAll,
        Unsynced::Seeded(11),
        Unsynced::Seeded(12),
    ];
    for how in how {
        // Acknowledged once written; the flusher fsyncs once a second.
        let (mem, log, first) = open_acked(&c, 100);
        let synced_to = first.last().map(|(s, p)| s + 8 + p.len() as u64);
        wait_until(|| Some(log.durable_lsn()) >= synced_to);
        let mut all = first.clone();
        for i in 0..300 {
            let p = payload(32, i, 60);
            let start = log.current_lsn();
            let end = log.append(&p).expect("append");
            log.wait_durable_blocking(end).expect("written");
            all.push((start, p));
        }
        let durable = log.durable_lsn();
        let after = mem.crash(how);
        drop(log);
        let (_log, rec) = reopen(&c, after);
        let n = rec.records.len();
        assert!(rec.records[..] == all[..n], "{how:?}: a prefix of the log");
        let kept_to = rec.end_lsn;
        assert!(kept_to >= durable, "{how:?}: lost {}", durable - kept_to);
        if how == Unsynced::KeepAll {
            // A process crash (the OS keeps its pages): nothing acked is lost.
            assert_eq!(n, all.len());
        }
    }
}

#[test]
fn mem_storage_keeps_synced_bytes_and_synced_names_only() {
    let mem = MemStorage::new();
    let dir = Path::new("/d");
    mem.create_dir_all(dir).expect("mkdir");
    let a = mem
        .open(&dir.join("a"), OpenMode::CreateTruncate)
        .expect("create a");
    a.write_all_at(b"hello", 0).expect("write");
    a.sync_data().expect("sync");
    a.write_all_at(b" world", 5).expect("write");
    mem.sync_dir(dir).expect("sync dir");
    // Created after the directory sync: its name is not durable.
    let b = mem.open(&dir.join("b"), OpenMode::CreateKeep).expect("b");
    b.write_all_at(b"x", 0).expect("write");
    b.sync_all().expect("sync");
    let after = mem.crash(Unsynced::LoseAll);
    assert_eq!(after.names(dir), vec!["a".to_string()]);
    assert_eq!(after.contents(&dir.join("a")).expect("a"), b"hello");
    let kept = mem_crash_copy(b"hello", b" world", Unsynced::KeepAll);
    assert_eq!(kept, b"hello world");
    // The lost process's view is dead: its handles fail with EIO.
    assert_eq!(
        a.write_at(b"!", 0).map_err(|e| e.raw_os_error()),
        Err(Some(5))
    );
    assert!(mem.list(dir).is_err());
}

/// Contents of a file that had `synced` synced and `more` appended after,
/// once crashed with `how`.
fn mem_crash_copy(synced: &[u8], more: &[u8], how: Unsynced) -> Vec<u8> {
    let mem = MemStorage::new();
    let dir = Path::new("/d");
    mem.create_dir_all(dir).expect("mkdir");
    let f = mem
        .open(&dir.join("f"), OpenMode::CreateTruncate)
        .expect("create");
    f.write_all_at(synced, 0).expect("write");
    f.sync_all().expect("sync");
    mem.sync_dir(dir).expect("sync dir");
    f.write_all_at(more, synced.len() as u64).expect("write");
    mem.crash(how).contents(&dir.join("f")).expect("f")
}

#[test]
fn seeded_crash_is_deterministic_and_keeps_a_prefix() {
    let more: Vec<u8> = (1..=200).collect();
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let x = mem_crash_copy(b"base", &more, Unsynced::Seeded(seed));
        assert_eq!(x, mem_crash_copy(b"base", &more, Unsynced::Seeded(seed)));
        assert!(x.starts_with(b"base"));
        assert!(more.starts_with(&x[4..]), "a prefix of what was written");
        seen.insert(x.len());
    }
    // Lose all, keep all, and cuts in between all occur.
    assert!(
        seen.contains(&4) && seen.contains(&204) && seen.len() > 3,
        "{seen:?}"
    );
}

#[test]
fn mem_storage_full_disk_until_freed() {
    let mem = MemStorage::new();
    let dir = Path::new("/d");
    mem.create_dir_all(dir).expect("mkdir");
    let a = mem
        .open(&dir.join("a"), OpenMode::CreateTruncate)
        .expect("a");
    a.write_all_at(&[1; 100], 0).expect("fits");
    mem.set_capacity(Some(150));
    let b = mem
        .open(&dir.join("b"), OpenMode::CreateTruncate)
        .expect("b");
    let e = b.write_all_at(&[2; 60], 0).expect_err("full");
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    // Overwriting allocated bytes still works.
    a.write_all_at(&[3; 100], 0).expect("overwrite");
    mem.remove(&dir.join("a")).expect("remove");
    drop(a);
    b.write_all_at(&[2; 60], 0).expect("space freed");
    assert_eq!(mem.used(), 60);
}

#[test]
fn os_storage_faults_carry_errno() {
    let d = super::tests::TempDir::new("osfaults");
    let st = OsStorage::new();
    st.create_dir_all(&d.0).expect("mkdir");
    let f = st
        .open(&d.0.join("f"), OpenMode::CreateTruncate)
        .expect("create");
    st.faults().set_full(true);
    let e = f.write_all_at(b"grow", 0).expect_err("full");
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    st.faults().set_full(false);
    f.write_all_at(b"grow", 0).expect("room again");
    st.faults().fail_syncs(1);
    let e: io::Error = f.sync_data().expect_err("fsync fails");
    assert_eq!(e.raw_os_error(), Some(libc::EIO));
    f.sync_data().expect("once");
    st.faults().tear_next_write(2);
    assert!(f.write_all_at(b"torn", 0).is_err());
    let mut b = [0u8; 4];
    f.read_exact_at(&mut b, 0).expect("read");
    assert_eq!(&b, b"toow");
    // One lock per directory.
    let l = st.lock(&d.0).expect("lock").expect("free");
    assert!(st.lock(&d.0).expect("lock").is_none());
    drop(l);
    assert!(st.lock(&d.0).expect("lock").is_some());
}
