//! Statements a hostile or careless client may send, run through a real
//! session: they end in a MySQL error (or NULL), never in a crash or in
//! unbounded memory. Inputs here reproduce what the fuzz targets and
//! tests/test_hostile.py found.

use crate::tests::db::Db;
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
    // A sort past sort_buffer_size spills sorted runs to disk and streams
    // its result from their merge (exec/filesort.rs); so do an UPDATE's.
    let sorted = db.rows("SELECT s, id FROM big ORDER BY s DESC");
    assert_eq!(sorted.len(), 5000);
    assert!(sorted
        .windows(2)
        .all(|w| w[0][0].sort_cmp(&w[1][0]).is_ge()));
    db.ok("UPDATE big SET k = 99 ORDER BY s DESC LIMIT 1");
    let last = (0..5000i64).max_by_key(|i| (i * 7919) % 5000);
    assert_eq!(
        db.rows("SELECT id FROM big WHERE k = 99"),
        vec![vec![Value::Int(last.expect("rows"))]]
    );
    db.ok("UPDATE big SET k = id % 10 WHERE k = 99");
    assert_eq!(db.err("SELECT s, COUNT(*) FROM big GROUP BY s"), 1114);
    assert_eq!(db.err("SELECT DISTINCT s FROM big"), 1114);
    assert_eq!(db.err("SELECT COUNT(DISTINCT s) FROM big"), 1114);
    assert_eq!(db.err("SELECT GROUP_CONCAT(s) FROM big"), 1114);
    assert_eq!(db.err("SELECT s FROM big UNION SELECT s FROM big"), 1114);
    assert_eq!(db.err("SELECT COUNT(*) FROM (SELECT s FROM big) x"), 1114);
    // A join's result larger than query_memory_limit streams too (through
    // the sort's run file); what needs it whole at once fails.
    let joined = "SELECT a.id, b.id FROM big a JOIN big b ON a.k = b.k WHERE a.id < 100";
    assert_eq!(db.rows(joined).len(), 50_000);
    assert_eq!(db.err(&format!("{joined} ORDER BY (SELECT 1)")), 1041);
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
    // A plain scan streams in batches within the cap; what needs the
    // whole set at once does not fit.
    assert_eq!(db.rows("SELECT id FROM big").len(), 5000);
    assert_eq!(
        db.err("SELECT id FROM big WHERE id IN (SELECT id FROM big)"),
        1041
    );
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
fn max_allowed_packet_is_read_only_per_session_and_bounds_every_builder() {
    let mut db = Db::new("packet");
    // A session cannot raise its own bound (MySQL 1621) ...
    assert_eq!(
        db.err("SET SESSION max_allowed_packet = 100000000000000"),
        1621
    );
    assert_eq!(db.err("SET max_allowed_packet = 100000000000000"), 1621);
    // ... and the global one is clamped to MySQL's range, in whole KiB.
    db.ok("SET GLOBAL max_allowed_packet = 100000000000000");
    assert_eq!(
        db.rows("SELECT @@GLOBAL.max_allowed_packet"),
        vec![vec![Value::Int(1 << 30)]]
    );
    db.ok("SET GLOBAL max_allowed_packet = 5000");
    assert_eq!(
        db.rows("SELECT @@GLOBAL.max_allowed_packet"),
        vec![vec![Value::Int(4096)]]
    );
    db.ok("SET GLOBAL max_allowed_packet = 1048576");
    // Every function that builds a string checks before it allocates.
    for sql in [
        "SELECT LENGTH(REPEAT('x', 100000000000000))",
        "SELECT HEX(REPEAT('a', 600000))",
        "SELECT LENGTH(HEX(HEX(HEX(HEX(REPEAT('a', 600000))))))",
        "SELECT CONCAT(REPEAT('a', 600000), REPEAT('b', 600000))",
        "SELECT CONCAT_WS(',', REPEAT('a', 600000), REPEAT('b', 600000))",
        "SELECT LPAD('a', 2000000, 'x')",
        "SELECT REPLACE(REPEAT('a', 1000), 'a', REPEAT('b', 2000))",
    ] {
        assert_eq!(db.rows(sql), vec![vec![Value::Null]], "{sql}");
        // NULL with MySQL's warning, naming the function.
        let warnings = db.rows("SHOW WARNINGS");
        let overflow = warnings.iter().any(|w| {
            w[1] == Value::Int(1301)
                && w[2]
                    .to_string()
                    .ends_with("max_allowed_packet (1048576) - truncated")
        });
        assert!(overflow, "{sql}: {warnings:?}");
    }
    // The statement's memory cap bounds it too, whatever the packet size.
    db.ok("SET GLOBAL max_allowed_packet = 1073741824");
    db.ok("SET SESSION query_memory_limit = 1000000");
    assert_eq!(
        db.rows("SELECT REPEAT('x', 2000000)"),
        vec![vec![Value::Null]]
    );
    assert_eq!(
        db.rows("SELECT LENGTH(HEX(REPEAT('a', 1000)))"),
        vec![vec![Value::Int(2000)]]
    );
}

