"""Session state tracking (CLIENT_SESSION_TRACK): the OK packet that ends a
statement says what it changed of the session (default database, tracked
system variables, transaction state), as MySQL 8 sends it to pools and
proxies. Read with a raw protocol client: the drivers in this suite do not
parse the state information."""

import socket
import struct

import pytest

from lockstep_server import TARGET

PROTOCOL_41 = 1 << 9
SECURE_CONNECTION = 1 << 15
PLUGIN_AUTH = 1 << 19
SESSION_TRACK = 1 << 23
DEPRECATE_EOF = 1 << 24
SESSION_STATE_CHANGED = 1 << 14


def lenenc_int(b, i):
    first = b[i]
    if first < 0xFB:
        return first, i + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(b[i + 1:i + 1 + size], "little"), i + 1 + size


def lenenc_str(b, i):
    n, i = lenenc_int(b, i)
    return b[i:i + n], i + n


class Raw:
    """A minimal MySQL client: handshake as root without a password, then
    COM_QUERY, returning the OK packet's parts."""

    def __init__(self, port, caps):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.seq = 0
        greeting = self.read()
        assert greeting[0] == 10
        self.caps = caps
        reply = struct.pack("<IIB23x", caps, 1 << 24, 255) + b"root\0" + b"\0"
        reply += b"mysql_native_password\0"
        self.write(reply)
        ok = self.read()
        if ok[0] == 0xFE:  # auth switch: an empty password answers any
            self.write(b"")
            ok = self.read()
        assert ok[0] == 0x00, ok

    def read(self):
        head = self.recv(4)
        n = int.from_bytes(head[:3], "little")
        self.seq = head[3] + 1
        return self.recv(n)

    def recv(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            assert chunk, "connection closed"
            out += chunk
        return out

    def write(self, payload):
        self.sock.sendall(len(payload).to_bytes(3, "little") + bytes([self.seq]) + payload)
        self.seq += 1

    def query(self, sql):
        """The (status, info, changes) of the OK ending `sql` (rows skipped)."""
        self.seq = 0
        self.write(b"\x03" + sql.encode())
        pkt = self.read()
        assert pkt[0] != 0xFF, pkt
        if pkt[0] != 0x00:  # a result set: skip to its closing OK
            while True:
                pkt = self.read()
                if pkt[0] == 0xFE and len(pkt) < 0xFFFFFF:
                    break
        return parse_ok(pkt, self.caps)

    def close(self):
        self.sock.close()


def parse_ok(pkt, caps):
    i = 1
    _, i = lenenc_int(pkt, i)
    _, i = lenenc_int(pkt, i)
    status, _warnings = struct.unpack_from("<HH", pkt, i)
    i += 4
    info, changes = b"", []
    if caps & SESSION_TRACK:
        if i < len(pkt):
            info, i = lenenc_str(pkt, i)
        if status & SESSION_STATE_CHANGED:
            block, i = lenenc_str(pkt, i)
            changes = parse_changes(block)
    assert i == len(pkt) or not caps & SESSION_TRACK, pkt
    return status, info, changes


def parse_changes(block):
    out, i = [], 0
    while i < len(block):
        kind = block[i]
        data, i = lenenc_str(block, i + 1)
        if kind == 0:
            name, j = lenenc_str(data, 0)
            value, _ = lenenc_str(data, j)
            out.append(("var", name.decode(), value.decode()))
        elif kind == 1:
            out.append(("schema", lenenc_str(data, 0)[0].decode()))
        elif kind == 2:
            out.append(("state", lenenc_str(data, 0)[0].decode()))
        elif kind == 5:
            out.append(("trx", lenenc_str(data, 0)[0].decode()))
        else:
            out.append((kind, data))
    return out


CAPS = PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | SESSION_TRACK | DEPRECATE_EOF


@pytest.fixture
def raw(server, db):
    c = Raw(server.port, CAPS)
    yield c, db
    c.close()


def test_schema_and_default_variables_are_reported(raw):
    c, db = raw
    status, _, changes = c.query(f"USE `{db}`")
    assert status & SESSION_STATE_CHANGED and changes == [("schema", db)]
    # autocommit and the character sets are tracked by default.
    _, _, changes = c.query("SET autocommit = 0")
    assert changes == [("var", "autocommit", "OFF")]
    _, _, changes = c.query("SET NAMES latin1")
    assert sorted(changes) == [("var", f"character_set_{k}", "latin1")
                               for k in ("client", "connection", "results")]
    # Untracked variables, and statements that change nothing, say nothing.
    status, _, changes = c.query("SET sort_buffer_size = 65536")
    assert changes == [] and not status & SESSION_STATE_CHANGED
    assert c.query("SELECT 1")[2] == []


def test_tracked_list_and_state_change_follow_their_variables(raw):
    c, db = raw
    c.query("SET session_track_system_variables = 'sql_mode,time_zone'")
    _, _, changes = c.query("SET time_zone = '+02:00', autocommit = 0")
    assert changes == [("var", "time_zone", "+02:00")]
    c.query("SET session_track_state_change = ON")
    # MySQL's data is "1" (MariaDB sends it empty).
    assert any(ch[0] == "state" for ch in c.query("SET @x = 1")[2])
    assert c.query("SELECT @x")[2] == []
    c.query("SET session_track_schema = OFF")
    assert [ch[0] for ch in c.query(f"USE `{db}`")[2]] == ["state"]


def test_transaction_state_is_reported_as_it_changes(raw):
    c, db = raw
    c.query(f"USE `{db}`")
    c.query("CREATE TABLE t (id INT PRIMARY KEY)")
    assert ("trx", "________") in c.query("SET session_track_transaction_info = STATE")[2]
    assert c.query("BEGIN")[2] == [("trx", "T_______")]
    assert c.query("SELECT 1")[2] == [("trx", "T_____S_")]
    assert c.query("SELECT * FROM t")[2] == [("trx", "T_R___S_")]
    assert c.query("INSERT INTO t VALUES (1)")[2] == [("trx", "T_R_W_S_")]
    assert c.query("COMMIT")[2] == [("trx", "________")]
    c.query("SET autocommit = 0")
    assert c.query("INSERT INTO t VALUES (2)")[2] == [("trx", "I___W___")]
    assert c.query("ROLLBACK")[2] == [("trx", "________")]


@pytest.mark.skipif(TARGET != "lockstep", reason="lockstep refuses what it has not built")
def test_untracked_kinds_are_refused_not_ignored(raw):
    c, _ = raw
    for sql in ("SET session_track_transaction_info = CHARACTERISTICS",
                "SET session_track_gtids = OWN_GTID"):
        c.seq = 0
        c.write(b"\x03" + sql.encode())
        pkt = c.read()
        assert pkt[0] == 0xFF and struct.unpack_from("<H", pkt, 1)[0] == 1235


def test_without_the_capability_ok_packets_are_unchanged(server, db):
    c = Raw(server.port, CAPS & ~SESSION_TRACK)
    status, _, _ = c.query(f"USE `{db}`")
    assert not status & SESSION_STATE_CHANGED
    status, _, _ = c.query("SET autocommit = 0")
    assert not status & SESSION_STATE_CHANGED
    c.close()
