"""Semisynchronous replication (AFTER_SYNC) end to end: a lockstep source
and replica on loopback, set up with SQL only.

Checked: a commit the source acknowledged is on the replica even when the
source is killed with -9 right after it (under a write load from several
clients); with the replica stopped a commit waits
rpl_semi_sync_source_timeout, then either goes on asynchronously (MySQL's
behaviour: Rpl_semi_sync_source_status OFF, an error-log line) or, with
lockstep_semi_sync_on_timeout=ERROR, fails with 1180 and later commits are
refused before they are logged, until the replica is back.
"""

import threading
import time

import pymysql
import pytest

from lockstep_server import TARGET
from test_replication import setup_source, start_replica, wait_caught_up

pytestmark = pytest.mark.skipif(TARGET != "lockstep",
                                reason="lockstep replicas (the lockstep-native stream)")


def status(server):
    return {k: v for k, v in server.sql("SHOW STATUS LIKE 'Rpl_semi_sync%'")}


def wait_for(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def semisync_pair(replication_servers, timeout_ms):
    source, replica = replication_servers(2)
    setup_source(source)
    source.sql("SET GLOBAL rpl_semi_sync_source_enabled = ON")
    source.sql(f"SET GLOBAL rpl_semi_sync_source_timeout = {timeout_ms}")
    replica.sql("SET GLOBAL rpl_semi_sync_replica_enabled = 1")
    source.sql("CREATE DATABASE semi")
    source.sql("CREATE TABLE semi.t (id INT PRIMARY KEY, who INT)")
    start_replica(replica, source)
    wait_for(lambda: status(source)["Rpl_semi_sync_source_clients"] == "1",
             "the replica never registered as a semisync client")
    wait_caught_up(source, [replica])
    wait_for(lambda: status(source)["Rpl_semi_sync_source_status"] == "ON",
             "semisync did not switch on once the replica caught up")
    return source, replica


def test_acknowledged_commits_survive_a_source_crash(replication_servers):
    source, replica = semisync_pair(replication_servers, 30000)
    assert status(replica)["Rpl_semi_sync_replica_status"] == "ON"
    acked = [[] for _ in range(4)]
    stop = threading.Event()

    def writer(n):
        c = source.connect()
        try:
            with c.cursor() as cur:
                i = 0
                while not stop.is_set():
                    key = n * 1_000_000 + i
                    cur.execute("INSERT INTO semi.t VALUES (%s, %s)", (key, n))
                    acked[n].append(key)  # the commit was acknowledged
                    i += 1
        except pymysql.err.Error:
            pass  # the source died under us: that commit is unknown
        finally:
            c.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    time.sleep(2)
    source.kill()
    stop.set()
    for t in threads:
        t.join(30)
    want = sorted(k for keys in acked for k in keys)
    assert len(want) > 20, "too few commits to tell anything"

    def replica_has_all():
        got = {r[0] for r in replica.sql("SELECT id FROM semi.t")}
        return all(k in got for k in want)

    wait_for(replica_has_all, "an acknowledged commit is missing on the replica")


def test_timeout_falls_back_to_async_then_recovers(replication_servers):
    source, replica = semisync_pair(replication_servers, 1000)
    source.sql("INSERT INTO semi.t VALUES (1, 0)")
    before = status(source)
    replica.sql("STOP REPLICA")
    wait_for(lambda: status(source)["Rpl_semi_sync_source_clients"] == "0",
             "the stopped replica still counts as a client")
    t0 = time.monotonic()
    source.sql("INSERT INTO semi.t VALUES (2, 0)")
    waited = time.monotonic() - t0
    assert 0.9 <= waited < 10, f"the commit waited {waited:.2f}s, not the 1 s timeout"
    st = status(source)
    assert st["Rpl_semi_sync_source_status"] == "OFF"
    assert int(st["Rpl_semi_sync_source_no_tx"]) == int(before["Rpl_semi_sync_source_no_tx"]) + 1
    # Switched off: the next commit does not wait.
    t0 = time.monotonic()
    source.sql("INSERT INTO semi.t VALUES (3, 0)")
    assert time.monotonic() - t0 < 0.9
    with open(source.log_path) as f:
        assert "semi-sync replication switched OFF" in f.read()
    replica.sql("START REPLICA")
    wait_for(lambda: status(source)["Rpl_semi_sync_source_status"] == "ON",
             "semisync did not switch back on")
    yes = int(status(source)["Rpl_semi_sync_source_yes_tx"])
    source.sql("INSERT INTO semi.t VALUES (4, 0)")
    assert int(status(source)["Rpl_semi_sync_source_yes_tx"]) == yes + 1
    wait_caught_up(source, [replica])
    assert list(replica.sql("SELECT id FROM semi.t ORDER BY id")) == [(1,), (2,), (3,), (4,)]


def test_timeout_can_refuse_commits(replication_servers):
    source, replica = semisync_pair(replication_servers, 1000)
    source.sql("SET GLOBAL lockstep_semi_sync_on_timeout = 'ERROR'")
    assert source.sql("SELECT @@lockstep_semi_sync_on_timeout")[0][0] == "ERROR"
    replica.sql("STOP REPLICA")
    wait_for(lambda: status(source)["Rpl_semi_sync_source_clients"] == "0",
             "the stopped replica still counts as a client")
    # Logged, waited for, not acknowledged: committed here, and the
    # client is told so.
    with pytest.raises(pymysql.err.Error) as e:
        source.sql("INSERT INTO semi.t VALUES (10, 0)")
    assert e.value.args[0] == 1180
    assert "committed on this server only" in str(e.value)
    assert status(source)["Rpl_semi_sync_source_status"] == "OFF"
    # Switched off: refused before it is logged, at once.
    t0 = time.monotonic()
    with pytest.raises(pymysql.err.Error) as e:
        source.sql("INSERT INTO semi.t VALUES (11, 0)")
    assert e.value.args[0] == 1180 and time.monotonic() - t0 < 0.9
    assert list(source.sql("SELECT id FROM semi.t ORDER BY id")) == [(10,)]
    replica.sql("START REPLICA")
    wait_for(lambda: status(source)["Rpl_semi_sync_source_status"] == "ON",
             "semisync did not switch back on")
    source.sql("INSERT INTO semi.t VALUES (12, 0)")
    wait_caught_up(source, [replica])
    assert list(replica.sql("SELECT id FROM semi.t ORDER BY id")) == [(10,), (12,)]


def test_settings_are_checked(replication_servers):
    (source,) = replication_servers(1)
    for stmt in ("SET GLOBAL rpl_semi_sync_source_wait_for_replica_count = 0",
                 "SET GLOBAL rpl_semi_sync_source_timeout = -1",
                 "SET GLOBAL lockstep_semi_sync_on_timeout = 'MAYBE'",
                 "SET GLOBAL rpl_semi_sync_source_enabled = 7"):
        with pytest.raises(pymysql.err.Error) as e:
            source.sql(stmt)
        assert e.value.args[0] == 1231, stmt
    with pytest.raises(pymysql.err.Error) as e:
        source.sql("SET SESSION rpl_semi_sync_source_enabled = 1")
    assert e.value.args[0] == 1229
    with pytest.raises(pymysql.err.Error) as e:
        source.sql("SET GLOBAL rpl_semi_sync_source_wait_point = 'AFTER_COMMIT'")
    assert "read only" in str(e.value)  # MySQL's 1238 (lockstep says 1227)
    assert source.sql("SELECT @@rpl_semi_sync_source_wait_point")[0][0] == "AFTER_SYNC"
    # Enabled with no replica: the first commit waits, then goes on.
    source.sql("SET GLOBAL rpl_semi_sync_source_timeout = 300")
    source.sql("SET GLOBAL rpl_semi_sync_source_enabled = 1")
    source.sql("CREATE DATABASE lone")
    assert status(source)["Rpl_semi_sync_source_status"] == "OFF"
    assert status(source)["Rpl_semi_sync_source_clients"] == "0"


def test_waits_for_the_configured_number_of_replicas(replication_servers):
    source, r1, r2 = replication_servers(3)
    setup_source(source)
    source.sql("SET GLOBAL rpl_semi_sync_source_enabled = ON")
    source.sql("SET GLOBAL rpl_semi_sync_source_timeout = 1000")
    source.sql("SET GLOBAL rpl_semi_sync_source_wait_for_replica_count = 2")
    source.sql("CREATE DATABASE semi")
    source.sql("CREATE TABLE semi.t (id INT PRIMARY KEY, who INT)")
    for r in (r1, r2):
        r.sql("SET GLOBAL rpl_semi_sync_replica_enabled = 1")
        start_replica(r, source)
    wait_for(lambda: status(source)["Rpl_semi_sync_source_clients"] == "2",
             "both replicas should be semisync clients")
    wait_caught_up(source, [r1, r2])
    wait_for(lambda: status(source)["Rpl_semi_sync_source_status"] == "ON",
             "semisync did not switch on once both replicas caught up")
    t0 = time.monotonic()
    source.sql("INSERT INTO semi.t VALUES (1, 0)")
    assert time.monotonic() - t0 < 0.9, "two replicas acknowledged"
    # One replica left: not enough, the commit waits out the timeout.
    r2.sql("STOP REPLICA")
    wait_for(lambda: status(source)["Rpl_semi_sync_source_clients"] == "1",
             "the stopped replica still counts as a client")
    t0 = time.monotonic()
    source.sql("INSERT INTO semi.t VALUES (2, 0)")
    assert time.monotonic() - t0 >= 0.9
    assert status(source)["Rpl_semi_sync_source_status"] == "OFF"
    # One is enough again: the remaining replica switches it back on.
    source.sql("SET GLOBAL rpl_semi_sync_source_wait_for_replica_count = 1")
    source.sql("INSERT INTO semi.t VALUES (3, 0)")
    wait_for(lambda: status(source)["Rpl_semi_sync_source_status"] == "ON",
             "semisync did not switch back on with one replica")
