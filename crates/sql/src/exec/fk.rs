//! Foreign key enforcement, as InnoDB does it: a child row's parent is
//! looked up under a shared lock on the parent record (and, under
//! REPEATABLE READ, the gap where it would be), so a concurrent delete of
//! that parent waits for the child's transaction and then sees the child;
//! a parent's change looks for children under shared (refused) or
//! exclusive (cascaded) locks. Cascades recurse; as in InnoDB, whose
//! FK_MAX_CASCADE_DEL counts the statement too, the 15th nested one fails.

use super::{row_bytes, Exec, Result};
use crate::plan::foreign::{find_index, violation};
use lockstep_engine::{engine::successor_prefix, Error as EngineError, LockMode};
use lockstep_tables::schema::encode_column_key;
use lockstep_tables::{FkAction, ForeignKey, Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::ops::Bound;
use std::sync::Arc;

/// InnoDB's FK_MAX_CASCADE_DEL.
const MAX_DEPTH: usize = 15;

/// A row of a table found through a key: its primary key and values.
type Found = (Vec<u8>, Vec<Value>);

/// What a cascade is under: how deep it is, and which tables the updates
/// above it change (InnoDB refuses a cascaded update of such a table).
#[derive(Clone, Default)]
pub(crate) struct Chain {
    depth: usize,
    updating: Vec<u32>,
}

impl Chain {
    /// The chain of a statement that updates `table` (None: deletes).
    pub(crate) fn top(updating: Option<u32>) -> Chain {
        Chain {
            depth: 0,
            updating: updating.into_iter().collect(),
        }
    }

    fn below(&self, updating: Option<u32>) -> Result<Chain> {
        // InnoDB counts the statement itself: the 15th nested cascade fails.
        if self.depth + 1 >= MAX_DEPTH {
            return Err(EngineError::Sql(Error::new(
                Code::FkDepthExceeded,
                format!("Foreign key cascade delete/update exceeds max depth of {MAX_DEPTH}."),
            )));
        }
        let mut c = self.clone();
        c.depth += 1;
        c.updating.extend(updating);
        Ok(c)
    }
}

fn sql(e: Error) -> EngineError {
    EngineError::Sql(e)
}

fn no_parent(fk: &ForeignKey, def: &TableDef) -> EngineError {
    sql(violation(false, fk, &def.database, &def.name))
}

fn referenced(fk: &ForeignKey, child: &TableDef) -> EngineError {
    sql(violation(true, fk, &child.database, &child.name))
}

/// The values of `names` in `row` (None when one is NULL: SQL's MATCH
/// SIMPLE, a constraint with a NULL column holds).
fn values_of(def: &TableDef, names: &[String], row: &[Value]) -> Option<Vec<Value>> {
    names
        .iter()
        .map(|n| {
            let v = &row[def.column_index(n)?];
            (!v.is_null()).then(|| v.clone())
        })
        .collect()
}

/// Whether two rows agree on `names` under the index collation.
fn same_key(def: &TableDef, names: &[String], a: &[Value], b: &[Value]) -> bool {
    let key = |row: &[Value]| {
        let mut out = Vec::new();
        for n in names {
            if let Some(c) = def.column_index(n) {
                encode_column_key(&row[c], def.columns[c].data_type, &mut out);
                out.push(u8::from(row[c].is_null()));
            }
        }
        out
    };
    key(a) == key(b)
}

/// FOREIGN_KEY_CHECKS as the session sees it.
pub(crate) fn checks_enabled(ctx: &super::SessionCtx) -> bool {
    (ctx.system_var)(ctx, false, "foreign_key_checks")
        .map(|v| match v {
            Value::Bytes(b) => !b.eq_ignore_ascii_case(b"OFF"),
            v => v.truth() != Some(false),
        })
        .unwrap_or(true)
}

/// Whether `row` references itself under `fk` (its columns hold its own
/// referenced key, compared as index keys).
fn same_key_pair(def: &TableDef, fk: &ForeignKey, row: &[Value]) -> bool {
    let key = |names: &[String]| {
        let mut out = Vec::new();
        for n in names {
            if let Some(c) = def.column_index(n) {
                encode_column_key(&row[c], def.columns[c].data_type, &mut out);
            }
        }
        out
    };
    key(&fk.columns) == key(&fk.parent_columns)
}

impl Exec<'_> {
    /// Whether constraints are checked for this statement.
    pub(crate) fn fk_active(&self) -> bool {
        self.engine.catalog.has_foreign_keys() && checks_enabled(self.ctx)
    }

    /// Rows of `table` whose index `index` starts with `values`, locked
    /// in `mode` (None: a consistent read); at most `limit`.
    fn fk_rows(
        &mut self,
        table: &Arc<Table>,
        index: usize,
        values: &[Value],
        mode: Option<LockMode>,
        limit: usize,
    ) -> Result<Vec<Found>> {
        let schema = table.schema();
        let def = &schema.def;
        let mut prefix = Vec::new();
        for (v, &c) in values.iter().zip(&def.indexes[index].columns) {
            encode_column_key(v, def.columns[c].data_type, &mut prefix);
        }
        let upper = successor_prefix(&prefix);
        let (lo, hi) = (Bound::Included(&prefix[..]), Bound::Excluded(&upper[..]));
        let mut out: Vec<Found> = Vec::new();
        let mut bytes = 0usize;
        let mut visit = |pk: &[u8], row: lockstep_tables::Row| -> Result<bool> {
            let row = row.to_values();
            bytes += row_bytes(&row) + pk.len();
            out.push((pk.to_vec(), row));
            Ok(out.len() < limit)
        };
        let (engine, txn) = (self.engine, &mut *self.txn);
        if index == 0 {
            engine.scan_primary(txn, table, lo, hi, false, mode, &mut visit)?;
        } else {
            engine.scan_secondary(txn, table, &schema, index, lo, hi, false, mode, &mut visit)?;
        }
        drop(schema);
        self.charge(bytes)?;
        Ok(out)
    }

    /// A child row was inserted, or updated from `old`: each constraint
    /// whose columns it sets (changed, for an update) must find its parent.
    pub(crate) fn fk_check_parents(
        &mut self,
        table: &Arc<Table>,
        row: &[Value],
        old: Option<&[Value]>,
    ) -> Result<()> {
        let fks = self.engine.catalog.foreign_keys(table.id);
        if fks.is_empty() {
            return Ok(());
        }
        let def = table.def();
        for fk in fks.iter() {
            if old.is_some_and(|o| same_key(&def, &fk.columns, o, row)) {
                continue;
            }
            let Some(values) = values_of(&def, &fk.columns, row) else {
                continue;
            };
            if !self.fk_parent_exists(fk, &values, Some(LockMode::Shared))? {
                return Err(no_parent(fk, &def));
            }
        }
        Ok(())
    }

    fn fk_parent_exists(
        &mut self,
        fk: &ForeignKey,
        values: &[Value],
        mode: Option<LockMode>,
    ) -> Result<bool> {
        let catalog = &self.engine.catalog;
        let Some(parent) = catalog.table(&fk.parent_db, &fk.parent_table) else {
            return Ok(false);
        };
        let Some(index) = find_index(&parent.def(), &fk.parent_columns) else {
            return Ok(false);
        };
        let found = self.fk_rows(&parent, index, values, mode, 1)?;
        Ok(!found.is_empty())
    }

    /// Row `old` of parent `table` was deleted (`new` None) or became
    /// `new`: children of the old key are refused, deleted or follow the
    /// new key, or are unlinked.
    pub(crate) fn fk_parent_changed(
        &mut self,
        table: &Arc<Table>,
        old: &[Value],
        new: Option<&[Value]>,
        chain: &Chain,
    ) -> Result<()> {
        let def = table.def();
        let refs = self.engine.catalog.referencing(&def.database, &def.name);
        for (child_id, fk) in refs {
            if new.is_some_and(|new| same_key(&def, &fk.parent_columns, old, new)) {
                continue;
            }
            let Some(values) = values_of(&def, &fk.parent_columns, old) else {
                continue;
            };
            let to: Option<Vec<Value>> = new.map(|new| {
                fk.parent_columns
                    .iter()
                    .map(|c| def.column_index(c).map_or(Value::Null, |i| new[i].clone()))
                    .collect()
            });
            let action = if new.is_some() {
                fk.on_update
            } else {
                fk.on_delete
            };
            // InnoDB finds the changed row itself among its children: a
            // row that references itself blocks its own delete or update.
            let own = child_id == table.id && values_of(&def, &fk.columns, old).is_some();
            if action.refuses() && own && same_key_pair(&def, &fk, old) {
                return Err(referenced(&fk, &def));
            }
            self.fk_act(child_id, &fk, action, &values, to.as_deref(), chain)?;
        }
        Ok(())
    }

    /// The children of key `values` under `fk`, acted on by `action`;
    /// `to`: the parent's new key (an update), None for a delete.
    fn fk_act(
        &mut self,
        child_id: u32,
        fk: &ForeignKey,
        action: FkAction,
        values: &[Value],
        to: Option<&[Value]>,
        chain: &Chain,
    ) -> Result<()> {
        let Some(child) = self.engine.catalog.table_by_id(child_id) else {
            return Ok(());
        };
        let def = child.def();
        let Some(index) = find_index(&def, &fk.columns) else {
            return Ok(());
        };
        let mode = if action.refuses() {
            LockMode::Shared
        } else {
            LockMode::Exclusive
        };
        let limit = if action.refuses() { 1 } else { usize::MAX };
        let rows = self.fk_rows(&child, index, values, Some(mode), limit)?;
        if rows.is_empty() {
            return Ok(());
        }
        let cascade_update = action == FkAction::SetNull || to.is_some();
        if action.refuses() || (cascade_update && chain.updating.contains(&child_id)) {
            return Err(referenced(fk, &def));
        }
        let below = chain.below(cascade_update.then_some(child_id))?;
        for (pk, row) in rows {
            match (action, to) {
                (FkAction::Cascade, None) => self.fk_cascade_delete(&child, &pk, row, &below)?,
                _ => {
                    let mut new = row.clone();
                    for (i, c) in fk.columns.iter().enumerate() {
                        let Some(at) = def.column_index(c) else {
                            continue;
                        };
                        new[at] = match (action, to) {
                            (FkAction::Cascade, Some(to)) => to[i].clone(),
                            _ => Value::Null,
                        };
                    }
                    self.fk_cascade_update(&child, &pk, row, new, &below)?;
                }
            }
        }
        Ok(())
    }

    fn fk_cascade_delete(
        &mut self,
        child: &Arc<Table>,
        pk: &[u8],
        row: Vec<Value>,
        chain: &Chain,
    ) -> Result<()> {
        let schema = child.schema();
        self.engine.delete(self.txn, child, &schema, pk, &row)?;
        drop(schema);
        self.fk_parent_changed(child, &row, None, chain)
    }

    fn fk_cascade_update(
        &mut self,
        child: &Arc<Table>,
        pk: &[u8],
        old: Vec<Value>,
        mut new: Vec<Value>,
        chain: &Chain,
    ) -> Result<()> {
        self.generate(child, &mut new)?;
        let schema = child.schema();
        let done = self
            .engine
            .update(self.txn, child, &schema, pk, &old, new.clone())?;
        drop(schema);
        if let Err(dup) = done {
            return Err(sql(Error::dup_entry(&dup.key_text, &dup.index)));
        }
        self.fk_parent_changed(child, &old, Some(&new), chain)
    }

    /// ALTER TABLE ADD FOREIGN KEY: whether a row of `table` (the child,
    /// under an exclusive metadata lock) has no parent; a consistent read.
    pub(crate) fn fk_orphan(&mut self, table: &Arc<Table>, fk: &ForeignKey) -> Result<bool> {
        let def = table.def();
        let mut keys: Vec<Vec<Value>> = Vec::new();
        let mut bytes = 0usize;
        let (engine, txn) = (self.engine, &mut *self.txn);
        engine.scan_primary(
            txn,
            table,
            Bound::Unbounded,
            Bound::Unbounded,
            false,
            None,
            &mut |_, row| {
                if let Some(v) = values_of(&def, &fk.columns, &row.to_values()) {
                    bytes += row_bytes(&v);
                    keys.push(v);
                }
                Ok(true)
            },
        )?;
        self.charge(bytes)?;
        for values in keys {
            if !self.fk_parent_exists(fk, &values, None)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `table` has foreign keys of its own.
    pub(crate) fn fk_is_child(&self, table: &Table) -> bool {
        !self.engine.catalog.foreign_keys(table.id).is_empty()
    }

    /// The current version of a row a statement collected before its
    /// cascades ran (they may have changed or deleted it); None: gone.
    pub(crate) fn fk_current(
        &mut self,
        table: &Arc<Table>,
        pk: &[u8],
    ) -> Result<Option<Vec<Value>>> {
        let row = self
            .engine
            .read_locked(self.txn, table, pk, LockMode::Exclusive)?;
        Ok(row.map(|r| r.to_values()))
    }
}
