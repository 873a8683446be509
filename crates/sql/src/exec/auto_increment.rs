//! AUTO_INCREMENT values under auto_increment_increment and
//! auto_increment_offset (MySQL's multi-source settings): every generated
//! value is offset + N * increment, the smallest such value at or above
//! the table's counter (which holds the largest value used, plus one).

use super::SessionCtx;
use std::sync::atomic::{AtomicU64, Ordering};

/// The session's (increment, offset), each clamped to 1..=65535 as MySQL
/// does; an offset above the increment is ignored (taken as 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub increment: u64,
    pub offset: u64,
}

impl Step {
    pub const ONE: Step = Step {
        increment: 1,
        offset: 1,
    };

    pub fn of(ctx: &SessionCtx) -> Step {
        let read = |name| {
            (ctx.system_var)(ctx, false, name)
                .ok()
                .and_then(|v| v.to_i64())
                .map_or(1, |n| n.clamp(1, 65535) as u64)
        };
        let increment = read("auto_increment_increment");
        let offset = read("auto_increment_offset");
        let offset = if offset > increment { 1 } else { offset };
        Step { increment, offset }
    }

    /// The first value of the series at or above `counter`.
    fn align(self, counter: u64) -> u64 {
        if counter <= self.offset {
            return self.offset;
        }
        let steps = (counter - self.offset).div_ceil(self.increment);
        self.offset
            .saturating_add(steps.saturating_mul(self.increment))
    }

    /// Takes the next value from `counter` (atomically: concurrent
    /// inserts get distinct values of the series).
    pub fn next(self, counter: &AtomicU64) -> u64 {
        if self == Step::ONE {
            return counter.fetch_add(1, Ordering::SeqCst);
        }
        let prev = counter
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| {
                Some(self.align(c).saturating_add(1))
            })
            .unwrap_or_else(|c| c);
        let v = self.align(prev);
        debug_assert_eq!((v - self.offset) % self.increment, 0);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_series_from_the_counter() {
        let step = Step {
            increment: 10,
            offset: 3,
        };
        let c = AtomicU64::new(1);
        assert_eq!(step.next(&c), 3);
        assert_eq!(step.next(&c), 13);
        c.fetch_max(40, Ordering::SeqCst); // an explicit 39 was inserted
        assert_eq!(step.next(&c), 43);
        assert_eq!(Step::ONE.next(&c), 44);
        let d = AtomicU64::new(5);
        assert_eq!(
            Step {
                increment: 2,
                offset: 1
            }
            .next(&d),
            5
        );
        assert_eq!(
            Step {
                increment: 2,
                offset: 2
            }
            .next(&d),
            6
        );
    }
}
