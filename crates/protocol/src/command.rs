//! Decoding of command-phase packets. Both decoders are pure functions of
//! their input bytes (plus the statement's remembered parameter types), so
//! they can be fuzzed without a connection.

use crate::resultset::types;
use crate::wire::{Cursor, Malformed, Result};
use lockstep_types::{Date, DateTime, Decimal, Value};

pub const COM_SLEEP: u8 = 0x00;
pub const COM_QUIT: u8 = 0x01;
pub const COM_INIT_DB: u8 = 0x02;
pub const COM_QUERY: u8 = 0x03;
pub const COM_FIELD_LIST: u8 = 0x04;
pub const COM_STATISTICS: u8 = 0x09;
pub const COM_PROCESS_KILL: u8 = 0x0C;
pub const COM_PING: u8 = 0x0E;
pub const COM_CHANGE_USER: u8 = 0x11;
pub const COM_STMT_PREPARE: u8 = 0x16;
pub const COM_STMT_EXECUTE: u8 = 0x17;
pub const COM_STMT_SEND_LONG_DATA: u8 = 0x18;
pub const COM_STMT_CLOSE: u8 = 0x19;
pub const COM_STMT_RESET: u8 = 0x1A;
pub const COM_SET_OPTION: u8 = 0x1B;
pub const COM_STMT_FETCH: u8 = 0x1C;
pub const COM_BINLOG_DUMP: u8 = 0x12;
pub const COM_REGISTER_SLAVE: u8 = 0x15;
pub const COM_BINLOG_DUMP_GTID: u8 = 0x1E;
pub const COM_RESET_CONNECTION: u8 = 0x1F;

/// COM_SET_OPTION values.
pub const MULTI_STATEMENTS_ON: u16 = 0;
pub const MULTI_STATEMENTS_OFF: u16 = 1;

