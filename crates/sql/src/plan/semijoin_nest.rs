//! Semi-join flattening: IN / EXISTS subqueries that take part in the
//! join order, as MySQL 8's semi-join strategies do.
//!
//! A conjunct of a SELECT's WHERE (AND-ed at the top, not under OR or
//! NOT) `x IN (SELECT k FROM ...)` or `EXISTS (SELECT .. WHERE s.k = t.x
//! AND ..)` (correlated only by such equalities; no aggregate, GROUP BY,
//! HAVING, window or LIMIT in the subquery) may become a *nest*: the
//! derived table `(SELECT DISTINCT k FROM .. WHERE rest) AS <subqueryN>`
//! joined to the query by `x = <subqueryN>.k`. DISTINCT makes the join a
//! semi-join: an outer row finds at most one nest row, so it appears once
//! however many inner rows match it. In a WHERE a NULL comparison counts
//! as false, so `x IN (..)` and the join keep the same rows.
//!
//! The join order costs the nest with the other tables (`step`). When it
//! comes before a table whose key it then feeds, the subquery runs once
//! and its keys drive index lookups (materialization-lookup): the
//! flattened plan is kept. Otherwise the outer tables come first, and the
//! statement is bound again as written: the subquery runs per outer row
//! and stops at its first match (FirstMatch: the keyed per-row path of
//! plan/semijoin.rs, or the hashed IN of exec/membership.rs).
//!
//! A key is flattened when DISTINCT merges every two keys one outer value
//! could equal (plan/semijoin_keys.rs): integers, or keys compared only
//! with columns of their own family (text under the collation, decimals,
//! dates).

use crate::parser::ast::{self, BinaryOp, Expr, SelectItem, TableRef};
use crate::plan::bind::view_filter::split_and as conjuncts;
use crate::plan::bind::{contains_aggregate, Binder};
use crate::plan::{QueryBody, QueryPlan, Source};

/// Subqueries flattened in one query block at the most.
const MAX_NESTS: usize = 4;

/// Blocks nested deeper than this are not tried flattened (each trial
/// that fails binds its subqueries a second time).
const MAX_NESTING: usize = 4;

/// The alias of nest `n` and the name of its `i`-th key column.
fn alias(n: usize) -> String {
    format!("<subquery{n}>")
}

/// The name of a nest's key column: the inner column's when the key is
/// one (as MySQL's EXPLAIN shows `<subquery2>.col`), else its position.
fn key_name(n: usize, i: usize, inner: &Expr, taken: &[String]) -> String {
    let name = match inner {
        Expr::Column { name, .. } => format!("<subquery{n}>.{name}"),
        _ => format!("<subquery{n}>.{i}"),
    };
    match taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) {
        true => format!("<subquery{n}>.{i}"),
        false => name,
    }
}

/// The nest a derived table is, by its columns' names: its alias.
pub fn nest_name(plan: &QueryPlan) -> Option<&str> {
    let name = &plan.columns.first()?.name;
    let (alias, _) = name.split_once('.')?;
    (alias.starts_with("<subquery") && alias.ends_with('>')).then_some(alias)
}

/// Whether a scope column belongs to a nest (never listed by `*`).
pub fn hidden(qualifier: &str) -> bool {
    qualifier.starts_with("<subquery") && qualifier.ends_with('>')
}

/// Whether a WHERE has a conjunct IN / EXISTS (`negated`: NOT IN / NOT
/// EXISTS) at its top, where a nest or an anti-join could come from
/// (checked before anything is copied: most statements have none).
pub(crate) fn has_candidate(e: &Expr, negated: bool) -> bool {
    match e {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => has_candidate(left, negated) || has_candidate(right, negated),
        Expr::InSubquery { negated: n, .. } | Expr::Exists { negated: n, .. } => *n == negated,
        _ => false,
    }
}

pub(crate) fn and_all(es: Vec<Expr>) -> Option<Expr> {
    es.into_iter().reduce(|l, r| Expr::Binary {
        op: BinaryOp::And,
        left: Box::new(l),
        right: Box::new(r),
    })
}

