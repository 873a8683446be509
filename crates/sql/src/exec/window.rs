//! The window stage of a SELECT: after WHERE, GROUP BY and HAVING, before
//! the projection, ORDER BY and LIMIT. Rows stay in their order (an index
//! order the final ORDER BY relies on survives); each distinct (PARTITION
//! BY, ORDER BY) pair sorts a permutation of them once, and every function
//! over that window writes its value into its slot of each row.
//!
//! Frames that grow row by row (MySQL's default, and anything from
//! UNBOUNDED PRECEDING) or shrink (to UNBOUNDED FOLLOWING) fold each row
//! into an aggregate once; bounded frames fold theirs per row.

use super::filesort::FileSort;
use super::{row_bytes, AggInput, AggState, Exec, Result, SortKey};
use crate::expr::BExpr;
use crate::plan::bind::window::{
    check_count, check_offset, Bound, WinKind, WindowFunc, WindowPlan, WindowSort,
};
use crate::plan::{AggCall, AggFunc};
use lockstep_types::Value;
use std::cmp::Ordering;

/// One partition, in window order.
struct Partition<'p> {
    /// Row numbers of its rows.
    rows: &'p [usize],
    /// Per position: where its peers (rows equal on ORDER BY) start, and
    /// one past where they end.
    peer_start: Vec<usize>,
    peer_end: Vec<usize>,
    /// Per position, its row's sort keys (PARTITION BY values, then
    /// ORDER BY values).
    keys: &'p [Vec<Value>],
    /// Where the ORDER BY values start in a key.
    order_at: usize,
    /// The first ORDER BY key sorts descending.
    desc: bool,
}

impl<'p> Partition<'p> {
    fn new(rows: &'p [usize], keys: &'p [Vec<Value>], sort: &WindowSort) -> Self {
        let order_at = sort.partition.len();
        let n = rows.len();
        let mut peer_start = vec![0; n];
        for i in 1..n {
            let same = equal(&keys[i - 1][order_at..], &keys[i][order_at..]);
            peer_start[i] = if same { peer_start[i - 1] } else { i };
        }
        let mut peer_end = vec![n; n];
        for i in (0..n.saturating_sub(1)).rev() {
            peer_end[i] = match peer_start[i + 1] == peer_start[i] {
                true => peer_end[i + 1],
                false => i + 1,
            };
        }
        Partition {
            rows,
            peer_start,
            peer_end,
            keys,
            order_at,
            desc: sort.order.first().is_some_and(|(_, d)| *d),
        }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    /// The first ORDER BY value of position `p`.
    fn key(&self, p: usize) -> &Value {
        &self.keys[p][self.order_at]
    }

    /// `key(p)` against `t` in the sort's direction.
    fn cmp_key(&self, p: usize, t: &Value) -> Ordering {
        let o = self.key(p).sort_cmp(t);
        if self.desc {
            o.reverse()
        } else {
            o
        }
    }
}

fn equal(a: &[Value], b: &[Value]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| x.sort_cmp(y) == Ordering::Equal)
}

