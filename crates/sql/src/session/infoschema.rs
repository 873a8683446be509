//! information_schema: built on demand as ordinary in-memory tables in a
//! scratch catalog, so any query over them runs through the normal binder
//! and executor.

use crate::exec::Exec;
use crate::parser::Query;
use crate::plan::bind::Binder;
use crate::session::Session;
use lockstep_engine::catalog::Catalog;
use lockstep_engine::{Error as EngineError, Isolation};
use lockstep_tables::{ColumnDef, IndexDef, TableDef};
use lockstep_types::result::{Response, ResultSet};
use lockstep_types::{DataType, Error, Value};

pub(super) fn table(
    catalog: &Catalog,
    id: u32,
    name: &str,
    columns: &[(&str, DataType)],
    rows: Vec<Vec<Value>>,
) {
    table_in(catalog, "information_schema", id, name, columns, rows)
}

/// An in-memory table `db.name` of the scratch catalog holding `rows`.
pub(super) fn table_in(
    catalog: &Catalog,
    db: &str,
    id: u32,
    name: &str,
    columns: &[(&str, DataType)],
    rows: Vec<Vec<Value>>,
) {
    let mut cols: Vec<ColumnDef> = columns
        .iter()
        .map(|&(n, t)| ColumnDef::plain(n, t))
        .collect();
    cols.push(crate::plan::ddl::row_id_column());
    let hidden = cols.len() - 1;
    let def = TableDef {
        id,
        database: db.into(),
        name: name.into(),
        columns: cols,
        indexes: vec![IndexDef {
            name: "PRIMARY".into(),
            columns: vec![hidden],
            unique: true,
        }],
        hidden_row_id: Some(hidden),
        collation: 0,
    };
    let t = catalog.add_table_public(def);
    for (i, mut r) in rows.into_iter().enumerate() {
        r.push(Value::UInt(i as u64 + 1));
        let key = t.def().index_key(0, &r);
        t.load_row(key, Some(lockstep_tables::Row::new(&r)));
    }
}

/// COLUMN_COMMENT's place in a row of information_schema.COLUMNS.
const COLUMN_COMMENT: usize = 18;

fn build(session: &Session) -> Catalog {
    let cat = Catalog::new();
    let engine = session.engine();
    schemata(&cat, session);
    let (mut tables, columns, stats) = table_rows(session);
    let views = view_rows(session, &mut tables);
    tables_table(&cat, tables);
    statistics_table(&cat, stats);
    processlist(&cat, session);
    views_table(&cat, views);
    constraints(&cat, session);
    crate::session::routines::infoschema_tables(&cat, session);
    performance_schema(&cat, session);
    super::infoschema_meta::performance_schema_tables(&cat);
    super::privilege_tables::add_tables(&cat, session);
    super::user_tables::add_tables(&cat, engine);
    crate::session::connect_attrs::tables(&cat, session);
    crate::session::replication_tables::tables(&cat, session);
    crate::session::roles::infoschema_tables(&cat, session);
    crate::session::collations::infoschema_tables(&cat);
    keywords_table(&cat);
    crate::session::innodb_trx::infoschema_table(&cat, session);
    crate::session::histogram::infoschema_table(&cat, session);
    // Last: it lists the columns of the system tables built above.
    columns_table(&cat, columns, session);
    cat.add_database_public("information_schema");
    cat.add_database_public("performance_schema");
    cat
}

/// A system table's rows.
type Rows = Vec<Vec<Value>>;

/// information_schema.SCHEMATA: the schemas the user's privileges reach.
fn schemata(cat: &Catalog, session: &Session) {
    let engine = session.engine();
    let vc = DataType::VarChar { len: 64 };
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
        cat,
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
}

