#!/usr/bin/env python3
"""Subquery shapes that applications write, lockstep and MariaDB side by
side on the same machine in the same run (issue 39).

Tables: customers (--customers rows), orders (10 per customer, an indexed
o_c_id and an unindexed copy o_c_id2), order_lines (--lines per order, on
average), district (100 rows). Each query runs --repeats times per server;
the median wall time at the client is reported with whether the results
agree.

    python3 bench/subquery.py --lockstep-port 4301 --mariadb-port 3307 \
        --out bench/results --label before

Appends a table to DATE-subquery.md in --out. A query past --timeout
seconds is reported as such.
"""

import argparse
import datetime
import os
import statistics
import time

import pymysql

from unindexed_joins import commit, fmt

QUERIES = [
    ("EXISTS, indexed correlation",
     "SELECT COUNT(*) FROM customers c WHERE EXISTS "
     "(SELECT 1 FROM orders o WHERE o.o_c_id = c.c_id AND o.o_total > 900)"),
    ("EXISTS, unindexed correlation",
     "SELECT COUNT(*) FROM customers c WHERE EXISTS "
     "(SELECT 1 FROM orders o WHERE o.o_c_id2 = c.c_id AND o.o_total > 900)"),
    ("NOT EXISTS, indexed correlation",
     "SELECT COUNT(*) FROM customers c WHERE NOT EXISTS "
     "(SELECT 1 FROM orders o WHERE o.o_c_id = c.c_id AND o.o_total > 500)"),
    ("NOT EXISTS, unindexed correlation",
     "SELECT COUNT(*) FROM customers c WHERE NOT EXISTS "
     "(SELECT 1 FROM orders o WHERE o.o_c_id2 = c.c_id AND o.o_total > 500)"),
    ("IN, correlated",
     "SELECT COUNT(*) FROM customers c WHERE c.c_region IN "
     "(SELECT o.o_d_id FROM orders o WHERE o.o_c_id2 = c.c_id)"),
    ("NOT IN with NULLs in the subquery",
     "SELECT COUNT(*) FROM customers c WHERE c.c_ref NOT IN "
     "(SELECT o.o_note FROM orders o WHERE o.o_w_id = 3)"),
    ("NOT IN, NULLs only outside",
     "SELECT COUNT(*) FROM customers c WHERE c.c_ref NOT IN "
     "(SELECT o.o_c_id FROM orders o WHERE o.o_total > 990)"),
    ("scalar COUNT in the select list, indexed",
     "SELECT SUM((SELECT COUNT(*) FROM orders o WHERE o.o_c_id = c.c_id)) FROM customers c"),
    ("scalar SUM in the select list, unindexed",
     "SELECT SUM((SELECT SUM(o.o_total) FROM orders o WHERE o.o_c_id2 = c.c_id)) FROM customers c"),
    ("scalar AVG in WHERE, indexed",
     "SELECT COUNT(*) FROM orders o WHERE o.o_total > "
     "(SELECT AVG(o2.o_total) FROM orders o2 WHERE o2.o_c_id = o.o_c_id)"),
    ("scalar AVG in WHERE, unindexed",
     "SELECT COUNT(*) FROM orders o WHERE o.o_total > "
     "(SELECT AVG(o2.o_total) FROM orders o2 WHERE o2.o_c_id2 = o.o_c_id2)"),
    ("district x grouped derived (TPC-C consistency 2)",
     "SELECT COUNT(*) FROM district d, (SELECT o_w_id, o_d_id, MAX(o_id) m FROM orders "
     "GROUP BY o_w_id, o_d_id) x WHERE d.d_w_id = x.o_w_id AND d.d_id = x.o_d_id "
     "AND d.d_next_o_id - 1 <> x.m"),
    ("orders x grouped order_lines (TPC-C consistency 4)",
     "SELECT COUNT(*) FROM orders o, (SELECT ol_o_id, COUNT(*) n FROM order_lines "
     "GROUP BY ol_o_id) x WHERE x.ol_o_id = o.o_id AND x.n <> o.o_ol_cnt"),
    ("IN, large uncorrelated subquery",
     "SELECT COUNT(*) FROM orders WHERE o_id IN "
     "(SELECT ol_o_id FROM order_lines WHERE ol_amount > 90)"),
    ("NOT IN, large uncorrelated subquery",
     "SELECT COUNT(*) FROM orders WHERE o_id NOT IN "
     "(SELECT ol_o_id FROM order_lines WHERE ol_amount > 20)"),
]


def connect(port, db=None, timeout=None):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database=db, autocommit=True, read_timeout=timeout)


