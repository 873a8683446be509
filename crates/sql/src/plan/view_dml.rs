//! INSERT, UPDATE and DELETE through a view (MySQL's MERGE of an
//! updatable view): the statement is rewritten into one on the view's
//! base table, each view column replaced by the base expression behind
//! it and the view's WHERE added. Views over views are unfolded level by
//! level. WITH CHECK OPTION becomes conditions on the base rows written
//! (`exec::check`, 1369): LOCAL adds the view's own WHERE, CASCADED its
//! own and every view's below it.
//!
//! Updatable here: one table (or view) in FROM, no DISTINCT, GROUP BY,
//! HAVING, aggregate, window, LIMIT, UNION, WITH or subquery in the select
//! list, ALGORITHM not TEMPTABLE. Views joining tables are refused (1395
//! for DELETE, 1235 otherwise).

use super::bind::Binder;
use crate::parser::ast::{
    self, BinaryOp, Expr, InsertSource, ObjectName, SelectItem, Statement, TableRef,
};
use lockstep_engine::{CheckOption, ViewDef};
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

type Result<T> = std::result::Result<T, Error>;

const MAX_DEPTH: usize = 32;

/// A view statement rewritten onto a base table.
#[derive(Debug)]
pub struct ViewDml {
    pub stmt: Statement,
    /// CHECK OPTION conditions over the base row: (`db.view`, condition).
    pub checks: Vec<(String, Expr)>,
    /// The alias the rewritten statement gives the base table.
    pub alias: String,
}

/// One view level: what it selects from and its columns' expressions.
struct Shape {
    from: ObjectName,
    alias: String,
    /// (view column name, expression over `from`).
    columns: Vec<(String, Expr)>,
    filter: Option<Expr>,
}

fn target(stmt: &Statement) -> Option<&ObjectName> {
    match stmt {
        Statement::Insert(i) => Some(&i.table),
        Statement::Update(u) if u.multi.is_none() => Some(&u.table),
        Statement::Delete(d) if d.multi.is_none() => Some(&d.table),
        _ => None,
    }
}

fn verb(stmt: &Statement) -> &'static str {
    match stmt {
        Statement::Insert(_) => "INSERT",
        Statement::Update(_) => "UPDATE",
        _ => "DELETE",
    }
}

fn not_updatable(stmt: &Statement, view: &ViewDef) -> Error {
    match stmt {
        Statement::Insert(_) => Error::new(
            Code::NonInsertableTable,
            format!(
                "The target table {} of the INSERT is not insertable-into",
                view.name
            ),
        ),
        s => Error::new(
            Code::NonUpdatableTable,
            format!(
                "The target table {} of the {} is not updatable",
                view.name,
                verb(s)
            ),
        ),
    }
}

