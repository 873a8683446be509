//! Views in FROM: the stored SELECT is parsed again and bound like a
//! derived table in the view's own database. Under SQL SECURITY DEFINER
//! the tables it reads are checked against the definer's grants, not the
//! invoker's: the binder lists them apart (`definer_reads`).

use super::{Binder, Placement, Result, Scope};
use crate::parser::{self as ast, Statement};
use crate::plan::Source;
use lockstep_engine::ViewDef;
use lockstep_tables::Table;
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

/// Views within views, at most: deeper nesting is refused.
const MAX_VIEW_DEPTH: usize = 32;

/// A table or view read under a DEFINER view's rights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinerRead {
    pub definer: (String, String),
    /// `db.view` for error 1356.
    pub view: String,
    pub database: String,
    pub name: String,
}

/// 1356: what MySQL reports for any failure inside a view's definition.
pub fn view_invalid(db: &str, name: &str) -> Error {
    Error::new(
        Code::ViewInvalid,
        format!("View '{db}.{name}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them"),
    )
}

/// Parses a view's stored SELECT.
pub fn view_query(view: &ViewDef) -> Result<ast::Query> {
    match crate::parser::parse(&view.query)
        .map_err(|_| view_invalid(&view.database, &view.name))?
        .pop()
    {
        Some(Statement::Select(q)) => Ok(*q),
        _ => Err(view_invalid(&view.database, &view.name)),
    }
}

impl Binder<'_> {
    /// The view `name` names, unless a temporary table hides it.
    pub fn view(&self, name: &ast::ObjectName) -> Option<Arc<ViewDef>> {
        let db = name.database.as_ref().or(self.database.as_ref())?;
        let key = (db.clone(), name.name.clone());
        if self.temporary.is_some_and(|m| m.contains_key(&key)) {
            return None;
        }
        self.catalog.view(db, &name.name)
    }

    /// Notes a base table the statement reads: the invoker's reads, or
    /// the definer's inside a DEFINER view.
    pub(super) fn note_read(&mut self, table: &Arc<Table>) {
        if let Some(view) = &self.definer_view {
            let def = table.def();
            self.definer_reads
                .push(definer_read(view, &def.database, &def.name));
            if !self.view_tables.iter().any(|t| Arc::ptr_eq(t, table)) {
                self.view_tables.push(table.clone());
            }
        } else if !self.reads.iter().any(|t| Arc::ptr_eq(t, table)) {
            self.reads.push(table.clone());
        }
    }

    /// Notes how the statement itself names `table` (not a view's query).
    pub(super) fn note_ref(&mut self, table: &Arc<Table>, name: &str) {
        let seen = |(t, n): &(Arc<Table>, String)| Arc::ptr_eq(t, table) && n == name;
        if self.view_stack.is_empty() && !self.refs.iter().any(seen) {
            self.refs.push((table.clone(), name.to_string()));
        }
    }

    /// A view in FROM, bound as a derived table named by its alias.
    pub(super) fn bind_view(
        &mut self,
        view: Arc<ViewDef>,
        alias: &Option<String>,
        scope: &mut Scope,
        place: &mut Placement,
    ) -> Result<Source> {
        let key = (view.database.clone(), view.name.clone());
        if self.view_stack.contains(&key) || self.view_stack.len() >= MAX_VIEW_DEPTH {
            return Err(Error::new(
                Code::ViewRecursive,
                format!("`{}`.`{}` contains view recursion", key.0, key.1),
            ));
        }
        if let Some(outer) = &self.definer_view {
            // A view named inside a DEFINER view: the definer needs SELECT on it.
            let read = definer_read(outer, &view.database, &view.name);
            self.definer_reads.push(read);
        }
        let query = view_query(&view)?;
        let outer = self.view_filter.take();
        let name = alias.as_deref().unwrap_or(&view.name);
        let pushed = outer
            .as_ref()
            .and_then(|p| super::view_filter::pushed(&query, p, name, &view.columns));
        let query = pushed.as_ref().unwrap_or(&query);
        self.note_view(query, name, &view);
        let plan = self.bind_view_query(&view, query, name);
        self.view_filter = outer;
        let plan = plan.map_err(|e| match e.code {
            Code::NoSuchTable | Code::BadField | Code::ViewInvalid | Code::BadDb => {
                view_invalid(&view.database, &view.name)
            }
            _ => e,
        })?;
        let alias = alias.clone().unwrap_or_else(|| view.name.clone());
        self.derived(Arc::new(plan), alias, &view.columns, scope, place)
    }

    /// Binds the view's query in its own database, without the outer
    /// query's CTEs, under its definer when SQL SECURITY DEFINER.
    /// `alias`: the name the query reads it by, for a split (split.rs);
    /// empty when none is.
    pub(super) fn bind_view_query(
        &mut self,
        view: &Arc<ViewDef>,
        query: &ast::Query,
        alias: &str,
    ) -> Result<super::QueryPlan> {
        let database = self.database.replace(view.database.clone());
        // Nothing of the query naming the view is visible inside it.
        let ctes = std::mem::take(&mut self.ctes);
        let working = std::mem::take(&mut self.working);
        let outer = std::mem::take(&mut self.outer);
        let definer = if view.security_definer {
            self.definer_view.replace(view.clone())
        } else {
            self.definer_view.clone()
        };
        self.view_stack
            .push((view.database.clone(), view.name.clone()));
        let plan = self.bind_derived_query(query, alias);
        self.view_stack.pop();
        self.definer_view = definer;
        self.outer = outer;
        self.working = working;
        self.ctes = ctes;
        self.database = database;
        plan
    }

    /// CHECK TABLE of a view: why its definition no longer resolves (a
    /// table, column or function it names is gone), or None.
    pub fn check_view(&mut self, view: &Arc<ViewDef>) -> Option<Error> {
        let query = match view_query(view) {
            Ok(q) => q,
            Err(e) => return Some(e),
        };
        match self.bind_view_query(view, &query, "") {
            Err(e) => Some(e),
            Ok(p) if !view.columns.is_empty() && p.columns.len() != view.columns.len() => {
                Some(view_invalid(&view.database, &view.name))
            }
            Ok(_) => None,
        }
    }

    /// The columns a view yields (DESCRIBE, information_schema).
    pub fn view_columns(
        &mut self,
        view: &Arc<ViewDef>,
    ) -> Result<Vec<lockstep_types::result::Column>> {
        let query = view_query(view)?;
        let plan = self
            .bind_view_query(view, &query, "")
            .map_err(|_| view_invalid(&view.database, &view.name))?;
        let mut columns: Vec<_> = plan.columns.iter().cloned().collect();
        if !view.columns.is_empty() {
            if view.columns.len() != columns.len() {
                return Err(view_invalid(&view.database, &view.name));
            }
            for (c, name) in columns.iter_mut().zip(&view.columns) {
                c.name = name.clone();
            }
        }
        Ok(columns)
    }
}

fn definer_read(view: &ViewDef, database: &str, name: &str) -> DefinerRead {
    DefinerRead {
        definer: view.definer.clone(),
        view: format!("{}.{}", view.database, view.name),
        database: database.to_string(),
        name: name.to_string(),
    }
}
