//! COMMENT clauses survive a restart: replayed from the log (with the
//! CREATE TABLE, a later SetComments, across a rebuild and a rename that
//! keep them), and read back from a checkpoint (format 11).

use lockstep_binlog::ColumnSource;
use lockstep_engine::comments::TableExtras;
use lockstep_engine::{Engine, EngineConfig, Rename};
use lockstep_tables::TableComments;

mod common;
use common::id_v_table;

fn comments_of(engine: &Engine, name: &str) -> TableComments {
    let t = engine.catalog.table("d", name).expect("table");
    (*engine.catalog.comments(t.id)).clone()
}

fn comments(table: &str, column: &str, index: &str) -> TableComments {
    TableComments {
        table: table.into(),
        columns: vec![("v".into(), column.into())],
        indexes: vec![("PRIMARY".into(), index.into())],
    }
}

#[tokio::test]
async fn comments_survive_restart_rebuild_rename_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-comments-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = comments("it's t", "the v", "pk");
    let later = comments("later", "v again", "");
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("db");
        let extras = TableExtras {
            comments: first.clone(),
            ..TableExtras::default()
        };
        let t = engine.create_table_with(id_v_table(), extras).await;
        t.expect("create");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(comments_of(&engine, "t"), first, "logged with the CREATE");
        let t = engine.catalog.table("d", "t").expect("table");
        engine.set_comments(&t, later.clone()).await.expect("set");
        // A rebuild under a new name (a new table id), then a rename, keep
        // them.
        let mut def = (*t.def()).clone();
        def.name = "renamed".into();
        let keep = vec![ColumnSource::Column(0), ColumnSource::Column(1)];
        let rebuilt = engine.alter_table(&t, def, keep).await.expect("rebuild");
        assert_ne!(rebuilt.id, t.id);
        assert_eq!(comments_of(&engine, "renamed"), later, "moved along");
        let rename = Rename {
            table: rebuilt,
            database: "d".into(),
            name: "u".into(),
        };
        engine.rename_tables(&[rename]).await.expect("rename");
        assert_eq!(comments_of(&engine, "u"), later, "moved along");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(comments_of(&engine, "u"), later, "replayed in order");
        engine.checkpoint().expect("checkpoint");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(comments_of(&engine, "u"), later, "read from the checkpoint");
        let t = engine.catalog.table("d", "u").expect("table");
        engine.drop_table(&t).await.expect("drop");
        assert!(engine.catalog.all_comments().is_empty(), "dropped with it");
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
