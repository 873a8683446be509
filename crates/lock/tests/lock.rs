use lockstep_lock::{
    Acquire, GrantPolicy, LockConfig, LockError, LockKey, LockMode, LockSys, LockWait,
};
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use LockMode::{Exclusive as X, Shared as S};

fn sys(policy: GrantPolicy) -> LockSys {
    LockSys::new(LockConfig { shards: 16, policy })
}

const K: LockKey = LockKey(1);
const K2: LockKey = LockKey(2);
const K3: LockKey = LockKey(3);

struct CountWaker(AtomicUsize);
impl Wake for CountWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A pending wait with a waker that counts its wake-ups.
struct Probe {
    wait: Pin<Box<LockWait>>,
    count: Arc<CountWaker>,
}

impl Probe {
    fn new(a: Acquire) -> Probe {
        let wait = match a {
            Acquire::Wait(w) => Box::pin(w),
            other => panic!("expected Wait, got {other:?}"),
        };
        let mut p = Probe {
            wait,
            count: Arc::new(CountWaker(AtomicUsize::new(0))),
        };
        assert!(p.poll().is_pending());
        p
    }
    fn poll(&mut self) -> Poll<Result<(), LockError>> {
        let w = Waker::from(Arc::clone(&self.count));
        self.wait.as_mut().poll(&mut Context::from_waker(&w))
    }
    fn wakes(&self) -> usize {
        self.count.0.load(Ordering::SeqCst)
    }
}

fn granted(a: Acquire) {
    assert!(matches!(a, Acquire::Granted), "expected Granted, got {a:?}");
}

#[test]
fn shared_compatible_exclusive_conflicts() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, S));
    granted(l.acquire(2, K, S));
    let mut p3 = Probe::new(l.acquire(3, K, X));
    l.release_all(1, &[K]);
    assert_eq!(p3.wakes(), 0, "2 still holds S");
    l.release_all(2, &[K]);
    assert_eq!(p3.wakes(), 1);
    assert_eq!(p3.poll(), Poll::Ready(Ok(())));
    // X/X conflict.
    let mut p4 = Probe::new(l.acquire(4, K, X));
    // X/S conflict.
    let mut p5 = Probe::new(l.acquire(5, K, S));
    l.release_all(3, &[K]);
    assert_eq!((p4.wakes(), p5.wakes()), (1, 0));
    assert!(p4.poll().is_ready());
    l.release_all(4, &[K]);
    assert!(p5.poll().is_ready());
    l.release_all(5, &[K]);
    assert_eq!(l.queue_count(), 0);
    let st = l.stats();
    assert_eq!((st.waits, st.current_waiters), (3, 0));
}

#[test]
fn rerequest_and_upgrade() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, X));
    granted(l.acquire(1, K, X));
    granted(l.acquire(1, K, S));
    assert_eq!(l.held_mode(1, K), Some(X));
    l.release_all(1, &[K]);
    // Sole S holder upgrades in place.
    granted(l.acquire(1, K, S));
    granted(l.acquire(1, K, X));
    assert_eq!(l.held_mode(1, K), Some(X));
    l.release_all(1, &[K]);
    // Shared with another: the upgrade waits, ahead of a plain X waiter.
    granted(l.acquire(1, K, S));
    granted(l.acquire(2, K, S));
    let mut p3 = Probe::new(l.acquire(3, K, X));
    let mut up = Probe::new(l.acquire(1, K, X));
    l.release_all(2, &[K]);
    assert_eq!((up.wakes(), p3.wakes()), (1, 0));
    assert!(up.poll().is_ready());
    assert_eq!(l.held_mode(1, K), Some(X));
    l.release_all(1, &[K]);
    assert!(p3.poll().is_ready());
    l.release_all(3, &[K]);
    assert_eq!(l.queue_count(), 0);
}

