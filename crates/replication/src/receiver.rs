//! The replica's receiving side as a state machine: it is given events as
//! they arrive and returns the records to append to the relay log, in the
//! source's order. Each record names the one sent before it (`prev`), so a
//! repeated record is dropped and one that arrives early is held until the
//! gap before it fills (a bounded number; beyond that the connection is
//! reset and resumes from the retrieved set).

use std::collections::BTreeMap;

use lockstep_binlog::{GtidSet, TxnRecord};
use lockstep_log::Lsn;

use crate::wire::{Ack, Event};

pub struct Receiver {
    /// GTIDs executed or written to the relay log (Retrieved_Gtid_Set
    /// plus what was executed before).
    have: GtidSet,
    /// Position of the last record accepted on this connection.
    last: Option<Lsn>,
    /// Records that arrived before their predecessor, by `prev`.
    held: BTreeMap<Lsn, (Lsn, Vec<u8>)>,
    max_held: usize,
    /// The source's clock at its last heartbeat (for lag).
    pub source_time_us: u64,
    /// Semisync: where the last record accepted ends (everything before
    /// it is in the relay log, or executed, once the appends are
    /// durable), and the last position acknowledged.
    accepted_end: Option<Lsn>,
    acked: Option<Lsn>,
}

/// What the receiver wants done.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Append to the relay log, in this order.
    Append(Vec<u8>),
    /// The stream cannot be repaired: reconnect from `have`.
    Reconnect(String),
}

impl Receiver {
    pub fn new(have: GtidSet, max_held: usize) -> Receiver {
        Receiver {
            have,
            last: None,
            held: BTreeMap::new(),
            max_held,
            source_time_us: 0,
            accepted_end: None,
            acked: None,
        }
    }

    /// The set to ask the source for records after.
    pub fn have(&self) -> &GtidSet {
        &self.have
    }

    /// A new connection: its records chain from scratch.
    pub fn connected(&mut self) {
        self.last = None;
        self.held.clear();
        self.accepted_end = None;
        self.acked = None;
    }

    /// Call once the appends asked for so far are durable: the semisync
    /// reply to send, if the relay log holds more than last said.
    pub fn ack_due(&mut self) -> Option<Ack> {
        let end = self.accepted_end?;
        if self.acked.is_some_and(|a| a >= end) {
            return None;
        }
        self.acked = Some(end);
        Some(Ack { lsn: end })
    }

    pub fn on_event(&mut self, event: Event) -> Vec<Action> {
        let (prev, lsn, record) = match event {
            Event::Heartbeat { source_time_us } => {
                self.source_time_us = source_time_us;
                return Vec::new();
            }
            Event::Txn { prev, lsn, record } => (prev, lsn, record),
        };
        if self.last.is_some_and(|last| lsn <= last) {
            return Vec::new(); // a repeat
        }
        if prev != self.last {
            let Some(prev) = prev else {
                return Vec::new(); // a stale first record: we are past it
            };
            self.held.insert(prev, (lsn, record));
            if self.held.len() > self.max_held {
                return vec![Action::Reconnect("a gap in the stream".into())];
            }
            return Vec::new();
        }
        let mut out = Vec::new();
        self.accept(lsn, record, &mut out);
        while let Some((lsn, record)) = self.last.and_then(|l| self.held.remove(&l)) {
            self.accept(lsn, record, &mut out);
        }
        out
    }

    fn accept(&mut self, lsn: Lsn, record: Vec<u8>, out: &mut Vec<Action>) {
        self.last = Some(lsn);
        self.accepted_end = Some(lockstep_log::record_end(lsn, record.len()));
        // Held records that are now behind are repeats.
        self.held.retain(|&prev, _| prev >= lsn);
        match TxnRecord::peek_gtid(&record) {
            Some(g) if self.have.insert(g) => out.push(Action::Append(record)),
            Some(_) => {}
            None => out.push(Action::Reconnect("an undecodable record".into())),
        }
    }
}
