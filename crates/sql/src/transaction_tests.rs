//! Transactions as ORMs use them: savepoints nested inside a transaction.

use crate::test_db::Db;
use lockstep_types::Value;

fn ids(db: &mut Db) -> Vec<i64> {
    db.rows("SELECT id FROM t ORDER BY id")
        .into_iter()
        .map(|r| r[0].to_i64().expect("an integer id"))
        .collect()
}

#[test]
fn savepoints_roll_back_what_came_after_them() {
    let mut db = Db::new("savepoints");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v))");
    db.ok("BEGIN");
    db.ok("INSERT INTO t VALUES (1, 1)");
    db.ok("SAVEPOINT a");
    db.ok("INSERT INTO t VALUES (2, 2)");
    db.ok("UPDATE t SET v = 10 WHERE id = 1");
    db.ok("SAVEPOINT b");
    db.ok("DELETE FROM t WHERE id = 1");
    assert_eq!(ids(&mut db), vec![2]);
    db.ok("ROLLBACK TO SAVEPOINT b");
    assert_eq!(ids(&mut db), vec![1, 2]);
    // The savepoint stays after a rollback to it; later ones go.
    db.ok("INSERT INTO t VALUES (3, 3)");
    db.ok("ROLLBACK TO b");
    assert_eq!(ids(&mut db), vec![1, 2]);
    db.ok("rollback work to savepoint A");
    assert_eq!(ids(&mut db), vec![1]);
    assert_eq!(
        db.rows("SELECT v FROM t WHERE v = 1"),
        vec![vec![Value::Int(1)]],
        "the index sees the undone update"
    );
    assert_eq!(db.err("ROLLBACK TO b"), 1305);
    db.ok("SAVEPOINT c");
    db.ok("RELEASE SAVEPOINT c");
    assert_eq!(db.err("RELEASE SAVEPOINT c"), 1305);
    db.ok("INSERT INTO t VALUES (4, 4)");
    db.ok("COMMIT");
    assert_eq!(ids(&mut db), vec![1, 4]);
    // A savepoint of a transaction that ended is gone.
    assert_eq!(db.err("ROLLBACK TO a"), 1305);
    // What is committed is what the log holds: the same after recovery.
    db.ok("BEGIN");
    db.ok("SAVEPOINT x");
    db.ok("INSERT INTO t VALUES (5, 5)");
    db.ok("ROLLBACK TO x");
    db.ok("INSERT INTO t VALUES (6, 6)");
    db.ok("COMMIT");
    assert_eq!(ids(&mut db), vec![1, 4, 6]);
}

#[test]
fn a_same_named_savepoint_replaces_the_first() {
    let mut db = Db::new("savepoint_names");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY)");
    db.ok("BEGIN");
    db.ok("SAVEPOINT s");
    db.ok("INSERT INTO t VALUES (1)");
    db.ok("SAVEPOINT S");
    db.ok("INSERT INTO t VALUES (2)");
    db.ok("ROLLBACK TO s");
    assert_eq!(ids(&mut db), vec![1]);
    db.ok("ROLLBACK");
    assert!(ids(&mut db).is_empty());
}
