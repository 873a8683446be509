"""Reading (and damaging) a lockstep data directory's files from tests.

The log format (crates/log/src/format.rs): `<datadir>/log/log-<start LSN,
20 digits>.seg` files, each a 64-byte header (magic, version, header size,
start u64 @16, capacity u64 @24, first record LSN u64 @32) followed by the
stream bytes; records are `[len u32 LE][crc u32 LE][payload]`, bit 31 of len
marks padding, and a zero header ends the data (segments are preallocated
with zeros). Checkpoints are `<datadir>/checkpoint-<LSN, 20 digits>.snap`.
"""

import glob
import os
import struct

SEG_HEADER = 64
PAD_FLAG = 1 << 31


def segments(datadir):
    """Log segment paths, oldest first."""
    return sorted(glob.glob(os.path.join(datadir, "log", "log-*.seg")))


def binlog_text(datadir):
    """What `lockstep binlog` prints for each log segment, oldest first."""
    import subprocess
    from lockstep_server import lockstep_binary
    out = ""
    for seg in segments(datadir):
        r = subprocess.run([lockstep_binary(), "binlog", seg], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        out += r.stdout
    return out


def checkpoints(datadir):
    """Checkpoint paths, oldest first."""
    return sorted(glob.glob(os.path.join(datadir, "checkpoint-*.snap")))


def lsn_of(path):
    """The LSN in a segment or checkpoint file name."""
    return int(os.path.basename(path).split("-")[1].split(".")[0])


class Record:
    def __init__(self, path, offset, lsn, length, pad):
        self.path, self.offset, self.lsn, self.length, self.pad = path, offset, lsn, length, pad

    @property
    def size(self):
        """Header plus payload bytes."""
        return 8 + self.length


def records(datadir):
    """The records of the newest segment that starts one, in order. Records
    that straddle into a later segment are not followed (tests keep to one
    segment)."""
    segs = segments(datadir)
    assert segs, f"no log segments in {datadir}"
    path = segs[-1]
    with open(path, "rb") as f:
        data = f.read()
    start, cap, first = struct.unpack_from("<QQQ", data, 16)
    out = []
    pos = first
    while True:
        off = SEG_HEADER + pos - start
        if off + 8 > len(data):
            break
        length, crc = struct.unpack_from("<II", data, off)
        if length == 0 and crc == 0:
            break
        n = length & ~PAD_FLAG
        out.append(Record(path, off, pos, n, bool(length & PAD_FLAG)))
        pos += 8 + n
    return out


def flip_byte(path, offset, mask=0x40):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ mask]))


def log_bytes_on_disk(datadir):
    """(files, bytes allocated) of the log segments."""
    segs = segments(datadir)
    return len(segs), sum(os.stat(p).st_blocks * 512 for p in segs)
