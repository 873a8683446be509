"""The `mariadb` command-line client, scripted as a user would script it.

Output is compared in --batch form (tab-separated, header line first), which
is what shell scripts consume. Only behaviour MySQL 8 and MariaDB share is
asserted: integer display widths (int(11) vs int) are normalised away.
"""

import re

SCHEMA = """
CREATE TABLE items (
  id INT NOT NULL AUTO_INCREMENT,
  name VARCHAR(40) NOT NULL,
  qty INT NOT NULL DEFAULT 5,
  price DECIMAL(10,2) DEFAULT NULL,
  sku VARCHAR(20) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_sku (sku),
  KEY idx_name (name)
);
INSERT INTO items (name, qty, price, sku) VALUES
  ('apple', 10, 1.50, 'A1'),
  ('pear', 3, 2.25, 'P1'),
  ('plum', 7, NULL, 'P2'),
  ('fig', 1, 9.99, 'F1');
INSERT INTO items (name, sku) VALUES ('kiwi', 'K1');
"""


def run_ok(server, sql, db=None, args=("--batch",)):
    r = server.cli(sql, db=db, args=list(args))
    assert r.returncode == 0, f"mariadb client failed ({r.returncode}): {r.stderr}"
    assert r.stderr == "", r.stderr
    return r.stdout


def rows(out):
    """Tab-separated batch output -> list of lists (header first)."""
    return [line.split("\t") for line in out.splitlines()]


def norm_type(t):
    """int(11) -> int, bigint(20) unsigned -> bigint unsigned."""
    return re.sub(r"^(tinyint|smallint|mediumint|int|bigint)\(\d+\)", r"\1", t)


def test_connect_and_select_literal(server):
    """The client connects as root with no password and prints a result."""
    out = run_ok(server, "SELECT 1 AS one, 'two' AS two, NULL AS three;")
    assert rows(out) == [["one", "two", "three"], ["1", "two", "NULL"]]


def test_create_database_use_and_tables(server, db):
    """CREATE DATABASE, USE, CREATE TABLE and SHOW DATABASES/TABLES work from a script."""
    dbname = db + "_cli"
    out = run_ok(server, f"""
        DROP DATABASE IF EXISTS {dbname};
        CREATE DATABASE {dbname};
        USE {dbname};
        SELECT DATABASE();
        {SCHEMA}
        CREATE TABLE other (a INT PRIMARY KEY);
        SHOW TABLES;
        """)
    try:
        assert rows(out) == [["DATABASE()"], [dbname],
                             [f"Tables_in_{dbname}"], ["items"], ["other"]]
        dbs = [r[0] for r in rows(run_ok(server, "SHOW DATABASES;"))]
        assert dbs[0] == "Database"
        assert dbname in dbs and "information_schema" in dbs
        like = rows(run_ok(server, f"SHOW DATABASES LIKE '{dbname}';"))
        assert like == [[f"Database ({dbname})"], [dbname]]
    finally:
        run_ok(server, f"DROP DATABASE IF EXISTS {dbname};")
    assert dbname not in run_ok(server, "SHOW DATABASES;").split()


def test_select_where_order_limit(server, db):
    """Inserted rows come back filtered, ordered and limited, with AUTO_INCREMENT
    ids, column DEFAULTs and NULLs printed as the client prints them."""
    run_ok(server, SCHEMA, db=db)
    out = run_ok(server, "SELECT id, name, qty, price FROM items ORDER BY id;", db=db)
    assert rows(out) == [
        ["id", "name", "qty", "price"],
        ["1", "apple", "10", "1.50"],
        ["2", "pear", "3", "2.25"],
        ["3", "plum", "7", "NULL"],
        ["4", "fig", "1", "9.99"],
        ["5", "kiwi", "5", "NULL"],
    ]
    out = run_ok(server, "SELECT name FROM items WHERE qty > 2 ORDER BY name DESC LIMIT 2;",
                 db=db)
    assert rows(out) == [["name"], ["plum"], ["pear"]]
    out = run_ok(server, "SELECT name, qty FROM items WHERE price IS NOT NULL "
                         "ORDER BY qty LIMIT 2 OFFSET 1;", db=db, args=["--batch", "-N"])
    assert rows(out) == [["pear", "3"], ["apple", "10"]]


def test_raw_output_escaping(server, db):
    """--batch escapes tabs/newlines inside values; --raw prints them as is."""
    run_ok(server, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20));"
                   "INSERT INTO t VALUES (1, 'a\\tb\\nc');", db=db)
    out = run_ok(server, "SELECT s FROM t;", db=db, args=["--batch", "-N"])
    assert out == "a\\tb\\nc\n"
    out = run_ok(server, "SELECT s FROM t;", db=db, args=["--batch", "--raw", "-N"])
    assert out == "a\tb\nc\n"


def test_show_columns_and_describe(server, db):
    """SHOW COLUMNS and DESCRIBE report types, nullability, keys, defaults and
    auto_increment."""
    run_ok(server, SCHEMA, db=db)
    expected = [
        ["id", "int", "NO", "PRI", "NULL", "auto_increment"],
        ["name", "varchar(40)", "NO", "MUL", "NULL", ""],
        ["qty", "int", "NO", "", "5", ""],
        ["price", "decimal(10,2)", "YES", "", "NULL", ""],
        ["sku", "varchar(20)", "NO", "UNI", "NULL", ""],
    ]
    for stmt in ("SHOW COLUMNS FROM items;", "DESCRIBE items;", "SHOW FIELDS FROM items;",
                 "DESC items;"):
        got = rows(run_ok(server, stmt, db=db))
        assert got[0] == ["Field", "Type", "Null", "Key", "Default", "Extra"], stmt
        got = [[r[0], norm_type(r[1])] + r[2:] for r in got[1:]]
        assert got == expected, stmt
    got = rows(run_ok(server, "SHOW COLUMNS FROM items LIKE 'q%';", db=db))
    assert [r[0] for r in got[1:]] == ["qty"]


