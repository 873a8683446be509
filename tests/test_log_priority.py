"""The log's writer, flusher and notifier run ahead of the connection threads
while every connection has a thread of its own, and like them once
connections share the pool (crates/server `prioritize_log`): a raised
priority helped group commit at 16 connections and hurt the two pool
workers at 64."""

import time

import pytest

from lockstep_server import TARGET, thread_files

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's log threads")

COMMIT_PATH = ("log-writer", "log-flusher", "log-notifier")
URGENT = -10


def log_thread_nices(pid):
    """Nice value of each log thread of the process, by thread name."""
    out = {}
    for name, stat in thread_files(pid, "stat"):
        if name.startswith("log-"):
            # Fields after the parenthesised name start at 3; nice is 19.
            out[name] = int(stat[stat.rindex(")") + 2:].split()[16])
    return out


def wait_for(pid, want, what):
    deadline = time.monotonic() + 10
    while True:
        nices = log_thread_nices(pid)
        if all(nices.get(n) == want for n in COMMIT_PATH):
            assert nices.get("log-preparer") == 0, nices  # background work
            return
        assert time.monotonic() < deadline, f"{what}: {nices}, want {want}"
        time.sleep(0.05)


def test_log_threads_lead_only_while_connections_have_threads(server_factory):
    s = server_factory("prio", args=["--dedicated-threads", "2"])
    pid = s.proc.pid
    # Raising a priority needs CAP_SYS_NICE (or RLIMIT_NICE); without it
    # the server says so once and everything stays at 0.
    time.sleep(0.5)
    permitted = "log threads at normal priority" not in s.log_tail()
    wait_for(pid, URGENT if permitted else 0, "few connections")
    conns = [s.connect() for _ in range(3)]  # more than dedicated threads
    try:
        for c in conns:
            with c.cursor() as cur:
                cur.execute("SELECT 1")
        wait_for(pid, 0, "connections in the pool")
    finally:
        for c in conns:
            c.close()
    wait_for(pid, URGENT if permitted else 0, "back to few connections")
