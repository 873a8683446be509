//! The fraction of a table's rows a condition keeps (MySQL's "filtering
//! effect"): from the column's histogram when the condition compares a
//! column that leads no index with constants (=, <>, <, <=, >, >=,
//! BETWEEN, IN, IS [NOT] NULL, either way round); otherwise MySQL's fixed
//! guesses (an equality a tenth, a comparison a third, BETWEEN a ninth).
//! A column that leads an index is estimated by its index statistics
//! instead, so planning a point query never reads a histogram.
//!
//! A parameter of a prepared statement is estimated by the value an
//! EXECUTE binds to it, as MySQL plans at execute time. Bound at PREPARE
//! without values, the conditions whose estimate a value would change are
//! kept (`Known::probes`); the session re-plans such a statement per
//! range of those estimates (`session::replan`).

use crate::expr::{store_value, to_utc, BExpr, Func};
use crate::parser::BinaryOp as B;
use crate::plan::bind::unwrapped;
use crate::plan::{Access, TableScan};
use lockstep_tables::histogram::Histogram;
use lockstep_types::Value;
use std::cell::RefCell;

/// What estimates know beyond the statement text.
#[derive(Default)]
pub struct Known {
    /// The values bound to the parameters (empty: not known yet).
    pub params: Vec<Value>,
    /// The session's time zone (seconds east of UTC): a constant compared
    /// with a TIMESTAMP column is probed in UTC, as the histogram holds it.
    pub tz_offset: i64,
    /// Estimates a parameter's value would have changed, recorded while
    /// the values are not known.
    pub probes: RefCell<Vec<Probe>>,
    /// Index dives made while planning this statement (`index_dive`).
    pub dives: RefCell<Vec<crate::plan::index_dive::Dived>>,
}

/// One condition on one table whose estimate depends on parameters: by
/// the column's histogram, or by a dive of an index range (`range`) whose
/// choice against a full scan waits for the values.
#[derive(Clone)]
pub struct Probe {
    cond: BExpr,
    scan: TableScan,
    range: Option<crate::plan::Access>,
}

impl Probe {
    /// The condition's estimate with the parameters `known` holds.
    pub fn estimate(&self, known: &Known) -> f64 {
        use crate::plan::index_dive::{dive, Dive};
        let Some(access) = &self.range else {
            return estimate(&self.cond, Some(&self.scan), known);
        };
        let n = self.scan.table.approximate_rows().max(1) as f64;
        match dive(&self.scan, access, known) {
            Dive::Rows(rows) => (rows / n).min(1.0),
            Dive::WaitsForParam | Dive::Unknown => 1.0,
        }
    }

    /// A probe of the rows `access` reads from `scan`'s table.
    pub fn range(scan: &TableScan, access: &crate::plan::Access) -> Probe {
        Probe {
            cond: BExpr::Literal(Value::Null),
            scan: detached(scan),
            range: Some(access.clone()),
        }
    }
}

