//! Per-committer wake-ups (8.1.2; 7.1.1 item 6 "ring buffer of events, one per
//! log block"). Waiters are kept in shards keyed by the LSN block they wait
//! for. When the acknowledged LSN moves from `old` to `new`, the notifier
//! visits only the shards of blocks in `(old, new]` and wakes exactly the
//! waiters with `lsn <= new`, each with its own `Waker` — no broadcast, no
//! waiter woken before its record is durable, none woken twice.

use std::task::Waker;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::Lsn;

/// LSN bytes per waiter block.
const BLOCK_SHIFT: u32 = 12;
const SHARDS: usize = 1024;

pub(crate) struct Entry {
    pub lsn: Lsn,
    pub token: u64,
    pub waker: Waker,
}

pub(crate) struct Waiters {
    shards: Box<[CachePadded<Mutex<Vec<Entry>>>]>,
}

impl Waiters {
    pub fn new() -> Self {
        Waiters {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(Vec::with_capacity(16))))
                .collect(),
        }
    }

    #[inline]
    pub fn shard(&self, lsn: Lsn) -> &Mutex<Vec<Entry>> {
        &self.shards[((lsn >> BLOCK_SHIFT) as usize) & (SHARDS - 1)]
    }

    /// Moves the wakers of every waiter with `old < lsn <= new` into `out`.
    /// The caller has already published `new` (so a waiter that registers after
    /// we looked at its shard sees it under the shard lock and does not park).
    pub fn collect_range(&self, old: Lsn, new: Lsn, out: &mut Vec<Waker>) {
        debug_assert!(old <= new);
        let (b0, b1) = ((old + 1) >> BLOCK_SHIFT, new >> BLOCK_SHIFT);
        if b1 - b0 + 1 >= SHARDS as u64 {
            for s in self.shards.iter() {
                drain_upto(&mut s.lock(), new, out);
            }
        } else {
            for b in b0..=b1 {
                drain_upto(
                    &mut self.shards[(b as usize) & (SHARDS - 1)].lock(),
                    new,
                    out,
                );
            }
        }
    }

    /// Every waiter (failure or shutdown: they will see the error on re-poll).
    pub fn collect_all(&self, out: &mut Vec<Waker>) {
        for s in self.shards.iter() {
            out.extend(s.lock().drain(..).map(|e| e.waker));
        }
    }
}

fn drain_upto(v: &mut Vec<Entry>, upto: Lsn, out: &mut Vec<Waker>) {
    let mut i = 0;
    while i < v.len() {
        if v[i].lsn <= upto {
            out.push(v.swap_remove(i).waker);
        } else {
            i += 1;
        }
    }
}
