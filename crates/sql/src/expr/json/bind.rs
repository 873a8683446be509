//! What the binder does for JSON: a JSON function's arguments are marked
//! with their static kind (a JSON-typed expression is a document; an SQL
//! string is a string), and a comparison with a JSON operand compares as
//! JSON (MySQL converts the other side to a JSON scalar).

use super::funcs::JsonFn;
use crate::expr::infer::infer;
use crate::expr::{BExpr, Func};
use crate::parser::{BinaryOp, CastType, UnaryOp};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error};

pub fn is_json(e: &BExpr, types: &[(DataType, bool)]) -> bool {
    infer(e, types).0 == DataType::Json
}

/// Whether an expression is boolean (a JSON true or false, not 1 or 0).
fn is_boolean(e: &BExpr) -> bool {
    use BinaryOp::*;
    match e {
        BExpr::Binary(op, ..) => matches!(
            op,
            Or | And | Xor | Eq | NullSafeEq | NotEq | Lt | LtEq | Gt | GtEq
        ),
        BExpr::Unary(UnaryOp::Not, _) => true,
        BExpr::IsNull(..)
        | BExpr::IsBool { .. }
        | BExpr::InList { .. }
        | BExpr::InSubquery { .. }
        | BExpr::Between { .. }
        | BExpr::Like { .. }
        | BExpr::Exists { .. } => true,
        BExpr::Func(Func::Json(f), _) => matches!(
            f,
            JsonFn::Contains | JsonFn::ContainsPath | JsonFn::Overlaps | JsonFn::MemberOf
        ),
        _ => false,
    }
}

/// Wraps an argument in the marker of its kind.
pub fn mark(e: BExpr, types: &[(DataType, bool)]) -> BExpr {
    if is_json(&e, types) {
        BExpr::Func(Func::JsonTyped, vec![e])
    } else if is_boolean(&e) {
        BExpr::Func(Func::BoolTyped, vec![e])
    } else {
        e
    }
}

/// A JSON function call with its arguments marked (1582 on a wrong count).
pub fn call(
    f: JsonFn,
    name: &str,
    args: Vec<BExpr>,
    types: &[(DataType, bool)],
) -> Result<BExpr, Error> {
    if !f.accepts(args.len()) {
        return Err(Error::new(
            Code::WrongParamcountToNativeFct,
            format!("Incorrect parameter count in the call to native function '{name}'"),
        ));
    }
    let args = args.into_iter().map(|a| mark(a, types)).collect();
    Ok(BExpr::Func(Func::Json(f), args))
}

/// `l op r`, compared as JSON when either side is of JSON type.
pub fn binary(op: BinaryOp, l: BExpr, r: BExpr, types: &[(DataType, bool)]) -> BExpr {
    use BinaryOp::*;
    let compares = matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq);
    if !compares || !(is_json(&l, types) || is_json(&r, types)) {
        // TRUE/FALSE compared with no JSON side: the integers again.
        let (l, r) = (plain_bool(l), plain_bool(r));
        return BExpr::Binary(op, Box::new(l), Box::new(r));
    }
    let cmp = BExpr::Func(
        Func::Json(JsonFn::Compare),
        vec![mark(l, types), mark(r, types)],
    );
    BExpr::Binary(
        op,
        Box::new(cmp),
        Box::new(BExpr::Literal(lockstep_types::Value::Int(0))),
    )
}

/// A CASE expression. With a JSON operand, MySQL compares it with each
/// WHEN in the type of that pair (not as JSON): a numeric WHEN meets the
/// JSON value's number (true is 1, false 0, a string's contents), a
/// string WHEN its text. Where a WHEN is numeric the CASE is written as
/// a searched one, comparing per branch (MySQL too evaluates the operand
/// once per comparison type).
pub fn case(
    operand: Option<Box<BExpr>>,
    branches: Vec<(BExpr, BExpr)>,
    else_result: Option<Box<BExpr>>,
    types: &[(DataType, bool)],
) -> BExpr {
    let numeric = |w: &BExpr| {
        let t = infer(w, types).0;
        t.is_integer()
            || matches!(
                t,
                DataType::Decimal { .. }
                    | DataType::Float
                    | DataType::Double
                    | DataType::Bit { .. }
            )
    };
    let o = match operand {
        Some(o) if is_json(&o, types) && branches.iter().any(|(w, _)| numeric(w)) => o,
        operand => {
            return BExpr::Case {
                operand,
                branches,
                else_result,
            }
        }
    };
    let branches = branches
        .into_iter()
        .map(|(w, then)| {
            let left = match numeric(&w) {
                true => BExpr::Func(Func::Json(JsonFn::Scalar), vec![mark((*o).clone(), types)]),
                false => (*o).clone(),
            };
            (
                BExpr::Binary(BinaryOp::Eq, Box::new(left), Box::new(w)),
                then,
            )
        })
        .collect();
    BExpr::Case {
        operand: None,
        branches,
        else_result,
    }
}

/// The parser's boolean form of TRUE/FALSE (`1 IS TRUE`, see
/// parser/json_bool.rs) as the plain integer.
fn plain_bool(e: BExpr) -> BExpr {
    match e {
        BExpr::IsBool {
            expr,
            value: true,
            negated: false,
        } if matches!(*expr, BExpr::Literal(lockstep_types::Value::Int(0 | 1))) => *expr,
        e => e,
    }
}

/// The operand of CAST(x AS type): a JSON value cast to a number or a
/// date is first its scalar (a JSON string's contents, not its quotes).
pub fn cast_operand(e: BExpr, to: CastType, types: &[(DataType, bool)]) -> BExpr {
    if matches!(to, CastType::Char | CastType::Binary | CastType::Json) || !is_json(&e, types) {
        return e;
    }
    BExpr::Func(Func::Json(JsonFn::Scalar), vec![mark(e, types)])
}

/// An ORDER BY key: a JSON value sorts in MySQL's JSON order.
pub fn sort_key(e: BExpr, types: &[(DataType, bool)]) -> BExpr {
    if !is_json(&e, types) {
        return e;
    }
    BExpr::Func(Func::Json(JsonFn::SortKey), vec![mark(e, types)])
}

/// `x [NOT] IN (list)` with a JSON operand: the OR of JSON equalities
/// (same NULL rules as IN); None where no side is of JSON type.
pub fn in_list(
    expr: &BExpr,
    list: &[BExpr],
    negated: bool,
    types: &[(DataType, bool)],
) -> Option<BExpr> {
    if !is_json(expr, types) && !list.iter().any(|x| is_json(x, types)) {
        return None;
    }
    let any = list
        .iter()
        .map(|item| binary(BinaryOp::Eq, expr.clone(), item.clone(), types))
        .reduce(|a, b| BExpr::Binary(BinaryOp::Or, Box::new(a), Box::new(b)))?;
    Some(if negated {
        BExpr::Unary(UnaryOp::Not, Box::new(any))
    } else {
        any
    })
}
