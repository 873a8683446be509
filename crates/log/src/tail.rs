//! Reading the log while it is being written: a replication source sends
//! its records from a position onwards and then follows the tail (book
//! 9.4.4). Only durable bytes are read, so a record is never sent before it
//! is on the source's disk, and a torn or half-copied record is never seen.

use crate::format::{
    self, probe, Probe, SegFile, SegHeader, Stream, NO_RECORD, PAD_FLAG, REC_HEADER, SEG_HEADER,
};
use crate::storage::OpenMode;
use crate::{Log, LogError, Lsn};

/// What one `read_durable` call found.
#[derive(Debug, Default)]
pub struct Batch {
    /// Records (start LSN, payload) in log order; padding is skipped.
    pub records: Vec<(Lsn, Vec<u8>)>,
    /// Where the next read starts.
    pub next: Lsn,
}

impl Log {
    /// LSN of the oldest record still on disk (None: no record yet). The
    /// records before it were dropped by a checkpoint.
    pub fn first_record_lsn(&self) -> Result<Option<Lsn>, LogError> {
        let s = &*self.shared;
        let segs = s.segments.lock().clone();
        for (_, _, path) in segs {
            let f = s
                .storage
                .open(&path, OpenMode::Read)
                .map_err(|e| format::io_err("open", &path, e))?;
            let mut hb = [0u8; SEG_HEADER as usize];
            f.read_exact_at(&mut hb, 0)
                .map_err(|e| format::io_err("read", &path, e))?;
            let hdr =
                SegHeader::decode(&hb).map_err(|reason| LogError::BadSegment { path, reason })?;
            if hdr.first_rec != NO_RECORD {
                return Ok((hdr.first_rec < self.durable_lsn()).then_some(hdr.first_rec));
            }
        }
        Ok(None)
    }

    /// Durable records starting at `from` (a record boundary), up to about
    /// `max_bytes` of payload (at least one record when there is one).
    /// `from` below the oldest segment is an error: those records are gone.
    pub fn read_durable(&self, from: Lsn, max_bytes: usize) -> Result<Batch, LogError> {
        let durable = self.durable_lsn();
        let mut out = Batch {
            records: Vec::new(),
            next: from,
        };
        if from >= durable {
            return Ok(out);
        }
        let mut stream = self.durable_stream(durable);
        if stream.segs().first().is_none_or(|s| s.start() > from) {
            return Err(LogError::BadSegment {
                path: self.shared.cfg.dir.clone(),
                reason: format!("LSN {from} was removed by a checkpoint"),
            });
        }
        let mut bytes = 0;
        while out.next < durable && bytes < max_bytes.max(1) {
            match probe(&mut stream, out.next)? {
                Probe::End => break,
                Probe::Good { pad, payload } => {
                    let at = out.next;
                    out.next = Probe::next(at, &payload);
                    if !pad {
                        bytes += payload.len();
                        out.records.push((at, payload));
                    }
                }
                // A record larger than what one flush writes is durable
                // in parts: the reader waits for the rest (`wait_beyond`).
                Probe::Bad(_) if incomplete_end(&mut stream, out.next, durable)?.is_some() => break,
                Probe::Bad(reason) => {
                    return Err(LogError::CorruptMiddle {
                        lsn: out.next,
                        where_: stream.describe(out.next),
                        next_good: durable,
                        reason,
                    })
                }
            }
        }
        debug_assert!(out.next <= durable, "read past the durable LSN");
        Ok(out)
    }

    /// The segments as a stream that ends at `durable`.
    fn durable_stream(&self, durable: Lsn) -> Stream {
        let s = &*self.shared;
        let segs = s.segments.lock().clone();
        let files = segs
            .into_iter()
            .filter(|(start, _, _)| *start < durable)
            .map(|(start, cap, path)| SegFile {
                hdr: SegHeader {
                    start,
                    cap,
                    first_rec: NO_RECORD,
                },
                path,
                data_len: cap.min(durable - start),
            })
            .collect();
        Stream::new(s.storage.clone(), files)
    }

