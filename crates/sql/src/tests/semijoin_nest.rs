//! Semi-join flattening through prepared statements, and index
//! statistics of a table past `SYNC_LIMIT` rows recounted by the
//! engine's background thread.

use super::db::Db;
use lockstep_types::Value;

fn ints(rows: Vec<Vec<Value>>) -> Vec<i64> {
    rows.iter()
        .map(|r| match &r[0] {
            Value::Int(i) => *i,
            other => panic!("not an integer: {other:?}"),
        })
        .collect()
}

#[test]
fn prepared_subquery_with_a_parameter_flattens() {
    let mut db = Db::new("sj-prepared");
    db.ok("CREATE TABLE big (id INT PRIMARY KEY, v INT)");
    db.ok("CREATE TABLE small (sid INT PRIMARY KEY, ref INT, tag INT)");
    db.ok("INSERT INTO big VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50), (6, 60), (7, 70), (8, 80)");
    db.ok("INSERT INTO small VALUES (1, 2, 1), (2, 2, 1), (3, 5, 1), (4, NULL, 1), (5, 7, 2), (6, 99, 2)");
    let sql = "SELECT id FROM big WHERE id IN (SELECT ref FROM small WHERE tag = ?) ORDER BY id";
    let mut p = db.prepare(None, sql);
    assert_eq!(ints(db.execute(None, &mut p, &[Value::Int(1)])), vec![2, 5]);
    assert_eq!(ints(db.execute(None, &mut p, &[Value::Int(2)])), vec![7]);
    assert_eq!(
        ints(db.execute(None, &mut p, &[Value::Int(3)])),
        Vec::<i64>::new()
    );
    let sql = "SELECT id FROM big b WHERE EXISTS (SELECT 1 FROM small s WHERE s.ref = b.id AND s.tag = ?) ORDER BY id";
    let mut p = db.prepare(None, sql);
    assert_eq!(ints(db.execute(None, &mut p, &[Value::Int(1)])), vec![2, 5]);
    assert_eq!(
        ints(db.execute(None, &mut p, &[Value::Null])),
        Vec::<i64>::new()
    );
}

/// The rows EXPLAIN expects `SELECT * FROM t WHERE g = 1` to fetch.
fn explain_rows(db: &mut Db) -> i64 {
    let rows = db.rows("EXPLAIN SELECT * FROM t WHERE g = 1");
    match &rows[0][9] {
        Value::Int(n) => *n,
        Value::UInt(n) => *n as i64,
        other => panic!("rows: {other:?}"),
    }
}

#[test]
fn statistics_of_a_large_table_follow_in_the_background() {
    let mut db = Db::new("sj-stats");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, g INT, KEY by_g (g))");
    // Counted while small: 16 rows, 8 per value of g.
    db.ok("INSERT INTO t VALUES (1,1),(2,0),(3,1),(4,0),(5,1),(6,0),(7,1),(8,0)");
    db.ok("INSERT INTO t SELECT id + 8, id MOD 2 FROM t");
    assert_eq!(explain_rows(&mut db), 8);
    // Past SYNC_LIMIT: 131072 rows, about 128 per value of g.
    for k in 0..13 {
        let step = 16 << k;
        db.ok(&format!(
            "INSERT INTO t SELECT id + {step}, (id + {step}) MOD 1024 FROM t"
        ));
    }
    let engine = db.server.engine.clone();
    let table = engine.catalog.table("d", "t").expect("table");
    assert_eq!(table.approximate_rows(), 131072);
    assert!(table.stats_need_background_count());
    let stale = explain_rows(&mut db);
    assert!(
        stale > 1000,
        "a query does not count a large table itself: {stale}"
    );
    let card = "SELECT CARDINALITY FROM information_schema.STATISTICS WHERE TABLE_NAME = 't' AND INDEX_NAME = 'by_g'";
    assert_eq!(db.rows(card), vec![vec![Value::UInt(2)]], "the old count");
    engine.start_stats_refresh();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while table.stats_need_background_count() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!table.stats_need_background_count(), "recounted in time");
    assert_eq!(db.rows(card), vec![vec![Value::UInt(1024)]]);
    let fresh = explain_rows(&mut db);
    assert!((100..=160).contains(&fresh), "counted again: {fresh}");
}
