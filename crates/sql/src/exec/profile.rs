//! What EXPLAIN ANALYZE measures: per table access of the plan, how often
//! it was read (loops), the rows it passed on, and the time spent in it.

use super::{Exec, Result, TableRowFn, TableScan};
use crate::expr::BExpr;
use lockstep_engine::LockMode;
use lockstep_types::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One table access's measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScanStats {
    pub loops: u64,
    pub rows: u64,
    pub time: Duration,
}

/// Measurements by table access (the address of its `TableScan` in the
/// plan, which lives as long as the statement).
pub type Profile = HashMap<usize, ScanStats>;

/// The key of `scan` in a `Profile`.
pub fn scan_key(scan: &TableScan) -> usize {
    scan as *const TableScan as usize
}

impl ScanStats {
    /// The words EXPLAIN ANALYZE appends to the access's line.
    pub fn describe(&self) -> String {
        let ms = self.time.as_secs_f64() * 1e3;
        let per_loop = if self.loops == 0 {
            0.0
        } else {
            ms / self.loops as f64
        };
        format!(
            " (actual time={per_loop:.3} ms per loop, {ms:.3} ms in all, rows={} loops={})",
            self.rows, self.loops
        )
    }
}

impl Exec<'_> {
    /// `table_rows`, measured into `profile`.
    pub(super) fn table_rows_measured(
        &mut self,
        scan: &TableScan,
        prefix: &[Value],
        filter: Option<&BExpr>,
        lock: Option<LockMode>,
        on_row: &mut TableRowFn,
    ) -> Result<()> {
        let start = Instant::now();
        let mut rows = 0u64;
        let r = self.table_rows_unmeasured(scan, prefix, filter, lock, &mut |env, pk, row| {
            rows += 1;
            on_row(env, pk, row)
        });
        if let Some(profile) = &mut self.profile {
            let s = profile.entry(scan_key(scan)).or_default();
            s.loops += 1;
            s.rows += rows;
            s.time += start.elapsed();
        }
        r
    }
}
