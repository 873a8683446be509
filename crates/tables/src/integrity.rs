//! CHECK TABLE: the invariants that tie a table's structures together,
//! verified by a pass over them. The caller keeps writers out (the table's
//! write gate), so the newest version of every record is committed and
//! stable while the pass runs; purge may still trim older versions, which
//! is why only newest versions are checked.
//!
//! - every clustered record is found by exact key (the point index);
//! - every newest row has the table's column count;
//! - every newest row has its entry in every secondary index;
//! - no two newest rows share the key of a unique index (NULLs aside).

use crate::clustered::key_of;
use crate::table::Table;

/// Problems past this many are counted, not described.
const DESCRIBED: usize = 8;

/// What a check found.
#[derive(Debug, Default)]
pub struct Integrity {
    /// Live rows (newest version not a delete).
    pub rows: u64,
    pub problems: Vec<String>,
    /// Problems in all, described or not.
    pub count: u64,
}

impl Integrity {
    fn problem(&mut self, text: impl FnOnce() -> String) {
        self.count += 1;
        if self.problems.len() < DESCRIBED {
            self.problems.push(text());
        }
    }

    pub fn ok(&self) -> bool {
        self.count == 0
    }
}

impl Table {
    /// Checks the invariants above; `stop` is polled per record (KILL).
    pub fn check_integrity(&self, stop: impl Fn() -> bool) -> Result<Integrity, Interrupted> {
        let schema = self.schema();
        let def = &schema.def;
        let mut out = Integrity::default();
        // Per unique secondary index: the keys of the live rows.
        let mut unique: Vec<(usize, Vec<Vec<u8>>)> = (1..def.indexes.len())
            .filter(|&i| def.indexes[i].unique)
            .map(|i| (i, Vec::new()))
            .collect();
        self.scan(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            false,
            |pk, record| {
                if stop() {
                    return Err(Interrupted);
                }
                if self.record(pk).is_none() {
                    out.problem(|| "a clustered record is missing from the point index".into());
                }
                let Some(row) = record.latest().and_then(|v| v.row) else {
                    return Ok(true);
                };
                out.rows += 1;
                if row.len() != def.columns.len() {
                    out.problem(|| {
                        format!("a row has {} columns, not {}", row.len(), def.columns.len())
                    });
                    return Ok(true);
                }
                for (pos, index) in schema.secondary.iter().enumerate() {
                    let entry = key_of(def.secondary_entry(pos + 1, &row, pk));
                    if !index.contains_key(&entry) {
                        let name = &def.indexes[pos + 1].name;
                        out.problem(|| format!("index '{name}' lacks the entry of a row"));
                    }
                }
                for (i, keys) in unique.iter_mut() {
                    if !def.unique_key_has_null(*i, &row) {
                        keys.push(def.index_key(*i, &row));
                    }
                }
                Ok(true)
            },
        )?;
        for (i, mut keys) in unique {
            keys.sort_unstable();
            let dups = keys.windows(2).filter(|w| w[0] == w[1]).count();
            for _ in 0..dups {
                let name = &def.indexes[i].name;
                out.problem(|| format!("unique index '{name}' holds a key twice"));
            }
        }
        Ok(out)
    }
}

/// The check was stopped (KILL QUERY, max_execution_time).
#[derive(Debug)]
pub struct Interrupted;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::Row;
    use crate::schema::{ColumnDef, IndexDef, TableDef};
    use lockstep_types::{DataType, Value};

    fn column(name: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type: DataType::Int { unsigned: false },
            nullable: true,
            default: None,
            auto_increment: false,
            default_now: false,
            on_update_now: false,
            collation: 0,
        }
    }

    /// (id PRIMARY KEY, u UNIQUE)
    fn table() -> Table {
        let index = |name: &str, c: usize| IndexDef {
            name: name.into(),
            columns: vec![c],
            unique: true,
        };
        Table::new(TableDef {
            id: 1,
            database: "d".into(),
            name: "t".into(),
            columns: vec![column("id"), column("u")],
            indexes: vec![index("PRIMARY", 0), index("u", 1)],
            hidden_row_id: None,
            collation: 0,
        })
    }

    fn put(t: &Table, id: i64, u: Option<i64>) {
        let values = [Value::Int(id), u.map_or(Value::Null, Value::Int)];
        let def = t.def();
        let pk = def.index_key(0, &values[..]);
        t.index_row(&t.schema(), &pk, &values[..]);
        t.load_row(pk, Some(Row::new(&values)));
    }

    #[test]
    fn a_consistent_table_passes_and_each_broken_invariant_is_named() {
        let t = table();
        put(&t, 1, Some(10));
        put(&t, 2, None);
        put(&t, 3, None);
        let found = t.check_integrity(|| false).expect("not stopped");
        assert!(found.ok(), "{:?}", found.problems);
        assert_eq!(found.rows, 3);

        put(&t, 4, Some(10));
        let schema = t.schema();
        let def = &schema.def;
        let values = [Value::Int(1), Value::Int(10)];
        let pk = def.index_key(0, &values[..]);
        schema.secondary[0].remove(&key_of(def.secondary_entry(1, &values[..], &pk)));
        drop(schema);
        let found = t.check_integrity(|| false).expect("not stopped");
        assert_eq!(found.count, 2, "{:?}", found.problems);
        assert!(found.problems[0].contains("lacks the entry"));
        assert!(found.problems[1].contains("holds a key twice"));
        assert!(t.check_integrity(|| true).is_err());
    }
}
