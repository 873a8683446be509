//! Write gates as transactions take them (the gate is
//! `lockstep_lock::WriteGate`): a transaction that writes a table enters
//! the server's global gate and the table's gate as a writer and stays
//! until it ends, so FLUSH TABLES WITH READ LOCK and LOCK TABLES ... READ
//! wait for the writes in flight and hold back new ones.

use crate::engine::Engine;
use crate::txn::Txn;
use lockstep_tables::Table;
use lockstep_types::Error as SqlError;
use std::sync::Arc;
use std::time::Duration;

impl Engine {
    /// Enters the gates `txn` needs to write `tables` where that needs no
    /// waiting; false at the first that does (those before it are kept).
    pub fn try_gate_writes(&self, txn: &mut Txn, tables: &[Arc<Table>]) -> bool {
        let others = holds_any(txn);
        if txn.global_gate.is_none() && self.global_gate.try_write(others) {
            txn.global_gate = Some(self.global_gate.clone());
        }
        if txn.global_gate.is_none() {
            return false;
        }
        for t in unwritten(txn, tables) {
            match t.write_gate.try_write(others) {
                true => txn.written.push(t),
                false => return false,
            }
        }
        true
    }

    /// Waits to enter the gates (after `try_gate_writes` failed); 1205
    /// past `timeout`.
    pub async fn gate_writes(
        &self,
        txn: &mut Txn,
        tables: &[Arc<Table>],
        timeout: Duration,
    ) -> Result<(), SqlError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let others = holds_any(txn);
        if txn.global_gate.is_none() {
            let wait = self.global_gate.write(others);
            tokio::time::timeout_at(deadline, wait)
                .await
                .map_err(|_| SqlError::lock_wait_timeout())?;
            txn.global_gate = Some(self.global_gate.clone());
        }
        for t in unwritten(txn, tables) {
            tokio::time::timeout_at(deadline, t.write_gate.write(others))
                .await
                .map_err(|_| SqlError::lock_wait_timeout())?;
            txn.written.push(t);
        }
        Ok(())
    }
}

/// Those of `tables` whose gate `txn` has not entered yet.
fn unwritten(txn: &Txn, tables: &[Arc<Table>]) -> Vec<Arc<Table>> {
    let held = |t: &&Arc<Table>| txn.written.iter().any(|w| Arc::ptr_eq(w, t));
    tables.iter().filter(|t| !held(t)).cloned().collect()
}

/// The transaction held locks before the statement: it passes waiting
/// lockers (see the gate's module comment).
fn holds_any(txn: &Txn) -> bool {
    !txn.tables.is_empty() || !txn.written.is_empty()
}