/// The rows of TABLES, COLUMNS and STATISTICS for the tables the user
/// sees.
fn table_rows(session: &Session) -> (Rows, Rows, Rows) {
    let engine = session.engine();
    let grants = &session.grants;
    let s = |x: &str| Value::str(x);
    let mut tables = Vec::new();
    let mut columns = Vec::new();
    let mut stats = Vec::new();
    for db in engine.catalog.databases() {
        for t in engine.catalog.tables(&db) {
            let def = t.def();
            if !grants.sees_table(&db, &def.name) {
                continue;
            }
            let notes = session.comments_of(&t);
            let status = super::comments::table_status_row(&t, &notes);
            tables.push(tables_row(&db, "BASE TABLE", status));
            let generated = engine.catalog.generated(t.id);
            for (pos, (i, c)) in def.visible_columns().enumerate() {
                let key = if def.has_declared_primary_key() && def.indexes[0].columns.contains(&i) {
                    "PRI"
                } else {
                    ""
                };
                let default = super::time_zone::default_in_zone(c, session.ctx.tz_offset)
                    .map(|d| s(&d.to_string()))
                    .unwrap_or(Value::Null);
                let mut row = column_row([&db, &def.name], pos, c, default, key);
                row[COLUMN_COMMENT] = s(notes.of_column(&c.name));
                // GENERATION_EXPRESSION follows COLUMN_COMMENT.
                let through_generated = &mut row[..COLUMN_COMMENT + 2];
                super::generated::fill_columns_row(through_generated, &generated, &c.name);
                columns.push(row);
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
                        Value::UInt(t.cardinality(n, seq + 1)),
                        s(notes.of_index(&ix.name)),
                    ]);
                    let nullable = def.columns[c].nullable;
                    let extra = super::infoschema_meta::statistics_extra(&db, nullable);
                    stats.last_mut().expect("just pushed").extend(extra);
                }
            }
        }
    }
    (tables, columns, stats)
}

/// Column `c`'s row of COLUMNS, at `pos` (from 0) of table `[db, table]`,
/// without comment or generation expression.
fn column_row(
    [db, table]: [&str; 2],
    pos: usize,
    c: &ColumnDef,
    default: Value,
    key: &str,
) -> Vec<Value> {
    let s = Value::str;
    // MySQL's DATA_TYPE is the bare name: `int` for `int unsigned`,
    // `decimal` for `decimal(10,2) unsigned`.
    let type_text = c.data_type.to_string();
    let bare = type_text.split(['(', ' ']).next().unwrap_or("");
    let mut row = vec![
        s("def"),
        s(db),
        s(table),
        s(&c.name),
        Value::UInt(pos as u64 + 1),
        default,
        s(if c.nullable { "YES" } else { "NO" }),
        s(bare),
        s(&type_text),
        s(key),
        s(if c.auto_increment {
            "auto_increment"
        } else {
            ""
        }),
    ];
    row.extend(column_details(c.data_type, c.collation));
    row.extend(super::infoschema_meta::columns_extra(
        c.data_type,
        c.collation,
    ));
    row
}

/// A table's row of TABLES: its SHOW TABLE STATUS row, whose columns
/// are TABLES' own in the same order, TABLE_TYPE aside.
fn tables_row(db: &str, kind: &str, status: Vec<Value>) -> Vec<Value> {
    debug_assert_eq!(status.len(), super::comments::TABLE_STATUS.len());
    let mut status = status.into_iter();
    let name = status.next().unwrap_or(Value::Null);
    let mut row = vec![Value::str("def"), Value::str(db), name, Value::str(kind)];
    row.extend(status);
    row
}

