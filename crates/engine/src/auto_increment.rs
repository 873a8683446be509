//! A table's AUTO_INCREMENT counter set by DDL: `CREATE TABLE ...
//! AUTO_INCREMENT=n` (logged with the CREATE, see comments.rs) and `ALTER
//! TABLE ... AUTO_INCREMENT=n`. As in InnoDB, the counter never goes to or
//! below a value in use: a lower request gives the largest value present
//! plus one. The value set is logged, so recovery and replicas set the
//! same counter (recovery still raises it past the rows it replays).

use crate::engine::Engine;
use lockstep_binlog::Event;
use lockstep_tables::Table;
use lockstep_types::Error as SqlError;
use std::ops::Bound;
use std::sync::atomic::Ordering;

impl Engine {
    /// ALTER TABLE ... AUTO_INCREMENT=n; returns the counter set. The
    /// caller holds the table's exclusive metadata lock, so no insert
    /// moves the counter meanwhile.
    pub async fn set_auto_increment(&self, table: &Table, requested: u64) -> Result<u64, SqlError> {
        let next = effective_next(table, requested);
        let event = Event::SetAutoIncrement {
            table: table.id,
            next,
        };
        let _in_flight = self.log_ddl(event).await?;
        table.auto_increment.store(next, Ordering::SeqCst);
        Ok(next)
    }
}

/// The counter a request for `requested` gives: at least 1, and past the
/// largest AUTO_INCREMENT value any row holds when the request would go
/// below the counter (only then are the rows read).
pub fn effective_next(table: &Table, requested: u64) -> u64 {
    let requested = requested.max(1);
    if requested >= table.auto_increment.load(Ordering::SeqCst) {
        return requested;
    }
    requested.max(largest_in_use(table).saturating_add(1))
}

/// The largest value of the table's AUTO_INCREMENT column in its newest
/// row versions (0 when none or no such column).
fn largest_in_use(table: &Table) -> u64 {
    let schema = table.schema();
    let Some(c) = schema.def.auto_increment_column() else {
        return 0;
    };
    let mut max = 0u64;
    for entry in table.range(Bound::Unbounded, Bound::Unbounded, false) {
        if let Some(row) = entry.value().latest().and_then(|v| v.row) {
            max = max.max(row.get(c).to_i64().unwrap_or(0).max(0) as u64);
        }
    }
    max
}
