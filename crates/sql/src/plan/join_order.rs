//! Join order and access paths of a SELECT over several tables.
//!
//! The FROM clause is flattened into units: base and derived tables joined
//! by inner joins (comma or INNER JOIN, whose ON conditions then count as
//! WHERE conditions), and the inner side of each LEFT JOIN, kept whole
//! with its ON, after every table of its left operand. The order of units
//! is chosen by estimated cost: every order for up to `EXHAUSTIVE` units,
//! greedily beyond. Rows then follow that order in the combined row (the
//! binder lays tables out so), each condition is checked at the first
//! table where all its columns are read, and each table's key may take
//! values from the tables before it.

use crate::expr::{BExpr, Func};
use crate::parser::JoinKind;
use crate::plan::bind::{best_access, best_access_by, choose_accesses, conjoin, split_conjuncts};
use crate::plan::bind::{take_implied_with, Avail};
use crate::plan::equalities::propagate;
use crate::plan::hash_join::{self, access_reads_outside};
use crate::plan::selectivity::{estimate, Known};
use crate::plan::{Access, Source, TableScan};
use lockstep_tables::stats::TableStats;
use lockstep_types::DataType;
use std::sync::Arc;

/// Joins of more units than this keep the written order (bit sets).
pub const MAX_UNITS: usize = 64;
/// Up to this many units every order is costed; beyond, greedily.
const EXHAUSTIVE: usize = 6;

/// One thing the join order places.
pub struct Unit {
    pub source: Source,
    /// Its row positions, [start, end).
    pub start: usize,
    pub end: usize,
    pub outer: Option<OuterJoin>,
}

/// The inner side of a LEFT JOIN.
pub struct OuterJoin {
    /// Its ON conjuncts (after the equalities).
    pub on: Vec<BExpr>,
    /// Equalities the ON implies, for its access path only.
    pub derived: Vec<BExpr>,
    /// The units of its left operand, which come before it (a bit each).
    pub after: u64,
}

/// A flattened FROM with its conditions.
pub struct Joins {
    pub units: Vec<Unit>,
    /// WHERE and inner joins' ON conjuncts (after the equalities).
    pub conds: Vec<BExpr>,
    /// Equalities they imply, for access paths only.
    pub derived: Vec<BExpr>,
    /// Per unit: how it could be computed one key at a time (split.rs).
    splits: Vec<Option<Split>>,
}

/// A grouped derived table that can be computed for one key at a time,
/// the key a column of another unit (`plan/bind/split.rs`), with what
/// each way costs, in rows read.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    /// The other unit's column (row position) the key equals.
    pub partner: usize,
    /// Computing one key's group: the index lookup and its rows.
    pub per_key: f64,
    /// The groups of the whole table.
    pub groups: f64,
    /// Computing it whole: reading its table.
    pub whole: f64,
}

/// The row positions a source fills, [start, end).
pub(crate) fn span(src: &Source) -> (usize, usize) {
    match src {
        Source::Dual => (0, 0),
        Source::Table(t) => (t.offset, t.offset + t.def.columns.len()),
        Source::Derived { plan, offset, .. } => (*offset, offset + plan.columns.len()),
        Source::Join { left, right, .. } => (span(left).0, span(right).1),
    }
}

fn flatten(src: Source, units: &mut Vec<Unit>, conds: &mut Vec<BExpr>) {
    match src {
        Source::Join {
            left,
            right,
            kind: JoinKind::Left,
            on,
            ..
        } => {
            let first = units.len();
            flatten(*left, units, conds);
            let after = (first..units.len()).fold(0u64, |m, u| m | bit(u));
            let (start, end) = span(&right);
            units.push(Unit {
                source: *right,
                start,
                end,
                outer: Some(OuterJoin {
                    on: on.as_ref().map(split_conjuncts).unwrap_or_default(),
                    derived: Vec::new(),
                    after,
                }),
            });
        }
        Source::Join {
            left, right, on, ..
        } => {
            flatten(*left, units, conds);
            flatten(*right, units, conds);
            conds.extend(on.as_ref().map(split_conjuncts).unwrap_or_default());
        }
        other => {
            let (start, end) = span(&other);
            units.push(Unit {
                source: other,
                start,
                end,
                outer: None,
            });
        }
    }
}

