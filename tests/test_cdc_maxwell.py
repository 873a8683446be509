"""Zendesk's Maxwell (1.22.6, the newest on Maven Central; tests/cdc/maxwell,
its jars fetched by Maven at run time) reads lockstep's binlog stream
unchanged: it keeps its schema store in lockstep's own `maxwell` database,
captures the schema from information_schema and SHOW statements, follows
the stream, parses the DDL in its QUERY events, and prints each row change
as JSON (--producer=stdout). Every insert, update and delete of a small
workload over several column types, with an ALTER TABLE in the middle,
is checked against the tables."""

import datetime
import decimal
import json
import os
import queue
import subprocess
import threading
import time
import zipfile

import pytest

from cdc_support import JAVA_TOOL, maven_classpath, node_fixture
from lockstep_server import REPO

pytestmark = JAVA_TOOL

SRC = os.path.join(REPO, "tests", "cdc", "maxwell")

node = node_fixture("cdcmaxwell")


@pytest.fixture(scope="module")
def classpath(tmp_path_factory):
    # Maxwell 1.22.6 names a Nashorn class that JDK 15+ lacks (see the stub).
    stub = os.path.join("src", "jdk", "nashorn", "api", "scripting", "ScriptObjectMirror.java")
    return maven_classpath(tmp_path_factory.mktemp("maxwell"), SRC, [stub], "Maxwell")


class Maxwell:
    """Maxwell as a child process; its stdout lines (JSON) on a queue."""

    def __init__(self, classpath, port, workdir):
        self.proc = subprocess.Popen(
            ["java", "-cp", classpath, "com.zendesk.maxwell.Maxwell",
             "--host=127.0.0.1", f"--port={port}", "--user=maxwell", "--password=mxpw",
             "--producer=stdout", "--output_ddl=true", "--replica_server_id=6379",
             "--log_level=info"],
            cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.err = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put),
                         daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.err.append),
                         daemon=True).start()

    @staticmethod
    def _pump(f, put):
        for line in f:
            put(line)

    def log(self):
        return "".join(self.err)[-4000:]

    def read(self, n, timeout=120):
        """The next `n` JSON records."""
        out, deadline = [], time.monotonic() + timeout
        while len(out) < n:
            assert self.proc.poll() is None, f"Maxwell exited: {self.log()}"
            left = deadline - time.monotonic()
            assert left > 0, f"{len(out)} of {n} records: {out}\n{self.log()}"
            try:
                line = self.lines.get(timeout=min(left, 1))
            except queue.Empty:
                continue
            if line.startswith("{"):
                out.append(json.loads(line, parse_float=decimal.Decimal))
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def dumping(node):
    return [r for r in node.sql("SHOW PROCESSLIST") if str(r[4]).startswith("Binlog Dump")]


COLUMNS = ("id INT PRIMARY KEY, v VARCHAR(20), n BIGINT UNSIGNED, amount DECIMAL(10,2), "
           "d DATE, ts DATETIME(3), f DOUBLE, e ENUM('red','green'), doc JSON")


def workload(conn):
    """(statement, Maxwell records it makes) in order; DDL in the middle."""
    steps = [
        ("INSERT INTO t VALUES (1, 'a', 18446744073709551615, -1.50, '2024-02-29', "
         "'2024-01-02 03:04:05.678', 2.5, 'red', '{\"k\": [1, \"x\"]}'), "
         "(2, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL)", 2),
        ("UPDATE t SET v = 'b', amount = 99.99, e = 'green' WHERE id = 1", 1),
        ("INSERT INTO t VALUES (3, 'c', 3, 3, '1999-12-31', '1970-01-01 00:00:01', -1e-300, "
         "'green', '[]')", 1),
        ("DELETE FROM t WHERE id = 2", 1),
        # A QUERY event Maxwell skips (not DDL it tracks).
        ("ANALYZE TABLE t UPDATE HISTOGRAM ON v, amount", 0),
        ("ALTER TABLE t ADD COLUMN extra VARCHAR(10)", 1),
        ("INSERT INTO t VALUES (4, 'd', 4, 4.04, NULL, NULL, 0, 'red', 'null', 'new')", 1),
        ("UPDATE t SET extra = CONCAT('x', id) WHERE id <= 3", 2),
        ("CREATE TABLE u (k VARCHAR(8) PRIMARY KEY, w INT)", 1),
        ("INSERT INTO u VALUES ('p', 1), ('q', NULL)", 2),
        ("DELETE FROM t WHERE id = 3", 1),
    ]
    with conn.cursor() as cur:
        for sql, _ in steps:
            cur.execute(sql)
    return steps


