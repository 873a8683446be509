//! FOREIGN KEY definitions: from the clauses of CREATE TABLE / ALTER TABLE
//! ADD to the catalog's `ForeignKey`, checked as MySQL 8 checks them, with
//! the index InnoDB adds on the child's columns when none serves; and how
//! a constraint is written back (SHOW CREATE TABLE, error messages).

use crate::parser::{FkRule, ForeignKeySpec};
use crate::plan::ddl::quote_ident;
use lockstep_tables::{FkAction, ForeignKey, IndexDef, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error};
use std::sync::Arc;

/// What planning needs from the catalog.
pub trait FkCatalog {
    /// The definition of `db`.`name`, when it exists.
    fn parent(&self, db: &str, name: &str) -> Option<Arc<TableDef>>;
    /// Whether a foreign key of that name exists in database `db` (MySQL 8
    /// names are unique per database), other than on table `except`.
    fn name_taken(&self, db: &str, name: &str) -> bool;
}

/// The constraints a statement adds, with the indexes they need.
pub struct Planned {
    pub foreign_keys: Vec<ForeignKey>,
    pub indexes: Vec<IndexDef>,
}

/// Plans `specs` for child table `child` (whose existing constraints are
/// `existing`). A self-reference is checked against `child` itself.
/// `checks`: FOREIGN_KEY_CHECKS (off, a missing parent is accepted).
pub fn plan(
    child: &TableDef,
    existing: &[ForeignKey],
    specs: &[ForeignKeySpec],
    catalog: &dyn FkCatalog,
    checks: bool,
) -> Result<Planned, Error> {
    let mut out = Planned {
        foreign_keys: Vec::new(),
        indexes: Vec::new(),
    };
    let mut names: Vec<String> = existing.iter().map(|f| f.name.clone()).collect();
    let mut next = next_generated(&child.name, existing);
    for spec in specs {
        let name = match &spec.name {
            Some(n) => n.clone(),
            None => {
                next += 1;
                format!("{}_ibfk_{next}", child.name)
            }
        };
        if names.iter().any(|n| n.eq_ignore_ascii_case(&name))
            || catalog.name_taken(&child.database, &name)
        {
            return Err(Error::new(
                Code::FkDupName,
                format!("Duplicate foreign key constraint name '{name}'"),
            ));
        }
        names.push(name.clone());
        let mut with_indexes = child.clone();
        with_indexes.indexes.extend(out.indexes.iter().cloned());
        let fk = one(&with_indexes, spec, name, catalog, checks)?;
        if find_index(&with_indexes, &fk.columns).is_none() {
            out.indexes
                .push(implicit_index(&with_indexes, spec, &fk.columns)?);
        }
        out.foreign_keys.push(fk);
    }
    Ok(out)
}

/// `specs` on a table whose declared engine has no foreign keys
/// (ENGINE=MyISAM, MEMORY, ...): MySQL parses them, checks the child's
/// columns and adds the index on them, but creates no constraint and never
/// looks at the parent. Returns the indexes to add.
pub fn without_constraints(
    child: &TableDef,
    specs: &[ForeignKeySpec],
) -> Result<Vec<IndexDef>, Error> {
    let mut def = child.clone();
    let mut added = Vec::new();
    for spec in specs {
        let label = spec.name.as_deref().unwrap_or("foreign key without name");
        let columns = child_columns(&def, spec, label)?;
        if find_index(&def, &columns).is_none() {
            let ix = implicit_index(&def, spec, &columns)?;
            def.indexes.push(ix.clone());
            added.push(ix);
        }
    }
    Ok(added)
}

/// The largest N of the table's `<table>_ibfk_N` names.
fn next_generated(table: &str, existing: &[ForeignKey]) -> u32 {
    let prefix = format!("{table}_ibfk_");
    existing
        .iter()
        .filter_map(|f| f.name.strip_prefix(&prefix)?.parse::<u32>().ok())
        .max()
        .unwrap_or(0)
}

fn action(rule: Option<FkRule>) -> Result<FkAction, Error> {
    match rule {
        None => Ok(FkAction::NoAction),
        Some(FkRule::Action(a)) => Ok(a),
        // The parser knows SET DEFAULT; InnoDB refuses it.
        Some(FkRule::SetDefault) => Err(Error::new(
            Code::CannotAddForeign,
            "Cannot add foreign key constraint",
        )),
    }
}

