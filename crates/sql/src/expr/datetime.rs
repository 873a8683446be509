//! Date and time functions: INTERVAL arithmetic (DATE_ADD, DATE_SUB,
//! `d + INTERVAL n unit`, TIMESTAMPADD), TIMESTAMPDIFF, DATEDIFF,
//! DATE_FORMAT, FROM_UNIXTIME, the parts of a date (HOUR ... DAYNAME) and
//! LAST_DAY, as MySQL computes them. Results outside years 1..9999 are
//! NULL, as in MySQL.

use lockstep_types::{Date, DateTime, Value};

/// An INTERVAL unit, or the unit argument of TIMESTAMPDIFF/TIMESTAMPADD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Unit {
    pub fn parse(name: &str) -> Option<Unit> {
        Some(match name.to_ascii_uppercase().as_str() {
            "MICROSECOND" | "FRAC_SECOND" => Unit::Microsecond,
            "SECOND" => Unit::Second,
            "MINUTE" => Unit::Minute,
            "HOUR" => Unit::Hour,
            "DAY" => Unit::Day,
            "WEEK" => Unit::Week,
            "MONTH" => Unit::Month,
            "QUARTER" => Unit::Quarter,
            "YEAR" => Unit::Year,
            _ => return None,
        })
    }

    /// Microseconds per unit for the fixed-length units; None for months.
    fn micros(self) -> Option<i64> {
        Some(match self {
            Unit::Microsecond => 1,
            Unit::Second => 1_000_000,
            Unit::Minute => 60_000_000,
            Unit::Hour => 3_600_000_000,
            Unit::Day => 86_400_000_000,
            Unit::Week => 7 * 86_400_000_000,
            Unit::Month | Unit::Quarter | Unit::Year => return None,
        })
    }

    fn months(self) -> i64 {
        match self {
            Unit::Quarter => 3,
            Unit::Year => 12,
            _ => 1,
        }
    }

    /// Whether adding it to a DATE keeps a DATE (no time of day).
    fn keeps_date(self) -> bool {
        matches!(
            self,
            Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year
        )
    }
}

/// A date or datetime argument, and whether it had no time of day.
pub(crate) fn date_arg(v: &Value) -> Option<(DateTime, bool)> {
    match v {
        Value::DateTime(d) => Some((*d, false)),
        Value::Date(d) => Some((
            DateTime {
                date: *d,
                ..Default::default()
            },
            true,
        )),
        Value::Bytes(b) => {
            let s = std::str::from_utf8(b).ok()?.trim();
            let d = DateTime::parse(s)?;
            Some((d, !s.contains(':')))
        }
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => {
            // 20240102 or 20240102030405, as MySQL reads numbers as dates.
            let digits = v.to_string();
            let text = match digits.len() {
                // YYMMDD: years 70..99 are 19xx, the rest 20xx.
                5 | 6 => {
                    let n = format!("{digits:0>6}");
                    let yy: u32 = n[..2].parse().ok()?;
                    let century = if yy < 70 { 20 } else { 19 };
                    format!("{century}{}-{}-{}", &n[..2], &n[2..4], &n[4..6])
                }
                8 => format!("{}-{}-{}", &digits[..4], &digits[4..6], &digits[6..8]),
                14 => format!(
                    "{}-{}-{} {}:{}:{}",
                    &digits[..4],
                    &digits[4..6],
                    &digits[6..8],
                    &digits[8..10],
                    &digits[10..12],
                    &digits[12..14]
                ),
                _ => return None,
            };
            Some((DateTime::parse(&text)?, digits.len() <= 8))
        }
        _ => None,
    }
}

fn in_range(d: &DateTime) -> bool {
    (1..=9999).contains(&d.date.year)
}

/// `d + amount unit` (amount negative to subtract): NULL past the range.
pub fn add(d: &Value, amount: &Value, unit: Unit) -> Value {
    let (Some((start, date_only)), Some(n)) = (date_arg(d), amount.to_f64()) else {
        return Value::Null;
    };
    let moved = match unit.micros() {
        Some(per) => {
            let delta = (n * per as f64).round();
            if !delta.is_finite() || delta.abs() > 4e17 {
                return Value::Null;
            }
            let micros = start.to_unix_micros() + delta as i64;
            // from_unix_micros clamps the year: check the range first.
            let first = DateTime {
                date: Date::new(1, 1, 1).unwrap_or_default(),
                ..Default::default()
            };
            let last = DateTime {
                date: Date::new(9999, 12, 31).unwrap_or_default(),
                hour: 23,
                minute: 59,
                second: 59,
                micro: 999_999,
            };
            (first.to_unix_micros()..=last.to_unix_micros())
                .contains(&micros)
                .then(|| DateTime::from_unix_micros(micros))
        }
        None => add_months(start, (n.round() as i64).saturating_mul(unit.months())),
    };
    match moved {
        Some(m) if in_range(&m) && date_only && unit.keeps_date() => Value::Date(m.date),
        Some(m) if in_range(&m) => Value::DateTime(m),
        _ => Value::Null,
    }
}

