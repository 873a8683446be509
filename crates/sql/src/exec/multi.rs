//! Multi-table UPDATE and DELETE (`plan::multi`): the join runs as a
//! locking read (the targets' rows exclusively, the other tables' shared);
//! each target row is then changed once, with the values of the first
//! joined row that matched it, as MySQL does.

use super::{fk, row_bytes, Exec, Result};
use crate::plan::multi::{MultiPlan, MultiTarget};
use lockstep_engine::Error as EngineError;
use lockstep_types::Value;
use std::collections::HashSet;

/// One target row: its primary key and (UPDATE) its new column values.
type Change = (Vec<u8>, Vec<(usize, Value)>);

impl Exec<'_> {
    /// Returns (rows matched, rows changed); a DELETE matches what it deletes.
    pub fn multi(&mut self, p: &MultiPlan) -> Result<(u64, u64)> {
        self.memory.frees = p.delete;
        let ids = p.targets.iter().map(|t| t.table.id).collect();
        let before = std::mem::replace(&mut self.exclusive, ids);
        let rows = self.query(&p.query);
        self.exclusive = before;
        self.memory.frees = false;
        let rows = rows?;
        let mut changes = Vec::with_capacity(p.targets.len());
        for t in &p.targets {
            changes.push(self.target_changes(t, &rows)?);
        }
        drop(rows);
        let (mut matched, mut changed) = (0, 0);
        for (t, rows) in p.targets.iter().zip(changes) {
            let (m, c) = match p.delete {
                true => self.multi_delete(t, rows, p.ignore)?,
                false => self.multi_update(t, rows, p.ignore)?,
            };
            matched += m;
            changed += c;
        }
        Ok((matched, changed))
    }

    /// The distinct rows of target `t` in the joined rows, each with the
    /// values its first match assigns (a LEFT JOIN's missing row is none).
    fn target_changes(&mut self, t: &MultiTarget, rows: &[Vec<Value>]) -> Result<Vec<Change>> {
        let width = t.def.columns.len();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for row in rows {
            let stored = &row[t.at..t.at + width];
            let key_col = t.def.indexes[0].columns[0];
            if stored[key_col].is_null() {
                continue;
            }
            let pk = t.def.index_key(0, stored);
            if seen.contains(&pk) {
                continue;
            }
            let values: Vec<(usize, Value)> = t
                .assignments
                .iter()
                .map(|&(col, at)| (col, row[at].clone()))
                .collect();
            self.charge(2 * pk.len() + row_bytes(&[]) + values.len() * 32)?;
            seen.insert(pk.clone());
            out.push((pk, values));
        }
        Ok(out)
    }

    fn multi_update(
        &mut self,
        t: &MultiTarget,
        rows: Vec<Change>,
        ignore: bool,
    ) -> Result<(u64, u64)> {
        let chain = fk::Chain::top(Some(t.table.id));
        let fk = self.fk_active();
        let (mut matched, mut changed) = (0, 0);
        for (n, (pk, values)) in rows.into_iter().enumerate() {
            lockstep_types::memory::check_data(&t.def.name).map_err(EngineError::Sql)?;
            // The current version: an earlier change (another alias of the
            // table, a cascade) may have changed or deleted it.
            let Some(old) = self.fk_current(&t.table, &pk)? else {
                continue;
            };
            matched += 1;
            let one = |x: &mut Self| {
                let mut new = old.clone();
                x.for_row(n as u64 + 1, |x| {
                    for (col, v) in values {
                        new[col] = x.assign_column(v, &t.def.columns[col])?;
                    }
                    Ok(())
                })?;
                let set = |i: usize| t.assignments.iter().any(|(col, _)| *col == i);
                x.update_row(&t.table, &pk, old, new, &set, fk.then_some(&chain))
            };
            if self.or_skip(ignore, one)? == Some(true) {
                changed += 1;
            }
        }
        Ok((matched, changed))
    }

    fn multi_delete(
        &mut self,
        t: &MultiTarget,
        rows: Vec<Change>,
        ignore: bool,
    ) -> Result<(u64, u64)> {
        let chain = fk::Chain::top(None);
        let fk = self.fk_active();
        let mut n = 0;
        for (pk, _) in rows {
            let Some(old) = self.fk_current(&t.table, &pk)? else {
                continue;
            };
            let one = |x: &mut Self| x.delete_row(&t.table, &pk, &old, fk.then_some(&chain));
            if self.or_skip(ignore, one)?.is_some() {
                n += 1;
            }
        }
        Ok((n, n))
    }
}
