"""Issue 41, driver fidelity: the status counters drivers, pools and
monitoring read (SHOW STATUS, performance_schema.*_status) are counted,
not constants, and performance_schema.session_connect_attrs shows what
each client sent in its handshake."""

import mysql.connector
import pymysql
import socket
import time

from lockstep_server import HOST


def status(cur, scope):
    cur.execute(f"SHOW {scope} STATUS")
    return {k: v for k, v in cur.fetchall()}


def test_session_counters_count_statements(connect):
    c = connect()
    cur = c.cursor()
    cur.execute("CREATE TABLE s (id INT PRIMARY KEY, v INT)")
    before = status(cur, "SESSION")
    cur.execute("INSERT INTO s VALUES (1, 1), (2, 2)")
    cur.execute("UPDATE s SET v = 3 WHERE id = 1")
    cur.execute("DELETE FROM s WHERE id = 2")
    for _ in range(3):
        cur.execute("SELECT * FROM s")
    cur.execute("BEGIN")
    cur.execute("COMMIT")
    cur.execute("BEGIN")
    cur.execute("ROLLBACK")
    after = status(cur, "SESSION")

    def grew(name):
        return int(after[name]) - int(before[name])

    # The SHOW STATUS before counts as a question too.
    assert grew("Questions") == 11
    assert grew("Queries") == 11
    assert (grew("Com_insert"), grew("Com_update"), grew("Com_delete")) == (1, 1, 1)
    assert (grew("Com_select"), grew("Com_commit"), grew("Com_rollback")) == (3, 1, 1)
    assert grew("Bytes_received") > 100
    assert grew("Bytes_sent") > 100
    assert int(after["Threads_running"]) >= 1


def test_global_counters_add_up_sessions(connect, server):
    watcher = connect().cursor()
    before = status(watcher, "GLOBAL")
    other = connect()
    with other.cursor() as cur:
        for _ in range(5):
            cur.execute("SELECT 1")
    other.close()
    try:
        pymysql.connect(host=HOST, port=server.port, user="root", password="wrong")
    except pymysql.err.OperationalError as e:
        assert e.args[0] == 1045
    after = status(watcher, "GLOBAL")

    def grew(name):
        return int(after[name]) - int(before[name])

    # A closed session's counts stay in the totals.
    assert grew("Com_select") >= 5
    assert grew("Questions") >= 6
    assert grew("Connections") >= 2
    assert grew("Aborted_connects") >= 1
    assert int(after["Threads_connected"]) >= 1
    assert int(after["Uptime"]) >= 0
    watcher.execute("SELECT VARIABLE_VALUE FROM performance_schema.global_status "
                    "WHERE VARIABLE_NAME = 'Com_select'")
    assert int(watcher.fetchone()[0]) >= int(after["Com_select"])


def test_aborted_clients_counts_connections_gone_without_quit(connect, server):
    watcher = connect().cursor()

    def aborted():
        watcher.execute("SHOW GLOBAL STATUS LIKE 'Aborted_clients'")
        return int(watcher.fetchone()[1])

    def settled(want):
        # The server notices a dropped socket on its next read.
        deadline = time.monotonic() + 10
        while aborted() != want and time.monotonic() < deadline:
            time.sleep(0.05)
        return aborted()

    before = aborted()
    polite = connect()
    polite.cursor().execute("SELECT 1")
    polite.close()  # COM_QUIT
    rude = connect()
    rude.cursor().execute("SELECT 1")
    # The client dies without COM_QUIT (the socket's file object would keep
    # a plain close() from reaching the server).
    rude._sock.shutdown(socket.SHUT_RDWR)
    assert settled(before + 1) == before + 1
    killed = connect()
    killed_id = killed.thread_id()
    watcher.execute(f"KILL {killed_id}")
    assert settled(before + 2) == before + 2
    time.sleep(0.3)
    assert aborted() == before + 2, "a clean COM_QUIT is not counted"


def test_session_connect_attrs(server, db):
    c = mysql.connector.connect(host=HOST, port=server.port, user="root", password="",
                                database=db, use_pure=True,
                                conn_attrs={"program_name": "lockstep-test", "app": "x" * 40})
    try:
        cur = c.cursor()
        cur.execute("SELECT CONNECTION_ID()")
        (cid,) = cur.fetchone()
        cur.execute("SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_connect_attrs "
                    "WHERE PROCESSLIST_ID = %s ORDER BY ORDINAL_POSITION", (cid,))
        attrs = dict(cur.fetchall())
        assert attrs["program_name"] == "lockstep-test"
        assert attrs["app"] == "x" * 40
        assert attrs["_client_name"].startswith("mysql-connector-python")
        cur.execute("SELECT COUNT(*) FROM performance_schema.session_account_connect_attrs "
                    "WHERE PROCESSLIST_ID = %s", (cid,))
        assert cur.fetchone()[0] == len(attrs)
        cur.execute("SELECT ORDINAL_POSITION FROM performance_schema.session_connect_attrs "
                    "WHERE PROCESSLIST_ID = %s ORDER BY 1 LIMIT 1", (cid,))
        assert cur.fetchone() == (0,)
    finally:
        c.close()
    # PyMySQL sends its own attributes.
    p = pymysql.connect(host=HOST, port=server.port, user="root", password="",
                        program_name="pm")
    try:
        with p.cursor() as cur:
            cur.execute("SELECT ATTR_VALUE FROM performance_schema.session_connect_attrs "
                        "WHERE PROCESSLIST_ID = CONNECTION_ID() AND ATTR_NAME = 'program_name'")
            assert cur.fetchone() == ("pm",)
    finally:
        p.close()


def test_com_statistics_reads_the_counters(server, db):
    # COM_STATISTICS (mysqladmin status, Connector/Python's cmd_statistics)
    # reads the process list twice; it once held its lock across both.
    c = mysql.connector.connect(host=HOST, port=server.port, user="root", password="",
                                database=db, use_pure=True, connection_timeout=10)
    try:
        first = c.cmd_statistics()
        c.cmd_query("SELECT 1")
        c.get_rows()
        second = c.cmd_statistics()
        assert second["Questions"] > first["Questions"]
        assert second["Threads"] >= 1
        # The server still answers others.
        cur = c.cursor()
        cur.execute("SHOW GLOBAL STATUS LIKE 'Questions'")
        assert int(cur.fetchone()[1]) >= second["Questions"]
    finally:
        c.close()
