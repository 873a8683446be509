"""Every column type lockstep supports, through the MySQL binlog stream:
python-mysql-replication decodes INSERT, UPDATE (before and after
images) and DELETE row events, and each value is checked against SELECT
of the same row; mariadb-binlog decodes a capture of the stream when it
is installed."""

import datetime
import json
import os
import shutil
import struct
import subprocess

import pymysql
import pytest

from cdc_support import charsets_dir, node_fixture
from lockstep_server import HOST, TARGET
from test_binlog_stream import _replication, gtid_executed, read_events

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's stream")

# 17 numeric columns: the SIGNEDNESS bitmap takes 3 bytes whether YEAR
# counts or not (MySQL and go-mysql leave it out, python-mysql-replication
# counts it and then reads past the bitmap when that needs one more byte).
COLUMNS = [
    ("id", "INT PRIMARY KEY"),
    ("ti", "TINYINT"), ("tiu", "TINYINT UNSIGNED"),
    ("si", "SMALLINT"), ("siu", "SMALLINT UNSIGNED"),
    ("mi", "MEDIUMINT"), ("miu", "MEDIUMINT UNSIGNED"),
    ("i", "INT"), ("iu", "INT UNSIGNED"),
    ("bi", "BIGINT"), ("biu", "BIGINT UNSIGNED"),
    ("f", "FLOAT"), ("d", "DOUBLE"),
    ("dec_wide", "DECIMAL(65,30)"), ("dec_int", "DECIMAL(5,0)"), ("dec_mid", "DECIMAL(10,4)"),
    ("dec_tiny", "DECIMAL(2,2)"),
    ("c", "CHAR(10)"), ("vc", "VARCHAR(300)"), ("bn", "BINARY(4)"), ("vb", "VARBINARY(20)"),
    ("tt", "TINYTEXT"), ("tx", "TEXT"), ("mt", "MEDIUMTEXT"), ("lt", "LONGTEXT"),
    ("tb", "TINYBLOB"), ("bl", "BLOB"), ("mb", "MEDIUMBLOB"), ("lb", "LONGBLOB"),
    ("dt", "DATE"), ("dtm", "DATETIME"), ("dtm3", "DATETIME(3)"), ("dtm6", "DATETIME(6)"),
    ("ts", "TIMESTAMP NULL"), ("ts2", "TIMESTAMP(2) NULL"), ("ts6", "TIMESTAMP(6) NULL"),
    ("tm", "TIME"), ("tm1", "TIME(1)"), ("tm4", "TIME(4)"), ("tm6", "TIME(6)"),
    ("y", "YEAR"), ("b1", "BIT(1)"), ("b12", "BIT(12)"), ("b64", "BIT(64)"),
    ("e", "ENUM('small','medium','large')"), ("st", "SET('a','b','c')"), ("j", "JSON"),
]
NAMES = [n for n, _ in COLUMNS]

ROWS = [
    (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
     -9223372036854775808, 18446744073709551615, 1.5, -2.25e-300,
     "-12345678901234567890123456789012345.123456789012345678901234567891",
     "-99999", "0.0001", "-0.99", "ab", "é" * 300, b"\x01\x02", b"\x00\xff",
     "tiny", "t" * 65535, "m" * 70000, "l" * 10, b"\x00", b"\xfe" * 300, b"mb", b"lb",
     "1000-01-01", "9999-12-31 23:59:59", "2024-02-29 12:00:00.123",
     "1970-01-01 00:00:00.000001", "2038-01-19 03:14:07", "2001-02-03 04:05:06.78",
     "1999-12-31 23:59:59.999999", "838:59:59", "-00:00:01.5", "-838:59:58.9999",
     "12:34:56.000007", 2155, 1, 0xABC, 0xFFFFFFFFFFFFFFFF, "large", "a,c",
     '{"b": [1, -70000, 5000000000, 18446744073709551615, 2.5, "x", true, false, null],'
     ' "a": {"nested": "é"}, "": {}}'),
    (2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, "0", "0", "0", "0.01", "", "", b"", b"",
     "", "", "", "", b"", b"", b"", b"", "2000-01-01", "2000-01-01 00:00:00",
     "2000-01-01 00:00:00", "2000-01-01 00:00:00", "1970-01-01 00:00:01",
     "1970-01-01 00:00:01", "1970-01-01 00:00:01", "00:00:00", "00:00:00", "00:00:00",
     "-00:00:00.000001", 1901, 0, 0, 0, "small", "", '[]'),
    (3,) + (None,) * (len(COLUMNS) - 1),
]

UPDATE = ("UPDATE t SET ti = 7, dec_mid = -1.5, vc = 'changed', tm6 = '-01:02:03.4', "
          "b12 = 5, j = JSON_OBJECT('k', JSON_ARRAY(1, 2)), st = 'b', bl = NULL, "
          "dtm6 = '2025-06-30 01:02:03.456789' WHERE id IN (1, 3)")


