//! Storing a value that does not fit its column outside strict mode
//! (sql_mode without STRICT_TRANS_TABLES / STRICT_ALL_TABLES) or under
//! INSERT / UPDATE IGNORE: as MySQL, the value becomes the nearest one the
//! column holds and the error becomes a warning. A string too long is cut
//! (1265), a number out of range is clipped to the type's limit (1264),
//! text that is not a number keeps its numeric prefix (1265) or is 0
//! (1366), and NULL in a NOT NULL column is the type's implicit default
//! (1048), text that is no date the zero date (1265, `zero_date`).
//! ENUM/SET non-members stay errors: lockstep stores no '' ENUM value.

use super::store_value;
use lockstep_types::error::Code;
use lockstep_types::{DataType, Decimal, Error, Value};

/// A warning as the session keeps it: (code, message).
pub type Warning = (u16, String);

/// `store_value`, adjusting what can be adjusted; the warning says what
/// was changed.
pub fn store_adjusted(
    v: Value,
    ty: DataType,
    column: &str,
) -> Result<(Value, Option<Warning>), Error> {
    let e = match store_value(v.clone(), ty, column) {
        Ok(stored) => return Ok((stored, None)),
        Err(e) => e,
    };
    let Some(adjusted) = adjust(&v, ty, &e) else {
        return Err(e);
    };
    let code = match e.code {
        Code::TruncatedWrongValueForField if !numeric_prefix(&v).is_empty() => 1265,
        Code::DataTooLong | Code::TruncatedWrongValue => 1265,
        c => c.number(),
    };
    let message = match code {
        1265 => format!("Data truncated for column '{column}' at row 1"),
        _ => e.message.clone(),
    };
    // The prefix of a non-number may itself be out of range: clip it.
    let stored = match store_value(adjusted.clone(), ty, column) {
        Ok(s) => s,
        Err(e2) => store_value(adjust(&adjusted, ty, &e2).ok_or(e)?, ty, column)?,
    };
    Ok((stored, Some((code, message))))
}

/// The value `v` becomes in place of error `e`, when MySQL adjusts it.
fn adjust(v: &Value, ty: DataType, e: &Error) -> Option<Value> {
    match e.code {
        Code::DataTooLong if ty.is_string() => {
            let max = ty.max_bytes()? as usize;
            let text = String::from_utf8_lossy(&super::text(v)).into_owned();
            Some(Value::str(&text.chars().take(max).collect::<String>()))
        }
        Code::WarnDataOutOfRange => clip(v, ty),
        Code::TruncatedWrongValue if super::zero_date::is_date_type(ty) => {
            Some(super::zero_date::zero(ty))
        }
        Code::TruncatedWrongValueForField if is_number(ty) => {
            let prefix = numeric_prefix(v);
            Some(Value::str(if prefix.is_empty() { "0" } else { &prefix }))
        }
        _ => None,
    }
}

fn is_number(ty: DataType) -> bool {
    ty.integer_range().is_some()
        || matches!(
            ty,
            DataType::Decimal { .. } | DataType::Float | DataType::Double
        )
}

/// The type's largest value, or its smallest for a negative `v`.
fn clip(v: &Value, ty: DataType) -> Option<Value> {
    let negative = match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).trim_start().starts_with('-'),
        other => other.to_f64().is_some_and(|f| f < 0.0),
    };
    if let Some((min, max)) = ty.integer_range() {
        let n = if negative { min } else { max };
        return Some(match ty.is_unsigned() {
            true => Value::UInt(n as u64),
            false => Value::Int(n as i64),
        });
    }
    let DataType::Decimal { precision, scale } = ty else {
        return None;
    };
    let int_digits = precision.saturating_sub(scale) as usize;
    let text = format!(
        "{}{}.{}",
        if negative { "-" } else { "" },
        if int_digits == 0 {
            "0".to_string()
        } else {
            "9".repeat(int_digits)
        },
        "9".repeat(scale as usize)
    );
    text.parse::<Decimal>().ok().map(Value::Decimal)
}

/// The longest prefix of `v`'s text that reads as a number ('12abc' →
/// '12'; '' when none does).
fn numeric_prefix(v: &Value) -> String {
    let Value::Bytes(b) = v else {
        return String::new();
    };
    let s = String::from_utf8_lossy(b);
    let s = s.trim_start();
    let bytes = s.as_bytes();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'+' | b'-' if i == 0 => {}
            b'0'..=b'9' => {
                seen_digit = true;
                end = i + 1;
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
    }
    if seen_digit {
        s[..end].to_string()
    } else {
        String::new()
    }
}

/// NULL assigned to NOT NULL column of type `ty` outside strict mode:
/// the type's implicit default (0 or ''), None for types whose implicit
/// default lockstep does not store (dates and times, ENUM, SET).
pub fn implicit_default(ty: DataType) -> Option<Value> {
    if is_number(ty) {
        return store_value(Value::Int(0), ty, "").ok();
    }
    match ty {
        DataType::Json => Some(Value::str("null")),
        t if t.is_string() && t.members().is_none() => store_value(Value::str(""), ty, "").ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adjusted(v: Value, ty: DataType) -> (String, Option<u16>) {
        let (v, w) = store_adjusted(v, ty, "c").expect("adjusted");
        (v.to_string(), w.map(|w| w.0))
    }

    #[test]
    fn values_become_the_nearest_the_column_holds() {
        let tiny = DataType::TinyInt { unsigned: false };
        assert_eq!(adjusted(Value::Int(1000), tiny), ("127".into(), Some(1264)));
        assert_eq!(
            adjusted(Value::Int(-1000), tiny),
            ("-128".into(), Some(1264))
        );
        assert_eq!(
            adjusted(Value::str("12abc"), tiny),
            ("12".into(), Some(1265))
        );
        assert_eq!(
            adjusted(Value::str("999abc"), tiny),
            ("127".into(), Some(1265))
        );
        assert_eq!(adjusted(Value::str("abc"), tiny), ("0".into(), Some(1366)));
        assert_eq!(adjusted(Value::Int(5), tiny), ("5".into(), None));
        let vc = DataType::VarChar { len: 3 };
        assert_eq!(
            adjusted(Value::str("abcdef"), vc),
            ("abc".into(), Some(1265))
        );
        let dec = DataType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(
            adjusted(Value::Int(123456), dec),
            ("999.99".into(), Some(1264))
        );
        assert_eq!(
            adjusted(Value::Int(-123456), dec),
            ("-999.99".into(), Some(1264))
        );
    }

    #[test]
    fn text_that_is_no_date_is_the_zero_date() {
        let zero = ("0000-00-00".into(), Some(1265));
        assert_eq!(adjusted(Value::str("nope"), DataType::Date), zero);
        assert!(store_adjusted(Value::str("nope"), DataType::Time { fsp: 0 }, "c").is_err());
    }
}
