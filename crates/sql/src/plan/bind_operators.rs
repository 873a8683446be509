//! Binding the expression forms that take more than a line: correlated
//! column references, IN lists and subqueries, LIKE, function calls.

use super::{is_aggregate_name, Binder, Scope};
use crate::expr::json::funcs::JsonFn;
use crate::expr::BExpr;
use crate::parser::{ast, BinaryOp, Expr};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};

type Result<T> = std::result::Result<T, Error>;

impl Binder<'_> {
    /// A column not in the query's own scope: a correlated reference to
    /// an enclosing query, or 1054.
    pub(super) fn bind_outer_column(&mut self, table: Option<&str>, name: &str) -> Result<BExpr> {
        let mut found = None;
        for (depth, outer) in self.outer.iter().rev().enumerate() {
            if let Some(c) = outer.resolve(table, name)? {
                let e = BExpr::Outer {
                    depth,
                    index: c.index,
                };
                found = Some(super::bind::session_time(e, c.stored_utc));
                let place = self.outer.len() - 1 - depth;
                self.outer_refs.push((place, c.index));
                break;
            }
        }
        match found {
            Some(b) => {
                self.correlated = true;
                Ok(b)
            }
            None => {
                let full = match table {
                    Some(t) => format!("{t}.{name}"),
                    None => name.to_string(),
                };
                Err(Error::bad_field(&full, self.clause))
            }
        }
    }

    /// `x IN (list)`, and `(a, b) IN ((1, 2), ..)` as an OR of row equalities.
    pub(super) fn bind_in_list(
        &mut self,
        expr: &Expr,
        list: &[Expr],
        negated: bool,
        scope: &Scope,
    ) -> Result<BExpr> {
        if let Expr::Row(cols) = expr {
            // (a, b) IN ((1, 2), (3, 4)): OR of row equalities.
            let mut any: Option<BExpr> = None;
            for item in list {
                let Expr::Row(vals) = item else {
                    return Err(Error::new(
                        Code::OperandColumns,
                        "Operand should contain 2 column(s)",
                    ));
                };
                let eq = self.row_comparison(BinaryOp::Eq, cols, vals, scope)?;
                any = Some(match any {
                    None => eq,
                    Some(p) => BExpr::Binary(BinaryOp::Or, Box::new(p), Box::new(eq)),
                });
            }
            let any = any.unwrap_or(BExpr::Literal(Value::Int(0)));
            return Ok(if negated {
                BExpr::Unary(ast::UnaryOp::Not, Box::new(any))
            } else {
                any
            });
        }
        let expr = self.bind_expr(expr, scope)?;
        let list: Vec<BExpr> = list
            .iter()
            .map(|x| self.bind_expr(x, scope))
            .collect::<Result<_>>()?;
        let types = self.operand_types(scope);
        let list = crate::plan::enumset::in_list(&expr, list, &types);
        let json = crate::expr::json::bind::in_list(&expr, &list, negated, &types);
        Ok(json.unwrap_or(BExpr::InList {
            expr: Box::new(expr),
            list,
            negated,
        }))
    }

    /// `x IN (SELECT ..)`.
    pub(super) fn bind_in_subquery(
        &mut self,
        expr: &Expr,
        query: &ast::Query,
        negated: bool,
        scope: &Scope,
    ) -> Result<BExpr> {
        if matches!(*expr, Expr::Row(_)) {
            return Err(Error::unsupported("(a, b) IN (subquery)"));
        }
        let query = self.subquery(query, scope)?;
        if query.columns.len() != 1 {
            return Err(Error::new(
                Code::OperandColumns,
                "Operand should contain 1 column(s)",
            ));
        }
        Ok(BExpr::InSubquery {
            expr: Box::new(self.bind_expr(expr, scope)?),
            query,
            negated,
            fold: false,
        })
    }

    /// `x LIKE pattern [ESCAPE c]`.
    pub(super) fn bind_like(
        &mut self,
        expr: &Expr,
        pattern: &Expr,
        escape: Option<&Expr>,
        negated: bool,
        scope: &Scope,
    ) -> Result<BExpr> {
        let escape = match escape {
            Some(Expr::Literal(Value::Bytes(b))) if b.len() == 1 => b[0],
            // ESCAPE '' (and NO_BACKSLASH_ESCAPES): no escape
            // character; 0xFF never occurs in utf8mb4 text.
            Some(Expr::Literal(Value::Bytes(b))) if b.is_empty() => 0xFF,
            None => b'\\',
            Some(_) => {
                return Err(Error::new(
                    Code::WrongArguments,
                    "Incorrect arguments to ESCAPE",
                ))
            }
        };
        Ok(BExpr::Like {
            expr: Box::new(self.bind_expr(expr, scope)?),
            pattern: Box::new(self.bind_expr(pattern, scope)?),
            escape,
            negated,
        })
    }

    /// A function call (not an aggregate: those are bound by the
    /// aggregation pass and reach here only misplaced).
    /// A call of `name` (upper-cased; `spelled` as written when that
    /// differs).
    pub(super) fn bind_call(
        &mut self,
        (name, spelled): (&str, Option<&str>),
        args: &[Expr],
        scope: &Scope,
    ) -> Result<BExpr> {
        if is_aggregate_name(name) {
            return Err(Error::new(
                Code::WrongArguments,
                format!("Invalid use of group function {name}"),
            ));
        }
        if name == "GROUPING" {
            // Only over the rows of GROUP BY ... WITH ROLLUP.
            return Err(Error::new(
                Code::InvalidGroupFuncUse,
                "Invalid use of group function",
            ));
        }
        if name == "TIMESTAMPDIFF" || name == "TIMESTAMPADD" {
            return self.timestamp_function(name, args, scope);
        }
        if name == "VALUES" {
            return self.values_of(args, scope);
        }
        if name == "DATE_ADD" || name == "DATE_SUB" || name == "ADDDATE" || name == "SUBDATE" {
            return self.date_arith(
                name.starts_with("DATE_SUB") || name == "SUBDATE",
                args,
                scope,
            );
        }
        if name == "JSON_VALUE" {
            return self.json_value(args, scope);
        }
        let bound = args
            .iter()
            .map(|a| self.bind_expr(a, scope))
            .collect::<Result<Vec<_>>>()?;
        // In a grouped block the arguments are over the grouped row.
        let types = self.operand_types(scope);
        if let Some(jf) = JsonFn::lookup(name) {
            return crate::expr::json::bind::call(jf, name, bound, &types);
        }
        let bound = crate::plan::enumset::function_args(name, bound, &types);
        self.function((name, spelled), bound, &types)
    }

    /// JSON_VALUE as the parser wrote it: its clauses read, doc, path and
    /// the two defaults bound.
    fn json_value(&mut self, args: &[Expr], scope: &Scope) -> Result<BExpr> {
        let (spec, to_bind) = crate::expr::json::value::spec(args)?;
        let bound = to_bind
            .iter()
            .map(|a| self.bind_expr(a, scope))
            .collect::<Result<Vec<_>>>()?;
        let types = self.operand_types(scope);
        crate::expr::json::bind::call(JsonFn::JsonValue(spec), "json_value", bound, &types)
    }
}
