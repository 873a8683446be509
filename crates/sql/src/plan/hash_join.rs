//! Hash joins: when the table joined next has no index its join columns
//! can use, its rows are read once into a hash table keyed by the join
//! columns, and each row from the left looks up its matches, instead of
//! scanning the whole table again for every row on the left.
//!
//! The hash table only narrows the candidates: every condition of the
//! join is still checked on each candidate, so SQL's comparison rules
//! (types, collations, NULL) decide the result, not the hashing.

use crate::expr::BExpr;
use crate::parser::BinaryOp;
use crate::plan::bind::{conjoin, split_conjuncts};
use crate::plan::{Access, Source};

/// How a join's right side is hashed and probed.
#[derive(Debug)]
pub struct HashJoin {
    /// Key expressions over the left row (the probe).
    pub probe: Vec<BExpr>,
    /// Matching key expressions over the right side's row, placed at its
    /// offset with NULL before it (the build).
    pub build: Vec<BExpr>,
    /// The conditions that read only the right side: they pick the rows
    /// worth keeping while building.
    pub build_filter: Option<BExpr>,
    /// The build reads nothing of an enclosing query's row, so one build
    /// serves the whole statement.
    pub reusable: bool,
}

/// The lowest and highest row position `e` reads, if any; None for the
/// bounds when it reads none. `opaque` is set by what a hash key or a
/// build condition must not contain (subqueries, an enclosing row).
fn reads(e: &BExpr, lo: &mut usize, hi: &mut usize, opaque: &mut bool) {
    match e {
        BExpr::Column(i) => {
            *lo = (*lo).min(*i);
            *hi = (*hi).max(*i + 1);
        }
        BExpr::Outer { .. } | BExpr::Subquery(_) | BExpr::Exists { .. } => *opaque = true,
        BExpr::InSubquery { .. } => *opaque = true,
        _ => {}
    }
    e.for_each_child(&mut |c| reads(c, lo, hi, opaque));
}

/// Where `e` reads: (lowest, end, opaque); (usize::MAX, 0, _) reads none.
fn extent(e: &BExpr) -> (usize, usize, bool) {
    let (mut lo, mut hi, mut opaque) = (usize::MAX, 0, false);
    reads(e, &mut lo, &mut hi, &mut opaque);
    (lo, hi, opaque)
}

/// Whether `e` reads only positions in [start, end) (or none), and
/// nothing opaque.
fn within(e: &BExpr, start: usize, end: usize) -> bool {
    let (lo, hi, opaque) = extent(e);
    !opaque && (hi == 0 || (lo >= start && hi <= end))
}

/// Whether an access path's keys take values from outside [start, end)
/// (from the rows before it, or an enclosing query's).
pub fn access_reads_outside(access: &Access, start: usize, end: usize) -> bool {
    let outside = |e: &BExpr| !within(e, start, end);
    access.ranges.iter().any(|r| {
        r.eq.iter().any(outside)
            || r.lower
                .iter()
                .chain(r.upper.iter())
                .any(|(e, _)| outside(e))
    })
}

/// A key pair from `conjunct` if it equates something of the left
/// (positions before `start`) with something of the right side.
fn key_pair(conjunct: &BExpr, start: usize, end: usize) -> Option<(BExpr, BExpr)> {
    let BExpr::Binary(BinaryOp::Eq, a, b) = conjunct else {
        return None;
    };
    let left_only = |e: &BExpr| {
        let (_, hi, opaque) = extent(e);
        !opaque && hi > 0 && hi <= start
    };
    let right_only = |e: &BExpr| {
        let (_, hi, _) = extent(e);
        hi > 0 && within(e, start, end)
    };
    if left_only(a) && right_only(b) {
        return Some(((**a).clone(), (**b).clone()));
    }
    if left_only(b) && right_only(a) {
        return Some(((**b).clone(), (**a).clone()));
    }
    None
}

/// The hash join for `right` joined with `on` after the rows before it,
/// if it has equality conditions with them and its access path does not
/// already look them up through an index.
pub fn plan(right: &Source, on: &Option<BExpr>) -> Option<HashJoin> {
    let (start, end, conds) = match right {
        Source::Table(scan) => {
            let end = scan.offset + scan.def.columns.len();
            if access_reads_outside(&scan.access, scan.offset, end) {
                return None;
            }
            let mut conds = scan
                .filter
                .as_ref()
                .map(split_conjuncts)
                .unwrap_or_default();
            conds.extend(on.as_ref().map(split_conjuncts).unwrap_or_default());
            (scan.offset, end, conds)
        }
        Source::Derived { plan, offset } => {
            let conds = on.as_ref().map(split_conjuncts).unwrap_or_default();
            (*offset, offset + plan.columns.len(), conds)
        }
        _ => return None,
    };
    let (mut probe, mut build, mut own) = (Vec::new(), Vec::new(), Vec::new());
    for c in conds {
        if let Some((p, b)) = key_pair(&c, start, end) {
            probe.push(p);
            build.push(b);
        } else if within(&c, start, end) {
            own.push(c);
        }
    }
    if probe.is_empty() {
        return None;
    }
    let reusable = match right {
        Source::Derived { plan, .. } => !plan.correlated,
        _ => true,
    };
    Some(HashJoin {
        probe,
        build,
        build_filter: conjoin(own),
        reusable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(i: usize) -> BExpr {
        BExpr::Column(i)
    }

    fn eq(a: BExpr, b: BExpr) -> BExpr {
        BExpr::Binary(BinaryOp::Eq, Box::new(a), Box::new(b))
    }

    #[test]
    fn a_key_pair_needs_one_side_each() {
        // Right side at [3, 6).
        let (p, b) = key_pair(&eq(col(4), col(1)), 3, 6).expect("left = right");
        assert!(matches!((p, b), (BExpr::Column(1), BExpr::Column(4))));
        assert!(key_pair(&eq(col(4), col(5)), 3, 6).is_none(), "both right");
        assert!(key_pair(&eq(col(1), col(2)), 3, 6).is_none(), "both left");
        let lit = BExpr::Literal(lockstep_types::Value::Int(1));
        assert!(key_pair(&eq(col(4), lit), 3, 6).is_none(), "a constant");
        let mixed = BExpr::Binary(BinaryOp::Plus, Box::new(col(1)), Box::new(col(4)));
        assert!(key_pair(&eq(mixed, col(5)), 3, 6).is_none(), "mixed side");
        let outer = BExpr::Outer { depth: 1, index: 0 };
        assert!(
            key_pair(&eq(outer, col(4)), 3, 6).is_none(),
            "enclosing row"
        );
    }
}
