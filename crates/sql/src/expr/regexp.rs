//! Regular expressions: `REGEXP`/`RLIKE` (the parser makes them
//! REGEXP_LIKE), REGEXP_LIKE, REGEXP_INSTR, REGEXP_SUBSTR and
//! REGEXP_REPLACE. MySQL 8 uses ICU; lockstep uses the `regex` crate,
//! whose syntax agrees for the common constructs (classes, groups,
//! repetition, anchors, \d \w \s, POSIX [[:alpha:]]) but has no
//! backreferences or look-around: such patterns are errors here. Matching
//! is linear in the text and the compiled program is bounded, so a
//! pattern cannot run away; text matches case-insensitively unless
//! match_type says 'c', as under MySQL's default _ci collation.

use super::{builds, text, BExpr, Env};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};
use regex::{Regex, RegexBuilder};
use std::cell::RefCell;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegexpFn {
    Like,
    Instr,
    Substr,
    Replace,
}

/// Largest compiled program (bytes) a pattern may build.
const PROGRAM_LIMIT: usize = 4 << 20;

impl RegexpFn {
    pub fn lookup(name: &str) -> Option<RegexpFn> {
        Some(match name {
            "REGEXP_LIKE" => RegexpFn::Like,
            "REGEXP_INSTR" => RegexpFn::Instr,
            "REGEXP_SUBSTR" => RegexpFn::Substr,
            "REGEXP_REPLACE" => RegexpFn::Replace,
            _ => return None,
        })
    }

    pub fn arity(self) -> (usize, usize) {
        match self {
            RegexpFn::Like => (2, 3),
            RegexpFn::Instr => (2, 6),
            RegexpFn::Substr => (2, 5),
            RegexpFn::Replace => (3, 6),
        }
    }

    pub fn result_type(self) -> DataType {
        match self {
            RegexpFn::Like | RegexpFn::Instr => DataType::BigInt { unsigned: false },
            _ => DataType::VarChar { len: 65535 },
        }
    }

    /// Index of the match_type argument.
    fn flags_at(self) -> usize {
        match self {
            RegexpFn::Like => 2,
            RegexpFn::Instr => 5,
            RegexpFn::Substr => 4,
            RegexpFn::Replace => 5,
        }
    }
}

fn illegal() -> Error {
    Error::new(
        Code::RegexpIllegalArgument,
        "Illegal argument to a regular expression.",
    )
}

pub fn eval_regexp(
    f: RegexpFn,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    let Some(vals) = super::eval_args_or_null(args, row, env)? else {
        return Ok(Value::Null);
    };
    let subject = String::from_utf8_lossy(&text(&vals[0])).into_owned();
    let flags = vals.get(f.flags_at()).map(text).unwrap_or_default();
    let re = compiled(&text(&vals[1]), &flags)?;
    let num = |i: usize, default: i64| vals.get(i).map_or(default, super::count_arg);
    // pos counts characters from 1; one past the end is allowed.
    let pos = if f == RegexpFn::Like {
        1
    } else {
        num(2 + (f == RegexpFn::Replace) as usize, 1)
    };
    let chars = subject.chars().count();
    if pos < 1 || pos as u64 > chars as u64 + 1 {
        return Err(Error::new(
            Code::RegexpIndexOutOfBounds,
            "Index out of bounds in regular expression search.",
        ));
    }
    let start = subject
        .char_indices()
        .nth(pos as usize - 1)
        .map_or(subject.len(), |(i, _)| i);
    let char_pos = |byte: usize| subject[..byte].chars().count() as i64 + 1;
    Ok(match f {
        RegexpFn::Like => Value::Int(re.is_match(&subject) as i64),
        RegexpFn::Instr => {
            let occurrence = num(3, 1).max(1) as usize;
            let after = num(4, 0);
            if !(0..=1).contains(&after) {
                return Err(illegal());
            }
            match re.find_iter(&subject[start..]).nth(occurrence - 1) {
                Some(m) => Value::Int(char_pos(
                    start + if after == 1 { m.end() } else { m.start() },
                )),
                None => Value::Int(0),
            }
        }
        RegexpFn::Substr => {
            let occurrence = num(3, 1).max(1) as usize;
            match re.find_iter(&subject[start..]).nth(occurrence - 1) {
                Some(m) => Value::str(m.as_str()),
                None => Value::Null,
            }
        }
        RegexpFn::Replace => {
            let repl = String::from_utf8_lossy(&text(&vals[2])).into_owned();
            replace(&re, &subject, start, &repl, num(4, 0).max(0) as usize, env)?
        }
    })
}

