//! The executor: runs plans against the engine inside a transaction.
//! Execution is synchronous; when a row lock must be waited for, the
//! engine returns `Error::LockWait` and the session rolls the statement
//! back, awaits the lock without holding a thread, and runs it again.

mod auto_increment;
mod check;
pub mod filesort;
mod generated;
mod group_concat;
pub use generated::rebuild_generator;
pub(crate) mod fk;
mod hash_join;
mod ignore;
mod insert;
mod json_table;
pub mod keyset;
mod lateral;
mod lenient;
pub mod load_data;
mod membership;
mod multi;
mod outer;
pub mod profile;
mod recursive;
pub mod rights;
mod rollup;
mod routine;
mod row_number;
mod semijoin;
mod setop;
pub mod stream;
mod trigger;
mod window;

use crate::exec::keyset::KeySet;
use crate::expr::{
    collated_sort_cmp, eval, key_value, store_value, to_utc, BExpr, Env, SubqueryRef,
};
use crate::plan::*;
use lockstep_engine::{engine::successor_prefix, Engine, Error as EngineError, LockMode, Txn};
use lockstep_tables::schema::encode_column_key;
use lockstep_tables::{Row, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Decimal, Error, Value};
pub use rights::Rights;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;

pub type Result<T> = std::result::Result<T, EngineError>;

/// Reads a system variable (session or global) for a session.
pub type SystemVarReader =
    Arc<dyn Fn(&SessionCtx, bool, &str) -> std::result::Result<Value, Error> + Send + Sync>;

/// Session state expressions can read (and LAST_INSERT_ID(x) can set).
pub struct SessionCtx {
    pub database: Option<String>,
    pub connection_id: u64,
    pub user: String,
    /// The authenticated account, `user@host-pattern` (CURRENT_USER()).
    pub current_user: String,
    pub user_vars: HashMap<String, Value>,
    /// The current statement's query attributes (name, value).
    pub query_attributes: Vec<(Vec<u8>, Value)>,
    pub last_insert_id: u64,
    pub found_rows: u64,
    /// Rows an earlier part of the statement wrote (LOAD DATA inserts in
    /// batches): INSERT numbers its rows from here in "at row N".
    pub rows_before: u64,
    /// The client asked for CLIENT_FOUND_ROWS: UPDATE reports the rows it
    /// matched as affected, not only those it changed.
    pub client_found_rows: bool,
    pub row_count: i64,
    pub warnings: Vec<Condition>,
    /// How many the statement before the current one left
    /// (@@warning_count).
    pub previous_warnings: usize,
    /// The entry of `warnings` that is the statement's error, if it failed
    /// (SHOW WARNINGS lists it with level Error, as MySQL does).
    pub error_at: Option<usize>,
    /// Errors the statement before the current one left (@@error_count).
    pub previous_errors: usize,
    /// Whether expression warnings are errors: an INSERT or UPDATE without
    /// IGNORE under a strict sql_mode. Off, values that do not fit their
    /// columns are adjusted with a warning (`lenient.rs`).
    pub strict: bool,
    /// sql_mode's NO_ZERO_DATE and NO_ZERO_IN_DATE (`expr::zero_date`).
    pub dates: crate::expr::zero_date::DateMode,
    /// sql_mode's ERROR_FOR_DIVISION_BY_ZERO: dividing by zero warns 1365
    /// (the error where strict); without it the NULL comes silently.
    pub division_by_zero: bool,
    /// The session time zone's offset east of UTC in seconds (time_zone,
    /// cached when it is set): TIMESTAMP columns and NOW() use it.
    pub tz_offset: i64,
    /// The clock (UTC) as the running statement read it when it began:
    /// NOW() and CURRENT_TIMESTAMP give one value for all its rows, as
    /// in MySQL (SYSDATE() reads the clock each call). None between
    /// statements.
    pub statement_now: Option<lockstep_types::DateTime>,
    /// SET timestamp: the clock every statement starts with instead of
    /// the system's (session/fixed_clock.rs).
    pub fixed_now: Option<lockstep_types::DateTime>,
    /// Reads a system variable (session or global).
    pub system_var: SystemVarReader,
    pub session_vars: HashMap<String, Value>,
    /// What one statement may buffer (sort_buffer_size, tmp_table_size, ...).
    pub memory: MemoryLimits,
    /// What stops the running statement.
    pub interrupt: Interrupt,
    /// The server's user-level locks (None outside a server).
    pub user_locks: Option<Arc<crate::expr::user_locks::UserLocks>>,
    /// The logged-in account's privileges, which statements inside stored
    /// functions and triggers are checked against (None: a session not
    /// created by a login, which may do anything).
    pub grants: Option<Arc<dyn Rights>>,
}

/// What stops a running statement: KILL QUERY / KILL (a flag shared with
/// the session's process entry) or max_execution_time (a deadline). The
/// executor's loops look every [`Interrupt::EVERY`] rows.
#[derive(Clone, Default)]
pub struct Interrupt {
    pub killed: Arc<std::sync::atomic::AtomicBool>,
    pub deadline: Option<std::time::Instant>,
    /// The client's socket: a statement whose client has gone away stops
    /// (MySQL notices it the same way, by looking at the socket).
    pub peer: Option<std::os::fd::RawFd>,
}

impl Interrupt {
    /// Rows between two looks: a look is an atomic load and, with a
    /// deadline, a clock read; a row costs far more than 1/1024 of that.
    pub const EVERY: u32 = 1024;

    /// 1317 once killed, 3024 past the deadline.
    pub fn check(&self) -> std::result::Result<(), Error> {
        if self.killed.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::new(
                Code::QueryInterrupted,
                "Query execution was interrupted",
            ));
        }
        if self
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            return Err(Error::new(
                Code::QueryTimeout,
                "Query execution was interrupted, maximum statement execution time exceeded",
            ));
        }
        Ok(())
    }

    /// Counts one row; looks every EVERY rows, at the client's socket too.
    #[inline]
    pub fn tick(&self, count: &mut u32) -> std::result::Result<(), Error> {
        *count += 1;
        if *count >= Self::EVERY {
            *count = 0;
            if self.peer.is_some_and(peer_gone) {
                self.killed
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return self.check();
        }
        Ok(())
    }
}

/// Whether the client closed its end: a peek that reads end-of-file (or a
/// reset connection). Data waiting to be read (a pipelined command) means
/// the client is there.
fn peer_gone(fd: std::os::fd::RawFd) -> bool {
    let mut byte = 0u8;
    // SAFETY: a non-blocking peek of one byte into a local buffer on a
    // socket the session's connection owns for as long as it runs.
    let n = unsafe {
        libc::recv(
            fd,
            (&mut byte as *mut u8).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match n {
        0 => true,
        n if n > 0 => false,
        _ => std::io::Error::last_os_error().raw_os_error() == Some(libc::ECONNRESET),
    }
}

/// A warning or note a statement raised, as SHOW WARNINGS lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub code: u16,
    pub message: String,
    /// Level Note whatever the code (a code's usual level is
    /// `session::diagnostics::warning_level`): 1265 is a Warning when text
    /// is cut but a Note when a DECIMAL is rounded.
    pub note: bool,
}

impl Condition {
    /// A condition at its code's usual level.
    pub fn warning(code: u16, message: String) -> Condition {
        Condition {
            code,
            message,
            note: false,
        }
    }

    pub fn note(code: u16, message: String) -> Condition {
        Condition {
            code,
            message,
            note: true,
        }
    }
}

impl From<(u16, String)> for Condition {
    fn from((code, message): (u16, String)) -> Condition {
        Condition::warning(code, message)
    }
}

/// Most warnings a statement keeps (MySQL's default max_error_count): a
/// warning per row of a large scan must not grow without bound.
const MAX_WARNINGS: usize = 1024;

impl SessionCtx {
    /// The statement's clock, or the clock now outside a statement.
    pub fn clock(&self) -> lockstep_types::DateTime {
        self.statement_now
            .or(self.fixed_now)
            .unwrap_or_else(lockstep_types::DateTime::now)
    }

    /// Records an expression warning, or returns it as the error where the
    /// statement is strict.
    pub fn warn(&mut self, w: Error) -> std::result::Result<(), Error> {
        if self.strict {
            return Err(w);
        }
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings
                .push(crate::exec::Condition::warning(w.number(), w.message));
        }
        Ok(())
    }
}

/// Bytes one statement may hold in memory, under the names MySQL users
/// know. Sorts spill to disk past their buffer (exec/filesort.rs) and a
/// join reads its outer side in batches (exec/outer.rs); the others are
/// hard caps: a statement that needs more fails with MySQL's error instead
/// of growing until the server is killed for running out of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimits {
    /// `sort_buffer_size`: what a sort holds before it spills to disk
    /// (ORDER BY, DISTINCT with ORDER BY, UNION's ORDER BY, a window's
    /// partition and order, UPDATE/DELETE ... ORDER BY).
    pub sort: usize,
    /// min(`tmp_table_size`, `max_heap_table_size`): GROUP BY groups,
    /// DISTINCT and UNION sets, derived tables, materialized subquery
    /// results (1114 ER_RECORD_FILE_FULL).
    pub temp_table: usize,
    /// `query_memory_limit`: every row a statement buffers, scans, joins
    /// and its result included (1041 ER_OUT_OF_RESOURCES).
    pub statement: usize,
    /// `max_tmp_session_space_usage`: bytes a statement's sort runs may
    /// take on disk (1114 ER_RECORD_FILE_FULL).
    pub disk: usize,
    /// `join_buffer_size`: a join's outer rows read at a time (outer.rs).
    pub join: usize,
}

impl MemoryLimits {
    pub const DEFAULT_SORT: usize = crate::sysvars::DEFAULT_SORT;
    pub const DEFAULT_TEMP_TABLE: usize = crate::sysvars::DEFAULT_TEMP_TABLE;
    pub const DEFAULT_STATEMENT: usize = crate::sysvars::DEFAULT_STATEMENT;
}

impl Default for MemoryLimits {
    fn default() -> Self {
        MemoryLimits {
            sort: Self::DEFAULT_SORT,
            temp_table: Self::DEFAULT_TEMP_TABLE,
            statement: Self::DEFAULT_STATEMENT,
            disk: crate::sysvars::DEFAULT_TMP_DISK,
            join: crate::sysvars::DEFAULT_JOIN,
        }
    }
}

