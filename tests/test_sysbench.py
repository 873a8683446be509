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

import os
import re
import subprocess

import pytest

from lockstep_server import HOST, QUICK

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
