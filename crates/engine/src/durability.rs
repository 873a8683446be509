//! What a commit waits for before it is acknowledged.
//!
//! Today a record counts once it is durable in this node's log (fsync per
//! innodb_flush_log_at_trx_commit). A replicated group changes only this
//! promise: "accepted by a majority" (book 10.x) is another `Durability`,
//! and the engine's commit path stays as it is.

use std::future::Future;
use std::pin::Pin;

use lockstep_log::{Log, LogError, Lsn};

/// The commit record a waiter is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitPoint {
    /// The log position just past the record.
    pub end_lsn: Lsn,
    /// Its GTID's sequence number on this server.
    pub gno: u64,
}

/// Why a commit record could not be confirmed.
#[derive(Debug)]
pub enum DurabilityError {
    /// The local log failed: the record may or may not be on disk, and
    /// recovery at restart decides.
    Log(LogError),
    /// The record is in the local log but could not be confirmed where
    /// the promise requires (no majority, say): its outcome is unknown to
    /// the client.
    Unconfirmed(String),
    /// The record is durable here and the transaction commits, but the
    /// promise beyond this node was not kept (semisync in ERROR mode):
    /// the client gets an error saying so.
    Unacknowledged(String),
}

pub type DurableWait<'a> = Pin<Box<dyn Future<Output = Result<(), DurabilityError>> + Send + 'a>>;

/// Decides when a written commit record may be acknowledged. Called once
/// per commit after its record is written to `log`; the transaction's
/// changes become visible and its locks are released only after the
/// returned future resolves with Ok.
pub trait Durability: Send + Sync {
    fn wait<'a>(&'a self, log: &'a Log, commit: CommitPoint) -> DurableWait<'a>;
}

/// Durable on this node: the log's own flush (group commit) covers the
/// record.
pub struct LocalDurability;

impl Durability for LocalDurability {
    fn wait<'a>(&'a self, log: &'a Log, commit: CommitPoint) -> DurableWait<'a> {
        Box::pin(async move {
            log.wait_durable(commit.end_lsn)
                .await
                .map_err(DurabilityError::Log)
        })
    }
}
