//! INSERT, REPLACE and INSERT ... ON DUPLICATE KEY UPDATE: each source row
//! is completed (defaults, AUTO_INCREMENT, NOT NULL, BEFORE triggers,
//! generated columns, CHECK constraints) and written; a duplicate key is
//! then resolved as the statement asks (delete and retry, update the
//! existing row, skip with a warning, or fail with 1062).

use super::{auto_increment, check_null, fk, store_value, trigger, Exec, Result};
use crate::expr::{text_form, BExpr};
use crate::parser::TriggerEvent;
use crate::plan::generated::Bound;
use crate::plan::{InsertPlan, InsertSource};
use lockstep_engine::{Duplicate, Error as EngineError};
use lockstep_tables::table::Schema;
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};
use parking_lot::RwLockReadGuard;
use std::cmp::Ordering;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

/// What one INSERT statement needs for every row it writes.
struct Inserting<'a> {
    schema: RwLockReadGuard<'a, Schema>,
    /// The INSERT triggers.
    triggers: trigger::Triggers,
    /// DELETE triggers for REPLACE, UPDATE triggers for ON DUPLICATE KEY.
    other: trigger::Triggers,
    auto_col: Option<usize>,
    auto_step: auto_increment::Step,
    fk: bool,
    chain: fk::Chain,
    /// NULL given for a NOT NULL column becomes the implicit default
    /// outside strict mode: under IGNORE, or in a multi-row INSERT.
    lenient_null: bool,
    /// The table's generated columns, bound once per statement.
    generated: Arc<Bound>,
}

