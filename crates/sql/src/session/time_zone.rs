//! SET time_zone: the values MySQL accepts without time zone tables
//! (lockstep has none): 'SYSTEM' and UTC offsets '[+|-]h:mm' from -13:59
//! to +14:00. Anything else, named zones included, is 1298 as in MySQL.
//! Offsets are stored as MySQL shows them ('+05:00').
//!
//! lockstep's clock and TIMESTAMP values are UTC, and nothing converts
//! them to another zone yet, so an offset other than zero is refused
//! (1235) rather than accepted and ignored.

use lockstep_types::error::Code;
use lockstep_types::{Error, Value};

fn unknown(shown: &str) -> Error {
    Error::new(
        Code::UnknownTimeZone,
        format!("Unknown or incorrect time zone: '{shown}'"),
    )
}

/// The stored form of a value given to SET time_zone.
pub fn canonical(v: &Value) -> Result<Value, Error> {
    let shown = v.to_string();
    if shown.eq_ignore_ascii_case("SYSTEM") {
        return Ok(Value::str("SYSTEM"));
    }
    match offset_minutes(&shown) {
        None => Err(unknown(&shown)),
        Some(0) => Ok(Value::str(&format_offset(0))),
        Some(_) => Err(Error::unsupported(
            "time_zone other than UTC (SYSTEM or +00:00): TIMESTAMP values are not converted",
        )),
    }
}

/// '[+|-]h:mm' as minutes east of UTC, in MySQL's range.
fn offset_minutes(s: &str) -> Option<i32> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    let digits = |x: &str, max: usize| {
        (!x.is_empty() && x.len() <= max && x.bytes().all(|b| b.is_ascii_digit()))
            .then(|| x.parse::<i32>().ok())
            .flatten()
    };
    let (h, m) = (digits(h, 2)?, digits(m, 2)?);
    if m > 59 {
        return None;
    }
    let total = sign * (h * 60 + m);
    (-(13 * 60 + 59)..=14 * 60)
        .contains(&total)
        .then_some(total)
}

fn format_offset(minutes: i32) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_offsets_and_system_are_accepted() {
        for (given, stored) in [
            ("SYSTEM", "SYSTEM"),
            ("system", "SYSTEM"),
            ("+00:00", "+00:00"),
            ("-0:00", "+00:00"),
        ] {
            assert_eq!(
                canonical(&Value::str(given)).ok(),
                Some(Value::str(stored)),
                "{given}"
            );
        }
    }

    #[test]
    fn other_offsets_are_refused_until_timestamps_convert() {
        for given in ["+05:00", "+5:00", "-13:59", "+14:00", "-00:30"] {
            let e = canonical(&Value::str(given)).expect_err(given);
            assert_eq!(e.code, Code::NotSupportedYet, "{given}");
        }
    }

    #[test]
    fn names_and_bad_offsets_are_1298() {
        for bad in [
            "UTC",
            "Europe/Paris",
            "+14:01",
            "-14:00",
            "+05:60",
            "05:00",
            "+:00",
            "",
        ] {
            let e = canonical(&Value::str(bad)).expect_err(bad);
            assert_eq!(e.code, Code::UnknownTimeZone, "{bad}");
        }
    }
}
