//! A histogram as information_schema.COLUMN_STATISTICS shows it: MySQL
//! 8's JSON layout, its keys in the order MySQL prints an object's keys
//! (shorter first, then by bytes). Singleton buckets are
//! `[value, cumulative frequency]`, equi-height ones `[lower, upper,
//! cumulative frequency, distinct values]`; strings are
//! `"base64:type254:..."` as MySQL writes them.

use crate::histogram::{Histogram, Kind};
use lockstep_types::{DataType, Value};
use std::fmt::Write;

/// MySQL's name for a column type in a histogram; None for the types it
/// builds none for (JSON; lockstep has no spatial types).
pub fn data_type(t: DataType) -> Option<&'static str> {
    use DataType as T;
    Some(match t {
        T::TinyInt { unsigned }
        | T::SmallInt { unsigned }
        | T::MediumInt { unsigned }
        | T::Int { unsigned }
        | T::BigInt { unsigned } => match unsigned {
            true => "uint",
            false => "int",
        },
        T::Year => "int",
        T::Bit { .. } => "uint",
        T::Float | T::Double => "double",
        T::Decimal { .. } => "decimal",
        T::Date => "date",
        T::DateTime { .. } | T::Timestamp { .. } => "datetime",
        T::Time { .. } => "time",
        // ENUM/SET values are kept as their text (MySQL: "enum"/"set" with
        // the member numbers).
        T::Char { .. }
        | T::VarChar { .. }
        | T::Text { .. }
        | T::Enum { .. }
        | T::Set { .. }
        | T::EnumOf { .. }
        | T::SetOf { .. } => "string",
        T::Binary { .. } | T::VarBinary { .. } | T::Blob { .. } => "string",
        T::Json | T::Null => return None,
    })
}

/// The collation id MySQL records: the column's for text
/// (utf8mb4_0900_ai_ci), binary for byte strings, 8 for the rest.
fn collation_id(t: DataType) -> u32 {
    match t {
        t if t.is_string() => 255,
        t if t.is_binary() => 63,
        _ => 8,
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(bytes: &[u8], out: &mut String) {
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for k in 0..4 {
            let c = match k <= chunk.len() {
                true => B64[(n >> (18 - 6 * k) & 63) as usize] as char,
                false => '=',
            };
            out.push(c);
        }
    }
}

fn double(d: f64) -> String {
    format!("{d:?}")
}

fn value(v: &Value, t: DataType, out: &mut String) {
    match v {
        Value::Double(d) => out.push_str(&double(*d)),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => out.push_str(&v.to_string()),
        Value::Date(d) => {
            let _ = write!(out, "\"{d}\"");
        }
        Value::DateTime(dt) => {
            let _ = write!(out, "\"{}\"", dt.format(6));
        }
        Value::Bytes(b) if matches!(t, DataType::Time { .. }) => {
            let text = String::from_utf8_lossy(b);
            let frac = if text.contains('.') { "" } else { ".000000" };
            let _ = write!(out, "\"{text}{frac}\"");
        }
        Value::Bytes(b) => {
            out.push_str("\"base64:type254:");
            base64(b, out);
            out.push('"');
        }
        Value::Null => out.push_str("null"),
    }
}

impl Histogram {
    /// The JSON text of COLUMN_STATISTICS.HISTOGRAM for a column of type `t`.
    pub fn to_json(&self, t: DataType) -> String {
        let mut out = String::from("{\"buckets\": [");
        for (i, b) in self.buckets.iter().enumerate() {
            out.push_str(if i == 0 { "[" } else { ", [" });
            value(&b.lower, t, &mut out);
            if self.kind == Kind::EquiHeight {
                out.push_str(", ");
                value(&b.upper, t, &mut out);
            }
            let _ = write!(out, ", {}", double(b.cumulative));
            if self.kind == Kind::EquiHeight {
                let _ = write!(out, ", {}", b.distinct);
            }
            out.push(']');
        }
        let kind = match self.kind {
            Kind::Singleton => "singleton",
            Kind::EquiHeight => "equi-height",
        };
        let _ = write!(
            out,
            "], \"data-type\": \"{}\", \"null-values\": {}, \"collation-id\": {}, \
             \"last-updated\": \"{}\", \"sampling-rate\": {}, \"histogram-type\": \"{kind}\", \
             \"number-of-buckets-specified\": {}}}",
            data_type(t).unwrap_or("string"),
            double(self.null_fraction),
            collation_id(t),
            self.last_updated,
            double(self.sampling_rate),
            self.buckets_specified,
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::Sample;

    #[test]
    fn singleton_text_as_mysql_lays_it_out() {
        let sample = Sample {
            values: vec![Value::str("ab"), Value::str("ab"), Value::str("c")],
            nulls: 1,
            sampling_rate: 1.0,
        };
        let h = Histogram::build(sample, 100, "2026-11-27 08:00:00.000000".into());
        assert_eq!(
            h.to_json(DataType::VarChar { len: 5 }),
            "{\"buckets\": [[\"base64:type254:YWI=\", 0.5], [\"base64:type254:Yw==\", 0.75]], \
             \"data-type\": \"string\", \"null-values\": 0.25, \"collation-id\": 255, \
             \"last-updated\": \"2026-11-27 08:00:00.000000\", \"sampling-rate\": 1.0, \
             \"histogram-type\": \"singleton\", \"number-of-buckets-specified\": 100}"
        );
    }
}
