//! GROUP BY ... WITH ROLLUP: the groups of every prefix of the GROUP BY
//! list, folded in one pass over the rows (one `Fold` per level), each row
//! marked with its level and the super-aggregate rows placed after the
//! groups they sum up.

use super::{Fold, Result, RowSink, ScanEnv, SourceRow};
use crate::expr::collated_sort_cmp;
use crate::plan::{AggregatePlan, SelectPlan};
use lockstep_types::Value;
use std::cmp::Ordering;

/// One fold per level: level k keeps the first k GROUP BY values.
struct Levels<'p> {
    folds: Vec<Fold<'p>>,
}

impl RowSink for Levels<'_> {
    fn push(&mut self, env: &mut ScanEnv, row: SourceRow) -> Result<bool> {
        for f in &mut self.folds {
            let grown = f.add(env, row.values())?;
            if grown > 0 {
                env.charge_temp(grown)?;
            }
        }
        Ok(true)
    }
}

impl super::Exec<'_> {
    /// The rollup rows of `agg`, the level of each at `level`.
    pub(super) fn rollup(
        &mut self,
        p: &SelectPlan,
        agg: &AggregatePlan,
        level: usize,
    ) -> Result<Vec<Vec<Value>>> {
        let n = agg.group_by.len();
        let mut levels = Levels {
            folds: (0..=n)
                .map(|keep| Fold::new(agg, None).keeping(keep))
                .collect(),
        };
        if levels.folds[0].streams() {
            self.produce(&p.source, &[], &p.filter, p.lock, &mut levels)?;
        } else {
            for row in self.source_rows(&p.source, &p.filter, p.lock, None)? {
                for f in &mut levels.folds {
                    let grown = match f.add(self, &row) {
                        Ok(grown) => grown,
                        Err(e) => return Err(self.pending.take().unwrap_or(e)),
                    };
                    self.charge_temp(grown)?;
                }
            }
        }
        let mut rows = Vec::new();
        let mut cut = self.concat_cut();
        for (keep, fold) in levels.folds.into_iter().enumerate() {
            for mut r in fold.finish(&mut cut) {
                r[level] = Value::Int(keep as i64);
                rows.push(r);
            }
        }
        self.report_cut(cut);
        rows.sort_by(|a, b| rollup_order(a, b, level, &agg.group_text));
        Ok(rows)
    }
}

/// Groups in ascending order of their values, each super-aggregate row
/// after every row that shares the values it keeps.
fn rollup_order(a: &[Value], b: &[Value], level: usize, text: &[bool]) -> Ordering {
    let keeps = |r: &[Value]| match r[level] {
        Value::Int(k) => k as usize,
        _ => text.len(),
    };
    let (ka, kb) = (keeps(a), keeps(b));
    for (i, &folded) in text.iter().enumerate() {
        match (i < ka, i < kb) {
            (false, false) => return Ordering::Equal,
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            (true, true) => match collated_sort_cmp(&a[i], &b[i], folded) {
                Ordering::Equal => {}
                o => return o,
            },
        }
    }
    Ordering::Equal
}
