//! Sets of collation keys: the rows a DISTINCT, a UNION or a
//! COUNT(DISTINCT) has already met, and the groups of a GROUP BY.
//!
//! Why not `HashSet<Vec<u8>>`: sysbench's distinct range query and TPC-C's
//! Stock-Level dedupe every row they read, and a heap allocation plus a
//! SipHash of each key were most of that work. Here keys are written end to
//! end into one buffer (the caller encodes straight into it) and hashed
//! with the engine's key hash under a seed chosen per set, so a client
//! cannot pick values that collide in every set.

use hashbrown::HashTable;
use std::hash::BuildHasher;

pub struct KeySet {
    /// Every key, end to end.
    bytes: Vec<u8>,
    /// Per key, in order of first insertion: (hash, start, end) in `bytes`.
    keys: Vec<(u64, usize, usize)>,
    /// Ordinals into `keys`.
    table: HashTable<u32>,
    seed: u64,
}

impl Default for KeySet {
    fn default() -> Self {
        KeySet {
            bytes: Vec::new(),
            keys: Vec::new(),
            table: HashTable::new(),
            seed: std::collections::hash_map::RandomState::new().hash_one(0u8),
        }
    }
}

impl KeySet {
    /// Adds the key `write` appends to the buffer it is given. Returns the
    /// key's ordinal (keys are numbered in order of first insertion) and,
    /// if the key is new, the bytes the set grew by (for memory
    /// accounting); a key already present is not kept twice.
    pub fn insert_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> (usize, Option<usize>) {
        let start = self.bytes.len();
        write(&mut self.bytes);
        let end = self.bytes.len();
        let hash = lockstep_types::value::hash_key(self.seed, &self.bytes[start..end]);
        let (bytes, keys) = (&self.bytes, &self.keys);
        let found = self.table.find(hash, |&i| {
            let (h, s, e) = keys[i as usize];
            h == hash && bytes[s..e] == bytes[start..end]
        });
        if let Some(&i) = found {
            self.bytes.truncate(start);
            return (i as usize, None);
        }
        let ordinal = self.keys.len();
        debug_assert!(
            ordinal < u32::MAX as usize,
            "a key set outgrew its ordinals"
        );
        self.keys.push((hash, start, end));
        let keys = &self.keys;
        self.table
            .insert_unique(hash, ordinal as u32, |&i| keys[i as usize].0);
        let grown =
            end - start + std::mem::size_of::<(u64, usize, usize)>() + std::mem::size_of::<u32>();
        (ordinal, Some(grown))
    }

    /// Whether `key` was inserted.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.find(key).is_some()
    }

    /// The ordinal of `key`, if it was inserted.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        let hash = lockstep_types::value::hash_key(self.seed, key);
        let (bytes, keys) = (&self.bytes, &self.keys);
        let found = self.table.find(hash, |&i| {
            let (h, s, e) = keys[i as usize];
            h == hash && bytes[s..e] == *key
        });
        found.map(|&i| i as usize)
    }

    /// How many distinct keys it holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_key_once_numbered_in_first_insertion_order() {
        let mut set = KeySet::default();
        let mut put = |k: &[u8]| {
            let (i, grown) = set.insert_with(|b| b.extend_from_slice(k));
            (i, grown.is_some())
        };
        assert_eq!(put(b"b"), (0, true));
        assert_eq!(put(b"a"), (1, true));
        assert_eq!(put(b"b"), (0, false));
        assert_eq!(put(b""), (2, true));
        assert_eq!(put(b""), (2, false));
        assert_eq!(put(b"ab"), (3, true));
        assert_eq!(put(b"a"), (1, false));
        // A rejected key leaves no bytes behind.
        assert_eq!(set.bytes, b"baab");
        assert!(set.contains(b"ab") && set.contains(b"") && !set.contains(b"c"));
        assert_eq!(set.keys.len(), 4);
    }

    #[test]
    fn many_keys_survive_growth() {
        let mut set = KeySet::default();
        for i in 0u32..10_000 {
            let (n, grown) = set.insert_with(|b| b.extend_from_slice(&i.to_be_bytes()));
            assert_eq!((n, grown.is_some()), (i as usize, true));
        }
        for i in (0u32..10_000).rev() {
            let (n, grown) = set.insert_with(|b| b.extend_from_slice(&i.to_be_bytes()));
            assert_eq!((n, grown), (i as usize, None));
        }
    }
}
