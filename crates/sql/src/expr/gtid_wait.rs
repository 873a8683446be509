//! WAIT_FOR_EXECUTED_GTID_SET(set[, timeout]): waits until every GTID of
//! `set` is in gtid_executed. It polls the executed set in short sleeps
//! (the thread is handed off like SLEEP's, so it never spins nor stalls
//! other connections) and ends early when the statement is killed.

use super::{blocking_sleep, Env};
use lockstep_binlog::GtidSet;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(5);

fn malformed(text: &str) -> Error {
    Error::new(
        Code::MalformedGtidSet,
        format!("Malformed GTID set specification '{text}'."),
    )
}

/// 0 when the set is executed, 1 on timeout or when interrupted.
pub(super) fn wait_for_executed(vals: &[Value], env: &dyn Env) -> Result<Value, Error> {
    let text = String::from_utf8_lossy(&vals[0].to_text().unwrap_or_default()).into_owned();
    let want = GtidSet::parse(&text).map_err(|_| malformed(&text))?;
    let secs = match vals.get(1) {
        None => 0.0,
        Some(v) => v.to_f64().unwrap_or(0.0),
    };
    if secs < 0.0 || !secs.is_finite() {
        return Err(Error::new(
            Code::WrongArguments,
            "Incorrect arguments to WAIT_FOR_EXECUTED_GTID_SET.",
        ));
    }
    // 0 (or none) waits for ever, as in MySQL.
    let end =
        (secs > 0.0).then(|| Instant::now() + Duration::from_secs_f64(secs.min(31_536_000.0)));
    loop {
        let executed = env.system_var(true, "gtid_executed")?;
        let executed =
            String::from_utf8_lossy(&executed.to_text().unwrap_or_default()).into_owned();
        if want.is_subset(&GtidSet::parse(&executed).map_err(|_| malformed(&executed))?) {
            return Ok(Value::Int(0));
        }
        if env.interrupted() {
            return Ok(Value::Int(1));
        }
        let left = end.map_or(POLL, |e| e.saturating_duration_since(Instant::now()));
        if left.is_zero() {
            return Ok(Value::Int(1));
        }
        blocking_sleep(left.min(POLL));
    }
}
