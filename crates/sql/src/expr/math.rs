//! Numeric functions beyond the core set in mod.rs: PI and trigonometry,
//! DEGREES/RADIANS, BIT_COUNT, INTERVAL, ISNULL, and the identifier
//! helpers UUID_SHORT, UUID_TO_BIN, BIN_TO_UUID, IS_UUID and RANDOM_BYTES,
//! as MySQL 8 computes them (a domain error is NULL; COT(0) is 1690).

use super::{
    call_text, count_arg, divide, finite, logarithm, out_of_range, rand_f64, round_value, text,
    BExpr, Env, Func,
};
use crate::parser::BinaryOp;
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};
use std::cmp::Ordering as CmpOrdering;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    Pi,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    Atan,
    Atan2,
    Degrees,
    Radians,
    BitCount,
    Interval,
    IsNull,
    UuidShort,
    UuidToBin,
    BinToUuid,
    IsUuid,
    RandomBytes,
}

impl MathFn {
    pub fn lookup(name: &str) -> Option<MathFn> {
        use MathFn::*;
        Some(match name {
            "PI" => Pi,
            "SIN" => Sin,
            "COS" => Cos,
            "TAN" => Tan,
            "COT" => Cot,
            "ASIN" => Asin,
            "ACOS" => Acos,
            "ATAN" => Atan,
            "ATAN2" => Atan2,
            "DEGREES" => Degrees,
            "RADIANS" => Radians,
            "BIT_COUNT" => BitCount,
            "INTERVAL" => Interval,
            "ISNULL" => IsNull,
            "UUID_SHORT" => UuidShort,
            "UUID_TO_BIN" => UuidToBin,
            "BIN_TO_UUID" => BinToUuid,
            "IS_UUID" => IsUuid,
            "RANDOM_BYTES" => RandomBytes,
            _ => return None,
        })
    }

    pub fn arity(self) -> (usize, usize) {
        use MathFn::*;
        match self {
            Pi | UuidShort => (0, 0),
            Atan | UuidToBin | BinToUuid => (1, 2),
            Atan2 => (2, 2),
            Interval => (2, usize::MAX),
            _ => (1, 1),
        }
    }

    /// Whether each call may give a different value (never folded or
    /// hoisted).
    pub fn volatile(self) -> bool {
        matches!(self, MathFn::UuidShort | MathFn::RandomBytes)
    }

    pub fn result_type(self) -> DataType {
        use MathFn::*;
        match self {
            BitCount | Interval | IsNull | IsUuid => DataType::BigInt { unsigned: false },
            UuidShort => DataType::BigInt { unsigned: true },
            UuidToBin => DataType::VarBinary { len: 16 },
            RandomBytes => DataType::VarBinary { len: 1024 },
            BinToUuid => DataType::VarChar { len: 36 },
            _ => DataType::Double,
        }
    }
}

pub fn eval_math(
    f: MathFn,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    use MathFn::*;
    let vals = super::eval_args(args, row, env)?;
    match f {
        Pi => return Ok(Value::Double(std::f64::consts::PI)),
        UuidShort => return Ok(Value::UInt(uuid_short())),
        IsNull => return Ok(Value::Int(vals[0].is_null() as i64)),
        Interval => return Ok(Value::Int(interval(&vals))),
        _ if vals.iter().any(Value::is_null) => return Ok(Value::Null),
        _ => {}
    }
    let x = vals[0].to_f64().unwrap_or(0.0);
    let real = |r: f64| {
        if r.is_finite() {
            Value::Double(r)
        } else {
            Value::Null
        }
    };
    Ok(match f {
        Sin => real(x.sin()),
        Cos => real(x.cos()),
        Tan => real(x.tan()),
        Cot => {
            let t = x.tan();
            if t == 0.0 {
                return Err(Error::new(
                    Code::DataOutOfRange,
                    format!("DOUBLE value is out of range in 'cot({})'", vals[0]),
                ));
            }
            real(1.0 / t)
        }
        Asin => real(x.asin()),
        Acos => real(x.acos()),
        Atan if vals.len() == 2 => real(x.atan2(vals[1].to_f64().unwrap_or(0.0))),
        Atan => real(x.atan()),
        Atan2 => real(x.atan2(vals[1].to_f64().unwrap_or(0.0))),
        Degrees => real(x.to_degrees()),
        Radians => real(x.to_radians()),
        BitCount => Value::Int(unsigned_arg(&vals[0]).count_ones() as i64),
        UuidToBin => uuid_to_bin(&vals)?,
        BinToUuid => bin_to_uuid(&vals)?,
        IsUuid => Value::Int(parse_uuid(&text(&vals[0])).is_some() as i64),
        RandomBytes => random_bytes(&vals[0])?,
        Pi | UuidShort | IsNull | Interval => unreachable!("handled above"),
    })
}

