//! Generated columns in a column definition: `[GENERATED ALWAYS] AS
//! (expr) [VIRTUAL | STORED]` (validation and evaluation live in
//! `plan::generated` and `exec::generated`).

use super::{Parser, Result};
use crate::parser::ast::{ColumnSpec, GeneratedSpec};

impl Parser<'_> {
    /// The clause, from GENERATED or AS; the expression's source text is
    /// what storage keeps.
    pub(super) fn parse_generated(&mut self) -> Result<GeneratedSpec> {
        if self.eat_kw("GENERATED") {
            self.expect_kw("ALWAYS")?;
        }
        self.expect_kw("AS")?;
        let (expr, text) = self.paren_expr_text()?;
        let stored = if self.eat_kw("STORED") || self.eat_kw("PERSISTENT") {
            true
        } else {
            self.eat_kw("VIRTUAL");
            false
        };
        Ok(GeneratedSpec { expr, text, stored })
    }

    /// A generated column takes no DEFAULT, AUTO_INCREMENT or ON UPDATE
    /// (MySQL's grammar has no place for them: 1064), and one clause;
    /// `at_clause` when the clause comes next.
    pub(super) fn check_generated_attrs(&self, col: &ColumnSpec, at_clause: bool) -> Result<()> {
        let clash = col.default.is_some() || col.auto_increment || col.on_update_now;
        let bad = match at_clause {
            true => clash || col.generated.is_some(),
            false => clash && col.generated.is_some(),
        };
        match bad {
            true => Err(self.error()),
            false => Ok(()),
        }
    }
}
