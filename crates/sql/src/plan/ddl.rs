//! DDL: turns CREATE TABLE and index statements into table definitions,
//! and renders SHOW CREATE TABLE.

use crate::charset;
use crate::parser::{ColumnSpec, CreateTable, Expr, IndexSpec};
use lockstep_tables::{ColumnDef, IndexDef, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

pub(crate) fn literal_default(spec: &ColumnSpec) -> Result<(Option<Value>, bool), Error> {
    let default = match &spec.default {
        // A binary literal (x'00') is its bytes.
        Some(Expr::Cast { expr, .. }) if matches!(**expr, Expr::Literal(_)) => Some(&**expr),
        other => other.as_ref(),
    };
    match default {
        None => Ok((None, false)),
        Some(Expr::Literal(v)) => {
            crate::expr::json::check_default(&spec.name, spec.data_type, v)?;
            if v.is_null() {
                if spec.not_null || spec.primary_key {
                    return Err(Error::new(
                        Code::InvalidDefault,
                        format!("Invalid default value for '{}'", spec.name),
                    ));
                }
                return Ok((None, false));
            }
            let v =
                crate::expr::store_value(v.clone(), spec.data_type, &spec.name).map_err(|_| {
                    Error::new(
                        Code::InvalidDefault,
                        format!("Invalid default value for '{}'", spec.name),
                    )
                })?;
            Ok((Some(v), false))
        }
        Some(Expr::Function { name, .. })
            if matches!(
                name.as_str(),
                "CURRENT_TIMESTAMP" | "NOW" | "LOCALTIME" | "LOCALTIMESTAMP"
            ) =>
        {
            Ok((None, true))
        }
        Some(Expr::Unary {
            op: crate::parser::UnaryOp::Minus,
            expr,
        }) => match &**expr {
            Expr::Literal(v) => {
                let neg =
                    crate::expr::binary(crate::parser::BinaryOp::Minus, Value::Int(0), v.clone())?;
                Ok((
                    Some(crate::expr::store_value(neg, spec.data_type, &spec.name)?),
                    false,
                ))
            }
            _ => Err(Error::unsupported("expression defaults")),
        },
        Some(_) => Err(Error::unsupported("expression defaults")),
    }
}

/// A column's definition from its CREATE/ALTER TABLE text; a text
/// column without a character set takes the table's (`table_collation`).
pub(crate) fn column_def(spec: &ColumnSpec, table_collation: u16) -> Result<ColumnDef, Error> {
    let collation = column_collation(spec, table_collation)?;
    let (default, default_now) = literal_default(spec)?;
    if let (Some(Value::Bytes(b)), Some(cs)) = (&default, charset::non_utf8(collation)) {
        check_repertoire(b, cs, &spec.name).map_err(|_| invalid_default(&spec.name))?;
    }
    Ok(ColumnDef {
        name: spec.name.clone(),
        data_type: spec.data_type,
        nullable: !spec.not_null && !spec.primary_key,
        default,
        auto_increment: spec.auto_increment,
        default_now,
        on_update_now: spec.on_update_now,
        collation,
    })
}

/// The stored collation of a column (0 for a type that is not text).
fn column_collation(spec: &ColumnSpec, table_collation: u16) -> Result<u16, Error> {
    let (set, collation) = (
        spec.charset.charset.as_deref(),
        spec.charset.collation.as_deref(),
    );
    let id = charset::declared_collation(set, collation, table_collation)?;
    Ok(if spec.data_type.is_string() { id } else { 0 })
}

/// 1067 for a DEFAULT the column cannot hold.
fn invalid_default(name: &str) -> Error {
    Error::new(
        Code::InvalidDefault,
        format!("Invalid default value for '{name}'"),
    )
}

/// 1366 when text holds a character `cs` lacks.
fn check_repertoire(b: &[u8], cs: &charset::Charset, column: &str) -> Result<(), Error> {
    crate::expr::column_charset::store(b.to_vec(), cs, column)
        .map(|_| ())
        .map_err(|(e, _)| e)
}

/// Builds a table definition (id assigned by the engine).
/// Most columns a table may have (MySQL's limit; a stored row image also
/// counts its columns in 15 bits).
pub const MAX_COLUMNS: usize = 4096;

pub fn table_def(database: &str, ct: &CreateTable) -> Result<TableDef, Error> {
    if ct.columns.len() > MAX_COLUMNS {
        return Err(Error::new(Code::TooManyFields, "Too many columns"));
    }
    let (set, collation) = (
        ct.charset.charset.as_deref(),
        ct.charset.collation.as_deref(),
    );
    let table_collation = charset::declared_collation(set, collation, 0)?;
    let (mut columns, primary, mut indexes) = declared_columns(ct, table_collation)?;
    indexes.extend(ct.indexes.iter().cloned());
    let (primary, hidden_row_id) = primary_index(primary, &mut columns)?;
    let mut defs = vec![primary];
    for (n, ix) in indexes.iter().enumerate() {
        let def = secondary_index(n, ix, &columns, &defs)?;
        defs.push(def);
    }
    check_auto_key(&columns, &defs)?;
    Ok(TableDef {
        id: 0,
        database: database.to_string(),
        name: ct.name.name.clone(),
        columns,
        indexes: defs,
        hidden_row_id,
        collation: table_collation,
    })
}

/// The columns a CREATE TABLE declares, the primary key's column names
/// (written on a column or as a table key) and the UNIQUE keys written on
/// columns; 1060 for a repeated name, 1068 for a second primary key.
type Declared = (Vec<ColumnDef>, Option<Vec<String>>, Vec<IndexSpec>);

fn declared_columns(ct: &CreateTable, table_collation: u16) -> Result<Declared, Error> {
    let mut columns = Vec::new();
    let mut primary: Option<Vec<String>> = ct.primary_key.clone();
    let mut indexes: Vec<IndexSpec> = Vec::new();
    for spec in &ct.columns {
        if columns
            .iter()
            .any(|c: &ColumnDef| c.name.eq_ignore_ascii_case(&spec.name))
        {
            return Err(Error::new(
                Code::DupFieldName,
                format!("Duplicate column name '{}'", spec.name),
            ));
        }
        if spec.primary_key {
            if primary.is_some() {
                return Err(multiple_primary());
            }
            primary = Some(vec![spec.name.clone()]);
        }
        if spec.unique {
            indexes.push(IndexSpec {
                name: Some(spec.name.clone()),
                columns: vec![spec.name.clone()],
                unique: true,
                comment: None,
            });
        }
        columns.push(column_def(spec, table_collation)?);
    }
    if ct.primary_key.is_some() && ct.columns.iter().any(|c| c.primary_key) {
        return Err(multiple_primary());
    }
    Ok((columns, primary, indexes))
}

/// 1068: a table has one primary key.
pub(crate) fn multiple_primary() -> Error {
    Error::new(Code::MultiplePriKey, "Multiple primary key defined")
}

/// Where key column `name` is in `columns` (1072 if nowhere), checked as a
/// column a key may hold.
fn key_position(name: &str, columns: &[ColumnDef]) -> Result<usize, Error> {
    let p = columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            Error::new(
                Code::KeyColumnDoesNotExist,
                format!("Key column '{name}' doesn't exist in table"),
            )
        })?;
    crate::expr::json::check_key_column(&columns[p].name, columns[p].data_type)?;
    Ok(p)
}

