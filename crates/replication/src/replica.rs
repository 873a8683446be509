//! The replica's drivers: the I/O task (connect, dump request, `Receiver`,
//! relay log appends in batches) and the SQL task (relay reads,
//! `Scheduler`, worker tasks applying through `Engine::apply_ordered`).
//! The relay log is a `lockstep_log::Log` in <datadir>/relay, emptied at
//! every START REPLICA: the engine's executed set is the durable position,
//! so the relay is only a queue (relay_log_recovery=ON semantics).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use lockstep_binlog::{Event as LogEvent, TxnRecord};
use lockstep_client::{Conn, Opts};
use lockstep_engine::{Applied as Outcome, ApplyOrder, Engine};
use lockstep_log::{FlushMode, Log, LogConfig, Lsn};
use lockstep_types::replica_status::{
    ConnectionStatus, CoordinatorStatus, TaskError, TxnStamp, WorkerStatus,
};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};

use crate::receiver::{Action, Receiver};
use crate::scheduler::{Meta, Scheduler, Ticket};
use crate::settings::Settings;
use crate::source::now_us;
use crate::wire::{DumpRequest, Event, COM_BINLOG_DUMP_GTID, NATIVE_STREAM};

/// SHOW REPLICA STATUS's and performance_schema's live fields.
#[derive(Clone, Debug, Default)]
pub struct Status {
    pub io_running: bool,
    pub sql_running: bool,
    pub connected: bool,
    pub retrieved: String,
    /// The I/O task: its last error, heartbeats, relay appends.
    pub connection: ConnectionStatus,
    /// The SQL task: its last error, the last record it queued.
    pub coordinator: CoordinatorStatus,
    /// One per worker slot, by id (1..=WORKERS), since START REPLICA.
    pub workers: Vec<WorkerStatus>,
    /// The source's @@server_id and @@server_uuid, read at connect.
    pub source_server_id: u64,
    pub source_uuid: String,
    /// Source commit time of the newest applied transaction.
    pub applied_source_us: u64,
    /// Rpl_semi_sync_replica_status: connected, acknowledging.
    pub semisync: bool,
}

/// Transactions applied at once (tasks, not threads): with the commits of
/// all of them sharing one fsync, more in flight means bigger groups.
const WORKERS: usize = 16;
/// Wait before reconnecting (SHOW REPLICA STATUS's Connect_Retry).
const RECONNECT: Duration = Duration::from_secs(1);
const QUEUE_TXNS: usize = 256;
const RELAY_BATCH: usize = 4 << 20;
/// Bytes of received packets between the socket reader and the relay
/// appender, and of records the SQL task holds (read, not yet applied).
const QUEUE_BYTES: usize = 64 << 20;
/// Relay log bytes not yet applied before the I/O task stops reading
/// the socket (the source then waits on TCP's flow control).
const RELAY_LAG_BYTES: u64 = 256 << 20;

pub struct Replica {
    engine: Arc<Engine>,
    datadir: PathBuf,
    /// Some until drop, which may happen on an async thread: it is shut
    /// down in the background there (`Drop`).
    runtime: Option<tokio::runtime::Runtime>,
    pub status: Arc<Mutex<Status>>,
    running: Mutex<Option<Running>>,
}

struct Running {
    stop: watch::Sender<bool>,
    io: tokio::task::JoinHandle<()>,
    sql: tokio::task::JoinHandle<()>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Where the SQL task has applied to in the relay log: the I/O task
/// stops appending when it is too far behind.
type Applied = Arc<AtomicU64>;

impl Replica {
    pub fn new(engine: Arc<Engine>, datadir: PathBuf) -> std::io::Result<Replica> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("replica")
            .enable_all()
            .build()?;
        Ok(Replica {
            engine,
            datadir,
            runtime: Some(runtime),
            status: Arc::default(),
            running: Mutex::new(None),
        })
    }

    fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime
            .as_ref()
            .expect("the runtime lives until drop")
            .handle()
    }

    /// Both tasks are running (neither ended by an error).
    pub fn is_running(&self) -> bool {
        self.running
            .lock()
            .as_ref()
            .is_some_and(|r| !r.io.is_finished() && !r.sql.is_finished())
    }

    /// Either task is still running.
    pub fn any_running(&self) -> bool {
        self.running
            .lock()
            .as_ref()
            .is_some_and(|r| !r.io.is_finished() || !r.sql.is_finished())
    }

    /// The I/O task is still running.
    pub fn io_running(&self) -> bool {
        self.running
            .lock()
            .as_ref()
            .is_some_and(|r| !r.io.is_finished())
    }

    /// START REPLICA: empties the relay log and starts both tasks; a task
    /// that ended by an error is restarted with the other. Ok(false): both
    /// were running already.
    pub async fn start(&self, settings: Settings, server_id: u32) -> Result<bool, String> {
        if self.is_running() {
            return Ok(false);
        }
        self.stop().await;
        let mut running = self.running.lock();
        if running.is_some() {
            return Ok(false); // another START won
        }
        let dir = self.datadir.join("relay");
        let _ = std::fs::remove_dir_all(&dir);
        let mut cfg = LogConfig::new(&dir);
        cfg.flush_mode = FlushMode::EveryCommit;
        cfg.segment_size = 16 << 20;
        let (relay, _) = Log::open(cfg, 0).map_err(|e| format!("relay log: {e}"))?;
        let relay = Arc::new(relay);
        let (stop, stopped) = watch::channel(false);
        *self.status.lock() = Status {
            io_running: true,
            sql_running: true,
            workers: (1..=WORKERS as u64)
                .map(|id| WorkerStatus {
                    id,
                    running: true,
                    ..WorkerStatus::default()
                })
                .collect(),
            ..Status::default()
        };
        let applied: Applied = Arc::default();
        let io = self.handle().spawn(io_task(
            IoCtx {
                engine: self.engine.clone(),
                relay: relay.clone(),
                settings,
                server_id,
                status: self.status.clone(),
                applied: applied.clone(),
            },
            stopped.clone(),
        ));
        let sql = self.handle().spawn(sql_task(
            self.engine.clone(),
            relay,
            self.status.clone(),
            applied,
            stopped,
        ));
        *running = Some(Running { stop, io, sql });
        Ok(true)
    }

    /// STOP REPLICA: the I/O task is dropped at once (its appends are
    /// synchronous), the SQL task finishes or abandons what is in flight.
    /// False: it was not running. Awaits on any runtime (join handles are
    /// runtime-agnostic), so a session can run it.
    pub async fn stop(&self) -> bool {
        let taken = self.running.lock().take();
        let Some(r) = taken else {
            return false;
        };
        let was_running = !r.io.is_finished() || !r.sql.is_finished();
        let _ = r.stop.send(true);
        r.io.abort();
        // Both gone before a START reopens the relay log's directory.
        let _ = r.io.await;
        let _ = tokio::time::timeout(Duration::from_secs(30), r.sql).await;
        let mut st = self.status.lock();
        st.io_running = false;
        st.sql_running = false;
        st.connected = false;
        st.semisync = false;
        st.workers.iter_mut().for_each(|w| w.running = false);
        was_running
    }

    /// STOP REPLICA outside any async context (server shutdown).
    pub fn stop_blocking(&self) -> bool {
        let rt = self.runtime.as_ref().expect("the runtime lives until drop");
        rt.block_on(self.stop())
    }

    /// RESET REPLICA: the relay log and what SHOW REPLICA STATUS keeps
    /// of past runs are dropped (the caller stopped the replica first).
    pub fn reset(&self) -> std::io::Result<()> {
        *self.status.lock() = Status::default();
        match std::fs::remove_dir_all(self.datadir.join("relay")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// What the I/O task works with.
struct IoCtx {
    engine: Arc<Engine>,
    relay: Arc<Log>,
    settings: Settings,
    server_id: u32,
    status: Arc<Mutex<Status>>,
    applied: Applied,
}

async fn io_task(ctx: IoCtx, mut stopped: watch::Receiver<bool>) {
    let mut rx = Receiver::new(ctx.engine.executed_set(), 1024);
    loop {
        let r = tokio::select! {
            r = stream_once(&mut rx, &ctx) => r,
            _ = stopped.changed() => return,
        };
        if !note_io_end(&ctx.status, r) {
            return; // as MySQL: the source cannot serve this replica
        }
        tokio::time::sleep(RECONNECT).await;
    }
}

/// Records how a connection ended; false: do not reconnect.
fn note_io_end(status: &Mutex<Status>, r: Result<(), (u16, String)>) -> bool {
    let mut st = status.lock();
    st.connected = false;
    st.semisync = false;
    if let Err((code, msg)) = r {
        let message = if code == 1236 {
            format!("Got fatal error 1236 from source when reading data from binary log: '{msg}'")
        } else {
            format!("Error connecting to source: {msg}")
        };
        st.connection.last_error = task_error(code, message);
        if code == 1236 {
            st.io_running = false;
            return false;
        }
    }
    true
}

type IoError = (u16, String);

fn io_err(e: lockstep_client::Error) -> IoError {
    (e.code().unwrap_or(2013), e.to_string())
}

/// The source's @@server_id and @@server_uuid, for SHOW REPLICA STATUS.
async fn source_identity(conn: &mut Conn) -> Result<(u64, String), IoError> {
    let r = conn
        .query("SELECT @@server_id, @@server_uuid")
        .await
        .map_err(io_err)?;
    let row = r.rows.first().cloned().unwrap_or_default();
    let id = row.first().and_then(|v| v.to_i64()).unwrap_or(0).max(0) as u64;
    let uuid = row
        .get(1)
        .and_then(|v| v.to_text())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    Ok((id, uuid))
}

/// A received packet and its share of the byte budget between the
/// socket reader and the appender.
type Packet = (Result<Vec<u8>, IoError>, Option<OwnedSemaphorePermit>);

/// One connection: dump request, then events until it breaks.
async fn stream_once(rx: &mut Receiver, ctx: &IoCtx) -> Result<(), IoError> {
    let s = &ctx.settings;
    let opts = Opts::new(&s.host, s.port, &s.user, &s.password).get_public_key(s.get_public_key);
    let mut conn = Conn::connect(&opts).await.map_err(io_err)?;
    let (source_id, source_uuid) = source_identity(&mut conn).await?;
    // As a MySQL replica asks for semisync (read at each connect).
    let semisync = ctx.engine.semisync.replica_enabled();
    if semisync {
        conn.query("SET @rpl_semi_sync_replica = 1")
            .await
            .map_err(io_err)?;
    }
    rx.connected();
    let req = DumpRequest {
        server_id: ctx.server_id,
        binlog_name: NATIVE_STREAM.into(),
        executed: rx.have().clone(),
    };
    let mut cmd = vec![COM_BINLOG_DUMP_GTID];
    cmd.extend(req.encode_body());
    let mut seq = conn.send_dump(&cmd).await.map_err(io_err)?;
    {
        let mut st = ctx.status.lock();
        st.connected = true;
        st.source_server_id = source_id;
        st.source_uuid = source_uuid;
        st.connection.last_error = TaskError::default();
        st.semisync = semisync;
    }
    // The writing half is kept even without semisync: dropping it would
    // end the connection (TCP FIN).
    let (mut conn, replies) = conn.split_dump();
    // Packets are read by one task and appended by this one, so appends
    // batch up while the socket delivers (one relay fsync per batch). The
    // queue between them is bounded in bytes, not only in packets.
    let budget = Arc::new(Semaphore::new(QUEUE_BYTES));
    let (tx, mut packets) = mpsc::channel::<Packet>(1024);
    let reader = tokio::spawn(async move {
        loop {
            let p = match conn.read_dump_packet(&mut seq).await {
                Ok(Some(p)) => Ok(p),
                Ok(None) => Err((2013, "the source ended the stream".into())),
                Err(e) => Err(io_err(e)),
            };
            let end = p.is_err();
            let size = p.as_ref().map_or(0, Vec::len).clamp(1, QUEUE_BYTES) as u32;
            let permit = budget.clone().acquire_many_owned(size).await.ok();
            if tx.send((p, permit)).await.is_err() || end {
                return;
            }
        }
    });
    // Also when this future is dropped (STOP REPLICA aborts the task).
    let _reader = AbortOnDrop(reader);
    append_loop(rx, ctx, &mut packets, (replies, semisync)).await
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Waits while the relay log holds too much the SQL task has not applied.
async fn wait_for_room(ctx: &IoCtx) {
    while ctx
        .relay
        .current_lsn()
        .saturating_sub(ctx.applied.load(Ordering::Acquire))
        > RELAY_LAG_BYTES
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Appends received records to the relay log in batches; a semisync
/// replica acknowledges each batch once it is durable.
async fn append_loop(
    rx: &mut Receiver,
    ctx: &IoCtx,
    packets: &mut mpsc::Receiver<Packet>,
    (mut replies, semisync): (lockstep_client::DumpWriter, bool),
) -> Result<(), IoError> {
    let relay = &ctx.relay;
    while let Some(first) = packets.recv().await {
        let received_us = now_us();
        wait_for_room(ctx).await;
        let mut batch = vec![first];
        while batch.len() < 512 {
            match packets.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        let mut end: Option<Lsn> = None;
        let mut queueing = None;
        let mut heartbeats = 0;
        for (p, _permit) in batch {
            let ev = Event::decode(&p?).map_err(|m| (1595, m))?;
            heartbeats += matches!(ev, Event::Heartbeat { .. }) as u64;
            for action in rx.on_event(ev) {
                match action {
                    Action::Append(record) => {
                        end = Some(relay.append(&record).map_err(|e| (1595, e.to_string()))?);
                        queueing = Some(record);
                    }
                    Action::Reconnect(why) => return Err((1595, why)),
                }
            }
        }
        let queued = queueing.map(|r| queued_stamp(&r, received_us, &ctx.status));
        if heartbeats > 0 {
            let mut st = ctx.status.lock();
            st.connection.heartbeats += heartbeats;
            st.connection.last_heartbeat_us = received_us;
        }
        if let Some(end) = end {
            relay
                .wait_durable(end)
                .await
                .map_err(|e| (1595, e.to_string()))?;
            let mut st = ctx.status.lock();
            st.retrieved = rx.have().to_string();
            st.connection.queueing = TxnStamp::default();
            st.connection.last_queued = TxnStamp {
                end_us: now_us(),
                ..queued.unwrap_or_default()
            };
        }
        if let Some(ack) = rx.ack_due().filter(|_| semisync) {
            replies.send_reply(&ack.encode()).await.map_err(io_err)?;
        }
    }
    Ok(())
}

/// The newest record of a relay batch, as it is being written (shown as
/// the queueing transaction until the batch is durable).
fn queued_stamp(record: &[u8], received_us: u64, status: &Mutex<Status>) -> TxnStamp {
    let gtid = TxnRecord::peek_gtid(record);
    let commit_us = TxnRecord::peek_timestamp_us(record).unwrap_or(0);
    let mut st = status.lock();
    let stamp = TxnStamp {
        gtid: gtid.map(|g| g.to_string()).unwrap_or_default(),
        original_commit_us: original_commit(gtid, commit_us, &st.source_uuid),
        immediate_commit_us: commit_us,
        start_us: received_us,
        end_us: 0,
    };
    st.connection.queueing = stamp.clone();
    stamp
}

/// A record's commit time on the server where it first committed: known
/// when that is the source (a record carries its last commit's time; what
/// MySQL shows for a source that sends no original time is 0).
fn original_commit(gtid: Option<lockstep_binlog::Gtid>, commit_us: u64, source_uuid: &str) -> u64 {
    let source = lockstep_binlog::gtid::parse_uuid(source_uuid);
    match gtid {
        Some(g) if Some(g.server_uuid) == source => commit_us,
        _ => 0,
    }
}

fn task_error(number: u16, message: String) -> TaskError {
    TaskError {
        number,
        message,
        at_us: now_us(),
    }
}

/// What a worker reports to the SQL task: it is done (committed,
/// skipped, failed, or abandoned because the applier is stopping).
struct Report {
    t: Ticket,
    result: Result<Outcome, SqlErr>,
    abandoned: bool,
    /// The record's commit time on the source.
    source_us: u64,
    slot: usize,
}

type SqlErr = (u16, String);

async fn sql_task(
    engine: Arc<Engine>,
    relay: Arc<Log>,
    status: Arc<Mutex<Status>>,
    applied: Applied,
    mut stopped: watch::Receiver<bool>,
) {
    let mut a = Applier::new(engine, relay, status.clone(), applied);
    let r = a.run(&mut stopped).await;
    let mut st = status.lock();
    st.sql_running = false;
    st.workers.iter_mut().for_each(|w| w.running = false);
    if let Err((code, msg)) = r {
        st.coordinator.last_error = task_error(code, msg);
    }
}

/// The SQL task's state: records read from the relay log and not yet
/// applied (bounded in count by the scheduler and in bytes here), and
/// the workers' commit turns.
struct Applier {
    engine: Arc<Engine>,
    relay: Arc<Log>,
    status: Arc<Mutex<Status>>,
    applied: Applied,
    sched: Scheduler,
    waiting: HashMap<Ticket, TxnRecord>,
    /// Records read from the relay log, not yet scheduled (at most one
    /// read's worth), with their ends; when that read was.
    unread: VecDeque<(Lsn, Lsn, Vec<u8>)>,
    read_us: u64,
    /// Worker slots (indexes into Status::workers) not in use; the
    /// scheduler runs at most WORKERS records at once.
    free: Vec<usize>,
    turns: Arc<Turns>,
    /// Relay position and size of each record not yet done, oldest first.
    held: VecDeque<(Ticket, Lsn, usize, bool)>,
    held_bytes: usize,
    pos: Lsn,
    truncated: Lsn,
    failed: Option<SqlErr>,
    in_workers: usize,
    report_tx: mpsc::Sender<Report>,
    reports: mpsc::Receiver<Report>,
}

impl Applier {
    fn new(
        engine: Arc<Engine>,
        relay: Arc<Log>,
        status: Arc<Mutex<Status>>,
        applied: Applied,
    ) -> Self {
        let (report_tx, reports) = mpsc::channel::<Report>(QUEUE_TXNS);
        Applier {
            engine,
            relay,
            status,
            applied,
            sched: Scheduler::new(QUEUE_TXNS, WORKERS),
            waiting: HashMap::new(),
            unread: VecDeque::new(),
            read_us: 0,
            free: (0..WORKERS).rev().collect(),
            turns: Arc::new(Turns::new()),
            held: VecDeque::new(),
            held_bytes: 0,
            pos: 0,
            truncated: 0,
            failed: None,
            in_workers: 0,
            report_tx,
            reports,
        }
    }

    fn has_room(&self) -> bool {
        self.sched.has_room() && (self.held.is_empty() || self.held_bytes < QUEUE_BYTES)
    }

    /// Reads the relay log, schedules, and hands out commit turns.
    async fn run(&mut self, stopped: &mut watch::Receiver<bool>) -> Result<(), SqlErr> {
        loop {
            let ending = *stopped.borrow() || self.failed.is_some();
            if ending {
                self.turns.close(); // workers not yet reserved roll back
                if self.in_workers == 0 {
                    break;
                }
            } else {
                self.fill()?;
                self.dispatch();
            }
            let wait_relay = self.has_room() && self.unread.is_empty() && !ending;
            let report = tokio::select! {
                r = self.reports.recv() => r,
                _ = self.relay.wait_beyond(self.pos), if wait_relay => None,
                _ = tokio::time::sleep(Duration::from_millis(100)) => None,
                _ = stopped.changed() => None,
            };
            if let Some(r) = report {
                self.on_report(r);
            }
        }
        self.failed.take().map_or(Ok(()), Err)
    }

    /// Schedules relay records while there is room. A read takes up to
    /// `RELAY_BATCH` bytes; what does not fit waits in `unread` rather
    /// than being read (and checksummed) again.
    fn fill(&mut self) -> Result<(), SqlErr> {
        let relay_err = |e: String| (1594, format!("Relay log read failure: {e}"));
        if !self.has_room() {
            return Ok(());
        }
        if self.unread.is_empty() {
            let batch = self
                .relay
                .read_durable(self.pos, RELAY_BATCH)
                .map_err(|e| relay_err(e.to_string()))?;
            // A record's end is where the next one starts (the batch's
            // end for the last).
            let ends: Vec<Lsn> = batch
                .records
                .iter()
                .skip(1)
                .map(|r| r.0)
                .chain([batch.next])
                .collect();
            for ((lsn, bytes), end) in batch.records.into_iter().zip(ends) {
                self.unread.push_back((lsn, end, bytes));
            }
            self.read_us = now_us();
        }
        let mut last = None;
        while self.has_room() {
            let Some((lsn, end, bytes)) = self.unread.pop_front() else {
                break;
            };
            let record = TxnRecord::decode(&bytes).map_err(|e| relay_err(e.to_string()))?;
            last = Some((record.gtid(), record.timestamp_us));
            let t = self.sched.submit(meta_of(&record));
            self.waiting.insert(t, record);
            self.held.push_back((t, lsn, bytes.len(), false));
            self.held_bytes += bytes.len();
            self.pos = end;
        }
        if let Some((gtid, commit_us)) = last {
            self.processed(gtid, commit_us);
        }
        Ok(())
    }

    /// The coordinator's last processed transaction: the newest queued for
    /// a worker (decoded and handed to the scheduler without yielding, so
    /// none is ever shown as being processed).
    fn processed(&self, gtid: lockstep_binlog::Gtid, commit_us: u64) {
        let mut st = self.status.lock();
        st.coordinator.last_processed = TxnStamp {
            gtid: gtid.to_string(),
            original_commit_us: original_commit(Some(gtid), commit_us, &st.source_uuid),
            immediate_commit_us: commit_us,
            start_us: self.read_us,
            end_us: now_us(),
        };
    }

    fn dispatch(&mut self) {
        for t in self.sched.startable() {
            self.in_workers += 1;
            let record = self
                .waiting
                .remove(&t)
                .expect("submitted records wait here");
            let slot = self.free.pop().expect("at most WORKERS records run");
            let w = Worker {
                engine: self.engine.clone(),
                status: self.status.clone(),
                slot,
                turns: self.turns.clone(),
                reports: self.report_tx.clone(),
            };
            tokio::spawn(w.apply(t, record));
        }
    }

    /// A worker is done. An abandoned record is no error: the applier
    /// is ending already (stopped, or another worker failed).
    fn on_report(&mut self, r: Report) {
        self.sched.done(r.t);
        self.in_workers -= 1;
        debug_assert!(!self.free.contains(&r.slot), "a slot runs one record");
        self.free.push(r.slot);
        match r.result {
            Ok(_) => {
                let mut st = self.status.lock();
                st.applied_source_us = st.applied_source_us.max(r.source_us);
                drop(st);
                self.release(r.t);
            }
            Err(_) if r.abandoned => {}
            Err(e) => self.failed = self.failed.take().or(Some(e)),
        }
    }

    /// Drops a done record from the held ones; once the oldest are done,
    /// tells the I/O task and lets go of relay segments behind them.
    fn release(&mut self, t: Ticket) {
        if let Some(h) = self.held.iter_mut().find(|h| h.0 == t) {
            h.3 = true;
        }
        while self.held.front().is_some_and(|h| h.3) {
            let (_, _, size, _) = self.held.pop_front().expect("front exists");
            self.held_bytes -= size;
        }
        let done_to = self.held.front().map_or(self.pos, |h| h.1);
        self.applied.store(done_to, Ordering::Release);
        if done_to >= self.truncated + (16 << 20) {
            // Failure here only leaves old segments on disk.
            if self.relay.truncate_before(done_to).is_ok() {
                self.truncated = done_to;
            }
        }
    }
}

fn meta_of(r: &TxnRecord) -> Meta {
    Meta {
        sequence_number: r.sequence_number,
        last_committed: r.last_committed,
        ddl: r.events.iter().all(|e: &LogEvent| !e.is_row_event()),
    }
}

/// A task applying one record in worker slot `slot` (0-based; its
/// replication_applier_status_by_worker row is slot + 1).
struct Worker {
    engine: Arc<Engine>,
    status: Arc<Mutex<Status>>,
    slot: usize,
    turns: Arc<Turns>,
    reports: mpsc::Sender<Report>,
}

impl Worker {
    /// Applies one record in its turn; the turns are passed on whatever
    /// happens to it (skipped, failed), unless the applier stops.
    async fn apply(self, t: Ticket, record: TxnRecord) {
        let stamp = self.begin(&record);
        let mut order = InTurn {
            t,
            turns: self.turns.clone(),
            reserved: false,
            visible: false,
            abandoned: false,
            waited: Duration::ZERO,
            status: self.status.clone(),
            slot: self.slot,
        };
        let r = apply_record(&self.engine, &record, &mut order).await;
        if r.is_err() {
            // Nothing after it commits (no gap in the source's order).
            order.turns.close();
        }
        order.pass_on().await;
        self.end(stamp, &r, &order);
        let report = Report {
            t,
            result: r,
            abandoned: order.abandoned,
            source_us: record.timestamp_us,
            slot: self.slot,
        };
        let _ = self.reports.send(report).await;
    }

    /// Shows the record as the slot's applying transaction.
    fn begin(&self, record: &TxnRecord) -> TxnStamp {
        let gtid = record.gtid();
        let mut st = self.status.lock();
        let stamp = TxnStamp {
            gtid: gtid.to_string(),
            original_commit_us: original_commit(Some(gtid), record.timestamp_us, &st.source_uuid),
            immediate_commit_us: record.timestamp_us,
            start_us: now_us(),
            end_us: 0,
        };
        if let Some(w) = st.workers.get_mut(self.slot) {
            w.applying = stamp.clone();
        }
        stamp
    }

    /// Counts the outcome in the slot's row. A failed record stays shown
    /// as applying, as MySQL shows the transaction a worker stopped on;
    /// an abandoned one is no error of this worker's.
    fn end(&self, stamp: TxnStamp, r: &Result<Outcome, SqlErr>, order: &InTurn) {
        let mut st = self.status.lock();
        let Some(w) = st.workers.get_mut(self.slot) else {
            return; // a RESET REPLICA dropped the rows meanwhile
        };
        w.commit_wait_us += order.waited.as_micros() as u64;
        match r {
            Err(_) if order.abandoned => {
                w.applying = TxnStamp::default();
                w.applying_retries = 0;
                w.applying_transient = TaskError::default();
            }
            Ok(Outcome::Committed) => {
                w.applied += 1;
                w.applying = TxnStamp::default();
                w.last_applied = TxnStamp {
                    end_us: now_us(),
                    ..stamp
                };
                w.last_applied_retries = std::mem::take(&mut w.applying_retries);
                w.last_applied_transient = std::mem::take(&mut w.applying_transient);
            }
            Ok(Outcome::AlreadyExecuted) => {
                w.skipped += 1;
                w.applying = TxnStamp::default();
                w.applying_retries = 0;
                w.applying_transient = TaskError::default();
            }
            Err((code, msg)) => w.last_error = task_error(*code, msg.clone()),
        }
    }
}

/// `Engine::apply_ordered` with the error as SHOW REPLICA STATUS says it.
async fn apply_record(
    engine: &Engine,
    record: &TxnRecord,
    order: &mut InTurn,
) -> Result<Outcome, SqlErr> {
    engine.apply_ordered(record, order).await.map_err(|e| {
        let msg = format!(
            "Worker failed executing transaction '{}': Error {}: {}",
            record.gtid(),
            e.number(),
            e.message
        );
        (e.number(), msg)
    })
}

/// The applier's commit order, by ticket: `reserve` is the ticket that may
/// reserve its log space next, `visible` the one that may become visible
/// next. Workers wait on it and advance it themselves (no round trip
/// through the SQL task); `closed` releases every waiter when the
/// applier stops.
#[derive(Clone, Copy, Default)]
struct TurnState {
    reserve: Ticket,
    visible: Ticket,
    closed: bool,
}

struct Turns(watch::Sender<TurnState>);

impl Turns {
    fn new() -> Turns {
        Turns(watch::Sender::new(TurnState::default()))
    }

    /// Waits until `pick` says it is `t`'s turn; false: closed.
    async fn wait(&self, t: Ticket, pick: fn(&TurnState) -> Ticket) -> bool {
        let mut rx = self.0.subscribe();
        let r = rx.wait_for(|s| s.closed || pick(s) >= t).await;
        r.is_ok_and(|s| !s.closed)
    }

    fn pass_reserve(&self, t: Ticket) {
        self.0.send_modify(|s| {
            debug_assert_eq!(s.reserve, t, "reservations in ticket order");
            s.reserve = t + 1;
        });
    }

    fn pass_visible(&self, t: Ticket) {
        self.0.send_modify(|s| {
            debug_assert_eq!(s.visible, t, "visibility in ticket order");
            s.visible = t + 1;
        });
    }

    fn close(&self) {
        self.0.send_modify(|s| s.closed = true);
    }

    fn closed(&self) -> bool {
        self.0.borrow().closed
    }
}

/// One worker's place in `Turns`, how long it waited there, and
/// whether its turn never came (the applier is stopping).
struct InTurn {
    t: Ticket,
    turns: Arc<Turns>,
    reserved: bool,
    visible: bool,
    abandoned: bool,
    waited: Duration,
    /// Where its retries are counted: the worker's slot.
    status: Arc<Mutex<Status>>,
    slot: usize,
}

impl InTurn {
    /// Passes on the turns the engine did not (a skipped, failed or DDL
    /// record).
    async fn pass_on(&mut self) {
        if !self.reserved {
            if !self.turns.wait(self.t, |s| s.reserve).await {
                return;
            }
            self.reserved();
        }
        if !self.visible && self.turns.wait(self.t, |s| s.visible).await {
            self.visible();
        }
    }
}

impl ApplyOrder for InTurn {
    fn commit_turn(&mut self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(async move {
            let since = std::time::Instant::now();
            let turn = self.turns.wait(self.t, |s| s.reserve).await;
            self.waited += since.elapsed();
            self.abandoned = !turn;
            turn
        })
    }
    fn reserved(&mut self) {
        self.reserved = true;
        self.turns.pass_reserve(self.t);
    }
    fn visible_turn(&mut self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            let since = std::time::Instant::now();
            self.turns.wait(self.t, |s| s.visible).await;
            self.waited += since.elapsed();
        })
    }
    fn visible(&mut self) {
        self.visible = true;
        self.turns.pass_visible(self.t);
    }
    /// Counts the retry in the slot's row; none once the applier stops.
    fn retrying(&mut self, attempt: u64, error: &lockstep_types::Error) -> bool {
        if self.turns.closed() {
            self.abandoned = true;
            return false;
        }
        let mut st = self.status.lock();
        if let Some(w) = st.workers.get_mut(self.slot) {
            w.retries += 1;
            w.applying_retries = attempt;
            w.applying_transient = task_error(error.number(), error.message.clone());
        }
        true
    }
}

/// Seconds_Behind_Source: 0 when everything retrieved is applied.
pub fn seconds_behind(engine: &Engine, st: &Status) -> Option<u64> {
    if !st.sql_running {
        return None;
    }
    let retrieved = lockstep_binlog::GtidSet::parse(&st.retrieved).unwrap_or_default();
    if retrieved.is_subset(&engine.executed_set()) || st.applied_source_us == 0 {
        return Some(0);
    }
    Some(now_us().saturating_sub(st.applied_source_us) / 1_000_000)
}
