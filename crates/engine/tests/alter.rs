//! ALTER TABLE and RENAME TABLE survive a restart: redone from the log on
//! the rows replayed before them, and kept by a checkpoint taken after.

use lockstep_binlog::ColumnSource;
use lockstep_engine::{Engine, EngineConfig, Isolation, Rename};
use lockstep_tables::{ColumnDef, IndexDef, TableDef};
use lockstep_types::{DataType, Value};
use std::sync::Arc;

mod common;
use common::{all_rows, id_v_table, insert_row};

/// `t` with `w INT DEFAULT 7` added first and index `v` on (v, w).
fn with_w(old: &TableDef) -> (TableDef, Vec<ColumnSource>) {
    let mut def = old.clone();
    let w = ColumnDef {
        name: "w".into(),
        data_type: DataType::Int { unsigned: false },
        nullable: true,
        default: Some(Value::Int(7)),
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        collation: 0,
    };
    def.columns.insert(0, w);
    def.indexes = vec![
        IndexDef {
            name: "PRIMARY".into(),
            columns: vec![1],
            unique: true,
        },
        IndexDef {
            name: "v".into(),
            columns: vec![2, 0],
            unique: false,
        },
    ];
    let sources = vec![
        ColumnSource::Value(Value::Int(7)),
        ColumnSource::Column(0),
        ColumnSource::Column(1),
    ];
    (def, sources)
}

async fn insert3(engine: &Engine, name: &str, row: [i64; 3]) {
    let table = engine.catalog.table("d", name).expect("table");
    let mut txn = engine.begin(Isolation::RepeatableRead);
    let r = {
        let schema = table.schema();
        let values = row.iter().map(|&v| Value::Int(v)).collect();
        engine.insert(&mut txn, &table, &schema, values)
    };
    assert!(matches!(r, Ok(Ok(_))), "insert succeeds");
    engine.commit(&mut txn).await.expect("commit");
}

#[tokio::test]
async fn alter_survives_replay_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-alter-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("db");
        let t = engine.create_table(id_v_table()).await.expect("table");
        for i in 0..20 {
            let mut txn = insert_row(&engine, i, i * 10);
            engine.commit(&mut txn).await.expect("commit");
        }
        // A unique index over duplicate values fails and changes nothing.
        let mut dup = t.def().as_ref().clone();
        dup.indexes[1].unique = true;
        let same = vec![ColumnSource::Column(0), ColumnSource::Value(Value::Int(1))];
        let err = engine
            .alter_table(&t, dup, same)
            .await
            .expect_err("duplicates");
        assert_eq!(err.code.number(), 1062);
        assert_eq!(engine.catalog.table("d", "t").expect("t").id, t.id);

        let (def, sources) = with_w(&t.def());
        let t2 = engine.alter_table(&t, def, sources).await.expect("alter");
        assert_ne!(t2.id, t.id, "a rebuilt table has a new id");
        insert3(&engine, "t", [1, 100, 1000]).await;
        engine.shutdown();
    }
    let check = |engine: &Engine, name: &str| {
        let rows = all_rows(engine, name);
        assert_eq!(rows.len(), 21);
        assert_eq!(rows[3], vec![Value::Int(7), Value::Int(3), Value::Int(30)]);
        assert_eq!(
            rows[20],
            vec![Value::Int(1), Value::Int(100), Value::Int(1000)]
        );
        let table = engine.catalog.table("d", name).expect("table");
        assert_eq!(table.def().columns[0].name, "w");
        assert_eq!(table.schema().secondary[0].len(), 21, "index rebuilt");
    };
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("replay");
        check(&engine, "t");
        let t = engine.catalog.table("d", "t").expect("t");
        let rename = Rename {
            table: t,
            database: "d".into(),
            name: "t_new".into(),
        };
        engine.rename_tables(&[rename]).await.expect("rename");
        engine.checkpoint().expect("checkpoint");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("from checkpoint");
        assert!(engine.catalog.table("d", "t").is_none());
        check(&engine, "t_new");
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn checkpoint_after_alter_then_more_log() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-alter2-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("db");
        let t = engine.create_table(id_v_table()).await.expect("table");
        for i in 0..5 {
            let mut txn = insert_row(&engine, i, i);
            engine.commit(&mut txn).await.expect("commit");
        }
        engine.checkpoint().expect("checkpoint before");
        let (def, sources) = with_w(&t.def());
        let t: Arc<_> = engine.alter_table(&t, def, sources).await.expect("alter");
        engine.checkpoint().expect("checkpoint after");
        insert3(&engine, "t", [2, 50, 5]).await;
        // Dropping `w` again: back to two columns, after the checkpoint.
        let (def, sources) = (
            id_v_table(),
            vec![ColumnSource::Column(1), ColumnSource::Column(2)],
        );
        engine.alter_table(&t, def, sources).await.expect("drop w");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        let rows = all_rows(&engine, "t");
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[5], vec![Value::Int(50), Value::Int(5)]);
        assert_eq!(
            engine
                .catalog
                .table("d", "t")
                .expect("t")
                .def()
                .columns
                .len(),
            2
        );
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
