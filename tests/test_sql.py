"""SQL semantics through PyMySQL: types, writes, queries, session state.

Only what MySQL 8 and MariaDB agree on (both in their default strict
sql_mode) is asserted.
"""

import datetime
import hashlib
import os
from decimal import Decimal

import pymysql
import pytest
from pymysql.constants import CLIENT

import mysql_binary


def error_code(cur, sql, args=None):
    """Run sql, expect a server error, return its code."""
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute(sql, args)
    return e.value.args[0]


def one(cur, sql, args=None):
    cur.execute(sql, args)
    return cur.fetchone()


def scalar(cur, sql, args=None):
    return one(cur, sql, args)[0]


def all_rows(cur, sql, args=None):
    cur.execute(sql, args)
    return list(cur.fetchall())


@pytest.fixture
def people(cur):
    """Two related tables for query tests."""
    cur.execute("CREATE TABLE dept (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL)")
    cur.execute("CREATE TABLE emp (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, "
                "dept_id INT NULL, salary INT NOT NULL, bonus INT NULL, KEY (dept_id))")
    cur.execute("INSERT INTO dept VALUES (1,'eng'),(2,'ops'),(3,'empty')")
    cur.execute("INSERT INTO emp VALUES "
                "(1,'ann',1,100,10),(2,'bob',1,200,NULL),(3,'cid',2,150,5),"
                "(4,'dee',2,150,NULL),(5,'eve',NULL,50,1),(6,'fay',1,300,20)")
    return cur


# ---- types ------------------------------------------------------------------

@pytest.mark.parametrize("typ,ok,bad", [
    ("TINYINT", [-128, 127], [-129, 128]),
    ("TINYINT UNSIGNED", [0, 255], [-1, 256]),
    ("SMALLINT", [-32768, 32767], [-32769, 32768]),
    ("INT", [-2147483648, 2147483647], [-2147483649, 2147483648]),
    ("INT UNSIGNED", [0, 4294967295], [-1, 4294967296]),
    ("BIGINT", [-9223372036854775808, 9223372036854775807],
     [-9223372036854775809, 9223372036854775808]),
    ("BIGINT UNSIGNED", [0, 18446744073709551615], [-1, 18446744073709551616]),
])
def test_integer_ranges(cur, typ, ok, bad):
    """Integer types store their full range and reject values outside it with 1264."""
    cur.execute(f"CREATE TABLE t (id INT PRIMARY KEY, v {typ})")
    for i, v in enumerate(ok):
        cur.execute("INSERT INTO t VALUES (%s, %s)", (i, v))
    assert [r[0] for r in all_rows(cur, "SELECT v FROM t ORDER BY id")] == ok
    for v in bad:
        assert error_code(cur, "INSERT INTO t VALUES (99, %s)", (v,)) == 1264, v
        assert error_code(cur, "UPDATE t SET v = %s WHERE id = 0", (v,)) == 1264, v
    assert [r[0] for r in all_rows(cur, "SELECT v FROM t ORDER BY id")] == ok


def test_integer_arithmetic(cur):
    """BIGINT overflow is error 1690; / is exact decimal division, DIV and % are
    integer; division by zero is NULL."""
    assert error_code(cur, "SELECT 9223372036854775807 + 1") == 1690
    assert one(cur, "SELECT 7 DIV 2, 7 % 3, -7 DIV 2, 7 / 2, 1 / 0") == \
        (3, 1, -3, Decimal("3.5"), None)
    assert scalar(cur, "SELECT 18446744073709551615 + 0") == 18446744073709551615


def test_decimal_is_exact(cur):
    """DECIMAL keeps exact values: 0.1+0.2 = 0.3, sums of cents are exact,
    out-of-range precision is rejected."""
    assert scalar(cur, "SELECT 0.1 + 0.2 = 0.3") == 1
    assert scalar(cur, "SELECT 0.1 + 0.2") == Decimal("0.3")
    cur.execute("CREATE TABLE m (id INT PRIMARY KEY, amt DECIMAL(10,2) NOT NULL, "
                "big DECIMAL(30,10))")
    cur.executemany("INSERT INTO m (id, amt) VALUES (%s, %s)",
                    [(i, "0.10") for i in range(1000)])
    assert scalar(cur, "SELECT SUM(amt) FROM m") == Decimal("100.00")
    cur.execute("UPDATE m SET amt = amt + 0.2 WHERE id < 10")
    assert scalar(cur, "SELECT amt FROM m WHERE id = 3") == Decimal("0.30")
    assert scalar(cur, "SELECT SUM(amt) FROM m") == Decimal("102.00")
    assert scalar(cur, "SELECT COUNT(*) FROM m WHERE amt = 0.3") == 10
    cur.execute("INSERT INTO m VALUES (5000, -12345678.91, 1234567890123456.0123456789)")
    assert one(cur, "SELECT amt, big FROM m WHERE id = 5000") == \
        (Decimal("-12345678.91"), Decimal("1234567890123456.0123456789"))
    assert error_code(cur, "INSERT INTO m (id, amt) VALUES (5001, 123456789.00)") == 1264
    cur.execute("INSERT INTO m (id, amt) VALUES (5002, 1.005)")  # rounds half up
    assert scalar(cur, "SELECT amt FROM m WHERE id = 5002") == Decimal("1.01")


