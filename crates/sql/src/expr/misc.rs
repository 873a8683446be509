//! Miscellaneous functions: BENCHMARK (stops when the statement is killed),
//! NAME_CONST, COMPRESS/UNCOMPRESS/UNCOMPRESSED_LENGTH (MySQL's format: a
//! 4-byte little-endian length, then a zlib stream), LOAD_FILE (always
//! NULL: lockstep reads no server files for clients, as MySQL does when
//! secure_file_priv forbids it), PS_CURRENT_THREAD_ID,
//! MYSQL_QUERY_ATTRIBUTE_STRING (the statement's query attributes), and the functions
//! refused with 1235 (AES_ENCRYPT/AES_DECRYPT, STATEMENT_DIGEST,
//! STATEMENT_DIGEST_TEXT, ICU_VERSION).

use super::{builds, eval, result_fits, text, BExpr, Env};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};
use std::io::Read;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MiscFn {
    Benchmark,
    NameConst,
    Compress,
    Uncompress,
    UncompressedLength,
    LoadFile,
    PsCurrentThreadId,
    /// mysql_query_attribute_string(name): a query attribute as a string.
    QueryAttribute,
    /// Functions lockstep recognises but refuses (1235), by name.
    Refused(&'static str),
}

impl MiscFn {
    pub fn lookup(name: &str) -> Option<MiscFn> {
        use MiscFn::*;
        Some(match name {
            "BENCHMARK" => Benchmark,
            "NAME_CONST" => NameConst,
            "COMPRESS" => Compress,
            "UNCOMPRESS" => Uncompress,
            "UNCOMPRESSED_LENGTH" => UncompressedLength,
            "LOAD_FILE" => LoadFile,
            "PS_CURRENT_THREAD_ID" => PsCurrentThreadId,
            "MYSQL_QUERY_ATTRIBUTE_STRING" => QueryAttribute,
            "AES_ENCRYPT" => Refused("AES_ENCRYPT"),
            "AES_DECRYPT" => Refused("AES_DECRYPT"),
            "STATEMENT_DIGEST" => Refused("STATEMENT_DIGEST"),
            "STATEMENT_DIGEST_TEXT" => Refused("STATEMENT_DIGEST_TEXT"),
            "ICU_VERSION" => Refused("ICU_VERSION"),
            _ => return None,
        })
    }

    pub fn arity(self) -> (usize, usize) {
        match self {
            MiscFn::Benchmark | MiscFn::NameConst => (2, 2),
            MiscFn::PsCurrentThreadId => (0, 0),
            MiscFn::Refused(_) => (0, usize::MAX),
            _ => (1, 1),
        }
    }

    pub fn result_type(self) -> DataType {
        match self {
            MiscFn::Benchmark | MiscFn::UncompressedLength => DataType::BigInt { unsigned: false },
            MiscFn::PsCurrentThreadId => DataType::BigInt { unsigned: true },
            MiscFn::Compress | MiscFn::Uncompress | MiscFn::LoadFile => {
                DataType::VarBinary { len: 65535 }
            }
            _ => DataType::VarChar { len: 255 },
        }
    }
}

pub fn eval_misc(
    f: MiscFn,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    match f {
        MiscFn::Refused(name) => return Err(Error::unsupported(name)),
        MiscFn::Benchmark => return benchmark(args, row, env),
        MiscFn::NameConst => return eval(&args[1], row, env),
        MiscFn::PsCurrentThreadId => return Ok(Value::UInt(env.connection_id())),
        _ => {}
    }
    let v = eval(&args[0], row, env)?;
    if v.is_null() || f == MiscFn::LoadFile {
        return Ok(Value::Null);
    }
    let s = text(&v);
    if f == MiscFn::QueryAttribute {
        let found = env.query_attribute(&s);
        return Ok(if found.is_null() {
            found
        } else {
            Value::Bytes(text(&found))
        });
    }
    Ok(match f {
        MiscFn::Compress => compress(&s, env)?,
        MiscFn::Uncompress => uncompress(&s, env)?,
        // Too short to hold a length: not COMPRESS output.
        MiscFn::UncompressedLength if (1..=4).contains(&s.len()) => Value::Null,
        MiscFn::UncompressedLength => Value::Int(stored_length(&s).map_or(0, |n| n as i64)),
        _ => Value::Null,
    })
}

/// BENCHMARK(count, expr): evaluates expr count times, gives 0; a killed
/// statement or one past its time ends with 1317.
fn benchmark(args: &[BExpr], row: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    let n = eval(&args[0], row, env)?;
    if n.is_null() {
        return Ok(Value::Null);
    }
    let count = super::count_arg(&n);
    if count < 0 {
        env.warn(Error::new(
            Code::WrongArguments,
            "Incorrect count value: 'benchmark'",
        ))?;
        return Ok(Value::Null);
    }
    for i in 0..count {
        if i % 1024 == 0 && env.interrupted() {
            return Err(Error::new(
                Code::QueryInterrupted,
                "Query execution was interrupted",
            ));
        }
        eval(&args[1], row, env)?;
    }
    Ok(Value::Int(0))
}

fn stored_length(s: &[u8]) -> Option<u32> {
    let head: [u8; 4] = s.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(head) & 0x3FFF_FFFF)
}

fn compress(s: &[u8], env: &mut dyn Env) -> Result<Value, Error> {
    use flate2::{write::ZlibEncoder, Compression};
    use std::io::Write;
    if s.is_empty() {
        return Ok(Value::Bytes(Vec::new()));
    }
    // zlib's worst case grows the input by a few bytes per 16 KiB block.
    if !builds("compress", s.len() + s.len() / 1000 + 64, env)? {
        return Ok(Value::Null);
    }
    let mut out = (s.len() as u32).to_le_bytes().to_vec();
    let mut enc = ZlibEncoder::new(out.split_off(4), Compression::default());
    if enc.write_all(s).is_err() {
        return Ok(Value::Null);
    }
    let Ok(body) = enc.finish() else {
        return Ok(Value::Null);
    };
    out.extend_from_slice(&body);
    // MySQL keeps a trailing space from being trimmed away.
    if out.last() == Some(&b' ') {
        out.push(b'.');
    }
    Ok(Value::Bytes(out))
}

fn uncompress(s: &[u8], env: &mut dyn Env) -> Result<Value, Error> {
    if s.is_empty() {
        return Ok(Value::Bytes(Vec::new()));
    }
    let Some(len) = stored_length(s).filter(|_| s.len() > 4) else {
        return corrupt(env);
    };
    if !result_fits(len as usize, env) {
        let max = env.system_var(false, "max_allowed_packet")?;
        env.warn(Error::new(
            Code::TooBigForUncompress,
            format!("Uncompressed data size too large; the maximum size is {max} (probably, length of uncompressed data was corrupted)"),
        ))?;
        return Ok(Value::Null);
    }
    let mut out = Vec::with_capacity(len as usize);
    let dec = flate2::read::ZlibDecoder::new(&s[4..]);
    match dec.take(len as u64 + 1).read_to_end(&mut out) {
        Ok(_) if out.len() == len as usize => Ok(Value::Bytes(out)),
        _ => corrupt(env),
    }
}

fn corrupt(env: &mut dyn Env) -> Result<Value, Error> {
    env.warn(Error::new(
        Code::ZlibDataError,
        "ZLIB: Input data corrupted",
    ))?;
    Ok(Value::Null)
}
