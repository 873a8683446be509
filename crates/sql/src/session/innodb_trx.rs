//! information_schema.INNODB_TRX: the transactions under way, one row per
//! session in one. A session publishes its transaction's summary into its
//! process entry when a statement ends and when it starts and stops
//! waiting for a row lock (a few stores per statement); the table is built
//! from those entries, so reading it takes no engine latch.

use super::infoschema::table;
use super::{ProcessInfo, Session};
use lockstep_engine::catalog::Catalog;
use lockstep_engine::TxnSummary;
use lockstep_types::{DataType, Value};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// What a session last published about its transaction; `shown` says
/// whether the slot holds one, so an autocommit statement outside any
/// transaction (the common case) skips the mutex.
#[derive(Default)]
pub struct TrxState(Mutex<Option<Published>>, AtomicBool);

struct Published {
    summary: TxnSummary,
    started: SystemTime,
    /// Since when it waits for a row lock, if it does.
    waiting: Option<SystemTime>,
    isolation: &'static str,
    read_only: bool,
}

impl Session {
    /// Publishes the transaction as it stands (`waiting`: it is about to
    /// sleep on a row lock, or None).
    pub(super) fn publish_trx(&self, waiting: Option<Instant>) {
        let summary = self.txn.summary();
        let shown = &self.process.trx.1;
        if summary.is_none() && !shown.load(Ordering::Relaxed) {
            return;
        }
        let mut slot = self.process.trx.0.lock();
        shown.store(summary.is_some(), Ordering::Relaxed);
        let Some(summary) = summary else {
            *slot = None;
            return;
        };
        let same = slot
            .as_ref()
            .is_some_and(|p| p.summary.generation == summary.generation);
        let started = match slot.as_ref() {
            Some(p) if same => p.started,
            // First seen at this statement's end: it began with the statement.
            _ => wall(*self.process.since.lock()),
        };
        *slot = Some(Published {
            summary,
            started,
            waiting: waiting.map(wall),
            isolation: self.txn.isolation.name(),
            read_only: self.txn_read_only,
        });
    }
}

/// An instant of this process as wall-clock time.
fn wall(at: Instant) -> SystemTime {
    SystemTime::now() - at.elapsed()
}

/// Whole seconds, as InnoDB shows them (in UTC, the system time zone).
fn datetime(t: SystemTime) -> Value {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Value::DateTime(lockstep_types::time::DateTime::from_unix_micros(
        secs as i64 * 1_000_000,
    ))
}

/// One row of INNODB_TRX for a session in a transaction.
fn row(p: &ProcessInfo) -> Option<Vec<Value>> {
    let slot = p.trx.0.lock();
    let t = slot.as_ref()?;
    let s = &t.summary;
    // InnoDB shows a read-only transaction's id as a large number derived
    // from the session; lockstep gives one only once it writes.
    let id = s.id.unwrap_or(u64::MAX / 2 + p.id);
    let count = |n: usize| Value::UInt(n as u64);
    Some(vec![
        Value::str(&id.to_string()),
        Value::str(if t.waiting.is_some() {
            "LOCK WAIT"
        } else {
            "RUNNING"
        }),
        datetime(t.started),
        t.waiting.map_or(Value::Null, datetime),
        count(s.locks + s.rows_modified),
        Value::UInt(p.id),
        p.info.lock().as_deref().map_or(Value::Null, Value::str),
        count(s.tables_in_use),
        count(s.tables_written),
        count(s.locks),
        count(s.rows_modified),
        // InnoDB spells the level with spaces ("REPEATABLE READ").
        Value::str(&t.isolation.replace('-', " ")),
        Value::Int(t.read_only as i64),
    ])
}

/// One row per session in a transaction; without PROCESS, the user's own
/// sessions only (as SHOW PROCESSLIST).
pub(super) fn infoschema_table(cat: &Catalog, session: &Session) {
    let all = session.grants.has_global(lockstep_accounts::Privs::PROCESS);
    let user = session.grants.user.clone();
    let procs: Vec<_> = session.server.processes.lock().values().cloned().collect();
    let mut rows: Vec<_> = procs
        .iter()
        .filter(|p| all || *p.user.lock() == user)
        .filter_map(|p| row(p))
        .collect();
    rows.sort_by(|a, b| a[5].sort_cmp(&b[5]));
    let vc = DataType::VarChar { len: 64 };
    let n = DataType::BigInt { unsigned: true };
    let dt = DataType::DateTime { fsp: 0 };
    let columns = [
        ("trx_id", vc),
        ("trx_state", vc),
        ("trx_started", dt),
        ("trx_wait_started", dt),
        ("trx_weight", n),
        ("trx_mysql_thread_id", n),
        ("trx_query", DataType::VarChar { len: 1024 }),
        ("trx_tables_in_use", n),
        ("trx_tables_locked", n),
        ("trx_rows_locked", n),
        ("trx_rows_modified", n),
        ("trx_isolation_level", vc),
        ("trx_is_read_only", DataType::Int { unsigned: false }),
    ];
    table(cat, 73, "INNODB_TRX", &columns, rows);
}
