//! String functions beyond the core set in mod.rs: ASCII, ORD, CHAR,
//! REVERSE, LOCATE/POSITION, FIELD, ELT, FIND_IN_SET, INSERT, STRCMP,
//! BIN/OCT/CONV, MD5, CRC32, TO_BASE64/FROM_BASE64, QUOTE, SOUNDEX,
//! FORMAT, BIT_LENGTH, EXPORT_SET, MAKE_SET and the charset probes, as
//! MySQL 8 computes them. Text compares under the default collation
//! (utf8mb4_0900_ai_ci: case- and accent-insensitive).

use super::{builds, count_arg, eval, hex_upper, substring_index, text, unhex, BExpr, Env, Func};
use lockstep_types::error::Code;
use lockstep_types::value::fold_ci;
use lockstep_types::{DataType, Error, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrFn {
    Ascii,
    Ord,
    Char,
    Reverse,
    Locate,
    Position,
    Field,
    Elt,
    FindInSet,
    Insert,
    Strcmp,
    Bin,
    Oct,
    Conv,
    Md5,
    Crc32,
    ToBase64,
    FromBase64,
    Quote,
    Soundex,
    Format,
    BitLength,
    ExportSet,
    MakeSet,
    Charset,
    Collation,
    Coercibility,
    WeightString,
}

impl StrFn {
    pub fn lookup(name: &str) -> Option<StrFn> {
        use StrFn::*;
        Some(match name {
            "ASCII" => Ascii,
            "ORD" => Ord,
            "CHAR" => Char,
            "REVERSE" => Reverse,
            "LOCATE" => Locate,
            "POSITION" => Position,
            "FIELD" => Field,
            "ELT" => Elt,
            "FIND_IN_SET" => FindInSet,
            "INSERT" => Insert,
            "STRCMP" => Strcmp,
            "BIN" => Bin,
            "OCT" => Oct,
            "CONV" => Conv,
            "MD5" => Md5,
            "CRC32" => Crc32,
            "TO_BASE64" => ToBase64,
            "FROM_BASE64" => FromBase64,
            "QUOTE" => Quote,
            "SOUNDEX" => Soundex,
            "FORMAT" => Format,
            "BIT_LENGTH" => BitLength,
            "EXPORT_SET" => ExportSet,
            "MAKE_SET" => MakeSet,
            "CHARSET" => Charset,
            "COLLATION" => Collation,
            "COERCIBILITY" => Coercibility,
            "WEIGHT_STRING" => WeightString,
            _ => return None,
        })
    }

    pub fn arity(self) -> (usize, usize) {
        use StrFn::*;
        const ANY: usize = usize::MAX;
        match self {
            Ascii | Ord | Reverse | Bin | Oct | Md5 | Crc32 | ToBase64 | FromBase64 | Quote
            | Soundex | BitLength | Charset | Collation | Coercibility => (1, 1),
            Char => (1, ANY),
            Locate => (2, 3),
            Position | Strcmp => (2, 2),
            Field | Elt | MakeSet => (2, ANY),
            FindInSet => (2, 2),
            Insert => (4, 4),
            Conv => (3, 3),
            Format => (2, 3),
            ExportSet => (3, 5),
            WeightString => (1, 4),
        }
    }

    pub fn result_type(self) -> DataType {
        use StrFn::*;
        let vc = |len| DataType::VarChar { len };
        match self {
            Ascii | Ord | Locate | Position | Field | FindInSet | Strcmp | BitLength
            | Coercibility => DataType::BigInt { unsigned: false },
            Crc32 => DataType::BigInt { unsigned: true },
            Char | FromBase64 | WeightString => DataType::VarBinary { len: 65535 },
            Md5 => vc(32),
            Bin | Oct | Conv => vc(64),
            Charset | Collation => vc(64),
            _ => vc(65535),
        }
    }
}

pub fn eval_str(
    f: StrFn,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    use StrFn::*;
    match f {
        Coercibility => return Ok(Value::Int(coercibility(&args[0]))),
        Elt => return elt(args, row, env),
        WeightString => return Err(Error::unsupported("WEIGHT_STRING")),
        _ => {}
    }
    let vals = super::eval_args(args, row, env)?;
    match f {
        Char => return Ok(char_fn(&vals)),
        Field => return Ok(Value::Int(field(&vals))),
        MakeSet => return make_set(&vals, env),
        Quote => return quote(&vals[0], env),
        Charset | Collation => return Ok(charset(f, &vals[0])),
        _ if vals.iter().any(Value::is_null) => return Ok(Value::Null),
        _ => {}
    }
    let s = |i: usize| text(&vals[i]);
    Ok(match f {
        Ascii => Value::Int(s(0).first().copied().unwrap_or(0) as i64),
        Ord => Value::Int(ord(&s(0))),
        Reverse => Value::str(
            &String::from_utf8_lossy(&s(0))
                .chars()
                .rev()
                .collect::<String>(),
        ),
        Locate | Position => {
            let from = vals.get(2).map_or(1, super::count_arg);
            Value::Int(locate(&s(0), &s(1), from))
        }
        FindInSet => Value::Int(find_in_set(&s(0), &s(1))),
        Insert => insert(&s(0), &vals[1], &vals[2], &s(3), env)?,
        Strcmp => Value::Int(match fold_ci(&s(0)).cmp(&fold_ci(&s(1))) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        }),
        Bin => conv(&vals[0], 10, 2),
        Oct => conv(&vals[0], 10, 8),
        Conv => conv(
            &vals[0],
            super::count_arg(&vals[1]),
            super::count_arg(&vals[2]),
        ),
        Md5 => {
            use md5::Digest;
            Value::str(&hex_lower(&md5::Md5::digest(s(0))))
        }
        Crc32 => Value::UInt(crc32fast::hash(&s(0)) as u64),
        ToBase64 => to_base64(&s(0), env)?,
        FromBase64 => from_base64(&s(0)),
        Soundex => Value::str(&soundex(&String::from_utf8_lossy(&s(0)))),
        Format => format_number(&vals, env)?,
        BitLength => Value::Int(s(0).len() as i64 * 8),
        ExportSet => export_set(&vals, env)?,
        Char | Field | MakeSet | Quote | Charset | Collation | Coercibility | Elt
        | WeightString => unreachable!("handled above"),
    })
}

