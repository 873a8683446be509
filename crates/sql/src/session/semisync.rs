//! Semisynchronous replication's settings and status as a session sees
//! them; the waiting itself is the engine's (lockstep_engine::semisync).

use super::replication::wrong_value;
use super::{Session, R};
use lockstep_types::Value;

impl Session {
    /// SET GLOBAL of a semisync setting: rpl_semi_sync_source_enabled,
    /// _timeout (ms), _wait_for_replica_count, rpl_semi_sync_replica_enabled
    /// (takes effect at the replica's next connect, as in MySQL) and
    /// lockstep_semi_sync_on_timeout (ASYNC as MySQL, or ERROR).
    pub(super) fn set_semisync(&self, name: &str, v: Value) -> R<()> {
        let semi = &self.engine.semisync;
        let int = |lo: i64, hi: i64| match v.to_i64() {
            Some(n) if (lo..=hi).contains(&n) && int_like(&v) => Ok(n),
            _ => Err(wrong_value(name, &v)),
        };
        let stored = match name {
            "rpl_semi_sync_replica_enabled" => {
                let on = super::vars::bool_setting(name, &v)?;
                semi.set_replica_enabled(on);
                Value::Int(on as i64)
            }
            // Two names of one setting: both show the value.
            "rpl_semi_sync_source_enabled" | "rpl_semi_sync_master_enabled" => {
                let on = super::vars::bool_setting(name, &v)?;
                semi.set_enabled(on);
                let other = if name.contains("source") {
                    "rpl_semi_sync_master_enabled"
                } else {
                    "rpl_semi_sync_source_enabled"
                };
                self.server.globals.set(other, Value::Int(on as i64))?;
                Value::Int(on as i64)
            }
            "rpl_semi_sync_source_timeout" => {
                let ms = int(0, u32::MAX as i64)?;
                semi.set_timeout(ms as u64);
                Value::Int(ms)
            }
            "rpl_semi_sync_source_wait_for_replica_count" => {
                let n = int(1, 65535)?;
                semi.set_wait_count(n as u64);
                Value::Int(n)
            }
            _ => {
                let t = match v.to_string().to_ascii_uppercase().as_str() {
                    "ASYNC" => lockstep_engine::OnTimeout::Async,
                    "ERROR" => lockstep_engine::OnTimeout::Error,
                    _ => return Err(wrong_value(name, &v)),
                };
                semi.set_on_timeout(t);
                Value::str(&v.to_string().to_ascii_uppercase())
            }
        };
        self.server.globals.set(name, stored)
    }

    /// SHOW STATUS's semisync counters, MySQL's names.
    pub(super) fn semisync_status(&self) -> Vec<(&'static str, String)> {
        let st = self.engine.semisync.status();
        let on_off = |b: bool| if b { "ON" } else { "OFF" }.to_string();
        let replica = self
            .server
            .replica
            .get()
            .and_then(|r| r.status())
            .is_some_and(|r| r.semisync);
        vec![
            ("Rpl_semi_sync_source_status", on_off(st.on)),
            ("Rpl_semi_sync_source_clients", st.clients.to_string()),
            ("Rpl_semi_sync_source_yes_tx", st.yes_tx.to_string()),
            ("Rpl_semi_sync_source_no_tx", st.no_tx.to_string()),
            ("Rpl_semi_sync_replica_status", on_off(replica)),
        ]
    }
}

/// A number, not a string that happens to read as one (MySQL: 1232).
fn int_like(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::UInt(_) | Value::Decimal(_))
}
