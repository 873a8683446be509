//! The commit path waits on a `Durability`: a commit is acknowledged, and
//! its rows become visible, only once the durability confirms its record;
//! an unconfirmed record is reported and rolled back in memory.

use lockstep_engine::{
    CommitPoint, Durability, DurabilityError, DurableWait, Engine, EngineConfig, LocalDurability,
};
use lockstep_log::Log;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

mod common;
use common::{id_v_table, insert_row, rows};

/// Holds every commit until the test opens the gate, then confirms it
/// locally or refuses it; records what it was asked about.
struct Gate {
    /// One permit per commit the test lets through.
    open: Semaphore,
    refuse: Mutex<bool>,
    seen: Mutex<Vec<CommitPoint>>,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            open: Semaphore::new(0),
            refuse: Mutex::new(false),
            seen: Mutex::new(Vec::new()),
        })
    }
}

impl Durability for Gate {
    fn wait<'a>(&'a self, log: &'a Log, commit: CommitPoint) -> DurableWait<'a> {
        Box::pin(async move {
            self.seen.lock().push(commit);
            LocalDurability.wait(log, commit).await?;
            self.open.acquire().await.expect("never closed").forget();
            if *self.refuse.lock() {
                return Err(DurabilityError::Unconfirmed("no majority".into()));
            }
            Ok(())
        })
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("lockstep-durability-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

async fn engine_with_table(dir: &std::path::Path, gate: Arc<Gate>) -> Arc<Engine> {
    let engine = Engine::open_with(EngineConfig::new(dir), gate.clone()).expect("open");
    // DDL commits through the durability too: two commits.
    gate.open.add_permits(2);
    engine.create_database("d", false).await.expect("create db");
    engine
        .create_table(id_v_table())
        .await
        .expect("create table");
    engine
}

#[tokio::test]
async fn commit_is_acknowledged_and_visible_only_after_confirmation() {
    let dir = scratch("confirm");
    let gate = Gate::new();
    let engine = engine_with_table(&dir, gate.clone()).await;
    let ddl_commits = gate.seen.lock().len();
    assert_eq!(ddl_commits, 2, "CREATE DATABASE and CREATE TABLE waited");

    let mut txn = insert_row(&engine, 1, 10);
    let commit = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.commit(&mut txn).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!commit.is_finished(), "acknowledged before confirmation");
    assert!(rows(&engine).is_empty(), "visible before confirmation");

    gate.open.add_permits(1);
    let r = tokio::time::timeout(Duration::from_secs(10), commit).await;
    r.expect("commit finishes")
        .expect("task")
        .expect("commit succeeds");
    assert_eq!(rows(&engine), vec![(1, 10)]);
    let seen = gate.seen.lock().clone();
    assert_eq!(seen.len(), 3);
    assert!(seen[2].gno > seen[1].gno && seen[2].end_lsn > seen[1].end_lsn);
    engine.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_unconfirmed_commit_is_an_error_and_leaves_nothing_visible() {
    let dir = scratch("refuse");
    let gate = Gate::new();
    let engine = engine_with_table(&dir, gate.clone()).await;
    *gate.refuse.lock() = true;
    let mut txn = insert_row(&engine, 2, 20);
    gate.open.add_permits(1);
    let err = tokio::time::timeout(Duration::from_secs(10), engine.commit(&mut txn))
        .await
        .expect("commit finishes")
        .expect_err("an unconfirmed commit fails");
    assert_eq!(err.number(), 1180, "{err}");
    assert!(rows(&engine).is_empty(), "the refused row is not visible");
    engine.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