/// A LEFT JOIN whose inner table the WHERE (or an inner join's ON, checked
/// after it) requires not NULL, as `b.x = 5` or `b.x IS NOT NULL` do, loses
/// its NULL rows anyway: it is an inner join, which the search may order
/// freely, and its ON joins the WHERE. Only for a single inner table; last
/// first, since a moved ON may in turn reject an earlier one's NULLs.
fn outer_to_inner(units: &mut [Unit], conds: &mut Vec<BExpr>) {
    for unit in units.iter_mut().rev() {
        if !matches!(unit.source, Source::Table(_)) {
            continue;
        }
        let (start, end) = (unit.start, unit.end);
        if unit.outer.is_some() && conds.iter().any(|c| rejects_null(c, start, end)) {
            if let Some(o) = unit.outer.take() {
                conds.extend(o.on);
            }
        }
    }
}

/// Whether `c` is never true when the columns [start, end) are NULL: a
/// comparison, range, list or pattern test of one of them.
fn rejects_null(c: &BExpr, start: usize, end: usize) -> bool {
    let is_col = |e: &BExpr| column_in(e, start, end).is_some();
    use crate::parser::BinaryOp::*;
    match c {
        BExpr::Binary(Eq | NotEq | Lt | LtEq | Gt | GtEq, l, r) => is_col(l) || is_col(r),
        BExpr::IsNull(x, true) => is_col(x),
        BExpr::Between {
            expr,
            negated: false,
            ..
        }
        | BExpr::InList {
            expr,
            negated: false,
            ..
        }
        | BExpr::Like {
            expr,
            negated: false,
            ..
        } => is_col(expr),
        _ => false,
    }
}

/// The column of [start, end) that `e` is, as read (folded for its
/// collation, or shifted into the session's time zone) or not.
fn column_in(e: &BExpr, start: usize, end: usize) -> Option<usize> {
    let e = match e {
        BExpr::Func(Func::FoldCase | Func::FromUtc, args) if args.len() == 1 => &args[0],
        e => e,
    };
    match e {
        BExpr::Column(i) if (start..end).contains(i) => Some(*i),
        _ => None,
    }
}

/// Whether the conditions every result row meets (`conds`) reject each
/// row of LEFT JOIN `unit` that found a match: one tests IS NULL a column
/// of it that a match never leaves NULL (declared NOT NULL, or compared
/// by the ON, which a NULL fails). A left row's first match then decides
/// that it is rejected: MySQL's "Not exists".
fn not_exists(unit: &Unit, conds: &[BExpr]) -> bool {
    let (Some(o), Source::Table(scan)) = (&unit.outer, &unit.source) else {
        return false;
    };
    let never_null = |i: usize| {
        let declared = scan
            .def
            .columns
            .get(i - unit.start)
            .is_some_and(|c| !c.nullable);
        let on = o.on.iter().chain(&o.derived);
        declared || on.clone().any(|c| rejects_null(c, i, i + 1))
    };
    conds.iter().any(|c| match c {
        BExpr::IsNull(x, false) => column_in(x, unit.start, unit.end).is_some_and(never_null),
        _ => false,
    })
}

fn bit(u: usize) -> u64 {
    1u64 << u
}

impl Joins {
    /// Flattens `source` (in the row layout `types` describes) and
    /// propagates equalities within the WHERE and within each LEFT JOIN's
    /// ON separately: ON conditions never move to the outer side, nor
    /// WHERE conditions into an ON.
    pub fn new(source: Source, filter: Option<BExpr>, types: &[(DataType, bool)]) -> Joins {
        let mut units = Vec::new();
        let mut conds = filter.as_ref().map(split_conjuncts).unwrap_or_default();
        flatten(source, &mut units, &mut conds);
        outer_to_inner(&mut units, &mut conds);
        for u in &mut units {
            if let Some(o) = &mut u.outer {
                let p = propagate(std::mem::take(&mut o.on), types);
                o.on = p.conjuncts;
                o.derived = p.derived;
            }
        }
        let p = propagate(conds, types);
        Joins {
            splits: units.iter().map(|_| None).collect(),
            units,
            conds: p.conjuncts,
            derived: p.derived,
        }
    }