fn tables_table(cat: &Catalog, tables: Rows) {
    let vc = DataType::VarChar { len: 64 };
    let big = DataType::BigInt { unsigned: true };
    let time = DataType::DateTime { fsp: 0 };
    table(
        cat,
        2,
        "TABLES",
        &[
            ("TABLE_CATALOG", vc),
            ("TABLE_SCHEMA", vc),
            ("TABLE_NAME", vc),
            ("TABLE_TYPE", vc),
            ("ENGINE", vc),
            ("VERSION", big),
            ("ROW_FORMAT", vc),
            ("TABLE_ROWS", big),
            ("AVG_ROW_LENGTH", big),
            ("DATA_LENGTH", big),
            ("MAX_DATA_LENGTH", big),
            ("INDEX_LENGTH", big),
            ("DATA_FREE", big),
            ("AUTO_INCREMENT", big),
            ("CREATE_TIME", time),
            ("UPDATE_TIME", time),
            ("CHECK_TIME", time),
            ("TABLE_COLLATION", vc),
            ("CHECKSUM", big),
            ("CREATE_OPTIONS", DataType::VarChar { len: 256 }),
            ("TABLE_COMMENT", DataType::VarChar { len: 2048 }),
        ],
        tables,
    );
}

/// COLUMNS: the user tables' columns (`columns`), then the system
/// tables' already in `cat` and its own, as MySQL lists them (tools read
/// information_schema's columns through it).
fn columns_table(cat: &Catalog, mut columns: Rows, session: &Session) {
    let vc = DataType::VarChar { len: 64 };
    let big = DataType::BigInt { unsigned: true };
    let own: Vec<(&str, DataType)> = [
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
        ("CHARACTER_MAXIMUM_LENGTH", big),
        ("NUMERIC_PRECISION", big),
        ("NUMERIC_SCALE", big),
        ("DATETIME_PRECISION", big),
        ("CHARACTER_SET_NAME", vc),
        ("COLLATION_NAME", vc),
        ("PRIVILEGES", vc),
        ("COLUMN_COMMENT", vc),
        ("GENERATION_EXPRESSION", vc),
    ]
    .into_iter()
    .chain(super::infoschema_meta::COLUMNS_EXTRA)
    .collect();
    columns.extend(system_columns(cat, session));
    for (pos, &(name, t)) in own.iter().enumerate() {
        let c = ColumnDef::plain(name, t);
        let row = column_row(["information_schema", "COLUMNS"], pos, &c, Value::Null, "");
        columns.push(row);
    }
    table(cat, 3, "COLUMNS", &own, columns);
}

/// The columns of the system tables built in `cat` that the session
/// sees (information_schema's, everyone).
fn system_columns(cat: &Catalog, session: &Session) -> Rows {
    let mut rows = Vec::new();
    for db in ["information_schema", "mysql", "performance_schema", "sys"] {
        for t in cat.tables(db) {
            let def = t.def();
            if db != "information_schema" && !session.grants.sees_table(db, &def.name) {
                continue;
            }
            for (pos, (_, c)) in def.visible_columns().enumerate() {
                rows.push(column_row([db, &def.name], pos, c, Value::Null, ""));
            }
        }
    }
    rows
}

fn statistics_table(cat: &Catalog, stats: Rows) {
    let vc = DataType::VarChar { len: 64 };
    let big = DataType::BigInt { unsigned: true };
    table(
        cat,
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
            ("CARDINALITY", big),
            ("INDEX_COMMENT", vc),
        ]
        .into_iter()
        .chain(super::infoschema_meta::STATISTICS_EXTRA)
        .collect::<Vec<_>>(),
        stats,
    );
}

/// information_schema.PROCESSLIST: every thread with PROCESS, else the
/// user's own.
fn processlist(cat: &Catalog, session: &Session) {
    let grants = &session.grants;
    let vc = DataType::VarChar { len: 64 };
    let big = DataType::BigInt { unsigned: true };
    let s = |x: &str| Value::str(x);
    let all_threads = grants.has_global(lockstep_accounts::Privs::PROCESS);
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
        cat,
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
}

