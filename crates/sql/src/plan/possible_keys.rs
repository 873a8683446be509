//! EXPLAIN's possible_keys: the indexes of a table whose leading column a
//! condition the table checks could look up (a comparison with a value
//! known before the table is read, BETWEEN, IN, IS NULL), and those
//! sharing the leading column of the index its access path uses. In a
//! join, the conditions of every table count (`join_conditions`), so a
//! table read first lists the indexes a later join condition reaches.

use crate::expr::BExpr;
use crate::parser::BinaryOp as B;
use crate::plan::bind::split_conjuncts;
use crate::plan::{Source, TableScan};

use crate::plan::bind::unwrapped as strip_fold;

/// Whether `e` reads a column in [start, end).
fn reads(e: &BExpr, start: usize, end: usize) -> bool {
    let mut found = matches!(e, BExpr::Column(i) if (start..end).contains(i));
    e.for_each_child(&mut |c| found |= reads(c, start, end));
    found
}

/// The column of `scan` a conjunct could look up by.
fn lookup_column(e: &BExpr, scan: &TableScan) -> Option<usize> {
    let (start, end) = (scan.offset, scan.offset + scan.def.columns.len());
    let own = |x: &BExpr| match strip_fold(x) {
        BExpr::Column(i) if (start..end).contains(i) => Some(i - start),
        _ => None,
    };
    let outside = |x: &BExpr| !reads(x, start, end);
    match e {
        BExpr::Binary(B::Eq | B::NullSafeEq | B::Lt | B::LtEq | B::Gt | B::GtEq, l, r) => {
            match (own(l), own(r)) {
                (Some(c), None) if outside(r) => Some(c),
                (None, Some(c)) if outside(l) => Some(c),
                _ => None,
            }
        }
        BExpr::Between {
            negated: false,
            low,
            high,
            expr,
        } if outside(low) && outside(high) => own(expr),
        BExpr::InList {
            expr,
            list,
            negated: false,
        } if list.iter().all(outside) => own(expr),
        BExpr::IsNull(x, false) => own(x),
        _ => None,
    }
}

/// The conditions of a join: each table's filter and each ON, and the
/// equalities of the key lookups tables make (`key part = value`).
pub fn join_conditions(src: &Source, out: &mut Vec<BExpr>) {
    match src {
        Source::Table(scan) => {
            out.extend(
                scan.filter
                    .as_ref()
                    .map(split_conjuncts)
                    .unwrap_or_default(),
            );
            let parts = &scan.def.indexes[scan.access.index].columns;
            for r in &scan.access.ranges {
                for (&col, e) in parts.iter().zip(&r.eq) {
                    let col = Box::new(BExpr::Column(scan.offset + col));
                    out.push(BExpr::Binary(B::Eq, col, Box::new(e.clone())));
                }
            }
        }
        Source::Join {
            left,
            right,
            on,
            kind,
            ..
        } => {
            join_conditions(left, out);
            let mut inner = Vec::new();
            join_conditions(right, &mut inner);
            inner.extend(on.as_ref().map(split_conjuncts).unwrap_or_default());
            if *kind == crate::parser::JoinKind::Left {
                // A LEFT JOIN's conditions never look up its outer side.
                let (start, end) = crate::plan::join_order::span(right);
                inner.retain(|c| !reads_outside(c, start, end));
            }
            out.extend(inner);
        }
        Source::Derived { .. } | Source::Dual => {}
    }
}

/// Whether `e` reads a column outside [start, end).
fn reads_outside(e: &BExpr, start: usize, end: usize) -> bool {
    let mut found = matches!(e, BExpr::Column(i) if !(start..end).contains(i));
    e.for_each_child(&mut |c| found |= reads_outside(c, start, end));
    found
}

/// The conjuncts of `filter` the access path of `scan` does not serve
/// (a lookup on a key part it uses serves its conjunct): what EXPLAIN
/// counts as the table's own condition.
pub fn unserved(scan: &TableScan, filter: &BExpr) -> Option<BExpr> {
    let access = &scan.access;
    let used = access.ranges.iter().map(|r| {
        let bounded = r.lower.is_some() || r.upper.is_some();
        r.eq.len() + usize::from(bounded)
    });
    let used = used.max().unwrap_or(0);
    let parts = &scan.def.indexes[access.index].columns;
    let parts = &parts[..used.min(parts.len())];
    let served = |c: &BExpr| lookup_column(c, scan).is_some_and(|col| parts.contains(&col));
    let rest = split_conjuncts(filter).into_iter().filter(|c| !served(c));
    crate::plan::bind::conjoin(rest.collect())
}

/// The names of the possible keys, comma separated as MySQL prints them.
pub fn possible_keys(scan: &TableScan) -> Vec<String> {
    possible_keys_in(scan, &[])
}

/// `possible_keys` with the conditions of the whole join, which reach a
/// table read before the one that checks them.
pub fn possible_keys_in(scan: &TableScan, join: &[BExpr]) -> Vec<String> {
    let def = &scan.def;
    let mut reached: Vec<usize> = join.iter().filter_map(|c| lookup_column(c, scan)).collect();
    if !scan.access.is_full_scan() {
        reached.extend(def.indexes[scan.access.index].columns.first().copied());
    }
    if let Some(f) = &scan.filter {
        let conds = split_conjuncts(f);
        reached.extend(conds.iter().filter_map(|c| lookup_column(c, scan)));
    }
    let leads =
        |ix: &&lockstep_tables::IndexDef| ix.columns.first().is_some_and(|c| reached.contains(c));
    def.indexes
        .iter()
        .filter(leads)
        .map(|ix| ix.name.clone())
        .collect()
}
