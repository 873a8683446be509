//! EXPLAIN in MySQL's shapes: the traditional table (id, select_type,
//! table, type, key, ref, rows, Extra, ...) and FORMAT=JSON, both built
//! from the same steps, one per table in the order the joins read them.
//! FORMAT=TREE is lockstep's own wording of each access path
//! (`plan::explain`).

use crate::expr::BExpr;
use crate::plan::join_order::access_rows;
use crate::plan::selectivity::Known;
use crate::plan::{QueryBody, QueryPlan, Source, TableScan};
use lockstep_types::Value;

/// One table's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub id: usize,
    pub select_type: &'static str,
    pub table: Option<String>,
    /// MySQL's join type: const, eq_ref, ref, range, index, ALL.
    pub kind: Option<&'static str>,
    /// Indexes a condition could use (`possible_keys.rs`).
    pub possible_keys: Vec<String>,
    pub key: Option<String>,
    /// Bytes of the key the access uses (MySQL's key_len).
    pub key_len: Option<u64>,
    pub key_ref: Option<String>,
    pub rows: Option<u64>,
    /// Percent of the rows read that the table's conditions keep
    /// (`selectivity::filtered`); None for no table.
    pub filtered: Option<f64>,
    pub extra: Vec<&'static str>,
    /// A semi-join run by first match: the outer table it returns to,
    /// shown as MySQL's `FirstMatch(t)` after the other Extra notes.
    pub first_match: Option<String>,
}

impl Step {
    /// A whole read of a table with no key (a derived table, a table
    /// function, an information_schema table).
    pub fn full_scan(id: usize, select_type: &'static str, table: String) -> Step {
        Step {
            id,
            select_type,
            table: Some(table),
            kind: Some("ALL"),
            possible_keys: Vec::new(),
            key: None,
            key_len: None,
            key_ref: None,
            rows: None,
            filtered: Some(100.0),
            extra: Vec::new(),
            first_match: None,
        }
    }
}

fn reads_columns(e: &BExpr) -> bool {
    let mut found = matches!(e, BExpr::Column(_));
    e.for_each_child(&mut |c| found |= reads_columns(c));
    found
}

/// Where a lateral table's steps find the columns of the row before it
/// among their own.
const OUTER_SEEN: usize = 1 << 40;

/// Columns of the tables read before a step, by their offset in the
/// combined row: (first offset, `db.alias.column` names).
pub type Seen = [(usize, Vec<String>)];

/// How EXPLAIN's ref names a key part's value: `const`, the column it
/// comes from (`db.alias.col`), or `func` for any other expression.
fn ref_name(e: &BExpr, seen: &Seen) -> String {
    // A lateral table's reference to the row before it is listed past
    // OUTER_SEEN (see the Derived step).
    let outer = match e {
        BExpr::Outer { depth: 0, index } => Some(BExpr::Column(index + OUTER_SEEN)),
        _ => None,
    };
    if let BExpr::Column(i) = outer.as_ref().unwrap_or(e) {
        let within = |(at, names): &&(usize, Vec<String>)| (*at..at + names.len()).contains(i);
        if let Some((at, names)) = seen.iter().find(within) {
            return names[i - at].clone();
        }
    }
    if reads_columns(e) { "func" } else { "const" }.to_string()
}

/// The `db.alias.column` names of a table's columns.
pub fn column_names(scan: &TableScan) -> (usize, Vec<String>) {
    let prefix = format!("{}.{}", scan.def.database, scan.alias);
    let names = scan.def.columns.iter();
    let names = names.map(|c| format!("{prefix}.{}", c.name)).collect();
    (scan.offset, names)
}