/// Months added; the day is cut to the last of the new month.
fn add_months(d: DateTime, months: i64) -> Option<DateTime> {
    // A huge count (INTERVAL ~1 MONTH) must not overflow: out of range.
    let total = ((d.date.year as i64) * 12 + (d.date.month as i64 - 1)).checked_add(months)?;
    if !(0..=9999 * 12 + 11).contains(&total) {
        return None;
    }
    let (year, month) = ((total / 12) as u16, (total % 12 + 1) as u8);
    let mut day = d.date.day;
    while Date::new(year, month, day).is_none() && day > 28 {
        day -= 1;
    }
    Some(DateTime {
        date: Date::new(year, month, day)?,
        ..d
    })
}

/// TIMESTAMPDIFF(unit, a, b): whole units from a to b.
pub fn diff(unit: Unit, a: &Value, b: &Value) -> Value {
    let (Some((a, _)), Some((b, _))) = (date_arg(a), date_arg(b)) else {
        return Value::Null;
    };
    if let Some(per) = unit.micros() {
        return Value::Int((b.to_unix_micros() - a.to_unix_micros()) / per);
    }
    let months = |d: &DateTime| d.date.year as i64 * 12 + d.date.month as i64;
    let mut m = months(&b) - months(&a);
    // A month counts only once the later date has passed the same point.
    let rest = |d: &DateTime| (d.date.day, d.hour, d.minute, d.second, d.micro);
    if m > 0 && rest(&b) < rest(&a) {
        m -= 1;
    } else if m < 0 && rest(&b) > rest(&a) {
        m += 1;
    }
    Value::Int(m / unit.months())
}

