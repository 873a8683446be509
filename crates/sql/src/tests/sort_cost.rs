//! What an ORDER BY costs through a session, for before/after comparisons
//! of the sort path (`cargo test -p lockstep-sql --lib sort_cost --
//! --ignored --nocapture`): sysbench's sorted range, TPC-C's ORDER BY
//! o_id DESC LIMIT 1 shape, and a 5,000-row sort in memory and spilled.

use crate::tests::db::Db;

#[test]
#[ignore]
fn sort_cost() {
    let mut db = Db::new("sort-cost");
    db.ok(
        "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60), KEY k_1 (k))",
    );
    for start in (0..10_000).step_by(1000) {
        let values: Vec<String> = (start..start + 1000)
            .map(|i| {
                format!(
                    "({i}, {}, '{:011}-{}', 'pad')",
                    i % 97,
                    (i * 7919) % 10_000,
                    "c".repeat(100)
                )
            })
            .collect();
        db.ok(&format!("INSERT INTO sbtest1 VALUES {}", values.join(",")));
    }
    let queries = [
        (
            "",
            "SELECT c FROM sbtest1 WHERE id BETWEEN 5000 AND 5099 ORDER BY c",
            500,
        ),
        (
            "",
            "SELECT id FROM sbtest1 WHERE k = 5 ORDER BY c DESC LIMIT 1",
            500,
        ),
        ("", "SELECT c FROM sbtest1 WHERE id < 5000 ORDER BY c", 4),
        (
            "262144",
            "SELECT c FROM sbtest1 WHERE id BETWEEN 5000 AND 5099 ORDER BY c",
            500,
        ),
        (
            "262144",
            "SELECT c FROM sbtest1 WHERE id < 5000 ORDER BY c",
            4,
        ),
    ];
    // The best of many short batches: the machine is shared.
    for (buffer, sql, n) in queries {
        match buffer {
            "" => db.ok("SET SESSION sort_buffer_size = DEFAULT"),
            b => db.ok(&format!("SET SESSION sort_buffer_size = {b}")),
        };
        let best = (0..20)
            .map(|_| {
                let start = std::time::Instant::now();
                for _ in 0..n {
                    db.ok(sql);
                }
                start.elapsed().as_nanos() / n
            })
            .min()
            .unwrap_or(0);
        println!("{best:>10} ns  sort_buffer_size={buffer:<7} {sql}");
    }
}
