//! A client session: current database, variables, the open transaction,
//! prepared statements. Runs statements: binds them (or reuses a prepared
//! plan), executes them, waits for row locks without holding a thread, and
//! commits in autocommit mode.

mod alter;
mod auto_increment;
mod batch;
mod binlog_status;
pub use crate::charset;
mod check_table;
mod checks;
mod checksum_table;
mod client_text;
mod collations;
mod comments;
mod connect_attrs;
mod ddl;
mod definer;
mod diagnostics;
use diagnostics::warning_level;
mod explain_analyze;
mod fixed_clock;
mod foreign_keys;
mod generated;
pub mod histogram;
pub mod infoschema;
mod infoschema_meta;
mod innodb_trx;
mod kill;
pub mod load_data;
mod online_alter;
mod prelock;
mod privilege_tables;
pub mod privileges;
mod replan;
pub mod replication;
mod replication_tables;
mod role_changes;
mod roles;
mod routines;
mod semisync;
mod show;
mod sql_mode;
pub mod status;
mod stream;
mod table_locks;
mod track;
mod transaction;
mod user_tables;
mod wire_charset;
pub(crate) use definer::definer_grants;
pub(crate) use roles::current_role;
pub mod statements;
pub mod users;
pub mod vars;
mod views;

use crate::exec::{Exec, MemoryLimits, SessionCtx};
use crate::expr::like;
use crate::expr::time_zone;
use crate::parser::{self, Scope as AstScope, SetTarget, Show, ShowFilter, Statement};
use crate::plan::bind::{column_meta, Binder};
use crate::plan::{InsertPlan, ModifyPlan, QueryPlan};
use crate::session::privileges::Grants;
use crate::session::statements::{SharedStatement, StatementCache};
use crate::session::vars::{bool_setting, Globals};
use lockstep_engine::LockWaitPolicy;
use lockstep_engine::{Engine, Error as EngineError, Isolation, Txn};
use lockstep_types::error::Code;
use lockstep_types::result::{Column, OkInfo, PreparedInfo, Response, ResultSet, Status, TlsInfo};
use lockstep_types::{DataType, Error, Value};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every session shares: the engine, global variables, and the list
/// of connections (SHOW PROCESSLIST, KILL).
pub struct Server {
    pub engine: Arc<Engine>,
    pub globals: Globals,
    pub processes: Mutex<HashMap<u64, Arc<ProcessInfo>>>,
    /// Prepared statements shared between sessions.
    pub statements: StatementCache,
    pub started: Instant,
    /// Connections, failed logins, ended sessions' counts (status.rs).
    pub counters: status::ServerCounters,
    /// GET_LOCK's locks, held per connection.
    pub user_locks: Arc<crate::expr::user_locks::UserLocks>,
    /// Prepared statements alive on all connections (Prepared_stmt_count,
    /// bounded by max_prepared_stmt_count).
    pub prepared: Arc<std::sync::atomic::AtomicUsize>,
    /// The replica, set once by the server at start (None: replication
    /// statements are refused, e.g. in tests without a server).
    pub replica: std::sync::OnceLock<Arc<dyn replication::ReplicaControl>>,
}

pub struct ProcessInfo {
    pub id: u64,
    /// Set at login (the connection exists before its user is known).
    pub user: Mutex<String>,
    pub host: String,
    pub database: Mutex<Option<String>>,
    pub command: Mutex<&'static str>,
    pub info: Mutex<Option<String>>,
    pub since: Mutex<Instant>,
    /// KILL QUERY: the running statement stops at its next check (the
    /// executor shares the flag: `exec::Interrupt`).
    pub kill_query: Arc<AtomicBool>,
    /// KILL CONNECTION: the connection closes.
    pub kill_connection: AtomicBool,
    /// Wakes a statement waiting for a row lock when it is killed.
    pub kill_notify: tokio::sync::Notify,
    /// Wakes the connection waiting for its next command when it is
    /// killed, so that an idle connection closes at once, as in MySQL.
    pub idle_kill: Arc<tokio::sync::Notify>,
    /// The session's status counters (written by it alone).
    pub counters: status::Counters,
    /// What the client sent in its handshake (connect_attrs.rs).
    pub connect_attrs: Mutex<Vec<(String, String)>>,
    /// Its transaction, as INNODB_TRX shows it (innodb_trx.rs).
    pub trx: innodb_trx::TrxState,
}

impl Server {
    pub fn new(engine: Arc<Engine>, globals: Globals) -> Arc<Server> {
        Arc::new(Server {
            engine,
            globals,
            processes: Mutex::new(HashMap::new()),
            statements: StatementCache::new(4096),
            started: Instant::now(),
            counters: Default::default(),
            prepared: Arc::default(),
            user_locks: Arc::default(),
            replica: std::sync::OnceLock::new(),
        })
    }
}

/// A statement's plan, with the tables it uses.
pub(crate) struct Bound {
    pub plan: Plan,
    /// Every base table the statement uses, each once: first those it
    /// reads (`reads` of them, from every FROM clause, subqueries
    /// included), then the table it changes when it reads it nowhere.
    /// Checked for privileges and locked (shared metadata lock) before
    /// the statement runs.
    pub tables: Vec<Arc<lockstep_tables::Table>>,
    pub reads: usize,
    /// How the statement names its base tables (outside views): under
    /// LOCK TABLES each must be locked under that name (alias).
    pub refs: Vec<(Arc<lockstep_tables::Table>, String)>,
    /// What DEFINER views read, checked against their definers.
    pub definer_reads: Vec<crate::plan::bind::DefinerRead>,
    /// The stored functions it calls (database, name): the tables they
    /// use are locked with the statement's own (`prelock`).
    pub functions: Vec<(String, String)>,
    /// `Engine::ddl_version` when it was bound: once its tables are locked,
    /// an older plan may name tables DDL changed meanwhile, and is re-bound.
    pub version: u64,
    /// A statement through a view: the same statement on its base table
    /// (checked for privileges too) and its CHECK OPTION conditions.
    pub view_stmt: Option<Statement>,
    pub view_checks: Arc<Vec<crate::exec::ViewCheck>>,
    /// Estimates that waited for a parameter's value (`replan`): a
    /// prepared statement with some is planned again per their range.
    pub probes: Vec<crate::plan::selectivity::Probe>,
}

/// What one DML statement carries between its runs (it runs again after
/// each row-lock wait).
struct DmlRun {
    /// SQL_CALC_FOUND_ROWS: count the rows a LIMIT cut off.
    calc_found: bool,
    /// The result goes out in batches as it is read.
    streams: bool,
    cursor: crate::exec::stream::ScanCursor,
    batch_bytes: usize,
    found_total: Option<usize>,
}

fn interrupted() -> Error {
    Error::new(Code::QueryInterrupted, "Query execution was interrupted")
}

pub(crate) enum Plan {
    Query(Arc<QueryPlan>),
    Insert(InsertPlan),
    Update(ModifyPlan),
    Delete(ModifyPlan),
    /// Multi-table UPDATE or DELETE: its targets are among the tables read.
    Multi(crate::plan::multi::MultiPlan),
}

impl Bound {
    fn new(plan: Plan, mut tables: Vec<Arc<lockstep_tables::Table>>, version: u64) -> Bound {
        let reads = tables.len();
        let target = match &plan {
            Plan::Query(_) | Plan::Multi(_) => None,
            Plan::Insert(p) => Some(&p.table),
            Plan::Update(p) | Plan::Delete(p) => Some(&p.table),
        };
        if let Some(t) = target {
            if !tables.iter().any(|r| Arc::ptr_eq(r, t)) {
                tables.push(t.clone());
            }
        }
        Bound {
            plan,
            tables,
            reads,
            refs: Vec::new(),
            definer_reads: Vec::new(),
            functions: Vec::new(),
            version,
            view_stmt: None,
            view_checks: Arc::new(Vec::new()),
            probes: Vec::new(),
        }
    }

    /// Adds what DEFINER views read: their tables are locked too.
    fn with_views(mut self, b: crate::plan::bind::Binder<'_>) -> Bound {
        for t in b.view_tables {
            if !self.tables.iter().any(|r| Arc::ptr_eq(r, &t)) {
                self.tables.push(t);
            }
        }
        self.definer_reads = b.definer_reads;
        self.functions = b.called.into_inner();
        self.refs = b.refs;
        self
    }
}

