//! Window functions and ROLLUP through the prepared-statement protocol
//! (placeholders in frames and counts, plans reused across executions)
//! and against the memory caps.

use crate::tests::db::Db;
use lockstep_types::Value;

fn ints(rows: &[Vec<Value>], col: usize) -> Vec<Option<i64>> {
    rows.iter().map(|r| r[col].to_i64()).collect()
}

fn db_with_rows(name: &str) -> Db {
    let mut db = Db::new(name);
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT)");
    db.ok("INSERT INTO t VALUES (1,1,10),(2,1,20),(3,1,30),(4,2,40),(5,2,NULL),(6,3,60)");
    db
}

#[test]
fn placeholders_in_frames_and_counts() {
    let mut db = db_with_rows("window-ps");
    let sql = "SELECT id, SUM(v) OVER (ORDER BY id ROWS BETWEEN ? PRECEDING AND CURRENT ROW), \
               LAG(v, ?, -1) OVER (ORDER BY id), NTILE(?) OVER (ORDER BY id) FROM t ORDER BY id";
    let mut p = db.prepare(None, sql);
    let rows = db.execute(None, &mut p, &[Value::Int(1), Value::Int(2), Value::Int(2)]);
    assert_eq!(
        ints(&rows, 1),
        [Some(10), Some(30), Some(50), Some(70), Some(40), Some(60)]
    );
    assert_eq!(
        ints(&rows, 2),
        [Some(-1), Some(-1), Some(10), Some(20), Some(30), Some(40)]
    );
    assert_eq!(
        ints(&rows, 3),
        [Some(1), Some(1), Some(1), Some(2), Some(2), Some(2)]
    );
    // The same plan with other values.
    let rows = db.execute(None, &mut p, &[Value::Int(0), Value::Int(0), Value::Int(6)]);
    assert_eq!(
        ints(&rows, 1),
        [Some(10), Some(20), Some(30), Some(40), None, Some(60)]
    );
    assert_eq!(
        ints(&rows, 3),
        [Some(1), Some(2), Some(3), Some(4), Some(5), Some(6)]
    );
    // A negative offset is refused when the statement runs, as MySQL.
    let err = db.try_execute(
        None,
        &mut p,
        &[Value::Int(-1), Value::Int(0), Value::Int(1)],
    );
    assert_eq!(err.unwrap_err().number(), 3586);
    let err = db.try_execute(None, &mut p, &[Value::Int(1), Value::Int(0), Value::Int(0)]);
    assert_eq!(err.unwrap_err().number(), 1210);
}

#[test]
fn range_placeholder_and_rollup_prepared() {
    let mut db = db_with_rows("window-ps-range");
    let sql = "SELECT id, COUNT(*) OVER (ORDER BY v RANGE BETWEEN ? PRECEDING AND ? FOLLOWING) \
               FROM t ORDER BY id";
    let mut p = db.prepare(None, sql);
    let rows = db.execute(None, &mut p, &[Value::Int(10), Value::Int(0)]);
    // v 10,20,30,40,NULL,60: NULL counts only its peers.
    assert_eq!(
        ints(&rows, 1),
        [Some(1), Some(2), Some(2), Some(2), Some(1), Some(1)]
    );
    let sql = "SELECT g, SUM(v), GROUPING(g) FROM t WHERE id > ? GROUP BY g WITH ROLLUP";
    let mut p = db.prepare(None, sql);
    let rows = db.execute(None, &mut p, &[Value::Int(3)]);
    assert_eq!(ints(&rows, 0), [Some(2), Some(3), None]);
    assert_eq!(ints(&rows, 1), [Some(40), Some(60), Some(100)]);
    assert_eq!(ints(&rows, 2), [Some(0), Some(0), Some(1)]);
}

#[test]
fn window_sort_is_bounded_by_the_memory_caps() {
    let mut db = db_with_rows("window-memory");
    // 6^5 rows through a window: the sort keys outgrow a small sort buffer.
    let big = "SELECT ROW_NUMBER() OVER (PARTITION BY a.v ORDER BY b.id, c.id) \
               FROM t a, t b, t c, t d, t e";
    // Past a small sort buffer the sort spills: the same rows.
    db.ok("SET SESSION sort_buffer_size = 32768");
    let spilled = db.rows(big);
    db.ok("SET SESSION sort_buffer_size = DEFAULT");
    assert_eq!(spilled, db.rows(big));
    db.ok("SET SESSION query_memory_limit = 1048576");
    assert_eq!(db.run(big).unwrap_err().number(), 1041);
    db.ok("SET SESSION query_memory_limit = DEFAULT");
    assert_eq!(db.rows(big).len(), 7776);
}
