//! Index dives through prepared statements: a range bounded by a
//! parameter is estimated by the value each EXECUTE binds, so a narrow
//! range reads through the index and a wide one scans the table, each
//! plan bound once per range of estimates (`session/replan.rs`).

use crate::tests::db::Db;
use lockstep_types::Value;

/// EXPLAIN's type and key columns.
fn access(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter().map(|r| format!("{} {}", r[4], r[6])).collect()
}

#[test]
fn prepared_ranges_plan_by_the_bound_value() {
    let mut db = Db::new("index-dive-prepared");
    db.ok("CREATE TABLE ev (id INT PRIMARY KEY, amount INT, note VARCHAR(10), KEY kamt (amount))");
    db.ok("INSERT INTO ev VALUES (1, 3, 'e1')");
    for shift in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048] {
        db.ok(&format!(
            "INSERT INTO ev SELECT id + {shift}, (id + {shift}) * 3, 'e' FROM ev"
        ));
    }
    let mut explain = db.prepare(None, "EXPLAIN SELECT note FROM ev WHERE amount > ?");
    let narrow = db.execute(None, &mut explain, &[Value::Int(12_270)]);
    assert_eq!(access(&narrow), ["range kamt"], "a few keys of 4096");
    let wide = db.execute(None, &mut explain, &[Value::Int(300)]);
    assert_eq!(access(&wide), ["ALL NULL"], "most of the table");
    let mut count = db.prepare(None, "SELECT COUNT(*) FROM ev WHERE amount > ?");
    for (value, expected) in [(12_270, "6"), (300, "3996"), (12_270, "6")] {
        let rows = db.execute(None, &mut count, &[Value::Int(value)]);
        assert_eq!(rows[0][0].to_string(), expected, "amount > {value}");
    }
}
