//! Table definitions: columns, indexes, and how index keys are encoded.

use crate::row::Columns;
use lockstep_types::{DataType, Value};

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableDef {
    pub id: u32,
    pub database: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub indexes: Vec<IndexDef>,
    /// Position of the hidden row-id column, when there is no primary key.
    pub hidden_row_id: Option<usize>,
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
        for &c in &self.indexes[index].columns {
            encode_column_key(&row.column(c), self.columns[c].data_type, &mut out);
        }
        out
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

/// Appends the index-key encoding of a column value: text columns use the
/// case- and accent-folded form (the default collation), so that equal
/// strings under the collation have equal keys.
pub fn encode_column_key(v: &Value, ty: lockstep_types::DataType, out: &mut Vec<u8>) {
    match v {
        Value::Bytes(b) if ty.is_string() => {
            Value::Bytes(lockstep_types::value::fold_ci(b).into_owned()).encode_key(out)
        }
        other => other.encode_key(out),
    }
}
