//! Group-commit microbenchmark: N committers each append a ~200-byte record and
//! wait until it is durable (FlushMode::EveryCommit unless --mode says else).
//!
//! cargo bench -p lockstep-log --bench commit -- \
//!     --threads 1,4,16,64,256,1024 --seconds 3 [--dir /path] [--mode 1|2|0]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use lockstep_log::{FlushMode, Log, LogConfig};

fn main() {
    let mut threads = vec![1, 4, 16, 64, 256, 1024];
    let mut seconds = 3.0f64;
    let mut dir = std::env::temp_dir();
    let mut mode = FlushMode::EveryCommit;
    // `cargo bench` adds --bench.
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_default();
        match a.as_str() {
            "--threads" => {
                threads = v
                    .split(',')
                    .map(|x| x.trim().parse().expect("thread count"))
                    .collect()
            }
            "--seconds" => seconds = v.parse().expect("seconds"),
            "--dir" => dir = PathBuf::from(v),
            "--mode" => {
                mode = match v.as_str() {
                    "1" => FlushMode::EveryCommit,
                    "2" => FlushMode::WriteOnly,
                    "0" => FlushMode::PerSecond,
                    _ => panic!("--mode 1|2|0"),
                }
            }
            _ => panic!("unknown argument {a}"),
        }
    }
    println!("mode {mode:?}, {seconds} s per point, 200-byte records");
    println!(
        "{:>7} {:>12} {:>10} {:>10} {:>10} {:>12} {:>10}",
        "threads", "commits/s", "p50 us", "p99 us", "max us", "commits/fsync", "fsyncs/s"
    );
    for &n in &threads {
        run(n, seconds, &dir, mode);
    }
}

fn run(n: usize, seconds: f64, base: &std::path::Path, mode: FlushMode) {
    let dir = base.join(format!("lockstep-commit-bench-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = LogConfig::new(&dir);
    cfg.flush_mode = mode;
    let (log, _) = Log::open(cfg, 0).expect("open log");
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(n + 1);
    let payload = [0x5Au8; 200];
    let (lat, elapsed, fsyncs) = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..n)
            .map(|_| {
                let (log, stop, barrier) = (&log, &stop, &barrier);
                std::thread::Builder::new()
                    .stack_size(128 << 10)
                    .spawn_scoped(sc, move || {
                        let mut lat: Vec<u32> = Vec::with_capacity(1 << 16);
                        barrier.wait();
                        while !stop.load(Ordering::Relaxed) {
                            let t = Instant::now();
                            let end = log.append(&payload).expect("append");
                            log.wait_durable_blocking(end).expect("durable");
                            lat.push(t.elapsed().as_micros().min(u32::MAX as u128) as u32);
                        }
                        lat
                    })
                    .expect("spawn")
            })
            .collect();
        barrier.wait();
        let f0 = log.stats().fsyncs;
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        let elapsed = t0.elapsed();
        let f1 = log.stats().fsyncs;
        let mut lat: Vec<u32> = hs.into_iter().flat_map(|h| h.join().unwrap()).collect();
        lat.sort_unstable();
        (lat, elapsed, f1 - f0)
    });
    drop(log);
    let _ = std::fs::remove_dir_all(&dir);
    let commits = lat.len() as f64;
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "{:>7} {:>12.0} {:>10} {:>10} {:>10} {:>12.1} {:>10.0}",
        n,
        commits / elapsed.as_secs_f64(),
        pct(0.50),
        pct(0.99),
        lat.last().copied().unwrap_or(0),
        if fsyncs > 0 {
            commits / fsyncs as f64
        } else {
            0.0
        },
        fsyncs as f64 / elapsed.as_secs_f64()
    );
}
