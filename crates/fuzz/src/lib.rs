//! Harnesses shared by the fuzz targets: a whole connection driven by the
//! fuzzer's bytes against a mock handler (protocol targets), and a real SQL
//! session on a temporary engine (SQL target).

use lockstep_engine::{Engine, EngineConfig, FlushMode};
use lockstep_protocol::handshake::{caps, SERVER_CAPABILITIES};
use lockstep_protocol::{
    wire, Auth, Column, Config, Handler, Handshake, OkInfo, PreparedInfo, Response, ResultSet,
    Status,
};
use lockstep_sql::parser::{self, Scope, SetTarget, Statement};
use lockstep_sql::{Globals, Server, Session};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A single-threaded runtime for one fuzz process.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds")
}

/// Runs one connection whose client sends exactly `client` and then closes;
/// whatever the server answers is discarded. Limits are small enough that
/// the fuzzer reaches them.
pub fn serve_bytes(client: &[u8]) {
    static ENV: OnceLock<(tokio::runtime::Runtime, Config)> = OnceLock::new();
    let (rt, config) = ENV.get_or_init(|| {
        let config = Config {
            server_version: "8.0.36-lockstep".into(),
            max_allowed_packet: 64 << 10,
            connect_timeout: Duration::from_secs(5),
            wait_timeout: Duration::from_secs(5),
            ..Config::default()
        };
        (runtime(), config)
    });
    let stream = tokio::io::join(client, tokio::io::sink());
    let peer: SocketAddr = ([127, 0, 0, 1], 40000).into();
    let _ = rt.block_on(lockstep_protocol::serve(
        stream,
        1,
        peer,
        MockHandler::default(),
        config,
    ));
}

/// A HandshakeResponse41 for user root (the mock accepts any password),
/// framed with sequence id 1.
pub fn login_packet(deprecate_eof: bool) -> Vec<u8> {
    login_packet_with(deprecate_eof, false)
}

/// `login_packet`, with CLIENT_QUERY_ATTRIBUTES when `attributes` (every
/// COM_QUERY then starts with an attribute block).
pub fn login_packet_with(deprecate_eof: bool, attributes: bool) -> Vec<u8> {
    let mut capabilities = SERVER_CAPABILITIES;
    if !deprecate_eof {
        capabilities &= !caps::DEPRECATE_EOF;
    }
    if !attributes {
        capabilities &= !caps::QUERY_ATTRIBUTES;
    }
    let mut p = Vec::new();
    wire::put_u32(&mut p, capabilities);
    wire::put_u32(&mut p, 1 << 24);
    p.push(255);
    p.extend_from_slice(&[0; 23]);
    wire::put_null_terminated(&mut p, b"root");
    wire::put_lenenc_bytes(&mut p, &[7; 20]);
    wire::put_null_terminated(&mut p, b"mysql_native_password");
    frame(&p, 1)
}

/// One packet: 3-byte length, sequence id, payload (< 16 MiB).
pub fn frame(payload: &[u8], seq: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 4);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(payload);
    out
}

/// A handler that accepts every login, answers queries with a small result
/// set (or an error for text starting with "err"), prepares statements with
/// one parameter per '?' and echoes execute parameters back as a row, so
/// the protocol layer encodes whatever the client managed to send.
#[derive(Default)]
pub struct MockHandler {
    next_stmt: u32,
    /// The statements of the COM_QUERY not yet run.
    batch: std::collections::VecDeque<String>,
    in_tx: bool,
}

impl Handler for MockHandler {
    fn authenticate(&mut self, hs: &Handshake<'_>) -> Result<Auth, Error> {
        if hs.user == "deny" {
            return Err(Error::new(Code::AccessDenied, "Access denied"));
        }
        Ok(Auth::Accepted)
    }

    /// Every part of a multi-statement text is a statement, even empty.
    async fn query(&mut self, sql: &str, multi: bool) -> Option<Result<Response, Error>> {
        self.batch = match multi {
            true => sql.split(';').map(str::to_string).collect(),
            false => std::collections::VecDeque::from([sql.to_string()]),
        };
        self.next_result().await
    }

