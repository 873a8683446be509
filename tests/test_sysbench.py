"""Real sysbench (the Debian package and its bundled Lua scripts) against the server.

Each case runs prepare, run and cleanup of one script at one thread count
in one --db-ps-mode, and asserts: exit code 0 for all three steps, no error
other than deadlocks (1213, counted by sysbench as "ignored errors"), no
reconnects, progress made, and the row counts the script implies.

Matrix (LOCKSTEP_SUITE):
  quick (default, CI): every script at 16 threads in both ps modes, plus
      oltp_read_write and oltp_point_select at 1 and 256 threads in both
      modes: 30 runs; --tables=4 --table-size=2000 --time=4.
  full: every script x {1, 16, 256} threads x {auto, disable}: 66 runs;
      --tables=4 --table-size=100000 --time=30.
LOCKSTEP_SB_TABLE_SIZE and LOCKSTEP_SB_TIME override the sizes.

select_random_points and select_random_ranges only support --tables=1 (their
cleanup asserts it, and their run reads sbtest1 only), so they get one table.

--db-ps-mode=auto makes sysbench use server-side prepared statements
(COM_STMT_PREPARE/EXECUTE); =disable sends every statement as text.
"""

import json
import os
import re
import subprocess

import pytest

from lockstep_server import BENCH, HOST, QUICK, require_bench

SCRIPTS = ["oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select",
           "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete",
           "select_random_points", "select_random_ranges", "bulk_insert"]
PS_MODES = ["auto", "disable"]
TABLES = 4
TABLE_SIZE = int(os.environ.get("LOCKSTEP_SB_TABLE_SIZE", "2000" if QUICK else "100000"))
RUN_TIME = int(os.environ.get("LOCKSTEP_SB_TIME", "4" if QUICK else "30"))
# Scripts whose run keeps every table at exactly table-size rows.
SIZE_PRESERVING = {"oltp_read_write", "oltp_write_only", "oltp_read_only", "oltp_point_select",
                   "oltp_update_index", "oltp_update_non_index", "select_random_points",
                   "select_random_ranges"}


def matrix():
    cases = []
    for script in SCRIPTS:
        threads = [1, 16, 256] if not QUICK or script in (
            "oltp_read_write", "oltp_point_select") else [16]
        for t in threads:
            for ps in PS_MODES:
                cases.append(pytest.param(script, t, ps, id=f"{script}-{t}t-ps_{ps}"))
    return cases


def tables_for(script, threads):
    if script == "bulk_insert":
        return threads  # bulk_insert creates one table per thread
    if script.startswith("select_random_"):
        return 1
    return TABLES


def sysbench(server, script, command, threads, ps_mode, timeout):
    cmd = ["sysbench", script,
           f"--mysql-host={HOST}", f"--mysql-port={server.port}", "--mysql-user=root",
           "--mysql-password=", "--mysql-db=sbtest", "--db-driver=mysql",
           f"--db-ps-mode={ps_mode}", "--mysql-ignore-errors=1213",
           f"--tables={tables_for(script, threads)}", f"--table-size={TABLE_SIZE}", f"--threads={threads}",
           f"--time={RUN_TIME}", "--events=0", "--report-interval=0", "--rand-seed=1",
           command]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"sysbench {command} exited {r.returncode}:\n{out[-4000:]}"
    assert "FATAL" not in out, out[-4000:]
    return out


def stat(out, name):
    m = re.search(rf"^\s*{re.escape(name)}:\s+(\d+)", out, re.M)
    assert m, f"'{name}' missing from sysbench output:\n{out[-3000:]}"
    return int(m.group(1))


def counts(server, tables):
    return [server.sql(f"SELECT COUNT(*) FROM sbtest{i}", db="sbtest")[0][0]
            for i in range(1, tables + 1)]


@pytest.fixture
def sbtest(server):
    server.sql("DROP DATABASE IF EXISTS sbtest")
    server.sql("CREATE DATABASE sbtest")
    yield
    server.sql("DROP DATABASE IF EXISTS sbtest")


