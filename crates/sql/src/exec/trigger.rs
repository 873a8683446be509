//! Triggers fired by INSERT, UPDATE and DELETE, row by row, inside the
//! statement: an error in one fails (and rolls back) the statement.

use super::{Exec, Result};
use crate::expr::{from_utc, to_utc};
use crate::parser::TriggerEvent;
use crate::routine::call::{action_order, trigger_program};
use crate::routine::run::Frame;
use crate::routine::Program;
use lockstep_engine::Error as EngineError;
use lockstep_tables::Table;
use lockstep_types::{DataType, Value};
use std::sync::Arc;

pub(crate) struct Compiled {
    key: String,
    database: String,
    program: Program,
    /// Triggers run with their definer's rights.
    definer: (String, String),
}

/// A table's triggers for one event, BEFORE and AFTER, in action order.
#[derive(Default)]
pub(crate) struct Triggers {
    pub before: Vec<Compiled>,
    pub after: Vec<Compiled>,
    /// The table they belong to (id, name): their bodies may not change it.
    table: (u32, String),
    /// Its TIMESTAMP columns: NEW and OLD show them in the session time
    /// zone, as expressions read them (the row holds UTC).
    timestamps: Vec<usize>,
}

impl Triggers {
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }
}

impl Exec<'_> {
    pub(crate) fn triggers_for(&self, table: &Arc<Table>, event: TriggerEvent) -> Result<Triggers> {
        let def = table.def();
        let timestamps = (def.columns.iter().enumerate())
            .filter(|(_, c)| matches!(c.data_type, DataType::Timestamp { .. }))
            .map(|(i, _)| i)
            .collect();
        let mut out = Triggers {
            table: (table.id, def.name.clone()),
            timestamps,
            ..Triggers::default()
        };
        let all = self.engine.catalog.triggers(&def.database, &def.name);
        if all.is_empty() {
            return Ok(out);
        }
        for (t, ct) in action_order(all).map_err(EngineError::Sql)? {
            if ct.event != event {
                continue;
            }
            let columns = crate::routine::call::trigger_columns(&def);
            let program = trigger_program(&ct, &columns).map_err(EngineError::Sql)?;
            let c = Compiled {
                key: format!("TRIGGER {}.{}", t.database, t.name),
                database: t.database.clone(),
                program,
                definer: t.definer.clone(),
            };
            match ct.before {
                true => out.before.push(c),
                false => out.after.push(c),
            }
        }
        Ok(out)
    }

    /// Runs `list` for one row; BEFORE triggers may change `new`.
    pub(crate) fn fire(
        &mut self,
        triggers: &Triggers,
        before: bool,
        new: Option<&mut Vec<Value>>,
        old: Option<&[Value]>,
    ) -> Result<()> {
        let list = if before {
            &triggers.before
        } else {
            &triggers.after
        };
        if list.is_empty() {
            return Ok(());
        }
        IN_USE.with(|u| u.borrow_mut().push(triggers.table.clone()));
        let r = self.fire_list(list, &triggers.timestamps, new, old);
        IN_USE.with(|u| u.borrow_mut().pop());
        r
    }

    fn fire_list(
        &mut self,
        list: &[Compiled],
        timestamps: &[usize],
        new: Option<&mut Vec<Value>>,
        old: Option<&[Value]>,
    ) -> Result<()> {
        let width = new
            .as_deref()
            .map_or(0, |r| r.len())
            .max(old.map_or(0, |r| r.len()));
        let mut slots = Vec::with_capacity(width * 2);
        match &new {
            Some(r) => slots.extend(r.iter().cloned()),
            None => slots.resize(width, Value::Null),
        }
        match old {
            Some(r) => slots.extend(r.iter().cloned()),
            None => slots.resize(width * 2, Value::Null),
        }
        let tz = self.ctx.tz_offset;
        for &i in timestamps {
            for at in [i, width + i] {
                slots[at] = from_utc(std::mem::take(&mut slots[at]), tz);
            }
        }
        for t in list {
            let mut frame = Frame::new(&t.program, slots);
            let definer = Some(&t.definer);
            let r = self.run_program(&t.key, &t.database, &t.program, &mut frame, definer);
            if let Err(e) = r {
                return Err(self.pending.take().unwrap_or(EngineError::Sql(e)));
            }
            slots = frame.slots;
            slots.truncate(width * 2);
        }
        if let Some(new) = new {
            new.clear();
            new.extend(slots.into_iter().take(width));
            for &i in timestamps {
                let ty = DataType::Timestamp { fsp: 6 };
                new[i] = to_utc(std::mem::take(&mut new[i]), ty, tz);
            }
        }
        Ok(())
    }
}

thread_local! {
    /// Tables whose triggers are running on this thread (a trigger runs
    /// without waiting, so nothing else runs here meanwhile).
    static IN_USE: std::cell::RefCell<Vec<(u32, String)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// 1442 when a trigger's body changes the table whose statement fired it.
pub(crate) fn check_not_in_use(table: u32) -> std::result::Result<(), lockstep_types::Error> {
    let used = IN_USE.with(|u| {
        u.borrow()
            .iter()
            .find(|(id, _)| *id == table)
            .map(|t| t.1.clone())
    });
    match used {
        Some(name) => Err(lockstep_types::Error::new(
            lockstep_types::error::Code::CantUpdateUsedTableInSfOrTrg,
            format!("Can't update table '{name}' in stored function/trigger because it is already used by statement which invoked this stored function/trigger."),
        )),
        None => Ok(()),
    }
}
