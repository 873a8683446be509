//! Lock table microbenchmark (book 7.1.2): one latch vs a sharded lock
//! table. Each thread runs short transactions that take ~10 X locks on
//! random keys of a 100k keyspace and then release them all.
//!
//! cargo bench -p lockstep-lock --bench locks -- [millis-per-case]

use lockstep_lock::{Acquire, GrantPolicy, LockConfig, LockKey, LockMode, LockSys};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

const KEYS: u64 = 100_000;
const LOCKS_PER_TXN: usize = 10;

fn block_on<F: Future>(f: F) -> F::Output {
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

struct Result {
    locks_per_s: f64,
    txn_per_s: f64,
    waits: u64,
    deadlocks: u64,
}

fn run(shards: usize, policy: GrantPolicy, keys: u64, threads: usize, budget: Duration) -> Result {
    let l = Arc::new(LockSys::new(LockConfig { shards, policy }));
    let stop = Arc::new(AtomicBool::new(false));
    let locks = Arc::new(AtomicU64::new(0));
    let txns = Arc::new(AtomicU64::new(0));
    let next_trx = Arc::new(AtomicU64::new(1));
    let barrier = Arc::new(Barrier::new(threads + 1));
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (l, stop, locks, txns, next_trx, barrier) = (
                l.clone(),
                stop.clone(),
                locks.clone(),
                txns.clone(),
                next_trx.clone(),
                barrier.clone(),
            );
            std::thread::spawn(move || {
                let mut rng = (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let mut held = Vec::with_capacity(LOCKS_PER_TXN);
                let (mut nl, mut nt) = (0u64, 0u64);
                barrier.wait();
                while !stop.load(Ordering::Relaxed) {
                    let txn = next_trx.fetch_add(1, Ordering::Relaxed);
                    held.clear();
                    let mut committed = true;
                    for _ in 0..LOCKS_PER_TXN {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        let key = LockKey(rng % keys);
                        let ok = match l.acquire_weighted(
                            txn,
                            key,
                            LockMode::Exclusive,
                            held.len() as u64,
                        ) {
                            Acquire::Granted => true,
                            Acquire::Wait(w) => block_on(w).is_ok(),
                            Acquire::Deadlock => false,
                        };
                        if !ok {
                            committed = false;
                            break;
                        }
                        if !held.contains(&key) {
                            held.push(key);
                        }
                        nl += 1;
                    }
                    l.release_all(txn, &held);
                    nt += committed as u64;
                }
                locks.fetch_add(nl, Ordering::Relaxed);
                txns.fetch_add(nt, Ordering::Relaxed);
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    std::thread::sleep(budget);
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    let st = l.stats();
    Result {
        locks_per_s: locks.load(Ordering::Relaxed) as f64 / secs,
        txn_per_s: txns.load(Ordering::Relaxed) as f64 / secs,
        waits: st.waits,
        deadlocks: st.deadlocks,
    }
}

fn main() {
    let ms: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    let budget = Duration::from_millis(ms);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("X locks on random keys of {KEYS}, {LOCKS_PER_TXN} per txn; {cores} cores; locks/s (committed txn/s) [waits, deadlocks]");
    println!(
        "{:>8} | {:>34} | {:>34}",
        "threads", "1 shard", "512 shards"
    );
    for &threads in &[1usize, 4, 16, 64, 256] {
        let a = run(1, GrantPolicy::Fifo, KEYS, threads, budget);
        let b = run(512, GrantPolicy::Fifo, KEYS, threads, budget);
        println!(
            "{:>8} | {:>12.0} ({:>9.0}) [{:>4},{:>3}] | {:>12.0} ({:>9.0}) [{:>4},{:>3}]",
            threads,
            a.locks_per_s,
            a.txn_per_s,
            a.waits,
            a.deadlocks,
            b.locks_per_s,
            b.txn_per_s,
            b.waits,
            b.deadlocks
        );
    }
    // High contention (7.2): a small keyspace, FIFO vs CATS grant order.
    let hot = 1000;
    println!("\nhot keyspace of {hot}, 512 shards; committed txn/s (locks/s) [waits, deadlocks]");
    println!("{:>8} | {:>36} | {:>36}", "threads", "FIFO", "CATS");
    for &threads in &[16usize, 64, 256] {
        let a = run(512, GrantPolicy::Fifo, hot, threads, budget);
        let b = run(512, GrantPolicy::Cats, hot, threads, budget);
        println!(
            "{:>8} | {:>9.0} ({:>10.0}) [{:>6},{:>5}] | {:>9.0} ({:>10.0}) [{:>6},{:>5}]",
            threads,
            a.txn_per_s,
            a.locks_per_s,
            a.waits,
            a.deadlocks,
            b.txn_per_s,
            b.locks_per_s,
            b.waits,
            b.deadlocks
        );
    }
}
