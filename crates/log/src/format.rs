//! On-disk format: segment files, record framing, and the stream reader used by
//! recovery and by `SegmentReader`.
//!
//! The log is one logical byte stream; an LSN is a byte offset in it. The stream
//! is cut into segment files, each covering `[start, start + cap)`. A segment
//! file is a 64-byte header followed by the stream bytes of that range. Records
//! are NOT padded to segment ends: a record may straddle two (or, if huge, more)
//! segments. This keeps LSN reservation a single `fetch_add` (7.1.1) — nobody has
//! to know where a segment ends when reserving. The header stores the LSN of the
//! first record that starts inside the segment so a segment can be read on its
//! own (`lockstep binlog <file>`) or after older segments were deleted.
//!
//! Record framing: `[len u32 LE][crc u32 LE][payload]`. The crc32 covers the
//! record's own start LSN, the len field and the payload: covering the LSN means
//! bytes of a record can never validate at another position (so the forward
//! scan that tells a torn tail from damage in the middle has no false hits from
//! shifted data), and covering the length means a zeroed header (`len = 0,
//! crc = 0`) never validates. Bit 31 of `len` marks a padding record (written
//! when a `Reservation` is dropped unwritten); recovery skips those.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::storage::{LogFile, OpenMode, OsStorage, Storage};
use crate::{LogError, Lsn};

pub(crate) const SEG_HEADER: u64 = 64;
pub(crate) const REC_HEADER: usize = 8;
pub(crate) const PAD_FLAG: u32 = 1 << 31;
/// Largest payload a record can carry (len field minus the padding flag).
pub const MAX_PAYLOAD: usize = (PAD_FLAG - 1) as usize;
pub(crate) const NO_RECORD: u64 = u64::MAX;
const MAGIC: &[u8; 8] = b"LKSTPLOG";
const VERSION: u32 = 1;

pub(crate) fn seg_name(start: Lsn) -> String {
    format!("log-{start:020}.seg")
}

pub(crate) fn parse_seg_name(name: &str) -> Option<Lsn> {
    let digits = name.strip_prefix("log-")?.strip_suffix(".seg")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

pub(crate) fn record_crc(lsn: Lsn, len_field: u32, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&lsn.to_le_bytes());
    h.update(&len_field.to_le_bytes());
    h.update(payload);
    h.finalize()
}

