//! `lockstep`: a MySQL-compatible OLTP database node.
//!
//! `lockstep serve` starts a node with no configuration needed (127.0.0.1:3306,
//! data in ./lockstep-data, user root without a password).
//! `lockstep binlog <file>` prints a log segment as mysqlbinlog would.

mod affinity;
mod alloc;
mod config;
mod handler;
mod replica;
mod tls;

use clap::{Parser, Subcommand};
use config::Config;
use lockstep_engine::{Engine, EngineConfig, FlushMode, GrantPolicy};
use lockstep_protocol::Served;
use lockstep_sql::{Globals, Server, Session};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "lockstep", version, about = "MySQL-compatible OLTP database")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once at start
enum Command {
    /// Start a database node.
    Serve(Config),
    /// Print the transactions in a log segment file.
    Binlog {
        /// A segment file under <datadir>/log.
        file: PathBuf,
    },
}

/// mimalloc, with table data apart (`alloc.rs`).
#[global_allocator]
static ALLOCATOR: alloc::Placed = alloc::Placed;

fn main() {
    alloc::keep_freed_memory();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Serve(cfg) => {
            let explicit: Vec<String> = std::env::args().filter(|a| a.starts_with("--")).collect();
            match cfg.merge_file(&explicit).and_then(serve) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("lockstep: {e}");
                    1
                }
            }
        }
        Command::Binlog { file } => match print_binlog(&file) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("lockstep binlog: {e}");
                1
            }
        },
    };
    std::process::exit(code);
}

fn print_binlog(file: &std::path::Path) -> Result<(), String> {
    use lockstep_binlog::{describe, Event, TxnRecord};
    use std::io::Write;
    let reader = lockstep_log::SegmentReader::open(file).map_err(|e| e.to_string())?;
    // Table names come from the CREATE TABLE events seen so far.
    let mut names: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for item in reader {
        let (lsn, payload) = item.map_err(|e| e.to_string())?;
        let text = match TxnRecord::decode(&payload) {
            Ok(rec) => {
                for e in &rec.events {
                    if let Event::CreateTable { def } = e {
                        names.insert(def.id, format!("`{}`.`{}`", def.database, def.name));
                    }
                }
                describe(lsn, &rec, &|t| {
                    names
                        .get(&t)
                        .cloned()
                        .unwrap_or_else(|| format!("table#{t}"))
                })
            }
            Err(e) => format!("# at {lsn}: undecodable record: {e}\n"),
        };
        // A closed pipe (e.g. `| head`) ends the listing quietly.
        if out.write_all(text.as_bytes()).is_err() {
            return Ok(());
        }
    }
    Ok(())
}

