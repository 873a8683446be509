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

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_tables::histogram::{Histogram, Kind};
    use lockstep_tables::ColumnDef;
    use lockstep_types::DataType;

    fn def() -> TableDef {
        let col = |name: &str| ColumnDef::plain(name, DataType::Int { unsigned: false });
        TableDef {
            id: 7,
            database: "d".into(),
            name: "t`x".into(),
            columns: vec![col("a"), col("b"), col("c")],
            indexes: Vec::new(),
            hidden_row_id: None,
            collation: 0,
        }
    }

    fn hist(column: &str, buckets: u32, at: &str) -> ColumnHistogram {
        ColumnHistogram {
            column: column.into(),
            histogram: Histogram {
                kind: Kind::Singleton,
                buckets: Vec::new(),
                null_fraction: 0.0,
                sampling_rate: 1.0,
                buckets_specified: buckets,
                last_updated: at.into(),
            },
        }
    }

    #[test]
    fn statements_lead_from_the_known_set_to_the_new_one() {
        let t = "ANALYZE TABLE `d`.`t``x`";
        let after = [hist("a", 8, "1"), hist("b", 8, "1"), hist("c", 100, "1")];
        assert_eq!(
            statements(&def(), &Some(Vec::new()), &after),
            vec![
                format!("{t} UPDATE HISTOGRAM ON `a`, `b` WITH 8 BUCKETS"),
                format!("{t} UPDATE HISTOGRAM ON `c` WITH 100 BUCKETS"),
            ]
        );
        // b rebuilt, c dropped, a unchanged.
        let now = [hist("a", 8, "1"), hist("b", 8, "2")];
        assert_eq!(
            statements(&def(), &known(&after), &now),
            vec![
                format!("{t} UPDATE HISTOGRAM ON `b` WITH 8 BUCKETS"),
                format!("{t} DROP HISTOGRAM ON `c`"),
            ]
        );
        assert!(statements(&def(), &known(&now), &now).is_empty());
    }

    #[test]
    fn an_unknown_start_drops_every_other_column() {
        let got = statements(&def(), &None, &[hist("b", 4, "1")]);
        assert_eq!(
            got,
            vec![
                "ANALYZE TABLE `d`.`t``x` UPDATE HISTOGRAM ON `b` WITH 4 BUCKETS".to_string(),
                "ANALYZE TABLE `d`.`t``x` DROP HISTOGRAM ON `a`, `c`".to_string(),
            ]
        );
    }
}
