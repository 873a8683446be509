//! A join's outer side read a batch at a time. A nested loop (or a hash
//! join's probe) needs its left rows one by one while it runs the right
//! side, which needs the executor; the left side cannot be scanned while
//! the right side runs, so it is read into a batch of at most
//! `join_buffer_size` bytes (MySQL's block nested loop buffer), the batch
//! is joined, and the next batch resumes where the last one stopped: a
//! table scan past the index entry of its last row (as `ScanCursor`
//! resumes a streamed result), a join from its own left batch and the
//! matches it had not passed on. A join of any depth holds one batch per
//! level and one outer row's matches, whatever the size of its input.
//! Rows come out in exactly the order a single pass gives.

use super::hash_join::JoinTable;
use super::{row_bytes, Bounds, Collect, Exec, KeyRanges, Result, RowSink, ScanEnv, SourceRow};
use crate::expr::BExpr;
use crate::parser::JoinKind;
use crate::plan::{Source, TableScan};
use lockstep_engine::{Error as EngineError, LockMode};
use lockstep_types::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// Where a resumable production of a source stands.
#[derive(Default)]
pub(super) enum Outer {
    #[default]
    Start,
    Table(Box<TableCursor>),
    /// A derived table's rows and the next one to produce.
    Rows(Arc<Vec<Vec<Value>>>, usize),
    Join(Box<JoinCursor>),
    Done,
}

/// A table scan between batches.
pub(super) struct TableCursor {
    /// The scan, with its index's columns decoded where the plan pruned
    /// them (the resume point is built from them).
    scan: Option<TableScan>,
    bounds: Vec<Bounds>,
    exact: bool,
    widened: bool,
    /// The range being read, and the entry key of the last row produced
    /// in it.
    at: usize,
    after: Option<Vec<u8>>,
    /// Primary keys met, where ranges may overlap.
    seen: Option<HashSet<Vec<u8>>>,
}

/// A join between batches.
#[derive(Default)]
pub(super) struct JoinCursor {
    left: Outer,
    lefts: std::vec::IntoIter<Vec<Value>>,
    left_done: bool,
    /// Joined rows of the current left row not passed on yet.
    pending: std::vec::IntoIter<Vec<Value>>,
    /// The hash table, when the join runs as a hash join.
    table: Option<Arc<JoinTable>>,
    /// Whether the hash table was looked for (None: it would not fit).
    started: bool,
}

/// Collects rows up to about `max` bytes (at least one row).
pub(super) struct Batch {
    pub rows: Vec<Vec<Value>>,
    bytes: usize,
    max: usize,
}

impl Batch {
    pub fn new(max: usize) -> Batch {
        Batch {
            rows: Vec::new(),
            bytes: 0,
            max,
        }
    }

    /// Whether a row of `bytes` more fills the batch.
    fn fills(&self, bytes: usize) -> bool {
        self.bytes + bytes >= self.max
    }
}

impl RowSink for Batch {
    fn push(&mut self, _: &mut ScanEnv, row: SourceRow) -> Result<bool> {
        let row = row.into_owned();
        self.bytes += row_bytes(&row);
        self.rows.push(row);
        Ok(self.bytes < self.max)
    }
}