/// One of max_connections, given back when the connection's task ends,
/// even by a panic (a bug must not leak slots until every client gets 1040).
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(live: &Arc<AtomicUsize>) -> Slot {
        live.fetch_add(1, Ordering::SeqCst);
        Slot(live.clone())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A runtime that serves connections, and how many it serves now.
struct Worker {
    handle: tokio::runtime::Handle,
    live: Arc<AtomicUsize>,
}

/// Stack of each runtime worker thread (statements run on them).
const WORKER_STACK: usize = 32 << 20;

/// The engine's settings from the server's, checked.
fn engine_config(cfg: &Config) -> Result<EngineConfig, String> {
    let flush_mode = match cfg.innodb_flush_log_at_trx_commit {
        0 => FlushMode::PerSecond,
        1 => FlushMode::EveryCommit,
        2 => FlushMode::WriteOnly,
        n => {
            return Err(format!(
                "innodb_flush_log_at_trx_commit must be 0, 1 or 2, not {n}"
            ))
        }
    };
    let grant_policy = match cfg.lock_grant_policy.to_ascii_uppercase().as_str() {
        "FIFO" => GrantPolicy::Fifo,
        "CATS" => GrantPolicy::Cats,
        other => {
            return Err(format!(
                "lock grant policy must be FIFO or CATS, not {other}"
            ))
        }
    };
    let mut ecfg = EngineConfig::new(&cfg.datadir);
    ecfg.flush_mode = flush_mode;
    ecfg.lock_shards = cfg.lock_shards.max(1);
    ecfg.grant_policy = grant_policy;
    ecfg.throttle_limit = cfg.throttle_limit;
    ecfg.log_buffer_size = cfg.log_buffer_size.next_power_of_two();
    ecfg.log_segment_size = cfg.log_segment_size;
    ecfg.convert = lockstep_sql::expr::store_in_column;
    ecfg.generate = lockstep_sql::exec::rebuild_generator;
    ecfg.minimal_row_image = match cfg.binlog_row_image.to_ascii_uppercase().as_str() {
        "FULL" => false,
        "MINIMAL" => true,
        other => {
            return Err(format!(
                "binlog_row_image must be FULL or MINIMAL, not {other}"
            ))
        }
    };
    Ok(ecfg)
}

/// The global variables the configuration sets.
fn globals(cfg: &Config, isolation: lockstep_engine::Isolation, budget: usize) -> Globals {
    Globals::new(&[
        ("port", Value::Int(cfg.port as i64)),
        (
            "admin_address",
            Value::str(cfg.admin_address.as_deref().unwrap_or("")),
        ),
        ("admin_port", Value::Int(cfg.admin_port as i64)),
        ("datadir", Value::str(&cfg.datadir.display().to_string())),
        ("max_connections", Value::Int(cfg.max_connections as i64)),
        ("back_log", Value::Int(cfg.effective_back_log() as i64)),
        (
            "max_allowed_packet",
            Value::Int(cfg.max_allowed_packet as i64),
        ),
        (
            "innodb_flush_log_at_trx_commit",
            Value::Int(cfg.innodb_flush_log_at_trx_commit as i64),
        ),
        (
            "innodb_lock_wait_timeout",
            Value::Int(cfg.innodb_lock_wait_timeout as i64),
        ),
        ("transaction_isolation", Value::str(isolation.name())),
        ("tx_isolation", Value::str(isolation.name())),
        (
            "lockstep_throttle_limit",
            Value::Int(cfg.throttle_limit as i64),
        ),
        (
            "lockstep_grant_policy",
            Value::str(&cfg.lock_grant_policy.to_ascii_uppercase()),
        ),
        ("connect_timeout", Value::Int(cfg.connect_timeout as i64)),
        (
            "binlog_row_image",
            Value::str(&cfg.binlog_row_image.to_ascii_uppercase()),
        ),
        ("wait_timeout", Value::Int(cfg.wait_timeout as i64)),
        ("sort_buffer_size", Value::Int(cfg.sort_buffer_size as i64)),
        ("tmp_table_size", Value::Int(cfg.tmp_table_size as i64)),
        (
            "max_heap_table_size",
            Value::Int(cfg.max_heap_table_size as i64),
        ),
        (
            "query_memory_limit",
            Value::Int(cfg.query_memory_limit as i64),
        ),
        ("lockstep_memory_budget", Value::Int(budget as i64)),
        (
            "max_prepared_stmt_count",
            Value::Int(cfg.max_prepared_stmt_count as i64),
        ),
        ("server_id", Value::Int(cfg.server_id as i64)),
        (
            "read_only",
            Value::Int((cfg.read_only || cfg.super_read_only) as i64),
        ),
        ("super_read_only", Value::Int(cfg.super_read_only as i64)),
    ])
}

/// Built-in root: every privilege, the password of --root-password; never logged.
fn builtin_root(cfg: &Config) -> lockstep_accounts::Account {
    let mut root = lockstep_accounts::Account::new(
        "root",
        "%",
        lockstep_accounts::Credential::Native(lockstep_protocol::native_password::stage2_hash(
            &cfg.root_password,
        )),
    );
    root.global = lockstep_accounts::Privs::all_at(lockstep_accounts::Level::Global)
        | lockstep_accounts::Privs::GRANT_OPTION;
    root
}

/// The runtimes connections run on: `[0]` is the shared pool, the rest
/// one dedicated thread each.
fn runtimes(cfg: &Config) -> Result<Vec<tokio::runtime::Runtime>, String> {
    // Connections get a thread of their own while there are few of them
    // (up to `dedicated_threads`, a single-worker runtime each), and share
    // a work-stealing pool of one worker per core beyond that; past the
    // limit the dedicated ones move into the pool too (`relocate`).
    // A dedicated thread reads, executes and writes without the pool's
    // cross-worker wake-ups (tokio wakes a parked sibling through a futex
    // to steal work the first could run itself: a fifth of point_select's
    // server CPU); the pool keeps thousands of connections balanced over
    // the cores, which per-core runtimes without stealing did not (-10% at
    // 1024). Book 5.16 on thread pools: overhead at low concurrency, no
    // collapse at high. Every runtime is tokio's multi-threaded flavour so
    // that a blocking statement (SLEEP) can hand its worker's other
    // connections to a fresh thread (`block_in_place`).
    let cores = if cfg.worker_threads > 0 {
        cfg.worker_threads
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    let dedicated = cfg.dedicated_threads.unwrap_or(16 * cores);
    let pin_to = pool_cpus(cfg);
    let pool_started = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::with_capacity(dedicated + 1);
    for i in 0..=dedicated {
        let (pin_to, pool_started) = (pin_to.clone(), pool_started.clone());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .worker_threads(if i == 0 { cores } else { 1 })
            .thread_name(if i == 0 {
                "lockstep-pool".to_string()
            } else {
                format!("lockstep-conn-{i}")
            })
            // Binding and evaluation recurse over expression trees as tall
            // as the parser allows (about MAX_DEPTH + MAX_LINKS levels, e.g.
            // a 4000-term a+a+...); 2 MiB (tokio's default) overflows on
            // those. Untouched stack pages cost nothing.
            .thread_stack_size(WORKER_STACK)
            .on_thread_start(move || {
                // The pool's first threads are its workers (tokio starts
                // them when the runtime is built); later ones are blocking
                // threads (SLEEP hands a worker's queue to one), left free
                // so that a hand-off never puts two workers on one core.
                if i != 0 || pin_to.is_empty() {
                    return;
                }
                let k = pool_started.fetch_add(1, Ordering::Relaxed);
                if k < cores {
                    let cpu = pin_to[k % pin_to.len()];
                    if let Err(e) = affinity::pin_current_thread(cpu) {
                        eprintln!("lockstep: pool worker not pinned to CPU {cpu}: {e}");
                    }
                }
            })
            .build()
            .map_err(|e| format!("starting the runtime: {e}"))?;
        workers.push(rt);
    }
    Ok(workers)
}

fn serve(cfg: Config) -> Result<(), String> {
    let ip: IpAddr = cfg
        .bind
        .parse()
        .map_err(|e| format!("--bind {}: {e}", cfg.bind))?;
    if !ip.is_loopback() && cfg.root_password.is_empty() {
        return Err(format!(
            "refusing to listen on {ip} while root has no password: set --root-password or bind to 127.0.0.1"
        ));
    }
    let isolation = lockstep_engine::Isolation::parse(&cfg.transaction_isolation)
        .ok_or_else(|| format!("unknown isolation level {}", cfg.transaction_isolation))?;
    let (engine, budget) = open_engine(&cfg)?;
    let globals = globals(&cfg, isolation, budget);
    engine
        .applier
        .set_lock_wait_secs(cfg.innodb_lock_wait_timeout);
    engine.accounts.set_builtin(builtin_root(&cfg));
    let server = Server::new(engine.clone(), globals);
    let replica = replica::ServerReplica::install(&server, cfg.datadir.clone());
    // Checkpoint whenever 256 MiB of log accumulated (5.14).
    engine.start_checkpointer(256 << 20);
    engine.start_purge();
    engine.start_stats_refresh();

    let workers = runtimes(&cfg)?;
    let handles: Vec<Worker> = workers
        .iter()
        .map(|rt| Worker {
            handle: rt.handle().clone(),
            live: Arc::new(AtomicUsize::new(0)),
        })
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    // A replica that was running when the server stopped (or was killed)
    // runs again; its tasks live on the replica's own runtime.
    if let Err(e) = rt.block_on(replica.resume()) {
        eprintln!("lockstep: replica not started: {}", e.message);
    }
    let result = rt.block_on(run(cfg, server.clone(), &handles));
    replica.shutdown();
    shut_down(&engine, workers, rt);
    result
}

/// Sets the memory budget and opens (recovers) the data directory; returns
/// the engine and the budget.
fn open_engine(cfg: &Config) -> Result<(Arc<Engine>, usize), String> {
    let ecfg = engine_config(cfg)?;
    let budget = match cfg.memory_budget {
        0 => lockstep_types::memory::default_budget(),
        n => n,
    };
    lockstep_types::memory::set_budget(budget);
    if let Some(uuid) = &cfg.server_uuid {
        replica::seed_server_uuid(&cfg.datadir, uuid)?;
    }
    // Sort runs a crash left behind (they are unlinked once created, so
    // only one caught between creation and unlink can remain).
    lockstep_sql::exec::filesort::clear_tmp(&cfg.datadir);
    let started = std::time::Instant::now();
    let engine = Engine::open(ecfg)?;
    // Recovery loads whatever the data is: a restart is never refused for
    // lack of memory; writes are, until there is room again.
    if lockstep_types::memory::in_use() > budget {
        eprintln!(
            "lockstep: warning: {} bytes in use after recovery, more than the memory budget of {budget}: writes that add data get 1114 until some is freed",
            lockstep_types::memory::in_use()
        );
    }
    eprintln!(
        "lockstep: data directory {} opened in {:?}",
        cfg.datadir.display(),
        started.elapsed()
    );
    Ok((engine, budget))
}

/// After the last connection: checkpoint so the next start is quick, then
/// flush the log, stop its threads and the runtimes.
fn shut_down(engine: &Engine, workers: Vec<tokio::runtime::Runtime>, rt: tokio::runtime::Runtime) {
    if engine.log_since_checkpoint() > 0 {
        if let Err(e) = engine.checkpoint() {
            eprintln!("lockstep: final {e}");
        }
    }
    engine.shutdown();
    for w in workers {
        w.shutdown_timeout(Duration::from_secs(2));
    }
    rt.shutdown_timeout(Duration::from_secs(2));
    eprintln!("lockstep: shut down cleanly");
}

/// The CPUs the pool's workers are pinned to, one each (`affinity`):
/// none when pinning is off or fewer than two CPUs are allowed.
fn pool_cpus(cfg: &Config) -> Arc<Vec<usize>> {
    if !cfg.pin_pool_workers {
        return Arc::new(Vec::new());
    }
    match affinity::allowed_cpus() {
        Ok(cpus) if cpus.len() >= 2 => Arc::new(cpus),
        Ok(_) => Arc::new(Vec::new()),
        Err(e) => {
            eprintln!("lockstep: pool workers not pinned (CPU affinity unreadable: {e})");
            Arc::new(Vec::new())
        }
    }
}

/// A listening socket with an explicit backlog (tokio's `bind` picks its
/// own, smaller one).
fn listen(addr: SocketAddr, back_log: u32) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    // A restart must not wait for the old connections' TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(back_log)
}

/// Follows connections between their two homes (checked every 100 ms).
/// While every connection has a thread of its own:
/// - the log's writer, flusher and notifier run ahead of the connection
///   threads. Every group commit waits on those three, and behind 16 busy
///   connection threads they left the cores idle (bench/ab.sh: read_write
///   16 +7.5%, write_only 16 +2.9%). In the pool they run like its two
///   workers: a log thread that preempts one costs more than the commit
///   wait it saves (read_write 64 -13% in a sweep with the log always
///   ahead).
/// - the throttle gate (8.3.2) stands open. There a transaction that waits
///   at the gate parks its whole thread and is woken through a futex,
///   while the threads, few enough, are shared out by the kernel anyway.
///   With the default 16 threads per core the gate's limit (also 16 per
///   core) is never reached there; with `--dedicated-threads 128` at 64
///   sysbench connections the open gate won over the pool with the gate
///   (bench/ab.sh: point_select 1.43x, read_write 1.11x, write_only
///   1.15x; write_only 128 1.23x). TPC-C at 64 terminals is why 128
///   threads are not the default: there they lost to the pool with the
///   gate open (0.81x) and more with it (0.78x). In the pool, with up to
///   thousands of transactions under way at once, the gate is what keeps
///   the curve flat (1024 connections without it: read_write 0.59x,
///   write_only 0.81x).
fn follow_connection_mode(server: &Arc<Server>, live: Arc<AtomicUsize>, dedicated: usize) {
    let engine = server.engine.clone();
    tokio::spawn(async move {
        // As last applied; `urgent` is None once the log threads' priority
        // could not be changed.
        let mut own_threads = None;
        let mut urgent = Some(false);
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tick.tick().await;
            let now = live.load(Ordering::Relaxed) <= dedicated;
            if own_threads == Some(now) {
                continue;
            }
            own_threads = Some(now);
            engine.txn_sys.set_throttle_engaged(!now);
            if urgent.is_some_and(|u| u != now) {
                urgent = match engine.log.set_urgent(now) {
                    Ok(()) => Some(now),
                    Err(e) => {
                        eprintln!("lockstep: log threads at normal priority ({e})");
                        None
                    }
                };
            }
        }
    });
}

