#!/usr/bin/env python3
"""Crash loop: a mixed write load, kill -9 at random moments, restart, verify.

Each cycle runs at the same time
* the bank-transfer workload (bank.py) with its client-side journal of
  acknowledged commits, and
* real `sysbench oltp_write_only` (the Debian binary and its Lua script),
then SIGKILLs the server after a random 0.3-2 s, restarts it on the same
datadir and checks: the bank total is unchanged, every acknowledged transfer
is present, nothing unacknowledged is half-applied (bank.verify), and every
sysbench table still holds table-size rows (oltp_write_only deletes and
re-inserts the same id inside one transaction, so the count is invariant
unless a transaction was half-applied). sysbench must still be running when
the kill comes and may only have failed with connection errors.

It records, per cycle, the log on disk before the restart (segment files and
their allocated bytes), the log the server replayed (from its "recovery:
replayed ..." line), the server's own open time ("data directory ... opened
in ...") and the time from spawn until it accepted connections, and prints a
recovery-time table by replayed log size.

Standalone (writes bench/results/crashloop-<date>-<rev>.md unless --results):

    python3 tests/crashloop.py --cycles 200

The pytest suite runs a short form (tests/test_crashloop.py).
"""

import argparse
import datetime
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bank import Bank  # noqa: E402
import logfiles  # noqa: E402
from lockstep_server import HOST, REPO, Server  # noqa: E402

# sysbench fails with these when the server dies under it.
CONNECTION_ERRORS = {2002, 2003, 2006, 2013, 2055}
MIB = 1 << 20
BUCKETS = [(0, 1), (1, 4), (4, 16), (16, 64), (64, 256), (256, None)]  # MiB replayed


def sysbench_cmd(server, command, threads, tables, table_size, seed):
    return ["sysbench", "oltp_write_only", f"--mysql-host={HOST}", f"--mysql-port={server.port}",
            "--mysql-user=root", "--mysql-password=", "--mysql-db=sbtest", "--db-driver=mysql",
            "--db-ps-mode=auto", "--mysql-ignore-errors=1213,1205", f"--tables={tables}",
            f"--table-size={table_size}", f"--threads={threads}", "--time=3600", "--events=0",
            "--report-interval=0", f"--rand-seed={seed}", command]


