//! MySQL's binary JSON, the form a JSON column takes in row events
//! (MYSQL_TYPE_JSON), made from the JSON text lockstep keeps. Layout, per
//! the MySQL internals documentation: a type byte, then the value;
//! objects and arrays are "small" (2-byte counts and offsets) unless they
//! need more than 64 KiB, then "large" (4 bytes). Offsets count from the
//! container's first byte after its type.

use serde_json::Value as J;

const SMALL_OBJECT: u8 = 0x00;
const SMALL_ARRAY: u8 = 0x02;
/// LARGE_* is SMALL_* + 1.
const LITERAL: u8 = 0x04;
const INT16: u8 = 0x05;
const INT32: u8 = 0x07;
const INT64: u8 = 0x09;
const UINT64: u8 = 0x0a;
const DOUBLE: u8 = 0x0b;
const STRING: u8 = 0x0c;

/// The binary document for JSON text (text that does not parse, which
/// a JSON column should never hold, travels as a JSON string).
pub fn encode(text: &[u8]) -> Vec<u8> {
    let doc = serde_json::from_slice::<J>(text)
        .unwrap_or_else(|_| J::String(String::from_utf8_lossy(text).into_owned()));
    let (kind, body) = value(&doc);
    let mut o = Vec::with_capacity(body.len() + 1);
    o.push(kind);
    o.extend_from_slice(&body);
    o
}

/// A value's type byte and bytes.
fn value(v: &J) -> (u8, Vec<u8>) {
    match v {
        J::Null => (LITERAL, vec![0]),
        J::Bool(b) => (LITERAL, vec![if *b { 1 } else { 2 }]),
        J::Number(n) => number(n),
        J::String(s) => {
            let mut o = Vec::with_capacity(s.len() + 5);
            put_varlen(&mut o, s.len());
            o.extend_from_slice(s.as_bytes());
            (STRING, o)
        }
        J::Array(items) => {
            let items: Vec<(&[u8], &J)> = items.iter().map(|v| (&b""[..], v)).collect();
            container(&items, false)
        }
        J::Object(map) => {
            // MySQL's key order: shorter keys first, then by bytes.
            let mut items: Vec<(&[u8], &J)> = map.iter().map(|(k, v)| (k.as_bytes(), v)).collect();
            items.sort_by(|a, b| (a.0.len(), a.0).cmp(&(b.0.len(), b.0)));
            container(&items, true)
        }
    }
}

/// Integers in the narrowest signed type (UINT64 only past i64), the
/// rest as DOUBLE: what MySQL makes of a number in JSON text.
fn number(n: &serde_json::Number) -> (u8, Vec<u8>) {
    if let Some(i) = n.as_i64() {
        if let Ok(x) = i16::try_from(i) {
            return (INT16, x.to_le_bytes().to_vec());
        }
        if let Ok(x) = i32::try_from(i) {
            return (INT32, x.to_le_bytes().to_vec());
        }
        return (INT64, i.to_le_bytes().to_vec());
    }
    if let Some(u) = n.as_u64() {
        return (UINT64, u.to_le_bytes().to_vec());
    }
    (DOUBLE, n.as_f64().unwrap_or(0.0).to_le_bytes().to_vec())
}

/// Whether a value of this type sits in its value entry itself.
fn inlined(kind: u8, large: bool) -> bool {
    match kind {
        LITERAL | INT16 | 0x06 => true,
        INT32 | 0x08 => large,
        _ => false,
    }
}

fn container(items: &[(&[u8], &J)], object: bool) -> (u8, Vec<u8>) {
    let values: Vec<(u8, Vec<u8>)> = items.iter().map(|(_, v)| value(v)).collect();
    let base = if object { SMALL_OBJECT } else { SMALL_ARRAY };
    match layout(items, &values, object, false) {
        Some(small) => (base, small),
        None => (
            base + 1,
            layout(items, &values, object, true).unwrap_or_default(),
        ),
    }
}

