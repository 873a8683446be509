//! SQL values, their MySQL comparison rules, their text form, and the
//! order-preserving byte encoding that index keys are built from.

use crate::time::{Date, DateTime};
use crate::Decimal;
use std::cmp::Ordering;
use std::fmt;

/// A single SQL value. Strings are bytes (MySQL strings carry a charset;
/// lockstep stores utf8mb4 bytes and compares them in binary order).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub enum Value {
    #[default]
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    Bytes(Vec<u8>),
    Date(Date),
    DateTime(DateTime),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Integer view, as MySQL converts in a numeric context (strings parse
    /// their leading number, fractions round half away from zero).
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(*i),
            Value::UInt(u) => Some(*u as i64),
            Value::Double(d) => Some(d.round() as i64),
            Value::Decimal(d) => d.round().to_i64(),
            Value::Bytes(b) => Some(parse_number_prefix(b).round() as i64),
            Value::Date(d) => Some(d.year as i64 * 10000 + d.month as i64 * 100 + d.day as i64),
            Value::DateTime(dt) => Some(
                (dt.date.year as i64 * 10000 + dt.date.month as i64 * 100 + dt.date.day as i64)
                    * 1_000_000
                    + dt.hour as i64 * 10000
                    + dt.minute as i64 * 100
                    + dt.second as i64,
            ),
        }
    }

    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(*i as f64),
            Value::UInt(u) => Some(*u as f64),
            Value::Double(d) => Some(*d),
            Value::Decimal(d) => d.to_f64(),
            Value::Bytes(b) => Some(parse_number_prefix(b)),
            Value::Date(_) | Value::DateTime(_) => self.to_i64().map(|i| i as f64),
        }
    }

    pub fn to_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(Decimal::from(*i)),
            Value::UInt(u) => Some(Decimal::from(*u)),
            Value::Double(d) => Decimal::from_f64(*d),
            Value::Decimal(d) => Some(*d),
            Value::Bytes(b) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.trim().parse::<Decimal>().ok())
                .or_else(|| Decimal::from_f64(parse_number_prefix(b))),
            Value::Date(_) | Value::DateTime(_) => self.to_i64().map(Decimal::from),
        }
    }

    /// Truth value in a boolean context; NULL is unknown (None).
    pub fn truth(&self) -> Option<bool> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(*i != 0),
            Value::UInt(u) => Some(*u != 0),
            Value::Double(d) => Some(*d != 0.0),
            Value::Decimal(d) => Some(!d.is_zero()),
            Value::Bytes(_) => self.to_f64().map(|f| f != 0.0),
            Value::Date(_) | Value::DateTime(_) => Some(true),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(
            self,
            Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
        )
    }

    /// Compares two non-NULL values the way MySQL does in a comparison
    /// operator: numbers numerically (exactly where both are exact), a
    /// string against a number as a number, temporal values against
    /// strings by parsing the string. NULL on either side gives None.
    pub fn sql_cmp(&self, other: &Value) -> Option<Ordering> {
        use Value::*;
        Some(match (self, other) {
            (Null, _) | (_, Null) => return None,
            (Int(a), Int(b)) => a.cmp(b),
            (UInt(a), UInt(b)) => a.cmp(b),
            (Int(a), UInt(b)) => (*a as i128).cmp(&(*b as i128)),
            (UInt(a), Int(b)) => (*a as i128).cmp(&(*b as i128)),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (DateTime(a), DateTime(b)) => a.cmp(b),
            (Date(a), DateTime(b)) => crate::DateTime {
                date: *a,
                ..Default::default()
            }
            .cmp(b),
            (DateTime(a), Date(b)) => a.cmp(&crate::DateTime {
                date: *b,
                ..Default::default()
            }),
            (Date(_) | DateTime(_), Bytes(s)) => {
                // A stored '2024-00-10' (sql_mode without NO_ZERO_IN_DATE)
                // equals its text.
                let parsed = std::str::from_utf8(s)
                    .ok()
                    .and_then(crate::DateTime::parse_with_zero_parts)?;
                self.sql_cmp(&DateTime(parsed))?
            }
            (Bytes(_), Date(_) | DateTime(_)) => other.sql_cmp(self)?.reverse(),
            (Double(_), _) | (_, Double(_)) | (Bytes(_), _) | (_, Bytes(_)) => {
                let (a, b) = (self.to_f64()?, other.to_f64()?);
                a.partial_cmp(&b)?
            }
            (a, b) if a.is_numeric() && b.is_numeric() => a.to_decimal()?.cmp(&b.to_decimal()?),
            (a, b) => a.to_f64()?.partial_cmp(&b.to_f64()?)?,
        })
    }

    /// Total order for sorting and grouping: NULL first (as MySQL sorts
    /// ascending), then by `sql_cmp`.
    pub fn sort_cmp(&self, other: &Value) -> Ordering {
        match (self.is_null(), other.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => self.sql_cmp(other).unwrap_or(Ordering::Equal),
        }
    }

    /// The text-protocol form (what `mysql` prints). None for NULL.
    pub fn to_text(&self) -> Option<Vec<u8>> {
        Some(match self {
            Value::Null => return None,
            Value::Bytes(b) => b.clone(),
            other => other.to_string().into_bytes(),
        })
    }

    /// Appends an order-preserving encoding: comparing the bytes of two
    /// encodings gives the `sort_cmp` order of values of the same column
    /// type. The caller converts a value to the column's type first.
    pub fn encode_key(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => out.push(KEY_NULL),
            Value::Int(i) => {
                out.push(KEY_FIXED8);
                out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes());
            }
            Value::UInt(u) => {
                out.push(KEY_FIXED8);
                out.extend_from_slice(&u.to_be_bytes());
            }
            Value::Double(d) => {
                out.push(KEY_FIXED8);
                let bits = d.to_bits();
                let ordered = if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | (1 << 63)
                };
                out.extend_from_slice(&ordered.to_be_bytes());
            }
            Value::Decimal(d) => {
                out.push(KEY_DECIMAL);
                d.encode_key(out);
            }
            Value::Bytes(b) => encode_bytes_key(b, out),
            Value::Date(d) => {
                out.push(KEY_FIXED8);
                out.extend_from_slice(&((d.to_days() as u64) ^ (1 << 63)).to_be_bytes());
            }
            Value::DateTime(dt) => {
                out.push(KEY_FIXED8);
                out.extend_from_slice(&((dt.to_unix_micros() as u64) ^ (1 << 63)).to_be_bytes());
            }
        }
    }

    /// A hashable, equality-comparable form for GROUP BY, DISTINCT and hash
    /// joins: numbers that compare equal produce the same key.
    pub fn group_key(&self, out: &mut Vec<u8>) {
        match self {
            Value::Int(_) => self.encode_key(out),
            // Integral values share the integer form, so 5, 5.0 and an
            // unsigned 5 group together.
            Value::UInt(u) if *u <= i64::MAX as u64 => Value::Int(*u as i64).encode_key(out),
            Value::UInt(_) | Value::Decimal(_) => match self.to_decimal() {
                Some(d) => match d.normalize() {
                    n if n.scale() == 0 && n.to_i64().is_some() => {
                        Value::Int(n.to_i64().expect("checked above")).encode_key(out)
                    }
                    n => Value::Decimal(n).encode_key(out),
                },
                None => self.encode_key(out),
            },
            Value::Double(d) if d.fract() == 0.0 && d.abs() < 1e18 => {
                Value::Int(*d as i64).group_key(out)
            }
            other => other.encode_key(out),
        }
    }
}