pub fn table_step(
    scan: &TableScan,
    hashed: bool,
    id: usize,
    select_type: &'static str,
    seen: &Seen,
    known: &Known,
) -> Step {
    let (access, def) = (&scan.access, &scan.def);
    let index = &def.indexes[access.index];
    let points = access
        .ranges
        .iter()
        .all(|r| r.eq.len() == index.columns.len());
    let bounded = access
        .ranges
        .iter()
        .any(|r| r.lower.is_some() || r.upper.is_some());
    let single = access.ranges.len() == 1;
    let eqs: Vec<&BExpr> = access
        .ranges
        .first()
        .map(|r| r.eq.iter().collect())
        .unwrap_or_default();
    let constant = eqs.iter().all(|e| !reads_columns(e));
    let kind = match () {
        _ if access.is_full_scan() && access.index == 0 => "ALL",
        _ if access.is_full_scan() => "index",
        _ if !single || bounded => "range",
        _ if points && index.unique && constant => "const",
        _ if points && index.unique => "eq_ref",
        _ => "ref",
    };
    let n = scan.table.approximate_rows().max(1) as f64;
    let rows = match kind {
        "const" | "eq_ref" => 1,
        _ => access_rows(scan, scan.table.stats().as_deref(), access, n, known).round() as u64,
    };
    let key_ref = matches!(kind, "const" | "eq_ref" | "ref").then(|| {
        let part = |e: &&BExpr| ref_name(e, seen);
        eqs.iter().map(part).collect::<Vec<_>>().join(",")
    });
    let mut extra = Vec::new();
    if scan.filter.is_some() {
        extra.push("Using where");
    }
    if hashed {
        extra.push("Using join buffer (hash join)");
    }
    Step {
        id,
        select_type,
        table: Some(scan.alias.clone()),
        kind: Some(kind),
        possible_keys: super::possible_keys::possible_keys(scan),
        key: (kind != "ALL").then(|| index.name.clone()),
        key_len: super::key_len::key_len(def, access),
        key_ref,
        rows: Some(rows),
        filtered: Some(super::selectivity::filtered(scan, known)),
        extra,
        first_match: None,
    }
}

/// The steps `walk` produces, and what their estimates know.
struct Sink<'a> {
    out: Vec<Step>,
    known: &'a Known,
}

/// The select ids of a walk: the block's own, and the last one given to
/// a derived table (each gets the next; the block's later tables keep
/// the block's).
struct Ids {
    this: usize,
    last: usize,
}

fn walk(
    src: &Source,
    join: &[BExpr],
    id: &mut Ids,
    select_type: &'static str,
    hashed: bool,
    seen: &mut Vec<(usize, Vec<String>)>,
    sink: &mut Sink,
) {
    let this = id.this;
    match src {
        Source::Table(scan) => {
            let mut step = table_step(scan, hashed, this, select_type, seen, sink.known);
            step.possible_keys = super::possible_keys::possible_keys_in(scan, join);
            sink.out.push(step);
            seen.push(column_names(scan));
        }
        Source::Join {
            left,
            right,
            hash,
            not_exists,
            ..
        } => {
            if !matches!(**left, Source::Dual) {
                walk(left, join, id, select_type, false, seen, sink);
            }
            let at = sink.out.len();
            walk(right, join, id, select_type, hash.is_some(), seen, sink);
            if let (true, Some(step)) = (*not_exists, sink.out.get_mut(at)) {
                note_not_exists(step);
            }
        }
        Source::Derived { plan, offset, .. } if json_table_alias(plan).is_some() => {
            let alias = json_table_alias(plan).unwrap_or_default().to_string();
            let names = plan.columns.iter().map(|c| format!("{alias}.{}", c.name));
            seen.push((*offset, names.collect()));
            sink.out.push(Step {
                extra: vec!["Table function: json_table; Using temporary"],
                ..Step::full_scan(this, select_type, alias)
            });
        }
        Source::Derived {
            plan,
            offset,
            lateral,
        } => {
            let derived = Derived {
                plan,
                offset: *offset,
                lateral: lateral.as_deref(),
            };
            walk_derived(&derived, id, (select_type, hashed), seen, sink);
        }
        Source::Dual => sink.out.push(Step {
            id: this,
            select_type,
            table: None,
            kind: None,
            possible_keys: Vec::new(),
            key: None,
            key_len: None,
            key_ref: None,
            rows: None,
            filtered: None,
            extra: vec!["No tables used"],
            first_match: None,
        }),
    }
}