    fn more_results(&self) -> bool {
        !self.batch.is_empty()
    }

    async fn next_result(&mut self) -> Option<Result<Response, Error>> {
        let s = self.batch.pop_front()?;
        if s.starts_with("err") {
            self.batch.clear();
            return Some(Err(Error::parse(&s)));
        }
        self.in_tx = s.eq_ignore_ascii_case("begin");
        Some(Ok(Response::Rows(ResultSet {
            columns: vec![
                Column::new("n", DataType::BigInt { unsigned: false }),
                Column::new("s", DataType::VarChar { len: 255 }),
            ]
            .into(),
            rows: vec![vec![Value::Int(s.len() as i64), Value::str(&s)]],
            warnings: 0,
        })))
    }

    /// The statement's id: these statements keep nothing else.
    type Statement = u32;

    fn prepare(&mut self, sql: &str) -> Result<(PreparedInfo, u32), Error> {
        let n = sql.matches('?').count();
        self.next_stmt = self.next_stmt.wrapping_add(1);
        let info = PreparedInfo {
            statement_id: self.next_stmt,
            params: (0..n)
                .map(|_| Column::new("?", DataType::VarBinary { len: 0 }))
                .collect(),
            columns: Vec::new(),
        };
        Ok((info, self.next_stmt))
    }

    async fn execute(&mut self, _id: &mut u32, params: Vec<Value>) -> Result<Response, Error> {
        if params.is_empty() {
            return Ok(Response::Ok(OkInfo::default()));
        }
        Ok(Response::Rows(ResultSet {
            columns: params
                .iter()
                .enumerate()
                .map(|(i, v)| Column::typed_after(format!("p{i}"), v))
                .collect(),
            rows: vec![params],
            warnings: 0,
        }))
    }


    fn init_db(&mut self, db: &str) -> Result<(), Error> {
        if db == "test" {
            Ok(())
        } else {
            Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")))
        }
    }

    fn field_list(&mut self, _table: &str, _wildcard: &str) -> Result<Vec<Column>, Error> {
        Ok(vec![Column::new("id", DataType::Int { unsigned: false })])
    }

    fn statistics(&mut self) -> String {
        "Uptime: 1".into()
    }

    fn reset_connection(&mut self) {
        self.in_tx = false;
    }

    fn status(&self) -> Status {
        Status {
            in_transaction: self.in_tx,
            autocommit: true,
            ..Default::default()
        }
    }
}

/// Longest statement text the SQL target runs (longer inputs are only
/// parsed): keeps every run short.
pub const MAX_SQL: usize = 4096;

/// The fixed schema and rows every SQL input runs against.
const SCHEMA: &[&str] = &[
    "CREATE DATABASE fz",
    "CREATE TABLE fz.t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c DECIMAL(10,2), d DATETIME, KEY ka (a), KEY kb (b))",
    "CREATE TABLE fz.u (id INT AUTO_INCREMENT PRIMARY KEY, t_id INT NOT NULL, s TEXT, UNIQUE KEY ut (t_id, id))",
    "INSERT INTO fz.t VALUES (1, 10, 'apple', 1.50, '2024-01-02 03:04:05'), (2, 20, 'Banana', -2.25, NULL), (3, NULL, 'cherry', 0, '1999-12-31 23:59:59'), (4, 10, NULL, 99999999.99, '2000-02-29 00:00:00'), (5, -7, 'ÄPFEL', NULL, NULL)",
    "INSERT INTO fz.u (t_id, s) VALUES (1, 'x'), (1, 'y'), (2, ''), (3, NULL), (9, 'orphan')",
];

/// A real engine in a temporary directory with [`SCHEMA`]; every input runs
/// in a fresh session inside a transaction that is rolled back, so inputs
/// do not change what the next one sees.
pub struct SqlHarness {
    rt: tokio::runtime::Runtime,
    server: Arc<Server>,
    next_id: u64,
    /// The account inputs run as (None: root).
    user: Option<Arc<lockstep_accounts::Account>>,
}

