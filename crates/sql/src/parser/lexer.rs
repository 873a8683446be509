//! Byte-level MySQL tokenizer. Tokens carry byte spans into the source so
//! that words and numbers need no allocation; only strings, quoted
//! identifiers and user variables own their (unescaped) contents.

use lockstep_types::Error;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// Unquoted identifier or keyword; its text is the token's span.
    Word,
    /// `back-quoted` identifier, unescaped.
    Ident(String),
    /// '...' or "..." (MySQL's default: double quotes delimit strings).
    Str(Vec<u8>),
    /// X'0A' or 0x0A.
    Hex(Vec<u8>),
    /// b'0101' or 0b0101.
    Bits(u64),
    /// Digits only; text is the span.
    Int,
    /// Digits with a decimal point; text is the span.
    Dec,
    /// Number with an exponent; text is the span.
    Float,
    /// @name
    UserVar(String),
    /// @@ (system variable prefix)
    AtAt,
    /// An optimizer hint comment `/*+ ... */` right after SELECT: its text.
    /// Elsewhere such a comment is skipped like any other.
    Hint(String),
    /// ?
    Param,
    Eq,
    NullSafeEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    /// `->` and `->>` (JSON_EXTRACT, and unquoted).
    Arrow,
    Arrow2,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    OrOr,
    AndAnd,
    Bang,
    Pipe,
    Amp,
    Caret,
    Tilde,
    /// :=
    Assign,
    /// `label:` before a stored program's BEGIN, LOOP, WHILE or REPEAT.
    Colon,
    Dot,
    Comma,
    LParen,
    RParen,
    Semi,
    /// Placeholder left behind when the parser moves a token's contents out.
    Taken,
    Eof,
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// MySQL's 1064 error pointing at byte offset `pos` of `src`.
pub(crate) fn syntax_error(src: &str, pos: usize) -> Error {
    let pos = pos.min(src.len());
    let mut start = pos;
    while !src.is_char_boundary(start) {
        start -= 1;
    }
    let rest = &src[start..];
    // MySQL quotes at most 80 characters of the remaining text.
    let near = match rest.char_indices().nth(80) {
        Some((i, _)) => &rest[..i],
        None => rest,
    };
    let line = src.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    Error::new(
        lockstep_types::error::Code::Parse,
        format!(
            "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line {line}"
        ),
    )
}

#[inline]
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Highest version an executable comment `/*!NNNNN ... */` may name for
/// its contents to count: we present ourselves as MySQL 8.0.
const EXEC_COMMENT_MAX_VERSION: u64 = 80099;

/// Whether the last token is the keyword SELECT (where hints may stand).
fn after_select(src: &str, out: &[Token]) -> bool {
    out.last().is_some_and(|t| {
        matches!(t.tok, Tok::Word)
            && src
                .get(t.start..t.end)
                .is_some_and(|w| w.eq_ignore_ascii_case("SELECT"))
    })
}