/// What a statement has buffered so far: plain counters, bumped as rows are
/// buffered (approximate sizes), checked against [`MemoryLimits`].
#[derive(Default)]
struct MemoryUse {
    statement: usize,
    temp_table: usize,
    /// A DELETE: what it buffers is bounded by query_memory_limit but not
    /// by the server's budget, since deleting is how to get back under it.
    frees: bool,
}

/// Approximate heap footprint of a buffered value.
fn value_bytes(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::Bytes(b) => b.len(),
            _ => 0,
        }
}

/// Approximate heap footprint of a buffered row.
/// A LIMIT or OFFSET value as a count of rows: 18446744073709551615 (what
/// ORMs write for "no limit" with an OFFSET) is every row, not none.
pub(crate) fn row_count(v: &Value) -> usize {
    match v {
        Value::UInt(u) => usize::try_from(*u).unwrap_or(usize::MAX),
        v => v.to_i64().unwrap_or(0).max(0) as usize,
    }
}

fn row_bytes(row: &[Value]) -> usize {
    std::mem::size_of::<Vec<Value>>() + row.iter().map(value_bytes).sum::<usize>()
}

impl MemoryUse {
    /// Counts `bytes` more buffered by the statement (1041 past
    /// query_memory_limit).
    fn charge(&mut self, limits: &MemoryLimits, bytes: usize) -> Result<()> {
        self.statement += bytes;
        if self.statement > limits.statement {
            return Err(EngineError::Sql(Error::new(
                Code::OutOfResources,
                format!(
                    "Out of memory: the statement needs more than query_memory_limit ({} bytes); raise it or make the query read fewer rows",
                    limits.statement
                ),
            )));
        }
        // The whole server's budget bounds every statement's buffers too.
        if self.frees {
            return Ok(());
        }
        lockstep_types::memory::check_statement().map_err(EngineError::Sql)
    }

    /// Counts `bytes` more held in an in-memory temporary table (1114 past
    /// tmp_table_size / max_heap_table_size).
    fn charge_temp(&mut self, ctx: &SessionCtx, bytes: usize) -> Result<()> {
        self.temp_table += bytes;
        if self.temp_table > ctx.memory.temp_table {
            return Err(EngineError::Sql(Error::new(
                Code::TableFull,
                format!("The table '/tmp/#sql{}_0' is full", ctx.connection_id),
            )));
        }
        self.charge(&ctx.memory, bytes)
    }
}

/// The `Env` methods that only read session state: shared by the scan
/// environment and the executor (both have `ctx`, `params` and `outer`).
macro_rules! session_env_methods {
    () => {
        fn param(&self, i: usize) -> std::result::Result<Value, Error> {
            self.params
                .get(i)
                .cloned()
                .ok_or_else(|| Error::new(Code::WrongArguments, "Incorrect arguments to EXECUTE"))
        }
        fn user_var(&self, name: &str) -> Value {
            self.ctx.user_vars.get(name).cloned().unwrap_or(Value::Null)
        }
        fn query_attribute(&self, name: &[u8]) -> Value {
            let found = self.ctx.query_attributes.iter().find(|(n, _)| n == name);
            found.map_or(Value::Null, |(_, v)| v.clone())
        }
        fn system_var(&self, global: bool, name: &str) -> std::result::Result<Value, Error> {
            (self.ctx.system_var.clone())(self.ctx, global, name)
        }
        fn outer(&self, depth: usize, index: usize) -> Value {
            self.outer
                .len()
                .checked_sub(depth + 1)
                .and_then(|i| self.outer[i].get(index).cloned())
                .unwrap_or(Value::Null)
        }
        fn database(&self) -> Option<String> {
            self.ctx.database.clone()
        }
        fn connection_id(&self) -> u64 {
            self.ctx.connection_id
        }
        fn last_insert_id(&self) -> u64 {
            self.ctx.last_insert_id
        }
        fn set_last_insert_id(&mut self, v: u64) {
            self.ctx.last_insert_id = v;
        }
        fn found_rows(&self) -> u64 {
            self.ctx.found_rows
        }
        fn row_count(&self) -> i64 {
            self.ctx.row_count
        }
        fn user(&self) -> String {
            self.ctx.user.clone()
        }
        fn current_user(&self) -> String {
            self.ctx.current_user.clone()
        }
        fn current_role(&self) -> String {
            let none = || crate::exec::rights::NO_ROLE.to_string();
            self.ctx
                .grants
                .as_ref()
                .map_or_else(none, |g| g.current_role())
        }
        fn interrupted(&self) -> bool {
            self.ctx.interrupt.check().is_err()
        }
        fn user_locks(&self) -> Option<&crate::expr::user_locks::UserLocks> {
            self.ctx.user_locks.as_deref()
        }
        fn warn(&mut self, w: Error) -> std::result::Result<(), Error> {
            self.ctx.warn(w)
        }
        fn has_warning(&self, w: &Error) -> bool {
            let same = |c: &Condition| c.code == w.number() && c.message == w.message;
            self.ctx.warnings.iter().any(same)
        }
        fn dates(&self) -> crate::expr::zero_date::DateMode {
            self.ctx.dates
        }
        fn division_by_zero(&self) -> bool {
            self.ctx.division_by_zero
        }
        fn tz_offset(&self) -> i64 {
            self.ctx.tz_offset
        }
        fn clock(&self) -> lockstep_types::DateTime {
            self.ctx.clock()
        }
    };
}

/// Expression environment without engine access (for filters evaluated
/// inside an index scan, and for row sinks fed from one), with the
/// statement's memory account.
struct ScanEnv<'a> {
    ctx: &'a mut SessionCtx,
    params: &'a [Value],
    outer: &'a [Vec<Value>],
    memory: &'a mut MemoryUse,
}

impl ScanEnv<'_> {
    fn charge(&mut self, bytes: usize) -> Result<()> {
        self.memory.charge(&self.ctx.memory, bytes)
    }

    fn charge_temp(&mut self, bytes: usize) -> Result<()> {
        self.memory.charge_temp(self.ctx, bytes)
    }
}

impl Env for ScanEnv<'_> {
    session_env_methods!();
    fn subquery(
        &mut self,
        _q: &SubqueryRef,
        _row: &[Value],
    ) -> std::result::Result<Vec<Vec<Value>>, Error> {
        Err(Error::internal("subquery evaluated inside an index scan"))
    }
}

pub struct Exec<'a> {
    pub engine: &'a Engine,
    pub txn: &'a mut Txn,
    pub ctx: &'a mut SessionCtx,
    pub params: &'a [Value],
    outer: Vec<Vec<Value>>,
    /// Results of uncorrelated subqueries, computed once per statement.
    cache: HashMap<usize, Vec<Vec<Value>>>,
    /// Hash sets of uncorrelated IN subqueries (by subquery and fold).
    members: HashMap<(usize, bool), membership::MemberSet>,
    /// Correlated subqueries keyed by their correlation (semijoin.rs).
    keyed: HashMap<usize, semijoin::State>,
    /// Rows of uncorrelated derived tables, materialized once per statement.
    derived: HashMap<usize, Arc<Vec<Vec<Value>>>>,
    /// Rows of LATERAL and JSON_TABLE tables by the values they read.
    lateral: lateral::Cache,
    /// Hash tables of hash joins whose build reads no enclosing row.
    join_tables: HashMap<usize, Arc<hash_join::JoinTable>>,
    /// The previous round's rows of each recursive CTE being evaluated.
    working: HashMap<usize, Arc<Vec<Vec<Value>>>>,
    /// A lock wait hit inside a subquery (Env returns SQL errors only).
    pending: Option<EngineError>,
    memory: MemoryUse,
    /// Tables whose rows a locking read locks exclusively whatever its
    /// mode: the targets of a multi-table UPDATE or DELETE (`multi.rs`).
    exclusive: Vec<u32>,
    /// Enforced CHECK constraints of the tables written, bound once per
    /// statement (`check.rs`).
    checks: HashMap<u32, Arc<Vec<(String, BExpr)>>>,
    /// Generated columns of the tables written (`generated.rs`).
    generated: HashMap<u32, Arc<crate::plan::generated::Bound>>,
    /// WITH CHECK OPTION of the views a statement writes through.
    pub view_checks: Arc<Vec<ViewCheck>>,
    /// SQL_CALC_FOUND_ROWS: the next query block to finish counts its rows
    /// before LIMIT into `found_total` (taken by it: nested blocks do not).
    pub count_before_limit: bool,
    /// EXISTS asks the next query block only whether it has a row: a
    /// plain SELECT stops at its first (taken by that block, as above).
    exists_only: bool,
    pub found_total: Option<usize>,
    /// EXPLAIN ANALYZE: every table access is measured here.
    pub profile: Option<profile::Profile>,
}

/// A view's CHECK OPTION condition on rows of table `table` (1369 unless
/// TRUE): (table id, `db.view`, condition).
pub type ViewCheck = (u32, String, BExpr);

