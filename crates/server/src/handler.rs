//! Bridges the wire protocol to a SQL session: one per connection.

use lockstep_protocol::{
    native_password, Column, Handler, Handshake, PreparedInfo, Response, Status,
};
use lockstep_sql::Session;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::sync::Arc;

pub struct Connection {
    pub session: Session,
    pub root_stage2: [u8; 20],
    pub server: Arc<lockstep_sql::Server>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // A panic skipped `disconnect`: still roll back and release locks.
        if std::thread::panicking() {
            self.session.disconnect();
        }
    }
}

impl Handler for Connection {
    fn authenticate(&mut self, hs: &Handshake<'_>) -> Result<(), Error> {
        let host = hs.peer.ip().to_string();
        if hs.user != "root"
            || !native_password::verify(hs.scramble, hs.auth_response, &self.root_stage2)
        {
            return Err(Error::new(
                Code::AccessDenied,
                format!(
                    "Access denied for user '{}'@'{}' (using password: {})",
                    hs.user,
                    host,
                    if hs.auth_response.is_empty() {
                        "NO"
                    } else {
                        "YES"
                    }
                ),
            ));
        }
        if let Some(db) = hs.database.filter(|d| !d.is_empty()) {
            self.session.use_database(db)?;
        }
        Ok(())
    }

    async fn query(&mut self, sql: &str, multi: bool) -> Vec<Result<Response, Error>> {
        self.session.query(sql, multi).await
    }

    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, Error> {
        self.session.prepare(sql)
    }

    async fn execute(&mut self, statement_id: u32, params: Vec<Value>) -> Result<Response, Error> {
        self.session.execute(statement_id, params).await
    }

    fn close_statement(&mut self, statement_id: u32) {
        self.session.close_statement(statement_id);
    }

    fn init_db(&mut self, db: &str) -> Result<(), Error> {
        self.session.use_database(db)
    }

    fn field_list(&mut self, table: &str, _wildcard: &str) -> Result<Vec<Column>, Error> {
        self.session.field_list(table)
    }

    fn statistics(&mut self) -> String {
        let s = &self.server;
        format!(
            "Uptime: {}  Threads: {}  Questions: {}  Slow queries: 0  Opens: 0  Open tables: {}  Queries per second avg: {:.3}",
            s.started.elapsed().as_secs(),
            s.processes.lock().len(),
            s.queries.load(std::sync::atomic::Ordering::Relaxed),
            s.engine.catalog.all_tables().len(),
            s.queries.load(std::sync::atomic::Ordering::Relaxed) as f64 / s.started.elapsed().as_secs_f64().max(1.0)
        )
    }

    fn reset_connection(&mut self) {
        self.session.reset();
    }

    fn status(&self) -> Status {
        self.session.status()
    }

    fn should_close(&self) -> bool {
        self.session.killed()
    }

    fn disconnect(&mut self) {
        self.session.disconnect();
    }
}
