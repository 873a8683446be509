"""A tiny client for server-side prepared statements (binary protocol).

PyMySQL only does client-side parameter substitution, so this drives
COM_STMT_PREPARE / COM_STMT_EXECUTE / COM_STMT_CLOSE / COM_STMT_RESET over an
open PyMySQL connection, using its packet reader. It supports the handful of
types the tests need; sysbench covers the rest of the prepared path.
"""

import datetime
import struct
from decimal import Decimal

from pymysql.constants import FIELD_TYPE, FLAG
from pymysql.protocol import FieldDescriptorPacket

COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_CLOSE = 0x19
COM_STMT_RESET = 0x1A


class Prepared:
    def __init__(self, conn, stmt_id, params, columns):
        self.conn = conn
        self.stmt_id = stmt_id
        self.params = params      # list of FieldDescriptorPacket
        self.columns = columns    # list of FieldDescriptorPacket
        self.result_columns = []  # the definitions the last execute sent


def _read_defs(conn, n):
    defs = [conn._read_packet(FieldDescriptorPacket) for _ in range(n)]
    if n:
        eof = conn._read_packet()
        assert eof.is_eof_packet(), "expected EOF after column definitions"
    return defs


def prepare(conn, sql):
    """COM_STMT_PREPARE; raises pymysql errors for server errors."""
    conn._execute_command(COM_STMT_PREPARE, sql)
    p = conn._read_packet()
    assert p.read_uint8() == 0, "expected COM_STMT_PREPARE_OK"
    stmt_id = p.read_uint32()
    ncols = p.read_uint16()
    nparams = p.read_uint16()
    params = _read_defs(conn, nparams)
    columns = _read_defs(conn, ncols)
    return Prepared(conn, stmt_id, params, columns)


def _encode_params(args):
    n = len(args)
    nulls = bytearray((n + 7) // 8)
    types = b""
    values = b""
    for i, v in enumerate(args):
        if v is None:
            nulls[i // 8] |= 1 << (i % 8)
            types += struct.pack("<BB", FIELD_TYPE.NULL, 0)
        elif isinstance(v, bool) or isinstance(v, int):
            if v >= 2**63:
                types += struct.pack("<BB", FIELD_TYPE.LONGLONG, 0x80)
                values += struct.pack("<Q", v)
            else:
                types += struct.pack("<BB", FIELD_TYPE.LONGLONG, 0)
                values += struct.pack("<q", v)
        elif isinstance(v, datetime.datetime):
            types += struct.pack("<BB", FIELD_TYPE.DATETIME, 0)
            values += struct.pack("<BHBBBBBI", 11, v.year, v.month, v.day,
                                  v.hour, v.minute, v.second, v.microsecond)
        elif isinstance(v, float):
            types += struct.pack("<BB", FIELD_TYPE.DOUBLE, 0)
            values += struct.pack("<d", v)
        else:
            b = v if isinstance(v, bytes) else str(v).encode()
            types += struct.pack("<BB", FIELD_TYPE.VAR_STRING, 0)
            values += _lenenc(len(b)) + b
    return bytes(nulls) + b"\x01" + types + values


def _lenenc(n):
    if n < 251:
        return struct.pack("<B", n)
    if n < 2**16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 2**24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


_INTS = {FIELD_TYPE.TINY: ("<b", "<B", 1), FIELD_TYPE.SHORT: ("<h", "<H", 2),
         FIELD_TYPE.YEAR: ("<h", "<H", 2), FIELD_TYPE.INT24: ("<i", "<I", 4),
         FIELD_TYPE.LONG: ("<i", "<I", 4), FIELD_TYPE.LONGLONG: ("<q", "<Q", 8)}
_STRINGS = {FIELD_TYPE.VARCHAR, FIELD_TYPE.VAR_STRING, FIELD_TYPE.STRING, FIELD_TYPE.BLOB,
            FIELD_TYPE.TINY_BLOB, FIELD_TYPE.MEDIUM_BLOB, FIELD_TYPE.LONG_BLOB,
            FIELD_TYPE.ENUM, FIELD_TYPE.SET, FIELD_TYPE.JSON, FIELD_TYPE.BIT}


def _decode_value(p, col):
    t = col.type_code
    if t in _INTS:
        signed, unsigned, size = _INTS[t]
        fmt = unsigned if col.flags & FLAG.UNSIGNED else signed
        return struct.unpack(fmt, p.read(size))[0]
    if t == FIELD_TYPE.DOUBLE:
        return struct.unpack("<d", p.read(8))[0]
    if t == FIELD_TYPE.FLOAT:
        return struct.unpack("<f", p.read(4))[0]
    if t in (FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.DECIMAL):
        return Decimal(p.read_length_coded_string().decode())
    if t in _STRINGS:
        b = p.read_length_coded_string()
        return b if col.charsetnr == 63 else b.decode()
    if t in (FIELD_TYPE.DATETIME, FIELD_TYPE.TIMESTAMP, FIELD_TYPE.DATE):
        n = p.read_uint8()
        parts = [0] * 7
        if n >= 4:
            parts[0] = p.read_uint16()
            parts[1] = p.read_uint8()
            parts[2] = p.read_uint8()
        if n >= 7:
            parts[3:6] = [p.read_uint8() for _ in range(3)]
        if n >= 11:
            parts[6] = p.read_uint32()
        if t == FIELD_TYPE.DATE:
            return datetime.date(*parts[:3])
        return datetime.datetime(*parts)
    if t == FIELD_TYPE.TIME:
        n = p.read_uint8()
        if n == 0:
            return datetime.timedelta(0)
        neg, days, h, m, s = struct.unpack("<BIBBB", p.read(8))
        micro = p.read_uint32() if n == 12 else 0
        d = datetime.timedelta(days=days, hours=h, minutes=m, seconds=s, microseconds=micro)
        return -d if neg else d
    raise NotImplementedError(f"binary decode of column type {t}")


def execute(stmt, *args):
    """COM_STMT_EXECUTE. Returns (affected_rows, last_insert_id) for a
    statement without a result set, else the list of row tuples."""
    conn = stmt.conn
    assert len(args) == len(stmt.params), "parameter count"
    payload = struct.pack("<IBI", stmt.stmt_id, 0, 1)
    if args:
        payload += _encode_params(args)
    conn._execute_command(COM_STMT_EXECUTE, payload)
    first = conn._read_packet()
    if first.is_ok_packet():
        first.read_uint8()
        return first.read_length_encoded_integer(), first.read_length_encoded_integer()
    ncols = first.read_length_encoded_integer()
    cols = _read_defs(conn, ncols)
    stmt.result_columns = cols
    rows = []
    for _ in range(10_000_000):
        p = conn._read_packet()
        if p.is_eof_packet():
            return rows
        assert p.read_uint8() == 0, "binary row header"
        bitmap = p.read((ncols + 7 + 2) // 8)
        row = []
        for i, col in enumerate(cols):
            bit = i + 2
            if bitmap[bit // 8] & (1 << (bit % 8)):
                row.append(None)
            else:
                row.append(_decode_value(p, col))
        rows.append(tuple(row))
    raise AssertionError("result set too long")


def reset(stmt):
    """COM_STMT_RESET: answered with OK."""
    stmt.conn._execute_command(COM_STMT_RESET, struct.pack("<I", stmt.stmt_id))
    assert stmt.conn._read_packet().is_ok_packet()


def close(stmt):
    """COM_STMT_CLOSE: no response."""
    stmt.conn._execute_command(COM_STMT_CLOSE, struct.pack("<I", stmt.stmt_id))
