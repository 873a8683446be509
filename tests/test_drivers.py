"""Driver fidelity: what real drivers send beyond the mariadb CLI and
plain PyMySQL, and what they expect back (project issue "Driver
fidelity")."""

import asyncio
import struct
import time

import pymysql
import pytest
from pymysql.constants import CLIENT

import mysql_binary
from lockstep_server import code_of


# ---- statement edge cases -------------------------------------------------

@pytest.mark.parametrize("text", ["/* x */", "-- x", "# x", "/* a */ -- b\n"])
def test_comment_only_query_is_ok(cur, text):
    # MySQL 8: a statement of comments only is an empty statement, OK.
    assert cur.execute(text) == 0
    assert not cur.fetchall()


def test_empty_query_is_1065(cur):
    assert code_of(lambda: cur.execute("  ")) == 1065


def test_batch_runs_statements_before_a_syntax_error(connect):
    c = connect(client_flag=CLIENT.MULTI_STATEMENTS)
    with c.cursor() as cur:
        cur.execute("CREATE TABLE t (a INT PRIMARY KEY)")
        cur.execute("SELECT 1; xyzzy;")
        assert cur.fetchall() == ((1,),)
        assert code_of(cur.nextset) == 1064
        # The statements before the bad one took effect.
        cur.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); nonsense here")
        assert code_of(cur.nextset) is None
        assert code_of(cur.nextset) == 1064
        cur.execute("SELECT a FROM t ORDER BY a")
        assert cur.fetchall() == ((1,), (2,))


def test_batch_results_arrive_as_each_statement_ends(connect):
    # MySQL sends each result of a multi-statement COM_QUERY as its
    # statement ends (SERVER_MORE_RESULTS_EXISTS), not all after the last.
    c = connect(client_flag=CLIENT.MULTI_STATEMENTS)
    with c.cursor() as cur:
        start = time.monotonic()
        cur.execute("SELECT SLEEP(1); SELECT SLEEP(2)")
        first = time.monotonic() - start
        assert cur.fetchall() == ((0,),)
        assert cur.nextset()
        second = time.monotonic() - start
        assert cur.fetchall() == ((0,),)
        assert not cur.nextset()
    assert 0.9 <= first < 2.5, first
    assert second >= 2.9, second
    # So a read timeout bounds each statement, not the batch.
    c = connect(client_flag=CLIENT.MULTI_STATEMENTS, read_timeout=2.5)
    with c.cursor() as cur:
        cur.execute("SELECT SLEEP(1); SELECT SLEEP(1.5); SELECT SLEEP(1.5)")
        assert cur.nextset() and cur.nextset()
        assert cur.fetchall() == ((0,),)
        cur.execute("SELECT 1; xyzzy")
        assert cur.fetchall() == ((1,),)
        assert code_of(cur.nextset) == 1064


def test_batch_streams_a_large_result_before_the_next_statement(connect):
    # A result of several batches (streamed) in the middle of a batch: all
    # its rows come before the next statement's result.
    c = connect(client_flag=CLIENT.MULTI_STATEMENTS)
    with c.cursor() as cur:
        cur.execute("CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(200))")
        rows = [(i, "x" * 150) for i in range(12000)]
        cur.executemany("INSERT INTO big VALUES (%s, %s)", rows)
        cur.execute("SELECT id FROM big WHERE id < 3; SELECT * FROM big;"
                    " INSERT INTO big VALUES (-1, 'y'); SELECT COUNT(*) FROM big")
        assert cur.fetchall() == ((0,), (1,), (2,))
        assert cur.nextset()
        assert len(cur.fetchall()) == 12000
        assert cur.nextset()
        assert cur.rowcount == 1
        assert cur.nextset()
        assert cur.fetchall() == ((12001,),)
        assert not cur.nextset()


def test_second_statement_without_multi_statements_is_1064(cur):
    assert code_of(lambda: cur.execute("SELECT 1; SELECT 2")) == 1064


# ---- session semantics ----------------------------------------------------

def test_drop_table_if_exists_notes_missing_tables(cur, db):
    cur.execute("CREATE TABLE here (a INT)")
    cur.execute("DROP TABLE IF EXISTS here, gone")
    assert cur._result.warning_count == 1
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == (("Note", 1051, f"Unknown table '{db}.gone'"),)


