"""Bank-transfer workload with a client-side journal, for crash tests.

Accounts start with a fixed balance. Each client transaction moves money in
one or more transfers; every transfer updates two accounts and inserts a row
(id, src, dst, amount) into `transfers`, all in the same transaction. The
client journals each transfer id by outcome:

* acked:   COMMIT returned OK            -> must be present after any crash
* aborted: failed before COMMIT was sent -> must never be present
* indoubt: COMMIT sent, no answer        -> either, but decided once seen

verify() checks, after a restart: the total balance is unchanged; every acked
id is present and no aborted id is; and each account's balance equals its
initial balance plus the transfers present (so a half-applied transaction,
e.g. one UPDATE without the other, or a lost transfers row, is detected).
"""

import random
import threading
import time

import pymysql

CONNECTION_LOST = (pymysql.err.OperationalError, pymysql.err.InterfaceError,
                   pymysql.err.InternalError, OSError, EOFError)
RETRYABLE = (1213, 1205)  # deadlock victim, lock wait timeout


class Bank:
    def __init__(self, server, db="bank", accounts=20, initial=1000, seed=0):
        self.server = server
        self.db = db
        self.accounts = accounts
        self.initial = initial
        self.rnd = random.Random(seed)
        self.lock = threading.Lock()
        self.next_id = 1
        self.acked = set()
        self.aborted = set()
        self.indoubt = set()
        self.worker_errors = []

    # ---- setup -------------------------------------------------------------

    def create(self):
        c = self.server.connect()
        try:
            with c.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS {self.db}")
                cur.execute(f"CREATE DATABASE {self.db}")
                cur.execute(f"USE {self.db}")
                cur.execute("CREATE TABLE accounts (id INT PRIMARY KEY, "
                            "balance BIGINT NOT NULL)")
                cur.execute("CREATE TABLE transfers (id BIGINT PRIMARY KEY, src INT NOT NULL, "
                            "dst INT NOT NULL, amount INT NOT NULL, KEY (src), KEY (dst))")
                cur.executemany("INSERT INTO accounts VALUES (%s, %s)",
                                [(i, self.initial) for i in range(self.accounts)])
        finally:
            c.close()

    # ---- load --------------------------------------------------------------

    def _ids(self, n):
        with self.lock:
            first = self.next_id
            self.next_id += n
        return list(range(first, first + n))

    def _record(self, kind, ids):
        with self.lock:
            {"acked": self.acked, "aborted": self.aborted, "indoubt": self.indoubt}[kind] \
                .update(ids)

    def _worker(self, seed, ready, stop, stats, max_txns, pause):
        rnd = random.Random(seed)
        try:
            conn = self.server.connect(db=self.db, autocommit=False, connect_timeout=5,
                                       read_timeout=30, write_timeout=30)
        except CONNECTION_LOST as e:
            self._note_error(f"connect: {e!r}")
            ready.abort()
            return
        try:
            ready.wait(30)  # all workers connected: let the load begin together
        except threading.BrokenBarrierError:
            pass
        try:
            for _ in range(max_txns):
                if stop.is_set():
                    break
                if pause:
                    time.sleep(pause)
                if rnd.random() < 0.05:
                    legs = [(a, (a + 1) % self.accounts, 1) for a in range(self.accounts)]
                else:
                    legs = [tuple(rnd.sample(range(self.accounts), 2)) + (rnd.randint(1, 50),)
                            for _ in range(rnd.randint(1, 3))]
                ids = self._ids(len(legs))
                committing = False
                try:
                    with conn.cursor() as cur:
                        for tid, (src, dst, amt) in zip(ids, legs):
                            cur.execute("UPDATE accounts SET balance = balance - %s WHERE id = %s",
                                        (amt, src))
                            cur.execute("UPDATE accounts SET balance = balance + %s WHERE id = %s",
                                        (amt, dst))
                            cur.execute("INSERT INTO transfers VALUES (%s, %s, %s, %s)",
                                        (tid, src, dst, amt))
                    committing = True
                    conn.commit()
                    with self.lock:
                        self.acked.update(ids)
                        stats["commits"] += 1
                except pymysql.err.OperationalError as e:
                    if not committing and e.args and e.args[0] in RETRYABLE:
                        with self.lock:
                            self.aborted.update(ids)
                            stats["retries"] += 1
                        try:
                            conn.rollback()
                        except CONNECTION_LOST:
                            return
                        continue
                    self._record("indoubt" if committing else "aborted", ids)
                    return  # connection gone (server killed)
                except CONNECTION_LOST:
                    self._record("indoubt" if committing else "aborted", ids)
                    return
                except pymysql.err.MySQLError as e:
                    self._record("indoubt" if committing else "aborted", ids)
                    self._note_error(f"unexpected error: {e!r}")
                    return
        finally:
            try:
                conn.close()
            except Exception:
                pass

    def _note_error(self, msg):
        with self.lock:
            self.worker_errors.append(msg)

    def start_load(self, threads, max_txns=100000, pause=0.0):
        """Start client threads (each sleeping `pause` seconds between its
        transactions, to hold the load below a replica's apply rate);
        returns (stop_event, threads, stats) once all
        clients are connected and running."""
        stop = threading.Event()
        ready = threading.Barrier(threads + 1)
        stats = {"commits": 0, "retries": 0}
        workers = [threading.Thread(target=self._worker, daemon=True,
                                    args=(self.rnd.random(), ready, stop, stats, max_txns, pause))
                   for _ in range(threads)]
        for w in workers:
            w.start()
        try:
            ready.wait(60)
        except threading.BrokenBarrierError:
            pass
        return stop, workers, stats

    @staticmethod
    def join(stop, workers, timeout=60):
        stop.set()
        deadline = time.monotonic() + timeout
        for w in workers:
            w.join(max(0.0, deadline - time.monotonic()))
        alive = [w for w in workers if w.is_alive()]
        assert not alive, f"{len(alive)} bank clients still running after {timeout}s"

    # ---- verification ------------------------------------------------------

    def verify(self):
        """Check the invariants; settle in-doubt transfers. Returns #transfers."""
        c = self.server.connect(db=self.db)
        try:
            with c.cursor() as cur:
                cur.execute("SELECT id, balance FROM accounts ORDER BY id")
                balances = dict(cur.fetchall())
                cur.execute("SELECT id, src, dst, amount FROM transfers")
                transfers = cur.fetchall()
                cur.execute("SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM transfers")
                count, total_amount = cur.fetchone()
        finally:
            c.close()
        assert len(balances) == self.accounts, f"accounts lost: {sorted(balances)}"
        assert sum(balances.values()) == self.accounts * self.initial, "total balance changed"
        present = {t[0] for t in transfers}
        assert count == len(transfers) == len(present)
        assert total_amount == sum(t[3] for t in transfers)
        lost = self.acked - present
        assert not lost, f"{len(lost)} acknowledged transfers lost, e.g. {sorted(lost)[:10]}"
        ghosts = present & self.aborted
        assert not ghosts, f"{len(ghosts)} never-committed transfers present: {sorted(ghosts)[:10]}"
        unknown = present - self.acked - self.indoubt
        assert not unknown, f"transfers nobody issued: {sorted(unknown)[:10]}"
        expect = {i: self.initial for i in range(self.accounts)}
        for _, src, dst, amt in transfers:
            expect[src] -= amt
            expect[dst] += amt
        bad = {i: (balances[i], expect[i]) for i in expect if balances[i] != expect[i]}
        assert not bad, f"balances disagree with transfers (got, expected): {bad}"
        with self.lock:  # in-doubt transfers are now decided, and must stay so
            self.acked |= self.indoubt & present
            self.aborted |= self.indoubt - present
            self.indoubt.clear()
        return len(present)
