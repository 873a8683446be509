//! ALTER TABLE and RENAME TABLE as a session runs them: the table locked
//! (shared-upgradable, see `online_alter`), the new definition planned
//! (`plan::alter`), then one engine change (a rename where only the name
//! moves, a rebuild otherwise: online, or under the exclusive lock).

use super::checks::is_check_action;
use super::foreign_keys::{is_fk_action, Renamed};
use super::generated::GENERATED_LOCK;
use super::online_alter::{choose, rebuild_change, Change, Mode};
use super::{until_killed, Session, R};
use crate::parser::{AlterAction, DdlOptions, ObjectName};
use crate::plan::alter::{alter_def, Altered, StatementNow};
use lockstep_binlog::ColumnSource;
use lockstep_engine::{OnlineAlter, RebuildLists, Rename, UpgradableLock};
use lockstep_tables::{CheckConstraint, GeneratedColumn, Table, TableComments, TableDef};
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

/// An ALTER TABLE planned under the table's lock: the new definition and
/// what the catalog keeps beside it.
struct AlterPlan {
    old: Arc<TableDef>,
    altered: Altered,
    comments: TableComments,
    /// The table's (database, name) after the change.
    named: (String, String),
    checks: Option<Vec<CheckConstraint>>,
    generated: Option<Vec<GeneratedColumn>>,
    /// Generated columns must be computed while copying.
    computes: bool,
    renamed: Renamed,
}

/// Clauses that change only CHECK constraints, or only foreign keys.
fn only_constraints(actions: &[AlterAction]) -> bool {
    !actions.is_empty() && (actions.iter().all(is_check_action) || actions.iter().all(is_fk_action))
}

impl Session {
    /// ALTER TABLE: planned under the table's shared-upgradable lock; a
    /// rebuild that can run online copies under it and takes the lock
    /// exclusive only for its switch, anything else upgrades first.
    pub(super) async fn alter_table(
        &mut self,
        name: &ObjectName,
        actions: &[AlterAction],
        online: &DdlOptions,
    ) -> R<()> {
        if self.alter_auto_increment(name, actions, online).await? {
            return Ok(());
        }
        let (t, mut lock) = self.table_for_online_ddl(name).await?;
        let actions = &self.resolve_drop_constraint(&t, actions)?;
        if only_constraints(actions) {
            return self.alter_constraints(&t, &mut lock, actions, online).await;
        }
        let (fk_actions, others): (Vec<AlterAction>, Vec<AlterAction>) = actions
            .iter()
            .filter(|a| !is_check_action(a))
            .cloned()
            .partition(is_fk_action);
        let plan = self.plan_alter(&t, actions, &others)?;
        if !fk_actions.is_empty() || plan.renamed.changed {
            return self
                .alter_with_foreign_keys(&t, &mut lock, plan, &fk_actions, online)
                .await;
        }
        let (old, def, renamed) = (&plan.old, &plan.altered.def, &plan.renamed);
        self.check_alter(old, def, &renamed.own, &renamed.refs, &[])?;
        let moved = def.database != old.database || def.name != old.name;
        if moved {
            self.check_free(&def.database, &def.name)?;
        }
        if plan.altered.rename_only && plan.generated.is_none() {
            return self.alter_names(&t, &mut lock, plan, moved, online).await;
        }
        self.rebuild_altered(&t, lock, plan, online).await
    }

    /// Only CHECK constraints or only foreign keys change: no rebuild.
    async fn alter_constraints(
        &mut self,
        t: &Arc<Table>,
        lock: &mut UpgradableLock,
        actions: &[AlterAction],
        online: &DdlOptions,
    ) -> R<()> {
        let adds = actions
            .iter()
            .any(|a| matches!(a, AlterAction::AddCheck(_) | AlterAction::AddForeignKey(_)));
        let change = if adds {
            Change::Validate
        } else {
            Change::Metadata
        };
        choose(online, change)?;
        self.upgrade(lock).await?;
        self.alter_checks(t, actions).await?;
        self.alter_foreign_keys(t, actions).await?;
        Ok(())
    }

    /// The new definition of `t` from `others` (the clauses but CHECK and
    /// foreign key ones), and what the catalog keeps beside it after all
    /// of `actions`.
    fn plan_alter(
        &mut self,
        t: &Arc<Table>,
        actions: &[AlterAction],
        others: &[AlterAction],
    ) -> R<AlterPlan> {
        let old = t.def();
        let current = self.ctx.database.clone().unwrap_or(old.database.clone());
        let now = StatementNow {
            utc: self.ctx.clock(),
            offset: self.ctx.tz_offset,
        };
        let mut altered = alter_def(&old, others, &current, now)?;
        defaults_to_utc(&mut altered, others, self.ctx.tz_offset);
        shift_zones(&old, &mut altered, self.ctx.tz_offset);
        let comments = self.alter_comments(t, actions, &altered)?;
        let named = (altered.def.database.clone(), altered.def.name.clone());
        let checks = self.checks_after(t, &old, &altered.def, actions)?;
        let (old_new, sources) = ((&*old, &altered.def), &altered.sources);
        let (generated, computes) = self.generated_after(t, old_new, sources, actions)?;
        let renamed = self.fk_after_renames(&old, t.id, actions);
        Ok(AlterPlan {
            old,
            altered,
            comments,
            named,
            checks,
            generated,
            computes,
            renamed,
        })
    }