pub(crate) fn hex_lower(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// ORD: a multibyte character's bytes read as one big-endian number.
fn ord(s: &[u8]) -> i64 {
    let Some(&first) = s.first() else { return 0 };
    let len = match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    };
    s.iter()
        .take(len.min(s.len()))
        .fold(0i64, |acc, &b| acc * 256 + b as i64)
}

/// CHAR(n, ...): each integer's bytes, big-endian without leading zero
/// bytes; NULL arguments are skipped.
fn char_fn(vals: &[Value]) -> Value {
    let mut out = Vec::new();
    for v in vals.iter().filter(|v| !v.is_null()) {
        let n = super::count_arg(v) as u64 as u32;
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count().min(3);
        out.extend_from_slice(&bytes[skip..]);
    }
    Value::Bytes(out)
}

/// Each character folded as the default collation compares it.
fn folded_chars(s: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(s)
        .chars()
        .map(|c| {
            let mut b = [0u8; 4];
            String::from_utf8_lossy(&fold_ci(c.encode_utf8(&mut b).as_bytes())).into_owned()
        })
        .collect()
}

/// LOCATE(needle, hay[, from]): 1-based character position, 0 if absent.
fn locate(needle: &[u8], hay: &[u8], from: i64) -> i64 {
    let (n, h) = (folded_chars(needle), folded_chars(hay));
    if from < 1 || from as u64 > h.len() as u64 + 1 {
        return 0;
    }
    let start = from as usize - 1;
    if n.is_empty() {
        return from;
    }
    (start..h.len())
        .find(|&i| h[i..].starts_with(&n))
        .map_or(0, |i| i as i64 + 1)
}

