//! ANALYZE TABLE ... UPDATE / DROP HISTOGRAM statements for a logged
//! SetHistograms event. lockstep logs a table's whole set of histograms;
//! MySQL logs the statement, and a replica builds the histogram from its
//! own rows. So the stream compares the new set with the one it last saw
//! for the table and writes the statements that lead from one to the
//! other.

use std::collections::HashMap;

use lockstep_tables::histogram::ColumnHistogram;
use lockstep_tables::TableDef;

fn q(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// What the stream knows of a table's histograms: (column, when built).
/// None: the table predates the stream's start, so any column may have
/// one.
pub type Known = Option<Vec<(String, String)>>;

/// The statements taking `table` from `before` to `after`: one UPDATE per
/// bucket count among new or rebuilt histograms, then one DROP for the
/// columns that lost theirs (every other column when `before` is
/// unknown; MySQL answers a column without one with a message row, not
/// an error).
pub fn statements(def: &TableDef, before: &Known, after: &[ColumnHistogram]) -> Vec<String> {
    let table = format!("{}.{}", q(&def.database), q(&def.name));
    let had = |c: &ColumnHistogram| {
        before.as_ref().is_some_and(|b| {
            b.iter()
                .any(|(n, at)| n == &c.column && at == &c.histogram.last_updated)
        })
    };
    let mut by_buckets: Vec<(u32, Vec<String>)> = Vec::new();
    for c in after.iter().filter(|c| !had(c)) {
        let n = c.histogram.buckets_specified;
        match by_buckets.iter_mut().find(|(b, _)| *b == n) {
            Some((_, cols)) => cols.push(q(&c.column)),
            None => by_buckets.push((n, vec![q(&c.column)])),
        }
    }
    let mut out: Vec<String> = by_buckets
        .into_iter()
        .map(|(n, cols)| {
            format!(
                "ANALYZE TABLE {table} UPDATE HISTOGRAM ON {} WITH {n} BUCKETS",
                cols.join(", ")
            )
        })
        .collect();
    let kept = |name: &str| after.iter().any(|c| c.column == name);
    let dropped: Vec<String> = match before {
        Some(b) => b.iter().map(|(n, _)| n.clone()).collect(),
        None => def.visible_columns().map(|(_, c)| c.name.clone()).collect(),
    };
    let dropped: Vec<String> = dropped.iter().filter(|n| !kept(n)).map(|n| q(n)).collect();
    if !dropped.is_empty() {
        out.push(format!(
            "ANALYZE TABLE {table} DROP HISTOGRAM ON {}",
            dropped.join(", ")
        ));
    }
    out
}

/// The set to remember after `after` was logged.
pub fn known(after: &[ColumnHistogram]) -> Known {
    Some(
        after
            .iter()
            .map(|c| (c.column.clone(), c.histogram.last_updated.clone()))
            .collect(),
    )
}

/// Per table id: what the stream has seen.
pub type Seen = HashMap<u32, Known>;