    /// A change that adds or drops foreign keys, or renames a column one
    /// names: under the exclusive lock, constraints planned on the new
    /// layout; the rebuild builds the indexes they need and the log
    /// records all at once.
    async fn alter_with_foreign_keys(
        &mut self,
        t: &Arc<Table>,
        lock: &mut UpgradableLock,
        plan: AlterPlan,
        fk_actions: &[AlterAction],
        online: &DdlOptions,
    ) -> R<()> {
        let AlterPlan {
            old,
            mut altered,
            comments,
            named,
            checks,
            generated,
            renamed,
            ..
        } = plan;
        choose(online, Change::Validate)?;
        self.upgrade(lock).await?;
        let change = self.fk_change(&altered.def, renamed.own.clone(), fk_actions)?;
        altered.def.indexes.extend(change.indexes);
        let (own, refs) = (&change.all, &renamed.refs);
        self.check_alter(&old, &altered.def, own, refs, &renamed.renames)?;
        let engine = self.engine.clone();
        let own_checks = checks.clone().unwrap_or_default();
        let mut check = |built: &Arc<Table>| {
            self.check_rebuilt(built, &change.added)?;
            self.check_rows(built, &built.def(), &own_checks)
        };
        let fks = lockstep_engine::foreign::AlterForeignKeys {
            own: change.all.clone(),
            children: renamed.children,
        };
        let (def, sources) = (altered.def, altered.sources);
        let lists = RebuildLists { checks, generated };
        engine
            .alter_table_with(t, def, sources, Some(fks), lists, &mut check)
            .await?;
        self.store_comments(&named.0, &named.1, comments).await
    }

    /// Only names change (the table's, or its keys' and columns' without
    /// a copy): a rename where the table moves, and the catalog's lists.
    async fn alter_names(
        &mut self,
        t: &Arc<Table>,
        lock: &mut UpgradableLock,
        plan: AlterPlan,
        moved: bool,
        online: &DdlOptions,
    ) -> R<()> {
        choose(online, Change::Metadata)?;
        self.upgrade(lock).await?;
        let (db, name) = plan.named;
        if moved {
            let rename = Rename {
                table: t.clone(),
                database: db.clone(),
                name: name.clone(),
            };
            self.engine.rename_tables(&[rename]).await?;
        }
        self.set_checks_after_rename(t, plan.checks).await?;
        self.store_comments(&db, &name, plan.comments).await
    }

    /// A change that copies the rows into the new layout: online where
    /// it can be (the lock exclusive only for the switch), else under the
    /// exclusive lock.
    async fn rebuild_altered(
        &mut self,
        t: &Arc<Table>,
        mut lock: UpgradableLock,
        plan: AlterPlan,
        online: &DdlOptions,
    ) -> R<()> {
        let (altered, checks, generated) = (plan.altered, plan.checks, plan.generated);
        let (named, comments) = (plan.named, plan.comments);
        let adds_auto = altered.def.columns.iter().any(|c| c.auto_increment)
            && !plan.old.columns.iter().any(|c| c.auto_increment);
        let change = match plan.computes {
            true => Change::Ordered(GENERATED_LOCK),
            false => rebuild_change(&altered.sources, adds_auto),
        };
        let mode = choose(online, change)?;
        if mode == Mode::Exclusive {
            self.upgrade(&mut lock).await?;
        }
        let (limit, timeout) = (self.capture_limit(), self.ddl_timeout());
        let process = self.process.clone();
        let engine = self.engine.clone();
        let own_checks = checks.clone().unwrap_or_default();
        let check = |built: &Arc<Table>| self.check_rows(built, &built.def(), &own_checks);
        if mode == Mode::Online {
            let how = OnlineAlter {
                sources: altered.sources,
                checks,
                capture_limit: limit,
                timeout,
            };
            let run = engine.alter_table_online(t, altered.def, how, &mut lock, check);
            until_killed(&process, run).await?;
            return self.store_comments(&named.0, &named.1, comments).await;
        }
        let lists = RebuildLists { checks, generated };
        engine
            .alter_table_with(t, altered.def, altered.sources, None, lists, check)
            .await?;
        self.store_comments(&named.0, &named.1, comments).await
    }

    /// 1049 when the database is missing, 1050 when the name is taken.
    fn check_free(&self, db: &str, name: &str) -> R<()> {
        if !self.engine.catalog.database_exists(db) {
            return Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")));
        }
        let taken = self.engine.catalog.table(db, name).is_some()
            || self.engine.catalog.view(db, name).is_some();
        if taken {
            return Err(table_exists(name));
        }
        Ok(())
    }

