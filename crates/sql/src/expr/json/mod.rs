//! JSON values as MySQL 8 keeps them: numbers stay integer, unsigned,
//! double or decimal; objects hold unique keys sorted by length, then
//! bytes (the order MySQL stores and prints them in). A JSON value travels
//! between operators as its canonical text (`{"a": 1, "b": [1, 2]}`); the
//! binder marks which expressions are of JSON type (see `bind.rs`).

pub mod agg;
pub mod bind;
pub mod funcs;
pub mod ops;
pub mod parse;
pub mod path;
pub mod value;

use lockstep_types::error::Code;
use lockstep_types::{DataType, Decimal, Error, Value};
use std::cmp::Ordering;

/// The deepest nesting MySQL accepts in a JSON document.
pub const MAX_DEPTH: usize = 100;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    Str(String),
    Array(Vec<Json>),
    /// Members with unique keys, sorted by `key_order`.
    Object(Vec<(String, Json)>),
}

/// MySQL's storage order of object keys: shorter first, then by bytes.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

pub fn too_deep() -> Error {
    Error::new(
        Code::JsonDocumentTooDeep,
        "The JSON document exceeds the maximum depth of 100.",
    )
}

/// 1041, as the executor reports a statement past query_memory_limit.
pub fn too_big() -> Error {
    Error::new(
        Code::OutOfResources,
        "Out of memory: the statement needs more than query_memory_limit; raise it or make the JSON values smaller",
    )
}

impl Json {
    /// An object from members in any order; a later duplicate key wins
    /// (MySQL 8.0.3 and later).
    pub fn object(members: Vec<(String, Json)>) -> Json {
        let mut out: Vec<(String, Json)> = Vec::with_capacity(members.len());
        for (k, v) in members {
            set_member(&mut out, k, v);
        }
        Json::Object(out)
    }

    pub fn member(&self, key: &str) -> Option<&Json> {
        let Json::Object(m) = self else { return None };
        let i = m.binary_search_by(|(k, _)| key_order(k, key)).ok()?;
        Some(&m[i].1)
    }

    /// Nesting depth: 1 for a scalar or an empty container.
    pub fn depth(&self) -> usize {
        match self {
            Json::Array(a) => 1 + a.iter().map(Json::depth).max().unwrap_or(0),
            Json::Object(m) => 1 + m.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }

    /// JSON_TYPE's name for the value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Int(_) => "INTEGER",
            Json::UInt(_) => "UNSIGNED INTEGER",
            Json::Double(_) => "DOUBLE",
            Json::Decimal(_) => "DECIMAL",
            Json::Str(_) => "STRING",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// Canonical text, as MySQL prints a JSON value.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None, 0);
        out
    }

    /// JSON_PRETTY's layout: two spaces a level, one member a line.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(2), 0);
        out
    }

    fn write(&self, out: &mut String, indent: Option<usize>, level: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => out.push_str(&i.to_string()),
            Json::UInt(u) => out.push_str(&u.to_string()),
            Json::Double(d) => out.push_str(&format_double(*d)),
            Json::Decimal(d) => out.push_str(&d.to_string()),
            Json::Str(s) => quote_into(out, s),
            Json::Array(a) => {
                let items = a.iter().map(|v| (None, v));
                write_container(out, items, a.len(), ('[', ']'), indent, level)
            }
            Json::Object(m) => {
                let items = m.iter().map(|(k, v)| (Some(k.as_str()), v));
                write_container(out, items, m.len(), ('{', '}'), indent, level)
            }
        }
    }

    /// The value's text where SQL wants a string: a JSON string unquoted,
    /// anything else in its canonical form (JSON_UNQUOTE, ->>).
    pub fn unquoted(&self) -> String {
        match self {
            Json::Str(s) => s.clone(),
            other => other.to_text(),
        }
    }

    /// The value as an SQL value of JSON type: its canonical text.
    pub fn into_value(self) -> Value {
        Value::Bytes(self.to_text().into_bytes())
    }
}

fn write_container<'a>(
    out: &mut String,
    items: impl Iterator<Item = (Option<&'a str>, &'a Json)>,
    len: usize,
    (open, close): (char, char),
    indent: Option<usize>,
    level: usize,
) {
    out.push(open);
    for (i, (key, v)) in items.enumerate() {
        if i > 0 {
            out.push(',');
            if indent.is_none() {
                out.push(' ');
            }
        }
        if let Some(step) = indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', step * (level + 1)));
        }
        if let Some(k) = key {
            quote_into(out, k);
            out.push_str(": ");
        }
        v.write(out, indent, level + 1);
    }
    if let (Some(step), true) = (indent, len > 0) {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', step * level));
    }
    out.push(close);
}

