//! lockstep's own check program for the Rust `mysql` crate (ours, not the
//! crate's: its tests are not runnable without its CI's server setup).
//! Prints `COMPAT pass|fail|skip <variant>/<name> <message>` per test.
//! Usage: lockstep-mysql-crate-check HOST PORT

use mysql::consts::{ColumnFlags, ColumnType};
use mysql::prelude::*;
use mysql::{Conn, Opts, OptsBuilder, Params, Row, Value};
use std::io::Write;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

type Res = Result<(), String>;
type Check = fn(&mut Conn) -> Res;

fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

fn eq<T: PartialEq + std::fmt::Debug>(want: T, got: T) -> Res {
    if want == got {
        Ok(())
    } else {
        Err(format!("want {want:?} got {got:?}"))
    }
}

fn table(c: &mut Conn, name: &str, cols: &str) -> Res {
    c.query_drop(format!("DROP TABLE IF EXISTS {name}"))
        .map_err(e)?;
    c.query_drop(format!("CREATE TABLE {name} ({cols})"))
        .map_err(e)
}

fn text_literals(c: &mut Conn) -> Res {
    let row: Row = c
        .query_first("SELECT 1, 'x', NULL, 1.5")
        .map_err(e)?
        .ok_or("no row")?;
    eq(Value::Bytes(b"1".to_vec()), row[0].clone())?;
    eq(Value::NULL, row[2].clone())
}

fn prepared_params(c: &mut Conn) -> Res {
    let r: Option<(i64, String, Option<i32>)> = c
        .exec_first("SELECT ? + 1, ?, ?", (41, "it's", None::<i32>))
        .map_err(e)?;
    eq(Some((42, "it's".to_string(), None)), r)
}

fn column_metadata(c: &mut Conn) -> Res {
    table(
        c,
        "rm",
        "id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20) NOT NULL, amt DECIMAL(10,2)",
    )?;
    let stmt = c
        .prep("SELECT id, name AS n, amt FROM rm WHERE id > ?")
        .map_err(e)?;
    eq(1, stmt.num_params() as usize)?;
    let cols = stmt.columns();
    eq("n", &*cols[1].name_str())?;
    eq("name", &*cols[1].org_name_str())?;
    eq("rm", &*cols[0].table_str())?;
    eq(ColumnType::MYSQL_TYPE_LONG, cols[0].column_type())?;
    eq(ColumnType::MYSQL_TYPE_NEWDECIMAL, cols[2].column_type())?;
    eq(2, cols[2].decimals())?;
    eq(true, cols[0].flags().contains(ColumnFlags::PRI_KEY_FLAG))?;
    eq(true, cols[1].flags().contains(ColumnFlags::NOT_NULL_FLAG))
}

fn types_binary(c: &mut Conn) -> Res {
    table(
        c,
        "rt",
        "i TINYINT, u BIGINT UNSIGNED, f DOUBLE, dc DECIMAL(30,10), d DATE, ts DATETIME(6), \
        tm TIME(3), s VARCHAR(20), b BLOB, y YEAR",
    )?;
    c.exec_drop(
        "INSERT INTO rt VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            -128i8,
            u64::MAX,
            0.125f64,
            "12345678901234567890.0123456789",
            Value::Date(2024, 2, 29, 0, 0, 0, 0),
            Value::Date(2024, 2, 29, 23, 59, 59, 123456),
            Value::Time(true, 1, 10, 59, 59, 500000),
            "żółw 🐢",
            vec![0u8, 1, 255],
            2155,
        ),
    )
    .map_err(e)?;
    let row: Row = c
        .exec_first("SELECT * FROM rt", ())
        .map_err(e)?
        .ok_or("no row")?;
    eq(Value::Int(-128), row[0].clone())?;
    eq(Value::UInt(u64::MAX), row[1].clone())?;
    eq(Value::Double(0.125), row[2].clone())?;
    eq(
        Value::Bytes(b"12345678901234567890.0123456789".to_vec()),
        row[3].clone(),
    )?;
    eq(Value::Date(2024, 2, 29, 0, 0, 0, 0), row[4].clone())?;
    eq(Value::Date(2024, 2, 29, 23, 59, 59, 123456), row[5].clone())?;
    eq(Value::Time(true, 1, 10, 59, 59, 500000), row[6].clone())?;
    eq(Value::Bytes("żółw 🐢".as_bytes().to_vec()), row[7].clone())?;
    eq(Value::Bytes(vec![0, 1, 255]), row[8].clone())?;
    eq(Value::Int(2155), row[9].clone())
}

