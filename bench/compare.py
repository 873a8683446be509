#!/usr/bin/env python3
"""Side-by-side benchmark of lockstep and MariaDB on this machine, in one run.

Started by bench/compare.sh (which installs sysbench/MariaDB if missing and
builds the binaries). Starts a private lockstep and a private MariaDB with
the same durability and isolation, loads the same data into both, and runs
interleaved sweeps (for every point: lockstep, then MariaDB):

  sysbench oltp_point_select, oltp_read_write, oltp_write_only
  lockstep-workload TPC-C
  (on request, --tests) mux_oltp_*: sysbench's statements from
      lockstep-workload oltp, a client that multiplexes its connections over
      two threads, to tell the servers' curves from sysbench's own cost

at 1, 4, 16, 64, 256, 1024 threads/terminals. Writes
bench/results/<date>-<commit>.md with a table and SVG charts of throughput
and p95 latency against concurrency (drawn here, no dependencies).

  --quick   small tables, 1 warehouse, ~10 s per point (minutes in total)
  (full)    --tables=4 --table-size=100000, 10 warehouses, 60 s per point

Every TPC-C point starts from the data as loaded: both servers are stopped
after the load, their data directories copied, and before each TPC-C run
restored from the copy and restarted (--no-tpcc-restore turns this off).
TPC-C adds orders as it runs, about doubling the order tables over a full
sweep, so without it each point would run on more data than the one before
and the high-concurrency points, run last, would measure growth as well as
concurrency (a fresh database per run is the usual TPC-C practice).

Every sysbench point first runs --sysbench-warmup seconds that are not
measured, in the same sysbench process (see sysbench_cmd): throughput,
latency and CPU cover only the --time after it. Without it the client's
per-thread JIT warmup, not the servers, set the 1024-thread points and the
first run at each new thread count.

Servers are always stopped at the end (also on errors and Ctrl-C).
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import svgplot

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST = "127.0.0.1"
SERVERS = ("lockstep", "mariadb")
SYSBENCH_TESTS = ("oltp_point_select", "oltp_read_write", "oltp_write_only")
# The same statements from lockstep-workload oltp, whose connections are tasks
# on two threads instead of a thread each: its cost per transaction does not
# grow with connections, so these points show the servers' own curves.
MUX_TESTS = tuple(f"mux_{t}" for t in SYSBENCH_TESTS)
# Percona's sysbench-tpcc kit (not ours, not in this repository: --sysbench-tpcc
# names a checkout): TPC-C as another kit phrases it, comma joins with keys
# reaching a table through the join condition, consistency checks as joins of
# grouped derived tables. The planner must not need our phrasing.
SBTPCC = "sysbench_tpcc"


def log(msg):
    print(f"[{datetime.datetime.now():%H:%M:%S}] {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def can_connect(port):
    try:
        with socket.create_connection((HOST, port), timeout=1) as s:
            s.settimeout(2)
            return len(s.recv(4)) > 0  # the server's greeting
    except OSError:
        return False


class Server:
    def __init__(self, kind, workdir, args):
        self.kind = kind
        self.dir = os.path.join(workdir, kind)
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.args = args
        self.proc = None
        os.makedirs(self.dir, exist_ok=True)
        self.log_path = os.path.join(self.dir, "server.log")

    def command(self):
        if self.kind == "lockstep":
            return [self.args.lockstep_bin, "serve", "--port", str(self.port),
                    "--datadir", self.data, "--transaction-isolation", "READ-COMMITTED",
                    "--max-connections", "2100", "--max-prepared-stmt-count", "1048576"]
        return [
            "mariadbd", "--no-defaults", f"--datadir={self.data}", f"--port={self.port}",
            "--bind-address=127.0.0.1", f"--socket={os.path.join(self.dir, 'mysqld.sock')}",
            f"--pid-file={os.path.join(self.dir, 'mysqld.pid')}", "--user=root",
            "--skip-name-resolve",
            # Same durability and isolation as lockstep's defaults (issue 3):
            "--innodb-flush-log-at-trx-commit=1", "--sync-binlog=1",
            f"--log-bin={os.path.join(self.data, 'binlog')}", "--binlog-format=ROW",
            "--server-id=1", "--transaction-isolation=READ-COMMITTED",
            # Room for the sweep's 1024 clients and the data:
            "--max-connections=2000", "--max-prepared-stmt-count=1048576",
            f"--innodb-buffer-pool-size={self.args.buffer_pool}", "--innodb-log-file-size=1G",
            "--table-open-cache=4000",
            "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
            "--performance-schema=OFF", f"--log-error={self.log_path}",
        ]

    def start(self):
        if self.kind == "mariadb" and not os.path.isdir(os.path.join(self.data, "mysql")):
            os.makedirs(self.data, exist_ok=True)
            r = subprocess.run(
                ["mariadb-install-db", "--no-defaults", f"--datadir={self.data}", "--user=root",
                 "--auth-root-authentication-method=normal", "--skip-test-db",
                 "--skip-name-resolve"],
                capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                raise RuntimeError(f"mariadb-install-db failed:\n{r.stdout}\n{r.stderr}")
        logf = open(self.log_path, "ab")
        # In this process's session, as the clients are: with the kernel's
        # autogroup scheduling (on by default) every session is one group
        # that gets an equal share of the CPU under contention, so a server
        # in a session of its own was held to about half the machine while
        # its client took the other half, whatever each needed (write_only
        # at 16: lockstep 8.4-9.2k -> 11.1k tps, MariaDB 5.2-5.6k -> 6.0k).
        # In one group, the scheduler shares the cores by thread, as it
        # does for a server and its clients on one machine without groups.
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=logf,
                                     stderr=subprocess.STDOUT, cwd=self.dir)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited during start-up:\n{self.log_tail()}")
            if can_connect(self.port):
                log(f"{self.kind} ready on port {self.port} (pid {self.proc.pid})")
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.kind} not ready after 180 s:\n{self.log_tail()}")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if not self.alive():
            return
        stop_process(self.proc, 120)
        log(f"{self.kind} stopped")

    def keep_loaded(self):
        """Copies the data directory as it is now (servers stop for it),
        for `restore_loaded` to go back to."""
        self.stop()
        loaded = self.data + ".loaded"
        shutil.rmtree(loaded, ignore_errors=True)
        copy_tree(self.data, loaded)
        self.start()

    def restore_loaded(self):
        """Restarts on a fresh copy of the data kept by `keep_loaded`."""
        self.stop()
        shutil.rmtree(self.data)
        copy_tree(self.data + ".loaded", self.data)
        self.start()

    def log_tail(self, n=3000):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - n))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def sql(self, statement):
        return subprocess.run(
            ["mariadb", "--no-defaults", f"-h{HOST}", f"-P{self.port}", "-uroot",
             "--protocol=TCP", "-N", "-e", statement],
            capture_output=True, text=True, timeout=300)

    def cpu_seconds(self):
        """User + system CPU the server has used so far."""
        return proc_cpu_seconds(self.proc.pid)

    def rss_mb(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) // 1024
        except OSError:
            pass
        return None


def stop_process(proc, grace):
    """SIGTERM (a server's clean shutdown), SIGKILL after `grace` seconds."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


def proc_cpu_seconds(pid):
    """User + system CPU a live process (all its threads) has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def copy_tree(src, dst):
    r = subprocess.run(["cp", "-a", src, dst], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"copying {src} to {dst}: {r.stderr}")


# ---- sysbench -----------------------------------------------------------

def sbtpcc_cmd(server, args, threads, command, timing):
    """The sysbench-tpcc kit: one set of tables, --warehouses of them, Read
    Committed as the kit recommends, its foreign keys left out on both."""
    return ["sysbench", "tpcc.lua", "--db-driver=mysql", f"--mysql-host={HOST}",
            f"--mysql-port={server.port}", "--mysql-user=root", "--mysql-password=",
            "--mysql-db=sbt", "--tables=1", f"--scale={args.warehouses}", "--trx_level=RC",
            "--use_fk=0", f"--threads={threads}", *timing, "--report-interval=0",
            "--mysql-ignore-errors=1213,1205,1020", "--forced-shutdown=60", command]


def sysbench_cmd(server, args, test, threads, command, warmup=0):
    # The warmup (sysbench_warmup) ends in a checkpoint report, which resets
    # every counter: the final report covers only the measured --time.
    timing = ([f"--time={warmup + args.time}", f"--report-checkpoints={warmup}"] if warmup
              else [f"--time={args.time}"])
    if test == SBTPCC:
        return sbtpcc_cmd(server, args, threads, command, timing)
    return ["sysbench", test, "--db-driver=mysql", f"--mysql-host={HOST}",
            f"--mysql-port={server.port}", "--mysql-user=root", "--mysql-password=",
            "--mysql-db=sbtest", f"--tables={args.tables}", f"--table-size={args.table_size}",
            f"--threads={threads}", *timing, "--events=0",
            "--rand-type=uniform", "--report-interval=0", "--db-ps-mode=auto",
            "--mysql-ignore-errors=1213,1205,1020", "--forced-shutdown=60", command]


def sysbench_prepare(server, args):
    r = server.sql("DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest")
    if r.returncode != 0:
        raise RuntimeError(f"{server.kind}: create sbtest failed: {r.stderr}")
    cmd = sysbench_cmd(server, args, "oltp_read_write", min(args.tables, 4), "prepare")
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{server.kind}: sysbench prepare failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    log(f"{server.kind}: sysbench tables prepared in {time.monotonic() - t:.0f}s")


def sbtpcc_prepare(server, args):
    r = server.sql("DROP DATABASE IF EXISTS sbt; CREATE DATABASE sbt")
    if r.returncode != 0:
        raise RuntimeError(f"{server.kind}: create sbt failed: {r.stderr}")
    cmd = sysbench_cmd(server, args, SBTPCC, 2, "prepare")
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=7200, cwd=args.sysbench_tpcc)
    if r.returncode != 0:
        raise RuntimeError(f"{server.kind}: sysbench-tpcc prepare failed:\n{r.stdout[-3000:]}")
    log(f"{server.kind}: sysbench-tpcc {args.warehouses} warehouses prepared in "
        f"{time.monotonic() - t:.0f}s")


def sbtpcc_check(server, args):
    """The kit's consistency checks, timed: they are joins of grouped
    derived tables and correlated subqueries, a planner test of their own."""
    t = time.monotonic()
    r = subprocess.run(sysbench_cmd(server, args, SBTPCC, 1, "check"), capture_output=True,
                       text=True, timeout=1800, cwd=args.sysbench_tpcc)
    out = (r.stdout + r.stderr).strip()
    ok = r.returncode == 0 and "FAILED" not in out and "PASSED" in out
    return ok, f"{time.monotonic() - t:.1f} s: " + out[-2000:]


def sysbench_warmup(args, threads):
    """Seconds of warmup for a point: each sysbench thread warms its own
    LuaJIT state, so with more threads than 256 (fewer events per thread per
    second) it grows with the thread count. At 1024 threads a run reaches
    its steady rate after 15-30 s (read_write: ~1,950 tps in the first 10 s,
    ~2,420 from 25 s on; point_select: 29k in the first 5 s, ~52k after
    15 s).
    A separate warmup run would not do: a new process starts cold again.
    Cold, a trace abort (unwound through libgcc) came ~0.9 times per
    transaction at 1024 threads, ~0.02 at 16, and on shared cores the
    client's CPU is taken from the server."""
    return args.sysbench_warmup * max(1, threads // 256)


def run_sysbench(server, args, test, threads, cpu):
    """One sysbench run; after its warmup (the checkpoint report) `cpu`
    starts measuring again, so CPU and throughput cover the same window."""
    warmup = sysbench_warmup(args, threads)
    cmd = sysbench_cmd(server, args, test, threads, "run", warmup)
    deadline = time.monotonic() + warmup + args.time + 300
    cwd = args.sysbench_tpcc if test == SBTPCC else None
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         cwd=cwd)
    lines, reports = [], 0
    killed = threading.Event()

    def kill():
        killed.set()
        p.kill()

    timer = threading.Timer(deadline - time.monotonic(), kill)
    timer.start()
    try:
        for line in p.stdout:
            lines.append(line)
            if "Checkpoint report:" in line:
                cpu.restart(client_pid=p.pid)
                reports = len(lines)
        returncode = p.wait()
    finally:
        timer.cancel()
    if killed.is_set():
        return {"ok": False, "throughput": 0, "p95": None, "errors": None,
                "note": "timed out"}
    # The measured window's statistics are the last report, after the
    # checkpoint's.
    out = "".join(lines[reports:])

    def num(pattern):
        m = re.search(pattern, out, re.M)
        return float(m.group(1)) if m else None

    tps = num(r"transactions:\s+\d+\s+\(([\d.]+) per sec")
    p95 = num(r"95th percentile:\s+([\d.]+)")
    ignored = num(r"ignored errors:\s+(\d+)")
    ok = returncode == 0 and tps is not None and (reports > 0 or not warmup)
    note = "" if ok else f"exit {returncode}: " + " | ".join(
        l.strip() for l in out.splitlines() if "FATAL" in l or "error" in l.lower())[:300]
    return {"ok": ok, "throughput": tps or 0.0, "p95": p95, "errors": int(ignored or 0),
            "note": note}


# ---- TPC-C --------------------------------------------------------------

TPCC_TABLES = ("warehouse", "district", "customer", "history", "new_order", "oorder",
               "order_line", "item", "stock", "config")


def bench_cmd(server, args, *rest):
    return [args.bench_bin, "tpcc", rest[0], f"--host={HOST}", f"--port={server.port}",
            "--user=root", "--password=", "--database=tpcc", *rest[1:]]


def tpcc_load(server, args):
    t = time.monotonic()
    r = subprocess.run(bench_cmd(server, args, "load", f"--warehouses={args.warehouses}"),
                       capture_output=True, text=True, timeout=7200)
    if r.returncode != 0:
        raise RuntimeError(f"{server.kind}: tpcc load failed:\n{r.stderr[-3000:]}")
    log(f"{server.kind}: TPC-C {args.warehouses} warehouses loaded in {time.monotonic() - t:.0f}s")


def tpcc_check(server, args):
    r = subprocess.run(bench_cmd(server, args, "check"), capture_output=True, text=True,
                       timeout=600)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


def run_driver(cmd, path, args):
    """Runs one of our drivers, which writes its report as JSON to `path`:
    (report, None), or (None, a failed point)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=args.time + args.warmup + 600)
    except subprocess.TimeoutExpired:
        return None, {"ok": False, "throughput": 0, "p95": None, "errors": None,
                      "note": "timed out"}
    if r.returncode != 0 or not os.path.exists(path):
        return None, {"ok": False, "throughput": 0, "p95": None, "errors": None,
                      "note": f"exit {r.returncode}: {r.stderr.strip()[-300:]}"}
    with open(path) as f:
        return json.load(f), None


def run_tpcc(server, args, terminals, workdir):
    path = os.path.join(workdir, f"tpcc-{server.kind}-{terminals}.json")
    cmd = bench_cmd(server, args, "run", f"--terminals={terminals}", f"--duration={args.time}",
                    f"--warmup={args.warmup}", "--interval=5", f"--json={path}", "--quiet",
                    "--grace=60")
    rep, failed = run_driver(cmd, path, args)
    if failed:
        return failed
    note = ""
    samples = rep.get("error_samples") or {}
    if samples:
        note = "; ".join(f"{k}: {v[:120]}" for k, v in samples.items())
    if rep.get("unfinished_terminals"):
        note = f"{rep['unfinished_terminals']} terminals hung; " + note
    return {"ok": True, "throughput": rep["tpmC"], "tps": rep["tps"],
            "p95": rep["latency_all"]["p95_ms"],
            "p95_new_order": rep["txn"]["new_order"]["p95_ms"],
            "errors": rep["errors_total"], "note": note}


def run_mux(server, args, test, connections, workdir):
    """lockstep-workload oltp: sysbench's test on sysbench's tables from a
    multiplexed client (see MUX_TESTS)."""
    path = os.path.join(workdir, f"{test}-{server.kind}-{connections}.json")
    kind = test.removeprefix("mux_oltp_").replace("_", "-")
    cmd = [args.bench_bin, "oltp", f"--host={HOST}", f"--port={server.port}", "--user=root",
           "--password=", "--database=sbtest", f"--test={kind}", f"--connections={connections}",
           f"--tables={args.tables}", f"--table-size={args.table_size}", "--threads=2",
           f"--duration={args.time}", f"--warmup={args.warmup}", "--quiet", f"--json={path}"]
    rep, failed = run_driver(cmd, path, args)
    if failed:
        return failed
    errors = rep["ignored_errors"] + sum(rep["errors"].values())
    note = f"errors {rep['errors']}" if rep["errors"] else ""
    return {"ok": True, "throughput": rep["tps"], "p95": rep["latency"]["p95_ms"],
            "errors": errors, "note": note}


# ---- CPU ----------------------------------------------------------------

class CpuMeter:
    """Cores used during one point by the measured server, by the client
    (sysbench or the TPC-C driver: this process's waited-for children), and
    by the other server (background work such as purge or page flushing).
    Server and client share the machine's cores, so a client that costs
    more per transaction leaves less for the server."""

    def __init__(self, server, others):
        self.server, self.others = server, others

    @staticmethod
    def _children():
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    def __enter__(self):
        self.t0 = time.monotonic()
        self.s0 = self.server.cpu_seconds()
        self.o0 = [o.cpu_seconds() for o in self.others]
        self.c0 = self._children()
        return self

    def restart(self, client_pid):
        """Measure from now on (the end of a warmup): the running client's
        CPU so far counts as already spent."""
        self.__enter__()
        spent = proc_cpu_seconds(client_pid)
        self.c0 = None if spent is None else self.c0 + spent

    def __exit__(self, *exc):
        self.wall = time.monotonic() - self.t0
        self.s1 = self.server.cpu_seconds()
        self.o1 = [o.cpu_seconds() for o in self.others]
        self.c1 = self._children()
        return False

    def result(self):
        def cores(a, b):
            return round((b - a) / self.wall, 3) if a is not None and b is not None else None
        other = [cores(a, b) for a, b in zip(self.o0, self.o1)]
        return {"server": cores(self.s0, self.s1), "client": cores(self.c0, self.c1),
                "other": sum(o for o in other if o is not None) if other else None}


def median_run(runs):
    """The run with the median throughput (the lower one of an even count),
    with every run's throughput attached; a failed run wins, so a failure
    is never hidden behind the other repeats."""
    failed = [r for r in runs if not r.get("ok")]
    if failed:
        return failed[-1]
    pick = dict(sorted(runs, key=lambda r: r["throughput"])[(len(runs) - 1) // 2])
    if len(runs) > 1:
        pick["runs"] = [r["throughput"] for r in runs]
    return pick


def cpu_per_trx(r):
    """(server, client) CPU microseconds per transaction of a point."""
    cpu, tps = r.get("cpu") or {}, r.get("tps") or r.get("throughput")
    if not r.get("ok") or not tps or cpu.get("server") is None:
        return None
    return (cpu["server"] * 1e6 / tps, cpu["client"] * 1e6 / tps)


# ---- report -------------------------------------------------------------

COLORS = {"lockstep": "#1f77b4", "mariadb": "#d62728"}


def svg_charts(results, tests, metric, title, log_y=False):
    """Small multiples: one panel per test, x = concurrency (log2), one line per server."""
    pw, ph, cols = 330, 240, 2
    rows = math.ceil(len(tests) / cols)
    out = svgplot.page_start(cols * pw, rows * ph + 30, title)
    for i, test in enumerate(tests):
        series = [(s, COLORS[s], [(r["threads"], r[s][metric]) for r in results
                                  if r["test"] == test and r[s].get("ok") and r[s].get(metric)])
                  for s in SERVERS]
        xs = sorted({r["threads"] for r in results if r["test"] == test}) or [1]
        svgplot.panel(out, ((i % cols) * pw, 30 + (i // cols) * ph), (pw, ph), test, series,
                      [(x, x) for x in xs], "terminals" if test == "tpcc" else "threads",
                      log_x=True, log_y=log_y)
    out.append("</svg>")
    return "\n".join(out)


def fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return f"{v:,}"


def write_report(results, args, meta, checks, out_dir, stem):
    os.makedirs(out_dir, exist_ok=True)
    tests = [t for t in (*SYSBENCH_TESTS, "tpcc", *MUX_TESTS, SBTPCC)
             if any(r["test"] == t for r in results)]
    with open(os.path.join(out_dir, f"{stem}-throughput.svg"), "w") as f:
        f.write(svg_charts(results, tests, "throughput",
                           "Throughput vs concurrency (sysbench: transactions/s; TPC-C: tpmC)"))
    with open(os.path.join(out_dir, f"{stem}-p95.svg"), "w") as f:
        f.write(svg_charts(results, tests, "p95", "p95 latency (ms, log scale) vs concurrency",
                           log_y=True))
    L = [f"# lockstep vs MariaDB: {meta['date']} at {meta['commit']}", ""]
    L.append(f"Mode: **{'quick' if args.quick else 'full'}**; {args.time} s per point"
             + (f" (+{args.warmup} s TPC-C warmup)" if args.warmup else "")
             + (f" (+{args.sysbench_warmup} s sysbench warmup, x threads/256 above 256 threads, "
                "in the same process and ended by a checkpoint report that resets its counters; "
                "CPU is measured after it too)" if args.sysbench_warmup else "")
             + "; for every point lockstep ran first, then MariaDB, on the same machine in the same run"
             + (f"; each point is the median of {args.repeats} runs per server, alternating"
                " between the servers" if args.repeats > 1 else "") + ".")
    L.append("")
    L.append(f"- Machine: {meta['cpu']}, {meta['cores']} cores, {meta['mem_gb']} GB RAM, {meta['kernel']}; "
             "servers and clients run in one session, so one scheduling group (autogroup): "
             "the cores are shared by thread, not half to the server and half to the client")
    L.append(f"- lockstep {meta['commit']}: `{' '.join(meta['lockstep_cmd'])}`")
    L.append(f"- MariaDB {meta['mariadb_version']}: innodb_flush_log_at_trx_commit=1, sync_binlog=1, "
             f"log_bin, binlog_format=ROW, transaction_isolation=READ-COMMITTED, max_connections=2000, "
             f"innodb_buffer_pool_size={args.buffer_pool}, innodb_log_file_size=1G")
    L.append(f"- sysbench {meta['sysbench_version']}: --tables={args.tables} --table-size={args.table_size} "
             f"--rand-type=uniform --db-ps-mode=auto (server-side prepared statements), "
             f"deadlocks/lock timeouts ignored and counted as errors")
    if any(r["test"] in MUX_TESTS for r in results):
        L.append("- mux_oltp_*: sysbench's statements and parameters (oltp_common.lua defaults, "
                 "uniform keys, prepared statements) on the same tables from `lockstep-workload oltp`, "
                 "whose connections are tasks on two client threads rather than a thread each; "
                 f"{args.warmup} s warmup per point, CPU measured over warmup and run")
    L.append(f"- TPC-C: lockstep-workload, {args.warehouses} warehouse(s), terminals bound round robin to "
             f"warehouses, no think time, READ COMMITTED, prepared statements; throughput is tpmC "
             f"(New-Order commits per minute), p95 over all five transaction types, errors = deadlocks/"
             f"lock timeouts (retried) and others"
             + ("; every point starts on the data as loaded (data directory restored from a copy "
                "taken after the load, server restarted), so that points differ in concurrency "
                "only" if args.tpcc_restore else "; points run one after another on the same, "
                "growing data"))
    L.append("")
    L.append("![throughput](%s-throughput.svg)" % stem)
    L.append("")
    L.append("![p95](%s-p95.svg)" % stem)
    L.append("")
    L.append("| test | threads | lockstep throughput | lockstep p95 ms | lockstep errors | "
             "MariaDB throughput | MariaDB p95 ms | MariaDB errors | ratio |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        a, b = r["lockstep"], r["mariadb"]
        ratio = (f"{a['throughput'] / b['throughput']:.2f}x"
                 if a.get("ok") and b.get("ok") and b["throughput"] else "-")
        cells = []
        for s in (a, b):
            if s.get("ok"):
                cells += [fmt(s["throughput"]), fmt(s["p95"], 2), fmt(s["errors"])]
            else:
                cells += ["FAILED", "-", "-"]
        L.append(f"| {r['test']} | {r['threads']} | " + " | ".join(cells) + f" | {ratio} |")
    if any("runs" in r[s] for r in results for s in SERVERS):
        L.append("")
        L.append("Every run behind each median, in order:")
        L.append("")
        L.append("| test | threads | lockstep runs | MariaDB runs |")
        L.append("|---|---:|---|---|")
        for r in results:
            L.append(f"| {r['test']} | {r['threads']} | "
                     + " | ".join(", ".join(fmt(v) for v in r[s].get("runs", [])) or "-"
                                  for s in SERVERS) + " |")
    L.append("")
    L.append("## Peaks and behaviour at the highest concurrency")
    L.append("")
    L.append("| test | lockstep peak (at) | MariaDB peak (at) | peak ratio | lockstep at max conc. / own peak | MariaDB at max conc. / own peak |")
    L.append("|---|---:|---:|---:|---:|---:|")
    for t in tests:
        rows = [r for r in results if r["test"] == t]
        peaks, keep = {}, {}
        for s in SERVERS:
            ok = [(r[s]["throughput"], r["threads"]) for r in rows if r[s].get("ok")]
            peaks[s] = max(ok) if ok else (0, None)
            top = max(rows, key=lambda r: r["threads"])
            keep[s] = (top[s]["throughput"] / peaks[s][0] if top[s].get("ok") and peaks[s][0]
                       else None)
        ratio = (f"{peaks['lockstep'][0] / peaks['mariadb'][0]:.2f}x" if peaks["mariadb"][0] else "-")
        L.append(f"| {t} | {fmt(peaks['lockstep'][0])} ({peaks['lockstep'][1]}) | "
                 f"{fmt(peaks['mariadb'][0])} ({peaks['mariadb'][1]}) | {ratio} | "
                 + " | ".join(f"{keep[s] * 100:.0f}%" if keep[s] is not None else "-" for s in SERVERS)
                 + " |")
    L.append("")
    L.append("## CPU per transaction")
    L.append("")
    L.append("Microseconds of CPU per transaction (TPC-C: per transaction of any type) "
             "used by the server and by the client during each point, from /proc and "
             "getrusage; both share the machine's cores. `other` is the idle server's "
             "background work during the point, in cores.")
    L.append("")
    L.append("| test | threads | lockstep server | lockstep client | lockstep other | "
             "MariaDB server | MariaDB client | MariaDB other |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cells = []
        for s in SERVERS:
            per = cpu_per_trx(r[s])
            other = (r[s].get("cpu") or {}).get("other")
            cells += ([fmt(per[0]), fmt(per[1])] if per else ["-", "-"])
            cells.append(fmt(other, 2) if other is not None else "-")
        L.append(f"| {r['test']} | {r['threads']} | " + " | ".join(cells) + " |")
    L.append("")
    if checks:
        L.append("## Consistency checks after the sweep")
        L.append("")
        for s, (ok, text) in checks.items():
            timed = re.match(r"([\d.]+ s): ", text)  # sbtpcc_check's time
            took = timed.group(1) if timed else ""
            L.append(f"- {s}: {'OK' if ok else 'FAILED'}" + (f" ({took})" if took and ok else "")
                     + ("" if ok else f"\n\n```\n{text[-2000:]}\n```"))
        L.append("")
    notes = [(r["test"], r["threads"], s, r[s]["note"]) for r in results for s in SERVERS
             if r[s].get("note")]
    if notes:
        L.append("## Notes and errors")
        L.append("")
        for t, n, s, note in notes:
            L.append(f"- {t} @ {n}, {s}: {note}")
        L.append("")
    if meta.get("rss"):
        L.append("Resident memory at the end: " + ", ".join(f"{k} {v} MB" for k, v in meta["rss"].items()))
        L.append("")
    path = os.path.join(out_dir, f"{stem}.md")
    with open(path, "w") as f:
        f.write("\n".join(L))
    with open(os.path.join(out_dir, f"{stem}.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1, default=str)
    return path


def machine_meta(args):
    def cmd(c):
        try:
            return subprocess.run(c, capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception:
            return "?"
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // (1024 * 1024)
    except OSError:
        pass
    return {
        "date": datetime.date.today().isoformat(),
        "commit": cmd(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]) or "unknown",
        "cpu": cpu, "cores": os.cpu_count(), "mem_gb": mem, "kernel": platform.release(),
        "mariadb_version": cmd(["mariadbd", "--version"]).split(" Ver ")[-1].split(" for ")[0],
        "sysbench_version": cmd(["sysbench", "--version"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", default="1,4,16,64,256,1024")
    ap.add_argument("--tests", default="oltp_point_select,oltp_read_write,oltp_write_only,tpcc",
                    help="comma-separated subset")
    ap.add_argument("--time", type=int, help="seconds per point (quick 10, full 60)")
    ap.add_argument("--warmup", type=int, help="TPC-C and mux_* warmup seconds per point (quick 2, full 10)")
    ap.add_argument("--sysbench-warmup", type=int,
                    help="sysbench seconds per point before the measured --time, in the same "
                         "process, times threads/256 above 256 threads (quick 2, full 8)")
    ap.add_argument("--tables", type=int)
    ap.add_argument("--table-size", type=int)
    ap.add_argument("--warehouses", type=int)
    ap.add_argument("--buffer-pool", help="MariaDB innodb_buffer_pool_size (quick 1G, full 4G)")
    ap.add_argument("--servers", default="lockstep,mariadb")
    ap.add_argument("--lockstep-bin", default=os.environ.get(
        "LOCKSTEP_BIN", os.path.join(REPO, "target", "release", "lockstep")))
    ap.add_argument("--bench-bin", default=os.environ.get(
        "LOCKSTEP_WORKLOAD_BIN", os.path.join(REPO, "target", "release", "lockstep-workload")))
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--workdir", help="server datadirs (default: a temp dir, removed at the end)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs per point, alternating servers; the report shows the median run")
    ap.add_argument("--no-tpcc-restore", dest="tpcc_restore", action="store_false",
                    help="run TPC-C points one after another on the same (growing) data "
                         "instead of restarting each on the data as loaded")
    ap.add_argument("--name", help="suffix for the report's file names (<date>-<commit>-NAME.md)")
    ap.add_argument("--sysbench-tpcc", default=os.environ.get("SYSBENCH_TPCC"),
                    help=f"a checkout of Percona-Lab/sysbench-tpcc, for --tests {SBTPCC}")
    args = ap.parse_args()
    q = args.quick
    args.time = args.time or (10 if q else 60)
    args.warmup = args.warmup if args.warmup is not None else (2 if q else 10)
    args.sysbench_warmup = (args.sysbench_warmup if args.sysbench_warmup is not None
                            else (2 if q else 8))
    args.tables = args.tables or 4
    args.table_size = args.table_size or (10000 if q else 100000)
    args.warehouses = args.warehouses or (1 if q else 10)
    args.buffer_pool = args.buffer_pool or ("1G" if q else "4G")
    threads = [int(t) for t in args.threads.split(",")]
    tests = [t for t in args.tests.split(",") if t]
    kinds = [s for s in args.servers.split(",") if s]
    for t in tests:
        if t not in (*SYSBENCH_TESTS, "tpcc", *MUX_TESTS, SBTPCC):
            ap.error(f"unknown test {t}")
    if SBTPCC in tests and not (args.sysbench_tpcc and
                                os.path.exists(os.path.join(args.sysbench_tpcc, "tpcc.lua"))):
        ap.error(f"{SBTPCC} needs --sysbench-tpcc DIR (a checkout of Percona-Lab/sysbench-tpcc)")
    args.sysbench_tpcc = args.sysbench_tpcc and os.path.abspath(args.sysbench_tpcc)
    for b in (args.lockstep_bin, args.bench_bin):
        if "lockstep" in kinds and not os.access(b, os.X_OK):
            ap.error(f"{b} not found (bench/compare.sh builds it)")

    workdir = args.workdir or tempfile.mkdtemp(prefix="lockstep-compare-")
    servers = {}

    def cleanup(*_):
        for s in servers.values():
            try:
                s.stop()
            except Exception as e:  # keep stopping the others
                log(f"stopping {s.kind}: {e}")
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    def on_signal(signum, _frame):
        log(f"signal {signum}: stopping servers")
        cleanup()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    meta = machine_meta(args)
    stem = f"{meta['date']}-{meta['commit']}" + (f"-{args.name}" if args.name else "")
    results, checks = [], {}
    started = time.monotonic()
    try:
        for k in kinds:
            servers[k] = Server(k, workdir, args)
            servers[k].start()
        meta["lockstep_cmd"] = (servers["lockstep"].command() if "lockstep" in servers else [])
        # Same data in both: sysbench tables and TPC-C warehouses.
        if any(t in SYSBENCH_TESTS or t in MUX_TESTS for t in tests):
            for s in servers.values():
                sysbench_prepare(s, args)
        if SBTPCC in tests:
            for s in servers.values():
                sbtpcc_prepare(s, args)
        if "tpcc" in tests:
            for s in servers.values():
                tpcc_load(s, args)
            if args.tpcc_restore:
                for s in servers.values():
                    # Index statistics on disk first: a restarted MariaDB
                    # otherwise plans with the stale ones of the empty tables
                    # (a third of its throughput, lock timeouts).
                    tables = ", ".join(f"tpcc.bmsql_{t}" for t in TPCC_TABLES)
                    r = s.sql(f"ANALYZE TABLE {tables}")
                    if r.returncode != 0:
                        raise RuntimeError(f"{s.kind}: ANALYZE TABLE failed: {r.stderr}")
                    s.keep_loaded()

        def run_point(k, test, n):
            if k not in servers:
                return {"ok": False, "throughput": 0, "p95": None, "errors": None,
                        "note": "not run"}
            s = servers[k]
            if not s.alive():
                return {"ok": False, "throughput": 0, "p95": None, "errors": None,
                        "note": "server died: " + s.log_tail(300).replace("\n", " ")}
            if test == "tpcc" and args.tpcc_restore:
                s.restore_loaded()
            others = [o for o in servers.values() if o is not s]
            with CpuMeter(s, others) as cpu:
                if test == "tpcc":
                    r = run_tpcc(s, args, n, workdir)
                elif test in MUX_TESTS:
                    r = run_mux(s, args, test, n, workdir)
                else:
                    r = run_sysbench(s, args, test, n, cpu)
            r["cpu"] = cpu.result()
            log(f"{test:18} {n:5} {k:9} "
                + (f"{r['throughput']:12.1f} p95 {fmt(r['p95'], 2):>9} ms errors {r['errors']}"
                   if r["ok"] else f"FAILED {r.get('note', '')[:200]}"))
            return r

        for test in tests:
            for n in threads:
                # Repeats alternate between the servers, so both see the
                # same drift in machine noise.
                runs = {k: [] for k in SERVERS}
                for _ in range(args.repeats):
                    for k in SERVERS:
                        runs[k].append(run_point(k, test, n))
                row = {"test": test, "threads": n}
                row.update({k: median_run(runs[k]) for k in SERVERS})
                results.append(row)
                # Keep partial results if something goes wrong later.
                write_report(results, args, meta, checks, args.out, stem)
        if "tpcc" in tests:
            for k, s in servers.items():
                if s.alive():
                    checks[k] = tpcc_check(s, args)
                    log(f"{k}: TPC-C consistency {'OK' if checks[k][0] else 'FAILED'}")
        if SBTPCC in tests:
            for k, s in servers.items():
                if s.alive():
                    checks[f"{k} ({SBTPCC})"] = sbtpcc_check(s, args)
                    log(f"{k}: sysbench-tpcc checks {checks[f'{k} ({SBTPCC})'][1][:12]}")
        meta["rss"] = {k: s.rss_mb() for k, s in servers.items() if s.alive()}
        meta["total_minutes"] = round((time.monotonic() - started) / 60, 1)
        path = write_report(results, args, meta, checks, args.out, stem)
        log(f"report: {path}")
    finally:
        cleanup()


if __name__ == "__main__":
    main()
