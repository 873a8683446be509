"""Joins in any order give the same rows: random inner, LEFT and RIGHT joins over
small integer tables with NULLs, checked against SQLite (whose integer
comparisons, NULL rules and outer joins agree with MySQL's here), and
STRAIGHT_JOIN against the chosen order."""

import os
import random
import sqlite3

TABLES = 4
COLUMNS = ("a", "b")


def create(conn, lite, rng):
    cur = conn.cursor()
    for t in range(TABLES):
        cur.execute(f"CREATE TABLE t{t} (id INT PRIMARY KEY, a INT, b INT, KEY ka (a), KEY kba (b, a))")
        lite.execute(f"CREATE TABLE t{t} (id INT PRIMARY KEY, a INT, b INT)")
        rows = []
        for i in range(rng.randint(0, 25)):
            value = lambda: None if rng.random() < 0.15 else rng.randint(0, 6)
            rows.append((i, value(), value()))
        for r in rows:
            vals = ", ".join("NULL" if v is None else str(v) for v in r)
            cur.execute(f"INSERT INTO t{t} VALUES ({vals})")
            lite.execute(f"INSERT INTO t{t} VALUES ({vals})")


def column(rng, tables):
    return f"{rng.choice(tables)}.{rng.choice(COLUMNS + ('id',))}"


def condition(rng, tables):
    kind = rng.random()
    if kind < 0.45 and len(tables) > 1:
        x, y = rng.sample(tables, 2)
        return f"{x}.{rng.choice(COLUMNS + ('id',))} = {y}.{rng.choice(COLUMNS + ('id',))}"
    if kind < 0.7:
        return f"{column(rng, tables)} = {rng.randint(0, 6)}"
    if kind < 0.8:
        return f"{column(rng, tables)} < {rng.randint(0, 6)}"
    if kind < 0.84:
        return f"{column(rng, tables)} IS NULL"
    if kind < 0.87:
        return f"{column(rng, tables)} IS NOT NULL"
    if kind < 0.94:
        return f"{column(rng, tables)} IN ({rng.randint(0, 6)}, {rng.randint(0, 6)})"
    return f"({column(rng, tables)} = {rng.randint(0, 6)} OR {column(rng, tables)} > 4)"


def conjunction(rng, tables, most):
    return " AND ".join(condition(rng, tables) for _ in range(rng.randint(1, most)))


def item(rng, name):
    """A table, or sometimes a derived table under the table's name."""
    if rng.random() < 0.12:
        return f"(SELECT * FROM {name} WHERE b IS NOT NULL) {name}"
    return name


def query(rng):
    n = rng.randint(2, TABLES)
    names = [f"t{t}" for t in rng.sample(range(TABLES), n)]
    sql = item(rng, names[0])
    seen = [names[0]]
    rest = names[1:]
    while rest:
        name = rest.pop(0)
        join = rng.random()
        if join < 0.1 and rest:
            # The inner side of a LEFT JOIN that is itself a join.
            other = rest.pop(0)
            inner = f"({name} JOIN {other} ON {conjunction(rng, [name, other], 2)})"
            seen += [name, other]
            sql += f" LEFT JOIN {inner} ON {conjunction(rng, seen, 2)}"
            continue
        seen.append(name)
        if join < 0.4:
            sql += f", {item(rng, name)}"
        elif join < 0.7:
            sql += f" JOIN {item(rng, name)} ON {conjunction(rng, seen, 2)}"
        elif join < 0.88 or "," in sql:
            sql += f" LEFT JOIN {item(rng, name)} ON {conjunction(rng, seen, 2)}"
        else:
            # Only in a chain of JOINs: after a comma MySQL would bind the
            # RIGHT JOIN tighter than SQLite does.
            sql += f" RIGHT JOIN {item(rng, name)} ON {conjunction(rng, seen, 2)}"
    where = f" WHERE {conjunction(rng, names, 4)}" if rng.random() < 0.85 else ""
    cols = ", ".join(f"{t}.id, {t}.a" for t in names)
    return f"SELECT {cols} FROM {sql}{where}"


def rows(cur, sql):
    cur.execute(sql)
    return sorted(tuple(-1 if v is None else int(v) for v in r) for r in cur.fetchall())


def test_random_joins_match_sqlite(connect):
    rng = random.Random(int(os.environ.get("JOIN_ORDER_SEED", "20261126")))
    conn = connect()
    lite = sqlite3.connect(":memory:")
    create(conn, lite, rng)
    cur = conn.cursor()
    for _ in range(int(os.environ.get("JOIN_ORDER_QUERIES", "1500"))):
        sql = query(rng)
        expected = sorted(
            tuple(-1 if v is None else v for v in r) for r in lite.execute(sql).fetchall())
        assert rows(cur, sql) == expected, sql
        straight = sql.replace("SELECT", "SELECT STRAIGHT_JOIN", 1)
        assert rows(cur, straight) == expected, straight