/// The clustered key: the declared primary key (its columns become NOT
/// NULL), else a hidden row id column added to `columns` (returned).
fn primary_index(
    primary: Option<Vec<String>>,
    columns: &mut Vec<ColumnDef>,
) -> Result<(IndexDef, Option<usize>), Error> {
    let Some(cols) = primary else {
        // InnoDB's rule: the first UNIQUE index on NOT NULL columns
        // would become the clustered key; lockstep always uses a hidden
        // row id instead, which keeps secondary uniqueness uniform.
        columns.push(row_id_column());
        let at = columns.len() - 1;
        return Ok((primary_key(vec![at]), Some(at)));
    };
    let mut pos = Vec::new();
    for c in &cols {
        let p = key_position(c, columns)?;
        columns[p].nullable = false;
        pos.push(p);
    }
    Ok((primary_key(pos), None))
}

/// The clustered key over `columns`.
pub(crate) fn primary_key(columns: Vec<usize>) -> IndexDef {
    IndexDef {
        name: "PRIMARY".into(),
        columns,
        unique: true,
    }
}

/// The hidden clustered key column of a table without a primary key.
pub(crate) fn row_id_column() -> ColumnDef {
    ColumnDef {
        name: "DB_ROW_ID".into(),
        data_type: DataType::BigInt { unsigned: true },
        nullable: false,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        collation: 0,
    }
}

