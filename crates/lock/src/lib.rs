//! Row locks: a sharded lock table, waits that do not block a thread,
//! deadlock detection, FIFO and CATS grant order.
//!
//! - The lock table is split into shards by key hash, each with its own
//!   latch holding per-key queues of granted and waiting requests (book
//!   7.1.2, MySQL's sharded lock_sys).
//! - A request that must wait gets a [`LockWait`] future; its `Waker` sits
//!   in the request and is woken, alone, when the request is granted
//!   (8.1.2: wake exactly the waiter that can proceed).
//! - Deadlocks are found in a wait-for graph under its own mutex that only
//!   changes when waits start or end (see `graph`).
//! - When a lock is freed, waiters are granted FIFO, or under CATS (7.2,
//!   5.8) in order of how many transactions they block, FIFO among equals.

pub mod gate;
mod graph;
pub mod mdl;
mod wait;

pub use gate::WriteGate;
pub use mdl::MetadataLock;

use crossbeam_utils::CachePadded;
use graph::{Graph, Outcome};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

pub type TxnId = u64;

/// Hash of (table, index, key bytes) computed by the caller. Collisions
/// only cause false waits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct LockKey(pub u64);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LockMode {
    Shared,
    Exclusive,
}

impl LockMode {
    #[inline]
    fn conflicts(self, other: LockMode) -> bool {
        self == LockMode::Exclusive || other == LockMode::Exclusive
    }
    /// Whether holding `self` already gives what `want` asks for.
    #[inline]
    fn covers(self, want: LockMode) -> bool {
        self == LockMode::Exclusive || want == LockMode::Shared
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GrantPolicy {
    Fifo,
    /// Contention-aware transaction scheduling (7.2).
    Cats,
}

#[derive(Clone, Debug)]
pub struct LockConfig {
    pub shards: usize,
    pub policy: GrantPolicy,
}

impl Default for LockConfig {
    fn default() -> Self {
        LockConfig {
            shards: 512,
            policy: GrantPolicy::Fifo,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LockError {
    /// Chosen as deadlock victim: roll back (MySQL 1213).
    Deadlock,
    /// Lock wait timeout (MySQL 1205), see [`LockWait::timeout`].
    Timeout,
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Deadlock => {
                f.write_str("Deadlock found when trying to get lock; try restarting transaction")
            }
            LockError::Timeout => {
                f.write_str("Lock wait timeout exceeded; try restarting transaction")
            }
        }
    }
}

impl std::error::Error for LockError {}

#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct LockStats {
    /// Requests that had to wait.
    pub waits: u64,
    pub deadlocks: u64,
    /// Wait-for graph searches: one per wait that may have closed a cycle.
    pub deadlock_searches: u64,
    pub timeouts: u64,
    pub current_waiters: u64,
}

/// Multiply-mix hasher for keys that are already hashes.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[inline]
fn mix(v: u64) -> u64 {
    let v = (v ^ (v >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    v ^ (v >> 33)
}

// ---------------------------------------------------------------- queues

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum NodeState {
    Waiting,
    Granted,
    Deadlock,
    Cancelled,
}

pub(crate) struct NodeSt {
    pub(crate) state: NodeState,
    pub(crate) waker: Option<Waker>,
    /// The owner saw the grant (poll returned Ok); until then a dropped
    /// future must give the lock back.
    observed: bool,
}

/// A waiting request, shared by its queue, the wait-for graph and the
/// owner's [`LockWait`].
pub(crate) struct WaitNode {
    txn: TxnId,
    key: LockKey,
    /// S→X upgrade by a txn that already holds S.
    upgrade: bool,
    pub(crate) st: Mutex<NodeSt>,
}

const INLINE: usize = 2;

/// Granted requests of one key; one or two holders are the common case,
/// so they are stored inline (no allocation per lock).
struct Holders {
    len: usize,
    inl: [(TxnId, LockMode); INLINE],
    more: Vec<(TxnId, LockMode)>,
}

impl Holders {
    fn one(txn: TxnId, mode: LockMode) -> Self {
        Holders {
            len: 1,
            inl: [(txn, mode), (0, LockMode::Shared)],
            more: Vec::new(),
        }
    }
    fn iter(&self) -> impl Iterator<Item = &(TxnId, LockMode)> {
        self.inl[..self.len.min(INLINE)]
            .iter()
            .chain(self.more.iter())
    }
    fn at(&mut self, i: usize) -> &mut (TxnId, LockMode) {
        if i < INLINE {
            &mut self.inl[i]
        } else {
            &mut self.more[i - INLINE]
        }
    }
    fn push(&mut self, e: (TxnId, LockMode)) {
        if self.len < INLINE {
            self.inl[self.len] = e;
        } else {
            self.more.push(e);
        }
        self.len += 1;
    }
    fn position(&self, txn: TxnId) -> Option<usize> {
        self.iter().position(|e| e.0 == txn)
    }
    fn mode_of(&self, txn: TxnId) -> Option<LockMode> {
        self.iter().find(|e| e.0 == txn).map(|e| e.1)
    }
    fn remove(&mut self, txn: TxnId) -> Option<LockMode> {
        let i = self.position(txn)?;
        let last = self.len - 1;
        let e = *self.at(i);
        let l = *self.at(last);
        *self.at(i) = l;
        if last >= INLINE {
            self.more.pop();
        }
        self.len -= 1;
        Some(e.1)
    }
}

struct Waiter {
    txn: TxnId,
    mode: LockMode,
    upgrade: bool,
    node: Arc<WaitNode>,
}

struct Queue {
    granted: Holders,
    /// Waiting requests in grant order: upgrades first, then FIFO (or CATS
    /// order after the last reschedule).
    waiting: Vec<Waiter>,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.granted.len == 0 && self.waiting.is_empty()
    }

    /// Out-edges of the waiter at `idx`: other holders of a conflicting
    /// granted lock, plus the earlier waiters it queues behind. Of the
    /// latter only those back to (and including) the nearest earlier X
    /// waiter are listed: that one reaches all before it, which keeps the
    /// edge count linear in a hot queue.
    fn blockers(&self, idx: usize) -> Vec<(TxnId, bool)> {
        let w = &self.waiting[idx];
        let mut out = Vec::new();
        for &(t, m) in self.granted.iter() {
            if t != w.txn && (w.upgrade || m.conflicts(w.mode)) {
                out.push((t, true));
            }
        }
        if !w.upgrade {
            for e in self.waiting[..idx].iter().rev() {
                if e.txn != w.txn && e.mode.conflicts(w.mode) && !out.iter().any(|b| b.0 == e.txn) {
                    out.push((e.txn, false));
                }
                if e.mode == LockMode::Exclusive {
                    break;
                }
            }
        }
        out
    }

    #[cfg(debug_assertions)]
    fn check(&self) {
        let g: Vec<_> = self.granted.iter().copied().collect();
        for (i, a) in g.iter().enumerate() {
            for b in &g[i + 1..] {
                debug_assert!(a.0 != b.0, "txn {} granted twice", a.0);
                debug_assert!(!a.1.conflicts(b.1), "conflicting grants {a:?} {b:?}");
            }
        }
        for (i, w) in self.waiting.iter().enumerate() {
            debug_assert!(self.waiting[i + 1..].iter().all(|x| x.txn != w.txn));
            debug_assert_eq!(
                w.upgrade,
                self.granted.mode_of(w.txn) == Some(LockMode::Shared)
            );
        }
    }
}

type KeyMap<V> = HashMap<LockKey, V, BuildHasherDefault<IdHasher>>;

/// A lock request that must wait, as `Inner::enqueue` queues it.
struct Request {
    txn: TxnId,
    key: LockKey,
    mode: LockMode,
    upgrade: bool,
    /// The requester's work so far, weighed when choosing a deadlock victim.
    work: u64,
}

struct Shard {
    queues: KeyMap<Queue>,
}

struct Inner {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    graph: CachePadded<Mutex<Graph>>,
    policy: AtomicU8,
    waits: AtomicU64,
    deadlocks: AtomicU64,
    /// Deadlock searches run (each walks the wait-for graph).
    searches: AtomicU64,
    timeouts: AtomicU64,
}

/// The lock system; `Send + Sync`, share it by reference or `Arc`.
pub struct LockSys {
    inner: Arc<Inner>,
}

/// Result of [`LockSys::acquire`].
pub enum Acquire {
    Granted,
    Wait(LockWait),
    /// The requester is the deadlock victim: it must roll back (1213).
    Deadlock,
}

impl std::fmt::Debug for Acquire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Acquire::Granted => "Granted",
            Acquire::Wait(_) => "Wait",
            Acquire::Deadlock => "Deadlock",
        })
    }
}