/// A decoded command; text and parameter bytes borrow from the packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command<'a> {
    Quit,
    InitDb(&'a [u8]),
    Query(&'a [u8]),
    FieldList {
        table: &'a [u8],
        wildcard: &'a [u8],
    },
    Statistics,
    Ping,
    ProcessKill(u32),
    StmtPrepare(&'a [u8]),
    /// Parameters are decoded by [`decode_execute_params`] once the
    /// statement's parameter count is known.
    StmtExecute {
        statement_id: u32,
        flags: u8,
        iterations: u32,
        params: &'a [u8],
    },
    StmtSendLongData {
        statement_id: u32,
        param: u16,
        data: &'a [u8],
    },
    StmtClose(u32),
    StmtReset(u32),
    SetOption(u16),
    StmtFetch {
        statement_id: u32,
        rows: u32,
    },
    ResetConnection,
    /// COM_BINLOG_DUMP_GTID: the whole payload after the command byte,
    /// decoded by the handler (it knows GTID sets).
    BinlogDumpGtid(&'a [u8]),
    /// COM_BINLOG_DUMP (file and position): the payload after the byte.
    BinlogDump(&'a [u8]),
    /// COM_REGISTER_SLAVE: a replica names itself before its dump.
    RegisterReplica(&'a [u8]),
    /// Any other command byte (including an empty packet, as 0x00).
    Unknown(u8),
}

pub fn decode_command(payload: &[u8]) -> Result<Command<'_>> {
    let mut c = Cursor::new(payload);
    let Ok(code) = c.u8() else {
        return Ok(Command::Unknown(COM_SLEEP));
    };
    Ok(match code {
        COM_QUIT => Command::Quit,
        COM_INIT_DB => Command::InitDb(c.rest()),
        COM_QUERY => Command::Query(c.rest()),
        COM_FIELD_LIST => Command::FieldList {
            table: c.null_terminated_or_rest(),
            wildcard: c.rest(),
        },
        COM_STATISTICS => Command::Statistics,
        COM_PING => Command::Ping,
        COM_PROCESS_KILL => Command::ProcessKill(c.u32()?),
        COM_STMT_PREPARE => Command::StmtPrepare(c.rest()),
        COM_STMT_EXECUTE => Command::StmtExecute {
            statement_id: c.u32()?,
            flags: c.u8()?,
            iterations: c.u32()?,
            params: c.rest(),
        },
        COM_STMT_SEND_LONG_DATA => Command::StmtSendLongData {
            statement_id: c.u32()?,
            param: c.u16()?,
            data: c.rest(),
        },
        COM_STMT_CLOSE => Command::StmtClose(c.u32()?),
        COM_STMT_RESET => Command::StmtReset(c.u32()?),
        COM_SET_OPTION => Command::SetOption(c.u16()?),
        COM_STMT_FETCH => Command::StmtFetch {
            statement_id: c.u32()?,
            rows: c.u32()?,
        },
        COM_RESET_CONNECTION => Command::ResetConnection,
        COM_BINLOG_DUMP_GTID => Command::BinlogDumpGtid(c.rest()),
        COM_BINLOG_DUMP => Command::BinlogDump(c.rest()),
        COM_REGISTER_SLAVE => Command::RegisterReplica(c.rest()),
        other => Command::Unknown(other),
    })
}

/// A parameter type as the client bound it: the MYSQL_TYPE_* code and
/// whether the unsigned flag (0x80 in the flags byte) was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamType {
    pub type_code: u8,
    pub unsigned: bool,
}

/// Decodes the parameter part of COM_STMT_EXECUTE (after the iteration
/// count) for a statement with `num_params` parameters.
///
/// `bound` holds the types from an earlier execute; it is replaced when the
/// client sends new ones (new-params-bound flag), and must be filled if it
/// does not. A parameter with data in `long_data` (COM_STMT_SEND_LONG_DATA)
/// takes that data, which is moved out, and has no bytes in the packet.
pub fn decode_execute_params(
    data: &[u8],
    num_params: usize,
    bound: &mut Vec<ParamType>,
    long_data: &mut [Option<Vec<u8>>],
) -> Result<Vec<Value>> {
    if num_params == 0 {
        return Ok(Vec::new());
    }
    let mut c = Cursor::new(data);
    let null_bitmap = c.bytes(num_params.div_ceil(8))?;
    if c.u8()? == 1 {
        let mut types = Vec::with_capacity(num_params);
        for _ in 0..num_params {
            let type_code = c.u8()?;
            let flags = c.u8()?;
            types.push(ParamType {
                type_code,
                unsigned: flags & 0x80 != 0,
            });
        }
        *bound = types;
    }
    if bound.len() != num_params {
        return Err(Malformed("parameter types were never bound"));
    }
    let mut values = Vec::with_capacity(num_params);
    for (i, ty) in bound.iter().enumerate() {
        if let Some(long) = long_data.get_mut(i).and_then(Option::take) {
            values.push(Value::Bytes(long));
        } else if null_bitmap[i / 8] & (1 << (i % 8)) != 0 {
            values.push(Value::Null);
        } else {
            values.push(decode_binary_value(&mut c, *ty)?);
        }
    }
    Ok(values)
}

/// A parameter type whose bytes are text in character_set_client.
pub fn is_text_param(type_code: u8) -> bool {
    matches!(
        type_code,
        types::VARCHAR | types::VAR_STRING | types::STRING | types::ENUM | types::SET
    )
}

/// One value in the binary protocol's encoding of `ty`.
pub fn decode_binary_value(c: &mut Cursor<'_>, ty: ParamType) -> Result<Value> {
    let int = |v: i64, u: u64| {
        if ty.unsigned {
            if u <= i64::MAX as u64 {
                Value::Int(u as i64)
            } else {
                Value::UInt(u)
            }
        } else {
            Value::Int(v)
        }
    };
    Ok(match ty.type_code {
        types::NULL => Value::Null,
        types::TINY => {
            let b = c.u8()?;
            int(b as i8 as i64, b as u64)
        }
        types::SHORT | types::YEAR => {
            let v = c.u16()?;
            int(v as i16 as i64, v as u64)
        }
        types::LONG | types::INT24 => {
            let v = c.u32()?;
            int(v as i32 as i64, v as u64)
        }
        types::LONGLONG => {
            let v = c.u64()?;
            int(v as i64, v)
        }
        types::FLOAT => Value::Double(c.f32()? as f64),
        types::DOUBLE => Value::Double(c.f64()?),
        types::DECIMAL | types::NEWDECIMAL => {
            let b = c.lenenc_bytes()?;
            match std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.trim().parse::<Decimal>().ok())
            {
                Some(d) => Value::Decimal(d),
                None => Value::Bytes(b.to_vec()),
            }
        }
        types::DATE | types::DATETIME | types::TIMESTAMP | types::NEWDATE => {
            decode_binary_datetime(c, ty.type_code == types::DATE)?
        }
        types::TIME => decode_binary_time(c)?,
        types::VARCHAR
        | types::VAR_STRING
        | types::STRING
        | types::ENUM
        | types::SET
        | types::TINY_BLOB
        | types::MEDIUM_BLOB
        | types::LONG_BLOB
        | types::BLOB
        | types::GEOMETRY
        | types::BIT
        | types::JSON => Value::Bytes(c.lenenc_bytes()?.to_vec()),
        _ => return Err(Malformed("unsupported parameter type")),
    })
}

fn decode_binary_datetime(c: &mut Cursor<'_>, date_only: bool) -> Result<Value> {
    let len = c.u8()?;
    let mut dt = DateTime::default();
    if !matches!(len, 0 | 4 | 7 | 11) {
        return Err(Malformed("bad temporal length"));
    }
    if len >= 4 {
        dt.date = Date {
            year: c.u16()?,
            month: c.u8()?,
            day: c.u8()?,
        };
    }
    if len >= 7 {
        dt.hour = c.u8()?;
        dt.minute = c.u8()?;
        dt.second = c.u8()?;
    }
    if len == 11 {
        dt.micro = c.u32()?;
    }
    let d = dt.date;
    let valid = Date::new(d.year, d.month, d.day).is_some()
        && dt.hour < 24
        && dt.minute < 60
        && dt.second < 60
        && dt.micro < 1_000_000;
    Ok(if !valid {
        // Leave an impossible date to the SQL layer's string conversion,
        // which reports it the way it reports a bad literal.
        Value::Bytes(
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}",
                d.year, d.month, d.day, dt.hour, dt.minute, dt.second, dt.micro
            )
            .into_bytes(),
        )
    } else if date_only {
        Value::Date(d)
    } else {
        Value::DateTime(dt)
    })
}

