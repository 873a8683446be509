//! The VALUES statement (MySQL 8.0.19): `VALUES ROW(..), ROW(..)` is a
//! table of literal rows, written here as what it means: the rows as
//! SELECTs without FROM joined by UNION ALL, the columns named column_0,
//! column_1, .. And the column list of a derived table,
//! `(query) AS t (a, b)`, which renames the query's columns.

use super::{empty_query, empty_select, set_op, Parser, Result};
use crate::parser::ast::*;
use crate::parser::lexer::Tok;
use lockstep_types::error::Code;
use lockstep_types::Error;

impl Parser<'_> {
    /// `VALUES ROW(e, ..) [, ROW(..)]..` (without ORDER BY/LIMIT, which
    /// the query around it takes). Every row needs ROW and the same
    /// number of values (1136).
    pub(super) fn parse_values_rows(&mut self) -> Result<Query> {
        self.expect_kw("VALUES")?;
        let mut q: Option<Query> = None;
        let mut width = 0;
        for n in 1.. {
            self.expect_kw("ROW")?;
            self.expect(&Tok::LParen)?;
            let row = self.parse_expr_list()?;
            self.expect(&Tok::RParen)?;
            if n == 1 {
                width = row.len();
            } else if row.len() != width {
                return Err(Error::new(
                    Code::WrongValueCountOnRow,
                    format!("Column count doesn't match value count at row {n}"),
                ));
            }
            let select = values_select(row, n == 1);
            let term = empty_query(QueryBody::Select(Box::new(select)));
            q = Some(match q {
                None => term,
                Some(left) => set_op(left, SetOp::Union, true, term),
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        q.ok_or_else(|| self.error())
    }
}

/// One row as a SELECT; the first names the columns.
fn values_select(row: Vec<Expr>, first: bool) -> Select {
    let mut s = empty_select();
    s.projection = row
        .into_iter()
        .enumerate()
        .map(|(i, expr)| SelectItem::Expr {
            expr,
            alias: first.then(|| format!("column_{i}")),
            name: None,
        })
        .collect();
    s
}

/// Renames the columns of a derived table's query to `names`: the items
/// of its first SELECT (which name a set operation's columns). 1353 on a
/// count that differs; a `*` there is refused (1235), its width unknown
/// to the parser.
pub(super) fn rename_columns(q: &mut Query, names: Vec<String>) -> Result<()> {
    let mut body = &mut q.body;
    let select = loop {
        match body {
            QueryBody::Select(s) => break s,
            QueryBody::Union { left, .. } => body = &mut left.body,
        }
    };
    if select
        .projection
        .iter()
        .any(|p| !matches!(p, SelectItem::Expr { .. }))
    {
        return Err(Error::unsupported(
            "a column list on a derived table whose query selects *",
        ));
    }
    if select.projection.len() != names.len() {
        return Err(Error::new(
            Code::ViewWrongList,
            "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
        ));
    }
    for (p, n) in select.projection.iter_mut().zip(names) {
        if let SelectItem::Expr { alias, .. } = p {
            *alias = Some(n);
        }
    }
    Ok(())
}
