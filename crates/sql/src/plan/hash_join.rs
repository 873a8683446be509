//! Hash joins: when the table joined next has no index its join columns
//! can use, its rows are read once into a hash table keyed by the join
//! columns, and each row from the left looks up its matches, instead of
//! scanning the whole table again for every row on the left.
//!
//! The hash table only narrows the candidates: every condition of the
//! join is still checked on each candidate, so SQL's comparison rules
//! (types, collations, NULL) decide the result, not the hashing.
//!
//! A correlated subquery's first table is looked up the same way by the
//! enclosing row's values (`t2.g = t1.g` inside `EXISTS (SELECT ... FROM
//! t2 ...)`): the table is hashed once per statement and each execution
//! of the subquery reads only its matches, where it would scan the whole
//! table once per row outside.

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

/// What an expression reads: row positions [lo, hi) (hi 0: none), an
/// enclosing query's row, a subquery.
struct Reads {
    lo: usize,
    hi: usize,
    outer: bool,
    subquery: bool,
}

fn reads(e: &BExpr, r: &mut Reads) {
    match e {
        BExpr::Column(i) => {
            r.lo = r.lo.min(*i);
            r.hi = r.hi.max(*i + 1);
        }
        BExpr::Outer { .. } => r.outer = true,
        BExpr::Subquery(_) | BExpr::Exists { .. } | BExpr::InSubquery { .. } => r.subquery = true,
        _ => {}
    }
    e.for_each_child(&mut |c| reads(c, r));
}

fn extent(e: &BExpr) -> Reads {
    let mut r = Reads {
        lo: usize::MAX,
        hi: 0,
        outer: false,
        subquery: false,
    };
    reads(e, &mut r);
    r
}

/// Whether `e` reads only positions in [start, end) (or none), and
/// neither a subquery nor an enclosing row.
pub(crate) fn within(e: &BExpr, start: usize, end: usize) -> bool {
    let r = extent(e);
    !r.outer && !r.subquery && (r.hi == 0 || (r.lo >= start && r.hi <= end))
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

/// A key pair from `conjunct` if it equates something of the rows before
/// `start` (or of an enclosing query's row) with something of [start,
/// end): (probe, build).
fn key_pair(conjunct: &BExpr, start: usize, end: usize) -> Option<(BExpr, BExpr)> {
    let BExpr::Binary(BinaryOp::Eq, a, b) = conjunct else {
        return None;
    };
    let before = |e: &BExpr| {
        let r = extent(e);
        !r.subquery && r.hi <= start && (r.hi > 0 || r.outer)
    };
    let inside = |e: &BExpr| extent(e).hi > 0 && within(e, start, end);
    if before(a) && inside(b) {
        return Some(((**a).clone(), (**b).clone()));
    }
    if before(b) && inside(a) {
        return Some(((**b).clone(), (**a).clone()));
    }
    None
}

/// The hash join for `right` joined with `on` after the rows before it,
/// if it has equality conditions with them and its access path does not
/// already look them up through an index.
pub fn plan(right: &Source, on: &Option<BExpr>) -> Option<HashJoin> {
    let mut conds = match right {
        Source::Table(scan) => scan
            .filter
            .as_ref()
            .map(split_conjuncts)
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    conds.extend(on.as_ref().map(split_conjuncts).unwrap_or_default());
    plan_over(right, conds)
}

/// The hash plan of `right` from the conditions `conds` that apply to it.
fn plan_over(right: &Source, conds: Vec<BExpr>) -> Option<HashJoin> {
    let (start, end) = match right {
        Source::Table(scan) => {
            let end = scan.offset + scan.def.columns.len();
            if access_reads_outside(&scan.access, scan.offset, end) {
                return None;
            }
            (scan.offset, end)
        }
        Source::Derived {
            plan,
            offset,
            lateral: None,
        } => (*offset, offset + plan.columns.len()),
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

/// The first table of a correlated subquery, looked up by the enclosing
/// row's values through a hash table when `filter` (the conditions that
/// apply to it) equates its columns with them and no index serves that:
/// a join of the one empty row with it. Anything else is returned as is.
pub fn correlated_lookup(first: Source, filter: &Option<BExpr>) -> Source {
    let conds = filter.as_ref().map(split_conjuncts).unwrap_or_default();
    let conds = match &first {
        Source::Table(scan) => {
            let own = scan.filter.as_ref().map(split_conjuncts);
            [conds, own.unwrap_or_default()].concat()
        }
        _ => conds,
    };
    match plan_over(&first, conds) {
        Some(hash) => Source::Join {
            left: Box::new(Source::Dual),
            right: Box::new(first),
            kind: crate::parser::JoinKind::Inner,
            on: None,
            hash: Some(Box::new(hash)),
            not_exists: false,
        },
        None => first,
    }
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
        let outer = || BExpr::Outer { depth: 1, index: 0 };
        let (p, _) = key_pair(&eq(outer(), col(4)), 3, 6).expect("enclosing row");
        assert!(
            matches!(p, BExpr::Outer { .. }),
            "probes with the enclosing row"
        );
        assert!(
            key_pair(&eq(outer(), col(1)), 3, 6).is_none(),
            "no right side"
        );
    }
}
