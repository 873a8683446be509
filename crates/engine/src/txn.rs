//! A transaction's private state: its id (assigned at the first write, as
//! InnoDB does for read-only transactions that turn read-write), its
//! ReadView, the row locks it holds, its undo list and the row events its
//! log record will carry.

use lockstep_binlog::{Gtid, PendingEvents};
use lockstep_lock::{LockKey, LockMode};
use lockstep_tables::{Table, Version};
use lockstep_txn::{ReadView, Ticket, TxnId};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "READ-UNCOMMITTED",
            Isolation::ReadCommitted => "READ-COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE-READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    pub fn parse(s: &str) -> Option<Isolation> {
        match s.to_ascii_uppercase().replace([' ', '_'], "-").as_str() {
            "READ-UNCOMMITTED" => Some(Isolation::ReadUncommitted),
            "READ-COMMITTED" => Some(Isolation::ReadCommitted),
            "REPEATABLE-READ" => Some(Isolation::RepeatableRead),
            "SERIALIZABLE" => Some(Isolation::Serializable),
            _ => None,
        }
    }

    /// Whether locking reads also lock the gaps between the rows they read
    /// (next-key locking, see `gap`).
    pub fn gap_locking(self) -> bool {
        matches!(self, Isolation::RepeatableRead | Isolation::Serializable)
    }

    /// Whether a consistent read keeps one view for the whole transaction.
    pub fn view_per_transaction(self) -> bool {
        matches!(self, Isolation::RepeatableRead | Isolation::Serializable)
    }
}

pub(crate) struct Undo {
    pub table: Arc<Table>,
    pub key: Vec<u8>,
    /// This transaction's own earlier version that the change replaced.
    pub prior_own: Option<Version>,
}

/// A SAVEPOINT: where the transaction stood (its row locks stay when it
/// rolls back to it, as in InnoDB).
#[derive(Clone, Copy, Debug)]
pub struct Savepoint {
    pub(crate) mark: Mark,
    /// The transaction it belongs to (`Txn::generation`).
    generation: u64,
}

/// Marks where the current statement began, for statement rollback.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Mark {
    undo: usize,
    events: (usize, u64),
    writeset: usize,
}

/// A transaction as monitoring sees it (`Txn::summary`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnSummary {
    /// None until its first write (a read-only transaction has no id).
    pub id: Option<TxnId>,
    /// Tells one transaction of a session from the next.
    pub generation: u64,
    pub locks: usize,
    pub rows_modified: usize,
    pub tables_in_use: usize,
    pub tables_written: usize,
}

pub struct Txn {
    pub isolation: Isolation,
    pub(crate) id: Option<TxnId>,
    pub(crate) view: Option<ReadView>,
    /// A closed view kept for the next one this session takes (its buffers
    /// and registration; `ReadView::close`).
    pub(crate) spare_view: Option<ReadView>,
    pub(crate) locks: HashMap<LockKey, LockMode>,
    pub(crate) lock_order: Vec<LockKey>,
    pub(crate) undo: Vec<Undo>,
    pub(crate) events: PendingEvents,
    pub(crate) writeset: Vec<u64>,
    /// The GTID to commit under when it is applied from another source
    /// (`Engine::apply`); None: a new one of this server.
    pub(crate) gtid: Option<Gtid>,
    pub(crate) mark: Mark,
    pub(crate) ticket: Option<Ticket>,
    /// A lock request being waited for; recorded as held once granted.
    pub(crate) pending_lock: Option<(LockKey, LockMode)>,
    /// The pending request is an insert intention: given back once granted.
    pub(crate) pending_transient: bool,
    /// Row images this transaction deleted or moved out of a secondary
    /// index: purge work once it commits (table, primary key, image).
    /// No image: the row was updated in place, and only its old version
    /// is to go.
    pub(crate) purge: Vec<(u32, Vec<u8>, Option<lockstep_tables::Row>)>,
    /// Tables this transaction holds a shared metadata lock on (mdl.rs),
    /// given back when it ends.
    pub(crate) tables: Vec<std::sync::Arc<lockstep_tables::Table>>,
    /// Write gates held (gates.rs): the tables it wrote, and the server's
    /// global one; given back when it ends.
    pub(crate) written: Vec<std::sync::Arc<lockstep_tables::Table>>,
    pub(crate) global_gate: Option<std::sync::Arc<lockstep_lock::WriteGate>>,
    /// Counts the transactions this session's `Txn` has run: a savepoint
    /// of an earlier one is gone.
    generation: u64,
    /// What a row lock held by another transaction does to the running
    /// statement (NOWAIT / SKIP LOCKED of a locking read).
    pub lock_wait: LockWaitPolicy,
}

