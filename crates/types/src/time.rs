//! DATE and DATETIME values: parsed from and printed as MySQL does.

use std::fmt;

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct DateTime {
    pub date: Date,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
}

/// Whether fractional digits `f` (all digits) round up at the sixth:
/// MySQL reads the rest as nanoseconds and adds a microsecond from 500.
fn rounds_up(f: &str) -> bool {
    f.as_bytes().get(6).is_some_and(|d| *d >= b'5')
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

impl Date {
    /// A calendar date, or None when it does not exist. The zero date
    /// (0000-00-00) is accepted as MySQL accepts it.
    pub fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        let zero = year == 0 && month == 0 && day == 0;
        if zero
            || (year <= 9999
                && (1..=12).contains(&month)
                && day >= 1
                && day <= days_in_month(year, month))
        {
            Some(Date { year, month, day })
        } else {
            None
        }
    }

    /// A date whose month or day may be 0 ('2024-00-10', MySQL's zero in
    /// a date), which an sql_mode without NO_ZERO_IN_DATE stores.
    pub fn with_zero_parts(year: u16, month: u8, day: u8) -> Option<Date> {
        let last = match month {
            0 => 31,
            m => days_in_month(year, m),
        };
        (year <= 9999 && month <= 12 && day <= last).then_some(Date { year, month, day })
    }

    /// 0000-00-00.
    pub fn is_zero(self) -> bool {
        self == Date::default()
    }

    /// A month or day of 0 in a date that is not the zero date.
    pub fn has_zero_part(self) -> bool {
        !self.is_zero() && (self.month == 0 || self.day == 0)
    }

    /// Days since 1970-01-01 (civil calendar, proleptic Gregorian).
    pub fn to_days(self) -> i64 {
        let (y, m, d) = (self.year as i64, self.month as i64, self.day as i64);
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146097 + doe - 719468
    }

    pub fn from_days(days: i64) -> Date {
        let z = days + 719468;
        let era = z.div_euclid(146097);
        let doe = z - era * 146097;
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
        Date {
            year: y.clamp(0, 9999) as u16,
            month: m as u8,
            day: d as u8,
        }
    }
}

impl DateTime {
    pub fn from_unix_micros(micros: i64) -> DateTime {
        let secs = micros.div_euclid(1_000_000);
        let micro = micros.rem_euclid(1_000_000) as u32;
        let days = secs.div_euclid(86400);
        let sod = secs.rem_euclid(86400);
        DateTime {
            date: Date::from_days(days),
            hour: (sod / 3600) as u8,
            minute: (sod / 60 % 60) as u8,
            second: (sod % 60) as u8,
            micro,
        }
    }

    pub fn to_unix_micros(self) -> i64 {
        let secs = self.date.to_days() * 86400
            + self.hour as i64 * 3600
            + self.minute as i64 * 60
            + self.second as i64;
        secs * 1_000_000 + self.micro as i64
    }

    pub fn now() -> DateTime {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        DateTime::from_unix_micros(d.as_micros() as i64)
    }

    /// The same instant seen `secs` seconds east (a fixed time zone
    /// offset). Dates with a zero month or day (0000-00-00 among them)
    /// are not instants and stay as they are, as in MySQL.
    pub fn shifted(self, secs: i64) -> DateTime {
        if secs == 0 || self.date.month == 0 || self.date.day == 0 {
            return self;
        }
        DateTime::from_unix_micros(self.to_unix_micros() + secs * 1_000_000)
    }

    /// Drop fractional digits beyond `fsp`.
    pub fn truncate(mut self, fsp: u8) -> DateTime {
        let div = 10u32.pow(6 - fsp.min(6) as u32);
        self.micro = self.micro / div * div;
        self
    }

    /// Rounds (half up) to `fsp` fractional digits, as MySQL 8 stores a
    /// value with more digits than its column keeps: the carry can reach
    /// the seconds, minutes and the date. A date with a zero part is no
    /// instant and past 9999-12-31 there is nothing to carry into: those
    /// are truncated.
    pub fn round(self, fsp: u8) -> DateTime {
        let unit = 10i64.pow(6 - fsp.min(6) as u32);
        let rest = self.micro as i64 % unit;
        if rest * 2 < unit || self.date.month == 0 || self.date.day == 0 {
            return self.truncate(fsp);
        }
        let rounded = DateTime::from_unix_micros(self.to_unix_micros() - rest + unit);
        match rounded.date.year > 9999 || rounded.date < self.date {
            true => self.truncate(fsp),
            false => rounded,
        }
    }

