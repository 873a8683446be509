"""Debezium's MySQL connector (3.6, embedded engine; tests/cdc/debezium,
its jars fetched by Maven at run time) streams lockstep's binlog: it reads
the schema (snapshot.mode=no_data), follows the stream by GTID, and its
insert, update and delete events carry the values SELECT shows."""

import json
import os
import subprocess
import time

import pytest

from cdc_support import JAVA_TOOL, maven_classpath, node_fixture
from lockstep_server import REPO

pytestmark = JAVA_TOOL

SRC = os.path.join(REPO, "tests", "cdc", "debezium")

node = node_fixture("cdcdbz")


@pytest.fixture(scope="module")
def classpath(tmp_path_factory):
    return maven_classpath(tmp_path_factory.mktemp("dbz"), SRC,
                           [os.path.join("src", "CdcDebezium.java")], "Debezium")


def dumping(node):
    return [r for r in node.sql("SHOW PROCESSLIST") if str(r[4]).startswith("Binlog Dump")]


def test_debezium_streams_row_changes(node, classpath):
    node.sql("CREATE DATABASE dbz")
    node.sql("CREATE TABLE dbz.t (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT UNSIGNED, "
             "amount DECIMAL(10,2), doc JSON)")
    proc = subprocess.Popen(["java", "-cp", classpath, "CdcDebezium", str(node.port), "dbz",
                             "6", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 120
        while not dumping(node):
            assert proc.poll() is None, proc.stderr.read()[-3000:]
            assert time.monotonic() < deadline, "Debezium never started its binlog dump"
            time.sleep(0.2)
        conn = node.connect(db="dbz")
        with conn.cursor() as cur:
            cur.execute("INSERT INTO t VALUES (1, 'a', 18446744073709551615, -1.50, "
                        "'{\"k\": [1, \"x\"]}'), (2, NULL, 0, 0, NULL)")
            cur.execute("UPDATE t SET v = 'b', amount = 99.99 WHERE id = 1")
            cur.execute("INSERT INTO t VALUES (3, 'c', 3, 3, '[]')")
            cur.execute("DELETE FROM t WHERE id IN (2, 3)")
        conn.close()
        out, err = proc.communicate(timeout=150)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    events = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    assert [e["op"] for e in events] == ["c", "c", "u", "c", "d", "d"]
    assert all(e["source"]["db"] == "dbz" and e["source"]["table"] == "t" for e in events)
    assert all(e["source"]["gtid"] and e["source"]["file"] == "binlog.000001" for e in events)
    first = events[0]["after"]
    assert (first["id"], first["v"], first["amount"]) == (1, "a", "-1.50")
    # BIGINT UNSIGNED travels as a signed long unless configured otherwise.
    assert first["n"] in (18446744073709551615, -1)
    assert json.loads(first["doc"]) == {"k": [1, "x"]}
    upd = events[2]
    assert upd["before"] == first
    rows = {}
    for e in events:
        if e["before"]:
            rows.pop(e["before"]["id"])
        if e["after"]:
            rows[e["after"]["id"]] = e["after"]
    want = node.sql("SELECT id, v, CAST(amount AS CHAR), doc FROM dbz.t ORDER BY id")
    got = [(r["id"], r["v"], r["amount"], r["doc"]) for _, r in sorted(rows.items())]
    assert [(g[0], g[1], g[2]) for g in got] == [(w[0], w[1], w[2]) for w in want]
    assert [json.loads(g[3]) for g in got] == [json.loads(w[3]) for w in want]
