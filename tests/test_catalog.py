"""The catalog tools read: information_schema's constraint views and
performance_schema's status and variable tables."""

import pytest

from lockstep_server import TARGET


def run(conn, sql):
    with conn.cursor() as c:
        c.execute(sql)
        return c.fetchall()


def test_key_column_usage_and_table_constraints(connect):
    conn = connect()
    db = run(conn, "SELECT DATABASE()")[0][0]
    run(conn, "CREATE TABLE k (id INT PRIMARY KEY, u INT, v INT, w INT, UNIQUE KEY uk (u, v), KEY kw (w))")
    usage = run(conn, f"SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'k' ORDER BY CONSTRAINT_NAME, ORDINAL_POSITION")
    assert usage == (("PRIMARY", "id", 1), ("uk", "u", 1), ("uk", "v", 2))
    kinds = run(conn, f"SELECT CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'k' ORDER BY CONSTRAINT_NAME")
    assert kinds == (("PRIMARY", "PRIMARY KEY"), ("uk", "UNIQUE"))
    for view in ["REFERENTIAL_CONSTRAINTS", "VIEWS", "ROUTINES", "TRIGGERS"]:
        assert run(conn, f"SELECT COUNT(*) FROM information_schema.{view} WHERE 1 = 0") == ((0,),)


@pytest.mark.skipif(TARGET != "lockstep", reason="MariaDB's performance_schema is off by default")
def test_performance_schema_status_and_variables(connect):
    conn = connect()
    run(conn, "SET SESSION sql_select_limit = 1234")
    assert run(conn, "SELECT VARIABLE_VALUE FROM performance_schema.session_variables WHERE VARIABLE_NAME = 'sql_select_limit'") == (("1234",),)
    glob = run(conn, "SELECT VARIABLE_VALUE FROM performance_schema.global_variables WHERE VARIABLE_NAME = 'sql_select_limit'")
    assert glob and glob != (("1234",),)
    uptime = run(conn, "SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Uptime'")
    assert int(uptime[0][0]) >= 0
