//! MySQL-dialect SQL parser: a byte-level lexer and a recursive-descent
//! parser producing the AST in [`ast`].
//!
//! Conventions the binder relies on:
//! - Function names are upper-cased; identifiers keep their case. System
//!   and user variable names are lower-cased (MySQL treats them
//!   case-insensitively).
//! - Unary minus on a numeric literal is folded into the literal.
//! - `TRIM` is `TRIM(s)` or `TRIM(mode, remstr, s)` with mode the string
//!   'BOTH' / 'LEADING' / 'TRAILING'.
//! - `GROUP_CONCAT(.. SEPARATOR s)` with s other than ',' becomes
//!   `GROUP_CONCAT_SEPARATOR(s, exprs..)`; with an ORDER BY inside,
//!   `GROUP_CONCAT_ORDERED(s, dirs, exprs.., keys..)` (dirs: 'A'/'D' a key).
//! - `SUBSTR`/`MID` are `SUBSTRING`; `EXTRACT(unit FROM d)` is
//!   `EXTRACT('UNIT', d)`; `POSITION(a IN b)` is `POSITION(a, b)`;
//!   `a REGEXP b` is `REGEXP_LIKE(a, b)`.

pub mod ast;
pub(crate) mod keywords;
pub mod lateral_ast;
pub(crate) mod lexer;
#[allow(clippy::module_inception)]
mod parser;
pub mod print;
pub mod role_ast;
pub mod routine_ast;
#[cfg(test)]
mod tests;

pub use ast::*;
pub use lateral_ast::*;
pub use parser::load_data::{LoadData, LoadFormat, LoadTarget};
pub(crate) use parser::{empty_query, empty_select};
pub use role_ast::*;
pub use routine_ast::*;

use lockstep_types::Error;

/// Parses one or more statements separated by `;`. Placeholders `?` become
/// `Expr::Param(i)`, numbered from 0 within each statement.
pub fn parse(sql: &str) -> Result<Vec<Statement>, Error> {
    parse_with(sql, true)
}

/// `parse`; `escapes` false under sql_mode NO_BACKSLASH_ESCAPES.
pub fn parse_with(sql: &str, escapes: bool) -> Result<Vec<Statement>, Error> {
    let toks = lexer::tokenize_with(sql, escapes)?;
    let mut p = parser::Parser::new(sql, toks);
    p.backslash_escapes = escapes;
    p.parse_all()
}

/// The one statement of a COM_STMT_PREPARE text (a trailing ';' is
/// allowed): a second statement is MySQL's 1064 at its start, none 1065.
pub fn parse_one_with(sql: &str, escapes: bool) -> Result<Statement, Error> {
    let mut statements = parse_with(sql, escapes)?;
    match statements.len() {
        1 => return Ok(statements.remove(0)),
        0 => {
            return Err(Error::new(
                lockstep_types::error::Code::EmptyQuery,
                "Query was empty",
            ))
        }
        _ => {}
    }
    let toks = lexer::tokenize_with(sql, escapes)?;
    let second = toks
        .windows(2)
        .find(|w| matches!(w[0].tok, lexer::Tok::Semi) && !matches!(w[1].tok, lexer::Tok::Semi))
        .map_or(sql.len(), |w| w[1].start);
    Err(lexer::syntax_error(sql, second))
}

/// Parses a multi-statement batch up to its first syntax error: the
/// statements before it and the error. A batch runs statement by
/// statement, so a bad statement must not stop the ones before it. No
/// statement and no error: the text was empty or only comments.
pub fn parse_batch(sql: &str) -> (Vec<Statement>, Option<Error>) {
    parse_batch_with(sql, true)
}

/// `parse_batch`; `escapes` false under sql_mode NO_BACKSLASH_ESCAPES.
pub fn parse_batch_with(sql: &str, escapes: bool) -> (Vec<Statement>, Option<Error>) {
    match lexer::tokenize_with(sql, escapes) {
        Ok(toks) => {
            let mut p = parser::Parser::new(sql, toks);
            p.backslash_escapes = escapes;
            p.parse_until_error()
        }
        Err(e) => (Vec::new(), Some(e)),
    }
}

/// Number of `?` placeholders in a parsed statement.
pub fn param_count(stmt: &Statement) -> usize {
    let mut n = 0;
    visit_statement(stmt, &mut |e| {
        if let Expr::Param(i) = e {
            n = n.max(i + 1);
        }
    });
    n
}

