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
//! A view named by LOCK TABLES locks the base tables its query reads,
//! with its lock and under its name (MySQL adds them to the list the same
//! way); a statement reaches them through the view, and one that writes
//! through a view is checked under the name it wrote.
//!
//! A session holding table locks uses only its locked tables, each by a
//! name it was locked under (its alias if it had one, as in MySQL: 1100),
//! and writes only those locked WRITE (1099), without taking metadata
//! locks again. The tables the WRITE-locked tables' triggers and foreign
//! keys reach (prelock.rs) are locked implicitly: shared where only read,
//! shared and as a writer of the write gate where written (others still
//! read and write them, as in MariaDB; LOCK TABLES ... READ and DDL of
//! others wait); statements cannot name them. The requests of one LOCK TABLES are taken in table-id order, and
//! the statement never waits while it holds any of them (it gives them back
//! and waits for the one it could not get), so it cannot be in a deadlock;
//! waits end at lock_wait_timeout (1205) or KILL (1317).

use super::prelock::{self, Reach};
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
    /// The tables the locked tables' triggers and cascades write (locked
    /// implicitly; those named READ too are written through them).
    implicit_writes: Vec<Arc<Table>>,
}

struct Named {
    name: String,
    table: Arc<Table>,
    write: bool,
}

pub(super) struct Hold {
    table: Arc<Table>,
    mode: Mode,
}