impl Env for Exec<'_> {
    session_env_methods!();
    fn call_stored(
        &mut self,
        f: &crate::routine::call::StoredFn,
        args: Vec<Value>,
    ) -> std::result::Result<Value, Error> {
        self.run_stored(f, args)
    }
    fn subquery(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
    ) -> std::result::Result<Vec<Vec<Value>>, Error> {
        let key = q.id();
        if !q.correlated {
            if let Some(rows) = self.cache.get(&key) {
                return Ok(rows.clone());
            }
        }
        if let Some(rows) = self.keyed_env(q, row)? {
            return Ok(rows.to_vec());
        }
        // What the subquery buffers is freed when it returns; only a cached
        // result stays (as a materialized temporary table).
        let result = self.run_with_outer(q, row).and_then(|rows| {
            if !q.correlated {
                let bytes = rows.iter().map(|r| row_bytes(r)).sum();
                self.charge_temp(bytes)?;
            }
            Ok(rows)
        });
        let rows = self.env_result(result)?;
        if !q.correlated {
            self.cache.insert(key, rows.clone());
        }
        Ok(rows)
    }

    fn subquery_is_empty(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
    ) -> std::result::Result<bool, Error> {
        match self.cache.get(&(q.id())) {
            Some(rows) if !q.correlated => Ok(rows.is_empty()),
            _ => match self.keyed_is_empty(q, row)? {
                Some(empty) => Ok(empty),
                None => {
                    self.exists_only = true;
                    let rows = self.subquery(q, row);
                    self.exists_only = false; // unused when the result was cached
                    Ok(rows?.is_empty())
                }
            },
        }
    }

    fn in_subquery(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
        probe: &Value,
        fold: bool,
    ) -> std::result::Result<Option<bool>, Error> {
        let key = (q.id(), fold);
        if !q.correlated && !self.members.contains_key(&key) {
            let rows = self.subquery(q, row)?;
            let set = membership::MemberSet::build(&rows, fold);
            match self.charge_temp(set.bytes) {
                Err(EngineError::Sql(e)) => return Err(e),
                Err(other) => {
                    self.pending = Some(other);
                    return Err(Error::new(Code::LockWaitTimeout, "lock wait pending"));
                }
                Ok(()) => {}
            }
            self.members.insert(key, set);
        }
        if let Some(answer) = self.members.get(&key).and_then(|s| s.lookup(probe)) {
            return Ok(answer);
        }
        // Compared one by one: over the cached rows, without copying them.
        if let Some(rows) = self.cache.get(&key.0).filter(|_| !q.correlated) {
            let items = rows.iter().map(|r| r.first());
            return Ok(crate::expr::member_of(probe, items, fold));
        }
        if let Some(rows) = self.keyed_env(q, row)? {
            let items = rows.iter().map(|r| r.first());
            return Ok(crate::expr::member_of(probe, items, fold));
        }
        let rows = self.subquery(q, row)?;
        let items = rows.iter().map(|r| r.first());
        Ok(crate::expr::member_of(probe, items, fold))
    }
}

/// Takes one table row (primary key, prefix ++ row) met by a scan; returns
/// false to stop the scan.
type TableRowFn<'f> = dyn FnMut(&mut ScanEnv, &[u8], SourceRow) -> Result<bool> + 'f;

/// A row on its way from a scan to a sink. A scan of a single table
/// decodes the columns the statement reads from the stored image into a
/// buffer it reuses from row to row (the others stay NULL); joins and
/// derived tables build their rows. Either way the sink owns the values
/// and may move them out.
pub(crate) enum SourceRow<'r> {
    Scratch(&'r mut Vec<Value>),
    Owned(Vec<Value>),
}

impl SourceRow<'_> {
    fn values(&self) -> &[Value] {
        match self {
            SourceRow::Scratch(row) => row,
            SourceRow::Owned(row) => row,
        }
    }

    /// Column `i`, moved out of the row.
    fn take(&mut self, i: usize) -> Value {
        let row = match self {
            SourceRow::Scratch(row) => &mut **row,
            SourceRow::Owned(row) => row,
        };
        row.get_mut(i).map(std::mem::take).unwrap_or(Value::Null)
    }

    /// The row to keep.
    fn into_owned(self) -> Vec<Value> {
        match self {
            SourceRow::Owned(row) => row,
            SourceRow::Scratch(row) => std::mem::take(row),
        }
    }
}

/// Encoded [lower, upper) bounds for one key range.
type Bounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The key ranges of one table access for one prefix row (`key_bounds`).
#[derive(Clone, Copy)]
struct KeyRanges<'b> {
    bounds: &'b [Bounds],
    /// The ranges hold exactly the rows their conditions select.
    exact: bool,
    /// A key value compared by another rule only narrowed its prefix.
    widened: bool,
}

impl<'a> Exec<'a> {
    pub fn new(
        engine: &'a Engine,
        txn: &'a mut Txn,
        ctx: &'a mut SessionCtx,
        params: &'a [Value],
    ) -> Self {
        Exec {
            engine,
            txn,
            ctx,
            params,
            outer: Vec::new(),
            cache: HashMap::new(),
            derived: HashMap::new(),
            lateral: lateral::Cache::default(),
            join_tables: HashMap::new(),
            working: HashMap::new(),
            members: HashMap::new(),
            keyed: HashMap::new(),
            pending: None,
            memory: MemoryUse::default(),
            exclusive: Vec::new(),
            checks: HashMap::new(),
            generated: HashMap::new(),
            view_checks: Arc::new(Vec::new()),
            count_before_limit: false,
            exists_only: false,
            found_total: None,
            profile: None,
        }
    }

    fn charge(&mut self, bytes: usize) -> Result<()> {
        self.memory.charge(&self.ctx.memory, bytes)
    }

    fn charge_temp(&mut self, bytes: usize) -> Result<()> {
        self.memory.charge_temp(self.ctx, bytes)
    }

    /// The engine, the transaction and a scan environment, borrowed
    /// apart: a scan's callback evaluates expressions as the engine walks.
    fn scan_parts(&mut self) -> (&'a Engine, &mut Txn, ScanEnv<'_>) {
        let Exec {
            engine,
            txn,
            ctx,
            params,
            outer,
            memory,
            ..
        } = self;
        let env = ScanEnv {
            ctx,
            params,
            outer,
            memory,
        };
        (*engine, &mut **txn, env)
    }