/// Whether a query's select list (of any UNION branch) holds a `?`: its
/// result columns are then typed after the values bound at execute.
pub fn selects_param(stmt: &Statement) -> bool {
    fn query(q: &Query) -> bool {
        match &q.body {
            QueryBody::Select(s) => s.projection.iter().any(|item| {
                let mut found = false;
                if let SelectItem::Expr { expr, .. } = item {
                    visit_expr(expr, &mut |e| found |= matches!(e, Expr::Param(_)));
                }
                found
            }),
            QueryBody::Union { left, right, .. } => query(left) || query(right),
        }
    }
    matches!(stmt, Statement::Select(q) if query(q))
}

/// Whether `pred` holds for a base table the query names anywhere: FROM
/// items and joins, derived tables, UNION branches, WITH clauses and
/// subqueries in any expression. Stops looking once it does.
pub fn names_table(q: &Query, pred: &mut dyn FnMut(&ObjectName) -> bool) -> bool {
    let mut found = from_names(q, pred);
    if !found {
        visit_query(q, &mut |e| {
            if let Expr::Subquery(q)
            | Expr::Exists { query: q, .. }
            | Expr::InSubquery { query: q, .. } = e
            {
                found = found || from_names(q, pred);
            }
        });
    }
    found
}

/// Calls `f` on every table `stmt` names, FROM clauses and subqueries
/// anywhere included, with whether it may write it: an INSERT, UPDATE or
/// DELETE target (every table of a multi-table form counts as written).
pub fn statement_tables(stmt: &Statement, f: &mut dyn FnMut(&ObjectName, bool)) {
    let (target, from): (Option<&ObjectName>, Option<&MultiTable>) = match stmt {
        Statement::Insert(i) => (Some(&i.table), None),
        Statement::Update(u) => (Some(&u.table), u.multi.as_deref()),
        Statement::Delete(d) => (Some(&d.table), d.multi.as_deref()),
        _ => (None, None),
    };
    if let Some(t) = target {
        f(t, true);
    }
    if let Some(m) = from {
        for t in &m.from {
            table_names(t, &mut |n| f(n, true));
        }
    }
    if let Statement::Insert(i) = stmt {
        if let InsertSource::Query(q) = &i.source {
            query_tables(q, &mut |n| f(n, false));
        }
    }
    if let Statement::Select(q) | Statement::Do(q) = stmt {
        query_tables(q, &mut |n| f(n, false));
    }
    visit_statement(stmt, &mut |e| expr_tables(e, &mut |n| f(n, false)));
}

/// The tables a subquery in `e` names (nested ones included).
pub fn expr_tables(e: &Expr, f: &mut dyn FnMut(&ObjectName)) {
    if let Expr::Subquery(q) | Expr::Exists { query: q, .. } | Expr::InSubquery { query: q, .. } = e
    {
        query_tables(q, f);
    }
}

/// Every table `q` names, subqueries included.
pub fn query_tables(q: &Query, f: &mut dyn FnMut(&ObjectName)) {
    names_table(q, &mut |n| {
        f(n);
        false
    });
}

fn table_names(t: &TableRef, f: &mut dyn FnMut(&ObjectName)) {
    match t {
        TableRef::Table { name, .. } => f(name),
        TableRef::Derived { query, .. } => query_tables(query, f),
        TableRef::Lateral(l) => {
            if let LateralRef::Query { query, .. } = &**l {
                query_tables(query, f);
            }
        }
        TableRef::Join { left, right, .. } => {
            table_names(left, f);
            table_names(right, f);
        }
    }
}

/// `names_table` over one query's FROM tables (derived tables, unions and
/// WITH included, subqueries in expressions not).
fn from_names(q: &Query, pred: &mut dyn FnMut(&ObjectName) -> bool) -> bool {
    fn table(t: &TableRef, pred: &mut dyn FnMut(&ObjectName) -> bool) -> bool {
        match t {
            TableRef::Table { name, .. } => pred(name),
            TableRef::Derived { query, .. } => from_names(query, pred),
            TableRef::Lateral(l) => match &**l {
                LateralRef::Query { query, .. } => from_names(query, pred),
                LateralRef::JsonTable(_) => false,
            },
            TableRef::Join { left, right, .. } => table(left, pred) || table(right, pred),
        }
    }
    q.with.iter().any(|c| from_names(&c.query, pred))
        || match &q.body {
            QueryBody::Select(s) => s.from.iter().any(|t| table(t, pred)),
            QueryBody::Union { left, right, .. } => {
                from_names(left, pred) || from_names(right, pred)
            }
        }
}

