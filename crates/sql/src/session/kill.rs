//! KILL [CONNECTION | QUERY] id: sets the target session's flags; its
//! long loops poll them (`Interrupt`) and end with 1317 within ~100 ms.

use super::{ok, Session, R};
use crate::parser::Expr;
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::sync::atomic::Ordering;

impl Session {
    pub(super) fn kill(
        &self,
        connection_id: &Expr,
        query_only: bool,
        params: &[Value],
    ) -> R<Response> {
        let id = match connection_id {
            Expr::Literal(v) => v.to_i64().unwrap_or(-1),
            Expr::Param(i) => params.get(*i).and_then(|v| v.to_i64()).unwrap_or(-1),
            _ => -1,
        };
        let target = self.server.processes.lock().get(&(id as u64)).cloned();
        let Some(p) = target else {
            return Err(Error::new(
                Code::NoSuchThread,
                format!("Unknown thread id: {id}"),
            ));
        };
        if *p.user.lock() != self.grants.user
            && !self.grants.has_global(lockstep_accounts::Privs::SUPER)
        {
            return Err(Error::new(
                Code::KillDenied,
                format!("You are not owner of thread {id}"),
            ));
        }
        p.kill_query.store(true, Ordering::Relaxed);
        if !query_only {
            p.kill_connection.store(true, Ordering::Relaxed);
            p.idle_kill.notify_one();
        }
        p.kill_notify.notify_one();
        Ok(ok(0))
    }
}
