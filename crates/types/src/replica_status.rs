//! What a replica reports of its I/O task, its SQL task and the SQL
//! task's workers: kept by the replication crate as it runs, shown by the
//! SQL layer as performance_schema's replication_* tables. Here because
//! both crates use it and neither depends on the other.

/// One transaction as a replica task handled it. Times are microseconds
/// since the epoch; 0 means none or not known (MySQL then shows the zero
/// timestamp), an empty `gtid` that there is no such transaction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxnStamp {
    pub gtid: String,
    /// Commit on the server where it first committed; known only when
    /// that is the source itself (lockstep's records carry one time).
    pub original_commit_us: u64,
    /// Commit on the source this replica reads from.
    pub immediate_commit_us: u64,
    /// When this task started and ended its part (applying, queueing).
    pub start_us: u64,
    pub end_us: u64,
}

/// The error that stopped a task (number 0: none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskError {
    pub number: u16,
    pub message: String,
    pub at_us: u64,
}

/// One applier worker (replication_applier_status_by_worker).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerStatus {
    /// 1 to the number of workers.
    pub id: u64,
    pub running: bool,
    pub last_error: TaskError,
    pub last_applied: TxnStamp,
    /// The transaction in hand (`end_us` unused).
    pub applying: TxnStamp,
    /// Transactions this worker committed since START REPLICA.
    pub applied: u64,
    /// Transactions it found already executed and skipped.
    pub skipped: u64,
    /// Time spent with the row work done, waiting for the turn to commit
    /// (the source's order), in microseconds.
    pub commit_wait_us: u64,
    /// Retries of transactions after a deadlock or lock wait timeout,
    /// since START REPLICA.
    pub retries: u64,
    /// The retries of the transaction in hand, and the transient error
    /// that caused the newest one.
    pub applying_retries: u64,
    pub applying_transient: TaskError,
    /// The same of the last applied transaction.
    pub last_applied_retries: u64,
    pub last_applied_transient: TaskError,
}

/// The SQL task as coordinator (replication_applier_status_by_coordinator).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoordinatorStatus {
    pub last_error: TaskError,
    /// The newest transaction read from the relay log and queued for a
    /// worker (start: read, end: queued).
    pub last_processed: TxnStamp,
}

/// The I/O task (replication_connection_status).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStatus {
    pub heartbeats: u64,
    pub last_heartbeat_us: u64,
    pub last_error: TaskError,
    /// The newest transaction written to the relay log and made durable
    /// (start: received, end: durable).
    pub last_queued: TxnStamp,
    /// Received and being written (`end_us` unused).
    pub queueing: TxnStamp,
}
