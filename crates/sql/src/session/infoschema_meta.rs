//! information_schema columns that drivers' metadata queries read beyond
//! the basic ones (Connector/J's DatabaseMetaData selects them by name):
//! COLUMNS.CHARACTER_OCTET_LENGTH and SRS_ID, STATISTICS' MySQL 8 columns,
//! and the type columns of ROUTINES and PARAMETERS, with MySQL 8's values.
//! They are appended after each table's existing columns.

use crate::parser::ObjectName;
use lockstep_engine::catalog::Catalog;
use lockstep_types::{DataType, Value};

/// Bytes per character of utf8mb4, the only column character set.
const MAX_CHAR_BYTES: u64 = 4;

/// CHARACTER_OCTET_LENGTH: the most bytes a value of `t` takes (strings:
/// characters times 4; TEXT/BLOB and binary strings: their byte limit).
pub(super) fn octet_length(t: DataType) -> Value {
    match t {
        DataType::Char { len } | DataType::VarChar { len } => {
            Value::UInt(len as u64 * MAX_CHAR_BYTES)
        }
        DataType::Enum { .. }
        | DataType::Set { .. }
        | DataType::EnumOf { .. }
        | DataType::SetOf { .. } => t
            .max_bytes()
            .map_or(Value::Null, |n| Value::UInt(n as u64 * MAX_CHAR_BYTES)),
        DataType::Text { max_len } | DataType::Blob { max_len } => Value::UInt(max_len as u64),
        DataType::Binary { len } | DataType::VarBinary { len } => Value::UInt(len as u64),
        _ => Value::Null,
    }
}

/// The COLUMNS columns appended after GENERATION_EXPRESSION.
pub(super) const COLUMNS_EXTRA: [(&str, DataType); 2] = [
    (
        "CHARACTER_OCTET_LENGTH",
        DataType::BigInt { unsigned: true },
    ),
    ("SRS_ID", DataType::Int { unsigned: true }),
];

/// A column's CHARACTER_OCTET_LENGTH and SRS_ID: characters times the
/// longest character of its set (`collation`).
pub(super) fn columns_extra(t: DataType, collation: u16) -> [Value; 2] {
    let octets = match (t, octet_length(t)) {
        (DataType::Char { len } | DataType::VarChar { len }, Value::UInt(_)) => {
            let set = super::charset::of_collation(collation).0;
            Value::UInt(len as u64 * super::wire_charset::maxlen(set) as u64)
        }
        (_, v) => v,
    };
    [octets, Value::Null]
}

const VC: DataType = DataType::VarChar { len: 64 };

/// The STATISTICS columns appended after INDEX_COMMENT.
pub(super) const STATISTICS_EXTRA: [(&str, DataType); 9] = [
    ("INDEX_SCHEMA", VC),
    ("COLLATION", VC),
    ("SUB_PART", DataType::BigInt { unsigned: false }),
    ("PACKED", VC),
    ("NULLABLE", VC),
    ("INDEX_TYPE", VC),
    ("COMMENT", VC),
    ("IS_VISIBLE", VC),
    ("EXPRESSION", VC),
];

/// One index column's STATISTICS extras: ascending B-tree order
/// (COLLATION 'A'); CARDINALITY is among the first columns, from the
/// index statistics.
pub(super) fn statistics_extra(db: &str, nullable: bool) -> Vec<Value> {
    vec![
        Value::str(db),
        Value::str("A"),
        Value::Null,
        Value::Null,
        Value::str(if nullable { "YES" } else { "" }),
        Value::str("BTREE"),
        Value::str(""),
        Value::str("YES"),
        Value::Null,
    ]
}

/// The type columns MySQL 8's ROUTINES and PARAMETERS carry, appended
/// after their existing columns.
pub(super) const TYPE_COLUMNS: [(&str, DataType); 7] = [
    (
        "CHARACTER_MAXIMUM_LENGTH",
        DataType::BigInt { unsigned: false },
    ),
    (
        "CHARACTER_OCTET_LENGTH",
        DataType::BigInt { unsigned: false },
    ),
    ("NUMERIC_PRECISION", DataType::Int { unsigned: true }),
    ("NUMERIC_SCALE", DataType::Int { unsigned: false }),
    ("DATETIME_PRECISION", DataType::Int { unsigned: true }),
    ("CHARACTER_SET_NAME", VC),
    ("COLLATION_NAME", VC),
];

/// Values for [`TYPE_COLUMNS`] of a parameter or return type (`None`: a
/// procedure's ROUTINES row, all NULL).
pub(super) fn type_values(t: Option<DataType>) -> Vec<Value> {
    let Some(t) = t else {
        return vec![Value::Null; TYPE_COLUMNS.len()];
    };
    let text = t.is_string() && !t.is_binary();
    let chars = if t.is_string() || t.is_binary() {
        t.max_bytes().map_or(Value::Null, |n| Value::Int(n as i64))
    } else {
        Value::Null
    };
    let octets = match octet_length(t) {
        Value::UInt(n) => Value::Int(n as i64),
        v => v,
    };
    let (precision, scale) = numeric(t);
    let charset = |v: &str| if text { Value::str(v) } else { Value::Null };
    vec![
        chars,
        octets,
        precision.map_or(Value::Null, Value::UInt),
        scale.map_or(Value::Null, Value::Int),
        datetime_precision(t).map_or(Value::Null, Value::UInt),
        charset("utf8mb4"),
        charset("utf8mb4_0900_ai_ci"),
    ]
}

