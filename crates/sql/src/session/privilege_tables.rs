//! Table-level grants as drivers read them: information_schema
//! TABLE_PRIVILEGES and COLUMN_PRIVILEGES (Connector/J's DatabaseMetaData
//! with useInformationSchema=true) and mysql.tables_priv / columns_priv
//! (its default). Built from the accounts; lockstep has no column-level
//! grants, so the column tables are always empty.

use super::infoschema::{table, table_in};
use super::Session;
use lockstep_accounts::{Account, Privs};
use lockstep_engine::catalog::Catalog;
use lockstep_types::{DataType, Value};

const VC: DataType = DataType::VarChar { len: 64 };

/// The privilege names of a table grant, GRANT OPTION apart.
fn names(p: Privs) -> Vec<&'static str> {
    Privs::ALL_NAMED
        .iter()
        .filter(|(bit, _, _)| *bit != Privs::GRANT_OPTION && p.0 & bit.0 != 0)
        .map(|(_, name, _)| *name)
        .collect()
}

fn grants(a: &Account) -> impl Iterator<Item = (&str, &str, Privs)> {
    a.tables
        .iter()
        .map(|((db, t), p)| (db.as_str(), t.as_str(), *p))
}

pub(super) fn add_tables(cat: &Catalog, session: &Session) {
    let s = Value::str;
    // As in MySQL: a user sees its own grants, or all with SELECT on mysql.
    let all = session
        .grants
        .account
        .has_on_database(Privs::SELECT, "mysql");
    let own = session.grants.account.key();
    let accounts = session.engine().accounts.all();
    let (mut schema_rows, mut mysql_rows) = (Vec::new(), Vec::new());
    for a in &accounts {
        let grantee = format!("'{}'@'{}'", a.user, a.host);
        for (db, t, p) in grants(a) {
            mysql_rows.push(vec![
                s(&a.host),
                s(db),
                s(&a.user),
                s(t),
                s(""),
                Value::Null,
                s(&names(p).join(",")),
                s(""),
            ]);
            if !all && a.key() != own {
                continue;
            }
            let grantable = if p.0 & Privs::GRANT_OPTION.0 != 0 {
                "YES"
            } else {
                "NO"
            };
            for name in names(p) {
                schema_rows.push(vec![
                    s(&grantee),
                    s("def"),
                    s(db),
                    s(t),
                    s(name),
                    s(grantable),
                ]);
            }
        }
    }
    let cols = ["GRANTEE", "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"];
    let mut table_cols: Vec<_> = cols.iter().map(|c| (*c, VC)).collect();
    table_cols.extend([("PRIVILEGE_TYPE", VC), ("IS_GRANTABLE", VC)]);
    table(cat, 96, "TABLE_PRIVILEGES", &table_cols, schema_rows);
    table_cols.insert(4, ("COLUMN_NAME", VC));
    table(cat, 97, "COLUMN_PRIVILEGES", &table_cols, Vec::new());
    mysql_tables(cat, mysql_rows);
}

fn mysql_tables(cat: &Catalog, rows: Vec<Vec<Value>>) {
    let ts = DataType::Timestamp { fsp: 0 };
    let text = DataType::VarChar { len: 1024 };
    let key = [("Host", VC), ("Db", VC), ("User", VC), ("Table_name", VC)];
    let mut cols = key.to_vec();
    cols.extend([
        ("Grantor", VC),
        ("Timestamp", ts),
        ("Table_priv", text),
        ("Column_priv", text),
    ]);
    table_in(cat, "mysql", 98, "TABLES_PRIV", &cols, rows);
    let mut cols = key.to_vec();
    cols.extend([
        ("Column_name", VC),
        ("Timestamp", ts),
        ("Column_priv", text),
    ]);
    table_in(cat, "mysql", 99, "COLUMNS_PRIV", &cols, Vec::new());
    cat.add_database_public("mysql");
}
