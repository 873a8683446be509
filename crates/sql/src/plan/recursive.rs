//! WITH RECURSIVE: a common table expression whose query names itself is
//! split into its non-recursive query blocks (the anchor, which fixes the
//! column types) and its recursive ones (steps), each of which reads the
//! rows the previous iteration added (`QueryBody::Working`). MySQL's
//! restrictions apply: a UNION is required, anchors come first, a step
//! names the CTE once and not in a subquery, and has no aggregation,
//! DISTINCT, ORDER BY or LIMIT.

use super::{contains_aggregate, Binder, Result};
use crate::parser::{self as ast, Expr, SelectItem, SetOp, Statement, TableRef};
use crate::plan::{QueryBody, QueryPlan, RecursivePlan};
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Ids of recursive CTE plans: unique in the process, so never shared
/// by two CTEs of one statement.
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// A recursive CTE's working table while its steps bind.
pub(super) struct Working {
    pub name: String,
    pub columns: Vec<String>,
    pub plan: Arc<QueryPlan>,
}

/// References to `name` anywhere in `q`: FROM items, derived tables,
/// set operations, nested CTEs and subqueries in expressions.
fn all_refs(q: &ast::Query, name: &str) -> usize {
    let mut n = from_refs(q, name, true);
    let stmt = Statement::Select(Box::new(q.clone()));
    ast::visit_statement(&stmt, &mut |e| match e {
        Expr::Subquery(s) | Expr::Exists { query: s, .. } | Expr::InSubquery { query: s, .. } => {
            n += from_refs(s, name, true)
        }
        _ => {}
    });
    n
}

/// References to `name` in FROM clauses of `q` (into derived tables,
/// set operations and WITH only when `deep`).
fn from_refs(q: &ast::Query, name: &str, deep: bool) -> usize {
    let mut n = 0;
    if deep {
        n += q
            .with
            .iter()
            .map(|c| from_refs(&c.query, name, true))
            .sum::<usize>();
    }
    match &q.body {
        ast::QueryBody::Select(s) => {
            s.from
                .iter()
                .map(|t| table_refs(t, name, deep))
                .sum::<usize>()
                + n
        }
        ast::QueryBody::Union { left, right, .. } if deep => {
            n + from_refs(left, name, true) + from_refs(right, name, true)
        }
        ast::QueryBody::Union { .. } => n,
    }
}

fn table_refs(t: &TableRef, name: &str, deep: bool) -> usize {
    match t {
        TableRef::Table { name: n, .. } => usize::from(n.database.is_none() && n.name == name),
        TableRef::Derived { query, .. } if deep => from_refs(query, name, true),
        TableRef::Derived { .. } => 0,
        TableRef::Lateral(l) if deep => l.query().map_or(0, |q| from_refs(q, name, true)),
        TableRef::Lateral(_) => 0,
        TableRef::Join { left, right, .. } => {
            table_refs(left, name, deep) + table_refs(right, name, deep)
        }
    }
}

/// The query blocks of a chain of UNIONs, left to right, each with
/// whether the UNION before it was ALL.
fn union_blocks<'q>(q: &'q ast::Query, out: &mut Vec<(&'q ast::Query, bool)>) {
    let plain = q.order_by.is_empty() && q.limit.is_none() && q.with.is_empty();
    match &q.body {
        ast::QueryBody::Union {
            left,
            right,
            all,
            op: SetOp::Union,
        } if plain || out.is_empty() => {
            union_blocks(left, out);
            out.push((right, *all));
        }
        _ => out.push((q, true)),
    }
}

fn cte_error(code: Code, text: &str, name: &str) -> Error {
    Error::new(code, text.replace("{}", name))
}

/// A recursive query block must be a plain SELECT without aggregation,
/// DISTINCT, ORDER BY or LIMIT, naming the CTE once, in its FROM.
fn check_step(q: &ast::Query, name: &str) -> Result<()> {
    let refs = all_refs(q, name);
    let direct = from_refs(q, name, false);
    if refs != 1 || direct != 1 {
        return Err(cte_error(Code::CteRecursiveSingleReference, "In recursive query block of Recursive Common Table Expression '{}', the recursive table must be referenced only once, and not in any subquery", name));
    }
    let ast::QueryBody::Select(s) = &q.body else {
        return Err(Error::unsupported(
            "set operations in a recursive query block",
        ));
    };
    if !q.order_by.is_empty() || q.limit.is_some() || s.distinct {
        return Err(Error::unsupported(
            "ORDER BY / LIMIT / SELECT DISTINCT in recursive query block of Common Table Expression",
        ));
    }
    let aggregate = !s.group_by.is_empty()
        || s.having.as_ref().is_some_and(contains_aggregate)
        || s.projection.iter().any(|i| match i {
            SelectItem::Expr { expr, .. } => contains_aggregate(expr),
            _ => false,
        });
    if aggregate {
        return Err(cte_error(Code::CteRecursiveForbidsAggregation, "Recursive Common Table Expression '{}' can contain neither aggregation nor window functions in recursive query block", name));
    }
    Ok(())
}

