//! `Engine::apply`: a record logged by one engine, applied on another, is
//! a transaction there: same rows, the source's GTID, skipped when seen
//! again (also after a restart and a checkpoint), waiting for row locks,
//! invisible to older snapshots, and refused loudly when it does not fit.

use lockstep_binlog::{Event, TxnRecord, FORMAT_VERSION};
use lockstep_engine::{Applied, Engine, EngineConfig, Isolation, LockMode};
use lockstep_log::{Log, LogConfig};
use lockstep_types::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{id_v_table, insert_row, rows};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lockstep-apply-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Every record in the log of a (shut down) engine's data directory.
fn records_of(datadir: &Path) -> Vec<TxnRecord> {
    let (log, recovered) = Log::open(LogConfig::new(datadir.join("log")), 0).expect("open log");
    log.shutdown();
    recovered
        .records
        .iter()
        .map(|(_, bytes)| TxnRecord::decode(bytes).expect("decode"))
        .collect()
}

/// A source with d.t, rows 1..=5 inserted, 2 updated, 3 deleted (minimal
/// row images when `minimal`); returns its records and final rows.
async fn source(dir: &Path, minimal: bool) -> (Vec<TxnRecord>, Vec<(i64, i64)>) {
    let mut config = EngineConfig::new(dir);
    config.minimal_row_image = minimal;
    let engine = Engine::open(config).expect("open source");
    engine.create_database("d", false).await.expect("db");
    engine.create_table(id_v_table()).await.expect("table");
    let mut txn = insert_row(&engine, 1, 10);
    engine.commit(&mut txn).await.expect("commit");
    for i in 2..=5 {
        let mut txn = insert_row(&engine, i, i * 10);
        engine.commit(&mut txn).await.expect("commit");
    }
    let table = engine.catalog.table("d", "t").expect("t");
    let mut txn = engine.begin(Isolation::RepeatableRead);
    {
        let schema = table.schema();
        let pk2 = schema
            .def
            .index_key(0, &vec![Value::Int(2), Value::Int(20)][..]);
        let old = vec![Value::Int(2), Value::Int(20)];
        let new = vec![Value::Int(2), Value::Int(21)];
        assert!(matches!(
            engine.update(&mut txn, &table, &schema, &pk2, &old, new),
            Ok(Ok(()))
        ));
        let pk3 = schema
            .def
            .index_key(0, &vec![Value::Int(3), Value::Int(30)][..]);
        let old = vec![Value::Int(3), Value::Int(30)];
        assert!(engine.delete(&mut txn, &table, &schema, &pk3, &old).is_ok());
    }
    engine.commit(&mut txn).await.expect("commit");
    let final_rows = rows(&engine);
    engine.shutdown();
    drop(engine);
    (records_of(dir), final_rows)
}

async fn apply_all(engine: &Engine, records: &[TxnRecord]) -> Vec<Applied> {
    let mut out = Vec::new();
    for r in records {
        out.push(engine.apply(r).await.expect("apply"));
    }
    out
}

#[tokio::test]
async fn a_replica_converges_and_skips_what_it_has() {
    for minimal in [false, true] {
        let (src, dst) = (
            scratch(&format!("src{minimal}")),
            scratch(&format!("dst{minimal}")),
        );
        let (records, expected) = source(&src, minimal).await;
        assert_eq!(records.len(), 2 + 5 + 1);
        let source_uuid = lockstep_binlog::format_uuid(&records[0].server_uuid);

        let replica = Engine::open(EngineConfig::new(&dst)).expect("open replica");
        let done = apply_all(&replica, &records).await;
        assert!(done.iter().all(|a| *a == Applied::Committed));
        assert_eq!(rows(&replica), expected, "minimal={minimal}");
        assert_eq!(replica.gtid_executed(), format!("{source_uuid}:1-8"));
        let again = apply_all(&replica, &records).await;
        assert!(again.iter().all(|a| *a == Applied::AlreadyExecuted));

        // The replica's own commits get its own GTIDs beside the source's.
        let mut txn = insert_row(&replica, 100, 1);
        replica.commit(&mut txn).await.expect("own commit");
        let executed = replica.gtid_executed();
        assert!(
            executed.contains(&format!("{source_uuid}:1-8")),
            "{executed}"
        );
        assert!(
            executed.contains(&format!("{}:1", replica.server_uuid())),
            "{executed}"
        );

        // Durable: after a restart (log replay), then a checkpoint and a
        // restart (snapshot), the GTIDs are still known and skipped.
        replica.shutdown();
        drop(replica);
        for checkpoint in [false, true] {
            let replica = Engine::open(EngineConfig::new(&dst)).expect("reopen replica");
            assert_eq!(replica.gtid_executed(), executed);
            let again = apply_all(&replica, &records).await;
            assert!(again.iter().all(|a| *a == Applied::AlreadyExecuted));
            assert_eq!(rows(&replica).len(), expected.len() + 1);
            if checkpoint {
                replica.checkpoint().expect("checkpoint");
            }
            replica.shutdown();
        }
        let _ = std::fs::remove_dir_all(&src);
        let _ = std::fs::remove_dir_all(&dst);
    }
}