    /// The ways to compute units one key at a time, for the search to
    /// weigh against computing them whole.
    pub fn offer_splits(&mut self, splits: impl IntoIterator<Item = (usize, Split)>) {
        for (u, split) in splits {
            if let Some(slot) = self.splits.get_mut(u) {
                *slot = Some(split);
            }
        }
    }

    /// Where row position `pos` goes when the units are laid out in
    /// `order`.
    pub fn moved(&self, order: &[usize]) -> impl Fn(usize) -> usize {
        let mut starts = Vec::new();
        let mut next = 0;
        for &u in order {
            let unit = &self.units[u];
            starts.push((unit.start, unit.end, next));
            next += unit.end - unit.start;
        }
        move |pos| {
            let at = starts.iter().find(|(s, e, _)| (*s..*e).contains(&pos));
            at.map_or(pos, |(s, _, n)| n + pos - s)
        }
    }

    /// New offsets of the tables (in the order they are written) when the
    /// units are laid out in `order`.
    pub fn placement(&self, order: &[usize]) -> Vec<usize> {
        let mut moves = Vec::new();
        let mut next = 0;
        for &u in order {
            let unit = &self.units[u];
            leaves(&unit.source, &mut |off| {
                moves.push((off, next + off - unit.start))
            });
            next += unit.end - unit.start;
        }
        moves.sort_unstable();
        moves.into_iter().map(|(_, new)| new).collect()
    }

    /// Puts the units in `order` (after the binder laid them out so).
    pub fn reorder(&mut self, order: &[usize]) {
        let mut slots: Vec<Option<Unit>> = self.units.drain(..).map(Some).collect();
        self.units = order.iter().filter_map(|&u| slots[u].take()).collect();
    }
}

/// How many tables (base or derived) `src` joins.
pub fn leaf_count(src: &Source) -> usize {
    let mut n = 0;
    leaves(src, &mut |_| n += 1);
    n
}

/// Calls `f` with the offset of every table in `src`.
fn leaves(src: &Source, f: &mut dyn FnMut(usize)) {
    match src {
        Source::Table(t) => f(t.offset),
        Source::Derived { offset, .. } => f(*offset),
        Source::Join { left, right, .. } => {
            leaves(left, f);
            leaves(right, f);
        }
        Source::Dual => {}
    }
}

/// The units a LATERAL derived table or JSON_TABLE reads, which must come
/// before it (a bit each).
fn lateral_after(src: &Source, units: &[Unit]) -> u64 {
    let Source::Derived {
        lateral: Some(l), ..
    } = src
    else {
        return 0;
    };
    let units = l.refs.iter().filter_map(|&c| unit_of(units, c));
    units.fold(0, |m, u| m | bit(u))
}

fn unit_of(units: &[Unit], col: usize) -> Option<usize> {
    units.iter().position(|u| col >= u.start && col < u.end)
}

/// The units a condition reads (a bit each), or None when it must stay in
/// the statement's filter: subqueries run there, and RAND() or SLEEP()
/// run once per result row.
fn refs(e: &BExpr, units: &[Unit]) -> Option<u64> {
    fn walk(e: &BExpr, units: &[Unit], mask: &mut u64, ok: &mut bool) {
        match e {
            BExpr::Column(i) => {
                if let Some(u) = unit_of(units, *i) {
                    *mask |= bit(u);
                }
            }
            BExpr::InSubquery { .. }
            | BExpr::Exists { .. }
            | BExpr::Subquery(_)
            | BExpr::Stored(..) => *ok = false,
            BExpr::Func(Func::Rand | Func::Sleep | Func::LastInsertId, _) => *ok = false,
            _ => {}
        }
        e.for_each_child(&mut |c| walk(c, units, mask, ok));
    }
    let (mut mask, mut ok) = (0, true);
    walk(e, units, &mut mask, &mut ok);
    ok.then_some(mask)
}

// ---------- cost ----------

