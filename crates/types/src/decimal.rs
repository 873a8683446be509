//! Exact decimal numbers as MySQL's DECIMAL(M,D) holds them: up to 65
//! significant digits, up to 30 after the point.
//!
//! A value is a 256-bit signed mantissa and a scale (`m / 10^scale`). The
//! mantissa is kept below 10^76 in magnitude (what 256 bits hold), which
//! leaves room for a DECIMAL(65,30) operand plus the extra digits of an
//! intermediate result; an operation that would go past it reports
//! overflow (`None`) instead of wrapping. Rounding is half away from zero,
//! as MySQL rounds DECIMAL.

use ethnum::I256;
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Most digits a DECIMAL column holds (MySQL's limit).
pub const MAX_PRECISION: u32 = 65;
/// Most digits after the point (MySQL's limit).
pub const MAX_SCALE: u32 = 30;
/// Most digits a mantissa may have: 10^76 < 2^255.
const MAX_DIGITS: u32 = 76;

#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Decimal {
    #[serde(serialize_with = "serialize_mantissa")]
    m: I256,
    scale: u8,
}

/// The mantissa in the text ethnum's serde writes (`{:-#x}`: sign, `0x`,
/// hex digits), so logs and checkpoints read as before; through u128 when
/// it fits, as nearly every value does: ethnum's 256-bit formatting was
/// ~0.6% of the server's CPU under TPC-C (every DECIMAL of a logged row).
fn serialize_mantissa<S: serde::Serializer>(m: &I256, s: S) -> Result<S::Ok, S::Error> {
    let mut buf = [0u8; MANTISSA_TEXT];
    match mantissa_text(m, &mut buf) {
        Some(text) => s.serialize_str(text),
        None => serde::Serialize::serialize(m, s),
    }
}

/// "-0x" and the 32 hex digits of a u128.
const MANTISSA_TEXT: usize = 35;

/// `format!("{m:-#x}")` for a mantissa whose magnitude fits a u128.
fn mantissa_text<'b>(m: &I256, buf: &'b mut [u8; MANTISSA_TEXT]) -> Option<&'b str> {
    let mut v = u128::try_from(m.unsigned_abs()).ok()?;
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b"0123456789abcdef"[(v & 0xF) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    at -= 2;
    buf[at..at + 2].copy_from_slice(b"0x");
    if *m < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    Some(std::str::from_utf8(&buf[at..]).expect("ASCII digits"))
}

/// 10^n for n <= MAX_DIGITS, from a table built once (aligning scales is
/// on the path of every SUM and comparison).
fn pow10(n: u32) -> I256 {
    static TABLE: std::sync::OnceLock<[I256; MAX_DIGITS as usize + 1]> = std::sync::OnceLock::new();
    debug_assert!(n <= MAX_DIGITS, "10^{n} does not fit");
    TABLE.get_or_init(|| {
        let mut t = [I256::ONE; MAX_DIGITS as usize + 1];
        for i in 1..t.len() {
            t[i] = t[i - 1] * 10;
        }
        t
    })[n as usize]
}

fn limit() -> I256 {
    pow10(MAX_DIGITS)
}

/// Divides rounding half away from zero.
fn div_round(n: I256, d: I256) -> I256 {
    debug_assert!(d != 0);
    let (q, r) = (n / d, n % d);
    if r.unsigned_abs() * 2 >= d.unsigned_abs() {
        q + n.signum() * d.signum()
    } else {
        q
    }
}

/// Error parsing a decimal from text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid or out-of-range decimal")]
pub struct ParseDecimalError;

impl Decimal {
    pub const ZERO: Decimal = Decimal {
        m: I256::ZERO,
        scale: 0,
    };
    pub const ONE: Decimal = Decimal {
        m: I256::ONE,
        scale: 0,
    };

    /// `m / 10^scale`; None if it is out of range.
    fn make(m: I256, scale: u32) -> Option<Decimal> {
        (m.unsigned_abs() < limit().unsigned_abs() && scale <= MAX_DIGITS).then_some(Decimal {
            m,
            scale: scale as u8,
        })
    }