fn views_table(cat: &Catalog, views: Rows) {
    let vc = DataType::VarChar { len: 64 };
    table(
        cat,
        30,
        "VIEWS",
        &[
            ("TABLE_CATALOG", vc),
            ("TABLE_SCHEMA", vc),
            ("TABLE_NAME", vc),
            ("VIEW_DEFINITION", DataType::Text { max_len: 65535 }),
            ("CHECK_OPTION", vc),
            ("IS_UPDATABLE", vc),
            ("DEFINER", vc),
            ("SECURITY_TYPE", vc),
            ("CHARACTER_SET_CLIENT", vc),
            ("COLLATION_CONNECTION", vc),
        ],
        views,
    );
}

/// information_schema.KEYWORDS: the parser's own keyword list, so a word it
/// reserves shows RESERVED = 1 and no other does.
fn keywords_table(cat: &Catalog) {
    let rows = crate::parser::keywords::KEYWORDS
        .iter()
        .map(|(word, reserved)| vec![Value::str(word), Value::Int(i64::from(*reserved))])
        .collect();
    let columns = [
        ("WORD", DataType::VarChar { len: 128 }),
        ("RESERVED", DataType::Int { unsigned: false }),
    ];
    table(cat, 74, "KEYWORDS", &columns, rows);
}

/// The rows of information_schema.VIEWS, and each view's row of TABLES
/// (TABLE_TYPE 'VIEW'), for the views the user may see.
fn view_rows(session: &Session, tables: &mut Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    let s = |x: &str| Value::str(x);
    let mut rows = Vec::new();
    for v in session.engine().catalog.all_views() {
        if !session.grants.sees_table(&v.database, &v.name) {
            continue;
        }
        // A view has no storage: every status column NULL, the comment
        // 'VIEW', as in MySQL.
        let mut status = vec![Value::Null; super::comments::TABLE_STATUS.len()];
        status[0] = s(&v.name);
        *status.last_mut().expect("TABLE_STATUS is not empty") = s("VIEW");
        tables.push(tables_row(&v.database, "VIEW", status));
        let check = match v.check_option {
            lockstep_engine::CheckOption::None => "NONE",
            lockstep_engine::CheckOption::Cascaded => "CASCADED",
            lockstep_engine::CheckOption::Local => "LOCAL",
        };
        rows.push(vec![
            s("def"),
            s(&v.database),
            s(&v.name),
            s(&v.query),
            s(check),
            s(
                if session
                    .binder()
                    .view_updatable(&std::sync::Arc::new(v.clone()))
                {
                    "YES"
                } else {
                    "NO"
                },
            ),
            s(&format!("{}@{}", v.definer.0, v.definer.1)),
            s(if v.security_definer {
                "DEFINER"
            } else {
                "INVOKER"
            }),
            s("utf8mb4"),
            s("utf8mb4_0900_ai_ci"),
        ]);
    }
    rows
}

/// The COLUMNS fields that follow from a column's type: length, numeric
/// precision and scale, fractional digits, character set and collation,
/// then privileges, comment and generation expression.
fn column_details(t: DataType, collation: u16) -> Vec<Value> {
    let num = |n: Option<u64>| n.map_or(Value::Null, Value::UInt);
    let length = if t.is_string() || t.is_binary() {
        t.max_bytes().map(|b| b as u64)
    } else {
        None
    };
    let (precision, scale) = super::infoschema_meta::numeric(t);
    let scale = scale.map(|s| s as u64);
    let fsp = super::infoschema_meta::datetime_precision(t);
    let text = t.is_string() && !t.is_binary();
    let charset = |v: &str| if text { Value::str(v) } else { Value::Null };
    let (set, name) = super::charset::of_collation(collation);
    vec![
        num(length),
        num(precision),
        num(scale),
        num(fsp),
        charset(set.name),
        charset(name),
        Value::str("select,insert,update,references"),
        Value::str(""),
        Value::str(""),
    ]
}

/// The rows of the constraint tables, gathered in one walk of the catalog.
#[derive(Default)]
struct ConstraintRows {
    usage: Rows,
    kinds: Rows,
    referential: Rows,
    checks: Rows,
}