/// An argument as a 64-bit pattern: a negative number in two's complement,
/// one past 2^64 saturated.
fn unsigned_arg(v: &Value) -> u64 {
    match v {
        Value::UInt(u) => *u,
        Value::Int(i) => *i as u64,
        _ if v.to_f64().unwrap_or(0.0) >= u64::MAX as f64 => u64::MAX,
        _ => super::count_arg(v) as u64,
    }
}

/// INTERVAL(n, n1, n2, ...): how many of the (ascending) n1.. are <= n;
/// -1 when n is NULL.
fn interval(vals: &[Value]) -> i64 {
    let Some(n) = vals[0].to_f64().filter(|_| !vals[0].is_null()) else {
        return -1;
    };
    vals[1..]
        .iter()
        .position(|v| !v.is_null() && v.to_f64().unwrap_or(0.0) > n)
        .unwrap_or(vals.len() - 1) as i64
}

/// UUID_SHORT: server id (0) in the top byte, the start time in seconds,
/// and a counter, as MySQL builds it.
fn uuid_short() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let _ = NEXT.compare_exchange(
        0,
        ((lockstep_types::DateTime::now().to_unix_micros() / 1_000_000) as u64) << 24,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    NEXT.fetch_add(1, Ordering::Relaxed) & 0x00FF_FFFF_FFFF_FFFF
}

/// The 16 bytes of a UUID written as 32 hex digits, optionally with the
/// usual dashes and/or braces.
fn parse_uuid(s: &[u8]) -> Option<[u8; 16]> {
    let s = std::str::from_utf8(s).ok()?;
    let inner = match s.strip_prefix('{') {
        Some(rest) => rest.strip_suffix('}')?,
        None => s,
    };
    let hex: String = if inner.len() == 36 {
        let b = inner.as_bytes();
        if [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
            return None;
        }
        inner.chars().filter(|c| *c != '-').collect()
    } else if inner.len() == 32 && inner.len() == s.len() {
        inner.to_string()
    } else {
        return None;
    };
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn wrong_uuid(v: &Value, func: &str) -> Error {
    Error::new(
        Code::WrongValueForType,
        format!(
            "Incorrect string value: '{}' for function {func}",
            String::from_utf8_lossy(&text(v))
        ),
    )
}

/// With the swap flag the time-high group moves to the front (index order).
fn swap_groups(b: [u8; 16], to_bin: bool) -> [u8; 16] {
    let mut out = b;
    if to_bin {
        out[..2].copy_from_slice(&b[6..8]);
        out[2..4].copy_from_slice(&b[4..6]);
        out[4..8].copy_from_slice(&b[..4]);
    } else {
        out[..4].copy_from_slice(&b[4..8]);
        out[4..6].copy_from_slice(&b[2..4]);
        out[6..8].copy_from_slice(&b[..2]);
    }
    out
}

fn uuid_to_bin(vals: &[Value]) -> Result<Value, Error> {
    let b = parse_uuid(&text(&vals[0])).ok_or_else(|| wrong_uuid(&vals[0], "uuid_to_bin"))?;
    let swap = vals.get(1).and_then(Value::truth) == Some(true);
    Ok(Value::Bytes(
        if swap { swap_groups(b, true) } else { b }.to_vec(),
    ))
}

fn bin_to_uuid(vals: &[Value]) -> Result<Value, Error> {
    let raw = text(&vals[0]);
    let b: [u8; 16] = raw
        .as_slice()
        .try_into()
        .map_err(|_| wrong_uuid(&vals[0], "bin_to_uuid"))?;
    let swap = vals.get(1).and_then(Value::truth) == Some(true);
    let b = if swap { swap_groups(b, false) } else { b };
    let h = super::strings::hex_lower(&b);
    Ok(Value::str(&format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )))
}