def test_decimal_beyond_28_digits(cur):
    """DECIMAL keeps up to 65 digits, 30 after the point, exactly: storage,
    arithmetic, aggregates, comparisons, index keys and out-of-range."""
    cur.execute("CREATE TABLE wide (id INT PRIMARY KEY, big DECIMAL(30,10), "
                "huge DECIMAL(65,30), KEY (huge))")
    cur.execute("INSERT INTO wide VALUES (1, 12345678901234567890.0123456789, "
                "12345678901234567890123456789012345.123456789012345678901234567891)")
    assert scalar(cur, "SELECT big FROM wide WHERE id = 1") == \
        Decimal("12345678901234567890.0123456789")
    assert scalar(cur, "SELECT huge FROM wide WHERE id = 1") == \
        Decimal("12345678901234567890123456789012345.123456789012345678901234567891")
    cur.execute("INSERT INTO wide VALUES (2, -0.0000000001, "
                "-0.000000000000000000000000000001)")
    cur.execute("INSERT INTO wide VALUES (3, 1, 12345678901234567890123456789012345.123456789012345678901234567890)")
    assert scalar(cur, "SELECT SUM(big) FROM wide") == Decimal("12345678901234567891.0123456788")
    assert scalar(cur, "SELECT big * 2 FROM wide WHERE id = 1") == \
        Decimal("24691357802469135780.0246913578")
    assert scalar(cur, "SELECT big / 3 FROM wide WHERE id = 3") == Decimal("0.33333333333333")
    # Index range and point lookups on the 65-digit column tell neighbours apart.
    assert all_rows(cur, "SELECT id FROM wide WHERE huge > "
                    "12345678901234567890123456789012345.12345678901234567890123456789 ORDER BY id") == [(1,)]
    assert all_rows(cur, "SELECT id FROM wide WHERE huge = "
                    "12345678901234567890123456789012345.123456789012345678901234567890") == [(3,)]
    assert all_rows(cur, "SELECT id FROM wide ORDER BY huge") == [(2,), (3,), (1,)]
    # 36 digits before the point do not fit DECIMAL(65,30): 1264.
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("INSERT INTO wide VALUES (4, 0, 1" + "0" * 35 + ")")
    assert e.value.args[0] == 1264


def test_float_double(cur):
    """FLOAT/DOUBLE columns store binary floating point values."""
    cur.execute("CREATE TABLE f (id INT PRIMARY KEY, d DOUBLE, f FLOAT)")
    cur.execute("INSERT INTO f VALUES (1, 0.5, 0.25), (2, -1e300, 1.5), (3, NULL, NULL)")
    assert all_rows(cur, "SELECT d, f FROM f ORDER BY id") == \
        [(0.5, 0.25), (-1e300, 1.5), (None, None)]
    assert scalar(cur, "SELECT SUM(d) FROM f WHERE id = 1") == 0.5


def test_strings_and_blobs(cur):
    """CHAR/VARCHAR/TEXT/BLOB round-trip; utf8mb4 including 4-byte characters;
    too-long values are rejected with 1406; comparisons are case-insensitive."""
    cur.execute("CREATE TABLE s (id INT PRIMARY KEY, c CHAR(5), v VARCHAR(8), t TEXT, b BLOB)")
    blob = bytes(range(256))
    cur.execute("INSERT INTO s VALUES (1, 'ab', 'héllo☃', %s, %s)", ("x" * 5000, blob))
    cur.execute("INSERT INTO s VALUES (2, 'ab  ', '😀', '', '')")
    assert one(cur, "SELECT c, v, t, b FROM s WHERE id = 1") == ("ab", "héllo☃", "x" * 5000, blob)
    assert one(cur, "SELECT c, v, CHAR_LENGTH(v), LENGTH(v) FROM s WHERE id = 2") == \
        ("ab", "😀", 1, 4)
    assert error_code(cur, "INSERT INTO s (id, v) VALUES (3, 'abcdefghi')") == 1406
    assert scalar(cur, "SELECT COUNT(*) FROM s WHERE v = 'HÉLLO☃'") == 1
    assert scalar(cur, "SELECT 'abc' = 'ABC'") == 1


def test_datetime(cur):
    """DATE and DATETIME store calendar values, compare and order correctly, do
    date arithmetic and reject invalid dates with 1292."""
    cur.execute("CREATE TABLE d (id INT PRIMARY KEY, dt DATETIME NOT NULL, d DATE)")
    cur.execute("INSERT INTO d VALUES (1, '2024-02-29 13:45:10', '2024-02-29'), "
                "(2, '1999-12-31 23:59:59', '1999-12-31'), (3, '2024-03-01 00:00:00', NULL)")
    assert all_rows(cur, "SELECT id FROM d ORDER BY dt") == [(2,), (1,), (3,)]
    assert one(cur, "SELECT dt, d FROM d WHERE id = 1") == \
        (datetime.datetime(2024, 2, 29, 13, 45, 10), datetime.date(2024, 2, 29))
    assert all_rows(cur, "SELECT id FROM d WHERE dt >= '2024-01-01' ORDER BY id") == [(1,), (3,)]
    assert scalar(cur, "SELECT DATE_ADD('2024-02-28', INTERVAL 1 DAY)") in \
        (datetime.date(2024, 2, 29), "2024-02-29")
    assert error_code(cur, "INSERT INTO d VALUES (4, '2023-02-30 00:00:00', NULL)") == 1292
    now = scalar(cur, "SELECT NOW()")
    assert isinstance(now, datetime.datetime)
    assert abs(now - datetime.datetime.now()) < datetime.timedelta(days=1)


def test_constraint_errors(cur):
    """NOT NULL (1048), missing default (1364), bad integer text (1366),
    duplicate key (1062), unknown column (1054), unknown table (1146), syntax (1064)."""
    cur.execute("CREATE TABLE c (id INT PRIMARY KEY, a INT NOT NULL, b INT NOT NULL DEFAULT 7)")
    assert error_code(cur, "INSERT INTO c VALUES (1, NULL, 1)") == 1048
    assert error_code(cur, "INSERT INTO c (id) VALUES (1)") == 1364
    assert error_code(cur, "INSERT INTO c VALUES (1, 'abc', 1)") == 1366
    cur.execute("INSERT INTO c (id, a) VALUES (1, 1)")
    assert one(cur, "SELECT a, b FROM c") == (1, 7)
    assert error_code(cur, "INSERT INTO c (id, a) VALUES (1, 2)") == 1062
    assert error_code(cur, "SELECT nope FROM c") == 1054
    assert error_code(cur, "SELECT * FROM nope") == 1146
    assert error_code(cur, "SELEKT 1") == 1064
    assert scalar(cur, "SELECT COUNT(*) FROM c") == 1