/// Per row of the units before it: what reading a unit costs and how
/// many rows come out.
#[derive(Clone, Copy)]
struct Step {
    cost: f64,
    rows: f64,
    /// Paid once whatever the rows before it: a hash join's build.
    once: f64,
    /// Another way (cost, rows, once): a derived table computed by key
    /// (`Split`), an anti-join's table hashed once instead of looked up
    /// per row. The cheaper for the rows before it is taken.
    alt: Option<(f64, f64, f64)>,
}

impl Step {
    /// The way taken after `rows` rows, and whether it is the other.
    fn for_rows(self, rows: f64) -> (Step, bool) {
        match self.alt {
            Some((cost, out, once)) if once + rows * cost < self.once + rows * self.cost => (
                Step {
                    cost,
                    rows: out,
                    once,
                    alt: None,
                },
                true,
            ),
            _ => (self, false),
        }
    }
}

/// Rows an index lookup reads until its first match when each of the
/// `fetched` rows passes the remaining conditions with chance `pass`: a
/// semi- or anti-join stops there, and reads all when none passes.
fn first_match_reads(fetched: f64, pass: f64) -> f64 {
    if pass <= 0.0 || fetched <= 1.0 {
        return fetched.max(1.0);
    }
    ((1.0 - (1.0 - pass).powf(fetched)) / pass).clamp(1.0, fetched)
}

/// Rows an access path reads from a table of `n` rows: one for a whole
/// unique key; for a key prefix, the rows per value the index statistics
/// counted (a tenth per column without them); for a range with constant
/// bounds, what an index dive counts (`index_dive`), else a third of the
/// prefix's rows.
pub(crate) fn access_rows(
    scan: &TableScan,
    stats: Option<&TableStats>,
    access: &Access,
    n: f64,
    known: &Known,
) -> f64 {
    if access.is_full_scan() {
        return n;
    }
    let index = &scan.def.indexes[access.index];
    let many = access.ranges.len() > crate::plan::index_dive::MAX_RANGES;
    let mut total = 0.0;
    for r in &access.ranges {
        let ranged = r.lower.is_some() || r.upper.is_some();
        if ranged && !many {
            let dived = crate::plan::index_dive::dive_range(scan, access.index, r, known);
            if let crate::plan::index_dive::Dive::Rows(rows) = dived {
                total += rows.max(1.0);
                continue;
            }
        }
        let whole = r.eq.len() == index.columns.len() && index.unique;
        let counted = stats.and_then(|s| s.rows_per_key(access.index, r.eq.len()));
        let mut rows = match (whole, counted) {
            (true, _) => 1.0,
            // Scaled to the rows now: the counts may be a little old.
            (false, Some(per_key)) => per_key * n / stats.map_or(n, |s| s.rows.max(1) as f64),
            (false, None) if r.eq.is_empty() => n,
            (false, None) => n * 0.1f64.powi(r.eq.len() as i32),
        };
        if ranged {
            rows /= 3.0;
        }
        total += rows.max(1.0);
    }
    total.min(n)
}

/// Columns of the key an access path fixes (each condition it serves
/// filters no further).
fn key_parts(access: &Access) -> usize {
    access.ranges.first().map_or(0, |r| {
        r.eq.len() + usize::from(r.lower.is_some() || r.upper.is_some())
    })
}

/// What a derived table or a LEFT JOIN's inner join costs: unknown size,
/// and materialized again for every row before it.
const OPAQUE: Step = Step {
    cost: 1000.0,
    rows: 100.0,
    once: 0.0,
    alt: None,
};

/// A derived table that can be computed by key (`Split`): whole (once,
/// then its rows read for each row before it), and, once the unit its key
/// comes from is placed (`partner`), by key for each row before it, at
/// most one group per key.
fn split_step(split: &Split, partner: Option<usize>, placed: u64) -> Step {
    let keyed = partner.is_some_and(|p| placed & bit(p) != 0);
    Step {
        cost: 1.0 + split.groups,
        rows: if keyed { 1.0 } else { split.groups },
        once: split.whole,
        alt: keyed.then_some((split.per_key, 1.0, 0.0)),
    }
}

