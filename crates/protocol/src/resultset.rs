//! Response packets: OK, EOF, ERR, column definitions, and rows in the text
//! (COM_QUERY) and binary (COM_STMT_EXECUTE) forms.

use crate::charset::ResultCharset;
use crate::wire::{self, NULL_MARKER};
use crate::{Column, OkInfo};
use lockstep_types::result::StateChange;
use lockstep_types::value::{format_double, format_float};
use lockstep_types::{DataType, Date, DateTime, Decimal, Time, Value};
use std::io::Write;

use column_flags::*;
/// Column definition flags (MySQL's *_FLAG).
pub use lockstep_types::result::column_flags;

/// Column type codes (MySQL's MYSQL_TYPE_*).
pub mod types {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEWDATE: u8 = 14;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const TIMESTAMP2: u8 = 17;
    pub const DATETIME2: u8 = 18;
    pub const TIME2: u8 = 19;
    pub const JSON: u8 = 245;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const SET: u8 = 248;
    pub const TINY_BLOB: u8 = 249;
    pub const MEDIUM_BLOB: u8 = 250;
    pub const LONG_BLOB: u8 = 251;
    pub const BLOB: u8 = 252;
    pub const VAR_STRING: u8 = 253;
    pub const STRING: u8 = 254;
    pub const GEOMETRY: u8 = 255;
}

/// Server status flags (MySQL's SERVER_*).
pub mod status_flags {
    pub const IN_TRANS: u16 = 1;
    pub const AUTOCOMMIT: u16 = 2;
    pub const MORE_RESULTS_EXISTS: u16 = 8;
    pub const CURSOR_EXISTS: u16 = 64;
    pub const LAST_ROW_SENT: u16 = 128;
    /// sql_mode has NO_BACKSLASH_ESCAPES (drivers escape by doubling quotes).
    pub const NO_BACKSLASH_ESCAPES: u16 = 512;
    /// The OK packet carries session state changes (CLIENT_SESSION_TRACK).
    pub const SESSION_STATE_CHANGED: u16 = 1 << 14;
}

pub const BINARY_COLLATION: u16 = 63;
pub const UTF8MB4_COLLATION: u16 = 255;
/// Longest error message MySQL sends (MYSQL_ERRMSG_SIZE - 1).
const MAX_ERROR_MESSAGE: usize = 511;

/// How a column type is described on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnMeta {
    pub type_code: u8,
    pub collation: u16,
    /// Display length in bytes, as MySQL reports it.
    pub length: u32,
    pub flags: u16,
    pub decimals: u8,
}

