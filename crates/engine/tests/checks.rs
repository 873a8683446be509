//! CHECK constraints and generated columns survive a restart: replayed
//! from the log (with the CREATE TABLE, ALTER's SetChecks, and across a
//! rebuild that keeps them), and read back from a checkpoint (format 10).

use lockstep_binlog::ColumnSource;
use lockstep_engine::{Engine, EngineConfig};
use lockstep_tables::{CheckConstraint, GeneratedColumn};

mod common;
use common::id_v_table;

fn check(name: &str, expr: &str, enforced: bool) -> CheckConstraint {
    CheckConstraint {
        name: name.into(),
        expr: expr.into(),
        enforced,
    }
}

fn checks_of(engine: &Engine) -> Vec<CheckConstraint> {
    let t = engine.catalog.table("d", "t").expect("table");
    engine.catalog.checks(t.id).to_vec()
}

fn generated_of(engine: &Engine) -> Vec<GeneratedColumn> {
    let t = engine.catalog.table("d", "t").expect("table");
    engine.catalog.generated(t.id).to_vec()
}

#[tokio::test]
async fn checks_survive_restart_rebuild_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-checks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = vec![
        check("t_chk_1", "v > 0", true),
        check("small", "v < 9", false),
    ];
    let later = vec![
        check("t_chk_1", "v > 0", false),
        check("t_chk_2", "id <> 5", true),
    ];
    let generated = vec![GeneratedColumn {
        column: "v".into(),
        expr: "(`id` * 2)".into(),
        stored: true,
    }];
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("db");
        engine
            .create_table_with_constraints(
                id_v_table(),
                Vec::new(),
                first.clone(),
                generated.clone(),
            )
            .await
            .expect("create");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(checks_of(&engine), first, "logged with the CREATE TABLE");
        assert_eq!(generated_of(&engine), generated, "logged with it too");
        let t = engine.catalog.table("d", "t").expect("table");
        engine.set_checks(&t, later.clone()).await.expect("set");
        // A rebuild (a new table id) keeps them.
        let sources = vec![ColumnSource::Column(0), ColumnSource::Column(1)];
        let t2 = engine
            .alter_table(&t, (*t.def()).clone(), sources)
            .await
            .expect("rebuild");
        assert_ne!(t2.id, t.id);
        assert_eq!(checks_of(&engine), later, "moved to the rebuilt table");
        assert_eq!(generated_of(&engine), generated, "moved along");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(
            checks_of(&engine),
            later,
            "replayed: SetChecks, then the rebuild"
        );
        engine.checkpoint().expect("checkpoint");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(checks_of(&engine), later, "read from the checkpoint");
        assert_eq!(generated_of(&engine), generated, "checkpointed");
        let t = engine.catalog.table("d", "t").expect("table");
        engine.drop_table(&t).await.expect("drop");
        assert!(
            engine.catalog.all_checks().is_empty(),
            "dropped with the table"
        );
        assert!(engine.catalog.all_generated().is_empty());
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
