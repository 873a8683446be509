//! Shared by the engine's integration tests.

use lockstep_tables::{ColumnDef, IndexDef, TableDef};
use lockstep_types::DataType;

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
    }
}
