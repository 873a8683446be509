//! sysbench's OLTP tests (oltp_point_select, oltp_read_write,
//! oltp_write_only) with the statements, parameters and defaults of
//! /usr/share/sysbench/oltp_*.lua, on the tables `sysbench ... prepare`
//! made, from a driver whose cost per transaction does not grow with the
//! number of connections.
//!
//! Why a second client: sysbench runs one OS thread per connection, so at
//! 1024 connections it pays a context switch per statement among 1024
//! threads, and on a machine where it shares the cores with the server that
//! cost comes out of the server's share (docs/architecture.md, "Where
//! throughput drops with connections"). Here the connections are tasks on a
//! small runtime: one thread wakes for many replies. Running the same
//! statements both ways tells the server's curve from the client's. The
//! real sysbench stays the reference in the sweeps.

use crate::clock;
use crate::hist::Histogram;
use lockstep_client::{Conn, Error, Opts, Statement};
use lockstep_types::Value;
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Test {
    PointSelect,
    ReadWrite,
    WriteOnly,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::PointSelect => "oltp_point_select",
            Test::ReadWrite => "oltp_read_write",
            Test::WriteOnly => "oltp_write_only",
        }
    }
}

pub struct OltpOptions {
    pub test: Test,
    pub connections: usize,
    pub tables: usize,
    pub table_size: i64,
    pub window: clock::Window,
    pub grace: Duration,
    pub quiet: bool,
}

/// oltp_common.lua's defaults.
const POINT_SELECTS: usize = 10;
const RANGE_SIZE: i64 = 100;

/// The statements of oltp_common.lua. Each table has its own text of each.
#[derive(Clone, Copy, Debug)]
enum Sql {
    Begin,
    Commit,
    Point,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

const SQL_KINDS: usize = Sql::Insert as usize + 1;

impl Sql {
    const ALL: [Sql; SQL_KINDS] = [
        Sql::Begin,
        Sql::Commit,
        Sql::Point,
        Sql::SimpleRange,
        Sql::SumRange,
        Sql::OrderRange,
        Sql::DistinctRange,
        Sql::IndexUpdate,
        Sql::NonIndexUpdate,
        Sql::Delete,
        Sql::Insert,
    ];

    fn text(self, t: usize) -> String {
        match self {
            Sql::Begin => "BEGIN".into(),
            Sql::Commit => "COMMIT".into(),
            Sql::Point => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Sql::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Sql::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Sql::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Sql::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Sql::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Sql::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Sql::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Sql::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        }
    }
}

/// Every statement's text, per table (tables are numbered from 1). BEGIN and
/// COMMIT read the same for every table; callers run table 0's.
type Texts = Vec<[String; SQL_KINDS]>;

fn texts(tables: usize) -> Texts {
    (1..=tables.max(1))
        .map(|t| Sql::ALL.map(|sql| sql.text(t)))
        .collect()
}

/// One connection's statements, prepared on first use as sysbench's
/// `con:prepare` does. They are kept by table and kind rather than looked up
/// by text: at 1024 connections a hash of the text and a compare with a key
/// in the connection's cold map cost more client CPU per statement than at 64
/// (perf, session 24), and that CPU comes out of the server's two cores.
type Prepared = Vec<[Option<Statement>; SQL_KINDS]>;

/// One connection's state: its random source and the statements.
struct Client<'a> {
    conn: &'a mut Conn,
    rng: &'a mut StdRng,
    texts: &'a Texts,
    prepared: &'a mut Prepared,
    table_size: i64,
    /// Statements sent in this event.
    statements: u64,
}