/// A session's prepared statement: the shared copy of its text and plan
/// (`statements::StatementCache`), or a copy of its own after this session
/// re-bound it. The connection keeps it (`Handler::Statement`) and lends it
/// to `Session::execute`: borrowed rather than reference-counted while it
/// runs, since its shared copy is read by every session running it, and a
/// count changed per execution would move between the cores.
pub struct Prepared {
    shared: Arc<SharedStatement>,
    /// The server's count of prepared statements, given back on drop.
    count: Arc<std::sync::atomic::AtomicUsize>,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a new session takes from the global variables.
struct StartValues {
    isolation: Isolation,
    lock_wait: i64,
    wait_timeout: i64,
    autocommit: bool,
    read_only: bool,
    max_execution_ms: u64,
}

impl StartValues {
    fn of(globals: &Globals) -> StartValues {
        let int = |name: &str| globals.get(name).and_then(|v| v.to_i64());
        StartValues {
            isolation: globals
                .get("transaction_isolation")
                .and_then(|v| Isolation::parse(&v.to_string()))
                .unwrap_or(Isolation::RepeatableRead),
            lock_wait: int("innodb_lock_wait_timeout").unwrap_or(50),
            wait_timeout: int("wait_timeout").unwrap_or(28800),
            autocommit: globals
                .get("autocommit")
                .and_then(|v| v.truth())
                .unwrap_or(true),
            read_only: globals
                .get("transaction_read_only")
                .is_some_and(|v| v.truth() == Some(true)),
            max_execution_ms: int("max_execution_time").map_or(0, |ms| ms.max(0) as u64),
        }
    }
}

impl ProcessInfo {
    /// A new connection's entry in the process list, idle.
    fn new(id: u64, user: &str, host: &str) -> Arc<ProcessInfo> {
        Arc::new(ProcessInfo {
            id,
            user: Mutex::new(user.to_string()),
            host: host.to_string(),
            database: Mutex::new(None),
            command: Mutex::new("Sleep"),
            info: Mutex::new(None),
            since: Mutex::new(Instant::now()),
            kill_query: Arc::new(AtomicBool::new(false)),
            kill_connection: AtomicBool::new(false),
            kill_notify: tokio::sync::Notify::new(),
            idle_kill: Default::default(),
            counters: Default::default(),
            connect_attrs: Mutex::new(Vec::new()),
            trx: Default::default(),
        })
    }
}

impl SessionCtx {
    /// A new session's context: no database, no variables of its own yet;
    /// system variables read through `server`, KILL QUERY through `process`.
    fn new(server: &Arc<Server>, process: &ProcessInfo, user: &str, host: &str) -> SessionCtx {
        let srv = server.clone();
        SessionCtx {
            database: None,
            connection_id: process.id,
            user: format!("{user}@{host}"),
            current_user: format!("{user}@{host}"),
            user_vars: HashMap::new(),
            query_attributes: Vec::new(),
            last_insert_id: 0,
            found_rows: 0,
            rows_before: 0,
            client_found_rows: false,
            row_count: -1,
            warnings: Vec::new(),
            previous_warnings: 0,
            error_at: None,
            previous_errors: 0,
            strict: false,
            dates: Default::default(),
            division_by_zero: true,
            tz_offset: 0,
            statement_now: None,
            fixed_now: None,
            system_var: Arc::new(move |ctx: &SessionCtx, global: bool, name: &str| {
                system_var(&srv, ctx, global, name)
            }),
            session_vars: HashMap::new(),
            memory: MemoryLimits::default(),
            interrupt: crate::exec::Interrupt {
                killed: process.kill_query.clone(),
                deadline: None,
                peer: None,
            },
            user_locks: Some(server.user_locks.clone()),
            grants: None,
        }
    }
}

pub struct Session {
    pub server: Arc<Server>,
    engine: Arc<Engine>,
    pub ctx: SessionCtx,
    pub process: Arc<ProcessInfo>,
    txn: Txn,
    /// BEGIN was given (or autocommit is off and work was done).
    explicit: bool,
    /// LOAD DATA LOCAL: the client's capability and a load in progress.
    pub load_data: load_data::LoadState,
    autocommit: bool,
    isolation: Isolation,
    /// SET TRANSACTION (no scope): the next transaction's level only.
    next_isolation: Option<Isolation>,
    /// SET TRANSACTION READ ONLY / READ WRITE (no scope): the next
    /// transaction only.
    next_read_only: Option<bool>,
    /// transaction_read_only of the session.
    session_read_only: bool,
    /// The open explicit transaction is READ ONLY.
    txn_read_only: bool,
    /// sql_safe_updates: UPDATE/DELETE must use a key or a LIMIT.
    safe_updates: bool,
    /// max_execution_time of the session, in ms (0: none).
    max_execution_ms: u64,
    /// sql_notes: notes (1050, 1051, ...) are recorded as warnings.
    sql_notes: bool,
    /// sql_mode has NO_BACKSLASH_ESCAPES (`refresh_sql_mode`).
    no_backslash_escapes: bool,
    /// sql_mode has STRICT_TRANS_TABLES or STRICT_ALL_TABLES
    /// (`refresh_sql_mode`): writes fail instead of adjusting values.
    strict_sql_mode: bool,
    /// `result_charset`, kept until a SET or a reset may change it.
    result_charset: Option<lockstep_protocol::charset::ResultCharset>,
    next_statement_id: u32,
    lock_wait_timeout: Duration,
    /// Idle time between commands before the connection is closed
    /// (`wait_timeout`, session or global).
    wait_timeout: Duration,
    /// The logged-in account's privileges, cached (privileges.rs).
    pub grants: Grants,
    /// TLS parameters when the connection is encrypted (SHOW STATUS Ssl_*).
    pub tls: Option<TlsInfo>,
    /// The client and server agreed on the compressed protocol (SHOW
    /// STATUS Compression).
    pub compressed: bool,
    /// The session's own descriptor of the client's socket (`set_peer`).
    peer: Option<std::net::TcpStream>,
    /// SAVEPOINTs of the open transaction, oldest first (names compare
    /// case-insensitively; those of an ended transaction are stale).
    savepoints: Vec<(String, lockstep_engine::Savepoint)>,
    /// CREATE TEMPORARY TABLE: this session's own tables, hiding permanent
    /// ones of the same name, never logged, gone with the session.
    temp_tables: crate::plan::bind::TempTables,
    /// The COMMENT clauses of this session's temporary tables, by id.
    temp_comments: HashMap<u32, lockstep_tables::TableComments>,
    /// The running stored program's locals, seen by the binder.
    routine_locals: Vec<(String, Value)>,
    /// Result sets of the running CALL, sent before its OK.
    call_results: Vec<Response>,
    /// The rest of the COM_QUERY being answered (`batch.rs`), and results
    /// of it produced but not yet given (a CALL's, before its reply).
    batch: Option<batch::Batch>,
    queued: std::collections::VecDeque<R<Response>>,
    /// Procedures being called, outermost first (`db.name`).
    routine_stack: Vec<String>,
    /// OUT values a nested CALL gives the calling program's locals.
    call_outs: Vec<(String, Value)>,
    /// The session's owner reads streamed results (`more_rows`): large
    /// results of simple SELECTs may then come in batches.
    pub stream_results: bool,
    /// The next statement `run` starts may send its result in batches (a
    /// statement of a COM_QUERY, a COM_STMT_EXECUTE without a cursor).
    stream_next: bool,
    /// The SELECT `run_dml` is about to run may stream.
    stream_this: bool,
    /// Session state changes for CLIENT_SESSION_TRACK (track.rs).
    track: track::Tracker,
    /// The SELECT `run_dml` is about to run has SQL_CALC_FOUND_ROWS.
    calc_found_this: bool,
    /// The rest of a result set being sent in batches (`stream.rs`).
    stream: Option<stream::PendingStream>,
    /// The connection wants the next execute's result whole (a cursor).
    whole_next: bool,
    /// LOCK TABLES and FLUSH TABLES WITH READ LOCK held (table_locks.rs).
    table_locks: table_locks::TableLocks,
}

type R<T> = std::result::Result<T, Error>;

/// The settings behind [`MemoryLimits`] (a pattern for `match`).
macro_rules! memory_vars {
    () => {
        "sort_buffer_size"
            | "tmp_table_size"
            | "max_heap_table_size"
            | "query_memory_limit"
            | "max_tmp_session_space_usage"
            | "join_buffer_size"
    };
}

/// Largest wait_timeout, in seconds (MySQL's limit on Linux: one year).
const MAX_WAIT_TIMEOUT: i64 = 31_536_000;
/// Largest innodb_lock_wait_timeout, in seconds (MySQL's).
const MAX_LOCK_WAIT_TIMEOUT: i64 = 1 << 30;

/// The integer a numeric variable is set to (1232 for a non-number).
fn int_setting(name: &str, v: &Value) -> R<i64> {
    match v {
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => v.to_i64(),
        _ => None,
    }
    .ok_or_else(|| {
        Error::new(
            Code::WrongTypeForVar,
            format!("Incorrect argument type to variable '{name}'"),
        )
    })
}

/// An isolation level by its name (1231 for another value).
fn isolation_setting(name: &str, v: &Value) -> R<Isolation> {
    Isolation::parse(&v.to_string()).ok_or_else(|| {
        Error::new(
            Code::WrongValueForVar,
            format!("Variable '{name}' can't be set to the value of '{v}'"),
        )
    })
}

/// A byte-size setting: an integer (1232 otherwise), not negative (1231).
fn size_setting(name: &str, v: &Value) -> R<i64> {
    match int_setting(name, v)? {
        n if n >= 0 => Ok(n),
        _ => Err(Error::new(
            Code::WrongValueForVar,
            format!("Variable '{name}' can't be set to the value of '{v}'"),
        )),
    }
}

/// An integer variable with a range: out-of-range values are clamped with
/// warning 1292, as MySQL does (auto_increment_increment = 0 becomes 1).
fn ranged_setting(
    name: &str,
    v: &Value,
    (lo, hi): (i64, i64),
    warnings: &mut Vec<crate::exec::Condition>,
) -> R<i64> {
    let n = int_setting(name, v)?;
    if !(lo..=hi).contains(&n) {
        let message = format!("Truncated incorrect {name} value: '{v}'");
        warnings.push(crate::exec::Condition::warning(1292, message));
    }
    Ok(n.clamp(lo, hi))
}

fn ok(affected: u64) -> Response {
    Response::Ok(OkInfo {
        affected_rows: affected,
        ..Default::default()
    })
}

fn text_col(name: &str) -> Column {
    column_meta(name, DataType::VarChar { len: 255 }, true)
}

/// One row of SHOW [FULL] COLUMNS: the column's (name, type, nullable),
/// then Key, Default and Extra.
fn column_row(
    (name, ty, nullable): (&str, DataType, bool),
    key: &str,
    default: Value,
    extra: &str,
    full: bool,
) -> Vec<Value> {
    let mut row = vec![Value::str(name), Value::str(&ty.to_string())];
    if full {
        row.push(if ty.is_string() {
            Value::str("utf8mb4_0900_ai_ci")
        } else {
            Value::Null
        });
    }
    row.extend([
        Value::str(if nullable { "YES" } else { "NO" }),
        Value::str(key),
        default,
        Value::str(extra),
    ]);
    if full {
        row.extend([
            Value::str("select,insert,update,references"),
            Value::str(""),
        ]);
    }
    row
}

/// SHOW [FULL] COLUMNS' result set of rows `r`.
fn columns_result(full: bool, r: Vec<Vec<Value>>) -> Response {
    if full {
        let names = [
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment",
        ];
        rows(&names, r)
    } else {
        rows(&["Field", "Type", "Null", "Key", "Default", "Extra"], r)
    }
}

/// A result set whose column types follow its values (integers where
/// every value is one, text otherwise).
fn rows(names: &[&str], rows: Vec<Vec<Value>>) -> Response {
    let columns = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut values = rows
                .iter()
                .filter_map(|r| r.get(i))
                .filter(|v| !v.is_null())
                .peekable();
            let integer = values.peek().is_some()
                && values.all(|v| matches!(v, Value::Int(_) | Value::UInt(_)));
            if integer {
                column_meta(n, DataType::BigInt { unsigned: false }, true)
            } else {
                text_col(n)
            }
        })
        .collect();
    Response::Rows(ResultSet {
        columns,
        rows,
        warnings: 0,
    })
}

/// A variable's value as SHOW VARIABLES prints it.
fn variable_text(name: &str, v: &Value) -> String {
    match v.to_i64() {
        Some(n) if is_boolean_var(name) => (if n != 0 { "ON" } else { "OFF" }).to_string(),
        _ => v.to_string(),
    }
}

/// Variables SHOW VARIABLES prints as ON/OFF.
fn is_boolean_var(name: &str) -> bool {
    matches!(
        name,
        "autocommit"
            | "session_track_schema"
            | "session_track_state_change"
            | "foreign_key_checks"
            | "unique_checks"
            | "sql_auto_is_null"
            | "sql_safe_updates"
            | "sql_quote_show_create"
            | "sql_notes"
            | "transaction_read_only"
            | "tx_read_only"
            | "log_bin"
            | "performance_schema"
            | "rpl_semi_sync_source_enabled"
            | "rpl_semi_sync_master_enabled"
            | "rpl_semi_sync_replica_enabled"
            | "innodb_deadlock_detect"
            | "innodb_read_only"
            | "innodb_strict_mode"
            | "innodb_rollback_on_timeout"
            | "read_only"
            | "super_read_only"
    )
}

fn like_ci(s: &str, pattern: &str) -> bool {
    like(
        s.to_ascii_lowercase().as_bytes(),
        pattern.to_ascii_lowercase().as_bytes(),
        b'\\',
    )
}

impl Session {
    pub fn new(server: Arc<Server>, connection_id: u64, user: &str, host: &str) -> Session {
        let engine = server.engine.clone();
        let StartValues {
            isolation,
            lock_wait,
            wait_timeout,
            autocommit,
            read_only,
            max_execution_ms,
        } = StartValues::of(&server.globals);
        let process = ProcessInfo::new(connection_id, user, host);
        server
            .processes
            .lock()
            .insert(connection_id, process.clone());
        let ctx = SessionCtx::new(&server, &process, user, host);
        let mut session = Session {
            server,
            txn: engine.begin(isolation),
            engine,
            ctx,
            process,
            explicit: false,
            load_data: Default::default(),
            autocommit,
            isolation,
            next_isolation: None,
            next_read_only: None,
            session_read_only: read_only,
            txn_read_only: false,
            safe_updates: false,
            max_execution_ms,
            sql_notes: true,
            no_backslash_escapes: false,
            strict_sql_mode: true,
            result_charset: None,
            next_statement_id: 1,
            lock_wait_timeout: Duration::from_secs(lock_wait.max(0) as u64),
            wait_timeout: Duration::from_secs(wait_timeout.clamp(1, MAX_WAIT_TIMEOUT) as u64),
            grants: Grants::all(user, host),
            tls: None,
            compressed: false,
            peer: None,
            savepoints: Vec::new(),
            temp_tables: Default::default(),
            temp_comments: Default::default(),
            table_locks: Default::default(),
            routine_locals: Vec::new(),
            call_results: Vec::new(),
            batch: None,
            queued: Default::default(),
            routine_stack: Vec::new(),
            call_outs: Vec::new(),
            stream_results: false,
            stream_next: false,
            stream_this: false,
            track: Default::default(),
            calc_found_this: false,
            stream: None,
            whole_next: false,
        };
        session.refresh_memory_limits();
        session.refresh_sql_mode();
        session.refresh_time_zone();
        session.inherit_foreign_key_checks();
        session
    }

    /// Caches what the lexer and the status flags need of sql_mode.
    fn refresh_sql_mode(&mut self) {
        let mode = system_var(&self.server, &self.ctx, false, "sql_mode").ok();
        let has = |name| mode.as_ref().is_some_and(|m| sql_mode::has(m, name));
        self.no_backslash_escapes = has("NO_BACKSLASH_ESCAPES");
        self.strict_sql_mode = has("STRICT_TRANS_TABLES") || has("STRICT_ALL_TABLES");
        self.ctx.division_by_zero = has("ERROR_FOR_DIVISION_BY_ZERO");
        self.ctx.dates = crate::expr::zero_date::DateMode {
            no_zero_date: has("NO_ZERO_DATE"),
            no_zero_in_date: has("NO_ZERO_IN_DATE"),
            truncate_fraction: has("TIME_TRUNCATE_FRACTIONAL"),
        };
    }

    /// Caches the session time zone's offset in `ctx` (statements convert
    /// TIMESTAMP values with it instead of parsing time_zone per row).
    /// A session without its own value takes the global one as it is now
    /// and keeps it, as in MySQL: a later SET GLOBAL changes new sessions.
    fn refresh_time_zone(&mut self) {
        let Ok(tz) = system_var(&self.server, &self.ctx, false, "time_zone") else {
            self.ctx.tz_offset = 0;
            return;
        };
        self.ctx.tz_offset = time_zone::offset_seconds(&tz);
        self.ctx.session_vars.insert("time_zone".into(), tz);
    }

    /// Caches the memory limits of the session's settings in `ctx`, so
    /// statements read three integers instead of the variable maps.
    fn refresh_memory_limits(&mut self) {
        let get = |name: &str| {
            system_var(&self.server, &self.ctx, false, name)
                .ok()
                .and_then(|v| v.to_i64())
                .map_or(usize::MAX, |n| n.max(0) as usize)
        };
        self.ctx.memory = MemoryLimits {
            sort: get("sort_buffer_size"),
            temp_table: get("tmp_table_size").min(get("max_heap_table_size")),
            statement: get("query_memory_limit"),
            disk: get("max_tmp_session_space_usage"),
            join: get("join_buffer_size"),
        };
    }

