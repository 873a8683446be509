//! The type and nullability of a bound expression (`infer`), as result
//! metadata, CAST targets and function arguments need them: used by the
//! binder and by expression code that types its arguments.

use crate::expr::{BExpr, Func};
use crate::parser::{self as ast, BinaryOp};
use lockstep_types::{DataType, Value};

/// Type and nullability of an expression over a row of the given types.
pub fn infer(e: &BExpr, types: &[(DataType, bool)]) -> (DataType, bool) {
    let big = DataType::BigInt { unsigned: false };
    let vc = |n: u32| DataType::VarChar { len: n };
    match e {
        BExpr::Literal(v) => literal_type(v),
        BExpr::Column(i) => types.get(*i).copied().unwrap_or((vc(255), true)),
        BExpr::Outer { .. } | BExpr::Param(_) | BExpr::UserVar(_) => (vc(255), true),
        BExpr::Stored(f, _) => (f.program.returns.unwrap_or(vc(255)), true),
        BExpr::SystemVar { name, .. } if crate::sysvars::is_integer_var(name) => (big, true),
        BExpr::SystemVar { .. } => (vc(255), true),
        BExpr::Unary(_, x) => {
            let (t, n) = infer(x, types);
            (if t.is_integer() { big } else { t }, n)
        }
        BExpr::Binary(op, l, r) => {
            use BinaryOp::*;
            let (lt, ln) = infer(l, types);
            let (rt, rn) = infer(r, types);
            let n = ln || rn;
            match op {
                Plus | Minus | Multiply | Modulo => {
                    if matches!(lt, DataType::Double | DataType::Float)
                        || matches!(rt, DataType::Double | DataType::Float)
                        || lt.is_string()
                        || rt.is_string()
                    {
                        (DataType::Double, n)
                    } else if let (DataType::Decimal { scale: a, .. }, _)
                    | (_, DataType::Decimal { scale: a, .. }) = (lt, rt)
                    {
                        let b = match (lt, rt) {
                            (
                                DataType::Decimal { scale: x, .. },
                                DataType::Decimal { scale: y, .. },
                            ) => {
                                if *op == Multiply {
                                    x + y
                                } else {
                                    x.max(y)
                                }
                            }
                            _ => a,
                        };
                        (
                            DataType::Decimal {
                                precision: 65,
                                scale: b.min(30),
                            },
                            n,
                        )
                    } else {
                        (
                            DataType::BigInt {
                                unsigned: lt.is_unsigned() && rt.is_unsigned(),
                            },
                            n,
                        )
                    }
                }
                Divide => {
                    if matches!(lt, DataType::Double | DataType::Float)
                        || matches!(rt, DataType::Double | DataType::Float)
                    {
                        (DataType::Double, true)
                    } else {
                        let s = match lt {
                            DataType::Decimal { scale, .. } => scale,
                            _ => 0,
                        };
                        (
                            DataType::Decimal {
                                precision: 65,
                                scale: (s + 4).min(30),
                            },
                            true,
                        )
                    }
                }
                IntDivide => (big, true),
                BitAnd | BitOr | BitXor | ShiftLeft | ShiftRight => {
                    (DataType::BigInt { unsigned: true }, n)
                }
                NullSafeEq => (big, false),
                _ => (big, n),
            }
        }
        BExpr::IsNull(..) | BExpr::IsBool { .. } | BExpr::Exists { .. } => (big, false),
        BExpr::InList { .. }
        | BExpr::InSubquery { .. }
        | BExpr::Between { .. }
        | BExpr::Like { .. } => (big, true),
        BExpr::Subquery(q) => q
            .columns
            .first()
            .map(|c| (c.data_type, true))
            .unwrap_or((vc(255), true)),
        BExpr::Func(f, args) => {
            let first = args
                .first()
                .map(|a| infer(a, types))
                .unwrap_or((vc(255), true));
            match f {
                Func::Json(jf) => (jf.result_type(), true),
                Func::Str(x) => (x.result_type(), true),
                Func::Math(x) => (x.result_type(), true),
                Func::Net(x) => (x.result_type(), true),
                Func::Regexp(x) => (x.result_type(), true),
                Func::Clock(x) => (x.result_type(args), true),
                Func::Misc(x) => (x.result_type(), true),
                Func::JsonTyped => (DataType::Json, first.1),
                Func::EnumNumber(..) => (DataType::BigInt { unsigned: true }, first.1),
                Func::EnumText(..) => (DataType::VarChar { len: 255 }, first.1),
                Func::BoolTyped | Func::FromUtc => first,
                Func::TextForm(form) => (form.result_type(), first.1),
                Func::Database | Func::User | Func::CurrentUser => (vc(64), true),
                Func::Version => (vc(64), false),
                Func::ConnectionId | Func::LastInsertId | Func::FoundRows => {
                    (DataType::BigInt { unsigned: true }, false)
                }
                Func::RowCount
                | Func::UnixTimestamp
                | Func::Length
                | Func::CharLength
                | Func::Year
                | Func::Month
                | Func::Day
                | Func::Sign
                | Func::Instr
                | Func::Sleep
                | Func::GetLock
                | Func::WaitForExecutedGtidSet
                | Func::ReleaseLock
                | Func::ReleaseAllLocks
                | Func::IsFreeLock => (big, true),
                Func::IsUsedLock => (DataType::BigInt { unsigned: true }, true),
                // NOW(n): n fractional digits.
                Func::Now | Func::SysDate | Func::UtcTimestamp => {
                    let fsp = match args.first() {
                        Some(BExpr::Literal(v)) => v.to_i64().unwrap_or(0).clamp(0, 6) as u8,
                        _ => 0,
                    };
                    (DataType::DateTime { fsp }, false)
                }
                Func::CurDate | Func::UtcDate | Func::Date => (DataType::Date, true),
                Func::MakeDate => (DataType::Date, true),
                Func::Time => (DataType::Time { fsp: 6 }, true),
                Func::CurTime | Func::UtcTime => {
                    let fsp = match args.first() {
                        Some(BExpr::Literal(v)) => v.to_i64().unwrap_or(0).clamp(0, 6) as u8,
                        _ => 0,
                    };
                    (DataType::Time { fsp }, false)
                }
                Func::Sha1 => (vc(40), true),
                Func::Sha2 => (vc(128), true),
                Func::DateAdd => (date_add_type(first.0, args.get(2)), true),
                Func::TimestampDiff | Func::DateDiff => (big, true),
                Func::DatePart(i) => match crate::expr::DATE_PARTS[*i as usize] {
                    "DAYNAME" | "MONTHNAME" => (vc(9), true),
                    "LAST_DAY" => (DataType::Date, true),
                    _ => (big, true),
                },
                Func::FromUnixtime if args.len() == 1 => (DataType::DateTime { fsp: 0 }, true),
                Func::Unhex => (DataType::VarBinary { len: 65535 }, true),
                Func::Uuid => (vc(36), false),
                Func::StrToDate => (DataType::DateTime { fsp: 6 }, true),
                Func::Round | Func::Truncate => (round_type(first.0, args.get(1)), true),
                Func::Ceil | Func::Floor => (
                    match first.0 {
                        // No digits after the point remain.
                        DataType::Decimal { precision, scale } => DataType::Decimal {
                            precision: precision.saturating_sub(scale).saturating_add(1),
                            scale: 0,
                        },
                        t if t.is_string() => DataType::Double,
                        t => t,
                    },
                    true,
                ),
                // MOD(a, b) is a % b, and typed so.
                Func::Mod if args.len() == 2 => infer(
                    &BExpr::Binary(
                        BinaryOp::Modulo,
                        Box::new(args[0].clone()),
                        Box::new(args[1].clone()),
                    ),
                    types,
                ),
                Func::Abs | Func::Mod => (
                    if first.0.is_string() {
                        DataType::Double
                    } else {
                        first.0
                    },
                    true,
                ),
                Func::Greatest | Func::Least | Func::Coalesce | Func::IfNull => {
                    (merge_types(args.iter().map(|a| infer(a, types))), true)
                }
                Func::NullIf => (first.0, true),
                Func::If => (
                    merge_types(args.iter().skip(1).map(|a| infer(a, types))),
                    true,
                ),
                Func::Rand
                | Func::Sqrt
                | Func::Pow
                | Func::Exp
                | Func::Ln
                | Func::Log
                | Func::Log2
                | Func::Log10 => (DataType::Double, true),
                _ => (vc(255), true),
            }
        }
        BExpr::Case {
            branches,
            else_result,
            ..
        } => {
            let all = branches
                .iter()
                .map(|(_, t)| infer(t, types))
                .chain(else_result.iter().map(|e| infer(e, types)));
            (merge_types(all), true)
        }
        BExpr::Cast(x, ast::CastType::Binary) if matches!(**x, BExpr::Literal(Value::Bytes(_))) => {
            let len = match &**x {
                BExpr::Literal(Value::Bytes(b)) => b.len(),
                _ => 0,
            };
            (
                DataType::VarBinary {
                    len: u32::try_from(len).unwrap_or(u32::MAX),
                },
                false,
            )
        }
        BExpr::Cast(_, to) => (
            match to {
                ast::CastType::Signed => big,
                ast::CastType::Unsigned => DataType::BigInt { unsigned: true },
                ast::CastType::Char => vc(255),
                ast::CastType::Binary => DataType::VarBinary { len: 255 },
                ast::CastType::Decimal { precision, scale } => DataType::Decimal {
                    precision: *precision,
                    scale: *scale,
                },
                ast::CastType::Double => DataType::Double,
                ast::CastType::Date => DataType::Date,
                ast::CastType::DateTime { fsp } => DataType::DateTime { fsp: *fsp },
                ast::CastType::Time { fsp } => DataType::Time { fsp: *fsp },
                ast::CastType::Json => DataType::Json,
            },
            true,
        ),
        BExpr::Row(_) | BExpr::Default => (vc(255), true),
    }
}

