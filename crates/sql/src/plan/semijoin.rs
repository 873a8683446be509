//! Correlated subqueries keyed by their correlation.
//!
//! A correlated subquery runs once per row of the query around it. When
//! all it reads of the enclosing rows is one side of equalities `inner =
//! outer` in its WHERE (`EXISTS (SELECT 1 FROM t2 WHERE t2.k = t1.k AND
//! ..)`, `x IN (SELECT .. WHERE t2.k = t1.k)`, `(SELECT SUM(v) FROM t2
//! WHERE t2.k = t1.k)`), the binder plans it a second time without those
//! equalities. That plan reads nothing of the enclosing rows: its rows can
//! be produced once per statement and split by the inner side of the
//! equalities into a hash table (a hash semi-join's build; for an
//! aggregate, the grouped derived table of the decorrelated query). Each
//! enclosing row then finishes the subquery (aggregates, HAVING, DISTINCT,
//! ORDER BY, LIMIT, the select list) over the rows of its own key only:
//! the result the subquery gives for that row, by construction, whatever
//! its shape (duplicates, NULLs, NOT IN and NOT EXISTS included, since
//! the IN / EXISTS operators themselves are unchanged).
//!
//! Cost decides between the two ways: the subquery runs per row (through
//! an index on the correlated columns where it has one), once per distinct
//! key (its result kept by key), until the runs so far would have read
//! about as many rows as the build reads once (`Keyed::threshold`); from
//! then on the build answers (exec/semijoin.rs). Where the per-row plan
//! already hashes its table by the key, it is never built (`NEVER`).
//! A build that would not fit in the statement's temporary-table memory is
//! not made: the subquery keeps running per row.

use crate::expr::{BExpr, Func, SubqueryRef};
use crate::parser::{ast, BinaryOp};
use crate::plan::bind::{conjoin, split_conjuncts, Binder};
use crate::plan::join_order::access_rows;
use crate::plan::{QueryBody, QueryPlan, Source};
use lockstep_types::result::Column;
use lockstep_types::DataType;
use std::sync::Arc;

/// Subqueries nested deeper than this are not planned twice (each level
/// would double the binding work of the levels inside it).
const MAX_DEPTH: usize = 4;

/// A row read through an index per execution costs about this many rows
/// read in one pass.
const LOOKUP_COST: f64 = 3.0;

/// The keyed form of a correlated subquery.
#[derive(Debug)]
pub struct Keyed {
    /// The subquery's FROM and WHERE without the key equalities.
    pub source: Source,
    pub filter: Option<BExpr>,
    /// The rest of the subquery, over the rows of one key: its source is
    /// the derived table `rows`, which the executor fills per key.
    pub finish: QueryPlan,
    pub rows: Arc<QueryPlan>,
    /// Per key column: its expression over the subquery's source row and
    /// the one over the enclosing rows (`Outer` references).
    pub inner: Vec<BExpr>,
    pub outer: Vec<BExpr>,
    /// Runs per row before the build is made.
    pub threshold: u64,
    /// The same for runs that stop at their first row (EXISTS asks only
    /// whether there is one).
    pub first_row_threshold: u64,
    /// `finish` gives a row per row of the key (no aggregate, HAVING,
    /// window or LIMIT): EXISTS needs only to know whether the key has rows.
    pub plain: bool,
    /// `finish` reads no column of its rows (`SELECT 1`): the build keeps
    /// how many rows each key has, not their values.
    pub blind: bool,
}

/// Whether `e` reads neither a row nor a subquery and gives the same
/// value every time: with `outer`, it must read an enclosing row.
fn key_side(e: &BExpr, outer: bool) -> bool {
    fn walk(e: &BExpr, cols: &mut bool, outer: &mut bool, bad: &mut bool) {
        match e {
            BExpr::Column(_) => *cols = true,
            BExpr::Outer { .. } => *outer = true,
            BExpr::Exists { .. }
            | BExpr::InSubquery { .. }
            | BExpr::Subquery(_)
            | BExpr::Stored(..)
            | BExpr::UserVar(_)
            | BExpr::Param(_) => *bad = true,
            BExpr::Func(f, _) if volatile(f) => *bad = true,
            _ => {}
        }
        e.for_each_child(&mut |c| walk(c, cols, outer, bad));
    }
    let (mut cols, mut reads_outer, mut bad) = (false, false, false);
    walk(e, &mut cols, &mut reads_outer, &mut bad);
    match outer {
        true => reads_outer && !cols && !bad,
        false => cols && !reads_outer && !bad,
    }
}

