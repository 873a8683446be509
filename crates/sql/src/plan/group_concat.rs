//! GROUP_CONCAT(.. ORDER BY ..): the parser's
//! `GROUP_CONCAT_ORDERED(sep, dirs, values.., keys..)` split into what the
//! binder makes one aggregate argument of (a row of the values followed by
//! the keys) and the keys' directions.

use super::{infer, Result};
use crate::expr::BExpr;
use crate::parser::Expr;
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

/// An ordered GROUP_CONCAT's pieces, positions resolved.
pub(super) struct Ordered {
    pub separator: Vec<u8>,
    /// Per ORDER BY key: descending.
    pub desc: Vec<bool>,
    /// The values, then one expression per key.
    pub args: Vec<Expr>,
}

/// Splits the parser's arguments. `ORDER BY n` names the n-th value, as
/// in MySQL; a number past the last value is an unknown column (1054).
pub(super) fn split(args: &[Expr]) -> Result<Ordered> {
    let (sep, dirs, rest) = match args {
        [Expr::Literal(Value::Bytes(sep)), Expr::Literal(Value::Bytes(dirs)), rest @ ..] => {
            (sep, dirs, rest)
        }
        _ => return Err(Error::parse("GROUP_CONCAT(")),
    };
    let nvalues = rest.len().saturating_sub(dirs.len());
    if nvalues == 0 {
        return Err(Error::parse("GROUP_CONCAT("));
    }
    let (values, keys) = rest.split_at(nvalues);
    let mut out = values.to_vec();
    for k in keys {
        out.push(match k {
            Expr::Literal(v @ (Value::Int(_) | Value::UInt(_))) => {
                let n = v.to_i64().unwrap_or(0);
                match usize::try_from(n).ok().and_then(|n| n.checked_sub(1)) {
                    Some(i) if i < nvalues => values[i].clone(),
                    _ => {
                        return Err(Error::new(
                            Code::BadField,
                            format!("Unknown column '{n}' in 'order clause'"),
                        ))
                    }
                }
            }
            k => k.clone(),
        });
    }
    Ok(Ordered {
        separator: sep.clone(),
        desc: dirs.iter().map(|d| *d == b'D').collect(),
        args: out,
    })
}

/// The sort form of a bound ORDER BY key, as a query's ORDER BY sorts:
/// JSON by its order, ENUM/SET by member number, text under the collation.
pub(super) fn sort_key(b: BExpr, types: &[(DataType, bool)]) -> BExpr {
    let text = infer(&b, types).0.is_string();
    let b = crate::expr::json::bind::sort_key(b, types);
    let b = crate::plan::enumset::sort_key(b, types);
    crate::expr::collate_key(b, text)
}