/// Sets `key` in sorted members: replaces its value or inserts it in order.
pub fn set_member(members: &mut Vec<(String, Json)>, key: String, value: Json) {
    match members.binary_search_by(|(k, _)| key_order(k, &key)) {
        Ok(i) => members[i].1 = value,
        Err(i) => members.insert(i, (key, value)),
    }
}

/// A double as MySQL prints it in JSON: as in SQL, with ".0" on a whole
/// number (so that it reads back as a double).
pub fn format_double(d: f64) -> String {
    let s = lockstep_types::value::format_double(d);
    if s.contains(['.', 'e']) {
        s
    } else {
        s + ".0"
    }
}

/// Appends `s` as a JSON string literal (MySQL's escapes).
pub fn quote_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Rank of a type in MySQL's JSON comparison: a value of a higher rank
/// is greater than any value of a lower one.
fn rank(j: &Json) -> u8 {
    match j {
        Json::Null => 0,
        Json::Int(_) | Json::UInt(_) | Json::Double(_) | Json::Decimal(_) => 1,
        Json::Str(_) => 2,
        Json::Object(_) => 3,
        Json::Array(_) => 4,
        Json::Bool(_) => 5,
    }
}

/// MySQL 8's JSON comparison: by type precedence, numbers by value,
/// strings by bytes, arrays element by element (a prefix first).
pub fn compare(a: &Json, b: &Json) -> Ordering {
    match (a, b) {
        (Json::Str(x), Json::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Json::Bool(x), Json::Bool(y)) => x.cmp(y),
        (Json::Array(x), Json::Array(y)) => compare_seq(x.iter(), y.iter()),
        (Json::Object(x), Json::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            for ((ka, va), (kb, vb)) in x.iter().zip(y) {
                let o = key_order(ka, kb).then_with(|| compare(va, vb));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        }),
        _ if rank(a) == 1 && rank(b) == 1 => compare_numbers(a, b),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn compare_seq<'a>(
    mut x: impl Iterator<Item = &'a Json>,
    mut y: impl Iterator<Item = &'a Json>,
) -> Ordering {
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(a), Some(b)) => match compare(a, b) {
                Ordering::Equal => {}
                o => return o,
            },
        }
    }
}

fn compare_numbers(a: &Json, b: &Json) -> Ordering {
    let exact = |j: &Json| match j {
        Json::Int(i) => Some(*i as i128),
        Json::UInt(u) => Some(*u as i128),
        _ => None,
    };
    if let (Some(x), Some(y)) = (exact(a), exact(b)) {
        return x.cmp(&y);
    }
    let as_value = |j: &Json| match j {
        Json::Int(i) => Value::Int(*i),
        Json::UInt(u) => Value::UInt(*u),
        Json::Double(d) => Value::Double(*d),
        Json::Decimal(d) => Value::Decimal(*d),
        _ => Value::Null,
    };
    as_value(a).sql_cmp(&as_value(b)).unwrap_or(Ordering::Equal)
}

