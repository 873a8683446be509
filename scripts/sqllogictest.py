#!/usr/bin/env python3
"""Run SQLite's sqllogictest corpus against a MySQL-protocol server.

The corpus is not part of this repository: fetch it yourself (the SQLite
project publishes it; mirrors exist) and pass its test/ folder or any of
its files. Every file runs in a fresh database `slt`, in one connection.
Records marked `onlyif mysql` run, `skipif mysql` and `onlyif <other>` do
not. Results are formatted as the reference runner does (I: the leading
integer of the text value, R: %.3f, T: the text with "(empty)" for "" and
'@' for unprintable characters), sorted per the record's sort mode, and
compared value by value or by the MD5 of the values when the record gives
a hash.

    python3 scripts/sqllogictest.py --port 3306 CORPUS/test/select1.test \
        CORPUS/test/index --limit-files 20 --json out.json

Prints one line per file (passed/failed/skipped) and a total; with
--failures N it prints the first N failures of each file (SQL, expected,
got) so they can be read and explained.
"""

import argparse
import hashlib
import json
import os
import sys
import time

import pymysql


class Record:
    def __init__(self, kind, line, sql, types="", sort="nosort", expected=None, error=False):
        self.kind = kind  # "statement" or "query"
        self.line = line
        self.sql = sql
        self.types = types
        self.sort = sort
        self.expected = expected or []
        self.error = error


def applies(conditions):
    """Whether a record guarded by skipif/onlyif lines runs on MySQL."""
    for word, engine in conditions:
        if word == "skipif" and engine == "mysql":
            return False
        if word == "onlyif" and engine != "mysql":
            return False
    return True


def parse(path):
    """Yields Records and ('hash-threshold', n) settings; stops at halt."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i, conditions = 0, []
    while i < len(lines):
        words = lines[i].split("#", 1)[0].split()
        start = i
        i += 1
        if not words:
            continue
        head = words[0]
        if head in ("skipif", "onlyif") and len(words) > 1:
            conditions.append((head, words[1]))
            continue
        if head == "halt":
            if applies(conditions):
                return
            conditions = []
            continue
        if head == "hash-threshold" and len(words) > 1:
            yield ("hash-threshold", int(words[1]))
            conditions = []
            continue
        if head not in ("statement", "query"):
            conditions = []
            continue
        body = []
        while i < len(lines) and lines[i].strip() and lines[i] != "----":
            body.append(lines[i])
            i += 1
        expected = []
        if i < len(lines) and lines[i] == "----":
            i += 1
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i])
                i += 1
        ok = applies(conditions)
        conditions = []
        if not ok:
            yield None
            continue
        sql = "\n".join(body)
        if head == "statement":
            yield Record("statement", start + 1, sql, error=words[1:2] == ["error"])
        else:
            types = words[1] if len(words) > 1 else ""
            sort = words[2] if len(words) > 2 else "nosort"
            yield Record("query", start + 1, sql, types, sort, expected)


def leading_number(text, integer):
    """The numeric prefix of text, as C's atoi/atof read it."""
    text = text.strip()
    end = 0
    allowed = "+-0123456789" if integer else "+-0123456789.eE"
    while end < len(text) and text[end] in allowed:
        if text[end] in "+-" and end > 0 and text[end - 1] not in "eE":
            break
        end += 1
    for cut in range(end, 0, -1):
        try:
            return int(text[:cut]) if integer else float(text[:cut])
        except ValueError:
            continue
    return 0


def format_value(value, kind):
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    text = str(value)
    if kind == "I":
        return str(leading_number(text, True))
    if kind == "R":
        return "%.3f" % leading_number(text, False)
    if text == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in text)


def format_rows(rows, record):
    types = record.types or "T" * (len(rows[0]) if rows else 0)
    table = [[format_value(v, types[j] if j < len(types) else "T") for j, v in enumerate(row)]
             for row in rows]
    if record.sort == "rowsort":
        table.sort()
    values = [v for row in table for v in row]
    if record.sort == "valuesort":
        values.sort()
    return table, values


