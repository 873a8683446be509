//! Sorts that spill and joins that read their outer side in batches give
//! the rows the in-memory path gives, in the same order: every statement
//! runs with tiny buffers (sort_buffer_size and join_buffer_size at a few
//! KiB, so sorts write runs to disk and joins resume their outer scans
//! many times) and with large ones, and the results are compared.

use crate::exec::filesort::RUNS_WRITTEN;
use crate::tests::db::Db;
use lockstep_types::Value;
use std::sync::atomic::Ordering;

const SMALL: &str = "SET SESSION sort_buffer_size = 4096, join_buffer_size = 1024";
const LARGE: &str = "SET SESSION sort_buffer_size = 268435456, join_buffer_size = 268435456";

fn db() -> Db {
    let mut db = Db::new("spill");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, k INT, s VARCHAR(40), KEY kk (k))");
    let values: Vec<String> = (0..3000)
        .map(|i| {
            format!(
                "({i}, {}, 'v{:05}-{}')",
                i % 37,
                (i * 7919) % 3000,
                ["a", "B", "b", "A"][i % 4]
            )
        })
        .collect();
    db.ok(&format!("INSERT INTO t VALUES {}", values.join(",")));
    db.ok("CREATE TABLE u (id INT PRIMARY KEY, t_id INT, w INT)");
    let values: Vec<String> = (0..900)
        .map(|i| format!("({i}, {}, {})", (i * 13) % 3100, i % 5))
        .collect();
    db.ok(&format!("INSERT INTO u VALUES {}", values.join(",")));
    db
}

/// `sql`'s rows with small buffers, checked equal to those with large
/// ones; `spills` says whether the small run must have written runs.
fn same(db: &mut Db, sql: &str, spills: bool) -> Vec<Vec<Value>> {
    db.ok(LARGE);
    let large = db.rows(sql);
    db.ok(SMALL);
    let before = RUNS_WRITTEN.load(Ordering::Relaxed);
    let small = db.rows(sql);
    let wrote = RUNS_WRITTEN.load(Ordering::Relaxed) > before;
    db.ok("SET SESSION sort_buffer_size = DEFAULT, join_buffer_size = DEFAULT");
    assert_eq!(format!("{small:?}"), format!("{large:?}"), "{sql}");
    if spills {
        assert!(wrote, "{sql}: a small sort buffer spills");
    }
    large
}

#[test]
fn joins_of_any_depth_give_the_same_rows_in_the_same_order() {
    let mut db = db();
    for sql in [
        // Three and four tables, nested loops over secondary and primary
        // keys, the outer side far larger than join_buffer_size.
        "SELECT a.id, b.id, c.id FROM t a JOIN t b ON b.k = a.k AND b.id < 300 JOIN u c ON c.t_id = b.id",
        "SELECT a.id, b.id, c.w, d.s FROM t a JOIN u c ON c.t_id = a.id JOIN t b ON b.id = c.id JOIN t d ON d.k = c.w AND d.id < 40",
        // LEFT JOINs with rows that find nothing, a cross join, a filter
        // over the whole row, LIMIT stopping midway.
        "SELECT a.id, c.id, b.id FROM t a LEFT JOIN u c ON c.t_id = a.id LEFT JOIN t b ON b.id = c.w * 1000 + 7",
        "SELECT a.id, c.id FROM u a, u c WHERE a.id < 40 AND c.w = a.w AND a.id + c.id > 100",
        "SELECT a.id, b.id, c.id FROM t a JOIN t b ON b.k = a.k JOIN u c ON c.t_id = b.id LIMIT 25",
        // A secondary index scan outside (resumed past key and primary key),
        // a join as a derived table's body, a join inside an aggregate.
        "SELECT a.k, a.id, c.id FROM t a FORCE INDEX (kk) JOIN u c ON c.t_id = a.id WHERE a.k BETWEEN 3 AND 20",
        "SELECT COUNT(*), SUM(a.id + b.id + c.id) FROM t a JOIN t b ON b.k = a.k JOIN u c ON c.w = a.k % 5 WHERE a.id < 200 AND b.id < 200",
        "SELECT d.x, d.y FROM (SELECT a.id x, c.id y FROM t a JOIN u c ON c.t_id = a.id) d WHERE d.y % 3 = 0",
    ] {
        let rows = same(&mut db, sql, false);
        assert!(!rows.is_empty(), "{sql}");
    }
    // A locking read (no hash join) walks the same rows.
    db.ok("BEGIN");
    same(
        &mut db,
        "SELECT a.id, c.id FROM t a JOIN u c ON c.t_id = a.id FOR UPDATE",
        false,
    );
    db.ok("ROLLBACK");
}

#[test]
fn distinct_union_and_window_sorts_spill_with_the_in_memory_result() {
    let mut db = db();
    for (sql, spills) in [
        // DISTINCT whose sort puts duplicates together, and one hashed
        // before its sort; case-folded text ties.
        ("SELECT DISTINCT s FROM t ORDER BY s DESC", true),
        ("SELECT DISTINCT k, LOWER(SUBSTR(s, 1, 3)) FROM t ORDER BY LOWER(SUBSTR(s, 1, 3)), k", true),
        ("SELECT DISTINCT k % 7, s FROM t ORDER BY s LIMIT 20 OFFSET 100", true),
        ("SELECT DISTINCT k FROM t ORDER BY id % 13, k", true),
        // UNION and UNION ALL with ORDER BY, LIMIT and ties.
        ("SELECT s, id FROM t UNION ALL SELECT s, id FROM t ORDER BY 1 DESC, 2", true),
        ("SELECT k, s FROM t UNION SELECT w, 'x' FROM u ORDER BY 1, 2 LIMIT 50 OFFSET 10", true),
        ("SELECT k FROM t UNION ALL SELECT w FROM u ORDER BY 1", true),
        // Window partitions and orders, peers, frames, several windows.
        ("SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s), RANK() OVER (ORDER BY k) FROM t", true),
        ("SELECT id, SUM(id) OVER (PARTITION BY k % 3 ORDER BY s ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING), LAG(s) OVER (ORDER BY s DESC, id) FROM t", true),
        ("SELECT k, COUNT(*) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t ORDER BY id", true),
        // Small sorts stay in memory.
        ("SELECT DISTINCT k FROM t WHERE id < 20 ORDER BY k", false),
    ] {
        same(&mut db, sql, spills);
    }
}

#[test]
fn update_and_delete_order_by_spill_and_act_on_the_same_rows() {
    let mut runs = Vec::new();
    for setting in [LARGE, SMALL] {
        let mut db = db();
        db.ok(setting);
        let before = RUNS_WRITTEN.load(Ordering::Relaxed);
        db.ok("UPDATE t SET k = k + 1000 ORDER BY s DESC, id LIMIT 700");
        db.ok("DELETE FROM t ORDER BY s, id LIMIT 500");
        db.ok("UPDATE t SET s = CONCAT(s, '!') WHERE k < 1000 ORDER BY k DESC, s");
        if setting == SMALL {
            assert!(
                RUNS_WRITTEN.load(Ordering::Relaxed) > before,
                "the sorts spilled"
            );
        }
        runs.push(db.rows("SELECT * FROM t"));
    }
    assert_eq!(format!("{:?}", runs[0]), format!("{:?}", runs[1]));
    assert_eq!(runs[0].len(), 2500);
}
