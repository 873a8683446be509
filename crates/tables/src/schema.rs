//! Table definitions: columns, indexes, and how index keys are encoded.

use crate::row::Columns;
use lockstep_types::{DataType, Value};

/// Serialized by `layout` (the stored layout depends on the format).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(from = "crate::layout::StoredColumn")]
pub struct ColumnDef {
    pub name: String,
    pub data_type: DataType,
    pub nullable: bool,
    pub default: Option<Value>,
    pub auto_increment: bool,
    /// DEFAULT CURRENT_TIMESTAMP
    #[serde(default)]
    pub default_now: bool,
    /// ON UPDATE CURRENT_TIMESTAMP
    #[serde(default)]
    pub on_update_now: bool,
    /// A text column's collation (MySQL's id; 0: the server default,
    /// utf8mb4_0900_ai_ci). Values are stored as UTF-8 whatever it is: the
    /// character set decides the repertoire and the bytes sent.
    pub collation: u16,
}

impl ColumnDef {
    /// A nullable column of `data_type` with no default and no
    /// attributes (a plain `name type` in CREATE TABLE).
    pub fn plain(name: &str, data_type: DataType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type,
            nullable: true,
            default: None,
            auto_increment: false,
            default_now: false,
            on_update_now: false,
            collation: 0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IndexDef {
    pub name: String,
    /// Column positions, in key order.
    pub columns: Vec<usize>,
    pub unique: bool,
}

/// A table's definition. `indexes[0]` is the clustered (primary) index; a
/// table declared without a primary key gets a hidden row-id column, as
/// InnoDB's DB_ROW_ID, so that every row has a unique clustered key.
/// Serialized by `layout` (the stored layout depends on the format).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(from = "crate::layout::StoredTable")]
pub struct TableDef {
    pub id: u32,
    pub database: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub indexes: Vec<IndexDef>,
    /// Position of the hidden row-id column, when there is no primary key.
    pub hidden_row_id: Option<usize>,
    /// The table's default collation (DEFAULT CHARSET / COLLATE), which
    /// columns added without one take (0: utf8mb4_0900_ai_ci).
    pub collation: u16,
}

pub const PRIMARY: usize = 0;

impl TableDef {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Columns a user sees (all but the hidden row id).
    pub fn visible_columns(&self) -> impl Iterator<Item = (usize, &ColumnDef)> {
        let hidden = self.hidden_row_id;
        self.columns
            .iter()
            .enumerate()
            .filter(move |(i, _)| Some(*i) != hidden)
    }

    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }

    pub fn has_declared_primary_key(&self) -> bool {
        self.hidden_row_id.is_none()
    }

    /// Encoded key of `row` in index `index`.
    pub fn index_key<R: Columns + ?Sized>(&self, index: usize, row: &R) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        self.index_key_into(index, row, &mut out);
        out
    }

    /// Appends the encoded key of `row` in index `index` to `out`.
    pub fn index_key_into<R: Columns + ?Sized>(&self, index: usize, row: &R, out: &mut Vec<u8>) {
        for &c in &self.indexes[index].columns {
            encode_column_key(&row.column(c), self.columns[c].data_type, out);
        }
    }

    /// Whether index `index`'s columns hold identical values in rows `a`
    /// and `b`: then their keys are equal and need no encoding (an update
    /// leaves most keys alone); otherwise they may still be equal.
    pub fn key_columns_identical(&self, index: usize, a: &[Value], b: &[Value]) -> bool {
        let columns = &self.indexes[index].columns;
        columns.iter().all(|&c| identical(&a[c], &b[c]))
    }

    /// Entry key of a secondary index: index key followed by the primary
    /// key, so that equal index keys of different rows are distinct entries.
    pub fn secondary_entry<R: Columns + ?Sized>(
        &self,
        index: usize,
        row: &R,
        primary: &[u8],
    ) -> Vec<u8> {
        let mut out = self.index_key(index, row);
        out.extend_from_slice(primary);
        out
    }

    /// Whether a unique index key may conflict: SQL lets any number of rows
    /// hold NULL in a unique column.
    pub fn unique_key_has_null<R: Columns + ?Sized>(&self, index: usize, row: &R) -> bool {
        self.indexes[index]
            .columns
            .iter()
            .any(|&c| row.column_is_null(c))
    }
}

/// Whether two values are the same value of the same type, and so encode
/// to the same key. `Value`'s `==` is SQL comparison (5 = 5.0, 0.0 = -0.0,
/// decimals of other scales), under which equal values can have different
/// keys: decimals and mixed types are left to the key comparison.
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::UInt(x), Value::UInt(y)) => x == y,
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::Date(x), Value::Date(y)) => x == y,
        (Value::DateTime(x), Value::DateTime(y)) => x == y,
        _ => false,
    }
}

/// Appends the index-key encoding of a column value: text columns use the
/// case- and accent-folded form (the default collation), so that equal
/// strings under the collation have equal keys.
pub fn encode_column_key(v: &Value, ty: lockstep_types::DataType, out: &mut Vec<u8>) {
    match v {
        Value::Bytes(b) if ty.is_string() => {
            lockstep_types::value::encode_bytes_key(&lockstep_types::value::fold_ci(b), out)
        }
        other => other.encode_key(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, data_type: DataType) -> ColumnDef {
        ColumnDef::plain(name, data_type)
    }

    #[test]
    fn identical_key_columns_mean_equal_keys() {
        let def = TableDef {
            id: 1,
            database: "d".into(),
            name: "t".into(),
            columns: vec![
                column("id", DataType::Int { unsigned: false }),
                column("name", DataType::VarChar { len: 10 }),
                column("x", DataType::Double),
            ],
            indexes: (0..3)
                .map(|c| IndexDef {
                    name: format!("i{c}"),
                    columns: vec![c],
                    unique: false,
                })
                .collect(),
            hidden_row_id: None,
            collation: 0,
        };
        let rows = [
            vec![Value::Int(5), Value::str("abc"), Value::Double(0.0)],
            vec![Value::Int(5), Value::str("ABC"), Value::Double(-0.0)],
            vec![Value::Int(6), Value::str("abd"), Value::Double(5.0)],
            vec![Value::Double(5.0), Value::Null, Value::Int(5)],
            vec![Value::UInt(6), Value::Null, Value::Null],
        ];
        for a in &rows {
            for b in &rows {
                for index in 0..3 {
                    let same = def.index_key(index, a) == def.index_key(index, b);
                    assert!(
                        !def.key_columns_identical(index, a, b) || same,
                        "index {index}: {a:?} vs {b:?}"
                    );
                }
            }
        }
        // Folded strings share a key; 0.0 and -0.0 do not, though SQL
        // calls them equal.
        assert!(def.key_columns_identical(0, &rows[0], &rows[1]));
        assert!(!def.key_columns_identical(1, &rows[0], &rows[1]));
        assert_eq!(def.index_key(1, &rows[0]), def.index_key(1, &rows[1]));
        assert!(!def.key_columns_identical(2, &rows[0], &rows[1]));
        assert_ne!(def.index_key(2, &rows[0]), def.index_key(2, &rows[1]));
    }
}
