//! Transaction control statements: BEGIN, ROLLBACK, savepoints and SET
//! TRANSACTION (COMMIT is `Session::commit`, shared with implicit commits).

use super::{ok, Session, R};
use crate::parser::Scope as AstScope;
use lockstep_engine::Isolation;
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};

impl Session {
    /// BEGIN / START TRANSACTION: the work before ends; the
    /// characteristics SET TRANSACTION gave are this new transaction's.
    /// Table locks go too.
    pub(super) async fn begin(
        &mut self,
        read_only: Option<bool>,
        consistent_snapshot: bool,
    ) -> R<Response> {
        self.engine.commit(&mut self.txn).await?;
        self.table_locks.release_tables();
        self.explicit = true;
        self.track.began = true;
        self.txn_read_only = read_only
            .or(self.next_read_only)
            .unwrap_or(self.session_read_only);
        self.engine.admit(&mut self.txn).await;
        if consistent_snapshot {
            // The view is taken now, not at the first read.
            self.engine.snapshot_now(&mut self.txn);
        }
        Ok(ok(0))
    }

    pub(super) fn rollback_statement(&mut self) -> Response {
        self.engine.rollback(&mut self.txn);
        self.explicit = false;
        self.apply_next_isolation();
        ok(0)
    }

    pub(super) fn rollback_to_savepoint(&mut self, name: &str) -> R<Response> {
        let at = self.find_savepoint(name)?;
        let sp = self.savepoints[at].1;
        self.engine.rollback_to(&mut self.txn, sp);
        self.savepoints.truncate(at + 1);
        Ok(ok(0))
    }

    pub(super) fn release_savepoint(&mut self, name: &str) -> R<Response> {
        let at = self.find_savepoint(name)?;
        self.savepoints.truncate(at);
        Ok(ok(0))
    }

    /// SET [GLOBAL | SESSION] TRANSACTION ...: without a scope, the next
    /// transaction only.
    pub(super) fn set_transaction(
        &mut self,
        scope: AstScope,
        isolation: Option<&str>,
        read_only: Option<bool>,
    ) -> R<Response> {
        if let Some(ro) = read_only {
            self.set_transaction_read_only(scope, ro)?;
        }
        let Some(level) = isolation else {
            return Ok(ok(0));
        };
        let iso = Isolation::parse(level).ok_or_else(|| Error::parse(level))?;
        match scope {
            AstScope::Global => {
                let globals = &self.server.globals;
                globals.set("transaction_isolation", Value::str(iso.name()))?;
                globals.set("tx_isolation", Value::str(iso.name()))?;
            }
            AstScope::Session => self.set_isolation(iso),
            AstScope::Next => {
                if self.explicit && self.txn.has_writes() {
                    return Err(Error::new(
                        Code::CantChangeTxCharacteristics,
                        "Transaction characteristics can't be changed while a transaction is in progress",
                    ));
                }
                self.next_isolation = Some(iso);
                self.txn.isolation = iso;
            }
        }
        Ok(ok(0))
    }
}
