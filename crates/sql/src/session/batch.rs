//! A COM_QUERY answered one result at a time. `start_query` parses the
//! batch and runs its first statement; the connection sends that result
//! and asks `next_result` for the next one, which runs the next statement
//! only then, so a client reads each result as its statement ends (MySQL
//! flags all but the last with SERVER_MORE_RESULTS_EXISTS, which
//! `more_results` tells). A streamed result is read to its end
//! (`more_rows`) before the next statement runs.

use super::{single_statement_error, Session, R};
use crate::parser::{self, Show, Statement};
use lockstep_types::result::Response;
use lockstep_types::Error;
use std::time::Instant;

/// The statements of a COM_QUERY not yet run, and the syntax error that
/// ended its parse (reported after the statements before it ran).
pub(super) struct Batch {
    statements: std::vec::IntoIter<Statement>,
    parse_error: Option<Error>,
}

impl Session {
    /// Runs one COM_QUERY: its first result (None: nothing to answer, or
    /// a LOAD DATA LOCAL waits for its file, `local_infile`).
    pub async fn start_query(&mut self, sql: &str, multi: bool) -> Option<R<Response>> {
        *self.process.command.lock() = "Query";
        *self.process.info.lock() = Some(sql.chars().take(1024).collect());
        *self.process.since.lock() = Instant::now();
        let (statements, parse_error) = parser::parse_batch_with(sql, !self.no_backslash_escapes);
        if let Some(early) = single_statement_error(sql, &statements, &parse_error, multi) {
            self.begin_diagnostics();
            let r = Err(early);
            self.record_error(&r);
            return Some(r);
        }
        self.drop_stream();
        self.queued.clear();
        self.batch = Some(Batch {
            statements: statements.into_iter(),
            parse_error,
        });
        self.next_result().await
    }

    /// The next result of the COM_QUERY `start_query` began (None once
    /// every result was given, or while a LOAD DATA LOCAL waits for its
    /// file). Asked only after a streamed result was read to its end.
    pub async fn next_result(&mut self) -> Option<R<Response>> {
        debug_assert!(self.stream.is_none(), "a streamed result is still open");
        let r = match self.queued.pop_front() {
            Some(r) => Some(r),
            None => self.run_next().await,
        };
        self.end_batch_if_done();
        r
    }

    /// Whether the COM_QUERY has more results after the one just given
    /// (SERVER_MORE_RESULTS_EXISTS).
    pub fn more_results(&self) -> bool {
        !self.queued.is_empty()
            || self
                .batch
                .as_ref()
                .is_some_and(|b| b.statements.len() > 0 || b.parse_error.is_some())
    }

    /// Every result of a COM_QUERY, each streamed one read whole except
    /// the last's (for callers that hold no connection: tests, the fuzzer).
    pub async fn query(&mut self, sql: &str, multi: bool) -> Vec<R<Response>> {
        let mut out = Vec::new();
        let mut next = self.start_query(sql, multi).await;
        while let Some(r) = next {
            let r = match r {
                Ok(Response::Rows(mut rs)) if self.more_results() => {
                    while self.streaming() {
                        match self.more_rows(&mut rs.rows).await {
                            Ok(Some(warnings)) => rs.warnings = warnings,
                            Ok(None) => {}
                            Err(e) => {
                                out.push(Err(e));
                                return out;
                            }
                        }
                    }
                    Ok(Response::Rows(rs))
                }
                r => r,
            };
            out.push(r);
            if !self.more_results() {
                break;
            }
            next = self.next_result().await;
        }
        out
    }

    /// Runs the batch's next statement (a CALL's result sets come before
    /// its own reply, queued); its syntax error once none is left.
    async fn run_next(&mut self) -> Option<R<Response>> {
        let batch = self.batch.as_mut()?;
        let Some(stmt) = batch.statements.next() else {
            // The statements before a syntax error ran; then the error.
            let e = batch.parse_error.take()?;
            return Some(Err(e));
        };
        self.process.counters.question();
        let diagnostics = matches!(stmt, Statement::Show(Show::Diagnostics { .. }));
        if !diagnostics {
            self.begin_diagnostics();
        }
        self.stream_next = self.stream_results;
        let r = self.run(&stmt, &[], None).await;
        if self.load_data.pending.is_some() {
            // The connection asks for the file; `infile_end` answers.
            return None;
        }
        // SHOW WARNINGS lists the warnings; its own reply reports none
        // (a client that fetches warnings after any reply with some
        // would otherwise ask again forever).
        let r = match diagnostics {
            true => r,
            false => self.count_warnings(r),
        };
        let r = self.to_results_charset(r);
        self.record_error(&r);
        if r.is_err() {
            // An error ends the batch: the statements after it do not run.
            self.batch = None;
        }
        if self.call_results.is_empty() {
            return Some(r);
        }
        self.queued.extend(self.call_results.drain(..).map(Ok));
        self.queued.push_back(r);
        self.queued.pop_front()
    }

    /// After each result: a batch with nothing more to answer ends, and
    /// the COM_QUERY with it unless rows or a file are still to come.
    pub(super) fn end_batch_if_done(&mut self) {
        if self.more_results() {
            return;
        }
        self.batch = None;
        if self.stream.is_none() && self.load_data.pending.is_none() {
            self.statement_done();
        }
    }

    /// Forgets the rest of a batch (a failed stream, a new command).
    pub(super) fn drop_batch(&mut self) {
        self.batch = None;
        self.queued.clear();
    }
}
