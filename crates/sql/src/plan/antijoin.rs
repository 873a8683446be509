//! Anti-joins: a WHERE conjunct `NOT EXISTS (SELECT .. FROM t WHERE t.k =
//! o.x AND ..)`, or `o.x NOT IN (SELECT t.k FROM t WHERE ..)` where
//! neither `o.x` nor `t.k` can be NULL, becomes a LEFT JOIN, as MySQL
//! 8.0.17+ turns them into anti-joins.
//!
//! The subquery's one table joins after every table of the FROM, on its
//! key equalities and the rest of its WHERE, and the conjunct becomes
//! `t.k IS NULL`: a row is kept exactly when no row of `t` matches it.
//! The key is compared by `=`, so a match never leaves it NULL, and the
//! join is a "Not exists" one (`join_order::not_exists`): each outer row
//! stops at its first match. The join order picks the inner table's
//! access (index lookups by the outer row, or a hash join).
//!
//! NOT IN is rewritten only where an index starts with the subquery's
//! column: otherwise the subquery's values hashed once (a set of values,
//! not a hash join's rows) answer it faster.
//!
//! The table joins under a hidden alias (`<antijoinN>t`): its columns
//! resolve only by that qualifier, which no statement can write, so the
//! outer block's names and `*` never reach them. EXPLAIN and LOCK TABLES
//! see the subquery's own alias (`shown`).
//!
//! Only what keeps the subquery's meaning unchanged is rewritten: one base
//! table, no aggregate, GROUP BY, HAVING, LIMIT or window
//! (`semijoin_nest::plain_select`), no subquery in its WHERE, and every
//! column it names known to be its table's or the enclosing query's.

use crate::parser::ast::{self, BinaryOp, Expr, JoinCondition, JoinKind, SelectItem, TableRef};
use crate::plan::bind::view_filter::split_and as conjuncts;
use crate::plan::bind::{contains_aggregate, Binder};
use crate::plan::semijoin_nest::{and_all, equality, has_candidate, plain_select};
use lockstep_tables::TableDef;
use std::sync::Arc;

/// Anti-joins made in one query block at the most.
const MAX_ANTIJOINS: usize = 4;

const PREFIX: &str = "<antijoin";

/// The hidden alias of anti-join `n` over a table the subquery calls
/// `alias`.
fn hidden_alias(n: usize, alias: &str) -> String {
    format!("{PREFIX}{n}>{alias}")
}

/// Whether a qualifier is an anti-join's hidden alias.
pub fn is_hidden(qualifier: &str) -> bool {
    qualifier.starts_with(PREFIX)
}

/// The alias a table is shown by: the subquery's own for an anti-join.
pub fn shown(qualifier: &str) -> &str {
    match is_hidden(qualifier) {
        true => qualifier.split_once('>').map_or(qualifier, |(_, a)| a),
        false => qualifier,
    }
}

/// The subquery's table: its reference, alias and definition.
struct Inner<'q> {
    name: &'q ast::ObjectName,
    hints: &'q [ast::IndexHint],
    alias: String,
    def: Arc<TableDef>,
}

impl Inner<'_> {
    /// The position of the table's column `name`.
    fn column(&self, name: &str) -> Option<usize> {
        let named = |c: &lockstep_tables::ColumnDef| c.name.eq_ignore_ascii_case(name);
        self.def.columns.iter().position(named)
    }

    fn has(&self, name: &str) -> bool {
        self.column(name).is_some()
    }

    /// Whether a column reference is this table's (Some(true)), the
    /// enclosing query's (Some(false)), or names this table but no column
    /// of it (None: left to the subquery's own binding to report).
    fn owns(&self, table: &Option<String>, name: &str) -> Option<bool> {
        match table {
            Some(t) if *t == self.alias => self.has(name).then_some(true),
            Some(_) => Some(false),
            None => Some(self.has(name)),
        }
    }

    /// Whether an index of the table starts with column `name`.
    fn leads_index(&self, name: &str) -> bool {
        let pos = self.column(name);
        let leads = |ix: &lockstep_tables::IndexDef| ix.columns.first() == pos.as_ref();
        pos.is_some() && self.def.indexes.iter().any(leads)
    }

    fn not_null(&self, name: &str) -> bool {
        self.column(name)
            .is_some_and(|i| !self.def.columns[i].nullable)
    }
}

/// One anti-join: the table to join, its ON and the column to test.
struct Anti {
    table: TableRef,
    on: Expr,
    null_test: Expr,
}

