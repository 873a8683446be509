"""LOAD DATA LOCAL INFILE (PyMySQL, local_infile=True) and query
attributes (mysql-connector-python's cursor.add_attribute), end to end."""

import pytest

from lockstep_server import TARGET, code_of

lockstep_only = pytest.mark.skipif(TARGET != "lockstep", reason="MySQL 8 behaviour")


@pytest.fixture
def loader(server, connect, db):
    """A local_infile connection with table t (id primary key, s, n)."""
    server.sql("SET GLOBAL local_infile = 1")
    c = connect(local_infile=True)
    cur = c.cursor()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), n INT)")
    return cur


def rows(cur):
    cur.execute("SELECT * FROM t ORDER BY id")
    return cur.fetchall()


def write(tmp_path, text, name="data.txt"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


def test_default_format_and_null(loader, tmp_path):
    f = write(tmp_path, "1\ta\\tb\t10\n2\t\\N\t20\n")
    loader.execute(f"LOAD DATA LOCAL INFILE '{f}' INTO TABLE t")
    assert loader.rowcount == 2
    assert rows(loader) == ((1, "a\tb", 10), (2, None, 20))


def test_csv_options_columns_vars_and_set(loader, tmp_path):
    f = write(tmp_path, 'id;name;num\r\n>>7;"x;y";3\r\n>>8;"say ""hi""";4\r\nno prefix\r\n')
    loader.execute(
        f"LOAD DATA LOCAL INFILE '{f}' INTO TABLE t "
        "FIELDS TERMINATED BY ';' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\' "
        "LINES STARTING BY '>>' TERMINATED BY '\\r\\n' "
        "(id, @name, @num) SET s = UPPER(@name), n = @num * 10")
    assert rows(loader) == ((7, "X;Y", 30), (8, 'SAY "HI"', 40))


def test_ignore_lines_and_column_subset(loader, tmp_path):
    f = write(tmp_path, "header\n5,five\n6,six\n")
    loader.execute(f"LOAD DATA LOCAL INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' "
                   "IGNORE 1 LINES (id, s)")
    assert rows(loader) == ((5, "five", None), (6, "six", None))


def test_replace_and_ignore_on_duplicates(loader, tmp_path):
    loader.execute("INSERT INTO t VALUES (1, 'old', 1)")
    f = write(tmp_path, "1\tnew\t2\n2\ttwo\t2\n")
    loader.execute(f"LOAD DATA LOCAL INFILE '{f}' IGNORE INTO TABLE t")
    assert rows(loader) == ((1, "old", 1), (2, "two", 2))
    loader.execute("DELETE FROM t WHERE id = 2")
    loader.execute(f"LOAD DATA LOCAL INFILE '{f}' REPLACE INTO TABLE t")
    assert loader.rowcount == 3  # one row replaced (2), one inserted
    assert rows(loader) == ((1, "new", 2), (2, "two", 2))


def test_errors_roll_the_whole_load_back(loader, tmp_path):
    missing = write(tmp_path, "1\ta\n")
    assert code_of(lambda: loader.execute(
        f"LOAD DATA LOCAL INFILE '{missing}' INTO TABLE nope")) == 1146
    bad = write(tmp_path, "1\ta\t1\n2\tb\tnot a number\n", "bad.txt")
    assert code_of(lambda: loader.execute(f"LOAD DATA LOCAL INFILE '{bad}' INTO TABLE t")) == 1366
    assert rows(loader) == ()
    short = write(tmp_path, "1\ta\n", "short.txt")
    assert code_of(lambda: loader.execute(f"LOAD DATA LOCAL INFILE '{short}' INTO TABLE t")) == 1261
    assert rows(loader) == ()
    # Inside a transaction the rows before stay; the load's own go.
    loader.execute("BEGIN")
    loader.execute("INSERT INTO t VALUES (9, 'keep', 9)")
    assert code_of(lambda: loader.execute(f"LOAD DATA LOCAL INFILE '{bad}' INTO TABLE t")) == 1366
    loader.execute("COMMIT")
    assert rows(loader) == ((9, "keep", 9),)


@lockstep_only
def test_disabled_and_server_side_files(server, connect, tmp_path):
    f = write(tmp_path, "1\n")
    server.sql("SET GLOBAL local_infile = 0")
    try:
        cur = connect(local_infile=True).cursor()
        cur.execute("CREATE TABLE t (id INT)")
        assert code_of(lambda: cur.execute(f"LOAD DATA LOCAL INFILE '{f}' INTO TABLE t")) == 3948
        assert code_of(lambda: cur.execute(f"LOAD DATA INFILE '{f}' INTO TABLE t")) == 1290
        cur.execute("SELECT @@secure_file_priv")
        assert cur.fetchall() == ((None,),)
    finally:
        server.sql("SET GLOBAL local_infile = 1")
    # A client that did not ask for local files cannot load them.
    cur = connect().cursor()
    assert code_of(lambda: cur.execute(f"LOAD DATA LOCAL INFILE '{f}' INTO TABLE t")) == 3948


@lockstep_only
def test_large_file_streams_under_a_small_memory_cap(loader, tmp_path):
    line = "{}\t" + "x" * 16 + "\t{}\n"
    path = tmp_path / "big.txt"
    n = 0
    with open(path, "w") as out:
        while out.tell() < 50 << 20:
            out.write("".join(line.format(i, i % 1000) for i in range(n, n + 10000)))
            n += 10000
    loader.execute("SET SESSION query_memory_limit = 8388608")
    loader.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE t")
    assert loader.rowcount == n
    loader.execute("SELECT COUNT(*), SUM(n) FROM t")
    assert loader.fetchone() == (n, sum(i % 1000 for i in range(n)))


def test_rows_survive_a_restart(server_factory, tmp_path):
    s = server_factory("load")
    s.sql("SET GLOBAL local_infile = 1")
    s.sql("CREATE DATABASE d")
    s.sql("CREATE TABLE d.t (id INT PRIMARY KEY, s TEXT)")
    f = write(tmp_path, "".join(f"{i},v{i}\n" for i in range(1000)))
    s.sql(f"LOAD DATA LOCAL INFILE '{f}' INTO TABLE d.t FIELDS TERMINATED BY ','",
          local_infile=True)
    s.restart()
    assert s.sql("SELECT COUNT(*), MAX(s) FROM d.t") == ((1000, "v999"),)


@lockstep_only
def test_query_attributes(server, db):
    mysql = pytest.importorskip("mysql.connector")
    c = mysql.connect(host="127.0.0.1", port=server.port, user="root", database=db,
                      use_pure=True)
    try:
        cur = c.cursor()
        cur.add_attribute("a", "hello")
        cur.add_attribute("n", 42)
        cur.execute("SELECT mysql_query_attribute_string('a'), "
                    "mysql_query_attribute_string('n'), mysql_query_attribute_string('zz')")
        assert cur.fetchall() == [("hello", "42", None)]
        cur.clear_attributes()
        import datetime
        cur.add_attribute("when", datetime.datetime(2021, 3, 11, 19, 27, 30))
        cur.execute("SELECT mysql_query_attribute_string('when')")
        assert cur.fetchall() == [("2021-03-11 19:27:30.000000",)]
        cur.clear_attributes()
        cur.execute("SELECT mysql_query_attribute_string('a')")
        assert cur.fetchall() == [(None,)]
        prep = c.cursor(prepared=True)
        prep.add_attribute("p", "pv")
        prep.execute("SELECT mysql_query_attribute_string('p'), ?", (5,))
        assert prep.fetchall() == [("pv", 5)]
    finally:
        c.close()