/// A pending lock request. Resolves to `Ok(())` when granted, or
/// `Err(Deadlock)` if this waiter was later chosen as a deadlock victim.
/// Dropping it unresolved cancels the request; [`LockWait::timeout`] does
/// the same and counts a lock wait timeout.
pub struct LockWait {
    inner: Arc<Inner>,
    node: Arc<WaitNode>,
    done: bool,
}

impl Inner {
    #[inline]
    fn shard(&self, key: LockKey) -> &Mutex<Shard> {
        &self.shards[(mix(key.0) % self.shards.len() as u64) as usize]
    }

    fn policy(&self) -> GrantPolicy {
        if self.policy.load(Ordering::Relaxed) == 1 {
            GrantPolicy::Cats
        } else {
            GrantPolicy::Fifo
        }
    }

    /// Grant what can be granted in `q` and refresh the wait-for edges of
    /// the rest. Called with the shard latch held after the queue lost a
    /// granted lock or a waiter.
    fn regrant(&self, q: &mut Queue, out: &mut Outcome) {
        if q.waiting.is_empty() {
            return;
        }
        let mut g = self.graph.lock();
        // Victims chosen elsewhere may still sit here; drop them.
        q.waiting
            .retain(|w| w.node.st.lock().state == NodeState::Waiting);
        if self.policy() == GrantPolicy::Cats && q.waiting.len() > 1 {
            let mut seen = Default::default();
            let mut stack = Vec::new();
            let mut keyed: Vec<(bool, usize, Waiter)> = q
                .waiting
                .drain(..)
                .map(|w| (w.upgrade, g.cats_weight(w.txn, &mut seen, &mut stack), w))
                .collect();
            // Upgrades first, then heavier first; stable, so FIFO among equals.
            keyed.sort_by_key(|k| std::cmp::Reverse((k.0, k.1)));
            q.waiting.extend(keyed.into_iter().map(|(_, _, w)| w));
        }
        // Grant pass: a waiter is granted if it conflicts neither with the
        // granted locks of others nor with a still-waiting request ahead.
        let mut kept: Vec<Waiter> = Vec::with_capacity(q.waiting.len());
        for w in std::mem::take(&mut q.waiting) {
            let ok = if w.upgrade {
                q.granted.iter().all(|&(t, _)| t == w.txn)
            } else {
                q.granted
                    .iter()
                    .all(|&(t, m)| t == w.txn || !m.conflicts(w.mode))
                    && kept
                        .iter()
                        .all(|k| k.txn == w.txn || !k.mode.conflicts(w.mode))
            };
            if !ok {
                kept.push(w);
                continue;
            }
            {
                let mut st = w.node.st.lock();
                st.state = NodeState::Granted;
                if let Some(wk) = st.waker.take() {
                    out.wakers.push(wk);
                }
            }
            if w.upgrade {
                let i = q.granted.position(w.txn).unwrap();
                q.granted.at(i).1 = LockMode::Exclusive;
            } else {
                q.granted.push((w.txn, w.mode));
            }
            g.remove(w.txn, &w.node);
        }
        q.waiting = kept;
        self.refresh_edges(q, &mut g, None, out);
    }

