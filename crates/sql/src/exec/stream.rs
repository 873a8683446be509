//! Result sets sent in pieces. A SELECT that reads one table through one
//! index range (primary or secondary), and whose rows need nothing after
//! the scan (no sort, group, DISTINCT or window), is produced a batch at a
//! time: each batch resumes the scan past the last index entry it
//! produced (the primary key, or a secondary entry's key and primary
//! key), under the statement's read view, so a result of any size holds
//! one batch in memory instead of the whole set (and is not limited by
//! `query_memory_limit`).
//!
//! A join whose rows are final once projected and need no sort is
//! produced the same way, a batch at a time: the join's resumable cursor
//! (exec/outer.rs, the one block nested loops use for their outer side)
//! is kept between batches, so its first rows go out before the last are
//! made, as MySQL sends a join's rows.
//!
//! Any other SELECT whose rows are final once projected (several ranges,
//! or an ORDER BY that needs a sort; no group, DISTINCT, window or
//! subquery) goes through a file sort on its first batch (exec/filesort.rs:
//! past sort_buffer_size, runs spill to disk), and its batches are read
//! from the sort's merge: it holds a sort buffer, not its result.

use super::filesort::Sorted;
use super::outer::{Batch, Outer};
use super::{
    row_bytes, Bounds, Exec, KeyRanges, Project, QueryBody, QueryPlan, Result, RowSink, SelectPlan,
    Source, SourceRow,
};
use crate::expr::BExpr;
use lockstep_types::Value;
use std::ops::Bound;

/// Where a streamed scan stands between batches.
#[derive(Default)]
pub struct ScanCursor {
    /// The key range of the scan, computed by the first batch.
    range: Option<(Bounds, bool, bool)>,
    /// The index entry of the last row the scan produced: its primary
    /// key, or for a secondary index its key followed by the primary key.
    after: Option<Vec<u8>>,
    /// OFFSET rows still to skip, LIMIT rows still to send (None: all).
    skip: usize,
    wanted: Option<usize>,
    /// No rows remain.
    pub done: bool,
    /// Rows produced so far (FOUND_ROWS()).
    pub sent: u64,
    /// A spilled stream: the sorted rows still to send.
    sorted: Option<Sorted>,
    /// A streamed join: where its production stands.
    join: Option<Outer>,
}

/// Whether `plan` can be streamed: by resuming a scan or a join, or from
/// a sort.
pub fn streamable(plan: &QueryPlan) -> bool {
    scans(plan) || spills(plan)
}

/// Whether `plan` is a join whose rows go out in the order the join makes
/// them (no sort), each final once projected.
fn joins(plan: &QueryPlan) -> bool {
    let QueryBody::Select(p) = &plan.body else {
        return false;
    };
    matches!(p.source, Source::Join { .. }) && final_rows(p) && p.order.is_empty()
}

/// Whether `plan`'s rows can be streamed from a file sort: a table or a
/// join whose rows are final once projected.
fn spills(plan: &QueryPlan) -> bool {
    let QueryBody::Select(p) = &plan.body else {
        return false;
    };
    matches!(p.source, Source::Table(_) | Source::Join { .. }) && final_rows(p)
}

/// Whether each row of `p` is final once projected: no group, HAVING,
/// window, DISTINCT, locking read or subquery.
fn final_rows(p: &SelectPlan) -> bool {
    p.aggregate.is_none()
        && p.having.is_none()
        && p.window.is_none()
        && !p.distinct
        && !p.first_row_only
        && p.lock.is_none()
        && !p
            .projection
            .iter()
            .chain(&p.filter)
            .chain(p.order.iter().map(|(e, _)| e))
            .any(BExpr::has_subquery)
}

/// Whether `plan` can be streamed by resuming its scan: one table read
/// through one index range at most, every row final as the scan meets it.
/// A secondary index's columns must be decoded, since the resume point is
/// built from them.
fn scans(plan: &QueryPlan) -> bool {
    let QueryBody::Select(p) = &plan.body else {
        return false;
    };
    let Source::Table(scan) = &p.source else {
        return false;
    };
    let index = &scan.def.indexes[scan.access.index];
    let decoded = |n: &Vec<bool>| index.columns.iter().all(|&c| n.get(c) != Some(&false));
    (scan.access.index == 0 || scan.needed.as_ref().is_none_or(decoded))
        && scan.access.ranges.len() <= 1
        && final_rows(p)
        && (p.order.is_empty() || p.ordered_by_index)
        && !scan.filter.as_ref().is_some_and(BExpr::has_subquery)
}

