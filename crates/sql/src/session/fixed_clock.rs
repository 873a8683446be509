//! `SET timestamp = N`: the session's clock fixed at N seconds since the
//! epoch (microseconds allowed), as replication and tests use it. NOW(),
//! CURRENT_TIMESTAMP, CURDATE(), UTC_TIMESTAMP(), UNIX_TIMESTAMP() and
//! DEFAULT CURRENT_TIMESTAMP read it; SYSDATE() does not. 0 or DEFAULT lets
//! the clock run again. `@@timestamp` is the statement's clock either way.

use crate::exec::SessionCtx;
use lockstep_types::error::Code;
use lockstep_types::{DateTime, Decimal, Error, Value};

/// MySQL 8's largest timestamp (3001-01-18 23:59:59.999999 UTC).
const MAX_MICROS: i128 = 32_536_771_199_999_999;

/// @@timestamp: the clock the statement reads, in seconds with six digits
/// after the point.
pub fn value(ctx: &SessionCtx) -> Value {
    let micros = ctx.clock().to_unix_micros() as i128;
    Value::Decimal(Decimal::from_i128_with_scale(micros, 6))
}

/// SET timestamp = `v` (`default`: = DEFAULT).
pub fn set(ctx: &mut SessionCtx, v: &Value, default: bool) -> Result<(), Error> {
    if default {
        ctx.fixed_now = None;
        return Ok(());
    }
    let micros = micros_of(v)?;
    if micros == 0 {
        ctx.fixed_now = None;
        return Ok(());
    }
    if !(1_000_000..=MAX_MICROS).contains(&micros) {
        return Err(Error::new(
            Code::WrongValueForVar,
            format!("Variable 'timestamp' can't be set to the value of '{v}'"),
        ));
    }
    ctx.fixed_now = Some(DateTime::from_unix_micros(micros as i64));
    Ok(())
}

/// A number of seconds as microseconds, rounded; 1232 for text and NULL.
fn micros_of(v: &Value) -> Result<i128, Error> {
    let wrong_type = || {
        Error::new(
            Code::WrongTypeForVar,
            "Incorrect argument type to variable 'timestamp'",
        )
    };
    let secs = match v {
        Value::Int(n) => Decimal::from_i128_with_scale(*n as i128, 0),
        Value::UInt(n) => Decimal::from_i128_with_scale(*n as i128, 0),
        Value::Decimal(d) => *d,
        Value::Double(f) => Decimal::from_f64(*f).ok_or_else(wrong_type)?,
        _ => return Err(wrong_type()),
    };
    let million = Decimal::from_i128_with_scale(1_000_000, 0);
    let micros = secs.checked_mul(million).map(Decimal::round);
    // Out of the decimal range is out of the variable's range too.
    Ok(micros.and_then(|m| m.to_i128()).unwrap_or(i128::MAX))
}
