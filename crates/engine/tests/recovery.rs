//! Engine-level durability: what was committed survives a restart, with and
//! without a checkpoint, and what was not committed does not.

use lockstep_engine::{Engine, EngineConfig, Isolation};
use lockstep_types::Value;
use std::sync::Arc;

mod common;
use common::{id_v_table as def, insert_row, rows};

async fn insert(engine: &Arc<Engine>, id: i64, v: i64, commit: bool) {
    let mut txn = insert_row(engine, id, v);
    if commit {
        engine.commit(&mut txn).await.expect("commit");
    } else {
        engine.rollback(&mut txn);
    }
}

#[tokio::test]
async fn committed_rows_survive_restart_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("create db");
        engine.create_table(def()).await.expect("create table");
        for i in 0..50 {
            insert(&engine, i, i * 10, true).await;
        }
        insert(&engine, 1000, 1, false).await;
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        let r = rows(&engine);
        assert_eq!(r.len(), 50, "committed rows only");
        assert_eq!(r[7], (7, 70));
        engine.checkpoint().expect("checkpoint");
        for i in 50..60 {
            insert(&engine, i, i * 10, true).await;
        }
        engine.checkpoint().expect("second checkpoint");
        insert(&engine, 60, 600, true).await;
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen after checkpoint");
        let r = rows(&engine);
        assert_eq!(r.len(), 61, "snapshot plus the log after it");
        assert_eq!(r[60], (60, 600));
        // The secondary index was rebuilt.
        let table = engine.catalog.table("d", "t").expect("table");
        let schema = table.schema();
        assert_eq!(schema.secondary[0].len(), 61);
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn minimal_row_images_replay() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-minimal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = EngineConfig::new(&dir);
    cfg.minimal_row_image = true;
    {
        let engine = Engine::open(cfg.clone()).expect("open");
        engine.create_database("d", false).await.expect("create db");
        engine.create_table(def()).await.expect("create table");
        for i in 0..10 {
            insert(&engine, i, i, true).await;
        }
        let table = engine.catalog.table("d", "t").expect("table");
        let mut txn = engine.begin(Isolation::RepeatableRead);
        {
            let schema = table.schema();
            let key = |id: i64| {
                schema
                    .def
                    .index_key(0, &vec![Value::Int(id), Value::Int(0)])
            };
            let old = engine
                .read(&mut txn, &table, &key(3))
                .expect("row 3")
                .to_values();
            let r = engine.update(
                &mut txn,
                &table,
                &schema,
                &key(3),
                &old,
                vec![Value::Int(3), Value::Int(333)],
            );
            assert!(matches!(r, Ok(Ok(()))));
            let old = engine
                .read(&mut txn, &table, &key(4))
                .expect("row 4")
                .to_values();
            assert!(engine
                .delete(&mut txn, &table, &schema, &key(4), &old)
                .is_ok());
        }
        engine.commit(&mut txn).await.expect("commit");
        engine.shutdown();
    }
    let engine = Engine::open(cfg).expect("reopen");
    let r = rows(&engine);
    assert_eq!(r.len(), 9, "the delete replayed");
    assert!(r.contains(&(3, 333)), "the update replayed: {r:?}");
    assert!(!r.iter().any(|(id, _)| *id == 4));
    engine.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The engine on a log in memory: a simulated power loss keeps every
/// acknowledged commit (each waited for its fsync), whatever happens to
/// the bytes that were never synced.
#[tokio::test]
async fn acknowledged_commits_survive_a_simulated_power_loss() {
    use lockstep_log::{MemStorage, Unsynced};
    for (n, unsynced) in [Unsynced::LoseAll, Unsynced::KeepAll, Unsynced::Seeded(7)]
        .into_iter()
        .enumerate()
    {
        let dir =
            std::env::temp_dir().join(format!("lockstep-engine-mem-{n}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mem = MemStorage::new();
        let mut cfg = EngineConfig::new(&dir);
        cfg.log_storage = Arc::new(mem.clone());
        let engine = Engine::open(cfg.clone()).expect("open on memory");
        engine.create_database("d", false).await.expect("db");
        engine.create_table(def()).await.expect("table");
        for i in 0..20 {
            insert(&engine, i, i, true).await;
        }
        // Power loss: only what was synced is left; the old engine's
        // threads see a dead storage.
        let survived = mem.crash(unsynced);
        drop(engine);
        cfg.log_storage = Arc::new(survived);
        let engine = Engine::open(cfg).expect("recovers from memory");
        assert_eq!(rows(&engine).len(), 20, "{n}: every acknowledged commit");
        engine.shutdown();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