/// One constraint, checked in MySQL's order: the child's columns, the
/// rules, the parent, its columns and their types, its index.
fn one(
    child: &TableDef,
    spec: &ForeignKeySpec,
    name: String,
    catalog: &dyn FkCatalog,
    checks: bool,
) -> Result<ForeignKey, Error> {
    let (columns, on_delete, on_update) = child_side(child, spec, &name)?;
    let parent_db = spec
        .parent
        .database
        .clone()
        .unwrap_or_else(|| child.database.clone());
    let parent_table = spec.parent.name.clone();
    let own = parent_db == child.database && parent_table == child.name;
    let parent = if own {
        Some(Arc::new(child.clone()))
    } else {
        catalog.parent(&parent_db, &parent_table)
    };
    let mut fk = ForeignKey {
        name,
        columns,
        parent_db,
        parent_table,
        parent_columns: spec.parent_columns.clone(),
        on_delete,
        on_update,
    };
    match parent {
        Some(p) => check_parent(child, &p, &mut fk)?,
        None if checks => {
            return Err(Error::new(
                Code::FkCannotOpenParent,
                format!("Failed to open the referenced table '{}'", fk.parent_table),
            ))
        }
        None => {}
    }
    Ok(fk)
}

/// The child's columns (in the table's spelling) and the two rules.
fn child_side(
    child: &TableDef,
    spec: &ForeignKeySpec,
    name: &str,
) -> Result<(Vec<String>, FkAction, FkAction), Error> {
    let columns = child_columns(child, spec, name)?;
    let (on_delete, on_update) = (action(spec.on_delete)?, action(spec.on_update)?);
    if on_delete == FkAction::SetNull || on_update == FkAction::SetNull {
        if let Some(c) = columns
            .iter()
            .find(|c| column(child, c).is_some_and(|d| !d.nullable))
        {
            return Err(Error::new(
                Code::FkColumnNotNull,
                format!("Column '{c}' cannot be NOT NULL: needed in a foreign key constraint '{name}' SET NULL"),
            ));
        }
    }
    Ok((columns, on_delete, on_update))
}

/// The child's columns of `spec` in the table's spelling, as many as the
/// parent's (1072, 1239).
fn child_columns(
    child: &TableDef,
    spec: &ForeignKeySpec,
    name: &str,
) -> Result<Vec<String>, Error> {
    let mut columns = Vec::new();
    for c in &spec.columns {
        let d = column(child, c).ok_or_else(|| {
            Error::new(
                Code::KeyColumnDoesNotExist,
                format!("Key column '{c}' doesn't exist in table"),
            )
        })?;
        columns.push(d.name.clone());
    }
    if spec.columns.len() != spec.parent_columns.len() {
        return Err(Error::new(
            Code::WrongFkDef,
            format!(
                "Incorrect foreign key definition for '{name}': Key reference and table reference don't match"
            ),
        ));
    }
    Ok(columns)
}

fn column<'a>(def: &'a TableDef, name: &str) -> Option<&'a lockstep_tables::ColumnDef> {
    def.column_index(name)
        .filter(|&i| Some(i) != def.hidden_row_id)
        .map(|i| &def.columns[i])
}

/// The parent's columns exist, pair with compatible child columns, and
/// lead one of its indexes. Column names take the parent's spelling.
fn check_parent(child: &TableDef, parent: &TableDef, fk: &mut ForeignKey) -> Result<(), Error> {
    for (i, pc) in fk.parent_columns.clone().iter().enumerate() {
        let Some(p) = column(parent, pc) else {
            return Err(Error::new(
                Code::FkNoColumnParent,
                format!(
                    "Failed to add the foreign key constraint. Missing column '{pc}' for constraint '{}' in the referenced table '{}'",
                    fk.name, fk.parent_table
                ),
            ));
        };
        let c = column(child, &fk.columns[i]).expect("checked above");
        if !compatible(c.data_type, p.data_type) {
            return Err(incompatible(&c.name, &p.name, &fk.name));
        }
        fk.parent_columns[i] = p.name.clone();
    }
    if find_index(parent, &fk.parent_columns).is_none() {
        return Err(Error::new(
            Code::FkNoIndexParent,
            format!(
                "Failed to add the foreign key constraint. Missing index for constraint '{}' in the referenced table '{}'",
                fk.name, fk.parent_table
            ),
        ));
    }
    Ok(())
}

pub fn incompatible(child: &str, parent: &str, name: &str) -> Error {
    Error::new(
        Code::FkIncompatibleColumns,
        format!("Referencing column '{child}' and referenced column '{parent}' in foreign key constraint '{name}' are incompatible."),
    )
}

/// InnoDB's rule: integers of the same size and sign, strings of the same
/// kind (lengths may differ), anything else the same type.
pub fn compatible(a: DataType, b: DataType) -> bool {
    use DataType::*;
    match (a, b) {
        (Char { .. } | VarChar { .. }, Char { .. } | VarChar { .. }) => true,
        (Binary { .. } | VarBinary { .. }, Binary { .. } | VarBinary { .. }) => true,
        (Text { .. } | Blob { .. }, _) | (_, Text { .. } | Blob { .. }) => false,
        _ => a == b,
    }
}