impl Binder<'_> {
    /// The statement on the base table when `stmt` changes rows of a view
    /// (None: its target is no view).
    pub fn rewrite_view_dml(&mut self, stmt: &Statement) -> Result<Option<ViewDml>> {
        let mut cur: Option<ViewDml> = None;
        let mut cascade: Option<String> = None;
        for _ in 0..MAX_DEPTH {
            let now = cur.as_ref().map_or(stmt, |c| &c.stmt);
            let Some(view) = target(now).and_then(|t| self.view(t)) else {
                return Ok(cur);
            };
            let shape = self.shape(now, &view)?;
            let alias = statement_alias(now).unwrap_or_else(|| view.name.clone());
            let map = |t: &Option<String>, n: &str| column_of(&shape, &alias, t, n);
            let mut checks: Vec<(String, Expr)> = Vec::new();
            for (name, c) in cur.iter().flat_map(|c| &c.checks) {
                checks.push((name.clone(), map_columns(c, &map)));
            }
            let stmt = rewrite(now, &view, &shape, &map)?;
            // A CASCADED view's checks below it fail in its name.
            let name = format!("{}.{}", view.database, view.name);
            let own = matches!(
                view.check_option,
                CheckOption::Local | CheckOption::Cascaded
            );
            if cascade.is_none() && view.check_option == CheckOption::Cascaded {
                cascade = Some(name.clone());
            }
            if let (true, Some(f)) = (own || cascade.is_some(), &shape.filter) {
                checks.push((cascade.clone().unwrap_or(name), f.clone()));
            }
            cur = Some(ViewDml {
                stmt,
                checks,
                alias: shape.alias.clone(),
            });
        }
        Err(Error::new(
            Code::ViewRecursive,
            "view recursion".to_string(),
        ))
    }

    /// information_schema.VIEWS.IS_UPDATABLE: whether rows of the view
    /// can be changed (as far as its own definition tells).
    pub fn view_updatable(&mut self, view: &Arc<ViewDef>) -> bool {
        let probe = Statement::Delete(Box::new(ast::Delete {
            table: ObjectName {
                database: Some(view.database.clone()),
                name: view.name.clone(),
            },
            alias: None,
            selection: None,
            order_by: Vec::new(),
            limit: None,
            multi: None,
            ignore: false,
        }));
        self.shape(&probe, view).is_ok()
    }

    /// The view's FROM object and column expressions, if updatable.
    fn shape(&mut self, stmt: &Statement, view: &Arc<ViewDef>) -> Result<Shape> {
        let q = super::bind::view_query(view)?;
        let ast::QueryBody::Select(s) = &q.body else {
            return Err(not_updatable(stmt, view));
        };
        let plain = q.with.is_empty()
            && q.limit.is_none()
            && q.lock.is_none()
            && !s.distinct
            && s.group_by.is_empty()
            && s.having.is_none()
            && !view.algorithm.eq_ignore_ascii_case("TEMPTABLE");
        let complex = s.projection.iter().any(|i| match i {
            SelectItem::Expr { expr, .. } => {
                super::bind::contains_aggregate(expr)
                    || matches!(expr, Expr::Subquery(_) | Expr::Window(_))
            }
            _ => false,
        });
        if !plain || complex {
            return Err(not_updatable(stmt, view));
        }
        let (from, alias) = match s.from.as_slice() {
            [TableRef::Table { name, alias, .. }] => {
                let mut from = name.clone();
                from.database.get_or_insert_with(|| view.database.clone());
                let alias = alias.clone().unwrap_or_else(|| name.name.clone());
                (from, alias)
            }
            [TableRef::Join { .. }] | [_, _, ..] if matches!(stmt, Statement::Delete(_)) => {
                return Err(Error::new(
                    Code::ViewDeleteMergeView,
                    format!(
                        "Can not delete from join view '{}.{}'",
                        view.database, view.name
                    ),
                ))
            }
            [TableRef::Join { .. }] | [_, _, ..] => {
                return Err(Error::unsupported(
                    "changing rows through a view that joins tables",
                ))
            }
            _ => return Err(not_updatable(stmt, view)),
        };
        let columns = self.view_items(view, s, &from, &alias)?;
        Ok(Shape {
            from,
            alias,
            columns,
            filter: s.selection.clone(),
        })
    }

    /// (name, expression) per view column, `*` expanded.
    fn view_items(
        &mut self,
        view: &Arc<ViewDef>,
        s: &ast::Select,
        from: &ObjectName,
        alias: &str,
    ) -> Result<Vec<(String, Expr)>> {
        let mut out = Vec::new();
        for item in &s.projection {
            match item {
                SelectItem::Expr {
                    expr,
                    alias: a,
                    name,
                } => {
                    let own = match expr {
                        Expr::Column { name: c, .. } => Some(c.clone()),
                        _ => None,
                    };
                    let shown = a.clone().or(own).or_else(|| name.clone());
                    out.push((shown.unwrap_or_default(), expr.clone()));
                }
                SelectItem::Wildcard | SelectItem::QualifiedWildcard(_) => {
                    for c in self.object_columns(from)? {
                        let e = Expr::Column {
                            table: Some(alias.to_string()),
                            name: c.clone(),
                        };
                        out.push((c, e));
                    }
                }
            }
        }
        if !view.columns.is_empty() {
            if view.columns.len() != out.len() {
                return Err(super::bind::view_invalid(&view.database, &view.name));
            }
            for (c, name) in out.iter_mut().zip(&view.columns) {
                c.0 = name.clone();
            }
        }
        Ok(out)
    }

    /// The column names of a table or view.
    fn object_columns(&mut self, name: &ObjectName) -> Result<Vec<String>> {
        if let Some(v) = self.view(name) {
            let cols = self.view_columns(&v)?;
            return Ok(cols.iter().map(|c| c.name.clone()).collect());
        }
        let def = self.table(name)?.def();
        Ok(def.visible_columns().map(|(_, c)| c.name.clone()).collect())
    }
}

