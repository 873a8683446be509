//! Bridges the wire protocol to a SQL session: one per connection.

use lockstep_accounts::{Account, Credential};
use lockstep_protocol::handshake::caps;
use lockstep_protocol::{
    caching_sha2, native_password, Auth, Column, Handler, Handshake, PreparedInfo, Response, Status,
};
use lockstep_sql::{Prepared, Session};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// caching_sha2_password's cache: per account, SHA256(SHA256(password))
/// after a successful full authentication, with the stored hash it was
/// checked against (a changed password no longer matches it). Memory only.
#[derive(Default)]
pub struct Sha2Cache {
    entries: Mutex<HashMap<(String, String), CachedDigest>>,
}

/// (the stored hash it was verified against, SHA256(SHA256(password))).
type CachedDigest = (Vec<u8>, [u8; 32]);

pub struct Connection {
    pub session: Session,
    pub server: Arc<lockstep_sql::Server>,
    pub sha2_cache: Arc<Sha2Cache>,
    /// The account this login is checked against (from `account_plugin`).
    account: Option<Arc<Account>>,
    /// On a dedicated thread: the live connection count and the number of
    /// dedicated threads; more live connections than that moves this one
    /// to the shared pool (`relocate`).
    pub crowded_at: Option<(Arc<AtomicUsize>, usize)>,
    /// Who may finish logging in through the door this connection came by.
    pub admission: Option<Admission>,
    /// Set when the server shuts down: a binlog dump, which never waits
    /// for a command, ends on it.
    pub server_stopping: Option<tokio::sync::watch::Receiver<bool>>,
    /// The login succeeded / the client sent COM_QUIT: a logged-in
    /// connection that ends without saying goodbye counts in
    /// Aborted_clients (client gone, wait_timeout, KILL).
    logged_in: bool,
    quit: bool,
}

/// The login rule of a listener.
pub enum Admission {
    /// The client port: the live connection count and max_connections.
    /// The one connection accepted beyond it is for an account with SUPER
    /// only (as MySQL keeps one for CONNECTION_ADMIN).
    Counted(Arc<AtomicUsize>, usize),
    /// The administrative port (--admin-address): accounts with SUPER only
    /// (MySQL's SERVICE_CONNECTION_ADMIN; lockstep has no dynamic
    /// privileges), not counted against max_connections, so sockets that
    /// fill the client port cannot lock an administrator out.
    AdminOnly,
}

impl Connection {
    pub fn new(
        mut session: Session,
        server: Arc<lockstep_sql::Server>,
        sha2_cache: Arc<Sha2Cache>,
    ) -> Connection {
        // The connection asks for the rest of a streamed result set.
        session.stream_results = true;
        Connection {
            session,
            server,
            sha2_cache,
            account: None,
            crowded_at: None,
            admission: None,
            server_stopping: None,
            logged_in: false,
            quit: false,
        }
    }

    /// Checks the proof against the account's credential.
    fn verify(&self, account: &Account, hs: &Handshake<'_>) -> Result<Auth, ()> {
        let ok = |b: bool| if b { Ok(Auth::Accepted) } else { Err(()) };
        match &account.credential {
            Credential::Native(stage2) if hs.auth_plugin == native_password::PLUGIN_NAME => {
                ok(!hs.cleartext && native_password::verify(hs.scramble, hs.auth_response, stage2))
            }
            Credential::CachingSha2(stored) if hs.auth_plugin == caching_sha2::PLUGIN_NAME => {
                let key = account.key();
                if hs.cleartext {
                    let good = caching_sha2::verify_password(hs.auth_response, stored);
                    if good {
                        let digest = caching_sha2::cache_digest(hs.auth_response);
                        self.sha2_cache
                            .entries
                            .lock()
                            .insert(key, (stored.clone(), digest));
                    }
                    return ok(good);
                }
                // Clients send nothing (or one NUL) for an empty password.
                if matches!(hs.auth_response, [] | [0]) {
                    return ok(stored.is_empty());
                }
                match self.sha2_cache.entries.lock().get(&key) {
                    Some((cached_for, digest)) if cached_for == stored => ok(
                        caching_sha2::verify_scramble(hs.scramble, hs.auth_response, digest),
                    ),
                    _ => Ok(Auth::FullAuthRequired),
                }
            }
            // The client could not switch to the account's plugin.
            _ => Err(()),
        }
    }
}

/// The host part MySQL shows for a client: 'localhost' for loopback.
pub fn client_host(peer: SocketAddr) -> String {
    let ip = match peer.ip() {
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(std::net::IpAddr::V4)
            .unwrap_or(peer.ip()),
        v4 => v4,
    };
    if ip.is_loopback() {
        "localhost".to_string()
    } else {
        ip.to_string()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // A panic skipped `disconnect`: still roll back and release locks.
        if std::thread::panicking() {
            self.session.disconnect();
        }
    }
}