/// A hash join's build per row read, against a probe's 1: reading the
/// row and inserting it, and the memory it holds. Weighs the build
/// toward the smaller side.
const BUILD_WEIGHT: f64 = 3.0;

struct Search<'a> {
    joins: &'a Joins,
    known: &'a Known,
    /// Per unit: the conditions its key may use (built once).
    usable: Vec<Vec<BExpr>>,
    /// Per unit: the other units those conditions read; its estimate
    /// depends on which of these come before it, not on the rest.
    relevant: Vec<u64>,
    /// Per unit: its table's index statistics, read once per search.
    stats: Vec<Option<Arc<TableStats>>>,
    /// Per condition: the units it reads (None: never placed early).
    refs: Vec<Option<u64>>,
    /// Per condition: the fraction of rows it keeps (histograms read
    /// once per search).
    kept: Vec<f64>,
    /// Per unit: the units that must come before it.
    deps: Vec<u64>,
    /// Estimates by unit and relevant units before it, for the
    /// exhaustive search (index `u << n | mask`); the greedy one asks
    /// each question about once.
    memo: Vec<Option<Step>>,
    best: (f64, Vec<usize>),
}

impl Search<'_> {
    fn step(&mut self, u: usize, placed: u64) -> Step {
        let placed = placed & self.relevant[u];
        if self.memo.is_empty() {
            return self.estimate(u, placed);
        }
        let slot = (u << self.joins.units.len()) | placed as usize;
        if let Some(Some(s)) = self.memo.get(slot) {
            return *s;
        }
        let s = self.estimate(u, placed);
        if let Some(m) = self.memo.get_mut(slot) {
            *m = Some(s);
        }
        s
    }

    fn estimate(&self, u: usize, placed: u64) -> Step {
        let units = &self.joins.units;
        let unit = &units[u];
        if let Some(split) = &self.joins.splits[u] {
            return split_step(split, unit_of(units, split.partner), placed);
        }
        let Source::Table(scan) = &unit.source else {
            // A semi-join nest: before or after the tables it joins.
            let nest = crate::plan::semijoin_nest::step(&unit.source, placed != 0, self.known);
            return nest.map_or(OPAQUE, |(cost, rows, once)| Step {
                cost,
                rows,
                once,
                alt: None,
            });
        };
        let avail = |i: usize| unit_of(units, i).is_some_and(|x| placed & bit(x) != 0);
        let access = best_access_by(scan, &self.usable[u], &avail as Avail, self.known);
        let n = scan.table.approximate_rows().max(1) as f64;
        let fetched = access_rows(scan, self.stats[u].as_deref(), &access, n, self.known);
        let mut kept: Vec<f64> = match &unit.outer {
            Some(o) => {
                o.on.iter()
                    .map(|c| estimate(c, Some(scan), self.known))
                    .collect()
            }
            None => self.checks_at(u, placed),
        };
        // The key serves the most selective conditions (its equalities);
        // the others filter what it fetches.
        kept.sort_by(f64::total_cmp);
        let pass = kept.iter().skip(key_parts(&access)).product::<f64>();
        let mut rows = fetched * pass;
        if unit.outer.is_some() {
            rows = rows.max(1.0); // a LEFT JOIN keeps every outer row
        }
        let independent = !access_reads_outside(&access, unit.start, unit.end);
        if !independent && unit.outer.is_some() && not_exists(unit, &self.joins.conds) {
            return self.anti_step(u, scan, &access, (fetched, pass, rows), placed);
        }
        if independent && self.equi_joined(u, placed) {
            // Read once into a hash table; each row before it looks up.
            return Step {
                cost: 1.0 + rows,
                rows,
                once: BUILD_WEIGHT * (1.0 + fetched),
                alt: None,
            };
        }
        Step {
            cost: 1.0 + fetched,
            rows,
            once: 0.0,
            alt: None,
        }
    }

    /// An anti-join's table looked up by the rows before it: each lookup
    /// stops at its first match (`first_match_reads`), its rows fetched
    /// through a secondary index cost more than scanned ones; the other
    /// way reads it once into a hash table, keeping only the rows its own
    /// conditions pass (`hashed_anti`).
    fn anti_step(
        &self,
        u: usize,
        scan: &TableScan,
        access: &Access,
        (fetched, pass, rows): (f64, f64, f64),
        placed: u64,
    ) -> Step {
        let row_cost = match access.index {
            0 => 1.0,
            _ => crate::plan::index_dive::SECONDARY_ROW_COST,
        };
        let read = first_match_reads(fetched, pass);
        let alt = match self.equi_joined(u, placed) {
            true => self.hashed_anti(u, scan).map(|once| (2.0, rows, once)),
            false => None,
        };
        Step {
            cost: 1.0 + read * row_cost,
            rows,
            once: 0.0,
            alt,
        }
    }

    /// What reading anti-join unit `u` once into a hash table costs: its
    /// access by its own ON conditions, each row read, and those kept
    /// inserted.
    fn hashed_anti(&self, u: usize, scan: &TableScan) -> Option<f64> {
        let units = &self.joins.units;
        let own: Vec<BExpr> = self.usable[u]
            .iter()
            .filter(|c| refs(c, units) == Some(bit(u)))
            .cloned()
            .collect();
        let access = best_access_by(scan, &own, &|_| false, self.known);
        let n = scan.table.approximate_rows().max(1) as f64;
        let fetched = access_rows(scan, self.stats[u].as_deref(), &access, n, self.known);
        let mut kept: Vec<f64> = own
            .iter()
            .map(|c| estimate(c, Some(scan), self.known))
            .collect();
        kept.sort_by(f64::total_cmp);
        let pass = kept.iter().skip(key_parts(&access)).product::<f64>();
        Some(fetched + BUILD_WEIGHT * (1.0 + fetched * pass))
    }

    /// Whether unit `u` has an equality with the units `placed` that a
    /// hash join could key on (one side reads only `u`, the other only
    /// placed units).
    fn equi_joined(&self, u: usize, placed: u64) -> bool {
        let units = &self.joins.units;
        let conds = match &units[u].outer {
            Some(o) => &o.on,
            None => &self.joins.conds,
        };
        let before = |m: Option<u64>| m.is_some_and(|m| m != 0 && m & !placed == 0);
        conds.iter().any(|c| {
            let BExpr::Binary(crate::parser::BinaryOp::Eq, a, b) = c else {
                return false;
            };
            let (ra, rb) = (refs(a, units), refs(b, units));
            (ra == Some(bit(u)) && before(rb)) || (rb == Some(bit(u)) && before(ra))
        })
    }

    /// The selectivities of the conditions first checkable when unit `u`
    /// joins the units `placed`.
    fn checks_at(&self, u: usize, placed: u64) -> Vec<f64> {
        let with = placed | bit(u);
        let conds = self.kept.iter().zip(&self.refs);
        conds
            .filter(|(_, m)| m.is_some_and(|m| m & bit(u) != 0 && m & !with == 0))
            .map(|(k, _)| *k)
            .collect()
    }

    fn legal(&self, u: usize, placed: u64) -> bool {
        placed & bit(u) == 0 && self.deps[u] & !placed == 0
    }

    /// The cost of `order`, and the units it computes by key.
    fn cost_of(&mut self, order: &[usize]) -> (f64, Vec<usize>) {
        let (mut placed, mut rows, mut cost) = (0u64, 1.0, 0.0);
        let mut split = Vec::new();
        for &u in order {
            let (s, by_key) = self.step(u, placed).for_rows(rows);
            if by_key {
                split.push(u);
            }
            cost += s.once + rows * s.cost;
            rows *= s.rows;
            placed |= bit(u);
        }
        (cost, split)
    }

    /// Every order, cut short where its cost already reaches the best's.
    fn exhaustive(&mut self, placed: u64, rows: f64, cost: f64, order: &mut Vec<usize>) {
        if cost >= self.best.0 * (1.0 - 1e-9) {
            return;
        }
        let n = self.joins.units.len();
        if order.len() == n {
            self.best = (cost, order.clone());
            return;
        }
        for u in 0..n {
            if !self.legal(u, placed) {
                continue;
            }
            let (s, _) = self.step(u, placed).for_rows(rows);
            order.push(u);
            let cost = cost + s.once + rows * s.cost;
            self.exhaustive(placed | bit(u), rows * s.rows, cost, order);
            order.pop();
        }
    }

    /// The cheapest next unit at each step.
    fn greedy(&mut self) -> Vec<usize> {
        let n = self.joins.units.len();
        let (mut placed, mut rows, mut order) = (0u64, 1.0, Vec::new());
        while order.len() < n {
            let mut pick: Option<(f64, f64, usize)> = None;
            for u in 0..n {
                if !self.legal(u, placed) {
                    continue;
                }
                let (s, _) = self.step(u, placed).for_rows(rows);
                let key = (s.once + rows * s.cost, rows * s.rows);
                if pick.is_none_or(|(c, r, _)| key.0 < c || (key.0 == c && key.1 < r)) {
                    pick = Some((key.0, key.1, u));
                }
            }
            let Some((_, r, u)) = pick else {
                break; // unreachable: the written order is always legal
            };
            order.push(u);
            placed |= bit(u);
            rows = r;
        }
        order
    }
}

