"""Result sets sent in batches: a SELECT that reads one table in primary-key
order is streamed, so its size is not bounded by query_memory_limit, it
sees one snapshot from its first row to its last, holds its metadata lock
until then, and can be killed midway."""

import threading
import time

import mysql.connector
import pymysql
import pytest

from lockstep_server import TARGET

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's limits and batches")

ROWS = 20_000
PAD = "x" * 900


@pytest.fixture
def big(server, db):
    """A table of ROWS rows, about 18 MB of results (more than socket buffers hold)."""
    conn = server.connect(db=db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(1000), g INT)")
        for start in range(1, ROWS + 1, 1000):
            values = ",".join(f"({i}, '{PAD}{i}', {i % 7})" for i in range(start, start + 1000))
            cur.execute(f"INSERT INTO t VALUES {values}")
    conn.close()
    return db


def rows(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def expected(ids):
    return [(i, f"{PAD}{i}", i % 7) for i in ids]


def test_streamed_results_are_not_bounded_by_the_statement_memory_cap(server, big):
    conn = server.connect(db=big)
    rows(conn, "SET SESSION query_memory_limit = 1000000")
    assert list(rows(conn, "SELECT * FROM t")) == expected(range(1, ROWS + 1))
    # A sort still needs the whole set, and the cap still holds for it.
    with pytest.raises(pymysql.err.OperationalError) as e:
        rows(conn, "SELECT * FROM t ORDER BY pad")
    assert e.value.args[0] == 1041
    conn.close()


def test_streamed_order_limit_offset_filter_and_found_rows(server, big):
    conn = server.connect(db=big)
    desc = rows(conn, "SELECT * FROM t ORDER BY id DESC")
    assert list(desc) == expected(range(ROWS, 0, -1))
    page = rows(conn, "SELECT * FROM t LIMIT 12000 OFFSET 2345")
    assert list(page) == expected(range(2346, 2346 + 12000))
    assert rows(conn, "SELECT FOUND_ROWS()") == ((12000,),)
    tail = rows(conn, "SELECT * FROM t ORDER BY id DESC LIMIT 15000 OFFSET 4000")
    assert list(tail) == expected(range(ROWS - 4000, ROWS - 19000, -1))
    some = rows(conn, "SELECT id, g FROM t WHERE id > 1000 AND g = 3")
    assert list(some) == [(i, 3) for i in range(1001, ROWS + 1) if i % 7 == 3]
    ranged = rows(conn, "SELECT id, pad FROM t WHERE id BETWEEN 5 AND 19000")
    assert [r[0] for r in ranged] == list(range(5, 19001))
    assert rows(conn, "SELECT * FROM t LIMIT 0") == ()
    assert rows(conn, "SELECT * FROM t WHERE id > 1000000") == ()
    conn.close()


def test_binary_protocol_and_results_charset(server, big):
    cnx = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                  password="", database=big)
    cur = cnx.cursor(prepared=True)
    cur.execute("SELECT id, pad FROM t WHERE id > ?", (10,))
    got = cur.fetchall()
    assert [r[0] for r in got] == list(range(11, ROWS + 1))
    assert got[-1][1] == f"{PAD}{ROWS}"
    cnx.close()
    conn = server.connect(db=big)
    rows(conn, "SET NAMES latin1")
    assert len(rows(conn, "SELECT * FROM t")) == ROWS
    conn.close()


def test_a_stream_sees_one_snapshot_and_holds_its_metadata_lock(server, big):
    reader = server.connect(db=big, cursorclass=pymysql.cursors.SSCursor)
    writer = server.connect(db=big)
    cur = reader.cursor()
    cur.execute("SELECT * FROM t")
    first = [cur.fetchone() for _ in range(100)]
    assert first == expected(range(1, 101))
    # Changes committed while the result is being read are not in it.
    rows(writer, "UPDATE t SET pad = 'changed' WHERE id > 15000")
    rows(writer, "DELETE FROM t WHERE id > 19000")
    # DDL waits for the statement that is still sending rows.
    rows(writer, "SET SESSION lock_wait_timeout = 1")
    with pytest.raises(pymysql.err.OperationalError) as e:
        rows(writer, "ALTER TABLE t ADD COLUMN extra INT")
    assert e.value.args[0] == 1205
    rest = cur.fetchall()
    assert first + list(rest) == expected(range(1, ROWS + 1))
    # With the result read to its end the statement is over.
    rows(writer, "ALTER TABLE t ADD COLUMN extra INT")
    assert list(rows(reader, "SELECT COUNT(*) FROM t")) == [(19000,)]
    reader.close()
    writer.close()


def test_kill_query_ends_a_stream_midway(server, big):
    reader = server.connect(db=big, cursorclass=pymysql.cursors.SSCursor)
    admin = server.connect()
    reader_id = reader.thread_id()
    cur = reader.cursor()
    cur.execute("SELECT * FROM t")
    assert cur.fetchone() == expected([1])[0]
    rows(admin, f"KILL QUERY {reader_id}")
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.fetchall()
    assert e.value.args[0] == 1317
    # The connection goes on; the killed statement ended.
    assert list(rows(reader, "SELECT COUNT(*) FROM t")) == [(ROWS,)]
    reader.close()
    admin.close()


def test_a_client_that_leaves_midway_ends_its_statement(server, big):
    reader = server.connect(db=big, cursorclass=pymysql.cursors.SSCursor)
    cur = reader.cursor()
    cur.execute("SELECT * FROM t")
    cur.fetchone()
    reader.close()
    # Its metadata lock is released: DDL goes ahead within the timeout.
    writer = server.connect(db=big)
    rows(writer, "SET SESSION lock_wait_timeout = 5")
    deadline = time.monotonic() + 10
    while True:
        try:
            rows(writer, "ALTER TABLE t ADD COLUMN extra INT")
            break
        except pymysql.err.OperationalError:
            assert time.monotonic() < deadline, "the abandoned stream kept its lock"
    writer.close()


def test_many_clients_stream_the_same_table_at_once(server, big):
    errors = []

    def read():
        try:
            conn = server.connect(db=big)
            rows(conn, "SET SESSION query_memory_limit = 1000000")
            assert len(rows(conn, "SELECT * FROM t")) == ROWS
            conn.close()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=read) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors


def test_a_secondary_index_scan_streams_one_snapshot_in_index_order(server, big):
    rows(server.connect(db=big), "CREATE INDEX kg ON t (g)")
    reader = server.connect(db=big, cursorclass=pymysql.cursors.SSCursor)
    writer = server.connect(db=big)
    # Past the statement's memory cap: only a stream can send it.
    rows(reader, "SET SESSION query_memory_limit = 4000000")
    cur = reader.cursor()
    cur.execute("SELECT * FROM t FORCE INDEX (kg) WHERE g >= 0 ORDER BY g")
    first = [cur.fetchone() for _ in range(100)]
    # Rows move between keys and vanish while the result is being read;
    # the stream resumes past (key, primary key) in its own snapshot.
    rows(writer, "UPDATE t SET g = 6 - g WHERE id % 3 = 0")
    rows(writer, "DELETE FROM t WHERE id % 11 = 0")
    want = sorted(expected(range(1, ROWS + 1)), key=lambda r: (r[2], r[0]))
    assert first + list(cur.fetchall()) == want
    reader.close()
    writer.close()
