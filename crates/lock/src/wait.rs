//! What the metadata lock and the write gate share: parking wakers of
//! requests that must wait, and waking them when a release may let them in.

use parking_lot::Mutex;
use std::task::{Context, Poll, Waker};

/// Wakers of the requests waiting on one lock.
pub(crate) type Waiters = Mutex<Vec<Waker>>;

/// One poll of a lock request: granted (`done` set) if `try_now` succeeds,
/// else its waker is parked and it tries once more (a release between the
/// two either shows in the second try or finds the waker in the list).
pub(crate) fn poll_grant(
    done: &mut bool,
    waiters: &Waiters,
    cx: &Context<'_>,
    try_now: impl Fn() -> bool,
) -> Poll<()> {
    if *done {
        return Poll::Ready(());
    }
    if !try_now() {
        waiters.lock().push(cx.waker().clone());
        if !try_now() {
            return Poll::Pending;
        }
    }
    *done = true;
    Poll::Ready(())
}

/// Wakes every parked request (each tries again).
pub(crate) fn wake_all(waiters: &Waiters) {
    let list = std::mem::take(&mut *waiters.lock());
    list.into_iter().for_each(Waker::wake);
}