#[test]
fn fifo_grant_order() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, X));
    let mut p2 = Probe::new(l.acquire(2, K, X));
    let mut p3 = Probe::new(l.acquire(3, K, S));
    let mut p4 = Probe::new(l.acquire(4, K, S));
    let mut p5 = Probe::new(l.acquire(5, K, X));
    l.release_all(1, &[K]);
    assert_eq!(
        [p2.wakes(), p3.wakes(), p4.wakes(), p5.wakes()],
        [1, 0, 0, 0]
    );
    assert!(p2.poll().is_ready());
    l.release_all(2, &[K]);
    // Both S waiters together, the X behind them stays.
    assert_eq!([p3.wakes(), p4.wakes(), p5.wakes()], [1, 1, 0]);
    assert!(p3.poll().is_ready() && p4.poll().is_ready());
    // A new S must not overtake the waiting X.
    let mut p6 = Probe::new(l.acquire(6, K, S));
    l.release_all(3, &[K]);
    assert_eq!(p5.wakes(), 0);
    l.release_all(4, &[K]);
    assert_eq!((p5.wakes(), p6.wakes()), (1, 0));
    assert!(p5.poll().is_ready());
    l.release_all(5, &[K]);
    assert!(p6.poll().is_ready());
    l.release_all(6, &[K]);
    assert_eq!(l.queue_count(), 0);
}

/// Shared setup: 1 holds K; 2 waits for K first; 4 holds K2 and 3 waits for
/// K2 (so 4 blocks one txn); then 4 waits for K.
fn cats_setup(l: &LockSys) -> (Probe, Probe, Probe) {
    granted(l.acquire(1, K, X));
    let p2 = Probe::new(l.acquire(2, K, X));
    granted(l.acquire(4, K2, X));
    let p3 = Probe::new(l.acquire(3, K2, X));
    let p4 = Probe::new(l.acquire(4, K, X));
    (p2, p3, p4)
}

#[test]
fn cats_grants_the_heavier_waiter_first() {
    let l = sys(GrantPolicy::Cats);
    let (mut p2, mut p3, mut p4) = cats_setup(&l);
    l.release_all(1, &[K]);
    assert_eq!(
        (p2.wakes(), p4.wakes()),
        (0, 1),
        "4 blocks 3, so 4 goes first"
    );
    assert!(p4.poll().is_ready());
    l.release_all(4, &[K, K2]);
    assert!(p2.poll().is_ready());
    assert!(p3.poll().is_ready());
    l.release_all(2, &[K]);
    l.release_all(3, &[K2]);
    assert_eq!(l.queue_count(), 0);

    // Same scenario under FIFO: 2 goes first.
    let l = sys(GrantPolicy::Fifo);
    let (mut p2, _p3, p4) = cats_setup(&l);
    l.release_all(1, &[K]);
    assert_eq!((p2.wakes(), p4.wakes()), (1, 0));
    assert!(p2.poll().is_ready());
    // Policy switch at runtime.
    l.set_policy(GrantPolicy::Cats);
    assert_eq!(l.policy(), GrantPolicy::Cats);
}

#[test]
fn cats_equal_weights_are_fifo() {
    let l = sys(GrantPolicy::Cats);
    granted(l.acquire(1, K, X));
    let mut ps: Vec<_> = (2..6).map(|t| Probe::new(l.acquire(t, K, X))).collect();
    for t in 1..5u64 {
        l.release_all(t, &[K]);
        let i = (t - 1) as usize;
        let w: Vec<_> = ps.iter().map(|p| p.wakes()).collect();
        assert_eq!(w[i], 1, "txn {} next", t + 1);
        assert!(w[i + 1..].iter().all(|&c| c == 0));
        assert!(ps[i].poll().is_ready());
    }
    l.release_all(5, &[K]);
    assert_eq!(l.queue_count(), 0);
}

