//! The diagnostics area: the warnings, notes and error the last statement
//! left, as SHOW WARNINGS / SHOW ERRORS, @@warning_count and @@error_count
//! report them. A failed statement's error is kept as its last condition
//! (MySQL lists it with level Error after the warnings it raised first).

use super::{rows, Session, R};
use lockstep_types::result::Response;
use lockstep_types::Value;

impl Session {
    /// A statement that is not SHOW WARNINGS starts: the previous one's
    /// conditions are counted (for @@warning_count) and cleared.
    pub(super) fn begin_diagnostics(&mut self) {
        self.ctx.previous_warnings = self.ctx.warnings.len();
        self.ctx.previous_errors = usize::from(self.ctx.error_at.is_some());
        self.ctx.warnings.clear();
        self.ctx.error_at = None;
    }

    /// Keeps the statement's error, if it failed, as its last condition.
    pub(super) fn record_error(&mut self, r: &R<Response>) {
        if let Err(e) = r {
            self.ctx.error_at = Some(self.ctx.warnings.len());
            self.ctx.warnings.push(crate::exec::Condition::warning(
                e.code.number(),
                e.message.clone(),
            ));
        }
    }
}

/// SHOW WARNINGS / SHOW ERRORS [LIMIT], or SHOW COUNT(*) of either.
pub(super) fn show_diagnostics(
    conditions: &[crate::exec::Condition],
    error_at: Option<usize>,
    errors: bool,
    count: bool,
    limit: Option<(u64, u64)>,
) -> Response {
    let level = |i: usize, c: &crate::exec::Condition| match (Some(i) == error_at, c.note) {
        (true, _) => "Error",
        (false, true) => "Note",
        (false, false) => warning_level(c.code),
    };
    let listed = conditions
        .iter()
        .enumerate()
        .filter(|&(i, c)| !errors || level(i, c) == "Error");
    if count {
        let name = match errors {
            true => "@@session.error_count",
            false => "@@session.warning_count",
        };
        return rows(&[name], vec![vec![Value::Int(listed.count() as i64)]]);
    }
    let (offset, n) = limit.unwrap_or((0, u64::MAX));
    let r = listed
        .skip(offset.min(usize::MAX as u64) as usize)
        .take(n.min(usize::MAX as u64) as usize)
        .map(|(i, c)| {
            vec![
                Value::str(level(i, c)),
                Value::Int(c.code as i64),
                Value::str(&c.message),
            ]
        })
        .collect();
    rows(&["Level", "Code", "Message"], r)
}

pub(super) fn warning_level(code: u16) -> &'static str {
    match code {
        1007 | 1008 | 1050 | 1051 | 1305 | 1360 | 3083 | 3084 => "Note",
        // A statement that goes on past a missing table (CHECKSUM TABLE).
        1146 => "Error",
        _ => "Warning",
    }
}
