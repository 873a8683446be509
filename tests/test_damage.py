"""Damaged files: the real server on a data directory whose log or newest
checkpoint was damaged behind its back (after kill -9).

* a torn or corrupt log tail: the node starts, has every transaction up to
  the last intact record, and logs exactly what it skipped;
* damage in the middle of the log (intact records after it): start-up stops
  with a clear message and a non-zero exit; the files are left untouched, so
  repairing the byte brings everything back;
* a damaged newest checkpoint: the previous checkpoint plus the log are used,
  and the server log names both files.
"""

import os
import re

import pytest

import logfiles
from lockstep_server import TARGET, ServerError

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's own files")

ROWS = 30


def load(server, first, last):
    """One autocommit INSERT (one log record) per row id in [first, last]."""
    c = server.connect()
    try:
        with c.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS dmg")
            cur.execute("CREATE TABLE IF NOT EXISTS dmg.t (id INT PRIMARY KEY, v VARCHAR(200))")
            for i in range(first, last + 1):
                cur.execute("INSERT INTO dmg.t VALUES (%s, %s)", (i, f"row {i} " + "x" * (i % 50)))
    finally:
        c.close()


def ids(server):
    return [r[0] for r in server.sql("SELECT id FROM dmg.t ORDER BY id")]


def crashed_with_rows(server_factory, name):
    """A server killed with -9 after ROWS single-row commits; returns it and
    the log records, the last ROWS of which are those inserts."""
    server = server_factory(name)
    load(server, 1, ROWS)
    server.kill()
    recs = [r for r in logfiles.records(server.datadir) if not r.pad]
    assert len(recs) >= ROWS + 2, "CREATE DATABASE, CREATE TABLE and one record per row"
    return server, recs


def recovery_line(server, what):
    log = server.log_since_start()
    lines = [ln for ln in log.splitlines() if what in ln]
    assert lines, f"no '{what}' line in the server log:\n{log[-3000:]}"
    return lines


def test_torn_tail_recovers_up_to_the_last_intact_record(server_factory):
    """The log cut in the middle of its last record (a crash during the
    write): the node starts with rows 1..ROWS-1 and logs the segment, offset
    and byte count it skipped; new commits then follow and survive."""
    server, recs = crashed_with_rows(server_factory, "torn")
    last = recs[-1]
    cut = last.offset + 8 + last.length // 2
    os.truncate(last.path, cut)
    server.start()
    assert ids(server) == list(range(1, ROWS))
    name = os.path.basename(last.path)
    [line] = recovery_line(server, "torn tail")
    assert re.search(
        rf"torn tail at segment {re.escape(name)} offset {last.offset} \(LSN {last.lsn}, "
        rf"record of {last.length} bytes runs past the end of the log\): "
        rf"skipped {8 + last.length // 2} bytes", line), line
    load(server, ROWS, ROWS + 5)
    server.kill()
    server.start()
    assert ids(server) == list(range(1, ROWS + 6))
    assert "torn tail" not in server.log_since_start()


def test_flipped_bytes_in_the_last_records_are_skipped(server_factory):
    """A flipped byte in each of the last three records: all three are
    dropped (nothing intact follows them), the rest is recovered, and the log
    line gives the byte count."""
    server, recs = crashed_with_rows(server_factory, "fliptail")
    for r in recs[-3:]:
        logfiles.flip_byte(r.path, r.offset + 8 + r.length // 2)
    server.start()
    assert ids(server) == list(range(1, ROWS - 2))
    [line] = recovery_line(server, "torn tail")
    skipped = sum(r.size for r in recs[-3:])
    assert re.search(rf"offset {recs[-3].offset} \(LSN {recs[-3].lsn}, checksum mismatch\): "
                     rf"skipped {skipped} bytes; recovered up to LSN {recs[-3].lsn}", line), line


def test_damage_in_the_middle_stops_startup(server_factory):
    """A flipped byte in a record followed by intact ones: the server refuses
    to start (exit code 1) and says where; nothing is truncated, so undoing
    the flip recovers every row."""
    server, recs = crashed_with_rows(server_factory, "middle")
    bad = recs[-ROWS + 9]  # the insert of row 10
    at = bad.offset + 8 + 3
    logfiles.flip_byte(bad.path, at)
    size = os.path.getsize(bad.path)
    for _ in range(2):
        with pytest.raises(ServerError, match="during start-up"):
            server.start()
        assert server.proc.returncode == 1
        log = server.log_since_start()
        name = os.path.basename(bad.path)
        assert re.search(rf"corrupt log record at LSN {bad.lsn} \(segment {re.escape(name)} "
                         rf"offset {bad.offset}, checksum mismatch\) followed by intact records",
                         log), log[-3000:]
        assert "damage in the middle of the log" in log
        assert os.path.getsize(bad.path) == size, "refusing must not truncate"
    logfiles.flip_byte(bad.path, at)
    server.start()
    assert ids(server) == list(range(1, ROWS + 1))


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_damaged_newest_checkpoint_falls_back_to_the_previous(server_factory, damage):
    """Two checkpoints (clean shutdowns) and more commits after them; the
    newest checkpoint damaged: the node names it, uses the previous one plus
    the log, and has every row. A leftover temp file of an unfinished
    checkpoint is removed and reported."""
    server = server_factory(f"ckpt-{damage}")
    load(server, 1, 10)
    assert server.stop() == 0
    server.start()
    load(server, 11, 20)
    assert server.stop() == 0
    ckpts = logfiles.checkpoints(server.datadir)
    assert len(ckpts) == 2, ckpts
    server.start()
    load(server, 21, 30)
    server.kill()
    newest, previous = ckpts[1], ckpts[0]
    if damage == "flip":
        logfiles.flip_byte(newest, os.path.getsize(newest) // 2)
        reason = "crc mismatch"
    else:
        os.truncate(newest, os.path.getsize(newest) - 10)
        reason = "truncated"
    stale = os.path.join(server.datadir, "checkpoint-00000000000000000001.snap.tmp")
    with open(stale, "wb") as f:
        f.write(b"half a checkpoint")
    server.start()
    assert ids(server) == list(range(1, 31))
    [line] = recovery_line(server, "damaged")
    assert line.endswith(f"recovery: {os.path.basename(newest)} damaged ({reason}), "
                         f"using {os.path.basename(previous)}"), line
    recovery_line(server, "removed incomplete checkpoint checkpoint-00000000000000000001.snap.tmp")
    assert not os.path.exists(stale)


def test_every_checkpoint_damaged_replays_the_whole_log(server_factory):
    """With both checkpoints unreadable and the log still complete from its
    start (nothing truncated yet), the node replays the log from LSN 0 and
    says so."""
    server = server_factory("ckpt-all")
    load(server, 1, 10)
    assert server.stop() == 0
    server.start()
    load(server, 11, 20)
    assert server.stop() == 0
    for p in logfiles.checkpoints(server.datadir):
        logfiles.flip_byte(p, os.path.getsize(p) // 2)
    server.start()
    assert ids(server) == list(range(1, 21))
    assert len(recovery_line(server, "no intact checkpoint left: replaying the log from its start")) == 2
