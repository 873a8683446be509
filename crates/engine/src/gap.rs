//! Next-key locking: gap locks that keep phantoms out of the ranges a
//! Repeatable Read transaction has read with FOR UPDATE / FOR SHARE (or
//! that its UPDATE and DELETE statements searched), as InnoDB does.
//!
//! A gap is named after the index entry that ends it: `gap(E)` is the open
//! interval between E's predecessor and E, and the gap after the last
//! entry is named [`SUPREMUM`]. Gap locks live in the same sharded lock
//! table as row locks, under their own keys ([`gap_lock_key`]):
//!
//! - A locking scan takes `gap(E)` in S mode for every entry E it passes,
//!   and for the first entry beyond its range (the "next key"). S gap locks
//!   never conflict with each other.
//! - An insert that creates a new physical entry E first adds the entry,
//!   then looks at `gap(successor(E))`: if another transaction holds it,
//!   the insert asks for it in X mode — the insert intention — waits, and
//!   gives it back once granted. A free gap costs one look under the shard
//!   latch, so inserters never queue behind each other.
//! - Purge removes an entry E only when it can take `gap(E)` in X mode at
//!   once, since removing E merges its gap into the next one.
//!
//! Why a scan re-checks after taking a gap lock: the scan's cursor passed
//! the gap before the lock was granted. Inserters add their entry before
//! asking for the intention lock, so either the inserter saw our gap lock
//! (and waits), or its entry was already in the map when our lock was
//! granted (and the re-check finds it, and the scan resumes from the last
//! entry it handled). The lock table's shard latch orders the two.

use crate::engine::{lock_key, Engine, Result};
use crate::txn::Txn;
use lockstep_lock::{Acquire, LockKey, LockMode};
use lockstep_tables::table::IndexMap;
use lockstep_tables::Table;
use std::ops::Bound;

/// Name of the gap after an index's last entry. Encoded keys never start
/// with 0xFF (their first byte is a type tag), so no entry has this name.
pub const SUPREMUM: &[u8] = &[0xFF];

/// Lock-table key of `gap(entry)` of index `index` (0 = clustered).
pub fn gap_lock_key(table: u32, index: usize, entry: &[u8]) -> LockKey {
    lock_key(table, index | 0x80, entry)
}

/// The lock-table identity purge uses; it only ever tries locks, never
/// waits, so it can take no part in a deadlock.
const PURGE_TRX: u64 = u64::MAX - 1;

/// An ordered index whose gaps can be locked: the clustered index of a
/// table or one of its secondary indexes.
pub trait Entries {
    /// The first entry in (lower, upper), in key order.
    fn first(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Option<Vec<u8>>;
    fn contains(&self, entry: &[u8]) -> bool;
}

impl Entries for Table {
    fn first(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Option<Vec<u8>> {
        self.first_key(lower, upper)
    }
    fn contains(&self, entry: &[u8]) -> bool {
        self.record(entry).is_some()
    }
}

impl Entries for IndexMap {
    fn first(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Option<Vec<u8>> {
        self.range::<[u8], _>((lower, upper))
            .next()
            .map(|e| e.key().to_vec())
    }
    fn contains(&self, entry: &[u8]) -> bool {
        self.contains_key(entry)
    }
}

/// Whether `key` lies below the scan's upper bound.
pub(crate) fn below(key: &[u8], upper: Bound<&[u8]>) -> bool {
    match upper {
        Bound::Unbounded => true,
        Bound::Included(u) => key <= u,
        Bound::Excluded(u) => key < u,
    }
}

/// The bound just above `upper`: where the next key after a range starts.
pub(crate) fn above(upper: Bound<&[u8]>) -> Option<Bound<&[u8]>> {
    match upper {
        Bound::Unbounded => None,
        Bound::Included(u) => Some(Bound::Excluded(u)),
        Bound::Excluded(u) => Some(Bound::Included(u)),
    }
}

/// A scan's next-key bookkeeping: where a pass starts and ends, and what
/// to lock at each entry it meets.
pub(crate) struct Cursor<'a> {
    /// Locking read under Repeatable Read: lock gaps too.
    pub next_key: bool,
    reverse: bool,
    table: u32,
    index: usize,
    lower: Bound<&'a [u8]>,
    upper: Bound<&'a [u8]>,
    /// The last entry handled: a pass that had to restart resumes after
    /// it (forward scans only).
    resume: Option<Vec<u8>>,
}

/// What a scan does with the entry it has reached.
pub(crate) enum Step {
    /// Lock the row and visit it.
    Visit,
    /// Something appeared in the gap just passed: start a new pass.
    Restart,
    /// The entry is past the range (its gap is now locked): done.
    Stop,
}

impl<'a> Cursor<'a> {
    /// The lower bound of the next pass, as an owned key to borrow from.
    pub fn start(&self) -> Option<Vec<u8>> {
        self.resume.clone()
    }

