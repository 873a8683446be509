//! Statements a hostile or careless client may send, run through a real
//! session: they end in a MySQL error (or NULL), never in a crash or in
//! unbounded memory. Inputs here reproduce what the fuzz targets and
//! tests/test_hostile.py found.

use crate::test_db::Db;
use lockstep_types::{Decimal, Value};

#[test]
fn memory_limits_fail_with_mysql_errors() {
    let mut db = Db::new("memory");
    db.ok("CREATE TABLE big (id INT PRIMARY KEY, k INT, s VARCHAR(40))");
    let values: Vec<String> = (0..5000)
        .map(|i| format!("({i}, {}, 'row-{:06}-padding')", i % 10, (i * 7919) % 5000))
        .collect();
    db.ok(&format!("INSERT INTO big VALUES {}", values.join(",")));
    db.ok("SET SESSION sort_buffer_size = 65536, tmp_table_size = 65536, query_memory_limit = 4194304");
    assert_eq!(db.err("SELECT id FROM big ORDER BY s"), 1038);
    assert_eq!(db.err("UPDATE big SET k = 0 ORDER BY s LIMIT 1"), 1038);
    assert_eq!(db.err("SELECT s, COUNT(*) FROM big GROUP BY s"), 1114);
    assert_eq!(db.err("SELECT DISTINCT s FROM big"), 1114);
    assert_eq!(db.err("SELECT COUNT(DISTINCT s) FROM big"), 1114);
    assert_eq!(db.err("SELECT GROUP_CONCAT(s) FROM big"), 1114);
    assert_eq!(db.err("SELECT s FROM big UNION SELECT s FROM big"), 1114);
    assert_eq!(db.err("SELECT COUNT(*) FROM (SELECT s FROM big) x"), 1114);
    assert_eq!(
        db.err("SELECT a.id, b.id FROM big a JOIN big b ON a.k = b.k"),
        1041
    );
    // Aggregates fold rows in as they come: counting the same join, or a
    // table far larger than the limit, buffers almost nothing.
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM big a JOIN big b ON a.k = b.k"),
        vec![vec![Value::Int(2_500_000)]]
    );
    db.ok("SET SESSION query_memory_limit = 65536");
    assert_eq!(
        db.rows("SELECT COUNT(*), SUM(k), MAX(s) FROM big"),
        vec![vec![
            Value::Int(5000),
            Value::Decimal(Decimal::from_i128_with_scale(22500, 0)),
            Value::str("row-004999-padding")
        ]]
    );
    assert_eq!(db.rows("SELECT k, COUNT(*) FROM big GROUP BY k").len(), 10);
    assert_eq!(db.err("SELECT id FROM big"), 1041);
    db.ok("SET SESSION query_memory_limit = 4194304");
    // Correlated subqueries free what each run buffered.
    let n = db.rows("SELECT COUNT(*) FROM big a WHERE a.id < 2000 AND EXISTS (SELECT 1 FROM big b WHERE b.k = a.k AND b.id < 100)");
    assert_eq!(n, vec![vec![Value::Int(2000)]]);
    // Within the limits, and with them raised, everything works.
    assert_eq!(db.rows("SELECT k, COUNT(*) FROM big GROUP BY k").len(), 10);
    db.ok("SET SESSION sort_buffer_size = DEFAULT, tmp_table_size = 268435456, query_memory_limit = DEFAULT");
    assert_eq!(db.rows("SELECT id FROM big ORDER BY s").len(), 5000);
    assert_eq!(
        db.rows("SELECT s, COUNT(*) FROM big GROUP BY s").len(),
        5000
    );
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM big a JOIN big b ON a.k = b.k"),
        vec![vec![Value::Int(2_500_000)]]
    );
    assert_eq!(db.err("SET SESSION sort_buffer_size = 'big'"), 1232);
    assert_eq!(db.err("SET SESSION query_memory_limit = -5"), 1231);
}

