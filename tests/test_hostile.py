"""Hostile clients: stalled handshakes, idle connections, oversized packets,
connection floods, garbage bytes, bad prepared-statement traffic, absurd SQL
and queries that would need unbounded memory. Each is answered with a MySQL
error or a closed connection, and the server keeps serving everyone else
(every test ends by checking that a fresh connection works)."""

import os
import random
import socket
import struct
import time

import pymysql
import pytest

import mysql_binary
from lockstep_server import HOST, TARGET, Server, ServerError, free_port

lockstep_only = pytest.mark.skipif(
    TARGET != "lockstep", reason="lockstep's limits and error choices")

CONNECT_TIMEOUT = 2
WAIT_TIMEOUT = 3
MAX_CONNECTIONS = 20
MAX_PACKET = 1 << 20

COM_QUERY = 0x03
COM_STMT_EXECUTE = 0x17


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """A private server with a small connect_timeout, max_connections and
    max_allowed_packet."""
    server = Server(tmp_path_factory.mktemp("limited"), name="limited", args=[
        "--connect-timeout", str(CONNECT_TIMEOUT),
        "--max-connections", str(MAX_CONNECTIONS),
        "--max-allowed-packet", str(MAX_PACKET),
    ])
    try:
        server.start()
    except ServerError as e:
        server.cleanup()
        pytest.fail(f"could not start server: {e}", pytrace=False)
    yield server
    server.cleanup()


def assert_serves(server, deadline=10):
    """A fresh connection works (retrying while closed connections are
    still being counted against max_connections)."""
    end = time.monotonic() + deadline
    while True:
        try:
            conn = server.connect(connect_timeout=5, read_timeout=10)
            break
        except pymysql.err.OperationalError as e:
            if e.args[0] != 1040 or time.monotonic() > end:
                raise
            time.sleep(0.1)
    try:
        with conn.cursor() as c:
            c.execute("SELECT 1 + 1")
            assert c.fetchone() == (2,)
    finally:
        conn.close()


# ---- raw protocol helpers ---------------------------------------------------

def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv_packet(sock):
    """(sequence id, payload), or None once the server closed."""
    try:
        head = recv_exact(sock, 4)
        if head is None:
            return None
        n = head[0] | head[1] << 8 | head[2] << 16
        payload = recv_exact(sock, n)
        return None if payload is None else (head[3], payload)
    except (ConnectionResetError, BrokenPipeError):
        return None


def packet(payload, seq):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def parse_err(payload):
    """(code, sqlstate or None, message) of an ERR packet."""
    assert payload[0] == 0xFF, f"expected ERR, got {payload[:16]!r}"
    code = struct.unpack("<H", payload[1:3])[0]
    if payload[3:4] == b"#":
        return code, payload[4:9].decode(), payload[9:].decode(errors="replace")
    return code, None, payload[3:].decode(errors="replace")


def wait_closed(sock, timeout):
    """Reads until the server closes; returns (seconds taken, packets seen).
    Fails if the connection is still open after `timeout`."""
    sock.settimeout(timeout)
    start = time.monotonic()
    seen = []
    try:
        while True:
            p = recv_packet(sock)
            if p is None:
                return time.monotonic() - start, seen
            seen.append(p)
    except socket.timeout:
        pytest.fail(f"connection still open after {timeout}s (got {seen!r})")


def raw_connect(server):
    """A socket that has read the server's greeting (or its 1040)."""
    sock = socket.create_connection((HOST, server.port), timeout=10)
    greeting = recv_packet(sock)
    assert greeting is not None, "no greeting"
    return sock, greeting[1]


def logged_in(server):
    """A PyMySQL connection whose socket the test then writes raw packets to."""
    conn = server.connect(read_timeout=10)
    return conn, conn._sock


# ---- connection phase -------------------------------------------------------

