"""Session time zones (MySQL 8 without time zone tables): TIMESTAMP values
are stored as UTC instants and shown in the session's zone, through the
text and the binary protocol alike; DATETIME values are never converted;
the stored instants survive kill -9."""

import datetime

import mysql_binary

COM_RESET_CONNECTION = 0x1F

LOCAL = datetime.datetime(2024, 1, 1, 5, 30, 0)  # 00:00 UTC at +05:30
INSTANT = 1704067200  # 2024-01-01 00:00:00 UTC


def one(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def test_prepared_timestamps_keep_their_instant_across_a_crash(server_factory):
    s = server_factory("tz")
    c = s.connect()
    for setup in ("CREATE DATABASE tz",
                  "CREATE TABLE tz.t (id INT PRIMARY KEY, ts TIMESTAMP NULL,"
                  " dt DATETIME NULL, KEY (ts))",
                  "SET time_zone = '+05:30'"):
        one(c, setup)
    c.select_db("tz")
    ins = mysql_binary.prepare(c, "INSERT INTO t VALUES (?, ?, ?)")
    assert mysql_binary.execute(ins, 1, LOCAL, LOCAL)[0] == 1
    # The key range of a parameter in the session zone finds the row.
    sel = mysql_binary.prepare(
        c, "SELECT id, ts, dt, UNIX_TIMESTAMP(ts) FROM t WHERE ts >= ? AND ts <= ?")
    assert mysql_binary.execute(sel, LOCAL, LOCAL) == [(1, LOCAL, LOCAL, INSTANT)]
    one(c, "SET time_zone = '-08:00'")
    west = datetime.datetime(2023, 12, 31, 16, 0, 0)
    assert mysql_binary.execute(sel, west, west) == [(1, west, LOCAL, INSTANT)]
    c.close()

    s.restart(crash=True)
    c = s.connect(db="tz")
    assert one(c, "SELECT @@time_zone, ts, dt, UNIX_TIMESTAMP(ts) FROM t") == (
        ("SYSTEM", datetime.datetime(2024, 1, 1, 0, 0), LOCAL, INSTANT),)
    one(c, "SET time_zone = '-08:00'")
    assert one(c, "SELECT id FROM t WHERE ts = '2023-12-31 16:00:00'") == ((1,),)


def test_global_zone_reaches_new_sessions_and_reset(server, connect):
    c = connect()
    one(c, "CREATE TABLE t (ts TIMESTAMP NULL)")
    one(c, "INSERT INTO t VALUES ('2024-01-01 00:00:00')")
    one(c, "SET GLOBAL time_zone = '+02:00'")
    try:
        fresh = connect()
        assert one(fresh, "SELECT @@time_zone, @@global.time_zone, ts FROM t") == (
            ("+02:00", "+02:00", datetime.datetime(2024, 1, 1, 2, 0)),)
        one(fresh, "SET time_zone = '-00:30'")
        assert one(fresh, "SELECT ts FROM t") == ((datetime.datetime(2023, 12, 31, 23, 30),),)
        # COM_RESET_CONNECTION: back to the global value.
        fresh._execute_command(COM_RESET_CONNECTION, b"")
        fresh._read_ok_packet()
        assert one(fresh, "SELECT @@time_zone, ts FROM t") == (
            ("+02:00", datetime.datetime(2024, 1, 1, 2, 0)),)
        # The session that set the global keeps its own value.
        assert one(c, "SELECT @@time_zone, ts FROM t") == (
            ("SYSTEM", datetime.datetime(2024, 1, 1, 0, 0)),)
    finally:
        one(c, "SET GLOBAL time_zone = 'SYSTEM'")
