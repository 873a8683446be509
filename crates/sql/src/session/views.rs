//! CREATE/ALTER/DROP VIEW, SHOW CREATE VIEW and DESCRIBE of a view as a
//! session runs them, and the definer's privilege check for the tables a
//! DEFINER view reads.

use super::{ok, rows, Session, R};
use crate::parser::{CreateView, Expr, ObjectName, ShowFilter, ViewCheck};
use crate::plan::bind::{view_invalid, DefinerRead};
use lockstep_accounts::{Accounts, Privs};
use lockstep_engine::views::ViewMode;
use lockstep_engine::{CheckOption, ViewDef};
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::collections::HashSet;
use std::sync::Arc;

impl Session {
    fn object_db(&self, name: &ObjectName) -> R<String> {
        match &name.database {
            Some(d) => Ok(d.clone()),
            None => self.ctx.database.clone().ok_or_else(Error::no_db),
        }
    }

    pub(super) async fn create_view(&mut self, cv: &CreateView) -> R<Response> {
        let db = self.object_db(&cv.name)?;
        if super::is_system_db(&db) {
            return Err(self.grants.database_denied(&db));
        }
        self.check_definer_clause(&cv.definer)?;
        self.commit().await?;
        let definer = match &cv.definer {
            Some(u) => (u.user.clone(), u.host.clone()),
            None => (
                self.grants.account.user.clone(),
                self.grants.account.host.clone(),
            ),
        };
        let view = ViewDef {
            database: db.clone(),
            name: cv.name.name.clone(),
            columns: cv.columns.clone(),
            query: cv.query_text.clone(),
            algorithm: cv.algorithm.clone().unwrap_or_else(|| "UNDEFINED".into()),
            definer,
            security_definer: cv.security_definer.unwrap_or(true),
            check_option: match cv.check_option {
                ViewCheck::None => CheckOption::None,
                ViewCheck::Cascaded => CheckOption::Cascaded,
                ViewCheck::Local => CheckOption::Local,
            },
        };
        self.check_view_definition(&view, cv)?;
        let mode = if cv.alter {
            ViewMode::Alter
        } else if cv.or_replace {
            ViewMode::Replace
        } else {
            ViewMode::Create
        };
        self.engine.put_view(view, mode).await?;
        Ok(ok(0))
    }

    /// The definition binds now (its tables and columns exist), its
    /// column names are distinct, and the creator may read what it reads.
    fn check_view_definition(&mut self, view: &ViewDef, cv: &CreateView) -> R<()> {
        if cv.query.lock.is_some()
            || !cv.query.with.is_empty() && cv.query.with.iter().any(|c| c.name == view.name)
        {
            return Err(Error::unsupported("this view definition"));
        }
        let stmt = crate::parser::Statement::Select(Box::new(cv.query.clone()));
        let mut variable = false;
        crate::parser::visit_statement(&stmt, &mut |e| {
            variable |= matches!(
                e,
                Expr::UserVar(_) | Expr::Param(_) | Expr::SystemVar { .. }
            );
        });
        if variable {
            return Err(Error::new(
                Code::ViewSelectVariable,
                "View's SELECT contains a variable or parameter",
            ));
        }
        let mut b = self.binder();
        b.database = Some(view.database.clone());
        let plan = b.bind_query(&cv.query)?;
        if let Some(t) = b.reads.iter().find(|t| t.temporary) {
            return Err(Error::new(
                Code::ViewSelectTmptable,
                format!(
                    "View's SELECT refers to a temporary table '{}'",
                    t.def().name
                ),
            ));
        }
        self.grants.check_reads(&b.reads)?;
        check_definer_reads(&self.engine.accounts, &self.grants, &b.definer_reads)?;
        let names: Vec<String> = if view.columns.is_empty() {
            plan.columns.iter().map(|c| c.name.clone()).collect()
        } else if view.columns.len() != plan.columns.len() {
            return Err(Error::new(
                Code::ViewWrongList,
                "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
            ));
        } else {
            view.columns.clone()
        };
        let mut seen = HashSet::new();
        for n in &names {
            if !seen.insert(n.to_lowercase()) {
                return Err(Error::new(
                    Code::DupFieldName,
                    format!("Duplicate column name '{n}'"),
                ));
            }
        }
        Ok(())
    }

