//! LOCK TABLES / UNLOCK TABLES and FLUSH TABLES [t, ...] WITH READ LOCK,
//! built on the metadata locks and write gates of the engine:
//!
//! - `t WRITE`: t's metadata lock exclusive, so everyone else's reads,
//!   writes and DDL of t wait (and it waits for the transactions using t);
//! - `t READ`: t's metadata lock shared (DDL waits) and t's write gate as
//!   a locker, so others read but their writes wait (and it waits for the
//!   transactions that wrote t);
//! - FLUSH TABLES WITH READ LOCK: the server's global write gate as a
//!   locker: every write and DDL of other sessions waits.
//!
//! A session holding table locks uses only its locked tables (1100) and
//! writes only those locked WRITE (1099), without taking metadata locks
//! again. The requests of one LOCK TABLES are taken in table-id order, and
//! the statement never waits while it holds any of them (it gives them back
//! and waits for the one it could not get), so it cannot be in a deadlock;
//! waits end at lock_wait_timeout (1205) or KILL (1317).

use super::{ok, until_killed, Session, R};
use crate::parser::{LockTable, ObjectName, Statement};
use lockstep_lock::WriteGate;
use lockstep_tables::Table;
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::Error;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;
use tokio::time::{timeout_at, Instant};

/// The table locks and global read lock of one session; given back when
/// dropped (the connection ends).
#[derive(Default)]
pub(crate) struct TableLocks {
    /// What LOCK TABLES named, in its order.
    names: Vec<Named>,
    /// One hold per distinct table (WRITE when any name asked for it).
    holds: Vec<Hold>,
    global: Option<GlobalHold>,
}

struct Named {
    name: String,
    table: Arc<Table>,
    write: bool,
}

pub(super) struct Hold {
    table: Arc<Table>,
    write: bool,
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.table.temporary {
            return;
        }
        if self.write {
            self.table.mdl.release_exclusive();
        } else {
            self.table.write_gate.release_lock();
            self.table.mdl.release_shared();
        }
    }
}

struct GlobalHold(Arc<WriteGate>);

impl Drop for GlobalHold {
    fn drop(&mut self) {
        self.0.release_lock();
    }
}

/// A DDL statement's place in the global write gate (FLUSH TABLES WITH
/// READ LOCK waits for it, and it for that lock).
pub(crate) struct DdlGate(Arc<WriteGate>);

impl Drop for DdlGate {
    fn drop(&mut self) {
        self.0.release_write();
    }
}

impl TableLocks {
    /// LOCK TABLES is in force.
    pub(crate) fn active(&self) -> bool {
        !self.names.is_empty()
    }

    /// Gives back the table locks (UNLOCK TABLES, BEGIN).
    pub(crate) fn release_tables(&mut self) {
        self.names.clear();
        self.holds.clear();
    }

    /// Under LOCK TABLES: whether `tables` may be used (1100 for one not
    /// locked). None when LOCK TABLES is not in force.
    pub(crate) fn cover(&self, tables: &[Arc<Table>]) -> Option<R<()>> {
        if !self.active() {
            return None;
        }
        Some(
            tables
                .iter()
                .try_for_each(|t| self.named(t, false).map(|_| ())),
        )
    }

    /// Under LOCK TABLES: `written` must be locked WRITE (1099).
    fn check_writes(&self, written: &[Arc<Table>]) -> R<()> {
        written.iter().try_for_each(|t| {
            let n = self.named(t, true)?;
            if n.write || t.temporary {
                Ok(())
            } else {
                Err(Error::new(
                    Code::TableNotLockedForWrite,
                    format!(
                        "Table '{}' was locked with a READ lock and can't be updated",
                        n.name
                    ),
                ))
            }
        })
    }

    /// The name `t` was locked under (its WRITE one if `write`); 1100 if
    /// none (a temporary table needs no lock).
    fn named(&self, t: &Arc<Table>, write: bool) -> R<&Named> {
        let mut found = self.names.iter().filter(|n| Arc::ptr_eq(&n.table, t));
        let first = found.next();
        let named = match write {
            true => first.and_then(|f| found.find(|n| n.write).or(Some(f))),
            false => first,
        };
        match named {
            Some(n) => Ok(n),
            None if t.temporary => Ok(self.names.first().expect("active")),
            None => Err(not_locked(&t.def().name)),
        }
    }
}

fn not_locked(name: &str) -> Error {
    Error::new(
        Code::TableNotLocked,
        format!("Table '{name}' was not locked with LOCK TABLES"),
    )
}

/// The tables a bound statement writes.
fn written(plan: &super::Bound) -> Vec<Arc<Table>> {
    use super::Plan;
    match &plan.plan {
        Plan::Query(_) => Vec::new(),
        Plan::Insert(p) => vec![p.table.clone()],
        Plan::Update(p) | Plan::Delete(p) => vec![p.table.clone()],
        Plan::Multi(m) => m.targets.iter().map(|t| t.table.clone()).collect(),
    }
}

