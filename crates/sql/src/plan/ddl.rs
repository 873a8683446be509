//! DDL: turns CREATE TABLE and index statements into table definitions,
//! and renders SHOW CREATE TABLE.

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

/// A column's definition from its CREATE/ALTER TABLE text.
pub(crate) fn column_def(spec: &ColumnSpec) -> Result<ColumnDef, Error> {
    let (default, default_now) = literal_default(spec)?;
    Ok(ColumnDef {
        name: spec.name.clone(),
        data_type: spec.data_type,
        nullable: !spec.not_null && !spec.primary_key,
        default,
        auto_increment: spec.auto_increment,
        default_now,
        on_update_now: spec.on_update_now,
    })
}

/// Builds a table definition (id assigned by the engine).
/// Most columns a table may have (MySQL's limit; a stored row image also
/// counts its columns in 15 bits).
pub const MAX_COLUMNS: usize = 4096;

pub fn table_def(database: &str, ct: &CreateTable) -> Result<TableDef, Error> {
    if ct.columns.len() > MAX_COLUMNS {
        return Err(Error::new(Code::TooManyFields, "Too many columns"));
    }
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
                return Err(Error::new(
                    Code::MultiplePriKey,
                    "Multiple primary key defined",
                ));
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
        columns.push(column_def(spec)?);
    }
    if ct.primary_key.is_some() && ct.columns.iter().any(|c| c.primary_key) {
        return Err(Error::new(
            Code::MultiplePriKey,
            "Multiple primary key defined",
        ));
    }
    indexes.extend(ct.indexes.iter().cloned());
    let position = |name: &str, columns: &[ColumnDef]| -> Result<usize, Error> {
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
    };
    let mut defs = Vec::new();
    let mut hidden_row_id = None;
    match &primary {
        Some(cols) => {
            let mut pos = Vec::new();
            for c in cols {
                let p = position(c, &columns)?;
                columns[p].nullable = false;
                pos.push(p);
            }
            defs.push(IndexDef {
                name: "PRIMARY".into(),
                columns: pos,
                unique: true,
            });
        }
        None => {
            // InnoDB's rule: the first UNIQUE index on NOT NULL columns
            // would become the clustered key; lockstep always uses a hidden
            // row id instead, which keeps secondary uniqueness uniform.
            columns.push(ColumnDef {
                name: "DB_ROW_ID".into(),
                data_type: DataType::BigInt { unsigned: true },
                nullable: false,
                default: None,
                auto_increment: false,
                default_now: false,
                on_update_now: false,
            });
            hidden_row_id = Some(columns.len() - 1);
            defs.push(IndexDef {
                name: "PRIMARY".into(),
                columns: vec![columns.len() - 1],
                unique: true,
            });
        }
    }
    for (n, ix) in indexes.iter().enumerate() {
        let mut pos = Vec::new();
        for c in &ix.columns {
            pos.push(position(c, &columns)?);
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
        defs.push(IndexDef {
            name,
            columns: pos,
            unique: ix.unique,
        });
    }
    let autos: Vec<usize> = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.auto_increment)
        .map(|(i, _)| i)
        .collect();
    if autos.len() > 1
        || autos
            .iter()
            .any(|a| !defs.iter().any(|d| d.columns.first() == Some(a)))
    {
        return Err(Error::new(
            Code::WrongAutoKey,
            "Incorrect table definition; there can be only one auto column and it must be defined as a key",
        ));
    }
    Ok(TableDef {
        id: 0,
        database: database.to_string(),
        name: ct.name.name.clone(),
        columns,
        indexes: defs,
        hidden_row_id,
    })
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
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB{} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci",
        quote_ident(&def.name),
        lines.join(",\n"),
        auto
    )
}
