//! Applying a logged transaction record from another node (the replica's
//! applier, 9.4): unlike recovery's replay, which writes rows straight into
//! the tables before anyone reads them, `apply` runs as a transaction on a
//! live engine. It takes row locks, writes versions MVCC readers see only
//! once it commits, and commits through the client path (log, durability,
//! visibility) under the record's own GTID. A GTID already executed is
//! skipped; a record that does not fit this node's data (unknown table,
//! missing row, duplicate key) is an error, never silently dropped.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lockstep_binlog::{Event, TxnRecord};
use lockstep_lock::LockMode;
use lockstep_tables::Table;
use lockstep_types::error::Code;
use lockstep_types::{Error as SqlError, Value};

use crate::engine::{Engine, Error};
use crate::txn::{Isolation, Txn};

/// What `apply` did with a record.
#[derive(Debug, PartialEq, Eq)]
pub enum Applied {
    Committed,
    /// Its GTID was executed here before: nothing changed.
    AlreadyExecuted,
}

/// How long a DDL record waits for the metadata locks of its tables.
const DDL_LOCK_WAIT: Duration = Duration::from_secs(50);

/// The applier's settings, changed by SET GLOBAL and read for each
/// transaction: how long a row event waits for a row lock
/// (innodb_lock_wait_timeout) and how often a transaction that lost a
/// deadlock or timed out is retried (replica_transaction_retries).
pub struct ApplierSettings {
    lock_wait_secs: AtomicU64,
    retries: AtomicU64,
}

impl Default for ApplierSettings {
    /// MySQL's defaults: 50 s, 10 retries.
    fn default() -> ApplierSettings {
        ApplierSettings {
            lock_wait_secs: AtomicU64::new(50),
            retries: AtomicU64::new(10),
        }
    }
}

impl ApplierSettings {
    pub fn set_lock_wait_secs(&self, secs: u64) {
        self.lock_wait_secs.store(secs.max(1), Ordering::Relaxed);
    }
    pub fn set_retries(&self, n: u64) {
        self.retries.store(n, Ordering::Relaxed);
    }
    pub fn lock_wait(&self) -> Duration {
        Duration::from_secs(self.lock_wait_secs.load(Ordering::Relaxed))
    }
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }
}

/// A deadlock or a lock wait timeout: the transaction may succeed when
/// run again (MySQL's transient errors for replica_transaction_retries).
fn transient(e: &SqlError) -> bool {
    matches!(e.code, Code::LockDeadlock | Code::LockWaitTimeout)
}

/// The pause before retry `attempt` (1-based): doubling from 10 ms, at
/// most one second, so a conflicting client can finish.
fn backoff(attempt: u64) -> Duration {
    Duration::from_millis(10u64 << attempt.min(7)).min(Duration::from_secs(1))
}

/// How a parallel applier keeps the source's commit order
/// (replica_preserve_commit_order) while commits share fsyncs: a
/// transaction reserves its log space in its turn and passes the turn on
/// at once, so the next one's record joins the same group commit; it
/// becomes visible in the same order.
pub trait ApplyOrder: Send {
    /// Resolves when this transaction may reserve its log space; false:
    /// abandon it (the applier is stopping).
    fn commit_turn(&mut self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>>;
    /// Its log space is reserved: the next may reserve its own.
    fn reserved(&mut self);
    /// Resolves when every transaction before it is visible.
    fn visible_turn(&mut self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
    /// It is visible: the next may become visible.
    fn visible(&mut self);
    /// The record's row work lost a deadlock or timed out and was rolled
    /// back; it is about to run again for the `attempt`th time. False:
    /// give up instead (the applier is stopping).
    fn retrying(&mut self, _attempt: u64, _error: &SqlError) -> bool {
        true
    }
}

/// No order to keep: one record applied on its own.
pub struct Unordered;

impl ApplyOrder for Unordered {
    fn commit_turn(&mut self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(std::future::ready(true))
    }
    fn reserved(&mut self) {}
    fn visible_turn(&mut self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::ready(()))
    }
    fn visible(&mut self) {}
}

impl Engine {
    /// Applies one record: its row events as one transaction, or its DDL.
    pub async fn apply(&self, record: &TxnRecord) -> Result<Applied, SqlError> {
        self.apply_ordered(record, &mut Unordered).await
    }