/// RANDOM_BYTES(n): n bytes (1..1024) from the operating system.
fn random_bytes(v: &Value) -> Result<Value, Error> {
    let n = super::count_arg(v);
    if !(1..=1024).contains(&n) {
        return Err(Error::new(
            Code::DataOutOfRange,
            "length value is out of range in 'random_bytes'",
        ));
    }
    let mut buf = vec![0u8; n as usize];
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of buf.
        let got =
            unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), buf.len() - filled, 0) };
        if got <= 0 {
            return Err(Error::internal("random source unavailable"));
        }
        filled += got as usize;
    }
    Ok(Value::Bytes(buf))
}

/// The arithmetic functions that are plain `Func` variants (the older set;
/// newer ones are `Func::Math`), over evaluated arguments.
pub(super) fn eval_basic(
    f: Func,
    vals: &[Value],
    env: &mut dyn Env,
) -> Result<Option<Value>, Error> {
    let any_null = vals.iter().any(Value::is_null);
    let n = |i: usize| vals.get(i).map(count_arg).unwrap_or(0);
    Ok(Some(match f {
        Func::Abs => match &vals[0] {
            Value::Int(i) => Value::Int(
                i.checked_abs()
                    .ok_or_else(|| out_of_range("BIGINT", &call_text("abs", vals)))?,
            ),
            Value::Decimal(d) => Value::Decimal(d.abs()),
            Value::UInt(u) => Value::UInt(*u),
            v => Value::Double(v.to_f64().unwrap_or(0.0).abs()),
        },
        Func::Sign => Value::Int(match vals[0].to_f64().unwrap_or(0.0) {
            x if x > 0.0 => 1,
            x if x < 0.0 => -1,
            _ => 0,
        }),
        Func::Ceil | Func::Floor => match &vals[0] {
            Value::Int(_) | Value::UInt(_) => vals[0].clone(),
            Value::Decimal(d) => {
                let r = if f == Func::Ceil { d.ceil() } else { d.floor() };
                // Past BIGINT the result stays DECIMAL, as MySQL types it.
                r.to_i64().map(Value::Int).unwrap_or(Value::Decimal(r))
            }
            v => {
                let x = v.to_f64().unwrap_or(0.0);
                Value::Double(if f == Func::Ceil { x.ceil() } else { x.floor() })
            }
        },
        Func::Round | Func::Truncate => {
            let places = if vals.len() > 1 { n(1) } else { 0 };
            round_value(&vals[0], places, f == Func::Truncate, vals)?
        }
        Func::Mod => divide(BinaryOp::Modulo, vals[0].clone(), vals[1].clone(), env)?,
        Func::Greatest | Func::Least => {
            if any_null {
                return Ok(Some(Value::Null));
            }
            let mut best = vals[0].clone();
            for v in &vals[1..] {
                let o = v.sort_cmp(&best);
                if (f == Func::Greatest && o == CmpOrdering::Greater)
                    || (f == Func::Least && o == CmpOrdering::Less)
                {
                    best = v.clone();
                }
            }
            best
        }
        Func::NullIf => {
            if vals[0].sql_cmp(&vals[1]) == Some(CmpOrdering::Equal) {
                Value::Null
            } else {
                vals[0].clone()
            }
        }
        Func::Rand => Value::Double(rand_f64()),
        Func::Sqrt => {
            let x = vals[0].to_f64().unwrap_or(0.0);
            if x < 0.0 {
                Value::Null
            } else {
                Value::Double(x.sqrt())
            }
        }
        Func::Pow => {
            let (x, y) = (
                vals[0].to_f64().unwrap_or(0.0),
                vals[1].to_f64().unwrap_or(0.0),
            );
            finite(x.powf(y), "pow", vals)?
        }
        Func::Exp => finite(vals[0].to_f64().unwrap_or(0.0).exp(), "exp", vals)?,
        Func::Ln | Func::Log | Func::Log2 | Func::Log10 => logarithm(f, vals, env)?,
        _ => return Ok(None),
    }))
}
