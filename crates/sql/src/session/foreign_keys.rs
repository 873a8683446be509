//! Foreign keys in DDL as a session runs it: CREATE TABLE with
//! constraints, ALTER TABLE ADD/DROP FOREIGN KEY (the existing rows
//! checked, no rebuild), and the refusals MySQL 8 gives when DROP TABLE,
//! TRUNCATE, DROP INDEX or an ALTER would break a constraint.

use super::auto_increment::engine_has_foreign_keys;
use super::{Session, R};
use crate::exec::fk::checks_enabled;
use crate::exec::Exec;
use crate::parser::{AlterAction, CreateTable, ForeignKeySpec};
use crate::plan::ddl::quote_ident;
use crate::plan::foreign::{compatible, find_index, incompatible, plan, violation, FkCatalog};
use lockstep_engine::comments::TableExtras;
use lockstep_engine::{Engine, Error as EngineError, Isolation};
use lockstep_tables::{FkAction, ForeignKey, Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::sync::Arc;

struct Catalog<'a>(&'a Engine);

impl FkCatalog for Catalog<'_> {
    fn parent(&self, db: &str, name: &str) -> Option<Arc<TableDef>> {
        self.0.catalog.table(db, name).map(|t| t.def())
    }

    fn name_taken(&self, db: &str, name: &str) -> bool {
        let catalog = &self.0.catalog;
        catalog.all_foreign_keys().iter().any(|(id, fks)| {
            catalog
                .table_by_id(*id)
                .is_some_and(|t| t.def().database == db)
                && fks.iter().any(|f| f.name.eq_ignore_ascii_case(name))
        })
    }
}

impl Session {
    fn fk_checks(&self) -> bool {
        checks_enabled(&self.ctx)
    }

    /// A session starts with the global FOREIGN_KEY_CHECKS; a later SET
    /// GLOBAL changes only sessions that start after it (as MySQL).
    pub(super) fn inherit_foreign_key_checks(&mut self) {
        let on = self
            .server
            .globals
            .get("foreign_key_checks")
            .is_none_or(|v| match v {
                Value::Bytes(b) => !b.eq_ignore_ascii_case(b"OFF"),
                v => v.truth() != Some(false),
            });
        self.ctx
            .session_vars
            .insert("foreign_key_checks".into(), Value::Int(on as i64));
    }

    /// CREATE TABLE: `def` with the indexes its constraints need, created
    /// with them in one logged record.
    pub(super) async fn create_with_foreign_keys(
        &mut self,
        mut def: TableDef,
        ct: &CreateTable,
    ) -> R<()> {
        let specs = self.like_checks(ct)?;
        let specs = if specs.is_empty() { &ct.checks } else { &specs };
        let checks = self.plan_checks(&def, None, Vec::new(), specs)?;
        let comments = self.create_comments(ct, &def)?;
        let generated = self.create_generated(&def, ct)?;
        let mut extras = TableExtras {
            checks,
            comments,
            generated,
            auto_increment: ct.auto_increment,
            ..TableExtras::default()
        };
        if ct.foreign_keys.is_empty() || self.foreign_keys_not_kept(&mut def, ct)? {
            self.engine.create_table_with(def, extras).await?;
            return Ok(());
        }
        let planned = plan(
            &def,
            &[],
            &ct.foreign_keys,
            &Catalog(&self.engine),
            self.fk_checks(),
        )?;
        def.indexes.extend(planned.indexes);
        crate::plan::generated::check_foreign_keys(&extras.generated, &planned.foreign_keys)?;
        extras.foreign_keys = planned.foreign_keys;
        self.engine.create_table_with(def, extras).await?;
        Ok(())
    }

