//! A SQL session on a fresh engine, for tests that run statements and
//! check their results or MySQL errors.

use crate::{Globals, Server, Session};
use lockstep_engine::{Engine, EngineConfig, FlushMode};
use lockstep_protocol::Response;
use lockstep_types::{Error, Value};
use std::sync::Arc;

/// A session on a fresh engine in a temporary directory.
pub struct Db {
    rt: tokio::runtime::Runtime,
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
        let mut cfg = EngineConfig::new(&dir);
        cfg.flush_mode = FlushMode::PerSecond;
        cfg.log_buffer_size = 1 << 20;
        let engine = Engine::open(cfg).expect("engine opens in a temp dir");
        let server = Server::new(engine, Globals::new(&[]));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let mut db = Db {
            rt,
            session: Session::new(Arc::clone(&server), 1, "root", "localhost"),
            dir,
        };
        db.ok("CREATE DATABASE d");
        db.ok("USE d");
        db
    }

    pub fn run(&mut self, sql: &str) -> Result<Response, Error> {
        let mut results = self.rt.block_on(self.session.query(sql, false));
        results.pop().expect("one result per statement")
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
