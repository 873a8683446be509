//! lockstep's benchmark driver: TPC-C (BenchmarkSQL's schema and
//! transaction mix) against any MySQL-compatible server, through
//! `lockstep-client`. The harness under bench/ runs it side by side with
//! sysbench against lockstep and MariaDB.

pub mod hist;
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
