//! CHECK constraints enforced on the rows INSERT, REPLACE, UPDATE and ON
//! DUPLICATE KEY UPDATE write (`plan::check`): a condition that is FALSE
//! refuses the row (3819); NULL passes, as in MySQL.

use super::{Exec, Result};
use crate::expr::{eval, BExpr};
use crate::plan::check::{bind_all, violated};
use lockstep_engine::Error as EngineError;
use lockstep_tables::Table;
use lockstep_types::Value;
use std::ops::Bound;
use std::sync::Arc;

impl Exec<'_> {
    /// Whether `row` of `table` passes its enforced CHECKs: an error
    /// (3819) when one fails, or with `ignore` a warning and false.
    pub(crate) fn check_row(&mut self, table: &Table, row: &[Value], ignore: bool) -> Result<bool> {
        if !self.view_checks.is_empty() && !self.check_view_option(table, row, ignore)? {
            return Ok(false);
        }
        if !self.engine.catalog.has_checks() {
            return Ok(true);
        }
        let bound = match self.checks.get(&table.id) {
            Some(b) => b.clone(),
            None => {
                let list = self.engine.catalog.checks(table.id);
                let b = bind_all(&self.engine.catalog, &table.def(), &list);
                let b = Arc::new(b.map_err(EngineError::Sql)?);
                self.checks.insert(table.id, b.clone());
                b
            }
        };
        for (name, e) in bound.iter() {
            if self.eval(e, row)?.truth() == Some(false) {
                let e = violated(name);
                if !ignore {
                    return Err(EngineError::Sql(e));
                }
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(e.code.number(), e.message));
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl Exec<'_> {
    /// The first of `checks` some row of `table` makes FALSE (ADD CHECK,
    /// ALTER CHECK ... ENFORCED and a rebuild check the rows there).
    pub(crate) fn check_violated(
        &mut self,
        table: &Arc<Table>,
        checks: &[(String, BExpr)],
    ) -> Result<Option<String>> {
        let (engine, txn, mut env) = self.scan_parts();
        let mut found = None;
        let mut ticks = 0u32;
        let (lo, hi) = (Bound::Unbounded, Bound::Unbounded);
        engine.scan_primary(txn, table, lo, hi, false, None, &mut |_, row| {
            env.ctx
                .interrupt
                .tick(&mut ticks)
                .map_err(EngineError::Sql)?;
            let values = row.to_values();
            for (name, e) in checks {
                let v = eval(e, &values, &mut env).map_err(EngineError::Sql)?;
                if v.truth() == Some(false) {
                    found = Some(name.clone());
                    return Ok(false);
                }
            }
            Ok(true)
        })?;
        Ok(found)
    }
}

impl Exec<'_> {
    /// WITH CHECK OPTION: a row written through a view must be one the
    /// view shows (1369; with `ignore`, a warning and false).
    fn check_view_option(&mut self, table: &Table, row: &[Value], ignore: bool) -> Result<bool> {
        let checks = self.view_checks.clone();
        for (_, view, e) in checks.iter().filter(|c| c.0 == table.id) {
            if self.eval(e, row)?.truth() != Some(true) {
                let e = lockstep_types::Error::new(
                    lockstep_types::error::Code::ViewCheckFailed,
                    format!("CHECK OPTION failed '{view}'"),
                );
                if !ignore {
                    return Err(EngineError::Sql(e));
                }
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(e.code.number(), e.message));
                return Ok(false);
            }
        }
        Ok(true)
    }
}
