//! Which semi-join nests compare their keys exactly (plan/semijoin_nest.rs).
//!
//! A nest is `SELECT DISTINCT k ..` joined by `x = k`: DISTINCT must merge
//! every two keys that one outer value could equal, or an outer row would
//! appear once per key it matches. Integer keys always qualify: two
//! distinct integers never equal one value. Other keys qualify when every
//! equality that reads them compares them with a column they are
//! interchangeable with (`equalities::interchangeable`): decimals with
//! decimals, dates with their own type, text with text under the
//! collation (DISTINCT merges 'a' and 'A' as `=` does). Against a number,
//! '1' and '01' are two keys equal to 1, so text keys compared with
//! anything else are refused.

use crate::expr::BExpr;
use crate::parser::BinaryOp;
use crate::plan::equalities::{interchangeable, side_column};
use crate::plan::{SelectPlan, Source};
use lockstep_types::DataType;
use std::ops::Range;

/// Whether every key of the nest at `span` (of types `keys`) compares
/// exactly in the flattened SELECT `s`.
pub fn exact(s: &SelectPlan, span: &Range<usize>, keys: &[DataType]) -> bool {
    if keys.iter().all(|t| t.is_integer()) {
        return true;
    }
    let types = row_types(&s.source);
    let type_of = |i: usize| {
        types
            .iter()
            .find(|(r, _)| r.contains(&i))
            .map(|(r, t)| t[i - r.start])
    };
    let mut ok = true;
    let mut check = |l: &BExpr, r: &BExpr| {
        let (Some((a, fa)), Some((b, fb))) = (side_column(l), side_column(r)) else {
            ok = false;
            return;
        };
        ok &= match (type_of(a), type_of(b)) {
            (Some(ta), Some(tb)) => interchangeable(ta, tb, fa && fb),
            _ => false,
        };
    };
    let mut conds = Vec::new();
    conditions(&s.source, &mut conds);
    conds.extend(s.filter.iter());
    for c in conds {
        equalities_reading(c, span, &mut check);
    }
    access_pairs(&s.source, span, &mut |key_col, value| {
        let Some((v, _)) = side_column(value) else {
            return false;
        };
        type_of(v).is_some_and(|tv| interchangeable(key_col, tv, true))
    }) && ok
}

/// The column types of every leaf of `src`, by row position.
fn row_types(src: &Source) -> Vec<(Range<usize>, Vec<DataType>)> {
    let mut out = Vec::new();
    fn walk(src: &Source, out: &mut Vec<(Range<usize>, Vec<DataType>)>) {
        match src {
            Source::Table(t) => {
                let types = t.def.columns.iter().map(|c| c.data_type).collect();
                out.push((t.offset..t.offset + t.def.columns.len(), types));
            }
            Source::Derived { plan, offset, .. } => {
                let types = plan.columns.iter().map(|c| c.data_type).collect();
                out.push((*offset..offset + plan.columns.len(), types));
            }
            Source::Join { left, right, .. } => {
                walk(left, out);
                walk(right, out);
            }
            Source::Dual => {}
        }
    }
    walk(src, &mut out);
    out
}

/// The conditions a source checks: filters, range checks and ONs.
fn conditions<'a>(src: &'a Source, out: &mut Vec<&'a BExpr>) {
    match src {
        Source::Table(t) => out.extend(t.filter.iter().chain(t.range_check.iter())),
        Source::Join {
            left, right, on, ..
        } => {
            conditions(left, out);
            conditions(right, out);
            out.extend(on.iter());
        }
        Source::Derived { .. } | Source::Dual => {}
    }
}

fn reads(e: &BExpr, span: &Range<usize>) -> bool {
    let mut found = matches!(e, BExpr::Column(i) if span.contains(i));
    e.for_each_child(&mut |c| found = found || reads(c, span));
    found
}

/// Calls `f` with both sides of each `=` in `e` that reads `span`; any
/// other use of the span is refused through `f` too (as a non-column).
fn equalities_reading(e: &BExpr, span: &Range<usize>, f: &mut dyn FnMut(&BExpr, &BExpr)) {
    match e {
        BExpr::Binary(BinaryOp::And, a, b) => {
            equalities_reading(a, span, f);
            equalities_reading(b, span, f);
        }
        BExpr::Binary(BinaryOp::Eq, l, r) if reads(e, span) => f(l, r),
        e if reads(e, span) => f(e, &BExpr::Literal(lockstep_types::Value::Null)),
        _ => {}
    }
}

/// Whether every key value read from `span` by an access path suits its
/// index column (`suits(column type, value)`).
fn access_pairs(
    src: &Source,
    span: &Range<usize>,
    suits: &mut dyn FnMut(DataType, &BExpr) -> bool,
) -> bool {
    match src {
        Source::Table(t) => {
            let cols = &t.def.indexes[t.access.index].columns;
            t.access.ranges.iter().all(|r| {
                r.eq.iter()
                    .zip(cols)
                    .all(|(e, &c)| !reads(e, span) || suits(t.def.columns[c].data_type, e))
            })
        }
        Source::Join { left, right, .. } => {
            access_pairs(left, span, suits) && access_pairs(right, span, suits)
        }
        Source::Derived { .. } | Source::Dual => true,
    }
}
