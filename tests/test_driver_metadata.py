"""Driver fidelity, result metadata: column names, types, flags and
warning counts as MySQL 8 sends them (project issue "Driver fidelity")."""

import datetime
from decimal import Decimal

import pymysql
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
    # Nullable whatever the value: the next execute may bind NULL (MySQL
    # 8.0.22+).
    assert not stmt.result_columns[0].flags & FLAG.NOT_NULL


def test_prepared_parameter_definitions_are_binary_var_strings(connect):
    # MySQL describes an unbound parameter as a nullable VAR_STRING of the
    # binary character set (63) with the BINARY flag, length 0.
    c = connect()
    stmt = mysql_binary.prepare(c, "SELECT ?, ? * 2")
    assert len(stmt.params) == 2
    for p in stmt.params:
        assert (p.name, p.type_code, p.charsetnr, p.flags, p.length) == (
            "?", FIELD_TYPE.VAR_STRING, 63, FLAG.BINARY, 0)


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


# ---- column types ---------------------------------------------------------

def col(cur, name):
    return next(d for d in cur.description if d[0] == name)


def test_bit_columns_are_type_16_with_raw_bytes(cur):
    cur.execute("CREATE TABLE bt (id INT PRIMARY KEY, b BIT(12), c BIT)")
    cur.execute("INSERT INTO bt VALUES (1, 0x42, 1), (2, b'101', 0), (3, 4095, NULL)")
    assert code_of(lambda: cur.execute("INSERT INTO bt VALUES (4, 4096, 0)")) == 1406
    cur.execute("SELECT id, b, c FROM bt ORDER BY id")
    assert cur.fetchall() == ((1, b"\x00\x42", b"\x01"), (2, b"\x00\x05", b"\x00"),
                              (3, b"\x0f\xff", None))
    assert col(cur, "b")[1] == FIELD_TYPE.BIT
    cur.execute("SELECT b + 0 FROM bt WHERE b = 66")
    assert cur.fetchall() == ((66,),)


