//! The global set of active read-write transactions as a hybrid structure
//! (book 4.2.8, 8.2.3): a ring bitmap covering the run of recent ("short")
//! ids and a small sorted vector for the few long-running ones that fell
//! out of the bitmap window.
//!
//! Invariants (checked by `check` in debug builds):
//! - `short_min` is the smallest active id that lives in the bitmap, or
//!   `next_id` when none does; every id below it is either finished or in
//!   `long`.
//! - `next_id - short_base() <= window`, so the words covering
//!   `[short_base, next_id)` map to distinct ring words and a view can copy
//!   them without aliasing.
//! - bits of ids below `short_min` are clear.

use crate::TxnId;

pub(crate) struct ActiveSet {
    /// Ring of `window / 64` words; id `i` is bit `i % 64` of word `(i / 64) % words`.
    ring: Box<[u64]>,
    words_mask: u64,
    pub(crate) window: u64,
    pub(crate) short_min: TxnId,
    pub(crate) short_count: usize,
    /// Sorted ascending; ids moved here are always older than any short id.
    pub(crate) long: Vec<TxnId>,
    pub(crate) next_id: TxnId,
}

impl ActiveSet {
    /// `window` is rounded up to a power of two, at least 128 bits.
    pub(crate) fn new(window: usize) -> Self {
        let window = window.max(128).next_power_of_two() as u64;
        let words = (window / 64) as usize;
        ActiveSet {
            ring: vec![0u64; words].into_boxed_slice(),
            words_mask: words as u64 - 1,
            window,
            short_min: 1,
            short_count: 0,
            long: Vec::new(),
            next_id: 1,
        }
    }

    #[inline]
    pub(crate) fn short_base(&self) -> TxnId {
        self.short_min & !63
    }

    #[inline]
    fn word_of(&self, id: TxnId) -> usize {
        ((id / 64) & self.words_mask) as usize
    }

    #[inline]
    fn test(&self, id: TxnId) -> bool {
        self.ring[self.word_of(id)] & (1u64 << (id % 64)) != 0
    }

