//! Date and time functions beyond datetime.rs: WEEK, WEEKOFYEAR,
//! YEARWEEK, TIME_TO_SEC, SEC_TO_TIME, TO_DAYS, FROM_DAYS, TO_SECONDS,
//! EXTRACT, CONVERT_TZ, ADDTIME, SUBTIME, TIMEDIFF, MAKETIME, PERIOD_ADD,
//! PERIOD_DIFF, TIMESTAMP, TIME_FORMAT and GET_FORMAT, as MySQL 8 has
//! them. TIME results are text (as TIME() gives them); a value that is
//! not a date warns 1292 and gives NULL.

use super::datetime::date_arg;
use super::{count_arg, date_function, make_date, text, to_datetime, to_time, BExpr, Env, Func};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Date, DateTime, Error, Time, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeFn {
    Week,
    WeekOfYear,
    YearWeek,
    TimeToSec,
    SecToTime,
    ToDays,
    FromDays,
    ToSeconds,
    Extract,
    ConvertTz,
    AddTime,
    SubTime,
    TimeDiff,
    MakeTime,
    PeriodAdd,
    PeriodDiff,
    Timestamp,
    TimeFormat,
    GetFormat,
}

/// Days from year 0 to 1970-01-01 in MySQL's day numbering (TO_DAYS).
const DAYNR_1970: i64 = 719_528;
/// The largest TIME in microseconds (838:59:59).
const TIME_MAX_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * 1_000_000;

impl TimeFn {
    pub fn lookup(name: &str) -> Option<TimeFn> {
        use TimeFn::*;
        Some(match name {
            "WEEK" => Week,
            "WEEKOFYEAR" => WeekOfYear,
            "YEARWEEK" => YearWeek,
            "TIME_TO_SEC" => TimeToSec,
            "SEC_TO_TIME" => SecToTime,
            "TO_DAYS" => ToDays,
            "FROM_DAYS" => FromDays,
            "TO_SECONDS" => ToSeconds,
            "EXTRACT" => Extract,
            "CONVERT_TZ" => ConvertTz,
            "ADDTIME" => AddTime,
            "SUBTIME" => SubTime,
            "TIMEDIFF" => TimeDiff,
            "MAKETIME" => MakeTime,
            "PERIOD_ADD" => PeriodAdd,
            "PERIOD_DIFF" => PeriodDiff,
            "TIMESTAMP" => Timestamp,
            "TIME_FORMAT" => TimeFormat,
            "GET_FORMAT" => GetFormat,
            _ => return None,
        })
    }

    pub fn arity(self) -> (usize, usize) {
        use TimeFn::*;
        match self {
            Week | YearWeek | Timestamp => (1, 2),
            WeekOfYear | TimeToSec | SecToTime | ToDays | FromDays | ToSeconds => (1, 1),
            ConvertTz | MakeTime => (3, 3),
            _ => (2, 2),
        }
    }

    /// The result's type; a DATETIME has the fractional digits its
    /// first argument can carry.
    pub fn result_type(self, args: &[BExpr]) -> DataType {
        use TimeFn::*;
        let fsp = match args.first() {
            Some(BExpr::Literal(v)) => fsp_of(v),
            Some(BExpr::Func(..)) => 0,
            _ => 6,
        };
        match self {
            TimeToSec if fsp > 0 => DataType::Double,
            SecToTime | TimeDiff | MakeTime => DataType::Time { fsp: 6 },
            FromDays => DataType::Date,
            ConvertTz | Timestamp => DataType::DateTime { fsp },
            AddTime | SubTime | TimeFormat | GetFormat => DataType::VarChar { len: 64 },
            _ => DataType::BigInt { unsigned: false },
        }
    }
}

