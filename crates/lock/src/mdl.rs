//! Metadata locks: MySQL's MDL reduced to the two modes tables need.
//!
//! A statement that uses a table holds it *shared* until its transaction
//! ends; DDL holds it *exclusive*, which is granted only once no
//! transaction holds it shared. So DDL waits for the transactions that use
//! the table, and no transaction sees a table change under it.
//!
//! Deadlock freedom: an exclusive holder runs DDL and waits for nothing
//! else (DDL takes several tables in one fixed order). A shared request
//! waits for a *granted* exclusive lock, and for a *waiting* one only when
//! its transaction holds no other metadata lock yet; a transaction that
//! already holds tables passes waiting DDL. Every wait therefore ends at a
//! running exclusive holder or at a transaction that waits for nothing, so
//! no cycle can form. Waiting DDL still cannot starve: new transactions
//! queue behind it.
//!
//! The state is one atomic word, so the common case (no DDL anywhere) is a
//! compare-and-swap to take and an add to give back; waiters park their
//! wakers in a list that only releases which may unblock them look at.

use parking_lot::Mutex;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};

/// Shared holders in the low 32 bits.
const SHARED_MASK: u64 = (1 << 32) - 1;
/// An exclusive holder.
const EXCLUSIVE: u64 = 1 << 32;
/// A shared-upgradable holder (an online ALTER copying the table).
const UPGRADABLE: u64 = 1 << 33;
/// Exclusive requests waiting, counted from this bit up.
const WAITING_ONE: u64 = 1 << 34;

/// The metadata lock of one table.
#[derive(Default)]
pub struct MetadataLock {
    state: AtomicU64,
    waiters: Mutex<Vec<Waker>>,
}

impl std::fmt::Debug for MetadataLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state.load(Ordering::Relaxed);
        write!(
            f,
            "MetadataLock(shared {}, exclusive {}, waiting {})",
            s & SHARED_MASK,
            s & EXCLUSIVE != 0,
            s / WAITING_ONE
        )
    }
}

impl MetadataLock {
    /// Takes a shared lock if it is free now. `holds_others`: the caller's
    /// transaction already holds metadata locks, so it passes waiting DDL
    /// (see the module comment).
    #[inline]
    pub fn try_shared(&self, holds_others: bool) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let blocked = s & EXCLUSIVE != 0 || (!holds_others && s >= WAITING_ONE);
            if blocked || s & SHARED_MASK == SHARED_MASK {
                return false;
            }
            match self
                .state
                .compare_exchange_weak(s, s + 1, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// Gives back a shared lock; wakes waiting DDL when it was the last.
    #[inline]
    pub fn release_shared(&self) {
        let before = self.state.fetch_sub(1, Ordering::SeqCst);
        debug_assert!(before & SHARED_MASK > 0, "shared metadata lock not held");
        if before & SHARED_MASK == 1 && before >= WAITING_ONE {
            self.wake_all();
        }
    }

    /// Waits for a shared lock (after `try_shared` failed).
    pub fn shared(&self, holds_others: bool) -> Acquire<'_> {
        Acquire {
            lock: self,
            kind: Kind::Shared { holds_others },
            done: false,
        }
    }

