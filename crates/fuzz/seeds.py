#!/usr/bin/env python3
"""Writes the committed seed corpus under crates/fuzz/corpus/<target>/seed-*.

    python3 crates/fuzz/seeds.py            # needs target/release/lockstep and PyMySQL

SQL seeds are the statements of tests/README.md's "What clients send",
TPC-C statements and edge cases, on the fuzz schema (fz.t, fz.u; see
crates/fuzz/src/lib.rs) and as sent. Protocol seeds are real traffic: a proxy in
front of a lockstep server records what PyMySQL, the binary-protocol test
client (tests/mysql_binary.py) and the mariadb CLI send.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests"))

SQL = [
    # sysbench, as sent and on the fuzz schema
    "SELECT c FROM sbtest1 WHERE id=1",
    "SELECT b FROM t WHERE id=1",
    "SELECT b FROM t WHERE id BETWEEN 1 AND 4",
    "SELECT SUM(a) FROM t WHERE id BETWEEN 1 AND 4",
    "SELECT b FROM t WHERE id BETWEEN 1 AND 4 ORDER BY b",
    "SELECT DISTINCT b FROM t WHERE id BETWEEN 1 AND 4 ORDER BY b",
    "UPDATE t SET a=a+1 WHERE id=2",
    "UPDATE t SET b='x' WHERE id=3",
    "DELETE FROM t WHERE id=4",
    "INSERT INTO t (id, a, b, c) VALUES (6, 1, 'c', 2.5)",
    "INSERT INTO u (id, t_id, s) VALUES (0, 1, 'auto')",
    "SELECT id, a, b, c FROM t WHERE a IN (10, 20, 30, 40, 50, 60, 70, 80, 90, -7)",
    "SELECT count(a) FROM t WHERE a BETWEEN 1 AND 10 OR a BETWEEN 15 AND 25 OR a BETWEEN -10 AND 0",
    "INSERT INTO t VALUES(7,1,'a',0,NULL),(8,2,'b',1,NULL),(9,3,'c',2,NULL)",
    "SET NAMES utf8mb4",
    "SET AUTOCOMMIT = 0",
    # TPC-C shapes
    "SELECT a, b FROM t JOIN u ON (u.t_id = t.id) WHERE t.id = 1 AND u.id = 1",
    "SELECT a, c FROM t WHERE id = 2 FOR UPDATE",
    "UPDATE t SET a = a + 1 WHERE id = 1 AND a > 0",
    "SELECT MIN(id) FROM u WHERE t_id = 1",
    "SELECT id, d FROM t WHERE a = 10 ORDER BY id DESC LIMIT 1",
    "SELECT COUNT(DISTINCT t.id) FROM u JOIN t ON (t.id = u.t_id) WHERE u.id >= 1 AND u.id < 5 AND t.a < 15",
    "SELECT t_id, SUM(id) FROM u GROUP BY t_id ORDER BY t_id",
    "SELECT d_tax, d_next_o_id FROM bmsql_district WHERE d_w_id = 1 AND d_id = 2 FOR UPDATE",
    # edge cases
    "SELECT * FROM t a, t b WHERE a.id = b.a",
    "SELECT * FROM t LEFT JOIN u ON t.id = u.t_id WHERE u.id IS NULL",
    "SELECT b, COUNT(*), GROUP_CONCAT(id SEPARATOR '|') FROM t GROUP BY b HAVING COUNT(*) > 0",
    "SELECT * FROM (SELECT a, COUNT(*) n FROM t GROUP BY a) d WHERE n > 1",
    "SELECT id FROM t WHERE a IN (SELECT t_id FROM u) AND EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id)",
    "SELECT (SELECT MAX(id) FROM u WHERE u.t_id = t.id) FROM t",
    "SELECT b FROM t UNION SELECT s FROM u ORDER BY 1 LIMIT 3",
    "SELECT b FROM t UNION ALL SELECT s FROM u",
    "SELECT CAST(c AS CHAR), CAST('12abc' AS SIGNED), CONVERT(d, DATE) FROM t",
    "SELECT 9223372036854775807 + 1",
    "SELECT -9223372036854775808 DIV -1, 1 / 0, 5 % 0",
    "SELECT 18446744073709551615 * 2, ~0, 1 << 64",
    "SELECT 99999999999999999999999999999.99 * 10",
    "SELECT LPAD(b, 12, '*'), RPAD(b, 1, ''), REPLACE(b, 'a', 'aa'), CONCAT_WS('-', a, b, NULL) FROM t",
    "SELECT SUBSTRING('hello', -3, 2), LEFT('x', -1), TRIM(LEADING 'x' FROM 'xxa'), UPPER('äß')",
    "SELECT 'a' = 'A', 'Ä' = 'a', b LIKE 'b%' ESCAPE '!', b REGEXP '^c' FROM t",
    "SELECT DATE('2024-02-30'), '2024-01-01' + INTERVAL 1 DAY, NOW() - INTERVAL 1 MONTH",
    "SELECT CASE a WHEN 10 THEN 'ten' WHEN NULL THEN 'null' ELSE 'other' END FROM t",
    "SELECT COALESCE(NULL, a, 0), IFNULL(b, 'none'), NULLIF(a, 10), IF(a > 0, 1, 0) FROM t",
    "SELECT @x := 1, @x + 1",
    "SET @v = 5; SELECT @v * 2",
    "SELECT * FROM t WHERE id IN (1, 2, NULL) OR a NOT IN (NULL)",
    "SELECT * FROM t WHERE (a, id) = (10, 1)",
    "SELECT * FROM t WHERE a BETWEEN 20 AND 10",
    "SELECT * FROM t ORDER BY a IS NULL, a DESC, b LIMIT 2 OFFSET 1",
    "SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1; SELECT FOUND_ROWS()",
    "INSERT INTO t VALUES (1, 0, '', 0, NULL) ON DUPLICATE KEY UPDATE a = VALUES(a) + a",
    "REPLACE INTO u (id, t_id, s) VALUES (1, 2, 'r')",
    "INSERT IGNORE INTO t VALUES (1, 0, 'dup', 0, NULL)",
    "UPDATE t SET c = c * 2 ORDER BY id DESC LIMIT 2",
    "DELETE FROM u WHERE t_id = 1 ORDER BY id LIMIT 1",
    "INSERT INTO u (t_id, s) SELECT id, b FROM t",
    "SELECT SLEEP(0), CONNECTION_ID(), DATABASE(), VERSION(), LAST_INSERT_ID()",
    "SHOW VARIABLES LIKE 'sort%'",
    "SHOW INDEX FROM t",
    "DESCRIBE u",
    "EXPLAIN SELECT * FROM t WHERE a = 10",
    "SELECT @@sort_buffer_size, @@session.tmp_table_size, @@global.max_connections",
    "SELECT ((((((((((1))))))))))",
    "SELECT NOT NOT NOT NOT 1, - - - 1, !!1",
    "SELECT 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1",
    "SELECT HEX('a'), x'4142', 0x41, b'101', _utf8mb4'x', N'y'",
    "SELECT `id`, \"dq\", 'it''s', 'back\\\\slash' FROM `t` /* comment */ -- tail",
    "SELECT 1e308 * 10, -0.0, .5, 5., 1e-400",
    "",
    ";",
    "SELECT",
]

HANDSHAKE_SEEDS_MAX = 40


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"seed-{name}"), "wb") as f:
        f.write(data)


def sql_seeds():
    for i, s in enumerate(SQL):
        write("sql_session", f"{i:03d}", s.encode())


class Recorder:
    """A TCP proxy that records each connection's client-to-server bytes."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.streams = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            rec = bytearray()
            self.streams.append(rec)
            threading.Thread(target=self._pump, args=(client, server, rec), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, None), daemon=True).start()

    @staticmethod
    def _pump(src, dst, rec):
        try:
            while True:
                b = src.recv(65536)
                if not b:
                    break
                if rec is not None:
                    rec.extend(b)
                dst.sendall(b)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def packets(stream):
    out, p = [], 0
    while p + 4 <= len(stream):
        n = int.from_bytes(stream[p:p + 3], "little")
        out.append(bytes(stream[p + 4:p + 4 + n]))
        p += 4 + n
    return out


