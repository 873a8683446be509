//! CREATE/ALTER/DROP VIEW and SHOW CREATE VIEW syntax.

use super::super::ast::*;
use super::{Parser, Result};
use lockstep_types::Error;

impl Parser<'_> {
    /// After CREATE: `[OR REPLACE] [ALGORITHM=..] [DEFINER=..]
    /// [SQL SECURITY ..] VIEW ...`; after ALTER: the same without OR
    /// REPLACE. Returns None when no VIEW follows the options (CREATE
    /// DEFINER=.. PROCEDURE and the like).
    pub(super) fn parse_view(&mut self, alter: bool) -> Result<Option<Statement>> {
        let or_replace = !alter && self.eat_kw("OR");
        if or_replace {
            self.expect_kw("REPLACE")?;
        }
        let mut algorithm = None;
        if self.eat_kw("ALGORITHM") {
            self.eat_eq();
            let a = self.ident_any()?.to_ascii_uppercase();
            if !matches!(a.as_str(), "UNDEFINED" | "MERGE" | "TEMPTABLE") {
                self.pos -= 1;
                return Err(self.error());
            }
            algorithm = Some(a);
        }
        let mut definer = None;
        if self.eat_kw("DEFINER") {
            self.eat_eq();
            definer = self.user_name()?;
        }
        let mut security_definer = None;
        if self.eat_kw("SQL") {
            self.expect_kw("SECURITY")?;
            security_definer = Some(if self.eat_kw("DEFINER") {
                true
            } else {
                self.expect_kw("INVOKER")?;
                false
            });
        }
        if !self.eat_kw("VIEW") {
            return Ok(None);
        }
        let name = self.object_name()?;
        let columns = self.view_columns()?;
        self.expect_kw("AS")?;
        let start = self.start_of(0);
        let query = self.parse_view_query()?;
        let end = self
            .toks
            .get(self.pos.wrapping_sub(1))
            .map_or(start, |t| t.end);
        let query_text = self.src.get(start..end).unwrap_or("").to_string();
        let check_option = self.view_check_option()?;
        Ok(Some(Statement::CreateView(Box::new(CreateView {
            name,
            or_replace,
            alter,
            algorithm,
            definer,
            security_definer,
            columns,
            query,
            query_text,
            check_option,
        }))))
    }

    fn view_columns(&mut self) -> Result<Vec<String>> {
        let mut columns = Vec::new();
        if self.eat(&super::Tok::LParen) {
            loop {
                columns.push(self.ident_any()?);
                if !self.eat(&super::Tok::Comma) {
                    break;
                }
            }
            self.expect(&super::Tok::RParen)?;
        }
        Ok(columns)
    }

    /// The SELECT (a WITH clause included) of a view.
    fn parse_view_query(&mut self) -> Result<Query> {
        if self.is_kw("WITH") {
            match self.parse_with()? {
                Statement::Select(q) => Ok(*q),
                _ => Err(self.error()),
            }
        } else {
            self.parse_query()
        }
    }

    fn view_check_option(&mut self) -> Result<ViewCheck> {
        if !self.eat_kw("WITH") {
            return Ok(ViewCheck::None);
        }
        let check = if self.eat_kw("LOCAL") {
            ViewCheck::Local
        } else {
            self.eat_kw("CASCADED");
            ViewCheck::Cascaded
        };
        self.expect_kw("CHECK")?;
        self.expect_kw("OPTION")?;
        Ok(check)
    }

    /// After DROP VIEW: `[IF EXISTS] a, b [RESTRICT|CASCADE]`.
    pub(super) fn parse_drop_view(&mut self) -> Result<Statement> {
        let if_exists = self.if_exists()?;
        let mut views = Vec::new();
        loop {
            views.push(self.object_name()?);
            if !self.eat(&super::Tok::Comma) {
                break;
            }
        }
        if !self.eat_kw("RESTRICT") {
            self.eat_kw("CASCADE");
        }
        Ok(Statement::DropView { views, if_exists })
    }

    /// CREATE options that name no VIEW: a routine or trigger definer.
    pub(super) fn not_a_view(&self) -> Error {
        match self.word_at(0) {
            Some(w) => self.unsupported(&format!("CREATE {}", w.to_ascii_uppercase())),
            None => self.error(),
        }
    }
}
