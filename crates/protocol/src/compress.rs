//! The compressed protocol (CLIENT_COMPRESS). After authentication every
//! byte of the packet stream travels inside compressed packets: a 7-byte
//! header (3-byte length of what follows, a sequence id of its own, 3-byte
//! length before compression, 0 when the bytes are sent as they are) and
//! a zlib stream or the bytes themselves.
//!
//! The two framings are independent: a compressed packet may carry several
//! packets, a part of one, or nothing, and clients use all of these (e.g.
//! Connector/Python sends short commands uncompressed with length 0). So
//! this layer turns the compressed stream back into a byte stream for the
//! packet reader, and packs whatever the packet writer flushes.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const HEADER: usize = 7;
/// Most bytes one compressed packet holds (before or after compression).
const MAX_CHUNK: usize = 0xFF_FFFF;
/// Shorter payloads go uncompressed, as MySQL sends them.
const MIN_COMPRESS: usize = 50;
/// How much a read from the socket asks for at least.
const READ_CHUNK: usize = 16 * 1024;
/// Buffers that grew past this for one big packet are released afterwards.
const SHRINK_ABOVE: usize = 1 << 20;

/// Buffers and sequence id of a compressed connection, kept between
/// commands (and across a relocation).
#[derive(Default)]
pub(crate) struct CompressState {
    /// Received, not yet unpacked.
    raw: Vec<u8>,
    /// Unpacked, not yet read (from `plain_at`).
    plain: Vec<u8>,
    plain_at: usize,
    /// Written since the last flush.
    pending: Vec<u8>,
    /// Packed, not yet sent (from `wire_at`).
    wire: Vec<u8>,
    wire_at: usize,
    /// Sequence id of the next compressed packet sent: one past the last
    /// received, as a reply continues the client's sequence.
    seq: u8,
}

impl CompressState {
    /// `received`: bytes the packet reader already read past the
    /// handshake, which belong to the compressed stream.
    pub(crate) fn new(received: Vec<u8>) -> CompressState {
        CompressState {
            raw: received,
            ..Default::default()
        }
    }
}

fn corrupt() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "Couldn't uncompress communication packet",
    )
}

fn len3(b: &[u8]) -> usize {
    u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize
}

/// Unpacks the first compressed packet of `raw` onto `out`: the bytes it
/// used and its sequence id, or None while it is incomplete. The length
/// before compression bounds what inflating may produce.
fn unpack(raw: &[u8], out: &mut Vec<u8>) -> io::Result<Option<(usize, u8)>> {
    if raw.len() < HEADER {
        return Ok(None);
    }
    let (len, seq, plain_len) = (len3(raw), raw[3], len3(&raw[4..]));
    let Some(body) = raw.get(HEADER..HEADER + len) else {
        return Ok(None);
    };
    if plain_len == 0 {
        out.extend_from_slice(body);
        return Ok(Some((HEADER + len, seq)));
    }
    let start = out.len();
    out.reserve_exact(plain_len);
    let mut z = Decompress::new(true);
    let status = z
        .decompress_vec(body, out, FlushDecompress::Finish)
        .map_err(|_| corrupt())?;
    let whole = status == Status::StreamEnd && z.total_in() as usize == len;
    if !whole || out.len() - start != plain_len {
        return Err(corrupt());
    }
    Ok(Some((HEADER + len, seq)))
}

/// Appends `data` to `out` as compressed packets numbered from `seq`.
fn pack(data: &[u8], seq: &mut u8, out: &mut Vec<u8>) {
    for chunk in data.chunks(MAX_CHUNK) {
        match (chunk.len() >= MIN_COMPRESS)
            .then(|| deflate(chunk))
            .flatten()
        {
            Some(z) => put_frame(&z, chunk.len(), seq, out),
            // Sent as they are, one MySQL packet per frame, as MySQL does:
            // Connector/Python's asyncio reader takes an uncompressed frame
            // for exactly one packet (several in one desynchronize it).
            None => {
                for p in packets(chunk) {
                    put_frame(p, 0, seq, out);
                }
            }
        }
    }
}

fn put_frame(body: &[u8], plain_len: usize, seq: &mut u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&(body.len() as u32).to_le_bytes()[..3]);
    out.push(*seq);
    out.extend_from_slice(&(plain_len as u32).to_le_bytes()[..3]);
    out.extend_from_slice(body);
    *seq = seq.wrapping_add(1);
}