    /// Parses 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS[.ffffff]' (also with
    /// 'T'); digits past the sixth round the microseconds, as in MySQL 8.
    pub fn parse(s: &str) -> Option<DateTime> {
        Self::parse_with(s, Date::new, true)
    }

    /// `parse`, also taking a month or day of 0 ('2024-00-10').
    pub fn parse_with_zero_parts(s: &str) -> Option<DateTime> {
        Self::parse_with(s, Date::with_zero_parts, true)
    }

    /// `parse_with_zero_parts` dropping digits past the sixth (the
    /// TIME_TRUNCATE_FRACTIONAL sql_mode).
    pub fn parse_truncating(s: &str) -> Option<DateTime> {
        Self::parse_with(s, Date::with_zero_parts, false)
    }

    /// One microsecond later when `up` (the digits past the sixth round
    /// up), within the limits `round` keeps.
    fn round_extra(self, up: bool) -> DateTime {
        if !up || self.date.month == 0 || self.date.day == 0 {
            return self;
        }
        let next = DateTime::from_unix_micros(self.to_unix_micros() + 1);
        match next.date.year > 9999 || next.date < self.date {
            true => self,
            false => next,
        }
    }

    /// The zero date at midnight ('0000-00-00 00:00:00').
    pub fn is_zero(&self) -> bool {
        *self == DateTime::default()
    }

    fn parse_with(s: &str, date: fn(u16, u8, u8) -> Option<Date>, round: bool) -> Option<DateTime> {
        let s = s.trim();
        let (date_part, time_part) = match s.find([' ', 'T']) {
            Some(i) => (&s[..i], Some(s[i + 1..].trim())),
            None => (s, None),
        };
        let mut it = date_part.split('-');
        let year: u16 = it.next()?.parse().ok()?;
        let month: u8 = it.next()?.parse().ok()?;
        let day: u8 = it.next()?.parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        let date = date(year, month, day)?;
        let mut dt = DateTime {
            date,
            ..Default::default()
        };
        if let Some(t) = time_part.filter(|t| !t.is_empty()) {
            let (hms, frac) = match t.split_once('.') {
                Some((a, b)) => (a, Some(b)),
                None => (t, None),
            };
            let mut it = hms.split(':');
            dt.hour = it.next()?.parse().ok()?;
            dt.minute = it.next().unwrap_or("0").parse().ok()?;
            dt.second = it.next().unwrap_or("0").parse().ok()?;
            if dt.hour > 23 || dt.minute > 59 || dt.second > 59 {
                return None;
            }
            if let Some(f) = frac {
                if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let digits: String = f.chars().chain("000000".chars()).take(6).collect();
                dt.micro = digits.parse().ok()?;
                return Some(dt.round_extra(round && rounds_up(f)));
            }
        }
        Some(dt)
    }

    /// MySQL's text form with `fsp` fractional digits.
    pub fn format(&self, fsp: u8) -> String {
        let mut s = format!(
            "{} {:02}:{:02}:{:02}",
            self.date, self.hour, self.minute, self.second
        );
        if fsp > 0 {
            let frac = format!("{:06}", self.micro);
            s.push('.');
            s.push_str(&frac[..fsp.min(6) as usize]);
        }
        s
    }
}

/// A TIME value: a signed span of at most 838:59:59.999999.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Time {
    pub negative: bool,
    pub hour: u32,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
}

impl Time {
    pub const MAX_HOURS: u32 = 838;

    /// The time of day of a DATETIME.
    pub fn of_datetime(dt: &DateTime) -> Time {
        Time {
            negative: false,
            hour: dt.hour as u32,
            minute: dt.minute,
            second: dt.second,
            micro: dt.micro,
        }
    }

    /// Parses `[-][D ]hh:mm[:ss][.f]`, `[-]hhmmss[.f]` (or its shorter
    /// `mmss`, `ss` forms), or a DATETIME text (its time part).
    /// Digits past the sixth round the microseconds, as in MySQL 8.
    pub fn parse(s: &str) -> Option<Time> {
        Self::parse_rounding(s, true)
    }

