//! CHECK constraints (MySQL 8.0.16+): what an expression may contain
//! (3812-3820), generated names, and the bound form a write evaluates
//! over the new row (`exec::check`).

use super::bind::{infer, is_aggregate_name, table_scope, Binder};
use crate::expr::BExpr;
use crate::parser::ast::{BinaryOp, Expr, UnaryOp};
use lockstep_engine::catalog::Catalog;
use lockstep_tables::{CheckConstraint, TableDef};
use lockstep_types::error::Code;
use lockstep_types::Error;

type Result<T> = std::result::Result<T, Error>;

/// Functions whose value is not a function of the row (3814).
const DISALLOWED: &[&str] = &[
    "BENCHMARK",
    "CONNECTION_ID",
    "CURDATE",
    "CURRENT_DATE",
    "CURRENT_ROLE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "CURTIME",
    "DATABASE",
    "FOUND_ROWS",
    "GET_LOCK",
    "IS_FREE_LOCK",
    "IS_USED_LOCK",
    "LAST_INSERT_ID",
    "LOAD_FILE",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "NOW",
    "RAND",
    "RANDOM_BYTES",
    "RELEASE_ALL_LOCKS",
    "RELEASE_LOCK",
    "ROW_COUNT",
    "SCHEMA",
    "SESSION_USER",
    "SLEEP",
    "SYSDATE",
    "SYSTEM_USER",
    "USER",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
    "UUID",
    "UUID_SHORT",
    "VERSION",
];

fn err(code: Code, message: String) -> Error {
    Error::new(code, message)
}

/// What a CHECK's or a generated column's expression may not contain.
pub(crate) enum Forbidden {
    /// A subquery, window, aggregate or stored function.
    Function,
    /// A function whose value is not one of the row's (lower-case name).
    Named(String),
    Variable,
    Row,
}

/// Whether the node `x` is one such expressions may not contain.
pub(crate) fn forbidden(x: &Expr) -> Option<Forbidden> {
    match x {
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } | Expr::Window(_) => {
            Some(Forbidden::Function)
        }
        Expr::Function { name: f, args, .. } => {
            let up = f.to_ascii_uppercase();
            let now = up == "UNIX_TIMESTAMP" && args.is_empty();
            if now || DISALLOWED.contains(&up.as_str()) {
                Some(Forbidden::Named(f.to_ascii_lowercase()))
            } else {
                is_aggregate_name(&up).then_some(Forbidden::Function)
            }
        }
        Expr::UserVar(_) | Expr::SystemVar { .. } | Expr::Param(_) => Some(Forbidden::Variable),
        Expr::Row(_) => Some(Forbidden::Row),
        _ => None,
    }
}

/// The first node of `e` that is `forbidden` (as `error` words it) or a
/// column `column` refuses.
pub(crate) fn first_error(
    e: &Expr,
    error: &dyn Fn(Forbidden) -> Error,
    column: &dyn Fn(&str) -> Option<Error>,
) -> Option<Error> {
    let mut found = None;
    crate::parser::visit_expr(e, &mut |x| {
        if found.is_none() {
            found = match (forbidden(x), x) {
                (Some(k), _) => Some(error(k)),
                (None, Expr::Column { name, .. }) => column(name),
                (None, _) => None,
            };
        }
    });
    found
}

/// The first thing in `e` a CHECK may not contain, as its error.
fn disallowed(e: &Expr, name: &str, def: &TableDef, column: Option<&str>) -> Option<Error> {
    let error = |k: Forbidden| {
        match k {
        Forbidden::Function => function_not_allowed(name),
        Forbidden::Named(f) => err(
            Code::CheckConstraintNamedFunctionIsNotAllowed,
            format!("An expression of check constraint '{name}' contains disallowed function: {f}."),
        ),
        Forbidden::Variable => err(
            Code::CheckConstraintVariables,
            format!("An expression of check constraint '{name}' cannot refer to a user or system variable."),
        ),
        Forbidden::Row => err(
            Code::CheckConstraintRowValue,
            format!("Check constraint '{name}' cannot refer to a row value."),
        ),
    }
    };
    first_error(e, &error, &|c| column_error(c, name, def, column))
}

fn function_not_allowed(name: &str) -> Error {
    err(
        Code::CheckConstraintFunctionIsNotAllowed,
        format!("An expression of check constraint '{name}' contains disallowed function."),
    )
}

