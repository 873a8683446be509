"""A second real CDC consumer: go-mysql's BinlogSyncer (tests/cdc/go, its
modules fetched by `go build` at run time) reads lockstep's MySQL binlog
stream with GTID auto-positioning and prints every row change as JSON.
Replaying those changes must give exactly the rows SELECT returns; with
-semisync it acknowledges the events, and commits wait for that."""

import json
import os
import random
import shutil
import subprocess
import time

import pytest

from cdc_support import node_fixture
from lockstep_server import REPO, TARGET

pytestmark = [
    pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's stream"),
    pytest.mark.skipif(not shutil.which("go"), reason="no go toolchain"),
]

SRC = os.path.join(REPO, "tests", "cdc", "go")

COLUMNS = [
    ("id", "INT PRIMARY KEY"), ("n", "INT"), ("big", "BIGINT UNSIGNED"),
    ("amount", "DECIMAL(10,4)"), ("d", "DOUBLE"), ("name", "VARCHAR(40)"),
    ("body", "TEXT"), ("raw", "BLOB"), ("day", "DATE"), ("at", "DATETIME(3)"),
    ("ts", "TIMESTAMP(6) NULL"), ("dur", "TIME(2)"), ("dur4", "TIME(4)"), ("y", "YEAR"), ("flags", "BIT(8)"),
    ("size", "ENUM('s','m','l')"), ("tags", "SET('x','y','z')"), ("doc", "JSON"),
]
NAMES = [n for n, _ in COLUMNS]
INTS = {"INT", "BIGINT", "YEAR"}