/// The two sides of an equality `l = r`.
pub(crate) fn equality(c: &Expr) -> Option<(&Expr, &Expr)> {
    match c {
        Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
        } => Some((left, right)),
        _ => None,
    }
}

/// Where a column of a subquery's WHERE comes from.
#[derive(PartialEq)]
enum Side {
    Inner,
    Outer,
    Unknown,
}

/// The tables of a subquery's FROM: their names or aliases, and the
/// columns of each base table (None: a derived table, view or CTE).
struct InnerTables {
    names: Vec<(String, Option<Vec<String>>)>,
}

impl InnerTables {
    fn side(&self, table: &Option<String>, name: &str) -> Side {
        match table {
            Some(t) if self.names.iter().any(|(n, _)| n.eq_ignore_ascii_case(t)) => Side::Inner,
            Some(_) => Side::Outer,
            None => {
                let cols = self.names.iter().map(|(_, c)| c.as_ref());
                let mut all_known = true;
                for c in cols {
                    match c {
                        Some(c) if c.iter().any(|c| c.eq_ignore_ascii_case(name)) => {
                            return Side::Inner
                        }
                        Some(_) => {}
                        None => all_known = false,
                    }
                }
                match all_known {
                    true => Side::Outer,
                    false => Side::Unknown,
                }
            }
        }
    }
}

/// A subquery turned into a nest: its derived table and the equalities
/// that join it.
struct Nest {
    table: TableRef,
    joins: Vec<Expr>,
}

impl Binder<'_> {
    /// The tables a subquery's FROM names (None when it has a LATERAL
    /// table, which a nest cannot hold).
    fn inner_tables(&self, from: &[TableRef]) -> Option<InnerTables> {
        fn walk(
            b: &Binder<'_>,
            t: &TableRef,
            out: &mut Vec<(String, Option<Vec<String>>)>,
        ) -> bool {
            match t {
                TableRef::Table { name, alias, .. } => {
                    let base = b.base_table(name);
                    let cols =
                        base.map(|t| t.def().columns.iter().map(|c| c.name.clone()).collect());
                    out.push((alias.clone().unwrap_or_else(|| name.name.clone()), cols));
                    true
                }
                TableRef::Derived { alias, .. } => {
                    out.push((alias.clone(), None));
                    true
                }
                TableRef::Lateral(_) => false,
                TableRef::Join { left, right, .. } => walk(b, left, out) && walk(b, right, out),
            }
        }
        let mut names = Vec::new();
        from.iter()
            .all(|t| walk(self, t, &mut names))
            .then_some(InnerTables { names })
    }

    /// The nest subquery `q` becomes (`key`: an IN's left operand).
    fn nest_of(&self, key: Option<&Expr>, q: &ast::Query, n: usize) -> Option<Nest> {
        let s = plain_select(q)?;
        let inner = self.inner_tables(&s.from)?;
        let mut pairs: Vec<(Expr, Expr)> = Vec::new();
        if let Some(outer) = key {
            let [SelectItem::Expr { expr, .. }] = &s.projection[..] else {
                return None;
            };
            pairs.push((expr.clone(), outer.clone()));
        }
        let mut rest = Vec::new();
        let mut all = Vec::new();
        if let Some(w) = &s.selection {
            conjuncts(w, &mut all);
        }
        for c in all {
            match key_pair(c, &inner) {
                Some(p) => pairs.push(p),
                None => rest.push(c.clone()),
            }
        }
        if pairs.is_empty() {
            return None; // an uncorrelated EXISTS: a constant
        }
        let name = alias(n);
        let mut keys: Vec<String> = Vec::new();
        for (i, (e, _)) in pairs.iter().enumerate() {
            keys.push(key_name(n, i, e, &keys));
        }
        let projection = pairs.iter().zip(&keys).map(|((e, _), k)| SelectItem::Expr {
            expr: e.clone(),
            alias: Some(k.clone()),
            name: None,
        });
        let query = nest_query(projection.collect(), s, and_all(rest), q.lock_wait);
        let joins = pairs
            .into_iter()
            .zip(keys)
            .map(|((_, outer), key)| Expr::Binary {
                op: BinaryOp::Eq,
                left: Box::new(outer),
                right: Box::new(Expr::Column {
                    table: Some(name.clone()),
                    name: key,
                }),
            });
        let joins = joins.collect();
        Some(Nest {
            table: TableRef::Derived {
                query: Box::new(query),
                alias: name,
            },
            joins,
        })
    }

    /// `s` with its eligible subqueries flattened into nests, or None.
    fn flattened(&self, s: &ast::Select) -> Option<ast::Select> {
        let mut all = Vec::new();
        conjuncts(s.selection.as_ref()?, &mut all);
        let mut kept = Vec::new();
        let mut from = s.from.clone();
        let mut nests = 0;
        for c in all {
            let nest = match c {
                _ if nests == MAX_NESTS => None,
                Expr::InSubquery {
                    expr,
                    query,
                    negated: false,
                } if !matches!(**expr, Expr::Row(_)) => self.nest_of(Some(expr), query, nests + 2),
                Expr::Exists {
                    query,
                    negated: false,
                } => self.nest_of(None, query, nests + 2),
                _ => None,
            };
            match nest {
                Some(n) => {
                    nests += 1;
                    from.push(n.table);
                    kept.extend(n.joins);
                }
                None => kept.push(c.clone()),
            }
        }
        (nests > 0).then(|| ast::Select {
            from,
            selection: and_all(kept),
            ..s.clone()
        })
    }

    /// The plan of SELECT block `s` with its subqueries flattened, when
    /// the join order drives lookups from every nest; None: bind it as
    /// written (the binder's state is as before).
    pub(crate) fn bind_flattened(&mut self, s: &ast::Select, q: &ast::Query) -> Option<QueryPlan> {
        let candidate = s
            .selection
            .as_ref()
            .is_some_and(|w| has_candidate(w, false));
        // A locking read keeps its subquery as written (its rows are not
        // locked either way, but the plan stays the one it was tuned on).
        // A failed trial binds the block again, subqueries included: past
        // a few levels of nesting that doubling would be exponential.
        let too_deep = self.outer_depth() > MAX_NESTING || self.flatten_trials >= MAX_NESTING;
        if !candidate || too_deep || s.straight_join || q.lock.is_some() || self.is_stripping(s) {
            return None;
        }
        let flat = self.flattened(s)?;
        let mark = self.mark();
        self.flatten_trials += 1;
        let trial = self.bind_select_flat(&flat, q);
        self.flatten_trials -= 1;
        match trial {
            Ok(plan) if drives_lookups(&plan) => Some(plan),
            _ => {
                self.rewind(mark);
                None
            }
        }
    }
}