    /// `m / 10^scale`, the scale capped at MAX_SCALE (rounding).
    pub fn from_i128_with_scale(m: i128, scale: u32) -> Decimal {
        let d = Decimal {
            m: I256::from(m),
            scale: scale.min(MAX_DIGITS) as u8,
        };
        d.round_dp(MAX_SCALE)
    }

    /// Compact storage form: the scale, then the mantissa in the fewest
    /// little-endian two's-complement bytes that hold it (a row image
    /// stores DECIMAL(12,2) in 1 to 6 bytes, not 48).
    pub fn write_compact(&self, out: &mut Vec<u8>) {
        out.push(self.scale);
        let bytes = self.m.to_le_bytes();
        let fill = if self.m < 0 { 0xFF } else { 0 };
        // Drop high bytes that only repeat the sign of the byte below.
        let mut n = bytes.len();
        while n > 1 && bytes[n - 1] == fill && (bytes[n - 2] ^ fill) & 0x80 == 0 {
            n -= 1;
        }
        out.extend_from_slice(&bytes[..n]);
    }

    /// Reads what `write_compact` wrote; None if the bytes are not such a
    /// form.
    pub fn read_compact(b: &[u8]) -> Option<Decimal> {
        let (&scale, m) = b.split_first()?;
        if m.is_empty() || m.len() > 32 {
            return None;
        }
        let fill = if m[m.len() - 1] & 0x80 != 0 { 0xFF } else { 0 };
        let mut bytes = [fill; 32];
        bytes[..m.len()].copy_from_slice(m);
        Decimal::make(I256::from_le_bytes(bytes), scale as u32)
    }

    /// Digits after the point.
    pub fn scale(&self) -> u32 {
        self.scale as u32
    }

    pub fn is_zero(&self) -> bool {
        self.m == 0
    }

    pub fn is_sign_negative(&self) -> bool {
        self.m < 0
    }

    pub fn abs(self) -> Decimal {
        Decimal {
            m: self.m.abs(),
            ..self
        }
    }

    /// The same value at `scale` digits; None if the mantissa would not fit.
    fn at_scale(self, scale: u32) -> Option<Decimal> {
        if scale == self.scale() {
            Some(self)
        } else if scale > self.scale() {
            let m = self.m.checked_mul(pow10(scale - self.scale()))?;
            Decimal::make(m, scale)
        } else {
            Some(self.round_dp(scale))
        }
    }

    /// Rounds (half away from zero) to at most `dp` digits after the point;
    /// a value with fewer keeps its scale.
    pub fn round_dp(self, dp: u32) -> Decimal {
        if dp >= self.scale() {
            return self;
        }
        let m = div_round(self.m, pow10(self.scale() - dp));
        Decimal { m, scale: dp as u8 }
    }

    /// MySQL's ROUND / TRUNCATE(x, places): rounded half away from zero (or
    /// cut) at `places` digits after the point, at most MAX_SCALE; negative
    /// places round to tens, hundreds, ... The result has max(places, 0)
    /// digits after the point (padded with zeros). None if it overflows.
    pub fn round_places(self, places: i64, truncate: bool) -> Option<Decimal> {
        // Below -MAX_DIGITS every value rounds to 0: clamping there keeps
        // the arithmetic below in range.
        let places = places.clamp(-(MAX_DIGITS as i64) - 1, MAX_SCALE as i64);
        let scale = self.scale() as i64;
        if places >= scale {
            // Padding a value near the mantissa's limit keeps its scale.
            return Some(self.at_scale(places as u32).unwrap_or(self));
        }
        let drop = scale - places;
        if drop > MAX_DIGITS as i64 {
            // |m| < 10^76: nothing is left (not even a half to round up).
            return Some(Decimal::ZERO);
        }
        let unit = pow10(drop as u32);
        let q = if truncate {
            self.m / unit
        } else {
            div_round(self.m, unit)
        };
        if places >= 0 {
            return Decimal::make(q, places as u32);
        }
        // -places <= drop <= MAX_DIGITS here.
        Decimal::make(q.checked_mul(pow10(places.unsigned_abs() as u32))?, 0)
    }

    /// The largest value of DECIMAL(precision, scale): all nines.
    pub fn largest(precision: u32, scale: u32) -> Decimal {
        let precision = precision.min(MAX_DIGITS - 1);
        Decimal {
            m: pow10(precision) - 1,
            scale: scale.min(precision) as u8,
        }
    }

