//! ReadView with the hybrid active set (8.2.3) and view registration that
//! closes without any global latch (8.2.4).

use crate::TxnId;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A consistent-read snapshot.
///
/// Visibility follows InnoDB's `changes_visible`: the creator's own changes,
/// ids below `up_limit` are visible; ids at or above `low_limit` are not;
/// in between, an id is visible unless it was active when the view was
/// taken. That last probe is one bit test for recent ids and a binary
/// search of a (small) vector for long-running ones.
pub struct ReadView {
    pub(crate) creator: TxnId,
    pub(crate) up_limit: TxnId,
    pub(crate) low_limit: TxnId,
    /// Ids below this are checked in `long`, ids at or above it in `short`.
    pub(crate) short_min: TxnId,
    /// Bit `i` of the concatenated words stands for id `short_base + i`.
    pub(crate) short_base: TxnId,
    pub(crate) short: Vec<u64>,
    pub(crate) long: Vec<TxnId>,
    pub(crate) slot: Option<SlotHandle>,
}

impl ReadView {
    /// Whether changes of transaction `id` are visible in this view.
    #[inline]
    pub fn sees(&self, id: TxnId) -> bool {
        debug_assert!(id != 0, "txn id 0 is never valid");
        debug_assert!(self.is_open(), "a closed view is kept for reuse only");
        if id < self.up_limit || id == self.creator {
            return true;
        }
        if id >= self.low_limit {
            return false;
        }
        if id < self.short_min {
            return self.long.binary_search(&id).is_err();
        }
        let off = id - self.short_base;
        match self.short.get((off / 64) as usize) {
            Some(w) => w & (1u64 << (off % 64)) == 0,
            None => true,
        }
    }

    /// The view sees no id at or above this ("high water mark").
    pub fn low_limit(&self) -> TxnId {
        self.low_limit
    }

    /// The view sees every id below this ("low water mark").
    pub fn up_limit(&self) -> TxnId {
        self.up_limit
    }

    pub fn creator(&self) -> Option<TxnId> {
        (self.creator != 0).then_some(self.creator)
    }

    /// Gives the view's registration up: it no longer holds back purge and
    /// must not be asked `sees` again until `TxnSys::refresh_view` reopens
    /// it, reusing its buffers and its slot's shard (a statement in READ
    /// COMMITTED, or an autocommit one, takes a view each: freeing and
    /// re-registering one each time touched a reference count and an
    /// allocation shared with other connections).
    pub fn close(&mut self) {
        if let Some(s) = &mut self.slot {
            s.close();
        }
    }

    /// Whether the view is registered (not closed).
    pub fn is_open(&self) -> bool {
        self.slot.as_ref().is_some_and(|s| s.value != 0)
    }

    /// Number of ids the view considers active (for tests and stats).
    pub fn active_len(&self) -> usize {
        self.long.len()
            + self
                .short
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum::<usize>()
    }

    /// How many of the view's active ids sit in the long vector.
    pub fn long_len(&self) -> usize {
        self.long.len()
    }
}

impl std::fmt::Debug for ReadView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadView")
            .field("creator", &self.creator)
            .field("up_limit", &self.up_limit)
            .field("low_limit", &self.low_limit)
            .field("active", &self.active_len())
            .finish()
    }
}

/// Slots per shard; beyond that a shard spills into a small vector.
const SLOTS_PER_SHARD: usize = 32;

/// One shard of open-view registrations. Each slot holds the `up_limit` of
/// an open view, or 0 when free. Opening claims a slot with a CAS and
/// closing stores 0: no latch is taken on close (8.2.4, the "double latch"
/// the book removed from `view_close`).
pub(crate) struct SlotShard {
    slots: [AtomicU64; SLOTS_PER_SHARD],
    /// Rarely used: more than SLOTS_PER_SHARD open views hashed to this shard.
    overflow: Mutex<Vec<TxnId>>,
}

pub(crate) struct SlotHandle {
    shard: Arc<SlotShard>,
    /// Index into `slots`, or usize::MAX for an overflow registration.
    index: usize,
    value: TxnId,
}

