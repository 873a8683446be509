//! performance_schema's replication status tables, with MySQL 8.0's
//! columns in MySQL's order: replication_connection_status (the I/O
//! task), replication_applier_status, _by_coordinator (the SQL task) and
//! _by_worker (its worker slots). Empty until a source is configured,
//! as in MySQL; the rows stay after STOP REPLICA with SERVICE_STATE OFF.
//!
//! What lockstep has no counterpart for shows what MySQL shows when the
//! feature is off or unused: THREAD_ID is NULL (the tasks are not
//! threads and there is no performance_schema.threads to join), GROUP_NAME
//! is empty (no Group Replication), REMAINING_DELAY is NULL (no
//! SOURCE_DELAY). The retry columns count whole-transaction retries
//! after a deadlock or lock wait timeout (replica_transaction_retries,
//! `Engine::apply_ordered`).

use super::infoschema::table_in;
use super::replication::ReplicaStatus;
use super::Session;
use lockstep_engine::catalog::Catalog;
use lockstep_types::replica_status::{TaskError, TxnStamp, WorkerStatus};
use lockstep_types::{DataType, DateTime, Value};

const PS: &str = "performance_schema";
/// Catalog ids of the four tables (connect_attrs has 60 and 61).
const CONNECTION_ID: u32 = 110;
const APPLIER_ID: u32 = 111;
const COORDINATOR_ID: u32 = 112;
const WORKER_ID: u32 = 113;

const NAME: DataType = DataType::Char { len: 64 };
const GTID: DataType = DataType::Char { len: 57 };
const ID: DataType = DataType::BigInt { unsigned: true };
const STATE: DataType = DataType::Enum { len: 10 };
const NUMBER: DataType = DataType::Int { unsigned: false };
const MESSAGE: DataType = DataType::VarChar { len: 1024 };
const TIME: DataType = DataType::Timestamp { fsp: 6 };

/// The four tables, from the replica's status (none: no source).
pub(super) fn tables(cat: &Catalog, session: &Session) {
    let status = session.server.replica.get().and_then(|r| r.status());
    let st = status.as_ref();
    connection_status(cat, st);
    applier_status(cat, st);
    coordinator_status(cat, st);
    worker_status(cat, st);
}

/// A timestamp column: MySQL's zero timestamp for none.
fn time(us: u64) -> Value {
    if us == 0 {
        return Value::DateTime(DateTime::default());
    }
    Value::DateTime(DateTime::from_unix_micros(us as i64))
}

fn on_off(on: bool) -> Value {
    Value::str(if on { "ON" } else { "OFF" })
}

fn error_columns(prefix: &str) -> Vec<(String, DataType)> {
    [
        ("NUMBER", NUMBER),
        ("MESSAGE", MESSAGE),
        ("TIMESTAMP", TIME),
    ]
    .into_iter()
    .map(|(n, t)| (format!("{prefix}_{n}"), t))
    .collect()
}

fn error_values(e: &TaskError) -> [Value; 3] {
    [
        Value::Int(e.number as i64),
        Value::str(&e.message),
        time(if e.number == 0 { 0 } else { e.at_us }),
    ]
}

/// A transaction's columns: its GTID, commit times and the task's own
/// times (`ends`: with the end time).
fn txn_columns(prefix: &str, what: &str, ends: bool) -> Vec<(String, DataType)> {
    let mut cols = vec![
        (prefix.to_string(), GTID),
        (format!("{prefix}_ORIGINAL_COMMIT_TIMESTAMP"), TIME),
        (format!("{prefix}_IMMEDIATE_COMMIT_TIMESTAMP"), TIME),
        (format!("{prefix}_START_{what}_TIMESTAMP"), TIME),
    ];
    if ends {
        cols.push((format!("{prefix}_END_{what}_TIMESTAMP"), TIME));
    }
    cols
}

fn txn_values(t: &TxnStamp, ends: bool) -> Vec<Value> {
    let mut v = vec![
        Value::str(&t.gtid),
        time(t.original_commit_us),
        time(t.immediate_commit_us),
        time(t.start_us),
    ];
    if ends {
        v.push(time(t.end_us));
    }
    v
}

fn add(cat: &Catalog, id: u32, name: &str, cols: Vec<(String, DataType)>, rows: Vec<Vec<Value>>) {
    debug_assert!(rows.iter().all(|r| r.len() == cols.len()));
    let cols: Vec<(&str, DataType)> = cols.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    table_in(cat, PS, id, name, &cols, rows);
}

fn named(cols: &[(&str, DataType)]) -> Vec<(String, DataType)> {
    cols.iter().map(|(n, t)| (n.to_string(), *t)).collect()
}

