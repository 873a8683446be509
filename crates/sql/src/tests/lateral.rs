//! LATERAL derived tables and JSON_TABLE through the protocol's prepared
//! statements, under a user's privileges, and against the memory cap
//! (the script tests cover the rest: tests/scripts/lateral.test,
//! json_table.test).

use super::db::Db;
use super::views::login;
use lockstep_accounts::{Account, Credential, Level, Privs};
use lockstep_types::Value;

fn setup(name: &str) -> Db {
    let mut db = Db::new(name);
    db.ok("CREATE TABLE dept (id INT PRIMARY KEY, name VARCHAR(10))");
    db.ok("CREATE TABLE emp (id INT PRIMARY KEY, dept INT, salary INT, KEY (dept))");
    db.ok("INSERT INTO dept VALUES (1, 'eng'), (2, 'ops'), (3, 'none')");
    db.ok("INSERT INTO emp VALUES (1, 1, 300), (2, 1, 200), (3, 2, 100), (4, 2, 150)");
    db
}

#[test]
fn prepared_parameters_inside_the_lateral_subquery() {
    let mut db = setup("lateral-prepared");
    let sql = "SELECT d.id, x.salary FROM dept d LEFT JOIN LATERAL \
               (SELECT salary FROM emp WHERE emp.dept = d.id AND salary >= ? \
                ORDER BY salary DESC LIMIT ?) x ON TRUE ORDER BY d.id, x.salary";
    let mut p = db.prepare(None, sql);
    let rows = db.execute(None, &mut p, &[Value::Int(150), Value::Int(1)]);
    let want = |v: &[(i64, Option<i64>)]| -> Vec<Vec<Value>> {
        v.iter()
            .map(|(a, b)| vec![Value::Int(*a), b.map_or(Value::Null, Value::Int)])
            .collect()
    };
    assert_eq!(rows, want(&[(1, Some(300)), (2, Some(150)), (3, None)]));
    // Executed again with other values: nothing cached across executions.
    let rows = db.execute(None, &mut p, &[Value::Int(0), Value::Int(5)]);
    let all = [
        (1, Some(200)),
        (1, Some(300)),
        (2, Some(100)),
        (2, Some(150)),
        (3, None),
    ];
    assert_eq!(rows, want(&all));
}

#[test]
fn prepared_json_table_document() {
    let mut db = setup("json-table-prepared");
    let sql = "SELECT j.n, j.a FROM JSON_TABLE(?, '$[*]' COLUMNS \
               (n FOR ORDINALITY, a INT PATH '$.a')) j";
    let mut p = db.prepare(None, sql);
    let rows = db.execute(None, &mut p, &[Value::str(r#"[{"a": 7}, {}]"#)]);
    assert_eq!(
        rows,
        vec![
            vec![Value::UInt(1), Value::Int(7)],
            vec![Value::UInt(2), Value::Null]
        ]
    );
    assert!(db.execute(None, &mut p, &[Value::Null]).is_empty());
}

#[test]
fn a_user_needs_select_on_the_lateral_tables() {
    let mut db = setup("lateral-privileges");
    let mut root = Account::new("root", "%", Credential::Native([0; 20]));
    root.global = Privs::all_at(Level::Global) | Privs::GRANT_OPTION;
    db.server.engine.accounts.set_builtin(root);
    db.ok("CREATE USER reader");
    db.ok("GRANT SELECT ON d.dept TO reader");
    let mut reader = login(&mut db, 2, "reader");
    let lateral = "SELECT * FROM dept d, LATERAL (SELECT * FROM emp WHERE emp.dept = d.id) x";
    let code = db.run_in(&mut reader, lateral).err().map(|e| e.number());
    assert_eq!(code, Some(1142));
    let json = "SELECT d.id, j.a FROM dept d, JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) j";
    assert!(db.run_in(&mut reader, json).is_ok());
}

#[test]
fn cached_lateral_results_count_against_the_memory_cap() {
    let mut db = setup("lateral-memory");
    db.ok("CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(2000))");
    for i in 0..40 {
        db.ok(&format!("INSERT INTO big VALUES ({i}, REPEAT('x', 2000))"));
    }
    db.ok("SET SESSION query_memory_limit = 65536");
    let sql = "SELECT COUNT(*) FROM big b, LATERAL (SELECT pad FROM big i WHERE i.id <= b.id) x";
    let code = db.run(sql).err().map(|e| e.number());
    assert_eq!(code, Some(1041));
    db.ok("SET SESSION query_memory_limit = DEFAULT");
    let rows = db.rows(sql);
    assert_eq!(rows, vec![vec![Value::Int(820)]]);
}