impl Exec<'_> {
    /// The next rows of a streamed SELECT: about `max_bytes` of them, or
    /// all that remain (then `cursor.done`).
    pub fn select_batch(
        &mut self,
        plan: &QueryPlan,
        cursor: &mut ScanCursor,
        max_bytes: usize,
    ) -> Result<Vec<Vec<Value>>> {
        debug_assert!(streamable(plan), "only streamable plans are batched");
        debug_assert!(!cursor.done, "a finished stream has no batch");
        let QueryBody::Select(p) = &plan.body else {
            unreachable!("streamable plans are single selects")
        };
        if joins(plan) {
            return self.joined_batch(p, cursor, max_bytes);
        }
        if !scans(plan) {
            return self.spilled_batch(p, cursor, max_bytes);
        }
        let Source::Table(scan) = &p.source else {
            unreachable!("streamable plans read one table")
        };
        if cursor.range.is_none() {
            self.open_cursor(p, cursor)?;
        }
        let (range, exact, widened) = cursor.range.clone().expect("opened above");
        let bounds = [resume(range, cursor.after.as_deref(), scan.access.reverse)];
        let ranges = KeyRanges {
            bounds: if cursor.wanted == Some(0) {
                &[]
            } else {
                &bounds
            },
            exact,
            widened,
        };
        let mut project = Project::new(p);
        project.limit = cursor.wanted.map(|w| w.saturating_add(cursor.skip));
        // The buffer of the last key is reused from row to row.
        let mut last = cursor.after.take().unwrap_or_default();
        let mut full = false;
        let secondary = (scan.access.index != 0).then_some(scan.access.index);
        self.scan_ranges(
            scan,
            &[],
            p.filter.as_ref(),
            None,
            ranges,
            &mut |env, pk, row| {
                // Before `push`, which may move values out of the row.
                last.clear();
                if let Some(index) = secondary {
                    scan.def.index_key_into(index, row.values(), &mut last);
                }
                last.extend_from_slice(pk);
                let more = project.push(env, row)?;
                full = project.bytes >= max_bytes;
                Ok(more && !full)
            },
        )?;
        let mut rows: Vec<Vec<Value>> = project.out.into_iter().map(|(r, _)| r).collect();
        let skipped = cursor.skip.min(rows.len());
        rows.drain(..skipped);
        cursor.skip -= skipped;
        if let Some(w) = &mut cursor.wanted {
            *w -= rows.len().min(*w);
        }
        cursor.sent += rows.len() as u64;
        cursor.done = !full || cursor.wanted == Some(0);
        cursor.after = (!cursor.done).then_some(last);
        Ok(rows)
    }

    /// The next rows of a streamed join: its production resumes where the
    /// last batch left it, the WHERE is checked on each joined row.
    fn joined_batch(
        &mut self,
        p: &SelectPlan,
        cursor: &mut ScanCursor,
        max_bytes: usize,
    ) -> Result<Vec<Vec<Value>>> {
        if cursor.join.is_none() {
            (cursor.skip, cursor.wanted) = self.offset_and_limit(p)?;
        }
        let mut state = cursor.join.take().unwrap_or_default();
        let mut project = Project::new(p);
        let mut ended = false;
        while !ended && cursor.wanted != Some(0) && project.bytes < max_bytes {
            let mut joined = Batch::new(max_bytes);
            ended = self.fill(&p.source, &[], None, &mut state, &mut joined)?;
            for row in joined.rows {
                if cursor.wanted == Some(0) {
                    break;
                }
                if !self.truth(&p.filter, &row)? {
                    continue;
                }
                if cursor.skip > 0 {
                    cursor.skip -= 1;
                    continue;
                }
                match project.add(self, &mut SourceRow::Owned(row)) {
                    Ok(bytes) => self.charge(bytes)?,
                    Err(e) => return Err(self.pending.take().unwrap_or(e)),
                }
                if let Some(w) = &mut cursor.wanted {
                    *w -= 1;
                }
            }
        }
        let ended = ended || cursor.wanted == Some(0);
        let rows: Vec<Vec<Value>> = project.out.into_iter().map(|(r, _)| r).collect();
        cursor.sent += rows.len() as u64;
        cursor.done = ended;
        // A join stopped by LIMIT drops its state (and what it holds).
        cursor.join = (!ended).then_some(state);
        Ok(rows)
    }

    /// The next rows of a stream read from a file sort; the first batch
    /// runs the whole query into the sort.
    fn spilled_batch(
        &mut self,
        p: &SelectPlan,
        cursor: &mut ScanCursor,
        max_bytes: usize,
    ) -> Result<Vec<Vec<Value>>> {
        if cursor.sorted.is_none() {
            self.open_sorted(p, cursor)?;
        }
        let sorted = cursor.sorted.as_mut().expect("opened above");
        let mut ended = false;
        while cursor.skip > 0 && !ended {
            ended = sorted.next()?.is_none();
            cursor.skip -= 1;
        }
        let mut rows = Vec::new();
        let mut bytes = 0;
        while !ended && cursor.wanted != Some(0) && bytes < max_bytes {
            let Some((row, _)) = sorted.next()? else {
                ended = true;
                break;
            };
            bytes += row_bytes(&row);
            rows.push(row);
            if let Some(w) = &mut cursor.wanted {
                *w -= 1;
            }
        }
        cursor.sent += rows.len() as u64;
        cursor.done = ended || cursor.wanted == Some(0);
        if cursor.done {
            cursor.sorted = None; // its run files go with it
        }
        Ok(rows)
    }

    /// The first batch of a spilled stream: every row into the sort.
    fn open_sorted(&mut self, p: &SelectPlan, cursor: &mut ScanCursor) -> Result<()> {
        (cursor.skip, cursor.wanted) = self.offset_and_limit(p)?;
        let mut project = Project::new(p);
        project.sorter = Some(self.file_sort(p, false)?);
        if p.order.is_empty() || p.ordered_by_index {
            // No sort: the production stops at the rows wanted.
            project.limit = cursor.wanted.map(|w| w.saturating_add(cursor.skip));
        }
        if cursor.wanted != Some(0) {
            self.produce(&p.source, &[], &p.filter, p.lock, &mut project)?;
        }
        let sort = project.sorter.take().expect("set above");
        cursor.sorted = Some(sort.finish()?);
        Ok(())
    }

    /// Rows to skip (OFFSET) and to send (LIMIT; None: all) of `p`.
    pub(super) fn offset_and_limit(&mut self, p: &SelectPlan) -> Result<(usize, Option<usize>)> {
        let skip = match &p.offset {
            Some(e) => super::row_count(&self.eval(e, &[])?),
            None => 0,
        };
        let wanted = match &p.limit {
            Some(e) => Some(super::row_count(&self.eval(e, &[])?)),
            None => None,
        };
        Ok((skip, wanted))
    }

    /// The first batch: the scan's key range, LIMIT and OFFSET.
    fn open_cursor(&mut self, p: &SelectPlan, cursor: &mut ScanCursor) -> Result<()> {
        let Source::Table(scan) = &p.source else {
            unreachable!("streamable plans read one table")
        };
        let mut widened = false;
        let (mut bounds, exact) = self.key_bounds(&scan.def, &scan.access, &[], &mut widened)?;
        (cursor.skip, cursor.wanted) = self.offset_and_limit(p)?;
        cursor.range = match bounds.len() {
            0 => {
                cursor.wanted = Some(0); // an empty range: no rows
                Some(((Bound::Unbounded, Bound::Unbounded), exact, widened))
            }
            _ => Some((bounds.swap_remove(0), exact, widened)),
        };
        debug_assert!(bounds.is_empty(), "streamable plans have one range");
        Ok(())
    }
}

/// The range left after the row with primary key `after`.
pub(super) fn resume((lo, hi): Bounds, after: Option<&[u8]>, reverse: bool) -> Bounds {
    match after {
        None => (lo, hi),
        Some(k) if reverse => (lo, Bound::Excluded(k.to_vec())),
        Some(k) => (Bound::Excluded(k.to_vec()), hi),
    }
}