    /// The executor's state a row sink may use (no engine access).
    fn scan_env(&mut self) -> ScanEnv<'_> {
        ScanEnv {
            ctx: self.ctx,
            params: self.params,
            outer: &self.outer,
            memory: &mut self.memory,
        }
    }

    pub fn eval(&mut self, e: &BExpr, row: &[Value]) -> Result<Value> {
        match eval(e, row, self) {
            Ok(v) => Ok(v),
            Err(err) => Err(self.pending.take().unwrap_or(EngineError::Sql(err))),
        }
    }

    fn truth(&mut self, e: &Option<BExpr>, row: &[Value]) -> Result<bool> {
        match e {
            None => Ok(true),
            Some(e) => Ok(self.eval(e, row)?.truth() == Some(true)),
        }
    }

    // ---------- queries ----------

    pub fn query(&mut self, plan: &QueryPlan) -> Result<Vec<Vec<Value>>> {
        // Only a plain block may stop early: a set operation's right side
        // can remove the rows of its left.
        let exists_only = std::mem::take(&mut self.exists_only);
        match &plan.body {
            QueryBody::Select(s) => {
                self.exists_only = exists_only;
                self.select(s)
            }
            QueryBody::Recursive(r) => self.recursive(r, &plan.columns),
            QueryBody::Working(id) => Ok(self.working_rows(*id)),
            QueryBody::JsonTable(t) => self.json_table(t),
            QueryBody::Union {
                left,
                right,
                all,
                op,
                order,
                limit,
                offset,
            } => {
                let counting = std::mem::take(&mut self.count_before_limit);
                let mut rows = self.query(left)?;
                if *op != crate::parser::SetOp::Union {
                    let right = self.query(right)?;
                    let text: Vec<bool> = plan
                        .columns
                        .iter()
                        .map(|c| c.data_type.is_string())
                        .collect();
                    rows = self.intersect_except(*op, *all, rows, right, &text)?;
                } else {
                    rows.extend(self.query(right)?);
                }
                if !*all && *op == crate::parser::SetOp::Union {
                    let text: Vec<bool> = plan
                        .columns
                        .iter()
                        .map(|c| c.data_type.is_string())
                        .collect();
                    let mut seen = KeySet::default();
                    let mut kept = Vec::with_capacity(rows.len());
                    for r in rows {
                        if let (_, Some(grown)) =
                            seen.insert_with(|key| collation_key(&r, &text, key))
                        {
                            self.charge_temp(grown)?;
                            kept.push(r);
                        }
                    }
                    rows = kept;
                }
                if !order.is_empty() {
                    // A file sort: past sort_buffer_size its runs spill.
                    let keep = match counting {
                        true => None,
                        false => self.limit_count(limit, offset)?,
                    };
                    rows = self.sort_union(rows, order, keep)?;
                }
                if counting {
                    self.found_total = Some(rows.len());
                }
                self.apply_limit(&mut rows, limit, offset)?;
                Ok(rows)
            }
        }
    }

    fn apply_limit(
        &mut self,
        rows: &mut Vec<Vec<Value>>,
        limit: &Option<BExpr>,
        offset: &Option<BExpr>,
    ) -> Result<()> {
        let off = match offset {
            Some(e) => row_count(&self.eval(e, &[])?),
            None => 0,
        };
        if off > 0 {
            rows.drain(..off.min(rows.len()));
        }
        if let Some(l) = limit {
            let l = row_count(&self.eval(l, &[])?);
            rows.truncate(l);
        }
        Ok(())
    }

    fn limit_count(
        &mut self,
        limit: &Option<BExpr>,
        offset: &Option<BExpr>,
    ) -> Result<Option<usize>> {
        let Some(l) = limit else { return Ok(None) };
        let l = row_count(&self.eval(l, &[])?);
        let off = match offset {
            Some(e) => row_count(&self.eval(e, &[])?),
            None => 0,
        };
        Ok(Some(l.saturating_add(off)))
    }

    fn select(&mut self, p: &SelectPlan) -> Result<Vec<Vec<Value>>> {
        let counting = std::mem::take(&mut self.count_before_limit);
        let exists_only = std::mem::take(&mut self.exists_only);
        // The sort buffer, when no index gives the order.
        let sort_limit =
            (!p.order.is_empty() && !p.ordered_by_index).then_some(self.ctx.memory.sort);
        let mut project = Project::new(p);
        // Whether DISTINCT drops duplicates from the sorted rows (they are
        // neighbours there) instead of hashing every row as it comes.
        let keys = filesort::sort_keys(p);
        let sorted_distinct = p.distinct && sort_groups_duplicates(&keys, &p.text_columns);
        if sort_limit.is_some() {
            // Past sort_buffer_size, sorted runs go to disk (filesort.rs).
            // With DISTINCT every row is kept: duplicates go after.
            project.sorter = Some(self.file_sort(p, counting || p.distinct)?);
            if p.distinct && !sorted_distinct {
                project.distinct = Some(KeySet::default());
            }
        }
        let early = self.early_stop(p, counting, exists_only)?;
        let streams = p.aggregate.is_none()
            && p.having.is_none()
            && p.window.is_none()
            && !p.projection.iter().any(BExpr::has_subquery)
            && !p.order.iter().any(|(e, _)| e.has_subquery());
        if streams {
            // Projected as the scan meets them: only the result is held.
            project.limit = early;
            if early != Some(0) {
                self.produce(&p.source, &[], &p.filter, p.lock, &mut project)?;
            }
        } else {
            self.project_collected(p, early, &mut project)?;
        }
        if let Some(sort) = project.sorter.take() {
            if sorted_distinct {
                return self.distinct_from_sort(p, sort, &keys, counting);
            }
            return self.sorted_rows(p, sort, counting);
        }
        debug_assert!(sort_limit.is_none(), "sorted rows come from the file sort");
        let mut out = project.out;
        if p.distinct {
            out = self.hashed_distinct(p, out)?;
        }
        let mut rows: Vec<Vec<Value>> = out.into_iter().map(|(p, _)| p).collect();
        if counting {
            self.found_total = Some(rows.len());
        }
        self.apply_limit(&mut rows, &p.limit, &p.offset)?;
        Ok(rows)
    }

    /// Rows to stop after where LIMIT allows it: nothing filters or
    /// reorders the rows after the scan (and no count of them is asked).
    fn early_stop(
        &mut self,
        p: &SelectPlan,
        counting: bool,
        exists_only: bool,
    ) -> Result<Option<usize>> {
        let unchanged = p.aggregate.is_none()
            && p.having.is_none()
            && p.window.is_none()
            && !p.distinct
            && (p.order.is_empty() || p.ordered_by_index);
        if counting || !unchanged {
            return Ok(None);
        }
        Ok(match self.limit_count(&p.limit, &p.offset)? {
            // One row answers EXISTS (unless OFFSET skips it).
            None if exists_only && p.offset.is_none() => Some(1),
            early => early,
        })
    }

    /// Groups, or rows whose HAVING or projection needs the executor:
    /// projected from a collected set.
    fn project_collected(
        &mut self,
        p: &SelectPlan,
        early: Option<usize>,
        project: &mut Project<'_>,
    ) -> Result<()> {
        let rows = match &p.aggregate {
            Some(agg) => self.aggregate(p, agg)?,
            None => self.source_rows(&p.source, &p.filter, p.lock, early)?,
        };
        // Window functions see the rows HAVING keeps (exec/window.rs).
        let (rows, having) = match &p.window {
            Some(w) => (self.windows(w, rows, &p.having)?, &None),
            None => (rows, &p.having),
        };
        for row in rows {
            if !self.truth(having, &row)? {
                continue;
            }
            let bytes = match project.add(self, &mut SourceRow::Owned(row)) {
                Ok(bytes) => bytes,
                Err(e) => return Err(self.pending.take().unwrap_or(e)),
            };
            self.charge(bytes)?;
            if project.distinct_grown > 0 {
                self.charge_temp(std::mem::take(&mut project.distinct_grown))?;
            }
        }
        Ok(())
    }

    /// DISTINCT by hashing collation keys, the first of duplicates kept.
    fn hashed_distinct(
        &mut self,
        p: &SelectPlan,
        out: Vec<ProjectedRow>,
    ) -> Result<Vec<ProjectedRow>> {
        let mut seen = KeySet::default();
        let mut kept = Vec::with_capacity(out.len());
        for (proj, keys) in out {
            if let (_, Some(grown)) =
                seen.insert_with(|key| collation_key(&proj, &p.text_columns, key))
            {
                self.charge_temp(grown)?;
                kept.push((proj, keys));
            }
        }
        Ok(kept)
    }

    /// DISTINCT over the rows of a sort that puts duplicates next to each
    /// other (`sort_groups_duplicates`), read from its merge: a row that
    /// does not tie with the one before it under the sort is new; within a
    /// run of ties the rows are told apart by their collation keys (the
    /// sort may call rows equal that DISTINCT keeps apart, never the other
    /// way round). The first of duplicates is kept, as the hashing path
    /// keeps the first row it meets (the sort keeps arrival order among
    /// ties). Then OFFSET and LIMIT.
    fn distinct_from_sort(
        &mut self,
        p: &SelectPlan,
        sort: filesort::FileSort,
        keys: &[(SortKey, bool)],
        counting: bool,
    ) -> Result<Vec<Vec<Value>>> {
        let text = &p.text_columns;
        let mut sorted = sort.finish()?;
        let mut kept: Vec<ProjectedRow> = Vec::new();
        // Keys of the current run, built when it gets a second row.
        let mut run: Option<KeySet> = None;
        while let Some(row) = sorted.next()? {
            let tie = kept
                .last()
                .is_some_and(|last| compare_rows(last, &row, keys, |_| None) == Ordering::Equal);
            if !tie {
                run = None;
                self.charge(row_bytes(&row.0))?;
                kept.push(row);
                continue;
            }
            let set = match &mut run {
                Some(set) => set,
                None => {
                    let mut set = KeySet::default();
                    let first = &kept.last().expect("a tie follows a kept row").0;
                    let (_, grown) = set.insert_with(|key| collation_key(first, text, key));
                    self.charge_temp(grown.expect("a fresh set grows"))?;
                    run.insert(set)
                }
            };
            if let (_, Some(grown)) = set.insert_with(|key| collation_key(&row.0, text, key)) {
                self.charge_temp(grown)?;
                self.charge(row_bytes(&row.0))?;
                kept.push(row);
            }
        }
        let mut rows: Vec<Vec<Value>> = kept.into_iter().map(|(p, _)| p).collect();
        if counting {
            self.found_total = Some(rows.len());
        }
        self.apply_limit(&mut rows, &p.limit, &p.offset)?;
        Ok(rows)
    }

    /// The groups of an aggregate query, each row being its group's values
    /// followed by its aggregates. Rows are folded in as the scan meets them:
    /// a COUNT(*) over a large table holds one group, not the table.
    fn aggregate(&mut self, p: &SelectPlan, agg: &AggregatePlan) -> Result<Vec<Vec<Value>>> {
        if let Some(level) = agg.rollup {
            return self.rollup(p, agg, level);
        }
        // MIN/MAX served by an index need only the first row.
        let mut fold = Fold::new(agg, p.first_row_only.then_some(1));
        if fold.streams() {
            self.produce(&p.source, &[], &p.filter, p.lock, &mut fold)?;
        } else {
            // Group keys or arguments with subqueries need the executor as
            // their environment: collect the rows first.
            for row in self.source_rows(&p.source, &p.filter, p.lock, fold.remaining)? {
                let grown = match fold.add(self, &row) {
                    Ok(grown) => grown,
                    Err(e) => return Err(self.pending.take().unwrap_or(e)),
                };
                self.charge_temp(grown)?;
            }
        }
        let mut cut = self.concat_cut();
        let rows = fold.finish(&mut cut);
        self.report_cut(cut);
        Ok(rows)
    }

    /// Rows of a source that pass `filter`, combined across joins (at most
    /// `limit`).
    fn source_rows(
        &mut self,
        src: &Source,
        filter: &Option<BExpr>,
        lock: Option<LockMode>,
        limit: Option<usize>,
    ) -> Result<Vec<Vec<Value>>> {
        let mut rows = Collect {
            limit,
            ..Collect::default()
        };
        if limit != Some(0) {
            self.produce(src, &[], filter, lock, &mut rows)?;
        }
        Ok(rows.rows)
    }

    /// Feeds `sink` every combination of `prefix` with rows of `src` that
    /// satisfies `filter` (applied to complete rows only). Returns false
    /// once the sink wants no more rows.
    fn produce(
        &mut self,
        src: &Source,
        prefix: &[Value],
        filter: &Option<BExpr>,
        lock: Option<LockMode>,
        sink: &mut dyn RowSink,
    ) -> Result<bool> {
        match src {
            Source::Dual => {
                if self.truth(filter, prefix)? {
                    return sink.push(&mut self.scan_env(), SourceRow::Owned(prefix.to_vec()));
                }
                Ok(true)
            }
            Source::Table(scan) if filter.as_ref().is_some_and(|f| f.has_subquery()) => {
                // The filter needs the executor, which the scan holds: scan
                // everything first, filter after.
                let mut rows = Vec::new();
                self.table_rows(scan, prefix, None, lock, &mut |env, _, row| {
                    let row = row.into_owned();
                    env.charge(row_bytes(&row))?;
                    rows.push(row);
                    Ok(true)
                })?;
                self.pass_on(rows, filter, sink)
            }
            Source::Table(scan) => {
                let mut more = true;
                self.table_rows(scan, prefix, filter.as_ref(), lock, &mut |env, _, row| {
                    more = sink.push(env, row)?;
                    Ok(more)
                })?;
                Ok(more)
            }
            Source::Derived { plan, lateral, .. } => {
                let rows = match lateral {
                    Some(l) => self.lateral_rows(plan, l, prefix)?,
                    None => self.materialize(plan)?,
                };
                let rows = rows.iter().map(|r| {
                    let mut row = prefix.to_vec();
                    row.extend(r.iter().cloned());
                    row
                });
                self.pass_on(rows, filter, sink)
            }
            Source::Join { .. } => {
                // The outer side a batch at a time (outer.rs).
                let mut join = outer::JoinCursor::default();
                let more = self.join_from(src, prefix, filter, lock, &mut join, sink);
                self.end_join(src, join);
                more
            }
        }
    }

    /// What the statement may still hold in temporary tables (within its
    /// whole allowance too).
    fn temp_room(&self) -> usize {
        let temp = self
            .ctx
            .memory
            .temp_table
            .saturating_sub(self.memory.temp_table);
        temp.min(
            self.ctx
                .memory
                .statement
                .saturating_sub(self.memory.statement),
        )
    }

    /// Gives back what a temporary table held once it is dropped.
    fn release_temp(&mut self, bytes: usize) {
        self.memory.temp_table = self.memory.temp_table.saturating_sub(bytes);
        self.memory.statement = self.memory.statement.saturating_sub(bytes);
    }

    /// A derived table's rows, as MySQL materializes it: once per
    /// statement when it reads nothing of an enclosing row, not once per
    /// row of the tables joined before it.
    fn materialize(&mut self, plan: &Arc<QueryPlan>) -> Result<Arc<Vec<Vec<Value>>>> {
        let key = Arc::as_ptr(plan) as usize;
        if let Some(rows) = self.derived.get(&key) {
            return Ok(rows.clone());
        }
        let rows = Arc::new(self.query(plan)?);
        self.charge_temp(rows.iter().map(|r| row_bytes(r)).sum())?;
        if !plan.correlated {
            self.derived.insert(key, rows.clone());
        }
        Ok(rows)
    }

    /// Feeds `sink` the rows that satisfy `filter`; false once it wants no
    /// more.
    fn pass_on(
        &mut self,
        rows: impl IntoIterator<Item = Vec<Value>>,
        filter: &Option<BExpr>,
        sink: &mut dyn RowSink,
    ) -> Result<bool> {
        let mut ticks = 0u32;
        for row in rows {
            self.ctx
                .interrupt
                .tick(&mut ticks)
                .map_err(EngineError::Sql)?;
            if self.truth(filter, &row)?
                && !sink.push(&mut self.scan_env(), SourceRow::Owned(row))?
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Encodes the key ranges of an access path for the current prefix row.
    /// Also says whether they are exact: every key value an integer given
    /// as one, so that the ranges hold exactly the rows their conditions
    /// select (see `TableScan::range_check`).
    fn key_bounds(
        &mut self,
        def: &TableDef,
        access: &Access,
        prefix: &[Value],
        widened: &mut bool,
    ) -> Result<(Vec<Bounds>, bool)> {
        let cols = &def.indexes[access.index].columns;
        let mut out = Vec::with_capacity(access.ranges.len());
        let mut exact = true;
        let is_exact = |v: &Value, ty: DataType| {
            ty.is_integer() && matches!(v, Value::Int(_) | Value::UInt(_))
        };
        // Keys are stored values: a TIMESTAMP bound given in the session
        // time zone is looked up in UTC.
        let tz = self.ctx.tz_offset;
        let key_value = |v: &Value, ty: DataType| key_value(v, ty).map(|k| to_utc(k, ty, tz));
        'ranges: for r in &access.ranges {
            let mut p = Vec::new();
            for (i, e) in r.eq.iter().enumerate() {
                let v = self.eval(e, prefix)?;
                let ty = def.columns[cols[i]].data_type;
                match key_value(&v, ty) {
                    Some(k) => {
                        exact &= is_exact(&v, ty);
                        encode_column_key(&k, ty, &mut p)
                    }
                    None if no_equal_key(&v, ty) => continue 'ranges,
                    None => {
                        // Compared by another rule ('05' = 5 for a text
                        // column): only the prefix before it narrows.
                        exact = false;
                        *widened = true;
                        out.push(prefix_bounds(&p));
                        continue 'ranges;
                    }
                }
            }
            let col_ty = cols.get(r.eq.len()).map(|&c| def.columns[c].data_type);
            let mut bound =
                |b: &Option<(BExpr, bool)>, this: &mut Self| -> Result<Option<(Vec<u8>, bool)>> {
                    let (Some((e, incl)), Some(ty)) = (b, col_ty) else {
                        return Ok(None);
                    };
                    let v = this.eval(e, prefix)?;
                    if v.is_null() {
                        return Ok(Some((Vec::new(), false))); // NULL bound: empty range
                    }
                    // No key: the range is left open on this side.
                    let key = key_value(&v, ty);
                    exact &= key.is_some() && is_exact(&v, ty);
                    Ok(key.map(|k| {
                        let mut key = p.clone();
                        encode_column_key(&k, ty, &mut key);
                        (key, *incl)
                    }))
                };
            let lower = bound(&r.lower, self)?;
            let upper = bound(&r.upper, self)?;
            if matches!(&lower, Some((k, false)) if k.is_empty())
                || matches!(&upper, Some((k, false)) if k.is_empty())
            {
                continue;
            }
            let lo = match lower {
                Some((k, true)) => Bound::Included(k),
                Some((k, false)) => Bound::Included(successor_prefix(&k)),
                // Past the NULLs of the range column: they never match a
                // range (with no key prefix too: `a < 2` skips NULL a).
                None if r.lower.is_some() || r.upper.is_some() => {
                    let mut k = p.clone();
                    k.push(0x01);
                    Bound::Included(k)
                }
                None if p.is_empty() => Bound::Unbounded,
                None => Bound::Included(p.clone()),
            };
            let hi = match upper {
                Some((k, true)) => Bound::Excluded(successor_prefix(&k)),
                Some((k, false)) => Bound::Excluded(k),
                None if p.is_empty() => Bound::Unbounded,
                None => Bound::Excluded(successor_prefix(&p)),
            };
            out.push((lo, hi));
        }
        Ok((out, exact))
    }

    /// Feeds `on_row` the rows of one table for the prefix row, as (primary
    /// key, prefix ++ row), until it returns false.
    fn table_rows(
        &mut self,
        scan: &TableScan,
        prefix: &[Value],
        filter: Option<&BExpr>,
        lock: Option<LockMode>,
        on_row: &mut TableRowFn,
    ) -> Result<()> {
        let mut widened = false;
        let (bounds, exact) = self.key_bounds(&scan.def, &scan.access, prefix, &mut widened)?;
        let ranges = KeyRanges {
            bounds: &bounds,
            exact,
            widened,
        };
        if self.profile.is_some() {
            // EXPLAIN ANALYZE: the rows this access passes on, and its time.
            let start = std::time::Instant::now();
            let mut rows = 0u64;
            let r = self.scan_ranges(scan, prefix, filter, lock, ranges, &mut |env, pk, row| {
                rows += 1;
                on_row(env, pk, row)
            });
            self.measured(scan, start, rows);
            return r;
        }
        self.scan_ranges(scan, prefix, filter, lock, ranges, on_row)
    }

    /// `table_rows` over key ranges already computed (a streamed result
    /// resumes its scan with the lower bound moved past the last row sent).
    fn scan_ranges(
        &mut self,
        scan: &TableScan,
        prefix: &[Value],
        filter: Option<&BExpr>,
        lock: Option<LockMode>,
        KeyRanges {
            bounds,
            exact,
            widened,
        }: KeyRanges<'_>,
        on_row: &mut TableRowFn,
    ) -> Result<()> {
        let lock = match lock {
            Some(_) if self.exclusive.contains(&scan.table.id) => Some(LockMode::Exclusive),
            lock => lock,
        };
        let def = &scan.def;
        let access = &scan.access;
        // Conditions the ranges guarantee, checked only where they may not.
        let range_check = scan.range_check.as_ref().filter(|_| !exact);
        let full_point = !widened
            && access.index == 0
            && access
                .ranges
                .first()
                .is_some_and(|r| r.eq.len() == def.indexes[0].columns.len());
        // Overlapping ranges may meet a row twice (`id = 5 OR id > 4`,
        // `id IN (1, 1)`, or any ranges over a secondary index).
        let mut seen = (bounds.len() > 1).then(HashSet::new);
        let more = std::cell::Cell::new(true);
        let (engine, txn, mut env) = self.scan_parts();
        let mut scratch = Vec::new();
        let mut ticks = 0u32;
        let mut visit = |pk: &[u8], row: Row| -> Result<bool> {
            // Rows a filter drops count too: a scan that finds nothing
            // still stops when killed.
            env.ctx
                .interrupt
                .tick(&mut ticks)
                .map_err(EngineError::Sql)?;
            let needed = scan.needed.as_deref();
            let source = if prefix.is_empty() {
                scratch.clear();
                row.decode_into(&mut scratch, needed);
                SourceRow::Scratch(&mut scratch)
            } else {
                let mut combined = Vec::with_capacity(prefix.len() + row.len());
                combined.extend_from_slice(prefix);
                row.decode_into(&mut combined, needed);
                SourceRow::Owned(combined)
            };
            let filters = range_check.into_iter().chain(scan.filter.as_ref());
            if !passes(filters.chain(filter), source.values(), &mut env)? {
                return Ok(true);
            }
            if let Some(seen) = &mut seen {
                if !seen.insert(pk.to_vec()) {
                    return Ok(true);
                }
            }
            more.set(on_row(&mut env, pk, source)?);
            Ok(more.get())
        };
        for bound in bounds {
            if !more.get() {
                break;
            }
            read_range(engine, txn, scan, bound, full_point, lock, &mut visit)?;
        }
        Ok(())
    }

    // ---------- modifications ----------

    /// Rows an UPDATE or DELETE acts on, locked exclusively.
    fn target_rows(&mut self, p: &ModifyPlan) -> Result<Vec<(Vec<u8>, Vec<Value>)>> {
        let inline = p.filter.as_ref().filter(|f| !f.has_subquery());
        // Stop scanning early where LIMIT allows it (not when a filter with
        // a subquery must run after the scan).
        let early = match &p.limit {
            Some(l)
                if (p.order.is_empty() || p.ordered_by_index)
                    && (p.filter.is_none() || inline.is_some()) =>
            {
                Some(row_count(&self.eval(l, &[])?))
            }
            _ => None,
        };
        let mut rows = Vec::new();
        if early != Some(0) {
            let lock = Some(LockMode::Exclusive);
            self.table_rows(&p.scan, &[], inline, lock, &mut |env, pk, row| {
                let row = row.into_owned();
                env.charge(row_bytes(&row) + pk.len())?;
                rows.push((pk.to_vec(), row));
                Ok(early.is_none_or(|l| rows.len() < l))
            })?;
        }
        let mut kept = Vec::with_capacity(rows.len());
        for (pk, row) in rows {
            if inline.is_none() && !self.truth(&p.filter, &row)? {
                continue;
            }
            kept.push((pk, row));
        }
        if !p.order.is_empty() && !p.ordered_by_index {
            kept = self.sort_targets(p, kept)?;
        }
        if let Some(l) = &p.limit {
            let l = row_count(&self.eval(l, &[])?);
            kept.truncate(l);
        }
        Ok(kept)
    }

    /// Returns (rows matched, rows changed).
    pub fn update(&mut self, p: &ModifyPlan) -> Result<(u64, u64)> {
        let rows = self.target_rows(p)?;
        let fk = self.fk_active();
        // Only a child's rows can be changed by cascades of earlier rows.
        let recheck = fk && self.fk_is_child(&p.table);
        let chain = fk::Chain::top(Some(p.table.id));
        let (mut matched, mut changed) = (0, 0);
        let triggers = self.triggers_for(&p.table, crate::parser::TriggerEvent::Update)?;
        for (n, (pk, old)) in rows.into_iter().enumerate() {
            // A new version is new data (the old one stays for readers).
            lockstep_types::memory::check_data(&p.def.name).map_err(EngineError::Sql)?;
            // A cascade of an earlier row may have changed or deleted it.
            let old = match recheck {
                true => match self.fk_current(&p.table, &pk)? {
                    Some(row) => row,
                    None => continue,
                },
                false => old,
            };
            matched += 1;
            let chain = fk.then_some(&chain);
            let one = |x: &mut Self| x.update_one(p, &triggers, n as u64 + 1, &pk, old, chain);
            if self.or_skip(p.ignore, one)? == Some(true) {
                changed += 1;
            }
        }
        Ok((matched, changed))
    }

    /// UPDATE of one row (the `at`th): assignments, triggers, the write.
    /// Returns whether the row changed.
    fn update_one(
        &mut self,
        p: &ModifyPlan,
        triggers: &trigger::Triggers,
        at: u64,
        pk: &[u8],
        old: Vec<Value>,
        fk: Option<&fk::Chain>,
    ) -> Result<bool> {
        let mut new = old.clone();
        self.for_row(at, |x| {
            for (col, e) in &p.assignments {
                let v = x.eval(e, &new)?;
                new[*col] = x.assign_column(v, &p.def.columns[*col])?;
            }
            Ok(())
        })?;
        if !triggers.is_empty() {
            self.fire(triggers, true, Some(&mut new), Some(&old))?;
            for (v, c) in new.iter_mut().zip(&p.def.columns) {
                *v = check_null(std::mem::take(v), c)?;
            }
        }
        let kept = (!triggers.after.is_empty()).then(|| (new.clone(), old.clone()));
        let assigned = |i: usize| p.assignments.iter().any(|(col, _)| *col == i);
        if !self.update_row(&p.table, pk, old, new, &assigned, fk)? {
            return Ok(false);
        }
        if let Some((mut new, old)) = kept {
            self.fire(triggers, false, Some(&mut new), Some(&old))?;
        }
        Ok(true)
    }

    /// Writes `new` over the row `old` of `table` (primary key `pk`) unless
    /// they are equal, setting the ON UPDATE CURRENT_TIMESTAMP columns not
    /// `assigned`; checks foreign keys under `fk`. Returns whether the row
    /// changed.
    fn update_row(
        &mut self,
        table: &Arc<lockstep_tables::Table>,
        pk: &[u8],
        old: Vec<Value>,
        mut new: Vec<Value>,
        assigned: &dyn Fn(usize) -> bool,
        fk: Option<&fk::Chain>,
    ) -> Result<bool> {
        if new
            .iter()
            .zip(&old)
            .all(|(a, b)| a.sort_cmp(b) == Ordering::Equal && a.is_null() == b.is_null())
        {
            return Ok(false);
        }
        let schema = table.schema();
        for (i, c) in schema.def.columns.iter().enumerate() {
            if c.on_update_now && !assigned(i) {
                new[i] = self.column_now(c)?;
            }
        }
        self.generate(table, &mut new)?;
        self.check_row(table, &new, false)?;
        let kept = fk.map(|chain| (chain, new.clone()));
        let done = self
            .engine
            .update(self.txn, table, &schema, pk, &old, new)?;
        drop(schema);
        if let Err(dup) = done {
            return Err(EngineError::Sql(Error::dup_entry(
                &dup.key_text,
                &dup.index,
            )));
        }
        if let Some((chain, new)) = kept {
            self.fk_check_parents(table, &new, Some(&old))?;
            self.fk_parent_changed(table, &old, Some(&new), chain)?;
        }
        Ok(true)
    }

    pub fn delete(&mut self, p: &ModifyPlan) -> Result<u64> {
        self.memory.frees = true;
        let rows = self.target_rows(p);
        self.memory.frees = false;
        let rows = rows?;
        let fk = self.fk_active();
        // Only a child's rows can be changed by cascades of earlier rows.
        let recheck = fk && self.fk_is_child(&p.table);
        let chain = fk::Chain::top(None);
        let mut n = 0;
        let triggers = self.triggers_for(&p.table, crate::parser::TriggerEvent::Delete)?;
        for (pk, old) in rows {
            let old = match recheck {
                true => match self.fk_current(&p.table, &pk)? {
                    Some(row) => row,
                    None => continue,
                },
                false => old,
            };
            let chain = fk.then_some(&chain);
            let one = |x: &mut Self| {
                x.fire(&triggers, true, None, Some(&old))?;
                x.delete_row(&p.table, &pk, &old, chain)?;
                x.fire(&triggers, false, None, Some(&old))
            };
            if self.or_skip(p.ignore, one)?.is_some() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Deletes the row `old` of `table` (primary key `pk`); with `fk`,
    /// what references it follows its rules.
    fn delete_row(
        &mut self,
        table: &Arc<lockstep_tables::Table>,
        pk: &[u8],
        old: &[Value],
        fk: Option<&fk::Chain>,
    ) -> Result<()> {
        let schema = table.schema();
        self.engine.delete(self.txn, table, &schema, pk, old)?;
        drop(schema);
        match fk {
            Some(chain) => self.fk_parent_changed(table, old, None, chain),
            None => Ok(()),
        }
    }
}

fn check_null(v: Value, c: &lockstep_tables::ColumnDef) -> std::result::Result<Value, Error> {
    if v.is_null() && !c.nullable && !c.auto_increment {
        return Err(Error::new(
            Code::BadNull,
            format!("Column '{}' cannot be null", c.name),
        ));
    }
    Ok(v)
}

/// Whether a row passes every filter (NULL fails, as in WHERE).
fn passes<'f>(
    filters: impl Iterator<Item = &'f BExpr>,
    row: &[Value],
    env: &mut ScanEnv<'_>,
) -> Result<bool> {
    for f in filters {
        if eval(f, row, env).map_err(EngineError::Sql)?.truth() != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Feeds the rows of one key range of `scan` to `visit`: a whole primary
/// key is one lookup, anything else a range iteration.
fn read_range(
    engine: &Engine,
    txn: &mut Txn,
    scan: &TableScan,
    (lo, hi): &Bounds,
    full_point: bool,
    lock: Option<LockMode>,
    visit: &mut dyn FnMut(&[u8], Row) -> Result<bool>,
) -> Result<()> {
    if let (true, Bound::Included(key)) = (full_point, lo) {
        let row = match lock {
            None => engine.read(txn, &scan.table, key),
            Some(mode) => engine.read_locked(txn, &scan.table, key, mode)?,
        };
        if let Some(row) = row {
            visit(key, row)?;
        }
        return Ok(());
    }
    let access = &scan.access;
    let (lo, hi) = (as_ref_bound(lo), as_ref_bound(hi));
    if access.index == 0 {
        return engine.scan_primary(txn, &scan.table, lo, hi, access.reverse, lock, visit);
    }
    let schema = scan.table.schema();
    engine.scan_secondary(
        txn,
        &scan.table,
        &schema,
        access.index,
        lo,
        hi,
        access.reverse,
        lock,
        visit,
    )
}

fn as_ref_bound(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Whether no row's key column of type `ty` can equal `v`: NULL, or a
/// number that is no value of an integer or decimal column (5.5 for INT).
/// Other values without a key (a number for a text column) compare by
/// conversion and may equal many keys.
fn no_equal_key(v: &Value, ty: DataType) -> bool {
    v.is_null()
        || (!matches!(v, Value::Bytes(_))
            && (ty.is_integer() || matches!(ty, DataType::Decimal { .. })))
}

/// The keys that start with `p` (every key when it is empty).
fn prefix_bounds(p: &[u8]) -> Bounds {
    if p.is_empty() {
        return (Bound::Unbounded, Bound::Unbounded);
    }
    (
        Bound::Included(p.to_vec()),
        Bound::Excluded(successor_prefix(p)),
    )
}

/// Key under which values count as equal for GROUP BY, DISTINCT and
/// UNION: numbers by value, text (where `text[i]`) under the default
/// collation, everything else byte-wise.
fn collation_key(vals: &[Value], text: &[bool], key: &mut Vec<u8>) {
    for (i, v) in vals.iter().enumerate() {
        match v {
            Value::Bytes(b) if text.get(i).copied().unwrap_or(false) => {
                lockstep_types::value::encode_bytes_key(&lockstep_types::value::fold_ci(b), key)
            }
            v => v.group_key(key),
        }
    }
}

/// Where produced rows go: collected, or folded into groups as they come.
trait RowSink {
    /// Takes one row; returns false once it wants no more.
    fn push(&mut self, env: &mut ScanEnv, row: SourceRow) -> Result<bool>;
}

/// Collects rows (up to `limit`), each charged to the statement.
#[derive(Default)]
struct Collect {
    rows: Vec<Vec<Value>>,
    /// What the rows were charged.
    bytes: usize,
    limit: Option<usize>,
}

impl RowSink for Collect {
    fn push(&mut self, env: &mut ScanEnv, row: SourceRow) -> Result<bool> {
        let row = row.into_owned();
        let bytes = row_bytes(&row);
        env.charge(bytes)?;
        self.bytes += bytes;
        self.rows.push(row);
        Ok(self.limit.is_none_or(|l| self.rows.len() < l))
    }
}

/// Whether sorting by `keys` puts rows DISTINCT calls duplicates next to
/// each other: every key is a projected item compared the way DISTINCT
/// compares it (text folded exactly where the column is text), and every
/// projected item is a key. Rows equal under DISTINCT then tie on every key.
fn sort_groups_duplicates(keys: &[(SortKey, bool)], text: &[bool]) -> bool {
    let mut covered = vec![false; text.len()];
    for (at, _) in keys {
        match *at {
            SortKey::Projected { item, folded } if text.get(item) == Some(&folded) => {
                covered[item] = true
            }
            _ => return false,
        }
    }
    covered.iter().all(|&c| c)
}

/// Sorts projected rows by `keys`. Text compared under the default
/// collation is folded once per row, not at every comparison: a sort makes
/// about n log n comparisons, each of which would fold both sides again.
/// With `want_ties`, also says for each sorted row whether it compares
/// equal to the one before it.
fn sort_rows(
    out: Vec<ProjectedRow>,
    keys: &[(SortKey, bool)],
    want_ties: bool,
) -> (Vec<ProjectedRow>, Vec<bool>) {
    let folded_items: Vec<usize> = keys
        .iter()
        .filter_map(|(at, _)| match *at {
            SortKey::Projected { item, folded: true } => Some(item),
            _ => None,
        })
        .collect();
    // Row by row, the folded bytes of each folded key (None where the
    // value is not text and the general comparison applies), in one
    // vector: row x's key k is at x * stride + k.
    let stride = folded_items.len();
    let folds: Vec<Option<std::borrow::Cow<'_, [u8]>>> = out
        .iter()
        .flat_map(|(proj, _)| {
            folded_items.iter().map(|&item| match &proj[item] {
                Value::Bytes(b) => Some(lockstep_types::value::fold_ci(b)),
                _ => None,
            })
        })
        .collect();
    let full = |x: usize, y: usize| {
        compare_rows(&out[x], &out[y], keys, |k| {
            match (&folds[x * stride + k], &folds[y * stride + k]) {
                (Some(a), Some(b)) => Some(a.cmp(b)),
                _ => None,
            }
        })
    };
    // Where the first key is folded text in every row, its leading eight
    // bytes as one number decide most comparisons without following a
    // pointer; equal leads fall through to the whole comparison.
    let lead = match keys.first() {
        Some((SortKey::Projected { folded: true, .. }, _)) => (0..out.len())
            .map(|x| folds[x * stride].as_deref().map(leading_bytes))
            .collect::<Option<Vec<u64>>>(),
        _ => None,
    };
    let desc = keys.first().is_some_and(|(_, desc)| *desc);
    let cmp = |x: usize, y: usize| match &lead {
        Some(lead) => match lead[x].cmp(&lead[y]) {
            Ordering::Equal => full(x, y),
            o if desc => o.reverse(),
            o => o,
        },
        None => full(x, y),
    };
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|&x, &y| cmp(x, y));
    let ties = match want_ties {
        true => (0..order.len())
            .map(|i| i > 0 && cmp(order[i - 1], order[i]) == Ordering::Equal)
            .collect(),
        false => Vec::new(),
    };
    drop(folds);
    let mut slots: Vec<Option<ProjectedRow>> = out.into_iter().map(Some).collect();
    let sorted = order
        .into_iter()
        .map(|i| slots[i].take().expect("a permutation takes every row once"))
        .collect();
    (sorted, ties)
}

/// The first eight bytes of `b` (zero-padded) as a big-endian number: if
/// `leading_bytes(a) < leading_bytes(b)` then `a < b` byte-wise.
fn leading_bytes(b: &[u8]) -> u64 {
    let mut lead = [0u8; 8];
    let n = b.len().min(8);
    lead[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(lead)
}

/// Compares two projected rows by `keys`; `folded(k)` may answer for the
/// k-th folded key (in `keys` order) from precomputed bytes.
fn compare_rows(
    a: &ProjectedRow,
    b: &ProjectedRow,
    keys: &[(SortKey, bool)],
    folded: impl Fn(usize) -> Option<Ordering>,
) -> Ordering {
    let mut k = 0;
    for (at, desc) in keys {
        let o = match *at {
            SortKey::Stored(i) => a.1[i].sort_cmp(&b.1[i]),
            SortKey::Projected { item, folded: true } => {
                k += 1;
                folded(k - 1).unwrap_or_else(|| collated_sort_cmp(&a.0[item], &b.0[item], true))
            }
            SortKey::Projected {
                item,
                folded: false,
            } => collated_sort_cmp(&a.0[item], &b.0[item], false),
        };
        if o != Ordering::Equal {
            return if *desc { o.reverse() } else { o };
        }
    }
    Ordering::Equal
}

/// A result row as projected, with the ORDER BY keys stored beside it
/// (those that are not projected items).
type ProjectedRow = (Vec<Value>, Vec<Value>);

/// Where a row's ORDER BY key is.
#[derive(Clone, Copy)]
enum SortKey {
    /// The i-th of the keys stored with the row.
    Stored(usize),
    /// A projected value, under the default collation if `folded`.
    Projected { item: usize, folded: bool },
}

/// Projects rows (source rows, or groups) into result rows, each with its
/// ORDER BY keys. As a row sink it projects rows as the scan meets them.
struct Project<'p> {
    plan: &'p SelectPlan,
    out: Vec<ProjectedRow>,
    /// Bytes of `out`.
    bytes: usize,
    /// Rows wanted, as a row sink.
    limit: Option<usize>,
    /// Rows go to this sort instead of `out` (which stays empty).
    sorter: Option<filesort::FileSort>,
    /// DISTINCT before the sort: the collation keys of the rows passed
    /// on, and what the set grew by since the caller last charged it.
    distinct: Option<KeySet>,
    distinct_grown: usize,
}

impl<'p> Project<'p> {
    fn new(plan: &'p SelectPlan) -> Self {
        debug_assert_eq!(plan.moves.len(), plan.projection.len(), "plan was pruned");
        Project {
            plan,
            out: Vec::new(),
            bytes: 0,
            limit: None,
            sorter: None,
            distinct: None,
            distinct_grown: 0,
        }
    }

    /// Projects `row` (which it may take columns from) into `out`; returns
    /// the bytes to charge to the statement.
    fn add(&mut self, env: &mut dyn Env, row: &mut SourceRow) -> Result<usize> {
        let p = self.plan;
        let mut proj = Vec::with_capacity(p.projection.len());
        for (e, moved) in p.projection.iter().zip(&p.moves) {
            proj.push(match moved {
                Some(_) => Value::Null, // filled in below
                None => eval(e, row.values(), env).map_err(EngineError::Sql)?,
            });
        }
        // Only the keys not read from the projection are stored.
        let mut keys = Vec::new();
        if !p.ordered_by_index {
            for ((e, _), from) in p.order.iter().zip(&p.order_from) {
                if from.is_none() {
                    keys.push(eval(e, row.values(), env).map_err(EngineError::Sql)?);
                }
            }
        }
        // Last: nothing else reads a moved column.
        for (slot, moved) in proj.iter_mut().zip(&p.moves) {
            if let Some(c) = moved {
                *slot = row.take(*c);
            }
        }
        if let Some(seen) = &mut self.distinct {
            match seen.insert_with(|key| collation_key(&proj, &p.text_columns, key)) {
                (_, Some(grown)) => self.distinct_grown += grown,
                (_, None) => return Ok(0), // a duplicate
            }
        }
        let bytes = row_bytes(&proj) + row_bytes(&keys);
        if let Some(sort) = &mut self.sorter {
            // Held by the sort, bounded by sort_buffer_size, not charged.
            sort.push((proj, keys), bytes)?;
            return Ok(0);
        }
        self.bytes += bytes;
        self.out.push((proj, keys));
        Ok(bytes)
    }
}

impl RowSink for Project<'_> {
    fn push(&mut self, env: &mut ScanEnv, mut row: SourceRow) -> Result<bool> {
        let bytes = self.add(env, &mut row)?;
        env.charge(bytes)?;
        if self.distinct_grown > 0 {
            env.charge_temp(std::mem::take(&mut self.distinct_grown))?;
        }
        let held = self.sorter.as_ref().map_or(self.out.len(), |s| s.total);
        Ok(self.limit.is_none_or(|l| held < l))
    }
}

/// GROUP BY state: the groups met so far, found by their collation key.
struct Fold<'p> {
    agg: &'p AggregatePlan,
    index: KeySet,
    groups: Vec<(Vec<Value>, Vec<AggState>)>,
    /// Rows still wanted, where only the first few count.
    remaining: Option<usize>,
    /// How many GROUP BY values it groups by (fewer than all: a ROLLUP
    /// level, the others NULL).
    keep: usize,
}

impl<'p> Fold<'p> {
    fn new(agg: &'p AggregatePlan, remaining: Option<usize>) -> Self {
        Fold {
            agg,
            index: KeySet::default(),
            groups: Vec::new(),
            remaining,
            keep: agg.group_by.len(),
        }
    }

    /// Groups by the first `keep` GROUP BY values only.
    fn keeping(mut self, keep: usize) -> Self {
        debug_assert!(keep <= self.agg.group_by.len());
        self.keep = keep;
        self
    }

    /// Whether rows can be folded in inside a scan: no group key or
    /// argument needs a subquery.
    fn streams(&self) -> bool {
        !self.agg.group_by.iter().any(BExpr::has_subquery)
            && !self
                .agg
                .calls
                .iter()
                .any(|c| c.arg.as_ref().is_some_and(BExpr::has_subquery))
    }

    /// Folds one row in; returns the bytes the groups grew by.
    fn add(&mut self, env: &mut dyn Env, row: &[Value]) -> Result<usize> {
        let agg = self.agg;
        let mut grown = 0;
        let gi = if self.keep == 0 && !self.groups.is_empty() {
            0 // one group: no key to build
        } else {
            let mut gvals = Vec::with_capacity(agg.group_by.len());
            for (i, g) in agg.group_by.iter().enumerate() {
                gvals.push(match i < self.keep {
                    true => eval(g, row, env)?,
                    false => Value::Null,
                });
            }
            let (i, new) = self
                .index
                .insert_with(|key| collation_key(&gvals, &agg.group_text, key));
            if let Some(key_bytes) = new {
                // One more row of the group-by temporary table; groups are
                // numbered as the key set numbers their keys.
                grown += row_bytes(&gvals)
                    + key_bytes
                    + agg.calls.len() * std::mem::size_of::<AggState>();
                self.groups.push((
                    gvals,
                    agg.calls.iter().map(|_| AggState::default()).collect(),
                ));
                debug_assert_eq!(i, self.groups.len() - 1, "group numbers follow key numbers");
            }
            i
        };
        for (ci, call) in agg.calls.iter().enumerate() {
            let v = match &call.arg {
                Some(BExpr::Row(items)) => {
                    let mut vals = Vec::with_capacity(items.len());
                    for it in items {
                        vals.push(eval(it, row, env)?);
                    }
                    AggInput::Row(vals)
                }
                Some(e) => AggInput::One(eval(e, row, env)?),
                None => AggInput::One(Value::Int(1)),
            };
            grown += self.groups[gi].1[ci].add(call, v)?;
        }
        Ok(grown)
    }

    /// Each group's values followed by its aggregates.
    fn finish(mut self, cut: &mut group_concat::Cut) -> Vec<Vec<Value>> {
        if self.groups.is_empty() && self.agg.group_by.is_empty() {
            // No rows: one group all the same (COUNT(*) = 0, SUM = NULL).
            self.groups.push((
                Vec::new(),
                self.agg.calls.iter().map(|_| AggState::default()).collect(),
            ));
        }
        let calls = &self.agg.calls;
        self.groups
            .into_iter()
            .map(|(mut g, states)| {
                for (state, call) in states.into_iter().zip(calls) {
                    g.push(match call.func {
                        AggFunc::GroupConcat => {
                            group_concat::finish(call, state.parts, state.keyed, cut)
                        }
                        _ => state.finish(call),
                    });
                }
                g
            })
            .collect()
    }
}

impl RowSink for Fold<'_> {
    fn push(&mut self, env: &mut ScanEnv, row: SourceRow) -> Result<bool> {
        let grown = self.add(env, row.values())?;
        if grown > 0 {
            env.charge_temp(grown)?;
        }
        Ok(match &mut self.remaining {
            None => true,
            Some(n) => {
                *n = n.saturating_sub(1);
                *n > 0
            }
        })
    }
}