#[test]
fn system_schema_names_cannot_be_taken() {
    let mut db = Db::new("sysnames");
    for name in ["sys", "Mysql", "INFORMATION_SCHEMA", "performance_schema"] {
        assert_eq!(db.err(&format!("CREATE DATABASE {name}")), 1007, "{name}");
        db.ok(&format!("CREATE DATABASE IF NOT EXISTS {name}"));
        assert_eq!(db.err(&format!("DROP DATABASE {name}")), 1044, "{name}");
    }
    assert_eq!(db.err("CREATE TABLE mysql.t (id INT PRIMARY KEY)"), 1044);
    let listed = db.rows("SHOW DATABASES");
    let sys = listed
        .iter()
        .filter(|r| r[0].to_string().eq_ignore_ascii_case("sys"))
        .count();
    assert!(sys <= 1, "sys listed {sys} times");
}

#[test]
fn read_only_transactions_refuse_writes() {
    let mut db = Db::new("readonly");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    db.ok("INSERT INTO t VALUES (1, 1)");
    db.ok("START TRANSACTION READ ONLY");
    assert_eq!(db.err("INSERT INTO t VALUES (2, 2)"), 1792);
    assert_eq!(db.err("UPDATE t SET v = 2"), 1792);
    assert_eq!(db.err("DELETE FROM t"), 1792);
    assert_eq!(db.rows("SELECT v FROM t"), vec![vec![Value::Int(1)]]);
    db.ok("COMMIT");
    db.ok("INSERT INTO t VALUES (2, 2)");
    // The session default, and both of its names.
    for var in ["transaction_read_only", "tx_read_only"] {
        db.ok(&format!("SET SESSION {var} = ON"));
        assert_eq!(db.err("INSERT INTO t VALUES (3, 3)"), 1792, "{var}");
        db.ok("BEGIN");
        assert_eq!(db.err("UPDATE t SET v = 0"), 1792, "{var}");
        db.ok("ROLLBACK");
        db.ok(&format!("SET SESSION {var} = 0"));
    }
    db.ok("SET SESSION TRANSACTION READ ONLY");
    assert_eq!(db.err("DELETE FROM t WHERE id = 1"), 1792);
    db.ok("SET SESSION TRANSACTION READ WRITE");
    // The next transaction only: it applies once, then the default again.
    db.ok("SET TRANSACTION READ ONLY");
    db.ok("BEGIN");
    assert_eq!(db.err("INSERT INTO t VALUES (3, 3)"), 1792);
    db.ok("COMMIT");
    db.ok("INSERT INTO t VALUES (3, 3)");
    db.ok("BEGIN");
    assert_eq!(db.err("SET TRANSACTION READ ONLY"), 1568);
    db.ok("COMMIT");
    // The next-transaction isolation level survives BEGIN too.
    db.ok("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    db.ok("BEGIN");
    let mut other = db.session(2);
    db.ok("SELECT * FROM t");
    db.run_in(&mut other, "INSERT INTO t VALUES (9, 9)")
        .expect("insert from another session");
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM t"),
        vec![vec![Value::Int(4)]],
        "READ COMMITTED sees the other session's commit"
    );
    db.ok("COMMIT");
    other.disconnect();
}

#[test]
fn safe_updates_and_refused_compatibility_statements() {
    let mut db = Db::new("safe");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    db.ok("INSERT INTO t VALUES (1, 1), (2, 2)");
    db.ok("SET sql_safe_updates = 1");
    assert_eq!(db.err("DELETE FROM t WHERE id = id"), 1175);
    assert_eq!(db.err("UPDATE t SET v = 0"), 1175);
    assert_eq!(db.err("DELETE FROM t WHERE v = 1"), 1175);
    db.ok("DELETE FROM t WHERE id = 2");
    db.ok("UPDATE t SET v = 5 WHERE v = 1 LIMIT 1");
    db.ok("SET sql_safe_updates = 0");
    db.ok("UPDATE t SET v = 0");
    // Table locks are kept (lock_tables.test); what is not built is
    // refused, not ignored.
    db.ok("LOCK TABLE t READ");
    assert_eq!(db.err("UPDATE t SET v = 1"), 1099);
    assert_eq!(db.err("ALTER TABLE t ADD COLUMN w INT"), 1099);
    db.ok("UNLOCK TABLES");
    assert_eq!(db.err("FLUSH TABLES t FOR EXPORT"), 1235);
    assert_eq!(db.err("LOCK INSTANCE FOR BACKUP"), 1235);
    db.ok("FLUSH TABLES WITH READ LOCK");
    assert_eq!(db.err("UPDATE t SET v = 1"), 1223);
    db.ok("UNLOCK TABLES");
    db.ok("FLUSH PRIVILEGES");
    // DO evaluates its expressions (and fails as a SELECT of them would).
    db.ok("DO 1, (SELECT COUNT(*) FROM t)");
    assert_eq!(db.err("DO (SELECT nope FROM t)"), 1054);
    assert_eq!(db.err("DO (SELECT 1 FROM missing)"), 1146);
}

