//! The tables a statement reaches beyond those it names, as MySQL's
//! prelocking finds them: what the stored functions it calls read and
//! write (and the functions they call), what the written tables' triggers
//! read and write, the parents their foreign keys check (read), and the
//! children a CASCADE, SET NULL or SET DEFAULT action changes (written,
//! and followed further). A statement takes metadata locks and write
//! gates on them as on its own tables, so a function's, a trigger's or a
//! cascade's write waits for another session's LOCK TABLES ... READ as a direct
//! write does; LOCK TABLES takes them implicitly (table_locks.rs).

use crate::expr::Func;
use crate::parser::{self, Expr, ObjectName, SpDecl, SpStmt};
use crate::routine::call::parse_def;
use crate::routine::{each_expr, each_stmt};
use lockstep_engine::catalog::Catalog;
use lockstep_engine::RoutineKind;
use lockstep_tables::Table;
use std::sync::Arc;

/// Tables reached, each once, apart from the written ones given.
#[derive(Default)]
pub(crate) struct Reach {
    pub reads: Vec<Arc<Table>>,
    pub writes: Vec<Arc<Table>>,
}

impl Reach {
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }

    /// Reads and writes, writes first.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Table>> {
        self.writes.iter().chain(&self.reads)
    }
}

/// `reach` of what a bound statement writes and of the stored functions
/// it calls; on every statement, so nothing is collected when it calls
/// none and no table has a trigger or a foreign key.
pub(crate) fn reach_of(catalog: &Catalog, plan: &super::Bound) -> Reach {
    if plan.functions.is_empty() && !catalog.has_triggers_or_foreign_keys() {
        return Reach::default();
    }
    walk(catalog, &super::table_locks::written(plan), &plan.functions)
}

/// What calling the stored `functions` reaches (SET and other statements
/// without a plan that evaluate expressions).
pub(crate) fn reach_of_calls(catalog: &Catalog, functions: &[(String, String)]) -> Reach {
    if functions.is_empty() {
        return Reach::default();
    }
    walk(catalog, &[], functions)
}

/// What writing `written` reaches (empty at the cost of one catalog read
/// when no table has a trigger or a foreign key).
pub(crate) fn reach(catalog: &Catalog, written: &[Arc<Table>]) -> Reach {
    // Checked before anything is allocated: most writes reach nothing.
    if written.is_empty() || !catalog.has_triggers_or_foreign_keys() {
        return Reach::default();
    }
    walk(catalog, written, &[])
}

/// Follows writes to the triggers, parents and children they reach, and
/// stored functions (those given, and those that programs call) to the
/// tables they name, as MySQL's prelocking does.
fn walk(catalog: &Catalog, written: &[Arc<Table>], functions: &[(String, String)]) -> Reach {
    let mut w = Walk {
        seen: written.to_vec(),
        queue: written.iter().map(|t| (t.clone(), true)).collect(),
        functions: Vec::new(),
        out: Reach::default(),
    };
    for (db, name) in functions {
        w.function(catalog, db, name);
    }
    while let Some((t, fires)) = w.queue.pop() {
        let def = t.def();
        if fires {
            for def in catalog.triggers(&def.database, &def.name) {
                if let Ok(parser::RoutineStatement::CreateTrigger(ct)) = parse_def(&def) {
                    w.program(catalog, &def.database, &ct.body);
                }
            }
        }
        for fk in catalog.foreign_keys(t.id).iter() {
            if let Some(parent) = catalog.table(&fk.parent_db, &fk.parent_table) {
                w.add(parent, false, false);
            }
        }
        for (child_id, fk) in catalog.referencing(&def.database, &def.name) {
            if let Some(child) = catalog.table_by_id(child_id) {
                // Cascades fire no triggers (as in InnoDB).
                let changes = !(fk.on_delete.refuses() && fk.on_update.refuses());
                w.add(child, changes, false);
            }
        }
    }
    w.out
}

/// The walk over what writes reach: `seen` are the written tables.
struct Walk {
    seen: Vec<Arc<Table>>,
    /// Written tables still to follow, with whether their triggers fire.
    queue: Vec<(Arc<Table>, bool)>,
    /// Stored functions followed already (database, name).
    functions: Vec<(String, String)>,
    out: Reach,
}

impl Walk {
    fn add(&mut self, t: Arc<Table>, write: bool, fires: bool) {
        let known = |x: &Arc<Table>| Arc::ptr_eq(x, &t);
        if self.seen.iter().any(known) {
            return;
        }
        if write {
            self.out.reads.retain(|r| !Arc::ptr_eq(r, &t));
            self.seen.push(t.clone());
            self.out.writes.push(t.clone());
            self.queue.push((t, fires));
        } else if !self.out.reads.iter().any(known) {
            self.out.reads.push(t);
        }
    }
}

impl Walk {
    /// The stored function `db`.`name`, once: what its body uses. One that
    /// does not exist or parse names nothing (its call fails anyway).
    fn function(&mut self, catalog: &Catalog, db: &str, name: &str) {
        let known = |(d, n): &(String, String)| d == db && n.eq_ignore_ascii_case(name);
        if self.functions.iter().any(known) {
            return;
        }
        self.functions.push((db.to_string(), name.to_string()));
        let Some(def) = catalog.routine(db, RoutineKind::Function, name) else {
            return;
        };
        if let Ok(parser::RoutineStatement::Create(cr)) = parse_def(&def) {
            self.program(catalog, db, &cr.body);
        }
    }

    /// The tables a stored program (of database `db`) names, written ones
    /// followed further, and the stored functions it calls.
    fn program(&mut self, catalog: &Catalog, db: &str, body: &SpStmt) {
        let mut tables = Vec::new();
        body_tables(body, &mut |n: &ObjectName, w: bool| {
            let d = n.database.as_deref().unwrap_or(db);
            tables.push((d.to_string(), n.name.clone(), w));
        });
        for (d, name, write) in tables {
            if let Some(t) = catalog.table(&d, &name) {
                self.add(t, write, true);
            }
        }
        let mut calls: Vec<(String, String)> = Vec::new();
        // each_expr reaches nested expressions and subqueries too.
        each_expr(body, &mut |e| {
            if let Expr::Function { name, database, .. } = e {
                // `db.f()` is always a stored function; `f()` when no
                // built-in one has that name.
                if database.is_some() || Func::lookup(name).is_none() {
                    let d = database.as_deref().unwrap_or(db).to_string();
                    if !calls.iter().any(|(cd, cn)| *cd == d && cn == name) {
                        calls.push((d, name.clone()));
                    }
                }
            }
        });
        for (d, name) in calls {
            self.function(catalog, &d, &name);
        }
    }
}

/// Every table a stored program's statements name (see
/// `parser::statement_tables`), subqueries in its expressions included.
fn body_tables(s: &SpStmt, f: &mut dyn FnMut(&ObjectName, bool)) {
    each_stmt(s, &mut |s| match s {
        SpStmt::Sql(stmt) => parser::statement_tables(stmt, f),
        SpStmt::SelectInto { query, .. } => parser::query_tables(query, &mut |n| f(n, false)),
        SpStmt::Block { decls, .. } => {
            for d in decls {
                if let SpDecl::Cursor { query, .. } = d {
                    parser::query_tables(query, &mut |n| f(n, false));
                }
            }
        }
        _ => {}
    });
    each_expr(s, &mut |e| parser::expr_tables(e, &mut |n| f(n, false)));
}