impl Exec<'_> {
    /// The rows HAVING keeps, each with every window function's value in
    /// its slot.
    pub(super) fn windows(
        &mut self,
        w: &WindowPlan,
        rows: Vec<Vec<Value>>,
        having: &Option<BExpr>,
    ) -> Result<Vec<Vec<Value>>> {
        let mut kept = Vec::with_capacity(rows.len());
        for mut row in rows {
            if !self.truth(having, &row)? {
                continue;
            }
            if row.len() < w.width {
                self.charge((w.width - row.len()) * std::mem::size_of::<Value>())?;
                row.resize(w.width, Value::Null);
            }
            kept.push(row);
        }
        for (si, sort) in w.sorts.iter().enumerate() {
            let funcs: Vec<&WindowFunc> = w.funcs.iter().filter(|f| f.sort == si).collect();
            self.window_sort(sort, &funcs, &mut kept)?;
        }
        Ok(kept)
    }

    /// Sorts the rows once for `sort` (a file sort: past sort_buffer_size
    /// its runs spill to disk) and computes `funcs` partition by
    /// partition, holding one partition's keys at a time.
    fn window_sort(
        &mut self,
        sort: &WindowSort,
        funcs: &[&WindowFunc],
        rows: &mut [Vec<Value>],
    ) -> Result<()> {
        let np = sort.partition.len();
        let nk = np + sort.order.len();
        // Each sorted row is its keys followed by its row number.
        let keys = (0..nk)
            .map(|i| {
                let at = SortKey::Projected {
                    item: i,
                    folded: false,
                };
                (at, i >= np && sort.order[i - np].1)
            })
            .collect();
        let limit = self.ctx.memory.sort;
        let mut file = FileSort::new(keys, nk + 1, limit, None, self.spill_to());
        for (j, r) in rows.iter().enumerate() {
            let mut k = Vec::with_capacity(nk + 1);
            for e in sort
                .partition
                .iter()
                .chain(sort.order.iter().map(|(e, _)| e))
            {
                k.push(self.eval(e, r)?);
            }
            k.push(Value::UInt(j as u64));
            let bytes = row_bytes(&k);
            file.push((k, Vec::new()), bytes)?;
        }
        let mut sorted = file.finish()?;
        let (mut keys, mut order) = (Vec::new(), Vec::new());
        let mut bytes = 0;
        loop {
            let next = sorted.next()?;
            let ends = match &next {
                None => true,
                Some((k, _)) => keys
                    .first()
                    .is_some_and(|f: &Vec<Value>| !equal(&f[..np], &k[..np])),
            };
            if ends && !keys.is_empty() {
                self.window_partition(sort, funcs, rows, (&order, &keys))?;
                self.memory.statement = self.memory.statement.saturating_sub(bytes);
                (bytes, keys, order) = (0, Vec::new(), Vec::new());
            }
            let Some((mut k, _)) = next else {
                return Ok(());
            };
            let j = k.pop().and_then(|j| j.to_i64()).unwrap_or(0) as usize;
            debug_assert!(j < rows.len(), "a row number of this sort");
            // One partition's keys are held at a time.
            self.charge(row_bytes(&k) + std::mem::size_of::<usize>())?;
            bytes += row_bytes(&k) + std::mem::size_of::<usize>();
            keys.push(k);
            order.push(j);
        }
    }

    /// Computes `funcs` over one partition: its row numbers in window
    /// order and their keys.
    fn window_partition(
        &mut self,
        sort: &WindowSort,
        funcs: &[&WindowFunc],
        rows: &mut [Vec<Value>],
        (order, keys): (&[usize], &[Vec<Value>]),
    ) -> Result<()> {
        self.ctx
            .interrupt
            .check()
            .map_err(super::EngineError::Sql)?;
        let part = Partition::new(order, keys, sort);
        for f in funcs {
            let values = self.window_values(f, &part, rows)?;
            debug_assert_eq!(values.len(), part.len());
            for (&j, v) in part.rows.iter().zip(values) {
                rows[j][f.slot] = v;
            }
        }
        Ok(())
    }

    /// One function's value for each position of a partition.
    fn window_values(
        &mut self,
        f: &WindowFunc,
        part: &Partition,
        rows: &[Vec<Value>],
    ) -> Result<Vec<Value>> {
        let n = part.len();
        let uint = |x: usize| Value::UInt(x as u64);
        Ok(match &f.kind {
            WinKind::RowNumber => (1..=n).map(uint).collect(),
            WinKind::Rank => part.peer_start.iter().map(|&s| uint(s + 1)).collect(),
            WinKind::DenseRank => {
                let mut rank = 0;
                (0..n)
                    .map(|i| {
                        rank += usize::from(part.peer_start[i] == i);
                        uint(rank)
                    })
                    .collect()
            }
            WinKind::PercentRank => part
                .peer_start
                .iter()
                .map(|&s| {
                    Value::Double(if n > 1 {
                        s as f64 / (n - 1) as f64
                    } else {
                        0.0
                    })
                })
                .collect(),
            WinKind::CumeDist => part
                .peer_end
                .iter()
                .map(|&e| Value::Double(e as f64 / n as f64))
                .collect(),
            WinKind::Ntile => {
                let buckets = self.count_arg(f, 1)? as usize;
                (0..n).map(|i| uint(ntile(i, n, buckets) + 1)).collect()
            }
            WinKind::Lag | WinKind::Lead => self.lag_lead(f, part, rows)?,
            _ => self.framed(f, part, rows)?,
        })
    }

    /// NTILE's buckets, LAG/LEAD's offset or NTH_VALUE's n (1210 unless a
    /// count).
    fn count_arg(&mut self, f: &WindowFunc, default: u64) -> Result<u64> {
        match &f.n {
            None => Ok(default),
            Some(e) => {
                let v = self.eval(e, &[])?;
                Ok(check_count(&v, &f.name)?)
            }
        }
    }

    /// The argument's value at each position (1 for COUNT(*)), charged
    /// while held; returns them with their bytes.
    fn arg_values(
        &mut self,
        f: &WindowFunc,
        part: &Partition,
        rows: &[Vec<Value>],
    ) -> Result<(Vec<Value>, usize)> {
        let mut vals = Vec::with_capacity(part.len());
        let mut bytes = 0;
        for &j in part.rows {
            let v = match &f.arg {
                Some(e) => self.eval(e, &rows[j])?,
                None => Value::Int(1),
            };
            bytes += super::value_bytes(&v);
            vals.push(v);
        }
        self.charge(bytes)?;
        Ok((vals, bytes))
    }

    fn lag_lead(
        &mut self,
        f: &WindowFunc,
        part: &Partition,
        rows: &[Vec<Value>],
    ) -> Result<Vec<Value>> {
        let offset = self.count_arg(f, 1)?;
        let (vals, bytes) = self.arg_values(f, part, rows)?;
        let mut out = Vec::with_capacity(part.len());
        for (i, &j) in part.rows.iter().enumerate() {
            let at = match f.kind {
                WinKind::Lag => (i as u64).checked_sub(offset),
                _ => (i as u64).checked_add(offset),
            };
            out.push(match at.filter(|&a| a < part.len() as u64) {
                Some(a) => vals[a as usize].clone(),
                None => match &f.default {
                    Some(d) => self.eval(d, &rows[j])?,
                    None => Value::Null,
                },
            });
        }
        self.memory.statement = self.memory.statement.saturating_sub(bytes);
        Ok(out)
    }

    /// FIRST_VALUE, LAST_VALUE, NTH_VALUE and aggregates over each row's
    /// frame.
    fn framed(
        &mut self,
        f: &WindowFunc,
        part: &Partition,
        rows: &[Vec<Value>],
    ) -> Result<Vec<Value>> {
        let lo = self.bound_positions(f, &f.frame.start, true, part, rows)?;
        let hi = self.bound_positions(f, &f.frame.end, false, part, rows)?;
        let (vals, bytes) = self.arg_values(f, part, rows)?;
        let at = |p: Option<usize>| p.map_or(Value::Null, |p| vals[p].clone());
        let out = match &f.kind {
            WinKind::FirstValue => (0..part.len())
                .map(|i| at((lo[i] < hi[i]).then_some(lo[i])))
                .collect(),
            WinKind::LastValue => (0..part.len())
                .map(|i| at((lo[i] < hi[i]).then(|| hi[i] - 1)))
                .collect(),
            WinKind::NthValue => {
                let nth = self.count_arg(f, 1)? as usize;
                (0..part.len())
                    .map(|i| at(lo[i].checked_add(nth - 1).filter(|&p| p < hi[i])))
                    .collect()
            }
            WinKind::Agg(call) => {
                let growing = matches!(f.frame.start, Bound::UnboundedPreceding);
                let shrinking = matches!(f.frame.end, Bound::UnboundedFollowing);
                fold_frames(call, &vals, &lo, &hi, growing, shrinking)?
            }
            _ => unreachable!("window_values handles the rest"),
        };
        self.memory.statement = self.memory.statement.saturating_sub(bytes);
        Ok(out)
    }

    /// Per position, where its frame starts (`start`) or one past where it
    /// ends, clamped to the partition.
    fn bound_positions(
        &mut self,
        f: &WindowFunc,
        b: &Bound,
        start: bool,
        part: &Partition,
        rows: &[Vec<Value>],
    ) -> Result<Vec<usize>> {
        let n = part.len();
        let peers = |i: usize| {
            if start {
                part.peer_start[i]
            } else {
                part.peer_end[i]
            }
        };
        Ok(match b {
            Bound::UnboundedPreceding => vec![0; n],
            Bound::UnboundedFollowing => vec![n; n],
            Bound::CurrentRow if f.frame.rows => (0..n).map(|i| i + usize::from(!start)).collect(),
            Bound::CurrentRow => (0..n).map(peers).collect(),
            Bound::Rows { n: k, preceding } => {
                let k = match self.frame_offset(f, k)? {
                    Value::UInt(u) => usize::try_from(u).unwrap_or(usize::MAX),
                    v => super::row_count(&v),
                };
                let end = usize::from(!start);
                (0..n)
                    .map(|i| match preceding {
                        true => (i + end).saturating_sub(k),
                        false => i.saturating_add(k).saturating_add(end).min(n),
                    })
                    .collect()
            }
            Bound::Range { target, n: k } => {
                self.frame_offset(f, k)?;
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let t = self.eval(target, &rows[part.rows[i]])?;
                    out.push(match t.is_null() || part.key(i).is_null() {
                        true => peers(i),
                        false if start => {
                            partition_point(n, |p| part.cmp_key(p, &t) == Ordering::Less)
                        }
                        false => partition_point(n, |p| part.cmp_key(p, &t) != Ordering::Greater),
                    });
                }
                out
            }
        })
    }

    /// A frame offset's value (3586 unless non-negative, and whole for ROWS).
    fn frame_offset(&mut self, f: &WindowFunc, k: &BExpr) -> Result<Value> {
        let v = self.eval(k, &[])?;
        check_offset(&v, f.frame.rows, &f.window)?;
        Ok(v)
    }
}

