"""go-sql-driver/mysql's own `go test` suite, from the Go module proxy."""

import json
import os
import re
import shutil
import time

import common

NAME = "go-sql-driver"
VERSION = "v1.9.3"
QUICK = True
MODULE = "github.com/go-sql-driver/mysql"
# TestConnectorReturnsTimeout dials 1.1.1.1 (outside); nothing else in the
# suite leaves 127.0.0.1 (dsn_test.go's other addresses are only parsed).
SKIP = "^TestConnectorReturnsTimeout$"


def _gopath_env(cache):
    # A private module cache and build cache keep us off the user's.
    return {"GOMODCACHE": os.path.join(cache, "gomod"),
            "GOCACHE": os.path.join(cache, "gobuild"), "GOFLAGS": "-mod=mod",
            "GOTOOLCHAIN": "local"}


def _src(cache):
    return os.path.join(cache, f"go-mysql-{VERSION}")


def prepare(cache):
    src = _src(cache)
    if os.path.isdir(src):
        return
    env = common.env_with(**_gopath_env(cache))
    info = json.loads(common.must(["go", "mod", "download", "-json", f"{MODULE}@{VERSION}"],
                                  env=env, cwd=cache))
    # The module cache is read-only; tests run in a writable copy.
    shutil.copytree(info["Dir"], src + ".tmp", dirs_exist_ok=True)
    for root, dirs, files in os.walk(src + ".tmp"):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755)
    common.must(["go", "mod", "download"], env=env, cwd=src + ".tmp")
    common.must(["go", "test", "-count=1", "-run", "^$", "."], env=env, cwd=src + ".tmp")
    os.rename(src + ".tmp", src)


def parse(text):
    """Per-test results from `go test -json`; subtests fold into their test."""
    results, output = {}, {}
    for line in text.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        test = ev.get("Test")
        if not test:
            continue
        top = test.split("/")[0]
        if ev["Action"] == "output":
            output.setdefault(top, []).append(ev["Output"])
        elif ev["Action"] in ("pass", "fail", "skip") and "/" not in test:
            status = ev["Action"]
            msg = "".join(o.strip() + " " for o in output.get(top, [])
                          if not o.lstrip().startswith(("=== ", "--- PASS", "--- SKIP")))
            results[top] = (status, msg.strip()[:500] if status != "pass" else "")
    return results


def hung_tests(text):
    """Tests running when `go test -timeout` fired (a hang)."""
    m = re.search(r"running tests:\n((?:\t.*\n?)+)", text.replace("\\n", "\n").replace("\\t", "\t"))
    return re.findall(r"\t(\w+)", m.group(1)) if m else []


def _list(src, env):
    """Top-level test names of the package (go test -list)."""
    code, text = common.run(["go", "test", "-list", ".", "."], 600, cwd=src, env=env)
    return [t for t in text.split() if t.startswith("Test")]


def run(target, cache, outdir):
    """go test, resumed until every test has a result: a test that fails
    from another goroutine panics the whole test binary, ending the run."""
    env = common.env_with(MYSQL_TEST_ADDR=f"{target.host}:{target.port}", MYSQL_TEST_USER="root",
                          MYSQL_TEST_PASS="", MYSQL_TEST_DBNAME="gotest",
                          **_gopath_env(cache))
    src = _src(cache)
    todo = [t for t in _list(src, env) if not re.match(SKIP, t)]
    results, deadline = {}, time.monotonic() + common.SUITE_TIMEOUT
    for attempt in range(1, 20):
        limit = int(deadline - time.monotonic())
        if not todo or limit < 60:
            break
        cmd = ["go", "test", "-json", "-count=1", f"-timeout={limit - 30}s", "-skip", SKIP,
               "-run", "^(" + "|".join(todo) + ")$", "."]
        code, text = common.run(cmd, limit, cwd=src, env=env,
                                out=os.path.join(outdir, f"output{attempt}.txt"),
                                stderr_to=os.path.join(outdir, f"stderr{attempt}.txt"))
        got = parse(text)
        for t in hung_tests(text):
            got[t] = ("fail", "hang: still running when go test -timeout fired")
        results.update(got)
        if code is None or not got:
            results.update(common.hung_result(text, code))
            break
        todo = [t for t in todo if t not in results]
    for t in todo:
        results[t] = ("fail", "never ran: earlier tests kept aborting the test binary")
    return results, f"go test -json -count=1 -skip '{SKIP}' . (resumed after aborts)"
