//! TABLE_MAP and WRITE/UPDATE/DELETE_ROWS v2 events, and each column
//! type's row-image encoding. ENUM and SET go out as MySQL sends them:
//! MYSQL_TYPE_STRING whose metadata names the real type (247/248) and
//! the pack length, values as member index / bitmask, the member lists in
//! the optional metadata; columns of catalogs older than the member lists
//! as VARCHAR;
//! JSON as MYSQL_TYPE_JSON in MySQL's binary form (`json`).

use lockstep_tables::TableDef;
use lockstep_types::enumset::Members;
use lockstep_types::{DataType, Value};

use super::put_packed;

const T_DECIMAL: u8 = 246;
const T_TINY: u8 = 1;
const T_SHORT: u8 = 2;
const T_LONG: u8 = 3;
const T_FLOAT: u8 = 4;
const T_DOUBLE: u8 = 5;
const T_LONGLONG: u8 = 8;
const T_INT24: u8 = 9;
const T_DATE: u8 = 10;
const T_YEAR: u8 = 13;
const T_VARCHAR: u8 = 15;
const T_BIT: u8 = 16;
const T_TIMESTAMP2: u8 = 17;
const T_DATETIME2: u8 = 18;
const T_TIME2: u8 = 19;
const T_JSON: u8 = 245;
const T_ENUM: u8 = 247;
const T_SET: u8 = 248;
const T_BLOB: u8 = 252;
const T_STRING: u8 = 254;
/// utf8mb4_0900_ai_ci and binary.
const UTF8MB4: u64 = 255;
const BINARY: u64 = 63;
/// Rows event flag: the last event of a statement (table maps end).
pub const STMT_END: u16 = 1;

/// How one column travels: MySQL type code, its table-map metadata, and
/// for strings the collation.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnType {
    pub code: u8,
    pub meta: Vec<u8>,
    pub collation: Option<u64>,
    pub dt: DataType,
}

fn string_len_bytes(max: u32) -> usize {
    if max < 256 {
        1
    } else {
        2
    }
}

fn blob_len_bytes(max: u32) -> u8 {
    match max {
        0..=255 => 1,
        256..=65_535 => 2,
        65_536..=16_777_215 => 3,
        _ => 4,
    }
}

pub fn column_type(dt: DataType) -> ColumnType {
    let (code, meta, collation) = match dt {
        DataType::TinyInt { .. } => (T_TINY, vec![], None),
        DataType::SmallInt { .. } => (T_SHORT, vec![], None),
        DataType::MediumInt { .. } => (T_INT24, vec![], None),
        DataType::Int { .. } => (T_LONG, vec![], None),
        DataType::BigInt { .. } => (T_LONGLONG, vec![], None),
        DataType::Decimal { precision, scale } => (T_DECIMAL, vec![precision, scale], None),
        DataType::Float => (T_FLOAT, vec![4], None),
        DataType::Double => (T_DOUBLE, vec![8], None),
        DataType::Char { len } => string_type(len.saturating_mul(4), UTF8MB4),
        DataType::Binary { len } => string_type(len, BINARY),
        DataType::VarChar { len } | DataType::Enum { len } | DataType::Set { len } => {
            varchar_type(len.saturating_mul(4), UTF8MB4)
        }
        // Pack lengths: 1 or 2 bytes of index, 1..8 bytes of bitmask.
        DataType::EnumOf { members } => (
            T_STRING,
            vec![T_ENUM, 1 + u8::from(members.len() > 255)],
            None,
        ),
        DataType::SetOf { members } => {
            (T_STRING, vec![T_SET, members.len().div_ceil(8) as u8], None)
        }
        DataType::VarBinary { len } => varchar_type(len, BINARY),
        DataType::Text { max_len } => (T_BLOB, vec![blob_len_bytes(max_len)], Some(UTF8MB4)),
        DataType::Json => (T_JSON, vec![4], None),
        DataType::Blob { max_len } => (T_BLOB, vec![blob_len_bytes(max_len)], Some(BINARY)),
        DataType::Date => (T_DATE, vec![], None),
        DataType::DateTime { fsp } => (T_DATETIME2, vec![fsp], None),
        DataType::Timestamp { fsp } => (T_TIMESTAMP2, vec![fsp], None),
        DataType::Time { fsp } => (T_TIME2, vec![fsp], None),
        DataType::Year => (T_YEAR, vec![], None),
        DataType::Bit { width } => (T_BIT, vec![width % 8, width / 8], None),
        DataType::Null => (T_TINY, vec![], None),
    };
    ColumnType {
        code,
        meta,
        collation,
        dt,
    }
}

