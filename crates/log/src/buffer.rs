//! The log buffer (a ring of bytes indexed by LSN) and the recent_written link
//! buffer (7.1.1, WL#10310 items 0-1): committers copy into disjoint ranges of
//! the ring in parallel and then mark their range complete in the link buffer;
//! the writer follows the links to find how far the stream is contiguous.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::Lsn;

pub(crate) struct Ring {
    ptr: *mut u8,
    cap: usize,
}

// SAFETY: the ring is a plain byte allocation; every access goes through the
// methods below whose callers guarantee disjointness (see `copy_in`).
unsafe impl Send for Ring {}
unsafe impl Sync for Ring {}

impl Ring {
    pub fn new(cap: usize) -> Self {
        assert!(cap.is_power_of_two());
        let b = vec![0u8; cap].into_boxed_slice();
        Ring {
            ptr: Box::into_raw(b) as *mut u8,
            cap,
        }
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    #[inline]
    fn idx(&self, lsn: Lsn) -> usize {
        (lsn as usize) & (self.cap - 1)
    }

    /// Copies `src` to the ring bytes of LSNs `[lsn, lsn + src.len())`.
    ///
    /// # Safety
    /// The caller must own that LSN range exclusively: it is part of its own
    /// reservation (a `fetch_add` hands out disjoint ranges), `src.len() <= cap`,
    /// and the writer has already written out the previous occupant of those
    /// ring bytes (`lsn + len <= written + cap`, observed with Acquire). So no
    /// other thread reads or writes these bytes until the caller publishes the
    /// range with a Release store into the link buffer.
    #[inline]
    pub unsafe fn copy_in(&self, lsn: Lsn, src: &[u8]) {
        debug_assert!(src.len() <= self.cap);
        let i = self.idx(lsn);
        let first = src.len().min(self.cap - i);
        // SAFETY: in bounds by construction (i < cap, first <= cap - i, rest < cap);
        // exclusivity is the caller's contract above.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(i), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), self.ptr, src.len() - first);
        }
    }

    /// Zero-fills `[lsn, lsn + n)`. Same contract as `copy_in`.
    pub unsafe fn zero(&self, lsn: Lsn, n: usize) {
        debug_assert!(n <= self.cap);
        let i = self.idx(lsn);
        let first = n.min(self.cap - i);
        // SAFETY: as in `copy_in`.
        unsafe {
            std::ptr::write_bytes(self.ptr.add(i), 0, first);
            std::ptr::write_bytes(self.ptr, 0, n - first);
        }
    }

    /// The ring bytes of `[a, b)` as up to two slices (the range may wrap).
    ///
    /// # Safety
    /// Only the writer calls this, for a range every byte of which was published
    /// complete in the link buffer (Acquire) and not yet released by advancing
    /// `written`; committers cannot write there until `written` passes it.
    pub unsafe fn slices(&self, a: Lsn, b: Lsn) -> (&[u8], &[u8]) {
        let n = (b - a) as usize;
        debug_assert!(n <= self.cap);
        let i = self.idx(a);
        let first = n.min(self.cap - i);
        // SAFETY: in bounds; no concurrent writer per the contract above.
        unsafe {
            (
                std::slice::from_raw_parts(self.ptr.add(i), first),
                std::slice::from_raw_parts(self.ptr, n - first),
            )
        }
    }

    /// Reads 4 bytes at `lsn` (may wrap). Same contract as `slices`.
    pub unsafe fn read_u32(&self, lsn: Lsn) -> u32 {
        let mut b = [0u8; 4];
        for (k, byte) in b.iter_mut().enumerate() {
            // SAFETY: index masked into the allocation; contract as `slices`.
            *byte = unsafe { *self.ptr.add(self.idx(lsn + k as u64)) };
        }
        u32::from_le_bytes(b)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: ptr came from Box::into_raw of a boxed slice of exactly cap bytes.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr, self.cap,
            )));
        }
    }
}

/// recent_written: one slot per 8-byte block of LSN, indexed modulo the slot
/// count. A completed range stores `(start low bits << 32) | len` in the slot of
/// its start. Every range is at least 9 bytes long, so two range starts never
/// share a block. A slot is reused only after the writer consumed (zeroed) the
/// previous occupant and published `written` past it: a committer waits until
/// `block(start) < block(written) + slots` before marking.
pub(crate) struct Links {
    slots: Box<[AtomicU64]>,
}

pub(crate) const LINK_SHIFT: u32 = 3;
/// Smallest range ever marked: a record header plus one payload byte.
pub(crate) const MIN_RANGE: u64 = 9;

impl Links {
    pub fn new(n: usize) -> Self {
        assert!(n.is_power_of_two());
        Links {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub fn len(&self) -> u64 {
        self.slots.len() as u64
    }

    #[inline]
    fn slot(&self, lsn: Lsn) -> &AtomicU64 {
        &self.slots[((lsn >> LINK_SHIFT) as usize) & (self.slots.len() - 1)]
    }

    /// Whether a range starting at `start` may use its slot, given the writer's
    /// published position.
    #[inline]
    pub fn may_mark(&self, start: Lsn, written: Lsn) -> bool {
        (start >> LINK_SHIFT) < (written >> LINK_SHIFT) + self.len()
    }

    /// Publishes `[start, start + len)` as completely copied.
    #[inline]
    pub fn mark(&self, start: Lsn, len: u64) {
        debug_assert!((MIN_RANGE..1 << 32).contains(&len));
        let s = self.slot(start);
        // Invariant: slot reuse only after the writer passed the old occupant.
        debug_assert_eq!(s.load(Ordering::Relaxed), 0, "link slot reused early");
        s.store(((start & 0xFFFF_FFFF) << 32) | len, Ordering::Release);
    }

    /// Writer side: if the range starting at `pos` is complete, consume it and
    /// return its length.
    #[inline]
    pub fn take(&self, pos: Lsn) -> Option<u64> {
        let s = self.slot(pos);
        let v = s.load(Ordering::Acquire);
        if v == 0 {
            return None;
        }
        debug_assert_eq!(v >> 32, pos & 0xFFFF_FFFF, "link slot holds another range");
        // Relaxed: a committer reusing this slot first observes (Acquire) the
        // `written` published (Release) after this store.
        s.store(0, Ordering::Relaxed);
        Some(v & 0xFFFF_FFFF)
    }

    #[inline]
    pub fn is_set(&self, pos: Lsn) -> bool {
        self.slot(pos).load(Ordering::Acquire) != 0
    }
}
