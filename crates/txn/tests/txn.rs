#[path = "common/baseline.rs"]
mod baseline;
use baseline::VecTxnSys;
use lockstep_txn::{TxnConfig, TxnSys};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

fn sys(window: usize) -> TxnSys {
    TxnSys::new(TxnConfig {
        registry_shards: 8,
        throttle_limit: 0,
        short_window: window,
    })
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn visibility_basic() {
    let s = sys(1024);
    let a = s.begin_rw();
    let b = s.begin_rw();
    s.finish(a);
    let c = s.begin_rw();
    let v = s.read_view(Some(c));
    assert!(v.sees(a), "finished before the view");
    assert!(!v.sees(b), "active in the bitmap");
    assert!(v.sees(c), "creator sees itself");
    assert_eq!(v.up_limit(), b);
    assert_eq!(v.low_limit(), c + 1);
    let d = s.begin_rw();
    assert!(!v.sees(d), "at or above low_limit");
    assert!(!v.sees(d + 100));
    // A view without a creator does not see c.
    let v2 = s.read_view(None);
    assert!(!v2.sees(c));
    assert!(!v2.sees(b));
    assert!(v2.sees(a));
}

#[test]
fn views_unaffected_by_later_finish() {
    let s = sys(1024);
    let ids: Vec<_> = (0..10).map(|_| s.begin_rw()).collect();
    let v = s.read_view(None);
    for &i in &ids {
        s.finish(i);
    }
    for &i in &ids {
        assert!(!v.sees(i));
    }
    let v2 = s.read_view(None);
    for &i in &ids {
        assert!(v2.sees(i));
    }
    assert_eq!(s.active_count(), 0);
}

#[test]
fn long_transaction_moves_to_long_vector() {
    let window = 256;
    let s = sys(window);
    let long = s.begin_rw();
    let mid = s.begin_rw();
    s.finish(mid);
    // More than a window of newer short transactions.
    let mut last_active = Vec::new();
    for k in 0..(3 * window) {
        let id = s.begin_rw();
        if k % 97 == 0 {
            last_active.push(id);
        } else {
            s.finish(id);
        }
    }
    let v = s.read_view(None);
    assert!(!v.sees(long), "long id found in the long vector");
    assert!(v.sees(mid));
    for &i in &last_active {
        assert!(!v.sees(i), "id {i} active");
    }
    assert_eq!(v.up_limit(), long);
    assert_eq!(v.active_len(), 1 + last_active.len());
    assert!(s.is_active(long));
    s.finish(long);
    assert!(!s.is_active(long));
    let v2 = s.read_view(None);
    assert!(v2.sees(long));
    assert!(!v.sees(long));
    assert_eq!(v2.up_limit(), last_active[0]);
}

#[test]
fn purge_horizon_tracks_views() {
    let s = sys(1024);
    let a = s.begin_rw();
    let b = s.begin_rw();
    assert_eq!(s.purge_horizon(), a);
    let v1 = s.read_view(None); // up_limit = a
    s.finish(a);
    assert_eq!(s.purge_horizon(), a, "v1 still needs a's view of the world");
    s.finish(b);
    let next = s.max_trx_id();
    assert_eq!(s.purge_horizon(), a);
    let v2 = s.read_view(None);
    assert_eq!(v2.up_limit(), next);
    drop(v1);
    assert_eq!(s.purge_horizon(), next);
    drop(v2);
    assert_eq!(s.purge_horizon(), next);
    let c = s.begin_rw();
    assert_eq!(s.purge_horizon(), c);
    s.finish(c);
    assert_eq!(s.purge_horizon(), c + 1);
    assert_eq!(s.open_views(), 0);
}

#[test]
fn refresh_reuses_slot() {
    let s = sys(1024);
    let a = s.begin_rw();
    let mut v = s.read_view(None);
    assert!(!v.sees(a));
    s.finish(a);
    s.refresh_view(&mut v, None);
    assert!(v.sees(a));
    assert_eq!(s.open_views(), 1);
    assert_eq!(s.purge_horizon(), a + 1);
    v.close();
    assert_eq!(s.open_views(), 0);
}

#[test]
fn closed_view_reopens_with_a_fresh_snapshot() {
    let s = sys(1024);
    let a = s.begin_rw();
    let mut v = s.read_view(None);
    assert!(v.is_open());
    assert_eq!(s.purge_horizon(), a);
    v.close();
    v.close(); // closing twice gives up nothing twice
    assert!(!v.is_open());
    assert_eq!(s.open_views(), 0);
    // A closed view holds nothing back, and its slot is free for others.
    let other = s.read_view(None);
    s.finish(a);
    drop(other);
    assert_eq!(s.purge_horizon(), a + 1);
    let b = s.begin_rw();
    s.refresh_view(&mut v, None);
    assert!(v.is_open());
    assert_eq!(s.open_views(), 1);
    assert!(v.sees(a));
    assert!(!v.sees(b));
    assert_eq!(s.purge_horizon(), b);
    // Dropping a closed view does not free a slot another view now holds.
    v.close();
    let w = s.read_view(None);
    drop(v);
    assert_eq!(s.open_views(), 1);
    assert_eq!(s.purge_horizon(), b);
    drop(w);
    s.finish(b);
    assert_eq!(s.open_views(), 0);
}

#[test]
fn closed_views_reopen_past_a_full_shard() {
    let s = sys(1024);
    // More views than one shard's slots, all closed and reopened: the ones
    // that spilled into the overflow list come back too.
    let mut views: Vec<_> = (0..100).map(|_| s.read_view(None)).collect();
    views.iter_mut().for_each(|v| v.close());
    assert_eq!(s.open_views(), 0);
    let a = s.begin_rw();
    views.iter_mut().for_each(|v| s.refresh_view(v, None));
    assert_eq!(s.open_views(), 100);
    assert_eq!(s.purge_horizon(), a);
    s.finish(a);
    drop(views);
    assert_eq!(s.open_views(), 0);
    assert_eq!(s.purge_horizon(), a + 1);
}

#[test]
fn many_open_views_overflow_slots() {
    let s = sys(1024);
    let a = s.begin_rw();
    let views: Vec<_> = (0..5000).map(|_| s.read_view(None)).collect();
    s.finish(a);
    assert_eq!(s.open_views(), 5000);
    assert_eq!(s.purge_horizon(), a);
    drop(views);
    assert_eq!(s.open_views(), 0);
    assert_eq!(s.purge_horizon(), a + 1);
}

#[test]
fn set_next_id_after_recovery() {
    let s = sys(1024);
    s.set_next_id(1_000_000);
    let a = s.begin_rw();
    assert_eq!(a, 1_000_000);
    let v = s.read_view(None);
    assert!(v.sees(999_999));
    assert!(!v.sees(a));
    assert_eq!(s.max_trx_id(), 1_000_001);
}

/// Hybrid and sorted-vector views must agree on every probe.
#[test]
fn hybrid_matches_sorted_vector() {
    for seed in 1..6u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let h = sys(128 << (seed % 3));
        let b = VecTxnSys::new();
        let mut active: Vec<u64> = Vec::new();
        let mut views_with_long = 0;
        for step in 0..20_000 {
            let r = rng.below(100);
            if r < 50 || active.is_empty() {
                let x = h.begin_rw();
                let y = b.begin_rw();
                assert_eq!(x, y);
                active.push(x);
            } else if r < 95 {
                // Mostly finish recent ones; the old ones linger (long txn).
                let n = active.len();
                let i = if rng.below(10) == 0 {
                    rng.below(n as u64) as usize
                } else {
                    n - 1 - rng.below(n.min(8) as u64) as usize
                };
                let id = active.swap_remove(i);
                h.finish(id);
                b.finish(id);
            } else {
                let creator = if active.is_empty() || rng.below(2) == 0 {
                    None
                } else {
                    Some(active[rng.below(active.len() as u64) as usize])
                };
                let hv = h.read_view(creator);
                let bv = b.read_view(creator);
                views_with_long += (hv.long_len() > 0) as usize;
                assert_eq!(hv.low_limit(), bv.low_limit());
                assert_eq!(hv.up_limit(), bv.up_limit(), "step {step}");
                let hi = hv.low_limit() + 5;
                let lo = hi.saturating_sub(3000).max(1);
                for id in lo..hi {
                    assert_eq!(hv.sees(id), bv.sees(id), "seed {seed} step {step} id {id}");
                }
                assert_eq!(h.purge_horizon(), b.purge_horizon());
            }
        }
        assert_eq!(h.active_count(), active.len());
        assert!(views_with_long > 10, "workload exercises the long vector");
    }
}

