"""Asynchronous replication end to end: a source and lockstep replicas on
loopback, set up with SQL only (CHANGE REPLICATION SOURCE TO, START
REPLICA), under a write load (bank transfers, inserts, sysbench
oltp_write_only when sysbench is installed).

Checked: replicas catch up to the source's @@gtid_executed
(WAIT_FOR_EXECUTED_GTID_SET) and then hold the same rows in every table;
a reader on a replica never sees a bank transfer half applied nor a total
that moved; a replica killed with -9 again and again resumes by itself at
restart with no GTID missing or applied twice; the administration
statements answer as MySQL 8 does (privileges, errors, SHOW REPLICA STATUS).

Every wait is bounded. LOCKSTEP_SUITE=full (or LOCKSTEP_FULL=1) runs 20
kill cycles instead of 3. LOCKSTEP_REPL_PORT_BASE fixes the ports.
"""

import collections
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import threading
import time

import pymysql
import pytest

from bank import Bank
from lockstep_server import BENCH, HOST, QUICK, TARGET, code_of, require_bench
from logfiles import binlog_text

pytestmark = pytest.mark.skipif(TARGET != "lockstep",
                                reason="lockstep replicas (the lockstep-native stream)")

FULL = not QUICK or os.environ.get("LOCKSTEP_FULL") == "1"
KILL_CYCLES = 20 if FULL else 3
CATCH_UP = 60  # seconds a replica may take to catch up after the load


def setup_source(source):
    source.sql("CREATE USER repl IDENTIFIED WITH mysql_native_password BY 'replpw'")
    source.sql("GRANT REPLICATION SLAVE ON *.* TO repl")


def start_replica(replica, source):
    c = replica.connect()
    try:
        with c.cursor() as cur:
            cur.execute(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='{HOST}', "
                        f"SOURCE_PORT={source.port}, SOURCE_USER='repl', "
                        "SOURCE_PASSWORD='replpw', SOURCE_AUTO_POSITION=1")
            cur.execute("START REPLICA")
    finally:
        c.close()


def replica_status(replica):
    c = replica.connect()
    try:
        with c.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SHOW REPLICA STATUS")
            return cur.fetchone()
    finally:
        c.close()


def wait_caught_up(source, replicas, timeout=CATCH_UP):
    """Every replica has executed the source's gtid_executed."""
    gtids = source.sql("SELECT @@gtid_executed")[0][0]
    for r in replicas:
        c = r.connect(read_timeout=timeout + 10)
        try:
            with c.cursor() as cur:
                cur.execute("SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)", (gtids, timeout))
                reached = cur.fetchone()[0]
        finally:
            c.close()
        assert reached == 0, (f"replica {r.name} did not reach {gtids} in {timeout}s: "
                              f"{replica_status(r)}")
    return gtids


def table_digests(server, databases):
    """{db.table: (CHECKSUM TABLE, sha256 of its rows in primary key
    order)}: the server's own checksum and one computed here."""
    out = {}
    c = server.connect()
    try:
        with c.cursor() as cur:
            for db in databases:
                cur.execute(f"SHOW TABLES FROM `{db}`")
                for (t,) in cur.fetchall():
                    cur.execute(f"SELECT * FROM `{db}`.`{t}` ORDER BY 1")
                    h = hashlib.sha256()
                    for row in cur.fetchall():
                        h.update(repr(row).encode())
                    cur.execute(f"CHECKSUM TABLE `{db}`.`{t}`")
                    (_, checksum), = cur.fetchall()
                    assert checksum is not None, f"{db}.{t}"
                    out[f"{db}.{t}"] = (checksum, h.hexdigest())
    finally:
        c.close()
    return out


def assert_same_data(source, replicas, databases):
    """Same gtid_executed and the same rows everywhere (a commit joins the
    executed set just before it becomes visible: a short retry)."""
    gtids = wait_caught_up(source, replicas)
    want = table_digests(source, databases)
    for r in replicas:
        deadline = time.monotonic() + 10
        while True:
            got = table_digests(r, databases)
            if got == want or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert got == want, f"replica {r.name} differs from the source"
        assert r.sql("SELECT @@gtid_executed")[0][0] == gtids
        st = replica_status(r)
        assert st["Last_SQL_Errno"] == 0, st["Last_SQL_Error"]
        assert st["Replica_SQL_Running"] == "Yes"


