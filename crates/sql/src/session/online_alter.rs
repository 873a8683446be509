//! How an ALTER TABLE (or CREATE / DROP INDEX) locks its table: MySQL's
//! ALGORITHM= and LOCK= clauses checked against what the change allows,
//! and the shared-upgradable metadata lock an online rebuild holds while
//! it copies (`lockstep_engine::online_alter`).

use super::{system_var, until_killed, Session, MAX_WAIT_TIMEOUT, R};
use crate::parser::{AlterAlgorithm, AlterLock, DdlOptions, ObjectName};
use lockstep_binlog::ColumnSource;
use lockstep_engine::UpgradableLock;
use lockstep_tables::Table;
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;
use std::time::Duration;

/// What a planned change needs, as far as locking goes.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Change {
    /// Only the catalog moves (rename, DROP INDEX): exclusive, instant.
    Metadata,
    /// Constraints checked against every row (ADD FOREIGN KEY, ADD CHECK
    /// alone): done under the exclusive lock, like a copy.
    Validate,
    /// A rebuild whose rows depend on their order (a counter fills a
    /// column): not online; the reason as MySQL words it.
    Ordered(&'static str),
    /// A rebuild that can run online.
    Rebuild,
}

/// How the change runs.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Mode {
    Exclusive,
    Online,
}

/// The mode `options` ask for on `change`, or MySQL's error when they
/// ask for what the change cannot do (1845, 1846).
pub(super) fn choose(options: &DdlOptions, change: Change) -> R<Mode> {
    let lock = options.lock.unwrap_or(AlterLock::Default);
    let algorithm = options.algorithm.unwrap_or(AlterAlgorithm::Default);
    if lock == AlterLock::Shared {
        return Err(Error::unsupported(
            "LOCK=SHARED (use LOCK=NONE or LOCK=EXCLUSIVE)",
        ));
    }
    if algorithm == AlterAlgorithm::Instant && change != Change::Metadata {
        return Err(Error::new(
            Code::AlterOperationNotSupported,
            "ALGORITHM=INSTANT is not supported for this operation. Try ALGORITHM=COPY/INPLACE.",
        ));
    }
    let reason = match change {
        Change::Metadata => return Ok(Mode::Exclusive),
        Change::Rebuild if algorithm != AlterAlgorithm::Copy => None,
        Change::Ordered(why) => Some(why),
        Change::Validate | Change::Rebuild => Some("COPY algorithm requires a lock"),
    };
    match (reason, lock) {
        (Some(why), AlterLock::None) => Err(Error::new(
            Code::AlterOperationNotSupportedReason,
            format!("LOCK=NONE is not supported. Reason: {why}. Try LOCK=SHARED."),
        )),
        (Some(_), _) | (None, AlterLock::Exclusive) => Ok(Mode::Exclusive),
        (None, _) => Ok(Mode::Online),
    }
}

/// The change a rebuild with these column sources is.
pub(super) fn rebuild_change(sources: &[ColumnSource], adds_auto_increment: bool) -> Change {
    if !sources.contains(&ColumnSource::Counter) {
        Change::Rebuild
    } else if adds_auto_increment {
        Change::Ordered("Adding an auto-increment column requires a lock")
    } else {
        Change::Ordered(
            "Dropping a primary key is not allowed without also adding a new primary key",
        )
    }
}

/// CREATE INDEX: true to build the index in place under the exclusive
/// lock (LOCK=EXCLUSIVE, ALGORITHM=COPY), false to run it online as
/// ALTER TABLE ADD INDEX.
pub(super) fn index_in_place(options: &DdlOptions) -> R<bool> {
    Ok(choose(options, Change::Rebuild)? == Mode::Exclusive)
}

impl Session {
    /// lock_wait_timeout, as DDL waits it.
    pub(super) fn ddl_timeout(&self) -> Duration {
        let secs = system_var(&self.server, &self.ctx, false, "lock_wait_timeout")
            .ok()
            .and_then(|v| v.to_i64())
            .map_or(MAX_WAIT_TIMEOUT, |s| s.clamp(1, MAX_WAIT_TIMEOUT));
        Duration::from_secs(secs as u64)
    }

    /// The table `name` under its shared-upgradable metadata lock: other
    /// DDL on it waits, its readers and writers do not.
    pub(super) async fn table_for_online_ddl(
        &self,
        name: &ObjectName,
    ) -> R<(Arc<Table>, UpgradableLock)> {
        let binder = self.binder();
        loop {
            let t = binder.table(name)?;
            if t.temporary {
                return Err(Error::unsupported("this DDL on a temporary table"));
            }
            if self.table_locks.active() {
                // Held exclusive by LOCK TABLES ... WRITE already.
                self.table_locks.ddl_tables(std::slice::from_ref(&t))?;
                return Ok((t.clone(), UpgradableLock::held_by_caller(t)));
            }
            let wait = self.engine.lock_upgradable(&t, self.ddl_timeout());
            let lock = until_killed(&self.process, wait).await?;
            if Arc::ptr_eq(&t, &binder.table(name)?) {
                return Ok((t, lock));
            }
        }
    }

    /// Upgrades `lock` to exclusive (1205 past lock_wait_timeout, 1317 on
    /// KILL).
    pub(super) async fn upgrade(&self, lock: &mut UpgradableLock) -> R<()> {
        let timeout = self.ddl_timeout();
        until_killed(&self.process, lock.upgrade(timeout)).await
    }

    /// Bytes an online ALTER may spend on captured keys: the statement's
    /// memory cap.
    pub(super) fn capture_limit(&self) -> usize {
        system_var(&self.server, &self.ctx, false, "query_memory_limit")
            .ok()
            .and_then(|v| v.to_i64())
            .map_or(usize::MAX, |n| n.max(0) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(algorithm: Option<AlterAlgorithm>, lock: Option<AlterLock>) -> DdlOptions {
        DdlOptions { algorithm, lock }
    }

    #[test]
    fn clauses_against_changes() {
        let none = Some(AlterLock::None);
        let copy = Some(AlterAlgorithm::Copy);
        let instant = Some(AlterAlgorithm::Instant);
        assert_eq!(
            choose(&opts(None, None), Change::Rebuild).unwrap(),
            Mode::Online
        );
        assert_eq!(
            choose(&opts(None, none), Change::Rebuild).unwrap(),
            Mode::Online
        );
        let x = Some(AlterLock::Exclusive);
        assert_eq!(
            choose(&opts(None, x), Change::Rebuild).unwrap(),
            Mode::Exclusive
        );
        assert_eq!(
            choose(&opts(copy, None), Change::Rebuild).unwrap(),
            Mode::Exclusive
        );
        assert_eq!(
            choose(&opts(copy, none), Change::Rebuild)
                .unwrap_err()
                .code
                .number(),
            1846
        );
        assert_eq!(
            choose(&opts(instant, None), Change::Rebuild)
                .unwrap_err()
                .code
                .number(),
            1845
        );
        assert_eq!(
            choose(&opts(instant, none), Change::Metadata).unwrap(),
            Mode::Exclusive
        );
        let ordered = rebuild_change(&[ColumnSource::Counter], true);
        assert_eq!(
            choose(&opts(None, none), ordered)
                .unwrap_err()
                .code
                .number(),
            1846
        );
        assert_eq!(choose(&opts(None, None), ordered).unwrap(), Mode::Exclusive);
        let shared = Some(AlterLock::Shared);
        assert_eq!(
            choose(&opts(None, shared), Change::Rebuild)
                .unwrap_err()
                .code
                .number(),
            1235
        );
    }
}
