"""Transactions as ORMs use them: savepoints through a real client, and what
a savepoint rolled back never reaching the log (kill -9 and restart)."""

import pytest

from lockstep_server import code_of


def run(conn, sql):
    with conn.cursor() as c:
        c.execute(sql)
        return c.fetchall()


def test_nested_savepoints_as_an_orm_uses_them(connect):
    conn = connect()
    run(conn, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    run(conn, "BEGIN")
    run(conn, "INSERT INTO t VALUES (1, 1)")
    run(conn, "SAVEPOINT s1")
    run(conn, "INSERT INTO t VALUES (2, 2)")
    run(conn, "SAVEPOINT s2")
    run(conn, "UPDATE t SET v = 20 WHERE id = 2")
    run(conn, "ROLLBACK TO SAVEPOINT s2")
    run(conn, "RELEASE SAVEPOINT s2")
    assert code_of(lambda: run(conn, "ROLLBACK TO SAVEPOINT s2")) == 1305
    run(conn, "RELEASE SAVEPOINT s1")
    run(conn, "COMMIT")
    assert run(conn, "SELECT id, v FROM t ORDER BY id") == ((1, 1), (2, 2))


def test_rolled_back_savepoint_work_is_not_recovered(server_factory):
    srv = server_factory("savepoint_crash")
    conn = srv.connect()
    run(conn, "CREATE DATABASE s")
    run(conn, "CREATE TABLE s.t (id INT PRIMARY KEY, v INT)")
    run(conn, "BEGIN")
    run(conn, "INSERT INTO s.t VALUES (1, 1)")
    run(conn, "SAVEPOINT a")
    run(conn, "INSERT INTO s.t VALUES (2, 2)")
    run(conn, "UPDATE s.t SET v = 100 WHERE id = 1")
    run(conn, "ROLLBACK TO a")
    run(conn, "INSERT INTO s.t VALUES (3, 3)")
    run(conn, "COMMIT")
    srv.restart(crash=True)
    assert run(srv.connect(), "SELECT id, v FROM s.t ORDER BY id") == ((1, 1), (3, 3))


def test_user_level_locks(connect):
    import threading
    import time
    a, b = connect(), connect()
    assert run(a, "SELECT GET_LOCK('mig', 0), GET_LOCK('MIG', 0)") == ((1, 1),)
    assert run(b, "SELECT GET_LOCK('mig', 0), IS_FREE_LOCK('mig')") == ((0, 0),)
    assert run(b, "SELECT IS_USED_LOCK('mig') = CONNECTION_ID()") == ((0,),)
    assert run(b, "SELECT RELEASE_LOCK('mig'), RELEASE_LOCK('nope')") == ((0, None),)
    out = {}

    def wait():
        t = time.monotonic()
        out["got"] = run(b, "SELECT GET_LOCK('mig', 10)")[0][0]
        out["seconds"] = time.monotonic() - t

    th = threading.Thread(target=wait)
    th.start()
    time.sleep(0.3)
    assert run(a, "SELECT RELEASE_LOCK('mig')") == ((1,),)
    time.sleep(0.2)
    assert th.is_alive(), "still held once"
    assert run(a, "SELECT RELEASE_ALL_LOCKS()") == ((1,),)
    th.join(10)
    assert out == {"got": 1, "seconds": out["seconds"]} and out["seconds"] < 5, out
    # A lock goes away with its connection.
    b.close()
    time.sleep(0.3)
    assert run(a, "SELECT GET_LOCK('mig', 1)") == ((1,),)
    assert code_of(lambda: run(a, "SELECT GET_LOCK('', 0)")) == 3057


@pytest.mark.parametrize("crash", [False, True], ids=["clean", "kill9"])
def test_temporary_tables_are_never_logged(server_factory, crash):
    """A transaction that writes a temporary and a permanent table: after a
    restart (clean: through a checkpoint; kill -9: through the log) the
    permanent rows are there and the temporary table is gone."""
    srv = server_factory(f"temp_{crash}")
    conn = srv.connect()
    run(conn, "CREATE DATABASE k")
    run(conn, "CREATE TABLE k.p (id INT PRIMARY KEY)")
    run(conn, "CREATE TEMPORARY TABLE k.tmp (id INT PRIMARY KEY, s TEXT)")
    run(conn, "BEGIN")
    run(conn, "INSERT INTO k.tmp VALUES (1, 'a'), (2, 'b')")
    run(conn, "INSERT INTO k.p SELECT id FROM k.tmp")
    run(conn, "UPDATE k.tmp SET s = 'c'")
    run(conn, "COMMIT")
    assert run(conn, "SELECT COUNT(*) FROM k.tmp") == ((2,),)
    other = srv.connect()
    assert code_of(lambda: run(other, "SELECT * FROM k.tmp")) == 1146
    srv.restart(crash=crash)
    conn = srv.connect()
    assert run(conn, "SELECT id FROM k.p ORDER BY id") == ((1,), (2,))
    assert code_of(lambda: run(conn, "SELECT * FROM k.tmp")) == 1146
