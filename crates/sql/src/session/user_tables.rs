//! mysql.user and mysql.db as MySQL 8.0 lays them out, built from the
//! accounts each time they are read (read-only: accounts change through
//! CREATE USER, GRANT and the like). Drivers and tools read them:
//! `SELECT plugin FROM mysql.user WHERE ...`, `USE mysql; SELECT * FROM
//! user`. Reading needs SELECT on the mysql schema, as in MySQL.

use super::infoschema::table_in;
use lockstep_accounts::{Account, Credential, Privs};
use lockstep_engine::catalog::Catalog;
use lockstep_engine::Engine;
use lockstep_types::{DataType, Value};

const USER_ID: u32 = 120;
const DB_ID: u32 = 121;

const FLAG: DataType = DataType::Char { len: 1 };
const NAME: DataType = DataType::Char { len: 64 };

/// mysql.user's privilege columns in MySQL's order, before the SSL ones.
const USER_PRIVS: &[(&str, Privs)] = &[
    ("Select_priv", Privs::SELECT),
    ("Insert_priv", Privs::INSERT),
    ("Update_priv", Privs::UPDATE),
    ("Delete_priv", Privs::DELETE),
    ("Create_priv", Privs::CREATE),
    ("Drop_priv", Privs::DROP),
    ("Reload_priv", Privs::RELOAD),
    ("Shutdown_priv", Privs::SHUTDOWN),
    ("Process_priv", Privs::PROCESS),
    ("File_priv", Privs::FILE),
    ("Grant_priv", Privs::GRANT_OPTION),
    ("References_priv", Privs::REFERENCES),
    ("Index_priv", Privs::INDEX),
    ("Alter_priv", Privs::ALTER),
    ("Show_db_priv", Privs::SHOW_DATABASES),
    ("Super_priv", Privs::SUPER),
    ("Create_tmp_table_priv", Privs::CREATE_TEMPORARY_TABLES),
    ("Lock_tables_priv", Privs::LOCK_TABLES),
    ("Execute_priv", Privs::EXECUTE),
    ("Repl_slave_priv", Privs::REPLICATION_SLAVE),
    ("Repl_client_priv", Privs::REPLICATION_CLIENT),
    ("Create_view_priv", Privs::CREATE_VIEW),
    ("Show_view_priv", Privs::SHOW_VIEW),
    ("Create_routine_priv", Privs::CREATE_ROUTINE),
    ("Alter_routine_priv", Privs::ALTER_ROUTINE),
    ("Create_user_priv", Privs::CREATE_USER),
    ("Event_priv", Privs::EVENT),
    ("Trigger_priv", Privs::TRIGGER),
    ("Create_tablespace_priv", Privs::CREATE_TABLESPACE),
];

/// mysql.db's privilege columns in MySQL's order (their privileges
/// as in `USER_PRIVS`).
const DB_PRIVS: &[&str] = &[
    "Select_priv",
    "Insert_priv",
    "Update_priv",
    "Delete_priv",
    "Create_priv",
    "Drop_priv",
    "Grant_priv",
    "References_priv",
    "Index_priv",
    "Alter_priv",
    "Create_tmp_table_priv",
    "Lock_tables_priv",
    "Create_view_priv",
    "Show_view_priv",
    "Create_routine_priv",
    "Alter_routine_priv",
    "Execute_priv",
    "Event_priv",
    "Trigger_priv",
];

fn privilege_of(column: &str) -> Privs {
    USER_PRIVS
        .iter()
        .find(|(n, _)| *n == column)
        .map(|(_, p)| *p)
        .expect("every mysql.db column is a mysql.user column")
}

/// The tables lockstep shows in the mysql schema (here and in
/// privilege_tables.rs): a table-level GRANT may name them.
pub(super) fn is_mysql_table(db: &str, table: &str) -> bool {
    db.eq_ignore_ascii_case("mysql")
        && ["user", "db", "tables_priv", "columns_priv"]
            .iter()
            .any(|t| t.eq_ignore_ascii_case(table))
}