class Inserts:
    """One client inserting rows in batches, each batch a transaction."""

    def __init__(self, source):
        self.source = source
        self.stop = threading.Event()
        self.errors = []
        self.rows = 0
        source.sql("CREATE DATABASE ins")
        source.sql("CREATE TABLE ins.log (id BIGINT PRIMARY KEY, note VARCHAR(40), "
                   "n INT, KEY (n))")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            c = self.source.connect(db="ins", autocommit=False)
            with c.cursor() as cur:
                while not self.stop.is_set():
                    batch = [(self.rows + i, f"row {self.rows + i}", (self.rows + i) % 97)
                             for i in range(20)]
                    cur.executemany("INSERT INTO log VALUES (%s, %s, %s)", batch)
                    c.commit()
                    self.rows += len(batch)
            c.close()
        except Exception as e:  # reported by join()
            self.errors.append(repr(e))

    def join(self):
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "insert client still running"
        assert not self.errors, self.errors
        assert self.rows > 0


class BankReader:
    """Reads a replica while it replays: each read is one snapshot, in which
    the total never moves and every balance matches the transfers seen (a
    transaction visible before an earlier one it depends on, or half of
    one, breaks these)."""

    def __init__(self, replica, bank):
        self.replica = replica
        self.bank = bank
        self.stop = threading.Event()
        self.reads = 0
        self.failures = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _check(self, cur):
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute("SELECT id, balance FROM bank.accounts")
        balances = dict(cur.fetchall())
        cur.execute("SELECT src, dst, amount FROM bank.transfers")
        transfers = cur.fetchall()
        cur.execute("COMMIT")
        if not balances:
            return  # the tables are not replicated yet
        expect = {i: self.bank.initial for i in range(self.bank.accounts)}
        for src, dst, amount in transfers:
            expect[src] -= amount
            expect[dst] += amount
        if sum(balances.values()) != self.bank.accounts * self.bank.initial:
            self.failures.append(f"total {sum(balances.values())}")
        elif balances != expect:
            self.failures.append("balances disagree with the transfers visible")
        self.reads += 1

    def _run(self):
        c = self.replica.connect()
        try:
            with c.cursor() as cur:
                while not self.stop.is_set():
                    try:
                        self._check(cur)
                    except pymysql.err.ProgrammingError as e:
                        if e.args[0] != 1146:  # not created on the replica yet
                            raise
                        cur.execute("ROLLBACK")
                        time.sleep(0.05)
        except Exception as e:
            self.failures.append(repr(e))
        finally:
            c.close()

    def join(self):
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "replica reader still running"
        assert not self.failures, self.failures[:5]
        assert self.reads > 0, "the reader never saw the bank tables"


def sysbench(server, command, seconds=0, timeout=120):
    cmd = ["sysbench", "oltp_write_only", f"--mysql-host={HOST}",
           f"--mysql-port={server.port}", "--mysql-user=root", "--mysql-password=",
           "--mysql-db=sbtest", "--db-driver=mysql", "--mysql-ignore-errors=1213",
           "--tables=2", "--table-size=1000", "--threads=4", f"--time={seconds}",
           "--events=0", "--report-interval=0", "--rand-seed=1", command]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc, timeout=120):
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-3000:]
    assert "FATAL" not in out, out[-3000:]


def test_two_replicas_converge_under_load(replication_servers):
    source, r1, r2 = replication_servers(3, replica_args=["--super-read-only"])
    setup_source(source)
    for r in (r1, r2):
        start_replica(r, source)
    bank = Bank(source, accounts=20)
    bank.create()
    databases = ["bank", "ins"]
    have_sysbench = shutil.which("sysbench") is not None
    if have_sysbench:
        source.sql("CREATE DATABASE sbtest")
        finish(sysbench(source, "prepare"))
        databases.append("sbtest")
    wait_caught_up(source, [r1, r2])
    reader = BankReader(r1, bank)
    inserts = Inserts(source)
    stop, workers, stats = bank.start_load(threads=4)
    sb = sysbench(source, "run", seconds=6) if have_sysbench else None
    time.sleep(6)
    Bank.join(stop, workers)
    inserts.join()
    if sb:
        finish(sb)
    assert not bank.worker_errors, bank.worker_errors[:5]
    assert stats["commits"] > 0
    bank.verify()
    assert_same_data(source, [r1, r2], databases)
    reader.join()
    # The replicas refuse client writes (--super-read-only) but applied all.
    assert code_of(lambda: r2.sql("INSERT INTO ins.log VALUES (-1, 'x', 0)")) == 1290