/// What SUM/AVG adds up for a value that is no integer: text and doubles
/// as DOUBLE, the rest as DECIMAL.
fn sum_term(v: &Value) -> Value {
    match v {
        Value::Double(_) | Value::Bytes(_) => Value::Double(v.to_f64().unwrap_or(0.0)),
        other => Value::Decimal(other.to_decimal().unwrap_or_default()),
    }
}

enum AggInput {
    One(Value),
    Row(Vec<Value>),
}

impl AggInput {
    /// The value an aggregate folds, whether a NULL makes it skip the row,
    /// and a row's values (GROUP_CONCAT and the JSON aggregates need them).
    fn split(self, call: &AggCall) -> (Value, bool, Option<Vec<Value>>) {
        match self {
            AggInput::One(v) => {
                let n = v.is_null();
                (v, n, None)
            }
            AggInput::Row(vals) => {
                // A NULL ORDER BY key of GROUP_CONCAT keeps the row.
                let n = group_concat::values(call, &vals)
                    .iter()
                    .any(|x| x.is_null());
                let concat = Value::Bytes(
                    vals.iter()
                        .flat_map(|x| x.to_text().unwrap_or_default())
                        .collect(),
                );
                (concat, n, Some(vals))
            }
        }
    }
}

#[derive(Default)]
struct AggState {
    count: u64,
    sum: Option<Value>,
    /// Integer inputs of SUM/AVG, added in an i128 and folded into `sum`
    /// (DECIMAL) only at the end: no decimal arithmetic per row.
    int_sum: Option<i128>,
    best: Option<Value>,
    bits: Option<u64>,
    /// STDDEV/VARIANCE: running mean and sum of squared deviations
    /// (Welford's update, stable where sums of squares are not).
    mean: f64,
    m2: f64,
    parts: Vec<Vec<u8>>,
    /// GROUP_CONCAT(.. ORDER BY ..)'s parts with their keys.
    keyed: Vec<group_concat::Keyed>,
    seen: Option<KeySet>,
}