fn flag(held: Privs, p: Privs) -> Value {
    Value::str(if held.contains(p) { "Y" } else { "N" })
}

/// authentication_string: mysql_native_password's `*` and 40 hex digits
/// as MySQL shows it; caching_sha2_password's stored hash as its bytes
/// (lockstep's own salted form, empty for an empty password).
fn auth_string(c: &Credential) -> Value {
    match c {
        Credential::Native(h) => {
            let hex: String = h.iter().map(|b| format!("{b:02X}")).collect();
            Value::str(&format!("*{hex}"))
        }
        Credential::CachingSha2(h) => Value::Bytes(h.clone()),
    }
}

fn user_row(engine: &Engine, a: &Account) -> Vec<Value> {
    let s = Value::str;
    let mut row = vec![s(&a.host), s(&a.user)];
    row.extend(USER_PRIVS.iter().map(|(_, p)| flag(a.global, *p)));
    let ssl = if a.require_ssl { "ANY" } else { "" };
    row.extend([s(ssl), s(""), s(""), s("")]);
    row.extend([0, 0, 0, 0].map(Value::UInt));
    let locked = engine.accounts.is_locked(&a.user, &a.host);
    row.extend([
        s(a.credential.plugin()),
        auth_string(&a.credential),
        s("N"),
        Value::Null,
        Value::Null,
        s(if locked { "Y" } else { "N" }),
        flag(a.global, Privs::CREATE_ROLE),
        flag(a.global, Privs::DROP_ROLE),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
    ]);
    row
}

pub(super) fn add_tables(cat: &Catalog, engine: &Engine) {
    let accounts = engine.accounts.all();
    let mut cols = vec![("Host", DataType::Char { len: 255 }), ("User", NAME)];
    cols.extend(USER_PRIVS.iter().map(|(n, _)| (*n, FLAG)));
    let blob = DataType::Blob { max_len: 65535 };
    let count = DataType::Int { unsigned: true };
    cols.extend([
        ("ssl_type", DataType::VarChar { len: 9 }),
        ("ssl_cipher", blob),
        ("x509_issuer", blob),
        ("x509_subject", blob),
        ("max_questions", count),
        ("max_updates", count),
        ("max_connections", count),
        ("max_user_connections", count),
        ("plugin", NAME),
        ("authentication_string", DataType::Text { max_len: 65535 }),
        ("password_expired", FLAG),
        ("password_last_changed", DataType::Timestamp { fsp: 0 }),
        ("password_lifetime", DataType::SmallInt { unsigned: true }),
        ("account_locked", FLAG),
        ("Create_role_priv", FLAG),
        ("Drop_role_priv", FLAG),
        (
            "Password_reuse_history",
            DataType::SmallInt { unsigned: true },
        ),
        ("Password_reuse_time", DataType::SmallInt { unsigned: true }),
        ("Password_require_current", FLAG),
        ("User_attributes", DataType::Json),
    ]);
    let rows = accounts.iter().map(|a| user_row(engine, a)).collect();
    table_in(cat, "mysql", USER_ID, "USER", &cols, rows);
    db_table(cat, &accounts);
}

/// One row per database-level grant.
fn db_table(cat: &Catalog, accounts: &[std::sync::Arc<Account>]) {
    let mut cols = vec![
        ("Host", DataType::Char { len: 255 }),
        ("Db", NAME),
        ("User", NAME),
    ];
    cols.extend(DB_PRIVS.iter().map(|n| (*n, FLAG)));
    let mut rows = Vec::new();
    for a in accounts {
        for (db, held) in &a.databases {
            let mut row = vec![Value::str(&a.host), Value::str(db), Value::str(&a.user)];
            row.extend(DB_PRIVS.iter().map(|n| flag(*held, privilege_of(n))));
            rows.push(row);
        }
    }
    table_in(cat, "mysql", DB_ID, "DB", &cols, rows);
}