def client_sessions(port):
    """Real clients doing typical work through the recorder on `port`."""
    import pymysql
    import mysql_binary
    kw = dict(host="127.0.0.1", port=port, user="root", password="", charset="utf8mb4")
    setup = pymysql.connect(autocommit=True, **kw)
    with setup.cursor() as c:
        c.execute("CREATE DATABASE IF NOT EXISTS fz")
        c.execute("CREATE TABLE IF NOT EXISTS fz.t (id INT PRIMARY KEY, a INT, b VARCHAR(20))")
    setup.close()
    conn = pymysql.connect(database="fz", autocommit=False, **kw)
    with conn.cursor() as c:
        c.execute("INSERT INTO t VALUES (1, 2, 'x')")
        c.execute("SELECT * FROM t WHERE id = 1")
        conn.commit()
        c.execute("SELECT @@version")
    conn.ping()
    conn.select_db("fz")
    conn.close()
    conn = pymysql.connect(database="fz", autocommit=True, **kw)
    for sql, args in [
        ("SELECT ?, ?, ?", (1, "two", None)),
        ("SELECT ? + 1", (2**63 + 5,)),
        ("SELECT ?", (2.5,)),
        ("SELECT b FROM t WHERE id = ?", (1,)),
        ("UPDATE t SET a = ? WHERE id = ?", (7, 1)),
        ("BEGIN", ()),
        ("COMMIT", ()),
    ]:
        stmt = mysql_binary.prepare(conn, sql)
        mysql_binary.execute(stmt, *args)
        mysql_binary.reset(stmt)
        mysql_binary.close(stmt)
    conn.close()
    subprocess.run(["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{port}", "-uroot",
                    "--protocol=TCP", "fz", "-e", "SELECT * FROM t; SHOW TABLES"],
                   capture_output=True, timeout=30)