#[tokio::test]
async fn applied_rows_wait_for_row_locks_and_respect_snapshots() {
    let (src, dst) = (scratch("locks-src"), scratch("locks-dst"));
    let (records, _) = source(&src, false).await;
    let replica = Engine::open(EngineConfig::new(&dst)).expect("open replica");
    // Schema and the first insert (row 1).
    apply_all(&replica, &records[..3]).await;

    // A reader's snapshot from before the next apply does not see it.
    let mut reader = replica.begin(Isolation::RepeatableRead);
    replica.snapshot_now(&mut reader);
    // A client holds row 2's key; inserting row 2 must wait for it.
    let table = replica.catalog.table("d", "t").expect("t");
    let mut client = replica.begin(Isolation::RepeatableRead);
    let pk2 = table
        .def()
        .index_key(0, &vec![Value::Int(2), Value::Int(0)][..]);
    let _ = replica.read_locked(&mut client, &table, &pk2, LockMode::Exclusive);
    let apply = {
        let (replica, record) = (replica.clone(), records[3].clone());
        tokio::spawn(async move { replica.apply(&record).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!apply.is_finished(), "applied through a client's row lock");
    replica.rollback(&mut client);
    let applied = tokio::time::timeout(Duration::from_secs(10), apply).await;
    assert_eq!(
        applied.expect("in time").expect("task").expect("apply"),
        Applied::Committed
    );
    assert_eq!(rows(&replica), vec![(1, 10), (2, 20)]);
    let seen = visible_ids(&replica, &mut reader);
    assert_eq!(
        seen,
        vec![1],
        "an older snapshot does not see the applied row"
    );
    replica.rollback(&mut reader);
    replica.shutdown();
    let _ = std::fs::remove_dir_all(&src);
    let _ = std::fs::remove_dir_all(&dst);
}

fn visible_ids(engine: &Arc<Engine>, txn: &mut lockstep_engine::Txn) -> Vec<i64> {
    let table = engine.catalog.table("d", "t").expect("t");
    let mut ids = Vec::new();
    let _ = engine.scan_primary(
        txn,
        &table,
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        false,
        None,
        &mut |_, r| {
            ids.push(r.get(0).to_i64().expect("int"));
            Ok(true)
        },
    );
    ids
}

#[tokio::test]
async fn records_that_do_not_fit_fail_loudly_and_change_nothing() {
    let (src, dst) = (scratch("bad-src"), scratch("bad-dst"));
    let (records, _) = source(&src, false).await;
    let replica = Engine::open(EngineConfig::new(&dst)).expect("open replica");
    // Row events before the table exists: unknown table.
    let err = replica.apply(&records[2]).await.expect_err("unknown table");
    assert_eq!(err.number(), 1146, "{err}");
    assert!(
        !replica.gtid_done(records[2].gtid()),
        "a failed apply takes no GTID"
    );
    apply_all(&replica, &records[..2]).await;
    // The update of row 2 before row 2 was inserted: missing row.
    let err = replica.apply(&records[7]).await.expect_err("missing row");
    assert_eq!(err.number(), 1032, "{err}");
    assert!(
        rows(&replica).is_empty(),
        "nothing of the failed record stays"
    );
    // A duplicate: row 1 inserted by a client first, then applied.
    let mut txn = insert_row(&replica, 1, 99);
    replica.commit(&mut txn).await.expect("client insert");
    let err = replica.apply(&records[2]).await.expect_err("duplicate");
    assert_eq!(err.number(), 1062, "{err}");
    // A record mixing a row event with DDL is malformed.
    let mut mixed = records[2].clone();
    mixed.gno = 1000;
    mixed
        .events
        .push(Event::CreateDatabase { name: "x".into() });
    assert_eq!(mixed.version, FORMAT_VERSION);
    assert!(replica.apply(&mixed).await.is_err());
    assert_eq!(rows(&replica), vec![(1, 99)]);
    replica.shutdown();
    let _ = std::fs::remove_dir_all(&src);
    let _ = std::fs::remove_dir_all(&dst);
}
