//! JSON_TABLE's rows (plan/json_table.rs). Each value the row path finds
//! gives rows: its columns' values, joined to the rows of each NESTED
//! path in turn (a sibling's columns NULL meanwhile), or one row with all
//! nested columns NULL when no nested path finds anything, as MySQL does.

use super::{row_bytes, Exec, Result};
use crate::expr::json::parse::parse;
use crate::expr::json::Json;
use crate::expr::store_value;
use crate::plan::bind::json_table::{JsonTablePlan, JtCol, OnAnswer, ValueCol};
use lockstep_engine::Error as EngineError;
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

impl Exec<'_> {
    pub(super) fn json_table(&mut self, t: &JsonTablePlan) -> Result<Vec<Vec<Value>>> {
        let text = match self.eval(&t.expr, &[])? {
            Value::Null => return Ok(Vec::new()),
            Value::Bytes(b) => b,
            other => other.to_string().into_bytes(),
        };
        let doc = parse(&text).map_err(|e| EngineError::Sql(e.in_argument(1, "json_table")))?;
        let mut out = Rows {
            rows: Vec::new(),
            bytes: 0,
        };
        for (i, node) in t.path.find(&doc).into_iter().enumerate() {
            let mut base = vec![Value::Null; t.width];
            self.jt_level(&t.columns, node, i as u64 + 1, &mut base, &mut out)?;
        }
        // The caller accounts for the rows it keeps.
        self.memory.statement = self.memory.statement.saturating_sub(out.bytes);
        Ok(out.rows)
    }

    /// Appends the rows of column list `cols` at `node` (the `ord`th value
    /// its path found): `base` with this level's values, once per row of
    /// each nested list, or once when they have none.
    fn jt_level(
        &mut self,
        cols: &[JtCol],
        node: &Json,
        ord: u64,
        base: &mut [Value],
        out: &mut Rows,
    ) -> Result<()> {
        for c in cols {
            match c {
                JtCol::Ordinality(slot) => base[*slot] = Value::UInt(ord),
                JtCol::Value(v) => base[v.slot] = value_at(v, node).map_err(EngineError::Sql)?,
                JtCol::Exists { slot, ty, path } => {
                    let found = Value::Int(i64::from(!path.find(node).is_empty()));
                    base[*slot] = store_value(found, *ty, "").map_err(EngineError::Sql)?;
                }
                JtCol::Nested { .. } => {}
            }
        }
        let before = out.rows.len();
        for c in cols {
            let JtCol::Nested { path, columns, .. } = c else {
                continue;
            };
            for (i, inner) in path.find(node).into_iter().enumerate() {
                let mut row = base.to_vec();
                self.jt_level(columns, inner, i as u64 + 1, &mut row, out)?;
            }
        }
        if out.rows.len() == before {
            let row = base.to_vec();
            let bytes = row_bytes(&row);
            self.charge(bytes)?;
            out.bytes += bytes;
            out.rows.push(row);
        }
        Ok(())
    }
}

struct Rows {
    rows: Vec<Vec<Value>>,
    bytes: usize,
}

/// A PATH column's value at `node`: ON EMPTY when its path finds nothing,
/// ON ERROR when it finds several values, an array or object for a
/// scalar type, or a value the type does not take.
fn value_at(c: &ValueCol, node: &Json) -> std::result::Result<Value, Error> {
    let found = c.path.find(node);
    let one = match found.as_slice() {
        [] => return respond(&c.on_empty, c, missing(c)),
        [one] => *one,
        _ => return respond(&c.on_error, c, not_scalar(c)),
    };
    let container = matches!(one, Json::Array(_) | Json::Object(_));
    if container && c.ty != DataType::Json {
        return respond(&c.on_error, c, not_scalar(c));
    }
    if matches!(one, Json::Null) && c.ty != DataType::Json {
        return Ok(Value::Null);
    }
    match convert(one, c) {
        Ok(v) => Ok(v),
        Err(_) => respond(&c.on_error, c, unconvertible(one, c)),
    }
}

/// `j` as a value of the column's type, as storing it in strict mode.
fn convert(j: &Json, c: &ValueCol) -> std::result::Result<Value, Error> {
    crate::expr::json::value::typed(j, c.ty, &c.name)
}

fn respond(on: &OnAnswer, c: &ValueCol, err: Error) -> std::result::Result<Value, Error> {
    match on {
        OnAnswer::Null => Ok(Value::Null),
        OnAnswer::Error => Err(err),
        OnAnswer::Default(j) => convert(j, c),
    }
}

fn missing(c: &ValueCol) -> Error {
    Error::new(
        Code::MissingJsonTableValue,
        format!("Missing value for JSON_TABLE column '{}'", c.name),
    )
}

fn not_scalar(c: &ValueCol) -> Error {
    Error::new(
        Code::WrongJsonTableValue,
        format!(
            "Can't store an array or an object in the scalar column '{}' of JSON_TABLE '{}'.",
            c.name, c.table
        ),
    )
}

/// ERROR ON ERROR for a value the type does not take: a string that is no
/// number for a numeric column (3156), else out of range (3669).
fn unconvertible(j: &Json, c: &ValueCol) -> Error {
    let target = match c.ty {
        t if t.is_integer() => "INTEGER",
        DataType::Decimal { .. } => "DECIMAL",
        DataType::Float | DataType::Double => "DOUBLE",
        _ => "",
    };
    let number = |s: &str| s.trim().parse::<f64>().is_ok();
    if let (false, Json::Str(s)) = (target.is_empty(), j) {
        if !number(s) {
            return Error::new(
                Code::InvalidJsonValueForCast,
                format!(
                    "Invalid JSON value for CAST to {target} from column {} at row 1",
                    c.name
                ),
            );
        }
    }
    Error::new(
        Code::JsonTableValueOutOfRange,
        format!("Value is out of range for JSON_TABLE's column '{}'", c.name),
    )
}