def test_half_handshake_is_dropped_after_connect_timeout(limited):
    sock, greeting = raw_connect(limited)
    assert greeting[0] == 10
    # A header announcing 100 bytes, then only 20 of them.
    sock.sendall(struct.pack("<I", 100)[:3] + b"\x01" + b"\x8d\xa6\x0f\x00" + b"\x00" * 16)
    # Others are served while it stalls.
    start = time.monotonic()
    assert_serves(limited)
    took, _ = wait_closed(sock, CONNECT_TIMEOUT + 5)
    elapsed = time.monotonic() - start
    assert CONNECT_TIMEOUT - 1 <= elapsed <= CONNECT_TIMEOUT + 4, elapsed
    sock.close()
    # Silent clients too.
    sock, _ = raw_connect(limited)
    wait_closed(sock, CONNECT_TIMEOUT + 5)
    sock.close()
    assert_serves(limited)


def test_idle_connection_is_closed_after_wait_timeout(server_factory):
    # Its own server: a small wait_timeout would also close the other
    # tests' connections whenever the machine is slow.
    limited = server_factory("idle", args=["--wait-timeout", str(WAIT_TIMEOUT)])
    busy = limited.connect()
    conn = limited.connect()
    with conn.cursor() as c:
        c.execute("SELECT @@wait_timeout")
        assert c.fetchone() == (WAIT_TIMEOUT,)
    # A connection that keeps talking is not idle.
    for _ in range(int((WAIT_TIMEOUT + 1.5) / 0.5)):
        time.sleep(0.5)
        busy.ping(reconnect=False)
    with pytest.raises(pymysql.err.OperationalError) as e:
        with conn.cursor() as c:
            c.execute("SELECT 1")
    assert e.value.args[0] in (2006, 2013, 4031), e.value.args
    busy.close()
    assert_serves(limited)


def test_session_wait_timeout_applies_to_that_session(server):
    """SET SESSION wait_timeout closes this idle session after its own
    timeout; other sessions keep the global one. DEFAULT restores it."""
    short, other = server.connect(), server.connect()
    with short.cursor() as c:
        c.execute("SET SESSION wait_timeout = 1")
        c.execute("SELECT @@session.wait_timeout, @@global.wait_timeout")
        assert c.fetchone()[0] == 1
        with pytest.raises(pymysql.err.MySQLError) as e:
            c.execute("SET SESSION wait_timeout = 'soon'")
        assert e.value.args[0] == 1232
    time.sleep(2.5)
    with pytest.raises(pymysql.err.OperationalError) as e:
        with short.cursor() as c:
            c.execute("SELECT 1")
    assert e.value.args[0] in (2006, 2013, 4031), e.value.args
    with other.cursor() as c:
        c.execute("SELECT 1")
        c.execute("SET SESSION wait_timeout = 1")
        c.execute("SET SESSION wait_timeout = DEFAULT")
        c.execute("SELECT @@session.wait_timeout = @@global.wait_timeout")
        assert c.fetchone() == (1,)
    time.sleep(2)
    with other.cursor() as c:
        c.execute("SELECT 1")
    other.close()


def test_oversized_packet_gets_1153_and_close(limited):
    conn, sock = logged_in(limited)
    # Only the header and a little of a 2 MiB COM_QUERY: the server must
    # refuse from the header, not buffer max_allowed_packet first.
    sock.sendall(struct.pack("<I", 2 * MAX_PACKET)[:3] + b"\x00" + bytes([COM_QUERY]) + b"x" * 1000)
    _, packets = wait_closed(sock, 10)
    assert packets, "expected an error before the close"
    assert parse_err(packets[-1][1])[:2] == (1153, "08S01")
    conn.close()
    # The same through a client that sends the whole statement.
    conn = limited.connect()
    with pytest.raises(pymysql.err.OperationalError) as e:
        with conn.cursor() as c:
            c.execute("SELECT '" + "x" * (2 * MAX_PACKET) + "'")
    assert e.value.args[0] in (1153, 2006, 2013), e.value.args
    conn.close()
    # Just under the limit is fine.
    conn = limited.connect()
    with conn.cursor() as c:
        c.execute("SELECT LENGTH('" + "x" * (MAX_PACKET - 1000) + "')")
        assert c.fetchone() == (MAX_PACKET - 1000,)
    conn.close()
    assert_serves(limited)


