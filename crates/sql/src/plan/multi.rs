//! Multi-table UPDATE and DELETE (MySQL 8). The table references and the
//! WHERE are bound as a SELECT ... FOR SHARE, so the join planner chooses
//! the order and access paths as for any query; each output row carries
//! the new values of the assignments, then every target table's whole
//! stored row (its key included). `exec::multi` changes the targets.

use super::bind::Binder;
use super::{QueryBody, QueryPlan, SelectPlan, Source, TableScan};
use crate::expr::BExpr;
use crate::parser::ast::{self, Expr, LockClause, MultiTable, SelectItem};
use lockstep_tables::{Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::sync::Arc;

type Result<T> = std::result::Result<T, Error>;

#[derive(Debug)]
pub struct MultiPlan {
    /// The join: a SELECT whose rows are the assignments' values followed
    /// by each target's stored row.
    pub query: QueryPlan,
    pub targets: Vec<MultiTarget>,
    /// DELETE (else UPDATE).
    pub delete: bool,
    /// UPDATE IGNORE / DELETE IGNORE (`Exec::or_skip`).
    pub ignore: bool,
    /// Some table of the join is read by a full scan (sql_safe_updates
    /// refuses the statement, as MySQL does).
    pub full_scan: bool,
}

#[derive(Debug)]
pub struct MultiTarget {
    pub table: Arc<Table>,
    pub def: Arc<TableDef>,
    /// The name the statement gives the table.
    pub alias: String,
    /// Where its stored row starts in an output row.
    pub at: usize,
    /// UPDATE: (column, position of its new value in an output row).
    pub assignments: Vec<(usize, usize)>,
}

impl MultiPlan {
    pub fn select(&self) -> &SelectPlan {
        match &self.query.body {
            QueryBody::Select(s) => s,
            _ => unreachable!("a multi-table plan is a SELECT"),
        }
    }
}

/// The SELECT ... FOR SHARE over `m.from` with `items` as its select list.
fn join_query(m: &MultiTable, items: Vec<SelectItem>, selection: &Option<Expr>) -> ast::Query {
    let mut q = ast::Query::plain(items, m.from.clone(), selection.clone());
    q.lock = Some(LockClause::Share);
    q
}

fn select_mut(q: &mut QueryPlan) -> Result<&mut SelectPlan> {
    match &mut q.body {
        QueryBody::Select(s) => Ok(s),
        _ => Err(Error::internal("multi-table plan is not a SELECT")),
    }
}

/// Every table scan of a source, and the aliases of its derived tables.
fn scans<'s>(src: &'s mut Source, out: &mut Vec<&'s mut TableScan>) {
    match src {
        Source::Table(t) => out.push(t),
        Source::Join { left, right, .. } => {
            scans(left, out);
            scans(right, out);
        }
        Source::Dual | Source::Derived { .. } => {}
    }
}

/// Whether `qualifier` (`t` or `db.t`) names the scan.
fn names(scan: &TableScan, qualifier: &str) -> bool {
    match qualifier.split_once('.') {
        Some((db, t)) => scan.def.database == db && scan.alias == t && scan.def.name == t,
        None => scan.alias == qualifier,
    }
}

fn not_updatable(name: &str, what: &str) -> Error {
    Error::new(
        Code::NonUpdatableTable,
        format!("The target table {name} of the {what} is not updatable"),
    )
}

/// The error for a target `qualifier` that the table references name but
/// not as a base table: a derived table (1288) or a view (changing rows
/// through a view in a multi-table statement is not built).
fn not_a_table(from: &[ast::TableRef], qualifier: &str, what: &str) -> Option<Error> {
    from.iter().find_map(|t| match t {
        ast::TableRef::Table { name, alias, .. } => (alias.as_deref().unwrap_or(&name.name)
            == qualifier)
            .then(|| Error::unsupported("a view as the target of a multi-table statement")),
        ast::TableRef::Derived { alias, .. } => {
            (alias == qualifier).then(|| not_updatable(qualifier, what))
        }
        ast::TableRef::Lateral(l) => {
            (l.alias() == qualifier).then(|| not_updatable(qualifier, what))
        }
        ast::TableRef::Join { left, right, .. } => {
            not_a_table(std::slice::from_ref(left), qualifier, what)
                .or_else(|| not_a_table(std::slice::from_ref(right), qualifier, what))
        }
    })
}

