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
    /// Semisync: where the last record sent ends, and what the replica
    /// has acknowledged.
    sent_end: Lsn,
    acked: Lsn,
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

/// The length of the record of the last event in `out`.
fn record_len(out: &[Event]) -> usize {
    match out.last() {
        Some(Event::Txn { record, .. }) => record.len(),
        _ => 0,
    }
}

impl Sender {
    pub fn new(replica: GtidSet, now_us: u64, heartbeat_us: u64) -> Sender {
        Sender {
            replica,
            prev: None,
            last_sent_us: now_us,
            heartbeat_us,
            sent_end: 0,
            acked: 0,
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
                // It had it when it connected: acknowledged, once all
                // sent before it is.
                if self.sent_end <= self.acked {
                    self.acked = lockstep_log::record_end(lsn, record.len());
                    self.sent_end = self.acked;
                }
                continue;
            }
            out.push(Event::Txn {
                prev: self.prev,
                lsn,
                record,
            });
            self.prev = Some(lsn);
            self.sent_end = lockstep_log::record_end(lsn, record_len(&out));
        }
        if !out.is_empty() {
            self.last_sent_us = now_us;
        }
        out
    }

    /// Where the replica has every record before (acknowledged, or had
    /// when it connected).
    pub fn acked(&self) -> Lsn {
        self.acked
    }

    /// A semisync reply: Some(position) when it acknowledges more than
    /// before. An acknowledgement beyond what was sent is a broken
    /// replica: an error ends the connection.
    pub fn on_ack(&mut self, ack: Lsn) -> Result<Option<Lsn>, String> {
        if ack > self.sent_end {
            return Err(format!(
                "semisync reply for log position {ack}, beyond what was sent ({})",
                self.sent_end
            ));
        }
        if ack <= self.acked {
            return Ok(None); // a repeat, or an older reply
        }
        self.acked = ack;
        Ok(Some(ack))
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