impl Binder<'_> {
    /// Binds CTE `cte` when it is recursive and names itself; None when
    /// it is an ordinary CTE after all.
    pub(super) fn bind_recursive(&mut self, cte: &ast::Cte) -> Option<Result<QueryPlan>> {
        if !cte.recursive || all_refs(&cte.query, &cte.name) == 0 {
            return None;
        }
        Some(self.bind_recursive_blocks(cte))
    }

    fn bind_recursive_blocks(&mut self, cte: &ast::Cte) -> Result<QueryPlan> {
        let name = &cte.name;
        let mut blocks = Vec::new();
        union_blocks(&cte.query, &mut blocks);
        if blocks.len() < 2 {
            return Err(cte_error(
                Code::CteRecursiveRequiresUnion,
                "Recursive Common Table Expression '{}' should contain a UNION",
                name,
            ));
        }
        let anchors = blocks
            .iter()
            .take_while(|(q, _)| all_refs(q, name) == 0)
            .count();
        let steps = &blocks[anchors..];
        if anchors == 0 || steps.iter().any(|(q, _)| all_refs(q, name) == 0) {
            return Err(cte_error(Code::CteRecursiveNonrecursiveFirst, "Recursive Common Table Expression '{}' should have one or more non-recursive query blocks followed by one or more recursive ones", name));
        }
        if !cte.query.order_by.is_empty() {
            return Err(Error::unsupported(
                "ORDER BY over a recursive common table expression",
            ));
        }
        let distinct = blocks[1..].iter().any(|(_, all)| !all);
        let mut anchor = self.bind_query(blocks[0].0)?;
        for (q, all) in &blocks[1..anchors] {
            let right = self.bind_query(q)?;
            anchor = self.union_of(anchor, right, *all)?;
        }
        if !cte.columns.is_empty() && cte.columns.len() != anchor.columns.len() {
            return Err(Error::new(Code::ViewWrongList, "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts"));
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let steps: Vec<&ast::Query> = steps.iter().map(|(q, _)| *q).collect();
        let bound = self.bind_steps(cte, id, &anchor, &steps);
        let (limit, offset) = self.bind_limit(&cte.query)?;
        // Named as the CTE names them (errors 1406 name the column).
        let mut columns = anchor.columns.to_vec();
        for (c, n) in columns.iter_mut().zip(&cte.columns) {
            c.name = n.clone();
        }
        let columns: Arc<[lockstep_types::result::Column]> = columns.into();
        let correlated = anchor.correlated;
        Ok(QueryPlan {
            body: QueryBody::Recursive(Box::new(RecursivePlan {
                id,
                name: name.clone(),
                anchor,
                steps: bound?,
                distinct,
                limit,
                offset,
            })),
            columns,
            correlated,
            keyed: None,
        })
    }

    /// The recursive query blocks, with the CTE's name read as working
    /// table `id` (typed as the anchor).
    fn bind_steps(
        &mut self,
        cte: &ast::Cte,
        id: usize,
        anchor: &QueryPlan,
        steps: &[&ast::Query],
    ) -> Result<Vec<QueryPlan>> {
        let working = Arc::new(QueryPlan {
            body: QueryBody::Working(id),
            columns: anchor.columns.clone(),
            // Never cached as a derived table: it changes every iteration.
            correlated: true,
            keyed: None,
        });
        self.working.push(Working {
            name: cte.name.clone(),
            columns: cte.columns.clone(),
            plan: working,
        });
        let bound = steps
            .iter()
            .map(|q| {
                check_step(q, &cte.name)?;
                let plan = self.bind_query(q)?;
                if plan.columns.len() != anchor.columns.len() {
                    return Err(Error::new(
                        Code::WrongArguments,
                        "The used SELECT statements have a different number of columns",
                    ));
                }
                Ok(plan)
            })
            .collect();
        self.working.pop();
        bound
    }

    /// The working table `name` names inside a recursive step.
    pub(super) fn working_table(
        &self,
        name: &ast::ObjectName,
    ) -> Option<(Arc<QueryPlan>, Vec<String>)> {
        if name.database.is_some() {
            return None;
        }
        let w = self.working.iter().rev().find(|w| w.name == name.name)?;
        Some((w.plan.clone(), w.columns.clone()))
    }

    /// `left UNION [ALL] right`, without ORDER BY or LIMIT.
    fn union_of(&mut self, left: QueryPlan, right: QueryPlan, all: bool) -> Result<QueryPlan> {
        if left.columns.len() != right.columns.len() {
            return Err(Error::new(
                Code::WrongArguments,
                "The used SELECT statements have a different number of columns",
            ));
        }
        let columns = left.columns.clone();
        let correlated = left.correlated || right.correlated;
        Ok(QueryPlan {
            body: QueryBody::Union {
                left: Box::new(left),
                right: Box::new(right),
                all,
                op: SetOp::Union,
                order: Vec::new(),
                limit: None,
                offset: None,
            },
            columns,
            correlated,
            keyed: None,
        })
    }
}
