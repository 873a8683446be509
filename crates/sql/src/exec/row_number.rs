//! "at row N" in the errors and warnings of a statement that writes many
//! rows: a value is converted without knowing which row it belongs to, so
//! the conversions say "at row 1"; the statement's loop puts the row's
//! 1-based number in (MySQL counts the rows the statement has processed).

use super::Result;
use lockstep_engine::Error as EngineError;

const SUFFIX: &str = " at row 1";

/// `msg` naming row `n` where it names row 1.
fn renumber(msg: &mut String, n: u64) {
    if n != 1 && msg.ends_with(SUFFIX) {
        msg.truncate(msg.len() - SUFFIX.len());
        msg.push_str(&format!(" at row {n}"));
    }
}

impl super::Exec<'_> {
    /// Runs `f` for row `n` of the statement: its error, and the warnings
    /// it adds, name row `n`.
    pub(super) fn for_row<T>(
        &mut self,
        n: u64,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let mark = self.ctx.warnings.len();
        let out = f(self);
        for c in self.ctx.warnings.iter_mut().skip(mark) {
            renumber(&mut c.message, n);
        }
        out.map_err(|e| match e {
            EngineError::Sql(mut e) => {
                renumber(&mut e.message, n);
                EngineError::Sql(e)
            }
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::renumber;

    #[test]
    fn only_row_one_at_the_end_changes() {
        let mut m = "Data too long for column 'b' at row 1".to_string();
        renumber(&mut m, 12);
        assert_eq!(m, "Data too long for column 'b' at row 12");
        let mut m = "Row 1 was cut by GROUP_CONCAT()".to_string();
        renumber(&mut m, 3);
        assert_eq!(m, "Row 1 was cut by GROUP_CONCAT()");
        let mut m = "x at row 1".to_string();
        renumber(&mut m, 1);
        assert_eq!(m, "x at row 1");
    }
}