impl Joins {
    /// The cheapest order of the units, as indexes into `units` (the
    /// written order unless another costs less, or always when `written`:
    /// STRAIGHT_JOIN), and the units it computes one key at a time.
    pub fn best_order(&self, known: &Known, written: bool) -> (Vec<usize>, Vec<usize>) {
        let n = self.units.len();
        let identity: Vec<usize> = (0..n).collect();
        let deps = self
            .units
            .iter()
            .enumerate()
            .map(|(u, unit)| {
                let lateral = lateral_after(&unit.source, &self.units);
                let Some(o) = &unit.outer else {
                    return lateral & !bit(u);
                };
                let on = o.on.iter().filter_map(|c| refs(c, &self.units));
                (o.after | lateral | on.fold(0, |m, r| m | r)) & !bit(u)
            })
            .collect();
        let inner = [&self.conds[..], &self.derived[..]].concat();
        let usable: Vec<Vec<BExpr>> = self
            .units
            .iter()
            .map(|unit| match (&unit.outer, &unit.source) {
                (Some(o), Source::Table(_)) => [&o.on[..], &o.derived[..]].concat(),
                (None, Source::Table(_)) => inner.clone(),
                _ => Vec::new(),
            })
            .collect();
        let relevant = usable
            .iter()
            .enumerate()
            .map(|(u, conds)| {
                // A nest's estimate depends on whether its partners came
                // first: the units its join conditions read.
                let nest = matches!(&self.units[u].source, Source::Derived { plan, .. }
                    if crate::plan::semijoin_nest::nest_name(plan).is_some());
                let conds = if nest { &self.conds } else { conds };
                let reads = conds.iter().map(|c| refs(c, &self.units).unwrap_or(0));
                let reads = reads.filter(|r| !nest || r & bit(u) != 0);
                // A split's estimate depends on whether its key's unit came.
                let split = self.splits[u].and_then(|s| unit_of(&self.units, s.partner));
                let split = split.map_or(0, bit);
                (reads.fold(0, |m, r| m | r) | split) & !bit(u)
            })
            .collect();
        let mut s = Search {
            joins: self,
            known,
            usable,
            relevant,
            stats: self
                .units
                .iter()
                .map(|unit| match &unit.source {
                    Source::Table(scan) => scan.table.stats(),
                    _ => None,
                })
                .collect(),
            refs: self.conds.iter().map(|c| refs(c, &self.units)).collect(),
            kept: self.conds.iter().map(|c| self.kept(c, known)).collect(),
            deps,
            memo: match n <= EXHAUSTIVE {
                true => vec![None; n << n],
                false => Vec::new(),
            },
            best: (f64::INFINITY, identity.clone()),
        };
        let (cost, split) = s.cost_of(&identity);
        if written {
            return (identity, split);
        }
        let written = cost;
        s.best = (written, identity);
        if n <= EXHAUSTIVE {
            s.exhaustive(0, 1.0, 0.0, &mut Vec::new());
        } else {
            let order = s.greedy();
            let (cost, _) = s.cost_of(&order);
            if order.len() == n && cost < written * (1.0 - 1e-9) {
                s.best = (cost, order);
            }
        }
        let order = std::mem::take(&mut s.best.1);
        let (_, split) = s.cost_of(&order);
        (order, split)
    }