def test_connection_flood_past_max_connections(limited):
    time.sleep(0.5)  # connections of earlier tests have ended
    first = [limited.connect() for _ in range(MAX_CONNECTIONS)]
    # One more is kept for an administrator (root has SUPER), as in MySQL.
    admin = limited.connect()
    refused = 0
    for _ in range(MAX_CONNECTIONS):
        with pytest.raises(pymysql.err.OperationalError) as e:
            limited.connect()
        assert e.value.args[0] == 1040, e.value.args
        assert "Too many connections" in e.value.args[1]
        refused += 1
    # Raw sockets are refused with 1040 as their first packet.
    sock, first_packet = raw_connect(limited)
    assert parse_err(first_packet)[0] == 1040
    wait_closed(sock, 5)
    sock.close()
    assert refused == MAX_CONNECTIONS
    for conn in first:
        with conn.cursor() as c:
            c.execute("SELECT CONNECTION_ID()")
            assert c.fetchone()[0] > 0
    for conn in first:
        conn.close()
    admin.close()
    assert_serves(limited)


def test_stalled_sockets_free_their_slots(limited):
    """Clients that never finish the handshake hold a slot only until
    connect_timeout; they cannot lock an administrator out."""
    time.sleep(0.5)
    with limited.connect() as root:
        with root.cursor() as c:
            c.execute("DROP USER IF EXISTS plain")
            c.execute("CREATE USER plain IDENTIFIED BY 'pw'")
    time.sleep(0.3)
    socks = [raw_connect(limited)[0] for _ in range(MAX_CONNECTIONS)]
    with pytest.raises(pymysql.err.OperationalError) as e:
        limited.connect(user="plain", password="pw")
    assert e.value.args[0] == 1040
    admin = limited.connect()
    with admin.cursor() as c:
        c.execute("SELECT 1")
    admin.close()
    for s in socks:
        wait_closed(s, CONNECT_TIMEOUT + 5)
        s.close()
    assert_serves(limited)


@lockstep_only
def test_admin_port_outlasts_a_flood(tmp_path_factory):
    """Sockets that never log in can fill every client slot, the one kept
    for an administrator included; the administrative listener
    (--admin-address, as MySQL's admin_address) still lets an account with
    SUPER in, and only such an account."""
    server = Server(tmp_path_factory.mktemp("admin"), name="admin", args=[
        "--connect-timeout", "30",
        "--max-connections", "4",
    ])
    # free_port only probes: it can give the client port again.
    admin_port = next(p for p in iter(free_port, None) if p != server.port)
    server.args += ["--admin-address", HOST, "--admin-port", str(admin_port)]
    server.start()
    try:
        with server.connect() as root, root.cursor() as c:
            c.execute("CREATE USER plain IDENTIFIED BY 'pw'")
            c.execute("SELECT @@admin_address, @@admin_port")
            assert c.fetchone() == (HOST, admin_port)
        time.sleep(0.3)
        socks = [raw_connect(server)[0] for _ in range(5)]
        # The client port is full, for root too.
        with pytest.raises(pymysql.err.OperationalError) as e:
            server.connect(connect_timeout=5)
        assert e.value.args[0] == 1040
        admin_kw = dict(host=HOST, port=admin_port, connect_timeout=5)
        with pymysql.connect(user="root", password="", **admin_kw) as root:
            with root.cursor() as c:
                c.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST")
                assert c.fetchone()[0] >= 1
        with pytest.raises(pymysql.err.OperationalError) as e:
            pymysql.connect(user="plain", password="pw", **admin_kw)
        assert e.value.args[0] == 1227, e.value.args
        assert "SERVICE_CONNECTION_ADMIN" in e.value.args[1]
        for s in socks:
            s.close()
        assert_serves(server)
    finally:
        server.cleanup()


# ---- garbage ---------------------------------------------------------------

@pytest.mark.parametrize("after_auth", [False, True], ids=["before_auth", "after_auth"])
def test_garbage(limited, after_auth):
    rng = random.Random(int(after_auth))
    for i in range(20):
        if after_auth:
            conn, sock = logged_in(limited)
        else:
            conn, (sock, _) = None, raw_connect(limited)
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        if i % 2:
            # Framed, so the handshake parser / command decoder sees it.
            junk = packet(junk, 0 if after_auth else 1)
        sock.sendall(junk)
        sock.shutdown(socket.SHUT_WR)
        _, packets = wait_closed(sock, 10)
        for _, p in packets:
            if p[:1] == b"\xff":
                code, state, _ = parse_err(p)
                # Before auth, 1043 to a pre-4.1 client carries no SQLSTATE.
                assert 1000 <= code < 5000 and (state or code == 1043), (code, state)
        (conn or sock).close()
    assert_serves(limited)