def test_found_rows_capability(connect):
    plain = connect()
    found = connect(client_flag=CLIENT.FOUND_ROWS)
    with plain.cursor() as cur:
        cur.execute("CREATE TABLE t (a INT PRIMARY KEY, b INT)")
        cur.execute("INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)")
        # Only row 3 changes; rows 1 and 2 already hold the value.
        assert cur.execute("UPDATE t SET b = 1") == 1
    with found.cursor() as cur:
        assert cur.execute("UPDATE t SET b = 1") == 3
        assert cur.execute("UPDATE t SET b = 1 WHERE a > 5") == 0
        # ON DUPLICATE KEY UPDATE to the same value counts 1, not 0.
        assert cur.execute("INSERT INTO t VALUES (1, 1) ON DUPLICATE KEY UPDATE b = 1") == 1
    with plain.cursor() as cur:
        assert cur.execute("INSERT INTO t VALUES (1, 1) ON DUPLICATE KEY UPDATE b = 1") == 0


def test_show_engines_lists_mysql_engines(cur):
    # MySQL 8 lists its engines; those a server cannot use say Support NO
    # with NULL capabilities (a CREATE TABLE naming one gets InnoDB).
    cur.execute("SHOW ENGINES")
    assert [d[0] for d in cur.description] == [
        "Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"]
    rows = {r[0]: r[1:] for r in cur.fetchall()}
    assert rows["InnoDB"][0] == "DEFAULT" and rows["InnoDB"][2:] == ("YES", "YES", "YES")
    for name in ("MyISAM", "MEMORY", "CSV", "ARCHIVE", "BLACKHOLE", "MRG_MYISAM"):
        assert rows[name][0] == "NO" and rows[name][2:] == (None, None, None), name


def test_show_plugins(cur):
    cur.execute("SHOW PLUGINS")
    assert [d[0] for d in cur.description] == ["Name", "Status", "Type", "Library", "License"]
    rows = {r[0]: r for r in cur.fetchall()}
    for name in ("mysql_native_password", "caching_sha2_password"):
        assert rows[name][1:3] == ("ACTIVE", "AUTHENTICATION")
    assert rows["InnoDB"][1:3] == ("ACTIVE", "STORAGE ENGINE")


# ---- compressed protocol --------------------------------------------------