/// ROUND / TRUNCATE's type (MySQL's): DOUBLE for text, the argument's
/// integer type, and for DECIMAL as many digits after the point as a
/// constant place count asks for (0 to 30).
fn round_type(arg: DataType, places: Option<&BExpr>) -> DataType {
    match arg {
        DataType::Decimal { precision, scale } => {
            let Some(p) = places.map_or(Some(0), const_int) else {
                return arg;
            };
            let new = p.clamp(0, 30) as u8;
            // One more integer digit: 9.9 rounds to 10.
            let int_digits = precision.saturating_sub(scale).saturating_add(1);
            DataType::Decimal {
                precision: int_digits.saturating_add(new).min(65),
                scale: new,
            }
        }
        t if t.is_string() => DataType::Double,
        t => t,
    }
}

/// The value of an integer constant (a literal, or a negated one).
fn const_int(e: &BExpr) -> Option<i64> {
    match e {
        BExpr::Literal(Value::Int(i)) => Some(*i),
        BExpr::Literal(Value::UInt(u)) => Some(i64::try_from(*u).unwrap_or(i64::MAX)),
        BExpr::Unary(ast::UnaryOp::Minus, x) => const_int(x).map(|i| i.saturating_neg()),
        _ => None,
    }
}

/// The type of a result that may come from any of several expressions
/// (CASE, IF, COALESCE...): NULLs don't count; integers stay integers,
/// numbers widen to DECIMAL or DOUBLE, anything else becomes a string.
pub fn merge_types(types: impl Iterator<Item = (DataType, bool)>) -> DataType {
    let mut out: Option<DataType> = None;
    for (t, _) in types {
        if t == DataType::Null {
            continue;
        }
        out = Some(match out {
            None => t,
            Some(o) if o == t => o,
            Some(o) if o.is_integer() && t.is_integer() => DataType::BigInt {
                unsigned: o.is_unsigned() && t.is_unsigned(),
            },
            Some(o) if is_numeric_type(o) && is_numeric_type(t) => {
                if matches!(o, DataType::Double | DataType::Float)
                    || matches!(t, DataType::Double | DataType::Float)
                {
                    DataType::Double
                } else {
                    DataType::Decimal {
                        precision: 65,
                        scale: 10,
                    }
                }
            }
            Some(o) if o.is_string() && t.is_string() => DataType::VarChar {
                len: o
                    .max_bytes()
                    .unwrap_or(255)
                    .max(t.max_bytes().unwrap_or(255)),
            },
            Some(_) => DataType::VarChar { len: 255 },
        });
    }
    out.unwrap_or(DataType::Null)
}

