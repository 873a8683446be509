//! `JSON_VALUE(doc, path [RETURNING type] [{NULL | ERROR | DEFAULT v} ON
//! EMPTY] [{NULL | ERROR | DEFAULT v} ON ERROR])` (MySQL 8.0.21). The
//! call is kept as the function JSON_VALUE with its clauses as arguments
//! the binder reads back (`crate::expr::json::value`): doc, path, the
//! type as `CAST(NULL AS type)` (NULL without RETURNING), then for ON
//! EMPTY and for ON ERROR the answer ('NULL', 'ERROR' or 'DEFAULT') and
//! the default value (NULL without one). Only this parser writes them.

use super::{Parser, Result};
use crate::parser::ast::*;
use lockstep_types::Value;

impl Parser<'_> {
    /// After `JSON_VALUE(`: the rest of the call, `)` included.
    pub(super) fn parse_json_value(&mut self) -> Result<Expr> {
        let doc = self.parse_expr()?;
        self.expect(&super::Tok::Comma)?;
        let path = self.parse_expr()?;
        let returning = match self.eat_kw("RETURNING") {
            true => Expr::Cast {
                expr: Box::new(Expr::Literal(Value::Null)),
                to: self.parse_cast_type()?,
            },
            false => Expr::Literal(Value::Null),
        };
        let mut args = vec![doc, path, returning];
        // ON EMPTY, if there, comes before ON ERROR.
        let none = || {
            [
                Expr::Literal(Value::str("NULL")),
                Expr::Literal(Value::Null),
            ]
        };
        let (mut empty, mut error) = (None, None);
        while error.is_none() && self.is_any_kw(&["NULL", "ERROR", "DEFAULT"]) {
            let answer = self.json_value_answer()?;
            self.expect_kw("ON")?;
            if empty.is_none() && self.eat_kw("EMPTY") {
                empty = Some(answer);
            } else {
                self.expect_kw("ERROR")?;
                error = Some(answer);
            }
        }
        args.extend(empty.unwrap_or_else(none));
        args.extend(error.unwrap_or_else(none));
        self.expect(&super::Tok::RParen)?;
        Ok(Expr::Function {
            name: "JSON_VALUE".into(),
            args,
            distinct: false,
            star: false,
            database: None,
            spelled: None,
        })
    }

    /// `NULL | ERROR | DEFAULT v` before ON: the answer and the default.
    fn json_value_answer(&mut self) -> Result<[Expr; 2]> {
        let text = |s: &str| Expr::Literal(Value::str(s));
        let null = Expr::Literal(Value::Null);
        if self.eat_kw("NULL") {
            Ok([text("NULL"), null])
        } else if self.eat_kw("ERROR") {
            Ok([text("ERROR"), null])
        } else {
            self.expect_kw("DEFAULT")?;
            Ok([text("DEFAULT"), self.parse_expr()?])
        }
    }
}
