//! INTERSECT and EXCEPT, [ALL] or DISTINCT, over two sides' rows. Rows
//! compare as in UNION DISTINCT: text under the collation, NULLs equal.

use super::keyset::KeySet;
use super::{collation_key, Exec, Result};
use crate::parser::SetOp;
use lockstep_types::Value;

impl Exec<'_> {
    /// `left op right` for INTERSECT/EXCEPT: with ALL a row appears
    /// min(l, r) times (INTERSECT) or l - r times (EXCEPT); without ALL
    /// at most once.
    pub(super) fn intersect_except(
        &mut self,
        op: SetOp,
        all: bool,
        left: Vec<Vec<Value>>,
        right: Vec<Vec<Value>>,
        text: &[bool],
    ) -> Result<Vec<Vec<Value>>> {
        debug_assert!(op != SetOp::Union);
        // Count the right side's copies of each row.
        let mut keys = KeySet::default();
        let mut counts: Vec<usize> = Vec::new();
        for r in &right {
            let (i, grown) = keys.insert_with(|key| collation_key(r, text, key));
            if let Some(bytes) = grown {
                self.charge_temp(bytes)?;
                counts.push(0);
            }
            counts[i] += 1;
        }
        let mut out = Vec::new();
        let mut emitted = KeySet::default();
        for l in left {
            let (i, grown) = keys.insert_with(|key| collation_key(&l, text, key));
            if grown.is_some() {
                counts.push(0);
            }
            let in_right = counts[i] > 0;
            let keep = if all {
                if in_right {
                    counts[i] -= 1;
                }
                (op == SetOp::Intersect) == in_right
            } else {
                let first = emitted
                    .insert_with(|key| collation_key(&l, text, key))
                    .1
                    .is_some();
                first && (op == SetOp::Intersect) == in_right
            };
            if keep {
                out.push(l);
            }
        }
        Ok(out)
    }
}
