//! Split materialization (MariaDB's LATERAL DERIVED, MySQL 8's lateral
//! derived tables chosen by cost): a grouped derived table, CTE or view
//! joined to another table on one of its GROUP BY columns is computed one
//! key at a time, for the keys the other table's rows bring, instead of
//! whole. `d.k = c.id` becomes `k = <c.id of the row before>` in the
//! derived query's WHERE, where an index on k finds the key's rows; the
//! derived table runs as a lateral one (`exec/lateral.rs`, one run per
//! distinct key). The join order search weighs both ways
//! (`join_order::Split`): worth it when the keys are few next to the
//! groups, as when the other table is filtered to a few rows. On a LEFT
//! JOIN's inner side the key comes from its ON, which is still checked.

use super::{lateral::Lateral, view_filter, Binder, Scope, ScopeColumn};
use crate::parser::{self as ast, BinaryOp, Expr};
use crate::plan::join_order::{access_rows, Joins, Split};
use crate::plan::{QueryBody, QueryPlan, Source};
use lockstep_engine::ViewDef;
use lockstep_types::Error;
use std::sync::Arc;

/// The qualifier of the hidden outer column a split derived query's key
/// equals: no statement can name it.
const HIDDEN: &str = "<split>";

/// A derived table or CTE of the FROM being bound, as it was bound.
pub(crate) struct DerivedQuery {
    alias: String,
    query: ast::Query,
    columns: Vec<String>,
    /// A view's query binds in the view's own context.
    view: Option<Arc<ViewDef>>,
}

/// A derived table to compute by key: its alias, the GROUP BY expression
/// of its query that is the key, and the column of the row before it
/// that gives the key (at its final position).
#[derive(Clone)]
pub(crate) struct SplitAt {
    alias: String,
    key: Expr,
    column: ScopeColumn,
}

/// A split the join order search may choose, with what binding it needs.
pub(crate) struct Candidate {
    pub unit: usize,
    pub split: Split,
    alias: String,
    key: Expr,
    /// The other table's column, at its position in the first layout.
    column: ScopeColumn,
}

