"""Result sets sent in batches: a SELECT that reads one table in primary-key
order is streamed (a sort or a join from the sort's runs on disk), so its size is not bounded by query_memory_limit, it
sees one snapshot from its first row to its last, holds its metadata lock
until then, and can be killed midway."""

import os
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


def start_clients(read, n):
    """n threads running read(), started."""
    threads = [threading.Thread(target=read) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


def expected(ids):
    return [(i, f"{PAD}{i}", i % 7) for i in ids]


def test_streamed_results_are_not_bounded_by_the_statement_memory_cap(server, big):
    conn = server.connect(db=big)
    rows(conn, "SET SESSION query_memory_limit = 1000000")
    assert list(rows(conn, "SELECT * FROM t")) == expected(range(1, ROWS + 1))
    # A sort spills past sort_buffer_size and streams from its merge.
    by_pad = sorted(expected(range(1, ROWS + 1)), key=lambda r: r[1])
    assert list(rows(conn, "SELECT * FROM t ORDER BY pad")) == by_pad
    # What needs the whole set at once still meets the cap.
    with pytest.raises(pymysql.err.OperationalError) as e:
        rows(conn, "SELECT DISTINCT pad FROM t ORDER BY pad")
    assert e.value.args[0] in (1041, 1114)
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

    for t in start_clients(read, 6):
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


def rss_kib(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def tmp_files(server):
    tmp = os.path.join(server.datadir, "tmp")
    return os.listdir(tmp) if os.path.isdir(tmp) else []


@pytest.fixture
def wide(server, db):
    """100,000 rows with an unindexed text column in shuffled order (~30 MB)."""
    conn = server.connect(db=db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(300), k INT, KEY kk (k))")
        for start in range(0, 100_000, 5000):
            values = ",".join(f"({i}, '{(i * 7919) % 100_000:06d}{PAD[:250]}', {i % 100})"
                              for i in range(start, start + 5000))
            cur.execute(f"INSERT INTO w VALUES {values}")
    conn.close()
    return db


def test_a_sort_larger_than_memory_spills_and_streams_in_order(server, wide):
    conn = server.connect(db=wide, cursorclass=pymysql.cursors.SSCursor)
    rows(conn, "SET SESSION sort_buffer_size = 262144, query_memory_limit = 2000000")
    before = rss_kib(server)
    cur = conn.cursor()
    cur.execute("SELECT s, id FROM w ORDER BY s DESC, id")
    got, peak = [], 0
    for i, row in enumerate(cur):
        got.append(row[1])
        if i % 10_000 == 0:
            peak = max(peak, rss_kib(server))
    assert got == sorted(range(100_000), key=lambda i: -((i * 7919) % 100_000))
    # The server held a sort buffer and a batch, not the ~30 MB result.
    assert peak - before < 25_000, (before, peak)
    assert tmp_files(server) == []
    # LIMIT/OFFSET across batches, top-N, and FOUND_ROWS.
    page = rows(conn, "SELECT id FROM w ORDER BY s LIMIT 3 OFFSET 50000")
    want = sorted(range(100_000), key=lambda i: (i * 7919) % 100_000)[50_000:50_003]
    assert [r[0] for r in page] == want
    assert list(rows(conn, "SELECT FOUND_ROWS()")) == [(3,)]
    conn.close()


def test_a_large_join_streams_under_a_small_memory_cap(server, wide):
    conn = server.connect(db=wide)
    # The outer rows and one outer row's 1,000 matches are held; the
    # result, 70,050 rows (~6 MB as exec counts it), is not.
    rows(conn, "SET SESSION sort_buffer_size = 262144, query_memory_limit = 4000000")
    sql = "SELECT a.id, b.id FROM w a LEFT JOIN w b ON b.k = a.k + 50 WHERE a.id < 120"
    got = rows(conn, sql)
    want = [(a, b) for a in range(120) if a % 100 < 50 for b in range(a % 100 + 50, 100_000, 100)]
    want += [(a, None) for a in range(120) if a % 100 >= 50]
    assert sorted(got, key=str) == sorted(want, key=str)
    key = lambda r: (-(r[1] if r[1] is not None else -1), r[0])
    ordered = rows(conn, sql + " ORDER BY b.id DESC, a.id")
    assert list(ordered) == sorted(want, key=key)
    page = rows(conn, sql + " ORDER BY b.id DESC, a.id LIMIT 7 OFFSET 70040")
    assert list(page) == sorted(want, key=key)[70_040:70_047]
    assert tmp_files(server) == []
    conn.close()


def test_kill_query_stops_a_spilled_sort(server, wide):
    reader = server.connect(db=wide, cursorclass=pymysql.cursors.SSCursor)
    admin = server.connect()
    rows(reader, "SET SESSION sort_buffer_size = 262144")
    cur = reader.cursor()
    cur.execute("SELECT * FROM w ORDER BY s")
    cur.fetchone()
    rows(admin, f"KILL QUERY {reader.thread_id()}")
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.fetchall()
    assert e.value.args[0] == 1317
    assert tmp_files(server) == []
    assert list(rows(reader, "SELECT COUNT(*) FROM w")) == [(100_000,)]
    reader.close()
    admin.close()


def test_six_clients_sort_a_large_table_at_once_within_bounded_memory(server, wide):
    errors, peak = [], [rss_kib(server)]
    before = peak[0]

    def read():
        try:
            conn = server.connect(db=wide)
            rows(conn, "SET SESSION sort_buffer_size = 262144, query_memory_limit = 2000000")
            got = rows(conn, "SELECT id, s FROM w ORDER BY s")
            assert [r[1] for r in got] == sorted(r[1] for r in got)
            assert len(got) == 100_000
            conn.close()
        except Exception as e:  # reported below
            errors.append(e)

    threads = start_clients(read, 6)
    while any(t.is_alive() for t in threads):
        peak.append(rss_kib(server))
        time.sleep(0.05)
    assert not errors
    # pymysql reads each whole result client-side; the server holds a
    # sort buffer and a batch per client, not 6 x 30 MB.
    assert max(peak) - before < 60_000, (before, max(peak))


def test_a_prepared_statement_spills_and_streams_its_sort(server, wide):
    cnx = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                  password="", database=wide)
    plain = cnx.cursor()
    plain.execute("SET SESSION sort_buffer_size = 262144, query_memory_limit = 2000000")
    cur = cnx.cursor(prepared=True)
    cur.execute("SELECT id FROM w WHERE id >= ? ORDER BY s LIMIT ? OFFSET 10", (100, 90_000))
    got = [r[0] for r in cur.fetchall()]
    assert got == sorted(range(100, 100_000), key=lambda i: (i * 7919) % 100_000)[10:90_010]
    cnx.close()
    assert tmp_files(server) == []


def peak_during(server, run):
    """run()'s result and the server's RSS growth (KiB) while it ran."""
    before, peak, done = rss_kib(server), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(server))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = run()
    finally:
        done.set()
        sampler.join()
    return result, max(peak[0], rss_kib(server)) - before


