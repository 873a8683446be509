//! `lockstep-workload tpcc load|run|check` and `lockstep-workload oltp`: see the
//! crate docs.

use clap::{Args, Parser, Subcommand};
use lockstep_client::Opts;
use lockstep_workload::tpcc::{check, load, run};
use lockstep_workload::{clock, connect_retry, oltp};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "lockstep-workload",
    about = "Benchmarks against any MySQL-compatible server"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// TPC-C on BenchmarkSQL's schema.
    Tpcc {
        #[command(subcommand)]
        cmd: Tpcc,
    },
    /// sysbench's oltp_point_select, oltp_read_write or oltp_write_only on
    /// the tables `sysbench prepare` made, with connections multiplexed over
    /// a few threads.
    Oltp(OltpArgs),
}

#[derive(Subcommand)]
enum Tpcc {
    /// Create the schema and load the initial population.
    Load(LoadArgs),
    /// Run terminals for a while and report tpmC, throughput and latency.
    Run(RunArgs),
    /// Check consistency conditions 1-4 (exit code 1 if one fails).
    Check(Common),
}

#[derive(Args, Clone)]
struct Common {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 3306)]
    port: u16,
    #[arg(long, default_value = "root")]
    user: String,
    #[arg(long, default_value = "")]
    password: String,
    /// Default: tpcc, or sbtest for oltp.
    #[arg(long)]
    database: Option<String>,
    /// Runtime worker threads (default: number of CPUs).
    #[arg(long)]
    threads: Option<usize>,
}

impl Common {
    fn opts(&self, default_db: &str) -> Opts {
        let db = self.database.as_deref().unwrap_or(default_db);
        Opts::new(&self.host, self.port, &self.user, &self.password).database(db)
    }
}

#[derive(Args)]
struct LoadArgs {
    #[command(flatten)]
    common: Common,
    #[arg(long, default_value_t = 1)]
    warehouses: i64,
    /// Loader tasks at once (one per warehouse plus one for items are queued).
    #[arg(long, default_value_t = 8)]
    loaders: usize,
    /// Rows per INSERT.
    #[arg(long, default_value_t = 500)]
    batch: usize,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    common: Common,
    /// Defaults to the count in bmsql_config.
    #[arg(long)]
    warehouses: Option<i64>,
    #[arg(long, default_value_t = 10)]
    terminals: usize,
    /// Measured seconds (after the warmup).
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    #[arg(long, default_value_t = 0.0)]
    warmup: f64,
    /// Seconds between time-series lines.
    #[arg(long, default_value_t = 5.0)]
    interval: f64,
    /// Mean keying time in ms before each transaction (0 = none).
    #[arg(long, default_value_t = 0.0)]
    keying_ms: f64,
    /// Mean think time in ms after each transaction (0 = none).
    #[arg(long, default_value_t = 0.0)]
    think_ms: f64,
    /// Pick a random warehouse for each transaction instead of a home one.
    #[arg(long)]
    random_warehouse: bool,
    /// Retries of a transaction that hit a deadlock (1213) or lock wait timeout (1205).
    #[arg(long, default_value_t = 10)]
    max_retries: u32,
    /// Seconds terminals get to finish after the run before they are abandoned.
    #[arg(long, default_value_t = 60.0)]
    grace: f64,
    /// Write the final report as JSON here.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// No time-series lines.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args)]
struct OltpArgs {
    #[command(flatten)]
    common: Common,
    #[arg(long, value_enum, default_value = "read-write")]
    test: oltp::Test,
    #[arg(long, default_value_t = 16)]
    connections: usize,
    #[arg(long, default_value_t = 4)]
    tables: usize,
    #[arg(long, default_value_t = 100_000)]
    table_size: i64,
    /// Measured seconds (after the warmup).
    #[arg(long, default_value_t = 30.0)]
    duration: f64,
    #[arg(long, default_value_t = 0.0)]
    warmup: f64,
    /// Seconds between time-series lines.
    #[arg(long, default_value_t = 5.0)]
    interval: f64,
    /// Write the final report as JSON here.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// No time-series lines.
    #[arg(long)]
    quiet: bool,
}

fn write_json(path: &Option<std::path::PathBuf>, report: &serde_json::Value) -> Result<(), String> {
    if let Some(path) = path {
        let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

async fn tpcc_main(cmd: Tpcc) -> Result<(), String> {
    match cmd {
        Tpcc::Load(a) => {
            load::load(
                &a.common.opts("tpcc"),
                &load::LoadOptions {
                    warehouses: a.warehouses.max(1),
                    workers: a.loaders,
                    batch: a.batch.max(1),
                },
            )
            .await
        }
        Tpcc::Run(a) => {
            let report = run::run(
                &a.common.opts("tpcc"),
                run::RunOptions {
                    terminals: a.terminals.max(1),
                    warehouses: a.warehouses,
                    duration: secs(a.duration),
                    warmup: secs(a.warmup),
                    interval: secs(a.interval.max(0.1)),
                    keying: secs(a.keying_ms / 1000.0),
                    think: secs(a.think_ms / 1000.0),
                    random_warehouse: a.random_warehouse,
                    max_retries: a.max_retries,
                    grace: secs(a.grace),
                    quiet: a.quiet,
                },
            )
            .await?;
            run::print_report(&report);
            write_json(&a.json, &report)
        }
        Tpcc::Check(a) => {
            let mut c = connect_retry(&a.opts("tpcc"), Duration::from_secs(30)).await?;
            let failures = check::check(&mut c).await?;
            if failures.is_empty() {
                println!("consistency conditions 1-4: OK");
                Ok(())
            } else {
                for f in &failures {
                    println!("FAILED {f}");
                }
                Err(format!("{} consistency check(s) failed", failures.len()))
            }
        }
    }
}

async fn oltp_main(a: OltpArgs) -> Result<(), String> {
    let report = oltp::run(
        &a.common.opts("sbtest"),
        oltp::OltpOptions {
            test: a.test,
            connections: a.connections.max(1),
            tables: a.tables.max(1),
            table_size: a.table_size.max(1),
            window: clock::Window {
                warmup: secs(a.warmup),
                duration: secs(a.duration),
                interval: secs(a.interval.max(0.1)),
            },
            grace: Duration::from_secs(60),
            quiet: a.quiet,
        },
    )
    .await?;
    oltp::print_report(&report);
    write_json(&a.json, &report)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let threads = match &cli.cmd {
        Bench::Tpcc { cmd: Tpcc::Load(a) } => a.common.threads,
        Bench::Tpcc { cmd: Tpcc::Run(a) } => a.common.threads,
        Bench::Tpcc {
            cmd: Tpcc::Check(a),
        } => a.threads,
        Bench::Oltp(a) => a.common.threads,
    };
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all();
    if let Some(n) = threads {
        rt.worker_threads(n.max(1));
    }
    let rt = match rt.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lockstep-workload: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.cmd {
        Bench::Tpcc { cmd } => rt.block_on(tpcc_main(cmd)),
        Bench::Oltp(a) => rt.block_on(oltp_main(a)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lockstep-workload: {e}");
            ExitCode::FAILURE
        }
    }
}
