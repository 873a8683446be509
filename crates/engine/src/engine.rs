//! The engine: one node's catalog and tables, its transaction system, lock
//! system and log, and the paths that tie them together — row reads and
//! writes under MVCC and row locks, commit (log, then wait for durability,
//! then become visible and release locks), rollback, DDL and recovery.

use crate::catalog::Catalog;
use crate::durability::{CommitPoint, Durability, DurabilityError, LocalDurability};
use crate::gap::{Entries, Step};
use crate::semisync::SemiSync;
use crate::txn::{Isolation, LockWaitPolicy, Txn, Undo};
use lockstep_accounts::{Account, AccountRoles, Accounts};
use lockstep_binlog::writeset::WritesetHistory;
use lockstep_binlog::{Event, Gtid, GtidSet, RowEvent, TxnRecord, FORMAT_VERSION};
use lockstep_lock::{Acquire, GrantPolicy, LockConfig, LockKey, LockMode, LockSys, LockWait};
use lockstep_log::{FlushMode, Log, LogConfig, LogError};
use lockstep_tables::clustered::{key_of, Key};
use lockstep_tables::placement::table_data;
use lockstep_tables::table::{PurgeCheck, Schema};
use lockstep_tables::{IndexDef, Row, Table, TableDef, Version};
use lockstep_txn::{TxnConfig, TxnSys};
use lockstep_types::error::Code;
use lockstep_types::names::{check_name, NameKind};
use lockstep_types::{value::encoded_prefix_len, Error as SqlError, Value};
use parking_lot::Mutex;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Why an engine call did not complete: an SQL error, or a row lock that
/// must be waited for. On `LockWait` the caller rolls back the statement,
/// awaits the wait (its lock request stays queued), and runs the statement
/// again — so executing a statement never blocks a thread.
pub enum Error {
    Sql(SqlError),
    LockWait(LockWait),
}

impl From<SqlError> for Error {
    fn from(e: SqlError) -> Self {
        Error::Sql(e)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub datadir: PathBuf,
    pub flush_mode: FlushMode,
    pub lock_shards: usize,
    pub grant_policy: GrantPolicy,
    pub txn_registry_shards: usize,
    pub throttle_limit: usize,
    pub log_buffer_size: usize,
    /// Bytes per log segment file (each is preallocated before use).
    pub log_segment_size: u64,
    /// binlog_row_image=MINIMAL: updates log the primary key and the changed
    /// columns, deletes the primary key only.
    pub minimal_row_image: bool,
    /// Where the log's files live: the disk, or memory in tests and
    /// simulations (`lockstep_log::MemStorage`).
    pub log_storage: Arc<dyn lockstep_log::Storage>,
    /// How ALTER TABLE converts a column's values to its new type (the
    /// SQL layer's strict-mode conversion; `keep_value` without it).
    pub convert: crate::alter::ConvertFn,
    /// How ALTER TABLE computes generated columns (the SQL layer's
    /// expressions; `no_generation` without it).
    pub generate: crate::generated::GenerateFn,
}

impl EngineConfig {
    pub fn new(datadir: impl Into<PathBuf>) -> Self {
        EngineConfig {
            datadir: datadir.into(),
            flush_mode: FlushMode::EveryCommit,
            lock_shards: 512,
            grant_policy: GrantPolicy::Fifo,
            txn_registry_shards: 64,
            throttle_limit: 0,
            log_buffer_size: 16 << 20,
            log_segment_size: 64 << 20,
            minimal_row_image: false,
            log_storage: Arc::new(lockstep_log::OsStorage::new()),
            convert: crate::alter::keep_value,
            generate: crate::generated::no_generation,
        }
    }
}

/// Commit order: GTID numbers and last_committed are assigned in the same
/// short critical section that reserves log space, so log order, GTID
/// order and sequence numbers agree (5.10).
struct CommitOrder {
    next_gno: u64,
    /// sequence_number of the next commit (last_committed refers to these).
    next_seq: u64,
    /// Every GTID committed here: this server's own and those applied
    /// from other sources (gtid_executed).
    executed: GtidSet,
    history: WritesetHistory,
    /// Which in-flight counter new committers register in; a checkpoint
    /// flips it and waits for the old one to drain.
    epoch: usize,
}

impl CommitOrder {
    /// The GTID a commit takes: the applied one, or this server's next.
    fn take_gtid(&mut self, own: [u8; 16], applied: Option<Gtid>) -> Gtid {
        let gtid = applied.unwrap_or(Gtid {
            server_uuid: own,
            gno: self.next_gno,
        });
        let fresh = self.executed.insert(gtid);
        debug_assert!(fresh, "GTID {gtid} committed twice");
        if gtid.server_uuid == own {
            self.next_gno = self.next_gno.max(gtid.gno + 1);
        }
        gtid
    }

    /// The next commit's sequence_number (the commit order on this node).
    fn next_sequence(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }
}

/// A commit refused before it was logged: semisync is off and set to
/// refuse rather than go on asynchronously.
fn semisync_refused(why: &str) -> SqlError {
    SqlError::new(
        Code::ErrorDuringCommit,
        format!("Got error during COMMIT: {why}"),
    )
}

/// The error of a commit whose GTID was committed meanwhile.
fn already_applied(gtid: Option<Gtid>) -> SqlError {
    let gtid = gtid.map(|g| g.to_string()).unwrap_or_default();
    SqlError::new(
        Code::ErrorDuringCommit,
        format!("Got error during COMMIT: GTID {gtid} is already executed"),
    )
}

/// A transaction or DDL between log reservation and visibility; the
/// checkpoint waits for these to drain (see checkpoint.rs).
pub(crate) struct InFlight<'a> {
    counter: &'a AtomicU64,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One change of `Engine::change_accounts`.
pub enum AccountChange {
    Put(Account),
    Drop {
        user: String,
        host: String,
    },
    /// An account's role side (lockstep_accounts::roles).
    Roles {
        user: String,
        host: String,
        roles: AccountRoles,
    },
}

/// The conflicting row found by an insert.
pub struct Duplicate {
    pub index: String,
    pub key_text: String,
    pub primary_key: Vec<u8>,
    pub row: Vec<Value>,
}

/// What a checkpoint records of the commit order at its start.
struct CheckpointStart {
    /// The log position it covers up to: recovery replays from here.
    lsn: u64,
    next_gno: u64,
    gtids: GtidSet,
    next_seq: u64,
}

pub struct Engine {
    pub catalog: Catalog,
    /// Users and grants; changed only through `change_accounts`.
    pub accounts: Accounts,
    /// Serializes account changes (read-modify-write of an account).
    account_ddl: tokio::sync::Mutex<()>,
    pub txn_sys: TxnSys,
    pub lock_sys: LockSys,
    pub log: Log,
    /// What a commit waits for before it is acknowledged.
    durability: Arc<dyn Durability>,
    /// Semisynchronous replication's settings and acknowledgements; it is
    /// the `durability` above, wrapped around the one the engine was
    /// opened with.
    pub semisync: Arc<SemiSync>,
    /// The replica applier's lock wait and retry settings.
    pub applier: crate::apply::ApplierSettings,
    order: Mutex<CommitOrder>,
    /// Serializes index builds (DDL is rare).
    ddl: Mutex<()>,
    server_uuid: [u8; 16],
    /// Held open for the engine's life: its exclusive lock keeps a second
    /// process off this data directory.
    _dir_lock: std::fs::File,
    pub config: EngineConfig,
    pub stats: Stats,
    /// Bumped by every DDL: prepared statements re-bind when it moved.
    pub ddl_version: AtomicU64,
    /// FLUSH TABLES WITH READ LOCK against every write and DDL (gates.rs).
    pub global_gate: Arc<lockstep_lock::WriteGate>,
    /// Transactions between log reservation and visibility, per epoch.
    in_flight: [AtomicU64; 2],
    /// Serializes checkpoints; holds the start LSN of the newest one.
    checkpoint: Mutex<u64>,
    /// Size of the newest checkpoint file.
    snapshot_bytes: AtomicU64,
    /// Purge horizon, recomputed at most every millisecond: writers trim
    /// version chains with it, and computing it scans all open views.
    horizon: AtomicU64,
    horizon_at: AtomicU64,
    opened: std::time::Instant,
    /// Deleted rows and replaced secondary-index entries waiting until no
    /// view can need them (5.5 purge).
    purge_queue: Mutex<std::collections::VecDeque<PurgeItem>>,
}

/// Work for purge: the row image a committed transaction deleted or
/// replaced at `pk` (None: replaced with the same index keys, so only the
/// old version is to be dropped from the chain).
struct PurgeItem {
    txn: u64,
    table: u32,
    pk: Vec<u8>,
    before: Option<Row>,
}

#[derive(Default)]
pub struct Stats {
    pub commits: AtomicU64,
    pub rollbacks: AtomicU64,
    pub lock_waits: AtomicU64,
}

/// Hash of a lock's identity: table, index and key bytes (the seed carries
/// table and index; the finalizer spreads nearby keys over lock shards).
pub fn lock_key(table: u32, index: usize, key: &[u8]) -> LockKey {
    LockKey(lockstep_types::value::hash_key(
        (table as u64) << 8 | index as u64,
        key,
    ))
}

impl Engine {
    /// Opens the data directory, replaying the log into the tables.
    pub fn open(config: EngineConfig) -> std::result::Result<Arc<Engine>, String> {
        Engine::open_with(config, Arc::new(LocalDurability))
    }