/// Functions whose value may change from call to call (never hoisted out
/// of the rows they are called for).
pub(crate) fn volatile(f: &Func) -> bool {
    matches!(
        f,
        Func::Rand
            | Func::Sleep
            | Func::LastInsertId
            | Func::GetLock
            | Func::WaitForExecutedGtidSet
            | Func::ReleaseLock
            | Func::ReleaseAllLocks
            | Func::Uuid
            | Func::Misc(_)
    ) || matches!(f, Func::Math(m) if m.volatile())
}

/// Whether a condition reads an enclosing row (or may: a correlated or
/// stored-function subquery), or may change from call to call.
fn reads_outer(e: &BExpr) -> bool {
    let mut found = match e {
        BExpr::Outer { .. } | BExpr::Stored(..) => true,
        BExpr::Exists { query, .. } | BExpr::InSubquery { query, .. } | BExpr::Subquery(query) => {
            query.correlated
        }
        BExpr::Func(f, _) => volatile(f),
        _ => false,
    };
    e.for_each_child(&mut |c| found = found || reads_outer(c));
    found
}

/// The key equality `inner = outer` (either way round) of a conjunct.
fn key_pair(c: &BExpr) -> Option<(BExpr, BExpr)> {
    let BExpr::Binary(BinaryOp::Eq, a, b) = c else {
        return None;
    };
    if key_side(a, false) && key_side(b, true) {
        return Some(((**a).clone(), (**b).clone()));
    }
    if key_side(b, false) && key_side(a, true) {
        return Some(((**b).clone(), (**a).clone()));
    }
    None
}

/// In the WHERE of the query block being planned keyed (`Binder::strip`):
/// takes the key equalities out of `filter` into `keys` and says whether
/// what remains still reads an enclosing row.
pub fn strip(filter: Option<BExpr>, keys: &mut Vec<(BExpr, BExpr)>) -> (Option<BExpr>, bool) {
    keys.clear();
    let mut rest = Vec::new();
    for c in filter.as_ref().map(split_conjuncts).unwrap_or_default() {
        match key_pair(&c) {
            Some(pair) => keys.push(pair),
            None => rest.push(c),
        }
    }
    let correlated = rest.iter().any(reads_outer);
    (conjoin(rest), correlated)
}

/// Whether a correlated subquery is worth planning keyed: one plain
/// SELECT without locking, not nested too deep.
fn eligible(plan: &QueryPlan, q: &ast::Query, depth: usize) -> bool {
    let QueryBody::Select(s) = &plan.body else {
        return false;
    };
    plan.correlated
        && s.lock.is_none()
        && depth <= MAX_DEPTH
        && q.with.is_empty()
        && matches!(q.body, ast::QueryBody::Select(_))
}

impl Binder<'_> {
    /// Plans the correlated subquery `q` (already planned per row as
    /// `plan`, inside the enclosing `scope`) keyed, where it can be.
    pub(crate) fn plan_keyed(
        &mut self,
        q: &ast::Query,
        scope: crate::plan::bind::Scope,
        mut plan: QueryPlan,
    ) -> QueryPlan {
        if !eligible(&plan, q, self.outer_depth()) {
            return plan;
        }
        let ast::QueryBody::Select(s) = &q.body else {
            return plan;
        };
        let (decorrelated, keys) = self.bind_stripped(q, s, scope);
        let Some(mut d) = decorrelated.filter(|d| !d.correlated && !keys.is_empty()) else {
            return plan;
        };
        let QueryBody::Select(inner) = &mut d.body else {
            return plan;
        };
        let (inner_keys, outer_keys): (Vec<BExpr>, Vec<BExpr>) = keys.into_iter().unzip();
        mark_needed(&mut inner.source, &inner_keys);
        let width = inner.source.width();
        let rows = key_rows(width);
        let per_row_source = match &plan.body {
            QueryBody::Select(p) => &p.source,
            _ => return plan,
        };
        let threshold_of = |each: f64| threshold(per_row_source, &inner.source, each);
        let threshold = threshold_of(rows_read(per_row_source));
        let first_row_threshold = threshold_of(rows_read(per_row_source).min(1.0));
        let source = std::mem::replace(
            &mut inner.source,
            Source::Derived {
                plan: rows.clone(),
                offset: 0,
                lateral: None,
            },
        );
        let filter = inner.filter.take();
        inner.first_row_only = false;
        let plain = inner.aggregate.is_none()
            && inner.having.is_none()
            && inner.window.is_none()
            && inner.limit.is_none()
            && inner.offset.is_none();
        let blind = plain
            && !inner
                .projection
                .iter()
                .chain(inner.order.iter().map(|(e, _)| e))
                .any(reads_column);
        plan.keyed = Some(Box::new(Keyed {
            source,
            filter,
            finish: d,
            rows,
            inner: inner_keys,
            outer: outer_keys,
            threshold,
            first_row_threshold,
            plain,
            blind,
        }));
        plan
    }
}