fn column_error(c: &str, name: &str, def: &TableDef, column: Option<&str>) -> Option<Error> {
    let Some(at) = def
        .column_index(c)
        .filter(|i| Some(*i) != def.hidden_row_id)
    else {
        return Some(err(
            Code::CheckConstraintRefersUnknownColumn,
            format!("Check constraint '{name}' refers to non-existing column '{c}'."),
        ));
    };
    if column.is_some_and(|own| !own.eq_ignore_ascii_case(c)) {
        return Some(err(
            Code::ColumnCheckConstraintReferencesOtherColumn,
            format!("Column check constraint '{name}' references other column."),
        ));
    }
    def.columns[at].auto_increment.then(|| {
        err(
            Code::CheckConstraintRefersAutoIncrementColumn,
            format!("Check constraint '{name}' cannot refer to an auto-increment column."),
        )
    })
}

/// Whether `e` is a condition (MySQL refuses a CHECK of a plain value).
fn is_condition(e: &Expr) -> bool {
    use BinaryOp::*;
    match e {
        Expr::Binary { op, .. } => matches!(
            op,
            Or | And | Xor | Eq | NullSafeEq | NotEq | Lt | LtEq | Gt | GtEq
        ),
        Expr::Unary { op, .. } => *op == UnaryOp::Not,
        Expr::Column { .. } | Expr::Case { .. } | Expr::Cast { .. } | Expr::Interval { .. } => {
            false
        }
        Expr::Literal(v) => !v.is_null() && v.to_i64().is_some(),
        _ => true,
    }
}

/// Checks that `e` may be the expression of CHECK `name` on a table
/// defined as `def` (`column`: a column's own CHECK).
pub fn validate(e: &Expr, name: &str, def: &TableDef, column: Option<&str>) -> Result<()> {
    if let Some(e) = disallowed(e, name, def, column) {
        return Err(e);
    }
    if !is_condition(e) {
        return Err(err(
            Code::NonBooleanExprForCheckConstraint,
            format!("An expression of non-boolean type specified to a check constraint '{name}'."),
        ));
    }
    Ok(())
}

/// The expression of a stored CHECK.
pub fn parse(text: &str) -> Result<Expr> {
    let stmt = crate::parser::parse(&format!("SELECT ({text})"))?;
    if let Some(crate::parser::Statement::Select(q)) = stmt.into_iter().next() {
        if let crate::parser::QueryBody::Select(s) = q.body {
            if let Some(crate::parser::SelectItem::Expr { expr, .. }) =
                s.projection.into_iter().next()
            {
                return Ok(expr);
            }
        }
    }
    Err(Error::internal(format!("stored CHECK expression '{text}'")))
}

/// A stored CHECK or generated column expression as MySQL prints it
/// (`(`a` > 0)`), or None where the printer keeps the text as written.
pub fn printed(text: &str) -> Option<String> {
    crate::parser::print::mysql_text(&parse(text).ok()?)
}

/// A CHECK bound over rows of `def`, text compared under the collation.
pub fn bind(catalog: &Catalog, def: &TableDef, e: &Expr) -> Result<BExpr> {
    let mut b = Binder::new(catalog, Some(def.database.clone()));
    bind_over(&mut b, def, &def.name, e)
}

/// A condition bound over rows of `def` named `alias`, text compared
/// under the collation (CHECKs, a view's CHECK OPTION).
pub fn bind_over(b: &mut Binder, def: &TableDef, alias: &str, e: &Expr) -> Result<BExpr> {
    let scope = table_scope(def, alias);
    let bound = b.bind_expr(e, &scope)?;
    Ok(crate::expr::collate(bound, &|x| infer(x, &scope.types).0))
}

/// The enforced CHECKs of a table, bound: (name, condition).
pub fn bind_all(
    catalog: &Catalog,
    def: &TableDef,
    checks: &[CheckConstraint],
) -> Result<Vec<(String, BExpr)>> {
    let mut out = Vec::new();
    for c in checks.iter().filter(|c| c.enforced) {
        out.push((c.name.clone(), bind(catalog, def, &parse(&c.expr)?)?));
    }
    Ok(out)
}

/// MySQL's name for the n-th unnamed CHECK: `<table>_chk_<n>`, past the
/// largest number such a name already has.
pub fn generated_name(table: &str, taken: &[CheckConstraint]) -> String {
    let prefix = format!("{}_chk_", table.to_ascii_lowercase());
    let last = taken
        .iter()
        .filter_map(|c| {
            c.name
                .to_ascii_lowercase()
                .strip_prefix(&prefix)?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    format!("{table}_chk_{}", last + 1)
}

/// 3819 for CHECK `name`.
pub fn violated(name: &str) -> Error {
    err(
        Code::CheckConstraintViolated,
        format!("Check constraint '{name}' is violated."),
    )
}
