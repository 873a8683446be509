"""information_schema.INNODB_TRX: a session inside a transaction shows as
RUNNING with its rows and locks, one waiting for a row lock as LOCK WAIT
with its statement, and neither once it ends; without PROCESS a user sees
only its own sessions."""

import threading
import time


def trx_rows(conn):
    with conn.cursor() as c:
        c.execute("SELECT trx_mysql_thread_id, trx_state, trx_query, trx_rows_modified,"
                  " trx_rows_locked, trx_isolation_level, trx_started IS NOT NULL,"
                  " trx_wait_started IS NOT NULL FROM information_schema.INNODB_TRX"
                  " ORDER BY trx_mysql_thread_id")
        return c.fetchall()


def thread_id(conn):
    with conn.cursor() as c:
        c.execute("SELECT CONNECTION_ID()")
        return c.fetchone()[0]


def test_running_and_waiting_transactions_are_listed_until_they_end(connect, server, db):
    admin, a, b = connect(), connect(), connect()
    with admin.cursor() as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        c.execute("INSERT INTO t VALUES (1, 0), (2, 0)")
    ida, idb = thread_id(a), thread_id(b)
    assert trx_rows(admin) == ()
    with a.cursor() as c:
        c.execute("BEGIN")
        c.execute("UPDATE t SET v = 1 WHERE id = 1")
    (row,) = trx_rows(admin)
    assert row[:2] == (ida, "RUNNING") and row[3] == 1 and row[4] >= 1
    assert row[5] == "REPEATABLE READ" and row[6] == 1 and row[7] == 0

    def blocked():
        with b.cursor() as c:
            c.execute("BEGIN")
            c.execute("UPDATE t SET v = 2 WHERE id = 1")
            c.execute("COMMIT")

    waiter = threading.Thread(target=blocked)
    waiter.start()
    deadline = time.monotonic() + 10
    while True:
        rows = trx_rows(admin)
        if any(r[1] == "LOCK WAIT" for r in rows) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    by_id = {r[0]: r for r in rows}
    assert by_id[idb][1:3] == ("LOCK WAIT", "UPDATE t SET v = 2 WHERE id = 1")
    assert by_id[idb][7] == 1
    with a.cursor() as c:
        c.execute("COMMIT")
    waiter.join(10)
    assert not waiter.is_alive()
    assert trx_rows(admin) == ()


def test_a_user_without_process_sees_only_its_own_sessions(connect, server, db):
    server.sql("CREATE USER IF NOT EXISTS 'trx_probe'@'%'")
    server.sql(f"GRANT ALL ON `{db}`.* TO 'trx_probe'@'%'")
    try:
        root = connect()
        with root.cursor() as c:
            c.execute("CREATE TABLE t (id INT PRIMARY KEY)")
            c.execute("BEGIN")
            c.execute("INSERT INTO t VALUES (1)")
        probe = connect(user="trx_probe", password="")
        with probe.cursor() as c:
            c.execute("BEGIN")
            c.execute("INSERT INTO t VALUES (2)")
        rows = trx_rows(probe)
        assert [r[0] for r in rows] == [thread_id(probe)]
        assert len(trx_rows(root)) == 2
    finally:
        server.sql("DROP USER IF EXISTS 'trx_probe'@'%'")
