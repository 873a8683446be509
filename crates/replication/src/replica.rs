//! The replica's drivers: the I/O task (connect, dump request, `Receiver`,
//! relay log appends in batches) and the SQL task (relay reads,
//! `Scheduler`, worker tasks applying through `Engine::apply_in_turn`).
//! The relay log is a `lockstep_log::Log` in <datadir>/relay, emptied at
//! every START REPLICA: the engine's executed set is the durable position,
//! so the relay is only a queue (relay_log_recovery=ON semantics).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use lockstep_binlog::{Event as LogEvent, TxnRecord};
use lockstep_client::{Conn, Opts};
use lockstep_engine::Engine;
use lockstep_log::{FlushMode, Log, LogConfig, Lsn};
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot, watch};

use crate::receiver::{Action, Receiver};
use crate::scheduler::{Meta, Scheduler, Ticket};
use crate::settings::Settings;
use crate::source::now_us;
use crate::wire::{DumpRequest, Event, COM_BINLOG_DUMP_GTID, NATIVE_STREAM};

/// SHOW REPLICA STATUS's live fields.
#[derive(Clone, Debug, Default)]
pub struct Status {
    pub io_running: bool,
    pub sql_running: bool,
    pub connected: bool,
    pub retrieved: String,
    pub last_io_error: String,
    pub last_sql_error: String,
    /// Source commit time of the newest applied transaction.
    pub applied_source_us: u64,
    pub applied: u64,
}

const WORKERS: usize = 4;
const QUEUE_TXNS: usize = 256;
const RELAY_BATCH: usize = 4 << 20;

pub struct Replica {
    engine: Arc<Engine>,
    datadir: PathBuf,
    runtime: tokio::runtime::Runtime,
    pub status: Arc<Mutex<Status>>,
    running: Mutex<Option<Running>>,
}

struct Running {
    stop: watch::Sender<bool>,
    io: tokio::task::JoinHandle<()>,
    sql: tokio::task::JoinHandle<()>,
}

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
            runtime,
            status: Arc::default(),
            running: Mutex::new(None),
        })
    }

    pub fn is_running(&self) -> bool {
        self.running.lock().is_some()
    }

    /// START REPLICA: empties the relay log and starts both tasks.
    pub fn start(&self, settings: Settings) -> Result<(), String> {
        let mut running = self.running.lock();
        if running.is_some() {
            return Ok(());
        }
        let dir = self.datadir.join("relay");
        let _ = std::fs::remove_dir_all(&dir);
        let mut cfg = LogConfig::new(&dir);
        cfg.flush_mode = FlushMode::EveryCommit;
        cfg.segment_size = 16 << 20;
        let (relay, _) = Log::open(cfg, 0).map_err(|e| format!("relay log: {e}"))?;
        let relay = Arc::new(relay);
        let (stop, stopped) = watch::channel(false);
        {
            let mut st = self.status.lock();
            *st = Status {
                io_running: true,
                sql_running: true,
                ..Status::default()
            };
        }
        let io = self.runtime.spawn(io_task(
            self.engine.clone(),
            relay.clone(),
            settings,
            self.status.clone(),
            stopped.clone(),
        ));
        let sql = self.runtime.spawn(sql_task(
            self.engine.clone(),
            relay,
            self.status.clone(),
            stopped,
        ));
        *running = Some(Running { stop, io, sql });
        Ok(())
    }

    /// STOP REPLICA: the I/O task is dropped at once (its appends are
    /// synchronous), the SQL task finishes or abandons what is in flight.
    pub fn stop(&self) {
        let Some(r) = self.running.lock().take() else {
            return;
        };
        let _ = r.stop.send(true);
        r.io.abort();
        let _ = self
            .runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(30), r.sql).await });
        let mut st = self.status.lock();
        st.io_running = false;
        st.sql_running = false;
        st.connected = false;
    }
}

