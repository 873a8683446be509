//! Transaction throttling (8.3.2): a FIFO admission gate in front of the
//! transaction system. At most `limit` transactions are admitted at once;
//! the rest wait in arrival order, and each ticket returned admits exactly
//! one waiter (one wake-up, no herd, 8.1.2).
//!
//! The uncontended path is lock-free: `admitted` is a CAS counter. The
//! queue mutex is taken only when the gate is full. A waiter announces
//! itself in `waiting` before its final check of `admitted`, and a leaver
//! decrements `admitted` before looking at `waiting` (both SeqCst), so one
//! of them always sees the other and no free slot is left with a waiter
//! queued.
//!
//! Two escapes keep the gate from holding the server still when admitted
//! transactions stop finishing (idle in a client, sleeping, waiting on
//! something outside the server): a waiter that sees no progress — no
//! transaction left and nobody let in — for a stall period is let in over
//! the limit, one per period (`Admission::force`, MariaDB's thread pool
//! calls the same idea `thread_pool_stall_limit`); and a transaction that
//! gave its slot back while its client was idle, or while it slept on a row
//! lock, re-enters without queueing (`Gate::readmit`), since it may hold
//! locks the admitted ones wait for.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

pub(crate) struct Gate {
    limit: AtomicUsize,
    /// false: the gate stands open (as with limit 0), the limit is kept.
    engaged: AtomicBool,
    admitted: AtomicUsize,
    waiting: AtomicUsize,
    queue: Mutex<VecDeque<Arc<Node>>>,
    /// Bumped whenever a transaction leaves or a waiter is let in over the
    /// limit: a waiter that sees it unchanged for a stall period knows the
    /// gate is stuck.
    progress: AtomicU64,
    /// Admissions over the limit: stalls broken, and parked transactions
    /// re-entering.
    forced: AtomicU64,
    readmitted: AtomicU64,
}

struct Node {
    state: Mutex<NodeState>,
}

struct NodeState {
    granted: bool,
    waker: Option<Waker>,
}

impl Gate {
    pub(crate) fn new(limit: usize) -> Self {
        Gate {
            limit: AtomicUsize::new(limit),
            engaged: AtomicBool::new(true),
            admitted: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            queue: Mutex::new(VecDeque::new()),
            progress: AtomicU64::new(0),
            forced: AtomicU64::new(0),
            readmitted: AtomicU64::new(0),
        }
    }

    /// The limit in force: 0 (none) while the gate stands open.
    fn effective_limit(&self) -> usize {
        if self.engaged.load(SeqCst) {
            self.limit.load(SeqCst)
        } else {
            0
        }
    }

    /// Take a slot if one is free.
    fn try_take(&self) -> bool {
        let mut cur = self.admitted.load(SeqCst);
        loop {
            let limit = self.effective_limit();
            if limit != 0 && cur >= limit {
                return false;
            }
            match self
                .admitted
                .compare_exchange_weak(cur, cur + 1, SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(v) => cur = v,
            }
        }
    }

    /// Hand free slots to queued waiters in FIFO order.
    fn dispatch(&self) {
        let mut wakers = Vec::new();
        {
            let mut q = self.queue.lock();
            while !q.is_empty() && self.try_take() {
                let node = q.pop_front().unwrap();
                self.waiting.fetch_sub(1, SeqCst);
                let mut st = node.state.lock();
                st.granted = true;
                if let Some(w) = st.waker.take() {
                    wakers.push(w);
                }
            }
        }
        for w in wakers {
            w.wake();
        }
    }

    fn release(&self) {
        self.admitted.fetch_sub(1, SeqCst);
        self.progress.fetch_add(1, SeqCst);
        if self.waiting.load(SeqCst) > 0 {
            self.dispatch();
        }
    }

    pub(crate) fn set_limit(&self, limit: usize) {
        self.limit.store(limit, SeqCst);
        self.dispatch();
    }

    /// Applies the limit (true) or opens the gate to all (false); opening
    /// lets every queued waiter in.
    pub(crate) fn set_engaged(&self, engaged: bool) {
        self.engaged.store(engaged, SeqCst);
        self.dispatch();
    }

    pub(crate) fn stats(&self) -> crate::ThrottleStats {
        crate::ThrottleStats {
            limit: self.limit.load(SeqCst),
            engaged: self.engaged.load(SeqCst),
            admitted: self.admitted.load(SeqCst),
            waiting: self.waiting.load(SeqCst),
            forced: self.forced.load(SeqCst),
            readmitted: self.readmitted.load(SeqCst),
        }
    }

    pub(crate) fn progress(&self) -> u64 {
        self.progress.load(SeqCst)
    }

