//! ENUM and SET values where expressions meet them: storing a value in
//! such a column, a column's implicit default, and the number behind a
//! value (`Func::EnumNumber`) or the member a number names
//! (`Func::EnumText`). Where the binder puts those functions, and why
//! storage stays text, is in plan/enumset.rs.

use crate::expr::{eval, BExpr, Env};
use lockstep_types::enumset::{self, Members};
use lockstep_types::{DataType, Error, Value};

/// `v` stored in an ENUM/SET column: a member (by name, or by number if
/// no member has that name, as MySQL reads '3'), else error 1265.
pub fn store(v: &Value, members: Members, set: bool, column: &str) -> Result<Value, Error> {
    let stored = match set {
        true => enumset::store_set(v, members, column),
        false => enumset::store_enum(v, members, column),
    };
    let stored = match (stored, v) {
        (Err(e), Value::Bytes(b)) => {
            match std::str::from_utf8(b).map(|s| s.trim().parse::<u64>()) {
                Ok(Ok(n)) => store(&Value::UInt(n), members, set, column),
                _ => Err(e),
            }
        }
        (s, _) => s.map(|s| Value::Bytes(s.into_bytes())),
    }?;
    debug_assert!(matches!(stored, Value::Bytes(_)));
    Ok(stored)
}

/// The implicit default of a NOT NULL column declared without one: an
/// ENUM's first member (other types have none).
pub fn implicit_default(ty: DataType) -> Option<Value> {
    match ty.members() {
        Some((m, false)) => m.name(1).map(Value::str),
        _ => None,
    }
}

/// The number behind a stored value (`Func::EnumNumber`): member index
/// (0 for '' or an unknown value) or SET bitmask; NULL stays NULL.
pub fn number(v: &Value, members: Members, set: bool) -> Value {
    match v {
        Value::Null => Value::Null,
        Value::Bytes(b) if set => Value::UInt(members.mask_of(b)),
        Value::Bytes(b) => Value::UInt(members.index_of(b).unwrap_or(0) as u64),
        other => other.clone(),
    }
}

/// `Func::EnumNumber(m, set)`: the number of its first argument; with a
/// second (a parameter or variable compared with it, whose type is only
/// known now), the number only if that is a number, else the text.
pub fn eval_number(
    m: Members,
    set: bool,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    let v = eval(&args[0], row, env)?;
    if let Some(other) = args.get(1) {
        if matches!(eval(other, row, env)?, Value::Bytes(_) | Value::Null) {
            return Ok(v);
        }
    }
    Ok(number(&v, m, set))
}

/// `Func::EnumText(m, set)`: a number as the member text it stands for,
/// or bytes no stored value holds where it names none (ENUM index 0 too:
/// strict mode never stores the '' error value); text and NULL unchanged.
pub fn text_of(v: Value, m: Members, set: bool) -> Value {
    const NOTHING: &[u8] = &[0xFF]; // not UTF-8: never a member's text
    let n = match &v {
        Value::Null | Value::Bytes(_) => return v,
        Value::Int(i) => u64::try_from(*i).ok(),
        Value::UInt(u) => Some(*u),
        other => other
            .to_decimal()
            .filter(|d| d.trunc() == *d)
            .and_then(|d| {
                lockstep_types::Value::Decimal(d)
                    .to_i64()
                    .and_then(|i| u64::try_from(i).ok())
            }),
    };
    let text = match (n, set) {
        (Some(n), false) => usize::try_from(n)
            .ok()
            .and_then(|n| m.name(n))
            .map(str::to_string),
        (Some(n), true) if m.len() >= 64 || n >> m.len() == 0 => Some(m.set_text(n)),
        _ => None,
    };
    Value::Bytes(text.map_or(NOTHING.to_vec(), String::into_bytes))
}
