#!/usr/bin/env python3
"""Replication side by side: lockstep and MariaDB 10.11, each a primary and a
replica on loopback, in one run (issue 42 item 7, book 10.1).

  python3 bench/replication.py target/release/lockstep [--threads 1,8,64,256]
      [--time 20] [--semisync] [--semisync-threads 64,256]

For every concurrency (lockstep, then MariaDB) sysbench oltp_write_only runs
--time seconds on the primary while, every second, the primary's and the
replica's GTID positions and both processes' CPU time (/proc/PID/stat) are
read; after the load, the time until the replica has every transaction of
the primary is measured (catch-up).

Lag is in transactions: lockstep, the primary's gno minus the replica's gno
of the primary's uuid in @@gtid_executed; MariaDB, the sequence number of
@@gtid_binlog_pos on the primary minus that of @@gtid_slave_pos on the
replica (one domain, one server: one number per transaction).

A step is *balanced* when the replica's lag does not grow: the slope of the
lag over the step (least squares, transactions/s) is under 1% of the
primary's throughput and the catch-up after the step takes under 1 s. The
balanced replay speed is the highest primary throughput of a balanced step
("at least" it when every step is balanced: the replica followed the
primary's peak).

Same durability on both: lockstep's defaults (sync on commit); MariaDB
log_bin, binlog_format=ROW, sync_binlog=1, innodb_flush_log_at_trx_commit=1,
gtid_strict_mode on both, replica slave_parallel_mode=optimistic,
slave_parallel_threads=--parallel-threads, log_slave_updates off, set up with
MASTER_USE_GTID=slave_pos. Ports --port-base .. +3. Every process and the
temp dir are removed at exit (also Ctrl-C and errors).
"""

import argparse
import bisect
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import compare
import svgplot

HOST = "127.0.0.1"
KINDS = ("lockstep", "mariadb")
ROW_KEYS = ("tps", "apply", "lag_max", "lag_p99", "slope", "catchup", "cpu_p", "cpu_r")


class Node:
    """One server process: kind lockstep or mariadb, role primary or replica."""

    def __init__(self, kind, role, port, workdir, args):
        self.kind, self.role, self.port, self.args = kind, role, port, args
        self.dir = os.path.join(workdir, f"{kind}-{role}")
        self.data = os.path.join(self.dir, "data")
        self.server_id = 1 if role == "primary" else 2
        self.proc = None
        os.makedirs(self.dir)

    def command(self):
        if self.kind == "lockstep":
            cmd = [self.args.lockstep_bin, "serve", "--port", str(self.port),
                   "--datadir", self.data, "--max-connections", "2100",
                   "--max-prepared-stmt-count", "1048576"]
            return cmd + (["--server-id", "2"] if self.role == "replica" else [])
        return ["mariadbd", "--no-defaults", f"--datadir={self.data}", f"--port={self.port}",
                "--bind-address=127.0.0.1", f"--socket={self.dir}/mysqld.sock",
                f"--pid-file={self.dir}/mysqld.pid", "--user=root", "--skip-name-resolve",
                f"--server-id={self.server_id}", f"--log-bin={self.data}/binlog",
                "--binlog-format=ROW", "--gtid-strict-mode=1", "--sync-binlog=1",
                "--innodb-flush-log-at-trx-commit=1", "--log-slave-updates=0",
                f"--slave-parallel-threads={self.args.parallel_threads}",
                "--slave-parallel-mode=optimistic", "--max-connections=2000",
                "--max-prepared-stmt-count=1048576", "--innodb-buffer-pool-size=1G",
                "--innodb-log-file-size=512M", "--performance-schema=OFF",
                f"--log-error={self.dir}/server.log"]

    def install(self):
        r = subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.data}",
                            "--user=root", "--auth-root-authentication-method=normal",
                            "--skip-test-db", "--skip-name-resolve"],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed:\n{r.stdout}\n{r.stderr}")

    def start(self):
        if self.kind == "mariadb":
            self.install()
        log = open(os.path.join(self.dir, "stdout.log"), "ab")
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.dir)
        deadline = time.monotonic() + 120
        while not compare.can_connect(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name()} did not start (see {self.dir})")
            time.sleep(0.2)
        compare.log(f"{self.name()} ready on port {self.port} (pid {self.proc.pid})")

    def name(self):
        return f"{self.kind} {self.role}"

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            compare.stop_process(self.proc, 60)

    def sql(self, statement):
        r = subprocess.run(["mariadb", "--no-defaults", f"-h{HOST}", f"-P{self.port}", "-uroot",
                            "--protocol=TCP", "--skip-ssl", "-N", "-B", "-e", statement],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"{self.name()}: {statement[:80]}: {r.stderr.strip()}")
        return r.stdout.strip()

    def cpu(self):
        return compare.proc_cpu_seconds(self.proc.pid) or 0.0


