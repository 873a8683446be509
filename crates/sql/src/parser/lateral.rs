//! FROM items that read the items to their left: LATERAL derived tables
//! and JSON_TABLE (their trees are in `lateral_ast.rs`).

use super::{Parser, Result};
use crate::parser::ast::*;
use crate::parser::lateral_ast::{JsonTable, JtColumn, JtOn, JtPathColumn, LateralRef};
use crate::parser::lexer::Tok;
use lockstep_types::error::Code;
use lockstep_types::Error;

impl Parser<'_> {
    /// `LATERAL (query) [AS] alias [(name, ...)]`, at LATERAL.
    pub(super) fn lateral_factor(&mut self) -> Result<TableRef> {
        self.advance();
        if !self.paren_starts_query() {
            return Err(self.error());
        }
        self.enter()?;
        self.advance();
        let query = self.parse_query()?;
        self.expect(&Tok::RParen)?;
        self.leave();
        let alias = self.required_alias(
            Code::DerivedMustHaveAlias,
            "Every derived table must have its own alias",
        )?;
        let columns = match self.is(&Tok::LParen) {
            true => self.parse_paren_names()?,
            false => Vec::new(),
        };
        Ok(TableRef::Lateral(Box::new(LateralRef::Query {
            query: Box::new(query),
            alias,
            columns,
        })))
    }

    /// `JSON_TABLE(expr, path COLUMNS (...)) [AS] alias`, at JSON_TABLE.
    pub(super) fn json_table_factor(&mut self) -> Result<TableRef> {
        self.advance();
        self.expect(&Tok::LParen)?;
        self.enter()?;
        let expr = self.parse_expr()?;
        self.expect(&Tok::Comma)?;
        let path = self.string_literal()?;
        let columns = self.jt_columns()?;
        self.expect(&Tok::RParen)?;
        self.leave();
        let alias = self.required_alias(
            Code::TableFunctionMustHaveAlias,
            "Every table function must have an alias.",
        )?;
        Ok(TableRef::Lateral(Box::new(LateralRef::JsonTable(
            JsonTable {
                expr,
                path,
                columns,
                alias,
            },
        ))))
    }

    /// `[AS] alias`, or error `code` without one.
    fn required_alias(&mut self, code: Code, message: &str) -> Result<String> {
        self.parse_alias(false)?
            .ok_or_else(|| Error::new(code, message))
    }

    /// `COLUMNS (column, ...)`.
    fn jt_columns(&mut self) -> Result<Vec<JtColumn>> {
        self.expect_kw("COLUMNS")?;
        self.expect(&Tok::LParen)?;
        self.enter()?;
        let mut columns = Vec::new();
        loop {
            columns.push(self.jt_column()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        self.leave();
        Ok(columns)
    }

    fn jt_column(&mut self) -> Result<JtColumn> {
        let nested = self.is_kw("NESTED")
            && (self.kw_at(1, "PATH") || matches!(self.tok_at(1), Tok::Str(_)));
        if nested {
            self.advance();
            self.eat_kw("PATH");
            let path = self.string_literal()?;
            let columns = self.jt_columns()?;
            return Ok(JtColumn::Nested { path, columns });
        }
        let name = self.ident()?;
        if self.eat_kw("FOR") {
            self.expect_kw("ORDINALITY")?;
            return Ok(JtColumn::Ordinality(name));
        }
        let ty = self.parse_data_type(&name)?;
        let exists = self.eat_kw("EXISTS");
        self.expect_kw("PATH")?;
        let path = self.string_literal()?;
        let (mut on_empty, mut on_error) = (JtOn::Null, JtOn::Null);
        // Each clause at most once; MySQL takes ON ERROR before ON EMPTY too.
        let (mut empty_seen, mut error_seen) = (false, false);
        while !exists && self.is_any_kw(&["NULL", "ERROR", "DEFAULT"]) {
            let answer = self.jt_on()?;
            self.expect_kw("ON")?;
            if !empty_seen && self.eat_kw("EMPTY") {
                (on_empty, empty_seen) = (answer, true);
            } else if !error_seen && self.eat_kw("ERROR") {
                (on_error, error_seen) = (answer, true);
            } else {
                return Err(self.error());
            }
        }
        Ok(JtColumn::Path(JtPathColumn {
            name,
            ty,
            path,
            exists,
            on_empty,
            on_error,
        }))
    }

    /// `NULL | ERROR | DEFAULT 'json'` before ON EMPTY / ON ERROR.
    fn jt_on(&mut self) -> Result<JtOn> {
        if self.eat_kw("NULL") {
            Ok(JtOn::Null)
        } else if self.eat_kw("ERROR") {
            Ok(JtOn::Error)
        } else {
            self.expect_kw("DEFAULT")?;
            Ok(JtOn::Default(self.string_literal()?))
        }
    }
}
