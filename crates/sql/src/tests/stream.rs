//! Results sent in batches (exec/stream.rs, session/stream.rs): the rows
//! are those of the whole set, in order, whatever the batch boundaries.

use super::db::Db;
use lockstep_types::Value;

const ROWS: i64 = 6000;

fn table() -> Db {
    let mut db = Db::new("stream");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(100), g INT)");
    let values: Vec<String> = (1..=ROWS)
        .map(|i| format!("({i}, '{}{i}', {})", "p".repeat(60), i % 5))
        .collect();
    db.ok(&format!("INSERT INTO t VALUES {}", values.join(",")));
    // Batches of about 25 kB: a few hundred rows each.
    db.ok("SET SESSION query_memory_limit = 50000");
    db
}

fn ids(rows: Vec<Vec<Value>>) -> Vec<i64> {
    rows.iter().map(|r| r[0].to_i64().expect("an id")).collect()
}

#[test]
fn large_results_come_in_batches_and_small_ones_whole() {
    let mut db = table();
    let (first, more) = db.first_batch("SELECT * FROM t");
    assert!(
        more && first > 0 && first < ROWS as usize,
        "{first} rows, more: {more}"
    );
    let (first, more) = db.first_batch("SELECT * FROM t WHERE id <= 10");
    assert_eq!((first, more), (10, false));
    // Sorted and joined results are batched from a file sort
    // (exec/filesort.rs); grouped ones are not.
    let (first, more) = db.first_batch("SELECT * FROM t ORDER BY s");
    assert!(more && first < ROWS as usize, "{first} rows, more: {more}");
    // A join's outer rows and one outer row's matches are held, its
    // result (24,000 rows, ~2 MB here) is not.
    db.ok("CREATE INDEX kg ON t (g)");
    db.ok("SET SESSION query_memory_limit = 1000000");
    let join = "SELECT a.id, b.id FROM t a JOIN t b ON b.g = a.g WHERE a.id <= 20";
    let (first, more) = db.first_batch(join);
    assert!(more && first < 24_000, "{first} rows, more: {more}");
    assert_eq!(db.rows(join).len(), 24_000);
    db.ok("SET SESSION query_memory_limit = 50000");
    let sorted = db.rows("SELECT s, id FROM t ORDER BY s DESC LIMIT 5 OFFSET 4000");
    let mut want: Vec<String> = (1..=ROWS)
        .map(|i| format!("{}{i}", "p".repeat(60)))
        .collect();
    want.sort();
    want.reverse();
    let got: Vec<String> = sorted.iter().map(|r| r[0].to_string()).collect();
    assert_eq!(got, want[4000..4005].to_vec());
    db.ok("SET SESSION query_memory_limit = DEFAULT");
    let (first, more) = db.first_batch("SELECT g, COUNT(*) FROM t GROUP BY g");
    assert_eq!((first, more), (5, false));
}

#[test]
fn batches_keep_order_limit_offset_and_filters() {
    let mut db = table();
    assert_eq!(
        ids(db.rows("SELECT * FROM t")),
        (1..=ROWS).collect::<Vec<_>>()
    );
    assert_eq!(
        ids(db.rows("SELECT id, s FROM t ORDER BY id DESC")),
        (1..=ROWS).rev().collect::<Vec<_>>()
    );
    assert_eq!(
        ids(db.rows("SELECT * FROM t LIMIT 4000 OFFSET 777")),
        (778..778 + 4000).collect::<Vec<_>>()
    );
    assert_eq!(
        ids(db.rows("SELECT * FROM t ORDER BY id DESC LIMIT 3000 OFFSET 1500")),
        (ROWS - 4499..=ROWS - 1500).rev().collect::<Vec<_>>()
    );
    assert_eq!(
        ids(db.rows("SELECT id, s FROM t WHERE g = 2 AND id > 100")),
        (101..=ROWS).filter(|i| i % 5 == 2).collect::<Vec<_>>()
    );
    assert_eq!(db.rows("SELECT FOUND_ROWS()"), vec![vec![Value::Int(1180)]]);
    assert_eq!(
        ids(db.rows("SELECT * FROM t WHERE id BETWEEN 10 AND 5000")),
        (10..=5000).collect::<Vec<_>>()
    );
    assert!(db.rows("SELECT * FROM t LIMIT 0").is_empty());
}

#[test]
fn a_stream_reads_one_snapshot() {
    let mut db = table();
    let mut other = db.session(2);
    db.ok("BEGIN");
    let before = db.rows("SELECT * FROM t");
    db.run_in(&mut other, "DELETE FROM t WHERE id > 3000")
        .unwrap();
    // Repeatable read: the same rows again, across every batch.
    assert_eq!(db.rows("SELECT * FROM t"), before);
    db.ok("COMMIT");
    assert_eq!(db.rows("SELECT * FROM t").len(), 3000);
}

#[test]
fn secondary_index_scans_stream_in_index_order() {
    let mut db = table();
    db.ok("CREATE INDEX kg ON t (g)");
    let (first, more) = db.first_batch("SELECT * FROM t FORCE INDEX (kg) WHERE g = 2");
    assert!(more && first > 0, "{first} rows, more: {more}");
    // Many rows share a key: each batch resumes past (key, primary key).
    let g2: Vec<i64> = (1..=ROWS).filter(|i| i % 5 == 2).collect();
    let rows = db.rows("SELECT * FROM t FORCE INDEX (kg) WHERE g = 2");
    assert_eq!(ids(rows), g2);
    let by_g = |gs: &[i64]| -> Vec<i64> {
        let per = |g: &i64| {
            let g = *g;
            (1..=ROWS).filter(move |i| i % 5 == g)
        };
        gs.iter().flat_map(per).collect()
    };
    let rows = db.rows("SELECT id, s, g FROM t WHERE g BETWEEN 1 AND 3 ORDER BY g");
    assert_eq!(ids(rows), by_g(&[1, 2, 3]));
    let rows = db.rows("SELECT id, g FROM t WHERE g >= 3 ORDER BY g DESC");
    let mut desc = by_g(&[4, 3]);
    // Descending index order: ties on g come in descending primary key.
    desc[..ROWS as usize / 5].reverse();
    desc[ROWS as usize / 5..].reverse();
    assert_eq!(ids(rows), desc);
    let rows = db.rows("SELECT id, g FROM t FORCE INDEX (kg) WHERE g = 4 LIMIT 700 OFFSET 300");
    assert_eq!(ids(rows), by_g(&[4])[300..1000].to_vec());
}
