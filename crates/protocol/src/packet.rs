//! Packet framing: a 3-byte little-endian payload length and a 1-byte
//! sequence id. Payloads of 0xFFFFFF bytes or more are split into several
//! packets; a payload that is an exact multiple of 0xFFFFFF ends with an
//! empty packet so the reader knows it is complete.
//!
//! Reader and writer own their buffers but not the stream, so a connection
//! can hold a decoded command that borrows the read buffer while it writes
//! the response.

use crate::error::ProtocolError;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest payload a single packet carries.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;
const HEADER: usize = 4;
/// Initial size of the read buffer; most commands fit in one read.
const READ_BUF: usize = 8 * 1024;
/// Payloads up to this size are served straight from the read buffer;
/// larger ones are assembled in a separate vector so the read buffer stays
/// small.
const SMALL_PACKET: usize = 64 * 1024;
/// Buffers that grew past this for one big packet are released afterwards,
/// so an idle connection does not keep megabytes around.
const SHRINK_ABOVE: usize = 1024 * 1024;

pub struct PacketReader {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    big: Vec<u8>,
}

impl Default for PacketReader {
    fn default() -> Self {
        Self::new()
    }
}

fn header(b: &[u8]) -> (usize, u8) {
    (u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize, b[3])
}

impl PacketReader {
    pub fn new() -> Self {
        PacketReader {
            buf: vec![0; READ_BUF],
            start: 0,
            end: 0,
            big: Vec::new(),
        }
    }

    /// Whether bytes of a further packet are already buffered (the client
    /// pipelined commands).
    pub fn has_buffered(&self) -> bool {
        self.end > self.start
    }

    /// Takes the bytes read past the last packet (the TLS upgrade hands
    /// them to the TLS layer).
    pub fn take_buffered(&mut self) -> Vec<u8> {
        let v = self.buf[self.start..self.end].to_vec();
        self.start = 0;
        self.end = 0;
        v
    }

    /// Where the next read lands (the buffer's start), as an address.
    pub(crate) fn landing(&self) -> usize {
        self.buf.as_ptr() as usize
    }

    /// Ensures `need` bytes are buffered. Returns false on a clean end of
    /// stream (no byte buffered at all) when `eof_ok`.
    async fn fill<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        need: usize,
        eof_ok: bool,
    ) -> Result<bool, ProtocolError> {
        if self.end - self.start >= need {
            return Ok(true);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < need {
            self.buf.resize(need.max(READ_BUF), 0);
        }
        while self.end < need {
            let n = r
                .read(&mut self.buf[self.end..])
                .await
                .map_err(ProtocolError::from_read)?;
            if n == 0 {
                if eof_ok && self.end == 0 {
                    return Ok(false);
                }
                return Err(ProtocolError::UnexpectedEof);
            }
            self.end += n;
        }
        Ok(true)
    }

    /// Reads a packet header and checks its sequence id.
    async fn header<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        seq: &mut u8,
        eof_ok: bool,
    ) -> Result<Option<usize>, ProtocolError> {
        if !self.fill(r, HEADER, eof_ok).await? {
            return Ok(None);
        }
        let (len, got) = header(&self.buf[self.start..self.start + HEADER]);
        if got != *seq {
            return Err(ProtocolError::OutOfOrder {
                expected: *seq,
                got,
            });
        }
        *seq = seq.wrapping_add(1);
        self.start += HEADER;
        Ok(Some(len))
    }

    /// Moves `len` payload bytes (buffered ones first) into `big`.
    async fn take_into_big<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        len: usize,
    ) -> Result<(), ProtocolError> {
        let avail = (self.end - self.start).min(len);
        self.big
            .extend_from_slice(&self.buf[self.start..self.start + avail]);
        self.start += avail;
        let rest = len - avail;
        if rest > 0 {
            let old = self.big.len();
            self.big.resize(old + rest, 0);
            r.read_exact(&mut self.big[old..])
                .await
                .map_err(ProtocolError::from_read)?;
        }
        Ok(())
    }

    /// Reads what the peer has sent into the buffer, at least one byte;
    /// false: it closed the stream. Cancel-safe (a reply read while a
    /// dump waits for its next event).
    pub async fn fill_some<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
    ) -> Result<bool, ProtocolError> {
        let have = self.end - self.start;
        self.fill(r, have + 1, true).await
    }

    /// A whole small packet already buffered, whatever its sequence id
    /// (each semisync reply starts its own).
    pub fn take_buffered_packet(&mut self) -> Option<Vec<u8>> {
        if self.end - self.start < HEADER {
            return None;
        }
        let (len, _) = header(&self.buf[self.start..self.start + HEADER]);
        if len > SMALL_PACKET || self.end - self.start < HEADER + len {
            return None;
        }
        let p = self.start + HEADER;
        self.start = p + len;
        Some(self.buf[p..p + len].to_vec())
    }

    /// Reads one logical payload (joining split packets). `seq` is the
    /// sequence id expected for the first packet; on return it is the id
    /// the reply must start with. `Ok(None)` means the peer closed the
    /// stream cleanly between packets.
    pub async fn read<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        seq: &mut u8,
        max: usize,
    ) -> Result<Option<&[u8]>, ProtocolError> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.buf.len() > SHRINK_ABOVE {
                self.buf = vec![0; READ_BUF];
            }
        }
        if self.big.capacity() > SHRINK_ABOVE {
            self.big = Vec::new();
        }
        let Some(len) = self.header(r, seq, true).await? else {
            return Ok(None);
        };
        if len > max {
            return Err(ProtocolError::PacketTooLarge(len));
        }
        // SMALL_PACKET < MAX_PAYLOAD, so such a payload is never split.
        if len <= SMALL_PACKET {
            self.fill(r, len, false).await?;
            let p = self.start;
            self.start += len;
            return Ok(Some(&self.buf[p..p + len]));
        }
        self.big.clear();
        let mut len = len;
        loop {
            self.take_into_big(r, len).await?;
            if len < MAX_PAYLOAD {
                break;
            }
            len = self
                .header(r, seq, false)
                .await?
                .ok_or(ProtocolError::UnexpectedEof)?;
            let total = self.big.len().saturating_add(len);
            if total > max {
                return Err(ProtocolError::PacketTooLarge(total));
            }
        }
        Ok(Some(&self.big))
    }
}

