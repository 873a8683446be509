//! Strings that must be valid in utf8mb4 (every text column and CHAR
//! value is stored as UTF-8): bytes that are not give MySQL's 1366 when
//! stored in a column and 1300 when converted (CONVERT ... USING, CAST AS
//! CHAR), where each bad byte becomes '?'.

use super::Env;
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::fmt::Write;

/// Bytes as MySQL quotes them in these messages: printable ASCII as is,
/// anything else as \xHH; at most `max` bytes, then "...".
fn printable(bytes: &[u8], max: usize) -> String {
    let mut out = String::with_capacity(bytes.len().min(max) * 4 + 3);
    for &b in bytes.iter().take(max) {
        match b {
            0x20..=0x7E => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02X}");
            }
        }
    }
    if bytes.len() > max {
        out.push_str("...");
    }
    out
}

/// 1366 for storing `bytes` (not UTF-8) in text column `column`: quoted
/// from the first bad byte, six bytes at most.
pub fn incorrect_string(bytes: &[u8], column: &str) -> Error {
    let from = std::str::from_utf8(bytes)
        .err()
        .map_or(0, |e| e.valid_up_to());
    Error::new(
        Code::TruncatedWrongValueForField,
        format!(
            "Incorrect string value: '{}' for column '{column}' at row 1",
            printable(&bytes[from..], 6)
        ),
    )
}

/// 1366 for storing text whose character at the start of `rest` (UTF-8)
/// a column's character set lacks: quoted from there, six bytes at most.
pub fn lacking(rest: &[u8], column: &str) -> Error {
    Error::new(
        Code::TruncatedWrongValueForField,
        format!(
            "Incorrect string value: '{}' for column '{column}' at row 1",
            printable(rest, 6)
        ),
    )
}

/// `bytes` as utf8mb4 text: as they are when valid; otherwise warning
/// 1300 and '?' for each byte that is not part of a character.
pub fn to_utf8mb4(bytes: Vec<u8>, env: &mut dyn Env) -> Result<Vec<u8>, Error> {
    if std::str::from_utf8(&bytes).is_ok() {
        return Ok(bytes);
    }
    env.warn(Error::new(
        Code::InvalidCharacterString,
        format!(
            "Invalid utf8mb4 character string: '{}'",
            printable(&bytes, 64)
        ),
    ))?;
    let mut out = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.extend_from_slice(chunk.valid().as_bytes());
        out.extend(std::iter::repeat_n(b'?', chunk.invalid().len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_quote_like_mysql() {
        let e = incorrect_string(b"a\xff\xfebcdefghi", "v");
        assert_eq!(
            e.message,
            "Incorrect string value: '\\xFF\\xFEbcde...' for column 'v' at row 1"
        );
        assert_eq!(e.number(), 1366);
        let e = incorrect_string(b"\xf0\x9f\x98", "c");
        assert_eq!(
            e.message,
            "Incorrect string value: '\\xF0\\x9F\\x98' for column 'c' at row 1"
        );
        assert_eq!(printable(b"\xffA", 64), "\\xFFA");
    }
}
