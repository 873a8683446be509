//! Filter pushdown into a view, a derived table or a CTE (MySQL 8's
//! derived condition pushdown): each is bound like a derived table, so
//! without this `SELECT .. FROM v WHERE id = 3` would compute all of v
//! first. A conjunct of the outer block's WHERE (or of an inner join's
//! ON) made only of one such table's columns, literals, placeholders and
//! simple operators is rewritten in terms of the table's own expressions
//! and added to its WHERE, where it can pick an index. Constants reach
//! it through equalities too: `d.k = t.id AND t.id = 5` gives `d.k = 5`.
//! The outer WHERE keeps every conjunct, so results cannot change; only
//! the rows the table produces do.
//!
//! Into a plain SELECT (no aggregation, DISTINCT, LIMIT, ORDER BY, set
//! operation or WITH) any such conjunct goes; into a grouped one (GROUP
//! BY without ROLLUP, window or LIMIT) only one on its GROUP BY columns,
//! which keeps or drops whole groups. Nothing goes into a table an outer
//! join may NULL-extend (an IS NULL test would then keep rows it should
//! not), and with several tables only conjuncts naming the table by its
//! alias.

use crate::parser::{self as ast, BinaryOp, Expr, JoinCondition, JoinKind, SelectItem, TableRef};

/// What a block's FROM items may take conditions from.
#[derive(Clone, Debug)]
pub struct Pushable {
    /// The WHERE's conjuncts, the inner joins' ON conjuncts, and the
    /// constants equalities carry to other columns.
    conds: Vec<Expr>,
    /// The FROM is one item: its columns need no qualifier.
    single: bool,
    /// Aliases an outer join may NULL-extend.
    nullable: Vec<String>,
}

/// The conditions block `s` offers the derived tables and views of its
/// FROM, if any.
pub fn pushable_where(s: &ast::Select) -> Option<Pushable> {
    let mut conds = Vec::new();
    if let Some(w) = &s.selection {
        split_and(w, &mut conds);
    }
    let mut on = Vec::new();
    let mut nullable = Vec::new();
    for t in &s.from {
        inner_conditions(t, false, &mut on, &mut nullable);
    }
    let mut conds: Vec<Expr> = conds.into_iter().chain(on).cloned().collect();
    if conds.is_empty() {
        return None;
    }
    let single = matches!(
        s.from.as_slice(),
        [TableRef::Table { .. } | TableRef::Derived { .. }]
    );
    conds.extend(carried_constants(&conds));
    Some(Pushable {
        conds,
        single,
        nullable,
    })
}

/// The ON conjuncts of the inner joins of `t` outside any outer join's
/// NULL-extended side, and the aliases on such sides.
fn inner_conditions<'e>(
    t: &'e TableRef,
    nullable: bool,
    on: &mut Vec<&'e Expr>,
    out: &mut Vec<String>,
) {
    match t {
        TableRef::Table { name, alias, .. } if nullable => {
            out.push(alias.clone().unwrap_or_else(|| name.name.clone()))
        }
        TableRef::Derived { alias, .. } if nullable => out.push(alias.clone()),
        TableRef::Join {
            left,
            right,
            kind,
            on: cond,
        } => {
            let (l, r) = match kind {
                JoinKind::Left => (nullable, true),
                JoinKind::Right => (true, nullable),
                JoinKind::Inner | JoinKind::Cross => (nullable, nullable),
            };
            inner_conditions(left, l, on, out);
            inner_conditions(right, r, on, out);
            if let (false, false, JoinCondition::On(e)) = (l, r, cond) {
                split_and(e, on);
            }
        }
        _ => {}
    }
}

