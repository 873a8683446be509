//! Result metadata of `SELECT @v`: MySQL types a user variable's column
//! after the value it holds when the statement is bound (an integer is a
//! BIGINT, a decimal a DECIMAL, a float a DOUBLE), not as a string.

use lockstep_types::{DataType, Value};
use std::collections::HashMap;

/// The column type of `@name`, when its value has a numeric type;
/// `None` leaves the default (a string) for text, NULL and unset ones.
pub fn of(vars: Option<&HashMap<String, Value>>, name: &str) -> Option<(DataType, bool)> {
    let t = match vars?.get(name)? {
        Value::Int(_) => DataType::BigInt { unsigned: false },
        Value::UInt(_) => DataType::BigInt { unsigned: true },
        Value::Double(_) => DataType::Double,
        Value::Decimal(d) => DataType::Decimal {
            precision: 65,
            scale: (d.scale() as u8).min(30),
        },
        _ => return None,
    };
    // A variable can be set to NULL later in the statement: nullable.
    Some((t, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_variables_keep_their_type() {
        let mut vars = HashMap::new();
        vars.insert("i".to_string(), Value::Int(2));
        vars.insert("s".to_string(), Value::str("2"));
        let big = DataType::BigInt { unsigned: false };
        assert_eq!(of(Some(&vars), "i"), Some((big, true)));
        assert_eq!(of(Some(&vars), "s"), None);
        assert_eq!(of(Some(&vars), "unset"), None);
        assert_eq!(of(None, "i"), None);
    }
}
