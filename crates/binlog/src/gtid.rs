//! GTID sets: which transactions (source server uuid, sequence number) a
//! node has executed, as intervals per source. The text form is MySQL's
//! `uuid:1-5:7,uuid2:1-3` (gtid_executed).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// One transaction's global id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gtid {
    pub server_uuid: [u8; 16],
    pub gno: u64,
}

impl fmt::Display for Gtid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", crate::format_uuid(&self.server_uuid), self.gno)
    }
}

/// Executed GTIDs: per source, sorted, disjoint, non-adjacent inclusive
/// intervals (adjacent ones are merged on insert).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GtidSet {
    sources: BTreeMap<[u8; 16], Vec<(u64, u64)>>,
}

impl GtidSet {
    pub fn contains(&self, g: Gtid) -> bool {
        let Some(iv) = self.sources.get(&g.server_uuid) else {
            return false;
        };
        // The last interval starting at or before gno.
        let i = iv.partition_point(|&(lo, _)| lo <= g.gno);
        i > 0 && iv[i - 1].1 >= g.gno
    }

    /// Adds one GTID; returns false if it was already there.
    pub fn insert(&mut self, g: Gtid) -> bool {
        debug_assert!(g.gno > 0, "GTID numbers start at 1");
        self.insert_range(g.server_uuid, g.gno, g.gno)
    }

    /// Adds `lo..=hi` of one source; returns false if all of it was there.
    pub fn insert_range(&mut self, uuid: [u8; 16], lo: u64, hi: u64) -> bool {
        debug_assert!(lo <= hi);
        let iv = self.sources.entry(uuid).or_default();
        // Intervals that overlap or touch [lo, hi] merge into one.
        let first = iv.partition_point(|&(_, h)| h.saturating_add(1) < lo);
        let last = iv.partition_point(|&(l, _)| l <= hi.saturating_add(1));
        if first < last && iv[first].0 <= lo && iv[first].1 >= hi {
            return false;
        }
        let merged = if first < last {
            (iv[first].0.min(lo), iv[last - 1].1.max(hi))
        } else {
            (lo, hi)
        };
        iv.splice(first..last, [merged]);
        true
    }

    /// The highest number of `uuid` in the set (0: none).
    pub fn last_gno(&self, uuid: &[u8; 16]) -> u64 {
        self.sources
            .get(uuid)
            .and_then(|iv| iv.last())
            .map_or(0, |&(_, hi)| hi)
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

impl fmt::Display for GtidSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, (uuid, iv)) in self.sources.iter().enumerate() {
            if n > 0 {
                f.write_str(",")?;
            }
            f.write_str(&crate::format_uuid(uuid))?;
            for &(lo, hi) in iv {
                if lo == hi {
                    write!(f, ":{lo}")?;
                } else {
                    write!(f, ":{lo}-{hi}")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 16] = [0xaa; 16];
    const B: [u8; 16] = [0xbb; 16];

    fn g(server_uuid: [u8; 16], gno: u64) -> Gtid {
        Gtid { server_uuid, gno }
    }

    #[test]
    fn inserts_merge_into_intervals() {
        let mut s = GtidSet::default();
        for n in [1, 2, 3, 7, 5, 9, 8] {
            assert!(s.insert(g(A, n)));
        }
        assert!(!s.insert(g(A, 2)), "already there");
        let a = crate::format_uuid(&A);
        assert_eq!(s.to_string(), format!("{a}:1-3:5:7-9"));
        assert!(s.insert(g(A, 4)));
        assert!(s.insert(g(A, 6)));
        assert_eq!(s.to_string(), format!("{a}:1-9"));
        assert!(s.insert(g(B, 3)));
        assert_eq!(
            s.to_string(),
            format!("{a}:1-9,{}:3", crate::format_uuid(&B))
        );
        assert_eq!(s.last_gno(&A), 9);
        assert_eq!(s.last_gno(&[0; 16]), 0);
    }

    #[test]
    fn contains_matches_a_model() {
        let mut s = GtidSet::default();
        let mut model = std::collections::BTreeSet::new();
        // A fixed pseudo-random order of inserts, ranges included.
        let mut x: u64 = 12345;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lo = 1 + (x >> 33) % 500;
            let hi = lo + (x >> 20) % 4;
            let fresh = (lo..=hi).any(|n| !model.contains(&n));
            assert_eq!(s.insert_range(A, lo, hi), fresh);
            model.extend(lo..=hi);
            for probe in [lo.saturating_sub(1), lo, hi, hi + 1] {
                assert_eq!(s.contains(g(A, probe)), model.contains(&probe), "{probe}");
            }
        }
        let iv = &s.sources[&A];
        assert!(
            iv.windows(2).all(|w| w[0].1 + 1 < w[1].0),
            "disjoint, not adjacent"
        );
    }
}
