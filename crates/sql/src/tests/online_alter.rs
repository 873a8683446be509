//! Online ALTER TABLE: writers go on while the table is copied, and what
//! they committed is in the altered table.

use crate::session::Session;
use crate::tests::db::Db;
use lockstep_types::Value;
use std::cell::Cell;

const ROWS: i64 = 20_000;

async fn run(s: &mut Session, sql: &str) {
    let last = s.query(sql, false).await.pop().expect("a result");
    assert!(last.is_ok(), "{sql}: {last:?}");
}

fn load(db: &mut Db) {
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    db.ok("CREATE TABLE r (id INT PRIMARY KEY, v INT)");
    for start in (0..ROWS).step_by(1000) {
        let values: Vec<String> = (start..start + 1000)
            .map(|i| format!("({i}, {i})"))
            .collect();
        db.ok(&format!("INSERT INTO t VALUES {}", values.join(",")));
        db.ok(&format!("INSERT INTO r VALUES {}", values.join(",")));
    }
}

/// Every write goes to `t` and to the reference table `r` alike.
fn both(sql: &str) -> String {
    format!("BEGIN; {}; {}; COMMIT", sql, sql.replace(" t ", " r "))
}

#[test]
fn writers_commit_during_the_copy_and_their_rows_are_in_the_new_table() {
    let mut db = Db::new("online_alter");
    load(&mut db);
    let (mut alter, mut open, mut auto) = (db.session(2), db.session(3), db.session(4));
    // A transaction the ALTER's snapshot misses: its row is found by the
    // copy and caught up at the switch.
    db.run_in(&mut open, "BEGIN").expect("begin");
    db.run_in(&mut open, "INSERT INTO t VALUES (-1, 5)")
        .expect("insert");
    db.run_in(&mut open, "INSERT INTO r VALUES (-1, 5)")
        .expect("insert");
    let done = Cell::new(false);
    let during = Cell::new(0u32);
    db.block_on(async {
        let altering = async {
            run(
                &mut alter,
                "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7, ADD INDEX iv (v), LOCK=NONE",
            )
            .await;
            done.set(true);
        };
        let writing = async {
            for i in 0..40 {
                let id = i * 97;
                for sql in [
                    format!("UPDATE t SET v = v + 1000 WHERE id = {id}"),
                    format!("DELETE FROM t WHERE id = {}", id + 1),
                    format!("INSERT INTO t (id, v) VALUES ({}, {i})", ROWS + i),
                ] {
                    let batch = both(&sql);
                    for part in batch.split("; ") {
                        run(&mut auto, part).await;
                    }
                    if !done.get() {
                        during.set(during.get() + 1);
                    }
                }
                tokio::task::yield_now().await;
            }
        };
        // The open transaction writes on and commits while the ALTER waits
        // for it; new transactions queue behind that wait, so it commits
        // after the writer had some turns.
        let committing = async {
            for _ in 0..200 {
                tokio::task::yield_now().await;
            }
            run(&mut open, "UPDATE t SET v = -7 WHERE id = 2").await;
            run(&mut open, "UPDATE r SET v = -7 WHERE id = 2").await;
            assert!(!done.get(), "the ALTER waits for the open transaction");
            run(&mut open, "COMMIT").await;
        };
        tokio::join!(altering, writing, committing);
    });
    assert!(during.get() > 0, "writers committed while the ALTER copied");
    let sums = "SELECT COUNT(*), SUM(id), SUM(v) FROM ";
    assert_eq!(db.rows(&format!("{sums}t")), db.rows(&format!("{sums}r")));
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM t WHERE c <> 7"),
        vec![vec![Value::Int(0)]]
    );
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM t FORCE INDEX (iv) WHERE v > -100"),
        db.rows("SELECT COUNT(*) FROM r")
    );
    assert_eq!(
        db.rows("SELECT v FROM t WHERE id = -1"),
        vec![vec![Value::Int(5)]]
    );
    for mut s in [alter, open, auto] {
        s.disconnect();
    }
}

#[test]
fn clauses_are_checked_and_failures_leave_the_table() {
    let mut db = Db::new("online_alter_clauses");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    db.ok("INSERT INTO t VALUES (1, 1), (2, 1)");
    assert_eq!(
        db.err("ALTER TABLE t ADD COLUMN c INT, ALGORITHM=INSTANT"),
        1845
    );
    assert_eq!(
        db.err("ALTER TABLE t ADD COLUMN c INT, ALGORITHM=COPY, LOCK=NONE"),
        1846
    );
    assert_eq!(
        db.err("ALTER TABLE t ADD COLUMN n INT AUTO_INCREMENT UNIQUE, LOCK=NONE"),
        1846
    );
    assert_eq!(
        db.err("ALTER TABLE t ADD COLUMN c INT, ALGORITHM=FAST"),
        1800
    );
    assert_eq!(db.err("ALTER TABLE t ADD COLUMN c INT, LOCK=ALL"), 1801);
    assert_eq!(db.err("ALTER TABLE t ADD COLUMN c INT, LOCK=SHARED"), 1235);
    assert_eq!(db.err("CREATE INDEX i ON t (v) ALGORITHM=INSTANT"), 1845);
    assert_eq!(
        db.err("ALTER TABLE t ADD UNIQUE KEY u (v), LOCK=NONE"),
        1062
    );
    assert_eq!(db.err("CREATE UNIQUE INDEX u ON t (v) LOCK=NONE"), 1062);
    db.ok("ALTER TABLE t RENAME COLUMN v TO w, ALGORITHM=INPLACE, LOCK=NONE");
    db.ok("ALTER TABLE t RENAME TO t2, ALGORITHM=INSTANT, LOCK=NONE");
    db.ok("ALTER TABLE t2 LOCK=EXCLUSIVE, RENAME TO t");
    db.ok("ALTER TABLE t ADD COLUMN c INT DEFAULT 3, LOCK=EXCLUSIVE");
    db.ok("ALTER TABLE t ALGORITHM=INPLACE, ADD INDEX iw (w), LOCK=DEFAULT");
    db.ok("CREATE INDEX ic ON t (c) LOCK=NONE ALGORITHM=INPLACE");
    db.ok("CREATE INDEX ic2 ON t (c) LOCK=EXCLUSIVE");
    db.ok("DROP INDEX ic2 ON t LOCK=NONE");
    db.ok("ALTER TABLE t ADD COLUMN n INT AUTO_INCREMENT UNIQUE");
    assert_eq!(
        db.rows("SELECT id, w, c, n FROM t ORDER BY id"),
        vec![
            vec![Value::Int(1), Value::Int(1), Value::Int(3), Value::Int(1)],
            vec![Value::Int(2), Value::Int(1), Value::Int(3), Value::Int(2)],
        ]
    );
}
