"""ENUM and SET through the wire: result metadata (MYSQL_TYPE_STRING with
ENUM_FLAG / SET_FLAG, as MySQL 8 sends them), server-side prepared
statements binding members by name and number, and member lists that
survive a restart (checkpoint and log replay)."""

import pytest

import mysql_binary
from lockstep_server import TARGET, code_of

STRING = 254
ENUM_FLAG = 256
SET_FLAG = 2048


def test_enum_set_result_metadata(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE t (e ENUM('a','b') NOT NULL, s SET('x','y'))")
        cur.execute("INSERT INTO t VALUES ('B', 'y,x')")
        cur.execute("SELECT e, s FROM t")
        assert cur.fetchall() == (("b", "x,y"),)
    e, s = c._result.fields
    assert (e.type_code, s.type_code) == (STRING, STRING)
    assert e.flags & ENUM_FLAG and not e.flags & SET_FLAG
    assert s.flags & SET_FLAG and not s.flags & ENUM_FLAG


def test_prepared_statements_bind_members_by_name_and_number(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, e ENUM('lo','hi'), s SET('r','w','x'))")
    ins = mysql_binary.prepare(c, "INSERT INTO t VALUES (?, ?, ?)")
    mysql_binary.execute(ins, 1, "HI", "x,r")
    mysql_binary.execute(ins, 2, 1, 6)
    with pytest.raises(Exception) as err:
        mysql_binary.execute(ins, 3, "mid", "")
    assert err.value.args[0] == 1265
    sel = mysql_binary.prepare(c, "SELECT id, e, e + 0, s + 0 FROM t WHERE e = ? ORDER BY id")
    assert mysql_binary.execute(sel, "hi") == [(1, "hi", 2, 5)]
    assert mysql_binary.execute(sel, 1) == [(2, "lo", 1, 6)]
    if TARGET == "lockstep":
        assert sel.result_columns[1].flags & ENUM_FLAG


@pytest.mark.skipif(TARGET != "lockstep", reason="restarts a lockstep server")
def test_member_lists_survive_restart(server_factory):
    server = server_factory("enumrestart")
    server.sql("CREATE DATABASE d")
    server.sql("CREATE TABLE d.t (e ENUM('one','two','it''s') NOT NULL, s SET('p','q'))")
    server.sql("INSERT INTO d.t VALUES ('TWO', 'q,p')")
    server.restart(crash=True)
    show = server.sql("SHOW CREATE TABLE d.t")[0][1]
    assert "enum('one','two','it''s') NOT NULL" in show
    assert "set('p','q')" in show
    assert server.sql("SELECT e, e + 0, s, s + 0 FROM d.t") == (("two", 2, "p,q", 3),)
    assert code_of(lambda: server.sql("INSERT INTO d.t VALUES ('three', NULL)")) == 1265
    server.sql("ALTER TABLE d.t MODIFY e ENUM('one','two','it''s','three') NOT NULL")
    server.restart()
    server.sql("INSERT INTO d.t VALUES ('three', NULL)")
    assert server.sql("SELECT e + 0 FROM d.t ORDER BY e") == ((2,), (4,))
