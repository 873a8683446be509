//! sql_mode values as MySQL 8 stores them: each mode checked against the
//! known names (1231 otherwise), the combination modes ANSI and
//! TRADITIONAL expanded, and the list written in MySQL's fixed order.

use lockstep_types::error::Code;
use lockstep_types::{Error, Value};

/// Every mode MySQL 8 knows, in the order it lists them (its bit order).
const MODES: [&str; 22] = [
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "NOT_USED",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "TIME_TRUNCATE_FRACTIONAL",
];

/// Each mode's bit in MySQL's numeric form of sql_mode (bits 8-17 and 28
/// are unused).
const BITS: [u32; 22] = [
    0, 1, 2, 3, 4, 5, 6, 7, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 29, 30, 31, 32,
];

/// The modes a combination mode also turns on.
fn implied(mode: &str) -> &'static [&'static str] {
    match mode {
        "ANSI" => &[
            "REAL_AS_FLOAT",
            "PIPES_AS_CONCAT",
            "ANSI_QUOTES",
            "IGNORE_SPACE",
            "ONLY_FULL_GROUP_BY",
        ],
        "TRADITIONAL" => &[
            "STRICT_TRANS_TABLES",
            "STRICT_ALL_TABLES",
            "NO_ZERO_IN_DATE",
            "NO_ZERO_DATE",
            "ERROR_FOR_DIVISION_BY_ZERO",
            "NO_ENGINE_SUBSTITUTION",
        ],
        _ => &[],
    }
}

fn wrong_value(shown: &str) -> Error {
    Error::new(
        Code::WrongValueForVar,
        format!("Variable 'sql_mode' can't be set to the value of '{shown}'"),
    )
}

/// The stored form of a value given to SET sql_mode: a comma-separated list
/// of names (any case; empty items ignored) or MySQL's bit mask.
pub fn canonical(v: &Value) -> Result<Value, Error> {
    let mut on = [false; MODES.len()];
    let set = |name: &str, on: &mut [bool; MODES.len()]| {
        if let Some(i) = MODES.iter().position(|m| *m == name) {
            on[i] = true;
        }
    };
    match v {
        Value::Int(_) | Value::UInt(_) => {
            let mut bits = v.to_i64().unwrap_or(-1);
            if bits < 0 {
                return Err(wrong_value(&v.to_string()));
            }
            for (m, bit) in MODES.iter().zip(BITS) {
                if bits & (1 << bit) != 0 {
                    set(m, &mut on);
                    bits &= !(1 << bit);
                }
            }
            // A bit no mode has.
            if bits != 0 {
                return Err(wrong_value(&v.to_string()));
            }
        }
        Value::Bytes(b) => {
            let text = String::from_utf8_lossy(b);
            for item in text.split(',').filter(|s| !s.is_empty()) {
                let name = item.to_ascii_uppercase();
                if !MODES.contains(&name.as_str()) {
                    return Err(wrong_value(item));
                }
                set(&name, &mut on);
            }
        }
        other => return Err(wrong_value(&other.to_string())),
    }
    for (i, m) in MODES.iter().enumerate() {
        if on[i] {
            for extra in implied(m) {
                set(extra, &mut on);
            }
        }
    }
    let names: Vec<&str> = MODES
        .iter()
        .zip(on)
        .filter(|(_, o)| *o)
        .map(|(m, _)| *m)
        .collect();
    Ok(Value::str(&names.join(",")))
}

/// Whether the stored sql_mode `mode` has `name` (upper case).
pub fn has(mode: &Value, name: &str) -> bool {
    match mode {
        Value::Bytes(m) => m
            .split(|&c| c == b',')
            .any(|x| x.trim_ascii().eq_ignore_ascii_case(name.as_bytes())),
        _ => false,
    }
}