pub fn eval_time(
    f: TimeFn,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    use TimeFn::*;
    let Some(vals) = super::eval_args_or_null(args, row, env)? else {
        return Ok(Value::Null);
    };
    let n = |i: usize| super::count_arg(&vals[i]);
    Ok(match f {
        Week | WeekOfYear | YearWeek => {
            let Some(d) = date_or_warn(&vals[0], env)? else {
                return Ok(Value::Null);
            };
            let mode = match f {
                WeekOfYear => 3,
                _ if vals.len() > 1 => n(1),
                _ => 0,
            };
            let (year, week) = week(d.date, mode, f == YearWeek);
            Value::Int(if f == YearWeek {
                year * 100 + week
            } else {
                week
            })
        }
        TimeToSec => match to_time(&vals[0]) {
            Some(t) if t.micro != 0 => Value::Double(signed_micros(&t) as f64 / 1e6),
            Some(t) => Value::Int(signed_micros(&t) / 1_000_000),
            None => return warn_null(&vals[0], "time", env),
        },
        SecToTime => sec_to_time(&vals[0], env)?,
        ToDays | ToSeconds => match date_or_warn(&vals[0], env)? {
            Some(d) if d.date.month == 0 => Value::Null,
            Some(d) => {
                let days = d.date.to_days() + DAYNR_1970;
                let secs = d.hour as i64 * 3600 + d.minute as i64 * 60 + d.second as i64;
                Value::Int(if f == ToDays {
                    days
                } else {
                    days * 86400 + secs
                })
            }
            None => Value::Null,
        },
        FromDays => from_days(n(0)),
        Extract => extract(&text(&vals[0]), &vals[1], env)?,
        ConvertTz => convert_tz(&vals, env)?,
        AddTime | SubTime => add_time(&vals, f == SubTime),
        TimeDiff => time_diff(&vals[0], &vals[1]),
        MakeTime => make_time(&vals, env)?,
        // Period 0 stays 0 (MySQL).
        PeriodAdd if n(0) == 0 => Value::Int(0),
        PeriodAdd => Value::Int(from_months(to_months(n(0)).wrapping_add(n(1)))),
        PeriodDiff => Value::Int(to_months(n(0)).wrapping_sub(to_months(n(1)))),
        Timestamp => timestamp(&vals, env)?,
        TimeFormat => time_format(&vals[0], &text(&vals[1])),
        GetFormat => get_format(&text(&vals[0]), &text(&vals[1])),
    })
}

fn warn_null(v: &Value, kind: &str, env: &mut dyn Env) -> Result<Value, Error> {
    env.warn(Error::new(
        Code::TruncatedWrongValue,
        format!(
            "Incorrect {kind} value: '{}'",
            String::from_utf8_lossy(&text(v))
        ),
    ))?;
    Ok(Value::Null)
}

fn date_or_warn(v: &Value, env: &mut dyn Env) -> Result<Option<DateTime>, Error> {
    match date_arg(v) {
        // The zero date has no week, day number or zone.
        Some((d, _)) if d.date.month != 0 && d.date.day != 0 => Ok(Some(d)),
        _ => warn_null(v, "datetime", env).map(|_| None),
    }
}

fn signed_micros(t: &Time) -> i64 {
    let m = ((t.hour as i64 * 60 + t.minute as i64) * 60 + t.second as i64) * 1_000_000
        + t.micro as i64;
    if t.negative {
        -m
    } else {
        m
    }
}

/// A span in microseconds as TIME text, clamped to ±838:59:59.
fn time_text(micros: i64, fsp: u8) -> Value {
    let m = micros.clamp(-TIME_MAX_MICROS, TIME_MAX_MICROS);
    let a = m.unsigned_abs();
    let t = Time {
        negative: m < 0,
        hour: (a / 3_600_000_000) as u32,
        minute: (a / 60_000_000 % 60) as u8,
        second: (a / 1_000_000 % 60) as u8,
        micro: (a % 1_000_000) as u32,
    };
    Value::str(&t.format(fsp))
}