impl AggState {
    /// Adds one input; returns the bytes the state grew by (DISTINCT sets
    /// and GROUP_CONCAT parts grow, everything else is fixed-size).
    fn add(&mut self, call: &AggCall, input: AggInput) -> Result<usize> {
        let (v, any_null, row_vals) = input.split(call);
        if call.func == AggFunc::CountStar {
            self.count += 1;
            return Ok(0);
        }
        if matches!(call.func, AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg) {
            // NULLs are JSON nulls here, not skipped.
            let part = crate::expr::json::agg::part(call.arg.as_ref(), v, row_vals)
                .map_err(EngineError::Sql)?;
            let grown = part.len() + std::mem::size_of::<Vec<u8>>();
            self.parts.push(part);
            return Ok(grown);
        }
        if any_null {
            return Ok(0);
        }
        let mut grown = 0;
        if call.distinct {
            let vals = row_vals.as_deref().unwrap_or(std::slice::from_ref(&v));
            match self.first_sight(call, vals) {
                Some(key_bytes) => grown += key_bytes,
                None => return Ok(0),
            }
        }
        self.count += 1;
        Ok(grown + self.fold(call, v, row_vals)?)
    }

    /// DISTINCT: the bytes a value not seen before adds to the set, None
    /// for a repeat. It compares the values, not GROUP_CONCAT's keys.
    fn first_sight(&mut self, call: &AggCall, vals: &[Value]) -> Option<usize> {
        let vals = group_concat::values(call, vals);
        let seen = self.seen.get_or_insert_with(KeySet::default);
        seen.insert_with(|key| collation_key(vals, &call.text, key))
            .1
    }

