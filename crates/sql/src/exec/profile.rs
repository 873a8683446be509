//! What EXPLAIN ANALYZE measures: per table access of the plan, how often
//! it was read (loops), the rows it passed on, and the time spent in it.

use super::{Exec, TableScan};
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
    /// One read of `scan` that passed on `rows` rows, begun at `start`.
    pub(super) fn measured(&mut self, scan: &TableScan, start: Instant, rows: u64) {
        if let Some(profile) = &mut self.profile {
            let s = profile.entry(scan_key(scan)).or_default();
            s.loops += 1;
            s.rows += rows;
            s.time += start.elapsed();
        }
    }
}
