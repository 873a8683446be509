//! Transaction system: ids, sharded registry of active transactions, hybrid
//! ReadView, transaction throttling.
//!
//! - Ids are assigned and entered into the global active set under one
//!   short critical section (the set is a hybrid bitmap + small vector,
//!   book 4.2.8 / 8.2.3), so a ReadView taken under the same mutex is an
//!   exact snapshot and copies a few hundred bytes instead of 8 bytes per
//!   active transaction.
//! - The registry of active transactions, used for "is this writer still
//!   active?" look-ups, is sharded with one latch per shard and updated
//!   outside the active-set critical section (7.1.4).
//! - Views register in sharded atomic slots; closing one is a store, not a
//!   trip through the trx-sys mutex (8.2.4). `purge_horizon` takes the min
//!   lazily.
//! - `admit` is the throttling gate of 8.3.2.

mod active;
mod throttle;
mod view;

use active::ActiveSet;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

pub use throttle::{Admission, Ticket};
pub use view::ReadView;

pub type TxnId = u64;

/// Default bitmap window in ids: 16384 bits = 2 KiB, the size of the
/// book's per-view short array (8.2.3).
pub const DEFAULT_SHORT_WINDOW: usize = 16 * 1024;

#[derive(Clone, Debug)]
pub struct TxnConfig {
    /// Shards of the active-transaction registry (7.1.4), e.g. 64.
    pub registry_shards: usize,
    /// Max transactions admitted at once by [`TxnSys::admit`]; 0 = unlimited.
    pub throttle_limit: usize,
    /// Ids covered by the bitmap part of the active set; older active ids
    /// move to the long vector. Rounded up to a power of two (min 128).
    pub short_window: usize,
}

impl Default for TxnConfig {
    fn default() -> Self {
        TxnConfig {
            registry_shards: 64,
            throttle_limit: 0,
            short_window: DEFAULT_SHORT_WINDOW,
        }
    }
}

/// Hasher for already well-distributed integer keys (a multiply mix).
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
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type IdSet = HashSet<TxnId, BuildHasherDefault<IdHasher>>;

pub struct TxnSys {
    active: CachePadded<Mutex<ActiveSet>>,
    /// Mirror of the next id, readable without the mutex.
    next_id: CachePadded<AtomicU64>,
    active_count: CachePadded<AtomicUsize>,
    registry: Box<[CachePadded<Mutex<IdSet>>]>,
    views: view::ViewSlots,
    gate: Arc<throttle::Gate>,
}

impl TxnSys {
    pub fn new(config: TxnConfig) -> Self {
        let shards = config.registry_shards.max(1);
        TxnSys {
            active: CachePadded::new(Mutex::new(ActiveSet::new(config.short_window))),
            next_id: CachePadded::new(AtomicU64::new(1)),
            active_count: CachePadded::new(AtomicUsize::new(0)),
            registry: (0..shards)
                .map(|_| CachePadded::new(Mutex::new(IdSet::default())))
                .collect(),
            views: view::ViewSlots::new(64),
            gate: Arc::new(throttle::Gate::new(config.throttle_limit)),
        }
    }

    fn shard(&self, id: TxnId) -> &Mutex<IdSet> {
        &self.registry[(id % self.registry.len() as u64) as usize]
    }

    /// Assign the next id to a read-write transaction and make it active.
    pub fn begin_rw(&self) -> TxnId {
        let id = {
            let mut a = self.active.lock();
            let id = a.begin();
            self.next_id.store(a.next_id, Ordering::Relaxed);
            a.check();
            id
        };
        self.active_count.fetch_add(1, Ordering::Relaxed);
        // Registry insert outside the active-set critical section (7.1.4).
        self.shard(id).lock().insert(id);
        id
    }

    /// Commit or rollback done: new ReadViews see the changes of `id`.
    pub fn finish(&self, id: TxnId) {
        let removed = {
            let mut a = self.active.lock();
            let r = a.finish(id);
            a.check();
            r
        };
        debug_assert!(removed, "finish of inactive txn {id}");
        if removed {
            self.active_count.fetch_sub(1, Ordering::Relaxed);
        }
        self.shard(id).lock().remove(&id);
    }