/// Leading number of a string, as MySQL converts '12abc' to 12 (and
/// anything without a number to 0).
fn parse_number_prefix(b: &[u8]) -> f64 {
    let s = std::str::from_utf8(b).unwrap_or("");
    let s = s.trim_start();
    let mut end = 0;
    let bytes = s.as_bytes();
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_e = false;
    while end < bytes.len() {
        let c = bytes[end];
        match c {
            b'0'..=b'9' => seen_digit = true,
            b'+' | b'-' if end == 0 || matches!(bytes[end - 1], b'e' | b'E') => {}
            b'.' if !seen_dot && !seen_e => seen_dot = true,
            b'e' | b'E' if seen_digit && !seen_e => seen_e = true,
            _ => break,
        }
        end += 1;
    }
    let mut candidate = &s[..end];
    while !candidate.is_empty() {
        if let Ok(v) = candidate.parse::<f64>() {
            return v;
        }
        candidate = &candidate[..candidate.len() - 1];
    }
    0.0
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(i) => write!(f, "{i}"),
            Value::UInt(u) => write!(f, "{u}"),
            Value::Double(d) => f.write_str(&format_double(*d)),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Date(d) => write!(f, "{d}"),
            Value::DateTime(dt) => write!(f, "{dt}"),
        }
    }
}

