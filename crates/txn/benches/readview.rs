//! ReadView microbenchmark (book 8.2.3): creating a view and probing it,
//! hybrid active set vs the sorted-vector baseline, at several numbers of
//! active transactions, idle and with a concurrent begin/finish thread.
//!
//! cargo bench -p lockstep-txn --bench readview -- [millis-per-case]

#[allow(dead_code)] // the bench uses only part of it
#[path = "../tests/common/baseline.rs"]
mod baseline;
use baseline::VecTxnSys;
use lockstep_txn::{TxnConfig, TxnSys};
use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PROBES: usize = 1000;

trait Sys: Send + Sync + 'static {
    fn begin(&self) -> u64;
    fn finish(&self, id: u64);
    /// Create a view, run the probes, drop the view; returns visible count.
    fn view_and_probe(&self, offsets: &[u64]) -> usize;
    fn view_only(&self) -> u64;
}

impl Sys for TxnSys {
    fn begin(&self) -> u64 {
        self.begin_rw()
    }
    fn finish(&self, id: u64) {
        TxnSys::finish(self, id)
    }
    fn view_and_probe(&self, offsets: &[u64]) -> usize {
        let v = self.read_view(None);
        let top = v.low_limit();
        offsets
            .iter()
            .filter(|&&o| v.sees(top.saturating_sub(o).max(1)))
            .count()
    }
    fn view_only(&self) -> u64 {
        self.read_view(None).up_limit()
    }
}

impl Sys for VecTxnSys {
    fn begin(&self) -> u64 {
        self.begin_rw()
    }
    fn finish(&self, id: u64) {
        VecTxnSys::finish(self, id)
    }
    fn view_and_probe(&self, offsets: &[u64]) -> usize {
        let v = self.read_view(None);
        let top = v.low_limit();
        offsets
            .iter()
            .filter(|&&o| v.sees(top.saturating_sub(o).max(1)))
            .count()
    }
    fn view_only(&self) -> u64 {
        self.read_view(None).up_limit()
    }
}

/// Keep `n` recent transactions active (begin one, finish the oldest).
fn fill<S: Sys>(s: &S, n: usize) -> VecDeque<u64> {
    let mut q: VecDeque<u64> = (0..n).map(|_| s.begin()).collect();
    for _ in 0..n {
        q.push_back(s.begin());
        s.finish(q.pop_front().unwrap());
    }
    q
}

fn measure(budget: Duration, mut f: impl FnMut()) -> f64 {
    // Warm up, then run in batches until the budget is spent.
    for _ in 0..10 {
        f();
    }
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        for _ in 0..32 {
            f();
        }
        n += 32;
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn run<S: Sys>(s: Arc<S>, n: usize, churn: bool, budget: Duration, offsets: &[u64]) -> (f64, f64) {
    let mut active = fill(&*s, n);
    let stop = Arc::new(AtomicBool::new(false));
    let bg = churn.then(|| {
        let (s, stop) = (Arc::clone(&s), Arc::clone(&stop));
        let mut q = std::mem::take(&mut active);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                q.push_back(s.begin());
                s.finish(q.pop_front().unwrap());
            }
            q
        })
    });
    let probe = measure(budget, || {
        black_box(s.view_and_probe(offsets));
    });
    let create = measure(budget / 2, || {
        black_box(s.view_only());
    });
    stop.store(true, Ordering::Relaxed);
    if let Some(h) = bg {
        active = h.join().unwrap();
    }
    for id in active {
        s.finish(id);
    }
    (probe, create)
}

fn main() {
    let ms: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let budget = Duration::from_millis(ms);
    println!("ReadView create + {PROBES} sees() probes, ns/op (view-only creation in parentheses)");
    println!(
        "{:>7} {:>6} | {:>20} | {:>20} | {:>7}",
        "active", "churn", "hybrid", "sorted vector", "speedup"
    );
    for &n in &[10usize, 100, 1000, 10000] {
        // Probe ids spread over the 2n most recent ids: about half active.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let offsets: Vec<u64> = (0..PROBES)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                1 + rng % (2 * n as u64)
            })
            .collect();
        for churn in [false, true] {
            let h = run(
                Arc::new(TxnSys::new(TxnConfig::default())),
                n,
                churn,
                budget,
                &offsets,
            );
            let b = run(Arc::new(VecTxnSys::new()), n, churn, budget, &offsets);
            println!(
                "{:>7} {:>6} | {:>9.0} ({:>7.0}) | {:>9.0} ({:>7.0}) | {:>6.2}x",
                n,
                if churn { "yes" } else { "no" },
                h.0,
                h.1,
                b.0,
                b.1,
                b.0 / h.0
            );
        }
    }
}
