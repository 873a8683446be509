//! Semisynchronous replication, AFTER_SYNC (MySQL's
//! rpl_semi_sync_source_*): a commit whose record is durable here waits,
//! before it becomes visible and is acknowledged, until
//! `wait_for_replica_count` replicas have written it to their relay logs
//! and said so on their dump connection. It is a `Durability` wrapped
//! around the node's own: only the waiting commits wait; the log goes on
//! writing and flushing the others (no group-commit leader is held).
//!
//! When no replica answers within the timeout the source says so (status
//! OFF, a line in the error log, Rpl_semi_sync_source_no_tx) and then,
//! as configured, either goes on asynchronously (MySQL's behaviour) or
//! fails that commit with an error and refuses commits, before they are
//! logged, until enough replicas have caught up (status ON again).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lockstep_log::{Log, Lsn};
use parking_lot::Mutex;
use tokio::sync::watch;

use crate::durability::{CommitPoint, Durability, DurabilityError, DurableWait};

/// What a commit does when no replica acknowledged it in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnTimeout {
    /// Switch to asynchronous replication (status OFF) until replicas
    /// catch up: MySQL's behaviour.
    Async,
    /// Fail the commit with an error (it is in this node's log: committed
    /// here, not confirmed elsewhere) and refuse commits until replicas
    /// catch up.
    Error,
}

/// Status counters, as SHOW STATUS names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SemiSyncStatus {
    /// Rpl_semi_sync_source_status: enabled and not switched off.
    pub on: bool,
    /// Rpl_semi_sync_source_clients: connected semisync replicas.
    pub clients: u64,
    pub yes_tx: u64,
    pub no_tx: u64,
}

#[derive(Default)]
struct State {
    /// Each semisync replica connection and the log position it has
    /// acknowledged (everything before it is in its relay log).
    acked: HashMap<u64, Lsn>,
    next_client: u64,
    /// Switched off by a timeout (status OFF while enabled).
    off: bool,
    /// The end of the newest commit that went through `wait`: replicas
    /// past it have caught up.
    newest: Lsn,
}

pub struct SemiSync {
    inner: Arc<dyn Durability>,
    enabled: AtomicBool,
    timeout_ms: AtomicU64,
    wait_count: AtomicU64,
    on_timeout_error: AtomicBool,
    /// rpl_semi_sync_replica_enabled: this node, as a replica, asks its
    /// source for semisync and acknowledges what it relays.
    replica_enabled: AtomicBool,
    state: Mutex<State>,
    /// Bumped on every acknowledgement and client change.
    changed: watch::Sender<u64>,
    yes_tx: AtomicU64,
    no_tx: AtomicU64,
}

impl SemiSync {
    pub fn new(inner: Arc<dyn Durability>) -> SemiSync {
        SemiSync {
            inner,
            enabled: AtomicBool::new(false),
            timeout_ms: AtomicU64::new(10_000),
            wait_count: AtomicU64::new(1),
            on_timeout_error: AtomicBool::new(false),
            replica_enabled: AtomicBool::new(false),
            state: Mutex::new(State::default()),
            changed: watch::Sender::new(0),
            yes_tx: AtomicU64::new(0),
            no_tx: AtomicU64::new(0),
        }
    }

    pub fn set_enabled(&self, on: bool) {
        if on && !self.enabled.swap(true, Ordering::SeqCst) {
            self.state.lock().off = false;
        }
        self.enabled.store(on, Ordering::SeqCst);
    }

    /// rpl_semi_sync_source_enabled (whether or not switched off).
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub fn set_timeout(&self, ms: u64) {
        self.timeout_ms.store(ms, Ordering::Relaxed);
    }

    pub fn set_wait_count(&self, n: u64) {
        self.wait_count.store(n.max(1), Ordering::Relaxed);
    }

    pub fn set_on_timeout(&self, t: OnTimeout) {
        self.on_timeout_error
            .store(t == OnTimeout::Error, Ordering::Relaxed);
    }

