"""JSON through the wire: a JSON column round-trips, results are typed
MYSQL_TYPE_JSON (245) with the binary character set, as MySQL 8 sends
them, and JSON errors carry MySQL's codes."""

import json

import pytest

import mysql_binary
from lockstep_server import TARGET, code_of

JSON_TYPE = 245
BINARY_CHARSET = 63

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="MariaDB's JSON is LONGTEXT")


def test_json_column_round_trips(cur):
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, doc JSON)")
    doc = {"b": [1, 2.5, None, True], "a": "é\"\\\n", "big": 18446744073709551615}
    cur.execute("INSERT INTO t VALUES (1, %s)", (json.dumps(doc),))
    cur.execute("SELECT doc, doc->'$.a', doc->>'$.a', JSON_TYPE(doc->'$.big') FROM t")
    row = cur.fetchone()
    assert json.loads(row[0]) == doc
    assert row[0].startswith('{"a": ')
    assert json.loads(row[1]) == doc["a"]
    assert row[2] == doc["a"]
    assert row[3] == "UNSIGNED INTEGER"
    assert [d[1] for d in cur.description[:2]] == [JSON_TYPE, JSON_TYPE]


def test_json_columns_are_type_245_binary_charset(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE t (doc JSON)")
        cur.execute("INSERT INTO t VALUES ('[1]')")
        cur.execute("SELECT doc, JSON_OBJECT('k', 1) FROM t")
        assert cur.fetchall() == (("[1]", '{"k": 1}'),)
    fields = c._result.fields
    assert [f.type_code for f in fields] == [JSON_TYPE, JSON_TYPE]
    assert [f.charsetnr for f in fields] == [BINARY_CHARSET, BINARY_CHARSET]


def test_json_errors_have_mysql_codes(cur):
    cur.execute("CREATE TABLE t (doc JSON)")
    cases = [
        ("INSERT INTO t VALUES ('{bad')", 3140),
        ("SELECT JSON_EXTRACT('[1', '$')", 3141),
        ("SELECT JSON_EXTRACT('[1]', 'x')", 3143),
        ("SELECT JSON_SET('[1]', '$[*]', 1)", 3149),
        ("SELECT JSON_NO_SUCH_FUNCTION(1)", 1305),
        ("SELECT * FROM JSON_TABLE('[1', '$[*]' COLUMNS (x INT PATH '$')) t", 3141),
        ("SELECT * FROM JSON_TABLE('[[1]]', '$[*]' COLUMNS (x INT PATH '$' ERROR ON ERROR)) t", 3666),
    ]
    for sql, code in cases:
        assert code_of(lambda: cur.execute(sql)) == code, sql


def test_prepared_statement_binds_json_text(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, doc JSON)")
    stmt = mysql_binary.prepare(c, "INSERT INTO t VALUES (?, ?)")
    mysql_binary.execute(stmt, 1, '{"x": [1, 2]}')
    sel = mysql_binary.prepare(c, "SELECT JSON_EXTRACT(doc, ?) FROM t WHERE id = ?")
    assert mysql_binary.execute(sel, "$.x[1]", 1) == [(b"2",)]
    assert sel.result_columns[0].type_code == JSON_TYPE