    /// Recompute out-edges of every waiter in `q`; run deadlock detection
    /// from those that gained an edge. Returns true if `prefer` was chosen
    /// as a victim.
    fn refresh_edges(
        &self,
        q: &mut Queue,
        g: &mut Graph,
        prefer: Option<TxnId>,
        out: &mut Outcome,
    ) -> bool {
        let mut changed = Vec::new();
        for i in 0..q.waiting.len() {
            let b = q.blockers(i);
            if g.set_blockers(q.waiting[i].txn, b) {
                changed.push(q.waiting[i].txn);
            }
        }
        // The requester (if any) goes first so ties pick it (MySQL's rule).
        if let Some(p) = prefer {
            if let Some(pos) = changed.iter().position(|&t| t == p) {
                changed.swap(0, pos);
            }
        }
        let mut prefer_victim = false;
        for t in changed {
            if !g.waits.contains_key(&t) {
                continue;
            }
            self.searches.fetch_add(1, Ordering::Relaxed);
            if g.resolve(t, prefer, out) {
                prefer_victim = true;
            }
        }
        prefer_victim
    }

    /// Grants `txn` `mode` on `q` when nothing stands in the way: None
    /// when granted, else whether the request that must wait upgrades a
    /// lock `txn` holds.
    fn grant_at_once(
        &self,
        q: &mut Queue,
        txn: TxnId,
        mode: LockMode,
        out: &mut Outcome,
    ) -> Option<bool> {
        match q.granted.mode_of(txn) {
            Some(h) if h.covers(mode) => None,
            Some(_) if q.granted.len == 1 => {
                // Sole holder: upgrade in place. Waiters keep waiting (for
                // us, as before); refresh their edges.
                let i = q.granted.position(txn).expect("mode_of found txn");
                q.granted.at(i).1 = LockMode::Exclusive;
                if !q.waiting.is_empty() {
                    let mut g = self.graph.lock();
                    self.refresh_edges(q, &mut g, None, out);
                }
                None
            }
            Some(_) => Some(true),
            None => {
                let free = q.granted.iter().all(|&(_, m)| !m.conflicts(mode))
                    && q.waiting.iter().all(|w| !w.mode.conflicts(mode));
                if !free {
                    return Some(false);
                }
                q.granted.push((txn, mode));
                #[cfg(debug_assertions)]
                q.check();
                None
            }
        }
    }

