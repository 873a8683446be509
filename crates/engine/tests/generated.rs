//! Generated columns' definitions survive a restart: replayed from the
//! log (with the CREATE TABLE, and across a rebuild that keeps them) and
//! read back from a checkpoint (format 10).

use lockstep_binlog::ColumnSource;
use lockstep_engine::{Engine, EngineConfig};
use lockstep_tables::GeneratedColumn;

mod common;
use common::id_v_table;

fn generated_of(engine: &Engine) -> Vec<GeneratedColumn> {
    let t = engine.catalog.table("d", "t").expect("table");
    engine.catalog.generated(t.id).to_vec()
}

#[tokio::test]
async fn generated_columns_survive_restart_rebuild_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-gen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let list = vec![GeneratedColumn {
        column: "v".into(),
        expr: "(`id` * 2)".into(),
        stored: true,
    }];
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("db");
        let t = id_v_table();
        engine
            .create_table_with_constraints(t, Vec::new(), Vec::new(), list.clone())
            .await
            .expect("create");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(generated_of(&engine), list, "logged with the CREATE TABLE");
        let t = engine.catalog.table("d", "t").expect("table");
        let sources = vec![ColumnSource::Column(0), ColumnSource::Column(1)];
        let t2 = engine
            .alter_table(&t, (*t.def()).clone(), sources)
            .await
            .expect("rebuild");
        assert_ne!(t2.id, t.id);
        assert_eq!(generated_of(&engine), list, "moved to the rebuilt table");
        engine.checkpoint().expect("checkpoint");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(generated_of(&engine), list, "read from the checkpoint");
        let t = engine.catalog.table("d", "t").expect("table");
        engine.drop_table(&t).await.expect("drop");
        assert!(engine.catalog.all_generated().is_empty(), "dropped with it");
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
