"""docs/compatibility.md from the per-suite JSON records."""

import glob
import json
import os
import re

import diagnoses

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HEAD = """# Driver compatibility

Each driver's own test suite (or, where its tests are not on a package
registry, a compact check program of ours, marked *ours*) run against lockstep
and against MariaDB 10.11 side by side by `bash scripts/compat.sh full`
(tests/compat/). Raw per-test results: bench/results/compat/SUITE.json.
`bash scripts/compat.sh quick` runs the quick subset (PyMySQL, go-sql-driver)
against lockstep only and fails if a suite passes fewer tests than
tests/compat/baseline.json records; scripts/test.sh runs it after pytest
(LOCKSTEP_SKIP_COMPAT=1 skips it). On 2 cores: quick 20 s (50 s with an empty
download cache), full about 13 min (Connector/Python dominates; the first full
run also downloads the jar and npm package and builds the Rust program).
`python3 tests/compat/runner.py report` rewrites this page from the recorded
results after tests/compat/diagnoses.py or NOTES.md change.

Failure categories: (a) MySQL 8 vs MariaDB difference (the test expects
MySQL 8 behaviour; lockstep behaves as MariaDB does or the test needs a MySQL
8 feature outside lockstep's scope), (b) lockstep gap (what is missing is
named), (c) harness problem.
"""


def _load(results_dir):
    docs = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        with open(path) as f:
            docs.append(json.load(f))
    return docs


def _cell(t):
    if not t:
        return "-"
    c = t["counts"]
    return f"{c['pass']} / {c['fail']} / {c['skip']}"


def _command(cmd):
    """The command as a reader would type it: repo-relative, no run-time port."""
    cmd = cmd.replace(REPO + "/", "")
    return re.sub(r"127\.0\.0\.1 \d+", "HOST PORT", cmd).replace("|", " or ")


def _table(docs):
    rows = ["| suite | version | lockstep pass/fail/skip | MariaDB pass/fail/skip | "
            "lockstep s | date, commit | command |", "|---|---|---|---|---|---|---|"]
    for d in docs:
        ls, mdb = d["targets"].get("lockstep"), d["targets"].get("mariadb")
        cmd = _command((ls or mdb or {}).get("command", ""))
        rows.append(f"| {d['suite']} | {d['version']} | {_cell(ls)} | {_cell(mdb)} | "
                    f"{(ls or {}).get('seconds', '-')} | {d['date']} {d.get('commit', '')} | "
                    f"`bash scripts/compat.sh full {d['suite']}` (runs `{cmd}`) |")
    return "\n".join(rows)


def _crashes(docs):
    out = []
    for d in docs:
        ls = d["targets"].get("lockstep") or {}
        if ls.get("crash"):
            out.append(f"- **{d['suite']}**: lockstep died: "
                       f"`{ls['crash'].splitlines()[0]}`")
        for name, t in ls.get("tests", {}).items():
            if t["status"] == "fail" and re.search(r"TestHung|\bhang\b|\(hang\)", t["message"]):
                out.append(f"- **{d['suite']}** `{name}`: hung (timed out)")
    return out


def _one_line(msg):
    msg = re.sub(r"\s+", " ", msg).strip()
    return (msg[:160] + "...") if len(msg) > 160 else msg


def _failures(d):
    ls = d["targets"].get("lockstep") or {}
    mdb = (d["targets"].get("mariadb") or {}).get("tests", {})
    lines = []
    for name, t in sorted(ls.get("tests", {}).items()):
        if t["status"] != "fail":
            continue
        on_mdb = mdb.get(name, {}).get("status", "?")
        cat, cause = diagnoses.classify(d["suite"], name, t["message"], on_mdb)
        lines.append((cat, cause, f"- `{name}`: {_one_line(t['message']).replace('|', '/')} "
                      f"— **({cat})** {cause} (MariaDB: {on_mdb})"))
    return lines


def _causes(docs):
    """Lockstep failures grouped by diagnosed cause, most expensive first.
    The compressed rerun repeats the Connector/Python suite, so it is counted
    apart: the first column is the to-do list without double counting."""
    tally = {}
    for d in docs:
        rerun = d["suite"].endswith("-compress")
        for cat, cause, _ in _failures(d):
            n = tally.setdefault((cat, cause), [0, 0])
            n[1 if rerun else 0] += 1
    rows = ["| tests | + in compressed rerun | category | cause |", "|---|---|---|---|"]
    for (cat, cause), (n, m) in sorted(tally.items(), key=lambda kv: (-kv[1][0], -kv[1][1])):
        rows.append(f"| {n} | {m} | ({cat}) | {cause} |")
    return "\n".join(rows)


def _skips(docs):
    """Tests skipped on lockstep that MariaDB passes, grouped by cause."""
    tally = {}
    for d in docs:
        ls = (d["targets"].get("lockstep") or {}).get("tests", {})
        mdb = (d["targets"].get("mariadb") or {}).get("tests", {})
        for name, t in ls.items():
            if t["status"] != "skip" or mdb.get(name, {}).get("status") != "pass":
                continue
            cat, cause = diagnoses.classify_skip(d["suite"], name, t["message"])
            key = (d["suite"], cat, cause)
            tally[key] = tally.get(key, 0) + 1
    if not tally:
        return "None."
    rows = ["| suite | tests | category | cause |", "|---|---|---|---|"]
    for (suite, cat, cause), n in sorted(tally.items(), key=lambda kv: (kv[0][0], -kv[1])):
        rows.append(f"| {suite} | {n} | ({cat}) | {cause} |")
    return "\n".join(rows)


NOTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "NOTES.md")


def _notes():
    """Hand-written findings (hangs isolated, root causes), kept across runs."""
    if not os.path.exists(NOTES):
        return []
    with open(NOTES) as f:
        return [f.read().strip()]


def write(results_dir, path):
    docs = _load(results_dir)
    parts = [HEAD] + _notes()
    crashes = _crashes(docs)
    parts.append("## Crashes and hangs in the latest run\n\n" + ("\n".join(crashes) if crashes else
                 "None: lockstep neither died nor hung under any suite in the latest run."))
    parts.append("## Results\n\n" + _table(docs))
    parts.append("## Lockstep failures by cause\n\n" + _causes(docs))
    parts.append("## Skipped on lockstep, passed on MariaDB\n\n" + _skips(docs))
    for d in docs:
        fails = _failures(d)
        body = "\n".join(line for _, _, line in fails) or "None."
        parts.append(f"## {d['suite']} {d['version']}: lockstep failures\n\n{body}")
    with open(path, "w") as f:
        f.write("\n\n".join(parts) + "\n")