/// The first position in 0..n where `below` is false (it is true for a
/// prefix).
fn partition_point(n: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The bucket (from 0) of position `i` of `n` rows in `buckets` buckets:
/// the first n % buckets buckets hold one row more.
fn ntile(i: usize, n: usize, buckets: usize) -> usize {
    let small = n / buckets;
    let extras = n % buckets;
    let big = small + 1;
    if i < extras * big {
        i / big
    } else {
        extras + (i - extras * big) / small.max(1)
    }
}

/// An aggregate over the frame [lo[i], hi[i]) of each position. Frame
/// starts and ends never move back as positions advance. A frame from the
/// partition's start grows and one to its end shrinks: each row is folded
/// in once. Other frames slide: rows leave as they enter where the
/// aggregate can take a row out again (MySQL's inverse aggregation), MIN
/// and MAX keep the candidates for the frame's extreme in a queue, and
/// BIT_AND / BIT_OR fold each distinct frame afresh.
fn fold_frames(
    call: &AggCall,
    vals: &[Value],
    lo: &[usize],
    hi: &[usize],
    growing: bool,
    shrinking: bool,
) -> Result<Vec<Value>> {
    let frames = Frames { call, vals, lo, hi };
    if growing {
        frames.growing()
    } else if shrinking {
        frames.shrinking()
    } else if AggState::removable(call) {
        frames.sliding()
    } else if matches!(call.func, AggFunc::Min | AggFunc::Max) {
        Ok(frames.extremes())
    } else {
        frames.each()
    }
}

/// One aggregate's input over a partition, and each position's frame.
struct Frames<'f> {
    call: &'f AggCall,
    vals: &'f [Value],
    lo: &'f [usize],
    hi: &'f [usize],
}