@pytest.mark.parametrize("script,threads,ps_mode", matrix())
def test_sysbench(server, sbtest, script, threads, ps_mode):
    """sysbench <script> prepare/run/cleanup completes with no errors but
    ignored deadlocks, and leaves the row counts the workload implies."""
    bulk = script == "bulk_insert"
    tables = tables_for(script, threads)
    # bulk_insert's prepare/cleanup handle one table per thread of the run.
    prep_threads = threads if bulk else min(threads, tables)
    step_timeout = RUN_TIME + 300

    sysbench(server, script, "prepare", prep_threads, ps_mode, step_timeout)
    before = counts(server, tables)
    assert before == [0 if bulk else TABLE_SIZE] * tables

    out = sysbench(server, script, "run", threads, ps_mode, step_timeout)
    events = stat(out, "total number of events")
    assert events > 0, "no progress"
    assert stat(out, "reconnects") == 0
    if not bulk:
        transactions = stat(out, "transactions")
        assert transactions == events
        assert stat(out, "queries") > 0

    after = counts(server, tables)
    if script in SIZE_PRESERVING:
        assert after == [TABLE_SIZE] * tables, "rows lost or duplicated"
    elif script == "oltp_insert":
        assert sum(after) == TABLE_SIZE * tables + events
    elif script == "oltp_delete":
        assert sum(after) <= TABLE_SIZE * tables
        assert sum(after) >= TABLE_SIZE * tables - events
    elif bulk:
        assert sum(after) == events, "bulk_insert rows != events"

    sysbench(server, script, "cleanup", prep_threads, ps_mode, step_timeout)
    tables_left = server.sql("SHOW TABLES", db="sbtest")
    assert tables_left == (), f"cleanup left {tables_left}"


# Statements per event of each test as sysbench counts them (oltp_common.lua
# defaults: BEGIN, 10 point selects, 4 ranges, 2 updates, a delete and an
# insert, COMMIT for read_write; write_only keeps the writes).
OLTP_STATEMENTS = {"point-select": 1, "read-write": 20, "write-only": 6}


@pytest.mark.parametrize("test", sorted(OLTP_STATEMENTS))
def test_oltp_driver(server, sbtest, test, tmp_path):
    """lockstep-workload oltp (sysbench's statements from a multiplexed client,
    used to tell the server's curve from sysbench's own cost) runs every
    statement of its test on sysbench's tables, with no error but retried
    deadlocks and lock timeouts, and keeps the row counts."""
    require_bench()
    sysbench(server, "oltp_read_write", "prepare", TABLES, "auto", 300)
    sum_k = [server.sql(f"SELECT SUM(k) FROM sbtest{i}", db="sbtest")[0][0]
             for i in range(1, TABLES + 1)]
    report = tmp_path / "oltp.json"
    cmd = [BENCH, "oltp", f"--host={HOST}", f"--port={server.port}", "--user=root",
           "--password=", "--database=sbtest", f"--test={test}", "--connections=64",
           f"--tables={TABLES}", f"--table-size={TABLE_SIZE}", "--duration=3", "--warmup=1",
           "--quiet", f"--json={report}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    rep = json.loads(report.read_text())
    assert rep["events"] > 0, "no progress"
    assert rep["errors"] == {}, rep["errors"]
    assert rep["unfinished_connections"] == 0
    # Statements of failed events count too, so the ratio is at most a little off.
    per_event = rep["qps"] / rep["tps"]
    assert abs(per_event - OLTP_STATEMENTS[test]) < 0.5, per_event
    assert counts(server, TABLES) == [TABLE_SIZE] * TABLES, "rows lost or duplicated"
    after = [server.sql(f"SELECT SUM(k) FROM sbtest{i}", db="sbtest")[0][0]
             for i in range(1, TABLES + 1)]
    # Index updates add 1 to k, delete+insert pick a new k: the writes show.
    assert (after != sum_k) == (test != "point-select"), (sum_k, after)
