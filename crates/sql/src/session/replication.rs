//! Replication administration as a session runs it. The replica itself
//! (its tasks, relay log, runtime) lives in the replication crate; the
//! server hands the SQL layer a `ReplicaControl` (Server::replica), so
//! this crate needs neither that crate nor its runtime.

use super::{ok, rows, Session, R};
use crate::parser::{ObjectName, ReplicaStatement, Statement};
use crate::session::privileges::Grants;
use lockstep_accounts::Privs;
use lockstep_types::error::Code;
use lockstep_types::replica_status::{
    ConnectionStatus, CoordinatorStatus, TaskError, WorkerStatus,
};
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::future::Future;
use std::pin::Pin;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What CHANGE REPLICATION SOURCE TO sets; None keeps the current value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceChange {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub auto_position: Option<bool>,
    pub get_public_key: Option<bool>,
}

/// SHOW REPLICA STATUS's values, as the replica reports them.
#[derive(Clone, Debug, Default)]
pub struct ReplicaStatus {
    pub io_state: String,
    pub host: String,
    pub user: String,
    pub port: u16,
    /// "Yes", "No" or "Connecting".
    pub io_running: &'static str,
    pub sql_running: bool,
    pub sql_state: String,
    pub seconds_behind: Option<u64>,
    /// The I/O task (Last_IO_Errno and the rest of Last_IO_*, received
    /// transactions and heartbeats), the SQL task (Last_SQL_*) and its
    /// workers, as performance_schema's replication tables show them.
    pub connection: ConnectionStatus,
    pub coordinator: CoordinatorStatus,
    pub workers: Vec<WorkerStatus>,
    /// The source's @@server_id and @@server_uuid.
    pub source: (u64, String),
    pub retrieved: String,
    pub executed: String,
    pub auto_position: bool,
    pub get_public_key: bool,
    /// Connected to the source as a semisync replica.
    pub semisync: bool,
}

/// The server's replica, as the SQL layer drives it.
pub trait ReplicaControl: Send + Sync {
    /// Fails with 3021 while the replica runs.
    fn change_source(&self, change: SourceChange) -> R<()>;
    /// Ok(false): it was running already.
    fn start(&self) -> BoxFuture<'_, R<bool>>;
    /// Waits for the applier to finish what it has in hand; Ok(false): it
    /// was not running.
    fn stop(&self) -> BoxFuture<'_, R<bool>>;
    /// Fails with 3081 while the replica runs.
    fn reset(&self, all: bool) -> R<()>;
    /// None: no source was ever configured.
    fn status(&self) -> Option<ReplicaStatus>;
}

/// CHANGE/START/STOP/RESET need REPLICATION_SLAVE_ADMIN (lockstep has no
/// dynamic privileges: SUPER stands for it), SHOW REPLICA STATUS needs
/// REPLICATION CLIENT or SUPER, as in MySQL 8.
pub(crate) fn check(grants: &Grants, stmt: &ReplicaStatement) -> R<()> {
    if grants.has_global(Privs::SUPER) {
        return Ok(());
    }
    match stmt {
        ReplicaStatement::ShowStatus { .. } if grants.has_global(Privs::REPLICATION_CLIENT) => {
            Ok(())
        }
        ReplicaStatement::ShowStatus { .. } => {
            Err(Grants::global_denied("SUPER, REPLICATION CLIENT"))
        }
        _ => Err(Grants::global_denied("SUPER or REPLICATION_SLAVE_ADMIN")),
    }
}