    /// Opens the engine with commits acknowledged once `durability` says
    /// so (a replicated group passes its own).
    pub fn open_with(
        config: EngineConfig,
        durability: Arc<dyn Durability>,
    ) -> std::result::Result<Arc<Engine>, String> {
        std::fs::create_dir_all(&config.datadir).map_err(|e| {
            format!(
                "cannot create data directory {}: {e}",
                config.datadir.display()
            )
        })?;
        let dir_lock = lock_datadir(&config.datadir)?;
        let server_uuid = load_or_create_uuid(&config.datadir)?;
        let log_config = LogConfig {
            dir: config.datadir.join("log"),
            buffer_size: config.log_buffer_size,
            segment_size: config.log_segment_size,
            flush_mode: config.flush_mode,
        };
        let snapshot = crate::checkpoint::load_newest(&config.datadir)?;
        let snapshot_bytes = snapshot.as_ref().map_or(0, |s| {
            let path = config
                .datadir
                .join(crate::checkpoint::file_name(s.start_lsn));
            std::fs::metadata(path).map_or(0, |m| m.len())
        });
        let start_lsn = snapshot.as_ref().map(|s| s.start_lsn).unwrap_or(0);
        let (log, recovered) = Log::open_with(log_config, config.log_storage.clone(), start_lsn)
            .map_err(|e| format!("opening the log: {e}"))?;
        let semisync = Arc::new(SemiSync::new(durability));
        let engine = Engine {
            catalog: Catalog::new(),
            accounts: Accounts::default(),
            account_ddl: tokio::sync::Mutex::new(()),
            txn_sys: TxnSys::new(TxnConfig {
                registry_shards: config.txn_registry_shards,
                throttle_limit: config.throttle_limit,
                ..Default::default()
            }),
            lock_sys: LockSys::new(LockConfig {
                shards: config.lock_shards,
                policy: config.grant_policy,
            }),
            log,
            durability: semisync.clone(),
            semisync,
            applier: Default::default(),
            order: Mutex::new(CommitOrder {
                next_gno: 1,
                next_seq: 1,
                executed: GtidSet::default(),
                history: WritesetHistory::new(1 << 16),
                epoch: 0,
            }),
            ddl: Default::default(),
            server_uuid,
            _dir_lock: dir_lock,
            config,
            stats: Stats::default(),
            ddl_version: AtomicU64::new(0),
            global_gate: Default::default(),
            in_flight: [AtomicU64::new(0), AtomicU64::new(0)],
            checkpoint: Mutex::new(start_lsn),
            snapshot_bytes: AtomicU64::new(snapshot_bytes),
            horizon: AtomicU64::new(0),
            horizon_at: AtomicU64::new(0),
            opened: std::time::Instant::now(),
            purge_queue: Mutex::new(std::collections::VecDeque::new()),
        };
        engine.recover(snapshot, &recovered, start_lsn)?;
        Ok(Arc::new(engine))
    }

    /// Loads the newest checkpoint, replays the log after it and sets the
    /// GTIDs and sequence numbers that commits continue from.
    fn recover(
        &self,
        snapshot: Option<crate::checkpoint::Snapshot>,
        recovered: &lockstep_log::Recovered,
        start_lsn: u64,
    ) -> std::result::Result<(), String> {
        for note in &recovered.notes {
            eprintln!("lockstep: recovery: {note}");
        }
        let mut executed = GtidSet::default();
        let mut next_seq = 1;
        if let Some(mut snap) = snapshot {
            eprintln!(
                "lockstep: recovery: loading {} ({} tables)",
                crate::checkpoint::file_name(snap.start_lsn),
                snap.tables.len()
            );
            executed = std::mem::take(&mut snap.gtids);
            next_seq = snap.next_sequence;
            if snap.next_gno > 1 {
                // Formats before 06 knew only this server's own numbers.
                executed.insert_range(self.server_uuid, 1, snap.next_gno - 1);
            }
            self.load_snapshot(snap);
        }
        for (lsn, payload) in &recovered.records {
            let record =
                TxnRecord::decode(payload).map_err(|e| format!("log record at {lsn}: {e}"))?;
            executed.insert(record.gtid());
            next_seq = next_seq.max(record.sequence_number + 1);
            self.replay(&record);
        }
        {
            let mut order = self.order.lock();
            order.next_gno = executed.last_gno(&self.server_uuid) + 1;
            order.next_seq = next_seq;
            order.executed = executed;
        }
        self.finish_recovery();
        eprintln!(
            "lockstep: recovery: replayed {} transactions ({} bytes of log from lsn {start_lsn} to {})",
            recovered.records.len(),
            recovered.end_lsn.saturating_sub(start_lsn),
            recovered.end_lsn
        );
        Ok(())
    }

    pub fn server_uuid(&self) -> String {
        lockstep_binlog::format_uuid(&self.server_uuid)
    }

    /// GTIDs this node has committed (its own and applied ones), in
    /// MySQL's text form.
    pub fn gtid_executed(&self) -> String {
        self.order.lock().executed.to_string()
    }

    /// Every GTID committed here (gtid_executed as a set).
    pub fn executed_set(&self) -> GtidSet {
        self.order.lock().executed.clone()
    }

    /// The executed set and the log position every one of its records
    /// lies below (taken together: a GTID takes its log space in the same
    /// critical section).
    pub fn executed_with_lsn(&self) -> (GtidSet, lockstep_log::Lsn) {
        let order = self.order.lock();
        (order.executed.clone(), self.log.current_lsn())
    }

    /// Whether `gtid` was committed here.
    pub fn gtid_done(&self, gtid: Gtid) -> bool {
        self.order.lock().executed.contains(gtid)
    }

    pub fn begin(&self, isolation: Isolation) -> Txn {
        Txn::new(isolation)
    }

    /// Transaction throttling (8.3.2): waits in FIFO order for room in the
    /// transaction system. Called before a transaction's first statement.
    pub async fn admit(&self, txn: &mut Txn) {
        if txn.ticket.is_some() {
            return;
        }
        if txn.under_way() {
            // Parked (idle client or lock wait): already in the transaction
            // system, possibly holding locks admitted ones wait for.
            txn.ticket = Some(self.txn_sys.readmit());
            return;
        }
        let mut admission = self.txn_sys.admit();
        let ticket = loop {
            let seen = self.txn_sys.throttle_progress();
            match tokio::time::timeout(THROTTLE_STALL, &mut admission).await {
                Ok(ticket) => break ticket,
                Err(_) => {
                    if let Some(ticket) = admission.force(seen) {
                        break ticket;
                    }
                }
            }
        };
        txn.ticket = Some(ticket);
    }

    /// Gives back the transaction's throttling slot while it cannot use it:
    /// its client is idle between statements of an open transaction, or a
    /// statement sleeps on a row lock. `admit` re-enters without queueing.
    pub fn park(&self, txn: &mut Txn) {
        txn.ticket = None;
    }

    /// START TRANSACTION WITH CONSISTENT SNAPSHOT: take the view now.
    pub fn snapshot_now(&self, txn: &mut Txn) {
        self.ensure_view(txn);
    }

    fn ensure_view(&self, txn: &mut Txn) {
        if txn.view.is_none() {
            txn.view = Some(match txn.spare_view.take() {
                Some(mut v) => {
                    self.txn_sys.refresh_view(&mut v, txn.id);
                    v
                }
                None => self.txn_sys.read_view(txn.id),
            });
        }
    }

    pub(crate) fn ensure_id(&self, txn: &mut Txn) -> u64 {
        match txn.id {
            Some(id) => id,
            None => {
                let id = self.txn_sys.begin_rw();
                txn.id = Some(id);
                id
            }
        }
    }

    /// Takes a row lock (or confirms it is held).
    pub fn lock(&self, txn: &mut Txn, key: LockKey, mode: LockMode) -> Result<()> {
        if let Some(held) = txn.locks.get(&key) {
            if *held == LockMode::Exclusive || mode == LockMode::Shared {
                return Ok(());
            }
        }
        let id = self.ensure_id(txn);
        match self.lock_sys.acquire(id, key, mode) {
            Acquire::Granted => {
                if txn.locks.insert(key, mode).is_none() {
                    txn.lock_order.push(key);
                }
                Ok(())
            }
            Acquire::Wait(wait) => {
                self.stats.lock_waits.fetch_add(1, Ordering::Relaxed);
                txn.pending_lock = Some((key, mode));
                Err(Error::LockWait(wait))
            }
            Acquire::Deadlock => Err(Error::Sql(SqlError::deadlock())),
        }
    }

    /// A row lock as the statement's `lock_wait` says: false when SKIP
    /// LOCKED passes over a row another transaction holds; 3572 for NOWAIT.
    pub fn lock_row(&self, txn: &mut Txn, key: LockKey, mode: LockMode) -> Result<bool> {
        match self.lock(txn, key, mode) {
            Err(Error::LockWait(wait)) if txn.lock_wait != LockWaitPolicy::Wait => {
                self.stats.lock_waits.fetch_sub(1, Ordering::Relaxed);
                match wait.timeout() {
                    // Granted as the request was withdrawn.
                    Ok(()) => {
                        self.lock_granted(txn, key);
                        Ok(true)
                    }
                    Err(e) => {
                        self.lock_abandoned(txn);
                        match (e, txn.lock_wait) {
                            (lockstep_lock::LockError::Deadlock, _) => {
                                Err(Error::Sql(SqlError::deadlock()))
                            }
                            (_, LockWaitPolicy::SkipLocked) => Ok(false),
                            _ => Err(Error::Sql(SqlError::new(
                                lockstep_types::error::Code::LockNowait,
                                "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.",
                            ))),
                        }
                    }
                }
            }
            r => r.map(|()| true),
        }
    }

