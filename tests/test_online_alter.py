"""Online ALTER TABLE: a writer keeps committing while a big table is
rebuilt (ADD COLUMN, ADD INDEX), the table ends equal to what the writer
committed, and kill -9 during the copy or right after the switch leaves
the old table or the new one, never a mix. Ports 4500-4599."""

import random
import socket
import threading
import time

import pymysql

from lockstep_server import HOST, TARGET, Server

ROWS = 200_000


def run(conn, sql, args=None):
    with conn.cursor() as c:
        c.execute(sql, args)
        return c.fetchall()


def port_in_range():
    for port in random.sample(range(4500, 4600), 100):
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port in 4500-4599")


def start(tmp_path, name):
    server = Server(tmp_path / name, name=name)
    server.port = port_in_range()
    server.start()
    return server


def load(conn, rows):
    run(conn, "CREATE DATABASE IF NOT EXISTS o")
    run(conn, "USE o")
    run(conn, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, s VARCHAR(20))")
    for lo in range(0, rows, 5000):
        values = ",".join(f"({i},{i},'r{i}')" for i in range(lo, min(lo + 5000, rows)))
        run(conn, f"INSERT INTO t VALUES {values}")
    return {i: i for i in range(rows)}


class Writer(threading.Thread):
    """Autocommit inserts, updates and deletes until stopped; `model` is
    what it committed, `lat` (start time, seconds) per statement."""

    def __init__(self, server, model, next_id):
        super().__init__(daemon=True)
        self.server, self.model, self.next_id = server, model, next_id
        self.stop, self.lat, self.errors = threading.Event(), [], []

    def run(self):
        conn = self.server.connect(db="o", read_timeout=120)
        rnd = random.Random(7)
        while not self.stop.is_set():
            op = rnd.randrange(3)
            t0 = time.monotonic()
            try:
                if op == 0:
                    i = self.next_id
                    run(conn, "INSERT INTO t (id, v) VALUES (%s, %s)", (i, -i))
                    self.model[i], self.next_id = -i, i + 1
                elif op == 1:
                    i = rnd.randrange(self.next_id)
                    run(conn, "UPDATE t SET v = v + 1 WHERE id = %s", (i,))
                    if i in self.model:
                        self.model[i] += 1
                else:
                    i = rnd.randrange(self.next_id)
                    run(conn, "DELETE FROM t WHERE id = %s", (i,))
                    self.model.pop(i, None)
            except pymysql.MySQLError as e:
                self.errors.append(e)
                return
            self.lat.append((t0, time.monotonic() - t0))
        conn.close()

    def max_stall(self, since, until):
        inside = [d for t0, d in self.lat if since <= t0 + d and t0 <= until]
        return max(inside, default=0.0), len(inside)


def timed_alter(server, model, next_id, sql):
    w = Writer(server, model, next_id)
    w.start()
    time.sleep(0.5)
    conn = server.connect(db="o", read_timeout=300)
    t0 = time.monotonic()
    run(conn, sql)
    t1 = time.monotonic()
    time.sleep(0.3)
    w.stop.set()
    w.join(60)
    assert not w.errors, w.errors
    stall, n = w.max_stall(t0, t1)
    conn.close()
    return t1 - t0, stall, n, w.next_id


def table_rows(conn):
    return dict(run(conn, "SELECT id, v FROM o.t"))


def test_writers_keep_committing_during_online_alter(tmp_path):
    if TARGET != "lockstep":
        return
    server = start(tmp_path, "online")
    try:
        conn = server.connect()
        model = load(conn, ROWS)
        next_id = ROWS
        results = {}
        for label, sql in [
            ("add column online", "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7, LOCK=NONE"),
            ("add index online", "ALTER TABLE t ADD INDEX iv (v)"),
            ("add column exclusive", "ALTER TABLE t ADD COLUMN d INT DEFAULT 1, LOCK=EXCLUSIVE"),
        ]:
            took, stall, n, next_id = timed_alter(server, model, next_id, sql)
            results[label] = (took, stall, n)
            print(f"{label}: ALTER {took * 1000:.0f} ms, writer max stall "
                  f"{stall * 1000:.0f} ms, {n} writer statements overlapped")
        assert table_rows(conn) == model
        assert run(conn, "SELECT COUNT(*) FROM o.t FORCE INDEX (iv)")[0][0] == len(model)
        assert run(conn, "SELECT COUNT(*) FROM o.t WHERE c <> 7 OR d <> 1")[0][0] == 0
        # Online, the writer ran on through the copy; exclusive, it waited.
        took, stall, n = results["add column online"]
        assert n > 10 and stall < took
        conn.close()
    finally:
        server.cleanup()


def test_kill_during_online_alter_leaves_old_or_new_table(tmp_path):
    if TARGET != "lockstep":
        return
    server = start(tmp_path, "crash")
    try:
        conn = server.connect()
        load(conn, ROWS // 2)
        conn.close()
        next_id = ROWS // 2
        for cycle in range(3):
            w = Writer(server, {}, next_id)
            w.start()
            conn = server.connect(db="o", read_timeout=300)
            column = f"c{cycle}"
            sql = f"ALTER TABLE t ADD COLUMN {column} INT NOT NULL DEFAULT {cycle}, ADD INDEX i{cycle} (v)"
            alter = threading.Thread(target=lambda: code_of(conn, sql), daemon=True)
            alter.start()
            # During the copy on even cycles, just after the switch on odd.
            time.sleep(0.2 if cycle % 2 == 0 else 0.0)
            if cycle % 2:
                alter.join(120)
            server.kill()
            alter.join(30)
            w.join(30)
            next_id = w.next_id + 10
            server.start()
            conn = server.connect(db="o")
            create = run(conn, "SHOW CREATE TABLE t")[0][1]
            has_col = f"`{column}`" in create
            assert has_col == (f"KEY `i{cycle}`" in create), create
            total = run(conn, "SELECT COUNT(*) FROM t")[0][0]
            if has_col:
                assert run(conn, f"SELECT COUNT(*) FROM t FORCE INDEX (i{cycle})")[0][0] == total
                assert run(conn, f"SELECT COUNT(*) FROM t WHERE {column} <> {cycle}")[0][0] == 0
            present = {r[0] for r in run(conn, "SELECT id FROM t WHERE id >= %s", (ROWS // 2,))}
            # Inserted rows acknowledged and not deleted since are there.
            missing = {i for i in w.model if i not in present}
            assert not missing, sorted(missing)[:10]
            print(f"cycle {cycle}: new table {has_col}, {total} rows")
            conn.close()
    finally:
        server.cleanup()


def code_of(conn, sql):
    try:
        run(conn, sql)
    except pymysql.MySQLError as e:
        return e.args[0]
    return None