fn varchar_type(max: u32, coll: u64) -> (u8, Vec<u8>, Option<u64>) {
    let max = max.min(65_535) as u16;
    (T_VARCHAR, max.to_le_bytes().to_vec(), Some(coll))
}

/// CHAR/BINARY: the real type and the length's high bits share byte 0.
fn string_type(max: u32, coll: u64) -> (u8, Vec<u8>, Option<u64>) {
    let max = max.min(1023);
    let b0 = T_STRING ^ (((max & 0x300) >> 4) as u8);
    (T_STRING, vec![b0, (max & 0xff) as u8], Some(coll))
}

fn is_numeric(code: u8) -> bool {
    matches!(
        code,
        T_TINY | T_SHORT | T_INT24 | T_LONG | T_LONGLONG | T_DECIMAL | T_FLOAT | T_DOUBLE
    )
}

/// Bits packed most significant first (table-map optional metadata).
fn msb_bits(bits: &[bool]) -> Vec<u8> {
    let mut o = vec![0u8; bits.len().div_ceil(8)];
    for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
        o[i / 8] |= 0x80 >> (i % 8);
    }
    o
}

/// Bits packed least significant first (null and column bitmaps).
pub fn lsb_bits(bits: impl Iterator<Item = bool>) -> Vec<u8> {
    let mut o = Vec::new();
    for (i, b) in bits.enumerate() {
        if i % 8 == 0 {
            o.push(0);
        }
        if b {
            o[i / 8] |= 1 << (i % 8);
        }
    }
    o
}

fn tlv(o: &mut Vec<u8>, kind: u8, v: &[u8]) {
    o.push(kind);
    put_packed(o, v.len() as u64);
    o.extend_from_slice(v);
}

/// The columns a MySQL client sees: all but the hidden row id.
pub fn visible(def: &TableDef) -> Vec<usize> {
    def.visible_columns().map(|(i, _)| i).collect()
}

/// The visible columns' positions and how each travels.
fn layout(def: &TableDef) -> (Vec<usize>, Vec<ColumnType>) {
    let cols = visible(def);
    let types = cols
        .iter()
        .map(|&i| column_type(def.columns[i].data_type))
        .collect();
    (cols, types)
}

/// TABLE_MAP_EVENT body with binlog_row_metadata=FULL optional metadata
/// (signedness, charsets, names, primary key).
pub fn table_map_body(def: &TableDef) -> Vec<u8> {
    let (cols, types) = layout(def);
    let mut o = Vec::new();
    o.extend_from_slice(&(def.id as u64).to_le_bytes()[..6]);
    o.extend_from_slice(&1u16.to_le_bytes());
    for name in [&def.database, &def.name] {
        let n = &name.as_bytes()[..name.len().min(255)];
        o.push(n.len() as u8);
        o.extend_from_slice(n);
        o.push(0);
    }
    put_packed(&mut o, cols.len() as u64);
    o.extend(types.iter().map(|t| t.code));
    let meta: Vec<u8> = types.iter().flat_map(|t| t.meta.clone()).collect();
    put_packed(&mut o, meta.len() as u64);
    o.extend_from_slice(&meta);
    o.extend(lsb_bits(cols.iter().map(|&i| def.columns[i].nullable)));
    optional_metadata(&mut o, def, &cols, &types);
    o
}