impl Binder<'_> {
    /// Block `s` of query `q` with its eligible NOT EXISTS / NOT IN
    /// conjuncts turned into anti-joins, or None when it has none.
    pub(crate) fn antijoined(&self, s: &ast::Select, q: &ast::Query) -> Option<ast::Select> {
        let selection = s.selection.as_ref()?;
        if !has_candidate(selection, true) || s.from.is_empty() || q.lock.is_some() {
            return None;
        }
        if self.is_stripping(s) {
            return None; // the keyed plan of this block must see it as written
        }
        let mut all = Vec::new();
        conjuncts(selection, &mut all);
        let mut kept = Vec::new();
        let mut antis = Vec::new();
        for c in all {
            let anti = match c {
                _ if antis.len() == MAX_ANTIJOINS => None,
                Expr::Exists {
                    query,
                    negated: true,
                } => self.anti_of(None, query, antis.len() + 1),
                Expr::InSubquery {
                    expr,
                    query,
                    negated: true,
                } if self.never_null(&s.from, expr) => {
                    self.anti_of(Some(expr), query, antis.len() + 1)
                }
                _ => None,
            };
            match anti {
                Some(a) => {
                    kept.push(a.null_test.clone());
                    antis.push(a);
                }
                None => kept.push(c.clone()),
            }
        }
        if antis.is_empty() {
            return None;
        }
        let mut from = s.from.clone().into_iter();
        let first = from.next()?;
        let mut joined = from.fold(first, |l, r| TableRef::Join {
            left: Box::new(l),
            right: Box::new(r),
            kind: JoinKind::Inner,
            on: JoinCondition::None,
        });
        for a in antis {
            joined = TableRef::Join {
                left: Box::new(joined),
                right: Box::new(a.table),
                kind: JoinKind::Left,
                on: JoinCondition::On(a.on),
            };
        }
        Some(ast::Select {
            from: vec![joined],
            selection: and_all(kept),
            ..s.clone()
        })
    }

    /// The subquery's one base table (not a view or a CTE).
    fn inner_table<'q>(&self, s: &'q ast::Select) -> Option<Inner<'q>> {
        let [TableRef::Table { name, alias, hints }] = &s.from[..] else {
            return None;
        };
        if self.view(name).is_some() {
            return None;
        }
        let def = self.base_table(name)?.def();
        Some(Inner {
            name,
            hints,
            alias: alias.clone().unwrap_or_else(|| name.name.clone()),
            def,
        })
    }

    /// The anti-join subquery `q` becomes as anti-join `n` (`key`: a NOT
    /// IN's left operand).
    fn anti_of(&self, key: Option<&Expr>, q: &ast::Query, n: usize) -> Option<Anti> {
        let s = plain_select(q)?;
        let inner = self.inner_table(s)?;
        let hidden = hidden_alias(n, &inner.alias);
        let mut pairs: Vec<(String, Expr)> = Vec::new();
        match key {
            Some(outer) => {
                let [SelectItem::Expr {
                    expr: Expr::Column { table, name },
                    ..
                }] = &s.projection[..]
                else {
                    return None;
                };
                if inner.owns(table, name) != Some(true) || !inner.not_null(name) {
                    return None;
                }
                if !inner.leads_index(name) {
                    // Hashed once, the subquery's values alone are cheaper
                    // than a hash join's rows (exec/membership.rs).
                    return None;
                }
                pairs.push((name.clone(), outer.clone()));
            }
            None if !s
                .projection
                .iter()
                .all(|p| selects_nothing_unknown(p, &inner)) =>
            {
                return None
            }
            None => {}
        }
        let mut all = Vec::new();
        if let Some(w) = &s.selection {
            conjuncts(w, &mut all);
        }
        let mut rest = Vec::new();
        for c in all {
            match key_pair(c, &inner) {
                Some(p) => pairs.push(p),
                None => rest.push(rehomed(c, &inner, &hidden)?),
            }
        }
        let (first, _) = pairs.first()?;
        let column = |name: &str| Expr::Column {
            table: Some(hidden.clone()),
            name: name.to_string(),
        };
        let null_test = Expr::IsNull {
            expr: Box::new(column(first)),
            negated: false,
        };
        let mut on: Vec<Expr> = pairs
            .iter()
            .map(|(k, outer)| Expr::Binary {
                op: BinaryOp::Eq,
                left: Box::new(outer.clone()),
                right: Box::new(column(k)),
            })
            .collect();
        on.extend(rest);
        Some(Anti {
            table: TableRef::Table {
                name: inner.name.clone(),
                alias: Some(hidden),
                hints: inner.hints.to_vec(),
            },
            on: and_all(on)?,
            null_test,
        })
    }

    /// Whether `e`, in block `from`, is a column that is never NULL: a
    /// NOT NULL column of a base table of `from` that no outer join may
    /// leave NULL, named so that nothing else could be meant.
    fn never_null(&self, from: &[TableRef], e: &Expr) -> bool {
        let Expr::Column { table, name } = e else {
            return false;
        };
        let mut found = Vec::new();
        let mut opaque = false;
        for t in from {
            self.tables_of(t, false, &mut found, &mut opaque);
        }
        let matches: Vec<_> = found
            .iter()
            .filter(|(alias, def, _)| match table {
                Some(t) => alias == t,
                None => def
                    .columns
                    .iter()
                    .any(|c| c.name.eq_ignore_ascii_case(name)),
            })
            .collect();
        let [(_, def, nullable_side)] = &matches[..] else {
            return false;
        };
        let column = def
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name));
        let unique = table.is_some() || !opaque;
        unique && !nullable_side && column.is_some_and(|c| !c.nullable)
    }

    /// The base tables of a FROM item: alias, definition, and whether an
    /// outer join may leave their columns NULL. `opaque` is set when the
    /// item holds a table whose columns are not known here.
    fn tables_of(
        &self,
        t: &TableRef,
        nullable: bool,
        out: &mut Vec<(String, Arc<TableDef>, bool)>,
        opaque: &mut bool,
    ) {
        match t {
            TableRef::Table { name, alias, .. } => {
                let alias = alias.clone().unwrap_or_else(|| name.name.clone());
                match self.view(name).is_none().then(|| self.base_table(name)) {
                    Some(Some(table)) => out.push((alias, table.def(), nullable)),
                    _ => *opaque = true,
                }
            }
            TableRef::Derived { .. } | TableRef::Lateral(_) => *opaque = true,
            TableRef::Join {
                left, right, kind, ..
            } => {
                let (l, r) = match kind {
                    JoinKind::Left => (nullable, true),
                    JoinKind::Right => (true, nullable),
                    _ => (nullable, nullable),
                };
                self.tables_of(left, l, out, opaque);
                self.tables_of(right, r, out, opaque);
            }
        }
    }
}