    /// Drops digits beyond `dp` after the point.
    pub fn trunc_dp(self, dp: u32) -> Decimal {
        if dp >= self.scale() {
            return self;
        }
        Decimal {
            m: self.m / pow10(self.scale() - dp),
            scale: dp as u8,
        }
    }

    /// Sets the scale to exactly `scale`: rounds if it has more digits,
    /// pads with zeros if fewer (left as it is if padding would overflow).
    pub fn rescale(&mut self, scale: u32) {
        if let Some(d) = self.at_scale(scale.min(MAX_DIGITS)) {
            *self = d;
        }
    }

    /// Nearest integer, half away from zero (scale 0).
    pub fn round(self) -> Decimal {
        self.round_dp(0)
    }

    /// Integer part (scale 0).
    pub fn trunc(self) -> Decimal {
        self.trunc_dp(0)
    }

    pub fn floor(self) -> Decimal {
        let t = self.trunc();
        if self.m < 0 && t.at_scale(self.scale()).map(|t| t.m) != Some(self.m) {
            Decimal { m: t.m - 1, ..t }
        } else {
            t
        }
    }

    pub fn ceil(self) -> Decimal {
        let t = self.trunc();
        if self.m > 0 && t.at_scale(self.scale()).map(|t| t.m) != Some(self.m) {
            Decimal { m: t.m + 1, ..t }
        } else {
            t
        }
    }

    /// Without trailing zeros after the point (1.500 → 1.5, 2.00 → 2).
    pub fn normalize(self) -> Decimal {
        let (mut m, mut scale) = (self.m, self.scale);
        let ten = I256::from(10u8);
        while scale > 0 && m % ten == 0 {
            m /= ten;
            scale -= 1;
        }
        Decimal { m, scale }
    }

    /// Both operands at the larger of their scales.
    fn aligned(self, other: Decimal) -> Option<(I256, I256, u32)> {
        let scale = self.scale().max(other.scale());
        Some((self.at_scale(scale)?.m, other.at_scale(scale)?.m, scale))
    }

    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        let (a, b, scale) = self.aligned(other)?;
        Decimal::make(a.checked_add(b)?, scale)
    }

    pub fn checked_sub(self, other: Decimal) -> Option<Decimal> {
        let (a, b, scale) = self.aligned(other)?;
        Decimal::make(a.checked_sub(b)?, scale)
    }

    /// Product with the sum of the scales (rounded to MAX_SCALE), as MySQL.
    pub fn checked_mul(self, other: Decimal) -> Option<Decimal> {
        let scale = self.scale() + other.scale();
        let m = self.m.checked_mul(other.m)?;
        let d = Decimal::make(m, scale)?;
        Some(d.round_dp(MAX_SCALE))
    }

    /// Quotient rounded (half away from zero) to `scale` digits after the
    /// point; None on division by zero or overflow. MySQL's `/` uses the
    /// dividend's scale + div_precision_increment (4).
    pub fn checked_div(self, other: Decimal, scale: u32) -> Option<Decimal> {
        if other.m == 0 {
            return None;
        }
        let scale = scale.min(MAX_SCALE);
        // a/10^sa / (b/10^sb) = a * 10^(sb - sa) / b; one extra digit is
        // computed so the last one rounds.
        let shift = scale as i64 + 1 + other.scale() as i64 - self.scale() as i64;
        let (n, d) = if shift >= 0 {
            (self.m.checked_mul(pow10(shift as u32))?, other.m)
        } else {
            (self.m, other.m.checked_mul(pow10((-shift) as u32))?)
        };
        let q = div_round(n.checked_div(d)?, I256::from(10u8));
        Decimal::make(q, scale)
    }

    /// The quotient truncated to an integer (MySQL's DIV); None on
    /// division by zero or overflow.
    pub fn checked_div_trunc(self, other: Decimal) -> Option<Decimal> {
        let (a, b, _) = self.aligned(other)?;
        Decimal::make(a.checked_div(b)?, 0)
    }

    /// Remainder with the dividend's sign, at the larger scale.
    pub fn checked_rem(self, other: Decimal) -> Option<Decimal> {
        let (a, b, scale) = self.aligned(other)?;
        Decimal::make(a.checked_rem(b)?, scale)
    }

    /// Digits before the point, leading zeros not counted (0.5 has none).
    pub fn integer_digits(&self) -> u32 {
        let int = (self.m / pow10(self.scale())).unsigned_abs();
        (0..=MAX_DIGITS)
            .find(|&n| int < pow10(n).unsigned_abs())
            .unwrap_or(MAX_DIGITS)
    }

    /// The integer part as i128, if it fits (fraction truncated).
    pub fn to_i128(&self) -> Option<i128> {
        let t = self.m / pow10(self.scale());
        i128::try_from(t).ok()
    }

    /// Integer part, fraction truncated.
    pub fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|i| i64::try_from(i).ok())
    }

    pub fn to_u64(&self) -> Option<u64> {
        self.to_i128().and_then(|i| u64::try_from(i).ok())
    }

    /// Nearest double (through the text form, which rounds correctly).
    pub fn to_f64(&self) -> Option<f64> {
        self.to_string().parse().ok()
    }

    /// The exact decimal value of a finite double's shortest text form,
    /// rounded to MAX_SCALE; None for NaN, infinities and magnitudes past
    /// what a decimal holds.
    pub fn from_f64(f: f64) -> Option<Decimal> {
        if !f.is_finite() {
            return None;
        }
        format!("{f}").parse().ok()
    }
}

