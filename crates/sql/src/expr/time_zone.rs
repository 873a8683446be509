//! Session time zones. SET time_zone takes what MySQL accepts without
//! time zone tables (lockstep has none): 'SYSTEM' and UTC offsets
//! '[+|-]h:mm' from -13:59 to +14:00. Anything else, named zones
//! included, is 1298 as in MySQL. Offsets are stored as MySQL shows them
//! ('+05:00'); a session starts with the global value and a connection
//! reset returns to it.
//!
//! lockstep's clock and system zone are UTC, and TIMESTAMP columns hold
//! UTC. The session's offset (`SessionCtx::tz_offset`, refreshed when
//! time_zone is set or reset) is applied at two boundaries only: a
//! TIMESTAMP value is converted to UTC, and checked against the type's
//! range of instants, where a column stores it (`Exec::stored_form`,
//! which `store_column`, CURRENT_TIMESTAMP defaults and generated
//! columns go through), and back to the session zone where an expression
//! reads the column (the binder wraps each base-table TIMESTAMP column
//! in `Func::FromUtc`; the planner sees through it, as the order of
//! instants is the same in any fixed zone). Index keys on TIMESTAMP
//! columns are UTC, so key bounds computed from session values are
//! converted too (`Exec::key_bounds`). Rows themselves, and so the
//! engine, the binlog (TIMESTAMP2 carries UTC seconds, as MySQL's does),
//! replication and its appliers, only ever see UTC. NOW() and the other
//! clock functions, FROM_UNIXTIME and UNIX_TIMESTAMP(dt) read the session
//! zone; the UTC_ functions do not.
//! Triggers see NEW and OLD in the session zone (`exec::trigger`).
//!
//! A constant DEFAULT of a TIMESTAMP column is kept in UTC too, as MySQL
//! keeps it: read in the zone of the CREATE / ALTER that sets it
//! (`default_to_utc`), shown and used in the zone of the session that
//! reads it (`default_in_zone`, and `Func::FromUtc` where the binder puts
//! it into a row).
//! ALTER TABLE MODIFY between TIMESTAMP and DATETIME moves the values
//! through the session zone (`ColumnSource::Shifted`, session/alter.rs).

use lockstep_tables::ColumnDef;
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

/// Sets a TIMESTAMP column's constant default, given in the zone `offset`
/// seconds east, to the UTC the catalog keeps.
pub fn default_to_utc(c: &mut ColumnDef, offset: i64) {
    if let Some(v) = c.default.take() {
        c.default = Some(crate::expr::to_utc(v, c.data_type, offset));
    }
}

/// A column's constant default in the zone `offset` seconds east.
pub fn default_in_zone(c: &ColumnDef, offset: i64) -> Option<Value> {
    let v = c.default.clone()?;
    Some(match c.data_type {
        DataType::Timestamp { .. } => crate::expr::from_utc(v, offset),
        _ => v,
    })
}

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
        Some(m) => Ok(Value::str(&format_offset(m))),
    }
}

/// Seconds east of UTC of a zone as SET time_zone or CONVERT_TZ names
/// it ('SYSTEM' is UTC); None for a name lockstep does not know.
pub fn zone_seconds(name: &str) -> Option<i64> {
    if name.eq_ignore_ascii_case("SYSTEM") {
        return Some(0);
    }
    offset_minutes(name).map(|m| m as i64 * 60)
}

/// The offset of a stored time_zone value (`canonical` made it).
pub fn offset_seconds(stored: &Value) -> i64 {
    let s = stored.to_string();
    let secs = zone_seconds(&s);
    debug_assert!(secs.is_some(), "time_zone holds a canonical value: {s}");
    secs.unwrap_or(0)
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
    fn offsets_are_stored_as_mysql_shows_them() {
        for (given, stored, secs) in [
            ("+05:00", "+05:00", 18000),
            ("+5:30", "+05:30", 19800),
            ("-13:59", "-13:59", -50340),
            ("+14:00", "+14:00", 50400),
            ("-00:30", "-00:30", -1800),
        ] {
            let v = canonical(&Value::str(given)).expect(given);
            assert_eq!(v, Value::str(stored), "{given}");
            assert_eq!(offset_seconds(&v), secs, "{given}");
        }
        assert_eq!(zone_seconds("system"), Some(0));
        assert_eq!(zone_seconds("Europe/Paris"), None);
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