/// The SELECT of a subquery a nest may come from: one block with no
/// aggregate, GROUP BY, HAVING, window, LIMIT, WITH or locking clause.
pub(crate) fn plain_select(q: &ast::Query) -> Option<&ast::Select> {
    let ast::QueryBody::Select(s) = &q.body else {
        return None;
    };
    let plain = q.with.is_empty()
        && q.limit.is_none()
        && q.offset.is_none()
        && q.lock.is_none()
        && s.group_by.is_empty()
        && s.having.is_none()
        && s.windows.is_empty()
        && !s.from.is_empty();
    let computed = |p: &SelectItem| match p {
        SelectItem::Expr { expr, .. } => {
            contains_aggregate(expr) || crate::plan::bind::window::has_window(expr)
        }
        _ => false,
    };
    (plain && !s.projection.iter().any(computed)).then_some(s)
}

/// `SELECT DISTINCT keys FROM (the subquery's FROM) WHERE rest`.
fn nest_query(
    projection: Vec<SelectItem>,
    s: &ast::Select,
    selection: Option<Expr>,
    lock_wait: ast::LockWaitClause,
) -> ast::Query {
    let mut q = ast::Query::plain(projection, s.from.clone(), selection);
    if let ast::QueryBody::Select(body) = &mut q.body {
        body.distinct = true;
    }
    q.lock_wait = lock_wait;
    q
}

