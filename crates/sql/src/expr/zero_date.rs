//! Zero dates under sql_mode, as MySQL: the zero date ('0000-00-00') and
//! dates with a month or day of 0 ('2024-00-10', a zero in the date).
//! NO_ZERO_DATE refuses the first and NO_ZERO_IN_DATE the second where a
//! column stores them (an error in strict mode; else a warning, the zero
//! date kept with 1264 and a zero in a date stored as the zero date with
//! 1265) and where CAST makes them (NULL with warning 1292). Without those
//! modes both are stored, returned and compared as they are.

use super::lenient::Warning;
use super::Env;
use lockstep_types::error::Code;
use lockstep_types::{DataType, DateTime, Error, Value};

/// The date rules of the session's sql_mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateMode {
    pub no_zero_date: bool,
    pub no_zero_in_date: bool,
    /// TIME_TRUNCATE_FRACTIONAL: extra fractional digits are dropped,
    /// not rounded.
    pub truncate_fraction: bool,
}

impl Default for DateMode {
    /// MySQL 8's default sql_mode has both.
    fn default() -> Self {
        DateMode {
            no_zero_date: true,
            no_zero_in_date: true,
            truncate_fraction: false,
        }
    }
}

/// DATE, DATETIME or TIMESTAMP.
pub fn is_date_type(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. }
    )
}

/// The zero date as a column of type `ty` holds it.
pub fn zero(ty: DataType) -> Value {
    stored(DateTime::default(), ty)
}

/// The date `v` stands for, a month or day of 0 allowed.
fn read(v: &Value) -> Option<DateTime> {
    match v {
        Value::Bytes(b) => DateTime::parse_with_zero_parts(std::str::from_utf8(b).ok()?),
        other => super::to_datetime(other),
    }
}

/// Whether `dt` is the zero date for a value of `ty` (a DATE looks at its
/// date only).
fn is_zero(dt: &DateTime, ty: DataType) -> bool {
    match ty {
        DataType::Date => dt.date.is_zero(),
        _ => dt.is_zero(),
    }
}

/// `dt` as a column of type `ty` holds it.
fn stored(dt: DateTime, ty: DataType) -> Value {
    match ty {
        DataType::DateTime { fsp } | DataType::Timestamp { fsp } => Value::DateTime(dt.round(fsp)),
        _ => Value::Date(dt.date),
    }
}

/// Under TIME_TRUNCATE_FRACTIONAL: `v`, about to be stored or cast as
/// `ty` (DATETIME, TIMESTAMP or TIME), with its fractional digits past
/// the type's cut off, so that the rounding that follows keeps it.
pub fn cut_fraction(v: Value, ty: DataType) -> Value {
    // Text is read without rounding its digits past the sixth either.
    let text = match &v {
        Value::Bytes(b) => std::str::from_utf8(b).ok(),
        _ => None,
    };
    match (ty, &v) {
        (DataType::DateTime { fsp } | DataType::Timestamp { fsp }, _) => {
            let dt = match text {
                Some(s) => DateTime::parse_truncating(s),
                None => read(&v).filter(|_| matches!(v, Value::DateTime(_))),
            };
            dt.map_or(v, |dt| Value::DateTime(dt.truncate(fsp)))
        }
        (DataType::Time { fsp }, Value::Bytes(_)) => {
            match text.and_then(lockstep_types::Time::parse_truncating) {
                Some(t) => Value::Bytes(t.truncate(fsp).format(6).into_bytes()),
                None => v,
            }
        }
        _ => v,
    }
}

/// 1292 for a value a DATE, DATETIME or TIMESTAMP column refuses.
pub fn incorrect(v: &Value, ty: DataType, column: &str) -> Error {
    let word = match ty {
        DataType::Date => "date",
        _ => "datetime",
    };
    Error::new(
        Code::TruncatedWrongValue,
        format!("Incorrect {word} value: '{v}' for column '{column}' at row 1"),
    )
}

/// Storing `v` in column `column` of type `ty` (DATE, DATETIME or
/// TIMESTAMP) under `mode`: None when no zero-date rule applies (the value
/// is stored as any other), else what is stored and its warning, or the
/// error strict mode gives. A TIMESTAMP never holds a zero in a date.
pub fn store(
    v: &Value,
    ty: DataType,
    column: &str,
    mode: DateMode,
    strict: bool,
) -> Result<Option<(Value, Option<Warning>)>, Error> {
    let Some(dt) = read(v) else {
        return Ok(None);
    };
    let timestamp = matches!(ty, DataType::Timestamp { .. });
    let zero_part = dt.date.has_zero_part();
    let (kept, warning) = if zero_part && (mode.no_zero_in_date || timestamp) {
        let truncated = format!("Data truncated for column '{column}' at row 1");
        (DateTime::default(), (1265, truncated))
    } else if is_zero(&dt, ty) && mode.no_zero_date {
        let range = format!("Out of range value for column '{column}' at row 1");
        (dt, (Code::WarnDataOutOfRange.number(), range))
    } else if zero_part {
        return Ok(Some((stored(dt, ty), None)));
    } else {
        return Ok(None);
    };
    if strict {
        return Err(incorrect(v, ty, column));
    }
    Ok(Some((stored(kept, ty), Some(warning))))
}

/// CAST(v AS DATE / DATETIME(fsp)) (`ty` says which) under the session's
/// zero-date rules: NULL with warning 1292 for text that is no date and
/// for a zero date or zero in a date the sql_mode refuses.
pub fn cast(v: &Value, ty: DataType, env: &mut dyn Env) -> Result<Value, Error> {
    let mode = env.dates();
    let cut;
    let v = match mode.truncate_fraction {
        true => {
            cut = cut_fraction(v.clone(), ty);
            &cut
        }
        false => v,
    };
    let refused = |dt: &DateTime| {
        (dt.date.has_zero_part() && mode.no_zero_in_date) || (is_zero(dt, ty) && mode.no_zero_date)
    };
    match read(v) {
        Some(dt) if !refused(&dt) => Ok(stored(dt, ty)),
        // Only text says why it is no date (a number is read elsewhere).
        None if !matches!(v, Value::Bytes(_)) => Ok(Value::Null),
        _ => {
            env.warn(Error::new(
                Code::TruncatedWrongValue,
                format!("Incorrect datetime value: '{v}'"),
            ))?;
            Ok(Value::Null)
        }
    }
}

/// A DATE or TIMESTAMP literal (`DATE '0000-00-00'`: the parser gives
/// its value, not text) that the sql_mode refuses: 1525, as in MySQL,
/// where CAST of the same text is NULL with a warning.
pub fn check_literal(v: &Value, mode: DateMode) -> Result<(), Error> {
    let (dt, word) = match v {
        Value::Date(d) => (
            DateTime {
                date: *d,
                ..DateTime::default()
            },
            "DATE",
        ),
        Value::DateTime(dt) => (*dt, "DATETIME"),
        _ => return Ok(()),
    };
    let refused = (dt.date.is_zero() && mode.no_zero_date)
        || (dt.date.has_zero_part() && mode.no_zero_in_date);
    match refused {
        true => Err(Error::new(
            Code::WrongValue,
            format!("Incorrect {word} value: '{v}'"),
        )),
        false => Ok(()),
    }
}
