//! Change capture for an online ALTER TABLE: while the ALTER copies the
//! table from a snapshot, every write to the table notes its primary key
//! here, so the ALTER can re-read those rows at its switch and bring the
//! copy up to date (InnoDB's online row log, reduced to keys: the rows
//! themselves are read back from the table under the exclusive lock).
//!
//! With no ALTER running, a write pays one atomic load (`CaptureSlot::note`).
//! The key set is bounded: past its limit it stops recording and says so,
//! and the ALTER fails cleanly (the table is left as it was).

use parking_lot::{Mutex, RwLock};
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Shards of the key set, so concurrent writers rarely share a mutex.
const SHARDS: usize = 16;
/// Bytes charged per key beyond its own length (set entry, allocation).
const PER_KEY: usize = 48;

/// The keys written since an online ALTER started.
pub struct Capture {
    shards: Vec<Mutex<HashSet<Vec<u8>>>>,
    hasher: std::collections::hash_map::RandomState,
    bytes: AtomicUsize,
    limit: usize,
    overflowed: AtomicBool,
}

impl Capture {
    /// A capture that may hold about `limit` bytes of keys.
    pub fn new(limit: usize) -> Arc<Capture> {
        Arc::new(Capture {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: Default::default(),
            bytes: AtomicUsize::new(0),
            limit,
            overflowed: AtomicBool::new(false),
        })
    }

    /// Records `key` (once); past the limit only the overflow is kept.
    pub fn note(&self, key: &[u8]) {
        if self.overflowed.load(Ordering::Relaxed) {
            return;
        }
        let shard = self.hasher.hash_one(key) as usize % SHARDS;
        let mut shard = self.shards[shard].lock();
        if shard.contains(key) {
            return;
        }
        let size = key.len() + PER_KEY;
        if self.bytes.fetch_add(size, Ordering::Relaxed) + size > self.limit {
            self.overflowed.store(true, Ordering::Relaxed);
            return;
        }
        shard.insert(key.to_vec());
    }

    /// Whether more keys were written than the limit allowed.
    pub fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Bytes the keys take, as charged.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The keys recorded so far, in key order; the set is emptied.
    pub fn take(&self) -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = self
            .shards
            .iter()
            .flat_map(|s| std::mem::take(&mut *s.lock()))
            .collect();
        keys.sort_unstable();
        keys
    }
}

/// A table's hook for the capture: off unless an online ALTER runs.
#[derive(Default)]
pub struct CaptureSlot {
    on: AtomicBool,
    current: RwLock<Option<Arc<Capture>>>,
}

impl CaptureSlot {
    /// Called by every write after its version is in the chain: the load
    /// comes after the write, so a capture started before it sees the key
    /// here, and one started after it finds the version in its scan.
    #[inline]
    pub fn note(&self, key: &[u8]) {
        if self.on.load(Ordering::SeqCst) {
            self.note_slow(key);
        }
    }

    #[cold]
    fn note_slow(&self, key: &[u8]) {
        if let Some(c) = &*self.current.read() {
            c.note(key);
        }
    }

    /// Starts capturing into `capture`; stopped when the guard is dropped.
    /// One capture at a time (the ALTER holds the table's upgradable lock).
    pub fn start(&self, capture: Arc<Capture>) -> CaptureGuard<'_> {
        let mut current = self.current.write();
        debug_assert!(current.is_none(), "two online ALTERs on one table");
        *current = Some(capture);
        self.on.store(true, Ordering::SeqCst);
        CaptureGuard { slot: self }
    }
}

/// Stops the capture when dropped.
pub struct CaptureGuard<'a> {
    slot: &'a CaptureSlot,
}

impl Drop for CaptureGuard<'_> {
    fn drop(&mut self) {
        self.slot.on.store(false, Ordering::SeqCst);
        *self.slot.current.write() = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_keys_once_in_order_and_overflows_cleanly() {
        let slot = CaptureSlot::default();
        slot.note(b"ignored");
        let c = Capture::new(3 * (PER_KEY + 1));
        let guard = slot.start(c.clone());
        for k in [b"b", b"a", b"b", b"c"] {
            slot.note(k);
        }
        assert!(!c.overflowed());
        slot.note(b"d");
        assert!(c.overflowed(), "a fourth key is past the limit");
        drop(guard);
        slot.note(b"e");
        assert_eq!(c.take(), vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    }
}