def small_and_large(server, db, sql, small="sort_buffer_size = 32768, join_buffer_size = 4096"):
    """sql's rows with small buffers (and the RSS growth meanwhile), and with large ones."""
    conn = server.connect(db=db)
    rows(conn, f"SET SESSION {small}")
    got, growth = peak_during(server, lambda: list(rows(conn, sql)))
    rows(conn, "SET SESSION sort_buffer_size = 268435456, join_buffer_size = 268435456")
    large = list(rows(conn, sql))
    conn.close()
    assert got == large
    assert tmp_files(server) == []
    return got, growth


def test_a_three_table_join_streams_its_outer_side_in_batches(server, wide):
    # The outer side of the third table is the first join's 100,000 rows:
    # read a join_buffer_size batch at a time, it fits a 4 MB statement.
    sql = ("SELECT a.id, b.s, c.id FROM w a JOIN w b ON b.id = a.id "
           "JOIN w c ON c.id = b.id + 1 WHERE a.k < 90")
    capped = "sort_buffer_size = 262144, join_buffer_size = 262144, query_memory_limit = 4000000"
    got, growth = small_and_large(server, wide, sql, capped)
    s = lambda i: f"{(i * 7919) % 100_000:06d}{PAD[:250]}"
    assert sorted(got) == [(i, s(i), i + 1) for i in range(99_999) if i % 100 < 90]
    # The ~27 MB result went through the sort's runs, not memory.
    assert growth < 40_000, growth
    ordered, growth = small_and_large(server, wide, sql + " ORDER BY b.s DESC, a.id")
    assert [r[0] for r in ordered] == sorted((i for i in range(99_999) if i % 100 < 90),
                                             key=lambda i: -((i * 7919) % 100_000))


