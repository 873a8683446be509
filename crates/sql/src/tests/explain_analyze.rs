//! EXPLAIN ANALYZE runs the query and reports, per table access, the rows
//! it passed on and how often it was read (times vary; counts do not).

use super::db::Db;
use lockstep_types::Value;

fn lines(db: &mut Db, sql: &str) -> Vec<String> {
    db.rows(sql)
        .into_iter()
        .map(|r| match &r[0] {
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            v => panic!("{sql}: {v:?}"),
        })
        .collect()
}

#[test]
fn counts_rows_and_loops_per_access() {
    let mut db = Db::new("explain_analyze");
    db.ok("CREATE TABLE p (id INT PRIMARY KEY, g INT)");
    db.ok("CREATE TABLE c (id INT PRIMARY KEY, p INT, KEY (p))");
    let ps: Vec<String> = (1..=50).map(|i| format!("({i}, {})", i % 5)).collect();
    db.ok(&format!("INSERT INTO p VALUES {}", ps.join(",")));
    let cs: Vec<String> = (1..=200)
        .map(|i| format!("({i}, {})", i % 50 + 1))
        .collect();
    db.ok(&format!("INSERT INTO c VALUES {}", cs.join(",")));
    let out = lines(
        &mut db,
        "EXPLAIN ANALYZE SELECT * FROM p JOIN c ON c.p = p.id WHERE p.id <= 10",
    );
    assert!(out[0].starts_with("query: 40 rows"), "{out:?}");
    assert!(
        out[1].starts_with("p: ") && out[1].contains("rows=10 loops=1"),
        "{out:?}"
    );
    assert!(
        out[2].starts_with("c: ") && out[2].contains("rows=40 loops=10"),
        "{out:?}"
    );
    // A count reads every row once and returns one.
    let out = lines(
        &mut db,
        "EXPLAIN ANALYZE FORMAT=TREE SELECT COUNT(*) FROM c WHERE p = 3",
    );
    assert!(out[0].starts_with("query: 1 rows"), "{out:?}");
    assert!(out[1].contains("rows=4 loops=1"), "{out:?}");
    // Only SELECT is run; the other formats have no times.
    assert_eq!(db.err("EXPLAIN ANALYZE DELETE FROM c"), 1235);
    assert_eq!(db.err("EXPLAIN ANALYZE FORMAT=JSON SELECT * FROM c"), 1235);
    // Nothing is left behind: the rows are unchanged and no transaction is open.
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM c"),
        vec![vec![Value::Int(200)]]
    );
}