fn find_in_set(needle: &[u8], list: &[u8]) -> i64 {
    if needle.contains(&b',') {
        return 0;
    }
    let n = fold_ci(needle);
    if list.is_empty() {
        return 0;
    }
    list.split(|b| *b == b',')
        .position(|item| fold_ci(item) == n)
        .map_or(0, |p| p as i64 + 1)
}

/// FIELD(x, a, b, ...): the first position equal to x; text compares
/// under the collation when every argument is text, else as numbers.
fn field(vals: &[Value]) -> i64 {
    if vals[0].is_null() {
        return 0;
    }
    let all_text = vals
        .iter()
        .all(|v| matches!(v, Value::Bytes(_) | Value::Null));
    let probe = &vals[0];
    for (i, v) in vals[1..].iter().enumerate() {
        let hit = match (all_text, probe, v) {
            (_, _, Value::Null) => false,
            (true, Value::Bytes(a), Value::Bytes(b)) => fold_ci(a) == fold_ci(b),
            _ => probe.to_f64() == v.to_f64(),
        };
        if hit {
            return i as i64 + 1;
        }
    }
    0
}

fn elt(args: &[BExpr], row: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    let n = eval(&args[0], row, env)?;
    if n.is_null() {
        return Ok(Value::Null);
    }
    let i = super::count_arg(&n);
    if i < 1 || i as u64 >= args.len() as u64 {
        return Ok(Value::Null);
    }
    let v = eval(&args[i as usize], row, env)?;
    Ok(if v.is_null() {
        v
    } else {
        Value::Bytes(text(&v))
    })
}

fn insert(
    s: &[u8],
    pos: &Value,
    len: &Value,
    new: &[u8],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    let chars: Vec<char> = String::from_utf8_lossy(s).chars().collect();
    let (pos, len) = (super::count_arg(pos), super::count_arg(len));
    if pos < 1 || pos as u64 > chars.len() as u64 {
        return Ok(Value::Bytes(s.to_vec()));
    }
    let start = pos as usize - 1;
    let rest = chars.len() - start;
    let cut = if len < 0 || len as u64 > rest as u64 {
        rest
    } else {
        len as usize
    };
    if !builds("insert", s.len().saturating_add(new.len()), env)? {
        return Ok(Value::Null);
    }
    let mut out: String = chars[..start].iter().collect();
    out.push_str(&String::from_utf8_lossy(new));
    out.extend(&chars[start + cut..]);
    Ok(Value::str(&out))
}

/// CONV(n, from, to): a number's digits read in base `from` (2..36; a
/// negative base reads a signed number) and written in base `to` (a
/// negative base writes a signed one). NULL for a base out of range.
pub(crate) fn conv(v: &Value, from: i64, to: i64) -> Value {
    if !(2..=36).contains(&from.abs()) || !(2..=36).contains(&to.abs()) {
        return Value::Null;
    }
    // The argument's text is read, as MySQL does: 2.5 and 1e300 stop at
    // their first non-digit.
    let digits = text(v);
    if digits.is_empty() {
        return Value::Null;
    }
    let n = parse_base(&String::from_utf8_lossy(&digits), from);
    let (neg, mag) = if to < 0 && (n as i64) < 0 {
        (true, (n as i64).unsigned_abs())
    } else {
        (false, n)
    };
    let digits = to_base(mag, to.unsigned_abs());
    Value::str(&if neg { format!("-{digits}") } else { digits })
}

