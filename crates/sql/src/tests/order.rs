//! ORDER BY keys that are projected columns sort by the projected value
//! (`prune::order_from`) instead of a stored copy. Each query here is
//! checked against the same query with its keys wrapped in CONCAT(), which
//! the planner cannot trace to a projected column, so it takes the stored-key
//! path: both must give the same rows in the same order.

use crate::tests::db::Db;
use lockstep_types::Value;

fn text(rows: Vec<Vec<Value>>) -> Vec<Vec<Option<String>>> {
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| {
                    v.to_text()
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                })
                .collect()
        })
        .collect()
}

/// Each pair of queries gives the same rows in the same order, at least
/// `min_rows` of them (so that the comparison says something).
fn same_rows(db: &mut Db, pairs: &[(&str, &str)], min_rows: usize) {
    for (direct, reference) in pairs {
        let got = text(db.rows(direct));
        assert_eq!(got, text(db.rows(reference)), "{direct}");
        assert!(got.len() >= min_rows, "{direct}");
    }
}

#[test]
fn keys_read_from_the_projection_sort_like_stored_keys() {
    let mut db = Db::new("order-from-projection");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20), n INT)");
    db.ok(
        "INSERT INTO t VALUES (1,'b',3),(2,'A',1),(3,'a',2),(4,'B',3),(5,'é',NULL),\
         (6,'e',1),(7,NULL,2),(8,'C',3),(9,'a ',1),(10,'Ä',2),(11,'c',NULL),(12,'10',4),(13,'9',4)",
    );
    let pairs = [
        (
            "SELECT c FROM t ORDER BY c, id",
            "SELECT c FROM t ORDER BY CONCAT(c), id",
        ),
        (
            "SELECT c FROM t ORDER BY c DESC, id",
            "SELECT c FROM t ORDER BY CONCAT(c) DESC, id",
        ),
        (
            "SELECT id, c FROM t ORDER BY c, id DESC",
            "SELECT id, c FROM t ORDER BY CONCAT(c), id DESC",
        ),
        (
            "SELECT n, c FROM t ORDER BY n DESC, c, id",
            "SELECT n, c FROM t ORDER BY n + 0 DESC, CONCAT(c), id",
        ),
        (
            "SELECT DISTINCT c FROM t WHERE id > 1 ORDER BY c",
            "SELECT DISTINCT c FROM t WHERE id > 1 ORDER BY CONCAT(c)",
        ),
        (
            "SELECT c, COUNT(*) FROM t GROUP BY c ORDER BY c",
            "SELECT c, COUNT(*) FROM t GROUP BY c ORDER BY CONCAT(c)",
        ),
        (
            "SELECT c FROM t WHERE id BETWEEN 2 AND 11 ORDER BY c LIMIT 3",
            "SELECT c FROM t WHERE id BETWEEN 2 AND 11 ORDER BY CONCAT(c) LIMIT 3",
        ),
        (
            "SELECT c, c FROM t ORDER BY c, id",
            "SELECT c, c FROM t ORDER BY CONCAT(c), id",
        ),
    ];
    same_rows(&mut db, &pairs, 1);
    // The collation itself, spelled out once: NULL first, case and accents
    // ignored, ties in id order.
    let ids: Vec<Vec<Value>> = [7, 2, 3, 1, 4, 5, 6]
        .iter()
        .map(|&i| vec![Value::Int(i)])
        .collect();
    assert_eq!(
        db.rows("SELECT id FROM t WHERE id <= 7 ORDER BY c, id"),
        ids
    );
}

/// DISTINCT whose ORDER BY covers every projected column drops duplicates
/// from the sorted rows (neighbours); the same query ordered by CONCAT()
/// keys takes the hashing path. Both must keep the same rows (the first of
/// each set of duplicates the scan meets) in the same order, including
/// values that share their first eight bytes and differ only in case.
#[test]
fn distinct_from_sorted_rows_matches_hashing() {
    let mut db = Db::new("distinct-sorted");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(40), n INT)");
    db.ok(
        "INSERT INTO t VALUES (1,'prefix-same-b',3),(2,'PREFIX-SAME-A',1),(3,'prefix-same-a',1),\
         (4,'Prefix-Same-B',3),(5,'é',NULL),(6,'E',NULL),(7,NULL,2),(8,NULL,2),(9,'prefix-',1),\
         (10,'prefix-same-a',2),(11,'x',NULL),(12,'X',4),(13,'',4),(14,'',4),(15,'prefix',1)",
    );
    let pairs = [
        (
            "SELECT DISTINCT c FROM t ORDER BY c",
            "SELECT DISTINCT c FROM t ORDER BY CONCAT(c)",
        ),
        (
            "SELECT DISTINCT c FROM t ORDER BY c DESC",
            "SELECT DISTINCT c FROM t ORDER BY CONCAT(c) DESC",
        ),
        (
            "SELECT DISTINCT c, n FROM t ORDER BY c, n",
            "SELECT DISTINCT c, n FROM t ORDER BY CONCAT(c), n + 0",
        ),
        (
            "SELECT DISTINCT n, c FROM t ORDER BY n DESC, c",
            "SELECT DISTINCT n, c FROM t ORDER BY n + 0 DESC, CONCAT(c)",
        ),
        (
            "SELECT DISTINCT n FROM t WHERE id > 2 ORDER BY n",
            "SELECT DISTINCT n FROM t WHERE id > 2 ORDER BY n + 0",
        ),
    ];
    same_rows(&mut db, &pairs, 3);
    // Spelled out once: case-insensitive duplicates collapse into the first
    // row met (id order), NULLs into one, shorter prefixes first.
    let c = |s: Option<&str>| s.map(String::from);
    assert_eq!(
        text(db.rows("SELECT DISTINCT c FROM t ORDER BY c")),
        [
            None,
            c(Some("")),
            c(Some("é")),
            c(Some("prefix")),
            c(Some("prefix-")),
            c(Some("PREFIX-SAME-A")),
            c(Some("prefix-same-b")),
            c(Some("x")),
        ]
        .into_iter()
        .map(|v| vec![v])
        .collect::<Vec<_>>()
    );
}
