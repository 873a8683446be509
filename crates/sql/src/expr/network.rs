//! Network address functions: INET_ATON/INET_NTOA, INET6_ATON/INET6_NTOA,
//! IS_IPV4, IS_IPV6, IS_IPV4_COMPAT, IS_IPV4_MAPPED, as MySQL 8 has them
//! (anything that is not an address is NULL, or 0 for the IS_ tests).

use super::{eval, text, BExpr, Env};
use lockstep_types::{DataType, Error, Value};
use std::net::{Ipv4Addr, Ipv6Addr};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetFn {
    InetAton,
    InetNtoa,
    Inet6Aton,
    Inet6Ntoa,
    IsIpv4,
    IsIpv6,
    IsIpv4Compat,
    IsIpv4Mapped,
}

impl NetFn {
    pub fn lookup(name: &str) -> Option<NetFn> {
        use NetFn::*;
        Some(match name {
            "INET_ATON" => InetAton,
            "INET_NTOA" => InetNtoa,
            "INET6_ATON" => Inet6Aton,
            "INET6_NTOA" => Inet6Ntoa,
            "IS_IPV4" => IsIpv4,
            "IS_IPV6" => IsIpv6,
            "IS_IPV4_COMPAT" => IsIpv4Compat,
            "IS_IPV4_MAPPED" => IsIpv4Mapped,
            _ => return None,
        })
    }

    pub fn arity(self) -> (usize, usize) {
        (1, 1)
    }

    pub fn result_type(self) -> DataType {
        match self {
            NetFn::InetAton => DataType::BigInt { unsigned: true },
            NetFn::InetNtoa => DataType::VarChar { len: 15 },
            NetFn::Inet6Aton => DataType::VarBinary { len: 16 },
            NetFn::Inet6Ntoa => DataType::VarChar { len: 39 },
            _ => DataType::BigInt { unsigned: false },
        }
    }
}

pub fn eval_net(
    f: NetFn,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    use NetFn::*;
    let v = eval(&args[0], row, env)?;
    if v.is_null() {
        return Ok(match f {
            IsIpv4 | IsIpv6 | IsIpv4Compat | IsIpv4Mapped => Value::Int(0),
            _ => Value::Null,
        });
    }
    let s = text(&v);
    let flag = |b: bool| Value::Int(b as i64);
    Ok(match f {
        InetAton => inet_aton(&s).map_or(Value::Null, Value::UInt),
        InetNtoa => match v.to_f64() {
            Some(n) if (0.0..=u32::MAX as f64).contains(&n.round()) => {
                Value::str(&Ipv4Addr::from(super::count_arg(&v) as u32).to_string())
            }
            _ => Value::Null,
        },
        Inet6Aton => inet6_aton(&s).map_or(Value::Null, Value::Bytes),
        Inet6Ntoa => inet6_ntoa(&v).map_or(Value::Null, |t| Value::str(&t)),
        IsIpv4 => flag(parse_v4(&s).is_some()),
        IsIpv6 => flag(std::str::from_utf8(&s).is_ok_and(|t| t.parse::<Ipv6Addr>().is_ok())),
        IsIpv4Compat => flag(matches!(&v, Value::Bytes(b) if b.len() == 16
            && b[..12].iter().all(|x| *x == 0)
            && b[12..].iter().any(|x| *x != 0))),
        IsIpv4Mapped => flag(matches!(&v, Value::Bytes(b) if b.len() == 16
            && b[..10].iter().all(|x| *x == 0) && b[10] == 0xff && b[11] == 0xff)),
    })
}

/// INET_ATON: dotted decimal, short forms allowed ('127.1' is 127.0.0.1).
fn inet_aton(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.last() == Some(&b'.') {
        return None;
    }
    let (mut result, mut part, mut dots) = (0u64, 0u64, 0);
    for &c in s {
        match c {
            b'0'..=b'9' => {
                part = part * 10 + (c - b'0') as u64;
                if part > 255 {
                    return None;
                }
            }
            b'.' => {
                dots += 1;
                result = result.wrapping_shl(8) | part;
                part = 0;
            }
            _ => return None,
        }
    }
    // The last part fills the bytes the short form left out.
    if dots < 3 {
        result <<= 8 * (3 - dots);
    }
    Some(result.wrapping_shl(8) | part)
}

/// Four decimal parts, each 0..255 (MySQL accepts leading zeros).
fn parse_v4(s: &[u8]) -> Option<[u8; 4]> {
    let t = std::str::from_utf8(s).ok()?;
    let parts: Vec<&str> = t.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut out = [0u8; 4];
    for (o, p) in out.iter_mut().zip(parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(out)
}

fn inet6_aton(s: &[u8]) -> Option<Vec<u8>> {
    if let Some(v4) = parse_v4(s) {
        return Some(v4.to_vec());
    }
    let t = std::str::from_utf8(s).ok()?;
    t.parse::<Ipv6Addr>().ok().map(|a| a.octets().to_vec())
}

/// INET6_NTOA of 4 or 16 bytes; IPv4-compatible and -mapped addresses end
/// in dotted decimal, as MySQL writes them.
fn inet6_ntoa(v: &Value) -> Option<String> {
    let Value::Bytes(b) = v else { return None };
    match b.len() {
        4 => Some(Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string()),
        16 => {
            let a = Ipv6Addr::from(<[u8; 16]>::try_from(&b[..]).ok()?);
            let tail = Ipv4Addr::new(b[12], b[13], b[14], b[15]);
            let zero12 = b[..12].iter().all(|x| *x == 0);
            let compat = zero12 && b[12..14].iter().any(|x| *x != 0);
            Some(if compat {
                format!("::{tail}")
            } else if a.to_ipv4_mapped().is_some() {
                format!("::ffff:{tail}")
            } else {
                a.to_string()
            })
        }
        _ => None,
    }
}