def tpcc(server, *args, timeout=900):
    require_bench()
    cmd = [BENCH, "tpcc", args[0], f"--host={HOST}", f"--port={server.port}", "--user=root",
           "--password=", "--database=tpcc", *args[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"$ {' '.join(cmd)}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def test_two_replicas_converge_under_tpcc(replication_servers):
    """Our TPC-C driver (1 warehouse, 4 terminals) on the source while two
    replicas follow: the same rows, CHECKSUM TABLE and gtid_executed on all
    three, and the driver's consistency check passes on each replica."""
    source, r1, r2 = replication_servers(3, replica_args=["--super-read-only"])
    setup_source(source)
    for r in (r1, r2):
        start_replica(r, source)
    tpcc(source, "load", "--warehouses=1")
    tpcc(source, "run", "--terminals=4", "--duration=8", "--grace=60", timeout=400)
    assert_same_data(source, [r1, r2], ["tpcc"])
    for r in (r1, r2):
        assert "OK" in tpcc(r, "check", timeout=300)


def bank_pair(replication_servers):
    """A source, its replica, and a bank on the source."""
    source, replica = replication_servers(2)
    setup_source(source)
    start_replica(replica, source)
    bank = Bank(source, accounts=10)
    bank.create()
    return source, replica, bank


def test_replica_killed_again_and_again(replication_servers):
    source, replica, bank = bank_pair(replication_servers)
    # Paced: a replica applies more slowly than the source commits
    # (docs/architecture.md), and each cycle must catch up under the load.
    uuid = source.sql("SELECT @@server_uuid")[0][0]
    stop, workers, stats = bank.start_load(threads=2, pause=0.01)
    try:
        for cycle in range(KILL_CYCLES):
            time.sleep(0.5 + (cycle % 3) * 0.4)
            replica.kill()
            # What it had applied when it died: its log's newest source
            # GTID (it commits in the source's order, so 1..held).
            held = max(logged_gnos(replica, uuid), default=None)
            time.sleep(0.2)
            replica.start()  # resumes replicating by itself (replica.conf)
            st = replica_status(replica)
            assert st["Replica_SQL_Running"] == "Yes", st
            # It catches up with what the source had by then (the load
            # goes on): a GTID lost in the crash would never arrive.
            wait_caught_up(source, [replica])
            assert replica_status(replica)["Last_SQL_Errno"] == 0
            # Never more applied since the restart than was missing.
            applied = sum(w["COUNT_TRANSACTIONS_APPLIED"] for w in by_worker(replica))
            if held is not None:
                assert applied <= newest_gno(replica, uuid) - held
    finally:
        Bank.join(stop, workers)
    assert not bank.worker_errors, bank.worker_errors[:5]
    assert stats["commits"] > 0
    wait_caught_up(source, [replica])
    newest = newest_gno(source, uuid)
    # Counted from the applier's statistics: since the last restart the
    # workers applied exactly the transactions after `held`, each once.
    assert held is not None, "the replica's log held no source transaction"
    rows = wait_applied(replica, newest - held)
    assert_workers_sane(rows, uuid, held, newest)
    bank.verify()
    assert_same_data(source, [replica], ["bank"])
    assert_each_gtid_logged_once(source, replica)


def logged_gnos(server, uuid):
    """The gnos of `uuid`'s transactions in a stopped server's log."""
    return [int(g) for g in re.findall(rf"#GTID {uuid}:(\d+)", binlog_text(server.datadir))]


def newest_gno(server, uuid):
    """The highest gno of `uuid` in the server's @@gtid_executed."""
    executed = server.sql("SELECT @@gtid_executed")[0][0].replace("\n", "")
    for part in executed.split(","):
        if part.strip().startswith(uuid):
            return int(re.split(r"[:-]", part.strip())[-1])
    return 0


def by_worker(replica):
    c = replica.connect()
    try:
        with c.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SELECT * FROM performance_schema.replication_applier_status_by_worker "
                        "ORDER BY WORKER_ID")
            return cur.fetchall()
    finally:
        c.close()


def wait_applied(replica, expected, timeout=10):
    """by_worker's rows once the workers' applied counts sum to
    `expected` and none is applying (a worker counts a transaction a
    moment after it joins @@gtid_executed)."""
    deadline = time.monotonic() + timeout
    while True:
        rows = by_worker(replica)
        applied = sum(w["COUNT_TRANSACTIONS_APPLIED"] for w in rows)
        idle = all(w["APPLYING_TRANSACTION"] == "" for w in rows)
        if (applied == expected and idle) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    skipped = sum(w["COUNT_TRANSACTIONS_SKIPPED"] for w in rows)
    assert applied == expected, f"applied {applied} (skipped {skipped}), expected {expected}"
    assert idle, [w["APPLYING_TRANSACTION"] for w in rows]
    return rows


def assert_workers_sane(rows, uuid, held, newest):
    """Each worker row on its own: ids 1..n, running, no error, a last
    applied transaction from the range applied, in time order; the
    newest of them all is the source's newest."""
    assert [w["WORKER_ID"] for w in rows] == list(range(1, len(rows) + 1))
    last = []
    for w in rows:
        assert w["SERVICE_STATE"] == "ON" and w["LAST_ERROR_NUMBER"] == 0, w
        assert w["LAST_APPLIED_TRANSACTION_RETRIES_COUNT"] == 0
        if w["COUNT_TRANSACTIONS_APPLIED"] == 0:
            assert w["LAST_APPLIED_TRANSACTION"] == "", w
            continue
        src, gno = w["LAST_APPLIED_TRANSACTION"].split(":")
        assert src == uuid and held < int(gno) <= newest, w
        last.append(int(gno))
        commit = w["LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP"]
        assert commit == w["LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP"], w
        start = w["LAST_APPLIED_TRANSACTION_START_APPLY_TIMESTAMP"]
        assert commit <= start <= w["LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP"], w
    assert max(last) == newest, last



def ps_rows(server, table):
    c = server.connect()
    try:
        with c.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(f"SELECT * FROM performance_schema.{table}")
            return cur.fetchall()
    finally:
        c.close()


def test_applier_status_counts_under_load(replication_servers):
    """performance_schema's replication tables under a parallel load: the
    workers' applied counts sum to the transactions the replica applied
    since START REPLICA (it started empty: all of the source's), several
    workers took part, and the last applied, queued and processed GTIDs
    are the source's newest."""
    source, replica = replication_servers(2)
    setup_source(source)
    assert not by_worker(replica) and not ps_rows(replica, "replication_connection_status")
    source.sql("CREATE DATABASE w")
    source.sql("CREATE TABLE w.t (id INT PRIMARY KEY, v INT)")
    clients, per_client = 4, 150

    def insert(k):
        c = source.connect(db="w")
        try:
            with c.cursor() as cur:
                for i in range(per_client):
                    cur.execute("INSERT INTO t VALUES (%s, %s)", (k * per_client + i, i))
        finally:
            c.close()

    threads = [threading.Thread(target=insert, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    # Started during the load: a backlog to replay in parallel, then the
    # rest as it commits.
    time.sleep(0.3)
    start_replica(replica, source)
    for t in threads:
        t.join(120)
        assert not t.is_alive()
    assert source.sql("SELECT COUNT(*) FROM w.t")[0][0] == clients * per_client
    wait_caught_up(source, [replica])
    uuid = source.sql("SELECT @@server_uuid")[0][0]
    newest = newest_gno(source, uuid)
    rows = wait_applied(replica, newest)
    assert len(rows) >= 2
    assert_workers_sane(rows, uuid, 0, newest)
    busy = [w for w in rows if w["COUNT_TRANSACTIONS_APPLIED"] > 0]
    assert len(busy) >= 2, "one worker applied everything"
    assert sum(w["COUNT_TRANSACTIONS_SKIPPED"] for w in rows) == 0
    conn, = ps_rows(replica, "replication_connection_status")
    assert conn["SERVICE_STATE"] == "ON" and conn["SOURCE_UUID"] == uuid
    assert conn["RECEIVED_TRANSACTION_SET"] == replica_status(replica)["Retrieved_Gtid_Set"]
    assert conn["LAST_QUEUED_TRANSACTION"] == f"{uuid}:{newest}"
    assert conn["QUEUEING_TRANSACTION"] == "" and conn["LAST_ERROR_NUMBER"] == 0
    assert (conn["LAST_QUEUED_TRANSACTION_START_QUEUE_TIMESTAMP"]
            <= conn["LAST_QUEUED_TRANSACTION_END_QUEUE_TIMESTAMP"])
    coord, = ps_rows(replica, "replication_applier_status_by_coordinator")
    assert coord["SERVICE_STATE"] == "ON"
    assert coord["LAST_PROCESSED_TRANSACTION"] == f"{uuid}:{newest}"
    applier, = ps_rows(replica, "replication_applier_status")
    assert applier["SERVICE_STATE"] == "ON" and applier["COUNT_TRANSACTIONS_RETRIES"] == 0
    assert applier["REMAINING_DELAY"] is None
    # Idle, the source sends heartbeats (every 0.5 s), counted here.
    time.sleep(1.5)
    conn, = ps_rows(replica, "replication_connection_status")
    assert conn["COUNT_RECEIVED_HEARTBEATS"] >= 1, conn
    assert conn["LAST_HEARTBEAT_TIMESTAMP"] >= conn["LAST_QUEUED_TRANSACTION_END_QUEUE_TIMESTAMP"]
    # Stopped: the rows stay, OFF, with their counts.
    replica.sql("STOP REPLICA")
    stopped = by_worker(replica)
    assert {w["SERVICE_STATE"] for w in stopped} == {"OFF"}
    assert sum(w["COUNT_TRANSACTIONS_APPLIED"] for w in stopped) == newest
    assert ps_rows(replica, "replication_connection_status")[0]["SERVICE_STATE"] == "OFF"
    assert ps_rows(replica, "replication_applier_status")[0]["SERVICE_STATE"] == "OFF"


def assert_each_gtid_logged_once(source, replica):
    """Counted from the replica's own log after the kill cycles: every
    source transaction it holds was applied (logged) exactly once, with no
    gap up to the source's newest (a checkpoint may have removed a prefix,
    which gtid_executed, equal on both, still covers)."""
    uuid = source.sql("SELECT @@server_uuid")[0][0]
    newest = int(source.sql("SELECT @@gtid_executed")[0][0].split("-")[-1])
    replica.kill()  # keep the log as it is (a clean stop checkpoints)
    gnos = [int(g) for g in re.findall(rf"#GTID {uuid}:(\d+)", binlog_text(replica.datadir))]
    replica.start()
    assert gnos, "the replica's log holds none of the source's transactions"
    dup = sorted(g for g, n in collections.Counter(gnos).items() if n > 1)
    assert not dup, f"applied twice: {dup[:10]}"
    assert sorted(gnos) == list(range(min(gnos), newest + 1)), "a GTID is missing"


def test_administration(replication_servers):
    source, replica = replication_servers(2)
    setup_source(source)
    # Nothing configured: an empty status, START refused as in MySQL.
    assert replica.sql("SHOW REPLICA STATUS") == ()
    assert code_of(lambda: replica.sql("START REPLICA")) == 1200
    # Privileges: SUPER (for REPLICATION_SLAVE_ADMIN) or REPLICATION CLIENT.
    replica.sql("CREATE USER nobody IDENTIFIED WITH mysql_native_password BY 'pw'")
    replica.sql("CREATE USER watcher IDENTIFIED WITH mysql_native_password BY 'pw'")
    replica.sql("GRANT REPLICATION CLIENT ON *.* TO watcher")

    def as_user(user, statement):
        return replica.sql(statement, user=user, password="pw")

    for stmt in ["START REPLICA", "STOP SLAVE", "RESET REPLICA ALL", "SHOW REPLICA STATUS",
                 "CHANGE MASTER TO MASTER_HOST='x'"]:
        assert code_of(lambda: as_user("nobody", stmt)) == 1227, stmt
    assert as_user("watcher", "SHOW SLAVE STATUS") == ()
    assert code_of(lambda: as_user("watcher", "STOP REPLICA")) == 1227
    # Refused rather than ignored.
    assert code_of(lambda: replica.sql("CHANGE REPLICATION SOURCE TO SOURCE_DELAY=5")) == 1235
    assert code_of(lambda: replica.sql("START REPLICA SQL_THREAD")) == 1235

    # The old spelling configures the same replica.
    replica.sql(f"CHANGE MASTER TO MASTER_HOST='{HOST}', MASTER_PORT={source.port}, "
                "MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_AUTO_POSITION=1")
    conf = os.path.join(replica.datadir, "replica.conf")
    assert stat.S_IMODE(os.stat(conf).st_mode) == 0o600
    replica.sql("START SLAVE")
    source.sql("CREATE DATABASE adm")
    source.sql("CREATE TABLE adm.t (id INT PRIMARY KEY)")
    source.sql("INSERT INTO adm.t VALUES (1), (2)")
    wait_caught_up(source, [replica])
    st = replica_status(replica)
    columns = list(st)
    assert columns[:4] == ["Replica_IO_State", "Source_Host", "Source_User", "Source_Port"]
    assert len(columns) == 60 and columns[-1] == "Network_Namespace"
    assert st["Replica_IO_Running"] == "Yes" and st["Replica_SQL_Running"] == "Yes"
    assert st["Source_Port"] == source.port and st["Source_User"] == "repl"
    assert st["Source_Server_Id"] == 1
    assert st["Source_UUID"] == source.sql("SELECT @@server_uuid")[0][0]
    # The replica's own users (CREATE USER above) are its own GTIDs.
    assert st["Executed_Gtid_Set"] == replica.sql("SELECT @@gtid_executed")[0][0]
    assert source.sql("SELECT @@gtid_executed")[0][0] in st["Executed_Gtid_Set"]
    assert st["Auto_Position"] == 1 and st["Seconds_Behind_Source"] == 0
    slave = replica.connect()
    with slave.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SHOW SLAVE STATUS")
        assert "Slave_IO_Running" in cur.fetchone()
    slave.close()
    assert replica.sql("SELECT @@server_id")[0][0] == 2
    # While running: CHANGE is 3021, RESET is 3081; START again is a note.
    assert code_of(lambda: replica.sql("CHANGE REPLICATION SOURCE TO SOURCE_PORT=1")) == 3021
    assert code_of(lambda: replica.sql("RESET REPLICA")) == 3081
    c = replica.connect()
    with c.cursor() as cur:
        cur.execute("START REPLICA")
        cur.execute("SHOW WARNINGS")
        assert [w[1] for w in cur.fetchall()] == [3083]
    c.close()
    # KILL of the source's dump connection: the replica reconnects.
    dumps = [r[0] for r in source.sql("SHOW PROCESSLIST") if r[4] == "Binlog Dump GTID"]
    assert len(dumps) == 1, source.sql("SHOW PROCESSLIST")
    source.sql(f"KILL {dumps[0]}")
    source.sql("INSERT INTO adm.t VALUES (10)")
    wait_caught_up(source, [replica])
    source.sql("DELETE FROM adm.t WHERE id = 10")
    # A restart (clean or not) resumes a running replica...
    replica.restart(crash=True)
    # The source stops at once though a replica streams from it.
    started = time.monotonic()
    source.stop()
    assert time.monotonic() - started < 3
    source.start()
    source.sql("INSERT INTO adm.t VALUES (3)")
    wait_caught_up(source, [replica])
    # ...but not a stopped one.
    replica.sql("STOP REPLICA")
    replica.restart()
    st = replica_status(replica)
    assert st["Replica_IO_Running"] == "No" and st["Replica_SQL_Running"] == "No"
    source.sql("INSERT INTO adm.t VALUES (4)")
    time.sleep(0.5)
    assert replica.sql("SELECT COUNT(*) FROM adm.t")[0][0] == 3
    replica.sql("START REPLICA")
    wait_caught_up(source, [replica])
    replica.sql("STOP REPLICA")
    replica.sql("RESET REPLICA ALL")
    assert replica.sql("SHOW REPLICA STATUS") == ()
    assert not os.path.exists(conf)


def wait_status(replica, pred, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        st = replica_status(replica)
        if pred(st) or time.monotonic() > deadline:
            return st
        time.sleep(0.1)


def test_sha2_account_and_applier_error(replication_servers):
    source, replica = replication_servers(2)
    # An account with MySQL 8's default plugin: over this plain connection
    # the password goes RSA-encrypted, only with GET_SOURCE_PUBLIC_KEY=1.
    source.sql("CREATE USER repl2 IDENTIFIED BY 'sha2pw'")
    source.sql("GRANT REPLICATION SLAVE ON *.* TO repl2")
    replica.sql(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='{HOST}', SOURCE_PORT={source.port}, "
                "SOURCE_USER='repl2', SOURCE_PASSWORD='sha2pw', SOURCE_AUTO_POSITION=1")
    replica.sql("START REPLICA")
    st = wait_status(replica, lambda s: s["Last_IO_Errno"] != 0)
    assert st["Last_IO_Errno"] == 2061, st
    assert st["Replica_IO_Running"] == "Connecting"
    replica.sql("STOP REPLICA")
    replica.sql("CHANGE REPLICATION SOURCE TO GET_SOURCE_PUBLIC_KEY=1")
    replica.sql("START REPLICA")
    source.sql("CREATE DATABASE e")
    source.sql("CREATE TABLE e.t (id INT PRIMARY KEY, v INT)")
    wait_caught_up(source, [replica])
    st = replica_status(replica)
    assert st["Get_Source_public_key"] == 1 and st["Last_IO_Errno"] == 0
    # A row written on the replica behind replication's back: the source's
    # insert of the same key stops the applier with 1062, shown in status.
    replica.sql("INSERT INTO e.t VALUES (1, 100)")
    source.sql("INSERT INTO e.t VALUES (1, 1), (2, 2)")
    st = wait_status(replica, lambda s: s["Replica_SQL_Running"] == "No")
    assert st["Last_SQL_Errno"] == 1062 and st["Last_Errno"] == 1062, st
    assert "Duplicate entry" in st["Last_SQL_Error"]
    assert st["Seconds_Behind_Source"] is None
    assert st["Replica_IO_Running"] == "Yes"
    assert st["Last_SQL_Error_Timestamp"] != ""
    # The worker that stopped on it shows it, and the transaction.
    failed = [w for w in by_worker(replica) if w["LAST_ERROR_NUMBER"] != 0]
    assert len(failed) == 1 and failed[0]["LAST_ERROR_NUMBER"] == 1062, failed
    assert failed[0]["APPLYING_TRANSACTION"] in st["Last_SQL_Error"]
    coord, = ps_rows(replica, "replication_applier_status_by_coordinator")
    assert coord["LAST_ERROR_NUMBER"] == 1062 and coord["SERVICE_STATE"] == "OFF"
    # Repaired by hand, START REPLICA goes on from where it stopped.
    replica.sql("DELETE FROM e.t WHERE id = 1")
    replica.sql("START REPLICA")
    wait_caught_up(source, [replica])
    assert replica.sql("SELECT * FROM e.t ORDER BY id") == ((1, 1), (2, 2))
    assert replica_status(replica)["Last_SQL_Errno"] == 0


def hold_row(replica, sql):
    """A client on the replica holding row locks: SELECT ... FOR UPDATE in
    an open transaction (roll it back to let go)."""
    c = replica.connect()
    with c.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute(sql)
    return c


def test_applier_retries_a_transaction_that_timed_out(replication_servers):
    source, replica = replication_servers(2)
    setup_source(source)
    source.sql("CREATE DATABASE r")
    source.sql("CREATE TABLE r.t (id INT PRIMARY KEY, v INT)")
    source.sql("INSERT INTO r.t VALUES (1, 0), (2, 0)")
    # The applier's row lock waits follow the global lock wait timeout.
    replica.sql("SET GLOBAL innodb_lock_wait_timeout = 1")
    assert replica.sql("SELECT @@replica_transaction_retries, @@slave_transaction_retries") \
        == ((10, 10),)
    start_replica(replica, source)
    wait_caught_up(source, [replica])
    # A client holds the row for 2.5 s: the applier's update of it times
    # out (1205) after 1 s, is rolled back and run again, and commits once
    # the client lets go. The other row's transaction is not held up.
    holder = hold_row(replica, "SELECT * FROM r.t WHERE id = 1 FOR UPDATE")
    source.sql("UPDATE r.t SET v = 1 WHERE id = 1")
    source.sql("UPDATE r.t SET v = 1 WHERE id = 2")
    time.sleep(2.5)
    holder.rollback()
    holder.close()
    wait_caught_up(source, [replica])
    assert replica.sql("SELECT v FROM r.t ORDER BY id") == ((1,), (1,))
    st = replica_status(replica)
    assert st["Replica_SQL_Running"] == "Yes" and st["Last_SQL_Errno"] == 0, st
    applier, = ps_rows(replica, "replication_applier_status")
    assert applier["COUNT_TRANSACTIONS_RETRIES"] >= 1, applier
    retried = [w for w in by_worker(replica)
               if w["LAST_APPLIED_TRANSACTION_RETRIES_COUNT"] > 0]
    assert len(retried) == 1, retried
    w = retried[0]
    assert w["LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_NUMBER"] == 1205, w
    assert "Lock wait timeout" in w["LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_MESSAGE"]
    assert w["LAST_APPLIED_TRANSACTION_RETRIES_COUNT"] <= applier["COUNT_TRANSACTIONS_RETRIES"]
    # With retries off, the same conflict stops the applier with 1205.
    replica.sql("SET GLOBAL slave_transaction_retries = 0")
    assert replica.sql("SELECT @@replica_transaction_retries") == ((0,),)
    holder = hold_row(replica, "SELECT * FROM r.t WHERE id = 1 FOR UPDATE")
    source.sql("UPDATE r.t SET v = 2 WHERE id = 1")
    st = wait_status(replica, lambda s: s["Replica_SQL_Running"] == "No", timeout=15)
    assert st["Last_SQL_Errno"] == 1205, st
    holder.rollback()
    holder.close()
    replica.sql("START REPLICA")
    wait_caught_up(source, [replica])
    assert replica.sql("SELECT v FROM r.t ORDER BY id") == ((2,), (1,))


def peak_rss_kib(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))


# 700,000 rows of ~80 bytes: a record over the 64 MiB a client packet may
# hold and several times the log buffer, so it is durable in parts.
BIG_ROWS = 1_000_000 if FULL else 700_000


def test_large_transaction_replicates_without_stalling_the_rest(replication_servers):
    source, replica = replication_servers(2)
    setup_source(source)
    source.sql("CREATE DATABASE big")
    source.sql("CREATE TABLE big.t (id INT PRIMARY KEY, pad CHAR(60))")
    source.sql("CREATE TABLE big.small (id INT PRIMARY KEY, at DOUBLE)")
    start_replica(replica, source)
    wait_caught_up(source, [replica])
    rss_before = peak_rss_kib(replica)

    def big():
        c = source.connect()
        with c.cursor() as cur:
            cur.execute(f"SET SESSION cte_max_recursion_depth = {BIG_ROWS}")
            cur.execute("INSERT INTO big.t WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL "
                        f"SELECT n + 1 FROM s WHERE n < {BIG_ROWS}) "
                        "SELECT n, REPEAT('x', 60) FROM s")
        c.commit()
        c.close()

    # Small transactions before, during and after the big one.
    writer = threading.Thread(target=big)
    writer.start()
    n = 0
    while writer.is_alive() or n < 10:
        n += 1
        source.sql(f"INSERT INTO big.small VALUES ({n}, {time.time()})")
        time.sleep(0.1)
    writer.join()
    # On the replica: the small transactions committed after the big one
    # become visible right after it, not one apply later.
    deadline = time.monotonic() + 180
    big_seen = None
    while time.monotonic() < deadline:
        (rows, smalls), = replica.sql("SELECT (SELECT COUNT(*) FROM big.t), "
                                      "(SELECT COUNT(*) FROM big.small)")
        if rows == BIG_ROWS and big_seen is None:
            big_seen = time.monotonic()
        if big_seen is not None and smalls == n:
            break
        time.sleep(0.05)
    assert big_seen is not None, "the big transaction never arrived"
    assert smalls == n, f"{smalls} of {n} small transactions"
    assert time.monotonic() - big_seen < 3, "the transactions after it waited"
    assert_same_data(source, [replica], ["big"])
    grew_mib = (peak_rss_kib(replica) - rss_before) / 1024
    # About 80 MiB of rows: the record, its decoded rows and the table
    # are held at once; far more means a copy per worker or a leak.
    print(f"replica peak RSS grew {grew_mib:.0f} MiB for {BIG_ROWS} rows")
    assert grew_mib < 2048, grew_mib


def test_source_killed_under_load(replication_servers):
    """The source crashes (kill -9) under load and restarts: the replica
    reconnects by itself and ends with every transaction the source kept."""
    source, replica, bank = bank_pair(replication_servers)
    stop, workers, _ = bank.start_load(threads=3)
    time.sleep(1.5)
    source.kill()
    Bank.join(stop, workers)
    source.start()
    bank.verify()
    st = wait_status(replica, lambda s: s["Replica_IO_Running"] == "Yes", timeout=30)
    assert st["Replica_IO_Running"] == "Yes", st
    stop, workers, stats = bank.start_load(threads=2)
    time.sleep(1)
    Bank.join(stop, workers)
    assert stats["commits"] > 0
    bank.verify()
    assert_same_data(source, [replica], ["bank"])


def column_histograms(server, db):
    return {(r[0], r[1]): json.loads(r[2])["histogram-type"]
            for r in server.sql("SELECT TABLE_NAME, COLUMN_NAME, HISTOGRAM FROM "
                                "information_schema.COLUMN_STATISTICS WHERE SCHEMA_NAME = "
                                f"'{db}' ORDER BY 1, 2")}


def test_histograms_replicate(replication_servers):
    """ANALYZE TABLE ... UPDATE / DROP HISTOGRAM on the source reach the
    replica: its COLUMN_STATISTICS shows what the source's does."""
    source, replica = replication_servers(2)
    setup_source(source)
    start_replica(replica, source)
    source.sql("CREATE DATABASE h")
    source.sql("CREATE TABLE h.t (id INT PRIMARY KEY, grp INT, name VARCHAR(20))")
    source.sql("INSERT INTO h.t VALUES " +
               ", ".join(f"({i}, {i % 5}, 'n{i % 300}')" for i in range(1000)))
    source.sql("ANALYZE TABLE h.t UPDATE HISTOGRAM ON grp, name WITH 16 BUCKETS")
    want = {("t", "grp"): "singleton", ("t", "name"): "equi-height"}
    assert column_histograms(source, "h") == want
    wait_caught_up(source, [replica])
    assert column_histograms(replica, "h") == want
    source.sql("ANALYZE TABLE h.t DROP HISTOGRAM ON grp")
    wait_caught_up(source, [replica])
    assert column_histograms(replica, "h") == {("t", "name"): "equi-height"}
    source.sql("ANALYZE TABLE h.t DROP HISTOGRAM ON name")
    wait_caught_up(source, [replica])
    assert column_histograms(replica, "h") == {}
    assert replica_status(replica)["Last_SQL_Errno"] == 0