    /// Queues a request that must wait and checks for a deadlock: the
    /// requester is the victim when it closes a cycle with the least work.
    fn enqueue(self: &Arc<Self>, q: &mut Queue, r: Request, out: &mut Outcome) -> Acquire {
        let node = Arc::new(WaitNode {
            txn: r.txn,
            key: r.key,
            upgrade: r.upgrade,
            st: Mutex::new(NodeSt {
                state: NodeState::Waiting,
                waker: None,
                observed: false,
            }),
        });
        let waiter = Waiter {
            txn: r.txn,
            mode: r.mode,
            upgrade: r.upgrade,
            node: Arc::clone(&node),
        };
        if r.upgrade {
            // Upgrades go ahead of plain waiters: they already hold S, and
            // waiters behind would wait for it anyway.
            let pos = q.waiting.iter().take_while(|w| w.upgrade).count();
            q.waiting.insert(pos, waiter);
        } else {
            q.waiting.push(waiter);
        }
        let mut g = self.graph.lock();
        g.insert(r.txn, Arc::clone(&node), r.work);
        let victim = self.refresh_edges(q, &mut g, Some(r.txn), out);
        let result = if victim {
            drop(g);
            let p = q.waiting.iter().position(|w| Arc::ptr_eq(&w.node, &node));
            q.waiting.remove(p.expect("the request was queued above"));
            // Removing it may unblock requests queued behind it.
            self.regrant(q, out);
            Acquire::Deadlock
        } else {
            self.waits.fetch_add(1, Ordering::Relaxed);
            Acquire::Wait(LockWait {
                inner: Arc::clone(self),
                node,
                done: false,
            })
        };
        #[cfg(debug_assertions)]
        q.check();
        result
    }

    fn finish(&self, out: Outcome) {
        let Outcome {
            wakers,
            victims,
            deadlocks,
        } = out;
        if deadlocks > 0 {
            self.deadlocks.fetch_add(deadlocks, Ordering::Relaxed);
        }
        for w in wakers {
            w.wake();
        }
        // Remove the victims' queued requests, one shard latch at a time.
        for v in victims {
            let mut o = Outcome::default();
            {
                let mut sh = self.shard(v.key).lock();
                if let Some(q) = sh.queues.get_mut(&v.key) {
                    if let Some(p) = q.waiting.iter().position(|w| Arc::ptr_eq(&w.node, &v)) {
                        q.waiting.remove(p);
                        self.regrant(q, &mut o);
                        #[cfg(debug_assertions)]
                        q.check();
                    }
                    if q.is_empty() {
                        sh.queues.remove(&v.key);
                    }
                }
            }
            self.finish(o);
        }
    }

