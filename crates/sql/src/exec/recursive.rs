//! Iterative evaluation of a recursive CTE: the anchor's rows, then each
//! round the steps run over the rows the round before added, until a
//! round adds none. Bounded by cte_max_recursion_depth (3636), by the
//! statement's memory cap (every row kept is charged), and by a LIMIT on
//! the whole, which stops the rounds once enough rows exist.

use super::keyset::KeySet;
use super::{collation_key, row_bytes, Exec, Result};
use crate::expr::store_value;
use crate::plan::RecursivePlan;
use lockstep_engine::Error as EngineError;
use lockstep_types::error::Code;
use lockstep_types::result::Column;
use lockstep_types::{Error, Value};
use std::sync::Arc;

/// Rows of a UNION DISTINCT recursion already produced.
struct Seen {
    keys: KeySet,
    text: Vec<bool>,
}

impl Exec<'_> {
    pub(super) fn recursive(
        &mut self,
        r: &RecursivePlan,
        columns: &[Column],
    ) -> Result<Vec<Vec<Value>>> {
        let max_depth = self.max_recursion_depth()?;
        let strict = self.strict_sql_mode()?;
        let wanted = self.limit_count(&r.limit, &r.offset)?;
        let mut seen = r.distinct.then(|| Seen {
            keys: KeySet::default(),
            text: columns.iter().map(|c| c.data_type.is_string()).collect(),
        });
        let anchor = self.query(&r.anchor)?;
        let mut all = Vec::new();
        let mut working = self.keep_new(anchor, &mut seen)?;
        let mut rounds = 0u64;
        while !working.is_empty() && wanted.is_none_or(|n| all.len() + working.len() < n) {
            if rounds >= max_depth {
                return Err(EngineError::Sql(Error::new(
                    Code::RecursionLimit,
                    format!("Recursive query aborted after {} iterations. Try increasing @@cte_max_recursion_depth to a larger value.", rounds + 1),
                )));
            }
            rounds += 1;
            self.ctx.interrupt.check().map_err(EngineError::Sql)?;
            let current = Arc::new(std::mem::take(&mut working));
            self.working.insert(r.id, current.clone());
            let mut added = Vec::new();
            for step in &r.steps {
                for row in self.query(step)? {
                    added.push(self.fit_row(row, columns, strict)?);
                }
            }
            all.extend(current.iter().cloned());
            working = self.keep_new(added, &mut seen)?;
        }
        self.working.remove(&r.id);
        all.extend(working);
        self.apply_limit(&mut all, &r.limit, &r.offset)?;
        Ok(all)
    }

    /// The rows not produced before (all of them for UNION ALL), charged
    /// against the statement's memory.
    fn keep_new(
        &mut self,
        rows: Vec<Vec<Value>>,
        seen: &mut Option<Seen>,
    ) -> Result<Vec<Vec<Value>>> {
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            if let Some(s) = seen.as_mut() {
                let (_, grown) = s.keys.insert_with(|key| collation_key(&row, &s.text, key));
                match grown {
                    Some(bytes) => self.charge(bytes)?,
                    None => continue,
                }
            }
            self.charge(row_bytes(&row))?;
            kept.push(row);
        }
        Ok(kept)
    }

    /// A step's row in the anchor's column types: in strict mode a value
    /// that does not fit (a longer string) is an error, as in MySQL;
    /// otherwise a warning, the value kept.
    fn fit_row(&mut self, row: Vec<Value>, columns: &[Column], strict: bool) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(row.len());
        for (v, c) in row.into_iter().zip(columns) {
            match store_value(v.clone(), c.data_type, &c.name) {
                Ok(fit) => out.push(fit),
                Err(e) if strict => return Err(EngineError::Sql(e)),
                Err(e) => {
                    self.ctx.warn(e).map_err(EngineError::Sql)?;
                    out.push(v);
                }
            }
        }
        Ok(out)
    }

    fn strict_sql_mode(&mut self) -> Result<bool> {
        let reader = self.ctx.system_var.clone();
        let mode = reader(self.ctx, false, "sql_mode").map_err(EngineError::Sql)?;
        Ok(mode.to_string().to_ascii_uppercase().contains("STRICT_"))
    }

    fn max_recursion_depth(&mut self) -> Result<u64> {
        let reader = self.ctx.system_var.clone();
        let v = reader(self.ctx, false, "cte_max_recursion_depth").map_err(EngineError::Sql)?;
        Ok(v.to_i64().unwrap_or(1000).max(0) as u64)
    }

    /// The rows of recursive CTE `id`'s previous round.
    pub(super) fn working_rows(&self, id: usize) -> Vec<Vec<Value>> {
        self.working
            .get(&id)
            .map(|rows| rows.to_vec())
            .unwrap_or_default()
    }
}
