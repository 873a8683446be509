"""MySQL binlog stream (COM_BINLOG_DUMP_GTID / COM_BINLOG_DUMP) read by a real
CDC library, python-mysql-replication, installed at a pinned version when
missing (never vendored), and by mysqlbinlog when installed."""

import datetime
import decimal
import os
import shutil
import subprocess
import sys

import pytest

from lockstep_server import TARGET, Server, free_port

PINNED = "mysql-replication==1.0.17"

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's stream")


def _replication():
    try:
        import pymysqlreplication  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", PINNED],
                       check=True, timeout=300)
    import pymysqlreplication
    return pymysqlreplication


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("cdc"), name="cdc")
    s.port = int(os.environ.get("LOCKSTEP_TEST_PORT", "0")) or free_port()
    s.start()
    yield s
    s.cleanup()


def gtid_executed(server):
    return server.sql("SELECT @@gtid_executed")[0][0]


def read_events(server, since, **kw):
    """Every event after GTID set `since`, until the log's end."""
    rep = _replication()
    from pymysqlreplication import BinLogStreamReader
    settings = {"host": "127.0.0.1", "port": server.port, "user": "root", "passwd": ""}
    kw.setdefault("auto_position", since)
    stream = BinLogStreamReader(connection_settings=settings, server_id=99,
                                blocking=False, **kw)
    try:
        return list(stream)
    finally:
        stream.close()
    del rep


COLUMNS = """id INT PRIMARY KEY, big BIGINT UNSIGNED, amount DECIMAL(12,3),
    name VARCHAR(40), body TEXT, raw BLOB, at DATETIME(6), day DATE, d DOUBLE"""

ROWS = [
    (1, 18446744073709551615, decimal.Decimal("-12345.678"), "héllo", "t" * 300,
     b"\x00\x01\xff", datetime.datetime(2024, 2, 29, 23, 59, 58, 123456),
     datetime.date(1999, 12, 31), 2.5),
    (2, 0, decimal.Decimal("0.001"), "", "", b"", datetime.datetime(1970, 1, 1),
     datetime.date(2000, 1, 1), -1e-300),
    (3, None, None, None, None, None, None, None, None),
]


def row_tuple(values):
    cols = ["id", "big", "amount", "name", "body", "raw", "at", "day", "d"]
    return tuple(values[c] for c in cols)


def norm(t):
    return tuple(v.encode() if isinstance(v, str) and i == 5 else v for i, v in enumerate(t))


def test_row_events_match_what_was_written(node):
    _replication()
    from pymysqlreplication.event import GtidEvent, QueryEvent, XidEvent
    from pymysqlreplication.row_event import (DeleteRowsEvent, UpdateRowsEvent,
                                              WriteRowsEvent)
    node.sql("CREATE DATABASE IF NOT EXISTS cdc")
    since = gtid_executed(node)
    node.sql(f"CREATE TABLE cdc.t ({COLUMNS})")
    conn = node.connect(db="cdc")
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)", ROWS)
        cur.execute("UPDATE t SET name = 'x', big = 7 WHERE id = 1")
        cur.execute("DELETE FROM t WHERE id = 2")
        cur.execute("ALTER TABLE t ADD COLUMN extra INT")
        cur.execute("INSERT INTO t (id, extra) VALUES (4, 44)")
    conn.close()
    events = read_events(node, since)
    queries = [e.query for e in events if isinstance(e, QueryEvent)]
    assert any(q.startswith("CREATE TABLE `cdc`.`t`") for q in queries), queries
    assert any(q.startswith("ALTER TABLE `cdc`.`t`") and "ADD COLUMN `extra`" in q
               for q in queries), queries
    writes = [r["values"] for e in events if isinstance(e, WriteRowsEvent) for r in e.rows]
    assert [norm(row_tuple(v)) for v in writes[:3]] == [norm(r) for r in ROWS]
    assert writes[3]["extra"] == 44 and writes[3]["id"] == 4
    (upd,) = [r for e in events if isinstance(e, UpdateRowsEvent) for r in e.rows]
    assert norm(row_tuple(upd["before_values"])) == norm(ROWS[0])
    after = list(ROWS[0])
    after[1], after[3] = 7, "x"
    assert norm(row_tuple(upd["after_values"])) == norm(tuple(after))
    (dele,) = [r for e in events if isinstance(e, DeleteRowsEvent) for r in e.rows]
    assert norm(row_tuple(dele["values"])) == norm(ROWS[1])
    gtids = [e for e in events if isinstance(e, GtidEvent)]
    assert len(gtids) == 6 and all(g.sequence_number > g.last_committed for g in gtids)
    assert len([e for e in events if isinstance(e, XidEvent)]) == 4