def test_compressed_protocol_cli(server, db):
    # The mariadb client compresses with MySQL's framing (zlib above 50 bytes).
    sql = "SELECT 1; SELECT REPEAT('ab', 50000) AS r; SELECT 'done';"
    r = server.cli(sql, db=db, args=["--compress", "-N"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n") == ["1", "ab" * 50000, "done", ""]


def test_compression_status(server, db, cur):
    # SHOW STATUS LIKE 'Compression' tells whether this connection is
    # compressed (Connector/Python's BugOra35349093 reads it).
    r = server.cli("SHOW SESSION STATUS LIKE 'Compression'", db=db, args=["--compress", "-N"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["Compression", "ON"]
    cur.execute("SHOW STATUS LIKE 'Compression'")
    assert cur.fetchall() == (("Compression", "OFF"),)


def test_compressed_protocol_connector_python(server, db):
    # Connector/Python (pure) sends commands of 50 bytes or less uncompressed
    # with length 0, and splits a 16 MiB packet across compressed packets.
    connector = pytest.importorskip("mysql.connector")
    c = connector.connect(host="127.0.0.1", port=server.port, user="root", password="",
                          database=db, use_pure=True, compress=True, autocommit=True,
                          connection_timeout=10, read_timeout=60)
    try:
        cur = c.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
        cur.execute("CREATE TABLE t (a INT PRIMARY KEY, b LONGTEXT)")
        big = "xy" * (9 << 20)  # 18 MiB: more than one packet
        cur.execute("INSERT INTO t VALUES (1, %s)", (big,))
        cur.execute("SELECT LENGTH(b), b = %s AS same FROM t", (big,))
        assert cur.fetchall() == [(len(big), 1)]
        cur.execute("SELECT b FROM t")
        assert cur.fetchall()[0][0] == big
        cur.execute("SELECT REPEAT('z', 70000)")
        assert cur.fetchall() == [("z" * 70000,)]
    finally:
        c.close()


def run_compressed_aio(server, db, body):
    """body(connection) on a compressed Connector/Python asyncio connection."""
    pytest.importorskip("mysql.connector")
    aio = pytest.importorskip("mysql.connector.aio")

    async def run():
        c = await aio.connect(host="127.0.0.1", port=server.port, user="root", password="",
                              database=db, compress=True, ssl_disabled=True)
        try:
            return await body(c)
        finally:
            await c.close()

    return asyncio.run(asyncio.wait_for(run(), 20))


def test_compressed_protocol_connector_python_asyncio(server, db):
    # The asyncio reader takes an uncompressed frame as one packet: a small
    # result set (several packets, ~56 bytes) must go compressed, as MySQL's
    # zlib at its default level sends it. It hung with the fastest level.
    async def body(c):
        cur = await c.cursor()
        await cur.execute("SELECT 1")
        first = await cur.fetchall()
        await cur.execute("SELECT 'abc', 2.5, NULL")
        return first, await cur.fetchall()

    first, second = run_compressed_aio(server, db, body)
    assert first == [(1,)]
    assert len(second) == 1 and second[0][0] == "abc" and second[0][2] is None


def test_compressed_asyncio_many_commands(server, db):
    # Short replies (OK packets, two-packet results) go uncompressed one
    # packet per frame: several in one frame desynchronized the asyncio
    # reader (zlib "incorrect header check", lost connections, hangs).
    async def body(c):
        cur = await c.cursor()
        got = []
        for q in ["SET @a = 1", "SELECT @a", "DO 1", "SELECT REPEAT('x', 3000)",
                  "SELECT 1 UNION SELECT 2", "SHOW VARIABLES LIKE 'autocommit'"]:
            await cur.execute(q)
            got.append(await cur.fetchall() if cur.description else None)
        await c.cmd_ping()
        await c.cmd_init_db(db)
        for on in [False, True]:  # hung before the fix
            await c.set_autocommit(on)
            got.append(await c.get_autocommit())
        return got

    got = run_compressed_aio(server, db, body)
    assert got[1] == [(1,)] and got[3] == [("x" * 3000,)] and got[4] == [(1,), (2,)]
    assert got[-2:] == [False, True]


def test_execute_of_only_nulls_without_types(connect):
    # Connector/J's setNull on a first execute sends no parameter types
    # (new-params-bound 0); MySQL decodes the NULLs all the same.
    c = connect()
    stmt = mysql_binary.prepare(c, "SELECT ?, ? IS NULL")
    payload = struct.pack("<IBI", stmt.stmt_id, 0, 1) + bytes([0b11, 0])
    c._execute_command(mysql_binary.COM_STMT_EXECUTE, payload)
    c._read_packet()
    mysql_binary._read_defs(c, 2)
    row = c._read_packet()
    assert row.read_uint8() == 0 and row.read(1)[0] & 0b100, "first column NULL"
    assert row.read_uint8() == 1
    assert c._read_packet().is_eof_packet()
    # A non-NULL value without a type is still refused.
    payload = struct.pack("<IBI", stmt.stmt_id, 0, 1) + bytes([0b10, 0])
    with pytest.raises(pymysql.err.MySQLError) as e:
        c._execute_command(mysql_binary.COM_STMT_EXECUTE, payload)
        c._read_packet()
    assert e.value.args[0] == 1210


def test_time_zone_values(cur):
    # Without time zone tables MySQL takes only SYSTEM and UTC offsets
    # (test_time_zone.py checks what they do to TIMESTAMP values).
    cur.execute("SET time_zone = '-0:00'")
    cur.execute("SELECT @@time_zone")
    assert cur.fetchall() == (("+00:00",),)
    cur.execute("SET time_zone = '+5:00'")
    cur.execute("SELECT @@time_zone")
    assert cur.fetchall() == (("+05:00",),)
    for bad in ["UTC", "Europe/Paris", "+14:01", "05:00"]:
        assert code_of(lambda: cur.execute(f"SET time_zone = '{bad}'")) == 1298
    assert code_of(lambda: cur.execute("SET GLOBAL time_zone = 'Nowhere/X'")) == 1298
    cur.execute("SET time_zone = 'system'")
    cur.execute("SELECT @@session.time_zone")
    assert cur.fetchall() == (("SYSTEM",),)


# ---- COM_CHANGE_USER ------------------------------------------------------

def change_user(conn, user, password, database=None):
    """COM_CHANGE_USER with mysql_native_password (PyMySQL has none):
    answers the handshake's scramble; raises the server's error."""
    from pymysql import _auth
    proof = _auth.scramble_native_password(password.encode(), conn.salt) if password else b""
    body = (user.encode() + b"\0" + bytes([len(proof)]) + proof
            + (database or "").encode() + b"\0" + struct.pack("<H", 255)
            + b"mysql_native_password\0")
    conn._execute_command(0x11, body)
    conn._read_packet()  # OK, or raises


def test_change_user_resets_the_session(connect, db, server):
    server.sql("DROP USER IF EXISTS 'cu_native'@'%'")
    server.sql("CREATE USER 'cu_native'@'%' IDENTIFIED WITH mysql_native_password BY 'pw1'")
    server.sql(f"GRANT ALL ON `{db}`.* TO 'cu_native'@'%'")
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE t (a INT PRIMARY KEY)")
    sid = mysql_binary.prepare(c, "SELECT 1").stmt_id
    for user, password in (("cu_native", "pw1"), ("root", "")):
        with c.cursor() as cur:
            cur.execute("SET @v = 5, SESSION sql_safe_updates = 1, SESSION autocommit = 0")
            cur.execute("INSERT INTO t VALUES (1)")  # left open: rolled back
        change_user(c, user, password, db)
        with c.cursor() as cur:
            cur.execute("SELECT CURRENT_USER(), DATABASE(), @v, @@autocommit, @@sql_safe_updates")
            who, *rest = cur.fetchone()
            assert who.startswith(user + "@") and rest == [db, None, 1, 0]
            cur.execute("SELECT COUNT(*) FROM t")
            assert cur.fetchone() == (0,)
    # Prepared statements were dropped.
    c._execute_command(0x17, struct.pack("<IBI", sid, 0, 1))
    with pytest.raises(pymysql.err.MySQLError) as e:
        c._read_packet()
    assert e.value.args[0] == 1243
    # Without a database, none is current.
    change_user(c, "root", "")
    with c.cursor() as cur:
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone() == (None,)


def test_change_user_wrong_password_is_1045(connect, server):
    server.sql("DROP USER IF EXISTS 'cu_bad'@'%'")
    server.sql("CREATE USER 'cu_bad'@'%' IDENTIFIED WITH mysql_native_password BY 'right'")
    c = connect()
    with pytest.raises(pymysql.err.OperationalError) as e:
        change_user(c, "cu_bad", "wrong")
    assert e.value.args[0] == 1045


def test_sleep_lasts_as_long_as_asked(cur):
    # Drivers test their read timeouts with SLEEP(10) against a 6 s timeout;
    # SLEEP used to stop at 5 s, an early reply.
    start = time.monotonic()
    cur.execute("SELECT SLEEP(5.5)")
    assert cur.fetchall() == ((0,),)
    assert time.monotonic() - start >= 5.5


def test_gbk_column_round_trip(connect):
    """Connector/Python's BugOra17079344.test_gbk: a gbk table written and
    read over a gbk connection; gbk EE 5C (頫) ends in a backslash byte,
    and a hex literal of it is one character of the column's set."""
    c = connect()
    c.set_character_set("gbk")
    data = ["赵孟頫", "赵\\孟\\頫\\", "遜"]
    with c.cursor() as cur:
        cur.execute(
            "CREATE TABLE gbktest (id INT AUTO_INCREMENT PRIMARY KEY, c1 VARCHAR(40))"
            " CHARACTER SET 'gbk'"
        )
        for value in data:
            cur.execute("INSERT INTO gbktest (c1) VALUES (%s)", (value,))
        cur.execute("INSERT INTO gbktest (c1) VALUES (0xEE5C)")
        cur.execute("SELECT id, c1, CHAR_LENGTH(c1) FROM gbktest ORDER BY id")
        rows = cur.fetchall()
        assert [r[1] for r in rows] == data + ["頫"]
        assert rows[-1][2] == 1
        # Described in character_set_results (gbk_chinese_ci, 28).
        assert cur._result.fields[1].charsetnr == 28


def test_binary_results_send_a_columns_own_charset(connect):
    """Connector/Python's BugOra19500097.test_binary_charset: under SET
    NAMES binary a latin1 column comes back as its latin1 bytes (and text
    written then is binary, read as latin1)."""
    c = connect(use_unicode=False)
    with c.cursor() as cur:
        cur.execute(
            "CREATE TABLE b19 (id INT AUTO_INCREMENT PRIMARY KEY, col1 VARCHAR(10),"
            " col2 INT) DEFAULT CHARSET latin1"
        )
        sql = "INSERT INTO b19 (col1, col2) VALUES (%s, %s)"
        cur.execute(sql, ("foo", 1))
        cur.execute(sql, ("ëëë", 2))
        cur.execute("SET NAMES binary")
        cur.execute(sql, ("bar", 3))
        cur.execute(sql, ("ëëë", 4))
        cur.execute("SELECT col1, col2 FROM b19 ORDER BY id")
        assert cur.fetchall() == (
            (b"foo", 1),
            (b"\xeb\xeb\xeb", 2),
            (b"bar", 3),
            (b"\xc3\xab\xc3\xab\xc3\xab", 4),
        )
        # The column's own collation, latin1_swedish_ci (8).
        assert cur._result.fields[0].charsetnr == 8
        cur.execute("SET character_set_results = NULL")
        cur.execute("SELECT col1 FROM b19 WHERE col2 = 2")
        assert cur.fetchall() == ((b"\xeb\xeb\xeb",),)
