//! TRUE and FALSE are booleans in MySQL, not only the integers 1 and 0: a
//! JSON context takes them as JSON true/false (`JSON_ARRAY(TRUE)` is
//! `[true]`, `doc->'$.k' = TRUE` compares with JSON true). The parser
//! writes the keyword, where a JSON function takes it as an argument or a
//! comparison as an operand, as `1 IS TRUE` / `0 IS TRUE`: the same value,
//! but a boolean expression, which the JSON binder marks as such. A
//! comparison without a JSON side gets the plain integer back from the
//! binder ([`crate::expr::json::bind::binary`]).

use super::{Parser, Result};
use crate::parser::ast::*;
use lockstep_types::Value;

/// The boolean form of a TRUE/FALSE literal.
pub(crate) fn boolean(n: i64) -> Expr {
    Expr::IsBool {
        expr: Box::new(Expr::Literal(Value::Int(n))),
        value: true,
        negated: false,
    }
}

impl Parser<'_> {
    /// `e`, parsed from the tokens `start..end`, in its boolean form
    /// where it is the lone keyword TRUE or FALSE.
    pub(super) fn bool_keyword(&self, start: usize, end: usize, e: Expr) -> Expr {
        let lone = end == start + 1;
        let word = self
            .toks
            .get(start)
            .and_then(|t| self.src.get(t.start..t.end))
            .unwrap_or("");
        match e {
            Expr::Literal(Value::Int(n @ (0 | 1)))
                if lone
                    && (word.eq_ignore_ascii_case("TRUE")
                        || word.eq_ignore_ascii_case("FALSE")) =>
            {
                boolean(n)
            }
            e => e,
        }
    }

    /// A JSON function's arguments: TRUE/FALSE among them are booleans.
    pub(super) fn parse_json_args(&mut self) -> Result<Vec<Expr>> {
        let mut list = Vec::new();
        loop {
            let start = self.pos;
            let e = self.parse_expr()?;
            list.push(self.bool_keyword(start, self.pos, e));
            if !self.eat(&super::Tok::Comma) {
                break;
            }
        }
        Ok(list)
    }
}