/// Formats a DOUBLE as MySQL does: shortest round-trip digits, exponent
/// form for very large or small magnitudes.
pub fn format_double(d: f64) -> String {
    if d.is_nan() || d.is_infinite() {
        return "NULL".into();
    }
    if d == 0.0 {
        return "0".into();
    }
    let abs = d.abs();
    if (1e-15..1e15).contains(&abs) {
        format!("{d}")
    } else {
        format!("{d:e}")
    }
}

/// A FLOAT's text as MySQL prints it: the single-precision value to at
/// most 6 significant digits (FLT_DIG: 1.1 rather than 1.100000023841858,
/// 123457000 for 123456789), in `format_double`'s notation.
pub fn format_float(d: f64) -> String {
    let f = d as f32;
    if !f.is_finite() {
        return "NULL".into();
    }
    let six = format!("{f:.5e}").parse::<f64>().unwrap_or(f64::from(f));
    format_double(six)
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        self.sort_cmp(other) == Ordering::Equal && self.is_null() == other.is_null()
    }
}

#[cfg(test)]
mod key_column_tests {
    use super::*;

    #[test]
    fn key_columns_split_where_they_were_joined() {
        let vals = [
            Value::Int(-3),
            Value::Bytes(b"a\0b".to_vec()),
            Value::Null,
            Value::Decimal("1.25".parse().expect("a decimal literal")),
            Value::Bytes(Vec::new()),
        ];
        let (mut key, mut ends) = (Vec::new(), Vec::new());
        for v in &vals {
            v.encode_key(&mut key);
            ends.push(key.len());
        }
        let mut start = 0;
        for end in ends {
            assert_eq!(key_column_end(&key, start), Some(end));
            start = end;
        }
        assert_eq!(key_column_end(&key, start), None);
        assert_eq!(key_column_end(&[KEY_BYTES, b'x', 0], 0), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        v.encode_key(&mut out);
        out
    }

    #[test]
    fn key_encoding_preserves_order() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in ints.windows(2) {
            assert!(key(&Value::Int(w[0])) < key(&Value::Int(w[1])));
        }
        let doubles = [-1e10, -1.5, -0.0, 0.5, 2.0, 1e300];
        for w in doubles.windows(2) {
            assert!(key(&Value::Double(w[0])) <= key(&Value::Double(w[1])));
        }
        assert!(key(&Value::Null) < key(&Value::Int(i64::MIN)));
        let mut ab = key(&Value::str("a"));
        ab.extend(key(&Value::Int(9)));
        let mut abc = key(&Value::str("ab"));
        abc.extend(key(&Value::Int(0)));
        assert!(ab < abc, "a prefix string sorts first in a compound key");
        let d = |s: &str| Value::Decimal(s.parse().expect("decimal literal"));
        assert!(key(&d("-1.5")) < key(&d("-1.25")));
        assert!(key(&d("1.25")) < key(&d("10")));
    }

    #[test]
    fn keys_are_self_delimiting() {
        let mut k = key(&Value::str("a\0b"));
        let first = k.len();
        k.extend(key(&Value::Null));
        k.extend(key(&Value::Int(3)));
        assert_eq!(encoded_prefix_len(&k, 1), Some(first));
        assert_eq!(encoded_prefix_len(&k, 3), Some(k.len()));
        assert_eq!(encoded_prefix_len(&k, 4), None);
    }

    #[test]
    fn string_keys_escape_every_zero_byte() {
        let cases: [(&[u8], &[u8]); 5] = [
            (b"", b""),
            (b"abc", b"abc"),
            (b"\0", b"\0\xFF"),
            (b"a\0\0b", b"a\0\xFF\0\xFFb"),
            (b"\0a\0", b"\0\xFFa\0\xFF"),
        ];
        for (text, escaped) in cases {
            let mut want = vec![KEY_BYTES];
            want.extend_from_slice(escaped);
            want.extend_from_slice(&[0, 0]);
            let mut got = Vec::new();
            encode_bytes_key(text, &mut got);
            assert_eq!(got, want, "{text:?}");
            assert_eq!(key(&Value::Bytes(text.to_vec())), want);
        }
        assert!(key(&Value::str("a")) < key(&Value::Bytes(b"a\0".to_vec())));
        assert!(key(&Value::Bytes(b"a\0".to_vec())) < key(&Value::str("a\x01")));
    }

