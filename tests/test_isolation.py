"""Isolation levels, row locks, deadlocks and lock waits (InnoDB semantics).

Blocking statements run in worker threads; every wait is bounded by a future
timeout and by innodb_lock_wait_timeout on the session.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pymysql
import pytest

from lockstep_server import code_of

WAIT = 30  # upper bound for any single blocked operation in these tests


@pytest.fixture
def pool():
    ex = ThreadPoolExecutor(max_workers=16)
    yield ex
    ex.shutdown(wait=True, cancel_futures=True)


@pytest.fixture
def setup(cur):
    cur.execute("CREATE TABLE acct (id INT PRIMARY KEY, v INT NOT NULL)")
    cur.execute("INSERT INTO acct VALUES (1, 10), (2, 20), (3, 30), (4, 40)")
    return cur


def session(connect, isolation=None, lock_wait=20):
    """A connection with autocommit on, the given isolation level and lock wait timeout."""
    c = connect(read_timeout=WAIT + 30)
    with c.cursor() as cur:
        if isolation:
            cur.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
        cur.execute(f"SET SESSION innodb_lock_wait_timeout = {lock_wait}")
    return c


def q(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def v(conn, id_=1, suffix=""):
    return q(conn, f"SELECT v FROM acct WHERE id = %s {suffix}", (id_,))[0][0]


def timed(fn):
    t0 = time.monotonic()
    result = fn()
    return result, time.monotonic() - t0


def test_read_committed_sees_committed_changes(setup, connect):
    """A READ COMMITTED transaction sees other transactions' commits mid-way,
    never their uncommitted changes."""
    a, b = session(connect, "READ COMMITTED"), session(connect)
    q(a, "BEGIN")
    assert v(a) == 10
    q(b, "UPDATE acct SET v = 11 WHERE id = 1")
    assert v(a) == 11
    q(b, "BEGIN")
    q(b, "UPDATE acct SET v = 12 WHERE id = 1")
    q(b, "INSERT INTO acct VALUES (5, 50)")
    assert v(a) == 11  # no dirty read
    assert q(a, "SELECT COUNT(*) FROM acct")[0][0] == 4
    q(b, "COMMIT")
    assert v(a) == 12
    assert q(a, "SELECT COUNT(*) FROM acct")[0][0] == 5
    q(a, "COMMIT")


def test_repeatable_read_keeps_its_snapshot(setup, connect):
    """A REPEATABLE READ transaction keeps reading its snapshot (no
    non-repeatable reads, no phantoms for plain SELECT) until it ends."""
    a, b = session(connect, "REPEATABLE READ"), session(connect)
    q(a, "BEGIN")
    assert v(a) == 10
    q(b, "UPDATE acct SET v = 11 WHERE id = 1")
    q(b, "INSERT INTO acct VALUES (5, 50)")
    q(b, "DELETE FROM acct WHERE id = 4")
    assert v(a) == 10
    assert q(a, "SELECT id FROM acct ORDER BY id") == ((1,), (2,), (3,), (4,))
    assert q(a, "SELECT SUM(v) FROM acct")[0][0] == 100
    q(a, "COMMIT")
    assert v(a) == 11
    assert q(a, "SELECT id FROM acct ORDER BY id") == ((1,), (2,), (3,), (5,))


def test_repeatable_read_is_default_and_snapshot_starts_at_first_read(setup, connect):
    """The default level is REPEATABLE READ; the snapshot is taken at the first
    read (BEGIN alone does not), or at START TRANSACTION WITH CONSISTENT SNAPSHOT."""
    a, b = session(connect), session(connect)
    q(a, "BEGIN")
    q(b, "UPDATE acct SET v = 11 WHERE id = 1")
    assert v(a) == 11  # first read after the update
    q(b, "UPDATE acct SET v = 12 WHERE id = 1")
    assert v(a) == 11
    q(a, "COMMIT")
    q(a, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
    q(b, "UPDATE acct SET v = 13 WHERE id = 1")
    assert v(a) == 12
    q(a, "COMMIT")


def test_rr_writes_and_locking_reads_use_latest_version(setup, connect):
    """In REPEATABLE READ, UPDATE and SELECT ... FOR UPDATE act on the latest
    committed row, not the snapshot, so an increment is never lost."""
    a, b = session(connect, "REPEATABLE READ"), session(connect)
    q(a, "BEGIN")
    assert v(a) == 10
    q(b, "UPDATE acct SET v = 20 WHERE id = 1")
    assert v(a) == 10
    assert v(a, suffix="FOR UPDATE") == 20
    q(a, "UPDATE acct SET v = v + 1 WHERE id = 1")
    assert v(a) == 21  # own change visible
    q(a, "COMMIT")
    assert v(b) == 21


def test_plain_select_does_not_block_on_locked_row(setup, connect):
    """A consistent (non-locking) read of a row another transaction has
    updated but not committed returns the old version at once."""
    a, b = session(connect), session(connect)
    q(a, "BEGIN")
    q(a, "UPDATE acct SET v = 99 WHERE id = 1")
    value, elapsed = timed(lambda: v(b))
    assert value == 10 and elapsed < 1.0
    q(a, "ROLLBACK")
    assert v(b) == 10


@pytest.mark.parametrize("threads,per_thread", [(8, 25)])
def test_lost_update_impossible(setup, connect, pool, threads, per_thread):
    """Concurrent read-modify-write increments with SELECT ... FOR UPDATE (and
    with UPDATE v = v + 1) never lose an update."""
    conns = [session(connect) for _ in range(threads)]

    def worker(c, locking_read):
        done = 0
        for _ in range(per_thread * 20):  # bounded retries
            if done == per_thread:
                break
            try:
                q(c, "BEGIN")
                if locking_read:
                    cur = v(c, 1, "FOR UPDATE")
                    q(c, "UPDATE acct SET v = %s WHERE id = 1", (cur + 1,))
                else:
                    q(c, "UPDATE acct SET v = v + 1 WHERE id = 2")
                q(c, "COMMIT")
                done += 1
            except pymysql.err.OperationalError as e:
                if e.args[0] != 1213:
                    raise
                q(c, "ROLLBACK")
        return done

    futures = [pool.submit(worker, c, i % 2 == 0) for i, c in enumerate(conns)]
    counts = [f.result(timeout=120) for f in futures]
    assert counts == [per_thread] * threads
    check = session(connect)
    assert v(check, 1) == 10 + per_thread * ((threads + 1) // 2)
    assert v(check, 2) == 20 + per_thread * (threads // 2)


def test_for_update_blocks_second_writer(setup, connect, pool):
    """A row locked with SELECT ... FOR UPDATE makes a second writer of that row
    wait until the first commits; writers of other rows do not wait."""
    a, b, c = session(connect), session(connect), session(connect)
    q(a, "BEGIN")
    assert v(a, 1, "FOR UPDATE") == 10

    def second():
        q(b, "BEGIN")
        t0 = time.monotonic()
        q(b, "UPDATE acct SET v = v + 1 WHERE id = 1")
        waited = time.monotonic() - t0
        q(b, "COMMIT")
        return waited

    fut = pool.submit(second)
    _, other_row = timed(lambda: q(c, "UPDATE acct SET v = v + 1 WHERE id = 2"))
    assert other_row < 1.0, "row locks must not block writers of other rows"
    time.sleep(1.0)
    assert not fut.done(), "second writer did not wait for the row lock"
    q(a, "UPDATE acct SET v = 100 WHERE id = 1")
    q(a, "COMMIT")
    waited = fut.result(timeout=WAIT)
    assert waited >= 0.9
    assert v(c, 1) == 101  # applied on top of the first writer's commit


def test_share_locks_are_compatible_and_block_writers(setup, connect, pool):
    """Two LOCK IN SHARE MODE readers of a row coexist; a writer waits for both."""
    a, b, w = session(connect), session(connect), session(connect)
    q(a, "BEGIN")
    q(b, "BEGIN")
    assert v(a, 1, "LOCK IN SHARE MODE") == 10
    value, elapsed = timed(lambda: v(b, 1, "LOCK IN SHARE MODE"))
    assert value == 10 and elapsed < 1.0
    fut = pool.submit(lambda: q(w, "UPDATE acct SET v = 0 WHERE id = 1"))
    time.sleep(0.5)
    q(a, "COMMIT")
    time.sleep(0.5)
    assert not fut.done(), "writer must wait for the remaining share lock"
    q(b, "COMMIT")
    fut.result(timeout=WAIT)
    assert v(a) == 0


def test_duplicate_insert_waits_for_uncommitted_insert(setup, connect, pool):
    """An INSERT of a key another open transaction has inserted waits; it fails
    with 1062 if that transaction commits and succeeds if it rolls back."""
    a, b = session(connect), session(connect)
    for outcome, expect in (("COMMIT", 1062), ("ROLLBACK", None)):
        key = 50 if outcome == "COMMIT" else 60
        q(a, "BEGIN")
        q(a, "INSERT INTO acct VALUES (%s, 1)", (key,))
        fut = pool.submit(code_of, lambda: q(b, "INSERT INTO acct VALUES (%s, 2)", (key,)))
        time.sleep(0.7)
        assert not fut.done(), "second insert of the same key must wait"
        q(a, outcome)
        assert fut.result(timeout=WAIT) == expect
        assert q(a, "SELECT v FROM acct WHERE id = %s", (key,)) == ((1 if expect else 2,),)


def test_deadlock_exactly_one_victim(setup, connect, pool):
    """Two transactions locking two rows in opposite order: exactly one gets
    1213 and is rolled back entirely, the other proceeds and commits."""
    a, b = session(connect, lock_wait=WAIT), session(connect, lock_wait=WAIT)
    q(a, "BEGIN")
    q(b, "BEGIN")
    q(a, "UPDATE acct SET v = v + 1 WHERE id = 1")
    q(b, "UPDATE acct SET v = v + 100 WHERE id = 2")
    fa = pool.submit(code_of, lambda: q(a, "UPDATE acct SET v = v + 1 WHERE id = 2"))
    time.sleep(0.5)
    t0 = time.monotonic()
    fb = pool.submit(code_of, lambda: q(b, "UPDATE acct SET v = v + 100 WHERE id = 1"))
    codes = (fa.result(timeout=WAIT), fb.result(timeout=WAIT))
    detect = time.monotonic() - t0
    assert sorted(codes, key=str) == [1213, None], codes
    assert detect < 5, f"deadlock took {detect:.1f}s to detect (lock wait timeout is {WAIT}s)"
    winner, loser = (a, b) if codes[0] is None else (b, a)
    q(winner, "COMMIT")
    q(loser, "ROLLBACK")  # already rolled back by the server; harmless
    if winner is a:
        assert (v(a, 1), v(a, 2)) == (11, 21)
    else:
        assert (v(a, 1), v(a, 2)) == (110, 120)
    q(loser, "UPDATE acct SET v = v WHERE id = 1")  # the victim's session is usable


def test_lock_wait_timeout_1205(setup, connect, pool):
    """With innodb_lock_wait_timeout=1 a blocked statement fails with 1205 after
    about a second; only that statement is rolled back, not the transaction."""
    a = session(connect)
    b = session(connect, lock_wait=1)
    q(a, "BEGIN")
    q(a, "UPDATE acct SET v = 0 WHERE id = 1")
    q(b, "BEGIN")
    q(b, "UPDATE acct SET v = 22 WHERE id = 2")
    code, elapsed = timed(lambda: code_of(lambda: q(b, "UPDATE acct SET v = 11 WHERE id = 1")))
    assert code == 1205
    assert 0.8 <= elapsed < 5, elapsed
    q(b, "COMMIT")
    q(a, "ROLLBACK")
    assert (v(a, 1), v(a, 2)) == (10, 22)


def test_kill_query_interrupts_lock_wait(setup, connect, server, pool):
    """KILL QUERY ends a statement waiting for a row lock with 1317 and leaves
    the connection usable; KILL <id> ends the connection."""
    a, b, admin = session(connect), session(connect), session(connect)
    q(a, "BEGIN")
    q(a, "UPDATE acct SET v = 0 WHERE id = 1")
    b_id = q(b, "SELECT CONNECTION_ID()")[0][0]
    fut = pool.submit(code_of, lambda: q(b, "UPDATE acct SET v = 5 WHERE id = 1"))
    time.sleep(0.5)
    assert not fut.done()
    q(admin, f"KILL QUERY {b_id}")
    assert fut.result(timeout=WAIT) == 1317
    assert q(b, "SELECT 1") == ((1,),)
    q(a, "ROLLBACK")
    q(admin, f"KILL {b_id}")
    deadline = time.monotonic() + 10
    dead = False
    while time.monotonic() < deadline and not dead:
        try:
            q(b, "SELECT 1")
            time.sleep(0.1)
        except (pymysql.err.OperationalError, pymysql.err.InterfaceError):
            dead = True
    assert dead, "killed connection still answers"
    ids = [r[0] for r in q(admin, "SHOW PROCESSLIST")]
    assert b_id not in ids


def test_many_concurrent_transfers_keep_total(setup, connect, pool):
    """Random two-row transfers from 12 connections (with deadlocks retried)
    keep the sum of all rows constant."""
    conns = [session(connect) for _ in range(12)]
    errors = []
    stop = threading.Event()

    def worker(c, seed):
        import random
        rnd = random.Random(seed)
        n = 0
        for _ in range(200):
            if stop.is_set():
                break
            x, y = rnd.sample([1, 2, 3, 4], 2)
            try:
                q(c, "BEGIN")
                q(c, "UPDATE acct SET v = v - 1 WHERE id = %s", (x,))
                q(c, "UPDATE acct SET v = v + 1 WHERE id = %s", (y,))
                q(c, "COMMIT")
                n += 1
            except pymysql.err.OperationalError as e:
                if e.args[0] != 1213:
                    errors.append(e)
                    return n
                q(c, "ROLLBACK")
        return n

    futures = [pool.submit(worker, c, i) for i, c in enumerate(conns)]
    total = sum(f.result(timeout=180) for f in futures)
    assert not errors, errors
    assert total > 0
    assert q(conns[0], "SELECT SUM(v) FROM acct")[0][0] == 100


def test_range_lock_blocks_phantom_inserts(setup, connect):
    """Repeatable Read: a locking range read also locks the gaps (next-key
    locks), so another transaction cannot insert into the range or the gap
    after it until the reader ends; under Read Committed it can. Rows are
    1, 2, 3, 4 plus 10 and 20 added here."""
    setup.execute("INSERT INTO acct VALUES (10, 100), (20, 200)")
    reader = session(connect)
    writer = session(connect, lock_wait=1)
    q(reader, "BEGIN")
    assert len(q(reader, "SELECT id FROM acct WHERE id BETWEEN 3 AND 12 FOR UPDATE")) == 3
    # Inside the range, and in the gap (10, 20) the scan ended in: 1205.
    for new_id in (5, 11, 15):
        assert code_of(lambda: q(writer, "INSERT INTO acct VALUES (%s, 0)", (new_id,))) == 1205
    # Past the next key the table is open.
    assert code_of(lambda: q(writer, "INSERT INTO acct VALUES (25, 0)")) is None
    assert len(q(reader, "SELECT id FROM acct WHERE id BETWEEN 3 AND 12 FOR UPDATE")) == 3
    q(reader, "COMMIT")
    assert code_of(lambda: q(writer, "INSERT INTO acct VALUES (5, 0)")) is None

    rc = session(connect, isolation="READ COMMITTED")
    q(rc, "BEGIN")
    assert len(q(rc, "SELECT id FROM acct WHERE id BETWEEN 3 AND 12 FOR UPDATE")) == 4
    assert code_of(lambda: q(writer, "INSERT INTO acct VALUES (6, 0)")) is None
    q(rc, "COMMIT")


def test_missing_row_for_update_locks_its_gap(setup, connect):
    """SELECT ... FOR UPDATE of a missing key under Repeatable Read keeps it
    missing: the insert that would create it waits."""
    reader = session(connect)
    writer = session(connect, lock_wait=1)
    q(reader, "BEGIN")
    assert q(reader, "SELECT id FROM acct WHERE id = 7 FOR UPDATE") == ()
    assert code_of(lambda: q(writer, "INSERT INTO acct VALUES (7, 0)")) == 1205
    q(reader, "COMMIT")
    assert code_of(lambda: q(writer, "INSERT INTO acct VALUES (7, 0)")) is None