/// The leading digits of `s` in `base` (strtoull-like: stops at the first
/// non-digit, saturates on overflow, a leading '-' negates).
fn parse_base(s: &str, base: i64) -> u64 {
    let s = s.trim_start();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let radix = base.unsigned_abs() as u32;
    let mut n: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        match n
            .checked_mul(radix as u64)
            .and_then(|x| x.checked_add(d as u64))
        {
            Some(x) => n = x,
            None => overflow = true,
        }
    }
    if base < 0 {
        let signed = if overflow || n > i64::MAX as u64 {
            if neg {
                i64::MIN
            } else {
                i64::MAX
            }
        } else if neg {
            -(n as i64)
        } else {
            n as i64
        };
        return signed as u64;
    }
    if overflow {
        return u64::MAX;
    }
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

fn to_base(mut n: u64, base: u64) -> String {
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        let d = (n % base) as u32;
        out.push(std::char::from_digit(d, base as u32).unwrap_or('0'));
        n /= base;
    }
    out.iter().rev().collect::<String>().to_uppercase()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// TO_BASE64: MySQL's encoding, a newline after every 76 characters.
fn to_base64(s: &[u8], env: &mut dyn Env) -> Result<Value, Error> {
    let chars = s.len().div_ceil(3).saturating_mul(4);
    if !builds("to_base64", chars + chars / 76, env)? {
        return Ok(Value::Null);
    }
    let mut out = Vec::with_capacity(chars + chars / 76);
    for (i, chunk) in s.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            out.push(b'\n');
        }
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            out.push(if k <= chunk.len() {
                B64[(n >> (18 - 6 * k) & 63) as usize]
            } else {
                b'='
            });
        }
    }
    Ok(Value::Bytes(out))
}

/// FROM_BASE64: white space is skipped; anything else invalid is NULL.
fn from_base64(s: &[u8]) -> Value {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits, mut pad) = (0u32, 0u32, 0usize);
    for &c in s {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            pad += 1;
            continue;
        }
        let Some(d) = B64.iter().position(|b| *b == c) else {
            return Value::Null;
        };
        if pad > 0 {
            return Value::Null;
        }
        acc = acc << 6 | d as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    let total = s.iter().filter(|c| !c.is_ascii_whitespace()).count();
    if pad > 2 || bits >= 6 || total % 4 != 0 {
        return Value::Null;
    }
    Value::Bytes(out)
}

/// QUOTE: a literal that reads back as the same string; NULL is the word.
fn quote(v: &Value, env: &mut dyn Env) -> Result<Value, Error> {
    if v.is_null() {
        return Ok(Value::str("NULL"));
    }
    let s = text(v);
    if !builds("quote", s.len().saturating_mul(2).saturating_add(2), env)? {
        return Ok(Value::Null);
    }
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'\'');
    for &c in &s {
        match c {
            b'\\' | b'\'' => out.extend_from_slice(&[b'\\', c]),
            0 => out.extend_from_slice(b"\\0"),
            0x1a => out.extend_from_slice(b"\\Z"),
            _ => out.push(c),
        }
    }
    out.push(b'\'');
    Ok(Value::Bytes(out))
}

/// SOUNDEX as MySQL has it: not cut to four characters.
fn soundex(s: &str) -> String {
    const CODES: &[u8; 26] = b"01230120022455012623010202";
    let code = |c: char| CODES[(c.to_ascii_uppercase() as u8 - b'A') as usize];
    // Letters outside A..Z count as letters with no sound code.
    let code = |c: char| {
        if c.is_ascii_alphabetic() {
            code(c)
        } else {
            b'0'
        }
    };
    let mut letters = s.chars().filter(|c| c.is_alphabetic());
    let Some(first) = letters.next() else {
        return String::new();
    };
    let mut out = String::from(first.to_ascii_uppercase());
    let mut last = code(first);
    // A vowel between two like consonants does not separate them.
    for d in letters.map(code).filter(|d| *d != b'0') {
        if d != last {
            out.push(d as char);
        }
        last = d;
    }
    let mut chars = out.chars().count();
    while chars < 4 {
        out.push('0');
        chars += 1;
    }
    out
}