def test_wrong_sequence_id(limited):
    conn, sock = logged_in(limited)
    sock.sendall(packet(bytes([COM_QUERY]) + b"SELECT 1", 5))
    _, packets = wait_closed(sock, 10)
    assert packets and parse_err(packets[-1][1])[:2] == (1156, "08S01")
    conn.close()
    assert_serves(limited)


def test_stmt_execute_unknown_id_and_wrong_params(limited):
    conn, sock = logged_in(limited)
    # Unknown statement id: 1243, and the connection stays usable.
    sock.sendall(packet(struct.pack("<BIBI", COM_STMT_EXECUTE, 4242, 0, 1), 0))
    code, state, msg = parse_err(recv_packet(sock)[1])
    assert (code, state) == (1243, "HY000") and "4242" in msg
    stmt = mysql_binary.prepare(conn, "SELECT ?, ?")
    assert len(stmt.params) == 2
    head = struct.pack("<BIBI", COM_STMT_EXECUTE, stmt.stmt_id, 0, 1)
    bad = [
        b"",                                   # no parameter block at all
        b"\x00",                               # bitmap only
        b"\x00\x00",                           # types never bound
        b"\x00\x01" + b"\x08\x00",             # one type for two parameters
        b"\x00\x01\x08\x00\x08\x00" + b"\x01", # values cut short
        b"\x00\x01\xf0\x00\x08\x00" + b"\x00" * 16,  # unknown type code
        b"\x00\x01\x0f\x00\x0f\x00\xfe\xff\xff\xff\xff\xff\xff\xff\xff",  # absurd length
    ]
    for params in bad:
        sock.sendall(packet(head + params, 0))
        code, state, _ = parse_err(recv_packet(sock)[1])
        assert (code, state) == (1210, "HY000"), params
    # Still usable: a correct execute, then a query.
    assert [tuple(map(str, r)) for r in mysql_binary.execute(stmt, 7, "x")] == [("7", "x")]
    with conn.cursor() as c:
        c.execute("SELECT 3")
        assert c.fetchone() == (3,)
    conn.close()
    assert_serves(limited)


# ---- absurd SQL ------------------------------------------------------------

def check_error(cur, sql, codes):
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute(sql)
    assert e.value.args[0] in codes, e.value.args[:2]
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


@lockstep_only
def test_huge_in_list(cur):
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
    cur.execute("INSERT INTO t VALUES " + ",".join(f"({i},{i % 7})" for i in range(1, 2001)))
    values = ",".join(str(i * 3) for i in range(100_000))
    cur.execute(f"SELECT COUNT(*) FROM t WHERE id IN ({values})")
    assert cur.fetchone() == (666,)
    cur.execute(f"SELECT COUNT(*) FROM t WHERE k IN ({values})")
    assert cur.fetchone() == (sum(1 for i in range(1, 2001) if i % 7 in (0, 3, 6)),)
    cur.execute(f"SELECT COUNT(*) FROM t WHERE id NOT IN ({values})")
    assert cur.fetchone() == (2000 - 666,)
    cur.execute(f"SELECT 299997 IN ({values}), 299998 IN ({values})")
    assert cur.fetchone() == (1, 0)
    strings = ",".join(f"'v{i}'" for i in range(100_000))
    cur.execute(f"SELECT 'V99999' IN ({strings})")
    assert cur.fetchone() == (1,)