    /// `apply`, committing in the order `order` keeps (the row work of
    /// several records overlaps; their commits queue). A record whose
    /// commit turn resolves to false is rolled back with error 1593 (the
    /// applier is stopping). The order's steps are skipped when the record
    /// is already executed, fails, or is DDL (DDL waits for its commit
    /// turn only): the caller passes the turns on then.
    pub async fn apply_ordered(
        &self,
        record: &TxnRecord,
        order: &mut dyn ApplyOrder,
    ) -> Result<Applied, SqlError> {
        if self.gtid_done(record.gtid()) {
            return Ok(Applied::AlreadyExecuted);
        }
        let rows = record.events.iter().filter(|e| e.is_row_event()).count();
        if rows == 0 {
            if !order.commit_turn().await {
                return Err(stopped(record));
            }
            return self.apply_ddl(record).await;
        }
        if rows != record.events.len() {
            return Err(apply_error(
                record,
                Code::GetErrno,
                "row events and DDL in one record",
            ));
        }
        let mut txn = self.row_work(record, order).await?;
        if !order.commit_turn().await {
            self.rollback(&mut txn);
            return Err(stopped(record));
        }
        txn.gtid = Some(record.gtid());
        match self.commit_ordered(&mut txn, Some(order)).await {
            Ok(()) => Ok(Applied::Committed),
            // Applied by another worker between the check and the commit.
            Err(_) if self.gtid_done(record.gtid()) => Ok(Applied::AlreadyExecuted),
            Err(e) => Err(e),
        }
    }

    /// The record's row events as one uncommitted transaction. A deadlock
    /// or lock wait timeout rolls it back and runs it again, up to
    /// replica_transaction_retries times, before it is an error: the
    /// record's commit turn is not taken yet, so nothing after it waits
    /// on a lock it holds.
    async fn row_work(
        &self,
        record: &TxnRecord,
        order: &mut dyn ApplyOrder,
    ) -> Result<Txn, SqlError> {
        let mut attempt = 0;
        loop {
            let mut txn = self.begin(Isolation::RepeatableRead);
            let Err(e) = self.apply_events(&mut txn, record).await else {
                return Ok(txn);
            };
            self.rollback(&mut txn);
            attempt += 1;
            if !transient(&e) || attempt > self.applier.retries() || !order.retrying(attempt, &e) {
                return Err(e);
            }
            tokio::time::sleep(backoff(attempt)).await;
        }
    }

    async fn apply_events(&self, txn: &mut Txn, record: &TxnRecord) -> Result<(), SqlError> {
        for event in &record.events {
            self.apply_with_waits(txn, record, event).await?;
        }
        Ok(())
    }

    /// One row event, waiting for row locks as a client statement does: a
    /// wait undoes the event's partial work, then retries it.
    async fn apply_with_waits(
        &self,
        txn: &mut Txn,
        record: &TxnRecord,
        event: &Event,
    ) -> Result<(), SqlError> {
        loop {
            txn.start_statement();
            let wait = match self.apply_row_event(txn, record, event) {
                Ok(()) => return Ok(()),
                Err(Error::Sql(e)) => return Err(e),
                Err(Error::LockWait(wait)) => wait,
            };
            self.rollback_statement(txn);
            let key = wait.key();
            let granted = match tokio::time::timeout(self.applier.lock_wait(), wait).await {
                Ok(r) => r,
                Err(_) => return Err(SqlError::lock_wait_timeout()),
            };
            match granted {
                Ok(()) => self.lock_granted(txn, key),
                Err(_) => return Err(SqlError::deadlock()),
            }
        }
    }

    fn apply_row_event(
        &self,
        txn: &mut Txn,
        record: &TxnRecord,
        event: &Event,
    ) -> Result<(), Error> {
        let id = event.table().expect("only row events come here");
        let table = self.catalog.table_by_id(id).ok_or_else(|| {
            apply_error(record, Code::NoSuchTable, &format!("unknown table id {id}"))
        })?;
        let schema = table.schema();
        let def = &schema.def;
        let (pk, new) = match event {
            Event::Insert { row, .. } => {
                return match self.insert(txn, &table, &schema, row.clone())? {
                    Ok(_) => Ok(()),
                    Err(dup) => Err(duplicate(record, &table, &dup.key_text).into()),
                };
            }
            Event::Update { before, after, .. } => (def.index_key(0, before), Some(after.clone())),
            Event::Delete { before, .. } => (def.index_key(0, before), None),
            Event::UpdateRow { key, set, .. } => {
                let pk = crate::engine::primary_key_of(def, key);
                let mut row = self.current_row(txn, record, &table, &pk)?;
                for (c, v) in set {
                    let slot = row.get_mut(*c as usize).ok_or_else(|| {
                        let what = format!("column {c} beyond table `{}`", def.name);
                        apply_error(record, Code::GetErrno, &what)
                    })?;
                    *slot = v.clone();
                }
                (pk, Some(row))
            }
            Event::DeleteRow { key, .. } => (crate::engine::primary_key_of(def, key), None),
            _ => unreachable!("DDL events are applied by apply_ddl"),
        };
        let old = self.current_row(txn, record, &table, &pk)?;
        match new {
            Some(new) => match self.update(txn, &table, &schema, &pk, &old, new)? {
                Ok(()) => Ok(()),
                Err(dup) => Err(duplicate(record, &table, &dup.key_text).into()),
            },
            None => self.delete(txn, &table, &schema, &pk, &old),
        }
    }