    /// The connection authenticated as `account` (login name `user` from
    /// `client_host`): from now on its privileges apply.
    pub fn login(
        &mut self,
        account: Arc<lockstep_accounts::Account>,
        user: &str,
        client_host: &str,
    ) {
        let version = self.engine.accounts.version();
        self.ctx.current_user = format!("{}@{}", account.user, account.host);
        self.grants = Grants::new(account, version, user, client_host);
        self.ctx.grants = Some(Arc::new(self.grants.clone()));
        self.activate_login_roles();
        self.ctx.user = format!("{user}@{client_host}");
        *self.process.user.lock() = user.to_string();
    }

    /// The client's socket, looked at by long statements: when the client
    /// has gone away they stop. The session keeps a descriptor of its own
    /// (the connection may replace its descriptor, say when it starts TLS
    /// or joins another runtime), closed when the session ends.
    pub fn set_peer(&mut self, socket: &std::net::TcpStream) {
        if let Ok(own) = socket.try_clone() {
            self.ctx.interrupt.peer = Some(std::os::fd::AsRawFd::as_raw_fd(&own));
            self.peer = Some(own);
        }
    }

    /// A COM_QUERY / COM_STMT_PREPARE as text, decoded from
    /// character_set_client (see `client_text`).
    pub fn statement_text<'a>(&self, sql: &'a [u8]) -> std::borrow::Cow<'a, str> {
        if let Some(ascii) = sql
            .is_ascii()
            .then(|| std::str::from_utf8(sql).ok())
            .flatten()
        {
            return std::borrow::Cow::Borrowed(ascii);
        }
        let vars = &self.ctx.session_vars;
        let client = charset::session_charset(vars, "character_set_client");
        client_text::statement_text(
            sql,
            client.unwrap_or(charset::lookup("utf8mb4").expect("utf8mb4 is listed")),
            !self.no_backslash_escapes,
        )
    }

    /// A text parameter of COM_STMT_EXECUTE decoded from
    /// character_set_client (UTF-8 and binary clients' bytes stay).
    pub fn param_text(&self, bytes: &mut Vec<u8>) {
        wire_charset::param_text(&self.ctx.session_vars, bytes);
    }

    /// The connection character set the client asked for in its
    /// handshake (a collation id); an unknown id keeps utf8mb4.
    pub fn set_handshake_collation(&mut self, id: u8) {
        self.result_charset = None;
        if let Some((cs, collation)) = charset::from_collation_id(id) {
            let _ = charset::set_names(&mut self.ctx.session_vars, cs.name, Some(collation));
        }
    }

    /// Result text in character_set_results.
    fn to_results_charset(&self, r: R<Response>) -> R<Response> {
        let mut r = r?;
        if matches!(r, Response::Ok(_)) {
            return Ok(r);
        }
        let results = charset::session_charset(&self.ctx.session_vars, "character_set_results");
        charset::encode_results(&mut r, results);
        Ok(r)
    }

    /// How text columns are described to the client (character_set_results).
    pub fn result_charset(&mut self) -> lockstep_protocol::charset::ResultCharset {
        *self
            .result_charset
            .get_or_insert_with(|| wire_charset::result_charset(&self.ctx.session_vars))
    }

    pub fn status(&self) -> Status {
        Status {
            in_transaction: self.explicit || self.txn.has_writes(),
            autocommit: self.autocommit,
            no_backslash_escapes: self.no_backslash_escapes,
        }
    }

    pub fn use_database(&mut self, db: &str) -> R<()> {
        self.grants.refresh(&self.engine.accounts);
        self.grants.check_use(db)?;
        if !self.engine.catalog.database_exists(db) && !is_system_db(db) {
            return Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")));
        }
        if self.ctx.database.as_deref() != Some(db) {
            self.track_schema(db);
        }
        self.ctx.database = Some(db.to_string());
        *self.process.database.lock() = Some(db.to_string());
        Ok(())
    }

    pub fn prepare(&mut self, sql: &str) -> R<(PreparedInfo, Prepared)> {
        let version = self.engine.ddl_version.load(Ordering::SeqCst);
        let database = self.ctx.database.clone();
        // A session with temporary tables binds names differently from
        // every other, and one without ONLY_FULL_GROUP_BY checks grouped
        // queries differently: its plans are its own, not the shared copies.
        let private =
            !self.temp_tables.is_empty() || !self.full_group_by() || self.no_backslash_escapes;
        let cached = match private {
            true => None,
            false => self
                .server
                .statements
                .get(database.as_deref(), sql, version),
        };
        let shared = match cached {
            Some(s) => s,
            None => {
                let statement = parser::parse_one_with(sql, !self.no_backslash_escapes)?;
                load_data::refuse_prepare(&statement)?;
                let s = Arc::new(SharedStatement {
                    params: parser::param_count(&statement),
                    plan: self.bind(&statement).ok().flatten(),
                    statement: Arc::new(statement),
                    version,
                    replans: Default::default(),
                });
                if !private {
                    self.server
                        .statements
                        .put(database.as_deref(), sql, s.clone());
                }
                s
            }
        };
        // Checked here (no metadata of unreadable tables) and again at EXECUTE.
        self.grants.refresh(&self.engine.accounts);
        self.grants
            .check(&shared.statement, self.ctx.database.as_deref())?;
        let params = shared.params;
        let columns = match &shared.plan {
            Some(Bound {
                plan: Plan::Query(q),
                ..
            }) => q.columns.to_vec(),
            _ => Vec::new(),
        };
        let id = self.next_statement_id;
        self.next_statement_id = self.next_statement_id.wrapping_add(1).max(1);
        let info = PreparedInfo {
            statement_id: id,
            // As MySQL describes a parameter before it is bound: a binary
            // VAR_STRING (charset 63, BINARY flag), nullable.
            params: (0..params)
                .map(|_| column_meta("?", DataType::VarBinary { len: 0 }, true))
                .collect(),
            columns,
        };
        let count = self.claim_prepared_slot()?;
        Ok((info, Prepared { shared, count }))
    }

    /// Counts one more prepared statement: 1461 past max_prepared_stmt_count,
    /// 3170 past the memory budget.
    fn claim_prepared_slot(&self) -> R<Arc<std::sync::atomic::AtomicUsize>> {
        lockstep_types::memory::check_statement()?;
        let max = self
            .server
            .globals
            .get("max_prepared_stmt_count")
            .and_then(|v| v.to_i64())
            .map_or(16382, |n| n.max(0) as usize);
        let count = &self.server.prepared;
        let claimed = count.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < max).then_some(n + 1)
        });
        if claimed.is_err() {
            return Err(Error::new(
                Code::MaxPreparedStmtCountReached,
                format!("Can't create more than max_prepared_stmt_count statements (current value: {max})"),
            ));
        }
        Ok(count.clone())
    }

    /// COM_STMT_EXECUTE of a statement `prepare` returned.
    pub async fn execute(&mut self, p: &mut Prepared, params: &[Value]) -> R<Response> {
        self.drop_stream();
        self.stream_next = !std::mem::take(&mut self.whole_next) && self.stream_results;
        self.process.counters.question();
        self.begin_diagnostics();
        let r = self.execute_prepared(p, params).await;
        self.record_error(&r);
        r
    }

    async fn execute_prepared(&mut self, p: &mut Prepared, params: &[Value]) -> R<Response> {
        let version = self.engine.ddl_version.load(Ordering::SeqCst);
        if params.len() != p.shared.params {
            return Err(Error::new(
                Code::WrongArguments,
                "Incorrect arguments to mysqld_stmt_execute",
            ));
        }
        let stale = p.shared.version != version;
        if stale || p.shared.plan.is_none() {
            // Re-bound in this session only: the shared copy is keyed by the
            // database it was prepared in, which may not be the current one.
            let plan = self.bind(&p.shared.statement)?;
            if stale || plan.is_some() {
                p.shared = Arc::new(SharedStatement {
                    statement: p.shared.statement.clone(),
                    params: p.shared.params,
                    plan,
                    version,
                    replans: Default::default(),
                });
            }
        }
        let s = &*p.shared;
        // MySQL types `SELECT ?` after the bound value: bind again with it.
        let typed = match parser::selects_param(&s.statement) {
            true => self.bind_with(&s.statement, params.to_vec())?,
            false => None,
        };
        // A plan that depends on a parameter's estimate: the one for this
        // execution's values.
        let replanned = match (&typed, &s.plan) {
            (None, Some(b)) if !b.probes.is_empty() => self.replan(s, b, params)?,
            _ => None,
        };
        let plan = typed.as_ref().or(replanned.as_deref()).or(s.plan.as_ref());
        let r = self.run(&s.statement, params, plan).await;
        let r = self.count_warnings(r);
        let r = self.to_results_charset(r);
        // A KILL QUERY ends this statement only, as after COM_QUERY.
        if self.stream.is_none() {
            self.process.kill_query.store(false, Ordering::Relaxed);
        }
        self.publish_trx(None);
        r
    }

    /// SELECT ... INTO @vars: the query runs as a SELECT (its privileges,
    /// locks and plan), and its one row goes into the variables.
    async fn select_into(
        &mut self,
        query: &parser::Query,
        vars: &[String],
        params: &[Value],
    ) -> R<Response> {
        let select = Statement::Select(Box::new(query.clone()));
        let rows = match Box::pin(self.run(&select, params, None)).await? {
            Response::Rows(rs) => rs.rows,
            Response::Ok(_) => Vec::new(),
        };
        if rows.len() > 1 {
            return Err(Error::new(
                Code::TooManyRows,
                "Result consisted of more than one row",
            ));
        }
        let Some(row) = rows.into_iter().next() else {
            self.ctx.warnings.push(crate::exec::Condition::warning(
                1329,
                "No data - zero rows fetched, selected, or processed".into(),
            ));
            return Ok(ok(0));
        };
        if row.len() != vars.len() {
            return Err(Error::new(
                Code::WrongNumberOfColumnsInSelect,
                "The used SELECT statements have a different number of columns",
            ));
        }
        for (name, v) in vars.iter().zip(row) {
            self.ctx.user_vars.insert(name.clone(), v);
        }
        Ok(ok(1))
    }

    /// The next COM_STMT_EXECUTE's result is wanted whole (it opens a
    /// cursor, whose rows the connection keeps between fetches).
    pub fn want_whole_result(&mut self) {
        self.whole_next = true;
    }

    /// An OK packet reports how many warnings its statement left (e.g. the
    /// notes of DROP TABLE IF EXISTS), whichever statement raised them.
    fn count_warnings(&mut self, r: R<Response>) -> R<Response> {
        let notes = self.sql_notes;
        if !notes {
            // sql_notes=0: notes are not recorded, as in MySQL.
            self.ctx
                .warnings
                .retain(|c| !c.note && warning_level(c.code) != "Note");
        }
        let n = u16::try_from(self.ctx.warnings.len()).unwrap_or(u16::MAX);
        match r {
            Ok(Response::Ok(mut info)) => {
                info.warnings = if notes { info.warnings.max(n) } else { n };
                Ok(Response::Ok(info))
            }
            Ok(Response::Rows(mut rs)) => {
                rs.warnings = n;
                Ok(Response::Rows(rs))
            }
            other => other,
        }
    }

    /// Ends the session: open work is rolled back.
    /// The result sets a CALL run by `execute` produced, sent before its
    /// reply (the reply of COM_QUERY carries them itself).
    pub fn take_call_results(&mut self) -> Vec<Response> {
        std::mem::take(&mut self.call_results)
    }

    pub fn disconnect(&mut self) {
        self.stream = None;
        self.engine.rollback(&mut self.txn);
        self.temp_tables.clear();
        self.server.user_locks.release_all(self.ctx.connection_id);
        self.server.processes.lock().remove(&self.ctx.connection_id);
        self.server.counters.retire(&self.process.counters);
    }

    /// COM_RESET_CONNECTION / COM_CHANGE_USER: the transaction rolled
    /// back and every session setting back to its global value.
    pub fn reset(&mut self) {
        self.stream = None;
        self.engine.rollback(&mut self.txn);
        self.temp_tables.clear();
        self.server.user_locks.release_all(self.ctx.connection_id);
        self.explicit = false;
        self.ctx.user_vars.clear();
        self.ctx.session_vars.clear();
        self.inherit_foreign_key_checks();
        self.ctx.last_insert_id = 0;
        self.ctx.warnings.clear();
        self.ctx.previous_warnings = 0;
        self.refresh_memory_limits();
        self.refresh_sql_mode();
        self.refresh_time_zone();
        let fresh = Session::new(
            self.server.clone(),
            self.ctx.connection_id,
            "",
            &self.process.host,
        );
        self.autocommit = fresh.autocommit;
        self.isolation = fresh.isolation;
        self.next_isolation = None;
        self.next_read_only = None;
        self.session_read_only = fresh.session_read_only;
        self.txn_read_only = false;
        self.safe_updates = false;
        self.publish_trx(None);
        self.max_execution_ms = fresh.max_execution_ms;
        self.lock_wait_timeout = fresh.lock_wait_timeout;
        self.wait_timeout = fresh.wait_timeout;
        self.no_backslash_escapes = fresh.no_backslash_escapes;
        self.result_charset = None;
        self.txn.isolation = self.isolation;
        // `fresh` registered itself under this connection's id.
        self.server
            .processes
            .lock()
            .insert(self.ctx.connection_id, self.process.clone());
    }

    /// COM_CHANGE_USER: no current database until the login names one.
    pub fn forget_database(&mut self) {
        self.ctx.database = None;
        *self.process.database.lock() = None;
    }

    /// How long the client of an open, admitted transaction may stay silent
    /// before the transaction gives its throttling slot back (`idle`). Long
    /// next to the gap between a busy client's statements, short next to a
    /// client that left a transaction open (autocommit=0 and no COMMIT):
    /// such sessions must not fill the gate and stall everyone (8.3.2).
    pub fn idle_after(&self) -> Option<std::time::Duration> {
        self.txn
            .admitted()
            .then_some(std::time::Duration::from_millis(100))
    }

    /// How long the client may stay silent between commands.
    pub fn wait_timeout(&self) -> Duration {
        self.wait_timeout
    }

    /// The client went idle inside a transaction: park its slot.
    pub fn idle(&mut self) {
        self.engine.park(&mut self.txn);
    }

    pub fn killed(&self) -> bool {
        self.process.kill_connection.load(Ordering::Relaxed)
    }

    fn bind(&self, stmt: &Statement) -> R<Option<Bound>> {
        self.bind_with(stmt, Vec::new())
    }

    /// Binds with `params` in place of the placeholders (see Binder::params).
    fn bind_with(&self, stmt: &Statement, params: Vec<Value>) -> R<Option<Bound>> {
        let mut b = self.binder();
        b.params = params;
        self.bind_by(b, stmt)
    }

    /// Binds with `b`, set up by the caller.
    fn bind_by(&self, mut b: Binder<'_>, stmt: &Statement) -> R<Option<Bound>> {
        let version = self.engine.ddl_version.load(Ordering::SeqCst);
        let view = b.rewrite_view_dml(stmt)?;
        // LOCK TABLES knows the base table by the name the statement wrote.
        let named = view.as_ref().and(crate::plan::view_dml::target_name(stmt));
        let stmt = view.as_ref().map_or(stmt, |v| &v.stmt);
        let plan = match stmt {
            Statement::Select(q) | Statement::Do(q) => {
                if self.system_query(q) {
                    return Ok(None);
                }
                Plan::Query(Arc::new(b.bind_query(q)?))
            }
            Statement::Insert(i) => Plan::Insert(b.bind_insert(i)?),
            Statement::Update(u) => match &u.multi {
                Some(m) => Plan::Multi(b.bind_multi_update(u, m)?),
                None => Plan::Update(b.bind_update(u)?),
            },
            Statement::Delete(d) => match &d.multi {
                Some(m) => Plan::Multi(b.bind_multi_delete(d, m)?),
                None => Plan::Delete(b.bind_delete(d)?),
            },
            _ => return Ok(None),
        };
        let checks = match &view {
            Some(v) => views::bind_view_checks(&mut b, &plan, v)?,
            None => Vec::new(),
        };
        let reads = std::mem::take(&mut b.reads);
        let probes = b.known.probes.take();
        let mut bound = Bound::new(plan, reads, version).with_views(b);
        if let (Some(v), Some(named)) = (&view, named) {
            let base = bound
                .refs
                .iter_mut()
                .filter(|(_, n)| n.eq_ignore_ascii_case(&v.alias));
            base.for_each(|r| r.1 = named.clone());
        }
        bound.probes = probes;
        bound.view_checks = Arc::new(checks);
        bound.view_stmt = view.map(|v| v.stmt);
        Ok(Some(bound))
    }

    /// Queries that read a table of a system schema (information_schema,
    /// performance_schema, mysql, sys) anywhere, subqueries included:
    /// answered by `infoschema`, which builds those tables for the query.
    fn system_query(&self, q: &parser::Query) -> bool {
        let in_system = self.ctx.database.as_deref().is_some_and(is_system_db);
        parser::names_table(q, &mut |name| {
            name.database.as_deref().map_or(in_system, is_system_db)
        })
    }

    // ---------- statement dispatch ----------

    async fn run(
        &mut self,
        stmt: &Statement,
        params: &[Value],
        plan: Option<&Bound>,
    ) -> R<Response> {
        let before = self.track_before(stmt);
        let r = self.dispatch(stmt, params, plan).await;
        if let Some(before) = before {
            self.track_after(stmt, before, r.is_ok());
        }
        self.track_transaction(&r);
        if self.table_locks.active() && changes_schema(stmt) {
            // DDL under LOCK TABLES: the locks follow what it rebuilt.
            self.follow_locked_tables().await?;
        }
        r
    }

    async fn dispatch(
        &mut self,
        stmt: &Statement,
        params: &[Value],
        plan: Option<&Bound>,
    ) -> R<Response> {
        let may_stream = std::mem::take(&mut self.stream_next);
        self.process.counters.statement(stmt);
        // One atomic load unless an account changed; nothing else for root.
        self.grants.refresh(&self.engine.accounts);
        self.sync_active_roles();
        self.grants.check(stmt, self.ctx.database.as_deref())?;
        self.check_function_execute(stmt)?;
        self.refuse_read_only(stmt)?;
        if changes_schema(stmt) {
            self.refuse_writes()?;
        }
        let _ddl_gate = self.gate_ddl(stmt).await?;
        match stmt {
            Statement::SelectInto { query, vars } => self.select_into(query, vars, params).await,
            Statement::Select(q) if self.system_query(q) => {
                crate::session::infoschema::query(self, q)
            }
            Statement::Do(_) => {
                let own = self.lock_plan(stmt, plan).await?;
                let plan = own
                    .as_ref()
                    .or(plan)
                    .expect("lock_plan binds when no plan is given");
                self.run_dml(plan, params).await.map(|_| ok(0))
            }
            Statement::Select(_)
            | Statement::Insert(_)
            | Statement::Update(_)
            | Statement::Delete(_) => self.run_query(stmt, params, plan, may_stream).await,
            Statement::Begin {
                consistent_snapshot,
                read_only,
            } => self.begin(*read_only, *consistent_snapshot).await,
            Statement::Commit => {
                self.commit().await?;
                Ok(ok(0))
            }
            Statement::Rollback => Ok(self.rollback_statement()),
            Statement::Savepoint(name) => {
                self.savepoint(name);
                Ok(ok(0))
            }
            Statement::RollbackToSavepoint(name) => self.rollback_to_savepoint(name),
            Statement::ReleaseSavepoint(name) => self.release_savepoint(name),
            Statement::Use { database } => {
                self.use_database(database)?;
                Ok(ok(0))
            }
            Statement::Set(assignments) => {
                let r = self.set_all(assignments, params).await;
                if !self.in_transaction() {
                    // Locks a subquery took end with the statement (the
                    // next transaction's isolation stays as SET it).
                    self.engine.commit(&mut self.txn).await?;
                }
                r.map(|()| ok(0))
            }
            Statement::SetTransaction {
                scope,
                isolation,
                read_only,
            } => self.set_transaction(*scope, isolation.as_deref(), *read_only),
            Statement::CreateDatabase {
                name,
                if_not_exists,
            } => self.create_database(name, *if_not_exists).await,
            Statement::DropDatabase { name, if_exists } => {
                self.drop_database(name, *if_exists).await
            }
            Statement::CreateTable(ct) => self.create_table(ct).await,
            Statement::DropTable {
                tables,
                if_exists,
                temporary,
            } => self.drop_tables(tables, *if_exists, *temporary).await,
            Statement::Truncate { table } => self.truncate(table).await,
            Statement::CreateIndex {
                name,
                table,
                columns,
                unique,
                online,
                comment,
            } => {
                self.create_index_statement(name, table, columns, *unique, online, comment)
                    .await
            }
            Statement::DropIndex {
                name,
                table,
                online,
            } => self.drop_index_statement(name, table, online).await,
            Statement::AlterTable {
                table,
                actions,
                online,
            } => {
                self.commit().await?;
                self.alter_table(table, actions, online).await?;
                Ok(ok(0))
            }
            Statement::RenameTable { renames } => {
                self.commit().await?;
                self.rename_tables(renames).await?;
                Ok(ok(0))
            }
            Statement::CreateView(cv) => self.create_view(cv).await,
            Statement::Routine(r) => self.routine_statement(r, params).await,
            Statement::DropView { views, if_exists } => self.drop_views(views, *if_exists).await,
            Statement::Show(show) => self.show(show),
            Statement::Describe { table, column } => self.show(&Show::Columns {
                table: table.clone(),
                full: false,
                filter: column.clone().map(ShowFilter::Like),
            }),
            Statement::Explain(inner, parser::ExplainFormat::Analyze) => {
                self.explain_analyze(inner).await
            }
            Statement::Explain(inner, format) => self.explain(inner, *format, params),
            Statement::Kill {
                connection_id,
                query_only,
            } => self.kill(connection_id, *query_only, params),
            Statement::CreateUser { .. }
            | Statement::DropUser { .. }
            | Statement::AlterUser { .. }
            | Statement::SetPassword { .. }
            | Statement::Grant { .. }
            | Statement::Revoke { .. } => {
                self.commit().await?;
                let db = self.ctx.database.clone();
                crate::session::users::run(
                    &self.engine,
                    &self.grants,
                    db.as_deref(),
                    stmt,
                    &mut self.ctx.warnings,
                )
                .await?;
                Ok(ok(0))
            }
            Statement::Role(r) => self.run_role(r).await,
            Statement::Ignored(text) => ignored(text).map(|()| ok(0)),
            Statement::LockTables(items) => self.lock_tables(items).await,
            Statement::UnlockTables => self.unlock_tables().await,
            Statement::LoadData(l) => self.start_load(l).await,
            Statement::FlushTablesLock { tables, export } => {
                self.flush_read_lock(tables, *export).await
            }
            Statement::TableMaintenance {
                op: parser::Maintenance::Check,
                tables,
            } => self.check_tables(tables).await,
            Statement::TableMaintenance {
                op: parser::Maintenance::Checksum { quick },
                tables,
            } => self.checksum_tables(tables, *quick).await,
            Statement::TableMaintenance { op, tables } => Ok(self.maintain_tables(*op, tables)),
            Statement::Histogram {
                tables,
                columns,
                buckets,
            } => self.histogram(tables, columns, *buckets).await,
            Statement::Replica(r) => self.replica_statement(r).await,
        }
    }

    /// SELECT, INSERT, UPDATE, DELETE: locks and plan, then the executor
    /// with the statement's deadline and lock-wait policy.
    async fn run_query(
        &mut self,
        stmt: &Statement,
        params: &[Value],
        plan: Option<&Bound>,
        may_stream: bool,
    ) -> R<Response> {
        if !matches!(stmt, Statement::Select(_)) {
            if let Err(e) = self.refuse_writes() {
                if !self.in_transaction() {
                    // The statement was the next transaction.
                    self.apply_next_isolation();
                }
                return Err(e);
            }
        }
        let own = self.lock_plan(stmt, plan).await?;
        let plan = own
            .as_ref()
            .or(plan)
            .expect("lock_plan binds when no plan is given");
        self.check_safe_update(plan)?;
        self.ctx.interrupt.deadline = self.deadline(stmt);
        // A statement run inside another (a stored function's) keeps the
        // outer statement's clock.
        let own_clock = self.ctx.statement_now.is_none();
        if own_clock {
            self.ctx.statement_now = Some(self.ctx.clock());
        }
        self.stream_this = may_stream && matches!(stmt, Statement::Select(_));
        self.calc_found_this = matches!(stmt, Statement::Select(q) if q.calc_found_rows);
        self.txn.lock_wait = match stmt {
            Statement::Select(q) => match q.lock_wait {
                parser::LockWaitClause::Wait => LockWaitPolicy::Wait,
                parser::LockWaitClause::NoWait => LockWaitPolicy::NoWait,
                parser::LockWaitClause::SkipLocked => LockWaitPolicy::SkipLocked,
            },
            _ => LockWaitPolicy::Wait,
        };
        let r = self.run_dml(plan, params).await;
        self.txn.lock_wait = LockWaitPolicy::Wait;
        self.ctx.interrupt.deadline = None;
        if own_clock {
            self.ctx.statement_now = None;
        }
        r
    }

    /// Resolves `name` and takes it exclusive for DDL; resolves again if
    /// it was dropped or replaced while this statement waited.
    async fn table_for_ddl(
        &self,
        name: &parser::ObjectName,
    ) -> R<(Arc<lockstep_tables::Table>, lockstep_engine::DdlLocks)> {
        let binder = self.binder();
        loop {
            let t = binder.table(name)?;
            if t.temporary {
                return Err(Error::unsupported("this DDL on a temporary table"));
            }
            let locks = self.lock_for_ddl(std::slice::from_ref(&t)).await?;
            if Arc::ptr_eq(&t, &binder.table(name)?) {
                return Ok((t, locks));
            }
        }
    }

    async fn create_index(
        &mut self,
        t: &Arc<lockstep_tables::Table>,
        name: Option<String>,
        columns: &[String],
        unique: bool,
    ) -> R<()> {
        let def = t.def();
        let mut pos = Vec::new();
        for c in columns {
            pos.push(def.column_index(c).ok_or_else(|| {
                Error::new(
                    Code::KeyColumnDoesNotExist,
                    format!("Key column '{c}' doesn't exist in table"),
                )
            })?);
        }
        let name = name.unwrap_or_else(|| columns.first().cloned().unwrap_or_default());
        self.engine
            .create_index(
                t,
                lockstep_tables::IndexDef {
                    name,
                    columns: pos,
                    unique,
                },
            )
            .await
    }

    /// Checks the plan's tables for privileges and takes their metadata
    /// locks; binds the statement (again) when there is no plan or DDL
    /// changed something since it was bound. Returns the plan it bound.
    async fn lock_plan(&mut self, stmt: &Statement, given: Option<&Bound>) -> R<Option<Bound>> {
        let mut own = match given {
            Some(_) => None,
            None => Some(
                self.bind(stmt)?
                    .ok_or_else(|| Error::internal("statement has no plan"))?,
            ),
        };
        loop {
            let plan = own.as_ref().or(given).expect("bound above");
            self.check_plan_privileges(plan)?;
            let reach = prelock::reach_of(&self.engine.catalog, plan);
            self.use_tables(&plan.tables, &plan.refs, &reach).await?;
            self.gate_writes(plan, &reach).await?;
            if plan.version == self.engine.ddl_version.load(Ordering::SeqCst) {
                return Ok(own);
            }
            own = Some(
                self.bind(stmt)?
                    .ok_or_else(|| Error::internal("statement has no plan"))?,
            );
        }
    }

    /// SELECT on what the plan reads (a multi-table UPDATE or DELETE: what
    /// it reads besides its targets, which need UPDATE or DELETE).
    fn check_plan_privileges(&self, plan: &Bound) -> R<()> {
        if let Some(s) = &plan.view_stmt {
            self.grants.check(s, self.ctx.database.as_deref())?;
        }
        let reads = &plan.tables[..plan.reads];
        match &plan.plan {
            Plan::Multi(m) => self.grants.check_multi(m, reads)?,
            _ => self.grants.check_reads(reads)?,
        }
        views::check_definer_reads(&self.engine.accounts, &self.grants, &plan.definer_reads)
    }

    /// Takes shared metadata locks on `tables` for the transaction: waits
    /// for DDL on them up to lock_wait_timeout (1205), or until killed
    /// (1317). Outside a transaction a failure gives back what it took.
    async fn use_tables(
        &mut self,
        tables: &[Arc<lockstep_tables::Table>],
        refs: &[(Arc<lockstep_tables::Table>, String)],
        reach: &prelock::Reach,
    ) -> R<()> {
        if let Some(r) = self.table_locks.cover(tables, refs, reach) {
            return r;
        }
        // What triggers and cascades reach is locked as the statement's own.
        let with_reach: Vec<_>;
        let tables = match reach.is_empty() {
            true => tables,
            false => {
                with_reach = tables.iter().chain(reach.all()).cloned().collect();
                &with_reach
            }
        };
        if self.engine.try_use_tables(&mut self.txn, tables) {
            return Ok(());
        }
        // Waiting for DDL: the throttle slot goes to a transaction that can
        // run (as for row-lock waits); run_dml re-enters.
        self.engine.park(&mut self.txn);
        let timeout = system_var(&self.server, &self.ctx, false, "lock_wait_timeout")
            .ok()
            .and_then(|v| v.to_i64())
            .map_or(MAX_WAIT_TIMEOUT, |s| s.clamp(1, MAX_WAIT_TIMEOUT));
        let process = self.process.clone();
        let wait =
            self.engine
                .use_tables(&mut self.txn, tables, Duration::from_secs(timeout as u64));
        let r = until_killed(&process, wait).await;
        if r.is_err() && !self.in_transaction() {
            self.engine.rollback(&mut self.txn);
        }
        r
    }

    /// CREATE TABLE ... SELECT: the statement with the query's result
    /// columns as its column list.
    fn columns_of_query(
        &self,
        ct: &parser::CreateTable,
        q: &parser::Query,
    ) -> R<parser::CreateTable> {
        if !ct.columns.is_empty() || ct.like.is_some() {
            return Err(Error::unsupported("CREATE TABLE with columns and a SELECT"));
        }
        let plan = self.binder().bind_query(q)?;
        let mut out = ct.clone();
        out.columns = plan
            .columns
            .iter()
            .map(|c| parser::ColumnSpec {
                name: c.name.clone(),
                data_type: c.data_type,
                not_null: !c.nullable,
                default: None,
                auto_increment: false,
                primary_key: false,
                unique: false,
                on_update_now: false,
                comment: None,
                generated: None,
                charset: charset::spec_of(c.collation),
            })
            .collect();
        Ok(out)
    }

    /// The rows of CREATE TABLE ... SELECT, inserted into the new table;
    /// if that fails the table goes again (it was empty).
    async fn fill_from_query(&mut self, ct: &parser::CreateTable) -> R<Response> {
        let Some(q) = &ct.select else {
            return Ok(ok(0));
        };
        let insert = Statement::Insert(Box::new(parser::Insert {
            table: ct.name.clone(),
            columns: ct.columns.iter().map(|c| c.name.clone()).collect(),
            source: parser::InsertSource::Query(q.clone()),
            ignore: false,
            replace: false,
            on_duplicate: Vec::new(),
            row_alias: None,
        }));
        let mut filled = Box::pin(self.run(&insert, &[], None)).await;
        if filled.is_ok() && !ct.temporary {
            // DDL ends its transaction, rows and all, as in MySQL.
            filled = self.commit().await.and(filled);
        }
        if filled.is_err() {
            let drop = Statement::DropTable {
                tables: vec![ct.name.clone()],
                if_exists: true,
                temporary: ct.temporary,
            };
            let _ = Box::pin(self.run(&drop, &[], None)).await;
        }
        filled
    }

    /// `db.name` of a statement's table name, in the current database.
    fn qualified(&self, t: &parser::ObjectName) -> String {
        let db = t.database.clone().or(self.ctx.database.clone());
        format!("{}.{}", db.unwrap_or_default(), t.name)
    }

    fn temp_key(&self, t: &parser::ObjectName) -> Option<(String, String)> {
        let db = t.database.clone().or(self.ctx.database.clone())?;
        Some((db, t.name.clone()))
    }

    /// The session's temporary table of that name.
    /// ANALYZE / OPTIMIZE / REPAIR TABLE: rows per table, as MySQL reports
    /// them for InnoDB (a missing table is an error row, not an error).
    fn maintain_tables(&self, op: parser::Maintenance, tables: &[parser::ObjectName]) -> Response {
        use parser::Maintenance as M;
        let binder = self.binder();
        let current = self.database().unwrap_or_default().to_string();
        let op_name = match op {
            M::Analyze => "analyze",
            M::Optimize => "optimize",
            M::Repair => "repair",
            M::Check => "check",
            M::Checksum { .. } => "checksum",
        };
        let mut out = Vec::new();
        for name in tables {
            let db = name.database.clone().unwrap_or_else(|| current.clone());
            let shown = Value::str(&format!("{db}.{}", name.name));
            let row = |kind: &str, text: &str| {
                vec![
                    shown.clone(),
                    Value::str(op_name),
                    Value::str(kind),
                    Value::str(text),
                ]
            };
            if let Some(text) = self.not_base_table(name) {
                out.push(row("Error", &text));
                out.push(row("status", "Operation failed"));
                continue;
            }
            match (binder.table(name), op) {
                (Ok(_), M::Repair) => out.push(row(
                    "note",
                    "The storage engine for the table doesn't support repair",
                )),
                (Ok(t), _) => {
                    if op == M::Optimize {
                        // Purge compacts rows as it goes: no file to rebuild.
                        let note = "Table does not support optimize, doing analyze instead";
                        out.push(row("note", note));
                    }
                    t.analyze();
                    out.push(row("status", "OK"));
                }
                (Err(e), _) => {
                    out.push(row("Error", &e.message));
                    out.push(row("status", "Operation failed"));
                }
            }
        }
        rows(&["Table", "Op", "Msg_type", "Msg_text"], out)
    }

    fn temporary_table(&self, t: &parser::ObjectName) -> Option<Arc<lockstep_tables::Table>> {
        self.temp_key(t)
            .and_then(|k| self.temp_tables.get(&k).cloned())
    }

    /// Drops the session's temporary table of that name, if any.
    fn drop_temporary(&mut self, t: &parser::ObjectName) -> bool {
        let removed = self.temp_key(t).and_then(|k| self.temp_tables.remove(&k));
        let dropped = removed.is_some();
        if let Some(t) = removed {
            self.temp_comments.remove(&t.id);
            // Plans that named it must bind again.
            self.engine.ddl_version.fetch_add(1, Ordering::SeqCst);
        }
        dropped
    }

    /// CREATE TEMPORARY TABLE: a table of this session only (it may hide a
    /// permanent one of the same name), never logged.
    fn create_temporary(&mut self, ct: &parser::CreateTable, db: String) -> R<()> {
        if !ct.checks.is_empty() {
            return Err(Error::unsupported("CHECK constraints on a temporary table"));
        }
        let keeps_fks = ct
            .engine
            .as_deref()
            .is_none_or(auto_increment::engine_has_foreign_keys);
        if !ct.foreign_keys.is_empty() && keeps_fks {
            // InnoDB keeps no constraints on temporary tables.
            return Err(Error::new(
                Code::CannotAddForeign,
                "Cannot add foreign key constraint",
            ));
        }
        if !self.engine.catalog.database_exists(&db) {
            return Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")));
        }
        let key = (db.clone(), ct.name.name.clone());
        if self.temp_tables.contains_key(&key) {
            if ct.if_not_exists {
                let note = format!("Table '{}' already exists", ct.name.name);
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(1050, note));
                return Ok(());
            }
            return Err(Error::new(
                Code::TableExists,
                format!("Table '{}' already exists", ct.name.name),
            ));
        }
        let mut def = match &ct.like {
            Some(other) => {
                let mut d = (*self.binder().table(other)?.def()).clone();
                d.name = ct.name.name.clone();
                d.database = db;
                d
            }
            None => crate::plan::ddl::table_def(&db, ct)?,
        };
        if !ct.foreign_keys.is_empty() {
            self.foreign_keys_not_kept(&mut def, ct)?;
        }
        let comments = self.create_comments(ct, &def)?;
        def.id = self.engine.catalog.allocate_table_id();
        self.temp_comments.insert(def.id, comments);
        let table = Arc::new(lockstep_tables::Table::new_temporary(def));
        if let Some(n) = ct.auto_increment {
            table.auto_increment.store(n.max(1), Ordering::SeqCst);
        }
        self.temp_tables.insert(key, table);
        self.engine.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// SHOW [GLOBAL] STATUS and performance_schema's status tables: name
    /// and value.
    pub fn status_values(&self, global: bool) -> Vec<(&'static str, String)> {
        let e = &self.engine;
        let lock = e.lock_sys.stats();
        let throttle = e.txn_sys.throttle_stats();
        let log = e.log.stats();
        let mut v = status::values(&self.server, &self.process, global);
        v.extend([
            ("Innodb_row_lock_waits", lock.waits.to_string()),
            ("Innodb_deadlocks", lock.deadlocks.to_string()),
            // The log's own counters under InnoDB's names: fsyncs
            // per commit tell how well commits group (7.1.1).
            ("Innodb_log_writes", log.writes.to_string()),
            ("Innodb_os_log_fsyncs", log.fsyncs.to_string()),
            ("Innodb_os_log_written", log.bytes_written.to_string()),
            ("Lockstep_log_lsn", e.log.current_lsn().to_string()),
            ("Lockstep_log_durable_lsn", e.log.durable_lsn().to_string()),
            (
                "Lockstep_active_transactions",
                e.txn_sys.active_count().to_string(),
            ),
            (
                "Lockstep_memory_in_use",
                lockstep_types::memory::in_use().to_string(),
            ),
            (
                "Lockstep_memory_budget",
                lockstep_types::memory::budget().to_string(),
            ),
            (
                "Prepared_stmt_count",
                self.server.prepared.load(Ordering::Relaxed).to_string(),
            ),
            (
                "Lockstep_throttle_engaged",
                if throttle.engaged { "ON" } else { "OFF" }.to_string(),
            ),
            ("Lockstep_throttle_admitted", throttle.admitted.to_string()),
            ("Lockstep_throttle_waiting", throttle.waiting.to_string()),
            (
                "Lockstep_throttle_stalls_broken",
                throttle.forced.to_string(),
            ),
            (
                "Lockstep_throttle_readmitted",
                throttle.readmitted.to_string(),
            ),
            (
                "Compression",
                if self.compressed { "ON" } else { "OFF" }.to_string(),
            ),
            (
                "Ssl_cipher",
                self.tls
                    .as_ref()
                    .map(|t| t.cipher.clone())
                    .unwrap_or_default(),
            ),
            (
                "Ssl_version",
                self.tls
                    .as_ref()
                    .map(|t| t.version.clone())
                    .unwrap_or_default(),
            ),
        ]);
        v.extend(self.semisync_status());
        v
    }

    /// A binder for this session: its database and temporary tables.
    pub(super) fn binder(&self) -> Binder<'_> {
        let mut b = Binder::new(&self.engine.catalog, self.ctx.database.clone())
            .with_temporary(&self.temp_tables)
            .with_full_group_by(self.full_group_by());
        b.locals = self.routine_locals.clone();
        b.user_vars = Some(&self.ctx.user_vars);
        b.known.tz_offset = self.ctx.tz_offset;
        b.binary_connection = matches!(
            self.ctx.session_vars.get("character_set_connection"),
            Some(Value::Bytes(cs)) if cs == b"binary"
        );
        b
    }

    /// Whether sql_mode has ONLY_FULL_GROUP_BY.
    fn full_group_by(&self) -> bool {
        let mode = system_var(&self.server, &self.ctx, false, "sql_mode");
        match mode {
            Ok(Value::Bytes(m)) => m
                .split(|&c| c == b',')
                .any(|x| x.trim_ascii().eq_ignore_ascii_case(b"ONLY_FULL_GROUP_BY")),
            _ => false,
        }
    }

    /// SAVEPOINT name: a second one of the same name replaces the first.
    fn savepoint(&mut self, name: &str) {
        let txn = &self.txn;
        self.savepoints
            .retain(|(n, sp)| txn.holds(sp) && !n.eq_ignore_ascii_case(name));
        self.savepoints
            .push((name.to_string(), self.txn.savepoint()));
    }

    /// The position of savepoint `name` of the open transaction (1305).
    fn find_savepoint(&mut self, name: &str) -> R<usize> {
        let txn = &self.txn;
        self.savepoints.retain(|(_, sp)| txn.holds(sp));
        self.savepoints
            .iter()
            .rposition(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                Error::new(
                    Code::SpDoesNotExist,
                    format!("SAVEPOINT {name} does not exist"),
                )
            })
    }

    /// Work stays open after the statement (BEGIN, or autocommit off).
    fn in_transaction(&self) -> bool {
        self.explicit || !self.autocommit
    }

    /// Takes `tables` exclusive for DDL: waits up to lock_wait_timeout for
    /// every transaction using them to end (1205), or until killed (1317).
    async fn lock_for_ddl(
        &self,
        tables: &[Arc<lockstep_tables::Table>],
    ) -> R<lockstep_engine::DdlLocks> {
        if self.table_locks.active() {
            // Held exclusive by LOCK TABLES ... WRITE already.
            self.table_locks.ddl_tables(tables)?;
            return Ok(lockstep_engine::DdlLocks::held_by_caller());
        }
        let timeout = system_var(&self.server, &self.ctx, false, "lock_wait_timeout")
            .ok()
            .and_then(|v| v.to_i64())
            .map_or(MAX_WAIT_TIMEOUT, |s| s.clamp(1, MAX_WAIT_TIMEOUT));
        let wait = self
            .engine
            .lock_for_ddl(tables, Duration::from_secs(timeout as u64));
        until_killed(&self.process, wait).await
    }

    fn set_isolation(&mut self, iso: Isolation) {
        self.isolation = iso;
        self.ctx
            .session_vars
            .insert("transaction_isolation".into(), Value::str(iso.name()));
        self.ctx
            .session_vars
            .insert("tx_isolation".into(), Value::str(iso.name()));
        if !self.txn.has_writes() && !self.explicit {
            self.txn.isolation = iso;
        }
    }

    fn apply_next_isolation(&mut self) {
        self.next_isolation = None;
        self.next_read_only = None;
        self.txn.isolation = self.isolation;
    }

    /// SET [GLOBAL|SESSION] TRANSACTION READ ONLY / READ WRITE.
    fn set_transaction_read_only(&mut self, scope: AstScope, ro: bool) -> R<()> {
        match scope {
            AstScope::Global => {
                self.server
                    .globals
                    .set("transaction_read_only", Value::Int(ro as i64))?;
                self.server
                    .globals
                    .set("tx_read_only", Value::Int(ro as i64))
            }
            AstScope::Session => {
                self.set_session_read_only(ro);
                Ok(())
            }
            AstScope::Next => {
                if self.explicit {
                    return Err(Error::new(
                        Code::CantChangeTxCharacteristics,
                        "Transaction characteristics can't be changed while a transaction is in progress",
                    ));
                }
                self.next_read_only = Some(ro);
                Ok(())
            }
        }
    }

    fn set_session_read_only(&mut self, ro: bool) {
        self.session_read_only = ro;
        for name in ["transaction_read_only", "tx_read_only"] {
            self.ctx
                .session_vars
                .insert(name.into(), Value::Int(ro as i64));
        }
    }

    /// When a SELECT must stop: its MAX_EXECUTION_TIME hint, else the
    /// session's max_execution_time (MySQL applies both to SELECT only).
    fn deadline(&self, stmt: &Statement) -> Option<Instant> {
        let Statement::Select(q) = stmt else {
            return None;
        };
        let ms = q.max_execution_time.unwrap_or(self.max_execution_ms);
        (ms > 0).then(|| Instant::now() + Duration::from_millis(ms))
    }

    /// sql_safe_updates: an UPDATE or DELETE that would scan the whole
    /// table without a LIMIT is refused (1175), as in MySQL.
    fn check_safe_update(&self, plan: &Bound) -> R<()> {
        let unkeyed = match &plan.plan {
            Plan::Update(m) | Plan::Delete(m) => m.scan.access.is_full_scan() && m.limit.is_none(),
            Plan::Multi(m) => m.full_scan,
            _ => false,
        };
        if self.safe_updates && unkeyed {
            return Err(Error::new(
                Code::UpdateWithoutKeyInSafeMode,
                "You are using safe update mode and you tried to update a table without a WHERE that uses a KEY column. To disable safe mode, toggle the option in Preferences -> SQL Editor and reconnect.",
            ));
        }
        Ok(())
    }

    /// A write now would be inside a READ ONLY transaction (1792).
    fn refuse_writes(&self) -> R<()> {
        let ro = if self.explicit {
            self.txn_read_only
        } else {
            self.next_read_only.unwrap_or(self.session_read_only)
        };
        if ro {
            return Err(Error::new(
                Code::ReadOnlyTransaction,
                "Cannot execute statement in a READ ONLY transaction.",
            ));
        }
        Ok(())
    }

    async fn set_all(&mut self, assignments: &[parser::SetAssignment], params: &[Value]) -> R<()> {
        for a in assignments {
            self.set(a, params).await?;
        }
        Ok(())
    }

    async fn set(&mut self, a: &parser::SetAssignment, params: &[Value]) -> R<()> {
        // Any SET may name a connection character set.
        self.result_charset = None;
        let value = match &a.value {
            None | Some(parser::Expr::Default) => Value::Null,
            Some(e) => self.set_value(e, params).await?,
        };
        match &a.target {
            SetTarget::User(name) => {
                self.ctx.user_vars.insert(name.to_ascii_lowercase(), value);
            }
            SetTarget::Names { charset, collation } => {
                charset::set_names(&mut self.ctx.session_vars, charset, collation.as_deref())?;
            }
            SetTarget::CharacterSet(cs) => {
                charset::set_character_set(&mut self.ctx.session_vars, cs)?;
            }
            SetTarget::System { scope, name } => {
                let name = name.to_ascii_lowercase();
                let default = matches!(a.value, Some(parser::Expr::Default));
                self.set_system(*scope, name, value, default).await?;
            }
        }
        Ok(())
    }

    /// The value a SET assigns: its expression evaluated with the locks,
    /// privileges and prelocking a SELECT of it would take.
    async fn set_value(&mut self, e: &parser::Expr, params: &[Value]) -> R<Value> {
        let mut binder = self.binder();
        let b = binder.bind_expr(e, &crate::plan::bind::Scope::default())?;
        // A subquery reads tables like any SELECT.
        self.grants.check_reads(&binder.reads)?;
        views::check_definer_reads(&self.engine.accounts, &self.grants, &binder.definer_reads)?;
        let mut used = binder.reads.clone();
        used.extend(binder.view_tables.iter().cloned());
        let refs = std::mem::take(&mut binder.refs);
        // Stored functions it calls use and write tables as well.
        let called = binder.called.take();
        let reach = prelock::reach_of_calls(&self.engine.catalog, &called);
        self.use_tables(&used, &refs, &reach).await?;
        self.gate_written(Vec::new(), &reach).await?;
        let mut exec = Exec::new(&self.engine, &mut self.txn, &mut self.ctx, params);
        match exec.eval(&b, &[]) {
            Ok(v) => Ok(v),
            Err(EngineError::Sql(e)) => Err(e),
            Err(EngineError::LockWait(_)) => Err(Error::internal("lock wait in SET")),
        }
    }

    /// SET [GLOBAL|SESSION] of a system variable (`default`: = DEFAULT).
    async fn set_system(
        &mut self,
        scope: AstScope,
        name: String,
        value: Value,
        default: bool,
    ) -> R<()> {
        let Some(var_scope) = self.server.globals.scope(&name) else {
            return Err(crate::session::vars::unknown(&name));
        };
        if var_scope == crate::session::vars::VarScope::ReadOnly {
            return Err(crate::session::vars::read_only(&name));
        }
        if scope == AstScope::Global {
            if var_scope == crate::session::vars::VarScope::Session {
                return Err(Error::new(
                    Code::LocalVariable,
                    format!(
                        "Variable '{name}' is a SESSION variable and can't be used with SET GLOBAL"
                    ),
                ));
            }
            let v = if default {
                crate::session::vars::Globals::compiled_default(&name).unwrap_or(Value::Null)
            } else {
                value
            };
            self.apply_global(&name, v)?;
            return Ok(());
        }
        if var_scope == crate::session::vars::VarScope::SessionReadOnly {
            return Err(crate::session::vars::session_read_only(&name));
        }
        if var_scope == crate::session::vars::VarScope::Global {
            return Err(Error::new(
                Code::GlobalVariable,
                format!("Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"),
            ));
        }
        if default {
            self.ctx.session_vars.remove(&name);
        } else if charset::set_variable(&mut self.ctx.session_vars, &name, &value)? {
            return Ok(());
        }
        self.set_session_var(name, value, default).await
    }

    /// SET SESSION `name`: checked and applied where the session keeps it.
    async fn set_session_var(&mut self, name: String, value: Value, default: bool) -> R<()> {
        match name.as_str() {
            "autocommit" => self.set_autocommit(name, &value, default).await?,
            "sql_quote_show_create" if !default => {
                // SHOW CREATE always quotes names: only ON is true.
                if !bool_setting(&name, &value)? {
                    return Err(Error::new(
                        Code::WrongValueForVar,
                        format!("Variable '{name}' can't be set to the value of '{value}'"),
                    ));
                }
                self.ctx.session_vars.insert(name, Value::Int(1));
            }
            "max_execution_time" => {
                let source = self.value_or_global(&name, value, default, Value::Int(0));
                let ms = size_setting(&name, &source)?.min(u32::MAX as i64);
                self.max_execution_ms = ms as u64;
                self.ctx.session_vars.insert(name, Value::Int(ms));
            }
            "auto_increment_increment" | "auto_increment_offset" if !default => {
                let warnings = &mut self.ctx.warnings;
                let n = ranged_setting(&name, &value, (1, 65535), warnings)?;
                self.ctx.session_vars.insert(name, Value::Int(n));
            }
            "group_concat_max_len" if !default => {
                let warnings = &mut self.ctx.warnings;
                let n = ranged_setting(&name, &value, (4, i64::MAX), warnings)?;
                self.ctx.session_vars.insert(name, Value::Int(n));
            }
            "sql_notes" => {
                self.sql_notes = default || bool_setting(&name, &value)?;
                self.ctx
                    .session_vars
                    .insert(name, Value::Int(self.sql_notes as i64));
            }
            "foreign_key_checks" => {
                let source = self.value_or_global(&name, value, default, Value::Int(1));
                let on = bool_setting(&name, &source)?;
                self.ctx.session_vars.insert(name, Value::Int(on as i64));
            }
            "sql_safe_updates" => {
                self.safe_updates = !default && bool_setting(&name, &value)?;
                self.ctx
                    .session_vars
                    .insert(name, Value::Int(self.safe_updates as i64));
            }
            "transaction_read_only" | "tx_read_only" => {
                let source = self.value_or_global(&name, value, default, Value::Int(0));
                let ro = bool_setting(&name, &source)?;
                self.set_session_read_only(ro);
            }
            "transaction_isolation" | "tx_isolation" => {
                let iso = match default {
                    true => Isolation::RepeatableRead,
                    false => isolation_setting(&name, &value)?,
                };
                self.set_isolation(iso);
            }
            "wait_timeout" | "innodb_lock_wait_timeout" => {
                self.set_timeout(name, value, default)?
            }
            memory_vars!() => {
                if !default {
                    let bytes = size_setting(&name, &value)?;
                    self.ctx.session_vars.insert(name, Value::Int(bytes));
                }
                self.refresh_memory_limits();
            }
            "timestamp" => fixed_clock::set(&mut self.ctx, &value, default)?,
            "time_zone" => {
                if !default {
                    let tz = time_zone::canonical(&value)?;
                    self.ctx.session_vars.insert(name, tz);
                }
                self.refresh_time_zone();
            }
            "session_track_transaction_info" if !default => {
                let v = track::check_transaction_info(&name, &value)?;
                self.ctx.session_vars.insert(name, v);
            }
            "session_track_schema" | "session_track_state_change" if !default => {
                let on = bool_setting(&name, &value)?;
                self.ctx.session_vars.insert(name, Value::Int(on as i64));
            }
            "session_track_gtids" if !default => {
                let v = track::check_gtids(&value)?;
                self.ctx.session_vars.insert(name, v);
            }
            "sql_mode" => {
                if !default {
                    let mode = sql_mode::canonical(&value)?;
                    self.ctx.session_vars.insert(name, mode);
                }
                self.refresh_sql_mode();
            }
            _ => {
                if !default {
                    self.ctx.session_vars.insert(name, value);
                }
            }
        }
        Ok(())
    }

    /// SET autocommit: turning it on commits the open transaction.
    async fn set_autocommit(&mut self, name: String, value: &Value, default: bool) -> R<()> {
        let on = default || bool_setting(&name, value)?;
        if on && !self.autocommit {
            self.commit().await?;
        }
        self.autocommit = on;
        self.ctx.session_vars.insert(name, Value::Int(on as i64));
        Ok(())
    }

    /// SET wait_timeout / innodb_lock_wait_timeout, clamped to MySQL's range.
    fn set_timeout(&mut self, name: String, value: Value, default: bool) -> R<()> {
        let source = self.value_or_global(&name, value, default, Value::Null);
        let (target, max) = if name == "wait_timeout" {
            (&mut self.wait_timeout, MAX_WAIT_TIMEOUT)
        } else {
            (&mut self.lock_wait_timeout, MAX_LOCK_WAIT_TIMEOUT)
        };
        let secs = int_setting(&name, &source)?.clamp(1, max);
        *target = Duration::from_secs(secs as u64);
        if !default {
            self.ctx.session_vars.insert(name, Value::Int(secs));
        }
        Ok(())
    }

    /// The value SET gives, or for DEFAULT the global one, as a new session
    /// gets it (`fallback` when the global is unset).
    fn value_or_global(&self, name: &str, value: Value, default: bool, fallback: Value) -> Value {
        match default {
            true => self.server.globals.get(name).unwrap_or(fallback),
            false => value,
        }
    }

    fn apply_global(&self, name: &str, v: Value) -> R<()> {
        match name {
            n if n.starts_with("rpl_semi_sync_") || n == "lockstep_semi_sync_on_timeout" => {
                self.set_semisync(name, v)
            }
            "mandatory_roles" | "activate_all_roles_on_login" => self.set_role_variable(name, v),
            "foreign_key_checks" | "session_track_schema" | "session_track_state_change" => {
                let on = bool_setting(name, &v)?;
                self.server.globals.set(name, Value::Int(on as i64))
            }
            "auto_increment_increment" | "auto_increment_offset" => {
                let mut warnings = Vec::new();
                let n = ranged_setting(name, &v, (1, 65535), &mut warnings)?;
                self.server.globals.set(name, Value::Int(n))
            }
            "group_concat_max_len" => {
                let n = ranged_setting(name, &v, (4, i64::MAX), &mut Vec::new())?;
                self.server.globals.set(name, Value::Int(n))
            }
            // The replica applier follows the global values.
            "innodb_lock_wait_timeout" => {
                let secs = int_setting(name, &v)?.clamp(1, MAX_LOCK_WAIT_TIMEOUT);
                self.engine.applier.set_lock_wait_secs(secs as u64);
                self.server.globals.set(name, Value::Int(secs))
            }
            "replica_transaction_retries" | "slave_transaction_retries" => {
                let n = ranged_setting(name, &v, (0, i64::MAX), &mut Vec::new())?;
                self.engine.applier.set_retries(n as u64);
                self.server
                    .globals
                    .set("replica_transaction_retries", Value::Int(n))?;
                self.server
                    .globals
                    .set("slave_transaction_retries", Value::Int(n))
            }
            "lockstep_throttle_limit" => {
                let n = v.to_i64().unwrap_or(0).max(0) as usize;
                self.engine.txn_sys.set_throttle_limit(n);
                self.server.globals.set(name, Value::Int(n as i64))
            }
            "lockstep_grant_policy" => self.set_grant_policy(name, &v),
            "transaction_isolation" | "tx_isolation" => {
                let iso = isolation_setting(name, &v)?;
                self.server
                    .globals
                    .set("transaction_isolation", Value::str(iso.name()))?;
                self.server
                    .globals
                    .set("tx_isolation", Value::str(iso.name()))
            }
            memory_vars!() => {
                let bytes = size_setting(name, &v)?;
                self.server.globals.set(name, Value::Int(bytes))
            }
            "lockstep_memory_budget" => {
                let bytes = match size_setting(name, &v)? {
                    0 => lockstep_types::memory::default_budget(),
                    n => n as usize,
                };
                lockstep_types::memory::set_budget(bytes);
                self.server.globals.set(name, Value::Int(bytes as i64))
            }
            "max_allowed_packet" | "net_buffer_length" => {
                // MySQL's range, in whole KiB; out of range is clamped.
                let max = if name == "net_buffer_length" {
                    1 << 20
                } else {
                    1 << 30
                };
                let bytes = size_setting(name, &v)?.clamp(1024, max) / 1024 * 1024;
                self.server.globals.set(name, Value::Int(bytes))
            }
            "session_track_transaction_info" => {
                let v = track::check_transaction_info(name, &v)?;
                self.server.globals.set(name, v)
            }
            "session_track_gtids" => self.server.globals.set(name, track::check_gtids(&v)?),
            "sql_mode" => self.server.globals.set(name, sql_mode::canonical(&v)?),
            "time_zone" => self.server.globals.set(name, time_zone::canonical(&v)?),
            _ => self.server.globals.set(name, v),
        }
    }

    /// SET GLOBAL lockstep_grant_policy: FIFO or CATS (chapter 4's lock
    /// scheduling), applied to the lock table at once.
    fn set_grant_policy(&self, name: &str, v: &Value) -> R<()> {
        let policy = v.to_string().to_ascii_uppercase();
        let p = match policy.as_str() {
            "FIFO" => lockstep_engine::GrantPolicy::Fifo,
            "CATS" => lockstep_engine::GrantPolicy::Cats,
            other => {
                return Err(Error::new(
                    Code::WrongValueForVar,
                    format!("Variable '{name}' can't be set to the value of '{other}'"),
                ))
            }
        };
        self.engine.lock_sys.set_policy(p);
        self.server.globals.set(name, Value::str(&policy))
    }

    async fn commit(&mut self) -> R<()> {
        let r = self.engine.commit(&mut self.txn).await;
        self.explicit = false;
        self.apply_next_isolation();
        r
    }

    /// Runs a DML statement or query in the session's transaction, waiting
    /// for row locks and retrying the statement after each wait.
    async fn run_dml(&mut self, plan: &Bound, params: &[Value]) -> R<Response> {
        if !self.txn.admitted() {
            self.engine.admit(&mut self.txn).await;
        }
        let deadline = Instant::now() + self.lock_wait_timeout;
        // As MySQL: errors in what a write stores, or warnings when
        // sql_mode is not strict or the statement says IGNORE.
        self.ctx.strict = match &plan.plan {
            Plan::Insert(p) => !p.ignore,
            Plan::Update(p) | Plan::Delete(p) => !p.ignore,
            Plan::Multi(m) => !m.ignore,
            _ => false,
        } && self.strict_sql_mode;
        // A statement run again after a lock wait warns again.
        let warnings_before = self.ctx.warnings.len();
        let calc_found = std::mem::take(&mut self.calc_found_this);
        let streams = std::mem::take(&mut self.stream_this)
            && !calc_found
            && matches!(&plan.plan, Plan::Query(q) if crate::exec::stream::streamable(q));
        let mut run = DmlRun {
            calc_found,
            streams,
            cursor: Default::default(),
            batch_bytes: self.batch_bytes(),
            found_total: None,
        };
        let result = loop {
            self.ctx.warnings.truncate(warnings_before);
            if self.process.kill_query.swap(false, Ordering::Relaxed) {
                self.engine.rollback_statement(&mut self.txn);
                break Err(interrupted());
            }
            self.txn.start_statement();
            match self.attempt_dml(plan, params, &mut run) {
                Ok(resp) => break Ok(resp),
                Err(EngineError::LockWait(wait)) => {
                    match self.wait_row_lock(wait, deadline).await {
                        Ok(()) => continue,
                        Err(e) => break Err(e),
                    }
                }
                Err(EngineError::Sql(e)) => {
                    self.engine.rollback_statement(&mut self.txn);
                    if e.rolls_back_transaction() {
                        self.engine.rollback(&mut self.txn);
                        self.explicit = false;
                    }
                    break Err(e);
                }
            }
        };
        self.ctx.strict = false;
        self.finish_dml(plan, params, result, run).await
    }

    /// One run of the statement's plan.
    fn attempt_dml(
        &mut self,
        plan: &Bound,
        params: &[Value],
        run: &mut DmlRun,
    ) -> Result<Response, EngineError> {
        let found_rows = self.ctx.client_found_rows;
        let mut exec = Exec::new(&self.engine, &mut self.txn, &mut self.ctx, params);
        exec.view_checks = plan.view_checks.clone();
        let rows = |q: &crate::plan::QueryPlan, rows| {
            Response::Rows(ResultSet {
                columns: q.columns.clone(),
                rows,
                warnings: 0,
            })
        };
        match &plan.plan {
            Plan::Query(q) if run.streams => {
                run.cursor = Default::default();
                let batch = exec.select_batch(q, &mut run.cursor, run.batch_bytes);
                batch.map(|r| rows(q, r))
            }
            Plan::Query(q) => {
                exec.count_before_limit = run.calc_found;
                let r = exec.query(q);
                run.found_total = exec.found_total;
                r.map(|r| rows(q, r))
            }
            Plan::Insert(p) => exec.insert(p).map(|(n, id)| {
                if let Some(id) = id {
                    exec.ctx.last_insert_id = id;
                }
                Response::Ok(OkInfo {
                    affected_rows: n,
                    last_insert_id: id.unwrap_or(0),
                    warnings: exec.ctx.warnings.len() as u16,
                    info: String::new(),
                })
            }),
            Plan::Update(p) => exec.update(p).map(|(matched, changed)| {
                let warnings = exec.ctx.warnings.len();
                updated(matched, changed, found_rows, warnings)
            }),
            Plan::Delete(p) => exec.delete(p).map(ok),
            Plan::Multi(p) => exec.multi(p).map(|(matched, changed)| match p.delete {
                true => ok(changed),
                false => updated(matched, changed, found_rows, exec.ctx.warnings.len()),
            }),
        }
    }

    /// Waits for the row lock a statement ran into, until `deadline`:
    /// Ok once granted (the statement runs again), else the error that
    /// ends it (1205, 1213 with the transaction rolled back, or 1317).
    async fn wait_row_lock(
        &mut self,
        mut wait: lockstep_lock::LockWait,
        deadline: Instant,
    ) -> R<()> {
        self.engine.rollback_statement(&mut self.txn);
        // A waiter leaves the transaction system while it sleeps (InnoDB's
        // thread concurrency does the same): its slot lets in a
        // transaction that can run, not one more waiter on the same hot
        // row (8.3.2).
        self.engine.park(&mut self.txn);
        self.publish_trx(Some(Instant::now()));
        *self.process.command.lock() = "Query";
        let remaining = deadline.saturating_duration_since(Instant::now());
        let key = wait.key();
        let granted = loop {
            let outcome = tokio::select! {
                r = tokio::time::timeout(remaining, &mut wait) => Some(r),
                _ = self.process.kill_notify.notified() => None,
            };
            match outcome {
                Some(Ok(r)) => break r,
                // Timed out: cancel, unless granted at the last moment.
                Some(Err(_)) => break wait.timeout(),
                None if self.process.kill_query.load(Ordering::Relaxed) => {
                    if wait.timeout().is_ok() {
                        self.engine.lock_granted(&mut self.txn, key);
                    } else {
                        self.engine.lock_abandoned(&mut self.txn);
                    }
                    break Err(lockstep_engine::LockError::Timeout);
                }
                None => {}
            }
        };
        if self.process.kill_query.swap(false, Ordering::Relaxed) {
            return Err(interrupted());
        }
        match granted {
            Ok(()) => {
                self.engine.lock_granted(&mut self.txn, key);
                self.engine.admit(&mut self.txn).await;
                Ok(())
            }
            Err(lockstep_engine::LockError::Deadlock) => {
                self.engine.rollback(&mut self.txn);
                self.explicit = false;
                Err(Error::deadlock())
            }
            Err(_) => {
                self.engine.lock_abandoned(&mut self.txn);
                Err(Error::lock_wait_timeout())
            }
        }
    }

    /// After the statement: ROW_COUNT() and FOUND_ROWS(), a stream kept for
    /// its next batch, and autocommit's commit or rollback.
    async fn finish_dml(
        &mut self,
        plan: &Bound,
        params: &[Value],
        result: R<Response>,
        run: DmlRun,
    ) -> R<Response> {
        let in_trx = self.in_transaction();
        let resp = match result {
            Ok(resp) => resp,
            Err(e) => {
                if !in_trx {
                    self.engine.rollback(&mut self.txn);
                    self.apply_next_isolation();
                }
                return Err(e);
            }
        };
        self.ctx.row_count = match &resp {
            Response::Ok(o) => o.affected_rows as i64,
            Response::Rows(_) => -1,
        };
        if let Response::Rows(rs) = &resp {
            let found = run.found_total.unwrap_or(rs.rows.len());
            self.ctx.found_rows = found as u64;
        }
        if let (Plan::Query(q), true, false) = (&plan.plan, run.streams, run.cursor.done) {
            self.keep_stream(stream::PendingStream {
                plan: q.clone(),
                params: params.to_vec(),
                cursor: run.cursor,
                in_trx,
                deadline: self.ctx.interrupt.deadline,
            });
            return Ok(resp);
        }
        if !in_trx {
            self.commit().await?;
        }
        Ok(resp)
    }

    // ---------- SHOW and EXPLAIN ----------

    /// EXPLAIN; a prepared one plans with the values bound, as MySQL does.
    fn explain(
        &mut self,
        stmt: &Statement,
        format: parser::ExplainFormat,
        params: &[Value],
    ) -> R<Response> {
        use crate::plan::explain::{self as ex, Step};
        let mut b = self.binder();
        b.known.params = params.to_vec();
        let bound = self
            .bind_by(b, stmt)?
            .ok_or_else(|| Error::unsupported("EXPLAIN of this statement"))?;
        let known = &crate::plan::selectivity::Known {
            params: params.to_vec(),
            tz_offset: self.ctx.tz_offset,
            ..Default::default()
        };
        self.check_plan_privileges(&bound)?;
        let mut tree = Vec::new();
        let mut steps = Vec::new();
        let one = |select_type, table: &str, kind| Step {
            kind: Some(kind),
            ..Step::full_scan(1, select_type, table.to_string())
        };
        match &bound.plan {
            Plan::Query(q) => {
                if let crate::plan::QueryBody::Select(s) = &q.body {
                    tree = crate::plan::explain(&s.source);
                    if s.ordered_by_index {
                        tree.push((String::new(), "order by index".into()));
                    }
                    let sorts = !s.order.is_empty() && !s.ordered_by_index;
                    steps = ex::select_steps(s, sorts, known);
                    let subs = crate::plan::semijoin::select_subqueries(s);
                    tree.extend(crate::plan::semijoin::explain_tree(&subs));
                    crate::plan::semijoin::add_steps(&mut steps, &subs, known);
                    crate::plan::semijoin::label_first_match(s, &subs, &mut steps, &mut tree);
                }
            }
            Plan::Update(m) | Plan::Delete(m) => {
                tree.push((m.def.name.clone(), m.scan.access.describe(&m.def)));
                let kind = if matches!(bound.plan, Plan::Update(_)) {
                    "UPDATE"
                } else {
                    "DELETE"
                };
                let step = ex::table_step(&m.scan, false, 1, kind, &[], known);
                steps.push(step);
                let mut subs = Vec::new();
                if let Some(f) = &m.filter {
                    crate::plan::semijoin::subqueries(f, &mut subs);
                }
                tree.extend(crate::plan::semijoin::explain_tree(&subs));
                crate::plan::semijoin::add_steps(&mut steps, &subs, known);
            }
            Plan::Insert(i) => {
                tree.push((i.def.name.clone(), "insert".into()));
                steps.push(one("INSERT", &i.def.name, "ALL"));
            }
            Plan::Multi(m) => {
                let select = m.select();
                tree = crate::plan::explain(&select.source);
                steps = ex::steps(&select.source, false, known);
            }
        }
        Ok(match format {
            parser::ExplainFormat::Traditional => {
                rows(&ex::COLUMNS, steps.iter().map(ex::row).collect())
            }
            parser::ExplainFormat::Json => {
                rows(&["EXPLAIN"], vec![vec![Value::str(&ex::json(&steps))]])
            }
            // EXPLAIN ANALYZE runs the query (explain_analyze.rs).
            parser::ExplainFormat::Tree | parser::ExplainFormat::Analyze => {
                let lines = tree
                    .iter()
                    .map(|(t, a)| vec![Value::str(&format!("{t}: {a}"))]);
                rows(&["EXPLAIN"], lines.collect())
            }
        })
    }

    pub fn field_list(&mut self, table: &str) -> R<Vec<Column>> {
        let name = parser::ObjectName {
            database: None,
            name: table.to_string(),
        };
        let show = Statement::Describe {
            table: name.clone(),
            column: None,
        };
        self.grants.refresh(&self.engine.accounts);
        self.grants.check(&show, self.ctx.database.as_deref())?;
        let t = self.binder().table(&name)?;
        let def = t.def();
        Ok(def
            .visible_columns()
            .map(|(_, c)| {
                let mut col = column_meta(&c.name, c.data_type, c.nullable);
                col.table = def.name.clone();
                col.org_table = def.name.clone();
                col.org_name = c.name.clone();
                col.schema = def.database.clone();
                col
            })
            .collect())
    }

    pub fn database(&self) -> Option<&str> {
        self.ctx.database.as_deref()
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }
}