    /// The FOREIGN KEY clauses of a CREATE TABLE that names an engine
    /// without foreign keys (MyISAM, MEMORY, ...): MySQL parses them, adds
    /// the index on the child's columns and creates no constraint, and
    /// applications written for such tables rely on that (deleting from a
    /// self-referencing MyISAM table in any order). The table becomes
    /// InnoDB (warning 1266), so each constraint left out gets a warning
    /// too. True when `ct` was such a table and `def` has the indexes.
    pub(super) fn foreign_keys_not_kept(
        &mut self,
        def: &mut TableDef,
        ct: &CreateTable,
    ) -> R<bool> {
        let Some(engine) = ct.engine.as_deref().filter(|e| !engine_has_foreign_keys(e)) else {
            return Ok(false);
        };
        def.indexes
            .extend(crate::plan::foreign::without_constraints(
                def,
                &ct.foreign_keys,
            )?);
        for fk in &ct.foreign_keys {
            let what = match &fk.name {
                Some(n) => format!("'{n}'"),
                None => format!("on ({})", fk.columns.join(", ")),
            };
            let text = format!(
                "The storage engine for the table doesn't support foreign keys: \
                 ENGINE={engine} was declared, so foreign key {what} is not created"
            );
            self.ctx
                .warnings
                .push(crate::exec::Condition::warning(1178, text));
        }
        Ok(true)
    }

    /// ALTER TABLE whose clauses are all ADD/DROP FOREIGN KEY: true when
    /// it ran (no rebuild); false when there are other clauses (`alter`
    /// then runs them with `fk_change`).
    pub(super) async fn alter_foreign_keys(
        &mut self,
        t: &Arc<Table>,
        actions: &[AlterAction],
    ) -> R<bool> {
        if actions.is_empty() || !actions.iter().all(is_fk_action) {
            return Ok(false);
        }
        let def = t.def();
        let own = self.engine.catalog.foreign_keys(t.id).to_vec();
        let change = self.fk_change(&def, own, actions)?;
        if self.fk_checks() {
            for fk in &change.added {
                self.check_existing_rows(t, fk)?;
            }
        }
        self.engine
            .set_foreign_keys(t, change.all, change.indexes)
            .await?;
        Ok(true)
    }

    /// The constraints table `id` has after the FOREIGN KEY clauses of an
    /// ALTER that makes it `def`; None when it has none.
    pub(super) fn fk_change(
        &self,
        def: &TableDef,
        mut kept: Vec<ForeignKey>,
        actions: &[AlterAction],
    ) -> R<FkChange> {
        let mut added: Vec<ForeignKeySpec> = Vec::new();
        for a in actions {
            match a {
                AlterAction::DropForeignKey { name } => {
                    let at = kept.iter().position(|f| f.name.eq_ignore_ascii_case(name));
                    let at = at.ok_or_else(|| {
                        Error::new(
                            Code::CantDropFieldOrKey,
                            format!("Can't DROP '{name}'; check that column/key exists"),
                        )
                    })?;
                    kept.remove(at);
                }
                AlterAction::AddForeignKey(spec) => added.push(spec.clone()),
                _ => {}
            }
        }
        let checks = self.fk_checks();
        let planned = plan(def, &kept, &added, &Catalog(&self.engine), checks)?;
        let generated = self.engine.catalog.generated(def.id);
        crate::plan::generated::check_foreign_keys(&generated, &planned.foreign_keys)?;
        kept.extend(planned.foreign_keys.iter().cloned());
        Ok(FkChange {
            all: kept,
            added: planned.foreign_keys,
            indexes: planned.indexes,
        })
    }

    /// The rebuilt table of an ALTER that also adds constraints: its rows
    /// must each find their parent.
    pub(super) fn check_rebuilt(&mut self, built: &Arc<Table>, added: &[ForeignKey]) -> R<()> {
        if !self.fk_checks() {
            return Ok(());
        }
        for fk in added {
            self.check_existing_rows(built, fk)?;
        }
        Ok(())
    }