/// `escapes` false: sql_mode NO_BACKSLASH_ESCAPES, a backslash in a
/// string literal is an ordinary character.
pub(crate) fn tokenize_with(src: &str, escapes: bool) -> Result<Vec<Token>, Error> {
    let b = src.as_bytes();
    let n = b.len();
    let mut out: Vec<Token> = Vec::with_capacity(n / 3 + 2);
    let mut i = 0;
    // Inside `/*! ... */`: the text is lexed and the closing `*/` skipped.
    let mut in_exec = false;
    while i < n {
        let c = b[i];
        let start = i;
        let next = b.get(i + 1).copied().unwrap_or(0);
        let tok = match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'#' => {
                i = skip_line(b, i);
                continue;
            }
            // `--` starts a comment only when followed by whitespace/control or the end.
            b'-' if next == b'-' && b.get(i + 2).is_none_or(|&x| x <= b' ') => {
                i = skip_line(b, i);
                continue;
            }
            b'/' if next == b'*' => {
                if b.get(i + 2) == Some(&b'!') && !in_exec {
                    let mut j = i + 3;
                    while j < n && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    let version = &src[i + 3..j];
                    let applies = version.is_empty()
                        || version
                            .parse::<u64>()
                            .is_ok_and(|v| v <= EXEC_COMMENT_MAX_VERSION);
                    if applies {
                        in_exec = true;
                        i = j;
                        continue;
                    }
                }
                match find(b, i + 2, b"*/") {
                    Some(e) if b.get(i + 2) == Some(&b'+') && after_select(src, &out) => {
                        i = e + 2;
                        Tok::Hint(src[start + 3..e].to_string())
                    }
                    Some(e) => {
                        i = e + 2;
                        continue;
                    }
                    None => return Err(syntax_error(src, i)),
                }
            }
            b'*' if in_exec && next == b'/' => {
                in_exec = false;
                i += 2;
                continue;
            }
            b'\'' | b'"' => {
                let (s, e) = lex_string(src, i, escapes)?;
                i = e;
                Tok::Str(s)
            }
            b'`' => {
                let (s, e) = lex_quoted_ident(src, i)?;
                i = e;
                Tok::Ident(s)
            }
            b'x' | b'X' if next == b'\'' => {
                let e = find(b, i + 2, b"'").ok_or_else(|| syntax_error(src, i))?;
                let bytes = decode_hex(&b[i + 2..e]).ok_or_else(|| syntax_error(src, i))?;
                i = e + 1;
                Tok::Hex(bytes)
            }
            b'b' | b'B' if next == b'\'' => {
                let e = find(b, i + 2, b"'").ok_or_else(|| syntax_error(src, i))?;
                let v = decode_bits(&b[i + 2..e]).ok_or_else(|| syntax_error(src, i))?;
                i = e + 1;
                Tok::Bits(v)
            }
            // National string N'...': same as a plain string for us.
            b'n' | b'N' if next == b'\'' => {
                let (s, e) = lex_string(src, i + 1, escapes)?;
                i = e;
                Tok::Str(s)
            }
            b'0'..=b'9' => {
                let (t, e) = lex_number(b, i);
                i = e;
                t
            }
            b'.' if next.is_ascii_digit() && !follows_identifier(&out, i) => {
                let (t, e) = lex_number(b, i);
                i = e;
                t
            }
            b'@' => {
                if next == b'@' {
                    i += 2;
                    Tok::AtAt
                } else if next == b'\'' || next == b'"' {
                    let (s, e) = lex_string(src, i + 1, escapes)?;
                    i = e;
                    Tok::UserVar(String::from_utf8_lossy(&s).into_owned())
                } else if next == b'`' {
                    let (s, e) = lex_quoted_ident(src, i + 1)?;
                    i = e;
                    Tok::UserVar(s)
                } else {
                    let mut j = i + 1;
                    while j < n && (is_word_byte(b[j]) || b[j] == b'.') {
                        j += 1;
                    }
                    if j == i + 1 {
                        return Err(syntax_error(src, i));
                    }
                    i = j;
                    Tok::UserVar(src[start + 1..j].to_string())
                }
            }
            _ if is_word_byte(c) => {
                let mut j = i + 1;
                while j < n && is_word_byte(b[j]) {
                    j += 1;
                }
                i = j;
                Tok::Word
            }
            _ => {
                let (t, len) = match (c, next) {
                    (b'<', b'=') if b.get(i + 2) == Some(&b'>') => (Tok::NullSafeEq, 3),
                    (b'<', b'=') => (Tok::Le, 2),
                    (b'<', b'>') => (Tok::Ne, 2),
                    (b'<', b'<') => (Tok::Shl, 2),
                    (b'<', _) => (Tok::Lt, 1),
                    (b'>', b'=') => (Tok::Ge, 2),
                    (b'>', b'>') => (Tok::Shr, 2),
                    (b'>', _) => (Tok::Gt, 1),
                    (b'!', b'=') => (Tok::Ne, 2),
                    (b'!', _) => (Tok::Bang, 1),
                    (b'|', b'|') => (Tok::OrOr, 2),
                    (b'|', _) => (Tok::Pipe, 1),
                    (b'&', b'&') => (Tok::AndAnd, 2),
                    (b'&', _) => (Tok::Amp, 1),
                    (b':', b'=') => (Tok::Assign, 2),
                    (b':', _) => (Tok::Colon, 1),
                    (b'=', _) => (Tok::Eq, 1),
                    (b'+', _) => (Tok::Plus, 1),
                    (b'-', b'>') if b.get(i + 2) == Some(&b'>') => (Tok::Arrow2, 3),
                    (b'-', b'>') => (Tok::Arrow, 2),
                    (b'-', _) => (Tok::Minus, 1),
                    (b'*', _) => (Tok::Star, 1),
                    (b'/', _) => (Tok::Slash, 1),
                    (b'%', _) => (Tok::Percent, 1),
                    (b'^', _) => (Tok::Caret, 1),
                    (b'~', _) => (Tok::Tilde, 1),
                    (b'.', _) => (Tok::Dot, 1),
                    (b',', _) => (Tok::Comma, 1),
                    (b'(', _) => (Tok::LParen, 1),
                    (b')', _) => (Tok::RParen, 1),
                    (b';', _) => (Tok::Semi, 1),
                    (b'?', _) => (Tok::Param, 1),
                    _ => return Err(syntax_error(src, i)),
                };
                i += len;
                t
            }
        };
        out.push(Token { tok, start, end: i });
    }
    if in_exec {
        // MySQL rejects an executable comment that never closes.
        return Err(syntax_error(src, n));
    }
    out.push(Token {
        tok: Tok::Eof,
        start: n,
        end: n,
    });
    Ok(out)
}

fn skip_line(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..]
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|p| p + from)
}