fn optional_metadata(o: &mut Vec<u8>, def: &TableDef, cols: &[usize], types: &[ColumnType]) {
    let signed: Vec<bool> = types
        .iter()
        .filter(|t| is_numeric(t.code))
        .map(|t| t.dt.is_unsigned())
        .collect();
    tlv(o, 1, &msb_bits(&signed));
    // DEFAULT_CHARSET: utf8mb4, then (index among string columns,
    // collation) for each that differs.
    let mut cs = Vec::new();
    put_packed(&mut cs, UTF8MB4);
    let strings = types.iter().filter_map(|t| t.collation);
    for (k, coll) in strings.enumerate().filter(|(_, c)| *c != UTF8MB4) {
        put_packed(&mut cs, k as u64);
        put_packed(&mut cs, coll);
    }
    tlv(o, 2, &cs);
    let mut names = Vec::new();
    for &i in cols {
        let n = def.columns[i].name.as_bytes();
        put_packed(&mut names, n.len() as u64);
        names.extend_from_slice(n);
    }
    tlv(o, 4, &names);
    let enum_sets = member_lists(types);
    for (kind, set) in [(5, true), (6, false)] {
        let lists: Vec<_> = enum_sets.iter().filter(|(_, s)| *s == set).collect();
        if !lists.is_empty() {
            tlv(o, kind, &str_values(lists.iter().map(|(m, _)| *m)));
        }
    }
    if def.hidden_row_id.is_none() {
        if let Some(pk) = def.indexes.first() {
            let mut keys = Vec::new();
            for c in &pk.columns {
                let pos = cols.iter().position(|x| x == c).unwrap_or(0);
                put_packed(&mut keys, pos as u64);
            }
            tlv(o, 8, &keys);
        }
    }
    if !enum_sets.is_empty() {
        let mut cs = Vec::new();
        put_packed(&mut cs, UTF8MB4);
        tlv(o, 10, &cs); // ENUM_AND_SET_DEFAULT_CHARSET
    }
}

/// The ENUM and SET columns' members, in column order (whether a SET).
fn member_lists(types: &[ColumnType]) -> Vec<(Members, bool)> {
    types.iter().filter_map(|t| t.dt.members()).collect()
}

/// SET_STR_VALUE / ENUM_STR_VALUE: per column, the count and each member.
fn str_values(lists: impl Iterator<Item = Members>) -> Vec<u8> {
    let mut o = Vec::new();
    for m in lists {
        put_packed(&mut o, m.len() as u64);
        for name in m.names() {
            put_packed(&mut o, name.len() as u64);
            o.extend_from_slice(name.as_bytes());
        }
    }
    o
}

/// A rows event's body: `images` are (before, after) pairs for updates,
/// single images otherwise, each holding every visible column.
pub fn rows_body(def: &TableDef, flags: u16, update: bool, images: &[&[Value]]) -> Vec<u8> {
    let (cols, types) = layout(def);
    let mut o = Vec::new();
    o.extend_from_slice(&(def.id as u64).to_le_bytes()[..6]);
    o.extend_from_slice(&flags.to_le_bytes());
    o.extend_from_slice(&2u16.to_le_bytes()); // extra data: none
    put_packed(&mut o, cols.len() as u64);
    let all = lsb_bits(cols.iter().map(|_| true));
    o.extend_from_slice(&all);
    if update {
        o.extend_from_slice(&all);
    }
    for row in images {
        o.extend(lsb_bits(cols.iter().map(|&i| row[i].is_null())));
        for (t, &i) in types.iter().zip(&cols) {
            if !row[i].is_null() {
                put_value(&mut o, t, &row[i]);
            }
        }
    }
    o
}

fn int_bytes(o: &mut Vec<u8>, v: &Value, n: usize) {
    let x = match v {
        Value::UInt(u) => *u,
        other => other.to_i64().unwrap_or(0) as u64,
    };
    o.extend_from_slice(&x.to_le_bytes()[..n]);
}

fn bytes_of(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => other.to_string().into_bytes(),
    }
}

