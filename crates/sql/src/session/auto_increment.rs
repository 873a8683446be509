//! The AUTO_INCREMENT table option and the ENGINE clause of CREATE TABLE.
//!
//! `ALTER TABLE t AUTO_INCREMENT=n` alone needs no rebuild: the counter is
//! set under the table's exclusive metadata lock and logged
//! (`lockstep_engine::auto_increment`). With other clauses it is refused
//! (1235) rather than run in two steps a crash could split.
//!
//! Every table is transactional (InnoDB's behaviour); a CREATE TABLE
//! that names another engine MySQL has gets InnoDB with warning 1266, as
//! MySQL substitutes an unavailable engine, and a name no MySQL engine
//! has is refused with 1286.

use super::online_alter::{choose, Change};
use super::{Session, R};
use crate::parser::{AlterAction, DdlOptions, ObjectName};
use lockstep_types::error::Code;
use lockstep_types::Error;

/// Engines of MySQL and MariaDB that a CREATE TABLE may name.
const OTHER_ENGINES: &[&str] = &[
    "MyISAM",
    "MEMORY",
    "HEAP",
    "CSV",
    "ARCHIVE",
    "BLACKHOLE",
    "MRG_MYISAM",
    "MERGE",
    "FEDERATED",
    "EXAMPLE",
    "NDB",
    "NDBCLUSTER",
    "Aria",
    "RocksDB",
    "TokuDB",
];

/// MySQL 8's engines besides InnoDB and PERFORMANCE_SCHEMA, with the
/// comment its SHOW ENGINES gives each (listed there as unavailable).
pub(super) const MYSQL_ENGINES: &[(&str, &str)] = &[
    (
        "MEMORY",
        "Hash based, stored in memory, useful for temporary tables",
    ),
    ("MRG_MYISAM", "Collection of identical MyISAM tables"),
    ("CSV", "CSV storage engine"),
    ("FEDERATED", "Federated MySQL storage engine"),
    ("MyISAM", "MyISAM storage engine"),
    (
        "BLACKHOLE",
        "/dev/null storage engine (anything you write to it disappears)",
    ),
    ("ARCHIVE", "Archive storage engine"),
];

/// Whether tables of `engine` (InnoDB or one of OTHER_ENGINES) keep
/// foreign keys: InnoDB and NDB do; MySQL parses and ignores the clauses
/// for the others.
pub(super) fn engine_has_foreign_keys(engine: &str) -> bool {
    ["InnoDB", "NDB", "NDBCLUSTER"]
        .iter()
        .any(|e| e.eq_ignore_ascii_case(engine))
}

impl Session {
    /// ALTER TABLE whose clauses are all AUTO_INCREMENT=n (the last one
    /// counts, as in MySQL): true when it ran; false when there are
    /// other clauses, or none.
    pub(super) async fn alter_auto_increment(
        &mut self,
        name: &ObjectName,
        actions: &[AlterAction],
        online: &DdlOptions,
    ) -> R<bool> {
        let mut next = None;
        for a in actions {
            let AlterAction::AutoIncrement(n) = a else {
                return Ok(false);
            };
            next = Some(*n);
        }
        let Some(next) = next else {
            return Ok(false);
        };
        let (t, mut lock) = self.table_for_online_ddl(name).await?;
        choose(online, Change::Metadata)?;
        self.upgrade(&mut lock).await?;
        self.engine.set_auto_increment(&t, next).await?;
        Ok(true)
    }

    /// The ENGINE clause of CREATE TABLE `table`: InnoDB, or another
    /// engine's name (warning 1266), or 1286.
    pub(super) fn check_engine(&mut self, engine: Option<&str>, table: &str) -> R<()> {
        let Some(engine) = engine else {
            return Ok(());
        };
        if engine.eq_ignore_ascii_case("InnoDB") {
            return Ok(());
        }
        if OTHER_ENGINES.iter().any(|e| e.eq_ignore_ascii_case(engine)) {
            let note = format!("Using storage engine InnoDB for table '{table}'");
            self.ctx
                .warnings
                .push(crate::exec::Condition::warning(1266, note));
            return Ok(());
        }
        Err(Error::new(
            Code::UnknownStorageEngine,
            format!("Unknown storage engine '{engine}'"),
        ))
    }
}
