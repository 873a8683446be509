//! A statement as the client sent it (bytes in character_set_client) made
//! into the UTF-8 text the parser reads. String literals that must keep
//! their bytes (an `_binary` introducer, a binary client character set,
//! or bytes that are not UTF-8 under a UTF-8 client) become hex literals
//! (`X'FF00'`), which carry any byte; the rest is decoded.

use super::charset::{self, Charset, Enc};
use crate::parser::lexer::unescape_string_with;
use std::borrow::Cow;
use std::fmt::Write;

/// `sql` decoded from `client`; `escapes` false under NO_BACKSLASH_ESCAPES.
pub fn statement_text<'a>(sql: &'a [u8], client: &Charset, escapes: bool) -> Cow<'a, str> {
    let utf8 = matches!(client.enc, Enc::Utf8mb4 | Enc::Utf8mb3 | Enc::Binary);
    if sql.is_ascii() || utf8 && std::str::from_utf8(sql).is_ok() {
        // Safe: checked just above (ASCII is UTF-8).
        return Cow::Borrowed(std::str::from_utf8(sql).unwrap_or_default());
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut plain = 0;
    let mut i = 0;
    while i < sql.len() {
        let c = sql[i];
        let end = match c {
            b'\'' | b'"' => {
                out.push_str(&charset::decode(&sql[plain..i], client));
                let end = literal(sql, i, client, escapes, &mut out);
                plain = end;
                end
            }
            b'`' => closing(sql, i + 1, b'`'),
            b'#' => closing(sql, i, b'\n'),
            b'-' if sql[i..].starts_with(b"--") && sql.get(i + 2).is_none_or(|&x| x <= b' ') => {
                closing(sql, i, b'\n')
            }
            b'/' if sql[i..].starts_with(b"/*") && !matches!(sql.get(i + 2), Some(b'!' | b'+')) => {
                find(sql, i + 2, b"*/").map_or(sql.len(), |e| e + 2)
            }
            _ => i + char_len(sql, i, client),
        };
        i = end.max(i + 1);
    }
    out.push_str(&charset::decode(&sql[plain..], client));
    Cow::Owned(out)
}

/// Appends the literal at `sql[start]` (a quote) to `out`; returns the
/// index after it. An unterminated literal is left to the parser, which
/// reports the syntax error.
fn literal(sql: &[u8], start: usize, client: &Charset, escapes: bool, out: &mut String) -> usize {
    let binary = client.enc == Enc::Binary || introduced_binary(&sql[..start]);
    let utf8 = matches!(client.enc, Enc::Utf8mb4 | Enc::Utf8mb3 | Enc::Binary);
    if binary || utf8 {
        let Some((bytes, end)) = unescape_string_with(sql, start, escapes) else {
            return unterminated(sql, start, client, out);
        };
        let raw = &sql[start..end];
        match std::str::from_utf8(raw) {
            Ok(s) => out.push_str(s),
            Err(_) => hex_literal(&bytes, out),
        }
        return end;
    }
    // A multi-byte set's second byte may be a quote or backslash: walk
    // characters, not bytes.
    let quote = sql[start];
    let mut j = start + 1;
    loop {
        let Some(&c) = sql.get(j) else {
            return unterminated(sql, start, client, out);
        };
        if c == quote && sql.get(j + 1) != Some(&quote) {
            out.push_str(&charset::decode(&sql[start..j + 1], client));
            return j + 1;
        }
        j += if c == quote || c == b'\\' && escapes {
            2
        } else {
            char_len(sql, j, client)
        };
    }
}

/// `X'..'`: keeps every byte (a `_binary` before it still applies; the
/// space keeps `_binary'..'` from becoming the word `_binaryX`).
fn hex_literal(bytes: &[u8], out: &mut String) {
    out.reserve(bytes.len() * 2 + 4);
    out.push_str(" X'");
    for b in bytes {
        let _ = write!(out, "{b:02X}");
    }
    out.push('\'');
}

/// Whether `before` (the text up to a literal) ends in `_binary`.
fn introduced_binary(before: &[u8]) -> bool {
    let t = before.trim_ascii_end();
    let n = b"_binary".len();
    t.len() >= n
        && t[t.len() - n..].eq_ignore_ascii_case(b"_binary")
        && (t.len() == n
            || !matches!(t[t.len() - n - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'$'))
}

/// Bytes of the character at `sql[i]` in the client's character set.
fn char_len(sql: &[u8], i: usize, client: &Charset) -> usize {
    let c = sql[i];
    let two = match client.name {
        "gbk" | "big5" | "gb18030" | "euckr" | "ujis" => (0x81..=0xFE).contains(&c),
        "sjis" => matches!(c, 0x81..=0x9F | 0xE0..=0xFC),
        _ => false,
    };
    if two {
        2
    } else {
        1
    }
}

fn closing(sql: &[u8], from: usize, end: u8) -> usize {
    sql[from..]
        .iter()
        .position(|&c| c == end)
        .map_or(sql.len(), |p| from + p + 1)
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|p| p + from)
}

fn unterminated(sql: &[u8], start: usize, client: &Charset, out: &mut String) -> usize {
    out.push_str(&charset::decode(&sql[start..], client));
    sql.len()
}