def load(port, customers, lines):
    c = connect(port)
    cur = c.cursor()
    cur.execute("DROP DATABASE IF EXISTS subq")
    cur.execute("CREATE DATABASE subq")
    cur.execute("USE subq")
    cur.execute("CREATE TABLE customers (c_id INT PRIMARY KEY, c_region INT, c_ref INT NULL)")
    cur.execute("CREATE TABLE orders (o_id INT PRIMARY KEY, o_c_id INT, o_c_id2 INT, "
                "o_w_id INT, o_d_id INT, o_total DECIMAL(10,2), o_note INT NULL, "
                "o_ol_cnt INT, KEY o_c (o_c_id))")
    cur.execute("CREATE TABLE order_lines (ol_o_id INT, ol_number INT, "
                "ol_amount DECIMAL(10,2), PRIMARY KEY (ol_o_id, ol_number))")
    cur.execute("CREATE TABLE district (d_w_id INT, d_id INT, d_next_o_id INT, "
                "PRIMARY KEY (d_w_id, d_id))")
    batch = []

    def put(table, row):
        batch.append(row)
        if len(batch) >= 2000:
            flush(table)

    def flush(table):
        if batch:
            cur.execute(f"INSERT INTO {table} VALUES " + ",".join(batch))
            batch.clear()

    for n in range(1, customers + 1):
        ref = "NULL" if n % 50 == 0 else str(n * 7 % customers)
        put("customers", f"({n},{n % 10},{ref})")
    flush("customers")
    orders = customers * 10
    last = {}
    for o in range(1, orders + 1):
        cid = (o * 7919) % customers + 1
        w, d = o % 10 + 1, (o // 10) % 10 + 1
        last[(w, d)] = o
        note = "NULL" if o % 97 == 0 else str(o % customers)
        cnt = 1 + (o * 31) % (2 * lines - 1)
        put("orders", f"({o},{cid},{cid},{w},{d},{(o * 37) % 100000 / 100:.2f},{note},{cnt})")
    flush("orders")
    for o in range(1, orders + 1):
        # Every 13th order has one line fewer than o_ol_cnt says.
        cnt = 1 + (o * 31) % (2 * lines - 1) - (1 if o % 13 == 0 else 0)
        for k in range(1, cnt + 1):
            put("order_lines", f"({o},{k},{(o * k * 13) % 10000 / 100:.2f})")
    flush("order_lines")
    for w in range(1, 11):
        for d in range(1, 11):
            nxt = last.get((w, d), 0) + (1 if (w + d) % 7 else 2)
            put("district", f"({w},{d},{nxt})")
    flush("district")
    c.close()


def run(port, sql, repeats, timeout):
    times, result = [], None
    for _ in range(repeats):
        c = connect(port, "subq", timeout)
        with c.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            conn_id = cur.fetchone()[0]
        t = time.monotonic()
        try:
            with c.cursor() as cur:
                cur.execute(sql)
                result = cur.fetchall()
        except pymysql.err.OperationalError:
            # The server keeps running a query its client gave up on: stop
            # it, or it slows down every later measurement.
            k = connect(port)
            with k.cursor() as cur:
                cur.execute(f"KILL QUERY {conn_id}")
            k.close()
            return None, "timeout"
        finally:
            c.close()
        times.append(time.monotonic() - t)
    return statistics.median(times), result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lockstep-port", type=int, default=3306)
    ap.add_argument("--mariadb-port", type=int, default=3307)
    ap.add_argument("--customers", type=int, default=20000)
    ap.add_argument("--lines", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--skip-load", action="store_true")
    ap.add_argument("--only", default="", help="run the queries whose name contains this")
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default="bench/results")
    args = ap.parse_args()
    servers = [("lockstep", args.lockstep_port), ("MariaDB", args.mariadb_port)]
    if not args.skip_load:
        for name, port in servers:
            t = time.monotonic()
            load(port, args.customers, args.lines)
            print(f"loaded {name} in {time.monotonic() - t:.1f} s", flush=True)
    lines = [
        f"## {args.label} ({datetime.date.today()}, {commit()})",
        "",
        f"customers {args.customers}, orders {args.customers * 10}, order_lines about "
        f"{args.customers * 10 * args.lines}; median of {args.repeats} runs, wall time at "
        "the client, both servers on this machine in the same run "
        "(`python3 bench/subquery.py`). MariaDB 10.11 with its defaults.",
        "",
        "| query | lockstep | MariaDB | ratio (MariaDB / lockstep) | results agree |",
        "|---|---|---|---|---|",
    ]
    for name, sql in QUERIES:
        if args.only not in name:
            continue
        (lt, lr), (mt, mr) = (run(p, sql, args.repeats, args.timeout) for _, p in servers)
        ratio = f"{mt / lt:.2f}x" if lt and mt else "-"
        agree = "yes" if lr == mr and lt and mt else ("-" if not (lt and mt) else f"NO {lr} {mr}")
        lines.append(f"| {name}: `{sql}` | {fmt(lt)} | {fmt(mt)} | {ratio} | {agree} |")
        print(lines[-1], flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{datetime.date.today()}-subquery.md")
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write("# Subqueries, lockstep and MariaDB side by side (issue 39)\n\n")
        f.write("\n".join(lines) + "\n\n")
    print(path)


if __name__ == "__main__":
    main()
