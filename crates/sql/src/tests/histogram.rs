//! Histograms through prepared statements (the protocol's path, which
//! binds a plan once and keeps it): a constant in the statement text is
//! estimated from the histogram; a parameter, unknown when the plan is
//! bound, gets MySQL's guess. ANALYZE ... UPDATE HISTOGRAM bumps the DDL
//! version, so a plan prepared before it is bound again.

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
    let guessed = db.execute(None, &mut param, &[Value::Int(3)]);
    assert_eq!(filtered(&guessed), ["33.33"], "a parameter is not known");
    let mut select = db.prepare(None, "SELECT id FROM f WHERE c >= ? ORDER BY id");
    let rows = db.execute(None, &mut select, &[Value::Int(3)]);
    assert_eq!(rows.len(), 2);
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