/// Whether an EXISTS select-list item names only what is known to exist
/// (MySQL checks the list of an EXISTS even though it is not read).
fn selects_nothing_unknown(p: &SelectItem, inner: &Inner) -> bool {
    match p {
        SelectItem::Wildcard => true,
        SelectItem::QualifiedWildcard(t) => *t == inner.alias,
        SelectItem::Expr { expr, .. } => {
            let mut known = !contains_aggregate(expr);
            crate::parser::visit_expr(expr, &mut |x| match x {
                Expr::Column { table, name } => known &= inner.owns(table, name) == Some(true),
                Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => known = false,
                _ => {}
            });
            known
        }
    }
}

/// `inner.k = outer` (either way round) between the subquery's column
/// and an expression that reads none of its columns: (k, outer).
fn key_pair(c: &Expr, inner: &Inner) -> Option<(String, Expr)> {
    let (left, right) = equality(c)?;
    let own = |e: &Expr| match e {
        Expr::Column { table, name } if inner.owns(table, name) == Some(true) => Some(name.clone()),
        _ => None,
    };
    let outside = |e: &Expr| reads_only_outside(e, inner);
    match (own(left), own(right)) {
        (Some(k), None) if outside(right) => Some((k, right.clone())),
        (None, Some(k)) if outside(left) => Some((k, left.clone())),
        _ => None,
    }
}

/// Whether `e` reads columns of the enclosing query only (and is no
/// subquery, aggregate or window).
fn reads_only_outside(e: &Expr, inner: &Inner) -> bool {
    let mut ok = !contains_aggregate(e);
    let mut reads = false;
    crate::parser::visit_expr(e, &mut |x| match x {
        Expr::Column { table, name } => {
            reads = true;
            ok &= inner.owns(table, name) == Some(false);
        }
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } | Expr::Window(_) => {
            ok = false
        }
        _ => {}
    });
    ok && reads
}

/// A condition of the subquery's WHERE for the ON: its table's columns
/// qualified by the hidden alias. None for one that cannot move: it holds
/// a subquery, an aggregate or a window, or names its table's alias with
/// a column the table does not have.
fn rehomed(c: &Expr, inner: &Inner, hidden: &str) -> Option<Expr> {
    let mut ok = !contains_aggregate(c);
    crate::parser::visit_expr(c, &mut |x| match x {
        Expr::Column { table, name } => ok &= inner.owns(table, name).is_some(),
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } | Expr::Window(_) => {
            ok = false
        }
        _ => {}
    });
    if !ok {
        return None;
    }
    let mut c = c.clone();
    crate::parser::rewrite_exprs(&mut c, &mut |x| {
        if let Expr::Column { table, name } = x {
            if inner.owns(table, name) == Some(true) {
                *table = Some(hidden.to_string());
            }
        }
        true
    });
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_alias_shows_the_subquerys_own() {
        let h = hidden_alias(2, "o");
        assert!(is_hidden(&h));
        assert_eq!(shown(&h), "o");
        assert_eq!(shown("o"), "o");
        assert!(!is_hidden("<subquery2>"));
    }
}