/// Appends bytes whose order is `compare`'s (numbers as doubles): the
/// type's rank, then the value; a container's items each begin with a
/// rank byte (at least 1) and end at a 0, so a prefix sorts first.
pub fn sort_key(j: &Json, out: &mut Vec<u8>) {
    out.push(rank(j) + 1);
    match j {
        Json::Null => {}
        Json::Bool(b) => out.push(*b as u8),
        Json::Str(s) => string_key(s, out),
        Json::Array(a) => {
            a.iter().for_each(|x| sort_key(x, out));
            out.push(0);
        }
        Json::Object(m) => {
            out.extend_from_slice(&(m.len() as u64).to_be_bytes());
            for (k, v) in m {
                string_key(k, out);
                sort_key(v, out);
            }
        }
        number => {
            let d = match number {
                Json::Int(i) => *i as f64,
                Json::UInt(u) => *u as f64,
                Json::Double(d) => *d,
                Json::Decimal(d) => d.to_f64().unwrap_or(0.0),
                _ => 0.0,
            };
            let bits = (d + 0.0).to_bits();
            let ordered = if d < 0.0 { !bits } else { bits | 1 << 63 };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
    }
}

/// A string's bytes, a 0 escaped as 0 1, ended by 0 0.
fn string_key(s: &str, out: &mut Vec<u8>) {
    for &b in s.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(1);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// An SQL value where a JSON value is wanted (JSON_ARRAY's arguments, the
/// value of JSON_SET, a comparison with a JSON column): numbers stay
/// numbers, everything else becomes a JSON string.
pub fn from_sql(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Int(i) => Json::Int(*i),
        Value::UInt(u) => Json::UInt(*u),
        Value::Double(d) => Json::Double(*d),
        Value::Decimal(d) => Json::Decimal(*d),
        Value::Bytes(b) => Json::Str(String::from_utf8_lossy(b).into_owned()),
        other => Json::Str(other.to_string()),
    }
}

/// A value stored into a JSON column: valid JSON text, kept in canonical
/// form (3140 otherwise, as MySQL).
pub fn store(v: &Value, column: &str) -> Result<Value, Error> {
    let Value::Bytes(b) = v else {
        return Err(Error::new(
            Code::InvalidJsonText,
            format!("Invalid JSON text: \"not a JSON text, may need CAST\" at position 0 in value for column '{column}'."),
        ));
    };
    let mut budget = usize::MAX;
    let j = parse::parse_text(b, &mut budget).map_err(|e| e.in_column(column))?;
    Ok(j.into_value())
}

/// 3152: MySQL indexes JSON only through generated columns.
pub fn check_key_column(name: &str, ty: DataType) -> Result<(), Error> {
    if ty != DataType::Json {
        return Ok(());
    }
    Err(Error::new(
        Code::JsonUsedAsKey,
        format!("JSON column '{name}' supports indexing only via generated columns on a specified JSON path."),
    ))
}

/// 1101: a JSON column takes no literal default (MySQL 8).
pub fn check_default(name: &str, ty: DataType, default: &Value) -> Result<(), Error> {
    if ty != DataType::Json || default.is_null() {
        return Ok(());
    }
    Err(Error::new(
        Code::BlobCantHaveDefault,
        format!("BLOB, TEXT, GEOMETRY or JSON column '{name}' can't have a default value"),
    ))
}

/// JSON_STORAGE_SIZE: the bytes of MySQL's binary form of the value (a
/// type byte, then the value; containers with 2-byte offsets while they
/// fit in 64 KiB, 4-byte ones past that).
pub fn storage_size(j: &Json) -> usize {
    1 + match j {
        Json::Null | Json::Bool(_) => 1,
        other => value_size(other),
    }
}

fn value_size(j: &Json) -> usize {
    match j {
        Json::Null | Json::Bool(_) => 0,
        Json::Int(i) if i16::try_from(*i).is_ok() => 2,
        Json::Int(i) if i32::try_from(*i).is_ok() => 4,
        Json::UInt(u) if u16::try_from(*u).is_ok() => 2,
        Json::UInt(u) if u32::try_from(*u).is_ok() => 4,
        Json::Int(_) | Json::UInt(_) | Json::Double(_) => 8,
        // An opaque value: field type, length, precision, scale, digits.
        Json::Decimal(d) => 4 + d.to_string().len() / 2 + 1,
        Json::Str(s) => varlen_size(s.len()) + s.len(),
        Json::Array(_) | Json::Object(_) => {
            let small = container_size(j, false);
            if small <= u16::MAX as usize {
                small
            } else {
                container_size(j, true)
            }
        }
    }
}

fn varlen_size(n: usize) -> usize {
    let bits = usize::BITS - n.leading_zeros();
    (bits as usize).div_ceil(7).max(1)
}

fn inlined(j: &Json, large: bool) -> bool {
    match j {
        Json::Null | Json::Bool(_) => true,
        Json::Int(i) => i16::try_from(*i).is_ok() || (large && i32::try_from(*i).is_ok()),
        Json::UInt(u) => u16::try_from(*u).is_ok() || (large && u32::try_from(*u).is_ok()),
        _ => false,
    }
}

fn container_size(j: &Json, large: bool) -> usize {
    let w = if large { 4 } else { 2 };
    let entry = 1 + w;
    let value = |v: &Json| entry + if inlined(v, large) { 0 } else { value_size(v) };
    match j {
        Json::Array(a) => 2 * w + a.iter().map(value).sum::<usize>(),
        Json::Object(m) => {
            2 * w
                + m.iter()
                    .map(|(k, v)| w + 2 + k.len() + value(v))
                    .sum::<usize>()
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
