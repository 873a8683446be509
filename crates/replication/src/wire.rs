//! What travels between source and replica. The request is MySQL's
//! COM_BINLOG_DUMP_GTID (flags, server_id, binlog name, position, and the
//! replica's GTID set in MySQL's binary encoding). The events are, for
//! now, lockstep's own: a type byte outside MySQL's event numbers, then a
//! lockstep `TxnRecord` as the log holds it, or a heartbeat. A replica asks
//! for this stream by naming the binlog file `NATIVE_STREAM`; a request
//! without that name is left for the MySQL-format stream (later work).

use lockstep_binlog::GtidSet;
use lockstep_log::Lsn;

/// The binlog file name a lockstep replica sends to ask for TxnRecords.
pub const NATIVE_STREAM: &str = "lockstep-txnrecord-v1";
/// COM_BINLOG_DUMP_GTID's command byte.
pub const COM_BINLOG_DUMP_GTID: u8 = 0x1e;
/// COM_BINLOG_DUMP's (file and position) command byte.
pub const COM_BINLOG_DUMP: u8 = 0x12;
/// Flag: the position is given by the GTID set (MySQL's
/// BINLOG_THROUGH_GTID).
const THROUGH_GTID: u16 = 0x04;

/// The first byte of a semisync reply packet (MySQL's
/// ReplSemiSyncBase::kPacketMagicNum).
pub const SEMISYNC_MAGIC: u8 = 0xef;

const EV_TXN: u8 = 0xa0;
const EV_HEARTBEAT: u8 = 0xa1;
/// `prev` of the first record of a connection.
const NO_PREV: u64 = u64::MAX;

/// A parsed dump request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpRequest {
    pub server_id: u32,
    pub binlog_name: String,
    pub executed: GtidSet,
}

/// One event of the native stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A record at source position `lsn`; `prev` is the position of the
    /// record sent before it on this connection (None: the first), so the
    /// receiver can tell a gap or a repeat from the next record.
    Txn {
        prev: Option<Lsn>,
        lsn: Lsn,
        record: Vec<u8>,
    },
    /// Nothing to send: the source is alive; its clock, for lag.
    Heartbeat { source_time_us: u64 },
}

impl DumpRequest {
    /// The payload after the command byte.
    pub fn encode_body(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(&THROUGH_GTID.to_le_bytes());
        o.extend_from_slice(&self.server_id.to_le_bytes());
        o.extend_from_slice(&(self.binlog_name.len() as u32).to_le_bytes());
        o.extend_from_slice(self.binlog_name.as_bytes());
        o.extend_from_slice(&4u64.to_le_bytes());
        let set = encode_gtid_set(&self.executed);
        o.extend_from_slice(&(set.len() as u32).to_le_bytes());
        o.extend_from_slice(&set);
        o
    }

    pub fn decode_body(b: &[u8]) -> Result<DumpRequest, String> {
        let mut c = Reader(b);
        let _flags = c.u16()?;
        let server_id = c.u32()?;
        let n = c.u32()? as usize;
        let name = String::from_utf8_lossy(c.take(n)?).into_owned();
        let _pos = c.u64()?;
        let n = c.u32()? as usize;
        let executed = decode_gtid_set(c.take(n)?)?;
        Ok(DumpRequest {
            server_id,
            binlog_name: name,
            executed,
        })
    }
}

/// A semisync replica's reply on the dump connection, laid out as
/// MySQL's (magic byte, 8-byte position, binlog name): the source log
/// position before which everything is in its relay log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub lsn: Lsn,
}

impl Ack {
    pub fn encode(&self) -> Vec<u8> {
        let mut o = vec![SEMISYNC_MAGIC];
        o.extend_from_slice(&self.lsn.to_le_bytes());
        o.extend_from_slice(NATIVE_STREAM.as_bytes());
        o
    }

    pub fn decode(b: &[u8]) -> Result<Ack, String> {
        let mut c = Reader(b);
        if c.u8()? != SEMISYNC_MAGIC {
            return Err("not a semisync reply packet".into());
        }
        Ok(Ack { lsn: c.u64()? })
    }
}

impl Event {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Event::Txn { prev, lsn, record } => {
                let mut o = Vec::with_capacity(17 + record.len());
                o.push(EV_TXN);
                o.extend_from_slice(&prev.unwrap_or(NO_PREV).to_le_bytes());
                o.extend_from_slice(&lsn.to_le_bytes());
                o.extend_from_slice(record);
                o
            }
            Event::Heartbeat { source_time_us } => {
                let mut o = vec![EV_HEARTBEAT];
                o.extend_from_slice(&source_time_us.to_le_bytes());
                o
            }
        }
    }

    pub fn decode(b: &[u8]) -> Result<Event, String> {
        let mut c = Reader(b);
        match c.u8()? {
            EV_TXN => {
                let prev = c.u64()?;
                let lsn = c.u64()?;
                Ok(Event::Txn {
                    prev: (prev != NO_PREV).then_some(prev),
                    lsn,
                    record: c.0.to_vec(),
                })
            }
            EV_HEARTBEAT => Ok(Event::Heartbeat {
                source_time_us: c.u64()?,
            }),
            t => Err(format!(
                "unknown event type {t:#x} in the replication stream"
            )),
        }
    }
}

/// MySQL's binary GTID set: n_sids, then per source its uuid, n_intervals
/// and [start, end) pairs.
pub fn encode_gtid_set(set: &GtidSet) -> Vec<u8> {
    lockstep_binlog::mysql::gtid_set_body(set)
}

pub fn decode_gtid_set(b: &[u8]) -> Result<GtidSet, String> {
    let mut c = Reader(b);
    let mut set = GtidSet::default();
    if b.is_empty() {
        return Ok(set);
    }
    for _ in 0..c.u64()? {
        let uuid: [u8; 16] = c.take(16)?.try_into().expect("16 bytes");
        for _ in 0..c.u64()? {
            let (lo, end) = (c.u64()?, c.u64()?);
            if lo == 0 || end <= lo {
                return Err("malformed GTID interval".into());
            }
            set.insert_range(uuid, lo, end - 1);
        }
    }
    Ok(set)
}

/// A cursor that fails instead of panicking on short input.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("truncated replication packet".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_events_round_trip() {
        let mut executed = GtidSet::default();
        executed.insert_range([7; 16], 1, 10);
        executed.insert_range([9; 16], 3, 3);
        let req = DumpRequest {
            server_id: 2,
            binlog_name: NATIVE_STREAM.into(),
            executed,
        };
        assert_eq!(DumpRequest::decode_body(&req.encode_body()), Ok(req));
        for ev in [
            Event::Txn {
                prev: None,
                lsn: 0,
                record: vec![1, 2, 3],
            },
            Event::Txn {
                prev: Some(5),
                lsn: 90,
                record: vec![],
            },
            Event::Heartbeat { source_time_us: 42 },
        ] {
            assert_eq!(Event::decode(&ev.encode()), Ok(ev));
        }
        assert!(
            Event::decode(&[EV_TXN, 1]).is_err(),
            "short input is an error"
        );
        assert!(DumpRequest::decode_body(&[1, 2, 3]).is_err());
        let ack = Ack { lsn: 1234 };
        assert_eq!(Ack::decode(&ack.encode()), Ok(ack));
        assert!(Ack::decode(&[SEMISYNC_MAGIC, 1]).is_err());
        assert!(Ack::decode(&[0x00; 9]).is_err());
    }
}