impl Connection {
    /// Checks a login and starts the session (`authenticate`).
    fn login(&mut self, hs: &Handshake<'_>) -> Result<Auth, Error> {
        let host = client_host(hs.peer);
        let denied = || {
            Error::new(
                Code::AccessDenied,
                format!(
                    "Access denied for user '{}'@'{host}' (using password: {})",
                    hs.user,
                    if hs.auth_response.is_empty() {
                        "NO"
                    } else {
                        "YES"
                    }
                ),
            )
        };
        let account = self.account.clone().ok_or_else(denied)?;
        match self.verify(&account, hs) {
            Err(()) => return Err(denied()),
            // REQUIRE SSL: MySQL answers a plain login like a wrong password.
            Ok(_) if account.require_ssl && hs.tls.is_none() => return Err(denied()),
            Ok(Auth::FullAuthRequired) => return Ok(Auth::FullAuthRequired),
            Ok(Auth::Accepted) => {}
        }
        // A role (CREATE ROLE) is a locked account: it cannot log in.
        let engine = &self.server.engine;
        if engine.accounts.is_locked(&account.user, &account.host) {
            return Err(Error::new(
                Code::AccountHasBeenLocked,
                format!(
                    "Access denied for user '{}'@'{}'. Account is locked.",
                    account.user, account.host
                ),
            ));
        }
        let admin = account.global.contains(lockstep_accounts::Privs::SUPER);
        match &self.admission {
            Some(Admission::Counted(live, max)) if live.load(Ordering::SeqCst) > *max && !admin => {
                return Err(Error::new(Code::ConCount, "Too many connections"));
            }
            Some(Admission::AdminOnly) if !admin => {
                return Err(Error::new(
                    Code::SpecificAccessDenied,
                    "Access denied; you need (at least one of) the SERVICE_CONNECTION_ADMIN privilege(s) for this operation",
                ));
            }
            _ => {}
        }
        self.session.tls = hs.tls.cloned();
        self.session.compressed = hs.capabilities & caps::COMPRESS != 0;
        self.session.ctx.client_found_rows = hs.capabilities & caps::FOUND_ROWS != 0;
        self.session.load_data.client_local_files = hs.capabilities & caps::LOCAL_FILES != 0;
        self.session.login(account, hs.user, &host);
        *self.session.process.connect_attrs.lock() = hs.connect_attrs.to_vec();
        self.session.set_handshake_collation(hs.collation);
        if let Some(db) = hs.database.filter(|d| !d.is_empty()) {
            self.session.use_database(db)?;
        }
        Ok(Auth::Accepted)
    }
}

