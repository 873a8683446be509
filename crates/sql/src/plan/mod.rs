//! Executable plans: what the binder produces from the AST and the
//! executor runs. Plans hold resolved tables and bound expressions, so a
//! prepared statement keeps its plan across executions (12.5).

pub mod alter;
pub mod antijoin;
pub mod bind;
pub mod check;
pub mod ddl;
pub mod enumset;
pub mod equalities;
pub mod explain;
pub mod foreign;
pub mod generated;
pub mod group_check;
pub mod hash_join;
pub mod index_dive;
pub mod index_hints;
pub mod join_order;
pub mod key_len;
pub mod multi;
pub mod possible_keys;
pub mod prune;
pub mod selectivity;
pub mod semijoin;
pub mod semijoin_keys;
pub mod semijoin_nest;
pub mod set_columns;
pub mod user_var_type;
pub mod view_dml;

use crate::expr::{BExpr, SubqueryRef};
use crate::parser::JoinKind;
use lockstep_engine::LockMode;
use lockstep_tables::{Table, TableDef};
use lockstep_types::result::Column;
use std::sync::Arc;

/// A query: SELECT or UNION, with the output column metadata.
#[derive(Debug)]
pub struct QueryPlan {
    pub body: QueryBody,
    pub columns: std::sync::Arc<[Column]>,
    /// Refers to an enclosing query's row (so it cannot be cached).
    pub correlated: bool,
    /// A correlated subquery's plan keyed by its correlation (semijoin.rs).
    pub keyed: Option<Box<semijoin::Keyed>>,
}

impl crate::expr::Subquery for QueryPlan {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl From<Arc<QueryPlan>> for SubqueryRef {
    fn from(plan: Arc<QueryPlan>) -> SubqueryRef {
        SubqueryRef(plan)
    }
}

/// A subquery's plan: only the binder makes subquery handles, and only of
/// query plans.
impl std::ops::Deref for SubqueryRef {
    type Target = QueryPlan;