pub fn column_meta(dt: DataType) -> ColumnMeta {
    let num = |type_code, signed_len: u32, unsigned: bool| ColumnMeta {
        type_code,
        collation: BINARY_COLLATION,
        length: if unsigned { signed_len - 1 } else { signed_len },
        flags: BINARY_FLAG | if unsigned { UNSIGNED_FLAG } else { 0 },
        decimals: 0,
    };
    let binary = |type_code, length: u32, extra| ColumnMeta {
        type_code,
        collation: BINARY_COLLATION,
        length,
        flags: BINARY_FLAG | extra,
        decimals: 0,
    };
    // utf8mb4 needs up to 4 bytes per character.
    let text = |type_code, chars: u32, extra| ColumnMeta {
        type_code,
        collation: UTF8MB4_COLLATION,
        length: chars.saturating_mul(4),
        flags: extra,
        decimals: 0,
    };
    let temporal = |type_code, fsp: u8| ColumnMeta {
        decimals: fsp.min(6),
        ..binary(
            type_code,
            19 + if fsp > 0 { fsp.min(6) as u32 + 1 } else { 0 },
            0,
        )
    };
    match dt {
        DataType::TinyInt { unsigned } => num(types::TINY, 4, unsigned),
        DataType::SmallInt { unsigned } => num(types::SHORT, 6, unsigned),
        DataType::MediumInt { unsigned } => num(types::INT24, 9, unsigned),
        DataType::Int { unsigned } => num(types::LONG, 11, unsigned),
        DataType::BigInt { unsigned } => num(types::LONGLONG, 21, unsigned).with_length(20),
        DataType::Decimal { precision, scale } => ColumnMeta {
            // Digits, the point if there is a fraction, and the sign.
            length: precision as u32 + (scale > 0) as u32 + 1,
            decimals: scale,
            ..binary(types::NEWDECIMAL, 0, 0)
        },
        DataType::Float => ColumnMeta {
            decimals: 31,
            ..binary(types::FLOAT, 12, 0)
        },
        DataType::Double => ColumnMeta {
            decimals: 31,
            ..binary(types::DOUBLE, 22, 0)
        },
        DataType::Char { len } => text(types::STRING, len, 0),
        DataType::VarChar { len } => text(types::VAR_STRING, len, 0),
        DataType::Text { max_len } => text(types::BLOB, max_len, BLOB_FLAG),
        DataType::Binary { len } => binary(types::STRING, len, 0),
        DataType::VarBinary { len } => binary(types::VAR_STRING, len, 0),
        DataType::Blob { max_len } => binary(types::BLOB, max_len, BLOB_FLAG),
        DataType::Date => binary(types::DATE, 10, 0),
        DataType::DateTime { fsp } => temporal(types::DATETIME, fsp),
        DataType::Timestamp { fsp } => temporal(types::TIMESTAMP, fsp),
        DataType::Null => binary(types::NULL, 0, 0),
        DataType::Year => binary(types::YEAR, 4, UNSIGNED_FLAG | ZEROFILL_FLAG),
        DataType::Bit { width } => binary(types::BIT, width as u32, UNSIGNED_FLAG),
        DataType::Enum { len } => text(types::STRING, len, ENUM_FLAG),
        DataType::Set { len } => text(types::STRING, len, SET_FLAG),
        DataType::EnumOf { members } => text(types::STRING, members.width(false), ENUM_FLAG),
        DataType::SetOf { members } => text(types::STRING, members.width(true), SET_FLAG),
        DataType::Json => binary(types::JSON, u32::MAX, BLOB_FLAG),
        DataType::Time { fsp } => ColumnMeta {
            decimals: fsp.min(6),
            ..binary(
                types::TIME,
                10 + if fsp > 0 { fsp.min(6) as u32 + 1 } else { 0 },
                0,
            )
        },
    }
}

impl ColumnMeta {
    fn with_length(self, length: u32) -> Self {
        ColumnMeta { length, ..self }
    }
}

/// ColumnDefinition41. `field_list` adds the default-value field that
/// COM_FIELD_LIST replies carry (always NULL here).
pub fn encode_column_def(out: &mut Vec<u8>, col: &Column, field_list: bool) {
    encode_column_def_in(out, col, field_list, ResultCharset::default());
}

/// ColumnDefinition41 with text columns described in `charset`.
pub fn encode_column_def_in(
    out: &mut Vec<u8>,
    col: &Column,
    field_list: bool,
    charset: ResultCharset,
) {
    let meta = charset.describe(column_meta(col.data_type), col.collation);
    wire::put_lenenc_bytes(out, b"def");
    for name in [
        &col.schema,
        &col.table,
        &col.org_table,
        &col.name,
        &col.org_name,
    ] {
        wire::put_lenenc_bytes(out, &charset.text(name));
    }
    out.push(0x0C);
    wire::put_u16(out, meta.collation);
    wire::put_u32(out, meta.length);
    out.push(meta.type_code);
    let not_null = if col.nullable { 0 } else { NOT_NULL_FLAG };
    wire::put_u16(out, meta.flags | not_null | col.flags);
    out.push(meta.decimals);
    wire::put_u16(out, 0);
    if field_list {
        out.push(NULL_MARKER);
    }
}

/// OK packet; `header` is 0x00, or 0xFE where it replaces an EOF packet
/// (CLIENT_DEPRECATE_EOF).
pub fn encode_ok(out: &mut Vec<u8>, header: u8, ok: &OkInfo, status: u16) {
    encode_ok_tracked(out, header, ok, status, &[]);
}

