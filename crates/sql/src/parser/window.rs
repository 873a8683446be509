//! Window function syntax: `f(..) [FROM FIRST] [RESPECT NULLS] OVER w`,
//! window specifications and frames, and the WINDOW clause of a SELECT.

use super::{Parser, Result};
use crate::parser::ast::*;
use crate::parser::lexer::Tok;

/// Functions that exist only as window functions: OVER is required.
pub(super) fn window_only(name: &str) -> bool {
    matches!(
        name,
        "ROW_NUMBER"
            | "RANK"
            | "DENSE_RANK"
            | "PERCENT_RANK"
            | "CUME_DIST"
            | "NTILE"
            | "LAG"
            | "LEAD"
            | "FIRST_VALUE"
            | "LAST_VALUE"
            | "NTH_VALUE"
    )
}

impl Parser<'_> {
    /// What may follow a function call's `)`: the null treatment and OVER
    /// clause of a window function. `f` is an `Expr::Function`.
    pub(super) fn window_tail(&mut self, f: Expr) -> Result<Expr> {
        let Expr::Function { name, distinct, .. } = &f else {
            return Ok(f);
        };
        let only = window_only(name);
        if name == "NTH_VALUE" && self.eat_kw("FROM") {
            if self.eat_kw("LAST") {
                return Err(self.unsupported("FROM LAST"));
            }
            self.expect_kw("FIRST")?;
        }
        if only && !matches!(name.as_str(), "NTILE" | "ROW_NUMBER") {
            if self.eat_kw("RESPECT") {
                self.expect_kw("NULLS")?;
            } else if self.is_kw("IGNORE") && self.kw_at(1, "NULLS") {
                return Err(self.unsupported("IGNORE NULLS"));
            }
        }
        if !self.is_kw("OVER") {
            return match only {
                true => Err(self.error()),
                false => Ok(f),
            };
        }
        if !only && !window_aggregate(name) {
            return Err(self.error());
        }
        if *distinct {
            return Err(self.unsupported("<window function>(DISTINCT ..)"));
        }
        self.advance();
        let window = if self.eat(&Tok::LParen) {
            let w = self.window_spec()?;
            self.expect(&Tok::RParen)?;
            w
        } else {
            WindowSpec {
                base: Some(self.ident()?),
                ..WindowSpec::default()
            }
        };
        Ok(Expr::Window(Box::new(WindowCall {
            func: f,
            window,
            slot: None,
        })))
    }

    /// `WINDOW w AS (spec) [, ...]` after HAVING.
    pub(super) fn window_clause(&mut self) -> Result<Vec<(String, WindowSpec)>> {
        let mut windows = Vec::new();
        if !self.eat_kw("WINDOW") {
            return Ok(windows);
        }
        loop {
            let name = self.ident()?;
            self.expect_kw("AS")?;
            self.expect(&Tok::LParen)?;
            windows.push((name, self.window_spec()?));
            self.expect(&Tok::RParen)?;
            if !self.eat(&Tok::Comma) {
                return Ok(windows);
            }
        }
    }

    /// The inside of `( ... )` of a window: `[name] [PARTITION BY ..]
    /// [ORDER BY ..] [frame]`.
    fn window_spec(&mut self) -> Result<WindowSpec> {
        let mut w = WindowSpec::default();
        let clause = ["PARTITION", "ORDER", "ROWS", "RANGE", "GROUPS"];
        if !self.is(&Tok::RParen) && !self.is_any_kw(&clause) {
            w.base = Some(self.ident()?);
        }
        if self.is_kw("PARTITION") && self.kw_at(1, "BY") {
            self.pos += 2;
            loop {
                w.partition_by.push(self.parse_expr()?);
                if !self.eat_kw("ASC") {
                    self.eat_kw("DESC");
                }
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        w.order_by = self.parse_order_by()?;
        if self.is_kw("GROUPS") {
            return Err(self.unsupported("GROUPS"));
        }
        if self.is_kw("ROWS") || self.is_kw("RANGE") {
            w.frame = Some(self.window_frame()?);
        }
        Ok(w)
    }

    fn window_frame(&mut self) -> Result<WindowFrame> {
        let rows = self.eat_kw("ROWS");
        if !rows {
            self.expect_kw("RANGE")?;
        }
        let (start, end) = if self.eat_kw("BETWEEN") {
            let start = self.frame_bound()?;
            self.expect_kw("AND")?;
            (start, self.frame_bound()?)
        } else {
            (self.frame_bound()?, FrameBound::CurrentRow)
        };
        if self.is_kw("EXCLUDE") {
            return Err(self.unsupported("EXCLUDE"));
        }
        Ok(WindowFrame { rows, start, end })
    }

    fn frame_bound(&mut self) -> Result<FrameBound> {
        if self.eat_kw("UNBOUNDED") {
            if self.eat_kw("PRECEDING") {
                return Ok(FrameBound::UnboundedPreceding);
            }
            self.expect_kw("FOLLOWING")?;
            return Ok(FrameBound::UnboundedFollowing);
        }
        if self.eat_kw("CURRENT") {
            self.expect_kw("ROW")?;
            return Ok(FrameBound::CurrentRow);
        }
        // A number, a placeholder or INTERVAL n unit (MySQL's grammar).
        let value = match self.peek() {
            Tok::Int | Tok::Dec | Tok::Float | Tok::Param => self.parse_primary()?,
            _ if self.is_kw("INTERVAL") => self.parse_primary()?,
            _ => return Err(self.error()),
        };
        if self.eat_kw("PRECEDING") {
            return Ok(FrameBound::Preceding(value));
        }
        self.expect_kw("FOLLOWING")?;
        Ok(FrameBound::Following(value))
    }
}