impl Frames<'_> {
    fn add(&self, state: &mut AggState, p: usize) -> Result<usize> {
        state.add(self.call, AggInput::One(self.vals[p].clone()))
    }

    fn growing(&self) -> Result<Vec<Value>> {
        let mut state = AggState::default();
        let mut added = 0;
        let mut out = Vec::with_capacity(self.vals.len());
        for &hi in self.hi {
            debug_assert!(hi >= added, "frame ends never move back");
            while added < hi {
                self.add(&mut state, added)?;
                added += 1;
            }
            out.push(state.current(self.call));
        }
        Ok(out)
    }

    fn shrinking(&self) -> Result<Vec<Value>> {
        let n = self.vals.len();
        let mut state = AggState::default();
        let mut out = vec![Value::Null; n];
        let mut from = n;
        for i in (0..n).rev() {
            while from > self.lo[i] {
                from -= 1;
                self.add(&mut state, from)?;
            }
            out[i] = state.current(self.call);
        }
        Ok(out)
    }

    /// The state holds [from, to); an empty frame is [lo, lo).
    fn sliding(&self) -> Result<Vec<Value>> {
        let mut state = AggState::default();
        let (mut from, mut to) = (0, 0);
        let mut out = Vec::with_capacity(self.vals.len());
        for (&lo, &hi) in self.lo.iter().zip(self.hi) {
            let end = hi.max(lo);
            debug_assert!(lo >= from && end >= to, "frames never move back");
            while to < end {
                self.add(&mut state, to)?;
                to += 1;
            }
            while from < lo {
                state.remove(self.call, &self.vals[from])?;
                from += 1;
            }
            out.push(state.current(self.call));
        }
        Ok(out)
    }

    /// MIN/MAX: a queue of positions whose values could still be the
    /// frame's extreme, best first (the earliest of equals, as a fold keeps
    /// the first it meets); NULLs never enter.
    fn extremes(&self) -> Vec<Value> {
        let beats = match self.call.func {
            AggFunc::Min => Ordering::Less,
            _ => Ordering::Greater,
        };
        let mut queue = std::collections::VecDeque::new();
        let mut to = 0;
        let mut out = Vec::with_capacity(self.vals.len());
        for (&lo, &hi) in self.lo.iter().zip(self.hi) {
            while to < hi.max(lo) {
                let v = &self.vals[to];
                if !v.is_null() {
                    while queue
                        .back()
                        .is_some_and(|&b: &usize| v.sort_cmp(&self.vals[b]) == beats)
                    {
                        queue.pop_back();
                    }
                    queue.push_back(to);
                }
                to += 1;
            }
            while queue.front().is_some_and(|&f| f < lo) {
                queue.pop_front();
            }
            out.push(queue.front().map_or(Value::Null, |&f| self.vals[f].clone()));
        }
        out
    }

    /// Each distinct frame folded afresh (equal neighbours share it).
    fn each(&self) -> Result<Vec<Value>> {
        let mut out: Vec<Value> = Vec::with_capacity(self.vals.len());
        for (i, (&lo, &hi)) in self.lo.iter().zip(self.hi).enumerate() {
            if i > 0 && lo == self.lo[i - 1] && hi == self.hi[i - 1] {
                out.push(out[i - 1].clone());
                continue;
            }
            let mut state = AggState::default();
            for p in lo..hi.max(lo) {
                self.add(&mut state, p)?;
            }
            out.push(state.current(self.call));
        }
        Ok(out)
    }
}

