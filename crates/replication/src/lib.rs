//! Asynchronous replication (book 9.4, 10.1-10.3). The protocol logic is
//! in deterministic state machines that take messages and time and return
//! what to do; the async drivers around them own the sockets, the disk and
//! the clock, so tests drive the machines without either:
//!
//! * `wire`: the dump request (MySQL's COM_BINLOG_DUMP_GTID) and events;
//! * `sender`: the source's side of one replica connection;
//! * `receiver`: the replica's side, ordering and de-duplicating records
//!   before they go to the relay log;
//! * `scheduler`: the applier's dependency and commit-order bookkeeping.

pub mod mysql_dump;
pub mod mysql_semisync;
pub mod receiver;
pub mod replica;
pub mod scheduler;
pub mod sender;
pub mod settings;
pub mod source;
pub mod wire;

#[cfg(test)]
mod sim;
