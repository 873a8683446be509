//! Index dives: how many keys a range of an index holds, for the planner.
//! MySQL asks InnoDB's B-tree, whose pages know their sizes; our indexes
//! are skip lists that keep no counts, so a dive walks at most `limit`
//! keys from the start of the range: a range that short is counted
//! exactly. A longer one is counted in the index's sampled keys (every
//! n-th key, kept with its statistics: `stats::IndexStats::samples`).
//! Without statistics, it is extrapolated across its middle from the
//! density of keys met walking `limit` in from each end, reading keys as
//! numbers (their bytes past the range's common prefix, big-endian): right
//! for evenly spread integers and dates, rough for text.

use crate::table::Table;
use std::ops::Bound;

/// Bytes of a key read as its position in the range.
const POSITION_BYTES: usize = 8;

impl Table {
    /// The keys of index `index` between `lower` and `upper` (encoded key
    /// prefixes, as scans take them): exact up to `2 * limit` keys,
    /// extrapolated beyond. None when the keys the walks met give no
    /// density to extrapolate with.
    pub fn dive(
        &self,
        index: usize,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        limit: usize,
    ) -> Option<f64> {
        debug_assert!(limit >= 2);
        let walk = |reverse: bool| -> Vec<Vec<u8>> {
            let mut keys = Vec::new();
            if index == 0 {
                let _ = self.scan::<()>(lower, upper, reverse, |k, _| {
                    keys.push(k.to_vec());
                    Ok(keys.len() < limit)
                });
                return keys;
            }
            let schema = self.schema();
            let Some(map) = schema.secondary.get(index - 1) else {
                return keys;
            };
            let range = map.range::<[u8], _>((lower, upper));
            match reverse {
                false => keys.extend(range.take(limit).map(|e| e.key().to_vec())),
                true => keys.extend(range.rev().take(limit).map(|e| e.key().to_vec())),
            }
            keys
        };
        let forward = walk(false);
        if forward.len() < limit {
            return Some(forward.len() as f64);
        }
        if let Some(rows) = self.sampled(index, lower, upper) {
            return Some(rows.max(forward.len() as f64));
        }
        let backward = walk(true);
        extrapolate(&forward, &backward)
    }

    /// The keys of a range by the index's samples in its statistics,
    /// scaled to the rows now.
    fn sampled(&self, index: usize, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Option<f64> {
        let stats = self.stats()?;
        let keys = stats.indexes.get(index)?.keys_between(lower, upper)?;
        let now = self.approximate_rows() as f64;
        Some(keys * now / stats.rows.max(1) as f64)
    }
}

/// Keys of a range from `limit` keys walked in from its start and (in
/// descending order) from its end.
fn extrapolate(forward: &[Vec<u8>], backward: &[Vec<u8>]) -> Option<f64> {
    let (first, reached) = (forward.first()?, forward.last()?);
    let (last, met) = (backward.first()?, backward.last()?);
    if met <= reached {
        // The walks overlap: every key was seen.
        let more = backward.iter().filter(|k| *k > reached).count();
        return Some((forward.len() + more) as f64);
    }
    let common = first.iter().zip(last).take_while(|(a, b)| a == b).count();
    let at = |k: &[u8]| position(k, common);
    let walked = (at(reached) - at(first)) + (at(last) - at(met));
    if walked <= 0.0 {
        return None;
    }
    let seen = (forward.len() + backward.len()) as f64;
    let density = (seen - 2.0) / walked;
    Some(seen + (at(met) - at(reached)).max(0.0) * density)
}

/// `key`'s bytes after `common`, as a number.
fn position(key: &[u8], common: usize) -> f64 {
    let mut bytes = [0u8; POSITION_BYTES];
    let tail = key.get(common..).unwrap_or(&[]);
    for (b, k) in bytes.iter_mut().zip(tail) {
        *b = *k;
    }
    u64::from_be_bytes(bytes) as f64
}

#[cfg(test)]
mod tests {
    use super::extrapolate;

    fn keys(range: impl Iterator<Item = u64>) -> Vec<Vec<u8>> {
        range.map(|n| n.to_be_bytes().to_vec()).collect()
    }

    #[test]
    fn overlapping_walks_count_exactly() {
        let f = keys(0..10);
        let b = keys((5..15).rev());
        assert_eq!(extrapolate(&f, &b), Some(15.0));
    }

    #[test]
    fn uniform_keys_extrapolate_to_their_count() {
        // Every 3rd number from 0 to 2997: 1000 keys.
        let f = keys((0..10).map(|i| i * 3));
        let b = keys((990..1000).rev().map(|i| i * 3));
        let n = extrapolate(&f, &b).expect("a density");
        assert!((n - 1000.0).abs() < 2.0, "{n}");
    }

    #[test]
    fn keys_alike_in_their_leading_bytes_give_no_density() {
        let f = vec![vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 1]; 4];
        let b = vec![vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 9]; 4];
        assert_eq!(extrapolate(&f, &b), None);
    }
}