/// The name a single-table INSERT, UPDATE or DELETE gives its target:
/// its alias, else the name it writes (a view's, before the rewrite).
pub fn target_name(stmt: &Statement) -> Option<String> {
    statement_alias(stmt).or_else(|| target(stmt).map(|t| t.name.clone()))
}

fn statement_alias(stmt: &Statement) -> Option<String> {
    match stmt {
        Statement::Update(u) => u.alias.clone(),
        Statement::Delete(d) => d.alias.clone(),
        _ => None,
    }
}

/// The expression behind view column `name` (qualified by nothing, the
/// view's name or the statement's alias for it).
fn column_of(shape: &Shape, alias: &str, table: &Option<String>, name: &str) -> Option<Expr> {
    if table
        .as_deref()
        .is_some_and(|t| !t.eq_ignore_ascii_case(alias))
    {
        return None;
    }
    shape
        .columns
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(name))
        .map(|(_, e)| e.clone())
}

/// The base column a view column stands for, when it is a plain column.
fn base_column(e: &Option<Expr>) -> Option<String> {
    match e {
        Some(Expr::Column { name, .. }) => Some(name.clone()),
        _ => None,
    }
}

fn and(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::Binary {
            op: BinaryOp::And,
            left: Box::new(a),
            right: Box::new(b),
        }),
        (a, b) => a.or(b),
    }
}

type ColumnMap<'a> = dyn Fn(&Option<String>, &str) -> Option<Expr> + 'a;

/// The statement on the view's FROM object.
fn rewrite(stmt: &Statement, view: &ViewDef, shape: &Shape, map: &ColumnMap) -> Result<Statement> {
    let m = |e: &Expr| map_columns(e, map);
    let set_column = |col: &str| -> Result<String> {
        let (q, name) = match col.rsplit_once('.') {
            Some((q, n)) => (Some(q.rsplit('.').next().unwrap_or(q).to_string()), n),
            None => (None, col),
        };
        let e = map(&q, name);
        base_column(&e).ok_or_else(|| match e {
            None => Error::bad_field(col, "field list"),
            Some(_) => Error::new(
                Code::FieldNotUpdatable,
                format!("Column '{name}' is not updatable"),
            ),
        })
    };
    let filter = shape.filter.clone();
    Ok(match stmt {
        Statement::Update(u) => {
            let mut n = (**u).clone();
            n.table = shape.from.clone();
            n.alias = Some(shape.alias.clone());
            n.assignments = u
                .assignments
                .iter()
                .map(|(c, e)| Ok((set_column(c)?, m(e))))
                .collect::<Result<_>>()?;
            n.selection = and(filter, u.selection.as_ref().map(m));
            n.order_by.iter_mut().for_each(|o| o.expr = m(&o.expr));
            Statement::Update(Box::new(n))
        }
        Statement::Delete(d) => {
            let mut n = (**d).clone();
            n.table = shape.from.clone();
            n.alias = Some(shape.alias.clone());
            n.selection = and(filter, d.selection.as_ref().map(m));
            n.order_by.iter_mut().for_each(|o| o.expr = m(&o.expr));
            Statement::Delete(Box::new(n))
        }
        Statement::Insert(i) => Statement::Insert(Box::new(rewrite_insert(i, view, shape, map)?)),
        _ => return Err(Error::internal("view DML of another statement")),
    })
}

