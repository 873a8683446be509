//! The fraction of a table's rows a condition keeps (MySQL's "filtering
//! effect"): from the column's histogram when the condition compares a
//! column that leads no index with constants (=, <>, <, <=, >, >=,
//! BETWEEN, IN, IS [NOT] NULL, either way round); otherwise MySQL's fixed
//! guesses (an equality a tenth, a comparison a third, BETWEEN a ninth).
//! A column that leads an index is estimated by its index statistics
//! instead, so planning a point query never reads a histogram.

use crate::expr::{store_value, BExpr, Func};
use crate::parser::BinaryOp as B;
use crate::plan::TableScan;
use lockstep_tables::histogram::Histogram;
use lockstep_types::Value;

/// The fraction of rows `e` keeps; `scan` is the table whose columns'
/// histograms may answer (None: guesses only).
pub fn estimate(e: &BExpr, scan: Option<&TableScan>) -> f64 {
    match e {
        BExpr::Binary(B::Or, a, b) => {
            let (a, b) = (estimate(a, scan), estimate(b, scan));
            (a + b - a * b).min(1.0)
        }
        BExpr::Binary(B::And, a, b) => estimate(a, scan) * estimate(b, scan),
        _ => scan
            .and_then(|s| from_histogram(e, s))
            .unwrap_or_else(|| guess(e)),
    }
}

/// MySQL's guesses without statistics. A join condition is mostly an
/// equality, so a chain of them keeps row estimates flat instead of
/// growing with every table.
fn guess(e: &BExpr) -> f64 {
    match e {
        BExpr::Binary(B::Eq | B::NullSafeEq, ..) => 0.1,
        BExpr::Binary(B::Lt | B::LtEq | B::Gt | B::GtEq, ..) => 1.0 / 3.0,
        BExpr::Between { negated: false, .. } => 1.0 / 9.0,
        BExpr::InList {
            list,
            negated: false,
            ..
        } => (0.1 * list.len() as f64).min(0.5),
        BExpr::IsNull(_, false) => 0.1,
        // MySQL's guesses for `<>` and IS NOT NULL: most rows pass.
        BExpr::Binary(B::NotEq, ..) | BExpr::IsNull(_, true) => 0.9,
        _ => 0.5,
    }
}

fn strip_fold(e: &BExpr) -> &BExpr {
    match e {
        BExpr::Func(Func::FoldCase, args) if args.len() == 1 => &args[0],
        e => e,
    }
}

fn constant(e: &BExpr) -> Option<&Value> {
    match strip_fold(e) {
        BExpr::Literal(v) => Some(v),
        _ => None,
    }
}

/// The histogram of `e`'s column, when `e` is a column of `scan` that
/// leads no index; with its position.
fn histogram_of<'a>(
    e: &BExpr,
    scan: &TableScan,
    all: &'a Option<std::sync::Arc<[lockstep_tables::histogram::ColumnHistogram]>>,
) -> Option<(&'a Histogram, usize)> {
    let BExpr::Column(i) = strip_fold(e) else {
        return None;
    };
    let pos = i.checked_sub(scan.offset)?;
    let col = scan.def.columns.get(pos)?;
    if scan
        .def
        .indexes
        .iter()
        .any(|ix| ix.columns.first() == Some(&pos))
    {
        return None;
    }
    let h = all.as_deref()?.iter().find(|h| h.column == col.name)?;
    Some((&h.histogram, pos))
}

/// A constant in the column's type (None: not comparable so; NULL is
/// `Some(Null)`).
fn probe(v: &Value, scan: &TableScan, pos: usize) -> Option<Value> {
    let col = &scan.def.columns[pos];
    match v {
        Value::Null => Some(Value::Null),
        v => store_value(v.clone(), col.data_type, &col.name).ok(),
    }
}

/// `col op constant` either way round, with the operator as seen from
/// the column.
fn comparison(e: &BExpr) -> Option<(&BExpr, B, &Value)> {
    let BExpr::Binary(op, l, r) = e else {
        return None;
    };
    let flipped = match op {
        B::Lt => B::Gt,
        B::LtEq => B::GtEq,
        B::Gt => B::Lt,
        B::GtEq => B::LtEq,
        B::Eq | B::NullSafeEq | B::NotEq => *op,
        _ => return None,
    };
    match (constant(l), constant(r)) {
        (None, Some(v)) => Some((l, *op, v)),
        (Some(v), None) => Some((r, flipped, v)),
        _ => None,
    }
}

fn from_histogram(e: &BExpr, scan: &TableScan) -> Option<f64> {
    let column = match e {
        BExpr::IsNull(x, _) => &**x,
        BExpr::Between { expr, .. } | BExpr::InList { expr, .. } => &**expr,
        e => comparison(e)?.0,
    };
    // Only a condition on a column without an index reads histograms.
    if !matches!(strip_fold(column), BExpr::Column(_)) {
        return None;
    }
    let all = scan.table.histograms();
    let (h, pos) = histogram_of(column, scan, &all)?;
    let value = |v: &BExpr| constant(v).and_then(|v| probe(v, scan, pos));
    let kept = match e {
        BExpr::IsNull(_, negated) => match negated {
            false => h.null_fraction,
            true => h.non_null(),
        },
        BExpr::Between {
            low, high, negated, ..
        } => {
            let (low, high) = (value(low)?, value(high)?);
            let inside = if low.is_null() || high.is_null() {
                0.0
            } else {
                (h.below(&high, true) - h.below(&low, false)).max(0.0)
            };
            negate(h, inside, *negated)
        }
        BExpr::InList { list, negated, .. } => {
            let each: Option<Vec<Value>> = list.iter().map(value).collect();
            let hit: f64 = each?
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| h.equal(v))
                .sum();
            negate(h, hit.min(h.non_null()), *negated)
        }
        e => {
            let (_, op, v) = comparison(e)?;
            compare(h, op, &probe(v, scan, pos)?)
        }
    };
    Some(kept.clamp(0.0, 1.0))
}

/// NOT of a test that keeps `kept`: the other non-NULL rows.
fn negate(h: &Histogram, kept: f64, negated: bool) -> f64 {
    match negated {
        true => h.non_null() - kept,
        false => kept,
    }
}

fn compare(h: &Histogram, op: B, v: &Value) -> f64 {
    if v.is_null() {
        // Only <=> NULL matches anything: the NULL rows.
        return if op == B::NullSafeEq {
            h.null_fraction
        } else {
            0.0
        };
    }
    match op {
        B::Eq | B::NullSafeEq => h.equal(v),
        B::NotEq => h.non_null() - h.equal(v),
        B::Lt => h.below(v, false),
        B::LtEq => h.below(v, true),
        B::Gt => h.non_null() - h.below(v, true),
        B::GtEq => h.non_null() - h.below(v, false),
        _ => 1.0,
    }
}

/// EXPLAIN's filtered: the percent of the rows an access reads that the
/// table's remaining conditions keep.
pub fn filtered(scan: &TableScan) -> f64 {
    let kept = scan
        .filter
        .as_ref()
        .map_or(1.0, |f| estimate(f, Some(scan)));
    kept * 100.0
}