/// One non-NULL value in the column's row-image form.
pub fn put_value(o: &mut Vec<u8>, t: &ColumnType, v: &Value) {
    match t.code {
        T_TINY => int_bytes(o, v, 1),
        T_SHORT => int_bytes(o, v, 2),
        T_INT24 => int_bytes(o, v, 3),
        T_LONG => int_bytes(o, v, 4),
        T_LONGLONG => int_bytes(o, v, 8),
        T_YEAR => {
            let y = v.to_i64().unwrap_or(0);
            o.push(if y == 0 { 0 } else { (y - 1900) as u8 });
        }
        T_FLOAT => o.extend_from_slice(&(v.to_f64().unwrap_or(0.0) as f32).to_le_bytes()),
        T_DOUBLE => o.extend_from_slice(&v.to_f64().unwrap_or(0.0).to_le_bytes()),
        T_DECIMAL => put_decimal(o, &v.to_string(), t.meta[0], t.meta[1]),
        T_VARCHAR => {
            let b = bytes_of(v);
            let max = u16::from_le_bytes([t.meta[0], t.meta[1]]) as u32;
            put_len(o, b.len(), string_len_bytes(max));
            o.extend_from_slice(&b);
        }
        T_STRING if matches!(t.meta[0], T_ENUM | T_SET) => put_enum_set(o, t, v),
        T_STRING => {
            let b = bytes_of(v);
            let max = ((((t.meta[0] as u32) << 4) & 0x300) ^ 0x300) + t.meta[1] as u32;
            put_len(o, b.len(), string_len_bytes(max));
            o.extend_from_slice(&b);
        }
        T_BLOB => {
            let b = bytes_of(v);
            put_len(o, b.len(), t.meta[0] as usize);
            o.extend_from_slice(&b);
        }
        T_JSON => {
            let doc = super::json::encode(&bytes_of(v));
            put_len(o, doc.len(), 4);
            o.extend_from_slice(&doc);
        }
        T_BIT => {
            let n = (t.meta[1] as usize * 8 + t.meta[0] as usize).div_ceil(8);
            let x = v.to_i64().unwrap_or(0) as u64;
            o.extend_from_slice(&x.to_be_bytes()[8 - n..]);
        }
        _ => super::rows_time::put_temporal(o, t, v),
    }
}

/// An ENUM's member index or a SET's bitmask, in the pack length.
fn put_enum_set(o: &mut Vec<u8>, t: &ColumnType, v: &Value) {
    let n = match t.dt.members() {
        Some((m, true)) => m.mask_of(&bytes_of(v)),
        Some((m, false)) => m.index_of(&bytes_of(v)).unwrap_or(0) as u64,
        None => 0,
    };
    o.extend_from_slice(&n.to_le_bytes()[..t.meta[1] as usize]);
}

fn put_len(o: &mut Vec<u8>, len: usize, n: usize) {
    o.extend_from_slice(&(len as u64).to_le_bytes()[..n]);
}

const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// MySQL's binary DECIMAL: groups of nine digits in four big-endian
/// bytes (a partial group in fewer), negative values inverted, the sign
/// bit flipped so that the bytes sort as the numbers do.
pub fn put_decimal(o: &mut Vec<u8>, text: &str, precision: u8, scale: u8) {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let (intg, scale) = (precision.saturating_sub(scale) as usize, scale as usize);
    let int = int.trim_start_matches('0');
    let int = format!("{:0>intg$}", &int[int.len().saturating_sub(intg)..]);
    let mut frac: String = frac.chars().take(scale).collect();
    while frac.len() < scale {
        frac.push('0');
    }
    let start = o.len();
    put_groups(o, &int, true);
    put_groups(o, &frac, false);
    if neg {
        for b in &mut o[start..] {
            *b = !*b;
        }
    }
    if o.len() > start {
        o[start] ^= 0x80;
    }
}

/// Digits in groups of nine; the partial group leads for the integer
/// part and trails for the fraction.
fn put_groups(o: &mut Vec<u8>, digits: &str, lead_partial: bool) {
    let partial = digits.len() % 9;
    let mut chunks: Vec<&str> = Vec::new();
    if lead_partial && partial > 0 {
        chunks.push(&digits[..partial]);
    }
    let full_from = if lead_partial { partial } else { 0 };
    let full_to = if lead_partial {
        digits.len()
    } else {
        digits.len() - partial
    };
    for k in (full_from..full_to).step_by(9) {
        chunks.push(&digits[k..k + 9]);
    }
    if !lead_partial && partial > 0 {
        chunks.push(&digits[full_to..]);
    }
    for c in chunks {
        let n = DIG2BYTES[c.len()];
        let x: u32 = c.parse().unwrap_or(0);
        o.extend_from_slice(&x.to_be_bytes()[4 - n..]);
    }
}