fn rewrite_insert(
    i: &ast::Insert,
    view: &ViewDef,
    shape: &Shape,
    map: &ColumnMap,
) -> Result<ast::Insert> {
    // A view with a column that is not a plain column takes no INSERT.
    if shape
        .columns
        .iter()
        .any(|(_, e)| !matches!(e, Expr::Column { .. }))
    {
        return Err(Error::new(
            Code::NonInsertableTable,
            format!(
                "The target table {} of the INSERT is not insertable-into",
                view.name
            ),
        ));
    }
    let mut n = i.clone();
    n.table = shape.from.clone();
    let named: Vec<String> = match i.columns.is_empty() {
        true => shape.columns.iter().map(|(c, _)| c.clone()).collect(),
        false => i.columns.clone(),
    };
    let empty_values =
        matches!(&i.source, InsertSource::Values(rows) if rows.iter().all(|r| r.is_empty()));
    if !(i.columns.is_empty() && empty_values) {
        n.columns = named
            .iter()
            .map(|c| base_column(&map(&None, c)).ok_or_else(|| Error::bad_field(c, "field list")))
            .collect::<Result<_>>()?;
    }
    n.on_duplicate = i
        .on_duplicate
        .iter()
        .map(|(c, e)| {
            let col =
                base_column(&map(&None, c)).ok_or_else(|| Error::bad_field(c, "field list"))?;
            Ok((col, map_columns(e, map)))
        })
        .collect::<Result<_>>()?;
    Ok(n)
}

/// `e` with every column reference `map` knows replaced (subqueries are
/// left as they are: they name their own tables).
pub fn map_columns(e: &Expr, map: &ColumnMap) -> Expr {
    let b = |x: &Expr| Box::new(map_columns(x, map));
    let v = |xs: &[Expr]| xs.iter().map(|x| map_columns(x, map)).collect::<Vec<_>>();
    match e {
        Expr::Column { table, name } => map(table, name).unwrap_or_else(|| e.clone()),
        Expr::Unary { op, expr } => Expr::Unary {
            op: *op,
            expr: b(expr),
        },
        Expr::Binary { op, left, right } => Expr::Binary {
            op: *op,
            left: b(left),
            right: b(right),
        },
        Expr::IsNull { expr, negated } => Expr::IsNull {
            expr: b(expr),
            negated: *negated,
        },
        Expr::IsBool {
            expr,
            value,
            negated,
        } => Expr::IsBool {
            expr: b(expr),
            value: *value,
            negated: *negated,
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr: b(expr),
            list: v(list),
            negated: *negated,
        },
        Expr::InSubquery {
            expr,
            query,
            negated,
        } => Expr::InSubquery {
            expr: b(expr),
            query: query.clone(),
            negated: *negated,
        },
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => Expr::Between {
            expr: b(expr),
            low: b(low),
            high: b(high),
            negated: *negated,
        },
        Expr::Like {
            expr,
            pattern,
            escape,
            negated,
        } => Expr::Like {
            expr: b(expr),
            pattern: b(pattern),
            escape: escape.as_ref().map(|x| b(x)),
            negated: *negated,
        },
        Expr::Function {
            name,
            args,
            distinct,
            star,
            database,
            spelled,
        } => Expr::Function {
            name: name.clone(),
            args: v(args),
            distinct: *distinct,
            star: *star,
            database: database.clone(),
            spelled: spelled.clone(),
        },
        Expr::Case {
            operand,
            branches,
            else_result,
        } => Expr::Case {
            operand: operand.as_ref().map(|x| b(x)),
            branches: branches
                .iter()
                .map(|(w, t)| (map_columns(w, map), map_columns(t, map)))
                .collect(),
            else_result: else_result.as_ref().map(|x| b(x)),
        },
        Expr::Cast { expr, to } => Expr::Cast {
            expr: b(expr),
            to: *to,
        },
        Expr::Interval { value, unit } => Expr::Interval {
            value: b(value),
            unit: unit.clone(),
        },
        Expr::Row(xs) => Expr::Row(v(xs)),
        other => other.clone(),
    }
}