def test_a_join_sends_its_first_rows_before_the_last_are_made(server, big):
    # 400M joined rows: only a join produced as it is sent answers at once.
    reader = server.connect(db=big, cursorclass=pymysql.cursors.SSCursor)
    admin = server.connect()
    cur = reader.cursor()
    start = time.monotonic()
    cur.execute("SELECT x1.id, x2.id FROM t AS x1, t AS x2")
    first = [cur.fetchone() for _ in range(50_000)]
    assert time.monotonic() - start < 10
    assert len(set(first)) == 50_000
    # KILL QUERY lands while the client fetches, as with MySQL (Connector/
    # Python's Bug809033 and BugOra20653441 expect it there).
    rows(admin, f"KILL QUERY {reader.thread_id()}")
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.fetchall()
    assert e.value.args[0] == 1317
    assert list(rows(reader, "SELECT COUNT(*) FROM t")) == [(ROWS,)]
    reader.close()
    admin.close()


def test_a_streamed_join_pages_filters_and_counts_across_batches(server, wide):
    conn = server.connect(db=wide)
    rows(conn, "SET SESSION join_buffer_size = 4096, query_memory_limit = 4000000")
    sql = ("SELECT a.id, b.s FROM w a JOIN w b ON b.k = a.k "
           "WHERE a.id < 300 AND b.id % 1000 = a.id")
    full = list(rows(conn, sql))
    s = lambda i: f"{(i * 7919) % 100_000:06d}{PAD[:250]}"
    want = [(a, s(b)) for a in range(300) for b in range(a, 100_000, 1000) if b % 100 == a % 100]
    assert sorted(full) == sorted(want)
    # Pages of the join's own order, cut across batches.
    for limit, offset in [(5, 0), (7, 1234), (100_000, 2990), (0, 10)]:
        page = list(rows(conn, f"{sql} LIMIT {limit} OFFSET {offset}"))
        assert page == full[offset:offset + limit], (limit, offset)
    rows(conn, f"{sql} LIMIT 7 OFFSET 1234")
    assert list(rows(conn, "SELECT FOUND_ROWS()")) == [(7,)]
    conn.close()


def test_distinct_union_and_window_sorts_spill_with_the_same_result(server, wide):
    key = lambda i: (i * 7919) % 100_000
    # DISTINCT with ORDER BY: every row through a spilling sort, duplicates
    # dropped as the merge makes them neighbours.
    got, growth = small_and_large(server, wide, "SELECT DISTINCT k, s FROM w ORDER BY s DESC, k")
    assert [r[0] for r in got] == [i % 100 for i in sorted(range(100_000), key=lambda i: -key(i))]
    # The rows are the result (built whole, ~30 MB): the sort adds a buffer.
    assert growth < 120_000, growth
    got, _ = small_and_large(server, wide, "SELECT DISTINCT k FROM w ORDER BY k DESC")
    assert got == [(k,) for k in range(99, -1, -1)]
    # UNION ALL and UNION with ORDER BY.
    union = ("SELECT s, id FROM w WHERE id < 60000 UNION ALL "
             "SELECT s, id FROM w WHERE id >= 40000 ORDER BY s DESC, id")
    got, growth = small_and_large(server, wide, union)
    want = sorted(list(range(60_000)) + list(range(40_000, 100_000)), key=lambda i: (-key(i), i))
    assert [r[1] for r in got] == want
    assert growth < 120_000, growth
    got, _ = small_and_large(server, wide, "SELECT k FROM w UNION SELECT id FROM w WHERE id < 150 "
                                           "ORDER BY 1 DESC LIMIT 5 OFFSET 2")
    assert got == [(147,), (146,), (145,), (144,), (143,)]
    # A window's partitions and order.
    window = ("SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s), "
              "RANK() OVER (ORDER BY k) FROM w")
    got, growth = small_and_large(server, wide, window)
    by_k = {}
    for i in sorted(range(100_000), key=key):
        by_k.setdefault(i % 100, []).append(i)
    number = {i: n + 1 for ids in by_k.values() for n, i in enumerate(ids)}
    assert sorted(got) == [(i, number[i], (i % 100) * 1000 + 1) for i in range(100_000)]
    assert growth < 120_000, growth