impl Session {
    /// LOCK TABLES: commits the open transaction, gives back the table
    /// locks held, then takes the new ones.
    pub(super) async fn lock_tables(&mut self, items: &[LockTable]) -> R<Response> {
        self.commit().await?;
        self.table_locks.release_tables();
        let mut names = Vec::with_capacity(items.len());
        for item in items {
            let table = self.lockable(&item.table)?;
            let name = item
                .alias
                .clone()
                .unwrap_or_else(|| item.table.name.clone());
            names.push(Named {
                name,
                table,
                write: item.write,
            });
        }
        if self.table_locks.global.is_some() && names.iter().any(|n| n.write) {
            return Err(read_lock_conflict());
        }
        let holds = self.take_holds(&names).await?;
        self.table_locks.names = names;
        self.table_locks.holds = holds;
        Ok(ok(0))
    }

    /// A table LOCK TABLES may name: LOCK TABLES privilege on its
    /// database and SELECT on it (1044 / 1142); views are refused.
    fn lockable(&self, name: &ObjectName) -> R<Arc<Table>> {
        let t = self.binder().table(name).map_err(|e| match e.code {
            Code::NotSupportedYet => Error::unsupported("LOCK TABLES on a view"),
            _ => e,
        })?;
        let def = t.def();
        self.grants.check_lock_table(&def.database, &def.name)?;
        Ok(t)
    }

    /// Takes one hold per distinct table, in table-id order, never
    /// waiting while holding any (see the module comment).
    async fn take_holds(&self, names: &[Named]) -> R<Vec<Hold>> {
        let mut wanted: Vec<(Arc<Table>, bool)> = Vec::new();
        for n in names.iter().filter(|n| !n.table.temporary) {
            match wanted.iter_mut().find(|(t, _)| Arc::ptr_eq(t, &n.table)) {
                Some(w) => w.1 |= n.write,
                None => wanted.push((n.table.clone(), n.write)),
            }
        }
        wanted.sort_by_key(|(t, _)| t.id);
        let deadline = Instant::now() + self.mdl_timeout();
        let mut holds: Vec<Hold> = Vec::new();
        'again: loop {
            for (t, write) in &wanted {
                if holds.iter().any(|h| Arc::ptr_eq(&h.table, t)) {
                    continue;
                }
                if let Some(h) = try_hold(t, *write, !holds.is_empty()) {
                    holds.push(h);
                    continue;
                }
                holds.clear();
                let wait = wait_hold(t.clone(), *write, deadline);
                holds.push(until_killed(&self.process, wait).await?);
                continue 'again;
            }
            return Ok(holds);
        }
    }

    /// UNLOCK TABLES: commits when table locks were held (as MySQL does)
    /// and gives back table locks and the global read lock.
    pub(super) async fn unlock_tables(&mut self) -> R<Response> {
        if self.table_locks.active() {
            self.commit().await?;
        }
        self.table_locks.release_tables();
        self.table_locks.global = None;
        Ok(ok(0))
    }

    /// FLUSH TABLES WITH READ LOCK (needs RELOAD), or FLUSH TABLES t, ...
    /// WITH READ LOCK (LOCK TABLES t READ, ...). FOR EXPORT is refused.
    pub(super) async fn flush_read_lock(
        &mut self,
        tables: &[ObjectName],
        export: bool,
    ) -> R<Response> {
        self.grants.check_reload()?;
        if export {
            return Err(Error::unsupported("FLUSH TABLES ... FOR EXPORT"));
        }
        if self.table_locks.active() {
            return Err(Error::new(
                Code::LockOrActiveTransaction,
                "Can't execute the given command because you have active locked tables or an active transaction",
            ));
        }
        if !tables.is_empty() {
            let items: Vec<LockTable> = tables
                .iter()
                .map(|t| LockTable {
                    table: t.clone(),
                    alias: None,
                    write: false,
                })
                .collect();
            return self.lock_tables(&items).await;
        }
        self.commit().await?;
        if self.table_locks.global.is_none() {
            let gate = self.engine.global_gate.clone();
            let deadline = Instant::now() + self.mdl_timeout();
            let wait = async {
                timeout_at(deadline, gate.lock())
                    .await
                    .map_err(|_| Error::lock_wait_timeout())
            };
            until_killed(&self.process, wait).await?;
            self.table_locks.global = Some(GlobalHold(gate));
        }
        Ok(ok(0))
    }

    /// Before a DDL statement: refused under LOCK TABLES (not built) and
    /// under this session's own global read lock (1223); else it enters the
    /// global write gate, waiting for another session's read lock.
    pub(super) async fn gate_ddl(&mut self, stmt: &Statement) -> R<Option<DdlGate>> {
        if !super::changes_schema(stmt) {
            return Ok(None);
        }
        if self.table_locks.global.is_some() {
            return Err(read_lock_conflict());
        }
        if self.table_locks.active() {
            return Err(Error::unsupported("DDL under LOCK TABLES"));
        }
        let gate = self.engine.global_gate.clone();
        if !gate.try_write(false) {
            let deadline = Instant::now() + self.mdl_timeout();
            let wait = async {
                timeout_at(deadline, gate.write(false))
                    .await
                    .map_err(|_| Error::lock_wait_timeout())
            };
            until_killed(&self.process, wait).await?;
        }
        Ok(Some(DdlGate(gate)))
    }

    /// After its metadata locks: the write gates of what the plan writes
    /// (waiting for LOCK TABLES ... READ and FLUSH TABLES WITH READ LOCK of
    /// other sessions); under LOCK TABLES, 1099 for a table locked READ.
    pub(super) async fn gate_writes(&mut self, plan: &super::Bound) -> R<()> {
        let written = written(plan);
        if written.is_empty() {
            return Ok(());
        }
        if self.table_locks.global.is_some() {
            return Err(read_lock_conflict());
        }
        if self.table_locks.active() {
            return self.table_locks.check_writes(&written);
        }
        let durable: Vec<_> = written.into_iter().filter(|t| !t.temporary).collect();
        if self.engine.try_gate_writes(&mut self.txn, &durable) {
            return Ok(());
        }
        self.engine.park(&mut self.txn);
        let timeout = self.mdl_timeout();
        let process = self.process.clone();
        let wait = self.engine.gate_writes(&mut self.txn, &durable, timeout);
        let r = until_killed(&process, wait).await;
        if r.is_err() && !self.in_transaction() {
            self.engine.rollback(&mut self.txn);
        }
        r
    }

    /// Keeps writers of `t` out, as LOCK TABLES t READ does (CHECK TABLE):
    /// None under LOCK TABLES, whose locks cover `t` already (else 1100).
    pub(super) async fn hold_for_read(&self, t: &Arc<Table>) -> R<Option<Hold>> {
        if let Some(covered) = self.table_locks.cover(std::slice::from_ref(t)) {
            return covered.map(|()| None);
        }
        if let Some(h) = try_hold(t, false, false) {
            return Ok(Some(h));
        }
        let deadline = Instant::now() + self.mdl_timeout();
        wait_hold(t.clone(), false, deadline).await.map(Some)
    }

    /// lock_wait_timeout of the session.
    fn mdl_timeout(&self) -> Duration {
        let secs = super::system_var(&self.server, &self.ctx, false, "lock_wait_timeout")
            .ok()
            .and_then(|v| v.to_i64())
            .unwrap_or(super::MAX_WAIT_TIMEOUT);
        Duration::from_secs(secs.clamp(1, super::MAX_WAIT_TIMEOUT) as u64)
    }
}

