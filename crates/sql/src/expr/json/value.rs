//! JSON_VALUE (MySQL 8.0.21): the scalar at a path as a value of the
//! RETURNING type (VARCHAR(512) without one). A path that finds nothing
//! answers ON EMPTY; several values, an array or object for a non-JSON
//! type, or a value the type does not take answer ON ERROR (NULL unless
//! the call says ERROR or DEFAULT v). A bad document or path is an error
//! whatever the clauses say. The parser's form of the call is in
//! `parser/json_value.rs`; JSON_TABLE's columns convert through `typed`.

use super::Json;
use crate::expr::store_value;
use crate::parser::{CastType, Expr};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

/// What an ON EMPTY or ON ERROR clause answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Null,
    Error,
    /// DEFAULT v: v, the call's argument 2 (ON EMPTY) or 3 (ON ERROR).
    Default,
}

/// A JSON_VALUE call's clauses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub ty: DataType,
    pub on_empty: Answer,
    pub on_error: Answer,
}

/// The type RETURNING names.
fn returning(to: CastType) -> DataType {
    match to {
        CastType::Signed => DataType::BigInt { unsigned: false },
        CastType::Unsigned => DataType::BigInt { unsigned: true },
        CastType::Char => DataType::VarChar { len: 512 },
        CastType::Binary => DataType::VarBinary { len: 512 },
        CastType::Decimal { precision, scale } => DataType::Decimal { precision, scale },
        CastType::Double => DataType::Double,
        CastType::Date => DataType::Date,
        CastType::DateTime { fsp } => DataType::DateTime { fsp },
        CastType::Time { fsp } => DataType::Time { fsp },
        CastType::Json => DataType::Json,
    }
}

/// The clauses of the parser's JSON_VALUE call (doc, path, type, empty
/// answer, empty default, error answer, error default), and the
/// arguments to bind: doc, path, the two defaults.
pub fn spec(args: &[Expr]) -> Result<(Spec, [&Expr; 4]), Error> {
    let answer = |e: &Expr| match e {
        Expr::Literal(Value::Bytes(b)) if b == b"ERROR" => Answer::Error,
        Expr::Literal(Value::Bytes(b)) if b == b"DEFAULT" => Answer::Default,
        _ => Answer::Null,
    };
    let [doc, path, ty, empty, empty_default, error, error_default] = args else {
        return Err(Error::internal("JSON_VALUE without its clauses"));
    };
    let ty = match ty {
        Expr::Cast { to, .. } => returning(*to),
        _ => DataType::VarChar { len: 512 },
    };
    let spec = Spec {
        ty,
        on_empty: answer(empty),
        on_error: answer(error),
    };
    Ok((spec, [doc, path, empty_default, error_default]))
}

/// Where a call did not find its one value: which clause answers, the
/// error ERROR gives, and whether NULL or DEFAULT still warn (a
/// conversion error does, as in MySQL).
pub struct Miss {
    pub answer: Answer,
    /// 2 for ON EMPTY's default argument, 3 for ON ERROR's.
    pub default_arg: usize,
    pub error: Error,
    pub warns: bool,
}

/// The call's value from what the path `found`, or the clause to answer.
pub fn pick(spec: Spec, found: &[&Json]) -> Result<Value, Miss> {
    let on_error = |error: Error, warns: bool| Miss {
        answer: spec.on_error,
        default_arg: 3,
        error,
        warns,
    };
    let one = match found {
        [] => {
            return Err(Miss {
                answer: spec.on_empty,
                default_arg: 2,
                error: Error::new(
                    Code::MissingJsonValue,
                    "No value was found by 'json_value' on the specified path.",
                ),
                warns: false,
            })
        }
        [one] => *one,
        _ => return Err(on_error(multiple(), false)),
    };
    let container = matches!(one, Json::Array(_) | Json::Object(_));
    if container && spec.ty != DataType::Json {
        return Err(on_error(multiple(), false));
    }
    if matches!(one, Json::Null) && spec.ty != DataType::Json {
        return Ok(Value::Null);
    }
    typed(one, spec.ty, "json_value").map_err(|e| on_error(e, true))
}

fn multiple() -> Error {
    Error::new(
        Code::MultipleJsonValues,
        "More than one value was found by 'json_value' on the specified path.",
    )
}

/// `j` as a value of `ty`, as storing it in strict mode (`name` for the
/// error), JSON true and false as 1 and 0 for a number.
pub fn typed(j: &Json, ty: DataType, name: &str) -> Result<Value, Error> {
    let numeric = ty.is_integer()
        || matches!(
            ty,
            DataType::Decimal { .. } | DataType::Float | DataType::Double
        );
    let v = match j {
        _ if ty == DataType::Json => j.clone().into_value(),
        Json::Bool(b) if numeric => Value::Int(i64::from(*b)),
        Json::Int(i) => Value::Int(*i),
        Json::UInt(u) => Value::UInt(*u),
        Json::Double(d) => Value::Double(*d),
        Json::Decimal(d) => Value::Decimal(*d),
        other => Value::Bytes(other.unquoted().into_bytes()),
    };
    store_value(v, ty, name)
}