/// Statements kept for compatibility that have nothing to do here (FLUSH
/// PRIVILEGES: grants are always live). Those that promise something
/// lockstep does not do are refused rather than accepted and ignored: a
/// read lock in a FLUSH form table_locks.rs does not parse.
fn ignored(text: &str) -> R<()> {
    let upper = text.to_ascii_uppercase();
    let first = upper.split_whitespace().next().unwrap_or("");
    if first == "FLUSH" && (upper.contains("READ LOCK") || upper.contains("FOR EXPORT")) {
        return Err(Error::unsupported("FLUSH TABLES WITH READ LOCK"));
    }
    Ok(())
}

/// Runs `wait` until it ends or the statement is killed (1317). The
/// future is polled first, so a wait that needs no waiting never looks at
/// the kill signal, and a stale wake-up without KILL is ignored.
/// SHOW PLUGINS: the built-in plugins a client may look for (the
/// authentication methods this server speaks, its storage engine).
fn plugins() -> Response {
    let names = ["Name", "Status", "Type", "Library", "License"];
    let plugin = |name: &str, kind: &str| {
        vec![
            Value::str(name),
            Value::str("ACTIVE"),
            Value::str(kind),
            Value::Null,
            Value::str("GPL"),
        ]
    };
    let list = vec![
        plugin("binlog", "STORAGE ENGINE"),
        plugin("mysql_native_password", "AUTHENTICATION"),
        plugin("caching_sha2_password", "AUTHENTICATION"),
        plugin("InnoDB", "STORAGE ENGINE"),
    ];
    rows(&names, list)
}