    pub(super) async fn drop_views(
        &mut self,
        views: &[ObjectName],
        if_exists: bool,
    ) -> R<Response> {
        self.commit().await?;
        let mut missing = Vec::new();
        let mut found = Vec::new();
        for v in views {
            let db = self.object_db(v)?;
            if self.engine.catalog.table(&db, &v.name).is_some() {
                return Err(Error::new(
                    Code::WrongObject,
                    format!("'{db}.{}' is not VIEW", v.name),
                ));
            }
            if self.engine.catalog.view(&db, &v.name).is_some() {
                found.push((db, v.name.clone()));
            } else {
                missing.push(format!("{db}.{}", v.name));
            }
        }
        if !missing.is_empty() && !if_exists {
            return Err(Error::new(
                Code::BadTable,
                format!("Unknown table '{}'", missing.join(",")),
            ));
        }
        for (db, name) in found {
            self.engine.drop_view(&db, &name).await?;
        }
        for name in missing {
            let note = (Code::BadTable.number(), format!("Unknown table '{name}'"));
            self.ctx.warnings.push(note.into());
        }
        Ok(ok(0))
    }

    /// The stored view `name` names (1146 when none, 1347 for a table).
    pub(super) fn view_named(&self, name: &ObjectName) -> R<Arc<ViewDef>> {
        let db = self.object_db(name)?;
        if let Some(v) = self.engine.catalog.view(&db, &name.name) {
            return Ok(v);
        }
        if self.engine.catalog.table(&db, &name.name).is_some() {
            return Err(Error::new(
                Code::WrongObject,
                format!("'{db}.{}' is not VIEW", name.name),
            ));
        }
        Err(Error::no_such_table(&db, &name.name))
    }

    /// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view).
    pub(super) fn show_create_view(&self, view: &ViewDef) -> R<Response> {
        Ok(rows(
            &[
                "View",
                "Create View",
                "character_set_client",
                "collation_connection",
            ],
            vec![vec![
                Value::str(&view.name),
                Value::str(&view.create_statement()),
                Value::str("utf8mb4"),
                Value::str("utf8mb4_0900_ai_ci"),
            ]],
        ))
    }

    /// DESCRIBE / SHOW COLUMNS of a view: Field, Type, Null, Key,
    /// Default, Extra of each column its SELECT yields.
    pub(super) fn describe_view(
        &self,
        view: &Arc<ViewDef>,
        full: bool,
        like: &Option<ShowFilter>,
    ) -> R<Response> {
        let columns = self.binder().view_columns(view)?;
        let r = columns
            .iter()
            .filter(|c| match like {
                Some(ShowFilter::Like(p)) => super::like_ci(&c.name, p),
                _ => true,
            })
            .map(|c| {
                let col = (c.name.as_str(), c.data_type, c.nullable);
                super::column_row(col, "", Value::Null, "", full)
            })
            .collect();
        Ok(super::columns_result(full, r))
    }
}

/// What DEFINER views read needs SELECT in their definers' grants (1449
/// for a definer that does not exist, 1356 for one lacking rights). The
/// session's own account stands for itself even when it is not stored.
pub(crate) fn check_definer_reads(
    accounts: &Accounts,
    grants: &super::privileges::Grants,
    reads: &[DefinerRead],
) -> R<()> {
    for r in reads {
        if super::is_system_db(&r.database) {
            continue;
        }
        let (user, host) = (&r.definer.0, &r.definer.1);
        let own = grants.account.user == *user && grants.account.host == *host;
        let account = match accounts.get(user, host) {
            Some(a) => a,
            None if own => grants.account.clone(),
            None => {
                return Err(Error::new(
                    Code::NoSuchUser,
                    format!("The user specified as a definer ('{user}'@'{host}') does not exist"),
                ))
            }
        };
        if !account.has_on_table(Privs::SELECT, &r.database, &r.name) {
            let (db, name) = r.view.split_once('.').unwrap_or(("", &r.view));
            return Err(view_invalid(db, name));
        }
    }
    Ok(())
}

/// The CHECK OPTION conditions of a statement through a view, bound over
/// rows of the base table its plan writes.
pub(super) fn bind_view_checks(
    b: &mut crate::plan::bind::Binder<'_>,
    plan: &super::Plan,
    view: &crate::plan::view_dml::ViewDml,
) -> R<Vec<crate::exec::ViewCheck>> {
    let (table, def) = match plan {
        super::Plan::Insert(p) => (&p.table, &p.def),
        super::Plan::Update(p) | super::Plan::Delete(p) => (&p.table, &p.def),
        _ => return Ok(Vec::new()),
    };
    let mut out = Vec::new();
    for (name, e) in &view.checks {
        let bound = crate::plan::check::bind_over(b, def, &view.alias, e)?;
        out.push((table.id, name.clone(), bound));
    }
    Ok(out)
}