/// OK packet with session state changes, for a client that asked for
/// CLIENT_SESSION_TRACK (`changes` must be empty for any other).
pub fn encode_ok_tracked(
    out: &mut Vec<u8>,
    header: u8,
    ok: &OkInfo,
    status: u16,
    changes: &[StateChange],
) {
    let status = match changes.is_empty() {
        true => status,
        false => status | status_flags::SESSION_STATE_CHANGED,
    };
    out.push(header);
    wire::put_lenenc_int(out, ok.affected_rows);
    wire::put_lenenc_int(out, ok.last_insert_id);
    wire::put_u16(out, status);
    wire::put_u16(out, ok.warnings);
    // MySQL's server writes the info as a length-encoded string even
    // without CLIENT_SESSION_TRACK, and libmariadb reads it that way; the
    // state changes follow it (the info then goes even when empty).
    if !ok.info.is_empty() || !changes.is_empty() {
        wire::put_lenenc_bytes(out, ok.info.as_bytes());
    }
    if !changes.is_empty() {
        wire::put_lenenc_bytes(out, &encode_state_changes(changes));
    }
}

/// The session state information of an OK packet: per change its type
/// and its data as a length-encoded string.
fn encode_state_changes(changes: &[StateChange]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut data = Vec::new();
    for c in changes {
        data.clear();
        let kind = match c {
            StateChange::SystemVariable { name, value } => {
                wire::put_lenenc_bytes(&mut data, name.as_bytes());
                wire::put_lenenc_bytes(&mut data, value.as_bytes());
                0
            }
            StateChange::Schema(db) => {
                wire::put_lenenc_bytes(&mut data, db.as_bytes());
                1
            }
            StateChange::StateChanged => {
                wire::put_lenenc_bytes(&mut data, b"1");
                2
            }
            StateChange::TransactionState(state) => {
                wire::put_lenenc_bytes(&mut data, state.as_bytes());
                5
            }
        };
        out.push(kind);
        wire::put_lenenc_bytes(&mut out, &data);
    }
    out
}

pub fn encode_eof(out: &mut Vec<u8>, warnings: u16, status: u16) {
    out.push(0xFE);
    wire::put_u16(out, warnings);
    wire::put_u16(out, status);
}

/// ERR packet. `sqlstate` is omitted before the client has said it speaks
/// protocol 4.1 (a connection refused before the handshake).
pub fn encode_err(out: &mut Vec<u8>, code: u16, sqlstate: Option<&str>, message: &str) {
    out.push(0xFF);
    wire::put_u16(out, code);
    if let Some(state) = sqlstate {
        out.push(b'#');
        let mut s = [b'H', b'Y', b'0', b'0', b'0'];
        for (d, b) in s.iter_mut().zip(state.bytes()) {
            *d = b;
        }
        out.extend_from_slice(&s);
    }
    let mut end = message.len().min(MAX_ERROR_MESSAGE);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&message.as_bytes()[..end]);
}

/// ERR packet whose message is already in the client's character set
/// (cut at MAX_ERROR_MESSAGE bytes).
pub fn encode_err_bytes(out: &mut Vec<u8>, code: u16, sqlstate: Option<&str>, message: &[u8]) {
    encode_err(out, code, sqlstate, "");
    out.extend_from_slice(&message[..message.len().min(MAX_ERROR_MESSAGE)]);
}

pub fn encode_error(out: &mut Vec<u8>, e: &lockstep_types::Error) {
    encode_err(out, e.number(), Some(e.sqlstate()), &e.message);
}