    /// Folds one non-NULL input into the state; returns the bytes it grew by.
    fn fold(&mut self, call: &AggCall, v: Value, row_vals: Option<Vec<Value>>) -> Result<usize> {
        match call.func {
            AggFunc::Sum | AggFunc::Avg => self.add_sum(v)?,
            AggFunc::Min | AggFunc::Max => {
                let replace = self.best.as_ref().is_none_or(|b| {
                    // Text compares under its collation, as MySQL does.
                    let folded = call.text.first() == Some(&true);
                    let o = crate::expr::collated_sort_cmp(&v, b, folded);
                    (call.func == AggFunc::Min && o == Ordering::Less)
                        || (call.func == AggFunc::Max && o == Ordering::Greater)
                });
                if replace {
                    self.best = Some(v);
                }
            }
            AggFunc::AnyValue => {
                if self.best.is_none() {
                    self.best = Some(v);
                }
            }
            AggFunc::GroupConcat => {
                let (part, keys) = group_concat::part(call, &v, row_vals.as_deref());
                let grown = part.len() + std::mem::size_of::<Vec<u8>>();
                if call.order.is_empty() {
                    self.parts.push(part);
                    return Ok(grown);
                }
                let grown = grown + row_bytes(&keys);
                self.keyed.push((keys, part));
                return Ok(grown);
            }
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => {
                let x = v.to_i64().unwrap_or(0) as u64;
                self.bits = Some(match (self.bits, call.func) {
                    (None, _) => x,
                    (Some(b), AggFunc::BitAnd) => b & x,
                    (Some(b), AggFunc::BitOr) => b | x,
                    (Some(b), _) => b ^ x,
                });
            }
            AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
                let x = v.to_f64().unwrap_or(0.0);
                let delta = x - self.mean;
                self.mean += delta / self.count as f64;
                self.m2 += delta * (x - self.mean);
            }
            AggFunc::Count
            | AggFunc::CountStar
            | AggFunc::JsonArrayAgg
            | AggFunc::JsonObjectAgg => {}
        }
        Ok(0)
    }

    /// SUM/AVG: integers add up in an i128 while they fit; the rest (and
    /// an overflow) in `sum`.
    fn add_sum(&mut self, v: Value) -> Result<()> {
        let int = match v {
            Value::Int(i) => Some(i as i128),
            Value::UInt(u) => Some(u as i128),
            _ => None,
        };
        if let Some(t) = int.and_then(|i| self.int_sum.unwrap_or(0).checked_add(i)) {
            self.int_sum = Some(t);
            return Ok(());
        }
        let x = sum_term(&v);
        self.sum = Some(match self.sum.take() {
            None => x,
            Some(s) => crate::expr::binary(crate::parser::BinaryOp::Plus, s, x)
                .map_err(EngineError::Sql)?,
        });
        Ok(())
    }

    /// The value of what was added so far, the state left as it is (a
    /// window frame that grows row by row). Not for DISTINCT or
    /// GROUP_CONCAT, which no window computes.
    fn current(&self, call: &AggCall) -> Value {
        debug_assert!(!call.distinct && call.func != AggFunc::GroupConcat);
        if self.count == 0 {
            // Empty, or every row taken out again: NULL, not a zero sum.
            return AggState::default().finish(call);
        }
        AggState {
            count: self.count,
            sum: self.sum.clone(),
            int_sum: self.int_sum,
            best: self.best.clone(),
            bits: self.bits,
            mean: self.mean,
            m2: self.m2,
            parts: Vec::new(),
            keyed: Vec::new(),
            seen: None,
        }
        .finish(call)
    }

    /// SUM of everything added: the decimal/double part plus the integers.
    fn total(&mut self) -> Option<Value> {
        let ints = self
            .int_sum
            .take()
            .map(|i| Value::Decimal(Decimal::from_i128_with_scale(i, 0)));
        match (self.sum.take(), ints) {
            (Some(s), Some(i)) => crate::expr::binary(crate::parser::BinaryOp::Plus, s, i).ok(),
            (s, i) => s.or(i),
        }
    }

    fn finish(mut self, call: &AggCall) -> Value {
        self.sum = self.total();
        match call.func {
            AggFunc::CountStar | AggFunc::Count => Value::Int(self.count as i64),
            AggFunc::Sum => self.sum.unwrap_or(Value::Null),
            AggFunc::Avg => match self.sum {
                None => Value::Null,
                Some(Value::Double(d)) => Value::Double(d / self.count as f64),
                Some(s) => {
                    let d = s.to_decimal().unwrap_or_default();
                    // The scale of SUM + div_precision_increment, as MySQL.
                    let avg = d.checked_div(Decimal::from(self.count), d.scale() + 4);
                    avg.map_or(Value::Null, Value::Decimal)
                }
            },
            AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => self.best.unwrap_or(Value::Null),
            AggFunc::GroupConcat => {
                let mut uncut = group_concat::Cut::new(usize::MAX);
                group_concat::finish(call, self.parts, self.keyed, &mut uncut)
            }
            AggFunc::BitAnd => Value::UInt(self.bits.unwrap_or(u64::MAX)),
            AggFunc::BitOr | AggFunc::BitXor => Value::UInt(self.bits.unwrap_or(0)),
            AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
                crate::expr::json::agg::finish(call.func == AggFunc::JsonObjectAgg, &self.parts)
            }
            AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
                let sample = matches!(call.func, AggFunc::StdSamp | AggFunc::VarSamp);
                let n = self.count as f64 - if sample { 1.0 } else { 0.0 };
                if n <= 0.0 {
                    return Value::Null;
                }
                let var = self.m2 / n;
                match call.func {
                    AggFunc::StdPop | AggFunc::StdSamp => Value::Double(var.sqrt()),
                    _ => Value::Double(var),
                }
            }
        }
    }
}