pub(crate) fn io_err(op: &'static str, path: &Path, e: std::io::Error) -> LogError {
    LogError::Io {
        op,
        path: path.to_path_buf(),
        kind: e.kind(),
        errno: e.raw_os_error().unwrap_or(0),
        msg: e.to_string(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegHeader {
    pub start: Lsn,
    pub cap: u64,
    /// LSN of the first record starting in this segment, `NO_RECORD` if a huge
    /// record covers the whole segment.
    pub first_rec: Lsn,
}

impl SegHeader {
    pub fn encode(&self) -> [u8; SEG_HEADER as usize] {
        let mut b = [0u8; SEG_HEADER as usize];
        b[0..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&(SEG_HEADER as u32).to_le_bytes());
        b[16..24].copy_from_slice(&self.start.to_le_bytes());
        b[24..32].copy_from_slice(&self.cap.to_le_bytes());
        b[32..40].copy_from_slice(&self.first_rec.to_le_bytes());
        let crc = crc32fast::hash(&b[0..40]);
        b[40..44].copy_from_slice(&crc.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() < SEG_HEADER as usize {
            return Err(format!("short header ({} bytes)", b.len()));
        }
        if &b[0..8] != MAGIC {
            return Err("bad magic".into());
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        if u32_at(40) != crc32fast::hash(&b[0..40]) {
            return Err("header checksum mismatch".into());
        }
        if u32_at(8) != VERSION || u32_at(12) != SEG_HEADER as u32 {
            return Err(format!("unsupported version {}", u32_at(8)));
        }
        let h = SegHeader {
            start: u64_at(16),
            cap: u64_at(24),
            first_rec: u64_at(32),
        };
        if h.cap == 0 {
            return Err("zero capacity".into());
        }
        if h.first_rec != NO_RECORD && (h.first_rec < h.start || h.first_rec > h.start + h.cap) {
            return Err(format!("first record {} outside segment", h.first_rec));
        }
        Ok(h)
    }
}

/// A segment file found on disk with a valid header.
#[derive(Debug, Clone)]
pub(crate) struct SegFile {
    pub hdr: SegHeader,
    pub path: PathBuf,
    /// Stream bytes present in the file (file length minus header), capped at `cap`.
    pub data_len: u64,
}

impl SegFile {
    pub fn start(&self) -> Lsn {
        self.hdr.start
    }
    pub fn end_cap(&self) -> Lsn {
        self.hdr.start + self.hdr.cap
    }
}

/// One `log-*.seg` file: its name-derived start and either its parsed header
/// or why it could not be parsed.
pub(crate) struct Listed {
    pub name_start: Lsn,
    pub path: PathBuf,
    pub file_len: u64,
    pub parsed: Result<SegFile, String>,
}

pub(crate) fn list_segments(st: &dyn Storage, dir: &Path) -> Result<Vec<Listed>, LogError> {
    let mut out = Vec::new();
    let names = st.list(dir).map_err(|e| io_err("read_dir", dir, e))?;
    for name in names {
        let Some(start) = parse_seg_name(&name) else {
            continue;
        };
        let path = dir.join(&name);
        let f = st
            .open(&path, OpenMode::Read)
            .map_err(|e| io_err("open", &path, e))?;
        let file_len = f.size().map_err(|e| io_err("stat", &path, e))?;
        let mut hb = vec![0u8; SEG_HEADER.min(file_len) as usize];
        f.read_exact_at(&mut hb, 0)
            .map_err(|e| io_err("read", &path, e))?;
        let parsed = SegHeader::decode(&hb).and_then(|hdr| {
            if hdr.start != start {
                return Err(format!("header start {} != file name", hdr.start));
            }
            Ok(SegFile {
                hdr,
                path: path.clone(),
                data_len: (file_len - SEG_HEADER).min(hdr.cap),
            })
        });
        out.push(Listed {
            name_start: start,
            path,
            file_len,
            parsed,
        });
    }
    out.sort_by_key(|l| l.name_start);
    Ok(out)
}

/// Random access to the logical stream over a contiguous chain of segments,
/// with a 1 MiB read cache (recovery reads records sequentially).
pub(crate) struct Stream {
    storage: Arc<dyn Storage>,
    segs: Vec<SegFile>,
    cache_seg: usize,
    cache_off: u64,
    cache: Vec<u8>,
    file: Option<(usize, Arc<dyn LogFile>)>,
}

const CACHE: u64 = 1 << 20;

impl Stream {
    pub fn new(storage: Arc<dyn Storage>, segs: Vec<SegFile>) -> Self {
        Stream {
            storage,
            segs,
            cache_seg: usize::MAX,
            cache_off: 0,
            cache: Vec::new(),
            file: None,
        }
    }

    pub fn segs(&self) -> &[SegFile] {
        &self.segs
    }

    /// "segment <file> offset <n>": where stream byte `pos` is on disk.
    pub fn describe(&self, pos: Lsn) -> String {
        let i = self.segs.partition_point(|s| s.start() <= pos);
        match i.checked_sub(1).map(|i| &self.segs[i]) {
            Some(s) => format!(
                "segment {} offset {}",
                s.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                SEG_HEADER + pos - s.start()
            ),
            None => format!("LSN {pos} before the first segment"),
        }
    }

    /// One past the last stream byte present on disk.
    pub fn end(&self) -> Lsn {
        self.segs
            .last()
            .map(|s| s.start() + s.data_len)
            .unwrap_or(0)
    }

    fn seg_of(&self, pos: Lsn) -> Option<usize> {
        let i = self.segs.partition_point(|s| s.start() <= pos);
        if i == 0 {
            return None;
        }
        let s = &self.segs[i - 1];
        (pos < s.end_cap()).then_some(i - 1)
    }

    /// Fills `out` with the stream bytes at `pos`; `Ok(false)` if any are missing.
    pub fn read(&mut self, mut pos: Lsn, out: &mut [u8]) -> Result<bool, LogError> {
        let mut done = 0;
        while done < out.len() {
            let Some(si) = self.seg_of(pos) else {
                return Ok(false);
            };
            let off = pos - self.segs[si].start();
            if off >= self.segs[si].data_len {
                return Ok(false);
            }
            let in_cache = self.cache_seg == si
                && off >= self.cache_off
                && off < self.cache_off + self.cache.len() as u64;
            if !in_cache {
                self.fill(si, off)?;
            }
            let c = (off - self.cache_off) as usize;
            let n = (self.cache.len() - c).min(out.len() - done);
            out[done..done + n].copy_from_slice(&self.cache[c..c + n]);
            done += n;
            pos += n as u64;
        }
        Ok(true)
    }

    fn fill(&mut self, si: usize, off: u64) -> Result<(), LogError> {
        if self.file.as_ref().map(|(i, _)| *i) != Some(si) {
            let p = &self.segs[si].path;
            let f = self
                .storage
                .open(p, OpenMode::Read)
                .map_err(|e| io_err("open", p, e))?;
            self.file = Some((si, f));
        }
        let n = CACHE.min(self.segs[si].data_len - off) as usize;
        self.cache.resize(n, 0);
        let (_, f) = self.file.as_ref().expect("opened above");
        f.read_exact_at(&mut self.cache, SEG_HEADER + off)
            .map_err(|e| io_err("read", &self.segs[si].path, e))?;
        self.cache_seg = si;
        self.cache_off = off;
        Ok(())
    }
}

pub(crate) enum Probe {
    /// `pos` is exactly the end of the data on disk.
    End,
    /// Not an intact record (short, zeroed, bad length or checksum).
    Bad(String),
    Good {
        pad: bool,
        payload: Vec<u8>,
    },
}

impl Probe {
    pub fn next(pos: Lsn, payload: &[u8]) -> Lsn {
        pos + REC_HEADER as u64 + payload.len() as u64
    }
}

pub(crate) fn probe(s: &mut Stream, pos: Lsn) -> Result<Probe, LogError> {
    let end = s.end();
    if pos == end {
        return Ok(Probe::End);
    }
    let mut h = [0u8; REC_HEADER];
    if !s.read(pos, &mut h)? {
        return Ok(Probe::Bad("short record header".into()));
    }
    let len_field = u32::from_le_bytes(h[0..4].try_into().expect("4 bytes"));
    let crc = u32::from_le_bytes(h[4..8].try_into().expect("4 bytes"));
    if len_field == 0 && crc == 0 {
        return Ok(Probe::Bad("zeroed record header".into()));
    }
    let len = (len_field & !PAD_FLAG) as u64;
    if len == 0 {
        return Ok(Probe::Bad("zero-length record".into()));
    }
    if pos + REC_HEADER as u64 + len > end {
        return Ok(Probe::Bad(format!(
            "record of {len} bytes runs past the end of the log"
        )));
    }
    let mut payload = vec![0u8; len as usize];
    if !s.read(pos + REC_HEADER as u64, &mut payload)? {
        return Ok(Probe::Bad("record data missing".into()));
    }
    if record_crc(pos, len_field, &payload) != crc {
        return Ok(Probe::Bad("checksum mismatch".into()));
    }
    Ok(Probe::Good {
        pad: len_field & PAD_FLAG != 0,
        payload,
    })
}

/// After a bad record at `bad`: is there an intact record anywhere later? A hit
/// must be followed by another intact record or by nothing but zeros up to the
/// end of the data (the last record before the preallocated rest), so that
/// random bytes matching a CRC (2^-32) are not enough.
pub(crate) fn resync(s: &mut Stream, bad: Lsn) -> Result<Option<Lsn>, LogError> {
    let end = s.end();
    let mut q = bad + 1;
    let mut h = [0u8; REC_HEADER];
    while q + (REC_HEADER as u64) < end {
        if s.read(q, &mut h)? {
            let len = (u32::from_le_bytes(h[0..4].try_into().expect("4 bytes")) & !PAD_FLAG) as u64;
            if len > 0 && q + REC_HEADER as u64 + len <= end {
                if let Probe::Good { payload, .. } = probe(s, q)? {
                    let n = Probe::next(q, &payload);
                    // Zeros after it are the preallocated end of the data.
                    if matches!(probe(s, n)?, Probe::Good { .. }) || all_zero(s, n, end)? {
                        return Ok(Some(q));
                    }
                }
            }
        }
        q += 1;
    }
    Ok(None)
}

/// Name of the segment being zero-filled ahead of use (not a `log-*.seg`
/// name, so recovery ignores it and deletes it).
pub(crate) const PREP_NAME: &str = "log-prepare.tmp";

/// Writes zeros over `[from, to)` of `f`.
pub(crate) fn zero_fill(
    f: &dyn LogFile,
    mut from: u64,
    to: u64,
    stop: impl Fn() -> bool,
) -> std::io::Result<bool> {
    let zeros = vec![0u8; 1 << 20];
    while from < to {
        if stop() {
            return Ok(false);
        }
        let n = (to - from).min(zeros.len() as u64) as usize;
        f.write_all_at(&zeros[..n], from)?;
        from += n as u64;
    }
    Ok(true)
}

/// Segments a checkpoint made unnecessary wait under `log-spare-<start>.tmp`
/// (not a `log-*.seg` name: recovery never reads them) to become the next
/// prepared segment. Zeroing a file whose pages are still in the page cache
/// costs ~4 ms of CPU per 64 MiB here; filling a new file costs ~150 ms,
/// because every page the kernel hands out for it first faults in memory
/// the hypervisor had taken back (free page reporting). InnoDB reuses its
/// redo files for the same kind of reason.
pub(crate) fn spare_name(start: Lsn) -> String {
    format!("log-spare-{start:020}.tmp")
}

/// At most this many spare segments are kept; a checkpoint's further
/// dropped segments are deleted.
pub(crate) const MAX_SPARES: usize = 16;

/// The spare segments in `dir`, oldest first.
pub(crate) fn spares(st: &dyn Storage, dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = st
        .list(dir)
        .into_iter()
        .flatten()
        .filter(|n| n.starts_with("log-spare-") && n.ends_with(".tmp"))
        .map(|n| dir.join(n))
        .collect();
    v.sort();
    v
}

/// Creates a zero-filled, fsynced file of a whole segment's size, reusing a
/// spare segment when there is one. Appending to a growing file makes every
/// fdatasync also commit the new file size (a journal write: ~3-4x slower
/// here); overwriting preallocated zeros does not. This is why InnoDB
/// pre-creates its redo files. `None` if `stop` fired.
pub(crate) fn prepare_segment(
    st: &dyn Storage,
    dir: &Path,
    cap: u64,
    stop: impl Fn() -> bool,
) -> Result<Option<Arc<dyn LogFile>>, LogError> {
    let path = dir.join(PREP_NAME);
    // A spare keeps its blocks and cached pages; it is zeroed below like a
    // new file, so recovery sees a prepared segment either way.
    let recycled = spares(st, dir)
        .iter()
        .any(|spare| st.rename(spare, &path).is_ok());
    let mode = if recycled {
        OpenMode::CreateKeep
    } else {
        OpenMode::CreateTruncate
    };
    let f = st
        .open(&path, mode)
        .map_err(|e| io_err("create", &path, e))?;
    if recycled {
        // A spare from a run with another segment size.
        f.set_len(SEG_HEADER + cap)
            .map_err(|e| io_err("truncate", &path, e))?;
    }
    // On any failure the partial file goes, so it does not hold the space.
    let filled = zero_fill(&*f, 0, SEG_HEADER + cap, stop)
        .and_then(|done| f.sync_all().map(|()| done))
        .map_err(|e| {
            let _ = st.remove(&path);
            io_err("write", &path, e)
        })?;
    if !filled {
        let _ = st.remove(&path);
        return Ok(None);
    }
    Ok(Some(f))
}

/// Turns the prepared file into segment `hdr.start` (caller syncs the dir);
/// one fsync, for the header.
pub(crate) fn install_prepared(
    st: &dyn Storage,
    dir: &Path,
    f: Arc<dyn LogFile>,
    hdr: SegHeader,
) -> Result<Arc<dyn LogFile>, LogError> {
    let from = dir.join(PREP_NAME);
    let to = dir.join(seg_name(hdr.start));
    f.write_all_at(&hdr.encode(), 0)
        .map_err(|e| io_err("write", &from, e))?;
    // The header is durable before the name: after a power loss the newest
    // segment must not be a durable name over a zeroed header (recovery
    // would refuse it as a bad segment).
    f.sync_data().map_err(|e| io_err("fsync", &from, e))?;
    st.rename(&from, &to)
        .map_err(|e| io_err("rename", &to, e))?;
    Ok(f)
}

/// One past the last non-zero stream byte in `[p, end)` (`p` if none): how
/// much real data a dropped tail held, not counting preallocated zeros.
pub(crate) fn nonzero_end(s: &mut Stream, mut p: Lsn, end: Lsn) -> Result<Lsn, LogError> {
    let mut buf = vec![0u8; 1 << 16];
    let mut last = p;
    while p < end {
        let n = (end - p).min(buf.len() as u64) as usize;
        if !s.read(p, &mut buf[..n])? {
            break;
        }
        if let Some(i) = buf[..n].iter().rposition(|&b| b != 0) {
            last = p + i as u64 + 1;
        }
        p += n as u64;
    }
    Ok(last)
}

/// Whether every stream byte in `[p, end)` is zero (preallocated, never written).
pub(crate) fn all_zero(s: &mut Stream, mut p: Lsn, end: Lsn) -> Result<bool, LogError> {
    let mut buf = vec![0u8; 1 << 16];
    while p < end {
        let n = (end - p).min(buf.len() as u64) as usize;
        if !s.read(p, &mut buf[..n])? {
            return Ok(false);
        }
        if buf[..n].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        p += n as u64;
    }
    Ok(true)
}

pub(crate) fn sync_dir(st: &dyn Storage, dir: &Path) -> Result<(), LogError> {
    st.sync_dir(dir).map_err(|e| io_err("fsync dir", dir, e))
}

/// Reads one segment file on its own (like mysqlbinlog): yields every record
/// that STARTS in this segment. The tail of a record that straddles into the
/// next segment is read from the next file in the same directory, if present.
pub struct SegmentReader {
    stream: Stream,
    pos: Lsn,
    limit: Lsn,
    done: bool,
}

impl SegmentReader {
    /// Reads a segment file on disk.
    pub fn open(path: &Path) -> Result<Self, LogError> {
        SegmentReader::open_in(Arc::new(OsStorage::new()), path)
    }

    /// Reads a segment file in `storage`.
    pub fn open_in(storage: Arc<dyn Storage>, path: &Path) -> Result<Self, LogError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let f = storage
            .open(path, OpenMode::Read)
            .map_err(|e| io_err("open", path, e))?;
        let file_len = f.size().map_err(|e| io_err("stat", path, e))?;
        let mut hb = vec![0u8; SEG_HEADER.min(file_len) as usize];
        f.read_exact_at(&mut hb, 0)
            .map_err(|e| io_err("read", path, e))?;
        let hdr = SegHeader::decode(&hb).map_err(|reason| LogError::BadSegment {
            path: path.to_path_buf(),
            reason,
        })?;
        let mut chain = vec![SegFile {
            hdr,
            path: path.to_path_buf(),
            data_len: (file_len - SEG_HEADER).min(hdr.cap),
        }];
        // Follow-on segments, only for the continuation of a straddling record.
        let mut next = hdr.start + hdr.cap;
        if let Ok(listed) = list_segments(&*storage, dir) {
            for l in listed {
                match l.parsed {
                    Ok(sf)
                        if sf.start() == next
                            && chain.last().unwrap().data_len == chain.last().unwrap().hdr.cap =>
                    {
                        next = sf.end_cap();
                        chain.push(sf);
                    }
                    _ => {}
                }
            }
        }
        Ok(SegmentReader {
            stream: Stream::new(storage, chain),
            pos: hdr.first_rec,
            limit: hdr.start + hdr.cap,
            done: hdr.first_rec == NO_RECORD,
        })
    }
}

impl Iterator for SegmentReader {
    type Item = Result<(Lsn, Vec<u8>), LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done && self.pos < self.limit {
            let pos = self.pos;
            match probe(&mut self.stream, pos) {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(Probe::End) => self.done = true,
                Ok(Probe::Good { pad, payload }) => {
                    self.pos = Probe::next(pos, &payload);
                    if !pad {
                        return Some(Ok((pos, payload)));
                    }
                }
                Ok(Probe::Bad(reason)) => {
                    self.done = true;
                    let end = self.stream.end();
                    match all_zero(&mut self.stream, pos, end) {
                        Ok(true) => return None,
                        Ok(false) => {}
                        Err(e) => return Some(Err(e)),
                    }
                    // A torn tail is a clean end; damage followed by intact
                    // records is reported.
                    return match resync(&mut self.stream, pos) {
                        Ok(Some(next_good)) => Some(Err(LogError::CorruptMiddle {
                            lsn: pos,
                            where_: self.stream.describe(pos),
                            next_good,
                            reason,
                        })),
                        Ok(None) => None,
                        Err(e) => Some(Err(e)),
                    };
                }
            }
        }
        None
    }
}
