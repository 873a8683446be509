//! The clock of a measured run, shared by the drivers: an unmeasured warmup,
//! then the measured duration, with a callback every interval for the time
//! series. Workers read `measuring` to decide whether to record a sample and
//! `stop` to know when to finish.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub struct Window {
    pub warmup: Duration,
    pub duration: Duration,
    /// Time between two `tick` calls.
    pub interval: Duration,
}

/// One time-series point: `t` seconds since the start, `dt` seconds since
/// the previous point, `warm` while the warmup lasts.
pub struct Tick {
    pub t: f64,
    pub dt: f64,
    pub warm: bool,
}

/// Runs the clock of `w`: sets `measuring` when the warmup ends, calls
/// `tick` every interval and at the end, then clears `measuring`, sets
/// `stop` and returns the measured seconds.
pub async fn run(
    w: &Window,
    measuring: &AtomicBool,
    stop: &AtomicBool,
    mut tick: impl FnMut(Tick),
) -> f64 {
    let start = Instant::now();
    let end = start + w.warmup + w.duration;
    let warmup_end = start + w.warmup;
    let mut measure_start = if w.warmup.is_zero() {
        measuring.store(true, Ordering::Relaxed);
        Some(start)
    } else {
        None
    };
    let mut last = start;
    let mut next_tick = start + w.interval;
    while Instant::now() < end {
        let mut wake = next_tick.min(end);
        if measure_start.is_none() {
            wake = wake.min(warmup_end);
        }
        tokio::time::sleep_until(wake.into()).await;
        let now = Instant::now();
        if measure_start.is_none() && now >= warmup_end {
            measuring.store(true, Ordering::Relaxed);
            measure_start = Some(now);
        }
        if now >= next_tick || now >= end {
            tick(Tick {
                t: now.duration_since(start).as_secs_f64(),
                dt: now.duration_since(last).as_secs_f64().max(1e-9),
                warm: now <= warmup_end,
            });
            last = now;
            while next_tick <= now {
                next_tick += w.interval;
            }
        }
    }
    measuring.store(false, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    measure_start
        .map(|m| Instant::now().duration_since(m))
        .unwrap_or_default()
        .as_secs_f64()
        .max(1e-9)
}

/// Waits for the workers to finish their last transaction, aborting those
/// still running after `grace`; returns how many were aborted.
pub async fn join_within(handles: Vec<tokio::task::JoinHandle<()>>, grace: Duration) -> usize {
    let deadline = Instant::now() + grace;
    let mut unfinished = 0;
    for h in handles {
        let left = deadline.saturating_duration_since(Instant::now());
        let abort = h.abort_handle();
        if tokio::time::timeout(left, h).await.is_err() {
            abort.abort();
            unfinished += 1;
        }
    }
    unfinished
}
