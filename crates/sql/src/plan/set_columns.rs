//! The columns of a UNION / INTERSECT / EXCEPT: each takes a type both
//! operands' values fit, as MySQL 8 does, instead of the left operand's.
//! DATETIME(n) beside DATETIME(m) is DATETIME(max(n, m)) (the fraction
//! a value has is sent with the column's digits); text beside a
//! DATETIME(n) / TIMESTAMP(n) / FLOAT is text, the temporal operand
//! turned into text where it is projected, so it prints its own digits.

use super::{QueryBody, QueryPlan};
use crate::expr::text_form;
use lockstep_types::result::Column;
use lockstep_types::DataType;
use std::sync::Arc;

/// The result columns of `l` set-op `r` (same width), wrapping the
/// projections of an operand whose values must become text.
pub fn unify(l: &mut QueryPlan, r: &mut QueryPlan) -> Arc<[Column]> {
    debug_assert_eq!(l.columns.len(), r.columns.len());
    let mut out: Vec<Column> = l.columns.to_vec();
    for (i, col) in out.iter_mut().enumerate() {
        let (lt, rt) = (l.columns[i].data_type, r.columns[i].data_type);
        col.nullable |= r.columns[i].nullable;
        if let Some(t) = temporal(lt, rt) {
            col.data_type = t;
        } else if let Some(t) = text_beside(lt, rt).filter(|_| projected(l) && projected(r)) {
            as_text(l, i, t);
            as_text(r, i, t);
            col.data_type = t;
        }
    }
    out.into()
}

/// DATETIME / TIMESTAMP of different precision: the wider one (a
/// TIMESTAMP beside a DATETIME is a DATETIME).
fn temporal(l: DataType, r: DataType) -> Option<DataType> {
    use DataType::{DateTime, Timestamp};
    match (l, r) {
        (Timestamp { fsp: a }, Timestamp { fsp: b }) if a != b => Some(Timestamp { fsp: a.max(b) }),
        (
            DateTime { fsp: a } | Timestamp { fsp: a },
            DateTime { fsp: b } | Timestamp { fsp: b },
        ) if l != r => Some(DateTime { fsp: a.max(b) }),
        _ => None,
    }
}

/// Text beside a type whose text form differs from its value's plain
/// text: a VARCHAR long enough for both (TEXT stays TEXT).
fn text_beside(l: DataType, r: DataType) -> Option<DataType> {
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

/// Whether every SELECT under `plan` projects its columns (a recursive
/// CTE's parts and JSON_TABLE produce theirs otherwise: left as they are).
fn projected(plan: &QueryPlan) -> bool {
    match &plan.body {
        QueryBody::Select(_) => true,
        QueryBody::Union { left, right, .. } => projected(left) && projected(right),
        _ => false,
    }
}

/// Projects column `i` of `plan` as text of type `to`.
fn as_text(plan: &mut QueryPlan, i: usize, to: DataType) {
    let from = plan.columns[i].data_type;
    if from.is_string() {
        return;
    }
    match &mut plan.body {
        QueryBody::Select(s) => {
            let e = std::mem::replace(
                &mut s.projection[i],
                crate::expr::BExpr::Literal(lockstep_types::Value::Null),
            );
            s.projection[i] = text_form::wrap(e, from);
            // The value is no longer the source column's, nor the one an
            // ORDER BY key of the operand could reuse.
            if let Some(m) = s.moves.get_mut(i) {
                *m = None;
            }
            for o in s.order_from.iter_mut().filter(|o| **o == Some(i)) {
                *o = None;
            }
            if let Some(t) = s.text_columns.get_mut(i) {
                *t = true;
            }
        }
        QueryBody::Union { left, right, .. } => {
            as_text(left, i, to);
            as_text(right, i, to);
        }
        _ => debug_assert!(false, "checked by `projected`"),
    }
    let mut cols = plan.columns.to_vec();
    cols[i].data_type = to;
    plan.columns = cols.into();
}