fn connection_status(cat: &Catalog, st: Option<&ReplicaStatus>) {
    let mut cols = named(&[
        ("CHANNEL_NAME", NAME),
        ("GROUP_NAME", NAME),
        ("SOURCE_UUID", NAME),
        ("THREAD_ID", ID),
        ("SERVICE_STATE", STATE),
        ("COUNT_RECEIVED_HEARTBEATS", ID),
        ("LAST_HEARTBEAT_TIMESTAMP", TIME),
        (
            "RECEIVED_TRANSACTION_SET",
            DataType::Text { max_len: 65535 },
        ),
    ]);
    cols.extend(error_columns("LAST_ERROR"));
    cols.extend(txn_columns("LAST_QUEUED_TRANSACTION", "QUEUE", true));
    cols.extend(txn_columns("QUEUEING_TRANSACTION", "QUEUE", false));
    let rows = st.map(|s| {
        let c = &s.connection;
        let state = match s.io_running {
            "Yes" => "ON",
            "Connecting" => "CONNECTING",
            _ => "OFF",
        };
        let mut row = vec![
            Value::str(""),
            Value::str(""),
            Value::str(&s.source.1),
            Value::Null,
            Value::str(state),
            Value::UInt(c.heartbeats),
            time(c.last_heartbeat_us),
            Value::str(&s.retrieved),
        ];
        row.extend(error_values(&c.last_error));
        row.extend(txn_values(&c.last_queued, true));
        row.extend(txn_values(&c.queueing, false));
        row
    });
    let rows = rows.into_iter().collect();
    add(
        cat,
        CONNECTION_ID,
        "REPLICATION_CONNECTION_STATUS",
        cols,
        rows,
    );
}

fn applier_status(cat: &Catalog, st: Option<&ReplicaStatus>) {
    let cols = named(&[
        ("CHANNEL_NAME", NAME),
        ("SERVICE_STATE", STATE),
        ("REMAINING_DELAY", DataType::Int { unsigned: true }),
        ("COUNT_TRANSACTIONS_RETRIES", ID),
    ]);
    let rows = st.map(|s| {
        let retries = s.workers.iter().map(|w| w.retries).sum();
        vec![
            Value::str(""),
            on_off(s.sql_running),
            Value::Null,
            Value::UInt(retries),
        ]
    });
    let rows = rows.into_iter().collect();
    add(cat, APPLIER_ID, "REPLICATION_APPLIER_STATUS", cols, rows);
}

fn coordinator_status(cat: &Catalog, st: Option<&ReplicaStatus>) {
    let mut cols = named(&[
        ("CHANNEL_NAME", NAME),
        ("THREAD_ID", ID),
        ("SERVICE_STATE", STATE),
    ]);
    cols.extend(error_columns("LAST_ERROR"));
    cols.extend(txn_columns("LAST_PROCESSED_TRANSACTION", "BUFFER", true));
    cols.extend(txn_columns("PROCESSING_TRANSACTION", "BUFFER", false));
    let rows = st.map(|s| {
        let c = &s.coordinator;
        let mut row = vec![Value::str(""), Value::Null, on_off(s.sql_running)];
        row.extend(error_values(&c.last_error));
        row.extend(txn_values(&c.last_processed, true));
        // A record is decoded and queued without a pause: none is ever
        // seen half-processed.
        row.extend(txn_values(&TxnStamp::default(), false));
        row
    });
    let rows = rows.into_iter().collect();
    add(
        cat,
        COORDINATOR_ID,
        "REPLICATION_APPLIER_STATUS_BY_COORDINATOR",
        cols,
        rows,
    );
}

fn worker_status(cat: &Catalog, st: Option<&ReplicaStatus>) {
    let mut cols = named(&[
        ("CHANNEL_NAME", NAME),
        ("WORKER_ID", ID),
        ("THREAD_ID", ID),
        ("SERVICE_STATE", STATE),
    ]);
    cols.extend(error_columns("LAST_ERROR"));
    cols.extend(txn_columns("LAST_APPLIED_TRANSACTION", "APPLY", true));
    cols.extend(txn_columns("APPLYING_TRANSACTION", "APPLY", false));
    for txn in ["LAST_APPLIED_TRANSACTION", "APPLYING_TRANSACTION"] {
        cols.push((format!("{txn}_RETRIES_COUNT"), ID));
        cols.extend(error_columns(&format!("{txn}_LAST_TRANSIENT_ERROR")));
    }
    // lockstep's own, after MySQL's: what each worker did since START
    // REPLICA, and its wait for the source's commit order.
    cols.extend(named(&[
        ("COUNT_TRANSACTIONS_APPLIED", ID),
        ("COUNT_TRANSACTIONS_SKIPPED", ID),
        ("COMMIT_ORDER_WAIT_MICROSECONDS", ID),
    ]));
    let rows = st
        .map(|s| s.workers.iter().map(worker_row).collect())
        .unwrap_or_default();
    add(
        cat,
        WORKER_ID,
        "REPLICATION_APPLIER_STATUS_BY_WORKER",
        cols,
        rows,
    );
}

fn worker_row(w: &WorkerStatus) -> Vec<Value> {
    let mut row = vec![
        Value::str(""),
        Value::UInt(w.id),
        Value::Null,
        on_off(w.running),
    ];
    row.extend(error_values(&w.last_error));
    row.extend(txn_values(&w.last_applied, true));
    row.extend(txn_values(&w.applying, false));
    row.push(Value::UInt(w.last_applied_retries));
    row.extend(error_values(&w.last_applied_transient));
    row.push(Value::UInt(w.applying_retries));
    row.extend(error_values(&w.applying_transient));
    row.extend([
        Value::UInt(w.applied),
        Value::UInt(w.skipped),
        Value::UInt(w.commit_wait_us),
    ]);
    row
}