async fn io_task(
    engine: Arc<Engine>,
    relay: Arc<Log>,
    settings: Settings,
    status: Arc<Mutex<Status>>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut rx = Receiver::new(engine.executed_set(), 1024);
    loop {
        let r = tokio::select! {
            r = stream_once(&mut rx, &relay, &settings, &status) => r,
            _ = stopped.changed() => return,
        };
        if !note_io_end(&status, r) {
            return; // as MySQL: the source cannot serve this replica
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Records how a connection ended; false: do not reconnect.
fn note_io_end(status: &Mutex<Status>, r: Result<(), (u16, String)>) -> bool {
    let mut st = status.lock();
    st.connected = false;
    if let Err((code, msg)) = r {
        st.last_io_error = format!("Error {code}: {msg}");
        if code == 1236 {
            st.io_running = false;
            return false;
        }
    }
    true
}

/// One connection: dump request, then events until it breaks.
async fn stream_once(
    rx: &mut Receiver,
    relay: &Log,
    s: &Settings,
    status: &Mutex<Status>,
) -> Result<(), (u16, String)> {
    let err = |e: lockstep_client::Error| (e.code().unwrap_or(2013), e.to_string());
    let mut conn = Conn::connect(&Opts::new(&s.host, s.port, &s.user, &s.password))
        .await
        .map_err(err)?;
    rx.connected();
    let req = DumpRequest {
        server_id: 2,
        binlog_name: NATIVE_STREAM.into(),
        executed: rx.have().clone(),
    };
    let mut cmd = vec![COM_BINLOG_DUMP_GTID];
    cmd.extend(req.encode_body());
    let mut seq = conn.send_dump(&cmd).await.map_err(err)?;
    {
        let mut st = status.lock();
        st.connected = true;
        st.last_io_error.clear();
    }
    // Packets are read by one task and appended by this one, so appends
    // batch up while the socket delivers (one relay fsync per batch).
    let (tx, mut packets) = mpsc::channel::<Result<Vec<u8>, (u16, String)>>(1024);
    let reader = tokio::spawn(async move {
        loop {
            let p = match conn.read_dump_packet(&mut seq).await {
                Ok(Some(p)) => Ok(p),
                Ok(None) => Err((2013, "the source ended the stream".into())),
                Err(e) => Err(err(e)),
            };
            let end = p.is_err();
            if tx.send(p).await.is_err() || end {
                return;
            }
        }
    });
    let r = append_loop(rx, relay, &mut packets, status).await;
    reader.abort();
    r
}

async fn append_loop(
    rx: &mut Receiver,
    relay: &Log,
    packets: &mut mpsc::Receiver<Result<Vec<u8>, (u16, String)>>,
    status: &Mutex<Status>,
) -> Result<(), (u16, String)> {
    while let Some(first) = packets.recv().await {
        let mut batch = vec![first];
        while batch.len() < 512 {
            match packets.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        let mut end: Option<Lsn> = None;
        for p in batch {
            let ev = Event::decode(&p?).map_err(|m| (1595, m))?;
            for action in rx.on_event(ev) {
                match action {
                    Action::Append(record) => {
                        end = Some(relay.append(&record).map_err(|e| (1595, e.to_string()))?);
                    }
                    Action::Reconnect(why) => return Err((1595, why)),
                }
            }
        }
        if let Some(end) = end {
            relay
                .wait_durable(end)
                .await
                .map_err(|e| (1595, e.to_string()))?;
            status.lock().retrieved = rx.have().to_string();
        }
    }
    Ok(())
}

/// What a worker reports to the SQL task.
enum Report {
    Ready(Ticket, oneshot::Sender<bool>),
    Done(Ticket, Result<(), String>, u64),
}

async fn sql_task(
    engine: Arc<Engine>,
    relay: Arc<Log>,
    status: Arc<Mutex<Status>>,
    mut stopped: watch::Receiver<bool>,
) {
    let r = apply_loop(&engine, &relay, &status, &mut stopped).await;
    let mut st = status.lock();
    st.sql_running = false;
    if let Err(e) = r {
        st.last_sql_error = e;
    }
}

/// Reads the relay log, schedules, and hands out commit turns.
async fn apply_loop(
    engine: &Arc<Engine>,
    relay: &Log,
    status: &Mutex<Status>,
    stopped: &mut watch::Receiver<bool>,
) -> Result<(), String> {
    let mut sched = Scheduler::new(QUEUE_TXNS, WORKERS);
    let (report_tx, mut reports) = mpsc::channel::<Report>(QUEUE_TXNS);
    let mut waiting: HashMap<Ticket, TxnRecord> = HashMap::new();
    let mut turns: HashMap<Ticket, oneshot::Sender<bool>> = HashMap::new();
    let mut pos: Lsn = 0;
    let mut failed: Option<String> = None;
    let mut in_workers = 0usize;
    loop {
        let ending = *stopped.borrow() || failed.is_some();
        if ending {
            turns.clear(); // their workers roll back
            if in_workers == 0 {
                break;
            }
        }
        if !ending && sched.has_room() {
            let batch = relay
                .read_durable(pos, RELAY_BATCH)
                .map_err(|e| e.to_string())?;
            pos = batch.next;
            for (_, bytes) in batch.records {
                let record = TxnRecord::decode(&bytes).map_err(|e| format!("relay log: {e}"))?;
                let t = sched.submit(meta_of(&record));
                waiting.insert(t, record);
                if !sched.has_room() {
                    break;
                }
            }
        }
        for t in sched.startable() {
            if ending {
                break;
            }
            in_workers += 1;
            let record = waiting.remove(&t).expect("submitted records wait here");
            tokio::spawn(worker(engine.clone(), t, record, report_tx.clone()));
        }
        while let Some(t) = sched.next_turn() {
            if let Some(turn) = turns.remove(&t) {
                let _ = turn.send(true);
            }
        }
        let report = tokio::select! {
            r = reports.recv() => r,
            _ = relay.wait_beyond(pos), if sched.has_room() && !ending => None,
            _ = tokio::time::sleep(Duration::from_millis(100)) => None,
            _ = stopped.changed() => None,
        };
        match report {
            Some(Report::Ready(t, turn)) => {
                sched.ready(t);
                turns.insert(t, turn);
            }
            Some(Report::Done(t, r, source_us)) => {
                sched.done(t);
                in_workers -= 1;
                match r {
                    Ok(()) => {
                        let mut st = status.lock();
                        st.applied += 1;
                        st.applied_source_us = st.applied_source_us.max(source_us);
                    }
                    Err(e) => failed = failed.or(Some(e)),
                }
            }
            None => {}
        }
    }
    failed.map_or(Ok(()), Err)
}

fn meta_of(r: &TxnRecord) -> Meta {
    Meta {
        sequence_number: r.sequence_number,
        last_committed: r.last_committed,
        ddl: r.events.iter().all(|e: &LogEvent| !e.is_row_event()),
    }
}

/// Applies one record; its commit waits for the turn the SQL task gives.
async fn worker(engine: Arc<Engine>, t: Ticket, record: TxnRecord, reports: mpsc::Sender<Report>) {
    let to_task = reports.clone();
    let turn = async move {
        let (tx, rx) = oneshot::channel();
        if to_task.send(Report::Ready(t, tx)).await.is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    };
    let r = engine
        .apply_in_turn(&record, turn)
        .await
        .map(|_| ())
        .map_err(|e| format!("Error {}: {}", e.number(), e.message));
    let _ = reports.send(Report::Done(t, r, record.timestamp_us)).await;
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
