//! Semisynchronous replication on the MySQL-format stream, as MySQL's
//! semisync source plugin speaks it: after `SET @rpl_semi_sync_slave = 1`
//! (or `@rpl_semi_sync_replica`) every event packet carries a two-byte
//! header, the magic 0xef and a flag; the flag asks for a reply on the
//! last event of a transaction, and the replica answers on the same
//! connection with 0xef, the binlog position it has (u64) and the file's
//! name. Positions map back to log positions for the engine's `SemiSync`.

use std::collections::VecDeque;
use std::sync::Arc;

use lockstep_binlog::mysql::stream::FILE_NAME;
use lockstep_engine::semisync::SemiSync;
use lockstep_log::Lsn;
use lockstep_types::error::Code;
use lockstep_types::Error;

use crate::wire::SEMISYNC_MAGIC;

const NEED_ACK: u8 = 0x01;

pub struct SemiAcks {
    semisync: Arc<SemiSync>,
    /// This connection's id with the engine's `SemiSync`.
    id: u64,
    /// Transactions sent and not acknowledged yet, in order: where each
    /// ends in the binlog file and in the log.
    pending: VecDeque<(u64, Lsn)>,
    /// The end of the last transaction sent (binlog position).
    sent_end: u64,
}

impl Drop for SemiAcks {
    fn drop(&mut self) {
        self.semisync.unregister(self.id);
    }
}

impl SemiAcks {
    pub fn new(semisync: Arc<SemiSync>) -> SemiAcks {
        let id = semisync.register();
        SemiAcks {
            semisync,
            id,
            pending: VecDeque::new(),
            sent_end: 0,
        }
    }

    /// The packet for `event`: the semisync header first. A reply is
    /// asked for only while the source waits for replies.
    pub fn wrap(&self, event: Vec<u8>, last_of_txn: bool) -> Vec<u8> {
        let ask = last_of_txn && self.semisync.enabled();
        let mut o = Vec::with_capacity(event.len() + 2);
        o.push(SEMISYNC_MAGIC);
        o.push(if ask { NEED_ACK } else { 0 });
        o.extend_from_slice(&event);
        o
    }

    /// Whether a packet made by `wrap` asks for a reply.
    pub fn asks_reply(packet: &[u8]) -> bool {
        packet.starts_with(&[SEMISYNC_MAGIC, NEED_ACK])
    }

    /// A transaction was sent: it ends at `pos` in the file, `lsn` in
    /// the log.
    pub fn sent(&mut self, pos: u64, lsn: Lsn) {
        debug_assert!(pos >= self.sent_end, "positions grow");
        self.sent_end = pos;
        self.pending.push_back((pos, lsn));
    }

    /// A transaction the replica had when it connected: it has the log
    /// up to its end once everything sent before is acknowledged.
    pub fn skipped(&mut self, lsn: Lsn) {
        if self.pending.is_empty() {
            self.semisync.ack(self.id, lsn);
        }
    }

    /// The replica's reply: 0xef, position (u64 LE), file name.
    pub fn on_reply(&mut self, payload: &[u8]) -> Result<(), Error> {
        let bad = |m: String| Error::new(Code::SourceFatalReadingBinlog, m);
        if payload.len() < 9 || payload[0] != SEMISYNC_MAGIC {
            return Err(bad("not a semisync reply packet".into()));
        }
        let pos = u64::from_le_bytes(payload[1..9].try_into().expect("8 bytes"));
        let name = String::from_utf8_lossy(&payload[9..]);
        let name = name.trim_end_matches('\0');
        if name != FILE_NAME || pos > self.sent_end {
            return Err(bad(format!(
                "semisync reply for '{name}' position {pos}, beyond what was sent \
                 ('{FILE_NAME}' position {})",
                self.sent_end
            )));
        }
        let mut acked = None;
        while self.pending.front().is_some_and(|&(end, _)| end <= pos) {
            acked = self.pending.pop_front().map(|(_, lsn)| lsn);
        }
        if let Some(lsn) = acked {
            self.semisync.ack(self.id, lsn);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_engine::LocalDurability;

    fn reply(pos: u64, name: &str) -> Vec<u8> {
        let mut o = vec![SEMISYNC_MAGIC];
        o.extend_from_slice(&pos.to_le_bytes());
        o.extend_from_slice(name.as_bytes());
        o
    }

    #[test]
    fn header_flags_and_client_count() {
        let semi = Arc::new(SemiSync::new(Arc::new(LocalDurability)));
        let acks = SemiAcks::new(semi.clone());
        assert_eq!(semi.status().clients, 1);
        // Not enabled: the header is there, no reply is asked for.
        assert_eq!(acks.wrap(vec![7], true), [SEMISYNC_MAGIC, 0, 7]);
        semi.set_enabled(true);
        assert_eq!(acks.wrap(vec![7], false), [SEMISYNC_MAGIC, 0, 7]);
        let last = acks.wrap(vec![7], true);
        assert_eq!(last, [SEMISYNC_MAGIC, NEED_ACK, 7]);
        assert!(SemiAcks::asks_reply(&last) && !SemiAcks::asks_reply(&[SEMISYNC_MAGIC, 0]));
        drop(acks);
        assert_eq!(semi.status().clients, 0);
    }

    #[test]
    fn replies_are_checked() {
        let semi = Arc::new(SemiSync::new(Arc::new(LocalDurability)));
        let mut acks = SemiAcks::new(semi);
        acks.sent(300, 1_000);
        acks.sent(500, 2_000);
        assert!(acks.on_reply(&reply(300, FILE_NAME)).is_ok());
        assert!(acks.on_reply(&reply(500, "binlog.000001\0")).is_ok());
        assert!(acks.pending.is_empty());
        // A repeat is harmless; beyond what was sent, another file, or
        // not a reply at all ends the stream.
        assert!(acks.on_reply(&reply(500, FILE_NAME)).is_ok());
        assert!(acks.on_reply(&reply(501, FILE_NAME)).is_err());
        assert!(acks.on_reply(&reply(100, "binlog.000002")).is_err());
        assert!(acks.on_reply(&[SEMISYNC_MAGIC, 1, 2]).is_err());
        assert!(acks.on_reply(&reply(100, FILE_NAME)[1..]).is_err());
    }

    #[test]
    fn a_reply_covers_every_transaction_before_it() {
        let semi = Arc::new(SemiSync::new(Arc::new(LocalDurability)));
        let mut acks = SemiAcks::new(semi);
        for k in 1..=4u64 {
            acks.sent(k * 100, k * 1_000);
        }
        acks.on_reply(&reply(250, FILE_NAME)).expect("valid");
        assert_eq!(acks.pending.front(), Some(&(300, 3_000)));
        acks.on_reply(&reply(400, FILE_NAME)).expect("valid");
        assert!(acks.pending.is_empty());
    }
}
