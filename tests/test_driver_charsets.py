"""Issue 41, driver fidelity: what character_set_results and sql_mode
change on the wire. Column definitions carry the results' collation id
(binary, 63, for binary, numeric and temporal columns), names and error
messages come in that set, binary-protocol text parameters are decoded
from character_set_client, and NO_BACKSLASH_ESCAPES is in the status
flags drivers read before they escape."""

import mysql.connector
import pymysql

from lockstep_server import HOST, code_of

NO_BACKSLASH_ESCAPES = 0x200


def connector(server, db, charset):
    """Connector/Python (pure: it speaks the binary protocol itself)."""
    return mysql.connector.connect(host=HOST, port=server.port, user="root", password="",
                                   database=db, use_pure=True, charset=charset)


def charsetnrs(cur, sql):
    cur.execute(sql)
    cur.fetchall()
    return [(f.name, f.charsetnr, f.length) for f in cur._result.fields]


def test_column_definitions_carry_the_results_charset(cur):
    cur.execute("CREATE TABLE m (i INT, v VARCHAR(10), t TEXT, b BLOB, "
                "vb VARBINARY(5), e ENUM('a'), d DATETIME(3))")
    sql = "SELECT i, v, t, b, vb, e, d, 'x' AS lit, _binary'a' AS bl FROM m"
    binary = [("i", 63, 11), ("b", 63, 65535), ("vb", 63, 5), ("d", 63, 23), ("bl", 63, 1)]

    # (setting, collation id, bytes per character) of the text columns
    # v VARCHAR(10), t TEXT, e ENUM('a'), lit 'x'.
    cases = [
        ("SET NAMES utf8mb4", 255, 4),
        ("SET NAMES utf8", 33, 3),
        ("SET NAMES latin1", 8, 1),
        ("SET NAMES latin1 COLLATE latin1_bin", 47, 1),
        ("SET NAMES utf8mb4 COLLATE utf8mb4_general_ci", 45, 4),
        # NULL: no conversion, the column's own character set.
        ("SET character_set_results = NULL", 255, 4),
    ]
    for setting, nr, per_char in cases:
        cur.execute(setting)
        got = charsetnrs(cur, sql)
        assert [f for f in got if f[1] == 63] == binary, setting
        text = [(n, nr, chars * per_char) for n, chars in
                [("v", 10), ("t", 65535), ("e", 1), ("lit", 1)]]
        assert [f for f in got if f[1] != 63] == text, setting
    cur.execute("SET NAMES utf8mb4")


def test_prepared_definitions_follow_the_charset(server, db):
    c = connector(server, db, "utf8mb4")
    try:
        cur = c.cursor(prepared=True)
        cur.execute("CREATE TABLE p (v VARCHAR(10))")
        cur.execute("INSERT INTO p VALUES ('a')")
        for names, nr in [("utf8mb4", 255), ("latin1", 8), ("utf8mb4", 255)]:
            c.cmd_query(f"SET NAMES {names}")
            # The statement's cached definitions are encoded again for the
            # new character set.
            cur.execute("SELECT v FROM p WHERE v = ?", ("a",))
            assert cur.fetchall() == [("a",)]
            assert cur.description[0][8] == nr, cur.description
    finally:
        c.close()


def test_names_and_errors_come_in_the_results_charset(server, db):
    server.sql(f"CREATE TABLE `{db}`.`caf\u00e9` (id INT)")
    c = pymysql.connect(host=HOST, port=server.port, user="root", password="",
                        database=db, charset="latin1", autocommit=True)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT 'x' AS `na\u00efve`, id AS `\u00e9` FROM caf\u00e9")
            # PyMySQL decodes names as latin1: they must come in latin1.
            assert [f.name for f in cur._result.fields] == ["na\u00efve", "\u00e9"]
            assert [f.table_name for f in cur._result.fields] == ["", "caf\u00e9"]
            try:
                cur.execute("SELECT * FROM nosuch\u00e9")
                raise AssertionError("no error")
            except pymysql.err.ProgrammingError as e:
                assert e.args[0] == 1146
                # The message is in latin1 too; PyMySQL reads messages as
                # UTF-8 with replacement.
                assert "nosuch\ufffd" in e.args[1]
    finally:
        c.close()


def test_text_columns_refuse_bytes_that_are_not_utf8(connect):
    c = connect(use_unicode=False)
    c.query(b"CREATE TABLE u (id INT PRIMARY KEY, v VARCHAR(10), b VARBINARY(4))")
    for sql in (b"INSERT INTO u VALUES (1, 'a\xff\xfebcdefghi', NULL)",
                b"INSERT INTO u VALUES (1, _binary'\xff', NULL)"):
        try:
            c.query(sql)
            raise AssertionError("accepted")
        except pymysql.err.MySQLError as e:
            assert e.args[0] == 1366
    e = _error(c, b"INSERT INTO u VALUES (1, 'a\xff\xfebcdefghi', NULL)")
    assert e.args[1] == ("Incorrect string value: '\\xFF\\xFEbcde...' "
                         "for column 'v' at row 1")
    c.query(b"INSERT INTO u VALUES (2, '\xc3\xa9', _binary'\xff\xfe')")
    with c.cursor() as cur:
        cur.execute(b"SELECT v, b, CONVERT(b USING utf8mb4) FROM u")
        assert cur.fetchall() == ((b"\xc3\xa9", b"\xff\xfe", b"??"),)
        cur.execute(b"SHOW WARNINGS")
        assert cur.fetchall() == ((b"Warning", 1300,
                                   b"Invalid utf8mb4 character string: '\\xFF\\xFE'"),)


def _error(c, sql):
    try:
        c.query(sql)
    except pymysql.err.MySQLError as e:
        return e
    return None


def test_binary_protocol_text_params_use_the_client_charset(server, db):
    c = connector(server, db, "latin1")
    try:
        cur = c.cursor(prepared=True)
        cur.execute("CREATE TABLE bp (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(4))")
        # Connector/Python sends str as MYSQL_TYPE_STRING, encoded in latin1.
        cur.execute("INSERT INTO bp VALUES (?, ?, NULL)", (1, "caf\u00e9"))
        plain = c.cursor()
        plain.execute("SELECT HEX(s), s FROM bp")
        assert plain.fetchall() == [("636166C3A9", "caf\u00e9")]
        cur.execute("SELECT id FROM bp WHERE s = ?", ("caf\u00e9",))
        assert cur.fetchall() == [(1,)]
    finally:
        c.close()


def test_no_backslash_escapes_flag_and_lexing(connect):
    c = connect()
    assert not c.server_status & NO_BACKSLASH_ESCAPES
    with c.cursor() as cur:
        cur.execute("SET sql_mode = 'NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES'")
        assert c.server_status & NO_BACKSLASH_ESCAPES
        # PyMySQL now escapes by doubling quotes only.
        cur.execute("SELECT %s, LENGTH(%s)", ("C:\\dir\\it's", "a\\nb"))
        assert cur.fetchone() == ("C:\\dir\\it's", 4)
        cur.execute("CREATE TABLE nb (s VARCHAR(20))")
        cur.execute("INSERT INTO nb VALUES (%s)", ("x\\'y",))
        cur.execute("SELECT s FROM nb")
        assert cur.fetchone() == ("x\\'y",)
        cur.execute("SET sql_mode = DEFAULT")
        assert not c.server_status & NO_BACKSLASH_ESCAPES
        cur.execute("SELECT LENGTH('a\\nb')")
        assert cur.fetchone() == (3,)