/// Marks the value no input may ever read as the unprivileged user; the
/// rest of it is random per process, so the fuzzer cannot learn it from
/// one run to the next (an input that spells it out proves nothing).
pub const SECRET: &str = "SECRET-";

/// What the unprivileged harness adds: a table the user may not read, in
/// the database it works in, and a user with rights on fz.u only.
const PRIVILEGED_SCHEMA: &[&str] = &[
    "CREATE TABLE fz.s (id INT PRIMARY KEY, v VARCHAR(40))",
    "CREATE USER fuzz IDENTIFIED BY 'pw'",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON fz.u TO fuzz",
];

impl SqlHarness {
    /// Inputs run as a user with rights on fz.u only (`run_unprivileged`).
    pub fn unprivileged() -> SqlHarness {
        let mut h = SqlHarness::new();
        // A root that survives account changes, as the server installs it.
        let mut root = lockstep_accounts::Account::new(
            "root",
            "%",
            lockstep_accounts::Credential::Native([0; 20]),
        );
        root.global = lockstep_accounts::Privs::all_at(lockstep_accounts::Level::Global)
            | lockstep_accounts::Privs::GRANT_OPTION;
        h.server.engine.accounts.set_builtin(root);
        let mut setup = Session::new(h.server.clone(), 1, "root", "127.0.0.1");
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            ^ std::process::id() as u128;
        let secret = format!("INSERT INTO fz.s VALUES (1, '{SECRET}{nonce:x}')");
        for sql in PRIVILEGED_SCHEMA.iter().copied().chain([secret.as_str()]) {
            for r in h.rt.block_on(setup.query(sql, false)) {
                r.expect("privileged schema statement runs");
            }
        }
        setup.disconnect();
        let peer = std::net::IpAddr::from([127, 0, 0, 1]);
        h.user = h.server.engine.accounts.find_login("fuzz", peer);
        assert!(h.user.is_some(), "the fuzz account exists");
        h
    }