impl AggState {
    /// Whether a row can be taken out of the state again.
    fn removable(call: &AggCall) -> bool {
        use crate::plan::AggFunc::*;
        matches!(
            call.func,
            CountStar | Count | Sum | Avg | BitXor | StdPop | StdSamp | VarPop | VarSamp
        )
    }

    /// Takes out a value `add` put in (only where `removable`).
    fn remove(&mut self, call: &AggCall, v: &Value) -> Result<()> {
        use crate::plan::AggFunc::*;
        if call.func != CountStar && v.is_null() {
            return Ok(());
        }
        debug_assert!(self.count > 0 && Self::removable(call));
        self.count -= 1;
        match call.func {
            Sum | Avg => {
                let int = match v {
                    Value::Int(i) => Some(*i as i128),
                    Value::UInt(u) => Some(*u as i128),
                    _ => None,
                };
                if let Some(t) = int.and_then(|i| self.int_sum?.checked_sub(i)) {
                    self.int_sum = Some(t);
                    return Ok(());
                }
                let x = super::sum_term(v);
                let s = self.sum.take().unwrap_or(Value::Int(0));
                let minus = crate::parser::BinaryOp::Minus;
                self.sum = Some(crate::expr::binary(minus, s, x).map_err(super::EngineError::Sql)?);
            }
            BitXor => self.bits = self.bits.map(|b| b ^ v.to_i64().unwrap_or(0) as u64),
            StdPop | StdSamp | VarPop | VarSamp => {
                // Welford's update run backwards.
                let x = v.to_f64().unwrap_or(0.0);
                if self.count == 0 {
                    (self.mean, self.m2) = (0.0, 0.0);
                } else {
                    let old = self.mean;
                    self.mean = (old * (self.count + 1) as f64 - x) / self.count as f64;
                    self.m2 -= (x - old) * (x - self.mean);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntile_spreads_the_remainder_over_the_first_buckets() {
        let b: Vec<usize> = (0..7).map(|i| ntile(i, 7, 3)).collect();
        assert_eq!(b, [0, 0, 0, 1, 1, 2, 2]);
        let b: Vec<usize> = (0..2).map(|i| ntile(i, 2, 5)).collect();
        assert_eq!(b, [0, 1]);
    }

    #[test]
    fn partition_point_finds_the_first_false() {
        assert_eq!(partition_point(5, |p| p < 3), 3);
        assert_eq!(partition_point(0, |_| true), 0);
    }
}