/// `chunk` cut after each whole MySQL packet (4-byte header, payload); a
/// cut-off packet at the end (or bytes that are no packets) stays one
/// piece. An empty chunk is one empty piece.
fn packets(chunk: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = chunk;
    while rest.len() >= 4 && 4 + len3(rest) < rest.len() {
        let (p, tail) = rest.split_at(4 + len3(rest));
        out.push(p);
        rest = tail;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

/// `chunk` zlib-compressed, if that makes it smaller. zlib's default level,
/// as MySQL's `compress()`: at the fastest level small replies (a one-row
/// result is ~56 bytes) do not shrink and go uncompressed, several packets
/// in one frame, which some clients (Connector/Python's asyncio reader)
/// cannot take apart.
fn deflate(chunk: &[u8]) -> Option<Vec<u8>> {
    let mut z = Compress::new(Compression::default(), true);
    let mut out = Vec::with_capacity(chunk.len());
    let status = z
        .compress_vec(chunk, &mut out, FlushCompress::Finish)
        .ok()?;
    (status == Status::StreamEnd && out.len() < chunk.len()).then_some(out)
}

fn shrink(v: &mut Vec<u8>) {
    if v.is_empty() && v.capacity() > SHRINK_ABOVE {
        *v = Vec::new();
    }
}

/// A connection's byte stream as the packet reader and writer see it:
/// the stream itself, or its compressed packets unpacked and packed.
pub(crate) struct Io<'a, S> {
    pub(crate) inner: &'a mut S,
    pub(crate) compress: Option<&'a mut CompressState>,
}

impl<S: AsyncRead + Unpin> Io<'_, S> {
    /// Reads more of the compressed stream; false at its end.
    fn poll_more(inner: &mut S, raw: &mut Vec<u8>, cx: &mut Context<'_>) -> Poll<io::Result<bool>> {
        let old = raw.len();
        let want = match raw.get(..HEADER) {
            Some(h) => (HEADER + len3(h)).saturating_sub(old).max(READ_CHUNK),
            None => READ_CHUNK,
        };
        raw.resize(old + want, 0);
        let mut buf = ReadBuf::new(&mut raw[old..]);
        let polled = Pin::new(inner).poll_read(cx, &mut buf);
        let got = buf.filled().len();
        raw.truncate(old + got);
        ready!(polled)?;
        Poll::Ready(Ok(got > 0))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Io<'_, S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(state) = this.compress.as_deref_mut() else {
            return Pin::new(&mut *this.inner).poll_read(cx, buf);
        };
        loop {
            let ready = &state.plain[state.plain_at..];
            if !ready.is_empty() {
                let n = ready.len().min(buf.remaining());
                buf.put_slice(&ready[..n]);
                state.plain_at += n;
                return Poll::Ready(Ok(()));
            }
            state.plain.clear();
            state.plain_at = 0;
            shrink(&mut state.plain);
            if let Some((used, seq)) = unpack(&state.raw, &mut state.plain)? {
                state.raw.drain(..used);
                shrink(&mut state.raw);
                state.seq = seq.wrapping_add(1);
                continue;
            }
            if !ready!(Self::poll_more(this.inner, &mut state.raw, cx))? {
                // The end of the stream, between compressed packets or not.
                return Poll::Ready(match state.raw.is_empty() {
                    true => Ok(()),
                    false => Err(io::ErrorKind::UnexpectedEof.into()),
                });
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Io<'_, S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match this.compress.as_deref_mut() {
            // Packed at flush, so that a response makes few packets.
            Some(state) => {
                state.pending.extend_from_slice(buf);
                Poll::Ready(Ok(buf.len()))
            }
            None => Pin::new(&mut *this.inner).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(state) = this.compress.as_deref_mut() {
            loop {
                while state.wire_at < state.wire.len() {
                    let rest = &state.wire[state.wire_at..];
                    let n = ready!(Pin::new(&mut *this.inner).poll_write(cx, rest))?;
                    if n == 0 {
                        return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                    }
                    state.wire_at += n;
                }
                state.wire.clear();
                state.wire_at = 0;
                shrink(&mut state.wire);
                if state.pending.is_empty() {
                    break;
                }
                pack(&state.pending, &mut state.seq, &mut state.wire);
                state.pending.clear();
                shrink(&mut state.pending);
            }
        }
        Pin::new(&mut *this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        Pin::new(&mut *self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A compressed packet with the given body and length field.
    fn frame(seq: u8, body: &[u8], plain_len: usize) -> Vec<u8> {
        let mut f = (body.len() as u32).to_le_bytes()[..3].to_vec();
        f.push(seq);
        f.extend_from_slice(&(plain_len as u32).to_le_bytes()[..3]);
        f.extend_from_slice(body);
        f
    }

    async fn read_all(wire: Vec<u8>) -> io::Result<(Vec<u8>, u8)> {
        let mut state = CompressState::default();
        let mut src = &wire[..];
        let mut io = Io {
            inner: &mut src,
            compress: Some(&mut state),
        };
        let mut out = Vec::new();
        io.read_to_end(&mut out).await?;
        Ok((out, state.seq))
    }

    #[tokio::test]
    async fn every_framing_unpacks_to_the_same_bytes() {
        let data: Vec<u8> = (0..3000u32).map(|i| (i % 7) as u8).collect();
        let z = deflate(&data).expect("compressible");
        let mut split = frame(0, &data[..10], 0);
        split.extend(frame(1, &[], 0));
        split.extend(frame(2, &deflate(&data[10..]).expect("z"), data.len() - 10));
        for wire in [frame(0, &data, 0), frame(4, &z, data.len()), split] {
            let (got, _) = read_all(wire).await.expect("unpacks");
            assert_eq!(got, data);
        }
        let (_, seq) = read_all(frame(4, &z, data.len())).await.expect("unpacks");
        assert_eq!(seq, 5, "replies continue the sequence");
    }

    /// The reply to `SELECT 1` (column count, column definition, EOF, row,
    /// EOF) is 56 bytes; MySQL's zlib shrinks it, so it must go compressed.
    #[test]
    fn a_small_result_set_is_compressed() {
        let packet = |seq: u8, payload: &[u8]| {
            let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
            p.push(seq);
            p.extend_from_slice(payload);
            p
        };
        let mut coldef = Vec::new();
        for s in [&b"def"[..], b"", b"", b"", b"1", b""] {
            coldef.push(s.len() as u8);
            coldef.extend_from_slice(s);
        }
        coldef.extend_from_slice(&[0x0c, 63, 0, 1, 0, 0, 0, 8, 0x81, 0, 0, 0, 0]);
        let eof = [0xfe, 0, 0, 2, 0];
        let mut data = packet(1, &[1]);
        data.extend(packet(2, &coldef));
        data.extend(packet(3, &eof));
        data.extend(packet(4, &[1, b'1']));
        data.extend(packet(5, &eof));
        assert_eq!(data.len(), 56);
        let z = deflate(&data).expect("56 bytes of a result set shrink");
        assert!(z.len() < data.len());
    }

    /// Short replies go uncompressed one packet per frame (an OK, then a
    /// two-packet result is three frames), and unpack to the same bytes.
    #[tokio::test]
    async fn uncompressed_frames_hold_one_packet_each() {
        let ok = [7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0];
        let two = [1, 0, 0, 1, 1, 2, 0, 0, 2, 1, b'1'];
        let mut data = ok.to_vec();
        data.extend_from_slice(&two);
        let mut seq = 0;
        let mut wire = Vec::new();
        pack(&data, &mut seq, &mut wire);
        assert_eq!(seq, 3);
        assert_eq!(
            wire,
            [
                frame(0, &ok, 0),
                frame(1, &two[..5], 0),
                frame(2, &two[5..], 0)
            ]
            .concat()
        );
        assert_eq!(read_all(wire).await.expect("unpacks").0, data);
        // Bytes that are not whole packets stay one frame.
        assert_eq!(packets(&[9, 0, 0, 0, 1]), vec![&[9u8, 0, 0, 0, 1][..]]);
        assert_eq!(packets(&[]), vec![&[][..]]);
    }

    #[tokio::test]
    async fn corrupt_or_cut_streams_are_errors() {
        let data = vec![b'x'; 500];
        let z = deflate(&data).expect("compressible");
        let wrong_len = frame(0, &z, 499);
        let garbage = frame(0, &[1, 2, 3, 4], 100);
        let mut cut = frame(0, &z, 500);
        cut.truncate(20);
        for (wire, kind) in [
            (wrong_len, io::ErrorKind::InvalidData),
            (garbage, io::ErrorKind::InvalidData),
            (cut, io::ErrorKind::UnexpectedEof),
        ] {
            let e = read_all(wire).await.expect_err("refused");
            assert_eq!(e.kind(), kind);
        }
    }

    #[tokio::test]
    async fn writes_pack_at_flush_and_round_trip() {
        for size in [0, 10, 49, 50, 5000, MAX_CHUNK + 100] {
            let data: Vec<u8> = (0..size).map(|i| (i % 13) as u8).collect();
            let mut state = CompressState {
                seq: 3,
                ..Default::default()
            };
            let mut wire = Vec::new();
            let mut io = Io {
                inner: &mut wire,
                compress: Some(&mut state),
            };
            io.write_all(&data).await.expect("write");
            io.flush().await.expect("flush");
            let packets = size.div_ceil(MAX_CHUNK);
            assert_eq!(state.seq as usize, 3 + packets, "size {size}");
            if size > 0 && size < MIN_COMPRESS {
                assert_eq!(len3(&wire[4..]), 0, "short payloads go as they are");
            }
            let (got, _) = read_all(wire).await.expect("unpacks");
            assert!(got == data, "size {size}");
        }
    }
}