/// A connection past admission, before it has a thread.
struct Accepted {
    stream: std::net::TcpStream,
    peer: SocketAddr,
    id: u32,
    slot: Slot,
    conn: handler::Connection,
}

/// Starts serving `a`: on a free dedicated thread while connections are
/// no more than dedicated threads, else in the shared pool (workers[0]),
/// whose reactor the socket joins.
fn place(
    a: Accepted,
    workers: &[Worker],
    live: &Arc<AtomicUsize>,
    protocol: &Arc<lockstep_protocol::Config>,
    stop_rx: &tokio::sync::watch::Receiver<bool>,
) {
    let Accepted {
        stream,
        peer,
        id,
        slot,
        mut conn,
    } = a;
    let protocol = protocol.clone();
    let stop = stop_rx.clone();
    let shutdown = |mut stop: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    // A dedicated thread while connections are no more than dedicated
    // threads and one is free, else the shared pool (workers[0]), whose
    // reactor the socket joins.
    let (pool, dedicated) = workers.split_first().expect("the pool runtime");
    let free = (live.load(Ordering::SeqCst) <= dedicated.len())
        .then(|| {
            dedicated
                .iter()
                .find(|w| w.live.load(Ordering::Relaxed) == 0)
        })
        .flatten();
    let Some(worker) = free else {
        pool.handle.spawn(async move {
            let _slot = slot;
            let Ok(stream) = tokio::net::TcpStream::from_std(stream) else {
                return;
            };
            let _ =
                lockstep_protocol::serve_until(stream, id, peer, conn, &protocol, shutdown(stop))
                    .await;
        });
        return;
    };
    // More connections than dedicated threads later: this one moves to
    // the pool between two commands, so that a few connections with a
    // thread each do not take the cores from the many in the pool.
    conn.crowded_at = Some((live.clone(), dedicated.len()));
    let on_worker = Slot::take(&worker.live);
    let pool = pool.handle.clone();
    worker.handle.spawn(async move {
        // Alone on its thread, the connection blocks in its reads
        // rather than waiting on the reactor (lockstep_protocol::BlockingTcp).
        let Ok(stream) = lockstep_protocol::BlockingTcp::new(stream) else {
            return;
        };
        let served = lockstep_protocol::serve_relocatable(
            stream,
            id,
            peer,
            conn,
            &protocol,
            shutdown(stop.clone()),
        )
        .await;
        drop(on_worker);
        let Served::Relocate(parked) = served else {
            return;
        };
        let Ok(parked) = parked.map_stream(|s| s.into_std()) else {
            return;
        };
        pool.spawn(async move {
            let _slot = slot;
            let Ok(parked) = parked.map_stream(tokio::net::TcpStream::from_std) else {
                return;
            };
            if let Served::Relocate(again) = parked.resume(&protocol, shutdown(stop)).await {
                again.close().await;
            }
        });
    });
}

