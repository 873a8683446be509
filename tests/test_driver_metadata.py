"""Driver fidelity, result metadata: column names, types, flags and
warning counts as MySQL 8 sends them (project issue "Driver fidelity")."""

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
