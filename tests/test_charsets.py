"""Connection character sets (issue "Driver fidelity"): statements are
decoded from character_set_client, results encoded to
character_set_results, binary literals keep their bytes."""

import pymysql

from lockstep_server import HOST, code_of


def test_binary_literals_keep_their_bytes(cur):
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, b BLOB, vb VARBINARY(20), bi BINARY(4))")
    every = bytes(range(256))
    # PyMySQL sends bytes as _binary'...' with the raw bytes inside.
    cur.execute("INSERT INTO t VALUES (1, %s, %s, %s)", (every, b"\xff\xfe\x00\\'", b"\x80\x81"))
    cur.execute("SELECT b, vb, bi, HEX(vb) FROM t")
    assert cur.fetchone() == (every, b"\xff\xfe\x00\\'", b"\x80\x81\x00\x00", "FFFE005C27")
    cur.execute("SELECT id FROM t WHERE vb = %s", (b"\xff\xfe\x00\\'",))
    assert cur.fetchall() == ((1,),)
    # The _binary introducer right before the quote, as PyMySQL's
    # binary_prefix=True sends it.
    cur.connection.query(b"SELECT _binary'\x80a', _binary'ab', HEX(_binary'\\0\xff')")
    assert cur.connection._result.rows == ((b"\x80a", b"ab", "00FF"),)


def test_set_names_validates_and_sets_the_variables(cur):
    assert code_of(lambda: cur.execute("SET NAMES none")) == 1115
    assert code_of(lambda: cur.execute("SET NAMES latin1 COLLATE nosuch_ci")) == 1273
    assert code_of(lambda: cur.execute("SET NAMES latin1 COLLATE utf8mb4_bin")) == 1253
    assert code_of(lambda: cur.execute("SET character_set_client = NULL")) == 1231
    assert code_of(lambda: cur.execute("SET character_set_results = 'nosuch'")) == 1115
    vars_ = ("SELECT @@character_set_client, @@character_set_connection, "
             "@@character_set_results, @@collation_connection")
    cur.execute("SET NAMES latin1 COLLATE latin1_general_ci")
    cur.execute(vars_)
    assert cur.fetchone() == ("latin1", "latin1", "latin1", "latin1_general_ci")
    cur.execute("SET NAMES utf8")
    cur.execute(vars_)
    assert cur.fetchone() == ("utf8mb3", "utf8mb3", "utf8mb3", "utf8mb3_general_ci")
    cur.execute("SET CHARACTER SET cp1251")
    cur.execute(vars_)
    assert cur.fetchone() == ("cp1251", "utf8mb4", "cp1251", "utf8mb4_0900_ai_ci")
    cur.execute("SET collation_connection = latin1_bin")
    cur.execute("SELECT @@character_set_connection")
    assert cur.fetchone() == ("latin1",)
    cur.execute("SET NAMES utf8mb4")


def test_latin1_client_is_converted(connect):
    c = connect(use_unicode=False)
    c.query(b"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))")
    c.query("INSERT INTO t VALUES (2, '\u4e2d')".encode())
    c.query(b"SET NAMES latin1")
    c.query(b"INSERT INTO t VALUES (1, 'caf\xe9')")
    with c.cursor() as cur:
        cur.execute(b"SELECT s, HEX(s) FROM t ORDER BY id")
        # Stored as UTF-8; sent back in latin1; what latin1 lacks is '?'.
        assert cur.fetchall() == ((b"caf\xe9", b"636166C3A9"), (b"?", b"E4B8AD"))
        cur.execute(b"SET character_set_results = NULL")
        cur.execute(b"SELECT s FROM t WHERE id = 1")
        assert cur.fetchall() == ((b"caf\xc3\xa9",),)


def test_multibyte_client_trail_byte_is_not_a_backslash(connect):
    c = connect(use_unicode=False)
    c.query(b"SET NAMES sjis")
    with c.cursor() as cur:
        # Shift-JIS 0x95 0x5C is U+8868; its second byte is '\'.
        # (ASCII aliases: names come in sjis, which PyMySQL cannot read.)
        cur.execute(b"SELECT HEX('\x95\x5c') AS h, '\x95\x5c' AS s")
        assert cur.fetchall() == ((b"E8A1A8", b"\x95\x5c"),)


def test_handshake_collation_sets_the_connection_charset(server, db):
    c = pymysql.connect(host=HOST, port=server.port, user="root", password="",
                        database=db, charset="cp1251", autocommit=True)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT @@character_set_client, @@collation_connection, "
                        "HEX('\u041f\u0440\u0438'), '\u041f\u0440\u0438' AS s")
            assert cur.fetchone() == ("cp1251", "cp1251_general_ci", "D09FD180D0B8",
                                      "\u041f\u0440\u0438")
    finally:
        c.close()


def test_cp852_round_trips(connect):
    # cp852 (DOS Central European) is a table of our own: encoding_rs has
    # no IBM852. 0xFD is U+0159 (r with caron), 0x9F U+010D (c with caron).
    c = connect(use_unicode=False)
    c.query(b"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))")
    c.query(b"SET NAMES cp852")
    c.query(b"INSERT INTO t VALUES (1, '\xfd\x9fa')")
    with c.cursor() as cur:
        cur.execute(b"SELECT s, HEX(s), @@collation_connection FROM t")
        # Stored as UTF-8, sent back in cp852.
        assert cur.fetchall() == ((b"\xfd\x9fa", b"C599C48D61", b"cp852_general_ci"),)
        cur.execute(b"SET NAMES utf8mb4")
        cur.execute(b"SELECT s FROM t")
        assert cur.fetchall() == (("\u0159\u010da".encode(),),)
        cur.execute(b"SHOW COLLATION WHERE Charset = 'cp852'")
        assert sorted(r[:3] for r in cur.fetchall()) == [
            (b"cp852_bin", b"cp852", 81), (b"cp852_general_ci", b"cp852", 40)]
