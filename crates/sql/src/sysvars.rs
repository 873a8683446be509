//! The system variables that exist: name, default value and scope. Binding
//! `@@name` resolves against this table (its type is the default's);
//! the session's `vars` keeps the values.

use lockstep_types::Value;

/// sort_buffer_size: bytes a sort holds before it spills (MySQL's default).
pub const DEFAULT_SORT: usize = 256 << 10;
/// join_buffer_size: a join's outer rows read at a time (MySQL's default).
pub const DEFAULT_JOIN: usize = 256 << 10;
/// tmp_table_size and max_heap_table_size.
pub const DEFAULT_TEMP_TABLE: usize = 256 << 20;
/// query_memory_limit: all rows one statement buffers.
pub const DEFAULT_STATEMENT: usize = 1 << 30;
/// max_tmp_session_space_usage: bytes of sort runs one statement may
/// write (MariaDB's default is 1 TiB; 16 GiB bounds a runaway sort well
/// before it fills a typical data disk).
pub const DEFAULT_TMP_DISK: usize = 16 << 30;

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
    /// A session has it, the server has none: `timestamp` (1228 for SET
    /// GLOBAL, 1238 for @@global).
    Session,
}

fn s(v: &str) -> Value {
    Value::str(v)
}

/// Every system variable with its default and scope.
pub fn defaults() -> Vec<(&'static str, Value, VarScope)> {
    use VarScope::*;
    let i = Value::Int;
    vec![
            ("activate_all_roles_on_login", i(0), Global),
            ("admin_address", s(""), ReadOnly),
            ("admin_port", i(33062), ReadOnly),
            ("autocommit", i(1), Both),
            ("auto_increment_increment", i(1), Both),
            ("auto_increment_offset", i(1), Both),
            ("binlog_checksum", s("CRC32"), ReadOnly),
            ("binlog_format", s("ROW"), Both),
            ("binlog_row_metadata", s("FULL"), ReadOnly),
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
            ("cte_max_recursion_depth", i(1000), Both),
            ("datadir", s(""), ReadOnly),
            ("default_storage_engine", s("InnoDB"), Both),
            ("foreign_key_checks", i(1), Both),
            ("group_concat_max_len", i(1024), Both),
            ("gtid_mode", s("ON"), ReadOnly),
            ("enforce_gtid_consistency", s("ON"), ReadOnly),
            ("have_ssl", s("DISABLED"), ReadOnly),
            ("hostname", s("localhost"), ReadOnly),
            ("init_connect", s(""), Global),
            ("local_infile", i(0), Global),
            ("secure_file_priv", Value::Null, ReadOnly),
            // InnoDB's names for what lockstep does (tools read them):
            // auto-increment values from an atomic counter without a table
            // lock (2, interleaved), waits-for deadlock detection, strict
            // CREATE TABLE options; the pool size is the memory budget.
            ("innodb_autoinc_lock_mode", i(2), ReadOnly),
            ("innodb_buffer_pool_size", i(0), ReadOnly),
            ("innodb_deadlock_detect", i(1), ReadOnly),
            ("innodb_flush_log_at_trx_commit", i(1), ReadOnly),
            ("innodb_read_only", i(0), ReadOnly),
            ("innodb_strict_mode", i(1), ReadOnly),
            ("innodb_version", s("8.0.36"), ReadOnly),
            ("innodb_lock_wait_timeout", i(50), Both),
            ("innodb_rollback_on_timeout", i(0), ReadOnly),
            ("interactive_timeout", i(28800), Both),
            ("join_buffer_size", i(DEFAULT_JOIN as i64), Both),
            ("license", s("Apache-2.0"), ReadOnly),
            ("lock_wait_timeout", i(31536000), Both),
            ("lockstep_grant_policy", s("FIFO"), Global),
            ("lockstep_memory_budget", i(0), Global),
            ("max_prepared_stmt_count", i(16382), Global),
            ("max_sp_recursion_depth", i(0), Both),
            ("lockstep_throttle_limit", i(0), Global),
            ("log_bin", i(1), ReadOnly),
            ("lower_case_table_names", i(0), ReadOnly),
            ("max_error_count", i(1024), Both),
            ("max_allowed_packet", i(67108864), SessionReadOnly),
            ("max_connections", i(1040), Global),
            ("max_execution_time", i(0), Both),
            ("max_heap_table_size", i(DEFAULT_TEMP_TABLE as i64), Both),
            ("net_buffer_length", i(16384), SessionReadOnly),
            ("net_read_timeout", i(30), Both),
            ("net_write_timeout", i(60), Both),
            ("performance_schema", i(0), ReadOnly),
            ("port", i(3306), ReadOnly),
            ("back_log", i(1040), ReadOnly),
            ("mandatory_roles", s(""), Global),
            ("protocol_version", i(10), ReadOnly),
            // The session's own connection id (read as such in system_var).
            ("pseudo_thread_id", i(0), Both),
            ("query_cache_size", i(0), ReadOnly),
            ("query_memory_limit", i(DEFAULT_STATEMENT as i64), Both),
            ("query_cache_type", s("OFF"), ReadOnly),
            ("server_id", i(1), Global),
            ("read_only", i(0), Global),
            // Retries of a replica transaction that lost a deadlock or
            // timed out (both names, as MySQL 8.0.26+ has them).
            ("replica_transaction_retries", i(10), Global),
            ("slave_transaction_retries", i(10), Global),
            ("rpl_semi_sync_source_enabled", i(0), Global),
            // The pre-8.0.26 name, which semisync replicas look for.
            ("rpl_semi_sync_master_enabled", i(0), Global),
            ("rpl_semi_sync_source_timeout", i(10000), Global),
            ("rpl_semi_sync_source_wait_for_replica_count", i(1), Global),
            ("rpl_semi_sync_source_wait_point", s("AFTER_SYNC"), ReadOnly),
            ("rpl_semi_sync_replica_enabled", i(0), Global),
            ("lockstep_semi_sync_on_timeout", s("ASYNC"), Global),
            ("super_read_only", i(0), Global),
            ("sort_buffer_size", i(DEFAULT_SORT as i64), Both),
            ("max_tmp_session_space_usage", i(DEFAULT_TMP_DISK as i64), Both),
            ("server_uuid", s(""), ReadOnly),
            ("gtid_executed", s(""), ReadOnly),
            ("gtid_purged", s(""), ReadOnly),
            // No Unix socket: clients that would switch to it stay on TCP.
            ("socket", s(""), ReadOnly),
            ("sql_mode", s("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"), Both),
            ("sql_auto_is_null", i(0), Both),
            ("sql_select_limit", Value::UInt(u64::MAX), Both),
            ("sql_safe_updates", i(0), Both),
            ("sql_quote_show_create", i(1), Both),
            ("sql_notes", i(1), Both),
            ("session_track_gtids", s("OFF"), Both),
            ("session_track_schema", i(1), Both),
            ("session_track_state_change", i(0), Both),
            (
                "session_track_system_variables",
                s("time_zone,autocommit,character_set_client,character_set_results,character_set_connection"),
                Both,
            ),
            ("session_track_transaction_info", s("OFF"), Both),
            ("sync_binlog", i(1), ReadOnly),
            ("system_time_zone", s("UTC"), ReadOnly),
            ("time_zone", s("SYSTEM"), Both),
            // The clock NOW() reads, in seconds since the epoch with
            // microseconds (session/fixed_clock.rs).
            (
                "timestamp",
                Value::Decimal(lockstep_types::Decimal::from_i128_with_scale(0, 6)),
                Session,
            ),
            ("tmp_table_size", i(DEFAULT_TEMP_TABLE as i64), Both),
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
