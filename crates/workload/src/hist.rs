//! A fixed-size latency histogram with logarithmic buckets: values below 32
//! microseconds get one bucket each, above that every power of two is split
//! into 16 sub-buckets, so any percentile is within 1/16 (6.25%) of the true
//! value. 608 counters, no allocation per sample, mergeable.

const LINEAR: usize = 32;
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Covers values up to 2^40 microseconds (about 12 days).
const MAX_EXP: u32 = 40;
const BUCKETS: usize = LINEAR + (MAX_EXP as usize - 5 + 1) * SUB;

#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
    max: u64,
    sum: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            max: 0,
            sum: 0,
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < LINEAR as u64 {
        return v as usize;
    }
    let e = (63 - v.leading_zeros()).min(MAX_EXP);
    let sub = ((v >> (e - SUB_BITS)) as usize) & (SUB - 1);
    (LINEAR + (e as usize - 5) * SUB + sub).min(BUCKETS - 1)
}

/// Middle of a bucket's value range.
fn value_of(i: usize) -> u64 {
    if i < LINEAR {
        return i as u64;
    }
    let e = (i - LINEAR) / SUB + 5;
    let sub = ((i - LINEAR) % SUB) as u64;
    let width = 1u64 << (e as u32 - SUB_BITS);
    (SUB as u64 + sub) * width + width / 2
}

impl Histogram {
    /// Records one sample in microseconds.
    pub fn record(&mut self, micros: u64) {
        self.counts[bucket_of(micros)] += 1;
        self.total += 1;
        self.max = self.max.max(micros);
        self.sum += micros as u128;
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The value at quantile `q` (0..=1), in microseconds; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        if rank == self.total {
            return self.max;
        }
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_of(i).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_precise() {
        let mut last = 0;
        for v in (0..5_000_000u64).step_by(7) {
            let b = bucket_of(v);
            assert!(b >= last);
            last = b;
            let mid = value_of(b) as f64;
            assert!(
                (mid - v as f64).abs() <= (v as f64 / 16.0).max(1.0),
                "{v} -> {mid}"
            );
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 100);
        }
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 - 500_000.0).abs() < 500_000.0 * 0.07, "{p50}");
        let p99 = h.quantile(0.99) as f64;
        assert!((p99 - 990_000.0).abs() < 990_000.0 * 0.07, "{p99}");
        assert_eq!(h.quantile(1.0), 1_000_000);
        assert_eq!(h.max(), 1_000_000);
        let mut g = Histogram::default();
        g.record(5);
        g.merge(&h);
        assert_eq!(g.count(), 10_001);
        assert_eq!(Histogram::default().quantile(0.5), 0);
    }
}
