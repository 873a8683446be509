//! Serves COM_BINLOG_DUMP_GTID / COM_BINLOG_DUMP with MySQL binlog events
//! (`lockstep_binlog::mysql::stream`'s translation of the log), for CDC
//! tools.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use lockstep_binlog::mysql::{self, Header};
use lockstep_binlog::{GtidSet, TxnRecord};
use lockstep_engine::Engine;
use lockstep_log::Lsn;
use lockstep_protocol::BinlogDump;
use lockstep_types::error::Code;
use lockstep_types::Error;

use crate::mysql_semisync::SemiAcks;
use crate::source::check_log_covers;
use lockstep_binlog::mysql::stream::{Translator, FILE_NAME, FIRST_POS};

const BATCH: usize = 1 << 20;

fn fatal(msg: impl Into<String>) -> Error {
    Error::new(Code::SourceFatalReadingBinlog, msg.into())
}

/// Where the client asked to start.
pub enum Start {
    /// COM_BINLOG_DUMP_GTID: everything not in this set.
    Gtid(GtidSet),
    /// COM_BINLOG_DUMP: from this position of `FILE_NAME`.
    Position(u64),
}

/// What the client set on its connection before the dump.
pub struct ClientVars {
    /// @master_binlog_checksum / @source_binlog_checksum = 'CRC32'.
    pub checksum: bool,
    /// @master_heartbeat_period, in nanoseconds.
    pub heartbeat_ns: Option<i64>,
}

pub struct Options {
    pub start: Start,
    pub checksum: bool,
    pub heartbeat: Duration,
    /// BINLOG_DUMP_NON_BLOCK: end with EOF at the log's end.
    pub non_block: bool,
    /// The replica asked for semisync (`mysql_semisync`).
    pub semisync: bool,
}

pub struct MysqlDump {
    engine: Arc<Engine>,
    opts: Options,
    translator: Option<Translator>,
    lsn: Lsn,
    queue: VecDeque<Vec<u8>>,
    done: bool,
    semi: Option<SemiAcks>,
}

/// COM_BINLOG_DUMP's body: position u32, flags u16, server id u32, file.
pub fn parse_dump(body: &[u8]) -> Result<(u64, u16, String), Error> {
    if body.len() < 10 {
        return Err(fatal("malformed COM_BINLOG_DUMP"));
    }
    let pos = u32::from_le_bytes(body[0..4].try_into().expect("4")) as u64;
    let flags = u16::from_le_bytes(body[4..6].try_into().expect("2"));
    let file = String::from_utf8_lossy(&body[10..])
        .trim_end_matches('\0')
        .to_string();
    if !file.is_empty() && file != FILE_NAME {
        return Err(fatal(
            "Could not find first log file name in binary log index file",
        ));
    }
    Ok((pos, flags, file))
}

pub fn start(engine: Arc<Engine>, opts: Options) -> Box<dyn BinlogDump> {
    let semi = opts
        .semisync
        .then(|| SemiAcks::new(engine.semisync.clone()));
    Box::new(MysqlDump {
        engine,
        opts,
        semi,
        translator: None,
        lsn: 0,
        queue: VecDeque::new(),
        done: false,
    })
}

impl MysqlDump {
    /// Queues an event; `last`: it ends a transaction (a semisync
    /// replica acknowledges those).
    fn send(&mut self, ev: Vec<u8>, last: bool) {
        let ev = if self.opts.checksum {
            ev
        } else {
            mysql::strip_checksum(&ev)
        };
        let ev = match &self.semi {
            Some(semi) => semi.wrap(ev, last),
            None => ev,
        };
        self.queue.push_back(ev);
    }

    fn artificial(&self, type_code: u8, body: &[u8], end: u64) -> Vec<u8> {
        let h = Header {
            type_code,
            timestamp: 0,
            server_id: 1,
            flags: mysql::ARTIFICIAL,
        };
        mysql::frame(&h, body, end as u32, true)
    }

