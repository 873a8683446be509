"""Disk full: the data directory on a 16 MiB tmpfs made by the test, with
1 MiB log segments, then filled up with a filler file.

Writes then fail with 1026 (HY000, errno 28) and are rolled back (not
visible, locks released) while reads keep working; a checkpoint that cannot
be written leaves the previous one intact; the node restarts on the full
disk; once the filler is deleted writes resume without a restart, and after
a kill -9 every acknowledged row is there and no refused one is.

Needs root (mount -t tmpfs); skipped with the reason otherwise.
"""

import errno
import os
import subprocess
import time

import pymysql
import pytest

import logfiles
from lockstep_server import TARGET, Server

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's log segments")

FS_SIZE = "16m"
SEGMENT = 1 << 20
ROW = 40_000  # bytes per row: a segment holds ~25 commits


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "fs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={FS_SIZE}", "tmpfs", str(mnt)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {r.stderr.strip()}")
    try:
        yield str(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


@pytest.fixture
def node(tmp_path, small_fs):
    """A lockstep server whose datadir is on the small filesystem (its log
    stays outside, in tmp_path)."""
    server = Server(tmp_path / "node", name="diskfull")
    server.datadir = os.path.join(small_fs, "data")
    server.extra_args = ["--log-segment-size", str(SEGMENT)]
    server.start()
    yield server
    server.cleanup()


def fill(path):
    """Write a file until the filesystem is full; returns its size."""
    chunk = b"\xa5" * 65536
    n = 0
    with open(path, "wb", buffering=0) as f:
        while True:
            try:
                n += f.write(chunk)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                break
        for size in (4096, 512, 1):  # the last partial pages too
            while True:
                try:
                    n += f.write(chunk[:size])
                except OSError:
                    break
    return n


def insert(conn, i):
    with conn.cursor() as cur:
        cur.execute("INSERT INTO full.t VALUES (%s, %s)", (i, f"{i:08d}" + "z" * ROW))


def expect_disk_full(e):
    assert e.args[0] == 1026, e
    assert "errno: 28 - No space left on device" in e.args[1], e


def rows(server):
    return server.sql("SELECT id, LENGTH(v), LEFT(v, 8) FROM full.t ORDER BY id")


def expected(acked):
    return tuple((i, ROW + 8, f"{i:08d}") for i in sorted(acked))


def test_disk_full_refuses_writes_keeps_reads_and_recovers(node, small_fs):
    server = node
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE full")
        cur.execute("CREATE TABLE full.t (id INT PRIMARY KEY, v LONGTEXT)")
    acked = set()
    for i in range(5):
        insert(conn, i)
        acked.add(i)
    conn.close()
    # A checkpoint to keep intact later (clean shutdown writes one).
    assert server.stop() == 0
    [ckpt] = logfiles.checkpoints(server.datadir)
    with open(ckpt, "rb") as f:
        ckpt_bytes = f.read()
    server.start()

    filler = os.path.join(small_fs, "filler")
    fill(filler)
    conn = server.connect()
    with conn.cursor() as cur:  # a lock left behind shows up as 1205, not a hang
        cur.execute("SET innodb_lock_wait_timeout = 2")
    refused = None
    for i in range(5, 200):
        try:
            insert(conn, i)
            acked.add(i)
        except pymysql.err.MySQLError as e:
            refused = (i, e)
            break
    assert refused, "the full disk never refused a write"
    expect_disk_full(refused[1])
    assert "refusing writes until space is available" in server.log_since_start()

    # Reads work; the refused row is not visible; more writes are refused
    # (not hung), in explicit transactions too, and their locks are released.
    assert rows(server) == expected(acked)
    for attempt in range(3):
        with pytest.raises(pymysql.err.MySQLError) as e:
            insert(conn, refused[0])
        expect_disk_full(e.value)
    other = server.connect(autocommit=False)
    with other.cursor() as cur:
        cur.execute("SET innodb_lock_wait_timeout = 2")
        cur.execute("UPDATE full.t SET v = 'changed' WHERE id = 0")
        with pytest.raises(pymysql.err.MySQLError) as e:
            other.commit()
        expect_disk_full(e.value)
    with conn.cursor() as cur:  # the row lock of the failed commit is gone
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute("UPDATE full.t SET v = 'again' WHERE id = 0")
        expect_disk_full(e.value)
    with conn.cursor() as cur:  # DDL is logged before it takes effect
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute("CREATE TABLE full.u (id INT PRIMARY KEY)")
        expect_disk_full(e.value)
    other.close()
    conn.close()
    assert rows(server) == expected(acked)
    assert server.sql("SHOW TABLES", db="full") == (("t",),)

    # A clean shutdown cannot write its checkpoint: the old one stays intact,
    # no temp file is left behind, and the restart (still full) recovers.
    assert server.stop() == 0
    log = server.log_since_start()
    assert "final checkpoint failed, the previous checkpoint and the log are kept: " \
        "No space left on device" in log, log[-3000:]
    assert logfiles.checkpoints(server.datadir) == [ckpt]
    with open(ckpt, "rb") as f:
        assert f.read() == ckpt_bytes, "the previous checkpoint changed"
    assert not [n for n in os.listdir(server.datadir) if n.endswith(".tmp")]
    server.start()
    assert rows(server) == expected(acked)
    with pytest.raises(pymysql.err.MySQLError) as e:
        insert(server.connect(), refused[0])
    expect_disk_full(e.value)

    # Space returns: writes resume without a restart (the preparer retries).
    os.remove(filler)
    conn = server.connect()
    deadline = time.monotonic() + 20
    while True:
        try:
            insert(conn, refused[0])
            acked.add(refused[0])
            break
        except pymysql.err.MySQLError as e:
            expect_disk_full(e)
            assert time.monotonic() < deadline, "writes did not resume after space returned"
            time.sleep(0.2)
    assert "accepting writes again" in server.log_since_start()
    for i in range(1000, 1060):  # more than two segments' worth
        insert(conn, i)
        acked.add(i)
    conn.close()
    server.kill()
    server.start()
    assert rows(server) == expected(acked)