/// Buffers outgoing packets; a response is written with one `flush`.
pub struct PacketWriter {
    buf: Vec<u8>,
    seq: u8,
    /// Bytes flushed since `take_sent` last asked.
    sent: u64,
}

impl Default for PacketWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PacketWriter {
    /// Where the next packet is encoded (the buffer's start), as an address.
    pub(crate) fn landing(&self) -> usize {
        self.buf.as_ptr() as usize
    }

    pub fn new() -> Self {
        PacketWriter {
            buf: Vec::with_capacity(READ_BUF),
            seq: 0,
            sent: 0,
        }
    }

    /// Sequence id of the next packet written.
    pub fn seq(&self) -> u8 {
        self.seq
    }

    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Bytes waiting to be flushed.
    /// Bytes flushed since the last call (before compression).
    pub fn take_sent(&mut self) -> u64 {
        std::mem::take(&mut self.sent)
    }

    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Appends one packet whose payload `fill` writes. The payload is built
    /// in place behind a placeholder header, so no copy is made unless it
    /// needs splitting.
    pub fn packet(&mut self, fill: impl FnOnce(&mut Vec<u8>)) {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; HEADER]);
        fill(&mut self.buf);
        let len = self.buf.len() - start - HEADER;
        if len < MAX_PAYLOAD {
            self.buf[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.buf[start + 3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            return;
        }
        // Rare: split into full-size packets plus a shorter (maybe empty) one.
        let payload = self.buf.split_off(start + HEADER);
        self.buf.truncate(start);
        let mut chunks = payload.chunks(MAX_PAYLOAD);
        loop {
            let chunk = chunks.next().unwrap_or(&[]);
            self.buf
                .extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
            self.buf.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            self.buf.extend_from_slice(chunk);
            if chunk.len() < MAX_PAYLOAD {
                break;
            }
        }
    }

    pub fn write_packet(&mut self, payload: &[u8]) {
        self.packet(|out| out.extend_from_slice(payload));
    }

    /// Writes everything buffered in one go.
    pub async fn flush<W: AsyncWrite + Unpin>(&mut self, w: &mut W) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            w.write_all(&self.buf).await?;
            self.sent += self.buf.len() as u64;
            self.buf.clear();
            if self.buf.capacity() > 4 * SHRINK_ABOVE {
                self.buf = Vec::with_capacity(READ_BUF);
            }
        }
        w.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(buf: &[u8]) -> Vec<(usize, u8)> {
        let mut out = Vec::new();
        let mut p = 0;
        while p < buf.len() {
            let (len, seq) = header(&buf[p..]);
            out.push((len, seq));
            p += HEADER + len;
        }
        out
    }

    #[tokio::test]
    async fn small_packets_round_trip() {
        let mut w = PacketWriter::new();
        w.write_packet(b"hello");
        w.write_packet(b"");
        w.write_packet(&[7; 70_000]);
        let mut wire = Vec::new();
        w.flush(&mut wire).await.expect("flush to vec");
        assert_eq!(frames(&wire), vec![(5, 0), (0, 1), (70_000, 2)]);

        let mut r = PacketReader::new();
        let mut src = &wire[..];
        let mut seq = 0;
        assert_eq!(
            r.read(&mut src, &mut seq, 1 << 20).await.ok().flatten(),
            Some(&b"hello"[..])
        );
        assert_eq!(
            r.read(&mut src, &mut seq, 1 << 20).await.ok().flatten(),
            Some(&b""[..])
        );
        let big = r.read(&mut src, &mut seq, 1 << 20).await.expect("read");
        assert_eq!(big.map(|b| b.len()), Some(70_000));
        assert_eq!(seq, 3);
        assert!(matches!(
            r.read(&mut src, &mut seq, 1 << 20).await,
            Ok(None)
        ));
    }

    #[tokio::test]
    async fn sixteen_mib_split_and_join() {
        for size in [
            MAX_PAYLOAD - 1,
            MAX_PAYLOAD,
            MAX_PAYLOAD + 10,
            2 * MAX_PAYLOAD,
        ] {
            let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let mut w = PacketWriter::new();
            w.set_seq(5);
            w.write_packet(&payload);
            let mut wire = Vec::new();
            w.flush(&mut wire).await.expect("flush to vec");
            let f = frames(&wire);
            let expected_frames = size / MAX_PAYLOAD + 1;
            assert_eq!(f.len(), expected_frames, "size {size}");
            assert_eq!(f.last().map(|x| x.0), Some(size % MAX_PAYLOAD));
            assert_eq!(w.seq() as usize, 5 + expected_frames);

            let mut r = PacketReader::new();
            let mut src = &wire[..];
            let mut seq = 5;
            let got = r.read(&mut src, &mut seq, 64 << 20).await.expect("read");
            assert!(got == Some(&payload[..]), "size {size} joins back");
            assert_eq!(seq as usize, 5 + expected_frames);
        }
    }

    #[tokio::test]
    async fn limits_and_errors() {
        let mut w = PacketWriter::new();
        w.write_packet(&[1; 100]);
        let mut wire = Vec::new();
        w.flush(&mut wire).await.expect("flush to vec");

        let mut seq = 0;
        let too_big = PacketReader::new()
            .read(&mut &wire[..], &mut seq, 99)
            .await
            .map(|p| p.map(<[u8]>::len));
        assert!(matches!(too_big, Err(ProtocolError::PacketTooLarge(100))));

        let mut seq = 3;
        let wrong_seq = PacketReader::new()
            .read(&mut &wire[..], &mut seq, 1000)
            .await
            .map(|p| p.map(<[u8]>::len));
        assert!(matches!(
            wrong_seq,
            Err(ProtocolError::OutOfOrder {
                expected: 3,
                got: 0
            })
        ));

        let mut seq = 0;
        let cut = PacketReader::new()
            .read(&mut &wire[..50], &mut seq, 1000)
            .await
            .map(|p| p.map(<[u8]>::len));
        assert!(matches!(cut, Err(ProtocolError::UnexpectedEof)));
        let mut seq = 0;
        let half_header = PacketReader::new()
            .read(&mut &wire[..2], &mut seq, 1000)
            .await
            .map(|p| p.map(<[u8]>::len));
        assert!(matches!(half_header, Err(ProtocolError::UnexpectedEof)));
    }
}
