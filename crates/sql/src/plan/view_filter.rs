//! Filter pushdown into a view: a view is bound like a derived table, so
//! without this `SELECT .. FROM v WHERE id = 3` would compute all of v
//! first. When the view is a plain SELECT (no aggregation, DISTINCT,
//! LIMIT, ORDER BY, set operation or WITH) and the outer query reads it
//! alone, each outer WHERE conjunct made only of the view's columns,
//! literals, placeholders and simple operators is rewritten in terms of
//! the view's own expressions and added to the view's WHERE, where it
//! can pick an index. The outer WHERE keeps it too, so results cannot
//! change; only the rows the view produces do.

use crate::parser::{self as ast, BinaryOp, Expr, SelectItem, TableRef};

/// The outer query's WHERE when it reads a single plain table name, the
/// only case a view in it can take conditions from.
pub fn pushable_where(s: &ast::Select) -> Option<Expr> {
    match s.from.as_slice() {
        [TableRef::Table { .. }] => s.selection.clone(),
        _ => None,
    }
}

/// `view` with the conjuncts of `outer` it can take added to its WHERE;
/// `alias` is the name the outer query reads it by, `columns` the view's
/// column list.
pub fn push_into(view: &mut ast::Query, outer: &Expr, alias: &str, columns: &[String]) {
    let ast::QueryBody::Select(s) = &mut view.body else {
        return;
    };
    let plain = view.with.is_empty()
        && view.order_by.is_empty()
        && view.limit.is_none()
        && view.lock.is_none()
        && !s.distinct
        && s.group_by.is_empty()
        && s.having.is_none()
        && !s.projection.iter().any(|i| match i {
            SelectItem::Expr { expr, .. } => super::contains_aggregate(expr),
            _ => false,
        });
    if !plain {
        return;
    }
    let mut conjuncts = Vec::new();
    split_and(outer, &mut conjuncts);
    for c in conjuncts {
        let map = |table: &Option<String>, name: &str| view_expr(s, table, name, alias, columns);
        if let Some(e) = rewrite(c, &map) {
            s.selection = Some(match s.selection.take() {
                Some(w) => Expr::Binary {
                    op: BinaryOp::And,
                    left: Box::new(w),
                    right: Box::new(e),
                },
                None => e,
            });
        }
    }
}

pub(crate) fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => {
            split_and(left, out);
            split_and(right, out);
        }
        e => out.push(e),
    }
}

/// The view's expression behind output column `name` (None: not one of
/// the view's columns, or one whose expression is not known here).
fn view_expr(
    s: &ast::Select,
    table: &Option<String>,
    name: &str,
    alias: &str,
    columns: &[String],
) -> Option<Expr> {
    if table.as_deref().is_some_and(|t| t != alias) {
        return None;
    }
    // Only a select list of expressions (no `*`) maps names to them.
    let items: Vec<(&Expr, Option<&str>)> = s
        .projection
        .iter()
        .map(|i| match i {
            SelectItem::Expr { expr, alias, .. } => {
                let own = alias.as_deref().or(match expr {
                    Expr::Column { name, .. } => Some(name.as_str()),
                    _ => None,
                });
                Some((expr, own))
            }
            _ => None,
        })
        .collect::<Option<_>>()?;
    let pos = if columns.is_empty() {
        let named =
            |(_, n): &&(&Expr, Option<&str>)| n.is_some_and(|n| n.eq_ignore_ascii_case(name));
        if items.iter().filter(named).count() != 1 {
            return None;
        }
        items.iter().position(|x| named(&x))?
    } else {
        columns.iter().position(|c| c.eq_ignore_ascii_case(name))?
    };
    items.get(pos).map(|(e, _)| (*e).clone())
}

/// `e` with every column replaced through `map`; None when a column has
/// no replacement or `e` holds something not known to be safe to move
/// (subqueries, functions, variables).
fn rewrite(e: &Expr, map: &dyn Fn(&Option<String>, &str) -> Option<Expr>) -> Option<Expr> {
    let mut safe = true;
    crate::parser::visit_expr(e, &mut |x| {
        safe &= match x {
            Expr::Column { table, name } => map(table, name).is_some(),
            Expr::Literal(_) | Expr::Param(_) => true,
            Expr::Binary { .. }
            | Expr::Unary { .. }
            | Expr::IsNull { .. }
            | Expr::InList { .. }
            | Expr::Between { .. } => true,
            _ => false,
        };
    });
    safe.then(|| crate::plan::view_dml::map_columns(e, map))
}