    #[test]
    fn mysql_comparisons() {
        assert_eq!(
            Value::Int(2).sql_cmp(&Value::str("10")),
            Some(Ordering::Less)
        );
        assert_eq!(
            Value::UInt(u64::MAX).sql_cmp(&Value::Int(-1)),
            Some(Ordering::Greater)
        );
        assert_eq!(Value::Null.sql_cmp(&Value::Int(1)), None);
        assert_eq!(Value::str("12abc").to_i64(), Some(12));
        assert_eq!(Value::str("abc").to_i64(), Some(0));
    }
}

/// Tags of the key encoding: NULL sorts first; the tag also tells the
/// width of what follows, so encoded keys are self-delimiting.
const KEY_NULL: u8 = 0x00;
const KEY_FIXED8: u8 = 0x10;
/// Integer part (32 bytes) and fraction (16 bytes), see `Decimal::encode_key`.
const KEY_DECIMAL: u8 = 0x11;
const KEY_BYTES: u8 = 0x12;

/// 64-bit hash of an encoded key under `seed`: eight bytes a step, then
/// MurmurHash3's fmix64 finalizer, so that the low bits (hash-table
/// buckets) and the high bits (shards, control bytes) all depend on every
/// byte. Used by the point index over clustered records and by the lock
/// table's key identity.
pub fn hash_key(seed: u64, key: &[u8]) -> u64 {
    const M: u64 = 0xFF51_AFD7_ED55_8CCD;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut words = key.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("chunks of 8 bytes"));
        h = (h ^ w).wrapping_mul(M).rotate_left(29);
    }
    let mut tail = 0u64;
    for (i, b) in words.remainder().iter().enumerate() {
        tail |= u64::from(*b) << (8 * i);
    }
    h ^= tail;
    h ^= h >> 33;
    h = h.wrapping_mul(M);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// Length in bytes of the first `columns` encoded values at the start of
/// `key` (see `Value::encode_key`), so that a secondary-index entry can be
/// split into its index key and the primary key that follows.
pub fn encoded_prefix_len(key: &[u8], columns: usize) -> Option<usize> {
    let mut pos = 0;
    for _ in 0..columns {
        let tag = *key.get(pos)?;
        pos += 1;
        match tag {
            KEY_NULL => {}
            KEY_FIXED8 => pos += 8,
            KEY_DECIMAL => pos += 48,
            KEY_BYTES => loop {
                let b = *key.get(pos)?;
                pos += 1;
                if b == 0 {
                    let next = *key.get(pos)?;
                    pos += 1;
                    if next == 0 {
                        break;
                    }
                }
            },
            _ => return None,
        }
    }
    (pos <= key.len()).then_some(pos)
}

/// The key form of a string (what `Value::Bytes(b).encode_key` writes),
/// without building the value.
/// Where the key column that starts at `start` of an encoded key ends
/// (see `Value::encode_key` and `encode_bytes_key`); None past the end or
/// on bytes no encoder writes.
pub fn key_column_end(key: &[u8], start: usize) -> Option<usize> {
    let end = match *key.get(start)? {
        KEY_NULL => start + 1,
        KEY_FIXED8 => start + 9,
        KEY_DECIMAL => start + 1 + decimal_key_len(),
        KEY_BYTES => {
            // Terminated by 0x00 0x00; a 0x00 inside is escaped as 0x00 0xFF.
            let mut i = start + 1;
            loop {
                match (key.get(i)?, key.get(i + 1)?) {
                    (0, 0) => break i + 2,
                    (0, _) => i += 2,
                    _ => i += 1,
                }
            }
        }
        _ => return None,
    };
    (end <= key.len()).then_some(end)
}

/// Bytes of a decimal's key after its tag (fixed: `Decimal::encode_key`),
/// measured once.
fn decimal_key_len() -> usize {
    static LEN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LEN.get_or_init(|| {
        let mut zero = Vec::new();
        crate::Decimal::ZERO.encode_key(&mut zero);
        zero.len()
    })
}