/// A text-protocol row. Values are formatted for their column's type;
/// `scratch` is reused between calls so that formatting does not allocate.
pub fn encode_text_row(
    out: &mut Vec<u8>,
    columns: &[Column],
    row: &[Value],
    scratch: &mut Vec<u8>,
) {
    for (i, col) in columns.iter().enumerate() {
        match row.get(i) {
            None | Some(Value::Null) => out.push(NULL_MARKER),
            Some(Value::Bytes(b)) if !needs_reformat(col.data_type) => {
                wire::put_lenenc_bytes(out, b)
            }
            Some(v) => {
                scratch.clear();
                text_value(scratch, col.data_type, v);
                wire::put_lenenc_bytes(out, scratch);
            }
        }
    }
}

/// Strings are sent as stored, except in DECIMAL and temporal columns,
/// where a string still gets the column's exact format.
fn needs_reformat(dt: DataType) -> bool {
    matches!(
        dt,
        DataType::Decimal { .. } | DataType::DateTime { .. } | DataType::Timestamp { .. }
    )
}

/// Rounds (half away from zero) or pads to exactly `scale` digits.
fn put_decimal(out: &mut Vec<u8>, mut d: Decimal, scale: u8) {
    d.rescale(scale as u32);
    let _ = write!(out, "{d}");
}

fn put_float(out: &mut Vec<u8>, d: f64, single: bool) {
    if single {
        out.extend_from_slice(format_float(d).as_bytes());
    } else {
        out.extend_from_slice(format_double(d).as_bytes());
    }
}

fn truncate_micro(micro: u32, fsp: u8) -> u32 {
    let unit = 10u32.pow(6 - fsp.min(6) as u32);
    (micro % 1_000_000) / unit * unit
}

fn put_datetime(out: &mut Vec<u8>, dt: &DateTime, fsp: u8) {
    let _ = write!(
        out,
        "{} {:02}:{:02}:{:02}",
        dt.date, dt.hour, dt.minute, dt.second
    );
    if fsp > 0 {
        let fsp = fsp.min(6) as usize;
        let _ = write!(out, ".{:06}", dt.micro % 1_000_000);
        out.truncate(out.len() - (6 - fsp));
    }
}

/// Value as a temporal, for temporal columns given another variant.
fn as_datetime(v: &Value) -> Option<DateTime> {
    match v {
        Value::DateTime(dt) => Some(*dt),
        Value::Date(d) => Some(DateTime {
            date: *d,
            ..Default::default()
        }),
        Value::Bytes(b) => std::str::from_utf8(b).ok().and_then(DateTime::parse),
        _ => None,
    }
}

/// Text form of any value without regard to a column type.
fn generic_text(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => {}
        Value::Int(i) => wire::put_i64_text(out, *i),
        Value::UInt(u) => wire::put_u64_text(out, *u),
        Value::Double(d) => put_float(out, *d, false),
        Value::Decimal(d) => {
            let _ = write!(out, "{d}");
        }
        Value::Bytes(b) => out.extend_from_slice(b),
        Value::Date(d) => {
            let _ = write!(out, "{d}");
        }
        Value::DateTime(dt) => {
            let fsp = if dt.micro == 0 { 0 } else { 6 };
            put_datetime(out, dt, fsp)
        }
    }
}

/// A BIT(width) value: its low `width` bits as big-endian bytes.
fn put_bits(out: &mut Vec<u8>, width: u8, v: &Value) {
    let n = (width as usize).div_ceil(8).clamp(1, 8);
    match v {
        Value::Bytes(b) => out.extend_from_slice(b),
        v => out.extend_from_slice(&(int_bits(v) as u64).to_be_bytes()[8 - n..]),
    }
}

