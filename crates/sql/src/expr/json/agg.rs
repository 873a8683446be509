//! JSON_ARRAYAGG and JSON_OBJECTAGG: each input kept as JSON text (as
//! GROUP_CONCAT keeps its parts, so the executor counts their memory),
//! joined into one value at the end of the group.

use super::funcs::{unmark, Kind};
use super::parse::parse;
use super::{from_sql, Json, MAX_DEPTH};
use crate::expr::BExpr;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};

/// One input as JSON, by the kind the binder marked its expression with.
fn to_json(e: Option<&BExpr>, v: Value) -> Result<Json, Error> {
    let kind = e.map_or(Kind::Sql, |e| unmark(e).0);
    let j = match (kind, v) {
        (Kind::Json, Value::Bytes(b)) => {
            parse(&b).map_err(|e| e.in_argument(1, "json_arrayagg"))?
        }
        (Kind::Bool, v) if !v.is_null() => Json::Bool(v.truth() == Some(true)),
        (_, v) => from_sql(&v),
    };
    // The aggregate nests the value one level deeper.
    if j.depth() >= MAX_DEPTH {
        return Err(super::too_deep());
    }
    Ok(j)
}

/// The text kept for one row: the value, or for JSON_OBJECTAGG the pair
/// `[key, value]` (NULL keys are 3158, as MySQL).
pub fn part(arg: Option<&BExpr>, v: Value, row: Option<Vec<Value>>) -> Result<Vec<u8>, Error> {
    let Some(vals) = row else {
        return Ok(to_json(arg, v)?.to_text().into_bytes());
    };
    let items = match arg {
        Some(BExpr::Row(items)) => &items[..],
        _ => &[],
    };
    let mut vals = vals.into_iter();
    let key = vals.next().unwrap_or(Value::Null);
    let Some(key) = key.to_text() else {
        return Err(Error::new(
            Code::JsonDocumentNullKey,
            "JSON documents may not contain NULL member names.",
        ));
    };
    let value = to_json(items.get(1), vals.next().unwrap_or(Value::Null))?;
    let key = Json::Str(String::from_utf8_lossy(&key).into_owned());
    Ok(Json::Array(vec![key, value]).to_text().into_bytes())
}

/// The group's result: NULL for no rows; an object keeps the last value
/// of a repeated key.
pub fn finish(object: bool, parts: &[Vec<u8>]) -> Value {
    if parts.is_empty() {
        return Value::Null;
    }
    if !object {
        let mut out = b"[".to_vec();
        out.extend_from_slice(&parts.join(&b", "[..]));
        out.push(b']');
        return Value::Bytes(out);
    }
    let members = parts
        .iter()
        .filter_map(|p| match parse(p) {
            Ok(Json::Array(mut kv)) if kv.len() == 2 => {
                let v = kv.pop()?;
                match kv.pop()? {
                    Json::Str(k) => Some((k, v)),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    Json::object(members).into_value()
}