def plain(v):
    """A value as Maxwell's JSON would carry it."""
    if isinstance(v, datetime.datetime):
        s = v.strftime("%Y-%m-%d %H:%M:%S")
        return s + (f".{v.microsecond // 1000:03d}" if v.microsecond else "")
    if isinstance(v, (datetime.date, decimal.Decimal)):
        return str(v) if isinstance(v, datetime.date) else v
    return v


def own_schema_in_utf8mb4(node, classpath):
    """Maxwell's own tables, created before it starts from the SQL in its
    jar with `charset 'utf8'` made utf8mb4: MySQL 8.0.30+ (and lockstep)
    name utf8 columns utf8mb3, which Maxwell 1.22.6 does not know
    ("unhandled character set 'utf8mb3'"); it keeps existing tables."""
    lib = next(p for p in classpath.split(os.pathsep) if p.endswith("*"))[:-1]
    jar = os.path.join(lib, "maxwell-1.22.6.jar")
    node.sql("CREATE DATABASE maxwell")
    with zipfile.ZipFile(jar) as z:
        for name in ("schema", "schema_bootstrap", "schema_heartbeats"):
            text = z.read(f"sql/maxwell_{name}.sql").decode()
            for stmt in text.replace("charset 'utf8'", "charset 'utf8mb4'").split(";"):
                if stmt.strip():
                    node.sql(stmt, db="maxwell")


def test_maxwell_streams_row_changes(node, classpath, tmp_path):
    # The account Maxwell's documentation asks for.
    node.sql("CREATE USER maxwell IDENTIFIED WITH mysql_native_password BY 'mxpw'")
    node.sql("GRANT ALL ON maxwell.* TO maxwell")
    node.sql("GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO maxwell")
    node.sql("CREATE DATABASE mx")
    node.sql(f"CREATE TABLE mx.t ({COLUMNS})")
    own_schema_in_utf8mb4(node, classpath)
    mw = Maxwell(classpath, node.port, tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not dumping(node):
            assert mw.proc.poll() is None, mw.log()
            assert time.monotonic() < deadline, f"no binlog dump: {mw.log()}"
            time.sleep(0.2)
        conn = node.connect(db="mx")
        steps = workload(conn)
        records = mw.read(sum(n for _, n in steps))
        conn.close()
    finally:
        mw.stop()
    ours = [r for r in records if r.get("database") == "mx"]
    kinds = [r["type"] for r in ours]
    assert kinds == ["insert", "insert", "update", "insert", "delete", "table-alter",
                     "insert", "update", "update", "table-create", "insert", "insert",
                     "delete"], ours
    alter = ours[5]
    assert alter["def"]["columns"][-1]["name"] == "extra"
    # One xid per transaction; "commit" marks its last row.
    rows = [r for r in ours if r["type"] in ("insert", "update", "delete")]
    for i, r in enumerate(rows):
        last = i + 1 == len(rows) or rows[i + 1]["xid"] != r["xid"]
        assert r.get("commit", False) == last, rows
    assert len({r["xid"] for r in rows}) == 8
    upd = ours[2]
    assert upd["old"] == {"v": "a", "amount": decimal.Decimal("-1.50"), "e": "red"}
    # Replay the changes and compare with the tables.
    tables = {"t": {}, "u": {}}
    key = {"t": "id", "u": "k"}
    for r in ours:
        if r["type"] in ("insert", "update"):
            tables[r["table"]][r["data"][key[r["table"]]]] = r["data"]
        elif r["type"] == "delete":
            tables[r["table"]].pop(r["data"][key[r["table"]]])
    c = node.connect(db="mx")
    try:
        for name, rows in tables.items():
            with c.cursor() as cur:
                cur.execute(f"SELECT * FROM {name} ORDER BY 1")
                cols = [d[0] for d in cur.description]
                want = [dict(zip(cols, row)) for row in cur.fetchall()]
            got = [rows[k] for k in sorted(rows)]
            assert len(got) == len(want), (got, want)
            for g, w in zip(got, want):
                assert set(g) == set(w), (g, w)
                for col, wv in w.items():
                    gv = g[col]
                    if col == "doc" and wv is not None:
                        assert gv == json.loads(wv, parse_float=decimal.Decimal), col
                    elif isinstance(wv, float):
                        assert float(gv) == wv, col
                    else:
                        assert gv == plain(wv), (col, gv, wv)
    finally:
        c.close()
