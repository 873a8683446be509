//! Index statistics: for each index, how many distinct values each prefix
//! of its key columns has, counted by one pass over the index (InnoDB
//! samples pages; our indexes are in memory, so an exact count costs a
//! scan). The planner divides a table's rows by them to estimate what an
//! equality on a key prefix fetches, instead of a fixed tenth per column
//! (which says `o_w_id = 1` fetches a tenth of the orders when there is
//! one warehouse).
//!
//! Counts go stale as rows change. `Table::stats` recounts a table that
//! grew or shrank by a tenth since it was counted, as InnoDB's automatic
//! recalculation does; tables past `SYNC_LIMIT` rows are counted by the
//! engine's statistics thread (engine/src/stats_refresh.rs) or ANALYZE
//! TABLE, so no query waits on a long scan.

use lockstep_types::value::key_column_end;

/// Tables up to this many rows are recounted when a query needs them.
pub const SYNC_LIMIT: usize = 100_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStats {
    /// `distinct[k]`: distinct values of the first k+1 key columns.
    pub distinct: Vec<u64>,
    /// Every `every`th key in key order, from the first: the index's
    /// quantiles, for estimating how many keys a range holds
    /// (`Table::dive`).
    pub samples: Vec<Vec<u8>>,
    pub every: u64,
}

/// Keys sampled per index, at most (about 20 bytes each for an integer
/// key: tens of kilobytes for a big table's indexes).
pub const SAMPLES: usize = 1024;

impl IndexStats {
    /// Keys between `lower` and `upper` by the samples (None: no samples).
    pub fn keys_between(
        &self,
        lower: std::ops::Bound<&[u8]>,
        upper: std::ops::Bound<&[u8]>,
    ) -> Option<f64> {
        if self.samples.is_empty() {
            return None;
        }
        let from = match lower {
            std::ops::Bound::Included(k) => self.samples.partition_point(|s| s.as_slice() < k),
            std::ops::Bound::Excluded(k) => self.samples.partition_point(|s| s.as_slice() <= k),
            std::ops::Bound::Unbounded => 0,
        };
        let to = match upper {
            std::ops::Bound::Included(k) => self.samples.partition_point(|s| s.as_slice() <= k),
            std::ops::Bound::Excluded(k) => self.samples.partition_point(|s| s.as_slice() < k),
            std::ops::Bound::Unbounded => self.samples.len(),
        };
        Some(to.saturating_sub(from) as f64 * self.every as f64)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableStats {
    /// Rows when counted.
    pub rows: u64,
    /// By position in `TableDef::indexes`.
    pub indexes: Vec<IndexStats>,
}

impl TableStats {
    /// Expected rows per value of the first `columns` key columns of
    /// index `index`, when counted.
    pub fn rows_per_key(&self, index: usize, columns: usize) -> Option<f64> {
        let distinct = *self
            .indexes
            .get(index)?
            .distinct
            .get(columns.checked_sub(1)?)?;
        Some(self.rows as f64 / distinct.max(1) as f64)
    }

    /// Whether `rows` now is within a tenth of the count's rows.
    pub fn fresh(&self, rows: usize) -> bool {
        let (then, now) = (self.rows as f64, rows as f64);
        (now - then).abs() <= then / 10.0 + 16.0
    }
}

/// Counts distinct prefixes of `columns` key columns over keys pushed in
/// key order (so equal prefixes are adjacent).
pub struct PrefixCounter {
    distinct: Vec<u64>,
    samples: Vec<Vec<u8>>,
    every: usize,
    seen: usize,
    prev: Vec<u8>,
    prev_ends: Vec<usize>,
    ends: Vec<usize>,
}

impl PrefixCounter {
    /// A counter of an index of about `keys` keys.
    pub fn new(columns: usize, keys: usize) -> PrefixCounter {
        PrefixCounter {
            distinct: vec![0; columns],
            samples: Vec::new(),
            every: keys.div_ceil(SAMPLES).max(1),
            seen: 0,
            prev: Vec::new(),
            prev_ends: Vec::new(),
            ends: Vec::with_capacity(columns),
        }
    }

    pub fn push(&mut self, key: &[u8]) {
        if self.seen.is_multiple_of(self.every) {
            self.samples.push(key.to_vec());
        }
        self.seen += 1;
        self.ends.clear();
        let mut at = 0;
        while self.ends.len() < self.distinct.len() {
            let Some(end) = key_column_end(key, at) else {
                break;
            };
            self.ends.push(end);
            at = end;
        }
        // The first prefix that differs from the previous key's, and every
        // longer one, is a new value.
        let (prev, prev_ends, ends) = (&self.prev, &self.prev_ends, &self.ends);
        let same = (0..ends.len())
            .take_while(|&j| {
                prev_ends.get(j) == Some(&ends[j]) && prev[..ends[j]] == key[..ends[j]]
            })
            .count();
        for d in self.distinct.iter_mut().take(ends.len()).skip(same) {
            *d += 1;
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        std::mem::swap(&mut self.prev_ends, &mut self.ends);
    }

    pub fn finish(self) -> IndexStats {
        IndexStats {
            distinct: self.distinct,
            samples: self.samples,
            every: self.every as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_types::Value;

    fn key(vals: &[Value]) -> Vec<u8> {
        let mut k = Vec::new();
        vals.iter().for_each(|v| v.encode_key(&mut k));
        k
    }

    #[test]
    fn counts_each_prefix_once_in_key_order() {
        let s = |x: &str| Value::Bytes(x.as_bytes().to_vec());
        let keys = [
            key(&[Value::Int(1), s("a"), Value::Int(1)]),
            key(&[Value::Int(1), s("a"), Value::Int(2)]),
            key(&[Value::Int(1), s("ab"), Value::Int(1)]),
            key(&[Value::Int(2), s("a"), Value::Int(1)]),
            key(&[Value::Int(2), s("a"), Value::Int(1)]),
        ];
        let mut counter = PrefixCounter::new(3, 5);
        keys.iter().for_each(|k| counter.push(k));
        let stats = counter.finish();
        assert_eq!(stats.distinct, vec![2, 3, 4]);
        let all = std::ops::Bound::Unbounded;
        assert_eq!(stats.keys_between(all, all), Some(5.0));
        let from = std::ops::Bound::Included(keys[2].as_slice());
        assert_eq!(stats.keys_between(from, all), Some(3.0));
        let table = TableStats {
            rows: 5,
            indexes: vec![stats],
        };
        assert_eq!(table.rows_per_key(0, 1), Some(2.5));
        assert_eq!(table.rows_per_key(0, 0), None);
        assert!(table.fresh(20) && !table.fresh(40));
    }
}