/// How a hold keeps others out, strongest last (merged by `max`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Mode {
    /// A table a trigger or foreign key check only reads: DDL waits.
    Shared,
    /// A table a trigger or cascade writes: DDL and LOCK TABLES ... READ
    /// wait; others read and write it (row locks order them).
    SharedWrite,
    /// LOCK TABLES ... READ: others' writes wait too.
    Read,
    /// LOCK TABLES ... WRITE: everything of others waits.
    Write,
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.table.temporary {
            return;
        }
        let (t, gate) = (&self.table, &self.table.write_gate);
        match self.mode {
            Mode::Write => return t.mdl.release_exclusive(),
            Mode::Read => gate.release_lock(),
            Mode::SharedWrite => gate.release_write(),
            Mode::Shared => {}
        }
        t.mdl.release_shared();
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
        self.implicit_writes.clear();
    }

    /// Under LOCK TABLES: whether a statement may use `tables`, named as
    /// `refs` say (each under a name it was locked by: 1100), and what its
    /// triggers and cascades reach (locked implicitly, WRITE where
    /// written). None when LOCK TABLES is not in force.
    pub(crate) fn cover(
        &self,
        tables: &[Arc<Table>],
        refs: &[(Arc<Table>, String)],
        reach: &Reach,
    ) -> Option<R<()>> {
        if !self.active() {
            return None;
        }
        Some(self.cover_all(tables, refs, reach))
    }

    fn cover_all(
        &self,
        tables: &[Arc<Table>],
        refs: &[(Arc<Table>, String)],
        reach: &Reach,
    ) -> R<()> {
        for (t, name) in refs.iter().filter(|(t, _)| !t.temporary) {
            let locked = |n: &&Named| Arc::ptr_eq(&n.table, t) && n.name.eq_ignore_ascii_case(name);
            if !self.names.iter().any(|n| locked(&n)) {
                return Err(not_locked(name));
            }
        }
        // Tables inside a view are locked under any name.
        let unnamed = tables
            .iter()
            .filter(|t| !refs.iter().any(|(r, _)| Arc::ptr_eq(r, t)));
        for t in unnamed {
            self.named(t, false)?;
        }
        for (t, write) in reach
            .writes
            .iter()
            .map(|t| (t, true))
            .chain(reach.reads.iter().map(|t| (t, false)))
        {
            let implicit = || self.implicit_writes.iter().any(|w| Arc::ptr_eq(w, t));
            match self.holds.iter().find(|h| Arc::ptr_eq(&h.table, t)) {
                Some(h) if !write || h.mode == Mode::Write || implicit() => {}
                Some(_) => return Err(read_locked(&t.def().name)),
                None if t.temporary => {}
                None => return Err(not_locked(&t.def().name)),
            }
        }
        Ok(())
    }

    /// Under LOCK TABLES: `written` (with the name the statement gives
    /// it) must be locked WRITE under that name (1099).
    fn check_writes(&self, written: &[(Arc<Table>, Option<String>)]) -> R<()> {
        written.iter().try_for_each(|(t, name)| {
            if t.temporary {
                return Ok(());
            }
            let mut by = self.names.iter().filter(|n| {
                Arc::ptr_eq(&n.table, t)
                    && name.as_ref().is_none_or(|m| n.name.eq_ignore_ascii_case(m))
            });
            let first = by.next();
            // Named READ but written by the locked tables' triggers: MySQL
            // locks it for writing.
            let implicit = self.implicit_writes.iter().any(|w| Arc::ptr_eq(w, t));
            match by.find(|n| n.write).or(first) {
                Some(n) if n.write || implicit => Ok(()),
                Some(n) => Err(read_locked(&n.name)),
                None => Err(not_locked(name.as_deref().unwrap_or(&t.def().name))),
            }
        })
    }

    /// DDL under LOCK TABLES on `tables` (named by their names): each
    /// must be locked WRITE under its name (1099 READ, 1100 not).
    pub(crate) fn ddl_tables(&self, tables: &[Arc<Table>]) -> R<()> {
        let named = |t: &Arc<Table>| (t.clone(), Some(t.def().name.clone()));
        let written: Vec<_> = tables.iter().map(named).collect();
        self.check_writes(&written)
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

fn read_locked(name: &str) -> Error {
    Error::new(
        Code::TableNotLockedForWrite,
        format!("Table '{name}' was locked with a READ lock and can't be updated"),
    )
}

fn not_locked(name: &str) -> Error {
    Error::new(
        Code::TableNotLocked,
        format!("Table '{name}' was not locked with LOCK TABLES"),
    )
}

/// The tables a bound statement writes.
pub(super) fn written(plan: &super::Bound) -> Vec<Arc<Table>> {
    written_as(plan).into_iter().map(|(t, _)| t).collect()
}

/// The tables a bound statement writes, with the names it gives them (a
/// single-table statement names its target first; None: through a view).
fn written_as(plan: &super::Bound) -> Vec<(Arc<Table>, Option<String>)> {
    use super::Plan;
    let named = |t: &Arc<Table>| {
        let r = plan.refs.iter().find(|(r, _)| Arc::ptr_eq(r, t));
        (t.clone(), r.map(|(_, n)| n.clone()))
    };
    match &plan.plan {
        Plan::Query(_) => Vec::new(),
        Plan::Insert(p) => vec![named(&p.table)],
        Plan::Update(p) | Plan::Delete(p) => vec![named(&p.table)],
        Plan::Multi(m) => m
            .targets
            .iter()
            .map(|t| (t.table.clone(), Some(t.alias.clone())))
            .collect(),
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
            let name = item
                .alias
                .clone()
                .unwrap_or_else(|| item.table.name.clone());
            // A view locks the base tables its query reads, under its name.
            for table in self.lockable(&item.table)? {
                names.push(Named {
                    name: name.clone(),
                    table,
                    write: item.write,
                });
            }
        }
        if self.table_locks.global.is_some() && names.iter().any(|n| n.write) {
            return Err(read_lock_conflict());
        }
        let implicit = self.implicit(&names);
        let holds = self.take_holds(&names, &implicit).await?;
        self.table_locks.names = names;
        self.table_locks.holds = holds;
        self.table_locks.implicit_writes = implicit.writes;
        Ok(ok(0))
    }

    /// The tables LOCK TABLES locks for `name`: LOCK TABLES privilege on
    /// its database and SELECT on it (1044 / 1142). A view's are the base
    /// tables its query reads (views in it included), as in MySQL.
    fn lockable(&self, name: &ObjectName) -> R<Vec<Arc<Table>>> {
        if let Some(view) = self.binder().view(name) {
            self.grants.check_lock_table(&view.database, &view.name)?;
            return self.view_tables(&view.database, &view.name);
        }
        let t = self.binder().table(name)?;
        let def = t.def();
        self.grants.check_lock_table(&def.database, &def.name)?;
        Ok(vec![t])
    }

    /// The base tables `SELECT * FROM db.view` reads.
    fn view_tables(&self, db: &str, view: &str) -> R<Vec<Arc<Table>>> {
        use crate::plan::ddl::quote_ident;
        let sql = format!("SELECT * FROM {}.{}", quote_ident(db), quote_ident(view));
        let stmt = crate::parser::parse(&sql)?.remove(0);
        // None: a view over system tables, which need no lock.
        Ok(self.bind(&stmt)?.map(|b| b.tables).unwrap_or_default())
    }

    /// What the triggers and foreign keys of the tables locked WRITE
    /// reach: locked too, as in MySQL (a table a trigger writes is locked
    /// WRITE even when named READ; statements still use it by its name).
    fn implicit(&self, names: &[Named]) -> Reach {
        let written: Vec<_> = names
            .iter()
            .filter(|n| n.write)
            .map(|n| n.table.clone())
            .collect();
        prelock::reach(&self.engine.catalog, &written)
    }

    /// Takes one hold per distinct table, in table-id order, never
    /// waiting while holding any (see the module comment).
    async fn take_holds(&self, names: &[Named], implicit: &Reach) -> R<Vec<Hold>> {
        let mut wanted: Vec<(Arc<Table>, Mode)> = Vec::new();
        let asked = |w: bool| if w { Mode::Write } else { Mode::Read };
        let named = names.iter().map(|n| (&n.table, asked(n.write)));
        let reached = (implicit.writes.iter().map(|t| (t, Mode::SharedWrite)))
            .chain(implicit.reads.iter().map(|t| (t, Mode::Shared)));
        for (table, mode) in named.chain(reached).filter(|(t, _)| !t.temporary) {
            match wanted.iter_mut().find(|(t, _)| Arc::ptr_eq(t, table)) {
                Some(w) => w.1 = w.1.max(mode),
                None => wanted.push((table.clone(), mode)),
            }
        }
        wanted.sort_by_key(|(t, _)| t.id);
        let deadline = Instant::now() + self.mdl_timeout();
        let mut holds: Vec<Hold> = Vec::new();
        'again: loop {
            for (t, mode) in &wanted {
                if holds.iter().any(|h| Arc::ptr_eq(&h.table, t)) {
                    continue;
                }
                if let Some(h) = try_hold(t, *mode, !holds.is_empty()) {
                    holds.push(h);
                    continue;
                }
                holds.clear();
                let wait = wait_hold(t.clone(), *mode, deadline);
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
            return Err(lock_or_transaction());
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
        if self.table_locks.active() && matches!(stmt, Statement::RenameTable { .. }) {
            return Err(lock_or_transaction());
        }
        if !super::changes_schema(stmt) {
            return Ok(None);
        }
        if self.table_locks.global.is_some() {
            return Err(read_lock_conflict());
        }
        if self.table_locks.active() {
            ddl_under_lock(stmt)?;
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
    pub(super) async fn gate_writes(&mut self, plan: &super::Bound, reach: &Reach) -> R<()> {
        self.gate_written(written_as(plan), reach).await
    }

    /// The write gates of `written` (with the names the statement gives
    /// them) and of what the statement's functions, triggers and
    /// cascades write.
    pub(super) async fn gate_written(
        &mut self,
        written: Vec<(Arc<Table>, Option<String>)>,
        reach: &Reach,
    ) -> R<()> {
        if written.is_empty() && reach.writes.is_empty() {
            return Ok(());
        }
        if self.table_locks.global.is_some() {
            return Err(read_lock_conflict());
        }
        if self.table_locks.active() {
            return self.table_locks.check_writes(&written);
        }
        // Functions', triggers' and cascades' writes enter the gates too
        // (under LOCK TABLES `cover` checked them).
        let durable: Vec<_> = (written.into_iter().map(|(t, _)| t))
            .chain(reach.writes.iter().cloned())
            .filter(|t| !t.temporary)
            .collect();
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
        let none = Reach::default();
        if let Some(covered) = self.table_locks.cover(std::slice::from_ref(t), &[], &none) {
            return covered.map(|()| None);
        }
        if let Some(h) = try_hold(t, Mode::Read, false) {
            return Ok(Some(h));
        }
        let deadline = Instant::now() + self.mdl_timeout();
        wait_hold(t.clone(), Mode::Read, deadline).await.map(Some)
    }

    /// After DDL under LOCK TABLES: a table it rebuilt is a new object,
    /// held as the old one was (taken before the old is given back); a
    /// dropped one leaves the locks.
    pub(super) async fn follow_locked_tables(&mut self) -> R<()> {
        let catalog = &self.engine.catalog;
        let gone = |t: &Arc<Table>| {
            !t.temporary
                && !catalog
                    .table_by_id(t.id)
                    .is_some_and(|n| Arc::ptr_eq(&n, t))
        };
        let moved: Vec<(Arc<Table>, Mode)> = (self.table_locks.holds.iter())
            .filter(|h| gone(&h.table))
            .map(|h| (h.table.clone(), h.mode))
            .collect();
        let deadline = Instant::now() + self.mdl_timeout();
        for (old, mode) in moved {
            let def = old.def();
            let new = catalog.table(&def.database, &def.name);
            let locks = &mut self.table_locks;
            let same = |t: &Arc<Table>| Arc::ptr_eq(t, &old);
            let Some(new) = new.filter(|n| !same(n)) else {
                locks.names.retain(|n| !same(&n.table));
                locks.implicit_writes.retain(|t| !same(t));
                locks.holds.retain(|h| !same(&h.table));
                continue;
            };
            let hold = match try_hold(&new, mode, true) {
                Some(h) => h,
                None => until_killed(&self.process, wait_hold(new.clone(), mode, deadline)).await?,
            };
            let locks = &mut self.table_locks;
            for n in locks.names.iter_mut().filter(|n| same(&n.table)) {
                n.table = new.clone();
            }
            for t in locks.implicit_writes.iter_mut().filter(|t| same(t)) {
                *t = new.clone();
            }
            locks.holds.retain(|h| !same(&h.table));
            locks.holds.push(hold);
        }
        Ok(())
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

/// DDL under LOCK TABLES, as MySQL allows it: on tables locked WRITE
/// (checked as their locks are taken: `ddl_tables`), not creating a table
/// (1100: it is not locked) nor a database or view (1192). Renaming is
/// refused (1235): the lock would have to follow the new name.
fn ddl_under_lock(stmt: &Statement) -> R<()> {
    use crate::parser::AlterAction;
    match stmt {
        Statement::AlterTable { actions, .. }
            if actions
                .iter()
                .any(|a| matches!(a, AlterAction::RenameTable { .. })) =>
        {
            Err(Error::unsupported(
                "ALTER TABLE ... RENAME under LOCK TABLES",
            ))
        }
        Statement::AlterTable { .. }
        | Statement::CreateIndex { .. }
        | Statement::DropIndex { .. }
        | Statement::Truncate { .. }
        | Statement::DropTable { .. } => Ok(()),
        Statement::CreateTable(ct) => Err(not_locked(&ct.name.name)),
        _ => Err(lock_or_transaction()),
    }
}

fn lock_or_transaction() -> Error {
    Error::new(
        Code::LockOrActiveTransaction,
        "Can't execute the given command because you have active locked tables or an active transaction",
    )
}

fn read_lock_conflict() -> Error {
    Error::new(
        Code::CantUpdateWithReadlock,
        "Can't execute the query because you have a conflicting read lock",
    )
}

/// Takes `t` for LOCK TABLES if that needs no waiting.
fn try_hold(t: &Arc<Table>, mode: Mode, holds_others: bool) -> Option<Hold> {
    // Built only once taken: dropping a Hold gives the lock back.
    let hold = || Hold {
        table: t.clone(),
        mode,
    };
    if mode == Mode::Write {
        return poll_once(t.mdl.exclusive()).then(hold);
    }
    if !t.mdl.try_shared(holds_others) {
        return None;
    }
    let gated = match mode {
        Mode::Read => t.write_gate.try_lock(),
        Mode::SharedWrite => t.write_gate.try_write(holds_others),
        Mode::Shared | Mode::Write => true,
    };
    if !gated {
        t.mdl.release_shared();
        return None;
    }
    Some(hold())
}

/// Waits for `t` until `deadline` (1205), holding nothing else.
async fn wait_hold(t: Arc<Table>, mode: Mode, deadline: Instant) -> R<Hold> {
    let late = |_| Error::lock_wait_timeout();
    if mode == Mode::Write {
        timeout_at(deadline, t.mdl.exclusive())
            .await
            .map_err(late)?;
        return Ok(Hold { table: t, mode });
    }
    timeout_at(deadline, t.mdl.shared(false))
        .await
        .map_err(late)?;
    let gated = match mode {
        Mode::Read => timeout_at(deadline, t.write_gate.lock()).await.is_ok(),
        Mode::SharedWrite => timeout_at(deadline, t.write_gate.write(false))
            .await
            .is_ok(),
        Mode::Shared | Mode::Write => true,
    };
    if !gated {
        t.mdl.release_shared();
        return Err(Error::lock_wait_timeout());
    }
    Ok(Hold { table: t, mode })
}

/// Whether a lock request is granted at its first try (dropped if not,
/// which leaves the lock as it was).
fn poll_once(f: impl Future<Output = ()>) -> bool {
    let mut f = std::pin::pin!(f);
    f.as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_ready()
}