/// FORMAT(x, d[, locale]): rounded to d places with thousands groups.
fn format_number(vals: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    let places = super::count_arg(&vals[1]).clamp(0, 30);
    let (sep, point) = match vals.get(2).map(|v| text(v).to_ascii_lowercase()) {
        None => (',', '.'),
        Some(l) if l == b"en_us" => (',', '.'),
        Some(l) if matches!(&l[..], b"de_de" | b"es_es" | b"it_it" | b"nl_nl" | b"pt_br") => {
            ('.', ',')
        }
        Some(l) => {
            env.warn(Error::new(
                Code::UnknownLocale,
                format!("Unknown locale: '{}'", String::from_utf8_lossy(&l)),
            ))?;
            (',', '.')
        }
    };
    let rounded = match &vals[0] {
        Value::Double(d) if d.abs() >= 1e17 => expand_double(*d, places as usize),
        Value::Double(d) => format!("{:.*}", places as usize, d),
        v => match v.to_decimal().and_then(|d| d.round_places(places, false)) {
            Some(d) => d.to_string(),
            None => format!("{:.*}", places as usize, v.to_f64().unwrap_or(0.0)),
        },
    };
    Ok(Value::str(&group_digits(&rounded, sep, point)))
}

/// A large DOUBLE written out from its shortest digits (1e300 is a 1 and
/// 300 zeros, not the binary value's exact expansion).
fn expand_double(d: f64, places: usize) -> String {
    if !d.is_finite() {
        return d.to_string();
    }
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: usize = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(if d < 0.0 { "-" } else { "" });
    out.push_str(&digits);
    out.extend(std::iter::repeat_n(
        '0',
        (exp + 1).saturating_sub(digits.len()),
    ));
    if places > 0 {
        out.push('.');
        out.extend(std::iter::repeat_n('0', places));
    }
    out
}

fn group_digits(num: &str, sep: char, point: char) -> String {
    let (sign, rest) = match num.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", num),
    };
    let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
    let mut out = String::from(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(sep);
        }
        out.push(c);
    }
    if !frac.is_empty() {
        out.push(point);
        out.push_str(frac);
    }
    out
}

/// EXPORT_SET(bits, on, off[, sep[, count]]).
fn export_set(vals: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    let bits = super::count_arg(&vals[0]) as u64;
    let (on, off) = (text(&vals[1]), text(&vals[2]));
    let sep = vals.get(3).map_or(b",".to_vec(), text);
    let count = vals.get(4).map_or(64, super::count_arg).clamp(-1, 64);
    let count = if count < 0 { 64 } else { count as usize };
    let unit = on.len().max(off.len()).saturating_add(sep.len());
    if !builds("export_set", unit.saturating_mul(count), env)? {
        return Ok(Value::Null);
    }
    let parts: Vec<&[u8]> = (0..count)
        .map(|i| {
            if bits >> i & 1 == 1 {
                &on[..]
            } else {
                &off[..]
            }
        })
        .collect();
    Ok(Value::Bytes(parts.join(&sep[..])))
}

/// MAKE_SET(bits, s1, s2, ...): the strings whose bit is set, NULLs left out.
fn make_set(vals: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    if vals[0].is_null() {
        return Ok(Value::Null);
    }
    let bits = super::count_arg(&vals[0]) as u64;
    let parts: Vec<Vec<u8>> = vals[1..]
        .iter()
        .enumerate()
        .filter(|(i, v)| *i < 64 && bits >> i & 1 == 1 && !v.is_null())
        .map(|(_, v)| text(v))
        .collect();
    if !builds("make_set", parts.iter().map(|p| p.len() + 1).sum(), env)? {
        return Ok(Value::Null);
    }
    Ok(Value::Bytes(parts.join(&b","[..])))
}

