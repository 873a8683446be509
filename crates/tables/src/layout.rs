//! Stored layouts of table definitions. bincode writes a struct's fields
//! one after another with no names, so a field added to `ColumnDef` or
//! `TableDef` changes what every logged or checkpointed definition looks
//! like: the reader of an older record or checkpoint says so
//! (`legacy_layout`), and definitions then decode in the layout before
//! collations (which reads as the server default, utf8mb4_0900_ai_ci).
//! Writers use the current layout; tests write the old one the same way.

use crate::schema::{ColumnDef, IndexDef, TableDef};
use lockstep_types::{DataType, Value};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::Cell;

thread_local! {
    static LEGACY: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a decoder or encoder) with definitions in the layout before
/// collations when `legacy`.
pub fn legacy_layout<T>(legacy: bool, f: impl FnOnce() -> T) -> T {
    let before = LEGACY.with(|l| l.replace(legacy));
    let out = f();
    LEGACY.with(|l| l.set(before));
    out
}

fn legacy() -> bool {
    LEGACY.with(|l| l.get())
}

impl Serialize for ColumnDef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let old = legacy();
        let mut st = s.serialize_struct("ColumnDef", if old { 7 } else { 8 })?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("data_type", &self.data_type)?;
        st.serialize_field("nullable", &self.nullable)?;
        st.serialize_field("default", &self.default)?;
        st.serialize_field("auto_increment", &self.auto_increment)?;
        st.serialize_field("default_now", &self.default_now)?;
        st.serialize_field("on_update_now", &self.on_update_now)?;
        if !old {
            st.serialize_field("collation", &self.collation)?;
        }
        st.end()
    }
}

impl Serialize for TableDef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let old = legacy();
        let mut st = s.serialize_struct("TableDef", if old { 6 } else { 7 })?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("database", &self.database)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("columns", &self.columns)?;
        st.serialize_field("indexes", &self.indexes)?;
        st.serialize_field("hidden_row_id", &self.hidden_row_id)?;
        if !old {
            st.serialize_field("collation", &self.collation)?;
        }
        st.end()
    }
}

/// A column as written before collations.
#[derive(Deserialize)]
struct ColumnV1 {
    name: String,
    data_type: DataType,
    nullable: bool,
    default: Option<Value>,
    auto_increment: bool,
    default_now: bool,
    on_update_now: bool,
}

/// A column as written now: bincode writes a nested struct's fields in
/// line, so this is `ColumnDef`'s layout.
#[derive(Deserialize)]
struct ColumnV2 {
    v1: ColumnV1,
    collation: u16,
}

pub(crate) struct StoredColumn(ColumnDef);

impl<'de> Deserialize<'de> for StoredColumn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ColumnV2 { v1: c, collation } = match legacy() {
            true => ColumnV2 {
                v1: ColumnV1::deserialize(d)?,
                collation: 0,
            },
            false => ColumnV2::deserialize(d)?,
        };
        Ok(StoredColumn(ColumnDef {
            name: c.name,
            data_type: c.data_type,
            nullable: c.nullable,
            default: c.default,
            auto_increment: c.auto_increment,
            default_now: c.default_now,
            on_update_now: c.on_update_now,
            collation,
        }))
    }
}

impl From<StoredColumn> for ColumnDef {
    fn from(c: StoredColumn) -> ColumnDef {
        c.0
    }
}

#[derive(Deserialize)]
struct TableV1 {
    id: u32,
    database: String,
    name: String,
    columns: Vec<ColumnDef>,
    indexes: Vec<IndexDef>,
    hidden_row_id: Option<usize>,
}

#[derive(Deserialize)]
struct TableV2 {
    v1: TableV1,
    collation: u16,
}

pub(crate) struct StoredTable(TableDef);

impl<'de> Deserialize<'de> for StoredTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let TableV2 { v1: t, collation } = match legacy() {
            true => TableV2 {
                v1: TableV1::deserialize(d)?,
                collation: 0,
            },
            false => TableV2::deserialize(d)?,
        };
        Ok(StoredTable(TableDef {
            id: t.id,
            database: t.database,
            name: t.name,
            columns: t.columns,
            indexes: t.indexes,
            hidden_row_id: t.hidden_row_id,
            collation,
        }))
    }
}

impl From<StoredTable> for TableDef {
    fn from(t: StoredTable) -> TableDef {
        t.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_layout_reads_as_the_default_collation() {
        let mut c = ColumnDef::plain("c", DataType::VarChar { len: 3 });
        c.collation = 8;
        // Two columns back to back: the first must end where it ended.
        let old = legacy_layout(true, || bincode::serialize(&(&c, &c))).unwrap();
        let (a, b): (ColumnDef, ColumnDef) =
            legacy_layout(true, || bincode::deserialize(&old)).unwrap();
        assert_eq!(a, ColumnDef::plain("c", DataType::VarChar { len: 3 }));
        assert_eq!(a, b);
        let new = bincode::serialize(&c).unwrap();
        assert_eq!(new.len(), old.len() / 2 + 2);
        let back: ColumnDef = bincode::deserialize(&new).unwrap();
        assert_eq!(back, c);
    }
}