    /// Whether `id` is still active, answered by one registry shard
    /// without touching the active-set mutex.
    pub fn is_active(&self, id: TxnId) -> bool {
        self.shard(id).lock().contains(&id)
    }

    /// Take a snapshot of the active set. `creator` sees its own changes.
    pub fn read_view(&self, creator: Option<TxnId>) -> ReadView {
        let mut v = ReadView {
            creator: 0,
            up_limit: 0,
            low_limit: 0,
            short_min: 0,
            short_base: 0,
            short: Vec::new(),
            long: Vec::new(),
            slot: None,
        };
        self.refresh_view(&mut v, creator);
        v
    }

    /// Re-take a snapshot into an existing view, reusing its buffers and
    /// its registration slot (READ COMMITTED takes one per statement).
    pub fn refresh_view(&self, v: &mut ReadView, creator: Option<TxnId>) {
        v.creator = creator.unwrap_or(0);
        let a = self.active.lock();
        v.low_limit = a.next_id;
        v.up_limit = a.min_active();
        v.short_min = a.short_min;
        v.short_base = a.short_base();
        a.copy_window(&mut v.short);
        v.long.clear();
        v.long.extend_from_slice(&a.long);
        // Registered while the mutex is held: purge_horizon reads the
        // global minimum under the mutex first, so any view it misses in
        // the slot scan was created later and has a larger up_limit.
        match &mut v.slot {
            Some(s) => s.update(v.up_limit),
            None => v.slot = Some(self.views.register(v.up_limit)),
        }
        drop(a);
    }

    /// Oldest id an open or future view might not see. A version written by
    /// an id below it and superseded by a version whose writer is also
    /// below it is invisible to every view and can be purged.
    pub fn purge_horizon(&self) -> TxnId {
        let g = self.active.lock().min_active();
        match self.views.min_registered() {
            Some(v) => v.min(g),
            None => g,
        }
    }

    /// The next id to be assigned (InnoDB's `txn_sys->max_trx_id`): every
    /// id handed out so far is below it.
    pub fn max_trx_id(&self) -> TxnId {
        self.next_id.load(Ordering::Relaxed)
    }

    /// After recovery: continue assigning ids from `next`. Must be called
    /// with no active transactions.
    pub fn set_next_id(&self, next: TxnId) {
        let mut a = self.active.lock();
        a.set_next_id(next);
        self.next_id.store(a.next_id, Ordering::Relaxed);
    }

    pub fn active_count(&self) -> usize {
        self.active_count.load(Ordering::Relaxed)
    }

    /// Number of open ReadViews (a scan of the slots; for stats).
    pub fn open_views(&self) -> usize {
        self.views.open_count()
    }

    /// Wait for admission through the throttling gate (8.3.2).
    pub fn admit(&self) -> Admission {
        Admission::new(Arc::clone(&self.gate))
    }

    /// A slot without queueing for a transaction already under way (see
    /// `throttle`): it may hold locks that admitted transactions wait for.
    pub fn readmit(&self) -> Ticket {
        self.gate.readmit()
    }

    /// Changes whenever the gate makes progress; see [`Admission::force`].
    pub fn throttle_progress(&self) -> u64 {
        self.gate.progress()
    }

    pub fn set_throttle_limit(&self, limit: usize) {
        self.gate.set_limit(limit);
    }

    /// Applies the throttle limit (true, the default) or lets every
    /// transaction in whatever the limit (false); see `throttle`.
    pub fn set_throttle_engaged(&self, engaged: bool) {
        self.gate.set_engaged(engaged);
    }

    pub fn throttle_stats(&self) -> ThrottleStats {
        self.gate.stats()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottleStats {
    pub limit: usize,
    /// false: the gate stands open whatever the limit.
    pub engaged: bool,
    pub admitted: usize,
    pub waiting: usize,
    /// Waiters let in over the limit because the gate was stalled.
    pub forced: u64,
    /// Parked transactions that re-entered without queueing.
    pub readmitted: u64,
}