    /// Waits for the exclusive lock. Until it is granted (or the future
    /// is dropped) it counts as waiting, which holds back new transactions.
    pub fn exclusive(&self) -> Acquire<'_> {
        self.state.fetch_add(WAITING_ONE, Ordering::SeqCst);
        Acquire {
            lock: self,
            kind: Kind::Exclusive,
            done: false,
        }
    }

    /// Gives back the exclusive lock and wakes everyone waiting.
    pub fn release_exclusive(&self) {
        let before = self.state.fetch_sub(EXCLUSIVE, Ordering::SeqCst);
        debug_assert!(before & EXCLUSIVE != 0, "exclusive metadata lock not held");
        self.wake_all();
    }

    /// Waits for the shared-upgradable lock (an online ALTER): compatible
    /// with shared holders, so transactions go on, but not with another
    /// upgradable or exclusive holder. It does not hold back transactions.
    pub fn upgradable(&self) -> Acquire<'_> {
        Acquire {
            lock: self,
            kind: Kind::Upgradable,
            done: false,
        }
    }

    /// The upgradable holder's wait for exclusive: counts as waiting DDL
    /// (new transactions queue behind it) until the shared holders are
    /// gone. Only the holder of `upgradable` may call it. Deadlock-free as
    /// exclusive is: no other DDL can hold the table meanwhile.
    pub fn upgrade(&self) -> Acquire<'_> {
        debug_assert!(self.state.load(Ordering::Relaxed) & UPGRADABLE != 0);
        self.state.fetch_add(WAITING_ONE, Ordering::SeqCst);
        Acquire {
            lock: self,
            kind: Kind::Upgrade,
            done: false,
        }
    }

    /// Gives back the shared-upgradable lock (not upgraded).
    pub fn release_upgradable(&self) {
        let before = self.state.fetch_sub(UPGRADABLE, Ordering::SeqCst);
        debug_assert!(
            before & UPGRADABLE != 0,
            "upgradable metadata lock not held"
        );
        self.wake_all();
    }

    /// Gives back an upgraded lock: exclusive and upgradable at once.
    pub fn release_upgraded(&self) {
        let before = self
            .state
            .fetch_sub(EXCLUSIVE | UPGRADABLE, Ordering::SeqCst);
        debug_assert!(before & (EXCLUSIVE | UPGRADABLE) == EXCLUSIVE | UPGRADABLE);
        self.wake_all();
    }

    fn try_upgradable(&self) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            // Behind waiting DDL too, so an ALTER does not starve a DROP.
            if s & (EXCLUSIVE | UPGRADABLE) != 0 || s >= WAITING_ONE {
                return false;
            }
            match self.state.compare_exchange_weak(
                s,
                s | UPGRADABLE,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// Shared holders now (tests, SHOW).
    pub fn shared_holders(&self) -> u64 {
        self.state.load(Ordering::Relaxed) & SHARED_MASK
    }

    fn try_exclusive(&self, upgrading: bool) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            debug_assert!(
                !upgrading || s & UPGRADABLE != 0,
                "upgrade without the lock"
            );
            // The upgradable holder excludes every other DDL, not itself.
            let others = if upgrading { 0 } else { UPGRADABLE };
            if s & (SHARED_MASK | EXCLUSIVE | others) != 0 {
                return false;
            }
            debug_assert!(s >= WAITING_ONE, "exclusive request not counted");
            let granted = s - WAITING_ONE + EXCLUSIVE;
            match self
                .state
                .compare_exchange_weak(s, granted, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    fn wake_all(&self) {
        crate::wait::wake_all(&self.waiters);
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Shared {
        holds_others: bool,
    },
    Exclusive,
    /// The upgradable holder asking for exclusive.
    Upgrade,
    Upgradable,
}

/// A wait for a metadata lock. Resolves once granted; dropped before
/// that, it leaves the lock as it found it.
pub struct Acquire<'a> {
    lock: &'a MetadataLock,
    kind: Kind,
    done: bool,
}

impl Acquire<'_> {
    fn try_now(lock: &MetadataLock, kind: Kind) -> bool {
        match kind {
            Kind::Shared { holds_others } => lock.try_shared(holds_others),
            Kind::Exclusive => lock.try_exclusive(false),
            Kind::Upgrade => lock.try_exclusive(true),
            Kind::Upgradable => lock.try_upgradable(),
        }
    }
}