/// A listening socket and the connections that came through it.
struct Door {
    listener: tokio::net::TcpListener,
    live: Arc<AtomicUsize>,
    /// Connections accepted beyond this many are refused with 1040.
    cap: usize,
    admin: bool,
}

impl Door {
    fn open(addr: SocketAddr, back_log: u32, cap: usize, admin: bool) -> Result<Door, String> {
        let listener =
            listen(addr, back_log).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        Ok(Door {
            listener,
            live: Arc::new(AtomicUsize::new(0)),
            cap,
            admin,
        })
    }
}

/// The next connection at `door`, or never when there is no such door.
async fn accept_at(
    door: Option<&Door>,
) -> (std::io::Result<(tokio::net::TcpStream, SocketAddr)>, &Door) {
    match door {
        Some(d) => (d.listener.accept().await, d),
        None => std::future::pending().await,
    }
}

/// The administrative door (--admin-address), if one is configured. Its
/// connections have their own count, bounded by max_connections as well,
/// so a flood there cannot grow memory without bound either.
fn admin_door(cfg: &Config) -> Result<Option<Door>, String> {
    let Some(addr) = cfg.admin_address.as_deref() else {
        return Ok(None);
    };
    let ip: IpAddr = addr
        .parse()
        .map_err(|e| format!("--admin-address {addr}: {e}"))?;
    if !ip.is_loopback() && cfg.root_password.is_empty() {
        return Err(format!(
            "refusing to listen on {ip} while root has no password: set --root-password or use a loopback --admin-address"
        ));
    }
    let addr = SocketAddr::new(ip, cfg.admin_port);
    let door = Door::open(addr, 64, cfg.max_connections, true)?;
    eprintln!("lockstep: administrative connections on {addr}");
    Ok(Some(door))
}

