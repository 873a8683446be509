//! The source's side of one replica connection, as a state machine: it is
//! given log records in log order and the time, and says what to send.
//! Records whose GTID the replica has are skipped (auto-positioning); a
//! heartbeat goes out when nothing was sent for `heartbeat_us`.

use lockstep_binlog::{GtidSet, TxnRecord};
use lockstep_log::Lsn;

use crate::wire::Event;

pub struct Sender {
    /// What the replica has: its executed set plus everything sent since.
    replica: GtidSet,
    prev: Option<Lsn>,
    last_sent_us: u64,
    heartbeat_us: u64,
}

/// Whether a replica with `replica` can be served from a log that starts
/// after `purged` (the source's GTIDs no longer in its log): every purged
/// GTID must be on the replica already. The error is MySQL's 1236 text.
pub fn check_purged(purged: &GtidSet, replica: &GtidSet) -> Result<(), String> {
    let missing = purged.minus(replica);
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "Cannot replicate because the source purged required binary logs. \
         Replicate the missing transactions from elsewhere, or provision a new \
         replica from backup. The GTID set sent by the replica is '{replica}', \
         and the missing transactions are '{missing}'"
    ))
}

impl Sender {
    pub fn new(replica: GtidSet, now_us: u64, heartbeat_us: u64) -> Sender {
        Sender {
            replica,
            prev: None,
            last_sent_us: now_us,
            heartbeat_us,
        }
    }

    /// Records read from the log, in log order: the events to send.
    pub fn on_records(&mut self, records: Vec<(Lsn, Vec<u8>)>, now_us: u64) -> Vec<Event> {
        let mut out = Vec::new();
        for (lsn, record) in records {
            debug_assert!(self.prev.is_none_or(|p| p < lsn), "log order");
            let Some(gtid) = TxnRecord::peek_gtid(&record) else {
                continue;
            };
            // insert() is false for a GTID the replica has (or was sent).
            if !self.replica.insert(gtid) {
                continue;
            }
            out.push(Event::Txn {
                prev: self.prev,
                lsn,
                record,
            });
            self.prev = Some(lsn);
        }
        if !out.is_empty() {
            self.last_sent_us = now_us;
        }
        out
    }

    /// Time passed with nothing to send: a heartbeat when one is due.
    pub fn on_tick(&mut self, now_us: u64) -> Option<Event> {
        if now_us.saturating_sub(self.last_sent_us) < self.heartbeat_us {
            return None;
        }
        self.last_sent_us = now_us;
        Some(Event::Heartbeat {
            source_time_us: now_us,
        })
    }
}