#[test]
fn two_trx_deadlock_requester_is_victim() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, X));
    granted(l.acquire(2, K2, X));
    let mut p1 = Probe::new(l.acquire(1, K2, X));
    assert!(matches!(l.acquire(2, K, X), Acquire::Deadlock));
    assert_eq!(l.stats().deadlocks, 1);
    assert_eq!(p1.wakes(), 0, "1 still waits; 2 must roll back");
    l.release_all(2, &[K2]);
    assert_eq!(p1.wakes(), 1);
    assert_eq!(p1.poll(), Poll::Ready(Ok(())));
    l.release_all(1, &[K, K2]);
    assert_eq!(l.queue_count(), 0);
    assert_eq!(l.stats().current_waiters, 0);
}

#[test]
fn deadlock_victim_is_the_lighter_waiter() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, X));
    granted(l.acquire(2, K2, X));
    let mut p1 = Probe::new(l.acquire_weighted(1, K2, X, 1));
    // The requester did more work: the earlier waiter is rolled back.
    let mut p2 = Probe::new(l.acquire_weighted(2, K, X, 10));
    assert_eq!(p1.wakes(), 1);
    assert_eq!(p1.poll(), Poll::Ready(Err(LockError::Deadlock)));
    assert_eq!(p2.wakes(), 0);
    assert_eq!(l.stats().deadlocks, 1);
    drop(p1);
    l.release_all(1, &[K]); // rollback of the victim
    assert_eq!(p2.wakes(), 1);
    assert_eq!(p2.poll(), Poll::Ready(Ok(())));
    l.release_all(2, &[K, K2]);
    assert_eq!(l.queue_count(), 0);
}

#[test]
fn three_trx_cycle() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, X));
    granted(l.acquire(2, K2, X));
    granted(l.acquire(3, K3, X));
    let mut p1 = Probe::new(l.acquire(1, K2, X));
    let _p2 = Probe::new(l.acquire(2, K3, X));
    assert!(matches!(l.acquire(3, K, X), Acquire::Deadlock));
    assert_eq!(l.stats().deadlocks, 1);
    assert_eq!(l.stats().current_waiters, 2);
    l.release_all(3, &[K3]);
    // 2 gets K3, 1 still waits for 2.
    assert_eq!(p1.wakes(), 0);
    l.release_all(2, &[K2, K3]);
    assert!(p1.poll().is_ready());
    l.release_all(1, &[K, K2]);
    assert_eq!(l.queue_count(), 0);
}

#[test]
fn upgrade_deadlock() {
    // Two S holders both upgrading: a classic conversion deadlock.
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, S));
    granted(l.acquire(2, K, S));
    let mut p1 = Probe::new(l.acquire(1, K, X));
    assert!(matches!(l.acquire(2, K, X), Acquire::Deadlock));
    l.release_all(2, &[K]);
    assert!(p1.poll().is_ready());
    assert_eq!(l.held_mode(1, K), Some(X));
    l.release_all(1, &[K]);
    assert_eq!(l.queue_count(), 0);
}

#[test]
fn cancel_on_drop_wakes_next() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, S));
    let p2 = Probe::new(l.acquire(2, K, X));
    let mut p3 = Probe::new(l.acquire(3, K, S)); // behind the X waiter
    assert_eq!(p3.wakes(), 0);
    drop(p2); // e.g. lock wait timeout
    assert_eq!(p3.wakes(), 1, "S behind the cancelled X can go now");
    assert!(p3.poll().is_ready());
    l.release_all(1, &[K]);
    l.release_all(3, &[K]);
    assert_eq!(l.queue_count(), 0);
    assert_eq!(l.stats().current_waiters, 0);
}