/// Takes a slot at `door` for a new connection and builds its session;
/// past the door's limit the client gets 1040 instead.
fn admit(
    door: &Door,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    id: u32,
    server: &Arc<Server>,
    sha2_cache: &Arc<handler::Sha2Cache>,
    stop_rx: &tokio::sync::watch::Receiver<bool>,
) -> Option<Accepted> {
    // One connection beyond max_connections is kept for an administrator
    // (checked once the login is known, handler.rs).
    if door.live.load(Ordering::SeqCst) > door.cap {
        tokio::spawn(async move {
            let too_many = Error::new(Code::ConCount, "Too many connections");
            let _ = lockstep_protocol::refuse(stream, &too_many).await;
        });
        return None;
    }
    let slot = Slot::take(&door.live);
    // The user is known after authentication (Session::login).
    let session = Session::new(server.clone(), id as u64, "", &handler::client_host(peer));
    let mut conn = handler::Connection::new(session, server.clone(), sha2_cache.clone());
    conn.admission = Some(match door.admin {
        true => handler::Admission::AdminOnly,
        false => handler::Admission::Counted(door.live.clone(), door.cap),
    });
    conn.server_stopping = Some(stop_rx.clone());
    let stream = match stream.into_std() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lockstep: handing over a connection: {e}");
            return None;
        }
    };
    conn.session.set_peer(&stream);
    Some(Accepted {
        stream,
        peer,
        id,
        slot,
        conn,
    })
}