/// SHOW WARNINGS' level: MySQL reports "already exists" / "does not
/// exist" of IF [NOT] EXISTS statements as notes.
/// SHOW WARNINGS / SHOW ERRORS (only the Error-level conditions) and their
/// COUNT(*) forms, which MySQL names after the variable they read.
/// What a COM_QUERY answers before running anything: a syntax error
/// (the first statement's, or a second statement without
/// CLIENT_MULTI_STATEMENTS), or 1065 for an empty text. Text of only
/// comments is an empty statement that succeeds, as in MySQL.
fn single_statement_error(
    sql: &str,
    statements: &[Statement],
    parse_error: &Option<Error>,
    multi: bool,
) -> Option<Error> {
    match (statements.len(), parse_error) {
        (0, Some(e)) => Some(e.clone()),
        (0, None) if sql.bytes().all(|b| b.is_ascii_whitespace() || b == b';') => {
            Some(Error::new(Code::EmptyQuery, "Query was empty"))
        }
        (n, e) if !multi && (n > 1 || e.is_some()) => {
            Some(Error::parse(sql.split(';').nth(1).unwrap_or("").trim()))
        }
        _ => None,
    }
}

async fn until_killed<T>(
    process: &ProcessInfo,
    wait: impl std::future::Future<Output = R<T>>,
) -> R<T> {
    tokio::pin!(wait);
    loop {
        tokio::select! {
            biased;
            r = &mut wait => return r,
            _ = process.kill_notify.notified() => {
                if process.kill_query.load(Ordering::Relaxed) {
                    return Err(Error::new(Code::QueryInterrupted, "Query execution was interrupted"));
                }
            }
        }
    }
}