#[test]
fn timeout_counts_and_granted_race() {
    let l = sys(GrantPolicy::Fifo);
    granted(l.acquire(1, K, X));
    let w = match l.acquire(2, K, X) {
        Acquire::Wait(w) => w,
        _ => panic!(),
    };
    assert_eq!(w.timeout(), Err(LockError::Timeout));
    assert_eq!(l.stats().timeouts, 1);
    // Granted before the timer fired: the lock is kept.
    let w = match l.acquire(3, K, X) {
        Acquire::Wait(w) => w,
        _ => panic!(),
    };
    l.release_all(1, &[K]);
    assert_eq!(w.timeout(), Ok(()));
    assert_eq!(l.held_mode(3, K), Some(X));
    // Granted but dropped unobserved: given back to the next waiter.
    let w4 = match l.acquire(4, K, X) {
        Acquire::Wait(w) => w,
        _ => panic!(),
    };
    let mut p5 = Probe::new(l.acquire(5, K, X));
    l.release_all(3, &[K]);
    assert_eq!(p5.wakes(), 0);
    drop(w4);
    assert_eq!(p5.wakes(), 1);
    assert!(p5.poll().is_ready());
    l.release_all(5, &[K]);
    assert_eq!(l.queue_count(), 0);
}

#[test]
fn release_wakes_only_grantable() {
    let l = sys(GrantPolicy::Fifo);
    // Holders: 1 (S) and 2 (S). Waiters: X, S, S, X on K plus S waiters on K2.
    granted(l.acquire(1, K, S));
    granted(l.acquire(2, K, S));
    let mut px = Probe::new(l.acquire(3, K, X));
    let ps: Vec<_> = (4..8).map(|t| Probe::new(l.acquire(t, K, S))).collect();
    granted(l.acquire(20, K2, X));
    let others: Vec<_> = (21..25).map(|t| Probe::new(l.acquire(t, K2, S))).collect();
    l.release_all(1, &[K]);
    assert_eq!(px.wakes(), 0);
    assert!(ps.iter().all(|p| p.wakes() == 0));
    l.release_all(2, &[K]);
    assert_eq!(px.wakes(), 1);
    assert!(ps.iter().all(|p| p.wakes() == 0), "S waiters stay behind X");
    assert!(px.poll().is_ready());
    l.release_all(3, &[K]);
    assert!(ps.iter().all(|p| p.wakes() == 1), "all S granted together");
    assert!(others.iter().all(|p| p.wakes() == 0), "other key untouched");
    l.release_all(20, &[K2]);
    assert!(others.iter().all(|p| p.wakes() == 1));
    for t in 4..8 {
        l.release_all(t, &[K]);
    }
    for t in 21..25 {
        l.release_all(t, &[K2]);
    }
    assert!(
        ps.iter().chain(others.iter()).all(|p| p.wakes() == 1),
        "no spurious wakes"
    );
    assert_eq!(l.queue_count(), 0);
}

// ---- threads ----

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

/// Wait with a lock wait timeout, the way a session would with its
/// runtime's timer: poll, park until woken or the deadline, then give up.
fn wait_timeout(w: LockWait, limit: std::time::Duration) -> Result<(), LockError> {
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let deadline = std::time::Instant::now() + limit;
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut w = Box::pin(w);
    loop {
        if let Poll::Ready(v) = w.as_mut().poll(&mut cx) {
            return v;
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return Pin::into_inner(w).timeout();
        }
        std::thread::park_timeout(deadline - now);
    }
}

fn hammer(policy: GrantPolicy, threads: u64, keys: u64, per_trx: usize, txns: usize) {
    hammer_with(policy, threads, keys, per_trx, txns, None)
}

