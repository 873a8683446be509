//! Index statistics of large tables kept fresh in the background, as
//! InnoDB's persistent-statistics thread recounts a table once about a
//! tenth of its rows changed. A query never counts a table past
//! `tables::stats::SYNC_LIMIT` rows itself (`Table::stats` hands back the
//! old counts at once); this thread recounts such tables: one table at a
//! time, then it rests several times as long as the count took, so it
//! takes at most about a fifth of one core. A count walks the
//! in-memory indexes without locks (writers go on; it may see some rows
//! of changes made meanwhile, which an estimate tolerates).

use crate::engine::Engine;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the thread looks for a stale table when it found none.
const IDLE: Duration = Duration::from_millis(500);
/// Rest after a count, as a multiple of the time it took.
const REST_FACTOR: u32 = 4;

impl Engine {
    /// Starts the statistics thread (stops when the engine is dropped).
    pub fn start_stats_refresh(self: &Arc<Self>) {
        self.spawn_background("stats", |engine| match engine.refresh_one_stale() {
            Some(took) => (took * REST_FACTOR).max(Duration::from_millis(10)),
            None => IDLE,
        });
    }

    /// Recounts the first large table whose statistics are stale; how
    /// long it took, or None when none was.
    pub fn refresh_one_stale(&self) -> Option<Duration> {
        let table = self
            .catalog
            .all_tables()
            .into_iter()
            .find(|t| t.stats_need_background_count())?;
        let started = Instant::now();
        table.count_stats_in_background();
        Some(started.elapsed())
    }
}