/// NUMERIC_PRECISION and NUMERIC_SCALE as MySQL 8 reports them.
pub(super) fn numeric(t: DataType) -> (Option<u64>, Option<i64>) {
    match t {
        DataType::Decimal { precision, scale } => (Some(precision as u64), Some(scale as i64)),
        DataType::TinyInt { .. } => (Some(3), Some(0)),
        DataType::SmallInt { .. } => (Some(5), Some(0)),
        DataType::MediumInt { .. } => (Some(7), Some(0)),
        DataType::Int { .. } => (Some(10), Some(0)),
        DataType::BigInt { unsigned } => (Some(if unsigned { 20 } else { 19 }), Some(0)),
        DataType::Float => (Some(12), None),
        DataType::Double => (Some(22), None),
        _ => (None, None),
    }
}

/// DATETIME_PRECISION: fractional digits of DATETIME, TIMESTAMP and TIME.
pub(super) fn datetime_precision(t: DataType) -> Option<u64> {
    match t {
        DataType::DateTime { fsp } | DataType::Timestamp { fsp } | DataType::Time { fsp } => {
            Some(fsp as u64)
        }
        _ => None,
    }
}

/// performance_schema.host_cache, always empty: lockstep keeps no host
/// cache (it resolves no host names and blocks no hosts), so there is
/// nothing to list, and TRUNCATE of it (FLUSH HOSTS) has nothing to clear.
pub(super) fn performance_schema_tables(cat: &Catalog) {
    let big = DataType::BigInt { unsigned: true };
    let ts = DataType::Timestamp { fsp: 0 };
    let mut cols = vec![
        ("IP", VC),
        ("HOST", DataType::VarChar { len: 255 }),
        ("HOST_VALIDATED", VC),
    ];
    cols.extend(HOST_CACHE_COUNTERS.iter().map(|n| (*n, big)));
    cols.extend([
        ("FIRST_SEEN", ts),
        ("LAST_SEEN", ts),
        ("FIRST_ERROR_SEEN", ts),
        ("LAST_ERROR_SEEN", ts),
    ]);
    super::infoschema::table_in(
        cat,
        "performance_schema",
        95,
        "HOST_CACHE",
        &cols,
        Vec::new(),
    );
}

const HOST_CACHE_COUNTERS: [&str; 22] = [
    "SUM_CONNECT_ERRORS",
    "COUNT_HOST_BLOCKED_ERRORS",
    "COUNT_NAMEINFO_TRANSIENT_ERRORS",
    "COUNT_NAMEINFO_PERMANENT_ERRORS",
    "COUNT_FORMAT_ERRORS",
    "COUNT_ADDRINFO_TRANSIENT_ERRORS",
    "COUNT_ADDRINFO_PERMANENT_ERRORS",
    "COUNT_FCRDNS_ERRORS",
    "COUNT_HOST_ACL_ERRORS",
    "COUNT_NO_AUTH_PLUGIN_ERRORS",
    "COUNT_AUTH_PLUGIN_ERRORS",
    "COUNT_HANDSHAKE_ERRORS",
    "COUNT_PROXY_USER_ERRORS",
    "COUNT_PROXY_USER_ACL_ERRORS",
    "COUNT_AUTHENTICATION_ERRORS",
    "COUNT_SSL_ERRORS",
    "COUNT_MAX_USER_CONNECTIONS_ERRORS",
    "COUNT_MAX_USER_CONNECTIONS_PER_HOUR_ERRORS",
    "COUNT_DEFAULT_DATABASE_ERRORS",
    "COUNT_INIT_CONNECT_ERRORS",
    "COUNT_LOCAL_ERRORS",
    "COUNT_UNKNOWN_ERRORS",
];

/// Whether `name` (in the session's database `current`) is
/// performance_schema.host_cache.
pub(super) fn is_host_cache(name: &ObjectName, current: Option<&str>) -> bool {
    let db = name.database.as_deref().or(current).unwrap_or("");
    db.eq_ignore_ascii_case("performance_schema") && name.name.eq_ignore_ascii_case("host_cache")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octets_of_strings_and_binaries() {
        assert_eq!(octet_length(DataType::VarChar { len: 20 }), Value::UInt(80));
        assert_eq!(
            octet_length(DataType::VarBinary { len: 20 }),
            Value::UInt(20)
        );
        assert_eq!(
            octet_length(DataType::Text { max_len: 65535 }),
            Value::UInt(65535)
        );
        assert_eq!(octet_length(DataType::Int { unsigned: false }), Value::Null);
    }

    #[test]
    fn parameter_type_values() {
        let v = type_values(Some(DataType::Time { fsp: 3 }));
        assert_eq!(v[4], Value::UInt(3));
        assert_eq!(v[5], Value::Null);
        let v = type_values(Some(DataType::VarChar { len: 10 }));
        assert_eq!(v[0], Value::Int(10));
        assert_eq!(v[1], Value::Int(40));
        assert_eq!(v[5], Value::str("utf8mb4"));
        assert!(type_values(None).iter().all(|v| *v == Value::Null));
    }
}