impl Exec<'_> {
    /// Feeds `out` the next rows of `src` (each `prefix` ++ its row) from
    /// where `state` stands, until `out` wants no more; true once every
    /// row was produced.
    pub(super) fn fill(
        &mut self,
        src: &Source,
        prefix: &[Value],
        lock: Option<LockMode>,
        state: &mut Outer,
        out: &mut Batch,
    ) -> Result<bool> {
        if matches!(state, Outer::Done) {
            return Ok(true);
        }
        let done = match src {
            Source::Dual => {
                if matches!(state, Outer::Start) {
                    out.push(&mut self.scan_env(), SourceRow::Owned(prefix.to_vec()))?;
                }
                true
            }
            Source::Table(scan) => self.fill_table(scan, prefix, lock, state, out)?,
            Source::Derived { plan, lateral, .. } => {
                if matches!(state, Outer::Start) {
                    let rows = match lateral {
                        Some(l) => self.lateral_rows(plan, l, prefix)?,
                        None => self.materialize(plan)?,
                    };
                    *state = Outer::Rows(rows, 0);
                }
                let Outer::Rows(rows, at) = state else {
                    return Ok(true);
                };
                while *at < rows.len() {
                    let mut row = prefix.to_vec();
                    row.extend(rows[*at].iter().cloned());
                    *at += 1;
                    if !out.push(&mut self.scan_env(), SourceRow::Owned(row))? {
                        break;
                    }
                }
                *at == rows.len()
            }
            Source::Join { .. } => {
                if !matches!(state, Outer::Join(_)) {
                    *state = Outer::Join(Box::default());
                }
                let Outer::Join(join) = state else {
                    unreachable!("set above")
                };
                self.join_from(src, prefix, &None, lock, join, out)?
            }
        };
        if done {
            if let Outer::Join(join) = std::mem::take(state) {
                self.end_join(src, *join);
            }
            *state = Outer::Done;
        }
        Ok(done)
    }

    /// `fill` for a table: its key ranges in order, each resumed past the
    /// entry of the last row produced.
    fn fill_table(
        &mut self,
        scan: &TableScan,
        prefix: &[Value],
        lock: Option<LockMode>,
        state: &mut Outer,
        out: &mut Batch,
    ) -> Result<bool> {
        if matches!(state, Outer::Start) {
            let mut widened = false;
            let (bounds, exact) = self.key_bounds(&scan.def, &scan.access, prefix, &mut widened)?;
            *state = Outer::Table(Box::new(TableCursor {
                scan: decoding_index(scan),
                seen: (bounds.len() > 1).then(HashSet::new),
                bounds,
                exact,
                widened,
                at: 0,
                after: None,
            }));
        }
        let Outer::Table(cursor) = state else {
            unreachable!("a table's state is a table cursor")
        };
        let TableCursor {
            scan: decoded,
            bounds,
            exact,
            widened,
            at,
            after,
            seen,
        } = &mut **cursor;
        let scan = decoded.as_ref().unwrap_or(scan);
        let secondary = (scan.access.index != 0).then_some(scan.access.index);
        let start = std::time::Instant::now();
        let first = *at == 0 && after.is_none();
        let mut produced = 0u64;
        while *at < bounds.len() {
            let range = [super::stream::resume(
                bounds[*at].clone(),
                after.as_deref(),
                scan.access.reverse,
            )];
            let ranges = KeyRanges {
                bounds: &range,
                exact: *exact,
                widened: *widened,
            };
            let mut stopped = None;
            self.scan_ranges(scan, prefix, None, lock, ranges, &mut |env, pk, row| {
                if let Some(seen) = seen.as_mut() {
                    if !seen.insert(pk.to_vec()) {
                        return Ok(true);
                    }
                }
                produced += 1;
                // The resume point is built only for the row that fills
                // the batch.
                let last = out.fills(row_bytes(row.values()));
                if last {
                    let mut key = Vec::new();
                    if let Some(index) = secondary {
                        let values = &row.values()[prefix.len()..];
                        scan.def.index_key_into(index, values, &mut key);
                    }
                    key.extend_from_slice(pk);
                    stopped = Some(key);
                }
                let more = out.push(env, row)?;
                debug_assert_eq!(more, !last, "the batch fills as foreseen");
                Ok(more)
            })?;
            match stopped {
                Some(key) => {
                    *after = Some(key);
                    self.measured_piece(scan, start, produced, first);
                    return Ok(false);
                }
                None => {
                    *at += 1;
                    *after = None;
                }
            }
        }
        self.measured_piece(scan, start, produced, first);
        Ok(true)
    }

    /// EXPLAIN ANALYZE: one loop per read of a table (counted by its
    /// first batch), however many batches it took.
    fn measured_piece(
        &mut self,
        scan: &TableScan,
        start: std::time::Instant,
        rows: u64,
        first: bool,
    ) {
        if let Some(profile) = &mut self.profile {
            let s = profile.entry(super::profile::scan_key(scan)).or_default();
            s.loops += first as u64;
            s.rows += rows;
            s.time += start.elapsed();
        }
    }

    /// Feeds `sink` the rows of join `src` that satisfy `filter` from
    /// where `st` stands: the left side a batch at a time, each left row's
    /// matches (by hash, or from the right side run for it) in turn.
    /// Returns true once all were produced, false when `sink` stopped
    /// (`st` then stands after the last row it took).
    pub(super) fn join_from(
        &mut self,
        src: &Source,
        prefix: &[Value],
        filter: &Option<BExpr>,
        lock: Option<LockMode>,
        st: &mut JoinCursor,
        sink: &mut dyn RowSink,
    ) -> Result<bool> {
        let Source::Join {
            left,
            right,
            kind,
            on,
            hash,
            not_exists,
        } = src
        else {
            unreachable!("join_from runs joins")
        };
        if !st.started {
            st.started = true;
            if let Some(h) = hash.as_ref().filter(|_| lock.is_none()) {
                st.table = self.join_table(right, h)?;
            }
        }
        loop {
            for row in st.pending.by_ref() {
                if self.truth(filter, &row)?
                    && !sink.push(&mut self.scan_env(), SourceRow::Owned(row))?
                {
                    return Ok(false);
                }
            }
            let Some(l) = st.lefts.next() else {
                if st.left_done {
                    return Ok(true);
                }
                let mut batch = Batch::new(self.ctx.memory.join);
                st.left_done = self.fill(left, prefix, lock, &mut st.left, &mut batch)?;
                st.lefts = batch.rows.into_iter();
                continue;
            };
            // Each left row may find nothing on the right.
            self.ctx.interrupt.check().map_err(EngineError::Sql)?;
            let first = *not_exists;
            let matched = match (&st.table, hash) {
                (Some(t), Some(h)) => self.probe(l, right, *kind, on, (h, t), first)?,
                _ => self.loop_matches(l, right, (*kind, first), on, lock)?,
            };
            st.pending = matched.into_iter();
        }
    }

    /// Gives back what a finished (or abandoned) join's hash table held.
    pub(super) fn end_join(&mut self, src: &Source, st: JoinCursor) {
        if let (Some(t), Source::Join { hash: Some(h), .. }) = (st.table, src) {
            if !h.reusable {
                self.release_temp(t.bytes);
            }
        }
    }

    /// One left row's matches by running the right side for it (a LEFT
    /// JOIN's NULL row when there are none); only the first with `first`.
    fn loop_matches(
        &mut self,
        l: Vec<Value>,
        right: &Source,
        (kind, first): (JoinKind, bool),
        on: &Option<BExpr>,
        lock: Option<LockMode>,
    ) -> Result<Vec<Vec<Value>>> {
        let mut matched = Collect {
            limit: first.then_some(1),
            ..Collect::default()
        };
        self.produce(right, &l, on, lock, &mut matched)?;
        // One left row's matches are released once passed on.
        self.memory.statement -= matched.bytes;
        if matched.rows.is_empty() && kind == JoinKind::Left {
            let mut row = l;
            row.extend(std::iter::repeat_n(Value::Null, right.width()));
            matched.rows.push(row);
        }
        Ok(matched.rows)
    }
}

/// A copy of `scan` that decodes its index's columns, where it reads a
/// secondary index whose columns the plan does not all need (None: the
/// scan does already).
fn decoding_index(scan: &TableScan) -> Option<TableScan> {
    let needed = scan.needed.as_ref()?;
    let columns = &scan.def.indexes[scan.access.index].columns;
    if scan.access.index == 0 || columns.iter().all(|&c| needed.get(c) != Some(&false)) {
        return None;
    }
    let mut wider = scan.clone();
    let needed = wider.needed.as_mut().expect("checked above");
    for &c in columns {
        if let Some(n) = needed.get_mut(c) {
            *n = true;
        }
    }
    Some(wider)
}