/// TIME has no Value variant; it becomes its text form `[-]H:MM:SS[.ffffff]`.
fn decode_binary_time(c: &mut Cursor<'_>) -> Result<Value> {
    let len = c.u8()?;
    if !matches!(len, 0 | 8 | 12) {
        return Err(Malformed("bad time length"));
    }
    if len == 0 {
        return Ok(Value::str("00:00:00"));
    }
    let negative = c.u8()? != 0;
    let days = c.u32()? as u64;
    let (h, m, s) = (c.u8()? as u64, c.u8()?, c.u8()?);
    let micro = if len == 12 { c.u32()? } else { 0 };
    let mut text = format!(
        "{}{:02}:{:02}:{:02}",
        if negative { "-" } else { "" },
        days * 24 + h,
        m,
        s
    );
    if micro != 0 {
        text.push_str(&format!(".{micro:06}"));
    }
    Ok(Value::Bytes(text.into_bytes()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_params_are_the_string_types_not_blobs() {
        use crate::resultset::types;
        for t in [
            types::VARCHAR,
            types::VAR_STRING,
            types::STRING,
            types::ENUM,
            types::SET,
        ] {
            assert!(super::is_text_param(t));
        }
        for t in [
            types::BLOB,
            types::TINY_BLOB,
            types::LONG_BLOB,
            types::JSON,
            types::LONG,
        ] {
            assert!(!super::is_text_param(t));
        }
    }

    use super::*;
    use crate::wire;

    #[test]
    fn simple_commands() {
        assert_eq!(decode_command(b"\x01"), Ok(Command::Quit));
        assert_eq!(
            decode_command(b"\x03select 1"),
            Ok(Command::Query(b"select 1"))
        );
        assert_eq!(decode_command(b"\x02db"), Ok(Command::InitDb(b"db")));
        assert_eq!(
            decode_command(b"\x04t1\0c%"),
            Ok(Command::FieldList {
                table: b"t1",
                wildcard: b"c%"
            })
        );
        assert_eq!(
            decode_command(b"\x0c\x05\0\0\0"),
            Ok(Command::ProcessKill(5))
        );
        assert_eq!(decode_command(b"\x19\x07\0\0\0"), Ok(Command::StmtClose(7)));
        assert_eq!(decode_command(b"\x1b\x01\0"), Ok(Command::SetOption(1)));
        assert_eq!(
            decode_command(b"\x18\x01\0\0\0\x02\0data"),
            Ok(Command::StmtSendLongData {
                statement_id: 1,
                param: 2,
                data: b"data"
            })
        );
        assert_eq!(decode_command(b""), Ok(Command::Unknown(0)));
        assert_eq!(decode_command(b"\x63"), Ok(Command::Unknown(0x63)));
        assert!(decode_command(b"\x19\x07").is_err());
        assert!(decode_command(b"\x17\x01\0\0\0\0").is_err());
    }

    #[test]
    fn execute_with_mixed_params_and_nulls() {
        // 8 params: tiny unsigned, null, longlong, double, varchar, datetime,
        // newdecimal, date; then a ninth (long data) to spill the bitmap.
        let mut p = Vec::new();
        p.extend_from_slice(&[0b0000_0010, 0]); // param 1 is NULL
        p.push(1); // new params bound
        let tys: [(u8, u8); 9] = [
            (types::TINY, 0x80),
            (types::LONG, 0),
            (types::LONGLONG, 0),
            (types::DOUBLE, 0),
            (types::VAR_STRING, 0),
            (types::DATETIME, 0),
            (types::NEWDECIMAL, 0),
            (types::DATE, 0),
            (types::BLOB, 0),
        ];
        for (t, f) in tys {
            p.extend_from_slice(&[t, f]);
        }
        p.push(200);
        p.extend_from_slice(&(-5i64).to_le_bytes());
        p.extend_from_slice(&2.5f64.to_le_bytes());
        wire::put_lenenc_bytes(&mut p, b"hi");
        p.extend_from_slice(&[7, 0xE8, 0x07, 12, 31, 23, 59, 58]);
        wire::put_lenenc_bytes(&mut p, b"-12.50");
        p.extend_from_slice(&[4, 0xD0, 0x07, 2, 29]);

        let mut cmd = vec![COM_STMT_EXECUTE];
        cmd.extend_from_slice(&9u32.to_le_bytes());
        cmd.push(0);
        cmd.extend_from_slice(&1u32.to_le_bytes());
        cmd.extend_from_slice(&p);
        let Ok(Command::StmtExecute {
            statement_id: 9,
            iterations: 1,
            params,
            ..
        }) = decode_command(&cmd)
        else {
            panic!("not an execute");
        };

        let mut bound = Vec::new();
        let mut long = vec![None; 9];
        long[8] = Some(b"big".to_vec());
        let v = decode_execute_params(params, 9, &mut bound, &mut long).expect("decodes");
        assert_eq!(v.len(), 9);
        assert!(matches!(v[0], Value::Int(200)));
        assert!(v[1].is_null());
        assert!(matches!(v[2], Value::Int(-5)));
        assert!(matches!(v[3], Value::Double(d) if d == 2.5));
        assert_eq!(v[4], Value::str("hi"));
        assert_eq!(v[5].to_string(), "2024-12-31 23:59:58");
        assert_eq!(v[6].to_string(), "-12.50");
        assert!(matches!(v[7], Value::Date(d) if d == Date { year: 2000, month: 2, day: 29 }));
        assert_eq!(v[8], Value::str("big"));
        assert!(long.iter().all(Option::is_none), "long data is consumed");
        assert_eq!(bound.len(), 9);

        // A later execute that does not resend types reuses the bound ones.
        let mut p2 = vec![0b1111_1111, 0b0000_0000, 0];
        wire::put_lenenc_bytes(&mut p2, b"again");
        let v = decode_execute_params(&p2, 9, &mut bound, &mut long).expect("decodes");
        assert!(v[..8].iter().all(Value::is_null));
        assert_eq!(v[8], Value::str("again"));

        // Truncations error out, never panic.
        for cut in 0..p.len() {
            let mut b = Vec::new();
            let _ = decode_execute_params(&p[..cut], 9, &mut b, &mut [None, None]);
        }
        assert!(decode_execute_params(&[0, 0], 1, &mut Vec::new(), &mut []).is_err());
    }

    #[test]
    fn binary_values() {
        let dec = |bytes: &[u8], type_code, unsigned| {
            decode_binary_value(
                &mut Cursor::new(bytes),
                ParamType {
                    type_code,
                    unsigned,
                },
            )
        };
        assert!(matches!(
            dec(&[0xFF], types::TINY, false),
            Ok(Value::Int(-1))
        ));
        assert!(matches!(
            dec(&[0xFF, 0xFF], types::SHORT, true),
            Ok(Value::Int(65535))
        ));
        assert!(matches!(
            dec(&[0xFF; 8], types::LONGLONG, true),
            Ok(Value::UInt(u64::MAX))
        ));
        assert!(
            matches!(dec(&1.5f32.to_le_bytes(), types::FLOAT, false), Ok(Value::Double(d)) if d == 1.5)
        );
        let t = dec(
            &[12, 1, 1, 0, 0, 0, 2, 3, 4, 5, 0, 0, 0],
            types::TIME,
            false,
        );
        assert_eq!(t.map(|v| v.to_string()), Ok("-26:03:04.000005".into()));
        let bad = dec(&[4, 0xE8, 0x07, 13, 1], types::DATE, false);
        assert!(matches!(bad, Ok(Value::Bytes(_))));
        assert_eq!(
            dec(&[0], types::DATETIME, false).map(|v| v.to_string()),
            Ok("0000-00-00 00:00:00".into())
        );
        assert!(dec(&[5, 0, 0, 0, 0, 0], types::DATETIME, false).is_err());
        assert!(dec(&[1], 0x70, false).is_err());
    }

    #[test]
    fn random_input_never_panics() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..20_000 {
            let len = rng.gen_range(0..64);
            let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let _ = decode_command(&bytes);
            let _ = crate::handshake::parse_handshake_response(&bytes);
            let n = rng.gen_range(0..20);
            let mut bound = Vec::new();
            let mut long = vec![None; rng.gen_range(0..3)];
            let _ = decode_execute_params(&bytes, n, &mut bound, &mut long);
            // Valid-looking type header followed by garbage values.
            let mut typed = vec![0u8; n.div_ceil(8)];
            typed.push(1);
            for _ in 0..n {
                typed.push(rng.gen_range(0..20u8).max(1) | if rng.gen() { 0xF0 } else { 0 });
                typed.push(0);
            }
            typed.extend_from_slice(&bytes);
            let _ = decode_execute_params(&typed, n, &mut bound, &mut long);
        }
    }
}