    /// RENAME TABLE a TO b [, c TO d]: all or nothing, each pair seeing
    /// the names the pairs before it left (a TO tmp, b TO a, tmp TO b).
    pub(super) async fn rename_tables(&mut self, pairs: &[(ObjectName, ObjectName)]) -> R<()> {
        loop {
            let renames = self.plan_renames(pairs)?;
            let tables: Vec<Arc<Table>> = renames.iter().map(|r| r.table.clone()).collect();
            let _ddl = self.lock_for_ddl(&tables).await?;
            // Locked: the names must still lead to the same tables.
            let again = self.plan_renames(pairs)?;
            let same = again
                .iter()
                .zip(&renames)
                .all(|(a, b)| Arc::ptr_eq(&a.table, &b.table));
            if same {
                return self.engine.rename_tables(&renames).await;
            }
        }
    }

    /// One rename per table, to its last name in the statement.
    fn plan_renames(&self, pairs: &[(ObjectName, ObjectName)]) -> R<Vec<Rename>> {
        let qualify = |n: &ObjectName| -> R<(String, String)> {
            let db = n.database.clone().or_else(|| self.ctx.database.clone());
            Ok((db.ok_or_else(Error::no_db)?, n.name.clone()))
        };
        // The names as the pairs so far left them: (db, name) -> table.
        let mut now: Vec<Named> = Vec::new();
        let lookup =
            |now: &[Named], k: &(String, String)| match now.iter().rev().find(|(n, _)| n == k) {
                Some((_, t)) => t.clone(),
                None => self.engine.catalog.table(&k.0, &k.1),
            };
        for (from, to) in pairs {
            let (f, t) = (qualify(from)?, qualify(to)?);
            let table = lookup(&now, &f).ok_or_else(|| {
                Error::new(
                    Code::NoSuchTable,
                    format!("Table '{}.{}' doesn't exist", f.0, f.1),
                )
            })?;
            if lookup(&now, &t).is_some() || self.engine.catalog.view(&t.0, &t.1).is_some() {
                return Err(table_exists(&t.1));
            }
            if !self.engine.catalog.database_exists(&t.0) {
                return Err(Error::new(
                    Code::BadDb,
                    format!("Unknown database '{}'", t.0),
                ));
            }
            now.push((f, None));
            now.push((t, Some(table)));
        }
        let mut renames: Vec<Rename> = Vec::new();
        for ((db, name), table) in now {
            let Some(table) = table else { continue };
            renames.retain(|r| !Arc::ptr_eq(&r.table, &table));
            renames.push(Rename {
                table,
                database: db,
                name,
            });
        }
        Ok(renames)
    }
}

/// A (database, name) and the table it leads to mid-statement (None:
/// renamed away).
type Named = ((String, String), Option<Arc<Table>>);

fn table_exists(name: &str) -> Error {
    Error::new(Code::TableExists, format!("Table '{name}' already exists"))
}

/// The constant defaults an ALTER sets (ADD, MODIFY / CHANGE, SET
/// DEFAULT), read in the session zone: kept in UTC (time_zone.rs), and
/// so is the value an added column's existing rows get.
fn defaults_to_utc(
    altered: &mut crate::plan::alter::Altered,
    actions: &[AlterAction],
    offset: i64,
) {
    let mut names: Vec<String> = Vec::new();
    for a in actions {
        let name = match a {
            AlterAction::AddColumn { column, .. } | AlterAction::ChangeColumn { column, .. } => {
                &column.name
            }
            AlterAction::SetDefault { column, .. } => column,
            _ => continue,
        };
        // Converted once, however many clauses name the column.
        if !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            names.push(name.clone());
        }
    }
    let sources = altered.sources.iter_mut();
    for (c, source) in altered.def.columns.iter_mut().zip(sources) {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&c.name)) {
            continue;
        }
        let given = c.default.clone();
        super::time_zone::default_to_utc(c, offset);
        match source {
            ColumnSource::Value(v) if given.is_some() && *v == given.unwrap_or_default() => {
                *v = c.default.clone().unwrap_or_default();
            }
            _ => {}
        }
    }
}

/// A TIMESTAMP column (UTC in rows) becoming a DATETIME takes its values
/// in the session's zone, and a DATETIME becoming a TIMESTAMP is read in
/// it, as MySQL converts them.
fn shift_zones(
    old: &lockstep_tables::TableDef,
    altered: &mut crate::plan::alter::Altered,
    offset: i64,
) {
    use lockstep_types::DataType::{DateTime, Timestamp};
    if offset == 0 {
        return;
    }
    for (c, source) in altered.def.columns.iter().zip(altered.sources.iter_mut()) {
        let ColumnSource::Column(i) = *source else {
            continue;
        };
        let seconds = match (old.columns[i as usize].data_type, c.data_type) {
            (Timestamp { .. }, DateTime { .. }) => offset,
            (DateTime { .. }, Timestamp { .. }) => -offset,
            _ => continue,
        };
        *source = ColumnSource::Shifted { column: i, seconds };
    }
}
