//! The client against a private MariaDB (started the way tests/conftest.py
//! does: its own datadir, port and socket, root with an empty password).
//! Skipped when mariadbd is not installed.

use lockstep_client::{Conn, Opts};
use lockstep_types::{DateTime, Value};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct MariaDb {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn which(cmd: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
            .any(|d| d.join(cmd).is_file())
    })
}

async fn start_mariadb() -> Option<MariaDb> {
    if !which("mariadbd") || !which("mariadb-install-db") {
        eprintln!("mariadbd not installed: skipping");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("lockstep-client-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    let ok = Command::new("mariadb-install-db")
        .args([
            "--no-defaults",
            &format!("--datadir={}", data.display()),
            "--user=root",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run mariadb-install-db")
        .success();
    assert!(ok, "mariadb-install-db failed");
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let child = Command::new("mariadbd")
        .args([
            "--no-defaults".to_string(),
            format!("--datadir={}", data.display()),
            format!("--port={port}"),
            "--bind-address=127.0.0.1".into(),
            format!("--socket={}", dir.join("sock").display()),
            format!("--pid-file={}", dir.join("pid").display()),
            "--user=root".into(),
            "--skip-name-resolve".into(),
            "--skip-log-bin".into(),
            "--performance-schema=OFF".into(),
            "--innodb-buffer-pool-size=64M".into(),
            format!("--log-error={}", dir.join("err.log").display()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mariadbd");
    let server = MariaDb { child, dir, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if Conn::connect(&opts(port)).await.is_ok() {
            return Some(server);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("mariadbd did not become ready");
}

fn opts(port: u16) -> Opts {
    Opts::new("127.0.0.1", port, "root", "")
}

fn s(v: &Value) -> String {
    v.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_mariadb() {
    let Some(server) = start_mariadb().await else {
        return;
    };
    let port = server.port;
    let mut c = Conn::connect(&opts(port)).await.expect("connect");
    assert!(c.server_version().contains("MariaDB"));
    c.ping().await.expect("ping");
    c.query_drop("CREATE DATABASE ct").await.expect("create db");
    drop(c);

    // Connecting with a database; wrong database and wrong password fail
    // with the server's codes.
    let mut c = Conn::connect(&opts(port).database("ct"))
        .await
        .expect("connect db");
    let e = Conn::connect(&opts(port).database("nope"))
        .await
        .expect_err("bad db");
    assert_eq!(e.code(), Some(1049), "{e}");
    let mut bad = opts(port);
    bad.password = "wrong".into();
    let e = Conn::connect(&bad).await.expect_err("bad password");
    assert_eq!(e.code(), Some(1045), "{e}");

    // Text protocol: types, NULLs, affected rows, errors with SQLSTATE.
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), \
         at DATETIME, big BIGINT UNSIGNED)",
    )
    .await
    .expect("create");
    let n = c
        .query_drop(
            "INSERT INTO t VALUES (1, 'one', 1.50, '2024-01-02 03:04:05', 18446744073709551615), \
             (2, NULL, -2.25, NULL, 0)",
        )
        .await
        .expect("insert");
    assert_eq!(n, 2);
    let r = c
        .query("SELECT id, name, amount, at, big FROM t ORDER BY id")
        .await
        .expect("select");
    assert_eq!(r.columns.len(), 5);
    assert_eq!(r.columns[1].name, "name");
    assert_eq!(r.rows.len(), 2);
    assert!(matches!(r.rows[0][0], Value::Int(1)));
    assert_eq!(s(&r.rows[0][1]), "one");
    assert!(matches!(&r.rows[0][2], Value::Decimal(d) if d.to_string() == "1.50"));
    assert!(matches!(&r.rows[0][3], Value::DateTime(dt) if dt.second == 5));
    assert!(matches!(r.rows[0][4], Value::UInt(u64::MAX)));
    assert!(r.rows[1][1].is_null() && r.rows[1][3].is_null());
    let e = c
        .query("INSERT INTO t VALUES (1, 'dup', 0, NULL, 0)")
        .await
        .expect_err("dup");
    assert_eq!(e.code(), Some(1062));
    assert!(matches!(&e, lockstep_client::Error::Server { sqlstate, .. } if sqlstate == "23000"));
    let e = c.query("SELEC 1").await.expect_err("parse error");
    assert_eq!(e.code(), Some(1064));
    // Still usable after errors; empty result sets work.
    let r = c
        .query("SELECT id FROM t WHERE id > 100")
        .await
        .expect("empty");
    assert!(r.rows.is_empty());

    // Prepared statements: cached, binary rows, typed params, NULL params.
    let sel = "SELECT id, name, amount, at, big FROM t WHERE id = ?";
    let r = c.execute(sel, &[Value::Int(1)]).await.expect("execute");
    assert_eq!(r.rows.len(), 1);
    assert_eq!(s(&r.rows[0][1]), "one");
    assert!(matches!(&r.rows[0][2], Value::Decimal(d) if d.to_string() == "1.50"));
    assert!(matches!(&r.rows[0][3], Value::DateTime(dt) if dt.hour == 3 && dt.date.day == 2));
    assert!(matches!(r.rows[0][4], Value::UInt(u64::MAX)));
    let r = c.execute(sel, &[Value::Int(2)]).await.expect("execute 2");
    assert!(r.rows[0][1].is_null());
    assert_eq!(c.cached_statements(), 1);
    // A handle from `prepare` is the cached statement and runs without the
    // text; a wrong parameter count is refused before anything is sent.
    let stmt = c.prepare(sel).await.expect("prepare cached");
    assert_eq!(c.prepare(sel).await.expect("prepare again"), stmt);
    assert_eq!(c.cached_statements(), 1);
    let r = c
        .execute_statement(stmt, &[Value::Int(1)])
        .await
        .expect("execute handle");
    assert_eq!(s(&r.rows[0][1]), "one");
    let e = c
        .execute_statement(stmt, &[])
        .await
        .expect_err("missing parameter");
    assert_eq!(e.code(), Some(1210), "{e}");
    c.ping().await.expect("usable after a refused execute");
    let ins = "INSERT INTO t (id, name, amount, at, big) VALUES (?, ?, ?, ?, ?)";
    let at = DateTime::parse("2025-06-07 08:09:10").expect("dt");
    let n = c
        .execute_drop(
            ins,
            &[
                Value::Int(3),
                Value::str("three"),
                Value::Decimal("3.33".parse().expect("dec")),
                Value::DateTime(at),
                Value::Null,
            ],
        )
        .await
        .expect("insert ps");
    assert_eq!(n, 1);
    let r = c
        .execute(
            "SELECT COUNT(*), SUM(amount), MAX(at) FROM t WHERE id >= ?",
            &[Value::Int(0)],
        )
        .await
        .expect("aggregate");
    assert!(matches!(r.rows[0][0], Value::Int(3)));
    assert!(matches!(&r.rows[0][1], Value::Decimal(d) if d.to_string() == "2.58"));
    assert!(matches!(&r.rows[0][2], Value::DateTime(dt) if dt.date.year == 2025));
    let e = c
        .execute(
            ins,
            &[
                Value::Int(3),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
        )
        .await
        .expect_err("dup ps");
    assert_eq!(e.code(), Some(1062));
    let e = c
        .execute("SELECT nope FROM t", &[])
        .await
        .expect_err("bad column");
    assert_eq!(e.code(), Some(1054));
    c.close_statements().await.expect("close stmts");
    assert_eq!(c.cached_statements(), 0);
    let r = c.execute(sel, &[Value::Int(3)]).await.expect("re-prepare");
    assert_eq!(s(&r.rows[0][1]), "three");

    // Row locks: the second session's FOR UPDATE times out with 1205.
    c.query_drop("SET autocommit = 0")
        .await
        .expect("autocommit");
    c.execute("SELECT id FROM t WHERE id = ? FOR UPDATE", &[Value::Int(1)])
        .await
        .expect("lock");
    let mut c2 = Conn::connect(&opts(port).database("ct"))
        .await
        .expect("connect 2");
    c2.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .await
        .expect("timeout");
    c2.query_drop("SET autocommit = 0")
        .await
        .expect("autocommit 2");
    let e = c2
        .execute("SELECT id FROM t WHERE id = ? FOR UPDATE", &[Value::Int(1)])
        .await
        .expect_err("lock wait timeout");
    assert!(e.is_lock_timeout(), "{e}");
    c.query_drop("COMMIT").await.expect("commit");
    c2.query_drop("ROLLBACK").await.expect("rollback");
    c.close().await.expect("quit");
    c2.close().await.expect("quit 2");
    drop(server);
}