def test_position_dump_and_refusals(node):
    _replication()
    from pymysqlreplication.event import FormatDescriptionEvent, RotateEvent
    from pymysqlreplication.row_event import WriteRowsEvent
    node.sql("CREATE DATABASE IF NOT EXISTS cdc")
    node.sql("CREATE TABLE IF NOT EXISTS cdc.p (id INT PRIMARY KEY)")
    node.sql("INSERT INTO cdc.p VALUES (1)")
    events = read_events(node, None, auto_position=None, log_file="binlog.000001",
                         log_pos=4, resume_stream=True)
    assert isinstance(events[0], RotateEvent) and events[0].next_binlog == "binlog.000001"
    assert any(isinstance(e, FormatDescriptionEvent) for e in events)
    assert any(isinstance(e, WriteRowsEvent) and e.table == "p" for e in events)
    # Resuming inside an event group is refused with 1236.
    import pymysql
    with pytest.raises(pymysql.err.OperationalError) as e:
        read_events(node, None, auto_position=None, log_file="binlog.000001",
                    log_pos=127, resume_stream=True)
    assert e.value.args[0] == 1236
    # Without REPLICATION SLAVE: 1227.
    node.sql("CREATE USER IF NOT EXISTS 'cdcweak'@'%'")
    from pymysqlreplication import BinLogStreamReader
    stream = BinLogStreamReader(
        connection_settings={"host": "127.0.0.1", "port": node.port, "user": "cdcweak",
                             "passwd": ""}, server_id=98, blocking=False, auto_position="")
    with pytest.raises(pymysql.err.MySQLError) as e:
        list(stream)
    stream.close()
    assert e.value.args[0] == 1227


