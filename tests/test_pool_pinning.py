"""The shared pool's workers run one to a CPU (crates/server `affinity.rs`):
left to the kernel here, both often sat on one core while the other idled.
Only the pool's first threads (its workers) are pinned, and
--pin-pool-workers OFF leaves every thread free."""

import os

import pytest

from lockstep_server import TARGET, thread_files

pytestmark = [
    pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's pool threads"),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs"),
]


def cpus_of(spec):
    """A Cpus_allowed_list value ("0-3,5") as a set of CPU numbers."""
    out = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def pool_thread_cpus(pid):
    """The allowed CPUs of each pool thread of the process."""
    out = []
    for name, status in thread_files(pid, "status"):
        if name.startswith("lockstep-pool"):
            line = next(l for l in status.splitlines() if l.startswith("Cpus_allowed_list:"))
            out.append(cpus_of(line.split(":", 1)[1].strip()))
    return out


def test_pool_workers_each_on_a_cpu_of_their_own(server_factory):
    s = server_factory("pinned", args=["--worker-threads", "2"])
    sets = pool_thread_cpus(s.proc.pid)
    pinned = [c for c in sets if len(c) == 1]
    assert len(pinned) == 2, sets
    assert pinned[0] != pinned[1], sets
    allowed = os.sched_getaffinity(s.proc.pid)
    assert all(c <= allowed for c in pinned), (sets, allowed)
    # The server still serves through the pool.
    with s.connect().cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


def test_pinning_can_be_turned_off(server_factory):
    s = server_factory("unpinned", args=["--worker-threads", "2", "--pin-pool-workers", "OFF"])
    allowed = os.sched_getaffinity(s.proc.pid)
    sets = pool_thread_cpus(s.proc.pid)
    assert sets and all(c == allowed for c in sets), (sets, allowed)