#[test]
fn string_results_past_max_allowed_packet_are_null() {
    let mut db = Db::new("strings");
    let nested = format!(
        "SELECT {}'{}'{}",
        "REPLACE(".repeat(8),
        "a".repeat(100),
        format!(", 'a', '{}')", "a".repeat(100)).repeat(8)
    );
    for sql in [
        "SELECT LPAD('a', 1000000000000, 'x')",
        "SELECT RPAD('', 9223372036854775807, 'ab')",
        "SELECT REPEAT('ab', 9223372036854775807)",
        "SELECT SPACE(1000000000000)",
        nested.as_str(),
    ] {
        assert_eq!(db.rows(sql), vec![vec![Value::Null]], "{sql}");
    }
    assert_eq!(
        db.rows("SELECT LENGTH(LPAD('a', 5000, 'xy')), CONCAT('a', NULL)"),
        vec![vec![Value::Int(5000), Value::Null]]
    );
}

#[test]
fn repeat_and_space_as_in_mysql() {
    let mut db = Db::new("repeat");
    assert_eq!(
        db.rows("SELECT REPEAT('ab', 3), REPEAT('x', 0), REPEAT('x', -1), SPACE(2), REPEAT(NULL, 2), REPEAT('a', NULL)"),
        vec![vec![
            Value::str("ababab"),
            Value::str(""),
            Value::str(""),
            Value::str("  "),
            Value::Null,
            Value::Null
        ]]
    );
}

#[test]
fn huge_counts_in_substring_and_date_add_neither_wrap_nor_panic() {
    // Found by the sql_session fuzzer: start + count overflowed.
    let mut db = Db::new("huge");
    assert_eq!(
        db.rows("SELECT SUBSTRING('hello', -2, 9223372036854775807), SUBSTRING('hello', 2, 9223372036854775807)"),
        vec![vec![Value::str("lo"), Value::str("ello")]]
    );
    assert_eq!(
        db.rows("SELECT DATE_ADD('2020-01-01', INTERVAL 9223372036854775807 DAY), DATE_ADD('2020-01-01', INTERVAL -9223372036854775807 DAY), DATE_ADD('9999-12-30', INTERVAL 2 DAY), DATE_ADD('2020-01-01', INTERVAL 1 DAY)"),
        vec![vec![Value::Null, Value::Null, Value::Null, Value::str("2020-01-02")]]
    );
}

/// The server runs statements on worker threads with this stack (see
/// lockstep-server's main.rs); the tallest trees the parser accepts must
/// bind and evaluate within it.
const WORKER_STACK: usize = 32 << 20;

#[test]
fn tallest_accepted_expression_trees_do_not_overflow_the_stack() {
    std::thread::Builder::new()
        .stack_size(WORKER_STACK)
        .spawn(|| {
            let mut db = Db::new("deep");
            db.ok("CREATE TABLE t (a INT)");
            db.ok("INSERT INTO t VALUES (1), (2)");
            let sum = db.rows(&format!(
                "SELECT a{} FROM t ORDER BY a",
                " + a".repeat(3_990)
            ));
            assert_eq!(sum.len(), 2);
            let ors: Vec<String> = (2..1_990).map(|i| format!("a = {i}")).collect();
            let n = db.rows(&format!(
                "SELECT COUNT(*) FROM t WHERE {}",
                ors.join(" OR ")
            ));
            assert_eq!(n, vec![vec![Value::Int(1)]]);
            let sql = format!(
                "SELECT {}a{}{} FROM t",
                "(".repeat(60),
                " + 1".repeat(3_800),
                ")".repeat(60)
            );
            assert_eq!(db.rows(&sql).len(), 2);
            // Past the parser's limits: 1064, and the session is fine.
            assert_eq!(
                db.err(&format!("SELECT a{} FROM t", " + a".repeat(10_000))),
                1064
            );
            assert_eq!(db.err(&format!("SELECT {}1", "NOT ".repeat(10_000))), 1064);
            assert_eq!(db.rows("SELECT 1"), vec![vec![Value::Int(1)]]);
        })
        .expect("spawn")
        .join()
        .expect("no stack overflow");
}

