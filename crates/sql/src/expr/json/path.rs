//! JSON path expressions (`$.a[1]."b c"[last-1]`, `$[0 to 2]`, `$.*`,
//! `$[*]`, `$**.x`): parsing, finding the values a path names, and the
//! text of a path (JSON_SEARCH's results).

use super::Json;
use lockstep_types::error::Code;
use lockstep_types::Error;

/// An array position: from the start, or `last - n` from the end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Index {
    Start(u64),
    Last(u64),
}

impl Index {
    /// The position in an array of `len` elements; None when `last - n`
    /// falls before the start.
    pub fn resolve(self, len: usize) -> Option<usize> {
        match self {
            Index::Start(n) => Some(n.min(usize::MAX as u64) as usize),
            Index::Last(n) => (len as u64)
                .checked_sub(1)?
                .checked_sub(n)
                .map(|i| i as usize),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Leg {
    Member(String),
    AnyMember,
    Cell(Index),
    Range(Index, Index),
    AnyCell,
    /// `**`: this value and every value nested in it.
    Descendants,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub legs: Vec<Leg>,
}

pub fn invalid_path(pos: usize) -> Error {
    Error::new(
        Code::InvalidJsonPath,
        format!("Invalid JSON path expression. The error is around character position {pos}."),
    )
}

impl Path {
    pub fn parse(text: &[u8]) -> Result<Path, Error> {
        let mut p = PathParser { s: text, at: 0 };
        p.ws();
        if p.peek() != Some(b'$') {
            return Err(invalid_path(p.at + 1));
        }
        p.at += 1;
        let mut legs = Vec::new();
        loop {
            p.ws();
            match p.peek() {
                None => break,
                Some(b'.') => legs.push(p.member()?),
                Some(b'[') => legs.push(p.cell()?),
                Some(b'*') if p.s.get(p.at + 1) == Some(&b'*') => {
                    p.at += 2;
                    legs.push(Leg::Descendants);
                }
                _ => return Err(invalid_path(p.at + 1)),
            }
        }
        if legs.last() == Some(&Leg::Descendants) {
            return Err(invalid_path(text.len()));
        }
        Ok(Path { legs })
    }

    /// Whether the path may name more than one value.
    pub fn has_wildcard(&self) -> bool {
        self.legs.iter().any(|l| {
            matches!(
                l,
                Leg::AnyMember | Leg::AnyCell | Leg::Descendants | Leg::Range(..)
            )
        })
    }

    /// The values the path names in `doc`, in document order, each once.
    pub fn find<'a>(&self, doc: &'a Json) -> Vec<&'a Json> {
        let mut out = Vec::new();
        find(doc, &self.legs, &mut out);
        if self.legs.contains(&Leg::Descendants) {
            let mut seen = std::collections::HashSet::new();
            out.retain(|v| seen.insert(*v as *const Json));
        }
        out
    }

    /// The value the path names, where it has no wildcard.
    pub fn get<'a>(&self, doc: &'a Json) -> Option<&'a Json> {
        self.find(doc).into_iter().next()
    }
}

fn find<'a>(v: &'a Json, legs: &[Leg], out: &mut Vec<&'a Json>) {
    let Some((leg, rest)) = legs.split_first() else {
        out.push(v);
        return;
    };
    match (leg, v) {
        (Leg::Member(k), _) => {
            if let Some(m) = v.member(k) {
                find(m, rest, out)
            }
        }
        (Leg::AnyMember, Json::Object(m)) => m.iter().for_each(|(_, x)| find(x, rest, out)),
        (Leg::AnyCell, Json::Array(a)) => a.iter().for_each(|x| find(x, rest, out)),
        (Leg::Cell(i), _) => {
            if let Some(x) = cell(v, *i) {
                find(x, rest, out)
            }
        }
        (Leg::Range(from, to), _) => {
            let items = as_slice(v);
            if let Some((lo, hi)) = range(*from, *to, items.len()) {
                items[lo..=hi].iter().for_each(|x| find(x, rest, out));
            }
        }
        (Leg::Descendants, _) => {
            find(v, rest, out);
            match v {
                Json::Array(a) => a.iter().for_each(|x| find(x, legs, out)),
                Json::Object(m) => m.iter().for_each(|(_, x)| find(x, legs, out)),
                _ => {}
            }
        }
        _ => {}
    }
}

