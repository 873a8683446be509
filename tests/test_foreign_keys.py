"""Foreign keys end to end: concurrent parent deletes and child inserts never
leave an orphan (the child's parent check holds a shared lock on the parent
row, as InnoDB's does), and constraints survive a clean restart (checkpoint)
and kill -9 (log replay).

LOCKSTEP_FK_SECONDS (default 4 quick, 15 full): how long the race runs.
"""

import os
import random
import threading
import time

import pymysql
import pytest

from lockstep_server import QUICK

SECONDS = float(os.environ.get("LOCKSTEP_FK_SECONDS", "4" if QUICK else "15"))
PARENTS = 40
RETRY = (1213, 1205)  # deadlock victim, lock wait timeout

ORPHANS = ("SELECT COUNT(*) FROM c LEFT JOIN p ON p.id = c.pid "
           "WHERE c.pid IS NOT NULL AND p.id IS NULL")


def _setup(conn, rule):
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE p (id INT PRIMARY KEY, v INT)")
        cur.execute("CREATE TABLE c (id INT AUTO_INCREMENT PRIMARY KEY, pid INT, "
                    f"FOREIGN KEY (pid) REFERENCES p (id) {rule})")
        cur.executemany("INSERT INTO p VALUES (%s, 0)", [(i,) for i in range(PARENTS)])


