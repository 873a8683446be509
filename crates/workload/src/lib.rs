//! lockstep's benchmark driver: TPC-C (BenchmarkSQL's schema and
//! transaction mix) against any MySQL-compatible server, through
//! `lockstep-client`. The harness under bench/ runs it side by side with
//! sysbench against lockstep and MariaDB.

pub mod clock;
pub mod hist;
pub mod oltp;
pub mod tpcc;

use lockstep_client::{Conn, Opts};
use std::time::{Duration, Instant};

/// Connects, retrying refused or failed attempts until `patience` has
/// passed (many terminals connecting at once can overrun a listen backlog).
pub async fn connect_retry(opts: &Opts, patience: Duration) -> Result<Conn, String> {
    let deadline = Instant::now() + patience;
    let mut delay = Duration::from_millis(20);
    loop {
        match Conn::connect(opts).await {
            Ok(c) => return Ok(c),
            // A server error (bad password, unknown database) will not fix itself.
            Err(e) if !e.is_fatal() && e.code() != Some(1040) => {
                return Err(format!("connect to {}:{}: {e}", opts.host, opts.port))
            }
            Err(e) if Instant::now() >= deadline => {
                return Err(format!("connect to {}:{}: {e}", opts.host, opts.port))
            }
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_millis(500));
            }
        }
    }
}

/// Opens `n` connections at once with `open(i)`, in order; fails with the
/// first error.
pub async fn connect_all<F, Fut>(n: usize, open: F) -> Result<Vec<Conn>, String>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Result<Conn, String>> + Send + 'static,
{
    let mut pending = tokio::task::JoinSet::new();
    for i in 0..n {
        let f = open(i);
        pending.spawn(async move { (i, f.await) });
    }
    let mut slots: Vec<Option<Conn>> = (0..n).map(|_| None).collect();
    while let Some(r) = pending.join_next().await {
        let (i, c) = r.map_err(|e| e.to_string())?;
        slots[i] = Some(c.map_err(|e| format!("connection {i}: {e}"))?);
    }
    Ok(slots.into_iter().flatten().collect())
}
