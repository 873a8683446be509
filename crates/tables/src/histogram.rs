//! Column histograms (ANALYZE TABLE ... UPDATE HISTOGRAM), as MySQL 8
//! builds them: the distribution of one column's values, for the
//! planner's estimate of what a condition on a column without an index
//! keeps. A column with at most as many distinct values as buckets gets a
//! singleton histogram (one bucket per value, exact frequencies); more
//! values an equi-height one (buckets of about equal row counts, each a
//! range with its count of distinct values). Frequencies are cumulative
//! fractions of all rows, NULLs included, so the last bucket ends at
//! 1 - `null_fraction`.
//!
//! Values are kept as stored in the column; they are ordered by their key
//! encoding (`Value::encode_key`), so a probe must first be converted to
//! the column's type. Text orders by bytes, not by the collation: the
//! estimates ignore case folding.

use lockstep_types::Value;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::sync::Arc;

/// MySQL's default and largest bucket counts.
pub const DEFAULT_BUCKETS: u32 = 100;
pub const MAX_BUCKETS: u32 = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Singleton,
    EquiHeight,
}

/// Values from `lower` to `upper` (equal in a singleton histogram).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub lower: Value,
    pub upper: Value,
    /// Fraction of all rows at or below `upper`.
    pub cumulative: f64,
    pub distinct: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub kind: Kind,
    pub buckets: Vec<Bucket>,
    pub null_fraction: f64,
    /// Fraction of the rows read to build it.
    pub sampling_rate: f64,
    pub buckets_specified: u32,
    /// When built, `YYYY-MM-DD hh:mm:ss.ffffff` (UTC).
    pub last_updated: String,
}

/// One column's histogram, by the column's name (as MySQL's dictionary
/// keys them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnHistogram {
    pub column: String,
    pub histogram: Histogram,
}

/// What a histogram is built from.
pub struct Sample {
    /// The non-NULL values read.
    pub values: Vec<Value>,
    /// NULLs among the rows read.
    pub nulls: u64,
    pub sampling_rate: f64,
}

fn key(v: &Value) -> Vec<u8> {
    let mut k = Vec::new();
    v.encode_key(&mut k);
    k
}

