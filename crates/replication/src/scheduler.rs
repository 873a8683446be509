//! The applier's scheduler as a state machine (book 10.3): transactions
//! come in relay-log order; one may start once every earlier transaction
//! with sequence_number <= its last_committed has committed, and they
//! commit strictly in relay order (replica_preserve_commit_order). The
//! scheduler never waits: it says which tickets may start and whose turn
//! it is to commit; workers do the waiting.
//!
//! DDL is a barrier both ways (its last_committed from the source does not
//! cover the rows that follow it), and so is any record whose numbers do
//! not fit this source's sequence (a new source, a restart): serial replay
//! is slower but never wrong.

use std::collections::VecDeque;

/// A transaction's commit-order facts from its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub sequence_number: u64,
    pub last_committed: u64,
    pub ddl: bool,
}

pub type Ticket = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Queued,
    Running,
    /// Row work done; waiting for its turn to commit.
    Ready,
    Committing,
    Done,
}

struct Slot {
    seq: u64,
    /// Every earlier slot with seq <= this must be done first.
    wait_for: u64,
    state: State,
}

pub struct Scheduler {
    slots: VecDeque<Slot>,
    /// Ticket of `slots[0]`.
    base: Ticket,
    last_seq: Option<u64>,
    barrier: u64,
    capacity: usize,
    max_running: usize,
    running: usize,
}

impl Scheduler {
    pub fn new(capacity: usize, max_running: usize) -> Scheduler {
        debug_assert!(capacity > 0 && max_running > 0);
        Scheduler {
            slots: VecDeque::new(),
            base: 0,
            last_seq: None,
            barrier: 0,
            capacity,
            max_running,
            running: 0,
        }
    }

    pub fn has_room(&self) -> bool {
        self.slots.len() < self.capacity
    }

    pub fn is_idle(&self) -> bool {
        self.slots.is_empty()
    }

    /// Queues the next transaction in relay order.
    pub fn submit(&mut self, m: Meta) -> Ticket {
        debug_assert!(self.has_room(), "submit beyond capacity");
        let in_order = self.last_seq.is_none_or(|s| m.sequence_number > s)
            && m.last_committed < m.sequence_number;
        let wait_for = if m.ddl || !in_order {
            u64::MAX
        } else {
            m.last_committed.max(self.barrier)
        };
        if m.ddl || !in_order {
            self.barrier = m.sequence_number;
        }
        self.last_seq = Some(m.sequence_number);
        self.slots.push_back(Slot {
            seq: m.sequence_number,
            wait_for,
            state: State::Queued,
        });
        self.base + self.slots.len() as u64 - 1
    }

    /// Tickets that may start now (marked running), oldest first.
    pub fn startable(&mut self) -> Vec<Ticket> {
        let mut out = Vec::new();
        // Smallest seq among earlier slots that are not done.
        let mut oldest_open = u64::MAX;
        let mut any_open = false;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if self.running >= self.max_running {
                break;
            }
            let blocked = any_open && (slot.wait_for == u64::MAX || oldest_open <= slot.wait_for);
            if slot.state == State::Queued && !blocked {
                slot.state = State::Running;
                self.running += 1;
                out.push(self.base + i as u64);
            }
            if slot.state != State::Done {
                any_open = true;
                oldest_open = oldest_open.min(slot.seq);
            }
        }
        out
    }

    /// The ticket's row work is done; it waits for its turn.
    pub fn ready(&mut self, t: Ticket) {
        let slot = self.slot(t);
        debug_assert_eq!(slot.state, State::Running);
        slot.state = State::Ready;
    }

    /// Whose turn it is to commit, if that one is ready (at most one
    /// commits at a time, in relay order).
    pub fn next_turn(&mut self) -> Option<Ticket> {
        let (i, slot) = self
            .slots
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.state != State::Done)?;
        if slot.state != State::Ready {
            return None;
        }
        slot.state = State::Committing;
        Some(self.base + i as u64)
    }

    /// The ticket committed, or was skipped (already executed).
    pub fn done(&mut self, t: Ticket) {
        let slot = self.slot(t);
        debug_assert!(slot.state != State::Done && slot.state != State::Queued);
        slot.state = State::Done;
        self.running -= 1;
        while self.slots.front().is_some_and(|s| s.state == State::Done) {
            self.slots.pop_front();
            self.base += 1;
        }
    }

    fn slot(&mut self, t: Ticket) -> &mut Slot {
        let i = (t - self.base) as usize;
        &mut self.slots[i]
    }
}