def protocol_seeds():
    from lockstep_server import Server
    work = tempfile.mkdtemp(prefix="lockstep-seeds-")
    server = Server(work, name="seeds")
    server.start()
    try:
        rec = Recorder(server.port)
        client_sessions(rec.port)
        time.sleep(0.5)
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    streams = [bytes(s) for s in rec.streams if s]
    for i, s in enumerate(streams[:HANDSHAKE_SEEDS_MAX]):
        write("protocol_handshake", f"conn-{i:02d}", s)
        # The handshake response alone (the target frames it itself).
        write("protocol_handshake", f"response-{i:02d}", packets(s)[0])
    edge_handshakes(packets(streams[0])[0], packets(streams[0])[1:])
    n = 0
    for s in streams:
        cmds = packets(s)[1:]
        for deprecate_eof in (0, 1):
            body = bytearray([deprecate_eof, 3])
            for c in cmds:
                body += len(c).to_bytes(2, "little") + c
            write("protocol_command", f"session-{n:02d}", bytes(body))
            n += 1
        # Each command alone too.
        for c in cmds:
            write("protocol_command", f"cmd-{n:03d}", bytes([1, 2]) + len(c).to_bytes(2, "little") + c)
            n += 1


def frame(payload, seq):
    return len(payload).to_bytes(3, "little") + bytes([seq]) + payload


def edge_handshakes(response, commands):
    """Variants of a real handshake response: other capabilities, an auth
    switch, TLS and pre-4.1 requests, truncation, bad framing."""
    caps = int.from_bytes(response[:4], "little")
    tail = response[32:]
    user_end = tail.index(0)
    auth_len = tail[user_end + 1]
    auth = tail[user_end + 2:user_end + 2 + auth_len]
    head = lambda c: c.to_bytes(4, "little") + response[4:32]
    follow = b"".join(frame(c, 0) for c in commands)
    variants = {
        "with-db": head(caps | 8) + b"root\0" + bytes([len(auth)]) + auth + b"fz\0mysql_native_password\0",
        "unknown-db": head(caps | 8) + b"root\0\0nope\0",
        "sha2-switch": head(caps) + b"root\0" + bytes([20]) + b"x" * 20 + b"caching_sha2_password\0",
        "ssl-request": head(caps | 0x800)[:32],
        "pre-41": (caps & ~0x200).to_bytes(4, "little") + b"\0\0\0root\0",
        "old-auth-len": head((caps | 0x8000) & ~0x200000) + b"root\0\0",
        "no-plugin": head(caps & ~0x80000) + b"root\0\0",
        "bad-user": head(caps) + b"\xff\xfe\0\0",
        "attrs": head(caps | 0x100000) + tail + b"\x0c\x03_os\x05Linux\x02ab",
    }
    for name, payload in variants.items():
        extra = frame(b"y" * 20, 3) if name == "sha2-switch" else b""
        write("protocol_handshake", name, frame(payload, 1) + extra + follow)
    whole = frame(response, 1) + follow
    write("protocol_handshake", "cut-half", whole[: len(whole) // 2])
    write("protocol_handshake", "wrong-seq", frame(response, 7) + follow)
    write("protocol_handshake", "oversize", (2 << 20).to_bytes(3, "little") + b"\1" + response)
    write("protocol_handshake", "split-header", b"\xff\xff\xff\x01" + response)
    write("protocol_handshake", "empty-response", frame(b"", 1))
    write("protocol_handshake", "cmd-wrong-seq", frame(response, 1) + frame(b"\x03SELECT 1", 5))
    write("protocol_handshake", "cmd-too-big",
          frame(response, 1) + (70_000).to_bytes(3, "little") + b"\0\x03" + b"x" * 100)


if __name__ == "__main__":
    sql_seeds()
    protocol_seeds()
