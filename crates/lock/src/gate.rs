//! The write gate of a table (or of the whole server): writers share it
//! among themselves, and so do *lockers* (LOCK TABLES ... READ, FLUSH
//! TABLES WITH READ LOCK), but the two groups exclude each other. A
//! transaction holds it as a writer from its first write of the table
//! until it ends, so a read lock waits for the writes in flight and then
//! keeps new ones out (MySQL's SHARED_WRITE against SHARED_READ_ONLY).
//!
//! A waiting locker holds back new writers, except those whose
//! transaction already holds other locks (as for `MetadataLock`); a
//! locker never waits while holding a gate (`try_lock` / back-off in the
//! caller), so no cycle forms.

use crate::wait::Waiters;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

/// Writers in the low 24 bits.
const WRITER: u64 = 1;
const WRITERS: u64 = (1 << 24) - 1;
/// Lockers holding it, bits 24..48.
const LOCKER: u64 = 1 << 24;
const LOCKERS: u64 = ((1 << 24) - 1) << 24;
/// Lockers waiting, from bit 48 up.
const WAITING: u64 = 1 << 48;

#[derive(Default)]
pub struct WriteGate {
    state: AtomicU64,
    waiters: Waiters,
}

impl std::fmt::Debug for WriteGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state.load(Ordering::Relaxed);
        write!(
            f,
            "WriteGate(writers {}, lockers {}, waiting {})",
            s & WRITERS,
            (s & LOCKERS) / LOCKER,
            s / WAITING
        )
    }
}

impl WriteGate {
    /// Enters as a writer if no locker holds (or waits for) the gate.
    #[inline]
    pub fn try_write(&self, holds_others: bool) -> bool {
        self.update(|s| {
            let blocked = s & LOCKERS != 0 || (!holds_others && s >= WAITING);
            (!blocked && s & WRITERS != WRITERS).then_some(s + WRITER)
        })
    }

    /// Gives back a writer's hold; the last one wakes waiting lockers.
    #[inline]
    pub fn release_write(&self) {
        let before = self.state.fetch_sub(WRITER, Ordering::SeqCst);
        debug_assert!(before & WRITERS > 0, "write gate not held");
        if before & WRITERS == 1 && before >= WAITING {
            self.wake_all();
        }
    }

    /// Waits to enter as a writer (after `try_write` failed).
    pub fn write(&self, holds_others: bool) -> GateWait<'_> {
        GateWait {
            gate: self,
            locker: false,
            holds_others,
            done: false,
        }
    }

    /// Takes it as a locker if no writer holds it (no waiting counted).
    pub fn try_lock(&self) -> bool {
        self.update(|s| (s & WRITERS == 0 && s & LOCKERS != LOCKERS).then_some(s + LOCKER))
    }

    /// Waits to take it as a locker; counts as waiting until granted or
    /// dropped, which holds back new writers.
    pub fn lock(&self) -> GateWait<'_> {
        self.state.fetch_add(WAITING, Ordering::SeqCst);
        GateWait {
            gate: self,
            locker: true,
            holds_others: false,
            done: false,
        }
    }

    /// Gives back a locker's hold and wakes waiting writers.
    pub fn release_lock(&self) {
        let before = self.state.fetch_sub(LOCKER, Ordering::SeqCst);
        debug_assert!(before & LOCKERS != 0, "write gate not locked");
        self.wake_all();
    }

    /// Lockers holding the gate now.
    pub fn lockers(&self) -> u64 {
        (self.state.load(Ordering::Relaxed) & LOCKERS) / LOCKER
    }

    fn try_lock_waiting(&self) -> bool {
        self.update(|s| {
            debug_assert!(s >= WAITING, "locker not counted as waiting");
            (s & WRITERS == 0 && s & LOCKERS != LOCKERS).then(|| s - WAITING + LOCKER)
        })
    }

    /// Moves the state to `f(state)` unless that is None.
    #[inline]
    fn update(&self, f: impl FnMut(u64) -> Option<u64>) -> bool {
        self.state
            .fetch_update(Ordering::SeqCst, Ordering::Relaxed, f)
            .is_ok()
    }

    fn wake_all(&self) {
        crate::wait::wake_all(&self.waiters);
    }
}

/// A wait to enter a gate; dropped before it resolves, it leaves the gate
/// as it found it.
pub struct GateWait<'a> {
    gate: &'a WriteGate,
    locker: bool,
    holds_others: bool,
    done: bool,
}

impl Future for GateWait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let (gate, locker, others) = (self.gate, self.locker, self.holds_others);
        let try_now = || match locker {
            true => gate.try_lock_waiting(),
            false => gate.try_write(others),
        };
        crate::wait::poll_grant(&mut self.done, &gate.waiters, cx, try_now)
    }
}

impl Drop for GateWait<'_> {
    fn drop(&mut self) {
        if self.locker && !self.done {
            self.gate.state.fetch_sub(WAITING, Ordering::SeqCst);
            self.gate.wake_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_exclude_each_other() {
        let g = WriteGate::default();
        assert!(g.try_write(false));
        assert!(g.try_write(false), "writers share");
        assert!(!g.try_lock(), "a locker waits for writers");
        g.release_write();
        g.release_write();
        assert!(g.try_lock());
        assert!(g.try_lock(), "lockers share");
        assert!(!g.try_write(true), "nobody writes past a locker");
        g.release_lock();
        g.release_lock();
        assert!(g.try_write(false));
        g.release_write();
        assert_eq!(g.state.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn waiting_locker_holds_back_new_writers() {
        let g = WriteGate::default();
        assert!(g.try_write(false));
        let w = g.lock();
        assert!(!g.try_write(false));
        assert!(g.try_write(true), "a writer holding others passes");
        g.release_write();
        drop(w);
        assert!(g.try_write(false), "an abandoned wait lets writers in");
        g.release_write();
        g.release_write();
        assert_eq!(g.state.load(Ordering::SeqCst), 0);
    }
}