#[test]
fn ddl_waits_for_transactions_that_use_the_table() {
    let mut db = Db::new("mdl");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    db.ok("INSERT INTO t VALUES (1, 1)");
    db.ok("BEGIN");
    db.ok("INSERT INTO t VALUES (2, 2)");
    let mut ddl = db.session(2);
    db.run_in(&mut ddl, "SET SESSION lock_wait_timeout = 1")
        .expect("set");
    for sql in [
        "TRUNCATE TABLE t",
        "DROP TABLE t",
        "CREATE INDEX v ON t (v)",
        "ALTER TABLE t ADD INDEX v (v)",
        "DROP DATABASE d",
    ] {
        let started = std::time::Instant::now();
        let e = db.run_in(&mut ddl, sql).expect_err(sql);
        assert_eq!(e.number(), 1205, "{sql}");
        assert!(started.elapsed() >= std::time::Duration::from_millis(900));
    }
    // A plain read holds the table too, until the transaction ends.
    db.ok("COMMIT");
    db.ok("BEGIN");
    db.ok("SELECT * FROM t");
    assert_eq!(
        db.run_in(&mut ddl, "TRUNCATE TABLE t")
            .map_err(|e| e.number())
            .err(),
        Some(1205)
    );
    db.ok("COMMIT");
    db.run_in(&mut ddl, "TRUNCATE TABLE t")
        .expect("no user left");
    assert_eq!(db.rows("SELECT COUNT(*) FROM t"), vec![vec![Value::Int(0)]]);
    // Autocommit statements hold it only while they run.
    db.ok("INSERT INTO t VALUES (3, 3)");
    db.run_in(&mut ddl, "DROP TABLE t").expect("no user left");
    ddl.disconnect();
}

#[test]
fn long_statements_stop_when_killed_or_out_of_time() {
    let mut db = Db::new("interrupt");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, k INT)");
    let values: Vec<String> = (0..3000).map(|i| format!("({i}, {})", i % 7)).collect();
    db.ok(&format!("INSERT INTO t VALUES {}", values.join(",")));
    // A join that visits 9M row pairs and keeps none of them.
    let slow = "SELECT COUNT(*) FROM t a JOIN t b ON a.k + b.k < 0";
    for (setup, sql) in [
        ("SET SESSION max_execution_time = 100", slow.to_string()),
        (
            "SET SESSION max_execution_time = 0",
            slow.replacen("SELECT", "SELECT /*+ MAX_EXECUTION_TIME(100) */", 1),
        ),
    ] {
        db.ok(setup);
        let started = std::time::Instant::now();
        assert_eq!(db.err(&sql), 3024, "{sql}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
    db.ok("SET SESSION max_execution_time = 0");
    // The hint applies to SELECT only; other hints are ignored.
    db.ok("SELECT /*+ BKA(t) */ COUNT(*) FROM t");
    // KILL QUERY from another thread: the flag is what KILL sets.
    let process = db
        .server
        .processes
        .lock()
        .get(&1)
        .cloned()
        .expect("the test session is registered");
    let killer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        process
            .kill_query
            .store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let started = std::time::Instant::now();
    assert_eq!(db.err(slow), 1317);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    killer.join().expect("killer thread");
    // The next statement runs normally.
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM t"),
        vec![vec![Value::Int(3000)]]
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
    // Index, procedure, function and trigger names (1280, 1458).
    db.ok("CREATE TABLE r (id INT PRIMARY KEY, v INT)");
    assert_eq!(db.err("CREATE INDEX `` ON r (v)"), 1280);
    assert_eq!(db.err("CREATE INDEX `i ` ON r (v)"), 1280);
    assert_eq!(db.err("ALTER TABLE r ADD INDEX `` (v)"), 1280);
    assert_eq!(db.err("CREATE TABLE r2 (v INT, INDEX `i ` (v))"), 1280);
    assert_eq!(db.err("CREATE PROCEDURE `p ` () BEGIN END"), 1458);
    assert_eq!(db.err("CREATE FUNCTION `` () RETURNS INT RETURN 1"), 1458);
    assert_eq!(
        db.err("CREATE TRIGGER `tr ` BEFORE INSERT ON r FOR EACH ROW SET @a = 1"),
        1458
    );
    db.ok("DROP TABLE r");
    // Nothing was created, and names at the limit are fine.
    assert!(db.rows("SHOW TABLES").is_empty());
    let ok = "y".repeat(64);
    db.ok(&format!("CREATE DATABASE `{ok}`"));
    db.ok(&format!("CREATE TABLE `{ok}` (`{ok}` INT, ` a` INT)"));
}
