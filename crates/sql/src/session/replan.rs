//! Prepared statements whose plan depends on a parameter's value.
//!
//! MySQL plans a prepared statement at every EXECUTE, with the values
//! bound. lockstep binds once at PREPARE and keeps the plan, which is
//! right for most statements: point lookups and key ranges cost the same
//! whatever the value. A join whose order rests on a histogram's estimate
//! of `col < ?` is the exception: its binding kept those conditions
//! (`selectivity::Probe`). Each EXECUTE estimates them with its values,
//! and runs the plan bound for that range of estimates, binding it (with
//! the placeholders kept) the first time the range is met. Ranges are a
//! factor of 2 wide (estimates from 1 down to a millionth span 20), so
//! repeated executions find their plan; up to `KEPT` per statement are
//! kept, shared by every session running it.

use crate::plan::selectivity::Known;
use crate::session::statements::SharedStatement;
use crate::session::{Bound, Session};
use lockstep_types::{Error, Value};
use std::sync::Arc;

/// Plans kept per statement (more ranges than one condition's values
/// usually meet); the oldest goes first.
const KEPT: usize = 32;

/// The range of an estimate: powers of two, down to 2^-40.
fn bucket(kept: f64) -> i8 {
    let steps = kept.max(f64::MIN_POSITIVE).log2().floor();
    steps.clamp(-40.0, 0.0) as i8
}

/// Plans bound for ranges of a statement's parameter estimates.
#[derive(Default)]
pub(crate) struct Replans {
    plans: parking_lot::Mutex<Vec<(Vec<i8>, Arc<Bound>)>>,
}

impl Replans {
    fn get(&self, key: &[i8]) -> Option<Arc<Bound>> {
        let plans = self.plans.lock();
        plans.iter().find(|(k, _)| k == key).map(|(_, b)| b.clone())
    }

    fn put(&self, key: Vec<i8>, bound: Arc<Bound>) {
        let mut plans = self.plans.lock();
        if plans.len() >= KEPT {
            plans.remove(0);
        }
        plans.push((key, bound));
    }
}

impl Session {
    /// The plan of `s` for `params`, when its PREPARE-time plan `bound`
    /// waited for parameter values (None: that plan serves).
    pub(super) fn replan(
        &self,
        s: &SharedStatement,
        bound: &Bound,
        params: &[Value],
    ) -> Result<Option<Arc<Bound>>, Error> {
        debug_assert!(!bound.probes.is_empty());
        let known = Known {
            params: params.to_vec(),
            tz_offset: self.ctx.tz_offset,
            ..Known::default()
        };
        let key: Vec<i8> = bound
            .probes
            .iter()
            .map(|p| bucket(p.estimate(&known)))
            .collect();
        if let Some(plan) = s.replans.get(&key) {
            return Ok(Some(plan));
        }
        let mut b = self.binder();
        b.known.params = known.params;
        let Some(plan) = self.bind_by(b, &s.statement)? else {
            return Ok(None);
        };
        let plan = Arc::new(plan);
        s.replans.put(key, plan.clone());
        Ok(Some(plan))
    }
}

#[cfg(test)]
mod tests {
    use super::bucket;
    use crate::session::Bound;

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!(bucket(1.0), 0);
        assert_eq!(bucket(0.75), -1);
        assert_eq!(bucket(0.5), -1);
        assert_eq!(bucket(0.26), -2);
        assert_eq!(bucket(0.0), -40);
        assert_ne!(bucket(0.01), bucket(0.5));
    }

    impl crate::session::Prepared {
        /// The first table of each plan kept for a range of estimates.
        pub(crate) fn replanned_first_tables(&self) -> Vec<String> {
            let plans = self.shared.replans.plans.lock();
            let first = |b: &Bound| match &b.plan {
                crate::session::Plan::Query(q) => match &q.body {
                    crate::plan::QueryBody::Select(s) => crate::plan::explain(&s.source)
                        .first()
                        .map(|(t, _)| t.clone()),
                    _ => None,
                },
                _ => None,
            };
            plans.iter().filter_map(|(_, b)| first(b)).collect()
        }
    }
}
