"""Transaction throttling (book 8.3.2) must never hold the server still:
transactions left open by idle clients give their slot back, a gate whose
admitted transactions are all stuck lets waiters in anyway, and the counters
in SHOW STATUS say which escape was taken. Also: one data directory, one
server process."""

import subprocess
import threading
import time

import pytest

from lockstep_server import TARGET, Server, lockstep_binary

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's throttling gate")

LIMIT = 2


def status(server, name):
    rows = server.sql(f"SHOW GLOBAL STATUS LIKE '{name}'")
    return int(rows[0][1])


@pytest.fixture
def gated(server_factory):
    # Always the pool: the gate stands open while connections have threads
    # of their own.
    return server_factory("gated", args=["--throttle-limit", str(LIMIT), "--dedicated-threads", "0"])


def timed_select(server, sql="SELECT 1"):
    conn = server.connect()
    try:
        start = time.monotonic()
        with conn.cursor() as c:
            c.execute(sql)
            c.fetchall()
        return time.monotonic() - start
    finally:
        conn.close()


def test_idle_open_transactions_do_not_fill_the_gate(gated):
    gated.sql("CREATE DATABASE th")
    gated.sql("CREATE TABLE th.t (id INT PRIMARY KEY, v INT)")
    gated.sql("INSERT INTO th.t VALUES (1, 0), (2, 0), (3, 0), (4, 0)")
    # More clients than slots leave transactions open (autocommit=0 and no
    # COMMIT, a common application bug) and go quiet, some holding a row
    # lock and all holding a Repeatable Read view.
    idle = []
    for i in range(LIMIT + 2):
        conn = gated.connect(autocommit=False)
        with conn.cursor() as c:
            c.execute("SELECT COUNT(*) FROM th.t")
            c.fetchall()
            if i % 2 == 0:
                c.execute(f"UPDATE th.t SET v = v + 1 WHERE id = {i + 1}")
        idle.append(conn)
    try:
        # Everyone else is still served, well inside a second.
        for _ in range(5):
            assert timed_select(gated) < 1.0
        # The idle transactions carry on: their next statements re-enter
        # without queueing behind the new ones.
        for conn in idle:
            with conn.cursor() as c:
                c.execute("SELECT COUNT(*) FROM th.t")
                assert c.fetchall() == ((4,),)
            conn.commit()
        assert gated.sql("SELECT SUM(v) FROM th.t") == ((2,),)
        assert status(gated, "Lockstep_throttle_readmitted") >= 1
    finally:
        for conn in idle:
            conn.close()
    assert status(gated, "Lockstep_throttle_admitted") == 0


def test_stalled_gate_lets_waiters_in(gated):
    # Every slot is held by a statement that takes seconds (the client is
    # waiting for it, so nothing is parked)...
    sleepers = [threading.Thread(target=timed_select, args=(gated, "SELECT SLEEP(3)"))
                for _ in range(LIMIT)]
    for t in sleepers:
        t.start()
    time.sleep(0.5)
    try:
        assert status(gated, "Lockstep_throttle_admitted") >= LIMIT
        before = status(gated, "Lockstep_throttle_stalls_broken")
        # ...yet a newcomer gets in after the stall period, not after them.
        assert timed_select(gated) < 1.5
        assert status(gated, "Lockstep_throttle_stalls_broken") > before
    finally:
        for t in sleepers:
            t.join()


def test_lock_waiters_give_their_slot_back(gated):
    gated.sql("CREATE DATABASE tw")
    gated.sql("CREATE TABLE tw.t (id INT PRIMARY KEY, v INT)")
    gated.sql("INSERT INTO tw.t VALUES (1, 0)")
    # One transaction holds a row lock and keeps its slot busy...
    holder = gated.connect(autocommit=False)
    with holder.cursor() as c:
        c.execute("UPDATE tw.t SET v = v + 1 WHERE id = 1")
    sleeper = threading.Thread(target=lambda: holder.cursor().execute("SELECT SLEEP(2)"))
    sleeper.start()

    def bump():
        conn = gated.connect()
        try:
            with conn.cursor() as c:
                c.execute("UPDATE tw.t SET v = v + 1 WHERE id = 1")
        finally:
            conn.close()

    # ...while more transactions than there are slots queue for that lock.
    waiters = [threading.Thread(target=bump) for _ in range(LIMIT + 1)]
    try:
        time.sleep(0.3)
        before = status(gated, "Lockstep_throttle_stalls_broken")
        for t in waiters:
            t.start()
        time.sleep(0.5)
        # The waiters sleep outside the gate: only the holder is admitted,
        # and a newcomer gets in at once, not by breaking a stall.
        assert status(gated, "Lockstep_throttle_admitted") == 1
        assert timed_select(gated) < 0.5
        assert status(gated, "Lockstep_throttle_stalls_broken") == before
    finally:
        sleeper.join()
        holder.commit()
        for t in waiters:
            t.join()
        holder.close()
    assert gated.sql("SELECT v FROM tw.t") == ((LIMIT + 2,),)
    assert status(gated, "Lockstep_throttle_admitted") == 0


def wait_status(server, name, want, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        rows = server.sql(f"SHOW GLOBAL STATUS LIKE '{name}'")
        if rows[0][1] == want or time.monotonic() > deadline:
            return rows[0][1]
        time.sleep(0.05)


def test_gate_applies_only_while_connections_share_the_pool(server_factory):
    # Two dedicated threads: the gate stands open while connections have
    # one each, and holds at its limit once they share the pool.
    srv = server_factory("modes", args=["--throttle-limit", "1", "--dedicated-threads", "2"])
    assert wait_status(srv, "Lockstep_throttle_engaged", "OFF") == "OFF"
    crowd = [srv.connect() for _ in range(3)]
    try:
        assert wait_status(srv, "Lockstep_throttle_engaged", "ON") == "ON"
        # The limit itself is what was configured, and statements still run.
        assert srv.sql("SHOW GLOBAL VARIABLES LIKE 'lockstep_throttle_limit'")[0][1] == "1"
        for conn in crowd:
            with conn.cursor() as c:
                c.execute("SELECT 1")
                assert c.fetchall() == ((1,),)
    finally:
        for conn in crowd:
            conn.close()
    assert wait_status(srv, "Lockstep_throttle_engaged", "OFF") == "OFF"


def test_second_server_on_same_datadir_refuses(server_factory):
    first = server_factory("owner")
    second = Server(first.workdir, name="intruder")
    proc = subprocess.run(
        [lockstep_binary(), "serve", "--port", str(second.port), "--datadir", first.datadir],
        capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "in use by another lockstep process" in proc.stderr
    # The owner is untouched and keeps serving.
    assert first.sql("SELECT 1") == ((1,),)