    /// The fake ROTATE, the file's first events, and where to read from.
    async fn begin(&mut self) -> Result<(), Error> {
        let replica = match &self.opts.start {
            Start::Gtid(s) => s.clone(),
            Start::Position(_) => self.engine.executed_set(),
        };
        let engine = self.engine.clone();
        let (first, previous) =
            tokio::task::spawn_blocking(move || check_log_covers(&engine, &replica))
                .await
                .map_err(|e| fatal(format!("reading the log: {e}")))??;
        let mut tr = Translator::new(&self.engine.catalog.all_tables(), 1);
        let from = match self.opts.start {
            Start::Position(p) => p.max(FIRST_POS),
            Start::Gtid(_) => FIRST_POS,
        };
        let rotate = mysql::rotate_body(from, FILE_NAME);
        let rotate = self.artificial(mysql::ROTATE, &rotate, 0);
        self.send(rotate, false);
        let head = tr.file_start(&previous);
        if from == FIRST_POS {
            head.into_iter().for_each(|e| self.send(e, false));
        } else {
            // Resuming: the description again, marked as not in the file.
            let fde = mysql::format_description_body(true);
            let fde = self.artificial(mysql::FORMAT_DESCRIPTION, &fde, 0);
            self.send(fde, false);
            if from < tr.pos && from != head[0].len() as u64 + FIRST_POS {
                return Err(Self::not_a_boundary(from));
            }
        }
        self.lsn = first;
        self.translator = Some(tr);
        Ok(())
    }

    fn not_a_boundary(pos: u64) -> Error {
        fatal(format!(
            "Client requested source to start replication from position {pos}, which is not \
             the start of an event group in '{FILE_NAME}'"
        ))
    }

    /// Translates records read from the log, queueing what the client
    /// has not got.
    fn on_records(&mut self, records: Vec<(Lsn, Vec<u8>)>) -> Result<(), Error> {
        for (lsn, bytes) in records {
            let lsn_end = lockstep_log::record_end(lsn, bytes.len());
            let r = TxnRecord::decode(&bytes).map_err(fatal)?;
            let tr = self.translator.as_mut().expect("begun");
            let txn = tr.txn(&r).map_err(fatal)?;
            let end = tr.pos;
            let wanted = match &mut self.opts.start {
                Start::Gtid(have) => have.insert(r.gtid()),
                Start::Position(p) => {
                    if *p > txn.start && *p < end {
                        return Err(Self::not_a_boundary(*p));
                    }
                    txn.start >= *p
                }
            };
            if wanted {
                let n = txn.events.len();
                for (k, e) in txn.events.into_iter().enumerate() {
                    self.send(e, k + 1 == n);
                }
            }
            match self.semi.as_mut() {
                Some(semi) if wanted => semi.sent(end, lsn_end),
                Some(semi) => semi.skipped(lsn_end),
                None => {}
            }
        }
        Ok(())
    }

    async fn next_event(&mut self) -> Result<Vec<u8>, Error> {
        if self.translator.is_none() {
            self.begin().await?;
        }
        loop {
            if let Some(ev) = self.queue.pop_front() {
                return Ok(ev);
            }
            if self.done {
                return Ok(Vec::new());
            }
            let batch = self
                .engine
                .log
                .read_durable(self.lsn, BATCH)
                .map_err(|e| fatal(e.to_string()))?;
            if !batch.records.is_empty() {
                self.lsn = batch.next;
                self.on_records(batch.records)?;
                continue;
            }
            if self.opts.non_block {
                // An empty packet: the connection sends EOF and ends.
                self.done = true;
                return Ok(Vec::new());
            }
            let wait = self.engine.log.wait_beyond(self.lsn);
            if tokio::time::timeout(self.opts.heartbeat, wait)
                .await
                .is_err()
            {
                let pos = self.translator.as_ref().expect("begun").pos;
                let hb = self.artificial(mysql::HEARTBEAT, &mysql::heartbeat_body(FILE_NAME), pos);
                self.send(hb, false);
            } else if self.engine.log.durable_lsn() <= self.lsn {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

impl BinlogDump for MysqlDump {
    fn next(&mut self) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, Error>> + Send + '_>> {
        Box::pin(self.next_event())
    }

    fn awaits_reply(&self, packet: &[u8]) -> bool {
        self.semi
            .as_ref()
            .is_some_and(|_| SemiAcks::asks_reply(packet))
    }

    fn on_reply(&mut self, payload: &[u8]) -> Result<(), Error> {
        match self.semi.as_mut() {
            Some(semi) => semi.on_reply(payload),
            None => Ok(()),
        }
    }
}

/// Heartbeat period from @master_heartbeat_period (nanoseconds); unset or
/// 0: 30 s, MySQL's replica default (slave_net_timeout / 2).
pub fn heartbeat_period(ns: Option<i64>) -> Duration {
    match ns {
        Some(ns) if ns > 0 => Duration::from_nanos(ns as u64).max(Duration::from_millis(1)),
        _ => Duration::from_secs(30),
    }
}