/// The container's bytes with 2- or 4-byte offsets; None when the small
/// form cannot address them.
fn layout(
    items: &[(&[u8], &J)],
    values: &[(u8, Vec<u8>)],
    object: bool,
    large: bool,
) -> Option<Vec<u8>> {
    let w = if large { 4 } else { 2 };
    let n = items.len();
    let key_entries = if object { n * (w + 2) } else { 0 };
    let header = 2 * w + key_entries + n * (1 + w);
    let keys: usize = if object {
        items.iter().map(|(k, _)| k.len()).sum()
    } else {
        0
    };
    let mut data = Vec::new();
    let mut entries = Vec::with_capacity(n * (1 + w));
    let mut at = header + keys;
    for (kind, bytes) in values {
        entries.push(*kind);
        if inlined(*kind, large) {
            let mut b = bytes.clone();
            b.resize(w, 0);
            entries.extend_from_slice(&b);
        } else {
            put_offset(&mut entries, at, w)?;
            data.extend_from_slice(bytes);
            at += bytes.len();
        }
    }
    let mut o = Vec::with_capacity(at);
    put_offset(&mut o, n, w)?;
    put_offset(&mut o, at, w)?;
    let mut key_at = header;
    for (k, _) in items.iter().filter(|_| object) {
        put_offset(&mut o, key_at, w)?;
        o.extend_from_slice(&(k.len().min(u16::MAX as usize) as u16).to_le_bytes());
        key_at += k.len();
    }
    o.extend_from_slice(&entries);
    for (k, _) in items.iter().filter(|_| object) {
        o.extend_from_slice(k);
    }
    o.extend_from_slice(&data);
    debug_assert_eq!(o.len(), at);
    Some(o)
}

fn put_offset(o: &mut Vec<u8>, x: usize, w: usize) -> Option<()> {
    if w == 2 {
        o.extend_from_slice(&u16::try_from(x).ok()?.to_le_bytes());
    } else {
        o.extend_from_slice(&u32::try_from(x).ok()?.to_le_bytes());
    }
    Some(())
}

/// A string's length: 7 bits a byte, low first, the high bit set while
/// more follow.
fn put_varlen(o: &mut Vec<u8>, mut n: usize) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            o.push(b);
            return;
        }
        o.push(b | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_small_containers() {
        assert_eq!(encode(b"null"), [LITERAL, 0]);
        assert_eq!(encode(b"true"), [LITERAL, 1]);
        assert_eq!(encode(b"-2"), [INT16, 0xfe, 0xff]);
        assert_eq!(encode(b"70000"), [INT32, 0x70, 0x11, 0x01, 0]);
        assert_eq!(encode(b"\"ab\""), [STRING, 2, b'a', b'b']);
        assert_eq!(encode(b"18446744073709551615")[0], UINT64);
        assert_eq!(
            encode(b"1.5"),
            [&[DOUBLE][..], &1.5f64.to_le_bytes()].concat()
        );
        // [1]: count 1, size 7, entry INT16 inline.
        assert_eq!(encode(b"[1]"), [SMALL_ARRAY, 1, 0, 7, 0, INT16, 1, 0]);
        // {"bb":"x","a":true}: keys sorted a, bb; the string after them.
        let o = encode(br#"{"bb":"x","a":true}"#);
        assert_eq!(o[0], SMALL_OBJECT);
        let body = &o[1..];
        assert_eq!(&body[..4], &[2, 0, 23, 0]);
        assert_eq!(&body[4..12], &[18, 0, 1, 0, 19, 0, 2, 0]);
        assert_eq!(&body[12..18], &[LITERAL, 1, 0, STRING, 21, 0]);
        assert_eq!(&body[18..], b"abb\x01x");
    }

    #[test]
    fn large_containers_and_long_strings() {
        let long = format!("[\"{}\"]", "z".repeat(70_000));
        let o = encode(long.as_bytes());
        assert_eq!(o[0], SMALL_ARRAY + 1);
        assert_eq!(&o[1..5], &1u32.to_le_bytes());
        // varlen 70000 = 0x11170: 0xf0 0xa2 0x04.
        assert_eq!(&o[1 + 8..1 + 13], &[STRING, 13, 0, 0, 0]);
        assert_eq!(&o[1 + 13..1 + 16], &[0xf0, 0xa2, 0x04]);
        assert_eq!(encode(b"not json")[0], STRING);
    }
}