impl Binder<'_> {
    /// Notes a derived table's query of the FROM being bound.
    pub(super) fn note_derived(&mut self, query: &ast::Query, alias: &str, columns: &[String]) {
        self.block_derived.push(DerivedQuery {
            alias: alias.to_string(),
            query: query.clone(),
            columns: columns.to_vec(),
            view: None,
        });
    }

    /// Notes a view's query of the FROM being bound, read as `alias`.
    pub(super) fn note_view(&mut self, query: &ast::Query, alias: &str, view: &Arc<ViewDef>) {
        self.block_derived.push(DerivedQuery {
            alias: alias.to_string(),
            query: query.clone(),
            columns: view.columns.clone(),
            view: Some(view.clone()),
        });
    }

    /// Binds `query` as the derived table `alias`: by key when the join
    /// planning chose so (leaving its lateral form in `split_bound`).
    pub(super) fn bind_derived_query(
        &mut self,
        query: &ast::Query,
        alias: &str,
    ) -> Result<QueryPlan, Error> {
        let at = self.split.iter().position(|s| s.alias == alias);
        let at = at.map(|i| self.split[i].clone());
        let split = std::mem::take(&mut self.split);
        let plan = match at {
            Some(at) => self.bind_split(query, &at),
            None => self.bind_query(query),
        };
        self.split = split;
        plan
    }

    /// `query` with `key = <the hidden outer column>` in its WHERE, bound
    /// with that column as its enclosing row, as a LATERAL table is.
    fn bind_split(&mut self, query: &ast::Query, at: &SplitAt) -> Result<QueryPlan, Error> {
        let place = self.outer.len();
        self.outer.push(Scope {
            columns: vec![at.column.clone()],
            width: 0,
            types: Vec::new(),
        });
        let correlated = std::mem::replace(&mut self.correlated, false);
        let mark = self.outer_refs.len();
        let cond = Expr::Binary {
            op: BinaryOp::Eq,
            left: Box::new(at.key.clone()),
            right: Box::new(Expr::Column {
                table: Some(HIDDEN.to_string()),
                name: at.column.name.clone(),
            }),
        };
        let plan = self.bind_query(&view_filter::with_condition(query.clone(), cond));
        self.outer.pop();
        self.correlated = correlated;
        let (refs, outer) = self.own_refs(mark, place);
        let plan = plan?;
        debug_assert_eq!(refs, [at.column.index]);
        self.split_bound = Some(Lateral {
            refs,
            outer,
            split: true,
        });
        Ok(plan)
    }

    /// The splits the units of `joins` could take: a grouped derived
    /// table of the FROM (not on a LEFT JOIN's inner side) equated on a
    /// GROUP BY column to a base table's column, whose query, bound by
    /// that key, reads one table through an index.
    pub(super) fn split_candidates(&mut self, joins: &Joins, scope: &Scope) -> Vec<Candidate> {
        let mut out = Vec::new();
        for (u, unit) in joins.units.iter().enumerate() {
            let Source::Derived {
                plan,
                offset,
                lateral: None,
            } = &unit.source
            else {
                continue;
            };
            if crate::plan::semijoin_nest::nest_name(plan).is_some() {
                continue;
            }
            if let Some(c) = self.split_of(joins, scope, u, *offset) {
                out.push(c);
            }
        }
        out
    }

    /// The split of derived unit `u` (at `offset`), if one is worth
    /// offering.
    fn split_of(
        &mut self,
        joins: &Joins,
        scope: &Scope,
        u: usize,
        offset: usize,
    ) -> Option<Candidate> {
        let unit = &joins.units[u];
        let col = |i: usize| scope.columns.iter().find(|c| c.index == i && !c.merged);
        let alias = col(offset)?.qualifier.clone();
        let d = self.block_derived.iter().position(|d| d.alias == alias)?;
        // On a LEFT JOIN's inner side, its ON's equalities with its left
        // operand's tables: the key's groups are the ones it may match.
        let (conds, partners) = match &unit.outer {
            Some(o) => (&o.on, o.after),
            None => (&joins.conds, !0u64),
        };
        for c in conds {
            let Some((mine, other)) = equated(c, unit.start, unit.end) else {
                continue;
            };
            let partner = joins
                .units
                .iter()
                .position(|p| p.start <= other && other < p.end);
            let fits = |p: usize| {
                let p = &joins.units[p];
                matches!(p.source, Source::Table(_)) && (unit.outer.is_some() || p.outer.is_none())
            };
            if !partner.is_some_and(|p| partners & (1u64 << p) != 0 && fits(p)) {
                continue;
            }
            let d = &self.block_derived[d];
            let (Some(mine), Some(other_col)) = (col(mine), col(other)) else {
                continue;
            };
            let name = mine.name.clone();
            let Some(key) = view_filter::group_key(&d.query, &alias, &d.columns, &name) else {
                continue;
            };
            if !matches!(key, Expr::Column { .. }) {
                continue; // an expression key: no index to look it up by
            }
            let (query, view, mut column) = (d.query.clone(), d.view.clone(), other_col.clone());
            column.qualifier = HIDDEN.to_string();
            let at = SplitAt {
                alias: alias.clone(),
                key: key.clone(),
                column: column.clone(),
            };
            let split = self.split_cost(&query, view.as_ref(), &at, other);
            return split.map(|split| Candidate {
                unit: u,
                split,
                alias,
                key,
                column,
            });
        }
        None
    }

    /// Binds the split form of `query` once to see how it reads a key: an
    /// index lookup on its single table, priced as the join order prices
    /// accesses; None for anything else.
    fn split_cost(
        &mut self,
        query: &ast::Query,
        view: Option<&Arc<ViewDef>>,
        at: &SplitAt,
        partner: usize,
    ) -> Option<Split> {
        let outer = std::mem::replace(&mut self.split, vec![at.clone()]);
        let plan = match view {
            Some(v) => self.bind_view_query(v, query, &at.alias),
            None => self.bind_derived_query(query, &at.alias),
        };
        self.split = outer;
        self.split_bound = None;
        let plan = plan.ok()?;
        let QueryBody::Select(s) = &plan.body else {
            return None;
        };
        let Source::Table(scan) = &s.source else {
            return None;
        };
        if scan.access.is_full_scan() {
            return None;
        }
        let n = scan.table.approximate_rows().max(1) as f64;
        let stats = scan.table.stats();
        let per_key = access_rows(scan, stats.as_deref(), &scan.access, n, &self.known);
        // indexes[0] is the clustered index: its entries are the rows.
        let row_cost = match scan.access.index == 0 {
            true => 1.0,
            false => crate::plan::index_dive::SECONDARY_ROW_COST,
        };
        Some(Split {
            partner,
            per_key: 1.0 + per_key * row_cost,
            groups: (n / per_key.max(1.0)).max(1.0),
            whole: n,
        })
    }

    /// The splits the join order chose (`taken`, units of `candidates`),
    /// for the FROM's second binding, with their key columns at the
    /// positions `moved` gives them.
    pub(super) fn take_splits(
        &mut self,
        candidates: Vec<Candidate>,
        taken: &[usize],
        moved: &dyn Fn(usize) -> usize,
    ) {
        for c in candidates.into_iter().filter(|c| taken.contains(&c.unit)) {
            let mut column = c.column;
            column.index = moved(column.index);
            self.split.push(SplitAt {
                alias: c.alias,
                key: c.key,
                column,
            });
        }
    }
}

/// For `a = b` with one side a column of [start, end) and the other a
/// column outside: (that column, the other).
fn equated(c: &crate::expr::BExpr, start: usize, end: usize) -> Option<(usize, usize)> {
    use crate::expr::BExpr;
    let BExpr::Binary(BinaryOp::Eq, a, b) = c else {
        return None;
    };
    let (BExpr::Column(a), BExpr::Column(b)) = (&**a, &**b) else {
        return None;
    };
    let inside = |i: &usize| (start..end).contains(i);
    match (inside(a), inside(b)) {
        (true, false) => Some((*a, *b)),
        (false, true) => Some((*b, *a)),
        _ => None,
    }
}
