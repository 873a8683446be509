//! Transactions as ORMs use them: savepoints nested inside a transaction.

use crate::tests::db::Db;
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

#[test]
fn date_arithmetic_and_string_functions_through_a_session() {
    let mut db = Db::new("functions");
    let text = |db: &mut Db, sql: &str| -> Vec<String> {
        db.rows(sql)[0].iter().map(|v| v.to_string()).collect()
    };
    assert_eq!(
        text(&mut db, "SELECT '2024-01-31' + INTERVAL 1 MONTH, DATE_SUB('2024-01-01', INTERVAL 2 HOUR), INTERVAL 1 DAY + '2024-12-31', DATE_ADD('2024-01-01 10:00:00', INTERVAL 90 MINUTE)"),
        vec!["2024-02-29", "2023-12-31 22:00:00", "2025-01-01", "2024-01-01 11:30:00"]
    );
    assert_eq!(
        text(&mut db, "SELECT TIMESTAMPDIFF(MINUTE, '2024-01-01 00:00:00', '2024-01-01 02:00:30'), TIMESTAMPADD(DAY, 1, '2024-02-28'), DATEDIFF('2024-03-01', '2024-02-01')"),
        vec!["120", "2024-02-29", "29"]
    );
    assert_eq!(
        text(&mut db, "SELECT DATE_FORMAT('2024-03-05 14:07:09', '%d/%m/%Y %H:%i'), HOUR('2024-03-05 14:07:09'), DAYNAME('2024-11-26'), LAST_DAY('2023-02-03'), FROM_UNIXTIME(86400)"),
        vec!["05/03/2024 14:07", "14", "Tuesday", "2023-02-28", "1970-01-02 00:00:00"]
    );
    assert_eq!(
        text(&mut db, "SELECT HEX(UNHEX('4142')), UNHEX('zz'), SUBSTRING_INDEX('www.mysql.com', '.', 2), SUBSTRING_INDEX('www.mysql.com', '.', -2), LENGTH(UUID())"),
        vec!["4142", "NULL", "www.mysql", "mysql.com", "36"]
    );
    assert_ne!(db.rows("SELECT UUID()"), db.rows("SELECT UUID()"));
    assert_eq!(
        db.err("SELECT DATE_ADD('2024-01-01', INTERVAL 1 DAY_HOUR)"),
        1235
    );
    assert_eq!(
        db.err("SELECT TIMESTAMPDIFF(FORTNIGHT, '2024-01-01', '2024-02-01')"),
        1064
    );
}

#[test]
fn common_table_expressions() {
    let mut db = Db::new("cte");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, g INT)");
    db.ok("INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)");
    assert_eq!(
        db.rows("WITH c AS (SELECT g, COUNT(*) n FROM t GROUP BY g) SELECT g, n FROM c ORDER BY g"),
        vec![
            vec![Value::Int(1), Value::Int(2)],
            vec![Value::Int(2), Value::Int(1)]
        ]
    );
    // Column lists, a CTE naming an earlier one, joins and subqueries.
    assert_eq!(
        db.rows("WITH a (x) AS (SELECT id FROM t WHERE g = 1), b AS (SELECT x * 10 AS y FROM a) SELECT t.id, b.y FROM t JOIN b ON b.y = t.id * 10 WHERE t.id IN (SELECT x FROM a) ORDER BY t.id"),
        vec![
            vec![Value::Int(1), Value::Int(10)],
            vec![Value::Int(2), Value::Int(20)]
        ]
    );
    // A CTE hides a table of the same name; used twice, it is bound twice.
    assert_eq!(
        db.rows("WITH t AS (SELECT 7 AS id) SELECT a.id + b.id FROM t a, t b"),
        vec![vec![Value::Int(14)]]
    );
    assert_eq!(db.err("WITH c (a, b) AS (SELECT 1) SELECT * FROM c"), 1353);
    assert_eq!(
        db.err("WITH RECURSIVE c AS (SELECT 1 FROM c) SELECT * FROM c"),
        3573
    );
    assert_eq!(db.err("WITH c AS (SELECT * FROM c) SELECT * FROM c"), 1146);
}

#[test]
fn create_table_as_select() {
    let mut db = Db::new("ctas");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, s VARCHAR(10))");
    db.ok("INSERT INTO t VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, NULL)");
    db.ok("CREATE TABLE c AS SELECT g, COUNT(*) AS n FROM t GROUP BY g");
    assert_eq!(
        db.rows("SELECT g, n FROM c ORDER BY g"),
        vec![
            vec![Value::Int(1), Value::Int(2)],
            vec![Value::Int(2), Value::Int(1)]
        ]
    );
    db.ok("CREATE TABLE d SELECT id, s FROM t WHERE s IS NOT NULL");
    assert_eq!(db.rows("SELECT COUNT(*) FROM d"), vec![vec![Value::Int(2)]]);
    db.ok("CREATE TEMPORARY TABLE e AS SELECT * FROM t");
    assert_eq!(db.rows("SELECT COUNT(*) FROM e"), vec![vec![Value::Int(3)]]);
    assert_eq!(db.err("CREATE TABLE c AS SELECT 1"), 1050);
    assert_eq!(db.err("CREATE TABLE f AS SELECT nope FROM t"), 1054);
    assert_eq!(db.err("SELECT * FROM f"), 1146);
}
