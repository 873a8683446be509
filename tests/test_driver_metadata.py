"""Driver fidelity, result metadata: column names, types, flags and
warning counts as MySQL 8 sends them (project issue "Driver fidelity")."""

import datetime

import pytest
from pymysql.constants import CLIENT, FIELD_TYPE, FLAG

import mysql_binary
from lockstep_server import code_of


def names(cur):
    return [d[0] for d in cur.description]


# ---- column names ---------------------------------------------------------

def test_expression_columns_are_named_by_their_source_text(cur):
    cur.execute("SELECT LEFT('abcdef', 3), 1/0,  a  +  b , 'str', x'41', null, true "
                "FROM (SELECT 1 AS a, 2 AS b) AS t")
    assert names(cur) == ["LEFT('abcdef', 3)", "1/0", "a  +  b", "str", "x'41'", "NULL", "TRUE"]


def test_column_references_keep_the_column_name(cur):
    cur.execute("CREATE TABLE t (Id INT, v INT)")
    cur.execute("SELECT t.Id, v, v AS w, COUNT(*) FROM t GROUP BY t.Id, v")
    assert names(cur) == ["Id", "v", "w", "COUNT(*)"]


def test_long_expression_names_are_cut_to_256_characters(cur):
    big = "x" * (17 << 20)
    cur.execute(f"SELECT LENGTH('{big}'), '{big[:1000]}'")
    assert names(cur) == [f"LENGTH('{big[:248]}", "x" * 256]
    assert cur.fetchall() == ((17 << 20, "x" * 1000),)


# ---- prepared statements typed after their parameters ---------------------

@pytest.mark.parametrize("value, type_code", [
    (7, FIELD_TYPE.LONGLONG),
    (2.5, FIELD_TYPE.DOUBLE),
    (None, FIELD_TYPE.NULL),
    ("text", FIELD_TYPE.VAR_STRING),
])
def test_select_param_is_typed_after_the_bound_value(connect, value, type_code):
    c = connect()
    stmt = mysql_binary.prepare(c, "SELECT ?")
    assert mysql_binary.execute(stmt, value) == [(value,)]
    assert stmt.result_columns[0].type_code == type_code


def test_select_param_retyped_on_each_execute(connect):
    c = connect()
    stmt = mysql_binary.prepare(c, "SELECT ?, ? + 1")
    assert mysql_binary.execute(stmt, 1, 2) == [(1, 3)]
    assert [d.type_code for d in stmt.result_columns] == [FIELD_TYPE.LONGLONG] * 2
    assert mysql_binary.execute(stmt, 1.5, 2.5) == [(1.5, 3.5)]
    assert [d.type_code for d in stmt.result_columns] == [FIELD_TYPE.DOUBLE] * 2


def test_bound_datetime_keeps_its_fraction(connect):
    c = connect()
    stmt = mysql_binary.prepare(c, "SELECT ?")
    v = datetime.datetime(2024, 1, 2, 3, 4, 5, 123000)
    assert mysql_binary.execute(stmt, v) == [(v,)]


def test_cast_param_as_time_is_the_time_part(connect):
    c = connect()
    stmt = mysql_binary.prepare(c, "SELECT CAST(? AS TIME), CAST(? AS TIME(3))")
    v = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)
    got = mysql_binary.execute(stmt, v, v)
    assert got == [(datetime.timedelta(hours=3, minutes=4, seconds=5),
                    datetime.timedelta(hours=3, minutes=4, seconds=5, microseconds=123000))]
    assert stmt.result_columns[0].type_code == FIELD_TYPE.TIME


def test_cast_as_time_in_text_protocol(cur):
    cur.execute("SELECT CAST('2024-01-02 03:04:05' AS TIME), CAST(123456 AS TIME), "
                "TIME '-01:02:03.5'")
    assert cur.fetchall() == ((datetime.timedelta(hours=3, minutes=4, seconds=5),
                               datetime.timedelta(hours=12, minutes=34, seconds=56),
                               -datetime.timedelta(hours=1, minutes=2, seconds=3.5)),)
    assert [d[1] for d in cur.description] == [FIELD_TYPE.TIME] * 3