impl SlotShard {
    /// Registers `up_limit` in a free slot, scanning from `start`, or in
    /// `overflow` when all are taken (index `usize::MAX`).
    fn claim(&self, start: usize, up_limit: TxnId) -> usize {
        (0..SLOTS_PER_SHARD)
            .map(|k| (start + k) % SLOTS_PER_SHARD)
            .find(|&i| {
                let s = &self.slots[i];
                s.load(Ordering::Relaxed) == 0
                    && s.compare_exchange(0, up_limit, Ordering::SeqCst, Ordering::Relaxed)
                        .is_ok()
            })
            .unwrap_or_else(|| {
                self.overflow.lock().push(up_limit);
                usize::MAX
            })
    }
}

impl SlotHandle {
    /// Raise the registered limit (a refreshed view only moves forward), or
    /// register again after `close`, in the same shard and preferably the
    /// same slot: the handle keeps its shard, so reopening a view touches no
    /// reference count shared with other views.
    pub(crate) fn update(&mut self, up_limit: TxnId) {
        debug_assert!(up_limit != 0);
        debug_assert!(up_limit >= self.value);
        if self.value == 0 {
            let start = if self.index == usize::MAX {
                0
            } else {
                self.index
            };
            self.index = self.shard.claim(start, up_limit);
        } else if self.index == usize::MAX {
            let mut o = self.shard.overflow.lock();
            if let Some(p) = o.iter().position(|&v| v == self.value) {
                o[p] = up_limit;
            }
        } else {
            self.shard.slots[self.index].store(up_limit, Ordering::SeqCst);
        }
        self.value = up_limit;
    }

    /// Gives the registration up (the view no longer holds back purge);
    /// `update` registers it again.
    pub(crate) fn close(&mut self) {
        if self.value == 0 {
            return;
        }
        if self.index == usize::MAX {
            let mut o = self.shard.overflow.lock();
            if let Some(p) = o.iter().position(|&v| v == self.value) {
                o.swap_remove(p);
            }
        } else {
            self.shard.slots[self.index].store(0, Ordering::Release);
        }
        self.value = 0;
    }
}

impl Drop for SlotHandle {
    fn drop(&mut self) {
        self.close();
    }
}

pub(crate) struct ViewSlots {
    shards: Box<[CachePadded<Arc<SlotShard>>]>,
}

thread_local! {
    static HINT: usize = {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

impl ViewSlots {
    pub(crate) fn new(shards: usize) -> Self {
        let shards = (0..shards.max(1))
            .map(|_| {
                CachePadded::new(Arc::new(SlotShard {
                    slots: std::array::from_fn(|_| AtomicU64::new(0)),
                    overflow: Mutex::new(Vec::new()),
                }))
            })
            .collect();
        ViewSlots { shards }
    }

    /// Register a view with `up_limit`. Called while the active-set mutex
    /// is held so `min_registered` (run after taking that mutex) sees it.
    pub(crate) fn register(&self, up_limit: TxnId) -> SlotHandle {
        debug_assert!(up_limit != 0);
        // Threads spread over shards so the Arc count and slots of one
        // shard are touched by few cores.
        let hint = HINT.with(|h| *h) % self.shards.len();
        let shard = &self.shards[hint];
        let start = HINT.with(|h| *h / self.shards.len()) % SLOTS_PER_SHARD;
        SlotHandle {
            shard: Arc::clone(shard),
            index: shard.claim(start, up_limit),
            value: up_limit,
        }
    }

    /// Smallest `up_limit` of any open view, computed lazily by scanning.
    pub(crate) fn min_registered(&self) -> Option<TxnId> {
        let mut min = u64::MAX;
        for shard in self.shards.iter() {
            for s in shard.slots.iter() {
                let v = s.load(Ordering::SeqCst);
                if v != 0 && v < min {
                    min = v;
                }
            }
            let o = shard.overflow.lock();
            if let Some(&v) = o.iter().min() {
                min = min.min(v);
            }
        }
        (min != u64::MAX).then_some(min)
    }

    pub(crate) fn open_count(&self) -> usize {
        self.shards
            .iter()
            .map(|sh| {
                sh.slots
                    .iter()
                    .filter(|s| s.load(Ordering::Relaxed) != 0)
                    .count()
                    + sh.overflow.lock().len()
            })
            .sum()
    }
}
