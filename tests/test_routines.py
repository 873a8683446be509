"""Stored procedures, functions and triggers over the wire: a CALL's
result sets arrive as multiple results before its OK (text and binary
protocol), OUT parameters land in user variables, and every definition
survives a restart and a kill -9."""

import pymysql
import pytest

from lockstep_server import TARGET

PROC = """
CREATE PROCEDURE p(IN n INT, OUT total INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  SET total = 0;
  WHILE i < n DO
    SET i = i + 1;
    SET total = total + i;
  END WHILE;
  SELECT i AS i, total AS total;
  SELECT a FROM t ORDER BY a;
END
"""


def _setup(cur):
    cur.execute("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(20))")
    cur.execute("CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100))")
    cur.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
    cur.execute(PROC)
    cur.execute("CREATE FUNCTION twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2")
    cur.execute("CREATE TRIGGER ai AFTER INSERT ON t FOR EACH ROW "
                "INSERT INTO log (msg) VALUES (CONCAT('ins ', NEW.a))")


def test_call_returns_each_result_then_ok(cur):
    _setup(cur)
    cur.execute("CALL p(3, @total)")
    assert cur.fetchall() == ((3, 6),)
    assert cur.nextset()
    assert cur.fetchall() == ((1,), (2,))
    # The CALL's own OK ends the results.
    assert cur.nextset()
    assert cur.description is None
    assert not cur.nextset()
    cur.execute("SELECT @total + 0, twice(21)")
    assert cur.fetchall() == ((6, 42),)