    /// Cancel a request (timeout or drop). Returns the state found:
    /// `Granted` means the grant won the race and the lock is kept if
    /// `keep_granted`, otherwise given back.
    fn cancel(&self, node: &Arc<WaitNode>, keep_granted: bool) -> NodeState {
        let mut out = Outcome::default();
        let state;
        {
            let mut sh = self.shard(node.key).lock();
            let Some(q) = sh.queues.get_mut(&node.key) else {
                return node.st.lock().state;
            };
            {
                let mut g = self.graph.lock();
                let mut st = node.st.lock();
                state = st.state;
                match st.state {
                    NodeState::Waiting => {
                        st.state = NodeState::Cancelled;
                        st.waker = None;
                        drop(st);
                        g.remove(node.txn, node);
                    }
                    NodeState::Granted if keep_granted => st.observed = true,
                    NodeState::Granted if !st.observed => {
                        // Granted but never seen by the owner: give it back
                        // (an upgrade falls back to the S it held before).
                        st.observed = true;
                        drop(st);
                        if node.upgrade {
                            if let Some(i) = q.granted.position(node.txn) {
                                q.granted.at(i).1 = LockMode::Shared;
                            }
                        } else {
                            q.granted.remove(node.txn);
                        }
                    }
                    _ => {}
                }
            }
            if state != NodeState::Granted || !keep_granted {
                if let Some(p) = q.waiting.iter().position(|w| Arc::ptr_eq(&w.node, node)) {
                    q.waiting.remove(p);
                }
                self.regrant(q, &mut out);
            }
            #[cfg(debug_assertions)]
            q.check();
            if q.is_empty() {
                sh.queues.remove(&node.key);
            }
        }
        self.finish(out);
        state
    }
}

impl LockSys {
    pub fn new(config: LockConfig) -> Self {
        let n = config.shards.max(1);
        let inner = Inner {
            shards: (0..n)
                .map(|_| {
                    CachePadded::new(Mutex::new(Shard {
                        queues: KeyMap::default(),
                    }))
                })
                .collect(),
            graph: CachePadded::new(Mutex::new(Graph::default())),
            policy: AtomicU8::new(0),
            waits: AtomicU64::new(0),
            deadlocks: AtomicU64::new(0),
            searches: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
        };
        let s = LockSys {
            inner: Arc::new(inner),
        };
        s.set_policy(config.policy);
        s
    }

    pub fn set_policy(&self, p: GrantPolicy) {
        self.inner
            .policy
            .store((p == GrantPolicy::Cats) as u8, Ordering::Relaxed);
    }

    pub fn policy(&self) -> GrantPolicy {
        self.inner.policy()
    }

    /// Request a lock. Re-requesting a held lock (or S while X is held) is
    /// granted at once; S→X upgrade is supported.
    pub fn acquire(&self, txn: TxnId, key: LockKey, mode: LockMode) -> Acquire {
        self.acquire_weighted(txn, key, mode, 0)
    }

