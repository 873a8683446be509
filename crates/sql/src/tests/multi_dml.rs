//! Multi-table UPDATE and DELETE beyond the script: privileges (UPDATE or
//! DELETE on the targets, SELECT on the other tables), prepared
//! statements with parameters, read_only and the statement memory cap.

use super::db::Db;
use super::views::login;
use crate::Session;
use lockstep_accounts::{Account, Credential, Level, Privs};
use lockstep_types::Value;

fn code(db: &mut Db, s: &mut Session, sql: &str) -> u16 {
    match db.run_in(s, sql) {
        Ok(_) => 0,
        Err(e) => e.number(),
    }
}

fn setup(db: &mut Db) {
    db.ok("CREATE TABLE a (id INT PRIMARY KEY, v INT)");
    db.ok("CREATE TABLE b (id INT PRIMARY KEY, w INT)");
    db.ok("INSERT INTO a VALUES (1, 10), (2, 20)");
    db.ok("INSERT INTO b VALUES (1, 100), (2, 200)");
}

#[test]
fn targets_need_update_or_delete_and_the_rest_select() {
    let mut db = Db::new("multi-privs");
    let mut root = Account::new("root", "%", Credential::Native([0; 20]));
    root.global = Privs::all_at(Level::Global) | Privs::GRANT_OPTION;
    db.server.engine.accounts.set_builtin(root);
    setup(&mut db);
    db.ok("CREATE USER w, nobody");
    db.ok("GRANT UPDATE, DELETE ON d.a TO w");
    db.ok("GRANT SELECT ON d.b TO w");
    let mut w = login(&mut db, 2, "w");
    let up = "UPDATE a JOIN b ON b.id = a.id SET a.v = b.w";
    assert_eq!(code(&mut db, &mut w, up), 0);
    assert_eq!(
        db.rows("SELECT v FROM a WHERE id = 2"),
        vec![vec![Value::Int(200)]]
    );
    // b is only read: changing it needs UPDATE on it.
    let up_b = "UPDATE a JOIN b ON b.id = a.id SET b.w = 1";
    assert_eq!(code(&mut db, &mut w, up_b), 1142);
    assert_eq!(
        code(&mut db, &mut w, "DELETE a, b FROM a JOIN b ON b.id = a.id"),
        1142
    );
    assert_eq!(
        code(
            &mut db,
            &mut w,
            "DELETE a FROM a JOIN b ON b.id = a.id WHERE b.w = 100"
        ),
        0
    );
    assert_eq!(db.rows("SELECT COUNT(*) FROM a"), vec![vec![Value::Int(1)]]);
    let mut nobody = login(&mut db, 3, "nobody");
    assert_eq!(code(&mut db, &mut nobody, up), 1142);
    assert_eq!(code(&mut db, &mut nobody, "DELETE FROM a USING a, b"), 1142);
    // Without SELECT on a table it only reads.
    db.ok("REVOKE SELECT ON d.b FROM w");
    assert_eq!(code(&mut db, &mut w, up), 1142);
}

#[test]
fn prepared_with_parameters_in_the_join_and_the_set() {
    let mut db = Db::new("multi-prepared");
    setup(&mut db);
    let sql = "UPDATE a JOIN b ON b.id = a.id AND b.id = ? SET a.v = ?, b.w = b.w + ?";
    let mut p = db.prepare(None, sql);
    for (id, v) in [(1, 11), (2, 22), (9, 99)] {
        let params = [Value::Int(id), Value::Int(v), Value::Int(1)];
        db.try_execute(None, &mut p, &params).expect("runs");
    }
    let rows = db.rows("SELECT a.v, b.w FROM a JOIN b ON b.id = a.id ORDER BY a.id");
    let want = [[11, 101], [22, 201]];
    let want: Vec<Vec<Value>> = want
        .iter()
        .map(|r| r.iter().map(|&x| Value::Int(x)).collect())
        .collect();
    assert_eq!(rows, want);
    let mut d = db.prepare(
        None,
        "DELETE a, b FROM a JOIN b ON b.id = a.id WHERE a.v = ?",
    );
    db.try_execute(None, &mut d, &[Value::Int(22)])
        .expect("runs");
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM a, b"),
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn read_only_and_the_memory_cap_hold() {
    let mut db = Db::new("multi-limits");
    setup(&mut db);
    db.ok("SET GLOBAL super_read_only = 1");
    assert_eq!(db.err("UPDATE a JOIN b ON b.id = a.id SET a.v = 1"), 1290);
    assert_eq!(db.err("DELETE a FROM a JOIN b ON b.id = a.id"), 1290);
    db.ok("SET GLOBAL super_read_only = 0");
    db.ok("SET GLOBAL read_only = 0");
    db.ok("INSERT INTO a SELECT id + 2, v FROM a");
    for _ in 0..7 {
        db.ok("INSERT INTO a SELECT id + (SELECT MAX(id) FROM a), v FROM a");
    }
    db.ok("SET query_memory_limit = 65536");
    assert_eq!(db.err("UPDATE a JOIN b ON 1 = 1 SET a.v = b.w"), 1041);
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM a WHERE v > 20"),
        vec![vec![Value::Int(0)]]
    );
}
