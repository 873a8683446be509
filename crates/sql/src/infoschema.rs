//! information_schema: built on demand as ordinary in-memory tables in a
//! scratch catalog, so any query over them runs through the normal binder
//! and executor.

use crate::bind::Binder;
use crate::exec::Exec;
use crate::parser::Query;
use crate::session::Session;
use lockstep_engine::catalog::Catalog;
use lockstep_engine::{Error as EngineError, Isolation};
use lockstep_protocol::{Response, ResultSet};
use lockstep_tables::{ColumnDef, IndexDef, TableDef};
use lockstep_types::{DataType, Error, Value};

fn table(
    catalog: &Catalog,
    id: u32,
    name: &str,
    columns: &[(&str, DataType)],
    rows: Vec<Vec<Value>>,
) {
    let mut cols: Vec<ColumnDef> = columns
        .iter()
        .map(|(n, t)| ColumnDef {
            name: n.to_string(),
            data_type: *t,
            nullable: true,
            default: None,
            auto_increment: false,
            default_now: false,
            on_update_now: false,
        })
        .collect();
    cols.push(ColumnDef {
        name: "DB_ROW_ID".into(),
        data_type: DataType::BigInt { unsigned: true },
        nullable: false,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
    });
    let hidden = cols.len() - 1;
    let def = TableDef {
        id,
        database: "information_schema".into(),
        name: name.into(),
        columns: cols,
        indexes: vec![IndexDef {
            name: "PRIMARY".into(),
            columns: vec![hidden],
            unique: true,
        }],
        hidden_row_id: Some(hidden),
    };
    let t = catalog.add_table_public(def);
    for (i, mut r) in rows.into_iter().enumerate() {
        r.push(Value::UInt(i as u64 + 1));
        let key = t.def().index_key(0, &r);
        t.load_row(key, Some(lockstep_tables::Row::new(&r)));
    }
}