/// Fractional digits a number or text argument carries (at most 6).
fn fsp_of(v: &Value) -> u8 {
    match v {
        Value::Decimal(d) => d.scale().min(6) as u8,
        Value::Double(_) => 6,
        // Text with a fraction is read at full precision, as MySQL does.
        Value::Bytes(b) if b.contains(&b'.') => 6,
        Value::DateTime(d) if d.micro != 0 => 6,
        _ => 0,
    }
}

fn sec_to_time(v: &Value, env: &mut dyn Env) -> Result<Value, Error> {
    let secs = v.to_f64().unwrap_or(0.0);
    let micros = (secs * 1e6).round();
    if micros.abs() > TIME_MAX_MICROS as f64 {
        env.warn(Error::new(
            Code::TruncatedWrongValue,
            format!(
                "Truncated incorrect time value: '{}'",
                String::from_utf8_lossy(&text(v))
            ),
        ))?;
    }
    let micros = micros.clamp(-(TIME_MAX_MICROS as f64), TIME_MAX_MICROS as f64) as i64;
    Ok(time_text(micros, fsp_of(v)))
}

fn from_days(n: i64) -> Value {
    if !(366..=3_652_424).contains(&n) {
        return Value::Date(Date {
            year: 0,
            month: 0,
            day: 0,
        });
    }
    Value::Date(Date::from_days(n - DAYNR_1970))
}

/// MySQL's week number: `mode` 0..7 picks the first day of the week
/// (bit 0: Monday), whether weeks count 1..53 (bit 1) and whether week 1
/// is the first with a Sunday/Monday or with 4+ days (bit 2). Returns
/// (year the week belongs to, week).
fn week(date: Date, mode: i64, year_week: bool) -> (i64, i64) {
    let mut behaviour = (mode & 7) as u8;
    if behaviour & 1 == 0 {
        behaviour ^= 4;
    }
    if year_week {
        behaviour |= 2;
    }
    let monday_first = behaviour & 1 != 0;
    let mut week_year = behaviour & 2 != 0;
    let first_weekday = behaviour & 4 != 0;
    let daynr = date.to_days();
    let mut year = date.year as i64;
    let mut first = Date::new(date.year, 1, 1).map_or(daynr, |d| d.to_days());
    // 0 = the week's first day.
    let wd = |d: i64| ((d + 3).rem_euclid(7) + if monday_first { 0 } else { 1 }) % 7;
    let mut weekday = wd(first);
    let starts_late = |w: i64| (first_weekday && w != 0) || (!first_weekday && w >= 4);
    if date.month == 1 && (date.day as i64) <= 7 - weekday {
        if !week_year && starts_late(weekday) {
            return (year, 0);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first -= days;
        weekday = (weekday + 53 * 7 - days) % 7;
    }
    let days = if starts_late(weekday) {
        daynr - (first + (7 - weekday))
    } else {
        daynr - (first - weekday)
    };
    if week_year && days >= 52 * 7 {
        let next = (weekday + days_in_year(year)) % 7;
        if !starts_late(next) {
            return (year + 1, 1);
        }
    }
    (year, days / 7 + 1)
}

fn days_in_year(y: i64) -> i64 {
    if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
        366
    } else {
        365
    }
}

