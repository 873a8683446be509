"""Numeric and string functions at their edges, lockstep against MariaDB.

A generated cross product of functions x edge arguments (0, negatives,
huge and huge unsigned values, NULL, text, negative places) runs on the
lockstep server under test and on a private mariadbd; results (text as the
server sends it, or the error code) must agree, except for the listed
places where MySQL 8, which lockstep follows, differs from MariaDB.
Skipped when mariadbd is not installed or the target already is MariaDB.
"""

import itertools
import math
import shutil

import pymysql
import pytest

from lockstep_server import TARGET, Server, ServerError

FUNCTIONS = [
    ("ROUND", 1), ("ROUND", 2), ("TRUNCATE", 2), ("ABS", 1), ("CEIL", 1),
    ("FLOOR", 1), ("SIGN", 1), ("SQRT", 1), ("EXP", 1), ("LN", 1), ("LOG", 1),
    ("LOG", 2), ("LOG2", 1), ("LOG10", 1), ("POW", 2), ("MOD", 2), ("HEX", 1),
    ("LEFT", 2), ("RIGHT", 2), ("SUBSTRING", 2), ("SUBSTRING", 3), ("LPAD", 3),
    ("RPAD", 3), ("REPEAT", 2), ("SPACE", 1), ("INSTR", 2),
]

EDGES = [
    "0", "-1", "2", "1.5", "-2.5", "2.5e0", "NULL", "-400",
    "9223372036854775807", "-9223372036854775808", "18446744073709551615",
    "1e308", "'abc'",
]
# Fewer for three-argument calls, to keep the product small.
EDGES3 = ["0", "-1", "2", "1.5", "NULL", "18446744073709551615", "'xy'"]

OPERATORS = ["+", "-", "*", "/", "DIV", "%"]

# MySQL 8 (what lockstep follows) and MariaDB disagree here; the value is
# MySQL 8's. `None` means any lockstep result is accepted for now.
MYSQL8_DIFFERS = {
    # MySQL types -9223372036854775808 as a signed BIGINT, so negating it
    # overflows (1690); MariaDB wraps around.
    "0 - -9223372036854775808": ("error", 1690),
}


def expressions():
    for name, arity in FUNCTIONS:
        edges = EDGES3 if arity == 3 else EDGES
        for args in itertools.product(edges, repeat=arity):
            yield f"{name}({','.join(args)})"
    for op in OPERATORS:
        for a, b in itertools.product(EDGES, repeat=2):
            yield f"{a} {op} {b}"
    for a in EDGES:
        for ty in ["SIGNED", "UNSIGNED", "DECIMAL(4,2)", "DECIMAL(65,30)"]:
            yield f"CAST({a} AS {ty})"


def result(conn, expr):
    """The value as the server's text protocol sends it, or ('error', code)."""
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT {expr}")
            value = cur.fetchone()[0]
    except pymysql.err.MySQLError as e:
        return ("error", e.args[0])
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value


def same(a, b):
    if a == b:
        return True
    # DOUBLE text may differ in its last printed digit.
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-300)


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory):
    if TARGET == "mariadb":
        pytest.skip("the server under test is MariaDB itself")
    if shutil.which("mariadbd") is None or shutil.which("mariadb-install-db") is None:
        pytest.skip("mariadbd is not installed")
    ref = Server(tmp_path_factory.mktemp("mariadb-ref"), target="mariadb", name="reference")
    try:
        ref.start()
    except ServerError as e:
        ref.cleanup()
        pytest.skip(f"mariadbd does not start here: {e}")
    yield ref
    ref.cleanup()


def raw_connect(server):
    # conv={}: every value arrives as the text the server sent.
    return server.connect(conv={})


def test_functions_at_edges_match_mariadb_or_mysql8(server, mariadb):
    ours, theirs = raw_connect(server), raw_connect(mariadb)
    wrong = []
    try:
        for expr in expressions():
            got, ref = result(ours, expr), result(theirs, expr)
            if expr in MYSQL8_DIFFERS:
                want = MYSQL8_DIFFERS[expr]
                if want is not None and not same(got, want):
                    wrong.append(f"{expr}: lockstep {got!r}, MySQL 8 {want!r}")
            elif not same(got, ref):
                wrong.append(f"{expr}: lockstep {got!r}, MariaDB {ref!r}")
    finally:
        ours.close()
        theirs.close()
    assert not wrong, f"{len(wrong)} differences:\n" + "\n".join(wrong)