    /// The newest version of the row at `pk`, locked exclusively; a row
    /// that is not there is an error (the replica has diverged).
    fn current_row(
        &self,
        txn: &mut Txn,
        record: &TxnRecord,
        table: &Arc<Table>,
        pk: &[u8],
    ) -> Result<Vec<Value>, Error> {
        match self.read_locked(txn, table, pk, LockMode::Exclusive)? {
            Some(row) => Ok(row.to_values()),
            None => Err(SqlError::new(
                Code::KeyNotFound,
                format!(
                    "Can't find record in '{}' (applying GTID {})",
                    table.def().name,
                    record.gtid()
                ),
            )
            .into()),
        }
    }

    /// A DDL record: checked against the catalog, logged under its GTID,
    /// then applied with the tables it changes locked exclusively.
    async fn apply_ddl(&self, record: &TxnRecord) -> Result<Applied, SqlError> {
        let mut tables = Vec::new();
        for event in &record.events {
            self.check_ddl_event(record, event, &mut tables)?;
        }
        let _locks = self.lock_for_ddl(&tables, DDL_LOCK_WAIT).await?;
        self.ddl_version
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let in_flight = self
            .log_events_as(record.events.clone(), Some(record.gtid()))
            .await;
        let _in_flight = match in_flight {
            Ok(f) => f,
            Err(_) if self.gtid_done(record.gtid()) => return Ok(Applied::AlreadyExecuted),
            Err(e) => return Err(e),
        };
        for event in &record.events {
            self.replay_ddl_of(record, event);
        }
        self.ddl_version
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Applied::Committed)
    }

    /// Fails on a DDL event this node's catalog cannot take; collects the
    /// tables it changes.
    fn check_ddl_event(
        &self,
        record: &TxnRecord,
        event: &Event,
        tables: &mut Vec<Arc<Table>>,
    ) -> Result<(), SqlError> {
        match event {
            Event::CreateTable { def } => {
                let clash = self.catalog.table_by_id(def.id).is_some()
                    || self.catalog.table(&def.database, &def.name).is_some();
                if clash {
                    let what = format!(
                        "table `{}`.`{}` (id {}) exists",
                        def.database, def.name, def.id
                    );
                    return Err(apply_error(record, Code::TableExists, &what));
                }
            }
            // A table's constraints logged with its CREATE TABLE or ALTER.
            Event::SetForeignKeys { table, .. }
            | Event::SetChecks { table, .. }
            | Event::SetGenerated { table, .. }
            | Event::SetComments { table, .. }
            | Event::SetHistograms { table, .. }
            | Event::SetAutoIncrement { table, .. }
                if record.events.iter().any(|e| match e {
                    Event::CreateTable { def } | Event::AlterTable { def, .. } => def.id == *table,
                    _ => false,
                }) =>
            {
                return Ok(());
            }
            Event::CreateDatabase { name } if self.catalog.database_exists(name) => {
                let what = format!("database `{name}` exists");
                return Err(apply_error(record, Code::DbCreateExists, &what));
            }
            Event::DropDatabase { name } if !self.catalog.database_exists(name) => {
                let what = format!("unknown database `{name}`");
                return Err(apply_error(record, Code::DbDropExists, &what));
            }
            _ => {}
        }
        if let Some(id) = event.table() {
            let table = self.catalog.table_by_id(id).ok_or_else(|| {
                apply_error(record, Code::NoSuchTable, &format!("unknown table id {id}"))
            })?;
            tables.push(table);
        }
        Ok(())
    }
}

fn duplicate(record: &TxnRecord, table: &Table, key: &str) -> SqlError {
    SqlError::new(
        Code::DupEntry,
        format!(
            "Duplicate entry '{key}' in '{}' (applying GTID {})",
            table.def().name,
            record.gtid()
        ),
    )
}

/// A record this node cannot apply: its data has diverged from the source.
fn apply_error(record: &TxnRecord, code: Code, what: &str) -> SqlError {
    SqlError::new(code, format!("Cannot apply GTID {}: {what}", record.gtid()))
}

/// The applier gave up on a record before its turn to commit.
fn stopped(record: &TxnRecord) -> SqlError {
    SqlError::new(
        Code::ReplicaFatal,
        format!(
            "The replica applier stopped before committing GTID {}",
            record.gtid()
        ),
    )
}