/// Replaces the `occurrence`th match at or after `start` (every match for
/// 0), building the result only while it stays within the memory cap.
fn replace(
    re: &Regex,
    subject: &str,
    start: usize,
    repl: &str,
    occurrence: usize,
    env: &mut dyn Env,
) -> Result<Value, Error> {
    let mut out = String::from(&subject[..start]);
    let mut last = start;
    for (i, caps) in re.captures_iter(&subject[start..]).enumerate() {
        let m = caps.get(0).expect("group 0 always matches");
        if occurrence != 0 && i + 1 != occurrence {
            continue;
        }
        out.push_str(&subject[last..start + m.start()]);
        let mut piece = String::new();
        caps.expand(repl, &mut piece);
        let len = out.len() + piece.len() + subject.len() - start - m.end();
        if !builds("regexp_replace", len, env)? {
            return Ok(Value::Null);
        }
        out.push_str(&piece);
        last = start + m.end();
        if occurrence != 0 {
            break;
        }
    }
    out.push_str(&subject[last..]);
    Ok(Value::str(&out))
}

/// A compiled pattern with the pattern text and flags it came from.
type Cached = (Vec<u8>, Vec<u8>, Regex);

thread_local! {
    /// The last pattern compiled on this thread: a query applies one
    /// pattern to many rows.
    static LAST: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// The pattern compiled under match_type flags (c, i, m, n, u).
fn compiled(pattern: &[u8], flags: &[u8]) -> Result<Regex, Error> {
    if let Some(re) = LAST.with(|l| {
        l.borrow()
            .as_ref()
            .filter(|(p, f, _)| p == pattern && f == flags)
            .map(|(_, _, r)| r.clone())
    }) {
        return Ok(re);
    }
    if pattern.is_empty() {
        return Err(illegal());
    }
    let mut b = RegexBuilder::new(&unicode_classes(&String::from_utf8_lossy(pattern)));
    b.case_insensitive(true)
        .size_limit(PROGRAM_LIMIT)
        .dfa_size_limit(PROGRAM_LIMIT);
    for &c in flags {
        match c {
            b'c' => b.case_insensitive(false),
            b'i' => b.case_insensitive(true),
            b'm' => b.multi_line(true),
            b'n' => b.dot_matches_new_line(true),
            b'u' => &mut b,
            _ => return Err(illegal()),
        };
    }
    let re = b.build().map_err(regex_error)?;
    LAST.with(|l| *l.borrow_mut() = Some((pattern.to_vec(), flags.to_vec(), re.clone())));
    Ok(re)
}

/// POSIX classes as ICU reads them: over all of Unicode, not ASCII only.
fn unicode_classes(p: &str) -> String {
    const CLASSES: [(&str, &str); 7] = [
        ("[:alpha:]", r"\p{Alphabetic}"),
        ("[:alnum:]", r"\p{Alphabetic}\p{Nd}"),
        ("[:digit:]", r"\p{Nd}"),
        ("[:upper:]", r"\p{Uppercase}"),
        ("[:lower:]", r"\p{Lowercase}"),
        ("[:punct:]", r"\p{P}"),
        ("[:space:]", r"\s"),
    ];
    let mut out = p.to_string();
    for (posix, unicode) in CLASSES {
        if out.contains(posix) {
            out = out.replace(posix, unicode);
        }
    }
    out
}

fn regex_error(e: regex::Error) -> Error {
    match e {
        regex::Error::CompiledTooBig(_) => Error::new(
            Code::RegexpPatternTooBig,
            "Pattern exceeds limits on size or complexity.",
        ),
        regex::Error::Syntax(msg)
            if msg.contains("unclosed group") || msg.contains("unopened group") =>
        {
            Error::new(
                Code::RegexpMismatchedParen,
                "Mismatched parenthesis in regular expression.",
            )
        }
        regex::Error::Syntax(msg) if msg.contains("unclosed character class") => Error::new(
            Code::RegexpMissingCloseBracket,
            "The regular expression contains an unclosed bracket expression.",
        ),
        _ => Error::new(
            Code::RegexpRuleSyntax,
            "Syntax error in regular expression on line 1, character 1.",
        ),
    }
}