def parse_duration(text):
    """Rust's Debug form of a Duration ("812.3µs", "15.2ms", "1.5s") in seconds."""
    m = re.fullmatch(r"([\d.]+)(ns|µs|us|ms|s)", text)
    assert m, f"unparsable duration {text!r}"
    return float(m.group(1)) * {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


def recovery_facts(log):
    """(server open seconds, transactions replayed, bytes replayed) from the
    server log of one start."""
    m = re.search(r"data directory .* opened in (\S+)", log)
    assert m, f"no 'opened in' line:\n{log[-2000:]}"
    r = re.search(r"recovery: replayed (\d+) transactions \((\d+) bytes of log", log)
    assert r, f"no 'recovery: replayed' line:\n{log[-2000:]}"
    return parse_duration(m.group(1)), int(r.group(1)), int(r.group(2))


class CrashLoop:
    def __init__(self, workdir, cycles, bank_threads=8, sb_threads=4, sb_tables=4,
                 sb_table_size=1000, seed=1, out=print):
        self.server = Server(workdir, name="crashloop")
        self.cycles = cycles
        self.bank_threads = bank_threads
        self.sb_threads = sb_threads
        self.sb_tables = sb_tables
        self.sb_table_size = sb_table_size
        self.rnd = random.Random(seed)
        self.out = out
        self.rows = []

    def sysbench_prepare(self):
        self.server.sql("DROP DATABASE IF EXISTS sbtest")
        self.server.sql("CREATE DATABASE sbtest")
        r = subprocess.run(sysbench_cmd(self.server, "prepare", min(4, self.sb_tables),
                                        self.sb_tables, self.sb_table_size, 1),
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"sysbench prepare failed:\n{(r.stdout + r.stderr)[-3000:]}"

    def sysbench_state(self):
        """(row count per table, SUM(k) over all tables)."""
        counts, ksum = [], 0
        conn = self.server.connect(db="sbtest")
        try:
            with conn.cursor() as cur:
                for i in range(1, self.sb_tables + 1):
                    cur.execute(f"SELECT COUNT(*), COALESCE(SUM(k), 0) FROM sbtest{i}")
                    n, k = cur.fetchone()
                    counts.append(n)
                    ksum += int(k)
        finally:
            conn.close()
        return counts, ksum

    def run(self):
        server = self.server
        server.start()
        try:
            bank = Bank(server, seed=self.rnd.random())
            bank.create()
            self.sysbench_prepare()
            _, ksum = self.sysbench_state()
            for cycle in range(1, self.cycles + 1):
                ksum = self.cycle(cycle, bank, ksum)
        finally:
            server.cleanup()
        return self.rows

    def cycle(self, cycle, bank, ksum_before):
        server = self.server
        stop, workers, stats = bank.start_load(self.bank_threads)
        sb_out = os.path.join(server.workdir, "sysbench.out")
        with open(sb_out, "w") as f:
            sb = subprocess.Popen(sysbench_cmd(server, "run", self.sb_threads, self.sb_tables,
                                               self.sb_table_size, self.rnd.randrange(1 << 30)),
                                  stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        time.sleep(self.rnd.uniform(0.3, 2.0))
        sb_alive = sb.poll() is None
        server.kill()
        bank.join(stop, workers)
        try:
            sb.wait(60)
        except subprocess.TimeoutExpired:
            sb.kill()
            sb.wait(30)
        with open(sb_out) as f:
            sb_text = f.read()
        assert sb_alive, f"cycle {cycle}: sysbench ended before the kill:\n{sb_text[-3000:]}"
        codes = {int(c) for c in re.findall(r"error (\d+)", sb_text)}
        assert codes <= CONNECTION_ERRORS, \
            f"cycle {cycle}: sysbench failed with {codes - CONNECTION_ERRORS}:\n{sb_text[-3000:]}"
        assert not bank.worker_errors, bank.worker_errors

        files, on_disk = logfiles.log_bytes_on_disk(server.datadir)
        t0 = time.monotonic()
        server.start()
        accept = time.monotonic() - t0
        opened, txns, replayed = recovery_facts(server.log_since_start())

        transfers = bank.verify()
        counts, ksum = self.sysbench_state()
        assert counts == [self.sb_table_size] * self.sb_tables, \
            f"cycle {cycle}: sysbench row counts {counts}, expected {self.sb_table_size} each"
        row = dict(cycle=cycle, bank_commits=stats["commits"], transfers=transfers,
                   sb_progress=ksum != ksum_before, seg_files=files, log_on_disk=on_disk,
                   replayed=replayed, txns=txns, open_s=opened, accept_s=accept)
        self.rows.append(row)
        self.out(f"cycle {cycle:3}: bank commits {row['bank_commits']:5}  transfers {transfers:7}  "
                 f"sysbench {'moved' if row['sb_progress'] else 'idle '}  "
                 f"log {files} files / {on_disk / MIB:7.1f} MiB  replayed {txns:6} txns "
                 f"{replayed / MIB:7.1f} MiB  open {opened:6.3f}s  accept {accept:6.3f}s")
        return ksum


def table(rows):
    """Markdown table of recovery time by replayed log size."""
    lines = ["| log replayed | cycles | txns replayed (mean) | log files on disk (max MiB) "
             "| server open mean / max (s) | spawn to accepting mean / max (s) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for lo, hi in BUCKETS:
        sel = [r for r in rows if r["replayed"] >= lo * MIB and (hi is None or r["replayed"] < hi * MIB)]
        if not sel:
            continue
        name = f"{lo}-{hi} MiB" if hi else f">= {lo} MiB"
        mean = lambda k: sum(r[k] for r in sel) / len(sel)  # noqa: E731
        top = lambda k: max(r[k] for r in sel)  # noqa: E731
        lines.append(f"| {name} | {len(sel)} | {mean('txns'):.0f} | {top('log_on_disk') / MIB:.0f} "
                     f"| {mean('open_s'):.3f} / {top('open_s'):.3f} "
                     f"| {mean('accept_s'):.3f} / {top('accept_s'):.3f} |")
    return "\n".join(lines)


def summary(rows):
    return (f"{len(rows)} kill -9 cycles; {sum(r['bank_commits'] for r in rows)} bank transactions "
            f"acknowledged, {rows[-1]['transfers'] if rows else 0} transfers present at the end; "
            f"sysbench made progress in {sum(r['sb_progress'] for r in rows)} cycles; "
            f"every invariant held after every restart.")


def check_progress(rows):
    """The load must have done something, or the loop proves nothing."""
    n = len(rows)
    assert sum(r["bank_commits"] > 0 for r in rows) >= n // 2, "most cycles committed no transfer"
    assert sum(r["sb_progress"] for r in rows) >= n // 2, "sysbench made no progress in most cycles"


def git_rev():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, timeout=10).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--bank-threads", type=int, default=8)
    ap.add_argument("--sb-threads", type=int, default=8)
    ap.add_argument("--sb-tables", type=int, default=4)
    ap.add_argument("--sb-table-size", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", help="where the datadir goes (default: a temp dir, removed)")
    ap.add_argument("--results", help="markdown results file (default bench/results/crashloop-<date>-<rev>.md)")
    args = ap.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="lockstep-crashloop-")
    started = time.monotonic()
    loop = CrashLoop(workdir, args.cycles, args.bank_threads, args.sb_threads, args.sb_tables,
                     args.sb_table_size, args.seed, out=lambda s: print(s, flush=True))
    try:
        rows = loop.run()
        check_progress(rows)
    except BaseException:
        print(f"FAILED; data directory and server log kept in {workdir}", file=sys.stderr)
        raise
    text = table(rows)
    print(text)
    print(summary(rows))
    rev = git_rev()
    path = args.results or os.path.join(
        REPO, "bench", "results", f"crashloop-{datetime.date.today()}-{rev}.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"# Crash loop at {rev}, {datetime.date.today()}\n\n"
                f"`python3 tests/crashloop.py --cycles {args.cycles} --bank-threads {args.bank_threads} "
                f"--sb-threads {args.sb_threads} --sb-tables {args.sb_tables} "
                f"--sb-table-size {args.sb_table_size} --seed {args.seed}` "
                f"({(time.monotonic() - started) / 60:.0f} min, {os.cpu_count()} cores).\n\n"
                f"{summary(rows)}\n\nRecovery time by log replayed since the last checkpoint:\n\n"
                f"{text}\n\nPer cycle: cycle, bank commits, log files / MiB allocated on disk before "
                f"restart, transactions / MiB replayed, server open s, spawn-to-accept s\n\n```\n")
        for r in rows:
            f.write(f"{r['cycle']} {r['bank_commits']} {r['seg_files']}/{r['log_on_disk'] / MIB:.1f} "
                    f"{r['txns']}/{r['replayed'] / MIB:.2f} {r['open_s']:.3f} {r['accept_s']:.3f}\n")
        f.write("```\n")
    print(f"results: {path}")
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