/// A schema the server provides (information_schema, mysql, ...): the
/// catalog reserves these names, so no user database can pose as one.
pub fn is_system_db(db: &str) -> bool {
    lockstep_engine::catalog::is_system_schema(db)
}

/// Reads a system variable as the session sees it.
pub fn system_var(server: &Server, ctx: &SessionCtx, global: bool, name: &str) -> R<Value> {
    let name = name.to_ascii_lowercase();
    let name = match name.as_str() {
        "session.transaction_isolation" => "transaction_isolation".to_string(),
        _ => name,
    };
    match name.as_str() {
        "server_uuid" => return Ok(Value::str(&server.engine.server_uuid())),
        "gtid_executed" => return Ok(Value::str(&server.engine.gtid_executed())),
        "gtid_purged" => {
            return binlog_status::gtid_purged(&server.engine).map(|s| Value::str(&s));
        }
        // The count of the statement before this one (MySQL clears the
        // list when a SELECT starts, but @@warning_count reports it).
        "warning_count" => return Ok(Value::Int(ctx.previous_warnings as i64)),
        "error_count" => return Ok(Value::Int(ctx.previous_errors as i64)),
        "identity" | "last_insert_id" => return Ok(Value::UInt(ctx.last_insert_id)),
        "timestamp" if global => return Err(crate::session::vars::session_only(&name)),
        "timestamp" => return Ok(fixed_clock::value(ctx)),
        // All data lives in memory under the server's budget: that budget
        // is what InnoDB's buffer pool size tells a tool.
        "innodb_buffer_pool_size" => {
            let budget = server.globals.get("lockstep_memory_budget");
            let bytes = budget.and_then(|v| v.to_i64()).filter(|n| *n > 0);
            let bytes = bytes.unwrap_or(lockstep_types::memory::default_budget() as i64);
            return Ok(Value::Int(bytes));
        }
        "pseudo_thread_id" if !global && !ctx.session_vars.contains_key(&name) => {
            return Ok(Value::UInt(ctx.connection_id))
        }
        _ => {}
    }
    if !global {
        if let Some(v) = ctx.session_vars.get(&name) {
            return Ok(v.clone());
        }
    }
    server
        .globals
        .get(&name)
        .ok_or_else(|| crate::session::vars::unknown(&name))
}