impl Future for Acquire<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let (lock, kind) = (self.lock, self.kind);
        let try_now = || Acquire::try_now(lock, kind);
        crate::wait::poll_grant(&mut self.done, &lock.waiters, cx, try_now)
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        if let (Kind::Exclusive | Kind::Upgrade, false) = (self.kind, self.done) {
            // A DDL that gave up: new transactions held back by it go on.
            self.lock.state.fetch_sub(WAITING_ONE, Ordering::SeqCst);
            self.lock.wake_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::task::Wake;

    struct Flag(std::sync::atomic::AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn poll(f: &mut Pin<Box<Acquire<'_>>>, flag: &Arc<Flag>) -> bool {
        let waker = Waker::from(flag.clone());
        f.as_mut().poll(&mut Context::from_waker(&waker)).is_ready()
    }

    #[test]
    fn ddl_waits_for_users_and_holds_back_new_ones() {
        let l = MetadataLock::default();
        assert!(l.try_shared(false));
        let flag = Arc::new(Flag(Default::default()));
        let mut x = Box::pin(l.exclusive());
        assert!(!poll(&mut x, &flag), "a user holds the table");
        assert!(!l.try_shared(false), "a new transaction queues behind DDL");
        assert!(l.try_shared(true), "one holding other tables passes");
        l.release_shared();
        assert!(!flag.0.load(Ordering::SeqCst));
        l.release_shared();
        assert!(flag.0.load(Ordering::SeqCst), "the last user wakes DDL");
        assert!(poll(&mut x, &flag));
        drop(x);
        assert!(!l.try_shared(true), "nobody passes a granted exclusive");
        l.release_exclusive();
        assert!(l.try_shared(false));
        l.release_shared();
        assert_eq!(l.state.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn abandoned_ddl_lets_users_in() {
        let l = MetadataLock::default();
        assert!(l.try_shared(false));
        let flag = Arc::new(Flag(Default::default()));
        let mut x = Box::pin(l.exclusive());
        assert!(!poll(&mut x, &flag));
        let mut s = Box::pin(l.shared(false));
        let sflag = Arc::new(Flag(Default::default()));
        let waker = Waker::from(sflag.clone());
        assert!(s
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        drop(x);
        assert!(sflag.0.load(Ordering::SeqCst), "the waiting user is woken");
        assert!(s.as_mut().poll(&mut Context::from_waker(&waker)).is_ready());
        l.release_shared();
        l.release_shared();
        assert_eq!(l.state.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn upgradable_lets_users_in_and_upgrades_after_them() {
        let l = MetadataLock::default();
        let flag = Arc::new(Flag(Default::default()));
        assert!(l.try_shared(false));
        let mut su = Box::pin(l.upgradable());
        assert!(poll(&mut su, &flag), "compatible with shared holders");
        drop(su);
        assert!(l.try_shared(false), "new transactions still come in");
        let mut other = Box::pin(l.upgradable());
        assert!(!poll(&mut other, &flag), "a second online ALTER waits");
        let mut x = Box::pin(l.exclusive());
        assert!(!poll(&mut x, &flag), "so does other DDL");
        drop((other, x));
        let mut up = Box::pin(l.upgrade());
        assert!(!poll(&mut up, &flag), "the upgrade waits for users");
        assert!(!l.try_shared(false), "and holds back new ones");
        l.release_shared();
        l.release_shared();
        assert!(flag.0.load(Ordering::SeqCst));
        assert!(poll(&mut up, &flag));
        drop(up);
        assert!(!l.try_shared(true));
        l.release_upgraded();
        assert_eq!(l.state.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn abandoned_upgrade_keeps_the_upgradable_lock() {
        let l = MetadataLock::default();
        let flag = Arc::new(Flag(Default::default()));
        let mut su = Box::pin(l.upgradable());
        assert!(poll(&mut su, &flag));
        drop(su);
        assert!(l.try_shared(false));
        drop(l.upgrade());
        assert!(l.try_shared(false), "a timed-out upgrade lets users in");
        l.release_shared();
        l.release_shared();
        l.release_upgradable();
        assert_eq!(l.state.load(Ordering::SeqCst), 0);
    }
}