    /// Resolves once the log has acknowledged a byte beyond `pos` (or
    /// failed), or, when the record at `pos` is durable only in part,
    /// once all of it is; the caller bounds the wait with its own timer.
    pub fn wait_beyond(&self, pos: Lsn) -> crate::DurableFuture<'_> {
        let durable = self.durable_lsn();
        if durable > pos {
            let mut stream = self.durable_stream(durable);
            if let Ok(Some(end)) = incomplete_end(&mut stream, pos, durable) {
                return self.wait_durable(end);
            }
        }
        self.wait_durable(pos + 1)
    }
}

/// The end of the record at `pos` when it runs past `durable` (only
/// part of it is on disk yet): its header's end if the header itself is
/// cut, else the end its length gives.
fn incomplete_end(stream: &mut Stream, pos: Lsn, durable: Lsn) -> Result<Option<Lsn>, LogError> {
    let header_end = pos + REC_HEADER as u64;
    if header_end > durable {
        return Ok(Some(header_end));
    }
    let mut h = [0u8; REC_HEADER];
    if !stream.read(pos, &mut h)? {
        return Ok(None);
    }
    let len = u32::from_le_bytes(h[0..4].try_into().expect("4 bytes")) & !PAD_FLAG;
    let end = header_end + len as u64;
    Ok((len > 0 && end > durable).then_some(end))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use crate::{FlushMode, Log, LogConfig, MemStorage};

    fn open(storage: &Arc<MemStorage>) -> Log {
        let cfg = LogConfig {
            dir: PathBuf::from("/mem/tail"),
            buffer_size: 1 << 16,
            segment_size: 4096,
            flush_mode: FlushMode::EveryCommit,
        };
        Log::open_with(cfg, storage.clone(), 0).expect("open").0
    }

    #[test]
    fn reads_durable_records_across_segments_in_batches() {
        let storage = Arc::new(MemStorage::new());
        let log = open(&storage);
        let payloads: Vec<Vec<u8>> = (0..200u32)
            .map(|i| vec![i as u8; 10 + i as usize])
            .collect();
        let mut end = 0;
        for p in &payloads {
            end = log.append(p).unwrap();
        }
        log.wait_durable_blocking(end).unwrap();
        let first = log.first_record_lsn().unwrap().expect("records");
        let (mut pos, mut seen) = (first, Vec::new());
        loop {
            let batch = log.read_durable(pos, 1000).unwrap();
            if batch.records.is_empty() {
                break;
            }
            assert!(batch.records.len() < payloads.len(), "batched");
            seen.extend(batch.records.into_iter().map(|(_, p)| p));
            pos = batch.next;
        }
        assert_eq!(seen, payloads);
        assert_eq!(pos, end);
        // Nothing new: the wait resolves only once a new record is durable.
        let end2 = log.append(b"later").unwrap();
        log.wait_durable_blocking(end2).unwrap();
        let batch = log.read_durable(pos, 1000).unwrap();
        assert_eq!(batch.records[0].1, b"later");
        log.truncate_before(end2).unwrap();
        assert!(
            log.read_durable(first, 10).is_err(),
            "removed records are refused"
        );
    }

    /// A record larger than the log buffer becomes durable in parts: a
    /// reader following the tail meanwhile sees nothing (never an error)
    /// and gets the whole record once it is all on disk.
    #[test]
    fn a_record_durable_in_parts_is_read_whole() {
        let storage = Arc::new(MemStorage::new());
        let log = Arc::new(open(&storage));
        let start = log.append(b"first").unwrap();
        log.wait_durable_blocking(start).unwrap();
        let big: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        let writer = {
            let (log, big) = (log.clone(), big.clone());
            std::thread::spawn(move || log.append(&big).unwrap())
        };
        let mut partial = 0;
        let record = loop {
            let batch = log
                .read_durable(start, 1 << 30)
                .expect("no error mid-record");
            if let Some((at, payload)) = batch.records.into_iter().next() {
                assert_eq!(at, start);
                break payload;
            }
            assert_eq!(batch.next, start, "nothing consumed");
            partial += (log.durable_lsn() > start) as u32;
            std::thread::yield_now();
        };
        let end = writer.join().unwrap();
        assert_eq!(record, big);
        assert!(log.durable_lsn() >= end);
        eprintln!("polls with the record durable in part: {partial}");
    }
}