/// DATEDIFF(a, b): days between the dates, times of day ignored.
pub fn datediff(a: &Value, b: &Value) -> Value {
    match (date_arg(a), date_arg(b)) {
        (Some((a, _)), Some((b, _))) => Value::Int(a.date.to_days() - b.date.to_days()),
        _ => Value::Null,
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// 0 = Monday (MySQL's WEEKDAY).
fn weekday(d: &Date) -> usize {
    // 1970-01-01 was a Thursday.
    (d.to_days() + 3).rem_euclid(7) as usize
}

/// A part of a date: HOUR, MINUTE, SECOND, MICROSECOND, DAYOFWEEK,
/// WEEKDAY, DAYOFYEAR, QUARTER, DAYNAME, MONTHNAME, LAST_DAY.
pub fn part(name: &str, v: &Value) -> Value {
    let time_part = matches!(name, "HOUR" | "MINUTE" | "SECOND" | "MICROSECOND");
    // A time alone ('12:34:56') has no day; the zero date has no weekday.
    let date = date_arg(v).filter(|(d, _)| time_part || name == "QUARTER" || d.date.day != 0);
    let Some((d, _)) = date.or_else(|| time_arg(v).filter(|_| time_part)) else {
        return Value::Null;
    };
    let int = |n: i64| Value::Int(n);
    match name {
        "HOUR" => int(d.hour as i64),
        "MINUTE" => int(d.minute as i64),
        "SECOND" => int(d.second as i64),
        "MICROSECOND" => int(d.micro as i64),
        "DAYOFWEEK" => int((weekday(&d.date) as i64 + 1) % 7 + 1),
        "WEEKDAY" => int(weekday(&d.date) as i64),
        "DAYOFYEAR" => {
            let first = Date::new(d.date.year, 1, 1).map_or(0, |f| f.to_days());
            int(d.date.to_days() - first + 1)
        }
        "QUARTER" => int((d.date.month as i64 + 2) / 3),
        "DAYNAME" => Value::str(DAYS[weekday(&d.date)]),
        "MONTHNAME" => MONTHS
            .get((d.date.month as usize).wrapping_sub(1))
            .map_or(Value::Null, |m| Value::str(m)),
        "LAST_DAY" => (28..=31)
            .rev()
            .find_map(|day| Date::new(d.date.year, d.date.month, day))
            .map_or(Value::Null, Value::Date),
        _ => Value::Null,
    }
}

/// A time of day given alone ('12:34:56'), for HOUR() and friends.
fn time_arg(v: &Value) -> Option<(DateTime, bool)> {
    let Value::Bytes(b) = v else { return None };
    let s = std::str::from_utf8(b).ok()?;
    DateTime::parse(&format!("2000-01-01 {}", s.trim())).map(|d| (d, false))
}

/// FROM_UNIXTIME(seconds): the UTC date and time (lockstep's time zone).
pub fn from_unixtime(v: &Value) -> Value {
    let Some(secs) = v.to_f64() else {
        return Value::Null;
    };
    if !(0.0..=32_536_771_199.0).contains(&secs) {
        return Value::Null;
    }
    let d = DateTime::from_unix_micros((secs * 1e6).round() as i64);
    Value::DateTime(d)
}

/// DATE_FORMAT(d, format) with MySQL's % specifiers.
pub fn format(v: &Value, fmt: &[u8]) -> Value {
    let Some((d, _)) = date_arg(v) else {
        return Value::Null;
    };
    let mut out = String::new();
    let mut it = fmt.iter();
    while let Some(&c) = it.next() {
        if c != b'%' {
            out.push(c as char);
            continue;
        }
        match it.next() {
            Some(&spec) => specifier(&d, spec, &mut out),
            None => out.push('%'),
        }
    }
    Value::str(&out)
}

fn specifier(d: &DateTime, spec: u8, out: &mut String) {
    use std::fmt::Write;
    let hour12 = match d.hour % 12 {
        0 => 12,
        h => h,
    };
    let month = MONTHS
        .get((d.date.month as usize).wrapping_sub(1))
        .copied()
        .unwrap_or("");
    let day = DAYS[weekday(&d.date)];
    let _ = match spec {
        b'Y' => write!(out, "{:04}", d.date.year),
        b'y' => write!(out, "{:02}", d.date.year % 100),
        b'm' => write!(out, "{:02}", d.date.month),
        b'c' => write!(out, "{}", d.date.month),
        b'd' => write!(out, "{:02}", d.date.day),
        b'e' => write!(out, "{}", d.date.day),
        b'H' => write!(out, "{:02}", d.hour),
        b'k' => write!(out, "{}", d.hour),
        b'h' | b'I' => write!(out, "{hour12:02}"),
        b'l' => write!(out, "{hour12}"),
        b'i' => write!(out, "{:02}", d.minute),
        b's' | b'S' => write!(out, "{:02}", d.second),
        b'f' => write!(out, "{:06}", d.micro),
        b'p' => write!(out, "{}", if d.hour < 12 { "AM" } else { "PM" }),
        b'M' => write!(out, "{month}"),
        b'b' => write!(out, "{}", month.get(..3).unwrap_or("")),
        b'W' => write!(out, "{day}"),
        b'a' => write!(out, "{}", &day[..3]),
        b'w' => write!(out, "{}", (weekday(&d.date) + 1) % 7),
        b'j' => {
            let first = Date::new(d.date.year, 1, 1).map_or(0, |f| f.to_days());
            write!(out, "{:03}", d.date.to_days() - first + 1)
        }
        b'T' => write!(out, "{:02}:{:02}:{:02}", d.hour, d.minute, d.second),
        b'r' => write!(
            out,
            "{hour12:02}:{:02}:{:02} {}",
            d.minute,
            d.second,
            if d.hour < 12 { "AM" } else { "PM" }
        ),
        b'D' => write!(out, "{}{}", d.date.day, ordinal(d.date.day)),
        other => write!(out, "{}", other as char),
    };
}

/// STR_TO_DATE(text, format): the inverse of DATE_FORMAT. A DATE when the
/// format has no time of day, else a DATETIME; NULL when the text does not
/// match or the date does not exist.
pub fn parse(text: &[u8], fmt: &[u8]) -> Value {
    let mut p = Parsed::default();
    let (mut t, mut f) = (text, fmt);
    while let Some((&c, rest)) = f.split_first() {
        f = rest;
        if c != b'%' {
            // Spaces in the format match any run of spaces (as MySQL).
            match t.split_first() {
                Some((&x, r)) if x == c || (c == b' ' && x.is_ascii_whitespace()) => t = r,
                _ => return Value::Null,
            }
            continue;
        }
        let Some((&spec, rest)) = f.split_first() else {
            return Value::Null;
        };
        f = rest;
        match p.field(spec, t) {
            Some(rest) => t = rest,
            None => return Value::Null,
        }
    }
    p.value()
}

#[derive(Default)]
struct Parsed {
    year: u16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    micro: u32,
    pm: Option<bool>,
    has_time: bool,
}

/// Up to `max` leading digits of `t` and the rest.
fn digits(t: &[u8], max: usize) -> Option<(u32, &[u8])> {
    // Numbers may follow spaces the format does not spell out (MySQL).
    let t = &t[t.iter().take_while(|c| c.is_ascii_whitespace()).count()..];
    let n = t
        .iter()
        .take(max)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if n == 0 {
        return None;
    }
    let v = std::str::from_utf8(&t[..n]).ok()?.parse().ok()?;
    Some((v, &t[n..]))
}

/// A month or day name (full or its first three letters) at the start.
fn name<'t>(t: &'t [u8], names: &[&str]) -> Option<(usize, &'t [u8])> {
    names.iter().enumerate().find_map(|(i, n)| {
        [n.len(), 3].into_iter().find_map(|len| {
            let head = t.get(..len)?;
            head.eq_ignore_ascii_case(&n.as_bytes()[..len])
                .then(|| (i, &t[len..]))
        })
    })
}

impl Parsed {
    /// Reads one % field; the rest of the text.
    fn field<'t>(&mut self, spec: u8, t: &'t [u8]) -> Option<&'t [u8]> {
        let time = matches!(
            spec,
            b'H' | b'k' | b'h' | b'I' | b'l' | b'i' | b's' | b'S' | b'f' | b'p' | b'T' | b'r'
        );
        self.has_time |= time;
        Some(match spec {
            b'Y' => {
                let (v, r) = digits(t, 4)?;
                self.year = v as u16;
                r
            }
            b'y' => {
                let (v, r) = digits(t, 2)?;
                self.year = if v < 70 { 2000 + v } else { 1900 + v } as u16;
                r
            }
            b'm' | b'c' => {
                let (v, r) = digits(t, 2)?;
                self.month = v as u8;
                r
            }
            b'd' | b'e' => {
                let (v, r) = digits(t, 2)?;
                self.day = v as u8;
                r
            }
            b'H' | b'k' | b'h' | b'I' | b'l' => {
                let (v, r) = digits(t, 2)?;
                self.hour = v as u8;
                r
            }
            b'i' => {
                let (v, r) = digits(t, 2)?;
                self.minute = v as u8;
                r
            }
            b's' | b'S' => {
                let (v, r) = digits(t, 2)?;
                self.second = v as u8;
                r
            }
            b'f' => {
                let n = t.iter().take(6).take_while(|c| c.is_ascii_digit()).count();
                let (v, r) = digits(t, 6)?;
                self.micro = v * 10u32.pow(6 - n as u32);
                r
            }
            b'p' => {
                let head = t.get(..2)?;
                self.pm = Some(head.eq_ignore_ascii_case(b"PM"));
                if !self.pm? && !head.eq_ignore_ascii_case(b"AM") {
                    return None;
                }
                &t[2..]
            }
            b'M' | b'b' => {
                let (i, r) = name(t, &MONTHS)?;
                self.month = i as u8 + 1;
                r
            }
            b'W' | b'a' => name(t, &DAYS)?.1,
            b'T' => {
                let r = self.field(b'H', t)?;
                let r = self.field(b'i', r.strip_prefix(b":")?)?;
                self.field(b's', r.strip_prefix(b":")?)?
            }
            b'%' => t.strip_prefix(b"%")?,
            _ => return None,
        })
    }

    fn value(&self) -> Value {
        let mut hour = self.hour;
        match self.pm {
            Some(true) if hour < 12 => hour += 12,
            Some(false) if hour == 12 => hour = 0,
            _ => {}
        }
        let Some(date) = Date::new(self.year, self.month, self.day) else {
            return Value::Null;
        };
        if hour > 23 || self.minute > 59 || self.second > 59 {
            return Value::Null;
        }
        if !self.has_time {
            return Value::Date(date);
        }
        Value::DateTime(DateTime {
            date,
            hour,
            minute: self.minute,
            second: self.second,
            micro: self.micro,
        })
    }
}