    /// The fraction of rows condition `c` keeps: from the histograms of
    /// its table when it reads one base table.
    fn kept(&self, c: &BExpr, known: &Known) -> f64 {
        let mask = refs(c, &self.units).unwrap_or(0);
        let single = mask.count_ones() == 1;
        let scan = match single.then(|| &self.units[mask.trailing_zeros() as usize].source) {
            Some(Source::Table(scan)) => Some(scan),
            _ => None,
        };
        estimate(c, scan, known)
    }

    /// The plan of the units in their order (the row layout's): a
    /// left-deep nested loop, and what remains of the statement's filter.
    /// The units at positions `hashed` are anti-joins read once into a
    /// hash table (`Search::anti_step`).
    pub fn build(self, known: &Known, hashed: &[usize]) -> (Source, Option<BExpr>) {
        let Joins {
            units,
            conds,
            derived,
            ..
        } = self;
        let anti: Vec<bool> = units.iter().map(|u| not_exists(u, &conds)).collect();
        let mut mine: Vec<Vec<BExpr>> = units.iter().map(|_| Vec::new()).collect();
        let mut rest = Vec::new();
        for c in conds {
            match home(&c, &units) {
                Some(p) => mine[p].push(c),
                None => rest.push(c),
            }
        }
        let mut source: Option<Source> = None;
        let units = units.into_iter().zip(mine).zip(anti).enumerate();
        for (at, ((unit, conds), not_exists)) in units {
            let outer = unit.outer.is_some();
            let (right, on) = place(unit, conds, &derived, known, hashed.contains(&at));
            source = Some(match source {
                None => hash_join::correlated_lookup(right, &on),
                Some(left) => Source::Join {
                    left: Box::new(left),
                    hash: hash_join::plan(&right, &on).map(Box::new),
                    right: Box::new(right),
                    kind: if outer {
                        JoinKind::Left
                    } else {
                        JoinKind::Inner
                    },
                    on,
                    not_exists,
                },
            });
        }
        (source.unwrap_or(Source::Dual), conjoin(rest))
    }
}

