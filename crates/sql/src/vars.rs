//! System variables: the global values (shared by all sessions) and their
//! defaults. Sessions keep their own overrides of session-scoped ones.

use crate::exec::MemoryLimits;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use parking_lot::RwLock;
use std::collections::BTreeMap;

/// Whether a variable may be set per session, globally, or both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum VarScope {
    Global,
    Both,
    /// Both scopes exist, but a session may not change its own copy:
    /// max_allowed_packet, whose session value bounds what a statement may
    /// build (MySQL: 1621).
    SessionReadOnly,
    ReadOnly,
}

pub struct Globals {
    values: RwLock<BTreeMap<String, (Value, VarScope)>>,
}

fn s(v: &str) -> Value {
    Value::str(v)
}

/// Every system variable with its default and scope.
fn defaults() -> Vec<(&'static str, Value, VarScope)> {
    use VarScope::*;
    let i = Value::Int;
    vec![
            ("autocommit", i(1), Both),
            ("auto_increment_increment", i(1), Both),
            ("auto_increment_offset", i(1), Both),
            ("binlog_format", s("ROW"), Both),
            ("binlog_row_image", s("FULL"), ReadOnly),
            ("character_set_client", s("utf8mb4"), Both),
            ("character_set_connection", s("utf8mb4"), Both),
            ("character_set_database", s("utf8mb4"), Both),
            ("character_set_results", s("utf8mb4"), Both),
            ("character_set_server", s("utf8mb4"), Both),
            ("character_set_system", s("utf8mb3"), ReadOnly),
            ("collation_connection", s("utf8mb4_0900_ai_ci"), Both),
            ("collation_database", s("utf8mb4_0900_ai_ci"), Both),
            ("collation_server", s("utf8mb4_0900_ai_ci"), Both),
            ("connect_timeout", i(10), Global),
            ("datadir", s(""), ReadOnly),
            ("default_storage_engine", s("InnoDB"), Both),
            ("foreign_key_checks", i(1), Both),
            ("gtid_mode", s("ON"), ReadOnly),
            ("enforce_gtid_consistency", s("ON"), ReadOnly),
            ("have_ssl", s("DISABLED"), ReadOnly),
            ("hostname", s("localhost"), ReadOnly),
            ("init_connect", s(""), Global),
            ("innodb_flush_log_at_trx_commit", i(1), ReadOnly),
            ("innodb_lock_wait_timeout", i(50), Both),
            ("innodb_rollback_on_timeout", i(0), ReadOnly),
            ("interactive_timeout", i(28800), Both),
            ("license", s("Apache-2.0"), ReadOnly),
            ("lock_wait_timeout", i(31536000), Both),
            ("lockstep_grant_policy", s("FIFO"), Global),
            ("lockstep_memory_budget", i(0), Global),
            ("max_prepared_stmt_count", i(16382), Global),
            ("lockstep_throttle_limit", i(0), Global),
            ("log_bin", i(1), ReadOnly),
            ("lower_case_table_names", i(0), ReadOnly),
            ("max_allowed_packet", i(67108864), SessionReadOnly),
            ("max_connections", i(1040), Global),
            ("max_execution_time", i(0), Both),
            ("max_heap_table_size", i(MemoryLimits::DEFAULT_TEMP_TABLE as i64), Both),
            ("net_buffer_length", i(16384), SessionReadOnly),
            ("net_read_timeout", i(30), Both),
            ("net_write_timeout", i(60), Both),
            ("performance_schema", i(0), ReadOnly),
            ("port", i(3306), ReadOnly),
            ("back_log", i(1040), ReadOnly),
            ("protocol_version", i(10), ReadOnly),
            ("query_cache_size", i(0), ReadOnly),
            ("query_memory_limit", i(MemoryLimits::DEFAULT_STATEMENT as i64), Both),
            ("query_cache_type", s("OFF"), ReadOnly),
            ("server_id", i(1), Global),
            ("sort_buffer_size", i(MemoryLimits::DEFAULT_SORT as i64), Both),
            ("server_uuid", s(""), ReadOnly),
            ("gtid_executed", s(""), ReadOnly),
            ("sql_mode", s("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"), Both),
            ("sql_auto_is_null", i(0), Both),
            ("sql_select_limit", Value::UInt(u64::MAX), Both),
            ("sql_safe_updates", i(0), Both),
            ("sql_quote_show_create", i(1), Both),
            ("sql_notes", i(1), Both),
            ("sync_binlog", i(1), ReadOnly),
            ("system_time_zone", s("UTC"), ReadOnly),
            ("time_zone", s("SYSTEM"), Both),
            ("tmp_table_size", i(MemoryLimits::DEFAULT_TEMP_TABLE as i64), Both),
            ("transaction_isolation", s("REPEATABLE-READ"), Both),
            ("transaction_read_only", i(0), Both),
            ("tx_isolation", s("REPEATABLE-READ"), Both),
            ("tx_read_only", i(0), Both),
            ("unique_checks", i(1), Both),
            ("version", s("8.0.36-lockstep"), ReadOnly),
            ("version_comment", s("lockstep"), ReadOnly),
            ("version_compile_machine", s("x86_64"), ReadOnly),
            ("version_compile_os", s("Linux"), ReadOnly),
            ("wait_timeout", i(28800), Both),
            ("warning_count", i(0), ReadOnly),
            ("error_count", i(0), ReadOnly),
        ]
}