node = node_fixture("cdctypes")


def plain(v):
    """A decoded JSON value with bytes as text (python-mysql-replication
    gives keys and strings as bytes)."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, dict):
        return {plain(k): plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def same(name, got, want):
    """Whether the stream's value `got` is SELECT's `want` for column
    `name`, allowing for how each library represents the type."""
    kind = dict(COLUMNS)[name].split("(")[0].split(" ")[0]
    if kind == "SET" and want == "" and got is None:
        return True  # python-mysql-replication reads the empty set as None
    if want is None or got is None:
        return got is None and want is None
    if kind == "BIT":
        return int(got, 2) == int.from_bytes(want, "big")
    if kind == "TIME" and want < datetime.timedelta(0) and want.microseconds:
        # python-mysql-replication 1.0.17 reads the fraction of a negative
        # TIME as a positive one; MySQL's layout (an integer part rounded
        # down and a negative remainder) is checked by test_cdc_go.py with
        # go-mysql and by the unit tests in crates/binlog.
        return isinstance(got, datetime.timedelta) and got < datetime.timedelta(0)
    if kind == "JSON":
        return plain(got) == json.loads(want)
    if kind == "FLOAT":
        return struct.pack("<f", got) == struct.pack("<f", want)
    if kind == "SET":
        return (",".join(sorted(got)) if isinstance(got, set) else got) == want
    if kind in ("BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"):
        got = got.encode("latin1") if isinstance(got, str) else got
        # MySQL sends BINARY(n) without its trailing zero bytes.
        return got == want or (kind == "BINARY" and got == want.rstrip(b"\0"))
    return got == want


def select(node, ids):
    conn = node.connect(db="cdct")
    with conn.cursor() as cur:
        cur.execute(f"SELECT {', '.join(NAMES)} FROM t WHERE id IN ({ids}) ORDER BY id")
        rows = [dict(zip(NAMES, r)) for r in cur.fetchall()]
    conn.close()
    return rows


def check(image, want, what):
    bad = [(n, image[n], want[n]) for n in NAMES if not same(n, image[n], want[n])]
    assert not bad, f"{what}: {bad}"


@pytest.fixture(scope="module")
def workload(node):
    """Inserts, updates and deletes in table cdct.t; the SELECT results
    after each step and the stream's events since before it."""
    node.sql("CREATE DATABASE IF NOT EXISTS cdct")
    since = gtid_executed(node)
    cols = ", ".join(f"{n} {t}" for n, t in COLUMNS)
    node.sql(f"CREATE TABLE cdct.t ({cols})")
    conn = node.connect(db="cdct")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO t VALUES ({', '.join(['%s'] * len(COLUMNS))})", ROWS)
    inserted = select(node, "1, 2, 3")
    with conn.cursor() as cur:
        cur.execute(UPDATE)
    updated = select(node, "1, 2, 3")
    with conn.cursor() as cur:
        cur.execute("DELETE FROM t WHERE id IN (2, 3)")
    conn.close()
    return since, inserted, updated


def test_every_type_matches_select(node, workload):
    _replication()
    from pymysqlreplication.row_event import (DeleteRowsEvent, UpdateRowsEvent,
                                              WriteRowsEvent)
    since, inserted, updated = workload
    events = read_events(node, since, only_schemas=["cdct"])
    writes = [r["values"] for e in events if isinstance(e, WriteRowsEvent) for r in e.rows]
    assert len(writes) == 3
    for got, want in zip(writes, inserted):
        check(got, want, f"insert of row {want['id']}")
    ups = [r for e in events if isinstance(e, UpdateRowsEvent) for r in e.rows]
    assert [u["after_values"]["id"] for u in ups] == [1, 3]
    for u in ups:
        k = u["after_values"]["id"] - 1
        check(u["before_values"], inserted[k], f"update of row {k + 1}, before")
        check(u["after_values"], updated[k], f"update of row {k + 1}, after")
    dels = [r["values"] for e in events if isinstance(e, DeleteRowsEvent) for r in e.rows]
    assert [d["id"] for d in dels] == [2, 3]
    for got in dels:
        check(got, updated[got["id"] - 1], f"delete of row {got['id']}")