    /// A slot at once, over the limit if need be, for a transaction that is
    /// already under way (it parked its slot while its client was idle or
    /// while it waited for a row lock).
    pub(crate) fn readmit(self: &Arc<Self>) -> Ticket {
        self.admitted.fetch_add(1, SeqCst);
        self.readmitted.fetch_add(1, SeqCst);
        Ticket {
            gate: Arc::clone(self),
        }
    }
}

/// Future returned by [`crate::TxnSys::admit`]; resolves to a [`Ticket`].
/// Dropping it while queued leaves the queue (or passes on a slot it was
/// handed but never observed).
pub struct Admission {
    gate: Arc<Gate>,
    node: Option<Arc<Node>>,
    done: bool,
}

/// Proof of admission; dropping it admits the next waiter.
pub struct Ticket {
    gate: Arc<Gate>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.gate.release();
    }
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ticket")
    }
}

impl Admission {
    pub(crate) fn new(gate: Arc<Gate>) -> Self {
        Admission {
            gate,
            node: None,
            done: false,
        }
    }

    fn ticket(&mut self) -> Ticket {
        self.done = true;
        self.node = None;
        Ticket {
            gate: Arc::clone(&self.gate),
        }
    }
}

impl Admission {
    /// Lets this waiter in over the limit if the gate has made no progress
    /// since `seen` (a [`Gate::progress`] value read a stall period ago) and
    /// no other waiter was let in for the same stall. A waiter granted a
    /// slot meanwhile gets it. `None`: keep waiting.
    pub fn force(&mut self, seen: u64) -> Option<Ticket> {
        let node = self.node.clone()?;
        // Under load the gate moves within every stall period: answered
        // without the queue's mutex and its scan (a thousand waiters time
        // out every period each at 1024 connections). A slot granted
        // meanwhile is picked up by the next poll.
        if self.gate.progress.load(SeqCst) != seen {
            return None;
        }
        let mut q = self.gate.queue.lock();
        match q.iter().position(|n| Arc::ptr_eq(n, &node)) {
            Some(p) => {
                self.gate
                    .progress
                    .compare_exchange(seen, seen + 1, SeqCst, SeqCst)
                    .ok()?;
                q.remove(p);
                self.gate.waiting.fetch_sub(1, SeqCst);
                self.gate.admitted.fetch_add(1, SeqCst);
                self.gate.forced.fetch_add(1, SeqCst);
                drop(q);
                Some(self.ticket())
            }
            None => {
                // Not queued: dispatch granted it a slot under its lock.
                drop(q);
                let granted = node.state.lock().granted;
                granted.then(|| self.ticket())
            }
        }
    }
}

impl Future for Admission {
    type Output = Ticket;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Ticket> {
        assert!(!self.done, "Admission polled after completion");
        if let Some(node) = &self.node {
            let mut st = node.state.lock();
            if st.granted {
                drop(st);
                return Poll::Ready(self.ticket());
            }
            match &st.waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => st.waker = Some(cx.waker().clone()),
            }
            return Poll::Pending;
        }
        // Fast path: nobody queued and a slot free (keeps FIFO: we do not
        // overtake queued waiters).
        if self.gate.waiting.load(SeqCst) == 0 && self.gate.try_take() {
            return Poll::Ready(self.ticket());
        }
        let gate = Arc::clone(&self.gate);
        let mut q = gate.queue.lock();
        gate.waiting.fetch_add(1, SeqCst);
        if q.is_empty() && gate.try_take() {
            gate.waiting.fetch_sub(1, SeqCst);
            drop(q);
            return Poll::Ready(self.ticket());
        }
        let node = Arc::new(Node {
            state: Mutex::new(NodeState {
                granted: false,
                waker: Some(cx.waker().clone()),
            }),
        });
        q.push_back(Arc::clone(&node));
        drop(q);
        self.node = Some(node);
        // A slot may have been freed between our check and the enqueue by
        // a leaver that saw `waiting == 0`... which cannot happen since we
        // announced ourselves first; but a limit raise could race, so let
        // dispatch settle it (cheap when nothing is free).
        if gate.try_peek_free() {
            gate.dispatch();
        }
        Poll::Pending
    }
}

impl Gate {
    fn try_peek_free(&self) -> bool {
        let limit = self.effective_limit();
        limit == 0 || self.admitted.load(SeqCst) < limit
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        if let Some(node) = self.node.take() {
            let mut q = self.gate.queue.lock();
            if let Some(p) = q.iter().position(|n| Arc::ptr_eq(n, &node)) {
                q.remove(p);
                self.gate.waiting.fetch_sub(1, SeqCst);
                return;
            }
            drop(q);
            // Not queued any more: it was granted a slot it never used.
            if node.state.lock().granted {
                self.gate.release();
            }
        }
    }
}