/// The WHERE of a SHOW statement that has one.
fn show_where(show: &Show) -> Option<&parser::Expr> {
    let filter = match show {
        Show::Databases { filter }
        | Show::Tables { filter, .. }
        | Show::Columns { filter, .. }
        | Show::Variables { filter, .. }
        | Show::Status { filter, .. }
        | Show::Collation { filter }
        | Show::CharacterSet { filter }
        | Show::TableStatus { filter, .. } => filter,
        _ => return None,
    };
    match filter {
        Some(ShowFilter::Where(e)) => Some(e),
        _ => None,
    }
}

/// DDL on permanent objects: refused in a READ ONLY transaction (1792),
/// as MySQL does. Temporary tables are the session's own and stay allowed.
fn changes_schema(stmt: &Statement) -> bool {
    match stmt {
        Statement::CreateTable(ct) => !ct.temporary,
        Statement::DropTable { temporary, .. } => !temporary,
        Statement::CreateDatabase { .. }
        | Statement::DropDatabase { .. }
        | Statement::Truncate { .. }
        | Statement::CreateIndex { .. }
        | Statement::DropIndex { .. }
        | Statement::AlterTable { .. }
        | Statement::CreateView(_)
        | Statement::DropView { .. } => true,
        _ => false,
    }
}

/// The OK of an UPDATE: affected rows are the changed ones, or the
/// matched ones when the client asked for CLIENT_FOUND_ROWS; the info text
/// counts the warnings as MySQL's does.
fn updated(matched: u64, changed: u64, found_rows: bool, warnings: usize) -> Response {
    Response::Ok(OkInfo {
        affected_rows: if found_rows { matched } else { changed },
        last_insert_id: 0,
        warnings: warnings.min(u16::MAX as usize) as u16,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: {warnings}"),
    })
}