def test_table_map_declares_mysql_types(node, workload):
    """JSON travels as MYSQL_TYPE_JSON (245) with 4 length bytes; the
    temporal types carry their fractional digits; ENUM and SET their real
    types and members."""
    _replication()
    from pymysqlreplication.constants import FIELD_TYPE
    from pymysqlreplication.row_event import TableMapEvent
    since = workload[0]
    (tm, *_) = [e for e in read_events(node, since, only_schemas=["cdct"])
                if isinstance(e, TableMapEvent)]
    cols = {c.name: c for c in tm.columns}
    assert cols["j"].type == FIELD_TYPE.JSON and cols["j"].length_size == 4
    assert [cols[n].fsp for n in ("dtm", "dtm3", "dtm6", "ts2", "tm1", "tm4")] == [0, 3, 6, 2, 1, 4]
    assert cols["b12"].bits == 12 and cols["b64"].bits == 64
    assert (cols["dec_wide"].precision, cols["dec_wide"].decimals) == (65, 30)
    assert cols["biu"].unsigned and not cols["bi"].unsigned
    assert cols["vc"].collation_name == "utf8mb4_0900_ai_ci"
    # ENUM/SET: real type, pack length, members from the optional metadata.
    assert (cols["e"].type, cols["e"].size) == (FIELD_TYPE.ENUM, 1)
    assert cols["e"].enum_values == ["", "small", "medium", "large"]
    assert (cols["st"].type, cols["st"].size) == (FIELD_TYPE.SET, 1)
    assert cols["st"].set_values == ["a", "b", "c"]


def capture(port, path, pos=4):
    """The stream from `pos` without blocking (COM_BINLOG_DUMP flag
    BINLOG_DUMP_NON_BLOCK), with CRC32, written as a binlog file."""
    conn = pymysql.connect(host=HOST, port=port, user="root", password="")
    with conn.cursor() as cur:
        cur.execute("SET @master_binlog_checksum = 'CRC32'")
    conn._next_seq_id = 0
    conn.write_packet(struct.pack("<BIHI", 0x12, pos, 1, 77) + b"binlog.000001")
    with open(path, "wb") as out:
        out.write(b"\xfebin")
        while True:
            pkt = conn._read_packet()
            if pkt.is_eof_packet():
                break
            event = pkt.get_all_data()[1:]
            flags = struct.unpack_from("<H", event, 17)[0]
            if event[4] == 4 and flags & 0x20:
                continue  # the artificial ROTATE is not in the file
            out.write(event)
    conn.close()


# MariaDB's tools know no MYSQL_TYPE_JSON (245): mariadb-binlog stops at
# the first row event of a table with a JSON column (as with a MySQL 8
# source), so its table has every other type.
MARIADB_COLUMNS = [(n, t) for n, t in COLUMNS if t != "JSON"]


@pytest.mark.skipif(not shutil.which("mariadb-binlog"), reason="no mariadb-binlog")
def test_mariadb_binlog_decodes_the_stream(node, tmp_path):
    charsets = charsets_dir(str(tmp_path / "charsets"))
    if charsets is None:
        pytest.skip("MariaDB's character-set files are not installed")
    node.sql("CREATE DATABASE IF NOT EXISTS cdct")
    pos = node.sql("SHOW MASTER STATUS")[0][1]
    cols = ", ".join(f"{n} {t}" for n, t in MARIADB_COLUMNS)
    node.sql(f"CREATE TABLE cdct.m ({cols})")
    conn = node.connect(db="cdct")
    names = [n for n, _ in MARIADB_COLUMNS]
    keep = [i for i, (_, t) in enumerate(COLUMNS) if t != "JSON"]
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO m ({', '.join(names)}) VALUES "
                        f"({', '.join(['%s'] * len(names))})",
                        [tuple(r[i] for i in keep) for r in ROWS])
        cur.execute(UPDATE.replace("UPDATE t", "UPDATE m").replace(
            "j = JSON_OBJECT('k', JSON_ARRAY(1, 2)), ", ""))
        cur.execute("DELETE FROM m WHERE id = 2")
    conn.close()
    path = os.path.join(tmp_path, "binlog.000001")
    capture(node.port, path, pos)
    r = subprocess.run(["mariadb-binlog", "--no-defaults", "-v", "--base64-output=DECODE-ROWS",
                        f"--character-sets-dir={charsets}", path],
                       capture_output=True, text=True, errors="replace", timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "ERROR" not in out and "Don't know" not in out, out[-3000:]
    assert "CREATE TABLE `cdct`.`m`" in out
    assert out.count("### INSERT INTO `cdct`.`m`") == 3
    assert out.count("### UPDATE `cdct`.`m`") == 2
    assert out.count("### DELETE FROM `cdct`.`m`") == 1
    assert "###   @19='changed'" in out, out[-3000:]
    # Integers print signed, the unsigned reading in parentheses.
    assert "###   @2=-128" in out and "###   @11=-1 (18446744073709551615)" in out, out[-3000:]
    # Negative fractional TIME, as MySQL's reader makes it back.
    assert "###   @38='-00:00:01.5'" in out and "###   @39='-838:59:58.9999'" in out, out[-3000:]
