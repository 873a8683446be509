//! CHECK constraints in DDL as a session runs it (MySQL 8.0.16+): CREATE
//! TABLE, ALTER TABLE ADD/DROP CHECK, ALTER CHECK [NOT] ENFORCED, DROP
//! CONSTRAINT (no rebuild; the rows there checked), and the constraints a
//! rebuild keeps: a column a CHECK uses is not dropped or renamed (3959),
//! and the rebuilt rows must pass.

use super::{Session, R};
use crate::exec::Exec;
use crate::parser::{AlterAction, CheckSpec, Expr};
use crate::plan::check::{bind, bind_all, generated_name, parse, validate, violated};
use lockstep_engine::{Error as EngineError, Isolation};
use lockstep_tables::{CheckConstraint, Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

pub(super) fn is_check_action(a: &AlterAction) -> bool {
    matches!(
        a,
        AlterAction::AddCheck(_) | AlterAction::DropCheck { .. } | AlterAction::AlterCheck { .. }
    )
}

fn not_found(name: &str) -> Error {
    Error::new(
        Code::CheckConstraintNotFound,
        format!("Check constraint '{name}' is not found in the table."),
    )
}

/// The columns an expression names.
fn columns_of(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    crate::parser::visit_expr(e, &mut |x| {
        if let Expr::Column { name, .. } = x {
            out.push(name.clone());
        }
    });
    out
}

impl Session {
    /// Whether a CHECK of another table of `db` has the name (names are
    /// unique in a database, as in MySQL).
    fn check_name_taken(&self, db: &str, name: &str, own: Option<u32>) -> bool {
        let catalog = &self.engine.catalog;
        catalog.all_checks().iter().any(|(id, checks)| {
            Some(*id) != own
                && catalog
                    .table_by_id(*id)
                    .is_some_and(|t| t.def().database == db)
                && checks.iter().any(|c| c.name.eq_ignore_ascii_case(name))
        })
    }

    /// `have` and then `specs`, named and validated for a table defined
    /// as `def` (whose id is `own` when it exists).
    pub(super) fn plan_checks(
        &self,
        def: &TableDef,
        own: Option<u32>,
        mut have: Vec<CheckConstraint>,
        specs: &[CheckSpec],
    ) -> R<Vec<CheckConstraint>> {
        for spec in specs {
            let name = match &spec.name {
                Some(n) => n.clone(),
                None => generated_name(&def.name, &have),
            };
            let dup = have.iter().any(|c| c.name.eq_ignore_ascii_case(&name))
                || self.check_name_taken(&def.database, &name, own);
            if dup {
                return Err(Error::new(
                    Code::CheckConstraintDupName,
                    format!("Duplicate check constraint name '{name}'."),
                ));
            }
            validate(&spec.expr, &name, def, spec.column.as_deref())?;
            bind(&self.engine.catalog, def, &spec.expr)?;
            have.push(CheckConstraint {
                name,
                expr: spec.text.clone(),
                enforced: spec.enforced,
            });
        }
        Ok(have)
    }

    /// The first of `checks` (its enforced ones) a row of `t` fails: 3819.
    pub(super) fn check_rows(
        &mut self,
        t: &Arc<Table>,
        def: &TableDef,
        checks: &[CheckConstraint],
    ) -> R<()> {
        let bound = bind_all(&self.engine.catalog, def, checks)?;
        if bound.is_empty() {
            return Ok(());
        }
        let engine = self.engine.clone();
        let mut txn = engine.begin(Isolation::ReadCommitted);
        let mut exec = Exec::new(&engine, &mut txn, &mut self.ctx, &[]);
        let found = exec.check_violated(t, &bound);
        drop(exec);
        engine.rollback(&mut txn);
        let found = found.map_err(|e| match e {
            EngineError::Sql(e) => e,
            EngineError::LockWait(_) => Error::internal("lock wait in a consistent read"),
        })?;
        match found {
            Some(name) => Err(violated(&name)),
            None => Ok(()),
        }
    }

    /// DROP CONSTRAINT name as the clause it means: a CHECK, else a
    /// foreign key, else a unique key of that name (3940 when none).
    pub(super) fn resolve_drop_constraint(
        &self,
        t: &Table,
        actions: &[AlterAction],
    ) -> R<Vec<AlterAction>> {
        let checks = self.engine.catalog.checks(t.id);
        let fks = self.engine.catalog.foreign_keys(t.id);
        let def = t.def();
        let mut out = Vec::with_capacity(actions.len());
        for a in actions {
            let AlterAction::DropConstraint { name } = a else {
                out.push(a.clone());
                continue;
            };
            let same = |n: &str| n.eq_ignore_ascii_case(name);
            let name = name.clone();
            out.push(if checks.iter().any(|c| same(&c.name)) {
                AlterAction::DropCheck { name }
            } else if fks.iter().any(|f| same(&f.name)) {
                AlterAction::DropForeignKey { name }
            } else if def
                .indexes
                .iter()
                .skip(1)
                .any(|i| i.unique && same(&i.name))
            {
                AlterAction::DropIndex { name }
            } else {
                return Err(Error::new(
                    Code::ConstraintNotFound,
                    format!("Constraint '{name}' does not exist."),
                ));
            });
        }
        Ok(out)
    }

    /// The CHECKs of table `t` after the CHECK clauses of an ALTER that
    /// makes `old` into `new`; None when it has none before or after.
    pub(super) fn checks_after(
        &self,
        t: &Table,
        old: &TableDef,
        new: &TableDef,
        actions: &[AlterAction],
    ) -> R<Option<Vec<CheckConstraint>>> {
        let mut kept = self.engine.catalog.checks(t.id).to_vec();
        let mut added = Vec::new();
        for a in actions {
            match a {
                AlterAction::AddCheck(spec) => added.push(spec.clone()),
                AlterAction::DropCheck { name } => {
                    let at = kept.iter().position(|c| c.name.eq_ignore_ascii_case(name));
                    kept.remove(at.ok_or_else(|| not_found(name))?);
                }
                AlterAction::AlterCheck { name, enforced } => {
                    let c = kept.iter_mut().find(|c| c.name.eq_ignore_ascii_case(name));
                    c.ok_or_else(|| not_found(name))?.enforced = *enforced;
                }
                _ => {}
            }
        }
        if kept.is_empty() && added.is_empty() {
            return Ok(None);
        }
        check_columns_kept(&kept, old, new, actions)?;
        self.plan_checks(new, Some(t.id), kept, &added).map(Some)
    }

    /// ALTER TABLE whose clauses are all CHECK ones: true when it ran (no
    /// rebuild; the rows there checked against what becomes enforced).
    pub(super) async fn alter_checks(
        &mut self,
        t: &Arc<Table>,
        actions: &[AlterAction],
    ) -> R<bool> {
        if actions.is_empty() || !actions.iter().all(is_check_action) {
            return Ok(false);
        }
        let def = t.def();
        let before = self.engine.catalog.checks(t.id);
        let after = self
            .checks_after(t, &def, &def, actions)?
            .unwrap_or_default();
        let newly: Vec<CheckConstraint> = after
            .iter()
            .filter(|c| c.enforced && !before.iter().any(|b| b == *c))
            .cloned()
            .collect();
        self.check_rows(t, &def, &newly)?;
        self.engine.set_checks(t, after).await?;
        Ok(true)
    }
}

/// 3959 when an ALTER drops or renames a column one of `checks` uses.
fn check_columns_kept(
    checks: &[CheckConstraint],
    old: &TableDef,
    new: &TableDef,
    actions: &[AlterAction],
) -> R<()> {
    for c in checks {
        for col in columns_of(&parse(&c.expr)?) {
            let renamed = actions.iter().any(|a| match a {
                AlterAction::RenameColumn { from, to } => {
                    from.eq_ignore_ascii_case(&col) && !to.eq_ignore_ascii_case(&col)
                }
                AlterAction::ChangeColumn { old: o, column, .. } => {
                    o.eq_ignore_ascii_case(&col) && !column.name.eq_ignore_ascii_case(&col)
                }
                _ => false,
            });
            let gone = old.column_index(&col).is_some() && new.column_index(&col).is_none();
            if renamed || gone {
                return Err(Error::new(
                    Code::DependentByCheckConstraint,
                    format!(
                        "Check constraint '{}' uses column '{col}', hence column cannot be dropped or renamed.",
                        c.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// information_schema's CHECK_CLAUSE: the expression as MySQL prints it
/// (`(`a` > 0)`), SHOW CREATE TABLE wraps it in one more pair.
pub(crate) fn check_clause(text: &str) -> String {
    crate::plan::check::printed(text).unwrap_or_else(|| format!("({text})"))
}

/// SHOW CREATE TABLE's text with the table's CHECKs after the rest.
pub(crate) fn add_to_create(text: String, checks: &[CheckConstraint]) -> String {
    let Some(at) = text.rfind("\n) ENGINE=").filter(|_| !checks.is_empty()) else {
        return text;
    };
    let mut out = text[..at].to_string();
    for c in checks {
        let not = if c.enforced {
            ""
        } else {
            " /*!80016 NOT ENFORCED */"
        };
        let name = crate::plan::ddl::quote_ident(&c.name);
        let clause = check_clause(&c.expr);
        out.push_str(&format!(",\n  CONSTRAINT {name} CHECK ({clause}){not}"));
    }
    out.push_str(&text[at..]);
    out
}

impl Session {
    /// CREATE TABLE ... LIKE: the source's CHECKs, to be named anew (names
    /// are unique in a database).
    pub(super) fn like_checks(&self, ct: &crate::parser::CreateTable) -> R<Vec<CheckSpec>> {
        let Some(src) = &ct.like else {
            return Ok(Vec::new());
        };
        let t = self.binder().table(src)?;
        let mut out = Vec::new();
        for c in self.engine.catalog.checks(t.id).iter() {
            out.push(CheckSpec {
                name: None,
                expr: parse(&c.expr)?,
                text: c.expr.clone(),
                enforced: c.enforced,
                column: None,
            });
        }
        Ok(out)
    }
}

impl Session {
    /// An ALTER that only renames the table and changes its CHECKs: the
    /// new list, once the rows there pass what becomes enforced.
    pub(super) async fn set_checks_after_rename(
        &mut self,
        t: &Arc<Table>,
        checks: Option<Vec<CheckConstraint>>,
    ) -> R<()> {
        let before = self.engine.catalog.checks(t.id);
        let Some(after) = checks.filter(|c| c[..] != before[..]) else {
            return Ok(());
        };
        self.check_rows(t, &t.def(), &after)?;
        self.engine.set_checks(t, after).await
    }
}