/// Calls `f` on every expression of the statement, subqueries included.
pub fn visit_statement(stmt: &Statement, f: &mut dyn FnMut(&Expr)) {
    match stmt {
        Statement::Select(q) | Statement::Do(q) => visit_query(q, f),
        Statement::Insert(i) => {
            match &i.source {
                InsertSource::Values(rows) => rows.iter().flatten().for_each(|e| visit_expr(e, f)),
                InsertSource::Query(q) => visit_query(q, f),
            }
            i.on_duplicate.iter().for_each(|(_, e)| visit_expr(e, f));
        }
        Statement::Update(u) => {
            u.assignments.iter().for_each(|(_, e)| visit_expr(e, f));
            u.selection.iter().for_each(|e| visit_expr(e, f));
            u.order_by.iter().for_each(|o| visit_expr(&o.expr, f));
            u.limit.iter().for_each(|e| visit_expr(e, f));
            u.multi
                .iter()
                .for_each(|m| m.from.iter().for_each(|t| visit_table(t, f)));
        }
        Statement::Delete(d) => {
            d.selection.iter().for_each(|e| visit_expr(e, f));
            d.order_by.iter().for_each(|o| visit_expr(&o.expr, f));
            d.limit.iter().for_each(|e| visit_expr(e, f));
            d.multi
                .iter()
                .for_each(|m| m.from.iter().for_each(|t| visit_table(t, f)));
        }
        Statement::CreateTable(ct) => {
            ct.columns
                .iter()
                .filter_map(|c| c.default.as_ref())
                .for_each(|e| visit_expr(e, f));
        }
        Statement::Set(list) => list
            .iter()
            .filter_map(|a| a.value.as_ref())
            .for_each(|e| visit_expr(e, f)),
        Statement::Show(
            Show::Databases {
                filter: Some(ShowFilter::Where(e)),
            }
            | Show::Tables {
                filter: Some(ShowFilter::Where(e)),
                ..
            }
            | Show::Columns {
                filter: Some(ShowFilter::Where(e)),
                ..
            }
            | Show::Variables {
                filter: Some(ShowFilter::Where(e)),
                ..
            }
            | Show::Status {
                filter: Some(ShowFilter::Where(e)),
                ..
            }
            | Show::Collation {
                filter: Some(ShowFilter::Where(e)),
            }
            | Show::CharacterSet {
                filter: Some(ShowFilter::Where(e)),
            }
            | Show::TableStatus {
                filter: Some(ShowFilter::Where(e)),
                ..
            },
        ) => visit_expr(e, f),
        Statement::Explain(s, _) => visit_statement(s, f),
        Statement::Routine(r) => {
            if let RoutineStatement::Call { args, .. } = &**r {
                args.iter().for_each(|e| visit_expr(e, f));
            }
        }
        Statement::Kill { connection_id, .. } => visit_expr(connection_id, f),
        _ => {}
    }
}

fn visit_query(q: &Query, f: &mut dyn FnMut(&Expr)) {
    q.with.iter().for_each(|c| visit_query(&c.query, f));
    match &q.body {
        QueryBody::Select(s) => {
            for item in &s.projection {
                if let SelectItem::Expr { expr, .. } = item {
                    visit_expr(expr, f);
                }
            }
            s.from.iter().for_each(|t| visit_table(t, f));
            s.selection.iter().for_each(|e| visit_expr(e, f));
            s.group_by.iter().for_each(|e| visit_expr(e, f));
            s.having.iter().for_each(|e| visit_expr(e, f));
            s.windows.iter().for_each(|(_, w)| visit_window(w, f));
        }
        QueryBody::Union { left, right, .. } => {
            visit_query(left, f);
            visit_query(right, f);
        }
    }
    q.order_by.iter().for_each(|o| visit_expr(&o.expr, f));
    q.limit.iter().for_each(|e| visit_expr(e, f));
    q.offset.iter().for_each(|e| visit_expr(e, f));
}