impl Client<'_> {
    /// A random table (an index into the texts).
    fn table(&mut self) -> usize {
        self.rng.gen_range(0..self.texts.len())
    }

    fn id(&mut self) -> Value {
        Value::Int(self.rng.gen_range(1..=self.table_size))
    }

    /// sysbench's `c` and `pad` templates: groups of 11 random digits joined
    /// by '-' (10 groups for c, 5 for pad).
    fn digits(&mut self, groups: usize) -> Value {
        let mut s = Vec::with_capacity(groups * 12);
        for g in 0..groups {
            if g > 0 {
                s.push(b'-');
            }
            for _ in 0..11 {
                s.push(b'0' + self.rng.gen_range(0..10u8));
            }
        }
        Value::Bytes(s)
    }

    async fn run(&mut self, table: usize, sql: Sql, params: &[Value]) -> Result<(), Error> {
        self.statements += 1;
        let stmt = match self.prepared[table][sql as usize] {
            Some(stmt) => stmt,
            None => {
                let stmt = self.conn.prepare(&self.texts[table][sql as usize]).await?;
                self.prepared[table][sql as usize] = Some(stmt);
                stmt
            }
        };
        self.conn.execute_statement(stmt, params).await.map(drop)
    }

    async fn event(&mut self, test: Test) -> Result<(), Error> {
        match test {
            Test::PointSelect => {
                let t = self.table();
                let id = self.id();
                self.run(t, Sql::Point, &[id]).await
            }
            Test::ReadWrite => {
                self.run(0, Sql::Begin, &[]).await?;
                let t = self.table();
                for _ in 0..POINT_SELECTS {
                    let id = self.id();
                    self.run(t, Sql::Point, &[id]).await?;
                }
                // Each range query picks its table, as execute_range does.
                for sql in [
                    Sql::SimpleRange,
                    Sql::SumRange,
                    Sql::OrderRange,
                    Sql::DistinctRange,
                ] {
                    let t = self.table();
                    let from = self.rng.gen_range(1..=self.table_size);
                    let range = [Value::Int(from), Value::Int(from + RANGE_SIZE - 1)];
                    self.run(t, sql, &range).await?;
                }
                self.writes().await?;
                self.run(0, Sql::Commit, &[]).await
            }
            Test::WriteOnly => {
                self.run(0, Sql::Begin, &[]).await?;
                self.writes().await?;
                self.run(0, Sql::Commit, &[]).await
            }
        }
    }

    /// The write part of read_write and write_only: an index update, a
    /// non-index update, and a delete and insert of the same id.
    async fn writes(&mut self) -> Result<(), Error> {
        let t = self.table();
        let id = self.id();
        self.run(t, Sql::IndexUpdate, &[id]).await?;
        let t = self.table();
        let c = self.digits(10);
        let id = self.id();
        self.run(t, Sql::NonIndexUpdate, &[c, id]).await?;
        let t = self.table();
        let id = self.id();
        let k = self.id();
        self.run(t, Sql::Delete, std::slice::from_ref(&id)).await?;
        let c = self.digits(10);
        let pad = self.digits(5);
        self.run(t, Sql::Insert, &[id, k, c, pad]).await
    }
}

#[derive(Default)]
struct Stats {
    hist: Histogram,
    statements: u64,
    /// Deadlocks and lock wait timeouts: the event is rolled back and run
    /// again, as sysbench's --mysql-ignore-errors=1213,1205 does.
    ignored: u64,
    errors: BTreeMap<String, u64>,
}

struct Shared {
    events: AtomicU64,
    statements: AtomicU64,
    measuring: AtomicBool,
    stop: AtomicBool,
    stats: Mutex<Stats>,
}

