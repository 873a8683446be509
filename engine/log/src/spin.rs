//! How long the log threads spin before they park: decided from how much
//! CPU the machine has spare (7.1.1; MySQL 8.0 does the same with
//! innodb_log_spin_cpu_abs_lwm and innodb_log_spin_cpu_pct_hwm).
//!
//! Why: a log thread that spins instead of parking saves the hand-off a
//! park costs (a futex wake-up and a context switch for every group), but
//! on a saturated machine its spinning holds a core a worker needs. On two
//! cores, spinning 2,048 iterations made write_only (which leaves 11-15% of
//! the CPU idle, waiting on fsync) 6-10% faster and read_write (no idle
//! time) 13% slower. So the log threads spin only while there is idle CPU.
//!
//! The signal is slow on purpose: system idle time over the last 200 ms
//! (/proc/stat), plus the time the log threads themselves spent spinning,
//! which would have been idle had they parked. A fast signal ("is a worker
//! parked right now?") flips thousands of times a second under full load
//! and did not tell the two cases apart.

use std::fs::File;
use std::io::Read;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Iterations while the machine has CPU to spare.
pub(crate) const LONG: u32 = 2048;
/// Spare CPU (share of all cores) at or above which the threads spin...
const SPARE_ON: f64 = 0.08;
/// ...and below which they park at once. Between the two, the last decision
/// holds, so the gate does not flap on noise.
const SPARE_OFF: f64 = 0.04;
/// How often the decision is taken again.
const PERIOD: Duration = Duration::from_millis(200);
/// /proc/stat counts in USER_HZ ticks, 100 a second on Linux.
const NS_PER_TICK: u64 = 10_000_000;

pub(crate) struct SpinGate {
    spins: AtomicU32,
    /// Nanoseconds the log threads spent spinning, ever.
    spun_ns: AtomicU64,
    /// Spare CPU in the last window, in thousandths (for SHOW STATUS).
    spare_permille: AtomicU32,
    sampler: Mutex<Sampler>,
}

struct Sampler {
    /// None where /proc/stat cannot be read: the spin stays fixed.
    stat: Option<File>,
    at: Instant,
    last: Option<CpuTimes>,
    spun_ns: u64,
}

/// Whole-machine CPU time from /proc/stat's first line, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CpuTimes {
    pub total: u64,
    /// idle + iowait: time no task wanted the CPU.
    pub idle: u64,
}

impl SpinGate {
    pub fn new() -> SpinGate {
        SpinGate {
            spins: AtomicU32::new(LONG),
            spun_ns: AtomicU64::new(0),
            spare_permille: AtomicU32::new(1000),
            sampler: Mutex::new(Sampler {
                stat: File::open("/proc/stat").ok(),
                at: Instant::now(),
                last: None,
                spun_ns: 0,
            }),
        }
    }

    /// Iterations to spin before parking.
    pub fn spins(&self) -> u32 {
        self.spins.load(Ordering::Relaxed)
    }

    pub fn spare_permille(&self) -> u32 {
        self.spare_permille.load(Ordering::Relaxed)
    }

    /// Counts time a log thread spent spinning.
    pub fn spun(&self, d: Duration) {
        self.spun_ns
            .fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Takes the decision again once a period has passed. Called by the log
    /// threads as they go idle; whichever comes first does the sampling.
    pub fn tick(&self) {
        let Some(mut s) = self.sampler.try_lock() else {
            return;
        };
        if s.at.elapsed() < PERIOD {
            return;
        }
        s.at = Instant::now();
        let Some(now) = s.stat.as_mut().and_then(read_cpu_times) else {
            return;
        };
        let spun = self.spun_ns.load(Ordering::Relaxed);
        if let Some(last) = s.last {
            let spare = spare(last, now, spun - s.spun_ns);
            self.spare_permille
                .store((spare * 1000.0) as u32, Ordering::Relaxed);
            let next = decide(self.spins(), spare);
            self.spins.store(next, Ordering::Relaxed);
        }
        s.last = Some(now);
        s.spun_ns = spun;
    }
}

fn read_cpu_times(f: &mut File) -> Option<CpuTimes> {
    use std::io::Seek;
    let mut buf = [0u8; 512];
    f.rewind().ok()?;
    let n = f.read(&mut buf).ok()?;
    parse_cpu_line(std::str::from_utf8(&buf[..n]).ok()?)
}

/// Parses the aggregate "cpu" line: user nice system idle iowait irq softirq
/// steal (guest time is already inside user and nice, so it is not added).
pub(crate) fn parse_cpu_line(text: &str) -> Option<CpuTimes> {
    let line = text.lines().next()?;
    let mut fields = line.split_ascii_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 5 {
        return None;
    }
    Some(CpuTimes {
        total: v.iter().sum(),
        idle: v[3] + v[4],
    })
}

/// Share of all CPU time in the window that was idle or spent spinning.
pub(crate) fn spare(last: CpuTimes, now: CpuTimes, spun_ns: u64) -> f64 {
    let total = now.total.saturating_sub(last.total) * NS_PER_TICK;
    if total == 0 {
        return 1.0;
    }
    let idle = now.idle.saturating_sub(last.idle) * NS_PER_TICK;
    ((idle + spun_ns) as f64 / total as f64).min(1.0)
}

/// The next spin budget, with hysteresis between the two thresholds.
pub(crate) fn decide(current: u32, spare: f64) -> u32 {
    if spare >= SPARE_ON {
        LONG
    } else if spare < SPARE_OFF {
        0
    } else {
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_aggregate_line_only() {
        let text = "cpu  100 5 50 800 20 1 2 7 0 0\ncpu0 50 2 25 400 10 0 1 3 0 0\n";
        assert_eq!(
            parse_cpu_line(text),
            Some(CpuTimes {
                total: 985,
                idle: 820
            })
        );
        assert_eq!(parse_cpu_line("cpu0 1 2 3 4 5\n"), None);
        assert_eq!(parse_cpu_line("cpu 1 2 x 4 5\n"), None);
        assert_eq!(parse_cpu_line(""), None);
    }

    #[test]
    fn own_spinning_counts_as_spare() {
        let a = CpuTimes { total: 0, idle: 0 };
        // 20 ticks over both cores, 1 idle: 5% idle.
        let b = CpuTimes { total: 20, idle: 1 };
        assert!((spare(a, b, 0) - 0.05).abs() < 1e-9);
        // Plus 20 ms of our own spinning: 15%.
        assert!((spare(a, b, 20_000_000) - 0.15).abs() < 1e-9);
        assert_eq!(spare(a, a, 0), 1.0);
    }

    #[test]
    fn spins_with_spare_cpu_parks_without_and_holds_between() {
        assert_eq!(decide(0, 0.12), LONG);
        assert_eq!(decide(LONG, 0.02), 0);
        assert_eq!(decide(LONG, 0.06), LONG);
        assert_eq!(decide(0, 0.06), 0);
    }
}
