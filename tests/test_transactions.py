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