fn build(session: &Session) -> Catalog {
    let cat = Catalog::new();
    let engine = session.engine();
    let vc = DataType::VarChar { len: 64 };
    let big = DataType::BigInt { unsigned: true };
    let s = |x: &str| Value::str(x);
    let mut dbs = vec![
        "information_schema".to_string(),
        "mysql".into(),
        "performance_schema".into(),
        "sys".into(),
    ];
    // As in MySQL, a user sees only the schemas, tables and threads its
    // privileges reach.
    let grants = &session.grants;
    dbs.extend(
        engine
            .catalog
            .databases()
            .into_iter()
            .filter(|d| grants.sees_database(d)),
    );
    table(
        &cat,
        1,
        "SCHEMATA",
        &[
            ("CATALOG_NAME", vc),
            ("SCHEMA_NAME", vc),
            ("DEFAULT_CHARACTER_SET_NAME", vc),
            ("DEFAULT_COLLATION_NAME", vc),
        ],
        dbs.iter()
            .map(|d| vec![s("def"), s(d), s("utf8mb4"), s("utf8mb4_0900_ai_ci")])
            .collect(),
    );
    let mut tables = Vec::new();
    let mut columns = Vec::new();
    let mut stats = Vec::new();
    for db in engine.catalog.databases() {
        for t in engine.catalog.tables(&db) {
            let def = t.def();
            if !grants.sees_table(&db, &def.name) {
                continue;
            }
            tables.push(vec![
                s("def"),
                s(&db),
                s(&def.name),
                s("BASE TABLE"),
                s("InnoDB"),
                Value::UInt(t.approximate_rows() as u64),
                Value::UInt(t.auto_increment.load(std::sync::atomic::Ordering::Relaxed)),
                s("utf8mb4_0900_ai_ci"),
            ]);
            for (pos, (i, c)) in def.visible_columns().enumerate() {
                let key = if def.has_declared_primary_key() && def.indexes[0].columns.contains(&i) {
                    "PRI"
                } else {
                    ""
                };
                columns.push(vec![
                    s("def"),
                    s(&db),
                    s(&def.name),
                    s(&c.name),
                    Value::UInt(pos as u64 + 1),
                    c.default
                        .clone()
                        .map(|d| s(&d.to_string()))
                        .unwrap_or(Value::Null),
                    s(if c.nullable { "YES" } else { "NO" }),
                    s(c.data_type.to_string().split('(').next().unwrap_or("")),
                    s(&c.data_type.to_string()),
                    s(key),
                    s(if c.auto_increment {
                        "auto_increment"
                    } else {
                        ""
                    }),
                ]);
            }
            for (n, ix) in def.indexes.iter().enumerate() {
                if n == 0 && !def.has_declared_primary_key() {
                    continue;
                }
                for (seq, &c) in ix.columns.iter().enumerate() {
                    stats.push(vec![
                        s("def"),
                        s(&db),
                        s(&def.name),
                        Value::Int(if ix.unique { 0 } else { 1 }),
                        s(&ix.name),
                        Value::Int(seq as i64 + 1),
                        s(&def.columns[c].name),
                    ]);
                }
            }
        }
    }
    table(
        &cat,
        2,
        "TABLES",
        &[
            ("TABLE_CATALOG", vc),
            ("TABLE_SCHEMA", vc),
            ("TABLE_NAME", vc),
            ("TABLE_TYPE", vc),
            ("ENGINE", vc),
            ("TABLE_ROWS", big),
            ("AUTO_INCREMENT", big),
            ("TABLE_COLLATION", vc),
        ],
        tables,
    );
    table(
        &cat,
        3,
        "COLUMNS",
        &[
            ("TABLE_CATALOG", vc),
            ("TABLE_SCHEMA", vc),
            ("TABLE_NAME", vc),
            ("COLUMN_NAME", vc),
            ("ORDINAL_POSITION", big),
            ("COLUMN_DEFAULT", vc),
            ("IS_NULLABLE", vc),
            ("DATA_TYPE", vc),
            ("COLUMN_TYPE", vc),
            ("COLUMN_KEY", vc),
            ("EXTRA", vc),
        ],
        columns,
    );
    table(
        &cat,
        4,
        "STATISTICS",
        &[
            ("TABLE_CATALOG", vc),
            ("TABLE_SCHEMA", vc),
            ("TABLE_NAME", vc),
            ("NON_UNIQUE", big),
            ("INDEX_NAME", vc),
            ("SEQ_IN_INDEX", big),
            ("COLUMN_NAME", vc),
        ],
        stats,
    );
    let all_threads = grants.has_global(lockstep_engine::Privs::PROCESS);
    let procs: Vec<Vec<Value>> = session
        .server
        .processes
        .lock()
        .values()
        .filter(|p| all_threads || *p.user.lock() == grants.user)
        .map(|p| {
            vec![
                Value::UInt(p.id),
                s(&p.user.lock()),
                s(&p.host),
                p.database
                    .lock()
                    .clone()
                    .map(|d| s(&d))
                    .unwrap_or(Value::Null),
                s(*p.command.lock()),
            ]
        })
        .collect();
    table(
        &cat,
        5,
        "PROCESSLIST",
        &[
            ("ID", big),
            ("USER", vc),
            ("HOST", vc),
            ("DB", vc),
            ("COMMAND", vc),
        ],
        procs,
    );
    cat.add_database_public("information_schema");
    cat
}

/// Runs a query whose tables live in information_schema.
pub fn query(session: &mut Session, q: &Query) -> Result<Response, Error> {
    let cat = build(session);
    let mut binder = Binder::new(&cat, Some("information_schema".into()));
    // Unqualified names in a session whose database is not a system one
    // were routed here because a table named a system database.
    let q = qualify(q);
    let plan = binder.bind_query(&q)?;
    let engine = session.engine().clone();
    let mut txn = engine.begin(Isolation::ReadCommitted);
    let mut exec = Exec::new(&engine, &mut txn, &mut session.ctx, &[]);
    let rows = exec.query(&plan).map_err(|e| match e {
        EngineError::Sql(e) => e,
        EngineError::LockWait(_) => Error::internal("lock wait on information_schema"),
    })?;
    drop(exec);
    engine.rollback(&mut txn);
    Ok(Response::Rows(ResultSet {
        columns: plan.columns.clone(),
        rows,
        warnings: 0,
    }))
}

fn qualify(q: &Query) -> Query {
    let mut q = q.clone();
    if let crate::parser::QueryBody::Select(s) = &mut q.body {
        for t in &mut s.from {
            if let crate::parser::TableRef::Table { name, .. } = t {
                if name
                    .database
                    .as_deref()
                    .is_some_and(|d| d.eq_ignore_ascii_case("information_schema"))
                {
                    name.database = Some("information_schema".into());
                }
                name.name = name.name.to_ascii_uppercase();
            }
        }
    }
    q
}
