"""`lockstep binlog` on a real data directory: what it prints, and that DDL
is a barrier in the dependency order a parallel replica follows."""

import re

import pytest

from lockstep_server import TARGET
from logfiles import binlog_text

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's log")


def transactions(datadir):
    out = binlog_text(datadir)
    found = re.findall(r"#GTID \S+:(\d+)\s+last_committed=(\d+)\s+sequence_number=(\d+)", out)
    return [tuple(map(int, t)) for t in found], out


def test_ddl_is_a_barrier_for_parallel_replay(server_factory):
    srv = server_factory("binlog")
    conn = srv.connect()
    with conn.cursor() as c:
        c.execute("CREATE DATABASE shop")
        c.execute("CREATE TABLE shop.a (id INT PRIMARY KEY)")
        c.execute("INSERT INTO shop.a VALUES (1)")
        c.execute("CREATE TABLE shop.c (id INT PRIMARY KEY)")
        c.execute("INSERT INTO shop.c VALUES (1)")
        c.execute("INSERT INTO shop.a VALUES (2)")
    conn.close()
    srv.kill()  # keep the log as it is (a clean stop checkpoints)
    trx, text = transactions(srv.datadir)
    gnos = [g for g, _, _ in trx]
    assert len(trx) >= 6, text
    create_c = gnos[-3]
    assert "CREATE TABLE" in text
    # Each insert depends at least on the DDL before it.
    for gno, last, _ in trx:
        if gno > create_c:
            assert last >= create_c, (gno, last, text)