fn types_text(c: &mut Conn) -> Res {
    let row: Row = c
        .query_first("SELECT * FROM rt")
        .map_err(e)?
        .ok_or("no row")?;
    eq(Value::Bytes(b"-128".to_vec()), row[0].clone())?;
    eq(
        Value::Bytes(b"2024-02-29 23:59:59.123456".to_vec()),
        row[5].clone(),
    )?;
    eq(Value::Bytes(b"-34:59:59.500".to_vec()), row[6].clone())
}

fn exec_batch(c: &mut Conn) -> Res {
    table(c, "rb", "id INT PRIMARY KEY AUTO_INCREMENT, v INT")?;
    c.exec_batch("INSERT INTO rb (v) VALUES (?)", (0..100).map(|i| (i,)))
        .map_err(e)?;
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM rb").map_err(e)?;
    eq(Some(100), n)
}

fn affected_and_insert_id(c: &mut Conn) -> Res {
    table(c, "ra", "id INT PRIMARY KEY AUTO_INCREMENT, v INT")?;
    c.query_drop("INSERT INTO ra (v) VALUES (1),(2),(3)")
        .map_err(e)?;
    eq(3, c.affected_rows())?;
    eq(1, c.last_insert_id())?;
    c.exec_drop("UPDATE ra SET v = 9 WHERE id > ?", (1,))
        .map_err(e)?;
    eq(2, c.affected_rows())
}

fn streaming_iter(c: &mut Conn) -> Res {
    table(c, "rs", "id INT PRIMARY KEY")?;
    let values: Vec<String> = (0..5000).map(|i| format!("({i})")).collect();
    c.query_drop(format!("INSERT INTO rs VALUES {}", values.join(",")))
        .map_err(e)?;
    let mut n = 0;
    for row in c
        .exec_iter("SELECT id FROM rs ORDER BY id", ())
        .map_err(e)?
    {
        let id: i32 = mysql::from_row(row.map_err(e)?);
        eq(n, id)?;
        n += 1;
    }
    eq(5000, n)
}

fn multi_result_sets(c: &mut Conn) -> Res {
    let mut result = c
        .query_iter("SELECT 1; SELECT 2, 3; DO 0; SELECT 4")
        .map_err(e)?;
    let mut sets = Vec::new();
    while let Some(set) = result.iter() {
        let rows: Vec<Row> = set.collect::<Result<_, _>>().map_err(e)?;
        sets.push(rows.len());
    }
    eq(vec![1, 1, 0, 1], sets)
}

fn transactions(c: &mut Conn) -> Res {
    table(c, "rx", "id INT PRIMARY KEY")?;
    let mut tx = c.start_transaction(Default::default()).map_err(e)?;
    tx.query_drop("INSERT INTO rx VALUES (1)").map_err(e)?;
    tx.rollback().map_err(e)?;
    let mut tx = c.start_transaction(Default::default()).map_err(e)?;
    tx.exec_drop("INSERT INTO rx VALUES (?)", (2,)).map_err(e)?;
    tx.commit().map_err(e)?;
    let ids: Vec<i32> = c.query("SELECT id FROM rx").map_err(e)?;
    eq(vec![2], ids)
}

fn errors(c: &mut Conn) -> Res {
    table(c, "re", "id INT PRIMARY KEY")?;
    c.query_drop("INSERT INTO re VALUES (1)").map_err(e)?;
    match c.query_drop("INSERT INTO re VALUES (1)") {
        Err(mysql::Error::MySqlError(m)) => eq((1062, "23000"), (m.code, m.state.as_str()))?,
        other => return Err(format!("want 1062, got {other:?}")),
    }
    match c.exec_drop("SELEC ?", (1,)) {
        Err(mysql::Error::MySqlError(m)) => eq(1064, m.code)?,
        other => return Err(format!("want 1064, got {other:?}")),
    }
    eq(true, c.ping().is_ok())
}

fn reset_and_change_user(c: &mut Conn) -> Res {
    c.query_drop("SET @v = 7").map_err(e)?;
    c.reset().map_err(e)?;
    let v: Option<Option<i32>> = c.query_first("SELECT @v").map_err(e)?;
    eq(Some(None), v)?;
    c.select_db("compat").map_err(e)?;
    let d: Option<String> = c.query_first("SELECT DATABASE()").map_err(e)?;
    eq(Some("compat".to_string()), d)
}

fn named_params(c: &mut Conn) -> Res {
    let r: Option<(i32, String, i32)> = c
        .exec_first(
            "SELECT :a, :b, :a",
            Params::from(vec![("a", Value::from(1)), ("b", Value::from("two"))]),
        )
        .map_err(e)?;
    eq(Some((1, "two".to_string(), 1)), r)
}