impl Handler for Connection {
    fn account_plugin(&mut self, user: &str, peer: SocketAddr) -> Option<&'static str> {
        self.account = self.server.engine.accounts.find_login(user, peer.ip());
        self.account.as_ref().map(|a| a.credential.plugin())
    }

    fn authenticate(&mut self, hs: &Handshake<'_>) -> Result<Auth, Error> {
        let r = self.login(hs);
        // Counted once a login ends (a full-authentication round comes
        // back here).
        if !matches!(r, Ok(Auth::FullAuthRequired)) {
            self.server.counters.connection();
        }
        match r {
            Ok(Auth::Accepted) => self.logged_in = true,
            Ok(Auth::FullAuthRequired) => {}
            Err(_) => self.server.counters.aborted_connect(),
        }
        r
    }

    fn traffic(&mut self, received: u64, sent: u64) {
        self.session.process.counters.traffic(received, sent);
    }

    fn statement_text<'a>(&mut self, sql: &'a [u8]) -> Result<std::borrow::Cow<'a, str>, Error> {
        Ok(self.session.statement_text(sql))
    }

    async fn query(&mut self, sql: &str, multi: bool) -> Option<Result<Response, Error>> {
        self.session.start_query(sql, multi).await
    }

    fn more_results(&self) -> bool {
        self.session.more_results()
    }

    async fn next_result(&mut self) -> Option<Result<Response, Error>> {
        self.session.next_result().await
    }

    fn query_attributes(&mut self, attributes: Vec<lockstep_protocol::query_attrs::Attribute>) {
        self.session.ctx.query_attributes = attributes;
    }

    fn local_infile(&mut self) -> Option<Vec<u8>> {
        self.session.local_infile()
    }

    async fn infile_data(&mut self, data: &[u8]) {
        self.session.infile_data(data).await
    }

    async fn infile_end(&mut self) -> Result<Response, Error> {
        self.session.infile_end().await
    }

    type Statement = Prepared;

    fn prepare(&mut self, sql: &str) -> Result<(PreparedInfo, Prepared), Error> {
        self.session.prepare(sql)
    }

    async fn execute(
        &mut self,
        statement: &mut Prepared,
        params: Vec<Value>,
    ) -> Result<Response, Error> {
        self.session.execute(statement, &params).await
    }

    fn param_text(&mut self, bytes: &mut Vec<u8>) {
        self.session.param_text(bytes);
    }

    fn streaming(&self) -> bool {
        self.session.streaming()
    }

    async fn more_rows(&mut self, rows: &mut Vec<Vec<Value>>) -> Result<Option<u16>, Error> {
        self.session.more_rows(rows).await
    }

    fn want_whole_result(&mut self) {
        self.session.want_whole_result();
    }

    fn take_results(&mut self) -> Vec<Response> {
        self.session.take_call_results()
    }

    fn init_db(&mut self, db: &str) -> Result<(), Error> {
        self.session.use_database(db)
    }

    fn field_list(&mut self, table: &str, _wildcard: &str) -> Result<Vec<Column>, Error> {
        self.session.field_list(table)
    }

    fn statistics(&mut self) -> String {
        let s = &self.server;
        // Each read takes the process list's lock: one at a time.
        let threads = s.processes.lock().len();
        let questions = lockstep_sql::session::status::questions(s);
        format!(
            "Uptime: {}  Threads: {}  Questions: {}  Slow queries: 0  Opens: 0  Open tables: {}  Queries per second avg: {:.3}",
            s.started.elapsed().as_secs(),
            threads,
            questions,
            s.engine.catalog.all_tables().len(),
            questions as f64 / s.started.elapsed().as_secs_f64().max(1.0)
        )
    }

    fn reset_connection(&mut self) {
        self.session.reset();
    }

    fn change_user(&mut self) {
        self.session.reset();
        self.session.forget_database();
    }

    fn status(&self) -> Status {
        self.session.status()
    }

    fn take_state_changes(&mut self) -> Vec<lockstep_types::result::StateChange> {
        self.session.take_state_changes()
    }

    fn result_charset(&mut self) -> lockstep_protocol::charset::ResultCharset {
        self.session.result_charset()
    }

    fn should_close(&self) -> bool {
        self.session.killed() || self.server_stopping.as_ref().is_some_and(|s| *s.borrow())
    }

    fn disconnect(&mut self) {
        if self.logged_in && !self.quit {
            self.server.counters.aborted_client();
        }
        self.session.disconnect();
    }

    fn quit(&mut self) {
        self.quit = true;
    }

    fn kill_signal(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        Some(self.session.process.idle_kill.clone())
    }

    fn idle_after(&self) -> Option<std::time::Duration> {
        self.session.idle_after()
    }

    fn wait_timeout(&self) -> Option<std::time::Duration> {
        Some(self.session.wait_timeout())
    }

    fn idle(&mut self) {
        self.session.idle();
    }

    /// A replica introducing itself (its id, host and port are not kept:
    /// SHOW REPLICAS lists none). Needs REPLICATION SLAVE, as the dump.
    fn register_replica(&mut self, _request: &[u8]) -> Result<(), Error> {
        self.check_replication_slave()
    }

    /// A replica's dump request: needs REPLICATION SLAVE, then the
    /// connection belongs to the replication source's stream.
    fn binlog_dump(
        &mut self,
        command: u8,
        request: &[u8],
    ) -> Result<Box<dyn lockstep_protocol::BinlogDump>, Error> {
        self.check_replication_slave()?;
        let vars = &self.session.ctx.user_vars;
        let checksum = ["master_binlog_checksum", "source_binlog_checksum"]
            .iter()
            .any(|v| {
                vars.get(*v)
                    .is_some_and(|x| x.to_string().eq_ignore_ascii_case("CRC32"))
            });
        let client = lockstep_replication::mysql_dump::ClientVars {
            checksum,
            heartbeat_ns: vars.get("master_heartbeat_period").and_then(|v| v.to_i64()),
        };
        // A semisync replica says so first, as MySQL's does (older
        // replicas, MariaDB's and go-mysql's: @rpl_semi_sync_slave).
        let semisync = ["rpl_semi_sync_replica", "rpl_semi_sync_slave"]
            .iter()
            .any(|n| {
                vars.get(*n)
                    .and_then(|v| v.to_i64())
                    .is_some_and(|v| v != 0)
            });
        let engine = self.server.engine.clone();
        use lockstep_replication::source::{start_dump, start_semisync_dump};
        let dump = if semisync {
            start_semisync_dump(engine, command, request, client)?
        } else {
            start_dump(engine, command, request, client)?
        };
        // SHOW PROCESSLIST names the connection as MySQL does.
        *self.session.process.command.lock() = if command == 0x12 {
            "Binlog Dump"
        } else {
            "Binlog Dump GTID"
        };
        Ok(dump)
    }

    fn relocate(&mut self) -> bool {
        let crowded = self
            .crowded_at
            .as_ref()
            .is_some_and(|(live, limit)| live.load(Ordering::Relaxed) > *limit);
        if crowded {
            // Once: in the pool it stays.
            self.crowded_at = None;
        }
        crowded
    }
}

impl Connection {
    fn check_replication_slave(&self) -> Result<(), Error> {
        let allowed = self.account.as_ref().is_some_and(|a| {
            a.global
                .contains(lockstep_accounts::Privs::REPLICATION_SLAVE)
        });
        if allowed {
            return Ok(());
        }
        Err(Error::new(
            Code::SpecificAccessDenied,
            "Access denied; you need (at least one of) the REPLICATION SLAVE privilege(s) for this operation",
        ))
    }
}
