//! JSON text to `Json`, with the error messages and byte positions MySQL
//! reports, and nesting bounded at `MAX_DEPTH` (so a hostile document
//! cannot overflow the stack).

use super::{too_deep, Json, MAX_DEPTH};
use lockstep_types::error::Code;
use lockstep_types::Error;

#[derive(Debug, PartialEq)]
pub enum ParseError {
    Syntax(&'static str, usize),
    TooDeep,
    /// More values than the statement's memory allows.
    TooBig,
}

impl ParseError {
    /// 3141, for the `n`th argument (1-based) of function `func`.
    pub fn in_argument(self, n: usize, func: &str) -> Error {
        match self {
            ParseError::TooDeep => too_deep(),
            ParseError::TooBig => super::too_big(),
            ParseError::Syntax(m, pos) => Error::new(
                Code::InvalidJsonTextInParam,
                format!(
                    "Invalid JSON text in argument {n} to function {func}: \"{m}\" at position {pos}."
                ),
            ),
        }
    }

    /// 3140, for a value stored into `column`.
    pub fn in_column(self, column: &str) -> Error {
        match self {
            ParseError::TooDeep => too_deep(),
            ParseError::TooBig => super::too_big(),
            ParseError::Syntax(m, pos) => Error::new(
                Code::InvalidJsonText,
                format!(
                    "Invalid JSON text: \"{m}\" at position {pos} in value for column '{column}'."
                ),
            ),
        }
    }
}

type Result<T> = std::result::Result<T, ParseError>;

const INVALID: &str = "Invalid value.";

pub fn parse(text: &[u8]) -> Result<Json> {
    let mut unbounded = usize::MAX;
    parse_bounded(text, &mut unbounded)
}

/// `parse`, taking each value it builds from `budget` (a count of values,
/// string bytes counted as values too), so a document's tree cannot
/// outgrow the statement's memory.
pub fn parse_bounded(text: &[u8], budget: &mut usize) -> Result<Json> {
    let mut p = Parser {
        s: text,
        at: 0,
        budget: *budget,
    };
    p.skip_ws();
    if p.at == text.len() {
        return Err(ParseError::Syntax("The document is empty.", p.at));
    }
    let v = p.value(0)?;
    *budget = p.budget;
    p.skip_ws();
    if p.at != text.len() {
        return Err(ParseError::Syntax(
            "The document root must not be followed by other values.",
            p.at,
        ));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    budget: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn err<T>(&self, m: &'static str) -> Result<T> {
        Err(ParseError::Syntax(m, self.at))
    }

    fn value(&mut self, depth: usize) -> Result<Json> {
        self.take(1)?;
        match self.peek() {
            Some(b'{') | Some(b'[') if depth >= MAX_DEPTH => Err(ParseError::TooDeep),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.err(INVALID),
        }
    }

    fn take(&mut self, n: usize) -> Result<()> {
        self.budget = self.budget.checked_sub(n).ok_or(ParseError::TooBig)?;
        Ok(())
    }

    fn literal(&mut self, word: &[u8], v: Json) -> Result<Json> {
        if self.s[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(v)
        } else {
            self.err(INVALID)
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return self.err("Missing a comma or ']' after an array element."),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json> {
        self.at += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return self.err("Missing a name for object member.");
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return self.err("Missing a colon after a name of object member.");
            }
            self.at += 1;
            self.skip_ws();
            members.push((key, self.value(depth)?));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::object(members));
                }
                _ => return self.err("Missing a comma or '}' after an object member."),
            }
        }
    }

    fn string(&mut self) -> Result<String> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return self.err("Missing a closing quotation mark in string."),
                Some(b'"') => {
                    self.at += 1;
                    break;
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut out)?;
                }
                Some(c) if c < 0x20 => return self.err("Invalid encoding in string."),
                Some(c) => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
        self.take(out.len() / std::mem::size_of::<Json>())?;
        String::from_utf8(out).or(Err(ParseError::Syntax(
            "Invalid encoding in string.",
            self.at - 1,
        )))
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let c = match self.peek() {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 8,
            Some(b'f') => 12,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                self.at += 1;
                let ch = self.unicode_escape()?;
                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                return Ok(());
            }
            _ => return self.err("Invalid escape character in string."),
        };
        self.at += 1;
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self.s.get(self.at..self.at + 4).unwrap_or(&[]);
        let text = std::str::from_utf8(digits).unwrap_or("");
        match u32::from_str_radix(text, 16) {
            Ok(v) if text.len() == 4 && text.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.at += 4;
                Ok(v)
            }
            _ => self.err("Incorrect hex digit after \\u escape in string."),
        }
    }

    /// After `\u`: one code point, a surrogate pair joined.
    fn unicode_escape(&mut self) -> Result<char> {
        let hi = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !self.s[self.at..].starts_with(b"\\u") {
                return self.err("The surrogate pair in string is invalid.");
            }
            self.at += 2;
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                return self.err("The surrogate pair in string is invalid.");
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            hi
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => self.err("The surrogate pair in string is invalid."),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Json> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.err(INVALID),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            integral = false;
            if self.digits() == 0 {
                return self.err("Miss fraction part in number.");
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            integral = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return self.err("Miss exponent in number.");
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("0");
        if integral {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Json::Int(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Json::UInt(u));
            }
        }
        match text.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok(Json::Double(d)),
            _ => Err(ParseError::Syntax(
                "Number too big to be stored in double.",
                start,
            )),
        }
    }
}

/// Parses SQL text as a JSON document: as `parse`, but the text must be
/// valid UTF-8 (MySQL checks the character set first).
pub fn parse_text(text: &[u8], budget: &mut usize) -> Result<Json> {
    if let Err(e) = std::str::from_utf8(text) {
        return Err(ParseError::Syntax(
            "Invalid encoding in string.",
            e.valid_up_to(),
        ));
    }
    parse_bounded(text, budget)
}

/// Depth check for a value built by a function (its parts were parsed
/// within the limit; nesting them may pass it).
pub fn check_depth(j: &Json) -> std::result::Result<(), Error> {
    if j.depth() > MAX_DEPTH {
        Err(too_deep())
    } else {
        Ok(())
    }
}