/// `a.x = c` for each `a.x = b.y` and `b.y = c` (c a literal or a
/// placeholder), between qualified columns, followed transitively.
fn carried_constants(conds: &[Expr]) -> Vec<Expr> {
    let qualified = |e: &Expr| matches!(e, Expr::Column { table: Some(_), .. });
    let constant = |e: &Expr| matches!(e, Expr::Literal(_) | Expr::Param(_));
    let mut known: Vec<(Expr, Expr)> = Vec::new();
    let mut links: Vec<(&Expr, &Expr)> = Vec::new();
    for c in conds {
        let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
        } = c
        else {
            continue;
        };
        match (&**left, &**right) {
            (a, b) if qualified(a) && qualified(b) => links.push((a, b)),
            (a, k) | (k, a) if qualified(a) && constant(k) => known.push((a.clone(), k.clone())),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < known.len() && out.len() < 64 {
        let (col, k) = known[i].clone();
        for (a, b) in &links {
            let other = match () {
                _ if **a == col => *b,
                _ if **b == col => *a,
                _ => continue,
            };
            if !known.iter().any(|(c, _)| c == other) {
                known.push((other.clone(), k.clone()));
                out.push(Expr::Binary {
                    op: BinaryOp::Eq,
                    left: Box::new(other.clone()),
                    right: Box::new(k.clone()),
                });
            }
        }
        i += 1;
    }
    out
}

/// `query`, the table the outer block reads as `alias` (`columns`: its
/// column list, if given), with the conditions of `p` it can take added
/// to its WHERE; None when it takes none.
pub fn pushed(
    query: &ast::Query,
    p: &Pushable,
    alias: &str,
    columns: &[String],
) -> Option<ast::Query> {
    let ast::QueryBody::Select(s) = &query.body else {
        return None;
    };
    if p.nullable.iter().any(|a| a == alias) || !takes_conditions(query, s) {
        return None;
    }
    let grouped = !s.group_by.is_empty();
    let mut taken = Vec::new();
    for c in &p.conds {
        let map = |table: &Option<String>, name: &str| {
            if table.is_none() && !p.single {
                return None;
            }
            let pos = view_item(s, table, name, alias, columns)?;
            let SelectItem::Expr { expr, .. } = &s.projection[pos] else {
                return None;
            };
            (!grouped || groups_by(s, pos)).then(|| expr.clone())
        };
        taken.extend(rewrite(c, &map));
    }
    let mut query = query.clone();
    for e in taken {
        query = with_condition(query, e);
    }
    Some(query)
}

/// `query` with `cond` added to its WHERE (a single SELECT's; a set
/// operation is returned as is).
pub fn with_condition(mut query: ast::Query, cond: Expr) -> ast::Query {
    if let ast::QueryBody::Select(s) = &mut query.body {
        s.selection = Some(match s.selection.take() {
            Some(w) => Expr::Binary {
                op: BinaryOp::And,
                left: Box::new(w),
                right: Box::new(cond),
            },
            None => cond,
        });
    }
    query
}

/// The expression behind output column `name` of the grouped `query`
/// (read as `alias`, column list `columns`) when it is one of its GROUP
/// BY columns and the query may take a condition on it: a key by which
/// its groups can be computed one key at a time (plan/split.rs).
pub fn group_key(query: &ast::Query, alias: &str, columns: &[String], name: &str) -> Option<Expr> {
    let ast::QueryBody::Select(s) = &query.body else {
        return None;
    };
    if s.group_by.is_empty() || !takes_conditions(query, s) {
        return None;
    }
    let pos = view_item(s, &Some(alias.to_string()), name, alias, columns)?;
    let SelectItem::Expr { expr, .. } = &s.projection[pos] else {
        return None;
    };
    groups_by(s, pos).then(|| expr.clone())
}

/// Whether a derived query's rows may be filtered before it runs: one
/// SELECT with no LIMIT, ORDER BY, DISTINCT, WITH or locking clause; if
/// it aggregates, by GROUP BY without ROLLUP or windows.
fn takes_conditions(query: &ast::Query, s: &ast::Select) -> bool {
    let simple = query.with.is_empty()
        && query.order_by.is_empty()
        && query.limit.is_none()
        && query.offset.is_none()
        && query.lock.is_none()
        && !s.distinct
        && !s.rollup
        && s.windows.is_empty();
    let mut windowed = false;
    let mut aggregate = s.having.is_some();
    for i in &s.projection {
        if let SelectItem::Expr { expr, .. } = i {
            aggregate |= super::contains_aggregate(expr);
            windowed |= super::window::has_window(expr);
        }
    }
    simple && !windowed && (!aggregate || !s.group_by.is_empty())
}

/// Whether select item `pos` is one of the block's GROUP BY expressions
/// (written again, or named by its alias or position).
fn groups_by(s: &ast::Select, pos: usize) -> bool {
    let SelectItem::Expr { expr, alias, .. } = &s.projection[pos] else {
        return false;
    };
    let one_table = matches!(s.from.as_slice(), [TableRef::Table { .. }]);
    s.group_by.iter().any(|g| match g {
        g if g == expr => true,
        Expr::Column { table: None, name } if alias.as_deref() == Some(name.as_str()) => true,
        Expr::Column { table: None, name } => {
            one_table
                && matches!(expr, Expr::Column { name: n, .. } if n.eq_ignore_ascii_case(name))
        }
        Expr::Literal(lockstep_types::Value::Int(n)) => *n == pos as i64 + 1,
        _ => false,
    })
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

/// The position of the select item behind output column `name` (None:
/// not one of the table's columns, or one whose expression is not known
/// here).
fn view_item(
    s: &ast::Select,
    table: &Option<String>,
    name: &str,
    alias: &str,
    columns: &[String],
) -> Option<usize> {
    if table.as_deref().is_some_and(|t| t != alias) {
        return None;
    }
    // Only a select list of expressions (no `*`) maps names to them.
    let items: Vec<Option<&str>> = s
        .projection
        .iter()
        .map(|i| match i {
            SelectItem::Expr { expr, alias, .. } => Some(alias.as_deref().or(match expr {
                Expr::Column { name, .. } => Some(name.as_str()),
                _ => None,
            })),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if !columns.is_empty() {
        return columns.iter().position(|c| c.eq_ignore_ascii_case(name));
    }
    let named = |n: &Option<&str>| n.is_some_and(|n| n.eq_ignore_ascii_case(name));
    if items.iter().filter(|n| named(n)).count() != 1 {
        return None;
    }
    items.iter().position(named)
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