/// KEY_COLUMN_USAGE and TABLE_CONSTRAINTS (primary keys, unique indexes,
/// foreign keys and CHECKs), REFERENTIAL_CONSTRAINTS, CHECK_CONSTRAINTS,
/// and FILES (empty: lockstep has no tablespace files of its own to list).
fn constraints(cat: &Catalog, session: &Session) {
    let mut rows = ConstraintRows::default();
    let engine = session.engine();
    for db in engine.catalog.databases() {
        for t in engine.catalog.tables(&db) {
            let def = t.def();
            if !session.grants.sees_table(&db, &def.name) {
                continue;
            }
            unique_key_rows(&db, &def, &mut rows);
            let fks = engine.catalog.foreign_keys(t.id);
            let fk = crate::session::foreign_keys::info_rows(engine, &def, &fks);
            rows.usage.extend(fk.usage);
            rows.kinds.extend(fk.kinds);
            rows.referential.extend(fk.referential);
            check_rows(&db, &def.name, &engine.catalog.checks(t.id), &mut rows);
        }
    }
    constraint_tables(cat, rows);
}

/// The PRIMARY KEY (when declared) and UNIQUE indexes of one table.
fn unique_key_rows(db: &str, def: &TableDef, rows: &mut ConstraintRows) {
    let s = |x: &str| Value::str(x);
    for (n, ix) in def.indexes.iter().enumerate() {
        let primary = n == 0;
        if (primary && !def.has_declared_primary_key()) || !ix.unique {
            continue;
        }
        let kind = if primary { "PRIMARY KEY" } else { "UNIQUE" };
        let (index, table) = (s(&ix.name), s(&def.name));
        rows.kinds.push(vec![
            s("def"),
            s(db),
            index.clone(),
            s(db),
            table.clone(),
            s(kind),
            s("YES"),
        ]);
        for (pos, &c) in ix.columns.iter().enumerate() {
            let mut row = vec![s("def"), s(db), index.clone(), s("def"), s(db)];
            row.extend([table.clone(), s(&def.columns[c].name)]);
            row.push(Value::UInt(pos as u64 + 1));
            row.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
            rows.usage.push(row);
        }
    }
}

/// The CHECK constraints of one table, in TABLE_CONSTRAINTS and
/// CHECK_CONSTRAINTS.
fn check_rows(
    db: &str,
    table: &str,
    checks: &[lockstep_tables::CheckConstraint],
    rows: &mut ConstraintRows,
) {
    let s = |x: &str| Value::str(x);
    for c in checks {
        let enforced = if c.enforced { "YES" } else { "NO" };
        let name = s(&c.name);
        rows.kinds.push(vec![
            s("def"),
            s(db),
            name.clone(),
            s(db),
            s(table),
            s("CHECK"),
            s(enforced),
        ]);
        let clause = s(&super::checks::check_clause(&c.expr));
        rows.checks.push(vec![s("def"), s(db), name, clause]);
    }
}