    /// ADD FOREIGN KEY over rows that are there: each must find its parent
    /// (1452 otherwise).
    fn check_existing_rows(&mut self, t: &Arc<Table>, fk: &ForeignKey) -> R<()> {
        let engine = self.engine.clone();
        let mut txn = engine.begin(Isolation::ReadCommitted);
        let mut exec = Exec::new(&engine, &mut txn, &mut self.ctx, &[]);
        let orphan = exec.fk_orphan(t, fk);
        drop(exec);
        engine.rollback(&mut txn);
        let orphan = orphan.map_err(|e| match e {
            EngineError::Sql(e) => e,
            EngineError::LockWait(_) => Error::internal("lock wait in a consistent read"),
        })?;
        if orphan {
            let def = t.def();
            return Err(violation(false, fk, &def.database, &def.name));
        }
        Ok(())
    }

    /// DROP TABLE: 3730 when another table's constraint references one of
    /// `tables` and that table is not dropped too.
    pub(super) fn check_drop_parents(&self, tables: &[Arc<Table>]) -> R<()> {
        if !self.fk_checks() || !self.engine.catalog.has_foreign_keys() {
            return Ok(());
        }
        for t in tables {
            let def = t.def();
            for (child, fk) in self.engine.catalog.referencing(&def.database, &def.name) {
                if tables.iter().any(|d| d.id == child) {
                    continue;
                }
                let name = self
                    .engine
                    .catalog
                    .table_by_id(child)
                    .map(|c| c.def().name.clone())
                    .unwrap_or_default();
                return Err(Error::new(
                    Code::FkCannotDropParent,
                    format!(
                        "Cannot drop table '{}' referenced by a foreign key constraint '{}' on table '{name}'.",
                        def.name, fk.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// TRUNCATE of a table another table's constraint references: 1701.
    pub(super) fn check_truncate(&self, t: &Table) -> R<()> {
        if !self.fk_checks() {
            return Ok(());
        }
        let def = t.def();
        let refs = self.engine.catalog.referencing(&def.database, &def.name);
        if let Some((child, fk)) = refs.into_iter().find(|(c, _)| *c != t.id) {
            let cdef = self.engine.catalog.table_by_id(child).map(|c| c.def());
            let (db, name) =
                cdef.map_or_else(Default::default, |d| (d.database.clone(), d.name.clone()));
            return Err(Error::new(
                Code::TruncateIllegalFk,
                format!(
                    "Cannot truncate a table referenced in a foreign key constraint ({}.{}, CONSTRAINT {})",
                    quote_ident(&db),
                    quote_ident(&name),
                    quote_ident(&fk.name)
                ),
            ));
        }
        Ok(())
    }

    /// The constraints around table `id` once an ALTER's column renames
    /// (RENAME COLUMN, CHANGE old new) are followed, as MySQL 8 follows
    /// them: its own, and every other child's list that names its columns.
    pub(super) fn fk_after_renames(
        &self,
        old: &TableDef,
        id: u32,
        actions: &[AlterAction],
    ) -> Renamed {
        let catalog = &self.engine.catalog;
        let renames = column_renames(actions);
        let mut out = Renamed {
            own: catalog.foreign_keys(id).to_vec(),
            children: Vec::new(),
            refs: Vec::new(),
            changed: false,
            renames,
        };
        let parent_of = |f: &ForeignKey| f.references(&old.database, &old.name);
        for fk in out.own.iter_mut() {
            out.changed |= follow(&mut fk.columns, &out.renames);
            if parent_of(fk) {
                out.changed |= follow(&mut fk.parent_columns, &out.renames);
            }
        }
        let mut seen: Vec<u32> = Vec::new();
        for (child, _) in catalog.referencing(&old.database, &old.name) {
            if child == id || seen.contains(&child) {
                continue;
            }
            seen.push(child);
            let mut list = catalog.foreign_keys(child).to_vec();
            let mut changed = false;
            for fk in list.iter_mut().filter(|f| parent_of(f)) {
                changed |= follow(&mut fk.parent_columns, &out.renames);
                out.refs.push((child, fk.clone()));
            }
            if changed {
                out.children.push((child, list));
                out.changed = true;
            }
        }
        out
    }

    /// An ALTER that rebuilds `old` as `new` (or DROP INDEX) must leave
    /// every constraint its columns, compatible types and an index:
    /// `own` the table's (as they will be), `refs` other tables' that
    /// reference it.
    pub(super) fn check_alter(
        &self,
        old: &TableDef,
        new: &TableDef,
        own: &[ForeignKey],
        refs: &[(u32, ForeignKey)],
        renames: &[(String, String)],
    ) -> R<()> {
        let catalog = &self.engine.catalog;
        if !catalog.has_foreign_keys() {
            return Ok(());
        }
        let (before, after) = ((old, renames), new);
        for fk in own {
            keeps(before, after, fk, &fk.columns, None)?;
        }
        for (child, fk) in refs {
            let name = catalog
                .table_by_id(*child)
                .map(|c| c.def().name.clone())
                .unwrap_or_default();
            keeps(before, after, fk, &fk.parent_columns, Some(&name))?;
        }
        // A table that references itself is its own parent too.
        for fk in own
            .iter()
            .filter(|f| f.references(&old.database, &old.name))
        {
            keeps(before, after, fk, &fk.parent_columns, Some(&old.name))?;
        }
        Ok(())
    }

    /// The constraints that reference table `def` from other tables.
    pub(super) fn referencing_others(&self, def: &TableDef, id: u32) -> Vec<(u32, ForeignKey)> {
        let mut refs = self.engine.catalog.referencing(&def.database, &def.name);
        refs.retain(|(child, _)| *child != id);
        refs
    }
}

/// An ALTER's column renames, in clause order.
fn column_renames(actions: &[AlterAction]) -> Vec<(String, String)> {
    actions
        .iter()
        .filter_map(|a| match a {
            AlterAction::RenameColumn { from, to } => Some((from.clone(), to.clone())),
            AlterAction::ChangeColumn { old, column, .. } => {
                Some((old.clone(), column.name.clone()))
            }
            _ => None,
        })
        .filter(|(a, b)| a != b)
        .collect()
}

/// Renames `columns` as the renames do, in order; whether any changed.
fn follow(columns: &mut [String], renames: &[(String, String)]) -> bool {
    let mut changed = false;
    for c in columns.iter_mut() {
        for (from, to) in renames {
            if c.eq_ignore_ascii_case(from) {
                *c = to.clone();
                changed = true;
            }
        }
    }
    changed
}

/// A column's name before the renames.
fn before_renames<'a>(name: &'a str, renames: &'a [(String, String)]) -> &'a str {
    renames.iter().rev().fold(
        name,
        |n, (from, to)| if n.eq_ignore_ascii_case(to) { from } else { n },
    )
}

/// `fk`'s `columns` of `old` are still in `new`, of compatible types,
/// still leading an index. `child`: the child's name when `old` is the
/// parent.
fn keeps(
    (old, renames): (&TableDef, &[(String, String)]),
    new: &TableDef,
    fk: &ForeignKey,
    columns: &[String],
    child: Option<&str>,
) -> R<()> {
    for (i, c) in columns.iter().enumerate() {
        let Some(at) = new.column_index(c) else {
            let (code, tail) = match child {
                None => (Code::FkColumnCannotDrop, String::new()),
                Some(t) => (Code::FkColumnCannotDropChild, format!(" of table '{t}'")),
            };
            return Err(Error::new(
                code,
                format!(
                    "Cannot drop column '{c}': needed in a foreign key constraint '{}'{tail}",
                    fk.name
                ),
            ));
        };
        let set_null = [fk.on_delete, fk.on_update].contains(&FkAction::SetNull);
        if child.is_none() && set_null && !new.columns[at].nullable {
            return Err(Error::new(
                Code::FkColumnNotNull,
                format!(
                    "Column '{c}' cannot be NOT NULL: needed in a foreign key constraint '{}' SET NULL",
                    fk.name
                ),
            ));
        }
        let was = old
            .column_index(before_renames(c, renames))
            .map(|i| old.columns[i].data_type);
        if was.is_some_and(|w| !compatible(w, new.columns[at].data_type)) {
            return Err(incompatible(
                &fk.columns[i],
                &fk.parent_columns[i],
                &fk.name,
            ));
        }
    }
    if find_index(new, columns).is_none() {
        let was: Vec<String> = columns
            .iter()
            .map(|c| before_renames(c, renames).to_string())
            .collect();
        let gone = find_index(old, &was).map_or("PRIMARY", |i| old.indexes[i].name.as_str());
        return Err(Error::new(
            Code::DropIndexFk,
            format!("Cannot drop index '{gone}': needed in a foreign key constraint"),
        ));
    }
    Ok(())
}

/// The constraints around a table once an ALTER's renames are followed.
pub(super) struct Renamed {
    /// The table's own.
    pub own: Vec<ForeignKey>,
    /// Other children whose lists change: their whole new lists.
    pub children: Vec<(u32, Vec<ForeignKey>)>,
    /// Other tables' constraints that reference this one (renamed).
    pub refs: Vec<(u32, ForeignKey)>,
    /// Whether any constraint names a renamed column.
    pub changed: bool,
    pub renames: Vec<(String, String)>,
}

/// An ALTER's FOREIGN KEY clauses planned.
pub(super) struct FkChange {
    /// Every constraint the table keeps or gains.
    pub all: Vec<ForeignKey>,
    /// The ones it gains.
    pub added: Vec<ForeignKey>,
    /// Indexes the gained ones need on the table.
    pub indexes: Vec<lockstep_tables::IndexDef>,
}

pub(super) fn is_fk_action(a: &AlterAction) -> bool {
    matches!(
        a,
        AlterAction::AddForeignKey(_) | AlterAction::DropForeignKey { .. }
    )
}

/// A table's foreign keys as information_schema rows.
pub(crate) struct InfoRows {
    /// KEY_COLUMN_USAGE: one per column, with the REFERENCED_* columns.
    pub usage: Vec<Vec<Value>>,
    /// TABLE_CONSTRAINTS: one per constraint.
    pub kinds: Vec<Vec<Value>>,
    /// REFERENTIAL_CONSTRAINTS: one per constraint.
    pub referential: Vec<Vec<Value>>,
}

pub(crate) fn info_rows(engine: &Engine, def: &TableDef, fks: &[ForeignKey]) -> InfoRows {
    let s = |x: &str| Value::str(x);
    let db = def.database.as_str();
    let mut out = InfoRows {
        usage: Vec::new(),
        kinds: Vec::new(),
        referential: Vec::new(),
    };
    for fk in fks {
        out.kinds.push(vec![
            s("def"),
            s(db),
            s(&fk.name),
            s(db),
            s(&def.name),
            s("FOREIGN KEY"),
            s("YES"),
        ]);
        for (i, (c, pc)) in fk.columns.iter().zip(&fk.parent_columns).enumerate() {
            let pos = Value::UInt(i as u64 + 1);
            out.usage.push(vec![
                s("def"),
                s(db),
                s(&fk.name),
                s("def"),
                s(db),
                s(&def.name),
                s(c),
                pos.clone(),
                pos,
                s(&fk.parent_db),
                s(&fk.parent_table),
                s(pc),
            ]);
        }
        // The parent's index that serves the constraint (NULL when the
        // parent is missing, FOREIGN_KEY_CHECKS=0).
        let unique = engine
            .catalog
            .table(&fk.parent_db, &fk.parent_table)
            .and_then(|p| {
                let pdef = p.def();
                find_index(&pdef, &fk.parent_columns).map(|i| s(&pdef.indexes[i].name))
            })
            .unwrap_or(Value::Null);
        out.referential.push(vec![
            s("def"),
            s(db),
            s(&fk.name),
            s("def"),
            s(&fk.parent_db),
            unique,
            s("NONE"),
            s(fk.on_update.name()),
            s(fk.on_delete.name()),
            s(&def.name),
            s(&fk.parent_table),
        ]);
    }
    out
}
