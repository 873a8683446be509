//! The tables a write reaches beyond those the statement names, as
//! MySQL's prelocking finds them: what the written tables' triggers read
//! and write, the parents their foreign keys check (read), and the
//! children a CASCADE, SET NULL or SET DEFAULT action changes (written,
//! and followed further). A statement takes metadata locks and write
//! gates on them as on its own tables, so a trigger's or a cascade's
//! write waits for another session's LOCK TABLES ... READ as a direct
//! write does; LOCK TABLES takes them implicitly (table_locks.rs).

use crate::parser::{self, ObjectName, SpDecl, SpStmt};
use crate::routine::call::parse_def;
use crate::routine::{each_expr, each_stmt};
use lockstep_engine::catalog::Catalog;
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

/// `reach` of what a bound statement writes; on every write, so nothing
/// is collected when no table has a trigger or a foreign key.
pub(crate) fn reach_of(catalog: &Catalog, plan: &super::Bound) -> Reach {
    if !catalog.has_triggers_or_foreign_keys() {
        return Reach::default();
    }
    reach(catalog, &super::table_locks::written(plan))
}

/// What writing `written` reaches (empty at the cost of one catalog read
/// when no table has a trigger or a foreign key).
pub(crate) fn reach(catalog: &Catalog, written: &[Arc<Table>]) -> Reach {
    // Checked before anything is allocated: most writes reach nothing.
    if written.is_empty() || !catalog.has_triggers_or_foreign_keys() {
        return Reach::default();
    }
    let mut w = Walk {
        seen: written.to_vec(),
        queue: written.iter().map(|t| (t.clone(), true)).collect(),
        out: Reach::default(),
    };
    while let Some((t, fires)) = w.queue.pop() {
        let def = t.def();
        if fires {
            for (name, writes) in trigger_tables(catalog, &def.database, &def.name) {
                if let Some(r) = catalog.table(&name.0, &name.1) {
                    w.add(r, writes, true);
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

/// (database, table) each trigger of `db`.`table` names, with whether it
/// may write it. A trigger that does not parse names nothing (it fails
/// when it fires).
fn trigger_tables(catalog: &Catalog, db: &str, table: &str) -> Vec<((String, String), bool)> {
    let mut out = Vec::new();
    for def in catalog.triggers(db, table) {
        let Ok(parser::RoutineStatement::CreateTrigger(ct)) = parse_def(&def) else {
            continue;
        };
        let mut f = |n: &ObjectName, w: bool| {
            let d = n.database.clone().unwrap_or_else(|| def.database.clone());
            out.push(((d, n.name.clone()), w));
        };
        body_tables(&ct.body, &mut f);
    }
    out
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