/// Where a condition is checked: the first base table of the inner joins
/// at or after the last unit it reads (never inside a LEFT JOIN's inner
/// side, whose rows its ON alone decides); None for the final filter.
fn home(c: &BExpr, units: &[Unit]) -> Option<usize> {
    let mask = refs(c, units)?;
    let last = (u64::BITS - mask.leading_zeros()).saturating_sub(1) as usize;
    (last..units.len())
        .find(|&p| units[p].outer.is_none() && matches!(units[p].source, Source::Table(_)))
}

/// One unit's source with its access path and conditions, and the ON of
/// the join that adds it.
fn place(
    unit: Unit,
    conds: Vec<BExpr>,
    derived: &[BExpr],
    known: &Known,
    hashed: bool,
) -> (Source, Option<BExpr>) {
    let mut source = unit.source;
    match (unit.outer, &mut source) {
        (None, Source::Table(scan)) => {
            scan.access = best_access(scan, &[&conds[..], derived].concat(), known);
            let (filter, check) =
                take_implied_with(conds, derived, &scan.def, scan.offset, &scan.access);
            scan.filter = filter;
            scan.range_check = check;
            (source, None)
        }
        (None, _) => (source, conjoin(conds)),
        (Some(o), Source::Table(scan)) => {
            let mut usable = [&o.on[..], &o.derived[..]].concat();
            if hashed {
                // Keyed by its own conditions only, so it reads once.
                let (start, end) = (unit.start, unit.end);
                usable.retain(|c| hash_join::within(c, start, end));
            }
            scan.access = best_access(scan, &usable, known);
            let (on, check) =
                take_implied_with(o.on, &o.derived, &scan.def, scan.offset, &scan.access);
            scan.range_check = check;
            (source, on)
        }
        (Some(o), _) => {
            let usable = [&o.on[..], &o.derived[..]].concat();
            choose_accesses(&mut source, &usable, true, known);
            (source, conjoin(o.on))
        }
    }
}
