//! Shared by the engine's integration tests.

#![allow(dead_code)] // each test file uses its own subset

use lockstep_engine::{Engine, Isolation, Txn};
use lockstep_tables::{ColumnDef, IndexDef, TableDef};
use lockstep_types::{DataType, Value};
use std::ops::Bound;

/// `d.t (id BIGINT PRIMARY KEY, v BIGINT, INDEX v (v))`.
pub fn id_v_table() -> TableDef {
    let col = |name: &str| ColumnDef {
        name: name.into(),
        data_type: DataType::BigInt { unsigned: false },
        nullable: false,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        collation: 0,
    };
    TableDef {
        id: 0,
        database: "d".into(),
        name: "t".into(),
        columns: vec![col("id"), col("v")],
        indexes: vec![
            IndexDef {
                name: "PRIMARY".into(),
                columns: vec![0],
                unique: true,
            },
            IndexDef {
                name: "v".into(),
                columns: vec![1],
                unique: false,
            },
        ],
        hidden_row_id: None,
        collation: 0,
    }
}

/// The committed (id, v) rows of `d.t`, in primary-key order.
pub fn rows(engine: &Engine) -> Vec<(i64, i64)> {
    all_rows(engine, "t")
        .iter()
        .map(|r| (r[0].to_i64().expect("int"), r[1].to_i64().expect("int")))
        .collect()
}

/// Every committed row of `d.<name>`, all columns, in primary-key order.
pub fn all_rows(engine: &Engine, name: &str) -> Vec<Vec<Value>> {
    let table = engine.catalog.table("d", name).expect("table exists");
    let mut txn = engine.begin(Isolation::RepeatableRead);
    let mut out = Vec::new();
    let _ = engine.scan_primary(
        &mut txn,
        &table,
        Bound::Unbounded,
        Bound::Unbounded,
        false,
        None,
        &mut |_, r| {
            out.push(r.to_values());
            Ok(true)
        },
    );
    engine.rollback(&mut txn);
    out
}

/// A transaction that inserted (id, v) into `d.t`, not yet committed.
pub fn insert_row(engine: &Engine, id: i64, v: i64) -> Txn {
    let table = engine.catalog.table("d", "t").expect("table exists");
    let mut txn = engine.begin(Isolation::RepeatableRead);
    let r = {
        let schema = table.schema();
        engine.insert(
            &mut txn,
            &table,
            &schema,
            vec![Value::Int(id), Value::Int(v)],
        )
    };
    assert!(matches!(r, Ok(Ok(_))), "insert of {id} succeeds");
    txn
}