pub fn literal_type(v: &Value) -> (DataType, bool) {
    match v {
        Value::Null => (DataType::Null, true),
        Value::Int(_) => (DataType::BigInt { unsigned: false }, false),
        Value::UInt(_) => (DataType::BigInt { unsigned: true }, false),
        Value::Double(_) => (DataType::Double, false),
        Value::Decimal(d) => (
            DataType::Decimal {
                precision: (d.to_string().len() as u8).min(65),
                scale: d.scale() as u8,
            },
            false,
        ),
        Value::Bytes(b) => (
            DataType::VarChar {
                len: (b.len() as u32).max(1),
            },
            false,
        ),
        Value::Date(_) => (DataType::Date, false),
        // A bound DATETIME keeps its fraction.
        Value::DateTime(dt) => (
            DataType::DateTime {
                fsp: if dt.micro == 0 { 0 } else { 6 },
            },
            false,
        ),
    }
}

/// Column type of a stored value for result metadata checks.
fn is_numeric_type(t: DataType) -> bool {
    t.is_integer()
        || matches!(
            t,
            DataType::Decimal { .. } | DataType::Float | DataType::Double
        )
}

/// The type of `date + INTERVAL n unit`: a DATE stays a DATE for whole
/// days, weeks, months and years; a time unit makes it a DATETIME.
fn date_add_type(date: DataType, unit: Option<&BExpr>) -> DataType {
    let whole_days = matches!(
        unit,
        Some(BExpr::Literal(Value::Bytes(u)))
            if matches!(
                String::from_utf8_lossy(u).to_ascii_uppercase().as_str(),
                "DAY" | "WEEK" | "MONTH" | "QUARTER" | "YEAR"
            )
    );
    match date {
        DataType::Date if whole_days => DataType::Date,
        DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => {
            DataType::DateTime { fsp: 0 }
        }
        _ => DataType::VarChar { len: 29 },
    }
}
