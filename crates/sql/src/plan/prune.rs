//! Column pruning: a SELECT's table scans decode only the columns the
//! statement reads from the stored row images (`tables::Row`); decoding a
//! wide row (sysbench's CHAR(120) `c` and CHAR(60) `pad`) to read one
//! integer would be most of a range scan's allocations.
//!
//! Conservative by construction: a statement with a subquery anywhere is
//! left whole, since a correlated subquery reads the outer row through
//! positions this pass does not follow.

use crate::expr::{BExpr, Func};
use crate::plan::{SelectPlan, Source};

/// Marks, in every table scan of `plan`, which of its columns are read,
/// and which projected columns can be moved out of the row.
pub fn prune(plan: &mut SelectPlan) {
    plan.order_from = order_from(plan);
    plan.moves = column_moves(plan);
    let mut used = Vec::new();
    let mut whole = false;
    let mut mark = |e: &BExpr| mark_columns(e, &mut used, &mut whole);
    if let Some(f) = &plan.filter {
        mark(f);
    }
    match &plan.aggregate {
        // Projection, ORDER BY and HAVING are over the aggregate row.
        Some(agg) => {
            agg.group_by.iter().for_each(&mut mark);
            agg.calls
                .iter()
                .filter_map(|c| c.arg.as_ref())
                .for_each(&mut mark);
        }
        None => {
            plan.projection.iter().for_each(&mut mark);
            plan.order.iter().for_each(|(e, _)| mark(e));
            // Window functions read the source row too.
            if let Some(w) = &plan.window {
                w.for_each_expr(&mut mark);
            }
        }
    }
    mark_source(&plan.source, &mut mark);
    if !whole {
        assign(&mut plan.source, &used);
    }
}

/// Per ORDER BY key of `p`: the projection item holding the value it sorts
/// by. `ORDER BY c` over `SELECT c` (or `SELECT DISTINCT c`) would otherwise
/// copy `c` once for the result and once more, folded, as the sort key.
fn order_from(p: &SelectPlan) -> Vec<Option<usize>> {
    p.order
        .iter()
        .map(|(e, _)| {
            let col = match e {
                BExpr::Column(i) => *i,
                BExpr::Func(Func::FoldCase, args) => match args.as_slice() {
                    [BExpr::Column(i)] => *i,
                    _ => return None,
                },
                _ => return None,
            };
            p.projection
                .iter()
                .position(|e| matches!(e, BExpr::Column(i) if *i == col))
        })
        .collect()
}

/// Per projection item of `p`: the column it may move out of the source row
/// (a plain column reference that nothing else in the projection or ORDER BY
/// reads; ORDER BY keys taken from the projection read it there). Decided
/// once per plan, not per execution.
fn column_moves(p: &SelectPlan) -> Vec<Option<usize>> {
    fn collect(e: &BExpr, refs: &mut Vec<usize>) {
        if let BExpr::Column(i) = e {
            refs.push(*i);
        }
        e.for_each_child(&mut |c| collect(c, refs));
    }
    let mut refs = Vec::new();
    p.projection.iter().for_each(|e| collect(e, &mut refs));
    p.order
        .iter()
        .zip(&p.order_from)
        .filter(|(_, from)| from.is_none())
        .for_each(|((e, _), _)| collect(e, &mut refs));
    p.projection
        .iter()
        .map(|e| match e {
            BExpr::Column(i) if refs.iter().filter(|&&r| r == *i).count() == 1 => Some(*i),
            _ => None,
        })
        .collect()
}

fn mark_columns(e: &BExpr, used: &mut Vec<bool>, whole: &mut bool) {
    match e {
        BExpr::Column(i) => {
            if used.len() <= *i {
                used.resize(i + 1, false);
            }
            used[*i] = true;
        }
        BExpr::InSubquery { .. }
        | BExpr::Exists { .. }
        | BExpr::Subquery(_)
        | BExpr::Stored(..) => *whole = true,
        _ => {}
    }
    e.for_each_child(&mut |c| mark_columns(c, used, whole));
}

/// ON conditions and the key expressions of access paths (a join's inner
/// side looks up keys built from outer columns).
fn mark_source(src: &Source, mark: &mut dyn FnMut(&BExpr)) {
    match src {
        Source::Table(scan) => {
            for f in scan.range_check.iter().chain(&scan.filter) {
                mark(f);
            }
            for r in &scan.access.ranges {
                r.eq.iter().for_each(&mut *mark);
                for (e, _) in r.lower.iter().chain(r.upper.iter()) {
                    mark(e);
                }
            }
        }
        Source::Join {
            left, right, on, ..
        } => {
            if let Some(on) = on {
                mark(on);
            }
            mark_source(left, mark);
            mark_source(right, mark);
        }
        // The columns a LATERAL table reads of the row before it.
        Source::Derived {
            lateral: Some(l), ..
        } => l.refs.iter().for_each(|&i| mark(&BExpr::Column(i))),
        Source::Dual | Source::Derived { .. } => {}
    }
}

fn assign(src: &mut Source, used: &[bool]) {
    match src {
        Source::Table(scan) => {
            let needed: Vec<bool> = (0..scan.def.columns.len())
                .map(|i| used.get(scan.offset + i).copied().unwrap_or(false))
                .collect();
            scan.needed = needed.contains(&false).then_some(needed);
        }
        Source::Join { left, right, .. } => {
            assign(left, used);
            assign(right, used);
        }
        Source::Dual | Source::Derived { .. } => {}
    }
}