def test_show_index(server, db):
    """SHOW INDEX lists the primary, unique and secondary indexes with their columns."""
    run_ok(server, SCHEMA + "CREATE INDEX idx_qty_price ON items (qty, price);", db=db)
    got = rows(run_ok(server, "SHOW INDEX FROM items;", db=db))
    assert got[0][:5] == ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name"]
    got = sorted(tuple(r[:5]) for r in got[1:])
    assert got == sorted([
        ("items", "0", "PRIMARY", "1", "id"),
        ("items", "0", "uk_sku", "1", "sku"),
        ("items", "1", "idx_name", "1", "name"),
        ("items", "1", "idx_qty_price", "1", "qty"),
        ("items", "1", "idx_qty_price", "2", "price"),
    ])
    run_ok(server, "DROP INDEX idx_qty_price ON items;", db=db)
    got = rows(run_ok(server, "SHOW KEYS FROM items;", db=db))
    assert "idx_qty_price" not in {r[2] for r in got[1:]}


def test_show_create_table_round_trips(server, db):
    """SHOW CREATE TABLE prints a statement that recreates the same table."""
    run_ok(server, SCHEMA, db=db)
    out = run_ok(server, "SHOW CREATE TABLE items;", db=db, args=["--batch", "--raw"])
    header, body = out.split("\n", 1)
    assert header == "Table\tCreate Table"
    assert body.startswith("items\tCREATE TABLE `items` (")
    ddl = body.split("\t", 1)[1]
    for piece in ("`id`", "AUTO_INCREMENT", "`qty`", "DEFAULT", "PRIMARY KEY (`id`)",
                  "UNIQUE KEY `uk_sku` (`sku`)", "KEY `idx_name` (`name`)"):
        assert piece in ddl, piece
    before = run_ok(server, "SHOW COLUMNS FROM items; SHOW INDEX FROM items;", db=db)
    run_ok(server, "DROP TABLE items;\n" + ddl.strip() + ";", db=db)
    after = run_ok(server, "SHOW COLUMNS FROM items; SHOW INDEX FROM items;", db=db)
    strip = lambda o: [r[:6] for r in rows(o)]  # noqa: E731 (cardinality etc. may differ)
    assert strip(after) == strip(before)


def expect_error(server, sql, code, sqlstate, text, db=None):
    r = server.cli(sql, db=db, args=["--batch"])
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert f"ERROR {code} ({sqlstate})" in r.stderr, r.stderr
    assert text in r.stderr, r.stderr
    return r


def test_error_syntax_1064(server, db):
    """A syntax error prints ERROR 1064 (42000) and the client exits 1."""
    expect_error(server, "SELEC 1;", 1064, "42000", "You have an error in your SQL syntax", db)


def test_error_no_such_table_1146(server, db):
    """A missing table prints ERROR 1146 (42S02) naming db.table."""
    expect_error(server, "SELECT * FROM nope;", 1146, "42S02", f"Table '{db}.nope' doesn't exist",
                 db)


def test_error_duplicate_key_1062(server, db):
    """A duplicate primary key prints ERROR 1062 (23000) with the value."""
    run_ok(server, "CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);", db=db)
    expect_error(server, "INSERT INTO t VALUES (1);", 1062, "23000", "Duplicate entry '1' for key",
                 db)


def test_error_unknown_column_1054(server, db):
    """An unknown column prints ERROR 1054 (42S22) naming the column."""
    run_ok(server, "CREATE TABLE t (id INT PRIMARY KEY);", db=db)
    expect_error(server, "SELECT nope FROM t;", 1054, "42S22", "Unknown column 'nope'", db)


def test_error_unknown_database_1049(server):
    """USE of a missing database prints ERROR 1049 (42000); so does connecting to one."""
    expect_error(server, "USE no_such_db_xyz;", 1049, "42000", "Unknown database 'no_such_db_xyz'")
    expect_error(server, "SELECT 1;", 1049, "42000", "Unknown database 'no_such_db_xyz'",
                 db="no_such_db_xyz")


def test_error_stops_script_unless_force(server, db):
    """Without --force a script stops at the first error; with --force it goes on.
    The error line number is reported."""
    script = "CREATE TABLE t (id INT PRIMARY KEY);\nINSERT INTO nope VALUES (1);\n" \
             "INSERT INTO t VALUES (7);\n"
    r = server.cli(script, db=db, args=["--batch"])
    assert r.returncode == 1 and "ERROR 1146 (42S02) at line 2" in r.stderr, r.stderr
    assert run_ok(server, "SELECT COUNT(*) FROM t;", db=db, args=["-N", "--batch"]) == "0\n"
    run_ok(server, "DROP TABLE t;", db=db)
    r = server.cli(script, db=db, args=["--batch", "--force"])
    assert "ERROR 1146 (42S02) at line 2" in r.stderr, r.stderr
    assert run_ok(server, "SELECT id FROM t;", db=db, args=["-N", "--batch"]) == "7\n"


def test_execute_flag_and_table_output(server, db):
    """`mariadb -e` runs a statement; --table draws the boxed table format."""
    r = server.cli("", db=db, args=["--table", "-e", "SELECT 42 AS answer"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "+--------+",
        "| answer |",
        "+--------+",
        "|     42 |",
        "+--------+",
    ]