@pytest.fixture(scope="module")
def cdcdump(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gobin") / "cdcdump")
    env = dict(os.environ, GOFLAGS="-mod=mod")
    r = subprocess.run(["go", "build", "-o", out, "."], cwd=SRC, env=env,
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0 and "proxy" in r.stderr.lower():
        pytest.skip(f"go modules could not be fetched: {r.stderr[-500:]}")
    assert r.returncode == 0, r.stderr[-3000:]
    return out


node = node_fixture("cdcgo")


def random_row(rng, k):
    def maybe(v):
        return None if rng.random() < 0.15 else v
    return (k, maybe(rng.randint(-2**31, 2**31 - 1)), maybe(rng.choice([0, 2**64 - 1, rng.randint(0, 2**63)])),
            maybe(f"{rng.randint(-999999, 999999)}.{rng.randint(0, 9999):04d}"),
            maybe(rng.choice([0.5, -1e-7, 12345.678])), maybe(f"name-{rng.randint(0, 10**6)}"),
            maybe("b" * rng.randint(0, 500)), maybe(b"raw%d" % rng.randint(0, 99)),
            maybe(f"20{rng.randint(10, 30)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"),
            maybe(f"2024-05-06 07:08:09.{rng.randint(0, 999):03d}"),
            maybe(f"2020-01-02 03:04:05.{rng.randint(0, 999999):06d}"),
            maybe(f"{rng.choice(['-', ''])}{rng.randint(0, 838)}:{rng.randint(0, 59):02d}:00.{rng.randint(0, 99):02d}"),
            maybe(f"-{rng.randint(0, 838)}:00:{rng.randint(0, 59):02d}.{rng.randint(0, 9999):04d}"),
            maybe(rng.randint(1901, 2155)), maybe(rng.randint(0, 255)),
            maybe(rng.choice("sml")), maybe(rng.choice(["", "x", "x,z", "x,y,z"])),
            maybe(json.dumps({"k": k, "list": [1, "two", None, True], "f": 1.25})))


def workload(node, rng):
    node.sql("CREATE DATABASE IF NOT EXISTS cdcgo")
    cols = ", ".join(f"`{n}` {t}" for n, t in COLUMNS)
    node.sql(f"CREATE TABLE cdcgo.t ({cols})")
    conn = node.connect(db="cdcgo", autocommit=False)
    marks = ", ".join(["%s"] * len(COLUMNS))
    with conn.cursor() as cur:
        for batch in range(5):
            cur.executemany(f"INSERT INTO t VALUES ({marks})",
                            [random_row(rng, batch * 20 + i) for i in range(20)])
            conn.commit()
        for k in rng.sample(range(100), 30):
            row = random_row(rng, k)
            sets = ", ".join(f"`{n}` = %s" for n in NAMES[1:])
            cur.execute(f"UPDATE t SET {sets} WHERE id = %s", row[1:] + (k,))
        conn.commit()
        cur.execute("UPDATE t SET n = -1, doc = JSON_ARRAY(id) WHERE id % 7 = 0")
        cur.execute("DELETE FROM t WHERE id % 5 = 0")
        conn.commit()
    conn.close()


def run_dump(binary, port, since, *args, timeout=120):
    r = subprocess.run([binary, f"-port={port}", f"-since={since}", *args],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    return [x for x in lines if not x.get("summary")], [x for x in lines if x.get("summary")]


def same(name, got, text):
    """go-mysql's decoded value against SELECT's text (pymysql, no
    conversions: str, or bytes for binary columns)."""
    if text is None or got is None:
        return got is None and text is None
    kind = dict(COLUMNS)[name].split("(")[0].split(" ")[0]
    if kind == "JSON":
        return json.loads(got) == json.loads(text)
    if kind == "BIT":
        return got % 2**64 == int.from_bytes(text, "big")
    if kind == "BLOB":
        return got.encode() == text
    if kind == "DOUBLE":
        return float(got) == float(text)
    if kind in ("ENUM", "SET"):
        # go-mysql gives the member index / bitmask, as a MySQL source sends.
        members = dict(COLUMNS)[name].split("(")[1].rstrip(")").replace("'", "").split(",")
        if kind == "ENUM":
            return got == members.index(text) + 1
        return got == sum(1 << members.index(m) for m in text.split(",") if m)
    if kind in INTS:
        return int(got) == int(text)
    return str(got) == text


def replay(changes, table):
    rows = {}
    for c in changes:
        assert (c["schema"], c["table"]) == ("cdcgo", table), c
        if c["kind"] in ("update", "delete"):
            assert rows.pop(c["before"]["id"]) == c["before"], c
        if c["kind"] in ("insert", "update"):
            rows[c["after"]["id"]] = c["after"]
    return rows


@pytest.fixture(scope="module")
def since(node):
    """The GTID set before the workload, which has run."""
    before = node.sql("SELECT @@gtid_executed")[0][0]
    workload(node, random.Random(42))
    return before


def test_go_mysql_reads_every_row_change(node, cdcdump, since):
    changes, summary = run_dump(cdcdump, node.port, since)
    assert summary and summary[0]["gtid_set"] == node.sql("SELECT @@gtid_executed")[0][0]
    check_changes(node, changes)


def test_go_mysql_canal_reads_every_row_change(node, cdcdump, since):
    """canal also reads the tables' schema (SHOW FULL COLUMNS, SHOW INDEX)
    and stops once caught up with SHOW MASTER STATUS."""
    changes, _ = run_dump(cdcdump, node.port, since, "-canal")
    check_changes(node, changes)


def check_changes(node, changes):
    kinds = [c["kind"] for c in changes]
    assert kinds.count("insert") == 100 and kinds.count("delete") == 20
    assert len({c["gtid"] for c in changes}) == 7
    rows = replay(changes, "t")
    conn = node.connect(db="cdcgo", conv={})
    with conn.cursor() as cur:
        cur.execute(f"SELECT {', '.join('`%s`' % n for n in NAMES)} FROM t ORDER BY id")
        want = [dict(zip(NAMES, r)) for r in cur.fetchall()]
    conn.close()
    assert sorted(rows) == [int(w["id"]) for w in want]
    bad = [(w["id"], n, rows[int(w["id"])][n], w[n]) for w in want for n in NAMES
           if not same(n, rows[int(w["id"])][n], w[n])]
    assert not bad, bad[:10]


def status(node):
    return dict(node.sql("SHOW STATUS LIKE 'Rpl_semi_sync_source%'"))


def test_go_mysql_semisync_acknowledges(node, cdcdump):
    """go-mysql asks for semisync (@rpl_semi_sync_slave after checking
    rpl_semi_sync_master_enabled), gets events with the 0xef header and
    acknowledges each transaction; commits are acknowledged by it."""
    node.sql("CREATE DATABASE IF NOT EXISTS cdcsemi")
    node.sql("CREATE TABLE IF NOT EXISTS cdcsemi.s (id INT PRIMARY KEY, v INT)")
    node.sql("SET GLOBAL rpl_semi_sync_source_timeout = 5000")
    node.sql("SET GLOBAL rpl_semi_sync_source_enabled = 1")
    assert node.sql("SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'")[0][1] == "ON"
    try:
        since = node.sql("SELECT @@gtid_executed")[0][0]
        proc = subprocess.Popen([cdcdump, f"-port={node.port}", f"-since={since}", "-semisync",
                                 "-stay", "-timeout=60s"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while status(node)["Rpl_semi_sync_source_clients"] != "1":
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.05)
            before = status(node)
            t0 = time.monotonic()
            for k in range(20):
                node.sql(f"INSERT INTO cdcsemi.s VALUES ({k}, {k * k})")
            took = time.monotonic() - t0
            after = status(node)
        finally:
            proc.terminate()
            out, err = proc.communicate(timeout=30)
        assert after["Rpl_semi_sync_source_status"] == "ON"
        assert int(after["Rpl_semi_sync_source_yes_tx"]) - int(before["Rpl_semi_sync_source_yes_tx"]) == 20
        assert after["Rpl_semi_sync_source_no_tx"] == before["Rpl_semi_sync_source_no_tx"]
        assert took < 5, took  # no commit waited for the timeout
        ids = [json.loads(x)["after"]["id"] for x in out.splitlines() if '"insert"' in x]
        assert ids == list(range(20)), err[-2000:]
        # With the replica gone, a commit waits for the timeout and the
        # source switches to asynchronous (MySQL's behaviour).
        node.sql("SET GLOBAL rpl_semi_sync_source_timeout = 300")
        deadline = time.monotonic() + 10
        while status(node)["Rpl_semi_sync_source_clients"] != "0":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        node.sql("INSERT INTO cdcsemi.s VALUES (100, 0)")
        st = status(node)
        assert st["Rpl_semi_sync_source_status"] == "OFF"
        assert int(st["Rpl_semi_sync_source_no_tx"]) == int(after["Rpl_semi_sync_source_no_tx"]) + 1
    finally:
        node.sql("SET GLOBAL rpl_semi_sync_source_enabled = 0")
