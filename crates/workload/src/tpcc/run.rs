//! The measured run: N terminals (tokio tasks, one connection each) running
//! the mix back to back (or with keying/think time), with deadlock and
//! lock-timeout retries, a time series, and a final report.

use super::rng::{NuRandC, TpccRng};
use super::txn::{Ctx, Outcome, Terminal, TxnError, TxnType};
use crate::hist::Histogram;
use crate::{clock, connect_retry};
use lockstep_client::{Conn, Opts};
use parking_lot::Mutex;
use rand::Rng;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct RunOptions {
    pub terminals: usize,
    /// Taken from bmsql_config when None.
    pub warehouses: Option<i64>,
    pub duration: Duration,
    pub warmup: Duration,
    pub interval: Duration,
    /// Mean keying time before and think time after each transaction
    /// (spec 5.2.5); 0 = back to back, as the book's tests run.
    pub keying: Duration,
    pub think: Duration,
    /// Terminals pick a random warehouse per transaction instead of a home one.
    pub random_warehouse: bool,
    pub max_retries: u32,
    /// Extra time terminals get to finish after the run before they are
    /// abandoned.
    pub grace: Duration,
    pub quiet: bool,
}

/// Counters the reporter reads while the run goes on.
#[derive(Default)]
struct Live {
    done: [AtomicU64; 5],
    errors: AtomicU64,
}

/// What one terminal measured (merged at the end).
#[derive(Default)]
struct TermStats {
    hist: [Histogram; 5],
    rollbacks: u64,
    retries: u64,
    failed: [u64; 5],
    errors: BTreeMap<String, u64>,
    /// First message seen for each error key, to show in the report.
    samples: BTreeMap<String, String>,
}

impl TermStats {
    fn error(&mut self, key: String, msg: String) {
        *self.errors.entry(key.clone()).or_default() += 1;
        self.samples.entry(key).or_insert(msg);
    }