/// CHARSET() / COLLATION() of a value: text is utf8mb4 under the default
/// collation; numbers, dates and NULL are binary.
fn charset(f: StrFn, v: &Value) -> Value {
    let is_text = matches!(v, Value::Bytes(_));
    Value::str(match (f, is_text) {
        (StrFn::Charset, true) => "utf8mb4",
        (StrFn::Collation, true) => "utf8mb4_0900_ai_ci",
        _ => "binary",
    })
}

/// COERCIBILITY: 2 for a column or variable, 3 for a system constant,
/// 4 for a string literal, 5 for a number, 6 for NULL.
fn coercibility(e: &BExpr) -> i64 {
    use super::Func;
    match e {
        BExpr::Literal(Value::Null) => 6,
        BExpr::Literal(Value::Bytes(_)) => 4,
        BExpr::Literal(_) => 5,
        BExpr::Column(_) | BExpr::Outer { .. } | BExpr::UserVar(_) | BExpr::Param(_) => 2,
        BExpr::Func(
            Func::User | Func::CurrentUser | Func::CurrentRole | Func::Database | Func::Version,
            _,
        ) => 3,
        BExpr::SystemVar { .. } => 3,
        BExpr::Func(_, args) => args.first().map_or(4, coercibility),
        _ => 4,
    }
}