/// The derived table a keyed subquery's `finish` reads: one key's rows,
/// `width` columns wide.
fn key_rows(width: usize) -> Arc<QueryPlan> {
    Arc::new(QueryPlan {
        body: QueryBody::Working(usize::MAX),
        columns: (0..width)
            .map(|_| crate::plan::bind::column_meta("", DataType::Null, true))
            .collect::<Vec<Column>>()
            .into(),
        // Never cached as a derived table: it holds one key's rows.
        correlated: true,
        keyed: None,
    })
}

/// Whether `e` reads a column of its row (a subquery may read any).
fn reads_column(e: &BExpr) -> bool {
    let mut found = matches!(
        e,
        BExpr::Column(_) | BExpr::Exists { .. } | BExpr::InSubquery { .. } | BExpr::Subquery(_)
    );
    e.for_each_child(&mut |c| found = found || reads_column(c));
    found
}

/// Makes the scans of `src` read the columns the key expressions name
/// (the key equalities were not in the plan when its columns were pruned).
fn mark_needed(src: &mut Source, keys: &[BExpr]) {
    fn cols(e: &BExpr, out: &mut Vec<usize>) {
        if let BExpr::Column(i) = e {
            out.push(*i);
        }
        e.for_each_child(&mut |c| cols(c, out));
    }
    let mut used = Vec::new();
    keys.iter().for_each(|k| cols(k, &mut used));
    match src {
        Source::Table(scan) => {
            let end = scan.offset + scan.def.columns.len();
            if let Some(needed) = &mut scan.needed {
                for &c in used.iter().filter(|&&c| c >= scan.offset && c < end) {
                    needed[c - scan.offset] = true;
                }
            }
        }
        Source::Join { left, right, .. } => {
            mark_needed(left, keys);
            mark_needed(right, keys);
        }
        Source::Dual | Source::Derived { .. } => {}
    }
}

/// Rows a source reads per execution, by its access paths.
pub(crate) fn rows_read(src: &Source) -> f64 {
    match src {
        Source::Table(scan) => {
            let n = scan.table.approximate_rows().max(1) as f64;
            let known = crate::plan::selectivity::Known::default();
            access_rows(scan, scan.table.stats().as_deref(), &scan.access, n, &known)
        }
        Source::Join {
            left, right, hash, ..
        } => match (&**left, hash) {
            // A correlated subquery's first table hashed once per
            // statement: per row it reads only its matches.
            (Source::Dual, Some(_)) => 1.0,
            _ => rows_read(left) + rows_read(right),
        },
        Source::Derived { .. } => 1000.0,
        Source::Dual => 0.0,
    }
}

/// A threshold never reached: the subquery runs per row, once per key.
pub const NEVER: u64 = u64::MAX;

/// How many runs per row, each reading `rows` rows, cost about what the
/// keyed build costs once.
fn threshold(per_row: &Source, build: &Source, rows: f64) -> u64 {
    if matches!(per_row, Source::Join { left, hash: Some(_), .. } if matches!(**left, Source::Dual))
    {
        // The per-row plan hashes the table once anyway: each distinct key
        // runs it once, its result kept by key (`NEVER`).
        return NEVER;
    }
    let once = rows_read(build);
    let each = LOOKUP_COST * (rows + 1.0);
    (once / each).clamp(1.0, 1e12) as u64
}