/// The fraction of rows `e` keeps; `scan` is the table whose columns'
/// histograms may answer (None: guesses only).
pub fn estimate(e: &BExpr, scan: Option<&TableScan>, known: &Known) -> f64 {
    match e {
        BExpr::Binary(B::Or, a, b) => {
            let (a, b) = (estimate(a, scan, known), estimate(b, scan, known));
            (a + b - a * b).min(1.0)
        }
        BExpr::Binary(B::And, a, b) => estimate(a, scan, known) * estimate(b, scan, known),
        _ => scan
            .and_then(|s| from_histogram(e, s, known))
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

/// A literal, or a parameter whose value is known.
pub(crate) fn constant<'a>(e: &'a BExpr, known: &'a Known) -> Option<&'a Value> {
    match strip_fold(e) {
        BExpr::Literal(v) => Some(v),
        BExpr::Param(i) => known.params.get(*i),
        _ => None,
    }
}

/// Whether `e` is a parameter whose value is not known.
fn unknown_param(e: &BExpr, known: &Known) -> bool {
    matches!(strip_fold(e), BExpr::Param(i) if *i >= known.params.len())
}

/// Whether a constant operand of condition `e` is such a parameter.
fn waits_for_param(e: &BExpr, known: &Known) -> bool {
    let p = |x: &BExpr| unknown_param(x, known);
    match e {
        BExpr::Binary(_, l, r) => p(l) || p(r),
        BExpr::Between { low, high, .. } => p(low) || p(high),
        BExpr::InList { list, .. } => list.iter().any(p),
        _ => false,
    }
}

/// The histogram of `e`'s column, when `e` is a column of `scan` that
/// leads no index; with its position.
fn histogram_of<'a>(
    e: &BExpr,
    scan: &TableScan,
    all: &'a Option<std::sync::Arc<[lockstep_tables::histogram::ColumnHistogram]>>,
) -> Option<(&'a Histogram, usize)> {
    let BExpr::Column(i) = unwrapped(e) else {
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
/// `Some(Null)`). `utc`: the column is a TIMESTAMP read in the session
/// zone, whose histogram holds UTC: the constant moves to UTC, which keeps
/// the order since zones are fixed offsets.
fn probe(v: &Value, scan: &TableScan, pos: usize, utc: Option<i64>) -> Option<Value> {
    let col = &scan.def.columns[pos];
    match v {
        Value::Null => Some(Value::Null),
        v => {
            let stored = store_value(v.clone(), col.data_type, &col.name).ok()?;
            Some(match utc {
                Some(tz) => to_utc(stored, col.data_type, tz),
                None => stored,
            })
        }
    }
}

/// `col op constant` either way round, with the operator as seen from
/// the column.
fn comparison<'a>(e: &'a BExpr, known: &'a Known) -> Option<(&'a BExpr, B, &'a Value)> {
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
    match (constant(l, known), constant(r, known)) {
        (None, Some(v)) => Some((l, *op, v)),
        (Some(v), None) => Some((r, flipped, v)),
        _ => None,
    }
}

/// The column side of a condition a histogram may answer.
fn tested_column<'a>(e: &'a BExpr, known: &Known) -> Option<&'a BExpr> {
    match e {
        BExpr::IsNull(x, _) => Some(x),
        BExpr::Between { expr, .. } | BExpr::InList { expr, .. } => Some(expr),
        BExpr::Binary(
            B::Eq | B::NullSafeEq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq,
            l,
            r,
        ) => {
            let column = |x: &BExpr| matches!(unwrapped(x), BExpr::Column(_));
            let constant = |x: &BExpr| constant(x, known).is_some() || unknown_param(x, known);
            match (column(l) && constant(r), column(r) && constant(l)) {
                (true, _) => Some(l),
                (_, true) => Some(r),
                _ => None,
            }
        }
        _ => None,
    }
}

fn from_histogram(e: &BExpr, scan: &TableScan, known: &Known) -> Option<f64> {
    let column = tested_column(e, known)?;
    // Only a condition on a column without an index reads histograms.
    if !matches!(unwrapped(column), BExpr::Column(_)) {
        return None;
    }
    let all = scan.table.histograms();
    let (h, pos) = histogram_of(column, scan, &all)?;
    if waits_for_param(e, known) {
        // Known at EXECUTE: the estimate waits for the value.
        known.probes.borrow_mut().push(Probe {
            cond: e.clone(),
            scan: detached(scan),
            range: None,
        });
        return None;
    }
    let utc = in_session_zone(column).then_some(known.tz_offset);
    let value = |v: &BExpr| constant(v, known).and_then(|v| probe(v, scan, pos, utc));
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
            let (_, op, v) = comparison(e, known)?;
            compare(h, op, &probe(v, scan, pos, utc)?)
        }
    };
    Some(kept.clamp(0.0, 1.0))
}

/// Whether the binder wrapped the column to read it in the session zone.
fn in_session_zone(e: &BExpr) -> bool {
    match e {
        BExpr::Func(Func::FromUtc, _) => true,
        BExpr::Func(Func::FoldCase, args) => args.iter().any(in_session_zone),
        _ => false,
    }
}

/// What a probe keeps of a scan: the table and where its row sits.
fn detached(scan: &TableScan) -> TableScan {
    TableScan {
        table: scan.table.clone(),
        alias: scan.alias.clone(),
        def: scan.def.clone(),
        offset: scan.offset,
        access: Access::full(),
        needed: None,
        range_check: None,
        hints: None,
        filter: None,
    }
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
pub fn filtered(scan: &TableScan, known: &Known) -> f64 {
    let kept = scan
        .filter
        .as_ref()
        .map_or(1.0, |f| estimate(f, Some(scan), known));
    kept * 100.0
}