    /// Like [`acquire`](Self::acquire), with the requester's work so far
    /// (e.g. locks held + rows changed, like MySQL's txn weight): on a
    /// deadlock the transaction in the cycle with the least work is rolled
    /// back, ties going to the requester.
    pub fn acquire_weighted(&self, txn: TxnId, key: LockKey, mode: LockMode, work: u64) -> Acquire {
        debug_assert!(txn != 0);
        let inner = &self.inner;
        let mut out = Outcome::default();
        let result = {
            let mut sh = inner.shard(key).lock();
            let q = match sh.queues.entry(key) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    // Fast path: nobody has the key.
                    v.insert(Queue {
                        granted: Holders::one(txn, mode),
                        waiting: Vec::new(),
                    });
                    return Acquire::Granted;
                }
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            };
            debug_assert!(
                q.waiting.iter().all(|w| w.txn != txn),
                "txn {txn} already waits here"
            );
            match inner.grant_at_once(q, txn, mode, &mut out) {
                None => Acquire::Granted,
                Some(upgrade) => {
                    let request = Request {
                        txn,
                        key,
                        mode,
                        upgrade,
                        work,
                    };
                    inner.enqueue(q, request, &mut out)
                }
            }
        };
        inner.finish(out);
        result
    }

    /// Release all locks of `txn` on `keys` (each key once) and grant
    /// waiters per the policy, waking each granted waiter alone. A request
    /// of `txn` still waiting on one of the keys is withdrawn too.
    pub fn release_all(&self, txn: TxnId, keys: &[LockKey]) {
        let inner = &self.inner;
        let mut out = Outcome::default();
        for &key in keys {
            let mut sh = inner.shard(key).lock();
            let Some(q) = sh.queues.get_mut(&key) else {
                continue;
            };
            let removed = q.granted.remove(txn).is_some();
            if let Some(p) = q.waiting.iter().position(|w| w.txn == txn) {
                let w = q.waiting.remove(p);
                let mut g = inner.graph.lock();
                let mut st = w.node.st.lock();
                if st.state == NodeState::Waiting {
                    st.state = NodeState::Cancelled;
                    st.waker = None;
                    drop(st);
                    g.remove(txn, &w.node);
                }
            } else if !removed {
                continue;
            }
            inner.regrant(q, &mut out);
            #[cfg(debug_assertions)]
            q.check();
            if q.is_empty() {
                sh.queues.remove(&key);
            }
            drop(sh);
            if !out.wakers.is_empty() || !out.victims.is_empty() {
                inner.finish(std::mem::take(&mut out));
            }
        }
        inner.finish(out);
    }

    pub fn stats(&self) -> LockStats {
        LockStats {
            waits: self.inner.waits.load(Ordering::Relaxed),
            deadlocks: self.inner.deadlocks.load(Ordering::Relaxed),
            deadlock_searches: self.inner.searches.load(Ordering::Relaxed),
            timeouts: self.inner.timeouts.load(Ordering::Relaxed),
            current_waiters: self.inner.graph.lock().waits.len() as u64,
        }
    }

    /// Mode `txn` holds on `key`, if any (tests, diagnostics).
    pub fn held_mode(&self, txn: TxnId, key: LockKey) -> Option<LockMode> {
        let sh = self.inner.shard(key).lock();
        sh.queues.get(&key).and_then(|q| q.granted.mode_of(txn))
    }

    /// Whether a transaction other than `txn` holds a lock on `key` — a
    /// look without queueing (an insert intention that finds its gap free
    /// need not take anything).
    pub fn held_by_other(&self, txn: TxnId, key: LockKey) -> bool {
        let sh = self.inner.shard(key).lock();
        sh.queues
            .get(&key)
            .is_some_and(|q| q.granted.iter().any(|&(t, _)| t != txn))
    }

    /// Number of keys with a queue (tests: everything released → 0).
    pub fn queue_count(&self) -> usize {
        self.inner
            .shards
            .iter()
            .map(|s| s.lock().queues.len())
            .sum()
    }
}

impl LockWait {
    pub fn txn(&self) -> TxnId {
        self.node.txn
    }

    pub fn key(&self) -> LockKey {
        self.node.key
    }

    /// Give up waiting (the caller's lock wait timeout fired). Returns
    /// `Err(Timeout)`, unless the lock was granted meanwhile (`Ok`, the
    /// lock is held) or the request was a deadlock victim.
    pub fn timeout(mut self) -> Result<(), LockError> {
        self.done = true;
        match self.inner.cancel(&self.node, true) {
            NodeState::Granted => Ok(()),
            NodeState::Deadlock => Err(LockError::Deadlock),
            _ => {
                self.inner.timeouts.fetch_add(1, Ordering::Relaxed);
                Err(LockError::Timeout)
            }
        }
    }
}

impl Future for LockWait {
    type Output = Result<(), LockError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let r = {
            let mut st = self.node.st.lock();
            match st.state {
                NodeState::Granted => {
                    st.observed = true;
                    Poll::Ready(Ok(()))
                }
                NodeState::Deadlock => Poll::Ready(Err(LockError::Deadlock)),
                NodeState::Cancelled => Poll::Ready(Err(LockError::Timeout)),
                NodeState::Waiting => {
                    match &st.waker {
                        Some(w) if w.will_wake(cx.waker()) => {}
                        _ => st.waker = Some(cx.waker().clone()),
                    }
                    Poll::Pending
                }
            }
        };
        if r.is_ready() {
            self.done = true;
        }
        r
    }
}

impl Drop for LockWait {
    fn drop(&mut self) {
        if !self.done {
            self.inner.cancel(&self.node, false);
        } else if self.node.st.lock().state == NodeState::Deadlock {
            // Make sure the victim's request is gone from its queue (the
            // detecting thread normally did it already).
            self.inner.cancel(&self.node, false);
        }
    }
}
