//! CHECK constraints in CREATE TABLE (column and table ones) and ALTER
//! TABLE ADD CHECK / ALTER CHECK (MySQL 8.0.16+).

use super::{Parser, Result, Tok};
use crate::parser::ast::{AlterAction, CheckSpec};

impl Parser<'_> {
    /// `CHECK (expr) [[NOT] ENFORCED]`; `name` is the CONSTRAINT symbol
    /// when one was given, `column` the column whose definition holds it.
    pub(super) fn parse_check(
        &mut self,
        name: Option<String>,
        column: Option<&str>,
    ) -> Result<CheckSpec> {
        self.expect_kw("CHECK")?;
        let (expr, text) = self.paren_expr_text()?;
        let enforced = self.parse_enforced()?.unwrap_or(true);
        Ok(CheckSpec {
            name,
            expr,
            text,
            enforced,
            column: column.map(str::to_string),
        })
    }

    /// `(expr)` and the expression's source text (what storage keeps of
    /// a CHECK or a generated column).
    pub(super) fn paren_expr_text(&mut self) -> Result<(crate::parser::Expr, String)> {
        self.expect(&Tok::LParen)?;
        let start = self.toks.get(self.pos).map_or(self.src.len(), |t| t.start);
        let expr = self.parse_expr()?;
        let end = self
            .pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(start, |t| t.end);
        self.expect(&Tok::RParen)?;
        let text = self.src.get(start..end.max(start)).unwrap_or("");
        Ok((expr, text.to_string()))
    }

    /// `[NOT] ENFORCED`, if there.
    pub(super) fn parse_enforced(&mut self) -> Result<Option<bool>> {
        if self.is_kw("NOT") && self.kw_at(1, "ENFORCED") {
            self.pos += 2;
            return Ok(Some(false));
        }
        Ok(self.eat_kw("ENFORCED").then_some(true))
    }

    /// The CHECKs of the column definition just parsed, as ALTER actions.
    pub(super) fn column_checks_to(&mut self, actions: &mut Vec<AlterAction>) {
        actions.extend(self.column_checks.drain(..).map(AlterAction::AddCheck));
    }
}