fn large_packet(c: &mut Conn) -> Res {
    table(c, "rl", "b LONGBLOB")?;
    let big = vec![7u8; 17 * 1024 * 1024];
    c.exec_drop("INSERT INTO rl VALUES (?)", (big.clone(),))
        .map_err(e)?;
    let got: Option<Vec<u8>> = c.query_first("SELECT b FROM rl").map_err(e)?;
    eq(true, got.as_deref() == Some(&big[..]))
}

fn statement_cache_close(c: &mut Conn) -> Res {
    for i in 0..300 {
        let s = c.prep(format!("SELECT {i} + ?")).map_err(e)?;
        let v: Option<i64> = c.exec_first(&s, (1,)).map_err(e)?;
        eq(Some(i + 1), v)?;
        c.close(s).map_err(e)?;
    }
    Ok(())
}

fn load_data_local(c: &mut Conn) -> Res {
    table(c, "rld", "id INT, s VARCHAR(5)")?;
    c.set_local_infile_handler(Some(mysql::LocalInfileHandler::new(|_, w| {
        w.write_all(b"1,a\n2,b\n")?;
        Ok(())
    })));
    c.query_drop("LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE rld FIELDS TERMINATED BY ','")
        .map_err(e)?;
    eq(2, c.affected_rows())
}

fn empty_params_exec(c: &mut Conn) -> Res {
    let r: Vec<i32> = c
        .exec("SELECT 1 UNION ALL SELECT 2", Params::Empty)
        .map_err(e)?;
    eq(vec![1, 2], r)
}

const CHECKS: &[(&str, Check)] = &[
    ("text_literals", text_literals),
    ("prepared_params", prepared_params),
    ("column_metadata", column_metadata),
    ("types_binary", types_binary),
    ("types_text", types_text),
    ("exec_batch", exec_batch),
    ("affected_and_insert_id", affected_and_insert_id),
    ("streaming_iter", streaming_iter),
    ("multi_result_sets", multi_result_sets),
    ("transactions", transactions),
    ("errors", errors),
    ("reset_and_change_user", reset_and_change_user),
    ("named_params", named_params),
    ("large_packet", large_packet),
    ("statement_cache_close", statement_cache_close),
    ("load_data_local", load_data_local),
    ("empty_params_exec", empty_params_exec),
];

fn opts(host: &str, port: u16, compress: bool, limit: u64) -> Opts {
    // prefer_socket (the crate's default) asks `SELECT @@socket` on connect;
    // connect_defaults checks that, the rest leave it off.
    let b = OptsBuilder::new()
        .prefer_socket(false)
        .ip_or_hostname(Some(host))
        .tcp_port(port)
        .user(Some("root"))
        .pass(Some(""))
        .db_name(Some("compat"))
        .tcp_connect_timeout(Some(Duration::from_secs(10)))
        .read_timeout(Some(Duration::from_secs(limit)))
        .write_timeout(Some(Duration::from_secs(limit)));
    let b = if compress {
        b.compress(Some(mysql::Compression::default()))
    } else {
        b
    };
    Opts::from(b)
}

/// One check on its own connection and thread, bounded by `limit` seconds.
fn run_one(o: Opts, check: Check, limit: u64) -> Res {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let r = Conn::new(o).map_err(e).and_then(|mut c| check(&mut c));
        let _ = tx.send(r);
    });
    rx.recv_timeout(Duration::from_secs(limit))
        .unwrap_or_else(|_| Err(format!("hang: test ran longer than {limit}s")))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (host, port) = (args[1].clone(), args[2].parse::<u16>().expect("port"));
    let limit = std::env::var("LOCKSTEP_COMPAT_TEST_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let defaults =
        Opts::from(OptsBuilder::from_opts(opts(&host, port, false, limit)).prefer_socket(true));
    match run_one(defaults, text_literals, limit) {
        Ok(()) => println!("COMPAT pass default/connect_defaults"),
        Err(m) => println!(
            "COMPAT fail default/connect_defaults {}",
            m.replace('\n', " ")
        ),
    }
    for (variant, compress) in [("plain", false), ("compress", true)] {
        for (name, check) in CHECKS {
            match run_one(opts(&host, port, compress, limit), *check, limit) {
                Ok(()) => println!("COMPAT pass {variant}/{name}"),
                Err(m) => println!("COMPAT fail {variant}/{name} {}", m.replace('\n', " ")),
            }
        }
    }
    std::process::exit(0);
}