/// The equality `inner = outer` (either way round) of a subquery's WHERE
/// between plain columns, as (inner, outer).
fn key_pair(c: &Expr, inner: &InnerTables) -> Option<(Expr, Expr)> {
    let (left, right) = equality(c)?;
    let side = |e: &Expr| match e {
        Expr::Column { table, name } => inner.side(table, name),
        _ => Side::Unknown,
    };
    match (side(left), side(right)) {
        (Side::Inner, Side::Outer) => Some((left.clone(), right.clone())),
        (Side::Outer, Side::Inner) => Some((right.clone(), left.clone())),
        _ => None,
    }
}

/// Whether every nest of a flattened plan is uncorrelated, compares its
/// keys exactly, and comes before a table whose access path its keys feed.
fn drives_lookups(plan: &QueryPlan) -> bool {
    let QueryBody::Select(s) = &plan.body else {
        return false;
    };
    let mut leaves = Vec::new();
    collect(&s.source, &mut leaves);
    let mut nests = 0;
    for (i, leaf) in leaves.iter().enumerate() {
        let Source::Derived { plan, offset, .. } = leaf else {
            continue;
        };
        if nest_name(plan).is_none() {
            continue;
        }
        nests += 1;
        let span = *offset..offset + plan.columns.len();
        let types: Vec<_> = plan.columns.iter().map(|c| c.data_type).collect();
        let exact = crate::plan::semijoin_keys::exact(s, &span, &types);
        let feeds = leaves[i + 1..].iter().any(|l| match l {
            Source::Table(t) => t
                .access
                .ranges
                .iter()
                .any(|r| r.eq.iter().any(|e| reads_any(e, &span))),
            _ => false,
        });
        if plan.correlated || !exact || !feeds {
            return false;
        }
    }
    nests > 0
}

fn collect<'a>(src: &'a Source, out: &mut Vec<&'a Source>) {
    match src {
        Source::Join { left, right, .. } => {
            collect(left, out);
            collect(right, out);
        }
        other => out.push(other),
    }
}

fn reads_any(e: &crate::expr::BExpr, span: &std::ops::Range<usize>) -> bool {
    let mut found = matches!(e, crate::expr::BExpr::Column(i) if span.contains(i));
    e.for_each_child(&mut |c| found = found || reads_any(c, span));
    found
}

/// The join order's estimate of a nest: (cost per row before it, rows
/// out per row before it, cost paid once). Placed before the tables it
/// joins (`partners_before` false), it is materialized once and read;
/// after them it stands for FirstMatch, the subquery as written run per
/// outer row until its first match (built once, probed per row).
pub fn step(
    src: &Source,
    partners_before: bool,
    known: &crate::plan::selectivity::Known,
) -> Option<(f64, f64, f64)> {
    let Source::Derived { plan, .. } = src else {
        return None;
    };
    nest_name(plan)?;
    let QueryBody::Select(s) = &plan.body else {
        return None;
    };
    let read = crate::plan::semijoin::rows_read(&s.source);
    let kept = s.filter.as_ref().map_or(1.0, |f| {
        crate::plan::selectivity::estimate(f, single(&s.source), known)
    });
    let out = (rows_out(&s.source, known) * kept).max(1.0);
    Some(match partners_before {
        false => (1.0 + out, out, read),
        true => (1.0, 1.0, read),
    })
}

fn single(src: &Source) -> Option<&crate::plan::TableScan> {
    match src {
        Source::Table(t) => Some(t),
        _ => None,
    }
}

/// Rows a nest's source gives before its statement filter: a table's
/// access rows times its own filter's share; a join, its larger side (a
/// rough key-to-key join).
fn rows_out(src: &Source, known: &crate::plan::selectivity::Known) -> f64 {
    match src {
        Source::Table(scan) => {
            let read = crate::plan::semijoin::rows_read(src);
            let kept = scan.filter.as_ref().map_or(1.0, |f| {
                crate::plan::selectivity::estimate(f, Some(scan), known)
            });
            read * kept
        }
        Source::Join { left, right, .. } => rows_out(left, known).max(rows_out(right, known)),
        Source::Derived { .. } => 1000.0,
        Source::Dual => 1.0,
    }
}

/// EXPLAIN FORMAT=TREE's words for a nest.
pub fn describe() -> &'static str {
    "semi-join materialized once, deduplicated, its keys drive lookups (materialization-lookup)"
}
