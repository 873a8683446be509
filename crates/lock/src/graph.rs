//! The wait-for graph, under its own mutex (lock order: shard latch, then
//! graph, then a node's mutex). It only changes when a wait starts or
//! ends, or when a queue with waiters changes; plain grants and releases
//! on queues without waiters never touch it. So deadlock detection never
//! latches all shards at once (7.1.2 keeps the shards independent).
//!
//! Every state change of a waiting request out of `Waiting` happens while
//! this mutex is held, so an entry here is exactly a request still waiting.

use crate::{IdHasher, TxnId};
use crate::{NodeState, WaitNode};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::task::Waker;

type IdMap<V> = HashMap<TxnId, V, BuildHasherDefault<IdHasher>>;
type IdSet = HashSet<TxnId, BuildHasherDefault<IdHasher>>;

/// Cap on the CATS weight walk: beyond this many blocked transactions the
/// exact count no longer changes the order in practice.
const CATS_WEIGHT_CAP: usize = 64;

pub(crate) struct Entry {
    pub(crate) node: Arc<WaitNode>,
    /// (blocker, blocker holds a granted conflicting lock). The second kind
    /// of edge is "queued behind a conflicting waiter".
    pub(crate) blockers: Vec<(TxnId, bool)>,
    /// Work done so far (victim choice: least work is rolled back).
    pub(crate) work: u64,
}

#[derive(Default)]
pub(crate) struct Graph {
    pub(crate) waits: IdMap<Entry>,
    /// holder → txns waiting for a lock it holds (for CATS weights). A set:
    /// a hot row's holder has every waiter of its queue here, and each of
    /// them leaves when the holder changes.
    holds_rev: IdMap<IdSet>,
}

/// What a latch holder collects to act on after releasing its latches.
#[derive(Default)]
pub(crate) struct Outcome {
    pub(crate) wakers: Vec<Waker>,
    /// Deadlock victims whose queued request still has to be removed.
    pub(crate) victims: Vec<Arc<WaitNode>>,
    pub(crate) deadlocks: u64,
}

impl Graph {
    pub(crate) fn insert(&mut self, txn: TxnId, node: Arc<WaitNode>, work: u64) {
        debug_assert!(!self.waits.contains_key(&txn), "txn {txn} waits twice");
        self.waits.insert(
            txn,
            Entry {
                node,
                blockers: Vec::new(),
                work,
            },
        );
    }

    /// Replace the out-edges of `txn`; true if an edge was added that was
    /// not there before and leads to a waiting transaction: only then can
    /// a new cycle have formed. An edge to a transaction that waits for
    /// nothing closes no cycle now; if that transaction waits later, the
    /// search from it finds the cycle. (When a lock is granted, every
    /// waiter behind it gains an edge to the new holder, which no longer
    /// waits: searching from each of them made a release cost O(waiters²).)
    pub(crate) fn set_blockers(&mut self, txn: TxnId, new: Vec<(TxnId, bool)>) -> bool {
        let Some(e) = self.waits.get(&txn) else {
            return false;
        };
        let gained = |b: &(TxnId, bool)| !e.blockers.contains(b);
        let added = new.iter().any(gained);
        let closes = new
            .iter()
            .any(|b| gained(b) && self.waits.contains_key(&b.0));
        if !added && new.len() == e.blockers.len() {
            return false;
        }
        let e = self.waits.get_mut(&txn).expect("found above");
        let old = std::mem::replace(&mut e.blockers, new);
        for (b, held) in old {
            if held {
                if let Some(v) = self.holds_rev.get_mut(&b) {
                    v.remove(&txn);
                    if v.is_empty() {
                        self.holds_rev.remove(&b);
                    }
                }
            }
        }
        let e = &self.waits[&txn];
        for &(b, held) in &e.blockers {
            if held {
                self.holds_rev.entry(b).or_default().insert(txn);
            }
        }
        closes
    }

    /// Remove the entry of `txn` if it belongs to `node`.
    pub(crate) fn remove(&mut self, txn: TxnId, node: &Arc<WaitNode>) {
        match self.waits.get(&txn) {
            Some(e) if Arc::ptr_eq(&e.node, node) => {}
            _ => return,
        }
        self.set_blockers(txn, Vec::new());
        self.waits.remove(&txn);
    }

    /// CATS scheduling weight (7.2): how many transactions wait, directly
    /// or through others, for locks that `txn` holds.
    pub(crate) fn cats_weight(
        &self,
        txn: TxnId,
        seen: &mut IdSet,
        stack: &mut Vec<TxnId>,
    ) -> usize {
        seen.clear();
        stack.clear();
        stack.push(txn);
        seen.insert(txn);
        let mut n = 0;
        while let Some(t) = stack.pop() {
            if let Some(ws) = self.holds_rev.get(&t) {
                for &w in ws {
                    if seen.insert(w) {
                        n += 1;
                        if n >= CATS_WEIGHT_CAP {
                            return n;
                        }
                        stack.push(w);
                    }
                }
            }
        }
        n
    }

    /// A cycle through `start`, as the list of txns on it, if any.
    fn find_cycle(&self, start: TxnId) -> Option<Vec<TxnId>> {
        // Iterative DFS over out-edges; `path` is the current chain.
        let mut seen = IdSet::default();
        let mut path: Vec<(TxnId, usize)> = vec![(start, 0)];
        seen.insert(start);
        while let Some(&mut (t, ref mut i)) = path.last_mut() {
            let edges = match self.waits.get(&t) {
                Some(e) => &e.blockers,
                None => {
                    path.pop();
                    continue;
                }
            };
            if *i >= edges.len() {
                path.pop();
                continue;
            }
            let (b, _) = edges[*i];
            *i += 1;
            if b == start {
                return Some(path.iter().map(|&(t, _)| t).collect());
            }
            if seen.insert(b) && self.waits.contains_key(&b) {
                path.push((b, 0));
            }
        }
        None
    }

    /// Break every cycle through `start`, one victim per cycle: the txn
    /// with the least work (MySQL rolls back the "lighter" transaction);
    /// ties go to `prefer` (the requester), then to the youngest.
    /// Returns true if `prefer` itself was chosen (its node is set to
    /// Deadlock but left for the caller to remove from its queue).
    pub(crate) fn resolve(
        &mut self,
        start: TxnId,
        prefer: Option<TxnId>,
        out: &mut Outcome,
    ) -> bool {
        let mut requester_victim = false;
        while let Some(cycle) = self.find_cycle(start) {
            let victim = *cycle
                .iter()
                .min_by_key(|&&t| (self.waits[&t].work, Some(t) != prefer, u64::MAX - t))
                .unwrap();
            let e = &self.waits[&victim];
            let node = Arc::clone(&e.node);
            {
                let mut st = node.st.lock();
                debug_assert!(st.state == NodeState::Waiting);
                st.state = NodeState::Deadlock;
                if let Some(w) = st.waker.take() {
                    out.wakers.push(w);
                }
            }
            self.remove(victim, &node);
            out.deadlocks += 1;
            if Some(victim) == prefer {
                requester_victim = true;
            } else {
                out.victims.push(node);
            }
            if victim == start {
                break;
            }
        }
        requester_victim
    }
}