fn ordinal(day: u8) -> &'static str {
    match (day % 10, day / 10 % 10) {
        (_, 1) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> Value {
        Value::str(s)
    }

    #[test]
    fn interval_arithmetic_as_mysql() {
        let show = |v: Value| v.to_string();
        assert_eq!(
            show(add(&dt("2024-01-31"), &Value::Int(1), Unit::Month)),
            "2024-02-29"
        );
        assert_eq!(
            show(add(&dt("2023-01-31"), &Value::Int(1), Unit::Month)),
            "2023-02-28"
        );
        assert_eq!(
            show(add(&dt("2024-03-31"), &Value::Int(-1), Unit::Quarter)),
            "2023-12-31"
        );
        assert_eq!(
            show(add(&dt("2024-01-01"), &Value::Int(36), Unit::Hour)),
            "2024-01-02 12:00:00"
        );
        assert_eq!(
            show(add(
                &dt("2024-01-01 23:59:59"),
                &Value::Int(1),
                Unit::Second
            )),
            "2024-01-02 00:00:00"
        );
        assert_eq!(
            show(add(&dt("2024-02-29"), &Value::Int(1), Unit::Year)),
            "2025-02-28"
        );
        assert_eq!(
            add(&dt("9999-12-31"), &Value::Int(1), Unit::Day),
            Value::Null
        );
        assert_eq!(add(&dt("nope"), &Value::Int(1), Unit::Day), Value::Null);
        assert_eq!(
            add(&dt("2024-01-01"), &Value::Int(i64::MAX), Unit::Week),
            Value::Null
        );
    }

    #[test]
    fn differences_and_parts() {
        assert_eq!(
            diff(Unit::Month, &dt("2024-01-31"), &dt("2024-02-29")),
            Value::Int(0)
        );
        assert_eq!(
            diff(Unit::Month, &dt("2024-01-15"), &dt("2024-03-15")),
            Value::Int(2)
        );
        assert_eq!(
            diff(Unit::Year, &dt("2000-02-29"), &dt("2024-02-28")),
            Value::Int(23)
        );
        assert_eq!(
            diff(
                Unit::Minute,
                &dt("2024-01-01 00:00:00"),
                &dt("2024-01-01 01:30:59")
            ),
            Value::Int(90)
        );
        assert_eq!(
            diff(Unit::Day, &dt("2024-01-02"), &dt("2024-01-01")),
            Value::Int(-1)
        );
        assert_eq!(
            datediff(&dt("2024-03-01 23:00:00"), &dt("2024-02-28")),
            Value::Int(2)
        );
        assert_eq!(part("DAYOFWEEK", &dt("2024-11-26")), Value::Int(3));
        assert_eq!(part("WEEKDAY", &dt("2024-11-26")), Value::Int(1));
        assert_eq!(part("DAYNAME", &dt("2024-11-26")), Value::str("Tuesday"));
        assert_eq!(
            part("LAST_DAY", &dt("2024-02-10")).to_string(),
            "2024-02-29"
        );
        assert_eq!(part("HOUR", &dt("12:34:56")), Value::Int(12));
        assert_eq!(part("DAYOFYEAR", &dt("2024-12-31")), Value::Int(366));
    }

    #[test]
    fn str_to_date_reads_what_date_format_writes() {
        let p = |t: &str, f: &str| parse(t.as_bytes(), f.as_bytes()).to_string();
        assert_eq!(p("01,5,2013", "%d,%m,%Y"), "2013-05-01");
        assert_eq!(p("May 1, 2013", "%M %d,%Y"), "2013-05-01");
        assert_eq!(
            p("2024-03-05 02:07:09 PM", "%Y-%m-%d %h:%i:%s %p"),
            "2024-03-05 14:07:09"
        );
        assert_eq!(p("2024-02-30", "%Y-%m-%d"), "NULL");
        assert_eq!(p("2024/03/05", "%Y-%m-%d"), "NULL");
        assert_eq!(
            p("05-Mar-24 10:11:12.5", "%d-%b-%y %T.%f"),
            "2024-03-05 10:11:12.500000"
        );
    }

    #[test]
    fn date_format_specifiers() {
        let d = dt("2024-03-05 14:07:09");
        assert_eq!(
            format(
                &d,
                b"%Y-%m-%d %H:%i:%s %p %W %M %D %j %a %b %e %c %T %r %y %%"
            )
            .to_string(),
            "2024-03-05 14:07:09 PM Tuesday March 5th 065 Tue Mar 5 3 14:07:09 02:07:09 PM 24 %"
        );
        assert_eq!(
            from_unixtime(&Value::Int(0)).to_string(),
            "1970-01-01 00:00:00"
        );
    }
}