/// An array's elements; any other value counts as an array of itself
/// (MySQL 8 lets `$[0]` name a scalar or an object).
fn as_slice(v: &Json) -> &[Json] {
    match v {
        Json::Array(a) => a,
        other => std::slice::from_ref(other),
    }
}

pub fn cell(v: &Json, i: Index) -> Option<&Json> {
    let items = as_slice(v);
    items.get(i.resolve(items.len())?)
}

/// The inclusive bounds of `[from to to]` in an array of `len`, if any.
pub fn range(from: Index, to: Index, len: usize) -> Option<(usize, usize)> {
    let lo = from.resolve(len).unwrap_or(0);
    let hi = to.resolve(len)?.min(len.checked_sub(1)?);
    (lo <= hi).then_some((lo, hi))
}

struct PathParser<'a> {
    s: &'a [u8],
    at: usize,
}

impl PathParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn bad<T>(&self) -> Result<T, Error> {
        Err(invalid_path(self.at + 1))
    }

    /// After `.`: `*`, a bare name, or a quoted one.
    fn member(&mut self) -> Result<Leg, Error> {
        self.at += 1;
        self.ws();
        match self.peek() {
            Some(b'*') => {
                self.at += 1;
                Ok(Leg::AnyMember)
            }
            Some(b'"') => self.quoted(),
            _ => {
                let start = self.at;
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
                        self.at += 1;
                    } else {
                        break;
                    }
                }
                let name = &self.s[start..self.at];
                if name.is_empty() || name[0].is_ascii_digit() {
                    return self.bad();
                }
                match std::str::from_utf8(name) {
                    Ok(n) => Ok(Leg::Member(n.to_string())),
                    Err(_) => self.bad(),
                }
            }
        }
    }

    fn quoted(&mut self) -> Result<Leg, Error> {
        let start = self.at;
        self.at += 1;
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                b'\\' => self.at += 1,
                b'"' => {
                    return match super::parse::parse(&self.s[start..self.at]) {
                        Ok(Json::Str(k)) => Ok(Leg::Member(k)),
                        _ => Err(invalid_path(start + 1)),
                    }
                }
                _ => {}
            }
        }
        self.bad()
    }

    /// After `[`: `*`, an index, or `index to index`, then `]`.
    fn cell(&mut self) -> Result<Leg, Error> {
        self.at += 1;
        self.ws();
        let leg = if self.peek() == Some(b'*') {
            self.at += 1;
            Leg::AnyCell
        } else {
            let from = self.index()?;
            self.ws();
            if self.s[self.at..].starts_with(b"to") {
                self.at += 2;
                self.ws();
                let to = self.index()?;
                if let (Index::Start(a), Index::Start(b)) = (from, to) {
                    if a > b {
                        return self.bad();
                    }
                }
                Leg::Range(from, to)
            } else {
                Leg::Cell(from)
            }
        };
        self.ws();
        if self.peek() != Some(b']') {
            return self.bad();
        }
        self.at += 1;
        Ok(leg)
    }

    fn number(&mut self) -> Result<u64, Error> {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
        match digits.parse::<u32>() {
            Ok(n) => Ok(n as u64),
            Err(_) => self.bad(),
        }
    }

    fn index(&mut self) -> Result<Index, Error> {
        if !self.s[self.at..].starts_with(b"last") {
            return Ok(Index::Start(self.number()?));
        }
        self.at += 4;
        self.ws();
        if self.peek() != Some(b'-') {
            return Ok(Index::Last(0));
        }
        self.at += 1;
        self.ws();
        Ok(Index::Last(self.number()?))
    }
}

/// The text of a path of members and cells, as JSON_SEARCH returns it.
pub fn path_text(legs: &[Leg]) -> String {
    let mut s = String::from("$");
    for leg in legs {
        match leg {
            Leg::Member(k) if is_identifier(k) => {
                s.push('.');
                s.push_str(k);
            }
            Leg::Member(k) => {
                s.push('.');
                super::quote_into(&mut s, k);
            }
            Leg::Cell(Index::Start(i)) => s.push_str(&format!("[{i}]")),
            _ => {}
        }
    }
    s
}

fn is_identifier(k: &str) -> bool {
    let mut bytes = k.bytes();
    matches!(bytes.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80)
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80)
}