/// Concurrent begin/finish/view: a view never sees a transaction that was
/// active when it was taken, and always sees one finished before.
#[test]
fn concurrent_snapshots_are_consistent() {
    let s = Arc::new(sys(512));
    let finished_upto = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut hs = Vec::new();
    for t in 0..4u64 {
        let s = Arc::clone(&s);
        hs.push(std::thread::spawn(move || {
            let mut rng = Rng(t + 11);
            for _ in 0..20_000 {
                let id = s.begin_rw();
                let v = s.read_view(Some(id));
                assert!(v.sees(id));
                assert!(!v.sees(v.low_limit()));
                if rng.below(3) == 0 {
                    let v2 = s.read_view(None);
                    assert!(!v2.sees(id), "own txn still active");
                }
                s.finish(id);
                let v3 = s.read_view(None);
                assert!(v3.sees(id), "finished before the view");
            }
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    finished_upto.store(1, Ordering::Relaxed);
    assert_eq!(s.active_count(), 0);
    assert_eq!(s.open_views(), 0);
    assert_eq!(s.purge_horizon(), s.max_trx_id());
}

// ---- throttling ----

struct CountWaker(AtomicUsize);
impl Wake for CountWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn poll_once<F: Future>(f: std::pin::Pin<&mut F>, w: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(w))
}

#[test]
fn throttle_fifo_and_limit() {
    let s = TxnSys::new(TxnConfig {
        registry_shards: 4,
        throttle_limit: 2,
        ..Default::default()
    });
    let w = Waker::noop();
    let t1 = match poll_once(pin!(s.admit()), w) {
        Poll::Ready(t) => t,
        _ => panic!(),
    };
    let t2 = match poll_once(pin!(s.admit()), w) {
        Poll::Ready(t) => t,
        _ => panic!(),
    };
    let wakes: Vec<_> = (0..3)
        .map(|_| Arc::new(CountWaker(AtomicUsize::new(0))))
        .collect();
    let mut a: Vec<_> = (0..3).map(|_| Box::pin(s.admit())).collect();
    for (i, f) in a.iter_mut().enumerate() {
        let wk = Waker::from(Arc::clone(&wakes[i]));
        assert!(poll_once(f.as_mut(), &wk).is_pending());
    }
    assert_eq!(s.throttle_stats().waiting, 3);
    assert_eq!(s.throttle_stats().admitted, 2);
    drop(t1);
    // Exactly the first waiter is woken.
    let woken: Vec<_> = wakes.iter().map(|c| c.0.load(Ordering::SeqCst)).collect();
    assert_eq!(woken, vec![1, 0, 0]);
    let wk1 = Waker::from(Arc::clone(&wakes[1]));
    assert!(
        poll_once(a[1].as_mut(), &wk1).is_pending(),
        "second must still wait"
    );
    let t3 = match poll_once(a[0].as_mut(), w) {
        Poll::Ready(t) => t,
        _ => panic!("first waiter admitted"),
    };
    // The third waiter gives up: the second stays next in line.
    let third = a.pop().unwrap();
    drop(third);
    assert_eq!(s.throttle_stats().waiting, 1);
    drop(t2);
    let woken: Vec<_> = wakes.iter().map(|c| c.0.load(Ordering::SeqCst)).collect();
    assert_eq!(woken, vec![1, 1, 0]);
    let t4 = match poll_once(a[1].as_mut(), w) {
        Poll::Ready(t) => t,
        _ => panic!(),
    };
    assert_eq!(s.throttle_stats().admitted, 2);
    // A newcomer waits; raising the limit admits it.
    let nc = Arc::new(CountWaker(AtomicUsize::new(0)));
    let mut f = Box::pin(s.admit());
    assert!(poll_once(f.as_mut(), &Waker::from(Arc::clone(&nc))).is_pending());
    s.set_throttle_limit(3);
    assert_eq!(nc.0.load(Ordering::SeqCst), 1);
    let t5 = match poll_once(f.as_mut(), w) {
        Poll::Ready(t) => t,
        _ => panic!(),
    };
    drop((t3, t4, t5));
    assert_eq!(s.throttle_stats().admitted, 0);
    // A slot handed to a waiter that is dropped before polling is passed on.
    s.set_throttle_limit(1);
    let t = match poll_once(pin!(s.admit()), w) {
        Poll::Ready(t) => t,
        _ => panic!(),
    };
    let mut g1 = Box::pin(s.admit());
    let mut g2 = Box::pin(s.admit());
    assert!(poll_once(g1.as_mut(), w).is_pending());
    assert!(poll_once(g2.as_mut(), w).is_pending());
    drop(t);
    drop(g1); // granted but never observed
    assert!(poll_once(g2.as_mut(), w).is_ready());
}

#[test]
fn throttle_disengaged_gate_stands_open() {
    let s = TxnSys::new(TxnConfig {
        throttle_limit: 1,
        ..Default::default()
    });
    let w = Waker::noop();
    let admit = |s: &TxnSys| match poll_once(pin!(s.admit()), w) {
        Poll::Ready(t) => t,
        _ => panic!("an open gate admits at once"),
    };
    let t1 = admit(&s);
    let woken = Arc::new(CountWaker(AtomicUsize::new(0)));
    let mut queued = Box::pin(s.admit());
    assert!(poll_once(queued.as_mut(), &Waker::from(Arc::clone(&woken))).is_pending());
    // Opening the gate lets the queued waiter in, and newcomers pass the
    // limit; the limit itself is kept.
    s.set_throttle_engaged(false);
    assert_eq!(woken.0.load(Ordering::SeqCst), 1);
    let t2 = match poll_once(queued.as_mut(), w) {
        Poll::Ready(t) => t,
        _ => panic!("granted when the gate opened"),
    };
    let t3 = admit(&s);
    let st = s.throttle_stats();
    assert_eq!(
        (st.limit, st.engaged, st.admitted, st.waiting),
        (1, false, 3, 0)
    );
    // Engaged again: the limit holds once the excess has left.
    s.set_throttle_engaged(true);
    let mut late = Box::pin(s.admit());
    assert!(poll_once(late.as_mut(), w).is_pending());
    drop((t1, t2));
    assert!(
        poll_once(late.as_mut(), w).is_pending(),
        "still one over the limit"
    );
    drop(t3);
    assert!(poll_once(late.as_mut(), w).is_ready());
}

#[test]
fn throttle_stall_escape_and_readmit() {
    let s = TxnSys::new(TxnConfig {
        throttle_limit: 1,
        ..Default::default()
    });
    let w = Waker::noop();
    let held = match poll_once(pin!(s.admit()), w) {
        Poll::Ready(t) => t,
        _ => panic!("the first transaction is admitted"),
    };
    let mut a = Box::pin(s.admit());
    let mut b = Box::pin(s.admit());
    assert!(poll_once(a.as_mut(), w).is_pending());
    assert!(poll_once(b.as_mut(), w).is_pending());
    // Both waiters saw the same stalled gate: only one is let in for it.
    let seen = s.throttle_progress();
    let forced = a
        .as_mut()
        .force(seen)
        .expect("a stalled gate lets one waiter in");
    assert!(b.as_mut().force(seen).is_none(), "one waiter per stall");
    let st = s.throttle_stats();
    assert_eq!((st.admitted, st.waiting, st.forced), (2, 1, 1));
    // A parked transaction re-enters at once, over the limit.
    let back = s.readmit();
    assert_eq!(s.throttle_stats().admitted, 3);
    assert_eq!(s.throttle_stats().readmitted, 1);
    // Leaving counts as progress; the queue drains in order as the gate
    // falls back under its limit.
    drop(back);
    drop(forced);
    assert!(
        poll_once(b.as_mut(), w).is_pending(),
        "still one over the limit"
    );
    drop(held);
    let last = match poll_once(b.as_mut(), w) {
        Poll::Ready(t) => t,
        _ => panic!("the waiter gets the freed slot"),
    };
    assert_ne!(s.throttle_progress(), seen);
    drop(last);
    assert_eq!(s.throttle_stats().admitted, 0);
}

/// Tiny executor: park the thread until woken.
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

#[test]
fn throttle_under_threads_never_exceeds_limit() {
    let s = Arc::new(TxnSys::new(TxnConfig {
        throttle_limit: 3,
        ..Default::default()
    }));
    let inside = Arc::new(AtomicUsize::new(0));
    let max_seen = Arc::new(Mutex::new(0usize));
    let mut hs = Vec::new();
    for _ in 0..8 {
        let (s, inside, max_seen) = (s.clone(), inside.clone(), max_seen.clone());
        hs.push(std::thread::spawn(move || {
            for _ in 0..2000 {
                let t = block_on(s.admit());
                let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                {
                    let mut m = max_seen.lock().unwrap();
                    *m = (*m).max(n);
                }
                let id = s.begin_rw();
                s.finish(id);
                inside.fetch_sub(1, Ordering::SeqCst);
                drop(t);
            }
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    assert!(*max_seen.lock().unwrap() <= 3);
    let st = s.throttle_stats();
    assert_eq!((st.admitted, st.waiting), (0, 0));
}

#[test]
fn types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<TxnSys>();
    check::<lockstep_txn::ReadView>();
    check::<lockstep_txn::Admission>();
    check::<lockstep_txn::Ticket>();
}