def _execute_all(stmt, *args):
    """COM_STMT_EXECUTE reading every result: row lists for result sets,
    None for the final OK."""
    import struct

    import mysql_binary as mb
    conn = stmt.conn
    payload = struct.pack("<IBI", stmt.stmt_id, 0, 1) + mb._encode_params(args)
    conn._execute_command(mb.COM_STMT_EXECUTE, payload)
    out = []
    while True:
        first = conn._read_packet()
        if first.is_ok_packet():
            first.read_uint8()
            first.read_length_encoded_integer()
            first.read_length_encoded_integer()
            status = first.read_uint16()
            out.append(None)
        else:
            ncols = first.read_length_encoded_integer()
            cols = mb._read_defs(conn, ncols)
            rows = []
            while True:
                p = conn._read_packet()
                if p.is_eof_packet():
                    p.read_uint8()
                    p.read_uint16()
                    status = p.read_uint16()
                    break
                assert p.read_uint8() == 0
                bitmap = p.read((ncols + 9) // 8)
                rows.append(tuple(None if bitmap[(i + 2) // 8] & (1 << ((i + 2) % 8))
                                  else mb._decode_value(p, c) for i, c in enumerate(cols)))
            out.append(rows)
        if not status & 8:  # SERVER_MORE_RESULTS_EXISTS
            return out


def test_call_through_the_binary_protocol(connect, cur):
    import mysql_binary as mb
    _setup(cur)
    conn = connect()
    stmt = mb.prepare(conn, "CALL p(?, @t)")
    assert _execute_all(stmt, 2) == [[(2, 3)], [(1,), (2,)], None]
    mb.close(stmt)
    with conn.cursor() as c:
        c.execute("SELECT @t + 0")
        assert c.fetchall() == ((3,),)


@pytest.mark.skipif(TARGET != "lockstep", reason="restarts a private lockstep server")
def test_definitions_survive_restart_and_kill9(server_factory):
    s = server_factory("routines")
    s.sql("CREATE DATABASE d")
    conn = s.connect(db="d")
    with conn.cursor() as cur:
        _setup(cur)
    conn.close()
    for crash in (False, True):
        s.restart(crash=crash)
        conn = s.connect(db="d")
        with conn.cursor() as cur:
            cur.execute("CALL p(2, @t)")
            assert cur.fetchall() == ((2, 3),)
            while cur.nextset():
                pass
            cur.execute("SELECT @t + 0, twice(5)")
            assert cur.fetchall() == ((3, 10),)
            cur.execute("INSERT INTO t VALUES (%s, 'z')", (10 + crash,))
            cur.execute("SELECT msg FROM log ORDER BY id DESC LIMIT 1")
            assert cur.fetchall() == ((f"ins {10 + crash}",),)
            cur.execute("SHOW CREATE PROCEDURE p")
            assert "WHILE i < n DO" in cur.fetchall()[0][2]
        conn.close()


def test_kill_query_stops_an_endless_loop(server, connect):
    c1 = connect()
    c2 = connect()
    with c1.cursor() as cur:
        cur.execute("CREATE PROCEDURE spin() BEGIN DECLARE i INT DEFAULT 0; "
                    "WHILE 1 DO SET i = i + 1; END WHILE; END")
        cur.execute("SELECT CONNECTION_ID()")
        (cid,) = cur.fetchone()
    import threading
    import time

    def killer():
        time.sleep(1)
        with c2.cursor() as k:
            k.execute(f"KILL QUERY {cid}")

    threading.Thread(target=killer).start()
    with c1.cursor() as cur:
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("CALL spin()")
        assert e.value.args[0] == 1317


def _fresh_user(server, cur, db, name, privileges):
    """A new account with `privileges` on the test's schema, connected."""
    cur.execute(f"DROP USER IF EXISTS {name}")
    cur.execute(f"CREATE USER {name} IDENTIFIED BY 'pw'")
    cur.execute(f"GRANT {privileges} ON `{db}`.* TO {name}")
    return server.connect(db=db, user=name, password="pw")


def test_privileges_of_a_user_without_rights(server, cur, db):
    from lockstep_server import code_of
    cur.execute("CREATE TABLE t (a INT PRIMARY KEY)")
    cur.execute("CREATE PROCEDURE p() SELECT 1")
    cur.execute("CREATE FUNCTION one_f() RETURNS INT RETURN 1")
    try:
        u = _fresh_user(server, cur, db, "rt_user", "SELECT, INSERT")
        with u.cursor() as c:
            assert code_of(lambda: c.execute("CREATE PROCEDURE q() SELECT 1")) == 1044
            assert code_of(lambda: c.execute("CALL p()")) == 1370
            assert code_of(lambda: c.execute("SELECT one_f()")) == 1370
            assert code_of(lambda: c.execute("DROP PROCEDURE p")) == 1370
            assert code_of(lambda: c.execute(
                "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1")) == 1142
        u.close()
        cur.execute(f"GRANT UPDATE, EXECUTE, CREATE ROUTINE, TRIGGER ON `{db}`.* TO rt_user")
        u = server.connect(db=db, user="rt_user", password="pw")
        with u.cursor() as c:
            c.execute("CALL p()")
            assert c.fetchall() == ((1,),)
            c.execute("SELECT one_f()")
            assert c.fetchall() == ((1,),)
            c.execute("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = NEW.a + 1")
            c.execute("INSERT INTO t VALUES (1)")
            c.execute("SELECT a FROM t")
            assert c.fetchall() == ((2,),)
        u.close()
    finally:
        cur.execute("DROP USER IF EXISTS rt_user")


def test_bodies_cannot_read_or_write_what_the_caller_may_not(server, cur, db):
    """A function or trigger body runs with its definer's rights, here the
    unprivileged user's own: a user who may create routines in its own
    schema cannot use one to read or change a table it has no right to."""
    from lockstep_server import code_of
    secret = "rt_secret_db"
    cur.execute(f"DROP DATABASE IF EXISTS `{secret}`")
    cur.execute(f"CREATE DATABASE `{secret}`")
    cur.execute(f"CREATE TABLE `{secret}`.s (k INT PRIMARY KEY, v VARCHAR(10))")
    cur.execute(f"INSERT INTO `{secret}`.s VALUES (1, 'hidden')")
    cur.execute("CREATE TABLE mine (a INT PRIMARY KEY, b VARCHAR(10))")
    try:
        u = _fresh_user(server, cur, db, "rt_thief", "ALL")
        with u.cursor() as c:
            assert code_of(lambda: c.execute(f"SELECT v FROM `{secret}`.s")) == 1142
            c.execute(f"CREATE FUNCTION leak() RETURNS VARCHAR(10) READS SQL DATA "
                      f"RETURN (SELECT v FROM `{secret}`.s LIMIT 1)")
            assert code_of(lambda: c.execute("SELECT leak()")) == 1142
            c.execute(f"CREATE TRIGGER copy BEFORE INSERT ON mine FOR EACH ROW "
                      f"SET NEW.b = (SELECT v FROM `{secret}`.s LIMIT 1)")
            assert code_of(lambda: c.execute("INSERT INTO mine VALUES (1, NULL)")) == 1142
            c.execute("DROP TRIGGER copy")
            c.execute(f"CREATE TRIGGER wipe AFTER INSERT ON mine FOR EACH ROW "
                      f"DELETE FROM `{secret}`.s")
            assert code_of(lambda: c.execute("INSERT INTO mine VALUES (2, 'x')")) == 1142
        u.close()
        cur.execute(f"SELECT COUNT(*) FROM `{secret}`.s")
        assert cur.fetchall() == ((1,),)
        cur.execute("SELECT COUNT(*) FROM mine")
        assert cur.fetchall() == ((0,),)
    finally:
        cur.execute("DROP USER IF EXISTS rt_thief")
        cur.execute(f"DROP DATABASE IF EXISTS `{secret}`")


def test_sql_security_definer_and_invoker(server, cur, db):
    """DEFINER programs run with the definer's rights, INVOKER ones with the
    caller's; naming another account as DEFINER needs SUPER (1227); a
    definer that no longer exists fails the call (1449)."""
    from lockstep_server import code_of
    secret = "rt_definer_db"
    cur.execute(f"DROP DATABASE IF EXISTS `{secret}`")
    cur.execute(f"CREATE DATABASE `{secret}`")
    cur.execute(f"CREATE TABLE `{secret}`.s (k INT PRIMARY KEY, v VARCHAR(10))")
    cur.execute(f"INSERT INTO `{secret}`.s VALUES (1, 'hidden')")
    cur.execute("CREATE TABLE mine (a INT PRIMARY KEY, b VARCHAR(10))")
    q = f"(SELECT v FROM `{secret}`.s LIMIT 1)"
    cur.execute(f"CREATE FUNCTION by_owner() RETURNS VARCHAR(10) READS SQL DATA RETURN {q}")
    cur.execute(f"CREATE FUNCTION by_caller() RETURNS VARCHAR(10) SQL SECURITY INVOKER "
                f"READS SQL DATA RETURN {q}")
    cur.execute(f"CREATE PROCEDURE p_owner() SELECT v FROM `{secret}`.s")
    cur.execute(f"CREATE PROCEDURE p_caller() SQL SECURITY INVOKER SELECT v FROM `{secret}`.s")
    cur.execute(f"CREATE TRIGGER fill BEFORE INSERT ON mine FOR EACH ROW SET NEW.b = {q}")
    try:
        u = _fresh_user(server, cur, db, "rt_caller", "SELECT, INSERT, EXECUTE, CREATE ROUTINE, CREATE VIEW")
        with u.cursor() as c:
            c.execute("SELECT by_owner()")
            assert c.fetchall() == (("hidden",),)
            assert code_of(lambda: c.execute("SELECT by_caller()")) == 1142
            c.execute("CALL p_owner()")
            assert c.fetchall() == (("hidden",),)
            assert code_of(lambda: c.execute("CALL p_caller()")) == 1142
            c.execute("INSERT INTO mine (a) VALUES (1)")
            c.execute("SELECT b FROM mine")
            assert c.fetchall() == (("hidden",),)
            c.execute("SELECT CURRENT_USER()")
            assert c.fetchone()[0].startswith("rt_caller@")
            assert code_of(lambda: c.execute(
                "CREATE DEFINER = root@localhost PROCEDURE q() SELECT 1")) == 1227
            assert code_of(lambda: c.execute(
                "CREATE DEFINER = 'root'@'%' FUNCTION f2() RETURNS INT RETURN 1")) == 1227
            assert code_of(lambda: c.execute(
                "CREATE DEFINER = root VIEW v AS SELECT 1")) == 1227
            c.execute("CREATE DEFINER = CURRENT_USER VIEW v AS SELECT 1")
        u.close()
        cur.execute("CREATE DEFINER = 'rt_gone'@'%' PROCEDURE p_gone() SELECT 1")
        assert code_of(lambda: cur.execute("CALL p_gone()")) == 1449
    finally:
        cur.execute("DROP USER IF EXISTS rt_caller")
        cur.execute(f"DROP DATABASE IF EXISTS `{secret}`")


@pytest.mark.skipif(TARGET != "lockstep", reason="lockstep replicas")
def test_replica_gets_definitions_and_trigger_rows_once(replication_servers):
    from test_replication import setup_source, start_replica, wait_caught_up
    source, replica = replication_servers(2)
    setup_source(source)
    start_replica(replica, source)
    source.sql("CREATE DATABASE d")
    conn = source.connect(db="d")
    with conn.cursor() as cur:
        _setup(cur)
        cur.execute("INSERT INTO t VALUES (7, 'q')")
    conn.close()
    wait_caught_up(source, [replica])
    # The trigger's row came as a row event; the replica does not fire it again.
    assert replica.sql("SELECT msg FROM d.log ORDER BY id") == (("ins 7",),)
    assert replica.sql("SELECT twice(4)", db="d") == ((8,),)
    source.sql("DROP FUNCTION d.twice")
    wait_caught_up(source, [replica])
    assert replica.sql("SELECT COUNT(*) FROM information_schema.ROUTINES "
                       "WHERE ROUTINE_SCHEMA = 'd'") == ((1,),)
