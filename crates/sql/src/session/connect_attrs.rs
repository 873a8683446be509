//! performance_schema.session_connect_attrs and
//! session_account_connect_attrs: the attributes each client sent in its
//! handshake (CLIENT_CONNECT_ATTRS: _client_name, _client_version, ...),
//! per connection, in the order sent.

use super::infoschema::table_in;
use super::Session;
use lockstep_engine::catalog::Catalog;
use lockstep_types::{DataType, Value};

/// Catalog ids of the two tables (information_schema's own are below 60).
const ALL_ID: u32 = 60;
const ACCOUNT_ID: u32 = 61;

/// Both tables: every connection's attributes, and those of connections
/// of the session's own account.
pub(super) fn tables(cat: &Catalog, session: &Session) {
    let cols = [
        ("PROCESSLIST_ID", DataType::BigInt { unsigned: true }),
        ("ATTR_NAME", DataType::VarChar { len: 32 }),
        ("ATTR_VALUE", DataType::VarChar { len: 1024 }),
        ("ORDINAL_POSITION", DataType::Int { unsigned: false }),
    ];
    let own_user = session.process.user.lock().clone();
    let own_host = &session.process.host;
    let mut all = Vec::new();
    let mut account = Vec::new();
    let mut procs: Vec<_> = session.server.processes.lock().values().cloned().collect();
    procs.sort_by_key(|p| p.id);
    for p in procs {
        let mine = *p.user.lock() == own_user && p.host == *own_host;
        for (i, (k, v)) in p.connect_attrs.lock().iter().enumerate() {
            let row = vec![
                Value::UInt(p.id),
                Value::str(k),
                Value::str(v),
                Value::Int(i as i64),
            ];
            if mine {
                account.push(row.clone());
            }
            all.push(row);
        }
    }
    let ps = "performance_schema";
    table_in(cat, ps, ALL_ID, "SESSION_CONNECT_ATTRS", &cols, all);
    table_in(
        cat,
        ps,
        ACCOUNT_ID,
        "SESSION_ACCOUNT_CONNECT_ATTRS",
        &cols,
        account,
    );
}