/// `t.5` is table t, column 5 — not t followed by the number .5.
fn follows_identifier(out: &[Token], i: usize) -> bool {
    out.last()
        .is_some_and(|t| t.end == i && matches!(t.tok, Tok::Word | Tok::Ident(_)))
}

fn lex_string(src: &str, start: usize, escapes: bool) -> Result<(Vec<u8>, usize), Error> {
    unescape_string_with(src.as_bytes(), start, escapes).ok_or_else(|| syntax_error(src, start))
}

/// The bytes of the quoted string literal at `b[start]` (its quote) and
/// the index after its closing quote; None if it is not closed. Works on
/// bytes: a binary literal may hold any byte.
/// `escapes` false (NO_BACKSLASH_ESCAPES): backslashes are kept as they are.
pub(crate) fn unescape_string_with(
    b: &[u8],
    start: usize,
    escapes: bool,
) -> Option<(Vec<u8>, usize)> {
    let quote = b[start];
    let mut out = Vec::new();
    let mut j = start + 1;
    let mut seg = j;
    loop {
        let &c = b.get(j)?;
        if c == quote {
            out.extend_from_slice(&b[seg..j]);
            if b.get(j + 1) == Some(&quote) {
                out.push(quote);
                j += 2;
                seg = j;
                continue;
            }
            return Some((out, j + 1));
        }
        if c == b'\\' && escapes {
            out.extend_from_slice(&b[seg..j]);
            let &e = b.get(j + 1)?;
            match e {
                b'0' => out.push(0),
                b'b' => out.push(8),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'Z' => out.push(26),
                // Kept so that LIKE still sees an escaped wildcard.
                b'%' | b'_' => {
                    out.push(b'\\');
                    out.push(e);
                }
                _ => out.push(e),
            }
            j += 2;
            seg = j;
            continue;
        }
        j += 1;
    }
}

fn lex_quoted_ident(src: &str, start: usize) -> Result<(String, usize), Error> {
    let b = src.as_bytes();
    let mut out = String::new();
    let mut j = start + 1;
    let mut seg = j;
    loop {
        let Some(&c) = b.get(j) else {
            return Err(syntax_error(src, start));
        };
        if c == b'`' {
            // Backquote is ASCII, so these slices sit on char boundaries.
            out.push_str(&src[seg..j]);
            if b.get(j + 1) == Some(&b'`') {
                out.push('`');
                j += 2;
                seg = j;
                continue;
            }
            return Ok((out, j + 1));
        }
        j += 1;
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Hex digits to bytes; an odd count gets a leading zero nibble (0xABC).
fn decode_hex(d: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(d.len().div_ceil(2));
    let mut rest = d;
    if d.len() % 2 == 1 {
        out.push(hex_val(d[0])?);
        rest = &d[1..];
    }
    for pair in rest.chunks_exact(2) {
        out.push(hex_val(pair[0])? << 4 | hex_val(pair[1])?);
    }
    Some(out)
}

fn decode_bits(d: &[u8]) -> Option<u64> {
    if d.len() > 64 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in d {
        match c {
            b'0' => v <<= 1,
            b'1' => v = v << 1 | 1,
            _ => return None,
        }
    }
    Some(v)
}

/// A token starting with a digit (or `.digit`): number, 0x/0b literal, or
/// an identifier that merely starts with digits (`1abc`).
fn lex_number(b: &[u8], start: usize) -> (Tok, usize) {
    let n = b.len();
    let word_end = |mut j: usize| {
        while j < n && is_word_byte(b[j]) {
            j += 1;
        }
        j
    };
    if b[start] == b'0' && start + 2 < n + 1 {
        let kind = b.get(start + 1).copied();
        if matches!(kind, Some(b'x') | Some(b'b')) {
            let e = word_end(start + 2);
            let digits = &b[start + 2..e];
            if !digits.is_empty() {
                if kind == Some(b'x') {
                    if let Some(bytes) = decode_hex(digits) {
                        return (Tok::Hex(bytes), e);
                    }
                } else if let Some(v) = decode_bits(digits) {
                    return (Tok::Bits(v), e);
                }
            }
            return (Tok::Word, e);
        }
    }
    let mut j = start;
    while j < n && b[j].is_ascii_digit() {
        j += 1;
    }
    let mut tok = Tok::Int;
    if j < n && b[j] == b'.' {
        tok = Tok::Dec;
        j += 1;
        while j < n && b[j].is_ascii_digit() {
            j += 1;
        }
    }
    if j < n && (b[j] == b'e' || b[j] == b'E') {
        let mut k = j + 1;
        if k < n && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        if k < n && b[k].is_ascii_digit() {
            while k < n && b[k].is_ascii_digit() {
                k += 1;
            }
            return (Tok::Float, k);
        }
    }
    if tok == Tok::Int && j < n && is_word_byte(b[j]) {
        return (Tok::Word, word_end(j));
    }
    (tok, j)
}
