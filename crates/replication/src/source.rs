//! The source's driver for one dump connection: reads its own log from the
//! oldest record on, feeds the `Sender`, and waits on the log's tail with a
//! heartbeat timer. Blocking file reads happen in batches of `BATCH` bytes.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lockstep_binlog::{GtidSet, TxnRecord};
use lockstep_engine::Engine;
use lockstep_log::Lsn;
use lockstep_protocol::BinlogDump;
use lockstep_types::error::Code;
use lockstep_types::Error;

use crate::mysql_dump::{self, ClientVars, Start};
use crate::sender::{check_purged, Sender};
use crate::wire::{DumpRequest, COM_BINLOG_DUMP, NATIVE_STREAM};

const BATCH: usize = 1 << 20;
pub const HEARTBEAT: Duration = Duration::from_millis(500);

pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

fn fatal(msg: impl Into<String>) -> Error {
    Error::new(Code::SourceFatalReadingBinlog, msg.into())
}

pub struct SourceDump {
    engine: Arc<Engine>,
    sender: Sender,
    /// None until the log was checked to cover the replica (`start`).
    pos: Option<Lsn>,
    replica: GtidSet,
    queue: VecDeque<Vec<u8>>,
    /// A semisync replica's id with the engine's `SemiSync`.
    semisync: Option<u64>,
}

impl Drop for SourceDump {
    fn drop(&mut self) {
        if let Some(id) = self.semisync {
            self.engine.semisync.unregister(id);
        }
    }
}

/// `start_dump` for a replica that asked for semisync (MySQL's `SET
/// @rpl_semi_sync_replica = 1` before the dump): it acknowledges what it
/// relays, and commits wait for that while rpl_semi_sync_source_enabled.
pub fn start_semisync_dump(
    engine: Arc<Engine>,
    command: u8,
    body: &[u8],
    client: ClientVars,
) -> Result<Box<dyn BinlogDump>, Error> {
    if command != COM_BINLOG_DUMP {
        let req = DumpRequest::decode_body(body).map_err(fatal)?;
        if req.binlog_name == NATIVE_STREAM {
            let id = engine.semisync.register();
            return Ok(Box::new(SourceDump::new(engine, req, Some(id))));
        }
    }
    mysql_stream(engine, command, body, client, true)
}

impl SourceDump {
    fn new(engine: Arc<Engine>, req: DumpRequest, semisync: Option<u64>) -> SourceDump {
        SourceDump {
            sender: Sender::new(req.executed.clone(), now_us(), HEARTBEAT.as_micros() as u64),
            engine,
            pos: None,
            replica: req.executed,
            queue: VecDeque::new(),
            semisync,
        }
    }
}

/// Starts serving a COM_BINLOG_DUMP_GTID (or, `command` 0x12,
/// COM_BINLOG_DUMP) request body. A lockstep replica names the binlog
/// file `NATIVE_STREAM`; any other request gets MySQL binlog events.
pub fn start_dump(
    engine: Arc<Engine>,
    command: u8,
    body: &[u8],
    client: ClientVars,
) -> Result<Box<dyn BinlogDump>, Error> {
    if command != COM_BINLOG_DUMP {
        let req = DumpRequest::decode_body(body).map_err(fatal)?;
        if req.binlog_name == NATIVE_STREAM {
            return Ok(Box::new(SourceDump::new(engine, req, None)));
        }
    }
    mysql_stream(engine, command, body, client, false)
}

/// The MySQL-format stream, from a position (COM_BINLOG_DUMP) or after
/// a GTID set (COM_BINLOG_DUMP_GTID).
fn mysql_stream(
    engine: Arc<Engine>,
    command: u8,
    body: &[u8],
    client: ClientVars,
    semisync: bool,
) -> Result<Box<dyn BinlogDump>, Error> {
    let opts = |start, flags: u16| mysql_dump::Options {
        start,
        checksum: client.checksum,
        heartbeat: mysql_dump::heartbeat_period(client.heartbeat_ns),
        non_block: flags & 1 != 0,
        semisync,
    };
    if command == COM_BINLOG_DUMP {
        let (pos, flags, _) = mysql_dump::parse_dump(body)?;
        return Ok(mysql_dump::start(engine, opts(Start::Position(pos), flags)));
    }
    let req = DumpRequest::decode_body(body).map_err(fatal)?;
    let flags = u16::from_le_bytes([body[0], body[1]]);
    Ok(mysql_dump::start(
        engine,
        opts(Start::Gtid(req.executed), flags),
    ))
}

