//! ENUM and SET columns in statements: where the binder turns a value
//! into its number or a number into its member (the functions themselves
//! are in expr/enumset.rs).
//!
//! Storage stays text: a value is stored as its member's defined spelling
//! (a SET as its members in definition order, joined by ','), so reads,
//! string comparisons, LIKE, CONCAT, FIND_IN_SET and index lookups by
//! string need nothing special, and MIN()/MAX() compare the text as
//! MySQL's manual says they do. Where MySQL uses the number behind the
//! value (1-based member index for ENUM, bitmask for SET) the binder wraps
//! the column in `Func::EnumNumber`: ORDER BY keys, arithmetic (`col + 0`),
//! SUM/AVG/BIT_*, and ordering comparisons with a number (`col < 2`).
//! Equality with a number (`col = 2`, `col IN (1, 3)`, `col = ?`) instead
//! turns the number into the member text it names (`Func::EnumText`), so
//! that an index on the column still serves the lookup. An index orders
//! the text, so ORDER BY an ENUM is always sorted, never read in index
//! order. Text cannot hold a SET's '' member (MySQL's own text of
//! {'', 'a'} is 'a'), so storing a value that holds it is refused (1235).
//! See lockstep_types::enumset for the member lists themselves.

use crate::expr::infer::infer;
use crate::expr::{BExpr, Func};
use crate::parser::{BinaryOp, CastType, UnaryOp};
use lockstep_types::DataType;

/// `e` as its number where `e` is an ENUM/SET value, else unchanged;
/// `against`: decide when evaluated, by that value's type.
fn as_number_with(e: BExpr, against: Option<&BExpr>, types: &[(DataType, bool)]) -> BExpr {
    match infer(&e, types).0.members() {
        Some((m, set)) => BExpr::Func(
            Func::EnumNumber(m, set),
            std::iter::once(e).chain(against.cloned()).collect(),
        ),
        None => e,
    }
}

fn as_number(e: BExpr, types: &[(DataType, bool)]) -> BExpr {
    as_number_with(e, None, types)
}

/// Whether `e` is of a numeric (or temporal) type: compared as a number.
fn numeric(e: &BExpr, types: &[(DataType, bool)]) -> bool {
    let t = infer(e, types).0;
    !t.is_string() && t != DataType::Null && t != DataType::Json
}

/// A value whose type the binder cannot know.
fn untyped(e: &BExpr) -> bool {
    matches!(e, BExpr::Param(_) | BExpr::UserVar(_))
}

/// An ORDER BY key: ENUM and SET values sort by their numbers.
pub fn sort_key(e: BExpr, types: &[(DataType, bool)]) -> BExpr {
    as_number(e, types)
}

/// `sort_key` for a key whose type `t` the caller knows (a window's).
pub fn sort_key_of(e: BExpr, t: DataType) -> BExpr {
    match t.members() {
        Some((m, set)) => BExpr::Func(Func::EnumNumber(m, set), vec![e]),
        None => e,
    }
}

/// `x IN (list)` with an ENUM/SET `x`: numbers in the list (and values
/// typed only when run) as the member text they name, as for `=`.
pub fn in_list(x: &BExpr, list: Vec<BExpr>, types: &[(DataType, bool)]) -> Vec<BExpr> {
    let Some((m, set)) = infer(x, types).0.members() else {
        return list;
    };
    let numeric = |e: &BExpr| numeric(e, types);
    list.into_iter()
        .map(|e| match numeric(&e) || untyped(&e) {
            true => BExpr::Func(Func::EnumText(m, set), vec![e]),
            false => e,
        })
        .collect()
}

/// `x BETWEEN low AND high` with an ENUM/SET `x`: bounds that are
/// numbers compare with its number, as `x >= low AND x <= high` does.
pub fn between(x: BExpr, bounds: [&BExpr; 2], types: &[(DataType, bool)]) -> BExpr {
    match bounds.iter().any(|b| numeric(b, types)) {
        true => as_number(x, types),
        false => x,
    }
}