fn visit_table(t: &TableRef, f: &mut dyn FnMut(&Expr)) {
    match t {
        TableRef::Table { .. } => {}
        TableRef::Derived { query, .. } => visit_query(query, f),
        TableRef::Lateral(l) => match &**l {
            LateralRef::Query { query, .. } => visit_query(query, f),
            LateralRef::JsonTable(t) => visit_expr(&t.expr, f),
        },
        TableRef::Join {
            left, right, on, ..
        } => {
            visit_table(left, f);
            visit_table(right, f);
            if let JoinCondition::On(e) = on {
                visit_expr(e, f);
            }
        }
    }
}

/// Calls `f` on `e` and, while it returns true, on the expressions nested
/// in it, each of which it may replace; subqueries are left alone (their
/// columns are their own).
pub fn rewrite_exprs(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) {
    if !f(e) {
        return;
    }
    let mut each = |x: &mut Expr| rewrite_exprs(x, f);
    match e {
        Expr::Literal(_)
        | Expr::Column { .. }
        | Expr::Param(_)
        | Expr::UserVar(_)
        | Expr::SystemVar { .. }
        | Expr::Default
        | Expr::Exists { .. }
        | Expr::Subquery(_)
        | Expr::Window(_) => {}
        Expr::Unary { expr, .. }
        | Expr::IsNull { expr, .. }
        | Expr::IsBool { expr, .. }
        | Expr::Cast { expr, .. }
        | Expr::InSubquery { expr, .. }
        | Expr::Interval { value: expr, .. } => each(expr),
        Expr::Binary { left, right, .. } => {
            each(left);
            each(right);
        }
        Expr::InList { expr, list, .. } => {
            each(expr);
            list.iter_mut().for_each(each);
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            each(expr);
            each(low);
            each(high);
        }
        Expr::Like { expr, pattern, .. } => {
            each(expr);
            each(pattern);
        }
        Expr::Function { args, .. } | Expr::Row(args) => args.iter_mut().for_each(each),
        Expr::Case {
            operand,
            branches,
            else_result,
        } => {
            operand.iter_mut().for_each(|x| each(x));
            for (w, t) in branches {
                each(w);
                each(t);
            }
            else_result.iter_mut().for_each(|x| each(x));
        }
    }
}

/// Calls `f` on `e` and every expression nested in it.
pub fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e {
        Expr::Literal(_)
        | Expr::Column { .. }
        | Expr::Param(_)
        | Expr::UserVar(_)
        | Expr::SystemVar { .. }
        | Expr::Default => {}
        Expr::Unary { expr, .. }
        | Expr::IsNull { expr, .. }
        | Expr::IsBool { expr, .. }
        | Expr::Cast { expr, .. } => visit_expr(expr, f),
        Expr::Interval { value, .. } => visit_expr(value, f),
        Expr::Binary { left, right, .. } => {
            visit_expr(left, f);
            visit_expr(right, f);
        }
        Expr::InList { expr, list, .. } => {
            visit_expr(expr, f);
            list.iter().for_each(|x| visit_expr(x, f));
        }
        Expr::InSubquery { expr, query, .. } => {
            visit_expr(expr, f);
            visit_query(query, f);
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            visit_expr(expr, f);
            visit_expr(low, f);
            visit_expr(high, f);
        }
        Expr::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            visit_expr(expr, f);
            visit_expr(pattern, f);
            if let Some(x) = escape {
                visit_expr(x, f);
            }
        }
        Expr::Exists { query, .. } | Expr::Subquery(query) => visit_query(query, f),
        Expr::Function { args, .. } | Expr::Row(args) => {
            args.iter().for_each(|x| visit_expr(x, f));
        }
        Expr::Case {
            operand,
            branches,
            else_result,
        } => {
            if let Some(x) = operand {
                visit_expr(x, f);
            }
            for (w, t) in branches {
                visit_expr(w, f);
                visit_expr(t, f);
            }
            if let Some(x) = else_result {
                visit_expr(x, f);
            }
        }
        Expr::Window(w) => {
            visit_expr(&w.func, f);
            visit_window(&w.window, f);
        }
    }
}

fn visit_window(w: &WindowSpec, f: &mut dyn FnMut(&Expr)) {
    w.partition_by.iter().for_each(|x| visit_expr(x, f));
    w.order_by.iter().for_each(|o| visit_expr(&o.expr, f));
    if let Some(frame) = &w.frame {
        for b in [&frame.start, &frame.end] {
            if let FrameBound::Preceding(x) | FrameBound::Following(x) = b {
                visit_expr(x, f);
            }
        }
    }
}
