//! Point-lookup hash over the clustered skip list (4.2.5, 4.2.8: a hybrid of
//! an ordered structure for scans and a hash table for exact keys, the role
//! InnoDB's adaptive hash index plays in front of its B+trees).
//!
//! Why: a skip-list search on a table of 100,000 rows visits about twenty
//! nodes, each a likely cache miss, and was 6-13% of the server's CPU on
//! sysbench's point selects and writes. A hash probe touches its bucket and
//! then the node itself, which the reader needs anyway.
//!
//! What it stores: the skip list's own entries, each holding a reference
//! count on its node, so a node reachable from the hash stays allocated
//! even after the skip list unlinks it. No key is copied: the table hashes
//! and compares through the entry's key.
//!
//! Consistency with the skip list (the table keeps it):
//! - every record the skip list holds is in the hash before a version is
//!   added to it, so a lookup misses only records with no version yet,
//!   which no reader can see anyway;
//! - an unlinked record leaves the hash right after; in between, a lookup
//!   can find it dead, exactly as a skip-list lookup could find it between
//!   purge marking it dead and unlinking it.

use crate::table::{Entry, Record};
use hashbrown::HashTable;
use parking_lot::RwLock;

/// Shards keep a resize (under a shard's write latch) from stalling every
/// lookup, and readers of different shards off one latch word.
const SHARDS: usize = 16;

pub(crate) struct PointIndex {
    shards: Box<[RwLock<HashTable<Entry<'static>>>]>,
}

/// The index's hash of an encoded key.
pub(crate) fn hash_key(key: &[u8]) -> u64 {
    lockstep_types::value::hash_key(0, key)
}

fn rehash(entry: &Entry<'static>) -> u64 {
    hash_key(entry.key())
}

fn same_node(a: &Entry<'_>, b: &Entry<'_>) -> bool {
    std::ptr::eq(a.value() as *const Record, b.value() as *const Record)
}

impl PointIndex {
    pub fn new() -> PointIndex {
        PointIndex {
            shards: (0..SHARDS).map(|_| RwLock::new(HashTable::new())).collect(),
        }
    }

    fn shard(&self, hash: u64) -> &RwLock<HashTable<Entry<'static>>> {
        // High bits: hashbrown takes the bucket from the low bits.
        &self.shards[(hash >> 58) as usize % SHARDS]
    }

    /// The entry stored under `key`, with its own reference on the node.
    pub fn get<'a>(&'a self, key: &[u8]) -> Option<Entry<'a>> {
        let hash = hash_key(key);
        let shard = self.shard(hash).read();
        shard.find(hash, |e| e.key() == key).cloned()
    }

    /// Stores `entry` under its key, replacing an entry of another node
    /// with the same key unless that one is still linked and `entry` is not
    /// (a node that purge unlinked meanwhile never displaces its successor).
    ///
    /// # Safety
    /// `entry` must come from the skip list this index belongs to, and the
    /// index must be dropped (or cleared) before that skip list: the stored
    /// entry outlives the borrow it was made from.
    pub unsafe fn insert(&self, entry: &Entry<'_>) {
        let hash = hash_key(entry.key());
        let mut shard = self.shard(hash).write();
        // SAFETY: per the contract above, the skip list outlives the entry.
        let stored: Entry<'static> = unsafe { std::mem::transmute(entry.clone()) };
        match shard.entry(hash, |e| e.key() == entry.key(), rehash) {
            hashbrown::hash_table::Entry::Occupied(mut slot) => {
                let stored_linked = !slot.get().is_removed();
                if !same_node(slot.get(), entry) && (!stored_linked || !entry.is_removed()) {
                    *slot.get_mut() = stored;
                }
            }
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(stored);
            }
        }
    }

    /// Drops `entry`'s node from the index if it is the one stored under
    /// its key (a newer node for the key stays).
    pub fn remove(&self, entry: &Entry<'_>) {
        let hash = hash_key(entry.key());
        let mut shard = self.shard(hash).write();
        if let Ok(slot) = shard.find_entry(hash, |e| same_node(e, entry)) {
            slot.remove();
        }
    }

    pub fn clear(&self) {
        for shard in self.shards.iter() {
            shard.write().clear();
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_spreads_sequential_keys_over_shards_and_buckets() {
        // Integer primary keys as encode_key writes them: a tag byte, then
        // eight big-endian bytes.
        let mut shards = [0usize; SHARDS];
        let mut low = [0usize; 256];
        for id in 0u64..65_536 {
            let mut key = vec![0x03];
            key.extend_from_slice(&id.to_be_bytes());
            let h = hash_key(&key);
            shards[(h >> 58) as usize % SHARDS] += 1;
            low[(h & 0xFF) as usize] += 1;
        }
        for n in shards {
            assert!((3_600..=4_600).contains(&n), "shard load {n}");
        }
        for n in low {
            assert!((160..=352).contains(&n), "bucket load {n}");
        }
    }

    #[test]
    fn keys_that_differ_hash_apart() {
        let keys: [&[u8]; 6] = [b"", b"\0", b"\0\0", b"abcdefgh", b"abcdefgh\0", b"abcdefgi"];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(hash_key(a), hash_key(b), "{a:?} {b:?}");
            }
        }
    }
}