async fn worker(mut conn: Conn, shared: Arc<Shared>, texts: Arc<Texts>, o: Arc<OltpOptions>) {
    let mut rng = StdRng::from_entropy();
    let mut prepared: Prepared = vec![[None; SQL_KINDS]; texts.len()];
    let mut st = Stats::default();
    while !shared.stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        let mut c = Client {
            conn: &mut conn,
            rng: &mut rng,
            texts: &texts,
            prepared: &mut prepared,
            table_size: o.table_size,
            statements: 0,
        };
        let r = c.event(o.test).await;
        let statements = c.statements;
        let measuring = shared.measuring.load(Ordering::Relaxed);
        shared.statements.fetch_add(statements, Ordering::Relaxed);
        if measuring {
            st.statements += statements;
        }
        match r {
            Ok(()) => {
                shared.events.fetch_add(1, Ordering::Relaxed);
                if measuring {
                    st.hist.record(start.elapsed().as_micros() as u64);
                }
            }
            Err(e) => {
                let fatal = e.is_fatal();
                if measuring {
                    if e.is_deadlock() || e.is_lock_timeout() {
                        st.ignored += 1;
                    } else {
                        let key = e.code().map_or("connection".into(), |c| c.to_string());
                        *st.errors.entry(key).or_default() += 1;
                    }
                }
                if fatal {
                    break;
                }
                let _ = conn.query_drop("ROLLBACK").await;
            }
        }
    }
    let _ = conn.close().await;
    let mut all = shared.stats.lock();
    all.hist.merge(&st.hist);
    all.statements += st.statements;
    all.ignored += st.ignored;
    for (k, v) in st.errors {
        *all.errors.entry(k).or_default() += v;
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Runs `o.test` on `o.connections` connections and returns the report.
pub async fn run(opts: &Opts, o: OltpOptions) -> Result<Json, String> {
    let o = Arc::new(o);
    let texts = Arc::new(texts(o.tables));
    let started = Instant::now();
    let conns = crate::connect_all(o.connections, |_| {
        let opts = opts.clone();
        async move { crate::connect_retry(&opts, Duration::from_secs(60)).await }
    })
    .await?;
    if !o.quiet {
        eprintln!(
            "{} connections in {:.1}s; {} for {}s (+{}s warmup)",
            o.connections,
            started.elapsed().as_secs_f64(),
            o.test.name(),
            o.window.duration.as_secs(),
            o.window.warmup.as_secs()
        );
    }
    let shared = Arc::new(Shared {
        events: AtomicU64::new(0),
        statements: AtomicU64::new(0),
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        stats: Mutex::new(Stats::default()),
    });
    let handles: Vec<_> = conns
        .into_iter()
        .map(|c| tokio::spawn(worker(c, shared.clone(), texts.clone(), o.clone())))
        .collect();
    let mut series = Vec::new();
    let (mut last_events, mut last_statements) = (0, 0);
    let measured = clock::run(&o.window, &shared.measuring, &shared.stop, |tick| {
        let events = shared.events.load(Ordering::Relaxed);
        let statements = shared.statements.load(Ordering::Relaxed);
        let tps = (events - last_events) as f64 / tick.dt;
        let qps = (statements - last_statements) as f64 / tick.dt;
        if !o.quiet {
            eprintln!(
                "[{:6.1}s] tps {tps:9.1}  qps {qps:10.1}{}",
                tick.t,
                if tick.warm { "  (warmup)" } else { "" }
            );
        }
        series.push(
            json!({"t": (tick.t * 10.0).round() / 10.0, "tps": tps, "qps": qps,
                           "warmup": tick.warm}),
        );
        (last_events, last_statements) = (events, statements);
    })
    .await;
    let unfinished = clock::join_within(handles, o.grace).await;
    let st = shared.stats.lock();
    Ok(json!({
        "benchmark": o.test.name(),
        "connections": o.connections,
        "duration_s": measured,
        "warmup_s": o.window.warmup.as_secs_f64(),
        "tps": st.hist.count() as f64 / measured,
        "qps": st.statements as f64 / measured,
        "events": st.hist.count(),
        "ignored_errors": st.ignored,
        "errors": st.errors,
        "unfinished_connections": unfinished,
        "latency": {
            "mean_ms": st.hist.mean() / 1000.0,
            "p50_ms": ms(st.hist.quantile(0.50)),
            "p95_ms": ms(st.hist.quantile(0.95)),
            "p99_ms": ms(st.hist.quantile(0.99)),
            "max_ms": ms(st.hist.max()),
        },
        "series": series,
    }))
}

/// Human-readable summary of a report.
pub fn print_report(r: &Json) {
    let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
    let l = |k: &str| r["latency"][k].as_f64().unwrap_or(0.0);
    println!(
        "{}: {:.1} tps, {:.1} qps over {:.1}s on {} connections",
        r["benchmark"].as_str().unwrap_or(""),
        f("tps"),
        f("qps"),
        f("duration_s"),
        r["connections"]
    );
    println!(
        "latency ms: p50 {:.2}  p95 {:.2}  p99 {:.2}  max {:.2}",
        l("p50_ms"),
        l("p95_ms"),
        l("p99_ms"),
        l("max_ms")
    );
    println!(
        "ignored errors (1213, 1205) {}  errors {}",
        r["ignored_errors"], r["errors"]
    );
    if r["unfinished_connections"].as_u64().unwrap_or(0) > 0 {
        println!(
            "WARNING: {} connections did not finish within the grace period",
            r["unfinished_connections"]
        );
    }
}
