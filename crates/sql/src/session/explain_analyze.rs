//! EXPLAIN ANALYZE: the query runs (its rows are dropped) with every
//! table access measured, and the tree format is shown with, per access,
//! the rows it passed on, how often it was read and the time it took.

use super::{rows, Plan, Session, R};
use crate::exec::profile::{scan_key, Profile};
use crate::exec::Exec;
use crate::parser::Statement;
use crate::plan::QueryBody;
use lockstep_engine::Error as EngineError;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::time::Instant;

impl Session {
    pub(super) async fn explain_analyze(&mut self, stmt: &Statement) -> R<Response> {
        if !matches!(stmt, Statement::Select(_)) {
            return Err(Error::unsupported("EXPLAIN ANALYZE of this statement"));
        }
        let own = self.lock_plan(stmt, None).await?;
        let bound = own.expect("lock_plan binds when no plan is given");
        let Plan::Query(q) = &bound.plan else {
            return Err(Error::unsupported("EXPLAIN ANALYZE of this statement"));
        };
        if !self.txn.admitted() {
            self.engine.admit(&mut self.txn).await;
        }
        let in_trx = self.in_transaction();
        self.txn.start_statement();
        let start = Instant::now();
        let (result, profile) = {
            let mut exec = Exec::new(&self.engine, &mut self.txn, &mut self.ctx, &[]);
            exec.profile = Some(Profile::new());
            let r = exec.query(q);
            (r, exec.profile.take().unwrap_or_default())
        };
        let elapsed = start.elapsed();
        let produced = match result {
            Ok(rows) => rows.len(),
            Err(e) => {
                self.engine.rollback_statement(&mut self.txn);
                if !in_trx {
                    self.engine.rollback(&mut self.txn);
                }
                return Err(match e {
                    EngineError::Sql(e) => e,
                    EngineError::LockWait(_) => {
                        Error::internal("EXPLAIN ANALYZE waited for a lock")
                    }
                });
            }
        };
        if !in_trx {
            self.commit().await?;
        }
        let mut lines = vec![format!(
            "query: {produced} rows (actual time={:.3} ms)",
            elapsed.as_secs_f64() * 1e3
        )];
        if let QueryBody::Select(s) = &q.body {
            let mut measured = |t: &crate::plan::TableScan| match profile.get(&scan_key(t)) {
                Some(stats) => stats.describe(),
                None => " (never executed)".to_string(),
            };
            let tree = crate::plan::explain_measured(&s.source, &mut measured);
            lines.extend(tree.iter().map(|(t, a)| format!("{t}: {a}")));
        }
        let lines = lines.into_iter().map(|l| vec![Value::str(&l)]).collect();
        Ok(rows(&["EXPLAIN"], lines))
    }
}