@lockstep_only
def test_deep_nesting_is_an_error(cur):
    cur.execute("CREATE TABLE t (a INT)")
    cur.execute("INSERT INTO t VALUES (1), (2)")
    deep = 10_000
    parse = (1064,)
    check_error(cur, "SELECT " + "(" * deep + "1" + ")" * deep, parse)
    check_error(cur, "SELECT " + "NOT " * deep + "1", parse)
    check_error(cur, "SELECT " + "-" * deep + "1", parse)
    check_error(cur, "SELECT " + "~" * deep + "1", parse)
    check_error(cur, "SELECT a" + " + a" * deep + " FROM t", parse)
    check_error(cur, "SELECT 1 FROM t WHERE " + " OR ".join(["a = 1"] * deep), parse)
    check_error(cur, "SELECT " + "(SELECT " * deep + "1" + ")" * deep, parse)
    check_error(cur, "SELECT " + "ABS(" * deep + "1" + ")" * deep, parse)
    check_error(cur, "SELECT " + "CASE WHEN 1 THEN " * deep + "1" + " END" * deep, parse)
    check_error(cur, "SELECT 1 FROM t WHERE a IN " + "(SELECT a FROM t WHERE a IN " * 500
                + "(1)" + ")" * 500, parse)
    # Long chains the parser accepts (up to 4000 operators) are bound and
    # evaluated without overflowing the stack.
    n = 3_900
    cur.execute("SELECT a" + " + a" * n + " FROM t ORDER BY a")
    assert [int(r[0]) for r in cur.fetchall()] == [n + 1, 2 * (n + 1)]
    n = 1_900  # two operators per term
    cur.execute("SELECT COUNT(*) FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(2, n)))
    assert cur.fetchone() == (1,)
    cur.execute("SELECT COUNT(*) FROM t WHERE " + " AND ".join(["a > 0"] * n))
    assert cur.fetchone() == (2,)
    cur.execute("SELECT CONCAT(" + ",".join(["'x'"] * 10_000) + ")")
    assert cur.fetchone() == ("x" * 10_000,)
    for d in (10, 30, 60):
        for sql in [
            "SELECT " + "(" * d + "a" + " + 1" * 3_800 + ")" * d + " FROM t",
            "SELECT COUNT(*) FROM t WHERE a IN " + "(SELECT a FROM t WHERE a IN " * d
            + "(1)" + ")" * d,
            "SELECT COUNT(*) FROM t x WHERE EXISTS "
            + "(SELECT 1 FROM t WHERE x.a = t.a AND EXISTS " * d + "(SELECT 1)" + ")" * d,
            "SELECT * FROM " + "(SELECT * FROM " * d + "t" + " q) " * d + " z",
        ]:
            try:
                cur.execute(sql)
                assert len(cur.fetchall()) >= 1
            except pymysql.err.ProgrammingError as e:
                assert e.args[0] == 1064, e.args  # past the nesting limit
    cur.execute("SELECT 1")


@lockstep_only
def test_string_functions_do_not_exhaust_memory(cur):
    cur.execute("SELECT LPAD('a', 1000000000000, 'x'), RPAD('', 9000000000000000000, 'ab')")
    assert cur.fetchone() == (None, None)
    big = "REPLACE(" * 8 + "'" + "a" * 100 + "'" + (", 'a', '" + "a" * 100 + "')") * 8
    cur.execute(f"SELECT {big} IS NULL")
    assert cur.fetchone() == (1,)
    cur.execute("SELECT LENGTH(LPAD('a', 1000, 'xy'))")
    assert cur.fetchone() == (1000,)


# ---- memory limits -----------------------------------------------------------

def rss_kib(server):
    try:
        with open(f"/proc/{server.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, AttributeError):
        return None
    return None


@lockstep_only
def test_memory_limits(server, cur):
    rows = 100_000
    cur.execute("CREATE TABLE big (id INT PRIMARY KEY, k INT, s VARCHAR(40))")
    for start in range(0, rows, 5000):
        cur.execute("INSERT INTO big VALUES " + ",".join(
            f"({i},{i % 100},'row-{(i * 7919) % rows:06d}-padding')"
            for i in range(start, start + 5000)))
    rss_before = rss_kib(server)

    cur.execute("SELECT @@tmp_table_size, @@max_heap_table_size, @@query_memory_limit")
    assert all(v > 1 << 20 for v in cur.fetchone())
    # Sorts spill past it, so MySQL's default is enough.
    cur.execute("SELECT @@sort_buffer_size, @@join_buffer_size")
    assert cur.fetchone() == (262144, 262144)
    cur.execute("SET SESSION sort_buffer_size = 1048576, tmp_table_size = 1048576")

    # A SELECT's sort spills to disk past sort_buffer_size (filesort.rs);
    # ORDER BY ... LIMIT keeps only its first rows.
    sort = "SELECT id FROM big ORDER BY s LIMIT 3"
    expected = sorted(range(rows), key=lambda i: (i * 7919) % rows)[:3]
    cur.execute(sort)
    assert cur.fetchall() == tuple((i,) for i in expected)
    cur.execute("SELECT id FROM big ORDER BY s DESC")
    assert [r[0] for r in cur.fetchall()] == sorted(range(rows), key=lambda i: -((i * 7919) % rows))
    check_error(cur, "SELECT s, COUNT(*) FROM big GROUP BY s", (1114,))
    check_error(cur, "SELECT DISTINCT s FROM big", (1114,))
    check_error(cur, "SELECT COUNT(DISTINCT s) FROM big", (1114,))
    check_error(cur, "SELECT COUNT(*) FROM (SELECT s FROM big) d", (1114,))
    check_error(cur, "SELECT COUNT(*) FROM big WHERE s IN (SELECT s FROM big WHERE id > 10)",
                (1114,))
    check_error(cur, "SELECT s FROM big UNION SELECT s FROM big", (1114,))
    # A UNION's sort spills too.
    cur.execute("SELECT s FROM big UNION ALL SELECT s FROM big ORDER BY s DESC LIMIT 3")
    top = sorted((f"row-{(i * 7919) % rows:06d}-padding" for i in range(rows)), reverse=True)
    assert cur.fetchall() == ((top[0],), (top[0],), (top[1],))
    # Small results and index-ordered sorts are untouched by the limits.
    cur.execute("SELECT id FROM big ORDER BY id LIMIT 2")
    assert cur.fetchall() == ((0,), (1,))
    cur.execute("SELECT k, COUNT(*) FROM big GROUP BY k ORDER BY k LIMIT 2")
    assert cur.fetchall() == ((0, 1000), (1, 1000))
    cur.execute("SELECT id FROM big WHERE id < 100 ORDER BY s LIMIT 1")
    assert cur.fetchone() == (0,)

    # Raised limits: the same statements work.
    cur.execute("SET SESSION sort_buffer_size = 268435456, tmp_table_size = DEFAULT")
    cur.execute(sort)
    assert cur.fetchall() == tuple((i,) for i in expected)
    cur.execute("SELECT COUNT(*) FROM (SELECT s, COUNT(*) FROM big GROUP BY s) g")
    assert cur.fetchone() == (rows,)
    cur.execute("SELECT COUNT(DISTINCT s) FROM big")
    assert cur.fetchone() == (rows,)

    # Everything a statement buffers: query_memory_limit (1041).
    cur.execute("SET SESSION query_memory_limit = 1048576")
    check_error(cur, "SELECT id FROM big WHERE id IN (SELECT id FROM big)", (1041,))
    # A plain scan is streamed in batches within the limit; a join reads
    # its outer side in batches and streams its result from a sort.
    cur.execute("SELECT * FROM big")
    assert len(cur.fetchall()) == rows
    cur.execute("SELECT a.*, b.s FROM big a JOIN big b ON a.id = b.id")
    assert len(cur.fetchall()) == rows
    cur.execute("SELECT COUNT(*) FROM big a JOIN big b ON a.k = b.id")
    assert cur.fetchone() == (rows,)
    cur.execute("SELECT * FROM big WHERE id < 10")
    assert len(cur.fetchall()) == 10
    cur.execute("SET SESSION query_memory_limit = DEFAULT")
    cur.execute("SELECT COUNT(*) FROM big WHERE s LIKE 'row-%'")
    assert cur.fetchone() == (rows,)

    # Bad values are refused as MySQL refuses them.
    check_error(cur, "SET SESSION sort_buffer_size = 'lots'", (1232,))
    check_error(cur, "SET SESSION tmp_table_size = -1", (1231,))

    rss_after = rss_kib(server)
    if rss_before and rss_after:
        assert rss_after - rss_before < 1_500_000, (rss_before, rss_after)