/// The options of a CHANGE REPLICATION SOURCE TO, checked.
fn source_change(options: &[(String, Value)]) -> R<SourceChange> {
    let mut c = SourceChange::default();
    for (name, v) in options {
        let text = || match v.to_text() {
            Some(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
            None => Err(wrong_value(name, v)),
        };
        let int = |max: u64| match v {
            Value::Int(i) if *i >= 0 && *i as u64 <= max => Ok(*i as u64),
            Value::UInt(u) if *u <= max => Ok(*u),
            _ => Err(wrong_value(name, v)),
        };
        match name.as_str() {
            "SOURCE_HOST" => c.host = Some(text()?),
            "SOURCE_USER" => c.user = Some(text()?),
            "SOURCE_PASSWORD" => c.password = Some(text()?),
            "SOURCE_PORT" => c.port = Some(int(u16::MAX as u64)? as u16),
            "SOURCE_AUTO_POSITION" if int(1)? == 1 => c.auto_position = Some(true),
            "GET_SOURCE_PUBLIC_KEY" => c.get_public_key = Some(int(1)? == 1),
            "SOURCE_AUTO_POSITION" => {
                return Err(Error::unsupported(
                    "SOURCE_AUTO_POSITION = 0 (replication by file and position)",
                ))
            }
            other => return Err(Error::unsupported(format!("the {other} option"))),
        }
    }
    if c.host.as_deref().is_some_and(str::is_empty) {
        return Err(Error::new(
            Code::WrongArguments,
            "Incorrect arguments to SOURCE_HOST",
        ));
    }
    Ok(c)
}

pub(super) fn wrong_value(name: &str, v: &Value) -> Error {
    Error::new(
        Code::WrongValueForVar,
        format!(
            "Variable '{}' can't be set to the value of '{}'",
            name,
            String::from_utf8_lossy(&v.to_text().unwrap_or_else(|| b"NULL".to_vec()))
        ),
    )
}

/// Whether a statement writes to the server's durable state (temporary
/// tables are the session's own: read_only lets them be written).
fn writes(stmt: &Statement, temp: &dyn Fn(&ObjectName) -> bool) -> bool {
    match stmt {
        Statement::Insert(i) => !temp(&i.table),
        // A multi-table form counts as a write whatever its targets.
        Statement::Update(u) => u.multi.is_some() || !temp(&u.table),
        Statement::Delete(d) => d.multi.is_some() || !temp(&d.table),
        Statement::CreateUser { .. }
        | Statement::DropUser { .. }
        | Statement::AlterUser { .. }
        | Statement::SetPassword { .. }
        | Statement::Grant { .. }
        | Statement::Revoke { .. }
        | Statement::RenameTable { .. } => true,
        Statement::Role(r) => !matches!(
            r,
            crate::parser::RoleStmt::Set(_) | crate::parser::RoleStmt::ShowGrants { .. }
        ),
        other => super::changes_schema(other),
    }
}

impl Session {
    /// read_only / super_read_only (a replica's usual settings): writes
    /// by clients fail with 1290; SUPER may still write under read_only.
    /// The replica's applier goes through the engine, not a session, so
    /// it is never refused.
    pub(super) fn refuse_read_only(&self, stmt: &Statement) -> R<()> {
        let db = self.ctx.database.clone().unwrap_or_default();
        let temp = |n: &ObjectName| {
            let d = n.database.clone().unwrap_or_else(|| db.clone());
            self.temp_tables.contains_key(&(d, n.name.clone()))
        };
        if !writes(stmt, &temp) {
            return Ok(());
        }
        let on = |name: &str| {
            let v = self.server.globals.get(name);
            v.and_then(|v| v.to_i64()).is_some_and(|v| v != 0)
        };
        let option = if on("super_read_only") {
            "--super-read-only"
        } else if on("read_only") && !self.grants.has_global(Privs::SUPER) {
            "--read-only"
        } else {
            return Ok(());
        };
        Err(Error::new(
            Code::OptionPrevents,
            format!("The MySQL server is running with the {option} option so it cannot execute this statement"),
        ))
    }

    pub(super) async fn replica_statement(&mut self, stmt: &ReplicaStatement) -> R<Response> {
        let Some(replica) = self.server.replica.get().cloned() else {
            if let ReplicaStatement::ShowStatus { legacy } = stmt {
                return Ok(show_status(None, *legacy));
            }
            return Err(Error::unsupported("replication on this server"));
        };
        if !matches!(stmt, ReplicaStatement::ShowStatus { .. }) {
            self.commit().await?;
        }
        match stmt {
            ReplicaStatement::ChangeSource(options) => {
                replica.change_source(source_change(options)?)?;
                Ok(ok(0))
            }
            ReplicaStatement::Start => {
                if !replica.start().await? {
                    self.ctx.warnings.push(already(3083, "running").into());
                }
                Ok(ok(0))
            }
            ReplicaStatement::Stop => {
                if !replica.stop().await? {
                    self.ctx.warnings.push(already(3084, "stopped").into());
                }
                Ok(ok(0))
            }
            ReplicaStatement::Reset { all } => {
                replica.reset(*all)?;
                Ok(ok(0))
            }
            ReplicaStatement::ShowStatus { legacy } => Ok(show_status(replica.status(), *legacy)),
        }
    }
}

fn already(code: u16, state: &str) -> (u16, String) {
    (
        code,
        format!("Replication thread(s) for channel '' are already {state}."),
    )
}

/// MySQL 8's SHOW REPLICA STATUS columns, in order.
const COLUMNS: &[&str] = &[
    "Replica_IO_State",
    "Source_Host",
    "Source_User",
    "Source_Port",
    "Connect_Retry",
    "Source_Log_File",
    "Read_Source_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Source_Log_File",
    "Replica_IO_Running",
    "Replica_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Source_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Source_SSL_Allowed",
    "Source_SSL_CA_File",
    "Source_SSL_CA_Path",
    "Source_SSL_Cert",
    "Source_SSL_Cipher",
    "Source_SSL_Key",
    "Seconds_Behind_Source",
    "Source_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Source_Server_Id",
    "Source_UUID",
    "Source_Info_File",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Replica_SQL_Running_State",
    "Source_Retry_Count",
    "Source_Bind",
    "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp",
    "Source_SSL_Crl",
    "Source_SSL_Crlpath",
    "Retrieved_Gtid_Set",
    "Executed_Gtid_Set",
    "Auto_Position",
    "Replicate_Rewrite_DB",
    "Channel_Name",
    "Source_TLS_Version",
    "Source_public_key_path",
    "Get_Source_public_key",
    "Network_Namespace",
];

/// SHOW SLAVE STATUS's name of a column (MySQL keeps the old words there).
fn legacy_name(name: &str) -> String {
    match name {
        "Get_Source_public_key" => "Get_master_public_key".into(),
        "Source_public_key_path" => "Master_public_key_path".into(),
        _ => match name.strip_prefix("Replica_") {
            Some(rest) => format!("Slave_{rest}"),
            None => name.replace("Source", "Master"),
        },
    }
}

fn show_status(status: Option<ReplicaStatus>, legacy: bool) -> Response {
    let names: Vec<String> = COLUMNS
        .iter()
        .map(|c| {
            if legacy {
                legacy_name(c)
            } else {
                c.to_string()
            }
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let row = status.map(status_row).into_iter().collect();
    rows(&names, row)
}

/// One row in COLUMNS' order: what lockstep has, MySQL's empty or
/// default value for what it has not (no file positions, filters, TLS).
fn status_row(s: ReplicaStatus) -> Vec<Value> {
    let text = |v: &str| Value::str(v);
    let int = |v: u64| Value::UInt(v);
    let yes_no = |b: bool| text(if b { "Yes" } else { "No" });
    let mut row = vec![
        text(&s.io_state),
        text(&s.host),
        text(&s.user),
        int(s.port as u64),
    ];
    // Connect_Retry: the replica reconnects after a second.
    row.extend([int(1), text(""), int(0), text(""), int(0), text("")]);
    row.extend([text(s.io_running), yes_no(s.sql_running)]);
    row.extend((0..6).map(|_| text("")));
    // Last_Errno and Last_Error are the SQL thread's, as in MySQL.
    let (io, sql) = (&s.connection.last_error, &s.coordinator.last_error);
    row.extend([
        int(sql.number as u64),
        text(&sql.message),
        int(0),
        int(0),
        int(0),
    ]);
    row.extend([text("None"), text(""), int(0)]);
    row.extend([text("No"), text(""), text(""), text(""), text(""), text("")]);
    row.push(s.seconds_behind.map_or(Value::Null, int));
    row.push(text("No"));
    row.extend([int(io.number as u64), text(&io.message)]);
    row.extend([int(sql.number as u64), text(&sql.message)]);
    row.extend([text(""), int(s.source.0), text(&s.source.1)]);
    row.extend([text("replica.conf"), int(0), Value::Null]);
    // Source_Retry_Count 0: it retries for ever.
    row.extend([text(&s.sql_state), int(0), text("")]);
    row.extend([error_time(io), error_time(sql), text(""), text("")]);
    row.extend([text(&s.retrieved), text(&s.executed)]);
    row.push(int(s.auto_position as u64));
    let public_key = int(s.get_public_key as u64);
    row.extend([text(""), text(""), text(""), text(""), public_key, text("")]);
    debug_assert_eq!(row.len(), COLUMNS.len());
    row
}

/// Last_*_Error_Timestamp as MySQL writes it (YYMMDD hh:mm:ss), empty
/// without an error.
fn error_time(e: &TaskError) -> Value {
    if e.number == 0 {
        return Value::str("");
    }
    let t = lockstep_types::DateTime::from_unix_micros(e.at_us as i64);
    Value::str(&format!(
        "{:02}{:02}{:02} {:02}:{:02}:{:02}",
        t.date.year % 100,
        t.date.month,
        t.date.day,
        t.hour,
        t.minute,
        t.second
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_names() {
        assert_eq!(legacy_name("Replica_IO_State"), "Slave_IO_State");
        assert_eq!(
            legacy_name("Seconds_Behind_Source"),
            "Seconds_Behind_Master"
        );
        assert_eq!(legacy_name("Exec_Source_Log_Pos"), "Exec_Master_Log_Pos");
        assert_eq!(
            legacy_name("Get_Source_public_key"),
            "Get_master_public_key"
        );
        assert_eq!(legacy_name("Replicate_Do_DB"), "Replicate_Do_DB");
    }

    #[test]
    fn row_matches_columns() {
        assert_eq!(status_row(ReplicaStatus::default()).len(), COLUMNS.len());
    }

    #[test]
    fn change_options() {
        let o = |n: &str, v: Value| vec![(n.to_string(), v)];
        let c = source_change(&o("SOURCE_PORT", Value::Int(3450))).unwrap();
        assert_eq!(c.port, Some(3450));
        assert!(source_change(&o("SOURCE_PORT", Value::Int(70000))).is_err());
        assert!(source_change(&o("SOURCE_HOST", Value::Null)).is_err());
        let e = source_change(&o("SOURCE_AUTO_POSITION", Value::Int(0))).unwrap_err();
        assert_eq!(e.code, Code::NotSupportedYet);
        let e = source_change(&o("SOURCE_DELAY", Value::Int(5))).unwrap_err();
        assert_eq!(e.code, Code::NotSupportedYet);
    }
}
