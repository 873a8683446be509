//! Histograms through prepared statements (the protocol's path, which
//! binds a plan once and keeps it): a constant in the statement text is
//! estimated from the histogram, and so is a parameter, by the value an
//! EXECUTE binds (`session/replan.rs`). ANALYZE ... UPDATE HISTOGRAM bumps
//! the DDL version, so a plan prepared before it is bound again.

use crate::tests::db::Db;
use lockstep_types::Value;

fn filtered(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter().map(|r| r[10].to_string()).collect()
}

#[test]
fn prepared_statements_use_histograms() {
    let mut db = Db::new("histogram-prepared");
    db.ok("CREATE TABLE f (id INT PRIMARY KEY, c INT)");
    db.ok("INSERT INTO f VALUES (1, 1), (2, 2), (3, 3), (4, 4)");
    let mut literal = db.prepare(None, "EXPLAIN SELECT * FROM f WHERE 3 < c");
    let mut param = db.prepare(None, "EXPLAIN SELECT * FROM f WHERE c > ?");
    let before = db.execute(None, &mut literal, &[]);
    assert_eq!(filtered(&before), ["33.33"], "no histogram yet");
    db.ok("ANALYZE TABLE f UPDATE HISTOGRAM ON c");
    let after = db.execute(None, &mut literal, &[]);
    assert_eq!(filtered(&after), ["25.00"], "one row in four above 3");
    let bound = db.execute(None, &mut param, &[Value::Int(3)]);
    assert_eq!(filtered(&bound), ["25.00"], "the parameter's value");
    let bound = db.execute(None, &mut param, &[Value::Int(1)]);
    assert_eq!(filtered(&bound), ["75.00"], "another value");
    let mut select = db.prepare(None, "SELECT id FROM f WHERE c >= ? ORDER BY id");
    let rows = db.execute(None, &mut select, &[Value::Int(3)]);
    assert_eq!(rows.len(), 2);
}

/// A join whose order rests on a parameter's estimate: each EXECUTE runs
/// the plan for its value's estimate (the more selective table first),
/// bound once per range of estimates and then reused.
#[test]
fn prepared_joins_plan_by_the_bound_value() {
    let mut db = Db::new("histogram-replan");
    db.ok("CREATE TABLE seq (n INT PRIMARY KEY)");
    db.ok("INSERT INTO seq VALUES (0)");
    for step in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512] {
        db.ok(&format!("INSERT INTO seq SELECT n + {step} FROM seq"));
    }
    for t in ["t1", "t2"] {
        db.ok(&format!(
            "CREATE TABLE {t} (id INT PRIMARY KEY, j INT, c INT, UNIQUE KEY (j))"
        ));
        db.ok(&format!("INSERT INTO {t} SELECT n, n, n FROM seq"));
        db.ok(&format!("ANALYZE TABLE {t} UPDATE HISTOGRAM ON c"));
    }
    let sql = "SELECT COUNT(*) FROM t1, t2 WHERE t1.j = t2.j AND t1.c < ? AND t2.c < 50";
    let mut p = db.prepare(None, sql);
    let count = |rows: Vec<Vec<Value>>| rows[0][0].to_string();
    assert_eq!(count(db.execute(None, &mut p, &[Value::Int(10)])), "10");
    assert_eq!(
        p.replanned_first_tables(),
        ["t1"],
        "t1.c < 10 keeps fewer rows"
    );
    assert_eq!(count(db.execute(None, &mut p, &[Value::Int(900)])), "50");
    assert_eq!(
        p.replanned_first_tables(),
        ["t1", "t2"],
        "t2.c < 50 keeps fewer"
    );
    // A value in a range already met reuses its plan.
    assert_eq!(count(db.execute(None, &mut p, &[Value::Int(11)])), "11");
    assert_eq!(p.replanned_first_tables().len(), 2);
    // A prepared EXPLAIN plans with the value too.
    let mut explain = db.prepare(None, &format!("EXPLAIN {sql}"));
    let first = |rows: Vec<Vec<Value>>| rows[0][2].to_string();
    assert_eq!(
        first(db.execute(None, &mut explain, &[Value::Int(10)])),
        "t1"
    );
    assert_eq!(
        first(db.execute(None, &mut explain, &[Value::Int(900)])),
        "t2"
    );
}

/// Histograms are logged: after a restart COLUMN_STATISTICS still shows
/// them and the planner still uses them.
#[test]
fn histograms_survive_a_restart() {
    let mut db = Db::new("histogram-restart");
    db.ok("CREATE TABLE f (id INT PRIMARY KEY, c INT)");
    db.ok("INSERT INTO f VALUES (1, 1), (2, 2), (3, 3), (4, 4)");
    db.ok("ANALYZE TABLE f UPDATE HISTOGRAM ON c WITH 2 BUCKETS");
    let sql = "SELECT COLUMN_NAME, HISTOGRAM->>'$.\"histogram-type\"' FROM information_schema.COLUMN_STATISTICS";
    let shown = |rows: Vec<Vec<Value>>| -> Vec<String> {
        rows.iter().map(|r| format!("{} {}", r[0], r[1])).collect()
    };
    assert_eq!(shown(db.rows(sql)), ["c equi-height"]);
    db.reopen();
    assert_eq!(
        shown(db.rows(sql)),
        ["c equi-height"],
        "replayed from the log"
    );
    let explained = db.rows("EXPLAIN SELECT * FROM f WHERE c = 4");
    assert_eq!(filtered(&explained), ["25.00"]);
}
