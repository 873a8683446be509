#!/usr/bin/env python3
"""Joins and correlated subqueries on columns no index serves, lockstep and
MariaDB side by side on the same machine in the same run.

Two tables of --rows rows each (an integer and a text column, neither
indexed); each query runs --repeats times per server, the median wall time
is reported with the result (which must agree between the servers).

    python3 bench/unindexed_joins.py --lockstep-port 3306 --mariadb-port 3307 \
        --rows 20480 --out bench/results

Writes DATE-COMMIT-unindexed-joins.md into --out. A query that exceeds
--timeout seconds is reported as such (the server keeps running it: the
client gives up).
"""

import argparse
import datetime
import os
import statistics
import subprocess
import time

import pymysql

QUERIES = [
    ("inner join, int", "SELECT COUNT(*) FROM t1 JOIN t2 ON t1.g = t2.g"),
    ("inner join, text (case-insensitive)", "SELECT COUNT(*) FROM t1 JOIN t2 ON t1.s = t2.s"),
    ("left join with a filter on the right",
     "SELECT COUNT(*) FROM t1 LEFT JOIN t2 ON t1.g = t2.g AND t2.id < 100"),
    ("join of a grouped derived table",
     "SELECT COUNT(*), SUM(d.n) FROM t1 JOIN (SELECT g, COUNT(*) AS n FROM t2 GROUP BY g) d ON d.g = t1.g"),
    ("correlated EXISTS",
     "SELECT COUNT(*) FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.g = t1.g AND t2.id < 5000)"),
    ("correlated NOT EXISTS, text",
     "SELECT COUNT(*) FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE t2.s = t1.s)"),
    ("correlated IN", "SELECT COUNT(*) FROM t1 WHERE t1.s IN (SELECT t2.s FROM t2 WHERE t2.g = t1.g)"),
    ("correlated scalar COUNT",
     "SELECT SUM((SELECT COUNT(*) FROM t2 WHERE t2.g = t1.g)) FROM t1 WHERE t1.id < 2000"),
]


def connect(port, db=None, timeout=None):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database=db, autocommit=True, read_timeout=timeout)


def load(port, rows):
    c = connect(port)
    cur = c.cursor()
    cur.execute("DROP DATABASE IF EXISTS ujoin")
    cur.execute("CREATE DATABASE ujoin")
    cur.execute("USE ujoin")
    for t in ("t1", "t2"):
        cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, g INT, s VARCHAR(20))")
    for start in range(1, rows + 1, 1000):
        ids = range(start, min(start + 1000, rows + 1))
        cur.execute("INSERT INTO t1 VALUES " + ",".join(
            f"({n},{n % 5000},'k{n % 3000}')" for n in ids))
        cur.execute("INSERT INTO t2 VALUES " + ",".join(
            f"({n},{(n * 7) % 5000},'K{n % 4000}')" for n in ids))
    c.close()


def run(port, sql, repeats, timeout):
    times, result = [], None
    for _ in range(repeats):
        c = connect(port, "ujoin", timeout)
        t = time.monotonic()
        try:
            with c.cursor() as cur:
                cur.execute(sql)
                result = cur.fetchall()
        except pymysql.err.OperationalError:
            return None, "timeout"
        finally:
            c.close()
        times.append(time.monotonic() - t)
    return statistics.median(times), result


def commit():
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def fmt(t):
    return "timeout" if t is None else f"{t * 1000:.0f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lockstep-port", type=int, default=3306)
    ap.add_argument("--mariadb-port", type=int, default=3307)
    ap.add_argument("--rows", type=int, default=20480)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--out", default="bench/results")
    args = ap.parse_args()
    servers = [("lockstep", args.lockstep_port), ("MariaDB", args.mariadb_port)]
    for _, port in servers:
        load(port, args.rows)
    lines = [
        f"# Unindexed joins and correlated subqueries ({datetime.date.today()}, {commit()})",
        "",
        f"Two tables of {args.rows} rows, join columns without an index; median of "
        f"{args.repeats} runs, wall time at the client, both servers on this machine in "
        f"the same run (`python3 bench/unindexed_joins.py`). MariaDB 10.11 with its "
        "defaults (block nested loop, subquery cache, semi-joins).",
        "",
        "| query | lockstep | MariaDB | ratio (MariaDB / lockstep) | results agree |",
        "|---|---|---|---|---|",
    ]
    for name, sql in QUERIES:
        (lt, lr), (mt, mr) = (run(p, sql, args.repeats, args.timeout) for _, p in servers)
        ratio = f"{mt / lt:.1f}x" if lt and mt else "-"
        agree = "yes" if lr == mr and lt and mt else ("-" if not (lt and mt) else "NO")
        lines.append(f"| {name}: `{sql}` | {fmt(lt)} | {fmt(mt)} | {ratio} | {agree} |")
        print(lines[-1], flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{datetime.date.today()}-{commit()}-unindexed-joins.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(path)


if __name__ == "__main__":
    main()
