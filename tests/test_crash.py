"""Crash recovery: kill -9 the server under a bank-transfer load, restart it
on the same datadir, and check that no acknowledged commit is lost and no
transaction is half-applied or resurrected (see bank.py for the invariants).

Note: SIGKILL kills the process, not the machine, so data written to the OS
page cache survives; this proves the server writes (and recovers) every
transaction before acknowledging it, not that it fsyncs.

LOCKSTEP_CRASH_CYCLES (default 20 quick, 50 full) kill cycles, each after a
random 0.3-2 s of load from LOCKSTEP_CRASH_THREADS (default 8 / 16) clients.
"""

import os
import random
import time

import pytest

from bank import Bank
from lockstep_server import QUICK

CYCLES = int(os.environ.get("LOCKSTEP_CRASH_CYCLES", "20" if QUICK else "50"))
THREADS = int(os.environ.get("LOCKSTEP_CRASH_THREADS", "8" if QUICK else "16"))


def test_kill9_under_load_loses_no_acknowledged_transfer(server_factory):
    """At least 20 kill -9 / restart cycles under concurrent transfers: after
    every restart the total balance is unchanged, every acknowledged transfer
    is present, no uncommitted one is, and balances match the transfers."""
    server = server_factory("crash")
    bank = Bank(server, seed=1)
    bank.create()
    rnd = random.Random(2)
    log = []
    for cycle in range(CYCLES):
        stop, workers, stats = bank.start_load(THREADS)
        time.sleep(rnd.uniform(0.3, 2.0))
        server.kill()
        bank.join(stop, workers)
        assert not bank.worker_errors, bank.worker_errors
        t0 = time.monotonic()
        server.start()
        recovery = time.monotonic() - t0
        present = bank.verify()
        log.append((cycle, stats["commits"], stats["retries"], present, round(recovery, 2)))
    print("\ncycle, commits, deadlock retries, transfers present, restart seconds")
    for row in log:
        print(*row)
    assert server.starts == CYCLES + 1
    assert sum(row[1] for row in log) >= CYCLES, "the load made almost no progress"
    assert sum(1 for row in log if row[1] > 0) >= CYCLES // 2, "most cycles committed nothing"


def test_sigterm_under_load_is_clean(server_factory):
    """SIGTERM during load shuts the server down cleanly (exit code 0) without
    losing acknowledged transfers; a second restart keeps them too."""
    server = server_factory("sigterm")
    bank = Bank(server, seed=3)
    bank.create()
    for _ in range(2):
        stop, workers, stats = bank.start_load(THREADS)
        time.sleep(1.0)
        code = server.stop()
        bank.join(stop, workers)
        assert code == 0, f"exit code {code} after SIGTERM\n{server.log_tail()}"
        assert not bank.worker_errors, bank.worker_errors
        assert stats["commits"] > 0
        server.start()
        bank.verify()
    server.kill()  # crash right after recovery, with no new load
    server.start()
    assert bank.verify() > 0


def test_bank_checker_detects_damage(server):
    """The crash checker itself fails on a half-applied transfer, a lost
    acknowledged one, a resurrected aborted one and a changed total, so the
    crash tests can fail."""
    bank = Bank(server, db="bank_selftest", seed=4)
    bank.create()
    stop, workers, stats = bank.start_load(4, max_txns=30)
    bank.join(stop, workers)
    assert not bank.worker_errors and stats["commits"] > 0
    bank.verify()
    c = server.connect(db=bank.db)
    cur = c.cursor()
    try:
        cur.execute("SELECT id, src, dst, amount FROM transfers ORDER BY id LIMIT 1")
        tid, src, dst, amt = cur.fetchone()
        # undo the money movement but keep the transfers row: half-applied
        cur.execute("UPDATE accounts SET balance = balance + %s WHERE id = %s", (amt, src))
        cur.execute("UPDATE accounts SET balance = balance - %s WHERE id = %s", (amt, dst))
        with pytest.raises(AssertionError, match="balances disagree"):
            bank.verify()
        # now consistent, but an acknowledged transfer is gone
        cur.execute("DELETE FROM transfers WHERE id = %s", (tid,))
        with pytest.raises(AssertionError, match="acknowledged transfers lost"):
            bank.verify()
        bank.acked.discard(tid)
        bank.aborted.add(tid)
        bank.verify()
        cur.execute("INSERT INTO transfers VALUES (%s, %s, %s, 0)", (tid, src, dst))
        with pytest.raises(AssertionError, match="never-committed"):
            bank.verify()
        cur.execute("DELETE FROM transfers WHERE id = %s", (tid,))
        cur.execute("UPDATE accounts SET balance = balance + 1 WHERE id = %s", (src,))
        with pytest.raises(AssertionError, match="total balance changed"):
            bank.verify()
    finally:
        cur.execute(f"DROP DATABASE {bank.db}")
        c.close()
