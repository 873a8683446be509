//! Running LATERAL derived tables and JSON_TABLE (plan/lateral.rs): once
//! per row of the items before them, with that row as the enclosing row
//! of their query. A result is kept by the values of the columns the
//! table reads (`Lateral::refs`), so repeated values cost one run; kept
//! results count as temporary tables against the statement's memory
//! (tmp_table_size and query_memory_limit), and once they no longer fit,
//! later rows run without keeping theirs.

use super::{row_bytes, Exec, Result};
use crate::plan::bind::lateral::Lateral;
use crate::plan::QueryPlan;
use lockstep_types::Value;
use std::collections::HashMap;
use std::sync::Arc;

type Rows = Arc<Vec<Vec<Value>>>;

/// Results per lateral table (by plan address), by key of the values read.
#[derive(Default)]
pub(super) struct Cache {
    tables: HashMap<usize, HashMap<Vec<u8>, Rows>>,
}

impl Exec<'_> {
    /// The rows of lateral table `plan` for the row `prefix` before it.
    pub(super) fn lateral_rows(
        &mut self,
        plan: &Arc<QueryPlan>,
        lateral: &Lateral,
        prefix: &[Value],
    ) -> Result<Rows> {
        let id = Arc::as_ptr(plan) as usize;
        let mut key = key_of(prefix, &lateral.refs);
        for &(depth, col) in &lateral.outer {
            let row = self.outer.len().checked_sub(depth + 1);
            let row = row
                .and_then(|r| self.outer.get(r))
                .map_or(&[][..], |r| &r[..]);
            key.extend(key_of(row, &[col]));
        }
        if let Some(rows) = self.lateral.tables.get(&id).and_then(|t| t.get(&key)) {
            return Ok(rows.clone());
        }
        self.outer.push(prefix.to_vec());
        let before = self.memory.statement;
        let result = self.query(plan);
        // What the run buffered is freed; its result is charged below.
        self.memory.statement = before;
        self.outer.pop();
        let rows = Arc::new(result?);
        let bytes = key.len() + rows.iter().map(|r| row_bytes(r)).sum::<usize>();
        if bytes <= self.temp_room() {
            self.charge_temp(bytes)?;
            let table = self.lateral.tables.entry(id).or_default();
            table.insert(key, rows.clone());
        }
        Ok(rows)
    }
}

/// The cache key of the values at `refs`: exact (a kind tag, then the
/// value's bytes), so equal keys mean identical values.
fn key_of(prefix: &[Value], refs: &[usize]) -> Vec<u8> {
    let mut key = Vec::new();
    let bytes = |tag: u8, b: &[u8], key: &mut Vec<u8>| {
        key.push(tag);
        key.extend_from_slice(&(b.len() as u64).to_le_bytes());
        key.extend_from_slice(b);
    };
    for &i in refs {
        match prefix.get(i) {
            None | Some(Value::Null) => key.push(0),
            Some(Value::Int(v)) => bytes(1, &v.to_le_bytes(), &mut key),
            Some(Value::UInt(v)) => bytes(2, &v.to_le_bytes(), &mut key),
            Some(Value::Bytes(b)) => bytes(3, b, &mut key),
            Some(other) => bytes(4, format!("{other:?}").as_bytes(), &mut key),
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::key_of;
    use lockstep_types::Value;

    #[test]
    fn keys_tell_kinds_and_values_apart() {
        let row = vec![
            Value::Int(1),
            Value::UInt(1),
            Value::str("1"),
            Value::Null,
            Value::Double(1.0),
        ];
        let keys: Vec<Vec<u8>> = (0..row.len()).map(|i| key_of(&row, &[i])).collect();
        for (i, a) in keys.iter().enumerate() {
            assert!(keys[i + 1..].iter().all(|b| a != b));
        }
        assert_eq!(key_of(&row, &[0, 2]), key_of(&row.clone(), &[0, 2]));
        assert_ne!(key_of(&row, &[0, 2]), key_of(&row, &[2, 0]));
    }
}