/// Declares the constraint tables over the gathered rows.
fn constraint_tables(cat: &Catalog, rows: ConstraintRows) {
    let vc = DataType::VarChar { len: 64 };
    let big = DataType::BigInt { unsigned: true };
    let typed = |names: &[&'static str]| -> Vec<(&'static str, DataType)> {
        names
            .iter()
            .map(|n| (*n, if n.contains("POSITION") { big } else { vc }))
            .collect()
    };
    let check_cols = [
        "CONSTRAINT_CATALOG",
        "CONSTRAINT_SCHEMA",
        "CONSTRAINT_NAME",
        "CHECK_CLAUSE",
    ];
    table(
        cat,
        9,
        "CHECK_CONSTRAINTS",
        &typed(&check_cols),
        rows.checks,
    );
    let usage_cols = [
        "CONSTRAINT_CATALOG",
        "CONSTRAINT_SCHEMA",
        "CONSTRAINT_NAME",
        "TABLE_CATALOG",
        "TABLE_SCHEMA",
        "TABLE_NAME",
        "COLUMN_NAME",
        "ORDINAL_POSITION",
        "POSITION_IN_UNIQUE_CONSTRAINT",
        "REFERENCED_TABLE_SCHEMA",
        "REFERENCED_TABLE_NAME",
        "REFERENCED_COLUMN_NAME",
    ];
    table(cat, 6, "KEY_COLUMN_USAGE", &typed(&usage_cols), rows.usage);
    let kind_cols = [
        "CONSTRAINT_CATALOG",
        "CONSTRAINT_SCHEMA",
        "CONSTRAINT_NAME",
        "TABLE_SCHEMA",
        "TABLE_NAME",
        "CONSTRAINT_TYPE",
        "ENFORCED",
    ];
    table(cat, 7, "TABLE_CONSTRAINTS", &typed(&kind_cols), rows.kinds);
    let referential_cols = [
        "CONSTRAINT_CATALOG",
        "CONSTRAINT_SCHEMA",
        "CONSTRAINT_NAME",
        "UNIQUE_CONSTRAINT_CATALOG",
        "UNIQUE_CONSTRAINT_SCHEMA",
        "UNIQUE_CONSTRAINT_NAME",
        "MATCH_OPTION",
        "UPDATE_RULE",
        "DELETE_RULE",
        "TABLE_NAME",
        "REFERENCED_TABLE_NAME",
    ];
    let referential = typed(&referential_cols);
    table(
        cat,
        8,
        "REFERENTIAL_CONSTRAINTS",
        &referential,
        rows.referential,
    );
    let file_cols = [
        "FILE_ID",
        "FILE_NAME",
        "FILE_TYPE",
        "TABLESPACE_NAME",
        "TABLE_SCHEMA",
        "TABLE_NAME",
        "LOGFILE_GROUP_NAME",
        "ENGINE",
        "TOTAL_EXTENTS",
        "INITIAL_SIZE",
        "EXTRA",
    ];
    table(cat, 12, "FILES", &typed(&file_cols), Vec::new());
}

/// performance_schema's status and variable tables (the ones drivers and
/// monitoring read at connect): VARIABLE_NAME, VARIABLE_VALUE.
fn performance_schema(cat: &Catalog, session: &Session) {
    let cols = [
        ("VARIABLE_NAME", DataType::VarChar { len: 64 }),
        ("VARIABLE_VALUE", DataType::VarChar { len: 1024 }),
    ];
    let pair = |n: &str, v: String| vec![Value::str(n), Value::str(&v)];
    let status = |global: bool| -> Vec<Vec<Value>> {
        session
            .status_values(global)
            .into_iter()
            .map(|(n, v)| pair(n, v))
            .collect()
    };
    let variables = |global: bool| -> Vec<Vec<Value>> {
        session
            .server
            .globals
            .all()
            .into_iter()
            .map(|(name, fallback)| {
                let v = crate::session::system_var(&session.server, &session.ctx, global, &name)
                    .unwrap_or(fallback);
                pair(&name, v.to_string())
            })
            .collect()
    };
    let ps = "performance_schema";
    table_in(cat, ps, 20, "GLOBAL_STATUS", &cols, status(true));
    table_in(cat, ps, 21, "SESSION_STATUS", &cols, status(false));
    table_in(cat, ps, 22, "GLOBAL_VARIABLES", &cols, variables(true));
    table_in(cat, ps, 23, "SESSION_VARIABLES", &cols, variables(false));
}

