#!/usr/bin/env python3
"""Show every command the test clients send, from a private MariaDB's general log.

Starts a throwaway mariadbd (as the test suite does), turns on its general
log, then runs: a PyMySQL connect + query, the `mariadb` CLI in batch mode,
and sysbench oltp_read_write prepare/run/cleanup with --db-ps-mode=auto and
=disable. Prints the distinct commands per client (numbers normalised) so a
server author knows what must be answered. Usage:

    python3 scripts/capture-client-statements.py [--raw]
"""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from lockstep_server import HOST, Server  # noqa: E402

LINE = re.compile(r"^(?:\d{6}\s+[\d:]+\s+)?\s*(\d+)\s+(Connect|Query|Prepare|Execute|Close stmt|"
                  r"Reset stmt|Init DB|Quit|Field List|Statistics|Long Data|Change user)\t?(.*)$")


def norm(s):
    s = re.sub(r"'[^']*'", "'?'", s)
    s = re.sub(r"\b\d+\b", "N", s)
    return re.sub(r"\s+", " ", s).strip()


def main():
    raw = "--raw" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, target="mariadb", name="capture")
        server.start()
        log = os.path.join(tmp, "general.log")
        try:
            server.sql(f"SET GLOBAL general_log_file = '{log}'")
            server.sql("SET GLOBAL general_log = 1")
            server.sql("CREATE DATABASE sbtest")
            marks = []

            def mark(label):
                server.sql(f"SELECT '---- {label}'")
                marks.append(label)

            mark("pymysql")
            c = server.connect(db="sbtest")
            with c.cursor() as cur:
                cur.execute("SELECT 1")
            c.commit()
            c.close()
            mark("pymysql autocommit=False")
            c = server.connect(db="sbtest", autocommit=False)
            c.close()
            mark("mariadb CLI (batch)")
            server.cli("SELECT 1;", db="sbtest", args=["--batch"])
            for ps in ("auto", "disable"):
                for cmd in ("prepare", "run", "cleanup"):
                    mark(f"sysbench oltp_read_write --db-ps-mode={ps} {cmd}")
                    subprocess.run(
                        ["sysbench", "oltp_read_write", f"--mysql-host={HOST}",
                         f"--mysql-port={server.port}", "--mysql-user=root", "--mysql-db=sbtest",
                         f"--db-ps-mode={ps}", "--tables=1", "--table-size=10", "--threads=1",
                         "--events=1", "--time=0", cmd],
                        capture_output=True, timeout=120, check=True)
            mark("end")
            server.sql("SET GLOBAL general_log = 0")
            with open(log, errors="replace") as f:
                text = f.read()
        finally:
            server.cleanup()

    if raw:
        print(text)
        return
    entries = []  # (thread, kind, argument), continuation lines joined
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            entries.append(list(m.groups()))
        elif entries:
            entries[-1][2] += "\n" + line
    # threads of this script's own marker/admin connections
    ours = {t for t, kind, arg in entries
            if kind == "Query" and (arg.startswith("SELECT '---- ") or "general_log" in arg
                                    or arg.startswith("CREATE DATABASE sbtest"))}
    section, seen = "startup", {}
    for thread, kind, arg in entries:
        if kind == "Query" and arg.startswith("SELECT '---- "):
            section = arg[len("SELECT '---- "):-1]
            continue
        if thread in ours:
            continue
        key = f"{kind:<11} {norm(arg) if kind != 'Connect' else arg.strip()}"
        seen.setdefault(section, [])
        if key not in seen[section]:
            seen[section].append(key)
    for section, keys in seen.items():
        if section in ("startup", "end"):
            continue
        print(f"\n## {section}")
        for k in keys:
            print("   ", k if len(k) < 300 else k[:300] + "...")


if __name__ == "__main__":
    main()
