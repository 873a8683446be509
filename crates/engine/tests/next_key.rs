//! Next-key locking: a Repeatable Read locking read keeps phantoms out of
//! the range it read (and the gap after it), Read Committed does not, and
//! purge leaves an entry whose gap is locked.

use lockstep_engine::{Engine, EngineConfig, Error, Isolation, LockMode, Txn};
use lockstep_tables::Table;
use lockstep_types::Value;
use std::ops::Bound;
use std::sync::Arc;

mod common;
use common::id_v_table as def;

struct Fixture {
    engine: Arc<Engine>,
    table: Arc<Table>,
    dir: std::path::PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.engine.shutdown();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A table with ids 5, 10, 15, 25 (v = id * 10).
async fn fixture(name: &str) -> Fixture {
    let dir = std::env::temp_dir().join(format!("lockstep-next-key-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
    engine.create_database("d", false).await.expect("create db");
    engine.create_table(def()).await.expect("create table");
    let table = engine.catalog.table("d", "t").expect("table exists");
    let f = Fixture { engine, table, dir };
    for id in [5, 10, 15, 25] {
        let mut txn = f.engine.begin(Isolation::RepeatableRead);
        assert!(try_insert(&f, &mut txn, id), "setup insert {id}");
        f.engine.commit(&mut txn).await.expect("commit");
    }
    f
}

fn key(id: i64) -> Vec<u8> {
    let mut k = Vec::new();
    Value::Int(id).encode_key(&mut k);
    k
}

/// Inserts (id, id * 10): true if done, false if it has to wait for a lock
/// (the statement is rolled back, as the session does before waiting).
fn try_insert(f: &Fixture, txn: &mut Txn, id: i64) -> bool {
    txn.start_statement();
    let schema = f.table.schema();
    let r = f.engine.insert(
        txn,
        &f.table,
        &schema,
        vec![Value::Int(id), Value::Int(id * 10)],
    );
    match r {
        Ok(Ok(_)) => true,
        Ok(Err(_)) => panic!("duplicate {id}"),
        Err(Error::LockWait(_)) => {
            f.engine.rollback_statement(txn);
            f.engine.lock_abandoned(txn);
            false
        }
        Err(Error::Sql(e)) => panic!("insert {id}: {e}"),
    }
}

/// SELECT id FROM t WHERE id BETWEEN lo AND hi FOR UPDATE.
fn lock_range(f: &Fixture, txn: &mut Txn, lo: i64, hi: i64, reverse: bool) -> Vec<i64> {
    let (lo, hi) = (key(lo), key(hi));
    let mut seen = Vec::new();
    let r = f.engine.scan_primary(
        txn,
        &f.table,
        Bound::Included(&lo),
        Bound::Included(&hi),
        reverse,
        Some(LockMode::Exclusive),
        &mut |_, row| {
            seen.push(row.get(0).to_i64().expect("int"));
            Ok(true)
        },
    );
    assert!(r.is_ok(), "range lock granted");
    seen
}

#[tokio::test]
async fn repeatable_read_range_lock_blocks_phantoms() {
    for reverse in [false, true] {
        let f = fixture(if reverse { "rr-rev" } else { "rr" }).await;
        let mut t1 = f.engine.begin(Isolation::RepeatableRead);
        let mut seen = lock_range(&f, &mut t1, 10, 20, reverse);
        seen.sort();
        assert_eq!(seen, vec![10, 15]);
        let mut t2 = f.engine.begin(Isolation::RepeatableRead);
        // Inside the range, and in the gaps next to it: (5,10) and (15,25).
        for id in [7, 12, 20, 22] {
            assert!(
                !try_insert(&f, &mut t2, id),
                "insert {id} waits (reverse={reverse})"
            );
        }
        // Outside the locked gaps.
        for id in [3, 30] {
            assert!(try_insert(&f, &mut t2, id), "insert {id} goes ahead");
        }
        f.engine.commit(&mut t1).await.expect("commit t1");
        assert!(try_insert(&f, &mut t2, 12), "after t1 ends the gap is free");
        f.engine.commit(&mut t2).await.expect("commit t2");
    }
}

#[tokio::test]
async fn read_committed_takes_no_gap_locks() {
    let f = fixture("rc").await;
    let mut t1 = f.engine.begin(Isolation::ReadCommitted);
    assert_eq!(lock_range(&f, &mut t1, 10, 20, false), vec![10, 15]);
    let mut t2 = f.engine.begin(Isolation::RepeatableRead);
    assert!(try_insert(&f, &mut t2, 12));
    f.engine.commit(&mut t2).await.expect("commit");
    f.engine.rollback(&mut t1);
}

#[tokio::test]
async fn missing_row_locks_its_gap() {
    let f = fixture("point").await;
    let mut t1 = f.engine.begin(Isolation::RepeatableRead);
    let r = f
        .engine
        .read_locked(&mut t1, &f.table, &key(12), LockMode::Exclusive);
    assert!(matches!(r, Ok(None)));
    let mut t2 = f.engine.begin(Isolation::RepeatableRead);
    assert!(
        !try_insert(&f, &mut t2, 12),
        "the missing key stays missing"
    );
    assert!(
        !try_insert(&f, &mut t2, 13),
        "its whole gap (10,15) is locked"
    );
    assert!(try_insert(&f, &mut t2, 20), "the next gap is not");
    f.engine.rollback(&mut t1);
    f.engine.rollback(&mut t2);
}

#[tokio::test]
async fn secondary_range_lock_blocks_phantoms() {
    let f = fixture("secondary").await;
    let schema = f.table.schema();
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    Value::Int(100).encode_key(&mut lo);
    Value::Int(200).encode_key(&mut hi);
    hi.push(0xFF); // past every entry whose index key is 200
    let mut t1 = f.engine.begin(Isolation::RepeatableRead);
    let mut seen = Vec::new();
    let r = f.engine.scan_secondary(
        &mut t1,
        &f.table,
        &schema,
        1,
        Bound::Included(&lo),
        Bound::Excluded(&hi),
        false,
        Some(LockMode::Shared),
        &mut |_, row| {
            seen.push(row.get(0).to_i64().expect("int"));
            Ok(true)
        },
    );
    assert!(r.is_ok());
    assert_eq!(seen, vec![10, 15]);
    let mut t2 = f.engine.begin(Isolation::RepeatableRead);
    // id 12 has v = 120, inside the locked index range.
    assert!(!try_insert(&f, &mut t2, 12));
    assert!(try_insert(&f, &mut t2, 40), "v = 400 is past the next key");
    f.engine.rollback(&mut t1);
    f.engine.rollback(&mut t2);
}

#[tokio::test]
async fn purge_keeps_an_entry_whose_gap_is_locked() {
    let f = fixture("purge").await;
    // Delete 15 and commit.
    let mut t3 = f.engine.begin(Isolation::RepeatableRead);
    let old = f
        .engine
        .read_locked(&mut t3, &f.table, &key(15), LockMode::Exclusive)
        .ok()
        .flatten()
        .expect("row 15");
    {
        let schema = f.table.schema();
        assert!(f
            .engine
            .delete(&mut t3, &f.table, &schema, &key(15), &old.to_values())
            .is_ok());
    }
    f.engine.commit(&mut t3).await.expect("commit delete");
    // t1 reads over the deleted row: it locks 15's gap.
    let mut t1 = f.engine.begin(Isolation::RepeatableRead);
    assert_eq!(lock_range(&f, &mut t1, 10, 20, false), vec![10]);
    f.engine.purge(100);
    assert!(
        f.table.record(&key(15)).is_some(),
        "purge waits for the gap lock"
    );
    let mut t2 = f.engine.begin(Isolation::RepeatableRead);
    assert!(!try_insert(&f, &mut t2, 13), "the gap is still locked");
    f.engine.rollback(&mut t2);
    f.engine.commit(&mut t1).await.expect("commit t1");
    f.engine.purge(100);
    assert!(
        f.table.record(&key(15)).is_none(),
        "purged once the gap is free"
    );
}

/// A reverse locking scan with no upper bound (UPDATE ... ORDER BY id DESC
/// LIMIT n) locks the supremum gap and finishes; it once looped forever
/// re-checking a gap it had not passed.
#[tokio::test]
async fn reverse_scan_without_upper_bound_locks_the_supremum() {
    let f = fixture("rev-unbounded").await;
    let mut t1 = f.engine.begin(Isolation::RepeatableRead);
    let lo = key(12);
    let mut seen = Vec::new();
    let r = f.engine.scan_primary(
        &mut t1,
        &f.table,
        Bound::Included(&lo),
        Bound::Unbounded,
        true,
        Some(LockMode::Exclusive),
        &mut |_, row| {
            seen.push(row.get(0).to_i64().expect("int"));
            Ok(seen.len() < 2)
        },
    );
    assert!(r.is_ok());
    assert_eq!(seen, vec![25, 15]);
    let mut t2 = f.engine.begin(Isolation::RepeatableRead);
    assert!(!try_insert(&f, &mut t2, 30), "the supremum gap is locked");
    f.engine.rollback(&mut t1);
    assert!(try_insert(&f, &mut t2, 30), "free once t1 ends");
    f.engine.rollback(&mut t2);
}

/// A Read Committed locking scan; None when it meets a lock it must wait
/// for (the wait is abandoned, as a session does when it gives up).
fn try_locking_scan(
    f: &Fixture,
    txn: &mut Txn,
    index: usize,
    lo: i64,
    hi: i64,
) -> Option<Vec<i64>> {
    let schema = f.table.schema();
    let (mut lo_key, mut hi_key) = (Vec::new(), Vec::new());
    Value::Int(lo).encode_key(&mut lo_key);
    Value::Int(hi).encode_key(&mut hi_key);
    hi_key.push(0xFF); // past every entry whose key is `hi`
    let (lo, hi) = (Bound::Included(&lo_key[..]), Bound::Excluded(&hi_key[..]));
    let mut seen = Vec::new();
    let mut visit = |_: &[u8], row: lockstep_tables::Row| {
        seen.push(row.get(0).to_i64().expect("int"));
        Ok(true)
    };
    let mode = Some(LockMode::Exclusive);
    txn.start_statement();
    let r = if index == 0 {
        f.engine
            .scan_primary(txn, &f.table, lo, hi, false, mode, &mut visit)
    } else {
        f.engine.scan_secondary(
            txn, &f.table, &schema, index, lo, hi, false, mode, &mut visit,
        )
    };
    match r {
        Ok(()) => Some(seen),
        Err(Error::LockWait(_)) => {
            f.engine.lock_abandoned(txn);
            None
        }
        Err(Error::Sql(e)) => panic!("scan: {e}"),
    }
}

/// Without gap locks, a locking read still waits for a row whose newest
/// version a running transaction deleted or moved off the key: that
/// transaction may roll back, and the row is then there after all (an FK
/// cascade that passed such a child left it orphaned).
#[tokio::test]
async fn read_committed_waits_for_an_uncommitted_delete_or_move() {
    let f = fixture("rc-uncommitted").await;
    let mut t3 = waits_for_running_writers(&f);
    f.engine.commit(&mut t3).await.expect("commit");
    let mut t4 = f.engine.begin(Isolation::ReadCommitted);
    assert_eq!(
        try_locking_scan(&f, &mut t4, 0, 0, 7),
        Some(vec![]),
        "committed delete passed"
    );
    f.engine.rollback(&mut t4);
}

/// Returns an open transaction that deleted id 5, to be committed.
fn waits_for_running_writers(f: &Fixture) -> Txn {
    let schema = f.table.schema();
    let mut t1 = f.engine.begin(Isolation::RepeatableRead);
    let row = |id: i64, v: i64| vec![Value::Int(id), Value::Int(v)];
    let deleted = f
        .engine
        .delete(&mut t1, &f.table, &schema, &key(10), &row(10, 100));
    assert!(deleted.is_ok(), "delete");
    let moved = f.engine.update(
        &mut t1,
        &f.table,
        &schema,
        &key(15),
        &row(15, 150),
        row(15, 990),
    );
    assert!(matches!(moved, Ok(Ok(()))), "update");
    let mut t2 = f.engine.begin(Isolation::ReadCommitted);
    assert_eq!(
        try_locking_scan(f, &mut t2, 0, 8, 12),
        None,
        "deleted 10 is waited for"
    );
    assert_eq!(
        try_locking_scan(f, &mut t2, 1, 140, 160),
        None,
        "moved 15 is waited for"
    );
    assert_eq!(
        try_locking_scan(f, &mut t2, 1, 240, 260),
        Some(vec![25]),
        "others pass"
    );
    f.engine.rollback(&mut t1);
    assert_eq!(try_locking_scan(f, &mut t2, 0, 8, 12), Some(vec![10]));
    assert_eq!(try_locking_scan(f, &mut t2, 1, 140, 160), Some(vec![15]));
    f.engine.rollback(&mut t2);
    // A committed delete is passed without a lock.
    let mut t3 = f.engine.begin(Isolation::RepeatableRead);
    let deleted = f
        .engine
        .delete(&mut t3, &f.table, &schema, &key(5), &row(5, 50));
    assert!(deleted.is_ok(), "delete");
    t3
}
