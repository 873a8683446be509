//! UPDATE IGNORE and DELETE IGNORE: an error MySQL downgrades for one row
//! undoes that row's changes (its cascades and triggers included) and
//! becomes a warning; the statement goes on with the next row.

use super::{Exec, Result};
use lockstep_engine::Error as EngineError;
use lockstep_types::error::Code;
use lockstep_types::Error;

/// The errors IGNORE turns into warnings, as MySQL 8's ignore handler
/// does (value errors are warnings already: IGNORE runs non-strict).
fn skips_row(e: &Error) -> bool {
    matches!(
        e.code,
        Code::DupEntry
            | Code::RowIsReferenced2
            | Code::NoReferencedRow2
            | Code::CheckConstraintViolated
            | Code::ViewCheckFailed
            | Code::BadNull
    )
}

impl Exec<'_> {
    /// Runs `f` for one row; under `ignore`, an error `skips_row` allows
    /// rolls back what `f` did and is kept as a warning: None.
    pub(super) fn or_skip<T>(
        &mut self,
        ignore: bool,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<Option<T>> {
        if !ignore {
            return f(self).map(Some);
        }
        let sp = self.txn.savepoint();
        match f(self) {
            Err(EngineError::Sql(e)) if skips_row(&e) => {
                self.engine.rollback_to(self.txn, sp);
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(e.code.number(), e.message));
                Ok(None)
            }
            r => r.map(Some),
        }
    }
}
