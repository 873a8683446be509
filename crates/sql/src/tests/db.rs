//! A SQL session on a fresh engine, for tests that run statements and
//! check their results or MySQL errors.

use crate::{Globals, Prepared, Server, Session};
use lockstep_engine::{Engine, EngineConfig, FlushMode};
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::sync::Arc;

/// A session on a fresh engine in a temporary directory.
pub struct Db {
    rt: tokio::runtime::Runtime,
    pub server: Arc<Server>,
    session: Session,
    dir: std::path::PathBuf,
}

impl Db {
    pub fn new(name: &str) -> Db {
        let dir = std::env::temp_dir().join(format!(
            "lockstep-sql-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let engine = Engine::open(config(&dir)).expect("engine opens in a temp dir");
        let server = Server::new(engine, Globals::new(&[]));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let mut db = Db {
            rt,
            session: streaming(Session::new(Arc::clone(&server), 1, "root", "localhost")),
            server,
            dir,
        };
        db.ok("CREATE DATABASE d");
        db.ok("USE d");
        db
    }

    /// Shuts the engine down and opens it again on its directory (the
    /// log replayed after the last checkpoint), with a new session in `d`.
    pub fn reopen(&mut self) {
        self.session.disconnect();
        self.server.engine.shutdown();
        // The engine lets its directory go when dropped: the session and
        // server move to a stand-in engine meanwhile.
        let spare = self.dir.with_extension("spare");
        self.swap_engine(&spare);
        let dir = self.dir.clone();
        self.swap_engine(&dir);
        let _ = std::fs::remove_dir_all(&spare);
        self.ok("USE d");
    }

    fn swap_engine(&mut self, dir: &std::path::Path) {
        let engine = Engine::open(config(dir)).expect("engine opens");
        self.session.disconnect();
        self.server.engine.shutdown();
        self.server = Server::new(engine, Globals::new(&[]));
        let session = Session::new(Arc::clone(&self.server), 1, "root", "localhost");
        self.session = streaming(session);
    }

    pub fn run(&mut self, sql: &str) -> Result<Response, Error> {
        let mut results = self.rt.block_on(self.session.query(sql, false));
        let last = results.pop().expect("one result per statement");
        drain(&self.rt, &mut self.session, last)
    }

    pub fn ok(&mut self, sql: &str) -> Response {
        self.run(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"))
    }

    pub fn rows(&mut self, sql: &str) -> Vec<Vec<Value>> {
        match self.ok(sql) {
            Response::Rows(rs) => rs.rows,
            Response::Ok(_) => panic!("{sql}: no result set"),
        }
    }

    /// Runs `f` on this Db's session (for tests of session internals).
    pub fn with_session<R>(&mut self, f: impl FnOnce(&Session) -> R) -> R {
        f(&self.session)
    }

    /// Another session on the same server, in database `d`.
    pub fn session(&mut self, id: u64) -> Session {
        let mut s = streaming(Session::new(
            Arc::clone(&self.server),
            id,
            "root",
            "localhost",
        ));
        let used = self.rt.block_on(s.query("USE d", false)).pop();
        assert!(matches!(used, Some(Ok(_))), "USE d: {used:?}");
        s
    }

    /// Runs `f` (futures of several sessions at once) on this Db's runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Runs `sql` in another session `s` of this server.
    /// Every result of one COM_QUERY (a CALL's result sets, then its OK).
    pub fn run_all(&mut self, s: Option<&mut Session>, sql: &str) -> Vec<Result<Response, Error>> {
        let s = s.unwrap_or(&mut self.session);
        let mut results = self.rt.block_on(s.query(sql, false));
        if let Some(last) = results.pop() {
            results.push(drain(&self.rt, s, last));
        }
        results
    }

    pub fn run_in(&mut self, s: &mut Session, sql: &str) -> Result<Response, Error> {
        let mut results = self.rt.block_on(s.query(sql, false));
        let last = results.pop().expect("one result per statement");
        drain(&self.rt, s, last)
    }

    /// COM_STMT_PREPARE in `s` (this Db's own session if None).
    pub fn prepare(&mut self, s: Option<&mut Session>, sql: &str) -> Prepared {
        let s = s.unwrap_or(&mut self.session);
        s.prepare(sql)
            .unwrap_or_else(|e| panic!("prepare {sql}: {e:?}"))
            .1
    }

    /// COM_STMT_EXECUTE of `p` in `s` (this Db's own session if None),
    /// returning the rows.
    pub fn execute(
        &mut self,
        s: Option<&mut Session>,
        p: &mut Prepared,
        params: &[Value],
    ) -> Vec<Vec<Value>> {
        match self.try_execute(s, p, params) {
            Ok(Response::Rows(rs)) => rs.rows,
            other => panic!("execute: {other:?}"),
        }
    }

    /// COM_STMT_EXECUTE of `p`, its response or error.
    pub fn try_execute(
        &mut self,
        s: Option<&mut Session>,
        p: &mut Prepared,
        params: &[Value],
    ) -> Result<Response, Error> {
        let s = s.unwrap_or(&mut self.session);
        let first = self.rt.block_on(s.execute(p, params));
        drain(&self.rt, s, first)
    }

    /// The first row as a text-protocol client reads it (NULL as None),
    /// or the error's number.
    pub fn text(&mut self, sql: &str) -> Result<Vec<Option<String>>, u16> {
        let rs = match self.run(sql) {
            Ok(Response::Rows(rs)) => rs,
            Ok(Response::Ok(_)) => panic!("{sql}: no result set"),
            Err(e) => return Err(e.number()),
        };
        let row = rs.rows.first().unwrap_or_else(|| panic!("{sql}: no rows"));
        let mut out = Vec::new();
        lockstep_protocol::resultset::encode_text_row(&mut out, &rs.columns, row, &mut Vec::new());
        let mut c = lockstep_protocol::wire::Cursor::new(&out);
        let mut values = Vec::new();
        while !c.is_empty() {
            if out[c.position()] == 0xFB {
                c.skip(1).expect("NULL marker");
                values.push(None);
            } else {
                let b = c.lenenc_bytes().expect("length-encoded value");
                values.push(Some(String::from_utf8_lossy(b).into_owned()));
            }
        }
        Ok(values)
    }

    /// Codes of the last statement's warnings (SHOW WARNINGS).
    pub fn warnings(&mut self) -> Vec<u16> {
        self.rows("SHOW WARNINGS")
            .iter()
            .map(|r| r[1].to_i64().unwrap_or(0) as u16)
            .collect()
    }

    /// The first batch of `sql`'s result, and whether more rows follow
    /// (the rest is then read and dropped).
    pub fn first_batch(&mut self, sql: &str) -> (usize, bool) {
        let mut results = self.rt.block_on(self.session.query(sql, false));
        let Some(Ok(Response::Rows(rs))) = results.pop() else {
            panic!("{sql}: no result set");
        };
        let more = self.session.streaming();
        let _ = drain(&self.rt, &mut self.session, Ok(Response::Rows(rs.clone())));
        (rs.rows.len(), more)
    }

    pub fn err(&mut self, sql: &str) -> u16 {
        match self.run(sql) {
            Ok(_) => panic!("{sql}: expected an error"),
            Err(e) => e.number(),
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        self.session.disconnect();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The engine of a test: the SQL layer's conversions, a small log buffer.
fn config(dir: &std::path::Path) -> EngineConfig {
    let mut cfg = EngineConfig::new(dir);
    cfg.flush_mode = FlushMode::PerSecond;
    cfg.log_buffer_size = 1 << 20;
    cfg.convert = crate::expr::store_in_column;
    cfg.generate = crate::exec::rebuild_generator;
    cfg
}

/// Sessions of tests read streamed results to their end, as a connection
/// does, so large results exercise the batches.
fn streaming(mut s: Session) -> Session {
    s.stream_results = true;
    s
}

/// `first` with the rest of its rows, when it was streamed.
fn drain(
    rt: &tokio::runtime::Runtime,
    s: &mut Session,
    first: Result<Response, Error>,
) -> Result<Response, Error> {
    let Ok(Response::Rows(mut rs)) = first else {
        return first;
    };
    while s.streaming() {
        if let Some(warnings) = rt.block_on(s.more_rows(&mut rs.rows))? {
            rs.warnings = warnings;
        }
    }
    Ok(Response::Rows(rs))
}
