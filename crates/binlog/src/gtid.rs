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

    /// Each source's intervals (inclusive), sources in uuid order.
    pub fn intervals(&self) -> impl Iterator<Item = (&[u8; 16], &[(u64, u64)])> {
        self.sources.iter().map(|(u, iv)| (u, &iv[..]))
    }

    /// Adds every GTID of `other`.
    pub fn union(&mut self, other: &GtidSet) {
        for (uuid, iv) in &other.sources {
            for &(lo, hi) in iv {
                self.insert_range(*uuid, lo, hi);
            }
        }
    }

    /// Whether every GTID of `self` is in `other`.
    pub fn is_subset(&self, other: &GtidSet) -> bool {
        self.sources.iter().all(|(uuid, iv)| {
            let Some(theirs) = other.sources.get(uuid) else {
                return false;
            };
            // Each interval lies inside one of theirs (theirs are merged).
            iv.iter().all(|&(lo, hi)| {
                let i = theirs.partition_point(|&(l, _)| l <= lo);
                i > 0 && theirs[i - 1].1 >= hi
            })
        })
    }

    /// The GTIDs of `self` that are not in `other`.
    pub fn minus(&self, other: &GtidSet) -> GtidSet {
        let mut out = GtidSet::default();
        for (uuid, iv) in &self.sources {
            let theirs = other.sources.get(uuid).map_or(&[][..], |v| &v[..]);
            for &(lo, hi) in iv {
                let mut next = lo;
                for &(tl, th) in theirs.iter().filter(|&&(tl, th)| th >= lo && tl <= hi) {
                    if tl > next {
                        out.insert_range(*uuid, next, tl - 1);
                    }
                    next = next.max(th.saturating_add(1));
                }
                if next <= hi {
                    out.insert_range(*uuid, next, hi);
                }
            }
        }
        out
    }

    /// Parses MySQL's text form (`uuid:1-5:7,uuid2:3`; blanks and newlines
    /// allowed between entries, as gtid_executed prints them).
    pub fn parse(text: &str) -> Result<GtidSet, String> {
        let mut set = GtidSet::default();
        let bad = || format!("Malformed GTID set specification '{text}'.");
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let mut parts = entry.split(':');
            let uuid = parse_uuid(parts.next().unwrap_or("")).ok_or_else(bad)?;
            for range in parts {
                let (lo, hi) = match range.split_once('-') {
                    Some((lo, hi)) => (lo.trim().parse(), hi.trim().parse()),
                    None => (range.trim().parse(), range.trim().parse()),
                };
                let (Ok(lo), Ok(hi)) = (lo, hi) else {
                    return Err(bad());
                };
                if lo == 0 || lo > hi {
                    return Err(bad());
                }
                set.insert_range(uuid, lo, hi);
            }
        }
        Ok(set)
    }
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (dashes optional) to 16 bytes.
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = text.trim().bytes().filter(|&b| b != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
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
        let text = s.to_string();
        assert_eq!(GtidSet::parse(&text).unwrap(), s, "{text}");
        let iv = &s.sources[&A];
        assert!(
            iv.windows(2).all(|w| w[0].1 + 1 < w[1].0),
            "disjoint, not adjacent"
        );
    }

    #[test]
    fn minus_and_subset_match_a_model() {
        let mut x: u64 = 99;
        let mut rnd = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..200 {
            let (mut a, mut b) = (GtidSet::default(), GtidSet::default());
            for _ in 0..rnd(6) {
                let lo = 1 + rnd(60);
                a.insert_range(A, lo, lo + rnd(8));
            }
            for _ in 0..rnd(6) {
                let lo = 1 + rnd(60);
                b.insert_range(A, lo, lo + rnd(8));
            }
            let d = a.minus(&b);
            for n in 1..80 {
                let want = a.contains(g(A, n)) && !b.contains(g(A, n));
                assert_eq!(d.contains(g(A, n)), want, "{a} - {b} at {n}");
            }
            let sub = (1..80).all(|n| !a.contains(g(A, n)) || b.contains(g(A, n)));
            assert_eq!(a.is_subset(&b), sub);
            assert_eq!(d.is_empty(), sub);
            let mut u = b.clone();
            u.union(&a);
            assert!(a.is_subset(&u) && b.is_subset(&u));
        }
        assert!(GtidSet::parse("nonsense:1").is_err());
        assert!(GtidSet::parse("").unwrap().is_empty());
    }
}
