//! Text columns declared in a character set other than utf8mb4. Rows
//! hold UTF-8 whatever the set; what the set decides on store is the
//! repertoire (a latin1 column cannot hold '中': 1366, a warning and '?'
//! outside strict mode) and how bytes that are not text are read: a
//! binary string (hex or `_binary` literal, bytes under SET NAMES binary)
//! assigned to the column is text in the column's set, so gbk EE 5C is
//! one character, not a backslash.

use crate::charset::{self, Charset};
use lockstep_types::Error;

/// `bytes` as a column in `cs` stores them (UTF-8): valid UTF-8 is text
/// checked against the repertoire, other bytes are decoded from `cs`.
/// Err: MySQL's 1366, with what a lenient store keeps instead ('?' for
/// what cannot be held).
pub fn store(bytes: Vec<u8>, cs: &Charset, column: &str) -> Result<Vec<u8>, (Error, Vec<u8>)> {
    match String::from_utf8(bytes) {
        Ok(s) => text(s, cs, column),
        Err(e) => decode(e.into_bytes(), cs, column),
    }
}

/// A binary string's bytes as text of `cs` (1366 if they are not).
pub fn decode(bytes: Vec<u8>, cs: &Charset, column: &str) -> Result<Vec<u8>, (Error, Vec<u8>)> {
    match charset::decode_strict(&bytes, cs) {
        Some(s) => Ok(s.into_bytes()),
        None => {
            let kept = charset::decode(&bytes, cs).into_owned().into_bytes();
            Err((super::wellformed::incorrect_string(&bytes, column), kept))
        }
    }
}

fn text(s: String, cs: &Charset, column: &str) -> Result<Vec<u8>, (Error, Vec<u8>)> {
    let Some(c) = charset::first_unrepresentable(&s, cs) else {
        return Ok(s.into_bytes());
    };
    let at = s.find(c).unwrap_or(0);
    let error = super::wellformed::lacking(&s.as_bytes()[at..], column);
    let kept = charset::encode(&s, cs);
    let kept = charset::decode(&kept, cs).into_owned().into_bytes();
    Err((error, kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repertoire_and_binary_strings() {
        let latin1 = charset::lookup("latin1").unwrap();
        let gbk = charset::lookup("gbk").unwrap();
        assert_eq!(store("é".into(), latin1, "c").unwrap(), "é".as_bytes());
        let (e, kept) = store("a中b".into(), latin1, "c").unwrap_err();
        assert_eq!(e.code.number(), 1366);
        assert!(e.message.contains("'\\xE4\\xB8\\xADb'"), "{}", e.message);
        assert_eq!(kept, b"a?b");
        // gbk EE 5C is one character; a lone lead byte is not text.
        assert_eq!(store(vec![0xEE, 0x5C], gbk, "c").unwrap(), "頫".as_bytes());
        assert!(store(vec![0x81], gbk, "c").is_err());
        assert_eq!(decode(vec![0xE9], latin1, "c").unwrap(), "é".as_bytes());
    }
}