    pub fn from<'b>(&self, start: &'b Option<Vec<u8>>) -> Bound<&'b [u8]>
    where
        'a: 'b,
    {
        start.as_deref().map_or(self.lower, Bound::Excluded)
    }

    /// The upper bound of a pass: forward next-key scans go on to the
    /// first entry past the range.
    pub fn end(&self) -> Bound<&'a [u8]> {
        if self.next_key && !self.reverse {
            Bound::Unbounded
        } else {
            self.upper
        }
    }

    /// Locks the gap before `entry` (next-key scans only).
    pub fn enter(
        &mut self,
        engine: &Engine,
        txn: &mut Txn,
        entries: &dyn Entries,
        entry: &[u8],
    ) -> Result<Step> {
        if !self.next_key {
            return Ok(Step::Visit);
        }
        if self.reverse {
            // The cursor has not passed this gap yet: nothing to re-check.
            let key = gap_lock_key(self.table, self.index, entry);
            engine.lock(txn, key, LockMode::Shared)?;
        } else {
            let from = self.resume.as_deref().map_or(self.lower, Bound::Excluded);
            if !engine.lock_gap(txn, self.table, self.index, entries, from, Some(entry))? {
                return Ok(Step::Restart);
            }
            if !below(entry, self.upper) {
                return Ok(Step::Stop);
            }
        }
        self.resume = Some(entry.to_vec());
        Ok(Step::Visit)
    }

    /// The pass ran off the end of the index: a forward next-key scan locks
    /// the supremum gap. False means: start a new pass.
    pub fn finish(
        &mut self,
        engine: &Engine,
        txn: &mut Txn,
        entries: &dyn Entries,
    ) -> Result<bool> {
        if !self.next_key || self.reverse {
            return Ok(true);
        }
        let from = self.resume.as_deref().map_or(self.lower, Bound::Excluded);
        engine.lock_gap(txn, self.table, self.index, entries, from, None)
    }
}