fn text_value(out: &mut Vec<u8>, dt: DataType, v: &Value) {
    match (dt, v) {
        (_, Value::Null) => {}
        (DataType::Bit { width }, v) => put_bits(out, width, v),
        (DataType::Year, v) => {
            let _ = write!(out, "{:04}", int_bits(v));
        }
        (dt, Value::Int(_) | Value::UInt(_) | Value::Bytes(_)) if dt.is_integer() => {
            generic_text(out, v)
        }
        // ROUND(bigint, -n) may pass BIGINT's range: print the whole value.
        (dt, Value::Decimal(d)) if dt.is_integer() => {
            let _ = write!(out, "{}", d.round());
        }
        (dt, _) if dt.is_integer() => wire::put_i64_text(out, v.to_i64().unwrap_or(0)),
        (DataType::Decimal { scale, .. }, v) => match v.to_decimal() {
            Some(d) => put_decimal(out, d, scale),
            None => generic_text(out, v),
        },
        (DataType::Float, Value::Bytes(b)) | (DataType::Double, Value::Bytes(b)) => {
            out.extend_from_slice(b)
        }
        (DataType::Float, v) => put_float(out, v.to_f64().unwrap_or(0.0), true),
        (DataType::Double, v) => put_float(out, v.to_f64().unwrap_or(0.0), false),
        (DataType::Date, Value::Date(d)) => {
            let _ = write!(out, "{d}");
        }
        (DataType::Date, Value::DateTime(dt)) => {
            let _ = write!(out, "{}", dt.date);
        }
        (DataType::Time { fsp }, Value::DateTime(dt)) => {
            out.extend_from_slice(Time::of_datetime(dt).format(fsp).as_bytes())
        }
        (DataType::DateTime { fsp } | DataType::Timestamp { fsp }, v) => match as_datetime(v) {
            Some(dt) => put_datetime(out, &dt, fsp),
            None => generic_text(out, v),
        },
        (_, v) => generic_text(out, v),
    }
}

/// Binary-protocol temporal: a length byte, then only the parts that are
/// not zero (0, 4, 7 or 11 bytes).
fn put_binary_datetime(out: &mut Vec<u8>, dt: &DateTime, date_only: bool, fsp: u8) {
    let micro = if date_only {
        0
    } else {
        truncate_micro(dt.micro, fsp)
    };
    let has_time = !date_only && (dt.hour != 0 || dt.minute != 0 || dt.second != 0);
    let d: Date = dt.date;
    let len = if micro != 0 {
        11
    } else if has_time {
        7
    } else if d.year == 0 && d.month == 0 && d.day == 0 {
        0
    } else {
        4
    };
    out.push(len);
    if len >= 4 {
        wire::put_u16(out, d.year);
        out.push(d.month);
        out.push(d.day);
    }
    if len >= 7 {
        out.push(dt.hour);
        out.push(dt.minute);
        out.push(dt.second);
    }
    if len == 11 {
        wire::put_u32(out, micro);
    }
}

/// Binary-protocol TIME: a length byte (0, 8 or 12), the sign, days,
/// hours, minutes, seconds and microseconds.
fn put_binary_time(out: &mut Vec<u8>, v: &Value, fsp: u8) {
    let t = match v {
        Value::DateTime(dt) => Time::of_datetime(dt),
        other => other
            .to_text()
            .and_then(|b| std::str::from_utf8(&b).ok().and_then(Time::parse))
            .unwrap_or_default(),
    };
    let t = t.truncate(fsp);
    let len = if t.micro != 0 {
        12
    } else if t == Time::default() {
        0
    } else {
        8
    };
    out.push(len);
    if len >= 8 {
        out.push(t.negative as u8);
        wire::put_u32(out, t.hour / 24);
        out.push((t.hour % 24) as u8);
        out.push(t.minute);
        out.push(t.second);
    }
    if len == 12 {
        wire::put_u32(out, t.micro);
    }
}

fn int_bits(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        // Same bits as the unsigned value, which is what an unsigned column sends.
        Value::UInt(u) => *u as i64,
        other => other.to_i64().unwrap_or(0),
    }
}

