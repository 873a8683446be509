//! Generated columns after a restart: their definitions come back from
//! the log and from a checkpoint, and writes still compute them; an
//! ALTER that adds one is redone by recovery with the same values.

use super::db::Db;
use lockstep_types::Value;

fn ints(db: &mut Db, sql: &str) -> Vec<Vec<i64>> {
    let rows = db.rows(sql);
    let cell = |v: &Value| v.to_i64().unwrap_or(i64::MIN);
    rows.iter().map(|r| r.iter().map(cell).collect()).collect()
}

#[test]
fn generated_columns_compute_after_log_replay_and_checkpoint() {
    let mut db = Db::new("gencol-restart");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, a INT, s INT AS (a * 2), p INT AS (s + 1) STORED, KEY (s))");
    db.ok("INSERT INTO t (id, a) VALUES (1, 10), (2, 20)");
    db.ok("ALTER TABLE t ADD COLUMN q INT AS (a + id) STORED NOT NULL");
    db.reopen();
    // Replayed from the log: the ALTER's rebuild computed q again.
    let all = "SELECT id, a, s, p, q FROM t ORDER BY id";
    assert_eq!(
        ints(&mut db, all),
        [[1, 10, 20, 21, 11], [2, 20, 40, 41, 22]]
    );
    db.ok("INSERT INTO t (id, a) VALUES (3, 5)");
    db.ok("UPDATE t SET a = a + 1 WHERE id = 1");
    assert_eq!(db.err("INSERT INTO t (id, a, s) VALUES (4, 1, 1)"), 3105);
    db.server.engine.checkpoint().expect("checkpoint");
    db.reopen();
    // From the checkpoint: the definitions, and still computed.
    db.ok("INSERT INTO t (id, a) VALUES (4, 7)");
    let want = [
        [1, 11, 22, 23, 12],
        [2, 20, 40, 41, 22],
        [3, 5, 10, 11, 8],
        [4, 7, 14, 15, 11],
    ];
    assert_eq!(ints(&mut db, all), want);
    assert_eq!(ints(&mut db, "SELECT id FROM t WHERE s = 14"), [[4]]);
    assert_eq!(db.err("ALTER TABLE t DROP COLUMN a"), 3108);
}

#[test]
fn prepared_writes_compute_generated_columns() {
    let mut db = Db::new("gencol-prepared");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), n INT AS (CHAR_LENGTH(a)) VIRTUAL)");
    let mut ins = db.prepare(None, "INSERT INTO t (id, a) VALUES (?, ?)");
    for (id, a) in [(1, "x"), (2, "abc")] {
        let params = [Value::Int(id), Value::str(a)];
        db.try_execute(None, &mut ins, &params).expect("insert");
    }
    let mut upd = db.prepare(None, "UPDATE t SET a = ? WHERE id = ?");
    let params = [Value::str("hello"), Value::Int(1)];
    db.try_execute(None, &mut upd, &params).expect("update");
    let mut bad = db.prepare(None, "INSERT INTO t (id, a, n) VALUES (?, 'q', ?)");
    let e = db.try_execute(None, &mut bad, &[Value::Int(3), Value::Int(1)]);
    assert_eq!(e.err().map(|e| e.number()), Some(3105));
    assert_eq!(
        ints(&mut db, "SELECT id, n FROM t ORDER BY id"),
        [[1, 5], [2, 3]]
    );
}