impl Engine {
    /// Starts a scan of index `index` over [lower, upper]; a reverse
    /// next-key scan locks the gap above the range first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cursor<'a>(
        &self,
        txn: &mut Txn,
        table: u32,
        index: usize,
        entries: &dyn Entries,
        lower: Bound<&'a [u8]>,
        upper: Bound<&'a [u8]>,
        reverse: bool,
        locking: Option<LockMode>,
    ) -> Result<Cursor<'a>> {
        let next_key = locking.is_some() && txn.isolation.gap_locking();
        if next_key && reverse {
            self.lock_gap_above(txn, table, index, entries, upper)?;
        }
        Ok(Cursor {
            next_key,
            reverse,
            table,
            index,
            lower,
            upper,
            resume: None,
        })
    }

    /// Takes `gap(entry)` in S mode and checks that the gap is still the
    /// one the scan saw: `entry` still exists and nothing appeared between
    /// `from` and it. False means: resume the scan from `from`.
    pub(crate) fn lock_gap(
        &self,
        txn: &mut Txn,
        table: u32,
        index: usize,
        entries: &dyn Entries,
        from: Bound<&[u8]>,
        entry: Option<&[u8]>,
    ) -> Result<bool> {
        let name = entry.unwrap_or(SUPREMUM);
        // SKIP LOCKED goes on without a gap another transaction holds.
        self.lock_row(txn, gap_lock_key(table, index, name), LockMode::Shared)?;
        Ok(match entry {
            Some(e) => entries.contains(e) && entries.first(from, Bound::Excluded(e)).is_none(),
            None => entries.first(from, Bound::Unbounded).is_none(),
        })
    }

    /// Takes the next-key gap of a range that ends at `upper`: the gap of
    /// the first entry above it (or the supremum).
    pub(crate) fn lock_gap_above(
        &self,
        txn: &mut Txn,
        table: u32,
        index: usize,
        entries: &dyn Entries,
        upper: Bound<&[u8]>,
    ) -> Result<()> {
        let Some(from) = above(upper) else {
            // Above an unbounded range is the supremum gap itself; the scan
            // has not passed it, so there is nothing to re-check.
            let key = gap_lock_key(table, index, SUPREMUM);
            return self.lock_row(txn, key, LockMode::Shared).map(|_| ());
        };
        loop {
            let next = entries.first(from, Bound::Unbounded);
            if self.lock_gap(txn, table, index, entries, from, next.as_deref())? {
                return Ok(());
            }
        }
    }

    /// Insert intention for a new physical `entry`: waits while another
    /// transaction holds the gap it lands in. The caller has already added
    /// the entry (see the module comment for why that order).
    pub(crate) fn insert_intention(
        &self,
        txn: &mut Txn,
        table: u32,
        index: usize,
        entries: &dyn Entries,
        entry: &[u8],
    ) -> Result<()> {
        let next = entries.first(Bound::Excluded(entry), Bound::Unbounded);
        let key = gap_lock_key(table, index, next.as_deref().unwrap_or(SUPREMUM));
        let held = txn.locks.get(&key).copied();
        if held == Some(LockMode::Exclusive) {
            return Ok(());
        }
        let id = self.ensure_id(txn);
        // Nobody holds the gap: go ahead without taking anything. A gap
        // lock granted after this look re-checks and finds our entry.
        if !self.lock_sys.held_by_other(id, key) {
            return Ok(());
        }
        match self.lock_sys.acquire(id, key, LockMode::Exclusive) {
            Acquire::Granted => {
                match held {
                    // Our own S gap lock was upgraded: keep it (as X).
                    Some(_) => {
                        txn.locks.insert(key, LockMode::Exclusive);
                    }
                    None => self.lock_sys.release_all(id, &[key]),
                }
                Ok(())
            }
            Acquire::Wait(wait) => {
                self.stats
                    .lock_waits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                txn.pending_lock = Some((key, LockMode::Exclusive));
                txn.pending_transient = held.is_none();
                Err(crate::engine::Error::LockWait(wait))
            }
            Acquire::Deadlock => Err(crate::engine::Error::Sql(lockstep_types::Error::deadlock())),
        }
    }

    /// Purge may remove `entry` only while nobody holds its gap: tries
    /// `gap(entry)` in X mode and, if granted, runs `remove` under it.
    /// Returns false (nothing done) when the gap is locked.
    pub(crate) fn remove_entry_unless_gap_locked(
        &self,
        table: u32,
        index: usize,
        entry: &[u8],
        remove: impl FnOnce(),
    ) -> bool {
        let key = gap_lock_key(table, index, entry);
        match self.lock_sys.acquire(PURGE_TRX, key, LockMode::Exclusive) {
            Acquire::Granted => {
                remove();
                self.lock_sys.release_all(PURGE_TRX, &[key]);
                true
            }
            // Dropping the wait withdraws the request.
            Acquire::Wait(_) | Acquire::Deadlock => false,
        }
    }
}