/// A binary-protocol row: 0x00, a NULL bitmap offset by 2 bits, then each
/// non-NULL value in its column type's fixed or length-encoded form.
pub fn encode_binary_row(
    out: &mut Vec<u8>,
    columns: &[Column],
    row: &[Value],
    scratch: &mut Vec<u8>,
) {
    out.push(0x00);
    let bitmap = out.len();
    out.resize(bitmap + (columns.len() + 9) / 8, 0);
    for (i, col) in columns.iter().enumerate() {
        let v = match row.get(i) {
            None | Some(Value::Null) => {
                out[bitmap + (i + 2) / 8] |= 1 << ((i + 2) % 8);
                continue;
            }
            Some(v) => v,
        };
        match col.data_type {
            DataType::TinyInt { .. } => out.push(int_bits(v) as u8),
            DataType::SmallInt { .. } | DataType::Year => wire::put_u16(out, int_bits(v) as u16),
            DataType::MediumInt { .. } | DataType::Int { .. } => {
                wire::put_u32(out, int_bits(v) as u32)
            }
            DataType::BigInt { .. } => wire::put_u64(out, int_bits(v) as u64),
            DataType::Float => {
                out.extend_from_slice(&(v.to_f64().unwrap_or(0.0) as f32).to_le_bytes())
            }
            DataType::Double => out.extend_from_slice(&v.to_f64().unwrap_or(0.0).to_le_bytes()),
            DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => {
                let (date_only, fsp) = match col.data_type {
                    DataType::DateTime { fsp } | DataType::Timestamp { fsp } => (false, fsp),
                    _ => (true, 0),
                };
                let dt = as_datetime(v).unwrap_or_default();
                put_binary_datetime(out, &dt, date_only, fsp);
            }
            DataType::Time { fsp } => put_binary_time(out, v, fsp),
            DataType::Bit { width } => {
                scratch.clear();
                put_bits(scratch, width, v);
                wire::put_lenenc_bytes(out, scratch);
            }
            dt => match v {
                Value::Bytes(b) if !needs_reformat(dt) => wire::put_lenenc_bytes(out, b),
                v => {
                    scratch.clear();
                    text_value(scratch, dt, v);
                    wire::put_lenenc_bytes(out, scratch);
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Cursor;

    fn col(dt: DataType) -> Column {
        Column::new("c", dt)
    }

    fn text_row(cols: &[Column], row: &[Value]) -> Vec<Option<String>> {
        let mut out = Vec::new();
        encode_text_row(&mut out, cols, row, &mut Vec::new());
        let mut c = Cursor::new(&out);
        let mut vals = Vec::new();
        while !c.is_empty() {
            if out[c.position()] == NULL_MARKER {
                c.skip(1).expect("null marker");
                vals.push(None);
            } else {
                let b = c.lenenc_bytes().expect("lenenc value");
                vals.push(Some(String::from_utf8_lossy(b).into_owned()));
            }
        }
        vals
    }

    fn dec(s: &str) -> Value {
        Value::Decimal(s.parse().expect("decimal literal"))
    }

    fn dt(s: &str) -> Value {
        Value::DateTime(DateTime::parse(s).expect("datetime literal"))
    }

    #[test]
    fn column_metadata_matches_mysql() {
        let m = |dt| {
            let m = column_meta(dt);
            (m.type_code, m.collation, m.length, m.decimals)
        };
        assert_eq!(m(DataType::Int { unsigned: false }), (3, 63, 11, 0));
        assert_eq!(m(DataType::Int { unsigned: true }), (3, 63, 10, 0));
        assert_eq!(m(DataType::BigInt { unsigned: false }), (8, 63, 20, 0));
        assert_eq!(m(DataType::BigInt { unsigned: true }), (8, 63, 20, 0));
        assert_eq!(m(DataType::TinyInt { unsigned: false }), (1, 63, 4, 0));
        assert_eq!(
            m(DataType::Decimal {
                precision: 10,
                scale: 2
            }),
            (246, 63, 12, 2)
        );
        assert_eq!(
            m(DataType::Decimal {
                precision: 10,
                scale: 0
            }),
            (246, 63, 11, 0)
        );
        assert_eq!(m(DataType::VarChar { len: 100 }), (253, 255, 400, 0));
        assert_eq!(m(DataType::Char { len: 10 }), (254, 255, 40, 0));
        assert_eq!(m(DataType::VarBinary { len: 10 }), (253, 63, 10, 0));
        assert_eq!(m(DataType::Text { max_len: 65535 }), (252, 255, 262140, 0));
        assert_eq!(m(DataType::Text { max_len: u32::MAX }).2, u32::MAX);
        assert_eq!(m(DataType::Date), (10, 63, 10, 0));
        assert_eq!(m(DataType::DateTime { fsp: 0 }), (12, 63, 19, 0));
        assert_eq!(m(DataType::DateTime { fsp: 3 }), (12, 63, 23, 3));
        assert_eq!(m(DataType::Timestamp { fsp: 6 }), (7, 63, 26, 6));
        assert_eq!(m(DataType::Double), (5, 63, 22, 31));
        assert_eq!(
            column_meta(DataType::Blob { max_len: 65535 }).flags,
            BLOB_FLAG | BINARY_FLAG
        );
        assert_eq!(
            column_meta(DataType::Int { unsigned: true }).flags,
            BINARY_FLAG | UNSIGNED_FLAG
        );
    }

    #[test]
    fn column_definition_packet() {
        let c = Column {
            schema: "db".into(),
            table: "t".into(),
            org_table: "t".into(),
            name: "id".into(),
            org_name: "id".into(),
            data_type: DataType::Int { unsigned: false },
            nullable: false,
            flags: PRI_KEY_FLAG | AUTO_INCREMENT_FLAG,
            collation: 0,
        };
        let mut out = Vec::new();
        encode_column_def(&mut out, &c, false);
        let mut r = Cursor::new(&out);
        for expected in ["def", "db", "t", "t", "id", "id"] {
            assert_eq!(r.lenenc_bytes(), Ok(expected.as_bytes()));
        }
        assert_eq!(r.u8(), Ok(0x0C));
        assert_eq!(r.u16(), Ok(63));
        assert_eq!(r.u32(), Ok(11));
        assert_eq!(r.u8(), Ok(3));
        assert_eq!(
            r.u16(),
            Ok(NOT_NULL_FLAG | PRI_KEY_FLAG | AUTO_INCREMENT_FLAG | BINARY_FLAG)
        );
        assert_eq!(r.u8(), Ok(0));
        assert_eq!(r.u16(), Ok(0));
        assert!(r.is_empty());
    }

    #[test]
    fn ok_eof_err_packets() {
        let mut out = Vec::new();
        let ok = OkInfo {
            affected_rows: 300,
            last_insert_id: 5,
            warnings: 1,
            info: "Rows matched: 1".into(),
        };
        encode_ok(&mut out, 0, &ok, 3);
        // Info is a length-encoded string, as MySQL's server sends it.
        assert_eq!(&out[..11], &[0, 0xFC, 0x2C, 0x01, 5, 3, 0, 1, 0, 15, b'R']);
        out.clear();
        encode_eof(&mut out, 0, 2);
        assert_eq!(out, [0xFE, 0, 0, 2, 0]);
        out.clear();
        encode_error(&mut out, &lockstep_types::Error::no_db());
        assert_eq!(&out[..9], b"\xFF\x16\x04#3D000");
        assert_eq!(&out[9..], b"No database selected");
        out.clear();
        let long = "é".repeat(400);
        encode_err(&mut out, 1040, None, &long);
        assert!(out.len() <= 3 + MAX_ERROR_MESSAGE);
        assert!(std::str::from_utf8(&out[3..]).is_ok());
    }

    #[test]
    fn text_values_follow_column_types() {
        let cols = [
            col(DataType::Int { unsigned: false }),
            col(DataType::Decimal {
                precision: 10,
                scale: 2,
            }),
            col(DataType::Decimal {
                precision: 10,
                scale: 2,
            }),
            col(DataType::DateTime { fsp: 0 }),
            col(DataType::DateTime { fsp: 3 }),
            col(DataType::VarChar { len: 10 }),
            col(DataType::Date),
            col(DataType::Float),
            col(DataType::Double),
            col(DataType::BigInt { unsigned: true }),
            col(DataType::Decimal {
                precision: 10,
                scale: 2,
            }),
        ];
        let row = [
            Value::Int(-42),
            dec("1.5"),
            Value::Int(3),
            dt("2024-01-02 03:04:05.678"),
            dt("2024-01-02 03:04:05.678"),
            Value::str("héllo"),
            dt("2024-01-02 03:04:05"),
            Value::Double(0.1f32 as f64),
            Value::Double(0.1),
            Value::UInt(u64::MAX),
            dec("2.345"),
        ];
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            text_row(&cols, &row),
            vec![
                s("-42"),
                s("1.50"),
                s("3.00"),
                s("2024-01-02 03:04:05"),
                s("2024-01-02 03:04:05.678"),
                s("héllo"),
                s("2024-01-02"),
                s("0.1"),
                s("0.1"),
                s("18446744073709551615"),
                s("2.35"),
            ]
        );
        // Short rows become NULLs, wrong variants are converted, nothing panics.
        let odd = [Value::Double(2.6), Value::str("x"), Value::Null];
        assert_eq!(
            text_row(&cols[..4], &odd),
            vec![s("3"), s("0.00"), None, None]
        );
        assert_eq!(text_row(&cols[..1], &[]), vec![None]);
    }

    #[test]
    fn binary_row_encoding() {
        let cols = [
            col(DataType::TinyInt { unsigned: false }),
            col(DataType::Int { unsigned: false }),
            col(DataType::BigInt { unsigned: true }),
            col(DataType::Double),
            col(DataType::VarChar { len: 5 }),
            col(DataType::DateTime { fsp: 6 }),
            col(DataType::Date),
            col(DataType::Decimal {
                precision: 5,
                scale: 1,
            }),
            col(DataType::Float),
        ];
        let row = [
            Value::Int(-1),
            Value::Null,
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::str("ab"),
            dt("2024-01-02 03:04:05.000007"),
            Value::Date(Date::new(2020, 2, 29).expect("leap day")),
            dec("1.25"),
            Value::Double(2.5),
        ];
        let mut out = Vec::new();
        encode_binary_row(&mut out, &cols, &row, &mut Vec::new());
        let mut expected = vec![0x00, 0b0000_1000, 0x00];
        expected.push(0xFF);
        expected.extend_from_slice(&u64::MAX.to_le_bytes());
        expected.extend_from_slice(&1.5f64.to_le_bytes());
        expected.extend_from_slice(b"\x02ab");
        expected.extend_from_slice(&[11, 0xE8, 0x07, 1, 2, 3, 4, 5, 7, 0, 0, 0]);
        expected.extend_from_slice(&[4, 0xE4, 0x07, 2, 29]);
        expected.extend_from_slice(b"\x031.3");
        expected.extend_from_slice(&2.5f32.to_le_bytes());
        assert_eq!(out, expected);
    }
}

#[cfg(test)]
mod time_tests {
    use super::*;

    fn binary(dt: DataType, v: Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_binary_row(&mut out, &[Column::new("c", dt)], &[v], &mut Vec::new());
        out.split_off(2)
    }

    #[test]
    fn time_and_null_metadata() {
        let m = |dt| {
            let m = column_meta(dt);
            (m.type_code, m.collation, m.length, m.decimals)
        };
        assert_eq!(m(DataType::Time { fsp: 0 }), (11, 63, 10, 0));
        assert_eq!(m(DataType::Time { fsp: 6 }), (11, 63, 17, 6));
        assert_eq!(m(DataType::Null), (6, 63, 0, 0));
    }

    #[test]
    fn binary_time() {
        let t = DataType::Time { fsp: 6 };
        assert_eq!(binary(t, Value::str("00:00:00")), [0]);
        assert_eq!(
            binary(t, Value::str("-26:03:04")),
            [8, 1, 1, 0, 0, 0, 2, 3, 4]
        );
        assert_eq!(
            binary(t, Value::str("01:02:03.5")),
            [12, 0, 0, 0, 0, 0, 1, 2, 3, 0x20, 0xA1, 0x07, 0]
        );
    }
}
