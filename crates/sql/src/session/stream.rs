//! A result set sent in batches (`exec::stream`). The first batch is the
//! statement's reply; the connection then asks for the rest with
//! `more_rows` until the last, and only then does the statement end (and
//! the next of its COM_QUERY run): an
//! autocommit SELECT keeps its read view and metadata locks until its last
//! row is produced, as a MySQL server does while it sends a result.

use super::{charset, Session, R};
use crate::exec::stream::ScanCursor;
use crate::exec::Exec;
use crate::plan::QueryPlan;
use lockstep_engine::Error as EngineError;
use lockstep_types::result::{Column, Response, ResultSet};
use lockstep_types::{Error, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Bytes of rows one batch holds (projected values, as exec counts them).
pub(crate) const BATCH_BYTES: usize = 512 << 10;

/// A streamed SELECT between batches.
pub(crate) struct PendingStream {
    pub plan: Arc<QueryPlan>,
    pub params: Vec<Value>,
    pub cursor: ScanCursor,
    /// The statement ran inside a transaction: it does not end with it.
    pub in_trx: bool,
    /// max_execution_time of the statement, for every batch.
    pub deadline: Option<Instant>,
}

impl Session {
    /// Bytes of one batch: BATCH_BYTES, within half the statement's cap.
    pub(crate) fn batch_bytes(&self) -> usize {
        BATCH_BYTES.min(self.ctx.memory.statement / 2).max(1)
    }

    /// Whether the last reply has more rows to come.
    pub fn streaming(&self) -> bool {
        self.stream.is_some()
    }

    /// The next rows of the streamed result, appended to `out`: None while
    /// more follow, else the statement's warning count (it has ended).
    pub async fn more_rows(&mut self, out: &mut Vec<Vec<Value>>) -> R<Option<u16>> {
        let Some(mut s) = self.stream.take() else {
            return Ok(Some(0));
        };
        if !self.txn.admitted() {
            self.engine.admit(&mut self.txn).await;
        }
        self.ctx.interrupt.deadline = s.deadline;
        // Each batch looks for KILL and the deadline (a batch may hold
        // fewer rows than the scan's own looks are apart).
        let batch = match self.ctx.interrupt.check() {
            Err(e) => Err(EngineError::Sql(e)),
            Ok(()) => {
                let bytes = self.batch_bytes();
                let mut exec = Exec::new(&self.engine, &mut self.txn, &mut self.ctx, &s.params);
                exec.select_batch(&s.plan, &mut s.cursor, bytes)
            }
        };
        self.ctx.interrupt.deadline = None;
        let rows = match batch {
            Ok(rows) => rows,
            Err(e) => return Err(self.fail_stream(&s, e)),
        };
        out.extend(self.results_rows(&s.plan.columns, rows));
        if !s.cursor.done {
            // The client may read slowly: the throttle slot goes to others.
            self.engine.park(&mut self.txn);
            self.stream = Some(s);
            return Ok(None);
        }
        self.ctx.found_rows = s.cursor.sent;
        if !s.in_trx {
            self.commit().await?;
        }
        // A statement of a batch with more to run: the COM_QUERY goes on.
        if self.batch.is_none() {
            self.statement_done();
        }
        let n = self.count_warnings(Ok(Response::Rows(ResultSet::default())));
        Ok(Some(match n {
            Ok(Response::Rows(rs)) => rs.warnings,
            _ => 0,
        }))
    }

    /// Keeps `pending` to send after the first batch (`run_dml`).
    pub(crate) fn keep_stream(&mut self, pending: PendingStream) {
        debug_assert!(self.stream.is_none(), "one result streams at a time");
        self.engine.park(&mut self.txn);
        self.stream = Some(pending);
    }

    /// Ends a stream the client did not read to its end (the connection
    /// failed, or a new command came first): its statement ends.
    pub(crate) fn drop_stream(&mut self) {
        self.drop_batch();
        if let Some(s) = self.stream.take() {
            if !s.in_trx {
                self.engine.rollback(&mut self.txn);
                self.apply_next_isolation();
            }
            self.statement_done();
        }
    }

    /// A batch failed: the statement (and an autocommit transaction) ends.
    fn fail_stream(&mut self, s: &PendingStream, e: EngineError) -> Error {
        self.engine.rollback_statement(&mut self.txn);
        let e = match e {
            EngineError::Sql(e) => e,
            EngineError::LockWait(_) => Error::internal("a streamed result waited for a row lock"),
        };
        if e.rolls_back_transaction() {
            self.engine.rollback(&mut self.txn);
            self.explicit = false;
        }
        if !s.in_trx {
            self.engine.rollback(&mut self.txn);
            self.apply_next_isolation();
        }
        // The error ends the COM_QUERY: the statements after it do not run.
        self.drop_batch();
        self.statement_done();
        e
    }

    /// Rows as the client's character_set_results wants them.
    fn results_rows(&self, columns: &Arc<[Column]>, rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
        let results = charset::session_charset(&self.ctx.session_vars, "character_set_results");
        let mut r = Response::Rows(ResultSet {
            columns: columns.clone(),
            rows,
            warnings: 0,
        });
        charset::encode_results(&mut r, results);
        match r {
            Response::Rows(rs) => rs.rows,
            Response::Ok(_) => unreachable!("encoding keeps the kind of reply"),
        }
    }

    /// What the end of a COM_QUERY does, done when its streamed result ends.
    pub(super) fn statement_done(&mut self) {
        self.publish_trx(None);
        *self.process.command.lock() = "Sleep";
        *self.process.info.lock() = None;
        self.process.kill_query.store(false, Ordering::Relaxed);
    }
}
