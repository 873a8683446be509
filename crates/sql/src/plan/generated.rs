//! Generated columns (`col type [GENERATED ALWAYS] AS (expr) [VIRTUAL |
//! STORED]`, MySQL 5.7+): what an expression may contain (1054, 3102,
//! 3107, 3109, 3763-3765), the list CREATE and ALTER TABLE give a table
//! (3106, 3108), what a write may not set (3105), and the bound form
//! `exec::generated` evaluates over the row. Storage keeps the text.

use super::check::{bind, first_error, parse, Forbidden};
use crate::expr::BExpr;
use crate::parser::ast::{AlterAction, ColumnSpec, Expr, GeneratedSpec, InsertSource};
use lockstep_engine::catalog::Catalog;
use lockstep_tables::{GeneratedColumn, TableDef};
use lockstep_types::error::Code;
use lockstep_types::Error;

type Result<T> = std::result::Result<T, Error>;

/// A table's generated columns, bound: (position, expression) in column
/// order, so a column sees the ones before it computed.
pub type Bound = Vec<(usize, BExpr)>;

fn err(code: Code, message: String) -> Error {
    Error::new(code, message)
}

fn function_not_allowed(name: &str) -> Error {
    err(
        Code::GeneratedColumnFunctionIsNotAllowed,
        format!("Expression of generated column '{name}' contains a disallowed function."),
    )
}

/// 3106 for `what`.
pub fn unsupported(what: &str) -> Error {
    err(
        Code::UnsupportedActionOnGeneratedColumn,
        format!("'{what}' is not supported for generated columns."),
    )
}

/// 3105: a write gave generated column `column` a value.
pub fn non_default(def: &TableDef, column: usize) -> Error {
    err(
        Code::NonDefaultValueForGeneratedColumn,
        format!(
            "The value specified for generated column '{}' in table '{}' is not allowed.",
            def.columns[column].name, def.name
        ),
    )
}

/// The entry of `list` for column `name`.
pub fn find<'a>(list: &'a [GeneratedColumn], name: &str) -> Option<&'a GeneratedColumn> {
    list.iter().find(|g| g.column.eq_ignore_ascii_case(name))
}

/// Whether position `at` of `def` is one of `list`'s columns.
pub fn is_generated(list: &[GeneratedColumn], def: &TableDef, at: usize) -> bool {
    def.columns
        .get(at)
        .is_some_and(|c| find(list, &c.name).is_some())
}

/// The first thing in `e` (generated column `name`, at position `at`
/// of `def`) a generated column may not contain.
fn disallowed(
    e: &Expr,
    name: &str,
    at: usize,
    def: &TableDef,
    list: &[GeneratedColumn],
) -> Option<Error> {
    let error = |k: Forbidden| match k {
        Forbidden::Function => function_not_allowed(name),
        Forbidden::Named(f) => err(
            Code::GeneratedColumnNamedFunctionIsNotAllowed,
            format!("Expression of generated column '{name}' contains a disallowed function: {f}."),
        ),
        Forbidden::Variable => err(
            Code::GeneratedColumnVariables,
            format!(
                "Expression of generated column '{name}' cannot refer user or system variables."
            ),
        ),
        Forbidden::Row => err(
            Code::GeneratedColumnRowValue,
            format!("Expression of generated column '{name}' cannot refer to a row value."),
        ),
    };
    first_error(e, &error, &|c| column_error(c, at, def, list))
}

/// 1054 for a column `def` lacks, 3109 for its AUTO_INCREMENT column,
/// 3107 for a generated column at or after `at`.
fn column_error(c: &str, at: usize, def: &TableDef, list: &[GeneratedColumn]) -> Option<Error> {
    let Some(i) = def
        .column_index(c)
        .filter(|i| Some(*i) != def.hidden_row_id)
    else {
        return Some(Error::bad_field(c, "generated column function"));
    };
    if def.columns[i].auto_increment {
        return Some(err(
            Code::GeneratedColumnRefAutoInc,
            format!(
                "Generated column '{}' cannot refer to auto-increment column.",
                def.columns[at].name
            ),
        ));
    }
    (i >= at && find(list, c).is_some()).then(|| {
        err(
            Code::GeneratedColumnNonPrior,
            "Generated column can refer only to generated columns defined prior to it.".into(),
        )
    })
}

/// Checks `list` as the generated columns of a table defined as `def`.
pub fn validate(catalog: &Catalog, def: &TableDef, list: &[GeneratedColumn]) -> Result<()> {
    for g in list {
        let at = def
            .column_index(&g.column)
            .ok_or_else(|| Error::bad_field(&g.column, "field list"))?;
        let e = parse(&g.expr)?;
        if let Some(e) = disallowed(&e, &def.columns[at].name, at, def, list) {
            return Err(e);
        }
        // Stored functions are calls the binder resolves.
        if bind(catalog, def, &e)?.has_subquery() {
            return Err(function_not_allowed(&def.columns[at].name));
        }
        let primary = def.hidden_row_id.is_none()
            && def.indexes.first().is_some_and(|i| i.columns.contains(&at));
        if primary && !g.stored {
            return Err(unsupported(
                "Defining a virtual generated column as primary key",
            ));
        }
    }
    Ok(())
}

fn entry(name: &str, g: &GeneratedSpec) -> GeneratedColumn {
    GeneratedColumn {
        column: name.to_string(),
        expr: g.text.clone(),
        stored: g.stored,
    }
}

/// The generated columns CREATE TABLE gives the table `def`, validated.
pub fn of_create(
    catalog: &Catalog,
    def: &TableDef,
    columns: &[ColumnSpec],
) -> Result<Vec<GeneratedColumn>> {
    let list: Vec<GeneratedColumn> = columns
        .iter()
        .filter_map(|c| c.generated.as_ref().map(|g| entry(&c.name, g)))
        .collect();
    if !list.is_empty() {
        validate(catalog, def, &list)?;
    }
    Ok(list)
}