    fn merge(&mut self, o: &TermStats) {
        for i in 0..5 {
            self.hist[i].merge(&o.hist[i]);
            self.failed[i] += o.failed[i];
        }
        self.rollbacks += o.rollbacks;
        self.retries += o.retries;
        for (k, v) in &o.errors {
            *self.errors.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.samples {
            self.samples.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

struct Shared {
    live: Live,
    measuring: AtomicBool,
    stop: AtomicBool,
    stats: Mutex<TermStats>,
}

fn error_key(e: &TxnError) -> (String, bool) {
    match e {
        TxnError::Client(c) => match c.code() {
            Some(code) => (code.to_string(), false),
            None => ("connection".into(), true),
        },
        TxnError::Missing(_) => ("missing_row".into(), false),
    }
}

fn exp_delay(rng: &mut TpccRng, mean: Duration) -> Duration {
    if mean.is_zero() {
        return Duration::ZERO;
    }
    // Negative exponential, truncated at 10x the mean (spec 5.2.5.4).
    let u: f64 = rng.rng.gen_range(f64::MIN_POSITIVE..1.0);
    mean.mul_f64((-u.ln()).min(10.0))
}

/// A terminal's connection, set up for the run. Bounded in time: an
/// overloaded server must fail the run, not hang it.
async fn session(opts: &Opts) -> Result<Conn, String> {
    let setup = async {
        let mut c = connect_retry(opts, Duration::from_secs(60)).await?;
        for sql in [
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SET autocommit = 0",
        ] {
            c.query_drop(sql).await.map_err(|e| format!("{sql}: {e}"))?;
        }
        Ok(c)
    };
    tokio::time::timeout(Duration::from_secs(90), setup)
        .await
        .map_err(|_| "connection setup timed out after 90 s".to_string())?
}

/// One terminal's loop state: its connection, random stream, statistics
/// and its share of history ids.
struct TermLoop {
    opts: Opts,
    shared: Arc<Shared>,
    o: Arc<RunOptions>,
    conn: Conn,
    rng: TpccRng,
    st: TermStats,
    // This terminal's history ids: next, then every `hist_stride` after it.
    hist_id: i64,
    hist_stride: i64,
}

async fn terminal(
    opts: Opts,
    shared: Arc<Shared>,
    term: Terminal,
    c: NuRandC,
    (hist_id, hist_stride): (i64, i64),
    o: Arc<RunOptions>,
    conn: Conn,
) {
    let mut tl = TermLoop {
        opts,
        shared,
        o,
        conn,
        rng: TpccRng::new(c),
        st: TermStats::default(),
        hist_id,
        hist_stride,
    };
    while !tl.shared.stop.load(Ordering::Relaxed) {
        let t = TxnType::pick(&mut tl.rng);
        let mut term = term;
        if tl.o.random_warehouse {
            term.w_id = tl.rng.uniform(1, term.warehouses);
            term.d_id = tl.rng.uniform(1, 10);
        }
        tl.pause(tl.o.keying).await;
        let start = Instant::now();
        let result = tl.attempt(t, term).await;
        tl.record(t, start.elapsed(), result);
        tl.pause(tl.o.think).await;
    }
    let _ = tl.conn.query_drop("ROLLBACK").await;
    let _ = tl.conn.close().await;
    tl.shared.stats.lock().merge(&tl.st);
}

impl TermLoop {
    /// Keying or think time: exponential around `mean`.
    async fn pause(&mut self, mean: Duration) {
        let d = exp_delay(&mut self.rng, mean);
        if !d.is_zero() {
            tokio::time::sleep(d).await;
        }
    }

    /// Runs one transaction, retrying deadlocks and lock timeouts up to
    /// max_retries; a fatal error reconnects and loses the transaction.
    async fn attempt(&mut self, t: TxnType, term: Terminal) -> Result<Outcome, TxnError> {
        let mut attempt = 0;
        loop {
            let mut ctx = Ctx {
                conn: &mut self.conn,
                rng: &mut self.rng,
                term,
                next_hist_id: &mut self.hist_id,
                hist_stride: self.hist_stride,
            };
            let r = ctx.run(t).await;
            let Err(e) = r else { return r };
            let (key, fatal) = error_key(&e);
            let measuring = self.shared.measuring.load(Ordering::Relaxed);
            if measuring {
                self.st.error(key, e.to_string());
            }
            self.shared.live.errors.fetch_add(1, Ordering::Relaxed);
            if fatal {
                self.reconnect().await;
                return Err(e);
            }
            let _ = self.conn.query_drop("ROLLBACK").await;
            let retryable =
                matches!(&e, TxnError::Client(c) if c.is_deadlock() || c.is_lock_timeout());
            let stopping = self.shared.stop.load(Ordering::Relaxed);
            if !retryable || attempt >= self.o.max_retries || stopping {
                return Err(e);
            }
            attempt += 1;
            if measuring {
                self.st.retries += 1;
            }
        }
    }

    /// Reconnects until it works or the run stops (the server may be
    /// restarting).
    async fn reconnect(&mut self) {
        while !self.shared.stop.load(Ordering::Relaxed) {
            match session(&self.opts).await {
                Ok(c) => {
                    self.conn = c;
                    return;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    }

    fn record(&mut self, t: TxnType, elapsed: Duration, result: Result<Outcome, TxnError>) {
        let i = t as usize;
        let measuring = self.shared.measuring.load(Ordering::Relaxed);
        match result {
            Ok(outcome) => {
                self.shared.live.done[i].fetch_add(1, Ordering::Relaxed);
                if measuring {
                    self.st.hist[i].record(elapsed.as_micros() as u64);
                    if outcome == Outcome::RolledBack {
                        self.st.rollbacks += 1;
                    }
                }
            }
            Err(_) if measuring => self.st.failed[i] += 1,
            Err(_) => {}
        }
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// What a run starts from: the warehouse count, the run's NURand C and
/// the first free history id.
async fn read_setup(opts: &Opts, o: &RunOptions) -> Result<(i64, NuRandC, i64), String> {
    let mut setup = session(opts).await?;
    let e = |e: lockstep_client::Error| e.to_string();
    let cfg = setup
        .query("SELECT cfg_name, cfg_value FROM bmsql_config")
        .await
        .map_err(|err| format!("reading bmsql_config (did you run load?): {err}"))?;
    let mut config = BTreeMap::new();
    for r in &cfg.rows {
        config.insert(
            r[0].to_string(),
            r[1].to_string().parse::<i64>().unwrap_or(0),
        );
    }
    let warehouses = match o.warehouses {
        Some(w) => w,
        None => *config
            .get("warehouses")
            .ok_or("bmsql_config has no 'warehouses' row")?,
    };
    let c_load = config.get("nURandCLast").copied().unwrap_or(0);
    let c_run = NuRandC::for_run(c_load, &mut rand::thread_rng());
    let max_hist = setup
        .query("SELECT MAX(hist_id) FROM bmsql_history")
        .await
        .map_err(e)?;
    let hist_base = max_hist.scalar().and_then(|v| v.to_i64()).unwrap_or(0) + 1;
    let _ = setup.query_drop("COMMIT").await;
    let _ = setup.close().await;
    Ok((warehouses, c_run, hist_base))
}

/// The run's JSON report from the merged terminal statistics.
fn report(
    st: &TermStats,
    o: &RunOptions,
    warehouses: i64,
    measured: f64,
    unfinished: usize,
    series: Vec<Json>,
) -> Json {
    let mut txn = serde_json::Map::new();
    let mut all = Histogram::default();
    let mut committed_total = 0;
    for t in TxnType::ALL {
        let h = &st.hist[t as usize];
        all.merge(h);
        committed_total += h.count();
        txn.insert(
            t.name().into(),
            json!({
                "count": h.count(),
                "failed": st.failed[t as usize],
                "per_sec": h.count() as f64 / measured,
                "mean_ms": h.mean() / 1000.0,
                "p50_ms": ms(h.quantile(0.50)),
                "p95_ms": ms(h.quantile(0.95)),
                "p99_ms": ms(h.quantile(0.99)),
                "max_ms": ms(h.max()),
            }),
        );
    }
    let new_orders = st.hist[0].count();
    let errors_total: u64 = st.errors.values().sum();
    json!({
        "benchmark": "tpcc",
        "warehouses": warehouses,
        "terminals": o.terminals,
        "duration_s": measured,
        "warmup_s": o.warmup.as_secs_f64(),
        "tpmC": new_orders as f64 / measured * 60.0,
        "tps": committed_total as f64 / measured,
        "transactions": committed_total,
        "new_order_rollbacks": st.rollbacks,
        "retries": st.retries,
        "errors_total": errors_total,
        "errors": st.errors,
        "error_samples": st.samples,
        "unfinished_terminals": unfinished,
        "latency_all": {
            "p50_ms": ms(all.quantile(0.50)),
            "p95_ms": ms(all.quantile(0.95)),
            "p99_ms": ms(all.quantile(0.99)),
            "max_ms": ms(all.max()),
        },
        "txn": txn,
        "series": series,
    })
}

/// What every terminal starts from (read_setup's answer).
struct Start {
    warehouses: i64,
    c_run: NuRandC,
    hist_base: i64,
}

/// Terminals are spread round robin over the warehouses, and over the
/// districts within a warehouse (the district is Stock-Level's).
fn spawn_terminals(
    opts: &Opts,
    shared: &Arc<Shared>,
    o: &Arc<RunOptions>,
    conns: Vec<Conn>,
    start: &Start,
) -> Vec<tokio::task::JoinHandle<()>> {
    let stride = o.terminals as i64;
    let warehouses = start.warehouses;
    let mut handles = Vec::with_capacity(o.terminals);
    for (i, conn) in conns.into_iter().enumerate() {
        let term = Terminal {
            w_id: i as i64 % warehouses + 1,
            d_id: (i as i64 / warehouses) % 10 + 1,
            warehouses,
        };
        handles.push(tokio::spawn(terminal(
            opts.clone(),
            shared.clone(),
            term,
            start.c_run,
            (start.hist_base + i as i64, stride),
            o.clone(),
            conn,
        )));
    }
    handles
}

/// The per-interval series: rates since the previous tick.
#[derive(Default)]
struct Sampler {
    series: Vec<Json>,
    last: [u64; 5],
    last_err: u64,
}

impl Sampler {
    fn sample(&mut self, live: &Live, tick: &clock::Tick, quiet: bool) {
        let cur: Vec<u64> = live
            .done
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        let errs = live.errors.load(Ordering::Relaxed);
        let txns: u64 = cur.iter().zip(&self.last).map(|(a, b)| a - b).sum();
        let tps = txns as f64 / tick.dt;
        let tpmc = (cur[0] - self.last[0]) as f64 / tick.dt * 60.0;
        let t = tick.t;
        let errors = errs - self.last_err;
        if !quiet {
            eprintln!(
                "[{t:6.1}s] tps {tps:9.1}  tpmC {tpmc:10.0}  errors {errors:5}{}",
                if tick.warm { "  (warmup)" } else { "" }
            );
        }
        self.series
            .push(json!({"t": (t * 10.0).round() / 10.0, "tps": tps,
            "tpmC": tpmc, "errors": errors, "warmup": tick.warm}));
        self.last.copy_from_slice(&cur);
        self.last_err = errs;
    }
}

pub async fn run(opts: &Opts, o: RunOptions) -> Result<Json, String> {
    let o = Arc::new(o);
    let (warehouses, c_run, hist_base) = read_setup(opts, &o).await?;

    let shared = Arc::new(Shared {
        live: Live::default(),
        measuring: AtomicBool::new(o.warmup.is_zero()),
        stop: AtomicBool::new(false),
        stats: Mutex::new(TermStats::default()),
    });

    // Connect every terminal before the clock starts.
    let connect_start = Instant::now();
    let conns = crate::connect_all(o.terminals, |_| {
        let opts = opts.clone();
        async move { session(&opts).await }
    })
    .await?;
    if !o.quiet {
        eprintln!(
            "{} terminals connected in {:.1}s; {} warehouses; running {}s (+{}s warmup)",
            o.terminals,
            connect_start.elapsed().as_secs_f64(),
            warehouses,
            o.duration.as_secs(),
            o.warmup.as_secs()
        );
    }

    let start = Start {
        warehouses,
        c_run,
        hist_base,
    };
    let handles = spawn_terminals(opts, &shared, &o, conns, &start);
    let window = clock::Window {
        warmup: o.warmup,
        duration: o.duration,
        interval: o.interval,
    };
    let mut sampler = Sampler::default();
    let measured = clock::run(&window, &shared.measuring, &shared.stop, |tick| {
        sampler.sample(&shared.live, &tick, o.quiet)
    })
    .await;

    // Let terminals finish their transaction; abandon any that hang.
    let unfinished = clock::join_within(handles, o.grace).await;

    let st = shared.stats.lock();
    Ok(report(
        &st,
        &o,
        warehouses,
        measured,
        unfinished,
        sampler.series,
    ))
}

/// Human-readable summary of a report.
pub fn print_report(r: &Json) {
    let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
    println!(
        "tpmC {:.0}  (New-Order commits per minute, incl. {} rolled back by spec)",
        f("tpmC"),
        r["new_order_rollbacks"]
    );
    println!(
        "total {:.1} txn/s over {:.1}s, {} terminals, {} warehouses",
        f("tps"),
        f("duration_s"),
        r["terminals"],
        r["warehouses"]
    );
    println!(
        "{:<13} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "transaction", "count", "failed", "p50 ms", "p95 ms", "p99 ms", "max ms"
    );
    for t in TxnType::ALL {
        let x = &r["txn"][t.name()];
        let g = |k: &str| x[k].as_f64().unwrap_or(0.0);
        println!(
            "{:<13} {:>9} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
            t.name(),
            x["count"].as_u64().unwrap_or(0),
            x["failed"].as_u64().unwrap_or(0),
            g("p50_ms"),
            g("p95_ms"),
            g("p99_ms"),
            g("max_ms")
        );
    }
    println!(
        "retries {}  errors {}  {}",
        r["retries"], r["errors_total"], r["errors"]
    );
    if let Some(s) = r["error_samples"].as_object() {
        for (k, v) in s {
            println!("  {k}: {}", v.as_str().unwrap_or(""));
        }
    }
    if r["unfinished_terminals"].as_u64().unwrap_or(0) > 0 {
        println!(
            "WARNING: {} terminals did not finish within the grace period",
            r["unfinished_terminals"]
        );
    }
}
