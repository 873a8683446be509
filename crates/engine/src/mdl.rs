//! Metadata locks as the engine hands them out (the lock itself is
//! `lockstep_lock::MetadataLock`, one per table): transactions take tables
//! shared and keep them until they end; DDL takes them exclusive for the
//! length of the change.

use crate::engine::Engine;
use crate::txn::Txn;
use lockstep_tables::Table;
use lockstep_types::Error as SqlError;
use std::sync::Arc;
use std::time::Duration;

/// Tables held exclusive by one DDL statement; released when dropped.
pub struct DdlLocks {
    tables: Vec<Arc<Table>>,
}

impl DdlLocks {
    /// For tables the caller holds exclusive already (LOCK TABLES ...
    /// WRITE): nothing is taken or given back.
    pub fn held_by_caller() -> DdlLocks {
        DdlLocks { tables: Vec::new() }
    }

    /// Whether `table` is among the locked ones.
    pub fn covers(&self, table: &Table) -> bool {
        self.tables.iter().any(|t| t.id == table.id)
    }
}

impl Drop for DdlLocks {
    fn drop(&mut self) {
        for t in &self.tables {
            t.mdl.release_exclusive();
        }
    }
}

impl Engine {
    /// Takes shared metadata locks on `tables` for `txn` where that needs
    /// no waiting; false at the first one that does (those before it are
    /// kept).
    pub fn try_use_tables(&self, txn: &mut Txn, tables: &[Arc<Table>]) -> bool {
        for t in tables {
            if txn.tables.iter().any(|held| Arc::ptr_eq(held, t)) {
                continue;
            }
            if !t.mdl.try_shared(!txn.tables.is_empty()) {
                return false;
            }
            txn.tables.push(t.clone());
        }
        true
    }

    /// Takes a shared metadata lock on each of `tables` for `txn` (held
    /// until it commits or rolls back). Waits while DDL holds a table, or
    /// is waiting for it and the transaction holds no table yet; past
    /// `timeout` the statement gets 1205.
    pub async fn use_tables(
        &self,
        txn: &mut Txn,
        tables: &[Arc<Table>],
        timeout: Duration,
    ) -> Result<(), SqlError> {
        for t in tables {
            if txn.tables.iter().any(|held| Arc::ptr_eq(held, t)) {
                continue;
            }
            let holds_others = !txn.tables.is_empty();
            if !t.mdl.try_shared(holds_others) {
                tokio::time::timeout(timeout, t.mdl.shared(holds_others))
                    .await
                    .map_err(|_| SqlError::lock_wait_timeout())?;
            }
            txn.tables.push(t.clone());
        }
        Ok(())
    }

    /// Takes `tables` exclusive for a DDL statement, in table-id order (so
    /// two DDL statements never wait for each other in a cycle), after
    /// every transaction using them has ended; 1205 past `timeout`.
    pub async fn lock_for_ddl(
        &self,
        tables: &[Arc<Table>],
        timeout: Duration,
    ) -> Result<DdlLocks, SqlError> {
        let mut order: Vec<Arc<Table>> = tables.to_vec();
        order.sort_by_key(|t| t.id);
        order.dedup_by_key(|t| t.id);
        let deadline = tokio::time::Instant::now() + timeout;
        let mut held = DdlLocks { tables: Vec::new() };
        for t in order {
            tokio::time::timeout_at(deadline, t.mdl.exclusive())
                .await
                .map_err(|_| SqlError::lock_wait_timeout())?;
            held.tables.push(t);
        }
        Ok(held)
    }

    /// Gives back the transaction's shared metadata locks (at its end).
    pub(crate) fn release_tables(txn: &mut Txn) {
        for t in txn.tables.drain(..) {
            t.mdl.release_shared();
        }
        txn.written
            .drain(..)
            .for_each(|t| t.write_gate.release_write());
        if let Some(g) = txn.global_gate.take() {
            g.release_write();
        }
    }
}