/// Whether a variable holds an integer (result metadata of @@name).
pub fn is_integer_var(name: &str) -> bool {
    static INTEGERS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    INTEGERS
        .get_or_init(|| {
            defaults()
                .into_iter()
                .filter(|(_, v, _)| matches!(v, Value::Int(_) | Value::UInt(_)))
                .map(|(k, _, _)| k)
                .collect()
        })
        .contains(&name)
}

impl Globals {
    pub fn new(overrides: &[(&str, Value)]) -> Globals {
        let mut map = BTreeMap::new();
        for (k, v, sc) in defaults() {
            map.insert(k.to_string(), (v, sc));
        }
        for (k, v) in overrides {
            if let Some(e) = map.get_mut(*k) {
                e.0 = v.clone();
            }
        }
        Globals {
            values: RwLock::new(map),
        }
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        self.values.read().get(name).map(|(v, _)| v.clone())
    }

    pub fn scope(&self, name: &str) -> Option<VarScope> {
        self.values.read().get(name).map(|(_, s)| *s)
    }

    /// Sets a global value (SET GLOBAL), checking that it may be set.
    pub fn set(&self, name: &str, v: Value) -> Result<(), Error> {
        let mut map = self.values.write();
        match map.get_mut(name) {
            None => Err(unknown(name)),
            Some((_, VarScope::ReadOnly)) => Err(read_only(name)),
            Some(e) => {
                e.0 = v;
                Ok(())
            }
        }
    }

    /// Sets a value regardless of scope (server-internal: uuid, gtid).
    pub fn force(&self, name: &str, v: Value) {
        if let Some(e) = self.values.write().get_mut(name) {
            e.0 = v;
        }
    }

    pub fn all(&self) -> Vec<(String, Value)> {
        self.values
            .read()
            .iter()
            .map(|(k, (v, _))| (k.clone(), v.clone()))
            .collect()
    }
}

pub fn unknown(name: &str) -> Error {
    Error::new(
        Code::UnknownSystemVariable,
        format!("Unknown system variable '{name}'"),
    )
}

/// SET SESSION of a variable whose session value is read-only.
pub fn session_read_only(name: &str) -> Error {
    Error::new(
        Code::VariableIsReadonly,
        format!("SESSION variable '{name}' is read-only. Use SET GLOBAL to assign the value"),
    )
}

pub fn read_only(name: &str) -> Error {
    Error::new(
        Code::SpecificAccessDenied,
        format!("Variable '{name}' is a read only variable"),
    )
}

/// Normalizes a value given to SET for a boolean variable (ON/OFF/1/0).
pub fn bool_setting(name: &str, v: &Value) -> Result<bool, Error> {
    match v {
        Value::Int(0) | Value::UInt(0) => Ok(false),
        Value::Int(1) | Value::UInt(1) => Ok(true),
        Value::Bytes(b) => match String::from_utf8_lossy(b).to_ascii_uppercase().as_str() {
            "ON" | "TRUE" | "1" => Ok(true),
            "OFF" | "FALSE" | "0" => Ok(false),
            other => Err(Error::new(
                Code::WrongValueForVar,
                format!("Variable '{name}' can't be set to the value of '{other}'"),
            )),
        },
        other => Err(Error::new(
            Code::WrongValueForVar,
            format!("Variable '{name}' can't be set to the value of '{other}'"),
        )),
    }
}