def test_bit_binary_protocol(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE bt (b BIT(16))")
        cur.execute("INSERT INTO bt VALUES (258)")
    stmt = mysql_binary.prepare(c, "SELECT b FROM bt")
    assert mysql_binary.execute(stmt) == [(b"\x01\x02",)]
    assert stmt.result_columns[0].type_code == FIELD_TYPE.BIT


def test_time_columns_are_type_11(cur):
    cur.execute("CREATE TABLE tt (t TIME, t6 TIME(6))")
    cur.execute("INSERT INTO tt VALUES ('12:34:56', '-01:02:03.250001'), (123456, '838:59:59')")
    cur.execute("SELECT t, t6 FROM tt ORDER BY t")
    assert [col(cur, n)[1] for n in ("t", "t6")] == [FIELD_TYPE.TIME] * 2
    assert cur.fetchall() == (
        (datetime.timedelta(hours=12, minutes=34, seconds=56),
         -datetime.timedelta(hours=1, minutes=2, seconds=3, microseconds=250001)),
        (datetime.timedelta(hours=12, minutes=34, seconds=56),
         datetime.timedelta(hours=838, minutes=59, seconds=59)),
    )
    assert code_of(lambda: cur.execute("INSERT INTO tt VALUES ('25:61:00', NULL)")) == 1292


def test_year_columns_are_type_13(cur):
    cur.execute("CREATE TABLE yt (y YEAR)")
    cur.execute("INSERT INTO yt VALUES (2024), ('69'), (70), (0)")
    assert code_of(lambda: cur.execute("INSERT INTO yt VALUES (1800)")) == 1264
    cur.execute("SELECT y FROM yt")
    assert col(cur, "y")[1] == FIELD_TYPE.YEAR
    assert sorted(r[0] for r in cur.fetchall()) == [0, 1970, 2024, 2069]


def test_enum_set_json_metadata(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE et (e ENUM('a', 'bcd'), s SET('x', 'y'), j JSON)")
        cur.execute("""INSERT INTO et VALUES ('bcd', 'x,y', '{"k": [1, 2]}')""")
        cur.execute("SELECT e, s, j FROM et")
        assert cur.fetchall() == (("bcd", "x,y", '{"k": [1, 2]}'),)
    fields = c._result.fields
    assert [f.type_code for f in fields] == [FIELD_TYPE.STRING, FIELD_TYPE.STRING, FIELD_TYPE.JSON]
    assert fields[0].flags & FLAG.ENUM and not fields[0].flags & FLAG.SET
    assert fields[1].flags & FLAG.SET


# ---- column flags and origin ----------------------------------------------

def fields_of(c, sql):
    with c.cursor() as cur:
        cur.execute(sql)
        cur.fetchall()
    return {f.name: f for f in c._result.fields}


def test_base_table_columns_carry_key_flags_and_origin(connect, db):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE kt (id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, "
                    "u VARCHAR(10) NOT NULL UNIQUE, m INT, n INT, b VARBINARY(4), "
                    "KEY (m, n))")
    f = fields_of(c, "SELECT id, u, m, n AS nn, b, k.m + 1 FROM kt AS k")
    assert f["id"].flags & (FLAG.PRI_KEY | FLAG.AUTO_INCREMENT | FLAG.NOT_NULL | FLAG.UNSIGNED) \
        == FLAG.PRI_KEY | FLAG.AUTO_INCREMENT | FLAG.NOT_NULL | FLAG.UNSIGNED
    assert f["u"].flags & (FLAG.UNIQUE_KEY | FLAG.NOT_NULL) == FLAG.UNIQUE_KEY | FLAG.NOT_NULL
    assert f["m"].flags & FLAG.MULTIPLE_KEY
    assert not f["nn"].flags & (FLAG.MULTIPLE_KEY | FLAG.NOT_NULL)
    assert f["b"].flags & FLAG.BINARY
    assert not f["id"].flags & FLAG.UNIQUE_KEY
    for name, org in (("id", "id"), ("nn", "n")):
        assert (f[name].db, f[name].table_name, f[name].org_table, f[name].org_name) \
            == (db.encode(), "k", "kt", org)
    # An expression has no origin.
    e = f["k.m + 1"]
    assert (e.table_name, e.org_table, e.org_name) == ("", "", "")
    assert e.flags & FLAG.PRI_KEY == 0


def test_wildcard_columns_carry_origin(connect, db):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE kt (id INT PRIMARY KEY, v INT)")
    f = fields_of(c, "SELECT * FROM kt")
    assert (f["id"].db, f["id"].org_table, f["id"].org_name) == (db.encode(), "kt", "id")
    assert f["id"].flags & FLAG.PRI_KEY


def test_hex_literal_is_a_binary_string(cur):
    cur.execute("SELECT x'010203', 0x41 = 'a', _binary 'a' = 'A', 'a' = 'A'")
    assert cur.fetchall() == ((b"\x01\x02\x03", 0, 0, 1),)
    d = cur.description[0]
    assert (d[0], d[1], d[3]) == ("x'010203'", FIELD_TYPE.VAR_STRING, 3)
    assert cur._result.fields[0].charsetnr == 63
    cur.execute("CREATE TABLE ht (a VARBINARY(4) DEFAULT 0x00, b INT)")
    cur.execute("INSERT INTO ht (b) VALUES (1)")
    cur.execute("SELECT a FROM ht WHERE a = x'00'")
    assert cur.fetchall() == ((b"\x00",),)


# ---- fractional seconds and default rows ----------------------------------

def test_fractional_seconds_are_kept(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE ft (id INT PRIMARY KEY, d DATETIME(6), t TIME(6), s TIMESTAMP(6) NULL)")
        cur.execute("INSERT INTO ft VALUES (1, '2024-01-02 03:04:05.123456', '01:02:03.000007', "
                    "'2024-01-02 03:04:05.5')")
        cur.execute("SELECT d, t, s FROM ft")
        assert cur.fetchall() == ((datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
                                   datetime.timedelta(hours=1, minutes=2, seconds=3, microseconds=7),
                                   datetime.datetime(2024, 1, 2, 3, 4, 5, 500000)),)
        assert [d[5] for d in cur.description] == [6, 6, 6]
        cur.execute("SELECT NOW(6), NOW()")
        six, zero = cur.fetchone()
        assert zero.microsecond == 0
        assert cur.description[0][5] == 6
    stmt = mysql_binary.prepare(c, "INSERT INTO ft (id, d) VALUES (2, ?)")
    mysql_binary.execute(stmt, datetime.datetime(2024, 5, 6, 7, 8, 9, 250000))
    with c.cursor() as cur:
        cur.execute("SELECT d FROM ft WHERE id = 2")
        assert cur.fetchall() == ((datetime.datetime(2024, 5, 6, 7, 8, 9, 250000),),)


def test_insert_empty_values_list_inserts_defaults(cur):
    cur.execute("CREATE TABLE dt (id INT AUTO_INCREMENT PRIMARY KEY, v INT DEFAULT 7, w VARCHAR(3))")
    assert cur.execute("INSERT INTO dt () VALUES ()") == 1
    assert cur.execute("INSERT INTO dt VALUES ()") == 1
    assert cur.execute("INSERT INTO dt () VALUES (), ()") == 2
    cur.execute("SELECT id, v, w FROM dt ORDER BY id")
    assert cur.fetchall() == ((1, 7, None), (2, 7, None), (3, 7, None), (4, 7, None))


# ---- warnings --------------------------------------------------------------

def test_division_by_zero_warns_and_eof_counts_it(cur):
    cur.execute("SELECT 1/0, 5 DIV 0, 5 % 0, MOD(5, 0), NULL/0, 1/2")
    assert cur.fetchall() == ((None, None, None, None, None, Decimal("0.5000")),)
    assert cur._result.warning_count == 4
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == (("Warning", 1365, "Division by 0"),) * 4


def test_division_by_zero_over_rows_and_in_binary_protocol(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("CREATE TABLE dz (a INT)")
        cur.execute("INSERT INTO dz VALUES (1), (2), (0)")
        cur.execute("SELECT a / a FROM dz ORDER BY a")
        assert cur._result.warning_count == 1
        # Strict INSERT: the warning is an error (ERROR_FOR_DIVISION_BY_ZERO).
        assert code_of(lambda: cur.execute("INSERT INTO dz VALUES (1/0)")) == 1365
        cur.execute("INSERT IGNORE INTO dz VALUES (1/0)")
        assert cur._result.warning_count == 1
    stmt = mysql_binary.prepare(c, "SELECT ? / 0")
    assert mysql_binary.execute(stmt, 3) == [(None,)]
    with c.cursor() as cur:
        cur.execute("SHOW WARNINGS")
        assert cur.fetchall() == (("Warning", 1365, "Division by 0"),)


def test_statement_without_warnings_reports_none(cur):
    cur.execute("SELECT 1/0")
    cur.execute("SELECT 1")
    assert cur._result.warning_count == 0


def test_datetime_casts_and_literals_keep_fractions(cur):
    # Fewer fractional digits than given: MySQL 8 rounds (MariaDB cuts).
    cur.execute("SELECT CAST('2024-01-01 00:00:00.5' AS DATETIME(6)), "
                "TIMESTAMP '2024-01-01 00:00:00.25', CAST('2024-01-01 00:00:00.5' AS DATETIME)")
    assert cur.fetchall() == ((datetime.datetime(2024, 1, 1, 0, 0, 0, 500000),
                               datetime.datetime(2024, 1, 1, 0, 0, 0, 250000),
                               datetime.datetime(2024, 1, 1, 0, 0, 1)),)
    assert [d[5] for d in cur.description] == [6, 2, 0]


def test_show_warnings_reply_reports_no_warnings(cur):
    # Connector/Python's asyncio cursor fetches warnings after any reply
    # that reports some; SHOW WARNINGS itself must report none (as MySQL).
    cur.execute("DROP TABLE IF EXISTS no_such_table")
    assert cur._result.warning_count == 1
    cur.execute("SHOW WARNINGS")
    assert len(cur.fetchall()) == 1
    assert cur._result.warning_count == 0


# ---- user variables, placeholders, multi-statement prepare -----------------

def test_user_variable_column_typed_after_its_value(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("SET @i = 2, @d = 1.5, @f = 1e0, @s = 'x', @u = 18446744073709551615")
        cur.execute("SELECT @i, @d, @f, @s, @u, @never")
        assert cur.fetchall() == ((2, Decimal("1.5"), 1.0, "x", 18446744073709551615, None),)
        types = [d[1] for d in cur.description]
        assert types[:3] == [FIELD_TYPE.LONGLONG, FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.DOUBLE]
        assert types[4] == FIELD_TYPE.LONGLONG
        assert c._result.fields[4].flags & FLAG.UNSIGNED
        # Retyped when the variable changes type.
        cur.execute("SET @i = 'now text'")
        cur.execute("SELECT @i")
        assert cur.fetchall() == (("now text",),)
        assert cur.description[0][1] == FIELD_TYPE.VAR_STRING
    stmt = mysql_binary.prepare(c, "SELECT @u")
    assert stmt.columns[0].type_code == FIELD_TYPE.LONGLONG


@pytest.mark.parametrize("sql, near", [("SELECT 1; SELECT 2", "SELECT 2"),
                                       ("SELECT 1;;  DO 2;", "DO 2;")])
def test_prepare_of_two_statements_is_a_syntax_error(connect, sql, near):
    c = connect()
    with pytest.raises(pymysql.err.ProgrammingError) as e:
        mysql_binary.prepare(c, sql)
    assert e.value.args[0] == 1064
    assert f"near '{near}' at line 1" in e.value.args[1]
    # A trailing ';' is allowed.
    stmt = mysql_binary.prepare(c, "SELECT 1;")
    assert mysql_binary.execute(stmt) == [(1,)]


# ---- information_schema / mysql tables drivers' metadata calls read -------

def test_information_schema_type_columns(cur, db):
    cur.execute("CREATE TABLE it (id INT PRIMARY KEY, v VARCHAR(20), t TIME(3), "
                "b VARBINARY(8), KEY (v))")
    cur.execute("SELECT COLUMN_NAME, CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, "
                "DATETIME_PRECISION FROM information_schema.COLUMNS "
                f"WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'it' ORDER BY ORDINAL_POSITION")
    assert cur.fetchall() == (("id", None, None, None), ("v", 20, 80, None),
                              ("t", None, None, 3), ("b", 8, 8, None))
    cur.execute("SELECT INDEX_NAME, COLUMN_NAME, COLLATION, NULLABLE, INDEX_TYPE, IS_VISIBLE, "
                "INDEX_SCHEMA FROM information_schema.STATISTICS "
                f"WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'it' ORDER BY INDEX_NAME")
    assert cur.fetchall() == (("PRIMARY", "id", "A", "", "BTREE", "YES", db),
                              ("v", "v", "A", "YES", "BTREE", "YES", db))


def test_information_schema_routine_type_columns(cur, db):
    cur.execute("CREATE PROCEDURE ip(IN a DATETIME(2), OUT b VARCHAR(10)) BEGIN SET b = 'x'; END")
    cur.execute("CREATE FUNCTION ifn(a INT) RETURNS DECIMAL(10,2) DETERMINISTIC RETURN a")
    cur.execute("SELECT SPECIFIC_NAME, ORDINAL_POSITION, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, "
                "CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, "
                "CHARACTER_SET_NAME FROM information_schema.PARAMETERS "
                f"WHERE SPECIFIC_SCHEMA = '{db}' ORDER BY SPECIFIC_NAME, ORDINAL_POSITION")
    assert cur.fetchall() == (
        ("ifn", 0, "decimal", None, None, 10, 2, None, None),
        ("ifn", 1, "int", None, None, 10, 0, None, None),
        ("ip", 1, "datetime", None, None, None, None, 2, None),
        ("ip", 2, "varchar", 10, 40, None, None, None, "utf8mb4"))
    cur.execute("SELECT ROUTINE_NAME, DATA_TYPE, NUMERIC_PRECISION, DATETIME_PRECISION "
                f"FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '{db}' "
                "ORDER BY ROUTINE_NAME")
    assert cur.fetchall() == (("ifn", "decimal", 10, None), ("ip", "", None, None))
    cur.execute(f"SHOW PROCEDURE STATUS WHERE Db = '{db}' AND Name LIKE 'i%'")
    assert [r[1] for r in cur.fetchall()] == ["ip"]
    cur.execute(f"SHOW FUNCTION STATUS WHERE Db = '{db}' AND Name = 'nope'")
    assert cur.fetchall() == ()


def test_system_tables_join(cur, db):
    # Connector/J's getImportedKeys joins KEY_COLUMN_USAGE and TABLE_CONSTRAINTS.
    cur.execute("CREATE TABLE jp (id INT PRIMARY KEY)")
    cur.execute("CREATE TABLE jc (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES jp (id))")
    cur.execute("SELECT A.COLUMN_NAME, A.REFERENCED_TABLE_NAME FROM "
                "INFORMATION_SCHEMA.KEY_COLUMN_USAGE A JOIN INFORMATION_SCHEMA.TABLE_CONSTRAINTS B "
                "USING (TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME) "
                f"WHERE B.CONSTRAINT_TYPE = 'FOREIGN KEY' AND A.TABLE_SCHEMA = '{db}'")
    assert cur.fetchall() == (("p", "jp"),)


def test_table_privileges_and_host_cache(cur, db):
    cur.execute("CREATE TABLE pt (id INT)")
    cur.execute("DROP USER IF EXISTS 'tp'@'%'")
    cur.execute("CREATE USER 'tp'@'%'")
    try:
        cur.execute(f"GRANT SELECT, INSERT ON {db}.pt TO 'tp'@'%'")
        cur.execute("SELECT GRANTEE, TABLE_NAME, PRIVILEGE_TYPE, IS_GRANTABLE FROM "
                    f"information_schema.TABLE_PRIVILEGES WHERE TABLE_SCHEMA = '{db}' "
                    "ORDER BY PRIVILEGE_TYPE")
        assert cur.fetchall() == (("'tp'@'%'", "pt", "INSERT", "NO"),
                                  ("'tp'@'%'", "pt", "SELECT", "NO"))
        cur.execute(f"SELECT host, user, table_name, table_priv FROM mysql.tables_priv "
                    f"WHERE db = '{db}'")
        assert cur.fetchall() == (("%", "tp", "pt", "SELECT,INSERT"),)
        cur.execute("SELECT COUNT(*) FROM information_schema.COLUMN_PRIVILEGES")
        assert cur.fetchall() == ((0,),)
    finally:
        cur.execute("DROP USER 'tp'@'%'")
    cur.execute("SELECT COUNT(*) FROM performance_schema.host_cache")
    assert cur.fetchall() == ((0,),)
    cur.execute("TRUNCATE TABLE performance_schema.host_cache")