/// EXPLAIN's description of a subquery's strategy.
pub fn describe(plan: &QueryPlan) -> String {
    let per_row = match &plan.body {
        QueryBody::Select(s) => crate::plan::explain(&s.source)
            .into_iter()
            .map(|(t, a)| format!("{t} {a}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "union".into(),
    };
    match &plan.keyed {
        None if plan.correlated => format!("dependent subquery, run per row: {per_row}"),
        None => format!("subquery, materialized once: {per_row}"),
        Some(k) => {
            let build = crate::plan::explain(&k.source)
                .into_iter()
                .map(|(t, a)| format!("{t} {a}"))
                .collect::<Vec<_>>()
                .join(", ");
            let first = match k.threshold {
                NEVER => {
                    return format!(
                        "dependent subquery keyed on {} column(s): run per row ({per_row}) once per distinct key, its result kept by key",
                        k.inner.len()
                    )
                }
                1 => String::new(),
                n => format!("run per row for the first {n} keys ({per_row}), then "),
            };
            format!(
                "dependent subquery keyed on {} column(s): {first}materialized once ({build}) into a hash table by key",
                k.inner.len()
            )
        }
    }
}

/// The subqueries in `e` (not those inside them).
pub fn subqueries(e: &BExpr, out: &mut Vec<SubqueryRef>) {
    match e {
        BExpr::Exists { query, .. } | BExpr::InSubquery { query, .. } | BExpr::Subquery(query) => {
            out.push(query.clone())
        }
        _ => {}
    }
    e.for_each_child(&mut |c| subqueries(c, out));
}

/// The subqueries a SELECT's expressions hold, outside-in (not those
/// inside them): WHERE, the tables' own conditions, ON, the select list,
/// HAVING and ORDER BY.
pub fn select_subqueries(s: &crate::plan::SelectPlan) -> Vec<SubqueryRef> {
    fn source(src: &Source, out: &mut Vec<SubqueryRef>) {
        match src {
            Source::Table(scan) => {
                if let Some(f) = &scan.filter {
                    subqueries(f, out);
                }
            }
            Source::Join {
                left, right, on, ..
            } => {
                source(left, out);
                source(right, out);
                if let Some(on) = on {
                    subqueries(on, out);
                }
            }
            Source::Derived { .. } | Source::Dual => {}
        }
    }
    let mut out = Vec::new();
    source(&s.source, &mut out);
    let exprs = s.filter.iter().chain(&s.projection).chain(&s.having);
    exprs.for_each(|e| subqueries(e, &mut out));
    s.order.iter().for_each(|(e, _)| subqueries(e, &mut out));
    out
}

/// EXPLAIN FORMAT=TREE lines for subqueries, numbered from 2 as MySQL
/// numbers its query blocks.
pub fn explain_tree(subs: &[SubqueryRef]) -> Vec<(String, String)> {
    subs.iter()
        .enumerate()
        .map(|(i, q)| (format!("<subquery{}>", i + 2), describe(q)))
        .collect()
}

/// The traditional EXPLAIN rows of subqueries: each one's tables, under
/// the strategy it runs with (a keyed one that builds from the first row
/// on as MATERIALIZED, its build's tables).
pub fn explain_steps(
    subs: &[SubqueryRef],
    known: &crate::plan::selectivity::Known,
) -> Vec<crate::plan::explain::Step> {
    use crate::plan::explain::table_step;
    fn tables(src: &Source, out: &mut Vec<(crate::plan::TableScan, bool)>) {
        match src {
            Source::Table(scan) => out.push((scan.clone(), false)),
            Source::Join {
                left, right, hash, ..
            } => {
                tables(left, out);
                let at = out.len();
                tables(right, out);
                if let (Some(_), Some(t)) = (hash, out.get_mut(at)) {
                    t.1 = true;
                }
            }
            Source::Derived { .. } | Source::Dual => {}
        }
    }
    let mut steps = Vec::new();
    for (i, q) in subs.iter().enumerate() {
        let QueryBody::Select(s) = &q.body else {
            continue;
        };
        let (src, select_type, extra) = match &q.keyed {
            Some(k) if k.threshold == NEVER => {
                (&s.source, "DEPENDENT SUBQUERY", "Using result cache by key")
            }
            Some(k) if k.threshold <= 1 => (&k.source, "MATERIALIZED", "Using hash by key"),
            Some(_) => (
                &s.source,
                "DEPENDENT SUBQUERY",
                "Materialize by key when run often",
            ),
            None if q.correlated => (&s.source, "DEPENDENT SUBQUERY", ""),
            None => (&s.source, "SUBQUERY", ""),
        };
        let mut scans = Vec::new();
        tables(src, &mut scans);
        let mut seen = Vec::new();
        for (scan, hashed) in scans {
            let mut step = table_step(&scan, hashed, i + 2, select_type, &seen, known);
            seen.push(crate::plan::explain::column_names(&scan));
            if !extra.is_empty() {
                step.extra.push(extra);
            }
            steps.push(step);
        }
    }
    steps
}

/// The subqueries of `s` that run as semi-joins by first match: a
/// top-level AND-ed EXISTS or IN (not negated) of a plain block (no
/// aggregate, LIMIT or window) that the join order did not flatten, run
/// per outer row until its first match (correlated, not hashed).
fn first_matches(s: &crate::plan::SelectPlan) -> Vec<SubqueryRef> {
    fn walk(e: &BExpr, out: &mut Vec<SubqueryRef>) {
        match e {
            BExpr::Binary(crate::parser::BinaryOp::And, a, b) => {
                walk(a, out);
                walk(b, out);
            }
            BExpr::Exists {
                query,
                negated: false,
            }
            | BExpr::InSubquery {
                query,
                negated: false,
                ..
            } if per_row_semi_join(query) => out.push(query.clone()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(f) = &s.filter {
        walk(f, &mut out);
    }
    out
}

fn per_row_semi_join(q: &QueryPlan) -> bool {
    let QueryBody::Select(s) = &q.body else {
        return false;
    };
    let plain = s.aggregate.is_none() && s.limit.is_none() && s.window.is_none();
    let per_row = match &q.keyed {
        None => q.correlated,
        Some(k) => k.threshold == NEVER,
    };
    plain && per_row
}

/// Marks the subqueries of `s` run by first match (`subs` as
/// `select_subqueries` lists them, `steps` and `tree` with theirs added):
/// `FirstMatch(t)` in the Extra of each one's last table and in its tree
/// line, `t` the last outer table, to whose next row a match returns.
/// As in MySQL 8, a semi-join's tables are rows of the outer block (its
/// id and select_type, listed after its tables); a block left with no
/// other rows is SIMPLE again.
pub fn label_first_match(
    s: &crate::plan::SelectPlan,
    subs: &[SubqueryRef],
    steps: &mut [crate::plan::explain::Step],
    tree: &mut [(String, String)],
) {
    let matched = first_matches(s);
    let outer = steps
        .iter()
        .rev()
        .find(|st| st.id == 1)
        .and_then(|st| st.table.clone());
    let Some(outer) = outer.filter(|_| !matched.is_empty()) else {
        return;
    };
    for (i, sub) in subs.iter().enumerate() {
        if !matched.iter().any(|m| m.id() == sub.id()) {
            continue;
        }
        if let Some(step) = steps.iter_mut().rev().find(|st| st.id == i + 2) {
            step.first_match = Some(outer.clone());
        }
        let name = format!("<subquery{}>", i + 2);
        if let Some(line) = tree.iter_mut().find(|(t, _)| *t == name) {
            line.1 = format!("semi-join, FirstMatch({outer}): {}", line.1);
        }
    }
    merge_first_match_rows(steps);
}

/// Gives the tables of first-match semi-joins their outer block's id and
/// select_type, and moves them after that block's other tables.
fn merge_first_match_rows(steps: &mut [crate::plan::explain::Step]) {
    let ids: Vec<usize> = steps
        .iter()
        .filter(|st| st.first_match.is_some())
        .map(|st| st.id)
        .collect();
    let outer_type = steps.first().map_or("SIMPLE", |st| st.select_type);
    for st in steps.iter_mut().filter(|st| ids.contains(&st.id)) {
        st.id = 1;
        st.select_type = outer_type;
    }
    // Stable: the outer tables keep their order, the semi-join's follow.
    steps.sort_by_key(|st| st.id != 1);
    if steps.iter().all(|st| st.id == 1) {
        for st in steps.iter_mut() {
            st.select_type = "SIMPLE";
        }
    }
}

/// Adds the subqueries' rows to a statement's EXPLAIN rows; the outer
/// block is then PRIMARY, as MySQL calls it, rather than SIMPLE.
pub fn add_steps(
    steps: &mut Vec<crate::plan::explain::Step>,
    subs: &[SubqueryRef],
    known: &crate::plan::selectivity::Known,
) {
    if subs.is_empty() {
        return;
    }
    for s in steps.iter_mut().filter(|s| s.select_type == "SIMPLE") {
        s.select_type = "PRIMARY";
    }
    steps.extend(explain_steps(subs, known));
}