fn hammer_with(
    policy: GrantPolicy,
    threads: u64,
    keys: u64,
    per_trx: usize,
    txns: usize,
    timeout: Option<std::time::Duration>,
) {
    let l = Arc::new(LockSys::new(LockConfig { shards: 8, policy }));
    let next_trx = Arc::new(AtomicU64::new(1));
    let commits = Arc::new(AtomicU64::new(0));
    let mut hs = Vec::new();
    let (tx, rx) = std::sync::mpsc::channel();
    for t in 0..threads {
        let (l, next_trx, commits, tx) = (l.clone(), next_trx.clone(), commits.clone(), tx.clone());
        hs.push(std::thread::spawn(move || {
            let mut rng = t * 7919 + 17;
            let mut done = 0;
            while done < txns {
                let txn = next_trx.fetch_add(1, Ordering::Relaxed);
                let mut held: Vec<LockKey> = Vec::new();
                let mut ok = true;
                for _ in 0..per_trx {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let key = LockKey(rng % keys);
                    let mode = if rng % 3 == 0 { S } else { X };
                    let r = match l.acquire_weighted(txn, key, mode, held.len() as u64) {
                        Acquire::Granted => Ok(()),
                        Acquire::Wait(w) => match timeout {
                            None => block_on(w),
                            Some(d) => wait_timeout(w, d),
                        },
                        Acquire::Deadlock => Err(LockError::Deadlock),
                    };
                    match r {
                        Ok(()) => {
                            // Hold the lock across a reschedule so that
                            // transactions overlap even on few cores.
                            std::thread::yield_now();
                            if !held.contains(&key) {
                                held.push(key);
                            }
                            assert!(l.held_mode(txn, key).is_some());
                        }
                        Err(_) => {
                            ok = false;
                            break;
                        }
                    }
                }
                l.release_all(txn, &held);
                if ok {
                    done += 1;
                    commits.fetch_add(1, Ordering::Relaxed);
                }
            }
            tx.send(()).unwrap();
        }));
    }
    // A lost wake-up shows up as a thread that never finishes.
    for _ in 0..threads {
        rx.recv_timeout(std::time::Duration::from_secs(120))
            .expect("a waiter was never woken (lost wake-up)");
    }
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(commits.load(Ordering::Relaxed), threads * txns as u64);
    assert_eq!(l.queue_count(), 0);
    let st = l.stats();
    assert_eq!(st.current_waiters, 0);
    eprintln!("{policy:?}: {st:?}");
    assert!(st.waits > 0, "the workload must contend");
}

#[test]
fn many_threads_no_lost_wakeups_fifo() {
    hammer(GrantPolicy::Fifo, 8, 64, 6, 1500);
}

#[test]
fn many_threads_no_lost_wakeups_cats() {
    hammer(GrantPolicy::Cats, 8, 64, 6, 1500);
}

#[test]
fn many_threads_hot_keys() {
    hammer(GrantPolicy::Cats, 6, 4, 3, 1500);
    hammer(GrantPolicy::Fifo, 6, 4, 3, 1500);
}

#[test]
fn many_threads_with_timeouts() {
    hammer_with(
        GrantPolicy::Fifo,
        6,
        8,
        4,
        800,
        Some(std::time::Duration::from_micros(300)),
    );
    hammer_with(
        GrantPolicy::Cats,
        6,
        8,
        4,
        800,
        Some(std::time::Duration::from_micros(300)),
    );
}

#[test]
fn types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<LockSys>();
    check::<LockWait>();
    check::<Acquire>();
}

/// A hot row: one holder, a long queue of exclusive waiters granted one
/// after another. Each grant gives every waiter behind it an edge to the
/// new holder, which waits for nothing and so closes no cycle: the number
/// of deadlock searches stays linear in the waiters (it was quadratic).
#[test]
fn a_long_queue_on_one_row_costs_linear_deadlock_searches() {
    let ls = sys(GrantPolicy::Fifo);
    const N: u64 = 400;
    granted(ls.acquire(1, K, X));
    let mut waits: Vec<Probe> = (2..=N + 1)
        .map(|t| Probe::new(ls.acquire(t, K, X)))
        .collect();
    let before = ls.stats().deadlock_searches;
    for (i, w) in waits.iter_mut().enumerate() {
        ls.release_all(i as u64 + 1, &[K]);
        assert!(w.poll().is_ready(), "waiter {} granted in turn", i + 1);
    }
    let searches = ls.stats().deadlock_searches - before;
    assert!(searches <= N, "{searches} searches for {N} grants");
    assert!(ls.stats().deadlock_searches <= 2 * N);
}