/// The system table `name` names (unqualified: in the session's
/// database), as a query reading it would see it, for DESCRIBE and the
/// other SHOWs about one table; None when the name is in no system schema.
pub(super) fn system_table(
    session: &Session,
    name: &crate::parser::ObjectName,
) -> Option<Result<std::sync::Arc<lockstep_tables::Table>, Error>> {
    let db = name.database.as_ref().or(session.ctx.database.as_ref())?;
    if !super::is_system_db(db) {
        return None;
    }
    // Named in any case, as in a query (see Binder::table).
    let found = build(session).table(&db.to_ascii_lowercase(), &name.name.to_ascii_uppercase());
    Some(found.ok_or_else(|| Error::no_such_table(db, &name.name)))
}

/// Runs a query whose tables live in information_schema.
pub fn query(session: &mut Session, q: &Query) -> Result<Response, Error> {
    let cat = build(session);
    // The system tables join the session's temporary tables, so a query
    // may read them beside its own tables, in subqueries too; names
    // resolve as MySQL's do (unqualified ones in the session's database).
    let mut tables = session.temp_tables.clone();
    for db in cat.databases() {
        for t in cat.tables(&db) {
            let name = t.def().name.clone();
            tables.insert((db.clone(), name), t);
        }
    }
    let plan = session.binder().with_temporary(&tables).bind_query(q)?;
    let rows = run_scratch(session, &plan)?;
    Ok(Response::Rows(ResultSet {
        columns: plan.columns.clone(),
        rows,
        warnings: 0,
    }))
}

/// The rows of a SHOW result for which `condition` (SHOW ... WHERE) is
/// true: the result becomes a scratch table named after nothing, and the
/// condition runs over it as a WHERE clause, so it may name any column of
/// the result.
pub fn filter_rows(
    session: &mut Session,
    shown: ResultSet,
    condition: &crate::parser::Expr,
) -> Result<Response, Error> {
    use crate::parser::{SelectItem, TableRef};
    let cat = Catalog::new();
    cat.add_database_public("show");
    let columns: Vec<(&str, DataType)> = shown
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.data_type))
        .collect();
    table_in(&cat, "show", 1, "result", &columns, shown.rows.clone());
    let from = TableRef::Table {
        name: crate::parser::ObjectName {
            database: Some("show".into()),
            name: "result".into(),
        },
        alias: None,
        hints: Vec::new(),
    };
    let q = Query::plain(
        vec![SelectItem::Wildcard],
        vec![from],
        Some(condition.clone()),
    );
    let mut binder = Binder::new(&cat, Some("show".into()));
    let plan = binder.bind_query(&q)?;
    let rows = run_scratch(session, &plan)?;
    Ok(Response::Rows(ResultSet { rows, ..shown }))
}

/// Runs a plan over a scratch catalog's in-memory tables (no row locks:
/// nobody else sees them) in a throwaway transaction.
fn run_scratch(
    session: &mut Session,
    plan: &crate::plan::QueryPlan,
) -> Result<Vec<Vec<Value>>, Error> {
    let engine = session.engine().clone();
    let mut txn = engine.begin(Isolation::ReadCommitted);
    let mut exec = Exec::new(&engine, &mut txn, &mut session.ctx, &[]);
    let rows = exec.query(plan).map_err(|e| match e {
        EngineError::Sql(e) => e,
        EngineError::LockWait(_) => Error::internal("lock wait on a scratch table"),
    });
    drop(exec);
    engine.rollback(&mut txn);
    rows
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    /// System table ids are chosen by hand across several files; a repeat
    /// would make a lookup by id find another table.
    #[test]
    fn system_table_ids_are_distinct() {
        let mut db = crate::tests::db::Db::new("infoschema_ids");
        let cat = db.with_session(super::build);
        let mut seen = BTreeMap::new();
        for schema in ["information_schema", "performance_schema", "mysql"] {
            for t in cat.tables(schema) {
                let name = format!("{schema}.{}", t.def().name);
                if let Some(other) = seen.insert(t.id, name.clone()) {
                    panic!("id {} used by {other} and {name}", t.id);
                }
            }
        }
        assert!(seen.len() > 30, "only {} system tables", seen.len());
    }
}