    pub fn set_replica_enabled(&self, on: bool) {
        self.replica_enabled.store(on, Ordering::Relaxed);
    }

    pub fn replica_enabled(&self) -> bool {
        self.replica_enabled.load(Ordering::Relaxed)
    }

    pub fn status(&self) -> SemiSyncStatus {
        let st = self.state.lock();
        SemiSyncStatus {
            on: self.enabled.load(Ordering::SeqCst) && !st.off,
            clients: st.acked.len() as u64,
            yes_tx: self.yes_tx.load(Ordering::Relaxed),
            no_tx: self.no_tx.load(Ordering::Relaxed),
        }
    }

    /// A semisync replica connected; it acknowledges through the id.
    pub fn register(&self) -> u64 {
        let mut st = self.state.lock();
        st.next_client += 1;
        let id = st.next_client;
        st.acked.insert(id, 0);
        drop(st);
        self.changed.send_modify(|n| *n += 1);
        id
    }

    pub fn unregister(&self, id: u64) {
        self.state.lock().acked.remove(&id);
        self.changed.send_modify(|n| *n += 1);
    }

    /// Replica `id` has everything before `lsn` in its relay log.
    pub fn ack(&self, id: u64, lsn: Lsn) {
        let mut st = self.state.lock();
        if let Some(a) = st.acked.get_mut(&id) {
            *a = (*a).max(lsn);
        }
        if st.off && self.count_at(&st, st.newest) >= self.wait_count.load(Ordering::Relaxed) {
            st.off = false;
            eprintln!("lockstep: semi-sync replication switched ON (replicas caught up to log position {})", st.newest);
        }
        drop(st);
        self.changed.send_modify(|n| *n += 1);
    }

    fn count_at(&self, st: &State, lsn: Lsn) -> u64 {
        st.acked.values().filter(|&&a| a >= lsn).count() as u64
    }

    /// Whether a commit may be logged now: with ERROR on timeout, not
    /// while switched off (nothing is logged, so the refusal is clean).
    pub fn admit(&self) -> Result<(), String> {
        if !self.enabled.load(Ordering::Relaxed) || !self.on_timeout_error.load(Ordering::Relaxed) {
            return Ok(());
        }
        if self.state.lock().off {
            return Err("semi-sync replication is OFF: no replica acknowledged the last commit within rpl_semi_sync_source_timeout".into());
        }
        Ok(())
    }

    async fn wait_acks(&self, end: Lsn) -> Result<(), DurabilityError> {
        if !self.enabled.load(Ordering::Relaxed) {
            return Ok(());
        }
        let need = self.wait_count.load(Ordering::Relaxed);
        let mut rx = self.changed.subscribe();
        {
            let mut st = self.state.lock();
            st.newest = st.newest.max(end);
            if st.off {
                self.no_tx.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
        }
        let timeout = Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed));
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.count_at(&self.state.lock(), end) >= need {
                self.yes_tx.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return self.timed_out(end, timeout);
            }
        }
    }

    fn timed_out(&self, end: Lsn, timeout: Duration) -> Result<(), DurabilityError> {
        self.no_tx.fetch_add(1, Ordering::Relaxed);
        let mut st = self.state.lock();
        if !st.off {
            st.off = true;
            eprintln!(
                "lockstep: timeout waiting for replica acknowledgement of log position {end} after {} ms: semi-sync replication switched OFF",
                timeout.as_millis()
            );
        }
        drop(st);
        if !self.on_timeout_error.load(Ordering::Relaxed) {
            return Ok(());
        }
        Err(DurabilityError::Unacknowledged(format!(
            "no replica acknowledged it within rpl_semi_sync_source_timeout ({} ms); it is committed on this server only",
            timeout.as_millis()
        )))
    }
}

impl Durability for SemiSync {
    fn wait<'a>(&'a self, log: &'a Log, commit: CommitPoint) -> DurableWait<'a> {
        Box::pin(async move {
            self.inner.wait(log, commit).await?;
            self.wait_acks(commit.end_lsn).await
        })
    }
}