/// How a statement meets a row lock another transaction holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockWaitPolicy {
    /// Waits for it (up to innodb_lock_wait_timeout).
    #[default]
    Wait,
    /// Fails at once with 3572.
    NoWait,
    /// Passes over the row.
    SkipLocked,
}

impl Drop for Txn {
    /// A transaction dropped without commit or rollback (its session went
    /// away abnormally) must not keep DDL waiting for ever.
    fn drop(&mut self) {
        for t in self.tables.drain(..) {
            t.mdl.release_shared();
        }
        self.written
            .drain(..)
            .for_each(|t| t.write_gate.release_write());
        if let Some(g) = self.global_gate.take() {
            g.release_write();
        }
    }
}

impl Txn {
    pub(crate) fn new(isolation: Isolation) -> Txn {
        Txn {
            isolation,
            id: None,
            view: None,
            spare_view: None,
            locks: HashMap::new(),
            lock_order: Vec::new(),
            undo: Vec::new(),
            events: PendingEvents::default(),
            writeset: Vec::new(),
            gtid: None,
            mark: Mark::default(),
            ticket: None,
            pending_lock: None,
            pending_transient: false,
            tables: Vec::new(),
            written: Vec::new(),
            global_gate: None,
            generation: 0,
            purge: Vec::new(),
            lock_wait: LockWaitPolicy::Wait,
        }
    }

    pub fn id(&self) -> Option<TxnId> {
        self.id
    }

    /// What information_schema.INNODB_TRX shows of it (None: not under
    /// way, no transaction to show).
    pub fn summary(&self) -> Option<TxnSummary> {
        self.under_way().then_some(TxnSummary {
            id: self.id,
            generation: self.generation,
            locks: self.lock_order.len(),
            rows_modified: self.undo.len(),
            tables_in_use: self.tables.len(),
            tables_written: self.written.len(),
        })
    }

    /// Whether the transaction has changed anything.
    pub fn has_writes(&self) -> bool {
        !self.events.is_empty() || !self.undo.is_empty()
    }

    pub fn holds_locks(&self) -> bool {
        !self.lock_order.is_empty()
    }

    /// Holds an id, a view or locks: it is inside the transaction system
    /// whether or not it holds a throttling slot right now.
    pub fn under_way(&self) -> bool {
        self.id.is_some() || self.view.is_some() || self.holds_locks()
    }

    pub fn admitted(&self) -> bool {
        self.ticket.is_some()
    }

    /// Whether this transaction's consistent reads see a version written
    /// by `writer`.
    pub fn sees(&self, writer: TxnId) -> bool {
        Some(writer) == self.id || writer == 0 || self.view.as_ref().is_some_and(|v| v.sees(writer))
    }

    /// Closes the view, if any, keeping it for reuse.
    pub(crate) fn close_view(&mut self) {
        if let Some(mut v) = self.view.take() {
            v.close();
            self.spare_view = Some(v);
        }
    }

    /// After commit or rollback (locks released): a fresh transaction at the
    /// same isolation level, keeping the closed view for reuse.
    pub(crate) fn renew(&mut self) {
        debug_assert!(
            self.tables.is_empty(),
            "metadata locks outlive their transaction"
        );
        self.close_view();
        let spare = self.spare_view.take();
        let tables = std::mem::take(&mut self.tables);
        let generation = self.generation + 1;
        *self = Txn::new(self.isolation);
        self.spare_view = spare;
        self.tables = tables;
        self.generation = generation;
    }

    /// Start of a statement: Read Committed takes a fresh view per
    /// statement; the statement-rollback mark moves here.
    pub fn start_statement(&mut self) {
        if !self.isolation.view_per_transaction() {
            self.close_view();
        }
        self.mark = Mark {
            undo: self.undo.len(),
            events: self.events.mark(),
            writeset: self.writeset.len(),
        };
    }

    pub(crate) fn take_statement_undo(&mut self) -> Vec<Undo> {
        self.take_undo_since(self.mark)
    }

    /// Where the transaction stands now: ROLLBACK TO SAVEPOINT undoes what
    /// came after.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            mark: Mark {
                undo: self.undo.len(),
                events: self.events.mark(),
                writeset: self.writeset.len(),
            },
            generation: self.generation,
        }
    }

    /// Whether `sp` was taken in this transaction (not one that ended).
    pub fn holds(&self, sp: &Savepoint) -> bool {
        sp.generation == self.generation && sp.mark.undo <= self.undo.len()
    }

    /// Cuts the changes, row events and writeset after `m`; returns the
    /// changes to undo.
    pub(crate) fn take_undo_since(&mut self, m: Mark) -> Vec<Undo> {
        debug_assert!(m.undo <= self.undo.len(), "a mark from the future");
        self.events.truncate(m.events);
        self.writeset.truncate(m.writeset);
        self.undo.split_off(m.undo.min(self.undo.len()))
    }
}