    /// Smallest active id, or `next_id` when nothing is active.
    #[inline]
    pub(crate) fn min_active(&self) -> TxnId {
        match self.long.first() {
            Some(&l) => l,
            None => self.short_min,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.short_count + self.long.len()
    }

    /// Assign the next id and mark it active.
    pub(crate) fn begin(&mut self) -> TxnId {
        let id = self.next_id;
        // Keep the whole window [short_base, id] inside the ring. When the
        // oldest short ids fall out, move the still-active ones to `long`
        // (8.2.3: "the oldest short transaction IDs are converted into long
        // transactions"). Move an eighth of the window at once to amortize.
        if id + 1 - self.short_base() > self.window {
            let new_min = (id + 1 - self.window + self.window / 8 + 63) & !63;
            self.demote_below(new_min);
        }
        let w = self.word_of(id);
        self.ring[w] |= 1u64 << (id % 64);
        if self.short_count == 0 {
            debug_assert_eq!(self.short_min, id);
            self.short_min = id;
        }
        self.short_count += 1;
        self.next_id = id + 1;
        id
    }

    /// Move every active short id below `new_min` to the long vector.
    fn demote_below(&mut self, new_min: TxnId) {
        let mut id = self.short_min;
        while id < new_min && self.short_count > 0 {
            let w = self.word_of(id);
            let bits = self.ring[w] >> (id % 64);
            if bits == 0 {
                id = (id | 63) + 1;
                continue;
            }
            let bit = id + bits.trailing_zeros() as u64;
            if bit >= new_min {
                break;
            }
            self.ring[w] &= !(1u64 << (bit % 64));
            self.short_count -= 1;
            self.long.push(bit);
            id = bit + 1;
        }
        // Everything below new_min is now demoted; continue at the first
        // active short id (or next_id).
        self.short_min = new_min.max(self.short_min);
        self.advance_short_min();
    }

    /// Move `short_min` forward to the first active short id (amortized:
    /// each id is passed once).
    fn advance_short_min(&mut self) {
        if self.short_count == 0 {
            self.short_min = self.next_id;
            return;
        }
        let mut id = self.short_min;
        loop {
            let w = self.word_of(id);
            let bits = self.ring[w] >> (id % 64);
            if bits != 0 {
                self.short_min = id + bits.trailing_zeros() as u64;
                return;
            }
            id = (id | 63) + 1;
            debug_assert!(id < self.next_id);
        }
    }

    /// Remove `id`; returns false if it was not active.
    pub(crate) fn finish(&mut self, id: TxnId) -> bool {
        if id >= self.short_min && id < self.next_id {
            if !self.test(id) {
                return false;
            }
            let w = self.word_of(id);
            self.ring[w] &= !(1u64 << (id % 64));
            self.short_count -= 1;
            if id == self.short_min {
                self.short_min = id + 1;
                self.advance_short_min();
            }
            true
        } else if let Ok(pos) = self.long.binary_search(&id) {
            // Long transactions are few (8.2.3), so the shift is cheap.
            self.long.remove(pos);
            true
        } else {
            false
        }
    }

    #[cfg(test)]
    pub(crate) fn contains(&self, id: TxnId) -> bool {
        if id >= self.short_min && id < self.next_id {
            self.test(id)
        } else {
            self.long.binary_search(&id).is_ok()
        }
    }

    /// Copy the words covering `[short_base, next_id)` into `out` (a few
    /// hundred bytes for a thousand recent transactions, 8.2.3).
    pub(crate) fn copy_window(&self, out: &mut Vec<u64>) {
        out.clear();
        if self.short_count == 0 {
            return;
        }
        let first = self.short_base() / 64;
        let last = (self.next_id - 1) / 64; // inclusive
        let n = (last - first + 1) as usize;
        let start = (first & self.words_mask) as usize;
        let words = self.ring.len();
        if start + n <= words {
            out.extend_from_slice(&self.ring[start..start + n]);
        } else {
            out.extend_from_slice(&self.ring[start..]);
            out.extend_from_slice(&self.ring[..n - (words - start)]);
        }
    }

    /// After recovery: ids below `next` are all finished.
    pub(crate) fn set_next_id(&mut self, next: TxnId) {
        assert!(self.len() == 0, "set_next_id with active transactions");
        let next = next.max(1);
        self.next_id = next;
        self.short_min = next;
        for w in self.ring.iter_mut() {
            *w = 0;
        }
    }

    /// Invariant check; its asserts vanish in release builds.
    pub(crate) fn check(&self) {
        debug_assert!(self.next_id - self.short_base() <= self.window);
        debug_assert!(self.long.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(self.long.last().is_none_or(|&l| l < self.short_min));
        debug_assert!(self.short_count == 0 || self.test(self.short_min));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_finish_and_demote() {
        let mut a = ActiveSet::new(128);
        let long = a.begin();
        // Short transactions come and go; the long one falls out of the window.
        for _ in 0..300 {
            let i = a.begin();
            a.check();
            assert!(a.finish(i));
            a.check();
        }
        assert_eq!(a.long, vec![long]);
        assert!(a.contains(long));
        let mut ids = Vec::new();
        for _ in 0..100 {
            ids.push(a.begin());
            a.check();
        }
        for &i in &ids[..50] {
            assert!(a.finish(i));
            a.check();
        }
        assert!(a.contains(ids[99]));
        assert!(!a.contains(ids[0]));
        assert!(a.finish(long));
        assert_eq!(a.min_active(), ids[50]);
        // Many active at once: the oldest are demoted, none is lost.
        for _ in 0..500 {
            ids.push(a.begin());
            a.check();
        }
        assert!(!a.long.is_empty());
        for &i in &ids[50..] {
            assert!(a.contains(i));
            assert!(a.finish(i));
            a.check();
        }
        assert_eq!(a.len(), 0);
        assert_eq!(a.min_active(), a.next_id);
    }
}