    fn deref(&self) -> &QueryPlan {
        let plan = self.0.as_any().downcast_ref();
        plan.expect("a subquery handle holds a query plan (made by the binder)")
    }
}

#[derive(Debug)]
pub enum QueryBody {
    Select(Box<SelectPlan>),
    Union {
        left: Box<QueryPlan>,
        right: Box<QueryPlan>,
        all: bool,
        /// UNION, INTERSECT or EXCEPT.
        op: crate::parser::SetOp,
        /// ORDER BY over output columns.
        order: Vec<(usize, bool)>,
        limit: Option<BExpr>,
        offset: Option<BExpr>,
    },
    /// A recursive common table expression, evaluated by iteration.
    Recursive(Box<RecursivePlan>),
    /// The rows the previous iteration of recursive CTE `id` added: where
    /// its recursive query blocks name the CTE itself.
    Working(usize),
    /// JSON_TABLE's rows (`bind::json_table`, `exec::json_table`).
    JsonTable(Box<bind::json_table::JsonTablePlan>),
}

/// WITH RECURSIVE name AS (anchor UNION [ALL] step ...).
#[derive(Debug)]
pub struct RecursivePlan {
    /// Unique per statement: names the working table of the steps.
    pub id: usize,
    pub name: String,
    /// The non-recursive query blocks (UNIONed): the first rows, whose
    /// types are the CTE's column types.
    pub anchor: QueryPlan,
    /// The recursive query blocks, each reading `Working(id)`.
    pub steps: Vec<QueryPlan>,
    /// UNION DISTINCT: a row already produced is not produced again.
    pub distinct: bool,
    /// LIMIT/OFFSET on the whole: iteration stops once enough rows exist.
    pub limit: Option<BExpr>,
    pub offset: Option<BExpr>,
}

#[derive(Debug)]
pub struct SelectPlan {
    pub source: Source,
    /// WHERE, over the source row.
    pub filter: Option<BExpr>,
    pub aggregate: Option<AggregatePlan>,
    /// HAVING, over the aggregate row.
    pub having: Option<BExpr>,
    /// Output expressions, over the source row (or the aggregate row).
    pub projection: Vec<BExpr>,
    /// Sort keys, in the same space as the projection.
    pub order: Vec<(BExpr, bool)>,
    /// The source already yields rows in ORDER BY order (index order).
    pub ordered_by_index: bool,
    /// MIN/MAX answered by the first row of an index scan.
    pub first_row_only: bool,
    /// Window functions, computed after HAVING into slots of the row that
    /// the projection and ORDER BY read (`bind::window`, `exec::window`).
    pub window: Option<bind::window::WindowPlan>,
    pub distinct: bool,
    /// Which projected values are text (DISTINCT compares them under the
    /// collation).
    pub text_columns: Vec<bool>,
    /// Per projection item: the source column it may move out of the row
    /// instead of copying (`prune::column_moves`).
    pub moves: Vec<Option<usize>>,
    /// Per ORDER BY key: the projected value it sorts by, where the key is
    /// a projected column (or that column under the collation), so the key
    /// is not computed and stored a second time (`prune::order_from`).
    pub order_from: Vec<Option<usize>>,
    pub limit: Option<BExpr>,
    pub offset: Option<BExpr>,
    pub lock: Option<LockMode>,
}

/// Aggregation: the aggregate row is the GROUP BY values followed by one
/// value per aggregate call.
#[derive(Debug)]
pub struct AggregatePlan {
    pub group_by: Vec<BExpr>,
    /// Which GROUP BY values are text: grouped under the collation.
    pub group_text: Vec<bool>,
    pub calls: Vec<AggCall>,
    /// WITH ROLLUP: where the aggregate row holds its rollup level (how
    /// many GROUP BY values the row keeps; the rest are NULL).
    pub rollup: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct AggCall {
    pub func: AggFunc,
    pub arg: Option<BExpr>,
    pub distinct: bool,
    /// Which argument values are text (DISTINCT compares them under the
    /// collation).
    pub text: Vec<bool>,
    /// GROUP_CONCAT's separator.
    pub separator: Vec<u8>,
    /// GROUP_CONCAT's ORDER BY: per key, descending. The keys are the
    /// last `order.len()` items of the argument row, after the values.
    pub order: Vec<bool>,
}

/// Whether values of type `t` compare under the default (case-folding)
/// collation: text, but not binary strings, which compare byte by byte.
pub fn compares_folded(t: lockstep_types::DataType) -> bool {
    t.is_string() && !t.is_binary()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    /// A non-aggregated column under GROUP BY: any value of the group.
    AnyValue,
    GroupConcat,
    BitAnd,
    BitOr,
    BitXor,
    /// JSON_ARRAYAGG / JSON_OBJECTAGG (expr/json/agg.rs).
    JsonArrayAgg,
    JsonObjectAgg,
    /// STD/STDDEV/STDDEV_POP, STDDEV_SAMP, VARIANCE/VAR_POP, VAR_SAMP.
    StdPop,
    StdSamp,
    VarPop,
    VarSamp,
}

/// Where rows come from. Each source fills a slice of the combined row
/// starting at its offset.
#[derive(Debug)]
pub enum Source {
    /// No FROM: one empty row.
    Dual,
    Table(TableScan),
    Derived {
        plan: Arc<QueryPlan>,
        offset: usize,
        /// LATERAL or JSON_TABLE: run per row of the items before it.
        lateral: Option<Arc<bind::lateral::Lateral>>,
    },
    /// Nested-loop join; the right side's access may use left columns.
    Join {
        left: Box<Source>,
        right: Box<Source>,
        kind: JoinKind,
        on: Option<BExpr>,
        /// Set when the right side is read once into a hash table rather
        /// than once per left row.
        hash: Option<Box<hash_join::HashJoin>>,
        /// MySQL's "Not exists": a LEFT JOIN whose every matched row the
        /// statement's WHERE rejects (`right.col IS NULL` of a column no
        /// match leaves NULL), so each left row needs its first match
        /// only, or its NULL row (`join_order::not_exists`).
        not_exists: bool,
    },
}

impl Source {
    /// How many columns of the combined row this source fills.
    pub fn width(&self) -> usize {
        match self {
            Source::Dual => 0,
            Source::Table(t) => t.def.columns.len(),
            Source::Derived { plan, .. } => plan.columns.len(),
            Source::Join { left, right, .. } => left.width() + right.width(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TableScan {
    pub table: Arc<Table>,
    /// The name the statement gives the table (its alias), for EXPLAIN.
    pub alias: String,
    pub def: Arc<TableDef>,
    pub offset: usize,
    pub access: Access,
    /// Which columns the statement reads (None: all); the others are
    /// left NULL in the combined row instead of copied (`prune`).
    pub needed: Option<Vec<bool>>,
    /// Conditions taken out of the statement's filter because the key
    /// range of `access` guarantees them (`bind::take_implied`). They are
    /// evaluated per row only in an execution whose key values are not
    /// exact (say a decimal compared with an integer column).
    pub range_check: Option<BExpr>,
    /// USE / FORCE / IGNORE INDEX: which indexes the access path and the
    /// ORDER BY may use (None: all).
    pub hints: Option<Arc<index_hints::IndexHints>>,
    /// Conditions of the statement checked on each row as the scan meets
    /// it, over the prefix row and this table's row (a join places each
    /// condition at the first table where its columns are all read).
    pub filter: Option<BExpr>,
}

/// An access path: index 0 is the clustered index.
#[derive(Debug, Clone)]
pub struct Access {
    pub index: usize,
    pub ranges: Vec<KeyRange>,
    pub reverse: bool,
}

/// Rows whose index key starts with `eq` and whose next key column lies
/// between `lower` and `upper` (each with inclusiveness).
#[derive(Debug, Clone, Default)]
pub struct KeyRange {
    pub eq: Vec<BExpr>,
    pub lower: Option<(BExpr, bool)>,
    pub upper: Option<(BExpr, bool)>,
}

impl Access {
    pub fn full() -> Access {
        Access {
            index: 0,
            ranges: vec![KeyRange::default()],
            reverse: false,
        }
    }

    pub fn is_full_scan(&self) -> bool {
        self.ranges.len() == 1
            && self.ranges[0].eq.is_empty()
            && self.ranges[0].lower.is_none()
            && self.ranges[0].upper.is_none()
    }

    pub fn describe(&self, def: &TableDef) -> String {
        let name = &def.indexes[self.index].name;
        if self.is_full_scan() {
            if self.index == 0 {
                return "full scan".into();
            }
            return format!("index scan on {name}");
        }
        let points = self
            .ranges
            .iter()
            .all(|r| r.eq.len() == def.indexes[self.index].columns.len());
        if points {
            format!("{} point lookup(s) on {name}", self.ranges.len())
        } else {
            format!("{} range(s) on {name}", self.ranges.len())
        }
    }
}

/// EXPLAIN's rows for a source: per table in the order the joins read
/// them, its name and access path, marked when a LEFT JOIN adds it and
/// naming the tables its key takes values from.
pub fn explain(src: &Source) -> Vec<(String, String)> {
    let mut out = Vec::new();
    explain_into(src, false, &mut Vec::new(), &mut out, &mut |_| {
        String::new()
    });
    out
}

/// `explain`, each table's line followed by what `measured` says of its
/// scan (EXPLAIN ANALYZE).
pub fn explain_measured(
    src: &Source,
    measured: &mut dyn FnMut(&TableScan) -> String,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    explain_into(src, false, &mut Vec::new(), &mut out, measured);
    out
}

/// A table read before: its name and row positions.
type Seen = (String, usize, usize);

fn explain_into(
    src: &Source,
    outer: bool,
    seen: &mut Vec<Seen>,
    out: &mut Vec<(String, String)>,
    measured: &mut dyn FnMut(&TableScan) -> String,
) {
    match src {
        Source::Table(t) => {
            let mut text = t.access.describe(&t.def);
            if outer {
                text.insert_str(0, "left join, ");
            }
            let from = key_sources(&t.access, seen);
            if !from.is_empty() {
                text += &format!(", key from {}", from.join(", "));
            }
            text += &measured(t);
            seen.push((t.alias.clone(), t.offset, t.offset + t.def.columns.len()));
            out.push((t.alias.clone(), text));
        }
        Source::Join {
            left,
            right,
            kind,
            hash,
            not_exists,
            ..
        } => {
            if !matches!(**left, Source::Dual) {
                explain_into(left, outer, seen, out, measured);
            }
            let at = out.len();
            explain_into(right, outer || *kind == JoinKind::Left, seen, out, measured);
            if let (true, Some(entry)) = (*not_exists, out.get_mut(at)) {
                entry.1 += ", not exists (first match only)";
            }
            if let (Some(_), Some(entry)) = (hash, out.get_mut(at)) {
                entry.1 += ", hash join";
            }
        }
        Source::Derived {
            plan,
            offset,
            lateral,
        } => {
            let nest = semijoin_nest::nest_name(plan);
            let name = nest.unwrap_or("<derived>").to_string();
            seen.push((name.clone(), *offset, offset + plan.columns.len()));
            let split = lateral.as_ref().is_some_and(|l| l.split);
            let how = match nest {
                Some(_) => semijoin_nest::describe(),
                None if split => {
                    "materialized for each key of the rows before it (lateral derived)"
                }
                None => "materialized",
            };
            out.push((name, how.into()));
            // How the derived table (a view, a CTE) reads its own tables.
            if let QueryBody::Select(s) = &plan.body {
                let mut inner = Vec::new();
                explain_into(&s.source, false, &mut Vec::new(), &mut inner, measured);
                out.extend(inner.into_iter().map(|(t, a)| (format!("  {t}"), a)));
            }
        }
        Source::Dual => out.push((String::new(), "no tables".into())),
    }
}

/// The tables before it whose columns an access path's keys read.
fn key_sources(access: &Access, seen: &[Seen]) -> Vec<String> {
    let mut cols = Vec::new();
    fn collect(e: &BExpr, cols: &mut Vec<usize>) {
        if let BExpr::Column(i) = e {
            cols.push(*i);
        }
        e.for_each_child(&mut |c| collect(c, cols));
    }
    for r in &access.ranges {
        r.eq.iter().for_each(|e| collect(e, &mut cols));
        for (e, _) in r.lower.iter().chain(&r.upper) {
            collect(e, &mut cols);
        }
    }
    let mut names: Vec<String> = Vec::new();
    for (name, start, end) in seen {
        if cols.iter().any(|c| c >= start && c < end) && !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// UPDATE or DELETE of one table.
#[derive(Debug)]
pub struct ModifyPlan {
    pub table: Arc<Table>,
    pub def: Arc<TableDef>,
    /// The scan of the target rows (every column), built once at bind time.
    pub scan: TableScan,
    pub filter: Option<BExpr>,
    pub order: Vec<(BExpr, bool)>,
    pub ordered_by_index: bool,
    pub limit: Option<BExpr>,
    /// For UPDATE: (column, value over the old row).
    pub assignments: Vec<(usize, BExpr)>,
    /// UPDATE IGNORE / DELETE IGNORE: a row that fails on a key is
    /// skipped with a warning (`Exec::or_skip`).
    pub ignore: bool,
}

#[derive(Debug)]
pub struct InsertPlan {
    pub table: Arc<Table>,
    pub def: Arc<TableDef>,
    /// Stored column position for each supplied value.
    pub targets: Vec<usize>,
    pub source: InsertSource,
    pub ignore: bool,
    pub replace: bool,
    /// ON DUPLICATE KEY UPDATE: (column, value over existing row ++ new row).
    pub on_duplicate: Vec<(usize, BExpr)>,
}

#[derive(Debug)]
pub enum InsertSource {
    Values(Vec<Vec<BExpr>>),
    Query(Arc<QueryPlan>),
}