impl From<i64> for Decimal {
    fn from(i: i64) -> Decimal {
        Decimal {
            m: I256::from(i),
            scale: 0,
        }
    }
}

impl From<u64> for Decimal {
    fn from(u: u64) -> Decimal {
        Decimal {
            m: I256::from(u),
            scale: 0,
        }
    }
}

impl From<i32> for Decimal {
    fn from(i: i32) -> Decimal {
        Decimal::from(i as i64)
    }
}

impl From<usize> for Decimal {
    fn from(u: usize) -> Decimal {
        Decimal::from(u as u64)
    }
}

impl std::ops::Neg for Decimal {
    type Output = Decimal;
    fn neg(self) -> Decimal {
        // |m| < 10^76 < 2^255: the negation cannot overflow.
        Decimal { m: -self.m, ..self }
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Decimal) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    /// Numeric order: integer parts first, then the fractions brought to a
    /// common scale (which always fits: a fraction is below 1).
    fn cmp(&self, other: &Decimal) -> Ordering {
        // One scale (a column's values): the mantissas compare as the
        // values do, with no 256-bit division.
        if self.scale == other.scale {
            return self.m.cmp(&other.m);
        }
        let (ia, fa) = self.split();
        let (ib, fb) = other.split();
        ia.cmp(&ib).then(fa.cmp(&fb))
    }
}

impl Decimal {
    /// (integer part, fraction scaled to MAX_DIGITS / 2 places): both carry
    /// the value's sign, so comparing the pairs compares the values.
    fn split(&self) -> (I256, I256) {
        if self.scale == 0 {
            return (self.m, I256::ZERO);
        }
        let p = pow10(self.scale());
        let (int, frac) = (self.m / p, self.m % p);
        const FRAC_PLACES: u32 = MAX_DIGITS / 2;
        let frac = if self.scale() <= FRAC_PLACES {
            frac * pow10(FRAC_PLACES - self.scale())
        } else {
            frac / pow10(self.scale() - FRAC_PLACES)
        };
        (int, frac)
    }