/// The string functions that are plain `Func` variants (the older set;
/// newer ones are `Func::Str`), over evaluated, non-NULL-checked arguments.
pub(super) fn eval_basic(
    f: Func,
    vals: &[Value],
    env: &mut dyn Env,
) -> Result<Option<Value>, Error> {
    let s = |i: usize| vals.get(i).map(text).unwrap_or_default();
    let n = |i: usize| vals.get(i).map(count_arg).unwrap_or(0);
    Ok(Some(match f {
        Func::Concat => {
            let parts: Vec<Vec<u8>> = vals.iter().map(text).collect();
            if !builds("concat", parts.iter().map(Vec::len).sum(), env)? {
                return Ok(Some(Value::Null));
            }
            Value::Bytes(parts.concat())
        }
        Func::ConcatWs => {
            if vals.first().is_none_or(|v| v.is_null()) {
                return Ok(Some(Value::Null));
            }
            let sep = s(0);
            let parts: Vec<Vec<u8>> = vals[1..]
                .iter()
                .filter(|v| !v.is_null())
                .map(text)
                .collect();
            let len = parts.iter().map(|p| p.len() + sep.len()).sum();
            if !builds("concat_ws", len, env)? {
                return Ok(Some(Value::Null));
            }
            Value::Bytes(parts.join(&sep[..]))
        }
        Func::Length => Value::Int(s(0).len() as i64),
        Func::CharLength => Value::Int(String::from_utf8_lossy(&s(0)).chars().count() as i64),
        Func::Lower => Value::str(&String::from_utf8_lossy(&s(0)).to_lowercase()),
        Func::Upper => Value::str(&String::from_utf8_lossy(&s(0)).to_uppercase()),
        Func::Substring => {
            let chars: Vec<char> = String::from_utf8_lossy(&s(0)).chars().collect();
            let len = chars.len() as i64;
            let pos = n(1);
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                len + pos
            } else {
                return Ok(Some(Value::str("")));
            };
            if start < 0 || start >= len {
                return Ok(Some(Value::str("")));
            }
            let count = if vals.len() > 2 { n(2).max(0) } else { len };
            // A count near i64::MAX must not wrap past the end.
            let end = start.saturating_add(count).min(len);
            Value::str(
                &chars[start as usize..end as usize]
                    .iter()
                    .collect::<String>(),
            )
        }
        Func::Trim => {
            Value::str(String::from_utf8_lossy(&s(vals.len().saturating_sub(1))).trim_matches(' '))
        }
        Func::Ltrim => Value::str(String::from_utf8_lossy(&s(0)).trim_start_matches(' ')),
        Func::Rtrim => Value::str(String::from_utf8_lossy(&s(0)).trim_end_matches(' ')),
        Func::Replace => {
            let (a, b, c) = (String::from_utf8_lossy(&s(0)).into_owned(), s(1), s(2));
            let from = String::from_utf8_lossy(&b).into_owned();
            if from.is_empty() {
                Value::str(&a)
            } else {
                let grows = a.matches(from.as_str()).count().saturating_mul(c.len());
                if !builds("replace", a.len().saturating_add(grows), env)? {
                    return Ok(Some(Value::Null));
                }
                Value::str(&a.replace(&from, &String::from_utf8_lossy(&c)))
            }
        }
        Func::Left | Func::Right => {
            let chars: Vec<char> = String::from_utf8_lossy(&s(0)).chars().collect();
            let k = (n(1).max(0) as usize).min(chars.len());
            let slice = if f == Func::Left {
                &chars[..k]
            } else {
                &chars[chars.len() - k..]
            };
            Value::str(&slice.iter().collect::<String>())
        }
        Func::Lpad | Func::Rpad => {
            let chars: Vec<char> = String::from_utf8_lossy(&s(0)).chars().collect();
            // MySQL: a negative length gives NULL.
            let Ok(want) = usize::try_from(n(1)) else {
                return Ok(Some(Value::Null));
            };
            let pad: Vec<char> = String::from_utf8_lossy(&s(2)).chars().collect();
            if want <= chars.len() {
                Value::str(&chars[..want].iter().collect::<String>())
            } else if pad.is_empty() || !builds(&text_name(f), want.saturating_mul(4), env)? {
                Value::Null
            } else {
                let fill: String = pad.iter().cycle().take(want - chars.len()).collect();
                let body: String = chars.iter().collect();
                Value::str(&if f == Func::Lpad {
                    fill + &body
                } else {
                    body + &fill
                })
            }
        }
        Func::Repeat | Func::Space => {
            // MySQL: a count below 1 gives ''; a result longer than
            // max_allowed_packet gives NULL.
            let (unit, count) = if f == Func::Space {
                (vec![b' '], n(0))
            } else {
                (s(0), n(1))
            };
            let count = count.max(0) as usize;
            if !builds(&text_name(f), unit.len().saturating_mul(count), env)? {
                return Ok(Some(Value::Null));
            }
            Value::Bytes(unit.repeat(count))
        }
        Func::Hex => match &vals[0] {
            Value::Int(i) => Value::str(&format!("{:X}", *i as u64)),
            Value::UInt(u) => Value::str(&format!("{u:X}")),
            // Numbers are rounded to an integer first (as MySQL's HEX does).
            Value::Double(_) | Value::Decimal(_) => {
                // MySQL rounds half away from zero; past the 64-bit range
                // it prints all ones.
                let f = vals[0].to_f64().unwrap_or(0.0);
                let bits = if f <= i64::MIN as f64 || f >= u64::MAX as f64 {
                    u64::MAX
                } else if f < 0.0 {
                    f.round() as i64 as u64
                } else {
                    f.round() as u64
                };
                Value::str(&format!("{bits:X}"))
            }
            v => {
                let bytes = text(v);
                if !builds("hex", bytes.len().saturating_mul(2), env)? {
                    return Ok(Some(Value::Null));
                }
                Value::Bytes(hex_upper(&bytes))
            }
        },
        Func::Unhex => unhex(&s(0)),
        Func::SubstringIndex => substring_index(&s(0), &s(1), n(2)),
        Func::Instr => {
            let (h, needle) = (s(0), s(1));
            let pos = h
                .windows(needle.len().max(1))
                .position(|w| w == &needle[..])
                .map(|p| p + 1)
                .unwrap_or(0);
            Value::Int(if needle.is_empty() { 1 } else { pos as i64 })
        }
        _ => return Ok(None),
    }))
}

/// The SQL name of a string function, as MySQL's warnings give it.
fn text_name(f: Func) -> String {
    format!("{f:?}").to_lowercase()
}