class Poller:
    """A mariadb client kept open, one query per line: sampling every second
    would otherwise start two processes a second on the shared cores."""

    def __init__(self, node):
        self.p = subprocess.Popen(
            ["mariadb", "--no-defaults", f"-h{HOST}", f"-P{node.port}", "-uroot",
             "--protocol=TCP", "--skip-ssl", "-N", "-B", "--unbuffered", "-n"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def query(self, statement):
        self.p.stdin.write(statement + ";\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


class Pair:
    """A primary and its replica, and how to read their positions."""

    def __init__(self, kind, workdir, port, args):
        self.kind = kind
        self.primary = Node(kind, "primary", port, workdir, args)
        self.replica = Node(kind, "replica", port + 1, workdir, args)
        self.pollers = []
        self.uuid = None

    def nodes(self):
        return (self.primary, self.replica)

    def start(self):
        for n in self.nodes():
            n.start()
        auth = "WITH mysql_native_password BY" if self.kind == "lockstep" else "BY"
        self.primary.sql(f"CREATE USER repl IDENTIFIED {auth} 'pw'; "
                         "GRANT REPLICATION SLAVE ON *.* TO repl")
        self.start_replica()
        if self.kind == "lockstep":
            self.uuid = self.primary.sql("SELECT @@server_uuid")
        self.pollers = [Poller(self.primary), Poller(self.replica)]

    def start_replica(self, semisync=False):
        if self.kind == "lockstep":
            on = "SET GLOBAL rpl_semi_sync_replica_enabled=1; " if semisync else ""
            self.replica.sql(f"{on}CHANGE REPLICATION SOURCE TO SOURCE_HOST='{HOST}', "
                             f"SOURCE_PORT={self.primary.port}, SOURCE_USER='repl', "
                             "SOURCE_PASSWORD='pw', SOURCE_AUTO_POSITION=1; START REPLICA")
        else:
            on = "SET GLOBAL rpl_semi_sync_slave_enabled=1; " if semisync else ""
            self.replica.sql(f"{on}CHANGE MASTER TO MASTER_HOST='{HOST}', "
                             f"MASTER_PORT={self.primary.port}, MASTER_USER='repl', "
                             "MASTER_PASSWORD='pw', MASTER_USE_GTID=slave_pos; START SLAVE")

    def enable_semisync(self):
        if self.kind == "lockstep":
            self.replica.sql("STOP REPLICA")
            self.primary.sql("SET GLOBAL rpl_semi_sync_source_enabled=1")
        else:
            self.replica.sql("STOP SLAVE")
            self.primary.sql("SET GLOBAL rpl_semi_sync_master_enabled=1")
        self.start_replica(semisync=True)
        time.sleep(2)  # the replica reconnects and announces itself semisync

    def semisync_counts(self):
        """(acknowledged, not acknowledged) commits so far on the primary."""
        name = "source" if self.kind == "lockstep" else "master"
        out = self.primary.sql(f"SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_{name}_%_tx'")
        vals = dict(line.split("\t") for line in out.splitlines())
        return (int(vals.get(f"Rpl_semi_sync_{name}_yes_tx", 0)),
                int(vals.get(f"Rpl_semi_sync_{name}_no_tx", 0)))

    def positions(self):
        """(primary, replica) transaction counts; the replica is read first,
        so the lag is never under the truth."""
        if self.kind == "lockstep":
            q = "SELECT @@gtid_executed"
            r, p = (self.pollers[1].query(q), self.pollers[0].query(q))
            return gno(p, self.uuid), gno(r, self.uuid)
        r = self.pollers[1].query("SELECT @@gtid_slave_pos")
        p = self.pollers[0].query("SELECT @@gtid_binlog_pos")
        return seqno(p), seqno(r)

    def stop(self):
        for p in self.pollers:
            try:
                p.close()
            except Exception:
                p.p.kill()
        for n in self.nodes():
            n.stop()


def gno(gtid_set, uuid):
    """Highest gno of `uuid` in a GTID set text ("uuid:1-5:7,\\nuuid2:1-3")."""
    for part in gtid_set.replace("\\n", "").split(","):
        if part.strip().startswith(uuid):
            return int(part.rsplit(":", 1)[1].rsplit("-", 1)[-1])
    return 0


def seqno(gtid_pos):
    """Sequence number of a MariaDB GTID position "domain-server-seq" (one domain)."""
    return int(gtid_pos.rsplit("-", 1)[1]) if gtid_pos else 0


def sysbench(pair, args, threads, command, seconds=0):
    return ["sysbench", "oltp_write_only", "--db-driver=mysql", f"--mysql-host={HOST}",
            f"--mysql-port={pair.primary.port}", "--mysql-user=root", "--mysql-password=",
            "--mysql-db=sbtest", f"--tables={args.tables}", f"--table-size={args.table_size}",
            f"--threads={threads}", f"--time={seconds}", "--events=0", "--rand-type=uniform",
            "--report-interval=0", "--db-ps-mode=auto", "--mysql-ignore-errors=1213,1205,1020",
            "--forced-shutdown=60", command]


def tpcc(pair, args, command, *rest):
    """Our TPC-C driver (crates/workload), one warehouse."""
    return [args.bench_bin, "tpcc", command, f"--host={HOST}", f"--port={pair.primary.port}",
            "--user=root", "--password=", "--database=tpcc", *rest]


def load_command(pair, args, mode, threads):
    if mode == "tpcc":
        return tpcc(pair, args, "run", f"--terminals={threads}", f"--duration={args.time}",
                    "--quiet")
    return sysbench(pair, args, threads, "run", args.time)


def prepare(pair, args):
    pair.primary.sql("CREATE DATABASE sbtest")
    loads = [sysbench(pair, args, min(args.tables, 4), "prepare")]
    if args.tpcc:
        loads.append(tpcc(pair, args, "load", "--warehouses=1"))
    for cmd in loads:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise RuntimeError(f"{pair.kind}: {cmd[:3]} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    catch_up(pair, 600)
    compare.log(f"{pair.kind}: data loaded and replicated")


def catch_up(pair, timeout):
    """Seconds until the replica has every transaction the primary has now."""
    t0 = time.monotonic()
    target = pair.positions()[0]
    while pair.positions()[1] < target:
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"{pair.kind}: replica did not catch up in {timeout} s")
        time.sleep(0.02)
    return time.monotonic() - t0


def sample(pair, t0):
    p, r = pair.positions()
    return {"t": time.monotonic() - t0, "p": p, "r": r,
            "cpu_p": pair.primary.cpu(), "cpu_r": pair.replica.cpu()}


def sample_until_exit(pair, load, samples, t0, interval):
    """A sample every interval seconds, and one the moment the load ends (the
    catch-up is timed from there)."""
    while True:
        try:
            load.wait(timeout=max(0.0, samples[-1]["t"] + interval - (time.monotonic() - t0)))
            break
        except subprocess.TimeoutExpired:
            samples.append(sample(pair, t0))
    samples.append(sample(pair, t0))


def run_step(pair, args, threads, mode):
    """One load level: samples every second, then the catch-up."""
    semisync = mode == "semisync"
    counts = pair.semisync_counts() if semisync else None
    t0 = time.monotonic()
    samples = [sample(pair, t0)]
    with tempfile.TemporaryFile("w+") as out:
        load = subprocess.Popen(load_command(pair, args, mode, threads),
                                stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            sample_until_exit(pair, load, samples, t0, args.sample_interval)
        finally:
            if load.poll() is None:  # interrupted: the load goes too
                load.kill()
                load.wait()
        out.seek(0)
        errors = out.read().count("FATAL") + (load.returncode != 0)
    catch = catch_up(pair, args.catchup_timeout)
    end = sample(pair, t0)
    step = summarize(samples, end, catch)
    step.update(threads=threads, samples=samples, ok=load.returncode == 0,
                errors=errors)
    if semisync:
        yes, no = pair.semisync_counts()
        step["acked"], step["not_acked"] = yes - counts[0], no - counts[1]
    compare.log(f"{pair.kind:8} {mode:8} {threads:4}: "
                f"{step['tps']:8.0f} tps, apply {step['apply']:8.0f}/s, lag max "
                f"{step['lag_max']} p99 {step['lag_p99']}, slope {step['slope']:.1f}/s, "
                f"catch-up {catch:.2f} s, cpu us/trx {step['cpu_p']:.0f} / {step['cpu_r']:.0f}")
    return step


def slope(points):
    """Least-squares slope of (t, y) points."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (y - my) for t, y in points) / var if var else 0.0


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0


def time_lags(samples):
    """Per sample, seconds since the primary was where the replica is now:
    the age of the oldest commit the replica lacks (positions interpolated
    between samples, so the resolution is the sample interval)."""
    out = []
    for s in samples:
        r = s["r"]
        if s["p"] <= r:
            out.append(0.0)
            continue
        j = bisect.bisect_left([x["p"] for x in samples], r)
        if j == 0:
            cross = samples[0]["t"]  # behind since before the step: a lower bound
        else:
            a, b = samples[j - 1], samples[j]
            frac = (r - a["p"]) / max(b["p"] - a["p"], 1)
            cross = a["t"] + frac * (b["t"] - a["t"])
        out.append(max(0.0, s["t"] - cross))
    return out


def summarize(samples, end, catch):
    first, last = samples[0], samples[-1]
    secs = max(last["t"] - first["t"], 1e-9)
    txns = max(last["p"] - first["p"], 1)
    lags = [s["p"] - s["r"] for s in samples]
    lag_slope = slope([(s["t"], s["p"] - s["r"]) for s in samples[1:]])
    tps = txns / secs
    lag_s = time_lags(samples)
    return {
        "lag_s_max": max(lag_s), "lag_s_p99": percentile(lag_s, 0.99),
        "tps": tps, "apply": (last["r"] - first["r"]) / secs,
        "lag_max": max(lags), "lag_p99": percentile(lags, 0.99), "slope": lag_slope,
        "catchup": catch, "txns": txns,
        # The primary's CPU over the load; the replica's until it has them all.
        "cpu_p": (last["cpu_p"] - first["cpu_p"]) * 1e6 / txns,
        "cpu_r": (end["cpu_r"] - first["cpu_r"]) * 1e6 / max(end["r"] - first["r"], 1),
        "balanced": lag_slope < 0.01 * tps and catch < 1.0,
    }


def balanced_speed(steps):
    """(throughput, followed every step): the highest primary throughput of a
    balanced step."""
    ok = [s["tps"] for s in steps if s["balanced"]]
    if not ok:
        return None, False
    return max(ok), len(ok) == len(steps)


# ---- report -------------------------------------------------------------

def step_row(kind, s, async_tps=None):
    fmt = compare.fmt
    row = [kind, str(s["threads"]), fmt(s["tps"], 0), fmt(s["apply"], 0), fmt(s["lag_max"]),
           fmt(s["lag_p99"]), f"{s.get('lag_s_p99', 0):.2f}", fmt(s["slope"], 1), fmt(s["catchup"], 2), fmt(s["cpu_p"], 0),
           fmt(s["cpu_r"], 0), "yes" if s["balanced"] else "no"]
    if async_tps is not None:
        ratio = s["tps"] / async_tps if async_tps else 0
        row += [f"{ratio:.2f}", f"{s.get('acked', '-')} / {s.get('not_acked', '-')}"]
    return "| " + " | ".join(row) + " |"


HEADER = ("| system | threads | primary commits/s | replica apply/s | max lag (trx) | p99 lag (trx) "
          "| p99 lag (s) | lag slope (trx/s) | catch-up (s) | primary CPU µs/trx | replica CPU µs/trx "
          "| balanced |")


def mode_name(mode):
    return "TPC-C (1 warehouse)" if mode == "tpcc" else f"sysbench oltp_write_only, {mode}"


def table(results, mode, threads):
    """Side by side: for every concurrency, lockstep then MariaDB."""
    semi = mode == "semisync"
    lines = [HEADER + (" semisync/async | acked / not acked |" if semi else ""),
             "|" + " --- |" * (12 + (2 if semi else 0))]
    for n in threads:
        for kind in KINDS:
            s = next((x for x in results.get((kind, mode), []) if x["threads"] == n), None)
            if s is None:
                continue
            base = next((x["tps"] for x in results.get((kind, "async"), [])
                         if x["threads"] == n), None) if semi else None
            lines.append(step_row(kind, s, base if semi else None))
    return lines


def balanced_lines(results, mode):
    lines = []
    for kind in KINDS:
        steps = results.get((kind, mode), [])
        if not steps:
            continue
        speed, all_ok = balanced_speed(steps)
        peak = max((s["tps"] for s in steps), default=0)
        if speed is None:
            text = f"below {compare.fmt(min((s['tps'] for s in steps), default=0), 0)} tps"
        else:
            text = ("at least " if all_ok else "") + f"{compare.fmt(speed, 0)} tps"
        lines.append(f"- {mode_name(mode)}, {kind}: **{text}** (primary peak in the sweep "
                     f"{compare.fmt(peak, 0)} tps)")
    return lines


def timeline_svg(results, kind, modes):
    """Two panels: commits/s of primary and replica, and lag, over the run."""
    steps = [s for m in modes for s in results.get((kind, m), [])]
    tput, lag, xticks, off = [[], []], [], [], 0.0
    for s in steps:
        xticks.append((off, str(s["threads"])))
        prev = None
        for x in s["samples"]:
            if prev is not None:
                dt = max(x["t"] - prev["t"], 1e-6)
                tput[0].append((off + x["t"], (x["p"] - prev["p"]) / dt))
                tput[1].append((off + x["t"], (x["r"] - prev["r"]) / dt))
            lag.append((off + x["t"], x["p"] - x["r"]))
            prev = x
        off += s["samples"][-1]["t"] + 2
    xticks.append((off, f"{off:.0f} s"))
    out = svgplot.page_start(660, 270, f"{kind}: {' + '.join(modes)} steps (tick: threads)")
    svgplot.panel(out, (0, 30), (330, 240), "commits/s",
                  [("primary", "#1f77b4", tput[0]), ("replica", "#ff7f0e", tput[1])],
                  xticks, "time", markers=False)
    svgplot.panel(out, (330, 30), (330, 240), "replica lag (transactions)",
                  [("lag", "#d62728", lag)], xticks, "time", markers=False)
    out.append("</svg>")
    return "\n".join(out)


def write_report(results, args, meta, stem):
    os.makedirs(args.out, exist_ok=True)
    modes = ["async"] + (["tpcc"] if args.tpcc else []) + (["semisync"] if args.semisync else [])
    for kind in KINDS:
        if any((kind, m) in results for m in modes):
            with open(os.path.join(args.out, f"{stem}-{kind}.svg"), "w") as f:
                f.write(timeline_svg(results, kind, modes))
    with open(os.path.join(args.out, f"{stem}.json"), "w") as f:  # every sample, to recompute
        json.dump({"meta": meta, "steps": {f"{k} {m}": v for (k, m), v in results.items()}},
                  f, indent=0)
    path = os.path.join(args.out, f"{stem}.md")
    with open(path, "w") as f:
        f.write("\n".join(report_lines(results, args, meta, stem)) + "\n")
    return path


def report_lines(results, args, meta, stem):
    L = [f"# Replication side by side: lockstep and MariaDB ({meta['date']}, {meta['commit']})",
         "", f"Command: `python3 bench/replication.py {' '.join(sys.argv[1:])}`", "",
         f"Machine: {meta['cpu']}, {meta['cores']} cores, {meta['mem_gb']} GB, kernel "
         f"{meta['kernel']}; MariaDB {meta['mariadb_version']}; {meta['sysbench_version']}. "
         "The cores are shared by both primaries, both replicas and sysbench (the idle pair "
         "keeps running): the numbers are noisy; see docs/performance.md for whether other work ran.", "",
         f"Load: sysbench oltp_write_only, {args.tables} tables x {args.table_size} rows, "
         f"{args.time} s per step, on the primary; the replica applies in parallel "
         f"(MariaDB: slave_parallel_mode=optimistic, {args.parallel_threads} threads). "
         "Durability: sync on commit on all four servers.", "",
         "Lag: transactions the primary has committed that the replica has not, sampled "
         f"every {args.sample_interval:g} s (replica read first); p99 over those samples. "
         "Lag in seconds: per sample, the time since the primary was at the replica's "
         "position (the age of the oldest commit the replica lacks, interpolated between "
         "samples). Primary commits/s and replica apply/s: GTIDs committed and applied from "
         "the load's start to the moment it ended. Lag slope: least-squares slope of the lag "
         "over the step. Catch-up: seconds after the load until the replica has every transaction. "
         "CPU µs/trx: the process's user+system CPU (/proc/PID/stat) per transaction (the "
         "replica's until it has caught up).", "",
         "**Balanced replay speed** (book 10.1): the highest primary throughput of a step "
         "whose lag does not grow, i.e. lag slope < 1% of the primary's throughput and "
         "catch-up < 1 s (a step meeting both is marked balanced). \"At least\" when every "
         "step was balanced (the replica followed the primary's peak).", ""]
    L += balanced_lines(results, "async") + balanced_lines(results, "tpcc")
    if args.threads:
        L += ["", "## sysbench oltp_write_only, asynchronous", ""]
        L += table(results, "async", args.threads)
    if args.tpcc:
        L += ["", "## TPC-C (our driver, 1 warehouse), asynchronous", "",
              "Threads are terminals; throughput counts commits that write (GTIDs), the "
              "read-only transactions of the mix are not counted.", ""]
        L += table(results, "tpcc", args.tpcc_terminals)
    if args.semisync:
        L += ["", "## sysbench oltp_write_only, semisynchronous (AFTER_SYNC, one replica)", "",
              "semisync/async: throughput against the async step at the same concurrency; "
              "acked / not acked: commits the primary counted as acknowledged by the replica "
              "or not during the step.", ""]
        L += table(results, "semisync", args.semisync_threads)
    L += ["", "## Throughput and lag over time", ""]
    L += [f"![{k}]({stem}-{k}.svg)" for k in KINDS if any(kk == k for kk, _ in results)]
    return L


# ---- main ---------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lockstep_bin", help="the lockstep server binary (a release build)")
    ap.add_argument("--threads", default="1,8,64,256", help="sysbench concurrencies")
    ap.add_argument("--time", type=int, default=20, help="seconds of load per step")
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=10000)
    ap.add_argument("--parallel-threads", type=int, default=16,
                    help="MariaDB replica slave_parallel_threads")
    ap.add_argument("--semisync", action="store_true",
                    help="after the async sweep, semisync steps at --semisync-threads")
    ap.add_argument("--semisync-threads", default="64,256")
    ap.add_argument("--tpcc", action="store_true",
                    help="after the sysbench sweep, our TPC-C driver (1 warehouse) at --tpcc-terminals")
    ap.add_argument("--tpcc-terminals", default="1,16,64")
    ap.add_argument("--bench-bin", default=os.path.join(compare.REPO, "target", "release",
                                                        "lockstep-workload"))
    ap.add_argument("--systems", default="lockstep,mariadb")
    ap.add_argument("--port-base", type=int, default=4110,
                    help="lockstep primary/replica, MariaDB primary/replica: base .. base+3")
    ap.add_argument("--sample-interval", type=float, default=1.0,
                    help="seconds between position samples (the lag-in-seconds resolution)")
    ap.add_argument("--catchup-timeout", type=int, default=600)
    ap.add_argument("--name", default="replication", help="report file names: DATE-COMMIT-NAME.*")
    ap.add_argument("--out", default=os.path.join(compare.REPO, "bench", "results"))
    args = ap.parse_args()

    def ints(s):  # an empty list skips that sweep (--threads "" for TPC-C only)
        return [int(t) for t in s.split(",") if t.strip()]

    args.lockstep_bin = os.path.abspath(args.lockstep_bin)  # servers run in their own dirs
    args.bench_bin = os.path.abspath(args.bench_bin)
    args.threads = ints(args.threads)
    args.semisync_threads = ints(args.semisync_threads)
    args.tpcc_terminals = ints(args.tpcc_terminals)
    if args.tpcc and not os.access(args.bench_bin, os.X_OK):
        ap.error(f"{args.bench_bin} is not an executable (cargo build --release -p lockstep-workload)")
    args.systems = [k for k in args.systems.split(",") if k in KINDS]
    if "lockstep" in args.systems and not os.access(args.lockstep_bin, os.X_OK):
        ap.error(f"{args.lockstep_bin} is not an executable")
    return args


def sweep(pairs, args, results, mode, threads, save):
    for n in threads:
        for kind, pair in pairs.items():
            results.setdefault((kind, mode), []).append(run_step(pair, args, n, mode))
            save()


def main():
    args = parse_args()
    workdir = tempfile.mkdtemp(prefix="lockstep-replbench-")
    pairs = {}

    def cleanup():
        for p in pairs.values():
            try:
                p.stop()
            except Exception as e:  # keep stopping the others
                compare.log(f"stopping {p.kind}: {e}")
        shutil.rmtree(workdir, ignore_errors=True)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    meta = compare.machine_meta(args)
    stem = f"{meta['date']}-{meta['commit']}-{args.name}"
    results = {}
    try:
        for kind in args.systems:
            pairs[kind] = Pair(kind, workdir, args.port_base + 2 * KINDS.index(kind), args)
            pairs[kind].start()
        for pair in pairs.values():
            prepare(pair, args)

        def save():
            write_report(results, args, meta, stem)

        sweep(pairs, args, results, "async", args.threads, save)
        if args.tpcc:
            sweep(pairs, args, results, "tpcc", args.tpcc_terminals, save)
        if args.semisync:
            for pair in pairs.values():
                pair.enable_semisync()
            sweep(pairs, args, results, "semisync", args.semisync_threads, save)
        compare.log(f"report: {write_report(results, args, meta, stem)}")
    finally:
        cleanup()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as e:
        compare.log(f"interrupted ({e or 'Ctrl-C'}): servers stopped, temp dir removed")
        sys.exit(130)