    /// Order-preserving bytes: equal values (1.5 and 1.50) encode alike.
    /// 32 bytes of integer part and 16 of fraction, sign bits flipped.
    pub fn encode_key(&self, out: &mut Vec<u8>) {
        let (int, frac) = self.split();
        let int = int.to_be_bytes();
        out.push(int[0] ^ 0x80);
        out.extend_from_slice(&int[1..]);
        // The fraction is below 10^38 < 2^127: it fits an i128.
        let frac = i128::try_from(frac).expect("a fraction has at most 38 digits");
        out.extend_from_slice(&((frac as u128) ^ (1 << 127)).to_be_bytes());
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Most values fit 64 bits, whose formatting needs no 256-bit
        // division (ethnum's was ~1% of the server's CPU under TPC-C).
        let abs = self.m.unsigned_abs();
        let digits = match u64::try_from(abs) {
            Ok(small) => small.to_string(),
            Err(_) => abs.to_string(),
        };
        let scale = self.scale();
        let mut s = String::with_capacity(digits.len() + 3);
        if self.m < 0 {
            s.push('-');
        }
        if scale == 0 {
            s.push_str(&digits);
        } else if digits.len() as u32 > scale {
            let (int, frac) = digits.split_at(digits.len() - scale as usize);
            s.push_str(int);
            s.push('.');
            s.push_str(frac);
        } else {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', scale as usize - digits.len()));
            s.push_str(&digits);
        }
        f.pad(&s)
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Decimal {
    type Err = ParseDecimalError;

    /// `[+-]digits[.digits][e[+-]digits]`. Digits past MAX_SCALE after
    /// the point are rounded; a value with more integer digits than a
    /// mantissa holds is an error.
    fn from_str(s: &str) -> Result<Decimal, ParseDecimalError> {
        let b = s.as_bytes();
        let mut i = 0;
        let negative = match b.first() {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        // Significant digits (leading zeros dropped) and the count of them
        // after the point.
        let mut digits: Vec<u8> = Vec::new();
        let mut frac_digits: i64 = 0;
        let (mut seen, mut point) = (false, false);
        while i < b.len() {
            match b[i] {
                c @ b'0'..=b'9' => {
                    seen = true;
                    if !(digits.is_empty() && c == b'0') {
                        digits.push(c - b'0');
                    }
                    if point {
                        frac_digits += 1;
                    }
                }
                b'.' if !point => point = true,
                _ => break,
            }
            i += 1;
        }
        if !seen {
            return Err(ParseDecimalError);
        }
        if i < b.len() {
            if !matches!(b[i], b'e' | b'E') {
                return Err(ParseDecimalError);
            }
            let exp: i64 = s[i + 1..].parse().map_err(|_| ParseDecimalError)?;
            if exp.abs() > 1000 {
                return Err(ParseDecimalError);
            }
            frac_digits -= exp;
        }
        // Negative scale: the digits are followed by zeros.
        while frac_digits < 0 {
            if !digits.is_empty() {
                digits.push(0);
            }
            frac_digits += 1;
        }
        // Too many digits after the point: round at MAX_SCALE.
        let mut round_up = false;
        if frac_digits > MAX_SCALE as i64 {
            let drop = (frac_digits - MAX_SCALE as i64) as usize;
            if drop > digits.len() {
                digits.clear();
            } else {
                let cut = digits.len() - drop;
                round_up = digits[cut] >= 5;
                digits.truncate(cut);
            }
            frac_digits = MAX_SCALE as i64;
        }
        if digits.len() > MAX_DIGITS as usize {
            return Err(ParseDecimalError);
        }
        let mut m = I256::ZERO;
        let ten = I256::from(10u8);
        for d in digits {
            m = m * ten + I256::from(d);
        }
        if round_up {
            m += 1;
        }
        if negative {
            m = -m;
        }
        Decimal::make(m, frac_digits as u32).ok_or(ParseDecimalError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().expect("decimal literal")
    }

    #[test]
    fn logged_mantissa_text_is_ethnums() {
        let mut values = vec![I256::ZERO, I256::ONE, -I256::ONE, I256::from(255u8)];
        for bits in [63u32, 64, 100, 126, 127] {
            let p = I256::ONE << bits;
            values.extend([p, p - 1, -p, -(p - 1), p + 12345]);
        }
        for m in values {
            let mut buf = [0u8; MANTISSA_TEXT];
            let ours = mantissa_text(&m, &mut buf).expect("fits a u128");
            assert_eq!(ours, format!("{m:-#x}"), "{m}");
        }
        // Past u128 the text is ethnum's own.
        let mut buf = [0u8; MANTISSA_TEXT];
        assert!(mantissa_text(&(I256::ONE << 128), &mut buf).is_none());
    }

    #[test]
    fn same_scale_order_and_text_at_the_64_bit_edge() {
        // Around 2^64 the text comes from one of two formatters, and values
        // of one scale compare by mantissa: both must agree with the rest.
        let texts = [
            "-18446744073709551616.5",
            "-18446744073709551615.5",
            "-0.5",
            "0.0",
            "0.5",
            "18446744073709551615.4",
            "18446744073709551615.5",
            "18446744073709551616.5",
        ];
        let values: Vec<Decimal> = texts.iter().map(|t| d(t)).collect();
        for (t, v) in texts.iter().zip(&values) {
            assert_eq!(&v.to_string(), t);
        }
        for (i, a) in values.iter().enumerate() {
            for (j, b) in values.iter().enumerate() {
                assert_eq!(a.cmp(b), i.cmp(&j), "{a} vs {b}");
                // The same pair at different scales takes the other path.
                let wide = d(&format!("{b}00"));
                assert_eq!(a.cmp(&wide), i.cmp(&j), "{a} vs {wide}");
            }
        }
        assert_eq!(
            d("18446744073709551616").to_string(),
            "18446744073709551616"
        );
        assert_eq!(
            d("-9223372036854775809").to_string(),
            "-9223372036854775809"
        );
    }

    #[test]
    fn parses_and_prints_with_scale() {
        for s in ["0", "1.50", "-0.05", "123456789.000", "-7", "0.000000001"] {
            assert_eq!(d(s).to_string(), s);
        }
        assert_eq!(d("+.5").to_string(), "0.5");
        assert_eq!(d("007.10").to_string(), "7.10");
        assert_eq!(d("1.5e3").to_string(), "1500");
        assert_eq!(d("15e-3").to_string(), "0.015");
        for bad in ["", "-", ".", "1.2.3", "abc", "1e", "1x"] {
            assert!(bad.parse::<Decimal>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sixty_five_digits_are_exact() {
        let big = "12345678901234567890123456789012345.123456789012345678901234567890";
        assert_eq!(d(big).to_string(), big);
        let sum = d(big).checked_add(d(big)).expect("fits");
        assert_eq!(
            sum.to_string(),
            "24691357802469135780246913578024690.246913578024691357802469135780"
        );
        let nines = "9".repeat(65);
        assert_eq!(d(&nines).to_string(), nines);
        assert!("1".repeat(77).parse::<Decimal>().is_err());
    }

    #[test]
    fn scale_beyond_thirty_rounds() {
        assert_eq!(
            d("0.1234567890123456789012345678905").to_string(),
            "0.123456789012345678901234567891"
        );
        assert_eq!(
            d("-0.00000000000000000000000000000049").to_string(),
            "0.000000000000000000000000000000"
        );
    }

    #[test]
    fn arithmetic_follows_mysql_scales() {
        assert_eq!(d("1.5").checked_add(d("2.25")).unwrap().to_string(), "3.75");
        assert_eq!(
            d("1.5").checked_sub(d("2.25")).unwrap().to_string(),
            "-0.75"
        );
        assert_eq!(
            d("1.5").checked_mul(d("2.25")).unwrap().to_string(),
            "3.375"
        );
        assert_eq!(
            d("10").checked_div(d("3"), 4).unwrap().to_string(),
            "3.3333"
        );
        assert_eq!(d("2").checked_div(d("3"), 4).unwrap().to_string(), "0.6667");
        assert_eq!(
            d("-2").checked_div(d("3"), 4).unwrap().to_string(),
            "-0.6667"
        );
        assert_eq!(
            d("1.00").checked_div(d("0.3"), 6).unwrap().to_string(),
            "3.333333"
        );
        assert!(d("1").checked_div(d("0"), 4).is_none());
        let q = |a: &str, b: &str| d(a).checked_div_trunc(d(b)).map(|q| q.to_string());
        assert_eq!(
            q("9223372036854775807", "-9223372036854775808").as_deref(),
            Some("0")
        );
        assert_eq!(q("7.5", "2").as_deref(), Some("3"));
        assert_eq!(q("-7.5", "2").as_deref(), Some("-3"));
        assert_eq!(q("1", "0"), None);
        assert_eq!(d("7.5").checked_rem(d("2")).unwrap().to_string(), "1.5");
        assert_eq!(d("-7.5").checked_rem(d("2")).unwrap().to_string(), "-1.5");
        let huge = d(&"9".repeat(70));
        assert!(huge.checked_mul(huge).is_none(), "overflow is reported");
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(d("2.5").round().to_string(), "3");
        assert_eq!(d("-2.5").round().to_string(), "-3");
        assert_eq!(d("1.245").round_dp(2).to_string(), "1.25");
        assert_eq!(d("1.244").round_dp(2).to_string(), "1.24");
        assert_eq!(d("-1.999").trunc_dp(1).to_string(), "-1.9");
        assert_eq!(d("-1.5").floor().to_string(), "-2");
        assert_eq!(d("-1.5").ceil().to_string(), "-1");
        assert_eq!(d("1.5").floor().to_string(), "1");
        assert_eq!(d("1.5").ceil().to_string(), "2");
        assert_eq!(d("-2.00").floor().to_string(), "-2");
        let mut x = d("3.14159");
        x.rescale(2);
        assert_eq!(x.to_string(), "3.14");
        x.rescale(4);
        assert_eq!(x.to_string(), "3.1400");
        assert_eq!(d("1.500").normalize().to_string(), "1.5");
    }

    #[test]
    fn round_places_follows_mysql() {
        let r = |s: &str, p: i64| d(s).round_places(p, false).expect("fits").to_string();
        let t = |s: &str, p: i64| d(s).round_places(p, true).expect("fits").to_string();
        assert_eq!(r("1234.5", -2), "1200");
        assert_eq!(r("1250", -2), "1300");
        assert_eq!(r("-55", -1), "-60");
        assert_eq!(r("1.5", 3), "1.500");
        assert_eq!(r("1.5", 40), format!("1.5{}", "0".repeat(29)));
        assert_eq!(r("1234.5", -100), "0");
        assert_eq!(r("1234.5", i64::MIN), "0");
        assert_eq!(t("1299", -2), "1200");
        assert_eq!(t("-1.999", 1), "-1.9");
        assert_eq!(Decimal::largest(4, 2).to_string(), "99.99");
        assert_eq!(Decimal::largest(65, 30).integer_digits(), 35);
    }

    #[test]
    fn order_and_keys_agree() {
        let values = [
            "-100",
            "-1.5",
            "-1.25",
            "-1",
            "-0.5",
            "0",
            "0.001",
            "0.5",
            "1",
            "1.25",
            "1.5",
            "99999999999999999999999999999999999.5",
            "100000000000000000000000000000000000",
        ];
        for (i, a) in values.iter().enumerate() {
            for (j, b) in values.iter().enumerate() {
                assert_eq!(d(a).cmp(&d(b)), i.cmp(&j), "{a} vs {b}");
                let (mut ka, mut kb) = (Vec::new(), Vec::new());
                d(a).encode_key(&mut ka);
                d(b).encode_key(&mut kb);
                assert_eq!(ka.cmp(&kb), i.cmp(&j), "keys of {a} vs {b}");
            }
        }
        assert_eq!(d("1.5"), d("1.500"));
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        d("1.5").encode_key(&mut ka);
        d("1.500").encode_key(&mut kb);
        assert_eq!(ka, kb);
    }

    #[test]
    fn conversions() {
        assert_eq!(d("12.7").to_i64(), Some(12));
        assert_eq!(d("-12.7").round().to_i64(), Some(-13));
        assert_eq!(d(&"9".repeat(30)).to_i64(), None);
        assert_eq!(d("0.1").to_f64(), Some(0.1));
        assert_eq!(Decimal::from_f64(0.1).unwrap().to_string(), "0.1");
        assert_eq!(Decimal::from_f64(-2.5e-3).unwrap().to_string(), "-0.0025");
        assert!(Decimal::from_f64(f64::NAN).is_none());
        assert!(Decimal::from_f64(1e300).is_none());
        assert_eq!(
            Decimal::from_i128_with_scale(12345, 2).to_string(),
            "123.45"
        );
        assert_eq!(d("0.5").integer_digits(), 0);
        assert_eq!(d("-999.5").integer_digits(), 3);
        assert_eq!(d("1000").integer_digits(), 4);
    }
}
