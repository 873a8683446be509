"""LOCK TABLES and FLUSH TABLES WITH READ LOCK across connections: a second
connection's write really waits until UNLOCK TABLES (threads, bounded
waits), a waiting LOCK TABLES can be killed, and mariadb-dump works with
its default locking, --lock-all-tables and --single-transaction."""

import subprocess
import threading

import pymysql
import pytest

from lockstep_server import TARGET, code_of


def run(conn, sql):
    with conn.cursor() as c:
        c.execute(sql)
        return c.fetchall()


def in_thread(conn, sql):
    """Runs sql on conn in a thread; returns (thread, outcome dict)."""
    out = {}

    def go():
        try:
            out["rows"] = run(conn, sql)
        except pymysql.err.MySQLError as e:
            out["error"] = e.args[0]

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, out


def assert_waits_until(locker, waiter, sql, release="UNLOCK TABLES"):
    t, out = in_thread(waiter, sql)
    t.join(0.7)
    assert t.is_alive(), f"{sql} did not wait: {out}"
    run(locker, release)
    t.join(10)
    assert not t.is_alive(), f"{sql} still waits after {release}"
    assert "error" not in out, out
    return out


def test_read_lock_blocks_writes_not_reads(connect):
    a, b = connect(autocommit=True), connect(autocommit=True)
    run(a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    run(a, "INSERT INTO t VALUES (1, 1)")
    run(a, "LOCK TABLES t READ")
    assert run(b, "SELECT v FROM t") == ((1,),)
    assert_waits_until(a, b, "INSERT INTO t VALUES (2, 2)")
    assert run(a, "SELECT COUNT(*) FROM t") == ((2,),)


def test_write_lock_blocks_reads(connect):
    a, b = connect(autocommit=True), connect(autocommit=True)
    run(a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    run(a, "LOCK TABLES t WRITE")
    run(a, "INSERT INTO t VALUES (1, 5)")
    out = assert_waits_until(a, b, "SELECT v FROM t")
    assert out["rows"] == ((5,),)


def test_global_read_lock_blocks_writes_and_ddl(connect):
    a, b, c = (connect(autocommit=True) for _ in range(3))
    run(a, "CREATE TABLE t (id INT PRIMARY KEY)")
    run(a, "FLUSH TABLES WITH READ LOCK")
    t1, o1 = in_thread(b, "INSERT INTO t VALUES (1)")
    t2, o2 = in_thread(c, "CREATE TABLE u (id INT)")
    t1.join(0.7)
    t2.join(0.1)
    assert t1.is_alive() and t2.is_alive(), (o1, o2)
    run(a, "UNLOCK TABLES")
    t1.join(10)
    t2.join(10)
    assert not t1.is_alive() and not t2.is_alive()
    assert "error" not in o1 and "error" not in o2, (o1, o2)
    assert run(a, "SELECT COUNT(*) FROM t") == ((1,),)


def test_lock_wait_timeout_and_kill(connect):
    a, b, k = (connect(autocommit=True) for _ in range(3))
    run(a, "CREATE TABLE t (id INT PRIMARY KEY)")
    run(a, "LOCK TABLES t WRITE")
    run(b, "SET SESSION lock_wait_timeout = 1")
    assert code_of(lambda: run(b, "LOCK TABLES t READ")) == 1205
    run(b, "SET SESSION lock_wait_timeout = 60")
    b_id = run(b, "SELECT CONNECTION_ID()")[0][0]
    t, out = in_thread(b, "LOCK TABLES t READ")
    t.join(0.5)
    assert t.is_alive()
    run(k, f"KILL QUERY {b_id}")
    t.join(5)
    assert not t.is_alive() and out.get("error") == 1317, out
    run(a, "UNLOCK TABLES")


def test_closing_the_connection_releases(connect):
    a, b = connect(autocommit=True), connect(autocommit=True)
    run(a, "CREATE TABLE t (id INT PRIMARY KEY)")
    run(a, "LOCK TABLES t WRITE")
    a.close()
    run(b, "SET SESSION lock_wait_timeout = 5")
    run(b, "INSERT INTO t VALUES (1)")


def test_privileges(server, connect, db):
    root = connect(autocommit=True)
    run(root, "CREATE TABLE t (id INT PRIMARY KEY)")
    run(root, "DROP USER IF EXISTS lt_user")
    run(root, "CREATE USER lt_user IDENTIFIED BY 'pw'")
    run(root, f"GRANT SELECT ON `{db}`.* TO lt_user")
    u = connect(user="lt_user", password="pw", autocommit=True)
    for sql, code in (("LOCK TABLES t READ", 1044), ("FLUSH TABLES WITH READ LOCK", 1227)):
        assert code_of(lambda: run(u, sql)) == code, sql
    run(root, f"GRANT LOCK TABLES ON `{db}`.* TO lt_user")
    u2 = connect(user="lt_user", password="pw", autocommit=True)
    run(u2, "LOCK TABLES t READ")
    run(u2, "UNLOCK TABLES")
    run(root, "DROP USER lt_user")


@pytest.mark.skipif(TARGET != "lockstep", reason="round trip into lockstep")
@pytest.mark.parametrize("mode", [[], ["--lock-all-tables"], ["--single-transaction"]])
def test_dump_round_trip_with_locks(server, mode):
    name = "dumplock"
    server.sql(f"DROP DATABASE IF EXISTS {name}")
    server.sql(f"CREATE DATABASE {name}")
    server.sql(f"CREATE TABLE {name}.t (id INT PRIMARY KEY, s VARCHAR(20))")
    server.sql(f"CREATE TABLE {name}.u (id INT PRIMARY KEY)")
    server.sql(f"INSERT INTO {name}.t VALUES (1, 'a'), (2, NULL)")
    server.sql(f"INSERT INTO {name}.u VALUES (7)")
    args = ["mariadb-dump", "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot",
            "--protocol=TCP", "--no-tablespaces", *mode, "--databases", name]
    dump = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert dump.returncode == 0, dump.stderr
    conn = server.connect()
    before = (run(conn, f"SELECT * FROM {name}.t ORDER BY id"),
              run(conn, f"SELECT * FROM {name}.u"))
    run(conn, f"DROP DATABASE {name}")
    load = subprocess.run(server.cli_args(), input=dump.stdout, capture_output=True,
                          text=True, timeout=60)
    assert load.returncode == 0, load.stderr
    after = (run(conn, f"SELECT * FROM {name}.t ORDER BY id"),
             run(conn, f"SELECT * FROM {name}.u"))
    assert after == before
    run(conn, f"DROP DATABASE {name}")