/// EXTRACT(unit FROM value); compound units join their parts' digits.
fn extract(unit: &[u8], v: &Value, env: &mut dyn Env) -> Result<Value, Error> {
    let unit = String::from_utf8_lossy(unit).to_ascii_uppercase();
    let time_only = matches!(v, Value::Bytes(b) if !b.contains(&b'-'));
    let (d, t) = if time_only {
        match to_time(v) {
            Some(t) => (None, t),
            None => return warn_null(v, "time", env),
        }
    } else {
        // The zero date's parts are zeros.
        match date_arg(v) {
            Some((d, _)) if unit != "WEEK" || d.date.month != 0 => (Some(d), Time::of_datetime(&d)),
            _ => return warn_null(v, "datetime", env),
        }
    };
    let sign = if t.negative { -1 } else { 1 };
    let (h, mi, s, us) = (
        t.hour as i64,
        t.minute as i64,
        t.second as i64,
        t.micro as i64,
    );
    let date = d.map(|d| d.date).unwrap_or_default();
    let day = if time_only { h / 24 } else { date.day as i64 };
    let h = if time_only { h % 24 } else { h };
    let (y, mo) = (date.year as i64, date.month as i64);
    let n = match unit.as_str() {
        "MICROSECOND" => us,
        "SECOND" => s,
        "MINUTE" => mi,
        "HOUR" => h,
        "DAY" => day,
        "WEEK" => week(date, 0, false).1,
        "MONTH" => mo,
        "QUARTER" => (mo + 2) / 3,
        "YEAR" => y,
        "YEAR_MONTH" => y * 100 + mo,
        "DAY_HOUR" => day * 100 + h,
        "DAY_MINUTE" => (day * 100 + h) * 100 + mi,
        "DAY_SECOND" => ((day * 100 + h) * 100 + mi) * 100 + s,
        "DAY_MICROSECOND" => (((day * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
        "HOUR_MINUTE" => h * 100 + mi,
        "HOUR_SECOND" => (h * 100 + mi) * 100 + s,
        "HOUR_MICROSECOND" => ((h * 100 + mi) * 100 + s) * 1_000_000 + us,
        "MINUTE_SECOND" => mi * 100 + s,
        "MINUTE_MICROSECOND" => (mi * 100 + s) * 1_000_000 + us,
        "SECOND_MICROSECOND" => s * 1_000_000 + us,
        _ => return Err(Error::parse(&unit)),
    };
    Ok(Value::Int(n * sign))
}

/// A zone CONVERT_TZ names, in seconds east of UTC: offsets and 'SYSTEM'
/// (UTC); a named zone needs time zone tables lockstep does not have, so
/// it is None and the result NULL, as in MySQL without them.
fn zone(v: &Value) -> Option<i64> {
    let name = String::from_utf8(text(v)).ok()?;
    super::time_zone::zone_seconds(name.trim())
}

fn convert_tz(vals: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    let Some(d) = date_or_warn(&vals[0], env)? else {
        return Ok(Value::Null);
    };
    let (Some(from), Some(to)) = (zone(&vals[1]), zone(&vals[2])) else {
        return Ok(Value::Null);
    };
    let moved = d.to_unix_micros() + (to - from) * 1_000_000;
    let out = DateTime::from_unix_micros(moved);
    Ok(if (1..=9999).contains(&out.date.year) {
        Value::DateTime(out)
    } else {
        Value::DateTime(d)
    })
}

/// ADDTIME/SUBTIME: a DATETIME first argument stays one; a TIME stays a
/// TIME. The second argument must be a time span.
fn add_time(vals: &[Value], subtract: bool) -> Value {
    let Some(span) = vals[1]
        .clone()
        .to_text()
        .filter(|b| !b.contains(&b'-') || b.starts_with(b"-"))
        .and_then(|_| to_time(&vals[1]))
    else {
        return Value::Null;
    };
    let delta = signed_micros(&span) * if subtract { -1 } else { 1 };
    let fsp = fsp_of(&vals[0]).max(fsp_of(&vals[1]));
    let is_datetime = match &vals[0] {
        Value::DateTime(_) | Value::Date(_) => true,
        Value::Bytes(b) => b.contains(&b'-') && !b.starts_with(b"-"),
        // A number of 8 or 14 digits reads as a date (20240101).
        other => date_arg(other).is_some(),
    };
    if is_datetime {
        let Some((d, _)) = date_arg(&vals[0]) else {
            return Value::Null;
        };
        let out = DateTime::from_unix_micros(d.to_unix_micros() + delta);
        if !(1..=9999).contains(&out.date.year) {
            return Value::Null;
        }
        return Value::str(&out.format(fsp));
    }
    match to_time(&vals[0]) {
        Some(t) => time_text(signed_micros(&t) + delta, fsp),
        None => Value::Null,
    }
}

/// TIMEDIFF(a, b): a - b as a TIME; both must be of one kind.
fn time_diff(a: &Value, b: &Value) -> Value {
    let dated = |v: &Value| {
        matches!(v, Value::DateTime(_) | Value::Date(_))
            || matches!(v, Value::Bytes(x) if x.contains(&b'-') && !x.starts_with(b"-"))
    };
    let fsp = fsp_of(a).max(fsp_of(b));
    match (dated(a), dated(b)) {
        (true, true) => match (date_arg(a), date_arg(b)) {
            (Some((x, _)), Some((y, _))) => time_text(x.to_unix_micros() - y.to_unix_micros(), fsp),
            _ => Value::Null,
        },
        (false, false) => match (to_time(a), to_time(b)) {
            (Some(x), Some(y)) => time_text(signed_micros(&x) - signed_micros(&y), fsp),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

fn make_time(vals: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    let h = super::count_arg(&vals[0]);
    let m = super::count_arg(&vals[1]);
    let s = vals[2].to_f64().unwrap_or(0.0);
    if !(0..60).contains(&m) || !(0.0..60.0).contains(&s) {
        return Ok(Value::Null);
    }
    let whole = (h.unsigned_abs().min(1 << 40) as i64 * 3600 + m * 60) * 1_000_000;
    // Digits past the microsecond are cut, as MySQL does; a DOUBLE is
    // rounded there only to undo its binary representation.
    let frac = match &vals[2] {
        Value::Decimal(d) => d.trunc_dp(6).to_string().parse::<f64>().unwrap_or(s),
        _ => s,
    };
    let micros = whole + (frac * 1e6).round() as i64;
    let micros = if h < 0 { -micros } else { micros };
    if micros.abs() > TIME_MAX_MICROS {
        env.warn(Error::new(
            Code::TruncatedWrongValue,
            format!("Truncated incorrect time value: '{h}:{m:02}:{s:02}'"),
        ))?;
    }
    Ok(time_text(micros, fsp_of(&vals[2])))
}

/// A period YYMM or YYYYMM as a count of months (two-digit years below 70
/// are 20xx).
fn to_months(p: i64) -> i64 {
    if p <= 0 {
        return 0;
    }
    let (y, m) = (p / 100, p % 100);
    let y = match y {
        0..=69 => y + 2000,
        70..=99 => y + 1900,
        _ => y,
    };
    y.wrapping_mul(12).wrapping_add(m - 1)
}

fn from_months(n: i64) -> i64 {
    if n <= 0 {
        return 0;
    }
    n / 12 * 100 + n % 12 + 1
}

fn timestamp(vals: &[Value], env: &mut dyn Env) -> Result<Value, Error> {
    let Some((d, _)) = date_arg(&vals[0]) else {
        return warn_null(&vals[0], "datetime", env);
    };
    let Some(span) = vals.get(1) else {
        return Ok(Value::DateTime(d));
    };
    let Some(t) = to_time(span) else {
        return Ok(Value::Null);
    };
    let out = DateTime::from_unix_micros(d.to_unix_micros() + signed_micros(&t));
    Ok(if (1..=9999).contains(&out.date.year) {
        Value::DateTime(out)
    } else {
        Value::Null
    })
}

/// TIME_FORMAT: DATE_FORMAT's time specifiers; %H and %k pass 23.
fn time_format(v: &Value, fmt: &[u8]) -> Value {
    use std::fmt::Write;
    let Some(t) = to_time(v) else {
        return Value::Null;
    };
    let h12 = match t.hour % 12 {
        0 => 12,
        h => h,
    };
    let ampm = if t.hour % 24 < 12 { "AM" } else { "PM" };
    let mut out = String::new();
    if t.negative {
        out.push('-');
    }
    let mut it = fmt.iter();
    while let Some(&c) = it.next() {
        if c != b'%' {
            out.push(c as char);
            continue;
        }
        let _ = match it.next() {
            Some(b'H') => write!(out, "{:02}", t.hour),
            Some(b'k') => write!(out, "{}", t.hour),
            Some(b'h' | b'I') => write!(out, "{h12:02}"),
            Some(b'l') => write!(out, "{h12}"),
            Some(b'i') => write!(out, "{:02}", t.minute),
            Some(b's' | b'S') => write!(out, "{:02}", t.second),
            Some(b'f') => write!(out, "{:06}", t.micro),
            Some(b'p') => write!(out, "{ampm}"),
            Some(b'T') => write!(out, "{:02}:{:02}:{:02}", t.hour, t.minute, t.second),
            Some(b'r') => write!(out, "{h12:02}:{:02}:{:02} {ampm}", t.minute, t.second),
            Some(b'%') => write!(out, "%"),
            Some(
                b'Y' | b'y' | b'm' | b'c' | b'd' | b'e' | b'j' | b'M' | b'b' | b'W' | b'a' | b'D'
                | b'U' | b'u' | b'V' | b'v' | b'X' | b'x' | b'w',
            ) => return Value::Null,
            Some(&other) => write!(out, "{}", other as char),
            None => write!(out, "%"),
        };
    }
    Value::str(&out)
}

fn get_format(kind: &[u8], standard: &[u8]) -> Value {
    let kind = String::from_utf8_lossy(kind).to_ascii_uppercase();
    let std = String::from_utf8_lossy(standard).to_ascii_uppercase();
    let f = match (kind.as_str(), std.as_str()) {
        ("DATE", "USA") => "%m.%d.%Y",
        ("DATE", "JIS" | "ISO") => "%Y-%m-%d",
        ("DATE", "EUR") => "%d.%m.%Y",
        ("DATE", "INTERNAL") => "%Y%m%d",
        ("DATETIME" | "TIMESTAMP", "USA" | "EUR") => "%Y-%m-%d %H.%i.%s",
        ("DATETIME" | "TIMESTAMP", "JIS" | "ISO") => "%Y-%m-%d %H:%i:%s",
        ("DATETIME" | "TIMESTAMP", "INTERNAL") => "%Y%m%d%H%i%s",
        ("TIME", "USA") => "%h:%i:%s %p",
        ("TIME", "JIS" | "ISO") => "%H:%i:%s",
        ("TIME", "EUR") => "%H.%i.%s",
        ("TIME", "INTERNAL") => "%H%i%s",
        _ => return Value::Null,
    };
    Value::str(f)
}

/// The date and time functions that are plain `Func` variants (the older
/// set; newer ones are `Func::Clock`), over evaluated, non-NULL arguments.
pub(super) fn eval_basic(f: Func, vals: &[Value]) -> Result<Option<Value>, Error> {
    let n = |i: usize| vals.get(i).map(count_arg).unwrap_or(0);
    Ok(Some(match f {
        Func::Date => to_datetime(&vals[0])
            .map(|d| Value::Date(d.date))
            .unwrap_or(Value::Null),
        Func::Year => to_datetime(&vals[0])
            .map(|d| Value::Int(d.date.year as i64))
            .unwrap_or(Value::Null),
        Func::Month => to_datetime(&vals[0])
            .map(|d| Value::Int(d.date.month as i64))
            .unwrap_or(Value::Null),
        Func::Day => to_datetime(&vals[0])
            .map(|d| Value::Int(d.date.day as i64))
            .unwrap_or(Value::Null),
        Func::MakeDate => make_date(n(0), n(1)),
        Func::Time => match to_time(&vals[0]) {
            Some(t) => Value::Bytes(t.format(if t.micro > 0 { 6 } else { 0 }).into_bytes()),
            None => Value::Null,
        },
        Func::DateAdd
        | Func::TimestampDiff
        | Func::DateDiff
        | Func::DateFormat
        | Func::StrToDate
        | Func::DatePart(_) => date_function(f, vals),
        _ => return Ok(None),
    }))
}
