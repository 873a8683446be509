//! Rows in an access path's key ranges, by index dives (`Table::dive`):
//! MySQL's way of estimating a range without a histogram, instead of a
//! fixed third of the rows. Only ranges whose bounds are constants dive
//! (literals, or parameters whose values an EXECUTE bound); a range
//! bounded by another table's column keeps the guess. Results are kept in
//! `Known` for the statement being planned, so a join order search dives
//! each range once.
//!
//! Dives are paid only where they can change a plan: choosing between a
//! secondary index's range and a full scan (`bind::best_access_by`), and
//! ordering the tables of a join. A range on the clustered index alone,
//! like sysbench's `id BETWEEN ? AND ?`, never dives.

use crate::expr::{key_value, to_utc};
use crate::plan::selectivity::{constant, Known};
use crate::plan::{Access, BExpr, KeyRange, TableScan};
use lockstep_engine::engine::successor_prefix;
use lockstep_tables::schema::encode_column_key;
use std::ops::Bound;

/// Keys walked in from each end of a range.
pub const DIVE_LIMIT: usize = 64;

/// Ranges an access may have and still dive (an OR of more keeps the
/// guess, as MySQL's eq_range_index_dive_limit bounds its dives).
pub const MAX_RANGES: usize = 16;

/// A secondary index's row costs this many clustered-index rows: the
/// entry, then a lookup of the row by its primary key. Measured on 200k
/// rows (docs/performance.md): 1.0 us a row through the index against
/// 0.43 us a row scanned.
pub const SECONDARY_ROW_COST: f64 = 2.5;

/// A dive's answer for one range, kept per statement.
pub struct Dived {
    table: usize,
    index: usize,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    rows: f64,
}

/// What a dive of `access` found.
pub enum Dive {
    /// Rows in all the ranges, with bounds on the range column.
    Rows(f64),
    /// A bound is a parameter whose value is not known yet.
    WaitsForParam,
    /// No range bound, or one a dive cannot take (another table's column,
    /// too many ranges, keys that give no density).
    Unknown,
}

/// Whether `access` has a range (not only equalities) to dive.
pub fn has_range(access: &Access) -> bool {
    access
        .ranges
        .iter()
        .any(|r| r.lower.is_some() || r.upper.is_some())
}

/// The rows of `scan`'s table in the ranges of `access`.
pub fn dive(scan: &TableScan, access: &Access, known: &Known) -> Dive {
    if !has_range(access) || access.ranges.len() > MAX_RANGES {
        return Dive::Unknown;
    }
    let mut total = 0.0;
    for r in &access.ranges {
        match dive_range(scan, access.index, r, known) {
            Dive::Rows(n) => total += n,
            other => return other,
        }
    }
    Dive::Rows(total)
}

/// The value of a bound or key part, when constant.
enum Part<'a> {
    Value(&'a lockstep_types::Value),
    Waits,
    Unknown,
}

fn part<'a>(e: &'a BExpr, known: &'a Known) -> Part<'a> {
    match (constant(e, known), e) {
        (Some(v), _) => Part::Value(v),
        (None, BExpr::Param(_)) => Part::Waits,
        _ => Part::Unknown,
    }
}

pub fn dive_range(scan: &TableScan, index: usize, r: &KeyRange, known: &Known) -> Dive {
    let def = &scan.def;
    let cols = &def.indexes[index].columns;
    let tz = known.tz_offset;
    // A key part in the column's stored form (None: no exact key, e.g. a
    // decimal compared with an integer column: the guess stays).
    let encode = |v: &lockstep_types::Value, col: usize, out: &mut Vec<u8>| -> Option<()> {
        let ty = def.columns[col].data_type;
        let k = key_value(v, ty)?;
        encode_column_key(&to_utc(k, ty, tz), ty, out);
        Some(())
    };
    let mut prefix = Vec::new();
    for (e, &col) in r.eq.iter().zip(cols) {
        match part(e, known) {
            Part::Value(v) if v.is_null() => return Dive::Rows(0.0),
            Part::Value(v) => {
                if encode(v, col, &mut prefix).is_none() {
                    return Dive::Unknown;
                }
            }
            Part::Waits => return Dive::WaitsForParam,
            Part::Unknown => return Dive::Unknown,
        }
    }
    let Some(&col) = cols.get(r.eq.len()) else {
        return Dive::Unknown;
    };
    // Each bound as (key, inclusive); None when open.
    let mut bounds = [None, None];
    for (slot, b) in bounds.iter_mut().zip([&r.lower, &r.upper]) {
        let Some((e, incl)) = b else { continue };
        match part(e, known) {
            // Nothing compares with NULL: the range is empty.
            Part::Value(v) if v.is_null() => return Dive::Rows(0.0),
            Part::Value(v) => {
                let mut key = prefix.clone();
                if encode(v, col, &mut key).is_none() {
                    return Dive::Unknown;
                }
                *slot = Some((key, *incl));
            }
            Part::Waits => return Dive::WaitsForParam,
            Part::Unknown => return Dive::Unknown,
        }
    }
    let [lower, upper] = bounds;
    // As the executor's key_bounds: past the NULLs of the range column.
    let lo = match lower {
        Some((k, true)) => Bound::Included(k),
        Some((k, false)) => Bound::Included(successor_prefix(&k)),
        None => {
            let mut k = prefix.clone();
            k.push(0x01);
            Bound::Included(k)
        }
    };
    let hi = match upper {
        Some((k, true)) => Bound::Excluded(successor_prefix(&k)),
        Some((k, false)) => Bound::Excluded(k),
        None if prefix.is_empty() => Bound::Unbounded,
        None => Bound::Excluded(successor_prefix(&prefix)),
    };
    cached_dive(scan, index, lo, hi, known)
}

fn cached_dive(
    scan: &TableScan,
    index: usize,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    known: &Known,
) -> Dive {
    let table = std::sync::Arc::as_ptr(&scan.table) as usize;
    let same = |d: &&Dived| d.table == table && d.index == index;
    if let Some(d) = known
        .dives
        .borrow()
        .iter()
        .filter(same)
        .find(|d| d.lower == lower && d.upper == upper)
    {
        return Dive::Rows(d.rows);
    }
    let empty = match (&lower, &upper) {
        (Bound::Included(l), Bound::Excluded(u)) => l >= u,
        _ => false,
    };
    let rows = match empty {
        true => Some(0.0),
        false => scan
            .table
            .dive(index, slices(&lower), slices(&upper), DIVE_LIMIT),
    };
    let Some(rows) = rows else {
        return Dive::Unknown;
    };
    known.dives.borrow_mut().push(Dived {
        table,
        index,
        lower,
        upper,
        rows,
    });
    Dive::Rows(rows)
}

fn slices(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    b.as_ref().map(Vec::as_slice)
}