/// Where to start reading: the oldest record, after checking that every
/// GTID no longer in the log is on the replica (else 1236); and those
/// GTIDs (the ones before the log's first record).
pub(crate) fn check_log_covers(
    engine: &Engine,
    replica: &GtidSet,
) -> Result<(Lsn, GtidSet), Error> {
    let (executed, end) = engine.executed_with_lsn();
    let log = &engine.log;
    let first = log.first_record_lsn().map_err(|e| fatal(e.to_string()))?;
    let Some(first) = first else {
        // No record on disk yet: everything executed is "purged" unless
        // nothing was ever executed.
        return check_purged(&executed, replica)
            .map(|_| (end, executed))
            .map_err(fatal);
    };
    let mut in_log = GtidSet::default();
    let mut pos = first;
    while pos < end {
        let batch = log
            .read_durable(pos, BATCH)
            .map_err(|e| fatal(e.to_string()))?;
        if batch.records.is_empty() {
            // Not durable yet: the rest of `executed` is in the log's tail.
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        for (_, r) in &batch.records {
            if let Some(g) = TxnRecord::peek_gtid(r) {
                in_log.insert(g);
            }
        }
        pos = batch.next;
    }
    let previous = executed.minus(&in_log);
    check_purged(&previous, replica).map_err(fatal)?;
    Ok((first, previous))
}

impl SourceDump {
    /// Where to start: the whole log is scanned for the GTIDs it holds, on
    /// a blocking thread (a large log takes a while to read).
    async fn start(&mut self) -> Result<Lsn, Error> {
        let (engine, replica) = (self.engine.clone(), self.replica.clone());
        tokio::task::spawn_blocking(move || check_log_covers(&engine, &replica))
            .await
            .map_err(|e| fatal(format!("reading the log: {e}")))?
            .map(|(first, _)| first)
    }

    async fn next_event(&mut self) -> Result<Vec<u8>, Error> {
        let mut pos = match self.pos {
            Some(p) => p,
            None => self.start().await?,
        };
        self.pos = Some(pos);
        loop {
            if let Some(ev) = self.queue.pop_front() {
                return Ok(ev);
            }
            let batch = self
                .engine
                .log
                .read_durable(pos, BATCH)
                .map_err(|e| fatal(e.to_string()))?;
            if !batch.records.is_empty() {
                pos = batch.next;
                self.pos = Some(pos);
                let acked = self.sender.acked();
                let events = self.sender.on_records(batch.records, now_us());
                self.queue.extend(events.iter().map(|e| e.encode()));
                if self.sender.acked() > acked {
                    self.note_acked(self.sender.acked());
                }
                continue;
            }
            let wait = self.engine.log.wait_beyond(pos);
            let timed_out = tokio::time::timeout(HEARTBEAT, wait).await.is_err();
            if !timed_out && self.engine.log.durable_lsn() <= pos {
                // Acknowledged but not yet on disk (flush modes 0 and 2).
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if let Some(hb) = self.sender.on_tick(now_us()) {
                return Ok(hb.encode());
            }
        }
    }
}

impl SourceDump {
    /// The replica has the log before `lsn` (semisync only).
    fn note_acked(&self, lsn: Lsn) {
        if let Some(id) = self.semisync {
            self.engine.semisync.ack(id, lsn);
        }
    }
}

impl BinlogDump for SourceDump {
    fn next(&mut self) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, Error>> + Send + '_>> {
        Box::pin(self.next_event())
    }

    fn on_reply(&mut self, payload: &[u8]) -> Result<(), Error> {
        let ack = crate::wire::Ack::decode(payload).map_err(fatal)?;
        if let Some(lsn) = self.sender.on_ack(ack.lsn).map_err(fatal)? {
            self.note_acked(lsn);
        }
        Ok(())
    }
}