/// NOT, unary minus and bit inversion of an ENUM/SET value use its
/// number (unary plus is no operation at all).
pub fn unary(op: UnaryOp, e: BExpr, types: &[(DataType, bool)]) -> BExpr {
    match op {
        UnaryOp::Minus | UnaryOp::BitNot | UnaryOp::Not => as_number(e, types),
        UnaryOp::Plus => e,
    }
}

/// A CAST to a number type reads an ENUM/SET value as its number.
pub fn cast_operand(e: BExpr, to: CastType, types: &[(DataType, bool)]) -> BExpr {
    match to {
        CastType::Signed | CastType::Unsigned | CastType::Decimal { .. } | CastType::Double => {
            as_number(e, types)
        }
        _ => e,
    }
}

/// A binary operation: arithmetic on an ENUM/SET value uses its number,
/// and so does a comparison with a number (with a string: the text).
pub fn binary(op: BinaryOp, l: BExpr, r: BExpr, types: &[(DataType, bool)]) -> (BExpr, BExpr) {
    use BinaryOp::*;
    let numeric = |e: &BExpr| numeric(e, types);
    if op == Eq {
        // Equality with a number (or a value typed only when run): the
        // member text it names, so that an index on the column serves.
        let text = |col: &BExpr, other: BExpr| match infer(col, types).0.members() {
            Some((m, set)) if numeric(&other) || untyped(&other) => {
                Ok(BExpr::Func(Func::EnumText(m, set), vec![other]))
            }
            _ => Err(other),
        };
        match text(&l, r) {
            Ok(r) => return (l, r),
            Err(r) => match text(&r, l) {
                Ok(l) => return (l, r),
                Err(l) => return (l, r),
            },
        }
    }
    match op {
        Plus | Minus | Multiply | Divide | IntDivide | Modulo | BitAnd | BitOr | BitXor
        | ShiftLeft | ShiftRight => (as_number(l, types), as_number(r, types)),
        Eq | NullSafeEq | NotEq | Lt | LtEq | Gt | GtEq => {
            let side = |e: BExpr, other: &BExpr| match (numeric(other), untyped(other)) {
                (_, true) => as_number_with(e, Some(other), types),
                (true, false) => as_number(e, types),
                _ => e,
            };
            let l2 = side(l.clone(), &r);
            (l2, side(r, &l))
        }
        _ => (l, r),
    }
}

/// The arguments of built-in function `name`: a numeric function (ABS,
/// ROUND, BIT_COUNT, SQRT, ...) reads an ENUM/SET value as its number.
pub fn function_args(name: &str, args: Vec<BExpr>, types: &[(DataType, bool)]) -> Vec<BExpr> {
    const NUMERIC: &[&str] = &[
        "ABS",
        "ACOS",
        "ASIN",
        "ATAN",
        "ATAN2",
        "BIT_COUNT",
        "CEIL",
        "CEILING",
        "COS",
        "COT",
        "DEGREES",
        "EXP",
        "FLOOR",
        "LN",
        "LOG",
        "LOG10",
        "LOG2",
        "MOD",
        "POW",
        "POWER",
        "RADIANS",
        "ROUND",
        "SIGN",
        "SIN",
        "SQRT",
        "TAN",
        "TRUNCATE",
    ];
    match NUMERIC.contains(&name) {
        true => args.into_iter().map(|a| as_number(a, types)).collect(),
        false => args,
    }
}

/// An aggregate's argument: SUM, AVG, the BIT_ and statistics functions
/// of an ENUM/SET value use its number (MIN, MAX, COUNT, GROUP_CONCAT
/// the text).
pub fn aggregate_arg(
    func: crate::plan::AggFunc,
    arg: Option<BExpr>,
    types: &[(DataType, bool)],
) -> Option<BExpr> {
    use crate::plan::AggFunc::*;
    match func {
        Sum | Avg | BitAnd | BitOr | BitXor | StdPop | StdSamp | VarPop | VarSamp => {
            arg.map(|a| as_number(a, types))
        }
        _ => arg,
    }
}
