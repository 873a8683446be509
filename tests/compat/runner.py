"""Driver compatibility harness: run driver test suites against lockstep and
MariaDB and record per-test results.

    python3 tests/compat/runner.py quick [suite...]   # lockstep only, regression gate
    python3 tests/compat/runner.py full [suite...]    # both servers, results + docs
    python3 tests/compat/runner.py report             # docs from recorded results

quick exits non-zero when lockstep passes fewer tests of a suite than
tests/compat/baseline.json records. full rewrites bench/results/compat/SUITE.json
and docs/compatibility.md, and raises (never lowers) the baseline.
"""

import importlib
import json
import os
import subprocess
import sys
import time
import traceback

import common
import report

SUITES = ["go_mysql", "pymysql_suite", "connector_python", "connector_python_compress",
          "node_mysql2", "connector_j", "rust_mysql", "sqlalchemy_suite"]
RESULTS = os.path.join(common.REPO, "bench", "results", "compat")
BASELINE = os.path.join(common.HERE, "baseline.json")
WORK = os.path.join(common.REPO, "target", "compat")


def load_suites(names):
    mods = [importlib.import_module(m) for m in SUITES]
    if not names:
        return mods
    picked = [m for m in mods if m.NAME in names or m.__name__ in names]
    unknown = set(names) - {m.NAME for m in picked} - {m.__name__ for m in picked}
    if unknown:
        sys.exit(f"unknown suite(s) {sorted(unknown)}; known: {[m.NAME for m in mods]}")
    return picked


def run_on(suite, kind):
    """One suite against one fresh server: dict for the JSON record."""
    work = os.path.join(WORK, suite.NAME, kind)
    started = time.time()
    crash = None
    try:
        target = common.Target(kind, work)
    except Exception as e:
        return {"results": {"(start)": ("fail", f"server did not start: {e}")},
                "seconds": 0, "command": "", "crash": str(e)[-2000:]}
    try:
        outdir = os.path.join(work, "out")
        os.makedirs(outdir, exist_ok=True)
        results, command = suite.run(target, common.CACHE, outdir)
    except Exception:
        results, command = {"(harness)": ("fail", traceback.format_exc()[-600:])}, ""
    if not target.alive():
        crash = f"server exited with {target.exit_code()}\n{target.log_tail()}"
        common.log(f"!!! {kind} died under {suite.NAME}: {crash[:2000]}")
    target.stop()
    return {"results": results, "seconds": round(time.time() - started, 1),
            "command": command, "crash": crash}


def counts(results):
    c = {"pass": 0, "fail": 0, "skip": 0}
    for status, _ in results.values():
        c[status] += 1
    return c


def run_suite(suite, kinds):
    try:
        suite.prepare(common.CACHE)
    except Exception:
        err = traceback.format_exc()[-1500:]
        common.log(f"{suite.NAME}: preparation failed:\n{err}")
        return {k: {"results": {"(prepare)": ("fail", err)}, "seconds": 0,
                    "command": "", "crash": None} for k in kinds}
    out = {}
    for kind in kinds:
        common.log(f"{suite.NAME} {suite.VERSION} against {kind}")
        out[kind] = run_on(suite, kind)
        common.log(f"{suite.NAME} on {kind}: {counts(out[kind]['results'])} "
                   f"in {out[kind]['seconds']}s")
    return out


def lockstep_commit():
    """The commit the measured tree is at ("+dirty" when it has changes)."""
    git = ["git", "-C", common.REPO]
    try:
        head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        # The run's own outputs (results, this page, the baseline) do not count.
        outputs = [":(exclude)bench/results/compat", ":(exclude)docs/compatibility.md",
                   ":(exclude)tests/compat/baseline.json"]
        dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--", "."]
                               + outputs, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+dirty" if dirty else "")


def record(suite, runs):
    os.makedirs(RESULTS, exist_ok=True)
    doc = {"suite": suite.NAME, "version": suite.VERSION,
           "date": time.strftime("%Y-%m-%d"), "commit": lockstep_commit(), "targets": {}}
    for kind, r in runs.items():
        doc["targets"][kind] = {
            "counts": counts(r["results"]), "seconds": r["seconds"],
            "command": r["command"], "crash": r["crash"],
            "tests": {n: {"status": s, "message": m}
                      for n, (s, m) in sorted(r["results"].items())}}
    with open(os.path.join(RESULTS, suite.NAME + ".json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)


def load_baseline():
    if not os.path.exists(BASELINE):
        return {}
    with open(BASELINE) as f:
        return json.load(f)


def gate(suites, runs_by_suite, raise_baseline):
    """Compare lockstep pass counts with the baseline; return the regressions."""
    base = load_baseline()
    bad = []
    for s in suites:
        passed = counts(runs_by_suite[s.NAME]["lockstep"]["results"])["pass"]
        want = base.get(s.NAME, 0)
        if passed < want:
            bad.append(f"{s.NAME}: lockstep passed {passed}, baseline {want}")
        if raise_baseline and passed > want:
            base[s.NAME] = passed
    if raise_baseline:
        with open(BASELINE, "w") as f:
            json.dump(base, f, indent=1, sort_keys=True)
            f.write("\n")
    return bad


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "report":
        # Rewrite docs/compatibility.md from the recorded JSON (after editing diagnoses.py).
        report.write(RESULTS, os.path.join(common.REPO, "docs", "compatibility.md"))
        return
    if len(sys.argv) < 2 or sys.argv[1] not in ("quick", "full"):
        sys.exit(__doc__)
    mode, names = sys.argv[1], sys.argv[2:]
    suites = load_suites(names)
    os.makedirs(common.CACHE, exist_ok=True)
    if mode == "quick" and not names:
        suites = [s for s in suites if s.QUICK]
    kinds = ["lockstep"] if mode == "quick" else ["lockstep", "mariadb"]
    start = time.time()
    runs = {}
    for s in suites:
        runs[s.NAME] = run_suite(s, kinds)
        if mode == "full":
            record(s, runs[s.NAME])
    if mode == "full":
        report.write(RESULTS, os.path.join(common.REPO, "docs", "compatibility.md"))
    bad = gate(suites, runs, raise_baseline=(mode == "full"))
    total = {"pass": 0, "fail": 0, "skip": 0}
    for s in suites:
        for k, v in counts(runs[s.NAME]["lockstep"]["results"]).items():
            total[k] += v
    common.log(f"{mode} form done in {time.time() - start:.0f}s")
    # Not in pytest's "N passed, N failed" shape: CI reads that shape as a test runner's.
    print(f"compat: lockstep pass={total['pass']} fail={total['fail']} skip={total['skip']}")
    for b in bad:
        print("REGRESSION " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
