//! The server-wide memory budget. lockstep keeps its tables in memory, so
//! the data, old row versions, statements' buffers, result sets and
//! prepared statements all draw from one pool; past the budget the work
//! that asks for more gets a MySQL error and the server stays up, instead
//! of the operating system killing it.
//!
//! What is in use is counted by the process's allocator (the server's
//! `alloc.rs` calls [`note`]), so nothing escapes the count and no data
//! structure has to estimate its own size. Without that allocator (unit
//! tests) nothing is counted and no budget applies.
//!
//! Two thresholds: data may grow to [`DATA_SHARE`] of the budget (1114 "The
//! table is full" past it), so that statements still have room to run and
//! to delete; statements may use the rest (3170 past the whole budget).

use crate::error::{Code, Error};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

/// Bytes allocated and not yet freed, as far as flushed by the threads.
static IN_USE: AtomicIsize = AtomicIsize::new(0);
/// The budget in bytes; 0: none.
static BUDGET: AtomicUsize = AtomicUsize::new(0);

/// Share of the budget that table data (rows, versions, indexes) may fill.
pub const DATA_SHARE: f64 = 0.9;

/// Adds `delta` bytes (negative when freed) to what is in use. The
/// allocator batches per thread and calls this with the sum.
#[inline]
pub fn note(delta: isize) {
    IN_USE.fetch_add(delta, Ordering::Relaxed);
}

/// Bytes in use (0 when nothing counts).
#[inline]
pub fn in_use() -> usize {
    IN_USE.load(Ordering::Relaxed).max(0) as usize
}

pub fn set_budget(bytes: usize) {
    BUDGET.store(bytes, Ordering::Relaxed);
}

pub fn budget() -> usize {
    BUDGET.load(Ordering::Relaxed)
}

/// The default budget: three quarters of the machine's memory (the rest is
/// the operating system's, the page cache's and the log buffers').
pub fn default_budget() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
        })
        .map_or(0, |kib| kib * 1024);
    total / 4 * 3
}

/// Whether a statement may take more memory now: 3170 past the budget.
#[inline]
pub fn check_statement() -> Result<(), Error> {
    let budget = budget();
    if budget == 0 || in_use() <= budget {
        return Ok(());
    }
    Err(Error::new(
        Code::CapacityExceeded,
        format!(
            "Memory capacity of {budget} bytes for 'lockstep_memory_budget' exceeded. Statement aborted; the server's memory in use is {} bytes.",
            in_use()
        ),
    ))
}

/// Whether table data may grow now: 1114 past its share of the budget.
#[inline]
pub fn check_data(table: &str) -> Result<(), Error> {
    let budget = budget();
    if budget == 0 || (in_use() as f64) <= budget as f64 * DATA_SHARE {
        return Ok(());
    }
    Err(Error::new(
        Code::TableFull,
        format!("The table '{table}' is full"),
    ))
}