fn read_lock_conflict() -> Error {
    Error::new(
        Code::CantUpdateWithReadlock,
        "Can't execute the query because you have a conflicting read lock",
    )
}

/// Takes `t` for LOCK TABLES if that needs no waiting.
fn try_hold(t: &Arc<Table>, write: bool, holds_others: bool) -> Option<Hold> {
    // Built only once taken: dropping a Hold gives the lock back.
    let hold = || Hold {
        table: t.clone(),
        write,
    };
    if write {
        return poll_once(t.mdl.exclusive()).then(hold);
    }
    if !t.mdl.try_shared(holds_others) {
        return None;
    }
    if !t.write_gate.try_lock() {
        t.mdl.release_shared();
        return None;
    }
    Some(hold())
}

/// Waits for `t` until `deadline` (1205), holding nothing else.
async fn wait_hold(t: Arc<Table>, write: bool, deadline: Instant) -> R<Hold> {
    let late = |_| Error::lock_wait_timeout();
    if write {
        timeout_at(deadline, t.mdl.exclusive())
            .await
            .map_err(late)?;
        return Ok(Hold { table: t, write });
    }
    timeout_at(deadline, t.mdl.shared(false))
        .await
        .map_err(late)?;
    if timeout_at(deadline, t.write_gate.lock()).await.is_err() {
        t.mdl.release_shared();
        return Err(Error::lock_wait_timeout());
    }
    Ok(Hold { table: t, write })
}

/// Whether a lock request is granted at its first try (dropped if not,
/// which leaves the lock as it was).
fn poll_once(f: impl Future<Output = ()>) -> bool {
    let mut f = std::pin::pin!(f);
    f.as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_ready()
}