#[test]
fn wrong_argument_counts_are_1582() {
    let mut db = Db::new("arity");
    // Found by the sql_session fuzz target: HEX() indexed a missing argument.
    assert_eq!(db.err("SELECT!HEX(), 'y'"), 1582);
    let names = [
        "DATABASE",
        "VERSION",
        "CONNECTION_ID",
        "LAST_INSERT_ID",
        "NOW",
        "CURDATE",
        "UNIX_TIMESTAMP",
        "USER",
        "CONCAT",
        "CONCAT_WS",
        "LENGTH",
        "CHAR_LENGTH",
        "LOWER",
        "UPPER",
        "SUBSTRING",
        "TRIM",
        "LTRIM",
        "RTRIM",
        "REPLACE",
        "LEFT",
        "RIGHT",
        "LPAD",
        "RPAD",
        "REPEAT",
        "SPACE",
        "ABS",
        "CEIL",
        "FLOOR",
        "ROUND",
        "TRUNCATE",
        "MOD",
        "GREATEST",
        "LEAST",
        "COALESCE",
        "IFNULL",
        "NULLIF",
        "IF",
        "RAND",
        "SQRT",
        "POW",
        "DATE",
        "YEAR",
        "MONTH",
        "DAY",
        "FOUND_ROWS",
        "ROW_COUNT",
        "SLEEP",
        "HEX",
        "SIGN",
        "INSTR",
    ];
    for name in names {
        for n in 0..=5 {
            let args = vec!["'1'"; n].join(", ");
            let sql = format!("SELECT {name}({args})");
            // A value or an error, never a panic.
            if let Err(e) = db.run(&sql) {
                assert!(matches!(e.number(), 1582 | 1064), "{sql}: {e:?}");
            }
        }
    }
    assert_eq!(db.rows("SELECT 1"), vec![vec![Value::Int(1)]]);
}

#[test]
fn a_table_has_at_most_4096_columns() {
    let mut db = Db::new("columns");
    let table = |n: usize| {
        let cols: Vec<String> = (0..n).map(|i| format!("c{i} INT")).collect();
        format!("CREATE TABLE t{n} ({})", cols.join(", "))
    };
    assert_eq!(db.err(&table(4097)), 1117);
    db.ok(&table(4096));
    let values = vec!["1"; 4096].join(",");
    db.ok(&format!("INSERT INTO t4096 VALUES ({values})"));
    let rows = db.rows("SELECT c0, c4095 FROM t4096");
    assert_eq!(
        format!("{rows:?}"),
        format!("{:?}", vec![vec![Value::Int(1), Value::Int(1)]])
    );
}

#[test]
fn bad_names_are_refused_as_mysql_does() {
    let mut db = Db::new("names");
    let long = "x".repeat(65);
    assert_eq!(db.err("CREATE DATABASE ``"), 1102);
    assert_eq!(db.err("CREATE DATABASE `d2 `"), 1102);
    assert_eq!(db.err(&format!("CREATE DATABASE `{long}`")), 1059);
    assert_eq!(db.err("CREATE DATABASE `a\0b`"), 1102);
    assert_eq!(db.err("CREATE TABLE `` (a INT)"), 1103);
    assert_eq!(db.err("CREATE TABLE `t ` (a INT)"), 1103);
    assert_eq!(db.err("CREATE TABLE `t\0` (a INT)"), 1103);
    assert_eq!(db.err(&format!("CREATE TABLE `{long}` (a INT)")), 1059);
    assert_eq!(db.err("CREATE TABLE t (`` INT)"), 1166);
    assert_eq!(db.err("CREATE TABLE t (`a ` INT)"), 1166);
    assert_eq!(db.err("CREATE TABLE t (`a\0` INT)"), 1166);
    assert_eq!(db.err(&format!("CREATE TABLE t (`{long}` INT)")), 1059);
    // Nothing was created, and names at the limit are fine.
    assert!(db.rows("SHOW TABLES").is_empty());
    let ok = "y".repeat(64);
    db.ok(&format!("CREATE DATABASE `{ok}`"));
    db.ok(&format!("CREATE TABLE `{ok}` (`{ok}` INT, ` a` INT)"));
}
