//! Dependency tracking for parallel replay (9.4.3): last_committed of a
//! transaction is the newest earlier transaction that wrote one of the same
//! rows. The history is a fixed-size, allocation-free, set-associative
//! table of (key fragment, sequence number); an evicted entry raises a
//! floor below which every transaction is treated as a dependency, so the
//! answer is always safe (overflow degrades to serial, never to wrong).

const WAYS: usize = 4;

pub struct WritesetHistory {
    sets: Box<[[(u64, u64); WAYS]]>,
    mask: usize,
    /// Highest sequence number whose writeset was forgotten.
    floor: u64,
}

impl WritesetHistory {
    /// `capacity` entries, rounded to a power of two number of sets.
    pub fn new(capacity: usize) -> Self {
        let sets = (capacity / WAYS).next_power_of_two().max(1);
        WritesetHistory {
            sets: vec![[(0, 0); WAYS]; sets].into_boxed_slice(),
            mask: sets - 1,
            floor: 0,
        }
    }

    /// Makes every later transaction depend on `seq` (a DDL statement: a
    /// replica must not apply an insert before the CREATE TABLE it needs).
    pub fn barrier(&mut self, seq: u64) {
        self.floor = self.floor.max(seq);
    }

    /// Records `keys` as written by `seq` and returns its last_committed.
    /// Callers pass sequence numbers in increasing order.
    pub fn commit(&mut self, keys: &[u64], seq: u64) -> u64 {
        let mut last = self.floor;
        let mut own_evicted = false;
        for &key in keys {
            let key = key.max(1); // 0 marks an empty slot
            let set = &mut self.sets[(key as usize ^ (key >> 32) as usize) & self.mask];
            if let Some(slot) = set.iter_mut().find(|(k, _)| *k == key) {
                // A key repeated within one transaction is not a dependency.
                if slot.1 != seq {
                    last = last.max(slot.1);
                }
                slot.1 = seq;
                continue;
            }
            let victim = set
                .iter_mut()
                .min_by_key(|(k, s)| if *k == 0 { 0 } else { *s })
                .expect("a set has WAYS slots");
            if victim.0 != 0 {
                if victim.1 == seq {
                    // Our own key is forgotten: later writers of it must
                    // depend on us, which the floor says once we are done.
                    own_evicted = true;
                } else {
                    self.floor = self.floor.max(victim.1);
                    last = last.max(self.floor);
                }
            }
            *victim = (key, seq);
        }
        if own_evicted {
            self.floor = self.floor.max(seq);
        }
        debug_assert!(last < seq, "a transaction depends only on earlier ones");
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_orders_everything_after_it() {
        let mut h = WritesetHistory::new(1024);
        assert_eq!(h.commit(&[10], 1), 0);
        h.barrier(2);
        assert_eq!(h.commit(&[20], 3), 2, "a new row after DDL");
        assert_eq!(h.commit(&[10], 4), 2, "an older row after DDL");
        assert_eq!(h.commit(&[21], 5), 2);
    }

    #[test]
    fn independent_and_dependent() {
        let mut h = WritesetHistory::new(1024);
        assert_eq!(h.commit(&[10, 11], 1), 0);
        assert_eq!(h.commit(&[12], 2), 0);
        assert_eq!(h.commit(&[11], 3), 1);
        assert_eq!(h.commit(&[12, 11], 4), 3);
    }

    #[test]
    fn overflow_is_conservative() {
        let mut h = WritesetHistory::new(4);
        for seq in 1..100u64 {
            let last = h.commit(&[seq * 7919], seq);
            assert!(last < seq);
        }
        // Key of seq 1 was evicted long ago: its dependency is covered by the floor.
        assert!(h.commit(&[7919], 100) >= 1);
    }
}