/// Secondary key number `n`, named as written or after its first column
/// (`_n+2` when taken); 1061 when the name is taken by a key in `defs`.
fn secondary_index(
    n: usize,
    ix: &IndexSpec,
    columns: &[ColumnDef],
    defs: &[IndexDef],
) -> Result<IndexDef, Error> {
    let mut pos = Vec::new();
    for c in &ix.columns {
        pos.push(key_position(c, columns)?);
    }
    let name = ix.name.clone().unwrap_or_else(|| {
        let base = ix
            .columns
            .first()
            .cloned()
            .unwrap_or_else(|| format!("key{n}"));
        if defs.iter().any(|d: &IndexDef| d.name == base) {
            format!("{base}_{}", n + 2)
        } else {
            base
        }
    });
    if defs.iter().any(|d| d.name.eq_ignore_ascii_case(&name)) {
        return Err(Error::new(
            Code::DupKeyName,
            format!("Duplicate key name '{name}'"),
        ));
    }
    Ok(IndexDef {
        name,
        columns: pos,
        unique: ix.unique,
    })
}

/// At most one AUTO_INCREMENT column, and it starts a key (1075).
pub(crate) fn check_auto_key(columns: &[ColumnDef], indexes: &[IndexDef]) -> Result<(), Error> {
    let autos: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].auto_increment)
        .collect();
    let unkeyed = autos
        .iter()
        .any(|a| !indexes.iter().any(|d| d.columns.first() == Some(a)));
    if autos.len() > 1 || unkeyed {
        return Err(Error::new(
            Code::WrongAutoKey,
            "Incorrect table definition; there can be only one auto column and it must be defined as a key",
        ));
    }
    Ok(())
}

/// An identifier in backticks, with backticks inside doubled, so the text
/// reads back as the same name (SHOW CREATE, SHOW GRANTS, dumps).
pub fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

pub fn show_create_table(def: &TableDef, auto_increment: u64) -> String {
    let mut lines = Vec::new();
    for (i, c) in def.visible_columns() {
        let mut l = format!("  {} {}", quote_ident(&c.name), c.data_type);
        if c.data_type.is_string() {
            l.push_str(&column_charset_clause(c.collation, def.collation));
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        }
        if c.default_now {
            l.push_str(" DEFAULT CURRENT_TIMESTAMP");
        } else if let Some(d) = &c.default {
            l.push_str(&format!(" DEFAULT '{}'", d.to_string().replace('\'', "''")));
        } else if c.nullable && !c.auto_increment {
            l.push_str(" DEFAULT NULL");
        }
        if c.on_update_now {
            l.push_str(" ON UPDATE CURRENT_TIMESTAMP");
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        let _ = i;
        lines.push(l);
    }
    let cols = |ix: &IndexDef| {
        ix.columns
            .iter()
            .map(|&c| quote_ident(&def.columns[c].name))
            .collect::<Vec<_>>()
            .join(",")
    };
    for (n, ix) in def.indexes.iter().enumerate() {
        if n == 0 {
            if def.hidden_row_id.is_none() {
                lines.push(format!("  PRIMARY KEY ({})", cols(ix)));
            }
            continue;
        }
        lines.push(format!(
            "  {}KEY {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            quote_ident(&ix.name),
            cols(ix)
        ));
    }
    let auto = if def.auto_increment_column().is_some() && auto_increment > 1 {
        format!(" AUTO_INCREMENT={auto_increment}")
    } else {
        String::new()
    };
    format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB{} {}",
        quote_ident(&def.name),
        lines.join(",\n"),
        auto,
        table_charset_clause(def.collation)
    )
}

/// `DEFAULT CHARSET=x [COLLATE=y]`: MySQL 8 names the collation when it is
/// not the set's default, and always for utf8mb4.
pub fn table_charset_clause(collation: u16) -> String {
    let (cs, name) = charset::of_collation(collation);
    let mut out = format!("DEFAULT CHARSET={}", cs.name);
    if cs.name == "utf8mb4" || name != cs.default_collation {
        out.push_str(&format!(" COLLATE={name}"));
    }
    out
}

/// A text column's ` CHARACTER SET x COLLATE y` where it differs from its
/// table's (only COLLATE when the set is the table's).
fn column_charset_clause(collation: u16, table: u16) -> String {
    if collation == table {
        return String::new();
    }
    let (cs, name) = charset::of_collation(collation);
    let (table_cs, _) = charset::of_collation(table);
    match cs.name == table_cs.name {
        true => format!(" COLLATE {name}"),
        false => format!(" CHARACTER SET {} COLLATE {name}", cs.name),
    }
}