    pub fn new() -> SqlHarness {
        let dir = std::env::temp_dir().join(format!("lockstep-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cfg = EngineConfig::new(&dir);
        // Only the schema is ever committed; no input needs durability.
        cfg.flush_mode = FlushMode::PerSecond;
        cfg.log_buffer_size = 1 << 20;
        let engine = Engine::open(cfg).expect("engine opens in a temp dir");
        // Small memory limits: runaway joins and sorts end quickly, and the
        // limit paths get exercised.
        let globals = Globals::new(&[
            ("sort_buffer_size", Value::Int(2 << 20)),
            ("tmp_table_size", Value::Int(2 << 20)),
            ("max_heap_table_size", Value::Int(2 << 20)),
            ("query_memory_limit", Value::Int(8 << 20)),
            ("max_allowed_packet", Value::Int(1 << 20)),
        ]);
        let server = Server::new(engine, globals);
        let rt = runtime();
        let mut setup = Session::new(server.clone(), 1, "root", "127.0.0.1");
        for sql in SCHEMA {
            for r in rt.block_on(setup.query(sql, false)) {
                r.expect("schema statement runs");
            }
        }
        setup.disconnect();
        SqlHarness {
            rt,
            server,
            next_id: 2,
            user: None,
        }
    }

    /// Parses `sql`; if every statement is one that cannot change what later
    /// inputs see, runs it in a fresh session and rolls back.
    pub fn run(&mut self, sql: &str) {
        let Ok(statements) = parser::parse(sql) else {
            return;
        };
        if sql.len() > MAX_SQL || !statements.iter().all(stays_in_transaction) {
            return;
        }
        // SLEEP() sleeps once per row it is evaluated for, up to 5 s each,
        // as MySQL's does: a few rows exceed the fuzzer's timeout without
        // anything being stuck.
        if sql.to_ascii_uppercase().contains("SLEEP") {
            return;
        }
        self.next_id += 1;
        let mut session = Session::new(self.server.clone(), self.next_id, "root", "127.0.0.1");
        if let Some(account) = &self.user {
            session.login(account.clone(), "fuzz", "127.0.0.1");
        }
        let rt = &self.rt;
        let _ = rt.block_on(session.query("USE fz", false));
        let _ = rt.block_on(session.query("BEGIN", false));
        let results = rt.block_on(session.query(sql, true));
        let _ = rt.block_on(session.query("ROLLBACK", false));
        session.disconnect();
        if self.user.is_some() {
            assert_nothing_leaks(sql, &results);
        }
    }

    /// As `run`, and statements that only a privileged user could run
    /// (DDL, GRANT, CREATE USER, ...) must fail: the user has no right to
    /// any of them. They are run alone and never change anything.
    pub fn run_unprivileged(&mut self, sql: &str) {
        let Ok(statements) = parser::parse(sql) else {
            return;
        };
        if sql.len() > MAX_SQL {
            return;
        }
        if let [one] = statements.as_slice() {
            if needs_privilege(one) {
                self.next_id += 1;
                let mut session =
                    Session::new(self.server.clone(), self.next_id, "root", "127.0.0.1");
                let account = self.user.clone().expect("unprivileged harness");
                session.login(account, "fuzz", "127.0.0.1");
                let _ = self.rt.block_on(session.query("USE fz", false));
                let r = self.rt.block_on(session.query(sql, false));
                session.disconnect();
                assert!(
                    r.iter().any(|r| r.is_err()),
                    "an unprivileged user ran {sql:?}: {r:?}"
                );
                return;
            }
        }
        self.run(sql);
    }
}

impl Default for SqlHarness {
    fn default() -> Self {
        Self::new()
    }
}

/// Statements only an account with more than rights on fz.u may run.
fn needs_privilege(s: &Statement) -> bool {
    matches!(
        s,
        Statement::CreateDatabase { .. }
            | Statement::DropDatabase { .. }
            | Statement::CreateTable(_)
            | Statement::DropTable { .. }
            | Statement::CreateIndex { .. }
            | Statement::DropIndex { .. }
            | Statement::AlterTable { .. }
            | Statement::Truncate { .. }
            | Statement::CreateUser { .. }
            | Statement::DropUser { .. }
            | Statement::Grant { .. }
            | Statement::Revoke { .. }
    )
}

/// Nothing an unprivileged input got back (rows or error messages) holds
/// the secret of a table it may not read.
fn assert_nothing_leaks(sql: &str, results: &[Result<lockstep_protocol::Response, Error>]) {
    if sql.to_ascii_uppercase().contains(SECRET) {
        return;
    }
    for r in results {
        let leaked = match r {
            Ok(lockstep_protocol::Response::Rows(rs)) => rs
                .rows
                .iter()
                .flatten()
                .any(|v| v.to_string().contains(SECRET)),
            Ok(_) => false,
            Err(e) => e.message.contains(SECRET),
        };
        assert!(!leaked, "{sql:?} read the secret: {r:?}");
    }
}

/// Statements whose effects stay inside the session's open transaction
/// (DDL, COMMIT, KILL and global settings would leak into later inputs).
fn stays_in_transaction(s: &Statement) -> bool {
    match s {
        Statement::Select(_)
        | Statement::Insert(_)
        | Statement::Update(_)
        | Statement::Delete(_)
        | Statement::Show(_)
        | Statement::Describe { .. } => true,
        Statement::Explain(inner, _) => stays_in_transaction(inner),
        Statement::Set(list) => list.iter().all(|a| match &a.target {
            SetTarget::System { scope, name } => {
                *scope != Scope::Global
                    && !matches!(
                        name.to_ascii_lowercase().as_str(),
                        "autocommit"
                            | "sort_buffer_size"
                            | "tmp_table_size"
                            | "max_heap_table_size"
                            | "query_memory_limit"
                            | "max_allowed_packet"
                    )
            }
            _ => true,
        }),
        _ => false,
    }
}