def matches(record, rows):
    table, values = format_rows(rows, record)
    exp = record.expected
    if len(exp) == 1 and " values hashing to " in exp[0]:
        count, digest = exp[0].split(" values hashing to ")
        md5 = hashlib.md5("".join(v + "\n" for v in values).encode()).hexdigest()
        return int(count) == len(values) and digest.strip() == md5, f"{len(values)} values hashing to {md5}"
    if exp == values:
        return True, values
    joined = [" ".join(r) for r in table]
    return exp == joined, values


class Runner:
    def __init__(self, args):
        self.args = args
        self.conn = None

    def connect(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
        # An empty conversion table: every value arrives as the server's text.
        self.conn = pymysql.connect(host=self.args.host, port=self.args.port,
                                    user=self.args.user, password=self.args.password,
                                    conv={}, autocommit=True,
                                    read_timeout=self.args.timeout,
                                    write_timeout=self.args.timeout)
        # The corpus was written for SQLite, which shows any value of a
        # group for a column GROUP BY does not determine: MySQL 8's
        # default ONLY_FULL_GROUP_BY would refuse those queries, so it is
        # left out (MariaDB's default has it off too).
        with self.conn.cursor() as c:
            c.execute("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,"
                      "NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'")

    def fresh_database(self):
        self.connect()
        with self.conn.cursor() as c:
            c.execute("DROP DATABASE IF EXISTS slt")
            c.execute("CREATE DATABASE slt")
            c.execute("USE slt")

    def execute(self, sql):
        """Returns (rows, None) or (None, error text)."""
        try:
            with self.conn.cursor() as c:
                c.execute(sql)
                return list(c.fetchall()), None
        except pymysql.err.OperationalError as e:
            if e.args and e.args[0] in (2006, 2013, 2014):
                self.fresh_connection_after_loss()
            return None, repr(e)
        except pymysql.err.Error as e:
            return None, repr(e)

    def fresh_connection_after_loss(self):
        try:
            self.connect()
            with self.conn.cursor() as c:
                c.execute("USE slt")
        except Exception:
            pass

    def run_file(self, path):
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        failures = []
        self.fresh_database()
        for rec in parse(path):
            if rec is None:
                counts["skipped"] += 1
                continue
            if isinstance(rec, tuple):
                continue
            ok, detail = self.run_record(rec)
            counts["passed" if ok else "failed"] += 1
            if not ok and len(failures) < self.args.keep_failures:
                failures.append({"line": rec.line, "sql": rec.sql, "expected": rec.expected[:12],
                                 "got": detail})
        return counts, failures

    def run_record(self, rec):
        rows, error = self.execute(rec.sql)
        if rec.kind == "statement":
            if rec.error:
                return error is not None, error or "no error"
            return error is None, error
        if error is not None:
            return False, error
        ok, got = matches(rec, rows)
        return ok, got if isinstance(got, str) else got[:12]


def files_under(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith(".test"):
                        yield os.path.join(root, n)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=3306)
    ap.add_argument("--user", default="root")
    ap.add_argument("--password", default="")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per statement")
    ap.add_argument("--limit-files", type=int, default=0, help="at most this many files per folder given")
    ap.add_argument("--failures", type=int, default=0, help="print this many failures per file")
    ap.add_argument("--keep-failures", type=int, default=50)
    ap.add_argument("--json", help="write per-file counts and failures here")
    args = ap.parse_args()
    runner = Runner(args)
    report, total = {}, {"passed": 0, "failed": 0, "skipped": 0}
    for top in args.paths:
        files = list(files_under([top]))
        if args.limit_files:
            files = files[:args.limit_files]
        for path in files:
            started = time.time()
            counts, failures = runner.run_file(path)
            for k in total:
                total[k] += counts[k]
            report[path] = {"counts": counts, "failures": failures, "seconds": round(time.time() - started, 1)}
            print(f"{path}: {counts['passed']} passed, {counts['failed']} failed, "
                  f"{counts['skipped']} skipped ({time.time() - started:.1f} s)", flush=True)
            for f in failures[:args.failures]:
                print(f"  line {f['line']}: {f['sql']!r}\n    expected {f['expected']!r}\n    got {f['got']!r}")
    print(f"{total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"total": total, "files": report}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