    /// `parse` dropping digits past the sixth (TIME_TRUNCATE_FRACTIONAL).
    pub fn parse_truncating(s: &str) -> Option<Time> {
        Self::parse_rounding(s, false)
    }

    fn parse_rounding(s: &str, round: bool) -> Option<Time> {
        let s = s.trim();
        let dt = DateTime::parse_with(s, Date::new, round);
        if let Some(dt) = dt.filter(|_| s.contains('-') && s.len() > 10) {
            return Some(Time::of_datetime(&dt));
        }
        let (negative, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (whole, frac) = match s.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let mut t = if whole.contains(':') {
            Time::parse_colons(whole)?
        } else {
            Time::parse_digits(whole)?
        };
        t.negative = negative;
        if let Some(f) = frac {
            if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let digits: String = f.chars().chain("000000".chars()).take(6).collect();
            t.micro = digits.parse().ok()?;
            if round && rounds_up(f) {
                t = t.plus_micro().unwrap_or(t);
            }
        }
        t.valid().then_some(t)
    }

    /// `[D ]hh:mm[:ss]`.
    fn parse_colons(s: &str) -> Option<Time> {
        let (days, hms) = match s.split_once(' ') {
            Some((d, rest)) => (d.trim().parse::<u32>().ok()?, rest.trim()),
            None => (0, s),
        };
        let mut it = hms.split(':');
        let hour: u32 = it.next()?.parse().ok()?;
        let minute = it.next()?.parse().ok()?;
        let second = it.next().unwrap_or("0").parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        Some(Time {
            hour: days.checked_mul(24)?.checked_add(hour)?,
            minute,
            second,
            ..Time::default()
        })
    }

    /// `hhmmss`, read from the right: `ss`, `mmss`, `hhmmss`.
    fn parse_digits(s: &str) -> Option<Time> {
        if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u64 = s.parse().ok()?;
        Some(Time {
            hour: u32::try_from(n / 10000).ok()?,
            minute: (n / 100 % 100) as u8,
            second: (n % 100) as u8,
            ..Time::default()
        })
    }

    fn valid(&self) -> bool {
        self.hour <= Time::MAX_HOURS
            && self.minute < 60
            && self.second < 60
            && self.micro < 1_000_000
    }

    /// One microsecond further from zero (None past 838:59:59.999999).
    fn plus_micro(self) -> Option<Time> {
        let secs = (self.hour as u64 * 60 + self.minute as u64) * 60 + self.second as u64;
        let micros = secs * 1_000_000 + self.micro as u64 + 1;
        let secs = micros / 1_000_000;
        let t = Time {
            negative: self.negative,
            hour: u32::try_from(secs / 3600).ok()?,
            minute: (secs / 60 % 60) as u8,
            second: (secs % 60) as u8,
            micro: (micros % 1_000_000) as u32,
        };
        t.valid().then_some(t)
    }

    /// Drops fractional digits beyond `fsp`.
    pub fn truncate(mut self, fsp: u8) -> Time {
        let div = 10u32.pow(6 - fsp.min(6) as u32);
        self.micro = self.micro / div * div;
        self
    }

    /// Rounds (half up, away from zero for a negative span) to `fsp`
    /// fractional digits, carrying into seconds, minutes and hours, as
    /// MySQL 8 stores it; past 838:59:59 it is truncated instead.
    pub fn round(self, fsp: u8) -> Time {
        let unit = 10u64.pow(6 - fsp.min(6) as u32);
        let rest = self.micro as u64 % unit;
        if rest * 2 < unit {
            return self.truncate(fsp);
        }
        let secs = (self.hour as u64 * 60 + self.minute as u64) * 60 + self.second as u64;
        let micros = secs * 1_000_000 + self.micro as u64 - rest + unit;
        let secs = micros / 1_000_000;
        let t = Time {
            negative: self.negative,
            hour: u32::try_from(secs / 3600).unwrap_or(u32::MAX),
            minute: (secs / 60 % 60) as u8,
            second: (secs % 60) as u8,
            micro: (micros % 1_000_000) as u32,
        };
        match t.valid() {
            true => t,
            false => self.truncate(fsp),
        }
    }

    /// MySQL's text form with `fsp` fractional digits.
    pub fn format(&self, fsp: u8) -> String {
        let zero = Time {
            negative: self.negative,
            ..Time::default()
        };
        let sign = if self.negative && *self != zero {
            "-"
        } else {
            ""
        };
        let mut s = format!(
            "{sign}{:02}:{:02}:{:02}",
            self.hour, self.minute, self.second
        );
        if fsp > 0 {
            let frac = format!("{:06}", self.micro);
            s.push('.');
            s.push_str(&frac[..fsp.min(6) as usize]);
        }
        s
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fsp = if self.micro == 0 { 0 } else { 6 };
        f.write_str(&self.format(fsp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip() {
        for days in [-1000, 0, 1, 365, 10957, 19000, 2932896] {
            assert_eq!(Date::from_days(days).to_days(), days);
        }
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
    }

    #[test]
    fn time_forms() {
        let t = |s: &str| Time::parse(s).map(|t| t.format(6));
        assert_eq!(t("12:34:56").as_deref(), Some("12:34:56.000000"));
        assert_eq!(t("-1 02:03:04.5").as_deref(), Some("-26:03:04.500000"));
        assert_eq!(t("123456").as_deref(), Some("12:34:56.000000"));
        assert_eq!(
            t("2024-01-02 03:04:05.123").as_deref(),
            Some("03:04:05.123000")
        );
        assert_eq!(t("12:34").as_deref(), Some("12:34:00.000000"));
        assert!(Time::parse("839:00:00").is_none());
        assert!(Time::parse("12:60:00").is_none());
        assert!(Time::parse("abc").is_none());
        assert_eq!(
            Time::parse("-00:00:00").map(|t| t.format(0)).as_deref(),
            Some("00:00:00")
        );
    }

    #[test]
    fn parse_and_format() {
        let dt = DateTime::parse("2024-02-29 13:05:09.25").expect("valid datetime");
        assert_eq!(dt.format(0), "2024-02-29 13:05:09");
        assert_eq!(dt.format(3), "2024-02-29 13:05:09.250");
        assert!(DateTime::parse("2023-02-29").is_none());
        assert!(DateTime::parse("2024-00-10").is_none());
        let zero_part = DateTime::parse_with_zero_parts("2024-00-10 01:02:03");
        assert!(zero_part.is_some_and(|d| d.date.has_zero_part() && d.hour == 1));
        assert!(DateTime::parse_with_zero_parts("2024-02-30").is_none());
        assert!(DateTime::parse("0000-00-00 00:00:00").is_some_and(|d| d.is_zero()));
        assert_eq!(DateTime::from_unix_micros(dt.to_unix_micros()), dt);
    }

    #[test]
    fn rounding_carries_up_to_the_date() {
        let cases = [
            ("2024-01-01 00:00:00.5555", 3, "2024-01-01 00:00:00.556"),
            ("2024-12-31 23:59:59.9996", 3, "2025-01-01 00:00:00.000"),
            ("2024-02-28 23:59:59.5", 0, "2024-02-29 00:00:00"),
            ("2024-01-01 00:00:00.4999", 0, "2024-01-01 00:00:00"),
            ("9999-12-31 23:59:59.9", 0, "9999-12-31 23:59:59"),
            ("2024-00-10 23:59:59.9", 0, "2024-00-10 23:59:59"),
        ];
        for (given, fsp, stored) in cases {
            let dt = DateTime::parse_with_zero_parts(given).expect("valid datetime");
            assert_eq!(dt.round(fsp).format(fsp), stored, "{given}");
        }
        let t = |s: &str, fsp: u8| Time::parse(s).map(|t| t.round(fsp).format(fsp));
        assert_eq!(t("10:59:59.999", 2).as_deref(), Some("11:00:00.00"));
        assert_eq!(t("-00:00:00.5", 0).as_deref(), Some("-00:00:01"));
        assert_eq!(t("838:59:59.9", 0).as_deref(), Some("838:59:59"));
        assert_eq!(t("01:02:03.14", 1).as_deref(), Some("01:02:03.1"));
    }

    #[test]
    fn shifted_crosses_days_and_keeps_zero_dates() {
        let dt = DateTime::parse("2024-03-01 02:30:00.5").expect("valid datetime");
        assert_eq!(dt.shifted(-5 * 3600).format(1), "2024-02-29 21:30:00.5");
        assert_eq!(dt.shifted(-5 * 3600).shifted(5 * 3600), dt);
        let zero = DateTime::default();
        assert_eq!(zero.shifted(3600), zero);
    }
}
