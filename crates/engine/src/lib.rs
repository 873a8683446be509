//! The storage engine of one lockstep node (brief: crates/txn, crates/lock,
//! crates/tables, log, recovery): what a SQL statement reads and writes
//! through, and what a commit goes through.

pub mod alter;
pub mod apply;
pub mod auto_increment;
pub mod catalog;
pub mod checkpoint;
pub mod checks;
pub mod comments;
pub mod durability;
pub mod engine;
pub mod foreign;
pub mod gap;
pub mod gates;
pub mod generated;
pub mod histograms;
pub mod mdl;
pub mod online_alter;
pub mod routines;
pub mod semisync;
pub mod stats_refresh;
pub mod txn;
pub mod views;

pub use alter::{keep_value, ConvertFn, Rename};
pub use apply::{Applied, ApplierSettings, ApplyOrder, Unordered};
pub use durability::{CommitPoint, Durability, DurabilityError, DurableWait, LocalDurability};
pub use engine::{lock_key, AccountChange, Duplicate, Engine, EngineConfig, Error, Result};
pub use generated::{no_generation, GenerateFn, RebuildLists, RowFn};
pub use lockstep_binlog::{CheckOption, ColumnSource, RoutineDef, RoutineKind, ViewDef};
pub use lockstep_lock::{GrantPolicy, LockError, LockMode};
pub use lockstep_log::FlushMode;
pub use mdl::DdlLocks;
pub use online_alter::{OnlineAlter, UpgradableLock};
pub use semisync::{OnTimeout, SemiSync, SemiSyncStatus};
pub use txn::{Isolation, LockWaitPolicy, Savepoint, Txn, TxnSummary};
