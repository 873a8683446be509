//! DATE, DATETIME2, TIMESTAMP2 and TIME2 in their row-image forms.

use lockstep_types::Value;

use super::rows::ColumnType;

const T_DATE: u8 = 10;
const T_TIMESTAMP2: u8 = 17;
const T_DATETIME2: u8 = 18;

/// The fraction in the bytes `fsp` asks for, big-endian.
fn put_frac(o: &mut Vec<u8>, micro: i64, fsp: u8) {
    match fsp {
        1 | 2 => o.push((micro / 10_000) as u8),
        3 | 4 => o.extend_from_slice(&((micro / 100) as u16).to_be_bytes()),
        5 | 6 => o.extend_from_slice(&(micro as u32).to_be_bytes()[1..]),
        _ => {}
    }
}

pub fn put_temporal(o: &mut Vec<u8>, t: &ColumnType, v: &Value) {
    let fsp = t.meta.first().copied().unwrap_or(0);
    let (date, h, mi, s, micro) = match v {
        Value::Date(d) => (*d, 0, 0, 0, 0),
        Value::DateTime(dt) => (dt.date, dt.hour, dt.minute, dt.second, dt.micro),
        other if t.code == 19 => return put_time(o, &other.to_string(), fsp),
        _ => return put_time(o, "00:00:00", fsp),
    };
    let (y, m, d) = (date.year as u64, date.month as u64, date.day as u64);
    match t.code {
        T_DATE => {
            let x = d | (m << 5) | (y << 9);
            o.extend_from_slice(&(x as u32).to_le_bytes()[..3]);
        }
        T_DATETIME2 => {
            let ym = y * 13 + m;
            let x = (ym << 22) | (d << 17) | ((h as u64) << 12) | ((mi as u64) << 6) | s as u64;
            o.extend_from_slice(&(x + 0x80_0000_0000).to_be_bytes()[3..]);
            put_frac(o, micro as i64, fsp);
        }
        T_TIMESTAMP2 => {
            let days = date.to_days();
            let secs = days * 86_400 + h as i64 * 3600 + mi as i64 * 60 + s as i64;
            o.extend_from_slice(&(secs.max(0) as u32).to_be_bytes());
            put_frac(o, micro as i64, fsp);
        }
        _ => put_time(o, "00:00:00", fsp),
    }
}

/// TIME2 from lockstep's text form '[-]hhh:mm:ss[.ffffff]'.
fn put_time(o: &mut Vec<u8>, text: &str, fsp: u8) {
    let (neg, t) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
    let mut parts = hms.split(':').map(|p| p.parse::<i64>().unwrap_or(0));
    let (h, m, s) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    let micro: i64 = format!("{:0<6}", &frac[..frac.len().min(6)])
        .parse()
        .unwrap_or(0);
    let mut packed = (((h << 12) | (m << 6) | s) << 24) + micro;
    if neg {
        packed = -packed;
    }
    if fsp >= 5 {
        let x = (packed + 0x8000_0000_0000) as u64;
        o.extend_from_slice(&x.to_be_bytes()[2..]);
        return;
    }
    // As MySQL stores it: the integer part rounded down (-1.5 s is -2)
    // and the remainder, negative too, in two's complement; its reader
    // adds them back.
    let int = packed >> 24;
    let frac = (packed % (1 << 24)) / if fsp <= 2 { 10_000 } else { 100 };
    let x = (int + 0x80_0000) as u32;
    o.extend_from_slice(&x.to_be_bytes()[1..]);
    match fsp {
        1 | 2 => o.push(frac as u8),
        3 | 4 => o.extend_from_slice(&(frac as u16).to_be_bytes()),
        _ => {}
    }
}
