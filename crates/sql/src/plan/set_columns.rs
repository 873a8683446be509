//! The columns of a UNION / INTERSECT / EXCEPT: each takes a type both
//! operands' values fit, as MySQL 8 does, instead of the left operand's.
//! DATETIME(n) beside DATETIME(m) is DATETIME(max(n, m)) (the fraction
//! a value has is sent with the column's digits), and a DATE beside a
//! DATETIME(n) / TIMESTAMP(n) is that DATETIME, the DATE operand cast to
//! it where it is projected. Text beside a DATETIME(n) / TIMESTAMP(n) /
//! FLOAT is text, the temporal operand turned into text where it is
//! projected, so it prints its own digits; a number beside a DATE, TIME,
//! DATETIME or TIMESTAMP is text too (VARCHAR long enough for both, as
//! MySQL 8 merges them), both operands turned into text.

use super::{QueryBody, QueryPlan};
use crate::expr::{text_form, BExpr};
use crate::parser::CastType;
use lockstep_types::result::Column;
use lockstep_types::DataType;
use std::sync::Arc;

/// The result columns of `l` set-op `r` (same width), wrapping the
/// projections of an operand whose values must become text.
pub fn unify(l: &mut QueryPlan, r: &mut QueryPlan) -> Arc<[Column]> {
    debug_assert_eq!(l.columns.len(), r.columns.len());
    let mut out: Vec<Column> = l.columns.to_vec();
    // Values change type only where the operands project them.
    let convertible = projected(l) && projected(r);
    for (i, col) in out.iter_mut().enumerate() {
        let (lt, rt) = (l.columns[i].data_type, r.columns[i].data_type);
        col.nullable |= r.columns[i].nullable;
        let date = lt == DataType::Date || rt == DataType::Date;
        if let Some(t) = temporal(lt, rt).filter(|_| !date || convertible) {
            if date {
                convert(l, i, t, &as_datetime);
                convert(r, i, t, &as_datetime);
            }
            col.data_type = t;
        } else if let Some(t) = text_beside(lt, rt).filter(|_| convertible) {
            convert(l, i, t, &as_text);
            convert(r, i, t, &as_text);
            col.data_type = t;
        }
    }
    out.into()
}

/// DATETIME / TIMESTAMP of different precision: the wider one (a
/// TIMESTAMP beside a DATETIME is a DATETIME, and so is a DATE).
fn temporal(l: DataType, r: DataType) -> Option<DataType> {
    use DataType::{Date, DateTime, Timestamp};
    match (l, r) {
        (Timestamp { fsp: a }, Timestamp { fsp: b }) if a != b => Some(Timestamp { fsp: a.max(b) }),
        (
            DateTime { fsp: a } | Timestamp { fsp: a },
            DateTime { fsp: b } | Timestamp { fsp: b },
        ) if l != r => Some(DateTime { fsp: a.max(b) }),
        (Date, DateTime { fsp } | Timestamp { fsp })
        | (DateTime { fsp } | Timestamp { fsp }, Date) => Some(DateTime { fsp }),
        _ => None,
    }
}

/// Text beside a type whose text form differs from its value's plain
/// text: a VARCHAR long enough for both (TEXT stays TEXT). A number
/// beside a date or time: a VARCHAR as long as the longer text.
fn text_beside(l: DataType, r: DataType) -> Option<DataType> {
    if let Some(len) = number_beside_temporal(l, r).or_else(|| number_beside_temporal(r, l)) {
        return Some(DataType::VarChar { len });
    }
    let (text, other) = match (l.is_string(), r.is_string()) {
        (true, false) => (l, r),
        (false, true) => (r, l),
        _ => return None,
    };
    let form = text_form::result_type_of(other)?;
    Some(match (text, form) {
        (DataType::Char { len } | DataType::VarChar { len }, DataType::VarChar { len: need }) => {
            DataType::VarChar { len: len.max(need) }
        }
        _ => text,
    })
}

/// The longer text of number type `n` and date or time type `t`.
fn number_beside_temporal(n: DataType, t: DataType) -> Option<u32> {
    use DataType::*;
    let number = match n {
        TinyInt { unsigned } => 4 - unsigned as u32,
        SmallInt { unsigned } => 6 - unsigned as u32,
        MediumInt { unsigned } => 9 - unsigned as u32,
        Int { unsigned } => 11 - unsigned as u32,
        BigInt { .. } => 20,
        Decimal { precision, scale } => precision as u32 + (scale > 0) as u32 + 1,
        Float => 12,
        Double => 22,
        _ => return None,
    };
    let fraction = |fsp: u8| if fsp > 0 { fsp as u32 + 1 } else { 0 };
    let temporal = match t {
        Date => 10,
        DateTime { fsp } | Timestamp { fsp } => 19 + fraction(fsp),
        Time { fsp } => 10 + fraction(fsp),
        _ => return None,
    };
    Some(number.max(temporal))
}

/// A value of type `from` as text (in its type's text form).
fn as_text(e: BExpr, from: DataType) -> BExpr {
    match text_form::result_type_of(from) {
        Some(_) => text_form::wrap(e, from),
        None if from.is_string() => e,
        None => BExpr::Cast(Box::new(e), CastType::Char),
    }
}

/// A DATE as a DATETIME (one of fewer digits, or a TIMESTAMP, holds the
/// same value).
fn as_datetime(e: BExpr, from: DataType) -> BExpr {
    match from {
        DataType::Date => BExpr::Cast(Box::new(e), CastType::DateTime { fsp: 0 }),
        _ => e,
    }
}

/// Whether every SELECT under `plan` projects its columns (a recursive
/// CTE's parts and JSON_TABLE produce theirs otherwise: left as they are).
fn projected(plan: &QueryPlan) -> bool {
    match &plan.body {
        QueryBody::Select(_) => true,
        QueryBody::Union { left, right, .. } => projected(left) && projected(right),
        _ => false,
    }
}

/// Projects column `i` of `plan` as type `to`, each operand's values
/// converted by `how` from their type.
fn convert(plan: &mut QueryPlan, i: usize, to: DataType, how: &dyn Fn(BExpr, DataType) -> BExpr) {
    let from = plan.columns[i].data_type;
    if from == to || (from.is_string() && to.is_string()) {
        return;
    }
    match &mut plan.body {
        QueryBody::Select(s) => {
            let e = std::mem::replace(
                &mut s.projection[i],
                BExpr::Literal(lockstep_types::Value::Null),
            );
            s.projection[i] = how(e, from);
            // The value is no longer the source column's, nor the one an
            // ORDER BY key of the operand could reuse.
            if let Some(m) = s.moves.get_mut(i) {
                *m = None;
            }
            for o in s.order_from.iter_mut().filter(|o| **o == Some(i)) {
                *o = None;
            }
            if let Some(t) = s.text_columns.get_mut(i) {
                *t = to.is_string();
            }
        }
        QueryBody::Union { left, right, .. } => {
            convert(left, i, to, how);
            convert(right, i, to, how);
        }
        _ => debug_assert!(false, "checked by `projected`"),
    }
    let mut cols = plan.columns.to_vec();
    cols[i].data_type = to;
    plan.columns = cols.into();
}