    /// The awaited lock was granted: it is now held by the transaction.
    pub fn lock_granted(&self, txn: &mut Txn, key: LockKey) {
        if let Some((k, mode)) = txn.pending_lock.take() {
            debug_assert_eq!(k, key, "granted the lock that was waited for");
            if std::mem::take(&mut txn.pending_transient) {
                // An insert intention: it only had to wait its turn.
                let id = txn.id.expect("a transaction that waited has an id");
                self.lock_sys.release_all(id, &[k]);
                return;
            }
            let entry = txn.locks.entry(k).or_insert(mode);
            if mode == LockMode::Exclusive {
                *entry = mode;
            }
            if !txn.lock_order.contains(&k) {
                txn.lock_order.push(k);
            }
        }
    }

    /// The wait was given up (timeout): the request was cancelled.
    pub fn lock_abandoned(&self, txn: &mut Txn) {
        txn.pending_lock = None;
        txn.pending_transient = false;
    }

    /// Consistent (non-locking) read of the row at `key`.
    pub fn read(&self, txn: &mut Txn, table: &Table, key: &[u8]) -> Option<Row> {
        self.ensure_view(txn);
        let record = table.record(key)?;
        record.read(|w| txn.sees(w))
    }

    /// Locking read: locks the row, then returns its newest version. Under
    /// Repeatable Read a missing row locks the gap it would be in, so it
    /// stays missing until the transaction ends.
    pub fn read_locked(
        &self,
        txn: &mut Txn,
        table: &Table,
        key: &[u8],
        mode: LockMode,
    ) -> Result<Option<Row>> {
        loop {
            if let Some(record) = table.record(key) {
                if !self.lock_row(txn, lock_key(table.id, 0, key), mode)? {
                    return Ok(None);
                }
                return Ok(record.latest().and_then(|v| v.row));
            }
            if !txn.isolation.gap_locking() {
                return Ok(None);
            }
            let from = Bound::Included(key);
            let next = table.first(from, Bound::Unbounded);
            if self.lock_gap(txn, table.id, 0, table, from, next.as_deref())? {
                return Ok(None);
            }
        }
    }