pub fn encode_bytes_key(b: &[u8], out: &mut Vec<u8>) {
    // 0x00 escaped as 0x00 0xFF, terminated by 0x00 0x00, so that a prefix
    // sorts before its extensions in multi-column keys.
    out.reserve(b.len() + 3);
    out.push(KEY_BYTES);
    // Text rarely holds 0x00: `contains` looks a word at a time, and the
    // bytes are then copied in one go instead of pushed one by one (DISTINCT
    // and GROUP BY build a key per row).
    if !b.contains(&0) {
        out.extend_from_slice(b);
    } else {
        let mut runs = b.split(|&byte| byte == 0);
        out.extend_from_slice(runs.next().expect("split yields at least one run"));
        for run in runs {
            out.extend_from_slice(&[0, 0xFF]);
            out.extend_from_slice(run);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// Folds a string for case- and accent-insensitive comparison, as the
/// default collation (utf8mb4_0900_ai_ci) compares: lower case, and Latin
/// letters with diacritics reduced to their base letter. Index keys of
/// text columns are built from the folded form, so lookups agree with
/// comparisons.
pub fn fold_ci(b: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !needs_fold(b) {
        return std::borrow::Cow::Borrowed(b);
    }
    if b.is_ascii() {
        return std::borrow::Cow::Owned(b.to_ascii_lowercase());
    }
    let Ok(s) = std::str::from_utf8(b) else {
        return std::borrow::Cow::Owned(b.to_ascii_lowercase());
    };
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        for lc in ch.to_lowercase() {
            match base_letter(lc) {
                Some(base) => out.push_str(base),
                None => out.push(lc),
            }
        }
    }
    std::borrow::Cow::Owned(out.into_bytes())
}

/// Whether `b` has a byte folding could change (upper-case ASCII or any
/// non-ASCII). Most stored text folds to itself; this check runs on every
/// row a text sort or DISTINCT reads, so it has no per-byte early exit and
/// the compiler turns each 32-byte chunk into a few vector instructions.
fn needs_fold(b: &[u8]) -> bool {
    b.chunks(32).any(|chunk| {
        chunk.iter().fold(false, |acc, &c| {
            acc | (c >= 0x80) | (c.wrapping_sub(b'A') < 26)
        })
    })
}

/// Base letter of a lower-case Latin letter with a diacritic.
fn base_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'à'..='å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' => "d",
        'è'..='ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì'..='ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò'..='ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' => "t",
        'ù'..='ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

#[cfg(test)]
mod fold_tests {
    use super::fold_ci;

    #[test]
    fn folds_case_and_accents() {
        assert_eq!(&*fold_ci("HÉLLO☃".as_bytes()), "hello☃".as_bytes());
        assert_eq!(&*fold_ci(b"abc"), b"abc");
        assert_eq!(&*fold_ci(b"AbC"), b"abc");
        assert_eq!(&*fold_ci("Straße".as_bytes()), "strasse".as_bytes());
    }

    #[test]
    fn only_text_that_changes_is_copied() {
        use std::borrow::Cow;
        // Long enough for several chunks; the byte that needs folding sits
        // in the last, partial one.
        let mut long = b"83868641912-28773972837-60736120486-75162659906-".repeat(3);
        assert!(matches!(fold_ci(&long), Cow::Borrowed(_)));
        long.push(b'Z');
        assert_eq!(fold_ci(&long).last(), Some(&b'z'));
        // The edges of the upper-case range, and a non-ASCII byte.
        assert!(matches!(fold_ci(b"@[`{"), Cow::Borrowed(_)));
        assert!(matches!(fold_ci(b"A"), Cow::Owned(_)));
        assert!(matches!(fold_ci("é".as_bytes()), Cow::Owned(_)));
        assert!(matches!(fold_ci(b""), Cow::Borrowed(_)));
    }
}

#[cfg(test)]
mod float_text_tests {
    use super::format_float;

    #[test]
    fn a_float_prints_six_significant_digits_of_its_single_precision_value() {
        let cases = [
            (1.1, "1.1"),
            (123456789.0, "123457000"),
            (0.1234567, "0.123457"),
            (3.4e38, "3.4e38"),
            (-2.5, "-2.5"),
            (1234567.0, "1234570"),
            (0.0, "0"),
            (1e15, "1e15"),
            (0.00001234, "0.00001234"),
        ];
        for (v, text) in cases {
            assert_eq!(format_float(v), text, "{v}");
        }
    }
}