async fn run(cfg: Config, server: Arc<Server>, workers: &[Worker]) -> Result<(), String> {
    let addr = SocketAddr::new(cfg.bind.parse().map_err(|e| format!("{e}"))?, cfg.port);
    let client = Door::open(addr, cfg.effective_back_log(), cfg.max_connections, false)?;
    let admin = admin_door(&cfg)?;
    eprintln!("lockstep: ready for connections on {addr} (version 8.0.36-lockstep)");
    let tls = tls::server_config(
        cfg.ssl_cert.as_deref(),
        cfg.ssl_key.as_deref(),
        &cfg.datadir,
    )?;
    let protocol = Arc::new(lockstep_protocol::Config {
        server_version: "8.0.36-lockstep".into(),
        max_allowed_packet: cfg.max_allowed_packet,
        connect_timeout: Duration::from_secs(cfg.connect_timeout),
        wait_timeout: Duration::from_secs(cfg.wait_timeout),
        tls: Some(tls),
        require_secure_transport: cfg.require_secure_transport,
        rsa_keys: Some(Arc::new(lockstep_protocol::caching_sha2::LazyRsaKeys::new(
            &cfg.datadir,
        ))),
    });
    let sha2_cache = Arc::new(handler::Sha2Cache::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    follow_connection_mode(&server, client.live.clone(), workers.len() - 1);
    let next_id = AtomicU32::new(1);
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| e.to_string())?;
    loop {
        let (accepted, door) = tokio::select! {
            r = client.listener.accept() => (r, &client),
            r = accept_at(admin.as_ref()) => r,
            _ = tokio::signal::ctrl_c() => break,
            _ = sigterm.recv() => break,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                eprintln!("lockstep: accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        if let Some(accepted) = admit(door, stream, peer, id, &server, &sha2_cache, &stop_rx) {
            place(accepted, workers, &door.live, &protocol, &stop_rx);
        }
    }
    let live = || {
        client.live.load(Ordering::SeqCst)
            + admin.as_ref().map_or(0, |d| d.live.load(Ordering::SeqCst))
    };
    eprintln!("lockstep: shutting down: closing {} connections", live());
    let _ = stop_tx.send(true);
    // In-flight statements finish (a commit in progress completes); idle
    // sessions close and roll back their open transactions.
    for _ in 0..100 {
        if live() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}