/// A derived table (or semi-join nest) as `walk` meets it.
struct Derived<'p> {
    plan: &'p QueryPlan,
    offset: usize,
    lateral: Option<&'p super::bind::lateral::Lateral>,
}

/// A derived table's own step, then its query's steps under the next
/// select id.
fn walk_derived(
    d: &Derived<'_>,
    id: &mut Ids,
    (select_type, hashed): (&'static str, bool),
    seen: &mut Vec<(usize, Vec<String>)>,
    sink: &mut Sink,
) {
    id.last += 1;
    let inner = id.last;
    let nest = super::semijoin_nest::nest_name(d.plan);
    let alias = nest.map_or_else(|| format!("<derived{inner}>"), str::to_string);
    let names = d.plan.columns.iter().map(|c| match nest {
        // A nest's key columns are named `<subqueryN>.col` already.
        Some(_) => c.name.clone(),
        None => format!("{alias}.{}", c.name),
    });
    seen.push((d.offset, names.collect()));
    sink.out.push(Step {
        extra: match hashed {
            true => vec!["Using join buffer (hash join)"],
            false => Vec::new(),
        },
        ..Step::full_scan(id.this, select_type, alias)
    });
    // A lateral table runs again for each row before it; one the
    // planner split by key is MariaDB's LATERAL DERIVED.
    let kind = match (d.lateral, nest) {
        (_, Some(_)) => "MATERIALIZED",
        (Some(l), None) if l.split => "LATERAL DERIVED",
        (Some(_), None) => "DEPENDENT DERIVED",
        (None, None) => "DERIVED",
    };
    let mut before: Vec<(usize, Vec<String>)> = match d.lateral {
        Some(_) => seen
            .iter()
            .map(|(at, n)| (at + OUTER_SEEN, n.clone()))
            .collect(),
        None => Vec::new(),
    };
    if let QueryBody::Select(s) = &d.plan.body {
        let mut inner = Vec::new();
        super::possible_keys::join_conditions(&s.source, &mut inner);
        let mut ids = Ids {
            this: id.last,
            last: id.last,
        };
        walk(&s.source, &inner, &mut ids, kind, false, &mut before, sink);
        id.last = ids.last;
    }
}

/// MySQL's notes on the inner table of a "Not exists" LEFT JOIN: the
/// WHERE's IS NULL is checked there (Using where), at its first match.
fn note_not_exists(step: &mut Step) {
    if !step.extra.contains(&"Using where") {
        step.extra.insert(0, "Using where");
    }
    let buffer = step
        .extra
        .iter()
        .position(|e| e.starts_with("Using join buffer"));
    step.extra
        .insert(buffer.unwrap_or(step.extra.len()), "Not exists");
}

fn json_table_alias(plan: &QueryPlan) -> Option<&str> {
    match &plan.body {
        QueryBody::JsonTable(t) => Some(&t.alias),
        _ => None,
    }
}

fn has_derived(src: &Source) -> bool {
    match src {
        Source::Derived { plan, .. } => {
            json_table_alias(plan).is_none() && super::semijoin_nest::nest_name(plan).is_none()
        }
        Source::Join { left, right, .. } => has_derived(left) || has_derived(right),
        _ => false,
    }
}

/// The steps of a SELECT over `src`; `sorts` when its ORDER BY is a sort
/// rather than an index's order.
pub fn steps(src: &Source, sorts: bool, known: &Known) -> Vec<Step> {
    let outer = if has_derived(src) {
        "PRIMARY"
    } else {
        "SIMPLE"
    };
    let mut sink = Sink {
        out: Vec::new(),
        known,
    };
    let mut join = Vec::new();
    super::possible_keys::join_conditions(src, &mut join);
    let mut ids = Ids { this: 1, last: 1 };
    walk(
        src,
        &join,
        &mut ids,
        outer,
        false,
        &mut Vec::new(),
        &mut sink,
    );
    let mut out = sink.out;
    if let (true, Some(first)) = (sorts, out.first_mut()) {
        first.extra.push("Using filesort");
    }
    out
}

/// The steps of a SELECT plan. A single table's WHERE stays in the
/// statement's filter; it is that table's condition for EXPLAIN (Using
/// where, filtered, possible_keys).
pub fn select_steps(s: &crate::plan::SelectPlan, sorts: bool, known: &Known) -> Vec<Step> {
    match (&s.source, &s.filter) {
        (Source::Table(scan), Some(f)) if scan.filter.is_none() => {
            let mut own = scan.clone();
            own.filter = Some(f.clone());
            // Served conditions still reach their keys.
            let keys = super::possible_keys::possible_keys(&own);
            own.filter = super::possible_keys::unserved(scan, f);
            let mut out = steps(&Source::Table(own), sorts, known);
            if let Some(step) = out.first_mut() {
                step.possible_keys = keys;
            }
            out
        }
        _ => steps(&s.source, sorts, known),
    }
}

/// MySQL's traditional EXPLAIN columns.
pub const COLUMNS: [&str; 12] = [
    "id",
    "select_type",
    "table",
    "partitions",
    "type",
    "possible_keys",
    "key",
    "key_len",
    "ref",
    "rows",
    "filtered",
    "Extra",
];

fn text(s: &Option<String>) -> Value {
    s.as_deref().map_or(Value::Null, Value::str)
}

/// The Extra column of a step (None: empty).
fn extra(s: &Step) -> Option<String> {
    let mut notes: Vec<String> = s.extra.iter().map(|e| e.to_string()).collect();
    notes.extend(s.first_match.iter().map(|t| format!("FirstMatch({t})")));
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// A step as a traditional row.
pub fn row(s: &Step) -> Vec<Value> {
    let extra = extra(s);
    vec![
        Value::UInt(s.id as u64),
        Value::str(s.select_type),
        text(&s.table),
        Value::Null,
        s.kind.map_or(Value::Null, Value::str),
        match s.possible_keys.is_empty() {
            true => Value::Null,
            false => Value::str(&s.possible_keys.join(",")),
        },
        text(&s.key),
        s.key_len
            .map_or(Value::Null, |n| Value::str(&n.to_string())),
        text(&s.key_ref),
        s.rows.map_or(Value::Null, Value::UInt),
        s.filtered
            .map_or(Value::Null, |f| Value::str(&format!("{f:.2}"))),
        text(&extra),
    ]
}

fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn put(fields: &mut Vec<String>, k: &str, v: Option<String>) {
    if let Some(v) = v {
        fields.push(format!("{}: {}", quoted(k), quoted(&v)));
    }
}

/// One table of FORMAT=JSON, its members in MySQL's order.
fn json_table(s: &Step) -> String {
    let mut fields = vec![format!("\"select_id\": {}", s.id)];
    put(&mut fields, "table_name", s.table.clone());
    put(&mut fields, "access_type", s.kind.map(str::to_string));
    if !s.possible_keys.is_empty() {
        let keys: Vec<String> = s.possible_keys.iter().map(|k| quoted(k)).collect();
        fields.push(format!("\"possible_keys\": [{}]", keys.join(", ")));
    }
    put(&mut fields, "key", s.key.clone());
    put(&mut fields, "key_length", s.key_len.map(|n| n.to_string()));
    put(&mut fields, "ref", s.key_ref.clone());
    put(&mut fields, "extra", extra(s));
    if let Some(r) = s.rows {
        fields.push(format!("\"rows_examined_per_scan\": {r}"));
    }
    put(
        &mut fields,
        "filtered",
        s.filtered.map(|f| format!("{f:.2}")),
    );
    format!("{{\"table\": {{{}}}}}", fields.join(", "))
}

/// FORMAT=JSON: a query block with the tables in join order.
pub fn json(steps: &[Step]) -> String {
    let tables: Vec<String> = steps.iter().map(json_table).collect();
    format!(
        "{{\"query_block\": {{\"select_id\": 1, \"nested_loop\": [{}]}}}}",
        tables.join(", ")
    )
}