def test_ddl_if_exists(cur, db):
    """CREATE/DROP TABLE/DATABASE with and without IF [NOT] EXISTS, and TRUNCATE."""
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
    assert error_code(cur, "CREATE TABLE t (id INT PRIMARY KEY)") == 1050
    cur.execute("CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
    assert error_code(cur, "DROP TABLE nope") == 1051
    cur.execute("DROP TABLE IF EXISTS nope")
    assert error_code(cur, f"CREATE DATABASE `{db}`") == 1007
    cur.execute(f"CREATE DATABASE IF NOT EXISTS `{db}`")
    assert error_code(cur, "DROP DATABASE no_such_db_xyz") == 1008
    cur.execute("DROP DATABASE IF EXISTS no_such_db_xyz")
    cur.execute("INSERT INTO t (v) VALUES (1), (2), (3)")
    cur.execute("TRUNCATE TABLE t")
    assert scalar(cur, "SELECT COUNT(*) FROM t") == 0
    cur.execute("INSERT INTO t (v) VALUES (1)")
    assert scalar(cur, "SELECT id FROM t") == 1
    cur.execute("DROP TABLE t")
    assert error_code(cur, "SELECT * FROM t") == 1146


def test_secondary_and_unique_indexes(cur):
    """Unique indexes (single and multi-column) reject duplicates; CREATE/DROP
    INDEX work on a populated table and queries through them return the same rows."""
    cur.execute("CREATE TABLE u (id INT PRIMARY KEY, a INT, b INT, c VARCHAR(10), "
                "UNIQUE KEY uab (a, b))")
    cur.executemany("INSERT INTO u VALUES (%s, %s, %s, %s)",
                    [(i, i % 10, i // 10, f"c{i % 7}") for i in range(100)])
    assert error_code(cur, "INSERT INTO u VALUES (200, 3, 4, 'x')") == 1062
    cur.execute("INSERT INTO u VALUES (201, 3, NULL, 'x'), (202, 3, NULL, 'x')")  # NULLs distinct
    before = all_rows(cur, "SELECT id FROM u WHERE c = 'c3' ORDER BY id")
    cur.execute("CREATE INDEX ic ON u (c)")
    assert all_rows(cur, "SELECT id FROM u WHERE c = 'c3' ORDER BY id") == before
    cur.execute("CREATE UNIQUE INDEX uc ON u (id, c)")
    assert error_code(cur, "CREATE UNIQUE INDEX ua ON u (a)") == 1062
    cur.execute("UPDATE u SET c = 'zz' WHERE id = 3")
    assert all_rows(cur, "SELECT id FROM u WHERE c = 'zz'") == [(3,)]
    assert (3,) not in all_rows(cur, "SELECT id FROM u WHERE c = 'c3'")
    cur.execute("DROP INDEX ic ON u")
    assert all_rows(cur, "SELECT id FROM u WHERE c = 'zz'") == [(3,)]


# ---- writes -----------------------------------------------------------------

def test_auto_increment_and_last_insert_id(connect):
    """AUTO_INCREMENT hands out ids, continues after an explicit id, and
    LAST_INSERT_ID() is the first id of the last multi-row insert, per connection."""
    c1, c2 = connect(), connect()
    cur, cur2 = c1.cursor(), c2.cursor()
    cur.execute("CREATE TABLE a (id BIGINT PRIMARY KEY AUTO_INCREMENT, v INT)")
    cur.execute("INSERT INTO a (v) VALUES (10)")
    assert cur.lastrowid == 1 and scalar(cur, "SELECT LAST_INSERT_ID()") == 1
    cur.execute("INSERT INTO a (v) VALUES (11), (12), (13)")
    assert cur.lastrowid == 2 and scalar(cur, "SELECT LAST_INSERT_ID()") == 2
    cur.execute("INSERT INTO a (id, v) VALUES (100, 14)")
    assert scalar(cur, "SELECT LAST_INSERT_ID()") == 2  # explicit ids don't change it
    cur2.execute("INSERT INTO a (v) VALUES (15)")
    assert cur2.lastrowid == 101
    assert scalar(cur, "SELECT LAST_INSERT_ID()") == 2
    assert scalar(cur2, "SELECT LAST_INSERT_ID()") == 101
    assert all_rows(cur, "SELECT id FROM a ORDER BY id") == [(1,), (2,), (3,), (4,), (100,), (101,)]


def test_insert_on_duplicate_key_update(cur):
    """ON DUPLICATE KEY UPDATE inserts (1 row affected), updates (2) or leaves
    unchanged (0), on primary and unique keys, with VALUES() of the new row."""
    cur.execute("CREATE TABLE k (id INT PRIMARY KEY, code VARCHAR(5) UNIQUE, n INT NOT NULL)")
    sql = "INSERT INTO k VALUES (%s, %s, %s) ON DUPLICATE KEY UPDATE n = n + VALUES(n)"
    assert cur.execute(sql, (1, "a", 5)) == 1
    assert cur.execute(sql, (1, "a", 7)) == 2
    assert one(cur, "SELECT n FROM k WHERE id = 1") == (12,)
    assert cur.execute("INSERT INTO k VALUES (1, 'a', 0) ON DUPLICATE KEY UPDATE n = n") == 0
    assert cur.execute(sql, (2, "a", 1)) == 2  # conflict on the unique key
    assert all_rows(cur, "SELECT id, code, n FROM k") == [(1, "a", 13)]
    assert cur.execute("INSERT INTO k VALUES (2,'b',1),(1,'a',1),(3,'c',1) "
                       "ON DUPLICATE KEY UPDATE n = 100") == 4
    assert all_rows(cur, "SELECT id, n FROM k ORDER BY id") == [(1, 100), (2, 1), (3, 1)]


def test_insert_ignore(cur):
    """INSERT IGNORE skips duplicate rows with warning 1062, inserts the rest."""
    cur.execute("CREATE TABLE i (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO i VALUES (1, 1)")
    assert cur.execute("INSERT IGNORE INTO i VALUES (1, 9), (2, 2), (3, 3)") == 2
    warnings = all_rows(cur, "SHOW WARNINGS")
    assert [w[1] for w in warnings] == [1062]
    assert all_rows(cur, "SELECT id, v FROM i ORDER BY id") == [(1, 1), (2, 2), (3, 3)]


def test_replace(cur):
    """REPLACE inserts (1 affected) or deletes-and-inserts (2, or 3 when the new
    row collides with two rows)."""
    cur.execute("CREATE TABLE r (id INT PRIMARY KEY, code INT UNIQUE, v VARCHAR(5))")
    assert cur.execute("REPLACE INTO r VALUES (1, 10, 'a')") == 1
    assert cur.execute("REPLACE INTO r VALUES (1, 10, 'b')") == 2
    assert cur.execute("REPLACE INTO r VALUES (2, 20, 'c')") == 1
    assert cur.execute("REPLACE INTO r VALUES (1, 20, 'd')") == 3
    assert all_rows(cur, "SELECT id, code, v FROM r") == [(1, 20, "d")]


def test_update_delete_order_by_limit(cur):
    """UPDATE and DELETE honour WHERE, ORDER BY and LIMIT and report affected
    rows (changed rows, not merely matched ones)."""
    cur.execute("CREATE TABLE w (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO w VALUES (1,0),(2,0),(3,0),(4,0),(5,5)")
    assert cur.execute("UPDATE w SET v = 1 ORDER BY id DESC LIMIT 2") == 2
    assert all_rows(cur, "SELECT id FROM w WHERE v = 1 ORDER BY id") == [(4,), (5,)]
    assert cur.execute("UPDATE w SET v = 1 WHERE id >= 3") == 1  # 4 and 5 already 1
    assert cur.execute("DELETE FROM w WHERE v = 0 ORDER BY id LIMIT 1") == 1
    assert all_rows(cur, "SELECT id FROM w ORDER BY id") == [(2,), (3,), (4,), (5,)]
    assert cur.execute("UPDATE w SET v = v + 10, id = id + 100 WHERE id = 2") == 1
    assert one(cur, "SELECT id, v FROM w WHERE id = 102") == (102, 10)
    assert cur.execute("DELETE FROM w WHERE id > 1000") == 0
    assert cur.execute("DELETE FROM w") == 4


def test_large_row_over_16mb_packet(server, connect):
    """A 17 MB value crosses the 16 MB protocol packet boundary both ways
    (max_allowed_packet raised to 64 MB)."""
    admin = connect()
    acur = admin.cursor()
    old = scalar(acur, "SELECT @@GLOBAL.max_allowed_packet")
    acur.execute("SET GLOBAL max_allowed_packet = 67108864")
    try:
        c = connect(read_timeout=120, write_timeout=120)
        cur = c.cursor()
        cur.execute("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)")
        data = (hashlib.sha256(b"x").digest() * (17 * 1024 * 1024 // 32 + 3))
        cur.execute("INSERT INTO big VALUES (1, %s)", (data,))
        assert scalar(cur, "SELECT LENGTH(b) FROM big") == len(data)
        assert scalar(cur, "SELECT b FROM big WHERE id = 1") == data
    finally:
        acur.execute("SET GLOBAL max_allowed_packet = %s", (old,))


# ---- queries ----------------------------------------------------------------

def test_where_predicates(people):
    """IN, NOT IN, BETWEEN, LIKE (with _ and escaped %), IS [NOT] NULL and
    three-valued NULL logic."""
    cur = people
    ids = lambda sql: [r[0] for r in all_rows(cur, sql)]  # noqa: E731
    assert ids("SELECT id FROM emp WHERE id IN (2, 4, 9) ORDER BY id") == [2, 4]
    assert ids("SELECT id FROM emp WHERE dept_id NOT IN (1) ORDER BY id") == [3, 4]
    assert ids("SELECT id FROM emp WHERE salary BETWEEN 150 AND 200 ORDER BY id") == [2, 3, 4]
    assert ids("SELECT id FROM emp WHERE name LIKE '%e' ORDER BY id") == [4, 5]
    assert ids("SELECT id FROM emp WHERE name LIKE '_e_' ORDER BY id") == [4]
    assert ids("SELECT id FROM emp WHERE name NOT LIKE '%e%' ORDER BY id") == [1, 2, 3, 6]
    assert ids("SELECT id FROM emp WHERE bonus IS NULL ORDER BY id") == [2, 4]
    assert ids("SELECT id FROM emp WHERE dept_id IS NOT NULL AND bonus > 5 ORDER BY id") == [1, 6]
    assert ids("SELECT id FROM emp WHERE bonus = NULL") == []
    assert one(cur, "SELECT NULL = NULL, NULL IS NULL, 1 IN (NULL, 1), 2 IN (NULL, 1)") == \
        (None, 1, 1, None)
    assert scalar(cur, r"SELECT '50%' LIKE '50\%'") == 1
    assert scalar(cur, r"SELECT '50x' LIKE '50\%'") == 0


def test_order_limit_distinct(people):
    """ORDER BY several keys and directions (NULLs first ascending), LIMIT/OFFSET, DISTINCT."""
    cur = people
    assert all_rows(cur, "SELECT id FROM emp ORDER BY salary DESC, id ASC") == \
        [(6,), (2,), (3,), (4,), (1,), (5,)]
    assert all_rows(cur, "SELECT bonus FROM emp ORDER BY bonus, id") == \
        [(None,), (None,), (1,), (5,), (10,), (20,)]
    assert all_rows(cur, "SELECT id FROM emp ORDER BY id LIMIT 2, 3") == [(3,), (4,), (5,)]
    assert all_rows(cur, "SELECT id FROM emp ORDER BY id LIMIT 2 OFFSET 4") == [(5,), (6,)]
    assert all_rows(cur, "SELECT id FROM emp ORDER BY id LIMIT 0") == []
    assert all_rows(cur, "SELECT DISTINCT salary FROM emp ORDER BY salary") == \
        [(50,), (100,), (150,), (200,), (300,)]
    assert all_rows(cur, "SELECT DISTINCT dept_id, salary FROM emp WHERE dept_id = 2") == \
        [(2, 150)]


def test_joins(people):
    """INNER JOIN drops unmatched rows; LEFT JOIN keeps them with NULLs; join
    with extra ON condition and a three-way join."""
    cur = people
    assert all_rows(cur, "SELECT e.name, d.name FROM emp e JOIN dept d ON e.dept_id = d.id "
                         "ORDER BY e.id") == \
        [("ann", "eng"), ("bob", "eng"), ("cid", "ops"), ("dee", "ops"), ("fay", "eng")]
    assert all_rows(cur, "SELECT d.name, e.name FROM dept d LEFT JOIN emp e "
                         "ON e.dept_id = d.id AND e.salary > 150 ORDER BY d.id, e.id") == \
        [("eng", "bob"), ("eng", "fay"), ("ops", None), ("empty", None)]
    assert all_rows(cur, "SELECT e.name FROM emp e LEFT JOIN dept d ON e.dept_id = d.id "
                         "WHERE d.id IS NULL") == [("eve",)]
    assert all_rows(cur, "SELECT a.name, b.name FROM emp a, emp b "
                         "WHERE a.salary = b.salary AND a.id < b.id") == [("cid", "dee")]
    assert scalar(cur, "SELECT COUNT(*) FROM emp a JOIN emp b ON a.dept_id = b.dept_id "
                       "JOIN dept d ON d.id = b.dept_id") == 9 + 4


def test_aggregates_group_by_having(people):
    """COUNT(*)/COUNT(col)/COUNT(DISTINCT), SUM/MIN/MAX/AVG, GROUP BY (with a
    NULL group), HAVING, and aggregates over an empty set."""
    cur = people
    assert one(cur, "SELECT COUNT(*), COUNT(bonus), COUNT(DISTINCT salary), COUNT(DISTINCT "
                    "dept_id), SUM(salary), MIN(salary), MAX(name), AVG(salary) FROM emp") == \
        (6, 4, 5, 2, 950, 50, "fay", Decimal("158.3333"))
    assert all_rows(cur, "SELECT dept_id, COUNT(*), SUM(salary), AVG(bonus) FROM emp "
                         "GROUP BY dept_id ORDER BY dept_id") == \
        [(None, 1, 50, Decimal("1.0000")), (1, 3, 600, Decimal("15.0000")),
         (2, 2, 300, Decimal("5.0000"))]
    assert all_rows(cur, "SELECT dept_id, SUM(salary) AS s FROM emp GROUP BY dept_id "
                         "HAVING SUM(salary) > 100 ORDER BY s DESC") == [(1, 600), (2, 300)]
    assert all_rows(cur, "SELECT d.name, COUNT(e.id) FROM dept d LEFT JOIN emp e "
                         "ON e.dept_id = d.id GROUP BY d.id, d.name ORDER BY d.id") == \
        [("eng", 3), ("ops", 2), ("empty", 0)]
    assert one(cur, "SELECT COUNT(*), SUM(salary), MIN(salary), AVG(salary) FROM emp "
                    "WHERE id > 100") == (0, None, None, None)
    assert all_rows(cur, "SELECT dept_id, COUNT(*) FROM emp WHERE id > 100 GROUP BY dept_id") == []


def test_grouping_follows_collation(cur):
    """GROUP BY, DISTINCT, COUNT(DISTINCT) and UNION treat text equal under
    the default collation (case- and accent-insensitive) as one value, as
    utf8mb4_0900_ai_ci does; binary strings stay byte-wise."""
    cur.execute("CREATE TABLE words (id INT PRIMARY KEY, w VARCHAR(20), b VARBINARY(20))")
    cur.execute("INSERT INTO words VALUES (1, 'apple', 'apple'), (2, 'Apple', 'Apple'), "
                "(3, 'APPLE', 'APPLE'), (4, 'pear', 'pear'), (5, 'caf\u00e9', 'x'), (6, 'cafe', 'x')")
    groups = all_rows(cur, "SELECT COUNT(*) FROM words GROUP BY w ORDER BY COUNT(*)")
    assert sorted(g[0] for g in groups) == [1, 2, 3]
    assert scalar(cur, "SELECT COUNT(*) FROM (SELECT DISTINCT w FROM words) d") == 3
    assert scalar(cur, "SELECT COUNT(DISTINCT w) FROM words") == 3
    assert scalar(cur, "SELECT COUNT(DISTINCT b) FROM words") == 5
    assert scalar(cur, "SELECT COUNT(*) FROM (SELECT DISTINCT b FROM words) d") == 5
    assert scalar(cur, "SELECT COUNT(*) FROM (SELECT w FROM words WHERE id = 1 UNION "
                       "SELECT w FROM words WHERE id = 3) u") == 1
    assert scalar(cur, "SELECT COUNT(*) FROM (SELECT lower(w) FROM words GROUP BY w) g") == 3
    # Sorting compares the same folded text: ties fall to the next key.
    assert [r[0] for r in all_rows(cur, "SELECT id FROM words ORDER BY w, id DESC")] == \
        [3, 2, 1, 6, 5, 4]
    assert [r[0] for r in all_rows(cur, "SELECT id FROM words ORDER BY w DESC, id")] == \
        [4, 5, 6, 1, 2, 3]
    assert [r[0] for r in all_rows(cur, "SELECT id FROM words ORDER BY b, id")] == \
        [3, 2, 1, 4, 5, 6]
    # Two folded text keys: the second decides among ties of the first.
    assert [r[0] for r in all_rows(cur, "SELECT id, LEFT(w, 1) AS f, w FROM words "
                                        "ORDER BY f DESC, w, id DESC")] == [4, 6, 5, 3, 2, 1]


def test_subqueries(people):
    """IN / NOT IN / EXISTS / NOT EXISTS subqueries (correlated too) and a scalar subquery."""
    cur = people
    ids = lambda sql: [r[0] for r in all_rows(cur, sql)]  # noqa: E731
    assert ids("SELECT id FROM emp WHERE dept_id IN (SELECT id FROM dept WHERE name = 'ops') "
               "ORDER BY id") == [3, 4]
    assert ids("SELECT id FROM dept WHERE id NOT IN (SELECT dept_id FROM emp "
               "WHERE dept_id IS NOT NULL)") == [3]
    assert ids("SELECT d.id FROM dept d WHERE EXISTS (SELECT 1 FROM emp e "
               "WHERE e.dept_id = d.id AND e.salary >= 200) ORDER BY d.id") == [1]
    assert ids("SELECT d.id FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e "
               "WHERE e.dept_id = d.id) ORDER BY d.id") == [3]
    assert ids("SELECT id FROM emp WHERE salary = (SELECT MAX(salary) FROM emp)") == [6]
    assert all_rows(cur, "SELECT d.name, (SELECT COUNT(*) FROM emp e WHERE e.dept_id = d.id) "
                         "FROM dept d ORDER BY d.id") == [("eng", 3), ("ops", 2), ("empty", 0)]
    # LIMIT counts rows that pass the subquery filter (or HAVING), not rows
    # scanned.
    assert ids("SELECT id FROM emp HAVING id > 4 LIMIT 1") == [5]
    assert ids("SELECT id FROM emp WHERE dept_id IN (SELECT id FROM dept WHERE name = 'ops') "
               "LIMIT 1") == [3]
    assert ids("SELECT id FROM emp WHERE salary > (SELECT MIN(salary) FROM emp) "
               "AND dept_id IN (SELECT id FROM dept WHERE name = 'ops') ORDER BY id LIMIT 1") == [3]
    assert cur.execute("DELETE FROM emp WHERE dept_id IN (SELECT id FROM dept "
                       "WHERE name = 'ops') LIMIT 1") == 1
    assert ids("SELECT id FROM emp WHERE dept_id = 2") == [4]


def test_common_functions(cur):
    """Scalar functions applications use: string, null-handling and conditionals."""
    assert one(cur, "SELECT CONCAT('a', 1, 'b'), UPPER('x'), LOWER('Y'), LENGTH('abc'), "
                    "SUBSTRING('hello', 2, 3), COALESCE(NULL, NULL, 3), IFNULL(NULL, 'd'), "
                    "IF(1 > 2, 'y', 'n'), CASE WHEN 2 > 1 THEN 'yes' ELSE 'no' END, "
                    "ABS(-4), GREATEST(1, 5, 3), CONCAT('a', NULL)") == \
        ("a1b", "X", "y", 3, "ell", 3, "d", "n", "yes", 4, 5, None)


# ---- session ----------------------------------------------------------------

def test_server_functions_and_variables(server, connect):
    """@@version/VERSION(), DATABASE(), CONNECTION_ID(), user variables."""
    c1 = connect()
    c2 = server.connect()  # no default database
    try:
        cur, cur2 = c1.cursor(), c2.cursor()
        version = scalar(cur, "SELECT @@version")
        assert isinstance(version, str) and version[:1].isdigit()
        assert scalar(cur, "SELECT VERSION()") == version
        assert isinstance(scalar(cur, "SELECT @@version_comment"), str)
        assert scalar(cur2, "SELECT DATABASE()") is None
        assert scalar(cur, "SELECT DATABASE()") == c1.db.decode()
        cur2.execute(f"USE `{c1.db.decode()}`")
        assert scalar(cur2, "SELECT DATABASE()") == c1.db.decode()
        id1, id2 = scalar(cur, "SELECT CONNECTION_ID()"), scalar(cur2, "SELECT CONNECTION_ID()")
        assert id1 > 0 and id2 > 0 and id1 != id2
        assert c1.thread_id() == id1  # the id sent in the handshake
        cur.execute("SET @x = 41")
        assert scalar(cur, "SELECT @x + 1") == 42
        assert scalar(cur2, "SELECT @x") is None
    finally:
        c2.close()


def isolation(cur):
    """Values of the isolation variable(s): MySQL 8 names it transaction_isolation,
    MariaDB 10 tx_isolation; a server may have both."""
    rows = all_rows(cur, "SHOW VARIABLES LIKE '%isolation'")
    return {v for k, v in rows if k in ("transaction_isolation", "tx_isolation")}


def test_show_variables_and_set(cur):
    """SHOW [SESSION|GLOBAL] VARIABLES LIKE and SET [SESSION] / SET @@var change
    what the session reports, without touching other sessions."""
    assert all_rows(cur, "SHOW VARIABLES LIKE 'autocommit'") == [("autocommit", "ON")]
    cur.execute("SET autocommit = 0")
    assert all_rows(cur, "SHOW SESSION VARIABLES LIKE 'autocommit'") == [("autocommit", "OFF")]
    assert scalar(cur, "SELECT @@autocommit") == 0
    cur.execute("SET @@session.autocommit = 1")
    assert scalar(cur, "SELECT @@session.autocommit") == 1
    packet = all_rows(cur, "SHOW GLOBAL VARIABLES LIKE 'max_allowed_packet'")
    assert len(packet) == 1 and int(packet[0][1]) >= 4 * 1024 * 1024
    assert int(all_rows(cur, "SHOW VARIABLES LIKE 'max_connections'")[0][1]) >= 256
    assert isolation(cur) == {"REPEATABLE-READ"}
    cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    assert isolation(cur) == {"READ-COMMITTED"}
    cur.execute("SET NAMES utf8mb4")
    assert scalar(cur, "SELECT @@character_set_client") == "utf8mb4"
    cur.execute("SET SESSION innodb_lock_wait_timeout = 7")
    assert scalar(cur, "SELECT @@innodb_lock_wait_timeout") == 7
    assert scalar(cur, "SELECT @@sql_mode") is not None


def test_show_status_and_processlist(server, cur):
    """SHOW STATUS LIKE reports counters; SHOW PROCESSLIST lists this connection."""
    rows = all_rows(cur, "SHOW GLOBAL STATUS LIKE 'Threads_connected'")
    assert len(rows) == 1 and int(rows[0][1]) >= 1
    uptime = all_rows(cur, "SHOW STATUS LIKE 'Uptime'")
    assert len(uptime) == 1 and int(uptime[0][1]) >= 0
    me = scalar(cur, "SELECT CONNECTION_ID()")
    procs = all_rows(cur, "SHOW PROCESSLIST")
    assert me in [p[0] for p in procs]


def test_log_status_counters(server, cur):
    """The log's writes, fsyncs and bytes show under InnoDB's status names,
    and a committed write moves all three."""
    names = ("Innodb_log_writes", "Innodb_os_log_fsyncs", "Innodb_os_log_written")

    def counters():
        rows = dict(all_rows(cur, "SHOW GLOBAL STATUS LIKE 'Innodb_%log%'"))
        return [int(rows[n]) for n in names]

    before = counters()
    cur.execute("CREATE TABLE logcount (id INT PRIMARY KEY, v VARCHAR(100))")
    cur.execute("INSERT INTO logcount VALUES (1, REPEAT('x', 100))")
    after = counters()
    assert all(a > b for a, b in zip(after, before)), (before, after)
    # At least the row's bytes were written.
    assert after[2] - before[2] >= 100


def test_autocommit_and_transactions(connect):
    """With autocommit off, writes are invisible to others until COMMIT and
    undone by ROLLBACK; BEGIN/START TRANSACTION work with autocommit on;
    SET autocommit=1 commits the open transaction."""
    c1, c2 = connect(), connect()
    cur, cur2 = c1.cursor(), c2.cursor()
    cur.execute("CREATE TABLE tx (id INT PRIMARY KEY)")
    cur.execute("SET autocommit = 0")
    cur.execute("INSERT INTO tx VALUES (1)")
    assert scalar(cur, "SELECT COUNT(*) FROM tx") == 1
    assert scalar(cur2, "SELECT COUNT(*) FROM tx") == 0
    cur.execute("ROLLBACK")
    assert scalar(cur, "SELECT COUNT(*) FROM tx") == 0
    cur.execute("INSERT INTO tx VALUES (2)")
    cur.execute("COMMIT")
    assert all_rows(cur2, "SELECT id FROM tx") == [(2,)]
    cur.execute("INSERT INTO tx VALUES (3)")
    cur.execute("SET autocommit = 1")  # implicit commit
    assert all_rows(cur2, "SELECT id FROM tx ORDER BY id") == [(2,), (3,)]
    cur.execute("START TRANSACTION")
    cur.execute("DELETE FROM tx")
    assert scalar(cur2, "SELECT COUNT(*) FROM tx") == 2
    cur.execute("ROLLBACK")
    cur.execute("BEGIN")
    cur.execute("INSERT INTO tx VALUES (4)")
    cur.execute("COMMIT")
    assert all_rows(cur2, "SELECT id FROM tx ORDER BY id") == [(2,), (3,), (4,)]
    # PyMySQL's own commit()/rollback() (COM_QUERY COMMIT/ROLLBACK)
    c1.begin()
    cur.execute("INSERT INTO tx VALUES (5)")
    c1.rollback()
    c1.begin()
    cur.execute("INSERT INTO tx VALUES (6)")
    c1.commit()
    assert [r[0] for r in all_rows(cur2, "SELECT id FROM tx ORDER BY id")] == [2, 3, 4, 6]


def test_multi_statements(connect):
    """With CLIENT_MULTI_STATEMENTS one COM_QUERY may carry several statements,
    each with its own result."""
    c = connect(client_flag=CLIENT.MULTI_STATEMENTS)
    cur = c.cursor()
    cur.execute("CREATE TABLE ms (id INT PRIMARY KEY); INSERT INTO ms VALUES (1),(2); "
                "SELECT COUNT(*) FROM ms; SELECT 'x'")
    results = []
    for _ in range(10):
        if cur.description:
            results.append(cur.fetchall())
        if not cur.nextset():
            break
    assert results == [((2,),), (("x",),)]
    assert scalar(cur, "SELECT COUNT(*) FROM ms") == 2


def test_ping_and_select_db(connect, db):
    """COM_PING answers; COM_INIT_DB (select_db) switches the default database."""
    c = connect(db=None)
    c.ping(reconnect=False)
    c.select_db(db)
    assert scalar(c.cursor(), "SELECT DATABASE()") == db


def test_conditions_a_key_range_answers(connect):
    """A condition on an integer key that the scan's key range already
    answers is not evaluated again per row, but only when the value is an
    exact integer: decimals, strings and out-of-range values still filter
    through the condition, so the answer is the same either way."""
    c = connect()
    cur = c.cursor()
    cur.execute("CREATE TABLE kr (id INT PRIMARY KEY, k TINYINT, c VARCHAR(10), KEY (k))")
    cur.execute("INSERT INTO kr VALUES (1,1,'a'),(2,2,'b'),(3,3,'c'),(4,4,'d'),(5,5,'e'),"
                "(6,-3,'f')")
    ids = lambda sql, args=None: [r[0] for r in all_rows(cur, sql, args)]
    assert ids("SELECT id FROM kr WHERE id BETWEEN 2 AND 4") == [2, 3, 4]
    assert ids("SELECT id FROM kr WHERE id BETWEEN 2.5 AND 4.5") == [3, 4]
    assert ids("SELECT id FROM kr WHERE id > 2.5 AND id < 5") == [3, 4]
    assert ids("SELECT id FROM kr WHERE id = 2.0") == [2]
    assert ids("SELECT id FROM kr WHERE id = '3'") == [3]
    assert ids("SELECT id FROM kr WHERE id > 1000") == []
    assert ids("SELECT id FROM kr WHERE k < 1000 ORDER BY id") == [1, 2, 3, 4, 5, 6]
    assert ids("SELECT id FROM kr WHERE k BETWEEN -200 AND 2 ORDER BY id") == [1, 2, 6]
    # Several conditions on one column: only the one the range took is dropped.
    assert ids("SELECT id FROM kr WHERE id >= 2 AND id >= 4") == [4, 5, 6]
    assert ids("SELECT id FROM kr WHERE id BETWEEN 1 AND 5 AND id < 3") == [1, 2]
    assert ids("SELECT id FROM kr WHERE id = 2 AND id = 3") == []
    assert ids("SELECT id FROM kr WHERE id = 2 AND c = 'c'") == []
    assert ids("SELECT id FROM kr WHERE id IN (2, 3) AND id > 2") == [3]
    assert ids("SELECT id FROM kr WHERE id > 1 AND id < 6 AND c <> 'c'") == [2, 4, 5]
    cur.execute("UPDATE kr SET c = 'z' WHERE id BETWEEN 2.5 AND 3.5")
    assert cur.rowcount == 1
    cur.execute("DELETE FROM kr WHERE id > 5.5")
    assert cur.rowcount == 1
    assert ids("SELECT id FROM kr WHERE c = 'z'") == [3]
    # Prepared: the same plan meets exact and inexact values.
    rng = mysql_binary.prepare(c, "SELECT id FROM kr WHERE id BETWEEN ? AND ?")
    assert mysql_binary.execute(rng, 2, 4) == [(2,), (3,), (4,)]
    assert mysql_binary.execute(rng, 1.5, 3.5) == [(2,), (3,)]
    assert mysql_binary.execute(rng, "2.5", "4") == [(3,), (4,)]
    assert mysql_binary.execute(rng, -(2**40), 2**40) == [(i,) for i in range(1, 6)]
    pt = mysql_binary.prepare(c, "SELECT id FROM kr WHERE id = ?")
    assert mysql_binary.execute(pt, 3) == [(3,)]
    assert mysql_binary.execute(pt, 3.5) == []
    assert mysql_binary.execute(pt, "4") == [(4,)]


def test_server_side_prepared_statements(connect):
    """COM_STMT_PREPARE/EXECUTE/RESET/CLOSE with the binary protocol: parameter
    and column counts, typed binary rows, NULL parameters, re-execution, and
    1243 for a closed statement."""
    c = connect()
    cur = c.cursor()
    cur.execute("CREATE TABLE ps (id BIGINT PRIMARY KEY, name VARCHAR(20), amt DECIMAL(8,2), "
                "n INT, u BIGINT UNSIGNED, dt DATETIME)")
    ins = mysql_binary.prepare(c, "INSERT INTO ps VALUES (?, ?, ?, ?, ?, ?)")
    assert (len(ins.params), len(ins.columns)) == (6, 0)
    assert mysql_binary.execute(ins, 1, "ann", "12.50", -7, 2**64 - 1, "2024-01-02 03:04:05") \
        == (1, 0)
    assert mysql_binary.execute(ins, 2**40, "bø", None, None, 0, None) == (1, 0)
    mysql_binary.close(ins)

    sel = mysql_binary.prepare(c, "SELECT id, name, amt, n, u, dt FROM ps WHERE id = ?")
    assert (len(sel.params), len(sel.columns)) == (1, 6)
    assert [col.name for col in sel.columns] == ["id", "name", "amt", "n", "u", "dt"]
    assert mysql_binary.execute(sel, 1) == [
        (1, "ann", Decimal("12.50"), -7, 2**64 - 1, datetime.datetime(2024, 1, 2, 3, 4, 5))]
    assert mysql_binary.execute(sel, 2**40) == [(2**40, "bø", None, None, 0, None)]
    assert mysql_binary.execute(sel, 3) == []
    for _ in range(3):  # re-execution of the same statement
        assert len(mysql_binary.execute(sel, 1)) == 1
    mysql_binary.reset(sel)

    rng = mysql_binary.prepare(c, "SELECT id FROM ps WHERE id BETWEEN ? AND ? ORDER BY id")
    assert mysql_binary.execute(rng, 0, 2**41) == [(1,), (2**40,)]
    upd = mysql_binary.prepare(c, "UPDATE ps SET n = n + ? WHERE id = ?")
    assert mysql_binary.execute(upd, 10, 1) == (1, 0)
    assert mysql_binary.execute(upd, 10, 999) == (0, 0)
    assert scalar(cur, "SELECT n FROM ps WHERE id = 1") == 3

    mysql_binary.close(sel)
    with pytest.raises(pymysql.err.MySQLError) as e:
        mysql_binary.execute(sel, 1)
    assert e.value.args[0] == 1243
    with pytest.raises(pymysql.err.MySQLError) as e:
        mysql_binary.prepare(c, "SELEKT ?")
    assert e.value.args[0] == 1064
    assert scalar(cur, "SELECT 1") == 1  # connection still usable


def test_prepared_statement_columns_follow_ddl(connect):
    """Executes of one prepared statement reuse its encoded column
    definitions; after DDL changes the columns, the next execute must send
    the new ones (binary rows are decoded by them: stale definitions would
    misread the row)."""
    c = connect()
    cur = c.cursor()
    cur.execute("CREATE TABLE pc (id INT PRIMARY KEY, a INT)")
    cur.execute("INSERT INTO pc VALUES (1, 10)")
    sel = mysql_binary.prepare(c, "SELECT * FROM pc WHERE id = ?")
    for _ in range(3):
        assert mysql_binary.execute(sel, 1) == [(1, 10)]
    # The table made again with other columns (lockstep has no ALTER TABLE
    # ADD/DROP COLUMN yet): the statement is bound again.
    cur.execute("DROP TABLE pc")
    cur.execute("CREATE TABLE pc (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
    cur.execute("INSERT INTO pc VALUES (1, 10, 'xy')")
    assert mysql_binary.execute(sel, 1) == [(1, 10, "xy")]
    assert mysql_binary.execute(sel, 1) == [(1, 10, "xy")]
    cur.execute("DROP TABLE pc")
    cur.execute("CREATE TABLE pc (id INT PRIMARY KEY, b VARCHAR(10))")
    cur.execute("INSERT INTO pc VALUES (1, 'xy')")
    assert mysql_binary.execute(sel, 1) == [(1, "xy")]
    # Another statement on the same connection keeps its own definitions.
    one_col = mysql_binary.prepare(c, "SELECT b FROM pc WHERE id = ?")
    assert mysql_binary.execute(one_col, 1) == [("xy",)]
    assert mysql_binary.execute(sel, 1) == [(1, "xy")]