/// Distinct values in key order with their counts.
fn counted(values: Vec<Value>) -> Vec<(Value, u64)> {
    let mut keyed: Vec<(Vec<u8>, Value)> = values.into_iter().map(|v| (key(&v), v)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(Vec<u8>, Value, u64)> = Vec::new();
    for (k, v) in keyed {
        match out.last_mut() {
            Some(last) if last.0 == k => last.2 += 1,
            _ => out.push((k, v, 1)),
        }
    }
    out.into_iter().map(|(_, v, n)| (v, n)).collect()
}

impl Histogram {
    /// Builds a histogram of at most `buckets` buckets (1..=MAX_BUCKETS).
    pub fn build(sample: Sample, buckets: u32, now: String) -> Histogram {
        debug_assert!((1..=MAX_BUCKETS).contains(&buckets));
        let total = (sample.values.len() as u64 + sample.nulls).max(1) as f64;
        let values = counted(sample.values);
        let kind = match values.len() <= buckets as usize {
            true => Kind::Singleton,
            false => Kind::EquiHeight,
        };
        let out = match kind {
            Kind::Singleton => singletons(values, total),
            Kind::EquiHeight => equi_height(values, buckets as usize, total),
        };
        Histogram {
            kind,
            buckets: out,
            null_fraction: sample.nulls as f64 / total,
            sampling_rate: sample.sampling_rate,
            buckets_specified: buckets,
            last_updated: now,
        }
    }
}

fn singletons(values: Vec<(Value, u64)>, total: f64) -> Vec<Bucket> {
    let mut seen = 0u64;
    let one = |(v, n): (Value, u64)| {
        seen += n;
        Bucket {
            lower: v.clone(),
            upper: v,
            cumulative: seen as f64 / total,
            distinct: 1,
        }
    };
    values.into_iter().map(one).collect()
}

/// Fills buckets in value order, closing one when the next value would
/// take it past its share of the rows left; a value never spans buckets.
fn equi_height(values: Vec<(Value, u64)>, buckets: usize, total: f64) -> Vec<Bucket> {
    let mut left: u64 = values.iter().map(|(_, n)| n).sum();
    let mut out: Vec<Bucket> = Vec::with_capacity(buckets);
    let (mut seen, mut in_bucket, mut target) = (0u64, 0u64, 0u64);
    let mut iter = values.into_iter().peekable();
    while let Some((v, n)) = iter.next() {
        match out.last_mut() {
            Some(b) if in_bucket > 0 => {
                b.upper = v;
                b.distinct += 1;
            }
            _ => {
                target = left.div_ceil((buckets - out.len()).max(1) as u64);
                out.push(Bucket {
                    lower: v.clone(),
                    upper: v,
                    cumulative: 0.0,
                    distinct: 1,
                });
            }
        }
        (seen, in_bucket) = (seen + n, in_bucket + n);
        let b = out.last_mut().expect("a bucket was just filled");
        b.cumulative = seen as f64 / total;
        let next = iter.peek().map_or(0, |(_, n)| *n);
        let room = out.len() < buckets;
        if next > 0 && room && in_bucket + next > target {
            left -= in_bucket;
            in_bucket = 0;
        }
    }
    out
}

/// Where a probe falls against a value, by key.
fn cmp_key(v: &Value, probe: &[u8]) -> Ordering {
    key(v).as_slice().cmp(probe)
}

/// How far `probe` lies from `lower` to `upper`, for numbers; the middle
/// for anything else.
fn position(lower: &Value, upper: &Value, probe: &Value) -> f64 {
    let number = |v: &Value| match v {
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => v.to_f64(),
        _ => None,
    };
    match (number(lower), number(upper), number(probe)) {
        (Some(l), Some(u), Some(p)) if u > l => ((p - l) / (u - l)).clamp(0.0, 1.0),
        _ => 0.5,
    }
}

impl Histogram {
    fn before(&self, i: usize) -> f64 {
        i.checked_sub(1).map_or(0.0, |j| self.buckets[j].cumulative)
    }

    /// The first bucket whose upper end is not below the probe.
    fn find(&self, probe: &[u8]) -> usize {
        self.buckets
            .partition_point(|b| cmp_key(&b.upper, probe) == Ordering::Less)
    }

    /// Fraction of rows equal to `probe` (converted to the column's type).
    pub fn equal(&self, probe: &Value) -> f64 {
        let k = key(probe);
        let i = self.find(&k);
        let Some(b) = self.buckets.get(i) else {
            return 0.0;
        };
        if cmp_key(&b.lower, &k) == Ordering::Greater {
            return 0.0;
        }
        (b.cumulative - self.before(i)) / b.distinct.max(1) as f64
    }

    /// Fraction of rows below `probe` (or at it, when `inclusive`).
    pub fn below(&self, probe: &Value, inclusive: bool) -> f64 {
        let k = key(probe);
        let i = self.find(&k);
        let Some(b) = self.buckets.get(i) else {
            return self.before(i);
        };
        let (start, share) = (self.before(i), b.cumulative - self.before(i));
        if cmp_key(&b.lower, &k) == Ordering::Greater {
            return start;
        }
        let at = cmp_key(&b.upper, &k) == Ordering::Equal;
        let point = share / b.distinct.max(1) as f64;
        match (self.kind, at) {
            (Kind::Singleton, _) => start + if inclusive { share } else { 0.0 },
            (Kind::EquiHeight, true) => b.cumulative - if inclusive { 0.0 } else { point },
            (Kind::EquiHeight, false) => {
                let within = share * position(&b.lower, &b.upper, probe);
                start
                    + within
                    + if inclusive {
                        point.min(share - within)
                    } else {
                        0.0
                    }
            }
        }
    }

    /// Fraction of rows that are not NULL.
    pub fn non_null(&self) -> f64 {
        1.0 - self.null_fraction
    }
}

/// Bytes a read value is reckoned to hold while building, for the
/// sampling rate.
const VALUE_BYTES: usize = 48;

impl crate::Table {
    /// Reads column `column` of the newest row versions (deleted rows
    /// left out): every row, or an even sample when all of them would
    /// take more than `budget` bytes (MySQL's
    /// histogram_generation_max_mem_size).
    pub fn sample_column(&self, column: usize, budget: usize) -> Sample {
        let rows = self.approximate_rows().max(1);
        let rate = (budget as f64 / (rows * VALUE_BYTES) as f64).min(1.0);
        let (mut values, mut nulls, mut at) = (Vec::new(), 0u64, 0.0f64);
        let _ = self.scan::<()>(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            false,
            |_, record| {
                let Some(row) = record.latest().and_then(|v| v.row) else {
                    return Ok(true);
                };
                let before = at as u64;
                at += rate;
                if at as u64 == before {
                    return Ok(true);
                }
                match row.get(column) {
                    Value::Null => nulls += 1,
                    v => values.push(v),
                }
                Ok(values.len() * VALUE_BYTES <= budget.max(VALUE_BYTES))
            },
        );
        Sample {
            values,
            nulls,
            sampling_rate: rate,
        }
    }

    /// The table's histograms, when it has any.
    pub fn histograms(&self) -> Option<Arc<[ColumnHistogram]>> {
        self.histograms.read().clone()
    }

    /// Replaces the table's histograms (logged DDL, recovery).
    pub fn set_histograms(&self, all: Vec<ColumnHistogram>) {
        *self.histograms.write() = (!all.is_empty()).then(|| all.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(vals: &[i64], nulls: u64) -> Sample {
        Sample {
            values: vals.iter().map(|&v| Value::Int(v)).collect(),
            nulls,
            sampling_rate: 1.0,
        }
    }

    #[test]
    fn singleton_when_values_fit_the_buckets() {
        let h = Histogram::build(ints(&[3, 1, 1, 2, 1], 5), 100, String::new());
        assert_eq!(h.kind, Kind::Singleton);
        assert_eq!(h.buckets.len(), 3);
        assert!((h.null_fraction - 0.5).abs() < 1e-9);
        assert!((h.equal(&Value::Int(1)) - 0.3).abs() < 1e-9);
        assert_eq!(h.equal(&Value::Int(7)), 0.0);
        assert!((h.below(&Value::Int(2), false) - 0.3).abs() < 1e-9);
        assert!((h.below(&Value::Int(2), true) - 0.4).abs() < 1e-9);
        assert!((h.below(&Value::Int(9), false) - 0.5).abs() < 1e-9);
        assert_eq!(h.below(&Value::Int(0), true), 0.0);
    }

    #[test]
    fn equi_height_when_values_outnumber_buckets() {
        let vals: Vec<i64> = (0..1000).collect();
        let h = Histogram::build(ints(&vals, 0), 10, String::new());
        assert_eq!(h.kind, Kind::EquiHeight);
        assert_eq!(h.buckets.len(), 10);
        assert!(h.buckets.iter().all(|b| b.distinct == 100));
        assert!((h.buckets[9].cumulative - 1.0).abs() < 1e-9);
        assert!((h.below(&Value::Int(250), false) - 0.25).abs() < 0.01);
        assert!((h.equal(&Value::Int(250)) - 0.001).abs() < 1e-9);
        assert_eq!(h.equal(&Value::Int(5000)), 0.0);
    }

    #[test]
    fn a_frequent_value_keeps_to_one_bucket() {
        let mut vals = vec![5; 500];
        vals.extend(0..100);
        let h = Histogram::build(ints(&vals, 0), 4, String::new());
        assert!(h.buckets.len() <= 4);
        let holding: Vec<&Bucket> = h
            .buckets
            .iter()
            .filter(|b| cmp_key(&b.lower, &key(&Value::Int(5))) != Ordering::Greater)
            .filter(|b| cmp_key(&b.upper, &key(&Value::Int(5))) != Ordering::Less)
            .collect();
        assert_eq!(holding.len(), 1);
        let last = h.buckets.last().map(|b| b.cumulative);
        assert!((last.unwrap_or(0.0) - 1.0).abs() < 1e-9);
    }
}
