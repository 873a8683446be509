//! Primitive encodings of the MySQL wire format: little-endian integers,
//! length-encoded integers and strings, NUL-terminated strings.
//!
//! Reading goes through [`Cursor`], which reports truncation as an error
//! instead of panicking, because every byte it sees comes from the network.

/// A packet did not have the shape its header promised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed packet: {0}")]
pub struct Malformed(pub &'static str);

pub type Result<T> = std::result::Result<T, Malformed>;

/// Marker of a NULL column in text rows (and of "NULL" lenenc values).
pub const NULL_MARKER: u8 = 0xFB;

/// A read position in a payload.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(Malformed("truncated"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16> {
        self.array().map(u16::from_le_bytes)
    }

    pub fn u24(&mut self) -> Result<u32> {
        let [a, b, c] = self.array()?;
        Ok(u32::from_le_bytes([a, b, c, 0]))
    }

    pub fn u32(&mut self) -> Result<u32> {
        self.array().map(u32::from_le_bytes)
    }

    pub fn u64(&mut self) -> Result<u64> {
        self.array().map(u64::from_le_bytes)
    }

    pub fn f32(&mut self) -> Result<f32> {
        self.array().map(f32::from_le_bytes)
    }

    pub fn f64(&mut self) -> Result<f64> {
        self.array().map(f64::from_le_bytes)
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    /// Bytes up to a NUL, which is consumed but not returned.
    pub fn null_terminated(&mut self) -> Result<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(Malformed("missing NUL terminator"))?;
        self.pos += end + 1;
        Ok(&rest[..end])
    }

    /// Like [`Self::null_terminated`], but a missing NUL at the very end is
    /// accepted (some clients omit the last terminator).
    pub fn null_terminated_or_rest(&mut self) -> &'a [u8] {
        match self.null_terminated() {
            Ok(s) => s,
            Err(_) => self.rest(),
        }
    }

    /// A length-encoded integer; `None` for the NULL marker 0xFB.
    pub fn lenenc_int(&mut self) -> Result<Option<u64>> {
        Ok(Some(match self.u8()? {
            b @ 0..=0xFA => b as u64,
            NULL_MARKER => return Ok(None),
            0xFC => self.u16()? as u64,
            0xFD => self.u24()? as u64,
            0xFE => self.u64()?,
            0xFF => return Err(Malformed("invalid length-encoded integer")),
        }))
    }

    /// A length-encoded string (NULL is not allowed here).
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8]> {
        let len = self
            .lenenc_int()?
            .ok_or(Malformed("unexpected NULL string"))?;
        let len = usize::try_from(len).map_err(|_| Malformed("string too long"))?;
        self.bytes(len)
    }
}

pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u24(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes()[..3]);
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => out.push(v as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            put_u16(out, v as u16);
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            put_u24(out, v as u32);
        }
        _ => {
            out.push(0xFE);
            put_u64(out, v);
        }
    }
}

pub fn put_lenenc_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_lenenc_int(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub fn put_null_terminated(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(b);
    out.push(0);
}

/// Decimal digits of `v`, without allocating.
pub fn put_u64_text(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

pub fn put_i64_text(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    put_u64_text(out, v.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trip() {
        let cases: [(u64, usize); 9] = [
            (0, 1),
            (250, 1),
            (251, 3),
            (0xFFFF, 3),
            (0x1_0000, 4),
            (0xFF_FFFF, 4),
            (0x100_0000, 9),
            (u64::MAX, 9),
            (42, 1),
        ];
        for (v, len) in cases {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            assert_eq!(out.len(), len, "encoded length of {v}");
            let mut c = Cursor::new(&out);
            assert_eq!(c.lenenc_int(), Ok(Some(v)));
            assert!(c.is_empty());
        }
        assert_eq!(Cursor::new(&[0xFB]).lenenc_int(), Ok(None));
        assert!(Cursor::new(&[0xFF]).lenenc_int().is_err());
        assert!(Cursor::new(&[0xFC, 1]).lenenc_int().is_err());
        assert!(Cursor::new(&[0xFE, 1, 2, 3]).lenenc_int().is_err());
    }

    #[test]
    fn strings_and_truncation() {
        let mut out = Vec::new();
        put_lenenc_bytes(&mut out, b"hello");
        put_null_terminated(&mut out, b"abc");
        out.extend_from_slice(b"tail");
        let mut c = Cursor::new(&out);
        assert_eq!(c.lenenc_bytes(), Ok(&b"hello"[..]));
        assert_eq!(c.null_terminated(), Ok(&b"abc"[..]));
        assert!(c.clone().null_terminated().is_err());
        assert_eq!(c.rest(), b"tail");
        assert!(c.u8().is_err());
        // A length that claims more than the packet holds.
        assert!(Cursor::new(&[5, b'a']).lenenc_bytes().is_err());
        assert!(
            Cursor::new(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
                .lenenc_bytes()
                .is_err()
        );
    }

    #[test]
    fn integers_as_text() {
        for v in [0i64, 7, -7, 1234567890, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            put_i64_text(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
        let mut out = Vec::new();
        put_u64_text(&mut out, u64::MAX);
        assert_eq!(out, u64::MAX.to_string().into_bytes());
    }
}