/// An index of `def` (the primary key included) whose leading columns are
/// `columns`, in order.
pub fn find_index(def: &TableDef, columns: &[String]) -> Option<usize> {
    def.indexes.iter().position(|ix| {
        ix.columns.len() >= columns.len()
            && ix
                .columns
                .iter()
                .zip(columns)
                .all(|(&c, name)| def.columns[c].name.eq_ignore_ascii_case(name))
    })
}

/// The index MySQL adds on the child's columns: named after the
/// CONSTRAINT symbol, else the FOREIGN KEY index name, else the first
/// column (with _2, _3... when taken).
fn implicit_index(
    child: &TableDef,
    spec: &ForeignKeySpec,
    fk_columns: &[String],
) -> Result<IndexDef, Error> {
    let taken = |n: &str| child.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n));
    let name = match spec.name.as_ref().or(spec.index_name.as_ref()) {
        Some(n) if taken(n) => {
            return Err(Error::new(
                Code::DupKeyName,
                format!("Duplicate key name '{n}'"),
            ))
        }
        Some(n) => n.clone(),
        None => {
            let base = fk_columns[0].clone();
            let mut name = base.clone();
            let mut n = 2;
            while taken(&name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            name
        }
    };
    let columns = fk_columns
        .iter()
        .map(|c| child.column_index(c).expect("checked"))
        .collect();
    Ok(IndexDef {
        name,
        columns,
        unique: false,
    })
}

fn column_list(cols: &[String]) -> String {
    cols.iter()
        .map(|c| quote_ident(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `CONSTRAINT ... REFERENCES ...` without the rules; the parent's
/// database is written when it is not the child's.
fn head(fk: &ForeignKey, child_db: &str) -> String {
    let parent = if fk.parent_db == child_db {
        quote_ident(&fk.parent_table)
    } else {
        format!(
            "{}.{}",
            quote_ident(&fk.parent_db),
            quote_ident(&fk.parent_table)
        )
    };
    format!(
        "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
        quote_ident(&fk.name),
        column_list(&fk.columns),
        parent,
        column_list(&fk.parent_columns)
    )
}

/// The constraint as SHOW CREATE TABLE writes it (MySQL 8: NO ACTION,
/// the default, is not written; RESTRICT is).
pub fn show(fk: &ForeignKey, child_db: &str) -> String {
    let mut s = head(fk, child_db);
    for (what, a) in [("DELETE", fk.on_delete), ("UPDATE", fk.on_update)] {
        if a != FkAction::NoAction {
            s.push_str(&format!(" ON {what} {}", a.name()));
        }
    }
    s
}

/// The constraint as InnoDB describes it in 1451 / 1452: the child table,
/// then the clause with only the rules that act (CASCADE, SET NULL).
pub fn describe(fk: &ForeignKey, child_db: &str, child: &str) -> String {
    let mut s = format!(
        "{}.{}, {}",
        quote_ident(child_db),
        quote_ident(child),
        head(fk, child_db)
    );
    for (what, a) in [("DELETE", fk.on_delete), ("UPDATE", fk.on_update)] {
        if matches!(a, FkAction::Cascade | FkAction::SetNull) {
            s.push_str(&format!(" ON {what} {}", a.name()));
        }
    }
    s
}

/// 1452 (a child without its parent) or 1451 (a parent with children),
/// with InnoDB's description of the constraint.
pub fn violation(parent_side: bool, fk: &ForeignKey, child_db: &str, child: &str) -> Error {
    let (code, what) = match parent_side {
        true => (
            Code::RowIsReferenced2,
            "Cannot delete or update a parent row",
        ),
        false => (Code::NoReferencedRow2, "Cannot add or update a child row"),
    };
    Error::new(
        code,
        format!(
            "{what}: a foreign key constraint fails ({})",
            describe(fk, child_db, child)
        ),
    )
}

/// SHOW CREATE TABLE with the table's constraints after its keys, in
/// name order as MySQL 8 lists them.
pub fn add_to_create(text: String, fks: &[ForeignKey], child_db: &str) -> String {
    if fks.is_empty() {
        return text;
    }
    let Some(at) = text.rfind("\n) ENGINE=") else {
        return text;
    };
    let mut out = text[..at].to_string();
    let mut sorted: Vec<&ForeignKey> = fks.iter().collect();
    sorted.sort_by_key(|fk| fk.name.to_lowercase());
    for fk in sorted {
        out.push_str(",\n  ");
        out.push_str(&show(fk, child_db));
    }
    out.push_str(&text[at..]);
    out
}