impl Exec<'_> {
    /// Returns (affected rows, first generated AUTO_INCREMENT value).
    pub fn insert(&mut self, p: &InsertPlan) -> Result<(u64, Option<u64>)> {
        let source_rows = self.insert_source(p)?;
        let mut ins = self.inserting(p)?;
        ins.lenient_null = p.ignore || source_rows.len() > 1;
        let mut affected = 0u64;
        let mut first_auto: Option<u64> = None;
        for (n, vals) in source_rows.into_iter().enumerate() {
            let def = &ins.schema.def;
            lockstep_types::memory::check_data(&def.name).map_err(EngineError::Sql)?;
            let first = self.ctx.rows_before + n as u64 + 1;
            let row = self.for_row(first, |x| x.complete_row(p, &ins, vals, &mut first_auto))?;
            let Some(row) = row else {
                continue;
            };
            affected += self.write_row(p, &ins, row)?;
        }
        Ok((affected, first_auto))
    }

    /// The rows to insert, one value per target column (None: DEFAULT).
    fn insert_source(&mut self, p: &InsertPlan) -> Result<Vec<Vec<Option<Value>>>> {
        let count_error = || {
            EngineError::Sql(Error::new(
                Code::WrongValueCountOnRow,
                "Column count doesn't match value count at row 1",
            ))
        };
        match &p.source {
            InsertSource::Values(rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    if r.len() != p.targets.len() {
                        return Err(count_error());
                    }
                    let mut vals = Vec::with_capacity(r.len());
                    for e in r {
                        vals.push(match e {
                            BExpr::Default => None,
                            e => Some(self.eval(e, &[])?),
                        });
                    }
                    out.push(vals);
                }
                Ok(out)
            }
            InsertSource::Query(q) => {
                let rows = self.query(q)?;
                if rows.first().is_some_and(|r| r.len() != p.targets.len()) {
                    return Err(count_error());
                }
                // Each value in the text form of its source column's type
                // where the target holds text.
                let types: Vec<_> = (q.columns.iter().zip(&p.targets))
                    .map(|(c, t)| (c.data_type, p.def.columns[*t].data_type))
                    .collect();
                let typed = |(v, (from, to)): (Value, &(DataType, DataType))| {
                    Some(text_form::for_column(v, *from, *to))
                };
                Ok(rows
                    .into_iter()
                    .map(|r| r.into_iter().zip(&types).map(typed).collect())
                    .collect())
            }
        }
    }

    fn inserting<'t>(&mut self, p: &'t InsertPlan) -> Result<Inserting<'t>> {
        let triggers = self.triggers_for(&p.table, TriggerEvent::Insert)?;
        let other = match (p.replace, p.on_duplicate.is_empty()) {
            (true, _) => self.triggers_for(&p.table, TriggerEvent::Delete)?,
            (false, false) => self.triggers_for(&p.table, TriggerEvent::Update)?,
            _ => trigger::Triggers::default(),
        };
        let schema = p.table.schema();
        let auto_col = schema.def.auto_increment_column();
        let auto_step = match auto_col {
            Some(_) => auto_increment::Step::of(self.ctx),
            None => auto_increment::Step::ONE,
        };
        Ok(Inserting {
            schema,
            triggers,
            other,
            auto_col,
            auto_step,
            fk: self.fk_active(),
            chain: fk::Chain::top(Some(p.table.id)),
            lenient_null: false,
            generated: self.generated_of(&p.table)?,
        })
    }

    /// The full row for one source row, or None when IGNORE skips it.
    fn complete_row(
        &mut self,
        p: &InsertPlan,
        ins: &Inserting,
        vals: Vec<Option<Value>>,
        first_auto: &mut Option<u64>,
    ) -> Result<Option<Vec<Value>>> {
        let def = &ins.schema.def;
        // CURRENT_TIMESTAMP in the session zone (store_column converts a
        // TIMESTAMP to UTC, as any value given for it).
        let now = Value::DateTime(self.now_local());
        let mut row: Vec<Value> = def
            .columns
            .iter()
            .map(|c| match c.default_now {
                true => now.clone(),
                // A TIMESTAMP's is kept in UTC: in the session zone here.
                false => crate::expr::time_zone::default_in_zone(c, self.ctx.tz_offset)
                    .unwrap_or(Value::Null),
            })
            .collect();
        let mut given = vec![false; def.columns.len()];
        for (&col, v) in p.targets.iter().zip(vals) {
            if let Some(v) = v {
                row[col] = v;
                given[col] = true;
            }
        }
        for (i, given) in given.into_iter().enumerate() {
            if ins.generated.iter().any(|(at, _)| *at == i) {
                continue; // computed below, once the others are stored
            }
            self.complete_column(p, ins, &mut row, i, given, first_auto)?;
        }
        if !ins.triggers.before.is_empty() {
            self.fire(&ins.triggers, true, Some(&mut row), None)?;
            for (v, c) in row.iter_mut().zip(&def.columns) {
                *v = check_null(std::mem::take(v), c)?;
            }
        }
        self.generate(&p.table, &mut row)?;
        if !self.check_row(&p.table, &row, p.ignore)? {
            return Ok(None);
        }
        if ins.fk && p.ignore {
            // IGNORE skips the row with a warning: checked before it is
            // written.
            if let Err(EngineError::Sql(e)) = self.fk_check_parents(&p.table, &row, None) {
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(e.code.number(), e.message));
                return Ok(None);
            }
        }
        Ok(Some(row))
    }

    /// Column `i` of a row being inserted: AUTO_INCREMENT and the hidden
    /// row id generated, NOT NULL and missing defaults checked, the value
    /// converted to the column's type.
    fn complete_column(
        &mut self,
        p: &InsertPlan,
        ins: &Inserting,
        row: &mut [Value],
        i: usize,
        given: bool,
        first_auto: &mut Option<u64>,
    ) -> Result<()> {
        let c = &ins.schema.def.columns[i];
        if Some(i) == ins.auto_col {
            let v = &row[i];
            if v.is_null() || v.to_i64() == Some(0) {
                let next = ins.auto_step.next(&p.table.auto_increment);
                row[i] = Value::UInt(next);
                first_auto.get_or_insert(next);
            } else {
                let v = store_value(v.clone(), c.data_type, &c.name)?;
                if let Some(n) = v.to_i64().filter(|&n| n > 0) {
                    p.table.auto_increment.fetch_max(n as u64 + 1, SeqCst);
                }
                row[i] = v;
            }
        } else if Some(i) == ins.schema.def.hidden_row_id {
            row[i] = Value::UInt(p.table.next_row_id.fetch_add(1, SeqCst));
        } else if row[i].is_null() && !c.nullable {
            if given {
                row[i] = self.null_into_not_null(c, ins.lenient_null)?;
            } else if let Some(first) = crate::expr::enumset::implicit_default(c.data_type) {
                row[i] = first;
            } else if c.default.is_none() && !c.default_now {
                return Err(EngineError::Sql(Error::new(
                    Code::NoDefaultForField,
                    format!("Field '{}' doesn't have a default value", c.name),
                )));
            }
        }
        let v = std::mem::take(&mut row[i]);
        row[i] = self.store_column(v, c)?;
        Ok(())
    }

    /// Writes a completed row, resolving a duplicate key as the statement
    /// asks; returns the rows affected, counted as MySQL does.
    fn write_row(&mut self, p: &InsertPlan, ins: &Inserting, mut row: Vec<Value>) -> Result<u64> {
        let dup = match self
            .engine
            .insert(self.txn, &p.table, &ins.schema, row.clone())?
        {
            Ok(_) => {
                if ins.fk && !p.ignore {
                    self.fk_check_parents(&p.table, &row, None)?;
                }
                self.fire(&ins.triggers, false, Some(&mut row), None)?;
                return Ok(1);
            }
            Err(dup) => dup,
        };
        if p.replace {
            self.replace_row(p, ins, row, dup)
        } else if !p.on_duplicate.is_empty() {
            self.upsert_row(p, ins, &row, dup)
        } else if p.ignore {
            self.ctx.warnings.push(crate::exec::Condition::warning(
                1062,
                format!("Duplicate entry '{}' for key '{}'", dup.key_text, dup.index),
            ));
            Ok(0)
        } else {
            Err(EngineError::Sql(Error::dup_entry(
                &dup.key_text,
                &dup.index,
            )))
        }
    }

    /// REPLACE: deletes every row the new one collides with (on the
    /// primary key or any unique key), then inserts it.
    fn replace_row(
        &mut self,
        p: &InsertPlan,
        ins: &Inserting,
        mut row: Vec<Value>,
        mut dup: Duplicate,
    ) -> Result<u64> {
        let mut affected = 0;
        for attempt in 1.. {
            let gone = dup.row.to_vec();
            self.fire(&ins.other, true, None, Some(&gone))?;
            let schema = &ins.schema;
            let pk = &dup.primary_key;
            self.engine
                .delete(self.txn, &p.table, schema, pk, &dup.row)?;
            self.fire(&ins.other, false, None, Some(&gone))?;
            if ins.fk {
                self.fk_parent_changed(&p.table, &gone, None, &fk::Chain::top(None))?;
            }
            affected += 1;
            match self
                .engine
                .insert(self.txn, &p.table, schema, row.clone())?
            {
                Ok(_) => {
                    if ins.fk {
                        self.fk_check_parents(&p.table, &row, None)?;
                    }
                    self.fire(&ins.triggers, false, Some(&mut row), None)?;
                    return Ok(affected + 1);
                }
                Err(d) if attempt <= schema.def.indexes.len() => dup = d,
                Err(d) => return Err(EngineError::Sql(Error::dup_entry(&d.key_text, &d.index))),
            }
        }
        unreachable!("the loop returns")
    }

    /// ON DUPLICATE KEY UPDATE: the existing row updated with the
    /// assignments, which may read the new row's values (VALUES(c), the
    /// row alias); 2 affected when it changed, 0 (or 1 with
    /// CLIENT_FOUND_ROWS) when it did not.
    fn upsert_row(
        &mut self,
        p: &InsertPlan,
        ins: &Inserting,
        row: &[Value],
        dup: Duplicate,
    ) -> Result<u64> {
        let def = &ins.schema.def;
        let mut new = dup.row.to_vec();
        for (col, e) in &p.on_duplicate {
            let mut ctx_row = new.clone();
            ctx_row.extend(row.iter().cloned());
            let v = self.eval(e, &ctx_row)?;
            let c = &def.columns[*col];
            new[*col] = self.assign_column(v, c)?;
        }
        if !ins.other.before.is_empty() {
            let old = dup.row.to_vec();
            self.fire(&ins.other, true, Some(&mut new), Some(&old))?;
            for (v, c) in new.iter_mut().zip(&def.columns) {
                *v = check_null(std::mem::take(v), c)?;
            }
        }
        self.generate(&p.table, &mut new)?;
        let same = new
            .iter()
            .zip(dup.row.iter())
            .all(|(a, b)| a.sort_cmp(b) == Ordering::Equal && a.is_null() == b.is_null());
        if same {
            return Ok(u64::from(self.ctx.client_found_rows));
        }
        self.check_row(&p.table, &new, false)?;
        let kept = (ins.fk || !ins.other.after.is_empty()).then(|| new.clone());
        let pk = &dup.primary_key;
        if let Err(d) = self
            .engine
            .update(self.txn, &p.table, &ins.schema, pk, &dup.row, new)?
        {
            return Err(EngineError::Sql(Error::dup_entry(&d.key_text, &d.index)));
        }
        if let Some(mut new) = kept {
            let old = dup.row.to_vec();
            if ins.fk {
                self.fk_check_parents(&p.table, &new, Some(&old))?;
                self.fk_parent_changed(&p.table, &old, Some(&new), &ins.chain)?;
            }
            self.fire(&ins.other, false, Some(&mut new), Some(&old))?;
        }
        Ok(2)
    }
}