@pytest.mark.skipif(not shutil.which("mysqlbinlog"), reason="no mysqlbinlog")
def test_mysqlbinlog_decodes_the_stream(node):
    node.sql("CREATE DATABASE IF NOT EXISTS cdc")
    node.sql("CREATE TABLE IF NOT EXISTS cdc.m (id INT PRIMARY KEY, v VARCHAR(10))")
    node.sql("INSERT INTO cdc.m VALUES (1, 'abc')")
    r = subprocess.run(["mysqlbinlog", "--no-defaults", "--read-from-remote-server",
                        "-h127.0.0.1", f"-P{node.port}", "-uroot", "-v",
                        "--to-last-log", "binlog.000001"],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    if "unrecognized MariaDB version" in out:
        # MariaDB's mysqlbinlog reads only 5.x/MariaDB sources, and refuses
        # any MySQL 8 server (version 8.0.x) before reading an event.
        pytest.skip("mysqlbinlog is MariaDB's, which refuses MySQL 8 sources")
    assert "CREATE TABLE `cdc`.`m`" in out, out[-3000:]
    assert "INSERT INTO `cdc`.`m`" in out, out[-3000:]


@pytest.mark.skipif(not shutil.which("sysbench"), reason="no sysbench")
def test_sysbench_write_only_replays_to_the_same_tables(node):
    """Row events of a short oltp_write_only run, applied to a dict per
    table, give exactly the rows SELECT returns."""
    _replication()
    from pymysqlreplication.row_event import (DeleteRowsEvent, UpdateRowsEvent,
                                              WriteRowsEvent)
    node.sql("DROP DATABASE IF EXISTS sbcdc")
    node.sql("CREATE DATABASE sbcdc")
    since = gtid_executed(node)
    base = ["sysbench", "oltp_write_only", "--mysql-host=127.0.0.1",
            f"--mysql-port={node.port}", "--mysql-user=root", "--mysql-password=",
            "--mysql-db=sbcdc", "--db-driver=mysql", "--mysql-ignore-errors=1213",
            "--tables=2", "--table-size=200", "--threads=2", "--time=3",
            "--events=0", "--report-interval=0", "--rand-seed=1"]
    for command in ("prepare", "run"):
        r = subprocess.run(base + [command], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    tables = {}
    for e in read_events(node, since):
        if not isinstance(e, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
            continue
        t = tables.setdefault(e.table, {})
        for row in e.rows:
            if isinstance(e, WriteRowsEvent):
                t[row["values"]["id"]] = row["values"]
            elif isinstance(e, UpdateRowsEvent):
                assert t.pop(row["before_values"]["id"]) == row["before_values"]
                t[row["after_values"]["id"]] = row["after_values"]
            else:
                assert t.pop(row["values"]["id"]) == row["values"]
    assert sorted(tables) == ["sbtest1", "sbtest2"]
    for name, rows in tables.items():
        conn = node.connect(db="sbcdc")
        with conn.cursor() as cur:
            cur.execute(f"SELECT id, k, c, pad FROM {name} ORDER BY id")
            want = [tuple(r) for r in cur.fetchall()]
        conn.close()
        got = [(r["id"], r["k"], r["c"], r["pad"]) for _, r in sorted(rows.items())]
        assert got == want


def test_heartbeat_follows_master_heartbeat_period(node):
    """An idle stream sends HEARTBEAT events at @master_heartbeat_period,
    with the file's name and current position."""
    _replication()
    import time
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import HeartbeatLogEvent
    settings = {"host": "127.0.0.1", "port": node.port, "user": "root", "passwd": "",
                "read_timeout": 20}
    stream = BinLogStreamReader(connection_settings=settings, server_id=97, blocking=True,
                                auto_position=gtid_executed(node), slave_heartbeat=0.3,
                                only_events=[HeartbeatLogEvent])
    try:
        t0 = time.monotonic()
        beats = [stream.fetchone() for _ in range(3)]
        took = time.monotonic() - t0
    finally:
        stream.close()
    assert all(b.ident == "binlog.000001" for b in beats), beats
    assert 0.6 <= took < 5, took


def test_show_master_status_position_resumes_the_stream(node):
    """SHOW MASTER STATUS gives binlog.000001 and the stream's byte offset:
    a dump from there carries exactly what came after, and the last event
    ends at the next SHOW MASTER STATUS position."""
    _replication()
    from pymysqlreplication.row_event import WriteRowsEvent
    node.sql("CREATE DATABASE IF NOT EXISTS cdc")
    node.sql("CREATE TABLE IF NOT EXISTS cdc.s (id INT PRIMARY KEY)")
    node.sql("INSERT INTO cdc.s VALUES (1)")
    file, pos = node.sql("SHOW MASTER STATUS")[0][:2]
    assert file == "binlog.000001"
    assert node.sql("SHOW BINARY LOGS")[0][:2] == (file, pos)
    node.sql("INSERT INTO cdc.s VALUES (2)")
    events = read_events(node, None, auto_position=None, log_file=file, log_pos=pos,
                         resume_stream=True)
    rows = [r["values"]["id"] for e in events if isinstance(e, WriteRowsEvent)
            for r in e.rows]
    assert rows == [2]
    assert events[-1].packet.log_pos == node.sql("SHOW MASTER STATUS")[0][1]


def test_histogram_statements_go_out_as_query_events(node):
    """MySQL logs ANALYZE TABLE ... UPDATE / DROP HISTOGRAM as the
    statement (a replica builds the histogram from its own rows): lockstep
    writes the same QUERY events from its logged histogram sets."""
    _replication()
    from pymysqlreplication.event import QueryEvent
    node.sql("CREATE DATABASE IF NOT EXISTS cdc")
    node.sql("CREATE TABLE cdc.hist (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
    node.sql("INSERT INTO cdc.hist VALUES (1, 1, 'x'), (2, 2, 'y'), (3, 2, NULL)")
    since = gtid_executed(node)
    node.sql("ANALYZE TABLE cdc.hist UPDATE HISTOGRAM ON a, b WITH 8 BUCKETS")
    node.sql("ANALYZE TABLE cdc.hist UPDATE HISTOGRAM ON b")
    node.sql("ANALYZE TABLE cdc.hist DROP HISTOGRAM ON a")
    events = read_events(node, since)
    queries = [(e.schema.decode() if isinstance(e.schema, bytes) else e.schema, e.query)
               for e in events if isinstance(e, QueryEvent)]
    t = "ANALYZE TABLE `cdc`.`hist`"
    assert queries == [
        ("cdc", f"{t} UPDATE HISTOGRAM ON `a`, `b` WITH 8 BUCKETS"),
        ("cdc", f"{t} UPDATE HISTOGRAM ON `b` WITH 100 BUCKETS"),
        ("cdc", f"{t} DROP HISTOGRAM ON `a`"),
    ]
    # The statements run as written (here on the source itself).
    node.sql(queries[0][1])
    assert len(node.sql("SELECT * FROM information_schema.COLUMN_STATISTICS "
                        "WHERE TABLE_NAME = 'hist'")) == 2


def test_stored_programs_go_out_as_query_events(node):
    """CREATE/DROP PROCEDURE, FUNCTION and TRIGGER are QUERY events with
    the definer, as MySQL logs them; a CHECK constraint adds none. Before,
    any stored program in the log broke SHOW BINARY LOGS and the stream."""
    _replication()
    from pymysqlreplication.event import QueryEvent
    node.sql("CREATE DATABASE IF NOT EXISTS cdc")
    node.sql("CREATE TABLE cdc.prog (id INT PRIMARY KEY, v INT CHECK (v >= 0))")
    since = gtid_executed(node)
    node.sql("CREATE PROCEDURE cdc.p(x INT) SELECT x + 1")
    node.sql("CREATE FUNCTION cdc.f(x INT) RETURNS INT DETERMINISTIC RETURN x * 2")
    node.sql("CREATE TRIGGER cdc.t BEFORE INSERT ON cdc.prog FOR EACH ROW SET NEW.v = NEW.v + 1")
    node.sql("ALTER TABLE cdc.prog ADD CONSTRAINT small CHECK (v < 1000)")
    node.sql("DROP TRIGGER cdc.t")
    node.sql("DROP FUNCTION cdc.f")
    node.sql("DROP PROCEDURE cdc.p")
    assert node.sql("SHOW BINARY LOGS")[0][0] == "binlog.000001"
    assert node.sql("SHOW MASTER STATUS")[0][0] == "binlog.000001"
    events = read_events(node, since)
    queries = [e.query for e in events if isinstance(e, QueryEvent) and e.query != "BEGIN"]
    creates = [q for q in queries if q.startswith("CREATE DEFINER=")]
    assert [q.split()[2] for q in creates] == ["PROCEDURE", "FUNCTION", "TRIGGER"], queries
    assert "DROP TRIGGER `cdc`.`t`" in queries and "DROP PROCEDURE `cdc`.`p`" in queries
    assert "DROP FUNCTION `cdc`.`f`" in queries


def test_tpcc_run_replays_to_the_same_rows(node):
    """Row events of a short run of our TPC-C driver: each row's first
    before-image, chained through every later image, ends at the row SELECT
    returns (or at no row after a delete); inserted rows of keyless tables
    are all there."""
    _replication()
    from pymysqlreplication.row_event import (DeleteRowsEvent, UpdateRowsEvent,
                                              WriteRowsEvent)
    from lockstep_server import BENCH, require_bench
    require_bench()

    def tpcc(*args):
        cmd = [BENCH, "tpcc", args[0], "--host=127.0.0.1", f"--port={node.port}",
               "--user=root", "--password=", "--database=tpcccdc", *args[1:]]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]

    tpcc("load", "--warehouses=1")
    since = gtid_executed(node)
    tpcc("run", "--terminals=4", "--duration=4", "--grace=60")
    keys = {}
    for t, c in node.sql("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema."
                         "KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'tpcccdc' AND "
                         "CONSTRAINT_NAME = 'PRIMARY' ORDER BY TABLE_NAME, ORDINAL_POSITION"):
        keys.setdefault(t, []).append(c)
    rows, keyless, changes = {}, {}, 0
    for e in read_events(node, since):
        if not isinstance(e, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
            continue
        assert e.schema == "tpcccdc"
        for row in e.rows:
            changes += 1
            if isinstance(e, UpdateRowsEvent):
                before, after = row["before_values"], row["after_values"]
            elif isinstance(e, WriteRowsEvent):
                before, after = None, row["values"]
            else:
                before, after = row["values"], None
            if e.table not in keys:
                assert isinstance(e, WriteRowsEvent), e.table
                keyless.setdefault(e.table, []).append(after)
                continue
            image = before or after
            k = (e.table, tuple(image[c] for c in keys[e.table]))
            if k in rows:
                assert rows[k] == before, (k, rows[k], before)
            rows[k] = after
    assert changes > 100
    conn = node.connect(db="tpcccdc")
    try:
        with conn.cursor() as cur:
            for (table, key), image in rows.items():
                where = " AND ".join(f"`{c}` = %s" for c in keys[table])
                cur.execute(f"SELECT * FROM {table} WHERE {where}", key)
                names = [d[0] for d in cur.description]
                got = [dict(zip(names, r)) for r in cur.fetchall()]
                assert got == ([image] if image is not None else []), (table, key)
            for table, images in keyless.items():
                cur.execute(f"SELECT COUNT(*) FROM {table}")
                assert cur.fetchone()[0] >= len(images), table
    finally:
        conn.close()
