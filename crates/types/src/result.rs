//! What a statement returns, as the SQL layer produces it and the wire
//! protocol encodes it: column metadata (as MySQL describes a column),
//! rows of values, OK information, a prepared statement's shape, and the
//! session state reported with each reply.

use crate::{DataType, Value};

/// Column flags as MySQL defines them (result metadata).
pub mod column_flags {
    pub const NOT_NULL_FLAG: u16 = 1;
    pub const PRI_KEY_FLAG: u16 = 2;
    pub const UNIQUE_KEY_FLAG: u16 = 4;
    pub const MULTIPLE_KEY_FLAG: u16 = 8;
    pub const BLOB_FLAG: u16 = 16;
    pub const UNSIGNED_FLAG: u16 = 32;
    pub const ZEROFILL_FLAG: u16 = 64;
    pub const BINARY_FLAG: u16 = 128;
    pub const ENUM_FLAG: u16 = 256;
    pub const AUTO_INCREMENT_FLAG: u16 = 512;
    pub const TIMESTAMP_FLAG: u16 = 1024;
    pub const SET_FLAG: u16 = 2048;
    pub const NO_DEFAULT_VALUE_FLAG: u16 = 4096;
    pub const ON_UPDATE_NOW_FLAG: u16 = 8192;
    pub const PART_KEY_FLAG: u16 = 16384;
    pub const NUM_FLAG: u16 = 32768;
}

/// Metadata of one result-set column or prepared-statement parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    pub data_type: DataType,
    pub nullable: bool,
    /// Extra flags from [`column_flags`]: PRI_KEY_FLAG, UNIQUE_KEY_FLAG,
    /// MULTIPLE_KEY_FLAG, AUTO_INCREMENT_FLAG. NOT_NULL, UNSIGNED, BINARY and
    /// BLOB are derived from `nullable` and `data_type`.
    pub flags: u16,
    /// A text column's collation id (0: utf8mb4_0900_ai_ci, as stored).
    /// Values are UTF-8 whatever it is; it says how to describe and encode
    /// them when character_set_results is NULL or binary.
    pub collation: u16,
}

impl Column {
    /// A nullable column of an expression (no table).
    pub fn new(name: impl Into<String>, data_type: DataType) -> Column {
        let name = name.into();
        Column {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            org_name: name.clone(),
            name,
            data_type,
            nullable: true,
            flags: 0,
            collation: 0,
        }
    }

    /// A nullable expression column whose type fits `v` (text for NULL).
    pub fn typed_after(name: impl Into<String>, v: &Value) -> Column {
        let data_type = match v {
            Value::Int(_) => DataType::BigInt { unsigned: false },
            Value::UInt(_) => DataType::BigInt { unsigned: true },
            Value::Double(_) => DataType::Double,
            Value::Decimal(d) => DataType::Decimal {
                precision: 30,
                scale: d.scale().min(28) as u8,
            },
            Value::Date(_) => DataType::Date,
            Value::DateTime(_) => DataType::DateTime { fsp: 6 },
            Value::Null | Value::Bytes(_) => DataType::VarChar { len: 255 },
        };
        Column::new(name, data_type)
    }
}

/// One change to a session's state, as CLIENT_SESSION_TRACK reports it in
/// the OK packet that ends the statement (MySQL's session_track_*).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateChange {
    /// A tracked system variable and its new value, as SHOW VARIABLES
    /// prints it (session_track_system_variables).
    SystemVariable { name: String, value: String },
    /// The default database (session_track_schema).
    Schema(String),
    /// Something of the session changed (session_track_state_change).
    StateChanged,
    /// The transaction's state, eight flag characters such as `T__R_W__`
    /// (session_track_transaction_info = STATE).
    TransactionState(String),
}

/// What an OK packet reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OkInfo {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub warnings: u16,
    pub info: String,
}

#[derive(Clone, Debug, Default)]
pub struct ResultSet {
    pub columns: std::sync::Arc<[Column]>,
    pub rows: Vec<Vec<Value>>,
    /// Warnings the statement raised, reported by the result's last EOF.
    pub warnings: u16,
}

#[derive(Clone, Debug)]
pub enum Response {
    Ok(OkInfo),
    Rows(ResultSet),
}

/// Reply to COM_STMT_PREPARE.
#[derive(Clone, Debug)]
pub struct PreparedInfo {
    pub statement_id: u32,
    pub params: Vec<Column>,
    pub columns: Vec<Column>,
}

/// Session state reported in the status flags of every OK/EOF packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub in_transaction: bool,
    pub autocommit: bool,
    /// sql_mode has NO_BACKSLASH_ESCAPES.
    pub no_backslash_escapes: bool,
}

/// TLS parameters of a session, as SHOW STATUS reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsInfo {
    /// "TLSv1.3" / "TLSv1.2".
    pub version: String,
    /// e.g. "TLS_AES_256_GCM_SHA384".
    pub cipher: String,
}
