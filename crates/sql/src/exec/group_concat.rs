//! GROUP_CONCAT's parts and result: with an ORDER BY inside, each part
//! keeps its sort keys and the parts are ordered at the group's end; the
//! joined result is cut at group_concat_max_len (warning 1260).

use crate::plan::AggCall;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::cmp::Ordering;

/// One row's part with the values of its ORDER BY keys.
pub(super) type Keyed = (Vec<Value>, Vec<u8>);

/// The part a row adds: its values' text (the keys, the argument row's
/// last items, left out), and the keys where the call orders.
pub(super) fn part(call: &AggCall, v: &Value, row: Option<&[Value]>) -> (Vec<u8>, Vec<Value>) {
    match row {
        Some(vals) if !call.order.is_empty() => {
            let (values, keys) = vals.split_at(vals.len() - call.order.len());
            let text = values
                .iter()
                .flat_map(|x| x.to_text().unwrap_or_default())
                .collect();
            (text, keys.to_vec())
        }
        _ => (v.to_text().unwrap_or_default(), Vec::new()),
    }
}

/// The items of an argument row that are values (not ORDER BY keys).
pub(super) fn values<'a>(call: &AggCall, vals: &'a [Value]) -> &'a [Value] {
    debug_assert!(vals.len() > call.order.len() || call.order.is_empty());
    &vals[..vals.len() - call.order.len()]
}

/// Orders keyed parts by their keys in the call's directions; rows that
/// tie keep the order they came in, as a stable sort does.
fn order(keyed: &mut [Keyed], desc: &[bool]) {
    keyed.sort_by(|(a, _), (b, _)| {
        for ((x, y), d) in a.iter().zip(b).zip(desc) {
            match x.sort_cmp(y) {
                Ordering::Equal => continue,
                o if *d => return o.reverse(),
                o => return o,
            }
        }
        Ordering::Equal
    });
}

/// Where a statement's GROUP_CONCAT results are cut, and the warnings
/// the cuts raise. Rows are numbered across the statement's groups.
#[derive(Debug)]
pub(super) struct Cut {
    max_len: usize,
    rows: u64,
    pub warnings: Vec<Error>,
}

impl Cut {
    pub fn new(max_len: usize) -> Self {
        Cut {
            max_len,
            rows: 0,
            warnings: Vec::new(),
        }
    }
}

/// A group's GROUP_CONCAT value: NULL without parts, else the parts
/// (ordered where the call orders) joined, cut at the maximum length.
pub(super) fn finish(
    call: &AggCall,
    parts: Vec<Vec<u8>>,
    mut keyed: Vec<Keyed>,
    cut: &mut Cut,
) -> Value {
    if parts.is_empty() && keyed.is_empty() {
        return Value::Null;
    }
    order(&mut keyed, &call.order);
    let all = parts.iter().chain(keyed.iter().map(|(_, p)| p));
    let mut out = Vec::new();
    for (i, p) in all.enumerate() {
        if i > 0 {
            out.extend_from_slice(&call.separator);
        }
        out.extend_from_slice(p);
        if out.len() > cut.max_len {
            out.truncate(char_boundary(&out, cut.max_len));
            cut.warnings.push(Error::new(
                Code::CutValueGroupConcat,
                format!("Row {} was cut by GROUP_CONCAT()", cut.rows + i as u64 + 1),
            ));
            break;
        }
    }
    cut.rows += (parts.len() + keyed.len()) as u64;
    Value::Bytes(out)
}

/// The longest prefix of at most `max` bytes that ends on a UTF-8
/// character boundary (text is not cut inside a character).
fn char_boundary(b: &[u8], max: usize) -> usize {
    let mut n = max.min(b.len());
    while n > 0 && n < b.len() && (b[n] & 0xC0) == 0x80 {
        n -= 1;
    }
    n
}

impl super::Exec<'_> {
    /// The statement's cut: group_concat_max_len as the session has it.
    pub(super) fn concat_cut(&self) -> Cut {
        let len = (self.ctx.system_var.clone())(self.ctx, false, "group_concat_max_len");
        let len = len.ok().and_then(|v| v.to_i64()).unwrap_or(1024);
        Cut::new(usize::try_from(len).unwrap_or(usize::MAX))
    }

    /// Records the cuts' warnings (a warning even in strict mode, as in
    /// MySQL: a SELECT does not fail on it).
    pub(super) fn report_cut(&mut self, cut: Cut) {
        for w in cut.warnings {
            if self.ctx.warnings.len() < super::MAX_WARNINGS {
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(w.number(), w.message));
            }
        }
    }
}