    /// Visits rows of the clustered index in [lower, upper] (encoded keys).
    /// With `locking`, each row is locked and its newest version returned
    /// (under Repeatable Read with next-key locks, see `gap`).
    /// The visitor returns false to stop.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_primary(
        &self,
        txn: &mut Txn,
        table: &Table,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        locking: Option<LockMode>,
        visit: &mut dyn FnMut(&[u8], Row) -> Result<bool>,
    ) -> Result<()> {
        self.ensure_view(txn);
        let Some(mode) = locking else {
            // A consistent read never waits: walk the list under one guard.
            return table.scan(lower, upper, reverse, |key, record| {
                match record.read(|w| txn.sees(w)) {
                    Some(row) => visit(key, row),
                    None => Ok(true),
                }
            });
        };
        let mut cursor = self.cursor(txn, table.id, 0, table, lower, upper, reverse, locking)?;
        'pass: loop {
            let start = cursor.start();
            for entry in table.range(cursor.from(&start), cursor.end(), reverse) {
                let (key, record) = (entry.key(), entry.value());
                match cursor.enter(self, txn, table, key)? {
                    Step::Visit => {}
                    Step::Restart => continue 'pass,
                    Step::Stop => return Ok(()),
                }
                // Without gap locks, rows that exist for nobody are skipped;
                // with them they are locked too: their key is part of the
                // range the transaction has read.
                if !cursor.next_key && self.settled_out(txn, record, |row| row.is_some()) {
                    continue;
                }
                if !self.lock_row(txn, lock_key(table.id, 0, key), mode)? {
                    continue;
                }
                if let Some(row) = record.latest().and_then(|v| v.row) {
                    if !visit(key, row)? {
                        return Ok(());
                    }
                }
            }
            if cursor.finish(self, txn, table)? {
                return Ok(());
            }
        }
    }

    /// Whether a locking read without gap locks may pass `record` without
    /// locking it: its newest version does not `qualify` (deleted, or moved
    /// off the key being read) and is settled, written by this transaction
    /// or a finished one. A version of a running transaction may still roll
    /// back, so the reader waits for its lock and looks again (as InnoDB
    /// locks a delete-marked record before skipping it); passing it let an
    /// FK cascade miss a child whose delete was then undone.
    fn settled_out(
        &self,
        txn: &Txn,
        record: &lockstep_tables::Record,
        qualifies: impl Fn(Option<&Row>) -> bool,
    ) -> bool {
        let Some(latest) = record.latest() else {
            return true;
        };
        !qualifies(latest.row.as_ref())
            && (Some(latest.txn) == txn.id || !self.txn_sys.is_active(latest.txn))
    }

    /// Visits rows through secondary index `index` with index keys in
    /// [lower, upper]. Entries are checked against the row version the
    /// reader sees, so stale entries of older versions are skipped.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_secondary(
        &self,
        txn: &mut Txn,
        table: &Table,
        schema: &Schema,
        index: usize,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        locking: Option<LockMode>,
        visit: &mut dyn FnMut(&[u8], Row) -> Result<bool>,
    ) -> Result<()> {
        self.ensure_view(txn);
        let ncols = schema.def.indexes[index].columns.len();
        let map = &schema.secondary[index - 1];
        // Bounds are over whole entries (index key ++ primary key); the
        // caller builds them from key prefixes.
        let mut cursor = self.cursor(txn, table.id, index, map, lower, upper, reverse, locking)?;
        'pass: loop {
            let start = cursor.start();
            let range = map.range::<[u8], _>((cursor.from(&start), cursor.end()));
            let entries: Box<dyn Iterator<Item = _>> = if reverse {
                Box::new(range.rev())
            } else {
                Box::new(range)
            };
            for entry in entries {
                let bytes = entry.key();
                if locking.is_some() {
                    match cursor.enter(self, txn, map, bytes)? {
                        Step::Visit => {}
                        Step::Restart => continue 'pass,
                        Step::Stop => return Ok(()),
                    }
                }
                let Some(split) = encoded_prefix_len(bytes, ncols) else {
                    continue;
                };
                let (index_key, pk) = bytes.split_at(split);
                let Some(record) = table.record(pk) else {
                    continue;
                };
                let row = match locking {
                    None => record.read(|w| txn.sees(w)),
                    Some(mode) => {
                        let qualifies = |row: Option<&Row>| {
                            row.is_some_and(|r| schema.def.index_key(index, r) == index_key)
                        };
                        if !cursor.next_key && self.settled_out(txn, &record, qualifies) {
                            continue;
                        }
                        if !self.lock_row(txn, lock_key(table.id, 0, pk), mode)? {
                            continue;
                        }
                        record.latest().and_then(|v| v.row)
                    }
                };
                let Some(row) = row else { continue };
                if schema.def.index_key(index, &row) != index_key {
                    continue;
                }
                if !visit(pk, row)? {
                    return Ok(());
                }
            }
            if cursor.finish(self, txn, map)? {
                return Ok(());
            }
        }
    }

    /// Inserts `row` (already converted to column types, defaults filled).
    /// Returns the primary key, or the duplicate it ran into.
    pub fn insert(
        &self,
        txn: &mut Txn,
        table: &Arc<Table>,
        schema: &Schema,
        row: Vec<Value>,
    ) -> Result<std::result::Result<Vec<u8>, Duplicate>> {
        let def = &schema.def;
        let pk = def.index_key(0, &row);
        self.lock(txn, lock_key(table.id, 0, &pk), LockMode::Exclusive)?;
        for (i, index) in def.indexes.iter().enumerate().skip(1) {
            if index.unique && !def.unique_key_has_null(i, &row) {
                self.lock(
                    txn,
                    lock_key(table.id, i, &def.index_key(i, &row)),
                    LockMode::Exclusive,
                )?;
            }
        }
        if let Some(existing) = table
            .record(&pk)
            .and_then(|r| r.latest())
            .and_then(|v| v.row)
        {
            return Ok(Err(self.duplicate(def, 0, pk, existing)));
        }
        for i in 1..def.indexes.len() {
            if def.indexes[i].unique && !def.unique_key_has_null(i, &row) {
                if let Some((other_pk, other)) = self.unique_holder(table, schema, i, &row, None) {
                    return Ok(Err(self.duplicate(def, i, other_pk, other)));
                }
            }
        }
        let id = self.ensure_id(txn);
        let stored = Row::new(&row);
        // A key no record holds yet splits a gap: after adding the entry,
        // wait for any gap lock on it (insert intention, see `gap`).
        let fresh = table.record(&pk).is_none_or(|r| r.latest().is_none());
        // Each secondary entry is built once: looked up (is it new?), then
        // moved into its index after the version.
        let secondary: Vec<(Vec<u8>, bool)> = (1..def.indexes.len())
            .map(|i| {
                let entry = table_data(|| def.secondary_entry(i, &row, &pk));
                let fresh = !schema.secondary[i - 1].contains_key(entry.as_slice());
                (entry, fresh)
            })
            .collect();
        self.write_version(
            txn,
            table,
            &pk,
            Version {
                txn: id,
                row: Some(stored),
            },
        );
        let added: Vec<_> = secondary
            .into_iter()
            .zip(schema.secondary.iter())
            .enumerate()
            .filter_map(|(i, ((entry, fresh), index))| {
                let e = table_data(|| index.insert(key_of(entry), ()));
                fresh.then_some((i + 1, e))
            })
            .collect();
        if fresh {
            self.insert_intention(txn, table.id, 0, table.as_ref(), &pk)?;
        }
        for (i, entry) in &added {
            self.insert_intention(txn, table.id, *i, &schema.secondary[i - 1], entry.key())?;
        }
        if !table.temporary {
            txn.writeset.push(lock_key(table.id, 0, &pk).0);
            txn.events.push(RowEvent::Insert {
                table: table.id,
                row: &row,
            });
        }
        Ok(Ok(pk))
    }

    /// Replaces the row at `pk` (locked by the caller's read) with `new`.
    pub fn update(
        &self,
        txn: &mut Txn,
        table: &Arc<Table>,
        schema: &Schema,
        pk: &[u8],
        old: &[Value],
        new: Vec<Value>,
    ) -> Result<std::result::Result<(), Duplicate>> {
        let def = &schema.def;
        if !def.key_columns_identical(0, old, &new) && def.index_key(0, &new) != pk {
            // A primary key change is a delete and an insert (as InnoDB).
            self.delete(txn, table, schema, pk, old)?;
            return Ok(self.insert(txn, table, schema, new)?.map(|_| ()));
        }
        self.lock(txn, lock_key(table.id, 0, pk), LockMode::Exclusive)?;
        if let Err(dup) = self.lock_changed_unique_keys(txn, table, schema, pk, old, &new)? {
            return Ok(Err(dup));
        }
        let id = self.ensure_id(txn);
        self.write_version(
            txn,
            table,
            pk,
            Version {
                txn: id,
                row: Some(Row::new(&new)),
            },
        );
        let (moved, fresh) = self.add_moved_entries(schema, pk, old, &new);
        // The old version (and its old index entries) go once no view
        // needs them; left alone it would stay until the row's next write,
        // doubling the memory of every updated row.
        let before = moved.then(|| Row::new(old));
        txn.purge.push((table.id, pk.to_vec(), before));
        for (idx, entry) in &fresh {
            self.insert_intention(txn, table.id, *idx, &schema.secondary[idx - 1], entry)?;
        }
        if table.temporary {
            // Never logged: a temporary table is gone after a restart.
            return Ok(Ok(()));
        }
        txn.writeset.push(lock_key(table.id, 0, pk).0);
        self.log_update(txn, def, table.id, old, &new);
        Ok(Ok(()))
    }

    /// Locks the old and new keys of each unique index the update changes;
    /// a duplicate when another row holds a new key.
    fn lock_changed_unique_keys(
        &self,
        txn: &mut Txn,
        table: &Arc<Table>,
        schema: &Schema,
        pk: &[u8],
        old: &[Value],
        new: &[Value],
    ) -> Result<std::result::Result<(), Duplicate>> {
        let def = &schema.def;
        for i in 1..def.indexes.len() {
            if !def.indexes[i].unique || def.key_columns_identical(i, old, new) {
                continue;
            }
            let (old_key, new_key) = (def.index_key(i, old), def.index_key(i, new));
            if old_key == new_key {
                continue;
            }
            self.lock(txn, lock_key(table.id, i, &old_key), LockMode::Exclusive)?;
            if !def.unique_key_has_null(i, new) {
                self.lock(txn, lock_key(table.id, i, &new_key), LockMode::Exclusive)?;
                if let Some((other_pk, other)) = self.unique_holder(table, schema, i, new, Some(pk))
                {
                    return Ok(Err(self.duplicate(def, i, other_pk, other)));
                }
            }
        }
        Ok(Ok(()))
    }

    /// Adds the secondary entries of the new row whose keys moved; returns
    /// whether any moved, and the entries that were not there before.
    fn add_moved_entries(
        &self,
        schema: &Schema,
        pk: &[u8],
        old: &[Value],
        new: &[Value],
    ) -> (bool, Vec<(usize, Vec<u8>)>) {
        let def = &schema.def;
        let (mut moved, mut fresh) = (false, Vec::new());
        for (i, index) in schema.secondary.iter().enumerate() {
            let idx = i + 1;
            if def.key_columns_identical(idx, old, new) {
                continue;
            }
            let entry = def.secondary_entry(idx, new, pk);
            if entry[..entry.len() - pk.len()] != def.index_key(idx, old) {
                moved = true;
                if !index.contains_key(entry.as_slice()) {
                    table_data(|| index.insert(Key::from_slice(&entry), ()));
                    fresh.push((idx, entry));
                }
            }
        }
        debug_assert!(fresh.is_empty() || moved);
        (moved, fresh)
    }

    /// The update's row event: the changed columns by key under a minimal
    /// row image, else the whole row before and after.
    fn log_update(&self, txn: &mut Txn, def: &TableDef, table: u32, old: &[Value], new: &[Value]) {
        if self.config.minimal_row_image {
            let set: Vec<(u16, Value)> = new
                .iter()
                .zip(old.iter())
                .enumerate()
                .filter(|(_, (a, b))| {
                    a.sort_cmp(b) != std::cmp::Ordering::Equal || a.is_null() != b.is_null()
                })
                .map(|(i, (a, _))| (i as u16, a.clone()))
                .collect();
            txn.events.push(RowEvent::UpdateRow {
                table,
                key: &primary_values(def, old),
                set: &set,
            });
        } else {
            txn.events.push(RowEvent::Update {
                table,
                before: old,
                after: new,
            });
        }
    }

    pub fn delete(
        &self,
        txn: &mut Txn,
        table: &Arc<Table>,
        schema: &Schema,
        pk: &[u8],
        old: &[Value],
    ) -> Result<()> {
        let def = &schema.def;
        self.lock(txn, lock_key(table.id, 0, pk), LockMode::Exclusive)?;
        for (i, index) in def.indexes.iter().enumerate().skip(1) {
            if index.unique && !def.unique_key_has_null(i, old) {
                self.lock(
                    txn,
                    lock_key(table.id, i, &def.index_key(i, old)),
                    LockMode::Exclusive,
                )?;
            }
        }
        let id = self.ensure_id(txn);
        self.write_version(txn, table, pk, Version { txn: id, row: None });
        txn.purge.push((table.id, pk.to_vec(), Some(Row::new(old))));
        if table.temporary {
            return Ok(());
        }
        txn.writeset.push(lock_key(table.id, 0, pk).0);
        if self.config.minimal_row_image {
            txn.events.push(RowEvent::DeleteRow {
                table: table.id,
                key: &primary_values(def, old),
            });
        } else {
            txn.events.push(RowEvent::Delete {
                table: table.id,
                before: old,
            });
        }
        Ok(())
    }

    fn write_version(&self, txn: &mut Txn, table: &Arc<Table>, pk: &[u8], version: Version) {
        let prior_own = table.push_version(pk, version, self.purge_horizon());
        txn.undo.push(Undo {
            table: table.clone(),
            key: pk.to_vec(),
            prior_own,
        });
    }

    /// Runs purge over queued items whose writer every view sees: removes
    /// deleted records and secondary entries no version holds any more.
    /// Returns how many items were processed.
    pub fn purge(&self, max_items: usize) -> usize {
        let horizon = self.txn_sys.purge_horizon();
        let mut done = 0;
        while done < max_items {
            let item = {
                let mut q = self.purge_queue.lock();
                match q.front() {
                    Some(i) if i.txn < horizon => q.pop_front(),
                    _ => None,
                }
            };
            let Some(item) = item else { break };
            done += 1;
            let Some(table) = self.catalog.table_by_id(item.table) else {
                continue;
            };
            let Some(before) = &item.before else {
                table.trim_record(&item.pk, horizon);
                continue;
            };
            let schema = table.schema();
            let def = &schema.def;
            // Removing an entry merges its gap into the next one, so an
            // entry whose gap is locked stays until the lock is gone. Most
            // items are updates whose record stays: one lookup, no gap check.
            let mut blocked = false;
            let images = match table.purge_check(&item.pk, horizon) {
                PurgeCheck::Live(images) => images,
                PurgeCheck::Missing => Vec::new(),
                PurgeCheck::Removable => {
                    blocked = !self.remove_entry_unless_gap_locked(table.id, 0, &item.pk, || {
                        table.purge_record(&item.pk, horizon);
                    });
                    // A writer may have put a fresh record there meanwhile.
                    table
                        .record(&item.pk)
                        .map(|r| r.images())
                        .unwrap_or_default()
                }
            };
            // One buffer for the keys of the images compared, and the entry
            // built once: its leading bytes are the index key.
            let mut other = Vec::new();
            let mut holds_key = |row: &Row, idx: usize, key: &[u8]| {
                other.clear();
                def.index_key_into(idx, row, &mut other);
                other == key
            };
            for (i, index) in schema.secondary.iter().enumerate() {
                if blocked {
                    break;
                }
                let idx = i + 1;
                let entry = def.secondary_entry(idx, before, &item.pk);
                let key = &entry[..entry.len() - item.pk.len()];
                if images.iter().any(|row| holds_key(row, idx, key)) {
                    continue;
                }
                blocked = !self.remove_entry_unless_gap_locked(table.id, idx, &entry, || {
                    index.remove(entry.as_slice());
                    // A writer may have given the row this key again
                    // meanwhile (it adds its entry after its version).
                    let again = table
                        .record(&item.pk)
                        .map(|r| r.images())
                        .unwrap_or_default();
                    if again.iter().any(|row| holds_key(row, idx, key)) {
                        index.insert(Key::from_slice(&entry), ());
                    }
                });
            }
            if blocked {
                self.purge_queue.lock().push_back(item);
            }
        }
        done
    }

    /// The purge horizon, possibly up to a millisecond old (older is safe:
    /// it only keeps more versions).
    fn purge_horizon(&self) -> u64 {
        let now = self.opened.elapsed().as_micros() as u64;
        let at = self.horizon_at.load(Ordering::Relaxed);
        if now.saturating_sub(at) >= 1000
            && self
                .horizon_at
                .compare_exchange(at, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            self.horizon
                .store(self.txn_sys.purge_horizon(), Ordering::Release);
        }
        self.horizon.load(Ordering::Acquire)
    }

    /// The live row (newest version) holding unique key `index` of `row`,
    /// other than the row at `except`.
    fn unique_holder(
        &self,
        table: &Table,
        schema: &Schema,
        index: usize,
        row: &[Value],
        except: Option<&[u8]>,
    ) -> Option<(Vec<u8>, Row)> {
        let def = &schema.def;
        let key = def.index_key(index, row);
        let upper = successor_prefix(&key);
        let map = &schema.secondary[index - 1];
        for entry in map.range::<[u8], _>((
            Bound::Included(key.as_slice()),
            Bound::Excluded(upper.as_slice()),
        )) {
            let pk = &entry.key()[key.len()..];
            if Some(pk) == except {
                continue;
            }
            if let Some(latest) = table
                .record(pk)
                .and_then(|r| r.latest())
                .and_then(|v| v.row)
            {
                if def.index_key(index, &latest) == key {
                    return Some((pk.to_vec(), latest));
                }
            }
        }
        None
    }

    fn duplicate(&self, def: &TableDef, index: usize, primary_key: Vec<u8>, row: Row) -> Duplicate {
        let key_text = def.indexes[index]
            .columns
            .iter()
            .map(|&c| row.get(c).to_string())
            .collect::<Vec<_>>()
            .join("-");
        Duplicate {
            index: format!("{}.{}", def.name, def.indexes[index].name),
            key_text,
            primary_key,
            row: row.to_values(),
        }
    }

    /// Writes a reserved commit record and waits until `durability`
    /// confirms it. Ok(Some(error)): it commits, and the client is told
    /// that it was not confirmed beyond this node.
    async fn write_and_confirm(
        &self,
        reservation: lockstep_log::Reservation<'_>,
        bytes: &[u8],
        gno: u64,
    ) -> std::result::Result<Option<SqlError>, SqlError> {
        let end_lsn = reservation
            .write(bytes)
            .map_err(|e| log_error(&self.log, e, true))?;
        let point = CommitPoint { end_lsn, gno };
        match self.durability.wait(&self.log, point).await {
            Ok(()) => Ok(None),
            Err(DurabilityError::Unacknowledged(why)) => Ok(Some(SqlError::new(
                Code::ErrorDuringCommit,
                format!("Got error during COMMIT: GTID {}:{gno} {why}", self.server_uuid()),
            ))),
            Err(DurabilityError::Log(e)) => Err(log_error(&self.log, e, true)),
            Err(DurabilityError::Unconfirmed(why)) => Err(SqlError::new(
                Code::ErrorDuringCommit,
                format!("Got error during COMMIT: the commit record of GTID {}:{gno} was not confirmed ({why})", self.server_uuid()),
            )),
        }
    }

    /// Undoes what the transaction did after `sp` (ROLLBACK TO SAVEPOINT);
    /// its locks stay, as in InnoDB.
    pub fn rollback_to(&self, txn: &mut Txn, sp: crate::txn::Savepoint) {
        debug_assert!(txn.holds(&sp), "a savepoint of another transaction");
        let undo = txn.take_undo_since(sp.mark);
        undo_changes(txn.id, undo);
    }

    /// Undoes the current statement's changes; its locks stay (InnoDB
    /// keeps them too).
    pub fn rollback_statement(&self, txn: &mut Txn) {
        let undo = txn.take_statement_undo();
        undo_changes(txn.id, undo);
    }

    /// Commits: writes the log record, waits until it is durable, then
    /// makes the changes visible and releases locks. Nothing is
    /// acknowledged before its record is on disk.
    pub async fn commit(&self, txn: &mut Txn) -> std::result::Result<(), SqlError> {
        self.commit_ordered(txn, None).await
    }

    /// `commit`, keeping an applier's order through `order`: it is told
    /// once the log space is reserved (the next commit may reserve its own
    /// and share this one's fsync) and waits for its turn to become
    /// visible.
    pub(crate) async fn commit_ordered(
        &self,
        txn: &mut Txn,
        mut order: Option<&mut dyn crate::apply::ApplyOrder>,
    ) -> std::result::Result<(), SqlError> {
        let Some(id) = txn.id else {
            self.end(txn);
            return Ok(());
        };
        if txn.events.is_empty() {
            self.txn_sys.finish(id);
            self.end(txn);
            return Ok(());
        }
        let purge: Vec<PurgeItem> = std::mem::take(&mut txn.purge)
            .into_iter()
            .map(|(table, pk, before)| PurgeItem {
                txn: id,
                table,
                pk,
                before,
            })
            .collect();
        let (reservation, bytes, gno, _in_flight) = self.reserve_commit(txn)?;
        if let Some(o) = order.as_deref_mut() {
            o.reserved();
        }
        let unconfirmed = match self.write_and_confirm(reservation, &bytes, gno).await {
            Ok(u) => u,
            Err(e) => {
                // The record may or may not be on disk, and the log accepts
                // no more writes: roll back in memory (nobody can commit on
                // top of it any more) and let recovery at restart decide.
                self.rollback(txn);
                return Err(e);
            }
        };
        if let Some(o) = order.as_deref_mut() {
            o.visible_turn().await;
        }
        self.txn_sys.finish(id);
        self.end(txn);
        if let Some(o) = order {
            o.visible();
        }
        if !purge.is_empty() {
            self.purge_queue.lock().extend(purge);
        }
        self.stats.commits.fetch_add(1, Ordering::Relaxed);
        unconfirmed.map_or(Ok(()), Err)
    }

    /// Takes the commit's GTID, order numbers and log space; on failure
    /// the transaction is rolled back.
    #[allow(clippy::type_complexity)]
    fn reserve_commit(
        &self,
        txn: &mut Txn,
    ) -> std::result::Result<(lockstep_log::Reservation<'_>, Vec<u8>, u64, InFlight<'_>), SqlError>
    {
        if let Err(why) = self.semisync.admit() {
            self.rollback(txn);
            return Err(semisync_refused(&why));
        }
        let applied = txn.gtid.take();
        let uuid = applied.map_or(self.server_uuid, |g| g.server_uuid);
        let mut bytes = std::mem::take(&mut txn.events).into_record(uuid, now_us());
        let reserved = {
            let mut order = self.order.lock();
            if applied.is_some_and(|g| order.executed.contains(g)) {
                // Applied meanwhile by someone else: this copy is not needed.
                drop(order);
                self.rollback(txn);
                return Err(already_applied(applied));
            }
            // Reserve first: a refused write (disk full, failed log) takes
            // no GTID and leaves no trace in the writeset history.
            self.log.reserve(bytes.len()).map(|r| {
                let gtid = order.take_gtid(self.server_uuid, applied);
                // The commit order here numbers last_committed and
                // sequence_number, whatever the GTID's source.
                let seq = order.next_sequence();
                let last_committed = order.history.commit(&txn.writeset, seq);
                TxnRecord::patch_order(&mut bytes, gtid.gno, last_committed, seq);
                (r, gtid.gno, self.enter_flight(&order))
            })
        };
        match reserved {
            Ok((r, gno, in_flight)) => Ok((r, bytes, gno, in_flight)),
            Err(e) => {
                // Nothing of it reached the log: undo it in memory and go on.
                self.rollback(txn);
                Err(log_error(&self.log, e, false))
            }
        }
    }

    pub fn rollback(&self, txn: &mut Txn) {
        let undo = std::mem::take(&mut txn.undo);
        undo_changes(txn.id, undo);
        if let Some(id) = txn.id {
            self.txn_sys.finish(id);
            self.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
        }
        self.end(txn);
    }

    fn end(&self, txn: &mut Txn) {
        if let Some(id) = txn.id {
            self.lock_sys.release_all(id, &txn.lock_order);
        }
        Engine::release_tables(txn);
        txn.renew();
    }

    // ---- DDL: logged and durable before it takes effect ----

    fn enter_flight(&self, order: &CommitOrder) -> InFlight<'_> {
        let counter = &self.in_flight[order.epoch];
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight { counter }
    }

    /// Logs a DDL event and waits until it is durable. The returned guard
    /// keeps it "in flight" for checkpoints until the caller has applied it.
    pub(crate) async fn log_ddl(
        &self,
        event: Event,
    ) -> std::result::Result<InFlight<'_>, SqlError> {
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        self.log_events(vec![event]).await
    }

    /// Logs events as one record and waits until it is durable.
    pub(crate) async fn log_events(
        &self,
        events: Vec<Event>,
    ) -> std::result::Result<InFlight<'_>, SqlError> {
        self.log_events_as(events, None).await
    }

    /// `log_events`, under the GTID of another source when `applied`.
    pub(crate) async fn log_events_as(
        &self,
        events: Vec<Event>,
        applied: Option<Gtid>,
    ) -> std::result::Result<InFlight<'_>, SqlError> {
        let record = TxnRecord {
            version: FORMAT_VERSION,
            server_uuid: applied.map_or(self.server_uuid, |g| g.server_uuid),
            gno: 0,
            last_committed: 0,
            sequence_number: 0,
            timestamp_us: now_us(),
            events,
        };
        let mut bytes = record.encode();
        self.semisync
            .admit()
            .map_err(|why| semisync_refused(&why))?;
        let (reservation, gno, in_flight) = {
            let mut order = self.order.lock();
            if applied.is_some_and(|g| order.executed.contains(g)) {
                return Err(already_applied(applied));
            }
            let r = self
                .log
                .reserve(bytes.len())
                .map_err(|e| log_error(&self.log, e, false))?;
            let gtid = order.take_gtid(self.server_uuid, applied);
            let seq = order.next_sequence();
            // DDL depends on everything before it, and everything after
            // depends on it: a barrier for parallel replay, as in MySQL.
            TxnRecord::patch_order(&mut bytes, gtid.gno, seq - 1, seq);
            order.history.barrier(seq);
            (r, gtid.gno, self.enter_flight(&order))
        };
        // DDL that was logged takes effect even when semisync timed out
        // (the error log and Rpl_semi_sync_source_no_tx tell).
        self.write_and_confirm(reservation, &bytes, gno).await?;
        Ok(in_flight)
    }

    /// Changes accounts: `decide` sees the current accounts (no other
    /// change runs meanwhile) and returns the changes, which are logged as
    /// one durable record and then applied. Returns how many there were.
    pub async fn change_accounts<F>(&self, decide: F) -> std::result::Result<usize, SqlError>
    where
        F: FnOnce(&Accounts) -> std::result::Result<Vec<AccountChange>, SqlError>,
    {
        let _serial = self.account_ddl.lock().await;
        let changes = decide(&self.accounts)?;
        if changes.is_empty() {
            return Ok(0);
        }
        let events = changes
            .iter()
            .map(|c| match c {
                AccountChange::Put(account) => Event::PutAccount {
                    account: account.clone(),
                },
                AccountChange::Drop { user, host } => Event::DropAccount {
                    user: user.clone(),
                    host: host.clone(),
                },
                AccountChange::Roles { user, host, roles } => Event::PutRoles {
                    user: user.clone(),
                    host: host.clone(),
                    roles: roles.clone(),
                },
            })
            .collect();
        let _in_flight = self.log_events(events).await?;
        let n = changes.len();
        for c in changes {
            match c {
                AccountChange::Put(account) => self.accounts.put(account),
                AccountChange::Drop { user, host } => self.accounts.remove(&user, &host),
                AccountChange::Roles { user, host, roles } => {
                    self.accounts.put_roles((user, host), roles)
                }
            }
        }
        Ok(n)
    }

    pub async fn create_database(
        &self,
        name: &str,
        if_not_exists: bool,
    ) -> std::result::Result<bool, SqlError> {
        check_name(NameKind::Database, name)?;
        // A system schema always exists: it cannot be created beside it.
        if self.catalog.database_exists(name) || crate::catalog::is_system_schema(name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(SqlError::new(
                    Code::DbCreateExists,
                    format!("Can't create database '{name}'; database exists"),
                ))
            };
        }
        let _in_flight = self
            .log_ddl(Event::CreateDatabase { name: name.into() })
            .await?;
        self.catalog.add_database(name);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    pub async fn drop_database(
        &self,
        name: &str,
        if_exists: bool,
    ) -> std::result::Result<usize, SqlError> {
        if !self.catalog.database_exists(name) {
            return if if_exists {
                Ok(0)
            } else {
                Err(SqlError::new(
                    Code::DbDropExists,
                    format!("Can't drop database '{name}'; database doesn't exist"),
                ))
            };
        }
        let _in_flight = self
            .log_ddl(Event::DropDatabase { name: name.into() })
            .await?;
        let n = self.catalog.remove_database(name).len();
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(n)
    }

    pub async fn create_table(&self, def: TableDef) -> std::result::Result<Arc<Table>, SqlError> {
        let def = self.prepare_create(def)?;
        let _in_flight = self
            .log_ddl(Event::CreateTable { def: def.clone() })
            .await?;
        let t = self.catalog.add_table(def);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(t)
    }

    /// Checks a new table's names and gives it an id.
    pub(crate) fn prepare_create(
        &self,
        mut def: TableDef,
    ) -> std::result::Result<TableDef, SqlError> {
        check_name(NameKind::Table, &def.name)?;
        for c in &def.columns {
            check_name(NameKind::Column, &c.name)?;
        }
        for ix in &def.indexes {
            check_name(NameKind::Index, &ix.name)?;
        }
        let clash = self.catalog.table(&def.database, &def.name).is_some()
            || self.catalog.view(&def.database, &def.name).is_some();
        if clash {
            return Err(SqlError::new(
                Code::TableExists,
                format!("Table '{}' already exists", def.name),
            ));
        }
        def.id = self.catalog.allocate_table_id();
        Ok(def)
    }

    pub async fn drop_table(&self, table: &Table) -> std::result::Result<(), SqlError> {
        let _in_flight = self.log_ddl(Event::DropTable { table: table.id }).await?;
        self.catalog.remove_table(table.id);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    pub async fn truncate_table(&self, table: &Table) -> std::result::Result<(), SqlError> {
        let _in_flight = self.log_ddl(Event::Truncate { table: table.id }).await?;
        table.clear();
        Ok(())
    }

    pub async fn create_index(
        &self,
        table: &Table,
        index: IndexDef,
    ) -> std::result::Result<(), SqlError> {
        check_name(NameKind::Index, &index.name)?;
        {
            let def = table.def();
            if def
                .indexes
                .iter()
                .any(|i| i.name.eq_ignore_ascii_case(&index.name))
            {
                return Err(SqlError::new(
                    Code::DupKeyName,
                    format!("Duplicate key name '{}'", index.name),
                ));
            }
        }
        self.check_unique_buildable(table, &index)?;
        // A temporary table's changes are never logged.
        let _in_flight = match table.temporary {
            true => None,
            false => Some(
                self.log_ddl(Event::CreateIndex {
                    table: table.id,
                    index: index.clone(),
                })
                .await?,
            ),
        };
        let _serial = self.ddl.lock();
        add_index(table, index);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn check_unique_buildable(
        &self,
        table: &Table,
        index: &IndexDef,
    ) -> std::result::Result<(), SqlError> {
        if !index.unique {
            return Ok(());
        }
        let mut seen = std::collections::HashSet::new();
        for entry in table.range(Bound::Unbounded, Bound::Unbounded, false) {
            if let Some(row) = entry.value().latest().and_then(|v| v.row) {
                let row = row.to_values();
                if index.columns.iter().any(|&c| row[c].is_null()) {
                    continue;
                }
                let mut key = Vec::new();
                let def = table.def();
                for &c in &index.columns {
                    lockstep_tables::schema::encode_column_key(
                        &row[c],
                        def.columns[c].data_type,
                        &mut key,
                    );
                }
                if !seen.insert(key) {
                    let text = index
                        .columns
                        .iter()
                        .map(|&c| row[c].to_string())
                        .collect::<Vec<_>>()
                        .join("-");
                    return Err(SqlError::dup_entry(
                        &text,
                        &format!("{}.{}", table.def().name, index.name),
                    ));
                }
            }
        }
        Ok(())
    }

    pub async fn drop_index(&self, table: &Table, name: &str) -> std::result::Result<(), SqlError> {
        let def = table.def();
        if !def
            .indexes
            .iter()
            .skip(1)
            .any(|i| i.name.eq_ignore_ascii_case(name))
        {
            return Err(SqlError::new(
                Code::CantDropFieldOrKey,
                format!("Can't DROP '{name}'; check that column/key exists"),
            ));
        }
        let _in_flight = match table.temporary {
            true => None,
            false => Some(
                self.log_ddl(Event::DropIndex {
                    table: table.id,
                    name: name.into(),
                })
                .await?,
            ),
        };
        let _serial = self.ddl.lock();
        remove_index(table, name);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    // ---- recovery ----

    /// Applies one logged transaction to the tables. Row events carry
    /// full images and are applied by primary key, so replaying a record
    /// whose effects are already present changes nothing (5.15).
    fn replay(&self, record: &TxnRecord) {
        for event in &record.events {
            match event {
                Event::Insert { table, row } => {
                    if let Some(t) = self.catalog.table_by_id(*table) {
                        let key = t.def().index_key(0, row);
                        t.load_row(key, Some(Row::new(row)));
                    }
                }
                Event::Update {
                    table,
                    before,
                    after,
                } => {
                    if let Some(t) = self.catalog.table_by_id(*table) {
                        let def = t.def();
                        let (old, new) = (def.index_key(0, before), def.index_key(0, after));
                        if old != new {
                            t.remove_record(&old);
                        }
                        t.load_row(new, Some(Row::new(after)));
                    }
                }
                Event::Delete { table, before } => {
                    if let Some(t) = self.catalog.table_by_id(*table) {
                        let key = t.def().index_key(0, before);
                        t.remove_record(&key);
                    }
                }
                Event::UpdateRow { table, key, set } => {
                    if let Some(t) = self.catalog.table_by_id(*table) {
                        let def = t.def();
                        let old_key = primary_key_of(&def, key);
                        if let Some(mut row) = t
                            .record(&old_key)
                            .and_then(|r| r.latest())
                            .and_then(|v| v.row)
                            .map(|r| r.to_values())
                        {
                            for (c, v) in set {
                                if let Some(slot) = row.get_mut(*c as usize) {
                                    *slot = v.clone();
                                }
                            }
                            let new_key = def.index_key(0, &row);
                            if new_key != old_key {
                                t.remove_record(&old_key);
                            }
                            t.load_row(new_key, Some(Row::new(&row)));
                        }
                    }
                }
                Event::DeleteRow { table, key } => {
                    if let Some(t) = self.catalog.table_by_id(*table) {
                        t.remove_record(&primary_key_of(&t.def(), key));
                    }
                }
                ddl => self.replay_ddl_of(record, ddl),
            }
        }
    }

    /// `replay_ddl` of an event of `record`: a rebuild computes the
    /// generated columns its record gives the rebuilt table.
    pub(crate) fn replay_ddl_of(&self, record: &TxnRecord, event: &Event) {
        match event {
            Event::AlterTable {
                table,
                def,
                sources,
            } => {
                let generated = crate::generated::logged_generated(record, def.id);
                self.replay_alter(*table, def, sources, generated)
            }
            other => self.replay_ddl(other),
        }
    }

    /// Applies a DDL or account event to the catalog (recovery, and
    /// `apply` once the event is logged).
    pub(crate) fn replay_ddl(&self, event: &Event) {
        match event {
            Event::CreateDatabase { name } => self.catalog.add_database(name),
            Event::DropDatabase { name } => {
                self.catalog.remove_database(name);
            }
            Event::CreateTable { def } => {
                if self.catalog.table_by_id(def.id).is_none() {
                    self.catalog.add_table(def.clone());
                }
            }
            Event::DropTable { table } => self.catalog.remove_table(*table),
            Event::CreateIndex { table, index } => {
                if let Some(t) = self.catalog.table_by_id(*table) {
                    if !t.def().indexes.iter().any(|i| i.name == index.name) {
                        add_index(&t, index.clone());
                    }
                }
            }
            Event::DropIndex { table, name } => {
                if let Some(t) = self.catalog.table_by_id(*table) {
                    remove_index(&t, name);
                }
            }
            Event::Truncate { table } => {
                if let Some(t) = self.catalog.table_by_id(*table) {
                    t.clear();
                }
            }
            Event::PutAccount { account } => self.accounts.put(account.clone()),
            Event::DropAccount { user, host } => self.accounts.remove(user, host),
            Event::PutRoles { user, host, roles } => self
                .accounts
                .put_roles((user.clone(), host.clone()), roles.clone()),
            Event::AlterTable {
                table,
                def,
                sources,
            } => self.replay_alter(*table, def, sources, None),
            Event::RenameTable {
                table,
                database,
                name,
            } => self.catalog.rename_table(*table, database, name),
            Event::SetForeignKeys {
                table,
                foreign_keys,
            } => self.catalog.set_foreign_keys(*table, foreign_keys.clone()),
            Event::SetChecks { table, checks } => self.catalog.set_checks(*table, checks.clone()),
            Event::SetGenerated { table, columns } => {
                self.catalog.set_generated(*table, columns.clone())
            }
            Event::SetComments { table, comments } => {
                self.catalog.set_comments(*table, comments.clone())
            }
            Event::SetHistograms { table, histograms } => {
                if let Some(t) = self.catalog.table_by_id(*table) {
                    t.set_histograms(histograms.clone());
                }
            }
            Event::SetAutoIncrement { table, next } => {
                if let Some(t) = self.catalog.table_by_id(*table) {
                    t.auto_increment.store(*next, Ordering::SeqCst);
                }
            }
            Event::PutView { view } => self.catalog.put_view(view.clone()),
            Event::DropView { database, name } => {
                self.catalog.remove_view(database, name);
            }
            Event::PutRoutine { routine } => self.catalog.put_routine(routine.clone()),
            Event::DropRoutine {
                database,
                kind,
                name,
            } => {
                self.catalog.remove_routine(database, *kind, name);
            }
            row => debug_assert!(false, "row event {row:?} is not DDL"),
        }
    }

    /// After replay: rebuild secondary indexes from the rows and set the
    /// AUTO_INCREMENT and row-id counters past the largest values present.
    fn finish_recovery(&self) {
        for table in self.catalog.all_tables() {
            let schema = table.schema();
            let def = schema.def.clone();
            let auto = def.auto_increment_column();
            let mut max_auto = 0u64;
            let mut max_row_id = 0u64;
            for entry in table.range(Bound::Unbounded, Bound::Unbounded, false) {
                let Some(row) = entry.value().latest().and_then(|v| v.row) else {
                    continue;
                };
                table.index_row(&schema, entry.key(), &row);
                if let Some(c) = auto {
                    max_auto = max_auto.max(row.get(c).to_i64().unwrap_or(0).max(0) as u64);
                }
                if let Some(c) = def.hidden_row_id {
                    max_row_id = max_row_id.max(row.get(c).to_i64().unwrap_or(0).max(0) as u64);
                }
            }
            table
                .auto_increment
                .fetch_max(max_auto + 1, Ordering::SeqCst);
            table
                .next_row_id
                .fetch_max(max_row_id + 1, Ordering::SeqCst);
        }
    }

    /// Writes a checkpoint and lets the log before the previous one go.
    /// Returns the new checkpoint's start LSN.
    pub fn checkpoint(&self) -> std::result::Result<u64, String> {
        let mut last = self.checkpoint.lock();
        let (at, old) = self.switch_epoch();
        self.drain_epoch(old)?;
        let began = std::time::Instant::now();
        let path = self.write_snapshot(&at)?;
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        self.snapshot_bytes.store(bytes, Ordering::Relaxed);
        eprintln!(
            "lockstep: checkpoint of {} MiB written in {:.1?}",
            bytes >> 20,
            began.elapsed()
        );
        // Keep the previous checkpoint and the log from its start, as the
        // fallback should the new file be damaged; drop anything older.
        let previous = *last;
        for (lsn, path) in crate::checkpoint::list(&self.config.datadir) {
            if lsn < previous {
                let _ = crate::checkpoint::keep_as_spare(&path);
            }
        }
        self.log
            .truncate_before(previous)
            .map_err(|e| format!("truncating the log: {e}"))?;
        *last = at.lsn;
        Ok(at.lsn)
    }

    /// Where a checkpoint starts, and the epoch its older committers are in.
    /// New committers register in the other epoch; those that reserved log
    /// space before the start are in the old one.
    fn switch_epoch(&self) -> (CheckpointStart, usize) {
        let mut order = self.order.lock();
        let old = order.epoch;
        order.epoch ^= 1;
        let at = CheckpointStart {
            lsn: self.log.current_lsn(),
            next_gno: order.next_gno,
            gtids: order.executed.clone(),
            next_seq: order.next_seq,
        };
        (at, old)
    }

    /// Waits (bounded) for the committers of epoch `old` to finish.
    fn drain_epoch(&self, old: usize) -> std::result::Result<(), String> {
        let waited = std::time::Instant::now();
        while self.in_flight[old].load(Ordering::SeqCst) != 0 {
            if waited.elapsed() > std::time::Duration::from_secs(60) {
                return Err("checkpoint: in-flight commits did not drain".into());
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        Ok(())
    }

    /// Writes the schema, the accounts and every committed row to a new
    /// checkpoint file; returns its path. Rows go straight from the tables
    /// to the file: a checkpoint holds no copy of the database.
    fn write_snapshot(&self, at: &CheckpointStart) -> std::result::Result<PathBuf, String> {
        let failed = |e: std::io::Error| {
            format!("checkpoint failed, the previous checkpoint and the log are kept: {e}")
        };
        let accounts: Vec<_> = self
            .accounts
            .stored()
            .iter()
            .map(|a| (**a).clone())
            .collect();
        let mut out = crate::checkpoint::SnapshotWriter::create(
            &self.config.datadir,
            at.lsn,
            at.next_gno,
            &at.gtids,
            at.next_seq,
            crate::checkpoint::SchemaObjects {
                databases: &self.catalog.databases(),
                accounts: &accounts,
                views: &self.catalog.all_views(),
                routines: &self.catalog.all_routines(),
            },
        )
        .map_err(failed)?;
        self.add_catalog_extras(&mut out);
        let view = self.txn_sys.read_view(None);
        for table in self.catalog.all_tables() {
            out.table(
                &table.def(),
                &self.catalog.foreign_keys(table.id),
                table.auto_increment.load(Ordering::SeqCst),
                table.next_row_id.load(Ordering::SeqCst),
            )
            .map_err(failed)?;
            for entry in table.range(Bound::Unbounded, Bound::Unbounded, false) {
                if let Some(row) = entry.value().read(|w| w == 0 || view.sees(w)) {
                    out.row(&row).map_err(failed)?;
                }
            }
            out.end_table().map_err(failed)?;
        }
        drop(view);
        out.finish().map_err(failed)
    }

    /// What the catalog keeps beside table definitions: CHECKs, generated
    /// columns, comments, histograms and roles.
    fn add_catalog_extras(&self, out: &mut crate::checkpoint::SnapshotWriter) {
        out.set_checks(
            self.catalog
                .all_checks()
                .into_iter()
                .map(|(id, c)| (id, c.to_vec()))
                .collect(),
        );
        out.set_generated(self.catalog.all_generated());
        out.set_comments(self.catalog.all_comments());
        out.set_histograms(self.catalog.all_histograms());
        out.set_roles(
            self.accounts
                .all_roles()
                .into_iter()
                .map(|(id, r)| (id, (*r).clone()))
                .collect(),
        );
    }

    /// Starts a thread that checkpoints whenever `threshold` bytes of log,
    /// and at least as many as the newest checkpoint holds, have
    /// accumulated since it. A checkpoint rewrites the whole database, so
    /// waiting for that much log keeps checkpoint writes no larger than log
    /// writes, and recovery replays no more log than it loads snapshot. It
    /// stops when the engine is dropped.
    pub fn start_checkpointer(self: &Arc<Self>, threshold: u64) {
        let weak = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("checkpointer".into())
            .spawn(move || loop {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let Some(engine) = weak.upgrade() else { return };
                let due = threshold.max(engine.snapshot_bytes.load(Ordering::Relaxed));
                if engine.log_since_checkpoint() >= due {
                    match engine.checkpoint() {
                        Ok(lsn) => eprintln!("lockstep: checkpoint at lsn {lsn}"),
                        Err(e) => {
                            eprintln!("lockstep: {e}");
                            drop(engine);
                            std::thread::sleep(std::time::Duration::from_secs(10));
                        }
                    }
                }
            })
            .expect("spawning the checkpointer thread");
    }

    /// Starts the purge thread (stops when the engine is dropped).
    pub fn start_purge(self: &Arc<Self>) {
        self.spawn_background("purge", |engine| {
            // Small batches: purge work is spread out, not bursty (9.5.4).
            let n = engine.purge(4096);
            std::time::Duration::from_millis(if n == 4096 { 1 } else { 50 })
        });
    }

    /// Runs `step` on a thread named `name` until the engine is dropped,
    /// resting for as long as each step says. The thread holds the engine
    /// only while a step runs.
    pub(crate) fn spawn_background(
        self: &Arc<Self>,
        name: &str,
        step: impl Fn(&Engine) -> std::time::Duration + Send + 'static,
    ) {
        let weak = Arc::downgrade(self);
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || loop {
                let Some(engine) = weak.upgrade() else { return };
                let rest = step(&engine);
                drop(engine);
                std::thread::sleep(rest);
            })
            .expect("spawning a background thread");
    }

    /// Log bytes written since the newest checkpoint.
    pub fn log_since_checkpoint(&self) -> u64 {
        self.log
            .current_lsn()
            .saturating_sub(*self.checkpoint.lock())
    }

    fn load_snapshot(&self, snap: crate::checkpoint::Snapshot) {
        for account in snap.accounts {
            self.accounts.put(account);
        }
        for (id, roles) in snap.roles {
            self.accounts.put_roles(id, roles);
        }
        for db in &snap.databases {
            self.catalog.add_database(db);
        }
        for view in snap.views {
            self.catalog.put_view(view);
        }
        for (id, checks) in snap.checks {
            self.catalog.set_checks(id, checks);
        }
        for (id, columns) in snap.generated {
            self.catalog.set_generated(id, columns);
        }
        for (id, comments) in snap.comments {
            self.catalog.set_comments(id, comments);
        }
        for routine in snap.routines {
            self.catalog.put_routine(routine);
        }
        for t in snap.tables {
            let table = self.catalog.add_table(t.def);
            self.catalog.set_foreign_keys(table.id, t.foreign_keys);
            let def = table.def();
            for row in t.rows {
                let key = def.index_key(0, &row);
                table.load_row(key, Some(row));
            }
            table
                .auto_increment
                .store(t.auto_increment, Ordering::SeqCst);
            table.next_row_id.store(t.next_row_id, Ordering::SeqCst);
        }
        for (id, histograms) in snap.histograms {
            if let Some(t) = self.catalog.table_by_id(id) {
                t.set_histograms(histograms);
            }
        }
    }

    /// Stops the log threads after flushing.
    pub fn shutdown(&self) {
        self.log.shutdown();
    }
}

/// The client's error for a commit (or DDL) the log did not take. `reserved`:
/// whether the record got log space, so it may be on disk after all.
fn log_error(log: &Log, e: LogError, reserved: bool) -> SqlError {
    let dir = log.config().dir.display();
    let os = |e: &LogError, msg: &str| {
        let errno = e.errno().unwrap_or(5);
        // "No space left on device (os error 28)" -> MySQL's "(errno: 28 - ...)".
        let text = msg.split(" (os error").next().unwrap_or(msg).to_string();
        (errno, text)
    };
    match &e {
        LogError::NoSpace { msg, .. } if !reserved => {
            let (errno, text) = os(&e, msg);
            SqlError::new(
                Code::ErrorOnWrite,
                format!(
                    "Error writing file '{dir}' (errno: {errno} - {text}); the transaction was rolled back, writes resume once space is available"
                ),
            )
        }
        LogError::Failed(inner) if !reserved => SqlError::new(
            Code::OptionPrevents,
            format!(
                "The lockstep server is read-only after a transaction log failure ({inner}) so it cannot execute this statement; restart it to recover"
            ),
        ),
        LogError::Shutdown => SqlError::new(Code::ServerShutdown, "Server shutdown in progress"),
        LogError::Failed(inner) => {
            let (errno, text) = match &**inner {
                LogError::Io { msg, .. } | LogError::NoSpace { msg, .. } => os(inner, msg),
                other => (5, other.to_string()),
            };
            SqlError::new(
                Code::ErrorOnWrite,
                format!(
                    "Error writing file '{dir}' (errno: {errno} - {text}); the commit's outcome is decided by recovery at restart, the server is read-only until then"
                ),
            )
        }
        _ => SqlError::new(
            Code::GetErrno,
            format!("Got error writing the transaction log: {e}"),
        ),
    }
}

/// The primary-key column values of a row (what a minimal row image keeps
/// to find the row).
fn primary_values(def: &TableDef, row: &[Value]) -> Vec<Value> {
    def.indexes[0]
        .columns
        .iter()
        .map(|&c| row[c].clone())
        .collect()
}

/// Encoded primary key from primary-key column values.
pub(crate) fn primary_key_of(def: &TableDef, values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (&c, v) in def.indexes[0].columns.iter().zip(values) {
        lockstep_tables::schema::encode_column_key(v, def.columns[c].data_type, &mut out);
    }
    out
}

fn undo_changes(txn: Option<u64>, undo: Vec<Undo>) {
    let Some(txn) = txn else {
        debug_assert!(
            undo.is_empty(),
            "changes are made only by a transaction with an id"
        );
        return;
    };
    for u in undo.into_iter().rev() {
        u.table.undo_version(&u.key, txn);
        if let Some(prior) = u.prior_own {
            u.table.restore_version(&u.key, prior);
        }
    }
}

fn add_index(table: &Table, index: IndexDef) {
    let mut schema = table.schema_mut();
    let mut def = (*schema.def).clone();
    def.indexes.push(index);
    let idx = def.indexes.len() - 1;
    let map = crossbeam_skiplist_map();
    for entry in table.range(Bound::Unbounded, Bound::Unbounded, false) {
        // Every version gets an entry, so older views still find their rows.
        for row in entry.value().images() {
            table_data(|| map.insert(key_of(def.secondary_entry(idx, &row, entry.key())), ()));
        }
    }
    schema.def = Arc::new(def);
    schema.secondary.push(map);
}

fn remove_index(table: &Table, name: &str) {
    let mut schema = table.schema_mut();
    let mut def = (*schema.def).clone();
    if let Some(pos) = def
        .indexes
        .iter()
        .skip(1)
        .position(|i| i.name.eq_ignore_ascii_case(name))
    {
        def.indexes.remove(pos + 1);
        schema.secondary.remove(pos);
        schema.def = Arc::new(def);
    }
}

fn crossbeam_skiplist_map() -> lockstep_tables::table::IndexMap {
    Default::default()
}

/// Smallest byte string greater than every string with prefix `key`.
pub fn successor_prefix(key: &[u8]) -> Vec<u8> {
    let mut s = key.to_vec();
    while let Some(last) = s.pop() {
        if last < 0xFF {
            s.push(last + 1);
            return s;
        }
    }
    vec![0xFF; key.len() + 1]
}

fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// How long the throttling gate may make no progress (no transaction
/// leaves) before a waiter is let in over the limit. Far above the time
/// between commits under any real load, so it only acts when the admitted
/// transactions are all stuck on something outside the server.
const THROTTLE_STALL: std::time::Duration = std::time::Duration::from_millis(100);

/// Takes an exclusive lock on `<datadir>/lockstep.lock` (InnoDB locks
/// ibdata1 the same way). Two processes replaying and checkpointing the same
/// files would delete each other's checkpoints and interleave log writes. The
/// kernel drops the lock when the process dies, so a crash leaves nothing
/// stale behind.
fn lock_datadir(datadir: &Path) -> std::result::Result<std::fs::File, String> {
    let path = datadir.join("lockstep.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "data directory {} is in use by another lockstep process (lock on {})",
            datadir.display(),
            path.display()
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

fn load_or_create_uuid(dir: &Path) -> std::result::Result<[u8; 16], String> {
    let path = dir.join("server_uuid");
    if let Ok(bytes) = std::fs::read(&path) {
        if let Ok(arr) = <[u8; 16]>::try_from(bytes.as_slice()) {
            return Ok(arr);
        }
    }
    let mut uuid: [u8; 16] = rand::random();
    uuid[6] = (uuid[6] & 0x0f) | 0x40; // version 4
    uuid[8] = (uuid[8] & 0x3f) | 0x80;
    let tmp = dir.join("server_uuid.tmp");
    std::fs::write(&tmp, uuid)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(uuid)
}