/// The columns an expression names.
pub fn columns_of(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    crate::parser::visit_expr(e, &mut |x| {
        if let Expr::Column { name, .. } = x {
            out.push(name.clone());
        }
    });
    out
}

/// `list` after the column clauses of an ALTER (3106 when one changes
/// whether a generated column is STORED).
fn apply_actions(list: &mut Vec<GeneratedColumn>, actions: &[AlterAction]) -> Result<()> {
    let same = |g: &GeneratedColumn, n: &str| g.column.eq_ignore_ascii_case(n);
    for a in actions {
        match a {
            AlterAction::AddColumn { column, .. } => {
                if let Some(g) = &column.generated {
                    list.push(entry(&column.name, g));
                }
            }
            AlterAction::ChangeColumn { old, column, .. } => {
                // A base column is stored; so is a STORED generated one.
                let was = list
                    .iter()
                    .position(|g| same(g, old))
                    .map(|p| list.remove(p));
                let now = column.generated.as_ref().is_none_or(|g| g.stored);
                if was.is_none_or(|w| w.stored) != now {
                    return Err(unsupported("Changing the STORED status"));
                }
                if let Some(g) = &column.generated {
                    list.push(entry(&column.name, g));
                }
            }
            AlterAction::RenameColumn { from, to } => {
                if let Some(g) = list.iter_mut().find(|g| same(g, from)) {
                    g.column = to.clone();
                }
            }
            AlterAction::DropColumn { name } => list.retain(|g| !same(g, name)),
            AlterAction::SetDefault { column, .. } if list.iter().any(|g| same(g, column)) => {
                return Err(Error::unsupported("a DEFAULT for a generated column"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The generated columns an ALTER that makes `old` into `new` leaves,
/// validated: None when they are the same as `before`. 3108 when a
/// column one of them reads is dropped or renamed.
pub fn after_alter(
    catalog: &Catalog,
    before: &[GeneratedColumn],
    old: &TableDef,
    new: &TableDef,
    actions: &[AlterAction],
) -> Result<Option<Vec<GeneratedColumn>>> {
    let mut list = before.to_vec();
    apply_actions(&mut list, actions)?;
    for g in &list {
        for c in columns_of(&parse(&g.expr)?) {
            if old.column_index(&c).is_some() && new.column_index(&c).is_none() {
                return Err(err(
                    Code::DependentByGeneratedColumn,
                    format!("Column '{c}' has a generated column dependency."),
                ));
            }
        }
    }
    list.sort_by_key(|g| new.column_index(&g.column));
    validate(catalog, new, &list)?;
    Ok((list[..] != before[..]).then_some(list))
}

/// The generated columns of `def`, bound for evaluation over its rows.
pub fn bind_all(catalog: &Catalog, def: &TableDef, list: &[GeneratedColumn]) -> Result<Bound> {
    let mut out = Vec::with_capacity(list.len());
    for g in list {
        let at = def
            .column_index(&g.column)
            .ok_or_else(|| Error::internal(format!("generated column {}", g.column)))?;
        out.push((at, bind(catalog, def, &parse(&g.expr)?)?));
    }
    out.sort_by_key(|(at, _)| *at);
    Ok(out)
}

/// 3105 when an INSERT gives a generated column of `targets` a value
/// other than DEFAULT (a SELECT always does).
pub fn check_insert(
    list: &[GeneratedColumn],
    def: &TableDef,
    targets: &[usize],
    source: &InsertSource,
) -> Result<()> {
    for (n, &col) in targets.iter().enumerate() {
        if !is_generated(list, def, col) {
            continue;
        }
        let given = match source {
            InsertSource::Values(rows) => rows
                .iter()
                .any(|r| r.get(n).is_some_and(|e| *e != Expr::Default)),
            InsertSource::Query(_) => true,
        };
        if given {
            return Err(non_default(def, col));
        }
    }
    Ok(())
}

/// Whether an UPDATE or ON DUPLICATE KEY UPDATE assignment to column
/// `at` is left out: `gcol = DEFAULT` (the column is computed anyway);
/// 3105 for any other value of a generated column.
pub fn skip_assignment(
    list: &[GeneratedColumn],
    def: &TableDef,
    at: usize,
    e: &Expr,
) -> Result<bool> {
    if !is_generated(list, def, at) {
        return Ok(false);
    }
    match e {
        Expr::Default => Ok(true),
        _ => Err(non_default(def, at)),
    }
}

/// A foreign key whose child columns include a generated one: 3104 for
/// a rule that would write it (ON UPDATE CASCADE / SET NULL, ON DELETE
/// SET NULL); 1235 on a VIRTUAL one (MySQL refuses those too).
pub fn check_foreign_keys(
    list: &[GeneratedColumn],
    fks: &[lockstep_tables::ForeignKey],
) -> Result<()> {
    use lockstep_tables::FkAction::{Cascade, SetNull};
    for fk in fks {
        for g in fk.columns.iter().filter_map(|c| find(list, c)) {
            if !g.stored {
                return Err(Error::unsupported(
                    "a foreign key on a VIRTUAL generated column",
                ));
            }
            let clause = match (fk.on_update, fk.on_delete) {
                (Cascade, _) => "ON UPDATE CASCADE",
                (SetNull, _) => "ON UPDATE SET NULL",
                (_, SetNull) => "ON DELETE SET NULL",
                _ => continue,
            };
            return Err(err(
                Code::WrongFkOptionForGeneratedColumn,
                format!("Cannot define foreign key with {clause} clause on a generated column."),
            ));
        }
    }
    Ok(())
}