def _race(connect, seed, isolation):
    """Deleters remove random parents (and put them back), inserters add
    children of random parents, some in transactions held open for a
    moment; returns the outcome counts. Every error must be an FK refusal
    (1451/1452) or a retryable lock error."""
    stop = threading.Event()
    counts = {"deleted": 0, "inserted": 0, "1451": 0, "1452": 0, "retry": 0}
    errors = []
    lock = threading.Lock()

    def bump(key):
        with lock:
            counts[key] += 1

    def run(body, n):
        rnd = random.Random(seed * 100 + n)
        conn = connect(autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
        try:
            while not stop.is_set():
                try:
                    body(conn, rnd)
                except pymysql.err.MySQLError as e:
                    code = e.args[0]
                    try:
                        conn.rollback()
                    except pymysql.err.MySQLError:
                        pass
                    if code in (1451, 1452):
                        bump(str(code))
                    elif code in RETRY:
                        bump("retry")
                    else:
                        errors.append(repr(e))
                        return
        finally:
            conn.close()

    def deleter(conn, rnd):
        pid = rnd.randrange(PARENTS)
        with conn.cursor() as cur:
            if cur.execute("DELETE FROM p WHERE id = %s", (pid,)):
                bump("deleted")
            cur.execute("INSERT IGNORE INTO p VALUES (%s, 0)", (rnd.randrange(PARENTS),))

    def inserter(conn, rnd):
        with conn.cursor() as cur:
            cur.execute("BEGIN")
            for _ in range(rnd.randint(1, 3)):
                cur.execute("INSERT INTO c (pid) VALUES (%s)", (rnd.randrange(PARENTS),))
            if rnd.random() < 0.3:
                time.sleep(0.005)
            cur.execute("COMMIT")
            bump("inserted")

    def remover(conn, rnd):
        # Children go too, so that parents become deletable again.
        with conn.cursor() as cur:
            cur.execute("DELETE FROM c WHERE pid = %s", (rnd.randrange(PARENTS),))

    bodies = [deleter, deleter, inserter, inserter, inserter, remover]
    threads = [threading.Thread(target=run, args=(b, n)) for n, b in enumerate(bodies)]
    for t in threads:
        t.start()
    checker = connect(autocommit=True)
    deadline = time.monotonic() + SECONDS
    seen = 0
    while time.monotonic() < deadline:
        with checker.cursor() as cur:
            cur.execute(ORPHANS)
            seen = max(seen, cur.fetchone()[0])
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert seen == 0, f"{seen} orphans seen during the run"
    return counts


# Under READ COMMITTED no gap lock guards the child index: only the shared
# lock on the parent row keeps a delete from passing an insert.
@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
@pytest.mark.parametrize("rule", ["", "ON DELETE CASCADE", "ON DELETE SET NULL"])
def test_concurrent_deletes_and_inserts_leave_no_orphan(connect, rule, isolation):
    conn = connect()
    _setup(conn, rule)
    counts = _race(connect, len(rule), isolation)
    with conn.cursor() as cur:
        cur.execute(ORPHANS)
        assert cur.fetchone()[0] == 0
        cur.execute("SELECT COUNT(*) FROM c")
        children = cur.fetchone()[0]
    print(f"\n{rule or 'NO ACTION'} {isolation}: {counts}, {children} children left")
    assert counts["inserted"] > 0 and counts["deleted"] > 0, counts
    if not rule:
        assert counts["1451"] > 0, "no delete ever met a child"
    assert counts["1452"] > 0, "no insert ever lost its parent"


def _check_constraints(conn):
    with conn.cursor() as cur:
        cur.execute("SHOW CREATE TABLE c")
        text = cur.fetchone()[1]
        assert "CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) " \
               "ON DELETE CASCADE" in text, text
        assert "CONSTRAINT `c_g` FOREIGN KEY (`g`) REFERENCES `g` (`id`)" in text, text
        with pytest.raises(pymysql.err.IntegrityError) as e:
            cur.execute("INSERT INTO c (pid) VALUES (999)")
        assert e.value.args[0] == 1452
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("DROP TABLE p")
        assert e.value.args[0] == 3730
        cur.execute("SELECT COUNT(*) FROM c WHERE pid = 1")
        before = cur.fetchone()[0]
        assert before > 0
        cur.execute("DELETE FROM p WHERE id = 1")
        cur.execute("SELECT COUNT(*) FROM c WHERE pid = 1")
        assert cur.fetchone()[0] == 0, "the cascade ran"
        cur.execute("INSERT INTO p VALUES (1, 0)")
        cur.execute("INSERT INTO c (pid) VALUES (1), (1)")


def _crash(server, conn):
    """kill -9 and restart; a new connection to database fk."""
    conn.close()
    server.kill()
    server.start()
    return server.connect(db="fk")


def test_foreign_keys_survive_restart_and_kill9(server_factory):
    server = server_factory("fk_restart")
    conn = server.connect()
    with conn.cursor() as cur:
        for sql in ["CREATE DATABASE fk", "USE fk",
                    "CREATE TABLE p (id INT PRIMARY KEY, v INT)",
                    "CREATE TABLE g (id INT PRIMARY KEY)",
                    "CREATE TABLE c (id INT AUTO_INCREMENT PRIMARY KEY, pid INT, g INT, "
                    "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
                    "INSERT INTO p VALUES (1, 0), (2, 0)",
                    "INSERT INTO c (pid) VALUES (1), (1), (2)"]:
            cur.execute(sql)
    conn.close()
    # A clean stop checkpoints: the constraint comes back from the snapshot.
    assert server.stop() == 0
    server.start()
    conn = server.connect(db="fk")
    with conn.cursor() as cur:
        # Logged after the checkpoint: comes back from the log after kill -9.
        cur.execute("ALTER TABLE c ADD CONSTRAINT c_g FOREIGN KEY (g) REFERENCES g (id)")
    conn = _crash(server, conn)
    _check_constraints(conn)
    with conn.cursor() as cur:
        cur.execute("ALTER TABLE c DROP FOREIGN KEY c_g")
        # A rebuild and a new constraint: one logged record.
        cur.execute("ALTER TABLE c ADD COLUMN h INT, "
                    "ADD CONSTRAINT c_h FOREIGN KEY (h) REFERENCES g (id)")
        # A parent's renamed column: its children's lists change with it.
        cur.execute("ALTER TABLE g RENAME COLUMN id TO gid")
    conn = _crash(server, conn)
    with conn.cursor() as cur:
        cur.execute("SHOW CREATE TABLE c")
        text = cur.fetchone()[1]
        assert "c_ibfk_1" in text and "CONSTRAINT `c_g`" not in text, text
        assert "CONSTRAINT `c_h` FOREIGN KEY (`h`) REFERENCES `g` (`gid`)" in text, text
        with pytest.raises(pymysql.err.IntegrityError) as e:
            cur.execute("UPDATE c SET h = 5")
        assert e.value.args[0] == 1452
    conn.close()


def test_creating_a_constraint_needs_references_on_the_parent(server, connect, db):
    """MySQL's rule: CREATE TABLE / ALTER TABLE ADD FOREIGN KEY needs the
    REFERENCES privilege on the parent (1142 without it); the cascades a
    user's delete sets off need no privilege on the child."""
    root = connect()
    with root.cursor() as cur:
        cur.execute("CREATE TABLE p (id INT PRIMARY KEY)")
        cur.execute("CREATE TABLE kid (id INT PRIMARY KEY, pid INT)")
        cur.execute("DROP USER IF EXISTS fk_user@'%'")
        cur.execute("CREATE USER fk_user@'%' IDENTIFIED BY 'pw'")
        cur.execute(f"GRANT CREATE, ALTER, DROP, INSERT, DELETE, SELECT ON `{db}`.kid TO fk_user@'%'")
        cur.execute(f"GRANT CREATE ON `{db}`.c2 TO fk_user@'%'")
        cur.execute(f"GRANT DELETE, SELECT ON `{db}`.p TO fk_user@'%'")
    try:
        user = server.connect(db=db, user="fk_user", password="pw")
        with user.cursor() as cur:
            for sql in ["CREATE TABLE c2 (id INT PRIMARY KEY, pid INT, "
                        "FOREIGN KEY (pid) REFERENCES p (id))",
                        "ALTER TABLE kid ADD FOREIGN KEY (pid) REFERENCES p (id)"]:
                with pytest.raises(pymysql.err.OperationalError) as e:
                    cur.execute(sql)
                assert e.value.args[0] == 1142, e.value
                assert "REFERENCES command denied" in e.value.args[1]
        with root.cursor() as cur:
            cur.execute(f"GRANT REFERENCES ON `{db}`.p TO fk_user@'%'")
            cur.execute("INSERT INTO p VALUES (1)")
        user.close()
        user = server.connect(db=db, user="fk_user", password="pw")
        with user.cursor() as cur:
            cur.execute("ALTER TABLE kid ADD FOREIGN KEY (pid) REFERENCES p (id) "
                        "ON DELETE CASCADE")
            cur.execute("INSERT INTO kid VALUES (1, 1)")
            cur.execute("DELETE FROM p WHERE id = 1")
            cur.execute("SELECT COUNT(*) FROM kid")
            assert cur.fetchone()[0] == 0
        user.close()
    finally:
        with root.cursor() as cur:
            cur.execute("DROP USER IF EXISTS fk_user@'%'")
