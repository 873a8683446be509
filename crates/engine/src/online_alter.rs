//! Online ALTER TABLE (InnoDB's online rebuild, fitted to in-memory MVCC
//! tables). The ALTER holds the table's shared-upgradable metadata lock
//! while it copies the rows of a snapshot into the new table, so readers
//! and writers go on; the table captures the keys they write meanwhile
//! (`lockstep_tables::capture`). Then the lock is upgraded to exclusive
//! (new transactions wait, running ones finish), the captured keys' rows
//! are read again and applied to the copy, converted as the copy did, and
//! the change is logged and switched in as `alter_table_with` does.
//!
//! Crash safety is the copying ALTER's: the logged event is the commit
//! point and recovery redoes it on the rows replayed before it. That
//! redo gives the same table because nothing of the online copy depends
//! on row order (sources with a counter are not done online; the caller
//! refuses LOCK=NONE for them).

use crate::alter::{put_row, Uniques};
use crate::engine::Engine;
use crate::txn::{Isolation, Txn};
use lockstep_binlog::ColumnSource;
use lockstep_tables::capture::Capture;
use lockstep_tables::{CheckConstraint, Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::names::{check_name, NameKind};
use lockstep_types::{Error as SqlError, Value};
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Rows copied between two yields (and memory checks).
const SLICE: u64 = 4096;

/// A table's shared-upgradable metadata lock, exclusive once upgraded;
/// released when dropped.
pub struct UpgradableLock {
    table: Arc<Table>,
    upgraded: bool,
    /// Held exclusive by the caller (LOCK TABLES ... WRITE), not by this
    /// lock: nothing to give back.
    borrowed: bool,
}

impl UpgradableLock {
    /// For a table the caller holds exclusive already.
    pub fn held_by_caller(table: Arc<Table>) -> UpgradableLock {
        UpgradableLock {
            table,
            upgraded: true,
            borrowed: true,
        }
    }

    /// Upgrades to exclusive once the transactions using the table end;
    /// 1205 past `timeout` (still holding the upgradable lock).
    pub async fn upgrade(&mut self, timeout: Duration) -> Result<(), SqlError> {
        if !self.upgraded {
            tokio::time::timeout(timeout, self.table.mdl.upgrade())
                .await
                .map_err(|_| SqlError::lock_wait_timeout())?;
            self.upgraded = true;
        }
        Ok(())
    }
}

impl Drop for UpgradableLock {
    fn drop(&mut self) {
        if self.borrowed {
            return;
        }
        match self.upgraded {
            true => self.table.mdl.release_upgraded(),
            false => self.table.mdl.release_upgradable(),
        }
    }
}

/// What an online ALTER needs besides the table and its new definition.
pub struct OnlineAlter {
    pub sources: Vec<ColumnSource>,
    pub checks: Option<Vec<CheckConstraint>>,
    /// Bytes the captured keys may take (the statement's memory cap).
    pub capture_limit: usize,
    /// lock_wait_timeout, for the upgrade.
    pub timeout: Duration,
}

impl Engine {
    /// Takes `table`'s shared-upgradable lock (waits for other DDL on it;
    /// 1205 past `timeout`).
    pub async fn lock_upgradable(
        &self,
        table: &Arc<Table>,
        timeout: Duration,
    ) -> Result<UpgradableLock, SqlError> {
        tokio::time::timeout(timeout, table.mdl.upgradable())
            .await
            .map_err(|_| SqlError::lock_wait_timeout())?;
        Ok(UpgradableLock {
            table: table.clone(),
            upgraded: false,
            borrowed: false,
        })
    }

    /// Rebuilds `table` as `def` online under `lock` (upgradable, held by
    /// the caller), `check` accepting the result under the exclusive lock
    /// before it is logged. On error nothing has changed.
    pub async fn alter_table_online(
        &self,
        table: &Arc<Table>,
        mut def: TableDef,
        how: OnlineAlter,
        lock: &mut UpgradableLock,
        check: impl FnOnce(&Arc<Table>) -> Result<(), SqlError>,
    ) -> Result<Arc<Table>, SqlError> {
        debug_assert!(Arc::ptr_eq(&lock.table, table) && (!lock.upgraded || lock.borrowed));
        debug_assert!(!how.sources.contains(&ColumnSource::Counter));
        check_name(NameKind::Table, &def.name)?;
        for c in &def.columns {
            check_name(NameKind::Column, &c.name)?;
        }
        for ix in &def.indexes {
            check_name(NameKind::Index, &ix.name)?;
        }
        def.id = self.catalog.allocate_table_id();
        let capture = Capture::new(how.capture_limit);
        let built = {
            let _capturing = table.capture.start(capture.clone());
            // The view is taken after capture starts: a write it does not
            // see is either captured or found by the copy (see `copy`).
            let mut txn = self.begin(Isolation::RepeatableRead);
            self.snapshot_now(&mut txn);
            let copied = self
                .online_copy(table, &def, &how.sources, &capture, &txn)
                .await;
            let caught_up = match copied {
                Ok((built, mut uniques)) => {
                    let upgraded = lock.upgrade(how.timeout).await;
                    upgraded.and_then(|_| {
                        let keys = captured(&capture)?;
                        let ctx = CatchUp {
                            old: table,
                            new: &built,
                            def: &def,
                            sources: &how.sources,
                        };
                        self.catch_up(&ctx, &keys, &mut uniques, &txn)?;
                        Ok(built)
                    })
                }
                Err(e) => Err(e),
            };
            self.rollback(&mut txn);
            caught_up?
        };
        built.auto_increment.store(
            table.auto_increment.load(Ordering::SeqCst),
            Ordering::SeqCst,
        );
        built
            .next_row_id
            .store(table.next_row_id.load(Ordering::SeqCst), Ordering::SeqCst);
        check(&built)?;
        self.switch_table(table, built, def, how.sources, None, how.checks.into())
            .await
    }

    /// Copies the rows `view` sees into a new table. A record whose newest
    /// version the view does not see was written by a transaction the
    /// snapshot missed, maybe before the capture started: its key is
    /// captured here, so the switch reads it again.
    async fn online_copy(
        &self,
        table: &Table,
        def: &TableDef,
        sources: &[ColumnSource],
        capture: &Capture,
        view: &Txn,
    ) -> Result<(Arc<Table>, Uniques), SqlError> {
        let old_def = table.def();
        let new = Arc::new(Table::new(def.clone()));
        let mut uniques = Uniques::new(def);
        let mut rows = 0u64;
        let mut scanned = 0u64;
        for entry in table.range(Bound::Unbounded, Bound::Unbounded, false) {
            let record = entry.value();
            if record.latest().is_some_and(|v| !view.sees(v.txn)) {
                capture.note(entry.key());
            }
            scanned += 1;
            if scanned.is_multiple_of(SLICE) {
                lockstep_types::memory::check_statement()?;
                tokio::task::yield_now().await;
            }
            let Some(row) = record.read(|w| view.sees(w)) else {
                continue;
            };
            rows += 1;
            let values = self.new_row(&old_def, def, sources, &row.to_values(), rows, None)?;
            put_row(&new, &mut uniques, def, &values)?;
        }
        Ok((new, uniques))
    }

    /// Under the exclusive lock: each captured key's row as the snapshot
    /// saw it leaves the copy, then its row as it is now (every writer
    /// has ended) goes in, converted as the copy converted.
    fn catch_up(
        &self,
        c: &CatchUp<'_>,
        keys: &[Vec<u8>],
        uniques: &mut Uniques,
        view: &Txn,
    ) -> Result<(), SqlError> {
        let old_def = c.old.def();
        let mut now = Vec::with_capacity(keys.len());
        for key in keys {
            let Some(record) = c.old.record(key) else {
                continue;
            };
            if let Some(before) = record.read(|w| view.sees(w)) {
                let values =
                    self.new_row(&old_def, c.def, c.sources, &before.to_values(), 1, None)?;
                remove_row(c.new, uniques, c.def, &values);
            }
            if let Some(row) = record.latest().and_then(|v| v.row) {
                now.push(row);
            }
        }
        let base = c.new.primary_len() as u64;
        for (i, row) in now.iter().enumerate() {
            let n = base + i as u64 + 1;
            let values = self.new_row(&old_def, c.def, c.sources, &row.to_values(), n, None)?;
            put_row(c.new, uniques, c.def, &values)?;
        }
        Ok(())
    }
}

/// The tables and layout a catch-up works on.
struct CatchUp<'a> {
    old: &'a Table,
    new: &'a Table,
    def: &'a TableDef,
    sources: &'a [ColumnSource],
}

/// The captured keys, or MySQL's error when there were too many.
fn captured(capture: &Capture) -> Result<Vec<Vec<u8>>, SqlError> {
    if capture.overflowed() {
        return Err(SqlError::new(
            Code::OnlineLogTooBig,
            "Creating index 'PRIMARY' required more than 'innodb_online_alter_log_max_size' bytes of modification log. Please try again.",
        ));
    }
    Ok(capture.take())
}

/// Takes a copied row (in the new layout) out of the table being built.
fn remove_row(new: &Table, uniques: &mut Uniques, def: &TableDef, values: &[Value]) {
    let pk = def.index_key(0, values);
    if new.record(&pk).is_none() {
        return;
    }
    {
        let schema = new.schema();
        for (i, index) in schema.secondary.iter().enumerate() {
            index.remove(&def.secondary_entry(i + 1, values, &pk)[..]);
        }
    }
    uniques.forget(def, values);
    new.remove_record(&pk);
}