impl Binder<'_> {
    pub fn bind_multi_update(&mut self, u: &ast::Update, m: &MultiTable) -> Result<MultiPlan> {
        // DEFAULT is filled in once the column is known.
        let items = u
            .assignments
            .iter()
            .map(|(_, e)| SelectItem::Expr {
                expr: match e {
                    Expr::Default => Expr::Literal(Value::Null),
                    e => e.clone(),
                },
                alias: None,
                name: Some(String::new()),
            })
            .collect();
        let mut query = self.bind_query(&join_query(m, items, &u.selection))?;
        let select = select_mut(&mut query)?;
        let mut found = Vec::new();
        scans(&mut select.source, &mut found);
        let mut targets: Vec<MultiTarget> = Vec::new();
        for (n, (col, e)) in u.assignments.iter().enumerate() {
            let (qualifier, name) = match col.rsplit_once('.') {
                Some((q, c)) => (Some(q), c),
                None => (None, col.as_str()),
            };
            let mut hits = found.iter().enumerate().filter_map(|(i, s)| {
                let pos = s.def.column_index(name)?;
                let named = qualifier.is_none_or(|q| names(s, q));
                (named && Some(pos) != s.def.hidden_row_id).then_some((i, pos))
            });
            let (scan, pos) = match (hits.next(), hits.next()) {
                (Some(hit), None) => hit,
                (Some(_), Some(_)) => {
                    return Err(Error::new(
                        Code::NonUniq,
                        format!("Column '{name}' in field list is ambiguous"),
                    ))
                }
                (None, _) => {
                    let derived = qualifier.and_then(|q| not_a_table(&m.from, q, "UPDATE"));
                    return Err(derived.unwrap_or_else(|| Error::bad_field(col, "field list")));
                }
            };
            let s = &found[scan];
            let generated = self.catalog.generated(s.table.id);
            if super::generated::skip_assignment(&generated, &s.def, pos, e)? {
                continue;
            }
            if matches!(e, Expr::Default) {
                let c = &s.def.columns[pos];
                let default = BExpr::Literal(c.default.clone().unwrap_or(Value::Null));
                // A TIMESTAMP's default is kept in UTC.
                let utc = matches!(c.data_type, lockstep_types::DataType::Timestamp { .. });
                select.projection[n] = super::bind::session_time(default, utc);
            }
            let t = match targets.iter().position(|t| t.alias == s.alias) {
                Some(t) => t,
                None => {
                    targets.push(target(s));
                    targets.len() - 1
                }
            };
            targets[t].assignments.push((pos, n));
        }
        finish(query, targets, false, u.ignore)
    }

    pub fn bind_multi_delete(&mut self, d: &ast::Delete, m: &MultiTable) -> Result<MultiPlan> {
        let mut query = self.bind_query(&join_query(m, Vec::new(), &d.selection))?;
        let select = select_mut(&mut query)?;
        let mut found = Vec::new();
        scans(&mut select.source, &mut found);
        let mut targets: Vec<MultiTarget> = Vec::new();
        for t in &m.targets {
            let qualifier = match &t.database {
                Some(db) => format!("{db}.{}", t.name),
                None => t.name.clone(),
            };
            let Some(s) = found.iter().find(|s| names(s, &qualifier)) else {
                if let Some(e) = not_a_table(&m.from, &t.name, "DELETE") {
                    return Err(e);
                }
                return Err(Error::new(
                    Code::UnknownTable,
                    format!("Unknown table '{}' in MULTI DELETE", t.name),
                ));
            };
            if !targets.iter().any(|x| x.alias == s.alias) {
                targets.push(target(s));
            }
        }
        finish(query, targets, true, d.ignore)
    }
}

fn target(s: &TableScan) -> MultiTarget {
    MultiTarget {
        table: s.table.clone(),
        def: s.def.clone(),
        alias: s.alias.clone(),
        // Placed by `finish`; the offset until then.
        at: s.offset,
        assignments: Vec::new(),
    }
}

/// Appends each target's stored row to the select list and prunes again
/// (the key columns must be read).
fn finish(
    mut query: QueryPlan,
    mut targets: Vec<MultiTarget>,
    delete: bool,
    ignore: bool,
) -> Result<MultiPlan> {
    let select = select_mut(&mut query)?;
    let mut found = Vec::new();
    scans(&mut select.source, &mut found);
    let full_scan = found.iter().any(|s| s.access.is_full_scan());
    for t in &mut targets {
        let offset = t.at;
        t.at = select.projection.len();
        for i in 0..t.def.columns.len() {
            select.projection.push(BExpr::Column(offset + i));
            select.text_columns.push(false);
        }
    }
    super::prune::prune(select);
    Ok(MultiPlan {
        query,
        targets,
        delete,
        ignore,
        full_scan,
    })
}
